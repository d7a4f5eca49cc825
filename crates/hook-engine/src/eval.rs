//! Evaluating rules: which rules fire for a payload, and why the others did not.

use std::borrow::Cow;
use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::{self, Write as _};
use std::ops::Range;
use std::path::Path;

use hook_model::EventKind;
use serde_json::{Map, Value};

use crate::artifact::format::{
    Section, command, decision, event, flag, once, recall, rule, settings,
};
use crate::artifact::{
    Artifact, ArtifactError, Effort, KeywordMatches, Keywords, ListRef, Matchers, StrRef, Words,
};
use crate::command::Pattern;
use crate::memory::{self, CaptureSpec, Captured, MemoryConfig, Recall, RecallFrom};
use crate::shell;
use crate::text::{default_text, field_text, lookup};

/// A context bracket: how much of the context window remains (reference §2.4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bracket {
    /// Plenty left.
    #[default]
    Fresh,
    /// Some used.
    Moderate,
    /// Getting full.
    Depleted,
    /// Nearly full.
    Critical,
}

impl Bracket {
    /// Every bracket, freshest first.
    pub const ALL: [Bracket; 4] =
        [Bracket::Fresh, Bracket::Moderate, Bracket::Depleted, Bracket::Critical];

    /// Its name in packs.
    pub fn as_str(self) -> &'static str {
        match self {
            Bracket::Fresh => "fresh",
            Bracket::Moderate => "moderate",
            Bracket::Depleted => "depleted",
            Bracket::Critical => "critical",
        }
    }

    fn bit(self) -> u32 {
        1 << (self as u32)
    }
}

/// A rule's decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Decision {
    /// `allow`.
    Allow,
    /// `ask`.
    Ask,
    /// `deny`.
    Deny,
    /// `block`.
    Block,
}

impl Decision {
    /// Its name in packs.
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Ask => "ask",
            Decision::Deny => "deny",
            Decision::Block => "block",
        }
    }

    fn from_code(code: u8) -> Option<Decision> {
        match code {
            decision::ALLOW => Some(Decision::Allow),
            decision::ASK => Some(Decision::Ask),
            decision::DENY => Some(Decision::Deny),
            decision::BLOCK => Some(Decision::Block),
            _ => None,
        }
    }
}

/// The session state rules read and change.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SessionState {
    /// The active agent.
    pub agent: Option<String>,
    /// The active workflow.
    pub workflow: Option<String>,
    /// The active task.
    pub task: Option<String>,
    /// The flags set.
    pub flags: BTreeSet<String>,
    /// The prompts so far, this one included (the first prompt is 1).
    pub prompt_count: u64,
    /// The prompts since the session started or was last compacted (for the bracket estimate).
    pub prompts_since_compaction: u64,
    /// The compactions so far.
    pub compactions: u32,
    /// `PreCompact` counted a compaction that `SessionStart` (`source = "compact"`) has not
    /// seen yet.
    pub compaction_pending: bool,
    /// The rules with `once` whose context was given, each with the compaction count then.
    pub injected: BTreeMap<String, u32>,
}

impl SessionState {
    /// The books an event keeps before any rule sees the state: `UserPromptSubmit` counts the
    /// prompt; a compaction is counted once, by `PreCompact` or, when that hook did not run,
    /// by the `SessionStart` that follows it.
    pub fn begin(&mut self, kind: EventKind, payload: &Value) {
        match kind {
            EventKind::UserPromptSubmit => {
                self.prompt_count += 1;
                self.prompts_since_compaction += 1;
            }
            EventKind::PreCompact => {
                self.compacted();
                self.compaction_pending = true;
            }
            EventKind::SessionStart if hook_model::follows_compaction(kind, payload) => {
                if !self.compaction_pending {
                    self.compacted();
                }
                self.compaction_pending = false;
            }
            _ => {}
        }
    }

    fn compacted(&mut self) {
        self.compactions += 1;
        self.prompts_since_compaction = 0;
    }

    /// Whether a rule with `once` ([`once::SESSION`] or [`once::COMPACTION`]) was already given
    /// in its scope.
    pub fn already_injected(&self, id: &str, once: u8) -> bool {
        match (once, self.injected.get(id)) {
            (once::SESSION, Some(_)) => true,
            (once::COMPACTION, Some(&at)) => at == self.compactions,
            _ => false,
        }
    }
}

/// The state in one line: `prompt 3; 1 since the last compaction; agent `dev`; …`.
impl fmt::Display for SessionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "prompt {}; {} since the last compaction",
            self.prompt_count, self.prompts_since_compaction
        )?;
        if self.compactions > 0 {
            write!(f, "; {} compaction(s)", self.compactions)?;
        }
        for (what, value) in
            [("agent", &self.agent), ("workflow", &self.workflow), ("task", &self.task)]
        {
            if let Some(value) = value {
                write!(f, "; {what} `{value}`")?;
            }
        }
        let join = |items: Vec<&str>| items.join(", ");
        if !self.flags.is_empty() {
            write!(f, "; flags {}", join(self.flags.iter().map(String::as_str).collect()))?;
        }
        let (memories, rules): (Vec<&str>, Vec<&str>) =
            self.injected.keys().map(String::as_str).partition(|k| k.starts_with("memory#"));
        if !rules.is_empty() {
            write!(f, "; once-rules given: {}", join(rules))?;
        }
        if !memories.is_empty() {
            let ids = memories.iter().map(|k| k.trim_start_matches("memory")).collect();
            write!(f, "; memories given: {}", join(ids))?;
        }
        Ok(())
    }
}

/// What rules are evaluated against.
#[derive(Clone, Debug)]
pub struct Facts<'p> {
    /// The event.
    pub kind: EventKind,
    /// The payload, as Claude Code sent it.
    pub payload: &'p Value,
    /// The project's root: tool paths are matched relative to it.
    pub project_root: Option<&'p Path>,
    /// The session state as the event found it.
    pub state: SessionState,
    /// The context bracket.
    pub bracket: Bracket,
}

/// A rule that fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fired {
    /// The rule's index in the artifact.
    pub index: u32,
    /// `pack/rule`.
    pub id: String,
    /// Layer, L0–L7.
    pub layer: u8,
    /// Priority within the layer.
    pub priority: i32,
    /// Never dropped by the budget.
    pub pinned: bool,
    /// Text for the model.
    pub context: Option<String>,
    /// The decision.
    pub decision: Option<Decision>,
    /// Why.
    pub reason: Option<String>,
    /// A note for the user.
    pub message: Option<String>,
    /// Why Claude should stop after the hooks (`continue: false`).
    pub stop: Option<String>,
    /// The session's title.
    pub session_title: Option<String>,
    /// Files to watch, absolute (relative ones resolved against the project's root).
    pub watch_paths: Vec<String>,
    /// `rewrite`: (input field, template).
    pub rewrite: Vec<(String, String)>,
    /// `once`: 0, [`once::SESSION`] or [`once::COMPACTION`].
    pub once: u8,
    /// What it asks to recall; the runtime (or a pack test) adds what it finds to `context`.
    pub recall: Option<Recall>,
    /// The command its `command` condition matched, as a shell would read it back.
    pub command: Option<String>,
}

