//! reference §5 for malformed stdin: every row, on every event, exits 0 with empty stdout and
//! one short stderr line, and never panics.

use std::io::Read;

use hook_model::EventKind;

use crate::{env_without_hookpack, run};

/// A payload that is valid for `kind`, so that rows can break one thing at a time.
fn valid(kind: EventKind) -> String {
    format!(
        r#"{{"hook_event_name":"{kind}","session_id":"s","transcript_path":"/t","cwd":"/p","prompt":"hi"}}"#
    )
}

/// One malformed input: its name, its bytes for `kind`, and the stderr note it must give.
struct Row {
    name: &'static str,
    stdin: fn(EventKind) -> Box<dyn Read>,
    note: fn(EventKind) -> String,
}

fn bytes(data: impl Into<Vec<u8>>) -> Box<dyn Read> {
    Box::new(std::io::Cursor::new(data.into()))
}

const ROWS: &[Row] = &[
    Row {
        name: "empty stdin",
        stdin: |_| bytes(""),
        note: |_| "stdin is empty; Claude Code always sends a JSON object".into(),
    },
    Row {
        name: "whitespace only",
        stdin: |_| bytes(" \n\t\r\n"),
        note: |_| "stdin is empty; Claude Code always sends a JSON object".into(),
    },
    Row {
        name: "not JSON",
        stdin: |_| bytes("hello, hook"),
        note: |_| "stdin is not a JSON object: expected value at line 1 column 1".into(),
    },
    Row {
        name: "truncated JSON",
        stdin: |kind| bytes(&valid(kind)[..30]),
        note: |_| {
            "stdin is not a JSON object: EOF while parsing a string at line 1 column 30".into()
        },
    },
    Row {
        name: "two objects",
        stdin: |kind| bytes(format!("{}{}", valid(kind), valid(kind))),
        note: |kind| {
            let column = valid(kind).len() + 1;
            format!("stdin is not a JSON object: trailing characters at line 1 column {column}")
        },
    },
    Row {
        name: "a JSON array",
        stdin: |kind| bytes(format!("[{}]", valid(kind))),
        note: |_| "payload is an array, not a JSON object".into(),
    },
    Row {
        name: "a JSON string",
        stdin: |kind| bytes(serde_json::to_string(&valid(kind)).unwrap()),
        note: |_| "payload is a string, not a JSON object".into(),
    },
    Row {
        name: "a JSON number",
        stdin: |_| bytes("42"),
        note: |_| "payload is a number, not a JSON object".into(),
    },
    Row {
        name: "JSON null",
        stdin: |_| bytes("null"),
        note: |_| "payload is null, not a JSON object".into(),
    },
    Row {
        name: "missing hook_event_name",
        stdin: |_| bytes(r#"{"session_id":"s","transcript_path":"/t","cwd":"/p"}"#),
        note: |_| "payload has no `hook_event_name`".into(),
    },
    Row {
        name: "hook_event_name not a string",
        stdin: |_| bytes(r#"{"hook_event_name":["PreToolUse"],"session_id":"s"}"#),
        note: |_| "`hook_event_name` is an array, not a string".into(),
    },
    Row {
        name: "the wrong event",
        stdin: |kind| bytes(valid(wrong(kind))),
        note: |kind| {
            format!(
                "payload is for `{}`, but this hook answers `{kind}`; check the hook's command \
                 in settings.json",
                wrong(kind)
            )
        },
    },
    Row {
        name: "an unknown event",
        stdin: |_| bytes(valid_named("PreToolUsed")),
        note: |kind| {
            format!(
                "payload is for `PreToolUsed`, but this hook answers `{kind}`; check the hook's \
                 command in settings.json"
            )
        },
    },
    Row {
        // Inside a string, such a byte is read as U+FFFD (`strings_javascript_writes_are_read`).
        name: "a byte that is not UTF-8, outside a string",
        stdin: |kind| bytes([&b"{\xff"[..], &valid(kind).as_bytes()[1..]].concat()),
        note: |_| "stdin is not a JSON object: key must be a string at line 1 column 2".into(),
    },
    Row {
        name: "a byte-order mark",
        stdin: |kind| bytes(format!("\u{feff}{}", valid(kind))),
        note: |_| "stdin is not a JSON object: expected value at line 1 column 1".into(),
    },
    Row {
        name: "100 MB of stdin",
        stdin: |_| Box::new(std::io::repeat(b' ').take(100_000_000)),
        note: |_| "stdin is 100000000 bytes, over the 67108864-byte limit".into(),
    },
];

fn wrong(kind: EventKind) -> EventKind {
    if kind == EventKind::Stop { EventKind::PreToolUse } else { EventKind::Stop }
}

fn valid_named(name: &str) -> String {
    format!(r#"{{"hook_event_name":"{name}","session_id":"s","transcript_path":"/t","cwd":"/p"}}"#)
}

#[test]
fn malformed_stdin_fails_open_on_every_event() {
    let env = env_without_hookpack();
    for row in ROWS {
        for &kind in EventKind::ALL {
            let outcome = run(kind, &mut (row.stdin)(kind), &env);
            outcome.assert_well_formed(kind);
            assert_eq!(outcome.stdout, "", "{}: {kind}", row.name);
            let expected =
                format!("{}: {}; answered nothing\n", kind.binary_name(), (row.note)(kind));
            assert_eq!(outcome.stderr, expected, "{}: {kind}", row.name);
        }
    }
}

/// What JavaScript's JSON holds in a string and UTF-8 cannot (a lone surrogate escape, a byte
/// that is not UTF-8) leaves the payload as readable as it was: every event answers it as it
/// answers the payload without it (before, it was unreadable).
#[test]
fn strings_javascript_writes_are_read() {
    let env = env_without_hookpack();
    for damage in [&br"\ud800"[..], br"\udfff", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80"] {
        for &kind in EventKind::ALL {
            let text = valid(kind);
            let at = text.len() - 4;
            let damaged = [&text.as_bytes()[..at], damage, &text.as_bytes()[at..]].concat();
            let outcome = run(kind, &mut bytes(damaged), &env);
            let expected = run(kind, &mut bytes(text), &env);
            assert_eq!(outcome.stdout, expected.stdout, "{kind}");
            assert_eq!(outcome.stderr, expected.stderr, "{kind}");
            assert!(!outcome.stderr.contains("not a JSON object"), "{kind}: {}", outcome.stderr);
        }
    }
}

/// A payload missing a field its event requires (or with the wrong type) fails open too; the
/// note names the field and never quotes more than a line of the payload.
#[test]
fn invalid_fields_fail_open() {
    let env = env_without_hookpack();
    let cases = [
        (EventKind::PreToolUse, r#""tool_input":{}"#, "missing field `tool_name`"),
        (
            EventKind::UserPromptSubmit,
            r#""prompt":7"#,
            "invalid type: integer `7`, expected a string",
        ),
        (
            EventKind::Stop,
            r#""stop_hook_active":"yes""#,
            "invalid type: string \"yes\", expected a boolean",
        ),
    ];
    for (kind, fields, message) in cases {
        let payload = format!(
            r#"{{"hook_event_name":"{kind}","session_id":"s","transcript_path":"/t","cwd":"/p",{fields}}}"#
        );
        let outcome = run(kind, &mut payload.as_bytes(), &env);
        outcome.assert_well_formed(kind);
        assert!(outcome.stderr.contains(message), "{}", outcome.stderr);
    }

    let huge = "x".repeat(100_000);
    let payload = format!(
        r#"{{"hook_event_name":"PreToolUse","session_id":"s","transcript_path":"/t","cwd":"/p","tool_name":"Bash","tool_input":"{huge}","tool_use_id":"t"}}"#
    );
    let outcome = run(EventKind::PreToolUse, &mut payload.as_bytes(), &env);
    outcome.assert_well_formed(EventKind::PreToolUse);
    assert!(outcome.stderr.len() < 500, "{} bytes", outcome.stderr.len());
}
