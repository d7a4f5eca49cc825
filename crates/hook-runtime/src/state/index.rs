//! The recall index, `state/memories.idx`: what recall reads instead of the memory database.
//!
//! Opening `SQLite` costs a hook more than everything else it does (the library's set-up, the
//! schema's parse, a lock): about 0.3 ms, where a hook's whole start-up is about 0.6 ms. Recall
//! reads this file instead, mapped, without a lock and without `SQLite`, through the same
//! ranking as [`Store::search`](super::Store::search) (`search_in`), and finds what it would.
//!
//! The database stays the source of truth; the index says which state of it it holds: the
//! database file's device and inode, and the change counter `SQLite` keeps in its header (bytes
//! 24–27, one more at every commit that changes the file, in the rollback-journal mode hookpack
//! uses). Recall reads the database's header, then the index: when they do not name the same
//! state (a commit since, a failure logged, a database set aside and started afresh, an index
//! missing or damaged), it reads the database, and writes a new index from it.
//!
//! A hook that stores or forgets memories (or logs a failure) updates the index itself: it
//! reads the counter while its transaction holds the write lock, through a descriptor of its
//! own opened before the transaction and closed after it (`disk::Pin`: closing a descriptor drops
//! the process's `fcntl` locks on the file, `SQLite`'s included), and when the index names that
//! state, writes it with its change made, named after the next. A forget that leaves a common
//! term with fewer postings than the database would give writes the index anew instead. A new
//! database file removes the index (`disk::create`), so that a file reusing a gone one's inode
//! never meets its index. An index is always written whole to a new file and renamed over the
//! old one ([`ConfinedDir::replace`]), never changed in place, so a reader's map never shrinks
//! underneath it.
//!
//! Every read of the file is bounds-checked: a damaged or planted index gives no memory it
//! does not hold whole (each memory carries a checksum of all it holds), and never a panic.
//!
//! Layout (little-endian): a 64-byte header; the fence: every [`FENCE_EVERY`]th term's name,
//! as 8-byte entries (offset and length in the fence) and then the names, so that a term is
//! found among a few dozen after reading only the file's first pages (a binary search over all
//! the terms and their names touches a page of the map at each of its first steps, and each
//! page a hook touches first is a fault: 12 of them at 100,000 memories, 3 this way); the
//! terms, sorted, 20 bytes each (name offset and length in the strings, how many memories
//! share it, its first posting and how many are kept); the postings (memory ids, 8 bytes each, newest first, at most
//! [`POSTINGS_PER_TERM`](super::POSTINGS_PER_TERM) per term); the memories, by id, 48 bytes
//! each (with a hash of the session that stored it); the strings.

use std::collections::BTreeMap;
use std::io::Read as _;
use std::path::Path;

use hook_engine::artifact::sources::{fnv1a, fnv1a_extend};
use hook_engine::memory::Memory;

use super::POSTINGS_PER_TERM;
use super::disk::DbVersion;
use crate::confined::ConfinedDir;

/// The index's name in the state folder.
pub(super) const INDEX_NAME: &str = "memories.idx";

const MAGIC: &[u8; 4] = b"hkri";
const VERSION: u32 = 2;
const HEADER: usize = 64;
const TERM: usize = 20;
const POSTING: usize = 8;
const MEMORY: usize = 48;
/// One term in so many is named in the fence.
const FENCE_EVERY: usize = 64;
const FENCE_ENTRY: usize = 8;

/// The largest index read or written: about 10 KB per memory at 100,000 memories, far above
/// what they take (their texts and terms: about 150 bytes each in the benchmark's).
const MAX_INDEX_BYTES: u64 = 1 << 30;

/// Indexes up to this size are read; larger ones mapped (a read faults in every page of a
/// fresh buffer; a map only the pages recall touches).
const READ_LIMIT: u64 = 16 << 10;

