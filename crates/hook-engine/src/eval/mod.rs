//! Evaluating rules: which rules fire for a payload, and why the others did not.
//!
//! `mod.rs` holds the engine and an event's walk through its rules (check, fire, apply, judge a
//! rewritten call again); `scan` the event's keyword scan and the rules it finds to check;
//! `check` one rule's conditions; `commands` the `command` condition; `fire` what a rule that
//! fires gives and changes; `outcome` what an evaluation finds. The session's vocabulary
//! (bracket, state, settings) is `crate::session`; one whole hook call is `crate::call`.

mod check;
mod commands;
mod fire;
mod outcome;
mod scan;

pub use outcome::{Evaluation, Fired, NearMiss};

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use hook_model::{EventKind, HookInput};
use serde_json::Value;

use crate::artifact::format::Section;
use crate::artifact::{
    Artifact, ArtifactError, Effort, KeywordMatches, Keywords, ListRef, Matchers, RuleView,
    SettingsRecord, StrRef, Words,
};
use crate::memory::MemorySettings;
use crate::rule::Decision;
pub use crate::session::{Bracket, SessionState, Settings};
use crate::signal;
use crate::text::{default_text, field_text};
use commands::{CommandMatch, Commands, unreadable_command};
use fire::rewritten;

/// What rules are evaluated against.
#[derive(Clone, Debug)]
pub struct Facts<'p> {
    /// The event's input, typed: what rules read of it by name (the tool, the prompt, the
    /// permission mode, whether a stop hook is active, the session's source).
    pub input: &'p HookInput,
    /// The payload, as Claude Code sent it: what rules read as text (the tool's input, a
    /// `field`'s dotted path), read in place.
    pub payload: &'p Value,
    /// The project's root: tool paths are matched relative to it.
    pub project_root: Option<&'p Path>,
    /// The session state as the event found it.
    pub state: SessionState,
    /// The context bracket.
    pub bracket: Bracket,
    /// The percent of the context window in use, when the bracket was read.
    pub used_percent: Option<u8>,
    /// The project's current git branch, when some rule reads it and `HEAD` names one.
    pub branch: Option<&'p str>,
    /// The user's home folder (`$HOME`): where `~` is, for a command's paths
    /// ([`crate::paths`]). Without it, homes are known by their shape (`/home/<user>`).
    pub home: Option<&'p str>,
    /// On `PreCompact`, the conversation about to be compacted (its newest messages, when some
    /// rule reads the event's text): part of the event's text, after `custom_instructions`.
    pub conversation: &'p [String],
}

impl<'p> Facts<'p> {
    /// The event.
    pub fn kind(&self) -> EventKind {
        self.input.kind()
    }

    /// The texts conditions without a `field` read: the payload's default text, and on
    /// `PreCompact` the conversation.
    pub fn default_texts(&self) -> Vec<Cow<'p, str>> {
        let mut texts = default_text(self.kind(), self.input.tool_name(), self.payload);
        if self.kind() == EventKind::PreCompact {
            texts.extend(self.conversation.iter().map(|m| Cow::Borrowed(m.as_str())));
        }
        texts
    }
}

/// An event's keyword scans and the rules to check, from [`Engine::scan`].
#[derive(Clone, Debug)]
pub struct Scan<'p> {
    /// The keywords found in each text, by the text's field (offset and length of its path).
    scans: BTreeMap<(u32, u32), KeywordMatches>,
    /// Whether regex `.0` matches a text of field `(.1, .2)`: rules share regexes (the
    /// compiler stores each once), so each runs once per text.
    regex_matched: RefCell<BTreeMap<(u32, u32, u32), bool>>,
    /// What every rule of the event reads of the payload the same way, found once: the
    /// prompt's star-commands, and the terms recall searches by (prompt, path).
    shared: Shared<'p>,
    candidates: BTreeSet<u32>,
    mode: Mode,
    /// What the event's evaluation may still spend: the scan's work and every evaluation
    /// made from it share one allowance.
    effort: Effort,
}

