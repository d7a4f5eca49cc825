//! [`Matchers`]: the glob and regex matchers of an artifact, serialized DFAs read in place.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::rc::Rc;

use regex_automata::dfa::Automaton;
use regex_automata::dfa::sparse::DFA;
use regex_automata::{Anchored, Input};

use super::effort::Effort;
use super::reader::{ArtifactError, word};

/// Words per matcher entry ([`MATCHER_ENTRY`](super::format::MATCHER_ENTRY)).
const ENTRY: usize = super::format::MATCHER_ENTRY;

/// An automaton read from the artifact, shared by the rules that use it.
type Shared<'a> = Rc<DFA<&'a [u8]>>;

/// One section of matchers (globs or regexes).
#[derive(Debug)]
pub struct Matchers<'a> {
    section: &'a [u8],
    count: usize,
    blobs: usize,
    /// Whether the automata are read without validation ([`super::Loaded::artifact`]).
    trusted: bool,
    /// The automata read so far: `DFA::from_bytes` validates the whole automaton, so each is
    /// read once per run however many rules (or a crafted list) name it. Filled lazily, so its
    /// size follows what the event uses, not what the artifact claims.
    read: RefCell<BTreeMap<u32, Option<Shared<'a>>>>,
}

impl<'a> Matchers<'a> {
    /// Reads the section's table; `trusted` is the artifact's
    /// [`super::Artifact::is_trusted`].
    ///
    /// # Errors
    ///
    /// When the table does not fit the section.
    pub fn new(section: &'a [u8], trusted: bool) -> Result<Self, ArtifactError> {
        if section.is_empty() {
            return Ok(Matchers { section, count: 0, blobs: 0, trusted, read: RefCell::default() });
        }
        let count = word(section, 0)? as usize;
        let blobs = ((1 + count * ENTRY) * 4).next_multiple_of(8);
        if blobs > section.len() {
            return Err(ArtifactError::Malformed("matcher table"));
        }
        Ok(Matchers { section, count, blobs, trusted, read: RefCell::default() })
    }

    /// The number of matchers.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether glob `index` matches all of `path`.
    ///
    /// # Errors
    ///
    /// When the matcher is damaged, or `effort` runs out.
    pub fn glob_matches(
        &self,
        index: u32,
        path: &str,
        effort: &Effort,
    ) -> Result<bool, ArtifactError> {
        effort.scan(path.len())?;
        let dfa =
            self.dfa(index, effort)?.ok_or(ArtifactError::Malformed("glob without automaton"))?;
        let input = Input::new(path).anchored(Anchored::Yes);
        match dfa.try_search_fwd(&input) {
            Ok(found) => Ok(found.is_some()),
            Err(_) => Err(ArtifactError::Malformed("glob automaton gave up")),
        }
    }

    /// Whether regex `index` matches anywhere in `text`. The compiler builds every regex's
    /// DFA with ASCII word boundaries, so the search never gives up on a byte.
    ///
    /// # Errors
    ///
    /// When the matcher is damaged, or `effort` runs out.
    pub fn regex_matches(
        &self,
        index: u32,
        text: &str,
        effort: &Effort,
    ) -> Result<bool, ArtifactError> {
        effort.scan(text.len())?;
        if !self.may_match(index, text)? {
            return Ok(false);
        }
        let dfa =
            self.dfa(index, effort)?.ok_or(ArtifactError::Malformed("regex without automaton"))?;
        match dfa.try_search_fwd(&Input::new(text)) {
            Ok(found) => Ok(found.is_some()),
            Err(_) => Err(ArtifactError::Malformed("regex automaton gave up")),
        }
    }

