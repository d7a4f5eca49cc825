//! A scenario of `e2e/scenarios/*.toml`: the project, the prompt, the model's script, and what
//! must be seen.
//!
//! ```toml
//! description = "a keyword rule's context reaches the model with the prompt"
//! prompt = "add a postgres migration"
//! [files]
//! ".claude/hookpack/packs/db.toml" = '''…'''
//! [[turn]]                      # the model's answers to the main conversation, in order
//! tool = "Bash"
//! input = { command = "ls" }
//! [[turn]]
//! text = "Done."
//! [[turn]]                      # a subagent's answer (the Agent tool), from its own script
//! agent = true
//! text = "Found it."
//! [[turn]]
//! error = "invalid_request_error"   # the API refuses the request (HTTP 400)
//! [expect]
//! requests = ["Migrations live in db/migrations"]   # each in some request the model got (a subagent too)
//! not_requests = []                                   # in none
//! last_request = []                                   # in the main conversation's last one
//! compaction = []                                     # in a compaction request
//! output = []                                         # in the CLI's stream-json output
//! not_output = []
//! debug = []                                          # in Claude Code's debug log
//! not_debug = ["hook error"]
//! max_requests = 3                                    # requests of the main conversation
//! errors = ["API error"]                              # `[ERROR]` lines caused on purpose
//! files = ["notes.txt"]                               # project files that must exist after
//! no_files = []                                       # and must not
//! ```
//!
//! `then = ["…", …]` gives more prompts, each resuming the session (`--resume`), or, with
//! `one_process = true`, each sent to the same process after the previous result.
//! The session itself: `model`, `permission_mode`, `context_tokens` (the usage the model
//! reports), `git`, `worktree` (`--worktree NAME`), `compile`, `args` (more CLI arguments,
//! `--init`), `env`, `hooks = { Event = ["command", …] }` (wired after hookpack's binary),
//! `every_event` (a generated pack with a rule on every event, see `answers.rs`) and
//! `replay_examples` (every binary's answer to every example, shown to Claude Code) and
//! `mcp_stub` (a scripted MCP server whose tool asks the user for input).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;
use serde_json::Value;

use super::answers::Variant;
use super::stub::Turn;

/// A scenario as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(clippy::struct_excessive_bools, reason = "a scenario's switches, as written in TOML")]
pub(crate) struct Scenario {
    /// What it shows.
    #[allow(dead_code, reason = "for the reader of the scenario")]
    pub(crate) description: String,
    /// The prompt given with `-p`.
    pub(crate) prompt: String,
    /// Prompts after it, each resuming the session (`--resume`).
    #[serde(default)]
    then: Vec<String>,
    /// The model the stub says it is.
    #[serde(default = "default_model")]
    pub(crate) model: String,
    /// Whether the project is a git repository (with one commit).
    #[serde(default)]
    pub(crate) git: bool,
    /// `--worktree NAME`: Claude Code works in a new worktree of the project.
    pub(crate) worktree: Option<String>,
    /// The project is set up by README.md's user path, run as written ([`super::readme`]):
    /// hookpack installed into the scenario's home, the project a git repository set up with
    /// `hookpack init`, compiled and wired by `hookpack install`. Nothing else is wired.
    #[serde(default)]
    pub(crate) readme: bool,
    /// The hooks are wired by the repository's plugin, installed with `claude plugin
    /// marketplace add` and `claude plugin install`, instead of in the project's settings.
    #[serde(default)]
    pub(crate) plugin: bool,
    /// Whether `hookpack compile` runs before Claude Code.
    #[serde(default = "yes")]
    pub(crate) compile: bool,
    /// The tokens in the context, as the model's answers report them.
    #[serde(default = "default_tokens")]
    pub(crate) context_tokens: u64,
    /// `--permission-mode`.
    #[serde(default = "default_permission_mode")]
    pub(crate) permission_mode: String,
    /// The prompts go to one Claude Code process (`--input-format stream-json`), each after the
    /// previous one's result, instead of one process per prompt (`--resume`).
    #[serde(default)]
    pub(crate) one_process: bool,
    /// More arguments for every Claude Code run (`--init`, `--add-dir DIR`), `{project}`
    /// replaced by the project's root.
    #[serde(default)]
    pub(crate) args: Vec<String>,
    /// A generated pack with a rule for every event that can answer in this variant
    /// ([`super::answers::pack`]).
    pub(crate) every_event: Option<Variant>,
    /// Every binary answers every example in the project; each distinct answer is shown to
    /// Claude Code ([`super::answers::replay_examples`]).
    #[serde(default)]
    pub(crate) replay_examples: bool,
    /// Claude Code gets a scripted MCP server, `stub`, whose tool `ask_user` asks the user for
    /// input (`mcp__stub__ask_user`: the `Elicitation` hooks run).
    #[serde(default)]
    pub(crate) mcp_stub: bool,
    /// More environment variables for Claude Code (`CLAUDE_CODE_ENABLE_TASKS = "1"`).
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    /// More hook commands, by event, wired after hookpack's (`{project}` replaced).
    #[serde(default)]
    pub(crate) hooks: BTreeMap<String, Vec<String>>,
    /// The project's files, by path relative to its root.
    #[serde(default)]
    pub(crate) files: BTreeMap<String, String>,
    /// The model's script.
    #[serde(default, rename = "turn")]
    turns: Vec<TurnSpec>,
    /// What must be seen.
    #[serde(default)]
    pub(crate) expect: Expect,
}

