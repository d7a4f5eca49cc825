//! The corpus of silently dead packs: rules that parse and yet can never fire, or tests that
//! prove nothing. Each must get a warning or an error at `file:line:col` from `load` (what
//! `hookpack lint` runs, cross-rule checks included), pinned by a snapshot.
//!
//! A pack's `#config: ` lines are its project's `hookpack.toml` (none: `builtin = []`).

use std::path::Path;

use rules_compiler::{Layout, Severity, load};

fn lint(pack: &Path) -> rules_compiler::Diagnostics {
    let text = std::fs::read_to_string(pack).unwrap();
    let name = pack.file_stem().unwrap().to_str().unwrap();
    let project = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dead").join(name);
    let _ = std::fs::remove_dir_all(&project);
    let dir = project.join(".claude/hookpack");
    std::fs::create_dir_all(dir.join("packs")).unwrap();
    let lines: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("#config: ")).collect();
    let config = if lines.is_empty() { "builtin = []".to_owned() } else { lines.join("\n") };
    std::fs::write(dir.join("hookpack.toml"), config).unwrap();
    std::fs::write(dir.join("packs").join(pack.file_name().unwrap()), &text).unwrap();
    load(&Layout { project: Some(project), user: None }, &[]).diagnostics
}

#[test]
fn every_dead_pack_is_said_at_its_place() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dead");
    settings.add_filter(&regex::escape(&format!("{}/", tmp.display())), "");
    let mut silent = Vec::new();
    settings.bind(|| {
        insta::glob!("dead", "*.toml", |path| {
            let diagnostics = lint(path);
            let placed = diagnostics
                .sorted()
                .into_iter()
                .any(|d| d.severity >= Severity::Warning && d.line_col().is_some());
            if !placed {
                silent.push(format!("{}\n{}", path.display(), diagnostics.render()));
            }
            insta::assert_snapshot!("dead", diagnostics.render());
        });
    });
    assert!(silent.is_empty(), "nothing said at a place:\n{}", silent.join("\n"));
}

#[test]
fn the_dead_corpus_is_large_enough() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/dead");
    let count = std::fs::read_dir(dir).unwrap().count();
    assert!(count >= 25, "{count} dead packs");
}
