//! The text that term and regex conditions read by default (reference §2.1, `field`).

use std::borrow::Cow;

use hook_model::{EventKind, ToolName};
use serde_json::Value;

/// Whether `kind` has a default text for `keywords`, `keywords_all`, `exclude` and `regex`;
/// without one, a rule must name its `field`.
pub const fn has_default_text(kind: EventKind) -> bool {
    use EventKind::{
        Notification, PermissionDenied, PermissionRequest, PostCompact, PostToolUse,
        PostToolUseFailure, PreCompact, PreToolUse, Stop, SubagentStop, UserPromptExpansion,
        UserPromptSubmit,
    };
    matches!(
        kind,
        UserPromptSubmit
            | UserPromptExpansion
            | PreToolUse
            | PermissionRequest
            | PermissionDenied
            | PostToolUse
            | PostToolUseFailure
            | Stop
            | SubagentStop
            | Notification
            | PreCompact
            | PostCompact
    )
}

/// The default text of a `kind` payload: the texts conditions read, in order (several for
/// `MultiEdit`, one per edit). Empty when the payload has none. `tool` is the tool's name on a
/// tool event (the typed input's): it says which argument is the text.
pub fn default_text<'p>(
    kind: EventKind,
    tool: Option<&str>,
    payload: &'p Value,
) -> Vec<Cow<'p, str>> {
    let field = |path: &str| lookup(payload, path).and_then(Value::as_str).map(Cow::Borrowed);
    let text = match kind {
        EventKind::UserPromptSubmit | EventKind::UserPromptExpansion => field("prompt"),
        EventKind::Stop | EventKind::SubagentStop => field("last_assistant_message"),
        EventKind::PostToolUseFailure => field("error"),
        EventKind::Notification => field("message"),
        EventKind::PreCompact => field("custom_instructions"),
        EventKind::PostCompact => field("compact_summary"),
        EventKind::PreToolUse
        | EventKind::PermissionRequest
        | EventKind::PermissionDenied
        | EventKind::PostToolUse => return tool_text(tool, payload),
        _ => None,
    };
    text.into_iter().collect()
}

/// The text of a tool call: the argument that says what the call does.
fn tool_text<'p>(tool: Option<&str>, payload: &'p Value) -> Vec<Cow<'p, str>> {
    let Some(input) = payload.get("tool_input") else { return Vec::new() };
    let tool = tool.map(ToolName::from);
    let argument = |name: &str| input.get(name).and_then(Value::as_str).map(Cow::Borrowed);
    let text = match tool {
        Some(ToolName::Bash | ToolName::Monitor | ToolName::PowerShell) => argument("command"),
        Some(ToolName::Write) => argument("content"),
        Some(ToolName::Edit) => argument("new_string"),
        Some(ToolName::MultiEdit) => {
            let edits = input.get("edits").and_then(Value::as_array);
            return edits
                .into_iter()
                .flatten()
                .filter_map(|edit| edit.get("new_string").and_then(Value::as_str))
                .map(Cow::Borrowed)
                .collect();
        }
        Some(ToolName::NotebookEdit) => argument("new_source"),
        Some(ToolName::Read) => argument("file_path"),
        Some(ToolName::Grep | ToolName::Glob) => argument("pattern"),
        Some(ToolName::WebFetch) => argument("url"),
        Some(ToolName::WebSearch) => argument("query"),
        Some(ToolName::Agent | ToolName::Task) => argument("prompt"),
        _ => Some(Cow::Owned(input.to_string())),
    };
    text.into_iter().collect()
}

/// Whether `text` matches the wildcard `pattern`: `*` any run of characters (`/` included), `?`
/// one character, anything else itself. Linear in practice (one backtrack point, the last
/// `*`), at most `pattern.len() × text.len()` steps.
pub fn wildcard(pattern: &str, text: &str) -> bool {
    // Byte offsets into both, each at a character's start: nothing is copied.
    let (mut at_pattern, mut at_text) = (0, 0);
    // Where the last `*` is, and where in the text it now ends.
    let mut star: Option<(usize, usize)> = None;
    while let Some(c) = text[at_text..].chars().next() {
        match pattern[at_pattern..].chars().next() {
            Some('*') => {
                star = Some((at_pattern, at_text));
                at_pattern += 1;
            }
            Some(wanted) if wanted == '?' || wanted == c => {
                at_pattern += wanted.len_utf8();
                at_text += c.len_utf8();
            }
            _ => match star {
                Some((star_at, ends)) => {
                    let ends = ends + text[ends..].chars().next().map_or(1, char::len_utf8);
                    star = Some((star_at, ends));
                    at_pattern = star_at + 1;
                    at_text = ends;
                }
                None => return false,
            },
        }
    }
    pattern[at_pattern..].bytes().all(|b| b == b'*')
}

