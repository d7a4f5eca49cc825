//! The checks of how hookpack is set up around the rules: the hooks wired in Claude Code's
//! settings, the binaries they run, `PATH`, what git must ignore, the user's own packs.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hook_engine::layout;
use hook_model::EventKind;
use hook_runtime::Installation;
use hook_runtime::confined::Confined;
use hook_runtime::git::Repository;

use super::{Check, Status, plural};
use crate::install::{Scope, SettingsFile};
use crate::wiring::{self, Found, Wanted};

/// How long a hook binary may take to say its version.
const VERSION_DEADLINE: Duration = Duration::from_secs(5);

/// What the compiled rules need, when they can be read: the entries, and the fingerprint of
/// the hookpack that compiled them.
pub(super) struct Needs {
    pub(super) wanted: Vec<Wanted>,
    pub(super) fingerprint: u64,
}

/// What the installation's artifact needs, when it loads (stale or not: the hooks answer from
/// it as it is).
pub(super) fn needs(installation: &Installation) -> Option<Needs> {
    let env = hook_runtime::Env::from_process();
    let path = installation.artifact_path(&env);
    hook_runtime::artifact_reachable(installation, &env).ok()?;
    let loaded = hook_runtime::load_artifact(&path).ok()?;
    let artifact = loaded.artifact().ok()?;
    let wanted = wiring::wanted(&artifact).ok()?;
    Some(Needs { wanted, fingerprint: artifact.compiler_fingerprint() })
}

/// The hookpack handlers of each settings file, and what kept a file from being read.
pub(super) struct Wired {
    pub(super) handlers: Vec<(Scope, PathBuf, Found)>,
    pub(super) unreadable: Vec<String>,
    /// Settings that keep every hook from running (`disableAllHooks`).
    pub(super) disabled: Vec<String>,
}

/// How a hook wired by hookpack's own Claude Code plugin is shown: the plugin runs its hooks
/// through a script of its own, which runs `~/.local/bin/hookpack-<event>`, else the one on
/// `PATH`.
pub(super) const PLUGIN: &str = "the hookpack plugin";

/// The plugin's hooks, as the repository ships them (`plugin/hooks/hooks.json`).
const PLUGIN_HOOKS: &str = include_str!("../../../../plugin/hooks/hooks.json");

/// The handlers hookpack's plugin wires: every event of its `hooks.json`, for every call.
fn plugin_handlers() -> Vec<Found> {
    let value: serde_json::Value = serde_json::from_str(PLUGIN_HOOKS).unwrap_or_default();
    let events = value.get("hooks").and_then(serde_json::Value::as_object);
    events
        .into_iter()
        .flat_map(|events| events.keys())
        .filter_map(|event| {
            let kind = EventKind::from_name(event)?;
            Some(Found {
                event: event.clone(),
                matcher: None,
                command: PLUGIN.to_owned(),
                binary: kind.binary_name().to_owned(),
                shared: false,
            })
        })
        .collect()
}

pub(super) fn wired(installation: &Installation) -> Wired {
    let mut wired = Wired { handlers: Vec::new(), unreadable: Vec::new(), disabled: Vec::new() };
    for scope in crate::install::scopes_of(installation) {
        if scope == Scope::User && crate::install::claude_dir().is_none() {
            continue;
        }
        let file = match SettingsFile::of(scope, installation) {
            Ok(file) => file,
            Err(err) => {
                wired.unreadable.push(format!("{err:#}"));
                continue;
            }
        };
        let text = match file.read() {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(err) => {
                wired.unreadable.push(format!("{err:#}"));
                continue;
            }
        };
        let value: Option<serde_json::Value> = serde_json::from_str(&text).ok();
        if value.as_ref().and_then(|v| v.get("disableAllHooks"))
            == Some(&serde_json::Value::Bool(true))
        {
            wired.disabled.push(format!(
                "{} sets `disableAllHooks`: no hook runs, hookpack's included",
                file.path.display()
            ));
        }
        match wiring::found(&text) {
            Ok(found) => {
                wired.handlers.extend(found.into_iter().map(|f| (scope, file.path.clone(), f)));
                let known = wired.handlers.iter().any(|h| h.2.command == PLUGIN);
                if wiring::enables_plugin(&text) && !known {
                    let plugin = plugin_handlers().into_iter();
                    wired.handlers.extend(plugin.map(|f| (scope, file.path.clone(), f)));
                }
            }
            Err(err) => wired.unreadable.push(format!(
                "{}: hookpack cannot read it as JSON ({err:#}); it reads no hooks there",
                file.path.display()
            )),
        }
    }
    wired
}

