//! Reading one pack file: TOML → [`Pack`], with every problem reported. `mod.rs` reads the
//! pack and its tables; `rule` a rule's id, events and conditions; `actions` its actions, each
//! checked against the events it answers; `test` its `[[test]]` cases.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use hook_model::EventKind;
use serde_json::Value;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::model::{Automaton, Bracket, Decision, ExpectedCapture, Pack, StateSet, ToolMatcher};
use crate::shape;
use crate::{Diagnostic, Diagnostics, Severity, SourceFile};

mod actions;
mod rule;
mod test;

use actions::Applicability;

type Item<'i> = Spanned<DeValue<'i>>;

/// Parses and checks one pack. `dir` is the folder `context_file` paths are relative to, and
/// that they must stay in. Returns the pack when it has no errors; every problem is in the
/// diagnostics either way.
pub fn parse_pack(source: &Arc<SourceFile>, dir: &Path) -> (Option<Pack>, Diagnostics) {
    parse_pack_in(source, Some(PackFolder { dir, root: dir }))
}

/// Where a pack's `context_file`s are.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PackFolder<'a> {
    /// The folder their paths are relative to: the pack's.
    pub(crate) dir: &'a Path,
    /// The folder they must stay in: the pack's scope's (`.claude/hookpack/`, the user's
    /// `~/.config/hookpack/`).
    pub(crate) root: &'a Path,
}

/// [`parse_pack`] of a pack in `folder`; `None` for an embedded (builtin) pack, which has no
/// files to read.
pub(crate) fn parse_pack_in(
    source: &Arc<SourceFile>,
    folder: Option<PackFolder<'_>>,
) -> (Option<Pack>, Diagnostics) {
    let mut diags = Diagnostics::default();
    let (document, errors) = DeTable::parse_recoverable(source.text());
    // Only the first: the parser reads on past a syntax error, and what it finds after one
    // (a missing `]`, say) is mostly that error again.
    if let Some(error) = errors.first() {
        let span = error.span().unwrap_or(0..0);
        let message = format!("invalid TOML: {}", error.message());
        let mut diagnostic = Diagnostic::new(Severity::Error, source, span, message);
        if errors.len() > 1 {
            let more = match errors.len() - 1 {
                1 => "1 more syntax error follows".to_owned(),
                n => format!("{n} more syntax errors follow"),
            };
            diagnostic = diagnostic.note(format!(
                "the rest of the file is checked once this is fixed ({more} from it or after it)"
            ));
        }
        diags.add(diagnostic);
        return (None, diags);
    }
    shape::check(source, &document, &shape::PACK_FILE, &mut diags);

    let mut reader = Reader {
        source,
        folder,
        diags: &mut diags,
        context_files: Vec::new(),
        automata: Vec::new(),
    };
    let pack = reader.pack(document.get_ref());
    let pack = pack.filter(|_| !diags.has_errors());
    (pack, diags)
}

struct Reader<'a> {
    source: &'a Arc<SourceFile>,
    folder: Option<PackFolder<'a>>,
    diags: &'a mut Diagnostics,
    context_files: Vec<std::path::PathBuf>,
    /// The automata of the rule being read.
    automata: Vec<Automaton>,
}

