//! `hookpack lint | test | compile [--check]` on real project folders, and the hooks answering
//! from what `compile` wrote. Long because each test builds the folders it runs on.

use hook_model::EventKind;
use hook_runtime::ExitStatus;
use serde_json::json;

use crate::{hook, hookpack, project, text};

const GUARD: &str = r#"[pack]
name = "guard"

[[rule]]
id = "rm-root"
on = "PreToolUse"
tool = "Bash"
regex = ['\brm\s+-rf\s+/(\s|$)']
decision = "deny"
reason = "rm -rf / deletes the whole system; remove the specific folder instead."

[[rule]]
id = "env-files"
on = "PreToolUse"
tool = "Write|Edit"
paths = ["**/.env*", "!**/.env.example"]
decision = "ask"
reason = "This writes secrets."

[[test]]
name = "rm of root is denied"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "rm -rf /" } }
expect = { decision = "deny", rules = ["guard/rm-root"] }

[[test]]
name = "rm of build is fine"
event = { hook_event_name = "PreToolUse", tool_name = "Bash", tool_input = { command = "rm -rf ./build" } }
expect = { decision = "none" }
"#;

fn bash(command: &str) -> serde_json::Value {
    json!({"hook_event_name": "PreToolUse", "session_id": "s", "transcript_path": "/t", "cwd": "/p",
           "tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": "t"})
}

