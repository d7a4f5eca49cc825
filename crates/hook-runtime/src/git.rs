//! The project's repository, read as git lays it out on disk: no git process, small bounded
//! reads. [`current_branch`] reads the branch from `.git/HEAD`, only for rules that ask
//! (`branch`, `{branch}`, `{issue}`); [`Repository`] is what "inside the repository" means
//! wherever hookpack refuses a repository's files (reference §5). And the one way hookpack
//! starts a git process ([`command`]).

use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use hook_engine::bounded::{read_regular, read_regular_not_following};
use hook_engine::text::hides_text;

use crate::{Env, PROJECT_SUBDIR};

/// The most bytes of `.git` (a file, in a worktree or submodule) and of `HEAD` read.
const MAX_HEAD_BYTES: u64 = 4096;

/// The most folders looked up from the start for `.git`.
const MAX_DEPTH: usize = 64;

/// The branch checked out in the repository `start` is in, found as git finds it (the first
/// `.git` from `start` up): `Some("feature/42-login")` when `HEAD` names a branch, `None` when
/// it is detached, there is no repository, or anything read is not as git writes it. A
/// worktree's (or a submodule's) `.git` file sends the reading to the `HEAD` of the folder it
/// names, when that is the folder's own or a `.git/worktrees/<name>` or `.git/modules/<name>`
/// folder; a `HEAD` that is a symbolic link is not read.
pub fn current_branch(start: &Path) -> Option<String> {
    let (dot_git, meta) = dot_git_above(start)?;
    let git_dir = if meta.is_dir() {
        dot_git
    } else if meta.is_file() {
        linked(&dot_git)?.git_dir
    } else {
        return None;
    };
    branch_of(&read_regular_not_following(&git_dir.join("HEAD"), MAX_HEAD_BYTES).ok()?)
}

/// The first `.git` (a folder, a file or anything else) in `start` or a folder above it.
fn dot_git_above(start: &Path) -> Option<(PathBuf, std::fs::Metadata)> {
    start.ancestors().take(MAX_DEPTH).find_map(|dir| {
        let dot_git = dir.join(".git");
        std::fs::symlink_metadata(&dot_git).ok().map(|meta| (dot_git, meta))
    })
}

/// Where a `.git` file leads.
struct Linked {
    /// The folder its `gitdir:` line names, links resolved.
    git_dir: PathBuf,
    /// The top level of the repository whose `.git/worktrees/<name>` or `.git/modules/<name>`
    /// that is (the main worktree of a worktree, the superproject of a submodule).
    main: Option<PathBuf>,
}

/// Where the `.git` file `dot_git` leads (`gitdir: <path>`, relative to its folder when not
/// absolute), when git could have written it: to a folder of the file's own folder, or to
/// `<repository>/.git/worktrees/<name>` or `<repository>/.git/modules/<name>…`. Anything else
/// (a folder of another repository, of the user's) is not followed.
fn linked(dot_git: &Path) -> Option<Linked> {
    let top = std::fs::canonicalize(dot_git.parent()?).ok()?;
    let bytes = read_regular(dot_git, MAX_HEAD_BYTES).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let path = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if path.is_empty() {
        return None;
    }
    let git_dir = std::fs::canonicalize(top.join(path)).ok()?;
    if git_dir.starts_with(&top) {
        return Some(Linked { git_dir, main: None });
    }
    let main = git_dir.ancestors().take(MAX_DEPTH).find_map(|dir| {
        let rest: Vec<Component<'_>> = git_dir.strip_prefix(dir).ok()?.components().collect();
        let shaped = match rest.first()?.as_os_str().to_str()? {
            "worktrees" => rest.len() == 2,
            "modules" => rest.len() >= 2,
            _ => false,
        };
        (dir.file_name()? == ".git" && shaped).then(|| dir.parent().map(Path::to_path_buf))?
    })?;
    Some(Linked { git_dir, main: Some(main) })
}

/// The folders a repository holding a project owns, with their links resolved: the project
/// itself, the outermost folder above it that is a project too (holding `.claude/hookpack/`,
/// the home folder and those above it not counted), the repository's top level (the first
/// folder from the project up holding `.git`, a folder or a file) and, when that `.git` is a
/// file leading to `<main>/.git/worktrees/<name>` (a `git worktree`, Claude Code's
/// `.claude/worktrees/<name>` among them) or `<main>/.git/modules/<name>` (a submodule),
/// `<main>` too. Every file under them may be the
/// repository's: hookpack runs none of them, writes nowhere they lead and follows no link out
/// of them (reference §5). Found without a git process, in bounded reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Repository {
    roots: Vec<PathBuf>,
}

