//! How hookpack reads a path: as text, normalized (no empty or `.` components, each `..`
//! taking the one before it), and, for a path a command names, placed in one [`Class`] that
//! guards judge (`args = ["@system", "@home"]`, reference §2.1). One model serves every
//! deleting, moving or overwriting command and every interpreter's file API: a rule names the
//! classes it refuses, not the paths.
//!
//! A word is made a path first ([`Places::resolve`]): `~`, `$HOME`, `${HOME:?}`, `$PWD`,
//! `$(pwd)`, `$TMPDIR`, `$CLAUDE_PROJECT_DIR` and `$(git rev-parse --show-toplevel)` stand for
//! the places they name; a relative path is joined to the working folder; then it is
//! normalized, so that `/tmp/../etc` is `/etc` and `$TMPDIR/../etc` too. What is only known at
//! run time (another variable, a command's output, a glob) stands for "some entry" of the folder
//! before it, or for "everything in it" when it is the last component and a bare `*`. Symbolic
//! links are not followed: a path is judged by its name.

use std::fmt;

/// What a path is, for a guard, from the most to the least specific: the first that holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Class {
    /// A secret by its name, wherever it is: private keys, `.env` files, `~/.ssh`, `~/.aws`,
    /// `.netrc`, `.pgpass`, keystores.
    Credentials,
    /// A repository's `.git` folder or something in it.
    Git,
    /// The project's root itself, or everything in it.
    Project,
    /// A folder that holds the project (`..` from its root, `/home/me/src` for
    /// `/home/me/src/app`).
    AboveProject,
    /// Inside the project, in a folder its build makes again (`target`, `node_modules`, `dist`,
    /// `__pycache__`, …).
    BuildOutput,
    /// Anything else inside the project.
    InProject,
    /// Inside a temporary folder (`/tmp/x`, `$TMPDIR/x`, everything in `/tmp`), not the
    /// folder itself.
    Temp,
    /// Outside the project, what a tool makes again: a cache (`~/.cache/pip`,
    /// `~/Library/Caches/x`, `/var/cache/apt`) or another project's build output
    /// (`../other/target`).
    Cache,
    /// A home folder (`~`, `/home/<user>`, `/Users/<user>`, `/root`), everything in one, or the
    /// folder of every home (`/home`).
    Home,
    /// Inside a home folder, outside the project (`~/Documents`, `~/projects/old`).
    InHome,
    /// The filesystem's root itself, or everything in it.
    Root,
    /// A top-level system folder or everything in it (`/etc`, `/usr/*`, `C:\Windows`), or
    /// some entry of the root (`/$NAME`).
    System,
    /// Inside a system folder (`/etc/nginx`, `/usr/lib`, `/var/log`, `/usr/local/go`).
    InSystem,
    /// Any other absolute path (`/data/x`, `/srv2/y`).
    Outside,
    /// Known only at run time: a variable or a command's output at its start.
    Unknown,
}

impl Class {
    /// Every class, in order.
    pub const ALL: [Class; 15] = [
        Class::Credentials,
        Class::Git,
        Class::Project,
        Class::AboveProject,
        Class::BuildOutput,
        Class::InProject,
        Class::Temp,
        Class::Cache,
        Class::Home,
        Class::InHome,
        Class::Root,
        Class::System,
        Class::InSystem,
        Class::Outside,
        Class::Unknown,
    ];

