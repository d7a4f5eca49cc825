//! The enumerations and small records that event inputs and outputs share.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

open_enum! {
    /// The session's permission mode (`permission_mode`). "Manual" mode arrives as `default`.
    pub enum PermissionMode {
        /// `default`
        Default = "default",
        /// `plan`
        Plan = "plan",
        /// `acceptEdits`
        AcceptEdits = "acceptEdits",
        /// `auto`
        Auto = "auto",
        /// `dontAsk`
        DontAsk = "dontAsk",
        /// `bypassPermissions`
        BypassPermissions = "bypassPermissions",
    }
}

open_enum! {
    /// The model's effort level (`effort.level`).
    pub enum EffortLevel {
        /// `low`
        Low = "low",
        /// `medium`
        Medium = "medium",
        /// `high`
        High = "high",
        /// `xhigh` (also what ultracode reports)
        XHigh = "xhigh",
        /// `max`
        Max = "max",
    }
}

open_enum! {
    /// Why a session started (`SessionStart.source`).
    pub enum SessionStartSource {
        /// A new session.
        Startup = "startup",
        /// `--resume`, `--continue` or `/resume`.
        Resume = "resume",
        /// `/clear`.
        Clear = "clear",
        /// After a compaction: the moment to inject context again.
        Compact = "compact",
        /// A forked session (earlier versions reported `resume`).
        Fork = "fork",
    }
}

open_enum! {
    /// What ran `Setup` (`Setup.trigger`).
    pub enum SetupTrigger {
        /// `--init` / `--init-only`.
        Init = "init",
        /// `--maintenance`.
        Maintenance = "maintenance",
    }
}

open_enum! {
    /// Where a prompt came from (`UserPromptSubmit.source`, Agent SDK types only).
    pub enum PromptSource {
        /// Typed by the user.
        User = "user",
        /// Sent through the SDK.
        Sdk = "sdk",
        /// Sent by Claude Code itself.
        System = "system",
        /// A loop wake-up.
        LoopWakeup = "loop_wakeup",
        /// A scheduled wake-up.
        ScheduleWakeup = "schedule_wakeup",
        /// A polled event.
        PollEvent = "poll_event",
    }
}

open_enum! {
    /// What a `/command` expands from (`UserPromptExpansion.expansion_type`).
    pub enum ExpansionType {
        /// A slash command.
        SlashCommand = "slash_command",
        /// An MCP prompt.
        McpPrompt = "mcp_prompt",
    }
}

open_enum! {
    /// The kind of a notification (`Notification.notification_type`).
    pub enum NotificationType {
        /// Claude needs permission for a tool.
        PermissionPrompt = "permission_prompt",
        /// The prompt has been idle.
        IdlePrompt = "idle_prompt",
        /// Authentication succeeded.
        AuthSuccess = "auth_success",
        /// An MCP elicitation dialog.
        ElicitationDialog = "elicitation_dialog",
        /// An MCP elicitation asking to open a URL.
        ElicitationUrlDialog = "elicitation_url_dialog",
        /// An elicitation completed.
        ElicitationComplete = "elicitation_complete",
        /// An elicitation was answered.
        ElicitationResponse = "elicitation_response",
        /// An agent needs input.
        AgentNeedsInput = "agent_needs_input",
        /// An agent completed.
        AgentCompleted = "agent_completed",
    }
}

open_enum! {
    /// The API error that ended a turn (`StopFailure.error`).
    pub enum StopFailureError {
        /// `rate_limit`
        RateLimit = "rate_limit",
        /// `overloaded`
        Overloaded = "overloaded",
        /// `authentication_failed`
        AuthenticationFailed = "authentication_failed",
        /// `oauth_org_not_allowed`
        OauthOrgNotAllowed = "oauth_org_not_allowed",
        /// `billing_error`
        BillingError = "billing_error",
        /// `invalid_request`
        InvalidRequest = "invalid_request",
        /// `model_not_found`
        ModelNotFound = "model_not_found",
        /// `server_error`
        ServerError = "server_error",
        /// `max_output_tokens`
        MaxOutputTokens = "max_output_tokens",
        /// `unknown`
        Unknown = "unknown",
        /// `account_on_hold` (Agent SDK types)
        AccountOnHold = "account_on_hold",
        /// `verification_required` (Agent SDK types)
        VerificationRequired = "verification_required",
        /// `cloud_credential_error` (Agent SDK types)
        CloudCredentialError = "cloud_credential_error",
    }
}

