//! Serialized DFAs for globs and regexes (layout: a word table, then aligned DFA bytes).
//!
//! Each matcher is one small dense DFA from `regex-automata`, serialized little-endian and read
//! in place by `hook_engine::matchers` with `DFA::from_bytes` (validated, zero-copy).

use regex_automata::dfa::dense;
use regex_automata::nfa::thompson;
use regex_automata::util::syntax;

use super::writer::{push_words, to_u32};

/// Largest DFA kept, in bytes; above it, a regex is compiled at run time instead, when a rule
/// needs it (CONTRACT §4.1 allows any Rust regex, and some Unicode classes make huge DFAs).
const DFA_LIMIT: usize = 1 << 20;

/// The DFA of a glob (`literal_separator`: `*` does not cross `/`), as bytes.
pub(crate) fn glob_dfa(glob: &str) -> Result<Vec<u8>, String> {
    let glob = globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map_err(|e| e.to_string())?;
    // globset's regexes match bytes (`(?-u)`), so they may match invalid UTF-8: no UTF-8 mode.
    build(glob.regex(), false, false).map_err(|err| format!("glob `{glob}`: {err}"))
}

/// The DFA of a regex searched unanchored, or `None` when it would be too large or needs what
/// a DFA cannot do. With `Some`, the DFA may stop at a non-ASCII byte (Unicode word
/// boundaries); the matcher then falls back to the `regex` crate for that text.
pub(crate) fn regex_dfa(pattern: &str) -> Option<Vec<u8>> {
    build(pattern, true, true).ok()
}

fn build(pattern: &str, unanchored: bool, utf8: bool) -> Result<Vec<u8>, String> {
    let config = dense::Config::new()
        .minimize(false)
        .unicode_word_boundary(true)
        .dfa_size_limit(Some(DFA_LIMIT))
        .determinize_size_limit(Some(DFA_LIMIT * 4))
        .start_kind(if unanchored {
            regex_automata::dfa::StartKind::Unanchored
        } else {
            regex_automata::dfa::StartKind::Anchored
        });
    let dfa = dense::Builder::new()
        .configure(config)
        .syntax(syntax::Config::new().utf8(utf8))
        .thompson(thompson::Config::new().utf8(utf8).shrink(true))
        .build(pattern)
        .map_err(|err| err.to_string())?;
    let (bytes, padding) = dfa.to_bytes_little_endian();
    Ok(bytes[padding..].to_vec())
}

/// A matcher section: `[count, (offset, length, flags, source offset, source length) × count]`,
/// then the DFAs, each at a word-aligned offset from the section's start.
#[derive(Debug, Default)]
pub(crate) struct MatcherSection {
    entries: Vec<[u32; 5]>,
    blobs: Vec<u8>,
}

impl MatcherSection {
    /// Adds a matcher: its DFA (if any), flags, and source string reference; returns its index.
    pub(crate) fn push(&mut self, dfa: Option<&[u8]>, flags: u32, source: (u32, u32)) -> u32 {
        let (offset, len) = match dfa {
            Some(bytes) => {
                while !self.blobs.len().is_multiple_of(8) {
                    self.blobs.push(0);
                }
                let offset = self.blobs.len();
                self.blobs.extend_from_slice(bytes);
                (to_u32(offset), to_u32(bytes.len()))
            }
            None => (0, 0),
        };
        self.entries.push([offset, len, flags, source.0, source.1]);
        to_u32(self.entries.len() - 1)
    }

    /// The section's bytes. Blob offsets are relative to the end of the table, which is padded
    /// to 8 bytes so that the blobs stay aligned within an aligned section.
    pub(crate) fn finish(self) -> Vec<u8> {
        let mut bytes = Vec::new();
        push_words(&mut bytes, &[to_u32(self.entries.len())]);
        for entry in &self.entries {
            push_words(&mut bytes, entry);
        }
        while !bytes.len().is_multiple_of(8) {
            bytes.push(0);
        }
        bytes.extend_from_slice(&self.blobs);
        bytes
    }
}
