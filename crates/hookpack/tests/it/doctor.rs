//! `hookpack doctor` on a healthy project and on each thing that can go wrong: the artifact
//! missing, stale, corrupt or foreign; the database damaged, empty or read-only; a fail-closed
//! guard denying because the rules cannot be read. Each names the cause and the fix.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use hook_model::EventKind;
use serde_json::json;

use crate::{bin_dir, fake_bin, hook, hookpack, hookpack_with, project, text};

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

/// A compiled project that has seen one prompt (so it has a session's state), its hooks wired
/// (to `bin/`, on the `PATH` doctor runs with) and its state ignored by git.
fn healthy(name: &str) -> std::path::PathBuf {
    let ignored = "compiled/\nstate/\nlocal/\nhookpack.local.toml\n";
    let dir = project(
        name,
        &[(".claude/hookpack/packs/guard.toml", GUARD), (".claude/hookpack/.gitignore", ignored)],
    );
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let bin = fake_bin(&dir);
    let out = hookpack(&dir, &["install", "--hooks", bin.to_str().unwrap()]);
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

/// Runs `hookpack doctor` (with the project's `bin/` and the system's folders on `PATH`) and
/// pins its output; returns the exit code.
fn doctor(name: &str, dir: &Path, args: &[&str]) -> i32 {
    let path = std::path::PathBuf::from(format!("{}:/usr/bin:/bin", bin_dir(dir).display()));
    doctor_with(name, dir, args, &[("PATH", &path)])
}

fn doctor_with(name: &str, dir: &Path, args: &[&str], env: &[(&str, &Path)]) -> i32 {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    let out = hookpack_with(dir, &all, env);
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/doctor-[a-z-]+", "[PROJECT]");
    settings.add_filter(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC", "[TIME]");
    settings.add_filter(r"CRC [0-9a-f]{8}, expected [0-9a-f]{8}", "CRC [CRC]");
    settings.add_filter(r"aside-[0-9.]+-[0-9]+", "aside-[STAMP]");
    settings.add_filter(r"this hook reads format \d+", "this hook reads format [FORMAT_VERSION]");
    settings.add_filter(r"fingerprint [0-9a-f]{16}", "fingerprint [FINGERPRINT]");
    settings.add_filter(r"in \d+ ms", "in [N] ms");
    // The compiled rules name their sources' paths: their size depends on where the tests run.
    settings.add_filter(r"\(\d+ bytes\)", "([N] bytes)");
    settings.add_filter(r"\[TMP\]/hookpack-cli-bin/doctor-[a-z-]+", "[HOOKS]");
    let bin = Path::new(env!("CARGO_BIN_EXE_hookpack")).parent().unwrap();
    settings.add_filter(&regex_escape(&bin.display().to_string()), "[BIN]");
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

/// `.claude/settings.json` changed by `change`.
fn edit_settings(dir: &Path, change: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join(".claude/settings.json");
    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    change(&mut value);
    std::fs::write(path, serde_json::to_string_pretty(&value).unwrap()).unwrap();
}

fn entry(dir: &Path, binary: &str) -> serde_json::Value {
    json!([{"hooks": [{"type": "command", "command": bin_dir(dir).join(binary)}]}])
}

#[test]
fn setup_problems_name_the_cause_and_the_fix() {
    let dir = healthy("doctor-setup");
    let settings = dir.join(".claude/settings.json");
    let good = std::fs::read_to_string(&settings).unwrap();
    let restore = || std::fs::write(&settings, &good).unwrap();

    std::fs::remove_file(&settings).unwrap();
    assert_eq!(doctor("hooks-none", &dir, &[]), 1);

    restore();
    edit_settings(&dir, |v| {
        v["hooks"].as_object_mut().unwrap().remove("UserPromptSubmit");
    });
    assert_eq!(doctor("hooks-missing-event", &dir, &[]), 1);

    restore();
    edit_settings(&dir, |v| v["hooks"]["PreToolUse"][0]["matcher"] = json!("Write"));
    assert_eq!(doctor("hooks-narrow-matcher", &dir, &[]), 1);

    restore();
    edit_settings(&dir, |v| v["hooks"]["Notification"] = entry(&dir, "hookpack-notification"));
    assert_eq!(doctor("hooks-extra-event", &dir, &[]), 0);

    restore();
    edit_settings(&dir, |v| v["hooks"]["WorktreeCreate"] = entry(&dir, "hookpack-worktree-create"));
    assert_eq!(doctor("hooks-worktree", &dir, &[]), 1);

    restore();
    edit_settings(&dir, |v| v["hooks"]["PreToolUse"] = entry(&dir, "hookpack-stop"));
    assert_eq!(doctor("hooks-wrong-binary", &dir, &[]), 1);

    // Wired again by hand in the local settings, by name: it runs twice.
    restore();
    let local = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "hookpack-user-prompt-submit"}]}]}});
    std::fs::write(dir.join(".claude/settings.local.json"), local.to_string()).unwrap();
    assert_eq!(doctor("hooks-twice", &dir, &[]), 0);
    std::fs::remove_file(dir.join(".claude/settings.local.json")).unwrap();

    std::fs::write(&settings, "{\n  // mine\n  \"hooks\": {}\n}\n").unwrap();
    assert_eq!(doctor("settings-not-json", &dir, &[]), 1);

    restore();
    edit_settings(&dir, |v| {
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"] =
            json!(format!("\"$HOME\"/gone/bin/hookpack-pre-tool-use"));
    });
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hookpack-cli-home");
    let path = std::path::PathBuf::from(format!("{}:/usr/bin:/bin", bin_dir(&dir).display()));
    let env = [("PATH", path.as_path()), ("HOME", home.as_path())];
    assert_eq!(doctor_with("binary-missing", &dir, &[], &env), 1);

    restore();
    let other = bin_dir(&dir).join("hookpack-pre-tool-use");
    let script = std::fs::read_to_string(&other).unwrap();
    std::fs::write(&other, "#!/bin/sh\necho 'hookpack 0.0.1 (fingerprint 0000000000000001)'\n")
        .unwrap();
    assert_eq!(doctor("binary-other-version", &dir, &[]), 1);
    std::fs::write(&other, script).unwrap();

    // A repository's own file named as a hook: doctor does not run it.
    restore();
    let planted = dir.join("tools/hookpack-pre-tool-use");
    std::fs::create_dir_all(planted.parent().unwrap()).unwrap();
    let marker = dir.join("ran");
    std::fs::write(&planted, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
    edit_settings(&dir, |v| {
        v["hooks"]["PreToolUse"][0]["hooks"][0]["command"] =
            json!("\"$CLAUDE_PROJECT_DIR\"/tools/hookpack-pre-tool-use");
    });
    assert_eq!(doctor("binary-in-project", &dir, &[]), 1);
    assert!(!marker.exists());
    restore();

    // hookpack itself not on PATH: the hooks still run (their commands are paths).
    let path = std::path::PathBuf::from("/usr/bin:/bin");
    assert_eq!(doctor_with("path-missing", &dir, &[], &[("PATH", &path)]), 0);

    // hookpack's plugin enabled: it wires the events itself; beside the settings' entries, twice.
    std::fs::write(&settings, r#"{"enabledPlugins": {"hookpack@hookpack": true}}"#).unwrap();
    assert_eq!(doctor("plugin", &dir, &[]), 0);
    restore();
    edit_settings(&dir, |v| v["enabledPlugins"] = json!({"hookpack@hookpack": true}));
    assert_eq!(doctor("plugin-and-settings", &dir, &[]), 0);
    restore();

    std::fs::write(dir.join(".claude/hookpack/packs/extra.yaml"), "rules: []\n").unwrap();
    assert_eq!(doctor("pack-file-ignored", &dir, &[]), 0);
    std::fs::remove_file(dir.join(".claude/hookpack/packs/extra.yaml")).unwrap();

    // A repository of its own that does not ignore the state.
    let git = std::process::Command::new("git").arg("init").arg("-q").arg(&dir).status();
    assert!(git.is_ok_and(|s| s.success()));
    std::fs::remove_file(dir.join(".claude/hookpack/.gitignore")).unwrap();
    assert_eq!(doctor("gitignore-missing", &dir, &[]), 1);
}

#[test]
fn fix_repairs_what_is_safe_to_repair() {
    let dir = healthy("doctor-fix");
    let good = std::fs::read_to_string(dir.join(".claude/settings.json")).unwrap();
    edit_settings(&dir, |v| {
        let hooks = v["hooks"].as_object_mut().unwrap();
        hooks.remove("PreToolUse");
        hooks.insert("WorktreeCreate".into(), entry(&dir, "hookpack-worktree-create"));
        hooks.insert("Notification".into(), entry(&dir, "hookpack-notification"));
    });
    // A repository of its own (not the one the tests run in, which ignores them all).
    let git = std::process::Command::new("git").arg("init").arg("-q").arg(&dir).status();
    assert!(git.is_ok_and(|s| s.success()));
    std::fs::remove_file(dir.join(".claude/hookpack/.gitignore")).unwrap();
    let pack = dir.join(".claude/hookpack/packs/guard.toml");
    std::fs::write(&pack, GUARD.replace("every other prompt", "second prompt")).unwrap();

    assert_eq!(doctor("fix", &dir, &["--fix"]), 0);
    let fixed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".claude/settings.json")).unwrap())
            .unwrap();
    let expected: serde_json::Value = serde_json::from_str(&good).unwrap();
    assert_eq!(fixed, expected);
    let ignore = std::fs::read_to_string(dir.join(".claude/hookpack/.gitignore")).unwrap();
    assert!(ignore.contains("state/\n"), "{ignore}");
    assert_eq!(doctor("fix-after", &dir, &["--fix"]), 0);
}

