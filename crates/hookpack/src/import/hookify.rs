//! `import hookify <dir>`: hookify's rule files (`hookify.<name>.local.md`: front matter with
//! `event`, `pattern` or `conditions`, `action`; the body is the message) as rules, each with a
//! test drawn from its pattern: a command (prompt, text, path) the pattern matches must fire
//! the rule, and one it does not must not.
//!
//! What hookify shows the user only (a `warn`) becomes context the model reads; a `block`
//! denies with the message as the reason the model reads (hookify's denied without one).

use std::path::Path;

use regex_syntax::hir::{Class, Hir, HirKind};

use super::yaml::{Flavor, Yaml, front_matter};
use super::{Pack, Translation, rule_id, texts, toml_list, toml_str, unique};

/// What a hookify event becomes: the hook event, the tools, the default text field.
struct Event {
    on: &'static str,
    tools: Option<&'static str>,
}

fn event(name: &str) -> Option<Event> {
    Some(match name {
        "bash" => Event { on: "PreToolUse", tools: Some("Bash") },
        "file" => Event { on: "PreToolUse", tools: Some("Write|Edit|MultiEdit") },
        "prompt" => Event { on: "UserPromptSubmit", tools: None },
        "stop" => Event { on: "Stop", tools: None },
        _ => return None,
    })
}

/// A hookify condition field on a rule of hook event `on`: the payload path hookpack reads
/// (`None`: the event's own text), and what changes, if anything.
fn field(name: &str, on: &str) -> Result<(Option<&'static str>, Option<&'static str>), String> {
    Ok(match (name, on) {
        ("command" | "new_text" | "content", "PreToolUse") => (None, None),
        ("old_text", "PreToolUse") => (Some("tool_input.old_string"), None),
        ("file_path", "PreToolUse") => (Some("tool_input.file_path"), None),
        ("user_prompt", "UserPromptSubmit") => (
            None,
            Some(
                "hookify read `user_prompt`, which Claude Code does not send: the rule never fired; now it does",
            ),
        ),
        (other, _) => {
            return Err(format!("field `{other}` has nothing to read on a {on} rule"));
        }
    })
}

/// A condition: the field, its regex, and a note. A `regex_match` is case-insensitive, the
/// literal operators are not, as hookify has them.
type Condition = (Option<&'static str>, String, Option<&'static str>);

fn condition(c: &Yaml, on: &str) -> Result<Condition, String> {
    let field_name = c.get("field").and_then(Yaml::as_str).unwrap_or("command");
    let operator = c.get("operator").and_then(Yaml::as_str).unwrap_or("regex_match");
    let pattern = c.get("pattern").and_then(Yaml::as_str).unwrap_or("");
    if pattern.is_empty() {
        return Err(
            "a condition with an empty `pattern`, which hookify matched against nothing".to_owned()
        );
    }
    let (field, note) = field(field_name, on)?;
    let literal = regex::escape(pattern);
    let regex = match operator {
        "regex_match" => format!("(?i){pattern}"),
        "contains" => literal,
        "equals" => format!("^{literal}$"),
        "starts_with" => format!("^{literal}"),
        "ends_with" => format!("{literal}$"),
        other => return Err(format!("operator `{other}` cannot be said as a match")),
    };
    Ok((field, regex, note))
}

pub(super) fn translate(dir: &Path) -> anyhow::Result<Translation> {
    let mut out = Translation::default();
    let mut pack = Pack::new("hookify", "hookify's rules");
    let mut ids = Vec::new();
    let is_rule = |name: &str| name.starts_with("hookify.") && name.ends_with(".local.md");
    // hookify reads its folder's own files, not its subfolders'.
    for (place, _, text) in texts(dir, 0, &is_rule, &mut out)? {
        if let Err(why) = rule(&text, &place, &mut pack, &mut ids, &mut out) {
            out.untranslated.push(format!("{place}: {why}; not imported"));
        }
    }
    if pack.rule_count() > 0 {
        out.packs.push(pack);
    }
    Ok(out)
}

