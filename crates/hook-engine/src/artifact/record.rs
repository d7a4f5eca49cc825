//! The rule record's one codec. The compiler fills a [`RuleRecord`] and writes its words
//! ([`RuleRecord::words`]); the engine reads the same words in place through a [`RuleView`],
//! whose every accessor decodes one field to its type. The word layout is [`super::format::rule`];
//! no other code reads or writes a rule's words, so the two sides cannot disagree.
//!
//! The view trusts nothing: a word a damaged artifact holds decodes to some value of the
//! field's type (an unknown layer to the default one, an unknown decision to none), never to
//! a panic; references are checked where they are followed ([`super::Artifact::str`]).

use super::format::{decision, event, flag, once, recall, rule, settings};
use super::{ListRef, StrRef, Words};
use crate::rule::{Decision, EventSet, Layer, Once, RecallFrom, RecallSpec};
use crate::session::{Bracket, Settings};

/// A rule as its record holds it: strings and lists as references into their sections.
#[derive(Clone, Debug, Default, PartialEq)]
#[allow(clippy::struct_excessive_bools, reason = "the rule's flags, one field per key")]
pub struct RuleRecord {
    /// `pack/rule`.
    pub id: StrRef,
    /// The events it answers.
    pub events: EventSet,
    /// `pinned = true`.
    pub pinned: bool,
    /// `fail = "closed"`.
    pub fail_closed: bool,
    /// `repeat = true`.
    pub repeat: bool,
    /// It has a `context` (which may be empty).
    pub has_context: bool,
    /// It changes the session state (`set` or `unset`): such rules are evaluated first.
    pub changes_state: bool,
    /// It reads or changes the session state, or needs it for its bracket or `once`.
    pub uses_state: bool,
    /// `priority`.
    pub priority: i32,
    /// `layer`.
    pub layer: Layer,
    /// `decision`.
    pub decision: Option<Decision>,
    /// `once`.
    pub once: Option<Once>,
    /// `field`; empty for the event's default text.
    pub field: StrRef,
    /// `context`.
    pub context: StrRef,
    /// `reason`.
    pub reason: StrRef,
    /// `message`.
    pub message: StrRef,
    /// `stop`: the `stopReason` of a `continue: false`; empty for none.
    pub stop: StrRef,
    /// `session_title`; empty for none.
    pub session_title: StrRef,
    /// Exact tool names: a list of strings.
    pub tool_names: ListRef,
    /// A tool regex: its index among the regexes.
    pub tool_regex: Option<u32>,
    /// `paths`: glob indices.
    pub paths: ListRef,
    /// `paths` excludes (`!glob`): glob indices.
    pub paths_excluded: ListRef,
    /// `keywords`: keyword ids.
    pub keywords: ListRef,
    /// `keywords_all`: keyword ids.
    pub keywords_all: ListRef,
    /// `exclude`: keyword ids.
    pub exclude: ListRef,
    /// `regex`: regex indices.
    pub regex: ListRef,
    /// `star`: strings.
    pub star: ListRef,
    /// `fields`: (path, JSON array of values) string pairs, 4 words each.
    pub fields: ListRef,
    /// `agent`: strings.
    pub agent: ListRef,
    /// `workflow`: strings.
    pub workflow: ListRef,
    /// `task`: strings.
    pub task: ListRef,
    /// `flags`: strings.
    pub flags: ListRef,
    /// `not_flags`: strings.
    pub not_flags: ListRef,
    /// `permission_mode`: strings.
    pub permission_mode: ListRef,
    /// `command`: the patterns, [`super::format::command`].
    pub command: ListRef,
    /// `branch`: globs over the current branch, strings (`!` in front: excluded).
    pub branch: ListRef,
    /// `every`.
    pub every: Option<u32>,
    /// `bracket`.
    pub brackets: Brackets,
    /// `set.agent`; empty for none.
    pub set_agent: StrRef,
    /// `set.workflow`; empty for none.
    pub set_workflow: StrRef,
    /// `set.task`; empty for none.
    pub set_task: StrRef,
    /// `set.flags`: strings.
    pub set_flags: ListRef,
    /// `unset`: which of agent, workflow and task.
    pub unset: Unset,
    /// `unset.flags`: strings.
    pub unset_flags: ListRef,
    /// `capture`.
    pub capture: Option<CaptureRecord>,
    /// `observe = true`.
    pub observe: bool,
    /// `branch_changed = true`.
    pub branch_changed: bool,
    /// `export = true`.
    pub export: bool,
    /// `recall`.
    pub recall: Option<RecallSpec>,
    /// `watch_paths`: strings, relative to the project.
    pub watch_paths: ListRef,
    /// `rewrite`: (input field, template) string pairs.
    pub rewrite: ListRef,
}

/// The brackets a rule's `bracket` names; none named: any bracket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Brackets(u32);

impl Brackets {
    /// The set of these brackets.
    pub fn of(brackets: impl IntoIterator<Item = Bracket>) -> Brackets {
        Brackets(brackets.into_iter().fold(0, |bits, b| bits | Brackets::bit(b)))
    }

