//! `hookpack doctor` on a healthy project and on each thing that can go wrong: the artifact
//! missing, stale, corrupt or foreign; the database damaged, empty or read-only; a fail-closed
//! guard denying because the rules cannot be read. Each names the cause and the fix.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use hook_model::EventKind;
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
fail = "closed"
reason = "rm -rf / deletes the whole system."

[[rule]]
id = "count"
on = "UserPromptSubmit"
every = 2
context = "A reminder every other prompt."

[[rule]]
id = "recall"
on = "UserPromptSubmit"
recall = { from = "prompt" }
"#;

/// A compiled project that has seen one prompt (so it has a session's state).
fn healthy(name: &str) -> std::path::PathBuf {
    let dir = project(name, &[(".claude/hookpack/packs/guard.toml", GUARD)]);
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s1",
                        "transcript_path": "/t", "cwd": dir, "prompt": "hello"});
    let (_, _, stderr) = hook(EventKind::UserPromptSubmit, &dir, &prompt);
    assert_eq!(stderr, "");
    dir
}

fn artifact(dir: &Path) -> std::path::PathBuf {
    dir.join(".claude/hookpack/compiled/rules.hpk")
}

fn database(dir: &Path) -> std::path::PathBuf {
    dir.join(".claude/hookpack/state/hookpack.db")
}

/// Runs `hookpack doctor` and pins its output; returns the exit code.
fn doctor(name: &str, dir: &Path, args: &[&str]) -> i32 {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    let out = hookpack(dir, &all);
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/doctor-[a-z-]+", "[PROJECT]");
    settings.add_filter(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC", "[TIME]");
    settings.add_filter(r"CRC [0-9a-f]{8}, expected [0-9a-f]{8}", "CRC [CRC]");
    settings.add_filter(r"aside-[0-9.]+-[0-9]+", "aside-[STAMP]");
    settings.add_filter(r"this hook reads format \d+", "this hook reads format [FORMAT_VERSION]");
    let code = out.status.code().unwrap();
    settings.bind(|| {
        insta::assert_snapshot!(
            format!("doctor@{name}"),
            format!("exit {code}\n{}{}", text(&out.stdout), text(&out.stderr))
        );
    });
    code
}

#[test]
fn a_healthy_project() {
    let dir = healthy("doctor-healthy");
    assert_eq!(doctor("healthy", &dir, &[]), 0);
    assert_eq!(doctor("healthy-json", &dir, &["--format", "json"]), 0);
}

#[test]
fn artifact_problems_name_the_cause_and_the_fix() {
    let dir = healthy("doctor-artifact");
    let good = std::fs::read(artifact(&dir)).unwrap();

    std::fs::remove_file(artifact(&dir)).unwrap();
    assert_eq!(doctor("artifact-missing", &dir, &[]), 1);

    let mut corrupt = good.clone();
    let at = corrupt.len() - 9;
    corrupt[at] ^= 0x40;
    std::fs::write(artifact(&dir), &corrupt).unwrap();
    assert_eq!(doctor("artifact-corrupt", &dir, &[]), 1);

    std::fs::write(artifact(&dir), "#!/bin/sh\necho this is no artifact\n".repeat(4)).unwrap();
    assert_eq!(doctor("artifact-foreign", &dir, &[]), 1);

    // The right bytes, but not written here by `hookpack compile`: committed or copied.
    std::fs::write(artifact(&dir), &good).unwrap();
    assert_eq!(doctor("artifact-not-compiled-here", &dir, &[]), 1);

    assert!(hookpack(&dir, &["compile"]).status.success());
    let pack = dir.join(".claude/hookpack/packs/guard.toml");
    std::fs::write(&pack, GUARD.replace("every other prompt", "second prompt")).unwrap();
    assert_eq!(doctor("artifact-stale", &dir, &[]), 1);
}

#[test]
fn database_problems_name_the_cause_and_the_fix() {
    let dir = healthy("doctor-database");
    let state = dir.join(".claude/hookpack/state");

    std::fs::write(database(&dir), b"").unwrap();
    assert_eq!(doctor("database-empty", &dir, &[]), 1);

    std::fs::write(database(&dir), b"this is not a database, only a file with text in it\n")
        .unwrap();
    assert_eq!(doctor("database-damaged", &dir, &[]), 1);

    // The next hook that recalls sets the damaged file aside and starts afresh; doctor lists
    // the copy.
    let prompt = json!({"hook_event_name": "UserPromptSubmit", "session_id": "s2",
                        "transcript_path": "/t", "cwd": dir, "prompt": "hello"});
    hook(EventKind::UserPromptSubmit, &dir, &prompt);
    assert_eq!(doctor("database-set-aside", &dir, &[]), 0);

    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o555)).unwrap();
    let code = doctor("database-read-only", &dir, &[]);
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(code, 1);
}

#[test]
fn a_fail_closed_guard_denying_says_why_and_how_to_get_out() {
    let dir = healthy("doctor-fail-closed");
    let mut bytes = std::fs::read(artifact(&dir)).unwrap();
    // Written by another version of hookpack, as after an upgrade.
    bytes[8] = 3;
    std::fs::write(artifact(&dir), &bytes).unwrap();
    let ls = json!({"hook_event_name": "PreToolUse", "session_id": "s1", "transcript_path": "/t",
                    "cwd": dir, "tool_name": "Bash", "tool_input": {"command": "ls"}});
    let (_, stdout, _) = hook(EventKind::PreToolUse, &dir, &ls);
    assert!(stdout.contains(r#""permissionDecision":"deny""#), "{stdout}");
    assert_eq!(doctor("fail-closed-denying", &dir, &[]), 1);
    assert_eq!(doctor("fail-closed-denying-json", &dir, &["--format", "json"]), 1);
}