/// See [`Scan`]'s `shared`.
#[derive(Clone, Debug, Default)]
struct Shared<'p> {
    stars: OnceCell<Vec<String>>,
    /// The commands each text rules read runs, by the text's field.
    commands: RefCell<BTreeMap<(u32, u32), Commands<'p>>>,
    /// Whether a `program` glob (an interned string: rules share them) names a program of the
    /// text of a field, by (field, glob).
    programs: RefCell<BTreeMap<(u32, u32, u32, u32), bool>>,
    /// What a `command` condition matched, by (field, pattern list): all it depends on (a rule
    /// that fires is matched again to be shown).
    matched: RefCell<BTreeMap<(u32, u32, u32, u32), CommandMatch>>,
    prompt_terms: OnceCell<Vec<String>>,
    path_terms: OnceCell<Vec<String>>,
    /// The issue the branch carries, found once, when a rule's text names `{issue}`.
    issue: OnceCell<Option<String>>,
    /// The call's path as path rules see it ([`tool_path`]), made once per event.
    path: OnceCell<Option<String>>,
    /// Where a command's paths are placed against, made once per event.
    places: OnceCell<crate::paths::Places>,
}

impl Scan<'_> {
    /// The units of work spent so far (see [`Effort`]), and the allowance.
    pub fn effort(&self) -> (u64, u64) {
        (self.effort.spent(), self.effort.limit())
    }

    /// The folders a command's paths are placed against: the payload's `cwd`, the project's
    /// root and the home.
    fn places(&self, facts: &Facts<'_>) -> &crate::paths::Places {
        self.shared.places.get_or_init(|| {
            let cwd = facts.payload.get("cwd").and_then(Value::as_str);
            let root = facts.project_root.and_then(Path::to_str);
            crate::paths::Places::new(cwd, root, facts.home, None)
        })
    }

    /// The call's path relative to the project ([`tool_path`]), normalized once for the
    /// event rather than once per path rule.
    fn tool_path(&self, facts: &Facts<'_>) -> Option<&str> {
        self.shared.path.get_or_init(|| tool_path(facts.payload, facts.project_root)).as_deref()
    }
}

/// How much to find out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Only what fired: the hook's path.
    Answer,
    /// Also why every other rule of the event did not fire.
    Explain,
}

/// An artifact ready to evaluate events.
#[derive(Debug)]
pub struct Engine<'a> {
    artifact: Artifact<'a>,
    keywords: Keywords<'a>,
    globs: Matchers<'a>,
    regexes: Matchers<'a>,
    /// The memory settings, read at their first use (every rule that reads memory markers,
    /// captures or observes needs them).
    memory: std::cell::OnceCell<MemorySettings<'a>>,
}

impl<'a> Engine<'a> {
    /// Reads the sections' headers (O(1); nothing is built).
    ///
    /// # Errors
    ///
    /// When a section is malformed.
    pub fn new(artifact: Artifact<'a>) -> Result<Self, ArtifactError> {
        Ok(Engine {
            keywords: Keywords::new(artifact.section(Section::Keywords))?,
            globs: Matchers::new(artifact.section(Section::Globs), artifact.is_trusted())?,
            regexes: Matchers::new(artifact.section(Section::Regexes), artifact.is_trusted())?,
            artifact,
            memory: std::cell::OnceCell::new(),
        })
    }

