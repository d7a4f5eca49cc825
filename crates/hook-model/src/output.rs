//! Hook outputs: the JSON object a hook writes to stdout.
//!
//! One type per event, each with exactly the fields Claude Code reads for that event (as its
//! hooks documentation gives each event's output): the universal fields it honours, a top-level `decision`/`reason` where the event
//! blocks that way, and a `hookSpecificOutput` whose `hookEventName` is written by construction.
//! Fields Claude Code discards for an event are not there, so they cannot be set by mistake.
//! [`HookOutput`] holds any of them; [`HookOutput::render`] caps and serializes.
//!
//! It is long because the protocol is: 33 events, each its own type, kept in one file so that
//! the table of what each event answers reads in one place.

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::cap::CapStrings;
use crate::{EventKind, MAX_OUTPUT_CHARS, PermissionUpdate};

/// A top-level block: `"decision": "block"` with the reason, which Claude Code requires.
/// Where the reason goes depends on the event: to the model for `Stop`, `SubagentStop` and
/// `PostToolUse`; to the user for `UserPromptSubmit`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Why.
    pub reason: String,
}

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("decision", "block")?;
        map.serialize_entry("reason", &self.reason)?;
        map.end()
    }
}

impl CapStrings for Block {
    fn cap_strings(&mut self, max: usize) -> bool {
        self.reason.cap_strings(max)
    }
}

/// `PreToolUse`'s `permissionDecision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PermissionDecision {
    /// Run without a permission prompt; the reason is shown to the user.
    Allow,
    /// Refuse; the reason is shown to the model.
    Deny,
    /// Show the permission prompt; the reason is shown to the user.
    Ask,
    /// Leave the decision to the SDK host (`-p` with a single tool call only).
    Defer,
}

/// `PreModelSwitch`'s `permissionDecision`: [`PermissionDecision`] without `defer`, which
/// Claude Code 2.1.330 rejects for this event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ModelSwitchDecision {
    /// Switch without the confirmation.
    Allow,
    /// Cancel the switch.
    Deny,
    /// Confirm with the user (refused in print mode).
    Ask,
}

/// `PermissionRequest`'s `decision` object.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "behavior", rename_all = "lowercase", rename_all_fields = "camelCase")]
pub enum PermissionRequestDecision {
    /// Grant the permission.
    Allow {
        /// Replaces the tool's whole input.
        #[serde(skip_serializing_if = "Option::is_none")]
        updated_input: Option<Map<String, Value>>,
        /// Permission rules to apply, like the prompt's "always allow" options.
        #[serde(skip_serializing_if = "Option::is_none")]
        updated_permissions: Option<Vec<PermissionUpdate>>,
    },
    /// Refuse the permission.
    Deny {
        /// Told to the model.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// Whether to stop the agent as well.
        #[serde(skip_serializing_if = "Option::is_none")]
        interrupt: Option<bool>,
    },
}

impl CapStrings for PermissionRequestDecision {
    fn cap_strings(&mut self, max: usize) -> bool {
        match self {
            PermissionRequestDecision::Allow { .. } => false,
            PermissionRequestDecision::Deny { message, .. } => message.cap_strings(max),
        }
    }
}

/// An `Elicitation` / `ElicitationResult` answer (`hookSpecificOutput.action`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationReply {
    /// Answer with `content`.
    Accept,
    /// Decline.
    Decline,
    /// Cancel.
    Cancel,
}

macro_rules! no_strings {
    ($($ty:ty),+) => {
        $(impl CapStrings for $ty {
            fn cap_strings(&mut self, _: usize) -> bool {
                false
            }
        })+
    };
}

no_strings!(PermissionDecision, ModelSwitchDecision, ElicitationReply);

/// The `hookSpecificOutput` object of one event.
pub trait HookSpecific: Serialize + Sized {
    /// The event, written as `hookEventName`.
    const EVENT: EventKind;

