//! Signals: memories nobody marked, found where a `capture = { signal = true }` rule's regex
//! matches ("I decided to use Postgres", "TIL …", "we are blocked by …").
//!
//! The patterns and their base confidences are data (the builtin `memory` pack); what is code is
//! how a match becomes a memory: the sentence around it is the memory's text, its confidence is
//! the rule's adjusted by the match (a long match, a whole sentence and emphasis words raise it;
//! a very short match or sentence lowers it), overlapping matches keep the surest, and a sentence
//! is kept once. The hook then drops what the store already holds ([`is_novel`]) and captures
//! what is sure enough (`[memory] auto`), suggests what is nearly so (`suggest`), and lets the
//! rest go.

use std::ops::Range;

use crate::memory;

/// Signals are looked for in the first this many bytes of a text.
pub const MAX_TEXT: usize = 64 * 1024;

/// Matches of one regex in one text that become signals, at most.
pub const MAX_MATCHES: usize = 16;

/// Signals one event weighs, at most (the surest): each costs a look into the store.
pub const MAX_WEIGHED: usize = 64;

/// A sentence reaches at most this many bytes before and after its match.
const REACH: usize = 240;

/// A stored memory sharing this share of a signal's terms holds it already (the signal's
/// novelty, one minus that share, is under 0.3).
const SAME_TERMS: f32 = 0.7;

/// Words that say a sentence matters.
const EMPHASIS: [&str; 6] = ["important", "critical", "key", "essential", "must", "need"];

/// A signal a rule found in a text.
#[derive(Clone, Debug, PartialEq)]
pub struct Signal {
    /// The rule that found it.
    pub rule: String,
    /// The namespace it would be kept in (the rule's, resolved).
    pub namespace: String,
    /// The sentence around the match, privacy tags stripped.
    pub text: String,
    /// The rule's confidence adjusted by the match, rounded to a thousandth.
    pub confidence: f32,
    /// Which text of the event it was found in (the field its rule reads, the text's index),
    /// and where (in the text as stripped).
    pub source: (u32, usize),
    /// Where the match is.
    pub span: Range<usize>,
    /// What the hook made of it (`None` while the rules run).
    pub outcome: Option<Outcome>,
}

/// What a hook made of a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Sure enough (`[memory] auto`): captured.
    Captured,
    /// Nearly so (`[memory] suggest`): suggested to the model.
    Suggested,
    /// Under `suggest`: let go.
    Weak,
    /// Under `auto` before a compaction, when there is no one to suggest it to: let go.
    NotNow,
    /// Past `[memory] max_signals` for the event: let go.
    TooMany,
    /// The store holds it already (or it has no words to keep).
    Known,
    /// The text has markers (its author said what to keep), or what a rule of the event
    /// captured (a convention) holds it.
    Marked,
}

impl Outcome {
    /// In a few words, for `explain`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Captured => "captured (at or above `[memory] auto`)",
            Outcome::Suggested => "suggested to the model (at or above `[memory] suggest`)",
            Outcome::Weak => "let go (under `[memory] suggest`)",
            Outcome::NotNow => "let go (under `[memory] auto`: a compaction suggests nothing)",
            Outcome::TooMany => "let go (past `[memory] max_signals` for the event)",
            Outcome::Known => "let go (the store holds it already)",
            Outcome::Marked => "let go (the text is marked, or captured otherwise)",
        }
    }
}

/// The signal a match at `span` of `text` is, for a rule of confidence `base`.
pub fn found(
    rule: &str,
    namespace: &str,
    base: f32,
    text: &str,
    span: Range<usize>,
    source: (u32, usize),
) -> Signal {
    let sentence = sentence_around(text, span.clone());
    let context = text[sentence].trim();
    Signal {
        rule: rule.to_owned(),
        namespace: namespace.to_owned(),
        text: memory::cut(context, memory::MAX_MEMORY_CHARS),
        confidence: adjusted(base, &text[span.clone()], context),
        source,
        span,
        outcome: None,
    }
}

/// The confidence of a match `matched` in sentence `context`, for a rule of confidence `base`:
/// +0.02 for a match over 20 characters, −0.05 under 5; +0.02 for a sentence that ends (`.`,
/// `!`, `?`), −0.05 for one under 20 characters; +0.05 when it has an emphasis word
/// (important, critical, key, essential, must, need). In 0 to 1, to a thousandth.
pub fn adjusted(base: f32, matched: &str, context: &str) -> f32 {
    let mut confidence = base;
    let matched = matched.chars().count();
    if matched > 20 {
        confidence += 0.02;
    } else if matched < 5 {
        confidence -= 0.05;
    }
    if context.trim_end().ends_with(['.', '!', '?']) {
        confidence += 0.02;
    }
    if context.chars().count() < 20 {
        confidence -= 0.05;
    }
    let emphasis = context
        .split(|c: char| !c.is_alphanumeric())
        .any(|word| EMPHASIS.iter().any(|e| word.eq_ignore_ascii_case(e)));
    if emphasis {
        confidence += 0.05;
    }
    (confidence.clamp(0.0, 1.0) * 1000.0).round() / 1000.0
}

