//! Every binary's answer to every example, shown to the real Claude Code.
//!
//! A scenario with `every_event = "says"` (or `"decides"`, `"permits"`, `"allows"`) gets a pack,
//! generated from `hook_model`'s capability table, with one rule per event that answers
//! everything that event's answer can carry in that variant. With `replay_examples = true`,
//! each hook binary then answers each payload of `examples/` in the compiled project, and every
//! distinct answer is handed to Claude Code by a `SessionEnd` hook that prints it: Claude Code
//! 2.1.330 parses and validates a `SessionEnd` hook's JSON (the whole schema, every
//! `hookSpecificOutput` of the union) and logs any rejection, without checking the event name
//! or acting on it. So the answers of events print mode never reaches are checked by the
//! client's own validator; the events it reaches are run for real by other scenarios.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, ensure};
use hook_model::EventKind;
use serde::Deserialize;
use serde_json::Value;

use crate::workspace::examples;

/// What the generated pack's rules answer.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Variant {
    /// Context, a message, a session title and a watched file ([`WATCHED`]) wherever the
    /// event takes them.
    Says,
    /// `block` wherever the event honours it; `deny` on `PreToolUse` and `PermissionRequest`;
    /// `stop` wherever `continue: false` is honoured.
    Decides,
    /// `ask` on `PreToolUse`, `allow` on `PermissionRequest`.
    Permits,
    /// `allow` on `PreToolUse`, with a rewritten input.
    Allows,
}

/// The file, relative to the project, that the `says` pack watches.
pub(crate) const WATCHED: &str = "watched.txt";

/// The pack of `variant`: one rule per event that can answer in it, firing on every payload;
/// and those events.
pub(crate) fn pack(variant: Variant) -> (String, Vec<EventKind>) {
    let mut pack = String::from("[pack]\nname = \"every-event\"\n");
    let mut ruled = Vec::new();
    for &kind in EventKind::ALL {
        let mut actions = Vec::new();
        match variant {
            Variant::Says => {
                if kind.takes_context() {
                    actions.push(format!("context = \"{kind} context from hookpack\""));
                }
                if kind.shows_system_message() {
                    actions.push(format!("message = \"{kind} message from hookpack\""));
                }
                if kind.sets_session_title() {
                    actions.push(format!("session_title = \"{kind} title from hookpack\""));
                }
                if kind.sets_watch_paths() {
                    actions.push(format!("watch_paths = [\"{WATCHED}\"]"));
                }
            }
            Variant::Decides => {
                let decision = match kind {
                    EventKind::PreToolUse | EventKind::PermissionRequest => Some("deny"),
                    _ if kind.accepts_block_decision() => Some("block"),
                    _ => None,
                };
                if let Some(decision) = decision {
                    actions.push(format!("decision = \"{decision}\""));
                    actions.push(format!("reason = \"{kind} {decision} from hookpack\""));
                }
                if kind.honours_continue() {
                    actions.push(format!("stop = \"{kind} stop from hookpack\""));
                }
            }
            Variant::Permits => match kind {
                EventKind::PreToolUse => actions.push("decision = \"ask\"".to_owned()),
                EventKind::PermissionRequest => actions.push("decision = \"allow\"".to_owned()),
                _ => {}
            },
            Variant::Allows => {
                if kind == EventKind::PreToolUse {
                    actions.push("decision = \"allow\"".to_owned());
                    actions
                        .push("rewrite = { description = \"rewritten by hookpack\" }".to_owned());
                }
            }
        }
        if !actions.is_empty() {
            ruled.push(kind);
            let _ = write!(
                pack,
                "\n[[rule]]\nid = \"{}\"\non = \"{kind}\"\n{}\n",
                kind.kebab(),
                actions.join("\n")
            );
        }
    }
    (pack, ruled)
}

/// One distinct answer of the binaries to the examples.
pub(crate) struct Answer {
    /// The file that holds it.
    pub(crate) file: PathBuf,
    /// The examples answered with it (`event/example.json`).
    pub(crate) examples: Vec<String>,
}

/// Every hook binary (but the worktree hooks, which act on disk and print a path) on every
/// example, in `project`: the distinct non-empty answers, written under `dir`. Fails when a
/// binary exits with a code other than 0 or prints anything but one JSON object, or when an
/// event of `ruled` (those with a rule) never answers.
pub(crate) fn replay_examples(
    ruled: &[EventKind],
    bin_dir: &Path,
    project: &Path,
    home: &Path,
    user: &Path,
    dir: &Path,
) -> anyhow::Result<Vec<Answer>> {
    std::fs::create_dir_all(dir)?;
    let mut answers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut silent = Vec::new();
    for &kind in EventKind::ALL.iter().filter(|k| !k.acts_without_rules()) {
        let mut answered = false;
        for example in examples(kind)? {
            let name = format!(
                "{}/{}",
                kind.kebab(),
                example.file_name().and_then(|n| n.to_str()).unwrap_or_default()
            );
            let mut payload: Value = serde_json::from_slice(&std::fs::read(&example)?)
                .with_context(|| format!("reading {name}"))?;
            payload["cwd"] = Value::String(project.display().to_string());
            let stdout = answer(bin_dir, kind, &payload, project, home, user)
                .with_context(|| format!("{} on {name}", kind.binary_name()))?;
            if stdout.is_empty() {
                continue;
            }
            answered = true;
            answers.entry(stdout).or_default().push(name);
        }
        if !answered {
            silent.push(kind);
        }
    }
    let unexpected: Vec<&str> =
        silent.iter().filter(|k| ruled.contains(k)).map(|k| k.as_str()).collect();
    ensure!(
        unexpected.is_empty(),
        "events with a rule that never answered an example: {}",
        unexpected.join(", ")
    );
    answers
        .into_iter()
        .enumerate()
        .map(|(n, (text, examples))| {
            let file = dir.join(format!("{n:03}.json"));
            std::fs::write(&file, text)?;
            Ok(Answer { file, examples })
        })
        .collect()
}

/// What `kind`'s binary prints for `payload`, checked to be nothing or one JSON object.
fn answer(
    bin_dir: &Path,
    kind: EventKind,
    payload: &Value,
    project: &Path,
    home: &Path,
    user: &Path,
) -> anyhow::Result<String> {
    use std::io::Write as _;
    let mut child = Command::new(bin_dir.join(kind.binary_name()))
        .current_dir(project)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", user)
        .env("CLAUDE_PROJECT_DIR", project)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    child.stdin.take().context("stdin")?.write_all(payload.to_string().as_bytes())?;
    let output = child.wait_with_output()?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    ensure!(output.status.success(), "exit {:?}: {stderr}", output.status.code());
    let stdout = String::from_utf8(output.stdout).context("stdout is not UTF-8")?;
    // PreCompact's context is plain text: compaction instructions.
    let plain = kind.takes_context() && !kind.accepts_additional_context();
    if !plain && !stdout.trim().is_empty() {
        let value: Value = serde_json::from_str(&stdout)
            .with_context(|| format!("stdout is not one JSON value: {stdout}"))?;
        ensure!(value.is_object(), "stdout is not a JSON object: {stdout}");
    }
    Ok(stdout)
}