    /// Whether a rule with these brackets holds in `bracket`.
    pub fn admits(self, bracket: Bracket) -> bool {
        self.0 == 0 || self.0 & Brackets::bit(bracket) != 0
    }

    fn bit(bracket: Bracket) -> u32 {
        1 << (bracket as u32)
    }
}

/// Which of the state's roles a rule's `unset` clears.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Unset {
    /// `unset.agent`.
    pub agent: bool,
    /// `unset.workflow`.
    pub workflow: bool,
    /// `unset.task`.
    pub task: bool,
}

/// A rule's `capture`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CaptureRecord {
    /// `namespace`; empty for the marker's own.
    pub namespace: StrRef,
    /// `confidence`.
    pub confidence: f32,
    /// `markers = true`: only marked text is captured.
    pub markers: bool,
    /// `signal = true`: each match of the rule's regexes is a signal.
    pub signal: bool,
}

impl RuleRecord {
    /// Its words, in [`super::format::rule`]'s layout.
    pub fn words(&self) -> [u32; rule::LEN] {
        let mut w = [0u32; rule::LEN];
        let mut put_str = |at: usize, s: StrRef| [w[at], w[at + 1]] = [s.offset, s.len];
        put_str(rule::ID_S, self.id);
        put_str(rule::FIELD_S, self.field);
        put_str(rule::CONTEXT_S, self.context);
        put_str(rule::REASON_S, self.reason);
        put_str(rule::MESSAGE_S, self.message);
        put_str(rule::STOP_S, self.stop);
        put_str(rule::SESSION_TITLE_S, self.session_title);
        put_str(rule::SET_AGENT_S, self.set_agent);
        put_str(rule::SET_WORKFLOW_S, self.set_workflow);
        put_str(rule::SET_TASK_S, self.set_task);
        if let Some(capture) = self.capture {
            put_str(rule::CAPTURE_NAMESPACE_S, capture.namespace);
        }
        for (at, list) in [
            (rule::TOOL_NAMES_L, self.tool_names),
            (rule::PATHS_L, self.paths),
            (rule::PATHS_EXCLUDED_L, self.paths_excluded),
            (rule::KEYWORDS_L, self.keywords),
            (rule::KEYWORDS_ALL_L, self.keywords_all),
            (rule::EXCLUDE_L, self.exclude),
            (rule::REGEX_L, self.regex),
            (rule::STAR_L, self.star),
            (rule::FIELDS_L, self.fields),
            (rule::AGENT_L, self.agent),
            (rule::WORKFLOW_L, self.workflow),
            (rule::TASK_L, self.task),
            (rule::FLAGS_L, self.flags),
            (rule::NOT_FLAGS_L, self.not_flags),
            (rule::PERMISSION_MODE_L, self.permission_mode),
            (rule::SET_FLAGS_L, self.set_flags),
            (rule::UNSET_FLAGS_L, self.unset_flags),
            (rule::WATCH_PATHS_L, self.watch_paths),
            (rule::REWRITE_L, self.rewrite),
            (rule::COMMAND_L, self.command),
            (rule::BRANCH_L, self.branch),
        ] {
            [w[at], w[at + 1]] = [list.offset, list.len];
        }
        let events = self.events.bits().to_le_bytes();
        w[rule::EVENTS] = u32::from_le_bytes([events[0], events[1], events[2], events[3]]);
        w[rule::EVENTS + 1] = u32::from_le_bytes([events[4], events[5], events[6], events[7]]);
        let capture = self.capture.is_some();
        let markers = self.capture.is_some_and(|c| c.markers);
        let signal = self.capture.is_some_and(|c| c.signal);
        w[rule::FLAGS] = [
            (self.pinned, flag::PINNED),
            (self.fail_closed, flag::FAIL_CLOSED),
            (self.repeat, flag::REPEAT),
            (capture, flag::CAPTURE),
            (self.recall.is_some(), flag::RECALL),
            (self.changes_state, flag::CHANGES_STATE),
            (self.has_context, flag::CONTEXT),
            (self.uses_state, flag::USES_STATE),
            (signal, flag::CAPTURE_SIGNAL),
            (self.observe, flag::OBSERVE),
            (self.branch_changed, flag::BRANCH_CHANGED),
            (self.export, flag::EXPORT),
            (markers, flag::CAPTURE_MARKERS),
        ]
        .into_iter()
        .filter(|&(on, _)| on)
        .fold(0, |bits, (_, bit)| bits | bit);
        w[rule::PRIORITY] = self.priority.cast_unsigned();
        w[rule::KINDS] = u32::from_le_bytes([
            self.layer as u8,
            decision_code(self.decision),
            once_code(self.once),
            0,
        ]);
        w[rule::TOOL_REGEX] = self.tool_regex.map_or(0, |i| i.saturating_add(1));
        w[rule::EVERY] = self.every.unwrap_or(0);
        w[rule::BRACKETS] = self.brackets.0;
        w[rule::UNSET] = u32::from(self.unset.agent)
            | (u32::from(self.unset.workflow) << 1)
            | (u32::from(self.unset.task) << 2);
        w[rule::CAPTURE_CONFIDENCE] = self.capture.map_or(0, |c| c.confidence.to_bits());
        w[rule::RECALL] = self.recall.map_or(0, |r| {
            r.max.min(recall::MAX)
                | match r.from {
                    RecallFrom::Path => 0,
                    RecallFrom::Prompt => recall::PROMPT,
                    RecallFrom::Handoff => recall::HANDOFF,
                    RecallFrom::Sessions => recall::SESSIONS,
                }
        });
        w
    }
}

