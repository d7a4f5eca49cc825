//! What a rule that fires gives and changes: its answer (`Fired`), its captures, its changes to
//! the session state, and the call as its `rewrite`s leave it.

use std::path::Path;

use hook_model::EventKind;
use serde_json::{Map, Value};

use super::commands::CommandMatch;
use super::{Engine, Evaluation, Facts, Fired, Scan, memory_scan, text_bytes};
use crate::artifact::{ArtifactError, Effort, RuleView, SettingsRecord};
use crate::memory::{self, CaptureSpec, Recall};
use crate::rule::RecallFrom;
use crate::session::SessionState;
use crate::signal;
use crate::text::{Vars, expand};

impl<'a> Engine<'a> {
    pub(super) fn fired<'p>(
        &self,
        scan: &Scan<'p>,
        index: u32,
        r: &RuleView<'a>,
        facts: &Facts<'p>,
    ) -> Result<Fired, ArtifactError> {
        let effort = &scan.effort;
        let recall = if let Some(spec) = r.recall() {
            // The same for every rule of the event: found once.
            let terms = match spec.from {
                RecallFrom::Handoff | RecallFrom::Sessions => Vec::new(),
                RecallFrom::Prompt => match scan.shared.prompt_terms.get() {
                    Some(terms) => terms.clone(),
                    None => {
                        let text = facts.default_texts().join("\n");
                        effort.scan(text.len())?;
                        let terms = memory::first_terms(&text, memory::MAX_QUERY_TERMS);
                        scan.shared.prompt_terms.get_or_init(|| terms).clone()
                    }
                },
                RecallFrom::Path => match scan.shared.path_terms.get() {
                    Some(terms) => terms.clone(),
                    None => {
                        let path = scan.tool_path(facts).unwrap_or_default();
                        effort.scan(path.len())?;
                        scan.shared.path_terms.get_or_init(|| memory::path_terms(path)).clone()
                    }
                },
            };
            Some(Recall { from: spec.from, max: spec.max as usize, terms })
        } else {
            None
        };
        let context = self.optional_kept(effort, r.context())?;
        let message = self.optional_kept(effort, r.message())?;
        // Found once per event, and only for a text that names it.
        let names_issue =
            [&context, &message].iter().any(|t| t.as_ref().is_some_and(|t| t.contains("{issue}")));
        let issue = match (scan.shared.issue.get(), facts.branch) {
            (Some(found), _) => found.as_deref(),
            (None, Some(branch)) if names_issue => {
                let found = self.issue(effort, branch)?;
                scan.shared.issue.get_or_init(|| found).as_deref()
            }
            (None, _) => None,
        };
        let vars = Vars {
            branch: facts.branch,
            issue,
            previous_branch: facts.state.branch.as_deref(),
            session_id: &facts.input.common.session_id,
            prompt_count: facts.state.prompt_count,
            bracket: facts.bracket.as_str(),
            used_percent: facts.used_percent,
        };
        let expanded = |text: Option<String>| text.map(|text| expand(text, &vars));
        Ok(Fired {
            index,
            id: self.kept(effort, r.id())?,
            layer: r.layer(),
            priority: r.priority(),
            pinned: r.pinned(),
            context: expanded(context),
            decision: r.decision(),
            reason: self.optional_kept(effort, r.reason())?,
            message: expanded(message),
            stop: self.optional_kept(effort, r.stop())?,
            session_title: self.optional_kept(effort, r.session_title())?,
            watch_paths: self.watch_paths(effort, r, facts.project_root)?,
            rewrite: self.rewrite(effort, r)?,
            once: r.once(),
            recall,
            command: match self.matched_command(effort, r, facts, scan)? {
                CommandMatch::Matched(shown) => Some(shown),
                CommandMatch::NoCondition | CommandMatch::Missed => None,
            },
            observes: r.observes(),
            exports: r.exports(),
        })
    }

    /// The issue `branch` carries: by `[branch] issues` when configured, else
    /// [`crate::text::issue_of`].
    fn issue(&self, effort: &Effort, branch: &str) -> Result<Option<String>, ArtifactError> {
        let record = SettingsRecord::read(self.artifact.settings());
        Ok(match record.issues {
            Some(list) => crate::text::issue_by(branch, &self.strings(effort, list)?),
            None => crate::text::issue_of(branch),
        })
    }

    /// The memories rule `r` captures from its text, or the signals it finds there.
    pub(super) fn capture(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        facts: &Facts<'_>,
        evaluation: &mut Evaluation,
    ) -> Result<(), ArtifactError> {
        let id = self.str(effort, r.id())?;
        let Some(capture) = r.capture() else { return Ok(()) };
        let spec = CaptureSpec {
            namespace: self.optional_str(effort, capture.namespace)?,
            confidence: capture.confidence,
            markers: capture.markers,
        };
        let config = self.memory_settings_with(effort)?;
        let texts = self.texts(effort, facts, r.field())?;
        if capture.signal {
            let namespace = config.resolve(spec.namespace.unwrap_or(config.fallback())).0;
            let regexes = self.matcher_list(effort, r.regex())?;
            for (i, text) in texts.iter().enumerate() {
                memory_scan(effort, text.len(), config)?;
                // Private parts go first, wherever they end.
                let Some(text) = memory::strip_private(text, &config.private_tags) else {
                    continue;
                };
                let text = text[..text.floor_char_boundary(signal::MAX_TEXT)].replace("\r\n", "\n");
                for &regex in &regexes {
                    let spans =
                        self.regexes.regex_spans(regex, &text, signal::MAX_MATCHES, effort)?;
                    for span in spans {
                        let found = signal::found(
                            id,
                            &namespace,
                            capture.confidence,
                            &text,
                            span,
                            (r.field().offset, i),
                        );
                        effort.keep(found.text.len())?;
                        evaluation.signals.push(found);
                    }
                }
            }
            return Ok(());
        }
        for text in texts {
            // What it captures is at most the text, kept.
            memory_scan(effort, text.len(), config)?;
            effort.keep(text.len())?;
            let captured = memory::capture(id, &text, spec, config);
            evaluation.marked |= spec.markers && !captured.is_empty();
            evaluation.captures.extend(captured);
        }
        Ok(())
    }

    /// Adds what the event shows the session did to its books (`observe`).
    pub(super) fn observe(
        &self,
        effort: &Effort,
        facts: &Facts<'_>,
        state: &mut SessionState,
    ) -> Result<(), ArtifactError> {
        let config = self.memory_settings_with(effort)?;
        // The texts it may strip private parts from.
        let len = |v: Option<&Value>| v.and_then(Value::as_str).map_or(0, str::len);
        let p = facts.payload;
        let command = p.get("tool_input").and_then(|i| i.get("command"));
        memory_scan(effort, len(p.get("prompt")) + len(p.get("error")) + len(command), config)?;
        let seen = crate::observe::of(facts.input, p, facts.project_root, &config.private_tags);
        if let Some(seen) = seen {
            let project =
                || facts.project_root.and_then(Path::to_str).map(|p| memory::cut(p, 4096));
            state.observed.add(seen, project);
        }
        Ok(())
    }

    pub(super) fn apply(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        state: &mut SessionState,
    ) -> Result<(), ArtifactError> {
        let unset = r.unset();
        if unset.agent {
            state.agent = None;
        }
        if unset.workflow {
            state.workflow = None;
        }
        if unset.task {
            state.task = None;
        }
        for flag in self.strings(effort, r.unset_flags())? {
            state.flags.remove(flag);
        }
        if let Some(agent) = self.optional_kept(effort, r.set_agent())? {
            state.agent = Some(agent);
        }
        if let Some(workflow) = self.optional_kept(effort, r.set_workflow())? {
            state.workflow = Some(workflow);
        }
        if let Some(task) = self.optional_kept(effort, r.set_task())? {
            state.task = Some(task);
        }
        for flag in self.strings(effort, r.set_flags())? {
            effort.keep(flag.len())?;
            state.flags.insert(flag.to_owned());
        }
        Ok(())
    }

    /// A rule's `rewrite`: (input field, template) pairs.
    fn rewrite(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
    ) -> Result<Vec<(String, String)>, ArtifactError> {
        let strings = self.strings(effort, r.rewrite())?;
        strings
            .chunks_exact(2)
            .map(|pair| {
                effort.keep(pair[0].len() + pair[1].len())?;
                Ok((pair[0].to_owned(), pair[1].to_owned()))
            })
            .collect()
    }

    /// A rule's `watch_paths`, each resolved against `root` (kept as written without one).
    fn watch_paths(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        root: Option<&Path>,
    ) -> Result<Vec<String>, ArtifactError> {
        let paths = self.strings(effort, r.watch_paths())?;
        paths
            .into_iter()
            .map(|path| {
                let full = root
                    .map_or_else(|| path.to_owned(), |root| root.join(path).display().to_string());
                effort.keep(full.len())?;
                Ok(full)
            })
            .collect()
    }
}

/// The call's input with the `rewrite`s of the rules that fired applied in rule order (each
/// template sees what the rules before it made), or `None` when none applies.
pub(super) fn rewritten(
    effort: &Effort,
    facts: &Facts<'_>,
    fired: &[Fired],
) -> Result<Option<Map<String, Value>>, ArtifactError> {
    if facts.kind() != EventKind::PreToolUse || fired.iter().all(|f| f.rewrite.is_empty()) {
        return Ok(None);
    }
    let Some(original) = facts.payload.get("tool_input").and_then(Value::as_object) else {
        return Ok(None);
    };
    let mut input = original.clone();
    effort.keep(text_bytes(facts.payload))?;
    let mut changed = false;
    for (field, template) in fired.iter().flat_map(|f| &f.rewrite) {
        if let Some(value) = crate::template::expand(template, &input, |n| effort.scan(n))? {
            effort.keep(value.len())?;
            changed |= input.get(field).and_then(Value::as_str) != Some(value.as_str());
            input.insert(field.clone(), Value::String(value));
        }
    }
    Ok(changed.then_some(input))
}
