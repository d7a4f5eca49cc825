//! Writing the artifact (layout: `hook_engine::artifact::format`).

mod aho;
mod dfa;
mod writer;

pub(crate) use aho::keyword_section;
pub(crate) use dfa::{MatcherSection, glob_dfa, regex_dfa};
pub(crate) use writer::Writer;

/// FNV-1a, 64 bits: a stable hash for fingerprints (not for security).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}
