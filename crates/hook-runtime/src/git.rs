//! The project's current git branch, read from `.git/HEAD` as git writes it: no git process,
//! two small bounded reads, and only for rules that ask (`branch`, `{branch}`, `{issue}`).

use std::path::{Path, PathBuf};

use hook_engine::bounded::read_regular;

/// The most bytes of `.git` (a file, in a worktree or submodule) and of `HEAD` read.
const MAX_HEAD_BYTES: u64 = 4096;

/// The most folders looked up from the start for `.git`.
const MAX_DEPTH: usize = 64;

/// The branch checked out in the repository `start` is in, found as git finds it (the first
/// `.git` from `start` up): `Some("feature/42-login")` when `HEAD` names a branch, `None` when
/// it is detached, there is no repository, or anything read is not as git writes it. A
/// worktree's (or a submodule's) `.git` file sends the reading to the `HEAD` of the folder it
/// names.
pub fn current_branch(start: &Path) -> Option<String> {
    let (dot_git, meta) = start.ancestors().take(MAX_DEPTH).find_map(|dir| {
        let dot_git = dir.join(".git");
        std::fs::symlink_metadata(&dot_git).ok().map(|meta| (dot_git, meta))
    })?;
    let root = dot_git.parent()?.to_path_buf();
    let git_dir = if meta.is_dir() {
        dot_git
    } else if meta.is_file() {
        worktree_dir(&root, &read_regular(&dot_git, MAX_HEAD_BYTES).ok()?)?
    } else {
        return None;
    };
    branch_of(&read_regular(&git_dir.join("HEAD"), MAX_HEAD_BYTES).ok()?)
}

/// The folder a `.git` file names (`gitdir: <path>`, relative to `root` when not absolute).
fn worktree_dir(root: &Path, bytes: &[u8]) -> Option<PathBuf> {
    let text = std::str::from_utf8(bytes).ok()?;
    let path = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    (!path.is_empty()).then(|| root.join(path))
}

/// The branch a `HEAD` file names: `ref: refs/heads/<branch>` on one line.
fn branch_of(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    let branch = lines.next()?.strip_prefix("ref:")?.trim().strip_prefix("refs/heads/")?;
    // One line, and a name git could have made (no control characters or spaces).
    // A name git accepts (`git check-ref-format`, in short): no control characters, spaces or
    // `~^:?*[\`, no `..` or `@{`, no part starting with `.` or ending in `.lock` (a reftable
    // repository's `HEAD` names `.invalid`).
    let valid = !branch.is_empty()
        && branch.len() <= 255
        && !branch.chars().any(|c| c.is_control() || " ~^:?*[\\".contains(c))
        && !branch.contains("..")
        && !branch.contains("@{")
        && branch.split('/').all(|part| {
            !part.is_empty()
                && !part.starts_with('.')
                && part.rsplit_once('.').is_none_or(|(_, ext)| ext != "lock")
        })
        && lines.all(|l| l.trim().is_empty());
    valid.then(|| branch.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_as_git_writes_them() {
        assert_eq!(branch_of(b"ref: refs/heads/main\n").as_deref(), Some("main"));
        assert_eq!(
            branch_of(b"ref: refs/heads/feature/42-login\n").as_deref(),
            Some("feature/42-login")
        );
        assert_eq!(branch_of(b"ref:refs/heads/x").as_deref(), Some("x"));
        // Detached, another ref, garbage, two lines, a control character.
        for head in [
            &b"3f2a9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b\n"[..],
            b"ref: refs/remotes/origin/main\n",
            b"ref: refs/heads/\n",
            b"\xff\xfe",
            b"ref: refs/heads/a\nref: refs/heads/b\n",
            b"ref: refs/heads/a\x1b[31mred\n",
            b"ref: refs/heads/a b\n",
            b"ref: refs/heads/.invalid\n",
            b"ref: refs/heads/a..b\n",
            b"ref: refs/heads/x.lock\n",
        ] {
            assert_eq!(branch_of(head), None, "{head:?}");
        }
    }

    #[test]
    fn a_repository_and_a_worktree() {
        let dir = std::env::temp_dir().join(format!("hookpack-git-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let main = dir.join("main");
        std::fs::create_dir_all(main.join(".git/worktrees/wt")).unwrap();
        std::fs::write(main.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(main.join(".git/worktrees/wt/HEAD"), "ref: refs/heads/ABC-7-fix\n").unwrap();
        assert_eq!(current_branch(&main).as_deref(), Some("main"));
        let wt = dir.join("wt");
        std::fs::create_dir_all(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: ../main/.git/worktrees/wt\n").unwrap();
        assert_eq!(current_branch(&wt).as_deref(), Some("ABC-7-fix"));
        // Found from a folder below, as git finds it.
        std::fs::create_dir_all(wt.join("packages/api")).unwrap();
        assert_eq!(current_branch(&wt.join("packages/api")).as_deref(), Some("ABC-7-fix"));
        // A HEAD over the cap is not read.
        std::fs::write(main.join(".git/worktrees/wt/HEAD"), "x".repeat(5000)).unwrap();
        assert_eq!(current_branch(&wt), None);
        // No repository; a `.git` naming nothing; a FIFO as HEAD is not waited on.
        assert_eq!(current_branch(&dir), None);
        std::fs::write(wt.join(".git"), "gitdir: /nonexistent\n").unwrap();
        assert_eq!(current_branch(&wt), None);
        std::fs::remove_file(main.join(".git/HEAD")).unwrap();
        let status = std::process::Command::new("mkfifo").arg(main.join(".git/HEAD")).status();
        if status.is_ok_and(|s| s.success()) {
            assert_eq!(current_branch(&main), None);
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
