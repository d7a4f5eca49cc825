//! [`Artifact`]: the checked view of an artifact's bytes, read in place.

use std::fmt;
use std::ops::Range;

use super::format::{
    self, ALIGN, FORMAT_VERSION, HEADER_LEN, MAGIC, SECTION_ENTRY_LEN, Section, header,
};
use super::{EventRecord, RuleView};

/// Why an artifact cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ArtifactError {
    /// Shorter than its header, or than the length its header gives.
    Truncated {
        /// Bytes present.
        found: usize,
        /// Bytes needed.
        needed: usize,
    },
    /// Not a hookpack artifact.
    BadMagic,
    /// Written in another format version.
    Version(u32),
    /// The CRC does not match: the file changed after it was written.
    Checksum {
        /// What the header says.
        expected: u32,
        /// What the bytes give.
        found: u32,
    },
    /// The section table, or a reference inside a section, points outside the file.
    Malformed(&'static str),
    /// Evaluating it asked for more work than any compiled pack of its size needs: its
    /// references repeat what they point at beyond reason ([`super::Effort`]).
    Effort,
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactError::Truncated { found, needed } => {
                write!(f, "artifact is truncated ({found} bytes of {needed})")
            }
            ArtifactError::BadMagic => f.write_str("not a hookpack artifact (bad magic)"),
            ArtifactError::Version(v) => {
                write!(f, "artifact format {v}, but this hook reads format {FORMAT_VERSION}")
            }
            ArtifactError::Checksum { expected, found } => {
                write!(f, "artifact is corrupt (CRC {found:08x}, expected {expected:08x})")
            }
            ArtifactError::Malformed(what) => write!(f, "artifact is malformed ({what})"),
            ArtifactError::Effort => f.write_str(
                "artifact is malformed (its rules ask for far more work than any compiled pack)",
            ),
        }
    }
}

impl std::error::Error for ArtifactError {}

/// A string in the strings section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StrRef {
    /// Byte offset.
    pub offset: u32,
    /// Byte length.
    pub len: u32,
}

/// A list in the lists section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ListRef {
    /// Offset in words.
    pub offset: u32,
    /// Number of words.
    pub len: u32,
}

/// An artifact whose header and section table have been checked.
#[derive(Clone, Copy, Debug)]
pub struct Artifact<'a> {
    bytes: &'a [u8],
    sections: [(usize, usize); Section::ALL.len()],
    /// Whether its automata and strings are read without validation
    /// ([`super::Loaded::artifact`]).
    trusted: bool,
}

