//! One hook call, the same wherever it is answered: a hook (`hook-runtime`), a pack's
//! `[[test]]` (`rules-compiler`) and `hookpack explain` walk these steps, and differ only in
//! what they read and keep, the [`CallIo`] each brings: a hook its session store and the
//! transcript, a test what its `given` says, explain the store read-only.
//!
//! The steps: scan the event's texts once; open the session state only when the event keeps
//! books a rule relies on or a rule that uses it has its other conditions met; count what the
//! event counts; read the bracket only when a rule or the budget needs it; evaluate; recall
//! (each memory once between compactions) and store what was captured; answer within the
//! budget; keep what was given `once`, and save.

use std::collections::BTreeSet;
use std::path::Path;

use hook_model::{EventKind, HookInput};
use serde_json::Value;

use crate::answer::{Response, respond};
use crate::artifact::ArtifactError;
use crate::eval::{Engine, Evaluation, Facts, Mode, Scan};
use crate::memory::{self, Captured, Memory, Recall};
use crate::observe::{self, SessionSummary};
use crate::rule::{Once, RecallFrom};
use crate::screen::{Screen, Verdict};
use crate::session::{Bracket, SessionState, Settings};
use crate::signal::{self, Outcome};

/// Why a store could not do what a call asked.
pub type IoError = Box<dyn std::error::Error>;

/// What a call reads and keeps outside the artifact and the payload.
pub trait CallIo {
    /// The session's state as the event found it, held open until [`CallIo::save`]; `None`
    /// when it cannot be had (the store says why in its own problems; the call goes on
    /// without it). Asked only when [`Plan::opens`].
    fn open_state(&mut self, settings: &Settings) -> Option<SessionState>;

    /// The context bracket of the session whose state is `state`.
    fn bracket(&mut self, state: &SessionState) -> Bracket;

    /// The percent of the context window in use, as the last [`CallIo::bracket`] found it;
    /// `None` when it was not read.
    fn used_percent(&mut self) -> Option<u8> {
        None
    }

    /// Stored memories that `recall` finds, best first, at most `recall.max`.
    ///
    /// # Errors
    ///
    /// When the store cannot be read.
    fn recall(&mut self, recall: &Recall) -> Result<Vec<Memory>, IoError>;

    /// The session's most recent memories, for a handoff.
    ///
    /// # Errors
    ///
    /// When the store cannot be read.
    fn recent_memories(&mut self) -> Result<Vec<Memory>, IoError>;

    /// The most recent sessions of the project but this one, at most `max`, those last on
    /// `branch` first, then newest first: what each did and kept, for
    /// `recall = { from = "sessions" }`.
    ///
    /// # Errors
    ///
    /// When the sessions cannot be read.
    fn recent_sessions(
        &mut self,
        max: usize,
        branch: Option<&str>,
    ) -> Result<Vec<SessionSummary>, IoError> {
        let _ = (max, branch);
        Ok(Vec::new())
    }

    /// The handoff the last `PreCompact` kept.
    ///
    /// # Errors
    ///
    /// When the store cannot be read.
    fn handoff(&mut self) -> Result<Option<String>, IoError>;

    /// Keeps the handoff (`None`: clears it), saved with the state.
    fn set_handoff(&mut self, handoff: Option<String>);

    /// Stores a memory the rules captured.
    ///
    /// # Errors
    ///
    /// When the store cannot be written.
    fn remember(&mut self, captured: &Captured) -> Result<(), IoError>;

