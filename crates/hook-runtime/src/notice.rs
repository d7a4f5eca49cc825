//! Notices for the user: a line added to the answer's `systemMessage`, given once per session
//! (a marker file per notice under `state/notices/`, pruned after a week).

use std::fs;
use std::io::Write as _;

use hook_model::EventKind;

use crate::Installation;
use crate::confined::{Confined, ConfinedDir};

/// How long a notice marker is kept: past it, the session is long gone.
const NOTICE_MAX_AGE: std::time::Duration = std::time::Duration::from_hours(7 * 24);

/// Whether this is the first time `key` is announced in `session`, at an event whose
/// `systemMessage` the user sees in every mode (`UserPromptSubmit`, `PreToolUse`,
/// `PostToolUse`, `Stop`): a marker file under `state/notices/`, created atomically, so
/// parallel hooks announce it once. Where no marker can be kept (a read-only or refused
/// folder), a notice is given only when a session starts, never on every hook.
pub(crate) fn first_time(
    installation: &Installation,
    kind: EventKind,
    session: &str,
    key: &str,
) -> bool {
    // Told where the user sees it in every mode, and marked only then: a notice given where
    // print mode hides it would never be seen.
    if !kind.shows_system_message_in_every_mode() && kind != EventKind::SessionStart {
        return false;
    }
    let marker = format!("{}.{key}", session_marker(session));
    let Ok(dir) = Confined::of(installation).dir("state/notices") else {
        return kind == EventKind::SessionStart;
    };
    // SessionStart tells only when nothing can be remembered (below): once, where it may show.
    if kind == EventKind::SessionStart {
        return false;
    }
    match dir.create_new(&marker) {
        Ok(mut file) => {
            let _ = file.write_all(b"announced\n");
            prune_notices(&dir);
            true
        }
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(_) => kind == EventKind::SessionStart,
    }
}

/// A session's marker prefix: readable, and unique however long or odd the id (its hash).
fn session_marker(session: &str) -> String {
    let readable: String = session
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .take(40)
        .collect();
    format!("{readable}-{:016x}", hook_engine::artifact::sources::fnv1a(session.as_bytes()))
}

/// Removes the markers of sessions gone for a week (run when a marker is made, which is rare).
fn prune_notices(dir: &ConfinedDir) {
    let Ok(entries) = fs::read_dir(dir.path()) else { return };
    let now = std::time::SystemTime::now();
    for entry in entries.filter_map(Result::ok) {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|t| now.duration_since(t).is_ok_and(|age| age > NOTICE_MAX_AGE));
        if old && let Some(name) = entry.file_name().to_str() {
            let _ = dir.remove(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_never_share_a_notice_marker() {
        let long = "a".repeat(100);
        let other = format!("{long}b");
        assert_ne!(session_marker(&long), session_marker(&other), "ids past the readable part");
        assert_ne!(session_marker("a/b"), session_marker("ab"), "ids that differ in odd bytes");
        let marker = session_marker(&format!("../../{long}"));
        assert!(marker.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'));
        assert!(marker.len() <= 40 + 17);
    }

    #[test]
    fn old_notice_markers_are_pruned() {
        let root = std::env::temp_dir().join(format!("hookpack-notices-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(&root).unwrap();
        let installation = Installation::User { dir: root.clone() };
        let dir = Confined::of(&installation).dir("state/notices").unwrap();
        let old = dir.entry("gone-session.stale-1").unwrap();
        fs::write(&old, "announced\n").unwrap();
        let week_ago = std::time::SystemTime::now() - NOTICE_MAX_AGE - NOTICE_MAX_AGE / 7;
        fs::File::options().write(true).open(&old).unwrap().set_modified(week_ago).unwrap();
        assert!(first_time(&installation, EventKind::Stop, "s", "stale-2"));
        assert!(!first_time(&installation, EventKind::Stop, "s", "stale-2"), "once");
        assert!(!old.exists(), "a week-old marker is removed");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        fs::remove_dir_all(root).unwrap();
    }
}