/// Whether matcher `found` of an entry of `kind` lets through every call `wanted` names
/// (`None`: every call); `None` when it is a regex, which is not told here.
fn covers(kind: EventKind, found: Option<&str>, wanted: Option<&str>) -> Option<bool> {
    let Some((_, dashes)) = kind.matcher_field() else { return Some(true) };
    let found = found.map(str::trim).filter(|m| !m.is_empty() && *m != "*");
    let Some(found) = found else { return Some(true) };
    let exact = |b: u8| {
        b.is_ascii_alphanumeric() || b == b'_' || b == b'|' || (dashes && b",- ".contains(&b))
    };
    if !found.bytes().all(exact) {
        return None;
    }
    let Some(wanted) = wanted else { return Some(false) };
    let separators: &[char] = if dashes { &['|', ','] } else { &['|'] };
    let names: Vec<&str> = found.split(separators).map(str::trim).collect();
    let covered = |name: &str| {
        names.iter().any(|n| {
            if kind.is_tool_event() {
                hook_model::matcher_covers(n, name, None)
            } else {
                *n == name
            }
        })
    };
    Some(wanted.split('|').all(covered))
}

/// `hooks`: every event the rules need wired, with a matcher that lets their calls through;
/// nothing wired that no rule needs, under another event's name, or twice.
pub(super) fn hooks(installation: &Installation, needs: Option<&Needs>, wired: &Wired) -> Check {
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    problems.extend(wired.unreadable.iter().cloned());
    problems.extend(wired.disabled.iter().cloned());
    let mut by_event: BTreeMap<&str, Vec<&(Scope, PathBuf, Found)>> = BTreeMap::new();
    for entry in &wired.handlers {
        by_event.entry(entry.2.event.as_str()).or_default().push(entry);
    }
    for (event, entries) in &by_event {
        let kind = EventKind::from_name(event);
        for (_, path, found) in entries {
            let at = format!("{} ({})", found.command, shown(path));
            match kind {
                None => problems.push(format!("`{event}` is no event Claude Code knows: {at}")),
                Some(kind) if kind.acts_without_rules() => problems.push(format!(
                    "{event} is wired: the hook replaces Claude Code's own worktree handling for \
                     every project, and no rule needs it: {at}"
                )),
                Some(kind) if found.binary != kind.binary_name() => problems.push(format!(
                    "{event} runs {}, which answers another event (or none): {at}",
                    found.binary
                )),
                Some(_) => {}
            }
        }
        let commands: BTreeSet<&str> = entries.iter().map(|e| e.2.command.as_str()).collect();
        if commands.len() > 1 {
            warnings.push(format!(
                "{event} runs hookpack {} times ({}): context would be given twice",
                commands.len(),
                commands.iter().copied().collect::<Vec<_>>().join(", ")
            ));
        }
    }
    // A file that cannot be read may wire what is missing: nothing is said missing then.
    if let Some(needs) = needs.filter(|_| wired.unreadable.is_empty()) {
        against_needs(needs, &by_event, &mut problems, &mut warnings);
    }
    let scopes = fix_scopes(installation, wired);
    let scope_fix = if scopes.is_empty() {
        "hookpack's plugin wires a fixed set of events: disable it (`/plugin`) and run `hookpack \
         install`, which"
            .to_owned()
    } else {
        scopes
            .iter()
            .map(|scope| format!("`{}`", install_command(*scope)))
            .collect::<Vec<_>>()
            .join(" and ")
    };
    let events = by_event.len();
    let (status, summary, details) = match (problems.is_empty(), warnings.is_empty()) {
        _ if wired.handlers.is_empty()
            && wired.unreadable.is_empty()
            && needs.is_none_or(|n| !n.wanted.is_empty()) =>
        {
            let check = Check::new(
                "hooks",
                Status::Problem,
                "no hook is wired in Claude Code's settings: no rule runs",
            );
            return check.fix(format!("{scope_fix} wires what the compiled rules need"));
        }
        (true, true) => match needs {
            Some(needs) => (
                Status::Ok,
                format!("{} wired as the rules need", plural(needs.wanted.len(), "event")),
                Vec::new(),
            ),
            None => (
                Status::Ok,
                format!(
                    "{} wired (the compiled rules cannot be read to compare)",
                    plural(events, "event")
                ),
                Vec::new(),
            ),
        },
        (true, false) => (
            Status::Warning,
            format!("{} wired, {}", plural(events, "event"), plural(warnings.len(), "warning")),
            warnings,
        ),
        (false, _) => (
            Status::Problem,
            format!("{} wired, {}", plural(events, "event"), plural(problems.len(), "problem")),
            problems.into_iter().chain(warnings).collect(),
        ),
    };
    let mut check = Check::new("hooks", status, summary).details(details);
    let plugin = wired.handlers.iter().any(|h| h.2.command == PLUGIN);
    let settings = wired.handlers.iter().any(|h| h.2.command != PLUGIN);
    if plugin && settings {
        check = check.fix(
            "keep one of the two: `hookpack uninstall` (the plugin stays) or disable hookpack's \
             plugin (`/plugin`)",
        );
    } else if status != Status::Ok {
        check = check.fix(format!("{scope_fix} rewrites hookpack's entries as the rules need"));
    }
    check
}