fn default_model() -> String {
    "claude-opus-5-5".to_owned()
}

fn yes() -> bool {
    true
}

fn default_tokens() -> u64 {
    1000
}

fn default_permission_mode() -> String {
    "bypassPermissions".to_owned()
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TurnSpec {
    text: Option<String>,
    tool: Option<String>,
    input: Option<toml::Value>,
    /// An API error of this type (`invalid_request_error`) instead of an answer.
    error: Option<String>,
    /// A turn of a subagent (the Agent tool) rather than of the main conversation.
    #[serde(default)]
    agent: bool,
}

/// The expectations.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Expect {
    #[serde(default)]
    requests: Vec<String>,
    #[serde(default)]
    not_requests: Vec<String>,
    /// In the last request the model got.
    #[serde(default)]
    last_request: Vec<String>,
    #[serde(default)]
    output: Vec<String>,
    #[serde(default)]
    not_output: Vec<String>,
    #[serde(default)]
    debug: Vec<String>,
    #[serde(default)]
    not_debug: Vec<String>,
    max_requests: Option<usize>,
    /// In some compaction request (the instructions Claude Code gives the model to summarize).
    #[serde(default)]
    compaction: Vec<String>,
    /// `[ERROR]` lines of the debug log the scenario causes on purpose (an API error): each must
    /// be there, and lines containing one are not taken for a hook's failure.
    #[serde(default)]
    errors: Vec<String>,
    /// Files of the project that must exist afterwards.
    #[serde(default)]
    files: Vec<String>,
    /// Files of the project that must not.
    #[serde(default)]
    no_files: Vec<String>,
}

/// What a run showed.
pub(crate) struct Seen<'a> {
    pub(crate) requests: &'a [(String, Value)],
    pub(crate) stdout: &'a str,
    pub(crate) debug: &'a str,
    pub(crate) overruns: usize,
}

impl Scenario {
    pub(crate) fn read(path: &Path) -> anyhow::Result<Scenario> {
        let text = std::fs::read_to_string(path)?;
        let scenario: Scenario =
            toml::from_str(&text).with_context(|| format!("reading {}", path.display()))?;
        for (i, turn) in scenario.turns.iter().enumerate() {
            let kinds = [turn.text.is_some(), turn.tool.is_some(), turn.error.is_some()];
            anyhow::ensure!(
                kinds.iter().filter(|k| **k).count() == 1,
                "{}: turn {} needs one of `text`, `tool` and `error`",
                path.display(),
                i + 1
            );
        }
        Ok(scenario)
    }

    /// Every prompt, in order.
    pub(crate) fn prompts(&self) -> Vec<&str> {
        std::iter::once(self.prompt.as_str()).chain(self.then.iter().map(String::as_str)).collect()
    }

    /// The model's script, `{project}` in tool inputs replaced by the project's root: the main
    /// conversation's turns, then the subagents'.
    pub(crate) fn turns(&self, project: &Path) -> (Vec<Turn>, Vec<Turn>) {
        let (agent, main): (Vec<&TurnSpec>, Vec<&TurnSpec>) =
            self.turns.iter().partition(|t| t.agent);
        (turns(&main, project), turns(&agent, project))
    }
}

fn turns(specs: &[&TurnSpec], project: &Path) -> Vec<Turn> {
    let root = project.display().to_string();
    specs
        .iter()
        .map(|t| match (&t.text, &t.tool, &t.error) {
            (Some(text), _, _) => Turn::Text(text.clone()),
            (None, None, Some(error)) => Turn::Error(error.clone()),
            (None, tool, _) => {
                let input = t.input.as_ref().map_or(Value::Object(serde_json::Map::new()), |v| {
                    let text = serde_json::to_string(v).unwrap_or_default();
                    serde_json::from_str(&text.replace("{project}", &root)).unwrap_or_default()
                });
                Turn::Tool(tool.clone().unwrap_or_default(), input)
            }
        })
        .collect()
}

