//! Running the `[[test]]` cases of a pack through the real evaluation path (reference §2.6).

use std::fmt::Write as _;
use std::path::Path;

use hook_engine::artifact::{AlignedBytes, Artifact};
use hook_engine::call::{CallIo, IoError, Surroundings};
use hook_engine::memory::{self, Captured, Memory, Recall};
use hook_engine::{Bracket, Engine, Mode, SessionState};
use hook_model::{HookInput, InputError};
use serde_json::{Value, json};

use crate::compile::{ConfigSettings, Sources, compile};
use crate::error::Error;
use crate::model::{Decision, Expectation, ExpectedCapture, Given, Pack, PackTest, Rule};
use crate::project::{Fate, Loaded};

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
    /// The full ids of the rules that fired, in the order they did.
    pub fired: Vec<String>,
    /// How it goes in the project ([`run_project_tests`]); `None` when run on the pack alone,
    /// or when it failed there.
    pub in_project: Option<InProject>,
}

/// How a test that passes on its pack alone goes in a project, where scopes, overrides and
/// `disable` decide which rules are in force and the project's other rules answer too.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InProject {
    /// As alone: the rules it is about are in force, and it passes against the project's rules.
    Same,
    /// A rule it is about (named in `expect.rules`, or fired alone) is not in force here: the
    /// test says nothing of what the project's hooks do.
    NotInForce {
        /// The rule's full id.
        rule: String,
        /// What became of it.
        fate: Fate,
    },
    /// It fails against the project's rules (the rules of other packs change the answer): what
    /// did not hold.
    Differs(Vec<String>),
}