/// An index, whole: what is encoded, decoded and changed by a store.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Index {
    /// The database state it holds.
    pub(super) version: DbVersion,
    /// How many memories are stored.
    pub(super) total: u64,
    /// The terms, sorted.
    pub(super) terms: Vec<Term>,
    /// The memories, by id, with the hash of the session that stored each ([`session_hash`]).
    pub(super) memories: Vec<(Memory, u64)>,
}

/// The hash an index keeps of a session's id.
pub(super) fn session_hash(session: &str) -> u64 {
    fnv1a(session.as_bytes())
}

/// A term: how many memories share it, and the newest of them.
#[derive(Debug, PartialEq)]
pub(super) struct Term {
    pub(super) name: String,
    pub(super) memories: u64,
    /// Newest first, at most [`POSTINGS_PER_TERM`].
    pub(super) postings: Vec<i64>,
}

impl Index {
    /// Adds `added` (new memories, by id, with their session's hash and their terms): one pass
    /// over the index.
    pub(super) fn add(&mut self, added: Vec<(Memory, u64, Vec<String>)>) {
        let mut postings: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for (memory, _, terms) in &added {
            for term in terms {
                postings.entry(term.clone()).or_default().push(memory.id);
            }
        }
        let old = std::mem::take(&mut self.terms);
        let mut old = old.into_iter().peekable();
        for (name, mut ids) in postings {
            while let Some(term) = old.next_if(|t| t.name < name) {
                self.terms.push(term);
            }
            // Newest first.
            ids.reverse();
            let shared = ids.len() as u64;
            match old.next_if(|t| t.name == name) {
                Some(mut term) => {
                    term.memories = term.memories.saturating_add(shared);
                    ids.extend_from_slice(&term.postings);
                    ids.truncate(POSTINGS_PER_TERM);
                    term.postings = ids;
                    self.terms.push(term);
                }
                None => {
                    ids.truncate(POSTINGS_PER_TERM);
                    self.terms.push(Term { name, memories: shared, postings: ids });
                }
            }
        }
        self.terms.extend(old);
        self.total = self.total.saturating_add(added.len() as u64);
        self.memories.extend(added.into_iter().map(|(memory, session, _)| (memory, session)));
        // Stable: of two with one id, the one added comes second, and is kept.
        self.memories.sort_by_key(|(m, _)| m.id);
        self.memories.dedup_by(|later, kept| {
            let same = later.0.id == kept.0.id;
            if same {
                std::mem::swap(later, kept);
            }
            same
        });
    }

    /// Removes the memories `removed` (ids, with the terms the database found them by).
    /// `false` when the index is then not what the database would give: a term kept only its
    /// newest postings, and one of them went (the database has older ones the index lacks).
    pub(super) fn remove(&mut self, removed: &[(i64, Vec<String>)]) -> bool {
        let mut ids: Vec<i64> = removed.iter().map(|(id, _)| *id).collect();
        ids.sort_unstable();
        let listed = |id: &i64| ids.binary_search(id).is_ok();
        let before = self.memories.len();
        self.memories.retain(|(m, _)| !listed(&m.id));
        let gone = (before - self.memories.len()) as u64;
        let mut exact = true;
        let mut shared: BTreeMap<&str, u64> = BTreeMap::new();
        for (_, terms) in removed {
            for term in terms {
                *shared.entry(term).or_default() += 1;
            }
        }
        self.terms.retain_mut(|term| {
            let Some(&n) = shared.get(term.name.as_str()) else { return true };
            exact &= term.memories <= term.postings.len() as u64;
            term.memories = term.memories.saturating_sub(n);
            term.postings.retain(|p| !listed(p));
            term.memories > 0
        });
        self.total = self.total.saturating_sub(gone);
        exact
    }

