//! The pack language after parsing: packs, rules, conditions, actions and tests.

use std::ops::Range;
use std::sync::Arc;

use hook_model::EventKind;
use serde_json::Value;

pub use hook_engine::{Bracket, Decision, Layer, Once, RecallFrom, RecallSpec};

use crate::SourceFile;

/// One parsed rule pack.
#[derive(Clone, Debug)]
pub struct Pack {
    /// `[pack] name`.
    pub name: String,
    /// `[pack] description`.
    pub description: Option<String>,
    /// `[pack] version`.
    pub version: Option<String>,
    /// The rules, in file order.
    pub rules: Vec<Rule>,
    /// The `[[test]]` cases, in file order.
    pub tests: Vec<PackTest>,
    /// The file.
    pub source: Arc<SourceFile>,
    /// The `context_file`s it read.
    pub context_files: Vec<std::path::PathBuf>,
}

/// One rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The pack's name.
    pub pack: String,
    /// The rule's id within the pack.
    pub id: String,
    /// The events it answers, without repeats.
    pub on: Vec<EventKind>,
    /// What must hold.
    pub when: Conditions,
    /// What it does.
    pub then: Actions,
    /// Where the rule is (its `id` value), for diagnostics.
    pub span: Range<usize>,
    /// The automata its globs and regexes compile to, for the artifact's budget.
    pub automata: Vec<Automaton>,
}

/// A glob or a regex of a rule, and the size of its precompiled DFA.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Automaton {
    /// The glob or the regex.
    pub pattern: String,
    /// Whether it is a glob (`paths`); else a regex (`regex`, a `tool` regex).
    pub glob: bool,
    /// The DFA's size in the artifact, in bytes.
    pub bytes: usize,
    /// Where the pattern is, for diagnostics.
    pub span: Range<usize>,
}

impl Rule {
    /// `<pack>/<id>`.
    pub fn full_id(&self) -> String {
        format!("{}/{}", self.pack, self.id)
    }
}

/// A rule's conditions; all that are given must hold, a list means any of its items.
#[derive(Clone, Debug, Default)]
pub struct Conditions {
    /// `tool`: which tools.
    pub tool: Option<ToolMatcher>,
    /// `paths` without `!`: any of these globs.
    pub paths: Vec<String>,
    /// `paths` with `!`, without it: none of these globs.
    pub paths_excluded: Vec<String>,
    /// `keywords`, `$tables` expanded: any of these terms.
    pub keywords: Vec<String>,
    /// `keywords_all`: every one of these terms.
    pub keywords_all: Vec<String>,
    /// `exclude`: none of these terms.
    pub exclude: Vec<String>,
    /// `regex`: any of these regexes.
    pub regex: Vec<String>,
    /// `field`: the dotted path of the text the four keys above read; `None` for the event's
    /// default text.
    pub field: Option<String>,
    /// `command`: any of these patterns matches a command the text runs.
    pub command: Vec<hook_engine::command::Pattern<String>>,
    /// `star`: any of these star-commands (lowercase, without `*`).
    pub star: Vec<String>,
    /// `fields`, `source`, `trigger`, … : exact values of payload fields, by dotted path.
    pub fields: Vec<FieldCondition>,
    /// `bracket`: any of these brackets.
    pub bracket: Vec<Bracket>,
    /// `agent`: the active agent is one of these.
    pub agent: Vec<String>,
    /// `workflow`: the active workflow is one of these.
    pub workflow: Vec<String>,
    /// `task`: the active task is one of these.
    pub task: Vec<String>,
    /// `flags`: all of these are set.
    pub flags: Vec<String>,
    /// `not_flags`: none of these is set.
    pub not_flags: Vec<String>,
    /// `every`: the prompt number is a multiple of this.
    pub every: Option<u32>,
    /// `permission_mode`: one of these.
    pub permission_mode: Vec<String>,
    /// `branch`: globs over the project's current git branch (`!` in front: excluded).
    pub branch: Vec<String>,
    /// `branch_changed = true`: the branch is not the one the session last saw.
    pub branch_changed: bool,
    /// A condition no input can satisfy (an empty `keywords`, `every = 0`, …), reported as a
    /// warning; the rule is left out of the artifact.
    pub never: bool,
}

/// Which tools a rule applies to, in Claude Code's matcher semantics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolMatcher {
    /// Exactly these names.
    Names(Vec<String>),
    /// An unanchored regex.
    Regex(String),
}

/// Exact values of one payload field.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldCondition {
    /// The dotted path, e.g. `tool_input.run_in_background`.
    pub path: String,
    /// Any of these values.
    pub values: Vec<Value>,
}