/// The settings files `--fix` rewrites: those that wire hookpack, else the project's own (the
/// user's for the user's folder).
pub(super) fn fix_scopes(installation: &Installation, wired: &Wired) -> Vec<Scope> {
    let mut scopes: Vec<Scope> = Vec::new();
    // A project's run never rewrites the user's settings (they serve every project), nor the
    // other way round.
    let own = |scope: Scope| match installation {
        Installation::Project { .. } => scope != Scope::User,
        Installation::User { .. } => scope == Scope::User,
    };
    for (scope, _, found) in &wired.handlers {
        if found.command != PLUGIN && own(*scope) && !scopes.contains(scope) {
            scopes.push(*scope);
        }
    }
    // Where the plugin wires the hooks, the settings are left to the user.
    let plugin = wired.handlers.iter().any(|h| h.2.command == PLUGIN);
    if scopes.is_empty() && !plugin {
        scopes.push(scopes_default(installation));
    }
    scopes
}

fn scopes_default(installation: &Installation) -> Scope {
    match installation {
        Installation::Project { .. } => Scope::Project,
        Installation::User { .. } => Scope::User,
    }
}

fn install_command(scope: Scope) -> &'static str {
    match scope {
        Scope::Project => "hookpack install",
        Scope::Local => "hookpack install --local",
        Scope::User => "hookpack install --user",
    }
}