impl Reader<'_> {
    fn error(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.diags.error(self.source, span, message);
    }

    fn warning(&mut self, span: Range<usize>, message: impl Into<String>) {
        self.diags.warning(self.source, span, message);
    }

    fn pack(&mut self, doc: &DeTable<'_>) -> Option<Pack> {
        let meta = table(doc, "pack")?;
        let (name, name_span) = string(meta, "name")?;
        if !is_pack_name(name) {
            self.error(name_span, format!("pack name `{name}` must match {}", shape::PACK_NAME));
        }
        let tables = keyword_tables(doc);

        let mut rules = Vec::new();
        let mut seen: BTreeMap<String, Range<usize>> = BTreeMap::new();
        for item in tables_of(doc, "rule") {
            let Some(rule) = self.rule(name, item, &tables) else { continue };
            if let Some(first) = seen.get(&rule.id) {
                let message = format!("duplicate rule id `{}`", rule.id);
                let diagnostic = Diagnostic::new(Severity::Error, self.source, rule.span, message)
                    .note_at(self.source, first.clone(), "first defined here");
                self.diags.add(diagnostic);
                continue;
            }
            seen.insert(rule.id.clone(), rule.span.clone());
            rules.push(rule);
        }

        let tests: Vec<_> = tables_of(doc, "test").filter_map(|item| self.test(item)).collect();
        // A near miss naming a rule of this pack that is not there passes, proving nothing.
        for test in &tests {
            for id in &test.expect.not_rules {
                let Some(rule) = id.strip_prefix(name).and_then(|r| r.strip_prefix('/')) else {
                    continue;
                };
                if rules.iter().any(|r: &crate::Rule| r.id == rule) {
                    continue;
                }
                let hint = shape::did_you_mean(rule, rules.iter().map(|r| r.id.as_str()));
                self.warning(
                    test.span.clone(),
                    format!(
                        "test `{}`: `not_rules` names `{id}`, which this pack does not have{hint}",
                        test.name
                    ),
                );
            }
        }
        Some(Pack {
            name: name.to_owned(),
            description: string(meta, "description").map(|(s, _)| s.to_owned()),
            version: string(meta, "version").map(|(s, _)| s.to_owned()),
            rules,
            tests,
            source: self.source.clone(),
            context_files: std::mem::take(&mut self.context_files),
        })
    }

    fn tool(&mut self, value: &Item<'_>) -> Option<ToolMatcher> {
        let (matcher, span) = str_item(value)?;
        let matcher = matcher.trim();
        if matcher.is_empty() || matcher == "*" {
            return None;
        }
        if matcher.chars().all(|c| c.is_ascii_alphanumeric() || "_-|, ".contains(c)) {
            let names: Vec<String> = matcher
                .split(['|', ','])
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned)
                .collect();
            for name in &names {
                self.tool_name_case(name, span.clone());
            }
            return Some(ToolMatcher::Names(names));
        }
        if !self.regex(matcher, span.clone(), "tool matcher regex") {
            return None;
        }
        self.tool_regex_case(matcher, span);
        Some(ToolMatcher::Regex(matcher.to_owned()))
    }

    /// Warns about each `{name}` in a context or message that is a typo of a variable
    /// (`{brnach}`): it would stay as written. Braces naming nothing close (JSON, code) are text.
    fn variable_typos(&mut self, value: &Item<'_>) {
        let Some((text, span)) = str_item(value) else { return };
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let name_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'));
            rest = after;
            let Some(len) = name_len.filter(|&len| len > 0 && after[len..].starts_with('}')) else {
                continue;
            };
            let name = &after[..len];
            if hook_engine::text::VARS.contains(&name) {
                continue;
            }
            if let Some(meant) =
                shape::suggestion_within(name, hook_engine::text::VARS.iter().copied(), 2)
            {
                self.warning(
                    span.clone(),
                    format!("`{{{name}}}` is no variable and stays as written; did you mean `{{{meant}}}`?"),
                );
            }
        }
    }

    /// Warns when a tool regex matches no tool Claude Code has (nor an MCP tool named like one)
    /// but would in another case: `^(bash|write)$` never matches a call.
    fn tool_regex_case(&mut self, matcher: &str, span: Range<usize>) {
        let build = |insensitive| {
            regex::RegexBuilder::new(matcher)
                .case_insensitive(insensitive)
                .size_limit(1 << 20)
                .build()
        };
        let (Ok(exact), Ok(any_case)) = (build(false), build(true)) else { return };
        if hook_model::known_tool_names().any(|k| exact.is_match(k)) {
            return;
        }
        let meant: Vec<&str> =
            hook_model::known_tool_names().filter(|k| any_case.is_match(k)).collect();
        // `.*search.*` is meant for MCP tools (`mcp__brave__web_search`), not for `WebSearch`.
        let mcp = |tool: &&str| {
            let lower = tool.to_ascii_lowercase();
            exact.is_match(&format!("mcp__server__{lower}"))
                || exact.is_match(&format!("mcp__{lower}__{lower}"))
        };
        if !meant.is_empty() && !meant.iter().any(mcp) {
            self.warning(
                span,
                format!(
                    "tool matcher `{matcher}` matches no tool Claude Code has: tool names are \
                     case-sensitive (`{}`)",
                    meant.join("`, `")
                ),
            );
        }
    }

    /// Warns when `name` is a tool Claude Code has spelled in another case (tool names are
    /// matched exactly, so `bash` never matches a `Bash` call), or one or two letters off one.
    fn tool_name_case(&mut self, name: &str, span: Range<usize>) {
        if name.starts_with("mcp__") || hook_model::known_tool_names().any(|k| k == name) {
            return;
        }
        if let Some(right) = hook_model::known_tool_names().find(|k| k.eq_ignore_ascii_case(name)) {
            self.warning(
                span,
                format!(
                    "tool `{name}` matches no call: tool names are case-sensitive; did you mean \
                     `{right}`?"
                ),
            );
            return;
        }
        // Other names may be tools of a newer Claude Code or of an SDK host: only a name a typo
        // away from a known one is said.
        let edits = if name.len() >= 8 { 2 } else { 1 };
        if let Some(right) = shape::suggestion_within(name, hook_model::known_tool_names(), edits) {
            self.warning(
                span,
                format!("tool `{name}` is no tool Claude Code has; did you mean `{right}`?"),
            );
        }
    }

    /// Checks that `pattern` is a valid regex that can be precompiled; warns where its word
    /// boundaries, which hookpack evaluates as ASCII ones, meet non-ASCII text it names.
    fn regex(&mut self, pattern: &str, span: Range<usize>, what: &str) -> bool {
        if let Err(err) = regex::RegexBuilder::new(pattern).size_limit(1 << 20).build() {
            self.error(span, format!("invalid {what}: {}", regex_error(&err)));
            return false;
        }
        if !self.automaton(pattern, span.clone(), false) {
            return false;
        }
        // `"\b"` in a double-quoted TOML string is a backspace, which no text holds; a regex meant
        // a word boundary. (Tabs, line ends and escape characters are text a regex may look for.)
        let control = pattern.chars().find(|&c| {
            c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{1b}') && c != '\u{8}'
        });
        if let Some(c) = control {
            self.warning(
                span.clone(),
                format!(
                    "{what} holds the control character U+{:04X}, which no prompt, command or path \
                     has: a TOML escape (`\\f`, `\\u…`) in a double-quoted string; write the \
                     regex in single quotes ('…') to keep its backslashes",
                    u32::from(c)
                ),
            );
        }
        if pattern.contains('\u{8}') {
            self.warning(
                span.clone(),
                format!(
                    "{what} holds a backspace (U+0008), which no text has: in a double-quoted TOML \
                     string `\\b` is a backspace; write the regex in single quotes ('\\bnpm') for a \
                     word boundary"
                ),
            );
        }
        // Only letters and digits matter: `\b` next to `’` is right either way.
        let non_ascii_letter = pattern.chars().any(|c| !c.is_ascii() && c.is_alphanumeric());
        if (pattern.contains(r"\b") || pattern.contains(r"\B")) && non_ascii_letter {
            self.warning(
                span,
                format!(
                    "`\\b` in `{pattern}` is an ASCII word boundary: next to a non-ASCII letter it \
                     acts as if the letter were not one (`keywords` match at Unicode word boundaries)"
                ),
            );
        }
        true
    }

    /// Precompiles the DFA of a glob or a regex (already checked to parse) and records its size
    /// for the artifact's budget; whether it could be.
    fn automaton(&mut self, pattern: &str, span: Range<usize>, glob: bool) -> bool {
        let dfa =
            if glob { crate::emit::glob_dfa(pattern) } else { crate::emit::regex_dfa(pattern) };
        match dfa {
            Ok(bytes) => {
                let bytes = bytes.len();
                self.automata.push(Automaton { pattern: pattern.to_owned(), glob, bytes, span });
                true
            }
            Err(err) => {
                self.error(span, err.to_string());
                false
            }
        }
    }

    fn terms(
        &mut self,
        key: &str,
        value: &Item<'_>,
        tables: &BTreeMap<String, Vec<String>>,
    ) -> Vec<String> {
        let mut terms = Vec::new();
        for (term, span) in strings(value) {
            if let Some(name) = term.strip_prefix('$') {
                match tables.get(name) {
                    Some(table) => {
                        terms.extend(table.iter().filter(|t| !t.trim().is_empty()).cloned());
                    }
                    None => {
                        let hint = shape::suggestion(name, tables.keys().map(String::as_str))
                            .map(|s| format!("; did you mean `${s}`?"))
                            .unwrap_or_default();
                        self.error(span, format!("`{key}` uses the keyword table `${name}`, which is not defined in [keywords]{hint}"));
                    }
                }
            } else if term.trim().is_empty() {
                self.error(span, format!("`{key}` has an empty term"));
            } else {
                terms.push(term.to_owned());
            }
        }
        terms
    }
}

