//! `hookpack explain`: what the hook answers to a payload, and why — through the hook's own
//! steps ([`hook_engine::call`]), with the session store read and never written.

use std::path::Path;

use anyhow::Context;
use hook_engine::call::{Call, CallIo, IoError, Surroundings};
use hook_engine::memory::{Captured, Memory, Recall};
use hook_engine::observe::SessionSummary;
use hook_engine::{Bracket, Engine, Mode, SessionState, Settings};
use hook_model::{EventKind, HookInput, event_name};
use hook_runtime::state::{Store, sessions};
use hook_runtime::transcript::{self, Reading};
use rules_compiler::Layout;
use serde_json::Value;

use crate::commands::artifact_path;

/// Where the payload comes from.
#[derive(Debug)]
pub(crate) enum Source {
    /// A JSON file, or `-` for stdin.
    File(String),
    /// Made from the command line's options.
    Options(Options),
}

/// The options a payload is made from.
#[derive(Debug, Default)]
pub(crate) struct Options {
    pub(crate) event: Option<String>,
    pub(crate) tool: Option<String>,
    pub(crate) command: Option<String>,
    pub(crate) prompt: Option<String>,
    pub(crate) path: Option<String>,
}

impl Options {
    /// The payload they say: the event (named, or the one the others imply), its tool and the
    /// tool's input, or its prompt.
    fn payload(&self) -> Value {
        let event = self.event.clone().unwrap_or_else(|| {
            if self.prompt.is_some() && self.command.is_none() && self.path.is_none() {
                "UserPromptSubmit".to_owned()
            } else {
                "PreToolUse".to_owned()
            }
        });
        let mut payload = serde_json::json!({ "hook_event_name": event });
        if let Some(prompt) = &self.prompt {
            payload["prompt"] = Value::from(prompt.as_str());
        }
        let tool = self.tool.clone().or_else(|| {
            self.command
                .as_ref()
                .map(|_| "Bash".to_owned())
                .or(self.path.as_ref().map(|_| "Write".to_owned()))
        });
        if let Some(tool) = tool {
            let mut input = serde_json::Map::new();
            if let Some(command) = &self.command {
                input.insert("command".into(), Value::from(command.as_str()));
            }
            if let Some(path) = &self.path {
                let key = if tool == "NotebookEdit" { "notebook_path" } else { "file_path" };
                input.insert(key.into(), Value::from(path.as_str()));
                match tool.as_str() {
                    "Write" => {
                        input.insert("content".into(), Value::from(""));
                    }
                    "Edit" => {
                        input.insert("old_string".into(), Value::from(""));
                        input.insert("new_string".into(), Value::from(""));
                    }
                    _ => {}
                }
            }
            payload["tool_name"] = Value::from(tool);
            payload["tool_input"] = Value::Object(input);
        }
        payload
    }
}

/// The common fields a hook is always sent, filled in where `payload` lacks them, as a pack's
/// `[[test]]` events are; the names of those filled.
fn fill(payload: &mut Value, cwd: &Path) -> Vec<&'static str> {
    let mut filled = Vec::new();
    let Value::Object(map) = payload else { return filled };
    let defaults = [
        ("session_id", Value::from("explain")),
        ("transcript_path", Value::from("")),
        ("cwd", Value::from(cwd.display().to_string())),
        ("permission_mode", Value::from("default")),
    ];
    for (key, value) in defaults {
        if !map.contains_key(key) {
            map.insert(key.to_owned(), value);
            filled.push(key);
        }
    }
    filled
}

