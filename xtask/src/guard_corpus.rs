//! `cargo xtask guard-corpus [--builtin PACK,PACK…] [--corpus DIR] [--misses]`: how well the
//! guards catch the destructive commands of `corpus/guard/` (or of another folder of such files,
//! a held-out set kept apart from those who write the rules) and leave the safe ones alone.
//!
//! Each line of `corpus/guard/<family>.jsonl` is `{"command": …, "destructive": bool}`. The
//! builtin packs named (default `guard`) are compiled as a project would compile them, and each
//! command is evaluated as a `Bash` `PreToolUse` call through the hooks' own evaluation; a deny
//! or an ask counts as flagged. Prints recall and precision per family and overall, and how many
//! safe commands were denied (not only asked about); with `--misses`, the commands it got wrong.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use hook_engine::artifact::{AlignedBytes, Artifact};
use hook_engine::{Bracket, Decision, Engine, Facts, Mode, SessionState};
use hook_model::EventKind;
use rules_compiler::{Layout, compile, load};
use serde::Deserialize;
use serde_json::json;

use crate::workspace::root;

#[derive(Deserialize)]
struct Entry {
    command: String,
    destructive: bool,
}

/// Counts of one family.
#[derive(Default, Clone, Copy)]
struct Score {
    /// Destructive and flagged.
    caught: usize,
    /// Destructive, not flagged.
    missed: usize,
    /// Safe but flagged.
    false_flags: usize,
    /// Safe and left alone.
    passed: usize,
    /// Safe and denied: what a guard must never do.
    denied: usize,
}

impl Score {
    fn add(&mut self, other: Score) {
        self.caught += other.caught;
        self.missed += other.missed;
        self.false_flags += other.false_flags;
        self.passed += other.passed;
        self.denied += other.denied;
    }

    #[allow(clippy::cast_precision_loss, reason = "counts of a few thousand")]
    fn ratio(part: usize, whole: usize) -> String {
        if whole == 0 { "   -  ".to_owned() } else { format!("{:.3}", part as f64 / whole as f64) }
    }

    fn line(&self, name: &str) -> String {
        format!(
            "{name:<16} {:>5} {:>5} {:>5} {:>5}   {}   {}   {:>6}",
            self.caught,
            self.missed,
            self.false_flags,
            self.passed,
            Score::ratio(self.caught, self.caught + self.missed),
            Score::ratio(self.caught, self.caught + self.false_flags),
            self.denied,
        )
    }
}

pub(crate) fn run(args: &[&str]) -> anyhow::Result<()> {
    let mut builtin = vec!["guard".to_owned()];
    let mut misses = false;
    let mut corpus = root().join("corpus/guard");
    let mut rest = args.iter();
    while let Some(&arg) = rest.next() {
        match arg {
            "--builtin" => {
                let Some(list) = rest.next() else { bail!("--builtin needs a list of packs") };
                builtin = list.split(',').map(str::to_owned).collect();
            }
            "--misses" => misses = true,
            "--corpus" => {
                let Some(dir) = rest.next() else { bail!("--corpus needs a folder") };
                corpus = PathBuf::from(dir);
            }
            other => bail!("unknown argument `{other}`"),
        }
    }

    let project = root().join("target/guard-corpus");
    let _ = std::fs::remove_dir_all(&project);
    std::fs::create_dir_all(project.join(".claude/hookpack"))?;
    // A list of plain strings is written alike in JSON and TOML.
    let config = format!("builtin = {}\n", serde_json::to_string(&builtin)?);
    std::fs::write(project.join(".claude/hookpack/hookpack.toml"), config)?;
    let layout = Layout { project: Some(project.clone()), user: None };
    let loaded = load(&layout, &[]);
    if loaded.diagnostics.has_errors() {
        bail!("{}", loaded.diagnostics.render());
    }
    let rules = loaded.rules();
    let compiled = compile(&rules, &loaded.config.settings(), &loaded.sources)?;
    let bytes = AlignedBytes::new(&compiled.bytes);
    let artifact = Artifact::parse(bytes.as_slice())?;
    let engine = Engine::new(artifact)?;

    println!("builtin = {builtin:?}: {} rules\n", rules.len());
    println!(
        "{:<16} {:>5} {:>5} {:>5} {:>5}   recall  precision  denied",
        "family", "TP", "FN", "FP", "TN"
    );
    let mut total = Score::default();
    let mut wrong = Vec::new();
    for (family, path) in families(&corpus)? {
        let mut score = Score::default();
        let text = std::fs::read_to_string(&path)?;
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let entry: Entry = serde_json::from_str(line)
                .with_context(|| format!("{}:{}", path.display(), n + 1))?;
            let decision = decision(&engine, &project, &entry.command)?;
            let flagged = matches!(decision, Some(Decision::Deny | Decision::Ask));
            if !entry.destructive && decision == Some(Decision::Deny) {
                score.denied += 1;
            }
            match (entry.destructive, flagged) {
                (true, true) => score.caught += 1,
                (true, false) => score.missed += 1,
                (false, true) => score.false_flags += 1,
                (false, false) => score.passed += 1,
            }
            if entry.destructive != flagged {
                let what = match decision {
                    Some(Decision::Deny) if !entry.destructive => "denied",
                    _ if flagged => "false flag",
                    _ => "missed",
                };
                wrong.push(format!("{family:<14} {what:<10} {}", entry.command.replace('\n', "⏎")));
            }
        }
        println!("{}", score.line(&family));
        total.add(score);
    }
    println!("{}", total.line("all"));
    if misses {
        println!();
        for line in &wrong {
            println!("{line}");
        }
    }
    Ok(())
}

/// The corpus files, by family name, in order.
fn families(dir: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "jsonl") {
            let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
            found.push((name, path));
        }
    }
    found.sort();
    Ok(found)
}

/// The project the commands of the corpus run in.
const PROJECT: &str = "/home/dev/project";

/// What the guards decide for `command` run by the Bash tool.
fn decision(
    engine: &Engine<'_>,
    _compiled: &Path,
    command: &str,
) -> anyhow::Result<Option<Decision>> {
    // Where the commands run: a project in a user's home, the same on every machine (not the
    // folder the rules were compiled in, whose place in the checkout, under `target/`, would
    // make its neighbours build output).
    let project = Path::new(PROJECT);
    let payload = json!({
        "hook_event_name": "PreToolUse",
        "session_id": "guard-corpus",
        "transcript_path": project.join("transcript.jsonl"),
        "cwd": project,
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": { "command": command },
        "tool_use_id": "toolu_corpus",
    });
    let input = hook_model::HookInput::from_value(EventKind::PreToolUse, &payload)?;
    let facts = Facts {
        input: &input,
        payload: &payload,
        project_root: Some(project),
        state: SessionState::default(),
        bracket: Bracket::Fresh,
        used_percent: None,
        branch: None,
        home: None,
        conversation: &[],
    };
    let evaluation =
        engine.evaluate(&facts, Mode::Answer).map_err(|e| anyhow::anyhow!("{command}: {e}"))?;
    let response = hook_engine::respond(EventKind::PreToolUse, &evaluation, None);
    Ok(response.decision)
}