    /// The artifact.
    pub fn artifact(&self) -> &Artifact<'a> {
        &self.artifact
    }

    /// The compiled settings.
    pub fn settings(&self) -> Settings {
        SettingsRecord::read(self.artifact.settings()).settings
    }

    /// The memory settings: namespaces, shorthands and private tags (read once).
    ///
    /// # Errors
    ///
    /// When the settings section is damaged.
    pub fn memory_settings(&self) -> Result<&MemorySettings<'a>, ArtifactError> {
        self.memory_settings_with(&self.effort())
    }

    fn memory_settings_with(&self, effort: &Effort) -> Result<&MemorySettings<'a>, ArtifactError> {
        if let Some(settings) = self.memory.get() {
            return Ok(settings);
        }
        let record = SettingsRecord::read(self.artifact.settings());
        let aliases = self.strings(effort, record.aliases)?;
        let settings = MemorySettings {
            namespaces: self.strings(effort, record.namespaces)?,
            aliases: aliases.chunks_exact(2).map(|p| (p[0], p[1])).collect(),
            private_tags: self.strings(effort, record.private_tags)?,
        };
        Ok(self.memory.get_or_init(|| settings))
    }

    /// The rules tied to the session's active agent, workflow or task (every such condition
    /// met): what a handoff names as active.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged.
    pub fn active_rules(&self, state: &SessionState) -> Result<Vec<String>, ArtifactError> {
        let effort = &self.effort();
        let mut active = Vec::new();
        for index in 0..self.artifact.rule_count() {
            let r = self.rule(effort, index)?;
            let mut tied = false;
            let mut met = true;
            for (wanted, actual) in [
                (r.agent(), &state.agent),
                (r.workflow(), &state.workflow),
                (r.task(), &state.task),
            ] {
                let wanted = self.strings(effort, wanted)?;
                if !wanted.is_empty() {
                    tied = true;
                    met &= actual.as_deref().is_some_and(|a| wanted.contains(&a));
                }
            }
            if tied && met {
                active.push(self.kept(effort, r.id())?);
            }
        }
        Ok(active)
    }

    /// Whether some rule can refuse a prompt (`block`, `deny` or `stop` on `UserPromptSubmit`):
    /// without one, no text is refused as a prompt ([`crate::screen`]). Reads each rule's
    /// record, not its conditions.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged.
    pub fn refuses_prompts(&self) -> Result<bool, ArtifactError> {
        let effort = &self.effort();
        for index in 0..self.artifact.rule_count() {
            let r = self.rule(effort, index)?;
            if r.events().contains(EventKind::UserPromptSubmit)
                && (matches!(r.decision(), Some(Decision::Block | Decision::Deny))
                    || r.stop().len > 0)
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Evaluates the rules of `facts.kind()`.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged where this event reads it.
    pub fn evaluate(&self, facts: &Facts<'_>, mode: Mode) -> Result<Evaluation, ArtifactError> {
        let scan = self.scan(facts, mode)?;
        self.evaluate_scanned(&scan, facts)
    }

    /// Evaluates the rules of `scan` (made by [`Engine::scan`] from the same event and payload)
    /// against `facts`, whose state and bracket may have been filled in since.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged where this event reads it.
    pub fn evaluate_scanned<'p>(
        &self,
        scan: &Scan<'p>,
        facts: &Facts<'p>,
    ) -> Result<Evaluation, ArtifactError> {
        let (mut evaluation, observes) = self.evaluate_rules(scan, facts)?;
        // A call the rules rewrite is judged again as rewritten: a guard that would stop the
        // new call stops it (a pack cannot rewrite a call past another rule). A denied call
        // is not rewritten at all.
        let denied = evaluation.fired.iter().any(|f| f.decision == Some(Decision::Deny));
        if !denied && let Some(input) = rewritten(&scan.effort, facts, &evaluation.fired)? {
            let mut payload = facts.payload.clone();
            payload["tool_input"] = Value::Object(input.clone());
            let again = Facts { payload: &payload, state: facts.state.clone(), ..*facts };
            let second = self.scan(&again, scan.mode)?;
            evaluation.rechecked = self
                .evaluate_rules(&second, &again)?
                .0
                .fired
                .into_iter()
                .filter(|f| matches!(f.decision, Some(Decision::Deny | Decision::Ask)))
                .collect();
            evaluation.updated_input = Some(input);
        }
        // What the rules refuse is kept nowhere (reference §2.5): neither captured, nor
        // suggested, nor written in the session's books; decided after every decision of the
        // event, the rechecked ones included.
        if evaluation.refuses(facts.kind()) {
            evaluation.captures.clear();
            evaluation.signals.clear();
            evaluation.marked = false;
        } else if observes {
            self.observe(&scan.effort, facts, &mut evaluation.state)?;
        }
        Ok(evaluation)
    }

    /// The rules of `scan` that fire, without rewriting the call, and whether one of them
    /// observes the event for the session's books (done once the event's decisions are known).
    fn evaluate_rules<'p>(
        &self,
        scan: &Scan<'p>,
        facts: &Facts<'p>,
    ) -> Result<(Evaluation, bool), ArtifactError> {
        let Scan { candidates, mode, effort, .. } = scan;
        let mode = *mode;
        // State-changing rules first, against the state as the event found it; every other
        // rule sees the new state (reference §2.2).
        // (The state is copied once: a session's observations make it the largest thing a
        // hook decodes.)
        let mut evaluation = Evaluation { state: facts.state.clone(), ..Evaluation::default() };
        let explain = mode == Mode::Explain;
        let mut observes = false;
        // The state the second pass sees: the first pass's, set aside while that pass adds
        // to the evaluation (no rule of it changes the state; the observation, which is not a
        // condition's, is made after it).
        let mut changed = None;
        for changes_state in [true, false] {
            if !changes_state {
                changed = Some(std::mem::take(&mut evaluation.state));
            }
            let state = changed.as_ref().unwrap_or(&facts.state);
            for &index in candidates {
                let r = self.rule(effort, index as usize)?;
                if (r.changes_state()) != changes_state {
                    continue;
                }
                match self.check(effort, &r, facts, Some(state), scan, explain)? {
                    Ok(()) => {
                        if changes_state {
                            self.apply(effort, &r, &mut evaluation.state)?;
                        }
                        evaluation.fired.push(self.fired(scan, index, &r, facts)?);
                        if r.captures() {
                            self.capture(effort, &r, facts, &mut evaluation)?;
                        }
                        // Once per event, however many rules observe it.
                        observes |= r.observes();
                    }
                    Err(miss) => {
                        if explain {
                            let id = self.kept(effort, r.id())?;
                            effort.keep(miss.1.len())?;
                            evaluation.near_misses.push(NearMiss {
                                id,
                                condition: miss.0,
                                detail: miss.1,
                            });
                        }
                    }
                }
            }
        }
        if let Some(state) = changed {
            evaluation.state = state;
        }
        evaluation.fired.sort_by_key(|f| f.index);
        // A command line the `command` rules could not read in full may hide anything they
        // guard: the user is asked (fail safe, and said why).
        let exhausted = scan
            .shared
            .commands
            .borrow()
            .values()
            .any(|p| p.iter().any(|text| text.parsed.exhausted()));
        if exhausted && facts.kind() == EventKind::PreToolUse {
            evaluation.fired.push(unreadable_command());
        }
        let order: BTreeMap<&str, usize> =
            evaluation.fired.iter().enumerate().map(|(i, f)| (f.id.as_str(), i)).rev().collect();
        evaluation.captures.sort_by_key(|c| order.get(c.rule.as_str()).copied());
        evaluation.signals = signal::resolve(std::mem::take(&mut evaluation.signals));
        // Where the text's author marked what to keep, its signals are not (the marked parts
        // are kept); what a rule captured otherwise (a convention) is not a signal too.
        for found in &mut evaluation.signals {
            let captured = evaluation.captures.iter().map(|c| c.text.as_str());
            let held = !evaluation.captures.is_empty() && !signal::is_novel(&found.text, captured);
            if evaluation.marked || held {
                found.outcome = Some(signal::Outcome::Marked);
            }
        }
        Ok((evaluation, observes))
    }

    /// Whether some rule that reads or changes the session state (or needs it for its bracket
    /// or `once`) has every other condition met: only then must the hook open the state.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged where this event reads it.
    pub fn state_rules_apply<'p>(
        &self,
        scan: &Scan<'p>,
        facts: &Facts<'p>,
    ) -> Result<bool, ArtifactError> {
        let effort = &scan.effort;
        for &index in &scan.candidates {
            let r = self.rule(effort, index as usize)?;
            if r.uses_state() && self.check(effort, &r, facts, None, scan, false)?.is_ok() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The texts a rule reading `field` reads.
    /// Costs its texts: each rule that reads a text pays for making it.
    fn texts<'p>(
        &self,
        effort: &Effort,
        facts: &Facts<'p>,
        field: StrRef,
    ) -> Result<Vec<Cow<'p, str>>, ArtifactError> {
        let path = self.str(effort, field)?;
        let texts = if path.is_empty() {
            facts.default_texts()
        } else {
            field_text(facts.payload, path).into_iter().collect()
        };
        for text in &texts {
            effort.read(text.len())?;
        }
        Ok(texts)
    }

    /// A fresh allowance for one evaluation of this artifact.
    fn effort(&self) -> Effort {
        Effort::for_artifact(self.artifact.bytes().len())
    }

    /// List `r`, paid for word by word.
    fn list(&self, effort: &Effort, r: ListRef) -> Result<Words<'a>, ArtifactError> {
        effort.spend(1 + u64::from(r.len))?;
        self.artifact.list(r)
    }

    /// String `r`, paid for by its length (strings are stored once however often they are
    /// named, so a crafted artifact can name a long one many times).
    fn str(&self, effort: &Effort, r: StrRef) -> Result<&'a str, ArtifactError> {
        effort.read(r.len as usize)?;
        // Only the string is checked: a hook reads a few short strings of a section that holds
        // every rule's (checking it all would read pages the hook does not need).
        self.artifact.str(r)
    }

    /// The matchers list `r` names, each once: a rule runs each automaton at most once per
    /// text, however often a crafted list repeats it.
    fn matcher_list(&self, effort: &Effort, r: ListRef) -> Result<Vec<u32>, ArtifactError> {
        let mut indices: Vec<u32> = self.list(effort, r)?.iter().collect();
        let n = indices.len() as u64;
        effort.spend(n * u64::from(n.max(1).ilog2()))?;
        indices.sort_unstable();
        indices.dedup();
        Ok(indices)
    }

    /// String `r`, copied: paid for by its length, in work and in what the evaluation keeps.
    fn kept(&self, effort: &Effort, r: StrRef) -> Result<String, ArtifactError> {
        effort.keep(r.len as usize)?;
        self.artifact.str(r).map(str::to_owned)
    }

    fn optional_kept(&self, effort: &Effort, r: StrRef) -> Result<Option<String>, ArtifactError> {
        Ok(if r.len == 0 { None } else { Some(self.kept(effort, r)?) })
    }

    fn rule(&self, effort: &Effort, index: usize) -> Result<RuleView<'a>, ArtifactError> {
        effort.spend(1)?;
        self.artifact.rule(index)
    }

    fn strings(&self, effort: &Effort, list: ListRef) -> Result<Vec<&'a str>, ArtifactError> {
        let list = self.list(effort, list)?;
        (0..list.len() / 2)
            .map(|i| self.str(effort, StrRef { offset: list.get(2 * i), len: list.get(2 * i + 1) }))
            .collect()
    }

    fn optional_str(&self, effort: &Effort, r: StrRef) -> Result<Option<&'a str>, ArtifactError> {
        let text = self.str(effort, r)?;
        Ok((!text.is_empty()).then_some(text))
    }
}

