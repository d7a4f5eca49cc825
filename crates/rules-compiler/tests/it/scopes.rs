//! Scopes and precedence (reference §1): user < project < local, by full rule id; `disable`;
//! config layered across files and `HOOKPACK_*` variables.

use std::path::{Path, PathBuf};

use rules_compiler::{Layout, load};

fn folder(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("scopes").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn rule(pack: &str, id: &str, context: &str) -> String {
    format!(
        "[pack]\nname = \"{pack}\"\n\n[[rule]]\nid = \"{id}\"\non = \"UserPromptSubmit\"\ncontext = \"{context}\"\n"
    )
}

fn layout(dir: &Path) -> Layout {
    Layout { project: Some(dir.join("project")), user: Some(dir.join("user")) }
}

#[test]
fn higher_scopes_replace_the_same_full_id_and_disable_turns_rules_off() {
    let user = rule("style", "tone", "from the user");
    let project = rule("style", "tone", "from the project");
    let local = rule("style", "tone", "from local");
    let other = format!(
        "{}\n[[rule]]\nid = \"b\"\non = \"Stop\"\nmessage = \"b\"\n",
        rule("other", "a", "a")
    );
    let dir = folder(
        "precedence",
        &[
            ("user/packs/style.toml", &user),
            ("project/.claude/hookpack/packs/style.toml", &project),
            ("project/.claude/hookpack/packs/other.toml", &other),
            ("project/.claude/hookpack/local/style.toml", &local),
        ],
    );
    let loaded = load(&layout(&dir), &[]);
    assert!(loaded.diagnostics.is_empty(), "{}", loaded.diagnostics.render());
    let rules: Vec<(String, Option<String>)> =
        loaded.rules().iter().map(|r| (r.full_id(), r.then.context.clone())).collect();
    assert_eq!(
        rules,
        [
            ("style/tone".to_owned(), Some("from local".to_owned())),
            ("other/a".to_owned(), Some("a".to_owned())),
            ("other/b".to_owned(), None),
        ]
    );

    std::fs::write(dir.join("project/.claude/hookpack/hookpack.toml"), "disable = [\"other/*\"]\n")
        .unwrap();
    std::fs::write(dir.join("user/hookpack.toml"), "disable = [\"style/tone\"]\n").unwrap();
    let loaded = load(&layout(&dir), &[]);
    assert!(loaded.rules().is_empty(), "every config's `disable` counts");
}

#[test]
fn config_layers_files_then_environment() {
    let dir = folder(
        "config",
        &[
            ("user/hookpack.toml", "window_tokens = 1000000\n[budget]\nfresh = 100\n"),
            ("project/.claude/hookpack/hookpack.toml", "[budget]\nfresh = 200\nmoderate = 300\n"),
            ("project/.claude/hookpack/hookpack.local.toml", "[brackets]\nfresh = 70\n"),
        ],
    );
    let loaded = load(&layout(&dir), &[]);
    assert!(loaded.diagnostics.is_empty(), "{}", loaded.diagnostics.render());
    let settings = loaded.config.settings();
    assert_eq!(settings.window_tokens, 1_000_000);
    assert_eq!(settings.budget, [200, 300, 2000, 2500]);
    assert_eq!(settings.brackets, [70, 40, 25]);

    let env = [
        ("HOOKPACK_WINDOW_TOKENS".to_owned(), "500000".to_owned()),
        ("HOOKPACK_BRACKETS__MODERATE".to_owned(), "45".to_owned()),
        ("HOOKPACK_ARTIFACT".to_owned(), "/elsewhere/rules.hpk".to_owned()),
    ];
    let settings = load(&layout(&dir), &env).config.settings();
    assert_eq!(settings.window_tokens, 500_000);
    assert_eq!(settings.brackets, [70, 45, 25]);
}

#[test]
fn config_problems_are_reported() {
    let dir = folder(
        "bad-config",
        &[(
            "project/.claude/hookpack/hookpack.toml",
            "builtin = [\"gaurd\"]\n[brackets]\nfresh = 20\nmoderate = 40\n",
        )],
    );
    let rendered = load(&layout(&dir), &[]).diagnostics.render();
    assert!(rendered.contains("config: no builtin pack `gaurd`"), "{rendered}");
    assert!(rendered.contains("bracket thresholds must not increase"), "{rendered}");

    let env = [("HOOKPACK_NO_SUCH".to_owned(), "1".to_owned())];
    let loaded = load(&layout(&folder("bad-env", &[])), &env);
    let rendered = loaded.diagnostics.render();
    assert!(!loaded.diagnostics.has_errors(), "{rendered}");
    assert!(
        rendered.contains("warning: environment: `HOOKPACK_NO_SUCH` is not a hookpack setting"),
        "{rendered}"
    );
}

#[test]
fn memory_config_is_layered_and_checked() {
    let dir = folder(
        "memory-config",
        &[(
            "project/.claude/hookpack/hookpack.toml",
            "[memory]\nnamespaces = [\"adr\", \"learnings\", \"notes\"]\naliases = { a = \"adr\" }\nprivate_tags = [\"private\", \"secret\"]\n",
        )],
    );
    let loaded = load(&layout(&dir), &[]);
    assert!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics.render());
    let settings = loaded.config.settings();
    assert_eq!(settings.namespaces, ["adr", "learnings", "notes"]);
    // Default shorthands stay for the namespaces the project kept; its own are added.
    assert_eq!(
        settings.aliases,
        [
            ("a", "adr"),
            ("insight", "learnings"),
            ("learned", "learnings"),
            ("learning", "learnings"),
            ("til", "learnings")
        ]
        .map(|(a, n)| (a.to_owned(), n.to_owned()))
    );
    assert_eq!(settings.private_tags, ["private", "secret"]);

    let pack = "[pack]\nname = \"notes\"\n\n[[rule]]\nid = \"keep\"\non = \"UserPromptSubmit\"\ncapture = { namespace = \"decisions\" }\n";
    let dir = folder(
        "memory-config-bad",
        &[
            (
                "project/.claude/hookpack/hookpack.toml",
                "[memory]\nnamespaces = [\"adr\", \"two words\"]\naliases = { d = \"decisions\" }\n",
            ),
            ("project/.claude/hookpack/packs/notes.toml", pack),
        ],
    );
    let rendered = load(&layout(&dir), &[]).diagnostics.render();
    assert!(
        rendered.contains("memory namespace `two words` must be letters, digits or `_`"),
        "{rendered}"
    );
    assert!(
        rendered.contains("memory shorthand `d` names `decisions`, which is not a namespace"),
        "{rendered}"
    );
    assert!(
        rendered.contains(
            "rule `notes/keep`: `capture.namespace = \"decisions\"` is not a memory namespace"
        ),
        "{rendered}"
    );
}