fn keyword_tables(doc: &DeTable<'_>) -> BTreeMap<String, Vec<String>> {
    let mut tables = BTreeMap::new();
    let Some(keywords) = table(doc, "keywords") else { return tables };
    for (name, value) in keywords {
        let terms: Vec<String> = strings(value).into_iter().map(|(t, _)| t.to_owned()).collect();
        tables.insert(name.get_ref().to_string(), terms);
    }
    tables
}

/// `path` as a path relative to the project that stays inside it (`.` components dropped), or
/// `None`: empty, absolute, from the home folder (`~`), or climbing out (`..`).
fn project_path(path: &str) -> Option<String> {
    use std::path::Component;
    if path.starts_with('~') {
        return None;
    }
    let mut parts = Vec::new();
    for component in std::path::Path::new(path).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?),
            Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

const DECISIONS_HELP: &str = "PreToolUse takes allow, ask or deny; PermissionRequest allow or deny; UserPromptSubmit, UserPromptExpansion, PostToolUse, PostToolBatch, Stop, SubagentStop, TaskCreated, TaskCompleted, TeammateIdle, ConfigChange and PreCompact take block";

fn decision_applies(decision: Decision, kind: EventKind) -> bool {
    match decision {
        Decision::Allow => matches!(kind, EventKind::PreToolUse | EventKind::PermissionRequest),
        Decision::Deny => matches!(kind, EventKind::PreToolUse | EventKind::PermissionRequest),
        Decision::Ask => kind == EventKind::PreToolUse,
        Decision::Block => kind.accepts_block_decision(),
    }
}

