//! `cargo xtask bench`: what a hook costs to start, as a ratio to the floor, in one run.
//!
//! Every `hookpack-<event>` binary is spawned on one of its examples, interleaved with the
//! floor binary (`hook-floor`: read stdin, parse it with `serde_json`, print one object) on the
//! same payload, and the medians are compared. Both are built twice, dynamically linked (cargo's
//! default) and statically (`+crt-static`, Linux with glibc only), so the same run also says
//! which linking starts faster and by how much. Both are timed as installed, copied into
//! `target/bench/bin/` ([`as_installed`]). The run fails when a hook's median exceeds the
//! floor's by more than the allowed ratio.

use std::path::PathBuf;

use anyhow::{Context, bail, ensure};
use hook_model::EventKind;

use crate::release::{Linking, build_dynamic, build_static};
use crate::timing::{measure, median, ms};
use crate::workspace::{examples, root};

/// A hook may cost at most this much more than the floor on the same payload.
const MAX_RATIO: f64 = 1.2;

const USAGE: &str =
    "usage: cargo xtask bench [--runs N] [--dynamic-only] [--guard-only | --builtin-only]";

#[derive(Debug)]
struct Options {
    runs: usize,
    dynamic_only: bool,
    /// Only the guard packs' part.
    guard_only: bool,
    /// Only the builtin packs' part.
    builtin_only: bool,
}

/// `linking`'s hooks and floor as a user runs them: copied into place, as `cargo xtask install`
/// and `cargo xtask dist` put them, not the files the linker wrote.
///
/// The linker writes its output through a map, a page at a time, and the kernel caches such a
/// file in single pages; a file written in large pieces (a copy, an unpacked archive) or read
/// back from disk is cached in larger blocks, and a hook maps its code from those at less cost:
/// the same prompt hook, linker-written, took about 5% longer than its copy (both spawned
/// interleaved). Hooks and floor are copied alike, so the ratios compare like with like.
fn as_installed(linking: &Linking) -> anyhow::Result<Linking> {
    let dir = root().join("target/bench/bin").join(linking.name);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let names = EventKind::ALL
        .iter()
        .map(|kind| kind.binary_name())
        .chain([crate::codegen::MULTICALL, "hook-floor"]);
    for name in names {
        let from = linking.bin_dir.join(name);
        // A new file each time (renamed into place), cached afresh, never the last run's.
        crate::release::replace(&dir.join(name), |staged| {
            std::fs::copy(&from, staged).with_context(|| format!("copying {}", from.display()))?;
            Ok(())
        })?;
    }
    Ok(Linking { name: linking.name, bin_dir: dir })
}

fn parse(args: &[&str]) -> anyhow::Result<Options> {
    let mut options =
        Options { runs: 200, dynamic_only: false, guard_only: false, builtin_only: false };
    let mut args = args.iter();
    while let Some(&arg) = args.next() {
        match arg {
            "--runs" => {
                let n = args.next().context(USAGE)?;
                options.runs = n.parse().with_context(|| format!("--runs {n}: {USAGE}"))?;
                ensure!(options.runs >= 5, "--runs must be at least 5");
            }
            "--dynamic-only" => options.dynamic_only = true,
            "--guard-only" => options.guard_only = true,
            "--builtin-only" => options.builtin_only = true,
            _ => bail!("unknown argument `{arg}`\n{USAGE}"),
        }
    }
    Ok(options)
}

