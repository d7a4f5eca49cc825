//! A `[[rule]]`: its id, events and conditions, each checked where it is written; its actions
//! are read by [`super::actions`].

use std::collections::BTreeMap;

use hook_model::EventKind;
use serde_json::Value;
use toml::Spanned;
use toml::de::DeValue;

use super::{
    Applicability, Item, Reader, bracket, glob_error, integer, is_rule_id, is_star_name, scalar,
    str_item, string, strings,
};
use crate::model::{Conditions, FieldCondition, Rule, StateSet, StateUnset};
use crate::shape;

impl Reader<'_> {
    #[allow(clippy::too_many_lines, reason = "one block per key of the rule language")]
    pub(super) fn rule(
        &mut self,
        pack: &str,
        item: &Item<'_>,
        tables: &BTreeMap<String, Vec<String>>,
    ) -> Option<Rule> {
        let DeValue::Table(rule) = item.get_ref() else { return None };
        let (id, id_span) = string(rule, "id")?;
        if !is_rule_id(id) {
            self.error(id_span.clone(), format!("rule id `{id}` must match {}", shape::RULE_ID));
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
                if let Some(why) = dead_glob(pattern) {
                    check.reader.warning(span.clone(), format!("glob `{pattern}` {why}"));
                }
                if let Some(rest) = pattern.strip_prefix("./") {
                    check.reader.warning(
                        span.clone(),
                        format!(
                            "glob `{pattern}` matches only paths given as `./…`: Claude Code gives \
                             absolute paths, matched relative to the project without `./`; write \
                             `{rest}`"
                        ),
                    );
                }
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
            // Shell, web and agent tools name no file: a rule on them alone with `paths` never
            // fires. (Glob and Grep name a folder in `path`, which `paths` matches; a tool
            // hookpack does not know may name one.)
            if let Some(crate::ToolMatcher::Names(names)) = &when.tool
                && !names.is_empty()
                && names.iter().all(|n| {
                    hook_model::ToolName::KNOWN.contains(&n.as_str())
                        && hook_model::path_argument(n).is_none()
                })
            {
                let instead = if names.iter().all(|n| hook_model::is_shell_tool(n)) {
                    "match the command with `command` or `regex`"
                } else {
                    "match its input with `regex`, or `field = \"tool_input.<name>\"`"
                };
                check.reader.warning(
                    paths.span(),
                    format!(
                        "rule `{id}` never fires: {} calls carry no file path for `paths` to \
                         match ({instead})",
                        names.join(", ")
                    ),
                );
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
            } else if let Some(first) = path.split('.').next()
                && !on.is_empty()
                && !on.iter().any(|&kind| hook_model::input_fields(kind).any(|f| f == first))
            {
                // No event of the rule's has that field: a typo of one that is there never
                // fires; another name may be a field Claude Code added since.
                let known = on.iter().flat_map(|&kind| hook_model::input_fields(kind));
                let hint = crate::shape::did_you_mean(first, known);
                let events = on.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ");
                let message = if hint.is_empty() {
                    format!(
                        "rule `{id}`: hookpack knows no `{first}` field in a {events} payload (a \
                         field Claude Code added since still works)"
                    )
                } else {
                    format!(
                        "rule `{id}` never fires: `{first}` is no field of a {events} \
                         payload{hint}"
                    )
                };
                check.reader.warning(span.clone(), message);
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
                    targets: list("targets"),
                    calls: list("calls"),
                    sql: list("sql"),
                    find: list("find"),
                    overwrites: list("overwrites"),
                    empties: list("empties"),
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
            ("branch", &mut when.branch),
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
        if let Some(value) = check.key("branch_changed", |_| true, "") {
            when.branch_changed = value.get_ref().as_bool().unwrap_or(false);
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
            || then.recall.is_some()
            || then.observe
            || then.export;
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

/// Why glob `pattern` can never match the path of a file tool (`Read`, `Write`, `Edit`,
/// `NotebookEdit`: absolute, with `/`, made relative to the project when inside it), or `None`.
/// (Glob's and Grep's `path` is the model's own text and may be anything.)
fn dead_glob(pattern: &str) -> Option<String> {
    const NEVER: &str = "never matches a file tool's path";
    if pattern == ".." || pattern.starts_with("../") {
        let mut rest = pattern;
        while let Some(inner) = rest.strip_prefix("../") {
            rest = inner;
        }
        let instead = match rest {
            "" | ".." => "an absolute glob".to_owned(),
            rest => format!("`**/{rest}` or an absolute glob"),
        };
        return Some(format!(
            "{NEVER}: a path outside the project is matched whole, as Claude Code gives it \
             (`/home/me/other/…`), never as `../…`; write {instead}"
        ));
    }
    if let Some(rest) = pattern.strip_prefix('~') {
        let rest = rest.trim_start_matches('/');
        return Some(format!(
            "{NEVER}: `~` is not expanded, paths come absolute; write `/home/*/{rest}` (and \
             `/Users/*/{rest}` on macOS) or `**/{rest}`"
        ));
    }
    if pattern.len() > 1 && pattern.ends_with('/') {
        return Some(format!(
            "{NEVER}: a file's path does not end in `/`; write `{pattern}**` for what is inside \
             the folder"
        ));
    }
    // In a glob `\` escapes the next character: `src\api` is `srcapi`. A `\` before a letter or
    // digit is a Windows-style separator, and then so is every `\` (`*\.env` alone, an escaped
    // dot, is fine).
    let bytes = pattern.as_bytes();
    if bytes.windows(2).any(|w| w[0] == b'\\' && w[1].is_ascii_alphanumeric()) {
        let fixed = pattern.replace('\\', "/");
        return Some(format!(
            "never matches what it seems to: `\\` escapes the next character in a glob, and \
             paths use `/` on every system; write `{fixed}`"
        ));
    }
    None
}
