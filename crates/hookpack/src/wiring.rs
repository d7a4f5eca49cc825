//! Which hook entries a project needs in Claude Code's settings, and the settings file with
//! them: what `hookpack install` writes, `uninstall` takes out and `doctor` checks.
//!
//! An entry is one matcher group per event, `{"matcher": …, "hooks": [{"type": "command",
//! "command": …}]}`, for exactly the events the compiled rules answer or keep books on, its
//! matcher narrowed to the tools (or sources, triggers, …) every rule of the event names. A
//! handler is hookpack's when its command runs a `hookpack-<event>` binary; everything else in
//! the file is left byte for byte as it was ([`crate::jsonedit`]).

use std::collections::BTreeSet;

use anyhow::{Context, bail};
use hook_engine::Engine;
use hook_engine::artifact::{Artifact, ListRef, StrRef};
use hook_model::EventKind;

use crate::jsonedit::{self, Node, Style, Value};

/// One event's entry as the compiled rules want it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Wanted {
    pub(crate) kind: EventKind,
    /// The exact names the entry is narrowed to; `None`: every call of the event.
    pub(crate) matcher: Option<String>,
}

/// What the rules of one event need its hook to see.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Need {
    Every,
    Named(BTreeSet<String>),
}

impl Need {
    fn add(&mut self, other: Need) {
        match (&mut *self, other) {
            (Need::Every, _) => {}
            (_, Need::Every) => *self = Need::Every,
            (Need::Named(names), Need::Named(more)) => names.extend(more),
        }
    }
}

/// The entries the rules of `artifact` need, in the order of [`EventKind::ALL`]: every event a
/// rule answers, and those whose hooks keep the session's books (prompts counted on
/// `UserPromptSubmit`; compactions on `PreCompact` and `SessionStart`; the handoff written on
/// `PreCompact`). `WorktreeCreate` and `WorktreeRemove` never: a wired `WorktreeCreate` hook
/// replaces Claude Code's own worktree creation, and no rule applies to either.
///
/// # Errors
///
/// When the artifact is damaged.
pub(crate) fn wanted(artifact: &Artifact<'_>) -> anyhow::Result<Vec<Wanted>> {
    let settings = Engine::new(*artifact)?.settings();
    let mut needs: Vec<Option<Need>> = vec![None; EventKind::ALL.len()];
    let mut need = |kind: EventKind, what: Need| {
        if kind.acts_without_rules() {
            return;
        }
        if let Some(at) = EventKind::ALL.iter().position(|k| *k == kind) {
            match &mut needs[at] {
                Some(need) => need.add(what),
                slot @ None => *slot = Some(what),
            }
        }
    };
    for index in 0..artifact.rule_count() {
        let rule = artifact.rule(index)?;
        for &kind in EventKind::ALL.iter().filter(|k| rule.events().contains(**k)) {
            need(kind, rule_need(artifact, &rule, kind)?);
        }
    }
    if settings.counts_prompts {
        need(EventKind::UserPromptSubmit, Need::Every);
    }
    if settings.counts_compactions {
        need(EventKind::PreCompact, Need::Every);
        need(EventKind::SessionStart, Need::Every);
    }
    if settings.writes_handoff {
        need(EventKind::PreCompact, Need::Every);
    }
    Ok(EventKind::ALL
        .iter()
        .zip(needs)
        .filter_map(|(&kind, need)| {
            let matcher = match need? {
                Need::Every => None,
                Need::Named(names) => Some(names.into_iter().collect::<Vec<_>>().join("|")),
            };
            Some(Wanted { kind, matcher })
        })
        .collect())
}

/// What one rule needs the hook of `kind` to see: the tools it names, or the values it names
/// of the field Claude Code matches for the event; every call where it names none, names them
/// by a regex, or where the event takes no matcher.
fn rule_need(
    artifact: &Artifact<'_>,
    rule: &hook_engine::artifact::RuleView<'_>,
    kind: EventKind,
) -> anyhow::Result<Need> {
    let Some((field, dashes)) = kind.matcher_field() else { return Ok(Need::Every) };
    let exact = |name: &str| {
        !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || (dashes && b == b'-'))
    };
    let names: Vec<String> = if kind.is_tool_event() {
        if rule.tool_regex().is_some() {
            return Ok(Need::Every);
        }
        strings(artifact, rule.tool_names())?
    } else {
        let entries: Vec<u32> = artifact.list(rule.fields())?.iter().collect();
        let mut names = None;
        for entry in entries.chunks_exact(4) {
            if artifact.str(StrRef { offset: entry[0], len: entry[1] })? != field {
                continue;
            }
            let values = artifact.str(StrRef { offset: entry[2], len: entry[3] })?;
            let values: Vec<serde_json::Value> =
                serde_json::from_str(values).context("a rule's field values")?;
            let strings: Option<Vec<String>> =
                values.iter().map(|v| v.as_str().map(str::to_owned)).collect();
            // Values that are not strings match nothing Claude Code sends as this field.
            names = Some(strings.unwrap_or_default());
        }
        match names {
            Some(names) => names,
            None => return Ok(Need::Every),
        }
    };
    if names.is_empty() || !names.iter().all(|n| exact(n)) {
        return Ok(Need::Every);
    }
    Ok(Need::Named(names.into_iter().collect()))
}

