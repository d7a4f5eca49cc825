//! Crafted artifacts: a CRC is trivial to recompute, so the hooks must survive any bytes that
//! carry a valid one. A generator mutates a real artifact (counts, offsets, list and string
//! references, automaton links and depths, matcher tables, truncations with the header's length
//! fixed up, one rule's references given to every rule), recomputes the CRC, and runs every result
//! through the hooks' own evaluation: no panic, no abort, no hang.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hook_engine::artifact::format::{
    HEADER_LEN, SECTION_ENTRY_LEN, Section, header, keywords, rule,
};
use hook_engine::artifact::sources::sources;
use hook_engine::artifact::{AlignedBytes, Artifact, checksum};
use hook_engine::{Bracket, Engine, Facts, Mode, SessionState, respond};
use hook_model::EventKind;
use rules_compiler::{
    ConfigSettings, DirStamp, FileStamp, SourceFile, Sources, compile, parse_pack,
};
use serde_json::{Value, json};

/// How many crafted artifacts one run evaluates.
const ARTIFACTS: usize = 100_000;

fn base_artifact() -> Vec<u8> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/valid");
    let text = std::fs::read_to_string(dir.join("everything.toml")).unwrap();
    let pack = parse_pack(&Arc::new(SourceFile::new("everything.toml", text)), &dir).0.unwrap();
    let rules: Vec<_> = pack.rules.iter().collect();
    let sources = Sources {
        files: vec![FileStamp {
            path: "/nowhere/everything.toml".into(),
            len: Some(10),
            mtime_ns: 1,
            hash: 2,
        }],
        dirs: vec![DirStamp { path: "/nowhere".into(), names_hash: 3 }],
    };
    compile(&rules, &ConfigSettings::default(), &sources).unwrap().bytes
}

/// xorshift64*: deterministic, so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap()
    }

    /// A value a hostile writer would try.
    fn nasty(&mut self, len: usize) -> u32 {
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        match self.below(9) {
            0 => 0,
            1 => 1,
            2 => u32::MAX,
            3 => u32::MAX / 2,
            4 => u32::MAX / 4 + 1,
            5 => len,
            6 => len / 4,
            7 => u32::try_from(self.below(64)).unwrap(),
            _ => u32::try_from(self.next() >> 32).unwrap(),
        }
    }
}

fn put(bytes: &mut [u8], at: usize, value: u32) {
    if let Some(word) = bytes.get_mut(at..at + 4) {
        word.copy_from_slice(&value.to_le_bytes());
    }
}

fn get(bytes: &[u8], at: usize) -> u32 {
    bytes.get(at..at + 4).map_or(0, |w| u32::from_le_bytes(w.try_into().unwrap()))
}

/// The (offset, length) of section `kind` in a well-formed artifact.
fn section(bytes: &[u8], kind: Section) -> (usize, usize) {
    let entry = HEADER_LEN + (kind as usize - 1) * SECTION_ENTRY_LEN;
    (get(bytes, entry + 4) as usize, get(bytes, entry + 8) as usize)
}

/// One crafted artifact from `good`: a few mutations, then the CRC made right again.
fn craft(good: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut bytes = good.to_vec();
    for _ in 0..=rng.below(3) {
        let kind = Section::ALL[rng.below(Section::ALL.len())];
        let (offset, len) = section(&bytes, kind);
        match rng.below(9) {
            // Any word of any section.
            0 | 1 if len >= 4 => {
                let at = offset + rng.below(len / 4) * 4;
                let value = rng.nasty(bytes.len());
                put(&mut bytes, at, value);
            }
            // The counts at a section's head (keywords, matchers, sources).
            2 if len >= 16 => {
                let at = offset + rng.below(4) * 4;
                let value = rng.nasty(bytes.len());
                put(&mut bytes, at, value);
            }
            // The section table.
            3 => {
                let entry = HEADER_LEN + rng.below(Section::ALL.len()) * SECTION_ENTRY_LEN;
                let field = 4 + rng.below(2) * 4;
                let value = rng.nasty(bytes.len()) & !7;
                put(&mut bytes, entry + field, value);
            }
            // The keyword automaton's links: failure, dictionary, depth, ranges; often cyclic.
            4 | 5 => {
                let (offset, len) = section(&bytes, Section::Keywords);
                if len > 16 {
                    let states = get(&bytes, offset) as usize + 1;
                    let state = rng.below(states);
                    let field = rng.below(keywords::STATE_LEN);
                    let at = offset
                        + (keywords::HEADER + keywords::ROOT + state * keywords::STATE_LEN + field)
                            * 4;
                    let value = match rng.below(3) {
                        0 => u32::try_from(state).unwrap(),
                        1 => u32::try_from(rng.below(states)).unwrap(),
                        _ => rng.nasty(bytes.len()),
                    };
                    put(&mut bytes, at, value);
                    if rng.below(2) == 0 {
                        // A root transition into the mutated state.
                        let byte = rng.below(256);
                        let at = offset + (keywords::HEADER + byte) * 4;
                        put(&mut bytes, at, u32::try_from(state).unwrap());
                    }
                }
            }
            // A truncation the header agrees with.
            6 => {
                let keep = HEADER_LEN + rng.below(bytes.len() - HEADER_LEN);
                bytes.truncate(keep);
                let len = u64::try_from(keep).unwrap().to_le_bytes();
                bytes[header::LENGTH..header::LENGTH + 8].copy_from_slice(&len);
            }
            // Every rule names what one rule names (strings and lists may legally be shared):
            // the work a crafted artifact can ask for by repetition (`Effort`).
            8 => {
                let (offset, len) = section(&bytes, Section::Rules);
                let rules = len / (rule::LEN * 4);
                let slots = [
                    rule::ID_S,
                    rule::CONTEXT_S,
                    rule::TOOL_NAMES_L,
                    rule::PATHS_L,
                    rule::KEYWORDS_L,
                    rule::REGEX_L,
                    rule::FIELDS_L,
                    rule::STAR_L,
                    rule::FLAGS_L,
                    rule::SET_FLAGS_L,
                ];
                let slot = slots[rng.below(slots.len())];
                if rules > 0 {
                    let from = offset + (rng.below(rules) * rule::LEN + slot) * 4;
                    let pair = (get(&bytes, from), get(&bytes, from + 4));
                    for i in 0..rules {
                        let at = offset + (i * rule::LEN + slot) * 4;
                        put(&mut bytes, at, pair.0);
                        put(&mut bytes, at + 4, pair.1);
                    }
                }
            }
            // A random byte anywhere past the magic and version.
            _ => {
                let at = 16 + rng.below(bytes.len() - 16);
                bytes[at] = u8::try_from(rng.below(256)).unwrap();
            }
        }
    }
    if bytes.len() >= HEADER_LEN {
        let crc = checksum(&bytes);
        put(&mut bytes, header::CRC, crc);
    }
    bytes
}

