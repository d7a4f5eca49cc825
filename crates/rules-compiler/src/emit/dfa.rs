//! Serialized DFAs for globs and regexes (layout: a word table, then aligned DFA bytes).
//!
//! Each matcher is one small sparse DFA from `regex-automata` (built dense, then made sparse),
//! serialized little-endian and read in place by `hook_engine` with `DFA::from_bytes`
//! (validated, zero-copy).

use hook_engine::artifact::format::MATCHER_ENTRY;
use regex_automata::MatchKind;
use regex_automata::dfa::{StartKind, dense};
use regex_automata::nfa::thompson;
use regex_syntax::hir::{Capture, Hir, HirKind, Look, Repetition};

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

/// A text every match of the regex `pattern` contains (the longest such run of literal
/// characters the regex requires), if it has one: a hook that does not find it in a text knows
/// the regex does not match there without running the automaton.
///
/// Only what every match must hold counts: a literal of the regex's top-level sequence (or
/// inside a group or a repetition of at least one); an alternation, a class, or anything
/// optional requires nothing. Case-insensitive letters are classes, so `(?i)` words give none.
pub(crate) fn regex_literal(pattern: &str) -> Option<String> {
    let hir = regex_syntax::ParserBuilder::new().build().parse(pattern).ok()?;
    let bytes = required(&hir)?;
    String::from_utf8(bytes).ok().filter(|literal| !literal.is_empty())
}

/// The longest literal every match of `hir` contains.
fn required(hir: &Hir) -> Option<Vec<u8>> {
    fn longer(best: Option<Vec<u8>>, other: Option<Vec<u8>>) -> Option<Vec<u8>> {
        match (best, other) {
            (Some(a), Some(b)) => Some(if b.len() > a.len() { b } else { a }),
            (a, b) => a.or(b),
        }
    }
    match hir.kind() {
        HirKind::Literal(literal) => Some(literal.0.to_vec()),
        HirKind::Capture(capture) => required(&capture.sub),
        HirKind::Repetition(repetition) if repetition.min >= 1 => required(&repetition.sub),
        HirKind::Concat(parts) => {
            // Literal parts side by side make one run (the parser joins most of them already).
            let mut best = None;
            let mut run = Vec::new();
            for part in parts {
                if let HirKind::Literal(literal) = part.kind() {
                    run.extend_from_slice(&literal.0);
                    continue;
                }
                best = longer(best, Some(std::mem::take(&mut run)).filter(|r| !r.is_empty()));
                best = longer(best, required(part));
            }
            longer(best, Some(run).filter(|r| !r.is_empty()))
        }
        _ => None,
    }
}

/// A matcher section: `[count, entry × count]` (`MATCHER_ENTRY` words each: offset, length,
/// flags, source offset, source length, literal offset, literal length), then the DFAs, each
/// at a word-aligned offset from the section's start, and the literals.
#[derive(Debug, Default)]
pub(crate) struct MatcherSection {
    entries: Vec<[u32; MATCHER_ENTRY]>,
    blobs: Vec<u8>,
}

impl MatcherSection {
    /// Adds a matcher: its DFA (if any), flags, source string reference, and the literal every
    /// match contains (empty: none); returns its index.
    pub(crate) fn push(
        &mut self,
        dfa: Option<&[u8]>,
        flags: u32,
        source: (u32, u32),
        literal: &str,
    ) -> u32 {
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
        let literal_at = to_u32(self.blobs.len());
        self.blobs.extend_from_slice(literal.as_bytes());
        let literal_len = to_u32(literal.len());
        self.entries.push([offset, len, flags, source.0, source.1, literal_at, literal_len]);
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

    /// The bytes of its DFAs so far, alignment included.
    pub(crate) fn blob_len(&self) -> usize {
        self.blobs.len()
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

#[cfg(test)]
mod tests {
    use super::regex_literal;

    #[test]
    fn a_regex_literal_is_what_every_match_contains() {
        let cases = [
            (r"(?:^|\s)@dev\b", Some("@dev")),
            (r"\brm\s+-rf\s+/", Some("-rf")),
            (r"git\s+push\s+.*--force(\s|$)", Some("--force")),
            (r"(?:ab)+c", Some("ab")),
            (r"(ab)+cde", Some("cde")),
            (r"x{2,}yz", Some("yz")),
            (r"\bcafé\b", Some("café")),
            (r"[\p{Hangul}]+기억해", Some("기억해")),
            // Optional, alternative or case-insensitive text requires nothing.
            (r"(?:ab)?c", Some("c")),
            (r"(?:ab)*", None),
            (r"foo|bar", None),
            (r"(?i)drop\s+table", None),
            (r"\w+", None),
            (r"", None),
            (r"(", None),
        ];
        for (pattern, literal) in cases {
            assert_eq!(regex_literal(pattern).as_deref(), literal, "{pattern}");
        }
    }
}