/// A rule's record, read in place: each accessor decodes one field.
#[derive(Clone, Copy, Debug)]
pub struct RuleView<'a>(Words<'a>);

impl<'a> RuleView<'a> {
    /// The record `words` hold.
    pub fn new(words: Words<'a>) -> RuleView<'a> {
        RuleView(words)
    }

    fn flag(&self, bit: u32) -> bool {
        self.0.get(rule::FLAGS) & bit != 0
    }

    fn kinds(&self) -> [u8; 4] {
        self.0.get(rule::KINDS).to_le_bytes()
    }

    /// `pack/rule`.
    pub fn id(&self) -> StrRef {
        self.0.str_ref(rule::ID_S)
    }

    /// The events it answers.
    pub fn events(&self) -> EventSet {
        let (low, high) = (self.0.get(rule::EVENTS), self.0.get(rule::EVENTS + 1));
        EventSet::from_bits(u64::from(low) | (u64::from(high) << 32))
    }

    /// `pinned = true`.
    pub fn pinned(&self) -> bool {
        self.flag(flag::PINNED)
    }

    /// `fail = "closed"`.
    pub fn fail_closed(&self) -> bool {
        self.flag(flag::FAIL_CLOSED)
    }

    /// `repeat = true`.
    pub fn repeat(&self) -> bool {
        self.flag(flag::REPEAT)
    }

    /// It has a `context` (which may be empty).
    pub fn has_context(&self) -> bool {
        self.flag(flag::CONTEXT)
    }

    /// It changes the session state.
    pub fn changes_state(&self) -> bool {
        self.flag(flag::CHANGES_STATE)
    }

    /// It reads or changes the session state, or needs it for its bracket or `once`.
    pub fn uses_state(&self) -> bool {
        self.flag(flag::USES_STATE)
    }

    /// `priority`.
    pub fn priority(&self) -> i32 {
        self.0.get(rule::PRIORITY).cast_signed()
    }

    /// `layer` (an unknown code: the default layer).
    pub fn layer(&self) -> Layer {
        Layer::ALL.get(usize::from(self.kinds()[0])).copied().unwrap_or_default()
    }

    /// `decision` (an unknown code: none).
    pub fn decision(&self) -> Option<Decision> {
        match self.kinds()[1] {
            decision::ALLOW => Some(Decision::Allow),
            decision::ASK => Some(Decision::Ask),
            decision::DENY => Some(Decision::Deny),
            decision::BLOCK => Some(Decision::Block),
            _ => None,
        }
    }

    /// `once` (an unknown code: none).
    pub fn once(&self) -> Option<Once> {
        match self.kinds()[2] {
            once::SESSION => Some(Once::Session),
            once::COMPACTION => Some(Once::Compaction),
            _ => None,
        }
    }

    /// `field`; empty for the event's default text.
    pub fn field(&self) -> StrRef {
        self.0.str_ref(rule::FIELD_S)
    }

    /// `context`.
    pub fn context(&self) -> StrRef {
        self.0.str_ref(rule::CONTEXT_S)
    }

    /// `reason`.
    pub fn reason(&self) -> StrRef {
        self.0.str_ref(rule::REASON_S)
    }

    /// `message`.
    pub fn message(&self) -> StrRef {
        self.0.str_ref(rule::MESSAGE_S)
    }

    /// `stop`; empty for none.
    pub fn stop(&self) -> StrRef {
        self.0.str_ref(rule::STOP_S)
    }

    /// `session_title`; empty for none.
    pub fn session_title(&self) -> StrRef {
        self.0.str_ref(rule::SESSION_TITLE_S)
    }

    /// Exact tool names: strings.
    pub fn tool_names(&self) -> ListRef {
        self.0.list_ref(rule::TOOL_NAMES_L)
    }

    /// A tool regex: its index among the regexes.
    pub fn tool_regex(&self) -> Option<u32> {
        self.0.get(rule::TOOL_REGEX).checked_sub(1)
    }

    /// `paths`: glob indices.
    pub fn paths(&self) -> ListRef {
        self.0.list_ref(rule::PATHS_L)
    }

    /// `paths` excludes: glob indices.
    pub fn paths_excluded(&self) -> ListRef {
        self.0.list_ref(rule::PATHS_EXCLUDED_L)
    }

    /// `keywords`: keyword ids.
    pub fn keywords(&self) -> ListRef {
        self.0.list_ref(rule::KEYWORDS_L)
    }

    /// `keywords_all`: keyword ids.
    pub fn keywords_all(&self) -> ListRef {
        self.0.list_ref(rule::KEYWORDS_ALL_L)
    }

    /// `exclude`: keyword ids.
    pub fn exclude(&self) -> ListRef {
        self.0.list_ref(rule::EXCLUDE_L)
    }

    /// `regex`: regex indices.
    pub fn regex(&self) -> ListRef {
        self.0.list_ref(rule::REGEX_L)
    }

    /// `star`: strings.
    pub fn star(&self) -> ListRef {
        self.0.list_ref(rule::STAR_L)
    }

    /// `fields`: (path, JSON array of values) string pairs.
    pub fn fields(&self) -> ListRef {
        self.0.list_ref(rule::FIELDS_L)
    }

    /// `agent`: strings.
    pub fn agent(&self) -> ListRef {
        self.0.list_ref(rule::AGENT_L)
    }

    /// `workflow`: strings.
    pub fn workflow(&self) -> ListRef {
        self.0.list_ref(rule::WORKFLOW_L)
    }

    /// `task`: strings.
    pub fn task(&self) -> ListRef {
        self.0.list_ref(rule::TASK_L)
    }

    /// `flags`: strings.
    pub fn flags(&self) -> ListRef {
        self.0.list_ref(rule::FLAGS_L)
    }

    /// `not_flags`: strings.
    pub fn not_flags(&self) -> ListRef {
        self.0.list_ref(rule::NOT_FLAGS_L)
    }

    /// `permission_mode`: strings.
    pub fn permission_mode(&self) -> ListRef {
        self.0.list_ref(rule::PERMISSION_MODE_L)
    }

    /// `command`: the patterns, [`super::format::command`].
    pub fn command(&self) -> ListRef {
        self.0.list_ref(rule::COMMAND_L)
    }

    /// `branch`: strings.
    pub fn branch(&self) -> ListRef {
        self.0.list_ref(rule::BRANCH_L)
    }

    /// `every`.
    pub fn every(&self) -> Option<u32> {
        Some(self.0.get(rule::EVERY)).filter(|&n| n != 0)
    }

    /// `bracket`.
    pub fn brackets(&self) -> Brackets {
        Brackets(self.0.get(rule::BRACKETS))
    }

    /// `set.agent`; empty for none.
    pub fn set_agent(&self) -> StrRef {
        self.0.str_ref(rule::SET_AGENT_S)
    }

    /// `set.workflow`; empty for none.
    pub fn set_workflow(&self) -> StrRef {
        self.0.str_ref(rule::SET_WORKFLOW_S)
    }

    /// `set.task`; empty for none.
    pub fn set_task(&self) -> StrRef {
        self.0.str_ref(rule::SET_TASK_S)
    }

    /// `set.flags`: strings.
    pub fn set_flags(&self) -> ListRef {
        self.0.list_ref(rule::SET_FLAGS_L)
    }

    /// `unset`.
    pub fn unset(&self) -> Unset {
        let bits = self.0.get(rule::UNSET);
        Unset { agent: bits & 1 != 0, workflow: bits & 2 != 0, task: bits & 4 != 0 }
    }

    /// `unset.flags`: strings.
    pub fn unset_flags(&self) -> ListRef {
        self.0.list_ref(rule::UNSET_FLAGS_L)
    }

    /// Whether it has a `capture` (without decoding it).
    pub fn captures(&self) -> bool {
        self.flag(flag::CAPTURE)
    }

    /// Whether it has `export = true`.
    pub fn exports(&self) -> bool {
        self.flag(flag::EXPORT)
    }

    /// Whether it has `branch_changed = true`.
    pub fn branch_changed(&self) -> bool {
        self.flag(flag::BRANCH_CHANGED)
    }

    /// Whether it has `observe = true`.
    pub fn observes(&self) -> bool {
        self.flag(flag::OBSERVE)
    }

    /// Whether its `capture` takes only marked text.
    pub fn captures_markers(&self) -> bool {
        self.flag(flag::CAPTURE_MARKERS)
    }

    /// `capture`.
    pub fn capture(&self) -> Option<CaptureRecord> {
        self.captures().then(|| CaptureRecord {
            namespace: self.0.str_ref(rule::CAPTURE_NAMESPACE_S),
            confidence: f32::from_bits(self.0.get(rule::CAPTURE_CONFIDENCE)),
            markers: self.captures_markers(),
            signal: self.flag(flag::CAPTURE_SIGNAL),
        })
    }

    /// `recall`.
    pub fn recall(&self) -> Option<RecallSpec> {
        if !self.flag(flag::RECALL) {
            return None;
        }
        let word = self.0.get(rule::RECALL);
        let from = if word & recall::HANDOFF != 0 {
            RecallFrom::Handoff
        } else if word & recall::SESSIONS != 0 {
            RecallFrom::Sessions
        } else if word & recall::PROMPT != 0 {
            RecallFrom::Prompt
        } else {
            RecallFrom::Path
        };
        Some(RecallSpec { from, max: word & recall::MAX })
    }

    /// `watch_paths`: strings.
    pub fn watch_paths(&self) -> ListRef {
        self.0.list_ref(rule::WATCH_PATHS_L)
    }

    /// `rewrite`: (input field, template) string pairs.
    pub fn rewrite(&self) -> ListRef {
        self.0.list_ref(rule::REWRITE_L)
    }

    /// The whole record, decoded.
    pub fn record(&self) -> RuleRecord {
        RuleRecord {
            id: self.id(),
            events: self.events(),
            pinned: self.pinned(),
            fail_closed: self.fail_closed(),
            repeat: self.repeat(),
            has_context: self.has_context(),
            changes_state: self.changes_state(),
            uses_state: self.uses_state(),
            priority: self.priority(),
            layer: self.layer(),
            decision: self.decision(),
            once: self.once(),
            field: self.field(),
            context: self.context(),
            reason: self.reason(),
            message: self.message(),
            stop: self.stop(),
            session_title: self.session_title(),
            tool_names: self.tool_names(),
            tool_regex: self.tool_regex(),
            paths: self.paths(),
            paths_excluded: self.paths_excluded(),
            keywords: self.keywords(),
            keywords_all: self.keywords_all(),
            exclude: self.exclude(),
            regex: self.regex(),
            star: self.star(),
            fields: self.fields(),
            agent: self.agent(),
            workflow: self.workflow(),
            task: self.task(),
            flags: self.flags(),
            not_flags: self.not_flags(),
            permission_mode: self.permission_mode(),
            command: self.command(),
            branch: self.branch(),
            every: self.every(),
            brackets: self.brackets(),
            set_agent: self.set_agent(),
            set_workflow: self.set_workflow(),
            set_task: self.set_task(),
            set_flags: self.set_flags(),
            unset: self.unset(),
            unset_flags: self.unset_flags(),
            capture: self.capture(),
            observe: self.observes(),
            branch_changed: self.branch_changed(),
            export: self.exports(),
            recall: self.recall(),
            watch_paths: self.watch_paths(),
            rewrite: self.rewrite(),
        }
    }
}

/// The settings section, typed: what hooks need to know of the config and of the rules as a
/// whole, and the memory vocabulary's lists (of strings; the aliases as pairs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SettingsRecord {
    /// The settings.
    pub settings: Settings,
    /// `[memory] namespaces`.
    pub namespaces: ListRef,
    /// `[memory] aliases`: (shorthand, namespace) pairs.
    pub aliases: ListRef,
    /// `[memory] private_tags`.
    pub private_tags: ListRef,
    /// `[branch] issues`, when configured.
    pub issues: Option<ListRef>,
}

