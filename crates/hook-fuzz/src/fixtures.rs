//! Fixed payloads, and the engine's whole public surface run over them: what the `pack` and
//! `artifact` targets do with an engine once they have one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::OnceLock;

use hook_engine::{Bracket, Engine, Facts, Mode, SessionState, memory};
use hook_model::{EventKind, HookInput};
use serde_json::{Value, json};

/// `bytes` read as the hooks read a payload (`hook_model::json_from_slice`).
fn damaged(bytes: &[u8]) -> Value {
    hook_model::json_from_slice(bytes).expect("a damaged fixture reads leniently")
}

/// The payloads every engine is asked about: a guard's, keywords', a path's, a stop's and a
/// compaction's.
pub(crate) fn payloads() -> &'static [(EventKind, Value)] {
    static PAYLOADS: OnceLock<Vec<(EventKind, Value)>> = OnceLock::new();
    PAYLOADS.get_or_init(|| {
        let common = |event: &str| {
            json!({
                "session_id": "fuzz",
                "transcript_path": "/nonexistent/fuzz.jsonl",
                "cwd": "/project",
                "hook_event_name": event,
                "permission_mode": "default",
            })
        };
        let with = |event: &str, fields: Value| {
            let mut payload = common(event);
            if let (Some(payload), Value::Object(fields)) = (payload.as_object_mut(), fields) {
                payload.extend(fields);
            }
            payload
        };
        vec![
            (
                EventKind::PreToolUse,
                with(
                    "PreToolUse",
                    json!({
                        "tool_name": "Bash",
                        "tool_input": { "command": "rm -rf / && git push --force origin main" },
                        "tool_use_id": "t1",
                    }),
                ),
            ),
            (
                EventKind::UserPromptSubmit,
                with(
                    "UserPromptSubmit",
                    json!({
                        "prompt": "@dev *brief *tdd add a SQL migration for the postgres schema \
                                   change; [decision] use uuid keys <private>token=hunter2</private> \
                                   [remember:learnings] parseJSONValue needs care\n\n\
                                   :::decisions pick sqlite:::",
                    }),
                ),
            ),
            (
                EventKind::PostToolUse,
                with(
                    "PostToolUse",
                    json!({
                        "tool_name": "Edit",
                        "tool_input": {
                            "file_path": "/project/src/billing/webhook.ts",
                            "old_string": "a",
                            "new_string": "b",
                        },
                        "tool_response": { "filePath": "/project/src/billing/webhook.ts" },
                        "tool_use_id": "t2",
                    }),
                ),
            ),
            (EventKind::Stop, with("Stop", json!({ "stop_hook_active": false }))),
            (
                EventKind::PreCompact,
                with("PreCompact", json!({ "trigger": "auto", "custom_instructions": "" })),
            ),
            (EventKind::SessionStart, with("SessionStart", json!({ "source": "compact" }))),
            // What JavaScript's JSON carries and UTF-8 cannot, read as the hooks read it.
            (
                EventKind::PreToolUse,
                damaged(
                    b"{\"session_id\":\"fuzz\",\"cwd\":\"/project\",\"transcript_path\":\"/t\",\
                      \"hook_event_name\":\"PreToolUse\",\"tool_use_id\":\"t3\",\"tool_name\":\
                      \"Write\",\"tool_input\":{\"file_path\":\"/project/.ssh/id_\\ud800\xed\xa0\x80\",\
                      \"content\":\"key \\udfff\xff\xc0\xaf\"}}",
                ),
            ),
            (
                EventKind::UserPromptSubmit,
                damaged(
                    b"{\"session_id\":\"fuzz\",\"cwd\":\"/project\",\"transcript_path\":\"/t\",\
                      \"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"[decision] use \
                      \\ud83d\\ud800 keys \xff <private>x\\udc00</private>\"}",
                ),
            ),
        ]
    })
}

/// A session that has seen things: an agent, a workflow, flags, compactions, `once` rules.
fn busy_state() -> SessionState {
    SessionState {
        agent: Some("dev".into()),
        workflow: Some("tdd".into()),
        task: Some("t-1".into()),
        flags: BTreeSet::from(["dev-mode".to_owned(), "quiet".to_owned()]),
        prompt_count: 41,
        prompts_since_compaction: 9,
        compactions: 2,
        compaction_pending: true,
        injected: BTreeMap::from([("context/constitution".to_owned(), 2)]),
        observed: hook_engine::observe::Observed {
            title: Some("fix the login bug".into()),
            edited: vec!["src/auth.rs".into()],
            ran: vec!["cargo test".into()],
            commands: 1,
            ..Default::default()
        }
        .into(),
        branch: Some("main".into()),
    }
}

/// Runs `engine` over every fixed payload, in both modes and two sessions, through the answer
/// and its JSON. Errors the engine returns are fine (a damaged artifact); what it must never do
/// is panic, loop, or render an answer that is not one JSON object.
pub(crate) fn exercise(engine: &Engine<'_>) {
    let settings = engine.settings();
    let config = engine.memory_settings().ok();
    for (kind, payload) in payloads() {
        let input = HookInput::from_value(*kind, payload).unwrap_or_else(|err| {
            panic!("a fixed `{kind}` payload is one Claude Code sends: {err}")
        });
        for (state, bracket, mode, branch) in [
            (SessionState::default(), Bracket::Fresh, Mode::Answer, None),
            (busy_state(), Bracket::Critical, Mode::Explain, Some("feature/ABC-42-{issue}-é")),
        ] {
            let mut state = state;
            state.begin(&input);
            // A `PreCompact` conversation with a signal in each message.
            let conversation = [
                "We are blocked by the auth service.".to_owned(),
                "TIL pytest fixtures can be scoped; I decided to use them.".to_owned(),
            ];
            let facts = Facts {
                input: &input,
                payload,
                project_root: Some(Path::new("/project")),
                state,
                bracket,
                used_percent: branch.map(|_| 73),
                branch,
                home: None,
                conversation: &conversation,
            };
            let Ok(scan) = engine.scan(&facts, mode) else { continue };
            let _ = engine.state_rules_apply(&scan, &facts);
            let Ok(mut evaluation) = engine.evaluate_scanned(&scan, &facts) else { continue };
            let active = engine.active_rules(&evaluation.state).unwrap_or_default();
            for fired in &mut evaluation.fired {
                if fired.recall.is_some() {
                    fired.add_recalled("recalled".to_owned());
                }
            }
            if *kind == EventKind::PreCompact {
                let _ = memory::handoff(&evaluation.state, &active, &[]);
            }
            if let Some(config) = config {
                let _ = memory::has_marker("[decision] fuzz", config);
            }
            let _ = evaluation.context_chars();
            for budget in [Some(settings.budget_chars(bracket)), None] {
                let mut response = hook_engine::respond(*kind, &evaluation, budget);
                if let Some(json) = response.output.render() {
                    let value: Value = serde_json::from_str(&json)
                        .unwrap_or_else(|err| panic!("the answer is not JSON ({err}): {json}"));
                    assert!(value.is_object(), "the answer is not an object: {json}");
                }
            }
        }
    }
}