    /// What the store keeps to tell the user once (a database set aside): given by the first
    /// event that shows a `systemMessage`.
    fn take_notices(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// Keeps the state after the call (and the bracket read, if any).
    fn save(&mut self, after: SessionState, bracket: Option<Bracket>);

    /// Something went wrong on the way, and the answer is given without it: for the user (a
    /// hook's stderr), in the order it happened.
    fn problem(&mut self, problem: String);
}

/// What a call found and answers.
#[derive(Debug)]
pub struct Call {
    /// The answer.
    pub response: Response,
    /// What the rules found. When the state was opened, the state the rules left went to
    /// [`CallIo::save`], and `evaluation.state` is left empty.
    pub evaluation: Evaluation,
    /// Whether the session state was opened (and is what the rules saw).
    pub opened: bool,
    /// The state the rules saw: as the event found it, its books kept.
    pub state: SessionState,
    /// The bracket, when it was read.
    pub bracket: Option<Bracket>,
    /// The budget the context was fitted into, in characters.
    pub budget: usize,
}

/// Memories a recall may look past because they were already given.
const RECALL_LOOKAHEAD: u32 = 8;

/// How the `once` ledger names a memory given since the last compaction.
pub fn memory_key(id: i64) -> String {
    format!("{MEMORY_KEY}{id}")
}

/// How a memory's entry in the `once` ledger begins.
const MEMORY_KEY: &str = "memory#";

/// What a hook read around the event before its rules run, each only when some rule of the
/// event needs it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Surroundings<'p> {
    /// The project's root: tool paths are matched relative to it.
    pub project_root: Option<&'p Path>,
    /// The project's current git branch (read when [`Settings::branch_events`] has the event).
    pub branch: Option<&'p str>,
    /// The user's home folder (`$HOME`), where a command's `~` is.
    pub home: Option<&'p str>,
    /// The conversation's newest messages since the last compaction, oldest first (read on
    /// `PreCompact` when [`Settings::conversation_events`] has it): part of its text.
    pub conversation: &'p [String],
}

/// Answers one event: `input` (typed from `payload`), in `around`, with `io`.
///
/// # Errors
///
/// When the artifact is damaged where this event reads it.
pub fn call(
    engine: &Engine<'_>,
    input: &HookInput,
    payload: &Value,
    around: Surroundings<'_>,
    mode: Mode,
    io: &mut dyn CallIo,
) -> Result<Call, ArtifactError> {
    Plan::new(engine, input, payload, around, mode)?.run(io)
}

/// A call's first step, before anything is read from outside: the event's texts scanned, and
/// whether the session state is needed. A hook opens its store between this and [`Plan::run`]
/// (its session borrows the store, and the transcript must be read before the state's lock
/// is taken).
pub struct Plan<'e, 'a, 'p> {
    engine: &'e Engine<'a>,
    facts: Facts<'p>,
    scan: Scan<'p>,
    settings: Settings,
    /// Whether the session state must be opened: the event keeps books some rule relies on,
    /// or a rule that uses the state has its other conditions met.
    pub opens: bool,
    /// Whether the bracket may be read while the state is open (for a rule, or for the budget
    /// of an event that takes context).
    pub may_need_bracket: bool,
}

impl std::fmt::Debug for Plan<'_, '_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plan")
            .field("kind", &self.facts.kind())
            .field("opens", &self.opens)
            .field("may_need_bracket", &self.may_need_bracket)
            .finish_non_exhaustive()
    }
}

impl<'e, 'a, 'p> Plan<'e, 'a, 'p> {
    /// Scans the event and decides whether it needs the state.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged where this event reads it.
    pub fn new(
        engine: &'e Engine<'a>,
        input: &'p HookInput,
        payload: &'p Value,
        around: Surroundings<'p>,
        mode: Mode,
    ) -> Result<Self, ArtifactError> {
        let settings = engine.settings();
        let kind = input.kind();
        let facts = Facts {
            input,
            payload,
            project_root: around.project_root,
            state: SessionState::default(),
            bracket: Bracket::default(),
            used_percent: None,
            branch: around.branch,
            home: around.home,
            conversation: around.conversation,
        };
        let keeps_books = match kind {
            EventKind::UserPromptSubmit => settings.counts_prompts,
            EventKind::PreCompact => settings.counts_compactions || settings.writes_handoff,
            EventKind::SessionStart => settings.counts_compactions && input.follows_compaction(),
            _ => false,
        };
        // One keyword scan serves both questions: whether the state is needed, and what fires.
        let scan = engine.scan(&facts, mode)?;
        let opens = settings.opens_state(kind)
            && (keeps_books || engine.state_rules_apply(&scan, &facts)?);
        let may_need_bracket = settings.needs_bracket || kind.accepts_additional_context();
        Ok(Plan { engine, facts, scan, settings, opens, may_need_bracket })
    }

