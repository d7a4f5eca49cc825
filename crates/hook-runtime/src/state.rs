//! Session state in `SQLite` (CONTRACT §3): prompt count, compactions, active agent / workflow /
//! task, flags, the `once` ledger, the last bracket, the compaction handoff and failures, one
//! database per installation under `state/`: one row per session, one log of failures, and the
//! memories (CONTRACT §4.5) with the terms they are found by.
//!
//! A hook that needs the state holds the database's write lock from reading the session to
//! saving it (`BEGIN IMMEDIATE`), so parallel hooks of one session never lose an update: each
//! sees the state the previous one left. The lock is held for the evaluation only (tens of
//! microseconds); WAL lets readers in meanwhile.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hook_engine::memory::{self, Captured, Memory, Recall};
use hook_engine::{Bracket, SessionState};
use rusqlite::{
    Connection, OpenFlags, OptionalExtension, Transaction, TransactionBehavior, params,
};

/// The database's path under an installation's folder.
pub const DATABASE_PATH: &str = "state/hookpack.db";

/// How long a hook waits for another hook's lock before failing open.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The schema's version, in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 2;

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
";

/// The most memories a session's handoff lists.
const HANDOFF_MEMORIES: u32 = 5;

/// The most failures kept in the log.
const MAX_FAILURES_KEPT: i64 = 200;

/// An open state database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
}

impl Store {
    /// Opens (creating if needed) the database of the installation folder `dir`.
    ///
    /// # Errors
    ///
    /// When the database cannot be created, opened or migrated.
    pub fn open(dir: &Path) -> rusqlite::Result<Store> {
        let path = database_path(dir);
        if !path.exists() {
            create(&path)?;
        }
        let open = || {
            let conn = Connection::open_with_flags(
                &path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?;
            // Reading the schema now (the statements that follow need it anyway) finds a
            // damaged file before any state is read from it.
            conn.prepare("SELECT id FROM sessions LIMIT 0")?;
            let store = Store::prepare(conn)?;
            store.migrate()?;
            Ok(store)
        };
        match open() {
            Err(err) if is_damaged(&err) => {
                let aside = path.with_extension(format!("db.damaged-{}", now()));
                let _ = std::fs::rename(&path, aside);
                for suffix in ["-wal", "-shm"] {
                    let mut side = path.clone().into_os_string();
                    side.push(suffix);
                    let _ = std::fs::remove_file(side);
                }
                create(&path)?;
                open()
            }
            other => other,
        }
    }

    /// Opens an existing database without creating or changing anything.
    ///
    /// # Errors
    ///
    /// When there is no database or it cannot be read.
    pub fn open_read_only(dir: &Path) -> rusqlite::Result<Store> {
        let conn = Connection::open_with_flags(
            database_path(dir),
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        Ok(Store { conn })
    }

    /// Brings a database of an older schema up to date (one header read when it is).
    fn migrate(&self) -> rusqlite::Result<()> {
        let version: i64 = self.conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version >= SCHEMA_VERSION {
            return Ok(());
        }
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        // Another hook may have migrated it meanwhile.
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version < 2 {
            let has_handoff = tx.prepare("SELECT handoff FROM sessions LIMIT 0").is_ok();
            if !has_handoff {
                tx.execute_batch(MIGRATE_FROM_1)?;
            }
            tx.execute_batch(SCHEMA)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        tx.commit()
    }

    fn prepare(conn: Connection) -> rusqlite::Result<Store> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // WAL without a sync per commit: a crash may lose the last commits, never corrupt.
        // Without syncs: an application crash loses nothing, a power loss may lose or damage
        // the session state, which is worth less than the milliseconds every hook would pay.
        // A damaged database is set aside and started afresh (`Store::open`).
        conn.pragma_update(None, "synchronous", "OFF")?;
        Ok(Store { conn })
    }

    /// Takes the write lock and reads session `id` (a session never seen reads as new).
    ///
    /// # Errors
    ///
    /// When the lock is not granted within the busy timeout, or the database cannot be read.
    pub fn session(&mut self, id: &str) -> rusqlite::Result<Session<'_>> {
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let loaded = load(&tx, id)?;
        let new = loaded.is_none();
        Ok(Session {
            tx,
            id: id.to_owned(),
            before: loaded.unwrap_or_default(),
            new,
            handoff: None,
            handoff_changed: false,
        })
    }

    /// Reads session `id` without taking the write lock: for `hookpack explain` and tests.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn peek(&self, id: &str) -> rusqlite::Result<Option<SessionState>> {
        load(&self.conn, id)
    }