/// `hookpack explain`: which rules fired, which nearly did and why not, the bracket and how it
/// was computed, and the exact stdout and exit code of the hook.
pub(crate) fn explain(layout: &Layout, source: &Source) -> anyhow::Result<bool> {
    let mut payload: Value = match source {
        Source::File(path) => {
            let text = if path == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?
            };
            serde_json::from_str(&text).context("the payload is not JSON")?
        }
        Source::Options(options) => options.payload(),
    };
    anyhow::ensure!(payload.is_object(), "the payload is not a JSON object");
    let cwd = layout.project.clone().unwrap_or_else(|| std::path::PathBuf::from("."));
    let filled = fill(&mut payload, &cwd);
    let text = payload.to_string();
    let name = event_name(&payload)?;
    let kind =
        EventKind::from_name(name).with_context(|| format!("unknown hook event `{name}`"))?;
    let input = HookInput::from_value(kind, &payload)
        .context("the payload is not one Claude Code sends")?;

    let path = artifact_path(layout).context("no project and no user folder")?;
    // Checked as a hook checks it (the CRC, or the compiler's stamp).
    let bytes = hook_runtime::load_artifact(&path)
        .map_err(|err| anyhow::anyhow!("{err}: {}; run `hookpack compile`", path.display()))?;
    let artifact = bytes.artifact().map_err(|e| anyhow::anyhow!("{e}: {}", path.display()))?;
    let engine = Engine::new(artifact)?;
    let settings = engine.settings();
    let window_env = hook_runtime::Env::from_process().window_tokens;

    let mut io = ReadOnly {
        dir: layout.installation_dir(),
        store: None,
        handoff: None,
        session_id: payload.get("session_id").and_then(Value::as_str).unwrap_or("").to_owned(),
        transcript: payload.get("transcript_path").and_then(Value::as_str).unwrap_or("").into(),
        payload: &payload,
        settings,
        window_tokens: window_env.unwrap_or(settings.window_tokens),
        unreadable: None,
        reading: None,
        problems: Vec::new(),
    };
    let project_root = layout.project.as_deref();
    let branch = project_root.and_then(hook_runtime::git::current_branch);
    let conversation = if kind == EventKind::PreCompact && settings.reads_conversation {
        transcript::conversation(Path::new(&input.common.transcript_path)).unwrap_or_default()
    } else {
        Vec::new()
    };
    let call = hook_engine::call::call(
        &engine,
        &input,
        &payload,
        Surroundings {
            project_root,
            branch: branch.as_deref().filter(|_| settings.branch_events.contains(kind)),
            home: std::env::var(hook_engine::layout::EnvVars::HOME).ok().as_deref(),
            conversation: &conversation,
        },
        Mode::Explain,
        &mut io,
    )?;

    println!("event: {kind}");
    if !filled.is_empty() {
        println!("filled in: {} (as a pack's [[test]] events are)", filled.join(", "));
    }
    if let Some(err) = &io.unreadable {
        println!("memories: unreadable ({err}); none recalled");
    }
    let reading = io.reading.take().unwrap_or_else(|| io.read(&call.state));
    print_session(&call, &settings, kind, &reading, branch.as_deref());
    print_commands(kind, &payload);
    print_evaluation(&call);
    print_not_in_force(layout, kind);
    if !call.opened && settings.opens_state(kind) {
        println!(
            "        (the state was not opened: the rules that use it were checked against an \
             empty one, as the hook checks them)"
        );
    }
    for problem in &io.problems {
        println!("problem: {problem}");
    }

    // What the binary prints, run the way the binary runs.
    let env = hook_runtime::Env {
        project_dir: layout.project.clone(),
        artifact: Some(path),
        xdg_config_home: None,
        home: None,
        window_tokens: window_env,
        dry_run: true,
    };
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let status = hook_runtime::run(kind, &mut text.as_bytes(), &mut stdout, &mut stderr, &env);
    println!("{} stdout:", kind.binary_name());
    let stdout = String::from_utf8_lossy(&stdout);
    println!("  {}", if stdout.is_empty() { "(nothing)" } else { stdout.trim_end() });
    let stderr = String::from_utf8_lossy(&stderr);
    if !stderr.is_empty() {
        println!("{} stderr:\n  {}", kind.binary_name(), stderr.trim_end());
    }
    println!("exit code: {}", status.code());
    Ok(true)
}

/// The session the rules saw: the state, the bracket (as the hook would find it, shown even
/// where the hook does not read it) and the branch.
fn print_session(
    call: &Call,
    settings: &Settings,
    kind: EventKind,
    reading: &Reading,
    branch: Option<&str>,
) {
    if call.opened {
        println!("state: {}", call.state);
    } else if settings.opens_state(kind) {
        println!("state: not opened (no rule that uses it applies to this call)");
    } else {
        println!("state: not opened (no rule of this event uses it)");
    }
    println!("bracket: {reading}");
    if !settings.needs_bracket {
        println!(
            "        (no rule reads the bracket: the hook reads the transcript only to size the budget)"
        );
    }
    if settings.branch_events.contains(kind) {
        match branch {
            Some(branch) => println!("branch: `{branch}`"),
            None => println!("branch: none (no git repository, or no branch checked out)"),
        }
    }
}

