//! How full the context window is, from the tail of the transcript (reference §2.4).
//!
//! The transcript is JSONL that reaches tens of megabytes; only its end matters. It is read
//! backwards in chunks, at most [`MAX_TAIL_BYTES`], and only lines that can be what is looked
//! for are parsed. Its path comes from the payload: only a regular file is read, opened without
//! blocking (a FIFO would otherwise hold the hook forever).

use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use hook_engine::bounded::open_regular;
use hook_engine::{Bracket, Settings};
use hook_model::{DEFAULT_CONTEXT_WINDOW, context_window, window_holding};
use serde_json::Value;

/// The most of a transcript read from its end.
pub const MAX_TAIL_BYTES: u64 = 1 << 20;

const CHUNK: u64 = 64 << 10;

/// What the transcript's tail says about the context window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Usage {
    /// The newest real assistant entry's input tokens (`input_tokens +
    /// cache_creation_input_tokens + cache_read_input_tokens`) and its model.
    Known {
        /// Tokens in the context.
        tokens: u64,
        /// The model, as the transcript names it.
        model: Option<String>,
    },
    /// A compaction happened after the newest assistant entry: unknown until the next one.
    AfterCompaction,
    /// Nothing usable in the tail.
    Unknown,
}

/// Reads the tail of `path` backwards; returns the usage and the bytes read.
///
/// # Errors
///
/// When the file cannot be read, or is not a regular file (`InvalidInput`).
pub fn usage(path: &Path) -> io::Result<(Usage, u64)> {
    let (mut file, metadata) = open_regular(path)?;
    let len = metadata.len();
    let mut end = len;
    let mut read = 0u64;
    // Bytes of a line cut by the chunk boundary, kept for the next (earlier) chunk.
    let mut carry: Vec<u8> = Vec::new();
    while end > 0 && read < MAX_TAIL_BYTES {
        let start = end.saturating_sub(CHUNK).max(len.saturating_sub(MAX_TAIL_BYTES));
        if start == end {
            break;
        }
        let mut chunk = vec![0; usize::try_from(end - start).unwrap_or(0)];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk)?;
        read += end - start;
        chunk.extend_from_slice(&carry);
        // Every complete line, newest first; the first (possibly cut) line waits for the next
        // chunk unless this chunk starts the file.
        let mut lines: Vec<&[u8]> = chunk.split(|&b| b == b'\n').collect();
        let first = if start > 0 { lines.remove(0).to_vec() } else { Vec::new() };
        for line in lines.iter().rev() {
            if let Some(found) = judge(line) {
                return Ok((found, read));
            }
        }
        carry = first;
        end = start;
    }
    Ok((Usage::Unknown, read))
}

/// What one line says, if it decides anything.
fn judge(line: &[u8]) -> Option<Usage> {
    let has = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
    if has(b"compact_boundary") {
        let entry: Value = hook_model::json_from_slice(line).ok()?;
        return (entry.get("subtype").and_then(Value::as_str) == Some("compact_boundary"))
            .then_some(Usage::AfterCompaction);
    }
    if !has(b"\"assistant\"") || !has(b"usage") {
        return None;
    }
    let entry: Value = hook_model::json_from_slice(line).ok()?;
    let flag = |key: &str| entry.get(key).and_then(Value::as_bool) == Some(true);
    if entry.get("type").and_then(Value::as_str) != Some("assistant")
        || flag("isSidechain")
        || flag("isApiErrorMessage")
    {
        return None;
    }
    let message = entry.get("message")?;
    let model = message.get("model").and_then(Value::as_str);
    if model == Some("<synthetic>") {
        return None;
    }
    let usage = message.get("usage")?;
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let tokens = count("input_tokens")
        + count("cache_creation_input_tokens")
        + count("cache_read_input_tokens");
    Some(Usage::Known { tokens, model: model.map(str::to_owned) })
}

/// The most of a transcript read for the conversation before a compaction.
pub const MAX_CONVERSATION_BYTES: u64 = 512 << 10;