    /// The last bracket recorded for session `id`.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn last_bracket(&self, id: &str) -> rusqlite::Result<Option<String>> {
        self.conn
            .query_row("SELECT bracket FROM sessions WHERE id = ?1", [id], |row| row.get(0))
            .optional()
            .map(Option::flatten)
    }

    /// Records a failure: counted on the session and kept in the log `hookpack doctor` shows.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    pub fn record_failure(&mut self, id: &str, event: &str, message: &str) -> rusqlite::Result<()> {
        let now = now();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO sessions (id, started, updated, failures) VALUES (?1, ?2, ?2, 1)
             ON CONFLICT (id) DO UPDATE SET failures = failures + 1, updated = ?2",
            params![id, now],
        )?;
        tx.execute(
            "INSERT INTO failures (at, session, event, message) VALUES (?1, ?2, ?3, ?4)",
            params![now, id, event, message],
        )?;
        tx.execute(
            "DELETE FROM failures WHERE rowid <= (SELECT max(rowid) FROM failures) - ?1",
            [MAX_FAILURES_KEPT],
        )?;
        tx.commit()
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

/// One session's state, read under the write lock; [`Session::save`] writes the changes and
/// releases it, dropping it releases it unchanged.
#[derive(Debug)]
pub struct Session<'c> {
    tx: Transaction<'c>,
    id: String,
    /// The state as the event found it.
    pub before: SessionState,
    new: bool,
    /// The handoff to write on save, when `handoff_changed`.
    handoff: Option<String>,
    handoff_changed: bool,
}

