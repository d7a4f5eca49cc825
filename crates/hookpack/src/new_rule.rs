//! `hookpack new rule PACK/ID`: drafts a rule and its tests from the command line, checks both
//! as `lint` and `test` would, and appends them to the pack (created if need be).
//!
//! The tests are a case the rule must fire on and a near miss it must not, each given or made
//! from the conditions; the draft is run before it is written, so what lands in the pack passes.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, bail};
use hook_engine::layout;
use hook_model::EventKind;
use hook_runtime::confined::Confined;
use rules_compiler::{Layout, SourceFile, parse_pack, run_tests};

use crate::commands::installation;
use crate::import::{toml_list, toml_str};

/// What the command line asks for.
#[derive(Debug, Default)]
pub(crate) struct Draft {
    /// `pack/rule`.
    pub(crate) id: String,
    pub(crate) on: String,
    pub(crate) tool: Option<String>,
    pub(crate) keywords: Vec<String>,
    pub(crate) paths: Vec<String>,
    pub(crate) regex: Vec<String>,
    pub(crate) program: Option<String>,
    pub(crate) subcommand: Option<String>,
    pub(crate) flags: Vec<String>,
    pub(crate) action: Action,
    /// What the rule must fire on: a prompt, a command or a path, by the event and tool.
    pub(crate) fires_on: Vec<String>,
    /// What it must not fire on.
    pub(crate) not_on: Vec<String>,
    pub(crate) dry_run: bool,
}

/// What the rule does.
#[derive(Debug, Default)]
pub(crate) enum Action {
    #[default]
    None,
    Context(String),
    Deny(String),
    Ask(String),
    Block(String),
    Message(String),
}

/// What a sample is, for the rule's event and tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sample {
    Prompt,
    Command,
    Path,
}

/// The folder tests run in ([`rules_compiler::run_tests`]): a path sample is made absolute in it,
/// as Claude Code gives paths.
const TEST_CWD: &str = "/project";

