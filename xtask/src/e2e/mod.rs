//! `cargo xtask e2e [SCENARIO…]`: hookpack under the real Claude Code.
//!
//! Installs the pinned Claude Code CLI (npm, into `target/e2e/claude-code`; a failure to install
//! is an error, never a skip), builds the hook binaries and `hookpack`, and runs each scenario of
//! `e2e/scenarios/` (or those named): a project with packs, wired to every hook binary, compiled
//! with `hookpack compile`; Claude Code in print mode against a scripted stub of the Messages
//! API ([`stub`]); then the scenario's expectations on what the model was shown (the requests),
//! what the CLI printed, and Claude Code's debug log.

mod answers;
mod mcp;
mod readme;
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

/// The MCP server of scenarios with `mcp_stub = true`, on stdio.
pub(crate) fn serve_mcp_stub() -> anyhow::Result<()> {
    mcp::serve()
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

/// The `hooks` of a project's `.claude/settings.json`: every event to its binary, then the
/// scenario's own commands.
fn hook_settings(
    bin_dir: &Path,
    scenario: &Scenario,
    project: &Path,
    answers: &[answers::Answer],
) -> anyhow::Result<Value> {
    let mut hooks = serde_json::Map::new();
    for &kind in EventKind::ALL {
        let mut commands = vec![bin_dir.join(kind.binary_name()).display().to_string()];
        commands.extend(
            scenario.hooks.get(kind.as_str()).into_iter().flatten().map(|c| substitute(c, project)),
        );
        if kind == EventKind::SessionEnd {
            commands.extend(answers.iter().map(replay_command));
        }
        let handlers: Vec<Value> =
            commands.iter().map(|c| json!({"type": "command", "command": c})).collect();
        hooks.insert(kind.as_str().to_owned(), json!([{"matcher": "*", "hooks": handlers}]));
    }
    if let Some(event) = scenario.hooks.keys().find(|e| EventKind::from_name(e).is_none()) {
        bail!("`hooks` names {event:?}, which is not an event");
    }
    Ok(json!({ "hooks": hooks }))
}

/// The `SessionEnd` hook command that prints `answer`.
fn replay_command(answer: &answers::Answer) -> String {
    format!("cat {}", answer.file.display())
}

/// `text` with `{project}` replaced by the project's root.
fn substitute(text: &str, project: &Path) -> String {
    text.replace("{project}", &project.display().to_string())
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
    let answers = prepare(scenario, bin_dir, &base)?;
    if scenario.plugin {
        install_plugin(claude, bin_dir, &home)?;
    }

    let mcp_config = base.join("mcp.json");
    if scenario.mcp_stub {
        write_mcp_config(&mcp_config)?;
    }
    let (main, subagents) = scenario.turns(&project);
    let stub = Stub::start(main, subagents, &scenario.model, scenario.context_tokens)?;
    let debug_log = base.join("claude-debug.log");
    // One session: the first prompt starts it, each next one resumes it (or, in one process,
    // follows the previous one's result).
    let session = "6f0e8d52-5b1e-4c57-9a3a-0000000000e2";
    let prompts = scenario.prompts();
    let runs: Vec<&[&str]> =
        if scenario.one_process { vec![&prompts[..]] } else { prompts.chunks(1).collect() };
    let mut stdout = String::new();
    let mut stderr = Vec::new();
    for (n, prompts) in runs.into_iter().enumerate() {
        let mut command = Command::new(claude);
        command.arg("-p");
        if scenario.one_process {
            command.args(["--input-format", "stream-json"]);
        } else {
            command.arg(prompts[0]);
        }
        command
            .args(["--output-format", "stream-json", "--verbose"])
            .args(["--include-hook-events", "--permission-mode", &scenario.permission_mode])
            .args(if n == 0 { ["--session-id", session] } else { ["--resume", session] })
            .args(scenario.worktree.iter().flat_map(|name| ["--worktree", name.as_str()]))
            .args(scenario.args.iter().map(|a| substitute(a, &project)))
            .args(
                scenario
                    .mcp_stub
                    .then(|| ["--mcp-config".into(), mcp_config.display().to_string()])
                    .into_iter()
                    .flatten(),
            )
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
            .envs(&scenario.env)
            // Room for the replayed answers (Claude Code gives SessionEnd hooks 1.5 s in all).
            .env("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS", "60000")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let output = if scenario.one_process {
            run_conversation(command, prompts, RUN_LIMIT)?
        } else {
            command.stdin(Stdio::null());
            run_limited(command, RUN_LIMIT)?
        };
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
    let mut problems = scenario.expect.check(&seen, &project);
    problems.extend(unreplayed(&answers, &debug));
    if scenario.replay_examples {
        let examples: usize = answers.iter().map(|a| a.examples.len()).sum();
        println!("      {} distinct answers to {examples} examples, replayed", answers.len());
    }
    if !problems.is_empty() {
        bail!("{}\n      (everything is under {})", problems.join("\n      "), base.display());
    }
    Ok(())
}

/// The `--mcp-config` file of the scripted MCP server: this very xtask, started by Claude Code.
fn write_mcp_config(path: &Path) -> anyhow::Result<()> {
    let xtask = std::env::current_exe().context("finding the xtask binary")?;
    let servers = json!({"mcpServers": {mcp::NAME: {
        "type": "stdio", "command": xtask, "args": ["e2e-mcp-stub"],
    }}});
    std::fs::write(path, serde_json::to_string_pretty(&servers)?)?;
    Ok(())
}

/// The answers whose replay Claude Code's `debug` log does not show completed.
fn unreplayed(answers: &[answers::Answer], debug: &str) -> Vec<String> {
    answers
        .iter()
        .filter(|a| !debug.contains(&format!("[{}] completed with status 0", replay_command(a))))
        .map(|a| {
            format!(
                "Claude Code did not run the replay of {} ({})",
                a.examples.join(", "),
                a.file.display()
            )
        })
        .collect()
}

/// Runs `command` (`--input-format stream-json`) as one conversation: each prompt is written
/// as a user message once the previous one's `result` is out; stdin closes after the last.
/// Killed after `limit`.
fn run_conversation(
    mut command: Command,
    prompts: &[&str],
    limit: Duration,
) -> anyhow::Result<std::process::Output> {
    use std::io::{BufRead as _, Write as _};
    let mut child = command.stdin(Stdio::piped()).spawn().context("starting Claude Code")?;
    let stdin = child.stdin.take().context("Claude Code's stdin")?;
    let out = child.stdout.take().context("Claude Code's stdout")?;
    let mut err = child.stderr.take().context("Claude Code's stderr")?;
    let user = |prompt: &str| {
        json!({"type": "user", "message": {"role": "user", "content": prompt}}).to_string() + "\n"
    };
    let prompts: Vec<String> = prompts.iter().map(|p| user(p)).collect();
    let reader = std::thread::spawn(move || -> std::io::Result<Vec<u8>> {
        let mut next = prompts.into_iter();
        let mut pipe = Some(stdin);
        let mut send =
            |pipe: &mut Option<std::process::ChildStdin>| match (pipe.as_mut(), next.next()) {
                (Some(stdin), Some(message)) => {
                    stdin.write_all(message.as_bytes())?;
                    stdin.flush()
                }
                // Closing stdin after the last result ends the session.
                _ => {
                    *pipe = None;
                    Ok(())
                }
            };
        send(&mut pipe)?;
        let mut seen = Vec::new();
        for line in std::io::BufReader::new(out).lines() {
            let line = line?;
            seen.extend_from_slice(line.as_bytes());
            seen.push(b'\n');
            if serde_json::from_str::<Value>(&line).is_ok_and(|event| event["type"] == "result") {
                send(&mut pipe)?;
            }
        }
        Ok(seen)
    });
    let errors = std::thread::spawn(move || {
        let mut seen = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err, &mut seen);
        seen
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            bail!("Claude Code did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = reader.join().map_err(|_| anyhow::anyhow!("the reading thread panicked"))??;
    let stderr = errors.join().unwrap_or_default();
    Ok(std::process::Output { status, stdout, stderr })
}

/// Runs `command`, killed after `limit`.
/// Runs `command` (Claude Code, or a README block), killed after `limit` with its process
/// group when it leads one.
pub(super) fn run_limited(
    mut command: Command,
    limit: Duration,
) -> anyhow::Result<std::process::Output> {
    let child = command.spawn().context("starting Claude Code")?;
    let id = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let output = child.wait_with_output();
        let _ = done.send(());
        output
    });
    if finished.recv_timeout(limit).is_err() {
        let _ =
            Command::new("kill").args(["-9", "--", &format!("-{id}"), &id.to_string()]).status();
        let _ = waiter.join();
        bail!("it did not finish within {limit:?}");
    }
    waiter
        .join()
        .map_err(|_| anyhow::anyhow!("the waiting thread panicked"))?
        .context("waiting for Claude Code")
}

/// Installs the repository's plugin (`plugin/`, through its marketplace
/// `.claude-plugin/marketplace.json`) for the user of `home`, with Claude Code's own commands,
/// and the hook binaries where the plugin looks for them, `~/.local/bin`.
fn install_plugin(claude: &Path, bin_dir: &Path, home: &Path) -> anyhow::Result<()> {
    let local_bin = home.join(".local/bin");
    std::fs::create_dir_all(&local_bin)?;
    for kind in EventKind::ALL {
        std::os::unix::fs::symlink(
            bin_dir.join(kind.binary_name()),
            local_bin.join(kind.binary_name()),
        )?;
    }
    let root = root();
    for args in [
        &["plugin", "marketplace", "add", root.to_str().context("the clone's path")?][..],
        &["plugin", "install", "hookpack@hookpack"],
    ] {
        let output = Command::new(claude)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", home)
            .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
            .env("DISABLE_TELEMETRY", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .stdin(Stdio::null())
            .output()?;
        ensure!(
            output.status.success(),
            "claude {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}

/// Makes `project` a git repository with one commit of what it holds.
fn git_init(project: &Path) -> anyhow::Result<()> {
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
            "--allow-empty",
            "-m",
            "start",
        ],
    ] {
        let status = Command::new("git").args(args).current_dir(project).status()?;
        ensure!(status.success(), "git {args:?} failed");
    }
    Ok(())
}

/// The scenario's folders under `base`: Claude Code's home (onboarded), the project (its files,
/// every hook wired, a git repository if asked, compiled if asked) and the user's config
/// folder; the answers to replay, if asked.
fn prepare(
    scenario: &Scenario,
    bin_dir: &Path,
    base: &Path,
) -> anyhow::Result<Vec<answers::Answer>> {
    let (home, project, user) = (&base.join("home"), &base.join("project"), &base.join("config"));
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
    if scenario.readme {
        git_init(project)?;
        readme::run(project, home, user, &base.join("readme"))?;
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(project.join(".claude/hookpack/packs"))?;
    let ruled = match scenario.every_event {
        Some(variant) => {
            let (pack, ruled) = answers::pack(variant);
            std::fs::write(project.join(".claude/hookpack/packs/every-event.toml"), pack)?;
            ruled
        }
        None => Vec::new(),
    };
    let settings = project.join(".claude/settings.json");
    if !scenario.plugin {
        std::fs::write(
            &settings,
            serde_json::to_string_pretty(&hook_settings(bin_dir, scenario, project, &[])?)?,
        )?;
    }
    if scenario.git {
        git_init(project)?;
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
    if !scenario.replay_examples {
        return Ok(Vec::new());
    }
    let answers =
        answers::replay_examples(&ruled, bin_dir, project, home, user, &base.join("answers"))?;
    std::fs::write(
        &settings,
        serde_json::to_string_pretty(&hook_settings(bin_dir, scenario, project, &answers)?)?,
    )?;
    Ok(answers)
}
