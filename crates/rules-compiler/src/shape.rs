//! The shapes of hookpack's TOML files: every table, every key, every type.
//!
//! One description serves two readers. [`check`] walks a parsed file against it and reports
//! every unknown key, missing key and wrong type at once, with its place; [`json_schema`] turns
//! it into the JSON Schemas editors complete from (`schemas/rule-pack.schema.json`,
//! `schemas/config.schema.json`). What the parser accepts and what the schema describes cannot
//! drift apart: they are the same data.
//!
//! It is long because the language is: every key of a pack and of the config is one entry of
//! these tables, kept together so that the whole language reads in one place.

use std::ops::Range;
use std::sync::Arc;

use serde_json::{Map, Value, json};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::{Diagnostics, SourceFile};

/// The type of a value.
#[derive(Debug)]
pub(crate) enum Shape {
    /// A string.
    String,
    /// A string matching this regex (the schema's `pattern`); the pack reader reports a
    /// mismatch in its own words.
    Matching(&'static str),
    /// A string, or a list of strings ("a single string stands for a list of one").
    Strings,
    /// A list of strings.
    StringList,
    /// One of these strings.
    Enum(&'static [&'static str]),
    /// One or a list of these strings.
    Enums(&'static [&'static str]),
    /// A list of these names, checked where they are used: the schema lists them for
    /// completion, and an unknown one is reported where the name is looked up.
    NameList(&'static [&'static str]),
    /// An integer within bounds.
    Integer { min: i64, max: i64 },
    /// A number within bounds.
    Number { min: f64, max: f64 },
    /// A boolean.
    Bool,
    /// A table with these keys.
    Table(&'static Table),
    /// A list of tables with these keys (`[[rule]]`).
    Tables(&'static Table),
    /// A table with these keys, or a list of them.
    TableOrTables(&'static Table),
    /// A table whose keys are the user's, each value of this shape.
    Map(&'static Shape),
    /// A scalar (string, integer, float, boolean) or a list of scalars.
    Scalars,
    /// A hook payload: any table with a `hook_event_name` (the pack reader checks it).
    Payload,
}

/// A table's keys.
#[derive(Debug)]
pub(crate) struct Table {
    /// How messages name the table, e.g. "a rule".
    pub(crate) what: &'static str,
    /// What the table is for.
    pub(crate) doc: &'static str,
    pub(crate) keys: &'static [Key],
}

/// One key of a table.
#[derive(Debug)]
pub(crate) struct Key {
    pub(crate) name: &'static str,
    pub(crate) shape: Shape,
    pub(crate) required: bool,
    pub(crate) doc: &'static str,
}

const fn key(name: &'static str, shape: Shape, doc: &'static str) -> Key {
    Key { name, shape, required: false, doc }
}

const fn required(name: &'static str, shape: Shape, doc: &'static str) -> Key {
    Key { name, shape, required: true, doc }
}

/// Claude Code's event names, as `on` takes them: [`hook_model::EventKind::ALL`]'s names.
pub(crate) const EVENT_NAMES: &[&str] = &{
    let all = hook_model::EventKind::ALL;
    let mut names = [""; hook_model::EventKind::ALL.len()];
    let mut i = 0;
    while i < all.len() {
        names[i] = all[i].as_str();
        i += 1;
    }
    names
};

/// The builtin packs' names, as `builtin` in the config takes them.
pub(crate) const BUILTIN_NAMES: &[&str] = &{
    let packs = crate::builtin::PACKS;
    let mut names = [""; crate::builtin::PACKS.len()];
    let mut i = 0;
    while i < packs.len() {
        names[i] = packs[i].0;
        i += 1;
    }
    names
};

/// What a pack's name must match.
pub(crate) const PACK_NAME: &str = "^[a-z][a-z0-9-]*$";
/// What a rule's id must match.
pub(crate) const RULE_ID: &str = "^[a-z0-9][a-z0-9_-]*$";

pub(crate) const BRACKETS: &[&str] = &["fresh", "moderate", "depleted", "critical"];
pub(crate) const LAYERS: &[&str] =
    &["constitution", "global", "agent", "workflow", "task", "squad", "keyword", "command"];
pub(crate) const DECISIONS: &[&str] = &["allow", "ask", "deny", "block"];
pub(crate) const EXPECTED_DECISIONS: &[&str] = &["none", "allow", "ask", "deny", "block"];

const STRINGS_MAX: i64 = i64::MAX;

/// A `command` pattern.
static COMMAND: Table = Table {
    what: "a command pattern",
    doc: "A command the text runs: its program, then its subcommand, flags and operands.",
    keys: &[
        required(
            "program",
            Shape::Strings,
            "The program's name (`git`, not `/usr/bin/git`); `*` and `?` glob (`python*`); any of a list.",
        ),
        key(
            "subcommand",
            Shape::String,
            "Its first operands, in order (`stash drop`); `|` gives alternatives for a word (`delete ns|namespace`).",
        ),
        key(
            "flags",
            Shape::Strings,
            "Options that must all be given, each `-r|-R|--recursive` (any of them); `!` in front: none of them. `-r` is found in `-rf`, `--force` as `--force=…`; `--request=DELETE` also as `--request DELETE`.",
        ),
        key(
            "args",
            Shape::Strings,
            "Globs over the operands after the subcommand and what a heredoc feeds it: one must match; `!glob` excludes an operand. ASCII case is ignored.",
        ),
        key(
            "piped_from",
            Shape::Strings,
            "Globs over the name of the program whose output the command reads through a pipe (`curl … | sh`): one must match.",
        ),
        key(
            "targets",
            Shape::Strings,
            "Classes of path the operands after the subcommand must be: one operand of one of them (`system`, `home`, `in-home`, `above-project`, `project`, `in-project`, `build-output`, `git`, `credentials`, `temp`, `root`, `outside`, `unknown`); `!class` excludes. Paths are normalized (`~`, `$HOME`, `..`) before they are placed.",
        ),
        key(
            "calls",
            Shape::Strings,
            "Functions of the command's inline code (`python -c`, `node -e`, `ruby -e`, `perl -e`, `php -r`, a heredoc fed to an interpreter), one of which must be called (`shutil.rmtree`, `fs.rmSync`, `.unlink` for a method); `targets` then judges the paths their first arguments name (a string, the home as the language spells it, a join) instead of the operands.",
        ),
        key(
            "sql",
            Shape::Strings,
            "What the SQL in the command's arguments or heredoc (or, with `calls`, in the calls' first arguments) must do: `drop` (DROP TABLE/DATABASE/SCHEMA/KEYSPACE, DROP OWNED/USER/ROLE/TABLESPACE), `truncate`, `delete-all` and `update-all` (no WHERE, or one that holds for every row), `drop-column`. Text in strings and comments, and transactions rolled back, do nothing.",
        ),
        key(
            "find",
            Shape::Strings,
            "What a `find` command's expression must do: `delete-all` (a deleting action, -delete or -exec rm, reached for files no naming test lets through: `find / -delete -name x`, `find ~ -not -name keep -delete`, `find . -type f -mtime +30 -delete`) or `delete-named` (only files a -name, -path, -regex, … test lets through). `targets` then judges its start points.",
        ),
        key(
            "empties",
            Shape::Strings,
            "Classes of path of the files the command leaves empty or destroys: a truncating redirection of a command that prints nothing (`> f`, `: > f`, `cat /dev/null > f`) or that reads the file it truncates (`sort f > f`, `jq … f > f`), `truncate -s 0`, `cp /dev/null f`. One of a class named and of no `!` one; devices and kernel files are not judged.",
        ),
        key(
            "overwrites",
            Shape::Strings,
            "Classes of path of the files the command's output truncates (`>`, `>|`, `&>`; not `>>`): one of a class named (`system`, `in-system`, `credentials`, `git`, …) and of no `!` one. Paths are placed as `targets` places them; devices and kernel files (`/dev/null`, `/proc/…`) are not judged.",
        ),
        key(
            "writes",
            Shape::Strings,
            "Globs over the files its output is redirected to (`> /etc/hosts`): one must match. `program = \"*\"` also matches a bare redirection.",
        ),
    ],
};

/// A rule pack file.
pub(crate) static PACK_FILE: Table = Table {
    what: "a pack file",
    doc: "A hookpack rule pack: rules that answer Claude Code hook events.",
    keys: &[
        required("pack", Shape::Table(&PACK), "The pack's name and description."),
        key(
            "keywords",
            Shape::Map(&Shape::StringList),
            "Named keyword tables, referenced in term lists as `$name`.",
        ),
        key("rule", Shape::Tables(&RULE), "The rules, in order."),
        key("test", Shape::Tables(&TEST), "Tests of the rules, run by `hookpack test`."),
    ],
};

static PACK: Table = Table {
    what: "[pack]",
    doc: "The pack's identity.",
    keys: &[
        required(
            "name",
            Shape::Matching(PACK_NAME),
            "The pack's name: ^[a-z][a-z0-9-]*$. A rule's full id is `<name>/<id>`.",
        ),
        key("description", Shape::String, "What the pack is for."),
        key("version", Shape::String, "The pack's version."),
    ],
};

/// One rule.
pub(crate) static RULE: Table = Table {
    what: "a rule",
    doc: "A rule: conditions that must all hold, and what to do when they do.",
    keys: &[
        required(
            "id",
            Shape::Matching(RULE_ID),
            "The rule's id: ^[a-z0-9][a-z0-9_-]*$, unique in the pack.",
        ),
        key("description", Shape::String, "What the rule is for (not shown to the model)."),
        required(
            "on",
            Shape::Enums(EVENT_NAMES),
            "The events the rule answers, as Claude Code spells them.",
        ),
        key(
            "tool",
            Shape::String,
            "Tool-name matcher, Claude Code syntax: `*` or empty = all; letters, digits, `_`, `-`, `|`, `,` = exact names; anything else = unanchored regex.",
        ),
        key(
            "paths",
            Shape::Strings,
            "Globs against the tool's file path, relative to the project; a leading `!` excludes.",
        ),
        key(
            "keywords",
            Shape::Strings,
            "Any of these terms (`$table` expands a keyword table); case-insensitive, at word boundaries.",
        ),
        key("keywords_all", Shape::Strings, "Every one of these terms."),
        key("exclude", Shape::Strings, "Any of these terms vetoes the rule."),
        key(
            "regex",
            Shape::Strings,
            "Any of these regexes (Rust `regex` syntax) matches the text.",
        ),
        key(
            "command",
            Shape::TableOrTables(&COMMAND),
            "Shell tools: a command the call runs, parsed as a shell reads it (wrappers, quotes, `bash -c`, `$(…)` seen through); any of a list.",
        ),
        key(
            "field",
            Shape::String,
            "Which payload text the term and regex conditions read: a dotted path such as `tool_input.command`.",
        ),
        key("star", Shape::Strings, "Star-commands: the prompt contains `*name`."),
        key("source", Shape::Strings, "Exact values of the payload's `source`."),
        key("trigger", Shape::Strings, "Exact values of the payload's `trigger`."),
        key(
            "notification_type",
            Shape::Strings,
            "Exact values of the payload's `notification_type`.",
        ),
        key("agent_type", Shape::Strings, "Exact values of the payload's `agent_type`."),
        key("load_reason", Shape::Strings, "Exact values of the payload's `load_reason`."),
        key("error", Shape::Strings, "Exact values of the payload's `error` (StopFailure)."),
        key(
            "fields",
            Shape::Map(&Shape::Scalars),
            "Exact values of any payload fields, by dotted path.",
        ),
        key("bracket", Shape::Enums(BRACKETS), "Context brackets in which the rule applies."),
        key("agent", Shape::Strings, "The session's active agent is one of these."),
        key(
            "branch",
            Shape::Strings,
            "The project's current git branch matches one of these globs (`*` any text, `/` included; `?` one character); `!glob` excludes. No branch checked out (a detached HEAD): no match.",
        ),
        key(
            "branch_changed",
            Shape::Bool,
            "The project's current git branch is not the one the session's hooks last saw (`{previous_branch}`): the session moved to another branch. Not on the session's first look at the branch.",
        ),
        key("workflow", Shape::Strings, "The session's active workflow is one of these."),
        key("task", Shape::Strings, "The session's active task is one of these."),
        key("flags", Shape::Strings, "Session flags that must be set."),
        key("not_flags", Shape::Strings, "Session flags that must not be set."),
        key(
            "every",
            Shape::Integer { min: 0, max: 1_000_000 },
            "Apply on every N-th prompt (the first prompt is 1).",
        ),
        key("permission_mode", Shape::Strings, "Exact values of the session's permission mode."),
        key("context", Shape::String, "Text for the model."),
        key(
            "context_file",
            Shape::String,
            "A file whose text is the context, relative to the pack; read at compile time. It must stay in the pack's scope folder (`.claude/hookpack/`, or `~/.config/hookpack/` for the user's packs), symbolic links included, and be a regular file of at most 1 MiB.",
        ),
        key(
            "layer",
            Shape::Enum(LAYERS),
            "The context's layer, L0 (constitution) to L7 (command).",
        ),
        key("pinned", Shape::Bool, "Never dropped by the context budget."),
        key(
            "priority",
            Shape::Integer { min: -1_000_000, max: 1_000_000 },
            "Higher first within a layer; default 0.",
        ),
        key(
            "once",
            Shape::Enum(&["session", "compaction"]),
            "Inject at most once per session, or once per compaction.",
        ),
        key(
            "decision",
            Shape::Enum(DECISIONS),
            "allow/ask/deny on PreToolUse; allow/deny on PermissionRequest; block where an event blocks.",
        ),
        key(
            "reason",
            Shape::String,
            "Why: shown where the decision's reader reads it. Required for deny and block.",
        ),
        key("message", Shape::String, "A note for the user (`systemMessage`)."),
        key(
            "stop",
            Shape::String,
            "Stop Claude after the hooks run (`continue: false`), telling the user why (`stopReason`).",
        ),
        key(
            "rewrite",
            Shape::Map(&Shape::String),
            "PreToolUse: new values of the call's input fields, from templates (`{command} --dry-run`, `trash {command#rm }`), as `updatedInput`.",
        ),
        key(
            "watch_paths",
            Shape::Strings,
            "SessionStart, CwdChanged, FileChanged: files, relative to the project, whose changes run FileChanged (`watchPaths`).",
        ),
        key(
            "session_title",
            Shape::String,
            "SessionStart and UserPromptSubmit: the session's title (`sessionTitle`).",
        ),
        key("set", Shape::Table(&SET), "Session state to set."),
        key("unset", Shape::Table(&UNSET), "Session state to clear."),
        key("capture", Shape::Table(&CAPTURE), "Store the matched text as a memory."),
        key(
            "export",
            Shape::Bool,
            "SessionStart: write the conventions kept in memory (`patterns`) where Claude Code reads them, as `hookpack memory export` does: `CLAUDE.md` between hookpack's markers, a folder's in `.claude/rules/hookpack-<folder>.md`. Off unless a rule you turn on says so.",
        ),
        key(
            "observe",
            Shape::Bool,
            "Keep what the event shows the session did (`UserPromptSubmit`: its first prompt as its title; `PostToolUse`: a file read or edited, a command run, another tool used; `PostToolUseFailure`: what failed and why) in its books, for `recall = { from = \"sessions\" }`.",
        ),
        key(
            "repeat",
            Shape::Bool,
            "Stop/SubagentStop: block or give context even when a stop hook is already active.",
        ),
        key("recall", Shape::Table(&RECALL), "Inject stored memories that match."),
        key(
            "fail",
            Shape::Enum(&["open", "closed"]),
            "PreToolUse rules with a decision: on an engine failure, `closed` denies.",
        ),
    ],
};

static SET: Table = Table {
    what: "`set`",
    doc: "Session state to set.",
    keys: &[
        key("agent", Shape::String, "The active agent."),
        key("workflow", Shape::String, "The active workflow."),
        key("task", Shape::String, "The active task."),
        key("flags", Shape::Strings, "Flags to set."),
    ],
};

static UNSET: Table = Table {
    what: "`unset`",
    doc: "Session state to clear.",
    keys: &[
        key("agent", Shape::Bool, "Clear the active agent."),
        key("workflow", Shape::Bool, "Clear the active workflow."),
        key("task", Shape::Bool, "Clear the active task."),
        key("flags", Shape::Strings, "Flags to clear."),
    ],
};

static CAPTURE: Table = Table {
    what: "`capture`",
    doc: "Store the matched text as a memory, privacy tags stripped.",
    keys: &[
        key("namespace", Shape::String, "The memory's namespace, e.g. `decisions`."),
        key("confidence", Shape::Number { min: 0.0, max: 1.0 }, "How sure the capture is, 0 to 1."),
        key(
            "markers",
            Shape::Bool,
            "Capture only text marked `[remember] …`, `[decision] …`, `:::ns … :::` (the rule \
             fires only when there is some); each marker picks its namespace.",
        ),
        key(
            "signal",
            Shape::Bool,
            "A signal: the sentence around each match of the rule's `regex` is a memory of \
             `confidence` adjusted by the match (longer, a full sentence, emphasis words: higher), \
             captured at or above `[memory] auto`, suggested to the model at or above `suggest`, \
             unless the store already holds it.",
        ),
    ],
};

static RECALL: Table = Table {
    what: "`recall`",
    doc: "Inject stored memories.",
    keys: &[
        key(
            "from",
            Shape::Enum(&["path", "prompt", "handoff", "sessions"]),
            "Match memories against the file path's terms or the prompt, inject the handoff \
             `PreCompact` wrote (on `SessionStart` after a compaction), or an index of the recent \
             sessions (what each did and kept).",
        ),
        key(
            "max",
            Shape::Integer { min: 1, max: 100 },
            "At most this many memories (sessions, for `sessions`).",
        ),
    ],
};

static TEST: Table = Table {
    what: "a test",
    doc: "A test case: a payload and what the pack must answer.",
    keys: &[
        required("name", Shape::String, "What the test shows."),
        required(
            "event",
            Shape::Payload,
            "The hook payload, `hook_event_name` included; missing common fields get test defaults.",
        ),
        key("given", Shape::Table(&GIVEN), "The session the test starts from; default a new one."),
        required("expect", Shape::Table(&EXPECT), "What must happen."),
    ],
};

static GIVEN: Table = Table {
    what: "`given`",
    doc: "The session state a test starts from.",
    keys: &[
        key("agent", Shape::String, "The active agent."),
        key("workflow", Shape::String, "The active workflow."),
        key("task", Shape::String, "The active task."),
        key("flags", Shape::Strings, "Flags set."),
        key(
            "prompts",
            Shape::Integer { min: 0, max: 1_000_000 },
            "Prompts already submitted (a UserPromptSubmit test is prompt `prompts + 1`).",
        ),
        key(
            "compactions",
            Shape::Integer { min: 0, max: 1_000_000 },
            "Compactions so far (a PreCompact or SessionStart `compact` test adds one).",
        ),
        key("bracket", Shape::Enum(BRACKETS), "The context bracket; default fresh."),
        key(
            "branch",
            Shape::String,
            "The project's current git branch; default: none checked out.",
        ),
        key(
            "previous_branch",
            Shape::String,
            "The branch the session's hooks last saw; default: none yet.",
        ),
        key(
            "conversation",
            Shape::StringList,
            "The conversation's messages since the last compaction, oldest first (user prompts and Claude's replies): on `PreCompact`, the event's text after `custom_instructions`; default none.",
        ),
        key(
            "used_percent",
            Shape::Integer { min: 0, max: 100 },
            "The percent of the context window in use, which `{used_percent}` says; default: not known.",
        ),
        key(
            "injected",
            Shape::StringList,
            "Rules with `once` already given since the last compaction (full ids).",
        ),
        key("memories", Shape::Tables(&MEMORY_ITEM), "Memories already stored, oldest first."),
    ],
};

static MEMORY_ITEM: Table = Table {
    what: "a memory",
    doc: "A memory: its namespace and text.",
    keys: &[
        key("namespace", Shape::String, "The namespace, e.g. `decisions`."),
        key("text", Shape::String, "The text."),
    ],
};

static CAPTURE_ITEM: Table = Table {
    what: "a captured memory",
    doc: "A memory captured: its namespace, text and (to a thousandth) confidence.",
    keys: &[
        key("namespace", Shape::String, "The namespace, e.g. `decisions`."),
        key("text", Shape::String, "The text."),
        key(
            "confidence",
            Shape::Number { min: 0.0, max: 1.0 },
            "Its confidence, to a thousandth (a signal's, adjusted by its match).",
        ),
    ],
};

static EXPECT: Table = Table {
    what: "`expect`",
    doc: "What a test expects.",
    keys: &[
        key("decision", Shape::Enum(EXPECTED_DECISIONS), "The decision, or `none`."),
        key("rules", Shape::StringList, "Exactly these rules fire (full ids)."),
        key(
            "not_rules",
            Shape::StringList,
            "None of these rules fires (full ids); the others may: a near miss of one rule.",
        ),
        key("context_contains", Shape::Strings, "The injected context contains each of these."),
        key("context_excludes", Shape::Strings, "The injected context contains none of these."),
        key(
            "answer_contains",
            Shape::Strings,
            "The hook's JSON answer, as printed, contains each of these (e.g. `\"continue\":false`).",
        ),
        key("answer_excludes", Shape::Strings, "The hook's JSON answer contains none of these."),
        key("state", Shape::Table(&SET), "The session state afterwards."),
        key("not_flags", Shape::Strings, "Flags not set afterwards."),
        key("bracket", Shape::Enum(BRACKETS), "The context bracket."),
        key(
            "captures",
            Shape::Tables(&CAPTURE_ITEM),
            "Exactly these memories are captured, in order (`[]`: none).",
        ),
    ],
};

/// A `hookpack.toml` file.
pub(crate) static CONFIG_FILE: Table = Table {
    what: "the config",
    doc: "hookpack's configuration (hookpack.toml, hookpack.local.toml).",
    keys: &[
        key(
            "builtin",
            Shape::NameList(BUILTIN_NAMES),
            "Builtin packs this project uses, e.g. [\"guard\", \"context\"].",
        ),
        key("disable", Shape::StringList, "Rules turned off: full ids `pack/rule`, or `pack/*`."),
        key(
            "window_tokens",
            Shape::Integer { min: 1_000, max: 100_000_000 },
            "The context window in tokens; HOOKPACK_WINDOW_TOKENS overrides.",
        ),
        key(
            "brackets",
            Shape::Table(&BRACKET_THRESHOLDS),
            "Bracket thresholds, by remaining percent.",
        ),
        key("budget", Shape::Table(&BUDGET), "Tokens of injected context per bracket."),
        key("state", Shape::Table(&STATE_CONFIG), "Session state."),
        key("memory", Shape::Table(&MEMORY_CONFIG), "Memory capture and recall."),
        key("branch", Shape::Table(&BRANCH_CONFIG), "The git branch."),
    ],
};

static BRACKET_THRESHOLDS: Table = Table {
    what: "[brackets]",
    doc: "Remaining % at or above which each bracket starts; below `depleted` is critical.",
    keys: &[
        key("fresh", Shape::Integer { min: 0, max: 100 }, "Default 60."),
        key("moderate", Shape::Integer { min: 0, max: 100 }, "Default 40."),
        key("depleted", Shape::Integer { min: 0, max: 100 }, "Default 25."),
    ],
};

static BUDGET: Table = Table {
    what: "[budget]",
    doc: "Tokens of injected context per bracket (tokens ≈ characters / 4).",
    keys: &[
        key("fresh", Shape::Integer { min: 0, max: STRINGS_MAX }, "Default 800."),
        key("moderate", Shape::Integer { min: 0, max: STRINGS_MAX }, "Default 1500."),
        key("depleted", Shape::Integer { min: 0, max: STRINGS_MAX }, "Default 2000."),
        key("critical", Shape::Integer { min: 0, max: STRINGS_MAX }, "Default 2500."),
    ],
};

static STATE_CONFIG: Table = Table {
    what: "[state]",
    doc: "Session state.",
    keys: &[key(
        "max_age_days",
        Shape::Integer { min: 1, max: 3650 },
        "Sessions older than this are removed. Default 7.",
    )],
};

static BRANCH_CONFIG: Table = Table {
    what: "[branch]",
    doc: "The git branch.",
    keys: &[key(
        "issues",
        Shape::StringList,
        "Where `{issue}` is in a branch's name: templates matched against all of it, the first that matches giving the issue (`*` any text, `?` one character, `{number}` the digits there, `{key}` a tracker key such as `ABC-42`), e.g. [\"feature/{number}-*\", \"{key}-*\"]. Default: a key in capitals anywhere, else a number starting a `/` part. `[]`: branches carry no issue.",
    )],
};

static MEMORY_CONFIG: Table = Table {
    what: "[memory]",
    doc: "Memory capture and recall.",
    keys: &[
        key("namespaces", Shape::StringList, "Memory namespaces."),
        key(
            "aliases",
            Shape::Map(&Shape::String),
            "Marker shorthands: `decision = \"decisions\"` makes `[decision]` capture there.",
        ),
        key(
            "private_tags",
            Shape::StringList,
            "Tags whose content is never stored, default [\"private\"].",
        ),
        key(
            "max",
            Shape::Integer { min: 0, max: 10_000_000 },
            "At most this many memories are kept; past it, storing one removes the oldest, those pulled from a shared note before your own; a pull stores only what fits. 0: no limit. Default 20000.",
        ),
        key(
            "max_age_days",
            Shape::Integer { min: 0, max: 36_500 },
            "Memories older than this many days are removed as new ones are stored, and by `hookpack memory prune`. 0 (the default): kept however old.",
        ),
        key(
            "signals",
            Shape::Bool,
            "Whether `capture = { signal = true }` rules (the builtin memory pack's detector) are in force. Default true.",
        ),
        key(
            "auto",
            Shape::Number { min: 0.0, max: 1.0 },
            "A signal this sure or more is captured without asking. Default 0.85.",
        ),
        key(
            "suggest",
            Shape::Number { min: 0.0, max: 1.0 },
            "A signal this sure or more (and under `auto`) is suggested to the model, which keeps it by writing its marker. Default 0.7.",
        ),
        key(
            "max_signals",
            Shape::Integer { min: 0, max: 1000 },
            "The most signals one event captures or suggests (the surest). Default 10.",
        ),
        key(
            "share",
            Shape::StringList,
            "The namespaces `hookpack memory push | pull | sync` share through git notes. Default [\"decisions\", \"learnings\", \"patterns\"].",
        ),
    ],
};

/// Checks `table` against `shape`, recording every unknown key, missing key and wrong type.
pub(crate) fn check(
    source: &Arc<SourceFile>,
    table: &Spanned<DeTable<'_>>,
    shape: &Table,
    diags: &mut Diagnostics,
) {
    check_table(source, table.get_ref(), table.span(), shape, diags);
}

fn check_table(
    source: &Arc<SourceFile>,
    table: &DeTable<'_>,
    span: Range<usize>,
    shape: &Table,
    diags: &mut Diagnostics,
) {
    for (name, value) in table {
        match shape.keys.iter().find(|key| key.name == name.get_ref().as_ref()) {
            Some(key) => check_value(source, value, &key.shape, key.name, diags),
            None => {
                let hint = did_you_mean(name.get_ref(), shape.keys.iter().map(|k| k.name));
                diags.error(
                    source,
                    name.span(),
                    format!("unknown key `{}` in {}{hint}", name.get_ref(), shape.what),
                );
            }
        }
    }
    for key in shape.keys.iter().filter(|key| key.required) {
        if !table.contains_key(key.name) {
            let at = span.start..(span.start + 1).min(span.end.max(span.start + 1));
            diags.error(source, at, format!("{} has no `{}`", shape.what, key.name));
        }
    }
}

#[allow(clippy::too_many_lines, reason = "one arm per shape and value type")]
fn check_value(
    source: &Arc<SourceFile>,
    value: &Spanned<DeValue<'_>>,
    shape: &Shape,
    name: &str,
    diags: &mut Diagnostics,
) {
    let span = value.span();
    let mut wrong = |expected: &str| {
        diags.error(
            source,
            span.clone(),
            format!("`{name}` must be {expected}, not {}", describe(value.get_ref())),
        );
    };
    match (shape, value.get_ref()) {
        (Shape::String | Shape::Matching(_), DeValue::String(_))
        | (Shape::Bool, DeValue::Boolean(_))
        | (Shape::Payload, DeValue::Table(_))
        | (
            Shape::Scalars,
            DeValue::String(_) | DeValue::Integer(_) | DeValue::Float(_) | DeValue::Boolean(_),
        ) => {}
        (Shape::String | Shape::Matching(_), _) => wrong("a string"),
        (Shape::Bool, _) => wrong("true or false"),
        (Shape::Strings | Shape::Enums(_) | Shape::Enum(_), DeValue::String(_)) => {
            check_enum(source, value, shape, name, diags);
        }
        (
            Shape::Strings | Shape::StringList | Shape::NameList(_) | Shape::Enums(_),
            DeValue::Array(items),
        ) => {
            for item in &**items {
                if let DeValue::String(_) = item.get_ref() {
                    check_enum(source, item, shape, name, diags);
                } else {
                    diags.error(
                        source,
                        item.span(),
                        format!("`{name}` lists strings, not {}", describe(item.get_ref())),
                    );
                }
            }
        }
        (Shape::Strings, _) => wrong("a string or a list of strings"),
        (Shape::StringList | Shape::NameList(_), _) => wrong("a list of strings"),
        (Shape::Enum(values), _) => wrong(&format!("one of {}", quoted(values))),
        (Shape::Enums(values), _) if std::ptr::eq(*values, EVENT_NAMES) => {
            wrong("a hook event name or a list of them");
        }
        (Shape::Enums(values), _) => wrong(&format!("one or a list of {}", quoted(values))),
        (Shape::Integer { min, max }, DeValue::Integer(int)) => {
            match int.as_str().replace('_', "").parse::<i64>() {
                Ok(n) if (*min..=*max).contains(&n) => {}
                _ => diags.error(
                    source,
                    span,
                    format!("`{name}` must be from {min} to {max}, not {}", int.as_str()),
                ),
            }
        }
        (Shape::Integer { min, max }, _) => wrong(&format!("an integer from {min} to {max}")),
        (Shape::Number { min, max }, DeValue::Integer(_) | DeValue::Float(_)) => {
            match number(value.get_ref()) {
                Some(x) if x >= *min && x <= *max => {}
                _ => diags.error(
                    source,
                    span,
                    format!(
                        "`{name}` must be from {min} to {max}, not {}",
                        number(value.get_ref()).unwrap_or(f64::NAN)
                    ),
                ),
            }
        }
        (Shape::Number { min, max }, _) => wrong(&format!("a number from {min} to {max}")),
        (Shape::Table(table) | Shape::TableOrTables(table), DeValue::Table(inner)) => {
            check_table(source, inner, span, table, diags);
        }
        (Shape::Map(inner), DeValue::Table(entries)) => {
            for (entry, entry_value) in entries {
                check_value(source, entry_value, inner, entry.get_ref(), diags);
            }
        }
        (Shape::Table(_) | Shape::Map(_), _) => wrong("a table"),
        (Shape::Tables(table) | Shape::TableOrTables(table), DeValue::Array(items)) => {
            for item in &**items {
                match item.get_ref() {
                    DeValue::Table(inner) => check_table(source, inner, item.span(), table, diags),
                    other => diags.error(
                        source,
                        item.span(),
                        format!("`{name}` lists tables, not {}", describe(other)),
                    ),
                }
            }
        }
        (Shape::Tables(_), _) => wrong("an array of tables (`[[...]]`)"),
        (Shape::TableOrTables(_), _) => wrong("a table or a list of tables"),
        (Shape::Scalars, DeValue::Array(items)) => {
            for item in &**items {
                if matches!(
                    item.get_ref(),
                    DeValue::Array(_) | DeValue::Table(_) | DeValue::Datetime(_)
                ) {
                    diags.error(
                        source,
                        item.span(),
                        format!(
                            "`{name}` lists strings, numbers or booleans, not {}",
                            describe(item.get_ref())
                        ),
                    );
                }
            }
        }
        (Shape::Scalars, _) => wrong("a string, number, boolean or a list of them"),
        (Shape::Payload, _) => wrong("a table (the hook payload)"),
    }
}

fn check_enum(
    source: &Arc<SourceFile>,
    value: &Spanned<DeValue<'_>>,
    shape: &Shape,
    name: &str,
    diags: &mut Diagnostics,
) {
    let (Shape::Enum(values) | Shape::Enums(values)) = shape else { return };
    let Some(text) = value.get_ref().as_str() else { return };
    if values.contains(&text) {
        return;
    }
    let hint = did_you_mean(text, values.iter().copied());
    let what = if std::ptr::eq(*values, EVENT_NAMES) {
        "hook event".to_owned()
    } else {
        format!("`{name}` value")
    };
    diags.error(source, value.span(), format!("unknown {what} `{text}`{hint}"));
}

pub(crate) fn number(value: &DeValue<'_>) -> Option<f64> {
    match value {
        DeValue::Integer(n) => n.as_str().replace('_', "").parse().ok(),
        DeValue::Float(n) => n.as_str().replace('_', "").parse().ok(),
        _ => None,
    }
}

/// "a string", "an integer", … for messages.
pub(crate) fn describe(value: &DeValue<'_>) -> &'static str {
    match value {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

fn quoted(values: &[&str]) -> String {
    values.iter().map(|v| format!("`{v}`")).collect::<Vec<_>>().join(", ")
}

/// The closest of `candidates` to `typo`, if close enough to be what was meant.
pub(crate) fn suggestion<'a>(
    typo: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let typo_lower = typo.to_ascii_lowercase();
    candidates
        .map(|c| (distance(&typo_lower, &c.to_ascii_lowercase()), c))
        .filter(|&(d, c)| d <= (c.len().max(typo.len()) / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// The candidate at most `edits` edits from `typo` (ASCII case ignored), nearest first.
pub(crate) fn suggestion_within<'a>(
    typo: &str,
    candidates: impl Iterator<Item = &'a str>,
    edits: usize,
) -> Option<&'a str> {
    let typo_lower = typo.to_ascii_lowercase();
    candidates
        .map(|c| (distance(&typo_lower, &c.to_ascii_lowercase()), c))
        .filter(|&(d, _)| d <= edits)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// `"; did you mean `x`?"` for [`suggestion`]'s pick, or nothing.
pub(crate) fn did_you_mean<'a>(typo: &str, candidates: impl Iterator<Item = &'a str>) -> String {
    suggestion(typo, candidates).map(|s| format!("; did you mean `{s}`?")).unwrap_or_default()
}

/// Edit distance counting a swap of two neighbours as one edit (optimal string alignment), so
/// `Bsah` is one edit from `Bash`.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows: two back for the swap.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        row[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            row[j] = (previous[j - 1] + cost).min(row[j - 1] + 1).min(previous[j] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                row[j] = row[j].min(before[j - 2] + 1);
            }
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut row);
    }
    previous[b.len()]
}

/// The JSON Schema (draft-07, as taplo / Even Better TOML read it) of a file shaped `table`.
pub(crate) fn json_schema(table: &Table, id: &str) -> Value {
    let mut schema = table_schema(table);
    if let Value::Object(map) = &mut schema {
        let mut head = Map::new();
        head.insert("$schema".into(), "http://json-schema.org/draft-07/schema#".into());
        head.insert("$id".into(), id.into());
        head.extend(std::mem::take(map));
        *map = head;
    }
    schema
}

fn table_schema(table: &Table) -> Value {
    let mut properties = Map::new();
    for key in table.keys {
        let mut schema = shape_schema(&key.shape);
        if let Value::Object(map) = &mut schema {
            map.insert("description".into(), key.doc.into());
        }
        properties.insert(key.name.into(), schema);
    }
    let required: Vec<&str> = table.keys.iter().filter(|k| k.required).map(|k| k.name).collect();
    let mut schema = json!({
        "type": "object",
        "description": table.doc,
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

fn shape_schema(shape: &Shape) -> Value {
    let string_list = json!({ "type": "array", "items": { "type": "string" } });
    match shape {
        Shape::String => json!({ "type": "string" }),
        Shape::Matching(pattern) => json!({ "type": "string", "pattern": pattern }),
        Shape::Strings => json!({ "anyOf": [{ "type": "string" }, string_list] }),
        Shape::StringList => string_list,
        Shape::Enum(values) => json!({ "enum": values }),
        Shape::NameList(values) => json!({ "type": "array", "items": { "enum": values } }),
        Shape::Enums(values) => json!({
            "anyOf": [{ "enum": values }, { "type": "array", "items": { "enum": values } }]
        }),
        Shape::Integer { min, max } => json!({ "type": "integer", "minimum": min, "maximum": max }),
        Shape::Number { min, max } => json!({ "type": "number", "minimum": min, "maximum": max }),
        Shape::Bool => json!({ "type": "boolean" }),
        Shape::Table(table) => table_schema(table),
        Shape::Tables(table) => json!({ "type": "array", "items": table_schema(table) }),
        Shape::TableOrTables(table) => json!({
            "anyOf": [table_schema(table), { "type": "array", "items": table_schema(table) }]
        }),
        Shape::Map(inner) => {
            json!({ "type": "object", "additionalProperties": shape_schema(inner) })
        }
        Shape::Scalars => {
            let scalar = json!({ "type": ["string", "number", "boolean"] });
            json!({ "anyOf": [scalar, { "type": "array", "items": scalar }] })
        }
        Shape::Payload => json!({
            "type": "object",
            "properties": {
                "hook_event_name": {
                    "description": "The event, as Claude Code spells it.",
                    "enum": EVENT_NAMES,
                },
            },
            "required": ["hook_event_name"],
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swap_is_one_edit() {
        assert_eq!(distance("bsah", "bash"), 1);
        assert_eq!(distance("keyword", "keywords"), 1);
        assert_eq!(distance("", "abc"), 3);
        assert_eq!(distance("abc", ""), 3);
        assert_eq!(distance("kitten", "sitting"), 3);
        assert_eq!(distance("ca", "abc"), 3);
    }

    #[test]
    fn suggestions_catch_typos_only() {
        let keys = ["keywords", "keywords_all", "exclude", "regex"];
        assert_eq!(suggestion("keyword", keys.iter().copied()), Some("keywords"));
        assert_eq!(suggestion("Keywords", keys.iter().copied()), Some("keywords"));
        assert_eq!(suggestion("regx", keys.iter().copied()), Some("regex"));
        assert_eq!(suggestion("color", keys.iter().copied()), None);
        assert_eq!(suggestion("PreToolUs", EVENT_NAMES.iter().copied()), Some("PreToolUse"));
    }

    /// Every key of every table, with the table that holds it.
    fn keys_of(table: &'static Table, out: &mut Vec<(&'static str, &'static str)>) {
        for key in table.keys {
            out.push((table.what, key.name));
            let mut shape = &key.shape;
            while let Shape::Map(inner) = shape {
                shape = inner;
            }
            if let Shape::Table(inner) | Shape::Tables(inner) | Shape::TableOrTables(inner) = shape
            {
                keys_of(inner, out);
            }
        }
    }

    /// The pack language reference in the repository (`docs/reference.md`) names every key the
    /// parser takes: a key added to the shapes and not documented fails here.
    #[test]
    fn the_reference_names_every_key() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/reference.md");
        let reference = std::fs::read_to_string(path).unwrap();
        let mut keys = Vec::new();
        keys_of(&PACK_FILE, &mut keys);
        keys_of(&CONFIG_FILE, &mut keys);
        let missing: Vec<String> = keys
            .iter()
            .filter(|(_, name)| {
                let forms = [
                    format!("`{name}`"),
                    format!("{name} ="),
                    format!("[{name}]"),
                    format!("[[{name}]]"),
                    format!("[{name}] "),
                ];
                !forms.iter().any(|form| reference.contains(form.as_str()))
            })
            .map(|(table, name)| format!("`{name}` ({table})"))
            .collect();
        assert!(missing.is_empty(), "docs/reference.md does not name: {}", missing.join(", "));
    }
}
