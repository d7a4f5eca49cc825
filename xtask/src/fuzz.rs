//! `cargo xtask fuzz [TARGET] [--seconds N]`: coverage-guided fuzzing with libFuzzer, on the
//! stable toolchain.
//!
//! Builds `fuzz/` (its own workspace: one thin `fuzz_target!` binary per target around
//! `hook_fuzz::Target::run`) in release with `SanitizerCoverage` instrumentation from stable
//! codegen flags (`-Cpasses=sancov-module` and LLVM options; `cargo fuzz` is not needed, and no
//! sanitizer: `-Zsanitizer` is nightly-only, and the code fuzzed is safe Rust, whose bounds and
//! overflow checks — on here — are what would catch a bad index). libFuzzer itself is compiled
//! from C++ by `libfuzzer-sys`'s build script with the system compiler.
//!
//! Then runs each target (or the one named) for N seconds (default 60) over its checked-in
//! seeds (`fuzz/seeds/<target>/`) and a working corpus (`fuzz/corpus/<target>/`, not committed)
//! with a 5-second timeout per input, and prints executions, speed, coverage and what it found.
//! Crashes, hangs and out-of-memory inputs are written to `fuzz/artifacts/<target>/`; any of
//! them makes the command fail. A found input goes, minimized (`-minimize_crash=1`), to
//! `fuzz/regressions/<target>/`, where `cargo test` replays it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail, ensure};
use hook_fuzz::Target;

use crate::release::host_triple;
use crate::workspace::{cargo, root};

const USAGE: &str =
    "usage: cargo xtask fuzz [payload|pack|artifact|memory|shell] [--seconds N] [--jobs N]";

/// `SanitizerCoverage` as `cargo fuzz` sets it, from flags stable rustc accepts: 8-bit edge
/// counters and the PC table (libFuzzer's coverage), comparison tracing (so that the fuzzer
/// learns the magic numbers and keywords the code compares against), `cfg(fuzzing)`, and
/// debug assertions and overflow checks even in release.
const RUSTFLAGS: &str = "-Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares \
    --cfg fuzzing -Cdebug-assertions -Coverflow-checks";

/// libFuzzer's time limit for one input: above it, the input is reported as a hang.
const TIMEOUT_SECONDS: u32 = 5;

#[derive(Debug)]
struct Options {
    targets: Vec<Target>,
    seconds: u32,
    /// Fuzzing processes at once (libFuzzer's `-jobs`, each over the whole corpus, sharing
    /// what they find): 1 runs the target itself.
    jobs: u32,
}

fn parse(args: &[&str]) -> anyhow::Result<Options> {
    let mut options = Options { targets: Target::ALL.to_vec(), seconds: 60, jobs: 1 };
    let mut named = None;
    let mut args = args.iter();
    while let Some(&arg) = args.next() {
        match arg {
            "--seconds" => {
                let n = args.next().context(USAGE)?;
                options.seconds = n.parse().with_context(|| format!("--seconds {n}: {USAGE}"))?;
                ensure!(options.seconds > 0, "--seconds must be at least 1");
            }
            "--jobs" => {
                let n = args.next().context(USAGE)?;
                options.jobs = n.parse().with_context(|| format!("--jobs {n}: {USAGE}"))?;
                ensure!(options.jobs > 0, "--jobs must be at least 1");
            }
            name if named.is_none() && !name.starts_with('-') => {
                let target = Target::from_name(name)
                    .with_context(|| format!("no fuzz target `{name}`\n{USAGE}"))?;
                named = Some(target);
            }
            _ => bail!("unknown argument `{arg}`\n{USAGE}"),
        }
    }
    if let Some(target) = named {
        options.targets = vec![target];
    }
    Ok(options)
}

/// What one run of a target did, from libFuzzer's report.
#[derive(Debug, Default)]
struct Stats {
    runs: u64,
    exec_per_sec: u64,
    cov: u64,
    ft: u64,
    corpus: u64,
}

impl Stats {
    /// What several jobs did together: their executions and speeds added, the widest
    /// coverage and corpus.
    fn sum(each: &[Stats]) -> Stats {
        Stats {
            runs: each.iter().map(|s| s.runs).sum(),
            exec_per_sec: each.iter().map(|s| s.exec_per_sec).sum(),
            cov: each.iter().map(|s| s.cov).max().unwrap_or(0),
            ft: each.iter().map(|s| s.ft).max().unwrap_or(0),
            corpus: each.iter().map(|s| s.corpus).max().unwrap_or(0),
        }
    }