/// `~/…` for paths in the home folder.
fn shown(path: &Path) -> String {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    match home.as_deref().and_then(|home| path.strip_prefix(home).ok()) {
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// Whether a hook command names its program from the project's folder: by
/// `$CLAUDE_PROJECT_DIR`, or by a relative path (Claude Code runs hooks in the project). Such a
/// program is the repository's wherever the path leads (`$CLAUDE_PROJECT_DIR/../tools/…` in an
/// unpacked archive, which has no `.git` to say where the repository ends): doctor neither runs
/// nor wires it.
pub(super) fn from_the_project(command: &str) -> bool {
    let word = wiring::first_word(command);
    word.contains("CLAUDE_PROJECT_DIR")
        || (word.contains('/')
            && !word.starts_with('/')
            && !word.starts_with("~/")
            && !word.starts_with("$HOME/")
            && !word.starts_with("${HOME}/"))
}

/// The file a hook command runs: its first word with `$HOME`, `~` and `$CLAUDE_PROJECT_DIR`
/// expanded, looked up on `PATH` when it is a bare name.
pub(super) fn resolve(command: &str, project: Option<&Path>) -> Option<PathBuf> {
    let word = wiring::first_word(command);
    let home = std::env::var("HOME").unwrap_or_default();
    let project = project.map(|p| p.display().to_string()).unwrap_or_default();
    let mut expanded = word;
    for (var, value) in [
        ("${HOME}", &home),
        ("$HOME", &home),
        ("${CLAUDE_PROJECT_DIR}", &project),
        ("$CLAUDE_PROJECT_DIR", &project),
    ] {
        expanded = expanded.replace(var, value);
    }
    if let Some(rest) = expanded.strip_prefix("~/") {
        expanded = format!("{home}/{rest}");
    }
    if expanded.contains('/') {
        return Some(PathBuf::from(expanded));
    }
    on_path(&expanded)
}

/// `name` in a folder of `PATH`.
fn on_path(name: &str) -> Option<PathBuf> {
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths).map(|dir| dir.join(name)).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// What `binary --version` says, within [`VERSION_DEADLINE`]. Its output is read by a thread
/// of its own: a process it started may hold the pipe open after it exits.
fn version_of(binary: &Path) -> Result<String, String> {
    let mut child = Command::new(binary)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|err| format!("cannot be run ({err})"))?;
    let stdout = child.stdout.take();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut out = String::new();
        if let Some(stdout) = stdout {
            let _ = stdout.take(4096).read_to_string(&mut out);
        }
        let _ = sender.send(out);
    });
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() < VERSION_DEADLINE => {
                std::thread::sleep(Duration::from_millis(10));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("did not answer --version in time".to_owned());
            }
        }
    }
    let left = VERSION_DEADLINE.saturating_sub(started.elapsed());
    receiver
        .recv_timeout(left)
        .map(|out| out.trim().to_owned())
        .map_err(|_| "did not answer --version in time".to_owned())
}

/// The fingerprint in a `hookpack 0.0.0 (fingerprint 0123…)` line.
fn fingerprint_in(version: &str) -> Option<u64> {
    let hex = version.split("(fingerprint ").nth(1)?.strip_suffix(')')?;
    u64::from_str_radix(hex, 16).ok()
}

/// `binaries`: every hook command wired runs a hookpack binary that exists and was built by
/// the hookpack that compiled the rules (another one takes the rules for stale).
pub(super) fn binaries(installation: &Installation, needs: Option<&Needs>, wired: &Wired) -> Check {
    let project = match installation {
        Installation::Project { root, .. } => Some(root.as_path()),
        Installation::User { .. } => None,
    };
    let expected =
        needs.map_or_else(hook_engine::artifact::sources::hookpack_fingerprint, |n| n.fingerprint);
    let commands: BTreeSet<&str> = wired.handlers.iter().map(|h| h.2.command.as_str()).collect();
    if commands.is_empty() {
        return Check::new("binaries", Status::Ok, "no hook wired to check");
    }
    // The project's folder, and the repository's around it (reference §5).
    let repository = project.map(Repository::of);
    let mut problems = Vec::new();
    let mut versions = BTreeSet::new();
    for command in &commands {
        if *command != PLUGIN && from_the_project(command) {
            problems.push(format!(
                "`{command}` names its program from the project's folder: a repository's file, \
                 which doctor does not run; hookpack's hooks are installed outside repositories"
            ));
            continue;
        }
        let resolved = if *command == PLUGIN {
            let home = std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
            let probe = EventKind::SessionStart.binary_name();
            home.map(|h| h.join(".local/bin").join(probe))
                .filter(|p| is_executable(p))
                .or_else(|| on_path(probe))
        } else {
            resolve(command, project)
        };
        let Some(binary) = resolved else {
            problems.push(format!("`{command}`: not found on PATH"));
            continue;
        };
        if !is_executable(&binary) {
            problems.push(format!(
                "`{command}`: {} is missing or not executable; Claude Code reports a hook error \
                 on every call",
                binary.display()
            ));
            continue;
        }
        if repository.as_ref().is_some_and(|repository| repository.contains(&binary)) {
            problems.push(format!(
                "`{command}` runs {}, inside the repository that holds the project: a \
                 repository's file, which doctor does not run; hookpack's hooks are installed \
                 outside repositories",
                binary.display()
            ));
            continue;
        }
        match version_of(&binary) {
            Err(why) => problems.push(format!("`{command}`: {why}")),
            Ok(version) => match fingerprint_in(&version) {
                Some(found) if found == expected => {
                    versions.insert(version);
                }
                _ => problems.push(format!(
                    "`{command}` is {version:?}, not the hookpack that compiled the rules \
                     (fingerprint {expected:016x}): its hooks take them for stale"
                )),
            },
        }
    }
    let summary = format!("{} run", plural(commands.len(), "hook command"));
    if problems.is_empty() {
        let version = versions.into_iter().next().unwrap_or_default();
        return Check::new("binaries", Status::Ok, format!("{summary}, all {version}"));
    }
    Check::new(
        "binaries",
        Status::Problem,
        format!("{summary}, {}", plural(problems.len(), "problem")),
    )
    .details(problems)
    .fix(
        "install the hooks and the command from one checkout (`cargo xtask install`), then \
             `hookpack compile` and `hookpack install`",
    )
}

