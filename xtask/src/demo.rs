//! `cargo xtask demo`: hookpack's main job, end to end, on the shipped examples.
//!
//! Replays the scripted session of `examples/session/` (a project using the builtin `context`,
//! `guard` and `workflow` packs and one of its own) through the real hook binaries and prints,
//! per event, the decision, the injected context and the session state; then shows the failure
//! policy: silence where hookpack is not used, failing open visibly.

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, ensure};
use hook_model::EventKind;
use hook_runtime::state::sessions;
use rules_compiler::{Layout, compile, load, run_tests};

use crate::workspace::{cargo, examples, root};

pub(crate) fn run() -> anyhow::Result<()> {
    // Cargo's own progress (a bar on a terminal) shows while the hooks build: the first build
    // of a fresh clone takes minutes, and a silent one looks hung.
    eprintln!("building the hook binaries (cargo build --package hook-bins)…");
    let started = std::time::Instant::now();
    let status = cargo().args(["build", "--package", "hook-bins"]).status()?;
    ensure!(status.success(), "cargo build failed");
    eprintln!("built in {:.1} s\n", started.elapsed().as_secs_f64());
    let bin_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root().join("target"), PathBuf::from)
        .join("debug");
    let scratch = root().join("target/demo");
    std::fs::create_dir_all(&scratch)?;

    session(&bin_dir, &scratch.join("session"))?;

    let plain = scratch.join("plain-project");
    let using = scratch.join("project-using-hookpack");
    std::fs::create_dir_all(&plain)?;
    // Afresh, so that the once-per-session notice shows on every run of the demo.
    let _ = std::fs::remove_dir_all(&using);
    std::fs::create_dir_all(using.join(".claude/hookpack"))?;
    println!(
        "\n2. A project that does not use hookpack: every hook must stay silent (but the worktree \
         hooks, which make Claude Code's worktrees wherever they are wired)."
    );
    let mut count = 0;
    for &kind in EventKind::ALL.iter().filter(|k| !k.acts_without_rules()) {
        for example in examples(kind)? {
            let answer = replay(&bin_dir, kind, Payload::File(&example), &plain, None)?;
            ensure!(answer.is_silent(), "{}: {answer:?}", example.display());
            count += 1;
        }
    }
    println!(
        "   {count} examples of {} events: exit 0, no output.",
        EventKind::ALL.iter().filter(|k| !k.acts_without_rules()).count()
    );

    println!(
        "\n3. Failures fail open, and say so: on stderr every time, to the user once per session."
    );
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

/// One step of `examples/session/session.jsonl`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptLine {
    step: String,
    event: Option<String>,
    #[serde(default)]
    payload: serde_json::Value,
    transcript: Option<TranscriptStep>,
}

/// What Claude Code appends to the transcript between hooks.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TranscriptStep {
    assistant_tokens: Option<u64>,
    #[serde(default)]
    compact_boundary: bool,
}

const SESSION_ID: &str = "demo-session";

