//! Mapping the artifact file into memory.

use std::fs::File;
use std::io;
use std::path::Path;

/// The artifact's bytes: mapped from the file, or owned (tests, and files the OS cannot map).
#[derive(Debug)]
pub enum Mapped {
    /// Mapped read-only.
    Map(memmap2::Mmap),
    /// Read into memory, 8-byte aligned.
    Owned(AlignedBytes),
}

impl Mapped {
    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        match self {
            Mapped::Map(map) => map,
            Mapped::Owned(bytes) => bytes.as_slice(),
        }
    }
}

/// Maps `path` read-only, falling back to reading it when mapping fails.
///
/// # Errors
///
/// When the file cannot be opened or read.
pub fn map_file(path: &Path) -> io::Result<(Mapped, std::fs::Metadata)> {
    let file = File::open(path)?;
    let metadata = file.metadata()?;
    // SAFETY: the map is read-only and hookpack never modifies an artifact in place: the
    // compiler writes a new file and renames it over the old one, so a mapped file's bytes do
    // not change under a running hook. Another program truncating the file could still raise
    // SIGBUS; that is the accepted risk of mapping (as in ripgrep), and the CRC check catches
    // any other change before the bytes are used.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(&file) };
    match map {
        Ok(map) => Ok((Mapped::Map(map), metadata)),
        Err(_) => Ok((Mapped::Owned(AlignedBytes::new(&std::fs::read(path)?)), metadata)),
    }
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
        let mut buffer = vec![0; bytes.len() + 8];
        let start = buffer.as_ptr().align_offset(8).min(8);
        buffer[start..start + bytes.len()].copy_from_slice(bytes);
        AlignedBytes { buffer, start, len: bytes.len() }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.buffer[self.start..self.start + self.len]
    }
}