impl Repository {
    /// The repository holding `project` (only the project, where there is none).
    pub fn of(project: &Path) -> Repository {
        Repository::below_home(project, Env::from_process().home.as_deref())
    }

    /// [`Repository::of`], with the user's home folder `home`: neither a repository whose top
    /// level is the home folder or above it (a dotfiles repository: the user's own, and where
    /// hookpack's own binaries and folders are) nor a project there counts.
    fn below_home(project: &Path, home: Option<&Path>) -> Repository {
        let mut roots = Vec::new();
        let Ok(project) = std::fs::canonicalize(project) else { return Repository { roots } };
        let home = home.and_then(|home| std::fs::canonicalize(home).ok());
        let below_home = |dir: &Path| home.as_ref().is_none_or(|home| !home.starts_with(dir));
        if let Some((dot_git, meta)) = dot_git_above(&project) {
            let top = dot_git.parent().map(Path::to_path_buf);
            let main = meta.is_file().then(|| linked(&dot_git)).flatten().and_then(|l| l.main);
            roots.extend(top.into_iter().chain(main).filter(|root| below_home(root)));
        }
        // The outermost project holding this one (an archive holds both), short of the home
        // folder.
        let outer = project
            .ancestors()
            .take(MAX_DEPTH)
            .take_while(|dir| below_home(dir))
            .filter(|dir| dir.join(PROJECT_SUBDIR).is_dir())
            .last()
            .map(Path::to_path_buf);
        for root in outer.into_iter().chain([project]) {
            if !roots.iter().any(|known| root.starts_with(known)) {
                roots.push(root);
            }
        }
        Repository { roots }
    }

    /// Its folders, links resolved.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether `path`, its links resolved (as far as it exists), is in one of its folders.
    pub fn contains(&self, path: &Path) -> bool {
        resolved(path).is_some_and(|real| self.roots.iter().any(|root| real.starts_with(root)))
    }
}

/// `path` with its links resolved: the longest part of it that exists canonicalized, a link
/// that leads nowhere (yet) followed all the same, the rest added as written (`..` taking a
/// folder off). `None` when it cannot be told (links in a loop, or more than 40 of them).
pub fn resolved(path: &Path) -> Option<PathBuf> {
    let mut path = std::path::absolute(path).ok()?;
    for _ in 0..40 {
        let (real, missing) = path.ancestors().find_map(|dir| {
            let real = std::fs::canonicalize(dir).ok()?;
            Some((real, path.strip_prefix(dir).ok()?.to_path_buf()))
        })?;
        let mut parts = missing.components();
        let Some(first) = parts.next() else { return Some(real) };
        let link = real.join(first);
        if std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()) {
            path = real.join(std::fs::read_link(&link).ok()?).join(parts.as_path());
            continue;
        }
        let mut real = real;
        for part in missing.components() {
            match part {
                Component::ParentDir => {
                    real.pop();
                }
                Component::Normal(name) => real.push(name),
                _ => {}
            }
        }
        return Some(real);
    }
    None
}

