//! Session state in one small file per session, `state/sessions/<session>`: what a hook that
//! reads the state pays is one `open`, one `flock`, two reads and one write, where a database
//! would create, lock, map and remove its journal files on every run.
//!
//! A file holds two slots, at offset 0 and at [`SLOT`]; each is a header (magic, version, a
//! sequence number, the length, a checksum) and the record. A save writes the slot the
//! next sequence number names, so the other one still holds the last record whole: a hook
//! killed while writing loses its own update and nothing else. A reader takes the slot with
//! the highest sequence number whose checksum holds. A file in which no slot holds (garbage, or
//! both torn) starts the session afresh, and the record keeps a notice saying so for the user.
//!
//! The file's `flock` is held from reading the record to writing it back, so parallel hooks of
//! one session never lose an update. Saving does not sync: session state is worth less than
//! the milliseconds a sync would cost every hook.

use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use hook_engine::artifact::sources::{fnv1a, fnv1a_extend};
use hook_engine::bounded::open_not_following;
use hook_engine::codec::{Reader, put_option, put_str, put_u64};
use hook_engine::observe::{Books, SessionSummary};
use hook_engine::{Bracket, SessionState};

use super::xxh64::xxh64;
use crate::Installation;
use crate::confined::{Confined, ConfinedDir};

/// The folder of the session files, in the installation's folder.
pub const SESSIONS_DIR: &str = "state/sessions";

/// Where the second slot begins; a record is at most this long, its header included. The file
/// is sparse between the first record and the second slot.
pub const SLOT: u64 = SLOT_BYTES as u64;
const SLOT_BYTES: usize = 256 * 1024;

const MAGIC: [u8; 4] = *b"hkss";
/// The version written; version 1 (an FNV-1a checksum) is still read.
const VERSION: u16 = 2;

/// The tag of a record's [`Record::stored`] (after the fields of version 1).
const TAG_STORED: u8 = 1;
/// The tag of what `observe` rules saw ([`hook_engine::observe::Observed`]).
const TAG_OBSERVED: u8 = 2;
/// The tag of the branch the session last saw.
const TAG_BRANCH: u8 = 3;
const HEADER: usize = 32;
/// How much of a slot the first read takes: a record is usually a few hundred bytes.
const FIRST_READ: usize = 4096;

/// What a session keeps between events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// The session's id, as Claude Code gave it.
    pub id: String,
    /// When the session was first seen (unix seconds).
    pub started: i64,
    /// When it was last saved (unix seconds).
    pub updated: i64,
    /// The state rules read and change.
    pub state: SessionState,
    /// The last bracket computed.
    pub bracket: Option<Bracket>,
    /// The handoff the last `PreCompact` wrote.
    pub handoff: Option<String>,
    /// What the user is still to be told, by the first event that shows a `systemMessage`.
    pub notices: Vec<String>,
    /// The ids of the memories the session stored last, oldest first, at most
    /// [`HANDOFF_MEMORIES`](hook_engine::memory::HANDOFF_MEMORIES): the handoff names them.
    /// `None` in a record saved before records kept them (the database then says which).
    pub stored: Option<Vec<i64>>,
}

/// The session files of an installation.
#[derive(Debug)]
pub struct Sessions {
    dir: ConfinedDir,
}

/// A session's record, read under the file's lock; [`Locked::save`] writes it back, dropping
/// it releases the lock with nothing changed.
#[derive(Debug)]
pub struct Locked {
    file: File,
    /// The sequence number of the record read (0 when there was none).
    seq: u64,
    /// The record as the event found it (a new one when there was none), for the caller to
    /// take.
    pub record: Record,
    /// Whether the session had no record.
    pub new: bool,
}

impl Sessions {
    /// The session folder of `installation`, created when missing; every folder on the way must
    /// be a real folder ([`Confined`]).
    ///
    /// # Errors
    ///
    /// When a folder is refused or cannot be created.
    pub fn open(installation: &Installation) -> io::Result<Sessions> {
        Ok(Sessions { dir: Confined::of(installation).dir(SESSIONS_DIR)? })
    }