pub(crate) fn run(args: &[&str]) -> anyhow::Result<()> {
    let options = parse(args)?;
    // The hooks are built on their own: built with the compiler, cargo would unify the
    // features of their shared dependencies and link the compiler's Unicode tables into them.
    let packages = ["hook-bins", "hook-floor"];
    let mut linkings = vec![as_installed(&build_dynamic(&packages)?)?];
    if !options.dynamic_only {
        match build_static(&packages)? {
            Some(linking) => linkings.push(as_installed(&linking)?),
            None => println!("static linking: not available for this host; skipped"),
        }
    }

    if options.guard_only || options.builtin_only {
        let linking = linkings.last().context("no build")?;
        let hook = linking.bin_dir.join(EventKind::PreToolUse.binary_name());
        crate::link_order::report(&hook, &linking.bin_dir.join("hook-floor"));
        let hookpack = build_dynamic(&["hookpack"])?.bin_dir.join("hookpack");
        let failures = if options.guard_only {
            crate::bench_guard::run(&linking.bin_dir, &hookpack, linking.name, options.runs)?
        } else {
            crate::bench_builtin::run(&linkings, &hookpack, options.runs)?
        };
        ensure!(failures.is_empty(), "over the limits:\n  {}", failures.join("\n  "));
        return Ok(());
    }
    let scratch = root().join("target/bench");
    let project = scratch.join("project");
    std::fs::create_dir_all(&project).with_context(|| format!("creating {}", project.display()))?;

    let cases = cases()?;
    println!(
        "\nstart-up cost: median wall time of {} spawns each (fork, exec, stdin from file, \
         stdout drained), hook and floor interleaved on the same payload; no project uses \
         hookpack here",
        options.runs
    );
    let mut failures = Vec::new();
    let mut floors = Vec::new();
    for linking in &linkings {
        let floor = linking.bin_dir.join("hook-floor");
        let mut rows = Vec::new();
        for case in &cases {
            let hook = linking.bin_dir.join(case.kind.binary_name());
            let [hook_time, floor_time] =
                measure(&[(&hook, &project), (&floor, &project)], &case.payload, options.runs)?;
            rows.push((case, hook_time, floor_time));
        }
        println!("\n{} linking", linking.name);
        let hook = linking.bin_dir.join(EventKind::PreToolUse.binary_name());
        crate::link_order::report(&hook, &floor);
        println!("{:<52} {:>10} {:>10} {:>7}", "binary (example)", "hook", "floor", "ratio");
        for (case, hook, floor) in &rows {
            let ratio = hook.as_secs_f64() / floor.as_secs_f64();
            let label = format!("{} ({})", case.kind.binary_name(), case.name);
            let verdict = if ratio <= MAX_RATIO { "" } else { "  over the limit" };
            println!("{label:<52} {:>10} {:>10} {ratio:>7.3}{verdict}", ms(*hook), ms(*floor));
            if ratio > MAX_RATIO {
                failures.push(format!("{} linking: {label}: {ratio:.3}", linking.name));
            }
        }
        let floor_median = median(rows.iter().map(|row| row.2).collect());
        let hook_median = median(rows.iter().map(|row| row.1).collect());
        println!(
            "median over events: hook {} / floor {} = {:.3}",
            ms(hook_median),
            ms(floor_median),
            hook_median.as_secs_f64() / floor_median.as_secs_f64()
        );
        floors.push((linking.name, floor_median, hook_median));
    }
    if let [(_, dyn_floor, dyn_hook), (_, static_floor, static_hook)] = floors.as_slice() {
        println!(
            "\nstatic / dynamic: floor {:.3}, hooks {:.3}",
            static_floor.as_secs_f64() / dyn_floor.as_secs_f64(),
            static_hook.as_secs_f64() / dyn_hook.as_secs_f64()
        );
    }
    let fastest = linkings.last().context("no build")?;
    let compiler = build_dynamic(&["hookpack"])?;
    let hookpack = compiler.bin_dir.join("hookpack");
    failures.extend(crate::bench_rules::run(
        &fastest.bin_dir,
        &hookpack,
        fastest.name,
        options.runs,
    )?);
    failures.extend(crate::bench_builtin::run(&linkings, &hookpack, options.runs)?);
    failures.extend(crate::bench_guard::run(
        &fastest.bin_dir,
        &hookpack,
        fastest.name,
        options.runs,
    )?);
    if !failures.is_empty() {
        bail!("over the limits:\n  {}", failures.join("\n  "));
    }
    println!(
        "\nevery hook within {MAX_RATIO}x of the floor; every rule-count and builtin-pack case \
         within its limit"
    );
    Ok(())
}

/// A payload to spawn a hook on.
#[derive(Debug)]
struct Case {
    kind: EventKind,
    name: String,
    payload: PathBuf,
}

/// The first example of every event, plus the 50 KB prompt.
fn cases() -> anyhow::Result<Vec<Case>> {
    let mut cases = Vec::new();
    // The worktree hooks run git: their cost is not start-up's.
    for &kind in EventKind::ALL.iter().filter(|k| !k.acts_without_rules()) {
        let first =
            examples(kind)?.into_iter().next().with_context(|| format!("no {kind} example"))?;
        cases.push(case(kind, first));
    }
    let long = root().join("examples/user-prompt-submit/long-50kb.json");
    cases.push(case(EventKind::UserPromptSubmit, long));
    Ok(cases)
}

fn case(kind: EventKind, payload: PathBuf) -> Case {
    let name = payload.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Case { kind, name, payload }
}
