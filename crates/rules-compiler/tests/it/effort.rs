//! The evaluation's allowance (`hook_engine::artifact::Effort`): a large real pack spends a
//! small part of it, in explain mode on long texts too; a crafted artifact whose rules all name
//! one long list, one long string or one automaton many times over runs out of it and is refused
//! as malformed, where it would otherwise work for minutes or fill the memory.

use std::path::Path;
use std::time::Instant;

use hook_engine::artifact::format::{
    HEADER_LEN, MATCHER_ENTRY, SECTION_ENTRY_LEN, Section, header, rule,
};
use hook_engine::artifact::{AlignedBytes, Artifact, ArtifactError, checksum};
use hook_engine::{Engine, Evaluation, Facts, Mode, SessionState};
use hook_model::EventKind;
use rules_compiler::{
    Actions, Capture, Conditions, ConfigSettings, FieldCondition, RecallFrom, RecallSpec, Rule,
    Sources, ToolMatcher, compile,
};
use serde_json::{Value, json};

/// Rules in the large pack.
const RULES: usize = 3_000;

/// Tool names in the one long list.
const LONG_LIST: usize = 100_000;

fn rule(id: String, on: &[EventKind], when: Conditions, context: String) -> Rule {
    Rule {
        pack: "big".into(),
        id,
        on: on.to_vec(),
        when,
        then: Actions { context: Some(context), ..Actions::default() },
        span: 0..0,
        automata: Vec::new(),
    }
}

/// A large pack as people write them: tool guards, keyword rules, path rules with field
/// conditions and regex rules (100 distinct regexes), on the prompt and on tool calls; plus one
/// rule with a very long tool list and one with a long context, which crafted artifacts reuse.
fn large_pack() -> Vec<u8> {
    let both = [EventKind::UserPromptSubmit, EventKind::PreToolUse];
    let mut rules = Vec::new();
    for i in 0..RULES {
        let when = match i % 4 {
            0 => Conditions {
                tool: Some(ToolMatcher::Names(vec!["Bash".into(), "Edit".into(), "Write".into()])),
                ..Conditions::default()
            },
            1 => Conditions {
                keywords: (0..5).map(|k| format!("term{i}x{k}")).collect(),
                ..Conditions::default()
            },
            2 => Conditions {
                paths: vec![format!("src/m{}/**/*.rs", i % 10), "lib/**".into()],
                paths_excluded: vec!["**/generated/**".into()],
                fields: vec![FieldCondition {
                    path: "tool_input.replace_all".into(),
                    values: vec![json!(true), json!(false)],
                }],
                ..Conditions::default()
            },
            _ => Conditions {
                regex: vec![format!(r"\bdeploy{}\b", i % 100)],
                field: Some("tool_input.command".into()),
                ..Conditions::default()
            },
        };
        rules.push(rule(
            format!("r{i}"),
            &both,
            when,
            format!("Rule {i}: a convention to follow."),
        ));
    }
    rules.push(rule(
        "long-list".into(),
        &[EventKind::PreToolUse],
        Conditions {
            tool: Some(ToolMatcher::Names((0..LONG_LIST).map(|n| format!("tool{n}")).collect())),
            ..Conditions::default()
        },
        "one".into(),
    ));
    rules.push(rule(
        "long-context".into(),
        &[EventKind::Notification],
        Conditions::default(),
        "y".repeat(1 << 20),
    ));
    let refs: Vec<&Rule> = rules.iter().collect();
    compile(&refs, &ConfigSettings::default(), &Sources::default()).unwrap().bytes
}

fn payload(kind: EventKind) -> Value {
    // Long texts: a 64 KiB command and prompt.
    let long = "deploy7 ".repeat(8 << 10);
    let mut payload = json!({"session_id": "s", "transcript_path": "/t", "cwd": "/p",
                             "permission_mode": "default", "hook_event_name": kind.as_str()});
    let extra = match kind {
        EventKind::UserPromptSubmit => json!({"prompt": format!("term5x1 and {long}")}),
        _ => json!({"tool_name": "Bash", "tool_use_id": "t",
                    "tool_input": {"command": long, "file_path": "/p/src/m2/a/b.rs",
                                   "replace_all": false}}),
    };
    payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    payload
}

