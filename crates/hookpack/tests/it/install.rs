//! `hookpack install` and `uninstall`: the entries the compiled rules need merged into Claude
//! Code's settings, nothing else touched, idempotent, and taken out byte for byte.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::{fake_bin, fake_bin_at, hookpack, hookpack_with, project, text};

const PACK: &str = r#"[pack]
name = "team"

[[rule]]
id = "no-force-push"
on = "PreToolUse"
tool = "Bash"
regex = ['git\s+push\s+--force']
decision = "deny"
reason = "No force pushes."

[[rule]]
id = "api-notes"
on = "PostToolUse"
tool = "Write|Edit"
paths = ["src/api/**"]
context = "API files: keep the OpenAPI spec in step."

[[rule]]
id = "release"
on = "UserPromptSubmit"
keywords = ["release"]
context = "Releasing: update the changelog."

[[rule]]
id = "welcome"
on = "SessionStart"
source = ["startup", "clear"]
context = "Welcome."
"#;

/// The user's settings before hookpack: other hooks and keys, formatted their own way.
const SETTINGS: &str = r#"{
    "permissions": {"allow": ["Bash(npm test)"]},
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "node ~/guard.js", "timeout": 5}]}
        ]
    },
    "env": {"API": "1"}
}
"#;

/// A compiled project with the user's settings, and its fake hook binaries.
fn compiled(name: &str, settings: Option<&str>) -> (PathBuf, PathBuf) {
    let mut files = vec![
        (".claude/hookpack/packs/team.toml", PACK),
        (".claude/hookpack/.gitignore", "compiled/\nstate/\nlocal/\nhookpack.local.toml\n"),
    ];
    if let Some(settings) = settings {
        files.push((".claude/settings.json", settings));
    }
    let dir = project(name, &files);
    let out = hookpack(&dir, &["compile"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bin = fake_bin(&dir);
    (dir, bin)
}

fn run(dir: &Path, bin: &Path, args: &[&str]) -> (i32, String) {
    let mut all = args.to_vec();
    if args[0] == "install" {
        all.extend(["--hooks", bin.to_str().unwrap()]);
    }
    let out = hookpack(dir, &all);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    let said = said.replace(&text(bin.as_os_str().as_encoded_bytes()), "[HOOKS]");
    (
        out.status.code().unwrap(),
        said.replace(&text(dir.as_os_str().as_encoded_bytes()), "[PROJECT]"),
    )
}

fn settings(dir: &Path) -> String {
    std::fs::read_to_string(dir.join(".claude/settings.json")).unwrap()
}

/// `value` without hookpack's handlers (and the groups and events they leave empty).
fn without_hookpack(mut value: Value) -> Value {
    let Some(hooks) = value.get_mut("hooks").and_then(Value::as_object_mut) else { return value };
    for groups in hooks.values_mut() {
        let groups = groups.as_array_mut().unwrap();
        for group in groups.iter_mut() {
            group["hooks"]
                .as_array_mut()
                .unwrap()
                .retain(|h| !h["command"].as_str().unwrap().contains("/hookpack-"));
        }
        groups.retain(|g| !g["hooks"].as_array().unwrap().is_empty());
    }
    hooks.retain(|_, groups| !groups.as_array().unwrap().is_empty());
    value
}

#[test]
fn install_wires_what_the_rules_need_and_uninstall_restores_the_file() {
    let (dir, bin) = compiled("install-merge", Some(SETTINGS));

    // --dry-run: the diff, nothing written.
    let (code, diff) = run(&dir, &bin, &["install", "--dry-run"]);
    assert_eq!(code, 0, "{diff}");
    assert_eq!(settings(&dir), SETTINGS);
    let mut snapshots = insta::Settings::clone_current();
    snapshots.set_prepend_module_to_snapshot(false);
    snapshots.set_omit_expression(true);
    snapshots.bind(|| insta::assert_snapshot!("install@dry-run", diff));

    let (code, said) = run(&dir, &bin, &["install"]);
    assert_eq!(code, 0, "{said}");
    let installed = settings(&dir);
    let value: Value = serde_json::from_str(&installed).unwrap();
    // Other hooks and keys untouched, in their order, with their formatting.
    assert_eq!(without_hookpack(value.clone()), serde_json::from_str::<Value>(SETTINGS).unwrap());
    assert!(installed.starts_with("{\n    \"permissions\": {\"allow\": [\"Bash(npm test)\"]},\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"node ~/guard.js\", \"timeout\": 5}]},\n"), "{installed}");
    assert!(installed.ends_with("    \"env\": {\"API\": \"1\"}\n}\n"), "{installed}");
    let command = |event: &str| format!("{}/{event}", bin.display());
    let hooks = &value["hooks"];
    assert_eq!(
        hooks["PreToolUse"][1],
        json!({"matcher": "Bash", "hooks": [{"type": "command", "command": command("hookpack-pre-tool-use")}]})
    );
    assert_eq!(hooks["PostToolUse"][0]["matcher"], "Edit|Write");
    assert_eq!(hooks["SessionStart"][0]["matcher"], "clear|startup");
    assert!(hooks["UserPromptSubmit"][0].get("matcher").is_none());
    assert_eq!(hooks.as_object().unwrap().len(), 4, "{installed}");
    assert!(said.contains("wired SessionStart (clear|startup), UserPromptSubmit, PreToolUse (Bash), PostToolUse (Edit|Write)"), "{said}");

    // Idempotent: the same bytes.
    let (code, said) = run(&dir, &bin, &["install"]);
    assert_eq!((code, settings(&dir)), (0, installed.clone()), "{said}");
    assert!(said.contains("nothing to change"), "{said}");

    // The dry run of uninstall shows the reverse; uninstall restores the file byte for byte.
    let (_, diff) = run(&dir, &bin, &["uninstall", "--dry-run"]);
    assert!(
        diff.lines().filter(|l| l.starts_with('-') && !l.starts_with("---")).count() > 20,
        "{diff}"
    );
    assert_eq!(settings(&dir), installed);
    let (code, said) = run(&dir, &bin, &["uninstall"]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(settings(&dir), SETTINGS);
    assert!(said.contains("restored as it was before"), "{said}");
    assert!(!dir.join(".claude/hookpack/state/install-project.json").exists());
    let (code, said) = run(&dir, &bin, &["uninstall"]);
    assert_eq!((code, settings(&dir)), (0, SETTINGS.to_owned()), "{said}");
}

#[test]
fn uninstall_after_other_changes_takes_out_hookpack_alone() {
    for original in [SETTINGS, "{\n\t\"model\": \"opus\"\n}", "{\"a\":[1,2],\"b\":{\"c\":null}}"] {
        let (dir, bin) = compiled("install-other-changes", Some(original));
        assert_eq!(run(&dir, &bin, &["install"]).0, 0);
        let installed = settings(&dir);
        // Without the receipt: hookpack's entries come out as they went in.
        std::fs::remove_file(dir.join(".claude/hookpack/state/install-project.json")).unwrap();
        assert_eq!(run(&dir, &bin, &["uninstall"]).0, 0);
        assert_eq!(settings(&dir), original);

        // Changed by hand since: the change stays, hookpack's entries go.
        assert_eq!(run(&dir, &bin, &["install"]).0, 0);
        assert_eq!(settings(&dir), installed);
        let changed = installed.replacen('{', "{\"theme\": \"dark\",", 1);
        std::fs::write(dir.join(".claude/settings.json"), &changed).unwrap();
        let (code, said) = run(&dir, &bin, &["uninstall"]);
        assert_eq!(code, 0, "{said}");
        assert!(said.contains("the rest left as it is"), "{said}");
        assert_eq!(settings(&dir), original.replacen('{', "{\"theme\": \"dark\",", 1));
    }
}

#[test]
fn a_pack_change_updates_the_entries_and_a_new_file_is_removed_again() {
    let (dir, bin) = compiled("install-update", None);
    assert_eq!(run(&dir, &bin, &["install"]).0, 0);
    let first: Value = serde_json::from_str(&settings(&dir)).unwrap();
    assert_eq!(first["hooks"]["PreToolUse"][0]["matcher"], "Bash");

    let pack = dir.join(".claude/hookpack/packs/team.toml");
    let changed = PACK.replace("tool = \"Bash\"", "tool = \"Bash|Read\"")
        + "\n[[rule]]\nid = \"compact\"\non = \"PreCompact\"\ntrigger = \"manual\"\ncontext = \"x\"\n";
    std::fs::write(
        &pack,
        changed.replace(
            "on = \"SessionStart\"\nsource = [\"startup\", \"clear\"]\ncontext = \"Welcome.\"",
            "on = \"Stop\"\ndecision = \"block\"\nreason = \"Not yet.\"",
        ),
    )
    .unwrap();
    // Stale rules are not wired: compile first.
    let (code, said) = run(&dir, &bin, &["install"]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("stale") && said.contains("hookpack compile"), "{said}");
    assert!(hookpack(&dir, &["compile"]).status.success());
    let (code, said) = run(&dir, &bin, &["install"]);
    assert_eq!(code, 0, "{said}");
    let second: Value = serde_json::from_str(&settings(&dir)).unwrap();
    let events: Vec<&String> = second["hooks"].as_object().unwrap().keys().collect();
    assert_eq!(events, ["PostToolUse", "PreCompact", "PreToolUse", "Stop", "UserPromptSubmit"]);
    assert_eq!(second["hooks"]["PreToolUse"][0]["matcher"], "Bash|Read");
    assert_eq!(second["hooks"]["PreCompact"][0]["matcher"], "manual");

    // The file did not exist: uninstall removes it.
    let (code, said) = run(&dir, &bin, &["uninstall"]);
    assert_eq!(code, 0, "{said}");
    assert!(!dir.join(".claude/settings.json").exists(), "{said}");
}

#[test]
fn install_refuses_what_it_cannot_do_right_and_writes_nothing() {
    // No compiled rules.
    let dir = project("install-refuses", &[(".claude/settings.json", SETTINGS)]);
    let bin = fake_bin(&dir);
    let (code, said) = run(&dir, &bin, &["install"]);
    assert_eq!(code, 1);
    assert!(said.contains("run `hookpack compile` first"), "{said}");
    assert_eq!(settings(&dir), SETTINGS);

    // Not JSON (comments), a `hooks` that is no object, a link.
    let (dir, bin) = compiled("install-refuses", None);
    let twice = "{\"hooks\": {\"Stop\": [], \"Stop\": []}}";
    for bad in ["// mine\n{}\n", "{\"hooks\": []}", "[]", twice] {
        std::fs::write(dir.join(".claude/settings.json"), bad).unwrap();
        let (code, said) = run(&dir, &bin, &["install"]);
        assert_eq!(code, 1, "{said}");
        assert!(said.contains("cannot be edited"), "{said}");
        assert_eq!(settings(&dir), bad);
    }
    let elsewhere = dir.join("elsewhere.json");
    std::fs::write(&elsewhere, "{}").unwrap();
    std::fs::remove_file(dir.join(".claude/settings.json")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.join(".claude/settings.json")).unwrap();
    let (code, said) = run(&dir, &bin, &["install"]);
    assert_eq!(code, 1, "{said}");
    assert!(said.contains("symbolic link"), "{said}");
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "{}");
}

#[test]
fn a_worktree_hook_and_handlers_shared_by_hand_are_put_right() {
    let wired_by_hand = r#"{
  "hooks": {
    "WorktreeCreate": [{"hooks": [{"type": "command", "command": "hookpack-worktree-create"}]}],
    "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo hi"}, {"type": "command", "command": "hookpack-user-prompt-submit"}]}]
  }
}
"#;
    let (dir, bin) = compiled("install-by-hand", Some(wired_by_hand));
    assert_eq!(run(&dir, &bin, &["install"]).0, 0);
    let value: Value = serde_json::from_str(&settings(&dir)).unwrap();
    assert!(value["hooks"].get("WorktreeCreate").is_none(), "{value}");
    assert_eq!(
        value["hooks"]["UserPromptSubmit"][0]["hooks"],
        json!([{"type": "command", "command": "echo hi"}])
    );
    assert_eq!(value["hooks"]["UserPromptSubmit"].as_array().unwrap().len(), 2);

    // The file ran hookpack before the install: uninstall takes hookpack out rather than put
    // the hand-wired handlers back.
    let (code, said) = run(&dir, &bin, &["uninstall"]);
    assert_eq!(code, 0, "{said}");
    let after = settings(&dir);
    assert!(!after.contains("hookpack-"), "{after}");
    assert!(after.contains("echo hi"), "{after}");
}

