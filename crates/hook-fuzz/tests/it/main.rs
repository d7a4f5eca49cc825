//! Replays the fuzz seeds and regressions through the harnesses, without libFuzzer, so that
//! `cargo test` catches a regression the fuzzer once found.
//!
//! Every file of `fuzz/seeds/<target>/` and `fuzz/regressions/<target>/` runs through
//! [`Target::run`], which panics when an invariant breaks. A seed whose name starts with
//! `valid-` must also still go all the way (`Reached::Evaluated`): a seed that the code now
//! turns away at the door no longer fuzzes what it was chosen for.
//!
//! `shell` checks, on counts, that the shell reader stays linear on hostile 1 MiB inputs.

use std::path::{Path, PathBuf};

use hook_engine::shell::{Dialect, parse};
use hook_fuzz::{Reached, Target, workspace_root};

mod shell;

/// Inputs the fuzzer found (or that were made to show a known bug) whose fix has not landed,
/// as `<target>/<file>`: kept in `fuzz/regressions/` but not replayed, since each panics,
/// aborts the process or never returns. Remove a line when its fix lands.
const KNOWN_OPEN: &[&str] = &[];

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a readable folder").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

fn replay(folder: &str, target: Target) -> Vec<(PathBuf, Reached)> {
    let dir = workspace_root().join("fuzz").join(folder).join(target.name());
    files(&dir)
        .into_iter()
        .filter(|path| {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            !KNOWN_OPEN.contains(&format!("{}/{name}", target.name()).as_str())
        })
        .map(|path| {
            let data = std::fs::read(&path).expect("a readable input");
            let reached = target.run(&data);
            (path, reached)
        })
        .collect()
}

#[test]
fn every_seed_runs_and_valid_seeds_go_all_the_way() {
    for target in Target::ALL {
        let replayed = replay("seeds", target);
        assert!(replayed.len() >= 3, "{}: only {} seeds", target.name(), replayed.len());
        let mut valid = 0;
        for (path, reached) in replayed {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if name.starts_with("valid-") {
                valid += 1;
                assert_eq!(reached, Reached::Evaluated, "{}", path.display());
            }
        }
        assert!(valid > 0, "{}: no `valid-` seed", target.name());
    }
}

#[test]
fn every_regression_runs_but_the_known_open_ones() {
    let root = workspace_root().join("fuzz/regressions");
    for entry in KNOWN_OPEN {
        assert!(root.join(entry).is_file(), "KNOWN_OPEN names a missing file: {entry}");
    }
    for target in Target::ALL {
        // Each input panics in its harness if what the fuzzer found is back.
        let _ = replay("regressions", target);
    }
}

#[test]
fn targets_match_the_fuzz_binaries() {
    let manifest =
        std::fs::read_to_string(workspace_root().join("fuzz/Cargo.toml")).expect("fuzz/Cargo.toml");
    for target in Target::ALL {
        let bin = format!("name = \"{}\"", target.name());
        assert!(manifest.contains(&bin), "fuzz/Cargo.toml has no [[bin]] {}", target.name());
        assert_eq!(Target::from_name(target.name()), Some(target));
        let wrapper = workspace_root().join(format!("fuzz/fuzz_targets/{}.rs", target.name()));
        assert!(wrapper.is_file(), "no {}", wrapper.display());
    }
}

#[test]
fn the_base_artifact_is_valid_and_unedited_when_no_edit_is_given() {
    let base = hook_fuzz::artifact::base_artifact();
    assert_eq!(hook_fuzz::artifact::mutate(&[]), base);
    assert_eq!(hook_fuzz::artifact::with_crc(base.clone()), base, "the CRC is already right");
    assert_eq!(Target::Artifact.run(&[]), Reached::Evaluated);
    assert_eq!(Target::Artifact.run(&base), Reached::Evaluated);
}

#[test]
fn the_privacy_property_applies_to_three_parts_without_tags() {
    // The property is checked on seeds that have three NUL-separated parts.
    assert_eq!(Target::Memory.run(b"\0keep this\0hidden\0and this"), Reached::Evaluated);
    assert_eq!(Target::Memory.run(b"\0no parts"), Reached::Rejected);
    assert_eq!(Target::Memory.run(b"\0a <private>\0b\0c"), Reached::Rejected, "mentions a tag");
}

#[test]
fn the_shell_target_matches_what_a_command_line_runs() {
    // Six header bytes (the dialect, then the pattern), then the command line.
    assert_eq!(Target::Shell.run(b"0\x01\0\x03\x01\0sudo rm -rf /"), Reached::Evaluated);
    assert_eq!(Target::Shell.run(b"1\x02\x01\x02\0\0git push -f"), Reached::Evaluated);
    assert_eq!(Target::Shell.run(b"0\0\0\0\0\0;; && ||"), Reached::Parsed);
    assert_eq!(Target::Shell.run(b"0\0\0"), Reached::Rejected, "no whole header");

    // The seeds' headers choose patterns that match what their command lines run.
    let seeds = workspace_root().join("fuzz/seeds/shell");
    for (seed, expected) in [
        ("valid-rm-rf-root", true),
        ("valid-git-push-force", true),
        ("valid-commit-message-is-data", false),
        ("valid-curl-pipe-sh", true),
        ("valid-powershell-git-exe", true),
    ] {
        let data = std::fs::read(seeds.join(seed)).expect("a readable seed");
        let (header, text) = data.split_at(hook_fuzz::shell::HEADER);
        let dialect = if header[0] & 1 == 0 { Dialect::Posix } else { Dialect::PowerShell };
        let pattern = hook_fuzz::shell::pattern(&header[1..]);
        let parsed = parse(String::from_utf8_lossy(text), dialect);
        let matched = parsed.commands().any(|c| {
            pattern.matches(&c, &hook_engine::paths::Places::default(), &mut |_| Ok::<(), ()>(()))
                == Ok(true)
        });
        assert_eq!(matched, expected, "{seed}");
    }
}
