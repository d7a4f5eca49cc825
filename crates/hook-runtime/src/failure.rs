//! What a hook does when it could not answer from the rules (reference §5): fail open, and
//! visibly — the failure is counted in the state database (for `hookpack doctor`) and told to
//! the user once per session through `systemMessage`. On `PreToolUse`, a tool covered by a rule
//! marked `fail = "closed"` is denied instead.

use std::path::Path;

use hook_engine::artifact::sources::fnv1a;
use hook_engine::bounded::read_regular;
use hook_model::{EventKind, HookInput, HookOutput, PermissionDecision};
use serde_json::Value;

use crate::notice::first_time;
use crate::respond::{Answer, Answered};
use crate::state::Store;
use crate::{Env, Installation};
use hook_engine::layout;
pub(crate) use hook_engine::layout::FAIL_CLOSED_FILE;

/// The command that gets a user out of a failure to read the rules of `installation`. A fail-closed
/// guard may be denying the Bash tool itself, so it is said as the user runs it: in a
/// terminal, or in Claude Code behind `!` (bash mode runs it in the user's shell, not through
/// the Bash tool, so no hook guards it).
pub fn way_out(installation: &Installation) -> String {
    match installation {
        Installation::Project { root, .. } => format!(
            "run `hookpack compile --project {}` in a terminal, or type `! hookpack compile` in \
             Claude Code",
            root.display()
        ),
        Installation::User { .. } => "run `hookpack compile --user` in a terminal, or type \
                                      `! hookpack compile --user` in Claude Code"
            .to_owned(),
    }
}

/// What is known of the event that failed: from its typed payload, or from the raw JSON when
/// the payload could not be read as the event's type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Failed<'a> {
    /// The event.
    pub(crate) kind: EventKind,
    /// Its session.
    pub(crate) session: &'a str,
    /// Its tool, on tool events.
    pub(crate) tool: Option<&'a str>,
    /// Whether the payload itself could not be read (rather than the rules).
    pub(crate) unreadable_payload: bool,
}