/// A rule of the event that did not fire, and the first condition that failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearMiss {
    /// `pack/rule`.
    pub id: String,
    /// The condition's key.
    pub condition: &'static str,
    /// What the payload had instead.
    pub detail: String,
}

impl fmt::Display for NearMiss {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: `{}` failed: {}", self.id, self.condition, self.detail)
    }
}

/// The result of evaluating one event.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// The rules that fired, in artifact order.
    pub fired: Vec<Fired>,
    /// With [`Mode::Explain`]: every other rule of the event, with what failed.
    pub near_misses: Vec<NearMiss>,
    /// The session state after the rules' changes.
    pub state: SessionState,
    /// The memories the rules that fired capture, privacy tags stripped.
    pub captures: Vec<Captured>,
    /// The call's input as the rules that fired rewrite it (`PreToolUse`), when any did.
    pub updated_input: Option<Map<String, Value>>,
    /// The rules that deny or ask for the call as rewritten (judged again on `updated_input`).
    pub rechecked: Vec<Fired>,
}

impl Evaluation {
    /// At most the characters of context the fired rules give, labels and gaps included: when
    /// this fits the smallest budget, the budget cannot drop anything and the bracket need not
    /// be known.
    pub fn context_chars(&self) -> usize {
        // "[hookpack: " + id + "]\n" + text, and "\n\n" between sections.
        let label = "[hookpack: ]\n\n\n".len();
        self.fired.iter().filter_map(|f| Some(f.context.as_ref()?.len() + f.id.len() + label)).sum()
    }
}

impl Fired {
    /// Adds what its `recall` found to its context (a rule that recalls nothing and has no
    /// context of its own gives none).
    pub fn add_recalled(&mut self, found: String) {
        self.context = Some(match self.context.take() {
            Some(own) if !own.is_empty() => format!("{own}\n\n{found}"),
            _ => found,
        });
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

/// What the texts of one field run, read once per event.
type Commands<'p> = std::rc::Rc<Vec<Text<'p>>>;

/// A pattern tried on a program's commands: its index among the rule's patterns, the positions
/// of the commands it may match (`None`: all of them) and how far through them the walk is.
struct Walk<'p> {
    pattern: usize,
    positions: Option<Cow<'p, [usize]>>,
    cursor: usize,
}

/// A rule's `command` patterns whose programs the text runs, each with its program and
/// subcommand read, and the entries of its rule's list that hold the rest.
type Patterns<'a> = Vec<(Pattern<&'a str>, Range<usize>)>;

/// The commands a text runs and, for each program ([`shell::Parsed::by_name`]), what patterns
/// have read of its commands (`command::Reading`, made for a program's commands when a pattern
/// first tries one) and its commands by their first operand.
#[derive(Debug)]
struct Text<'p> {
    parsed: shell::Parsed<'p>,
    readings: Vec<OnceCell<Vec<crate::command::Reading>>>,
    firsts: Vec<OnceCell<BTreeMap<String, Vec<usize>>>>,
    /// For each program, the positions of its commands that write to a file (`> file`).
    writers: Vec<OnceCell<Vec<usize>>>,
}

impl<'p> Text<'p> {
    fn new(parsed: shell::Parsed<'p>) -> Text<'p> {
        let readings = std::iter::repeat_with(OnceCell::new).take(parsed.by_name().len());
        let firsts = std::iter::repeat_with(OnceCell::new).take(parsed.by_name().len());
        let writers = std::iter::repeat_with(OnceCell::new).take(parsed.by_name().len());
        Text {
            readings: readings.collect(),
            firsts: firsts.collect(),
            writers: writers.collect(),
            parsed,
        }
    }

    /// The `k`th command of the `n`th program, named `name`, whose commands are `indices`
    /// ([`shell::Parsed::by_name`]), as patterns see it.
    fn run<'t>(
        &'t self,
        n: usize,
        name: &'t str,
        indices: &[u32],
        k: usize,
    ) -> Option<crate::command::Run<'t>> {
        let command = self.parsed.command(*indices.get(k)? as usize)?;
        let readings = self
            .readings
            .get(n)?
            .get_or_init(|| std::iter::repeat_with(Default::default).take(indices.len()).collect());
        Some(crate::command::Run::new(command, name, readings.get(k)?))
    }

    /// The commands of the `n`th program ([`shell::Parsed::by_name`]) by their first operand,
    /// in ASCII lowercase: made once per text, in a time linear in their arguments (paid for
    /// with the text's reading).
    fn firsts<'t>(
        &'t self,
        n: usize,
        name: &'t str,
        indices: &[u32],
    ) -> Option<&'t BTreeMap<String, Vec<usize>>> {
        let run = |k: usize| self.run(n, name, indices, k);
        Some(self.firsts.get(n)?.get_or_init(|| first_operands(indices.len(), &run)))
    }
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
}

