//! What hooks keep under `state/` (reference §1): each session's state in a small file of its
//! own ([`sessions`]: prompt count, compactions, active agent / workflow / task, flags, the
//! `once` ledger, the last bracket, the compaction handoff, notices still to give), and one
//! `SQLite` database, `state/hookpack.db`, for what outlives a session: the memories
//! (reference §2.5) with the terms they are found by, the failure log, and the notices of a
//! database set aside. A hook opens the database only when it stores a memory, recalls from a
//! database that exists, or records a failure.
//!
//! The folder comes from [`Confined`] (no symlinked folder on the way), and the database and
//! its companions (`-wal`, `-shm`, `-journal`) are looked at before `SQLite` opens them: a link
//! or anything but a regular file there is removed (a link, never what it points to) or set
//! aside. A database that is not hookpack's (empty, garbage, damaged, another application's)
//! is set aside beside it as `hookpack.db.aside-<time>-<pid>` ([`set_aside_copies`]), and a
//! new one started; the new one records the failure, and the hook that set it aside keeps a
//! notice ([`SetAside::notice`]) with its session until an event shows it. A new database
//! never takes up the `-wal` of a gone one. Its `sessions` and `notices` tables (schema 3) are
//! no longer written: sessions and their notices moved to the session files.

use std::cell::Cell;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hook_engine::memory::{self, Captured, Memory, Recall};
use rusqlite::{
    Connection, ErrorCode, OptionalExtension, Transaction, TransactionBehavior, params,
};

use crate::Installation;
use crate::confined::{Confined, ConfinedDir};

mod disk;
pub mod sessions;

use disk::{
    Connect, FileId, Found, clear_companions, connect, create, describe, inspect, open_for_reading,
    repair,
};
pub use disk::{Diagnosis, diagnose, set_aside_copies};

/// The database's path under an installation's folder.
pub const DATABASE_PATH: &str = "state/hookpack.db";

use hook_engine::layout::{DATABASE_FILE as DATABASE_NAME, STATE_DIR};

/// The files `SQLite` keeps beside a database, by suffix.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// How long a hook waits for another hook's write lock before failing open. The lock is held
/// for about a millisecond, so a hook that waits this long waits on a stuck one; 2 s is well
/// under Claude Code's hook timeout (60 s), and short enough that a prompt waiting on it is
/// barely slowed.
pub const LOCK_WAIT: Duration = Duration::from_secs(2);

/// How long recording a failure waits for the lock: the failure is often the lock itself, and
/// a hook that already waited [`LOCK_WAIT`] must not wait again.
const FAILURE_WAIT: Duration = Duration::from_millis(200);

/// `PRAGMA application_id` of a hookpack database ("hkpk"): another application's `SQLite`
/// file is told apart before anything is written to it.
const APPLICATION_ID: i32 = 0x686b_706b;

/// The schema's version, in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 3;

/// The tables of a hookpack database from before the application id (versions 1 and 2).
const LEGACY_TABLES: [&str; 4] = ["failures", "memories", "memory_terms", "sessions"];

/// Every table and index hookpack's schema has; anything else (a trigger, a view, another
/// table) in a database that claims to be hookpack's makes it unusable: a trigger is code that
/// a crafted database would run inside the hook.
const SCHEMA_OBJECTS: [&str; 6] =
    ["failures", "memories", "memory_terms", "notices", "sessions", "memories_by_session"];

/// Turns off what a crafted database could run: triggers, views, and functions with side
/// effects called from its schema.
fn distrust_schema(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::config::DbConfig;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_TRIGGER, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_VIEW, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    Ok(())
}

/// The objects of the schema, `(type, name)`: read once per opening, for both questions
/// `recognize` asks of them.
fn schema_objects(conn: &Connection) -> rusqlite::Result<Vec<(String, String)>> {
    let mut statement = conn.prepare("SELECT type, name FROM sqlite_schema ORDER BY name")?;
    statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?.collect()
}

