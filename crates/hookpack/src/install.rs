//! `hookpack install` and `uninstall`: the hook entries the compiled rules need, merged into
//! Claude Code's settings (project, local or user), and taken out again.
//!
//! The file is edited as text ([`crate::wiring::rewire`]): what is not hookpack's keeps its
//! bytes. Each install leaves a receipt in hookpack's state folder, the file as it was before
//! hookpack first touched it and as hookpack last wrote it; `uninstall` puts the first back
//! when the file is still the second, and otherwise takes hookpack's handlers out of it. A
//! receipt names the file it describes and carries a digest keyed with the user's own secret
//! ([`crate::receipt_key`]): one a repository committed is ignored, with a warning.

use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use hook_engine::layout;
use hook_model::EventKind;
use hook_runtime::Installation;
use hook_runtime::confined::{Confined, ConfinedDir};
use hook_runtime::git::Repository;
use rules_compiler::Layout;
use serde_json::json;

use crate::commands::installation;
use crate::receipt_key;
use crate::wiring::{self, Wanted};

/// The largest settings file read.
const MAX_SETTINGS_BYTES: u64 = 4 << 20;

/// Which settings file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scope {
    /// `<project>/.claude/settings.json`, committed: every user of the project gets the hooks.
    Project,
    /// `<project>/.claude/settings.local.json`: this user, this project.
    Local,
    /// `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`): this user, every project.
    User,
}

impl Scope {
    fn name(self) -> &'static str {
        match self {
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::User => "user",
        }
    }
}

/// A settings file and the folder it is written in.
#[derive(Debug)]
pub(crate) struct SettingsFile {
    /// Where it is, as the user knows it.
    pub(crate) path: PathBuf,
    /// The folder it is written in (checked for links below the project) and its name there.
    dir: ConfinedDir,
    name: String,
    /// The project, whose `.claude` is created (a real folder) when the file is written.
    project: Option<PathBuf>,
}

impl SettingsFile {
    /// The settings file of `scope` for `installation`.
    ///
    /// # Errors
    ///
    /// When a project's `.claude` is a link or not a folder, or there is no user folder.
    pub(crate) fn of(scope: Scope, installation: &Installation) -> anyhow::Result<SettingsFile> {
        match (scope, installation) {
            (Scope::Project | Scope::Local, Installation::Project { root, .. }) => {
                let name =
                    if scope == Scope::Local { "settings.local.json" } else { "settings.json" };
                // Checked, not created: looking (`doctor`, `--dry-run`) changes nothing.
                let dir = Confined::new(root, Path::new(""))
                    .existing_dir(".claude")?
                    .unwrap_or_else(|| ConfinedDir::trusting(&root.join(".claude")));
                let path = dir.path().join(name);
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    bail!(
                        "{} is a symbolic link; hookpack does not write a project's settings \
                         through one (a repository can point it anywhere)",
                        path.display()
                    );
                }
                Ok(SettingsFile { path, dir, name: name.to_owned(), project: Some(root.clone()) })
            }
            (Scope::User, _) => {
                let dir = claude_dir().context("no HOME: cannot find ~/.claude")?;
                let path = dir.join("settings.json");
                // The user's own file may be a link into their dotfiles: written where it points.
                let target =
                    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                        std::fs::canonicalize(&path)
                            .with_context(|| format!("following the link {}", path.display()))?
                    } else {
                        path.clone()
                    };
                let parent = target.parent().unwrap_or(Path::new("/")).to_path_buf();
                let name = target
                    .file_name()
                    .and_then(|n| n.to_str())
                    .context("the settings file has no name")?
                    .to_owned();
                Ok(SettingsFile { path, dir: ConfinedDir::trusting(&parent), name, project: None })
            }
            (_, Installation::User { .. }) => {
                bail!("--project and --local need a project")
            }
        }
    }

    /// Its text; `None` when there is no file.
    ///
    /// # Errors
    ///
    /// When it cannot be read, is not a regular file, is too large or is not UTF-8.
    pub(crate) fn read(&self) -> anyhow::Result<Option<String>> {
        let path = self.dir.path().join(&self.name);
        match hook_engine::bounded::read_regular(&path, MAX_SETTINGS_BYTES) {
            Ok(bytes) => Ok(Some(
                String::from_utf8(bytes)
                    .map_err(|_| anyhow::anyhow!("{} is not UTF-8", self.path.display()))?,
            )),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(err).with_context(|| format!("reading {}", self.path.display())),
        }
    }

    /// Replaces it with `text` (`None`: removes it), keeping its permissions.
    fn write(&self, text: Option<&str>) -> anyhow::Result<()> {
        let path = self.dir.path().join(&self.name);
        let Some(text) = text else {
            return self
                .dir
                .remove(&self.name)
                .with_context(|| format!("removing {}", path.display()));
        };
        let mode = std::fs::metadata(&path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
        let dir = match &self.project {
            Some(root) => Confined::new(root, Path::new("")).dir(".claude")?,
            None => {
                std::fs::create_dir_all(self.dir.path())
                    .with_context(|| format!("creating {}", self.dir.path().display()))?;
                self.dir.clone()
            }
        };
        dir.replace_with_mode(&self.name, text.as_bytes(), true, mode)
            .with_context(|| format!("writing {}", path.display()))
    }
}

