//! Whole sessions through the real binaries: a project using the builtin packs and one of its
//! own, driven event by event from `SessionStart` to `Stop`, with the state checked in the database.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use hook_engine::SessionState;
use hook_model::EventKind;
use hook_runtime::state::Store;
use rules_compiler::{Layout, compile, load};
use serde_json::{Value, json};

/// The folder of the hook binaries built for these tests.
fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_hookpack-stop")).parent().unwrap().to_path_buf()
}

/// A project with `.claude/hookpack/` holding `config` and `packs`, compiled.
fn project(name: &str, config: &str, packs: &[(&str, &str)]) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sessions").join(name);
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join(".claude/hookpack");
    std::fs::create_dir_all(dir.join("packs")).unwrap();
    std::fs::create_dir_all(root.join("user")).unwrap();
    std::fs::write(dir.join("hookpack.toml"), config).unwrap();
    for (file, text) in packs {
        std::fs::write(dir.join("packs").join(file), text).unwrap();
    }
    let layout = Layout { project: Some(root.clone()), user: Some(root.join("user/hookpack")) };
    let loaded = load(&layout, &[]);
    assert!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics.render());
    let compiled = compile(&loaded.rules(), &loaded.config.settings(), &loaded.sources).unwrap();
    std::fs::create_dir_all(dir.join("compiled")).unwrap();
    std::fs::write(dir.join("compiled/rules.hpk"), &compiled.bytes).unwrap();
    root
}

