//! A rule's actions, each checked against every event the rule answers (a key that does
//! nothing on one of them is an error or a warning, with what the event takes instead).

use std::collections::BTreeSet;

use hook_model::EventKind;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{
    DECISIONS_HELP, Item, Reader, decision_applies, integer, project_path, state_set, str_item,
    string, strings,
};
use crate::model::{
    Actions, Capture, Conditions, Decision, Layer, Once, RecallFrom, RecallSpec, StateUnset,
};
use crate::{files, shape};

/// Checks that each key a rule gives applies to every event it answers.
pub(super) struct Applicability<'r, 'a, 't, 'i> {
    pub(super) reader: &'r mut Reader<'a>,
    pub(super) rule: &'t DeTable<'i>,
    pub(super) id: &'t str,
    pub(super) on: &'t [EventKind],
}

impl<'t, 'i> Applicability<'_, '_, 't, 'i> {
    /// The value of `key`, after reporting the events it does not apply to.
    pub(super) fn key(
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

    pub(super) fn contradictions(&mut self, when: &mut Conditions) {
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
        // Every `keywords` term excluded: whatever prompt has one, `exclude` vetoes it.
        let excluded = lower(&when.exclude);
        let keywords = lower(&when.keywords);
        if !keywords.is_empty() && keywords.is_subset(&excluded) {
            when.never = true;
            let span = self.rule.get("exclude").map_or(0..0, Spanned::span);
            let terms = keywords.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", ");
            self.reader.warning(
                span,
                format!(
                    "rule `{}` never fires: {terms} are both its keywords and excluded",
                    self.id
                ),
            );
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
    pub(super) fn actions(&mut self, when: &Conditions) -> Actions {
        let mut then = Actions::default();
        let context_what =
            "events that take additionalContext, and PreCompact (compaction instructions)";
        if let Some(value) = self.key("context", EventKind::takes_context, context_what) {
            then.context = str_item(value).map(|(s, _)| s.to_owned());
            self.reader.variable_typos(value);
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
            self.reader.variable_typos(value);
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
                signal: capture.get("signal").and_then(|v| v.get_ref().as_bool()).unwrap_or(false),
            });
            if let Some(signal) =
                capture.get("signal").filter(|v| v.get_ref().as_bool() == Some(true))
            {
                let problem = if when.regex.is_empty() {
                    Some("a signal is where a `regex` matches: `signal` needs one")
                } else if capture
                    .get("markers")
                    .is_some_and(|v| v.get_ref().as_bool() == Some(true))
                {
                    Some("`signal` and `markers` are two ways of capturing: one rule takes one")
                } else {
                    None
                };
                if let Some(problem) = problem {
                    self.reader.error(signal.span(), format!("{problem} (rule `{}`)", self.id));
                }
                // A signal's matches are found whole, with each regex's reverse automaton too;
                // a match of nothing is no signal.
                for pattern in &when.regex {
                    let empty = regex_syntax::parse(pattern)
                        .is_ok_and(|hir| hir.properties().minimum_len() == Some(0));
                    if empty {
                        self.reader.error(
                            signal.span(),
                            format!(
                                "a signal's regex must match some text: `{pattern}` can match nothing (rule `{}`)",
                                self.id
                            ),
                        );
                    }
                    if let Err(err) = crate::emit::regex_reverse_dfa(pattern) {
                        self.reader.error(
                            signal.span(),
                            format!("{err}, as a signal needs it backwards (rule `{}`)", self.id),
                        );
                    }
                }
            }
        }
        if let Some(value) = self.key(
            "observe",
            |k| {
                matches!(
                    k,
                    EventKind::UserPromptSubmit
                        | EventKind::PostToolUse
                        | EventKind::PostToolUseFailure
                )
            },
            "UserPromptSubmit, PostToolUse and PostToolUseFailure",
        ) {
            then.observe = value.get_ref().as_bool().unwrap_or(false);
        }
        if let Some(value) = self.key("export", |k| k == EventKind::SessionStart, "SessionStart") {
            then.export = value.get_ref().as_bool().unwrap_or(false);
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
                Some(("sessions", span)) => {
                    if self.on.iter().any(|&k| k != EventKind::SessionStart) {
                        self.reader.warning(
                            span,
                            format!(
                                "the index of recent sessions is for the start of a session: \
                                 `from = \"sessions\"` on other events repeats it (rule `{}`)",
                                self.id
                            ),
                        );
                    }
                    RecallFrom::Sessions
                }
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