impl Session<'_> {
    /// Writes `after` (and the bracket, when it was computed) and commits.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    pub fn save(self, after: &SessionState, bracket: Option<Bracket>) -> rusqlite::Result<()> {
        let Session { tx, id, handoff, handoff_changed, .. } = self;
        let flags: Vec<&str> = after.flags.iter().map(String::as_str).collect();
        let injected: Vec<String> =
            after.injected.iter().map(|(rule, at)| format!("{rule} {at}")).collect();
        tx.execute(
            "INSERT INTO sessions (id, started, updated, prompts, prompts_since_compaction,
                 compactions, compaction_pending, agent, workflow, task, flags, injected, bracket)
             VALUES (?1, ?2, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
             ON CONFLICT (id) DO UPDATE SET updated = ?2, prompts = ?3,
                 prompts_since_compaction = ?4, compactions = ?5, compaction_pending = ?6,
                 agent = ?7, workflow = ?8, task = ?9, flags = ?10, injected = ?11,
                 bracket = coalesce(?12, bracket),
                 handoff = CASE WHEN ?13 THEN ?14 ELSE handoff END",
            params![
                id,
                now(),
                after.prompt_count.cast_signed(),
                after.prompts_since_compaction.cast_signed(),
                after.compactions,
                after.compaction_pending,
                after.agent,
                after.workflow,
                after.task,
                flags.join("\n"),
                injected.join("\n"),
                bracket.map(Bracket::as_str),
                handoff_changed,
                handoff,
            ],
        )?;
        tx.commit()
    }

    /// Stores a captured memory with the terms it is found by; a memory already stored in its
    /// namespace is kept once. Its id, when new.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    pub fn remember(&self, captured: &Captured) -> rusqlite::Result<Option<i64>> {
        let inserted = self.tx.execute(
            "INSERT OR IGNORE INTO memories (namespace, text, confidence, created, session, rule)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                captured.namespace,
                captured.text,
                f64::from(captured.confidence),
                now(),
                self.id,
                captured.rule
            ],
        )?;
        if inserted == 0 {
            return Ok(None);
        }
        let id = self.tx.last_insert_rowid();
        let mut statement =
            self.tx.prepare("INSERT OR IGNORE INTO memory_terms (term, memory) VALUES (?1, ?2)")?;
        for term in memory::terms(&captured.text) {
            statement.execute(params![term, id])?;
        }
        Ok(Some(id))
    }

    /// The memories that best match `recall`'s terms, best first.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn recall(&self, recall: &Recall) -> rusqlite::Result<Vec<Memory>> {
        search(&self.tx, recall)
    }

    /// The memories this session captured most recently, oldest first.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn recent_memories(&self) -> rusqlite::Result<Vec<Memory>> {
        let mut statement = self.tx.prepare(
            "SELECT id, namespace, text, confidence, created FROM memories
             WHERE session = ?1 ORDER BY id DESC LIMIT ?2",
        )?;
        let mut recent: Vec<Memory> = statement
            .query_map(params![self.id, HANDOFF_MEMORIES], memory_row)?
            .collect::<Result<_, _>>()?;
        recent.reverse();
        Ok(recent)
    }

    /// The handoff the last `PreCompact` wrote.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn handoff(&self) -> rusqlite::Result<Option<String>> {
        self.tx
            .query_row("SELECT handoff FROM sessions WHERE id = ?1", [&self.id], |row| row.get(0))
            .optional()
            .map(Option::flatten)
    }

    /// Sets (or with `None` clears) the handoff, written by [`Session::save`].
    pub fn set_handoff(&mut self, handoff: Option<String>) {
        self.handoff = handoff;
        self.handoff_changed = true;
    }

    /// Whether the session had no state before this event.
    pub fn is_new(&self) -> bool {
        self.new
    }

    /// Removes the sessions not updated for `days` days.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    pub fn remove_older_than(&self, days: u32) -> rusqlite::Result<usize> {
        if days == 0 {
            return Ok(0);
        }
        let cutoff = now() - i64::from(days) * 86_400;
        self.tx.execute(
            "DELETE FROM sessions WHERE updated < ?1 AND id <> ?2",
            params![cutoff, self.id],
        )
    }
}