fn regex_escape(text: &str) -> String {
    text.chars()
        .map(
            |c| {
                if c.is_ascii_alphanumeric() || c == '/' { c.to_string() } else { format!("\\{c}") }
            },
        )
        .collect()
}

/// Runs git in `dir`, quietly, with an identity of its own.
fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(["-c", "user.email=t@t", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    assert!(status.is_ok_and(|s| s.success()), "git {args:?} in {}", dir.display());
}

/// A hostile repository commits a program under every hook's name (`tools/`) and settings that
/// run them from a project in a folder below it, or from one of its worktrees: doctor runs
/// none of them, and `--fix` wires none of them.
#[test]
fn doctor_runs_and_wires_no_program_of_the_repository_around_the_project() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hookpack-cli").join("doctor-repo");
    let _ = std::fs::remove_dir_all(&base);
    let main = base.join("main");
    std::fs::create_dir_all(&main).unwrap();
    git(&main, &["init", "-q"]);
    git(&main, &["commit", "-q", "--allow-empty", "-m", "i"]);
    let marker = base.join("ran");
    let tools = main.join("tools");
    // An unpacked archive too: no `.git` says where its repository ends.
    for tools in [&tools, &base.join("archive/tools")] {
        std::fs::create_dir_all(tools).unwrap();
        for kind in EventKind::ALL {
            let planted = tools.join(kind.binary_name());
            std::fs::write(&planted, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
            std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    git(&main, &["worktree", "add", "-q", ".claude/worktrees/wt", "-b", "wt"]);
    git(&main, &["worktree", "add", "-q", "../beside", "-b", "beside"]);
    // A project in a subfolder, Claude Code's worktree, a git worktree beside the repository:
    // each reaches `tools/` through `$CLAUDE_PROJECT_DIR`.
    for (project, up) in [
        (main.join("sub"), "\"$CLAUDE_PROJECT_DIR\"/../tools"),
        (main.join(".claude/worktrees/wt"), "\"$CLAUDE_PROJECT_DIR\"/../../../tools"),
        (base.join("beside"), "\"$CLAUDE_PROJECT_DIR\"/../main/tools"),
        (base.join("archive/project"), "\"$CLAUDE_PROJECT_DIR\"/../tools"),
    ] {
        let packs = project.join(".claude/hookpack/packs");
        std::fs::create_dir_all(&packs).unwrap();
        std::fs::write(packs.join("guard.toml"), GUARD).unwrap();
        let ignored = "compiled/\nstate/\nlocal/\nhookpack.local.toml\n";
        std::fs::write(project.join(".claude/hookpack/.gitignore"), ignored).unwrap();
        let out = hookpack(&project, &["compile"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let bin = fake_bin(&project);
        let out = hookpack(&project, &["install", "--hooks", bin.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let settings = project.join(".claude/settings.json");
        let wired = std::fs::read_to_string(&settings).unwrap();
        let planted = wired.replace(bin.to_str().unwrap(), &up.replace('"', "\\\""));
        assert_ne!(planted, wired);
        std::fs::write(&settings, &planted).unwrap();

        let path = std::path::PathBuf::from("/usr/bin:/bin");
        let out = hookpack_with(&project, &["doctor"], &[("PATH", &path)]);
        let said = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(!marker.exists(), "doctor ran the repository's program: {said}");
        assert!(said.contains("names its program from the project's folder"), "{said}");

        // An event missing: `--fix` rewires, never to the repository's programs.
        edit_settings(&project, |v| {
            v["hooks"].as_object_mut().unwrap().remove("UserPromptSubmit");
        });
        let out = hookpack_with(&project, &["doctor", "--fix"], &[("PATH", &path)]);
        let said = text(&out.stdout);
        assert!(!marker.exists(), "doctor --fix ran the repository's program: {said}");
        let fixed = std::fs::read_to_string(&settings).unwrap();
        let tools = std::fs::canonicalize(&tools).unwrap();
        assert!(!fixed.contains(tools.to_str().unwrap()), "{said}\n{fixed}");
        assert!(!fixed.contains(main.join("tools").to_str().unwrap()), "{said}\n{fixed}");
        assert!(!fixed.contains("/../"), "{said}\n{fixed}");
    }
}
