//! `cargo xtask demo`: hookpack's main job, end to end, on the shipped examples.
//!
//! Compiles the example project's pack (`examples/projects/demo`), then replays payloads of
//! `examples/` through the real hook binaries and prints each decision and injected context;
//! then shows the failure policy: silence where hookpack is not used, failing open visibly.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, ensure};
use hook_model::EventKind;
use rules_compiler::{Layout, compile, load, run_tests};

use crate::workspace::{cargo, examples, root};

pub(crate) fn run() -> anyhow::Result<()> {
    let status = cargo().args(["build", "--quiet", "--package", "hook-bins"]).status()?;
    ensure!(status.success(), "cargo build failed");
    let bin_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root().join("target"), PathBuf::from)
        .join("debug");
    let scratch = root().join("target/demo");
    std::fs::create_dir_all(&scratch)?;

    let project = root().join("examples/projects/demo");
    let artifact = scratch.join("rules.hpk");
    println!("1. Compile the packs of {}", project.strip_prefix(root())?.display());
    let loaded = load(&Layout { project: Some(project.clone()), user: None }, &[]);
    ensure!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics.render());
    let mut tests = 0;
    for (_, pack) in &loaded.packs {
        for outcome in run_tests(pack).map_err(anyhow::Error::msg)? {
            ensure!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
            tests += 1;
        }
    }
    let compiled = compile(&loaded.rules(), &loaded.config.settings(), &loaded.sources)
        .map_err(anyhow::Error::msg)?;
    std::fs::write(&artifact, &compiled.bytes)?;
    println!(
        "   {} rules, {tests} pack tests passed, {} bytes compiled\n",
        compiled.rules,
        compiled.bytes.len()
    );

    println!("2. Replay payloads through the hooks");
    let cases: [(EventKind, &str); 8] = [
        (EventKind::PreToolUse, "bash-rm-rf-root.json"),
        (EventKind::PreToolUse, "bash-force-push.json"),
        (EventKind::PreToolUse, "write-env.json"),
        (EventKind::PreToolUse, "read-env-example.json"),
        (EventKind::PreToolUse, "edit-ts.json"),
        (EventKind::PreToolUse, "bash-ls.json"),
        (EventKind::UserPromptSubmit, "short.json"),
        (EventKind::UserPromptSubmit, "agent-mention.json"),
    ];
    for (kind, name) in cases {
        let example = root().join("examples").join(kind.kebab()).join(name);
        let payload = std::fs::read_to_string(&example)?
            .replace("/home/dev/acme-api", &project.to_string_lossy());
        let answer =
            replay(&bin_dir, kind, Payload::Bytes(payload.as_bytes()), &project, Some(&artifact))?;
        answer.summarize(kind, name);
    }

    let plain = scratch.join("plain-project");
    let using = scratch.join("project-using-hookpack");
    std::fs::create_dir_all(&plain)?;
    std::fs::create_dir_all(using.join(".claude/hookpack"))?;
    println!("\n3. A project that does not use hookpack: every hook must stay silent.");
    let mut count = 0;
    for &kind in EventKind::ALL {
        for example in examples(kind)? {
            let answer = replay(&bin_dir, kind, Payload::File(&example), &plain, None)?;
            ensure!(answer.is_silent(), "{}: {answer:?}", example.display());
            count += 1;
        }
    }
    println!("   {count} examples of {} events: exit 0, no output.", EventKind::ALL.len());

    println!("\n4. Failures fail open, and say so on stderr.");
    let example = examples(EventKind::PreToolUse)?.into_iter().next().context("no example")?;
    replay(&bin_dir, EventKind::PreToolUse, Payload::File(&example), &using, None)?
        .print(EventKind::PreToolUse, "a project without compiled rules");
    let malformed: [(&str, &[u8]); 2] = [
        ("truncated JSON", br#"{"hook_event_name":"PreToolUse","session_id":"#),
        ("another event's payload", br#"{"hook_event_name":"Stop","session_id":"s","transcript_path":"/t","cwd":"/p","stop_hook_active":false}"#),
    ];
    for (name, bytes) in malformed {
        replay(&bin_dir, EventKind::PreToolUse, Payload::Bytes(bytes), &plain, None)?
            .print(EventKind::PreToolUse, name);
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Payload<'a> {
    File(&'a Path),
    Bytes(&'a [u8]),
}

#[derive(Debug)]
struct Answer {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Answer {
    fn is_silent(&self) -> bool {
        self.code == Some(0) && self.stdout.is_empty() && self.stderr.is_empty()
    }

    /// One line per answer: the decision and its reason, or the context injected.
    fn summarize(&self, kind: EventKind, name: &str) {
        let json: serde_json::Value = serde_json::from_str(&self.stdout).unwrap_or_default();
        let specific = &json["hookSpecificOutput"];
        let what = if let Some(decision) = specific["permissionDecision"].as_str() {
            format!(
                "{decision}: {}",
                specific["permissionDecisionReason"].as_str().unwrap_or_default()
            )
        } else if let Some(context) = specific["additionalContext"].as_str() {
            format!("context: {}", context.replace('\n', " "))
        } else if self.stdout.is_empty() {
            "allowed, nothing to add".to_owned()
        } else {
            self.stdout.trim_end().to_owned()
        };
        println!(
            "   {:<28} {name:<24} exit {} → {what}",
            kind.binary_name(),
            self.code.unwrap_or(-1)
        );
    }

    fn print(&self, kind: EventKind, what: &str) {
        let code = self.code.map_or_else(|| "killed".to_owned(), |c| c.to_string());
        println!("   {} < {what}: exit {code}", kind.binary_name());
        let stdout = if self.stdout.is_empty() { "(nothing)" } else { self.stdout.trim_end() };
        println!("     stdout: {stdout}");
        if !self.stderr.is_empty() {
            println!("     stderr: {}", self.stderr.trim_end());
        }
    }
}

/// Runs the binary of `kind` on `payload` as Claude Code would, with `project` as
/// `$CLAUDE_PROJECT_DIR` (and `artifact` as `$HOOKPACK_ARTIFACT`).
fn replay(
    bin_dir: &Path,
    kind: EventKind,
    payload: Payload<'_>,
    project: &Path,
    artifact: Option<&Path>,
) -> anyhow::Result<Answer> {
    let mut command = Command::new(bin_dir.join(kind.binary_name()));
    command
        .env_clear()
        .env("CLAUDE_PROJECT_DIR", project)
        .env("XDG_CONFIG_HOME", project.join(".config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(artifact) = artifact {
        command.env("HOOKPACK_ARTIFACT", artifact);
    }
    let output = match payload {
        Payload::File(path) => command.stdin(File::open(path)?).output()?,
        Payload::Bytes(bytes) => {
            let mut child = command.stdin(Stdio::piped()).spawn()?;
            child.stdin.take().context("no stdin")?.write_all(bytes)?;
            child.wait_with_output()?
        }
    };
    Ok(Answer {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    })
}
