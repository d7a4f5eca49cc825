//! A hostile repository and a crafted artifact against the real binaries: planted symlinks,
//! artifacts with a valid CRC but lying counts or cyclic automaton links, an artifact rewritten
//! in place while hooks read it. Nothing may leak, be overwritten, abort, hang or be killed.
//! Long because each attack plants its own repository.

use std::io::Write as _;
use std::os::unix::fs::symlink;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use hook_engine::artifact::checksum;
use hook_engine::artifact::format::{HEADER_LEN, SECTION_ENTRY_LEN, Section, header, keywords};
use hook_engine::layout::FAIL_CLOSED_FILE;
use hook_model::EventKind;
use hook_runtime::confined::ConfinedDir;
use rules_compiler::{Layout, compile, load};
use serde_json::{Value, json};

const GUARD: &str = r#"[pack]
name = "guard"

[[rule]]
id = "rm-root"
on = "PreToolUse"
tool = "Bash"
regex = ['\brm\s+-rf\s+/(\s|$)']
decision = "deny"
fail = "closed"
reason = "rm -rf / deletes the whole system."

[[rule]]
id = "db"
on = "UserPromptSubmit"
keywords = ["migration", "postgres", "schema", "sql"]
context = "Migrations live in db/migrations."
"#;

/// A project under the test target dir with `pack` compiled (as `hookpack compile` does:
/// the artifact and the fail-closed list); returns its root.
fn project(name: &str, pack: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostile").join(name);
    let _ = std::fs::remove_dir_all(&root);
    let dir = root.join(".claude/hookpack");
    std::fs::create_dir_all(dir.join("packs")).unwrap();
    std::fs::create_dir_all(dir.join("compiled")).unwrap();
    std::fs::create_dir_all(root.join("outside")).unwrap();
    std::fs::write(dir.join("packs/guard.toml"), pack).unwrap();
    write_artifact(&root, &compiled(&root));
    root
}

fn compiled(root: &Path) -> Vec<u8> {
    let layout = Layout { project: Some(root.to_owned()), user: Some(root.join("user/hookpack")) };
    let loaded = load(&layout, &[]);
    assert!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics.render());
    let rules = loaded.rules();
    let list = rules_compiler::fail_closed_list(&rules);
    std::fs::write(root.join(".claude/hookpack/compiled/fail-closed.txt"), list).unwrap();
    compile(&rules, &loaded.config.settings(), &loaded.sources).unwrap().bytes
}

fn artifact_path(root: &Path) -> PathBuf {
    root.join(".claude/hookpack/compiled/rules.hpk")
}

/// Writes `bytes` as the artifact as `hookpack compile` does (with its stamp, so hooks take it
/// for compiled here) and keeps the fail-closed list.
fn write_artifact(root: &Path, bytes: &[u8]) {
    let dir = ConfinedDir::trusting(&root.join(".claude/hookpack/compiled"));
    let list = std::fs::read_to_string(dir.path().join(FAIL_CLOSED_FILE)).unwrap_or_default();
    hook_runtime::write_compiled(&dir, "rules.hpk", bytes, &list).unwrap();
}

/// Runs the hook of `kind` on `payload` in `root`, killing it after `limit`.
fn run(root: &Path, kind: EventKind, payload: &Value, limit: Duration) -> Output {
    let payload = crate::full_payload(kind, root, "hostile-session", payload);
    run_raw(root, kind, payload.to_string().as_bytes(), limit)
}

