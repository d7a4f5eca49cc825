//! Answering from the compiled rules: map the artifact, check it, notice staleness, evaluate.

use std::fs;
use std::path::Path;
use std::time::UNIX_EPOCH;

use hook_engine::artifact::sources::{MAX_SOURCE_BYTES, hookpack_fingerprint, names_hash, sources};
use hook_engine::artifact::{self, Artifact, ArtifactBytes, ArtifactError};
use hook_engine::bounded::read_regular;
use hook_engine::memory;
use hook_engine::{
    Bracket, Engine, Evaluation, Facts, Mode, Once, RecallFrom, Response, SessionState, respond,
};
use hook_model::{EventKind, HookInput};
use serde_json::Value;

use crate::confined::Confined;
use crate::notice::{announce, first_time};
use crate::respond::{Answer, Answered};
use crate::state::{self, Session, Store};
use crate::transcript;
use crate::{Env, Installation};

/// Answers `input` from the installation's artifact. Any problem with the artifact fails open.
pub(crate) fn answer(
    input: &HookInput,
    payload: &Value,
    installation: &Installation,
    env: &Env,
) -> Answer {
    let path = installation.artifact_path(env);
    let loaded = reachable(installation, env).and_then(|()| load(&path));
    let bytes = match loaded {
        Ok(bytes) => Held(Some(bytes)),
        Err(Unusable::Missing) => {
            return Answer::note(format!(
                "no compiled rules at {}; run `hookpack compile`",
                path.display()
            ));
        }
        Err(Unusable::Unreadable(err)) => {
            return Answer::note(format!("cannot read {}: {err}", path.display()));
        }
        Err(Unusable::Invalid(err)) => {
            return Answer::note(format!("{err}: {}; run `hookpack compile`", path.display()));
        }
        Err(err @ (Unusable::NotCompiledHere | Unusable::Linked(_))) => {
            return Answer::note(format!("{}: {err}; run `hookpack compile`", path.display()));
        }
    };
    let artifact = match Artifact::parse(bytes.as_slice()) {
        Ok(artifact) => artifact,
        Err(err) => {
            return Answer::note(format!("{err}: {}; run `hookpack compile`", path.display()));
        }
    };

    let notice = match stale(&artifact) {
        Ok(None) => None,
        Ok(Some(change)) => {
            let key = format!("stale-{:016x}", artifact.source_fingerprint());
            // A dry run shows the notice as a first hook would, and leaves the marker alone.
            (env.dry_run || first_time(installation, input.kind(), &input.common.session_id, &key))
                .then(|| {
                    format!(
                        "hookpack: rules are stale ({change}); run `hookpack compile` in {}",
                        installation.root().display()
                    )
                })
        }
        Err(err) => {
            return Answer::note(format!("{err}: {}; run `hookpack compile`", path.display()));
        }
    };

    let engine = match Engine::new(artifact) {
        Ok(engine) => engine,
        Err(err) => {
            return Answer::note(format!("{err}: {}; run `hookpack compile`", path.display()));
        }
    };
    let (mut response, problems) = match evaluate(&engine, input, payload, installation, env) {
        Ok(answered) => answered,
        Err(err) => {
            return Answer::note(format!("{err}: {}; run `hookpack compile`", path.display()));
        }
    };
    if let Some(notice) = notice {
        announce(&mut response.output, notice);
    }
    // PreCompact's context is compaction instructions: Claude Code appends a hook's plain
    // stdout to them (and would append JSON too, as text), unless the hook blocks.
    let instructions = (input.kind().takes_context()
        && !input.kind().accepts_additional_context()
        && response.output.is_empty())
    .then(|| response.context.take())
    .flatten()
    .map(|mut text| {
        hook_model::cap_text(&mut text, hook_model::MAX_OUTPUT_CHARS);
        text
    });
    Answer {
        output: Some(response.output),
        note: (!problems.is_empty()).then(|| problems.join("; ")),
        answered: Answered::FromRules,
        plain: instructions,
        ..Answer::default()
    }
}

/// An artifact's bytes while an answer is made from them. A hook process exits right after
/// answering ([`crate::start`]): there they are left as they are, mapped, rather than paying
/// for their unmapping (a system call and a flush of the TLB) on the way out.
struct Held(Option<ArtifactBytes>);

