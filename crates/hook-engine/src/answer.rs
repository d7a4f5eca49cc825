//! Combining what fired into one answer (CONTRACT §4.3).

use std::collections::BTreeMap;

use hook_model::{EventKind, HookOutput, PermissionDecision, PermissionRequestDecision};

use crate::eval::{Decision, Evaluation, Fired};

/// What a hook says for one event.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The JSON answer.
    pub output: HookOutput,
    /// A refusal only exit code 2 can say (`TaskCompleted`, `TeammateIdle`): the reason, for
    /// stderr.
    pub exit_block: Option<String>,
    /// The decision given, if any.
    pub decision: Option<Decision>,
    /// The injected context.
    pub context: Option<String>,
}

/// Combines the rules that fired: the strongest decision with the reasons of every rule that
/// gave it; contexts by layer, then priority, then pack and rule order, each text once and
/// naming its rules; every message.
pub fn respond(kind: EventKind, evaluation: &Evaluation) -> Response {
    let mut output = HookOutput::empty(kind);
    let mut exit_block = None;

    let decision = strongest(kind, &evaluation.fired);
    if let Some(decision) = decision {
        let reasons = reasons(&evaluation.fired, decision);
        match (&mut output, decision) {
            (HookOutput::PreToolUse(o), _) => {
                let s = &mut o.hook_specific_output;
                s.permission_decision = Some(permission(decision));
                s.permission_decision_reason = reasons;
            }
            (HookOutput::PreModelSwitch(o), _) => {
                let s = &mut o.hook_specific_output;
                s.permission_decision = Some(permission(decision));
                s.permission_decision_reason = reasons;
            }
            (HookOutput::PermissionRequest(o), Decision::Deny) => {
                o.hook_specific_output.decision =
                    Some(PermissionRequestDecision::Deny { message: reasons, interrupt: None });
            }
            (HookOutput::PermissionRequest(o), _) => {
                o.hook_specific_output.decision = Some(PermissionRequestDecision::Allow {
                    updated_input: None,
                    updated_permissions: None,
                });
            }
            (HookOutput::TaskCompleted(_) | HookOutput::TeammateIdle(_), Decision::Block) => {
                exit_block = Some(reasons.unwrap_or_default());
            }
            (output, Decision::Block) => {
                // The compiler only lets `block` onto events that read it.
                let _ = output.set_block(reasons.unwrap_or_default());
            }
            _ => {}
        }
    }

    let context = context(&evaluation.fired);
    if let Some(text) = &context {
        let _ = output.set_additional_context(text.clone());
    }
    let mut messages: Vec<&str> = Vec::new();
    for message in evaluation.fired.iter().filter_map(|f| f.message.as_deref()) {
        if !messages.contains(&message) {
            messages.push(message);
        }
    }
    if !messages.is_empty() {
        let _ = output.set_system_message(messages.join("\n"));
    }
    Response { output, exit_block, decision, context }
}

/// deny > ask > allow; `block` wherever it is given.
fn strongest(kind: EventKind, fired: &[Fired]) -> Option<Decision> {
    let given = fired.iter().filter_map(|f| f.decision);
    match kind {
        EventKind::PreToolUse | EventKind::PreModelSwitch | EventKind::PermissionRequest => {
            given.filter(|d| *d != Decision::Block).max_by_key(|d| match d {
                Decision::Allow => 0,
                Decision::Ask => 1,
                Decision::Deny | Decision::Block => 2,
            })
        }
        _ => given.filter(|d| *d == Decision::Block).max(),
    }
}

/// `[pack/rule] reason`, one line per rule that gave `decision`.
fn reasons(fired: &[Fired], decision: Decision) -> Option<String> {
    let lines: Vec<String> = fired
        .iter()
        .filter(|f| f.decision == Some(decision))
        .map(|f| match &f.reason {
            Some(reason) => format!("[{}] {reason}", f.id),
            None => format!("[{}]", f.id),
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

fn permission(decision: Decision) -> PermissionDecision {
    match decision {
        Decision::Allow => PermissionDecision::Allow,
        Decision::Ask => PermissionDecision::Ask,
        Decision::Deny | Decision::Block => PermissionDecision::Deny,
    }
}

/// The contexts of the fired rules: by layer (L0 first), then priority (higher first), then
/// artifact order; a text given by several rules appears once, naming them all.
fn context(fired: &[Fired]) -> Option<String> {
    let mut with_context: Vec<&Fired> = fired.iter().filter(|f| f.context.is_some()).collect();
    with_context.sort_by_key(|f| (f.layer, std::cmp::Reverse(f.priority), f.index));
    let mut sections: Vec<(Vec<&str>, &str)> = Vec::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for f in with_context {
        let text = f.context.as_deref().unwrap_or_default();
        match seen.get(text) {
            Some(&i) => sections[i].0.push(&f.id),
            None => {
                seen.insert(text, sections.len());
                sections.push((vec![&f.id], text));
            }
        }
    }
    if sections.is_empty() {
        return None;
    }
    let parts: Vec<String> = sections
        .iter()
        .map(|(ids, text)| format!("[hookpack: {}]\n{text}", ids.join(", ")))
        .collect();
    Some(parts.join("\n\n"))
}
