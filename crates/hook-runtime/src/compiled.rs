//! Writing a compiled artifact as hooks will use it: the artifact, the stamp that says
//! `hookpack compile` wrote it here, and the fail-closed list beside it.

use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use hook_engine::artifact::format::header;
use hook_engine::artifact::stamp;

use crate::confined::ConfinedDir;
use crate::failure::FAIL_CLOSED_FILE;

/// Writes `bytes` as `name` in `dir` (by a rename: a hook reading the old file is not
/// disturbed), then its stamp `<name>.ok` (the file as it is after the rename: device, inode,
/// length, times, CRC; `hook_engine::artifact::load`), then the fail-closed list `fail_closed`
/// (removed when empty). Hooks answer only from an artifact whose stamp matches it; the folder
/// is locked (`flock` on the folder itself) while they are written, and a hook that finds the
/// artifact without its stamp waits for the lock ([`wait_for_compile`]).
///
/// # Errors
///
/// When a file cannot be written.
pub fn write_compiled(
    dir: &ConfinedDir,
    name: &str,
    bytes: &[u8],
    fail_closed: &str,
) -> io::Result<()> {
    let lock = std::fs::File::open(dir.path())?;
    lock.lock()?;
    dir.replace(name, bytes, true)?;
    let written = std::fs::symlink_metadata(dir.path().join(name))?;
    // The CRC the header holds: a hook checks that the stamp names it.
    let crc = bytes
        .get(header::CRC..header::CRC + 4)
        .map_or(0, |w| u32::from_le_bytes(w.try_into().unwrap_or_default()));
    dir.replace(&format!("{name}.ok"), stamp(&written, crc).as_bytes(), true)?;
    // Earlier versions staged their stamp under this name; a link planted there goes.
    let _ = dir.remove(&format!("{name}.ok.tmp"));
    // The tools `fail = "closed"` rules cover, kept apart from the artifact so that a hook can
    // still deny them when the artifact is damaged.
    write_fail_closed(dir, fail_closed)
}

/// Writes the fail-closed list `list` in `dir`, or removes it when `list` is empty.
///
/// # Errors
///
/// When the file cannot be written or removed.
pub fn write_fail_closed(dir: &ConfinedDir, list: &str) -> io::Result<()> {
    if list.is_empty() {
        return match dir.remove(FAIL_CLOSED_FILE) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => Err(err),
            _ => Ok(()),
        };
    }
    dir.replace(FAIL_CLOSED_FILE, list.as_bytes(), true)
}

/// How long a hook waits for a compile to finish writing.
const COMPILE_WAIT: Duration = Duration::from_secs(2);

/// Returns once no compile holds the lock of the folder `dir` ([`write_compiled`]), or after
/// 2 s.
pub(crate) fn wait_for_compile(dir: &Path) {
    let Ok(folder) = std::fs::File::open(dir) else { return };
    let started = Instant::now();
    while let Err(std::fs::TryLockError::WouldBlock) = folder.try_lock_shared() {
        if started.elapsed() >= COMPILE_WAIT {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