impl Held {
    fn as_slice(&self) -> &[u8] {
        self.0.as_ref().map_or(&[], ArtifactBytes::as_slice)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if crate::one_shot() {
            std::mem::forget(self.0.take());
        }
    }
}

/// Evaluates the event with its session state (read and saved under the state's write lock
/// when its rules need it) and its bracket (read when a rule or the budget needs it). Problems
/// with the state fail open: the answer is given without it and the problems returned.
///
/// Nothing that can block runs under the write lock: the transcript's tail is read before it
/// is taken, and recall reads only this database (indexed, bounded by its size; about 0.1 ms
/// among 2,000 memories), which no other process can hold up while this hook has the lock.
#[allow(clippy::too_many_lines, reason = "one event's way through the state, in order")]
fn evaluate(
    engine: &Engine<'_>,
    input: &HookInput,
    payload: &Value,
    installation: &Installation,
    env: &Env,
) -> Result<(Response, Vec<String>), ArtifactError> {
    let kind = input.kind();
    let settings = engine.settings();
    let mut problems = Vec::new();

    let mut facts = Facts {
        kind,
        payload,
        project_root: match installation {
            Installation::Project { root, .. } => Some(root.as_path()),
            Installation::User { .. } => env.project_dir.as_deref(),
        },
        state: SessionState::default(),
        bracket: Bracket::default(),
    };

    // The session state, under its write lock until saved: opened when the event keeps books
    // some rule relies on, or when a rule that uses the state has its other conditions met.
    let keeps_books = match kind {
        EventKind::UserPromptSubmit => settings.counts_prompts,
        EventKind::PreCompact => settings.counts_compactions || settings.writes_handoff,
        EventKind::SessionStart => {
            settings.counts_compactions && hook_model::follows_compaction(kind, payload)
        }
        _ => false,
    };
    // One keyword scan serves both questions: whether the state is needed, and what fires.
    let scan = engine.scan(&facts, Mode::Answer)?;
    let opens =
        settings.opens_state(kind) && (keeps_books || engine.state_rules_apply(&scan, &facts)?);
    let transcript = Path::new(&input.common.transcript_path);
    // The transcript's tail, read before the lock is taken: the bracket may be needed under
    // it (for a rule, or for the budget of an event that takes context), and a slow file (the
    // payload names it) must not hold up the project's other hooks.
    let may_need_bracket = settings.needs_bracket || kind.accepts_additional_context();
    let tail = (opens && may_need_bracket).then(|| transcript::usage(transcript));
    let mut store = None;
    // Damage an operation found after the database opened (in pages its opening did not
    // read): the database is set aside once this hook is done with it.
    let mut damaged: Option<String> = None;
    if opens {
        // A dry run (`hookpack explain`) saves nothing (its transaction is never committed),
        // and where there is no database yet it works on an empty one in memory instead of
        // creating the file.
        // Nor does it set aside a database it finds unusable: it works on an empty one and
        // says why.
        let database = crate::state::database_path(installation.dir());
        let opened = if env.dry_run && !database.is_file() {
            Store::scratch()
        } else if env.dry_run
            && let state::Diagnosis::Unusable(why) = state::diagnose(installation.dir())
        {
            problems.push(format!(
                "session state unusable ({why}); a new session assumed (the next hook sets the \
                 database aside)"
            ));
            Store::scratch()
        } else {
            Store::open(installation)
        };
        match opened {
            Ok(opened) => store = Some(opened),
            Err(err) => problems.push(state_problem(&err)),
        }
    }
    let mut session = match store.as_mut().map(|store| store.session(&input.common.session_id)) {
        Some(Ok(session)) => Some(session),
        Some(Err(err)) => {
            damaged = damaged.or(state::damaged(&err));
            problems.push(state_problem(&err));
            None
        }
        None => None,
    };
    if let Some(session) = &session {
        facts.state = session.before.clone();
        // A session's first use of the state clears out the sessions gone stale.
        if session.is_new()
            && let Err(err) = session.remove_older_than(settings.max_age_days)
        {
            problems.push(format!("old sessions not removed ({err})"));
        }
    }
    facts.state.begin(kind, payload);

    let window_tokens = env.window_tokens.unwrap_or(settings.window_tokens);
    let read_bracket = |state: &SessionState| {
        let prompts = state.prompts_since_compaction;
        match &tail {
            Some(tail) => {
                transcript::reading_from(tail, payload, &settings, window_tokens, prompts)
            }
            // No lock is held: the state was not opened.
            None => transcript::reading(transcript, payload, &settings, window_tokens, prompts),
        }
        .bracket
    };
    let mut bracket =
        (settings.needs_bracket && session.is_some()).then(|| read_bracket(&facts.state));
    facts.bracket = bracket.unwrap_or_default();
    let mut evaluation = engine.evaluate_scanned(&scan, &facts)?;
    let mut recalled = Vec::new();
    match &mut session {
        Some(session) => match memories(engine, session, &mut evaluation, kind, payload) {
            Ok(given) => recalled = given,
            Err(err) => {
                if let Some(err) = err.downcast_ref::<rusqlite::Error>() {
                    damaged = damaged.or(state::damaged(err));
                }
                // What was stored may still commit with the session; promise nothing.
                evaluation.captures.clear();
                problems.push(format!("memories unavailable ({err})"));
            }
        },
        // Nothing to store them in: say so rather than confirm them.
        None => evaluation.captures.clear(),
    }
    // The budget depends on the bracket; read it only when the context could exceed the
    // smallest budget.
    let smallest = Bracket::ALL.map(|b| settings.budget_chars(b)).into_iter().min().unwrap_or(0);
    if bracket.is_none() && evaluation.context_chars() > smallest {
        bracket = Some(read_bracket(&facts.state));
    }
    let budget = bracket.map_or(smallest, |b| settings.budget_chars(b));
    let mut response = respond(kind, &evaluation, Some(budget));

    if let Some(session) = session.take() {
        // What the store keeps for the user (a database set aside), given by the first event
        // that shows a `systemMessage`, once: taken in this transaction.
        if kind.shows_system_message_in_every_mode()
            && response.output.system_message_mut().is_some()
            && !env.dry_run
        {
            match session.take_notices() {
                Ok(notices) => notices.into_iter().for_each(|n| announce(&mut response.output, n)),
                Err(err) => {
                    damaged = damaged.or(state::damaged(&err));
                    problems.push(format!("notices unavailable ({err})"));
                }
            }
        }
        let mut after = evaluation.state.clone();
        let dropped: std::collections::BTreeSet<&String> = response.dropped.iter().collect();
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
        if env.dry_run {
            drop(session);
        } else if let Err(err) = session.save(&after, bracket) {
            damaged = damaged.or(state::damaged(&err));
            problems.push(state_problem(&err));
        }
    }
    drop(session);
    if let (Some(why), Some(store)) = (damaged, store)
        && !env.dry_run
    {
        match store.set_aside_damaged(installation, &why) {
            Ok(Some(aside)) => problems.push(format!(
                "the session state database is damaged ({why}); it was set aside as {} and a \
                 new one is started",
                aside.path.display()
            )),
            Ok(None) => {}
            Err(err) => problems.push(format!(
                "the session state database is damaged ({why}) and cannot be set aside ({err})"
            )),
        }
    }

    Ok((response, problems))
}

