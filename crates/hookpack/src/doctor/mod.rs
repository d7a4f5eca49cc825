//! `hookpack doctor` (reference §4): what is wrong with this installation, why a fail-closed
//! guard denies, and the one command that fixes it. It reads and changes nothing: the database
//! is opened read-only, and a damaged one is left for the next hook to set aside.
//!
//! Each check says `ok`, `warning` (worth knowing, nothing stops working) or `problem` (some
//! hook cannot do its job); any problem makes the command exit 1.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use hook_engine::Engine;
use hook_engine::layout::{self, EnvVars, FAIL_CLOSED_FILE};
use hook_runtime::confined::Confined;
use hook_runtime::state::{self, Diagnosis, Store};
use hook_runtime::{Installation, Unusable};
use rules_compiler::{Layout, compile, load};

mod fixes;
mod setup;

use crate::commands::{installation, printable, shown};
use serde_json::{Value, json};

/// How many recorded failures the report lists.
const FAILURES_SHOWN: u32 = 5;

/// How many failures are read to count them per event.
const FAILURES_COUNTED: u32 = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ok,
    Warning,
    Problem,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warning => "warning",
            Status::Problem => "problem",
        }
    }
}

/// One check's verdict.
#[derive(Debug)]
struct Check {
    name: &'static str,
    status: Status,
    summary: String,
    details: Vec<String>,
    fix: Option<String>,
}

impl Check {
    fn new(name: &'static str, status: Status, summary: impl Into<String>) -> Check {
        Check { name, status, summary: summary.into(), details: Vec::new(), fix: None }
    }

    fn fix(mut self, fix: impl Into<String>) -> Check {
        self.fix = Some(fix.into());
        self
    }

    fn details(mut self, details: Vec<String>) -> Check {
        self.details = details;
        self
    }
}

/// `hookpack doctor [--format json] [--fix]`: prints the report (after the fixes, with
/// `fix`); whether everything is healthy.
pub(crate) fn doctor(layout: &Layout, json: bool, fix: bool) -> anyhow::Result<bool> {
    let Some(installation) = installation(layout) else {
        anyhow::bail!("no project and no user folder to look at");
    };
    let root = installation.root().to_path_buf();
    let mut fixed = Vec::new();
    if fix {
        // With `--format json`, stdout holds the report alone.
        let mut out: Box<dyn std::io::Write> =
            if json { Box::new(std::io::stderr()) } else { Box::new(std::io::stdout()) };
        fixed = fixes::apply(layout, &installation, &checks(layout, &installation), &mut out);
    }
    let checks = checks(layout, &installation);
    let healthy = checks.iter().all(|c| c.status != Status::Problem);
    if json {
        let mut report = as_json(&root, &checks, healthy);
        if fix {
            report["fixed"] = json!(fixed);
        }
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        if fix {
            print!("{}", fixes::as_text(&fixed));
        }
        print!("{}", as_text(&root, &checks));
    }
    Ok(healthy)
}

/// Every check, in the order reported.
fn checks(layout: &Layout, installation: &Installation) -> Vec<Check> {
    let root = installation.root().to_path_buf();
    let artifact_path = installation.artifact_path(&hook_runtime::Env::from_process());
    let show = |path: &Path| shown(&root, path);

    let mut checks = Vec::new();
    let (packs, compiled) = packs(layout, &root);
    checks.push(packs);
    let (artifact, cause) = artifact(&artifact_path, compiled.as_deref(), installation, &show);
    checks.push(artifact);
    let needs = setup::needs(installation);
    let wired = setup::wired(installation);
    checks.push(setup::hooks(installation, needs.as_ref(), &wired));
    checks.push(setup::binaries(installation, needs.as_ref(), &wired));
    checks.push(setup::path());
    checks.extend(setup::gitignore(installation));
    checks.push(setup::user_packs(layout.user.as_deref(), layout.project.as_deref()));
    checks.push(store(installation, &show));
    checks.push(failures(installation.dir()));
    checks.push(fail_closed(&artifact_path, cause.as_deref(), installation));
    checks
}

/// The packs, linted; and the artifact they compile to, when they do.
fn packs(layout: &Layout, root: &Path) -> (Check, Option<Vec<u8>>) {
    let environment: Vec<(String, String)> =
        std::env::vars().filter(|(k, _)| k.starts_with(EnvVars::CONFIG_PREFIX)).collect();
    let loaded = load(layout, &environment);
    let errors = loaded.diagnostics.error_count();
    let warnings = loaded.diagnostics.warning_count();
    let rules = loaded.rules();
    let summary =
        format!("{}, {}", plural(loaded.packs.len(), "pack"), plural(rules.len(), "rule"));
    if errors > 0 {
        let check = Check::new(
            "packs",
            Status::Problem,
            format!("{summary}: {errors} error(s); nothing can be compiled until they are fixed"),
        )
        .fix(format!("`hookpack lint --project {}` shows each with its place", root.display()));
        return (check, None);
    }
    let compiled = compile(&rules, &loaded.config.settings(), &loaded.sources).ok();
    let check = if warnings > 0 {
        Check::new("packs", Status::Warning, format!("{summary}, {warnings} warning(s)"))
            .fix("`hookpack lint` shows them")
    } else {
        Check::new("packs", Status::Ok, format!("{summary}, no errors"))
    };
    (check, compiled.map(|c| c.bytes))
}

