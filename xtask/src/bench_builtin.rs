//! The builtin-pack part of `cargo xtask bench`: every event's hook answering from
//! the builtin `context`, `guard`, `memory` and `workflow` packs, against the floor on the same
//! payload; recall among many memories; the bracket of a large transcript.
//!
//! Events whose rules need the session state open the `SQLite` database (and take its write
//! lock); they are reported apart from the others. A last pair of rows shows what reading the
//! bracket from a 50 MB transcript costs: the same prompt with that transcript and with none.
//! Limit: the median ratio of the events that do not open the state at most 1.5×.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use hook_engine::Engine;
use hook_engine::artifact::{AlignedBytes, Artifact};
use hook_model::EventKind;

use crate::timing::{measure, median, ms};
use crate::workspace::{examples, root};

const MAX_RATIO: f64 = 1.5;

/// Runs the builtin-pack benchmark; returns what exceeded a limit.
pub(crate) fn run(
    bin_dir: &Path,
    hookpack: &Path,
    linking: &str,
    runs: usize,
) -> anyhow::Result<Vec<String>> {
    let packs = ["context", "guard", "memory", "workflow"];
    let project = crate::bench_rules::builtin_project(hookpack, "builtin", &packs)?;
    let scratch = root().join("target/bench/builtin");
    let artifact = std::fs::read(project.join(".claude/hookpack/compiled/rules.hpk"))?;
    let aligned = AlignedBytes::new(&artifact);
    let settings = Engine::new(Artifact::parse(aligned.as_slice())?)?.settings();

    // Every event's first example, its transcript pointed at one that does not exist (the
    // bracket is then estimated from the prompt count).
    let payloads = scratch.join("payloads");
    std::fs::create_dir_all(&payloads)?;
    let missing = scratch.join("no-transcript.jsonl");
    let mut cases = Vec::new();
    for &kind in EventKind::ALL.iter().filter(|k| !k.acts_without_rules()) {
        let example = examples(kind)?.into_iter().next().context("an example")?;
        let path = payloads.join(format!("{}.json", kind.kebab()));
        write_payload(&example, &path, &missing)?;
        cases.push((kind, path));
    }

    let floor = bin_dir.join("hook-floor");
    println!(
        "\nbuiltin packs ({linking} linking): context, guard, memory and workflow ({} bytes compiled); \
         each event's hook against the floor, median of {runs} spawns each",
        artifact.len()
    );
    println!("{:<40} {:>6} {:>10} {:>10} {:>7}", "binary", "state", "hook", "floor", "ratio");
    let (mut stateless, mut stateful) = (Vec::new(), Vec::new());
    for (kind, payload) in &cases {
        let hook = bin_dir.join(kind.binary_name());
        let [hook_time, floor_time] =
            measure(&[(&hook, &project), (&floor, &project)], payload, runs)?;
        let opens = settings.opens_state(*kind);
        let ratio = hook_time.as_secs_f64() / floor_time.as_secs_f64();
        println!(
            "{:<40} {:>6} {:>10} {:>10} {ratio:>7.3}",
            kind.binary_name(),
            if opens { "opens" } else { "" },
            ms(hook_time),
            ms(floor_time)
        );
        if opens { &mut stateful } else { &mut stateless }.push((hook_time, floor_time));
    }
    let mut failures = Vec::new();
    for (what, rows, limit) in [
        ("events that do not open the state", &stateless, Some(MAX_RATIO)),
        ("events that open the state", &stateful, None),
    ] {
        if rows.is_empty() {
            continue;
        }
        let hook = median(rows.iter().map(|r| r.0).collect());
        let floor = median(rows.iter().map(|r| r.1).collect());
        let ratio = hook.as_secs_f64() / floor.as_secs_f64();
        println!(
            "median, {what} ({}): hook {} / floor {} = {ratio:.3}{}",
            rows.len(),
            ms(hook),
            ms(floor),
            limit.map_or(String::new(), |l| format!(" (limit {l})"))
        );
        if let Some(limit) = limit
            && ratio > limit
        {
            failures.push(format!("builtin packs, {what}: median {ratio:.3}x the floor"));
        }
    }

    let post_tool_use =
        &cases.iter().find(|(k, _)| *k == EventKind::PostToolUse).context("PostToolUse")?.1;
    recall_cost(bin_dir, &project, post_tool_use, &payloads.join("read-orders.json"), runs)?;

    // The bracket from a 50 MB transcript, against no transcript at all.
    let transcript = scratch.join("transcript-50mb.jsonl");
    let size = write_transcript(&transcript, 50 << 20)?;
    let example = root().join("examples/user-prompt-submit/short.json");
    let with = payloads.join("prompt-with-transcript.json");
    let without = payloads.join("prompt-without-transcript.json");
    write_payload(&example, &with, &transcript)?;
    write_payload(&example, &without, &missing)?;
    let hook = bin_dir.join(EventKind::UserPromptSubmit.binary_name());
    let [with_time] = measure(&[(&hook, &project)], &with, runs)?;
    let [without_time] = measure(&[(&hook, &project)], &without, runs)?;
    println!(
        "bracket from a {} MB transcript: {} against {} without one: +{}",
        size >> 20,
        ms(with_time),
        ms(without_time),
        ms(with_time.saturating_sub(without_time).max(Duration::ZERO))
    );
    Ok(failures)
}