/// The stderr note of a state failure: the rules still answered; what this event would have
/// changed in the state was not saved.
fn state_problem(err: &rusqlite::Error) -> String {
    if state::is_busy(err) {
        format!(
            "session state busy (another hook held its lock for over {} s); this event's \
             counts, flags and memories were not saved",
            state::LOCK_WAIT.as_secs()
        )
    } else {
        format!(
            "session state unavailable ({err}); this event's counts, flags and memories were not saved"
        )
    }
}

/// How the `once` ledger names a memory given since the last compaction.
fn memory_key(id: i64) -> String {
    format!("memory#{id}")
}

/// Memories a recall may look past because they were already given.
const RECALL_LOOKAHEAD: usize = 8;

/// The memory side of an event, in the session's transaction: stores what the rules captured,
/// adds what they recall to their context (each memory once between compactions), and keeps
/// the compaction handoff — written by `PreCompact`, given (and cleared) by the `SessionStart`
/// after the compaction. Returns the memories recalled, each with its rule.
fn memories(
    engine: &Engine<'_>,
    session: &mut Session<'_>,
    evaluation: &mut Evaluation,
    kind: EventKind,
    payload: &Value,
) -> Result<Vec<(String, i64)>, Box<dyn std::error::Error>> {
    let compacted = hook_model::follows_compaction(kind, payload);
    let handoff =
        |session: &Session<'_>, state: &SessionState| -> Result<_, Box<dyn std::error::Error>> {
            let active = engine.active_rules(state)?;
            Ok(memory::handoff(state, &active, &session.recent_memories()?))
        };
    // The handoff PreCompact wrote (made now when that hook did not run); on PreCompact, the
    // one it is writing, which goes into the compaction instructions.
    let recalls_handoff = evaluation
        .fired
        .iter()
        .any(|f| f.recall.as_ref().is_some_and(|r| r.from == RecallFrom::Handoff));
    let mut handoff_text = None;
    if compacted && recalls_handoff {
        handoff_text = match session.handoff()? {
            Some(text) => Some(text),
            None => handoff(session, &evaluation.state)?,
        };
    } else if kind == EventKind::PreCompact && recalls_handoff {
        handoff_text = handoff(session, &evaluation.state)?;
    }
    let gave_handoff = compacted && handoff_text.is_some();

    let state = &evaluation.state;
    let fresh = |m: &memory::Memory| !state.already_injected(&memory_key(m.id), Once::Compaction);
    let mut recalled = Vec::new();
    for fired in &mut evaluation.fired {
        let Some(recall) = &fired.recall else { continue };
        let found = if recall.from == RecallFrom::Handoff {
            handoff_text.take()
        } else {
            let wider = memory::Recall { max: recall.max + RECALL_LOOKAHEAD, ..recall.clone() };
            let memories: Vec<_> =
                session.recall(&wider)?.into_iter().filter(fresh).take(recall.max).collect();
            recalled.extend(memories.iter().map(|m| (fired.id.clone(), m.id)));
            memory::render_recalled(&memories)
        };
        if let Some(found) = found {
            fired.add_recalled(found);
        }
    }
    // Stored after the recalls, so that a prompt does not recall what it just said.
    let stored: Result<Vec<_>, _> =
        evaluation.captures.iter().map(|c| session.remember(c)).collect();
    if let Err(err) = stored {
        evaluation.captures.clear();
        return Err(err.into());
    }
    if kind == EventKind::PreCompact && engine.settings().writes_handoff {
        let text = handoff(session, &evaluation.state)?;
        session.set_handoff(text);
    } else if gave_handoff {
        session.set_handoff(None);
    }
    Ok(recalled)
}