    /// Takes session `id`'s lock, waiting at most [`super::LOCK_WAIT`] (counted from the
    /// hook's first wait), and reads its record.
    ///
    /// # Errors
    ///
    /// `WouldBlock` when the lock was not granted in time; an IO error when the file cannot be
    /// opened, locked or read.
    pub fn lock(&self, id: &str) -> io::Result<Locked> {
        let name = file_name(id);
        let path = self.dir.entry(&name)?;
        // Each round opens the file at the name; another hook may have removed it (an old
        // session's cleanup) while this one waited for its lock.
        for _ in 0..4 {
            let file = self.dir.open_or_create(&name)?;
            lock(&file)?;
            let held = file.metadata()?;
            match fs::symlink_metadata(&path) {
                Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {}
                Ok(_) => continue,
                Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
                Err(err) => return Err(err),
            }
            let (seq, record) = read(&file, held.len());
            let (record, new) = match record {
                Found::Record(record) if record.id == id => (*record, false),
                // Another session's record under the same name (its id's hash): replaced.
                Found::Record(_) | Found::Nothing => (fresh(id), true),
                Found::Damaged(why) => {
                    let mut record = fresh(id);
                    record.notices.push(format!(
                        "hookpack: the state of this session could not be read ({why}) and was \
                         started afresh: counts, flags and `once` rules begin again"
                    ));
                    (record, true)
                }
            };
            return Ok(Locked { file, seq, record, new });
        }
        Err(io::Error::other("the session's file kept being replaced"))
    }

    /// Removes the records of the sessions not saved for `days` days, but `keep`'s; how many.
    /// Each is removed under its lock, so a hook resuming that session at the same time finds
    /// the file gone and starts a new one instead of writing into the removed one.
    pub fn remove_older_than(&self, days: u32, keep: &str) -> usize {
        if days == 0 {
            return 0;
        }
        let Some(cutoff) =
            SystemTime::now().checked_sub(Duration::from_secs(u64::from(days) * 86_400))
        else {
            return 0;
        };
        let Ok(entries) = fs::read_dir(self.dir.path()) else { return 0 };
        let keep = file_name(keep);
        let mut removed = 0;
        for entry in entries.filter_map(Result::ok) {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
            let old = |meta: &fs::Metadata| meta.modified().is_ok_and(|t| t < cutoff);
            if name == keep || !entry.metadata().is_ok_and(|m| old(&m)) {
                continue;
            }
            // Opened as it is (never created: it may be gone), without following a link.
            let Ok(file) = open_not_following(&entry.path()) else { continue };
            if file.try_lock().is_ok() && file.metadata().is_ok_and(|m| m.is_file() && old(&m)) {
                removed += usize::from(self.dir.remove(&name).is_ok());
            }
        }
        removed
    }
}

impl Locked {
    /// Writes `record` into the slot after the one read, and releases the lock.
    ///
    /// # Errors
    ///
    /// When the record is larger than a slot, or cannot be written.
    pub fn save(self, record: &Record) -> io::Result<()> {
        // A record numbered `u64::MAX` can only be forged: saving after it would wrap to 0 and
        // leave the forged slot the newer one for ever.
        let seq = self.seq.checked_add(1).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, "the session's record is numbered u64::MAX")
        })?;
        let mut bytes = encode(seq, record);
        if bytes.len() as u64 > SLOT && !record.state.observed.is_empty() {
            // What the session did is the first thing to give up: the state rules rely on
            // must still be saved.
            let mut lighter = record.clone();
            lighter.state.observed = Books::default();
            bytes = encode(seq, &lighter);
        }
        if bytes.len() as u64 > SLOT {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the session's state is {} bytes, over {SLOT}", bytes.len()),
            ));
        }
        self.file.write_all_at(&bytes, (seq % 2) * SLOT)
    }
}

/// Reads session `id`'s record without taking its lock (for `hookpack explain` and tests):
/// `None` when there is none, or it cannot be read.
pub fn peek(installation_dir: &Path, id: &str) -> Option<Record> {
    let path = installation_dir.join(SESSIONS_DIR).join(file_name(id));
    let meta = fs::symlink_metadata(&path).ok().filter(fs::Metadata::is_file)?;
    let file = open_not_following(&path).ok()?;
    match read(&file, meta.len()).1 {
        Found::Record(record) if record.id == id => Some(*record),
        _ => None,
    }
}