/// Charges what reading a text of `len` bytes for memories costs: each `<` is checked against
/// every private tag, each marker against every namespace and shorthand.
fn memory_scan(
    effort: &Effort,
    len: usize,
    config: &MemorySettings<'_>,
) -> Result<(), ArtifactError> {
    let per_byte = 1 + config.private_tags.len() + config.namespaces.len() + config.aliases.len();
    effort.scan(len.saturating_mul(per_byte))
}

/// The bytes of the strings (keys included) in `value`: what rules can scan of a payload.
fn text_bytes(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(text_bytes).sum(),
        Value::Object(map) => map.iter().map(|(k, v)| k.len() + text_bytes(v)).sum(),
        _ => 8,
    }
}

fn field_key(path: &str) -> &'static str {
    match path {
        "source" => "source",
        "trigger" => "trigger",
        "notification_type" => "notification_type",
        "agent_type" => "agent_type",
        "load_reason" => "load_reason",
        "error" => "error",
        _ => "fields",
    }
}

/// Items for a message: the first few, each cut short (a list may be long, an item too).
fn quoted(items: &[&str]) -> String {
    quoted_as(items, "")
}

/// [`quoted`], each item after `prefix`.
fn quoted_as(items: &[&str], prefix: &str) -> String {
    const SHOWN: usize = 8;
    const ITEM_CHARS: usize = 80;
    let mut text = items
        .iter()
        .take(SHOWN)
        .map(|item| match item.char_indices().nth(ITEM_CHARS) {
            Some((cut, _)) => format!("`{prefix}{}…`", &item[..cut]),
            None => format!("`{prefix}{item}`"),
        })
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > SHOWN {
        let _ = write!(text, " and {} more", items.len() - SHOWN);
    }
    text
}

