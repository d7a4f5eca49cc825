//! Reading files that hookpack does not control, within bounds (reference §5).
//!
//! A path may come from a payload (the transcript), the environment (`HOOKPACK_ARTIFACT`), an
//! artifact (its sources) or a pack (`context_file`), and so from a hostile repository. Every
//! read here is of a regular file, opened without blocking (a FIFO or a device is refused before
//! a byte is read) and capped in size (a file that grows while it is read, or that reports no
//! size, as `/proc` files do, is cut at the cap and refused).

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

/// Opens `path` for reading if it is a regular file, without blocking on a FIFO or a device.
///
/// # Errors
///
/// When it cannot be opened, or is not a regular file (`InvalidInput`).
pub fn open_regular(path: &Path) -> io::Result<(File, Metadata)> {
    let file = open_looked_at(path)?;
    // And again once open, in case it was swapped meanwhile.
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(not_regular(path));
    }
    Ok((file, metadata))
}

/// Opens `path` for reading if it is a regular file when looked at, without blocking on a FIFO
/// or a device. The caller checks the file it got (`File::metadata`): it may have been swapped
/// between the look and the opening.
///
/// # Errors
///
/// When it cannot be opened, or is not a regular file when looked at (`InvalidInput`).
pub fn open_looked_at(path: &Path) -> io::Result<File> {
    // Looked at before it is opened: opening some devices has effects of its own.
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular(path));
    }
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, forever.
    // O_NOCTTY: a terminal device must not become the hook's controlling terminal.
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
}

/// Opens `path` for reading, never through a link at its last component (`O_NOFOLLOW`: the
/// opening fails), without blocking on a FIFO or a device, and never as a controlling
/// terminal. The caller has looked at what is there, or checks the file it got.
///
/// # Errors
///
/// When it cannot be opened, a link included.
pub fn open_not_following(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
}

/// Maps the first `len` bytes of `file` read-only.
///
/// A mapped file truncated underneath raises `SIGBUS` when a page past its new end is read:
/// callers map only files that are replaced by renaming, never rewritten in place, or that hold
/// a read lease ([`lease`]).
///
/// # Errors
///
/// When the kernel refuses the mapping.
pub fn map(file: &File, len: usize) -> io::Result<memmap2::Mmap> {
    // SAFETY: a read-only mapping of a file the caller keeps from changing underneath (above).
    #[allow(unsafe_code, reason = "mapping a file read-only, see above")]
    unsafe {
        memmap2::MmapOptions::new().len(len).map(file)
    }
}

/// Takes a read lease on `file` (opened read-only): until it is closed, whoever opens the file
/// for writing or truncates it waits (up to the system's lease-break time, 45 s by default).
/// The kernel announces such a wait with a signal: `SIGURG` here, whose default is to be
/// ignored (a signal ignored or left at its default stays so across `exec`). `false` where
/// leases are not to be had: the file is open for writing, the file system has none, the
/// caller does not own the file, another OS.
#[cfg(target_os = "linux")]
pub fn lease(file: &File) -> bool {
    use std::os::fd::AsRawFd as _;
    /// `fcntl`'s command choosing the signal of a descriptor's notices (`<fcntl.h>`; the
    /// `libc` crate leaves it out). The same on every Linux architecture.
    const F_SETSIG: libc::c_int = 10;
    let fd = file.as_raw_fd();
    // SAFETY: `fcntl` on a descriptor this function borrows; neither call touches memory.
    #[allow(unsafe_code, reason = "fcntl on a borrowed descriptor")]
    unsafe {
        libc::fcntl(fd, F_SETSIG, libc::SIGURG) == 0
            && libc::fcntl(fd, libc::F_SETLEASE, libc::F_RDLCK) == 0
    }
}

/// Leases are Linux's.
#[cfg(not(target_os = "linux"))]
pub fn lease(_: &File) -> bool {
    false
}

/// The error of a file that is not a regular file.
pub fn not_regular(path: &Path) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{} is not a regular file", path.display()))
}

/// Reads all of the regular file `path`, if it holds at most `cap` bytes.
///
/// # Errors
///
/// When it cannot be read, is not a regular file (`InvalidInput`) or holds more than `cap`
/// bytes (`FileTooLarge`).
pub fn read_regular(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    let (file, metadata) = open_regular(path)?;
    read_capped(file, &metadata, path, cap)
}

/// All of `file` (the regular file at `path`, described by `metadata`), if it holds at most
/// `cap` bytes (then, and as it is read).
fn read_capped(file: File, metadata: &Metadata, path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    if metadata.len() > cap {
        return Err(too_large(path, cap));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(too_large(path, cap));
    }
    Ok(bytes)
}