/// The most set-aside copies kept: each may be as large as the database was.
const MAX_SET_ASIDE: usize = 3;

/// From version 1: the handoff, the memories.
const MIGRATE_FROM_1: &str = "ALTER TABLE sessions ADD COLUMN handoff TEXT;";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    started INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    prompts INTEGER NOT NULL DEFAULT 0,
    prompts_since_compaction INTEGER NOT NULL DEFAULT 0,
    compactions INTEGER NOT NULL DEFAULT 0,
    compaction_pending INTEGER NOT NULL DEFAULT 0,
    agent TEXT,
    workflow TEXT,
    task TEXT,
    flags TEXT NOT NULL DEFAULT '',
    injected TEXT NOT NULL DEFAULT '',
    bracket TEXT,
    failures INTEGER NOT NULL DEFAULT 0,
    handoff TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failures (
    at INTEGER NOT NULL,
    session TEXT NOT NULL,
    event TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    text TEXT NOT NULL,
    confidence REAL NOT NULL,
    created INTEGER NOT NULL,
    session TEXT NOT NULL,
    rule TEXT NOT NULL,
    UNIQUE (namespace, text)
);
CREATE INDEX IF NOT EXISTS memories_by_session ON memories (session);
CREATE TABLE IF NOT EXISTS memory_terms (
    term TEXT NOT NULL,
    memory INTEGER NOT NULL,
    PRIMARY KEY (term, memory)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS notices (
    id INTEGER PRIMARY KEY,
    message TEXT NOT NULL
);
";

/// The most failures kept in the log.
const MAX_FAILURES_KEPT: i64 = 200;

/// An open state database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    set_aside: Option<SetAside>,
    /// The database file this store opened, when it is one in a state folder.
    file: Option<FileId>,
}

/// A database that was not usable and was moved out of the way when the store was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetAside {
    /// Where it went: `state/hookpack.db.aside-<unix time>.<nanoseconds>-<pid>`.
    pub path: PathBuf,
    /// What was wrong with it.
    pub why: String,
}

impl SetAside {
    /// What the user is told of it, once.
    pub fn notice(&self) -> String {
        format!(
            "hookpack: the memory database was not usable ({}); it was set aside as {} and a \
             new one started, so this project's memories start afresh.",
            self.why,
            self.path.display()
        )
    }
}

impl Store {
    /// Opens (creating if needed) the database of `installation`, in its `state` folder (which
    /// must be a real folder, as every folder below the project: [`Confined`]). A database
    /// that is not usable is set aside and a new one started ([`Store::set_aside`]).
    ///
    /// # Errors
    ///
    /// When the folder is refused, or the database cannot be created, opened or migrated, or
    /// the lock it needs was not granted within [`LOCK_WAIT`] (`DatabaseBusy`).
    pub fn open(installation: &Installation) -> rusqlite::Result<Store> {
        let dir = Confined::of(installation).dir(STATE_DIR).map_err(|err| io_error(&err))?;
        Store::open_in(&dir)
    }

    /// Opens (creating if needed) the database in the state folder `dir`.
    ///
    /// # Errors
    ///
    /// As [`Store::open`].
    pub fn open_in(dir: &ConfinedDir) -> rusqlite::Result<Store> {
        let mut set_aside = None;
        // Each round settles what is at the database's name; another hook repairing it at the
        // same time can make one more round necessary.
        for _ in 0..4 {
            let (why, judged) = match inspect(dir, DATABASE_NAME).map_err(|e| io_error(&e))? {
                Found::Missing => {
                    create(dir).map_err(|e| io_error(&e))?;
                    continue;
                }
                Found::Other(what, id) => (what, id),
                Found::Regular(id) => {
                    clear_companions(dir, DATABASE_NAME).map_err(|e| io_error(&e))?;
                    match connect(&dir.entry(DATABASE_NAME).map_err(|e| io_error(&e))?) {
                        Ok(mut store) => {
                            store.set_aside = set_aside;
                            store.file = Some(id);
                            return Ok(store);
                        }
                        Err(Connect::Unusable(why)) => (why, id),
                        Err(Connect::Failed(err)) => return Err(err),
                    }
                }
            };
            match repair(dir, &why, judged) {
                Ok(Some(aside)) => set_aside = Some(aside),
                Ok(None) => {}
                // Said the same way every time (no time, no pid): it is told once per session.
                Err(err) => {
                    return Err(io_error(&io::Error::new(
                        err.kind(),
                        format!(
                            "the database is not usable ({why}) and cannot be set aside: {err}"
                        ),
                    )));
                }
            }
        }
        Err(io_error(&io::Error::other("the state database kept changing while it was opened")))
    }