fn bracket(text: &str) -> Option<Bracket> {
    match text {
        "fresh" => Some(Bracket::Fresh),
        "moderate" => Some(Bracket::Moderate),
        "depleted" => Some(Bracket::Depleted),
        "critical" => Some(Bracket::Critical),
        _ => None,
    }
}

fn state_set(table: &DeTable<'_>) -> StateSet {
    let text = |key| table.get(key).and_then(|v| v.get_ref().as_str()).map(str::to_owned);
    StateSet {
        agent: text("agent"),
        workflow: text("workflow"),
        task: text("task"),
        flags: table
            .get("flags")
            .map(|v| strings(v).into_iter().map(|(s, _)| s.to_owned()).collect())
            .unwrap_or_default(),
    }
}

/// Whether `name` is a valid pack name (`^[a-z][a-z0-9-]*$`).
pub fn is_pack_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// Whether `id` is a valid rule id within a pack (`^[a-z0-9][a-z0-9_-]*$`).
pub fn is_rule_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
}

fn is_star_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn table<'t, 'i>(doc: &'t DeTable<'i>, key: &str) -> Option<&'t DeTable<'i>> {
    doc.get(key)?.get_ref().as_table()
}

fn tables_of<'t, 'i>(doc: &'t DeTable<'i>, key: &str) -> impl Iterator<Item = &'t Item<'i>> {
    doc.get(key).and_then(|v| v.get_ref().as_array()).into_iter().flat_map(|items| items.iter())
}

/// `[{ namespace = "…", text = "…" }, …]` as (namespace, text) pairs (the shape is checked).
fn memories(value: &DeValue<'_>) -> Vec<(String, String)> {
    expected_captures(value).into_iter().map(|m| (m.namespace, m.text)).collect()
}

/// `expect.captures`: each memory's namespace, text and (optional) confidence.
pub(super) fn expected_captures(value: &DeValue<'_>) -> Vec<ExpectedCapture> {
    let DeValue::Array(items) = value else { return Vec::new() };
    items
        .iter()
        .filter_map(|item| {
            let table = item.get_ref().as_table()?;
            let text = |key| string(table, key).map_or_else(String::new, |(s, _)| s.to_owned());
            Some(ExpectedCapture {
                namespace: text("namespace"),
                text: text("text"),
                confidence: table.get("confidence").and_then(|v| shape::number(v.get_ref())),
            })
        })
        .collect()
}