#[test]
fn a_projects_files_cannot_turn_off_the_users_fail_closed_guards() {
    const MINE: &str = r#"[pack]
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
    let guard = |loaded: &rules_compiler::Loaded| {
        loaded
            .rules()
            .iter()
            .find(|r| r.full_id() == "mine/no-rm-home")
            .map(|r| (r.then.fail_closed, r.when.regex.clone()))
    };
    let kept = Some((true, vec![r"\brm\s+-rf\s+~".to_owned()]));
    for (name, file, text) in [
        ("disabled", "project/.claude/hookpack/hookpack.toml", "disable = [\"mine/*\"]\n"),
        (
            "disabled-locally",
            "project/.claude/hookpack/hookpack.local.toml",
            "disable = [\"mine/no-rm-home\"]\n",
        ),
        (
            "replaced",
            "project/.claude/hookpack/packs/mine.toml",
            "[pack]\nname = \"mine\"\n\n[[rule]]\nid = \"no-rm-home\"\non = \"PreToolUse\"\ntool = \"Bash\"\nregex = ['never matches: x{3}y']\ndecision = \"deny\"\nfail = \"closed\"\nreason = \"r\"\n",
        ),
    ] {
        let dir =
            folder(&format!("users-guard-{name}"), &[("user/packs/mine.toml", MINE), (file, text)]);
        std::fs::create_dir_all(dir.join("project/.claude/hookpack")).unwrap();
        let loaded = load(&layout(&dir), &[]);
        assert!(!loaded.diagnostics.has_errors(), "{name}: {}", loaded.diagnostics.render());
        assert_eq!(guard(&loaded), kept, "{name}");
        let said = loaded.diagnostics.render();
        assert!(said.contains("one of your own fail-closed guards"), "{name}: {said}");
    }

    // The user turns it off in their own config.
    let dir = folder(
        "users-guard-own-disable",
        &[
            ("user/packs/mine.toml", MINE),
            ("user/hookpack.toml", "disable = [\"mine/no-rm-home\"]\n"),
        ],
    );
    std::fs::create_dir_all(dir.join("project/.claude/hookpack")).unwrap();
    let loaded = load(&layout(&dir), &[]);
    assert_eq!(guard(&loaded), None);
    assert!(loaded.diagnostics.is_empty(), "{}", loaded.diagnostics.render());
}

