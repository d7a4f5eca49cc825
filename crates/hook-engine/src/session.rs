//! What a session is made of for its rules: how full its context window is (the bracket), the
//! state rules read and change, and the settings compiled from the config. The evaluation and
//! memory both speak it.

use crate::observe::Books;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use hook_model::{EventKind, HookInput};

use crate::rule::{EventSet, Once};

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
    /// What the session did, as `observe` rules saw it.
    pub observed: Books,
    /// The git branch the last hook that read it saw (`branch_changed`, `{previous_branch}`).
    pub branch: Option<String>,
}

impl SessionState {
    /// The books an event keeps before any rule sees the state: `UserPromptSubmit` counts the
    /// prompt; a compaction is counted once, by `PreCompact` or, when that hook did not run,
    /// by the `SessionStart` that follows it.
    pub fn begin(&mut self, input: &HookInput) {
        match input.kind() {
            EventKind::UserPromptSubmit => {
                self.prompt_count += 1;
                self.prompts_since_compaction += 1;
            }
            EventKind::PreCompact => {
                self.compacted();
                self.compaction_pending = true;
            }
            EventKind::SessionStart if input.follows_compaction() => {
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

    /// Whether a rule given `once` was already given in its scope.
    pub fn already_injected(&self, id: &str, once: Once) -> bool {
        match (once, self.injected.get(id)) {
            (Once::Session, Some(_)) => true,
            (Once::Compaction, Some(&at)) => at == self.compactions,
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

/// Settings compiled from the config.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    /// At most this many memories are kept, the oldest removed first; 0: no limit.
    pub memory_max: u32,
    /// Memories older than this many days are removed; 0: kept however old.
    pub memory_max_age_days: u32,
    /// `[memory] auto`: a signal this sure, in thousandths, is captured.
    pub signal_auto: u32,
    /// `[memory] suggest`: a signal this sure, in thousandths, is suggested to the model.
    pub signal_suggest: u32,
    /// `[memory] max_signals`: the most signals one event captures or suggests.
    pub signal_max: u32,
    /// Whether some rule reads the context bracket (so the transcript must be read).
    pub needs_bracket: bool,
    /// Whether `UserPromptSubmit` counts prompts (for `every` and the bracket estimate).
    pub counts_prompts: bool,
    /// Whether compactions are counted (for `once = "compaction"` and the estimate).
    pub counts_compactions: bool,
    /// The events whose hooks open the session state.
    pub state_events: EventSet,
    /// Whether `PreCompact` writes a handoff (some rule recalls it).
    pub writes_handoff: bool,
    /// Some `PreCompact` rule reads the event's text: its hook reads the conversation from the
    /// transcript.
    pub reads_conversation: bool,
    /// The events some rule of which reads the current git branch: their hooks read `.git/HEAD`.
    pub branch_events: EventSet,
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
        self.state_events.contains(kind)
    }
}
