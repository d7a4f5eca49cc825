//! Reading one pack file: TOML → [`Pack`], with every problem reported.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use hook_model::EventKind;
use serde_json::Value;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use crate::model::{
    Actions, Automaton, Bracket, Capture, Conditions, Decision, Expectation, FieldCondition, Given,
    Layer, Once, Pack, PackTest, RecallFrom, RecallSpec, Rule, StateSet, StateUnset, ToolMatcher,
};
use crate::{Diagnostics, SourceFile};
use crate::{files, shape};

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
    for error in &errors {
        let span = error.span().unwrap_or(0..0);
        diags.error(source, span, format!("invalid TOML: {}", error.message()));
    }
    if !errors.is_empty() {
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
            self.error(name_span, format!("pack name `{name}` must match ^[a-z][a-z0-9-]*$"));
        }
        let tables = keyword_tables(doc);

        let mut rules = Vec::new();
        let mut seen: BTreeMap<String, Range<usize>> = BTreeMap::new();
        for item in tables_of(doc, "rule") {
            let Some(rule) = self.rule(name, item, &tables) else { continue };
            if let Some(first) = seen.get(&rule.id) {
                let (line, _) = self.source.line_col(first.start);
                self.error(
                    rule.span.clone(),
                    format!("duplicate rule id `{}` (first defined on line {line})", rule.id),
                );
                continue;
            }
            seen.insert(rule.id.clone(), rule.span.clone());
            rules.push(rule);
        }

        let tests = tables_of(doc, "test").filter_map(|item| self.test(item)).collect();
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

    #[allow(clippy::too_many_lines, reason = "one block per key of the rule language")]
    fn rule(
        &mut self,
        pack: &str,
        item: &Item<'_>,
        tables: &BTreeMap<String, Vec<String>>,
    ) -> Option<Rule> {
        let DeValue::Table(rule) = item.get_ref() else { return None };
        let (id, id_span) = string(rule, "id")?;
        if !is_rule_id(id) {
            self.error(id_span.clone(), format!("rule id `{id}` must match ^[a-z0-9][a-z0-9_-]*$"));
        }
        let mut on = Vec::new();
        for (name, _) in strings(rule.get("on")?) {
            if let Some(kind) = EventKind::from_name(name).filter(|k| !on.contains(k)) {
                on.push(kind);
            }
        }
        if matches!(rule.get("on")?.get_ref(), DeValue::Array(items) if items.is_empty()) {
            self.error(
                rule.get("on")?.span(),
                format!("rule `{id}` answers no event: `on` is empty"),
            );
        }

        let mut check = Applicability { reader: self, rule, id, on: &on };
        let mut when = Conditions::default();

        if let Some(tool) = check.key("tool", EventKind::is_tool_event, "tool events") {
            when.tool = check.reader.tool(tool);
        }
        if let Some(paths) = check.key("paths", EventKind::is_tool_event, "tool events") {
            for (glob, span) in strings(paths) {
                let (excluded, pattern) = match glob.strip_prefix('!') {
                    Some(pattern) => (true, pattern),
                    None => (false, glob),
                };
                if let Err(err) = globset::GlobBuilder::new(pattern).literal_separator(true).build()
                {
                    check
                        .reader
                        .error(span, format!("invalid glob `{pattern}`: {}", glob_error(&err)));
                } else if check.reader.automaton(pattern, span, true) {
                    if excluded {
                        when.paths_excluded.push(pattern.to_owned());
                    } else {
                        when.paths.push(pattern.to_owned());
                    }
                }
            }
            if strings(paths).is_empty() {
                check
                    .reader
                    .warning(paths.span(), format!("rule `{id}` never fires: `paths` is empty"));
            }
        }

        when.field = rule.get("field").and_then(|v| {
            let (path, span) = str_item(v)?;
            if path.is_empty() || path.split('.').any(str::is_empty) {
                check.reader.error(
                    span,
                    format!(
                        "`field` must be a dotted path such as `tool_input.command`, not `{path}`"
                    ),
                );
            }
            Some(path.to_owned())
        });
        let has_field = when.field.is_some();
        let text_events =
            move |kind: EventKind| has_field || hook_engine::text::has_default_text(kind);
        let text_what = "events with a default text (or give `field`)";
        for key in ["keywords", "keywords_all", "exclude"] {
            if let Some(value) = check.key(key, text_events, text_what) {
                let terms = check.reader.terms(key, value, tables);
                if strings(value).is_empty() {
                    when.never |= key != "exclude";
                    let message = if key == "exclude" {
                        format!("`exclude` of rule `{id}` is empty and excludes nothing")
                    } else {
                        format!("rule `{id}` never fires: `{key}` has no terms")
                    };
                    check.reader.warning(value.span(), message);
                }
                match key {
                    "keywords" => when.keywords = terms,
                    "keywords_all" => when.keywords_all = terms,
                    _ => when.exclude = terms,
                }
            }
        }
        if let Some(value) = check.key("regex", text_events, text_what) {
            for (pattern, span) in strings(value) {
                if check.reader.regex(pattern, span, "regex") {
                    when.regex.push(pattern.to_owned());
                }
            }
        }
        if let Some(value) = check.key("command", text_events, text_what) {
            let tables: Vec<&Item<'_>> = match value.get_ref() {
                DeValue::Array(items) => items.iter().collect(),
                _ => vec![value],
            };
            for table in tables {
                let DeValue::Table(keys) = table.get_ref() else { continue };
                let list = |key: &str| -> Vec<String> {
                    keys.get(key)
                        .map(|v| strings(v).into_iter().map(|(s, _)| s.to_owned()).collect())
                        .unwrap_or_default()
                };
                let pattern = hook_engine::command::Pattern {
                    program: list("program"),
                    subcommand: list("subcommand")
                        .iter()
                        .flat_map(|s| s.split_whitespace().map(str::to_owned))
                        .collect(),
                    flags: list("flags"),
                    args: list("args"),
                    writes: list("writes"),
                    piped_from: list("piped_from"),
                };
                match hook_engine::command::problem(&pattern) {
                    Some(problem) => {
                        check.reader.error(table.span(), format!("{problem} (rule `{id}`)"));
                    }
                    None => when.command.push(pattern),
                }
            }
            if when.command.is_empty()
                && matches!(value.get_ref(), DeValue::Array(items) if items.is_empty())
            {
                when.never = true;
                check
                    .reader
                    .warning(value.span(), format!("rule `{id}` never fires: `command` is empty"));
            }
        }
        if let Some(value) =
            check.key("star", |k| k == EventKind::UserPromptSubmit, "UserPromptSubmit")
        {
            for (name, span) in strings(value) {
                let name = name.strip_prefix('*').unwrap_or(name);
                if is_star_name(name) {
                    when.star.push(name.to_ascii_lowercase());
                } else {
                    check
                        .reader
                        .error(span, format!("star-command `{name}` must match [a-z][a-z0-9_-]*"));
                }
            }
        }
        for (key, events, what) in FIELD_SHORTHANDS {
            if let Some(value) = check.key(key, events, what) {
                let values = strings(value).into_iter().map(|(s, _)| Value::from(s)).collect();
                when.fields.push(FieldCondition { path: (*key).to_owned(), values });
            }
        }
        if let Some(DeValue::Table(fields)) = rule.get("fields").map(Spanned::get_ref) {
            for (path, value) in fields {
                if path.get_ref().split('.').any(str::is_empty) {
                    check.reader.error(
                        path.span(),
                        format!("`fields` key `{}` is not a dotted path", path.get_ref()),
                    );
                }
                let values = match value.get_ref() {
                    DeValue::Array(items) => {
                        items.iter().filter_map(|v| scalar(v.get_ref())).collect()
                    }
                    other => scalar(other).into_iter().collect(),
                };
                when.fields.push(FieldCondition { path: path.get_ref().to_string(), values });
            }
        }
        if let Some(value) = rule.get("bracket") {
            when.bracket = strings(value).into_iter().filter_map(|(b, _)| bracket(b)).collect();
            if when.bracket.is_empty() {
                check
                    .reader
                    .warning(value.span(), format!("rule `{id}` never fires: `bracket` is empty"));
            }
        }
        for (key, list) in [
            ("agent", &mut when.agent),
            ("workflow", &mut when.workflow),
            ("task", &mut when.task),
            ("flags", &mut when.flags),
            ("not_flags", &mut when.not_flags),
            ("permission_mode", &mut when.permission_mode),
        ] {
            if let Some(value) = rule.get(key) {
                *list = strings(value).into_iter().map(|(s, _)| s.to_owned()).collect();
                if list.is_empty() && key != "flags" && key != "not_flags" {
                    when.never = true;
                    check.reader.warning(
                        value.span(),
                        format!("rule `{id}` never fires: `{key}` is empty"),
                    );
                }
            }
        }
        if let Some(value) =
            check.key("every", |k| k == EventKind::UserPromptSubmit, "UserPromptSubmit")
        {
            let n = integer(value).unwrap_or(1);
            if n == 0 {
                when.never = true;
                check.reader.warning(value.span(), format!("rule `{id}` never fires: `every = 0`"));
            }
            when.every = u32::try_from(n).ok();
        }
        check.contradictions(&mut when);

        let then = check.actions(&when);
        let has_action = then.context.is_some()
            || rule.contains_key("context_file")
            || rule.contains_key("decision")
            || then.decision.is_some()
            || then.message.is_some()
            || rule.contains_key("stop")
            || rule.contains_key("session_title")
            || rule.contains_key("watch_paths")
            || rule.contains_key("rewrite")
            || then.set != StateSet::default()
            || then.unset != StateUnset::default()
            || then.capture.is_some()
            || then.recall.is_some();
        if !has_action {
            self.warning(
                id_span.clone(),
                format!("rule `{id}` has no action: it does nothing when it fires"),
            );
        }
        Some(Rule {
            pack: pack.to_owned(),
            id: id.to_owned(),
            on,
            when,
            then,
            span: id_span,
            automata: std::mem::take(&mut self.automata),
        })
    }

    fn tool(&mut self, value: &Item<'_>) -> Option<ToolMatcher> {
        let (matcher, span) = str_item(value)?;
        let matcher = matcher.trim();
        if matcher.is_empty() || matcher == "*" {
            return None;
        }
        if matcher.chars().all(|c| c.is_ascii_alphanumeric() || "_-|, ".contains(c)) {
            let names = matcher.split(['|', ',']).map(str::trim).filter(|n| !n.is_empty());
            return Some(ToolMatcher::Names(names.map(str::to_owned).collect()));
        }
        self.regex(matcher, span, "tool matcher regex")
            .then(|| ToolMatcher::Regex(matcher.to_owned()))
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
        if (pattern.contains(r"\b") || pattern.contains(r"\B")) && !pattern.is_ascii() {
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

    fn test(&mut self, item: &Item<'_>) -> Option<PackTest> {
        let DeValue::Table(test) = item.get_ref() else { return None };
        let (name, span) = string(test, "name")?;
        let event = test.get("event")?;
        let payload = to_json(event.get_ref());
        let kind = match payload.get("hook_event_name") {
            Some(Value::String(event_name)) => match EventKind::from_name(event_name) {
                Some(kind) => kind,
                None => {
                    let hint = shape::suggestion(event_name, shape::EVENT_NAMES.iter().copied())
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default();
                    self.error(
                        event.span(),
                        format!("test `{name}`: unknown hook event `{event_name}`{hint}"),
                    );
                    return None;
                }
            },
            _ => {
                self.error(
                    event.span(),
                    format!("test `{name}`: `event` has no `hook_event_name`"),
                );
                return None;
            }
        };
        let expect = test.get("expect").and_then(|e| e.get_ref().as_table())?;
        let mut expectation = Expectation::default();
        if let Some((decision, _)) = string(expect, "decision") {
            expectation.decision = Some(Decision::from_name(decision));
        }
        if let Some(rules) = expect.get("rules") {
            let mut ids = Vec::new();
            for (id, span) in strings(rules) {
                match id.split_once('/') {
                    Some((pack, rule)) if is_pack_name(pack) && is_rule_id(rule) => {
                        ids.push(id.to_owned());
                    }
                    _ => self.error(
                        span,
                        format!("test `{name}`: `{id}` is not a full rule id `pack/rule`"),
                    ),
                }
            }
            expectation.rules = Some(ids);
        }
        let list = |key| {
            expect.get(key).map(|v| strings(v).into_iter().map(|(s, _)| s.to_owned()).collect())
        };
        expectation.context_contains = list("context_contains").unwrap_or_default();
        expectation.context_excludes = list("context_excludes").unwrap_or_default();
        expectation.answer_contains = list("answer_contains").unwrap_or_default();
        expectation.answer_excludes = list("answer_excludes").unwrap_or_default();
        expectation.state = expect.get("state").and_then(|v| v.get_ref().as_table()).map(state_set);
        expectation.bracket = string(expect, "bracket").and_then(|(b, _)| bracket(b));
        expectation.not_flags = list("not_flags").unwrap_or_default();
        expectation.captures = expect.get("captures").map(|v| memories(v.get_ref()));
        let mut given = Given::default();
        if let Some(table) = test.get("given").and_then(|g| g.get_ref().as_table()) {
            given.state = state_set(table);
            let count = |key| table.get(key).and_then(integer).unwrap_or(0);
            given.prompts = u64::try_from(count("prompts")).unwrap_or(0);
            given.compactions = u32::try_from(count("compactions")).unwrap_or(0);
            given.bracket =
                string(table, "bracket").and_then(|(b, _)| bracket(b)).unwrap_or_default();
            given.injected = table
                .get("injected")
                .map(|v| strings(v).into_iter().map(|(s, _)| s.to_owned()).collect())
                .unwrap_or_default();
            given.memories =
                table.get("memories").map(|v| memories(v.get_ref())).unwrap_or_default();
        }
        Some(PackTest {
            name: name.to_owned(),
            event: payload,
            kind,
            given,
            expect: expectation,
            span,
        })
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

/// `source`, `trigger`, … : exact payload values, each on the events whose payload has it.
#[allow(clippy::type_complexity, reason = "a table of (key, events, their description)")]
const FIELD_SHORTHANDS: &[(&str, fn(EventKind) -> bool, &str)] = &[
    (
        "source",
        |k| {
            matches!(
                k,
                EventKind::SessionStart
                    | EventKind::UserPromptSubmit
                    | EventKind::ConfigChange
                    | EventKind::DirectoryAdded
                    | EventKind::PreModelSwitch
                    | EventKind::PostModelSwitch
            )
        },
        "SessionStart, UserPromptSubmit, ConfigChange, DirectoryAdded and the model-switch events",
    ),
    (
        "trigger",
        |k| matches!(k, EventKind::Setup | EventKind::PreCompact | EventKind::PostCompact),
        "Setup, PreCompact and PostCompact",
    ),
    ("notification_type", |k| k == EventKind::Notification, "Notification"),
    ("agent_type", |_| true, "all events"),
    ("load_reason", |k| k == EventKind::InstructionsLoaded, "InstructionsLoaded"),
    ("error", |k| k == EventKind::StopFailure, "StopFailure"),
];

/// Checks that each key a rule gives applies to every event it answers.
struct Applicability<'r, 'a, 't, 'i> {
    reader: &'r mut Reader<'a>,
    rule: &'t DeTable<'i>,
    id: &'t str,
    on: &'t [EventKind],
}

impl<'t, 'i> Applicability<'_, '_, 't, 'i> {
    /// The value of `key`, after reporting the events it does not apply to.
    fn key(
        &mut self,
        key: &str,
        applies: impl Fn(EventKind) -> bool,
        what: &str,
    ) -> Option<&'t Item<'i>> {
        let (name, value) = self.rule.get_key_value(key)?;
        let refused: Vec<&str> =
            self.on.iter().filter(|&&k| !applies(k)).map(|k| k.as_str()).collect();
        if !refused.is_empty() {
            self.reader.error(
                name.span(),
                format!(
                    "`{key}` does not apply to {} (rule `{}`): it applies to {what}",
                    refused.join(", "),
                    self.id
                ),
            );
        }
        Some(value)
    }

    fn contradictions(&mut self, when: &mut Conditions) {
        let lower = |terms: &[String]| {
            terms.iter().map(|t| t.to_ascii_lowercase()).collect::<BTreeSet<_>>()
        };
        let both: Vec<String> =
            lower(&when.keywords_all).intersection(&lower(&when.exclude)).cloned().collect();
        if let Some(term) = both.first() {
            when.never = true;
            let span = self.rule.get("exclude").map_or(0..0, Spanned::span);
            self.reader.warning(span, format!("rule `{}` never fires: `{term}` is both required (`keywords_all`) and excluded", self.id));
        }
        let set: BTreeSet<&String> = when.flags.iter().collect();
        if let Some(flag) = when.not_flags.iter().find(|f| set.contains(f)).cloned() {
            when.never = true;
            let span = self.rule.get("not_flags").map_or(0..0, Spanned::span);
            self.reader.warning(
                span,
                format!(
                    "rule `{}` never fires: flag `{flag}` must be both set and not set",
                    self.id
                ),
            );
        }
    }

    #[allow(clippy::too_many_lines, reason = "one block per action of the rule language")]
    fn actions(&mut self, when: &Conditions) -> Actions {
        let mut then = Actions::default();
        let context_what =
            "events that take additionalContext, and PreCompact (compaction instructions)";
        if let Some(value) = self.key("context", EventKind::takes_context, context_what) {
            then.context = str_item(value).map(|(s, _)| s.to_owned());
            if self.on.iter().any(|&k| matches!(k, EventKind::Stop | EventKind::SubagentStop)) {
                self.reader.warning(
                    value.span(),
                    format!(
                        "Claude Code continues the turn on Stop context, as on a block: the model \
                         answers it (once per stop sequence, unless `repeat = true`); `message` \
                         tells the user instead (rule `{}`)",
                        self.id
                    ),
                );
            }
        }
        if let Some(value) = self.key("context_file", EventKind::takes_context, context_what)
            && let Some((path, span)) = str_item(value)
        {
            if then.context.is_some() {
                self.reader.error(
                    span.clone(),
                    format!("rule `{}` gives both `context` and `context_file`", self.id),
                );
            }
            let what = format!("context_file `{path}`");
            match self.reader.folder {
                Some(folder) => {
                    let full = folder.dir.join(path);
                    let text = files::confine(folder.root, &full)
                        .and_then(|real| files::read_text(&real, files::MAX_CONTEXT_FILE_BYTES));
                    match text {
                        Ok(text) => {
                            then.context = Some(text.trim_end().to_owned());
                            self.reader.context_files.push(full);
                        }
                        Err(refused) => {
                            self.reader.error(span, refused.message(&what, folder.root));
                        }
                    }
                }
                None => self.reader.error(
                    span,
                    format!(
                        "{what} cannot be read: a builtin pack is embedded in hookpack and has \
                         no folder; give the text in `context`"
                    ),
                ),
            }
        }
        // What a rule recalls is context too.
        let gives_context =
            ["context", "context_file", "recall"].iter().any(|key| self.rule.contains_key(*key));
        for key in ["layer", "pinned", "once"] {
            if let Some((name, _)) = self.rule.get_key_value(key)
                && !gives_context
            {
                self.reader.error(
                    name.span(),
                    format!(
                        "`{key}` needs `context`, `context_file` or `recall` (rule `{}`)",
                        self.id
                    ),
                );
            }
        }
        then.layer = match string(self.rule, "layer") {
            Some((layer, _)) => Layer::from_name(layer).unwrap_or_default(),
            None if !when.star.is_empty() => Layer::Command,
            None if !when.keywords.is_empty() || !when.keywords_all.is_empty() => Layer::Keyword,
            None => Layer::Global,
        };
        then.pinned = self.rule.get("pinned").and_then(|v| v.get_ref().as_bool()).unwrap_or(false);
        then.priority = self
            .rule
            .get("priority")
            .and_then(integer)
            .and_then(|n| i32::try_from(n).ok())
            .unwrap_or(0);
        then.once = string(self.rule, "once")
            .map(|(o, _)| if o == "session" { Once::Session } else { Once::Compaction });

        if let Some((decision, span)) = string(self.rule, "decision")
            && let Some(decision) = Decision::from_name(decision)
        {
            let refused: Vec<&str> = self
                .on
                .iter()
                .filter(|&&k| !decision_applies(decision, k))
                .map(|k| k.as_str())
                .collect();
            if !refused.is_empty() {
                self.reader.error(
                    span,
                    format!(
                        "`decision = \"{}\"` does not apply to {} (rule `{}`): {}",
                        Decision::as_str(decision),
                        refused.join(", "),
                        self.id,
                        DECISIONS_HELP
                    ),
                );
            }
            then.decision = Some(decision);
        }
        then.reason = string(self.rule, "reason").map(|(r, _)| r.to_owned());
        match (then.decision, &then.reason) {
            (Some(d @ (Decision::Deny | Decision::Block)), None) => {
                let span = self.rule.get("decision").map_or(0..0, Spanned::span);
                self.reader.error(
                    span,
                    format!(
                        "`decision = \"{}\"` needs a `reason` the model can act on (rule `{}`)",
                        Decision::as_str(d),
                        self.id
                    ),
                );
            }
            (None, Some(_)) if !self.rule.contains_key("decision") => {
                let span = self.rule.get_key_value("reason").map_or(0..0, |(k, _)| k.span());
                self.reader
                    .error(span, format!("`reason` without a `decision` (rule `{}`)", self.id));
            }
            _ => {}
        }
        if let Some(value) = self.key(
            "message",
            EventKind::shows_system_message,
            "events whose systemMessage Claude Code shows",
        ) {
            then.message = str_item(value).map(|(s, _)| s.to_owned());
        }
        if let Some(value) = self.key(
            "stop",
            EventKind::honours_continue,
            "events where Claude Code honours `continue: false`",
        ) {
            then.stop = str_item(value).map(|(s, _)| s.to_owned());
            if then.stop.as_deref().is_some_and(|s| s.trim().is_empty()) {
                self.reader.error(
                    value.span(),
                    format!("`stop` needs a reason to show the user (rule `{}`)", self.id),
                );
            }
        }
        if let Some(value) = self.key(
            "session_title",
            EventKind::sets_session_title,
            "SessionStart and UserPromptSubmit",
        ) {
            then.session_title = str_item(value).map(|(s, _)| s.to_owned());
        }
        if let Some(value) = self.key("rewrite", |k| k == EventKind::PreToolUse, "PreToolUse")
            && let DeValue::Table(fields) = value.get_ref()
        {
            for (field, template) in fields {
                let Some(text) = template.get_ref().as_str() else { continue };
                match hook_engine::template::parse(text) {
                    Ok(_) => then.rewrite.push((field.get_ref().to_string(), text.to_owned())),
                    Err(why) => self.reader.error(
                        template.span(),
                        format!("`rewrite.{}`: {why} (rule `{}`)", field.get_ref(), self.id),
                    ),
                }
            }
            if then.decision == Some(Decision::Deny) {
                self.reader.error(
                    value.span(),
                    format!("a denied call is not run: `rewrite` with `deny` (rule `{}`)", self.id),
                );
            }
        }
        if let Some(value) = self.key(
            "watch_paths",
            EventKind::sets_watch_paths,
            "SessionStart, CwdChanged and FileChanged",
        ) {
            for (path, span) in strings(value) {
                if let Some(path) = project_path(path) {
                    then.watch_paths.push(path);
                } else {
                    self.reader.error(
                        span,
                        format!(
                            "`watch_paths` takes paths relative to the project, inside it: `{path}` is not one (rule `{}`)",
                            self.id
                        ),
                    );
                }
            }
        }
        if let Some(DeValue::Table(set)) = self.rule.get("set").map(Spanned::get_ref) {
            then.set = state_set(set);
        }
        if let Some(DeValue::Table(unset)) = self.rule.get("unset").map(Spanned::get_ref) {
            let flag = |key| unset.get(key).and_then(|v| v.get_ref().as_bool()).unwrap_or(false);
            then.unset = StateUnset {
                agent: flag("agent"),
                workflow: flag("workflow"),
                task: flag("task"),
                flags: unset
                    .get("flags")
                    .map(|v| strings(v).into_iter().map(|(s, _)| s.to_owned()).collect())
                    .unwrap_or_default(),
            };
        }
        if let Some(DeValue::Table(capture)) = self.rule.get("capture").map(Spanned::get_ref) {
            then.capture = Some(Capture {
                namespace: string(capture, "namespace").map(|(s, _)| s.to_owned()),
                confidence: capture
                    .get("confidence")
                    .and_then(|v| shape::number(v.get_ref()))
                    .unwrap_or(1.0),
                markers: capture
                    .get("markers")
                    .and_then(|v| v.get_ref().as_bool())
                    .unwrap_or(false),
            });
        }
        if let Some(value) = self.key(
            "repeat",
            |k| matches!(k, EventKind::Stop | EventKind::SubagentStop),
            "Stop and SubagentStop",
        ) {
            then.repeat = value.get_ref().as_bool().unwrap_or(false);
            if then.repeat && then.decision != Some(Decision::Block) && then.context.is_none() {
                self.reader.warning(
                    value.span(),
                    format!(
                        "`repeat` only matters for a rule that blocks or gives context (rule `{}`)",
                        self.id
                    ),
                );
            }
        }
        if let Some(value) = self.key("recall", EventKind::takes_context, context_what)
            && let DeValue::Table(recall) = value.get_ref()
        {
            let from = match string(recall, "from") {
                Some(("prompt", _)) => RecallFrom::Prompt,
                Some(("handoff", span)) => {
                    if self
                        .on
                        .iter()
                        .any(|&k| !matches!(k, EventKind::SessionStart | EventKind::PreCompact))
                    {
                        self.reader.warning(
                            span,
                            format!(
                                "the handoff is given on the `SessionStart` after a compaction \
                                 (and into the compaction instructions on `PreCompact`); on \
                                 other events this recalls nothing (rule `{}`)",
                                self.id
                            ),
                        );
                    }
                    RecallFrom::Handoff
                }
                Some(("path", span)) if !self.on.iter().all(|k| k.is_tool_event()) => {
                    self.reader.warning(
                        span,
                        format!(
                            "`from = \"path\"` finds memories by a tool call's file path; this \
                             rule's events have none (rule `{}`)",
                            self.id
                        ),
                    );
                    RecallFrom::Path
                }
                _ => RecallFrom::Path,
            };
            then.recall = Some(RecallSpec {
                from,
                max: recall
                    .get("max")
                    .and_then(integer)
                    .and_then(|n| u32::try_from(n).ok())
                    .unwrap_or(3),
            });
        }
        if let Some((fail, span)) = string(self.rule, "fail") {
            let on_pre_tool_use = self.on.iter().all(|&k| k == EventKind::PreToolUse);
            if !on_pre_tool_use || then.decision.is_none() {
                self.reader.error(
                    span,
                    format!(
                        "`fail` applies to PreToolUse rules with a `decision` only (rule `{}`)",
                        self.id
                    ),
                );
            }
            then.fail_closed = fail == "closed";
        }
        then
    }
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

fn is_pack_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

fn is_rule_id(id: &str) -> bool {
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
    let DeValue::Array(items) = value else { return Vec::new() };
    items
        .iter()
        .filter_map(|item| {
            let table = item.get_ref().as_table()?;
            let text = |key| string(table, key).map_or_else(String::new, |(s, _)| s.to_owned());
            Some((text("namespace"), text("text")))
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
}
