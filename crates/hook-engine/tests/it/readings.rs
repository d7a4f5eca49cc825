//! What the shell reader makes of every command of the guard corpus (`corpus/guard/`), in both
//! dialects, pinned: a change to the reader that changes a reading shows here, command by
//! command, and one meant to keep them (a faster reader) is proven to.

use std::fmt::Write as _;
use std::path::Path;

use hook_engine::shell::{Dialect, Parsed, parse};

/// One reading, every part the rules see: each command with its depth, program, name,
/// wrappers, writes, standard input and the command it reads through a pipe; the programs by
/// name; whether the text was read in full; the bytes of its words.
fn reading(parsed: &Parsed) -> String {
    let mut out = String::new();
    for command in parsed.commands() {
        let _ = write!(out, "  {} {}: {command}", command.index(), command.depth());
        let _ = write!(out, " | program {:?} name {:?}", command.program(), command.name());
        let wrappers: Vec<&str> = command.wrappers().collect();
        if !wrappers.is_empty() {
            let _ = write!(out, " wrappers {wrappers:?}");
        }
        let writes: Vec<&str> = command.writes().collect();
        if !writes.is_empty() {
            let _ = write!(out, " writes {writes:?}");
        }
        if let Some(from) = command.piped_from() {
            let _ = write!(out, " piped from {}", from.index());
        }
        out.push('\n');
    }
    let names: Vec<String> = parsed.by_name().map(|(name, at)| format!("{name}{at:?}")).collect();
    let _ = writeln!(
        out,
        "  names {} bytes {}{}",
        names.join(" "),
        parsed.word_bytes(),
        if parsed.exhausted() { " exhausted" } else { "" }
    );
    out
}

fn corpus() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus/guard");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus file").path())
        .filter(|path| path.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut commands = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("a readable corpus file");
        for line in text.lines().filter(|l| !l.is_empty()) {
            let case: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            commands.push(case["command"].as_str().expect("a command").to_owned());
        }
    }
    commands
}

#[test]
fn the_guard_corpus_reads_as_pinned() {
    let commands = corpus();
    assert!(commands.len() >= 1_000, "{} commands", commands.len());
    let mut out = String::new();
    for command in &commands {
        let _ = writeln!(out, "$ {command:?}");
        out.push_str(&reading(&parse(command, Dialect::Posix)));
        let powershell = reading(&parse(command, Dialect::PowerShell));
        if powershell != reading(&parse(command, Dialect::Posix)) {
            out.push_str("  powershell:\n");
            out.push_str(&powershell);
        }
    }
    insta::assert_snapshot!("guard_corpus", out);
}

#[test]
fn no_orphan_snapshots() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/snapshots");
    for entry in std::fs::read_dir(here).expect("the snapshots") {
        let name = entry.expect("a snapshot").file_name().to_string_lossy().into_owned();
        assert!(name == "it__readings__guard_corpus.snap", "orphan snapshot {name}");
    }
}