/// The artifact: present, readable, valid, of this hookpack, fresh. Also why the rules cannot
/// be used, when they cannot (what a fail-closed guard denies for).
fn artifact(
    path: &Path,
    compiled: Option<&[u8]>,
    installation: &Installation,
    show: &dyn Fn(&Path) -> String,
) -> (Check, Option<String>) {
    let fix = hook_runtime::way_out(installation);
    let env = hook_runtime::Env::from_process();
    let loaded = hook_runtime::artifact_reachable(installation, &env)
        .and_then(|()| hook_runtime::load_artifact(path));
    let bytes = match loaded {
        Ok(bytes) => bytes,
        Err(err) => {
            let what = match &err {
                Unusable::Missing => "missing: no compiled rules".to_owned(),
                Unusable::Unreadable(err) => format!("cannot be read ({err})"),
                Unusable::Invalid(err) => err.to_string(),
                err @ (Unusable::NotCompiledHere | Unusable::Linked(_)) => err.to_string(),
            };
            let check = Check::new("artifact", Status::Problem, format!("{}: {what}", show(path)))
                .fix(format!("{fix}; hooks answer without their rules until then"));
            return (check, Some(what));
        }
    };
    let artifact = match bytes.artifact() {
        Ok(artifact) => artifact,
        Err(err) => {
            let check =
                Check::new("artifact", Status::Problem, format!("{}: {err}", show(path))).fix(fix);
            return (check, Some(err.to_string()));
        }
    };
    let rules = artifact.rule_count();
    if let Err(err) = Engine::new(artifact) {
        let check =
            Check::new("artifact", Status::Problem, format!("{}: {err}", show(path))).fix(fix);
        return (check, Some(err.to_string()));
    }
    let stale = match hook_runtime::staleness(&artifact) {
        Ok(Some(change)) => Some(change),
        Ok(None) if compiled.is_some_and(|c| c != bytes.bytes().as_slice()) => {
            Some("the packs now compile to other rules".to_owned())
        }
        Ok(None) => None,
        Err(err) => {
            let check =
                Check::new("artifact", Status::Problem, format!("{}: {err}", show(path))).fix(fix);
            return (check, Some(err.to_string()));
        }
    };
    let check = match stale {
        Some(change) => Check::new(
            "artifact",
            Status::Problem,
            format!("{}: stale ({change}); hooks still answer from the old rules", show(path)),
        )
        .fix(fix),
        None => Check::new(
            "artifact",
            Status::Ok,
            format!("{}: {}, valid and up to date", show(path), plural(rules, "rule")),
        ),
    };
    (check, None)
}

/// The session store: its folder, the database, and the copies set aside.
fn store(installation: &Installation, show: &dyn Fn(&Path) -> String) -> Check {
    let state_dir = installation.dir().join(layout::STATE_DIR);
    let database = state::database_path(installation.dir());
    match Confined::of(installation).existing_dir(layout::STATE_DIR) {
        Err(err) => {
            return Check::new("state", Status::Problem, format!("refused: {err}")).fix(format!(
                "remove the link at {} (hookpack writes only inside its own folder)",
                show(&state_dir)
            ));
        }
        Ok(None) => {
            return Check::new(
                "state",
                Status::Ok,
                "no session state yet (the first hook that needs it creates it)",
            );
        }
        Ok(Some(_)) => {}
    }
    let copies = state::set_aside_copies(&state_dir);
    let sessions = state::sessions::count(installation.dir());
    let read_only = std::fs::metadata(&state_dir).is_ok_and(|m| m.permissions().readonly());
    let mut check = match state::diagnose(installation.dir()) {
        _ if read_only => Check::new(
            "state",
            Status::Problem,
            format!(
                "{} is read-only: hooks keep no counts, flags, memories or handoffs",
                show(&state_dir)
            ),
        )
        .fix(format!("chmod u+w {}", state_dir.display())),
        Diagnosis::Missing => Check::new(
            "state",
            Status::Ok,
            format!(
                "{sessions} session(s); {}: no memories yet (the first one kept creates it)",
                show(&database)
            ),
        ),
        Diagnosis::Healthy { memories } => Check::new(
            "state",
            Status::Ok,
            format!("{sessions} session(s); {}: {memories} memory(ies)", show(&database)),
        ),
        Diagnosis::Unusable(why) => Check::new(
            "state",
            Status::Problem,
            format!("{}: not usable ({why})", show(&database)),
        )
        .fix(
            "nothing to do by hand: the next hook that keeps or recalls a memory sets it aside \
             and starts afresh (its memories are lost)",
        ),
        Diagnosis::Unreadable(why) => Check::new(
            "state",
            Status::Problem,
            format!("{}: cannot be read ({why})", show(&database)),
        )
        .fix(format!("check the permissions of {}", show(&state_dir))),
    };
    if !copies.is_empty() {
        if check.status == Status::Ok {
            check.status = Status::Warning;
        }
        let _ = write!(check.summary, "; {} damaged copy(ies) set aside", copies.len());
        check.details = copies.iter().map(|c| format!("set aside: {}", show(c))).collect();
        check.fix.get_or_insert_with(|| {
            "remove the copies set aside when you no longer need them".to_owned()
        });
    }
    check
}

