//! [`Matchers`]: the glob and regex matchers of an artifact, serialized DFAs read in place.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Range;
use std::rc::Rc;

use regex_automata::dfa::Automaton;
use regex_automata::dfa::sparse::DFA;
use regex_automata::{Anchored, Input};

use super::effort::Effort;
use super::format::prefilter;
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
        if !self.may_match(index, text, effort)? {
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
        if !self.may_match(index, text, effort)? {
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

    /// Whether regex `index` may match in `text`: whether the text holds one of the needles of
    /// the regex's prefilter (the compiler's `regex_prefilter`), when it has one. A search for
    /// a few bytes costs a fraction of an automaton's, and an automaton not searched is not
    /// read.
    ///
    /// The caller has charged one scan of the text; each needle beyond the first costs one
    /// more, and a folded one a scan per 8 of its bytes (what comparing it may cost at each
    /// byte of a crafted text).
    fn may_match(&self, index: u32, text: &str, effort: &Effort) -> Result<bool, ArtifactError> {
        let len = self.entry_word(index, 6)? as usize;
        if len == 0 {
            return Ok(true);
        }
        let start = self.blobs + self.entry_word(index, 5)? as usize;
        let mut rest = self
            .section
            .get(start..start.saturating_add(len))
            .ok_or(ArtifactError::Malformed("matcher prefilter bounds"))?;
        let malformed = || ArtifactError::Malformed("matcher prefilter");
        let mut scans_left = 1;
        let mut needles = 0;
        while let Some((&marker, tail)) = rest.split_first() {
            let end = tail.iter().position(|&b| b >= prefilter::FOLDED).unwrap_or(tail.len());
            let (needle, next) = tail.split_at(end);
            needles += 1;
            if marker < prefilter::FOLDED
                || needle.is_empty()
                || needle.len() > prefilter::NEEDLE_LEN
                || needles > prefilter::NEEDLES
            {
                return Err(malformed());
            }
            let folded = marker == prefilter::FOLDED;
            let scans = if folded { needle.len().div_ceil(8) } else { 1 };
            if scans > scans_left {
                effort.scan(text.len().saturating_mul(scans - scans_left))?;
            }
            scans_left = 0;
            let found = if folded {
                contains_folded(text.as_bytes(), needle)
            } else {
                text.contains(std::str::from_utf8(needle).map_err(|_| malformed())?)
            };
            if found {
                return Ok(true);
            }
            rest = next;
        }
        Ok(false)
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

/// Whether `haystack` holds `needle` (lower case) with its ASCII letters in either case.
///
/// Looks for the needle's rarest byte first, eight bytes at a time, then compares the rest.
fn contains_folded(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((anchor, &byte)) = needle.iter().enumerate().max_by_key(|&(i, &b)| (rarity(b), !i))
    else {
        return true;
    };
    // A letter's two cases differ by one bit: set it, and both are the lower case.
    let fold = if byte.is_ascii_lowercase() { 0x20 } else { 0 };
    let Some(last) = haystack.len().checked_sub(needle.len() - anchor) else {
        return false;
    };
    let mut at = anchor;
    while let Some(found) = find_byte(haystack, at, byte, fold) {
        if found > last {
            return false;
        }
        let start = found - anchor;
        if haystack[start..start + needle.len()].eq_ignore_ascii_case(needle) {
            return true;
        }
        at = found + 1;
    }
    false
}

/// Where `byte` is first in `haystack` from `from`, once each byte's bits `fold` are set.
fn find_byte(haystack: &[u8], from: usize, byte: u8, fold: u8) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let wanted = ONES * u64::from(byte);
    let folds = ONES * u64::from(fold);
    let rest = haystack.get(from..)?;
    let mut chunks = rest.chunks_exact(8);
    for (i, chunk) in chunks.by_ref().enumerate() {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let x = (u64::from_le_bytes(word) | folds) ^ wanted;
        // The lowest byte of `x` that is zero sets its high bit here (higher ones may too).
        let zeros = x.wrapping_sub(ONES) & !x & HIGHS;
        if zeros != 0 {
            return Some(from + i * 8 + (zeros.trailing_zeros() / 8) as usize);
        }
    }
    let tail = chunks.remainder();
    let position = tail.iter().position(|&b| b | fold == byte)?;
    Some(haystack.len() - tail.len() + position)
}

/// How rarely a byte is in text, roughly (English letters by frequency; space the least rare).
fn rarity(byte: u8) -> u8 {
    match byte {
        b' ' => 0,
        b'e' | b't' | b'a' | b'o' | b'i' | b'n' => 1,
        b's' | b'h' | b'r' | b'd' | b'l' => 2,
        b'c' | b'u' | b'm' | b'w' | b'f' | b'g' | b'y' | b'p' | 0x80.. => 3,
        b'b' | b'v' => 4,
        _ => 5,
    }
}

#[cfg(test)]
mod tests {
    use super::{Effort, Matchers, contains_folded, prefilter};
    use crate::artifact::format::MATCHER_ENTRY;
    use crate::artifact::reader::ArtifactError;

    /// A section of one regex without an automaton, whose prefilter is `bytes`.
    fn section(bytes: &[u8]) -> Vec<u8> {
        let mut entry = [0_u32; MATCHER_ENTRY];
        entry[6] = u32::try_from(bytes.len()).unwrap();
        let mut section: Vec<u8> =
            [1].iter().chain(&entry).flat_map(|w: &u32| w.to_le_bytes()).collect();
        section.resize(section.len().next_multiple_of(8), 0);
        section.extend_from_slice(bytes);
        section
    }

    fn matches(prefilter: &[u8], text: &str) -> Result<bool, ArtifactError> {
        let section = section(prefilter);
        let matchers = Matchers::new(&section, false)?;
        matchers.regex_matches(0, text, &Effort::for_artifact(section.len()))
    }

    #[test]
    fn a_text_without_any_needle_is_answered_without_the_automaton() {
        let (exact, folded) = (prefilter::EXACT, prefilter::FOLDED);
        let needles = [&[exact][..], b"rm -rf", &[folded], b"drop", &[exact], "기억".as_bytes()];
        let needles = needles.concat();
        for text in ["", "rm -r f", "DRO P", "기 억", "ｄrop"] {
            assert_eq!(matches(&needles, text), Ok(false), "{text}");
        }
        // With a needle there, the automaton is read: this entry has none.
        for text in ["x rm -rf /", "DROP", "dRoP table", "기억해", "a drop"] {
            let error = ArtifactError::Malformed("regex without automaton");
            assert_eq!(matches(&needles, text), Err(error), "{text}");
        }
    }

    #[test]
    fn a_crafted_prefilter_is_refused() {
        let (exact, folded) = (prefilter::EXACT, prefilter::FOLDED);
        let long = vec![b'a'; prefilter::NEEDLE_LEN + 1];
        let many: Vec<u8> = (0..=prefilter::NEEDLES)
            .flat_map(|i| [folded, b'a' + u8::try_from(i).unwrap()])
            .collect();
        let crafted: [&[u8]; 6] = [
            b"abc",
            &[exact],
            &[exact, exact, b'a'],
            &[[exact].as_slice(), &long].concat(),
            &many,
            &[exact, 0xC3],
        ];
        for prefilter in crafted {
            let error = ArtifactError::Malformed("matcher prefilter");
            assert_eq!(matches(prefilter, "zzz"), Err(error), "{prefilter:?}");
        }
    }

    #[test]
    fn folded_search_agrees_with_comparing_every_window() {
        let alphabet: &[u8] = b"aAbB x.";
        let mut seed = 7_u64;
        let mut next = |n: usize| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) as usize % n
        };
        let mut found = 0;
        for _ in 0..20_000 {
            let haystack: Vec<u8> = (0..next(40)).map(|_| alphabet[next(alphabet.len())]).collect();
            let needle: Vec<u8> = (0..=next(4))
                .map(|_| alphabet[next(alphabet.len())].to_ascii_lowercase())
                .collect();
            let expected = haystack.windows(needle.len()).any(|w| w.eq_ignore_ascii_case(&needle));
            assert_eq!(contains_folded(&haystack, &needle), expected, "{haystack:?} {needle:?}");
            found += usize::from(expected);
        }
        assert!(found > 2_000, "{found}");
    }
}