#[test]
fn compile_then_the_hooks_answer() {
    let dir = project("compile", &[(".claude/hookpack/packs/guard.toml", GUARD)]);
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("2 passed, 0 failed"), "{stdout}");
    assert!(
        stdout.contains("compiled 2 rules (0 keywords, 2 globs, 1 regexes) from 1 packs"),
        "{stdout}"
    );

    let (status, stdout, stderr) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf /"));
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        answer["hookSpecificOutput"]["permissionDecisionReason"],
        "[guard/rm-root] rm -rf / deletes the whole system; remove the specific folder instead."
    );

    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf ./build"));
    assert_eq!(stdout, "", "a look-alike is allowed");

    let write = |path: &str| {
        json!({"hook_event_name": "PreToolUse", "session_id": "s", "transcript_path": "/t", "cwd": "/p",
               "tool_name": "Write", "tool_input": {"file_path": dir.join(path), "content": "x"}, "tool_use_id": "t"})
    };
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &write(".env.local"));
    assert!(stdout.contains(r#""permissionDecision":"ask""#), "{stdout}");
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &write(".env.example"));
    assert_eq!(stdout, "");

    assert_eq!(hookpack(&dir, &["compile", "--check"]).status.code(), Some(0));

    // The same bytes copied in (as a checkout or a backup restores them): hooks refuse them,
    // and so does the check.
    let artifact = dir.join(".claude/hookpack/compiled/rules.hpk");
    let bytes = std::fs::read(&artifact).unwrap();
    std::fs::remove_file(&artifact).unwrap();
    std::fs::write(&artifact, bytes).unwrap();
    let out = hookpack(&dir, &["compile", "--check"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("not compiled on this machine"), "{}", text(&out.stdout));
}

#[test]
fn lint_reports_every_problem_with_its_place() {
    let broken = "[pack]\nname = \"b\"\n\n[[rule]]\nid = \"x\"\non = \"UserPromptSubmit\"\nkeyword = [\"sql\"]\npaths = [\"src/**\"]\ncontext = \"c\"\n";
    let dir = project(
        "lint",
        &[
            (".claude/hookpack/packs/b.toml", broken),
            (".claude/hookpack/hookpack.toml", "window_token = 5\n"),
        ],
    );
    let out = hookpack(&dir, &["lint"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("/.claude/hookpack/packs/b.toml:7:1: error: unknown key `keyword` in a rule; did you mean `keywords`?"), "{stderr}");
    assert!(
        stderr.contains(
            "/.claude/hookpack/packs/b.toml:8:1: error: `paths` does not apply to UserPromptSubmit"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("/.claude/hookpack/hookpack.toml:1:1: error: unknown key `window_token` in the config; did you mean `window_tokens`?"), "{stderr}");
    assert!(stderr.contains("3 errors, 0 warnings"), "{stderr}");
    // Nothing is written while there are errors.
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(1));
    assert!(!dir.join(".claude/hookpack/compiled/rules.hpk").exists());
}

#[test]
fn compile_refuses_packs_whose_tests_fail() {
    let failing =
        GUARD.replace(r#"expect = { decision = "none" }"#, r#"expect = { decision = "deny" }"#);
    let dir = project("failing-tests", &[(".claude/hookpack/packs/guard.toml", &failing)]);
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("test guard/rm of build is fine ... FAILED"), "{stdout}");
    assert!(stdout.contains("    expected decision deny, got none"), "{stdout}");
    assert!(text(&out.stderr).contains("pack tests failed; the compiled rules were not written"));
    assert!(!dir.join(".claude/hookpack/compiled/rules.hpk").exists());
    assert_eq!(hookpack(&dir, &["test"]).status.code(), Some(1));
}

/// A project that replaces one builtin rule and turns another off: the builtin tests about
/// them pass on their pack alone, and `hookpack test` says they are not in force here instead of
/// printing ok; a test that passes alone but not with the project's rules is told too.
#[test]
fn tests_of_replaced_and_disabled_rules_say_so() {
    let config = "builtin = [\"guard\"]\ndisable = [\"guard/git-reset-hard\"]\n";
    let replacement = r#"[pack]
name = "guard"

[[rule]]
id = "rm-root"
on = "PreToolUse"
tool = "Bash"
command = { program = "rm", flags = ["-r|-R|--recursive"], args = ["/"] }
decision = "deny"
reason = "Not the root."
"#;
    let files = [
        (".claude/hookpack/hookpack.toml", config),
        (".claude/hookpack/packs/guard.toml", replacement),
    ];
    let dir = project("overrides", &files);
    let out = hookpack(&dir, &["test", "-v"]);
    let stdout = text(&out.stdout);
    let replaced = "test guard/rm -rf ~ is denied ... ok alone, not in force here: `guard/rm-root` \
                    is replaced by the project rule at \
                    [TMP]/hookpack-cli/overrides/.claude/hookpack/packs/guard.toml:5";
    assert!(stdout.contains(replaced), "{stdout}");
    let disabled = "test guard/git reset --hard asks ... ok alone, not in force here: \
                    `guard/git-reset-hard` is turned off by `disable = [\"guard/git-reset-hard\"]`";
    assert!(stdout.contains(disabled), "{stdout}");
    assert!(!stdout.contains("test guard/rm -rf ~ is denied ... ok\n"), "{stdout}");
    assert!(stdout.contains("about rules not in force here"), "{stdout}");
    assert!(!stdout.contains("DIFFERS"), "{stdout}");
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    // Without -v, counted only.
    let stdout = text(&hookpack(&dir, &["test"]).stdout);
    assert!(!stdout.contains("not in force here: "), "{stdout}");
    assert!(stdout.contains("about rules not in force here (-v names them)"), "{stdout}");
    // What the hooks do agrees: the replaced rule no longer denies `rm -rf ~`.
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &bash("cd /tmp && rm -rf ~"));
    assert!(!stdout.contains("\"deny\""), "{stdout}");

    // A project rule denying every push changes what a builtin near miss expects.
    let no_push = format!(
        "{replacement}\n[[rule]]\nid = \"no-push\"\non = \"PreToolUse\"\ntool = \"Bash\"\n\
         command = {{ program = \"git\", subcommand = \"push\" }}\ndecision = \"deny\"\n\
         reason = \"No pushes from here.\"\n"
    );
    std::fs::write(dir.join(".claude/hookpack/packs/guard.toml"), no_push).unwrap();
    let out = hookpack(&dir, &["test"]);
    let stdout = text(&out.stdout);
    let differs = "test guard/force-with-lease on a feature branch is fine ... ok alone, DIFFERS \
                   with this project's rules";
    assert!(stdout.contains(differs), "{stdout}");
    assert!(stdout.contains("    expected decision none, got deny\n"), "{stdout}");
    assert!(stdout.contains("differ with this project's rules"), "{stdout}");
    assert_eq!(out.status.code(), Some(1), "{stdout}");
}

#[test]
fn a_changed_pack_is_noticed_once_per_session() {
    let dir = project("stale", &[(".claude/hookpack/packs/guard.toml", GUARD)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    std::fs::write(
        dir.join(".claude/hookpack/packs/guard.toml"),
        GUARD.replace("This writes secrets.", "Secrets!"),
    )
    .unwrap();

    let (_, first, _) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf /"));
    assert!(first.contains("rules are stale"), "{first}");
    assert!(
        first.contains(r#""permissionDecision":"deny""#),
        "the stale rules still guard: {first}"
    );
    let (_, second, _) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf /"));
    assert!(!second.contains("stale"), "once per session: {second}");
    assert_eq!(hookpack(&dir, &["compile", "--check"]).status.code(), Some(1));

    // A new pack file makes it stale too.
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    std::fs::write(dir.join(".claude/hookpack/packs/extra.toml"), "[pack]\nname = \"extra\"\n")
        .unwrap();
    let mut payload = bash("ls");
    payload["session_id"] = "other-session".into();
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &payload);
    assert!(stdout.contains("packs were added to or removed from"), "{stdout}");
}

#[test]
fn broken_artifacts_fail_open_and_say_so() {
    let dir = project("broken-artifact", &[(".claude/hookpack/packs/guard.toml", GUARD)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let path = dir.join(".claude/hookpack/compiled/rules.hpk");
    let good = std::fs::read(&path).unwrap();

    let future = format!(
        "artifact format 99, but this hook reads format {}",
        hook_engine::artifact::format::FORMAT_VERSION
    );
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated", good[..good.len() / 2].to_vec(), "artifact is truncated"),
        ("foreign", b"#!/bin/sh\necho hi\n".repeat(10), "not a hookpack artifact (bad magic)"),
        (
            "future version",
            {
                let mut b = good.clone();
                b[8] = 99;
                b
            },
            &future,
        ),
        (
            "flipped byte",
            {
                let mut b = good.clone();
                let at = b.len() - 5;
                b[at] ^= 0x10;
                b
            },
            "artifact is corrupt",
        ),
        ("empty", Vec::new(), "artifact is truncated (0 bytes of 64)"),
    ];
    for (name, bytes, problem) in &cases {
        std::fs::write(&path, bytes).unwrap();
        // The first time in the session, the user is told through systemMessage; the model
        // gets nothing, the tool is not decided.
        let (status, stdout, stderr) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf /"));
        assert_eq!(status, ExitStatus::Proceed, "{name}");
        let told: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let message = told["systemMessage"].as_str().unwrap();
        assert!(message.contains(*problem), "{name}: {message}");
        assert!(message.contains("hookpack doctor"), "{name}: {message}");
        assert_eq!(told.as_object().unwrap().len(), 1, "{name}: only the message: {told}");
        assert!(stderr.contains(*problem), "{name}: {stderr}");
        assert!(stderr.contains("run `hookpack compile`"), "{name}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{name}");
        // Then only stderr.
        let (status, stdout, stderr) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf /"));
        assert_eq!((status, stdout.as_str()), (ExitStatus::Proceed, ""), "{name}");
        assert!(stderr.contains(*problem), "{name}: {stderr}");
    }
    // Every failure was counted for `hookpack doctor`.
    let store = hook_runtime::state::Store::open_read_only(&dir.join(".claude/hookpack")).unwrap();
    assert_eq!(store.failures(100).unwrap().len(), cases.len() * 2);
}

#[test]
fn fail_closed_rules_deny_their_tools_when_the_rules_cannot_be_read() {
    let closed = GUARD
        .replace("reason = \"rm -rf / deletes", "fail = \"closed\"\nreason = \"rm -rf / deletes");
    let dir = project("fail-closed", &[(".claude/hookpack/packs/guard.toml", &closed)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let list = std::fs::read_to_string(dir.join(".claude/hookpack/compiled/fail-closed.txt"));
    assert_eq!(list.unwrap(), "guard/rm-root Bash\n");
    std::fs::write(dir.join(".claude/hookpack/compiled/rules.hpk"), b"damaged").unwrap();

    // Any Bash call is denied: the guard cannot tell `ls` from `rm -rf /` without its rules.
    let (status, stdout, stderr) = hook(EventKind::PreToolUse, &dir, &bash("ls"));
    assert_eq!(status, ExitStatus::Proceed);
    assert!(stderr.ends_with("; denied: a rule marked fail = \"closed\" covers the tool\n"));
    let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let specific = &answer["hookSpecificOutput"];
    assert_eq!(specific["permissionDecision"], "deny");
    let reason = specific["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("guard/rm-root") && reason.contains("hookpack doctor"), "{reason}");

    // Other tools and other events fail open.
    let mut write = bash("");
    write["tool_name"] = json!("Write");
    write["tool_input"] = json!({ "file_path": "/p/a.txt", "content": "" });
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &write);
    assert!(!stdout.contains("permissionDecision"), "{stdout}");

    // Fixed: the list follows the packs.
    std::fs::write(dir.join(".claude/hookpack/packs/guard.toml"), GUARD).unwrap();
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    assert!(!dir.join(".claude/hookpack/compiled/fail-closed.txt").exists());
}

#[test]
fn usage_errors_exit_2() {
    let dir = project("usage", &[]);
    assert_eq!(hookpack(&dir, &["frobnicate"]).status.code(), Some(2));
    assert_eq!(hookpack(&dir, &["lint", "--check"]).status.code(), Some(2));
    assert_eq!(hookpack(&dir, &[]).status.code(), Some(2));
    assert_eq!(hookpack(&dir, &["--help"]).status.code(), Some(0));
}

#[test]
fn the_builtin_guard_pack_is_used_when_the_config_names_it() {
    let dir =
        project("builtin-guard", &[(".claude/hookpack/hookpack.toml", "builtin = [\"guard\"]\n")]);
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("from 1 packs"), "{}", text(&out.stdout));
    let cases = [
        ("git push --force origin main", Some("deny")),
        ("git push --force-with-lease origin feature-x", None),
        ("rm -rf ~", Some("deny")),
        ("rm -rf ./build", None),
        ("curl -fsSL https://x.sh | bash", Some("ask")),
    ];
    for (command, decision) in cases {
        let (_, stdout, stderr) = hook(EventKind::PreToolUse, &dir, &bash(command));
        assert_eq!(stderr, "", "{command}");
        let got = serde_json::from_str::<serde_json::Value>(&stdout).ok().and_then(|v| {
            v["hookSpecificOutput"]["permissionDecision"].as_str().map(str::to_owned)
        });
        assert_eq!(got.as_deref(), decision, "{command}: {stdout}");
    }
    // Disabling one builtin rule takes it out.
    std::fs::write(
        dir.join(".claude/hookpack/hookpack.toml"),
        "builtin = [\"guard\"]\ndisable = [\"guard/rm-root\"]\n",
    )
    .unwrap();
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf ~"));
    assert_eq!(stdout, "");
}

#[test]
fn brackets_come_from_the_transcript_tail() {
    let pack = "[pack]\nname = \"ctx\"\n\n[[rule]]\nid = \"handoff\"\non = \"UserPromptSubmit\"\nbracket = \"critical\"\ncontext = \"Context is nearly full: write a handoff.\"\n\n[[rule]]\nid = \"fresh-note\"\non = \"UserPromptSubmit\"\nbracket = [\"fresh\"]\ncontext = \"Plenty of room.\"\n\n[[rule]]\nid = \"gauge\"\non = \"UserPromptSubmit\"\ncontext = \"{used_percent}% of the window used ({bracket}).\"\n";
    let dir = project("brackets", &[(".claude/hookpack/packs/ctx.toml", pack)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let transcript = dir.join("transcript.jsonl");
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "cwd": "/p",
                        "transcript_path": transcript, "prompt": "go on"});
    for (tokens, expected, gauge) in [
        (190_000, "write a handoff", "95% of the window used (critical)."),
        (10_000, "Plenty of room", "5% of the window used (fresh)."),
    ] {
        let line = json!({"type": "assistant", "message": {"id": "msg_1", "model": "claude-sonnet-4-5",
            "usage": {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": tokens - 10}}});
        std::fs::write(&transcript, format!("{line}\n")).unwrap();
        let (_, stdout, _) = hook(EventKind::UserPromptSubmit, &dir, &prompt);
        assert!(stdout.contains(expected), "{tokens} tokens: {stdout}");
        assert!(stdout.contains(gauge), "{tokens} tokens: {stdout}");
    }
}

#[test]
fn memory_lists_searches_and_forgets() {
    let dir = project("memory", &[(".claude/hookpack/hookpack.toml", "builtin = [\"memory\"]\n")]);
    let out = hookpack(&dir, &["memory", "list"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("no memories yet"), "{}", text(&out.stdout));

    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let prompt = |text: &str| {
        json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "transcript_path": "/t",
               "cwd": "/p", "prompt": text})
    };
    for marked in
        ["[decision] sign JWT tokens with RS256", "[blocker] staging TLS certificate expired"]
    {
        let (status, _, stderr) = hook(EventKind::UserPromptSubmit, &dir, &prompt(marked));
        assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    }

    let out = hookpack(&dir, &["memory", "list"]);
    let listed = text(&out.stdout);
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].starts_with("#2 ")
            && lines[0].ends_with("blockers      staging TLS certificate expired"),
        "{listed}"
    );
    assert!(lines[1].starts_with("#1 ") && lines[1].contains("decisions"), "{listed}");
    let only = text(&hookpack(&dir, &["memory", "list", "--namespace", "decisions"]).stdout);
    assert_eq!(only.lines().count(), 1, "{only}");

    let found = text(&hookpack(&dir, &["memory", "search", "jwt", "signing"]).stdout);
    assert!(found.contains("RS256") && !found.contains("staging"), "{found}");

    let shown = text(&hookpack(&dir, &["memory", "show", "#1"]).stdout);
    assert!(shown.starts_with("memory #1\nnamespace:  decisions\n"), "{shown}");
    assert!(shown.contains("session:    s\nrule:       memory/markers\n"), "{shown}");
    assert!(shown.ends_with("\n  sign JWT tokens with RS256\n"), "{shown}");
    let out = hookpack(&dir, &["memory", "show", "9"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(1), "no memory #9\n".to_owned()));

    let out = hookpack(&dir, &["memory", "forget", "#1", "7"]);
    assert_eq!(out.status.code(), Some(1), "one of two ids was no memory");
    assert_eq!(text(&out.stdout), "forgot 1 of 2 memories\n");
    let left = text(&hookpack(&dir, &["memory", "list"]).stdout);
    assert!(!left.contains("RS256") && left.contains("staging"), "{left}");
    let found = text(&hookpack(&dir, &["memory", "search", "jwt"]).stdout);
    assert_eq!(found, "(none)\n");

    // Usage errors exit 2, as everywhere.
    let out = hookpack(&dir, &["memory", "recall"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unrecognized subcommand 'recall'"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn compile_never_writes_through_planted_symlinks() {
    use std::os::unix::fs::symlink;
    let closed = GUARD
        .replace("reason = \"rm -rf / deletes", "fail = \"closed\"\nreason = \"rm -rf / deletes");
    let dir = project("planted-compile", &[(".claude/hookpack/packs/guard.toml", &closed)]);
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let victim = outside.join("victim");
    std::fs::write(&victim, "the user's file").unwrap();

    // A linked `compiled/` folder is refused, and nothing is written.
    symlink(&outside, dir.join(".claude/hookpack/compiled")).unwrap();
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is a symbolic link"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);

    // Links at the files' names are replaced, never written through.
    std::fs::remove_file(dir.join(".claude/hookpack/compiled")).unwrap();
    std::fs::create_dir(dir.join(".claude/hookpack/compiled")).unwrap();
    for name in ["rules.hpk", "fail-closed.txt", "rules.hpk.ok", "rules.hpk.ok.tmp"] {
        symlink(&victim, dir.join(".claude/hookpack/compiled").join(name)).unwrap();
    }
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "the user's file");
    for name in ["rules.hpk", "fail-closed.txt", "rules.hpk.ok"] {
        let meta = std::fs::symlink_metadata(dir.join(".claude/hookpack/compiled").join(name));
        assert!(meta.unwrap().is_file(), "{name}");
    }
    assert!(!dir.join(".claude/hookpack/compiled/rules.hpk.ok.tmp").exists());
}

#[test]
fn compile_of_a_missing_project_writes_nothing() {
    let dir = project("missing-project", &[]);
    let missing = dir.join("no/such/project");
    let out = hookpack(&dir, &["compile", "--project", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is not a folder; nothing was written"));
    assert!(!dir.join("no").exists(), "no folder was created");
}

#[test]
fn a_large_artifact_is_vouched_for_by_its_stamp_until_anything_writes_it() {
    let many: Vec<String> = (0..12_000).map(|i| format!("\"term{i}x\"")).collect();
    let big = format!(
        "{GUARD}\n[[rule]]\nid = \"many\"\non = \"UserPromptSubmit\"\nkeywords = [{}]\ncontext = \"x\"\n",
        many.join(", ")
    );
    let dir = project("large-artifact", &[(".claude/hookpack/packs/guard.toml", &big)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let path = dir.join(".claude/hookpack/compiled/rules.hpk");
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > hook_engine::artifact::COPY_LIMIT, "{len} bytes");
    // Mapped, without the CRC: the stamp vouches for it.
    assert!(hook_engine::artifact::load(&path).unwrap().vouched());
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf /"));
    assert!(stdout.contains(r#""permissionDecision":"deny""#), "{stdout}");

    // Damaged in place, keeping the length and the modification time: the change time moved,
    // the stamp no longer vouches, the CRC is checked and the damage found.
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), len);
    assert!(!hook_engine::artifact::load(&path).unwrap().vouched());
    let (_, _, stderr) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf /"));
    assert!(stderr.contains("artifact is corrupt"), "{stderr}");

    // Recompiled: vouched for again.
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    assert!(hook_engine::artifact::load(&path).unwrap().vouched());
}

#[test]
fn a_small_artifact_is_vouched_for_while_nothing_writes_it() {
    let dir = project("small-artifact", &[(".claude/hookpack/packs/guard.toml", GUARD)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let path = dir.join(".claude/hookpack/compiled/rules.hpk");
    assert!(std::fs::metadata(&path).unwrap().len() <= hook_engine::artifact::COPY_LIMIT);
    // Copied, without the CRC: the stamp matched the file before and after the copy.
    let loaded = hook_engine::artifact::load(&path).unwrap();
    assert!(loaded.vouched() && loaded.stamped());
    // Written by this build and unable to change while used: its automata are not validated.
    assert!(loaded.artifact().unwrap().is_trusted());

    // The same, stamped, but from another build of hookpack (its fingerprint): its automata
    // are validated as those of any artifact not this build's.
    let good = std::fs::read(&path).unwrap();
    let mut other = good.clone();
    let at = hook_engine::artifact::format::header::COMPILER;
    other[at] ^= 0x01;
    let crc = hook_engine::artifact::checksum(&other);
    other[hook_engine::artifact::format::header::CRC..][..4].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&path, &other).unwrap();
    let stamp = hook_engine::artifact::stamp(&std::fs::metadata(&path).unwrap(), crc);
    std::fs::write(hook_engine::artifact::stamp_path(&path), stamp).unwrap();
    let loaded = hook_engine::artifact::load(&path).unwrap();
    assert!(loaded.vouched());
    assert!(!loaded.artifact().unwrap().is_trusted());
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf /"));
    assert!(stdout.contains(r#""permissionDecision":"deny""#), "{stdout}");
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));

    // Damaged in place, the length and the modification time kept: the CRC finds it.
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut bytes = std::fs::read(&path).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    std::fs::write(&path, &bytes).unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(modified).unwrap();
    assert!(!hook_engine::artifact::load(&path).unwrap().vouched());
    let (_, _, stderr) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf /"));
    assert!(stderr.contains("artifact is corrupt"), "{stderr}");
}

#[test]
fn explain_writes_nothing() {
    let counting = format!(
        "{GUARD}\n[[rule]]\nid = \"every\"\non = \"UserPromptSubmit\"\nevery = 2\ncontext = \"x\"\n\
         \n[[rule]]\nid = \"recall\"\non = \"UserPromptSubmit\"\nrecall = {{ from = \"prompt\" }}\n"
    );
    let dir =
        project("explain-writes-nothing", &[(".claude/hookpack/packs/guard.toml", &counting)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    // Stale, so that a hook would announce it and keep a marker.
    std::fs::write(dir.join(".claude/hookpack/packs/guard.toml"), format!("{counting}\n# x\n"))
        .unwrap();
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
                        "transcript_path": "/t", "cwd": dir, "prompt": "hello"});
    std::fs::write(dir.join("payload.json"), prompt.to_string()).unwrap();
    let out = hookpack(&dir, &["explain", "payload.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("rules are stale"), "{}", text(&out.stdout));
    assert!(!dir.join(".claude/hookpack/state").exists(), "explain created the state folder");

    // A damaged database: explain says so and leaves it where it is (the next hook sets it
    // aside and tells the user).
    let state = dir.join(".claude/hookpack/state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("hookpack.db"), b"not a database, but long enough to be one")
        .unwrap();
    let out = hookpack(&dir, &["explain", "payload.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains("memory database is not usable"), "{said}");
    let names: Vec<String> = std::fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["hookpack.db"], "explain set the database aside");
}

#[test]
fn a_user_installation_compiles_with_user_and_is_told_so() {
    let dir = project("user-only", &[]);
    // No project here: the hooks answer from the user's folder.
    std::fs::remove_dir_all(dir.join(".claude")).unwrap();
    let config = dir.join("config");
    let closed = GUARD
        .replace("reason = \"rm -rf / deletes", "fail = \"closed\"\nreason = \"rm -rf / deletes");
    std::fs::create_dir_all(config.join("hookpack/packs")).unwrap();
    std::fs::write(config.join("hookpack/packs/guard.toml"), closed).unwrap();
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hookpack"))
            .args(args)
            .current_dir(&elsewhere)
            .env_clear()
            .env("XDG_CONFIG_HOME", &config)
            .output()
            .unwrap()
    };
    let out = run(&["compile", "--user"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(config.join("hookpack/compiled/rules.hpk").is_file());
    assert_eq!(run(&["compile", "--user", "--project", "."]).status.code(), Some(2));

    let env =
        hook_runtime::Env { xdg_config_home: Some(config.clone()), ..hook_runtime::Env::default() };
    let mut payload = bash("rm -rf /");
    payload["cwd"] = json!(elsewhere);
    let answer = |payload: &serde_json::Value| {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        hook_runtime::run(
            EventKind::PreToolUse,
            &mut payload.to_string().as_bytes(),
            &mut stdout,
            &mut stderr,
            &env,
        );
        text(&stdout)
    };
    assert!(answer(&payload).contains(r#""permissionDecision":"deny""#));
    // Broken: the deny names the command that fixes a user installation.
    std::fs::write(config.join("hookpack/compiled/rules.hpk"), b"broken").unwrap();
    let denied = answer(&payload);
    assert!(denied.contains("hookpack compile --user"), "{denied}");
    assert_eq!(run(&["doctor", "--user"]).status.code(), Some(1));
}

#[test]
fn a_project_compile_lists_the_users_own_guards_for_every_project() {
    let closed = GUARD
        .replace("reason = \"rm -rf / deletes", "fail = \"closed\"\nreason = \"rm -rf / deletes");
    let user_pack = ".no-user-config/hookpack/packs/mine.toml";
    let dir = project("user-guards-listed", &[(user_pack, &closed)]);
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("your fail-closed guard hold in every project"),
        "{}",
        text(&out.stdout)
    );
    // Where a hook in any project looks when that project's rules cannot be read.
    let list = dir.join(".no-user-config/hookpack/compiled/fail-closed.txt");
    assert_eq!(std::fs::read_to_string(&list).unwrap(), "guard/rm-root Bash\n");
    assert!(!dir.join(".no-user-config/hookpack/compiled/rules.hpk").exists());

    // A guard no longer fail-closed leaves the list.
    std::fs::write(dir.join(user_pack), GUARD).unwrap();
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    assert!(!list.exists());
}

#[test]
fn hooks_during_a_compile_answer_from_the_rules() {
    // `compile` renames the new artifact into place, then writes its stamp: a hook in between
    // must not take the artifact for one compiled elsewhere (a fail-closed guard would deny).
    let closed = GUARD
        .replace("reason = \"rm -rf / deletes", "fail = \"closed\"\nreason = \"rm -rf / deletes");
    let dir = project("compile-race", &[(".claude/hookpack/packs/guard.toml", &closed)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let ls = json!({"hook_event_name": "PreToolUse", "session_id": "s", "transcript_path": "/t",
                    "cwd": dir, "tool_name": "Bash", "tool_input": {"command": "ls"},
                    "tool_use_id": "t"});
    let compiler = {
        let dir = dir.clone();
        std::thread::spawn(move || {
            for _ in 0..30 {
                assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
            }
        })
    };
    let mut hooks = 0;
    while !compiler.is_finished() {
        let (_, stdout, stderr) = hook(EventKind::PreToolUse, &dir, &ls);
        assert!(!stdout.contains("deny"), "{stdout}");
        assert_eq!(stderr, "", "hook {hooks}");
        hooks += 1;
    }
    compiler.join().unwrap();
    assert!(hooks > 10, "only {hooks} hooks ran during the compiles");
}

#[test]
fn the_users_builtin_guards_are_listed_too() {
    // The user names the builtin guard pack and has no packs of their own.
    let dir = project(
        "user-builtin-guards",
        &[(".no-user-config/hookpack/hookpack.toml", "builtin = [\"guard\"]\n")],
    );
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let list = dir.join(".no-user-config/hookpack/compiled/fail-closed.txt");
    let listed = std::fs::read_to_string(&list).unwrap();
    assert!(listed.starts_with("guard/"), "{listed}");
    // A `HOOKPACK_DISABLE` in one compile's environment does not take them off the list.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hookpack"))
        .arg("compile")
        .current_dir(&dir)
        .env_clear()
        .env("XDG_CONFIG_HOME", dir.join(".no-user-config"))
        .env("HOOKPACK_DISABLE", "guard/*")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&list).unwrap(), listed);
    // The user turns the pack off: the list goes.
    std::fs::write(dir.join(".no-user-config/hookpack/hookpack.toml"), "").unwrap();
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    assert!(!list.exists());
}

/// A `PreCompact` rule's context is printed as plain text, which Claude Code appends to the
/// compaction instructions.
#[test]
fn pre_compact_context_is_plain_compaction_instructions() {
    const PACK: &str = r#"[pack]
name = "compaction"

[[rule]]
id = "keep-decisions"
on = "PreCompact"
context = "Keep every decision the user stated, word for word."
"#;
    let dir = project("pre-compact", &[(".claude/hookpack/packs/compaction.toml", PACK)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let payload = json!({
        "session_id": "s-compact", "transcript_path": "/nonexistent", "cwd": dir,
        "hook_event_name": "PreCompact", "trigger": "manual", "custom_instructions": ""
    });
    let (status, stdout, stderr) = hook(EventKind::PreCompact, &dir, &payload);
    assert_eq!(status, ExitStatus::Proceed);
    assert_eq!(
        stdout,
        "[hookpack: compaction/keep-decisions]\nKeep every decision the user stated, word for word.\n"
    );
    assert_eq!(stderr, "");
}

/// `hookpack init` sets up a folder that lints, tests and compiles clean, whose `#:schema` lines
/// resolve to the schemas of this build, and whose hooks answer from the starter pack; it never
/// writes over a folder set up already, and keeps the lines a `.gitignore` has.
#[test]
fn init_sets_up_a_folder_ready_to_compile() {
    let dir = project("init", &[(".claude/hookpack/.gitignore", "state/\n*.bak")]);
    let out = hookpack(&dir, &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("hookpack compile"), "{stdout}");
    let folder = dir.join(".claude/hookpack");
    for file in ["hookpack.toml", "packs/project.toml"] {
        let path = folder.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let schema = text.lines().next().unwrap().strip_prefix("#:schema ").unwrap();
        let resolved = path.parent().unwrap().join(schema);
        let name = resolved.file_name().unwrap().to_owned();
        let shipped =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas").join(name);
        assert_eq!(std::fs::read(&resolved).unwrap(), std::fs::read(shipped).unwrap(), "{file}");
    }
    assert_eq!(
        std::fs::read_to_string(folder.join(".gitignore")).unwrap(),
        "state/\n*.bak\ncompiled/\nlocal/\nhookpack.local.toml\n"
    );
    for command in ["lint", "test", "compile"] {
        let out = hookpack(&dir, &[command]);
        assert_eq!(out.status.code(), Some(0), "{command}: {}", text(&out.stderr));
        assert_eq!(text(&out.stderr), "", "{command}");
    }
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
        "transcript_path": "/t", "cwd": "/p", "prompt": "cut the release"});
    let (status, stdout, _) = hook(EventKind::UserPromptSubmit, &dir, &prompt);
    assert_eq!(status, ExitStatus::Proceed);
    assert!(stdout.contains("CHANGELOG.md"), "{stdout}");
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &bash("rm -rf ~"));
    assert!(stdout.contains("\"deny\""), "the builtin guard is on: {stdout}");

    // Set up already: nothing written, exit 1.
    std::fs::write(folder.join("packs/project.toml"), "# mine").unwrap();
    let before = std::fs::read(folder.join("hookpack.toml")).unwrap();
    let out = hookpack(&dir, &["init"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("hookpack.toml exists"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read(folder.join("hookpack.toml")).unwrap(), before);
    assert_eq!(std::fs::read_to_string(folder.join("packs/project.toml")).unwrap(), "# mine");

    // The user's own folder.
    let out = hookpack(&dir, &["init", "--user"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(dir.join(".no-user-config/hookpack/packs/user.toml").is_file());
    let out = hookpack(&dir, &["test", "--user", "-v"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("test user/writing a migration gets the note ... ok"));
}

/// What a cloned repository plants is replaced, never written through: a `.gitignore` or a
/// schema linked elsewhere, a linked `packs` folder (refused). `init` from a subfolder of a
/// repository sets up its root, and a `--project` that does not exist is refused.
#[test]
fn init_writes_through_no_link_and_finds_the_project() {
    let dir = project("init-hostile", &[("outside.txt", "mine\n"), (".git/HEAD", "ref\n")]);
    let folder = dir.join(".claude/hookpack");
    std::fs::create_dir_all(folder.join("schemas")).unwrap();
    std::os::unix::fs::symlink(dir.join("outside.txt"), folder.join(".gitignore")).unwrap();
    std::os::unix::fs::symlink(dir.join("outside.txt"), folder.join("schemas/config.schema.json"))
        .unwrap();
    std::fs::create_dir_all(dir.join("src/deep")).unwrap();
    let out = hookpack(&dir.join("src/deep"), &["init"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(dir.join("outside.txt")).unwrap(), "mine\n");
    let ignore = std::fs::symlink_metadata(folder.join(".gitignore")).unwrap();
    assert!(ignore.file_type().is_symlink(), "left alone, and said so");
    assert!(text(&out.stderr).contains("is not a regular file"), "{}", text(&out.stderr));
    let schema = std::fs::symlink_metadata(folder.join("schemas/config.schema.json")).unwrap();
    assert!(schema.is_file(), "the planted schema link replaced");
    assert!(folder.join("packs/project.toml").is_file(), "set up at the repository's root");
    assert!(!dir.join("src/deep/.claude").exists());

    let linked = project("init-linked-packs", &[]);
    std::os::unix::fs::symlink(&dir, linked.join(".claude/hookpack/packs")).unwrap();
    let out = hookpack(&linked, &["init"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(!linked.join(".claude/hookpack/hookpack.toml").exists(), "nothing written");

    let out = hookpack(&dir, &["init", "--project", "/no/such/folder"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is not a folder"), "{}", text(&out.stderr));
}

/// `hookpack --version` names the release and the build, as every hook does.
#[test]
fn the_command_says_its_version_as_the_hooks_do() {
    let dir = project("version", &[]);
    for flag in ["--version", "-V"] {
        let out = hookpack(&dir, &[flag]);
        assert_eq!(out.status.code(), Some(0));
        assert_eq!(text(&out.stdout), format!("{}\n", hook_runtime::version()));
    }
}

/// Every command says how it is used; `--version` says the hooks' version; a usage error exits
/// 2 wherever it is made; completions are generated.
#[test]
fn every_command_has_help_and_usage_errors_exit_2() {
    let dir = project("cli-help", &[]);
    for command in [
        "init",
        "compile",
        "lint",
        "test",
        "explain",
        "install",
        "uninstall",
        "doctor",
        "import",
        "memory",
        "memory list",
        "memory search",
        "memory forget",
        "memory prune",
        "memory show",
        "memory export",
        "new",
        "new rule",
        "completions",
    ] {
        let mut args: Vec<&str> = command.split(' ').collect();
        args.push("--help");
        let out = hookpack(&dir, &args);
        assert_eq!(out.status.code(), Some(0), "{command}: {}", text(&out.stderr));
        let said = text(&out.stdout);
        assert!(said.contains(&format!("Usage: hookpack {command}")), "{command}: {said}");
    }
    for flag in ["--version", "-V"] {
        let out = hookpack(&dir, &[flag]);
        assert_eq!(text(&out.stdout), format!("{}\n", hook_runtime::version()));
    }
    for args in [
        &[][..],
        &["frob"],
        &["compile", "--frob"],
        &["explain"],
        &["doctor", "--format", "xml"],
        &["install", "--local", "--user"],
        &["memory"],
        &["memory", "search"],
        &["import", "hookify"],
        &["lint", "--project", "a", "--user"],
        &["--user", "lint", "--project", "a"],
        &["--user", "install", "--local"],
        &["test", "-q", "-v"],
        &["-q", "test", "-v"],
        &["new"],
        &["new", "rule", "p/r", "--on", "Stop"],
        &["new", "rule", "p/r", "--on", "Stop", "--message", "a", "--block", "b"],
        &["new", "rule", "p/r", "--on", "PreToolUse", "--flag", "-f", "--deny", "no"],
    ] {
        let out = hookpack(&dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out.stderr));
        let said = text(&out.stderr);
        assert!(said.contains("error:") || said.contains("Usage: hookpack"), "{args:?}: {said}");
    }
    let out = hookpack(&dir, &["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(text(&out.stdout).contains("_hookpack"), "{}", text(&out.stdout));
}

/// `test` and `compile` say how many tests passed; `-v` names each; `-q` says nothing when
/// all is well.
#[test]
fn passing_tests_are_counted_unless_asked_for() {
    let pack = "[pack]\nname = \"p\"\n\n[[rule]]\nid = \"r\"\non = \"UserPromptSubmit\"\nkeywords = [\"x\"]\ncontext = \"c\"\n\n[[test]]\nname = \"fires\"\nevent = { hook_event_name = \"UserPromptSubmit\", prompt = \"x\" }\nexpect = { rules = [\"p/r\"] }\n";
    let dir = project("cli-verbosity", &[(".claude/hookpack/packs/p.toml", pack)]);
    let out = hookpack(&dir, &["test"]);
    assert_eq!(text(&out.stdout), "1 passed, 0 failed\n");
    let out = hookpack(&dir, &["test", "-v"]);
    assert_eq!(text(&out.stdout), "test p/fires ... ok\n1 passed, 0 failed\n");
    let out = hookpack(&dir, &["compile", "--quiet"]);
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), String::new()));
}

/// A `disable` entry that turns off no rule of a pack that is there is a typo: said, with the
/// rule meant; one about a pack that is not there may be for another project: not said.
#[test]
fn a_disable_that_turns_nothing_off_is_said() {
    let config = "builtin = [\"guard\"]\ndisable = [\"guard/rm-rooot\", \"elsewhere/x\"]\n";
    let dir = project("cli-disable-typo", &[(".claude/hookpack/hookpack.toml", config)]);
    let out = hookpack(&dir, &["lint"]);
    assert_eq!(out.status.code(), Some(0));
    let said = text(&out.stderr);
    assert!(
        said.contains("`disable = [\"guard/rm-rooot\"]` turns off no rule: no pack has one of that id; did you mean `guard/rm-root`?"),
        "{said}"
    );
    assert!(!said.contains("[\"elsewhere/x\"]` turns off"), "{said}");
    assert_eq!(said.matches("warning:").count(), 1, "{said}");
}

/// Files meant as packs that are not read are said: another extension in `packs/`, a `.toml`
/// beside the config.
#[test]
fn packs_that_are_not_read_are_said() {
    let dir = project(
        "cli-stray-packs",
        &[
            (".claude/hookpack/packs/api.yaml", "rules: []\n"),
            (".claude/hookpack/api.toml", "[pack]\nname = \"api\"\n"),
        ],
    );
    let out = hookpack(&dir, &["lint"]);
    assert_eq!(out.status.code(), Some(0));
    let said = text(&out.stderr);
    assert!(said.contains("packs/api.yaml is not read: packs are `.toml` files"), "{said}");
    assert!(said.contains("hookpack/api.toml is not read: packs go in"), "{said}");
}

/// A rule that waits for session state no rule in force sets never fires: said at the rule.
#[test]
fn state_nothing_sets_is_said() {
    let pack = r#"[pack]
name = "dead"

[[rule]]
id = "tests-ran"
on = "PostToolUse"
tool = "Bash"
regex = ['\bcargo test\b']
set = { flags = ["tested"] }

# Waits for a flag spelled otherwise than the rule above sets it.
[[rule]]
id = "stop-untested"
on = "Stop"
not_flags = ["tested"]
flags = ["edited"]
decision = "block"
reason = "Run the tests first."

# No rule makes the QA agent active.
[[rule]]
id = "qa-rules"
on = "UserPromptSubmit"
agent = "qa"
context = "Check the acceptance criteria."
"#;
    let dir = project("cli-state-nothing-sets", &[(".claude/hookpack/packs/dead.toml", pack)]);
    let out = hookpack(&dir, &["lint"]);
    assert_eq!(out.status.code(), Some(0));
    let said = text(&out.stderr);
    assert!(said.contains("dead.toml:13:6: warning: rule `dead/stop-untested` never fires: no rule in force sets flag `edited`"), "{said}");
    assert!(
        said.contains("rule `dead/qa-rules` never fires: no rule in force sets agent `qa`"),
        "{said}"
    );
    assert!(!said.contains("`tested`"), "{said}");
}

/// A context longer than the budget of every bracket it can fire in, and not pinned, is dropped
/// each time: said at the rule.
#[test]
fn a_context_over_every_budget_is_said() {
    let long = "x".repeat(12_000);
    let pack = format!(
        "[pack]\nname = \"big\"\n\n[[rule]]\nid = \"wall\"\non = \"UserPromptSubmit\"\ncontext = \"{long}\"\n\n[[rule]]\nid = \"kept\"\non = \"UserPromptSubmit\"\npinned = true\ncontext = \"{long}\"\n"
    );
    let dir = project("cli-over-budget", &[(".claude/hookpack/packs/big.toml", &pack)]);
    let out = hookpack(&dir, &["lint"]);
    let said = text(&out.stderr);
    assert!(said.contains("rule `big/wall` never reaches the model: its context (12021 bytes) is over the budget of every bracket it fires in (at most 10000 bytes)"), "{said}");
    assert!(!said.contains("big/kept"), "{said}");
    // Within a larger budget, nothing to say.
    let config = "[budget]\ncritical = 3100\n";
    std::fs::write(dir.join(".claude/hookpack/hookpack.toml"), config).unwrap();
    let said = text(&hookpack(&dir, &["lint"]).stderr);
    assert!(!said.contains("never reaches"), "{said}");
}

/// `new rule` drafts a rule and its tests, runs them with the pack's own, and appends only what
/// passes; a draft that breaks the pack's tests, or whose near miss fires, writes nothing.
#[test]
fn new_rule_drafts_a_rule_and_tests_that_pass() {
    let dir = project("cli-new-rule", &[(".claude/hookpack/packs/guard.toml", GUARD)]);
    let pack = dir.join(".claude/hookpack/packs/guard.toml");
    let args = [
        "new",
        "rule",
        "guard/no-force-push",
        "--on",
        "PreToolUse",
        "--tool",
        "Bash",
        "--program",
        "git",
        "--subcommand",
        "push",
        "--flag",
        "--force|-f",
        "--deny",
        "Force pushes rewrite shared history; push a new branch instead.",
    ];
    let out = hookpack(&dir, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let written = std::fs::read_to_string(&pack).unwrap();
    assert!(written.starts_with(GUARD), "the pack's text is kept: {written}");
    let added = &written[GUARD.len()..];
    assert_eq!(
        added,
        "\n[[rule]]\nid = 'no-force-push'\non = 'PreToolUse'\ntool = 'Bash'\ncommand = { program = 'git', subcommand = 'push', flags = ['--force|-f'] }\ndecision = 'deny'\nreason = 'Force pushes rewrite shared history; push a new branch instead.'\n\n[[test]]\nname = 'fires: git push --force'\nevent = { hook_event_name = 'PreToolUse', tool_name = 'Bash', tool_input = { command = 'git push --force' } }\nexpect = { rules = ['guard/no-force-push'], decision = 'deny' }\n\n[[test]]\nname = 'not: ls -la'\nevent = { hook_event_name = 'PreToolUse', tool_name = 'Bash', tool_input = { command = 'ls -la' } }\nexpect = { not_rules = ['guard/no-force-push'] }\n"
    );
    assert!(text(&out.stdout).contains("(4 tests pass)"), "{}", text(&out.stdout));
    let out = hookpack(&dir, &["test"]);
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "4 passed, 0 failed\n".to_owned())
    );

    refusals_write_nothing(&dir, &pack, &written);
}

/// What `new rule` refuses (a near miss the rule fires on, a rule that breaks the pack's
/// tests, a name that is no pack name) writes nothing; a new pack is made whole.
fn refusals_write_nothing(dir: &std::path::Path, pack: &std::path::Path, written: &str) {
    // A near miss the rule fires on: nothing written, the failure shown.
    let out = hookpack(
        dir,
        &[
            "new",
            "rule",
            "guard/env",
            "--on",
            "PreToolUse",
            "--tool",
            "Read",
            "--path",
            "**/.env*",
            "--deny",
            "Secrets stay out.",
            "--not-on",
            "config/.env.local",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let said = text(&out.stderr);
    assert!(said.contains("expected `guard/env` not to fire, and it did"), "{said}");
    assert!(said.contains("nothing written"), "{said}");
    // A rule that changes what the pack's own tests expect: nothing written.
    let out = hookpack(
        dir,
        &[
            "new",
            "rule",
            "guard/rm-any",
            "--on",
            "PreToolUse",
            "--tool",
            "Bash",
            "--program",
            "rm",
            "--ask",
            "Deleting: sure?",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("tests the pack had fail"), "{}", text(&out.stderr));
    // A new pack, with its schema line; an event with no text gets its bare payload.
    let out = hookpack(dir, &["new", "rule", "team/done", "--on", "Stop", "--message", "Tests?"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let team = std::fs::read_to_string(dir.join(".claude/hookpack/packs/team.toml")).unwrap();
    assert!(
        team.starts_with("#:schema ../schemas/rule-pack.schema.json\n[pack]\nname = 'team'\n"),
        "{team}"
    );
    assert!(
        team.contains("event = { hook_event_name = 'Stop', stop_hook_active = false }"),
        "{team}"
    );
    // A name that is no pack name never becomes a path.
    for id in ["../escape/x", "guard/../../x", "Guard/x", "guard/", "/x"] {
        let out = hookpack(dir, &["new", "rule", id, "--on", "Stop", "--message", "x"]);
        assert_eq!(out.status.code(), Some(1), "{id}");
        assert!(text(&out.stderr).contains("is not `pack/rule`"), "{id}: {}", text(&out.stderr));
    }
    let packs: Vec<_> = std::fs::read_dir(dir.join(".claude/hookpack/packs")).unwrap().collect();
    assert_eq!(packs.len(), 2, "{packs:?}");
    // Nothing changed by the failures, and `--dry-run` writes nothing.
    assert_eq!(std::fs::read_to_string(pack).unwrap(), written);
    let out = hookpack(
        dir,
        &["new", "rule", "team/x", "--on", "SessionStart", "--context", "x", "--dry-run"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("# would append to"), "{}", text(&out.stdout));
    assert_eq!(
        std::fs::read_to_string(dir.join(".claude/hookpack/packs/team.toml")).unwrap(),
        team
    );
}

/// Signals by the config: `[memory] auto` and `suggest` move what is captured and what
/// suggested, `signals = false` turns the detector off, and `suggest` above `auto` is refused.
#[test]
fn signals_follow_the_memory_config() {
    let decided = "I decided to use PostgreSQL for storage.";
    let answer = |config: &str, name: &str| {
        let dir = project(name, &[(".claude/hookpack/hookpack.toml", config)]);
        let out = hookpack(&dir, &["compile"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
            "transcript_path": "/t", "cwd": "/p", "prompt": decided});
        let (status, stdout, stderr) = hook(EventKind::UserPromptSubmit, &dir, &payload);
        assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
        (stdout, text(&hookpack(&dir, &["memory", "list"]).stdout))
    };
    // The seed's defaults: 0.92 is captured.
    let (stdout, listed) = answer("builtin = [\"memory\"]\n", "signals-default");
    assert!(stdout.contains("hookpack remembered (decisions)"), "{stdout}");
    assert!(listed.contains(decided), "{listed}");
    // Stricter: 0.92 is only suggested.
    let strict = "builtin = [\"memory\"]\n\n[memory]\nauto = 0.95\nsuggest = 0.9\n";
    let (stdout, listed) = answer(strict, "signals-strict");
    assert!(stdout.contains("may be worth keeping in `decisions` (0.92)"), "{stdout}");
    assert!(stdout.contains("`[decision]`"), "{stdout}");
    assert!(listed.starts_with("no memories yet"), "{listed}");
    // Off.
    let off = "builtin = [\"memory\"]\n\n[memory]\nsignals = false\n";
    let (stdout, listed) = answer(off, "signals-off");
    assert!(!stdout.contains("decisions"), "{stdout}");
    assert!(listed.starts_with("no memories yet"), "{listed}");
    // `suggest` above `auto`.
    let wrong = "builtin = [\"memory\"]\n\n[memory]\nauto = 0.7\nsuggest = 0.8\n";
    let dir = project("signals-wrong", &[(".claude/hookpack/hookpack.toml", wrong)]);
    let out = hookpack(&dir, &["lint"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("`suggest = 0.8` is above `auto = 0.7`"),
        "{}",
        text(&out.stderr)
    );
}

/// What a rule blocks is never remembered (before, a prompt blocked for holding a secret was
/// still captured, by its marker or by its signal, and came back at the next prompt): neither
/// captured nor suggested, and the hook says nothing of remembering it.
#[test]
fn a_prompt_a_rule_blocks_is_never_remembered() {
    const SECRETS: &str = r#"[pack]
name = "secrets"

[[rule]]
id = "aws-key"
on = "UserPromptSubmit"
regex = ['AKIA[0-9A-Z]{16}']
decision = "block"
reason = "The prompt holds an AWS access key."
"#;
    let dir = project(
        "memory-blocked",
        &[
            (".claude/hookpack/hookpack.toml", "builtin = [\"memory\"]\n"),
            (".claude/hookpack/packs/secrets.toml", SECRETS),
        ],
    );
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let prompt = |prompt: &str| {
        let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
            "transcript_path": "/t", "cwd": "/p", "prompt": prompt});
        let (status, stdout, stderr) = hook(EventKind::UserPromptSubmit, &dir, &payload);
        assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
        stdout
    };
    for blocked in [
        "[decision] the S3 key is AKIAIOSFODNN7EXAMPLE",
        "I decided to use the key AKIAIOSFODNN7EXAMPLE for S3 uploads.",
        "This is important: AKIAIOSFODNN7EXAMPLE is the key for S3",
    ] {
        let stdout = prompt(blocked);
        assert!(stdout.contains("\"decision\":\"block\""), "{blocked}: {stdout}");
        assert!(!stdout.contains("remember") && !stdout.contains("worth keeping"), "{stdout}");
    }
    let listed = text(&hookpack(&dir, &["memory", "list"]).stdout);
    assert!(listed.starts_with("no memories yet"), "{listed}");
    // What only becomes a key once its private part is gone, and what Claude's reply marks to
    // keep, are not let through either: a memory holds what a prompt may say.
    for split in [
        "[remember] the deploy key is AKIA<private>x</private>IOSFODNN7EXAMPLE for prod",
        "I decided to use AKIA<private>x</private>IOSFODNN7EXAMPLE as the deploy key for prod.",
    ] {
        let stdout = prompt(split);
        assert!(!stdout.contains("\"decision\":\"block\""), "not blocked: {stdout}");
        assert!(!stdout.contains("remembered"), "{split}: {stdout}");
    }
    // The first of them was the session's first prompt not blocked: its title, a key once
    // stripped, is not kept in its books for the next session's index.
    let start = json!({"hook_event_name": "SessionStart", "session_id": "s2",
        "transcript_path": "/t", "cwd": "/p", "source": "startup"});
    let (_, stdout, _) = hook(EventKind::SessionStart, &dir, &start);
    assert!(!stdout.contains("AKIA"), "{stdout}");
    let stop = json!({"hook_event_name": "Stop", "session_id": "s", "transcript_path": "/t",
        "cwd": "/p", "stop_hook_active": false,
        "last_assistant_message": "Done.\n\n[decision] The deploy key is AKIAIOSFODNN7EXAMPLE."});
    let (status, stdout, stderr) = hook(EventKind::Stop, &dir, &stop);
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    assert!(!stdout.contains("remembered"), "{stdout}");
    let listed = text(&hookpack(&dir, &["memory", "list"]).stdout);
    assert!(listed.starts_with("no memories yet"), "{listed}");
    // The same words without the key are remembered, and nothing of the key comes back.
    let stdout = prompt("I decided to use the deploy key from the vault for S3 uploads.");
    assert!(stdout.contains("hookpack remembered (decisions)"), "{stdout}");
    let stdout = prompt("which deploy key do we use for S3 uploads?");
    assert!(!stdout.contains("AKIA"), "{stdout}");
    let listed = text(&hookpack(&dir, &["memory", "list"]).stdout);
    assert!(!listed.contains("AKIA") && listed.contains("from the vault"), "{listed}");
}

/// A memory stored before a rule that blocks it existed is forgotten when the rule is compiled
/// (before, the next prompt's recall gave it back).
#[test]
fn compiling_a_rule_forgets_the_memories_it_blocks() {
    let dir = project(
        "memory-blocked-later",
        &[(".claude/hookpack/hookpack.toml", "builtin = [\"memory\"]\n")],
    );
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let prompt = |prompt: &str| {
        let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
            "transcript_path": "/t", "cwd": "/p", "prompt": prompt});
        hook(EventKind::UserPromptSubmit, &dir, &payload).1
    };
    let stdout = prompt("[remember] the S3 deploy key is AKIAIOSFODNN7EXAMPLE");
    assert!(stdout.contains("remembered"), "{stdout}");
    let stdout = prompt("[remember] the S3 bucket is acme-uploads");
    assert!(stdout.contains("remembered"), "{stdout}");
    let pack = "[pack]\nname = \"secrets\"\n\n[[rule]]\nid = \"aws-key\"\non = \"UserPromptSubmit\"\n\
                regex = ['AKIA[0-9A-Z]{16}']\ndecision = \"block\"\nreason = \"A key.\"\n";
    std::fs::create_dir_all(dir.join(".claude/hookpack/packs")).unwrap();
    std::fs::write(dir.join(".claude/hookpack/packs/secrets.toml"), pack).unwrap();
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("forgot 1 memory that a rule now blocks"),
        "{}",
        text(&out.stdout)
    );
    let listed = text(&hookpack(&dir, &["memory", "list"]).stdout);
    assert!(!listed.contains("AKIA") && listed.contains("acme-uploads"), "{listed}");
    let stdout = prompt("which S3 deploy key and bucket do we use?");
    assert!(!stdout.contains("AKIA"), "{stdout}");
    // Nor does the first session's title, kept in its books before the rule, come back in the
    // next session's index: its line is left out, and said to be.
    let start = json!({"hook_event_name": "SessionStart", "session_id": "s2",
        "transcript_path": "/t", "cwd": "/p", "source": "startup"});
    let (_, stdout, stderr) = hook(EventKind::SessionStart, &dir, &start);
    assert_eq!(stderr, "");
    assert!(stdout.contains("acme-uploads") && !stdout.contains("AKIA"), "{stdout}");
    assert!(stdout.contains("a rule of the project blocks as a prompt is left out"), "{stdout}");
}

/// `[memory] max`: a hook that stores a memory past it removes the oldest; `memory prune` does
/// the same at once, with the config's limits or its own, and `--dry-run` says what would go.
#[test]
fn memories_are_kept_within_the_configured_limits() {
    let config = "builtin = [\"memory\"]\n\n[memory]\nmax = 3\n";
    let dir = project("memory-limits", &[(".claude/hookpack/hookpack.toml", config)]);
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    for i in 1..=5 {
        let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
            "transcript_path": "/t", "cwd": "/p", "prompt": format!("[decision] fact number {i}")});
        let (status, _, stderr) = hook(EventKind::UserPromptSubmit, &dir, &payload);
        assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    }
    let listed = text(&hookpack(&dir, &["memory", "list"]).stdout);
    let ids: Vec<&str> = listed.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert_eq!(ids, ["#5", "#4", "#3"], "{listed}");

    let out = hookpack(&dir, &["memory", "prune", "--max", "1", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "would remove 2 memories (past the newest 1)\n  #3\n  #4\n");
    let out = hookpack(&dir, &["memory", "prune"]);
    assert_eq!(text(&out.stdout), "removed 0 memories (past the newest 3)\n");
    let out = hookpack(&dir, &["memory", "prune", "--max", "1"]);
    assert_eq!(text(&out.stdout), "removed 2 memories (past the newest 1)\n");
    let listed = text(&hookpack(&dir, &["memory", "list"]).stdout);
    assert!(listed.starts_with("#5 ") && listed.lines().count() == 1, "{listed}");
    assert_eq!(hookpack(&dir, &["memory", "prune", "--max", "x"]).status.code(), Some(2));
}

/// A session through the hooks with the builtin `memory` pack: an unmarked decision is captured
/// (0.92), a weaker signal suggested to Claude with its marker, which Claude's reply then uses
/// (kept at `Stop`); before a compaction the transcript's sure signals are captured, and the
/// handoff after it names them.
#[test]
fn a_session_keeps_its_signals_and_hands_them_over_a_compaction() {
    let dir = project(
        "memory-session",
        &[(".claude/hookpack/hookpack.toml", "builtin = [\"memory\"]\n")],
    );
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let transcript = dir.join("transcript.jsonl");
    let event = |fields: serde_json::Value| {
        let mut payload = json!({"session_id": "s1", "transcript_path": transcript, "cwd": dir});
        payload.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        payload
    };
    let prompt = |text: &str| {
        let payload = event(json!({"hook_event_name": "UserPromptSubmit", "prompt": text}));
        let (status, stdout, stderr) = hook(EventKind::UserPromptSubmit, &dir, &payload);
        assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
        stdout
    };
    let said = prompt("I decided to use PostgreSQL for storage.");
    assert!(
        said.contains("hookpack remembered (decisions): I decided to use PostgreSQL for storage."),
        "{said}"
    );
    let said = prompt("This is important: never push to main");
    assert!(said.contains("may be worth keeping in `learnings` (0.80)"), "{said}");
    assert!(said.contains("`[learning]`"), "{said}");
    // Claude keeps it as the suggestion says.
    let stop = event(json!({"hook_event_name": "Stop", "stop_hook_active": false,
        "last_assistant_message": "Understood.\n\n[learning] Never push to main; open a pull request."}));
    let (status, said, stderr) = hook(EventKind::Stop, &dir, &stop);
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    assert!(said.contains("hookpack remembered (learnings): Never push to main"), "{said}");

    // The conversation before a compaction, as Claude Code writes it.
    let lines = [
        json!({"type": "user", "message": {"role": "user", "content": "Why does login fail on staging?"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I decided to ignore this."},
            {"type": "text", "text": "We are blocked by the auth service on staging: its certificate expired."},
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "curl staging"}}]}}),
        json!({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "TIL nothing"}]}}),
        json!({"type": "user", "isSidechain": true, "message": {"role": "user", "content": "We went with a sidechain."}}),
    ];
    let jsonl = lines.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n") + "\n";
    std::fs::write(&transcript, jsonl).unwrap();
    let compact = event(
        json!({"hook_event_name": "PreCompact", "trigger": "auto", "custom_instructions": ""}),
    );
    let (status, said, stderr) = hook(EventKind::PreCompact, &dir, &compact);
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    assert!(!said.contains("worth keeping"), "{said}");
    let after = event(json!({"hook_event_name": "SessionStart", "source": "compact"}));
    let (status, said, stderr) = hook(EventKind::SessionStart, &dir, &after);
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    assert!(said.contains("captured in this session"), "{said}");
    assert!(
        said.contains("] We are blocked by the auth service on staging: its certificate expired."),
        "{said}"
    );

    the_next_session_sees_what_this_one_did(&dir, &transcript);

    let listed = text(&hookpack(&dir, &["memory", "list"]).stdout);
    for kept in
        ["I decided to use PostgreSQL", "Never push to main", "We are blocked by the auth service"]
    {
        assert!(listed.contains(kept), "{kept}: {listed}");
    }
    for not_kept in ["This is important", "ignore this", "TIL nothing", "sidechain"] {
        assert!(!listed.contains(not_kept), "{not_kept}: {listed}");
    }
}

/// Session `s1`'s tool calls are observed, and session `s2` starts with an index naming them
/// (with what `s1` kept), whose details `memory show session:s1` gives, private parts removed.
fn the_next_session_sees_what_this_one_did(dir: &std::path::Path, transcript: &std::path::Path) {
    // What the session did, for the next one's index.
    let tool = |kind: EventKind, name: &str, input: serde_json::Value, extra: serde_json::Value| {
        let mut fields = json!({"hook_event_name": kind.as_str(), "tool_name": name,
            "tool_input": input, "tool_use_id": "t"});
        fields.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let mut payload = json!({"session_id": "s1", "transcript_path": transcript, "cwd": dir});
        payload.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        let (status, _, stderr) = hook(kind, dir, &payload);
        assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    };
    let post = EventKind::PostToolUse;
    let response = json!({"tool_response": {}});
    let file = dir.join("src/auth.rs");
    tool(post, "Read", json!({"file_path": file}), response.clone());
    let edit = json!({"file_path": file, "old_string": "a", "new_string": "b"});
    tool(post, "Edit", edit, response.clone());
    let secret = json!({"command": "cargo test --token <private>s3cret</private>"});
    tool(post, "Bash", secret, response.clone());
    tool(post, "TodoWrite", json!({"todos": []}), response);
    let error = json!({"error": "error[E0308]: mismatched types"});
    tool(EventKind::PostToolUseFailure, "Bash", json!({"command": "cargo build"}), error);
    let next = json!({"hook_event_name": "SessionStart", "source": "startup", "session_id": "s2",
        "transcript_path": transcript, "cwd": dir});
    let (status, said, stderr) = hook(EventKind::SessionStart, dir, &next);
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    assert!(said.contains("Recent sessions in this project"), "{said}");
    // (The test's folder may be inside a git checkout: the branch, if any, is named between.)
    let line = "\\\"I decided to use PostgreSQL for storage.\\\" — edited src/auth.rs; \
                ran 1 command; 1 failed (last: cargo build: error[E0308]: mismatched types)";
    assert!(said.contains("session:s1 ") && said.contains(line), "{said}");
    assert!(said.contains("kept [blockers #"), "{said}");
    let out = hookpack(dir, &["memory", "show", "session:s1"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    for line in [
        "edited:\n  src/auth.rs",
        "read:\n  src/auth.rs",
        "commands: 1",
        "  cargo test --token",
        "failed:\n  cargo build: error[E0308]",
        "tools:    TodoWrite ×1",
    ] {
        assert!(shown.contains(line), "{line}: {shown}");
    }
    assert!(!shown.contains("s3cret"), "{shown}");
}

/// A rule the user turns on (`export = true` on `SessionStart`) writes the conventions into
/// CLAUDE.md at the start of a session, and says so; once written, nothing more is said.
#[test]
fn a_session_start_rule_exports_conventions_when_turned_on() {
    let pack = "[pack]\nname = \"team\"\n\n[[rule]]\nid = \"export\"\non = \"SessionStart\"\nexport = true\n";
    let dir = project(
        "memory-export-rule",
        &[
            (".claude/hookpack/hookpack.toml", "builtin = [\"memory\"]\n"),
            (".claude/hookpack/packs/team.toml", pack),
            ("CLAUDE.md", "# Acme\n"),
        ],
    );
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let event = |fields: serde_json::Value| {
        let mut payload = json!({"session_id": "s", "transcript_path": "/t", "cwd": dir});
        payload.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        payload
    };
    let start = event(json!({"hook_event_name": "SessionStart", "source": "startup"}));
    let (status, said, stderr) = hook(EventKind::SessionStart, &dir, &start);
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    assert!(!said.contains("CLAUDE.md"), "no memories yet: {said}");
    let prompt = event(
        json!({"hook_event_name": "UserPromptSubmit", "prompt": "Always use pnpm, never npm."}),
    );
    let (status, _, stderr) = hook(EventKind::UserPromptSubmit, &dir, &prompt);
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    let (status, said, stderr) = hook(EventKind::SessionStart, &dir, &start);
    assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    assert!(said.contains("hookpack wrote 1 conventions into CLAUDE.md"), "{said}");
    let claude = std::fs::read_to_string(dir.join("CLAUDE.md")).unwrap();
    assert!(claude.starts_with("# Acme\n\n<!-- hookpack:start -->"), "{claude}");
    assert!(claude.contains("- Always use pnpm, never npm."), "{claude}");
    let (_, said, _) = hook(EventKind::SessionStart, &dir, &start);
    assert!(!said.contains("CLAUDE.md"), "nothing changed, nothing said: {said}");
    // A link at CLAUDE.md is not written through: the hook says why, the session goes on.
    std::fs::remove_file(dir.join("CLAUDE.md")).unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere.md"), dir.join("CLAUDE.md")).unwrap();
    let (status, _, stderr) = hook(EventKind::SessionStart, &dir, &start);
    assert_eq!(status, ExitStatus::Proceed);
    assert!(stderr.contains("memory export failed"), "{stderr}");
    assert!(!dir.join("elsewhere.md").exists());
}

/// A convention said in a prompt is kept (the builtin `memory` pack), and `memory export` puts
/// it between hookpack's markers in CLAUDE.md (the rest of the file untouched), one naming a
/// folder in `.claude/rules/`; run twice, nothing changes; a link at CLAUDE.md is not written
/// through.
#[test]
fn conventions_said_in_prompts_are_exported_to_claude_md() {
    let dir = project(
        "memory-export",
        &[
            (".claude/hookpack/hookpack.toml", "builtin = [\"memory\"]\n"),
            ("CLAUDE.md", "# Acme\n\nRead docs/ first.\n"),
            ("src/api/handlers.ts", ""),
        ],
    );
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    for said in [
        "Always use pnpm, never npm, in this repository.",
        "Never use var in src/api handlers.",
        "fix the login bug",
    ] {
        let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
            "transcript_path": "/t", "cwd": "/p", "prompt": said});
        let (status, _, stderr) = hook(EventKind::UserPromptSubmit, &dir, &payload);
        assert_eq!((status, stderr.as_str()), (ExitStatus::Proceed, ""));
    }
    let out = hookpack(&dir, &["memory", "export", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let diff = text(&out.stdout);
    assert!(diff.contains("+- Always use pnpm, never npm, in this repository."), "{diff}");
    assert_eq!(
        std::fs::read_to_string(dir.join("CLAUDE.md")).unwrap(),
        "# Acme\n\nRead docs/ first.\n"
    );

    let out = hookpack(&dir, &["memory", "export"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "1 conventions in CLAUDE.md, 1 folders in .claude/rules/: changed 2 files\n"
    );
    let claude = std::fs::read_to_string(dir.join("CLAUDE.md")).unwrap();
    assert_eq!(
        claude,
        "# Acme\n\nRead docs/ first.\n\n<!-- hookpack:start -->\n\n## Conventions (kept by hookpack)\n\n- Always use pnpm, never npm, in this repository.\n<!-- hookpack:end -->\n"
    );
    let rule = std::fs::read_to_string(dir.join(".claude/rules/hookpack-src--api.md")).unwrap();
    assert!(rule.starts_with("---\npaths:\n  - \"src/api/**\"\n---\n"), "{rule}");
    assert!(rule.contains("- Never use var in src/api handlers."), "{rule}");
    let out = hookpack(&dir, &["memory", "export"]);
    assert_eq!(
        text(&out.stdout),
        "1 conventions in CLAUDE.md, 1 folders in .claude/rules/: changed 0 files\n"
    );

    // Forgotten, the folder's file goes; the user's own rule files stay.
    std::fs::write(dir.join(".claude/rules/hookpack-mine.md"), "my own\n").unwrap();
    let listed = text(&hookpack(&dir, &["memory", "list"]).stdout);
    let id = listed
        .lines()
        .find(|l| l.contains("Never use var"))
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(hookpack(&dir, &["memory", "forget", &id]).status.code(), Some(0));
    assert_eq!(hookpack(&dir, &["memory", "export"]).status.code(), Some(0));
    assert!(!dir.join(".claude/rules/hookpack-src--api.md").exists());
    assert!(dir.join(".claude/rules/hookpack-mine.md").exists());

    // A user's file at the name a folder's conventions would take is left alone.
    let mine = "my own rules for src/api\n";
    std::fs::write(dir.join(".claude/rules/hookpack-src--api.md"), mine).unwrap();
    let payload = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
        "transcript_path": "/t", "cwd": "/p", "prompt": "Never use any in src/api types."});
    let (status, _, _) = hook(EventKind::UserPromptSubmit, &dir, &payload);
    assert_eq!(status, ExitStatus::Proceed);
    let out = hookpack(&dir, &["memory", "export"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("is not one `memory export` wrote: left as it is"));
    assert_eq!(
        std::fs::read_to_string(dir.join(".claude/rules/hookpack-src--api.md")).unwrap(),
        mine
    );

    // `.claude/rules` a link: nothing written at all, CLAUDE.md included.
    let elsewhere = dir.join("elsewhere");
    std::fs::rename(dir.join(".claude/rules"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join(".claude/rules")).unwrap();
    std::fs::write(dir.join("CLAUDE.md"), "changed\n").unwrap();
    let out = hookpack(&dir, &["memory", "export"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("is not a real folder; nothing written"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(dir.join("CLAUDE.md")).unwrap(), "changed\n");
    std::fs::remove_file(dir.join(".claude/rules")).unwrap();

    // A link at CLAUDE.md: refused, its target untouched.
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "keep\n").unwrap();
    std::fs::remove_file(dir.join("CLAUDE.md")).unwrap();
    std::os::unix::fs::symlink(&secret, dir.join("CLAUDE.md")).unwrap();
    let out = hookpack(&dir, &["memory", "export"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("is not a regular file"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "keep\n");
}

/// A `branch` rule answers by the branch checked out, read from `.git/HEAD` (a worktree's too),
/// and `explain` says which branch it read.
#[test]
fn branch_rules_follow_git_head() {
    let pack = "[pack]\nname = \"b\"\n\n[[rule]]\nid = \"features\"\non = \"UserPromptSubmit\"\nbranch = \"feature/*\"\ncontext = \"On a feature branch ({issue}).\"\n";
    let dir = project(
        "branch",
        &[
            (".claude/hookpack/packs/b.toml", pack),
            (".claude/hookpack/hookpack.toml", "builtin = []\n"),
            (".git/HEAD", "ref: refs/heads/feature/42-login\n"),
        ],
    );
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s",
        "transcript_path": "/t", "cwd": "/p", "prompt": "go"});
    let (_, stdout, _) = hook(EventKind::UserPromptSubmit, &dir, &prompt);
    assert!(stdout.contains("On a feature branch (42)."), "{stdout}");
    let said = text(&hookpack(&dir, &["explain", "--prompt", "go"]).stdout);
    assert!(said.contains("branch: `feature/42-login`"), "{said}");

    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let (_, stdout, _) = hook(EventKind::UserPromptSubmit, &dir, &prompt);
    assert!(!stdout.contains("On a feature branch"), "{stdout}");
    let said = text(&hookpack(&dir, &["explain", "--prompt", "go"]).stdout);
    assert!(
        said.contains("b/features  `branch`: the branch is `main`, not one of `feature/*`"),
        "{said}"
    );
}

/// `{prompt_count}` alone makes the hooks count prompts: a prompt rule and a tool rule both
/// say how many prompts the session has had.
#[test]
fn prompt_count_is_counted_for_the_rules_that_say_it() {
    let pack = "[pack]\nname = \"c\"\n\n[[rule]]\nid = \"prompt\"\non = \"UserPromptSubmit\"\nkeywords = [\"count\"]\ncontext = \"prompt {prompt_count}\"\n\n[[rule]]\nid = \"tool\"\non = \"PostToolUse\"\ntool = \"Bash\"\ncontext = \"after prompt {prompt_count} in {session_id}\"\n";
    let dir = project(
        "prompt-count",
        &[
            (".claude/hookpack/packs/c.toml", pack),
            (".claude/hookpack/hookpack.toml", "builtin = []\n"),
        ],
    );
    assert_eq!(hookpack(&dir, &["compile"]).status.code(), Some(0));
    let prompt = |text: &str| {
        json!({"hook_event_name": "UserPromptSubmit", "session_id": "s7", "transcript_path": "/t",
               "cwd": "/p", "prompt": text})
    };
    hook(EventKind::UserPromptSubmit, &dir, &prompt("hello"));
    let (_, stdout, _) = hook(EventKind::UserPromptSubmit, &dir, &prompt("count them"));
    assert!(stdout.contains("prompt 2"), "{stdout}");
    let tool = json!({"hook_event_name": "PostToolUse", "session_id": "s7", "transcript_path": "/t",
        "cwd": "/p", "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_response": {}});
    let (_, stdout, _) = hook(EventKind::PostToolUse, &dir, &tool);
    assert!(stdout.contains("after prompt 2 in s7"), "{stdout}");
}