    /// Its name in a pack, after `@` (`@in-home`).
    pub fn name(self) -> &'static str {
        match self {
            Class::Credentials => "credentials",
            Class::Git => "git",
            Class::Project => "project",
            Class::AboveProject => "above-project",
            Class::BuildOutput => "build-output",
            Class::InProject => "in-project",
            Class::Temp => "temp",
            Class::Cache => "cache",
            Class::Home => "home",
            Class::InHome => "in-home",
            Class::Root => "root",
            Class::System => "system",
            Class::InSystem => "in-system",
            Class::Outside => "outside",
            Class::Unknown => "unknown",
        }
    }

    /// The class named `name` (without its `@`).
    pub fn from_name(name: &str) -> Option<Class> {
        Class::ALL.into_iter().find(|c| c.name() == name)
    }

    /// What it is, in words (for `explain`).
    pub fn describe(self) -> &'static str {
        match self {
            Class::Credentials => "a credential file or folder",
            Class::Git => "a repository's .git folder",
            Class::Project => "the project itself",
            Class::AboveProject => "a folder holding the project",
            Class::BuildOutput => "build output inside the project",
            Class::InProject => "inside the project",
            Class::Temp => "inside a temporary folder",
            Class::Cache => "a cache or build output outside the project",
            Class::Home => "a home folder",
            Class::InHome => "inside a home folder, outside the project",
            Class::Root => "the filesystem root",
            Class::System => "a top-level system folder",
            Class::InSystem => "inside a system folder",
            Class::Outside => "outside the project, the home and the system folders",
            Class::Unknown => "known only when the command runs",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The folders a path is placed against, for one event: each absolute and normalized.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Places {
    /// The working folder (the payload's `cwd`).
    pub cwd: Option<String>,
    /// The project's root.
    pub root: Option<String>,
    /// The user's home folder (`$HOME`).
    pub home: Option<String>,
    /// The temporary folder (`$TMPDIR`), when it is set.
    pub tmp: Option<String>,
}

/// A home whose path is not known: `~` still reads as a home (`/home/<user>` by its shape).
const SOME_HOME: &str = "/home/~";
/// A working folder that is not known.
const SOME_CWD: &str = "/\u{0}cwd";
/// A build's output folder named by a variable (`$BUILD_DIR`, `${OUT_DIR}`).
const SOME_BUILD: &str = "/\u{0}build";
/// What a component that stands for every entry of its folder becomes while a path is read.
const EVERYTHING: &str = "\u{1}";
/// What a component that stands for some entry of its folder becomes.
const SOME: &str = "\u{2}";

/// The folders at the filesystem's root that the system owns (and what is in them); `/tmp`
/// and `/var/tmp` are system folders themselves, their entries [`Class::Temp`].
const SYSTEM: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "lib",
    "lib32",
    "lib64",
    "libx32",
    "media",
    "mnt",
    "nix",
    "opt",
    "proc",
    "run",
    "sbin",
    "snap",
    "srv",
    "sys",
    "tmp",
    "usr",
    "var",
    "Applications",
    "Library",
    "System",
    "Volumes",
    "private",
    "cores",
    "Windows",
    "Program Files",
    "Program Files (x86)",
    "ProgramData",
];

/// The folders whose entries are temporary (beside `$TMPDIR`).
const TEMP: &[&str] =
    &["/tmp", "/var/tmp", "/private/tmp", "/private/var/folders", "/var/folders", "/dev/shm"];

/// The folders whose entries are homes (`/home/<user>`); `/root` is one itself.
const HOMES: &[&str] = &["/home", "/Users", "/var/home"];

/// System folders a package manager fills again.
const CACHES: &[&str] = &["/var/cache", "/var/lib/apt/lists", "/Library/Caches"];

/// Folder names a build or a tool makes again: removing them loses nothing.
const BUILD_OUTPUT: &[&str] = &[
    "target",
    "node_modules",
    "dist",
    "build",
    "out",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".turbo",
    ".parcel-cache",
    ".cache",
    "coverage",
    ".nyc_output",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".venv",
    "venv",
    ".gradle",
    ".angular",
    ".expo",
    ".vite",
    "storybook-static",
    "_build",
    "zig-cache",
    ".zig-cache",
    "cmake-build-debug",
    "cmake-build-release",
    ".terraform",
    "bazel-bin",
    "bazel-out",
    "bazel-testlogs",
    "tmp",
    ".eggs",
    "htmlcov",
    ".docusaurus",
    ".serverless",
    ".dart_tool",
    "DerivedData",
    "vendor",
    // Package managers' caches.
    ".npm",
    "_cacache",
    ".pnpm-store",
    ".yarn",
    ".bun",
    ".m2",
    ".ivy2",
    ".nuget",
    ".pub-cache",
    ".cocoapods",
    // Lockfiles: the package manager writes them again.
    "package-lock.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "Cargo.lock",
    "poetry.lock",
    "Gemfile.lock",
    "composer.lock",
    "uv.lock",
];