    /// Closes the store and sets its database aside, because an operation found it damaged
    /// (`why`, from [`damaged`]): the damage lay in pages its opening did not read. The next
    /// hook starts a new database and tells the user where the old one went, as for a
    /// database found damaged when opened. `None` when another hook replaced the file meanwhile.
    ///
    /// # Errors
    ///
    /// When the folder is refused or the file cannot be moved.
    pub fn set_aside_damaged(
        self,
        installation: &Installation,
        why: &str,
    ) -> io::Result<Option<SetAside>> {
        let Store { conn, file, .. } = self;
        drop(conn);
        let Some(judged) = file else { return Ok(None) };
        let dir = Confined::of(installation).dir(STATE_DIR)?;
        repair(&dir, why, judged)
    }

    /// The database this opening set aside, if it did.
    pub fn set_aside(&self) -> Option<&SetAside> {
        self.set_aside.as_ref()
    }

    /// An empty database in memory, for a dry run where none exists yet: nothing is written.
    ///
    /// # Errors
    ///
    /// When `SQLite` cannot make one.
    pub fn scratch() -> rusqlite::Result<Store> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(SCHEMA)?;
        Ok(Store { conn, set_aside: None, file: None })
    }

    /// Opens an existing database without creating or changing anything.
    ///
    /// # Errors
    ///
    /// When there is no database, it is not a regular file (a link is not followed) or it
    /// cannot be read.
    pub fn open_read_only(dir: &Path) -> rusqlite::Result<Store> {
        let path = database_path(dir);
        let meta = fs::symlink_metadata(&path).map_err(|e| io_error(&e))?;
        if !meta.is_file() {
            let err = io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is {}", path.display(), describe(&path, &meta)),
            );
            return Err(io_error(&err));
        }
        let mut conn = open_for_reading(&path)?;
        conn.busy_handler(Some(wait_for_lock))?;
        distrust_schema(&conn)?;
        Ok(Store { conn, set_aside: None, file: None })
    }

    /// Brings a database of an older schema up to date, and marks it as hookpack's.
    fn migrate(&self) -> rusqlite::Result<()> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        // Another hook may have migrated it meanwhile.
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version < SCHEMA_VERSION {
            if version < 2 {
                let has_handoff = tx.prepare("SELECT handoff FROM sessions LIMIT 0").is_ok();
                if !has_handoff {
                    tx.execute_batch(MIGRATE_FROM_1)?;
                }
            }
            tx.execute_batch(SCHEMA)?;
            tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        }
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.commit()
    }

    /// Records a failure in the log `hookpack doctor` shows.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    ///
    /// It waits at most 200 ms for the write lock (the failure may be that lock): a failure
    /// that cannot be recorded is still on stderr.
    pub fn record_failure(&mut self, id: &str, event: &str, message: &str) -> rusqlite::Result<()> {
        self.conn.busy_timeout(FAILURE_WAIT)?;
        let recorded = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .and_then(|tx| log_failure(&tx, id, event, message).and_then(|()| tx.commit()));
        self.conn.busy_handler(Some(wait_for_lock))?;
        recorded
    }

    /// The stored memories, newest first, of `namespace` if given.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn memories(&self, namespace: Option<&str>, limit: u32) -> rusqlite::Result<Vec<Memory>> {
        let mut statement = self.conn.prepare(
            "SELECT id, namespace, text, confidence, created FROM memories
             WHERE ?1 IS NULL OR namespace = ?1 ORDER BY id DESC LIMIT ?2",
        )?;
        statement.query_map(params![namespace, limit], memory_row)?.collect()
    }

    /// The memories that best match `recall`'s terms, best first.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn search(&self, recall: &Recall) -> rusqlite::Result<Vec<Memory>> {
        search(&self.conn, recall)
    }

    /// Removes the memories `ids`; how many there were.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    pub fn forget(&mut self, ids: &[i64]) -> rusqlite::Result<usize> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut removed = 0;
        for id in ids {
            removed += tx.execute("DELETE FROM memories WHERE id = ?1", [id])?;
            tx.execute("DELETE FROM memory_terms WHERE memory = ?1", [id])?;
        }
        tx.commit()?;
        Ok(removed)
    }

    /// The most recent failures, newest first: (unix time, session, event, message).
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn failures(&self, limit: u32) -> rusqlite::Result<Vec<(i64, String, String, String)>> {
        let mut statement = self.conn.prepare(
            "SELECT at, session, event, message FROM failures ORDER BY rowid DESC LIMIT ?1",
        )?;
        statement
            .query_map([limit], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))?
            .collect()
    }
}

