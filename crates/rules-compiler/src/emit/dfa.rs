//! Serialized DFAs for globs and regexes (layout: a word table, then aligned DFA bytes).
//!
//! Each matcher is one small sparse DFA from `regex-automata` (built dense, then made sparse),
//! serialized little-endian and read in place by `hook_engine` with `DFA::from_bytes`
//! (validated, zero-copy).

use hook_engine::artifact::format::{MATCHER_ENTRY, prefilter};
use regex_automata::MatchKind;
use regex_automata::dfa::{StartKind, dense};
use regex_automata::nfa::thompson;
use regex_syntax::hir::{Capture, Class, Hir, HirKind, Look, Repetition};

use super::writer::{push_words, to_u32};
use crate::error::{Error, MatcherKind};

/// Largest DFA, in bytes: a regex whose DFA would be larger is refused by the linter.
const DFA_LIMIT: usize = 1 << 20;

/// The DFA of a glob (`literal_separator`: `*` does not cross `/`), matched against the whole
/// path.
pub(crate) fn glob_dfa(glob: &str) -> Result<Vec<u8>, Error> {
    let refused = |reason: String| Error::Automaton {
        kind: MatcherKind::Glob,
        pattern: glob.to_owned(),
        reason,
    };
    let built = globset::GlobBuilder::new(glob)
        .literal_separator(true)
        .build()
        .map_err(|e| refused(e.to_string()))?;
    // globset's regexes match bytes (`(?-u)`), so they may match invalid UTF-8: no UTF-8 mode.
    let hir = regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(built.regex())
        .map_err(|e| refused(e.to_string()))?;
    from_hir(&hir, StartKind::Anchored, false).map_err(refused)
}

/// The DFA of a regex, searched unanchored.
///
/// `\b`, `\B` and the other word-boundary assertions are made ASCII: a DFA can decide a Unicode
/// word boundary only between ASCII bytes and would give up on any other, and deciding it
/// then would need the regex parser and its Unicode tables in every hook. Next to a non-ASCII
/// letter, `\b` therefore behaves as if the letter were not a word character (the linter
/// warns where that can matter; `keywords` match at Unicode word boundaries).
pub(crate) fn regex_dfa(pattern: &str) -> Result<Vec<u8>, Error> {
    let refused = |reason: String| Error::Automaton {
        kind: MatcherKind::Regex,
        pattern: pattern.to_owned(),
        reason,
    };
    let parsed = regex_syntax::ParserBuilder::new().build().parse(pattern);
    let hir = parsed.map_err(|e| refused(e.to_string()))?;
    from_hir(&ascii_word_boundaries(&hir), StartKind::Unanchored, true).map_err(refused)
}

/// The reverse DFA of a regex, searched anchored backwards from the end of a match the
/// forward DFA found, to find where it starts: built as `regex-automata`'s own regexes build
/// theirs (every match kind, so the search runs to the leftmost start).
pub(crate) fn regex_reverse_dfa(pattern: &str) -> Result<Vec<u8>, Error> {
    let refused = |reason: String| Error::Automaton {
        kind: MatcherKind::Regex,
        pattern: pattern.to_owned(),
        reason,
    };
    let parsed = regex_syntax::ParserBuilder::new().build().parse(pattern);
    let hir = ascii_word_boundaries(&parsed.map_err(|e| refused(e.to_string()))?);
    let nfa = thompson::Compiler::new()
        .configure(
            thompson::Config::new()
                .utf8(true)
                .shrink(false)
                .reverse(true)
                .which_captures(thompson::WhichCaptures::None),
        )
        .build_from_hir(&hir)
        .map_err(|e| refused(e.to_string()))?;
    let config = dense::Config::new()
        .minimize(false)
        .dfa_size_limit(Some(DFA_LIMIT))
        .determinize_size_limit(Some(DFA_LIMIT * 4))
        .start_kind(StartKind::Anchored)
        .match_kind(MatchKind::All);
    let dfa = dense::Builder::new()
        .configure(config)
        .build_from_nfa(&nfa)
        .map_err(|e| refused(format!("too large to precompile ({e})")))?;
    Ok(dfa.to_sparse().map_err(|e| refused(e.to_string()))?.to_bytes_little_endian())
}