/// The most messages of the conversation kept (the newest).
pub const MAX_MESSAGES: usize = 200;

/// The text of the conversation's newest messages since the last compaction, oldest first: each
/// user prompt and each assistant reply (their text blocks; no tool calls, tool results,
/// thinking, side chains or meta entries), from the last [`MAX_CONVERSATION_BYTES`] of `path`,
/// at most [`MAX_MESSAGES`].
///
/// # Errors
///
/// When the file cannot be read, or is not a regular file (`InvalidInput`).
pub fn conversation(path: &Path) -> io::Result<Vec<String>> {
    let (mut file, metadata) = open_regular(path)?;
    let len = metadata.len();
    let start = len.saturating_sub(MAX_CONVERSATION_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::new();
    file.take(len - start).read_to_end(&mut tail)?;
    let mut lines: Vec<&[u8]> = tail.split(|&b| b == b'\n').collect();
    if start > 0 && !lines.is_empty() {
        // Cut by the start of the read.
        lines.remove(0);
    }
    let mut messages: Vec<String> = Vec::new();
    for line in lines {
        let has = |needle: &[u8]| line.windows(needle.len()).any(|w| w == needle);
        if has(b"compact_boundary") {
            let entry: Option<Value> = hook_model::json_from_slice(line).ok();
            if entry.as_ref().and_then(|e| e.get("subtype")).and_then(Value::as_str)
                == Some("compact_boundary")
            {
                messages.clear();
            }
            continue;
        }
        if !has(b"\"user\"") && !has(b"\"assistant\"") {
            continue;
        }
        if let Some(text) = hook_model::json_from_slice(line).ok().and_then(|e| said(&e)) {
            messages.push(text);
        }
    }
    let extra = messages.len().saturating_sub(MAX_MESSAGES);
    messages.drain(..extra);
    Ok(messages)
}

/// What a user or assistant entry says, as text.
fn said(entry: &Value) -> Option<String> {
    let flag = |key: &str| entry.get(key).and_then(Value::as_bool) == Some(true);
    let kind = entry.get("type").and_then(Value::as_str)?;
    if !matches!(kind, "user" | "assistant")
        || flag("isSidechain")
        || flag("isMeta")
        || flag("isCompactSummary")
        || flag("isApiErrorMessage")
    {
        return None;
    }
    let text = match entry.get("message")?.get("content")? {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => return None,
    };
    (!text.trim().is_empty()).then_some(text)
}

/// The context window holding `tokens` of `model`: `configured` (the config's `window_tokens`
/// or `HOOKPACK_WINDOW_TOKENS`), else the model's (`hook_model::context_window`), else 200,000;
/// larger when the context already exceeds it (it cannot be more than full).
pub fn window(model: Option<&str>, configured: u32, tokens: u64) -> u64 {
    let assumed = match configured {
        0 => model.and_then(context_window).unwrap_or(DEFAULT_CONTEXT_WINDOW),
        configured => u64::from(configured),
    };
    window_holding(tokens, assumed)
}

/// The context bracket of one event, and how it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct Reading {
    /// The bracket.
    pub bracket: Bracket,
    /// The percent of the window remaining.
    pub remaining: f64,
    /// How it was found.
    pub how: How,
}

impl Reading {
    /// The percent of the window in use, whole.
    pub fn used_percent(&self) -> u8 {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to 0..=100"
        )]
        let used = (100.0 - self.remaining).clamp(0.0, 100.0).round() as u8;
        used
    }
}

/// Where a [`Reading`] comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum How {
    /// The newest real assistant entry of the transcript.
    Transcript {
        /// Tokens in the context.
        tokens: u64,
        /// The window, in tokens.
        window: u64,
        /// The model, as the transcript names it.
        model: Option<String>,
        /// The bytes of the transcript read.
        read: u64,
    },
    /// The payload's own count: `context_tokens` of a resumed or forked `SessionStart` and of
    /// the model switches, over the window of its model (`model`, `to_model`).
    Payload {
        /// Tokens in the context.
        tokens: u64,
        /// The window, in tokens.
        window: u64,
        /// The model, as the payload names it.
        model: Option<String>,
    },
    /// Estimated from the prompts since the session started or was last compacted.
    Estimate {
        /// The prompts counted.
        prompts: u64,
        /// Why the transcript did not tell.
        why: &'static str,
    },
}