impl Store {
    /// Stores a memory captured in session `session` with the terms it is found by; a memory
    /// already stored in its namespace is kept once. Its id, when new.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    pub fn remember(
        &mut self,
        session: &str,
        captured: &Captured,
    ) -> rusqlite::Result<Option<i64>> {
        Ok(self.remember_all(session, std::slice::from_ref(captured))?.pop().flatten())
    }

    /// Stores memories captured in session `session`, in one transaction: [`Store::remember`]
    /// for each.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    pub fn remember_all(
        &mut self,
        session: &str,
        all: &[Captured],
    ) -> rusqlite::Result<Vec<Option<i64>>> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut ids = Vec::with_capacity(all.len());
        {
            let mut memory = tx.prepare(
                "INSERT OR IGNORE INTO memories (namespace, text, confidence, created, session, rule)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            let mut term =
                tx.prepare("INSERT OR IGNORE INTO memory_terms (term, memory) VALUES (?1, ?2)")?;
            for captured in all {
                let inserted = memory.execute(params![
                    captured.namespace,
                    captured.text,
                    f64::from(captured.confidence),
                    now(),
                    session,
                    captured.rule
                ])?;
                if inserted == 0 {
                    ids.push(None);
                    continue;
                }
                let id = tx.last_insert_rowid();
                for t in memory::terms(&captured.text) {
                    term.execute(params![t, id])?;
                }
                ids.push(Some(id));
            }
        }
        tx.commit()?;
        Ok(ids)
    }

    /// The memories session `session` captured most recently, oldest first.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn recent_memories(&self, session: &str) -> rusqlite::Result<Vec<Memory>> {
        let mut statement = self.conn.prepare(
            "SELECT id, namespace, text, confidence, created FROM memories
             WHERE session = ?1 ORDER BY id DESC LIMIT ?2",
        )?;
        let mut recent: Vec<Memory> = statement
            .query_map(params![session, memory::HANDOFF_MEMORIES], memory_row)?
            .collect::<Result<_, _>>()?;
        recent.reverse();
        Ok(recent)
    }
}

/// Adds a failure of session `id` to the log, keeping the newest entries.
fn log_failure(conn: &Connection, id: &str, event: &str, message: &str) -> rusqlite::Result<()> {
    let now = now();
    conn.execute(
        "INSERT INTO failures (at, session, event, message) VALUES (?1, ?2, ?3, ?4)",
        params![now, id, event, message],
    )?;
    conn.execute(
        "DELETE FROM failures WHERE rowid <= (SELECT max(rowid) FROM failures) - ?1",
        [MAX_FAILURES_KEPT],
    )?;
    Ok(())
}