/// Endings of what a build or a run writes beside the sources (`*.egg-info`, `*.pyc`).
const BUILT_ENDINGS: &[&str] =
    &[".egg-info", ".pyc", ".pyo", ".o", ".class", ".log", ".tsbuildinfo"];

/// Names that are secrets wherever they are (a component, ASCII case ignored).
const CREDENTIAL_NAMES: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".password-store",
    ".netrc",
    ".pgpass",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".vault-token",
    ".my.cnf",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "credentials",
    "credentials.json",
    "secrets.json",
    "secrets.yml",
    "secrets.yaml",
    "master.key",
    "service-account.json",
];

/// File name endings that are secrets (keys and keystores).
const CREDENTIAL_ENDINGS: &[&str] =
    &[".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".ppk", ".gpg"];

/// What a word stands for, as a path: where it is, and what of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The folder or file, absolute and normalized.
    pub path: String,
    /// Which of it the word names.
    pub part: Part,
    /// The word's components that are text (a glob's `*.pem`, a credential's name after a
    /// variable), ASCII lowercase: what names are judged by.
    names: Vec<String>,
}

/// Which part of [`Resolved::path`] a word names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The path itself.
    Itself,
    /// Everything in it (`dir/*`, `dir/.*`).
    Everything,
    /// Some entry of it, known at run time (`dir/$NAME`, `dir/*.log`).
    Some,
}

impl Places {
    /// The places of an event: its working folder, the project's root, the home and the
    /// temporary folder, each normalized (a relative or empty one is dropped).
    pub fn new(
        cwd: Option<&str>,
        root: Option<&str>,
        home: Option<&str>,
        tmp: Option<&str>,
    ) -> Places {
        let absolute = |p: Option<&str>| p.filter(|p| is_absolute(p)).map(normalize);
        Places {
            cwd: absolute(cwd),
            root: absolute(root),
            home: absolute(home),
            tmp: absolute(tmp),
        }
    }

    /// The places after `cd dir` (`None`: `cd` alone, to the home): the working folder moves,
    /// or becomes unknown when `dir` is (`cd -`, `cd "$(mktemp -d)"`).
    #[must_use]
    pub fn cd(&self, dir: Option<&str>) -> Places {
        let cwd = match dir {
            None => Some(self.home.clone().unwrap_or_else(|| SOME_HOME.to_owned())),
            Some("-") => Some(SOME_CWD.to_owned()),
            Some(dir) => match self.resolve(dir) {
                Some(Resolved { path, part: Part::Itself, .. }) => Some(path),
                _ => Some(SOME_CWD.to_owned()),
            },
        };
        Places { cwd, ..self.clone() }
    }

    /// `word` (as the program receives it, unquoted) as a path; `None` when it is known only at
    /// run time from its start (another variable, a command's output).
    pub fn resolve(&self, word: &str) -> Option<Resolved> {
        let word = word.trim();
        if word.is_empty() {
            return None;
        }
        let (start, rest) = self.anchor(word)?;
        let rest = rest.replace('\\', "/");
        let joined = match start {
            Some(start) => format!("{start}/{rest}"),
            None if is_absolute(&rest) => rest.clone(),
            None => {
                let cwd = self.cwd.as_deref().or(self.root.as_deref()).unwrap_or(SOME_CWD);
                format!("{cwd}/{rest}")
            }
        };
        // Each component that is a glob or known only at run time stands for one entry (a `..`
        // after it climbs back over it): the known part is up to the first that remains.
        let marked: Vec<&str> = joined
            .split('/')
            .map(|c| match c {
                _ if !is_open(c) => c,
                _ if is_everything(c) => EVERYTHING,
                _ => SOME,
            })
            .collect();
        let normalized = normalize(&marked.join("/"));
        let components: Vec<&str> = normalized.split('/').collect();
        let (known, part) = match components.iter().position(|c| *c == EVERYTHING || *c == SOME) {
            None => (normalized.clone(), Part::Itself),
            Some(at) => {
                let last = at + 1 == components.len();
                let part = if last && components[at] == EVERYTHING {
                    Part::Everything
                } else {
                    Part::Some
                };
                (components[..at].join("/"), part)
            }
        };
        let path = if known.is_empty() { "/".to_owned() } else { known };
        // The word's own names (not those of the folder it is relative to), as they resolve.
        let names = normalize(&rest)
            .split('/')
            .filter(|c| !c.is_empty() && *c != "..")
            .map(str::to_ascii_lowercase)
            .collect();
        Some(Resolved { path, part, names })
    }