/// The records of the most recently saved sessions but `except` that `keep` keeps, newest
/// first, at most `max`, each read without its lock (a record being written is read from its
/// other slot); those that cannot be read are left out. At most [`MAX_LISTED`] files are looked
/// at (sessions are removed after `[state] max_age_days`), and of them the newest
/// [`MAX_READ`] (or `max`, when more) read.
pub fn recent(
    installation_dir: &Path,
    except: &str,
    max: usize,
    keep: impl Fn(&Record) -> bool,
) -> Vec<Record> {
    let Ok(entries) = fs::read_dir(installation_dir.join(SESSIONS_DIR)) else { return Vec::new() };
    // `except`'s own file is not read: it holds no other session's record (one sharing its
    // name is replaced by it).
    let own = file_name(except);
    let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .filter_map(Result::ok)
        .take(MAX_LISTED)
        .filter(|e| *e.file_name() != *own)
        .filter_map(|e| {
            let meta = fs::symlink_metadata(e.path()).ok().filter(fs::Metadata::is_file)?;
            Some((meta.modified().ok()?, e.path()))
        })
        .collect();
    files.sort_by_key(|f| std::cmp::Reverse(f.0));
    let mut found = Vec::new();
    // Newest first, and no more than the newest [`MAX_READ`]: files planted in the folder (a
    // repository can commit it, and a checkout makes its files the newest) cost a bounded read.
    for (_, path) in files.into_iter().take(MAX_READ.max(max)) {
        if found.len() >= max {
            break;
        }
        let Ok(file) = open_not_following(&path) else { continue };
        let Ok(meta) = file.metadata() else { continue };
        if let Found::Record(record) = read(&file, meta.len()).1
            && record.id != except
            && keep(&record)
        {
            found.push(*record);
        }
    }
    found
}

/// The most recent sessions but `except` that did something (an `observe` rule saw it, or it
/// kept memories) in `project` (when given: an installation of the user's own serves every
/// project), at most `max`: those last on `branch` first (a branch's sessions are its story),
/// then newest first; each with the memories `memories` finds for it.
pub fn summaries(
    installation_dir: &Path,
    except: &str,
    max: usize,
    (project, branch): (Option<&str>, Option<&str>),
    mut memories: impl FnMut(&Record) -> Vec<hook_engine::memory::Memory>,
) -> Vec<SessionSummary> {
    let did_something = |r: &Record| {
        let here = project.is_none_or(|p| r.state.observed.project().as_deref() == Some(p));
        here && (!r.state.observed.is_empty() || r.stored.as_ref().is_some_and(|s| !s.is_empty()))
    };
    let mut found = recent(installation_dir, except, max.saturating_mul(4), did_something);
    // Stable: newest first within each group.
    found.sort_by_key(|r| branch.is_none() || r.state.branch.as_deref() != branch);
    found
        .into_iter()
        .take(max)
        .map(|r| SessionSummary {
            memories: memories(&r),
            id: r.id,
            updated: r.updated,
            branch: r.state.branch,
            observed: r.state.observed.into_observed(),
        })
        .collect()
}

/// Session files [`recent`] looks at, at most.
const MAX_LISTED: usize = 16_384;

/// Session files [`recent`] reads, at most (each holds two slots of at most 256 KiB).
const MAX_READ: usize = 128;

/// How many session records the installation folder holds.
pub fn count(installation_dir: &Path) -> usize {
    fs::read_dir(installation_dir.join(SESSIONS_DIR))
        .map_or(0, |entries| entries.filter_map(Result::ok).count())
}

fn fresh(id: &str) -> Record {
    let now = super::now();
    Record {
        id: id.to_owned(),
        started: now,
        updated: now,
        stored: Some(Vec::new()),
        ..Record::default()
    }
}

/// The file name of session `id`: the id itself when it is a plain name (Claude Code's are
/// UUIDs), else its hash. The record keeps the whole id, so two ids sharing a name are told
/// apart.
fn file_name(id: &str) -> String {
    let plain = !id.is_empty()
        && id.len() <= 100
        && !id.starts_with('.')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if plain { id.to_owned() } else { format!("x-{:016x}", fnv1a(id.as_bytes())) }
}

