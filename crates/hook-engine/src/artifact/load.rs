//! Getting an artifact's bytes into the hook: copied when small, mapped when large, and checked
//! by their CRC unless the compiler's stamp vouches for them.
//!
//! The stamp `hookpack compile` writes beside an artifact records the file's device, inode,
//! length, modification and change times. The change time is set by the kernel on every write,
//! and nothing a user runs can set it back, so an edit that keeps the length and the
//! modification time still voids the stamp, and a repository cannot commit a stamp for a
//! checkout it has not seen.
//!
//! A stamped artifact is mapped, without the CRC: a hook then touches only the pages it reads
//! (a copy faults in every page of a fresh buffer, about 0.7 ms per MB; the CRC reads them all,
//! and the first CRC of a process probes the CPU, which a virtual machine makes slow). A mapped
//! file truncated underneath raises `SIGBUS`; the compiler never rewrites an artifact in place
//! (it renames a new file over it), but another program may (`cp new rules.hpk`). So on Linux
//! the hook first takes a read lease on the file (`F_SETLEASE`): whoever opens it for writing,
//! or truncates it, then waits until the hook has exited (the kernel's notice of the wait goes
//! to `SIGURG`, which is ignored). Without a lease (another OS, a file system without leases,
//! the file open for writing right now), an artifact up to [`COPY_LIMIT`] (the builtin packs
//! compile to about 220 KiB) is copied instead, and its CRC skipped only when the stamp matches
//! the file both before and after the copy; a larger one is still mapped, which leaves a
//! rewrite in place within the milliseconds a hook runs as the one way to a `SIGBUS`. An
//! artifact without a valid stamp is copied and checked.
//!
//! The stamp also tells whether `hookpack compile` wrote the file here at all ([`Loaded::stamped`]):
//! an artifact committed to a repository, or copied from elsewhere, has no stamp that matches
//! it, and hooks refuse it (it may have been compiled without the user's own packs, their
//! guards included).

use std::fs::Metadata;
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use crate::bounded::{AlignedBytes, lease, map, not_regular, open_looked_at, read_aligned};

use super::format::header;
use super::reader::{Artifact, ArtifactError, word};

/// Artifacts up to this size are copied (and checked unless the stamp vouches for them).
pub const COPY_LIMIT: u64 = 256 << 10;

/// The largest artifact a hook reads. The compiler's budget for automata keeps artifacts far
/// below it; a larger file is refused before it is read.
pub const MAX_ARTIFACT_BYTES: u64 = 32 << 20;

/// The most of a stamp file that is read.
const MAX_STAMP_BYTES: usize = 256;

/// An artifact's bytes.
#[derive(Debug)]
pub enum ArtifactBytes {
    /// Copied into memory.
    Copied(AlignedBytes),
    /// Mapped read-only (page-aligned, so 8-byte aligned as the DFAs need), with the file
    /// (holding its lease, when it has one, while the map is used).
    Mapped(memmap2::Mmap, std::fs::File),
}

impl ArtifactBytes {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        match self {
            ArtifactBytes::Copied(bytes) => bytes.as_slice(),
            ArtifactBytes::Mapped(map, _) => map,
        }
    }
}

/// An artifact read by [`load`].
#[derive(Debug)]
pub struct Loaded {
    bytes: ArtifactBytes,
    vouched: bool,
    stamped: bool,
    /// Whether the bytes cannot change while they are used: copied, or mapped under a lease.
    sealed: bool,
    /// Whether their CRC was found to hold.
    checked: std::cell::Cell<bool>,
}

impl Loaded {
    /// Its bytes.
    pub fn bytes(&self) -> &ArtifactBytes {
        &self.bytes
    }

    /// Whether the compiler's stamp vouches for the bytes (it matched the file before and
    /// after they were read), so that the CRC need not be checked.
    pub fn vouched(&self) -> bool {
        self.vouched
    }

    /// Whether the stamp beside the file matches it and the CRC its header holds: the file is
    /// the one `hookpack compile` wrote there, untouched since.
    pub fn stamped(&self) -> bool {
        self.stamped
    }