#[test]
fn local_and_user_scopes_have_their_own_files() {
    let (dir, bin) = compiled("install-scopes", Some(SETTINGS));
    let (code, said) = run(&dir, &bin, &["install", "--local"]);
    assert_eq!(code, 0, "{said}");
    assert_eq!(settings(&dir), SETTINGS);
    let local = std::fs::read_to_string(dir.join(".claude/settings.local.json")).unwrap();
    assert!(local.contains("hookpack-pre-tool-use"), "{local}");
    assert_eq!(run(&dir, &bin, &["uninstall", "--local"]).0, 0);
    assert!(!dir.join(".claude/settings.local.json").exists());

    // The user's: their packs, ~/.claude/settings.json, commands under "$HOME".
    let home = dir.join("home");
    let config = home.join(".config");
    std::fs::create_dir_all(config.join("hookpack/packs")).unwrap();
    std::fs::write(config.join("hookpack/packs/mine.toml"), PACK.replace("\"team\"", "\"mine\""))
        .unwrap();
    let env = [("HOME", home.as_path()), ("XDG_CONFIG_HOME", config.as_path())];
    let out = hookpack_with(&dir, &["compile", "--user"], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let user_bin = fake_bin_at(&home.join(".local/bin"));
    let out =
        hookpack_with(&dir, &["install", "--user", "--hooks", user_bin.to_str().unwrap()], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let user: Value =
        serde_json::from_str(&std::fs::read_to_string(home.join(".claude/settings.json")).unwrap())
            .unwrap();
    assert_eq!(user["hooks"]["Stop"], Value::Null);
    assert_eq!(
        user["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"],
        "\"$HOME\"/.local/bin/hookpack-user-prompt-submit"
    );
    let out = hookpack_with(&dir, &["uninstall", "--user"], &env);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!home.join(".claude/settings.json").exists());
}

/// Settings a repository would like restored: a hook that runs its program.
const HOSTILE: &str = r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "sh planted.sh"}]}]}}"#;

