//! The `payload` target: the fuzzer's bytes as the stdin of every event's hook.
//!
//! For each event: `HookInput::from_value` on the bytes parsed as JSON (as the hooks parse
//! them: `hook_model::json_from_slice`, which reads lone surrogates and bytes that are not
//! UTF-8), the engine's payload helpers, and the whole runtime (`hook_runtime::run`) where no
//! project and no user uses hookpack, checking its output contract (ARCHITECTURE.md,
//! `hook-runtime`): stdout empty or exactly one JSON object, stderr empty or one line, exit
//! status proceed.
//!
//! A payload that parses is then written again with one kind of damage JavaScript's JSON can
//! carry (a lone surrogate escape, either half) or a careless writer could (a stray byte, an
//! overlong or surrogate encoding) at the end of every string value, the kind picked by the
//! input's bytes. The damaged bytes must read as the same payload with U+FFFD at the end of
//! each string (a guard judges the call, not nothing), be typed as the original is as a
//! `PreToolUse` and a `UserPromptSubmit` payload, and go through the runtime as above.

use std::path::Path;

use hook_engine::{SessionState, star_commands, tool_path};
use hook_model::{EventKind, HookInput};
use hook_runtime::{Env, ExitStatus, Installation, run as run_hook};
use serde_json::Value;

use crate::Reached;

/// The longest stderr line: the message is cut at 400 bytes (`respond::MAX_NOTE_BYTES`, plus
/// `…`), between the binary's name and the outcome (at most 60 bytes), as the runtime's
/// `malformed` test allows.
pub const MAX_STDERR_LINE: usize = 500;

/// Runs the target on `data`; `Evaluated` when the payload is some event's valid payload.
///
/// # Panics
///
/// When a parser or the runtime panics, or a hook's output breaks its contract.
pub fn run(data: &[u8]) -> Reached {
    let reached = run_once(data);
    if let Ok(value) = hook_model::json_from_slice(data) {
        damaged(data, &value);
    }
    reached
}

/// What JSON strings may carry that UTF-8 cannot: a lone high and low surrogate escape, a
/// stray byte, an overlong `/`, a surrogate encoded in UTF-8.
const DAMAGE: [&[u8]; 5] = [br"\ud800", br"\udfff", b"\xff", b"\xc0\xaf", b"\xed\xa0\x80"];

/// Checks `value` written again with one kind of [`DAMAGE`] at the end of every string value.
fn damaged(data: &[u8], value: &Value) {
    let kind = data.iter().fold(0usize, |sum, &b| sum.wrapping_add(usize::from(b)));
    let damage = DAMAGE[kind % DAMAGE.len()];
    let text = value.to_string();
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 2);
    let mut in_string = false;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        if in_string && byte == b'\\' {
            out.extend_from_slice(&bytes[at..at + 2]);
            at += 2;
            continue;
        }
        if byte == b'"' {
            if in_string {
                // A value, not a key: what follows the string is not a `:`.
                if bytes.get(at + 1) != Some(&b':') {
                    out.extend_from_slice(damage);
                }
            }
            in_string = !in_string;
        }
        out.push(byte);
        at += 1;
    }
    let read = hook_model::json_from_slice(&out)
        .unwrap_or_else(|err| panic!("damaged strings made the payload unreadable: {err}"));
    // Compared with the text written again and read undamaged: a float's digits read back
    // as the same text gives (`serde_json` does not round-trip every float exactly).
    let undamaged: Value = serde_json::from_str(&text).expect("serde_json reads what it writes");
    assert!(same_but_replaced(&undamaged, &read), "damaged: {read} is not {text} with U+FFFD");
    // The guard's and the prompt's payloads have no closed set of strings but the event's
    // name (which Claude Code writes): damaged, they are typed as before (elsewhere a value of
    // a closed set, damaged, is none of it).
    let mut typed = read.clone();
    if let (Some(fields), Some(name)) = (typed.as_object_mut(), value.get("hook_event_name")) {
        fields.insert("hook_event_name".to_owned(), name.clone());
    }
    for kind in [EventKind::PreToolUse, EventKind::UserPromptSubmit] {
        assert_eq!(
            HookInput::from_value(kind, value).is_ok(),
            HookInput::from_value(kind, &typed).is_ok(),
            "{kind:?}: damaged strings changed whether the payload is typed"
        );
    }
    let _ = run_once(&out);
}

/// Whether `read` is `original` with one or more U+FFFD at the end of every string value.
fn same_but_replaced(original: &Value, read: &Value) -> bool {
    match (original, read) {
        (Value::String(a), Value::String(b)) => b
            .strip_prefix(a.as_str())
            .is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c == '\u{fffd}')),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same_but_replaced(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, a)| b.get(k).is_some_and(|b| same_but_replaced(a, b)))
        }
        (a, b) => a == b,
    }
}

/// The target on one stdin.
fn run_once(data: &[u8]) -> Reached {
    let value: Option<Value> = hook_model::json_from_slice(data).ok();
    let env = Env::default();
    let mut reached = if value.is_some() { Reached::Parsed } else { Reached::Rejected };
    for &kind in EventKind::ALL {
        let input = value.as_ref().and_then(|value| HookInput::from_value(kind, value).ok());
        if let (Some(input), Some(value)) = (&input, &value) {
            reached = Reached::Evaluated;
            let mut state = SessionState::default();
            state.begin(input);
            let _ = tool_path(value, Some(Path::new(&input.common.cwd)));
            if let Some(prompt) = input.prompt() {
                let _ = star_commands(prompt);
            }
        }
        // The runtime reads the project's files and state where there is one: fuzz it only
        // where there is none (a relative `cwd` could reach the checkout's own). The worktree
        // hooks run git in `cwd`, whatever it is: never fuzzed through the runtime.
        if kind.acts_without_rules() {
            continue;
        }
        if input.is_some_and(|input| {
            Installation::discover(&env, Path::new(&input.common.cwd)).is_some()
        }) {
            continue;
        }
        check_hook(kind, data, &env);
    }
    reached
}

/// Runs `kind`'s hook on `stdin` and checks what it prints.
fn check_hook(kind: EventKind, stdin: &[u8], env: &Env) {
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let status = run_hook(kind, &mut &stdin[..], &mut stdout, &mut stderr, env);
    // No installation, no rules: nothing can block.
    assert_eq!(status, ExitStatus::Proceed, "{kind:?} did not proceed");
    if !stdout.is_empty() {
        let mut values = serde_json::Deserializer::from_slice(&stdout).into_iter::<Value>();
        let first = values.next().and_then(Result::ok);
        assert!(
            first.as_ref().is_some_and(Value::is_object) && values.next().is_none(),
            "{kind:?}: stdout is not one JSON object: {}",
            String::from_utf8_lossy(&stdout)
        );
    }
    if !stderr.is_empty() {
        let text = std::str::from_utf8(&stderr).expect("stderr is UTF-8");
        let line = text.strip_suffix('\n').expect("stderr ends its line");
        assert!(!line.contains('\n'), "{kind:?}: stderr has more than one line: {text:?}");
        assert!(
            line.starts_with(&format!("{}: ", kind.binary_name())),
            "{kind:?}: stderr does not name the binary: {line:?}"
        );
        assert!(
            line.len() <= MAX_STDERR_LINE,
            "{kind:?}: stderr line of {} bytes: {line:?}",
            line.len()
        );
    }
}