    /// The artifact, its header and section table checked ([`Artifact::parse`]) and, unless the
    /// stamp vouches for the bytes, its CRC ([`Artifact::verify`]).
    ///
    /// Its automata and strings are read without validation ([`Artifact::is_trusted`]) when the
    /// stamp vouches for the bytes, they cannot change while they are used (copied, or mapped
    /// under a lease) and this very build of hookpack compiled them: they are then the bytes
    /// this build's compiler wrote, and validating them again would cost most of a hook's work
    /// (each automaton's every transition, each string's every byte). Any other artifact (a
    /// committed or copied one, one of another build, a large one mapped without a lease) has
    /// everything it uses validated.
    ///
    /// # Errors
    ///
    /// When the header, the section table or the CRC does not hold.
    pub fn artifact(&self) -> Result<Artifact<'_>, ArtifactError> {
        let artifact = Artifact::parse(self.bytes.as_slice())?;
        if !self.vouched && !self.checked.get() {
            artifact.verify()?;
            self.checked.set(true);
        }
        let own = artifact.compiler_fingerprint() == super::sources::hookpack_fingerprint();
        Ok(if self.vouched && self.sealed && own { artifact.trusted() } else { artifact })
    }
}

/// Reads the artifact at `path` (a regular file of at most [`MAX_ARTIFACT_BYTES`]): mapped when
/// larger than [`COPY_LIMIT`] and vouched for by its stamp, copied otherwise (and vouched for
/// when the stamp matches the file before and after the copy).
///
/// # Errors
///
/// When it cannot be opened or read, is not a regular file, or is too large.
pub fn load(path: &Path) -> io::Result<Loaded> {
    let mut file = open_looked_at(path)?;
    // Leased first, then described: a write before the lease shows in the change time. (A
    // file that is not regular takes no lease, and is refused here.)
    let leased = lease(&file);
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(not_regular(path));
    }
    let stamp = read_stamp(path).filter(|s| s.matches(&metadata));
    let stamped_crc = stamp.map(|s| s.crc);
    // The stamp names the CRC the header holds: a stamp for other bytes vouches nothing.
    let holds = |bytes: &[u8]| {
        let crc = bytes.get(header::CRC..).and_then(|b| word(b, 0).ok());
        bytes.len() as u64 == metadata.len() && crc.is_some() && crc == stamped_crc
    };
    if (leased || metadata.len() > COPY_LIMIT)
        && stamped_crc.is_some()
        && let Ok(len) = usize::try_from(metadata.len())
    {
        // Mapped read-only; see the module's notes on files changed underneath.
        if let Ok(map) = map(&file, len)
            && holds(&map)
        {
            let bytes = ArtifactBytes::Mapped(map, file);
            return Ok(Loaded {
                bytes,
                vouched: true,
                stamped: true,
                sealed: leased,
                checked: false.into(),
            });
        }
    }
    let bytes = read_aligned(&mut file, &metadata, path, MAX_ARTIFACT_BYTES)?;
    let stamped = holds(bytes.as_slice());
    // The stamp still matching the file after the copy: nothing wrote it meanwhile (any write
    // moves the change time), so the copy is what the compiler wrote and vouched for.
    let vouched = stamped && stamp.is_some_and(|s| file.metadata().is_ok_and(|m| s.matches(&m)));
    let bytes = ArtifactBytes::Copied(bytes);
    Ok(Loaded { bytes, vouched, stamped, sealed: true, checked: false.into() })
}

/// `rules.hpk` → `rules.hpk.ok`: where the compiler writes the artifact's stamp.
pub fn stamp_path(artifact: &Path) -> PathBuf {
    let mut name = artifact.file_name().unwrap_or_default().to_owned();
    name.push(".ok");
    artifact.with_file_name(name)
}

/// The stamp of the artifact file `metadata` describes, whose header holds `crc`.
pub fn stamp(metadata: &Metadata, crc: u32) -> String {
    Stamp::of(metadata, crc).to_string()
}

/// What the compiler recorded of the artifact it wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
    crc: u32,
}

impl Stamp {
    fn of(metadata: &Metadata, crc: u32) -> Stamp {
        let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
        Stamp {
            dev: metadata.dev(),
            ino: metadata.ino(),
            len: metadata.len(),
            mtime_ns: ns(metadata.mtime(), metadata.mtime_nsec()),
            ctime_ns: ns(metadata.ctime(), metadata.ctime_nsec()),
            crc,
        }
    }