    /// Where regex `index` matches in `text`: its leftmost-first matches, each after the one
    /// before, at most `max`. Needs the reverse automaton the compiler stores for a signal's
    /// regexes (named by the entry's flags).
    ///
    /// # Errors
    ///
    /// When the matcher is damaged or has no reverse automaton, or `effort` runs out.
    pub fn regex_spans(
        &self,
        index: u32,
        text: &str,
        max: usize,
        effort: &Effort,
    ) -> Result<Vec<Range<usize>>, ArtifactError> {
        if !self.may_match(index, text)? {
            effort.scan(text.len())?;
            return Ok(Vec::new());
        }
        let forward =
            self.dfa(index, effort)?.ok_or(ArtifactError::Malformed("regex without automaton"))?;
        let reverse = self.entry_word(index, 2)?.checked_sub(1);
        let reverse = reverse.ok_or(ArtifactError::Malformed("regex without reverse automaton"))?;
        let reverse = self
            .dfa(reverse, effort)?
            .ok_or(ArtifactError::Malformed("regex without automaton"))?;
        let gave_up = |_| ArtifactError::Malformed("regex automaton gave up");
        let mut spans = Vec::new();
        let mut at = 0;
        while at <= text.len() && spans.len() < max {
            let Some(end) =
                forward.try_search_fwd(&Input::new(text).range(at..)).map_err(gave_up)?
            else {
                effort.scan(text.len() - at)?;
                break;
            };
            let end = end.offset();
            effort.scan(end - at)?;
            if !text.is_char_boundary(end) && end > at {
                // An empty match inside a character (a regex that can match nothing, as a UTF-8
                // search reports one): on to the next character, as regex iterators do.
                let next = (end..=text.len()).find(|&i| text.is_char_boundary(i));
                at = next.unwrap_or(text.len() + 1);
                if at > text.len() {
                    break;
                }
                continue;
            }
            let back = Input::new(text).range(at..end).anchored(Anchored::Yes);
            let start = reverse.try_search_rev(&back).map_err(gave_up)?;
            let start = start.ok_or(ArtifactError::Malformed("reverse automaton disagrees"))?;
            let start = start.offset();
            // A compiled regex matches whole characters; a crafted automaton may not.
            if !text.is_char_boundary(start) || !text.is_char_boundary(end) || start > end {
                return Err(ArtifactError::Malformed("regex match splits a character"));
            }
            effort.scan(end - start)?;
            spans.push(start..end);
            // An empty match moves on by a character, as regex iterators do.
            at = if end > start {
                end
            } else {
                text[end..].chars().next().map_or(text.len() + 1, |c| end + c.len_utf8())
            };
        }
        Ok(spans)
    }

    /// Whether regex `index` may match in `text`: whether the text holds the literal every
    /// match contains (the compiler's `regex_literal`), when the regex has one. A search for a
    /// literal costs a fraction of an automaton's, and an automaton not searched is not read.
    fn may_match(&self, index: u32, text: &str) -> Result<bool, ArtifactError> {
        let len = self.entry_word(index, 6)? as usize;
        if len == 0 {
            return Ok(true);
        }
        let start = self.blobs + self.entry_word(index, 5)? as usize;
        let bytes = self
            .section
            .get(start..start.saturating_add(len))
            .ok_or(ArtifactError::Malformed("matcher literal bounds"))?;
        let literal =
            std::str::from_utf8(bytes).map_err(|_| ArtifactError::Malformed("matcher literal"))?;
        Ok(text.contains(literal))
    }

    /// Word `word` of matcher `index`'s entry.
    fn entry_word(&self, index: u32, word_at: usize) -> Result<u32, ArtifactError> {
        if index as usize >= self.count {
            return Err(ArtifactError::Malformed("matcher index"));
        }
        word(self.section, 1 + index as usize * ENTRY + word_at)
    }

    /// Automaton `index`, read once per hook (shared: an automaton is a few hundred bytes of
    /// tables, kept out of the cache's nodes and the callers' frames).
    fn dfa(&self, index: u32, effort: &Effort) -> Result<Option<Shared<'a>>, ArtifactError> {
        if let Some(dfa) = self.read.borrow().get(&index) {
            return Ok(dfa.clone());
        }
        let dfa = self.read_dfa(index, effort)?.map(Rc::new);
        self.read.borrow_mut().insert(index, dfa.clone());
        Ok(dfa)
    }

    /// Reads automaton `index`, validating it unless the artifact's automata are trusted: that
    /// costs its length (entries may share one automaton, so a crafted table can ask for it
    /// many times over).
    fn read_dfa(
        &self,
        index: u32,
        effort: &Effort,
    ) -> Result<Option<DFA<&'a [u8]>>, ArtifactError> {
        if index as usize >= self.count {
            return Err(ArtifactError::Malformed("matcher index"));
        }
        let at = 1 + index as usize * ENTRY;
        let offset = word(self.section, at)? as usize;
        let len = word(self.section, at + 1)? as usize;
        if len == 0 {
            return Ok(None);
        }
        let start = self.blobs + offset;
        let bytes = self
            .section
            .get(start..start + len)
            .ok_or(ArtifactError::Malformed("matcher bounds"))?;
        effort.read(len)?;
        let read = if self.trusted {
            // SAFETY: trusted automata are bytes this build's compiler serialized with
            // `DFA::to_bytes_little_endian`, vouched for by the compiler's stamp and unable to
            // change while the hook reads them (`Loaded::artifact`). The header, endianness,
            // version and lengths are still checked; only the states are not walked.
            #[allow(unsafe_code)]
            unsafe {
                DFA::from_bytes_unchecked(bytes)
            }
        } else {
            DFA::from_bytes(bytes)
        };
        let (dfa, _) = read.map_err(|_| ArtifactError::Malformed("matcher automaton"))?;
        Ok(Some(dfa))
    }
}
