//! The floor of every start-up benchmark: a process that reads stdin to EOF, parses it with
//! `serde_json`, and prints one small JSON object naming the event. A hook cannot cost less
//! than this; `cargo xtask bench` reports every hook as a ratio to it, measured in the same run.
#![allow(clippy::print_stdout, reason = "the echo is the point")]

use std::io::Read;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut payload = Vec::new();
    if std::io::stdin().read_to_end(&mut payload).is_err() {
        return ExitCode::FAILURE;
    }
    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(&payload) else {
        return ExitCode::FAILURE;
    };
    let event = payload.get("hook_event_name").cloned().unwrap_or_default();
    println!("{}", serde_json::json!({ "hookSpecificOutput": { "hookEventName": event } }));
    ExitCode::SUCCESS
}