/// Evaluates `kind` in `mode`: the outcome and the units spent, of the allowance.
fn evaluate(bytes: &[u8], kind: EventKind, mode: Mode) -> (Result<Evaluation, ArtifactError>, u64) {
    let aligned = AlignedBytes::new(bytes);
    let artifact = Artifact::parse(aligned.as_slice()).unwrap();
    artifact.verify().unwrap();
    let engine = Engine::new(artifact).unwrap();
    let payload = payload(kind);
    let input = crate::typed(kind, &payload).unwrap();
    let facts = Facts {
        input: &input,
        payload: &payload,
        project_root: Some(Path::new("/p")),
        state: SessionState::default(),
        bracket: hook_engine::Bracket::Fresh,
        used_percent: None,
        branch: None,
        home: None,
        conversation: &[],
    };
    let scan = match engine.scan(&facts, mode) {
        Ok(scan) => scan,
        Err(err) => return (Err(err), 0),
    };
    let applies = engine.state_rules_apply(&scan, &facts);
    let evaluation = applies.and_then(|_| engine.evaluate_scanned(&scan, &facts));
    let (spent, limit) = scan.effort();
    assert!(spent <= limit);
    (evaluation, spent)
}

fn limit(bytes: &[u8]) -> u64 {
    hook_engine::artifact::Effort::for_artifact(bytes.len()).limit()
}

#[test]
fn a_large_real_pack_spends_a_small_part_of_the_allowance() {
    let bytes = large_pack();
    let limit = limit(&bytes);
    for kind in [EventKind::UserPromptSubmit, EventKind::PreToolUse] {
        for mode in [Mode::Answer, Mode::Explain] {
            let (evaluation, spent) = evaluate(&bytes, kind, mode);
            let evaluation = evaluation.unwrap_or_else(|e| panic!("{kind} {mode:?}: {e}"));
            assert!(!evaluation.fired.is_empty(), "{kind} {mode:?}: the pack answers");
            // Every rule of the event is checked in explain mode, over 64 KiB texts; 750 rules
            // share 100 regexes over the command, each run once.
            assert!(
                spent < limit / 16,
                "{kind} {mode:?}: {spent} units of {limit}: real packs must stay far below"
            );
            #[allow(clippy::print_stderr, reason = "a figure for the developer")]
            {
                eprintln!("{kind} {mode:?}: {spent} units of {limit}");
            }
        }
    }
}

/// Where section `kind` lies.
fn section(bytes: &[u8], kind: Section) -> (usize, usize) {
    let entry = HEADER_LEN + (kind as usize - 1) * SECTION_ENTRY_LEN;
    (get(bytes, entry + 4) as usize, get(bytes, entry + 8) as usize)
}

fn get(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap())
}

fn put(bytes: &mut [u8], at: usize, value: u32) {
    bytes[at..at + 4].copy_from_slice(&value.to_le_bytes());
}

/// The byte offset of word `slot` of every rule.
fn rule_slots(bytes: &[u8], slot: usize) -> Vec<usize> {
    let (offset, len) = section(bytes, Section::Rules);
    (0..len / (rule::LEN * 4)).map(|i| offset + (i * rule::LEN + slot) * 4).collect()
}

/// The (offset, length) pair at `slot` with the largest length, among all rules.
fn longest(bytes: &[u8], slot: usize) -> (u32, u32) {
    rule_slots(bytes, slot)
        .into_iter()
        .map(|at| (get(bytes, at), get(bytes, at + 4)))
        .max_by_key(|&(_, len)| len)
        .unwrap()
}

fn point_every_rule(bytes: &mut [u8], slot: usize, (offset, len): (u32, u32)) {
    for at in rule_slots(bytes, slot) {
        put(bytes, at, offset);
        put(bytes, at + 4, len);
    }
}

fn seal(mut bytes: Vec<u8>) -> Vec<u8> {
    let crc = checksum(&bytes);
    put(&mut bytes, header::CRC, crc);
    bytes
}

