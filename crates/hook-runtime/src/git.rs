//! The project's current git branch, read from `.git/HEAD` as git writes it: no git process,
//! two small bounded reads, and only for rules that ask (`branch`, `{branch}`, `{issue}`). And
//! the one way hookpack starts a git process ([`command`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

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