fn rule(
    text: &str,
    place: &str,
    pack: &mut Pack,
    ids: &mut Vec<String>,
    out: &mut Translation,
) -> Result<(), String> {
    let (head, body) = front_matter(text, Flavor::Hookify)?;
    let message = body.trim();
    let get = |key: &str| head.get(key).and_then(Yaml::as_str);
    if get("enabled").is_some_and(|e| e.eq_ignore_ascii_case("false")) {
        return Err("`enabled: false`".to_owned());
    }
    let name = get("name").map_or_else(
        || place.trim_start_matches("hookify.").trim_end_matches(".local.md").to_owned(),
        str::to_owned,
    );
    let event_name = get("event").unwrap_or("all");
    let event = event(event_name).ok_or(format!(
        "event `{event_name}` (every tool call) has no one hook event; write it as a rule per event"
    ))?;
    let action = get("action").unwrap_or("warn");
    if message.is_empty() {
        return Err("no message after the front matter".to_owned());
    }

    let conditions = conditions_of(&head, &event, place, out)?;
    for (_, _, note) in &conditions {
        if let Some(note) = note {
            out.notes.push(format!("{place}: {note}"));
        }
    }
    let fields: Vec<Option<&str>> = conditions.iter().map(|(f, _, _)| *f).collect();
    if conditions.len() > 1 {
        return Err(format!(
            "{} conditions that must all hold; a rule matches one text with any of its regexes",
            conditions.len()
        ));
    }
    for (_, regex, _) in &conditions {
        regex::Regex::new(regex)
            .map_err(|err| format!("pattern `{regex}` is not a Rust regex: {err}"))?;
    }

    let id = unique(&rule_id(&name), ids);
    let tools = get("tool_matcher").map(str::to_owned).or(event.tools.map(str::to_owned));
    let mut keys = vec![("id", toml_str(&id)), ("on", toml_str(event.on))];
    if let Some(tools) = &tools {
        keys.push(("tool", toml_str(tools)));
    }
    if let Some(Some(field)) = fields.first() {
        keys.push(("field", toml_str(field)));
    }
    if let Some((_, regex, _)) = conditions.first() {
        keys.push(("regex", toml_list(std::slice::from_ref(regex))));
    }
    let decision = match (action, event.on) {
        ("block", "PreToolUse") => Some("deny"),
        ("block", _) => Some("block"),
        ("warn", _) => None,
        (other, _) => return Err(format!("action `{other}` is neither warn nor block")),
    };
    match decision {
        Some(decision) => {
            keys.push(("decision", toml_str(decision)));
            keys.push(("reason", toml_str(message)));
        }
        None => {
            keys.push(("context", toml_str(message)));
            out.notes.push(format!("{place}: the warning goes to the model as context (hookify showed it to the user only)"));
        }
    }
    pack.rule(&format!("From {place} ({name})."), &keys);

    if let Some((field, regex, _)) = conditions.first() {
        let rule = Drawn {
            id: &id,
            place,
            on: event.on,
            tools: tools.as_deref(),
            field: *field,
            decision,
        };
        draw_tests(&rule, regex, pack, out);
    }
    Ok(())
}

/// A rule's conditions as hookify reads them: `conditions` when given (then `pattern` is not
/// read), else `pattern` on the event's text.
fn conditions_of(
    head: &Yaml,
    event: &Event,
    place: &str,
    out: &mut Translation,
) -> Result<Vec<Condition>, String> {
    let get = |key: &str| head.get(key).and_then(Yaml::as_str);
    let mut conditions: Vec<Condition> = Vec::new();
    match (head.get("conditions"), get("pattern")) {
        (Some(Yaml::List(list)), pattern) if !list.is_empty() => {
            if pattern.is_some() {
                out.notes.push(format!(
                    "{place}: `pattern` left out: hookify reads `conditions` when both are given"
                ));
            }
            for c in list {
                conditions.push(condition(c, event.on)?);
            }
        }
        (_, Some(pattern)) if !pattern.is_empty() => {
            let shorthand = match event.on {
                "PreToolUse" if event.tools == Some("Bash") => "command",
                "PreToolUse" => "new_text",
                "UserPromptSubmit" => "user_prompt",
                _ => "transcript",
            };
            let c = Yaml::Map(vec![
                ("field".to_owned(), Yaml::Str(shorthand.to_owned())),
                ("pattern".to_owned(), Yaml::Str(pattern.to_owned())),
            ]);
            conditions.push(condition(&c, event.on)?);
        }
        _ => {
            return Err("no `pattern` and no `conditions`: hookify never fired it".to_owned());
        }
    }
    Ok(conditions)
}

/// A rule imported, for the tests drawn from its pattern.
struct Drawn<'a> {
    id: &'a str,
    place: &'a str,
    on: &'static str,
    tools: Option<&'a str>,
    field: Option<&'static str>,
    decision: Option<&'static str>,
}