/// Takes the file's exclusive lock, in short naps, until the hook's deadline.
fn lock(file: &File) -> io::Result<()> {
    let mut attempt = 0u32;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(fs::TryLockError::WouldBlock) => {}
            Err(fs::TryLockError::Error(err)) => return Err(err),
        }
        let left = super::wait_deadline().saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                "another hook of this session held its lock too long",
            ));
        }
        // The lock is held for a fraction of a millisecond: short naps keep a crowd moving.
        let nap = Duration::from_micros(200 * u64::from(attempt.min(9) + 1));
        std::thread::sleep(nap.min(left));
        attempt += 1;
    }
}

/// What a session file holds.
enum Found {
    Nothing,
    Record(Box<Record>),
    Damaged(String),
}

/// The newest record of the file that holds, with its sequence number. The newer slot's
/// checksum is checked first, the other's only when it does not hold.
fn read(file: &File, len: u64) -> (u64, Found) {
    if len == 0 {
        return (0, Found::Nothing);
    }
    let mut slots = [head(file, 0, len), head(file, SLOT, len)];
    if slots[1].as_ref().map(|s| s.seq) > slots[0].as_ref().map(|s| s.seq) {
        slots.swap(0, 1);
    }
    for slot in slots.into_iter().flatten() {
        let seq = slot.seq;
        if let Some(payload) = whole(file, slot) {
            return match decode(&payload) {
                Some(record) => (seq, Found::Record(Box::new(record))),
                None => (seq, Found::Damaged("its record does not decode".to_owned())),
            };
        }
    }
    (0, Found::Damaged("no whole record in it".to_owned()))
}

/// The start of a slot, its header read but not yet checked against the record.
struct Head {
    /// Where the slot begins in the file.
    offset: u64,
    version: u16,
    seq: u64,
    /// The header and the record's first bytes.
    bytes: Vec<u8>,
}

/// The first bytes of the slot at `offset` of a file of `len` bytes, when they begin with a
/// header of a version this build reads.
fn head(file: &File, offset: u64, len: u64) -> Option<Head> {
    // Not past the end the file had under its lock (a read there would only say it ends).
    let mut bytes = vec![0; FIRST_READ.min(usize::try_from(len.saturating_sub(offset)).ok()?)];
    let got = read_at(file, &mut bytes, offset);
    bytes.truncate(got);
    let version = u16::from_le_bytes(*bytes.get(4..6)?.first_chunk()?);
    if got < HEADER || bytes[..4] != MAGIC || !(1..=VERSION).contains(&version) {
        return None;
    }
    let seq = u64::from_le_bytes(*bytes[8..16].first_chunk()?);
    Some(Head { offset, version, seq, bytes })
}

/// The record of the slot `head` begins, when its length and checksum hold.
fn whole(file: &File, head: Head) -> Option<Vec<u8>> {
    let Head { offset, version, mut bytes, .. } = head;
    let len = usize::try_from(u32::from_le_bytes(*bytes[16..20].first_chunk()?)).ok()?;
    if len > SLOT_BYTES - HEADER {
        return None;
    }
    let (end, got) = (HEADER + len, bytes.len());
    if end > got {
        bytes.resize(end, 0);
        if read_at(file, &mut bytes[got..], offset + got as u64) != end - got {
            return None;
        }
    }
    bytes.truncate(end);
    let sum = u64::from_le_bytes(*bytes[24..32].first_chunk()?);
    (checksum(version, &mut bytes) == sum).then(|| bytes.split_off(HEADER))
}

/// The sequence number and record of the slot at `offset` of a file of `len` bytes, when its
/// header and checksum hold.
#[cfg(test)]
fn read_slot(file: &File, offset: u64, len: u64) -> Option<(u64, Vec<u8>)> {
    let head = head(file, offset, len)?;
    let seq = head.seq;
    Some((seq, whole(file, head)?))
}

/// Reads into `buf` from `offset` until it is full or the file ends; how much was read.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    got
}

/// The checksum of `slot` (its header and record) as a slot of `version` keeps it: the header
/// but its checksum field, then the record. Version 1 took FNV-1a, which waits on a
/// multiplication for each byte; version 2 takes [`xxh64`] over the slot with the field zeroed
/// (which it is left).
fn checksum(version: u16, slot: &mut [u8]) -> u64 {
    if version == 1 {
        return fnv1a_extend(fnv1a(&slot[..24]), &slot[HEADER..]);
    }
    slot[24..32].fill(0);
    xxh64(slot)
}

