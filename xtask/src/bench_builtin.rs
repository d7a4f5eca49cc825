//! The builtin-pack part of `cargo xtask bench`: every event's hook answering from the builtin
//! `context`, `guard`, `memory` and `workflow` packs, with no memory stored, then 2,000, then
//! 100,000, against the dynamic floor on the same payload: the hooks linked dynamically (as
//! `cargo build` links them; both built with the `hooks` profile, release with fat LTO) and as
//! shipped (`cargo xtask dist`: statically) side by side; recall by a file's terms; the bracket
//! of a large transcript.
//!
//! Limits: every event's dynamic hook at most 1.2× the dynamic floor, and its shipped hook at
//! most 1.0× it; recall among 100,000 memories at most 1.3×.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use hook_engine::Engine;
use hook_engine::artifact::{AlignedBytes, Artifact};
use hook_model::EventKind;

use crate::release::Linking;
use crate::timing::{measure, median, ms};
use crate::workspace::{examples, root};

/// Each event's hook, linked dynamically, against the dynamic floor.
const MAX_RATIO: f64 = 1.2;
/// Each event's hook as shipped, against the dynamic floor.
const MAX_SHIPPED_RATIO: f64 = 1.0;
/// Recall by a file's terms among the most memories, against the dynamic floor.
const MAX_RECALL_RATIO: f64 = 1.3;

/// Runs the builtin-pack benchmark with `linkings` (the dynamic build first, then the shipped
/// one when the host has it); returns what exceeded a limit.
pub(crate) fn run(
    linkings: &[Linking],
    hookpack: &Path,
    runs: usize,
) -> anyhow::Result<Vec<String>> {
    let packs = ["context", "guard", "memory", "workflow"];
    let project = crate::bench_rules::builtin_project(hookpack, "builtin", &packs)?;
    let scratch = root().join("target/bench/builtin");
    let artifact = std::fs::read(project.join(".claude/hookpack/compiled/rules.hpk"))?;
    let aligned = AlignedBytes::new(&artifact);
    let settings = Engine::new(Artifact::parse(aligned.as_slice())?)?.settings();
    let dynamic = linkings.first().context("no build")?;
    let shipped = linkings.get(1);
    let floor = dynamic.bin_dir.join("hook-floor");

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
    let post_tool_use =
        &cases.iter().find(|(k, _)| *k == EventKind::PostToolUse).context("PostToolUse")?.1;
    let read = payloads.join("read-orders.json");
    read_payload(&project, post_tool_use, &read)?;

    println!(
        "\nbuiltin packs: context, guard, memory and workflow ({} bytes compiled); each event's \
         hook against the dynamic floor, median of {runs} spawns each; `dynamic`: {} linking, \
         limit {MAX_RATIO}; `shipped`: {} linking, limit {MAX_SHIPPED_RATIO}",
        artifact.len(),
        dynamic.name,
        shipped.map_or("not built on this host", |s| s.name),
    );
    let mut failures = Vec::new();
    let mut stored = 0;
    for count in MEMORIES {
        store_memories(&project, stored, count)?;
        stored = count;
        println!("\n{count} memories stored");
        println!(
            "{:<40} {:>6} {:>10} {:>10} {:>10} {:>8} {:>8}",
            "binary", "state", "dynamic", "shipped", "floor", "dynamic", "shipped"
        );
        let mut rows = Vec::new();
        for (kind, payload) in &cases {
            let row = time(dynamic, shipped, &floor, &project, *kind, payload, runs)?;
            let opens = settings.opens_state(*kind);
            row.print(kind.binary_name(), if opens { "opens" } else { "" });
            failures.extend(row.over(
                &format!("{count} memories, {}", kind.binary_name()),
                MAX_RATIO,
                MAX_SHIPPED_RATIO,
            ));
            rows.push(row);
        }
        let row = time(dynamic, shipped, &floor, &project, EventKind::PostToolUse, &read, runs)?;
        row.print("recall by a file's terms (Read)", "");
        let limit =
            if count == MEMORIES[MEMORIES.len() - 1] { MAX_RECALL_RATIO } else { f64::INFINITY };
        failures.extend(row.over(&format!("recall among {count} memories"), limit, limit));
        let median_of = |pick: fn(&Row) -> Duration| median(rows.iter().map(pick).collect());
        println!(
            "median over events: dynamic {:.3}, shipped {}",
            ratio(median_of(|r| r.release), median_of(|r| r.floor)),
            shipped.map_or("-".to_owned(), |_| format!(
                "{:.3}",
                ratio(median_of(|r| r.shipped.unwrap_or_default()), median_of(|r| r.floor))
            )),
        );
    }

    if let Some(shipped) = shipped {
        multicall(shipped, &floor, &project, &scratch, &cases, runs)?;
    }

    // The bracket from a 50 MB transcript, against no transcript at all.
    let transcript = scratch.join("transcript-50mb.jsonl");
    let size = write_transcript(&transcript, 50 << 20)?;
    let example = root().join("examples/user-prompt-submit/short.json");
    let with = payloads.join("prompt-with-transcript.json");
    let without = payloads.join("prompt-without-transcript.json");
    write_payload(&example, &with, &transcript)?;
    write_payload(&example, &without, &missing)?;
    let hook = shipped.unwrap_or(dynamic).bin_dir.join(EventKind::UserPromptSubmit.binary_name());
    let [with_time] = measure(&[(&hook, &project)], &with, runs)?;
    let [without_time] = measure(&[(&hook, &project)], &without, runs)?;
    println!(
        "\nbracket from a {} MB transcript: {} against {} without one: +{}",
        size >> 20,
        ms(with_time),
        ms(without_time),
        ms(with_time.saturating_sub(without_time).max(Duration::ZERO))
    );
    Ok(failures)
}