/// Why the artifact cannot be used.
#[derive(Debug)]
pub enum Unusable {
    /// There is none.
    Missing,
    /// It cannot be read: not a regular file, too large, or an IO error.
    Unreadable(std::io::Error),
    /// It was read but does not hold: truncated, another format, a wrong CRC.
    Invalid(ArtifactError),
    /// A folder on its way below the project is a symbolic link: the artifact (and its stamp)
    /// would come from elsewhere, compiled for something else.
    Linked(std::io::Error),
    /// It holds, but `hookpack compile` did not write it here: no stamp beside it matches it.
    /// A committed or copied artifact may lack the user's own packs, their guards included, so
    /// hooks never answer from one (reference §5).
    NotCompiledHere,
}

impl std::fmt::Display for Unusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unusable::Missing => f.write_str("there are no compiled rules"),
            Unusable::Unreadable(err) => write!(f, "cannot be read ({err})"),
            Unusable::Invalid(err) => err.fmt(f),
            Unusable::Linked(err) => write!(f, "refused: {err}"),
            Unusable::NotCompiledHere => f.write_str(
                "not compiled on this machine (no stamp of `hookpack compile` matches it: \
                 hooks never answer from a committed or copied artifact)",
            ),
        }
    }
}

/// Reads the artifact at `path` and checks its header and its CRC, over the whole file, before
/// anything in it is used (unless the compiler's stamp vouches for it: then it is what the
/// compiler checked, `artifact::load`), then that `hookpack compile` wrote it there (its stamp).
/// A copy that does not hold is read once more: the compiler replaces the file by a rename, but
/// another program (`cp`) may be rewriting it in place.
///
/// # Errors
///
/// When it is missing, cannot be read, or does not hold.
pub fn load(path: &Path) -> Result<ArtifactBytes, Unusable> {
    let attempt = || {
        let loaded = artifact::load(path).map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => Unusable::Missing,
            _ => Unusable::Unreadable(err),
        })?;
        let parsed = Artifact::parse(loaded.bytes.as_slice());
        // A map the compiler's stamp vouches for is what it wrote (`artifact::load`).
        let checked =
            if loaded.vouched { parsed.map(drop) } else { parsed.and_then(|a| a.verify()) };
        checked.map_err(Unusable::Invalid)?;
        if !loaded.stamped {
            return Err(Unusable::NotCompiledHere);
        }
        Ok(loaded.bytes)
    };
    match attempt() {
        Err(Unusable::Invalid(_)) => attempt(),
        // `hookpack compile` renames the new artifact into place, then writes its stamp,
        // holding the folder's lock: a hook in between waits for it, then reads again.
        Err(Unusable::NotCompiledHere) => {
            if let Some(dir) = path.parent() {
                crate::compiled::wait_for_compile(dir);
            }
            attempt()
        }
        other => other,
    }
}

