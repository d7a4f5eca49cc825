//! Running the `[[test]]` cases of a pack through the real evaluation path (reference §2.6).

use std::fmt::Write as _;
use std::path::Path;

use hook_engine::artifact::{AlignedBytes, Artifact};
use hook_engine::memory::{self, Memory, RecallFrom};
use hook_engine::{Engine, Facts, Mode, SessionState};
use serde_json::{Value, json};

use crate::compile::{Settings, Sources, compile};
use crate::model::{Decision, Given, Pack, PackTest};

/// The outcome of one test.
#[derive(Clone, Debug)]
pub struct TestOutcome {
    /// The pack's name.
    pub pack: String,
    /// The test's name.
    pub name: String,
    /// Where the test is: `file:line`.
    pub place: String,
    /// What did not hold, each as "expected …, got …"; empty when the test passed.
    pub failures: Vec<String>,
}

impl TestOutcome {
    /// Whether the test passed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The common fields a test's payload gets when it does not give them.
const TEST_SESSION: &str = "hookpack-test";
const TEST_CWD: &str = "/project";

/// Runs every test of `pack` against an artifact compiled from the pack alone, so that a
/// pack's tests do not depend on what else a project uses.
///
/// # Errors
///
/// When the pack cannot be compiled.
pub fn run_tests(pack: &Pack) -> Result<Vec<TestOutcome>, String> {
    if pack.tests.is_empty() {
        return Ok(Vec::new());
    }
    let rules: Vec<_> = pack.rules.iter().collect();
    let compiled = compile(&rules, &Settings::default(), &Sources::default())?;
    let bytes = AlignedBytes::new(&compiled.bytes);
    let artifact = Artifact::parse(bytes.as_slice()).map_err(|e| e.to_string())?;
    let engine = Engine::new(artifact).map_err(|e| e.to_string())?;
    let settings = engine.settings();
    pack.tests.iter().map(|test| run_test(&engine, &settings, pack, test)).collect()
}

/// The failures of `text` (the `what`, shown as `shown`) against the substrings it must and
/// must not contain.
fn substrings(
    what: &str,
    text: &str,
    shown: &str,
    contains: &[String],
    excludes: &[String],
    failures: &mut Vec<String>,
) {
    for needle in contains.iter().filter(|n| !text.contains(n.as_str())) {
        failures.push(format!("expected the {what} to contain {needle:?}, got {shown}"));
    }
    for needle in excludes.iter().filter(|n| text.contains(n.as_str())) {
        failures.push(format!("expected the {what} not to contain {needle:?}, got {shown}"));
    }
}

fn run_test(
    engine: &Engine<'_>,
    settings: &hook_engine::Settings,
    pack: &Pack,
    test: &PackTest,
) -> Result<TestOutcome, String> {
    let payload = with_defaults(&test.event);
    let cwd = payload.get("cwd").and_then(Value::as_str).unwrap_or(TEST_CWD).to_owned();
    let given = &test.given;
    let mut state = initial_state(given);
    // The books the hook keeps before the rules see the state (the prompt counted, …).
    state.begin(test.kind, &payload);
    let facts = Facts {
        kind: test.kind,
        payload: &payload,
        project_root: Some(Path::new(&cwd)),
        state,
        bracket: given.bracket,
    };
    let mut evaluation = engine.evaluate(&facts, Mode::Explain).map_err(|e| e.to_string())?;
    recall(engine, &facts, given, &mut evaluation)?;
    let budget = settings.budget_chars(given.bracket);
    let response = hook_engine::respond(test.kind, &evaluation, Some(budget));
    let expect = &test.expect;
    let mut failures = Vec::new();

    if let Some(decision) = expect.decision {
        let wanted = decision;
        let got = response.decision;
        if got != wanted {
            failures.push(format!("expected decision {}, got {}", name(wanted), name(got)));
        }
    }
    let fired: Vec<&str> = evaluation.fired.iter().map(|f| f.id.as_str()).collect();
    if let Some(rules) = &expect.rules {
        let mut wanted: Vec<&str> = rules.iter().map(String::as_str).collect();
        wanted.sort_unstable();
        let mut got = fired.clone();
        got.sort_unstable();
        if wanted != got {
            failures.push(format!(
                "expected rules [{}], got [{}]",
                wanted.join(", "),
                got.join(", ")
            ));
        }
    }
    let context = response.context.clone().unwrap_or_default();
    let context_shown = format!("{context:?}");
    let (contains, excludes) = (&expect.context_contains, &expect.context_excludes);
    substrings("context", &context, &context_shown, contains, excludes, &mut failures);
    if !expect.answer_contains.is_empty() || !expect.answer_excludes.is_empty() {
        let answer = response.output.clone().render().unwrap_or_default();
        let (contains, excludes) = (&expect.answer_contains, &expect.answer_excludes);
        substrings("answer", &answer, &answer, contains, excludes, &mut failures);
    }
    if let Some(state) = &expect.state {
        let got = &evaluation.state;
        for (what, wanted, actual) in [
            ("agent", &state.agent, &got.agent),
            ("workflow", &state.workflow, &got.workflow),
            ("task", &state.task, &got.task),
        ] {
            if wanted.is_some() && wanted != actual {
                failures.push(format!("expected {what} {wanted:?}, got {actual:?}"));
            }
        }
        for flag in &state.flags {
            if !got.flags.contains(flag) {
                failures.push(format!("expected flag `{flag}` to be set, got {:?}", got.flags));
            }
        }
    }
    for flag in &expect.not_flags {
        if evaluation.state.flags.contains(flag) {
            failures.push(format!(
                "expected flag `{flag}` not to be set, got {:?}",
                evaluation.state.flags
            ));
        }
    }
    if let Some(bracket) = expect.bracket
        && bracket != given.bracket
    {
        failures.push(format!(
            "expected bracket {}, got {} (a test's bracket is `given.bracket`, default fresh)",
            bracket.as_str(),
            given.bracket.as_str()
        ));
    }
    check_captures(expect.captures.as_deref(), &evaluation, &mut failures);
    if !failures.is_empty() {
        let mut detail = format!("fired: [{}]", fired.join(", "));
        for miss in &evaluation.near_misses {
            let _ = write!(detail, "; {miss}");
        }
        failures.push(detail);
    }
    let (line, _) = pack.source.line_col(test.span.start);
    Ok(TestOutcome {
        pack: pack.name.clone(),
        name: test.name.clone(),
        place: format!("{}:{line}", pack.source.path().display()),
        failures,
    })
}

/// Fills the recalls of `evaluation` from the memories the test gives, which stand for the
/// store (oldest first, all of this session); the handoff is made from the test's state.
fn recall(
    engine: &Engine<'_>,
    facts: &Facts<'_>,
    given: &Given,
    evaluation: &mut hook_engine::Evaluation,
) -> Result<(), String> {
    let memories: Vec<Memory> = given
        .memories
        .iter()
        .zip(1..)
        .map(|((namespace, text), id)| Memory {
            id,
            namespace: namespace.clone(),
            text: text.clone(),
            confidence: 1.0,
            created: 0,
        })
        .collect();
    for fired in &mut evaluation.fired {
        let Some(recall) = &fired.recall else { continue };
        let found = match recall.from {
            RecallFrom::Handoff => {
                let active = engine.active_rules(&facts.state).map_err(|e| e.to_string())?;
                memory::handoff(&facts.state, &active, &memories)
            }
            RecallFrom::Path | RecallFrom::Prompt => {
                let found: Vec<Memory> =
                    memory::search(&memories, recall).into_iter().cloned().collect();
                memory::render_recalled(&found)
            }
        };
        if let Some(found) = found {
            fired.add_recalled(found);
        }
    }
    Ok(())
}

/// Whether exactly the `wanted` memories were captured.
fn check_captures(
    wanted: Option<&[(String, String)]>,
    evaluation: &hook_engine::Evaluation,
    failures: &mut Vec<String>,
) {
    let Some(wanted) = wanted else { return };
    let got: Vec<(String, String)> =
        evaluation.captures.iter().map(|c| (c.namespace.clone(), c.text.clone())).collect();
    if wanted != got {
        failures.push(format!("expected captures {wanted:?}, got {got:?}"));
    }
}

/// The session a test starts from.
fn initial_state(given: &Given) -> SessionState {
    SessionState {
        agent: given.state.agent.clone(),
        workflow: given.state.workflow.clone(),
        task: given.state.task.clone(),
        flags: given.state.flags.iter().cloned().collect(),
        prompt_count: given.prompts,
        prompts_since_compaction: given.prompts,
        compactions: given.compactions,
        compaction_pending: false,
        injected: given.injected.iter().map(|id| (id.clone(), given.compactions)).collect(),
    }
}

/// The payload with the common fields filled in.
fn with_defaults(event: &Value) -> Value {
    let mut payload = json!({
        "session_id": TEST_SESSION,
        "transcript_path": "",
        "cwd": TEST_CWD,
        "permission_mode": "default",
    });
    if let (Value::Object(base), Value::Object(given)) = (&mut payload, event) {
        for (k, v) in given {
            base.insert(k.clone(), v.clone());
        }
    }
    payload
}

fn name(decision: Option<Decision>) -> &'static str {
    decision.map_or("none", Decision::as_str)
}