    /// The file's bytes; `None` when they would be more than a hook reads, or the strings
    /// outgrow 32-bit offsets.
    pub(super) fn encode(&self) -> Option<Vec<u8>> {
        let postings: usize = self.terms.iter().map(|t| t.postings.len()).sum();
        let mut strings: Vec<u8> = Vec::new();
        let mut body = Vec::with_capacity(
            self.terms.len() * TERM + postings * POSTING + self.memories.len() * MEMORY,
        );
        let mut string = |text: &str, body: &mut Vec<u8>| -> Option<()> {
            let at = u32::try_from(strings.len()).ok()?;
            strings.extend_from_slice(text.as_bytes());
            body.extend_from_slice(&at.to_le_bytes());
            body.extend_from_slice(&u32::try_from(text.len()).ok()?.to_le_bytes());
            Some(())
        };
        let mut first = 0u32;
        for term in &self.terms {
            string(&term.name, &mut body)?;
            body.extend_from_slice(&u32::try_from(term.memories).ok()?.to_le_bytes());
            body.extend_from_slice(&first.to_le_bytes());
            let kept = u32::try_from(term.postings.len()).ok()?;
            body.extend_from_slice(&kept.to_le_bytes());
            first = first.checked_add(kept)?;
        }
        for term in &self.terms {
            for posting in &term.postings {
                body.extend_from_slice(&posting.to_le_bytes());
            }
        }
        for (m, session) in &self.memories {
            body.extend_from_slice(&m.id.to_le_bytes());
            body.extend_from_slice(&m.created.to_le_bytes());
            body.extend_from_slice(&m.confidence.to_bits().to_le_bytes());
            string(&m.namespace, &mut body)?;
            string(&m.text, &mut body)?;
            body.extend_from_slice(&check(m, *session).to_le_bytes());
            body.extend_from_slice(&session.to_le_bytes());
        }
        let mut fence = Vec::new();
        let mut names = Vec::new();
        for term in self.terms.iter().step_by(FENCE_EVERY) {
            fence.extend_from_slice(&u32::try_from(names.len()).ok()?.to_le_bytes());
            fence.extend_from_slice(&u32::try_from(term.name.len()).ok()?.to_le_bytes());
            names.extend_from_slice(term.name.as_bytes());
        }
        fence.extend_from_slice(&names);
        let mut out = Vec::with_capacity(HEADER + fence.len() + body.len() + strings.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&self.version.dev.to_le_bytes());
        out.extend_from_slice(&self.version.ino.to_le_bytes());
        out.extend_from_slice(&self.version.counter.to_le_bytes());
        out.extend_from_slice(&u32::try_from(self.terms.len()).ok()?.to_le_bytes());
        out.extend_from_slice(&self.total.to_le_bytes());
        out.extend_from_slice(&u32::try_from(self.memories.len()).ok()?.to_le_bytes());
        out.extend_from_slice(&first.to_le_bytes());
        out.extend_from_slice(&u32::try_from(strings.len()).ok()?.to_le_bytes());
        out.extend_from_slice(&u32::try_from(fence.len()).ok()?.to_le_bytes());
        let sum = fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        debug_assert_eq!(out.len(), HEADER);
        out.extend_from_slice(&fence);
        out.extend_from_slice(&body);
        out.extend_from_slice(&strings);
        (out.len() as u64 <= MAX_INDEX_BYTES).then_some(out)
    }

    /// The index `view` reads, whole (every memory's checksum holding); `None` when it is not.
    pub(super) fn decode(view: &View<'_>) -> Option<Index> {
        let mut terms = Vec::with_capacity(view.terms);
        for i in 0..view.terms {
            let (name, memories, postings) = view.term_at(i)?;
            terms.push(Term {
                name: std::str::from_utf8(name).ok()?.to_owned(),
                memories,
                postings: view.postings(postings)?.collect(),
            });
        }
        let mut memories = Vec::with_capacity(view.memories);
        for i in 0..view.memories {
            memories.push(view.memory_at(i)?);
        }
        Some(Index { version: view.version, total: view.total, terms, memories })
    }
}