impl SettingsRecord {
    /// Its words, in [`super::format::settings`]' layout.
    pub fn words(&self) -> [u32; settings::LEN] {
        let s = &self.settings;
        let mut w = [0u32; settings::LEN];
        w[settings::WINDOW_TOKENS] = s.window_tokens;
        for (i, &percent) in s.brackets.iter().enumerate() {
            w[settings::BRACKETS + i] = percent;
        }
        for (i, &tokens) in s.budget.iter().enumerate() {
            w[settings::BUDGET + i] = tokens;
        }
        w[settings::MAX_AGE_DAYS] = s.max_age_days;
        w[settings::MEMORY_MAX] = s.memory_max;
        w[settings::MEMORY_MAX_AGE_DAYS] = s.memory_max_age_days;
        w[settings::SIGNAL_AUTO] = s.signal_auto;
        w[settings::SIGNAL_SUGGEST] = s.signal_suggest;
        w[settings::SIGNAL_MAX] = s.signal_max;
        w[settings::FLAGS] = [
            (s.needs_bracket, settings::NEEDS_BRACKET),
            (s.counts_prompts, settings::COUNTS_PROMPTS),
            (s.counts_compactions, settings::COUNTS_COMPACTIONS),
            (s.writes_handoff, settings::WRITES_HANDOFF),
            (s.reads_conversation, settings::READS_CONVERSATION),
            (self.issues.is_some(), settings::ISSUE_TEMPLATES),
        ]
        .into_iter()
        .filter(|&(on, _)| on)
        .fold(0, |bits, (_, bit)| bits | bit);
        let events = s.state_events.bits().to_le_bytes();
        w[settings::STATE_EVENTS] =
            u32::from_le_bytes([events[0], events[1], events[2], events[3]]);
        w[settings::STATE_EVENTS + 1] =
            u32::from_le_bytes([events[4], events[5], events[6], events[7]]);
        let branch = s.branch_events.bits().to_le_bytes();
        w[settings::BRANCH_EVENTS] =
            u32::from_le_bytes([branch[0], branch[1], branch[2], branch[3]]);
        w[settings::BRANCH_EVENTS + 1] =
            u32::from_le_bytes([branch[4], branch[5], branch[6], branch[7]]);
        for (at, list) in [
            (settings::NAMESPACES_L, self.namespaces),
            (settings::ALIASES_L, self.aliases),
            (settings::PRIVATE_TAGS_L, self.private_tags),
            (settings::ISSUES_L, self.issues.unwrap_or_default()),
        ] {
            [w[at], w[at + 1]] = [list.offset, list.len];
        }
        w
    }