fn payloads() -> Vec<(EventKind, Value)> {
    let common = |event: &str| {
        json!({"hook_event_name": event, "session_id": "s", "transcript_path": "/t",
               "cwd": "/p", "permission_mode": "default"})
    };
    let with = |event: &str, extra: Value| {
        let mut payload = common(event);
        payload.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        (EventKind::from_name(event).unwrap(), payload)
    };
    vec![
        with(
            "UserPromptSubmit",
            json!({"prompt": "@dev the postgres migration *brief [remember] use sql"}),
        ),
        with(
            "PreToolUse",
            json!({"tool_name": "Bash", "tool_use_id": "t",
                                  "tool_input": {"command": "rm -rf / && git push --force"}}),
        ),
        with(
            "PreToolUse",
            json!({"tool_name": "Edit", "tool_use_id": "t",
                                  "tool_input": {"file_path": "/p/src/api/users.ts"}}),
        ),
        with("SessionStart", json!({"source": "compact"})),
        with("Stop", json!({"stop_hook_active": false, "last_assistant_message": "done"})),
    ]
}

/// Everything a hook does with an artifact, on every payload; errors are fine, panics not.
fn run_hooks(bytes: &[u8], payloads: &[(EventKind, Value)]) {
    let aligned = AlignedBytes::new(bytes);
    let Ok(artifact) = Artifact::parse(aligned.as_slice()) else { return };
    if artifact.verify().is_err() {
        return;
    }
    let _ = sources(&artifact);
    let Ok(engine) = Engine::new(artifact) else { return };
    let settings = engine.settings();
    let _ = engine.memory_settings();
    let mut state = SessionState { agent: Some("dev".into()), ..SessionState::default() };
    state.flags.insert("dev-mode".into());
    let _ = engine.active_rules(&state);
    for (kind, payload) in payloads {
        let input = crate::typed(*kind, payload).expect("a payload Claude Code sends");
        let facts = Facts {
            input: &input,
            payload,
            project_root: Some(Path::new("/p")),
            state: state.clone(),
            bracket: Bracket::Moderate,
            used_percent: None,
            branch: None,
            home: None,
            conversation: &[],
        };
        for mode in [Mode::Answer, Mode::Explain] {
            let Ok(scan) = engine.scan(&facts, mode) else { continue };
            let _ = engine.state_rules_apply(&scan, &facts);
            if let Ok(evaluation) = engine.evaluate_scanned(&scan, &facts) {
                let budget = settings.budget_chars(Bracket::Moderate);
                let _ = respond(*kind, &evaluation, Some(budget)).output.render();
            }
        }
    }
}

#[test]
fn crafted_artifacts_never_panic_abort_or_hang() {
    let good = base_artifact();
    let payloads = payloads();
    // The unmutated artifact does evaluate: the generator starts from something real.
    run_hooks(&good, &payloads);

    let (done, finished) = mpsc::channel();
    let worker = std::thread::spawn(move || {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut slowest = (Duration::ZERO, 0);
        for case in 0..ARTIFACTS {
            let crafted = craft(&good, &mut rng);
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| run_hooks(&crafted, &payloads)));
            if outcome.is_err() {
                let path = std::env::temp_dir().join(format!("hookpack-crafted-{case}.hpk"));
                std::fs::write(&path, &crafted).unwrap();
                panic!("crafted artifact {case} panicked; kept at {}", path.display());
            }
            slowest = slowest.max((started.elapsed(), case));
            // Progress for the watchdog: a case that never returns stops these.
            if case % 1_000 == 0 {
                let _ = done.send(case);
            }
        }
        slowest
    });
    let mut last = 0;
    loop {
        match finished.recv_timeout(Duration::from_mins(1)) {
            Ok(case) => last = case,
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("no progress for 60 s after case {last}: a crafted artifact hangs")
            }
        }
    }
    let (slowest, case) = worker.join().expect("the worker reports its panics above");
    // Reported, not asserted: timings belong to benchmarks (`--nocapture` shows it).
    #[allow(clippy::print_stderr, reason = "a figure for the developer")]
    {
        eprintln!("{ARTIFACTS} crafted artifacts; slowest evaluation {slowest:?} (case {case})");
    }
}
