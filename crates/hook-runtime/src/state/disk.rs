//! The database as files: looked at before `SQLite` opens them (a link or a non-regular file is
//! never opened), recognized as hookpack's, diagnosed, set aside when it is not, and created
//! whole under the state folder's lock.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};

use super::{
    APPLICATION_ID, COMPANIONS, DATABASE_NAME, LEGACY_TABLES, MAX_SET_ASIDE, SCHEMA,
    SCHEMA_OBJECTS, SCHEMA_VERSION, SetAside, Store, damage, database_path, distrust_schema,
    is_damaged, log_failure, now, schema_objects, wait_deadline, wait_for_lock,
};
use crate::confined::ConfinedDir;

/// The copies of the database set aside in the state folder `state_dir`, oldest first
/// (without their `-wal` and `-journal`, which lie beside them): for `hookpack doctor`.
pub fn set_aside_copies(state_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(state_dir) else { return Vec::new() };
    let mut copies: Vec<(String, PathBuf)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            let copy = name.strip_prefix("hookpack.db.")?;
            let stamp = copy.strip_prefix("aside-").or_else(|| copy.strip_prefix("damaged-"))?;
            (!COMPANIONS.iter().any(|suffix| stamp.ends_with(suffix)))
                .then(|| (stamp.to_owned(), entry.path()))
        })
        .collect();
    // `<unix time>.<nanoseconds>-<pid>`: the time has as many digits until 2286.
    copies.sort();
    copies.into_iter().map(|(_, path)| path).collect()
}

/// A file's identity, to tell whether the entry judged is still the one there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    fn of(meta: &fs::Metadata) -> FileId {
        FileId { dev: meta.dev(), ino: meta.ino() }
    }
}

/// What is at a name in the state folder, without following a link.
pub(super) enum Found {
    Missing,
    Regular(FileId),
    /// A link, a folder, a FIFO…: what it is.
    Other(String, FileId),
}

pub(super) fn inspect(dir: &ConfinedDir, name: &str) -> io::Result<Found> {
    let path = dir.entry(name)?;
    match fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(Found::Regular(FileId::of(&meta))),
        Ok(meta) => Ok(Found::Other(describe(&path, &meta), FileId::of(&meta))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(Found::Missing),
        Err(err) => Err(err),
    }
}

/// What a file that is not a regular file is, for a message.
pub(super) fn describe(path: &Path, meta: &fs::Metadata) -> String {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    if kind.is_symlink() {
        match fs::read_link(path) {
            Ok(target) => format!("a symbolic link to {}", target.display()),
            Err(_) => "a symbolic link".to_owned(),
        }
    } else if kind.is_dir() {
        "a folder".to_owned()
    } else if kind.is_fifo() {
        "a FIFO".to_owned()
    } else if kind.is_socket() {
        "a socket".to_owned()
    } else {
        "not a regular file".to_owned()
    }
}

/// Removes what `SQLite` must not open beside database `name`: a companion that is a link
/// (the link, never its target) or anything but a regular file. Three `lstat`s when all is
/// well.
pub(super) fn clear_companions(dir: &ConfinedDir, name: &str) -> io::Result<()> {
    for suffix in COMPANIONS {
        let companion = format!("{name}{suffix}");
        if let Found::Other(..) = inspect(dir, &companion)? {
            discard(dir, &companion)?;
        }
    }
    Ok(())
}

/// Removes entry `name`; a folder, which cannot be unlinked, is moved out of the way instead.
fn discard(dir: &ConfinedDir, name: &str) -> io::Result<()> {
    match dir.remove(name) {
        Ok(()) => Ok(()),
        Err(_) if fs::symlink_metadata(dir.entry(name)?).is_ok_and(|m| m.is_dir()) => {
            dir.rename(name, &format!(".{name}.aside-{}-{}", now(), std::process::id()))
        }
        Err(err) => Err(err),
    }
}

/// Why a database could not be used.
pub(super) enum Connect {
    /// It is not a hookpack database, or a damaged one: it is to be set aside.
    Unusable(String),
    /// It could not be used now (busy, unreadable folder…): it is left alone.
    Failed(rusqlite::Error),
}

