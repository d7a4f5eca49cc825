//! `hookpack explain` on example payloads against the demo project with the builtin guard pack.

use std::path::Path;

use crate::{hookpack, project, text};

const PAYLOADS: &[&str] = &[
    "pre-tool-use/bash-rm-rf-root.json",
    "pre-tool-use/bash-force-push.json",
    "pre-tool-use/bash-ls.json",
    "pre-tool-use/write-env.json",
    "pre-tool-use/read-env-example.json",
    "pre-tool-use/edit-ts.json",
    "pre-tool-use/mcp-github.json",
    "user-prompt-submit/short.json",
    "user-prompt-submit/agent-mention.json",
    "user-prompt-submit/long-50kb.json",
    "stop/first-stop.json",
];

#[test]
fn explain_payloads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pack = std::fs::read_to_string(
        root.join("examples/projects/demo/.claude/hookpack/packs/demo.toml"),
    )
    .unwrap();
    let dir = project(
        "explain",
        &[
            (".claude/hookpack/packs/demo.toml", &pack),
            (".claude/hookpack/hookpack.toml", "builtin = [\"guard\"]\n"),
        ],
    );
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/explain", "[PROJECT]");
    settings.bind(|| {
        for name in PAYLOADS {
            let payload = std::fs::read_to_string(root.join("examples").join(name))
                .unwrap()
                .replace("/home/dev/acme-api", dir.to_str().unwrap());
            let file = dir.join("payload.json");
            std::fs::write(&file, payload).unwrap();
            let out = hookpack(&dir, &["explain", "payload.json"]);
            assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
            insta::assert_snapshot!(
                format!("explain@{}", name.replace('/', "__")),
                text(&out.stdout)
            );
        }
    });
    assert!(PAYLOADS.len() >= 10);
}