    /// The compiled settings (read once for the whole call).
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The rest of the call, with `io`.
    ///
    /// # Errors
    ///
    /// When the artifact is damaged where this event reads it.
    pub fn run(self, io: &mut dyn CallIo) -> Result<Call, ArtifactError> {
        let Plan { engine, mut facts, scan, settings, opens, .. } = self;
        let (kind, input) = (facts.kind(), facts.input);
        let opened = if opens { io.open_state(&settings) } else { None };
        let opened = opened.map(|state| facts.state = state).is_some();
        facts.state.begin(input);

        let mut bracket = (settings.needs_bracket && opened).then(|| io.bracket(&facts.state));
        facts.bracket = bracket.unwrap_or_default();
        facts.used_percent = bracket.and_then(|_| io.used_percent());
        let mut evaluation = engine.evaluate_scanned(&scan, &facts)?;
        if !facts.state.observed.has_title() && evaluation.state.observed.has_title() {
            screen_title(engine, &mut evaluation, facts.project_root);
        }
        let mut recalled = Vec::new();
        if opened {
            let around = (facts.branch, facts.project_root);
            match memories(engine, io, &mut evaluation, input, around, &settings) {
                Ok(given) => recalled = given,
                Err(err) => {
                    // What was stored may still be kept with the session; promise nothing.
                    evaluation.captures.clear();
                    io.problem(format!("memories unavailable ({err})"));
                }
            }
        } else {
            // Nothing to keep them in: say so rather than confirm them.
            evaluation.captures.clear();
        }
        // The budget depends on the bracket; read it only when the context could exceed the
        // smallest budget.
        let smallest =
            Bracket::ALL.map(|b| settings.budget_chars(b)).into_iter().min().unwrap_or(0);
        if bracket.is_none() && evaluation.context_chars() > smallest {
            bracket = Some(io.bracket(&facts.state));
        }
        let budget = bracket.map_or(smallest, |b| settings.budget_chars(b));
        let mut response = respond(kind, &evaluation, Some(budget));

        if opened {
            if kind.shows_system_message_in_every_mode()
                && response.output.system_message_mut().is_some()
            {
                for notice in io.take_notices() {
                    response.output.announce(notice);
                }
            }
            // The evaluation's state goes to the record (a copy would cost as much as the
            // session's observations).
            let mut after = std::mem::take(&mut evaluation.state);
            // The last branch seen: a detached HEAD keeps the one before it.
            if settings.branch_events.contains(kind)
                && let Some(branch) = facts.branch
            {
                after.branch = Some(branch.to_owned());
            }
            let dropped: BTreeSet<&String> = response.dropped.iter().collect();
            for fired in &evaluation.fired {
                if fired.once.is_some() && fired.context.is_some() && !dropped.contains(&fired.id) {
                    after.injected.insert(fired.id.clone(), after.compactions);
                }
            }
            for (rule, memory) in recalled {
                if !dropped.contains(&rule) {
                    after.injected.insert(memory_key(memory), after.compactions);
                }
            }
            // A memory given before the last compaction may be given again: its entry is done
            // with, and the ledger stays as small as what this compaction gave.
            let compactions = after.compactions;
            after.injected.retain(|key, at| !key.starts_with(MEMORY_KEY) || *at == compactions);
            io.save(after, bracket);
        }
        Ok(Call { response, evaluation, opened, state: facts.state, bracket, budget })
    }
}