/// What a rule does.
#[derive(Clone, Debug, Default)]
#[allow(clippy::struct_excessive_bools, reason = "each is a yes-or-no key of the pack language")]
pub struct Actions {
    /// `context` or the text of `context_file`.
    pub context: Option<String>,
    /// `layer`, or its default.
    pub layer: Layer,
    /// `pinned`.
    pub pinned: bool,
    /// `priority`.
    pub priority: i32,
    /// `once`.
    pub once: Option<Once>,
    /// `decision`.
    pub decision: Option<Decision>,
    /// `reason`.
    pub reason: Option<String>,
    /// `message`.
    pub message: Option<String>,
    /// `stop`: the `stopReason` of a `continue: false`.
    pub stop: Option<String>,
    /// `session_title`.
    pub session_title: Option<String>,
    /// `watch_paths`, relative to the project.
    pub watch_paths: Vec<String>,
    /// `rewrite`: (input field, template), in the order written.
    pub rewrite: Vec<(String, String)>,
    /// `set`.
    pub set: StateSet,
    /// `unset`.
    pub unset: StateUnset,
    /// `capture`.
    pub capture: Option<Capture>,
    /// `repeat`.
    pub repeat: bool,
    /// `recall`.
    pub recall: Option<RecallSpec>,
    /// `observe = true`: what the event shows the session did goes into its books.
    pub observe: bool,
    /// `export = true`: the conventions kept in memory are written into `CLAUDE.md`.
    pub export: bool,
    /// `fail = "closed"`.
    pub fail_closed: bool,
}

/// Session state to set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateSet {
    /// The active agent.
    pub agent: Option<String>,
    /// The active workflow.
    pub workflow: Option<String>,
    /// The active task.
    pub task: Option<String>,
    /// Flags to set.
    pub flags: Vec<String>,
}

/// Session state to clear.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateUnset {
    /// Clear the active agent.
    pub agent: bool,
    /// Clear the active workflow.
    pub workflow: bool,
    /// Clear the active task.
    pub task: bool,
    /// Flags to clear.
    pub flags: Vec<String>,
}

/// `capture`.
#[derive(Clone, Debug, PartialEq)]
pub struct Capture {
    /// The namespace; `None` for the default.
    pub namespace: Option<String>,
    /// How sure, 0 to 1.
    pub confidence: f64,
    /// Only marked text is captured.
    pub markers: bool,
    /// A signal: the sentence around each match of the rule's regexes, its confidence adjusted
    /// by the match, captured or suggested by `[memory] auto` and `suggest`.
    pub signal: bool,
}

/// A `[[test]]` case.
#[derive(Clone, Debug)]
pub struct PackTest {
    /// What it shows.
    pub name: String,
    /// The payload, as written (common fields not yet filled in).
    pub event: Value,
    /// The event of the payload.
    pub kind: EventKind,
    /// The session it starts from.
    pub given: Given,
    /// What must happen.
    pub expect: Expectation,
    /// Where the test is (its `name` value).
    pub span: Range<usize>,
}

/// The session state a test starts from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Given {
    /// The active agent, workflow, task and the flags set.
    pub state: StateSet,
    /// Prompts already submitted.
    pub prompts: u64,
    /// Compactions so far.
    pub compactions: u32,
    /// The bracket.
    pub bracket: Bracket,
    /// Rules with `once` already given since the last compaction.
    pub injected: Vec<String>,
    /// Memories already stored, oldest first: (namespace, text).
    pub memories: Vec<(String, String)>,
    /// The project's current git branch; none: no branch checked out.
    pub branch: Option<String>,
    /// The branch the session's hooks last saw; none: none yet.
    pub previous_branch: Option<String>,
    /// The conversation's messages since the last compaction (a `PreCompact` test's text).
    pub conversation: Vec<String>,
    /// The percent of the context window in use (`{used_percent}`); none: not known.
    pub used_percent: Option<u8>,
}

/// What a test expects.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Expectation {
    /// The decision; `Some(None)` for `"none"`.
    pub decision: Option<Option<Decision>>,
    /// Exactly these rules fire (full ids).
    pub rules: Option<Vec<String>>,
    /// None of these fires (full ids).
    pub not_rules: Vec<String>,
    /// The context contains each of these.
    pub context_contains: Vec<String>,
    /// The context contains none of these.
    pub context_excludes: Vec<String>,
    /// The hook's JSON answer, as printed, contains each of these.
    pub answer_contains: Vec<String>,
    /// The hook's JSON answer contains none of these.
    pub answer_excludes: Vec<String>,
    /// The session state afterwards.
    pub state: Option<StateSet>,
    /// Flags not set afterwards.
    pub not_flags: Vec<String>,
    /// The bracket.
    pub bracket: Option<Bracket>,
    /// Exactly these memories are captured.
    pub captures: Option<Vec<ExpectedCapture>>,
}

/// A memory a test expects captured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExpectedCapture {
    /// Its namespace.
    pub namespace: String,
    /// Its text.
    pub text: String,
    /// Its confidence, when the test says (to a thousandth).
    pub confidence: Option<f64>,
}
