//! [`Keywords`]: the keyword automaton, an Aho-Corasick automaton searched where it lies.
//!
//! Terms are stored ASCII-lowercased; the text is folded byte by byte as it is scanned, so the
//! search is ASCII case-insensitive without copying the text. Every occurrence of every term is
//! found (overlapping), and an occurrence counts only at word boundaries (reference §2.1): a term
//! that starts (ends) with a word character needs a non-word character or the text's start
//! (end) next to it.
//!
//! # Bounded by construction
//!
//! The automaton comes from a file that may have been crafted (a CRC is easy to recompute), so
//! the search trusts no link in it and still ends in time linear in the text. Every state
//! records its depth (the length of the text it stands for; the root's is 0), and a link is
//! followed only when it keeps the depths consistent:
//!
//! - a transition out of a state of depth `d` must reach depth `d + 1` (out of the root, 1);
//! - a failure or dictionary link must reach a strictly smaller depth;
//! - any other link, a state number past the end, or a range outside its array, reads as "back
//!   to the root" or "no more".
//!
//! So the depth of the current state is at most the number of bytes read, each failure step
//! lowers it, and each byte raises it by one at most: the failure steps of a whole search are
//! at most the text's length. A dictionary chain lowers the depth at every step, so it is no
//! longer than the current depth, exactly as in a well-formed automaton; a state ends at most
//! one term (terms are distinct), each term is kept once (a bitset), and the dictionary steps of
//! a search have a budget linear in the text. A damaged automaton finds wrong terms; it never
//! loops, allocates by what it claims, reads out of bounds or panics.

use super::effort::Effort;
use super::format::keywords::{
    BOUNDARY_END, BOUNDARY_START, HEADER, NONE, PATTERN_LEN, ROOT, STATE_LEN,
};
use super::reader::{ArtifactError, ListRef, word};

/// Dictionary steps a search may take per byte of text, beyond [`DICT_STEPS`].
const DICT_STEPS_PER_BYTE: usize = 16;

/// Dictionary steps any search may take.
const DICT_STEPS: usize = 1 << 16;

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
    ///
    /// # Errors
    ///
    /// When `effort` runs out: the search costs its text, its bitset and its dictionary steps.
    pub fn find(
        &self,
        text: &str,
        matches: &mut KeywordMatches,
        effort: &Effort,
    ) -> Result<(), ArtifactError> {
        if self.patterns == 0 {
            return Ok(());
        }
        let bytes = text.as_bytes();
        effort.scan(bytes.len())?;
        effort.spend(self.patterns.div_ceil(64) as u64)?;
        // Each term is kept once, whatever the number of its occurrences; the bitset is sized
        // by the terms, which the section's length bounds.
        let mut seen = vec![0u64; self.patterns.div_ceil(64)];
        // Dictionary steps allowed: far more than any real automaton takes (a chain is as long
        // as the terms that end at one place), far fewer than a crafted one could ask for.
        let allowed = bytes.len().saturating_mul(DICT_STEPS_PER_BYTE).saturating_add(DICT_STEPS);
        let mut budget = allowed;
        let mut state = 0;
        for (at, &byte) in bytes.iter().enumerate() {
            state = self.next(state, byte.to_ascii_lowercase());
            let mut output =
                if self.output(state).is_none() { self.dict(state) } else { Some(state) };
            while let Some(found) = output {
                if budget == 0 {
                    break;
                }
                budget -= 1;
                if let Some(pattern) = self.output(found) {
                    let (word, bit) = (pattern as usize / 64, 1u64 << (pattern % 64));
                    if seen.get(word).is_some_and(|w| w & bit == 0)
                        && self.at_boundaries(text, at + 1, pattern)
                    {
                        seen[word] |= bit;
                        matches.ids.push(pattern);
                    }
                }
                output = self.dict(found);
            }
        }
        matches.ids.sort_unstable();
        matches.ids.dedup();
        effort.spend((allowed - budget) as u64)
    }

    /// The state after `byte` in `state` (the module's notes say why this ends).
    fn next(&self, mut state: u32, byte: u8) -> u32 {
        loop {
            if state == 0 {
                let target = self.word(HEADER + byte as usize);
                return if self.depth(target) == Some(1) { target } else { 0 };
            }
            let Some(depth) = self.depth(state) else { return 0 };
            if let Some(target) = self.transition(state, byte) {
                return if self.depth(target) == depth.checked_add(1) { target } else { 0 };
            }
            // Failure links lead strictly closer to the root, or to the root itself.
            let fail = self.state_word(state, 2);
            state = match self.depth(fail) {
                Some(d) if d < depth => fail,
                _ => 0,
            };
        }
    }

    fn transition(&self, state: u32, byte: u8) -> Option<u32> {
        let range = self.range(state, 0, self.trans_count())?;
        let offset = self.trans_bytes * 4;
        let keys = self.bytes.get(offset + range.start..offset + range.end)?;
        let i = keys.binary_search(&byte).ok()?;
        Some(self.word(self.trans_targets + range.start + i))
    }

    /// The nearest state with outputs along `state`'s failure chain, if any; strictly closer to
    /// the root.
    fn dict(&self, state: u32) -> Option<u32> {
        let depth = self.depth(state)?;
        let dict = self.state_word(state, 3);
        self.depth(dict).filter(|&d| d < depth).map(|_| dict)
    }

    /// The term ending at `state`: terms are distinct, so a state ends at most one (a range of
    /// more reads as none).
    fn output(&self, state: u32) -> Option<u32> {
        let range = self.range(state, 1, self.outs_count())?;
        (range.len() == 1).then(|| self.word(self.outs + range.start))
    }

    /// The range that field `field` of `state` and of the state after it delimit, when it lies
    /// within an array of `len` entries.
    fn range(&self, state: u32, field: usize, len: usize) -> Option<std::ops::Range<usize>> {
        self.depth(state)?;
        let start = self.state_word(state, field) as usize;
        let end = self.state_word(state + 1, field) as usize;
        (start <= end && end <= len).then_some(start..end)
    }

    /// The depth of `state`, or `None` when there is no such state.
    fn depth(&self, state: u32) -> Option<u32> {
        ((state as usize) < self.state_count()).then(|| self.state_word(state, 4))
    }

    fn state_count(&self) -> usize {
        (self.trans_targets - self.states) / STATE_LEN - 1
    }

    fn trans_count(&self) -> usize {
        self.trans_bytes - self.trans_targets
    }

    fn outs_count(&self) -> usize {
        self.pattern_table - self.outs
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

    /// Word `index` of the section; past the end, "no state".
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