#[test]
fn the_users_version_of_a_builtin_guard_is_the_one_kept() {
    // The user's pack replaces a builtin rule (ask, fail open) with a fail-closed deny.
    const MINE: &str = r#"[pack]
name = "guard"

[[rule]]
id = "git-reset-hard"
on = "PreToolUse"
tool = "Bash"
regex = ['\bgit\s+reset\s+--hard\b']
decision = "deny"
fail = "closed"
reason = "mine: never"
"#;
    let rule = |loaded: &rules_compiler::Loaded| {
        loaded
            .rules()
            .iter()
            .find(|r| r.full_id() == "guard/git-reset-hard")
            .map(|r| (r.then.fail_closed, r.then.reason.clone()))
    };
    let mine = Some((true, Some("mine: never".to_owned())));
    for (name, user_config, project_config) in [
        ("user-names-builtin", "builtin = [\"guard\"]\n", "disable = [\"guard/git-reset-hard\"]\n"),
        (
            "project-names-builtin",
            "",
            "builtin = [\"guard\"]\ndisable = [\"guard/git-reset-hard\"]\n",
        ),
        ("project-names-builtin-only", "", "builtin = [\"guard\"]\n"),
    ] {
        let dir = folder(
            &format!("users-builtin-guard-{name}"),
            &[
                ("user/packs/guard.toml", MINE),
                ("user/hookpack.toml", user_config),
                ("project/.claude/hookpack/hookpack.toml", project_config),
            ],
        );
        let loaded = load(&layout(&dir), &[]);
        assert!(!loaded.diagnostics.has_errors(), "{name}: {}", loaded.diagnostics.render());
        assert_eq!(rule(&loaded), mine, "{name}: {}", loaded.diagnostics.render());
    }
}

/// A rule replacing another scope's rule of the same id is said in one info line naming both
/// places; it is no problem (lint stays clean).
#[test]
fn replacing_a_builtin_rule_is_an_info_line_with_both_places() {
    let pack = "[pack]\nname = \"guard\"\n\n[[rule]]\nid = \"rm-root\"\non = \"PreToolUse\"\ntool = \"Bash\"\ndecision = \"ask\"\nreason = \"Ask first.\"\n";
    let dir = folder(
        "override-builtin",
        &[
            ("project/.claude/hookpack/hookpack.toml", "builtin = [\"guard\"]\n"),
            ("project/.claude/hookpack/packs/guard.toml", pack),
        ],
    );
    let loaded = load(&layout(&dir), &[]);
    assert!(loaded.diagnostics.is_empty(), "{}", loaded.diagnostics.render());
    let infos: Vec<_> = loaded
        .diagnostics
        .sorted()
        .into_iter()
        .filter(|d| d.severity == rules_compiler::Severity::Info)
        .map(ToString::to_string)
        .collect();
    assert_eq!(infos.len(), 1, "{infos:?}");
    let info = &infos[0];
    assert!(
        info.starts_with(&format!(
            "{}:5:6: info: ",
            dir.join("project/.claude/hookpack/packs/guard.toml").display()
        )),
        "{info}"
    );
    // Where the builtin pack has the rule, wherever its header comment ends.
    let builtin = include_str!("../../../../rules/guard.toml");
    let line = 1 + builtin.lines().position(|l| l == "id = \"rm-root\"").unwrap_or_default();
    assert!(
        info.contains(&format!(
            "rule `guard/rm-root` replaces the builtin rule of that id at <builtin>/guard.toml:{line}:6"
        )),
        "{info}"
    );
    assert_eq!(info.lines().count(), 1, "{info}");
}

/// Two packs of one name in one scope: a rule of the one read later hides the other's of the
/// same id, silently at run time, so lint warns (not an info line).
#[test]
fn two_packs_of_one_name_in_one_scope_are_warned_about() {
    let dir = folder(
        "same-scope",
        &[
            ("project/.claude/hookpack/hookpack.toml", "builtin = []\n"),
            ("project/.claude/hookpack/packs/a.toml", &rule("style", "tone", "from a")),
            ("project/.claude/hookpack/packs/b.toml", &rule("style", "tone", "from b")),
        ],
    );
    let loaded = load(&layout(&dir), &[]);
    assert_eq!(loaded.diagnostics.warning_count(), 1, "{}", loaded.diagnostics.render());
    let said = loaded.diagnostics.render();
    assert!(
        said.contains("packs/b.toml:5:6: warning: rule `style/tone` is also defined at"),
        "{said}"
    );
    assert!(
        said.contains("packs/a.toml:5:6, in another pack named `style` of the same scope"),
        "{said}"
    );
}