    /// Whether no field is set, so that `hookSpecificOutput` is left out.
    fn is_empty(&self) -> bool;

    /// Serializes the fields with `hookEventName` first.
    ///
    /// # Errors
    ///
    /// When the serializer fails.
    fn serialize_tagged<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Tagged<'a, T> {
            #[serde(rename = "hookEventName")]
            event: EventKind,
            #[serde(flatten)]
            fields: &'a T,
        }
        Tagged { event: Self::EVENT, fields: self }.serialize(serializer)
    }
}

/// Defines one event's output type and, when the event has one, its `hookSpecificOutput` type.
/// Every field is optional and left out of the JSON when unset.
macro_rules! output {
    (
        $(#[$meta:meta])*
        $output:ident for $event:ident {
            $( $(#[$tmeta:meta])* $top:ident: $tty:ty, )*
        }
        $(
            $(#[$smeta:meta])*
            specific $specific:ident {
                $( $(#[$fmeta:meta])* $field:ident: $fty:ty, )*
            }
        )?
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, Serialize)]
        #[serde(rename_all = "camelCase")]
        pub struct $output {
            $(
                $(#[$tmeta])*
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $top: Option<$tty>,
            )*
            $(
                /// `hookSpecificOutput`, with `hookEventName` set by construction.
                #[serde(
                    rename = "hookSpecificOutput",
                    skip_serializing_if = "HookSpecific::is_empty",
                    serialize_with = "HookSpecific::serialize_tagged"
                )]
                pub hook_specific_output: $specific,
            )?
        }

        impl $output {
            /// Whether no field is set: the hook has nothing to say.
            pub fn is_empty(&self) -> bool {
                true $( && self.$top.is_none() )* $( && <$specific as HookSpecific>::is_empty(&self.hook_specific_output) )?
            }
        }

        impl CapStrings for $output {
            // `max` is unused by the outputs that have no field at all.
            #[allow(unused_variables)]
            fn cap_strings(&mut self, max: usize) -> bool {
                // `|`, not `||`: every field is capped, not just the first too long.
                false
                    $( | self.$top.cap_strings(max) )*
                    $( | <$specific as CapStrings>::cap_strings(&mut self.hook_specific_output, max) )?
            }
        }

        $(
            $(#[$smeta])*
            #[derive(Clone, Debug, Default, PartialEq, Serialize)]
            #[serde(rename_all = "camelCase")]
            pub struct $specific {
                $(
                    $(#[$fmeta])*
                    #[serde(skip_serializing_if = "Option::is_none")]
                    pub $field: Option<$fty>,
                )*
            }

            impl HookSpecific for $specific {
                const EVENT: EventKind = EventKind::$event;

                fn is_empty(&self) -> bool {
                    true $( && self.$field.is_none() )*
                }
            }

            impl CapStrings for $specific {
                fn cap_strings(&mut self, max: usize) -> bool {
                    false $( | self.$field.cap_strings(max) )*
                }
            }
        )?
    };
}

output! {
    /// `SessionStart` output. Context goes to the start of the conversation.
    SessionStartOutput for SessionStart {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence (OSC 0/1/2/9/99/777 or BEL).
        terminal_sequence: String,
    }
    /// `SessionStart`'s `hookSpecificOutput`.
    specific SessionStartSpecific {
        /// Text for the model.
        additional_context: String,
        /// The first user turn (`-p` only).
        initial_user_message: String,
        /// The session's title (startup, resume and fork only).
        session_title: String,
        /// Absolute paths to watch for `FileChanged`.
        watch_paths: Vec<String>,
        /// Whether to reload skills.
        reload_skills: bool,
    }
}

output! {
    /// `Setup` output.
    SetupOutput for Setup {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `Setup`'s `hookSpecificOutput`.
    specific SetupSpecific {
        /// Text for the model.
        additional_context: String,
    }
}

output! {
    /// `UserPromptSubmit` output. A block erases the prompt and shows the reason to the user.
    UserPromptSubmitOutput for UserPromptSubmit {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`, shown to the user.
        #[serde(flatten)]
        block: Block,
    }
    /// `UserPromptSubmit`'s `hookSpecificOutput`.
    specific UserPromptSubmitSpecific {
        /// Text for the model, next to the prompt.
        additional_context: String,
        /// The session's title.
        session_title: String,
        /// Whether to hide the original prompt.
        suppress_original_prompt: bool,
    }
}

output! {
    /// `UserPromptExpansion` output.
    UserPromptExpansionOutput for UserPromptExpansion {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`, shown to the user.
        #[serde(flatten)]
        block: Block,
    }
    /// `UserPromptExpansion`'s `hookSpecificOutput`.
    specific UserPromptExpansionSpecific {
        /// Text for the model.
        additional_context: String,
        /// Whether to hide the original prompt (Agent SDK types).
        suppress_original_prompt: bool,
    }
}

output! {
    /// `MessageDisplay` output: display only.
    MessageDisplayOutput for MessageDisplay {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `MessageDisplay`'s `hookSpecificOutput`.
    specific MessageDisplaySpecific {
        /// Replaces the delta on screen (not in the conversation).
        display_content: String,
    }
}

output! {
    /// `PreToolUse` output: allow, ask, deny or defer the call, rewrite it, or add context.
    PreToolUseOutput for PreToolUse {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `PreToolUse`'s `hookSpecificOutput`.
    specific PreToolUseSpecific {
        /// The decision.
        permission_decision: PermissionDecision,
        /// Why: shown to the model on `deny`, to the user on `allow` and `ask`.
        permission_decision_reason: String,
        /// Replaces the tool's whole input (with `allow` or `ask`).
        updated_input: Map<String, Value>,
        /// Text for the model, next to the tool result.
        additional_context: String,
    }
}

output! {
    /// `PermissionRequest` output: answer the permission prompt. Claude Code 2.1.330 reads only
    /// the decision (`systemMessage`, `continue` and exit code 2 are ignored).
    PermissionRequestOutput for PermissionRequest {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `PermissionRequest`'s `hookSpecificOutput`.
    specific PermissionRequestSpecific {
        /// Allow or deny, with their options.
        decision: PermissionRequestDecision,
    }
}

output! {
    /// `PermissionDenied` output: ask the classifier's denial to be retried. Claude Code 2.1.330
    /// reads only `retry`.
    PermissionDeniedOutput for PermissionDenied {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `PermissionDenied`'s `hookSpecificOutput`.
    specific PermissionDeniedSpecific {
        /// Whether the model may retry the call.
        retry: bool,
    }
}

output! {
    /// `PostToolUse` output. A block adds the reason next to the result (the tool already ran).
    PostToolUseOutput for PostToolUse {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`, shown to the model.
        #[serde(flatten)]
        block: Block,
    }
    /// `PostToolUse`'s `hookSpecificOutput`.
    specific PostToolUseSpecific {
        /// Text for the model, next to the tool result.
        additional_context: String,
        /// Replaces the tool's output; must match the tool's output shape.
        updated_tool_output: Value,
        /// Replaces an MCP tool's output.
        #[serde(rename = "updatedMCPToolOutput")]
        updated_mcp_tool_output: Value,
        /// Context for the auto-mode classifier (at most 2,000 characters, shared by all hooks).
        classifier_context: String,
    }
}

output! {
    /// `PostToolUseFailure` output.
    PostToolUseFailureOutput for PostToolUseFailure {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `PostToolUseFailure`'s `hookSpecificOutput`.
    specific PostToolUseFailureSpecific {
        /// Text for the model, next to the error.
        additional_context: String,
    }
}

output! {
    /// `PostToolBatch` output. A block stops the loop before the next model call.
    PostToolBatchOutput for PostToolBatch {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`.
        #[serde(flatten)]
        block: Block,
    }
    /// `PostToolBatch`'s `hookSpecificOutput`.
    specific PostToolBatchSpecific {
        /// Text for the model, next to the tool results.
        additional_context: String,
    }
}

output! {
    /// `Notification` output. Claude Code discards everything but `terminalSequence`.
    NotificationOutput for Notification {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
}

output! {
    /// `SubagentStart` output. Context goes into the subagent.
    SubagentStartOutput for SubagentStart {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `SubagentStart`'s `hookSpecificOutput`.
    specific SubagentStartSpecific {
        /// Text for the subagent.
        additional_context: String,
    }
}

output! {
    /// `SubagentStop` output. A block keeps the subagent working; the reason is its instruction.
    SubagentStopOutput for SubagentStop {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`, shown to the subagent.
        #[serde(flatten)]
        block: Block,
    }
    /// `SubagentStop`'s `hookSpecificOutput`.
    specific SubagentStopSpecific {
        /// Text for the subagent; keeps its turn going.
        additional_context: String,
    }
}

output! {
    /// `TaskCreated` output. A block deletes the task and tells the model why (`systemMessage`
    /// is ignored).
    TaskCreatedOutput for TaskCreated {
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`, shown to the model as a tool error.
        #[serde(flatten)]
        block: Block,
    }
}

output! {
    /// `TaskCompleted` output. A block refuses the completion and tells the model why;
    /// `continue: false` stops the teammate instead (`systemMessage` is ignored).
    TaskCompletedOutput for TaskCompleted {
        /// `false` stops the teammate.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`, shown to the model.
        #[serde(flatten)]
        block: Block,
    }
}

output! {
    /// `Stop` output. A block keeps Claude working; the reason is its instruction.
    StopOutput for Stop {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`, shown to the model.
        #[serde(flatten)]
        block: Block,
    }
    /// `Stop`'s `hookSpecificOutput`.
    specific StopSpecific {
        /// Text for the model; keeps the turn going.
        additional_context: String,
    }
}

output! {
    /// `StopFailure` output. Claude Code ignores everything but `terminalSequence`.
    StopFailureOutput for StopFailure {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
}

output! {
    /// `TeammateIdle` output. A block keeps the teammate working, the reason its instruction;
    /// `continue: false` stops it.
    TeammateIdleOutput for TeammateIdle {
        /// `false` stops the teammate.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`, for the teammate.
        #[serde(flatten)]
        block: Block,
    }
}

output! {
    /// `InstructionsLoaded` output: side effects only.
    InstructionsLoadedOutput for InstructionsLoaded {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
}

output! {
    /// `ConfigChange` output. A block keeps the change from applying (not for policy settings);
    /// Claude Code shows the reason nowhere.
    ConfigChangeOutput for ConfigChange {
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`.
        #[serde(flatten)]
        block: Block,
    }
}

output! {
    /// `CwdChanged` output.
    CwdChangedOutput for CwdChanged {
        /// A brief notice in the terminal.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `CwdChanged`'s `hookSpecificOutput`.
    specific CwdChangedSpecific {
        /// Replaces the list of watched paths.
        watch_paths: Vec<String>,
    }
}

output! {
    /// `DirectoryAdded` output. (Its `systemMessage` goes to the model, not the user: hookpack
    /// does not write it.)
    DirectoryAddedOutput for DirectoryAdded {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
}

output! {
    /// `FileChanged` output.
    FileChangedOutput for FileChanged {
        /// A brief notice in the terminal.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `FileChanged`'s `hookSpecificOutput`.
    specific FileChangedSpecific {
        /// Replaces the list of watched paths.
        watch_paths: Vec<String>,
    }
}

output! {
    /// `WorktreeCreate` output. A command hook answers with the worktree's path as the last line
    /// of plain stdout, not JSON; hookpack does not create worktrees and never answers this event.
    WorktreeCreateOutput for WorktreeCreate {}
}

output! {
    /// `WorktreeRemove` output: side effects only.
    WorktreeRemoveOutput for WorktreeRemove {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
}

output! {
    /// `PreCompact` output. A block stops the compaction; there is no `additionalContext`.
    PreCompactOutput for PreCompact {
        /// A terminal escape sequence.
        terminal_sequence: String,
        /// `"decision": "block"` and its `reason`.
        #[serde(flatten)]
        block: Block,
    }
}

output! {
    /// `PostCompact` output: side effects only.
    PostCompactOutput for PostCompact {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
}

output! {
    /// `Elicitation` output: answer the MCP server in the user's place.
    ElicitationOutput for Elicitation {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `Elicitation`'s `hookSpecificOutput`.
    specific ElicitationSpecific {
        /// The answer.
        action: ElicitationReply,
        /// The form's content, with `accept`.
        content: Map<String, Value>,
    }
}

output! {
    /// `ElicitationResult` output: change the user's answer.
    ElicitationResultOutput for ElicitationResult {
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `ElicitationResult`'s `hookSpecificOutput`.
    specific ElicitationResultSpecific {
        /// The answer.
        action: ElicitationReply,
        /// The form's content, with `accept`.
        content: Map<String, Value>,
    }
}

output! {
    /// `SessionEnd` output. Claude Code discards all JSON of this event.
    SessionEndOutput for SessionEnd {}
}

output! {
    /// `PreModelSwitch` output (Agent SDK types only): the same decision as `PreToolUse`.
    PreModelSwitchOutput for PreModelSwitch {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `PreModelSwitch`'s `hookSpecificOutput`.
    specific PreModelSwitchSpecific {
        /// `allow`, `ask` or `deny`.
        permission_decision: ModelSwitchDecision,
        /// Why.
        permission_decision_reason: String,
    }
}

output! {
    /// `PostModelSwitch` output (Agent SDK types only).
    PostModelSwitchOutput for PostModelSwitch {
        /// `false` stops Claude after the hooks run.
        r#continue: bool,
        /// Shown to the user when `continue` is `false`.
        stop_reason: String,
        /// A warning shown to the user.
        system_message: String,
        /// A terminal escape sequence.
        terminal_sequence: String,
    }
    /// `PostModelSwitch`'s `hookSpecificOutput`.
    specific PostModelSwitchSpecific {
        /// Text for the model.
        additional_context: String,
    }
}

macro_rules! define_hook_output {
    ($( $name:ident, $kebab:literal, $input:ident, $output:ident; )+) => {
        /// The answer to one event.
        #[derive(Clone, Debug, PartialEq, Serialize)]
        #[serde(untagged)]
        pub enum HookOutput {
            $(
                #[doc = concat!("An answer to `", stringify!($name), "`.")]
                $name($output),
            )+
        }

        impl HookOutput {
            /// An answer to `kind` that says nothing yet.
            pub fn empty(kind: EventKind) -> Self {
                match kind {
                    $( EventKind::$name => HookOutput::$name($output::default()), )+
                }
            }

            /// The event answered.
            pub fn kind(&self) -> EventKind {
                match self {
                    $( HookOutput::$name(_) => EventKind::$name, )+
                }
            }

            /// Whether the answer says nothing, so that the hook prints nothing.
            pub fn is_empty(&self) -> bool {
                match self {
                    $( HookOutput::$name(output) => output.is_empty(), )+
                }
            }

            /// Caps every free-text string at `max` characters (see [`crate::cap_text`]);
            /// returns whether any was cut. JSON that replaces a tool's input or output is
            /// never cut.
            pub fn cap_strings(&mut self, max: usize) -> bool {
                match self {
                    $( HookOutput::$name(output) => output.cap_strings(max), )+
                }
            }
        }
    };
}

for_each_event!(define_hook_output);

impl HookOutput {
    /// The JSON object to print, with every string capped at [`MAX_OUTPUT_CHARS`];
    /// `None` when the answer is empty and the hook should print nothing.
    pub fn render(&mut self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        self.cap_strings(MAX_OUTPUT_CHARS);
        // Serializing these types cannot fail: every map key is a string and no `Serialize`
        // impl here returns an error. Should that ever change, answering nothing fails open.
        serde_json::to_string(self).ok()
    }
}

/// A field an event's output does not have: Claude Code would not read it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotAccepted {
    /// The event.
    pub event: EventKind,
    /// The field, as Claude Code spells it.
    pub field: &'static str,
}

impl std::fmt::Display for NotAccepted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` does not read `{}`", self.event, self.field)
    }
}

impl std::error::Error for NotAccepted {}

/// Setters for the fields many events share, so that the engine builds any event's answer
/// without matching on events itself. Each refuses an event that does not read the field.
impl HookOutput {
    /// Sets `hookSpecificOutput.additionalContext`: text for the model.
    ///
    /// # Errors
    ///
    /// When the event takes no context ([`EventKind::accepts_additional_context`]).
    pub fn set_additional_context(&mut self, text: String) -> Result<(), NotAccepted> {
        let slot = match self {
            HookOutput::SessionStart(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::Setup(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::UserPromptSubmit(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::UserPromptExpansion(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::PreToolUse(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::PostToolUse(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::PostToolUseFailure(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::PostToolBatch(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::SubagentStart(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::SubagentStop(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::Stop(o) => &mut o.hook_specific_output.additional_context,
            HookOutput::PostModelSwitch(o) => &mut o.hook_specific_output.additional_context,
            _ => return Err(NotAccepted { event: self.kind(), field: "additionalContext" }),
        };
        *slot = Some(text);
        Ok(())
    }

    /// Sets `systemMessage`: a note for the user.
    ///
    /// # Errors
    ///
    /// When Claude Code discards the event's `systemMessage`
    /// ([`EventKind::shows_system_message`]).
    pub fn set_system_message(&mut self, text: String) -> Result<(), NotAccepted> {
        let event = self.kind();
        let slot =
            self.system_message_mut().ok_or(NotAccepted { event, field: "systemMessage" })?;
        *slot = Some(text);
        Ok(())
    }

    /// Adds `notice` as a line of the `systemMessage`, when the event has one.
    pub fn announce(&mut self, notice: String) {
        if let Some(slot) = self.system_message_mut() {
            *slot = Some(match slot.take() {
                Some(message) => format!("{message}\n{notice}"),
                None => notice,
            });
        }
    }

    /// The `systemMessage` field, when the event has one.
    pub fn system_message_mut(&mut self) -> Option<&mut Option<String>> {
        Some(match self {
            HookOutput::SessionStart(o) => &mut o.system_message,
            HookOutput::Setup(o) => &mut o.system_message,
            HookOutput::UserPromptSubmit(o) => &mut o.system_message,
            HookOutput::UserPromptExpansion(o) => &mut o.system_message,
            HookOutput::PreToolUse(o) => &mut o.system_message,
            HookOutput::PostToolUse(o) => &mut o.system_message,
            HookOutput::PostToolUseFailure(o) => &mut o.system_message,
            HookOutput::PostToolBatch(o) => &mut o.system_message,
            HookOutput::SubagentStart(o) => &mut o.system_message,
            HookOutput::SubagentStop(o) => &mut o.system_message,
            HookOutput::Stop(o) => &mut o.system_message,
            HookOutput::TeammateIdle(o) => &mut o.system_message,
            HookOutput::CwdChanged(o) => &mut o.system_message,
            HookOutput::FileChanged(o) => &mut o.system_message,
            HookOutput::PreModelSwitch(o) => &mut o.system_message,
            HookOutput::PostModelSwitch(o) => &mut o.system_message,
            _ => return None,
        })
    }

    /// Sets `"continue": false` with its `stopReason`: Claude Code stops after the hooks run
    /// and shows the reason to the user.
    ///
    /// # Errors
    ///
    /// When the event ignores `continue` ([`EventKind::honours_continue`]).
    pub fn set_stop(&mut self, reason: String) -> Result<(), NotAccepted> {
        let (keep_going, why) = match self {
            HookOutput::UserPromptSubmit(o) => (&mut o.r#continue, &mut o.stop_reason),
            HookOutput::UserPromptExpansion(o) => (&mut o.r#continue, &mut o.stop_reason),
            HookOutput::PreToolUse(o) => (&mut o.r#continue, &mut o.stop_reason),
            HookOutput::PostToolUse(o) => (&mut o.r#continue, &mut o.stop_reason),
            HookOutput::PostToolBatch(o) => (&mut o.r#continue, &mut o.stop_reason),
            HookOutput::Stop(o) => (&mut o.r#continue, &mut o.stop_reason),
            HookOutput::SubagentStop(o) => (&mut o.r#continue, &mut o.stop_reason),
            HookOutput::TeammateIdle(o) => (&mut o.r#continue, &mut o.stop_reason),
            HookOutput::TaskCompleted(o) => (&mut o.r#continue, &mut o.stop_reason),
            _ => return Err(NotAccepted { event: self.kind(), field: "continue" }),
        };
        *keep_going = Some(false);
        *why = Some(reason);
        Ok(())
    }

    /// Sets `hookSpecificOutput.sessionTitle`.
    ///
    /// # Errors
    ///
    /// When the event sets no title ([`EventKind::sets_session_title`]).
    pub fn set_session_title(&mut self, title: String) -> Result<(), NotAccepted> {
        let slot = match self {
            HookOutput::SessionStart(o) => &mut o.hook_specific_output.session_title,
            HookOutput::UserPromptSubmit(o) => &mut o.hook_specific_output.session_title,
            _ => return Err(NotAccepted { event: self.kind(), field: "sessionTitle" }),
        };
        *slot = Some(title);
        Ok(())
    }

    /// Sets `hookSpecificOutput.watchPaths`: absolute paths whose changes run `FileChanged`.
    ///
    /// # Errors
    ///
    /// When the event watches nothing ([`EventKind::sets_watch_paths`]).
    pub fn set_watch_paths(&mut self, paths: Vec<String>) -> Result<(), NotAccepted> {
        let slot = match self {
            HookOutput::SessionStart(o) => &mut o.hook_specific_output.watch_paths,
            HookOutput::CwdChanged(o) => &mut o.hook_specific_output.watch_paths,
            HookOutput::FileChanged(o) => &mut o.hook_specific_output.watch_paths,
            _ => return Err(NotAccepted { event: self.kind(), field: "watchPaths" }),
        };
        *slot = Some(paths);
        Ok(())
    }

    /// Sets the top-level `"decision": "block"` with its reason.
    ///
    /// # Errors
    ///
    /// When the event blocks some other way, or not at all
    /// ([`EventKind::accepts_block_decision`]).
    pub fn set_block(&mut self, reason: String) -> Result<(), NotAccepted> {
        let slot = match self {
            HookOutput::UserPromptSubmit(o) => &mut o.block,
            HookOutput::UserPromptExpansion(o) => &mut o.block,
            HookOutput::PostToolUse(o) => &mut o.block,
            HookOutput::PostToolBatch(o) => &mut o.block,
            HookOutput::Stop(o) => &mut o.block,
            HookOutput::SubagentStop(o) => &mut o.block,
            HookOutput::TaskCreated(o) => &mut o.block,
            HookOutput::TaskCompleted(o) => &mut o.block,
            HookOutput::TeammateIdle(o) => &mut o.block,
            HookOutput::ConfigChange(o) => &mut o.block,
            HookOutput::PreCompact(o) => &mut o.block,
            _ => return Err(NotAccepted { event: self.kind(), field: "decision" }),
        };
        *slot = Some(Block { reason });
        Ok(())
    }
}
