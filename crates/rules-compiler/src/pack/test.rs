//! A `[[test]]` case: its event, what it is given and what it expects.

use hook_model::EventKind;
use serde_json::Value;
use toml::de::DeValue;

use super::{
    Item, Reader, bracket, expected_captures, integer, is_pack_name, is_rule_id, memories,
    state_set, string, strings, to_json,
};
use crate::model::{Decision, Expectation, Given, PackTest};
use crate::shape;

impl Reader<'_> {
    pub(super) fn test(&mut self, item: &Item<'_>) -> Option<PackTest> {
        let DeValue::Table(test) = item.get_ref() else { return None };
        let (name, span) = string(test, "name")?;
        let event = test.get("event")?;
        let payload = to_json(event.get_ref());
        let kind = match payload.get("hook_event_name") {
            Some(Value::String(event_name)) => match EventKind::from_name(event_name) {
                Some(kind) => kind,
                None => {
                    let hint = shape::did_you_mean(event_name, shape::EVENT_NAMES.iter().copied());
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
        if let DeValue::Table(fields) = event.get_ref() {
            self.payload_keys(name, kind, fields);
        }
        let expect = test.get("expect").and_then(|e| e.get_ref().as_table())?;
        let mut expectation = Expectation::default();
        if let Some((decision, _)) = string(expect, "decision") {
            expectation.decision = Some(Decision::from_name(decision));
        }
        if let Some(rules) = expect.get("rules") {
            expectation.rules = Some(self.full_ids(name, rules));
        }
        if let Some(rules) = expect.get("not_rules") {
            expectation.not_rules = self.full_ids(name, rules);
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
        expectation.captures = expect.get("captures").map(|v| expected_captures(v.get_ref()));
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
            given.branch = string(table, "branch").map(|(b, _)| b.to_owned());
            given.previous_branch = string(table, "previous_branch").map(|(b, _)| b.to_owned());
            given.conversation = table
                .get("conversation")
                .map(|v| strings(v).into_iter().map(|(s, _)| s.to_owned()).collect())
                .unwrap_or_default();
            given.used_percent =
                table.get("used_percent").and_then(integer).and_then(|n| u8::try_from(n).ok());
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

    /// The full rule ids `value` lists; an error at each that is not `pack/rule`.
    fn full_ids(&mut self, name: &str, value: &Item<'_>) -> Vec<String> {
        let mut ids = Vec::new();
        for (id, span) in strings(value) {
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
        ids
    }

    /// Warns about keys of a test's `event` that Claude Code never sends for `kind` (a test that
    /// passes on a payload the hooks never see proves nothing), and about a tool call missing the
    /// argument Claude Code always gives that tool.
    fn payload_keys(&mut self, name: &str, kind: EventKind, fields: &toml::de::DeTable<'_>) {
        for (key, _) in fields {
            let known = hook_model::input_fields(kind);
            if hook_model::input_fields(kind).any(|k| k == key.get_ref()) {
                continue;
            }
            let hint = shape::did_you_mean(key.get_ref(), known);
            let key_name = key.get_ref();
            let message = if hint.is_empty() {
                format!(
                    "test `{name}`: hookpack knows no `{key_name}` field in a {kind} payload (the \
                     hooks read it only through `field`)"
                )
            } else {
                format!("test `{name}`: `{key_name}` is no field of a {kind} payload{hint}")
            };
            self.warning(key.span(), message);
        }
        let tool = fields.get("tool_name").and_then(|t| t.get_ref().as_str());
        let input = fields.get("tool_input");
        let (Some(tool), Some(input)) = (tool, input) else { return };
        let DeValue::Table(arguments) = input.get_ref() else { return };
        // What Claude Code always gives the tool (Glob's and Grep's `path`, Monitor's
        // `command` are optional).
        let needed = match tool {
            "Bash" | "PowerShell" => "command",
            "Glob" | "Grep" => return,
            tool => match hook_model::path_argument(tool) {
                Some(argument) => argument,
                None => return,
            },
        };
        if arguments.get(needed).is_none() {
            let hint = arguments
                .iter()
                .map(|(k, _)| k.get_ref().as_ref())
                .find(|k: &&str| ["path", "file", "filepath", "filePath", "cmd"].contains(k))
                .map(|k| format!(" (not `{k}`)"))
                .unwrap_or_default();
            self.warning(
                input.span(),
                format!(
                    "test `{name}`: Claude Code always gives {tool} `tool_input.{needed}`{hint}; \
                     without it no `paths` or command condition sees this call"
                ),
            );
        }
    }
}