/// A receipt as a repository would commit it, for the settings file `dir` holds.
fn plant_receipt(dir: &Path, after: &str) {
    let state = dir.join(".claude/hookpack/state");
    std::fs::create_dir_all(&state).unwrap();
    let settings = dir.join(".claude/settings.json").display().to_string();
    let receipt = json!({"settings": settings, "before": HOSTILE, "after": after});
    std::fs::write(state.join("install-project.json"), receipt.to_string()).unwrap();
}

/// A receipt the repository committed (for the settings it committed, wired or not) is not
/// restored by `uninstall`, nor carried over by `install`: it is ignored, with a warning, and
/// hookpack's own handlers alone are taken out.
#[test]
fn a_planted_receipt_is_not_restored() {
    // Committed settings already wiring hookpack, and a receipt saying what they were before.
    let (dir, bin) = compiled("install-planted-uninstall", Some(SETTINGS));
    assert_eq!(run(&dir, &bin, &["install"]).0, 0);
    let wired = settings(&dir);
    plant_receipt(&dir, &wired);
    let (code, said) = run(&dir, &bin, &["uninstall"]);
    assert_eq!(code, 0, "{said}");
    assert!(!settings(&dir).contains("planted.sh"), "{said}\n{}", settings(&dir));
    assert_eq!(settings(&dir), SETTINGS, "{said}");
    assert!(said.contains("warning"), "{said}");

    // Committed settings and a receipt whose `after` is them: install, then uninstall.
    let (dir, bin) = compiled("install-planted-install", Some(SETTINGS));
    plant_receipt(&dir, SETTINGS);
    assert_eq!(run(&dir, &bin, &["install"]).0, 0);
    let (code, said) = run(&dir, &bin, &["uninstall"]);
    assert_eq!(code, 0, "{said}");
    assert!(!settings(&dir).contains("planted.sh"), "{said}\n{}", settings(&dir));
    assert_eq!(settings(&dir), SETTINGS, "{said}");
}