/// Runs the hook of `kind` on `stdin` as it is in `root`, killing it after `limit`.
fn run_raw(root: &Path, kind: EventKind, stdin: &[u8], limit: Duration) -> Output {
    let binary = Path::new(env!("CARGO_BIN_EXE_hookpack-stop")).with_file_name(kind.binary_name());
    let mut child = Command::new(binary)
        .env_clear()
        .env("CLAUDE_PROJECT_DIR", root)
        .env("XDG_CONFIG_HOME", root.join("user"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let id = child.id();
    let (done, finished) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let output = child.wait_with_output().unwrap();
        let _ = done.send(());
        output
    });
    if finished.recv_timeout(limit).is_err() {
        let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
        let output = waiter.join().unwrap();
        panic!(
            "{kind} did not answer within {limit:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    waiter.join().unwrap()
}

fn bash(command: &str) -> Value {
    json!({"tool_name": "Bash", "tool_input": {"command": command}})
}

/// The hook's answer, checked to be a clean exit with at most one JSON object and one line.
fn answer(output: &Output) -> Value {
    assert_eq!(output.status.signal(), None, "killed by a signal: {output:?}");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.lines().count() <= 1 && !stderr.contains("backtrace"), "{stderr}");
    let stdout = String::from_utf8(output.stdout.clone()).unwrap();
    if stdout.is_empty() { Value::Null } else { serde_json::from_str(&stdout).unwrap() }
}

fn decision(answer: &Value) -> Option<&str> {
    answer.pointer("/hookSpecificOutput/permissionDecision").and_then(Value::as_str)
}

/// Rewrites the artifact's CRC after a crafted change, as an attacker would.
fn recrc(bytes: &mut [u8]) {
    let crc = checksum(bytes);
    bytes[header::CRC..header::CRC + 4].copy_from_slice(&crc.to_le_bytes());
}

fn section(bytes: &[u8], kind: Section) -> (usize, usize) {
    let entry = HEADER_LEN + (kind as usize - 1) * SECTION_ENTRY_LEN;
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    (word(entry + 4), word(entry + 8))
}

fn put(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

const LIMIT: Duration = Duration::from_secs(20);

#[test]
fn a_planted_stamp_symlink_is_never_written_through() {
    // Large artifacts were once verified once per version and a stamp written beside them
    // with `fs::write`, which follows a committed symlink at `rules.hpk.ok.tmp`.
    let many: Vec<String> = (0..12_000).map(|i| format!("\"term{i}x\"")).collect();
    let big = format!(
        "{GUARD}\n[[rule]]\nid = \"many\"\non = \"UserPromptSubmit\"\nkeywords = [{}]\ncontext = \"x\"\n",
        many.join(", ")
    );
    let root = project("stamp-symlink", &big);
    assert!(std::fs::metadata(artifact_path(&root)).unwrap().len() > 256 << 10);
    let victim = root.join("outside/bashrc");
    std::fs::write(&victim, "export PATH=/usr/bin\n").unwrap();
    for name in ["rules.hpk.ok.tmp", "rules.hpk.ok"] {
        let at = root.join(".claude/hookpack/compiled").join(name);
        let _ = std::fs::remove_file(&at);
        symlink(&victim, at).unwrap();
    }
    let denied = answer(&run(&root, EventKind::PreToolUse, &bash("rm -rf /"), LIMIT));
    assert_eq!(decision(&denied), Some("deny"));
    answer(&run(&root, EventKind::UserPromptSubmit, &json!({"prompt": "term5x"}), LIMIT));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "export PATH=/usr/bin\n");
}

#[test]
fn a_lying_count_with_a_valid_crc_fails_closed_instead_of_aborting() {
    let root = project("lying-count", GUARD);
    let mut bytes = std::fs::read(artifact_path(&root)).unwrap();
    // The sources section's file count: an allocation sized by it once asked for 206 GB.
    let (sources, _) = section(&bytes, Section::Sources);
    put(&mut bytes, sources, u32::MAX);
    recrc(&mut bytes);
    write_artifact(&root, &bytes);

    let output = run(&root, EventKind::PreToolUse, &bash("rm -rf /"), LIMIT);
    let denied = answer(&output);
    assert_eq!(decision(&denied), Some("deny"), "the fail-closed guard holds: {denied}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("malformed"), "{stderr}");
}

#[test]
fn a_cyclic_keyword_automaton_never_hangs() {
    let root = project("cyclic-automaton", GUARD);
    let good = std::fs::read(artifact_path(&root)).unwrap();
    let (offset, _) = section(&good, Section::Keywords);
    let states = u32::from_le_bytes(good[offset..offset + 4].try_into().unwrap()) as usize;
    assert!(states > 4, "a real automaton: {states} states");
    let state_word = |state: usize, field: usize| {
        offset + (keywords::HEADER + keywords::ROOT + state * keywords::STATE_LEN + field) * 4
    };
    // Every state fails to itself, its dictionary link is itself, and its outputs range over
    // the whole address space.
    let craft = |i: usize, bytes: &mut Vec<u8>, state: usize| {
        let this = u32::try_from(state).unwrap();
        match i {
            0 => put(bytes, state_word(state, 2), this),
            1 => put(bytes, state_word(state, 3), this),
            _ => {
                put(bytes, state_word(state, 1), 0);
                put(bytes, state_word(state + 1, 1), u32::MAX);
            }
        }
    };
    for i in 0..3 {
        let mut bytes = good.clone();
        for state in 1..states {
            craft(i, &mut bytes, state);
        }
        recrc(&mut bytes);
        write_artifact(&root, &bytes);
        let prompt = json!({"prompt": "the postgres schema migration needs sql sql sql"});
        answer(&run(&root, EventKind::UserPromptSubmit, &prompt, LIMIT));
        let denied = answer(&run(&root, EventKind::PreToolUse, &bash("rm -rf /"), LIMIT));
        assert_eq!(decision(&denied), Some("deny"), "craft {i}");
    }
}

#[test]
fn rewriting_the_artifact_in_place_never_kills_a_hook() {
    // `cp new rules.hpk` truncates and rewrites the file hooks are reading; a mapped file then
    // raised SIGBUS and the fail-closed deny was lost.
    let root = project("in-place", GUARD);
    let good = std::fs::read(artifact_path(&root)).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, path, good) = (stop.clone(), artifact_path(&root), good.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                file.set_len(0).unwrap();
                for chunk in good.chunks(512) {
                    file.write_all(chunk).unwrap();
                }
            }
        })
    };
    let mut denied = 0;
    for _ in 0..150 {
        let output = run(&root, EventKind::PreToolUse, &bash("rm -rf /"), LIMIT);
        // Whatever the copy it read, the guard answers: from the rules or failing closed.
        if decision(&answer(&output)) == Some("deny") {
            denied += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.join().unwrap();
    assert_eq!(denied, 150);
}

#[test]
fn hooks_write_nothing_through_symlinked_folders() {
    let root = project("symlinked-folders", GUARD);
    let outside = root.join("outside");
    // The state folder and the notices inside it lead out of the project.
    symlink(&outside, root.join(".claude/hookpack/state")).unwrap();
    // A stale artifact (a pack changed) makes the hook announce it: a notice marker to write.
    let pack = root.join(".claude/hookpack/packs/guard.toml");
    std::fs::write(&pack, format!("{GUARD}\n# changed\n")).unwrap();
    for (kind, payload) in [
        (EventKind::SessionStart, json!({"source": "startup"})),
        (EventKind::UserPromptSubmit, json!({"prompt": "postgres"})),
        (EventKind::PreToolUse, bash("rm -rf /")),
        (EventKind::Stop, json!({"stop_hook_active": false})),
    ] {
        answer(&run(&root, kind, &payload, LIMIT));
    }
    // A broken artifact: a failure to record and announce.
    write_artifact(&root, b"broken");
    for _ in 0..2 {
        let denied = answer(&run(&root, EventKind::PreToolUse, &bash("ls"), LIMIT));
        assert_eq!(decision(&denied), Some("deny"), "{denied}");
    }
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing written outside");
}

#[test]
fn artifacts_that_are_no_regular_files_are_refused_without_blocking() {
    let root = project("special-artifact", GUARD);
    let fifo = root.join("outside/fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for target in [Path::new("/dev/zero"), Path::new("/dev/urandom"), &fifo] {
        std::fs::remove_file(artifact_path(&root)).unwrap();
        symlink(target, artifact_path(&root)).unwrap();
        let output = run(&root, EventKind::PreToolUse, &bash("ls"), LIMIT);
        let denied = answer(&output);
        assert_eq!(decision(&denied), Some("deny"), "{}: {denied}", target.display());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("not a regular file"), "{stderr}");
    }
}