/// Every rule runs out of effort on `crafted`, in both modes; returns the slowest time.
fn runs_out(name: &str, crafted: &[u8], kind: EventKind) {
    for mode in [Mode::Answer, Mode::Explain] {
        let started = Instant::now();
        let (evaluation, _) = evaluate(crafted, kind, mode);
        let elapsed = started.elapsed();
        assert_eq!(evaluation.err(), Some(ArtifactError::Effort), "{name}, {mode:?}");
        #[allow(clippy::print_stderr, reason = "a figure for the developer")]
        {
            eprintln!("{name} ({mode:?}): out of effort after {elapsed:?}");
        }
    }
}

#[test]
fn every_rule_naming_one_long_list_runs_out_of_effort() {
    let good = large_pack();
    let mut bytes = good.clone();
    let list = longest(&good, rule::TOOL_NAMES_L);
    assert_eq!(list.1 as usize, 2 * LONG_LIST, "the long list is the long-list rule's");
    point_every_rule(&mut bytes, rule::TOOL_NAMES_L, list);
    runs_out("every rule names the 100,000-tool list", &seal(bytes), EventKind::PreToolUse);
}

#[test]
fn every_rule_naming_one_long_string_runs_out_of_effort() {
    let good = large_pack();
    // The whole strings section is one valid string, over a megabyte long.
    let (_, strings_len) = section(&good, Section::Strings);
    assert!(strings_len > 1 << 20);
    let whole = (0, u32::try_from(strings_len).unwrap());
    for (name, slot) in [("context", rule::CONTEXT_S), ("id", rule::ID_S)] {
        let mut bytes = good.clone();
        point_every_rule(&mut bytes, slot, whole);
        // Rules that fire on every Bash call copy it; in explain mode the others do too.
        runs_out(
            &format!("every rule's {name} is the whole strings section"),
            &seal(bytes),
            EventKind::PreToolUse,
        );
    }
}

#[test]
fn every_rule_repeating_one_automaton_runs_out_of_effort() {
    let good = large_pack();
    let mut bytes = good.clone();
    // Every rule names regex 0 (the long list's first word made 0), on the 64 KiB command.
    let (list_offset, list_len) = longest(&good, rule::TOOL_NAMES_L);
    let (lists, _) = section(&good, Section::Lists);
    for i in 0..list_len as usize {
        put(&mut bytes, lists + (list_offset as usize + i) * 4, 0);
    }
    point_every_rule(&mut bytes, rule::REGEX_L, (list_offset, 1));
    point_every_rule(&mut bytes, rule::TOOL_NAMES_L, (0, 0));
    // Every regex table entry is one automaton, read again for each index.
    let (regexes, _) = section(&good, Section::Regexes);
    let count = get(&good, regexes) as usize;
    // The first entry's automaton and literal (words 0, 1, 5, 6) copied into every other.
    for word in [0, 1, 5, 6] {
        let first = get(&good, regexes + (1 + word) * 4);
        for i in 1..count {
            put(&mut bytes, regexes + (1 + i * MATCHER_ENTRY + word) * 4, first);
        }
    }
    let crafted = seal(bytes);
    // Regex 0 runs once per text however many rules name it (3,000 scans of the command
    // would spend more than the allowance): what a real pack of one regex rule costs.
    let (evaluation, spent) = evaluate(&crafted, EventKind::PreToolUse, Mode::Answer);
    assert!(evaluation.is_ok(), "{:?}", evaluation.err());
    assert!(spent < limit(&crafted) / 8, "{spent} of {}", limit(&crafted));
    // ... while every rule naming every automaton, over and over, is refused.
    let mut bytes = crafted.clone();
    point_every_rule(&mut bytes, rule::REGEX_L, (list_offset, list_len));
    let words: Vec<u32> = (0..list_len).map(|i| i % u32::try_from(count).unwrap()).collect();
    for (i, w) in words.iter().enumerate() {
        put(&mut bytes, lists + (list_offset as usize + i) * 4, *w);
    }
    runs_out("every rule runs every regex", &seal(bytes), EventKind::PreToolUse);
}

/// Rules and settings compiled into an artifact.
fn compiled(rules: &[Rule], settings: &ConfigSettings) -> Vec<u8> {
    let refs: Vec<&Rule> = rules.iter().collect();
    compile(&refs, settings, &Sources::default()).unwrap().bytes
}