/// Creates the database at `path` whole: built under a private name, then linked into place,
/// so that hooks starting together never see it half made (one of them wins; the others use
/// its file).
fn create(path: &Path) -> rusqlite::Result<()> {
    let io = |err: std::io::Error| {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some(format!("{}: {err}", path.display())),
        )
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let staged = dir.join(format!(".hookpack.db.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&staged);
    {
        let conn = Connection::open(&staged)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.execute_batch(SCHEMA)?;
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    let linked = std::fs::hard_link(&staged, path);
    let _ = std::fs::remove_file(&staged);
    match linked {
        Ok(()) => Ok(()),
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(err) => Err(io(err)),
    }
}

fn is_damaged(err: &rusqlite::Error) -> bool {
    matches!(
        err.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
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

fn load(conn: &Connection, id: &str) -> rusqlite::Result<Option<SessionState>> {
    conn.query_row(
        "SELECT prompts, prompts_since_compaction, compactions, compaction_pending,
                agent, workflow, task, flags, injected
         FROM sessions WHERE id = ?1",
        [id],
        |row| {
            let flags: String = row.get(7)?;
            let injected: String = row.get(8)?;
            Ok(SessionState {
                prompt_count: row.get::<_, i64>(0)?.cast_unsigned(),
                prompts_since_compaction: row.get::<_, i64>(1)?.cast_unsigned(),
                compactions: row.get(2)?,
                compaction_pending: row.get(3)?,
                agent: row.get(4)?,
                workflow: row.get(5)?,
                task: row.get(6)?,
                flags: flags.lines().map(str::to_owned).collect(),
                injected: injected
                    .lines()
                    .filter_map(|line| {
                        let (rule, at) = line.rsplit_once(' ')?;
                        Some((rule.to_owned(), at.parse().ok()?))
                    })
                    .collect(),
            })
        },
    )
    .optional()
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hookpack-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_session_round_trips() {
        let dir = temp_dir("round-trip");
        let mut store = Store::open(&dir).unwrap();
        let session = store.session("s1").unwrap();
        assert_eq!(session.before, SessionState::default());
        let mut after = session.before.clone();
        after.prompt_count = 3;
        after.prompts_since_compaction = 2;
        after.compactions = 1;
        after.agent = Some("dev".into());
        after.flags.insert("edited".into());
        after.flags.insert("tested".into());
        after.injected.insert("context/constitution".into(), 1);
        session.save(&after, Some(Bracket::Moderate)).unwrap();

        let session = store.session("s1").unwrap();
        assert_eq!(session.before, after);
        let mut next = after.clone();
        next.flags.remove("tested");
        next.agent = None;
        session.save(&next, None).unwrap();
        assert_eq!(store.peek("s1").unwrap(), Some(next));
        assert_eq!(store.last_bracket("s1").unwrap().as_deref(), Some("moderate"));
        assert_eq!(store.peek("other").unwrap(), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_damaged_database_is_set_aside() {
        let dir = temp_dir("damaged");
        std::fs::create_dir_all(dir.join("state")).unwrap();
        std::fs::write(database_path(&dir), b"not a database, but long enough to look like one")
            .unwrap();
        let mut store = Store::open(&dir).unwrap();
        assert!(store.session("s").unwrap().is_new());
        let aside = std::fs::read_dir(dir.join("state"))
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().contains("damaged"))
            .count();
        assert_eq!(aside, 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn old_sessions_are_removed() {
        let dir = temp_dir("cleanup");
        let mut store = Store::open(&dir).unwrap();
        for id in ["old", "new"] {
            let session = store.session(id).unwrap();
            let mut after = SessionState::default();
            after.flags.insert("f".into());
            session.save(&after, None).unwrap();
        }
        store.conn.execute("UPDATE sessions SET updated = 0 WHERE id = 'old'", []).unwrap();
        let session = store.session("new").unwrap();
        assert_eq!(session.remove_older_than(7).unwrap(), 1);
        let before = session.before.clone();
        session.save(&before, None).unwrap();
        assert_eq!(store.peek("old").unwrap(), None);
        assert!(store.peek("new").unwrap().is_some());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_version_1_database_is_migrated_keeping_its_sessions() {
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
        let mut store = Store::open(&dir).unwrap();
        let mut session = store.session("s").unwrap();
        assert_eq!(session.before.prompt_count, 4);
        let captured = Captured {
            rule: "memory/markers".into(),
            namespace: "decisions".into(),
            text: "use JWT".into(),
            confidence: 1.0,
            note: None,
        };
        assert_eq!(session.remember(&captured).unwrap(), Some(1));
        assert_eq!(session.remember(&captured).unwrap(), None, "kept once");
        session.set_handoff(Some("handoff".into()));
        let before = session.before.clone();
        session.save(&before, None).unwrap();
        let session = store.session("s").unwrap();
        assert_eq!(session.handoff().unwrap().as_deref(), Some("handoff"));
        drop(session);
        let version: i64 =
            store.conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        assert_eq!(store.memories(None, 10).unwrap().len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn failures_are_counted_and_logged() {
        let dir = temp_dir("failures");
        let mut store = Store::open(&dir).unwrap();
        store.record_failure("s", "PreToolUse", "artifact missing").unwrap();
        store.record_failure("s", "Stop", "artifact missing").unwrap();
        let failures = store.failures(10).unwrap();
        assert_eq!(failures.len(), 2);
        assert_eq!(failures[0].2, "Stop");
        let count: i64 = store
            .conn
            .query_row("SELECT failures FROM sessions WHERE id = 's'", [], |row| row.get(0))
            .unwrap();
        assert_eq!(count, 2);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