open_enum! {
    /// Which memory file was loaded (`InstructionsLoaded.memory_type`).
    pub enum MemoryType {
        /// `~/.claude/CLAUDE.md` and user rules.
        User = "User",
        /// The project's CLAUDE.md and rules.
        Project = "Project",
        /// `CLAUDE.local.md`.
        Local = "Local",
        /// Managed policy.
        Managed = "Managed",
    }
}

open_enum! {
    /// Why instructions were loaded (`InstructionsLoaded.load_reason`).
    pub enum LoadReason {
        /// At session start.
        SessionStart = "session_start",
        /// A nested CLAUDE.md reached while reading files.
        NestedTraversal = "nested_traversal",
        /// A `paths:` rule matched a file Claude read.
        PathGlobMatch = "path_glob_match",
        /// An `@path` import.
        Include = "include",
        /// Re-read after compaction.
        Compact = "compact",
    }
}

open_enum! {
    /// Which settings changed (`ConfigChange.source`).
    pub enum ConfigSource {
        /// `~/.claude/settings.json`.
        UserSettings = "user_settings",
        /// `.claude/settings.json`.
        ProjectSettings = "project_settings",
        /// `.claude/settings.local.json`.
        LocalSettings = "local_settings",
        /// Managed policy (cannot be blocked).
        PolicySettings = "policy_settings",
        /// A skill file.
        Skills = "skills",
    }
}

open_enum! {
    /// How a directory was added (`DirectoryAdded.source`).
    pub enum DirectorySource {
        /// `/add-dir`.
        SlashCommand = "slash_command",
        /// The SDK's `register_repo_root`.
        RegisterRepoRoot = "register_repo_root",
    }
}

open_enum! {
    /// What happened to a watched file (`FileChanged.event`).
    pub enum FileEvent {
        /// Modified.
        Change = "change",
        /// Created.
        Add = "add",
        /// Deleted.
        Unlink = "unlink",
    }
}

open_enum! {
    /// What started a compaction (`PreCompact.trigger`, `PostCompact.trigger`).
    pub enum CompactTrigger {
        /// `/compact`.
        Manual = "manual",
        /// The context window filled up.
        Auto = "auto",
    }
}

open_enum! {
    /// Why a session ended (`SessionEnd.reason`).
    pub enum SessionEndReason {
        /// `/clear`.
        Clear = "clear",
        /// Switched to another session with `/resume`.
        Resume = "resume",
        /// Logged out.
        Logout = "logout",
        /// The user left the prompt.
        PromptInputExit = "prompt_input_exit",
        /// Anything else.
        OtherReason = "other",
    }
}

open_enum! {
    /// How an MCP elicitation asks (`mode`).
    pub enum ElicitationMode {
        /// A form described by `requested_schema`.
        Form = "form",
        /// A URL to open.
        Url = "url",
    }
}

open_enum! {
    /// How the user answered an elicitation (`ElicitationResult.action`).
    pub enum ElicitationAction {
        /// Accepted, with `content`.
        Accept = "accept",
        /// Declined.
        Decline = "decline",
        /// Cancelled.
        Cancel = "cancel",
    }
}

open_enum! {
    /// Who asked for a model switch (`PreModelSwitch.source`, `PostModelSwitch.source`).
    pub enum ModelSwitchSource {
        /// `/model`.
        Command = "command",
        /// The model picker.
        Picker = "picker",
        /// The SDK.
        Sdk = "sdk",
        /// Automatic (`PostModelSwitch` only).
        Auto = "auto",
        /// On resume (`PostModelSwitch` only).
        Resume = "resume",
    }
}

open_enum! {
    /// Where a model switch's price estimate came from (`pricing`).
    pub enum PricingSource {
        /// Configured prices.
        Configured = "configured",
        /// The price catalogue.
        Catalog = "catalog",
        /// Built-in defaults.
        Default = "default",
    }
}