/// The commands a shell tool's command line runs, as the guards read them.
fn print_commands(kind: EventKind, payload: &Value) {
    let command = payload.pointer("/tool_input/command").and_then(Value::as_str);
    let Some(command) = command.filter(|_| kind.is_tool_event()) else { return };
    let tool = payload.get("tool_name").and_then(Value::as_str);
    let dialect = if tool == Some("PowerShell") {
        hook_engine::shell::Dialect::PowerShell
    } else {
        hook_engine::shell::Dialect::Posix
    };
    println!("commands run:");
    let parsed = hook_engine::shell::parse(command, dialect);
    if parsed.commands().len() == 0 {
        println!("  (none)");
    }
    for run in parsed.commands().filter(|c| !c.program().is_empty()) {
        let indent = "  ".repeat(usize::from(run.depth()) + 1);
        println!("{indent}{run}");
    }
    if parsed.exhausted() {
        println!("  (nested too deeply to read in full: guards ask)");
    }
}

/// What fired and why, what did not and why, and what the budget left out.
fn print_evaluation(call: &Call) {
    let evaluation = &call.evaluation;
    println!("fired:");
    if evaluation.fired.is_empty() {
        println!("  (none)");
    }
    for fired in &evaluation.fired {
        let what = match (fired.decision, &fired.context, &fired.message) {
            (Some(d), _, _) => {
                format!("{} — {}", d.as_str(), fired.reason.as_deref().unwrap_or(""))
            }
            _ if fired.recall.is_some() => "recall".to_owned(),
            (None, Some(_), _) => "context".to_owned(),
            (None, None, Some(m)) => format!("message — {m}"),
            (None, None, None) if evaluation.captures.iter().any(|c| c.rule == fired.id) => {
                "capture".to_owned()
            }
            (None, None, None) if evaluation.signals.iter().any(|s| s.rule == fired.id) => {
                "signal".to_owned()
            }
            (None, None, None) if fired.observes => "observe".to_owned(),
            (None, None, None) if fired.exports => "export".to_owned(),
            _ => "state".to_owned(),
        };
        println!("  {}  {what}", fired.id);
        if let Some(command) = &fired.command {
            println!("      matched: {command}");
        }
        if let Some(context) = fired.context.as_deref().filter(|c| !c.is_empty()) {
            let fate = if call.response.dropped.contains(&fired.id) {
                "dropped by the budget"
            } else if fired.pinned {
                "kept (pinned: never dropped)"
            } else {
                "kept"
            };
            println!(
                "      context: {} bytes, layer {}, priority {}: {fate}",
                context.len(),
                fired.layer.as_str(),
                fired.priority
            );
        }
    }
    if !evaluation.signals.is_empty() {
        println!("signals:");
        for s in &evaluation.signals {
            let outcome = s.outcome.map_or("not weighed (no session state)", |o| o.as_str());
            println!("  {}  [{}] {:.3}: {outcome}", s.rule, s.namespace, s.confidence);
            println!("      {}", s.text.lines().next().unwrap_or(""));
        }
    }
    if !evaluation.captures.is_empty() {
        println!("captures (explain stores nothing):");
        for c in &evaluation.captures {
            println!("  {}  [{}] {}", c.rule, c.namespace, c.text.lines().next().unwrap_or(""));
            if let Some(note) = &c.note {
                println!("      {note}");
            }
        }
    }
    println!("near misses:");
    if evaluation.near_misses.is_empty() {
        println!("  (none)");
    }
    // Rules missed for the same reason share a line, unless -v asks for each.
    let verbose = crate::commands::verbosity() >= crate::commands::Verbosity::Verbose;
    let mut groups: Vec<(&str, &str, Vec<&str>)> = Vec::new();
    for miss in &evaluation.near_misses {
        let (condition, detail) = (miss.condition, miss.detail.as_str());
        match groups.iter_mut().find(|(c, d, _)| !verbose && *c == condition && *d == detail) {
            Some((_, _, ids)) => ids.push(&miss.id),
            None => groups.push((condition, detail, vec![&miss.id])),
        }
    }
    for (condition, detail, ids) in groups {
        const SHOWN: usize = 4;
        if ids.len() == 1 {
            println!("  {}  `{condition}`: {detail}", ids[0]);
        } else if ids.len() <= SHOWN {
            println!("  {}  `{condition}`: {detail}", ids.join(", "));
        } else {
            println!(
                "  {} and {} more  `{condition}`: {detail} (-v lists them)",
                ids[..SHOWN].join(", "),
                ids.len() - SHOWN
            );
        }
    }
    let response = &call.response;
    if let Some(decision) = response.decision {
        println!("decision: {}", decision.as_str());
    }
    if !response.dropped.is_empty() {
        let bracket = call.bracket.unwrap_or_default();
        println!(
            "budget: {} tokens ({}); dropped {}",
            call.budget / 4,
            bracket.as_str(),
            response.dropped.join(", ")
        );
    }
}