/// The bracket for an event whose transcript is `transcript`: from its tail when it has a
/// usable assistant entry, else from the `payload`'s own count (`context_tokens`, on a resumed
/// `SessionStart` and the model switches), else estimated from `prompts` since the session
/// started or was last compacted, over the window of the payload's model when it names one.
/// `window_tokens` is the configured window (the environment's override applied).
pub fn reading(
    transcript: &Path,
    payload: &Value,
    settings: &Settings,
    window_tokens: u32,
    prompts: u64,
) -> Reading {
    reading_from(&usage(transcript), payload, settings, window_tokens, prompts)
}

/// The model a payload names: the one switched to, or `SessionStart`'s.
fn payload_model(payload: &Value) -> Option<&str> {
    ["to_model", "model"].iter().find_map(|key| payload.get(*key).and_then(Value::as_str))
}

/// The bracket from what [`usage`] found in the transcript (read beforehand, so that a hook
/// reads it before it takes the state's lock), else estimated from `prompts`, as [`reading`].
pub fn reading_from(
    tail: &io::Result<(Usage, u64)>,
    payload: &Value,
    settings: &Settings,
    window_tokens: u32,
    prompts: u64,
) -> Reading {
    let why = match tail {
        Ok((Usage::Known { tokens, model }, read)) => {
            let (tokens, read) = (*tokens, *read);
            let window = window(model.as_deref(), window_tokens, tokens);
            #[allow(clippy::cast_precision_loss, reason = "token counts are far below 2^52")]
            let remaining = (100.0 - tokens as f64 * 100.0 / window as f64).max(0.0);
            return Reading {
                bracket: settings.bracket(remaining),
                remaining,
                how: How::Transcript { tokens, window, model: model.clone(), read },
            };
        }
        Ok((Usage::AfterCompaction, _)) => "no assistant entry since the last compaction",
        Ok((Usage::Unknown, _)) => "no usable assistant entry in the transcript's tail",
        Err(_) => "the transcript cannot be read",
    };
    let model = payload_model(payload);
    if let Some(tokens) = payload.get("context_tokens").and_then(Value::as_u64) {
        let window = window(model, window_tokens, tokens);
        #[allow(clippy::cast_precision_loss, reason = "token counts are far below 2^52")]
        let remaining = (100.0 - tokens as f64 * 100.0 / window as f64).max(0.0);
        let model = model.map(str::to_owned);
        return Reading {
            bracket: settings.bracket(remaining),
            remaining,
            how: How::Payload { tokens, window, model },
        };
    }
    let assumed = window(model, window_tokens, 0);
    let estimate =
        Settings { window_tokens: u32::try_from(assumed).unwrap_or(u32::MAX), ..*settings };
    let remaining = estimate.estimate_remaining(prompts);
    Reading { bracket: settings.bracket(remaining), remaining, how: How::Estimate { prompts, why } }
}

