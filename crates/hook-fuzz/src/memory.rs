//! The `memory` target: the fuzzer's bytes as text for `hook_engine::memory`.
//!
//! The first byte picks the configuration and the capture (bit 0: markers; bits 1–2: the
//! rule's namespace; bit 3: private tags `private`, `secret` and `p` instead of the default);
//! the rest, read as UTF-8 (lossily) and, when it is the body of a JSON string, also as a
//! payload's string is read (escapes decoded; lone surrogates, overlong and other ill-formed
//! sequences as U+FFFD), goes through `strip_private`, `has_marker`, `capture`,
//! `terms`, `first_terms` and `path_terms`.
//!
//! The privacy property: when the text splits at NUL into three parts, none of which mentions a
//! private tag, `prefix <tag>secret</tag> suffix` must strip to exactly `prefix suffix`
//! (trimmed): nothing of the secret is kept, nothing outside it is lost.

use std::collections::BTreeSet;

use hook_engine::memory::{
    CaptureSpec, MAX_MEMORY_CHARS, MAX_QUERY_TERMS, MemorySettings, capture, first_terms,
    has_marker, path_terms, strip_private, terms,
};

use crate::Reached;

/// Runs the target on `data`; `Evaluated` when the privacy property applied and held.
///
/// # Panics
///
/// When stripping, capturing or the terms break a property (see the module's documentation).
pub fn run(data: &[u8]) -> Reached {
    let Some((&choice, rest)) = data.split_first() else { return Reached::Rejected };
    // The text as a payload's string carries it: escapes decoded, lone surrogates and bytes
    // that are not UTF-8 read as U+FFFD (`hook_model::json_from_slice`), when it is one.
    let quoted = [&b"\""[..], rest, b"\""].concat();
    if let Ok(serde_json::Value::String(text)) = hook_model::json_from_slice(&quoted) {
        let _ = run_on(choice, &text);
    }
    run_on(choice, &String::from_utf8_lossy(rest))
}

/// The target on `text`, with the configuration `choice` picks.
fn run_on(choice: u8, text: &str) -> Reached {
    let mut config = MemorySettings::default();
    if choice & 8 != 0 {
        config.private_tags = vec!["private", "secret", "p"];
    }
    let namespace = [None, Some("decisions"), Some("learned"), Some("no-such-namespace")]
        [usize::from(choice >> 1) & 3];
    let spec = CaptureSpec { namespace, confidence: 0.5, markers: choice & 1 != 0 };

    if let Some(stripped) = strip_private(text, &config.private_tags) {
        assert!(stripped.len() <= text.len(), "stripping made the text longer");
        assert_eq!(stripped.trim(), stripped, "the stripped text is trimmed");
    }
    let _ = has_marker(text, &config);
    for captured in capture("fuzz/rule", text, spec, &config) {
        assert!(!captured.text.trim().is_empty(), "an empty capture");
        assert!(
            captured.text.chars().count() <= MAX_MEMORY_CHARS + 1,
            "a capture of {} chars",
            captured.text.chars().count()
        );
        assert!(
            config.namespaces.contains(&captured.namespace.as_str()),
            "captured into `{}`, not a namespace",
            captured.namespace
        );
    }
    check_terms(text);
    let _ = path_terms(text);

    privacy(text, &config.private_tags)
}

/// [`terms`] has no duplicate, and [`first_terms`] is its beginning.
fn check_terms(text: &str) {
    let all = terms(text);
    let distinct: BTreeSet<&String> = all.iter().collect();
    assert_eq!(distinct.len(), all.len(), "duplicate terms: {all:?}");
    for max in [0, 1, 5, MAX_QUERY_TERMS] {
        let first = first_terms(text, max);
        assert_eq!(first, all[..max.min(all.len())], "first_terms({max}) is not a prefix");
    }
}

/// The privacy property (see the module's documentation).
fn privacy(text: &str, tags: &[&str]) -> Reached {
    let mut parts = text.splitn(3, '\0');
    let (Some(prefix), Some(secret), Some(suffix)) = (parts.next(), parts.next(), parts.next())
    else {
        return Reached::Rejected;
    };
    let mentions_a_tag = |part: &str| {
        let part = part.to_ascii_lowercase();
        tags.iter()
            .any(|tag| part.contains(&format!("<{tag}")) || part.contains(&format!("</{tag}")))
    };
    if [prefix, secret, suffix].into_iter().any(mentions_a_tag) {
        return Reached::Rejected;
    }
    let tag = tags[0];
    let whole = format!("{prefix}<{tag}>{secret}</{tag}>{suffix}");
    let kept = format!("{prefix}{suffix}");
    let kept = kept.trim();
    let expected = (!kept.is_empty()).then(|| kept.to_owned());
    assert_eq!(strip_private(&whole, tags), expected, "stripping {whole:?}");
    Reached::Evaluated
}