/// The rules of `kind` that a scope above replaced or `disable` turned off: what the packs say,
/// read anew (the compiled rules hold only the rules in force).
fn print_not_in_force(layout: &Layout, kind: EventKind) {
    let loaded = rules_compiler::load(layout, &crate::commands::environment());
    let mut lines = Vec::new();
    for (p, (scope, pack)) in loaded.packs.iter().enumerate() {
        for (r, rule) in pack.rules.iter().enumerate() {
            if !rule.on.contains(&kind) {
                continue;
            }
            let Some(fate) = loaded.fate(p, r) else { continue };
            let (line, _) = pack.source.line_col(rule.span.start);
            let place = format!("{}:{line}", pack.source.path().display());
            lines.push(format!(
                "  {}  ({} rule at {place}) {fate}",
                rule.full_id(),
                scope.as_str()
            ));
        }
    }
    if !lines.is_empty() {
        println!("not in force:");
        for line in lines {
            println!("{line}");
        }
    }
}

/// The session store read and never written, and the transcript: what `explain` brings to the
/// hook's steps. Memories are recalled from the store; a handoff is made from the state alone.
struct ReadOnly<'p> {
    dir: Option<std::path::PathBuf>,
    store: Option<Store>,
    /// The handoff the session's record holds.
    handoff: Option<String>,
    session_id: String,
    transcript: std::path::PathBuf,
    payload: &'p Value,
    settings: Settings,
    window_tokens: u32,
    /// Why the memory database could not be read.
    unreadable: Option<String>,
    /// The bracket, when the call read it.
    reading: Option<Reading>,
    /// What the call could not do.
    problems: Vec<String>,
}

impl ReadOnly<'_> {
    fn read(&self, state: &SessionState) -> Reading {
        let prompts = state.prompts_since_compaction;
        let path = Path::new(&self.transcript);
        transcript::reading(path, self.payload, &self.settings, self.window_tokens, prompts)
    }
}

impl CallIo for ReadOnly<'_> {
    fn open_state(&mut self, _: &Settings) -> Option<SessionState> {
        let Some(dir) = self.dir.as_deref() else { return Some(SessionState::default()) };
        let record = hook_runtime::state::sessions::peek(dir, &self.session_id);
        if hook_runtime::state::database_path(dir).is_file() {
            match Store::open_read_only(dir) {
                Ok(store) => self.store = Some(store),
                Err(err) => self.unreadable = Some(err.to_string()),
            }
        }
        let record = record.unwrap_or_default();
        self.handoff = record.handoff;
        Some(record.state)
    }

    fn bracket(&mut self, state: &SessionState) -> Bracket {
        let reading = self.read(state);
        let bracket = reading.bracket;
        self.reading = Some(reading);
        bracket
    }

    fn used_percent(&mut self) -> Option<u8> {
        self.reading.as_ref().map(Reading::used_percent)
    }

    fn recall(&mut self, recall: &Recall) -> Result<Vec<Memory>, IoError> {
        match &self.store {
            Some(store) => Ok(store.search(recall)?),
            None => Ok(Vec::new()),
        }
    }

    fn recent_memories(&mut self) -> Result<Vec<Memory>, IoError> {
        Ok(Vec::new())
    }

    fn handoff(&mut self) -> Result<Option<String>, IoError> {
        Ok(self.handoff.clone())
    }

    fn recent_sessions(
        &mut self,
        max: usize,
        branch: Option<&str>,
    ) -> Result<Vec<SessionSummary>, IoError> {
        let Some(dir) = self.dir.as_deref() else { return Ok(Vec::new()) };
        let store = self.store.as_ref();
        Ok(sessions::summaries(dir, &self.session_id, max, (None, branch), |record| {
            let ids = record.stored.as_deref().unwrap_or_default();
            let kept = |&id: &i64| store?.memory(id).ok().flatten();
            ids.iter()
                .filter_map(kept)
                .filter(|(_, s, _)| *s == record.id)
                .map(|(m, ..)| m)
                .collect()
        }))
    }

    fn set_handoff(&mut self, _: Option<String>) {}

    fn remember(&mut self, _: &Captured) -> Result<(), IoError> {
        Ok(())
    }

    fn save(&mut self, _: SessionState, _: Option<Bracket>) {}

    fn problem(&mut self, problem: String) {
        self.problems.push(problem);
    }
}
