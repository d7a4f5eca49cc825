//! `hookpack doctor --fix`: what is safe to repair without asking. The compiled rules written
//! anew when they are missing or stale and the packs compile; hookpack's entries in Claude
//! Code's settings rewritten as the rules need (where they are wired, with the binaries they
//! run); the lines git must ignore added to `.claude/hookpack/.gitignore`. Nothing else: a
//! pack's error, a binary of another version or a settings file that is not JSON needs the
//! user.

use std::fmt::Write as _;
use std::path::PathBuf;

use hook_runtime::Installation;
use hook_runtime::confined::Confined;
use hook_runtime::git::Repository;
use rules_compiler::Layout;

use super::{Check, Status, setup};
use crate::install::Scope;

/// Applies the fixes `checks` call for; what each did, or why it could not.
/// What compiling prints goes to `out`.
pub(super) fn apply(
    layout: &Layout,
    installation: &Installation,
    checks: &[Check],
    out: &mut dyn std::io::Write,
) -> Vec<String> {
    let mut done = Vec::new();
    let status = |name: &str| checks.iter().find(|c| c.name == name).map(|c| c.status);
    if status("artifact") == Some(Status::Problem) && status("packs") != Some(Status::Problem) {
        done.push(match crate::commands::compile_to(layout, false, out) {
            Ok(true) => "compiled the rules anew".to_owned(),
            Ok(false) => "could not compile the rules: see above".to_owned(),
            Err(err) => format!("could not compile the rules: {err:#}"),
        });
    }
    // Looked at again: the rules compiled anew may need other hooks.
    let needs = setup::needs(installation);
    let wired = setup::wired(installation);
    if setup::hooks(installation, needs.as_ref(), &wired).status != Status::Ok {
        for scope in setup::fix_scopes(installation, &wired) {
            let dir = hooks_dir_wired(installation, &wired, scope);
            done.push(
                match crate::install::install_quietly(layout, scope, false, dir.as_deref()) {
                    Ok(said) => said.lines().next().unwrap_or_default().to_owned(),
                    Err(err) => format!("could not rewire the hooks: {err:#}"),
                },
            );
        }
    }
    if status("gitignore").is_some_and(|s| s != Status::Ok) {
        done.push(match add_ignored(installation) {
            Ok(added) => format!("added {} to .claude/hookpack/.gitignore", added.join(", ")),
            Err(err) => format!("could not write .claude/hookpack/.gitignore: {err:#}"),
        });
    }
    done
}

/// The folder of the hook binaries `scope`'s settings run now, which `--fix` keeps: never one
/// inside the project or the repository around it, or named from the project's folder (a
/// repository's files are not hooks to wire).
fn hooks_dir_wired(
    installation: &Installation,
    wired: &setup::Wired,
    scope: Scope,
) -> Option<PathBuf> {
    let project = match installation {
        Installation::Project { root, .. } => Some(root.as_path()),
        Installation::User { .. } => None,
    };
    let repository = project.map(Repository::of);
    wired.handlers.iter().filter(|(s, _, _)| *s == scope).find_map(|(_, _, found)| {
        if setup::from_the_project(&found.command) {
            return None;
        }
        let binary = setup::resolve(&found.command, project)?;
        let dir = std::fs::canonicalize(binary.parent()?).ok()?;
        let inside = repository.as_ref().is_some_and(|repository| repository.contains(&binary));
        let hooks = dir.join(hook_model::EventKind::PreToolUse.binary_name()).is_file();
        (!inside && hooks).then_some(dir)
    })
}

fn add_ignored(installation: &Installation) -> anyhow::Result<Vec<&'static str>> {
    let top = Confined::of(installation).dir("")?;
    match crate::init::ignore_text(&top)? {
        None => Ok(Vec::new()),
        Some((text, added)) => {
            top.replace(".gitignore", text.as_bytes(), false)?;
            Ok(added)
        }
    }
}

/// The fixes, as the report's first lines.
pub(super) fn as_text(done: &[String]) -> String {
    let mut out = String::new();
    if done.is_empty() {
        out.push_str("fix: nothing to fix\n\n");
    }
    for line in done {
        let _ = writeln!(out, "fix: {line}");
    }
    if !done.is_empty() {
        out.push('\n');
    }
    out
}