/// Starts the hook of `kind` on `payload` (common fields filled in) in `root`.
fn start(root: &Path, kind: EventKind, payload: &Value) -> Child {
    let mut payload = payload.clone();
    let fields = payload.as_object_mut().unwrap();
    fields.insert("hook_event_name".into(), json!(kind.as_str()));
    fields.entry("session_id").or_insert(json!("session-1"));
    fields.entry("cwd").or_insert(json!(root));
    fields.entry("permission_mode").or_insert(json!("default"));
    if kind.is_tool_event() {
        fields.entry("tool_use_id").or_insert(json!("toolu_01"));
    }
    fields.entry("transcript_path").or_insert(json!(root.join("transcript.jsonl")));
    let mut child = Command::new(bin_dir().join(kind.binary_name()))
        .env_clear()
        .env("CLAUDE_PROJECT_DIR", root)
        .env("XDG_CONFIG_HOME", root.join("user"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(payload.to_string().as_bytes()).unwrap();
    child
}

/// What a hook answered.
struct Reply {
    code: i32,
    json: Value,
    stderr: String,
}

impl Reply {
    fn context(&self) -> &str {
        self.json
            .pointer("/hookSpecificOutput/additionalContext")
            .and_then(Value::as_str)
            .unwrap_or("")
    }
}

fn finish(child: Child) -> Reply {
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(output.stdout).unwrap();
    Reply {
        code: output.status.code().unwrap(),
        json: if stdout.is_empty() { Value::Null } else { serde_json::from_str(&stdout).unwrap() },
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

fn hook(root: &Path, kind: EventKind, payload: &Value) -> Reply {
    let reply = finish(start(root, kind, payload));
    assert_eq!(reply.code, 0, "{kind}: {}", reply.stderr);
    assert_eq!(reply.stderr, "", "{kind}");
    reply
}

fn state(root: &Path, session: &str) -> SessionState {
    let store = Store::open_read_only(&root.join(".claude/hookpack")).unwrap();
    store.peek(session).unwrap().unwrap_or_default()
}

fn prompt(text: &str) -> Value {
    json!({ "prompt": text })
}

fn bash(command: &str) -> Value {
    json!({ "tool_name": "Bash", "tool_input": { "command": command } })
}

/// Appends an assistant entry using `tokens` of context to the transcript.
fn assistant_turn(root: &Path, id: &str, tokens: u64) {
    append(
        root,
        &json!({
            "type": "assistant", "uuid": format!("u-{id}"), "isSidechain": false,
            "message": {
                "id": format!("msg_{id}"), "model": "claude-opus-4-7", "role": "assistant",
                "content": [{ "type": "text", "text": "ok" }],
                "usage": { "input_tokens": 10, "cache_creation_input_tokens": 0,
                           "cache_read_input_tokens": tokens - 10, "output_tokens": 5 }
            }
        }),
    );
}

fn append(root: &Path, entry: &Value) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(root.join("transcript.jsonl"))
        .unwrap();
    writeln!(file, "{entry}").unwrap();
}

const PROJECT_PACK: &str = r#"
[pack]
name = "api"

[[rule]]
id = "handlers"
on = "PreToolUse"
tool = "Write|Edit"
paths = ["src/api/**/*.ts"]
context = "API handlers return { error, code } and validate input with zod."

[[rule]]
id = "database"
on = "UserPromptSubmit"
keywords = ["migration", "schema change"]
context = "Migrations live in db/migrations and need a down step."
"#;

#[test]
#[allow(clippy::too_many_lines, reason = "one session, event by event")]
fn a_whole_session_with_the_builtin_packs() {
    use EventKind::*;

    let root = project(
        "whole",
        "builtin = [\"context\", \"guard\", \"workflow\"]\n",
        &[("api.toml", PROJECT_PACK)],
    );

    // The session starts: constitution and working rules, once.
    let r = hook(&root, SessionStart, &json!({ "source": "startup", "model": "claude-opus-4-7" }));
    assert!(r.context().contains("[hookpack: context/constitution]"), "{}", r.context());
    assert!(r.context().contains("Working rules"));
    assert_eq!(r.json["hookSpecificOutput"]["hookEventName"], "SessionStart");

    // `@dev` activates the agent; its rules apply at once; the constitution is not repeated.
    let r = hook(&root, UserPromptSubmit, &prompt("@dev add a login endpoint"));
    assert!(r.context().contains("Active agent @dev"), "{}", r.context());
    assert!(!r.context().contains("Constitution"));
    let s = state(&root, "session-1");
    assert_eq!((s.prompt_count, s.agent.as_deref()), (1, Some("dev")));

    // The agent stays active; a keyword brings the project's context.
    let r = hook(&root, UserPromptSubmit, &prompt("it needs a migration too"));
    assert!(r.context().contains("Active agent @dev"));
    assert!(r.context().contains("[hookpack: api/database]"));

    // Guards: deny, ask, and a look-alike allowed.
    let r = hook(&root, PreToolUse, &bash("rm -rf /"));
    let out = &r.json["hookSpecificOutput"];
    assert_eq!(out["permissionDecision"], "deny");
    assert!(out["permissionDecisionReason"].as_str().unwrap().starts_with("[guard/rm-root]"));
    let r = hook(&root, PreToolUse, &bash("git push --force origin feature-x"));
    assert_eq!(r.json["hookSpecificOutput"]["permissionDecision"], "ask");
    let r = hook(&root, PreToolUse, &bash("rm -rf ./build"));
    assert_eq!(r.json, Value::Null, "nothing to say: silence");

    // A path rule's context where the model reads it.
    let file = root.join("src/api/users.ts");
    let edit = json!({ "tool_name": "Edit", "tool_input": {
        "file_path": file, "old_string": "a", "new_string": "b" } });
    let r = hook(&root, PreToolUse, &edit);
    assert!(r.context().contains("[hookpack: api/handlers]"));

    // The edit lands: tests are due; the first Stop is blocked, the next goes through.
    let mut done = edit.clone();
    done["tool_response"] = json!({ "success": true });
    hook(&root, PostToolUse, &done);
    assert!(state(&root, "session-1").flags.contains("edited-untested"));
    let r =
        hook(&root, Stop, &json!({ "stop_hook_active": false, "last_assistant_message": "Done." }));
    assert_eq!(r.json["decision"], "block");
    assert!(r.json["reason"].as_str().unwrap().contains("[workflow/untested-stop]"));
    let r = hook(&root, Stop, &json!({ "stop_hook_active": true, "last_assistant_message": "ok" }));
    assert_eq!(r.json, Value::Null);

    // The window fills: 164,000 of 200,000 tokens is 18% remaining, critical.
    assistant_turn(&root, "a1", 164_000);
    let r = hook(&root, UserPromptSubmit, &prompt("keep going"));
    assert!(r.context().contains("[hookpack: context/handoff]"), "{}", r.context());
    assert_eq!(
        Store::open_read_only(&root.join(".claude/hookpack"))
            .unwrap()
            .last_bracket("session-1")
            .unwrap()
            .as_deref(),
        Some("critical")
    );

    // Compaction: counted once, by PreCompact; SessionStart `compact` re-injects.
    hook(&root, PreCompact, &json!({ "trigger": "auto", "custom_instructions": "" }));
    append(
        &root,
        &json!({ "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted" }),
    );
    let r = hook(&root, SessionStart, &json!({ "source": "compact" }));
    assert!(r.context().contains("[hookpack: context/constitution]"), "{}", r.context());
    assert!(r.context().contains("was compacted"));
    let s = state(&root, "session-1");
    assert_eq!((s.compactions, s.prompts_since_compaction, s.prompt_count), (1, 0, 3));

    // After the compaction the transcript tells nothing: the bracket is estimated from one
    // prompt, fresh; the agent is still active.
    let r = hook(&root, UserPromptSubmit, &prompt("where were we"));
    assert!(!r.context().contains("handoff"), "{}", r.context());
    assert!(r.context().contains("Active agent @dev"));
    assert!(!r.context().contains("Constitution"), "given once since the compaction");

    // Tests run: nothing is due any more, and Stop goes through.
    hook(
        &root,
        PostToolUse,
        &json!({ "tool_name": "Bash",
        "tool_input": { "command": "npm test" }, "tool_response": { "stdout": "ok" } }),
    );
    assert!(!state(&root, "session-1").flags.contains("edited-untested"));
    let r =
        hook(&root, Stop, &json!({ "stop_hook_active": false, "last_assistant_message": "Done." }));
    assert_eq!(r.json, Value::Null);

    let s = state(&root, "session-1");
    assert_eq!(s.prompt_count, 4);
    assert_eq!(s.agent.as_deref(), Some("dev"));
    // Another session of the same project starts from nothing.
    assert_eq!(state(&root, "session-2"), SessionState::default());
}

#[test]
fn concurrent_prompts_are_all_counted() {
    let root = project(
        "concurrent-prompts",
        "",
        &[(
            "count.toml",
            r#"
[pack]
name = "count"

[[rule]]
id = "tenth"
on = "UserPromptSubmit"
every = 10
context = "Every tenth prompt."
"#,
        )],
    );
    let children: Vec<Child> = (0..200)
        .map(|i| start(&root, EventKind::UserPromptSubmit, &prompt(&format!("prompt {i}"))))
        .collect();
    let replies: Vec<Reply> = children.into_iter().map(finish).collect();
    for reply in &replies {
        assert_eq!(reply.code, 0);
        assert_eq!(reply.stderr, "", "no hook failed or waited out the lock");
    }
    assert_eq!(state(&root, "session-1").prompt_count, 200);
    // Each prompt number was seen exactly once: every tenth fired 20 times.
    let tenth = replies.iter().filter(|r| r.context().contains("Every tenth prompt")).count();
    assert_eq!(tenth, 20);
}

#[test]
fn flags_set_by_concurrent_hooks_are_all_kept() {
    let mut pack = String::from("[pack]\nname = \"marks\"\n");
    for i in 0..40 {
        let _ = write!(
            pack,
            "\n[[rule]]\nid = \"mark-{i}\"\non = \"PostToolUse\"\ntool = \"Bash\"\n\
             keywords = [\"mark{i}\"]\nset = {{ flags = [\"f{i}\"] }}\n"
        );
    }
    let root = project("concurrent-flags", "", &[("marks.toml", &pack)]);
    // 40 flags, each set by 3 hooks, all at once.
    let children: Vec<Child> = (0..120)
        .map(|i| {
            let mut payload = bash(&format!("echo mark{}", i % 40));
            payload["tool_response"] = json!({ "stdout": "" });
            start(&root, EventKind::PostToolUse, &payload)
        })
        .collect();
    for reply in children.into_iter().map(finish) {
        assert_eq!((reply.code, reply.stderr.as_str()), (0, ""));
    }
    let flags = state(&root, "session-1").flags;
    assert_eq!(flags.len(), 40, "{flags:?}");
}

#[test]
fn the_state_is_opened_only_when_a_rule_needs_it() {
    let root = project("stateless", "builtin = [\"guard\", \"workflow\"]\n", &[]);
    let database = root.join(".claude/hookpack/state/hookpack.db");
    hook(&root, EventKind::PreToolUse, &bash("rm -rf /"));
    hook(&root, EventKind::UserPromptSubmit, &prompt("hello"));
    hook(&root, EventKind::SessionStart, &json!({ "source": "startup" }));
    // The workflow pack's PostToolUse rules use the state, but only for edits and test runs.
    let read = json!({ "tool_name": "Read", "tool_input": { "file_path": root.join("src/a.rs") },
                       "tool_response": { "content": "" } });
    hook(&root, EventKind::PostToolUse, &read);
    assert!(!database.exists(), "no rule needed the state");
    let mut edit = read.clone();
    edit["tool_name"] = json!("Edit");
    edit["tool_input"] =
        json!({ "file_path": root.join("src/a.rs"), "old_string": "a", "new_string": "b" });
    hook(&root, EventKind::PostToolUse, &edit);
    assert!(state(&root, "session-1").flags.contains("edited-untested"));
}

#[test]
fn a_project_replaces_a_builtin_rule_by_its_full_id() {
    let root = project(
        "override",
        "builtin = [\"context\"]\ndisable = [\"context/global\"]\n",
        &[(
            "context.toml",
            r#"
[pack]
name = "context"

[[rule]]
id = "constitution"
on = ["SessionStart", "UserPromptSubmit"]
layer = "constitution"
pinned = true
once = "compaction"
context = "Our constitution: every change ships with a migration note."
"#,
        )],
    );
    let r = hook(&root, EventKind::SessionStart, &json!({ "source": "startup" }));
    assert_eq!(
        r.context(),
        "[hookpack: context/constitution]\nOur constitution: every change ships with a migration note."
    );
}

fn memories(root: &Path) -> Vec<hook_engine::memory::Memory> {
    let store = Store::open_read_only(&root.join(".claude/hookpack")).unwrap();
    let mut all = store.memories(None, 100).unwrap();
    all.reverse();
    all
}

fn message(reply: &Reply) -> &str {
    reply.json["systemMessage"].as_str().unwrap_or("")
}

fn read(path: &str) -> Value {
    json!({ "tool_name": "Read", "tool_input": { "file_path": path }, "tool_response": {} })
}

/// CONTRACT §4.5 through the real binaries: markers captured with their private parts
/// removed, an unknown namespace said, memories recalled by a file's terms in a later session
/// (each once between compactions), and the handoff written at `PreCompact` given after it.
#[test]
fn memories_are_kept_recalled_and_handed_over() {
    let root = project("memory", "builtin = [\"context\", \"memory\"]\n", &[]);
    let jwt = root.join("src/auth/jwt.rs");
    let jwt = jwt.to_str().unwrap();

    let reply = hook(
        &root,
        EventKind::UserPromptSubmit,
        &prompt("@dev [decision] sign JWT tokens with RS256 <private>kid-42 in vault</private>"),
    );
    assert!(
        message(&reply).contains("hookpack remembered (decisions): sign JWT tokens with RS256"),
        "{}",
        reply.json
    );
    let kept = memories(&root);
    assert_eq!(kept.len(), 1);
    assert_eq!(
        (kept[0].namespace.as_str(), kept[0].text.as_str()),
        ("decisions", "sign JWT tokens with RS256")
    );
    let db = std::fs::read(root.join(".claude/hookpack/state/hookpack.db")).unwrap();
    let wal =
        std::fs::read(root.join(".claude/hookpack/state/hookpack.db-wal")).unwrap_or_default();
    let holds =
        |needle: &[u8]| [&db, &wal].iter().any(|b| b.windows(needle.len()).any(|w| w == needle));
    assert!(holds(b"RS256"), "the memory is in the files read");
    assert!(!holds(b"kid-42"), "the private part reached the database");

    let reply =
        hook(&root, EventKind::UserPromptSubmit, &prompt("@memory:ideas a cache for pricing"));
    assert!(
        message(&reply).contains("unknown memory namespace `ideas`, kept in `learnings`"),
        "{}",
        reply.json
    );
    // The same marker twice keeps one memory.
    hook(&root, EventKind::UserPromptSubmit, &prompt("@memory:ideas a cache for pricing"));
    assert_eq!(memories(&root).len(), 2);

    // Another session reading the file gets the decision, once between compactions.
    let other = |mut payload: Value| {
        payload["session_id"] = json!("session-2");
        payload
    };
    let reply = hook(&root, EventKind::PostToolUse, &other(read(jwt)));
    assert!(reply.context().contains("[hookpack: memory/file-memories]"), "{}", reply.json);
    assert!(reply.context().contains("] sign JWT tokens with RS256"), "{}", reply.context());
    assert!(!reply.context().contains("pricing"));
    let reply = hook(&root, EventKind::PostToolUse, &other(read(jwt)));
    assert_eq!(reply.context(), "", "given once until the next compaction");
    let reply = hook(
        &root,
        EventKind::PostToolUse,
        &other(read(root.join("src/billing.rs").to_str().unwrap())),
    );
    assert_eq!(reply.context(), "", "nothing bears on billing");

    // Compaction of the first session: the handoff names the agent, its rules and what was
    // captured; it is given once.
    hook(&root, EventKind::PreCompact, &json!({ "trigger": "auto", "custom_instructions": "" }));
    let reply = hook(&root, EventKind::SessionStart, &json!({ "source": "compact" }));
    let context = reply.context();
    assert!(context.contains("[hookpack: memory/handoff]"), "{context}");
    assert!(
        context.contains("Handoff from before the compaction (hookpack, prompt 3)"),
        "{context}"
    );
    assert!(context.contains("agent `dev`"), "{context}");
    assert!(context.contains("context/agent-dev"), "{context}");
    assert!(context.contains("[decisions #1] sign JWT tokens with RS256"), "{context}");
    assert!(context.contains("[learnings #2] a cache for pricing"), "{context}");
    let reply = hook(&root, EventKind::SessionStart, &json!({ "source": "startup" }));
    assert!(!reply.context().contains("Handoff"), "{}", reply.context());
}

/// A prompt without markers in a project that only captures markers leaves no database behind.
#[test]
fn a_prompt_without_markers_opens_no_database() {
    let pack = "[pack]\nname = \"notes\"\n\n[[rule]]\nid = \"marked\"\non = \"UserPromptSubmit\"\ncapture = { markers = true }\n";
    let root = project("memory-closed", "", &[("notes.toml", pack)]);
    hook(&root, EventKind::UserPromptSubmit, &prompt("refactor items[decision] handling"));
    assert!(!root.join(".claude/hookpack/state/hookpack.db").exists());
    let reply =
        hook(&root, EventKind::UserPromptSubmit, &prompt("[remember] run clippy with -D warnings"));
    assert!(message(&reply).contains("hookpack remembered (learnings)"), "{}", reply.json);
    assert_eq!(memories(&root).len(), 1);
}

/// A memory is given once between compactions, and again after one, even where no rule but
/// the recall counts compactions.
#[test]
fn a_memory_is_recalled_again_after_a_compaction() {
    let root = project(
        "memory-compaction",
        "builtin = [\"memory\"]\ndisable = [\"memory/handoff\"]\n",
        &[],
    );
    hook(&root, EventKind::UserPromptSubmit, &prompt("[decision] sign JWT tokens with RS256"));
    let jwt = root.join("src/auth/jwt.rs");
    let read_jwt = || hook(&root, EventKind::PostToolUse, &read(jwt.to_str().unwrap()));
    assert!(read_jwt().context().contains("RS256"));
    assert_eq!(read_jwt().context(), "");
    hook(&root, EventKind::PreCompact, &json!({ "trigger": "auto", "custom_instructions": "" }));
    hook(&root, EventKind::SessionStart, &json!({ "source": "compact" }));
    assert!(read_jwt().context().contains("RS256"), "given again after the compaction");
}
