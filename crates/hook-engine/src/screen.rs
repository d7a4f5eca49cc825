//! Memories checked before they enter the store (a capture of any event, `memory pull`) or leave
//! it (`memory export`, `memory push`, a rule with `export = true`): private parts removed, and
//! a memory the project's rules would block as a prompt withheld.
//!
//! A memory may hold what a rule of the project keeps out of prompts (a key a guard pattern
//! blocks): one captured before the hooks stopped capturing blocked prompts, or pulled from a
//! clone with other rules. Each memory's text is evaluated as a `UserPromptSubmit` prompt, as
//! `hookpack explain --prompt` would evaluate it (the engine alone: no state, no store, nothing
//! written), and one that a rule blocks or denies is withheld.

use std::path::Path;

use crate::artifact::ArtifactError;
use crate::memory;
use crate::{Bracket, Decision, Engine, Facts, Fired, Mode, SessionState};
use hook_model::{EventKind, HookInput};
use serde_json::json;

/// What becomes of a memory's text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// It may go, as this text (private parts removed, trimmed).
    Keep(String),
    /// Nothing is left once private parts are removed.
    Private,
    /// A rule blocks it as a prompt: the rule's id.
    Blocked(String),
}

/// The project's rules, read as a prompt's.
#[derive(Debug)]
pub struct Screen<'e, 'a> {
    engine: &'e Engine<'a>,
    private_tags: Vec<&'a str>,
    root: Option<&'e Path>,
    /// Whether some rule can refuse a prompt at all: without one, nothing is evaluated.
    refuses: bool,
}

impl<'e, 'a> Screen<'e, 'a> {
    /// The screen of `engine`'s rules and private tags, for the project at `root`.
    ///
    /// # Errors
    ///
    /// When the artifact's settings cannot be read.
    pub fn new(engine: &'e Engine<'a>, root: Option<&'e Path>) -> Result<Self, ArtifactError> {
        let private_tags = engine.memory_settings()?.private_tags.clone();
        Ok(Screen { engine, private_tags, root, refuses: engine.refuses_prompts()? })
    }

    /// What becomes of `text`.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged: nothing may be let through then.
    pub fn check(&self, text: &str) -> Result<Verdict, ArtifactError> {
        let Some(kept) = memory::strip_private(text, &self.private_tags) else {
            return Ok(Verdict::Private);
        };
        let kept = kept.trim();
        if kept.is_empty() {
            return Ok(Verdict::Private);
        }
        Ok(match self.blocked_by(kept)? {
            Some(rule) => Verdict::Blocked(rule),
            None => Verdict::Keep(kept.to_owned()),
        })
    }

    /// The first rule that blocks or denies `text` as a `UserPromptSubmit` prompt.
    fn blocked_by(&self, text: &str) -> Result<Option<String>, ArtifactError> {
        if !self.refuses {
            return Ok(None);
        }
        let cwd = self.root.map(|r| r.to_string_lossy().into_owned()).unwrap_or_default();
        let payload = json!({
            "hook_event_name": "UserPromptSubmit",
            "session_id": "hookpack-memory",
            "transcript_path": "",
            "cwd": cwd,
            "permission_mode": "default",
            "prompt": text,
        });
        let input = HookInput::from_value(EventKind::UserPromptSubmit, &payload)
            .map_err(|_| ArtifactError::Malformed("a memory read as a prompt"))?;
        let facts = Facts {
            input: &input,
            payload: &payload,
            project_root: self.root,
            state: SessionState::default(),
            bracket: Bracket::default(),
            used_percent: None,
            branch: None,
            home: None,
            conversation: &[],
        };
        // What the hooks refuse to keep of a prompt (`Evaluation::refuses`), named by the
        // first rule that refuses it.
        let evaluation = self.engine.evaluate(&facts, Mode::Answer)?;
        if !evaluation.refuses(EventKind::UserPromptSubmit) {
            return Ok(None);
        }
        let refusing = |f: &Fired| {
            matches!(f.decision, Some(Decision::Block | Decision::Deny)) || f.stop.is_some()
        };
        Ok(evaluation.fired.into_iter().find(refusing).map(|f| f.id))
    }
}

/// How many memories a screen withheld, and why.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Withheld {
    /// A rule blocks them.
    pub blocked: usize,
    /// Nothing but private parts.
    pub private: usize,
}

impl Withheld {
    /// Counts `verdict`; the text to keep, if any.
    pub fn count(&mut self, verdict: Verdict) -> Option<String> {
        match verdict {
            Verdict::Keep(text) => Some(text),
            Verdict::Private => {
                self.private += 1;
                None
            }
            Verdict::Blocked(_) => {
                self.blocked += 1;
                None
            }
        }
    }

    /// How many in all.
    pub fn total(&self) -> usize {
        self.blocked + self.private
    }

    /// What the user is told (empty when none was withheld): `; 2 withheld (…)`.
    pub fn said(&self) -> String {
        if self.total() == 0 {
            return String::new();
        }
        let mut why = Vec::new();
        if self.blocked > 0 {
            why.push(format!("{} a rule of the project blocks as a prompt", self.blocked));
        }
        if self.private > 0 {
            why.push(format!("{} private", self.private));
        }
        format!("; {} withheld ({})", self.total(), why.join(", "))
    }
}