    /// The place a word starts from, and the rest of it: `~/x` is the home and `x`; `None` when
    /// it starts with what is known only at run time.
    fn anchor<'w>(&'w self, word: &'w str) -> Option<(Option<String>, &'w str)> {
        let home = self.home.as_deref().unwrap_or(SOME_HOME);
        let cwd = self.cwd.as_deref().or(self.root.as_deref()).unwrap_or(SOME_CWD);
        let tmp = self.tmp.as_deref().unwrap_or("/tmp");
        // `~` and `~user`.
        if let Some(after) = word.strip_prefix('~') {
            let (user, rest) = after.split_once('/').unwrap_or((after, ""));
            if user.is_empty() {
                return Some((Some(home.to_owned()), rest));
            }
            if user.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)) {
                return Some((Some(format!("/home/{user}")), rest));
            }
            return Some((None, word));
        }
        for (prefix, place) in [
            ("$(git rev-parse --show-toplevel)", self.root.as_deref()),
            ("`git rev-parse --show-toplevel`", self.root.as_deref()),
            ("$(pwd)", Some(cwd)),
            ("`pwd`", Some(cwd)),
        ] {
            if let Some(rest) = word.strip_prefix(prefix) {
                return Some((Some(place?.to_owned()), rest.trim_start_matches(['/', '\\'])));
            }
        }
        if word.starts_with('`') {
            return None;
        }
        let Some(after) = word.strip_prefix('$') else { return Some((None, word)) };
        // `$NAME`, `${NAME}`, `${NAME:?…}`, `${NAME:-…}`, `${NAME%/}`.
        let identifier = |text: &str| {
            text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len())
        };
        let (name, rest) = if let Some(braced) = after.strip_prefix('{') {
            let close = braced.find('}')?;
            (&braced[..identifier(&braced[..close])], &braced[close + 1..])
        } else {
            let end = identifier(after);
            (&after[..end], &after[end..])
        };
        let place = match name {
            "HOME" | "USERPROFILE" => home,
            "PWD" => cwd,
            "TMPDIR" | "TMP" | "TEMP" => tmp,
            "CLAUDE_PROJECT_DIR" => self.root.as_deref()?,
            // Another variable: what its name says it holds, when it says (`$tmpdir`,
            // `${BUILD_DIR:?}`, `$OUT_DIR`), one entry of that place.
            _ => {
                let says = |words: &[&str]| {
                    name.split('_').any(|w| words.iter().any(|x| w.eq_ignore_ascii_case(x)))
                };
                let place = if says(&["tmp", "temp", "tmpdir", "tempdir", "scratch"]) {
                    tmp
                } else if says(&["build", "dist", "out", "output", "cache", "artifacts"]) {
                    SOME_BUILD
                } else {
                    return None;
                };
                if !(rest.is_empty() || rest.starts_with(['/', '\\'])) {
                    return None;
                }
                return Some((Some(format!("{place}/*?")), rest.trim_start_matches(['/', '\\'])));
            }
        };
        // `$HOMEx` is another variable; `$HOME/x` and `$HOME` are the home.
        if !(rest.is_empty() || rest.starts_with(['/', '\\'])) {
            return None;
        }
        Some((Some(place.to_owned()), rest.trim_start_matches(['/', '\\'])))
    }

    /// The class of `word`, and the path it was judged as (`None`: known only at run time).
    pub fn classify(&self, word: &str) -> (Class, Option<Resolved>) {
        let Some(resolved) = self.resolve(word) else { return (Class::Unknown, None) };
        (self.class_of(&resolved), Some(resolved))
    }

    /// The class of a resolved path: by its names first (a secret, `.git`), then by where it
    /// is, the narrowest place first.
    pub fn class_of(&self, resolved: &Resolved) -> Class {
        let Resolved { path, part, names } = resolved;
        let (path, part) = (path.as_str(), *part);
        if names.iter().any(|n| is_credential(n)) {
            return Class::Credentials;
        }
        if names.iter().any(|n| n == ".git") {
            return Class::Git;
        }
        if path == "/" {
            return if part == Part::Some { Class::System } else { Class::Root };
        }
        let home = self.home.as_deref();
        // A project at or above the home is the user's own folder, not a project to judge by.
        let root = self.root.as_deref().filter(|root| {
            *root != "/" && !home.is_some_and(|home| home == *root || is_inside(home, root))
        });
        if let Some(root) = root {
            let built = names.last().is_some_and(|n| BUILT_ENDINGS.iter().any(|e| n.ends_with(e)));
            if path == root {
                return match part {
                    Part::Some if built => Class::BuildOutput,
                    Part::Some => Class::InProject,
                    Part::Itself | Part::Everything => Class::Project,
                };
            }
            if let Some(inner) = inside(path, root) {
                let in_build = built || inner.split('/').any(|c| BUILD_OUTPUT.contains(&c));
                return if in_build { Class::BuildOutput } else { Class::InProject };
            }
        }
        let is_home = |p: &str| {
            let undriven = without_drive(p);
            home == Some(p)
                || p == "/root"
                || p == SOME_HOME
                || HOMES.iter().any(|h| inside(undriven, h).is_some_and(|user| !user.contains('/')))
        };
        if HOMES.contains(&without_drive(path)) {
            return Class::Home;
        }
        if is_home(path) {
            return if part == Part::Some { Class::InHome } else { Class::Home };
        }
        if root.is_some_and(|root| is_inside(root, path)) {
            return Class::AboveProject;
        }
        let temp = TEMP.iter().copied().chain(self.tmp.as_deref()).any(|t| {
            inside(path, t).is_some() || (path == t.trim_end_matches('/') && part != Part::Itself)
        });
        if temp {
            return Class::Temp;
        }
        // What a tool makes again, below the first folder (`/tmp`, `/build` are not caches).
        let regenerable =
            path.split('/').skip(2).any(|c| BUILD_OUTPUT.contains(&c) || c == "Caches")
                || CACHES.iter().any(|c| path == *c || inside(path, c).is_some());
        if regenerable {
            return Class::Cache;
        }
        let mut folder = path;
        while let Some((parent, _)) = folder.rsplit_once('/') {
            if parent.is_empty() {
                break;
            }
            if is_home(parent) {
                return Class::InHome;
            }
            folder = parent;
        }
        // `C:/Windows` as `/Windows`; a drive's root is the root.
        let rest = without_drive(path);
        let mut components = rest.trim_start_matches('/').split('/');
        let first = components.next().unwrap_or("");
        let deeper = components.next().is_some();
        if first.is_empty() {
            return if part == Part::Some { Class::System } else { Class::Root };
        }
        if SYSTEM.iter().any(|s| s.eq_ignore_ascii_case(first)) {
            return if deeper || part == Part::Some { Class::InSystem } else { Class::System };
        }
        if path.starts_with(SOME_CWD) {
            return Class::Unknown;
        }
        if path.starts_with(SOME_BUILD) {
            return Class::BuildOutput;
        }
        Class::Outside
    }
}

