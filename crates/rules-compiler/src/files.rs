//! Reading the files of a scope (reference §5): a cloned repository is hostile input.
//!
//! A file a pack names (`context_file`), and a pack or config of a project, must resolve —
//! symbolic links included — inside its scope's folder, and be a regular file under a cap, read
//! without blocking ([`hook_engine::bounded::read_regular`]): `/etc/passwd`, `../../.ssh/id_rsa`,
//! a committed symbolic link to `~/.aws/credentials`, `/proc/self/environ`, `/dev/zero` and a
//! FIFO are refused before a byte of them is read.

use std::io;
use std::path::{Component, Path, PathBuf};

/// The largest `context_file`: its text goes into the model's context on every event it
/// answers, and the budget keeps a few thousand tokens of it anyway.
pub const MAX_CONTEXT_FILE_BYTES: u64 = 1 << 20;

/// Why a file was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// It does not exist (or is a symbolic link to nothing).
    Missing,
    /// Its path leaves the folder.
    Outside,
    /// It is a symbolic link to this real path, outside the folder.
    Link(PathBuf),
    /// One of the folders on its path is a symbolic link: it leads to this real path, outside.
    Through(PathBuf),
    /// A FIFO, a device, a socket or a folder.
    NotRegular,
    /// Larger than this many bytes.
    TooLarge(u64),
    /// Not UTF-8.
    NotText,
    /// Any other failure, lowercase.
    Io(String),
}

impl Refused {
    /// What is wrong with `what` (e.g. "`context_file` `notes.md`"), which must stay in `root`.
    pub(crate) fn message(&self, what: &str, root: &Path) -> String {
        let root = root.display();
        match self {
            Refused::Missing => format!("cannot read {what}: no such file"),
            Refused::Outside => format!("{what} is outside `{root}`, the folder it must stay in"),
            Refused::Link(target) => format!(
                "{what} is a symbolic link to `{}`, outside `{root}`, the folder it must stay in",
                target.display()
            ),
            Refused::Through(target) => format!(
                "{what} leads through a symbolic link to `{}`, outside `{root}`, the folder it \
                 must stay in",
                target.display()
            ),
            Refused::NotRegular => format!("{what} is not a regular file"),
            Refused::TooLarge(cap) => format!("{what} is larger than {}", size(*cap)),
            Refused::NotText => format!("{what} is not UTF-8 text"),
            Refused::Io(err) => format!("cannot read {what}: {err}"),
        }
    }
}

/// `path`'s real path, if it lies inside `root`'s (both resolved, symbolic links included).
///
/// Resolving does not open the file, so a FIFO or a device is not touched here.
pub(crate) fn confine(root: &Path, path: &Path) -> Result<PathBuf, Refused> {
    let real_root = std::fs::canonicalize(root).map_err(|e| refused(&e))?;
    let real = std::fs::canonicalize(path).map_err(|e| refused(&e))?;
    if real.starts_with(&real_root) {
        return Ok(real);
    }
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    Err(if is_link {
        Refused::Link(real)
    } else if lexical(path).starts_with(lexical(root)) {
        Refused::Through(real)
    } else {
        Refused::Outside
    })
}

/// The text of `path`, a regular file of at most `cap` bytes, read without blocking.
pub(crate) fn read_text(path: &Path, cap: u64) -> Result<String, Refused> {
    let bytes = hook_engine::bounded::read_regular(path, cap).map_err(|e| match e.kind() {
        io::ErrorKind::InvalidInput => Refused::NotRegular,
        io::ErrorKind::FileTooLarge => Refused::TooLarge(cap),
        _ => refused(&e),
    })?;
    String::from_utf8(bytes).map_err(|_| Refused::NotText)
}

fn refused(err: &io::Error) -> Refused {
    match err.kind() {
        io::ErrorKind::NotFound => Refused::Missing,
        _ => Refused::Io(err.to_string().to_lowercase()),
    }
}

/// `path` with `.` and `..` resolved by name, as a reader of the pack would.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                match out.components().next_back() {
                    Some(Component::Normal(_)) => {
                        out.pop();
                    }
                    // Above the root is the root.
                    Some(Component::RootDir | Component::Prefix(_)) => {}
                    _ => out.push(".."),
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// `1 MiB`, `4 MiB`, or bytes when not a whole number of MiB.
pub(crate) fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_paths_resolve_dots_by_name() {
        assert_eq!(lexical(Path::new("a/./b/../c")), Path::new("a/c"));
        assert_eq!(lexical(Path::new("a/../../c")), Path::new("../c"));
        assert_eq!(lexical(Path::new("/a/b/../../../c")), Path::new("/c"));
    }

    #[test]
    fn sizes_read_as_mebibytes() {
        assert_eq!(size(1 << 20), "1 MiB");
        assert_eq!(size(4 << 20), "4 MiB");
        assert_eq!(size(1000), "1000 bytes");
    }
}