/// Builds the DFA (dense, then made sparse: several times smaller where Unicode classes make
/// dense tables wide, still read in place, and fast enough for the short texts hooks see) and
/// serializes it; or why it cannot be.
fn from_hir(hir: &Hir, start: StartKind, utf8: bool) -> Result<Vec<u8>, String> {
    let nfa = thompson::Compiler::new()
        .configure(thompson::Config::new().utf8(utf8).shrink(true))
        .build_from_hir(hir)
        .map_err(|e| e.to_string())?;
    let config = dense::Config::new()
        .minimize(false)
        .dfa_size_limit(Some(DFA_LIMIT))
        .determinize_size_limit(Some(DFA_LIMIT * 4))
        .start_kind(start);
    let dfa = dense::Builder::new()
        .configure(config)
        .build_from_nfa(&nfa)
        .map_err(|e| format!("too large to precompile ({e})"))?;
    Ok(dfa.to_sparse().map_err(|e| e.to_string())?.to_bytes_little_endian())
}

/// `hir` with every Unicode word-boundary assertion replaced by its ASCII twin.
fn ascii_word_boundaries(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Look(look) => Hir::look(match look {
            Look::WordUnicode => Look::WordAscii,
            Look::WordUnicodeNegate => Look::WordAsciiNegate,
            Look::WordStartUnicode => Look::WordStartAscii,
            Look::WordEndUnicode => Look::WordEndAscii,
            Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
            Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
            other => *other,
        }),
        HirKind::Repetition(rep) => Hir::repetition(Repetition {
            sub: Box::new(ascii_word_boundaries(&rep.sub)),
            ..rep.clone()
        }),
        HirKind::Capture(cap) => {
            Hir::capture(Capture { sub: Box::new(ascii_word_boundaries(&cap.sub)), ..cap.clone() })
        }
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(ascii_word_boundaries).collect()),
        HirKind::Alternation(subs) => {
            Hir::alternation(subs.iter().map(ascii_word_boundaries).collect())
        }
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => hir.clone(),
    }
}

/// What every match of the regex `pattern` contains: one of a few texts (needles), if the regex
/// has them; empty if not. A hook that finds none of them in a text knows the regex does not
/// match there without running its automaton.
///
/// Only what every match must hold counts: a literal of the regex's top-level sequence (or
/// inside a group or a repetition of at least one), or one needle from each branch of an
/// alternation; anything optional requires nothing. A case-insensitive ASCII letter is a
/// folded needle's letter; a class of anything else (`(?i)k` also matches the Kelvin sign)
/// ends the needle. Of the candidates, the one whose shortest needle is the longest is kept.
pub(crate) fn regex_prefilter(pattern: &str) -> Vec<Needle> {
    let Ok(hir) = regex_syntax::ParserBuilder::new().build().parse(pattern) else {
        return Vec::new();
    };
    required(&hir).unwrap_or_default()
}

/// One text of a regex's prefilter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Needle {
    /// The text, in lower case if `folded`.
    pub(crate) text: String,
    /// Whether its ASCII letters match in either case.
    pub(crate) folded: bool,
}

impl Needle {
    /// A needle of `bytes` (UTF-8, since the regex is), cut to
    /// [`prefilter::NEEDLE_LEN`] at a character boundary.
    fn new(bytes: &[u8], folded: bool) -> Option<Needle> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut end = text.len().min(prefilter::NEEDLE_LEN);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = if folded { text[..end].to_ascii_lowercase() } else { text[..end].to_owned() };
        (!text.is_empty()).then_some(Needle { text, folded })
    }
}

/// A prefilter's bytes ([`prefilter`]'s layout).
pub(crate) fn encode_prefilter(needles: &[Needle]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for needle in needles {
        bytes.push(if needle.folded { prefilter::FOLDED } else { prefilter::EXACT });
        bytes.extend_from_slice(needle.text.as_bytes());
    }
    bytes
}