/// Evaluates `payload` (its event's) in answer mode: the outcome, the units spent and the
/// allowance.
fn evaluate_payload(
    bytes: &[u8],
    payload: &Value,
) -> (Result<Evaluation, ArtifactError>, u64, u64) {
    let aligned = AlignedBytes::new(bytes);
    let engine = Engine::new(Artifact::parse(aligned.as_slice()).unwrap()).unwrap();
    let kind = EventKind::from_name(payload["hook_event_name"].as_str().unwrap()).unwrap();
    let input = crate::typed(kind, payload).unwrap();
    let facts = Facts {
        input: &input,
        payload,
        project_root: Some(Path::new("/p")),
        state: SessionState::default(),
        bracket: hook_engine::Bracket::Fresh,
        used_percent: None,
        branch: None,
        home: None,
        conversation: &[],
    };
    let scan = engine.scan(&facts, Mode::Answer).unwrap();
    let evaluation = engine.evaluate_scanned(&scan, &facts);
    let (spent, limit) = scan.effort();
    (evaluation, spent, limit)
}

fn prompt(text: &str) -> Value {
    json!({"hook_event_name": "UserPromptSubmit", "session_id": "s", "transcript_path": "/t",
           "cwd": "/p", "prompt": text})
}

#[test]
fn a_hundred_regexes_over_a_two_mebibyte_write_are_not_refused() {
    // Rules scan the payload: a long one is allowed more work.
    let rules: Vec<Rule> = (0..100)
        .map(|i| {
            let when = Conditions {
                tool: Some(ToolMatcher::Names(vec!["Write".into()])),
                regex: vec![format!(r"secret_key_{i} *= *[a-z0-9_]+")],
                field: Some("tool_input.content".into()),
                ..Conditions::default()
            };
            rule(format!("secret-{i}"), &[EventKind::PreToolUse], when, "no secrets".into())
        })
        .collect();
    let bytes = compiled(&rules, &ConfigSettings::default());
    let content = "let value = compute(input); // an ordinary line of code\n".repeat(40_000);
    assert!(content.len() > 2 << 20);
    let payload = json!({"hook_event_name": "PreToolUse", "session_id": "s", "transcript_path": "/t",
                         "cwd": "/p", "tool_name": "Write", "tool_use_id": "t",
                         "tool_input": {"file_path": "/p/a.rs", "content": content}});
    let started = Instant::now();
    let (evaluation, spent, limit) = evaluate_payload(&bytes, &payload);
    assert!(evaluation.is_ok(), "{:?}: {spent} of {limit}", evaluation.err());
    #[allow(clippy::print_stderr, reason = "a figure for the developer")]
    {
        eprintln!(
            "100 regexes over a 2 MiB Write: {:?}, {spent} units of {limit}",
            started.elapsed()
        );
    }
    // About 55%: some 180 such rules over a 2 MiB text are the most a hook will scan.
    assert!(spent < limit / 4 * 3, "{spent} of {limit}");
}

#[test]
fn what_every_rule_reads_alike_is_read_once() {
    // Star-commands and the terms recall searches by are the same for every rule of an event.
    let stars: Vec<Rule> = (0..2_000)
        .map(|i| {
            let when = Conditions { star: vec![format!("cmd{i}")], ..Conditions::default() };
            rule(format!("star-{i}"), &[EventKind::UserPromptSubmit], when, "s".into())
        })
        .collect();
    let recalls: Vec<Rule> = (0..2_000)
        .map(|i| {
            let mut r = rule(
                format!("recall-{i}"),
                &[EventKind::UserPromptSubmit],
                Conditions::default(),
                "r".into(),
            );
            r.then.recall = Some(RecallSpec { from: RecallFrom::Prompt, max: 3 });
            r
        })
        .collect();
    let text = "*cmd7 please look at the invoices handler and its tests ".repeat(16_000);
    for (name, rules) in [("star", stars), ("recall", recalls)] {
        let bytes = compiled(&rules, &ConfigSettings::default());
        let started = Instant::now();
        let (evaluation, spent, limit) = evaluate_payload(&bytes, &prompt(&text));
        let fired = evaluation.unwrap_or_else(|e| panic!("{name}: {e}")).fired.len();
        assert!(fired >= 1, "{name}");
        // Once: a few passes over the 900 KB prompt, not 2,000.
        assert!(spent < 64 * text.len() as u64, "{name}: {spent} units of {limit}");
        #[allow(clippy::print_stderr, reason = "a figure for the developer")]
        {
            eprintln!(
                "2,000 {name} rules on a {} KB prompt: {:?}",
                text.len() >> 10,
                started.elapsed()
            );
        }
    }
}