    /// The record `words` hold.
    pub fn read(words: Words<'_>) -> SettingsRecord {
        let w = |i| words.get(i);
        let flags = w(settings::FLAGS);
        let events =
            u64::from(w(settings::STATE_EVENTS)) | (u64::from(w(settings::STATE_EVENTS + 1)) << 32);
        SettingsRecord {
            settings: Settings {
                window_tokens: w(settings::WINDOW_TOKENS),
                brackets: std::array::from_fn(|i| w(settings::BRACKETS + i)),
                budget: std::array::from_fn(|i| w(settings::BUDGET + i)),
                max_age_days: w(settings::MAX_AGE_DAYS),
                memory_max: w(settings::MEMORY_MAX),
                memory_max_age_days: w(settings::MEMORY_MAX_AGE_DAYS),
                signal_auto: w(settings::SIGNAL_AUTO),
                signal_suggest: w(settings::SIGNAL_SUGGEST),
                signal_max: w(settings::SIGNAL_MAX),
                needs_bracket: flags & settings::NEEDS_BRACKET != 0,
                counts_prompts: flags & settings::COUNTS_PROMPTS != 0,
                counts_compactions: flags & settings::COUNTS_COMPACTIONS != 0,
                writes_handoff: flags & settings::WRITES_HANDOFF != 0,
                reads_conversation: flags & settings::READS_CONVERSATION != 0,
                branch_events: EventSet::from_bits(
                    u64::from(w(settings::BRANCH_EVENTS))
                        | (u64::from(w(settings::BRANCH_EVENTS + 1)) << 32),
                ),
                state_events: EventSet::from_bits(events),
            },
            namespaces: words.list_ref(settings::NAMESPACES_L),
            aliases: words.list_ref(settings::ALIASES_L),
            private_tags: words.list_ref(settings::PRIVATE_TAGS_L),
            issues: (flags & settings::ISSUE_TEMPLATES != 0)
                .then(|| words.list_ref(settings::ISSUES_L)),
        }
    }
}

