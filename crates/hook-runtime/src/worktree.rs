//! `WorktreeCreate` and `WorktreeRemove`: a wired `WorktreeCreate` hook replaces Claude Code's
//! own worktree creation (it must print the new worktree's path, or `claude --worktree NAME`
//! fails), and `WorktreeRemove` then runs for the worktrees it made. So these hooks do what
//! Claude Code 2.1.330 does without a hook, whatever the project: a git worktree at
//! `<repository>/.claude/worktrees/<name>` on a new branch `worktree-<name>` from `HEAD`,
//! locked; and its removal, which git refuses while it has changes (nothing is forced).

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// Why a worktree could not be made or removed; said to the user.
#[derive(Debug)]
pub(crate) enum WorktreeError {
    /// The name asked for is not a plain slug.
    NotASlug(String),
    /// The payload's `cwd` is not a folder.
    NotAFolder(String),
    /// git could not be started.
    NoGit(std::io::Error),
    /// The payload's `cwd` is not in a git repository.
    NotARepository(String),
    /// git refused: its arguments and what it said.
    Refused { args: String, said: String },
    /// A path that is not UTF-8 (git takes it as text).
    NotUtf8(PathBuf),
    /// A worktree path not under the repository's `.claude/worktrees/`.
    NotOurs { path: String, under: PathBuf },
    /// A folder on the way to the worktree that is a symbolic link, or not a folder.
    Linked(PathBuf),
    /// Where the worktree would go, its links resolved, is outside the repository.
    Outside { path: PathBuf, root: PathBuf },
}

impl fmt::Display for WorktreeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorktreeError::NotASlug(name) => write!(
                f,
                "worktree name `{name}` is not a plain name (letters, digits, `.`, `_`, `-`)"
            ),
            WorktreeError::NotAFolder(cwd) => write!(f, "{cwd} is not a folder"),
            WorktreeError::NoGit(err) => write!(f, "cannot run git: {err}"),
            WorktreeError::NotARepository(cwd) => write!(f, "{cwd} is not in a git repository"),
            WorktreeError::Refused { args, said } => write!(f, "git {args}: {said}"),
            WorktreeError::NotUtf8(path) => write!(f, "{} is not UTF-8", path.display()),
            WorktreeError::NotOurs { path, under } => {
                write!(f, "{path} is not a worktree hookpack made (under {})", under.display())
            }
            WorktreeError::Linked(path) => write!(
                f,
                "{} is a symbolic link or not a folder: a worktree is made in the repository's \
                 own folders only, never through a link (the repository may point it anywhere)",
                path.display()
            ),
            WorktreeError::Outside { path, root } => write!(
                f,
                "{} is not inside the repository {}: no worktree is made there",
                path.display(),
                root.display()
            ),
        }
    }
}

/// Creates the worktree `payload` names; returns its path.
///
/// # Errors
///
/// A message for the user: the name is not a plain slug, `cwd` is not in a git repository,
/// `.claude` or `.claude/worktrees` is a symbolic link (or the worktree would be outside the
/// repository), or git refused.
pub(crate) fn create(payload: &Value) -> Result<PathBuf, WorktreeError> {
    let name = payload.get("name").and_then(Value::as_str).unwrap_or_default();
    if !is_slug(name) {
        return Err(WorktreeError::NotASlug(name.to_owned()));
    }
    let root = repository(payload)?;
    let path = root.join(".claude/worktrees").join(name);
    inside(&root, name)?;
    let branch = format!("worktree-{name}");
    git(&root, &["worktree", "add", "--lock", "-b", &branch, path_str(&path)?, "HEAD"])?;
    Ok(path)
}

/// Removes the worktree at `payload`'s `worktree_path`, when it is one of those [`create`]
/// makes (under `<repository>/.claude/worktrees/`).
///
/// # Errors
///
/// A message for the user: the path is elsewhere, or git refused (changes in it).
pub(crate) fn remove(payload: &Value) -> Result<(), WorktreeError> {
    let path = payload.get("worktree_path").and_then(Value::as_str).unwrap_or_default();
    let root = repository(payload)?;
    let under = root.join(".claude/worktrees");
    let name = Path::new(path).strip_prefix(&under).ok().and_then(|rest| rest.to_str());
    let Some(name) = name.filter(|name| is_slug(name)) else {
        return Err(WorktreeError::NotOurs { path: path.to_owned(), under });
    };
    inside(&root, name)?;
    // Locked when made; unlocked to be removed (an error here means it was not locked).
    let _ = git(&root, &["worktree", "unlock", path]);
    git(&root, &["worktree", "remove", path])
}

/// Checks that `<root>/.claude/worktrees/<name>` is in the repository's own folders: neither
/// `.claude`, `.claude/worktrees` nor the worktree itself is a symbolic link (git would follow
/// one, and a repository can commit it), and the folder it would be in, its links resolved, is
/// inside the repository.
fn inside(root: &Path, name: &str) -> Result<(), WorktreeError> {
    let mut path = root.to_path_buf();
    for part in [".claude", "worktrees", name] {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() || !meta.is_dir() => {
                return Err(WorktreeError::Linked(path));
            }
            _ => {}
        }
    }
    let repository = crate::git::Repository::of(root);
    if !path.parent().is_some_and(|parent| repository.contains(parent)) {
        return Err(WorktreeError::Outside { path, root: root.to_path_buf() });
    }
    Ok(())
}

