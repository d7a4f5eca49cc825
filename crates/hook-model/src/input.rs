//! Hook inputs: the JSON object Claude Code writes to a hook's stdin.
//!
//! A payload is read in two passes over one [`serde_json::Value`]: [`Common`] takes the fields
//! every event shares, and the event's own type takes the rest. Both ignore fields they do not
//! know, so the payload never has to be copied into an intermediate form (as `#[serde(flatten)]`
//! would) and the engine keeps the `Value` for rules that read any dotted path of it.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::{
    BackgroundTask, CompactTrigger, ConfigSource, DirectorySource, Effort, ElicitationAction,
    ElicitationMode, EventKind, ExpansionType, FileEvent, LoadReason, McpServer, MemoryType,
    ModelSwitchSource, NotificationType, PermissionMode, PricingSource, PromptSource, SessionCron,
    SessionEndReason, SessionStartSource, SetupTrigger, StopFailureError, ToolCall, ToolName,
};

/// The fields every event's payload carries.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Common {
    /// The session's id (also `$CLAUDE_CODE_SESSION_ID`).
    pub session_id: String,
    /// The main session's JSONL transcript. Written asynchronously: it may lag.
    pub transcript_path: String,
    /// Claude Code's working directory; follows `cd` and worktrees.
    pub cwd: String,
    /// The session's permission mode; not every event receives it.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub permission_mode: Option<PermissionMode>,
    /// The id of the prompt in progress; absent before the first prompt.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub prompt_id: Option<String>,
    /// The subagent's id, when the hook fires inside a subagent.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub agent_id: Option<String>,
    /// The subagent's type, or the `--agent` name on the main thread.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub agent_type: Option<String>,
    /// The model's effort, on models that have one.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub effort: Option<Effort>,
}

/// `SessionStart`: a session begins or resumes.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionStartInput {
    /// Why the session started.
    pub source: SessionStartSource,
    /// The model, when Claude Code sends it.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub model: Option<String>,
    /// The session's title.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub session_title: Option<String>,
    /// Seconds since the last response, on resume or fork (Agent SDK types).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub seconds_since_last_response: Option<f64>,
    /// Tokens the next request re-sends, on resume or fork (Agent SDK types).
    #[serde(default, deserialize_with = "crate::lenient::optional_u64")]
    pub context_tokens: Option<u64>,
    /// Whether the prompt cache has likely expired (Agent SDK types).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub prompt_cache_likely_expired: Option<bool>,
    /// Estimated cost of rewriting the cache, in USD (Agent SDK types).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub estimated_cache_write_usd: Option<f64>,
}

/// `Setup`: `--init`, `--init-only` or `--maintenance`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SetupInput {
    /// What ran the setup.
    pub trigger: SetupTrigger,
}

/// `UserPromptSubmit`: a prompt was submitted, before the model sees it.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UserPromptSubmitInput {
    /// The prompt's text.
    pub prompt: String,
    /// Where the prompt came from (Agent SDK types; may be omitted).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub source: Option<PromptSource>,
    /// The session's title.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub session_title: Option<String>,
}

/// `UserPromptExpansion`: a typed `/command` expands.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct UserPromptExpansionInput {
    /// What kind of command expands.
    pub expansion_type: ExpansionType,
    /// The command's name, without the slash.
    pub command_name: String,
    /// The text after the command.
    pub command_args: String,
    /// Where the command is defined, e.g. `plugin`.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub command_source: Option<String>,
    /// The prompt as typed, e.g. `/review src/`.
    pub prompt: String,
}

/// `MessageDisplay`: assistant text streams to the screen.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MessageDisplayInput {
    /// The turn's id.
    pub turn_id: String,
    /// The message's id (not the API's `msg_` id).
    pub message_id: String,
    /// The batch's index within the message.
    #[serde(default, deserialize_with = "crate::lenient::u64")]
    pub index: u64,
    /// Whether this is the message's last batch.
    #[serde(rename = "final")]
    pub is_final: bool,
    /// The text to display: whole lines, except in the last batch.
    pub delta: String,
}

