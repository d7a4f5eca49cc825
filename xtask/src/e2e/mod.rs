//! `cargo xtask e2e [SCENARIO…]`: hookpack under the real Claude Code.
//!
//! Installs the pinned Claude Code CLI (npm, into `target/e2e/claude-code`; a failure to install
//! is an error, never a skip), builds the hook binaries and `hookpack`, and runs each scenario of
//! `e2e/scenarios/` (or those named): a project with packs, wired to every hook binary, compiled
//! with `hookpack compile`; Claude Code in print mode against a scripted stub of the Messages
//! API ([`stub`]); then the scenario's expectations on what the model was shown (the requests),
//! what the CLI printed, and Claude Code's debug log.

mod scenario;
mod stub;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail, ensure};
use hook_model::EventKind;
use serde_json::{Value, json};

use crate::workspace::root;
use scenario::Scenario;
use stub::Stub;

/// The Claude Code version the suite runs against (`@anthropic-ai/claude-code` on npm).
pub(crate) const CLAUDE_CODE_VERSION: &str = "2.1.330";

/// The longest a scenario's Claude Code run may take.
const RUN_LIMIT: Duration = Duration::from_mins(3);

pub(crate) fn run(args: &[&str]) -> anyhow::Result<()> {
    let claude = install()?;
    let bin_dir = build()?;
    let dir = root().join("e2e/scenarios");
    let mut scenarios = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "toml") {
            let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
            if args.is_empty() || args.contains(&name.as_str()) {
                scenarios.push((name, path));
            }
        }
    }
    scenarios.sort();
    ensure!(!scenarios.is_empty(), "no scenario in {} matches {args:?}", dir.display());
    let mut failed = Vec::new();
    for (name, path) in &scenarios {
        let started = Instant::now();
        match Scenario::read(path).and_then(|s| run_scenario(name, &s, &claude, &bin_dir)) {
            Ok(()) => println!("ok    {name} ({:.1} s)", started.elapsed().as_secs_f64()),
            Err(err) => {
                println!("FAIL  {name}: {err:#}");
                failed.push(name.clone());
            }
        }
    }
    println!("\n{} scenarios, {} failed", scenarios.len(), failed.len());
    ensure!(failed.is_empty(), "failed: {}", failed.join(", "));
    Ok(())
}

/// Installs the pinned Claude Code into `target/e2e/claude-code` (once); returns its binary.
fn install() -> anyhow::Result<PathBuf> {
    let prefix = root().join("target/e2e/claude-code");
    let binary = prefix.join("node_modules/@anthropic-ai/claude-code/bin/claude.exe");
    if version(&binary).as_deref() != Some(CLAUDE_CODE_VERSION) {
        println!(
            "installing @anthropic-ai/claude-code@{CLAUDE_CODE_VERSION} into {}",
            prefix.display()
        );
        std::fs::create_dir_all(&prefix)?;
        let status = Command::new("npm")
            .args(["install", "--no-save", "--no-audit", "--no-fund", "--prefix"])
            .arg(&prefix)
            .arg(format!("@anthropic-ai/claude-code@{CLAUDE_CODE_VERSION}"))
            .status()
            .context("running npm (Node.js and npm are needed to install Claude Code)")?;
        ensure!(status.success(), "npm could not install Claude Code {CLAUDE_CODE_VERSION}");
    }
    let found = version(&binary);
    ensure!(
        found.as_deref() == Some(CLAUDE_CODE_VERSION),
        "{} is not Claude Code {CLAUDE_CODE_VERSION} (it says {found:?})",
        binary.display()
    );
    Ok(binary)
}

/// What `claude --version` says, e.g. `2.1.330`.
fn version(binary: &Path) -> Option<String> {
    let output = Command::new(binary).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    text.split_whitespace().next().map(str::to_owned)
}

/// Builds the hook binaries and `hookpack`; returns their folder.
fn build() -> anyhow::Result<PathBuf> {
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--quiet", "-p", "hook-bins", "-p", "hookpack"])
        .current_dir(root())
        .status()
        .context("running cargo build")?;
    ensure!(status.success(), "building the hook binaries failed");
    Ok(root().join("target/debug"))
}

/// The `hooks` of a project's `.claude/settings.json`: every event to its binary.
fn hook_settings(bin_dir: &Path) -> Value {
    let mut hooks = serde_json::Map::new();
    for &kind in EventKind::ALL {
        let command = bin_dir.join(kind.binary_name()).display().to_string();
        hooks.insert(
            kind.as_str().to_owned(),
            json!([{"matcher": "*", "hooks": [{"type": "command", "command": command}]}]),
        );
    }
    json!({ "hooks": hooks })
}

