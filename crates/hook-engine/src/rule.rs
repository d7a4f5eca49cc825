//! What a rule is made of, in the words the pack language, the artifact and the answer share:
//! its layer, its decision, how often it speaks (`once`), where it recalls from, and the events
//! it answers. The compiler parses packs into these, the artifact's codec
//! ([`crate::artifact::RuleRecord`]) stores them, the engine reads them back as the same types.

use hook_model::EventKind;

/// A context layer, SYNAPSE's L0–L7: contexts are injected in this order (reference §2.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// L0: non-negotiable rules.
    Constitution,
    /// L1: always-on rules.
    #[default]
    Global,
    /// L2: the active agent's rules.
    Agent,
    /// L3: the active workflow's rules.
    Workflow,
    /// L4: the active task's rules.
    Task,
    /// L5: team rules.
    Squad,
    /// L6: keyword-triggered rules.
    Keyword,
    /// L7: star-command rules.
    Command,
}

impl Layer {
    /// Every layer, L0 first.
    pub const ALL: [Layer; 8] = [
        Layer::Constitution,
        Layer::Global,
        Layer::Agent,
        Layer::Workflow,
        Layer::Task,
        Layer::Squad,
        Layer::Keyword,
        Layer::Command,
    ];

    /// Its name in packs.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Constitution => "constitution",
            Layer::Global => "global",
            Layer::Agent => "agent",
            Layer::Workflow => "workflow",
            Layer::Task => "task",
            Layer::Squad => "squad",
            Layer::Keyword => "keyword",
            Layer::Command => "command",
        }
    }

    /// The layer named `name` in packs.
    pub fn from_name(name: &str) -> Option<Layer> {
        Layer::ALL.into_iter().find(|l| l.as_str() == name)
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

    /// The decision named `name` in packs.
    pub fn from_name(name: &str) -> Option<Decision> {
        [Decision::Allow, Decision::Ask, Decision::Deny, Decision::Block]
            .into_iter()
            .find(|d| d.as_str() == name)
    }
}

/// How often a rule's context is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Once {
    /// At most once per session.
    Session,
    /// At most once per session, and again after each compaction.
    Compaction,
}

/// Where a `recall` looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecallFrom {
    /// The terms of the tool call's file path.
    Path,
    /// The terms of the event's text (the prompt on `UserPromptSubmit`).
    Prompt,
    /// The handoff `PreCompact` wrote.
    Handoff,
    /// The index of the recent sessions: what each did and kept.
    Sessions,
}

/// A rule's `recall`, as written: where it looks and how many memories it gives at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecallSpec {
    /// Where to look.
    pub from: RecallFrom,
    /// At most this many.
    pub max: u32,
}

/// A set of events, as the artifact stores it: bit `i` is `EventKind::ALL[i]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EventSet(u64);

impl EventSet {
    /// The set of these events.
    pub fn of(kinds: impl IntoIterator<Item = EventKind>) -> EventSet {
        kinds.into_iter().fold(EventSet(0), EventSet::with)
    }

    /// The set with `kind` added.
    #[must_use]
    pub fn with(self, kind: EventKind) -> EventSet {
        EventSet(self.0 | EventSet::bit(kind))
    }

    /// The union of both sets.
    #[must_use]
    pub fn union(self, other: EventSet) -> EventSet {
        EventSet(self.0 | other.0)
    }

    /// Whether `kind` is in the set.
    pub fn contains(self, kind: EventKind) -> bool {
        self.0 & EventSet::bit(kind) != 0
    }

    /// Its bits.
    pub fn bits(self) -> u64 {
        self.0
    }

    /// The set these bits stand for (bits past the last event are kept, and match nothing).
    pub fn from_bits(bits: u64) -> EventSet {
        EventSet(bits)
    }

    fn bit(kind: EventKind) -> u64 {
        // `EventKind::ALL` has fewer than 64 events (a test in the artifact's codec checks).
        EventKind::ALL.iter().position(|&k| k == kind).map_or(0, |i| 1 << i)
    }
}