/// The checksum of a memory: every field of its entry and its strings.
fn check(m: &Memory, session: u64) -> u32 {
    let mut hash = fnv1a(&m.id.to_le_bytes());
    hash = fnv1a_extend(hash, &session.to_le_bytes());
    hash = fnv1a_extend(hash, &m.created.to_le_bytes());
    hash = fnv1a_extend(hash, &m.confidence.to_bits().to_le_bytes());
    hash = fnv1a_extend(hash, m.namespace.as_bytes());
    hash = fnv1a_extend(hash, &[0]);
    hash = fnv1a_extend(hash, m.text.as_bytes());
    #[allow(clippy::cast_possible_truncation, reason = "the low half of the hash")]
    let low = hash as u32;
    low ^ (hash >> 32) as u32
}

/// An index's bytes, read where they lie.
pub(super) struct View<'b> {
    bytes: &'b [u8],
    pub(super) version: DbVersion,
    pub(super) total: u64,
    terms: usize,
    memories: usize,
    /// The fence's entries, and its names after them.
    fence: &'b [u8],
    terms_at: usize,
    postings_at: usize,
    postings: usize,
    memories_at: usize,
    strings_at: usize,
}

impl<'b> View<'b> {
    /// The index in `bytes`, its header checked and its sections within them; `None` when not.
    pub(super) fn new(bytes: &'b [u8]) -> Option<View<'b>> {
        let header = bytes.get(..HEADER)?;
        if &header[..4] != MAGIC || u32_at(header, 4)? != VERSION {
            return None;
        }
        if fnv1a(&header[..56]) != u64_at(header, 56)? {
            return None;
        }
        let terms = usize::try_from(u32_at(header, 28)?).ok()?;
        let memories = usize::try_from(u32_at(header, 40)?).ok()?;
        let postings = usize::try_from(u32_at(header, 44)?).ok()?;
        let strings = usize::try_from(u32_at(header, 48)?).ok()?;
        let fence_len = usize::try_from(u32_at(header, 52)?).ok()?;
        let terms_at = HEADER.checked_add(fence_len)?;
        let postings_at = terms_at.checked_add(terms.checked_mul(TERM)?)?;
        let memories_at = postings_at.checked_add(postings.checked_mul(POSTING)?)?;
        let strings_at = memories_at.checked_add(memories.checked_mul(MEMORY)?)?;
        if strings_at.checked_add(strings)? != bytes.len() {
            return None;
        }
        let version = DbVersion {
            dev: u64_at(header, 8)?,
            ino: u64_at(header, 16)?,
            counter: u32_at(header, 24)?,
        };
        Some(View {
            bytes,
            version,
            total: u64_at(header, 32)?,
            terms,
            memories,
            fence: bytes.get(HEADER..terms_at)?,
            terms_at,
            postings_at,
            postings,
            memories_at,
            strings_at,
        })
    }

    fn string(&self, entry: &[u8], at: usize) -> Option<&'b [u8]> {
        let start = usize::try_from(u32_at(entry, at)?).ok()?;
        let len = usize::try_from(u32_at(entry, at + 4)?).ok()?;
        let start = self.strings_at.checked_add(start)?;
        self.bytes.get(start..start.checked_add(len)?)
    }

    /// Term `i`: its name, how many memories share it, and which postings are its.
    fn term_at(&self, i: usize) -> Option<(&'b [u8], u64, std::ops::Range<usize>)> {
        let at = self.terms_at.checked_add(i.checked_mul(TERM)?)?;
        let entry = self.bytes.get(at..at.checked_add(TERM)?)?;
        let first = usize::try_from(u32_at(entry, 12)?).ok()?;
        let kept = usize::try_from(u32_at(entry, 16)?).ok()?;
        let postings = first..first.checked_add(kept)?;
        Some((self.string(entry, 0)?, u64::from(u32_at(entry, 8)?), postings))
    }