/// The sentence of `text` that holds `span`: from the end of the sentence before it (a `.`,
/// `!` or `?` followed by a space and no lowercase letter, or a line break) to the end of its own (its `.`, `!` or `?`
/// included), at most [`REACH`] bytes on either side, cut at a word.
pub fn sentence_around(text: &str, span: Range<usize>) -> Range<usize> {
    let bytes = text.as_bytes();
    // A `.` before a space and a lowercase letter is an abbreviation (`e.g. this`).
    let ends_sentence = |i: usize| {
        matches!(bytes[i], b'.' | b'!' | b'?')
            && bytes.get(i + 1).is_none_or(u8::is_ascii_whitespace)
            && bytes[i + 1..]
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                .is_none_or(|b| !b.is_ascii_lowercase())
    };
    let floor = text.ceil_char_boundary(span.start.saturating_sub(REACH));
    let mut start = span.start;
    let mut bounded = false;
    while start > floor {
        let before = start - 1;
        if bytes[before] == b'\n' || ends_sentence(before) {
            bounded = true;
            break;
        }
        start = before;
    }
    // The text's start, or the reach ending right where a sentence starts.
    bounded |= start == 0 || bytes[start - 1] == b'\n' || ends_sentence(start - 1);
    if !bounded && start == floor {
        // Cut: from the next word on.
        start +=
            text[start..span.start].find(|c: char| c.is_ascii_whitespace()).map_or(0, |i| i + 1);
    }
    let ceiling = text.floor_char_boundary(span.end + REACH);
    let mut end = span.end;
    let mut ended = false;
    while end < text.len() && end <= ceiling {
        if bytes[end] == b'\n' {
            ended = true;
            break;
        }
        if ends_sentence(end) {
            end += 1;
            ended = true;
            break;
        }
        if end == ceiling {
            break;
        }
        end += 1;
    }
    if !ended && end < text.len() {
        // Cut: before the word it is in.
        end = span.end
            + text[span.end..end]
                .rfind(|c: char| c.is_ascii_whitespace())
                .unwrap_or(end - span.end);
    }
    start.min(span.start)..end.max(span.end)
}

/// The signals worth weighing of those an event's rules found: of overlapping matches in one
/// text the surest (the first of equals), each sentence once (its surest); the [`MAX_WEIGHED`]
/// surest, surest first (the first found of equals).
pub fn resolve(mut signals: Vec<Signal>) -> Vec<Signal> {
    signals.sort_by_key(|s| (s.source, s.span.start));
    let mut kept: Vec<Signal> = Vec::new();
    for signal in signals {
        match kept.last_mut() {
            Some(last) if last.source == signal.source && signal.span.start < last.span.end => {
                if signal.confidence > last.confidence {
                    *last = signal;
                }
            }
            _ => kept.push(signal),
        }
    }
    let mut once: Vec<Signal> = Vec::new();
    for signal in kept {
        match once.iter_mut().find(|s| s.text == signal.text) {
            Some(same) if signal.confidence > same.confidence => *same = signal,
            Some(_) => {}
            None => once.push(signal),
        }
    }
    // Stable: equals keep the order found.
    once.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    once.truncate(MAX_WEIGHED);
    once
}

/// Whether `text` says something none of `others` (the stored memories sharing the most of its
/// terms, or what the event captured otherwise) says: none holds [`SAME_TERMS`] of its terms.
/// A text without terms says nothing to keep.
pub fn is_novel<'t>(text: &str, others: impl IntoIterator<Item = &'t str>) -> bool {
    let terms = memory::first_terms(text, memory::MAX_QUERY_TERMS);
    if terms.is_empty() {
        return false;
    }
    !others.into_iter().any(|other| {
        let theirs = memory::terms(other);
        let shared = terms.iter().filter(|t| theirs.contains(t)).count();
        #[allow(clippy::cast_precision_loss, reason = "at most 64 terms")]
        let share = shared as f32 / terms.len() as f32;
        share >= SAME_TERMS
    })
}

