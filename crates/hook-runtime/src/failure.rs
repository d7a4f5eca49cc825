//! What a hook does when it could not answer from the rules (CONTRACT §7): fail open, and
//! visibly — the failure is counted in the state database (for `hookpack doctor`) and told to
//! the user once per session through `systemMessage`. On `PreToolUse`, a tool covered by a rule
//! marked `fail = "closed"` is denied instead.

use std::path::Path;

use hook_engine::artifact::sources::fnv1a;
use hook_model::{EventKind, HookInput, HookOutput, PermissionDecision};

use crate::respond::{Answer, Answered};
use crate::rules::{announce, first_time};
use crate::state::Store;
use crate::{Env, Installation};

/// The file beside the artifact that lists the tools rules marked `fail = "closed"` cover:
/// one line per rule, `<pack/rule> <Tool>|<Tool>…`, or `<pack/rule> *` for every tool. It is
/// separate from the artifact so that it survives the artifact's damage.
pub const FAIL_CLOSED_FILE: &str = "fail-closed.txt";

/// Records and announces the failure in `answer.note`; denies a covered tool on `PreToolUse`.
pub(crate) fn handle(
    answer: &mut Answer,
    input: &HookInput,
    installation: &Installation,
    env: &Env,
) {
    let Some(note) = answer.note.clone() else { return };
    let kind = input.kind();
    let session = &input.common.session_id;
    // Best effort: when the database is what failed, the stderr line is all there is.
    let _ = Store::open(installation.dir())
        .and_then(|mut store| store.record_failure(session, kind.as_str(), &note));

    if kind == EventKind::PreToolUse
        && answer.output.is_none()
        && let Some((tool, _)) = input.tool()
    {
        let tool = tool.as_str();
        let list = installation.artifact_path(env).with_file_name(FAIL_CLOSED_FILE);
        let rules = covering(&list, tool);
        if !rules.is_empty() {
            let mut output = HookOutput::empty(kind);
            if let HookOutput::PreToolUse(o) = &mut output {
                let s = &mut o.hook_specific_output;
                s.permission_decision = Some(PermissionDecision::Deny);
                s.permission_decision_reason = Some(format!(
                    "[hookpack] {} guard{} `{tool}` and must not be skipped, but hookpack could \
                     not evaluate its rules ({note}). Ask the user to run `hookpack doctor`.",
                    rules.join(", "),
                    if rules.len() == 1 { "s" } else { "" },
                ));
            }
            answer.output = Some(output);
            answer.answered = Answered::FailClosed;
        }
    }

    let key = format!("failure-{:016x}", fnv1a(note.as_bytes()));
    if first_time(installation, input, &key) {
        let output = answer.output.get_or_insert_with(|| HookOutput::empty(kind));
        announce(
            output,
            format!(
                "hookpack: {note}. Hooks answer without their rules until this is fixed; `hookpack doctor` shows the details."
            ),
        );
    }
}

/// The rules in the fail-closed list at `path` that cover `tool`.
fn covering(path: &Path, tool: &str) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    text.lines()
        .filter_map(|line| line.split_once(' '))
        .filter(|(_, tools)| *tools == "*" || tools.split('|').any(|t| t == tool))
        .map(|(rule, _)| rule.to_owned())
        .collect()
}