    /// Postings `range`, when the index holds them.
    fn postings(&self, range: std::ops::Range<usize>) -> Option<impl Iterator<Item = i64> + 'b> {
        if range.end > self.postings {
            return None;
        }
        let start = self.postings_at + range.start * POSTING;
        let bytes = self.bytes.get(start..self.postings_at + range.end * POSTING)?;
        Some(bytes.chunks_exact(POSTING).filter_map(|b| b.try_into().ok().map(i64::from_le_bytes)))
    }

    /// How many memories share `term`, and the newest of them (as many as the index keeps).
    pub(super) fn term(&self, term: &str) -> Option<(u64, impl Iterator<Item = i64> + 'b)> {
        let key = term.as_bytes();
        // The last fenced term at or before the key: the term is among the next ones, if
        // anywhere.
        let fenced = self.terms.div_ceil(FENCE_EVERY);
        let (mut low, mut high) = (0, fenced);
        while low < high {
            let middle = low + (high - low) / 2;
            if self.fenced(middle)? <= key {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        let start = low.checked_sub(1)? * FENCE_EVERY;
        let len = (self.terms - start).min(FENCE_EVERY);
        let at = start + find(len, |i| self.term_at(start + i).map(|(name, ..)| name), key)?;
        let (_, memories, postings) = self.term_at(at)?;
        Some((memories, self.postings(postings)?))
    }

    /// The name of the fence's entry `i`.
    fn fenced(&self, i: usize) -> Option<&'b [u8]> {
        let entries = self.terms.div_ceil(FENCE_EVERY).checked_mul(FENCE_ENTRY)?;
        let at = i.checked_mul(FENCE_ENTRY)?;
        let entry = self.fence.get(at..at.checked_add(FENCE_ENTRY)?)?;
        let start = entries.checked_add(usize::try_from(u32_at(entry, 0)?).ok()?)?;
        let len = usize::try_from(u32_at(entry, 4)?).ok()?;
        self.fence.get(start..start.checked_add(len)?)
    }

    fn memory_id(&self, i: usize) -> Option<i64> {
        let at = self.memories_at + i * MEMORY;
        i64_at(self.bytes.get(at..at + MEMORY)?, 0)
    }

    /// Memory `i` and its session's hash, when it is whole.
    fn memory_at(&self, i: usize) -> Option<(Memory, u64)> {
        let at = self.memories_at + i * MEMORY;
        let entry = self.bytes.get(at..at + MEMORY)?;
        let memory = Memory {
            id: i64_at(entry, 0)?,
            namespace: std::str::from_utf8(self.string(entry, 20)?).ok()?.to_owned(),
            text: std::str::from_utf8(self.string(entry, 28)?).ok()?.to_owned(),
            confidence: f32::from_bits(u32_at(entry, 16)?),
            created: i64_at(entry, 8)?,
        };
        let session = u64_at(entry, 40)?;
        (check(&memory, session) == u32_at(entry, 36)?).then_some((memory, session))
    }

    /// The memory of id `id` and its session's hash, when the index holds it whole.
    pub(super) fn memory(&self, id: i64) -> Option<(Memory, u64)> {
        let at = find(self.memories, |i| self.memory_id(i), &id)?;
        self.memory_at(at)
    }
}

/// Where `key` is among `len` sorted keys (`key_at`); `None` when it is not, or a key cannot
/// be read.
fn find<K: Ord + ?Sized, B: std::borrow::Borrow<K>>(
    len: usize,
    key_at: impl Fn(usize) -> Option<B>,
    key: &K,
) -> Option<usize> {
    let (mut low, mut high) = (0, len);
    while low < high {
        let middle = low + (high - low) / 2;
        match key_at(middle)?.borrow().cmp(key) {
            std::cmp::Ordering::Less => low = middle + 1,
            std::cmp::Ordering::Greater => high = middle,
            std::cmp::Ordering::Equal => return Some(middle),
        }
    }
    None
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(bytes: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

fn i64_at(bytes: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_le_bytes(bytes.get(at..at + 8)?.try_into().ok()?))
}

/// An index file's bytes.
pub(super) enum Bytes {
    Read(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Read(bytes) => bytes,
            Bytes::Mapped(map) => map,
        }
    }
}

