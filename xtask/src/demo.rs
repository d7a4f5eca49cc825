//! `cargo xtask demo`: replays `examples/` through the real hook binaries and prints, per
//! event, what each answered: exit code, stdout and stderr.
//!
//! The rule engine and the builtin packs are not there yet (issues #3 and #4), so today the demo
//! shows the contract that already holds: where no project uses hookpack every hook is silent;
//! where a project uses it but has no compiled rules, the hook fails open and says why; a
//! malformed payload never breaks the session.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, ensure};
use hook_model::EventKind;

use crate::workspace::{cargo, examples, root};

pub(crate) fn run() -> anyhow::Result<()> {
    let status = cargo().args(["build", "--quiet", "--package", "hook-bins"]).status()?;
    ensure!(status.success(), "cargo build failed");
    let bin_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root().join("target"), PathBuf::from)
        .join("debug");

    let scratch = root().join("target/demo");
    let plain = scratch.join("plain-project");
    let using = scratch.join("project-using-hookpack");
    std::fs::create_dir_all(&plain)?;
    std::fs::create_dir_all(using.join(".claude/hookpack"))?;

    println!("Replaying examples/ through the hookpack-<event> binaries.\n");
    println!("1. A project that does not use hookpack: every hook must stay silent.");
    let mut count = 0;
    for &kind in EventKind::ALL {
        for example in examples(kind)? {
            let answer = replay(&bin_dir, kind, Payload::File(&example), &plain)?;
            ensure!(answer.is_silent(), "{}: {answer:?}", example.display());
            count += 1;
        }
    }
    println!("   {count} examples of {} events: exit 0, no output.\n", EventKind::ALL.len());

    println!("2. A project with .claude/hookpack/ but no compiled rules: fail open, visibly.");
    for kind in [EventKind::PreToolUse, EventKind::UserPromptSubmit, EventKind::Stop] {
        let example = examples(kind)?.into_iter().next().context("no example")?;
        let answer = replay(&bin_dir, kind, Payload::File(&example), &using)?;
        answer.print(kind, &example);
    }

    println!("\n3. Malformed payloads: never a panic, never a broken session.");
    let malformed: [(&str, &[u8]); 3] = [
        ("empty stdin", b""),
        ("truncated JSON", br#"{"hook_event_name":"PreToolUse","session_id":"#),
        ("another event's payload", br#"{"hook_event_name":"Stop","session_id":"s","transcript_path":"/t","cwd":"/p","stop_hook_active":false}"#),
    ];
    for (name, bytes) in malformed {
        let answer = replay(&bin_dir, EventKind::PreToolUse, Payload::Bytes(bytes), &plain)?;
        answer.print(EventKind::PreToolUse, Path::new(name));
    }
    println!("\nRule packs, the compiler and the engine arrive with issues #3 and #4.");
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

    fn print(&self, kind: EventKind, example: &Path) {
        let name = example.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
        let code = self.code.map_or_else(|| "killed".to_owned(), |c| c.to_string());
        println!("   {} < {name}: exit {code}", kind.binary_name());
        let stdout = if self.stdout.is_empty() { "(nothing)" } else { self.stdout.trim_end() };
        println!("     stdout: {stdout}");
        if !self.stderr.is_empty() {
            println!("     stderr: {}", self.stderr.trim_end());
        }
    }
}

/// Runs the binary of `kind` on `payload` as Claude Code would, with `project` as
/// `$CLAUDE_PROJECT_DIR`.
fn replay(
    bin_dir: &Path,
    kind: EventKind,
    payload: Payload<'_>,
    project: &Path,
) -> anyhow::Result<Answer> {
    let mut command = Command::new(bin_dir.join(kind.binary_name()));
    command
        .env_clear()
        .env("CLAUDE_PROJECT_DIR", project)
        .env("XDG_CONFIG_HOME", project.join(".config"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
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