impl Expect {
    /// The expectations `seen` breaks, said for the developer.
    pub(crate) fn check(&self, seen: &Seen<'_>, project: &Path) -> Vec<String> {
        // What the model was shown: the requests that offer tools (the main conversation's and
        // subagents').
        let asked: Vec<(bool, String)> = seen
            .requests
            .iter()
            .filter(|(_, body)| {
                body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty())
                    && !super::stub::is_compaction(body)
            })
            .map(|(_, body)| (super::stub::is_subagent(body), body.to_string()))
            .collect();
        let all: Vec<&String> = asked.iter().map(|(_, body)| body).collect();
        let main: Vec<&String> =
            asked.iter().filter(|(agent, _)| !agent).map(|(_, body)| body).collect();
        let mut problems = Vec::new();
        let root = project.display().to_string();
        let has = |text: &str, what: &str| text.contains(&what.replace("{project}", &root));
        for what in &self.requests {
            if !all.iter().any(|r| has(r, what)) {
                problems.push(format!("no request showed the model `{what}`"));
            }
        }
        for what in &self.compaction {
            let compactions =
                seen.requests.iter().filter(|(_, body)| super::stub::is_compaction(body));
            if !compactions.map(|(_, body)| body.to_string()).any(|r| has(&r, what)) {
                problems.push(format!("no compaction request showed the model `{what}`"));
            }
        }
        for what in &self.last_request {
            if !main.last().is_some_and(|r| has(r, what)) {
                problems.push(format!("the last request did not show the model `{what}`"));
            }
        }
        for what in &self.not_requests {
            if let Some(i) = all.iter().position(|r| has(r, what)) {
                problems.push(format!("request {} showed the model `{what}`", i + 1));
            }
        }
        for (list, text, negated, place) in [
            (&self.output, seen.stdout, false, "the CLI's output"),
            (&self.not_output, seen.stdout, true, "the CLI's output"),
            (&self.debug, seen.debug, false, "the debug log"),
            (&self.not_debug, seen.debug, true, "the debug log"),
        ] {
            for what in list {
                match (has(text, what), negated) {
                    (false, false) => problems.push(format!("`{what}` is not in {place}")),
                    (true, true) => problems.push(format!("`{what}` is in {place}")),
                    _ => {}
                }
            }
        }
        // Whatever the scenario: Claude Code accepted every hook's output, and no hook failed.
        problems.extend(rejections(seen.debug, &self.errors));
        for what in &self.errors {
            if !seen.debug.lines().any(|l| l.contains("[ERROR]") && l.contains(what.as_str())) {
                problems.push(format!("no `[ERROR]` line of the debug log says `{what}`"));
            }
        }
        for path in &self.files {
            if !project.join(path).exists() {
                problems.push(format!("{path} does not exist"));
            }
        }
        for path in &self.no_files {
            if project.join(path).exists() {
                problems.push(format!("{path} exists"));
            }
        }
        if let Some(max) = self.max_requests
            && main.len() > max
        {
            problems.push(format!(
                "{} requests of the main conversation, at most {max} expected",
                main.len()
            ));
        }
        if seen.overruns > 0 {
            problems.push(format!(
                "the model was asked {} turn(s) more than the script has",
                seen.overruns
            ));
        }
        if main.is_empty() && self.requests.iter().chain(&self.not_requests).next().is_some() {
            problems.push("the model was never asked".to_owned());
        }
        problems
    }
}

/// What Claude Code's debug log says against a hook's output (as Claude Code 2.1.330 words it:
/// "Hook JSON output validation failed — …", "Hook JSON output had unrecognized keys",
/// "Hook returned incorrect event name"), and every error it logs (`[ERROR]`: a hook that failed
/// to run, among others).
pub(crate) fn rejections(debug: &str, expected: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for line in debug.lines() {
        let lower = line.to_lowercase();
        let rejected = ["output validation failed", "unrecognized keys", "incorrect event name"]
            .iter()
            .any(|what| lower.contains(what));
        let error = line.contains("[ERROR]") && !expected.iter().any(|e| line.contains(e.as_str()));
        if rejected || error {
            let line: String = line.chars().take(300).collect();
            problems.push(format!("Claude Code's debug log says: {line}"));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::rejections;

    /// Lines of Claude Code 2.1.330's debug log, as it writes them.
    #[test]
    fn rejections_are_found_as_claude_code_words_them() {
        for line in [
            r#"2026-11-25T05:42:34.266Z [DEBUG] "Hook JSON output validation failed — decision: Invalid option""#,
            "2026-11-25T05:42:34.270Z [DEBUG] Hook JSON output had unrecognized keys (ignored): bogus.",
            r#"2026-11-25T05:42:34.380Z [ERROR] "Hook failed to run (Stop): Hook returned incorrect event name: expected 'Stop' but got 'PreToolUse'."#,
            r#"2026-11-25T05:42:34.412Z [ERROR] "SessionEnd:other [echo] failed to run: boom""#,
        ] {
            assert_eq!(rejections(line, &[]).len(), 1, "{line}");
        }
        let fine =
            "2026-11-25T05:42:34.270Z [DEBUG] Successfully parsed and validated hook JSON output
                    2026-11-25T05:42:34.411Z [DEBUG] SessionEnd:other [x] completed with status 0";
        assert!(rejections(fine, &[]).is_empty());
        let expected = "2026-11-25T05:45:04.315Z [ERROR] API error (attempt 1/1): 401";
        assert!(rejections(expected, &["API error".to_owned()]).is_empty());
    }
}