/// The memory side of an event: adds what the rules recall to their context (each memory once
/// between compactions), stores what they captured, and keeps the compaction handoff —
/// written by `PreCompact`, given (and cleared) by the `SessionStart` after the compaction.
/// Returns the memories recalled, each with its rule.
fn memories(
    engine: &Engine<'_>,
    io: &mut dyn CallIo,
    evaluation: &mut Evaluation,
    input: &HookInput,
    (branch, root): (Option<&str>, Option<&Path>),
    settings: &Settings,
) -> Result<Vec<(String, i64)>, IoError> {
    let kind = input.kind();
    let compacted = input.follows_compaction();
    let handoff = |io: &mut dyn CallIo, state: &SessionState| -> Result<_, IoError> {
        let active = engine.active_rules(state)?;
        Ok(memory::handoff(state, &active, &io.recent_memories()?))
    };
    // The handoff PreCompact wrote (made now when that hook did not run); on PreCompact, the
    // one it is writing, which goes into the compaction instructions.
    let recalls_handoff = evaluation
        .fired
        .iter()
        .any(|f| f.recall.as_ref().is_some_and(|r| r.from == RecallFrom::Handoff));
    // Before a compaction, what this event captures (from the conversation) is stored first,
    // so that the handoff it writes names it; other events recall first, so that a prompt does
    // not recall what it just said.
    let precompact = kind == EventKind::PreCompact;
    if precompact {
        weigh_signals(engine, io, evaluation, kind, settings)?;
        screen_captures(engine, evaluation, root);
        for captured in &evaluation.captures {
            io.remember(captured)?;
        }
    }
    let mut handoff_text = None;
    if compacted && recalls_handoff {
        handoff_text = match io.handoff()? {
            Some(text) => Some(text),
            None => handoff(io, &evaluation.state)?,
        };
    } else if precompact && recalls_handoff {
        handoff_text = handoff(io, &evaluation.state)?;
    }
    let gave_handoff = compacted && handoff_text.is_some();

    let state = &evaluation.state;
    let fresh = |m: &Memory| !state.already_injected(&memory_key(m.id), Once::Compaction);
    let mut recalled = Vec::new();
    for fired in &mut evaluation.fired {
        let Some(recall) = &fired.recall else { continue };
        let found = if recall.from == RecallFrom::Handoff {
            handoff_text.take()
        } else if recall.from == RecallFrom::Sessions {
            observe::render_index(&io.recent_sessions(recall.max, branch)?)
                .map(|index| screen_lines(engine, &index, root))
        } else {
            let wider = Recall { max: recall.max + RECALL_LOOKAHEAD as usize, ..recall.clone() };
            let memories: Vec<_> =
                io.recall(&wider)?.into_iter().filter(fresh).take(recall.max).collect();
            recalled.extend(memories.iter().map(|m| (fired.id.clone(), m.id)));
            memory::render_recalled(&memories)
        };
        if let Some(found) = found {
            fired.add_recalled(found);
        }
    }
    if !precompact {
        weigh_signals(engine, io, evaluation, kind, settings)?;
        screen_captures(engine, evaluation, root);
        for captured in &evaluation.captures {
            io.remember(captured)?;
        }
    }
    if precompact && settings.writes_handoff {
        let text = match &handoff_text {
            // The one just made, unless a recall took it.
            Some(text) => Some(text.clone()),
            None => handoff(io, &evaluation.state)?,
        };
        io.set_handoff(text);
    } else if gave_handoff {
        io.set_handoff(None);
    }
    Ok(recalled)
}

/// Keeps of `evaluation`'s captures those the rules would let through as a prompt
/// ([`Screen`]): what is stored is what a prompt may say. A text the event did not refuse may
/// still hold what a rule refuses once its private parts are gone (`AKIA<private>…</private>…`
/// is a key only when stripped), or come from Claude's reply or the transcript, which no
/// prompt rule saw. When the rules cannot be read, nothing is kept.
fn screen_captures(engine: &Engine<'_>, evaluation: &mut Evaluation, root: Option<&Path>) {
    if evaluation.captures.is_empty() {
        return;
    }
    let Ok(screen) = Screen::new(engine, root) else {
        evaluation.captures.clear();
        return;
    };
    evaluation
        .captures
        .retain(|captured| matches!(screen.check(&captured.text), Ok(Verdict::Keep(_))));
}