/// An event's record: where its rules are found (see [`super::format::event`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EventRecord {
    /// The rules found without the keyword automaton: rule indices.
    pub always: ListRef,
    /// The texts its keyword rules read: strings (empty: the default text).
    pub fields: ListRef,
    /// Shell-tool rules by program name and first operand: 5 words per entry.
    pub programs: ListRef,
    /// Shell-tool rules by program glob: 4 words per entry.
    pub globs: ListRef,
    /// Path rules by the key their globs require of a path: 3 words per entry.
    pub paths: ListRef,
}

impl EventRecord {
    /// Its words, in [`super::format::event`]'s layout.
    pub fn words(&self) -> [u32; event::LEN] {
        let mut w = [0u32; event::LEN];
        for (at, list) in [
            (event::ALWAYS_L, self.always),
            (event::FIELDS_L, self.fields),
            (event::PROGRAMS_L, self.programs),
            (event::GLOBS_L, self.globs),
            (event::PATHS_L, self.paths),
        ] {
            [w[at], w[at + 1]] = [list.offset, list.len];
        }
        w
    }

    /// The record `words` hold.
    pub fn read(words: Words<'_>) -> EventRecord {
        EventRecord {
            always: words.list_ref(event::ALWAYS_L),
            fields: words.list_ref(event::FIELDS_L),
            programs: words.list_ref(event::PROGRAMS_L),
            globs: words.list_ref(event::GLOBS_L),
            paths: words.list_ref(event::PATHS_L),
        }
    }
}

fn decision_code(d: Option<Decision>) -> u8 {
    match d {
        None => decision::NONE,
        Some(Decision::Allow) => decision::ALLOW,
        Some(Decision::Ask) => decision::ASK,
        Some(Decision::Deny) => decision::DENY,
        Some(Decision::Block) => decision::BLOCK,
    }
}

fn once_code(o: Option<Once>) -> u8 {
    match o {
        None => once::NONE,
        Some(Once::Session) => once::SESSION,
        Some(Once::Compaction) => once::COMPACTION,
    }
}

#[cfg(test)]
mod tests {
    use hook_model::EventKind;

    use super::*;

    fn view_of(words: &[u32; rule::LEN]) -> RuleRecord {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        RuleView::new(Words::new(&bytes)).record()
    }

