//! Whether one rule's conditions hold for an event (`Engine::check`), each condition in turn,
//! and what it says when one does not.

use hook_model::{EventKind, PermissionMode};
use serde_json::Value;

use super::commands::CommandMatch;
use super::{Engine, Facts, Scan, field_key, memory_scan, quoted, quoted_as, star_commands};
use crate::artifact::{ArtifactError, Effort, KeywordMatches, RuleView, StrRef};
use crate::memory;
use crate::rule::{Decision, Once};
use crate::session::SessionState;
use crate::text::{lookup, wildcard};

impl<'a> Engine<'a> {
    /// `Ok(Ok(()))` when every condition holds; `Ok(Err((key, detail)))` naming the first
    /// that does not (the detail only when `explain`). Without a `state`, the conditions on the
    /// session state, the bracket and `once` are taken to hold.
    #[allow(clippy::too_many_lines, reason = "one block per condition of the rule language")]
    pub(super) fn check<'p>(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        facts: &Facts<'p>,
        state: Option<&SessionState>,
        scan: &Scan<'p>,
        explain: bool,
    ) -> Result<Result<(), (&'static str, String)>, ArtifactError> {
        let miss = |key: &'static str, detail: &dyn Fn() -> String| {
            Ok(Err((key, if explain { detail() } else { String::new() })))
        };
        let payload = facts.payload;
        let tool = facts.input.tool_name().unwrap_or("");

        let names = self.strings(effort, r.tool_names())?;
        let input = payload.get("tool_input");
        if !names.is_empty()
            && !names.iter().any(|name| hook_model::matcher_covers(name, tool, input))
        {
            return miss("tool", &|| format!("tool is `{tool}`, not one of {}", quoted(&names)));
        }
        if let Some(tool_regex) = r.tool_regex()
            && !self.regex(effort, tool_regex, tool)?
        {
            return miss("tool", &|| format!("tool `{tool}` does not match the tool regex"));
        }

        let branches = self.strings(effort, r.branch())?;
        if !branches.is_empty() {
            let branch = facts.branch.unwrap_or("");
            let (excluded, included): (Vec<&str>, Vec<&str>) =
                branches.iter().partition(|b| b.starts_with('!'));
            let shown = || {
                facts.branch.map_or("none (no branch checked out)".to_owned(), |b| format!("`{b}`"))
            };
            if facts.branch.is_none()
                || (!included.is_empty() && !included.iter().any(|g| wildcard(g, branch)))
            {
                return miss("branch", &|| match included.as_slice() {
                    [] => format!("the branch is {}", shown()),
                    globs => format!("the branch is {}, not one of {}", shown(), quoted(globs)),
                });
            }
            if let Some(glob) = excluded.iter().find(|g| wildcard(&g[1..], branch)) {
                return miss("branch", &|| {
                    format!("the branch is {}, excluded by `{glob}`", shown())
                });
            }
        }

        let includes = self.matcher_list(effort, r.paths())?;
        let excludes = self.matcher_list(effort, r.paths_excluded())?;
        if !includes.is_empty() || !excludes.is_empty() {
            let Some(path) = scan.tool_path(facts) else {
                return miss("paths", &|| "the tool call names no file path".to_owned());
            };
            if !includes.is_empty() && !self.any_glob(effort, &includes, path)? {
                return miss("paths", &|| format!("`{path}` matches none of the globs"));
            }
            if !excludes.is_empty() && self.any_glob(effort, &excludes, path)? {
                return miss("paths", &|| format!("`{path}` is excluded by a `!` glob"));
            }
        }

        let fields: Vec<u32> = self.list(effort, r.fields())?.iter().collect();
        for entry in fields.chunks_exact(4) {
            let path = self.str(effort, StrRef { offset: entry[0], len: entry[1] })?;
            let values = self.str(effort, StrRef { offset: entry[2], len: entry[3] })?;
            effort.parse(values.len())?;
            let values: Vec<Value> = serde_json::from_str(values)
                .map_err(|_| ArtifactError::Malformed("field values"))?;
            let actual = lookup(payload, path);
            if !actual.is_some_and(|a| values.contains(a)) {
                return miss(field_key(path), &|| {
                    let actual = actual.map_or_else(|| "missing".to_owned(), ToString::to_string);
                    format!("`{path}` is {actual}, not one of {}", Value::Array(values.clone()))
                });
            }
        }

        let stars = self.strings(effort, r.star())?;
        if !stars.is_empty() {
            let prompt = facts.input.prompt().unwrap_or("");
            let found = match scan.shared.stars.get() {
                Some(found) => found,
                None => {
                    effort.scan(prompt.len())?;
                    scan.shared.stars.get_or_init(|| star_commands(prompt))
                }
            };
            if !stars.iter().any(|s| found.iter().any(|f| f == s)) {
                return miss("star", &|| {
                    format!("the prompt has none of {}", quoted_as(&stars, "*"))
                });
            }
        }

        let modes = self.strings(effort, r.permission_mode())?;
        let mode = facts.input.common.permission_mode.as_ref().map_or("", PermissionMode::as_str);
        if !modes.is_empty() && !modes.contains(&mode) {
            return miss("permission_mode", &|| {
                format!("permission mode is `{mode}`, not one of {}", quoted(&modes))
            });
        }

        if let Some(state) = state
            && let Err(miss) = self.check_state(effort, r, facts, state, explain)?
        {
            return Ok(Err(miss));
        }

        let has_terms = [r.keywords(), r.keywords_all(), r.exclude()].iter().any(|l| l.len > 0);
        if has_terms {
            let field = r.field();
            let empty = KeywordMatches::default();
            let found = scan.scans.get(&(field.offset, field.len)).unwrap_or(&empty);
            let keywords: Vec<u32> = self.list(effort, r.keywords())?.iter().collect();
            if !keywords.is_empty() && !keywords.iter().any(|&k| found.contains(k)) {
                return miss("keywords", &|| "none of the keywords occurs in the text".to_owned());
            }
            let all = self.list(effort, r.keywords_all())?;
            if all.iter().any(|k| !found.contains(k)) {
                return miss("keywords_all", &|| {
                    "not every term of `keywords_all` occurs in the text".to_owned()
                });
            }
            let vetoes = self.list(effort, r.exclude())?;
            if vetoes.iter().any(|k| found.contains(k)) {
                return miss("exclude", &|| "an `exclude` term occurs in the text".to_owned());
            }
        }

        let regexes = self.matcher_list(effort, r.regex())?;
        if !regexes.is_empty() {
            let field = r.field();
            let mut texts = None;
            let mut matched = false;
            for &index in &regexes {
                let key = (index, field.offset, field.len);
                let known = scan.regex_matched.borrow().get(&key).copied();
                let found = match known {
                    Some(found) => found,
                    None => {
                        if texts.is_none() {
                            texts = Some(self.texts(effort, facts, field)?);
                        }
                        let mut found = false;
                        for text in texts.iter().flatten() {
                            if self.regex(effort, index, text)? {
                                found = true;
                                break;
                            }
                        }
                        scan.regex_matched.borrow_mut().insert(key, found);
                        found
                    }
                };
                if found {
                    matched = true;
                    break;
                }
            }
            if !matched {
                return miss("regex", &|| "no regex matches the text".to_owned());
            }
        }

        if self.matched_command(effort, r, facts, scan)? == CommandMatch::Missed {
            return miss("command", &|| {
                "no `command` pattern matches a command the text runs".to_owned()
            });
        }

        if r.captures_markers() {
            let config = self.memory_settings_with(effort)?;
            let texts = self.texts(effort, facts, r.field())?;
            for text in &texts {
                memory_scan(effort, text.len(), config)?;
            }
            if !texts.iter().any(|text| memory::has_marker(text, config)) {
                return miss("capture", &|| "the text has no memory marker".to_owned());
            }
        }

        // Claude Code continues the turn on a Stop's block and on its context alike: either
        // given again while a stop hook is active would loop (reference §2.2).
        let continues = r.decision() == Some(Decision::Block) || r.context().len > 0;
        if continues
            && matches!(facts.kind(), EventKind::Stop | EventKind::SubagentStop)
            && facts.input.stop_hook_active()
            && !r.repeat()
        {
            return miss("repeat", &|| {
                "a stop hook is already active and the rule has no `repeat = true`".to_owned()
            });
        }
        Ok(Ok(()))
    }

    /// The conditions on the session state, the bracket and `once`.
    fn check_state(
        &self,
        effort: &Effort,
        r: &RuleView<'a>,
        facts: &Facts<'_>,
        state: &SessionState,
        explain: bool,
    ) -> Result<Result<(), (&'static str, String)>, ArtifactError> {
        let miss = |key: &'static str, detail: &dyn Fn() -> String| {
            Ok(Err((key, if explain { detail() } else { String::new() })))
        };
        for (key, wanted, actual) in [
            ("agent", r.agent(), &state.agent),
            ("workflow", r.workflow(), &state.workflow),
            ("task", r.task(), &state.task),
        ] {
            let wanted = self.strings(effort, wanted)?;
            if !wanted.is_empty() && !actual.as_deref().is_some_and(|a| wanted.contains(&a)) {
                return miss(key, &|| {
                    format!(
                        "active {key} is {}, not one of {}",
                        actual.as_deref().map_or("none".to_owned(), |a| format!("`{a}`")),
                        quoted(&wanted)
                    )
                });
            }
        }
        let flags = self.strings(effort, r.flags())?;
        if let Some(flag) = flags.iter().find(|f| !state.flags.contains(**f)) {
            return miss("flags", &|| format!("flag `{flag}` is not set"));
        }
        let not_flags = self.strings(effort, r.not_flags())?;
        if let Some(flag) = not_flags.iter().find(|f| state.flags.contains(**f)) {
            return miss("not_flags", &|| format!("flag `{flag}` is set"));
        }
        if r.branch_changed() {
            // A detached HEAD (no branch) is no change, and no new branch to compare with.
            let changed = state.branch.is_some()
                && facts.branch.is_some()
                && state.branch.as_deref() != facts.branch;
            if !changed {
                return miss("branch_changed", &|| match (&state.branch, facts.branch) {
                    (None, _) => "the session has not seen a branch before".to_owned(),
                    (Some(was), _) => format!("the branch is still `{was}`"),
                });
            }
        }
        if let Some(every) = r.every().map(u64::from)
            && (state.prompt_count == 0 || !state.prompt_count.is_multiple_of(every))
        {
            return miss("every", &|| {
                format!("prompt {} is not a multiple of {every}", state.prompt_count)
            });
        }
        if !r.brackets().admits(facts.bracket) {
            return miss("bracket", &|| format!("the bracket is {}", facts.bracket.as_str()));
        }

        if let Some(once) = r.once() {
            let id = self.str(effort, r.id())?;
            if state.already_injected(id, once) {
                return miss("once", &|| {
                    if once == Once::Session {
                        "already given in this session".to_owned()
                    } else {
                        "already given since the last compaction".to_owned()
                    }
                });
            }
        }

        Ok(Ok(()))
    }

    fn any_glob(&self, effort: &Effort, globs: &[u32], path: &str) -> Result<bool, ArtifactError> {
        for &glob in globs {
            if self.globs.glob_matches(glob, path, effort)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn regex(&self, effort: &Effort, index: u32, text: &str) -> Result<bool, ArtifactError> {
        self.regexes.regex_matches(index, text, effort)
    }
}