impl<'a> Failed<'a> {
    pub(crate) fn of(input: &'a HookInput) -> Failed<'a> {
        Failed {
            kind: input.kind(),
            session: &input.common.session_id,
            tool: input.tool().map(|(tool, _)| tool.as_str()),
            unreadable_payload: false,
        }
    }

    /// From a payload that did not parse as `kind`'s input: whatever of it can be read.
    pub(crate) fn of_raw(kind: EventKind, payload: &'a Value) -> Failed<'a> {
        let text = |key: &str| payload.get(key).and_then(Value::as_str);
        Failed {
            kind,
            session: text("session_id").unwrap_or(""),
            tool: if kind.is_tool_event() { text("tool_name") } else { None },
            unreadable_payload: true,
        }
    }
}

/// Records and announces the failure in `answer.note`; denies a covered tool on `PreToolUse`
/// when the rules could not answer.
pub(crate) fn handle(
    answer: &mut Answer,
    failed: Failed<'_>,
    installation: &Installation,
    env: &Env,
) {
    let Some(note) = answer.note.clone() else { return };
    let Failed { kind, session, tool, unreadable_payload } = failed;

    let mut denied = None;
    if kind == EventKind::PreToolUse && answer.output.is_none() {
        let (rules, users) = fail_closed_rules(installation, env, tool);
        if !rules.is_empty() {
            let tool = tool.unwrap_or("this tool");
            let mut output = HookOutput::empty(kind);
            if let HookOutput::PreToolUse(o) = &mut output {
                let s = &mut o.hook_specific_output;
                s.permission_decision = Some(PermissionDecision::Deny);
                let (what, fix) = if unreadable_payload {
                    // A guard of the user's own is turned off in the user's config (a project's
                    // files cannot: reference §1).
                    let config = match (&users, env.user_config_dir()) {
                        (users, Some(user)) if users.contains(&rules[0]) => {
                            user.join(layout::CONFIG_FILE).display().to_string()
                        }
                        _ => ".claude/hookpack/hookpack.local.toml".to_owned(),
                    };
                    (
                        "this call's payload",
                        format!(
                            "update hookpack if Claude Code changed its payloads, or turn the \
                             guard off with `disable = [\"{}\"]` in {config} and then {}",
                            rules[0],
                            way_out(installation)
                        ),
                    )
                } else {
                    ("its rules", way_out(installation))
                };
                s.permission_decision_reason = Some(format!(
                    "[hookpack] {} must check every `{tool}` call (fail = \"closed\"), but \
                     hookpack cannot read {what}: {note}. Nothing is wrong with the call \
                     itself. Ask the user to {fix}; `hookpack doctor` shows the details.",
                    rules.join(", "),
                ));
            }
            answer.output = Some(output);
            answer.answered = Answered::FailClosed;
            denied = Some(tool);
        }
    }

    // Recorded after the deny is decided: whatever the database does, the guard holds.
    // Best effort, and brief (`record_failure` waits 200 ms at most for the lock): when the
    // database is what failed, the stderr line is all there is.
    let _ = Store::open(installation)
        .and_then(|mut store| store.record_failure(session, kind.as_str(), &note));

    let key = format!("failure-{:016x}", fnv1a(note.as_bytes()));
    if first_time(installation, kind, session, &key) {
        let told = match (answer.answered, denied) {
            (Answered::FailClosed, Some(tool)) => format!(
                "`{tool}` calls are denied by fail-closed guards until it is fixed. To fix it, \
                 {}; `hookpack doctor` shows the details",
                way_out(installation)
            ),
            // The session state failed, not the rules: nothing to recompile.
            (Answered::FromRules, _) => {
                "the rules still answer; only the session state is lost. If it persists".to_owned()
            }
            // The payload, not the rules: recompiling would not help.
            _ if unreadable_payload => "the rules did not answer this event. If Claude Code \
                                        changed its payloads, update hookpack; `hookpack doctor` \
                                        shows the details"
                .to_owned(),
            _ => format!(
                "hooks answer without their rules until it is fixed. To fix it, {}; \
                 `hookpack doctor` shows the details",
                way_out(installation)
            ),
        };
        let output = answer.output.get_or_insert_with(|| HookOutput::empty(kind));
        output.announce(format!("hookpack: {note}; {told}."));
    }
}

/// The fail-closed rules that cover `tool`: those of the installation's list and, in a project,
/// those of the user's own list (written by `hookpack compile --user`). A project's files cannot
/// take the user's guards away: its list (or its missing artifact) only adds to them.
/// Also returns those of the user's list.
fn fail_closed_rules(
    installation: &Installation,
    env: &Env,
    tool: Option<&str>,
) -> (Vec<String>, Vec<String>) {
    let own = covering(&installation.artifact_path(env).with_file_name(FAIL_CLOSED_FILE), tool);
    let users = match (installation, env.user_config_dir()) {
        (Installation::Project { .. }, Some(user)) => {
            covering(&layout::artifact_in(&user).with_file_name(FAIL_CLOSED_FILE), tool)
        }
        _ => Vec::new(),
    };
    let mut seen = std::collections::BTreeSet::new();
    let all = own.into_iter().chain(users.iter().cloned());
    (all.filter(|rule| seen.insert(rule.clone())).collect(), users)
}

/// The most a fail-closed list is read of: one line per rule.
const MAX_FAIL_CLOSED_BYTES: u64 = 1 << 20;

/// The rules in the fail-closed list at `path` that cover `tool` (every one when the tool is
/// unknown: a payload that names none may be any tool's call).
fn covering(path: &Path, tool: Option<&str>) -> Vec<String> {
    let Ok(bytes) = read_regular(path, MAX_FAIL_CLOSED_BYTES) else { return Vec::new() };
    let text = String::from_utf8_lossy(&bytes);
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .filter(|(_, tools)| {
            // The payload could not be read: a family's member is taken to be covered.
            *tools == "*"
                || tool.is_none_or(|tool| {
                    tools.split('|').any(|name| hook_model::matcher_covers(name, tool, None))
                })
        })
        .map(|(rule, _)| rule.to_owned())
        .collect()
}
