//! Answering from the compiled rules: map the artifact, check it, notice staleness, evaluate.

use std::fs;
use std::path::Path;
use std::time::UNIX_EPOCH;

use hook_engine::artifact::sources::{MAX_SOURCE_BYTES, hookpack_fingerprint, names_hash, sources};
use hook_engine::artifact::{self, Artifact, ArtifactError, Loaded};
use hook_engine::bounded::read_regular;
use hook_engine::call::{CallIo, IoError, Plan, Surroundings};
use hook_engine::memory;
use hook_engine::observe::SessionSummary;
use hook_engine::{Bracket, Engine, Mode, Response, SessionState, Settings};
use hook_model::{EventKind, HookInput};
use serde_json::Value;

use crate::confined::Confined;
use crate::notice::first_time;
use crate::respond::{Answer, Answered};
use crate::state::sessions::{self, Locked, Record, Sessions};
use crate::state::{self, Store};
use crate::transcript;
use crate::{Env, Installation};
use hook_engine::screen::Screen;

/// Answers `input` from the installation's artifact. Any problem with the artifact fails open.
pub(crate) fn answer(
    input: &HookInput,
    payload: &Value,
    installation: &Installation,
    env: &Env,
) -> Answer {
    let path = installation.artifact_path(env);
    let loaded = reachable(installation, env).and_then(|()| load(&path));
    let held = match loaded {
        Ok(loaded) => Held(Some(loaded)),
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
    let artifact = match held.artifact() {
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
        response.output.announce(notice);
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
struct Held(Option<Loaded>);

impl Held {
    fn artifact(&self) -> Result<Artifact<'_>, ArtifactError> {
        match &self.0 {
            Some(loaded) => loaded.artifact(),
            None => Artifact::parse(&[]),
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if crate::one_shot() {
            std::mem::forget(self.0.take());
        }
    }
}

/// Evaluates the event with its session state (its record read and saved under the record's
/// lock when its rules need it) and its bracket (read when a rule or the budget needs it): the
/// steps of [`hook_engine::call`], with the session's record, the memory store and the
/// transcript. Problems with the state fail open: the answer is given without it and the
/// problems returned.
///
/// Nothing that can block runs under the lock: the transcript's tail is read before it is
/// taken; the memory database is opened only when something is captured or recalled from a
/// database that exists (recall reads it without its write lock).
fn evaluate(
    engine: &Engine<'_>,
    input: &HookInput,
    payload: &Value,
    installation: &Installation,
    env: &Env,
) -> Result<(Response, Vec<String>), ArtifactError> {
    let project_root = match installation {
        Installation::Project { root, .. } => Some(root.as_path()),
        Installation::User { .. } => env.project_dir.as_deref(),
    };
    // `.git/HEAD`, read only for rules that ask, from where Claude Code works when that is in
    // the project (a worktree of it has its own), else from the project's root.
    let branch = engine
        .settings()
        .branch_events
        .contains(input.kind())
        .then_some(project_root)
        .flatten()
        .and_then(|root| {
            let cwd = Path::new(&input.common.cwd);
            crate::git::current_branch(if cwd.starts_with(root) { cwd } else { root })
        });
    // On `PreCompact`, what is about to be compacted, read only for rules that read it.
    let conversation =
        if input.kind() == EventKind::PreCompact && engine.settings().reads_conversation {
            transcript::conversation(Path::new(&input.common.transcript_path)).unwrap_or_default()
        } else {
            Vec::new()
        };
    let home = std::env::var(hook_engine::layout::EnvVars::HOME).ok();
    let around = Surroundings {
        project_root,
        branch: branch.as_deref(),
        home: home.as_deref(),
        conversation: &conversation,
    };
    let plan = Plan::new(engine, input, payload, around, Mode::Answer)?;
    let transcript = Path::new(&input.common.transcript_path);
    let id = input.common.session_id.as_str();
    let mut io = HookIo {
        sessions: None,
        session: None,
        record: Record::default(),
        memories: Memories::Closed,
        // The transcript's tail, read before the lock is taken: a slow file (the payload
        // names it) must not hold up the session's other hooks.
        tail: (plan.opens && plan.may_need_bracket).then(|| transcript::usage(transcript)),
        transcript,
        payload,
        settings: *plan.settings(),
        installation,
        env,
        problems: Vec::new(),
        damaged: None,
        used_percent: None,
    };
    if plan.opens {
        io.open(id);
    }
    let mut call = plan.run(&mut io)?;
    // A rule the user turned on writes the conventions where Claude Code reads them.
    // Only a project's own rules: an installation of the user's serves every project.
    if input.kind() == EventKind::SessionStart
        && !env.dry_run
        && call.evaluation.fired.iter().any(|f| f.exports)
        && let Installation::Project { root, .. } = installation
        && let Some(said) = io.export(root, engine)
    {
        call.response.output.announce(said);
    }
    let problems = std::mem::take(&mut io.problems);
    // The session's state, twice (as found and as saved), is most of what a hook frees.
    crate::keep_until_exit((call.evaluation, call.state, std::mem::take(&mut io.record)));
    Ok((call.response, problems))
}

/// The memory database of a call: opened at its first use, and only when it exists, unless
/// something is to be stored.
enum Memories {
    /// Not opened yet.
    Closed,
    /// There is none, and nothing was stored.
    Missing,
    /// Opened to write.
    Open(Store),
    /// Opened to read only.
    Reading(Store),
    /// It could not be opened, for this reason.
    Failed(String),
}

/// What a hook reads and keeps: the session's record (under its lock), the memory database,
/// the transcript for the bracket.
struct HookIo<'p> {
    sessions: Option<Sessions>,
    /// The session's record under its lock (`None` in a dry run, which reads it unlocked, and
    /// when it could not be read).
    session: Option<Locked>,
    /// The record as the call changes it.
    record: Record,
    memories: Memories,
    tail: Option<std::io::Result<(transcript::Usage, u64)>>,
    transcript: &'p Path,
    payload: &'p Value,
    settings: Settings,
    installation: &'p Installation,
    env: &'p Env,
    problems: Vec<String>,
    /// Why the memory database is damaged, when an operation found it so.
    damaged: Option<String>,
    /// The percent of the window in use, when the bracket was read.
    used_percent: Option<u8>,
}

/// The most memories one hook removes past `[memory] max` and `max_age_days`.
const PRUNED_PER_HOOK: u32 = 64;

impl HookIo<'_> {
    /// Writes the conventions kept in memory into the project's `CLAUDE.md` and
    /// `.claude/rules/` (`hook_runtime::export`); what the user is told, when files changed.
    /// Memories a rule of the project blocks as a prompt, or all private, are not written
    /// (`screen`).
    fn export(&mut self, root: &Path, engine: &Engine<'_>) -> Option<String> {
        let namespaces = crate::export::DEFAULT_NAMESPACES.map(str::to_owned);
        let memories = match self.memories(false) {
            Ok(Some(store)) => crate::export::memories(store, &namespaces),
            Ok(None) | Err(_) => return None,
        };
        let other = |err: &dyn std::fmt::Display| std::io::Error::other(err.to_string());
        let done = memories.map_err(|err| other(&err)).and_then(|m| {
            let screen = Screen::new(engine, Some(root)).map_err(|err| other(&err))?;
            let (m, withheld) = crate::export::screened(m, &screen).map_err(|err| other(&err))?;
            let plan = crate::export::plan(root, &m)?;
            Ok((crate::export::write(root, &plan)?, plan.conventions, plan.folders, withheld))
        });
        match done {
            Ok((0, ..)) => None,
            Ok((files, conventions, folders, withheld)) => Some(format!(
                "hookpack wrote {conventions} conventions into CLAUDE.md and {folders} folders' into .claude/rules/ ({files} files changed{})",
                withheld.said()
            )),
            Err(err) => {
                self.problems.push(format!("memory export failed: {err}"));
                None
            }
        }
    }

    /// Reads session `id`'s record under its lock. A dry run (`hookpack explain`) reads it
    /// without the lock and creates nothing.
    fn open(&mut self, id: &str) {
        if self.env.dry_run {
            self.record = sessions::peek(self.installation.dir(), id)
                .unwrap_or_else(|| Record { id: id.to_owned(), ..Record::default() });
            return;
        }
        let locked = Sessions::open(self.installation).and_then(|sessions| {
            let locked = sessions.lock(id)?;
            self.sessions = Some(sessions);
            Ok(locked)
        });
        match locked {
            Ok(mut locked) => {
                self.record = std::mem::take(&mut locked.record);
                self.session = Some(locked);
            }
            Err(err) => self.problems.push(session_problem(&err)),
        }
    }

    /// The memory database, opened at the first call; `None` when there is none and `create`
    /// is false (or this is a dry run).
    ///
    /// # Errors
    ///
    /// When it cannot be opened (then at every call).
    fn memories(&mut self, create: bool) -> Result<Option<&mut Store>, IoError> {
        let create = create && !self.env.dry_run;
        if matches!(self.memories, Memories::Closed)
            || (create && matches!(self.memories, Memories::Missing | Memories::Reading(_)))
        {
            // Anything at the name: what is not a database is set aside by the opening.
            let exists =
                std::fs::symlink_metadata(state::database_path(self.installation.dir())).is_ok();
            self.memories = if !exists && !create {
                Memories::Missing
            } else if self.env.dry_run {
                // A dry run never sets a database aside: it says what the next hook will do.
                match state::diagnose(self.installation.dir()) {
                    state::Diagnosis::Unusable(why) => Memories::Failed(format!(
                        "the memory database is not usable ({why}); the next hook that opens it \
                         sets it aside"
                    )),
                    _ => Store::open_read_only(self.installation.dir())
                        .map_or_else(|err| Memories::Failed(err.to_string()), Memories::Reading),
                }
            } else {
                // Reading, a database of the current schema is opened read-only, without the
                // checks of an opening for writing; anything else is opened as for writing,
                // which checks, migrates or sets aside.
                let reading =
                    if create { None } else { Store::open_to_read(self.installation).transpose() };
                match reading {
                    Some(Ok(store)) => Memories::Reading(store),
                    Some(Err(err)) => Memories::Failed(memory_problem(&err)),
                    None => match Store::open(self.installation) {
                        Ok(store) => {
                            // A database this opening set aside is the user's to hear of: kept
                            // with the session until an event shows it.
                            if let Some(aside) = store.set_aside() {
                                self.record.notices.push(aside.notice());
                            }
                            Memories::Open(store)
                        }
                        Err(err) => Memories::Failed(memory_problem(&err)),
                    },
                }
            };
        }
        match &mut self.memories {
            Memories::Open(store) | Memories::Reading(store) => Ok(Some(store)),
            Memories::Failed(why) => Err(why.clone().into()),
            Memories::Closed | Memories::Missing => Ok(None),
        }
    }

    /// What the recall index found; `None` when the database is to be read. Where there is no
    /// database, nothing (and none is opened later in the call, unless to store a memory).
    fn indexed(&mut self, indexed: state::Indexed) -> Option<Vec<memory::Memory>> {
        match indexed {
            state::Indexed::Found(found) => Some(found),
            state::Indexed::NoDatabase => {
                self.memories = Memories::Missing;
                Some(Vec::new())
            }
            state::Indexed::Stale => None,
        }
    }

    /// Sets the memory database aside when an operation found it damaged (in pages its
    /// opening did not read), so that the next hook starts a new one instead of failing on it
    /// forever; the user hears of it with the session's next notice.
    fn set_aside_damaged(&mut self) {
        let Some(why) = self.damaged.take() else { return };
        if self.env.dry_run {
            return;
        }
        let (Memories::Open(store) | Memories::Reading(store)) =
            std::mem::replace(&mut self.memories, Memories::Closed)
        else {
            return;
        };
        match store.set_aside_damaged(self.installation, &why) {
            Ok(Some(aside)) => {
                self.problems.push(format!(
                    "the memory database is damaged ({why}); it was set aside as {} and a new one \
                     is started",
                    aside.path.display()
                ));
                self.record.notices.push(aside.notice());
            }
            Ok(None) => {}
            Err(err) => self.problems.push(format!(
                "the memory database is damaged ({why}) and cannot be set aside ({err})"
            )),
        }
    }

    /// A store failure of a memory operation: the call says what it could not do.
    fn memory_failed(&mut self, err: rusqlite::Error) -> IoError {
        self.damaged = self.damaged.take().or_else(|| state::damaged(&err));
        Box::new(err)
    }
}

impl CallIo for HookIo<'_> {
    fn open_state(&mut self, settings: &Settings) -> Option<SessionState> {
        let session = self.session.as_ref();
        // A dry run works on the record it read; a hook on the one it holds.
        if session.is_none() && !self.env.dry_run {
            return None;
        }
        // A session's first use of the state clears out the sessions gone stale.
        if let (Some(session), Some(sessions)) = (session, &self.sessions)
            && session.new
        {
            sessions.remove_older_than(settings.max_age_days, &self.record.id);
        }
        // The call gives it back to `save`.
        Some(std::mem::take(&mut self.record.state))
    }

    fn bracket(&mut self, state: &SessionState) -> Bracket {
        let window_tokens = self.env.window_tokens.unwrap_or(self.settings.window_tokens);
        let prompts = state.prompts_since_compaction;
        let (payload, settings) = (self.payload, &self.settings);
        let reading = match &self.tail {
            Some(tail) => transcript::reading_from(tail, payload, settings, window_tokens, prompts),
            // No lock is held: the state was not opened.
            None => transcript::reading(self.transcript, payload, settings, window_tokens, prompts),
        };
        self.used_percent = Some(reading.used_percent());
        reading.bracket
    }

    fn used_percent(&mut self) -> Option<u8> {
        self.used_percent
    }

    fn recall(&mut self, recall: &memory::Recall) -> Result<Vec<memory::Memory>, IoError> {
        // The recall index first: the database is not opened when it holds its current state.
        let closed = matches!(self.memories, Memories::Closed);
        if closed
            && let Some(found) = self.indexed(state::recall_indexed(self.installation, recall))
        {
            return Ok(found);
        }
        let Some(store) = self.memories(false)? else { return Ok(Vec::new()) };
        let found = store.search(recall);
        if closed && found.is_ok() {
            // The index was stale: written anew for the next recalls (a dry run's store writes
            // nothing).
            store.refresh_index();
        }
        found.map_err(|err| self.memory_failed(err))
    }

    fn recent_memories(&mut self) -> Result<Vec<memory::Memory>, IoError> {
        // The record names them: read through the index, without the database, when it is
        // current (a record saved before records named them leaves it to the database).
        if let Some(ids) = &self.record.stored
            && matches!(self.memories, Memories::Closed)
        {
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let indexed = state::memories_indexed(self.installation, ids, &self.record.id);
            if let Some(found) = self.indexed(indexed) {
                return Ok(found);
            }
        }
        let id = self.record.id.clone();
        let Some(store) = self.memories(false)? else { return Ok(Vec::new()) };
        let found = store.recent_memories(&id);
        found.map_err(|err| self.memory_failed(err))
    }

    fn handoff(&mut self) -> Result<Option<String>, IoError> {
        Ok(self.record.handoff.clone())
    }

    fn recent_sessions(
        &mut self,
        max: usize,
        branch: Option<&str>,
    ) -> Result<Vec<SessionSummary>, IoError> {
        let installation = self.installation;
        // The memories each kept, through the index (one that is out of date leaves them out).
        // The user's own installation serves every project: only this one's sessions.
        let project = match installation {
            Installation::User { .. } => {
                Some(self.env.project_dir.as_deref().and_then(Path::to_str).unwrap_or(""))
            }
            Installation::Project { .. } => None,
        };
        let about = (project, branch);
        Ok(sessions::summaries(installation.dir(), &self.record.id, max, about, |record| {
            let ids = record.stored.clone().unwrap_or_default();
            match state::memories_indexed(installation, &ids, &record.id) {
                state::Indexed::Found(found) => found,
                state::Indexed::NoDatabase | state::Indexed::Stale => Vec::new(),
            }
        }))
    }

    fn set_handoff(&mut self, handoff: Option<String>) {
        self.record.handoff = handoff;
    }

    fn remember(&mut self, captured: &memory::Captured) -> Result<(), IoError> {
        if self.env.dry_run {
            return Ok(());
        }
        let id = self.record.id.clone();
        let (max, max_age_days) = (self.settings.memory_max, self.settings.memory_max_age_days);
        let Some(store) = self.memories(true)? else { return Ok(()) };
        let stored = store.remember(&id, captured);
        // What a new memory puts past `[memory] max` or `max_age_days` goes: once past `max`,
        // down to `PRUNED_PER_HOOK` (or a tenth of `max`) under it, so that pruning (a write and an index rewrite)
        // runs once every so many memories, not at each (`hookpack memory prune` does it all at
        // once). A failure here costs the pruning only.
        if matches!(stored, Ok(Some(_))) && (max > 0 || max_age_days > 0) {
            let pruned = store.prunable(max, max_age_days, 1).and_then(|over| {
                if over.is_empty() {
                    return Ok(0);
                }
                // A tenth of `max` at most: a small limit is kept exactly.
                let below = max - PRUNED_PER_HOOK.min(max / 10);
                store.prune(below, max_age_days, PRUNED_PER_HOOK)
            });
            if let Err(err) = pruned {
                self.problems.push(format!("memories not pruned ({err})"));
            }
        }
        match stored {
            Ok(new) => {
                if let (Some(new), Some(stored)) = (new, &mut self.record.stored) {
                    stored.push(new);
                    let over = stored.len().saturating_sub(memory::HANDOFF_MEMORIES as usize);
                    stored.drain(..over);
                }
                Ok(())
            }
            Err(err) => Err(self.memory_failed(err)),
        }
    }

    fn take_notices(&mut self) -> Vec<String> {
        // A dry run leaves them for the hook that will show them.
        if self.env.dry_run { Vec::new() } else { std::mem::take(&mut self.record.notices) }
    }

    fn problem(&mut self, problem: String) {
        self.problems.push(problem);
    }

    fn save(&mut self, after: SessionState, bracket: Option<Bracket>) {
        self.set_aside_damaged();
        let Some(session) = self.session.take() else { return };
        self.record.state = after;
        if bracket.is_some() {
            self.record.bracket = bracket;
        }
        if let Err(err) = session.save(&self.record) {
            self.problems.push(session_problem(&err));
        }
    }
}