    /// Reads the last status line (`#N ... cov: C ft: F corp: K/...`) and the final
    /// `stat::` lines of libFuzzer's output.
    fn read(log: &str) -> Stats {
        let mut stats = Stats::default();
        let field = |line: &str, name: &str| -> Option<u64> {
            let rest = line.split(name).nth(1)?.trim_start();
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        if let Some(line) = log.lines().rev().find(|l| l.starts_with('#') && l.contains("cov: ")) {
            stats.cov = field(line, "cov:").unwrap_or(0);
            stats.ft = field(line, "ft:").unwrap_or(0);
            stats.corpus = field(line, "corp:").unwrap_or(0);
            // A run cut short reports no final `stat::` lines: its last status line counts.
            stats.runs = field(line, "#").unwrap_or(0);
            stats.exec_per_sec = field(line, "exec/s:").unwrap_or(0);
        }
        for line in log.lines() {
            if let Some(n) = field(line, "stat::number_of_executed_units:") {
                stats.runs = n;
            }
            if let Some(n) = field(line, "stat::average_exec_per_sec:") {
                stats.exec_per_sec = n;
            }
        }
        stats
    }
}

pub(crate) fn run(args: &[&str]) -> anyhow::Result<()> {
    let options = parse(args)?;
    let fuzz = root().join("fuzz");
    let bin_dir = build(&fuzz)?;

    let mut found = Vec::new();
    for target in &options.targets {
        found.extend(run_target(&fuzz, &bin_dir, *target, options.seconds, options.jobs)?);
    }
    if found.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = found.iter().map(|p| format!("  {}", p.display())).collect();
    bail!(
        "the fuzzer found {} failing input(s):\n{}\nreproduce with `fuzz/target/<host>/release/<target> <file>`; \
         minimize with `-minimize_crash=1 -runs=100000`, then keep it under fuzz/regressions/<target>/",
        found.len(),
        list.join("\n")
    )
}

/// Builds the fuzz binaries; returns where they are.
fn build(fuzz: &Path) -> anyhow::Result<PathBuf> {
    let host = host_triple()?;
    let target_dir = fuzz.join("target");
    println!("building the fuzz targets: release, instrumented for libFuzzer ({host})");
    let started = Instant::now();
    // `--target` keeps the flags off build scripts and proc macros, which cannot link the
    // coverage callbacks libFuzzer provides.
    let status = cargo()
        .current_dir(fuzz)
        .args(["build", "--release", "--locked", "--bins", "--target", &host])
        .arg("--manifest-path")
        .arg(fuzz.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTFLAGS", RUSTFLAGS)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .context("running cargo build")?;
    ensure!(
        status.success(),
        "building fuzz/ failed (if fuzz/Cargo.lock is out of date: `cp Cargo.lock fuzz/Cargo.lock \
         && cargo metadata --manifest-path fuzz/Cargo.toml --format-version 1 >/dev/null`, and \
         commit it)"
    );
    println!("built in {:.0} s", started.elapsed().as_secs_f64());
    Ok(target_dir.join(host).join("release"))
}

/// Runs one target for `seconds`; returns the inputs it found (crashes, hangs, out of memory).
fn run_target(
    fuzz: &Path,
    bin_dir: &Path,
    target: Target,
    seconds: u32,
    jobs: u32,
) -> anyhow::Result<Vec<PathBuf>> {
    let name = target.name();
    let corpus = fuzz.join("corpus").join(name);
    let artifacts = fuzz.join("artifacts").join(name);
    for dir in [&corpus, &artifacts] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    if target == Target::Artifact {
        // A whole compiled artifact, for the mode where the input is the file itself. Built
        // here, never committed.
        let base = corpus.join("base.hpk");
        std::fs::write(&base, hook_fuzz::artifact::base_artifact())
            .with_context(|| format!("writing {}", base.display()))?;
    }
    let before = listing(&artifacts)?;
    let log_path = fuzz.join("target").join(format!("fuzz-{name}.log"));
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    println!("\nfuzzing `{name}` for {seconds} s (log: {})", log_path.display());
    let mut prefix = artifacts.clone().into_os_string();
    prefix.push("/");
    let exit = Command::new(bin_dir.join(name))
        // The `payload` target runs the hooks, whose relative `cwd`s start here (its harness
        // skips a payload whose `cwd` reaches a project).
        .current_dir(fuzz)
        .arg(&corpus)
        .arg(fuzz.join("seeds").join(name))
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-timeout={TIMEOUT_SECONDS}"))
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .args(if jobs > 1 {
            vec![format!("-jobs={jobs}"), format!("-workers={jobs}")]
        } else {
            vec![]
        })
        .arg({
            let mut arg = std::ffi::OsString::from("-artifact_prefix=");
            arg.push(&prefix);
            arg
        })
        .stdout(log.try_clone()?)
        .stderr(log)
        .status()
        .with_context(|| format!("running {}", bin_dir.join(name).display()))?;
    let mut text = std::fs::read_to_string(&log_path).unwrap_or_default();
    let stats = if jobs > 1 {
        // Each job logs to `fuzz-<job>.log` where it runs: gathered into the target's log.
        let mut each = Vec::new();
        for job in 0..jobs {
            let path = fuzz.join(format!("fuzz-{job}.log"));
            let job_log = std::fs::read_to_string(&path).unwrap_or_default();
            each.push(Stats::read(&job_log));
            let _ = writeln!(text, "\n== job {job} ==\n{job_log}");
            let _ = std::fs::remove_file(&path);
        }
        std::fs::write(&log_path, &text)
            .with_context(|| format!("writing {}", log_path.display()))?;
        Stats::sum(&each)
    } else {
        Stats::read(&text)
    };
    let found: Vec<PathBuf> = listing(&artifacts)?
        .into_iter()
        .filter(|p| !before.contains(p))
        .filter(|p| {
            let file = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            ["crash-", "timeout-", "oom-", "leak-"].iter().any(|kind| file.starts_with(kind))
        })
        .collect();
    println!(
        "{name}: {} executions ({} exec/s), coverage {} edges, {} features, corpus {}; \
         {} found{}",
        stats.runs,
        stats.exec_per_sec,
        stats.cov,
        stats.ft,
        stats.corpus,
        found.len(),
        if exit.success() { String::new() } else { format!(" ({exit})") }
    );
    if !exit.success() || !found.is_empty() {
        // What failed and where: the panic, the workspace's frames, libFuzzer's verdict.
        let telling =
            ["panicked at", "memory allocation of", "ERROR: libFuzzer", "Test unit written"];
        let frames = [": hook_", ": rules_compiler::", "at /"];
        let lines = text.lines().filter(|line| {
            telling.iter().any(|t| line.contains(t))
                || (frames.iter().any(|f| line.contains(f))
                    && !line.contains("/rustc/")
                    && !line.contains("/.cargo/"))
        });
        for line in lines.take(40) {
            println!("  | {line}");
        }
    }
    if !exit.success() && found.is_empty() {
        bail!(
            "{name}: libFuzzer failed without writing an input ({exit}); see {}",
            log_path.display()
        );
    }
    Ok(found)
}

fn listing(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        files.push(entry?.path());
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let all = parse(&[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((all.targets.len(), all.seconds), (Target::ALL.len(), 60));
        let one = parse(&["pack", "--seconds", "15"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((one.targets, one.seconds), (vec![Target::Pack], 15));
        assert!(parse(&["nothing"]).is_err());
        assert!(parse(&["--seconds", "0"]).is_err());
        assert!(parse(&["pack", "memory"]).is_err());
        let forked = parse(&["shell", "--jobs", "2"]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((forked.targets, forked.jobs), (vec![Target::Shell], 2));
        assert!(parse(&["--jobs", "0"]).is_err());
    }

    #[test]
    fn libfuzzer_report() {
        let log = "#34\tINITED cov: 2292 ft: 2897 corp: 33/15476b exec/s: 0 rss: 34Mb\n\
                   #44082\tDONE   cov: 3366 ft: 4993 corp: 484/184Kb lim: 779 exec/s: 2099\n\
                   stat::number_of_executed_units: 44082\n\
                   stat::average_exec_per_sec:     2099\n";
        let stats = Stats::read(log);
        assert_eq!(
            (stats.runs, stats.exec_per_sec, stats.cov, stats.ft, stats.corpus),
            (44082, 2099, 3366, 4993, 484)
        );
        // A run cut short: no `stat::` lines; its last status line counts.
        let cut = "#1000\tNEW    cov: 100 ft: 200 corp: 10/1Kb exec/s: 0 rss: 30Mb\n\
                   #9876543\tREDUCE cov: 1831 ft: 13124 corp: 3364/444Kb exec/s: 2100 rss: 43Mb\n";
        let one = Stats::read(cut);
        assert_eq!(
            (one.runs, one.exec_per_sec, one.cov, one.ft, one.corpus),
            (9_876_543, 2100, 1831, 13124, 3364)
        );
        // Jobs together: executions and speeds added, the widest coverage.
        let both = Stats::sum(&[one, Stats::read(log)]);
        assert_eq!(
            (both.runs, both.exec_per_sec, both.cov, both.ft, both.corpus),
            (9_920_625, 4199, 3366, 13124, 3364)
        );
    }

    /// `fuzz/` is a workspace of its own: its lock must follow the crates it fuzzes, or the CI
    /// fuzz step (`--locked`) fails after the tests pass.
    #[test]
    fn the_fuzz_lock_is_up_to_date() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let manifest = crate::workspace::root().join("fuzz/Cargo.toml");
        let output = std::process::Command::new(cargo)
            .args(["metadata", "--locked", "--format-version", "1", "--manifest-path"])
            .arg(&manifest)
            .output()
            .unwrap_or_else(|e| panic!("running cargo metadata: {e}"));
        assert!(
            output.status.success(),
            "fuzz/Cargo.lock is stale: run `cargo update --manifest-path fuzz/Cargo.toml \
             --workspace`\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}