fn strings(artifact: &Artifact<'_>, list: ListRef) -> anyhow::Result<Vec<String>> {
    let words = artifact.list(list)?;
    (0..words.len() / 2)
        .map(|i| {
            let text =
                artifact.str(StrRef { offset: words.get(2 * i), len: words.get(2 * i + 1) })?;
            Ok(text.to_owned())
        })
        .collect()
}

/// The hookpack binary a hook command runs: the file name of its first word, when that is
/// `hookpack-<event>` or `hookpack-hook`. The word is read as a shell reads it (quotes
/// removed; `$HOME` and the like left as written).
pub(crate) fn hook_binary(command: &str) -> Option<String> {
    let word = first_word(command);
    let name = word.rsplit('/').next().unwrap_or(&word);
    let event = name.strip_prefix("hookpack-")?;
    (EventKind::from_kebab(event).is_some() || event == "hook").then(|| name.to_owned())
}

/// The program a shell command runs: its first word, its quotes removed, past variable
/// assignments (`A=1 hookpack-stop`) and `exec`, `env` or `command` in front.
pub(crate) fn first_word(command: &str) -> String {
    let mut rest = command;
    for _ in 0..64 {
        let (word, after) = shell_word(rest);
        let assignment = word.split_once('=').is_some_and(|(name, _)| {
            name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if word.is_empty() || !(assignment || matches!(word.as_str(), "exec" | "env" | "command")) {
            return word;
        }
        rest = after;
    }
    String::new()
}

/// The first word of `command`, its quotes removed, and what follows it.
fn shell_word(command: &str) -> (String, &str) {
    let command = command.trim_start();
    let mut word = String::new();
    let mut chars = command.char_indices();
    let mut end = command.len();
    while let Some((at, c)) = chars.next() {
        match c {
            '\'' => word.extend(chars.by_ref().map(|(_, c)| c).take_while(|&c| c != '\'')),
            '"' => {
                while let Some((_, c)) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next().map(|(_, c)| c)),
                        c => word.push(c),
                    }
                }
            }
            '\\' => word.extend(chars.next().map(|(_, c)| c)),
            c if c.is_whitespace() || ";&|<>()".contains(c) => {
                end = at;
                break;
            }
            c => word.push(c),
        }
    }
    (word, &command[end..])
}

/// A hookpack handler found in a settings file.
#[derive(Clone, Debug)]
pub(crate) struct Found {
    /// The event key it is under, as written.
    pub(crate) event: String,
    /// Its group's matcher; `None` when the group has none.
    pub(crate) matcher: Option<String>,
    /// Its command.
    pub(crate) command: String,
    /// The binary's file name, `hookpack-<event>`.
    pub(crate) binary: String,
    /// Whether its group holds other handlers too (wired by hand).
    pub(crate) shared: bool,
}

/// The document of a settings file and its `hooks` object.
struct Settings {
    root: Node,
}

impl Settings {
    fn parse(text: &str) -> anyhow::Result<Settings> {
        let root = jsonedit::parse(text).map_err(anyhow::Error::msg)?;
        let Some(members) = root.members() else { bail!("it is not a JSON object") };
        if members.iter().filter(|m| m.key == "hooks").count() > 1 {
            bail!("it has `hooks` twice, and Claude Code reads only the last: merge them first");
        }
        if let Some((_, hooks)) = root.member("hooks") {
            let Some(events) = hooks.members() else { bail!("its `hooks` is not an object") };
            for (i, event) in events.iter().enumerate() {
                if events[..i].iter().any(|e| e.key == event.key) {
                    bail!(
                        "its `hooks` has `{}` twice, and Claude Code reads only the last: merge \
                         them first",
                        event.key
                    );
                }
            }
        }
        Ok(Settings { root })
    }

    fn hooks(&self) -> Option<&Node> {
        self.root.member("hooks").map(|(_, hooks)| hooks)
    }
}

/// Where a hookpack handler is: event member, group, handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    event: usize,
    group: usize,
    handler: usize,
}