/// What the model is told of a signal worth keeping but not sure enough to keep unasked:
/// the sentence, and the marker that keeps it (`[decision] …`, written in its reply).
pub fn suggestion(signal: &Signal, marker: &str) -> String {
    let text = memory::cut(&signal.text.replace('\n', " "), 300);
    format!(
        "hookpack memory: this may be worth keeping in `{}` ({:.2}): \"{text}\". If it should \
         outlast the session, write a line starting with `[{marker}]` and the gist in your \
         reply, and it is kept.",
        signal.namespace, signal.confidence
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str, needle: &str, base: f32) -> Signal {
        let start = text.find(needle).unwrap();
        found("memory/x", "decisions", base, text, start..start + needle.len(), (0, 0))
    }

    /// A confidence in thousandths.
    #[allow(clippy::cast_possible_truncation, reason = "0 to 1000")]
    fn milli(signal: &Signal) -> i32 {
        (signal.confidence * 1000.0).round() as i32
    }

    #[test]
    fn the_seed_examples_score_as_verified() {
        // git-notes-memory's verified detector results.
        let s = one("I decided to use PostgreSQL for storage.", "I decided to", 0.90);
        assert_eq!((milli(&s), s.text.as_str()), (920, "I decided to use PostgreSQL for storage."));
        assert_eq!(milli(&one("TIL pytest fixtures can be scoped", "TIL", 0.95)), 900);
        let s = one("We are blocked by the auth service", "blocked by", 0.92);
        assert_eq!((milli(&s), s.text.as_str()), (920, "We are blocked by the auth service"));
        assert_eq!(milli(&one("remember this: use tabs", "remember this", 0.98)), 980);
        assert_eq!(milli(&one("[decision] Use JWT", "[decision]", 0.98)), 930);
        assert_eq!(milli(&one("This is important: never push to main", "important:", 0.75)), 800);
    }

    #[test]
    fn the_sentence_is_the_one_holding_the_match() {
        let text =
            "We tried Redis. Then I decided to use Postgres for the queue! Next, docs.\nAnd more";
        assert_eq!(
            one(text, "I decided to", 0.9).text,
            "Then I decided to use Postgres for the queue!"
        );
        let text = "line one\nwe went with sqlite e.g. for tests\nline three";
        assert_eq!(one(text, "we went with", 0.8).text, "we went with sqlite e.g. for tests");
        let long = format!("{} I decided to keep it {}", "word ".repeat(100), "more ".repeat(100));
        let s = one(&long, "I decided to", 0.9);
        assert!(s.text.len() <= 2 * REACH + 20, "{}", s.text.len());
        assert!(s.text.starts_with("word") && s.text.ends_with("more"), "{}", s.text);
        // Never splits a character.
        let wide = format!("{}I decided to {}", "é".repeat(300), "ü".repeat(300));
        let s = one(&wide, "I decided to", 0.9);
        assert!(s.text.contains("I decided to"));
        // A sentence that starts or ends right at the reach is whole.
        let at_reach = format!("Intro. {}I decided to go. Rest", "x ".repeat(120));
        let s = one(&at_reach, "I decided to", 0.9);
        assert!(s.text.starts_with("x x") && s.text.ends_with("go."), "{}", s.text);
        let ends_at_reach = format!("I decided to {}go. Rest", "y ".repeat(118));
        let s = one(&ends_at_reach, "I decided to", 0.9);
        assert!(s.text.ends_with("go."), "{}", s.text);
    }

    #[test]
    fn overlaps_keep_the_surest_and_a_sentence_is_kept_once() {
        let text = "We decided to go with Axum.";
        let a = one(text, "decided to", 0.90);
        let b =
            Signal { rule: "memory/y".into(), confidence: 0.95, ..one(text, "decided to go", 0.9) };
        let kept = resolve(vec![a.clone(), b.clone()]);
        assert_eq!(kept, std::slice::from_ref(&b));
        // Apart in the text but one sentence: once, the surest.
        let c = Signal { span: 22..26, confidence: 0.5, ..a.clone() };
        assert_eq!(resolve(vec![c, b.clone()]), [b]);
        let many: Vec<Signal> = (0..100u8)
            .map(|i| Signal {
                text: format!("s{i}"),
                source: (0, usize::from(i)),
                confidence: f32::from(i) / 100.0,
                ..a.clone()
            })
            .collect();
        let kept = resolve(many);
        assert_eq!(kept.len(), MAX_WEIGHED);
        assert_eq!((kept[0].text.as_str(), kept[63].text.as_str()), ("s99", "s36"));
    }

    #[test]
    fn novelty_is_against_what_is_stored() {
        let text = "I decided to use PostgreSQL for storage.";
        assert!(is_novel(text, []));
        assert!(is_novel(text, ["Redis caches the sessions"]));
        assert!(!is_novel(text, ["We use PostgreSQL for storage, decided in March"]));
        assert!(!is_novel("So we did it.", []), "no terms, nothing to keep");
    }
}