    /// Every field takes a value unlike its default and unlike the others', so a field written
    /// to the wrong words, or read from them, breaks the round trip.
    fn distinct(seed: u32) -> RuleRecord {
        let mut n = seed;
        let mut next = || {
            n += 7;
            n
        };
        let mut s = || StrRef { offset: next(), len: next() };
        let (id, field, context, reason, message, stop, session_title) =
            (s(), s(), s(), s(), s(), s(), s());
        let (set_agent, set_workflow, set_task, namespace) = (s(), s(), s(), s());
        let mut l = || ListRef { offset: next(), len: next() };
        RuleRecord {
            id,
            events: EventSet::of([EventKind::PreToolUse, *EventKind::ALL.last().unwrap()]),
            pinned: true,
            fail_closed: seed.is_multiple_of(2),
            repeat: true,
            has_context: seed % 2 == 1,
            changes_state: true,
            uses_state: seed.is_multiple_of(2),
            priority: -(seed.cast_signed()) - 3,
            layer: Layer::ALL[seed as usize % Layer::ALL.len()],
            decision: Some(Decision::Deny),
            once: Some(if seed.is_multiple_of(2) { Once::Compaction } else { Once::Session }),
            field,
            context,
            reason,
            message,
            stop,
            session_title,
            tool_names: l(),
            tool_regex: Some(seed),
            paths: l(),
            paths_excluded: l(),
            keywords: l(),
            keywords_all: l(),
            exclude: l(),
            regex: l(),
            star: l(),
            fields: l(),
            agent: l(),
            workflow: l(),
            task: l(),
            flags: l(),
            not_flags: l(),
            permission_mode: l(),
            command: l(),
            branch: l(),
            every: Some(seed + 2),
            brackets: Brackets::of([Bracket::Moderate, Bracket::Critical]),
            set_agent,
            set_workflow,
            set_task,
            set_flags: l(),
            unset: Unset { agent: true, workflow: false, task: true },
            unset_flags: l(),
            capture: Some(CaptureRecord {
                namespace,
                confidence: 0.75,
                markers: true,
                signal: true,
            }),
            observe: true,
            branch_changed: true,
            export: true,
            recall: Some(RecallSpec {
                from: [
                    RecallFrom::Path,
                    RecallFrom::Prompt,
                    RecallFrom::Handoff,
                    RecallFrom::Sessions,
                ][seed as usize % 4],
                max: seed + 5,
            }),
            watch_paths: l(),
            rewrite: l(),
        }
    }

    #[test]
    fn a_record_reads_back_as_written() {
        for seed in 0..6 {
            let record = distinct(seed);
            assert_eq!(view_of(&record.words()), record, "seed {seed}");
        }
        let empty = RuleRecord::default();
        assert_eq!(view_of(&empty.words()), empty);
    }

    type Setter<'f> = Box<dyn Fn(&mut RuleRecord) + 'f>;

    #[test]
    fn every_field_has_its_own_bits() {
        // Each field set alone changes some bits of the empty record's words; no two fields
        // change the same bit, so none can spill into another's.
        let full = distinct(3);
        let setters: Vec<(&str, Setter<'_>)> = vec![
            ("id", Box::new(|r| r.id = full.id)),
            ("events", Box::new(|r| r.events = full.events)),
            ("pinned", Box::new(|r| r.pinned = true)),
            ("fail_closed", Box::new(|r| r.fail_closed = true)),
            ("repeat", Box::new(|r| r.repeat = true)),
            ("has_context", Box::new(|r| r.has_context = true)),
            ("changes_state", Box::new(|r| r.changes_state = true)),
            ("uses_state", Box::new(|r| r.uses_state = true)),
            ("priority", Box::new(|r| r.priority = full.priority)),
            ("layer", Box::new(|r| r.layer = Layer::Command)),
            ("decision", Box::new(|r| r.decision = Some(Decision::Block))),
            ("once", Box::new(|r| r.once = Some(Once::Compaction))),
            ("field", Box::new(|r| r.field = full.field)),
            ("context", Box::new(|r| r.context = full.context)),
            ("reason", Box::new(|r| r.reason = full.reason)),
            ("message", Box::new(|r| r.message = full.message)),
            ("stop", Box::new(|r| r.stop = full.stop)),
            ("session_title", Box::new(|r| r.session_title = full.session_title)),
            ("tool_names", Box::new(|r| r.tool_names = full.tool_names)),
            ("tool_regex", Box::new(|r| r.tool_regex = full.tool_regex)),
            ("paths", Box::new(|r| r.paths = full.paths)),
            ("paths_excluded", Box::new(|r| r.paths_excluded = full.paths_excluded)),
            ("keywords", Box::new(|r| r.keywords = full.keywords)),
            ("keywords_all", Box::new(|r| r.keywords_all = full.keywords_all)),
            ("exclude", Box::new(|r| r.exclude = full.exclude)),
            ("regex", Box::new(|r| r.regex = full.regex)),
            ("star", Box::new(|r| r.star = full.star)),
            ("fields", Box::new(|r| r.fields = full.fields)),
            ("agent", Box::new(|r| r.agent = full.agent)),
            ("workflow", Box::new(|r| r.workflow = full.workflow)),
            ("task", Box::new(|r| r.task = full.task)),
            ("flags", Box::new(|r| r.flags = full.flags)),
            ("not_flags", Box::new(|r| r.not_flags = full.not_flags)),
            ("permission_mode", Box::new(|r| r.permission_mode = full.permission_mode)),
            ("command", Box::new(|r| r.command = full.command)),
            ("every", Box::new(|r| r.every = full.every)),
            ("brackets", Box::new(|r| r.brackets = Brackets::of(Bracket::ALL))),
            ("set_agent", Box::new(|r| r.set_agent = full.set_agent)),
            ("set_workflow", Box::new(|r| r.set_workflow = full.set_workflow)),
            ("set_task", Box::new(|r| r.set_task = full.set_task)),
            ("set_flags", Box::new(|r| r.set_flags = full.set_flags)),
            ("unset.agent", Box::new(|r| r.unset.agent = true)),
            ("unset.workflow", Box::new(|r| r.unset.workflow = true)),
            ("unset.task", Box::new(|r| r.unset.task = true)),
            ("unset_flags", Box::new(|r| r.unset_flags = full.unset_flags)),
            ("capture", Box::new(|r| r.capture = full.capture)),
            ("observe", Box::new(|r| r.observe = full.observe)),
            ("branch_changed", Box::new(|r| r.branch_changed = full.branch_changed)),
            ("export", Box::new(|r| r.export = full.export)),
            ("recall", Box::new(|r| r.recall = full.recall)),
            ("watch_paths", Box::new(|r| r.watch_paths = full.watch_paths)),
            ("rewrite", Box::new(|r| r.rewrite = full.rewrite)),
        ];
        let empty = RuleRecord::default().words();
        let mut owner: Vec<Option<&str>> = vec![None; rule::LEN * 32];
        for (name, set) in &setters {
            let mut record = RuleRecord::default();
            set(&mut record);
            assert_eq!(view_of(&record.words()), record, "`{name}` reads back");
            let changed: Vec<usize> = (0..rule::LEN * 32)
                .filter(|&bit| (record.words()[bit / 32] ^ empty[bit / 32]) >> (bit % 32) & 1 != 0)
                .collect();
            assert!(!changed.is_empty(), "`{name}` changes no bit");
            for bit in changed {
                if let Some(other) = owner[bit].replace(name) {
                    panic!("`{name}` and `{other}` share bit {} of word {}", bit % 32, bit / 32);
                }
            }
        }
    }