/// Claude Code's user folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub(crate) fn claude_dir() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("CLAUDE_CONFIG_DIR").or_else(|| Some(var("HOME")?.join(".claude")))
}

/// Where the hook binaries are: `--hooks DIR`, else beside this `hookpack` (as `cargo xtask
/// install` puts them, and as cargo builds them), else in an absolute folder of `PATH`. Never
/// in the repository holding the project (`repository`): its programs are not hooks to wire
/// (`--hooks` there is refused, such a folder of `PATH` passed over).
pub(crate) fn hooks_dir(
    given: Option<&Path>,
    wanted: &[Wanted],
    repository: Option<&Repository>,
) -> anyhow::Result<PathBuf> {
    let probe = EventKind::PreToolUse.binary_name();
    let holds_all = |dir: &Path| {
        dir.join(probe).is_file() && wanted.iter().all(|w| dir.join(w.kind.binary_name()).is_file())
    };
    let inside = |dir: &Path| repository.is_some_and(|repository| repository.contains(dir));
    if let Some(dir) = given {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        if inside(&dir) {
            bail!(
                "{} is inside the repository that holds the project: its programs are the \
                 repository's, not hooks to wire (install the hooks with `cargo xtask install`)",
                dir.display()
            );
        }
        if !holds_all(&dir) {
            bail!(
                "{} does not hold a hookpack-<event> for every event the rules need",
                dir.display()
            );
        }
        return Ok(dir);
    }
    let beside = std::env::current_exe().ok().and_then(|exe| Some(exe.parent()?.to_path_buf()));
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default();
    beside
        .into_iter()
        .chain(on_path.into_iter().filter(|d| d.is_absolute() && !inside(d)))
        .find(|dir| holds_all(dir))
        .with_context(|| {
            format!(
                "no {probe} beside this hookpack or on PATH: install the hooks with `cargo xtask \
                 install` (or name their folder with --hooks DIR)"
            )
        })
}

/// The command that runs `binary` in `dir`: `"$HOME"/…` when under the home folder, so that
/// one settings file serves everyone who installed hookpack the same way (a project's is
/// committed), else the absolute path. Always a path, never a bare name: Claude Code runs
/// hooks with the `PATH` it was started with, which an editor or a desktop launcher may not
/// share with the shell the user installed hookpack from.
pub(crate) fn command_for(dir: &Path, binary: &str) -> String {
    let path = dir.join(binary);
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    if let Some(home) = home.filter(|h| h.is_absolute() && h != Path::new("/"))
        && let Ok(rest) = path.strip_prefix(&home)
    {
        return format!("\"$HOME\"/{}", shell_quote(&rest.to_string_lossy()));
    }
    shell_quote(&path.to_string_lossy())
}