thread_local! {
    /// When this hook first had to wait for a lock: all its waits together end
    /// [`LOCK_WAIT`] after it, however many locks it meets (the folder's, the database's).
    static WAITING_SINCE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Starts a hook's waiting afresh (a process may answer several events: `hookpack explain`,
/// tests).
pub(crate) fn new_hook() {
    WAITING_SINCE.set(None);
}

/// When a hook's waiting for locks must end: [`LOCK_WAIT`] after it first had to wait.
fn wait_deadline() -> Instant {
    let since = WAITING_SINCE.get().unwrap_or_else(|| {
        let now = Instant::now();
        WAITING_SINCE.set(Some(now));
        now
    });
    since + LOCK_WAIT
}

/// `SQLite`'s busy handler: waits for another connection's lock in short naps, for at most
/// [`LOCK_WAIT`] in all, counted from the hook's first wait (`wait_deadline`). The naps stay short (at most 10 ms, where `SQLite`'s own handler
/// reaches 100 ms) because the lock is held about a millisecond: a hook that naps long keeps
/// losing its turn to the hooks that arrive meanwhile, and would wait out the bound behind a
/// crowd that moves.
fn wait_for_lock(attempt: i32) -> bool {
    let left = wait_deadline().saturating_duration_since(Instant::now());
    if left.is_zero() {
        return false;
    }
    let nap = Duration::from_millis(u64::from(attempt.clamp(0, 9).cast_unsigned()) + 1);
    std::thread::sleep(nap.min(left));
    true
}

/// An IO error as a store error, with its message: `SQLITE_BUSY` for a lock not granted in
/// time, else `SQLITE_CANTOPEN`.
fn io_error(err: &io::Error) -> rusqlite::Error {
    let code = if err.kind() == io::ErrorKind::WouldBlock {
        rusqlite::ffi::SQLITE_BUSY
    } else {
        rusqlite::ffi::SQLITE_CANTOPEN
    };
    rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), Some(err.to_string()))
}

/// What is wrong with the database when `err` says it is damaged.
pub fn damaged(err: &rusqlite::Error) -> Option<String> {
    is_damaged(err).then(|| damage(err))
}

fn is_damaged(err: &rusqlite::Error) -> bool {
    matches!(err.sqlite_error_code(), Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase))
}

/// What a damaged database's error says, without its extended code.
fn damage(err: &rusqlite::Error) -> String {
    match err.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => "not a database".to_owned(),
        _ => format!("damaged: {err}"),
    }
}

/// Whether `err` is the write lock not granted within [`LOCK_WAIT`].
pub fn is_busy(err: &rusqlite::Error) -> bool {
    matches!(err.sqlite_error_code(), Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked))
}

/// The memories sharing the most (and rarest) terms with `recall`'s, best first.
fn search(conn: &Connection, recall: &Recall) -> rusqlite::Result<Vec<Memory>> {
    let terms = &recall.terms[..recall.terms.len().min(64)];
    if terms.is_empty() || recall.max == 0 {
        return Ok(Vec::new());
    }
    let placeholders = vec!["?"; terms.len()].join(", ");
    let mut statement = conn.prepare(&format!(
        "SELECT term, memory FROM memory_terms WHERE term IN ({placeholders})"
    ))?;
    let hits: Vec<(usize, i64)> = statement
        .query_map(rusqlite::params_from_iter(terms), |row| {
            let term: String = row.get(0)?;
            Ok((terms.iter().position(|t| *t == term).unwrap_or(usize::MAX), row.get(1)?))
        })?
        .collect::<Result<_, _>>()?;
    if hits.is_empty() {
        return Ok(Vec::new());
    }
    let total: i64 = conn.query_row("SELECT count(*) FROM memories", [], |row| row.get(0))?;
    let total = usize::try_from(total).unwrap_or(0);
    let ids = memory::rank(&hits, terms.len(), total, recall.min_terms(), recall.max);
    let mut found = Vec::with_capacity(ids.len());
    let mut statement = conn
        .prepare("SELECT id, namespace, text, confidence, created FROM memories WHERE id = ?1")?;
    for id in ids {
        if let Some(m) = statement.query_row([id], memory_row).optional()? {
            found.push(m);
        }
    }
    Ok(found)
}