/// The hookpack handlers of `text`'s `hooks`, with their places.
fn handlers(text: &str, settings: &Settings) -> Vec<(Place, Found)> {
    let mut found = Vec::new();
    let Some(events) = settings.hooks().and_then(Node::members) else { return found };
    for (e, event) in events.iter().enumerate() {
        for (g, group) in event.value.items().unwrap_or_default().iter().enumerate() {
            let matcher = group.member("matcher").and_then(|(_, m)| as_str(text, m));
            let list = group.member("hooks").and_then(|(_, h)| h.items()).unwrap_or_default();
            for (h, handler) in list.iter().enumerate() {
                let Some(command) = handler.member("command").and_then(|(_, c)| as_str(text, c))
                else {
                    continue;
                };
                let Some(binary) = hook_binary(&command) else { continue };
                found.push((
                    Place { event: e, group: g, handler: h },
                    Found {
                        event: event.key.clone(),
                        matcher: matcher.clone(),
                        command,
                        binary,
                        shared: list.len() > 1,
                    },
                ));
            }
        }
    }
    found
}

/// The string `node` holds, when it is one.
fn as_str(text: &str, node: &Node) -> Option<String> {
    serde_json::from_str(&text[node.start..node.end]).ok()
}

/// The hookpack handlers wired in the settings file `text`.
///
/// # Errors
///
/// When `text` is not a JSON object with an object `hooks`.
pub(crate) fn found(text: &str) -> anyhow::Result<Vec<Found>> {
    let settings = Settings::parse(text)?;
    Ok(handlers(text, &settings).into_iter().map(|(_, found)| found).collect())
}

/// Whether a settings file enables hookpack's plugin (`enabledPlugins`: `"hookpack@<market>":
/// true`).
pub(crate) fn enables_plugin(text: &str) -> bool {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else { return false };
    value.get("enabledPlugins").and_then(serde_json::Value::as_object).is_some_and(|plugins| {
        plugins.iter().any(|(id, on)| id.starts_with("hookpack@") && on.as_bool() == Some(true))
    })
}

/// The entry for `wanted`, running `command`.
fn entry(wanted: &Wanted, command: &str) -> Value {
    let handler = Value::Object(vec![
        ("type".into(), Value::String("command".into())),
        ("command".into(), Value::String(command.to_owned())),
    ]);
    let mut group = Vec::new();
    if let Some(matcher) = &wanted.matcher {
        group.push(("matcher".into(), Value::String(matcher.clone())));
    }
    group.push(("hooks".into(), Value::Array(vec![handler])));
    Value::Object(group)
}

/// `text` (a settings file; `None`: there is none) with exactly the hookpack entries `wanted`,
/// each running `command(kind)`: an entry already as wanted is left as it is, one that differs
/// is rewritten in place, a missing one added at the end of its event's list, and every other
/// hookpack handler removed (with its group and its event's list when nothing else is left in
/// them). `wanted` empty: every hookpack handler removed, and `hooks` too when it is left empty.
///
/// # Errors
///
/// When `text` is not a JSON object with an object `hooks`, or an event's entry is not a list.
pub(crate) fn rewire(
    text: Option<&str>,
    wanted: &[Wanted],
    command: &dyn Fn(EventKind) -> String,
) -> anyhow::Result<String> {
    let mut text = text.map_or_else(|| "{\n}\n".to_owned(), str::to_owned);
    let style = Style::of(&text);
    let mut settings = Settings::parse(&text)?;
    let mut removed = false;
    for _ in 0..MAX_EDITS {
        // Kept: the first handler of each wanted event that sits alone in its group.
        let mut kept: Vec<EventKind> = Vec::new();
        let all = handlers(&text, &settings);
        let events = settings.hooks().and_then(Node::members).unwrap_or_default();
        let mut edit = None;
        for (place, found) in &all {
            let event = &events[place.event];
            let group = &event.value.items().unwrap_or_default()[place.group];
            let keep = wanted
                .iter()
                .find(|w| w.kind.as_str() == found.event)
                .filter(|w| !found.shared && !kept.contains(&w.kind));
            if let Some(w) = keep {
                kept.push(w.kind);
                edit = up_to_date(&text, group, place.handler, w, &command(w.kind), &style);
                if edit.is_some() {
                    break;
                }
                continue;
            }
            // A handler to remove: the smallest container it empties goes with it.
            removed = true;
            let handlers = group.member("hooks").map(|(_, h)| h);
            let groups = &event.value;
            edit = Some(match handlers {
                Some(list) if list.items().unwrap_or_default().len() > 1 => {
                    jsonedit::remove_entry(&text, list, place.handler)
                }
                _ if groups.items().unwrap_or_default().len() > 1 => {
                    jsonedit::remove_entry(&text, groups, place.group)
                }
                _ => jsonedit::remove_entry(
                    &text,
                    settings.hooks().unwrap_or(&settings.root),
                    place.event,
                ),
            });
            break;
        }
        if edit.is_none() {
            edit = add_missing(&text, &settings, wanted, &mut kept, command, &style)?;
        }
        if edit.is_none()
            && removed
            && let Some((index, hooks)) = settings.root.member("hooks")
            && hooks.members().is_some_and(<[_]>::is_empty)
        {
            // Emptied by this run: it goes too.
            edit = Some(jsonedit::remove_entry(&text, &settings.root, index));
        }
        let Some(edited) = edit else { return Ok(text) };
        text = edited;
        settings = Settings::parse(&text).context("an edit broke the document (a bug)")?;
    }
    bail!("the settings file takes more than {MAX_EDITS} edits")
}

