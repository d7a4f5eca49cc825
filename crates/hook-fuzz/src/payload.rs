//! The `payload` target: the fuzzer's bytes as the stdin of every event's hook.
//!
//! For each event: `HookInput::from_value` on the bytes parsed as JSON, the engine's payload
//! helpers, and the whole runtime (`hook_runtime::run`) where no project and no user uses
//! hookpack, checking its output contract (ARCHITECTURE.md, `hook-runtime`): stdout empty or
//! exactly one JSON object, stderr empty or one line, exit status proceed.

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
    let value: Option<Value> = serde_json::from_slice(data).ok();
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
