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
mod index;
pub mod sessions;
mod xxh64;

use disk::{
    Connect, DbVersion, FileId, Found, Pin, clear_companions, connect, create, describe, inspect,
    open_for_reading, repair,
};
pub use disk::{Diagnosis, diagnose, set_aside_copies};

/// The rule a memory pulled from a shared note (`hookpack memory pull`) is stored as captured
/// by; its session is `git:<remote>`. Pulled memories are evicted before the store's own.
pub const PULLED_RULE: &str = "git-notes";
/// The start of a pulled memory's session.
pub const PULLED_SESSION_PREFIX: &str = "git:";

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
const SCHEMA_VERSION: i64 = 4;

/// The tables of a hookpack database from before the application id (versions 1 and 2).
const LEGACY_TABLES: [&str; 4] = ["failures", "memories", "memory_terms", "sessions"];

/// Every table and index hookpack's schema has; anything else (a trigger, a view, another
/// table) in a database that claims to be hookpack's makes it unusable: a trigger is code that
/// a crafted database would run inside the hook.
const SCHEMA_OBJECTS: [&str; 7] = [
    "failures",
    "memories",
    "memory_terms",
    "term_counts",
    "memories_by_session",
    // Of versions 1 to 3, until a hook migrates the database.
    "sessions",
    "notices",
];

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

/// From version 3: the sessions moved to their files, and recall counts each term's memories
/// instead of reading all of their postings. (Versions 1 and 2 had no memories table or no
/// terms yet: `SCHEMA` creates what they lack, and the counts start from what there is.)
const MIGRATE_TO_4: &str = "
DROP TABLE IF EXISTS sessions;
DROP TABLE IF EXISTS notices;
DELETE FROM term_counts;
INSERT INTO term_counts (term, memories) SELECT term, count(*) FROM memory_terms GROUP BY term;
INSERT INTO term_counts (term, memories) VALUES ('', (SELECT count(*) FROM memories));
";

/// The memories, the terms they are found by, and how many memories each term finds (the
/// empty term counts them all): recall reads a term's count instead of its postings.
const SCHEMA: &str = "
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
CREATE TABLE IF NOT EXISTS term_counts (
    term TEXT PRIMARY KEY,
    memories INTEGER NOT NULL
) WITHOUT ROWID;
";

/// The largest recall index a logged failure names after the new state (rewriting it whole).
const RENAMED_INDEX_BYTES: usize = 1 << 20;

/// The most failures kept in the log.
const MAX_FAILURES_KEPT: i64 = 200;