/// More edits than a settings file of hookpack handlers can need.
const MAX_EDITS: usize = 10_000;

/// The edit that brings hookpack's handler `handler` of `group` up to what `wanted` needs: its
/// group's matcher, then its command; `None` when both are as wanted. Only those two values
/// change: the user's own options on the handler or the group (`timeout`, `if`, …) stay.
fn up_to_date(
    text: &str,
    group: &Node,
    handler: usize,
    wanted: &Wanted,
    command: &str,
    style: &Style,
) -> Option<String> {
    let matcher = group.member("matcher");
    let current = matcher.and_then(|(_, m)| as_str(text, m));
    let every = current.as_deref().is_none_or(|m| m.is_empty() || m == "*");
    match (&wanted.matcher, matcher) {
        (Some(want), Some((_, node))) if current.as_ref() != Some(want) => {
            return Some(jsonedit::replace(text, node, &Value::String(want.clone()), style));
        }
        (Some(want), None) => {
            let value = Value::String(want.clone());
            return Some(jsonedit::insert_member(text, group, "matcher", &value, style));
        }
        (None, Some((index, _))) if !every => {
            return Some(jsonedit::remove_entry(text, group, index));
        }
        _ => {}
    }
    let (_, handlers) = group.member("hooks")?;
    let (_, node) = handlers.items()?.get(handler)?.member("command")?;
    (as_str(text, node).as_deref() != Some(command))
        .then(|| jsonedit::replace(text, node, &Value::String(command.to_owned()), style))
}