/// The needles every match of `hir` contains one of.
fn required(hir: &Hir) -> Option<Vec<Needle>> {
    match hir.kind() {
        HirKind::Literal(literal) => Some(vec![Needle::new(&literal.0, false)?]),
        HirKind::Class(class) => Some(vec![Needle::new(&[folded_letter(class)?], true)?]),
        HirKind::Capture(capture) => required(&capture.sub),
        HirKind::Repetition(repetition) if repetition.min >= 1 => required(&repetition.sub),
        HirKind::Concat(parts) => {
            // Letters side by side make one needle (folded if any of them is); an assertion
            // matches no text, so the letters on either side of it are side by side too.
            let mut best = None;
            let mut run = Vec::new();
            let mut folded = false;
            for part in parts {
                match part.kind() {
                    HirKind::Literal(literal) => run.extend_from_slice(&literal.0),
                    HirKind::Class(class) if folded_letter(class).is_some() => {
                        run.extend(folded_letter(class));
                        folded = true;
                    }
                    HirKind::Look(_) => {}
                    _ => {
                        let ended = Needle::new(&std::mem::take(&mut run), folded);
                        best = better(best, ended.map(|n| vec![n]));
                        folded = false;
                        best = better(best, required(part));
                    }
                }
            }
            better(best, Needle::new(&run, folded).map(|n| vec![n]))
        }
        HirKind::Alternation(branches) => {
            let mut needles: Vec<Needle> = Vec::new();
            for branch in branches {
                for needle in required(branch)? {
                    if !needles.contains(&needle) {
                        needles.push(needle);
                    }
                }
            }
            (needles.len() <= prefilter::NEEDLES).then_some(needles)
        }
        _ => None,
    }
}

/// The lower-case letter a class is, if it is one ASCII letter in either case and nothing else.
fn folded_letter(class: &Class) -> Option<u8> {
    let pair = match class {
        Class::Unicode(class) => match class.ranges() {
            [a, b] if a.start() == a.end() && b.start() == b.end() => {
                (u8::try_from(a.start()).ok()?, u8::try_from(b.start()).ok()?)
            }
            _ => return None,
        },
        Class::Bytes(class) => match class.ranges() {
            [a, b] if a.start() == a.end() && b.start() == b.end() => (a.start(), b.start()),
            _ => return None,
        },
    };
    (pair.0.is_ascii_uppercase() && pair.1 == pair.0.to_ascii_lowercase()).then_some(pair.1)
}

