//! `hookpack explain` on example payloads against the demo project with the builtin guard pack.

use std::path::Path;

use crate::{hookpack, project, text};

const PAYLOADS: &[&str] = &[
    "pre-tool-use/bash-rm-rf-root.json",
    "pre-tool-use/bash-force-push.json",
    "pre-tool-use/bash-ls.json",
    "pre-tool-use/write-env.json",
    "pre-tool-use/read-env-example.json",
    "pre-tool-use/edit-ts.json",
    "pre-tool-use/mcp-github.json",
    "user-prompt-submit/short.json",
    "user-prompt-submit/agent-mention.json",
    "user-prompt-submit/long-50kb.json",
    "stop/first-stop.json",
];

#[test]
fn explain_payloads() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pack = std::fs::read_to_string(
        root.join("examples/projects/demo/.claude/hookpack/packs/demo.toml"),
    )
    .unwrap();
    let dir = project(
        "explain",
        &[
            (".claude/hookpack/packs/demo.toml", &pack),
            (".claude/hookpack/hookpack.toml", "builtin = [\"guard\"]\n"),
        ],
    );
    let out = hookpack(&dir, &["compile"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/explain", "[PROJECT]");
    settings.bind(|| {
        for name in PAYLOADS {
            let payload = std::fs::read_to_string(root.join("examples").join(name))
                .unwrap()
                .replace("/home/dev/acme-api", dir.to_str().unwrap());
            let file = dir.join("payload.json");
            std::fs::write(&file, payload).unwrap();
            let out = hookpack(&dir, &["explain", "payload.json"]);
            assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
            insta::assert_snapshot!(
                format!("explain@{}", name.replace('/', "__")),
                text(&out.stdout)
            );
        }
    });
    assert!(PAYLOADS.len() >= 10);
}