impl From<rusqlite::Error> for Connect {
    fn from(err: rusqlite::Error) -> Connect {
        if is_damaged(&err) { Connect::Unusable(damage(&err)) } else { Connect::Failed(err) }
    }
}

/// Opens the regular file at `path` as a hookpack database: told apart from another
/// application's by its application id (or, before it had one, by its tables), migrated when
/// older, and its schema read, which finds a damaged file before any state is read from it.
pub(super) fn connect(path: &Path) -> Result<Store, Connect> {
    let mut conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_handler(Some(wait_for_lock))?;
    distrust_schema(&conn)?;
    // Temporary tables and sorts in memory: nothing written to `$TMPDIR`, outside the folder.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    // No sync per commit: an application crash loses nothing, a power loss may lose or damage
    // the memories, which are worth less than the milliseconds every capture would pay. A
    // damaged database is set aside and started afresh.
    conn.pragma_update(None, "synchronous", "OFF")?;
    let outdated = recognize(&conn, path)?;
    let store = Store { conn, set_aside: None, file: None, dir: None };
    if outdated {
        store.migrate()?;
    }
    // A database of before version 4 runs WAL, whose log and shared memory every reader would
    // create, map and remove: a hook reading memories gains nothing from them. Turned into a
    // rollback journal when no other connection has it open (else by a later opening).
    if is_wal(path) {
        let _ = store.conn.pragma_update(None, "journal_mode", "DELETE");
    }
    let checked = store.conn.prepare("SELECT id FROM memories LIMIT 0").map(drop);
    match checked {
        Ok(()) => Ok(store),
        // Marked as hookpack's, but without its tables.
        Err(err) if err.sqlite_error_code() == Some(ErrorCode::Unknown) => {
            Err(Connect::Unusable(format!("missing its tables ({err})")))
        }
        Err(err) => Err(err.into()),
    }
}

/// The first bytes of the database file at `path` (its header), when it has them.
fn header(path: &Path) -> Option<[u8; 100]> {
    header_of(path).map(|(header, _)| header)
}

/// [`header`], and the file's identity.
fn header_of(path: &Path) -> Option<([u8; 100], FileId)> {
    use std::io::Read as _;
    let mut header = [0u8; 100];
    let mut file = hook_engine::bounded::open_not_following(path).ok()?;
    let meta = file.metadata().ok().filter(fs::Metadata::is_file)?;
    file.read_exact(&mut header).ok()?;
    Some((header, FileId::of(&meta)))
}

/// A state of the database file: which file, and its change counter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct DbVersion {
    pub(super) dev: u64,
    pub(super) ino: u64,
    /// `SQLite`'s file change counter (header bytes 24–27): one more at every commit that
    /// changes the file, in rollback-journal mode.
    pub(super) counter: u32,
}

/// The state the database file at `path` is in, when its header says it is a hookpack
/// database of the current schema in rollback-journal mode ([`reads_as_current`]).
///
/// It is read through a descriptor of its own: call it only while this process has no `SQLite`
/// connection holding a lock on the file, since closing a descriptor drops the process's
/// `fcntl` locks on the file. A store reads its own file's state through a [`Pin`].
pub(super) fn version(path: &Path) -> Option<DbVersion> {
    let (h, id) = header_of(path)?;
    version_in(&h, id)
}

fn version_in(h: &[u8; 100], id: FileId) -> Option<DbVersion> {
    is_current(h).then(|| DbVersion {
        dev: id.dev,
        ino: id.ino,
        counter: u32::from_be_bytes([h[24], h[25], h[26], h[27]]),
    })
}

/// The database file a store has open, opened once more to read its change counter while the
/// store's transaction holds the file's lock (the counter cannot change then). Open it before
/// the transaction begins and drop it after it ends: closing a descriptor drops the process's
/// `fcntl` locks on the file, `SQLite`'s included.
pub(super) struct Pin(fs::File, FileId);