pub(crate) fn new_rule(layout: &Layout, draft: &Draft) -> anyhow::Result<bool> {
    let (pack, id) = match draft.id.split_once('/') {
        Some((pack, id))
            if rules_compiler::is_pack_name(pack) && rules_compiler::is_rule_id(id) =>
        {
            (pack, id)
        }
        _ => bail!(
            "`{}` is not `pack/rule`: a pack name of lowercase letters, digits and `-`, then a \
             rule id of lowercase letters, digits, `-` and `_` (e.g. `project/no-force-push`)",
            draft.id
        ),
    };
    let kind = EventKind::from_name(&draft.on).with_context(|| {
        format!(
            "unknown event `{}` (events are spelled as Claude Code does: PreToolUse, …)",
            draft.on
        )
    })?;
    if matches!(draft.action, Action::None) {
        bail!("say what the rule does: --context, --deny, --ask, --block or --message");
    }
    let installation = installation(layout).context("no project and no user folder")?;
    let confined = Confined::of(&installation);
    let file_name = format!("{pack}.toml");
    let path = confined.path().join(layout::PACKS_DIR).join(&file_name);
    let existing = match std::fs::symlink_metadata(&path) {
        Ok(_) => Some(crate::import::read(&path)?),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };

    if let Some(text) = &existing {
        let source = Arc::new(SourceFile::new(path.clone(), text.clone()));
        let (parsed, _) = parse_pack(&source, path.parent().unwrap_or(Path::new(".")));
        if let Some(other) = parsed.map(|p| p.name).filter(|name| name != pack) {
            bail!(
                "{} is pack `{other}`, not `{pack}`: name the rule `{other}/{id}`",
                path.display()
            );
        }
    }
    let added = drafted(pack, id, kind, draft)?;
    let head = match &existing {
        Some(text) if text.ends_with('\n') => text.clone(),
        Some(text) => format!("{text}\n"),
        None => format!(
            "#:schema ../schemas/rule-pack.schema.json\n[pack]\nname = {}\n",
            toml_str(pack)
        ),
    };
    let text = format!("{head}{added}");

    // The whole pack with the draft, as `lint` and `test` read it: nothing is written unless
    // it is free of errors and its tests pass.
    let source = Arc::new(SourceFile::new(path.clone(), text.clone()));
    let (parsed, diagnostics) = parse_pack(&source, path.parent().unwrap_or(Path::new(".")));
    if !diagnostics.is_silent() {
        eprint!("{}", diagnostics.render());
    }
    let parsed = match parsed {
        Some(pack) if !diagnostics.has_errors() => pack,
        _ => bail!("the draft has errors; nothing written"),
    };
    let outcomes = run_tests(&parsed)?;
    let before = parsed.tests.len() - added.matches("\n[[test]]\n").count();
    let failed: Vec<_> = outcomes.iter().enumerate().filter(|(_, o)| !o.passed()).collect();
    for (_, outcome) in &failed {
        eprintln!("test {}/{} ... FAILED ({})", outcome.pack, outcome.name, outcome.place);
        for failure in &outcome.failures {
            eprintln!("    {failure}");
        }
    }
    if failed.iter().any(|(i, _)| *i < before) {
        bail!(
            "with this rule, tests the pack had fail; nothing written (narrow the rule, or put \
             it in another pack)"
        );
    }
    if !failed.is_empty() {
        bail!(
            "the drafted tests fail; nothing written (give the cases with --fires-on and \
             --not-on, or change the conditions)"
        );
    }

    if draft.dry_run {
        print!("{added}");
        println!("# would append to {} ({} tests pass)", path.display(), outcomes.len());
        return Ok(true);
    }
    let dir =
        confined.dir(layout::PACKS_DIR).with_context(|| format!("writing {}", path.display()))?;
    if existing.is_some() {
        dir.replace(&file_name, text.as_bytes(), true)
    } else {
        dir.create_new(&file_name)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
    }
    .with_context(|| format!("writing {}", path.display()))?;
    print!("{added}");
    let verb = if existing.is_some() { "appended to" } else { "wrote" };
    println!("# {verb} {} ({} tests pass)", path.display(), outcomes.len());
    println!("next: `hookpack test`, then `hookpack compile`");
    Ok(true)
}

/// The rule and its tests, as appended to the pack.
fn drafted(pack: &str, id: &str, kind: EventKind, draft: &Draft) -> anyhow::Result<String> {
    let sample = sample_kind(kind, draft)?;
    if sample.is_none() && !(draft.fires_on.is_empty() && draft.not_on.is_empty()) {
        bail!(
            "{kind} carries no text to match: a test of it is its bare payload; drop --fires-on and --not-on"
        );
    }
    let full_id = format!("{pack}/{id}");
    let mut added = format!("\n{}", rule_text(id, kind, draft));
    match sample {
        None => {
            let fields = bare_fields(kind).with_context(|| {
                format!("`new rule` cannot make a {kind} payload; write the rule's tests by hand")
            })?;
            added.push_str(&test_text(kind, draft, None, fields, &expect_fired(&full_id, draft)));
        }
        Some(sample) => {
            let positives = if draft.fires_on.is_empty() {
                vec![made_positive(sample, draft).with_context(|| {
                    format!("give --fires-on: a {} the rule must fire on", sample_name(sample))
                })?]
            } else {
                draft.fires_on.clone()
            };
            let negatives = if draft.not_on.is_empty() {
                vec![made_negative(sample).to_owned()]
            } else {
                draft.not_on.clone()
            };
            let fires = expect_fired(&full_id, draft);
            let not = format!("{{ not_rules = {} }}", toml_list(std::slice::from_ref(&full_id)));
            for case in &positives {
                added.push_str(&test_text(kind, draft, Some((sample, case)), "", &fires));
            }
            for case in &negatives {
                added.push_str(&test_text(kind, draft, Some((sample, case)), "", &not));
            }
        }
    }
    Ok(added)
}