/// The index file in `dir`, read or mapped; `None` when there is none, or it is not a regular
/// file, or too large, or cannot be read.
pub(super) fn read(dir: &Path) -> Option<Bytes> {
    let mut file = hook_engine::bounded::open_not_following(&dir.join(INDEX_NAME)).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_INDEX_BYTES {
        return None;
    }
    let len = usize::try_from(meta.len()).ok()?;
    if meta.len() <= READ_LIMIT {
        let mut bytes = Vec::with_capacity(len);
        file.by_ref().take(READ_LIMIT + 1).read_to_end(&mut bytes).ok()?;
        return Some(Bytes::Read(bytes));
    }
    // Written only by renaming a new file over it: the map cannot shrink underneath.
    hook_engine::bounded::map(&file, len).ok().map(Bytes::Mapped)
}

/// Writes `index` over the one in `dir` (renamed over it: readers see the old or the new).
pub(super) fn write(dir: &ConfinedDir, index: &Index) -> std::io::Result<()> {
    let bytes = index.encode().ok_or_else(|| std::io::Error::other("the index is too large"))?;
    dir.replace(INDEX_NAME, &bytes, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every term is found through the fence, whichever block it falls in and however many
    /// terms there are; a name between two terms, before the first or after the last is not.
    #[test]
    fn every_term_is_found_through_the_fence() {
        for count in [0, 1, FENCE_EVERY - 1, FENCE_EVERY, FENCE_EVERY + 1, 5 * FENCE_EVERY + 3] {
            let count = u16::try_from(count).unwrap();
            let terms: Vec<Term> = (0..count)
                .map(|i| Term {
                    name: format!("t{i:05}"),
                    memories: u64::from(i) + 1,
                    postings: vec![i64::from(i)],
                })
                .collect();
            let index = Index { terms, ..Index::default() };
            let bytes = index.encode().unwrap();
            let view = View::new(&bytes).unwrap();
            for i in 0..count {
                let (memories, postings) = view.term(&format!("t{i:05}")).expect("a term");
                assert_eq!(memories, u64::from(i) + 1, "{count} terms");
                assert_eq!(postings.collect::<Vec<_>>(), [i64::from(i)]);
                assert!(view.term(&format!("t{i:05}a")).is_none(), "between terms");
            }
            for missing in ["", "a", "t", "u", "t99999z"] {
                assert!(view.term(missing).is_none(), "{missing:?} among {count}");
            }
            assert_eq!(Index::decode(&view), Some(index));
        }
    }

    /// A fence that is not the terms' (out of order, pointing past itself, cut short, of
    /// another length than the header says) makes terms missed, never a panic and never
    /// another term's postings; an index of the version before the fence is not read.
    #[test]
    fn a_wrong_fence_only_misses() {
        let terms: Vec<Term> = (0..300u16)
            .map(|i| Term { name: format!("t{i:05}"), memories: 1, postings: vec![i64::from(i)] })
            .collect();
        let good = Index { terms, ..Index::default() }.encode().unwrap();
        let fence_len = usize::try_from(u32_at(&good, 52).unwrap()).unwrap();
        let reseal = |bytes: &mut Vec<u8>| {
            let sum = fnv1a(&bytes[..56]);
            bytes[56..64].copy_from_slice(&sum.to_le_bytes());
        };
        let mut bads = Vec::new();
        for at in HEADER..HEADER + fence_len {
            for value in [0u8, 0x7f, 0xff] {
                let mut bad = good.clone();
                bad[at] = value;
                bads.push(bad);
            }
        }
        let mut other_length = good.clone();
        other_length[52..56]
            .copy_from_slice(&(u32::try_from(fence_len).unwrap() - 8).to_le_bytes());
        reseal(&mut other_length);
        bads.push(other_length);
        for bad in &bads {
            let Some(view) = View::new(bad) else { continue };
            for i in 0..300u16 {
                if let Some((_, postings)) = view.term(&format!("t{i:05}")) {
                    assert_eq!(postings.collect::<Vec<_>>(), [i64::from(i)]);
                }
            }
        }
        let mut old = good.clone();
        old[4..8].copy_from_slice(&1u32.to_le_bytes());
        reseal(&mut old);
        assert!(View::new(&old).is_none(), "version 1 is read as no index: written anew");
    }
}
