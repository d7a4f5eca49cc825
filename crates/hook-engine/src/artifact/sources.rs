//! The sources section: what an artifact was compiled from, for staleness checks.
//!
//! `[file_count, dir_count]`, then per file `[path (2), len (2), mtime_ns (2), hash (2)]` and
//! per folder `[path (2), names_hash (2)]`. A file that did not exist has `len = u64::MAX`.

use super::format::Section;
use super::reader::{Artifact, ArtifactError, StrRef};

/// The largest source file (a pack, a config, a `context_file`) the compiler reads, and that a
/// hook hashes to see whether it changed.
pub const MAX_SOURCE_BYTES: u64 = 4 << 20;

/// The most source files an artifact may record (packs, configs, context files), and the most
/// pack folders: a hook checks each on every run.
pub const MAX_SOURCE_FILES: usize = 4096;

/// See [`MAX_SOURCE_FILES`].
pub const MAX_SOURCE_DIRS: usize = 64;

/// A source file as it was at compile time: the compiler records it (`S = String`), a hook reads
/// it back in place (`S = &str`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileStamp<S = String> {
    /// Absolute path.
    pub path: S,
    /// Length; `None` when it did not exist.
    pub len: Option<u64>,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i64,
    /// [`fnv1a`] of the contents.
    pub hash: u64,
}

/// A pack folder as it was at compile time (`S` as for [`FileStamp`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirStamp<S = String> {
    /// Absolute path.
    pub path: S,
    /// [`names_hash`] of its pack files, 0 when it did not exist.
    pub names_hash: u64,
}

/// The stamps of an artifact's source files and pack folders, read in place.
pub type Stamps<'a> = (Vec<FileStamp<&'a str>>, Vec<DirStamp<&'a str>>);

/// The sources recorded in `artifact`.
///
/// # Errors
///
/// When the section is malformed.
pub fn sources<'a>(artifact: &Artifact<'a>) -> Result<Stamps<'a>, ArtifactError> {
    let section = artifact.section(Section::Sources);
    if section.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let w = |i: usize| artifact.word(Section::Sources, i);
    let wide = |i: usize| -> Result<u64, ArtifactError> {
        Ok(u64::from(w(i)?) | (u64::from(w(i + 1)?) << 32))
    };
    let (files, dirs) = (w(0)? as usize, w(1)? as usize);
    if files > MAX_SOURCE_FILES || dirs > MAX_SOURCE_DIRS {
        return Err(ArtifactError::Malformed("source count"));
    }
    let mut at = 2;
    // The counts come from the file: nothing is reserved by them, and each stamp is read
    // through bounds-checked accessors, so a false count fails at the first missing word.
    let mut file_stamps = Vec::new();
    for _ in 0..files {
        let path = artifact.str(StrRef { offset: w(at)?, len: w(at + 1)? })?;
        let len = wide(at + 2)?;
        file_stamps.push(FileStamp {
            path,
            len: (len != u64::MAX).then_some(len),
            mtime_ns: wide(at + 4)?.cast_signed(),
            hash: wide(at + 6)?,
        });
        at += 8;
    }
    let mut dir_stamps = Vec::new();
    for _ in 0..dirs {
        let path = artifact.str(StrRef { offset: w(at)?, len: w(at + 1)? })?;
        dir_stamps.push(DirStamp { path, names_hash: wide(at + 2)? });
        at += 4;
    }
    Ok((file_stamps, dir_stamps))
}

/// The sources section for these stamps, their paths stored by `str` (which puts a string in
/// the strings section): what [`sources`] reads back.
pub fn sources_section<S: AsRef<str>>(
    files: &[FileStamp<S>],
    dirs: &[DirStamp<S>],
    mut str: impl FnMut(&str) -> StrRef,
) -> Vec<u8> {
    let halves = |value: u64| {
        let b = value.to_le_bytes();
        [u32::from_le_bytes([b[0], b[1], b[2], b[3]]), u32::from_le_bytes([b[4], b[5], b[6], b[7]])]
    };
    let mut words = vec![
        u32::try_from(files.len()).unwrap_or(u32::MAX),
        u32::try_from(dirs.len()).unwrap_or(u32::MAX),
    ];
    for f in files {
        let path = str(f.path.as_ref());
        words.extend_from_slice(&[path.offset, path.len]);
        words.extend_from_slice(&halves(f.len.unwrap_or(u64::MAX)));
        words.extend_from_slice(&halves(f.mtime_ns.cast_unsigned()));
        words.extend_from_slice(&halves(f.hash));
    }
    for d in dirs {
        let path = str(d.path.as_ref());
        words.extend_from_slice(&[path.offset, path.len]);
        words.extend_from_slice(&halves(d.names_hash));
    }
    words.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// FNV-1a, 64 bits: a stable hash for fingerprints (not for security).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_extend(0xcbf2_9ce4_8422_2325, bytes)
}

/// FNV-1a continued from `hash` (what [`fnv1a`] gave of the bytes before) over `bytes`: the
/// hash of several pieces without joining them.
pub fn fnv1a_extend(mut hash: u64, bytes: &[u8]) -> u64 {
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The hash of a pack folder's file names (`*.toml`), which must be sorted.
pub fn names_hash<S: AsRef<str>>(sorted_names: &[S]) -> u64 {
    let joined: Vec<&str> = sorted_names.iter().map(AsRef::as_ref).collect();
    fnv1a(joined.join("\n").as_bytes())
}

/// The fingerprint of this hookpack build: an artifact written by another build is stale, since
/// builtin packs and semantics may differ even when the format does not.
pub fn hookpack_fingerprint() -> u64 {
    fnv1a(concat!("hookpack ", env!("CARGO_PKG_VERSION")).as_bytes())
        ^ u64::from(super::format::FORMAT_VERSION)
}