/// `text` with each line the rules would not let through as a prompt ([`Screen`]) left out
/// and said to be: what the sessions' books kept before a rule existed (a title, a command)
/// does not come back. When the rules cannot be read, no line is kept.
fn screen_lines(engine: &Engine<'_>, text: &str, root: Option<&Path>) -> String {
    const LEFT_OUT: &str = "  (a line a rule of the project blocks as a prompt is left out)";
    let Ok(screen) = Screen::new(engine, root) else { return LEFT_OUT.trim_start().to_owned() };
    text.lines()
        .map(|line| match screen.check(line) {
            Ok(Verdict::Keep(_) | Verdict::Private) => line,
            _ => LEFT_OUT,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Takes the session's new title (its first prompt, private parts gone) out of its books when
/// the rules would not let it through as a prompt ([`Screen`]): it comes back in the next
/// sessions' index.
fn screen_title(engine: &Engine<'_>, evaluation: &mut Evaluation, root: Option<&Path>) {
    let observed = evaluation.state.observed.get_mut();
    let Some(title) = &observed.title else { return };
    let kept = Screen::new(engine, root)
        .and_then(|screen| screen.check(title))
        .is_ok_and(|verdict| matches!(verdict, Verdict::Keep(_)));
    if !kept {
        observed.title = None;
    }
}

/// What becomes of the signals the rules found, surest first: a signal the store already holds
/// is let go; one as sure as `[memory] auto` is captured; one as sure as `suggest` is suggested
/// to the model in its rule's context (with the marker that keeps it), except before a
/// compaction; the rest are let go, and so is every one past `[memory] max_signals`.
fn weigh_signals(
    engine: &Engine<'_>,
    io: &mut dyn CallIo,
    evaluation: &mut Evaluation,
    kind: EventKind,
    settings: &Settings,
) -> Result<(), IoError> {
    let Evaluation { signals, captures, fired, .. } = evaluation;
    // Before a compaction, no one reads a suggestion.
    let suggests = kind != EventKind::PreCompact;
    let mut kept = 0;
    for found in signals.iter_mut().filter(|s| s.outcome.is_none()) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0 to 1000")]
        let permille = (found.confidence * 1000.0).round() as u32;
        let outcome = if permille < settings.signal_suggest {
            Outcome::Weak
        } else if !suggests && permille < settings.signal_auto {
            Outcome::NotNow
        } else if kept >= settings.signal_max {
            Outcome::TooMany
        } else {
            let terms = memory::first_terms(&found.text, memory::MAX_QUERY_TERMS);
            let similar = if terms.is_empty() {
                Vec::new()
            } else {
                io.recall(&Recall { from: RecallFrom::Prompt, max: NOVELTY_NEIGHBOURS, terms })?
            };
            if !signal::is_novel(&found.text, similar.iter().map(|m| m.text.as_str())) {
                Outcome::Known
            } else if permille >= settings.signal_auto {
                Outcome::Captured
            } else {
                Outcome::Suggested
            }
        };
        if matches!(outcome, Outcome::Captured | Outcome::Suggested) {
            kept += 1;
        }
        match outcome {
            Outcome::Captured => captures.push(Captured {
                rule: found.rule.clone(),
                namespace: found.namespace.clone(),
                text: found.text.clone(),
                confidence: found.confidence,
                note: None,
            }),
            Outcome::Suggested => {
                let marker = engine.memory_settings().map_or_else(
                    |_| format!("remember:{}", found.namespace),
                    |config| config.marker_for(&found.namespace),
                );
                if let Some(rule) = fired.iter_mut().find(|f| f.id == found.rule) {
                    rule.add_recalled(signal::suggestion(found, &marker));
                }
            }
            Outcome::Weak
            | Outcome::NotNow
            | Outcome::TooMany
            | Outcome::Known
            | Outcome::Marked => {}
        }
        found.outcome = Some(outcome);
    }
    Ok(())
}

/// The stored memories a signal is compared with for novelty: those sharing the most of its
/// terms.
const NOVELTY_NEIGHBOURS: usize = 3;