/// Tests of `rule`: a text its `regex` matches fires it, one it does not match does not.
fn draw_tests(rule: &Drawn<'_>, regex: &str, pack: &mut Pack, out: &mut Translation) {
    let Drawn { id, place, on, tools, field, decision } = *rule;
    let full = format!("hookify/{id}");
    let Ok(compiled) = regex::Regex::new(regex) else { return };
    let hit = sample(regex).filter(|s| compiled.is_match(s));
    let miss = ["ls -la", "hello", "README.md", "x"].into_iter().find(|s| !compiled.is_match(s));
    let expect_hit = match decision {
        Some(decision) => {
            format!("{{ decision = {}, rules = [{}] }}", toml_str(decision), toml_str(&full))
        }
        None => format!("{{ rules = [{}] }}", toml_str(&full)),
    };
    let payload = |text: &str| -> String {
        let tool = tools.and_then(|t| t.split('|').next()).unwrap_or("Bash");
        match (on, field) {
            ("UserPromptSubmit", _) => {
                format!("{{ hook_event_name = \"UserPromptSubmit\", prompt = {} }}", toml_str(text))
            }
            (_, Some("tool_input.old_string")) => format!(
                "{{ hook_event_name = \"PreToolUse\", tool_name = \"Edit\", tool_input = {{ file_path = \"notes.txt\", old_string = {}, new_string = \"x\" }} }}",
                toml_str(text)
            ),
            (_, Some("tool_input.file_path")) => format!(
                "{{ hook_event_name = \"PreToolUse\", tool_name = \"Write\", tool_input = {{ file_path = {}, content = \"x\" }} }}",
                toml_str(text)
            ),
            (_, _) if tool == "Bash" => format!(
                "{{ hook_event_name = \"PreToolUse\", tool_name = \"Bash\", tool_input = {{ command = {} }} }}",
                toml_str(text)
            ),
            (_, _) => format!(
                "{{ hook_event_name = \"PreToolUse\", tool_name = \"Write\", tool_input = {{ file_path = \"notes.txt\", content = {} }} }}",
                toml_str(text)
            ),
        }
    };
    match hit {
        Some(hit) => pack.test(&format!("{id}: {hit}"), &payload(&hit), &expect_hit, ""),
        None => {
            out.notes.push(format!("{place}: no text could be drawn from its pattern for a test"));
        }
    }
    if let Some(miss) = miss {
        pack.test(&format!("{id}: not on {miss}"), &payload(miss), "{ rules = [] }", "");
    }
}

/// A text `regex` matches, built from its syntax: every choice its first, every repetition its
/// least (and at least once where it may not be empty), every class its first character.
pub(super) fn sample(regex: &str) -> Option<String> {
    let hir = regex_syntax::parse(regex).ok()?;
    let mut out = String::new();
    walk(&hir, &mut out, 0).then_some(out)
}

fn walk(hir: &Hir, out: &mut String, depth: usize) -> bool {
    if depth > 64 || out.len() > 4096 {
        return false;
    }
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(literal) => match std::str::from_utf8(&literal.0) {
            Ok(text) => {
                out.push_str(text);
                true
            }
            Err(_) => false,
        },
        HirKind::Class(Class::Unicode(class)) => {
            let Some(range) = class.ranges().first() else { return false };
            // A space or a letter where the class has one, for a readable text.
            let has = |c: char| class.ranges().iter().any(|r| r.start() <= c && c <= r.end());
            let c = if has(' ') {
                ' '
            } else {
                class
                    .ranges()
                    .iter()
                    .find_map(|r| (r.start()..=r.end()).find(char::is_ascii_lowercase))
                    .unwrap_or(range.start())
            };
            out.push(c);
            true
        }
        HirKind::Class(Class::Bytes(class)) => match class.ranges().first() {
            Some(range) if range.start().is_ascii() => {
                out.push(char::from(range.start()));
                true
            }
            _ => false,
        },
        HirKind::Repetition(rep) => (0..rep.min.min(8)).all(|_| walk(&rep.sub, out, depth + 1)),
        HirKind::Capture(capture) => walk(&capture.sub, out, depth + 1),
        HirKind::Concat(parts) => parts.iter().all(|p| walk(p, out, depth + 1)),
        HirKind::Alternation(choices) => choices.first().is_some_and(|c| walk(c, out, depth + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_drawn_from_a_pattern() {
        for pattern in [
            r"rm\s+-rf",
            r"(?i)git\s+push\s+(--force|-f)",
            r"\bconsole\.log\(",
            r"^sudo ",
            r"\.env$",
        ] {
            let text = sample(pattern).unwrap();
            assert!(regex::Regex::new(pattern).unwrap().is_match(&text), "{pattern}: {text:?}");
        }
    }
}