/// The branch a `HEAD` file names: `ref: refs/heads/<branch>` on one line.
fn branch_of(bytes: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.lines();
    let branch = lines.next()?.strip_prefix("ref:")?.trim().strip_prefix("refs/heads/")?;
    // A name git accepts (`git check-ref-format`, in short): no control characters, spaces or
    // `~^:?*[\`, no `..` or `@{`, no part starting with `.` or ending in `.lock` (a reftable
    // repository's `HEAD` names `.invalid`). Nor, since the name goes into the model's context,
    // a bidirectional control, which would show the text around it in another order.
    let valid = !branch.is_empty()
        && branch.len() <= 255
        && !branch.chars().any(|c| c.is_control() || hides_text(c) || " ~^:?*[\\".contains(c))
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

/// The configuration every git process hookpack starts runs with, after the repository's own:
/// hookpack needs git's plumbing, never a program the repository's `.git/config` names (a
/// repository unpacked from elsewhere brings its `.git/config` along). No hooks, no
/// fsmonitor, no `ext::` transport (a remote helper runs a command) nor any transport but
/// `file`, `https`, `ssh` and `git`, no askpass program but the user's `$GIT_ASKPASS` (and no
/// prompt on a terminal: `GIT_TERMINAL_PROMPT` is 0), no signed commits, and credential helpers
/// reset (the user's global ones are added back by [`command`]); alternates are not listed by a
/// command.
pub const SAFE_CONFIG: [&str; 13] = [
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.askPass=",
    "core.alternateRefsCommand=true",
    "commit.gpgSign=false",
    "protocol.allow=never",
    "protocol.file.allow=always",
    "protocol.https.allow=always",
    "protocol.ssh.allow=always",
    "protocol.git.allow=always",
    "protocol.ext.allow=never",
    "protocol.fd.allow=never",
    "credential.helper=",
];

/// Git in `dir`, as hookpack runs it: with [`SAFE_CONFIG`] after the repository's config, the
/// system's config not read (`GIT_CONFIG_NOSYSTEM`), no pager, no editor, no prompt on a
/// terminal, and stdin, stdout and stderr to be set by the caller (stdin `/dev/null`).
///
/// What git runs to reach a remote is taken from the user, never from the repository: the ssh
/// command is `$GIT_SSH_COMMAND`, else `$GIT_SSH`, else the user's global `core.sshCommand`,
/// else `ssh`; credential helpers are the user's global ones (`credential.helper` and
/// `credential.<url>.helper`, in their order); a proxy for `git://` only `$GIT_PROXY_COMMAND`.
/// A remote's upload and receive programs (`remote.<name>.uploadpack`, `receivepack`) are the
/// callers' to override on the command line (`--upload-pack`, `--receive-pack`).
pub fn command(dir: &Path) -> Command {
    let mut command = with_hooks(dir);
    command.args(["-c", SAFE_CONFIG[0]]);
    command
}

/// [`command`], with the repository's hooks: only for what stands in for a command Claude Code
/// itself runs with them (the `WorktreeCreate` hook's `git worktree add`, whose
/// `post-checkout` hook users rely on to set a worktree up).
pub fn with_hooks(dir: &Path) -> Command {
    let mut command = Command::new("git");
    command.arg("-C").arg(dir);
    for setting in &SAFE_CONFIG[1..] {
        command.args(["-c", setting]);
    }
    let user = users_config();
    for setting in &user.helpers {
        command.args(["-c", setting]);
    }
    command
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("GIT_EDITOR", ":")
        .env("GIT_SSH_COMMAND", &user.ssh)
        .env("GIT_PROXY_COMMAND", std::env::var_os("GIT_PROXY_COMMAND").unwrap_or_default())
        .stdin(Stdio::null());
    command
}

/// What git reaches remotes with, as the user set it.
struct UsersConfig {
    /// The ssh command.
    ssh: String,
    /// `key=value` of each global credential helper setting, in order.
    helpers: Vec<String>,
}

/// [`UsersConfig`], read once: `git config --global` (the user's `~/.gitconfig` and
/// `$XDG_CONFIG_HOME/git/config`), run outside any repository.
fn users_config() -> &'static UsersConfig {
    static USERS: OnceLock<UsersConfig> = OnceLock::new();
    USERS.get_or_init(|| {
        let listed = Command::new("git")
            .current_dir("/")
            .args(["config", "--global", "--null", "--get-regexp"])
            .arg(r"^(credential\..*helper|core\.sshcommand)$")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map(|out| out.stdout)
            .unwrap_or_default();
        let var = |name: &str| std::env::var(name).ok();
        UsersConfig::read(&listed, var("GIT_SSH_COMMAND"), var("GIT_SSH"))
    })
}