/// What `cargo xtask install` installs: one binary for every event (`hookpack-hook`), linked
/// under each event's name, against each event's own binary, both shipped.
fn multicall(
    shipped: &Linking,
    floor: &Path,
    project: &Path,
    scratch: &Path,
    cases: &[(EventKind, PathBuf)],
    runs: usize,
) -> anyhow::Result<()> {
    let links = scratch.join("multicall");
    std::fs::create_dir_all(&links)?;
    let one = shipped.bin_dir.join(crate::codegen::MULTICALL);
    println!("\none binary for every event (hookpack-hook, shipped), against each event's own");
    let measured = [EventKind::UserPromptSubmit, EventKind::PreToolUse, EventKind::Stop];
    for (kind, payload) in cases.iter().filter(|(kind, _)| measured.contains(kind)) {
        let own = shipped.bin_dir.join(kind.binary_name());
        let link = links.join(kind.binary_name());
        let _ = std::fs::remove_file(&link);
        std::fs::hard_link(&one, &link).or_else(|_| std::fs::copy(&one, &link).map(drop))?;
        let [one_time, own_time, floor_time] =
            measure(&[(&link, project), (&own, project), (floor, project)], payload, runs)?;
        println!(
            "{:<40} one {} ({:.3}x the floor), own {} ({:.3}x): {:.3}",
            kind.binary_name(),
            ms(one_time),
            ratio(one_time, floor_time),
            ms(own_time),
            ratio(own_time, floor_time),
            ratio(one_time, own_time)
        );
    }
    Ok(())
}

/// One payload's medians: the dynamic hook, the shipped hook, the dynamic floor.
struct Row {
    release: Duration,
    shipped: Option<Duration>,
    floor: Duration,
}

fn ratio(hook: Duration, floor: Duration) -> f64 {
    hook.as_secs_f64() / floor.as_secs_f64()
}

impl Row {
    fn print(&self, label: &str, state: &str) {
        let shipped = self.shipped.map_or("-".to_owned(), ms);
        let shipped_ratio =
            self.shipped.map_or("-".to_owned(), |s| format!("{:.3}", ratio(s, self.floor)));
        println!(
            "{label:<40} {state:>6} {:>10} {shipped:>10} {:>10} {:>8.3} {shipped_ratio:>8}",
            ms(self.release),
            ms(self.floor),
            ratio(self.release, self.floor),
        );
    }

    /// What exceeds `limit` (the dynamic build) or `shipped_limit`.
    fn over(&self, what: &str, limit: f64, shipped_limit: f64) -> Vec<String> {
        let mut over = Vec::new();
        let release = ratio(self.release, self.floor);
        if release > limit {
            over.push(format!("{what}: dynamic {release:.3}x the floor (limit {limit})"));
        }
        if let Some(shipped) = self.shipped.map(|s| ratio(s, self.floor))
            && shipped > shipped_limit
        {
            over.push(format!("{what}: shipped {shipped:.3}x the floor (limit {shipped_limit})"));
        }
        over
    }
}

/// The hook of `kind` in each build and the floor, interleaved on `payload`.
fn time(
    dynamic: &Linking,
    shipped: Option<&Linking>,
    floor: &Path,
    project: &Path,
    kind: EventKind,
    payload: &Path,
    runs: usize,
) -> anyhow::Result<Row> {
    let release = dynamic.bin_dir.join(kind.binary_name());
    Ok(match shipped {
        Some(shipped) => {
            let hook = shipped.bin_dir.join(kind.binary_name());
            let [release, shipped, floor] =
                measure(&[(&release, project), (&hook, project), (floor, project)], payload, runs)?;
            Row { release, shipped: Some(shipped), floor }
        }
        None => {
            let [release, floor] =
                measure(&[(&release, project), (floor, project)], payload, runs)?;
            Row { release, shipped: None, floor }
        }
    })
}

/// `example` (a `PostToolUse` payload) made a `Read` of an orders file, written to `read`: a
/// recall by the file's terms.
pub(crate) fn read_payload(project: &Path, example: &Path, read: &Path) -> anyhow::Result<()> {
    let mut payload: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(example)?)?;
    payload["tool_name"] = "Read".into();
    payload["tool_input"] = serde_json::json!({ "file_path": project.join("src/orders/list.ts") });
    std::fs::write(read, payload.to_string())?;
    Ok(())
}

/// The memories stored for the recall benchmark, in turn.
const MEMORIES: [usize; 3] = [0, 2_000, 100_000];

/// Stores memories `from..to` of varied terms in `project`'s state, one in forty about orders.
pub(crate) fn store_memories(project: &Path, from: usize, to: usize) -> anyhow::Result<()> {
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
    if from == to {
        return Ok(());
    }
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