/// `path`: `hookpack` itself on `PATH`, as the notices hooks give name it.
pub(super) fn path() -> Check {
    match on_path("hookpack") {
        Some(found) => {
            Check::new("path", Status::Ok, format!("hookpack on PATH: {}", shown(&found)))
        }
        None => {
            let here = std::env::current_exe()
                .ok()
                .and_then(|exe| Some(exe.parent()?.to_path_buf()))
                .map_or_else(|| "the folder hookpack is in".to_owned(), |d| shown(&d));
            Check::new(
                "path",
                Status::Warning,
                "hookpack is not on PATH: the notices the hooks give name `hookpack doctor`",
            )
            .fix(format!("add {here} to PATH"))
        }
    }
}

/// `gitignore`: what hookpack writes per machine (compiled rules, session state and memories)
/// and the user's local packs and config are ignored by git.
pub(super) fn gitignore(installation: &Installation) -> Option<Check> {
    let Installation::Project { root, dir } = installation else { return None };
    let top = Confined::of(installation).existing_dir("").ok().flatten()?;
    let missing = match crate::init::ignore_text(&top) {
        Ok(None) => Vec::new(),
        Ok(Some((_, missing))) => missing,
        Err(err) => {
            return Some(Check::new("gitignore", Status::Warning, format!("{err:#}")));
        }
    };
    // Ignored another way (the repository's own .gitignore) counts, when git can tell.
    let missing: Vec<&str> = missing
        .into_iter()
        .filter(|entry| {
            !crate::install::ignored_by_git(root, &dir.join(entry.trim_end_matches('/')).join("x"))
        })
        .collect();
    if missing.is_empty() {
        return Some(Check::new(
            "gitignore",
            Status::Ok,
            "compiled rules, session state, memories and local files are ignored by git",
        ));
    }
    let state = missing.contains(&"state/");
    Some(
        Check::new(
            "gitignore",
            if state { Status::Problem } else { Status::Warning },
            format!(
                "not ignored by git: {}{}",
                missing.join(", "),
                if state { " (the state holds memories in plain text)" } else { "" }
            ),
        )
        .fix(format!("`hookpack doctor --fix` adds them to {}", shown(&dir.join(".gitignore")))),
    )
}

