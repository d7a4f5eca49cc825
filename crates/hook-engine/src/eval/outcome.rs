//! What an evaluation finds: the rules that fired, with what they decide, say and change, and
//! why the others did not.

use std::fmt;

use hook_model::EventKind;
use serde_json::{Map, Value};

use crate::memory::{Captured, Recall};
use crate::rule::{Decision, Layer, Once};
use crate::session::SessionState;
use crate::signal::Signal;

/// A rule that fired.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fired {
    /// The rule's index in the artifact.
    pub index: u32,
    /// `pack/rule`.
    pub id: String,
    /// Its layer.
    pub layer: Layer,
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
    /// `once`.
    pub once: Option<Once>,
    /// What it asks to recall; the runtime (or a pack test) adds what it finds to `context`.
    pub recall: Option<Recall>,
    /// The command its `command` condition matched, as a shell would read it back.
    pub command: Option<String>,
    /// Whether it keeps what the event shows in the session's books (`observe`).
    pub observes: bool,
    /// Whether it writes the conventions into `CLAUDE.md` (`export`).
    pub exports: bool,
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
    /// The signals the rules that fired found (overlaps resolved), each with what the hook
    /// made of it once it did.
    pub signals: Vec<Signal>,
    /// Whether a `markers` rule captured: the text's author said what to keep, and its
    /// signals are let go.
    pub marked: bool,
    /// The call's input as the rules that fired rewrite it (`PreToolUse`), when any did.
    pub updated_input: Option<Map<String, Value>>,
    /// The rules that deny or ask for the call as rewritten (judged again on `updated_input`).
    pub rechecked: Vec<Fired>,
}

impl Evaluation {
    /// Whether the rules refuse what the event carries: a call denied (its input, rewritten or
    /// not, never runs), a prompt blocked or stopped (Claude Code drops it). What is refused is
    /// not kept: a rule that blocks a prompt for holding a secret must not have it remembered.
    /// A blocked `Stop` or `PostToolUse` refuses nothing of the kind: it asks the model for
    /// more.
    pub fn refuses(&self, kind: EventKind) -> bool {
        let prompt = matches!(kind, EventKind::UserPromptSubmit | EventKind::UserPromptExpansion);
        self.fired.iter().chain(&self.rechecked).any(|f| match f.decision {
            Some(Decision::Deny) => true,
            Some(Decision::Block) => prompt,
            _ => prompt && f.stop.is_some(),
        })
    }

    /// At most the characters of context the fired rules give, labels and gaps included: when
    /// this fits the smallest budget, the budget cannot drop anything and the bracket need not
    /// be known.
    pub fn context_chars(&self) -> usize {
        // "[hookpack: " + id + "]\n" + text, and "\n\n" between sections.
        let label = "[hookpack: ]\n\n\n".len();
        self.fired.iter().filter_map(|f| Some(f.context.as_ref()?.len() + f.id.len() + label)).sum()
    }
}