/// Replays the scripted session of `examples/session/` in a copy of its project at `dir`.
fn session(bin_dir: &Path, dir: &Path) -> anyhow::Result<()> {
    let example = root().join("examples/session");
    let _ = std::fs::remove_dir_all(dir);
    copy_dir(&example.join("project"), dir)?;
    println!("1. A scripted session: examples/session/session.jsonl, in a copy of its project");

    let loaded = load(&Layout { project: Some(dir.to_path_buf()), user: None }, &[]);
    ensure!(!loaded.diagnostics.has_errors(), "{}", loaded.diagnostics.render());
    let mut tests = 0;
    for (_, pack) in &loaded.packs {
        for outcome in run_tests(pack)? {
            ensure!(outcome.passed(), "{}: {:?}", outcome.name, outcome.failures);
            tests += 1;
        }
    }
    let rules = loaded.rules();
    let compiled = compile(&rules, &loaded.config.settings(), &loaded.sources)?;
    // Written as `hookpack compile` writes it: hooks answer only from an artifact whose stamp
    // says it was compiled here.
    let compiled_dir = dir.join(".claude/hookpack/compiled");
    std::fs::create_dir_all(&compiled_dir)?;
    hook_runtime::write_compiled(
        &hook_runtime::confined::ConfinedDir::trusting(&compiled_dir),
        "rules.hpk",
        &compiled.bytes,
        &rules_compiler::fail_closed_list(&rules),
    )?;
    let names: Vec<&str> = loaded.packs.iter().map(|(_, p)| p.name.as_str()).collect();
    println!(
        "   packs {}: {} rules, {tests} pack tests passed, {} bytes compiled\n",
        names.join(", "),
        compiled.rules,
        compiled.bytes.len()
    );

    let transcript = dir.join("transcript.jsonl");
    std::fs::write(&transcript, "")?;
    let script = std::fs::read_to_string(example.join("session.jsonl"))?;
    let mut last_state = String::new();
    for (n, line) in script.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let step: ScriptLine = serde_json::from_str(line)
            .with_context(|| format!("examples/session/session.jsonl:{}", n + 1))?;
        println!("{:>3}. {}", n + 1, step.step);
        if let Some(t) = step.transcript {
            append_transcript(&transcript, n, &t)?;
            continue;
        }
        let name = step.event.context("a step needs `event` or `transcript`")?;
        let kind = EventKind::from_name(&name).with_context(|| format!("unknown event {name}"))?;
        let mut payload =
            serde_json::to_string(&step.payload)?.replace("$PROJECT", &dir.to_string_lossy());
        let mut value: serde_json::Value = serde_json::from_str(&payload)?;
        let fields = value.as_object_mut().context("a payload is an object")?;
        fields.insert("hook_event_name".into(), name.clone().into());
        fields.insert("session_id".into(), SESSION_ID.into());
        fields.insert("transcript_path".into(), transcript.to_string_lossy().into());
        fields.insert("cwd".into(), dir.to_string_lossy().into());
        fields.entry("permission_mode").or_insert("default".into());
        if kind.is_tool_event() {
            fields.insert("tool_use_id".into(), format!("toolu_{n:02}").into());
        }
        payload = value.to_string();
        let answer = replay(bin_dir, kind, Payload::Bytes(payload.as_bytes()), dir, None)?;
        ensure!(answer.code == Some(0) && answer.stderr.is_empty(), "{name}: {answer:?}");
        answer.describe(kind);
        let state = state_line(dir);
        if state != last_state {
            println!("       state: {state}");
            last_state = state;
        }
    }
    Ok(())
}

/// Appends what Claude Code would write to the transcript.
fn append_transcript(path: &Path, n: usize, step: &TranscriptStep) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new().append(true).open(path)?;
    if let Some(tokens) = step.assistant_tokens {
        let entry = serde_json::json!({
            "type": "assistant", "uuid": format!("demo-{n}"), "isSidechain": false,
            "message": {
                "id": format!("msg_demo_{n}"), "model": "claude-sonnet-4-5", "role": "assistant",
                "content": [{ "type": "text", "text": "…" }],
                "usage": { "input_tokens": 12, "cache_creation_input_tokens": 800,
                           "cache_read_input_tokens": tokens.saturating_sub(812),
                           "output_tokens": 300 }
            }
        });
        writeln!(file, "{entry}")?;
    }
    if step.compact_boundary {
        let entry = serde_json::json!({
            "type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
            "compactMetadata": { "trigger": "auto", "preTokens": 164_000 }
        });
        writeln!(file, "{entry}")?;
    }
    Ok(())
}

/// The session's state, as its record has it.
fn state_line(dir: &Path) -> String {
    let Some(record) = sessions::peek(&dir.join(".claude/hookpack"), SESSION_ID) else {
        return "(new session)".to_owned();
    };
    match record.bracket {
        Some(bracket) => format!("{}; last bracket {}", record.state, bracket.as_str()),
        None => record.state.to_string(),
    }
}

fn copy_dir(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
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

    /// The decision with its reason, and the context injected, one section per line.
    fn describe(&self, kind: EventKind) {
        let json: serde_json::Value = serde_json::from_str(&self.stdout).unwrap_or_default();
        let specific = &json["hookSpecificOutput"];
        let decision = specific["permissionDecision"]
            .as_str()
            .map(|d| (d, specific["permissionDecisionReason"].as_str()))
            .or_else(|| json["decision"].as_str().map(|d| (d, json["reason"].as_str())));
        let head = format!("       {} → exit {}", kind.binary_name(), self.code.unwrap_or(-1));
        match decision {
            Some((decision, reason)) => {
                println!("{head}, {}", decision.to_uppercase());
                for line in reason.unwrap_or_default().lines() {
                    println!("         {}", clip(line));
                }
            }
            None if self.stdout.is_empty() => println!("{head}, nothing to say"),
            None => println!("{head}"),
        }
        if let Some(context) = specific["additionalContext"].as_str() {
            for section in context.split("\n\n") {
                let mut lines = section.lines();
                let label = lines.next().unwrap_or_default();
                let text: Vec<&str> = lines.collect();
                println!("         context {label} {}", clip(&text.join(" ")));
            }
        }
        if let Some(message) = json["systemMessage"].as_str() {
            println!("         message: {}", clip(message));
        }
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

/// `text` cut to fit a terminal line.
fn clip(text: &str) -> String {
    const MAX: usize = 96;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX - 1).collect();
    format!("{cut}…")
}