/// The tool call's file path (`file_path`, `notebook_path` or `path`) as rules judge it
/// (reference §2.1): with `/` separators, made absolute against the payload's `cwd` when it is
/// relative, normalized lexically (no empty or `.` components, each `..` taking the one before
/// it), and relative to `root` when inside it. `<root>//secrets/a`, `<root>/src/../secrets/a`
/// and `./secrets/a` from the root are all `secrets/a`. Symbolic links are not followed: a
/// path is judged by its name.
pub fn tool_path(payload: &Value, root: Option<&Path>) -> Option<String> {
    use crate::paths::{is_absolute, normalize};
    let input = payload.get("tool_input")?;
    let path =
        ["file_path", "notebook_path", "path"].iter().find_map(|k| input.get(*k)?.as_str())?;
    let cwd = payload.get("cwd").and_then(Value::as_str).filter(|cwd| is_absolute(cwd));
    let path = match cwd {
        Some(cwd) if !is_absolute(path) => normalize(&format!("{cwd}/{path}")),
        _ => normalize(path),
    };
    if let Some(root) = root.and_then(Path::to_str) {
        let root = normalize(root);
        let root = root.trim_end_matches('/');
        if let Some(relative) = path.strip_prefix(root).and_then(|rest| rest.strip_prefix('/')) {
            return Some(relative.to_owned());
        }
    }
    Some(path)
}

