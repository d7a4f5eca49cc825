//! The guard part of `cargo xtask bench`: a `Bash` `PreToolUse` hook answering from every guard
//! pack (`guard` and each `guard-*` family), against the floor on the same payload: an ordinary
//! command, a destructive one (denied), and a 50 KB script whose every command is read.
//! Limits: 1.2× the floor for the short commands, 1.5× for the 50 KB one.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use hook_model::EventKind;
use serde_json::json;

use crate::timing::{measure, ms};
use crate::workspace::root;

const MAX_RATIO: f64 = 1.2;
const MAX_RATIO_LONG: f64 = 1.5;

/// Runs the guard benchmark; returns what exceeded a limit.
pub(crate) fn run(
    bin_dir: &Path,
    hookpack: &Path,
    linking: &str,
    runs: usize,
) -> anyhow::Result<Vec<String>> {
    let packs = guard_packs()?;
    let names: Vec<&str> = packs.iter().map(String::as_str).collect();
    let project = crate::bench_rules::builtin_project(hookpack, "guard", &names)?;
    let scratch = root().join("target/bench/guard");
    let compiled = std::fs::metadata(project.join(".claude/hookpack/compiled/rules.hpk"))?.len();

    let floor = bin_dir.join("hook-floor");
    let hook = bin_dir.join(EventKind::PreToolUse.binary_name());
    println!(
        "\nguard packs ({linking} linking): {} ({compiled} bytes compiled); a Bash PreToolUse \
         hook against the floor, median of {runs} spawns each",
        packs.join(", ")
    );
    println!("{:<40} {:>10} {:>10} {:>7} {:>7}", "command", "hook", "floor", "ratio", "limit");
    let mut failures = Vec::new();
    for (name, payload, limit) in payloads(&scratch, &project)? {
        let [hook_time, floor_time] =
            measure(&[(&hook, &project), (&floor, &project)], &payload, runs)?;
        let ratio = hook_time.as_secs_f64() / floor_time.as_secs_f64();
        let verdict = if ratio <= limit { "" } else { "  over the limit" };
        println!(
            "{name:<40} {:>10} {:>10} {ratio:>7.3} {limit:>7.1}{verdict}",
            ms(hook_time),
            ms(floor_time)
        );
        if ratio > limit {
            failures.push(format!("guard packs: {name}: {ratio:.3} > {limit}"));
        }
    }
    Ok(failures)
}

/// The commands measured, each written as a `Bash` `PreToolUse` payload in `scratch`: (name,
/// payload, limit). An ordinary command, a destructive one (denied), and a 50 KB script whose
/// every command is read.
pub(crate) fn payloads(
    scratch: &Path,
    project: &Path,
) -> anyhow::Result<Vec<(&'static str, PathBuf, f64)>> {
    let mut script = String::new();
    let mut step = 0;
    while script.len() < 50_000 {
        step += 1;
        let _ = writeln!(
            script,
            "echo \"step {step}\" && cp \"src/mod_{step}.rs\" target/out/ && \
             grep -rn 'TODO' src | wc -l; git diff --stat HEAD~{step} -- src/ | tail -1"
        );
    }
    let cases = [
        (
            "ordinary command",
            "git status && cargo test --workspace 2>&1 | tail -20".to_owned(),
            MAX_RATIO,
        ),
        (
            "destructive command (denied)",
            "sudo env X=1 bash -c 'rm -rf /etc'".to_owned(),
            MAX_RATIO,
        ),
        ("50 KB script", script, MAX_RATIO_LONG),
    ];
    std::fs::create_dir_all(scratch)?;
    let mut payloads = Vec::new();
    for (name, command, limit) in cases {
        let payload = scratch.join(format!("{}.json", name.split(' ').next().unwrap_or("case")));
        let body = json!({
            "hook_event_name": "PreToolUse",
            "session_id": "bench-guard",
            "transcript_path": scratch.join("no-transcript.jsonl"),
            "cwd": project,
            "permission_mode": "default",
            "tool_name": "Bash",
            "tool_input": { "command": command, "description": "bench" },
            "tool_use_id": "toolu_bench",
        });
        std::fs::write(&payload, body.to_string())?;
        payloads.push((name, payload, limit));
    }
    Ok(payloads)
}

/// `guard` and every `guard-*` builtin pack, by the files of `rules/`.
pub(crate) fn guard_packs() -> anyhow::Result<Vec<String>> {
    let dir = root().join("rules");
    let mut packs = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        if path.extension().is_some_and(|e| e == "toml")
            && (name == "guard" || name.starts_with("guard-"))
        {
            packs.push(name.to_owned());
        }
    }
    packs.sort();
    Ok(packs)
}