/// `path` without its drive (`C:/Users/me` is `/Users/me`), as it is when it has none.
fn without_drive(path: &str) -> &str {
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        &path[2..]
    } else {
        path
    }
}

/// Whether a component is a secret's name (ASCII lowercase).
#[allow(clippy::case_sensitive_file_extension_comparisons, reason = "names come lowercase")]
fn is_credential(name: &str) -> bool {
    if CREDENTIAL_NAMES.contains(&name) {
        return true;
    }
    // `.env`, `.env.local`, `prod.env`; not the examples committed beside them.
    let env = name == ".env" || name.starts_with(".env.") || name.ends_with(".env");
    let example = name.rsplit_once('.').is_some_and(|(_, last)| {
        matches!(last, "example" | "sample" | "template" | "dist" | "defaults")
    });
    if env && !example {
        return true;
    }
    // `id_rsa.pub` is public; `server.key`, `cert.pem` are not.
    CREDENTIAL_ENDINGS.iter().any(|e| name.ends_with(e) && name.len() > e.len())
        || (name.starts_with("id_")
            && !name.ends_with(".pub")
            && name.len() > 3
            && !name.contains('.'))
}

/// Whether a component is a glob or is known only at run time.
fn is_open(component: &str) -> bool {
    component.contains(['*', '?', '[', '$', '`'])
}