#[test]
fn private_tags_and_namespaces_are_paid_for_per_byte() {
    // Every `<` is checked against each private tag: 40,000 of them over 64 KiB of `<` is work
    // no real pack asks for, and is refused.
    let settings = ConfigSettings {
        private_tags: (0..40_000).map(|i| format!("p{i}")).collect(),
        ..ConfigSettings::default()
    };
    let mut capture =
        rule("keep".into(), &[EventKind::UserPromptSubmit], Conditions::default(), "k".into());
    capture.then.context = None;
    capture.then.capture =
        Some(Capture { namespace: None, confidence: 0.9, markers: false, signal: false });
    let bytes = compiled(std::slice::from_ref(&capture), &settings);
    let started = Instant::now();
    let (evaluation, _, _) = evaluate_payload(&bytes, &prompt(&"<".repeat(64 << 10)));
    assert_eq!(evaluation.err(), Some(ArtifactError::Effort));
    #[allow(clippy::print_stderr, reason = "a figure for the developer")]
    {
        eprintln!("40,000 private tags over 64 KiB of `<`: refused after {:?}", started.elapsed());
    }
    // The default tags, the same text: captured.
    let bytes = compiled(&[capture], &ConfigSettings::default());
    let (evaluation, _, _) = evaluate_payload(&bytes, &prompt(&"<".repeat(64 << 10)));
    assert_eq!(evaluation.unwrap().captures.len(), 1);
}

/// Rules whose `command` patterns are all for `git`: per rule, `unmatched` patterns that never
/// match (their subcommands globs, or plain `push` with a flag never given) and then one that
/// matches `git push`.
fn git_rules(rules: usize, unmatched: usize, globbed: bool) -> Vec<Rule> {
    use hook_engine::command::Pattern;
    let git = |subcommand: String, flags: Vec<String>| Pattern {
        program: vec!["git".into()],
        subcommand: vec![subcommand],
        flags,
        ..Pattern::default()
    };
    (0..rules)
        .map(|r| {
            let mut command: Vec<Pattern<String>> = (0..unmatched)
                .map(|j| {
                    if globbed {
                        git(format!("p*never{j}"), Vec::new())
                    } else {
                        git("push".into(), vec![format!("--never{j}")])
                    }
                })
                .collect();
            command.push(git("push".into(), Vec::new()));
            let when = Conditions {
                tool: Some(ToolMatcher::Names(vec!["Bash".into()])),
                command,
                ..Conditions::default()
            };
            rule(format!("r{r}"), &[EventKind::PreToolUse], when, "x".into())
        })
        .collect()
}

fn bash(command: &str) -> Value {
    json!({"hook_event_name": "PreToolUse", "session_id": "s", "transcript_path": "/t",
           "cwd": "/p", "permission_mode": "default", "tool_name": "Bash", "tool_use_id": "t",
           "tool_input": {"command": command}})
}

#[test]
fn command_patterns_are_tried_command_by_command_whatever_their_number() {
    // Every rule's matching pattern comes last: each rule is answered at the first command, as
    // when every pattern is tried on each command in turn, however many patterns come before
    // it and however many commands after; the work stays a small part of the allowance.
    let command = "git push origin; ".repeat(20_000);
    for (rules, globbed) in [(200, true), (100, false)] {
        let bytes = compiled(&git_rules(rules, 29, globbed), &ConfigSettings::default());
        let (evaluation, spent, limit) = evaluate_payload(&bytes, &bash(&command));
        let fired = evaluation.unwrap().fired.len();
        assert_eq!(fired, rules, "globbed: {globbed}");
        assert!(spent < limit / 8, "globbed: {globbed}: {spent} of {limit}");
    }
}
