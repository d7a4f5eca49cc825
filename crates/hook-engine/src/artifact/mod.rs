//! The compiled artifact: its wire format, and reading it in place.
//!
//! One file, `rules.hpk`, written by `rules-compiler` and read by every hook ([`load`]). The header is
//! checked in O(1); the whole file is covered by a CRC-32 (any single changed byte is caught);
//! everything else is read where it lies, through bounds-checked little-endian accessors, so
//! loading costs the same whatever the number of rules.
//!
//! ```text
//! header (64 bytes)   magic "HOOKPACK", FORMAT_VERSION, file length, CRC-32,
//!                     source fingerprint, compiler fingerprint, section count
//! section table       per section: kind, offset, length (u32 each, + 4 reserved)
//! sections            8-byte aligned: strings, lists, rules, events, keywords, globs,
//!                     regexes, sources, settings
//! ```

mod effort;
pub mod format;
mod keywords;
mod load;
mod matchers;
mod reader;
mod record;
pub mod sources;

pub use crate::bounded::AlignedBytes;
pub use effort::Effort;
pub use keywords::{KeywordMatches, Keywords, is_word_char};
pub use load::{ArtifactBytes, COPY_LIMIT, Loaded, MAX_ARTIFACT_BYTES, load, stamp, stamp_path};
pub use matchers::Matchers;
pub use reader::{Artifact, ArtifactError, ListRef, StrRef, Words, checksum};
pub use record::{
    Brackets, CaptureRecord, EventRecord, RuleRecord, RuleView, SettingsRecord, Unset,
};