/// `user`: the user's own packs, which apply in every project; files in a packs folder that
/// are no pack (another extension) are ignored, and said so.
pub(super) fn user_packs(user: Option<&Path>, project: Option<&Path>) -> Check {
    let mut details = Vec::new();
    let mut count = 0;
    let folders = [
        user.map(|u| u.join(layout::PACKS_DIR)),
        project.map(|p| p.join(layout::PROJECT_SUBDIR).join(layout::PACKS_DIR)),
        project.map(|p| p.join(layout::PROJECT_SUBDIR).join(layout::LOCAL_PACKS_DIR)),
    ];
    for (i, folder) in folders.iter().enumerate() {
        let Some(folder) = folder else { continue };
        let Ok(entries) = std::fs::read_dir(folder) else { continue };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            if Path::new(&name).extension().is_some_and(|e| e == "toml") {
                count += usize::from(i == 0);
            } else if !name.starts_with('.') {
                details.push(format!(
                    "{}: not a .toml file, so not read as a pack",
                    shown(&folder.join(&name))
                ));
            }
        }
    }
    let where_ =
        user.map_or_else(|| "no user folder".to_owned(), |u| shown(&u.join(layout::PACKS_DIR)));
    let summary =
        format!("{} in {where_} (they apply in every project)", plural(count, "user pack"));
    if details.is_empty() {
        Check::new("pack files", Status::Ok, summary)
    } else {
        Check::new("pack files", Status::Warning, summary)
            .details(details)
            .fix("rename the files to .toml, or move them out of the packs folders")
    }
}

/// Where what is wired falls short of what the rules of `needs` want: events not wired,
/// matchers too narrow, events wired for nothing.
fn against_needs(
    needs: &Needs,
    by_event: &BTreeMap<&str, Vec<&(Scope, PathBuf, Found)>>,
    problems: &mut Vec<String>,
    warnings: &mut Vec<String>,
) {
    for wanted in &needs.wanted {
        let event = wanted.kind.as_str();
        let entries = by_event.get(event).map(Vec::as_slice).unwrap_or_default();
        let right: Vec<_> =
            entries.iter().filter(|e| e.2.binary == wanted.kind.binary_name()).collect();
        if right.is_empty() {
            problems.push(format!(
                "{event} is not wired: its rules never run{}",
                wanted.matcher.as_ref().map(|m| format!(" (tools: {m})")).unwrap_or_default()
            ));
            continue;
        }
        let verdicts: Vec<Option<bool>> = right
            .iter()
            .map(|e| covers(wanted.kind, e.2.matcher.as_deref(), wanted.matcher.as_deref()))
            .collect();
        if verdicts.contains(&Some(true)) {
            continue;
        }
        let matchers: Vec<String> =
            right.iter().map(|e| format!("`{}`", e.2.matcher.as_deref().unwrap_or(""))).collect();
        let needed = wanted.matcher.as_deref().unwrap_or("every call");
        if verdicts.contains(&None) {
            warnings.push(format!(
                "{event}'s matcher {} is a regex: cannot tell whether it lets through {needed}",
                matchers.join(", ")
            ));
        } else {
            problems.push(format!(
                "{event}'s matcher {} is narrower than the rules need ({needed}): some of \
                 them never run",
                matchers.join(", ")
            ));
        }
    }
    for (event, entries) in by_event {
        let needed = needs.wanted.iter().any(|w| w.kind.as_str() == *event);
        let known = EventKind::from_name(event).is_some_and(|k| !k.acts_without_rules());
        // The plugin wires a fixed set of events, needed or not.
        let by_plugin_only = entries.iter().all(|e| e.2.command == PLUGIN);
        if !needed && known && !by_plugin_only {
            warnings.push(format!(
                "{event} is wired but no rule needs it: a process for nothing on every call"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_matcher_covers_what_claude_code_lets_through() {
        use EventKind::{PreToolUse, StopFailure, UserPromptSubmit};
        assert_eq!(covers(PreToolUse, Some("Task"), Some("Agent")), Some(true));
        assert_eq!(covers(PreToolUse, Some("Bash"), Some("Bash|Write")), Some(false));
        assert_eq!(covers(PreToolUse, Some("Write, Bash"), Some("Bash|Write")), Some(true));
        assert_eq!(covers(PreToolUse, Some("*"), Some("Bash")), Some(true));
        assert_eq!(covers(PreToolUse, Some("Bash"), None), Some(false));
        assert_eq!(covers(PreToolUse, Some("^Bash$"), Some("Bash")), None);
        // Ignored where the event takes no matcher; a regex where `-` is not exact.
        assert_eq!(covers(UserPromptSubmit, Some("x"), None), Some(true));
        assert_eq!(covers(StopFailure, Some("rate-limit"), Some("rate_limit")), None);
    }
}