/// `text` as one shell word.
fn shell_quote(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+@%:,=".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// What the receipt of an install holds, for one settings file.
#[derive(Debug, PartialEq)]
struct Receipt {
    settings: String,
    before: Option<String>,
    after: String,
}

impl Receipt {
    fn name(scope: Scope) -> String {
        format!("install-{}.json", scope.name())
    }

    /// What binds the receipt to the user and to the file it describes: a keyed digest of
    /// the file's path and both texts, under the user's key ([`receipt_key`]).
    fn digest(&self, key: &[u8; 32]) -> String {
        let (tag, before): (&[u8], &str) = match &self.before {
            Some(before) => (b"file", before),
            None => (b"none", ""),
        };
        let parts: [&[u8]; 5] = [
            b"hookpack install receipt 1",
            self.settings.as_bytes(),
            tag,
            before.as_bytes(),
            self.after.as_bytes(),
        ];
        receipt_key::digest(key, &parts)
    }

    /// The receipt kept for `scope`'s settings file `settings`; `Ok(None)` when there is none.
    ///
    /// # Errors
    ///
    /// A receipt that is not the user's own for that file, which is ignored: not a regular
    /// file, not as hookpack writes it, about another file, or its digest does not hold under
    /// the user's key (a repository committed or edited it). What to warn about.
    fn read(
        installation: &Installation,
        scope: Scope,
        settings: &Path,
    ) -> Result<Option<Receipt>, String> {
        let Ok(Some(dir)) = Confined::of(installation).existing_dir(layout::STATE_DIR) else {
            return Ok(None);
        };
        let Ok(path) = dir.entry(&Receipt::name(scope)) else { return Ok(None) };
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(format!("{}: {err}", path.display())),
        };
        let refused = |why: &str| {
            format!(
                "{}: {why}; the receipt is ignored, and only hookpack's own hooks are taken out \
                 of the settings",
                path.display()
            )
        };
        if !meta.is_file() {
            return Err(refused("not a regular file"));
        }
        let receipt = hook_engine::bounded::read_regular(&path, 2 * MAX_SETTINGS_BYTES + 4096)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .and_then(|value| {
                let receipt = Receipt {
                    settings: value.get("settings")?.as_str()?.to_owned(),
                    before: value.get("before")?.as_str().map(str::to_owned),
                    after: value.get("after")?.as_str()?.to_owned(),
                };
                Some((receipt, value.get("digest")?.as_str()?.to_owned()))
            });
        let Some((receipt, digest)) = receipt else {
            return Err(refused("not a receipt as hookpack writes it"));
        };
        if receipt.settings != settings.display().to_string() {
            return Err(refused(&format!("a receipt of another file ({})", receipt.settings)));
        }
        let key =
            receipt_key::key().map_err(|why| refused(&format!("cannot be checked: {why}")))?;
        if receipt.digest(&key) != digest {
            return Err(refused("not written by your hookpack (its digest does not hold)"));
        }
        Ok(Some(receipt))
    }

    fn write(&self, installation: &Installation, scope: Scope) -> anyhow::Result<()> {
        let key = receipt_key::key().map_err(|why| anyhow::anyhow!("no receipt key: {why}"))?;
        let dir = Confined::of(installation).dir(layout::STATE_DIR)?;
        let text = json!({"settings": self.settings, "before": self.before, "after": self.after,
                          "digest": self.digest(&key)});
        // The settings may hold secrets (`env`): the receipt is the user's alone.
        dir.replace_with_mode(&Receipt::name(scope), text.to_string().as_bytes(), true, 0o600)?;
        Ok(())
    }

    fn remove(installation: &Installation, scope: Scope) {
        if let Ok(Some(dir)) = Confined::of(installation).existing_dir(layout::STATE_DIR) {
            let _ = dir.remove(&Receipt::name(scope));
        }
    }
}

/// `hookpack install [--project DIR | --user | --local] [--dry-run] [--hooks DIR]`.
pub(crate) fn install(
    layout: &Layout,
    scope: Scope,
    dry_run: bool,
    hooks: Option<&Path>,
) -> anyhow::Result<bool> {
    let said = install_quietly(layout, scope, dry_run, hooks)?;
    print!("{said}");
    Ok(true)
}