/// `PreToolUse`: before a tool call; can allow, ask, deny or rewrite it.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PreToolUseInput {
    /// The tool.
    pub tool_name: ToolName,
    /// The tool's arguments.
    pub tool_input: Map<String, Value>,
    /// The call's id; empty before Claude Code 2.0.43, which did not send it.
    #[serde(default, deserialize_with = "crate::lenient::string")]
    pub tool_use_id: String,
    /// The MCP server behind the tool (Agent SDK types).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub mcp_server: Option<McpServer>,
}

/// `PermissionRequest`: a permission prompt is about to show.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PermissionRequestInput {
    /// The tool.
    pub tool_name: ToolName,
    /// The tool's arguments.
    pub tool_input: Map<String, Value>,
    /// The "always allow" options the prompt would offer. Kept as sent, since Claude Code adds
    /// kinds of update; [`crate::PermissionUpdate`] types the ones a hook sends back.
    #[serde(default)]
    pub permission_suggestions: Vec<Value>,
    /// The MCP server behind the tool (Agent SDK types).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub mcp_server: Option<McpServer>,
}

/// `PermissionDenied`: the auto-mode classifier denied a tool call.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PermissionDeniedInput {
    /// The tool.
    pub tool_name: ToolName,
    /// The tool's arguments.
    pub tool_input: Map<String, Value>,
    /// The call's id; empty before Claude Code 2.0.43, which did not send it.
    #[serde(default, deserialize_with = "crate::lenient::string")]
    pub tool_use_id: String,
    /// The classifier's reason.
    pub reason: String,
    /// The MCP server behind the tool (Agent SDK types).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub mcp_server: Option<McpServer>,
}

/// `PostToolUse`: a tool call succeeded.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PostToolUseInput {
    /// The tool.
    pub tool_name: ToolName,
    /// The tool's arguments.
    pub tool_input: Map<String, Value>,
    /// The tool's structured output; its shape depends on the tool.
    #[serde(default)]
    pub tool_response: Value,
    /// The call's id; empty before Claude Code 2.0.43, which did not send it.
    #[serde(default, deserialize_with = "crate::lenient::string")]
    pub tool_use_id: String,
    /// How long the call took.
    #[serde(default, deserialize_with = "crate::lenient::optional_u64")]
    pub duration_ms: Option<u64>,
    /// The MCP server behind the tool (Agent SDK types).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub mcp_server: Option<McpServer>,
}

/// `PostToolUseFailure`: a tool call failed after it started.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PostToolUseFailureInput {
    /// The tool.
    pub tool_name: ToolName,
    /// The tool's arguments.
    pub tool_input: Map<String, Value>,
    /// The call's id; empty before Claude Code 2.0.43, which did not send it.
    #[serde(default, deserialize_with = "crate::lenient::string")]
    pub tool_use_id: String,
    /// The error; for Bash the first line is `Exit code N`.
    pub error: String,
    /// Whether the user interrupted the call.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub is_interrupt: Option<bool>,
    /// How long the call took.
    #[serde(default, deserialize_with = "crate::lenient::optional_u64")]
    pub duration_ms: Option<u64>,
    /// The MCP server behind the tool (Agent SDK types).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub mcp_server: Option<McpServer>,
}

/// `PostToolBatch`: a whole batch of parallel tool calls resolved.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PostToolBatchInput {
    /// The batch's calls.
    pub tool_calls: Vec<ToolCall>,
}

/// `Notification`: Claude Code sends a notification.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NotificationInput {
    /// The notification's text.
    pub message: String,
    /// Its title.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub title: Option<String>,
    /// Its kind.
    pub notification_type: NotificationType,
}

/// `SubagentStart`: a subagent was spawned. Its `agent_id` and `agent_type` are in [`Common`].
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SubagentStartInput {}

/// `SubagentStop`: a subagent finished. Its `agent_id` and `agent_type` are in [`Common`].
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SubagentStopInput {
    /// Whether the subagent already continues because a stop hook blocked.
    pub stop_hook_active: bool,
    /// The subagent's own transcript.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub agent_transcript_path: Option<String>,
    /// The subagent's last message.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub last_assistant_message: Option<String>,
    /// Background tasks still running.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub background_tasks: Option<Vec<BackgroundTask>>,
    /// The parent session's scheduled prompts.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub session_crons: Option<Vec<SessionCron>>,
}

