//! Broken packs give the right `file:line:col` diagnostics (snapshots); valid packs give none.

use std::path::Path;
use std::sync::Arc;

use rules_compiler::{SourceFile, parse_pack};

fn check(path: &Path) -> rules_compiler::Diagnostics {
    let text = std::fs::read_to_string(path).unwrap();
    let name = Path::new("packs").join(path.file_name().unwrap());
    let source = Arc::new(SourceFile::new(name, text));
    // Relative to the package (the tests' working folder), so that messages naming the folder a
    // `context_file` must stay in read the same on every machine.
    let dir = path.parent().unwrap();
    let dir = dir.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(dir);
    parse_pack(&source, dir).1
}

#[test]
fn broken_packs() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        insta::glob!("broken", "*.toml", |path| {
            let diagnostics = check(path);
            assert!(!diagnostics.is_empty(), "{}: no diagnostic", path.display());
            insta::assert_snapshot!(diagnostics.render());
        });
    });
}

/// Every snapshot belongs to a broken or dead pack that still exists: a removed pack takes its snapshot
/// with it (what `cargo insta test --unreferenced reject` checks, without the tool).
#[test]
fn no_orphan_snapshots() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it");
    for entry in std::fs::read_dir(here.join("snapshots")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let (corpus, pack) = [("broken", "broken_packs@"), ("dead", "dead@")]
            .into_iter()
            .find_map(|(corpus, prefix)| {
                Some((corpus, name.strip_prefix(prefix)?.strip_suffix(".snap")?))
            })
            .unwrap_or_else(|| panic!("unexpected file {name}"));
        assert!(here.join(corpus).join(pack).is_file(), "{name}: no pack {corpus}/{pack}");
    }
}

#[test]
fn the_corpus_is_large_enough() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/broken");
    let count = std::fs::read_dir(dir).unwrap().count();
    assert!(count >= 30, "{count} broken packs");
}

/// One pack with five mistakes reports all five, in one run.
#[test]
fn five_mistakes_five_errors() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/broken/five-mistakes.toml");
    let diagnostics = check(&path);
    assert_eq!(diagnostics.error_count(), 5, "{}", diagnostics.render());
}

#[test]
fn valid_packs_have_no_diagnostics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/valid");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let diagnostics = check(&path);
            assert!(diagnostics.is_empty(), "{}", diagnostics.render());
        }
    }
}
