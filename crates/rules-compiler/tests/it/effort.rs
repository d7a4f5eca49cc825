//! The evaluation's allowance (`hook_engine::artifact::Effort`): a large real pack spends a
//! small part of it, in explain mode on long texts too; a crafted artifact whose rules all name
//! one long list, one long string or one automaton many times over runs out of it and is refused
//! as malformed, where it would otherwise work for minutes or fill the memory.

use std::path::Path;
use std::time::Instant;

use hook_engine::artifact::format::{HEADER_LEN, SECTION_ENTRY_LEN, Section, header, rule};
use hook_engine::artifact::{AlignedBytes, Artifact, ArtifactError, checksum};
use hook_engine::{Engine, Evaluation, Facts, Mode, SessionState};
use hook_model::EventKind;
use rules_compiler::{
    Actions, Conditions, FieldCondition, Rule, Settings, Sources, ToolMatcher, compile,
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
    compile(&refs, &Settings::default(), &Sources::default()).unwrap().bytes
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
    let facts = Facts {
        kind,
        payload: &payload,
        project_root: Some(Path::new("/p")),
        state: SessionState::default(),
        bracket: hook_engine::Bracket::Fresh,
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
    // The long list's words become regex 0, over and over; every rule runs them on the
    // 64 KiB command.
    let (list_offset, list_len) = longest(&good, rule::TOOL_NAMES_L);
    let (lists, _) = section(&good, Section::Lists);
    for i in 0..list_len as usize {
        put(&mut bytes, lists + (list_offset as usize + i) * 4, 0);
    }
    point_every_rule(&mut bytes, rule::REGEX_L, (list_offset, list_len));
    point_every_rule(&mut bytes, rule::TOOL_NAMES_L, (0, 0));
    // Every regex table entry is one automaton, read again for each index.
    let (regexes, _) = section(&good, Section::Regexes);
    let count = get(&good, regexes) as usize;
    let first = (get(&good, regexes + 4), get(&good, regexes + 8));
    for i in 1..count {
        put(&mut bytes, regexes + (1 + i * 5) * 4, first.0);
        put(&mut bytes, regexes + (1 + i * 5 + 1) * 4, first.1);
    }
    let crafted = seal(bytes);
    // Each rule runs regex 0 once however often its list names it, so this is work a real
    // pack of 3,000 regex rules would do: it stays within the allowance...
    let (evaluation, spent) = evaluate(&crafted, EventKind::PreToolUse, Mode::Answer);
    assert!(evaluation.is_ok() || evaluation.as_ref().err() == Some(&ArtifactError::Effort));
    assert!(spent <= limit(&crafted));
    // ... while naming every automaton once per rule is refused.
    let mut bytes = crafted.clone();
    let words: Vec<u32> = (0..list_len).map(|i| i % u32::try_from(count).unwrap()).collect();
    for (i, w) in words.iter().enumerate() {
        put(&mut bytes, lists + (list_offset as usize + i) * 4, *w);
    }
    runs_out("every rule runs every regex", &seal(bytes), EventKind::PreToolUse);
}