/// An open state database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    set_aside: Option<SetAside>,
    /// The database file this store opened, when it is one in a state folder.
    file: Option<FileId>,
    /// The state folder, when this store keeps its recall index (`None` for a dry run's).
    dir: Option<ConfinedDir>,
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
                            store.dir = Some(dir.clone());
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

    /// Opens the installation's database to read its memories, as a hook recalling does, when
    /// its header says it is hookpack's, of the current schema, in rollback-journal mode:
    /// read-only (nothing created, no journal read or written), its schema trusted no further
    /// than reading (triggers and views off). `None` when it is not so: the caller opens it with
    /// [`Store::open`], which checks, migrates or sets aside.
    ///
    /// # Errors
    ///
    /// When the folder is refused or `SQLite` cannot open it.
    pub fn open_to_read(installation: &Installation) -> rusqlite::Result<Option<Store>> {
        let Some(dir) =
            Confined::of(installation).existing_dir(STATE_DIR).map_err(|e| io_error(&e))?
        else {
            return Ok(None);
        };
        let Found::Regular(id) = inspect(&dir, DATABASE_NAME).map_err(|e| io_error(&e))? else {
            return Ok(None);
        };
        let path = dir.entry(DATABASE_NAME).map_err(|e| io_error(&e))?;
        // A journal left by a writer that died is rolled back by a writer's opening.
        let journal =
            inspect(&dir, &format!("{DATABASE_NAME}-journal")).map_err(|e| io_error(&e))?;
        if !matches!(journal, Found::Missing) || !disk::reads_as_current(&path) {
            return Ok(None);
        }
        let mut conn = rusqlite::Connection::open_with_flags(
            &path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_handler(Some(wait_for_lock))?;
        distrust_schema(&conn)?;
        Ok(Some(Store { conn, set_aside: None, file: Some(id), dir: Some(dir) }))
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
        Ok(Store { conn, set_aside: None, file: None, dir: None })
    }

    /// Brings a database of an older schema up to date, and marks it as hookpack's.
    fn migrate(&self) -> rusqlite::Result<()> {
        let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
        // Another hook may have migrated it meanwhile.
        let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version < SCHEMA_VERSION {
            tx.execute_batch(SCHEMA)?;
            tx.execute_batch(MIGRATE_TO_4)?;
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
        let pin = self.pin();
        let mut before = None;
        let recorded =
            self.conn.transaction_with_behavior(TransactionBehavior::Immediate).and_then(|tx| {
                before = pin.as_ref().and_then(Pin::version);
                log_failure(&tx, id, event, message).and_then(|()| tx.commit())
            });
        drop(pin);
        self.conn.busy_handler(Some(wait_for_lock))?;
        recorded?;
        // The memories did not change: a small index is named after the new state. A large one
        // is left for the next recall to write anew: every hook of a failing setup logs a
        // failure, and each would rewrite it.
        let Some(dir) = &self.dir else { return Ok(()) };
        if index::read(dir.path()).is_some_and(|bytes| bytes.len() <= RENAMED_INDEX_BYTES) {
            self.index_after_write(before, |_| true);
        }
        Ok(())
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

    /// Memory `id` with where it came from: the memory, the session that stored it and the rule
    /// that captured it; `None` when there is no such memory.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn memory(&self, id: i64) -> rusqlite::Result<Option<(Memory, String, String)>> {
        self.conn
            .query_row(
                "SELECT id, namespace, text, confidence, created, session, rule FROM memories
                 WHERE id = ?1",
                [id],
                |row| Ok((memory_row(row)?, row.get(5)?, row.get(6)?)),
            )
            .optional()
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
        let pin = self.pin();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let before = pin.as_ref().and_then(Pin::version);
        let mut removed = 0;
        let mut forgotten = Vec::new();
        for id in ids {
            let gone = tx.execute("DELETE FROM memories WHERE id = ?1", [id])?;
            if gone == 0 {
                continue;
            }
            removed += gone;
            let terms = tx
                .prepare("SELECT term FROM memory_terms WHERE memory = ?1")?
                .query_map([id], |row| row.get(0))?
                .collect::<Result<Vec<String>, _>>()?;
            forgotten.push((*id, terms));
            tx.execute(
                "UPDATE term_counts SET memories = memories - 1
                 WHERE term = '' OR term IN (SELECT term FROM memory_terms WHERE memory = ?1)",
                [id],
            )?;
            tx.execute("DELETE FROM memory_terms WHERE memory = ?1", [id])?;
        }
        tx.commit()?;
        drop(pin);
        if removed > 0 {
            self.index_after_write(before, |index| index.remove(&forgotten));
        }
        Ok(removed)
    }

    /// The memories past the limits, at most `at_most` of them: those older than `max_age_days`
    /// days (0: none is too old) among the `at_most` oldest, then as many as the store holds
    /// past `max` (0: no limit), pulled ones first ([`PULLED_RULE`]: the store's own memories
    /// are kept before what another clone shared), oldest first. Ids grow with each memory
    /// stored, so the oldest come first by id, read through the primary key (pulled ones
    /// through the index by session): a hook pays for at most `at_most` rows, however many
    /// memories there are.
    ///
    /// # Errors
    ///
    /// When the database cannot be read.
    pub fn prunable(
        &self,
        max: u32,
        max_age_days: u32,
        at_most: u32,
    ) -> rusqlite::Result<Vec<i64>> {
        let mut ids = Vec::new();
        if max_age_days > 0 {
            let cutoff = now().saturating_sub(i64::from(max_age_days) * 86_400);
            let mut oldest =
                self.conn.prepare("SELECT id, created FROM memories ORDER BY id LIMIT ?1")?;
            let rows = oldest.query_map([at_most], |row| Ok((row.get(0)?, row.get(1)?)))?;
            for row in rows {
                let (id, created): (i64, i64) = row?;
                if created >= cutoff {
                    break;
                }
                ids.push(id);
            }
        }
        if max > 0 {
            let count: i64 = self
                .conn
                .query_row("SELECT memories FROM term_counts WHERE term = ''", [], |row| row.get(0))
                .optional()?
                .unwrap_or(0);
            let over = count - i64::from(max) - i64::try_from(ids.len()).unwrap_or(i64::MAX);
            let room = i64::from(at_most) - i64::try_from(ids.len()).unwrap_or(i64::MAX);
            if over > 0 && room > 0 {
                let after = ids.last().copied().unwrap_or(i64::MIN);
                let wanted = over.min(room);
                let mut pulled = self.conn.prepare(
                    "SELECT id FROM memories WHERE session >= ?1 AND session < ?2 AND rule = ?3
                     AND id > ?4 ORDER BY id LIMIT ?5",
                )?;
                let (from, to) = pulled_sessions();
                let rows = pulled
                    .query_map(params![from, to, PULLED_RULE, after, wanted], |row| row.get(0))?;
                let before = ids.len();
                for id in rows {
                    ids.push(id?);
                }
                let left = wanted - i64::try_from(ids.len() - before).unwrap_or(i64::MAX);
                if left > 0 {
                    let mut oldest = self.conn.prepare(
                        "SELECT id FROM memories WHERE id > ?1
                         AND NOT (session >= ?2 AND session < ?3 AND rule = ?4)
                         ORDER BY id LIMIT ?5",
                    )?;
                    let rows = oldest
                        .query_map(params![after, from, to, PULLED_RULE, left], |row| row.get(0))?;
                    for id in rows {
                        ids.push(id?);
                    }
                }
            }
        }
        Ok(ids)
    }

    /// Removes [`Store::prunable`]'s memories ([`Store::forget`]); how many.
    ///
    /// # Errors
    ///
    /// When the database cannot be read or written.
    pub fn prune(&mut self, max: u32, max_age_days: u32, at_most: u32) -> rusqlite::Result<usize> {
        let ids = self.prunable(max, max_age_days, at_most)?;
        if ids.is_empty() { Ok(0) } else { self.forget(&ids) }
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
        let pin = self.pin();
        let tx = self.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let before = pin.as_ref().and_then(Pin::version);
        let mut ids = Vec::with_capacity(all.len());
        let mut added = Vec::new();
        let created = now();
        {
            let mut memory = tx.prepare(
                "INSERT OR IGNORE INTO memories (namespace, text, confidence, created, session, rule)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            let mut term =
                tx.prepare("INSERT OR IGNORE INTO memory_terms (term, memory) VALUES (?1, ?2)")?;
            let mut count = tx.prepare(
                "INSERT INTO term_counts (term, memories) VALUES (?1, 1)
                 ON CONFLICT (term) DO UPDATE SET memories = memories + 1",
            )?;
            for captured in all {
                let inserted = memory.execute(params![
                    captured.namespace,
                    captured.text,
                    f64::from(captured.confidence),
                    created,
                    session,
                    captured.rule
                ])?;
                if inserted == 0 {
                    ids.push(None);
                    continue;
                }
                let id = tx.last_insert_rowid();
                count.execute([""])?;
                let terms = memory::terms(&captured.text);
                for t in &terms {
                    if term.execute(params![t, id])? > 0 {
                        count.execute([t])?;
                    }
                }
                ids.push(Some(id));
                // As the database reads it back: its confidence a double.
                #[allow(clippy::cast_possible_truncation, reason = "a confidence in [0, 1]")]
                let confidence = f64::from(captured.confidence) as f32;
                let memory = Memory {
                    id,
                    namespace: captured.namespace.clone(),
                    text: captured.text.clone(),
                    confidence,
                    created,
                };
                added.push((memory, index::session_hash(session), terms));
            }
        }
        tx.commit()?;
        drop(pin);
        if !added.is_empty() {
            self.index_after_write(before, |index| {
                index.add(added);
                true
            });
        }
        Ok(ids)
    }

    /// Stores memories pulled from a shared note ([`PULLED_RULE`]) as session `session`, in one
    /// transaction, as many as `max` leaves room for (0: no limit): the store's own memories
    /// are never evicted for them. Returns how many were new and stored, and how many were new
    /// and did not fit.
    ///
    /// # Errors
    ///
    /// When the database cannot be written.
    pub fn remember_pulled(
        &mut self,
        session: &str,
        all: &[Captured],
        max: u32,
    ) -> rusqlite::Result<(usize, usize)> {
        let count: i64 = self
            .conn
            .query_row("SELECT memories FROM term_counts WHERE term = ''", [], |row| row.get(0))
            .optional()?
            .unwrap_or(0);
        let room = if max == 0 {
            usize::MAX
        } else {
            usize::try_from(i64::from(max).saturating_sub(count)).unwrap_or(0)
        };
        let mut fits = Vec::new();
        let mut dropped = 0;
        {
            let mut stored = self
                .conn
                .prepare("SELECT 1 FROM memories WHERE namespace = ?1 AND text = ?2 LIMIT 1")?;
            for captured in all {
                // What is stored already takes no more room.
                if stored.exists(params![captured.namespace, captured.text])? {
                    continue;
                }
                if fits.len() < room {
                    fits.push(captured.clone());
                } else {
                    dropped += 1;
                }
            }
        }
        let added = self.remember_all(session, &fits)?;
        let new = added.iter().filter(|id| id.is_some()).count();
        Ok((new, dropped))
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

/// The range of sessions pulled memories are stored as: `git:` up to, not including, `git;`.
fn pulled_sessions() -> (String, String) {
    let prefix = PULLED_SESSION_PREFIX;
    let mut end = prefix[..prefix.len() - 1].to_owned();
    end.push(char::from(prefix.as_bytes()[prefix.len() - 1] + 1));
    (prefix.to_owned(), end)
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

/// The newest postings recall reads of one term: a term shared by more memories than this
/// weighs little, and its newest memories stand for it.
pub(crate) const POSTINGS_PER_TERM: usize = 128;

/// The most postings recall reads in all, the query's rarest terms first.
const POSTINGS_READ: usize = 1024;

/// The memories sharing the most (and rarest) terms with `recall`'s, best first. What it reads
/// does not grow with the memories stored: each term's count (one row), then at most
/// [`POSTINGS_PER_TERM`] of its newest postings, rarest terms first, [`POSTINGS_READ`] in all.
fn search(conn: &Connection, recall: &Recall) -> rusqlite::Result<Vec<Memory>> {
    if recall.terms.is_empty() || recall.max == 0 {
        return Ok(Vec::new());
    }
    // One read transaction: the file's shared lock is taken once, not for every statement.
    let tx = conn.unchecked_transaction()?;
    let mut database = Database {
        count: tx.prepare("SELECT memories FROM term_counts WHERE term = ?1")?,
        postings: tx.prepare(
            "SELECT memory FROM memory_terms WHERE term = ?1 ORDER BY memory DESC LIMIT ?2",
        )?,
        memory: tx.prepare(
            "SELECT id, namespace, text, confidence, created FROM memories WHERE id = ?1",
        )?,
    };
    let found = search_in(&mut database, recall)?;
    drop(database);
    tx.commit()?;
    Ok(found)
}

/// Where recall reads: the database, or its index.
trait Postings {
    /// How many memories share `term` (all of them for the empty term).
    fn count(&mut self, term: &str) -> rusqlite::Result<usize>;
    /// The newest `n` memories sharing `term`, newest first, added to `into`.
    fn newest(&mut self, term: &str, n: usize, into: &mut Vec<i64>) -> rusqlite::Result<()>;
    /// Memory `id`, if it is stored.
    fn memory(&mut self, id: i64) -> rusqlite::Result<Option<Memory>>;
}

struct Database<'c> {
    count: rusqlite::Statement<'c>,
    postings: rusqlite::Statement<'c>,
    memory: rusqlite::Statement<'c>,
}

impl Postings for Database<'_> {
    fn count(&mut self, term: &str) -> rusqlite::Result<usize> {
        let n: Option<i64> = self.count.query_row([term], |row| row.get(0)).optional()?;
        Ok(n.and_then(|n| usize::try_from(n).ok()).unwrap_or(0))
    }

    fn newest(&mut self, term: &str, n: usize, into: &mut Vec<i64>) -> rusqlite::Result<()> {
        let n = i64::try_from(n).unwrap_or(i64::MAX);
        for memory in self.postings.query_map(params![term, n], |row| row.get(0))? {
            into.push(memory?);
        }
        Ok(())
    }

    fn memory(&mut self, id: i64) -> rusqlite::Result<Option<Memory>> {
        self.memory.query_row([id], memory_row).optional()
    }
}

impl Postings for index::View<'_> {
    fn count(&mut self, term: &str) -> rusqlite::Result<usize> {
        let count = if term.is_empty() {
            self.total
        } else {
            self.term(term).map_or(0, |(count, _)| count)
        };
        Ok(usize::try_from(count).unwrap_or(usize::MAX))
    }

    fn newest(&mut self, term: &str, n: usize, into: &mut Vec<i64>) -> rusqlite::Result<()> {
        if let Some((_, postings)) = self.term(term) {
            into.extend(postings.take(n));
        }
        Ok(())
    }

    fn memory(&mut self, id: i64) -> rusqlite::Result<Option<Memory>> {
        Ok(index::View::memory(self, id).map(|(memory, _)| memory))
    }
}

fn search_in(source: &mut impl Postings, recall: &Recall) -> rusqlite::Result<Vec<Memory>> {
    let terms = &recall.terms[..recall.terms.len().min(memory::MAX_QUERY_TERMS)];
    if terms.is_empty() || recall.max == 0 {
        return Ok(Vec::new());
    }
    let total = source.count("")?;
    let mut frequency = Vec::with_capacity(terms.len());
    for term in terms {
        frequency.push(source.count(term)?);
    }
    let mut order: Vec<usize> = (0..terms.len()).filter(|&i| frequency[i] > 0).collect();
    if order.is_empty() {
        return Ok(Vec::new());
    }
    order.sort_by_key(|&i| frequency[i]);
    let mut hits: Vec<(usize, i64)> = Vec::new();
    let mut memories = Vec::new();
    for i in order {
        let left = POSTINGS_READ.saturating_sub(hits.len()).min(POSTINGS_PER_TERM);
        if left == 0 {
            break;
        }
        memories.clear();
        source.newest(&terms[i], left, &mut memories)?;
        hits.extend(memories.iter().map(|&m| (i, m)));
    }
    let ids = memory::rank(&hits, &frequency, total, recall.min_terms(), recall.max);
    let mut found = Vec::with_capacity(ids.len());
    for id in ids {
        if let Some(m) = source.memory(id)? {
            found.push(m);
        }
    }
    Ok(found)
}

/// What recall found through the index ([`recall_indexed`]).
#[derive(Debug)]
pub enum Indexed {
    /// The memories, best first: the index holds the database's current state.
    Found(Vec<Memory>),
    /// There is no memory database.
    NoDatabase,
    /// The database is to be read: the index is missing, stale or damaged, or the database is
    /// not one a hook may read without opening it for writing.
    Stale,
}

/// Recall through the index (`state/memories.idx`), without opening the database: the memories
/// [`Store::search`] would find, when the index holds the database's current state.
pub fn recall_indexed(installation: &Installation, recall: &Recall) -> Indexed {
    with_index(installation, |view| search_in(view, recall).ok())
}

/// The memories `ids` that session `session` stored, through the index, in their order (one
/// forgotten, or another session's, is left out), when the index holds the database's current
/// state.
pub fn memories_indexed(installation: &Installation, ids: &[i64], session: &str) -> Indexed {
    let session = index::session_hash(session);
    with_index(installation, |view| {
        let stored = ids.iter().filter_map(|&id| index::View::memory(view, id));
        Some(stored.filter(|(_, s)| *s == session).map(|(memory, _)| memory).collect())
    })
}

/// What `read` finds in the index, when the index holds the database's current state.
fn with_index(
    installation: &Installation,
    read: impl FnOnce(&mut index::View<'_>) -> Option<Vec<Memory>>,
) -> Indexed {
    let dir = match Confined::of(installation).existing_dir(STATE_DIR) {
        Ok(Some(dir)) => dir,
        Ok(None) => return Indexed::NoDatabase,
        // Refused: the database's opening says why.
        Err(_) => return Indexed::Stale,
    };
    let Ok(path) = dir.entry(DATABASE_NAME) else { return Indexed::Stale };
    let Some(version) = disk::version(&path) else {
        return if fs::symlink_metadata(&path).is_err() {
            Indexed::NoDatabase
        } else {
            Indexed::Stale
        };
    };
    let Some(bytes) = index::read(dir.path()) else { return Indexed::Stale };
    let found = match index::View::new(&bytes).filter(|v| v.version == version) {
        Some(mut view) => read(&mut view).map_or(Indexed::Stale, Indexed::Found),
        None => Indexed::Stale,
    };
    crate::keep_until_exit(bytes);
    found
}

impl Store {
    /// This store's database file, pinned to read its state within a transaction: call it
    /// before the transaction begins, and drop it after it ends ([`Pin`]).
    fn pin(&self) -> Option<Pin> {
        Pin::new(&self.dir.as_ref()?.entry(DATABASE_NAME).ok()?, self.file?)
    }

    /// Keeps the recall index after this store's write, which changed the database from state
    /// `before` (read under the write lock) to the next: the index of `before`, with `change`
    /// made, is the index of the new state, unless `change` says it is not exact; otherwise the
    /// index is written anew from the database.
    fn index_after_write(
        &self,
        before: Option<DbVersion>,
        change: impl FnOnce(&mut index::Index) -> bool,
    ) {
        let Some(dir) = &self.dir else { return };
        let bytes = index::read(dir.path());
        let view = bytes.as_deref().and_then(index::View::new);
        if let Some(before) = before
            && let Some(view) = view.filter(|view| view.version == before)
            && let Some(mut index) = index::Index::decode(&view)
            && change(&mut index)
        {
            // A commit that changes the file counts one.
            index.version.counter = before.counter.wrapping_add(1);
            // An index not written is written by the next recall, from the database.
            let _ = index::write(dir, &index);
            return;
        }
        self.refresh_index();
    }

    /// Writes the recall index anew from the database, as one read transaction sees it.
    pub fn refresh_index(&self) {
        let Some(dir) = &self.dir else { return };
        let Some(pin) = self.pin() else { return };
        let read = self.read_index(&pin);
        drop(pin);
        if let Ok(Some(index)) = read {
            let _ = index::write(dir, &index);
        }
    }

    /// Everything the recall index holds, read from the database in one transaction; `None`
    /// when its state cannot be read.
    fn read_index(&self, pin: &Pin) -> rusqlite::Result<Option<index::Index>> {
        let tx = self.conn.unchecked_transaction()?;
        let mut index = index::Index::default();
        {
            // The first read takes the shared lock: no commit until the transaction ends.
            let mut counts = tx.prepare("SELECT term, memories FROM term_counts ORDER BY term")?;
            let mut rows = counts.query([])?;
            while let Some(row) = rows.next()? {
                let (name, n): (String, i64) = (row.get(0)?, row.get(1)?);
                let n = u64::try_from(n).unwrap_or(0);
                if name.is_empty() {
                    index.total = n;
                } else if n > 0 {
                    index.terms.push(index::Term { name, memories: n, postings: Vec::new() });
                }
            }
        }
        let Some(version) = pin.version() else { return Ok(None) };
        index.version = version;
        {
            // Every posting once, by term and then oldest first: each term keeps its newest.
            let mut postings =
                tx.prepare("SELECT term, memory FROM memory_terms ORDER BY term, memory")?;
            let mut rows = postings.query([])?;
            let mut at = 0;
            while let Some(row) = rows.next()? {
                let term = row.get_ref(0)?.as_str()?;
                while index.terms.get(at).is_some_and(|t| t.name.as_str() < term) {
                    keep_newest(&mut index.terms[at].postings);
                    at += 1;
                }
                if let Some(entry) = index.terms.get_mut(at).filter(|t| t.name == term) {
                    entry.postings.push(row.get(1)?);
                }
            }
            let rest = at.min(index.terms.len());
            for term in &mut index.terms[rest..] {
                keep_newest(&mut term.postings);
            }
        }
        {
            let mut memories = tx.prepare(
                "SELECT id, namespace, text, confidence, created, session FROM memories ORDER BY id",
            )?;
            let rows = memories.query_map([], |row| {
                let session = index::session_hash(row.get_ref(5)?.as_str()?);
                Ok((memory_row(row)?, session))
            })?;
            index.memories = rows.collect::<Result<_, _>>()?;
        }
        tx.commit()?;
        Ok(Some(index))
    }
}

/// A term's postings read oldest first: its newest [`POSTINGS_PER_TERM`], newest first.
fn keep_newest(postings: &mut Vec<i64>) {
    let old = postings.len().saturating_sub(POSTINGS_PER_TERM);
    postings.drain(..old);
    postings.reverse();
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
                "CREATE TRIGGER spin BEFORE INSERT ON memories BEGIN
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

    /// The sessions and failures of a version 1 database (no application id, no memories).
    const VERSION_1: &str = "
        CREATE TABLE sessions (id TEXT PRIMARY KEY, started INTEGER NOT NULL,
            updated INTEGER NOT NULL, prompts INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
        CREATE TABLE failures (at INTEGER NOT NULL, session TEXT NOT NULL, event TEXT NOT NULL,
            message TEXT NOT NULL);
        INSERT INTO sessions (id, started, updated, prompts) VALUES ('s', 0, 0, 4);
        PRAGMA user_version = 1;";

    /// A version 3 database as hookpack wrote it (WAL, sessions and notices, no term counts),
    /// with two memories.
    const VERSION_3: &str = "
        PRAGMA journal_mode = WAL;
        CREATE TABLE sessions (id TEXT PRIMARY KEY, handoff TEXT) WITHOUT ROWID;
        CREATE TABLE failures (at INTEGER NOT NULL, session TEXT NOT NULL, event TEXT NOT NULL,
            message TEXT NOT NULL);
        CREATE TABLE memories (id INTEGER PRIMARY KEY, namespace TEXT NOT NULL,
            text TEXT NOT NULL, confidence REAL NOT NULL, created INTEGER NOT NULL,
            session TEXT NOT NULL, rule TEXT NOT NULL, UNIQUE (namespace, text));
        CREATE INDEX memories_by_session ON memories (session);
        CREATE TABLE memory_terms (term TEXT NOT NULL, memory INTEGER NOT NULL,
            PRIMARY KEY (term, memory)) WITHOUT ROWID;
        CREATE TABLE notices (id INTEGER PRIMARY KEY, message TEXT NOT NULL);
        INSERT INTO memories VALUES (1, 'decisions', 'sign tokens', 1.0, 0, 's', 'r');
        INSERT INTO memories VALUES (2, 'decisions', 'rotate tokens', 1.0, 0, 's', 'r');
        INSERT INTO memory_terms VALUES ('sign', 1), ('token', 1), ('rotate', 2), ('token', 2);
        PRAGMA application_id = 1751871595;
        PRAGMA user_version = 3;";

    #[test]
    fn a_version_1_database_is_migrated() {
        let dir = temp_dir("migrate");
        std::fs::create_dir_all(dir.join("state")).unwrap();
        Connection::open(database_path(&dir)).unwrap().execute_batch(VERSION_1).unwrap();
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

    /// Version 3 loses its sessions and notices, gains its terms' counts and leaves WAL: then
    /// a hook reads it read-only.
    #[test]
    fn a_version_3_database_is_migrated_to_counts_and_a_rollback_journal() {
        let dir = temp_dir("migrate-3");
        std::fs::create_dir_all(dir.join("state")).unwrap();
        Connection::open(database_path(&dir)).unwrap().execute_batch(VERSION_3).unwrap();
        assert_eq!(APPLICATION_ID, 1_751_871_595);
        let installation = Installation::User { dir: dir.clone() };
        assert!(Store::open_to_read(&installation).unwrap().is_none(), "WAL and version 3");
        let store = open(&dir).unwrap();
        let count = |term: &str| -> i64 {
            store
                .conn
                .query_row("SELECT memories FROM term_counts WHERE term = ?1", [term], |r| r.get(0))
                .unwrap()
        };
        assert_eq!((count(""), count("token"), count("sign")), (2, 2, 1));
        let mode: String =
            store.conn.pragma_query_value(None, "journal_mode", |r| r.get(0)).unwrap();
        assert_eq!(mode, "delete");
        assert!(store.conn.prepare("SELECT id FROM sessions").is_err());
        drop(store);
        let reading = Store::open_to_read(&installation).unwrap().expect("read-only");
        let found = reading.search(&recall(&["sign", "token"])).unwrap();
        assert_eq!(found.iter().map(|m| m.id).collect::<Vec<_>>(), [1, 2]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    fn recall(terms: &[&str]) -> Recall {
        Recall {
            from: hook_engine::rule::RecallFrom::Path,
            max: 3,
            terms: terms.iter().map(|t| (*t).to_owned()).collect(),
        }
    }

    /// However many memories share a common term, recall reads its rare terms first: an old
    /// memory with a rare term is found among thousands that share only the common one, and
    /// the counts stay exact through forgetting.
    #[test]
    fn recall_finds_a_rare_term_among_many_common_ones() {
        let dir = temp_dir("rare");
        let mut store = open(&dir).unwrap();
        store.remember("s", &captured("orders zebra crossing")).unwrap();
        let many: Vec<Captured> =
            (0..3000).map(|i| captured(&format!("orders note {i}"))).collect();
        store.remember_all("s", &many).unwrap();
        let found = store.search(&recall(&["order", "zebra"])).unwrap();
        assert_eq!(found.first().map(|m| m.text.as_str()), Some("orders zebra crossing"));
        assert_eq!(store.forget(&[1]).unwrap(), 1);
        let total: i64 = store
            .conn
            .query_row("SELECT memories FROM term_counts WHERE term = ''", [], |r| r.get(0))
            .unwrap();
        assert_eq!(total, 3000);
        assert!(store.search(&recall(&["zebra"])).unwrap().is_empty());
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// What recall finds through the index of `dir`'s database, `None` when it must read the
    /// database.
    fn indexed(dir: &Path, recall: &Recall) -> Option<Vec<Memory>> {
        match recall_indexed(&Installation::User { dir: dir.to_path_buf() }, recall) {
            Indexed::Found(found) => Some(found),
            Indexed::NoDatabase => panic!("no database in {}", dir.display()),
            Indexed::Stale => None,
        }
    }

    /// Queries over varied memories: some terms shared by hundreds (past what the index keeps of
    /// a term), some by a few, some by none.
    fn queries() -> Vec<Recall> {
        let words = ["order", "zebra", "invoice", "cache", "retry", "nothing", "note", "queue"];
        let mut all = Vec::new();
        for (i, a) in words.iter().enumerate() {
            all.push(recall(&[a]));
            for b in &words[i + 1..] {
                all.push(recall(&[a, b]));
                all.push(Recall {
                    from: hook_engine::rule::RecallFrom::Prompt,
                    max: 5,
                    ..recall(&[a, b, "cache", "note"])
                });
            }
        }
        all
    }

    fn varied(from: usize, to: usize) -> Vec<Captured> {
        let subjects = ["orders", "invoices", "cache", "queue"];
        (from..to)
            .map(|i| {
                let rare = if i % 97 == 0 { " zebra" } else { "" };
                let retry = if i % 3 == 0 { " with retries" } else { "" };
                captured(&format!("{} note {i}{retry}{rare}", subjects[i % subjects.len()]))
            })
            .collect()
    }

    /// Recall through the index finds what it finds in the database, after every write,
    /// without the index being written anew in between: each write updates it.
    #[test]
    fn the_index_recalls_what_the_database_does() {
        let dir = temp_dir("index");
        let mut store = open(&dir).unwrap();
        assert_eq!(indexed(&dir, &recall(&["order"])), None, "no index before a memory");
        for (from, to) in [(0, 1), (1, 300), (300, 301), (301, 700)] {
            store.remember_all("s", &varied(from, to)).unwrap();
            for query in queries() {
                let found = indexed(&dir, &query).expect("the index follows every write");
                assert_eq!(found, store.search(&query).unwrap(), "{:?} after {to}", query.terms);
            }
        }
        // A memory stored twice changes nothing: the index stays current.
        store.remember_all("s", &varied(5, 6)).unwrap();
        assert!(indexed(&dir, &recall(&["order"])).is_some());
        // Forgetting the rare ones (fewer than a term's kept postings share them), then common
        // ones (the index lacks the older postings the database has: it is written anew).
        let zebras: Vec<i64> = (0..700).filter(|i| i % 97 == 0).map(|i| i + 1).collect();
        let notes: Vec<i64> = (600..700).collect();
        // (Memory 681, note 680, is a zebra: gone with them.)
        for (forgotten, gone) in [(zebras, 8), (notes, 99)] {
            assert_eq!(store.forget(&forgotten).unwrap(), gone);
            for query in queries() {
                let found = indexed(&dir, &query).expect("forgetting updates it");
                assert_eq!(
                    found,
                    store.search(&query).unwrap(),
                    "{:?} after forgetting",
                    query.terms
                );
            }
        }
        assert_eq!(indexed(&dir, &recall(&["zebra"])), Some(Vec::new()));
        // A failure logged changes no memory: the index stays current.
        store.record_failure("s", "Stop", "something").unwrap();
        assert!(indexed(&dir, &recall(&["order"])).is_some());
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// Pruning removes the oldest memories past `max`, and those older than `max_age_days`,
    /// a bounded number at a time, and the recall index follows.
    #[test]
    fn pruning_keeps_the_newest_within_the_limits() {
        let dir = temp_dir("prune");
        let mut store = open(&dir).unwrap();
        store.remember_all("s", &varied(0, 300)).unwrap();
        let ids = |store: &Store| -> Vec<i64> {
            let mut ids: Vec<i64> =
                store.memories(None, 1000).unwrap().iter().map(|m| m.id).collect();
            ids.sort_unstable();
            ids
        };
        assert_eq!(store.prunable(0, 0, u32::MAX).unwrap(), Vec::<i64>::new());
        assert_eq!(store.prunable(300, 0, u32::MAX).unwrap(), Vec::<i64>::new());
        // Past 250: the 50 oldest, at most 20 at a time.
        assert_eq!(store.prunable(250, 0, 20).unwrap(), (1..=20).collect::<Vec<_>>());
        assert_eq!(store.prune(250, 0, 20).unwrap(), 20);
        assert_eq!(store.prune(250, 0, u32::MAX).unwrap(), 30);
        assert_eq!(ids(&store), (51..=300).collect::<Vec<_>>());
        for query in queries() {
            let found = indexed(&dir, &query).expect("pruning updates the index");
            assert_eq!(found, store.search(&query).unwrap(), "{:?} after pruning", query.terms);
        }
        // By age: the 10 oldest made two days old, a limit of one day.
        let old = now() - 2 * 86_400;
        store.conn.execute("UPDATE memories SET created = ?1 WHERE id <= 60", [old]).unwrap();
        assert_eq!(store.prunable(0, 3, u32::MAX).unwrap(), Vec::<i64>::new());
        assert_eq!(store.prunable(0, 1, u32::MAX).unwrap(), (51..=60).collect::<Vec<_>>());
        // Both limits: the old ones, then the oldest past the newest 200.
        let both = store.prunable(200, 1, u32::MAX).unwrap();
        assert_eq!(both, (51..=100).collect::<Vec<_>>());
        assert_eq!(store.prune(200, 1, u32::MAX).unwrap(), 50);
        assert_eq!(ids(&store), (101..=300).collect::<Vec<_>>());
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A commit not made by a store leaves the index stale until recall reads the database and
    /// writes it anew; an index of another database file (one set aside, a new one started) is
    /// never read, and a new database removes the index there was.
    #[test]
    fn a_stale_index_is_not_read_and_is_written_anew() {
        let dir = temp_dir("index-stale");
        let mut store = open(&dir).unwrap();
        store.remember_all("s", &varied(0, 50)).unwrap();
        let query = recall(&["zebra"]);
        let expected = store.search(&query).unwrap();
        assert_eq!(expected.len(), 1);
        assert_eq!(indexed(&dir, &query).as_ref(), Some(&expected));
        Connection::open(database_path(&dir))
            .unwrap()
            .execute("INSERT INTO failures VALUES (0, 's', 'Stop', 'by hand')", [])
            .unwrap();
        assert_eq!(indexed(&dir, &query), None, "a commit since");
        store.refresh_index();
        assert_eq!(indexed(&dir, &query).as_ref(), Some(&expected));

        // A new database at the name, its counter where the old one's was.
        let index = std::fs::read(dir.join("state").join(index::INDEX_NAME)).unwrap();
        drop(store);
        std::fs::remove_file(database_path(&dir)).unwrap();
        let mut store = open(&dir).unwrap();
        assert!(!dir.join("state").join(index::INDEX_NAME).exists(), "removed with it");
        store.remember_all("s", &varied(1000, 1001)).unwrap();
        std::fs::write(dir.join("state").join(index::INDEX_NAME), &index).unwrap();
        assert_eq!(indexed(&dir, &query), None, "another file's index");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// The handoff's memories through the index: those the session stored, in the order asked,
    /// never another session's (an id reused, another database).
    #[test]
    fn the_index_gives_a_session_only_its_own_memories() {
        let dir = temp_dir("index-sessions");
        let mut store = open(&dir).unwrap();
        store.remember_all("mine", &varied(0, 3)).unwrap();
        store.remember_all("theirs", &varied(3, 4)).unwrap();
        let installation = Installation::User { dir: dir.clone() };
        let Indexed::Found(found) = memories_indexed(&installation, &[3, 1, 4, 9], "mine") else {
            panic!("the index is current");
        };
        let stored = store.memories(None, 10).unwrap();
        let by_id = |id| stored.iter().find(|m| m.id == id).cloned().unwrap();
        assert_eq!(found, [by_id(3), by_id(1)]);
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A damaged index gives no memory it does not hold whole, and never a panic: any byte
    /// changed, the file cut anywhere.
    #[test]
    fn a_damaged_index_gives_nothing_it_does_not_hold() {
        let dir = temp_dir("index-damaged");
        let mut store = open(&dir).unwrap();
        store.remember_all("s", &varied(0, 120)).unwrap();
        let path = dir.join("state").join(index::INDEX_NAME);
        let good = std::fs::read(&path).unwrap();
        let stored: Vec<Memory> = store.memories(None, 1000).unwrap();
        let whole = |m: &Memory| stored.iter().any(|s| s == m);
        let mut read = 0;
        for at in (0..good.len()).step_by(7) {
            let mut bad = good.clone();
            bad[at] ^= 0x41;
            std::fs::write(&path, &bad).unwrap();
            for query in queries() {
                if let Some(found) = indexed(&dir, &query) {
                    read += 1;
                    assert!(found.iter().all(whole), "byte {at}: {found:?}");
                }
            }
            std::fs::write(&path, &good[..at]).unwrap();
            assert_eq!(indexed(&dir, &recall(&["order"])), None, "cut at {at}");
        }
        assert!(read > 0, "most single-byte changes leave an index that reads");

        // Many bytes changed at once, the header's checksum made to hold again (its counts too
        // may be anything then): searched and decoded, never a panic, never a memory not whole.
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        #[allow(clippy::cast_possible_truncation, reason = "random bytes and positions")]
        for _ in 0..2000 {
            let mut bad = good.clone();
            for _ in 0..=next() % 8 {
                let at = (next() % bad.len() as u64) as usize;
                bad[at] = next() as u8;
            }
            let sum = hook_engine::artifact::sources::fnv1a(&bad[..56]);
            bad[56..64].copy_from_slice(&sum.to_le_bytes());
            let Some(mut view) = index::View::new(&bad) else { continue };
            for query in queries() {
                let found = search_in(&mut view, &query).unwrap();
                assert!(found.iter().all(whole), "{found:?}");
            }
            if let Some(index) = index::Index::decode(&view) {
                assert!(index.memories.iter().all(|(m, _)| whole(m)));
            }
        }
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