impl Pin {
    /// The file at `path`, when it is `id` (the one the store opened).
    pub(super) fn new(path: &Path, id: FileId) -> Option<Pin> {
        let file = hook_engine::bounded::open_not_following(path).ok()?;
        let meta = file.metadata().ok()?;
        (meta.is_file() && FileId::of(&meta) == id).then_some(Pin(file, id))
    }

    /// The file's state now.
    pub(super) fn version(&self) -> Option<DbVersion> {
        use std::os::unix::fs::FileExt as _;
        let mut header = [0u8; 100];
        self.0.read_exact_at(&mut header, 0).ok()?;
        version_in(&header, self.1)
    }
}

/// Whether the database file at `path` says it runs WAL (its header's read and write versions,
/// bytes 18 and 19, are 2).
pub(super) fn is_wal(path: &Path) -> bool {
    header(path).is_some_and(|h| h[18] == 2 && h[19] == 2)
}

/// Whether the file at `path` is, by its header, a hookpack database of the current schema in
/// rollback-journal mode: one a hook may read without the checks of an opening for writing.
pub(super) fn reads_as_current(path: &Path) -> bool {
    header(path).is_some_and(|h| is_current(&h))
}

fn is_current(h: &[u8; 100]) -> bool {
    let word = |at: usize| i32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]]);
    h.starts_with(b"SQLite format 3\0")
        && h[18] == 1
        && h[19] == 1
        && word(68) == APPLICATION_ID
        && i64::from(word(60)) == SCHEMA_VERSION
}

/// Opens the database at `path` to read it without leaving a trace: a read-only `SQLite`
/// connection still creates the `-wal` and `-shm` files of a WAL database, so where there is no
/// `-wal` (no hook is using the database, or it was checkpointed: nothing lies outside the main
/// file) it is opened as immutable, which creates nothing.
pub(super) fn open_for_reading(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    if fs::symlink_metadata(&wal).is_ok() {
        return Connection::open_with_flags(path, flags);
    }
    let uri = format!("file:{}?immutable=1", uri_path(path));
    Connection::open_with_flags(uri, flags | OpenFlags::SQLITE_OPEN_URI)
}

/// `path` percent-encoded for a `file:` URI.
fn uri_path(path: &Path) -> String {
    use std::fmt::Write as _;
    use std::os::unix::ffi::OsStrExt as _;
    let mut uri = String::new();
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            let _ = write!(uri, "%{byte:02X}");
        }
    }
    uri
}

/// Whether the database open on `conn` (the file at `path`) is hookpack's: by its application
/// id, or, before it had one, by its tables. `Ok(true)` when it is, but must be migrated.
pub(super) fn recognize(conn: &Connection, path: &Path) -> Result<bool, Connect> {
    let objects = schema_objects(conn)?;
    let tables: Vec<&str> = objects
        .iter()
        .filter(|(kind, name)| kind == "table" && !name.starts_with("sqlite"))
        .map(|(_, name)| name.as_str())
        .collect();
    let application: i32 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if application != APPLICATION_ID {
        if application != 0 {
            return Err(Connect::Unusable(format!(
                "another application's database (application id {application:#x})"
            )));
        }
        let has = |table: &str| tables.contains(&table);
        let legacy = (1..=2).contains(&version)
            && has("sessions")
            && has("failures")
            && tables.iter().all(|t| LEGACY_TABLES.contains(t));
        if !legacy {
            let empty = fs::metadata(path).is_ok_and(|m| m.len() == 0);
            return Err(Connect::Unusable(match (tables.is_empty(), empty) {
                (true, true) => "empty (0 bytes)".to_owned(),
                (true, false) => "a database without tables".to_owned(),
                (false, _) => format!(
                    "another application's database (tables {})",
                    tables.iter().take(4).copied().collect::<Vec<_>>().join(", ")
                ),
            }));
        }
    }
    // Ours, or claiming to be: nothing but our tables and indexes (a trigger is code that a
    // crafted database would run inside the hook).
    let unexpected: Vec<String> = objects
        .iter()
        .filter(|(kind, name)| {
            let own = (kind == "table" || kind == "index")
                && (SCHEMA_OBJECTS.contains(&name.as_str())
                    || name.starts_with("sqlite_autoindex_"));
            !own
        })
        .take(4)
        .map(|(kind, name)| format!("{kind} {name}"))
        .collect();
    if !unexpected.is_empty() {
        return Err(Connect::Unusable(format!(
            "unexpected objects in its schema: {}",
            unexpected.join(", ")
        )));
    }
    Ok(application != APPLICATION_ID || version < SCHEMA_VERSION)
}