/// `TaskCreated`: the `TaskCreate` tool created a task.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskCreatedInput {
    /// The task's id.
    pub task_id: String,
    /// The task's subject.
    pub task_subject: String,
    /// The task's description.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub task_description: Option<String>,
    /// The teammate that owns it.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub teammate_name: Option<String>,
    /// The team (deprecated by Claude Code).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub team_name: Option<String>,
}

/// `TaskCompleted`: a task is being marked completed.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TaskCompletedInput {
    /// The task's id.
    pub task_id: String,
    /// The task's subject.
    pub task_subject: String,
    /// The task's description.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub task_description: Option<String>,
    /// The teammate that owns it.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub teammate_name: Option<String>,
    /// The team (deprecated by Claude Code).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub team_name: Option<String>,
}

/// `Stop`: the main agent finished responding (not on a user interrupt).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StopInput {
    /// Whether the agent already continues because a stop hook blocked.
    pub stop_hook_active: bool,
    /// The agent's last message; read this, not the transcript, which may lag.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub last_assistant_message: Option<String>,
    /// Background tasks still running.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub background_tasks: Option<Vec<BackgroundTask>>,
    /// The session's scheduled prompts.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub session_crons: Option<Vec<SessionCron>>,
}

/// `StopFailure`: an API error ended the turn instead of `Stop`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct StopFailureInput {
    /// The error.
    pub error: StopFailureError,
    /// Details of the error.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub error_details: Option<Value>,
    /// The rendered API error text.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub last_assistant_message: Option<String>,
}

/// `TeammateIdle`: an agent-team teammate is about to go idle.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TeammateIdleInput {
    /// The teammate.
    pub teammate_name: String,
    /// The team (deprecated by Claude Code).
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub team_name: Option<String>,
}

/// `InstructionsLoaded`: a CLAUDE.md or rules file was loaded.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct InstructionsLoadedInput {
    /// The file.
    pub file_path: String,
    /// Which memory it belongs to.
    pub memory_type: MemoryType,
    /// Why it was loaded.
    pub load_reason: LoadReason,
    /// The `paths:` globs of a path rule.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub globs: Option<Vec<String>>,
    /// The file whose reading triggered the load.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub trigger_file_path: Option<String>,
    /// The file that imported it.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub parent_file_path: Option<String>,
}

/// `ConfigChange`: a settings or skill file changed.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ConfigChangeInput {
    /// Which settings changed.
    pub source: ConfigSource,
    /// The file that changed.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub file_path: Option<String>,
}

/// `CwdChanged`: the working directory changed.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CwdChangedInput {
    /// The previous directory.
    pub old_cwd: String,
    /// The new directory.
    pub new_cwd: String,
}

/// `DirectoryAdded`: a working directory was added.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DirectoryAddedInput {
    /// The directory.
    pub directory: String,
    /// How it was added.
    pub source: DirectorySource,
}

/// `FileChanged`: a watched file changed on disk.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct FileChangedInput {
    /// The file, absolute.
    pub file_path: String,
    /// What happened to it.
    pub event: FileEvent,
}

/// `WorktreeCreate`: a worktree is being created.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorktreeCreateInput {
    /// The worktree's slug, e.g. `bold-oak-a3f2`.
    pub name: String,
}

/// `WorktreeRemove`: a worktree is being removed.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WorktreeRemoveInput {
    /// The worktree, absolute.
    pub worktree_path: String,
}

/// `PreCompact`: before a compaction.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PreCompactInput {
    /// What started the compaction.
    pub trigger: CompactTrigger,
    /// The text after `/compact`; empty or null for automatic compactions.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub custom_instructions: Option<String>,
}

/// `PostCompact`: after a compaction.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PostCompactInput {
    /// What started the compaction.
    pub trigger: CompactTrigger,
    /// The summary the compaction produced.
    pub compact_summary: String,
}

/// `Elicitation`: an MCP server asks the user for input.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ElicitationInput {
    /// The MCP server.
    pub mcp_server_name: String,
    /// What it asks.
    pub message: String,
    /// How it asks.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub mode: Option<ElicitationMode>,
    /// The URL to open, in `url` mode.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub url: Option<String>,
    /// The elicitation's id.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub elicitation_id: Option<String>,
    /// The JSON Schema of the form, in `form` mode.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub requested_schema: Option<Value>,
}