/// Whether a component stands for every entry of its folder.
fn is_everything(component: &str) -> bool {
    matches!(component, "*" | ".*" | ".[!.]*" | ".??*" | "{*,.*}" | "{.*,*}" | "**")
}

/// `path` below `folder`, as the rest of it (`None`: not inside, or the folder itself).
fn inside<'p>(path: &'p str, folder: &str) -> Option<&'p str> {
    let folder = folder.trim_end_matches('/');
    let rest = path.strip_prefix(folder)?.strip_prefix('/')?;
    (!rest.is_empty()).then_some(rest)
}

/// Whether `path` is strictly below `folder`.
pub(crate) fn is_inside(path: &str, folder: &str) -> bool {
    if folder == "/" {
        return path != "/";
    }
    inside(path, folder).is_some()
}

/// Whether `path` is absolute: from `/`, or a drive's (`C:\`, `C:/`).
pub fn is_absolute(path: &str) -> bool {
    let bytes = path.as_bytes();
    matches!(bytes.first(), Some(b'/' | b'\\'))
        || (bytes.len() >= 3
            && bytes[0].is_ascii_alphabetic()
            && bytes[1] == b':'
            && matches!(bytes[2], b'/' | b'\\'))
}

/// `path` with `/` separators and its components resolved as text: empty and `.` ones dropped,
/// a `..` removing the component before it (at the root of an absolute path there is none to
/// remove; a relative path keeps its leading ones).
pub fn normalize(path: &str) -> String {
    let path = path.replace('\\', "/");
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." && !(parts.len() == 1 && is_drive(last)) => {
                    parts.pop();
                }
                Some(_) if !absolute && !parts.first().is_some_and(|p| is_drive(p)) => {
                    parts.push("..");
                }
                None if !absolute => parts.push(".."),
                _ => {}
            },
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    if absolute { format!("/{joined}") } else { joined }
}