impl Scan<'_> {
    /// The units of work spent so far (see [`Effort`]), and the allowance.
    pub fn effort(&self) -> (u64, u64) {
        (self.effort.spent(), self.effort.limit())
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

/// Settings compiled from the config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools, reason = "independent facts the compiler found")]
pub struct Settings {
    /// The context window, in tokens; 0 for the model's (`hook_model::context_window`).
    pub window_tokens: u32,
    /// Remaining % at or above which fresh, moderate and depleted start.
    pub brackets: [u32; 3],
    /// Tokens of injected context per bracket.
    pub budget: [u32; 4],
    /// Sessions older than this many days are removed.
    pub max_age_days: u32,
    /// Whether some rule reads the context bracket (so the transcript must be read).
    pub needs_bracket: bool,
    /// Whether `UserPromptSubmit` counts prompts (for `every` and the bracket estimate).
    pub counts_prompts: bool,
    /// Whether compactions are counted (for `once = "compaction"` and the estimate).
    pub counts_compactions: bool,
    /// The events whose hooks open the session state: bit `i` = `EventKind::ALL[i]`.
    pub state_events: u64,
    /// Whether `PreCompact` writes a handoff (some rule recalls it).
    pub writes_handoff: bool,
}

impl Settings {
    /// The bracket for `remaining` percent of the window.
    pub fn bracket(&self, remaining: f64) -> Bracket {
        let [fresh, moderate, depleted] = self.brackets.map(f64::from);
        if remaining >= fresh {
            Bracket::Fresh
        } else if remaining >= moderate {
            Bracket::Moderate
        } else if remaining >= depleted {
            Bracket::Depleted
        } else {
            Bracket::Critical
        }
    }

    /// The remaining percent estimated from the prompts since the session started or was last
    /// compacted, when the transcript tells nothing: each prompt counts 1,500 tokens, plus 20%.
    pub fn estimate_remaining(&self, prompts: u64) -> f64 {
        let window = match self.window_tokens {
            0 => u32::try_from(hook_model::DEFAULT_CONTEXT_WINDOW).unwrap_or(u32::MAX),
            configured => configured,
        };
        #[allow(clippy::cast_precision_loss, reason = "prompt counts are far below 2^52")]
        let used = prompts as f64 * 1500.0 * 1.2 * 100.0 / f64::from(window);
        (100.0 - used).max(0.0)
    }

    /// The budget of injected context in `bracket`, in characters (tokens ≈ chars / 4).
    pub fn budget_chars(&self, bracket: Bracket) -> usize {
        self.budget[bracket as usize] as usize * 4
    }

    /// Whether the hooks of `kind` open the session state.
    pub fn opens_state(&self, kind: EventKind) -> bool {
        EventKind::ALL
            .iter()
            .position(|&k| k == kind)
            .is_some_and(|i| self.state_events >> i & 1 != 0)
    }
}

/// An artifact ready to evaluate events.
#[derive(Debug)]
pub struct Engine<'a> {
    artifact: Artifact<'a>,
    keywords: Keywords<'a>,
    globs: Matchers<'a>,
    regexes: Matchers<'a>,
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
            globs: Matchers::new(artifact.section(Section::Globs))?,
            regexes: Matchers::new(artifact.section(Section::Regexes))?,
            artifact,
        })
    }

    /// The artifact.
    pub fn artifact(&self) -> &Artifact<'a> {
        &self.artifact
    }

    /// The compiled settings.
    pub fn settings(&self) -> Settings {
        use settings::{BRACKETS as B, BUDGET as G};
        let words = self.artifact.settings();
        let w = |i| words.get(i);
        Settings {
            window_tokens: w(settings::WINDOW_TOKENS),
            brackets: [w(B), w(B + 1), w(B + 2)],
            budget: [w(G), w(G + 1), w(G + 2), w(G + 3)],
            max_age_days: w(settings::MAX_AGE_DAYS),
            needs_bracket: w(settings::FLAGS) & settings::NEEDS_BRACKET != 0,
            counts_prompts: w(settings::FLAGS) & settings::COUNTS_PROMPTS != 0,
            counts_compactions: w(settings::FLAGS) & settings::COUNTS_COMPACTIONS != 0,
            writes_handoff: w(settings::FLAGS) & settings::WRITES_HANDOFF != 0,
            state_events: u64::from(w(settings::STATE_EVENTS))
                | (u64::from(w(settings::STATE_EVENTS + 1)) << 32),
        }
    }

    /// The memory settings: namespaces, shorthands and private tags.
    ///
    /// # Errors
    ///
    /// When the settings section is damaged.
    pub fn memory_config(&self) -> Result<MemoryConfig<'a>, ArtifactError> {
        self.memory_config_with(&self.effort())
    }

    fn memory_config_with(&self, effort: &Effort) -> Result<MemoryConfig<'a>, ArtifactError> {
        let words = self.artifact.settings();
        let aliases = self.strings(effort, &words, settings::ALIASES_L)?;
        Ok(MemoryConfig {
            namespaces: self.strings(effort, &words, settings::NAMESPACES_L)?,
            aliases: aliases.chunks_exact(2).map(|p| (p[0], p[1])).collect(),
            private_tags: self.strings(effort, &words, settings::PRIVATE_TAGS_L)?,
        })
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
            for (slot, actual) in [
                (rule::AGENT_L, &state.agent),
                (rule::WORKFLOW_L, &state.workflow),
                (rule::TASK_L, &state.task),
            ] {
                let wanted = self.strings(effort, &r, slot)?;
                if !wanted.is_empty() {
                    tied = true;
                    met &= actual.as_deref().is_some_and(|a| wanted.contains(&a));
                }
            }
            if tied && met {
                active.push(self.kept(effort, r.str_ref(rule::ID_S))?);
            }
        }
        Ok(active)
    }

    /// Evaluates the rules of `facts.kind`.
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
        let mut evaluation = self.evaluate_rules(scan, facts)?;
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
                .fired
                .into_iter()
                .filter(|f| matches!(f.decision, Some(Decision::Deny | Decision::Ask)))
                .collect();
            evaluation.updated_input = Some(input);
        }
        Ok(evaluation)
    }

    /// The rules of `scan` that fire, without rewriting the call.
    fn evaluate_rules<'p>(
        &self,
        scan: &Scan<'p>,
        facts: &Facts<'p>,
    ) -> Result<Evaluation, ArtifactError> {
        let Scan { candidates, mode, effort, .. } = scan;
        let mode = *mode;
        // State-changing rules first, against the state as the event found it; every other
        // rule sees the new state (reference §2.2).
        let mut evaluation = Evaluation { state: facts.state.clone(), ..Evaluation::default() };
        let explain = mode == Mode::Explain;
        for changes_state in [true, false] {
            let state = if changes_state { facts.state.clone() } else { evaluation.state.clone() };
            for &index in candidates {
                let r = self.rule(effort, index as usize)?;
                if (r.get(rule::FLAGS) & flag::CHANGES_STATE != 0) != changes_state {
                    continue;
                }
                match self.check(effort, &r, facts, Some(&state), scan, explain)? {
                    Ok(()) => {
                        if changes_state {
                            self.apply(effort, &r, &mut evaluation.state)?;
                        }
                        evaluation.fired.push(self.fired(scan, index, &r, facts)?);
                        if r.get(rule::FLAGS) & flag::CAPTURE != 0 {
                            self.capture(effort, &r, facts, &mut evaluation.captures)?;
                        }
                    }
                    Err(miss) => {
                        if explain {
                            let id = self.kept(effort, r.str_ref(rule::ID_S))?;
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
        evaluation.fired.sort_by_key(|f| f.index);
        // A command line the `command` rules could not read in full may hide anything they
        // guard: the user is asked (fail safe, and said why).
        let exhausted = scan
            .shared
            .commands
            .borrow()
            .values()
            .any(|p| p.iter().any(|text| text.parsed.exhausted()));
        if exhausted && facts.kind == EventKind::PreToolUse {
            evaluation.fired.push(unreadable_command());
        }
        let order: BTreeMap<&str, usize> =
            evaluation.fired.iter().enumerate().map(|(i, f)| (f.id.as_str(), i)).rev().collect();
        evaluation.captures.sort_by_key(|c| order.get(c.rule.as_str()).copied());
        Ok(evaluation)
    }

    /// The memories rule `r` captures from its text.
    fn capture(
        &self,
        effort: &Effort,
        r: &Words<'a>,
        facts: &Facts<'_>,
        into: &mut Vec<Captured>,
    ) -> Result<(), ArtifactError> {
        let id = self.str(effort, r.str_ref(rule::ID_S))?;
        let spec = CaptureSpec {
            namespace: self.optional_str(effort, r, rule::CAPTURE_NAMESPACE_S)?,
            confidence: f32::from_bits(r.get(rule::CAPTURE_CONFIDENCE)),
            markers: r.get(rule::FLAGS) & flag::CAPTURE_MARKERS != 0,
        };
        let config = self.memory_config_with(effort)?;
        for text in self.texts(effort, facts, r.str_ref(rule::FIELD_S))? {
            // What it captures is at most the text, kept.
            memory_scan(effort, text.len(), &config)?;
            effort.keep(text.len())?;
            into.extend(memory::capture(id, &text, spec, &config));
        }
        Ok(())
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
            if r.get(rule::FLAGS) & flag::USES_STATE != 0
                && self.check(effort, &r, facts, None, scan, false)?.is_ok()
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Scans the event's texts for keywords and finds the rules to check: in [`Mode::Answer`]
    /// those the event always checks plus those a keyword found; in [`Mode::Explain`] every
    /// rule of the event. A scan depends only on the event and the payload, so one serves every
    /// evaluation of the event, before and after its session state is known.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged where this event reads it.
    pub fn scan<'p>(&self, facts: &Facts<'p>, mode: Mode) -> Result<Scan<'p>, ArtifactError> {
        let effort = Effort::for_evaluation(self.artifact.bytes().len(), text_bytes(facts.payload));
        let Some(e) = EventKind::ALL.iter().position(|&k| k == facts.kind) else {
            return Ok(Scan {
                scans: BTreeMap::new(),
                regex_matched: RefCell::default(),
                shared: Shared::default(),
                candidates: BTreeSet::new(),
                mode,
                effort,
            });
        };
        let scan_effort = effort;
        let effort = &scan_effort;
        let record = self.artifact.event(e)?;
        let bit = 1u64 << e;

        // Scan each text the event's keyword rules read, once.
        let mut scans: BTreeMap<(u32, u32), KeywordMatches> = BTreeMap::new();
        for entry in self
            .artifact
            .list(record.list_ref(event::FIELDS_L))?
            .iter()
            .collect::<Vec<_>>()
            .chunks_exact(2)
        {
            let field = StrRef { offset: entry[0], len: entry[1] };
            if scans.contains_key(&(field.offset, field.len)) {
                continue;
            }
            let mut matches = KeywordMatches::default();
            for text in self.texts(effort, facts, field)? {
                self.keywords.find(&text, &mut matches, effort)?;
            }
            scans.insert((field.offset, field.len), matches);
        }

        let candidates: BTreeSet<u32> = match mode {
            Mode::Explain => {
                let mut set = BTreeSet::new();
                for i in 0..self.artifact.rule_count() {
                    let r = self.rule(effort, i)?;
                    if events_mask(&r) & bit != 0 {
                        set.extend(u32::try_from(i).ok());
                    }
                }
                set
            }
            Mode::Answer => {
                let mut set: BTreeSet<u32> =
                    self.list(effort, record.list_ref(event::ALWAYS_L))?.iter().collect();
                for (&(offset, len), matches) in &scans {
                    let field = StrRef { offset, len };
                    for &pattern in matches.ids() {
                        for index in self.list(effort, self.keywords.postings(pattern))?.iter() {
                            let r = self.rule(effort, index as usize)?;
                            if events_mask(&r) & bit != 0 && r.str_ref(rule::FIELD_S) == field {
                                set.insert(index);
                            }
                        }
                    }
                }
                set
            }
        };
        let mut scan = Scan {
            scans,
            regex_matched: RefCell::default(),
            shared: Shared::default(),
            candidates,
            mode,
            effort: scan_effort,
        };
        if mode == Mode::Answer {
            let found = self.program_candidates(&scan, facts, &record, bit)?;
            scan.candidates.extend(found);
        }
        Ok(scan)
    }

    /// The rules found by the programs the event's default text runs (`event::PROGRAMS_L`),
    /// and by their commands' first operands.
    fn program_candidates<'p>(
        &self,
        scan: &Scan<'p>,
        facts: &Facts<'p>,
        record: &Words<'a>,
        bit: u64,
    ) -> Result<Vec<u32>, ArtifactError> {
        let effort = &scan.effort;
        let tool = facts.payload.get("tool_name").and_then(Value::as_str);
        if !matches!(tool, Some("Bash" | "PowerShell" | "Monitor")) {
            return Ok(Vec::new());
        }
        let list = self.list(effort, record.list_ref(event::PROGRAMS_L))?;
        let globs = self.list(effort, record.list_ref(event::GLOBS_L))?;
        let entries = list.len() / 5;
        if entries == 0 && globs.is_empty() {
            return Ok(Vec::new());
        }
        let string = |i: usize, at: usize| {
            self.str(effort, StrRef { offset: list.get(5 * i + at), len: list.get(5 * i + at + 1) })
        };
        let parsed = self.commands_of(effort, StrRef { offset: 0, len: 0 }, facts, scan)?;
        let mut found = Vec::new();
        // Patterns on globs: a program the text runs matches, and for those on what commands
        // write, some command writes (whichever: found once).
        let mut writes: Option<bool> = None;
        for entry in 0..globs.len() / 4 {
            let glob = StrRef { offset: globs.get(4 * entry), len: globs.get(4 * entry + 1) };
            if !self.glob_runs(effort, scan, (0, 0), glob, &parsed)? {
                continue;
            }
            if globs.get(4 * entry + 2) != 0 {
                let any = match writes {
                    Some(any) => any,
                    None => {
                        let commands = parsed.iter().map(|text| text.parsed.commands().len());
                        effort.spend(commands.sum::<usize>() as u64)?;
                        let any = parsed
                            .iter()
                            .any(|text| text.parsed.commands().any(|c| c.writes().len() > 0));
                        *writes.insert(any)
                    }
                };
                if !any {
                    continue;
                }
            }
            let index = globs.get(4 * entry + 3);
            if events_mask(&self.rule(effort, index as usize)?) & bit != 0 {
                found.push(index);
            }
        }
        for text in parsed.iter() {
            for (n, (program, indices)) in text.parsed.by_name().enumerate() {
                let name = program.to_ascii_lowercase();
                // The first entry not before `name` (the list is sorted), then those equal to it.
                let (mut low, mut high) = (0, entries);
                while low < high {
                    let middle = low + (high - low) / 2;
                    if string(middle, 0)? < name.as_str() {
                        low = middle + 1;
                    } else {
                        high = middle;
                    }
                }
                for i in low..entries {
                    if string(i, 0)? != name {
                        break;
                    }
                    let first = string(i, 2)?;
                    effort.spend(first.len() as u64)?;
                    if !first.is_empty()
                        && !text.firsts(n, program, indices).is_some_and(|f| f.contains_key(first))
                    {
                        continue;
                    }
                    let index = list.get(5 * i + 4);
                    if events_mask(&self.rule(effort, index as usize)?) & bit != 0 {
                        found.push(index);
                    }
                }
            }
        }
        Ok(found)
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
            default_text(facts.kind, facts.payload)
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

    fn optional_kept(
        &self,
        effort: &Effort,
        words: &Words<'a>,
        slot: usize,
    ) -> Result<Option<String>, ArtifactError> {
        let r = words.str_ref(slot);
        Ok(if r.len == 0 { None } else { Some(self.kept(effort, r)?) })
    }

    fn rule(&self, effort: &Effort, index: usize) -> Result<Words<'a>, ArtifactError> {
        effort.spend(1)?;
        self.artifact.rule(index)
    }

    fn strings(
        &self,
        effort: &Effort,
        words: &Words<'a>,
        slot: usize,
    ) -> Result<Vec<&'a str>, ArtifactError> {
        let list = self.list(effort, words.list_ref(slot))?;
        (0..list.len() / 2)
            .map(|i| self.str(effort, StrRef { offset: list.get(2 * i), len: list.get(2 * i + 1) }))
            .collect()
    }

    fn optional_str(
        &self,
        effort: &Effort,
        words: &Words<'a>,
        slot: usize,
    ) -> Result<Option<&'a str>, ArtifactError> {
        let text = self.str(effort, words.str_ref(slot))?;
        Ok((!text.is_empty()).then_some(text))
    }

    /// `Ok(Ok(()))` when every condition holds; `Ok(Err((key, detail)))` naming the first
    /// that does not (the detail only when `explain`). Without a `state`, the conditions on the
    /// session state, the bracket and `once` are taken to hold.
    #[allow(clippy::too_many_lines, reason = "one block per condition of the rule language")]
    fn check<'p>(
        &self,
        effort: &Effort,
        r: &Words<'a>,
        facts: &Facts<'p>,
        state: Option<&SessionState>,
        scan: &Scan<'p>,
        explain: bool,
    ) -> Result<Result<(), (&'static str, String)>, ArtifactError> {
        let miss = |key: &'static str, detail: &dyn Fn() -> String| {
            Ok(Err((key, if explain { detail() } else { String::new() })))
        };
        let payload = facts.payload;
        let tool = payload.get("tool_name").and_then(Value::as_str).unwrap_or("");

        let names = self.strings(effort, r, rule::TOOL_NAMES_L)?;
        let input = payload.get("tool_input");
        if !names.is_empty()
            && !names.iter().any(|name| hook_model::matcher_covers(name, tool, input))
        {
            return miss("tool", &|| format!("tool is `{tool}`, not one of {}", quoted(&names)));
        }
        let tool_regex = r.get(rule::TOOL_REGEX);
        if tool_regex != 0 && !self.regex(effort, tool_regex - 1, tool)? {
            return miss("tool", &|| format!("tool `{tool}` does not match the tool regex"));
        }

        let includes = self.matcher_list(effort, r.list_ref(rule::PATHS_L))?;
        let excludes = self.matcher_list(effort, r.list_ref(rule::PATHS_EXCLUDED_L))?;
        if !includes.is_empty() || !excludes.is_empty() {
            let Some(path) = tool_path(payload, facts.project_root) else {
                return miss("paths", &|| "the tool call names no file path".to_owned());
            };
            if !includes.is_empty() && !self.any_glob(effort, &includes, &path)? {
                return miss("paths", &|| format!("`{path}` matches none of the globs"));
            }
            if !excludes.is_empty() && self.any_glob(effort, &excludes, &path)? {
                return miss("paths", &|| format!("`{path}` is excluded by a `!` glob"));
            }
        }

        let fields: Vec<u32> = self.list(effort, r.list_ref(rule::FIELDS_L))?.iter().collect();
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

        let stars = self.strings(effort, r, rule::STAR_L)?;
        if !stars.is_empty() {
            let prompt = payload.get("prompt").and_then(Value::as_str).unwrap_or("");
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

        let modes = self.strings(effort, r, rule::PERMISSION_MODE_L)?;
        let mode = payload.get("permission_mode").and_then(Value::as_str).unwrap_or("");
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

        let has_terms = [rule::KEYWORDS_L, rule::KEYWORDS_ALL_L, rule::EXCLUDE_L]
            .iter()
            .any(|&s| r.list_ref(s).len > 0);
        if has_terms {
            let field = r.str_ref(rule::FIELD_S);
            let empty = KeywordMatches::default();
            let found = scan.scans.get(&(field.offset, field.len)).unwrap_or(&empty);
            let keywords: Vec<u32> =
                self.list(effort, r.list_ref(rule::KEYWORDS_L))?.iter().collect();
            if !keywords.is_empty() && !keywords.iter().any(|&k| found.contains(k)) {
                return miss("keywords", &|| "none of the keywords occurs in the text".to_owned());
            }
            let all = self.list(effort, r.list_ref(rule::KEYWORDS_ALL_L))?;
            if all.iter().any(|k| !found.contains(k)) {
                return miss("keywords_all", &|| {
                    "not every term of `keywords_all` occurs in the text".to_owned()
                });
            }
            let vetoes = self.list(effort, r.list_ref(rule::EXCLUDE_L))?;
            if vetoes.iter().any(|k| found.contains(k)) {
                return miss("exclude", &|| "an `exclude` term occurs in the text".to_owned());
            }
        }

        let regexes = self.matcher_list(effort, r.list_ref(rule::REGEX_L))?;
        if !regexes.is_empty() {
            let field = r.str_ref(rule::FIELD_S);
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

        if r.get(rule::FLAGS) & flag::CAPTURE_MARKERS != 0 {
            let config = self.memory_config_with(effort)?;
            let texts = self.texts(effort, facts, r.str_ref(rule::FIELD_S))?;
            for text in &texts {
                memory_scan(effort, text.len(), &config)?;
            }
            if !texts.iter().any(|text| memory::has_marker(text, &config)) {
                return miss("capture", &|| "the text has no memory marker".to_owned());
            }
        }

        // Claude Code continues the turn on a Stop's block and on its context alike: either
        // given again while a stop hook is active would loop (reference §2.2).
        let code = r.get(rule::KINDS).to_le_bytes()[1];
        let continues = code == decision::BLOCK || r.str_ref(rule::CONTEXT_S).len > 0;
        if continues
            && matches!(facts.kind, EventKind::Stop | EventKind::SubagentStop)
            && payload.get("stop_hook_active").and_then(Value::as_bool) == Some(true)
            && r.get(rule::FLAGS) & flag::REPEAT == 0
        {
            return miss("repeat", &|| {
                "a stop hook is already active and the rule has no `repeat = true`".to_owned()
            });
        }
        Ok(Ok(()))
    }

    /// Rule `r`'s `command` patterns whose `program` matches a program `parsed` runs, decoded;
    /// the others are passed over without reading more than their programs.
    fn command_patterns<'p>(
        &self,
        effort: &Effort,
        r: &Words<'a>,
        parsed: &[Text],
        scan: &Scan<'p>,
    ) -> Result<Patterns<'a>, ArtifactError> {
        let field = field_key_of(r.str_ref(rule::FIELD_S));
        let list = self.list(effort, r.list_ref(rule::COMMAND_L))?;
        let entries = list.len() / 3;
        let entry = |i: usize| {
            (list.get(3 * i), StrRef { offset: list.get(3 * i + 1), len: list.get(3 * i + 2) })
        };
        let mut patterns = Vec::new();
        let mut start = 0;
        while start < entries {
            // `[NEXT, n, 0]` and the pattern's `n` entries.
            let (next, count) = entry(start);
            if next != command::NEXT {
                return Err(ArtifactError::Malformed("command pattern"));
            }
            let end = start
                .checked_add(1 + count.offset as usize)
                .filter(|&end| end <= entries)
                .ok_or(ArtifactError::Malformed("command pattern"))?;
            effort.spend(1)?;
            let pattern = start + 1..end;
            start = end;
            // Its programs first: most patterns stop there. Each glob is tried on the text's
            // names once per event, whichever rules name it.
            let mut runs = false;
            for (kind, glob) in pattern.clone().map(entry) {
                if kind != command::PROGRAM || runs {
                    break;
                }
                runs = self.glob_runs(effort, scan, field, glob, parsed)?;
            }
            if !runs {
                continue;
            }
            // Its program, subcommand and writes: enough to find the commands it may match. The
            // rest is read when there are some (`complete_pattern`).
            // Made at their size: most patterns are one program and a subcommand word or two.
            let count = |wanted: u32| {
                pattern.clone().map(entry).take_while(|(kind, _)| *kind == wanted).count()
            };
            let programs = count(command::PROGRAM);
            let words = pattern.clone().skip(programs).map(entry);
            let subcommand = words.take_while(|(kind, _)| *kind == command::SUBCOMMAND).count();
            let mut candidate = Pattern {
                program: Vec::with_capacity(programs),
                subcommand: Vec::with_capacity(subcommand),
                ..Pattern::default()
            };
            let mut rest = pattern.end;
            for (at, (kind, text)) in pattern.clone().map(|i| (i, entry(i))) {
                match kind {
                    command::PROGRAM => candidate.program.push(self.str(effort, text)?),
                    command::SUBCOMMAND => candidate.subcommand.push(self.str(effort, text)?),
                    command::WRITE => candidate.writes.push(self.str(effort, text)?),
                    command::FLAG | command::ARG | command::PIPED_FROM => {
                        rest = at;
                        break;
                    }
                    _ => return Err(ArtifactError::Malformed("command pattern")),
                }
            }
            patterns.push((candidate, rest..pattern.end));
        }
        Ok(patterns)
    }

    /// Whether a program the texts of `field` run (`parsed`) matches the `program` glob `glob`:
    /// found once per event, whichever rules name the glob (the compiler stores each once).
    fn glob_runs(
        &self,
        effort: &Effort,
        scan: &Scan<'_>,
        field: (u32, u32),
        glob: StrRef,
        parsed: &[Text],
    ) -> Result<bool, ArtifactError> {
        let key = (field.0, field.1, glob.offset, glob.len);
        effort.spend(1)?;
        if let Some(&found) = scan.shared.programs.borrow().get(&key) {
            return Ok(found);
        }
        let single = Pattern { program: vec![self.str(effort, glob)?], ..Pattern::default() };
        let mut charge = |units: usize| effort.spend(units as u64);
        let mut found = false;
        for (name, _) in parsed.iter().flat_map(|text| text.parsed.by_name()) {
            if single.runs(name, &mut charge)? {
                found = true;
                break;
            }
        }
        scan.shared.programs.borrow_mut().insert(key, found);
        Ok(found)
    }

    /// Reads the rest of a `command` pattern (its flags, args and pipes) from the entries
    /// `range` of rule `r`'s list.
    fn complete_pattern(
        &self,
        effort: &Effort,
        r: &Words<'a>,
        pattern: &mut Pattern<&'a str>,
        range: Range<usize>,
    ) -> Result<(), ArtifactError> {
        let list = self.list(effort, r.list_ref(rule::COMMAND_L))?;
        let count = |kind: u32| range.clone().filter(|&i| list.get(3 * i) == kind).count();
        pattern.flags.reserve_exact(count(command::FLAG));
        pattern.args.reserve_exact(count(command::ARG));
        for i in range {
            let text = StrRef { offset: list.get(3 * i + 1), len: list.get(3 * i + 2) };
            match list.get(3 * i) {
                command::FLAG => pattern.flags.push(self.str(effort, text)?),
                command::ARG => pattern.args.push(self.str(effort, text)?),
                command::PIPED_FROM => pattern.piped_from.push(self.str(effort, text)?),
                _ => return Err(ArtifactError::Malformed("command pattern")),
            }
        }
        Ok(())
    }

    /// The commands the texts rule `r` reads run, read once per text and event.
    fn commands<'p>(
        &self,
        effort: &Effort,
        r: &Words<'a>,
        facts: &Facts<'p>,
        scan: &Scan<'p>,
    ) -> Result<Commands<'p>, ArtifactError> {
        self.commands_of(effort, r.str_ref(rule::FIELD_S), facts, scan)
    }

    /// The commands the texts of `field` run, read once per text and event.
    fn commands_of<'p>(
        &self,
        effort: &Effort,
        field: StrRef,
        facts: &Facts<'p>,
        scan: &Scan<'p>,
    ) -> Result<Commands<'p>, ArtifactError> {
        let key = field_key_of(field);
        if let Some(parsed) = scan.shared.commands.borrow().get(&key) {
            return Ok(parsed.clone());
        }
        let tool = facts.payload.get("tool_name").and_then(Value::as_str);
        let dialect = if tool == Some("PowerShell") {
            shell::Dialect::PowerShell
        } else {
            shell::Dialect::Posix
        };
        let mut parsed = Vec::new();
        for text in self.texts(effort, facts, field)? {
            // Read once per event (not per rule), so its work is bounded by the text
            // (`shell::max_word_bytes`); charged as done: the text read, the words made and kept.
            let len = text.len();
            let commands = shell::parse(text, dialect);
            effort.scan(len.saturating_add(commands.word_bytes()))?;
            effort.keep(commands.word_bytes())?;
            parsed.push(Text::new(commands));
        }
        let parsed = std::rc::Rc::new(parsed);
        scan.shared.commands.borrow_mut().insert(key, parsed.clone());
        Ok(parsed)
    }

    /// For a rule with a `command` condition, the first command of its text that one of its
    /// patterns matches, read back.
    fn matched_command<'p>(
        &self,
        effort: &Effort,
        r: &Words<'a>,
        facts: &Facts<'p>,
        scan: &Scan<'p>,
    ) -> Result<CommandMatch, ArtifactError> {
        let list = r.list_ref(rule::COMMAND_L);
        if list.len == 0 {
            return Ok(CommandMatch::NoCondition);
        }
        let field = field_key_of(r.str_ref(rule::FIELD_S));
        let key = (field.0, field.1, list.offset, list.len);
        if let Some(known) = scan.shared.matched.borrow().get(&key) {
            return Ok(known.clone());
        }
        let found = self.match_command(effort, r, facts, scan)?;
        scan.shared.matched.borrow_mut().insert(key, found.clone());
        Ok(found)
    }

    /// [`Engine::matched_command`], found.
    fn match_command<'p>(
        &self,
        effort: &Effort,
        r: &Words<'a>,
        facts: &Facts<'p>,
        scan: &Scan<'p>,
    ) -> Result<CommandMatch, ArtifactError> {
        let parsed = self.commands(effort, r, facts, scan)?;
        let mut patterns = self.command_patterns(effort, r, &parsed, scan)?;
        if patterns.is_empty() {
            return Ok(CommandMatch::Missed);
        }
        // Which patterns have been read whole.
        let mut complete = vec![false; patterns.len()];
        let mut charge = |units: usize| effort.spend(units as u64);
        // The programs a text runs are few, its commands may be thousands: each pattern is
        // tried on the commands of the names its `program` matches, and a pattern whose
        // subcommand begins with plain words only on the commands whose first operand is one
        // (their positions, from an index made once per program and event). The commands are
        // gone through in order, each pattern in turn on each: the first command some pattern
        // matches is the one shown, and every step is charged.
        for text in parsed.iter() {
            for (n, (name, indices)) in text.parsed.by_name().enumerate() {
                let run = |k: usize| text.run(n, name, indices, k);
                let mut first = None;
                let mut wanted: Vec<Walk<'_>> = Vec::new();
                for (p, (pattern, _)) in patterns.iter().enumerate() {
                    if !pattern.runs(name, &mut charge)? {
                        continue;
                    }
                    let Some(words) = pattern.first_words() else {
                        // A pattern on what a command writes tries only the commands that write.
                        let positions = (!pattern.writes.is_empty()).then(|| {
                            let writers = text.writers.get(n).map(|cell| {
                                cell.get_or_init(|| {
                                    (0..indices.len())
                                        .filter(|&k| {
                                            run(k).is_some_and(|r| r.command().writes().len() > 0)
                                        })
                                        .collect()
                                })
                            });
                            Cow::Borrowed(writers.map_or(&[][..], Vec::as_slice))
                        });
                        wanted.push(Walk { pattern: p, positions, cursor: 0 });
                        continue;
                    };
                    let firsts = first.get_or_insert_with(|| text.firsts(n, name, indices));
                    let mut lists = Vec::new();
                    for word in words {
                        effort.spend(word.len() as u64)?;
                        let listed = firsts.and_then(|f| f.get(&word.to_ascii_lowercase()));
                        lists.extend(listed.map(Vec::as_slice));
                    }
                    let positions = match lists.as_slice() {
                        [] => continue,
                        [one] => Cow::Borrowed(*one),
                        many => {
                            let mut all: Vec<usize> = many.concat();
                            effort.spend(all.len() as u64)?;
                            all.sort_unstable();
                            all.dedup();
                            Cow::Owned(all)
                        }
                    };
                    wanted.push(Walk { pattern: p, positions: Some(positions), cursor: 0 });
                }
                let mut at = 0;
                loop {
                    // The next command some pattern may match.
                    effort.spend(wanted.len() as u64)?;
                    let mut next: Option<usize> = None;
                    for Walk { positions, cursor, .. } in &mut wanted {
                        let head = match positions {
                            None => Some(at).filter(|&k| k < indices.len()),
                            Some(list) => {
                                while list.get(*cursor).is_some_and(|&k| k < at) {
                                    *cursor += 1;
                                }
                                list.get(*cursor).copied()
                            }
                        };
                        next = match (next, head) {
                            (Some(a), Some(b)) => Some(a.min(b)),
                            (a, b) => a.or(b),
                        };
                    }
                    let Some(k) = next else { break };
                    let Some(command) = run(k) else { break };
                    for Walk { pattern: p, positions, cursor } in &wanted {
                        if positions.as_ref().is_some_and(|list| list.get(*cursor) != Some(&k)) {
                            continue;
                        }
                        if !std::mem::replace(&mut complete[*p], true) {
                            let (pattern, range) = &mut patterns[*p];
                            self.complete_pattern(effort, r, pattern, range.clone())?;
                        }
                        if patterns[*p].0.matches_run(&command, &mut charge)? {
                            let shown = command.command().to_string();
                            effort.keep(shown.len())?;
                            return Ok(CommandMatch::Matched(shown));
                        }
                    }
                    at = k + 1;
                }
            }
        }
        Ok(CommandMatch::Missed)
    }

    /// The conditions on the session state, the bracket and `once`.
    fn check_state(
        &self,
        effort: &Effort,
        r: &Words<'a>,
        facts: &Facts<'_>,
        state: &SessionState,
        explain: bool,
    ) -> Result<Result<(), (&'static str, String)>, ArtifactError> {
        let miss = |key: &'static str, detail: &dyn Fn() -> String| {
            Ok(Err((key, if explain { detail() } else { String::new() })))
        };
        for (key, slot, actual) in [
            ("agent", rule::AGENT_L, &state.agent),
            ("workflow", rule::WORKFLOW_L, &state.workflow),
            ("task", rule::TASK_L, &state.task),
        ] {
            let wanted = self.strings(effort, r, slot)?;
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
        let flags = self.strings(effort, r, rule::FLAGS_L)?;
        if let Some(flag) = flags.iter().find(|f| !state.flags.contains(**f)) {
            return miss("flags", &|| format!("flag `{flag}` is not set"));
        }
        let not_flags = self.strings(effort, r, rule::NOT_FLAGS_L)?;
        if let Some(flag) = not_flags.iter().find(|f| state.flags.contains(**f)) {
            return miss("not_flags", &|| format!("flag `{flag}` is set"));
        }
        let every = u64::from(r.get(rule::EVERY));
        if every > 0 && (state.prompt_count == 0 || !state.prompt_count.is_multiple_of(every)) {
            return miss("every", &|| {
                format!("prompt {} is not a multiple of {every}", state.prompt_count)
            });
        }
        let brackets = r.get(rule::BRACKETS);
        if brackets != 0 && brackets & facts.bracket.bit() == 0 {
            return miss("bracket", &|| format!("the bracket is {}", facts.bracket.as_str()));
        }

        let once = r.get(rule::KINDS).to_le_bytes()[2];
        if once != 0 {
            let id = self.str(effort, r.str_ref(rule::ID_S))?;
            if state.already_injected(id, once) {
                return miss("once", &|| {
                    if once == once::SESSION {
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

    fn apply(
        &self,
        effort: &Effort,
        r: &Words<'a>,
        state: &mut SessionState,
    ) -> Result<(), ArtifactError> {
        let unset = r.get(rule::UNSET);
        if unset & 1 != 0 {
            state.agent = None;
        }
        if unset & 2 != 0 {
            state.workflow = None;
        }
        if unset & 4 != 0 {
            state.task = None;
        }
        for flag in self.strings(effort, r, rule::UNSET_FLAGS_L)? {
            state.flags.remove(flag);
        }
        if let Some(agent) = self.optional_kept(effort, r, rule::SET_AGENT_S)? {
            state.agent = Some(agent);
        }
        if let Some(workflow) = self.optional_kept(effort, r, rule::SET_WORKFLOW_S)? {
            state.workflow = Some(workflow);
        }
        if let Some(task) = self.optional_kept(effort, r, rule::SET_TASK_S)? {
            state.task = Some(task);
        }
        for flag in self.strings(effort, r, rule::SET_FLAGS_L)? {
            effort.keep(flag.len())?;
            state.flags.insert(flag.to_owned());
        }
        Ok(())
    }

    /// A rule's `rewrite`: (input field, template) pairs.
    fn rewrite(
        &self,
        effort: &Effort,
        r: &Words<'a>,
    ) -> Result<Vec<(String, String)>, ArtifactError> {
        let strings = self.strings(effort, r, rule::REWRITE_L)?;
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
        r: &Words<'a>,
        root: Option<&Path>,
    ) -> Result<Vec<String>, ArtifactError> {
        let paths = self.strings(effort, r, rule::WATCH_PATHS_L)?;
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

    fn fired<'p>(
        &self,
        scan: &Scan<'p>,
        index: u32,
        r: &Words<'a>,
        facts: &Facts<'p>,
    ) -> Result<Fired, ArtifactError> {
        let effort = &scan.effort;
        let kinds = r.get(rule::KINDS);
        let flags = r.get(rule::FLAGS);
        let recall = if flags & flag::RECALL == 0 {
            None
        } else {
            let word = r.get(rule::RECALL);
            // The same for every rule of the event: found once.
            let (from, terms) = if word & recall::HANDOFF != 0 {
                (RecallFrom::Handoff, Vec::new())
            } else if word & recall::PROMPT != 0 {
                let terms = match scan.shared.prompt_terms.get() {
                    Some(terms) => terms,
                    None => {
                        let text = default_text(facts.kind, facts.payload).join("\n");
                        effort.scan(text.len())?;
                        let terms = memory::first_terms(&text, memory::MAX_QUERY_TERMS);
                        scan.shared.prompt_terms.get_or_init(|| terms)
                    }
                };
                (RecallFrom::Prompt, terms.clone())
            } else {
                let terms = match scan.shared.path_terms.get() {
                    Some(terms) => terms,
                    None => {
                        let path = tool_path(facts.payload, facts.project_root).unwrap_or_default();
                        effort.scan(path.len())?;
                        scan.shared.path_terms.get_or_init(|| memory::path_terms(&path))
                    }
                };
                (RecallFrom::Path, terms.clone())
            };
            Some(Recall { from, max: (word & recall::MAX) as usize, terms })
        };
        Ok(Fired {
            index,
            id: self.kept(effort, r.str_ref(rule::ID_S))?,
            layer: kinds.to_le_bytes()[0],
            priority: r.get(rule::PRIORITY).cast_signed(),
            pinned: flags & flag::PINNED != 0,
            context: self.optional_kept(effort, r, rule::CONTEXT_S)?,
            decision: Decision::from_code(kinds.to_le_bytes()[1]),
            reason: self.optional_kept(effort, r, rule::REASON_S)?,
            message: self.optional_kept(effort, r, rule::MESSAGE_S)?,
            stop: self.optional_kept(effort, r, rule::STOP_S)?,
            session_title: self.optional_kept(effort, r, rule::SESSION_TITLE_S)?,
            watch_paths: self.watch_paths(effort, r, facts.project_root)?,
            rewrite: self.rewrite(effort, r)?,
            once: kinds.to_le_bytes()[2],
            recall,
            command: match self.matched_command(effort, r, facts, scan)? {
                CommandMatch::Matched(shown) => Some(shown),
                CommandMatch::NoCondition | CommandMatch::Missed => None,
            },
        })
    }
}

/// The positions (among `count` commands of one program, `run(k)`) of the commands with each
/// first operand, in ASCII lowercase.
fn first_operands<'t>(
    count: usize,
    run: &impl Fn(usize) -> Option<crate::command::Run<'t>>,
) -> BTreeMap<String, Vec<usize>> {
    let mut firsts: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    // A program's commands share a few first operands: each is made a key (lowercased, owned)
    // once, and found by a borrowed lowercase copy after that.
    let mut buffer = [0u8; 16];
    for k in 0..count {
        let Some(operand) = run(k).as_ref().and_then(crate::command::Run::first_operand) else {
            continue;
        };
        let short = crate::shell::lowercase(operand, &mut buffer);
        match firsts.get_mut(short).filter(|_| !short.is_empty() || operand.is_empty()) {
            Some(positions) => positions.push(k),
            None => firsts.entry(operand.to_ascii_lowercase()).or_default().push(k),
        }
    }
    firsts
}

/// The key of a field's texts: every rule reading the default text (an empty field) shares one.
fn field_key_of(field: StrRef) -> (u32, u32) {
    if field.len == 0 { (0, 0) } else { (field.offset, field.len) }
}

/// How a rule's `command` condition went.
#[derive(Clone, Debug, PartialEq, Eq)]
enum CommandMatch {
    /// The rule has none.
    NoCondition,
    /// No command of the text matches it.
    Missed,
    /// This command (read back) matches it.
    Matched(String),
}

/// What fires when a command line nests `eval`, `bash -c` or backticks too deeply to be read
/// in full by the rules that guard commands.
fn unreadable_command() -> Fired {
    Fired {
        index: u32::MAX,
        id: UNREADABLE_COMMAND.to_owned(),
        layer: 0,
        priority: 0,
        pinned: false,
        context: None,
        decision: Some(Decision::Ask),
        reason: Some(
            "This command nests eval, bash -c or backticks too deeply for hookpack's guards to \
             read in full. Write it plainly, one command per line, so that it can be checked."
                .to_owned(),
        ),
        message: None,
        stop: None,
        session_title: None,
        watch_paths: Vec::new(),
        rewrite: Vec::new(),
        once: 0,
        recall: None,
        command: None,
    }
}

/// The id of [`unreadable_command`]'s answer.
const UNREADABLE_COMMAND: &str = "hookpack/unreadable-command";

/// The call's input with the `rewrite`s of the rules that fired applied in rule order (each
/// template sees what the rules before it made), or `None` when none applies.
fn rewritten(
    effort: &Effort,
    facts: &Facts<'_>,
    fired: &[Fired],
) -> Result<Option<Map<String, Value>>, ArtifactError> {
    if facts.kind != EventKind::PreToolUse || fired.iter().all(|f| f.rewrite.is_empty()) {
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

/// Charges what reading a text of `len` bytes for memories costs: each `<` is checked against
/// every private tag, each marker against every namespace and shorthand.
fn memory_scan(
    effort: &Effort,
    len: usize,
    config: &MemoryConfig<'_>,
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

fn events_mask(r: &Words<'_>) -> u64 {
    u64::from(r.get(rule::EVENTS)) | (u64::from(r.get(rule::EVENTS + 1)) << 32)
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

/// The tool call's file path (`file_path`, `notebook_path` or `path`) with `/` separators,
/// relative to `root` when inside it.
pub fn tool_path(payload: &Value, root: Option<&Path>) -> Option<String> {
    let input = payload.get("tool_input")?;
    let path =
        ["file_path", "notebook_path", "path"].iter().find_map(|k| input.get(*k)?.as_str())?;
    let path = path.replace('\\', "/");
    if let Some(root) = root.and_then(Path::to_str) {
        let root = root.replace('\\', "/");
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
}