/// What the event's and tool's samples are: `None` for an event whose text is not a prompt, a
/// command or a path (its test is its bare payload).
fn sample_kind(kind: EventKind, draft: &Draft) -> anyhow::Result<Option<Sample>> {
    if kind == EventKind::UserPromptSubmit {
        return Ok(Some(Sample::Prompt));
    }
    if !kind.is_tool_event() {
        return Ok(None);
    }
    Ok(Some(match tool_of(draft) {
        "Bash" | "PowerShell" | "Monitor" => Sample::Command,
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => Sample::Path,
        other => bail!(
            "`new rule` drafts tests for prompts, shell tools and file tools; for {other}, write \
             the rule's tests by hand"
        ),
    }))
}

/// The tool the tests call: the one `--tool` names (the first of a list), else Bash for a
/// command or a regex, Write for paths.
fn tool_of(draft: &Draft) -> &str {
    match &draft.tool {
        Some(tool) => {
            tool.split(['|', ',']).map(str::trim).find(|t| !t.is_empty()).unwrap_or("Bash")
        }
        None if !draft.paths.is_empty() => "Write",
        None => "Bash",
    }
}

fn sample_name(sample: Sample) -> &'static str {
    match sample {
        Sample::Prompt => "prompt",
        Sample::Command => "command",
        Sample::Path => "path",
    }
}

/// A case the rule fires on, made from its conditions; `None` when they do not say one (a
/// regex alone).
fn made_positive(sample: Sample, draft: &Draft) -> Option<String> {
    match sample {
        Sample::Prompt => {
            let keyword = draft.keywords.first()?;
            Some(format!("please look at the {keyword} part"))
        }
        Sample::Command => {
            let program = draft.program.as_deref()?;
            let mut words = vec![program.replace(['*', '?'], "")];
            words.extend(draft.subcommand.iter().flat_map(|s| {
                s.split_whitespace().map(|w| w.split('|').next().unwrap_or(w).to_owned())
            }));
            words.extend(
                draft
                    .flags
                    .iter()
                    .filter(|f| !f.starts_with('!'))
                    .map(|f| f.split('|').next().unwrap_or(f).to_owned()),
            );
            Some(words.join(" "))
        }
        Sample::Path => {
            let glob = draft.paths.iter().find(|g| !g.starts_with('!'))?;
            Some(example_path(glob))
        }
    }
}

/// A path `glob` matches: `**` and `*` filled with names, the first of `{a,b}` alternatives.
fn example_path(glob: &str) -> String {
    let mut out = String::new();
    let mut chars = glob.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // `**/` matches no folder at all; a last `**`, a file.
            '*' if chars.peek() == Some(&'*') => {
                chars.next();
                if chars.peek() == Some(&'/') {
                    chars.next();
                } else {
                    out.push_str("example");
                }
            }
            '*' => out.push_str("example"),
            '?' => out.push('x'),
            '{' => {
                let mut first = String::new();
                let mut taking = true;
                for c in chars.by_ref() {
                    match c {
                        '}' => break,
                        ',' => taking = false,
                        c if taking => first.push(c),
                        _ => {}
                    }
                }
                out.push_str(&first);
            }
            '[' => {
                // A class: its first character.
                let inner: String = chars.by_ref().take_while(|&c| c != ']').collect();
                out.push(inner.trim_start_matches(['!', '^']).chars().next().unwrap_or('x'));
            }
            c => out.push(c),
        }
    }
    out
}

/// The fields beyond the common ones that Claude Code always sends with `kind`, for a test of an
/// event with no text to match; `None` for events `new rule` does not know how to make.
fn bare_fields(kind: EventKind) -> Option<&'static str> {
    Some(match kind {
        EventKind::Stop | EventKind::SubagentStop => ", stop_hook_active = false",
        EventKind::SessionStart => ", source = 'startup'",
        EventKind::PreCompact => ", trigger = 'auto'",
        EventKind::PostCompact => ", trigger = 'auto', compact_summary = ''",
        EventKind::SessionEnd => ", reason = 'other'",
        EventKind::Notification => {
            ", message = 'Claude needs your permission to use Bash', notification_type = 'permission_prompt'"
        }
        EventKind::SubagentStart => "",
        EventKind::TaskCreated | EventKind::TaskCompleted => {
            ", task_id = '1', task_subject = 'Write the migration'"
        }
        EventKind::TeammateIdle => ", teammate_name = 'reviewer'",
        _ => return None,
    })
}