/// What a context's `{name}`s stand for ([`expand`]).
#[derive(Clone, Copy, Debug)]
pub struct Vars<'a> {
    /// `{branch}`.
    pub branch: Option<&'a str>,
    /// `{issue}`: the issue the branch's name carries.
    pub issue: Option<&'a str>,
    /// `{previous_branch}`: the branch the session saw before this event.
    pub previous_branch: Option<&'a str>,
    /// `{session_id}`.
    pub session_id: &'a str,
    /// `{prompt_count}`: prompts of the session so far, this one included.
    pub prompt_count: u64,
    /// `{bracket}`.
    pub bracket: &'a str,
    /// `{used_percent}`: the percent of the context window in use, when read.
    pub used_percent: Option<u8>,
}

/// The names [`expand`] knows; a rule's text naming one reads what it stands for.
pub const VARS: [&str; 7] =
    ["branch", "issue", "session_id", "prompt_count", "bracket", "used_percent", "previous_branch"];

/// The longest a variable's value is given (`{session_id}` comes from the payload).
const MAX_VAR_CHARS: usize = 200;

/// Whether `c` makes a text shown to the model or the user read otherwise than it looks: a
/// Unicode bidirectional control (embeddings and overrides U+202A–U+202E, isolates
/// U+2066–U+2069, the marks U+200E, U+200F and U+061C), which shows what follows in another
/// order, or an invisible character that can carry text unseen (the tags U+E0000–U+E007F) or
/// split a word unseen (U+200B, U+2060, U+FEFF).
pub fn hides_text(c: char) -> bool {
    matches!(
        c,
        '\u{202A}'..='\u{202E}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200E}'
            | '\u{200F}'
            | '\u{061C}'
            | '\u{E0000}'..='\u{E007F}'
            | '\u{200B}'
            | '\u{2060}'
            | '\u{FEFF}'
    )
}

/// Whether `c` may reach the model's context from a text hookpack did not write (a remote's
/// memory, the branch, the payload): it does not [`hides_text`], and it is no control character
/// but a line break or a tab (the others can hide what follows them on a terminal).
pub fn shows(c: char) -> bool {
    !hides_text(c) && (!c.is_control() || c == '\n' || c == '\t')
}

/// `text` with each `{branch}`, `{issue}`, `{session_id}`, `{prompt_count}`, `{bracket}` and
/// `{used_percent}` replaced by what it stands for (`none` where there is nothing: no branch, no
/// issue in it, the window not read);
/// any other `{…}` is left as it is. Unchanged (not copied) when it names none. Linear in the
/// text: each `{` is compared with the known names only.
pub fn expand(text: String, vars: &Vars<'_>) -> String {
    if !text.contains('{') || !VARS.iter().any(|v| text.contains(&format!("{{{v}}}"))) {
        return text;
    }
    // What comes from the repository (the branch, its issue) or the payload, as it may be
    // shown.
    let capped = |value: &str| -> String {
        value.chars().filter(|&c| shows(c)).take(MAX_VAR_CHARS).collect()
    };
    let mut out = String::with_capacity(text.len() + 32);
    let mut rest = text.as_str();
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let name = VARS
            .iter()
            .find(|name| after.strip_prefix(**name).is_some_and(|tail| tail.starts_with('}')));
        let Some(&name) = name else {
            out.push('{');
            rest = after;
            continue;
        };
        let value = match name {
            "branch" => vars.branch.map_or("none".to_owned(), capped),
            "issue" => vars.issue.map_or("none".to_owned(), capped),
            "previous_branch" => vars.previous_branch.map_or("none".to_owned(), capped),
            "session_id" => capped(vars.session_id),
            "prompt_count" => vars.prompt_count.to_string(),
            "used_percent" => vars.used_percent.map_or("none".to_owned(), |p| p.to_string()),
            _ => vars.bracket.to_owned(),
        };
        out.push_str(&value);
        rest = &after[name.len() + 1..];
    }
    out.push_str(rest);
    out
}

