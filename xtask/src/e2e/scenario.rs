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
//! [expect]
//! requests = ["Migrations live in db/migrations"]   # each in some request the model got
//! not_requests = []                                   # in none
//! last_request = []                                   # in the last one
//! output = []                                         # in the CLI's stream-json output
//! not_output = []
//! debug = []                                          # in Claude Code's debug log
//! not_debug = ["hook error"]
//! max_requests = 3                                    # requests of the main conversation
//! files = ["notes.txt"]                               # project files that must exist after
//! no_files = []                                       # and must not
//! ```
//!
//! `then = ["…", …]` gives more prompts, each resuming the session (`--resume`).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;
use serde_json::Value;

use super::stub::Turn;

/// A scenario as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// Whether `hookpack compile` runs before Claude Code.
    #[serde(default = "yes")]
    pub(crate) compile: bool,
    /// The tokens in the context, as the model's answers report them.
    #[serde(default = "default_tokens")]
    pub(crate) context_tokens: u64,
    /// `--permission-mode`.
    #[serde(default = "default_permission_mode")]
    pub(crate) permission_mode: String,
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
            anyhow::ensure!(
                turn.text.is_some() != turn.tool.is_some(),
                "{}: turn {} needs `text` or `tool`",
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

    /// The model's script, `{project}` in tool inputs replaced by the project's root.
    pub(crate) fn turns(&self, project: &Path) -> Vec<Turn> {
        let root = project.display().to_string();
        self.turns
            .iter()
            .map(|t| match (&t.text, &t.tool) {
                (Some(text), _) => Turn::Text(text.clone()),
                (None, tool) => {
                    let input =
                        t.input.as_ref().map_or(Value::Object(serde_json::Map::new()), |v| {
                            let text = serde_json::to_string(v).unwrap_or_default();
                            serde_json::from_str(&text.replace("{project}", &root))
                                .unwrap_or_default()
                        });
                    Turn::Tool(tool.clone().unwrap_or_default(), input)
                }
            })
            .collect()
    }
}

impl Expect {
    /// The expectations `seen` breaks, said for the developer.
    pub(crate) fn check(&self, seen: &Seen<'_>, project: &Path) -> Vec<String> {
        // What the model was shown: the main conversation's requests (those that offer tools).
        let main: Vec<String> = seen
            .requests
            .iter()
            .filter(|(_, body)| {
                body.get("tools").and_then(Value::as_array).is_some_and(|t| !t.is_empty())
                    && !super::stub::is_compaction(body)
            })
            .map(|(_, body)| body.to_string())
            .collect();
        let mut problems = Vec::new();
        let root = project.display().to_string();
        let has = |text: &str, what: &str| text.contains(&what.replace("{project}", &root));
        for what in &self.requests {
            if !main.iter().any(|r| has(r, what)) {
                problems.push(format!("no request showed the model `{what}`"));
            }
        }
        for what in &self.last_request {
            if !main.last().is_some_and(|r| has(r, what)) {
                problems.push(format!("the last request did not show the model `{what}`"));
            }
        }
        for what in &self.not_requests {
            if let Some(i) = main.iter().position(|r| has(r, what)) {
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
        // Whatever the scenario: Claude Code accepted every hook's output.
        for what in ["hook output invalid", "unrecognized keys", "incorrect event name"] {
            if seen.debug.to_lowercase().contains(what) {
                problems.push(format!("Claude Code's debug log says `{what}`"));
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