impl std::fmt::Display for Reading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (bracket, remaining) = (self.bracket.as_str(), self.remaining);
        match &self.how {
            How::Transcript { tokens, window, model, read } => write!(
                f,
                "{bracket} ({tokens} of {window} tokens in use, {remaining:.0}% remaining; model {}; read the last {read} bytes of the transcript)",
                model.as_deref().unwrap_or("unknown")
            ),
            How::Payload { tokens, window, model } => write!(
                f,
                "{bracket} ({tokens} of {window} tokens in use, {remaining:.0}% remaining; model {}; as the payload counts them)",
                model.as_deref().unwrap_or("unknown")
            ),
            How::Estimate { prompts, why } => write!(
                f,
                "{bracket} ({remaining:.0}% remaining, estimated from {prompts} prompt(s) × 1,500 tokens × 1.2; {why})"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::Write as _;

    use super::*;

    fn assistant(id: &str, tokens: (u64, u64, u64), extra: &str) -> String {
        format!(
            r#"{{"type":"assistant","uuid":"u-{id}","isSidechain":false{extra},"message":{{"id":"msg_{id}","model":"claude-opus-4-7","role":"assistant","content":[{{"type":"text","text":"ok"}}],"usage":{{"input_tokens":{},"cache_creation_input_tokens":{},"cache_read_input_tokens":{},"output_tokens":12}}}}}}"#,
            tokens.0, tokens.1, tokens.2
        )
    }

    fn write(name: &str, lines: &[String]) -> std::path::PathBuf {
        let path = std::env::temp_dir()
            .join(format!("hookpack-transcript-{}-{name}.jsonl", std::process::id()));
        let mut file = File::create(&path).unwrap();
        for line in lines {
            writeln!(file, "{line}").unwrap();
        }
        path
    }

    #[test]
    fn the_newest_real_assistant_entry_counts() {
        let user = r#"{"type":"user","message":{"role":"user","content":"hi"}}"#.to_owned();
        let sidechain = assistant("side", (1, 1, 1), r#","isSidechain":true"#)
            .replace(r#""isSidechain":false,"#, "");
        let error = r#"{"type":"assistant","isApiErrorMessage":true,"error":"rate_limit","message":{"model":"<synthetic>","usage":{"input_tokens":0}}}"#.to_owned();
        let path = write(
            "newest",
            &[
                assistant("a", (10, 20, 30), ""),
                user.clone(),
                assistant("b", (100, 2_000, 40_000), ""),
                sidechain,
                error,
                user,
            ],
        );
        let (found, _) = usage(&path).unwrap();
        assert_eq!(found, Usage::Known { tokens: 42_100, model: Some("claude-opus-4-7".into()) });
    }

    /// An entry whose text holds a lone surrogate (JavaScript wrote it) still counts.
    #[test]
    fn an_entry_with_a_lone_surrogate_counts() {
        let odd = assistant("odd", (3, 4, 5), "").replace(r#""text":"ok""#, r#""text":"\ud800""#);
        let path = write("surrogate", &[assistant("a", (1, 1, 1), ""), odd]);
        assert_eq!(
            usage(&path).unwrap().0,
            Usage::Known { tokens: 12, model: Some("claude-opus-4-7".into()) }
        );
    }

    #[test]
    fn unknown_after_a_compaction() {
        let boundary = r#"{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":180000}}"#.to_owned();
        let path = write("compact", &[assistant("a", (1, 2, 3), ""), boundary.clone()]);
        assert_eq!(usage(&path).unwrap().0, Usage::AfterCompaction);
        let path = write(
            "compact-then",
            &[assistant("a", (1, 2, 3), ""), boundary, assistant("b", (5, 0, 0), "")],
        );
        assert_eq!(
            usage(&path).unwrap().0,
            Usage::Known { tokens: 5, model: Some("claude-opus-4-7".into()) }
        );
    }

    /// A 50 MB transcript in the real format: the answer comes from reading at most 1 MB.
    #[test]
    fn a_large_transcript_is_read_from_its_tail() {
        let filler = format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","content":"{}"}}]}}}}"#,
            "x".repeat(2_000)
        );
        let mut lines = vec![assistant("old", (7, 7, 7), "")];
        lines.extend(std::iter::repeat_n(filler, 25_000));
        lines.push(assistant("new", (1_000, 0, 150_000), ""));
        lines.extend(std::iter::repeat_n(
            r#"{"type":"user","message":{"role":"user","content":"next"}}"#.to_owned(),
            3,
        ));
        let path = write("large", &lines);
        assert!(std::fs::metadata(&path).unwrap().len() > 50_000_000);
        let (found, read) = usage(&path).unwrap();
        assert_eq!(found, Usage::Known { tokens: 151_000, model: Some("claude-opus-4-7".into()) });
        assert!(read <= MAX_TAIL_BYTES, "read {read} bytes");

        // With no assistant entry in the last megabyte, the answer is unknown: never a scan of
        // the whole file.
        lines.truncate(lines.len() - 4);
        let path = write("large-none", &lines);
        let (found, read) = usage(&path).unwrap();
        assert_eq!(found, Usage::Unknown);
        assert_eq!(read, MAX_TAIL_BYTES);
        let _ = std::fs::remove_file(path);
    }

    /// A FIFO (or a device) given as the transcript is refused at once: opening a FIFO nobody
    /// writes would block forever.
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let fifo =
            std::env::temp_dir().join(format!("hookpack-transcript-{}.fifo", std::process::id()));
        let _ = std::fs::remove_file(&fifo);
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        for path in [fifo.as_path(), Path::new("/dev/zero")] {
            let err = usage(path).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{}", path.display());
        }
        std::fs::remove_file(fifo).unwrap();
    }

    #[test]
    fn windows() {
        // The model's, unless configured; never less than the context.
        assert_eq!(window(Some("claude-opus-5-5"), 0, 130_000), 1_000_000);
        assert_eq!(window(Some("claude-sonnet-4-5"), 0, 130_000), 200_000);
        assert_eq!(window(Some("claude-sonnet-4-5[1m]"), 0, 130_000), 1_000_000);
        assert_eq!(window(None, 0, 130_000), 200_000);
        assert_eq!(window(Some("claude-opus-5-5"), 500_000, 130_000), 500_000);
        assert_eq!(window(Some("claude-sonnet-4-5"), 0, 250_000), 1_000_000);
    }

    /// Without a usable transcript, a resumed session's `SessionStart` (and a model switch)
    /// counts its own tokens; otherwise the estimate is over the payload's model's window.
    #[test]
    fn the_payload_tells_when_the_transcript_cannot() {
        let settings = Settings {
            window_tokens: 0,
            brackets: [60, 40, 25],
            budget: [2000, 1500, 1000, 500],
            max_age_days: 30,
            memory_max: 0,
            memory_max_age_days: 0,
            reads_conversation: false,
            signal_auto: 850,
            signal_suggest: 700,
            signal_max: 10,
            needs_bracket: true,
            counts_prompts: true,
            counts_compactions: true,
            state_events: hook_engine::EventSet::default(),
            writes_handoff: false,
            branch_events: hook_engine::EventSet::default(),
        };
        let nothing: io::Result<(Usage, u64)> = Ok((Usage::Unknown, 0));
        let resumed = serde_json::json!({"source": "resume", "model": "claude-opus-5-5",
                                          "context_tokens": 300_000});
        let reading = reading_from(&nothing, &resumed, &settings, 0, 0);
        assert_eq!(reading.bracket, settings.bracket(70.0));
        assert!(matches!(reading.how, How::Payload { tokens: 300_000, window: 1_000_000, .. }));
        let switched = serde_json::json!({"from_model": "claude-opus-5-5",
                                           "to_model": "claude-sonnet-4-5", "context_tokens": 150_000});
        let reading = reading_from(&nothing, &switched, &settings, 0, 0);
        assert!(matches!(reading.how, How::Payload { window: 200_000, .. }), "{reading}");
        // 50 prompts ≈ 90,000 tokens: 91% left of a million, 55% of 200,000.
        let started = serde_json::json!({"source": "startup", "model": "claude-opus-5-5"});
        let on_opus = reading_from(&nothing, &started, &settings, 0, 50);
        assert!((on_opus.remaining - 91.0).abs() < 0.01, "{on_opus}");
        let unnamed = reading_from(&nothing, &serde_json::json!({}), &settings, 0, 50);
        assert!((unnamed.remaining - 55.0).abs() < 0.01, "{unnamed}");
        // The transcript, when it tells, wins.
        let told: io::Result<(Usage, u64)> =
            Ok((Usage::Known { tokens: 100_000, model: Some("claude-sonnet-4-5".into()) }, 10));
        let reading = reading_from(&told, &resumed, &settings, 0, 0);
        assert!(matches!(reading.how, How::Transcript { tokens: 100_000, .. }));
    }
}
