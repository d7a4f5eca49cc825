//! Whole sessions through the real binaries: a project using the builtin packs and one of its
//! own, driven event by event from `SessionStart` to `Stop`, with the state checked in the database.
//! Long because each test is a whole session, written out event by event.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use hook_engine::SessionState;
use hook_model::EventKind;
use hook_runtime::state::Store;
use hook_runtime::state::sessions;
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
    let rules = loaded.rules();
    let compiled = compile(&rules, &loaded.config.settings(), &loaded.sources).unwrap();
    std::fs::create_dir_all(dir.join("compiled")).unwrap();
    let list = rules_compiler::fail_closed_list(&rules);
    let compiled_dir = hook_runtime::confined::ConfinedDir::trusting(&dir.join("compiled"));
    hook_runtime::write_compiled(&compiled_dir, "rules.hpk", &compiled.bytes, &list).unwrap();
    root
}

/// Starts the hook of `kind` on `payload` (common fields filled in) in `root`.
fn start(root: &Path, kind: EventKind, payload: &Value) -> Child {
    let payload = crate::full_payload(kind, root, "session-1", payload);
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
    record(root, session).map(|r| r.state).unwrap_or_default()
}

fn record(root: &Path, session: &str) -> Option<sessions::Record> {
    sessions::peek(&root.join(".claude/hookpack"), session)
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
                "id": format!("msg_{id}"), "model": "claude-sonnet-4-5", "role": "assistant",
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
    assert_eq!(record(&root, "session-1").unwrap().bracket, Some(hook_engine::Bracket::Critical));

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

/// 200 hooks of four events on one session at once: prompts counted, memories stored, flags
/// set and `once` rules given exactly as if they had run one after the other.
#[test]
fn concurrent_hooks_of_mixed_events_keep_every_update() {
    let mut pack = String::from("[pack]\nname = \"mixed\"\n");
    for i in 0..25 {
        let _ = write!(
            pack,
            "\n[[rule]]\nid = \"mark-{i}\"\non = \"PostToolUse\"\ntool = \"Bash\"\n\
             keywords = [\"mark{i}\"]\nset = {{ flags = [\"f{i}\"] }}\n\
             \n[[rule]]\nid = \"once-{i}\"\non = \"PreToolUse\"\ntool = \"Bash\"\n\
             keywords = [\"once{i}\"]\nonce = \"session\"\ncontext = \"Once {i}.\"\n"
        );
    }
    let root = project("concurrent-mixed", "builtin = [\"memory\"]\n", &[("mixed.toml", &pack)]);
    let children: Vec<(EventKind, Child)> = (0..200)
        .map(|i| {
            let (kind, payload) = match i % 4 {
                0 => (EventKind::UserPromptSubmit, prompt(&format!("prompt {i}"))),
                1 => (EventKind::UserPromptSubmit, prompt(&format!("[decision] fact number {i}"))),
                2 => {
                    let mut payload = bash(&format!("echo mark{}", i % 25));
                    payload["tool_response"] = json!({ "stdout": "" });
                    (EventKind::PostToolUse, payload)
                }
                _ => (EventKind::PreToolUse, bash(&format!("echo once{}", i % 25))),
            };
            (kind, start(&root, kind, &payload))
        })
        .collect();
    let mut once_given = 0;
    for (kind, child) in children {
        let reply = finish(child);
        assert_eq!((reply.code, reply.stderr.as_str()), (0, ""), "{kind}");
        once_given += usize::from(reply.context().contains("Once "));
    }
    let state = state(&root, "session-1");
    assert_eq!(state.prompt_count, 100);
    assert_eq!(state.flags.len(), 25, "{:?}", state.flags);
    assert_eq!(once_given, 25, "each once rule given once");
    let ledger = state.injected.keys().filter(|k| k.starts_with("mixed/once-")).count();
    assert_eq!(ledger, 25, "{:?}", state.injected);
    assert_eq!(memories(&root).len(), 50);
    index_agrees(&root);
}

/// The recall index, when it says it holds the database's state, recalls what the database
/// does.
fn index_agrees(root: &Path) {
    use hook_engine::memory::Recall;
    use hook_engine::rule::RecallFrom;
    use hook_runtime::state::{Indexed, recall_indexed};
    let installation = hook_runtime::Installation::User { dir: root.join(".claude/hookpack") };
    let store = Store::open_read_only(&root.join(".claude/hookpack")).unwrap();
    for terms in [&["fact"][..], &["number", "101"], &["105"], &["fact", "number", "133", "zzz"]] {
        let recall = Recall {
            from: RecallFrom::Prompt,
            max: 5,
            terms: terms.iter().map(|t| (*t).to_owned()).collect(),
        };
        if let Indexed::Found(found) = recall_indexed(&installation, &recall) {
            assert_eq!(found, store.search(&recall).unwrap(), "{terms:?}");
        }
    }
}

/// 300 prompts of one session, killed at random points (SIGKILL): the record stays readable and
/// loses nothing but the killed hooks' own updates — every hook that answered is counted.
#[test]
fn hooks_killed_at_random_lose_only_their_own_updates() {
    let root = counting_project("killed-writers");
    // A small, fixed-seed generator: the points differ per hook, the run is repeatable.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut answered = 0u64;
    for round in 0..10 {
        // Each hook with its own moment: half are killed that long after they start, wherever
        // they are then (starting, waiting for the lock, writing); the others run to the end.
        let moments: Vec<u64> = (0..30).map(|_| next() % 8_000).collect();
        let outcomes: Vec<Option<Reply>> = std::thread::scope(|scope| {
            let hooks: Vec<_> = moments
                .iter()
                .enumerate()
                .map(|(i, &after_us)| {
                    let root = &root;
                    scope.spawn(move || {
                        let payload = prompt(&format!("round {round} prompt {i}"));
                        let mut child = start(root, EventKind::UserPromptSubmit, &payload);
                        if after_us % 2 == 1 {
                            return Some(finish(child));
                        }
                        std::thread::sleep(std::time::Duration::from_micros(after_us));
                        if child.try_wait().unwrap().is_some() {
                            return Some(finish(child));
                        }
                        let _ = child.kill();
                        let _ = child.wait();
                        None
                    })
                })
                .collect();
            hooks.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let killed = outcomes.iter().filter(|o| o.is_none()).count();
        for reply in outcomes.into_iter().flatten() {
            assert_eq!((reply.code, reply.stderr.as_str()), (0, ""));
            answered += 1;
        }
        let record = record(&root, "session-1").expect("the record stays readable");
        assert!(record.notices.is_empty(), "round {round}: {:?}", record.notices);
        let counted = record.state.prompt_count;
        assert!(counted >= answered, "round {round}: {counted} counted, {answered} answered");
        assert!(counted <= (round + 1) * 30, "round {round}: {counted}, {killed} killed");
    }
}

#[test]
fn the_state_is_opened_only_when_a_rule_needs_it() {
    let root = project("stateless", "builtin = [\"guard\", \"workflow\"]\n", &[]);
    let records = root.join(".claude/hookpack/state/sessions");
    hook(&root, EventKind::PreToolUse, &bash("rm -rf /"));
    hook(&root, EventKind::UserPromptSubmit, &prompt("hello"));
    hook(&root, EventKind::SessionStart, &json!({ "source": "startup" }));
    // The workflow pack's PostToolUse rules use the state, but only for edits and test runs.
    let read = json!({ "tool_name": "Read", "tool_input": { "file_path": root.join("src/a.rs") },
                       "tool_response": { "content": "" } });
    hook(&root, EventKind::PostToolUse, &read);
    assert!(!records.exists(), "no rule needed the state");
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
    let Ok(store) = Store::open_read_only(&root.join(".claude/hookpack")) else {
        assert!(!state_dir(root).join("hookpack.db").exists());
        return Vec::new();
    };
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

/// reference §2.5 through the real binaries: markers captured with their private parts
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
    let index = std::fs::read(root.join(".claude/hookpack/state/memories.idx")).unwrap();
    let holds = |file: &[u8], needle: &[u8]| file.windows(needle.len()).any(|w| w == needle);
    assert!(holds(&db, b"RS256") || holds(&wal, b"RS256"), "the memory is in the database");
    assert!(holds(&index, b"RS256"), "and in the recall index");
    for file in [&db, &wal, &index] {
        assert!(!holds(file, b"kid-42"), "the private part reached the state folder");
    }

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

/// Recall reads the index while it holds the database's state, and the database when it does
/// not (a failure logged since, the index gone, a damaged one): the same memories either way,
/// and the index written anew by the recall that read the database.
#[test]
fn recall_reads_the_index_or_the_database_alike() {
    let root = project("memory-index", "builtin = [\"memory\"]\n", &[]);
    for text in ["sign JWT tokens with RS256", "rotate JWT keys monthly", "billing uses Stripe"] {
        hook(&root, EventKind::UserPromptSubmit, &prompt(&format!("[decision] {text}")));
    }
    let index = state_dir(&root).join("memories.idx");
    let jwt = root.join("src/auth/jwt.rs");
    let mut session = 0;
    let mut recall = || {
        session += 1;
        let mut payload = read(jwt.to_str().unwrap());
        payload["session_id"] = json!(format!("reader-{session}"));
        hook(&root, EventKind::PostToolUse, &payload).context().to_owned()
    };
    let from_index = recall();
    assert!(from_index.contains("sign JWT tokens with RS256"), "{from_index}");
    assert!(from_index.contains("rotate JWT keys monthly"), "{from_index}");
    assert!(!from_index.contains("Stripe"), "{from_index}");
    let written = std::fs::read(&index).unwrap();

    std::fs::remove_file(&index).unwrap();
    assert_eq!(recall(), from_index, "read from the database");
    assert_eq!(std::fs::read(&index).unwrap(), written, "and the index written again");

    std::fs::write(&index, b"hkri garbage").unwrap();
    assert_eq!(recall(), from_index, "a damaged index is not read");
    assert_eq!(std::fs::read(&index).unwrap(), written);
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
    // The ledger forgets the memories given before the compaction: they may be given again.
    let ledger = |root: &Path| state(root, "session-1").injected;
    assert!(!ledger(&root).keys().any(|k| k.starts_with("memory#")), "{:?}", ledger(&root));
    hook(&root, EventKind::SessionStart, &json!({ "source": "compact" }));
    assert!(read_jwt().context().contains("RS256"), "given again after the compaction");
    assert_eq!(ledger(&root).get("memory#1"), Some(&1), "{:?}", ledger(&root));
}

// The state store against a hostile repository, a broken database and a stuck hook.

/// Counts prompts (every tenth gets a note) and reads the bracket on every prompt.
const COUNTING_PACK: &str = r#"
[pack]
name = "count"

[[rule]]
id = "tenth"
on = "UserPromptSubmit"
every = 10
context = "Every tenth prompt."

[[rule]]
id = "nearly-full"
on = "UserPromptSubmit"
bracket = "critical"
context = "The window is nearly full."
"#;

fn counting_project(name: &str) -> PathBuf {
    project(name, "", &[("count.toml", COUNTING_PACK)])
}

/// The counting pack with the builtin memory pack: every prompt recalls from the memory
/// database when there is one, and a marked prompt stores a memory.
fn remembering_project(name: &str) -> PathBuf {
    project(name, "builtin = [\"memory\"]\n", &[("count.toml", COUNTING_PACK)])
}

fn state_dir(root: &Path) -> PathBuf {
    root.join(".claude/hookpack/state")
}

/// The entries of the state folder whose name starts with `hookpack.db.` (set-aside copies).
fn set_aside(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(state_dir(root))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("hookpack.db."))
        .collect();
    names.sort();
    names
}

fn failures(root: &Path) -> Vec<String> {
    let store = Store::open_read_only(&root.join(".claude/hookpack")).unwrap();
    store.failures(50).unwrap().into_iter().map(|(_, _, _, message)| message).collect()
}

/// Waits for every hook, at most `limit` from its start; kills the ones still running then.
/// Each reply (`None` when it was killed) with how long the hook ran.
fn finish_all(
    children: Vec<(Child, std::time::Instant)>,
    limit: std::time::Duration,
) -> Vec<(Option<Reply>, std::time::Duration)> {
    let mut pending: Vec<Option<(Child, std::time::Instant)>> =
        children.into_iter().map(Some).collect();
    let mut done: Vec<Option<(Option<Reply>, std::time::Duration)>> =
        (0..pending.len()).map(|_| None).collect();
    while pending.iter().any(Option::is_some) {
        for (i, slot) in pending.iter_mut().enumerate() {
            let Some((child, started)) = slot else { continue };
            let elapsed = started.elapsed();
            if child.try_wait().unwrap().is_some() {
                let (child, _) = slot.take().unwrap();
                done[i] = Some((Some(finish(child)), elapsed));
            } else if elapsed > limit {
                let (mut child, _) = slot.take().unwrap();
                let _ = child.kill();
                let _ = child.wait();
                done[i] = Some((None, elapsed));
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    done.into_iter().map(Option::unwrap).collect()
}

/// Where the memory database should be, a 0-byte file, garbage, a folder, or a link to another
/// project's database: each is set aside by the first hook that recalls (the link itself,
/// never what it points to), a new database started, the user told once where the old one
/// went, and the failure recorded; the session's own state is not touched.
fn a_broken_database_is_set_aside(case: &str) {
    let other = remembering_project(&format!("broken-db-{case}-other"));
    hook(&other, EventKind::UserPromptSubmit, &prompt("[decision] the other project's choice"));
    let other_db = state_dir(&other).join("hookpack.db");
    let other_bytes = std::fs::read(&other_db).unwrap();

    let root = remembering_project(&format!("broken-db-{case}"));
    let folder = state_dir(&root);
    std::fs::create_dir_all(&folder).unwrap();
    let db = folder.join("hookpack.db");
    match case {
        "empty" => std::fs::write(&db, b"").unwrap(),
        "garbage" => std::fs::write(&db, b"not a database, but long enough to be one").unwrap(),
        "folder" => std::fs::create_dir(&db).unwrap(),
        _ => std::os::unix::fs::symlink(&other_db, &db).unwrap(),
    }
    let first = finish(start(&root, EventKind::UserPromptSubmit, &prompt("one")));
    assert!(std::fs::read(&other_db).unwrap() == other_bytes, "the link's target was written");
    assert_eq!(state(&other, "session-1").prompt_count, 1);
    assert_eq!((first.code, first.stderr.as_str()), (0, ""), "{case}");
    let aside = set_aside(&root);
    assert_eq!(aside.len(), 1, "{case}: {aside:?}");
    let told = message(&first);
    assert!(told.contains("set aside") && told.contains(&aside[0]), "{case}: {}", first.json);
    let second = hook(&root, EventKind::UserPromptSubmit, &prompt("two"));
    assert_eq!(message(&second), "", "{case}: told once");
    assert!(std::fs::symlink_metadata(&db).unwrap().is_file(), "{case}");
    assert_eq!(state(&root, "session-1").prompt_count, 2, "{case}");
    let recorded = failures(&root);
    assert!(recorded.iter().any(|m| m.contains(&aside[0])), "{case}: {recorded:?}");
}

#[test]
fn a_zero_byte_database_is_set_aside() {
    a_broken_database_is_set_aside("empty");
}

#[test]
fn a_garbage_database_is_set_aside() {
    a_broken_database_is_set_aside("garbage");
}

#[test]
fn a_folder_for_a_database_is_set_aside() {
    a_broken_database_is_set_aside("folder");
}

#[test]
fn a_linked_database_is_set_aside_not_followed() {
    a_broken_database_is_set_aside("link");
}

/// Damage the opening does not see (the schema reads, a table's pages do not) is found by the
/// first hook that reads the table: it fails open, sets the database aside, and the next hook
/// starts afresh and tells the user, instead of every hook failing on it forever. (Recall
/// reads the index while it holds the database's state, and does not open the database: here
/// the index is gone, as after a failure logged by another hook.)
#[test]
fn a_database_damaged_inside_a_table_is_set_aside_by_the_hook_that_finds_it() {
    let root = remembering_project("damaged-table");
    hook(&root, EventKind::UserPromptSubmit, &prompt("[decision] sign tokens with RS256"));
    std::fs::remove_file(state_dir(&root).join("memories.idx")).unwrap();
    let db = state_dir(&root).join("hookpack.db");
    assert!(!state_dir(&root).join("hookpack.db-wal").exists(), "checkpointed on close");
    let mut bytes = std::fs::read(&db).unwrap();
    let page = usize::from(u16::from_be_bytes([bytes[16], bytes[17]]));
    assert!(bytes.len() > page, "more than the schema's page");
    bytes[page..].fill(0xff);
    std::fs::write(&db, &bytes).unwrap();

    let finding = finish(start(&root, EventKind::UserPromptSubmit, &prompt("two")));
    assert_eq!(finding.code, 0);
    assert!(finding.stderr.contains("malformed"), "{}", finding.stderr);
    let aside = set_aside(&root);
    assert_eq!(aside.len(), 1, "{aside:?}: {}", finding.stderr);
    assert!(finding.stderr.contains(&aside[0]), "{}", finding.stderr);

    let next = hook(&root, EventKind::UserPromptSubmit, &prompt("three"));
    assert!(message(&next).contains(&aside[0]), "{}", next.json);
    assert_eq!(state(&root, "session-1").prompt_count, 3, "the session's own state is kept");
    let again = hook(&root, EventKind::UserPromptSubmit, &prompt("four"));
    assert_eq!(message(&again), "", "told once");
    assert!(memories(&root).is_empty(), "the memories start afresh");
}

/// A database deleted without its `-wal` (as `rm hookpack.db` does to a database of before
/// version 4, which ran WAL): the new database must not replay the orphan log, which would
/// bring the deleted memories back.
#[test]
fn an_orphan_wal_does_not_bring_deleted_memories_back() {
    let root = project("orphan-wal", "builtin = [\"memory\"]\n", &[]);
    let folder = state_dir(&root);
    let db = folder.join("hookpack.db");
    hook(&root, EventKind::UserPromptSubmit, &prompt("[decision] sign JWT tokens with RS256"));
    // The database as an older hookpack ran it, in WAL; a reader kept open keeps the log when
    // the writer's connection closes.
    let writer = rusqlite::Connection::open(&db).unwrap();
    writer.pragma_update(None, "journal_mode", "WAL").unwrap();
    let reader = rusqlite::Connection::open(&db).unwrap();
    reader.query_row("SELECT count(*) FROM memories", [], |r| r.get::<_, i64>(0)).unwrap();
    writer
        .execute(
            "INSERT INTO memories (namespace, text, confidence, created, session, rule)
             VALUES ('decisions', 'rotate the keys monthly', 1.0, 0, 's', 'r')",
            [],
        )
        .unwrap();
    drop(writer);
    let wal = std::fs::read(folder.join("hookpack.db-wal")).unwrap();
    assert!(wal.windows(11).any(|w| w == b"rotate the "), "the log holds the memory");
    drop(reader);
    assert_eq!(memories(&root).len(), 2);

    std::fs::remove_file(&db).unwrap();
    let _ = std::fs::remove_file(folder.join("hookpack.db-shm"));
    std::fs::write(folder.join("hookpack.db-wal"), &wal).unwrap();
    hook(&root, EventKind::UserPromptSubmit, &prompt("[decision] a new database"));
    let back: Vec<String> = memories(&root).into_iter().map(|m| m.text).collect();
    assert_eq!(back, ["a new database"], "deleted memories came back");
    assert_eq!(state(&root, "session-1").prompt_count, 2);
}

/// Links planted as the database's companions (`-wal`, `-shm`, `-journal`) are removed, not
/// written through.
#[test]
fn companion_links_are_not_written_through() {
    let root = remembering_project("companion-links");
    hook(&root, EventKind::UserPromptSubmit, &prompt("[decision] sign tokens with RS256"));
    let victims = root.join("victims");
    std::fs::create_dir_all(&victims).unwrap();
    for suffix in ["-wal", "-shm", "-journal"] {
        let victim = victims.join(suffix);
        std::fs::write(&victim, b"precious").unwrap();
        let link = state_dir(&root).join(format!("hookpack.db{suffix}"));
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&victim, link).unwrap();
    }
    hook(&root, EventKind::UserPromptSubmit, &prompt("[decision] rotate the keys monthly"));
    for suffix in ["-wal", "-shm", "-journal"] {
        assert_eq!(std::fs::read(victims.join(suffix)).unwrap(), b"precious", "{suffix}");
    }
    assert_eq!(memories(&root).len(), 2);
    assert_eq!(state(&root, "session-1").prompt_count, 2);
}

/// A symlinked `state/` or `.claude/hookpack` is refused: the hooks still answer from the rules,
/// write nothing outside the project, and say so on stderr without a notice on every hook.
#[test]
fn linked_state_folders_are_refused() {
    for linked in ["state", "hookpack"] {
        let root = counting_project(&format!("linked-{linked}"));
        let outside = root.parent().unwrap().join(format!("linked-{linked}-outside"));
        let _ = std::fs::remove_dir_all(&outside);
        std::fs::create_dir_all(&outside).unwrap();
        let dir = root.join(".claude/hookpack");
        if linked == "state" {
            std::os::unix::fs::symlink(&outside, dir.join("state")).unwrap();
        } else {
            std::fs::rename(&dir, outside.join("hookpack")).unwrap();
            std::os::unix::fs::symlink(outside.join("hookpack"), &dir).unwrap();
        }
        let replies: Vec<Reply> = (0..12)
            .map(|i| finish(start(&root, EventKind::UserPromptSubmit, &prompt(&format!("p{i}")))))
            .collect();
        let written: Vec<_> = walk(&outside)
            .into_iter()
            .filter(|p| {
                let name = p.file_name().unwrap().to_string_lossy();
                name.starts_with("hookpack.db") || name == "notices" || name == "sessions"
            })
            .collect();
        assert!(written.is_empty(), "{linked}: written outside the project: {written:?}");
        for reply in replies {
            assert_eq!(reply.code, 0);
            assert!(reply.stderr.contains("symbolic link"), "{linked}: {}", reply.stderr);
            assert_eq!(message(&reply), "", "{linked}: no notice on every hook");
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if std::fs::symlink_metadata(&path).unwrap().is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}

/// 200 prompts of one session at once, one of them with a FIFO nobody writes for a transcript:
/// that one does not hang (the FIFO is refused) and stalls nobody, and every prompt is counted.
#[test]
fn a_fifo_transcript_stalls_no_hook() {
    let root = counting_project("fifo-transcript");
    let fifo = root.join("transcript.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let children: Vec<(Child, std::time::Instant)> = (0..200)
        .map(|i| {
            let mut payload = prompt(&format!("prompt {i}"));
            if i == 20 {
                payload["transcript_path"] = json!(fifo);
            }
            (start(&root, EventKind::UserPromptSubmit, &payload), std::time::Instant::now())
        })
        .collect();
    let done = finish_all(children, std::time::Duration::from_secs(30));
    for (i, (reply, took)) in done.iter().enumerate() {
        let reply = reply.as_ref().unwrap_or_else(|| panic!("hook {i} hung for {took:?}"));
        assert_eq!((reply.code, reply.stderr.as_str()), (0, ""), "hook {i}");
        // Generous: the bound that matters is "no hang"; a loaded machine is slow.
        assert!(*took < std::time::Duration::from_secs(10), "hook {i} took {took:?}");
    }
    assert_eq!(state(&root, "session-1").prompt_count, 200);
}

/// A hook that holds the session's lock and does not let go (simulated by this test holding it):
/// the others fail open after the bounded wait, each saying on stderr that the state was busy
/// and not saved, without a second wait to record the failure; nothing is lost silently.
#[test]
fn a_held_lock_makes_others_fail_open_quickly() {
    let root = counting_project("held-lock");
    hook(&root, EventKind::UserPromptSubmit, &prompt("one"));
    let installation = hook_runtime::Installation::Project {
        root: root.clone(),
        dir: root.join(".claude/hookpack"),
    };
    let held = sessions::Sessions::open(&installation).unwrap().lock("session-1").unwrap();
    let children: Vec<(Child, std::time::Instant)> = (0..4)
        .map(|i| {
            let payload = prompt(&format!("blocked {i}"));
            (start(&root, EventKind::UserPromptSubmit, &payload), std::time::Instant::now())
        })
        .collect();
    let done = finish_all(children, std::time::Duration::from_mins(1));
    drop(held);
    for (i, (reply, took)) in done.iter().enumerate() {
        let reply = reply.as_ref().unwrap_or_else(|| panic!("hook {i} hung for {took:?}"));
        assert_eq!(reply.code, 0);
        assert!(reply.stderr.contains("session state busy"), "hook {i}: {}", reply.stderr);
        assert!(reply.stderr.contains("not saved"), "hook {i}: {}", reply.stderr);
        // The bounded wait is 2 s; the old waits were 10 s, then 10 s more to record.
        assert!(*took < std::time::Duration::from_secs(8), "hook {i} took {took:?}");
    }
    hook(&root, EventKind::UserPromptSubmit, &prompt("after"));
    assert_eq!(state(&root, "session-1").prompt_count, 2, "the blocked prompts were not counted");
}