/// What `hookpack doctor` finds of the database in an installation folder, read without
/// changing anything.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Diagnosis {
    /// None yet: the first hook that keeps a memory (or records a failure) creates it.
    Missing,
    /// Usable.
    Healthy {
        /// Memories kept.
        memories: i64,
    },
    /// Not usable: the next hook that opens it sets it aside and starts afresh.
    Unusable(String),
    /// Cannot be read now (permissions, a lock held too long).
    Unreadable(String),
}

/// Looks at the database of the installation folder `dir` without changing it.
pub fn diagnose(dir: &Path) -> Diagnosis {
    let path = database_path(dir);
    let meta = match fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Diagnosis::Missing,
        Err(err) => return Diagnosis::Unreadable(err.to_string()),
    };
    if !meta.is_file() {
        return Diagnosis::Unusable(describe(&path, &meta));
    }
    let opened = open_for_reading(&path);
    let mut conn = match opened {
        Ok(conn) => conn,
        Err(err) if is_damaged(&err) => return Diagnosis::Unusable(damage(&err)),
        Err(err) => return Diagnosis::Unreadable(err.to_string()),
    };
    let _ = conn.busy_handler(Some(wait_for_lock));
    if let Err(err) = distrust_schema(&conn) {
        return Diagnosis::Unreadable(err.to_string());
    }
    match recognize(&conn, &path) {
        Ok(_) => {}
        Err(Connect::Unusable(why)) => return Diagnosis::Unusable(why),
        Err(Connect::Failed(err)) => return Diagnosis::Unreadable(err.to_string()),
    }
    let checked = conn.query_row("PRAGMA quick_check", [], |row| row.get::<_, String>(0));
    match checked {
        Ok(verdict) if verdict == "ok" => {}
        Ok(verdict) => return Diagnosis::Unusable(format!("damaged ({verdict})")),
        Err(err) if is_damaged(&err) => return Diagnosis::Unusable(damage(&err)),
        Err(err) => return Diagnosis::Unreadable(err.to_string()),
    }
    let count = |table: &str| {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| row.get::<_, i64>(0))
    };
    match count("memories") {
        Ok(memories) => Diagnosis::Healthy { memories },
        // A version 1 database has no memories yet; a hook migrates it.
        Err(_) if count("sessions").is_ok() => Diagnosis::Healthy { memories: 0 },
        Err(err) => Diagnosis::Unusable(format!("missing its tables ({err})")),
    }
}

/// Sets aside the database judged unusable for `why` (the entry `judged`) and starts a new one,
/// holding the folder's lock; `None` when another hook did it meanwhile.
pub(super) fn repair(dir: &ConfinedDir, why: &str, judged: FileId) -> io::Result<Option<SetAside>> {
    let _lock = FolderLock::take(dir)?;
    match inspect(dir, DATABASE_NAME)? {
        Found::Regular(id) | Found::Other(_, id) if id == judged => {}
        _ => return Ok(None),
    }
    let time = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let stamp = format!(
        "{DATABASE_NAME}.aside-{}.{:09}-{}",
        time.as_secs(),
        time.subsec_nanos(),
        std::process::id()
    );
    let mut aside = stamp.clone();
    // Never over an earlier copy.
    for n in 1.. {
        if fs::symlink_metadata(dir.entry(&aside)?).is_err() {
            break;
        }
        aside = format!("{stamp}-{n}");
    }
    dir.rename(DATABASE_NAME, &aside)?;
    // Its log and journal hold its last changes: they go with it. The index is rebuilt.
    for suffix in ["-wal", "-journal"] {
        let companion = format!("{DATABASE_NAME}{suffix}");
        match inspect(dir, &companion)? {
            Found::Regular(_) => dir.rename(&companion, &format!("{aside}{suffix}"))?,
            Found::Other(..) => discard(dir, &companion)?,
            Found::Missing => {}
        }
    }
    prune_set_aside(dir);
    let aside = SetAside { path: dir.entry(&aside)?, why: why.to_owned() };
    build(dir, Some(&aside.notice()))?;
    Ok(Some(aside))
}

