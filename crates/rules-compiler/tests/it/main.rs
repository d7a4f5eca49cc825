//! Integration tests of `rules-compiler`: the diagnostics corpus and the valid packs.
#![allow(clippy::unwrap_used, reason = "a test that cannot unwrap has failed")]

mod artifact;
mod crafted;
mod dead;
mod diagnostics;
mod differential;
mod effort;
mod hostile;
mod pack_tests;
mod path_index;
mod schema;
mod scopes;

/// `payload` typed as a hook types it, with the fields every payload carries filled in where a
/// test leaves them out; `None` when a hook would not read it.
fn typed(
    kind: hook_model::EventKind,
    payload: &serde_json::Value,
) -> Option<hook_model::HookInput> {
    let mut full = serde_json::json!({ "session_id": "t", "transcript_path": "", "cwd": "/p" });
    full.as_object_mut()?.extend(payload.as_object()?.clone());
    hook_model::HookInput::from_value(kind, &full).ok()
}