/// A slot: the header and the record.
fn encode(seq: u64, record: &Record) -> Vec<u8> {
    let mut out = Vec::with_capacity(FIRST_READ);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&[0; 2]);
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&[0; 16]);
    let Record { id, started, updated: _, state, bracket, handoff, notices, stored } = record;
    let w = &mut out;
    put_str(w, id);
    put_u64(w, started.cast_unsigned());
    put_u64(w, super::now().cast_unsigned());
    put_u64(w, state.prompt_count);
    put_u64(w, state.prompts_since_compaction);
    put_u64(w, u64::from(state.compactions));
    w.push(u8::from(state.compaction_pending));
    for text in [&state.agent, &state.workflow, &state.task, handoff] {
        put_option(w, text.as_deref());
    }
    put_u64(w, state.flags.len() as u64);
    for flag in &state.flags {
        put_str(w, flag);
    }
    put_u64(w, state.injected.len() as u64);
    for (rule, at) in &state.injected {
        put_str(w, rule);
        put_u64(w, u64::from(*at));
    }
    w.push(bracket.map_or(0, |b| 1 + b as u8));
    put_u64(w, notices.len() as u64);
    for notice in notices {
        put_str(w, notice);
    }
    // Fields added since version 1 follow, each after a tag of its own: a record without one
    // was saved before records kept it.
    if let Some(stored) = stored {
        w.push(TAG_STORED);
        put_u64(w, stored.len() as u64);
        for id in stored {
            put_u64(w, id.cast_unsigned());
        }
    }
    if !state.observed.is_empty() {
        w.push(TAG_OBSERVED);
        state.observed.encode(w);
    }
    if let Some(branch) = &state.branch {
        w.push(TAG_BRANCH);
        put_str(w, branch);
    }
    let len = u32::try_from(out.len() - HEADER).unwrap_or(u32::MAX);
    out[16..20].copy_from_slice(&len.to_le_bytes());
    let sum = checksum(VERSION, &mut out);
    out[24..32].copy_from_slice(&sum.to_le_bytes());
    out
}

