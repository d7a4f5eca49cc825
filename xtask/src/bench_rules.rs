//! The rule-count part of `cargo xtask bench`: a hook's start-up cost must not grow with the
//! number of rules.
//!
//! Packs of 0, 10, 1,000 and 10,000 rules (five keywords each: 50,000 at the top) are written
//! as TOML, compiled by the release `hookpack compile` (timed), and the `UserPromptSubmit` hook
//! is spawned on the same prompt against each, interleaved with the floor binary. Limits:
//! 10,000 rules at most 1.2× the floor; compiling them under 2 s.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::ensure;

use crate::timing::{measure, ms};
use crate::workspace::root;

const SIZES: [usize; 4] = [0, 10, 1_000, 10_000];
const KEYWORDS_PER_RULE: usize = 5;
/// The most 10,000 rules may cost, against the floor (issue 13).
const MAX_RATIO: f64 = 1.2;
const MAX_COMPILE: Duration = Duration::from_secs(2);

const SYLLABLES: &[&str] = &[
    "ka", "lo", "mi", "ne", "ru", "ta", "vo", "zi", "be", "do", "fa", "gu", "hi", "jo", "ku", "la",
    "mo", "nu", "pe", "qui", "ra", "se", "ti", "un", "ve", "wa", "xo", "yu", "ze", "bri", "cla",
    "dro", "fle", "gri", "pla", "sto", "tra", "vin", "wul", "zar",
];

/// The `i`-th made-up word: three syllables, 64,000 distinct ones.
fn word(i: usize) -> String {
    let n = SYLLABLES.len();
    format!("{}{}{}", SYLLABLES[i % n], SYLLABLES[(i / n) % n], SYLLABLES[(i / n / n) % n])
}

fn pack(rules: usize) -> String {
    let mut text = String::from("[pack]\nname = \"bench\"\n");
    for r in 0..rules {
        let terms: Vec<String> = (0..KEYWORDS_PER_RULE)
            .map(|k| format!("\"{}\"", word(r * KEYWORDS_PER_RULE + k)))
            .collect();
        let _ = write!(
            text,
            "\n[[rule]]\nid = \"r{r}\"\non = \"UserPromptSubmit\"\nkeywords = [{}]\ncontext = \"Rule {r}: a convention of about a hundred characters that the model should follow here.\"\n",
            terms.join(", ")
        );
    }
    text
}

/// Runs `hookpack compile` on `project`; returns how long it took.
pub(crate) fn compile_project(hookpack: &Path, project: &Path) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let output = Command::new(hookpack)
        .args(["compile", "--project"])
        .arg(project)
        .env_remove("HOOKPACK_ARTIFACT")
        .output()?;
    let elapsed = started.elapsed();
    ensure!(
        output.status.success(),
        "hookpack compile failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    Ok(elapsed)
}

/// A project in `target/bench/<name>/project` (made anew) using the builtin `packs`, compiled
/// by `hookpack`; returns its root.
pub(crate) fn builtin_project(
    hookpack: &Path,
    name: &str,
    packs: &[&str],
) -> anyhow::Result<std::path::PathBuf> {
    let scratch = root().join("target/bench").join(name);
    let _ = std::fs::remove_dir_all(&scratch);
    let project = scratch.join("project");
    std::fs::create_dir_all(project.join(".claude/hookpack"))?;
    // A repository of its own, as the projects Claude Code works in are (the hooks that read
    // the branch would otherwise look for `.git` up through this checkout's folders). Without
    // git, they do.
    let _ = std::process::Command::new("git")
        .args(["-c", "init.defaultBranch=main", "init", "--quiet"])
        .arg(&project)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    // A list of plain strings is written alike in JSON and TOML.
    std::fs::write(
        project.join(".claude/hookpack/hookpack.toml"),
        format!("builtin = {}\n", serde_json::to_string(packs)?),
    )?;
    compile_project(hookpack, &project)?;
    Ok(project)
}