/// The issue a branch name is about: a tracker key written in capitals (`ABC-42`: letters, `-`,
/// digits; not a version like `RELEASE-1.2`) anywhere in it, else a number starting one of its
/// `/`-separated parts (`feature/123-login`, `42-fix`). `fix-123` or `node-18` name none.
pub fn issue_of(branch: &str) -> Option<String> {
    let bytes = branch.as_bytes();
    for start in 0..bytes.len() {
        let boundary = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        if !boundary || !bytes[start].is_ascii_uppercase() {
            continue;
        }
        let letters = bytes[start..].iter().take_while(|b| b.is_ascii_uppercase()).count();
        let dash = start + letters;
        if letters >= 2 && bytes.get(dash) == Some(&b'-') {
            let digits = bytes[dash + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
            let end = dash + 1 + digits;
            // Not a version (`RELEASE-1.2`).
            let ends = bytes.get(end).is_none_or(|b| !b.is_ascii_alphanumeric() && *b != b'.');
            if digits > 0 && ends {
                return Some(branch[start..end].to_owned());
            }
        }
    }
    branch.split('/').find_map(|part| {
        let digits: String = part.chars().take_while(char::is_ascii_digit).collect();
        let next = part[digits.len()..].chars().next();
        (!digits.is_empty() && next.is_none_or(|c| !c.is_ascii_alphanumeric())).then_some(digits)
    })
}

/// The issue `branch` carries by the first of `templates` that matches all of it (`*` any
/// text, `?` one character, `{number}` the digits there, `{key}` a tracker key there: letters,
/// `-`, digits, as `ABC-42` or `abc-42`); `None` when none does. Templates are checked by the
/// compiler (one placeholder each); one without a placeholder matches nothing. Quadratic in the
/// branch's length at worst (each place the placeholder may start, the two sides matched in
/// linear time).
pub fn issue_by(branch: &str, templates: &[&str]) -> Option<String> {
    templates.iter().find_map(|template| {
        let (before, after, len): (&str, &str, Placeholder) =
            if let Some((before, after)) = template.split_once("{number}") {
                (before, after, number_len)
            } else {
                let (before, after) = template.split_once("{key}")?;
                (before, after, key_len)
            };
        (0..=branch.len()).filter(|&i| branch.is_char_boundary(i)).find_map(|i| {
            let n = len(&branch.as_bytes()[i..]);
            let found =
                n > 0 && wildcard(before, &branch[..i]) && wildcard(after, &branch[i + n..]);
            found.then(|| branch[i..i + n].to_owned())
        })
    })
}

/// How long the placeholder's match is at the start of a text (0: none there).
type Placeholder = fn(&[u8]) -> usize;

/// The digits `text` starts with.
fn number_len(text: &[u8]) -> usize {
    text.iter().take_while(|b| b.is_ascii_digit()).count()
}

/// The tracker key `text` starts with (letters, `-`, digits), or 0.
fn key_len(text: &[u8]) -> usize {
    let letters = text.iter().take_while(|b| b.is_ascii_alphabetic()).count();
    if letters == 0 || text.get(letters) != Some(&b'-') {
        return 0;
    }
    let digits = number_len(&text[letters + 1..]);
    if digits == 0 { 0 } else { letters + 1 + digits }
}

/// What is wrong with an issue template, if anything: it must hold exactly one `{number}` or
/// `{key}`, and no other `{…}`.
pub fn issue_template_problem(template: &str) -> Option<String> {
    let placeholders = template.matches("{number}").count() + template.matches("{key}").count();
    let braces = template.matches('{').count();
    if placeholders != 1 || braces != 1 {
        return Some(format!(
            "issue template `{template}` must hold exactly one `{{number}}` or `{{key}}` (and no other `{{…}}`)"
        ));
    }
    None
}

/// The value at dotted `path` in `payload` (`tool_input.command`); array elements by index
/// (`tool_input.edits.0.new_string`).
pub fn lookup<'a>(payload: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(payload, |value, segment| match value {
        Value::Object(map) => map.get(segment),
        Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
        _ => None,
    })
}