/// The failures the hooks recorded: how many per event, and the newest.
fn failures(dir: &Path) -> Check {
    let Ok(store) = Store::open_read_only(dir) else {
        return Check::new("failures", Status::Ok, "none recorded");
    };
    let Ok(all) = store.failures(FAILURES_COUNTED) else {
        return Check::new("failures", Status::Ok, "none recorded (the log cannot be read)");
    };
    if all.is_empty() {
        return Check::new("failures", Status::Ok, "none recorded");
    }
    let mut per_event: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, _, event, _) in &all {
        *per_event.entry(event.as_str()).or_default() += 1;
    }
    let counts: Vec<String> =
        per_event.iter().map(|(e, n)| format!("{} {n}", printable(e))).collect();
    let details = all
        .iter()
        .take(FAILURES_SHOWN as usize)
        .map(|(at, session, event, message)| {
            let session = if session.is_empty() { "-" } else { session };
            let (event, session, message) =
                (printable(event), printable(session), printable(message));
            format!("{}  {event}  session {session}: {message}", time(*at))
        })
        .collect();
    Check::new(
        "failures",
        Status::Warning,
        format!("{} recorded ({}); the newest first:", all.len(), counts.join(", ")),
    )
    .details(details)
}

/// The fail-closed rules in force, and whether (and why) they deny now.
fn fail_closed(artifact: &Path, cause: Option<&str>, installation: &Installation) -> Check {
    let list = artifact.with_file_name(FAIL_CLOSED_FILE);
    let Ok(bytes) = hook_engine::bounded::read_regular(&list, 1 << 20) else {
        return Check::new("fail-closed", Status::Ok, "no rule is marked fail = \"closed\"");
    };
    let text = String::from_utf8_lossy(&bytes);
    let rules: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once(' ')).collect();
    let covered =
        |tools: &str| if tools == "*" { "every tool".to_owned() } else { tools.replace('|', ", ") };
    let details = rules.iter().map(|(rule, tools)| format!("{rule}: {}", covered(tools))).collect();
    match cause {
        Some(cause) => {
            let mut tools: Vec<String> = rules.iter().map(|(_, tools)| covered(tools)).collect();
            tools.sort();
            tools.dedup();
            Check::new(
                "fail-closed",
                Status::Problem,
                format!(
                    "denying every call of {} because the rules cannot be read: {cause}",
                    tools.join("; ")
                ),
            )
            .details(details)
            .fix(hook_runtime::way_out(installation))
        }
        None => Check::new(
            "fail-closed",
            Status::Ok,
            format!("{} rule(s) in force, not denying (the rules load)", rules.len()),
        )
        .details(details),
    }
}

/// `1 rule`, `2 rules`.
fn plural(n: usize, what: &str) -> String {
    if n == 1 { format!("1 {what}") } else { format!("{n} {what}s") }
}

/// `2026-11-24 23:59:01 UTC`.
fn time(unix: i64) -> String {
    let seconds = unix.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02} UTC",
        hook_engine::memory::date(unix),
        seconds / 3600,
        seconds / 60 % 60,
        seconds % 60
    )
}

fn as_text(root: &Path, checks: &[Check]) -> String {
    let mut out = format!("hookpack doctor: {}\n\n", root.display());
    for check in checks {
        let _ = writeln!(out, "{:<8} {:<12} {}", check.status.as_str(), check.name, check.summary);
        for detail in &check.details {
            let _ = writeln!(out, "{:21} {detail}", "");
        }
        if let Some(fix) = &check.fix {
            let _ = writeln!(out, "{:21} fix: {fix}", "");
        }
    }
    let problems = checks.iter().filter(|c| c.status == Status::Problem).count();
    out.push('\n');
    let _ = match problems {
        0 => writeln!(out, "healthy"),
        1 => writeln!(out, "1 problem found"),
        n => writeln!(out, "{n} problems found"),
    };
    out
}

fn as_json(root: &Path, checks: &[Check], healthy: bool) -> Value {
    json!({
        "project": root,
        "healthy": healthy,
        "checks": checks.iter().map(|c| json!({
            "name": c.name,
            "status": c.status.as_str(),
            "summary": c.summary,
            "details": c.details,
            "fix": c.fix,
        })).collect::<Vec<_>>(),
    })
}