/// `ElicitationResult`: the user answered an elicitation.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ElicitationResultInput {
    /// The MCP server.
    pub mcp_server_name: String,
    /// How the user answered.
    pub action: ElicitationAction,
    /// How it asked.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub mode: Option<ElicitationMode>,
    /// The elicitation's id.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub elicitation_id: Option<String>,
    /// The answer, when accepted.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub content: Option<Value>,
}

/// `SessionEnd`: the session terminates.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionEndInput {
    /// Why it ends.
    pub reason: SessionEndReason,
}

/// A model switch, as `PreModelSwitch` and `PostModelSwitch` describe it (Agent SDK types only).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ModelSwitch {
    /// The current model.
    pub from_model: String,
    /// The model switched to.
    pub to_model: String,
    /// The model as the user asked for it.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub requested_model: Option<String>,
    /// Who asked.
    pub source: ModelSwitchSource,
    /// Tokens the next request re-sends.
    #[serde(default, deserialize_with = "crate::lenient::optional_u64")]
    pub context_tokens: Option<u64>,
    /// Whether the prompt cache is warm.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub prompt_cache_warm: Option<bool>,
    /// The cache's time to live, `5m` or `1h`.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub cache_ttl: Option<String>,
    /// Estimated cost of rewriting the cache, in USD.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub estimated_cache_write_usd: Option<f64>,
    /// Where the estimate's prices came from.
    #[serde(default, deserialize_with = "crate::lenient::optional")]
    pub pricing: Option<PricingSource>,
}

/// `PreModelSwitch`: a model switch was requested (Agent SDK types only).
pub type PreModelSwitchInput = ModelSwitch;
/// `PostModelSwitch`: the model was switched (Agent SDK types only).
pub type PostModelSwitchInput = ModelSwitch;

macro_rules! define_event_input {
    ($( $name:ident, $kebab:literal, $input:ident, $output:ident; )+) => {
        /// The fields of one event's payload beyond the [`Common`] ones.
        #[derive(Clone, Debug, PartialEq)]
        pub enum EventInput {
            $(
                #[doc = concat!("A `", stringify!($name), "` payload.")]
                $name($input),
            )+
        }

        impl EventInput {
            /// The event this input belongs to.
            pub fn kind(&self) -> EventKind {
                match self {
                    $( EventInput::$name(_) => EventKind::$name, )+
                }
            }

            /// The names of the event's own fields, as Claude Code sends them.
            fn own_fields(kind: EventKind) -> &'static [&'static str] {
                match kind {
                    $( EventKind::$name => field_names::<$input>(), )+
                }
            }

            fn from_value(kind: EventKind, payload: &Value) -> Result<Self, serde_json::Error> {
                Ok(match kind {
                    $( EventKind::$name => EventInput::$name($input::deserialize(payload)?), )+
                })
            }
        }
    };
}

for_each_event!(define_event_input);

/// The top-level fields a `kind` payload may carry: `hook_event_name`, the [`Common`] ones and
/// the event's own (what a test payload or a `field` condition can name).
pub fn input_fields(kind: EventKind) -> impl Iterator<Item = &'static str> {
    ["hook_event_name"]
        .into_iter()
        .chain(field_names::<Common>().iter().copied())
        .chain(EventInput::own_fields(kind).iter().copied())
}

/// The field names serde's derive gives a struct, read by asking it to deserialize from a
/// deserializer that only records them.
fn field_names<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    struct Names(Option<&'static [&'static str]>);
    #[derive(Debug)]
    struct Stop;
    impl fmt::Display for Stop {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("field names read")
        }
    }
    impl std::error::Error for Stop {}
    impl serde::de::Error for Stop {
        fn custom<M: fmt::Display>(_: M) -> Self {
            Stop
        }
    }
    impl<'de> serde::Deserializer<'de> for &mut Names {
        type Error = Stop;
        fn deserialize_any<V: serde::de::Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
            Err(Stop)
        }
        fn deserialize_struct<V: serde::de::Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Stop> {
            self.0 = Some(fields);
            Err(Stop)
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut names = Names(None);
    let _ = T::deserialize(&mut names);
    names.0.unwrap_or(&[])
}