impl UsersConfig {
    /// From what `git config --global --null --get-regexp` listed, and `$GIT_SSH_COMMAND` and
    /// `$GIT_SSH`.
    fn read(listed: &[u8], ssh_command: Option<String>, ssh_program: Option<String>) -> Self {
        let mut ssh = None;
        let mut helpers = Vec::new();
        // `--null`: each entry is the key, a newline, the value, then a NUL.
        for entry in String::from_utf8_lossy(listed).split('\0').filter(|e| !e.is_empty()) {
            let (key, value) = entry.split_once('\n').unwrap_or((entry, ""));
            if key.eq_ignore_ascii_case("core.sshcommand") {
                ssh = Some(value.to_owned());
            } else {
                helpers.push(format!("{key}={value}"));
            }
        }
        let ssh = ssh_command
            .or_else(|| ssh_program.map(|program| shell_quoted(&program)))
            .or(ssh)
            .unwrap_or_else(|| "ssh".to_owned());
        UsersConfig { ssh, helpers }
    }
}

/// `text` quoted for `sh`.
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn git_runs_with_the_safe_configuration_and_the_users_own_ways_to_remotes() {
        let command = command(Path::new("/p"));
        let args: Vec<String> =
            command.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        for setting in SAFE_CONFIG {
            let at = args.iter().position(|a| a == setting).unwrap();
            assert_eq!(args[at - 1], "-c", "{setting}");
        }
        let env = |name: &str| {
            command
                .get_envs()
                .find(|(k, _)| *k == name)
                .and_then(|(_, v)| v)
                .map(std::borrow::ToOwned::to_owned)
        };
        assert_eq!(env("GIT_CONFIG_NOSYSTEM").unwrap(), "1");
        assert_eq!(env("GIT_TERMINAL_PROMPT").unwrap(), "0");
        assert!(env("GIT_SSH_COMMAND").is_some());
        let hooks = with_hooks(Path::new("/p"));
        assert!(!hooks.get_args().any(|a| a == SAFE_CONFIG[0]));

        // The global helpers come back in their order, empty resets included; the ssh command
        // is the environment's, else the global one, else `ssh`.
        let listed = b"credential.helper\n\0credential.https://github.com.helper\n!gh auth \
                       git-credential\0core.sshcommand\nssh -i ~/.ssh/work\0";
        let user = UsersConfig::read(listed, None, None);
        assert_eq!(
            user.helpers,
            ["credential.helper=", "credential.https://github.com.helper=!gh auth git-credential"]
        );
        assert_eq!(user.ssh, "ssh -i ~/.ssh/work");
        assert_eq!(UsersConfig::read(b"", None, None).ssh, "ssh");
        assert_eq!(
            UsersConfig::read(listed, None, Some("/opt/it's/plink".into())).ssh,
            r"'/opt/it'\''s/plink'"
        );
        assert_eq!(UsersConfig::read(listed, Some("ssh -v".into()), None).ssh, "ssh -v");
    }

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
    fn a_branch_name_with_bidi_controls_is_refused() {
        for head in [
            "ref: refs/heads/fix\u{202E}txt.exe\n",
            "ref: refs/heads/a\u{2066}b\u{2069}\n",
            "ref: refs/heads/\u{200F}main\n",
            "ref: refs/heads/main\u{061C}\n",
        ] {
            let head = head.as_bytes();
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

    /// A scratch folder of its own for a test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hookpack-git-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_linked_head_is_not_followed() {
        let dir = scratch("linked-head");
        let repo = dir.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(dir.join("elsewhere"), "ref: refs/heads/secret-branch\n").unwrap();
        std::os::unix::fs::symlink(dir.join("elsewhere"), repo.join(".git/HEAD")).unwrap();
        assert_eq!(current_branch(&repo), None);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_git_file_into_another_repository_is_not_followed() {
        let dir = scratch("gitdir-out");
        // The user's other repository, outside the cloned one.
        let other = dir.join("private/.git");
        std::fs::create_dir_all(&other).unwrap();
        std::fs::write(other.join("HEAD"), "ref: refs/heads/secret-branch\n").unwrap();
        let repo = dir.join("clone");
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join(".git"), "gitdir: ../private/.git\n").unwrap();
        assert_eq!(current_branch(&repo), None);
        // A folder of a repository's `.git` that is no worktree's or submodule's either.
        std::fs::create_dir_all(other.join("refs/x")).unwrap();
        std::fs::write(other.join("refs/x/HEAD"), "ref: refs/heads/secret-branch\n").unwrap();
        std::fs::write(repo.join(".git"), "gitdir: ../private/.git/refs/x\n").unwrap();
        assert_eq!(current_branch(&repo), None);
        // A worktree's and a submodule's folders are followed.
        for (folder, branch) in [("worktrees/wt", "wt-branch"), ("modules/lib/sub", "sub-branch")] {
            std::fs::create_dir_all(other.join(folder)).unwrap();
            let head = format!("ref: refs/heads/{branch}\n");
            std::fs::write(other.join(folder).join("HEAD"), head).unwrap();
            std::fs::write(repo.join(".git"), format!("gitdir: ../private/.git/{folder}\n"))
                .unwrap();
            assert_eq!(current_branch(&repo).as_deref(), Some(branch));
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_repository_of_a_project_in_a_subfolder_or_a_worktree() {
        let dir = scratch("repository");
        let main = dir.join("main");
        std::fs::create_dir_all(main.join(".git/worktrees/feature")).unwrap();
        std::fs::create_dir_all(main.join("sub/project")).unwrap();
        let real = |p: &Path| std::fs::canonicalize(p).unwrap();
        // A project in a subfolder: the repository is the top level.
        let repo = Repository::of(&main.join("sub/project"));
        assert_eq!(repo.roots(), [real(&main)]);
        assert!(repo.contains(&main.join("sub/project/../../tools/hookpack-stop")));
        assert!(repo.contains(&main.join("tools/not-there-yet")));
        assert!(!repo.contains(&dir.join("bin/hookpack-stop")));
        // Claude Code's worktree inside the repository, and a `git worktree` beside it.
        let claude = main.join(".claude/worktrees/feature");
        let beside = dir.join("feature");
        for worktree in [&claude, &beside] {
            std::fs::create_dir_all(worktree).unwrap();
            let gitdir = format!("gitdir: {}\n", main.join(".git/worktrees/feature").display());
            std::fs::write(worktree.join(".git"), gitdir).unwrap();
            let repo = Repository::of(worktree);
            assert!(repo.contains(&main.join("tools/hookpack-stop")), "{repo:?}");
            assert!(repo.contains(&worktree.join("x")), "{repo:?}");
            assert!(!repo.contains(&dir.join("bin/hookpack-stop")), "{repo:?}");
        }
        // A link out of the repository is followed to where it leads.
        std::os::unix::fs::symlink(dir.join("bin"), main.join("out")).unwrap();
        std::fs::create_dir_all(dir.join("bin")).unwrap();
        assert!(!repo.contains(&main.join("out/hookpack-stop")));
        std::os::unix::fs::symlink(main.join("tools"), dir.join("in")).unwrap();
        assert!(repo.contains(&dir.join("in/hookpack-stop")));
        // No repository: the project alone.
        std::fs::create_dir_all(dir.join("plain")).unwrap();
        assert_eq!(Repository::of(&dir.join("plain")).roots().len(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_project_below_another_project_is_inside_that_one() {
        // No git: an unpacked archive holding a project, and another one below it.
        let dir = scratch("nested-projects");
        let outer = dir.join("outer");
        let inner = outer.join("packages/inner");
        std::fs::create_dir_all(outer.join(".claude/hookpack")).unwrap();
        std::fs::create_dir_all(inner.join(".claude/hookpack")).unwrap();
        let repo = Repository::of(&inner);
        assert!(repo.contains(&outer.join("tools/hookpack-stop")), "{repo:?}");
        assert!(!repo.contains(&dir.join("bin/hookpack-stop")), "{repo:?}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    /// A home folder that is a git repository (dotfiles) is the user's own: a project below it
    /// without a repository of its own does not take in the user's `~/.local/bin`.
    #[test]
    fn a_repository_at_the_home_folder_is_the_users_own() {
        let home = scratch("dotfiles-home");
        std::fs::create_dir_all(home.join(".git")).unwrap();
        let project = home.join("work/project");
        std::fs::create_dir_all(project.join(".claude/hookpack")).unwrap();
        let repo = Repository::below_home(&project, Some(&home));
        assert!(!repo.contains(&home.join(".local/bin/hookpack-stop")), "{repo:?}");
        assert!(repo.contains(&project.join("tools/hookpack-stop")), "{repo:?}");
        // Without a home folder known, the repository is the home's.
        let repo = Repository::below_home(&project, None);
        assert!(repo.contains(&home.join(".local/bin/hookpack-stop")), "{repo:?}");
        std::fs::remove_dir_all(home).unwrap();
    }
}
