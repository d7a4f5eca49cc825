//! Claude Code's hooks protocol as Rust types.
//!
//! Claude Code runs a hook command on each lifecycle event, writes one JSON object to its stdin
//! and reads at most one JSON object from its stdout. This crate is that contract and nothing else:
//!
//! - [`EventKind`] names every documented event exactly as Claude Code spells it;
//! - [`HookInput`] is a parsed payload: the [`Common`] fields plus one typed [`EventInput`];
//! - [`HookOutput`] is an answer: one typed output per event (for example [`PreToolUseOutput`]),
//!   carrying exactly the fields Claude Code reads for that event, with
//!   `hookSpecificOutput.hookEventName` filled in by construction.
//!
//! Inputs are lenient where Claude Code evolves: unknown fields are ignored, optional fields are
//! optional and enumerations are open (an unknown value is kept as `Other`). Outputs are strict.
//!
//! ```
//! use hook_model::{EventInput, EventKind, HookInput, HookOutput, PermissionDecision};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let payload: serde_json::Value = serde_json::from_str(
//!     r#"{"hook_event_name":"PreToolUse","session_id":"s","transcript_path":"/t.jsonl",
//!         "cwd":"/p","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"tool_use_id":"t1"}"#,
//! )?;
//! let input = HookInput::from_value(EventKind::PreToolUse, &payload)?;
//! let EventInput::PreToolUse(call) = &input.event else { unreachable!() };
//! assert_eq!(call.tool_name.as_str(), "Bash");
//!
//! let mut output = HookOutput::empty(EventKind::PreToolUse);
//! if let HookOutput::PreToolUse(out) = &mut output {
//!     out.hook_specific_output.permission_decision = Some(PermissionDecision::Deny);
//!     out.hook_specific_output.permission_decision_reason = Some("rm -rf / is denied".into());
//! }
//! let json = output.render().expect("a decision is not empty");
//! assert!(json.contains(r#""hookEventName":"PreToolUse""#));
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

/// Calls `$callback!` with one line per event: the variant name, the binary's kebab-case suffix,
/// the input type and the output type. Every per-event list in this crate is generated from here,
/// so adding an event is one line.
macro_rules! for_each_event {
    ($callback:ident) => {
        $callback! {
            SessionStart, "session-start", SessionStartInput, SessionStartOutput;
            Setup, "setup", SetupInput, SetupOutput;
            UserPromptSubmit, "user-prompt-submit", UserPromptSubmitInput, UserPromptSubmitOutput;
            UserPromptExpansion, "user-prompt-expansion", UserPromptExpansionInput, UserPromptExpansionOutput;
            MessageDisplay, "message-display", MessageDisplayInput, MessageDisplayOutput;
            PreToolUse, "pre-tool-use", PreToolUseInput, PreToolUseOutput;
            PermissionRequest, "permission-request", PermissionRequestInput, PermissionRequestOutput;
            PermissionDenied, "permission-denied", PermissionDeniedInput, PermissionDeniedOutput;
            PostToolUse, "post-tool-use", PostToolUseInput, PostToolUseOutput;
            PostToolUseFailure, "post-tool-use-failure", PostToolUseFailureInput, PostToolUseFailureOutput;
            PostToolBatch, "post-tool-batch", PostToolBatchInput, PostToolBatchOutput;
            Notification, "notification", NotificationInput, NotificationOutput;
            SubagentStart, "subagent-start", SubagentStartInput, SubagentStartOutput;
            SubagentStop, "subagent-stop", SubagentStopInput, SubagentStopOutput;
            TaskCreated, "task-created", TaskCreatedInput, TaskCreatedOutput;
            TaskCompleted, "task-completed", TaskCompletedInput, TaskCompletedOutput;
            Stop, "stop", StopInput, StopOutput;
            StopFailure, "stop-failure", StopFailureInput, StopFailureOutput;
            TeammateIdle, "teammate-idle", TeammateIdleInput, TeammateIdleOutput;
            InstructionsLoaded, "instructions-loaded", InstructionsLoadedInput, InstructionsLoadedOutput;
            ConfigChange, "config-change", ConfigChangeInput, ConfigChangeOutput;
            CwdChanged, "cwd-changed", CwdChangedInput, CwdChangedOutput;
            DirectoryAdded, "directory-added", DirectoryAddedInput, DirectoryAddedOutput;
            FileChanged, "file-changed", FileChangedInput, FileChangedOutput;
            WorktreeCreate, "worktree-create", WorktreeCreateInput, WorktreeCreateOutput;
            WorktreeRemove, "worktree-remove", WorktreeRemoveInput, WorktreeRemoveOutput;
            PreCompact, "pre-compact", PreCompactInput, PreCompactOutput;
            PostCompact, "post-compact", PostCompactInput, PostCompactOutput;
            Elicitation, "elicitation", ElicitationInput, ElicitationOutput;
            ElicitationResult, "elicitation-result", ElicitationResultInput, ElicitationResultOutput;
            SessionEnd, "session-end", SessionEndInput, SessionEndOutput;
            PreModelSwitch, "pre-model-switch", PreModelSwitchInput, PreModelSwitchOutput;
            PostModelSwitch, "post-model-switch", PostModelSwitchInput, PostModelSwitchOutput;
        }
    };
}

#[macro_use]
mod open_enum;

mod cap;
mod event;
mod input;
mod lenient;
mod model;
mod output;
mod tool;
mod values;

#[cfg(feature = "schema")]
pub mod schema;

pub use cap::{MAX_OUTPUT_CHARS, TRUNCATION_MARKER, cap_text, utf16_len};
pub use event::{EventKind, UnknownEvent};
pub use input::*;
pub use lenient::{json_from_slice, repair_json};
pub use model::{DEFAULT_CONTEXT_WINDOW, context_window, window_holding};
pub use output::*;
pub use tool::{
    OTHER_TOOLS, TOOL_ALIASES, ToolName, is_shell_tool, known_tool_names, matcher_covers,
    path_argument,
};
pub use values::*;
