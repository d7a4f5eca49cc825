//! Every example payload answered from the builtin packs, each pinned by a snapshot: what the
//! hook prints (its exit, stdout and stderr) in a project that turns every builtin pack on.
//! The examples run in order (events, then files, by name) in one session store, as a session's
//! hooks would: the state the earlier ones kept is part of the answer.

use std::path::Path;

use hook_model::EventKind;

use crate::{hook, hookpack, project, text};

/// Every builtin pack.
const BUILTIN: &str = "builtin = [\"context\", \"guard\", \"guard-cloud\", \"guard-containers\", \
    \"guard-infrastructure\", \"guard-kubernetes\", \"guard-publishing\", \"guard-rest\", \
    \"memory\", \"workflow\"]\n";

/// The example payloads of every event but the worktree hooks' (which act without rules), as
/// (event, file name), sorted.
pub(crate) fn examples(root: &Path) -> Vec<(EventKind, String)> {
    let mut found = Vec::new();
    for dir in std::fs::read_dir(root.join("examples")).unwrap() {
        let dir = dir.unwrap().path();
        let Some(kind) = dir.file_name().and_then(|n| EventKind::from_kebab(n.to_str()?)) else {
            continue;
        };
        if kind.acts_without_rules() {
            continue;
        }
        for file in std::fs::read_dir(&dir).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                found.push((kind, path.file_name().unwrap().to_str().unwrap().to_owned()));
            }
        }
    }
    found.sort_by(|a, b| (a.0.kebab(), &a.1).cmp(&(b.0.kebab(), &b.1)));
    found
}

#[test]
fn every_example_answered_by_the_builtin_packs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = project("answers", &[(".claude/hookpack/hookpack.toml", BUILTIN)]);
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/answers", "[PROJECT]");
    settings.add_filter(r"\d{4}-\d{2}-\d{2}", "[DATE]");
    let examples = examples(&root);
    settings.bind(|| {
        for (kind, name) in &examples {
            let path = root.join("examples").join(kind.kebab()).join(name);
            let payload = std::fs::read_to_string(path)
                .unwrap()
                .replace("/home/dev/acme-api", dir.to_str().unwrap());
            let payload: serde_json::Value = serde_json::from_str(&payload).unwrap();
            let (status, stdout, stderr) = hook(*kind, &dir, &payload);
            let shown = match serde_json::from_str::<serde_json::Value>(&stdout) {
                Ok(json) => serde_json::to_string_pretty(&json).unwrap(),
                Err(_) => stdout.clone(),
            };
            let snapshot = format!(
                "exit: {}\nstdout:\n{}\nstderr:\n{}",
                status.code(),
                if shown.is_empty() { "(nothing)" } else { &shown },
                if stderr.is_empty() { "(nothing)" } else { stderr.trim_end() },
            );
            let file = name.trim_end_matches(".json");
            insta::assert_snapshot!(format!("answer@{}__{file}", kind.kebab()), snapshot);
        }
    });
    // Every event but the worktree hooks' has examples.
    let events: std::collections::BTreeSet<_> = examples.iter().map(|(k, _)| *k).collect();
    assert_eq!(events.len(), EventKind::ALL.iter().filter(|k| !k.acts_without_rules()).count());
}
