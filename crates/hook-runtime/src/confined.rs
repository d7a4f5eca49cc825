//! Where hookpack writes (reference §5): inside its own folder, never through a symlink.
//!
//! A repository can commit symlinks anywhere, `.claude/hookpack/state` or
//! `compiled/rules.hpk.ok.tmp` included, pointing at the user's files. Every file hookpack
//! creates, replaces or moves goes through a [`ConfinedDir`], which exists only for a folder
//! found to be a real folder (not a symlink) at every step below a trusted one, and every file
//! in it is created with `O_CREAT | O_EXCL | O_NOFOLLOW`, so a link planted under its name
//! makes the creation fail instead of writing through it. A rename replaces a link at its
//! destination instead of following it. A folder that fails the check is refused: the caller
//! fails open and says so.
//!
//! The checks guard against what a repository can plant ahead of time; a process racing the
//! hook with renames would need to run as the user already.

use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Component, Path, PathBuf};

use crate::Installation;
use crate::project::PROJECT_SUBDIR;

/// A folder hookpack may write in: a trusted folder and the path below it that must hold only
/// real folders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Confined {
    trusted: PathBuf,
    below: PathBuf,
}

impl Confined {
    /// `below` inside `trusted`: `trusted` itself is taken as it is (the user may have linked
    /// it, as dotfile managers do); every folder from it down to `below` must be real.
    pub fn new(trusted: &Path, below: &Path) -> Confined {
        Confined { trusted: trusted.to_path_buf(), below: below.to_path_buf() }
    }

    /// The folder of `installation`: `<project>/.claude/hookpack` (`.claude` and `hookpack`
    /// are the repository's and must be real folders), or the user's configuration folder.
    pub fn of(installation: &Installation) -> Confined {
        match installation {
            Installation::Project { root, .. } => Confined::new(root, Path::new(PROJECT_SUBDIR)),
            Installation::User { dir } => Confined::new(dir, Path::new("")),
        }
    }

    /// The folder's path (not checked).
    pub fn path(&self) -> PathBuf {
        self.trusted.join(&self.below)
    }

    /// Folder `relative` inside, every folder on the way checked and created when missing.
    ///
    /// # Errors
    ///
    /// When a folder on the way is a symlink or not a folder, `relative` leaves the folder, or
    /// a folder cannot be created.
    pub fn dir(&self, relative: &str) -> io::Result<ConfinedDir> {
        self.walk(relative, true)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }

    /// Folder `relative` inside, checked; `None` when it (or a folder on the way) does not exist.
    ///
    /// # Errors
    ///
    /// When a folder on the way is a symlink or not a folder, or `relative` leaves the folder.
    pub fn existing_dir(&self, relative: &str) -> io::Result<Option<ConfinedDir>> {
        self.walk(relative, false)
    }

    fn walk(&self, relative: &str, create: bool) -> io::Result<Option<ConfinedDir>> {
        let mut path = self.trusted.clone();
        for component in self.below.components().chain(Path::new(relative).components()) {
            match component {
                Component::Normal(name) => path.push(name),
                Component::CurDir => continue,
                _ => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{relative} leaves {}", self.path().display()),
                    ));
                }
            }
            if checked(&path) {
                continue;
            }
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.is_dir() => {}
                Ok(meta) => return Err(refused(&path, &meta)),
                Err(err) if err.kind() == io::ErrorKind::NotFound && create => {
                    match std::fs::create_dir(&path) {
                        Ok(()) => {}
                        // Made meanwhile by a parallel hook: check what is there now.
                        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                            let meta = std::fs::symlink_metadata(&path)?;
                            if !meta.is_dir() {
                                return Err(refused(&path, &meta));
                            }
                        }
                        Err(err) => return Err(err),
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
                Err(err) => return Err(err),
            }
            remember_checked(&path);
        }
        Ok(Some(ConfinedDir { path }))
    }
}

thread_local! {
    /// The folders found real during one hook's answer ([`during_hook`]): a hook reaches
    /// `.claude/hookpack` for its rules, its session's record and its memories, and checking
    /// the same folders again would find what the first check found (the checks are against
    /// what a repository plants ahead of time, not against a process racing the hook).
    static CHECKED: std::cell::RefCell<Option<Vec<PathBuf>>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `answer` remembering the folders [`Confined`] finds real, and forgets them after.
pub(crate) fn during_hook<T>(answer: impl FnOnce() -> T) -> T {
    struct Forget;
    impl Drop for Forget {
        fn drop(&mut self) {
            CHECKED.with_borrow_mut(|checked| *checked = None);
        }
    }
    CHECKED.with_borrow_mut(|checked| *checked = Some(Vec::new()));
    let _forget = Forget;
    answer()
}

fn checked(path: &Path) -> bool {
    CHECKED.with_borrow(|checked| checked.as_ref().is_some_and(|c| c.iter().any(|p| p == path)))
}

fn remember_checked(path: &Path) {
    CHECKED.with_borrow_mut(|checked| {
        if let Some(checked) = checked {
            checked.push(path.to_path_buf());
        }
    });
}

fn refused(path: &Path, meta: &std::fs::Metadata) -> io::Error {
    let what = if meta.is_symlink() { "a symbolic link" } else { "not a folder" };
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!(
            "{} is {what}; hookpack reads its rules from and writes only inside its own folders",
            path.display()
        ),
    )
}