/// A parsed hook payload.
#[derive(Clone, Debug, PartialEq)]
pub struct HookInput {
    /// The fields every event carries.
    pub common: Common,
    /// The event's own fields.
    pub event: EventInput,
}

impl HookInput {
    /// Reads the payload of a `kind` event.
    ///
    /// # Errors
    ///
    /// When the payload is not an object, its `hook_event_name` is missing or names another
    /// event, or a field the event requires is missing or has the wrong type.
    pub fn from_value(kind: EventKind, payload: &Value) -> Result<Self, InputError> {
        let event = event_name(payload)?;
        if event != kind.as_str() {
            return Err(InputError::WrongEvent { expected: kind, found: event.to_owned() });
        }
        let common = Common::deserialize(payload).map_err(|e| InputError::Invalid(kind, e))?;
        let event =
            EventInput::from_value(kind, payload).map_err(|e| InputError::Invalid(kind, e))?;
        Ok(HookInput { common, event })
    }

    /// The event.
    pub fn kind(&self) -> EventKind {
        self.event.kind()
    }

    /// The tool of a tool event.
    pub fn tool_name(&self) -> Option<&str> {
        self.tool().map(|(name, _)| name.as_str())
    }

    /// The prompt of a `UserPromptSubmit` (as submitted) or a `UserPromptExpansion` (as typed).
    pub fn prompt(&self) -> Option<&str> {
        match &self.event {
            EventInput::UserPromptSubmit(e) => Some(&e.prompt),
            EventInput::UserPromptExpansion(e) => Some(&e.prompt),
            _ => None,
        }
    }

    /// Whether a `Stop` or `SubagentStop` comes while the agent already continues because a
    /// stop hook blocked.
    pub fn stop_hook_active(&self) -> bool {
        match &self.event {
            EventInput::Stop(e) => e.stop_hook_active,
            EventInput::SubagentStop(e) => e.stop_hook_active,
            _ => false,
        }
    }

    /// Whether this is the `SessionStart` that follows a compaction (`source` is `compact`).
    pub fn follows_compaction(&self) -> bool {
        matches!(&self.event, EventInput::SessionStart(e) if e.source == SessionStartSource::Compact)
    }

    /// The tool call of a tool event: its name and arguments.
    pub fn tool(&self) -> Option<(&ToolName, &Map<String, Value>)> {
        match &self.event {
            EventInput::PreToolUse(e) => Some((&e.tool_name, &e.tool_input)),
            EventInput::PermissionRequest(e) => Some((&e.tool_name, &e.tool_input)),
            EventInput::PermissionDenied(e) => Some((&e.tool_name, &e.tool_input)),
            EventInput::PostToolUse(e) => Some((&e.tool_name, &e.tool_input)),
            EventInput::PostToolUseFailure(e) => Some((&e.tool_name, &e.tool_input)),
            _ => None,
        }
    }
}

