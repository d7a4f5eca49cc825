//! Every payload of `examples/` through `run()`, pinned by one snapshot each.

use std::path::Path;

use hook_model::EventKind;

use crate::{env_without_hookpack, run, scratch};

fn event_of(path: &Path) -> EventKind {
    let dir = path.parent().unwrap().file_name().unwrap().to_str().unwrap();
    EventKind::from_kebab(dir).unwrap_or_else(|| panic!("{dir} is not an event"))
}

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings
}

/// Where hookpack is not in use, every hook answers nothing and says nothing.
#[test]
fn examples() {
    settings().bind(|| {
        insta::glob!("../../../../examples", "*/*.json", |path| {
            let kind = event_of(path);
            let outcome =
                run(kind, &mut std::fs::File::open(path).unwrap(), &env_without_hookpack());
            outcome.assert_well_formed(kind);
            insta::assert_snapshot!(outcome.report());
        });
    });
}

/// Every snapshot belongs to an example that still exists: a removed example takes its
/// snapshot with it (what `cargo insta test --unreferenced reject` checks, without the tool).
#[test]
fn no_orphan_snapshots() {
    let snapshots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/snapshots");
    for entry in std::fs::read_dir(snapshots).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let example = name
            .strip_prefix("examples@")
            .and_then(|rest| rest.strip_suffix(".snap"))
            .unwrap_or_else(|| panic!("unexpected file {name}"));
        let path = crate::workspace_root().join("examples").join(example.replace("__", "/"));
        assert!(path.is_file(), "{name}: no example {}", path.display());
    }
}

/// A project that uses hookpack but has not compiled its rules fails open, visibly.
#[test]
fn project_without_artifact() {
    let project = scratch("project-without-artifact");
    std::fs::create_dir_all(project.join(".claude/hookpack")).unwrap();
    let mut env = env_without_hookpack();
    env.project_dir = Some(project.clone());
    // The worktree hooks make worktrees, rules or not.
    for &kind in EventKind::ALL.iter().filter(|k| !k.acts_without_rules()) {
        let example = crate::workspace_root().join("examples").join(kind.kebab());
        let first = std::fs::read_dir(example).unwrap().next().unwrap().unwrap().path();
        let outcome = run(kind, &mut std::fs::File::open(&first).unwrap(), &env);
        outcome.assert_well_formed(kind);
        // The user is told once per session, where the event shows a systemMessage.
        if !outcome.stdout.is_empty() {
            let told: serde_json::Value = serde_json::from_str(&outcome.stdout).unwrap();
            assert!(told["systemMessage"].as_str().unwrap().contains("hookpack doctor"));
            assert_eq!(told.as_object().unwrap().len(), 1, "{kind}: only the message");
        }
        assert_eq!(
            outcome.stderr,
            format!(
                "{}: no compiled rules at {}/.claude/hookpack/compiled/rules.hpk; run \
                 `hookpack compile`; answered nothing\n",
                kind.binary_name(),
                project.display()
            )
        );
    }
}

/// Without `$CLAUDE_PROJECT_DIR` the project is the nearest ancestor of `cwd` using hookpack.
#[test]
fn project_found_from_cwd() {
    let project = scratch("project-from-cwd");
    std::fs::create_dir_all(project.join(".claude/hookpack")).unwrap();
    std::fs::create_dir_all(project.join("packages/billing")).unwrap();
    let mut env = env_without_hookpack();
    env.project_dir = None;
    let cwd = project.join("packages/billing");
    let payload = serde_json::json!({
        "hook_event_name": "UserPromptSubmit", "session_id": "s", "transcript_path": "/t",
        "cwd": cwd, "prompt": "hi",
    })
    .to_string();
    let outcome = run(EventKind::UserPromptSubmit, &mut payload.as_bytes(), &env);
    assert!(outcome.stderr.contains(&format!("no compiled rules at {}", project.display())));

    // The same payload where no ancestor uses hookpack: silence.
    let elsewhere = payload.replace(project.to_str().unwrap(), "/nonexistent");
    let outcome = run(EventKind::UserPromptSubmit, &mut elsewhere.as_bytes(), &env);
    assert_eq!((outcome.stdout.as_str(), outcome.stderr.as_str()), ("", ""));
}

/// User packs make hookpack active even where no project uses it.
#[test]
fn user_packs_without_project() {
    let config = scratch("user-packs");
    std::fs::create_dir_all(config.join("hookpack/packs")).unwrap();
    let mut env = env_without_hookpack();
    env.xdg_config_home = Some(config.clone());
    let payload =
        std::fs::read(crate::workspace_root().join("examples/stop/first-stop.json")).unwrap();
    let outcome = run(EventKind::Stop, &mut payload.as_slice(), &env);
    outcome.assert_well_formed(EventKind::Stop);
    assert!(outcome.stderr.contains(&format!(
        "no compiled rules at {}/hookpack/compiled/rules.hpk",
        config.display()
    )));
}