fn run_scenario(
    name: &str,
    scenario: &Scenario,
    claude: &Path,
    bin_dir: &Path,
) -> anyhow::Result<()> {
    let base = root().join("target/e2e/runs").join(name);
    let _ = std::fs::remove_dir_all(&base);
    let (home, project, user) = (base.join("home"), base.join("project"), base.join("config"));
    prepare(scenario, bin_dir, &home, &project, &user)?;

    let stub = Stub::start(scenario.turns(&project), &scenario.model, scenario.context_tokens)?;
    let debug_log = base.join("claude-debug.log");
    // One session: the first prompt starts it, each next one resumes it.
    let session = "6f0e8d52-5b1e-4c57-9a3a-0000000000e2";
    let mut stdout = String::new();
    let mut stderr = Vec::new();
    for (n, prompt) in scenario.prompts().iter().enumerate() {
        let mut command = Command::new(claude);
        command
            .args(["-p", prompt, "--output-format", "stream-json", "--verbose"])
            .args(["--include-hook-events", "--permission-mode", &scenario.permission_mode])
            .args(if n == 0 { ["--session-id", session] } else { ["--resume", session] })
            .args(scenario.worktree.iter().flat_map(|name| ["--worktree", name.as_str()]))
            .arg("--debug-file")
            .arg(&debug_log)
            .current_dir(&project)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
            .env("XDG_CONFIG_HOME", &user)
            .env("ANTHROPIC_BASE_URL", &stub.url)
            .env("ANTHROPIC_API_KEY", "sk-ant-stub")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("IS_SANDBOX", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output = run_limited(command, RUN_LIMIT)?;
        stdout.push_str(&String::from_utf8_lossy(&output.stdout));
        stderr.extend_from_slice(&output.stderr);
    }
    std::fs::write(base.join("claude-stdout.jsonl"), &stdout)?;
    std::fs::write(base.join("claude-stderr.txt"), &stderr)?;
    let debug = std::fs::read_to_string(&debug_log).unwrap_or_default();
    let log = stub.log();
    std::fs::write(
        base.join("requests.json"),
        serde_json::to_string_pretty(
            &log.requests.iter().map(|(p, b)| json!({"path": p, "body": b})).collect::<Vec<_>>(),
        )?,
    )?;
    let seen = scenario::Seen {
        requests: &log.requests,
        stdout: &stdout,
        debug: &debug,
        overruns: log.overruns,
    };
    let problems = scenario.expect.check(&seen, &project);
    if !problems.is_empty() {
        bail!("{}\n      (everything is under {})", problems.join("\n      "), base.display());
    }
    Ok(())
}

/// Runs `command`, killed after `limit`.
fn run_limited(mut command: Command, limit: Duration) -> anyhow::Result<std::process::Output> {
    let child = command.spawn().context("starting Claude Code")?;
    let id = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let output = child.wait_with_output();
        let _ = done.send(());
        output
    });
    if finished.recv_timeout(limit).is_err() {
        let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
        let _ = waiter.join();
        bail!("Claude Code did not finish within {limit:?}");
    }
    waiter
        .join()
        .map_err(|_| anyhow::anyhow!("the waiting thread panicked"))?
        .context("waiting for Claude Code")
}

/// The scenario's folders: Claude Code's home (onboarded), the project (its files, every hook
/// wired, a git repository if asked, compiled if asked) and the user's config folder.
fn prepare(
    scenario: &Scenario,
    bin_dir: &Path,
    home: &Path,
    project: &Path,
    user: &Path,
) -> anyhow::Result<()> {
    for dir in [home, project, &user.join("hookpack")] {
        std::fs::create_dir_all(dir)?;
    }
    let onboarded = json!({"hasCompletedOnboarding": true}).to_string();
    std::fs::create_dir_all(home.join(".claude"))?;
    std::fs::write(home.join(".claude.json"), &onboarded)?;
    std::fs::write(home.join(".claude/.claude.json"), &onboarded)?;
    for (path, text) in &scenario.files {
        let path = project.join(path);
        std::fs::create_dir_all(path.parent().context("a file's folder")?)?;
        std::fs::write(&path, text)?;
    }
    std::fs::create_dir_all(project.join(".claude/hookpack"))?;
    std::fs::write(
        project.join(".claude/settings.json"),
        serde_json::to_string_pretty(&hook_settings(bin_dir))?,
    )?;
    if scenario.git {
        for args in [
            &["init", "-q"][..],
            &["add", "-A"],
            &[
                "-c",
                "user.email=e2e@hookpack",
                "-c",
                "user.name=e2e",
                "commit",
                "-q",
                "-m",
                "start",
            ],
        ] {
            let status = Command::new("git").args(args).current_dir(project).status()?;
            ensure!(status.success(), "git {args:?} failed");
        }
    }
    if scenario.compile {
        // As a user does, in the project: `--project .`.
        let compile = Command::new(bin_dir.join("hookpack"))
            .args(["compile", "--project", "."])
            .current_dir(project)
            .env_clear()
            .env("XDG_CONFIG_HOME", user)
            .output()?;
        ensure!(
            compile.status.success(),
            "hookpack compile: {}",
            String::from_utf8_lossy(&compile.stderr)
        );
    }
    Ok(())
}