/// Hook binaries the repository holds (in a folder on `PATH`, as direnv or a package manager
/// puts one, or named with `--hooks`) are not wired: every hook would run its program.
#[test]
fn install_wires_no_program_of_the_repository() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hookpack-cli/install-repo-bin");
    let _ = std::fs::remove_dir_all(&base);
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let project = repo.join("app");
    std::fs::create_dir_all(project.join(".claude/hookpack/packs")).unwrap();
    std::fs::write(project.join(".claude/hookpack/packs/team.toml"), PACK).unwrap();
    assert!(hookpack(&project, &["compile"]).status.success());
    let planted = fake_bin_at(&repo.join("node_modules/.bin"));
    let installed = fake_bin(&base);
    // A hookpack with no hooks beside it, as one installed elsewhere than its hooks.
    let alone = crate::bin_dir(&base).with_extension("alone");
    std::fs::create_dir_all(&alone).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_hookpack"), alone.join("hookpack")).unwrap();
    let path = std::env::join_paths([&planted, &installed]).unwrap();
    let out = std::process::Command::new(alone.join("hookpack"))
        .arg("install")
        .current_dir(&project)
        .env_clear()
        .env("XDG_CONFIG_HOME", project.join(".no-user-config"))
        .env("PATH", &path)
        .output()
        .unwrap();
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{said}");
    let wired = settings(&project);
    assert!(!wired.contains("node_modules"), "{said}\n{wired}");
    assert!(wired.contains(installed.to_str().unwrap()), "{said}\n{wired}");

    let out = hookpack(&project, &["install", "--hooks", planted.to_str().unwrap()]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("inside the repository"), "{said}");
    assert!(!settings(&project).contains("node_modules"), "{said}");
}