/// A worktree name hookpack accepts: what Claude Code's slugs are, nothing a path or an option
/// could hide in.
fn is_slug(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && !name.contains("..")
}

/// The root of the git repository of `payload`'s `cwd`: its main worktree, also when `cwd` is
/// in one of its worktrees (a session that entered a worktree removes it from inside).
fn repository(payload: &Value) -> Result<PathBuf, WorktreeError> {
    let cwd = payload.get("cwd").and_then(Value::as_str).unwrap_or(".");
    if !Path::new(cwd).is_dir() {
        return Err(WorktreeError::NotAFolder(cwd.to_owned()));
    }
    let output = crate::git::command(Path::new(cwd))
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel"])
        .output()
        .map_err(WorktreeError::NoGit)?;
    if !output.status.success() {
        return Err(WorktreeError::NotARepository(cwd.to_owned()));
    }
    let said = String::from_utf8_lossy(&output.stdout);
    let mut lines = said.lines();
    let (common, top) = (lines.next().unwrap_or_default(), lines.next().unwrap_or_default());
    // `<main worktree>/.git` is shared by every worktree; anything else (a bare repository, a
    // separate git dir) has no main worktree to go by.
    let common = Path::new(common);
    Ok(match common.parent() {
        Some(main) if common.file_name().is_some_and(|n| n == ".git") => main.to_path_buf(),
        _ => PathBuf::from(top),
    })
}

fn git(root: &Path, args: &[&str]) -> Result<(), WorktreeError> {
    // `git worktree add` stands in for Claude Code's own, which runs the repository's hooks.
    let output = crate::git::with_hooks(root).args(args).output().map_err(WorktreeError::NoGit)?;
    if output.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&output.stderr).trim().to_owned();
    Err(WorktreeError::Refused { args: args.join(" "), said })
}

fn path_str(path: &Path) -> Result<&str, WorktreeError> {
    path.to_str().ok_or_else(|| WorktreeError::NotUtf8(path.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names() {
        for name in ["feature-x", "bold-oak-a3f2", "v1.2_fix"] {
            assert!(is_slug(name), "{name}");
        }
        for name in ["", "-b", ".hidden", "a/b", "..", "a..b", "x y", &"n".repeat(65)] {
            assert!(!is_slug(name), "{name}");
        }
    }

    #[test]
    fn a_worktree_is_made_and_removed_as_claude_code_does() {
        let dir = std::env::temp_dir().join(format!("hookpack-worktree-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let run = |args: &[&str]| {
            let status =
                std::process::Command::new("git").args(args).current_dir(&dir).status().unwrap();
            assert!(status.success(), "git {args:?}");
        };
        run(&["init", "-q"]);
        run(&[
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "i",
        ]);
        let root = repository(&serde_json::json!({"cwd": dir})).unwrap();
        let payload = serde_json::json!({"cwd": dir, "name": "feature-x"});
        let path = create(&payload).unwrap();
        assert_eq!(path, root.join(".claude/worktrees/feature-x"));
        assert!(path.join(".git").exists());
        assert!(create(&serde_json::json!({"cwd": dir, "name": "../x"})).is_err());
        // Only what it made is removed.
        let elsewhere = serde_json::json!({"cwd": dir, "worktree_path": dir.display().to_string()});
        assert!(remove(&elsewhere).is_err());
        // A session that entered the worktree removes it from inside.
        assert_eq!(repository(&serde_json::json!({"cwd": path})).unwrap(), root);
        let made = serde_json::json!({"cwd": path, "worktree_path": path.display().to_string()});
        remove(&made).unwrap();
        assert!(!path.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_linked_claude_or_worktrees_folder_is_not_followed_out() {
        let base =
            std::env::temp_dir().join(format!("hookpack-worktree-link-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (dir, outside) = (base.join("repo"), base.join("outside"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(outside.join("worktrees")).unwrap();
        let run = |args: &[&str]| {
            let status =
                std::process::Command::new("git").args(args).current_dir(&dir).status().unwrap();
            assert!(status.success(), "git {args:?}");
        };
        run(&["init", "-q"]);
        let identity = ["-c", "user.email=t@t", "-c", "user.name=t"];
        run(&[&identity[..], &["commit", "-q", "--allow-empty", "-m", "i"]].concat());
        // A committed `.claude` linking out of the repository.
        std::os::unix::fs::symlink(&outside, dir.join(".claude")).unwrap();
        let payload = serde_json::json!({"cwd": dir, "name": "feature-x"});
        let err = create(&payload).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
        assert!(!outside.join("worktrees/feature-x").exists());
        // A real `.claude` whose `worktrees` links out.
        std::fs::remove_file(dir.join(".claude")).unwrap();
        std::fs::create_dir_all(dir.join(".claude")).unwrap();
        std::os::unix::fs::symlink(outside.join("worktrees"), dir.join(".claude/worktrees"))
            .unwrap();
        let err = create(&payload).unwrap_err().to_string();
        assert!(err.contains("symbolic link"), "{err}");
        assert!(!outside.join("worktrees/feature-x").exists());
        std::fs::remove_dir_all(&base).unwrap();
    }
}