fn memory_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Memory> {
    #[allow(clippy::cast_possible_truncation, reason = "a confidence in [0, 1]")]
    Ok(Memory {
        id: row.get(0)?,
        namespace: row.get(1)?,
        text: row.get(2)?,
        confidence: row.get::<_, f64>(3)? as f32,
        created: row.get(4)?,
    })
}

/// `<dir>/state/hookpack.db`.
pub fn database_path(dir: &Path) -> PathBuf {
    dir.join(DATABASE_PATH)
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Opens the store of the installation folder `dir`.
    fn open(dir: &Path) -> rusqlite::Result<Store> {
        Store::open(&Installation::User { dir: dir.to_path_buf() })
    }

    fn captured(text: &str) -> Captured {
        Captured {
            rule: "memory/markers".into(),
            namespace: "decisions".into(),
            text: text.into(),
            confidence: 1.0,
            note: None,
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hookpack-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_damaged_database_is_set_aside() {
        let dir = temp_dir("damaged");
        std::fs::create_dir_all(dir.join("state")).unwrap();
        std::fs::write(database_path(&dir), b"not a database, but long enough to look like one")
            .unwrap();
        let store = open(&dir).unwrap();
        let aside = store.set_aside().unwrap().clone();
        assert_eq!(aside.why, "not a database");
        assert_eq!(set_aside_copies(&dir.join("state")), vec![aside.path.clone()]);
        assert!(std::fs::read(&aside.path).unwrap().starts_with(b"not a database"));
        assert!(aside.notice().contains(&aside.path.display().to_string()), "{}", aside.notice());
        let failures = store.failures(10).unwrap();
        assert_eq!(failures.len(), 1);
        assert!(failures[0].3.contains("set aside as"), "{failures:?}");
        // Opened again, nothing more is set aside.
        drop(store);
        assert!(open(&dir).unwrap().set_aside().is_none());
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A database set aside again and again keeps only the newest copies.
    #[test]
    fn set_aside_copies_are_pruned() {
        let dir = temp_dir("pruned");
        std::fs::create_dir_all(dir.join("state")).unwrap();
        for i in 0..5 {
            std::fs::write(database_path(&dir), format!("garbage {i}")).unwrap();
            let _ = std::fs::remove_file(dir.join("state/hookpack.db-wal"));
            assert!(open(&dir).unwrap().set_aside().is_some());
        }
        let copies = set_aside_copies(&dir.join("state"));
        assert_eq!(copies.len(), MAX_SET_ASIDE);
        assert_eq!(std::fs::read(copies.last().unwrap()).unwrap(), b"garbage 4");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Recording a failure while another hook holds the lock gives up quickly.
    #[test]
    fn recording_a_failure_does_not_wait_long() {
        let dir = temp_dir("record-busy");
        let holder = open(&dir).unwrap();
        holder.conn.execute_batch("BEGIN IMMEDIATE").unwrap();
        let mut store = open(&dir).unwrap();
        let started = Instant::now();
        let err = store.record_failure("s", "Stop", "boom").unwrap_err();
        let waited = started.elapsed();
        assert!(is_busy(&err), "{err}");
        assert!(waited < LOCK_WAIT, "waited {waited:?}");
        let started = Instant::now();
        let err = store.remember("s", &captured("use JWT")).unwrap_err();
        assert!(is_busy(&err), "{err}");
        assert!(started.elapsed() >= LOCK_WAIT, "a memory waits the bounded wait");
        holder.conn.execute_batch("ROLLBACK").unwrap();
        store.record_failure("s", "Stop", "boom").unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A database marked as hookpack's whose schema holds a trigger (code a crafted database
    /// would run inside every hook: here, an endless loop) is set aside, never run.
    #[test]
    fn a_database_with_a_trigger_is_set_aside_not_run() {
        let dir = temp_dir("trigger");
        drop(open(&dir).unwrap());
        {
            let conn = Connection::open(database_path(&dir)).unwrap();
            conn.execute_batch(
                "CREATE TRIGGER spin BEFORE INSERT ON sessions BEGIN
                     SELECT count(*) FROM (WITH RECURSIVE c(x) AS
                         (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c);
                 END;",
            )
            .unwrap();
        }
        assert!(matches!(diagnose(&dir), Diagnosis::Unusable(why) if why.contains("trigger spin")));
        let mut store = open(&dir).unwrap();
        let aside = store.set_aside().unwrap();
        assert!(aside.why.contains("trigger spin"), "{}", aside.why);
        assert_eq!(store.remember("s", &captured("use JWT")).unwrap(), Some(1));
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Another application's `SQLite` file (with a `sessions` table of its own, or without) is
    /// never migrated into hookpack's: it is set aside as it was, and a new database started.
    #[test]
    fn a_foreign_database_is_set_aside_untouched() {
        for (case, sql) in [
            (
                "foreign-sessions",
                "CREATE TABLE sessions (id TEXT, user TEXT); INSERT INTO sessions VALUES ('a', 'b');",
            ),
            (
                "foreign-tables",
                "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT); INSERT INTO moz_places (url) VALUES ('https://example.com');",
            ),
        ] {
            let dir = temp_dir(case);
            std::fs::create_dir_all(dir.join("state")).unwrap();
            let path = database_path(&dir);
            Connection::open(&path).unwrap().execute_batch(sql).unwrap();
            let before = std::fs::read(&path).unwrap();
            let store = open(&dir).unwrap();
            assert!(store.memories(None, 10).unwrap().is_empty(), "{case}");
            let aside: Vec<_> = std::fs::read_dir(dir.join("state"))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("hookpack.db."))
                .collect();
            assert_eq!(aside.len(), 1, "{case}: {aside:?}");
            assert_eq!(std::fs::read(&aside[0]).unwrap(), before, "{case}: set aside untouched");
            std::fs::remove_dir_all(dir).unwrap();
        }
    }

    #[test]
    fn a_version_1_database_is_migrated() {
        let dir = temp_dir("migrate");
        std::fs::create_dir_all(dir.join("state")).unwrap();
        {
            let conn = Connection::open(database_path(&dir)).unwrap();
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
            let v1 = SCHEMA
                .split("CREATE TABLE IF NOT EXISTS memories")
                .next()
                .unwrap()
                .replace(",\n    handoff TEXT", "");
            conn.execute_batch(&v1).unwrap();
            assert!(conn.prepare("SELECT handoff FROM sessions").is_err(), "a version 1 schema");
            conn.execute(
                "INSERT INTO sessions (id, started, updated, prompts) VALUES ('s', 0, 0, 4)",
                [],
            )
            .unwrap();
            conn.pragma_update(None, "user_version", 1).unwrap();
        }
        let mut store = open(&dir).unwrap();
        assert_eq!(store.remember("s", &captured("use JWT")).unwrap(), Some(1));
        assert_eq!(store.remember("s", &captured("use JWT")).unwrap(), None, "kept once");
        assert_eq!(store.recent_memories("s").unwrap().len(), 1);
        let version: i64 =
            store.conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        assert_eq!(store.memories(None, 10).unwrap().len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn failures_are_counted_and_logged() {
        let dir = temp_dir("failures");
        let mut store = open(&dir).unwrap();
        store.record_failure("s", "PreToolUse", "artifact missing").unwrap();
        store.record_failure("s", "Stop", "artifact missing").unwrap();
        let failures = store.failures(10).unwrap();
        assert_eq!(failures.len(), 2);
        assert_eq!(failures[0].2, "Stop");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