    #[test]
    fn settings_read_back_as_written() {
        let record = SettingsRecord {
            settings: Settings {
                window_tokens: 200_000,
                brackets: [61, 41, 26],
                budget: [801, 1501, 2001, 2501],
                max_age_days: 9,
                memory_max: 5000,
                memory_max_age_days: 90,
                signal_auto: 850,
                signal_suggest: 650,
                signal_max: 12,
                needs_bracket: true,
                counts_prompts: false,
                counts_compactions: true,
                writes_handoff: true,
                reads_conversation: true,
                branch_events: EventSet::of([EventKind::UserPromptSubmit, EventKind::SessionEnd]),
                state_events: EventSet::of([EventKind::Stop, EventKind::PreCompact]),
            },
            namespaces: ListRef { offset: 3, len: 4 },
            aliases: ListRef { offset: 5, len: 6 },
            private_tags: ListRef { offset: 7, len: 8 },
            issues: Some(ListRef { offset: 9, len: 10 }),
        };
        let bytes: Vec<u8> = record.words().iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(SettingsRecord::read(Words::new(&bytes)), record);
        for flag in 0..4 {
            let mut one = SettingsRecord::default();
            let s = &mut one.settings;
            *[
                &mut s.needs_bracket,
                &mut s.counts_prompts,
                &mut s.counts_compactions,
                &mut s.writes_handoff,
            ][flag] = true;
            let bytes: Vec<u8> = one.words().iter().flat_map(|w| w.to_le_bytes()).collect();
            assert_eq!(SettingsRecord::read(Words::new(&bytes)), one, "flag {flag} alone");
        }
    }

    #[test]
    fn an_event_reads_back_as_written() {
        let list = |n: u32| ListRef { offset: n, len: n + 1 };
        let record = EventRecord {
            always: list(1),
            fields: list(3),
            programs: list(5),
            globs: list(7),
            paths: list(9),
        };
        let bytes: Vec<u8> = record.words().iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(EventRecord::read(Words::new(&bytes)), record);
    }

    #[test]
    fn damaged_words_decode_to_some_value() {
        let words = [u32::MAX; rule::LEN];
        let record = view_of(&words);
        assert_eq!(record.layer, Layer::default());
        assert_eq!(record.decision, None);
        assert_eq!(record.once, None);
        assert!(record.brackets.admits(Bracket::Fresh));
    }

    #[test]
    fn every_event_has_a_bit() {
        assert!(EventKind::ALL.len() <= 64);
        for (i, &kind) in EventKind::ALL.iter().enumerate() {
            let set = EventSet::of([kind]);
            assert_eq!(set.bits(), 1 << i);
            assert!(set.contains(kind));
        }
    }

    #[test]
    fn brackets_none_named_admit_any() {
        let any = Brackets::default();
        let some = Brackets::of([Bracket::Depleted]);
        for bracket in Bracket::ALL {
            assert!(any.admits(bracket));
            assert_eq!(some.admits(bracket), bracket == Bracket::Depleted);
        }
    }
}