/// [`read_regular`] of a file that is not a symbolic link (looked at without following it, and
/// opened with `O_NOFOLLOW`): as many system calls as [`read_regular`].
///
/// # Errors
///
/// As [`read_regular`]; a link is not a regular file (`InvalidInput`).
pub fn read_regular_not_following(path: &Path, cap: u64) -> io::Result<Vec<u8>> {
    if !std::fs::symlink_metadata(path)?.is_file() {
        return Err(not_regular(path));
    }
    let file = open_not_following(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(not_regular(path));
    }
    read_capped(file, &metadata, path, cap)
}

/// Reads all of `file` (opened by [`open_regular`] from `path`, described by `metadata`), if it
/// holds at most `cap` bytes, into a buffer whose start is 8-byte aligned (as the serialized
/// DFAs inside an artifact require).
///
/// The bytes are copied, not mapped: another program rewriting the file in place (as `cp`
/// does) can then give a torn copy, which the artifact's CRC catches, but never a `SIGBUS`.
///
/// # Errors
///
/// As [`read_regular`].
pub fn read_aligned(
    file: &mut File,
    metadata: &Metadata,
    path: &Path,
    cap: u64,
) -> io::Result<AlignedBytes> {
    let len = usize::try_from(metadata.len())
        .ok()
        .filter(|&len| len as u64 <= cap)
        .ok_or_else(|| too_large(path, cap))?;
    // Read straight after a few bytes of padding that align the start: the buffer is not
    // zeroed first (its pages are touched once, by the copy).
    let mut buffer: Vec<u8> = Vec::with_capacity(len + 8);
    let start = buffer.as_ptr().align_offset(8).min(8);
    buffer.resize(start, 0);
    let read = file.by_ref().take(len as u64 + 1).read_to_end(&mut buffer)?;
    // Grown since `fstat`: not what was sized, refused. Shrunk: the copy is torn; the caller's
    // checks see a short file.
    if read > len {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} grew while it was read", path.display()),
        ));
    }
    let aligned = AlignedBytes { buffer, start, len: read };
    // The buffer had room for it all, so it never moved; this holds in any case.
    if aligned.as_slice().as_ptr().align_offset(8) != 0 {
        return Ok(AlignedBytes::new(aligned.as_slice()));
    }
    Ok(aligned)
}

fn too_large(path: &Path, cap: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::FileTooLarge,
        format!("{} is larger than {cap} bytes", path.display()),
    )
}

/// Bytes whose start is 8-byte aligned, as the serialized DFAs inside an artifact require.
#[derive(Clone, Debug)]
pub struct AlignedBytes {
    buffer: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBytes {
    /// Copies `bytes` to an aligned buffer.
    pub fn new(bytes: &[u8]) -> Self {
        let mut aligned = AlignedBytes::zeroed(bytes.len());
        aligned.as_mut_slice().copy_from_slice(bytes);
        aligned
    }

    /// `len` zero bytes.
    fn zeroed(len: usize) -> Self {
        let buffer = vec![0; len + 8];
        let start = buffer.as_ptr().align_offset(8).min(8);
        AlignedBytes { buffer, start, len }
    }

    fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.buffer[self.start..self.start + self.len]
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.buffer[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hookpack-bounded-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn regular_files_are_read_within_their_cap() {
        let dir = temp_dir("regular");
        let path = dir.join("f");
        std::fs::write(&path, b"0123456789").unwrap();
        assert_eq!(read_regular(&path, 10).unwrap(), b"0123456789");
        assert_eq!(read_regular(&path, 9).unwrap_err().kind(), io::ErrorKind::FileTooLarge);
        let aligned = |cap| {
            let (mut file, metadata) = open_regular(&path).unwrap();
            read_aligned(&mut file, &metadata, &path, cap)
        };
        let copied = aligned(10).unwrap();
        assert_eq!(copied.as_slice(), b"0123456789");
        assert_eq!(copied.as_slice().as_ptr().align_offset(8), 0);
        assert_eq!(aligned(9).unwrap_err().kind(), io::ErrorKind::FileTooLarge);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn devices_folders_and_fifos_are_refused_without_blocking() {
        let dir = temp_dir("special");
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        for path in [Path::new("/dev/zero"), Path::new("/dev/urandom"), &dir, &fifo] {
            let err = read_regular(path, 1 << 20).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{}", path.display());
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn files_without_a_size_are_cut_at_the_cap() {
        // procfs reports no size; the read must still stop.
        let err = read_regular(Path::new("/proc/self/maps"), 16).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::FileTooLarge);
    }
}