#[test]
fn guards_hold_on_shaky_payloads() {
    let root = project("shaky-payloads", GUARD);
    // No `tool_use_id` (Claude Code before 2.0.43), odd optional fields: still evaluated.
    let mut old = bash("rm -rf /");
    let fields = old.as_object_mut().unwrap();
    fields.insert("tool_use_id".into(), Value::Null);
    fields.insert("permission_mode".into(), json!(5));
    fields.insert("effort".into(), json!("very"));
    fields.insert("agent_id".into(), json!({"nested": true}));
    let output = run(&root, EventKind::PreToolUse, &old, LIMIT);
    let answered = answer(&output);
    assert_eq!(decision(&answered), Some("deny"), "{answered}");
    assert_eq!(output.stderr, b"", "evaluated, not a failure");

    // A payload hookpack cannot read at all, on a tool a fail-closed rule covers: denied.
    let unreadable = json!({"tool_name": "Bash", "tool_input": "rm -rf /"});
    let output = run(&root, EventKind::PreToolUse, &unreadable, LIMIT);
    let answered = answer(&output);
    assert_eq!(decision(&answered), Some("deny"), "{answered}");
    let reason = answered["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    for said in
        ["guard/rm-root", "cannot read this call's payload", "disable = [\"guard/rm-root\"]"]
    {
        assert!(reason.contains(said), "`{said}` in {reason}");
    }
    // On a tool no fail-closed rule covers, it fails open.
    let other = json!({"tool_name": "Read", "tool_input": 7});
    let answered = answer(&run(&root, EventKind::PreToolUse, &other, LIMIT));
    assert_eq!(decision(&answered), None, "{answered}");
    // The user is told the payload was the problem, not sent to recompile rules that are fine.
    let told = answered["systemMessage"].as_str().unwrap_or_default();
    assert!(told.contains("invalid `PreToolUse` payload"), "{told}");
    assert!(told.contains("update hookpack") && !told.contains("hookpack compile"), "{told}");
}

/// Counts given as floats or strings (`duration_ms: 12.5`, `context_tokens: "130000"`) leave the
/// payload readable: the rules still answer (before, such a payload was unreadable and the hook
/// answered nothing).
#[test]
fn counts_of_any_numeric_shape_keep_the_payload_readable() {
    let pack = format!(
        "{GUARD}
[[rule]]
id = \"ran\"
on = [\"PostToolUse\", \"PostToolUseFailure\"]
tool = \"Bash\"
context = \"The build log is in target/build.log.\"
"
    );
    let root = project("float-counts", &pack);
    let ran = json!({"tool_name": "Bash", "tool_input": {"command": "make"}});
    for (kind, extra) in [
        (EventKind::PostToolUse, json!({"tool_response": {"stdout": ""}, "duration_ms": 12.5})),
        (EventKind::PostToolUse, json!({"tool_response": {}, "duration_ms": "12"})),
        (EventKind::PostToolUseFailure, json!({"error": "exit 2", "duration_ms": 1e3})),
    ] {
        let mut payload = ran.clone();
        payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let output = run(&root, kind, &payload, LIMIT);
        let answered = answer(&output);
        let context = answered["hookSpecificOutput"]["additionalContext"].as_str();
        assert!(context.is_some_and(|c| c.contains("target/build.log")), "{payload}: {answered}");
        assert_eq!(output.stderr, b"", "{payload}: evaluated, not a failure");
    }
}

#[test]
fn a_fail_closed_deny_names_the_cause_and_the_way_out() {
    let root = project("way-out", GUARD);
    let mut bytes = std::fs::read(artifact_path(&root)).unwrap();
    // An artifact from another version of hookpack, as after an upgrade.
    put(&mut bytes, header::VERSION, 3);
    write_artifact(&root, &bytes);
    let output = run(&root, EventKind::PreToolUse, &bash("ls"), LIMIT);
    let denied = answer(&output);
    assert_eq!(decision(&denied), Some("deny"));
    let reason = denied["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    for said in [
        "guard/rm-root",
        "artifact format 3, but this hook reads format",
        "hookpack compile --project",
        "! hookpack compile",
    ] {
        assert!(reason.contains(said), "`{said}` in {reason}");
    }
    // The user is told once, with the same way out.
    let message = denied["systemMessage"].as_str().unwrap();
    assert!(message.contains("`Bash` calls are denied") && message.contains("! hookpack compile"));
    let again = answer(&run(&root, EventKind::PreToolUse, &bash("ls"), LIMIT));
    assert_eq!(again.get("systemMessage"), None, "once per session");
}

/// Every entry below `dir` with its length and contents, to tell whether anything changed.
fn listing(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else { return found };
    for entry in entries {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            found.push((path.clone(), Vec::new()));
            found.extend(listing(&path));
        } else if meta.is_file() {
            found.push((path.clone(), std::fs::read(&path).unwrap()));
        } else {
            found.push((path, Vec::new()));
        }
    }
    found.sort();
    found
}

/// Fails naming what changed between two listings.
fn assert_unchanged(before: &[(PathBuf, Vec<u8>)], after: &[(PathBuf, Vec<u8>)], plant: &str) {
    let changed: Vec<&Path> = after
        .iter()
        .filter(|entry| !before.contains(entry))
        .chain(before.iter().filter(|entry| !after.contains(entry)))
        .map(|(path, _)| path.as_path())
        .collect();
    assert!(changed.is_empty(), "{plant}: written outside the project: {changed:?}");
}

/// Runs every event's example (and the events that write: prompts, compaction, a stale
/// artifact's notice, a broken artifact's failure) in `root`.
fn every_event(root: &Path, artifact: Option<&Path>) {
    let events = |root: &Path| {
        for &kind in EventKind::ALL {
            let payload: Value =
                serde_json::from_slice(&std::fs::read(crate::first_example(kind)).unwrap())
                    .unwrap();
            let output = run(root, kind, &payload, LIMIT);
            assert_eq!(output.status.signal(), None, "{kind}");
        }
        for prompt in ["[remember] use pnpm", "@dev the migration", "again"] {
            answer(&run(root, EventKind::UserPromptSubmit, &json!({"prompt": prompt}), LIMIT));
        }
        answer(&run(root, EventKind::PreCompact, &json!({"trigger": "auto"}), LIMIT));
        answer(&run(root, EventKind::SessionStart, &json!({"source": "compact"}), LIMIT));
    };
    events(root);
    // Broken rules: a failure to record and announce, a fail-closed deny.
    if let Some(artifact) = artifact {
        let good = std::fs::read(artifact).ok();
        let _ = std::fs::remove_file(artifact);
        let _ = std::fs::write(artifact, b"broken");
        events(root);
        if let Some(good) = good {
            write_artifact(root, &good);
        }
    }
}

#[test]
fn nothing_is_written_outside_through_any_planted_symlink() {
    const CONFIG: &str = "builtin = [\"context\", \"guard\", \"memory\", \"workflow\"]\n";
    // (what is planted, relative to `.claude/hookpack`, and whether it links to a folder)
    let plants: &[(&str, bool)] = &[
        ("state", true),
        ("state/notices", true),
        ("state/hookpack.db", false),
        ("state/hookpack.db-wal", false),
        ("state/hookpack.db-shm", false),
        ("state/hookpack.db-journal", false),
        ("compiled/rules.hpk.ok", false),
        ("compiled/rules.hpk.ok.tmp", false),
    ];
    for (i, (plant, folder)) in plants.iter().enumerate() {
        let root = project(&format!("planted-{i}"), GUARD);
        let dir = root.join(".claude/hookpack");
        std::fs::write(dir.join("hookpack.toml"), CONFIG).unwrap();
        write_artifact(&root, &compiled(&root));
        let outside = root.join("outside");
        let victim = outside.join("victim");
        std::fs::write(&victim, b"the user's file").unwrap();
        let at = dir.join(plant);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        let _ = std::fs::remove_file(&at);
        symlink(if *folder { &outside } else { &victim }, &at).unwrap();
        // A changed pack makes the artifact stale: a notice to write.
        let pack = dir.join("packs/guard.toml");
        std::fs::write(&pack, format!("{GUARD}\n# changed\n")).unwrap();

        let before = listing(&outside);
        every_event(&root, Some(&artifact_path(&root)));
        assert_unchanged(&before, &listing(&outside), plant);
    }

    // The folders on the way: `.claude` or `.claude/hookpack` itself leads out of the project.
    for (i, linked) in [".claude", ".claude/hookpack"].into_iter().enumerate() {
        let root = project(&format!("planted-folder-{i}"), GUARD);
        std::fs::write(root.join(".claude/hookpack/hookpack.toml"), CONFIG).unwrap();
        write_artifact(&root, &compiled(&root));
        let outside = root.join("outside");
        let moved = outside.join("moved");
        std::fs::rename(root.join(linked), &moved).unwrap();
        symlink(&moved, root.join(linked)).unwrap();
        let before = listing(&outside);
        // The artifact is read through the link (reading is not writing); nothing is written.
        every_event(&root, None);
        assert_unchanged(&before, &listing(&outside), linked);
    }
}

#[test]
fn a_source_replaced_by_a_device_or_fifo_is_stale_not_read() {
    let root = project("device-source", GUARD);
    let pack = root.join(".claude/hookpack/packs/guard.toml");
    let fifo = root.join("outside/fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    for (i, target) in [Path::new("/dev/zero"), &fifo].into_iter().enumerate() {
        std::fs::remove_file(&pack).unwrap();
        symlink(target, &pack).unwrap();
        let payload = json!({"prompt": "hello", "session_id": format!("device-{i}")});
        let answered = answer(&run(&root, EventKind::UserPromptSubmit, &payload, LIMIT));
        let message = answered["systemMessage"].as_str().unwrap_or_default();
        assert!(message.contains("rules are stale") && message.contains("guard.toml changed"));
        // The rules still answer meanwhile.
        let denied = answer(&run(&root, EventKind::PreToolUse, &bash("rm -rf /"), LIMIT));
        assert_eq!(decision(&denied), Some("deny"));
    }
}

#[test]
fn unreadable_stdin_is_denied_by_guards_of_every_tool() {
    let every = GUARD.replace("tool = \"Bash\"\n", "");
    let root = project("unreadable-stdin", &every);
    let list = std::fs::read_to_string(root.join(".claude/hookpack/compiled/fail-closed.txt"));
    assert_eq!(list.unwrap(), "guard/rm-root *\n");
    for stdin in [&b"{not json"[..], b"", b"[1, 2]"] {
        let denied = answer(&run_raw(&root, EventKind::PreToolUse, stdin, LIMIT));
        assert_eq!(decision(&denied), Some("deny"), "{stdin:?}: {denied}");
    }
}

#[test]
fn a_committed_artifact_cannot_drop_the_users_own_guards() {
    // The user's own guard, compiled for the user (`hookpack compile --user`).
    const USER_GUARD: &str = r#"[pack]
name = "mine"

[[rule]]
id = "no-rm-home"
on = "PreToolUse"
tool = "Bash"
regex = ['\brm\s+-rf\s+~']
decision = "deny"
fail = "closed"
reason = "Never delete the home folder."
"#;
    let root = project("committed-artifact", GUARD);
    let user = root.join("user/hookpack");
    std::fs::create_dir_all(user.join("packs")).unwrap();
    std::fs::write(user.join("packs/mine.toml"), USER_GUARD).unwrap();
    let loaded = load(&Layout { project: None, user: Some(user.clone()) }, &[]);
    assert!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics.render());
    let rules = loaded.rules();
    let bytes = compile(&rules, &loaded.config.settings(), &loaded.sources).unwrap().bytes;
    std::fs::create_dir_all(user.join("compiled")).unwrap();
    let list = rules_compiler::fail_closed_list(&rules);
    hook_runtime::write_compiled(
        &ConfinedDir::trusting(&user.join("compiled")),
        "rules.hpk",
        &bytes,
        &list,
    )
    .unwrap();

    // Compiled here, with the user's packs: the user's guard holds in the project.
    std::fs::write(root.join(".claude/hookpack/compiled/fail-closed.txt"), "").unwrap();
    write_artifact(&root, &compiled(&root));
    let denied = answer(&run(&root, EventKind::PreToolUse, &bash("rm -rf ~"), LIMIT));
    assert_eq!(decision(&denied), Some("deny"), "{denied}");
    // A payload it cannot read: denied; the user's own guard is turned off in the user's
    // config, not the project's (which cannot).
    let unreadable = json!({"tool_name": "Bash", "tool_input": "rm -rf ~"});
    let denied = answer(&run(&root, EventKind::PreToolUse, &unreadable, LIMIT));
    let reason = denied["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    let config = user.join("hookpack.toml");
    assert!(reason.contains(&config.display().to_string()), "{reason}");

    // The repository commits an artifact compiled elsewhere without them, with the stamp from
    // there and no fail-closed list: it is not used, and the user's guard still denies.
    let elsewhere = root.join("outside/elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let without_user = {
        let layout = Layout { project: Some(root.clone()), user: None };
        let loaded = load(&layout, &[]);
        compile(&loaded.rules(), &loaded.config.settings(), &loaded.sources).unwrap().bytes
    };
    hook_runtime::write_compiled(
        &ConfinedDir::trusting(&elsewhere),
        "rules.hpk",
        &without_user,
        "",
    )
    .unwrap();
    let compiled_dir = root.join(".claude/hookpack/compiled");
    for name in ["rules.hpk", "rules.hpk.ok"] {
        std::fs::copy(elsewhere.join(name), compiled_dir.join(name)).unwrap();
    }
    std::fs::remove_file(compiled_dir.join(FAIL_CLOSED_FILE)).unwrap();
    let output = run(&root, EventKind::PreToolUse, &bash("rm -rf ~"), LIMIT);
    let denied = answer(&output);
    assert_eq!(decision(&denied), Some("deny"), "{denied}");
    let reason = denied["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("mine/no-rm-home"), "{reason}");
    assert!(reason.contains("not compiled on this machine"), "{reason}");
    assert!(reason.contains("hookpack compile --project"), "{reason}");
    // Or the whole folder, linked to one compiled elsewhere on this machine (its stamp valid
    // there): refused too.
    std::fs::remove_dir_all(&compiled_dir).unwrap();
    symlink(&elsewhere, &compiled_dir).unwrap();
    let denied = answer(&run(&root, EventKind::PreToolUse, &bash("rm -rf ~"), LIMIT));
    assert_eq!(decision(&denied), Some("deny"), "{denied}");
    let reason = denied["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("mine/no-rm-home"), "{reason}");
    assert!(reason.contains("is a symbolic link"), "{reason}");
    // The project's own rules are not in force either: nothing answers from that artifact.
    let prompt =
        answer(&run(&root, EventKind::UserPromptSubmit, &json!({"prompt": "postgres"}), LIMIT));
    assert!(!prompt.to_string().contains("db/migrations"), "{prompt}");
}

/// What JavaScript's JSON holds and UTF-8 cannot (a lone surrogate escape, bytes that are not
/// UTF-8 in a file's content) does not turn the guards off: the payload is read with U+FFFD in
/// their place and judged as any other (before, it was unreadable, and only a guard of every
/// tool denied it).
#[test]
fn a_lone_surrogate_or_a_stray_byte_does_not_turn_the_guards_off() {
    let pack = format!(
        "{GUARD}
[[rule]]
id = \"keys\"
on = \"PreToolUse\"
tool = \"Write|Edit\"
paths = [\"**/.ssh/**\"]
decision = \"deny\"
reason = \"Private keys are not written by the agent.\"
"
    );
    let root = project("lone-surrogate", &pack);
    let write = json!({"tool_name": "Write",
        "tool_input": {"file_path": "/home/dev/.ssh/id_ed25519", "content": "HOLE"}});
    let write = crate::full_payload(EventKind::PreToolUse, &root, "s", &write).to_string();
    let command = crate::full_payload(EventKind::PreToolUse, &root, "s", &bash("rm -rf / HOLE"));
    let command = command.to_string();
    let holes: [&[u8]; 7] = [
        br"\ud800",
        br"key\udfff\n",
        br"\udbff\udbff\udc00",
        br"\uD800\u0041",
        b"\xff\xfe",
        b"\xc0\xaf",
        b"\xed\xa0\x80",
    ];
    for payload in [&write, &command] {
        let (before, after) = payload.split_once("HOLE").unwrap();
        for hole in holes {
            let stdin = [before.as_bytes(), hole, after.as_bytes()].concat();
            let output = run_raw(&root, EventKind::PreToolUse, &stdin, LIMIT);
            let denied = answer(&output);
            let shown = String::from_utf8_lossy(hole);
            assert_eq!(decision(&denied), Some("deny"), "{shown}: {denied}");
            assert_eq!(output.stderr, b"", "{shown}: judged, not a failure");
        }
    }
    // Without the hole the same call to a project file is let through.
    let fine = write.replace("/home/dev/.ssh/id_ed25519", "/home/dev/notes.txt");
    let (before, after) = fine.split_once("HOLE").unwrap();
    let stdin = [before.as_bytes(), br"\ud800", after.as_bytes()].concat();
    assert_eq!(decision(&answer(&run_raw(&root, EventKind::PreToolUse, &stdin, LIMIT))), None);
}

/// Stdin that is no JSON even read leniently is judged by what it names: a tool the bytes name
/// is denied by the fail-closed guards that cover it, and when they name none, by every one.
#[test]
fn unreadable_stdin_is_denied_by_the_guards_of_the_tool_it_names() {
    let root = project("unreadable-names-tool", GUARD);
    let broken: [(&[u8], Option<&str>); 6] = [
        (br#"{"tool_name": "Bash", "tool_input": {"command": "rm -rf /"#, Some("deny")),
        (br#"{"tool_name":"Read","tool_input":{"file_path":"#, None),
        // A decoy before the tool's name or after it: the tool is not known.
        (
            br#"{"x":{"tool_name":"Read"},"tool_name":"Bash","tool_input":{"command":"rm -rf /"#,
            Some("deny"),
        ),
        (
            br#"{"tool_name":"Bash","tool_input":{"command":"rm -rf /","tool_name":"Read"#,
            Some("deny"),
        ),
        (b"{not json", Some("deny")),
        (b"", Some("deny")),
    ];
    for (stdin, expected) in broken {
        let answered = answer(&run_raw(&root, EventKind::PreToolUse, stdin, LIMIT));
        assert_eq!(decision(&answered), expected, "{}: {answered}", String::from_utf8_lossy(stdin));
    }
}

/// A path rule holds however the path is spelled: doubled separators, `.` and `..`
/// components, a path relative to the working folder (before, only the first was denied).
#[test]
fn a_path_rule_holds_for_every_spelling_of_the_path() {
    let pack = format!(
        "{GUARD}
[[rule]]
id = \"secrets\"
on = \"PreToolUse\"
tool = \"Write|Edit|Read\"
paths = [\"secrets/**\"]
decision = \"deny\"
reason = \"The secrets folder is not for the agent.\"
"
    );
    let root = project("path-spellings", &pack);
    let at = root.display().to_string();
    let call = |file: String, cwd: String| {
        json!({"tool_name": "Write", "cwd": cwd,
               "tool_input": {"file_path": file, "content": "x"}})
    };
    for (file, cwd) in [
        (format!("{at}/secrets/a.txt"), at.clone()),
        (format!("{at}//secrets/a.txt"), at.clone()),
        (format!("{at}/./secrets/a.txt"), at.clone()),
        (format!("{at}/src/../secrets/a.txt"), at.clone()),
        ("./secrets/a.txt".to_owned(), at.clone()),
        ("../secrets/a.txt".to_owned(), format!("{at}/src")),
    ] {
        let denied = answer(&run(&root, EventKind::PreToolUse, &call(file.clone(), cwd), LIMIT));
        assert_eq!(decision(&denied), Some("deny"), "{file}: {denied}");
    }
    let fine =
        answer(&run(&root, EventKind::PreToolUse, &call(format!("{at}/src/a.txt"), at), LIMIT));
    assert_eq!(decision(&fine), None, "{fine}");
}
