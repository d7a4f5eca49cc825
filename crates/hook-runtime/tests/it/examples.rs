//! Every payload of `examples/` through `run()`.

use std::path::Path;

use hook_model::EventKind;

use crate::{env_without_hookpack, run, scratch};

/// Where hookpack is not in use, every hook answers nothing and says nothing; only the worktree
/// hooks, which replace what Claude Code does, do their job (and say why they could not: the
/// examples' folders are not on this machine).
#[test]
fn examples() {
    let mut seen = 0;
    for dir in std::fs::read_dir(crate::workspace_root().join("examples")).unwrap() {
        let dir = dir.unwrap().path();
        let Some(kind) = dir.file_name().and_then(|n| EventKind::from_kebab(n.to_str()?)) else {
            continue;
        };
        for example in std::fs::read_dir(&dir).unwrap() {
            let path = example.unwrap().path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let outcome =
                run(kind, &mut std::fs::File::open(&path).unwrap(), &env_without_hookpack());
            outcome.assert_well_formed(kind);
            let shown = path.display();
            assert!(outcome.stdout.is_empty(), "{shown}: {}", outcome.stdout);
            if kind.acts_without_rules() {
                let payload: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                let cwd = payload["cwd"].as_str().unwrap();
                assert!(!Path::new(cwd).exists(), "{shown}: {cwd} exists here");
                let expected = format!("{}: {cwd} is not a folder\n", kind.binary_name());
                assert_eq!(outcome.stderr, expected, "{shown}");
            } else {
                assert_eq!(outcome.status, hook_runtime::ExitStatus::Proceed, "{shown}");
                assert!(outcome.stderr.is_empty(), "{shown}: {}", outcome.stderr);
            }
            seen += 1;
        }
    }
    // Every event has examples (`cargo xtask codegen` checks them against the schemas).
    assert!(seen >= EventKind::ALL.len(), "{seen} examples");
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