/// A folder checked by [`Confined`]: the only place files are written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfinedDir {
    path: PathBuf,
}

impl ConfinedDir {
    /// A folder taken as it is: for paths the user gave explicitly (`HOOKPACK_ARTIFACT`).
    /// Files in it are still created without following links.
    pub fn trusting(path: &Path) -> ConfinedDir {
        ConfinedDir { path: path.to_path_buf() }
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of entry `name` (one path component).
    ///
    /// # Errors
    ///
    /// When `name` is not one plain component.
    pub fn entry(&self, name: &str) -> io::Result<PathBuf> {
        let mut components = Path::new(name).components();
        match (components.next(), components.next()) {
            (Some(Component::Normal(n)), None) if n == OsStr::new(name) => Ok(self.path.join(n)),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("`{name}` is not a file name"),
            )),
        }
    }

    /// Creates file `name`, failing with `AlreadyExists` when anything (a symlink included)
    /// has that name.
    ///
    /// # Errors
    ///
    /// As above, or when it cannot be created.
    pub fn create_new(&self, name: &str) -> io::Result<File> {
        self.create_new_with_mode(name, 0o644)
    }

    /// [`Self::create_new`] with permissions `mode` (less the umask).
    ///
    /// # Errors
    ///
    /// As [`Self::create_new`].
    pub fn create_new_with_mode(&self, name: &str, mode: u32) -> io::Result<File> {
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(self.entry(name)?)
    }

    /// Opens file `name` for reading and writing, creating it (readable by the user only) when
    /// there is none, never through a link: a link, a FIFO, a device or a file with another
    /// name too (a hard link: writing would change it there) at that name is removed (the
    /// entry, never what it points to) and a file created instead. Opened without blocking.
    ///
    /// # Errors
    ///
    /// When it cannot be opened or created, or a folder has that name.
    pub fn open_or_create(&self, name: &str) -> io::Result<File> {
        let path = self.entry(name)?;
        for _ in 0..3 {
            let opened = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .mode(0o600)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open(&path);
            match opened {
                Ok(file) => {
                    let meta = file.metadata()?;
                    if meta.is_file() && std::os::unix::fs::MetadataExt::nlink(&meta) == 1 {
                        return Ok(file);
                    }
                }
                // ELOOP: a link at the name.
                Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {}
                // A FIFO or device opened for writing can refuse instead: look at it.
                Err(err) if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) => {
                    return Err(err);
                }
                Err(err) if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) => {
                    return Err(err);
                }
                Err(_) => {}
            }
            self.remove(name)?;
        }
        Err(io::Error::other(format!("{} keeps being replaced", path.display())))
    }

    /// Replaces file `name` with `bytes` atomically: written to a new private file, optionally
    /// synced, and renamed over `name` (a symlink there is replaced, not followed). Readers see
    /// the old file or the new one, never a mix.
    ///
    /// # Errors
    ///
    /// When it cannot be written or renamed.
    pub fn replace(&self, name: &str, bytes: &[u8], sync: bool) -> io::Result<()> {
        self.replace_with_mode(name, bytes, sync, 0o644)
    }

    /// [`Self::replace`], the new file made with permissions `mode` (less the umask) from the
    /// start: a file that must stay private is never readable by others, even for a moment.
    ///
    /// # Errors
    ///
    /// As [`Self::replace`].
    pub fn replace_with_mode(
        &self,
        name: &str,
        bytes: &[u8],
        sync: bool,
        mode: u32,
    ) -> io::Result<()> {
        let target = self.entry(name)?;
        let staged_name = format!(".{name}.{}.tmp", std::process::id());
        let staged = self.entry(&staged_name)?;
        let mut file = match self.create_new_with_mode(&staged_name, mode) {
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {
                // Left by a crashed run with our pid, or planted: unlinking removes the name,
                // never what a link points to.
                std::fs::remove_file(&staged)?;
                self.create_new_with_mode(&staged_name, mode)?
            }
            other => other?,
        };
        let written =
            file.write_all(bytes).and_then(|()| if sync { file.sync_all() } else { Ok(()) });
        drop(file);
        let renamed = written.and_then(|()| std::fs::rename(&staged, &target));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&staged);
        }
        renamed
    }

    /// Moves entry `name` to `to` in the same folder (the entry itself, a link included).
    ///
    /// # Errors
    ///
    /// When it cannot be renamed.
    pub fn rename(&self, name: &str, to: &str) -> io::Result<()> {
        std::fs::rename(self.entry(name)?, self.entry(to)?)
    }

    /// Removes entry `name` (a link itself, never its target); nothing there is fine.
    ///
    /// # Errors
    ///
    /// When it exists and cannot be removed.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        match std::fs::remove_file(self.entry(name)?) {
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("hookpack-confined-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Within one hook's answer a folder found real is not looked at again; a link planted
    /// before the hook is refused however often it is reached, and after the answer every
    /// folder is looked at anew.
    #[test]
    fn folders_are_checked_once_per_hook_and_links_always_refused() {
        let root = temp_dir("once");
        let outside = temp_dir("once-outside");
        std::fs::create_dir_all(root.join(".claude")).unwrap();
        symlink(&outside, root.join(".claude/hookpack")).unwrap();
        let confined = Confined::new(&root, Path::new(".claude/hookpack"));
        during_hook(|| {
            for _ in 0..2 {
                let err = confined.dir("state").unwrap_err();
                assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
            }
            assert!(checked(&root.join(".claude")), "the real folder is remembered");
            assert!(!checked(&root.join(".claude/hookpack")), "the link is not");
        });
        assert!(!checked(&root.join(".claude")), "forgotten after the hook");
        // Outside a hook's answer, nothing is remembered: a folder replaced by a link between
        // two walks is refused.
        std::fs::remove_file(root.join(".claude/hookpack")).unwrap();
        confined.dir("state").unwrap();
        std::fs::remove_dir_all(root.join(".claude/hookpack")).unwrap();
        symlink(&outside, root.join(".claude/hookpack")).unwrap();
        assert_eq!(confined.dir("state").unwrap_err().kind(), io::ErrorKind::PermissionDenied);
        assert!(std::fs::read_dir(&outside).unwrap().next().is_none(), "nothing written outside");
        std::fs::remove_dir_all(root).unwrap();
        std::fs::remove_dir_all(outside).unwrap();
    }

    #[test]
    fn folders_are_created_and_files_written_inside() {
        let root = temp_dir("inside");
        let confined = Confined::new(&root, Path::new(".claude/hookpack"));
        let dir = confined.dir("state/notices").unwrap();
        assert_eq!(dir.path(), root.join(".claude/hookpack/state/notices"));
        dir.create_new("a").unwrap();
        assert_eq!(dir.create_new("a").unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        dir.replace("b", b"one", false).unwrap();
        dir.replace("b", b"two", true).unwrap();
        assert_eq!(std::fs::read(dir.entry("b").unwrap()).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2, "no staged file left");
        assert!(confined.existing_dir("nothing/here").unwrap().is_none());
        for bad in ["../x", "/etc"] {
            assert!(confined.dir(bad).is_err(), "{bad}");
        }
        for bad in ["", "..", "a/b", "/etc/passwd"] {
            assert!(dir.entry(bad).is_err(), "{bad}");
        }
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn symlinks_are_never_written_through() {
        let root = temp_dir("links");
        let outside = root.join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        let victim = outside.join("victim");
        std::fs::write(&victim, b"precious").unwrap();

        // A linked folder anywhere below the trusted one is refused.
        for (linked, rel) in [
            (".claude", "state"),
            (".claude/hookpack", "state"),
            (".claude/hookpack/state", "state"),
        ] {
            let project = root.join(format!("p-{}", linked.replace('/', "-")));
            let at = project.join(linked);
            std::fs::create_dir_all(at.parent().unwrap()).unwrap();
            symlink(&outside, &at).unwrap();
            let confined = Confined::new(&project, Path::new(".claude/hookpack"));
            let err = confined.dir(rel).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::PermissionDenied, "{linked}");
            assert!(err.to_string().contains("symbolic link"), "{err}");
        }

        // A linked file is neither created through nor replaced through.
        std::fs::create_dir(root.join("p")).unwrap();
        let confined = Confined::new(&root.join("p"), Path::new(".claude/hookpack"));
        let dir = confined.dir("compiled").unwrap();
        symlink(&victim, dir.entry("marker").unwrap()).unwrap();
        assert_eq!(dir.create_new("marker").unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        symlink(&victim, dir.entry(&format!(".rules.{}.tmp", std::process::id())).unwrap())
            .unwrap();
        symlink(&victim, dir.entry("rules").unwrap()).unwrap();
        dir.replace("rules", b"new", false).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(!std::fs::symlink_metadata(dir.entry("rules").unwrap()).unwrap().is_symlink());
        dir.remove("marker").unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        std::fs::remove_dir_all(root).unwrap();
    }
}