/// The model's effort (`effort`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Effort {
    /// The level, e.g. `high`.
    pub level: EffortLevel,
}

/// The MCP server behind a tool (`mcp_server`, Agent SDK types).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct McpServer {
    /// The server's name.
    pub name: String,
    /// Where the server is configured.
    #[serde(default)]
    pub source: Option<String>,
}

/// A background task still running when the agent stops (`background_tasks[]`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BackgroundTask {
    /// The task's id.
    pub id: String,
    /// The task's type, e.g. `bash` or `agent`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The task's status.
    pub status: String,
    /// What the task does.
    #[serde(default)]
    pub description: Option<String>,
    /// The command, for shell tasks.
    #[serde(default)]
    pub command: Option<String>,
    /// The agent type, for agent tasks.
    #[serde(default)]
    pub agent_type: Option<String>,
    /// The MCP server, for MCP tasks.
    #[serde(default)]
    pub server: Option<String>,
    /// The tool, for MCP tasks.
    #[serde(default)]
    pub tool: Option<String>,
    /// A display name.
    #[serde(default)]
    pub name: Option<String>,
}

/// A scheduled prompt of the session (`session_crons[]`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SessionCron {
    /// The cron's id.
    pub id: String,
    /// Its schedule.
    pub schedule: String,
    /// Whether it repeats.
    pub recurring: bool,
    /// The prompt it sends.
    pub prompt: String,
}

/// One call of a parallel tool batch (`PostToolBatch.tool_calls[]`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ToolCall {
    /// The tool's name.
    pub tool_name: crate::ToolName,
    /// The tool's arguments.
    pub tool_input: Map<String, Value>,
    /// The call's id.
    pub tool_use_id: String,
    /// The `tool_result` content the model sees: a string or an array of content blocks.
    #[serde(default)]
    pub tool_response: Option<Value>,
}

/// Where a permission update is stored (`destination`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub enum PermissionDestination {
    /// In memory, for this session.
    Session,
    /// `.claude/settings.local.json`.
    LocalSettings,
    /// `.claude/settings.json`.
    ProjectSettings,
    /// `~/.claude/settings.json`.
    UserSettings,
    /// The command line (Agent SDK types).
    CliArg,
}

/// The behaviour a permission rule gives a tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum PermissionBehavior {
    /// Run without asking.
    Allow,
    /// Refuse.
    Deny,
    /// Ask the user.
    Ask,
}

/// One permission rule: a tool and, optionally, a pattern of its input.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "camelCase")]
pub struct PermissionRule {
    /// The tool, e.g. `Bash`.
    pub tool_name: String,
    /// The pattern, e.g. `npm test:*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_content: Option<String>,
}

/// A change to the permission settings: offered in `PermissionRequest.permission_suggestions`,
/// applied through `updatedPermissions`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(tag = "type", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum PermissionUpdate {
    /// Add rules of one behaviour.
    AddRules {
        /// The rules.
        rules: Vec<PermissionRule>,
        /// Their behaviour.
        behavior: PermissionBehavior,
        /// Where to store them.
        destination: PermissionDestination,
    },
    /// Replace every rule of one behaviour.
    ReplaceRules {
        /// The rules.
        rules: Vec<PermissionRule>,
        /// Their behaviour.
        behavior: PermissionBehavior,
        /// Where to store them.
        destination: PermissionDestination,
    },
    /// Remove rules.
    RemoveRules {
        /// The rules.
        rules: Vec<PermissionRule>,
        /// Their behaviour.
        behavior: PermissionBehavior,
        /// Where to remove them from.
        destination: PermissionDestination,
    },
    /// Switch the permission mode.
    SetMode {
        /// The new mode.
        mode: PermissionMode,
        /// Where to store it.
        destination: PermissionDestination,
    },
    /// Add working directories.
    AddDirectories {
        /// The directories.
        directories: Vec<String>,
        /// Where to store them.
        destination: PermissionDestination,
    },
    /// Remove working directories.
    RemoveDirectories {
        /// The directories.
        directories: Vec<String>,
        /// Where to remove them from.
        destination: PermissionDestination,
    },
}