    fn matches(&self, metadata: &Metadata) -> bool {
        *self == Stamp::of(metadata, self.crc)
    }

    fn parse(text: &str) -> Option<Stamp> {
        let mut words = text.strip_prefix("hookpack-stamp 1 ")?.trim_end().split(' ');
        let mut next = || words.next();
        Some(Stamp {
            dev: next()?.parse().ok()?,
            ino: next()?.parse().ok()?,
            len: next()?.parse().ok()?,
            mtime_ns: next()?.parse().ok()?,
            ctime_ns: next()?.parse().ok()?,
            crc: u32::from_str_radix(next()?, 16).ok()?,
        })
    }
}

impl std::fmt::Display for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Stamp { dev, ino, len, mtime_ns, ctime_ns, crc } = self;
        writeln!(f, "hookpack-stamp 1 {dev} {ino} {len} {mtime_ns} {ctime_ns} {crc:08x}")
    }
}

/// The stamp beside `artifact`, when it is a regular file (a link is not followed) that reads
/// as one.
fn read_stamp(artifact: &Path) -> Option<Stamp> {
    use std::io::Read as _;
    let path = stamp_path(artifact);
    // A regular file, not a link, when looked at; opened without following a link nor
    // blocking on a FIFO. A stamp is one short line, read in one call: anything else read
    // there (a file swapped meanwhile, one being written, a longer one) is no stamp, and
    // vouches for nothing.
    if !std::fs::symlink_metadata(&path).ok()?.is_file() {
        return None;
    }
    let mut file = crate::bounded::open_not_following(&path).ok()?;
    let mut bytes = [0u8; MAX_STAMP_BYTES + 1];
    let read = file.read(&mut bytes).ok()?;
    Stamp::parse(
        std::str::from_utf8(bytes.get(..read).filter(|b| b.len() <= MAX_STAMP_BYTES)?).ok()?,
    )
}

#[cfg(test)]
mod tests {
    use std::fs::File;

    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn a_leased_file_is_rewritten_only_after_the_lease_is_let_go() {
        let dir = std::env::temp_dir().join(format!("hookpack-lease-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a");
        std::fs::write(&path, b"0123456789").unwrap();
        let file = File::open(&path).unwrap();
        if !lease(&file) {
            // A file system without leases: nothing to check.
            return;
        }
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                let start = std::time::Instant::now();
                // `cp` opens with `O_TRUNC`: it waits for the lease.
                std::fs::write(&path, b"9876543210").unwrap();
                start.elapsed()
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(300));
        assert_eq!(std::fs::read(&path).unwrap(), b"0123456789", "not rewritten yet");
        drop(file);
        let waited = writer.join().unwrap();
        assert!(waited >= std::time::Duration::from_millis(250), "{waited:?}");
        assert_eq!(std::fs::read(&path).unwrap(), b"9876543210");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_stamp_round_trips_and_is_voided_by_any_write() {
        let dir = std::env::temp_dir().join(format!("hookpack-stamp-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a");
        std::fs::write(&file, b"0123456789").unwrap();
        let meta = std::fs::metadata(&file).unwrap();
        let text = stamp(&meta, 0xdead_beef);
        let parsed = Stamp::parse(&text).unwrap();
        assert!(parsed.matches(&meta));
        assert_eq!(parsed.crc, 0xdead_beef);
        // The same length, the modification time set back: the change time still moves.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&file, b"9876543210").unwrap();
        File::options()
            .write(true)
            .open(&file)
            .unwrap()
            .set_modified(meta.modified().unwrap())
            .unwrap();
        let after = std::fs::metadata(&file).unwrap();
        assert_eq!(
            (after.len(), after.modified().unwrap()),
            (meta.len(), meta.modified().unwrap())
        );
        assert!(!parsed.matches(&after));
        for bad in ["", "hookpack-stamp 2 1 2 3 4 5 ff", "hookpack-stamp 1 1 2 x 4 5 ff"] {
            assert_eq!(Stamp::parse(bad), None, "{bad}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