/// The edit that adds the first wanted entry not there yet (all of `hooks` at once when the
/// file has none); `None` when every one is there.
fn add_missing(
    text: &str,
    settings: &Settings,
    wanted: &[Wanted],
    kept: &mut Vec<EventKind>,
    command: &dyn Fn(EventKind) -> String,
    style: &Style,
) -> anyhow::Result<Option<String>> {
    let Some(w) = wanted.iter().find(|w| !kept.contains(&w.kind)) else { return Ok(None) };
    let Some(hooks) = settings.hooks() else {
        let all = wanted
            .iter()
            .map(|w| (w.kind.as_str().to_owned(), Value::Array(vec![entry(w, &command(w.kind))])))
            .collect();
        kept.extend(wanted.iter().map(|w| w.kind));
        return Ok(Some(jsonedit::insert_member(
            text,
            &settings.root,
            "hooks",
            &Value::Object(all),
            style,
        )));
    };
    kept.push(w.kind);
    let entry = entry(w, &command(w.kind));
    Ok(Some(match hooks.member(w.kind.as_str()) {
        Some((_, list)) if list.items().is_some() => {
            jsonedit::append_item(text, list, &entry, style)
        }
        Some(_) => bail!("`hooks.{}` is not a list", w.kind),
        None => {
            jsonedit::insert_member(text, hooks, w.kind.as_str(), &Value::Array(vec![entry]), style)
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(kind: EventKind) -> String {
        format!("\"$HOME\"/.local/bin/{}", kind.binary_name())
    }

    fn wanted(list: &[(EventKind, Option<&str>)]) -> Vec<Wanted> {
        list.iter().map(|(kind, m)| Wanted { kind: *kind, matcher: m.map(str::to_owned) }).collect()
    }

    fn json(text: &str) -> serde_json::Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn commands_are_read_as_a_shell_reads_them() {
        for (command, binary) in [
            ("\"$HOME\"/.local/bin/hookpack-pre-tool-use", Some("hookpack-pre-tool-use")),
            ("'/opt/my tools/hookpack-stop' --flag", Some("hookpack-stop")),
            ("hookpack-session-start", Some("hookpack-session-start")),
            ("/usr/bin/hookpack-hook", Some("hookpack-hook")),
            ("/usr/bin/hookpack-nonsense", None),
            ("echo hookpack-stop", None),
            ("node ~/hooks/guard.js", None),
            ("hook\\pack-stop;ls", Some("hookpack-stop")),
            ("A=1 B='x y' exec env hookpack-stop", Some("hookpack-stop")),
            ("command /x/hookpack-stop", Some("hookpack-stop")),
            ("X=1", None),
        ] {
            assert_eq!(hook_binary(command).as_deref(), binary, "{command}");
        }
    }

    #[test]
    fn hookpack_handlers_shared_with_others_move_to_their_own_entry() {
        let text = r#"{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          { "type": "command", "command": "node guard.js" },
          { "type": "command", "command": "hookpack-pre-tool-use" }
        ]
      }
    ],
    "WorktreeCreate": [ { "hooks": [ { "type": "command", "command": "hookpack-worktree-create" } ] } ]
  }
}
"#;
        let want = wanted(&[(EventKind::PreToolUse, Some("Bash|Write"))]);
        let after = rewire(Some(text), &want, &command).unwrap();
        let value = json(&after);
        let groups = value["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "{after}");
        assert_eq!(groups[0]["hooks"].as_array().unwrap().len(), 1, "{after}");
        assert_eq!(groups[0]["hooks"][0]["command"], "node guard.js");
        assert_eq!(groups[1]["matcher"], "Bash|Write");
        assert_eq!(groups[1]["hooks"][0]["command"], command(EventKind::PreToolUse));
        assert!(value["hooks"].get("WorktreeCreate").is_none(), "{after}");
        // Idempotent; and taken out, only the user's handler is left.
        assert_eq!(rewire(Some(&after), &want, &command).unwrap(), after);
        let out = json(&rewire(Some(&after), &[], &command).unwrap());
        assert_eq!(
            out["hooks"]["PreToolUse"][0]["hooks"],
            json(r#"[{"type": "command", "command": "node guard.js"}]"#)
        );
        assert_eq!(out["hooks"].as_object().unwrap().len(), 1);
    }

    #[test]
    fn an_entry_that_changed_is_rewritten_in_place() {
        let text = "{\"hooks\": {\n  \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}],\n  \"PreToolUse\": [{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"/old/hookpack-pre-tool-use\"}]}],\n  \"Notification\": []\n}}\n";
        let want = wanted(&[(EventKind::PreToolUse, None), (EventKind::Stop, None)]);
        let after = rewire(Some(text), &want, &command).unwrap();
        let value = json(&after);
        let keys: Vec<&String> = value["hooks"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["Notification", "PreToolUse", "Stop"]);
        assert!(after.find("\"Stop\"").unwrap() < after.find("\"PreToolUse\"").unwrap(), "{after}");
        assert_eq!(value["hooks"]["PreToolUse"].as_array().unwrap().len(), 1);
        assert!(value["hooks"]["PreToolUse"][0].get("matcher").is_none());
        assert_eq!(value["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert_eq!(value["hooks"]["Notification"], json("[]"));
        // Taken out: the user's `Stop` and the empty `Notification` stay, and so does `hooks`.
        let out = rewire(Some(&after), &[], &command).unwrap();
        assert_eq!(
            json(&out),
            json(
                "{\"hooks\": {\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"x\"}]}], \"Notification\": []}}"
            )
        );
    }

    #[test]
    fn hooks_emptied_by_uninstall_go_and_a_file_without_hooks_gets_them_whole() {
        let want =
            wanted(&[(EventKind::SessionStart, None), (EventKind::PreCompact, Some("auto"))]);
        let fresh = rewire(None, &want, &command).unwrap();
        assert_eq!(json(&fresh)["hooks"]["PreCompact"][0]["matcher"], "auto");
        assert!(fresh.starts_with("{\n  \"hooks\": {\n    \"SessionStart\": [\n"), "{fresh}");
        assert_eq!(rewire(Some(&fresh), &[], &command).unwrap(), "{}\n");
        let empty = "{ \"hooks\": {} }";
        assert_eq!(rewire(Some(empty), &[], &command).unwrap(), empty);
        assert!(rewire(Some("[1]"), &want, &command).is_err());
        assert!(rewire(Some("{\"hooks\": []}"), &want, &command).is_err());
        assert!(
            rewire(
                Some("{\"hooks\": {\"Stop\": 1}}"),
                &wanted(&[(EventKind::Stop, None)]),
                &command
            )
            .is_err()
        );
    }
}