impl<'a> Artifact<'a> {
    /// Checks the header and the section table, in O(1): magic, version, length, and that every
    /// section lies inside the file. The CRC is [`Artifact::verify`]'s.
    ///
    /// # Errors
    ///
    /// When any of those is wrong.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, ArtifactError> {
        if bytes.len() < HEADER_LEN {
            return Err(ArtifactError::Truncated { found: bytes.len(), needed: HEADER_LEN });
        }
        if bytes[header::MAGIC..header::MAGIC + 8] != MAGIC {
            return Err(ArtifactError::BadMagic);
        }
        let version = u32_at(bytes, header::VERSION);
        if version != FORMAT_VERSION {
            return Err(ArtifactError::Version(version));
        }
        let length = usize::try_from(u64_at(bytes, header::LENGTH))
            .map_err(|_| ArtifactError::Malformed("length"))?;
        if bytes.len() < length {
            return Err(ArtifactError::Truncated { found: bytes.len(), needed: length });
        }
        if bytes.len() > length {
            return Err(ArtifactError::Malformed("trailing bytes"));
        }
        let count = u32_at(bytes, header::SECTIONS) as usize;
        if count != Section::ALL.len() {
            return Err(ArtifactError::Malformed("section count"));
        }
        let mut sections = [(0, 0); Section::ALL.len()];
        for (i, &kind) in Section::ALL.iter().enumerate() {
            let entry = HEADER_LEN + i * SECTION_ENTRY_LEN;
            if entry + SECTION_ENTRY_LEN > length {
                return Err(ArtifactError::Malformed("section table"));
            }
            if u32_at(bytes, entry) != kind as u32 {
                return Err(ArtifactError::Malformed("section kind"));
            }
            let offset = u32_at(bytes, entry + 4) as usize;
            let len = u32_at(bytes, entry + 8) as usize;
            if !offset.is_multiple_of(ALIGN)
                || offset.checked_add(len).is_none_or(|end| end > length)
            {
                return Err(ArtifactError::Malformed("section bounds"));
            }
            sections[i] = (offset, len);
        }
        Ok(Artifact { bytes, sections, trusted: false })
    }

    /// The same artifact, its automata and strings to be read without validation (their
    /// bounds are still checked). Only the loader calls it, for bytes this build's compiler
    /// wrote that cannot change while they are used ([`super::Loaded::artifact`]): an
    /// automaton read so is trusted to be well formed, a string to be UTF-8.
    pub(crate) fn trusted(self) -> Self {
        Artifact { trusted: true, ..self }
    }

    /// Whether its automata and strings are read without validation.
    pub fn is_trusted(&self) -> bool {
        self.trusted
    }

    /// Checks the CRC-32 over the whole file.
    ///
    /// # Errors
    ///
    /// When it does not match.
    pub fn verify(&self) -> Result<(), ArtifactError> {
        let expected = u32_at(self.bytes, header::CRC);
        let found = checksum(self.bytes);
        if found == expected { Ok(()) } else { Err(ArtifactError::Checksum { expected, found }) }
    }

    /// The whole file.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The fingerprint of the sources.
    pub fn source_fingerprint(&self) -> u64 {
        u64_at(self.bytes, header::SOURCES)
    }

    /// The fingerprint of the compiler that wrote it.
    pub fn compiler_fingerprint(&self) -> u64 {
        u64_at(self.bytes, header::COMPILER)
    }

    /// The bytes of one section.
    pub fn section(&self, kind: Section) -> &'a [u8] {
        let (offset, len) = self.sections[kind as usize - 1];
        &self.bytes[offset..offset + len]
    }

    /// The settings section as words.
    pub fn settings(&self) -> Words<'a> {
        Words(self.section(Section::Settings))
    }

    /// Word `index` of section `kind`.
    ///
    /// # Errors
    ///
    /// When the section is too short.
    pub fn word(&self, kind: Section, index: usize) -> Result<u32, ArtifactError> {
        word(self.section(kind), index)
    }

    /// The string `r` refers to.
    ///
    /// # Errors
    ///
    /// When `r` points outside the strings section or not at UTF-8.
    pub fn str(&self, r: StrRef) -> Result<&'a str, ArtifactError> {
        let strings = self.section(Section::Strings);
        let range = range(r.offset, r.len, 1)?;
        let bytes = strings.get(range).ok_or(ArtifactError::Malformed("string reference"))?;
        if self.trusted {
            // SAFETY: a trusted artifact's bytes are what this build's compiler wrote
            // (`Loaded::artifact`), and it refers only to the strings it wrote whole, from
            // `&str`s.
            #[allow(unsafe_code)]
            return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
        }
        std::str::from_utf8(bytes).map_err(|_| ArtifactError::Malformed("string encoding"))
    }

    /// The words of list `r`.
    ///
    /// # Errors
    ///
    /// When `r` points outside the lists section.
    pub fn list(&self, r: ListRef) -> Result<Words<'a>, ArtifactError> {
        let lists = self.section(Section::Lists);
        let range = range(r.offset, r.len, 4)?;
        lists.get(range).map(Words).ok_or(ArtifactError::Malformed("list reference"))
    }

    /// The number of rules.
    pub fn rule_count(&self) -> usize {
        self.section(Section::Rules).len() / (format::rule::LEN * 4)
    }

    /// Rule `index`'s record.
    ///
    /// # Errors
    ///
    /// When there is no such rule.
    pub fn rule(&self, index: usize) -> Result<RuleView<'a>, ArtifactError> {
        let start = index * format::rule::LEN * 4;
        let rules = self.section(Section::Rules);
        rules
            .get(start..start + format::rule::LEN * 4)
            .map(|bytes| RuleView::new(Words(bytes)))
            .ok_or(ArtifactError::Malformed("rule index"))
    }

    /// The record of event number `index` (in `EventKind::ALL` order).
    ///
    /// # Errors
    ///
    /// When the events section is too short.
    pub fn event(&self, index: usize) -> Result<EventRecord, ArtifactError> {
        let start = index * format::event::LEN * 4;
        let events = self.section(Section::Events);
        events
            .get(start..start + format::event::LEN * 4)
            .map(|bytes| EventRecord::read(Words(bytes)))
            .ok_or(ArtifactError::Malformed("event index"))
    }
}

/// A run of little-endian `u32` words, read in place.
#[derive(Clone, Copy, Debug)]
pub struct Words<'a>(&'a [u8]);

impl<'a> Words<'a> {
    /// The words `bytes` hold (a trailing partial word is not one).
    pub fn new(bytes: &'a [u8]) -> Words<'a> {
        Words(bytes)
    }

    /// Word `index`, or 0 past the end (records never end early in a checked artifact).
    pub fn get(&self, index: usize) -> u32 {
        word(self.0, index).unwrap_or(0)
    }

    /// Words `index` and `index + 1` as a string reference.
    pub fn str_ref(&self, index: usize) -> StrRef {
        StrRef { offset: self.get(index), len: self.get(index + 1) }
    }

    /// Words `index` and `index + 1` as a list reference.
    pub fn list_ref(&self, index: usize) -> ListRef {
        ListRef { offset: self.get(index), len: self.get(index + 1) }
    }

    /// The number of words.
    pub fn len(&self) -> usize {
        self.0.len() / 4
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.len() < 4
    }

    /// Every word.
    pub fn iter(&self) -> impl Iterator<Item = u32> + 'a {
        self.0.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.0
    }
}

fn range(offset: u32, len: u32, unit: usize) -> Result<Range<usize>, ArtifactError> {
    let start = (offset as usize).checked_mul(unit);
    let end = start.and_then(|s| s.checked_add((len as usize).checked_mul(unit)?));
    match (start, end) {
        (Some(start), Some(end)) => Ok(start..end),
        _ => Err(ArtifactError::Malformed("reference overflow")),
    }
}

pub(crate) fn word(bytes: &[u8], index: usize) -> Result<u32, ArtifactError> {
    let at = index.checked_mul(4).ok_or(ArtifactError::Malformed("word index"))?;
    match bytes.get(at..at + 4) {
        Some(w) => Ok(u32::from_le_bytes([w[0], w[1], w[2], w[3]])),
        None => Err(ArtifactError::Malformed("word index")),
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    word(&bytes[at..], 0).unwrap_or(0)
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from(u32_at(bytes, at)) | (u64::from(u32_at(bytes, at + 4)) << 32)
}

/// CRC-32 of `bytes` with the header's CRC field taken as zero.
pub fn checksum(bytes: &[u8]) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&bytes[..header::CRC]);
    hasher.update(&[0; 4]);
    hasher.update(&bytes[header::CRC + 4..]);
    hasher.finalize()
}