/// The better of two prefilters: the one whose shortest needle is longer (a short needle is
/// found everywhere), then the one with fewer needles (each is one more search).
fn better(a: Option<Vec<Needle>>, b: Option<Vec<Needle>>) -> Option<Vec<Needle>> {
    let score = |needles: &[Needle]| {
        let shortest = needles.iter().map(|n| n.text.len()).min().unwrap_or(0);
        (shortest, std::cmp::Reverse(needles.len()))
    };
    match (a, b) {
        (Some(a), Some(b)) => Some(if score(&b) > score(&a) { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// A matcher section: `[count, entry × count]` (`MATCHER_ENTRY` words each: offset, length,
/// flags, source offset, source length, prefilter offset, prefilter length), then the
/// prefilters, then the DFAs, each at a word-aligned offset. Offsets count from the end of the
/// table.
///
/// The prefilters lie together: a hook reads those of every candidate regex and the automata of
/// few, and one page of prefilters is one page fault where prefilters beside their automata
/// were one per automaton.
#[derive(Debug, Default)]
pub(crate) struct MatcherSection {
    entries: Vec<[u32; MATCHER_ENTRY]>,
    prefilters: Vec<u8>,
    automata: Vec<u8>,
}

impl MatcherSection {
    /// Adds a matcher: its DFA (if any), flags, source string reference, and its prefilter's
    /// bytes (empty: none); returns its index.
    pub(crate) fn push(
        &mut self,
        dfa: Option<&[u8]>,
        flags: u32,
        source: (u32, u32),
        prefilter: &[u8],
    ) -> u32 {
        // Offsets into the automata until `finish` knows how long the prefilters are.
        let (offset, len) = match dfa {
            Some(bytes) => {
                while !self.automata.len().is_multiple_of(8) {
                    self.automata.push(0);
                }
                let offset = self.automata.len();
                self.automata.extend_from_slice(bytes);
                (to_u32(offset), to_u32(bytes.len()))
            }
            None => (0, 0),
        };
        let prefilter_at = to_u32(self.prefilters.len());
        self.prefilters.extend_from_slice(prefilter);
        let prefilter_len = to_u32(prefilter.len());
        self.entries.push([offset, len, flags, source.0, source.1, prefilter_at, prefilter_len]);
        to_u32(self.entries.len() - 1)
    }

    /// The flags of matcher `id`.
    pub(crate) fn flags(&self, id: u32) -> u32 {
        self.entries[id as usize][2]
    }

    /// Sets the flags of matcher `id`.
    pub(crate) fn set_flags(&mut self, id: u32, flags: u32) {
        self.entries[id as usize][2] = flags;
    }

    /// The bytes of its DFAs and prefilters so far, alignment included.
    pub(crate) fn blob_len(&self) -> usize {
        self.prefilters.len().next_multiple_of(8) + self.automata.len()
    }

    /// The section's bytes. The table is padded to 8 bytes, and so are the prefilters, so that
    /// the automata stay aligned within an aligned section.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        let automata_at = self.prefilters.len().next_multiple_of(8);
        let mut bytes = Vec::new();
        push_words(&mut bytes, &[to_u32(self.entries.len())]);
        for entry in &mut self.entries {
            if entry[1] > 0 {
                entry[0] += to_u32(automata_at);
            }
            push_words(&mut bytes, entry);
        }
        while !bytes.len().is_multiple_of(8) {
            bytes.push(0);
        }
        bytes.extend_from_slice(&self.prefilters);
        bytes.resize(bytes.len().next_multiple_of(8), 0);
        bytes.extend_from_slice(&self.automata);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::{Needle, regex_prefilter};

    #[test]
    fn a_regex_prefilter_is_what_every_match_contains() {
        let exact = |text: &str| Needle { text: text.to_owned(), folded: false };
        let folded = |text: &str| Needle { text: text.to_owned(), folded: true };
        let cases = [
            (r"(?:^|\s)@dev\b", vec![exact("@dev")]),
            (r"\brm\s+-rf\s+/", vec![exact("-rf")]),
            (r"git\s+push\s+.*--force(\s|$)", vec![exact("--force")]),
            (r"(?:ab)+c", vec![exact("ab")]),
            (r"(ab)+cde", vec![exact("cde")]),
            (r"x{2,}yz", vec![exact("yz")]),
            (r"\bcafé\b", vec![exact("café")]),
            (r"[\p{Hangul}]+기억해", vec![exact("기억해")]),
            // An assertion matches no text: the letters around it are side by side.
            (r"foo\b-bar", vec![exact("foo-bar")]),
            // One needle from each branch.
            (r"foo|bar", vec![exact("foo"), exact("bar")]),
            (
                r"(?:하지\s?마|쓰지\s?마|기억해|앞으로)",
                vec![exact("하지"), exact("쓰지"), exact("기억해"), exact("앞으로")],
            ),
            // Case-insensitive ASCII letters fold; `k` and `s` also match non-ASCII letters.
            (r"(?i)drop\s+table", vec![folded("table")]),
            (r"(?i)\bimplemented\b", vec![folded("implemented")]),
            (r"(?i)\bshipped\b", vec![folded("hipped")]),
            (r"(?i)\bpicked\b", vec![folded("pic")]),
            (r"(?i)TIL:", vec![folded("til:")]),
            (r"(?i)\b(?:I|we) went with\b", vec![folded(" went with")]),
            (r"Ab(?i:c)", vec![folded("abc")]),
            // The longest shortest needle wins, then the fewest needles.
            (r"(?:a|b)\s+(?:cde|fgh)", vec![exact("cde"), exact("fgh")]),
            (r"abc\s(?:abc|def)", vec![exact("abc")]),
            // Long literals are cut at a character boundary.
            (&"é".repeat(20), vec![exact(&"é".repeat(16))]),
            // Optional text, classes, and too many branches require nothing.
            (r"(?:ab)?c", vec![exact("c")]),
            (r"(?:ab)*", vec![]),
            (r"foo|\w+", vec![]),
            (r"ab|cd|ef|gh|ij|kl|mn|op|qr", vec![]),
            (r"(?i)é", vec![]),
            (r"\w+", vec![]),
            (r"", vec![]),
            (r"(", vec![]),
        ];
        for (pattern, needles) in cases {
            assert_eq!(regex_prefilter(pattern), needles, "{pattern}");
        }
    }
}