impl TestOutcome {
    /// Whether the test passed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// The common fields a test's payload gets when it does not give them.
const TEST_SESSION: &str = "hookpack-test";
/// The folder a test runs in when its payload gives no `cwd`: the project's root, which paths
/// in it are relative to.
pub const TEST_CWD: &str = "/project";

/// Runs every test of `pack` against an artifact compiled from the pack alone, so that a
/// pack's tests do not depend on what else a project uses.
///
/// # Errors
///
/// When the pack cannot be compiled.
pub fn run_tests(pack: &Pack) -> Result<Vec<TestOutcome>, Error> {
    if pack.tests.is_empty() {
        return Ok(Vec::new());
    }
    let rules: Vec<_> = pack.rules.iter().collect();
    with_engine(&rules, &ConfigSettings::default(), |engine| {
        let tests = pack.tests.iter();
        tests.map(|test| Ok(run_test(engine, pack, test, false)?.0)).collect()
    })
}

/// Runs every test of every pack `loaded` read, as [`run_tests`] does, then, for each that
/// passes alone, says how it goes in the project ([`InProject`]): whether the rules it is about
/// are in force (not replaced by another scope's rule, nor turned off by `disable`), and
/// whether it passes against the rules in effect with the project's settings (only the pack's
/// own rules count for `expect.rules`; decisions, context and state are the whole answer's).
///
/// # Errors
///
/// When a pack or the project's rules cannot be compiled.
pub fn run_project_tests(loaded: &Loaded) -> Result<Vec<TestOutcome>, Error> {
    let in_force = loaded.rules();
    with_engine(&in_force, &loaded.config.settings(), |project| {
        let mut outcomes = Vec::new();
        for (p, (_, pack)) in loaded.packs.iter().enumerate() {
            if pack.tests.is_empty() {
                continue;
            }
            let rules: Vec<_> = pack.rules.iter().collect();
            with_engine(&rules, &ConfigSettings::default(), |alone| {
                for test in &pack.tests {
                    let (mut outcome, fired) = run_test(alone, pack, test, false)?;
                    if outcome.passed() {
                        let fate = not_in_force(loaded, p, &pack.rules, test, &fired);
                        outcome.in_project = Some(match fate {
                            Some((rule, fate)) => InProject::NotInForce { rule, fate },
                            None => match run_test(project, pack, test, true)?.0.failures {
                                failures if failures.is_empty() => InProject::Same,
                                failures => InProject::Differs(failures),
                            },
                        });
                    }
                    outcomes.push(outcome);
                }
                Ok(())
            })?;
        }
        Ok(outcomes)
    })
}

/// The first rule of pack `p` that `test` is about (named in `expect.rules`, or in `fired`)
/// and that is not in force in `loaded`, with what became of it.
fn not_in_force(
    loaded: &Loaded,
    p: usize,
    rules: &[Rule],
    test: &PackTest,
    fired: &[String],
) -> Option<(String, Fate)> {
    let named = test.expect.rules.iter().flatten().chain(&test.expect.not_rules);
    rules.iter().enumerate().find_map(|(r, rule)| {
        let id = rule.full_id();
        if !fired.contains(&id) && !named.clone().any(|n| *n == id) {
            return None;
        }
        loaded.fate(p, r).map(|fate| (id, fate))
    })
}

/// Compiles `rules` with `settings` and hands the engine reading them to `f`.
fn with_engine<T>(
    rules: &[&Rule],
    settings: &ConfigSettings,
    f: impl FnOnce(&Engine<'_>) -> Result<T, Error>,
) -> Result<T, Error> {
    let compiled = compile(rules, settings, &Sources::default())?;
    let bytes = AlignedBytes::new(&compiled.bytes);
    let engine = Engine::new(Artifact::parse(bytes.as_slice())?)?;
    f(&engine)
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

/// Runs `test` against `engine`; with `own_rules`, `expect.rules` is compared with the pack's
/// rules that fired only (the engine holds other packs' too). Also returns the rules that fired.
fn run_test(
    engine: &Engine<'_>,
    pack: &Pack,
    test: &PackTest,
    own_rules: bool,
) -> Result<(TestOutcome, Vec<String>), Error> {
    let payload = with_defaults(&test.event);
    let cwd = payload.get("cwd").and_then(Value::as_str).unwrap_or(TEST_CWD).to_owned();
    let given = &test.given;
    // Typed as a hook types it: an event Claude Code would never send fails the test.
    let input = match HookInput::from_value(test.kind, &payload) {
        Ok(input) => input,
        Err(err) => return Ok((not_sent(pack, test, &err), Vec::new())),
    };
    // The hook's own steps, with the test's `given` standing for the store and the transcript.
    let mut io = Fixture::new(given);
    let call = hook_engine::call::call(
        engine,
        &input,
        &payload,
        Surroundings {
            // The project is `TEST_CWD`, from it or a folder of it; elsewhere, the folder.
            project_root: Some(Path::new(if Path::new(&cwd).starts_with(TEST_CWD) {
                TEST_CWD
            } else {
                &cwd
            })),
            branch: given.branch.as_deref(),
            // Homes by their shape only: a test answers the same on every machine.
            home: None,
            conversation: &given.conversation,
        },
        Mode::Explain,
        &mut io,
    )?;
    let (evaluation, response) = (&call.evaluation, &call.response);
    // What the store holds after the event: what the hook saved, or, when it did not open the
    // state, what it held before.
    let after = io.saved.unwrap_or(io.state);
    let expect = &test.expect;
    let mut failures: Vec<String> =
        io.problems.iter().map(|p| format!("the hook would say: {p}")).collect();

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
        let own = |id: &&str| !own_rules || id.split_once('/').is_some_and(|(p, _)| p == pack.name);
        let mut got: Vec<&str> = fired.iter().copied().filter(own).collect();
        got.sort_unstable();
        if wanted != got {
            failures.push(format!(
                "expected rules [{}], got [{}]",
                wanted.join(", "),
                got.join(", ")
            ));
        }
    }
    let unwanted: Vec<&str> =
        expect.not_rules.iter().map(String::as_str).filter(|id| fired.contains(id)).collect();
    if !unwanted.is_empty() {
        let (ids, verb) = match unwanted.as_slice() {
            [one] => (format!("`{one}`"), "it did"),
            many => (format!("[{}]", many.join(", ")), "they did"),
        };
        failures.push(format!("expected {ids} not to fire, and {verb}"));
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
    check_state(expect, &after, &mut failures);
    if let Some(bracket) = expect.bracket
        && bracket != given.bracket
    {
        failures.push(format!(
            "expected bracket {}, got {} (a test's bracket is `given.bracket`, default fresh)",
            bracket.as_str(),
            given.bracket.as_str()
        ));
    }
    check_captures(expect.captures.as_deref(), evaluation, &mut failures);
    if !failures.is_empty() {
        let mut detail = format!("fired: [{}]", fired.join(", "));
        // Why each other rule did not fire: of the pack's rules, not of a whole project's.
        for miss in evaluation.near_misses.iter().filter(|_| !own_rules) {
            let _ = write!(detail, "; {miss}");
        }
        failures.push(detail);
    }
    let (line, _) = pack.source.line_col(test.span.start);
    let outcome = TestOutcome {
        pack: pack.name.clone(),
        name: test.name.clone(),
        place: format!("{}:{line}", pack.source.path().display()),
        failures,
        fired: fired.iter().map(|&id| id.to_owned()).collect(),
        in_project: None,
    };
    Ok((outcome, fired.into_iter().map(str::to_owned).collect()))
}

/// The failures of the state `got` against what `expect` says of it.
fn check_state(expect: &Expectation, got: &SessionState, failures: &mut Vec<String>) {
    if let Some(state) = &expect.state {
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
        if got.flags.contains(flag) {
            failures.push(format!("expected flag `{flag}` not to be set, got {:?}", got.flags));
        }
    }
}

/// The outcome of a test whose event a hook would not read (`err`).
fn not_sent(pack: &Pack, test: &PackTest, err: &InputError) -> TestOutcome {
    let (line, _) = pack.source.line_col(test.span.start);
    TestOutcome {
        pack: pack.name.clone(),
        name: test.name.clone(),
        place: format!("{}:{line}", pack.source.path().display()),
        failures: vec![format!("the event is not one Claude Code sends ({err})")],
        fired: Vec::new(),
        in_project: None,
    }
}

/// What a test's `given` stands for: the session's state, its bracket and its memories (oldest
/// first, all of this session; the handoff is made from the state, as by a hook whose
/// `PreCompact` did not run).
struct Fixture {
    state: SessionState,
    bracket: Bracket,
    used_percent: Option<u8>,
    memories: Vec<Memory>,
    /// The state the call saved.
    saved: Option<SessionState>,
    /// What the call could not do.
    problems: Vec<String>,
}

impl Fixture {
    fn new(given: &Given) -> Fixture {
        let memories = given
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
        Fixture {
            state: initial_state(given),
            bracket: given.bracket,
            used_percent: given.used_percent,
            memories,
            saved: None,
            problems: Vec::new(),
        }
    }
}

impl CallIo for Fixture {
    fn open_state(&mut self, _: &hook_engine::Settings) -> Option<SessionState> {
        Some(self.state.clone())
    }

    fn bracket(&mut self, _: &SessionState) -> Bracket {
        self.bracket
    }

    fn used_percent(&mut self) -> Option<u8> {
        self.used_percent
    }

    fn recall(&mut self, recall: &Recall) -> Result<Vec<Memory>, IoError> {
        Ok(memory::search(&self.memories, recall).into_iter().cloned().collect())
    }

    fn recent_memories(&mut self) -> Result<Vec<Memory>, IoError> {
        let keep = memory::HANDOFF_MEMORIES as usize;
        Ok(self.memories[self.memories.len().saturating_sub(keep)..].to_vec())
    }

    fn handoff(&mut self) -> Result<Option<String>, IoError> {
        Ok(None)
    }

    fn set_handoff(&mut self, _: Option<String>) {}

    fn remember(&mut self, _: &Captured) -> Result<(), IoError> {
        Ok(())
    }

    fn save(&mut self, after: SessionState, _: Option<Bracket>) {
        self.saved = Some(after);
    }

    fn problem(&mut self, problem: String) {
        // The fixture's store cannot fail: a problem is the engine's, and the test shows it.
        self.problems.push(problem);
    }
}

/// Whether exactly the `wanted` memories were captured (with the confidence a test names).
fn check_captures(
    wanted: Option<&[ExpectedCapture]>,
    evaluation: &hook_engine::Evaluation,
    failures: &mut Vec<String>,
) {
    let Some(wanted) = wanted else { return };
    let got = &evaluation.captures;
    let same = wanted.len() == got.len()
        && wanted.iter().zip(got).all(|(w, c)| {
            w.namespace == c.namespace
                && w.text == c.text
                && w.confidence.is_none_or(|x| (x - f64::from(c.confidence)).abs() < 0.000_5)
        });
    if !same {
        let shown = |namespace: &str, text: &str, confidence: Option<f64>| match confidence {
            Some(c) => format!("({namespace:?}, {text:?}, {c:.3})"),
            None => format!("({namespace:?}, {text:?})"),
        };
        let wanted: Vec<String> =
            wanted.iter().map(|w| shown(&w.namespace, &w.text, w.confidence)).collect();
        let got: Vec<String> = got
            .iter()
            .map(|c| shown(&c.namespace, &c.text, Some(f64::from(c.confidence))))
            .collect();
        failures.push(format!(
            "expected captures [{}], got [{}]",
            wanted.join(", "),
            got.join(", ")
        ));
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
        branch: given.previous_branch.clone(),
        ..SessionState::default()
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