/// The star-commands in a prompt: `*name` after the start or a non-word character, lowercase.
pub fn star_commands(prompt: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut previous: Option<char> = None;
    for (at, c) in prompt.char_indices() {
        if c == '*' && previous.is_none_or(|p| !(p.is_alphanumeric() || p == '_' || p == '*')) {
            let rest = &prompt[at + 1..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                .collect();
            if name.starts_with(|c: char| c.is_ascii_alphabetic()) {
                found.push(name.to_ascii_lowercase());
            }
        }
        previous = Some(c);
    }
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn star_commands_need_a_boundary() {
        assert_eq!(star_commands("*brief please and *Terse-2"), ["brief", "terse-2"]);
        assert_eq!(star_commands("2*3 is six, **bold**, a*b"), Vec::<String>::new());
        assert_eq!(star_commands("(*brief)"), ["brief"]);
    }

    #[test]
    fn tool_paths_are_relative_to_the_project() {
        let root = Path::new("/home/dev/acme");
        let path = |input: Value| tool_path(&json!({ "tool_input": input }), Some(root));
        assert_eq!(
            path(json!({"file_path": "/home/dev/acme/src/a.ts"})).as_deref(),
            Some("src/a.ts")
        );
        assert_eq!(
            path(json!({"file_path": "/home/dev/acme-other/a.ts"})).as_deref(),
            Some("/home/dev/acme-other/a.ts")
        );
        assert_eq!(
            path(json!({"notebook_path": "C:\\work\\n.ipynb"})).as_deref(),
            Some("C:/work/n.ipynb")
        );
        assert_eq!(path(json!({"command": "ls"})), None);
    }

    /// Every spelling of a path names it once: doubled separators, `.`, `..`, a path relative
    /// to the working folder (which may be below the root).
    #[test]
    fn tool_paths_are_normalized_before_a_glob_sees_them() {
        let root = Path::new("/home/dev/acme");
        let path = |file: &str, cwd: &str| {
            let payload = json!({"cwd": cwd, "tool_input": {"file_path": file}});
            tool_path(&payload, Some(root)).unwrap()
        };
        let cwd = "/home/dev/acme";
        for spelling in [
            "/home/dev/acme/secrets/a.txt",
            "/home/dev/acme//secrets/a.txt",
            "/home/dev/acme/./secrets/a.txt",
            "/home/dev/acme/src/../secrets/a.txt",
            "/home/dev/acme/src/lib/../../secrets//./a.txt",
            "/home/dev//acme/secrets/a.txt",
            "./secrets/a.txt",
            "secrets/a.txt",
            "secrets/x/../a.txt",
            "\\home\\dev\\acme\\secrets\\a.txt",
        ] {
            assert_eq!(path(spelling, cwd), "secrets/a.txt", "{spelling}");
        }
        assert_eq!(path("../secrets/a.txt", "/home/dev/acme/src"), "secrets/a.txt");
        assert_eq!(path("a.txt", "/home/dev/acme/secrets/"), "secrets/a.txt");
        assert_eq!(path("/home/dev/acme/../../../../etc/passwd", cwd), "/etc/passwd");
        assert_eq!(path("/home/dev/acme/../acme-other/a", cwd), "/home/dev/acme-other/a");
        // A relative path without a working folder is normalized as it is.
        let bare = |file: &str| {
            tool_path(&json!({"tool_input": {"file_path": file}}), Some(root)).unwrap()
        };
        assert_eq!(bare("./secrets//a.txt"), "secrets/a.txt");
        assert_eq!(bare("../../x/./y"), "../../x/y");
        assert_eq!(bare("C:\\work\\..\\..\\n.ipynb"), "C:/n.ipynb");
    }
}
