//! Every payload of `examples/` parses into its event's typed input.

use std::path::Path;

use hook_model::{EventKind, HookInput};

fn examples_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
}

#[test]
fn every_example_parses_as_its_event() {
    let mut seen = Vec::new();
    for &kind in EventKind::ALL {
        let dir = examples_dir().join(kind.kebab());
        let files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .collect();
        assert!(files.len() >= 2, "{kind}: at least two examples, found {}", files.len());
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let payload: serde_json::Value = serde_json::from_str(&text).unwrap();
            let input = HookInput::from_value(kind, &payload)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(input.kind(), kind);
            seen.push(kind);
        }
    }
    assert!(EventKind::ALL.iter().all(|kind| seen.contains(kind)));
}

/// The cases the issue names: the five `SessionStart` sources, `Stop` with and without
/// `stop_hook_active`, `PreToolUse` of `Bash`, `Write`, `Edit`, `Read` and an MCP tool, and a
/// short and a 50 KB prompt.
#[test]
fn the_required_cases_are_covered() {
    let field_values = |kind: EventKind, field: &str| -> Vec<serde_json::Value> {
        let dir = examples_dir().join(kind.kebab());
        std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| {
                let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
                let payload: serde_json::Value = serde_json::from_str(&text).unwrap();
                payload[field].clone()
            })
            .collect()
    };

    let sources = field_values(EventKind::SessionStart, "source");
    for source in ["startup", "resume", "clear", "compact", "fork"] {
        assert!(sources.contains(&source.into()), "SessionStart source {source}");
    }
    let active = field_values(EventKind::Stop, "stop_hook_active");
    assert!(active.contains(&true.into()) && active.contains(&false.into()));
    let tools = field_values(EventKind::PreToolUse, "tool_name");
    for tool in ["Bash", "Write", "Edit", "Read"] {
        assert!(tools.contains(&tool.into()), "PreToolUse {tool}");
    }
    assert!(tools.iter().any(|t| t.as_str().is_some_and(|t| t.starts_with("mcp__"))));
    let prompts = field_values(EventKind::UserPromptSubmit, "prompt");
    let lengths: Vec<usize> = prompts.iter().map(|p| p.as_str().unwrap().len()).collect();
    assert!(lengths.iter().any(|&n| n < 200));
    assert!(lengths.iter().any(|&n| n >= 50_000));
}