/// A case the rule most likely does not fire on.
fn made_negative(sample: Sample) -> &'static str {
    match sample {
        Sample::Prompt => "what does this function return?",
        Sample::Command => "ls -la",
        Sample::Path => "README.md",
    }
}

/// The `[[rule]]` table.
fn rule_text(id: &str, kind: EventKind, draft: &Draft) -> String {
    let mut text = format!("[[rule]]\nid = {}\non = {}\n", toml_str(id), toml_str(kind.as_str()));
    if let Some(tool) = &draft.tool {
        let _ = writeln!(text, "tool = {}", toml_str(tool));
    }
    for (key, values) in
        [("keywords", &draft.keywords), ("paths", &draft.paths), ("regex", &draft.regex)]
    {
        if !values.is_empty() {
            let _ = writeln!(text, "{key} = {}", toml_list(values));
        }
    }
    if let Some(program) = &draft.program {
        let mut parts = vec![format!("program = {}", toml_str(program))];
        if let Some(sub) = &draft.subcommand {
            parts.push(format!("subcommand = {}", toml_str(sub)));
        }
        if !draft.flags.is_empty() {
            parts.push(format!("flags = {}", toml_list(&draft.flags)));
        }
        let _ = writeln!(text, "command = {{ {} }}", parts.join(", "));
    }
    let _ = match &draft.action {
        Action::None => Ok(()),
        Action::Context(t) => writeln!(text, "context = {}", toml_str(t)),
        Action::Deny(r) => writeln!(text, "decision = 'deny'\nreason = {}", toml_str(r)),
        Action::Ask(r) => writeln!(text, "decision = 'ask'\nreason = {}", toml_str(r)),
        Action::Block(r) => writeln!(text, "decision = 'block'\nreason = {}", toml_str(r)),
        Action::Message(m) => writeln!(text, "message = {}", toml_str(m)),
    };
    text
}

/// What a test of a case the rule fires on expects.
fn expect_fired(full_id: &str, draft: &Draft) -> String {
    let decision = match draft.action {
        Action::Deny(_) => ", decision = 'deny'",
        Action::Ask(_) => ", decision = 'ask'",
        Action::Block(_) => ", decision = 'block'",
        _ => "",
    };
    format!("{{ rules = {}{decision} }}", toml_list(&[full_id.to_owned()]))
}

/// A `[[test]]` table: the event with the sample where the event carries it.
fn test_text(
    kind: EventKind,
    draft: &Draft,
    sample: Option<(Sample, &str)>,
    bare: &str,
    expect: &str,
) -> String {
    let event = toml_str(kind.as_str());
    let (name, fields) = match sample {
        Some((Sample::Prompt, text)) => (text.to_owned(), format!(", prompt = {}", toml_str(text))),
        Some((Sample::Command, text)) => (
            text.to_owned(),
            format!(
                ", tool_name = {}, tool_input = {{ command = {} }}",
                toml_str(tool_of(draft)),
                toml_str(text)
            ),
        ),
        Some((Sample::Path, text)) => {
            let absolute =
                if text.starts_with('/') { text.to_owned() } else { format!("{TEST_CWD}/{text}") };
            let key = if tool_of(draft) == "NotebookEdit" { "notebook_path" } else { "file_path" };
            (
                text.to_owned(),
                format!(
                    ", tool_name = {}, tool_input = {{ {key} = {} }}",
                    toml_str(tool_of(draft)),
                    toml_str(&absolute)
                ),
            )
        }
        None => (kind.as_str().to_owned(), bare.to_owned()),
    };
    let verb = if expect.contains("not_rules") { "not" } else { "fires" };
    let name = format!("{verb}: {name}");
    format!(
        "\n[[test]]\nname = {}\nevent = {{ hook_event_name = {event}{fields} }}\nexpect = {expect}\n",
        toml_str(&name)
    )
}
