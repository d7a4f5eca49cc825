//! Combining what fired into one answer (reference §2.3).

use std::collections::BTreeMap;

use hook_model::{
    EventKind, HookOutput, ModelSwitchDecision, PermissionDecision, PermissionRequestDecision,
};

use crate::eval::{Evaluation, Fired};
use crate::rule::Decision;

/// What a hook says for one event.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The JSON answer.
    pub output: HookOutput,
    /// The decision given, if any.
    pub decision: Option<Decision>,
    /// The injected context.
    pub context: Option<String>,
    /// The rules whose context the budget dropped, in the order they were dropped.
    pub dropped: Vec<String>,
}

/// Combines the rules that fired: the strongest decision with the reasons of every rule that
/// gave it; contexts by layer, then priority, then pack and rule order, each text once and
/// naming its rules, within `budget` characters if given; every message.
pub fn respond(kind: EventKind, evaluation: &Evaluation, budget: Option<usize>) -> Response {
    let mut output = HookOutput::empty(kind);

    let judged = judged(evaluation);
    let decision = strongest(kind, &judged);
    if let Some(decision) = decision {
        let reasons = reasons(&judged, decision);
        match (&mut output, decision) {
            (HookOutput::PreToolUse(o), _) => {
                let s = &mut o.hook_specific_output;
                s.permission_decision = Some(permission(decision));
                s.permission_decision_reason = reasons;
            }
            (HookOutput::PreModelSwitch(o), _) => {
                let s = &mut o.hook_specific_output;
                s.permission_decision = Some(match decision {
                    Decision::Allow => ModelSwitchDecision::Allow,
                    Decision::Ask => ModelSwitchDecision::Ask,
                    Decision::Deny | Decision::Block => ModelSwitchDecision::Deny,
                });
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
            (output, Decision::Block) => {
                // The compiler only lets `block` onto events that read it.
                let _ = output.set_block(reasons.unwrap_or_default());
            }
            _ => {}
        }
    }

    // A rewritten call, unless it is denied (a denied call does not run).
    if let (HookOutput::PreToolUse(o), Some(input)) = (&mut output, &evaluation.updated_input)
        && decision != Some(Decision::Deny)
    {
        o.hook_specific_output.updated_input = Some(input.clone());
    }

    let (context, dropped) = context(&evaluation.fired, budget);
    if let Some(text) = &context {
        let _ = output.set_additional_context(text.clone());
    }
    let mut messages: Vec<String> = Vec::new();
    let mut said = std::collections::BTreeSet::new();
    let captured = evaluation.captures.iter().flat_map(|c| {
        let line = c.text.lines().next().unwrap_or_default();
        let shown = crate::memory::cut(line, 80);
        std::iter::once(format!("hookpack remembered ({}): {shown}", c.namespace))
            .chain(c.note.as_ref().map(|note| format!("hookpack: {note}")))
    });
    for message in evaluation.fired.iter().filter_map(|f| f.message.clone()).chain(captured) {
        if said.insert(message.clone()) {
            messages.push(message);
        }
    }
    if !messages.is_empty() {
        let _ = output.set_system_message(messages.join("\n"));
    }
    // Every rule that stops says why, named; the first title given wins.
    let mut stops: Vec<String> = Vec::new();
    for fired in &evaluation.fired {
        if let Some(reason) = &fired.stop {
            stops.push(format!("[{}] {reason}", fired.id));
        }
    }
    if !stops.is_empty() {
        let _ = output.set_stop(stops.join("\n"));
    }
    if let Some(title) = evaluation.fired.iter().find_map(|f| f.session_title.clone()) {
        let _ = output.set_session_title(title);
    }
    let mut watching = std::collections::BTreeSet::new();
    let watched: Vec<String> = evaluation
        .fired
        .iter()
        .flat_map(|f| &f.watch_paths)
        .filter(|path| watching.insert(*path))
        .cloned()
        .collect();
    if !watched.is_empty() {
        let _ = output.set_watch_paths(watched);
    }
    Response { output, decision, context, dropped }
}

/// The rules whose decisions count. A call the rules rewrite is judged as rewritten too (the
/// rules that deny or ask for the new call join, each once), and is never allowed by hookpack:
/// Claude Code's own permission rules judge it as rewritten.
fn judged(evaluation: &Evaluation) -> Vec<&Fired> {
    let rewritten = evaluation.updated_input.is_some();
    let mut judged: Vec<&Fired> = evaluation
        .fired
        .iter()
        .filter(|f| !(rewritten && f.decision == Some(Decision::Allow)))
        .collect();
    for again in &evaluation.rechecked {
        if !judged.iter().any(|f| f.id == again.id) {
            judged.push(again);
        }
    }
    judged
}

/// deny > ask > allow; `block` wherever it is given.
fn strongest(kind: EventKind, fired: &[&Fired]) -> Option<Decision> {
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
fn reasons(fired: &[&Fired], decision: Decision) -> Option<String> {
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

/// One text of the context and the rules that gave it.
struct Section<'e> {
    ids: Vec<&'e str>,
    text: &'e str,
    pinned: bool,
}

impl Section<'_> {
    fn render(&self) -> String {
        format!("[hookpack: {}]\n{}", self.ids.join(", "), self.text)
    }
}

/// The separator between sections.
const GAP: &str = "\n\n";

/// The contexts of the fired rules: by layer (L0 first), then priority (higher first), then
/// artifact order; a text given by several rules appears once, naming them all. Over `budget`
/// characters, whole sections go from the last backwards, pinned ones never, and a trailer
/// names the rules dropped.
fn context(fired: &[Fired], budget: Option<usize>) -> (Option<String>, Vec<String>) {
    let mut with_context: Vec<&Fired> = fired.iter().filter(|f| f.context.is_some()).collect();
    with_context.sort_by_key(|f| (f.layer, std::cmp::Reverse(f.priority), f.index));
    let mut sections: Vec<Section<'_>> = Vec::new();
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for f in with_context {
        let text = f.context.as_deref().unwrap_or_default();
        match seen.get(text) {
            Some(&i) => {
                sections[i].ids.push(&f.id);
                sections[i].pinned |= f.pinned;
            }
            None => {
                seen.insert(text, sections.len());
                sections.push(Section { ids: vec![&f.id], text, pinned: f.pinned });
            }
        }
    }
    let mut parts: Vec<Option<String>> = sections.iter().map(|s| Some(s.render())).collect();
    // The length of the sections kept, with their gaps, kept up to date as sections go.
    let (mut length, mut count) =
        (parts.iter().flatten().map(String::len).sum::<usize>(), parts.len());
    let total = |length: usize, count: usize| length + GAP.len() * count.saturating_sub(1);
    let mut dropped = Vec::new();
    if let Some(budget) = budget {
        for (i, section) in sections.iter().enumerate().rev() {
            if total(length, count) <= budget {
                break;
            }
            if !section.pinned {
                length -= parts[i].take().map_or(0, |part| part.len());
                count -= 1;
                dropped.extend(section.ids.iter().map(|id| (*id).to_owned()));
            }
        }
    }
    let mut kept: Vec<String> = parts.into_iter().flatten().collect();
    if !dropped.is_empty() {
        kept.push(format!(
            "[hookpack: over the context budget of {} tokens; left out {}]",
            budget.unwrap_or_default() / 4,
            dropped.join(", ")
        ));
    }
    ((!kept.is_empty()).then(|| kept.join(GAP)), dropped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule::Layer;

    fn fired(index: u32, id: &str, layer: Layer, text: &str, pinned: bool) -> Fired {
        Fired {
            index,
            id: id.to_owned(),
            layer,
            priority: 0,
            pinned,
            context: Some(text.to_owned()),
            decision: None,
            reason: None,
            message: None,
            stop: None,
            session_title: None,
            watch_paths: Vec::new(),
            rewrite: Vec::new(),
            once: None,
            recall: None,
            command: None,
            observes: false,
            exports: false,
        }
    }

    fn evaluation(fired: Vec<Fired>) -> Evaluation {
        Evaluation { fired, ..Evaluation::default() }
    }

    #[test]
    fn the_budget_drops_whole_sections_from_the_last_layer_backwards_pinned_ones_never() {
        let long = |c: &str| c.repeat(400);
        let e = evaluation(vec![
            fired(0, "p/constitution", Layer::Constitution, &long("c"), true),
            fired(1, "p/global", Layer::Global, &long("g"), false),
            fired(2, "p/agent", Layer::Agent, &long("a"), false),
            fired(3, "p/keyword", Layer::Keyword, &long("k"), false),
            fired(4, "p/command", Layer::Command, &long("s"), true),
        ]);
        let unlimited = respond(EventKind::UserPromptSubmit, &e, None);
        assert!(unlimited.dropped.is_empty());
        let full = unlimited.context.unwrap();

        // Room for three sections: the two pinned ones stay, the keyword layer goes first,
        // then the agent layer; global fits.
        let section = full.len() / 5;
        let budget = section * 3 + 10;
        let r = respond(EventKind::UserPromptSubmit, &e, Some(budget));
        assert_eq!(r.dropped, ["p/keyword", "p/agent"]);
        let text = r.context.unwrap();
        assert!(text.contains("[hookpack: p/constitution]"));
        assert!(text.contains("[hookpack: p/global]"));
        assert!(text.contains("[hookpack: p/command]"));
        assert!(!text.contains("[hookpack: p/agent]"));
        let trailer = format!(
            "[hookpack: over the context budget of {} tokens; left out p/keyword, p/agent]",
            budget / 4
        );
        assert!(text.ends_with(&trailer), "{text}");

        // A budget too small for the pinned sections keeps them anyway.
        let r = respond(EventKind::UserPromptSubmit, &e, Some(10));
        assert_eq!(r.dropped, ["p/keyword", "p/agent", "p/global"]);
        assert!(r.context.unwrap().contains("[hookpack: p/constitution]"));
    }

    #[test]
    fn within_budget_nothing_is_dropped_and_identical_texts_appear_once() {
        let e = evaluation(vec![
            fired(0, "a/one", Layer::Global, "same", false),
            fired(1, "b/two", Layer::Global, "same", false),
        ]);
        let r = respond(EventKind::UserPromptSubmit, &e, Some(3200));
        assert!(r.dropped.is_empty());
        assert_eq!(r.context.as_deref(), Some("[hookpack: a/one, b/two]\nsame"));
    }
}