/// Whether a first component names a drive (`C:`).
fn is_drive(part: &str) -> bool {
    part.len() == 2 && part.as_bytes()[0].is_ascii_alphabetic() && part.as_bytes()[1] == b':'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(cwd: &str, root: &str) -> Places {
        Places::new(Some(cwd), Some(root), Some("/home/me"), None)
    }

    fn check(places: &Places, cases: &[(&str, Class)]) {
        for &(word, class) in cases {
            assert_eq!(places.classify(word).0, class, "{word} ({places:?})");
        }
    }

    #[test]
    fn the_root_the_system_and_temporary_folders() {
        let places = at("/home/me/src/app", "/home/me/src/app");
        check(
            &places,
            &[
                ("/", Class::Root),
                ("//", Class::Root),
                ("/*", Class::Root),
                ("/.", Class::Root),
                ("/$DIR", Class::System),
                ("/etc", Class::System),
                ("/etc/*", Class::System),
                ("/usr/*", Class::System),
                ("/etc/nginx/", Class::InSystem),
                ("/var/log", Class::InSystem),
                ("/usr/lib", Class::InSystem),
                ("/usr/$LIB", Class::InSystem),
                ("/usr/local/go", Class::InSystem),
                ("/Library/Caches", Class::Cache),
                ("/var/cache/apt", Class::Cache),
                ("/var/lib/apt/lists/*", Class::Cache),
                ("/tmp", Class::System),
                ("/tmp/*", Class::Temp),
                ("/tmp/build-123", Class::Temp),
                ("/tmp/$RUN", Class::Temp),
                ("/tmp/*.log", Class::Temp),
                ("/var/tmp/x", Class::Temp),
                ("/tmp/../etc", Class::System),
                ("/tmp/*/../../etc", Class::System),
                ("/tmp/$X/../x", Class::Temp),
                ("$TMPDIR/x", Class::Temp),
                ("${TMPDIR:-/tmp}/x", Class::Temp),
                ("$TMPDIR/../etc", Class::System),
                ("/data/backups", Class::Outside),
                ("/srv2/x", Class::Outside),
                ("C:\\Windows", Class::System),
                ("C:\\Windows\\System32", Class::InSystem),
                ("C:/", Class::Root),
            ],
        );
    }

    #[test]
    fn homes_and_what_is_in_them() {
        let places = at("/home/me/src/app", "/home/me/src/app");
        check(
            &places,
            &[
                ("~", Class::Home),
                ("~/", Class::Home),
                ("~/*", Class::Home),
                ("~/.*", Class::Home),
                ("$HOME", Class::Home),
                ("${HOME}", Class::Home),
                ("${HOME:?}/", Class::Home),
                ("/home/me", Class::Home),
                ("/home/me/", Class::Home),
                ("/home/other", Class::Home),
                ("/Users/bob/", Class::Home),
                ("C:\\Users\\bob", Class::Home),
                ("C:/Users/bob/Documents", Class::InHome),
                ("/home", Class::Home),
                ("/home/*", Class::Home),
                ("/root", Class::Home),
                ("~bob", Class::Home),
                ("~/Documents", Class::InHome),
                ("$HOME/projects/old", Class::InHome),
                ("/home/other/x", Class::InHome),
                ("~/$DIR", Class::InHome),
                ("~bob/notes", Class::InHome),
                ("../other-project", Class::InHome),
                ("../other-project/target", Class::Cache),
                ("~/.cache/pip", Class::Cache),
                ("/Users/bob/Library/Caches/pip", Class::Cache),
                ("/home/alice/projects/demo/node_modules", Class::Cache),
            ],
        );
    }

    #[test]
    fn secrets_and_git_by_their_names() {
        let places = at("/home/me/src/app", "/home/me/src/app");
        check(
            &places,
            &[
                ("~/.ssh", Class::Credentials),
                ("~/.ssh/id_ed25519", Class::Credentials),
                ("/home/me/.aws/credentials", Class::Credentials),
                (".env", Class::Credentials),
                ("config/.env.production", Class::Credentials),
                ("certs/server.key", Class::Credentials),
                ("~/.kube", Class::Credentials),
                (".env.example", Class::InProject),
                ("id_rsa.pub", Class::InProject),
                ("docs/keys.md", Class::InProject),
                (".git", Class::Git),
                ("./.git/", Class::Git),
                ("/home/me/src/app/.git/hooks", Class::Git),
                ("../other/.git", Class::Git),
                (".github", Class::InProject),
                (".gitignore", Class::InProject),
                ("~/.ssh/../notes", Class::InHome),
            ],
        );
    }

    #[test]
    fn the_project_its_build_output_and_the_folders_above_it() {
        let places = at("/home/me/src/app", "/home/me/src/app");
        check(
            &places,
            &[
                (".", Class::Project),
                ("./", Class::Project),
                ("*", Class::Project),
                ("./*", Class::Project),
                (".[!.]*", Class::Project),
                ("$PWD", Class::Project),
                ("$(pwd)/*", Class::Project),
                ("$CLAUDE_PROJECT_DIR", Class::Project),
                ("${CLAUDE_PROJECT_DIR}/", Class::Project),
                ("$(git rev-parse --show-toplevel)", Class::Project),
                ("/home/me/src/app", Class::Project),
                ("..", Class::AboveProject),
                ("../", Class::AboveProject),
                ("../..", Class::Home),
                ("../*", Class::AboveProject),
                ("/home/me/src", Class::AboveProject),
                ("target", Class::BuildOutput),
                ("./node_modules", Class::BuildOutput),
                ("frontend/dist/assets", Class::BuildOutput),
                ("**/__pycache__", Class::InProject),
                ("target/../src", Class::InProject),
                ("src", Class::InProject),
                ("src/*.rs", Class::InProject),
                ("*.egg-info", Class::BuildOutput),
                ("app.log", Class::BuildOutput),
                ("./$BUILD", Class::InProject),
                ("$FOO", Class::Unknown),
                ("$(mktemp -d)", Class::Unknown),
                ("${BUILD_DIR}/x", Class::BuildOutput),
                ("${BUILD_DIR:?}/*", Class::BuildOutput),
                ("$OUT_DIR", Class::BuildOutput),
                ("$tmpdir", Class::Temp),
                ("${SCRATCH_DIR}/run", Class::Temp),
                ("$ROUTE", Class::Unknown),
                ("$HOMEBREW_PREFIX/x", Class::Unknown),
                ("`which rm`", Class::Unknown),
            ],
        );
        // From a folder of the project.
        let below = at("/home/me/src/app/src", "/home/me/src/app");
        check(
            &below,
            &[
                ("*", Class::InProject),
                ("..", Class::Project),
                ("../*", Class::Project),
                ("../..", Class::AboveProject),
                ("../../..", Class::Home),
                ("../target", Class::BuildOutput),
            ],
        );
    }

    #[test]
    fn cd_moves_the_working_folder() {
        let places = at("/home/me/src/app", "/home/me/src/app");
        assert_eq!(places.cd(Some("/tmp")).classify("x").0, Class::Temp);
        assert_eq!(places.cd(Some("/")).classify("*").0, Class::Root);
        assert_eq!(places.cd(Some("target")).classify("*").0, Class::BuildOutput);
        assert_eq!(places.cd(Some("..")).classify("app").0, Class::Project);
        assert_eq!(places.cd(None).classify("*").0, Class::Home);
        assert_eq!(places.cd(Some("$(mktemp -d)")).classify("x").0, Class::Unknown);
        assert_eq!(places.cd(Some("-")).classify("/etc").0, Class::System);
        assert_eq!(places.cd(Some("-")).classify("x").0, Class::Unknown);
    }

    #[test]
    fn a_project_at_the_home_is_judged_as_the_home() {
        let at_home = at("/home/me", "/home/me");
        check(&at_home, &[(".", Class::Home), ("src", Class::InHome), ("*", Class::Home)]);
        let everywhere = at("/", "/");
        check(&everywhere, &[("etc", Class::System), ("*", Class::Root)]);
    }

    #[test]
    fn without_places_the_shapes_still_tell() {
        let none = Places::default();
        check(
            &none,
            &[
                ("~", Class::Home),
                ("~/x", Class::InHome),
                ("/etc", Class::System),
                ("/home/bob", Class::Home),
                ("foo", Class::Unknown),
                ("$CLAUDE_PROJECT_DIR", Class::Unknown),
            ],
        );
    }

    #[test]
    fn every_class_has_a_name_read_back() {
        for class in Class::ALL {
            assert_eq!(Class::from_name(class.name()), Some(class));
            assert!(!class.describe().is_empty());
        }
        assert_eq!(Class::from_name("homes"), None);
    }

    #[test]
    fn paths_normalize_as_text() {
        assert_eq!(normalize("/a//b/./c/../d"), "/a/b/d");
        assert_eq!(normalize("../../x/./y"), "../../x/y");
        assert_eq!(normalize("/../.."), "/");
        assert_eq!(normalize("C:\\work\\..\\..\\n"), "C:/n");
    }
}