/// Whether the installation's artifact is reached through real folders only: a repository can
/// commit `.claude/hookpack/compiled` as a link to another folder, where another artifact
/// and its valid stamp lie (one compiled for another project, without the user's packs).
/// `$HOOKPACK_ARTIFACT` is taken as given.
///
/// # Errors
///
/// [`Unusable::Linked`] naming the link.
pub fn reachable(installation: &Installation, env: &Env) -> Result<(), Unusable> {
    if env.artifact.is_some() {
        return Ok(());
    }
    match Confined::of(installation).existing_dir(hook_engine::layout::COMPILED_DIR) {
        Err(err) if err.kind() == std::io::ErrorKind::PermissionDenied => {
            Err(Unusable::Linked(err))
        }
        _ => Ok(()),
    }
}

/// The most of the sources a staleness check hashes in one run.
const MAX_HASHED_BYTES: u64 = 16 << 20;

/// What changed since the artifact was compiled, if anything: a source file changed, created
/// or removed, a pack added to or removed from a folder, another hookpack build.
///
/// # Errors
///
/// When the artifact's sources section is malformed.
pub fn stale(artifact: &Artifact<'_>) -> Result<Option<String>, ArtifactError> {
    if artifact.compiler_fingerprint() != hookpack_fingerprint() {
        return Ok(Some("compiled by another version of hookpack".to_owned()));
    }
    let (files, dirs) = sources(artifact)?;
    // A crafted artifact can name one large file a million times: what is hashed per run has a
    // budget, and past it the sources count as changed.
    let mut hashed = 0u64;
    for file in files {
        let changed = match (fs::metadata(file.path), file.len) {
            (Err(_), None) => false,
            (Err(_), Some(_)) => return Ok(Some(format!("{} was removed", file.path))),
            (Ok(_), None) => return Ok(Some(format!("{} was created", file.path))),
            (Ok(meta), Some(len)) if meta.len() == len && mtime_ns(&meta) == file.mtime_ns => false,
            // A source that is no longer a regular file under the cap cannot be what was
            // compiled.
            (Ok(meta), Some(_)) => {
                hashed = hashed.saturating_add(meta.len());
                hashed > MAX_HASHED_BYTES
                    || read_regular(Path::new(file.path), MAX_SOURCE_BYTES).map_or(true, |bytes| {
                        hook_engine::artifact::sources::fnv1a(&bytes) != file.hash
                    })
            }
        };
        if changed {
            return Ok(Some(format!("{} changed", file.path)));
        }
    }
    for dir in dirs {
        if pack_names_hash(Path::new(dir.path)) != dir.names_hash {
            return Ok(Some(format!("packs were added to or removed from {}", dir.path)));
        }
    }
    Ok(None)
}

/// The names hash of a pack folder as the compiler computes it: 0 when it does not exist.
fn pack_names_hash(dir: &Path) -> u64 {
    let Ok(entries) = fs::read_dir(dir) else { return 0 };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml") && p.is_file())
        .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
        .collect();
    names.sort();
    names_hash(&names)
}

fn mtime_ns(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_nanos()).ok())
        .unwrap_or(0)
}