/// Runs the rule-count benchmark with the binaries in `bin_dir`; returns what exceeded a limit.
pub(crate) fn run(
    bin_dir: &Path,
    hookpack: &Path,
    linking: &str,
    runs: usize,
) -> anyhow::Result<Vec<String>> {
    let scratch = root().join("target/bench/rules");
    let _ = std::fs::remove_dir_all(&scratch);
    // A prompt that names three rules' keywords among ordinary words.
    let prompt = format!(
        "Please add validation to the invoices handler; see {} and {} ({}).",
        word(3),
        word(5_000),
        word(49_999)
    );
    let payload = scratch.join("prompt.json");
    std::fs::create_dir_all(&scratch)?;
    std::fs::write(
        &payload,
        serde_json::json!({"hook_event_name": "UserPromptSubmit", "session_id": "bench", "transcript_path": "/t",
                           "cwd": scratch, "permission_mode": "default", "prompt": prompt}).to_string(),
    )?;

    println!(
        "\nrule count ({linking} linking): hookpack-user-prompt-submit on one prompt, median of {runs} spawns each"
    );
    let mut projects = Vec::new();
    for rules in SIZES {
        let project = scratch.join(format!("rules-{rules}"));
        std::fs::create_dir_all(project.join(".claude/hookpack/packs"))?;
        std::fs::write(project.join(".claude/hookpack/packs/bench.toml"), pack(rules))?;
        let elapsed = compile_project(hookpack, &project)?;
        let size = std::fs::metadata(project.join(".claude/hookpack/compiled/rules.hpk"))?.len();
        projects.push((rules, project, elapsed, size));
    }

    let hook = bin_dir.join("hookpack-user-prompt-submit");
    let floor = bin_dir.join("hook-floor");
    let cases: [(&Path, &Path); 5] = [
        (&hook, &projects[0].1),
        (&hook, &projects[1].1),
        (&hook, &projects[2].1),
        (&hook, &projects[3].1),
        (&floor, &projects[3].1),
    ];
    let [times @ .., floor_time] = measure(&cases, &payload, runs)?;
    let empty = times[0];
    println!("the floor: {}", ms(floor_time));
    println!(
        "{:>8} {:>10} {:>12} {:>12} {:>10} {:>10} {:>10}",
        "rules", "keywords", "artifact", "compile", "hook", "/ empty", "/ floor"
    );
    let mut failures = Vec::new();
    for ((rules, _, compile, size), time) in projects.iter().zip(times) {
        let to_empty = time.as_secs_f64() / empty.as_secs_f64();
        let ratio = time.as_secs_f64() / floor_time.as_secs_f64();
        println!(
            "{rules:>8} {:>10} {:>12} {:>12} {:>10} {to_empty:>10.3} {ratio:>10.3}",
            rules * KEYWORDS_PER_RULE,
            format!("{} KiB", size.div_ceil(1024)),
            ms(*compile),
            ms(time)
        );
        if *rules == 10_000 {
            if ratio > MAX_RATIO {
                failures.push(format!("10,000 rules: {ratio:.3}x the floor (limit {MAX_RATIO})"));
            }
            if *compile > MAX_COMPILE {
                failures.push(format!("compiling 10,000 rules took {} (limit 2 s)", ms(*compile)));
            }
        }
    }
    let answer = Command::new(&hook)
        .env_clear()
        .env("CLAUDE_PROJECT_DIR", &projects[3].1)
        .stdin(std::fs::File::open(&payload)?)
        .output()?;
    let answer = String::from_utf8_lossy(&answer.stdout);
    ensure!(
        answer.contains("Rule 0:")
            && answer.contains("Rule 1000:")
            && answer.contains("Rule 9999:"),
        "the 10,000-rule hook did not fire the three rules: {answer}"
    );
    println!("the 10,000-rule hook fired the rules the prompt names: r0, r1000, r9999");
    failures.extend(path_rules(bin_dir, hookpack, runs)?);
    Ok(failures)
}

/// Path rules in one project, against the floor.
const PATH_RULES: usize = 2_000;
const MAX_PATH_RATIO: f64 = 1.3;

/// A `PreToolUse` `Write` against [`PATH_RULES`] rules on varied globs (half by a first folder,
/// half by an extension; one matches the file written), and against none.
fn path_rules(bin_dir: &Path, hookpack: &Path, runs: usize) -> anyhow::Result<Vec<String>> {
    let scratch = root().join("target/bench/paths");
    let _ = std::fs::remove_dir_all(&scratch);
    let mut projects = Vec::new();
    for rules in [0, PATH_RULES] {
        let mut text = String::from("[pack]\nname = \"paths\"\n");
        for r in 0..rules {
            let glob = match r {
                0 => "src/api/**".to_owned(),
                r if r % 2 == 0 => format!("{}/**/*.ts", word(r)),
                r => format!("**/*.{}", word(r)),
            };
            let _ = write!(
                text,
                "\n[[rule]]\nid = \"p{r}\"\non = \"PreToolUse\"\ntool = \"Write\"\npaths = [\"{glob}\"]\ncontext = \"Path rule {r}.\"\n"
            );
        }
        let project = scratch.join(format!("paths-{rules}"));
        std::fs::create_dir_all(project.join(".claude/hookpack/packs"))?;
        std::fs::write(project.join(".claude/hookpack/packs/paths.toml"), text)?;
        compile_project(hookpack, &project)?;
        projects.push(project);
    }
    let payload = scratch.join("write.json");
    let file = projects[1].join("src/api/orders.ts");
    std::fs::write(
        &payload,
        serde_json::json!({"hook_event_name": "PreToolUse", "session_id": "bench", "transcript_path": "/t",
                           "cwd": projects[1], "permission_mode": "default", "tool_name": "Write",
                           "tool_use_id": "toolu_1",
                           "tool_input": {"file_path": file, "content": "export {}\n"}}).to_string(),
    )?;
    let hook = bin_dir.join("hookpack-pre-tool-use");
    let floor = bin_dir.join("hook-floor");
    let [none, many, floor_time] = measure(
        &[(&hook, &projects[0]), (&hook, &projects[1]), (&floor, &projects[1])],
        &payload,
        runs,
    )?;
    let ratio = many.as_secs_f64() / floor_time.as_secs_f64();
    println!(
        "{PATH_RULES} path rules, a PreToolUse Write: {} ({ratio:.3}x the floor, limit {MAX_PATH_RATIO}); none: {} ({:.3}x)",
        ms(many),
        ms(none),
        none.as_secs_f64() / floor_time.as_secs_f64()
    );
    let answer = Command::new(&hook)
        .env_clear()
        .env("CLAUDE_PROJECT_DIR", &projects[1])
        .stdin(std::fs::File::open(&payload)?)
        .output()?;
    let answer = String::from_utf8_lossy(&answer.stdout);
    ensure!(answer.contains("Path rule 0."), "the path rule that matches did not fire: {answer}");
    Ok(if ratio > MAX_PATH_RATIO {
        vec![format!("{PATH_RULES} path rules: {ratio:.3}x the floor (limit {MAX_PATH_RATIO})")]
    } else {
        Vec::new()
    })
}