/// Removes the oldest set-aside copies beyond [`MAX_SET_ASIDE`], with their companions.
fn prune_set_aside(dir: &ConfinedDir) {
    let copies = set_aside_copies(dir.path());
    for copy in &copies[..copies.len().saturating_sub(MAX_SET_ASIDE)] {
        let Some(name) = copy.file_name().and_then(|n| n.to_str()) else { continue };
        let _ = discard(dir, name);
        for suffix in COMPANIONS {
            let _ = dir.remove(&format!("{name}{suffix}"));
        }
    }
}

/// Creates the database when there is none, holding the folder's lock.
pub(super) fn create(dir: &ConfinedDir) -> io::Result<()> {
    let _lock = FolderLock::take(dir)?;
    match inspect(dir, DATABASE_NAME)? {
        Found::Missing => build(dir, None),
        // Made meanwhile by another hook (or something else is there: the next round sees it).
        _ => Ok(()),
    }
}

/// Builds a new database whole, under a private name created with `O_EXCL | O_NOFOLLOW`, and
/// links it into place, so that no hook sees it half made; with `notice`, the failure is in
/// its log. The companions of a database
/// that is gone belong to none: they are removed first, or the new database would replay an
/// orphan `-wal` (deleted memories would come back). Called with the folder's lock held.
fn build(dir: &ConfinedDir, notice: Option<&str>) -> io::Result<()> {
    for suffix in COMPANIONS {
        discard(dir, &format!("{DATABASE_NAME}{suffix}"))?;
    }
    // The recall index of a database that is gone: the new file may reuse its inode, and its
    // counter reach the one the index names.
    discard(dir, super::index::INDEX_NAME)?;
    let staged = format!(".{DATABASE_NAME}.{}.tmp", std::process::id());
    for suffix in [""].into_iter().chain(COMPANIONS) {
        discard(dir, &format!("{staged}{suffix}"))?;
    }
    drop(dir.create_new(&staged)?);
    let staged_path = dir.entry(&staged)?;
    let made = (|| -> rusqlite::Result<()> {
        let conn = Connection::open_with_flags(
            &staged_path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.pragma_update(None, "journal_mode", "DELETE")?;
        conn.pragma_update(None, "synchronous", "OFF")?;
        let tx = Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)?;
        tx.execute_batch(SCHEMA)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)?;
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        if let Some(notice) = notice {
            log_failure(&tx, "", "state", notice)?;
        }
        tx.commit()
    })();
    let linked = made
        .map_err(|err| io::Error::other(err.to_string()))
        .and_then(|()| fs::hard_link(&staged_path, dir.entry(DATABASE_NAME)?));
    for suffix in [""].into_iter().chain(COMPANIONS) {
        let _ = dir.remove(&format!("{staged}{suffix}"));
    }
    match linked {
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        other => other,
    }
}

/// The state folder's lock (`flock` on the folder itself), held while the database is created
/// or set aside: creating it and clearing a gone database's companions must not race with a
/// hook already writing to a new one. Rare, and short: it is waited for at most [`LOCK_WAIT`].
#[derive(Debug)]
struct FolderLock {
    /// Locked while open.
    _folder: File,
}

impl FolderLock {
    fn take(dir: &ConfinedDir) -> io::Result<FolderLock> {
        let folder = File::open(dir.path())?;
        loop {
            match folder.try_lock() {
                Ok(()) => return Ok(FolderLock { _folder: folder }),
                Err(fs::TryLockError::WouldBlock) if Instant::now() < wait_deadline() => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WouldBlock,
                        "another hook held the state folder's lock for over 2 s",
                    ));
                }
                Err(fs::TryLockError::Error(err)) => return Err(err),
            }
        }
    }
}
