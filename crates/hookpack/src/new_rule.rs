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
use rules_compiler::{Layout, SourceFile, TEST_CWD, parse_pack, run_tests};

use crate::commands::installation;
use crate::import::{toml_list, toml_str};

/// What the command line asks for (`hookpack new rule`'s options).
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("action").required(true)
    .args(["context", "deny", "ask", "block", "message"])))]
pub(crate) struct Draft {
    /// The rule's full id: PACK/RULE.
    #[arg(value_name = "PACK/RULE")]
    pub(crate) id: String,
    /// The event it answers: `PreToolUse`, `UserPromptSubmit`, `Stop`, …
    #[arg(long, value_name = "EVENT")]
    pub(crate) on: String,
    /// The tools it applies to (`Bash`, `Write|Edit`).
    #[arg(long, value_name = "TOOLS")]
    pub(crate) tool: Option<String>,
    /// A keyword of the text (repeat for more: any of them).
    #[arg(long = "keyword", value_name = "WORD")]
    pub(crate) keywords: Vec<String>,
    /// A glob over the file path (repeat for more).
    #[arg(long = "path", value_name = "GLOB")]
    pub(crate) paths: Vec<String>,
    /// A regex over the text (repeat for more).
    #[arg(long = "regex", value_name = "REGEX", allow_hyphen_values = true)]
    pub(crate) regex: Vec<String>,
    /// The program a command runs (`git`): a `command` condition.
    #[arg(long, value_name = "NAME")]
    pub(crate) program: Option<String>,
    /// Its subcommand (`push`, `stash drop`).
    #[arg(long, value_name = "WORDS", requires = "program")]
    pub(crate) subcommand: Option<String>,
    /// A flag it must be given (`--force`, `-r|--recursive`; repeat for more).
    #[arg(long = "flag", value_name = "FLAG", allow_hyphen_values = true, requires = "program")]
    pub(crate) flags: Vec<String>,
    /// Text for the model.
    #[arg(long, value_name = "TEXT")]
    pub(crate) context: Option<String>,
    /// Deny the tool call, with this reason (what to do instead).
    #[arg(long, value_name = "REASON")]
    pub(crate) deny: Option<String>,
    /// Ask the user, with this reason.
    #[arg(long, value_name = "REASON")]
    pub(crate) ask: Option<String>,
    /// Block (a prompt, a stop, …), with this reason.
    #[arg(long, value_name = "REASON")]
    pub(crate) block: Option<String>,
    /// A message shown to the user.
    #[arg(long, value_name = "TEXT")]
    pub(crate) message: Option<String>,
    /// A prompt, command or path the rule must fire on (repeat for more; default: made from
    /// the conditions).
    #[arg(long, value_name = "CASE", allow_hyphen_values = true)]
    pub(crate) fires_on: Vec<String>,
    /// One it must not fire on (repeat for more; default: an everyday case).
    #[arg(long, value_name = "CASE", allow_hyphen_values = true)]
    pub(crate) not_on: Vec<String>,
    /// Print the draft; write nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// What the rule does.
#[derive(Debug)]
enum Action<'a> {
    Context(&'a str),
    Deny(&'a str),
    Ask(&'a str),
    Block(&'a str),
    Message(&'a str),
}

impl Draft {
    /// What the rule does: the one of `--context`, `--deny`, `--ask`, `--block` and `--message`
    /// given (clap requires exactly one).
    fn action(&self) -> Option<Action<'_>> {
        let Draft { context, deny, ask, block, message, .. } = self;
        context
            .as_deref()
            .map(Action::Context)
            .or(deny.as_deref().map(Action::Deny))
            .or(ask.as_deref().map(Action::Ask))
            .or(block.as_deref().map(Action::Block))
            .or(message.as_deref().map(Action::Message))
    }
}

/// Where a test's case goes in its payload.
#[derive(Clone, Copy, Debug)]
enum Sample {
    /// A file path, absolute under the tests' folder: `tool_input.<argument>`.
    Path(&'static str),
    /// A text the rule's keywords, regexes or command read: a field of the payload, or of
    /// `tool_input` on a tool event.
    Text { field: &'static str, in_input: bool },
}

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
    if draft.action().is_none() {
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
        let (parsed, diagnostics) = read_pack(&path, text);
        if diagnostics.has_errors() {
            eprint!("{}", diagnostics.render());
            bail!("{} has errors; fix them first (nothing written)", path.display());
        }
        if let Some(other) = parsed.map(|p| p.name).filter(|name| name != pack) {
            bail!(
                "{} is pack `{other}`, not `{pack}`: name the rule `{other}/{id}`",
                path.display()
            );
        }
    }
    let head = match &existing {
        Some(text) if text.ends_with('\n') => text.clone(),
        Some(text) => format!("{text}\n"),
        None => format!(
            "#:schema ../schemas/rule-pack.schema.json\n[pack]\nname = {}\n",
            toml_str(pack)
        ),
    };

    // The whole pack with the draft, as `lint` and `test` read it: nothing is written unless it
    // is free of errors and its tests pass.
    let (added, text, outcomes, first_new) = settled(&path, &head, pack, id, kind, draft)?;
    let failed: Vec<_> = outcomes.iter().enumerate().filter(|(_, o)| !o.passed()).collect();
    for (_, outcome) in &failed {
        eprintln!("test {}/{} ... FAILED ({})", outcome.pack, outcome.name, outcome.place);
        for failure in &outcome.failures {
            eprintln!("    {failure}");
        }
    }
    if failed.iter().any(|(i, _)| *i < first_new) {
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

/// The draft appended to `head`, with its tests run: the pack's text, the draft, the outcomes
/// and the index of the draft's first test. A case the rule fires on may fire the pack's other
/// rules too: its test then expects them all (what the pack does), once the rule is among them;
/// a near miss made up that the rule fires on is replaced by the next everyday case.
#[allow(clippy::type_complexity, reason = "one caller, which takes it apart at once")]
fn settled(
    path: &Path,
    head: &str,
    pack: &str,
    id: &str,
    kind: EventKind,
    draft: &Draft,
) -> anyhow::Result<(String, String, Vec<rules_compiler::TestOutcome>, usize)> {
    let full_id = format!("{pack}/{id}");
    let (mut fired, mut near_miss_at) = (Vec::new(), 0);
    loop {
        let (added, count) = drafted(pack, id, kind, draft, &fired, near_miss_at)?;
        let text = format!("{head}{added}");
        let outcomes = verified(path, &text)?;
        let first_new = outcomes.len() - count;
        let new = &outcomes[first_new..];
        // Fired on a case it must fire on, with others of the pack: expect them all.
        let others = new
            .iter()
            .any(|o| !o.passed() && !o.name.starts_with("not: ") && o.fired.contains(&full_id));
        // Fired on the everyday case made for a near miss: try the next one.
        let made_miss_fired = draft.not_on.is_empty()
            && new.iter().any(|o| o.name.starts_with("not: ") && o.fired.contains(&full_id));
        if !(made_miss_fired || others && fired.is_empty()) {
            return Ok((added, text, outcomes, first_new));
        }
        if others && fired.is_empty() {
            fired = new
                .iter()
                .filter(|o| !o.name.starts_with("not: "))
                .map(|o| {
                    let mut ids = o.fired.clone();
                    ids.sort_unstable();
                    ids
                })
                .collect();
        }
        if made_miss_fired {
            near_miss_at += 1;
        }
    }
}

/// `text` read as the pack at `path`.
fn read_pack(
    path: &Path,
    text: &str,
) -> (Option<rules_compiler::Pack>, rules_compiler::Diagnostics) {
    let source = Arc::new(SourceFile::new(path.to_path_buf(), text.to_owned()));
    parse_pack(&source, path.parent().unwrap_or(Path::new(".")))
}

/// The outcomes of the tests of the pack `text` (with the draft), which must have no errors.
fn verified(path: &Path, text: &str) -> anyhow::Result<Vec<rules_compiler::TestOutcome>> {
    let (parsed, diagnostics) = read_pack(path, text);
    if !diagnostics.is_silent() {
        eprint!("{}", diagnostics.render());
    }
    match parsed {
        Some(pack) if !diagnostics.has_errors() => Ok(run_tests(&pack)?),
        _ => bail!("the draft has errors; nothing written"),
    }
}

/// The rule and its tests, as appended to the pack, and how many tests. `fired` gives, per case
/// the rule must fire on, the rules the test expects (default: the rule alone).
fn drafted(
    pack: &str,
    id: &str,
    kind: EventKind,
    draft: &Draft,
    fired: &[Vec<String>],
    near_miss_at: usize,
) -> anyhow::Result<(String, usize)> {
    let sample = sample_of(kind, draft)?;
    let conditions = has_conditions(draft);
    if (sample.is_none() || !conditions) && !draft.not_on.is_empty() {
        bail!("the rule has no condition a case could miss: drop --not-on");
    }
    if sample.is_none() && !draft.fires_on.is_empty() {
        bail!("the rule has no condition on a text or a path of {kind}: drop --fires-on");
    }
    let full_id = format!("{pack}/{id}");
    let mut added = format!("\n{}", rule_text(id, kind, draft));
    let alone = expect_fired(std::slice::from_ref(&full_id), draft);
    let Some(sample) = sample else {
        let expect = fired.first().map_or_else(|| alone.clone(), |ids| expect_fired(ids, draft));
        added.push_str(&test_text(kind, draft, None, &expect)?);
        return Ok((added, 1));
    };
    let positives = if draft.fires_on.is_empty() {
        vec![made_positive(sample, draft).with_context(|| {
            format!("give --fires-on: a {} the rule must fire on", sample_name(sample))
        })?]
    } else {
        draft.fires_on.clone()
    };
    // A rule without conditions takes every call: no near miss.
    let negatives = match (&draft.not_on[..], conditions) {
        (given @ [_, ..], _) => given.to_vec(),
        ([], true) => made_negative(sample, near_miss_at).map(str::to_owned).into_iter().collect(),
        ([], false) => Vec::new(),
    };
    let not = format!("{{ not_rules = {} }}", toml_list(std::slice::from_ref(&full_id)));
    for (i, case) in positives.iter().enumerate() {
        let expect = fired.get(i).map_or_else(|| alone.clone(), |ids| expect_fired(ids, draft));
        added.push_str(&test_text(kind, draft, Some((sample, case)), &expect)?);
    }
    for case in &negatives {
        added.push_str(&test_text(kind, draft, Some((sample, case)), &not)?);
    }
    Ok((added, positives.len() + negatives.len()))
}

/// Whether the rule has conditions beyond its event and tool.
fn has_conditions(draft: &Draft) -> bool {
    !(draft.keywords.is_empty()
        && draft.regex.is_empty()
        && draft.paths.is_empty()
        && draft.program.is_none())
}

/// Where the cases go: a path for `paths` rules, else the text the event's (or the tool's)
/// conditions read; `None` where a test is the event's bare payload (an event with no such
/// text, or a rule with no condition on it).
fn sample_of(kind: EventKind, draft: &Draft) -> anyhow::Result<Option<Sample>> {
    let text_conditions =
        !(draft.keywords.is_empty() && draft.regex.is_empty() && draft.program.is_none());
    if kind.is_tool_event() {
        let tool = tool_of(draft);
        if !draft.paths.is_empty() {
            if text_conditions {
                bail!(
                    "`new rule` drafts tests for a rule on a path or on a text, not both; write \
                     this one's tests by hand"
                );
            }
            let argument = hook_model::path_argument(tool)
                .filter(|_| !matches!(tool, "Glob" | "Grep"))
                .with_context(|| format!("{tool} calls carry no file path for `--path`"))?;
            return Ok(Some(Sample::Path(argument)));
        }
        if kind == EventKind::PostToolUseFailure {
            return Ok(Some(Sample::Text { field: "error", in_input: false }));
        }
        let argument = match tool {
            tool if hook_model::is_shell_tool(tool) => "command",
            "Write" => "content",
            "Edit" => "new_string",
            "NotebookEdit" => "new_source",
            "Read" => "file_path",
            "Glob" | "Grep" => "pattern",
            "WebFetch" => "url",
            "WebSearch" => "query",
            "Agent" | "Task" => "prompt",
            other => bail!(
                "`new rule` does not know the text of a {other} call; write the rule's tests by \
                 hand"
            ),
        };
        return Ok(Some(Sample::Text { field: argument, in_input: true }));
    }
    let field = match kind {
        EventKind::UserPromptSubmit | EventKind::UserPromptExpansion => "prompt",
        EventKind::Stop | EventKind::SubagentStop => "last_assistant_message",
        EventKind::Notification => "message",
        EventKind::PreCompact => "custom_instructions",
        EventKind::PostCompact => "compact_summary",
        _ => return Ok(None),
    };
    let prompt = matches!(kind, EventKind::UserPromptSubmit);
    Ok((text_conditions || prompt).then_some(Sample::Text { field, in_input: false }))
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
        Sample::Path(_) => "path",
        Sample::Text { field: "command", .. } => "command",
        Sample::Text { field: "prompt", in_input: false } => "prompt",
        Sample::Text { .. } => "text",
    }
}

/// A case the rule fires on, made from its conditions; `None` when they do not say one (a
/// regex alone).
fn made_positive(sample: Sample, draft: &Draft) -> Option<String> {
    if let Sample::Path(_) = sample {
        return draft.paths.iter().find_map(|glob| crate::import::sample_path(glob));
    }
    if let Some(program) = draft.program.as_deref() {
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
        return Some(words.join(" "));
    }
    if let Some(keyword) = draft.keywords.first() {
        return Some(format!("please look at the {keyword} part"));
    }
    // No condition on the text: any text will do.
    draft.regex.is_empty().then(|| "an everyday case".to_owned())
}

/// The fields Claude Code always sends with `kind` beyond the common ones and the tool's, as
/// `(key, TOML value)`; `None` for events `new rule` does not know how to make.
fn event_fields(kind: EventKind) -> Option<Vec<(&'static str, &'static str)>> {
    Some(match kind {
        EventKind::UserPromptSubmit
        | EventKind::SubagentStart
        | EventKind::PreToolUse
        | EventKind::PostToolUse
        | EventKind::PermissionRequest => vec![],
        EventKind::Stop => vec![("stop_hook_active", "false")],
        EventKind::SubagentStop => vec![
            ("stop_hook_active", "false"),
            ("agent_id", "'a1'"),
            ("agent_type", "'general-purpose'"),
            ("agent_transcript_path", "''"),
        ],
        EventKind::UserPromptExpansion => vec![
            ("expansion_type", "'slash_command'"),
            ("command_name", "'review'"),
            ("command_args", "''"),
            ("prompt", "''"),
        ],
        EventKind::SessionStart => vec![("source", "'startup'")],
        EventKind::PreCompact => vec![("trigger", "'manual'")],
        EventKind::PostCompact => vec![("trigger", "'auto'"), ("compact_summary", "''")],
        EventKind::SessionEnd => vec![("reason", "'other'")],
        EventKind::Notification => vec![
            ("message", "'Claude needs your permission to use Bash'"),
            ("notification_type", "'permission_prompt'"),
        ],
        EventKind::PostToolUseFailure => vec![("error", "'Exit code 1'")],
        EventKind::PermissionDenied => vec![("reason", "'Denied by the permission rules'")],
        EventKind::TaskCreated | EventKind::TaskCompleted => {
            vec![("task_id", "'1'"), ("task_subject", "'Write the migration'")]
        }
        EventKind::TeammateIdle => vec![("teammate_name", "'reviewer'")],
        _ => return None,
    })
}

/// The `near_miss_at`th everyday case, which the rule most likely does not fire on.
fn made_negative(sample: Sample, near_miss_at: usize) -> Option<&'static str> {
    let cases: &[&str] = match sample {
        Sample::Path(_) => &["README.md", "docs/notes.txt", "assets/logo.png"],
        Sample::Text { field: "command", .. } => &["ls -la", "git status", "echo hello"],
        Sample::Text { .. } => &["what does this function return?", "fix the typo in the docs"],
    };
    cases.get(near_miss_at).copied()
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
    let _ = match draft.action() {
        None => Ok(()),
        Some(Action::Context(t)) => writeln!(text, "context = {}", toml_str(t)),
        Some(Action::Deny(r)) => writeln!(text, "decision = 'deny'\nreason = {}", toml_str(r)),
        Some(Action::Ask(r)) => writeln!(text, "decision = 'ask'\nreason = {}", toml_str(r)),
        Some(Action::Block(r)) => writeln!(text, "decision = 'block'\nreason = {}", toml_str(r)),
        Some(Action::Message(m)) => writeln!(text, "message = {}", toml_str(m)),
    };
    text
}

/// What a test of a case the rule fires on expects: exactly `fired` (the rule, and the pack's
/// other rules that fire on the case too), and the rule's decision.
fn expect_fired(fired: &[String], draft: &Draft) -> String {
    let decision = match draft.action() {
        Some(Action::Deny(_)) => ", decision = 'deny'",
        Some(Action::Ask(_)) => ", decision = 'ask'",
        Some(Action::Block(_)) => ", decision = 'block'",
        _ => "",
    };
    format!("{{ rules = {}{decision} }}", toml_list(fired))
}

/// A `[[test]]` table: the event's payload with the case where the sample goes.
fn test_text(
    kind: EventKind,
    draft: &Draft,
    sample: Option<(Sample, &str)>,
    expect: &str,
) -> anyhow::Result<String> {
    let mut fields: Vec<(&str, String)> = vec![("hook_event_name", toml_str(kind.as_str()))];
    let required = event_fields(kind).with_context(|| {
        format!("`new rule` cannot make a {kind} payload; write the rule's tests by hand")
    })?;
    fields.extend(required.into_iter().map(|(k, v)| (k, v.to_owned())));
    let mut input: Vec<(&str, String)> = Vec::new();
    let tool = tool_of(draft);
    match sample {
        Some((Sample::Path(argument), path)) => {
            let absolute =
                if path.starts_with('/') { path.to_owned() } else { format!("{TEST_CWD}/{path}") };
            input.push((argument, toml_str(&absolute)));
        }
        Some((Sample::Text { field, in_input: true }, text)) => input.push((field, toml_str(text))),
        Some((Sample::Text { field, in_input: false }, text)) => {
            fields.retain(|(k, _)| *k != field);
            fields.push((field, toml_str(text)));
        }
        None => {}
    }
    if kind.is_tool_event() {
        // What Claude Code always gives the tool, where the case is not it.
        let always = match tool {
            "Bash" | "PowerShell" => Some(("command", "make test")),
            "Glob" | "Grep" => None,
            tool => {
                hook_model::path_argument(tool).map(|argument| (argument, "/project/src/main.rs"))
            }
        };
        if let Some((argument, value)) = always
            && !input.iter().any(|(k, _)| *k == argument)
        {
            input.insert(0, (argument, toml_str(value)));
        }
        let input = input.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>();
        fields.push(("tool_name", toml_str(tool)));
        fields.push(("tool_input", format!("{{ {} }}", input.join(", "))));
    }
    let case = sample.map_or(kind.as_str(), |(_, case)| case);
    let verb = if expect.contains("not_rules") { "not" } else { "fires" };
    let fields = fields.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>();
    Ok(format!(
        "\n[[test]]\nname = {}\nevent = {{ {} }}\nexpect = {expect}\n",
        toml_str(&format!("{verb}: {case}")),
        fields.join(", ")
    ))
}
