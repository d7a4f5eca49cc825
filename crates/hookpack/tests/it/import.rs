//! `hookpack import`: realistic setups of SYNAPSE, Claude Code's rule files and hookify (written
//! from what those systems read) turned into packs that lint clean and whose tests pass; what
//! cannot be translated is reported.

use std::path::Path;

use crate::{hookpack, project, text};

/// Imports fixture `kind` (its folder below `tests/fixtures/import/<kind>/`) into a new
/// project; pins the report and the pack written; checks that the packs lint clean and pass.
fn import(kind: &str, folder: &str) {
    let dir = project(&format!("import-{kind}"), &[]);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import").join(kind);
    let source = fixtures.join(folder);
    let out = hookpack(&dir, &["import", kind, source.to_str().unwrap()]);
    let report = text(&out.stdout).replace(fixtures.to_str().unwrap(), "[FIXTURES]");
    assert_eq!(out.status.code(), Some(0), "{report}{}", text(&out.stderr));
    let pack = std::fs::read_to_string(dir.join(format!(".claude/hookpack/packs/{kind}.toml")))
        .unwrap()
        .replace(fixtures.to_str().unwrap(), "[FIXTURES]");
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.add_filter(r"\[TMP\]/hookpack-cli/import-[a-z-]+", "[PROJECT]");
    settings.bind(|| {
        insta::assert_snapshot!(format!("import@{kind}"), format!("{report}\n---\n{pack}"));
    });

    let lint = hookpack(&dir, &["lint"]);
    assert_eq!(lint.status.code(), Some(0), "{}", text(&lint.stderr));
    assert_eq!(text(&lint.stderr), "", "lint warns");
    let test = hookpack(&dir, &["test"]);
    assert_eq!(test.status.code(), Some(0), "{}", text(&test.stdout));
    assert!(hookpack(&dir, &["compile"]).status.success());

    // Never over a pack there is.
    let again = hookpack(&dir, &["import", kind, source.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(text(&again.stderr).contains("exists; nothing written"), "{}", text(&again.stderr));
}

#[test]
fn a_synapse_folder_becomes_a_layered_pack() {
    import("synapse", ".synapse");
}

#[test]
fn claude_rule_files_become_path_rules_that_also_fire_on_writes() {
    import("claude-rules", ".claude/rules");
}

#[test]
fn hookify_rules_become_rules_with_tests_drawn_from_their_patterns() {
    import("hookify", ".claude");
}

#[test]
fn an_import_of_nothing_known_says_so() {
    let dir = project("import-unknown", &[]);
    let out = hookpack(&dir, &["import", "cursor", "."]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("[possible values: synapse, claude-rules, hookify]"));
    let out = hookpack(&dir, &["import", "hookify"]);
    assert_eq!(out.status.code(), Some(2));
    let out = hookpack(&dir, &["import", "hookify", ".", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("nothing to import"), "{}", text(&out.stdout));
}

#[test]
fn what_a_repository_plants_is_reported_not_followed() {
    let dir = project("import-hostile", &[]);
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "AWS_SECRET=hunter2\n").unwrap();

    // A SYNAPSE domain named as a path out of the folder.
    let synapse = dir.join("in/.synapse");
    std::fs::create_dir_all(&synapse).unwrap();
    std::fs::write(synapse.join("manifest"), "../../SECRET.TXT_RECALL=aws\nAPI_RECALL=api\n")
        .unwrap();
    std::fs::write(synapse.join("api"), "API_RULE_0=Validate input\n").unwrap();
    // A rule file that is a link to the secret.
    let rules = dir.join("in/rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::os::unix::fs::symlink(&secret, rules.join("leak.md")).unwrap();
    // hookify: a rule without a pattern (hookify never fired it), a pattern hookify keeps as
    // written (`#`, `\b` in double quotes).
    let hookify = dir.join("in/hookify");
    std::fs::create_dir_all(&hookify).unwrap();
    std::fs::write(
        hookify.join("hookify.all.local.md"),
        "---\nevent: bash\naction: block\n---\nNo.\n",
    )
    .unwrap();
    std::fs::write(
        hookify.join("hookify.sudo.local.md"),
        "---\nevent: bash\npattern: \"\\bsudo\\b\"\naction: block\n---\nNo sudo.\n",
    )
    .unwrap();
    std::fs::write(
        hookify.join("hookify.shebang.local.md"),
        "---\nevent: file\npattern: #!/bin/sh\naction: warn\n---\nUse bash.\n",
    )
    .unwrap();

    for (kind, folder) in [("synapse", &synapse), ("claude-rules", &rules), ("hookify", &hookify)] {
        let out = hookpack(&dir, &["import", kind, folder.to_str().unwrap()]);
        let said = text(&out.stdout);
        assert!(!said.contains("hunter2"), "{said}");
        match kind {
            "synapse" => assert!(said.contains("is no domain name"), "{said}"),
            "claude-rules" => {
                assert!(said.contains("leak.md: a symbolic link, not followed"), "{said}");
            }
            _ => {
                assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
                assert!(said.contains("hookify never fired it"), "{said}");
            }
        }
    }
    let packs = dir.join(".claude/hookpack/packs");
    for entry in std::fs::read_dir(&packs).unwrap() {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
    }
    let hookify = std::fs::read_to_string(packs.join("hookify.toml")).unwrap();
    assert!(hookify.contains(r"regex = ['(?i)\bsudo\b']"), "{hookify}");
    assert!(hookify.contains("regex = ['(?i)#!/bin/sh']"), "{hookify}");
    assert!(!hookify.contains("id = 'all'"), "{hookify}");
}

/// A source folder the repository links out of itself (`.claude/rules` pointing at the user's
/// other files) is refused, not read.
#[test]
fn a_source_folder_linked_out_of_the_repository_is_refused() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hookpack-cli/import-linked-out");
    let _ = std::fs::remove_dir_all(&base);
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join(".claude/hookpack")).unwrap();
    let elsewhere = base.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::write(
        elsewhere.join("notes.md"),
        "---\npaths: [\"**/*.rs\"]\n---\nAWS_SECRET=hunter2\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&elsewhere, repo.join(".claude/rules")).unwrap();
    let out = hookpack(&repo, &["import", "claude-rules", ".claude/rules"]);
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(!said.contains("hunter2"), "{said}");
    assert!(said.contains("outside the repository"), "{said}");
    assert!(!repo.join(".claude/hookpack/packs/claude-rules.toml").exists(), "{said}");
}