/// The text at dotted `path`: a string as it is, any other value as JSON.
pub fn field_text<'a>(payload: &'a Value, path: &str) -> Option<Cow<'a, str>> {
    match lookup(payload, path)? {
        Value::String(text) => Some(Cow::Borrowed(text)),
        Value::Null => None,
        other => Some(Cow::Owned(other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn issues_from_branch_names() {
        for (branch, issue) in [
            ("feature/ABC-42-login", Some("ABC-42")),
            ("abc-42-login", None),
            ("fix-123", None),
            ("node-18", None),
            ("feature/123-login", Some("123")),
            ("42-fix", Some("42")),
            ("bugfix/JIRA-7", Some("JIRA-7")),
            ("main", None),
            ("v2-fix", None),
            ("release-1.2", None),
            ("feature/login2", None),
        ] {
            assert_eq!(issue_of(branch).as_deref(), issue, "{branch}");
        }
    }

    #[test]
    fn issue_templates_say_where_the_issue_is() {
        let templates = ["feature/{number}-*", "*/{key}*", "{key}-*"];
        for (branch, issue) in [
            ("feature/123-login-page", Some("123")),
            ("fix/abc-42-crash", Some("abc-42")),
            ("ABC-42-x", Some("ABC-42")),
            ("feature/login", None),
            ("feature/-1", None),
            ("main", None),
        ] {
            assert_eq!(issue_by(branch, &templates).as_deref(), issue, "{branch}");
        }
        assert_eq!(issue_by("gh-7", &["gh-{number}"]).as_deref(), Some("7"));
        // onus's branch formats, as templates.
        let onus = [
            "issue/*-{number}*",
            "feature/{number}*",
            "bug/{number}*",
            "fix/{number}*",
            "hotfix/{number}*",
            "{number}-*",
            "{key}*",
            "*#{number}*",
        ];
        for (branch, issue) in [
            ("issue/feature-42/login", Some("42")),
            ("hotfix/17-crash", Some("17")),
            ("123-login", Some("123")),
            ("ABC-42-x", Some("ABC-42")),
            ("wip#77", Some("77")),
            ("release/next", None),
        ] {
            assert_eq!(issue_by(branch, &onus).as_deref(), issue, "{branch}");
        }
        assert_eq!(issue_by("x", &["*"]), None, "no placeholder, no issue");
        assert!(issue_template_problem("feature/{number}-*").is_none());
        assert!(issue_template_problem("{number}-{key}").is_some());
        assert!(issue_template_problem("{issue}").is_some());
        assert!(issue_template_problem("feature/*").is_some());
    }

    #[test]
    fn context_variables() {
        let vars = Vars {
            branch: Some("feature/ABC-7-x"),
            issue: Some("ABC-7"),
            previous_branch: Some("main"),
            session_id: "s1",
            prompt_count: 3,
            bracket: "moderate",
            used_percent: Some(72),
        };
        let text = "On {branch} ({issue}), prompt {prompt_count} of {session_id}, {bracket} \
                    ({used_percent}% used); {other} {";
        assert_eq!(
            expand(text.to_owned(), &vars),
            "On feature/ABC-7-x (ABC-7), prompt 3 of s1, moderate (72% used); {other} {"
        );
        let none =
            Vars { branch: None, issue: None, previous_branch: None, used_percent: None, ..vars };
        assert_eq!(
            expand("{branch} {issue} {used_percent} {previous_branch}".to_owned(), &none),
            "none none none none"
        );
        assert_eq!(expand("from {previous_branch}".to_owned(), &vars), "from main");
        assert_eq!(expand("{\"json\": 1}".to_owned(), &vars), "{\"json\": 1}");
        // Multi-byte text around and inside braces; a long session id is cut.
        assert_eq!(expand("é{branch}{é}".to_owned(), &vars), "éfeature/ABC-7-x{é}");
        let long = "s".repeat(1000);
        let vars = Vars { session_id: &long, ..vars };
        assert_eq!(expand("{session_id}".to_owned(), &vars).len(), MAX_VAR_CHARS);
        // Many unclosed braces: linear, and left as they are.
        let braces = format!("{}{{branch}}", "{".repeat(100_000));
        assert!(expand(braces, &vars).ends_with("{feature/ABC-7-x"));
    }

    #[test]
    fn variables_carry_no_bidi_or_other_controls() {
        // A branch named to reorder what the model reads: `main` shown, an order hidden.
        let branch = "fix\u{202E}\u{2066}-ABC-7\u{2069}\u{200F}\u{061C}\u{202A}";
        let vars = Vars {
            branch: Some(branch),
            issue: Some("ABC\u{202D}-7"),
            previous_branch: Some("\u{200E}main"),
            session_id: "s\u{2067}1\u{1b}\u{7}",
            prompt_count: 1,
            bracket: "fresh",
            used_percent: None,
        };
        let text = expand("{branch} {issue} {previous_branch} {session_id}".to_owned(), &vars);
        assert_eq!(text, "fix-ABC-7 ABC-7 main s1");
        assert!(!text.chars().any(hides_text));
        assert!(text.chars().all(shows));
    }

    #[test]
    fn wildcards() {
        for (pattern, text) in [
            ("main", "main"),
            ("feature/*", "feature/42-login"),
            ("feature/*", "feature/a/b"),
            ("*", ""),
            ("*-*", "ABC-7"),
            ("release-?.?", "release-1.2"),
            ("**", "x"),
            ("fé?ture/*é", "féature/ünïcodé"),
            ("*/ABC-?", "ü/x/ABC-é"),
            ("a*b*c", "aXbYbZc"),
        ] {
            assert!(wildcard(pattern, text), "{pattern} {text}");
        }
        for (pattern, text) in [
            ("main", "mainline"),
            ("feature/*", "feat/x"),
            ("?", ""),
            ("a*b", "ac"),
            ("", "a"),
            ("?", "éé"),
            ("é*", "e"),
        ] {
            assert!(!wildcard(pattern, text), "{pattern} {text}");
        }
    }

    /// The same answers as matching character by character with the texts copied out, on
    /// every short pattern and text over an alphabet with multi-byte characters.
    #[test]
    fn wildcards_agree_with_matching_copied_characters() {
        fn reference(pattern: &[char], text: &[char]) -> bool {
            match (pattern.split_first(), text.split_first()) {
                (None, _) => text.is_empty(),
                (Some(('*', rest)), _) => {
                    reference(rest, text) || (!text.is_empty() && reference(pattern, &text[1..]))
                }
                (Some((&p, rest)), Some((&t, tail))) => {
                    (p == '?' || p == t) && reference(rest, tail)
                }
                (Some(_), None) => false,
            }
        }
        let alphabet = ['a', 'é', '*', '?', '/'];
        let words = |max: usize| {
            let mut all = vec![String::new()];
            let mut last = vec![String::new()];
            for _ in 0..max {
                last = last
                    .iter()
                    .flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}")))
                    .collect();
                all.extend(last.iter().cloned());
            }
            all
        };
        let texts: Vec<String> = words(4).into_iter().filter(|w| !w.contains(['*', '?'])).collect();
        for pattern in words(4) {
            let chars: Vec<char> = pattern.chars().collect();
            for text in &texts {
                let expected = reference(&chars, &text.chars().collect::<Vec<_>>());
                assert_eq!(wildcard(&pattern, text), expected, "{pattern:?} {text:?}");
            }
        }
    }

    #[test]
    fn default_texts() {
        let cases = [
            (EventKind::UserPromptSubmit, json!({"prompt": "hi"}), vec!["hi"]),
            (EventKind::Stop, json!({"last_assistant_message": "done"}), vec!["done"]),
            (
                EventKind::PreToolUse,
                json!({"tool_name": "Bash", "tool_input": {"command": "ls"}}),
                vec!["ls"],
            ),
            (
                EventKind::PostToolUse,
                json!({"tool_name": "MultiEdit", "tool_input": {"edits": [{"new_string": "a"}, {"new_string": "b"}]}}),
                vec!["a", "b"],
            ),
            (
                EventKind::PreToolUse,
                json!({"tool_name": "mcp__db__query", "tool_input": {"sql": "select 1"}}),
                vec![r#"{"sql":"select 1"}"#],
            ),
            (EventKind::SessionStart, json!({"source": "startup"}), vec![]),
        ];
        for (kind, payload, expected) in cases {
            let tool = payload.get("tool_name").and_then(Value::as_str);
            assert_eq!(default_text(kind, tool, &payload), expected, "{kind}");
            assert_eq!(has_default_text(kind), kind != EventKind::SessionStart);
        }
    }

    #[test]
    fn dotted_paths() {
        let payload = json!({"tool_input": {"edits": [{"new_string": "x"}], "n": 3}});
        assert_eq!(field_text(&payload, "tool_input.edits.0.new_string").as_deref(), Some("x"));
        assert_eq!(field_text(&payload, "tool_input.n").as_deref(), Some("3"));
        assert_eq!(field_text(&payload, "tool_input.missing"), None);
    }
}