/// The stderr note of a session state failure: the rules still answered; what this event would
/// have changed in the state was not saved.
fn session_problem(err: &std::io::Error) -> String {
    if err.kind() == std::io::ErrorKind::WouldBlock {
        format!(
            "session state busy (another hook held its lock for over {} s); this event's \
             counts and flags were not saved",
            state::LOCK_WAIT.as_secs()
        )
    } else {
        format!("session state unavailable ({err}); this event's counts and flags were not saved")
    }
}

/// What a memory database that cannot be opened makes a call say.
fn memory_problem(err: &rusqlite::Error) -> String {
    if state::is_busy(err) {
        format!(
            "the database is busy: another hook held its lock for over {} s",
            state::LOCK_WAIT.as_secs()
        )
    } else {
        err.to_string()
    }
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
pub fn load(path: &Path) -> Result<Loaded, Unusable> {
    let attempt = || {
        let loaded = artifact::load(path).map_err(|err| match err.kind() {
            std::io::ErrorKind::NotFound => Unusable::Missing,
            _ => Unusable::Unreadable(err),
        })?;
        // Bytes the compiler's stamp vouches for are what it wrote (`artifact::load`): their
        // CRC is not computed.
        loaded.artifact().map_err(Unusable::Invalid)?;
        if !loaded.stamped() {
            return Err(Unusable::NotCompiledHere);
        }
        Ok(loaded)
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
