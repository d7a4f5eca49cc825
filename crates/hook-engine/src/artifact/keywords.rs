//! [`Keywords`]: the keyword automaton, an Aho-Corasick automaton searched where it lies.
//!
//! Terms are stored ASCII-lowercased; the text is folded byte by byte as it is scanned, so the
//! search is ASCII case-insensitive without copying the text. Every occurrence of every term is
//! found (overlapping), and an occurrence counts only at word boundaries (CONTRACT §4.1): a term
//! that starts (ends) with a word character needs a non-word character or the text's start
//! (end) next to it.

use super::format::keywords::{
    BOUNDARY_END, BOUNDARY_START, HEADER, NONE, PATTERN_LEN, ROOT, STATE_LEN,
};
use super::reader::{ArtifactError, ListRef, word};

/// The keyword automaton of an artifact.
#[derive(Clone, Copy, Debug)]
pub struct Keywords<'a> {
    bytes: &'a [u8],
    states: usize,
    patterns: usize,
    trans_targets: usize,
    trans_bytes: usize,
    outs: usize,
    pattern_table: usize,
}

impl<'a> Keywords<'a> {
    /// Reads the automaton's header and checks that its arrays fit in `section`.
    ///
    /// # Errors
    ///
    /// When they do not.
    pub fn new(section: &'a [u8]) -> Result<Self, ArtifactError> {
        if section.is_empty() {
            return Ok(Keywords {
                bytes: section,
                states: 0,
                patterns: 0,
                trans_targets: 0,
                trans_bytes: 0,
                outs: 0,
                pattern_table: 0,
            });
        }
        let state_count = word(section, 0)? as usize;
        let patterns = word(section, 1)? as usize;
        let trans_count = word(section, 2)? as usize;
        let out_count = word(section, 3)? as usize;
        let states = HEADER + ROOT;
        let trans_targets = states + (state_count + 1) * STATE_LEN;
        let trans_bytes = trans_targets + trans_count;
        let outs = trans_bytes + trans_count.div_ceil(4);
        let pattern_table = outs + out_count;
        let end = pattern_table + patterns * PATTERN_LEN;
        if end * 4 != section.len() {
            return Err(ArtifactError::Malformed("keyword section size"));
        }
        Ok(Keywords {
            bytes: section,
            states,
            patterns,
            trans_targets,
            trans_bytes,
            outs,
            pattern_table,
        })
    }

    /// The number of distinct terms.
    pub fn pattern_count(&self) -> usize {
        self.patterns
    }

    /// The rules whose `keywords` list term `pattern`.
    pub fn postings(&self, pattern: u32) -> ListRef {
        let at = self.pattern_table + pattern as usize * PATTERN_LEN;
        ListRef { offset: self.word(at + 2), len: self.word(at + 3) }
    }

    /// Adds to `matches` every term that occurs in `text` at word boundaries.
    pub fn find(&self, text: &str, matches: &mut KeywordMatches) {
        if self.patterns == 0 {
            return;
        }
        let bytes = text.as_bytes();
        let mut state = 0;
        for (at, &byte) in bytes.iter().enumerate() {
            state = self.next(state, byte.to_ascii_lowercase());
            let mut output = if self.has_output(state) { state } else { self.dict(state) };
            while output != NONE {
                for pattern in self.outputs(output) {
                    if self.at_boundaries(text, at + 1, pattern) {
                        matches.ids.push(pattern);
                    }
                }
                output = self.dict(output);
            }
        }
        matches.ids.sort_unstable();
        matches.ids.dedup();
    }

    fn next(&self, mut state: u32, byte: u8) -> u32 {
        loop {
            if state == 0 {
                return self.word(HEADER + byte as usize);
            }
            if let Some(target) = self.transition(state, byte) {
                return target;
            }
            state = self.fail(state);
        }
    }

    fn transition(&self, state: u32, byte: u8) -> Option<u32> {
        let start = self.state_word(state, 0) as usize;
        let end = self.state_word(state + 1, 0) as usize;
        let offset = self.trans_bytes * 4;
        let keys = self.bytes.get(offset + start..offset + end)?;
        let i = keys.binary_search(&byte).ok()?;
        Some(self.word(self.trans_targets + start + i))
    }

    fn fail(&self, state: u32) -> u32 {
        self.state_word(state, 2)
    }

    fn dict(&self, state: u32) -> u32 {
        self.state_word(state, 3)
    }

    fn has_output(&self, state: u32) -> bool {
        self.state_word(state + 1, 1) > self.state_word(state, 1)
    }

    fn outputs(&self, state: u32) -> impl Iterator<Item = u32> + '_ {
        let start = self.state_word(state, 1) as usize;
        let end = self.state_word(state + 1, 1) as usize;
        (start..end).map(move |i| self.word(self.outs + i))
    }

    fn at_boundaries(&self, text: &str, end: usize, pattern: u32) -> bool {
        let at = self.pattern_table + pattern as usize * PATTERN_LEN;
        let len = self.word(at) as usize;
        let bits = self.word(at + 1);
        let Some(start) = end.checked_sub(len) else { return false };
        let before_ok = bits & BOUNDARY_START == 0
            || text
                .get(..start)
                .and_then(|t| t.chars().next_back())
                .is_none_or(|c| !is_word_char(c));
        let after_ok = bits & BOUNDARY_END == 0
            || text.get(end..).and_then(|t| t.chars().next()).is_none_or(|c| !is_word_char(c));
        before_ok && after_ok
    }

    fn state_word(&self, state: u32, field: usize) -> u32 {
        self.word(self.states + state as usize * STATE_LEN + field)
    }

    /// Word `index` of the section; a corrupt index reads as "no state", so a damaged
    /// automaton finds less, never loops or panics (the CRC has caught damage before this).
    fn word(&self, index: usize) -> u32 {
        word(self.bytes, index).unwrap_or(NONE)
    }
}

/// Whether `c` is a word character for keyword boundaries: a letter, a digit or `_`.
pub fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The terms found in a text: sorted pattern ids, without repeats.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeywordMatches {
    ids: Vec<u32>,
}

impl KeywordMatches {
    /// Whether term `pattern` was found.
    pub fn contains(&self, pattern: u32) -> bool {
        self.ids.binary_search(&pattern).is_ok()
    }

    /// The terms found.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Forgets every term.
    pub fn clear(&mut self) {
        self.ids.clear();
    }
}