/// [`install`], what it has to say returned instead of printed.
pub(crate) fn install_quietly(
    layout: &Layout,
    scope: Scope,
    dry_run: bool,
    hooks: Option<&Path>,
) -> anyhow::Result<String> {
    let installation = installation(layout).context("no project and no user folder")?;
    let wanted = wanted_by(&installation)?;
    let repository = match &installation {
        Installation::Project { root, .. } => Some(Repository::of(root)),
        Installation::User { .. } => None,
    };
    let dir = hooks_dir(hooks, &wanted, repository.as_ref())?;
    let settings = SettingsFile::of(scope, &installation)?;
    let before = settings.read()?;
    let after =
        wiring::rewire(before.as_deref(), &wanted, &|kind| command_for(&dir, kind.binary_name()))
            .with_context(|| format!("{} cannot be edited", settings.path.display()))?;

    if dry_run {
        return Ok(diff(&settings.path, before.as_deref(), Some(&after)));
    }
    if before.as_deref() == Some(after.as_str()) {
        return Ok(format!(
            "{}: hookpack's hooks are wired as the rules need; nothing to change\n",
            settings.path.display()
        ));
    }
    settings.write(Some(&after))?;
    let mut said = String::new();
    // The file as it was before hookpack first wrote it: kept across re-installs. A file that
    // already ran hookpack (wired by hand, or changed since the last install) has no such
    // first state: `uninstall` then takes hookpack's handlers out of whatever is there.
    let kept = Receipt::read(&installation, scope, &settings.path).unwrap_or_else(|warning| {
        let _ = writeln!(said, "warning: {warning}");
        None
    });
    let original = match kept {
        Some(receipt) if Some(&receipt.after) == before.as_ref() => Some(receipt.before),
        _ => before
            .as_deref()
            .is_none_or(|b| wiring::found(b).is_ok_and(|found| found.is_empty()))
            .then(|| before.clone()),
    };
    match original {
        Some(original) if keeps_receipts(&installation) => {
            let receipt =
                Receipt { settings: settings.path.display().to_string(), before: original, after };
            if let Err(err) = receipt.write(&installation, scope) {
                let _ = writeln!(
                    said,
                    "warning: no receipt kept ({err:#}); `uninstall` will take hookpack's hooks \
                     out without restoring the file byte for byte"
                );
            }
        }
        _ => Receipt::remove(&installation, scope),
    }
    let _ = writeln!(said, "{}: wired {}", settings.path.display(), summary(&wanted));
    let _ = writeln!(
        said,
        "each hook runs as {} (a path, not a bare name: Claude Code may be started with another \
         PATH than your shell's)",
        command_for(&dir, wanted.first().map_or("hookpack-stop", |w| w.kind.binary_name()))
    );
    let plugin = scopes_of(&installation).into_iter().any(|scope| {
        SettingsFile::of(scope, &installation)
            .and_then(|file| file.read())
            .is_ok_and(|text| text.is_some_and(|t| wiring::enables_plugin(&t)))
    });
    if plugin {
        said.push_str(
            "warning: hookpack's Claude Code plugin is enabled too, and its hooks run beside these: \
             disable one (`/plugin`)\n",
        );
    }
    said.push_str("next: `hookpack doctor` checks the whole setup\n");
    Ok(said)
}