/// A record from its bytes; `None` when they do not hold one (every length is checked against
/// what is left).
fn decode(bytes: &[u8]) -> Option<Record> {
    let mut r = Reader(bytes);
    let id = r.string()?;
    let started = r.u64()?.cast_signed();
    let updated = r.u64()?.cast_signed();
    let mut state = SessionState {
        prompt_count: r.u64()?,
        prompts_since_compaction: r.u64()?,
        compactions: u32::try_from(r.u64()?).ok()?,
        compaction_pending: r.byte()? != 0,
        ..SessionState::default()
    };
    state.agent = r.option()?.0;
    state.workflow = r.option()?.0;
    state.task = r.option()?.0;
    let handoff = r.option()?.0;
    for _ in 0..r.count()? {
        state.flags.insert(r.string()?);
    }
    for _ in 0..r.count()? {
        let rule = r.string()?;
        state.injected.insert(rule, u32::try_from(r.u64()?).ok()?);
    }
    let bracket = match r.byte()? {
        0 => None,
        n => Some(*Bracket::ALL.get(usize::from(n - 1))?),
    };
    let notices = (0..r.count()?).map(|_| r.string()).collect::<Option<_>>()?;
    let mut stored = None;
    while !r.0.is_empty() {
        match r.byte()? {
            TAG_STORED if stored.is_none() => {
                let ids = (0..r.count()?).map(|_| r.u64().map(u64::cast_signed));
                stored = Some(ids.collect::<Option<_>>()?);
            }
            TAG_BRANCH if state.branch.is_none() => state.branch = Some(r.string()?),
            TAG_OBSERVED if state.observed.is_empty() => state.observed = Books::read(&mut r)?,
            _ => return None,
        }
    }
    Some(Record { id, started, updated, state, bracket, handoff, notices, stored })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hookpack-sessions-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn sessions(dir: &Path) -> Sessions {
        Sessions::open(&Installation::User { dir: dir.to_path_buf() }).unwrap()
    }

    fn sample(id: &str) -> Record {
        let mut record = fresh(id);
        record.state.prompt_count = 3;
        record.state.prompts_since_compaction = 2;
        record.state.compactions = 1;
        record.state.compaction_pending = true;
        record.state.agent = Some("dev".into());
        record.state.task = Some("t-1".into());
        record.state.flags.extend(["edited".to_owned(), "tested".to_owned()]);
        record.state.injected.insert("context/constitution".into(), 1);
        record.bracket = Some(Bracket::Depleted);
        record.handoff = Some("handoff ✓".into());
        record.notices.push("told once".into());
        record.stored = Some(vec![7, 12]);
        record
    }

    /// A record saved before records named the memories the session stored reads as such
    /// (`stored: None`: the database says), and every other field as it was.
    #[test]
    fn a_record_without_its_stored_memories_reads_as_one() {
        let mut record = sample("old");
        record.stored = None;
        let slot = encode(1, &record);
        let found = decode(&slot[HEADER..]).unwrap();
        assert_eq!(found.stored, None);
        assert_eq!((found.state, found.notices), (record.state, record.notices));
        let new = encode(1, &sample("new"));
        assert_eq!(decode(&new[HEADER..]).unwrap().stored, Some(vec![7, 12]));
    }

    /// What `observe` rules saw is kept with the record, and a record without it reads as
    /// one with nothing observed.
    #[test]
    fn what_the_session_did_is_kept_with_its_record() {
        let mut record = sample("s");
        let o = record.state.observed.get_mut();
        o.title = Some("fix the login bug ✓".into());
        o.project = Some("/home/dev/acme".into());
        o.read = vec!["src/a.rs".into()];
        o.edited = vec!["src/a.rs".into(), "src/b.rs".into()];
        o.ran = vec!["cargo test".into()];
        o.failed = vec!["cargo build: error".into()];
        o.tools.insert("TodoWrite".into(), 3);
        o.commands = 9;
        record.state.branch = Some("feature/ABC-1".into());
        let slot = encode(1, &record);
        let found = decode(&slot[HEADER..]).unwrap();
        assert_eq!(found.state, record.state);
        assert_eq!(found.state.observed.get().commands, 9);
        // Read back and saved untouched, the books are written as they were read.
        assert_eq!(encode(1, &found), slot);
        let without = encode(1, &sample("s"));
        assert!(decode(&without[HEADER..]).unwrap().state.observed.is_empty());
    }

    #[test]
    fn a_record_round_trips_through_both_slots() {
        let dir = temp_dir("round-trip");
        let sessions = sessions(&dir);
        let locked = sessions.lock("s1").unwrap();
        assert!(locked.new);
        assert_eq!(locked.record.state, SessionState::default());
        let record = sample("s1");
        locked.save(&record).unwrap();
        for round in 0..3 {
            let locked = sessions.lock("s1").unwrap();
            assert!(!locked.new);
            let mut found = locked.record.clone();
            found.updated = record.updated;
            assert_eq!(found, record, "round {round}");
            locked.save(&record).unwrap();
        }
        assert_eq!(peek(&dir, "s1").map(|r| r.state), Some(record.state));
        assert_eq!(peek(&dir, "s2"), None);
        fs::remove_dir_all(dir).unwrap();
    }

    /// Every truncation and every flipped byte of an encoded slot is refused, never decoded
    /// into something else. (Its record cut just before the memories it stored reads as a
    /// record saved before records kept them; the slot's length and checksum refuse it.)
    #[test]
    fn a_torn_or_flipped_slot_never_decodes() {
        let bytes = encode(7, &sample("s"));
        assert!(decode(&bytes[HEADER..]).is_some());
        let dir = temp_dir("flipped");
        let path = dir.join("slot");
        let older = bytes.len() - (1 + 8 * 3);
        for end in HEADER..bytes.len() {
            let decoded = decode(&bytes[HEADER..end]);
            if end == older {
                assert_eq!(decoded.map(|r| r.stored), Some(None), "cut at {end}");
            } else {
                assert!(decoded.is_none(), "cut at {end}");
            }
            fs::write(&path, &bytes[..end]).unwrap();
            assert!(
                read_slot(&File::open(&path).unwrap(), 0, end as u64).is_none(),
                "slot cut at {end}"
            );
        }
        for at in 0..bytes.len() {
            let mut flipped = bytes.clone();
            flipped[at] ^= 0x20;
            fs::write(&path, &flipped).unwrap();
            let file = File::open(&path).unwrap();
            assert!(read_slot(&file, 0, flipped.len() as u64).is_none(), "byte {at} flipped");
        }
        fs::remove_dir_all(dir).unwrap();
    }

    /// A record the build before wrote (version 1: an FNV-1a checksum) still reads; the same
    /// checksum under version 2 does not hold.
    #[test]
    fn a_version_1_record_still_reads() {
        let dir = temp_dir("version-1");
        let path = dir.join("slot");
        let mut bytes = encode(5, &sample("s"));
        bytes[4..6].copy_from_slice(&1u16.to_le_bytes());
        let sum = fnv1a_extend(fnv1a(&bytes[..24]), &bytes[HEADER..]);
        bytes[24..32].copy_from_slice(&sum.to_le_bytes());
        fs::write(&path, &bytes).unwrap();
        let (seq, payload) = read_slot(&File::open(&path).unwrap(), 0, bytes.len() as u64).unwrap();
        assert_eq!((seq, decode(&payload).map(|r| r.state)), (5, Some(sample("s").state)));
        bytes[4..6].copy_from_slice(&VERSION.to_le_bytes());
        fs::write(&path, &bytes).unwrap();
        assert!(read_slot(&File::open(&path).unwrap(), 0, bytes.len() as u64).is_none());
        fs::remove_dir_all(dir).unwrap();
    }

    /// A forged record numbered `u64::MAX` is not saved over (the number would wrap and the
    /// forged slot stay the newer one).
    #[test]
    fn the_last_sequence_number_is_not_wrapped() {
        let dir = temp_dir("last-seq");
        let sessions = sessions(&dir);
        let bytes = encode(u64::MAX, &sample("s"));
        fs::write(dir.join(SESSIONS_DIR).join("s"), &bytes).unwrap();
        let locked = sessions.lock("s").unwrap();
        assert!(!locked.new);
        let record = locked.record.clone();
        assert_eq!(locked.save(&record).unwrap_err().kind(), io::ErrorKind::InvalidData);
        fs::remove_dir_all(dir).unwrap();
    }

    /// A slot torn by a hook killed while writing leaves the record before it.
    #[test]
    fn a_torn_save_keeps_the_record_before_it() {
        let dir = temp_dir("torn");
        let sessions = sessions(&dir);
        let mut record = sample("s");
        record.notices.clear();
        sessions.lock("s").unwrap().save(&record).unwrap();
        record.state.prompt_count = 4;
        sessions.lock("s").unwrap().save(&record).unwrap();
        // The next save goes to slot 1 (sequence 3, over sequence 1): tear it half-way.
        record.state.prompt_count = 5;
        record.state.flags.insert("a longer record".into());
        let bytes = encode(3, &record);
        let path = dir.join(SESSIONS_DIR).join("s");
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all_at(&bytes[..bytes.len() / 2], SLOT).unwrap();
        let locked = sessions.lock("s").unwrap();
        assert_eq!(locked.record.state.prompt_count, 4);
        assert!(locked.record.notices.is_empty(), "nothing said: the record before holds");
        fs::remove_dir_all(dir).unwrap();
    }

    /// A file in which no record holds starts the session afresh and says so in a notice.
    #[test]
    fn a_garbled_file_starts_afresh_and_says_so() {
        let dir = temp_dir("garbled");
        let sessions = sessions(&dir);
        fs::write(dir.join(SESSIONS_DIR).join("s"), b"garbage, not a record").unwrap();
        let locked = sessions.lock("s").unwrap();
        assert!(locked.new);
        assert_eq!(locked.record.notices.len(), 1);
        assert!(locked.record.notices[0].contains("started afresh"), "{:?}", locked.record);
        let mut record = locked.record.clone();
        record.notices.clear();
        locked.save(&record).unwrap();
        let locked = sessions.lock("s").unwrap();
        assert!(!locked.new && locked.record.notices.is_empty(), "said once");
        fs::remove_dir_all(dir).unwrap();
    }

    /// Ids that are not plain names are hashed; the record tells apart two ids with one name.
    #[test]
    fn odd_ids_are_hashed_and_told_apart() {
        assert_eq!(
            file_name("5f0c6b1e-0a4e-4a7e-9d3c-2f9a1b7c0d11"),
            "5f0c6b1e-0a4e-4a7e-9d3c-2f9a1b7c0d11"
        );
        for odd in ["", "../x", ".hidden", "a/b", "a b", &"x".repeat(101)] {
            let name = file_name(odd);
            assert!(name.starts_with("x-") && name.len() == 18, "{odd:?}: {name}");
        }
        let dir = temp_dir("odd");
        let sessions = sessions(&dir);
        sessions.lock("../escape").unwrap().save(&sample("../escape")).unwrap();
        assert_eq!(fs::read_dir(dir.join(SESSIONS_DIR)).unwrap().count(), 1);
        assert!(!dir.join("escape").exists());
        // A record of another id under this name reads as a new session.
        let path = dir.join(SESSIONS_DIR).join("s");
        fs::write(&path, encode(1, &sample("t"))).unwrap();
        assert!(sessions.lock("s").unwrap().new);
        fs::remove_dir_all(dir).unwrap();
    }

    /// A link, a FIFO or a hard link planted at a session's name is replaced, never written
    /// through.
    #[test]
    fn planted_files_are_replaced_not_written_through() {
        let dir = temp_dir("planted");
        let sessions = sessions(&dir);
        let folder = dir.join(SESSIONS_DIR);
        let outside = dir.join("outside");
        fs::write(&outside, b"keep me").unwrap();
        std::os::unix::fs::symlink(&outside, folder.join("linked")).unwrap();
        fs::hard_link(&outside, folder.join("hard")).unwrap();
        let fifo = std::ffi::CString::new(folder.join("fifo").to_str().unwrap()).unwrap();
        #[allow(unsafe_code, reason = "mkfifo on a path of this test")]
        // SAFETY: a valid C string.
        unsafe {
            libc::mkfifo(fifo.as_ptr(), 0o600);
        }
        for id in ["linked", "hard", "fifo"] {
            let locked = sessions.lock(id).unwrap();
            assert!(locked.new, "{id}");
            locked.save(&sample(id)).unwrap();
            assert!(fs::symlink_metadata(folder.join(id)).unwrap().is_file(), "{id}");
            assert_eq!(peek(&dir, id).unwrap().state.prompt_count, 3, "{id}");
        }
        assert_eq!(fs::read(&outside).unwrap(), b"keep me");
        fs::remove_dir_all(dir).unwrap();
    }

    /// Records planted in the folder cost a bounded read: past the newest [`MAX_READ`] files,
    /// none is read (before, every one of up to 16,384 was, half a MiB each).
    #[test]
    fn only_the_newest_session_files_are_read() {
        let dir = temp_dir("planted");
        let sessions = sessions(&dir);
        let mut wanted = sample("wanted");
        wanted.handoff = Some("wanted".into());
        sessions.lock("wanted").unwrap().save(&wanted).unwrap();
        let long_ago = SystemTime::now() - Duration::from_hours(24);
        let file = File::options().write(true).open(dir.join(SESSIONS_DIR).join("wanted"));
        file.unwrap().set_modified(long_ago).unwrap();
        let is_wanted = |r: &Record| r.handoff.as_deref() == Some("wanted");
        for i in 0..MAX_READ - 1 {
            let id = format!("planted-{i}");
            sessions.lock(&id).unwrap().save(&sample(&id)).unwrap();
        }
        assert_eq!(recent(&dir, "current", 1, is_wanted).len(), 1, "within the newest");
        sessions.lock("one-more").unwrap().save(&sample("one-more")).unwrap();
        assert_eq!(recent(&dir, "current", 1, is_wanted).len(), 0, "past the newest");
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn old_sessions_are_removed_but_the_current_one() {
        let dir = temp_dir("old");
        let sessions = sessions(&dir);
        for id in ["old", "new", "current"] {
            sessions.lock(id).unwrap().save(&sample(id)).unwrap();
        }
        let long_ago = SystemTime::now() - Duration::from_hours(30 * 24);
        for id in ["old", "current"] {
            let file = File::options().write(true).open(dir.join(SESSIONS_DIR).join(id)).unwrap();
            file.set_modified(long_ago).unwrap();
        }
        assert_eq!(sessions.remove_older_than(7, "current"), 1);
        assert_eq!(peek(&dir, "old"), None);
        assert!(peek(&dir, "new").is_some() && peek(&dir, "current").is_some());
        assert_eq!(count(&dir), 2);
        fs::remove_dir_all(dir).unwrap();
    }
}