fn string<'t>(table: &'t DeTable<'_>, key: &str) -> Option<(&'t str, Range<usize>)> {
    str_item(table.get(key)?)
}

fn str_item<'t>(value: &'t Item<'_>) -> Option<(&'t str, Range<usize>)> {
    Some((value.get_ref().as_str()?, value.span()))
}

/// A string, or the strings of a list (other items were reported by the shape check).
fn strings<'t>(value: &'t Item<'_>) -> Vec<(&'t str, Range<usize>)> {
    match value.get_ref() {
        DeValue::String(text) => vec![(text.as_ref(), value.span())],
        DeValue::Array(items) => items.iter().filter_map(str_item).collect(),
        _ => Vec::new(),
    }
}

fn integer(value: &Item<'_>) -> Option<i64> {
    match value.get_ref() {
        DeValue::Integer(n) => n.as_str().replace('_', "").parse().ok(),
        _ => None,
    }
}

fn scalar(value: &DeValue<'_>) -> Option<Value> {
    match value {
        DeValue::String(s) => Some(Value::from(s.as_ref())),
        DeValue::Boolean(b) => Some(Value::from(*b)),
        DeValue::Integer(_) | DeValue::Float(_) => {
            let text = match value {
                DeValue::Integer(n) => n.as_str().replace('_', ""),
                DeValue::Float(n) => n.as_str().replace('_', ""),
                _ => unreachable!(),
            };
            serde_json::from_str(&text).ok()
        }
        _ => None,
    }
}

/// A TOML value as JSON (date-times as their text).
pub(crate) fn to_json(value: &DeValue<'_>) -> Value {
    match value {
        DeValue::Array(items) => Value::Array(items.iter().map(|v| to_json(v.get_ref())).collect()),
        DeValue::Table(table) => Value::Object(
            table.iter().map(|(k, v)| (k.get_ref().to_string(), to_json(v.get_ref()))).collect(),
        ),
        DeValue::Datetime(datetime) => Value::from(datetime.to_string()),
        other => scalar(other).unwrap_or(Value::Null),
    }
}

fn regex_error(err: &regex::Error) -> String {
    // regex's messages span lines (the pattern, a caret, then the error); keep the error.
    let text = err.to_string();
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(&text);
    last.trim().trim_start_matches("error: ").to_owned()
}

fn glob_error(err: &globset::Error) -> String {
    err.kind().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::unwrap_used, reason = "a test that cannot unwrap has failed")]
    fn builtin_packs_read_no_files() {
        let text = "[pack]\nname = \"b\"\n\n[[rule]]\nid = \"r\"\non = \"SessionStart\"\ncontext_file = \"Cargo.toml\"\n";
        let source = Arc::new(SourceFile::new("<builtin>/b.toml", text));
        let (pack, diagnostics) = parse_pack_in(&source, None);
        assert!(pack.is_none());
        let rendered = diagnostics.render();
        assert!(
            rendered.starts_with("<builtin>/b.toml:7:16: error: context_file `Cargo.toml` cannot be read: a builtin pack is embedded"),
            "{rendered}"
        );
    }

    /// The patterns the schema gives editors say what the reader accepts.
    #[test]
    #[allow(clippy::unwrap_used, reason = "a test that cannot unwrap has failed")]
    fn names_and_ids_are_what_the_schema_patterns_say() {
        let pack_name = regex::Regex::new(shape::PACK_NAME).unwrap();
        let rule_id = regex::Regex::new(shape::RULE_ID).unwrap();
        let samples = [
            "",
            "a",
            "z9",
            "guard",
            "guard-cloud",
            "my_pack",
            "My",
            "9lives",
            "-a",
            "_a",
            "a_b",
            "a-b_c",
            "a b",
            "a/b",
            "a.b",
            "\u{e9}t\u{e9}",
            "a\n",
            "\na",
            "a\u{212a}",
        ];
        for sample in samples {
            assert_eq!(is_pack_name(sample), pack_name.is_match(sample), "pack name {sample:?}");
            assert_eq!(is_rule_id(sample), rule_id.is_match(sample), "rule id {sample:?}");
        }
    }
}