/// `hookpack uninstall [--project DIR | --user | --local] [--dry-run]`.
pub(crate) fn uninstall(layout: &Layout, scope: Scope, dry_run: bool) -> anyhow::Result<bool> {
    let installation = installation(layout).context("no project and no user folder")?;
    let settings = SettingsFile::of(scope, &installation)?;
    let current = settings.read()?;
    let kept = Receipt::read(&installation, scope, &settings.path).unwrap_or_else(|warning| {
        eprintln!("warning: {warning}");
        None
    });
    let receipt = kept.filter(|r| current.as_ref() == Some(&r.after));
    let after = match (&receipt, &current) {
        (Some(receipt), _) => receipt.before.clone(),
        (None, None) => None,
        (None, Some(text)) => Some(
            wiring::rewire(Some(text), &[], &|_| String::new())
                .with_context(|| format!("{} cannot be edited", settings.path.display()))?,
        ),
    };
    if dry_run {
        print!("{}", diff(&settings.path, current.as_deref(), after.as_deref()));
        return Ok(true);
    }
    if after == current {
        println!("{}: no hookpack hooks to take out", settings.path.display());
        Receipt::remove(&installation, scope);
        return Ok(true);
    }
    settings.write(after.as_deref())?;
    Receipt::remove(&installation, scope);
    match (&receipt, &after) {
        (Some(_), None) => {
            println!("{}: removed (hookpack had created it)", settings.path.display());
        }
        (Some(_), Some(_)) => {
            println!("{}: restored as it was before `hookpack install`", settings.path.display());
        }
        (None, _) => println!(
            "{}: hookpack's hooks taken out; the rest left as it is",
            settings.path.display()
        ),
    }
    Ok(true)
}

/// Whether a copy of a settings file may be kept in the installation's `state/`: the user's
/// own folder, or a project whose `state/` git ignores (the copy may hold secrets, `env`).
fn keeps_receipts(installation: &Installation) -> bool {
    let Installation::Project { root, dir } = installation else { return true };
    let listed = Confined::of(installation)
        .existing_dir("")
        .ok()
        .flatten()
        .and_then(|top| crate::init::ignore_text(&top).ok())
        .is_some_and(|missing| missing.is_none_or(|(_, lines)| !lines.contains(&"state/")));
    listed || ignored_by_git(root, &dir.join(layout::STATE_DIR).join("x"))
}

/// Whether git, where the project is a repository and git is installed, ignores `path`.
pub(crate) fn ignored_by_git(root: &Path, path: &Path) -> bool {
    hook_runtime::git::command(root)
        .args(["check-ignore", "-q", "--no-index"])
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The settings files whose hooks run for `installation`: a project's own, its local one and
/// the user's; the user's alone for the user's folder.
pub(crate) fn scopes_of(installation: &Installation) -> Vec<Scope> {
    match installation {
        Installation::Project { .. } => vec![Scope::Project, Scope::Local, Scope::User],
        Installation::User { .. } => vec![Scope::User],
    }
}

/// The entries the installation's compiled rules need.
pub(crate) fn wanted_by(installation: &Installation) -> anyhow::Result<Vec<Wanted>> {
    let env = hook_runtime::Env::from_process();
    let path = installation.artifact_path(&env);
    let loaded = hook_runtime::artifact_reachable(installation, &env)
        .and_then(|()| hook_runtime::load_artifact(&path))
        .map_err(|err| {
            anyhow::anyhow!("{}: {err}; run `hookpack compile` first", path.display())
        })?;
    let artifact = loaded.artifact()?;
    if let Some(change) = hook_runtime::staleness(&artifact)? {
        bail!("{}: stale ({change}); run `hookpack compile` first", path.display());
    }
    wiring::wanted(&artifact)
}

/// `PreToolUse (Bash|Write), Stop` and the like.
fn summary(wanted: &[Wanted]) -> String {
    if wanted.is_empty() {
        return "no event: no rule needs a hook".to_owned();
    }
    wanted
        .iter()
        .map(|w| match &w.matcher {
            Some(m) => format!("{} ({m})", w.kind),
            None => w.kind.to_string(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The unified diff from `before` to `after` (`None`: no file), or a line saying there is none.
pub(crate) fn diff(path: &Path, before: Option<&str>, after: Option<&str>) -> String {
    if before == after {
        return format!("{}: nothing to change\n", path.display());
    }
    let shown = path.display().to_string();
    let (old, new) = (
        if before.is_some() { shown.clone() } else { "/dev/null".to_owned() },
        if after.is_some() { shown } else { "/dev/null".to_owned() },
    );
    similar::TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""))
        .unified_diff()
        .context_radius(3)
        .header(&old, &new)
        .to_string()
}
