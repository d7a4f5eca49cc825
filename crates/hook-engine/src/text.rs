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
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut at_pattern, mut at_text) = (0, 0);
    // Where the last `*` is, and where in the text it now ends.
    let mut star: Option<(usize, usize)> = None;
    while at_text < text.len() {
        match pattern.get(at_pattern) {
            Some('*') => {
                star = Some((at_pattern, at_text));
                at_pattern += 1;
            }
            Some(&wanted) if wanted == '?' || wanted == text[at_text] => {
                at_pattern += 1;
                at_text += 1;
            }
            _ => match star {
                Some((star_at, ends)) => {
                    star = Some((star_at, ends + 1));
                    at_pattern = star_at + 1;
                    at_text = ends + 1;
                }
                None => return false,
            },
        }
    }
    pattern[at_pattern..].iter().all(|&c| c == '*')
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
    fn wildcards() {
        for (pattern, text) in [
            ("main", "main"),
            ("feature/*", "feature/42-login"),
            ("feature/*", "feature/a/b"),
            ("*", ""),
            ("*-*", "ABC-7"),
            ("release-?.?", "release-1.2"),
            ("**", "x"),
        ] {
            assert!(wildcard(pattern, text), "{pattern} {text}");
        }
        for (pattern, text) in
            [("main", "mainline"), ("feature/*", "feat/x"), ("?", ""), ("a*b", "ac"), ("", "a")]
        {
            assert!(!wildcard(pattern, text), "{pattern} {text}");
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