/// Recall by a file's terms among each of [`MEMORIES`] memories, against the same hook with
/// none stored (no memory database at all): `example` (a `PostToolUse` payload) made a `Read`
/// of an orders file, written to `read`.
fn recall_cost(
    bin_dir: &Path,
    project: &Path,
    example: &Path,
    read: &Path,
    runs: usize,
) -> anyhow::Result<()> {
    let mut payload: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(example)?)?;
    payload["tool_name"] = "Read".into();
    payload["tool_input"] = serde_json::json!({ "file_path": project.join("src/orders/list.ts") });
    std::fs::write(read, payload.to_string())?;
    let post = bin_dir.join(EventKind::PostToolUse.binary_name());
    let floor = bin_dir.join("hook-floor");
    let [none_time, floor_time] = measure(&[(&post, project), (&floor, project)], read, runs)?;
    println!(
        "recall by a file's terms, no memories stored: {} ({:.3}x the floor)",
        ms(none_time),
        none_time.as_secs_f64() / floor_time.as_secs_f64()
    );
    let mut stored = 0;
    for count in MEMORIES {
        store_memories(project, stored, count)?;
        stored = count;
        let [many_time, floor_time] = measure(&[(&post, project), (&floor, project)], read, runs)?;
        println!(
            "recall by a file's terms among {count} memories: {} ({:.3}x the floor): +{} over none",
            ms(many_time),
            many_time.as_secs_f64() / floor_time.as_secs_f64(),
            ms(many_time.saturating_sub(none_time))
        );
    }
    Ok(())
}

/// The memories stored for the recall benchmark, in turn.
const MEMORIES: [usize; 2] = [2_000, 100_000];

/// Stores memories `from..to` of varied terms in `project`'s state, one in forty about orders.
fn store_memories(project: &Path, from: usize, to: usize) -> anyhow::Result<()> {
    use hook_engine::memory::Captured;
    const SUBJECTS: [&str; 12] = [
        "billing",
        "invoices",
        "search",
        "auth",
        "sessions",
        "cache",
        "exports",
        "uploads",
        "emails",
        "metrics",
        "webhooks",
        "migrations",
    ];
    const CHOICES: [&str; 8] =
        ["Postgres", "Redis", "a queue", "JWT", "retries", "pagination", "feature flags", "S3"];
    let installation = hook_runtime::Installation::Project {
        root: project.to_path_buf(),
        dir: project.join(".claude/hookpack"),
    };
    let mut store = hook_runtime::state::Store::open(&installation)?;
    let mut all = Vec::with_capacity(to - from);
    for i in from..to {
        let subject = if i % 40 == 0 { "orders" } else { SUBJECTS[i % SUBJECTS.len()] };
        let text = format!(
            "{subject} use {} since change {i}; revisit when {} grows",
            CHOICES[i % CHOICES.len()],
            SUBJECTS[(i / 7) % SUBJECTS.len()]
        );
        let captured = Captured {
            rule: "memory/markers".into(),
            namespace: "decisions".into(),
            text,
            confidence: 1.0,
            note: None,
        };
        all.push(captured);
    }
    store.remember_all("bench-filler", &all)?;
    Ok(())
}

/// `example` with its transcript path replaced by `transcript`, written to `path`.
pub(crate) fn write_payload(example: &Path, path: &Path, transcript: &Path) -> anyhow::Result<()> {
    let mut payload: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(example)?)?;
    payload["transcript_path"] = serde_json::Value::from(transcript.to_string_lossy());
    std::fs::write(path, payload.to_string())?;
    Ok(())
}

/// A transcript in Claude Code's format of at least `bytes` bytes: turns of a user prompt, an
/// assistant tool call with its usage, and a tool result of a few kilobytes. Returns its size.
fn write_transcript(path: &PathBuf, bytes: u64) -> anyhow::Result<u64> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let output = "x".repeat(4000);
    let (mut written, mut turn) = (0u64, 0u64);
    while written < bytes {
        let tokens = 20_000 + turn * 7 % 150_000;
        let lines = [
            serde_json::json!({"type": "user", "uuid": format!("u{turn}"), "isSidechain": false,
                "message": {"role": "user", "content": format!("step {turn}: go on")}}),
            serde_json::json!({"type": "assistant", "uuid": format!("a{turn}"), "isSidechain": false,
                "message": {"id": format!("msg_{turn}"), "model": "claude-opus-4-7", "role": "assistant",
                    "content": [{"type": "tool_use", "id": format!("toolu_{turn}"), "name": "Bash",
                                 "input": {"command": "cargo test"}}],
                    "usage": {"input_tokens": 3, "cache_creation_input_tokens": 500,
                              "cache_read_input_tokens": tokens, "output_tokens": 80}}}),
            serde_json::json!({"type": "user", "uuid": format!("r{turn}"), "isSidechain": false,
                "message": {"role": "user", "content": [{"type": "tool_result",
                    "tool_use_id": format!("toolu_{turn}"), "content": output}]}}),
        ];
        for line in lines {
            let text = line.to_string();
            writeln!(file, "{text}")?;
            written += text.len() as u64 + 1;
        }
        turn += 1;
    }
    file.flush()?;
    Ok(written)
}