/// The `hook_event_name` of a payload, checked to be a string in an object.
///
/// # Errors
///
/// When the payload is not an object or has no string `hook_event_name`.
pub fn event_name(payload: &Value) -> Result<&str, InputError> {
    let Value::Object(fields) = payload else {
        return Err(InputError::NotAnObject(json_type(payload)));
    };
    match fields.get("hook_event_name") {
        Some(Value::String(name)) => Ok(name),
        Some(other) => Err(InputError::EventNameNotAString(json_type(other))),
        None => Err(InputError::MissingEventName),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Why a payload could not be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum InputError {
    /// The payload is JSON but not an object.
    NotAnObject(&'static str),
    /// The payload has no `hook_event_name`.
    MissingEventName,
    /// `hook_event_name` is not a string.
    EventNameNotAString(&'static str),
    /// The payload belongs to another event than the one being answered.
    WrongEvent {
        /// The event being answered.
        expected: EventKind,
        /// The payload's `hook_event_name`.
        found: String,
    },
    /// A field the event requires is missing or has the wrong type.
    Invalid(EventKind, serde_json::Error),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::NotAnObject(found) => write!(f, "payload is {found}, not a JSON object"),
            InputError::MissingEventName => f.write_str("payload has no `hook_event_name`"),
            InputError::EventNameNotAString(found) => {
                write!(f, "`hook_event_name` is {found}, not a string")
            }
            InputError::WrongEvent { expected, found } => {
                write!(f, "payload is for `{found}`, but this hook answers `{expected}`")
            }
            InputError::Invalid(kind, err) => write!(f, "invalid `{kind}` payload: {err}"),
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InputError::Invalid(_, err) => Some(err),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn input_fields_are_the_fields_serde_reads() {
        let fields = |kind| input_fields(kind).collect::<Vec<_>>();
        let pre = fields(EventKind::PreToolUse);
        for name in ["hook_event_name", "session_id", "cwd", "tool_name", "tool_input"] {
            assert!(pre.contains(&name), "{name} in {pre:?}");
        }
        assert!(!pre.contains(&"prompt"));
        assert!(fields(EventKind::UserPromptSubmit).contains(&"prompt"));
        // A renamed field by its name in the payload.
        assert!(fields(EventKind::MessageDisplay).contains(&"final"));
        // An event with no fields of its own has the common ones.
        assert_eq!(fields(EventKind::SubagentStart).len(), 1 + field_names::<Common>().len());
    }

    #[test]
    fn only_a_session_start_from_compact_follows_a_compaction() {
        let input = |kind: EventKind, source: &str| {
            let payload = json!({
                "hook_event_name": kind.as_str(), "session_id": "s", "transcript_path": "",
                "cwd": "/", "source": source, "trigger": "auto", "compact_summary": ""
            });
            HookInput::from_value(kind, &payload).unwrap()
        };
        assert!(input(EventKind::SessionStart, "compact").follows_compaction());
        assert!(!input(EventKind::SessionStart, "startup").follows_compaction());
        assert!(!input(EventKind::PostCompact, "compact").follows_compaction());
    }

    fn parse(kind: EventKind, payload: &Value) -> Result<HookInput, String> {
        HookInput::from_value(kind, payload).map_err(|e| e.to_string())
    }

    fn base(event: &str) -> Value {
        json!({"hook_event_name": event, "session_id": "s", "transcript_path": "/t", "cwd": "/p"})
    }

    fn with(mut payload: Value, extra: Value) -> Value {
        let (Value::Object(fields), Value::Object(extra)) = (&mut payload, extra) else {
            unreachable!()
        };
        fields.extend(extra);
        payload
    }

    #[test]
    fn unknown_fields_are_ignored_and_open_enums_keep_new_values() {
        let payload = with(
            base("SessionStart"),
            json!({"source": "teleport", "brand_new_field": {"x": 1}, "permission_mode": "yolo"}),
        );
        let input = parse(EventKind::SessionStart, &payload).unwrap();
        let EventInput::SessionStart(start) = input.event else { panic!() };
        assert_eq!(start.source, SessionStartSource::Other("teleport".into()));
        assert_eq!(input.common.permission_mode, Some(PermissionMode::Other("yolo".into())));
    }

    #[test]
    fn errors_name_the_problem() {
        let cases = [
            (json!([1, 2]), "payload is an array, not a JSON object"),
            (json!("PreToolUse"), "payload is a string, not a JSON object"),
            (json!({"session_id": "s"}), "payload has no `hook_event_name`"),
            (json!({"hook_event_name": 7}), "`hook_event_name` is a number, not a string"),
            (base("Stop"), "payload is for `Stop`, but this hook answers `PreToolUse`"),
            (base("PreToolUse"), "invalid `PreToolUse` payload: missing field `tool_name`"),
            (
                with(base("PreToolUse"), json!({"tool_name": "Bash", "tool_input": "ls"})),
                "invalid `PreToolUse` payload: invalid type: string \"ls\", expected a map",
            ),
        ];
        for (payload, expected) in cases {
            assert_eq!(parse(EventKind::PreToolUse, &payload).unwrap_err(), expected);
        }
    }

    #[test]
    fn tool_events_expose_their_call() {
        let payload = with(
            base("PostToolUse"),
            json!({"tool_name": "mcp__db__query", "tool_input": {"sql": "select 1"},
                   "tool_use_id": "t", "tool_response": {"rows": []}}),
        );
        let input = parse(EventKind::PostToolUse, &payload).unwrap();
        let (tool, args) = input.tool().unwrap();
        assert_eq!(tool.mcp_parts(), Some(("db", "query")));
        assert_eq!(args["sql"], "select 1");
    }
}