/// `explain` in a session: the state earlier hooks left (agent, prompt count), the bracket from
/// the transcript, and what a small budget drops; `explain` itself changes nothing.
#[test]
fn explain_reads_the_session_and_shows_what_the_budget_dropped() {
    let dir = project(
        "explain-session",
        &[(
            ".claude/hookpack/hookpack.toml",
            "builtin = [\"context\"]\n[budget]\nfresh = 100\nmoderate = 100\ndepleted = 100\ncritical = 100\n",
        )],
    );
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let transcript = dir.join("transcript.jsonl");
    let payload = |prompt: &str| {
        serde_json::json!({
            "hook_event_name": "UserPromptSubmit", "session_id": "s1",
            "transcript_path": transcript, "cwd": dir, "permission_mode": "default",
            "prompt": prompt
        })
    };
    // Two prompts through the hook: the agent becomes active.
    for prompt in ["@dev start", "go on"] {
        let (status, _, stderr) =
            crate::hook(hook_model::EventKind::UserPromptSubmit, &dir, &payload(prompt));
        assert_eq!((status.code(), stderr.as_str()), (0, ""));
    }
    // The window is nearly full: 170,000 of 200,000 tokens.
    std::fs::write(
        &transcript,
        serde_json::json!({"type": "assistant", "uuid": "a", "isSidechain": false,
            "message": {"id": "msg_1", "model": "claude-sonnet-4-5", "role": "assistant",
                "content": [], "usage": {"input_tokens": 5, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 169_995, "output_tokens": 1}}})
        .to_string()
            + "\n",
    )
    .unwrap();
    std::fs::write(dir.join("payload.json"), payload("*brief *plan what now").to_string()).unwrap();
    let explain = || {
        let out = hookpack(&dir, &["explain", "payload.json"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let first = explain();
    assert_eq!(explain(), first, "explain saves no state: the prompt count stays");

    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/explain-session", "[PROJECT]");
    settings.add_filter(r"read the last \d+ bytes", "read the last [N] bytes");
    settings.bind(|| insta::assert_snapshot!("explain@session-critical-budget", first));
}

/// `explain` with memories: what a prompt would capture (and the unknown namespace it names),
/// and what reading a file recalls; `explain` stores and records nothing.
#[test]
fn explain_shows_captures_and_recalled_memories() {
    let dir = project(
        "explain-memory",
        &[(".claude/hookpack/hookpack.toml", "builtin = [\"memory\"]\n")],
    );
    // A repository of its own, on a known branch (not the checkout's the test runs in).
    let init = std::process::Command::new("git")
        .args(["init", "--quiet", "--initial-branch=main"])
        .current_dir(&dir)
        .status()
        .unwrap();
    assert!(init.success());
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let common = serde_json::json!({
        "session_id": "s1", "transcript_path": dir.join("transcript.jsonl"), "cwd": dir,
        "permission_mode": "default"
    });
    let with = |fields: serde_json::Value| {
        let mut payload = common.clone();
        payload.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        payload
    };
    let prompt = |text: &str| {
        with(serde_json::json!({"hook_event_name": "UserPromptSubmit", "prompt": text}))
    };
    let (status, _, stderr) = crate::hook(
        hook_model::EventKind::UserPromptSubmit,
        &dir,
        &prompt("[decision] sign JWT tokens with RS256"),
    );
    assert_eq!((status.code(), stderr.as_str()), (0, ""));

    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/explain-memory", "[PROJECT]");
    settings.add_filter(r"\d{4}-\d{2}-\d{2}", "[DATE]");
    settings.add_filter(r"read the last \d+ bytes", "read the last [N] bytes");
    let explain = |name: &str, payload: serde_json::Value| {
        std::fs::write(dir.join("payload.json"), payload.to_string()).unwrap();
        let out = hookpack(&dir, &["explain", "payload.json"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let report = text(&out.stdout);
        settings.bind(|| insta::assert_snapshot!(name, report));
        report
    };
    let read = with(serde_json::json!({
        "hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "t1",
        "tool_input": {"file_path": dir.join("src/auth/jwt.rs")}, "tool_response": {}
    }));
    let first = explain("explain@memory-recall", read.clone());
    assert!(first.contains("sign JWT tokens with RS256"), "{first}");
    // Explain recorded nothing: the memory is still new to the session.
    let again = hookpack(&dir, &["explain", "payload.json"]);
    assert_eq!(text(&again.stdout), first);
    let report = explain(
        "explain@memory-capture",
        prompt(
            "Before the release:\n[blocker] staging TLS certificate expired <private>ticket OPS-99</private>\n@memory:ideas price cache",
        ),
    );
    assert!(!report.contains("OPS-99"), "{report}");
    // Signals: one sure enough to capture, one suggested, one the store holds already.
    let report = explain(
        "explain@memory-signals",
        prompt(
            "We are blocked by the auth service. This is important: never push to main. And I decided to sign JWT tokens with RS256.",
        ),
    );
    assert!(report.contains("captured (at or above `[memory] auto`)"), "{report}");
    assert!(report.contains("suggested to the model"), "{report}");
    assert!(report.contains("the store holds it already"), "{report}");
    let listed = text(&hookpack(&dir, &["memory", "list"]).stdout);
    assert_eq!(listed.lines().count(), 1, "explain stored nothing: {listed}");
}

/// `explain` made from a command line (`--command`, `--prompt`, `--path`) and from a payload
/// that gives only what matters: the common fields filled in, and said.
#[test]
fn explain_from_options_and_partial_payloads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pack = std::fs::read_to_string(
        root.join("examples/projects/demo/.claude/hookpack/packs/demo.toml"),
    )
    .unwrap();
    let dir = project(
        "explain-options",
        &[
            (".claude/hookpack/packs/demo.toml", &pack),
            (".claude/hookpack/hookpack.toml", "builtin = [\"guard\"]\n"),
            (
                "partial.json",
                r#"{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "git push --force origin main"}}"#,
            ),
        ],
    );
    assert!(hookpack(&dir, &["compile"]).status.success());
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/explain-options", "[PROJECT]");
    settings.bind(|| {
        for (name, args) in [
            ("options-command", &["explain", "--event", "PreToolUse", "--tool", "Bash", "--command", "rm -rf ~"][..]),
            ("options-prompt", &["explain", "--prompt", "@dev fix the login bug"]),
            ("options-path", &["explain", "--path", "src/api/users.ts", "--tool", "Edit"]),
            ("options-partial", &["explain", "partial.json"]),
        ] {
            let out = hookpack(&dir, args);
            assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
            insta::assert_snapshot!(format!("explain@{name}"), text(&out.stdout));
        }
    });
}

/// `explain` says which of the event's rules are not in force and why: replaced by a rule of a
/// scope above (both places), or turned off by `disable`.
#[test]
fn explain_says_which_scope_replaced_which() {
    let replacement = "[pack]\nname = \"guard\"\n\n[[rule]]\nid = \"rm-root\"\non = \"PreToolUse\"\ntool = \"Bash\"\ncommand = { program = \"rm\", flags = [\"-r|-R|--recursive\"], args = [\"/\"] }\ndecision = \"ask\"\nreason = \"Ask first.\"\n";
    let dir = project(
        "explain-scopes",
        &[
            (".claude/hookpack/packs/guard.toml", replacement),
            (
                ".claude/hookpack/hookpack.toml",
                "builtin = [\"guard\"]\ndisable = [\"guard/force-push\"]\n",
            ),
        ],
    );
    assert!(hookpack(&dir, &["compile"]).status.success());
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/explain-scopes", "[PROJECT]");
    settings.bind(|| {
        let out = hookpack(&dir, &["explain", "--command", "rm -rf /"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        insta::assert_snapshot!("explain@options-scopes", text(&out.stdout));
    });
}
