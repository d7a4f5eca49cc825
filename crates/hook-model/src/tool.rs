//! [`ToolName`]: Claude Code's tools, open to every MCP tool.

open_enum! {
    /// The name of a tool (`tool_name`). Built-in tools have variants; MCP tools
    /// (`mcp__<server>__<tool>`) and tools added after this version are kept in `Other`.
    pub enum ToolName {
        /// Runs a shell command (`tool_input.command`).
        Bash = "Bash",
        /// Watches a shell command's output (`tool_input.command`); Claude Code runs the hooks
        /// matched to `Bash` for it.
        Monitor = "Monitor",
        /// Runs a PowerShell command (`tool_input.command`).
        PowerShell = "PowerShell",
        /// Reads a file (`tool_input.file_path`).
        Read = "Read",
        /// Writes a whole file (`tool_input.file_path`, `tool_input.content`).
        Write = "Write",
        /// Replaces text in a file (`tool_input.file_path`, `old_string`, `new_string`).
        Edit = "Edit",
        /// Several edits of one file (`tool_input.edits[].new_string`).
        MultiEdit = "MultiEdit",
        /// Edits a notebook cell (`tool_input.notebook_path`, `new_source`).
        NotebookEdit = "NotebookEdit",
        /// Finds files by glob (`tool_input.pattern`, `path`).
        Glob = "Glob",
        /// Searches file contents (`tool_input.pattern`, `path`).
        Grep = "Grep",
        /// Fetches a URL (`tool_input.url`).
        WebFetch = "WebFetch",
        /// Searches the web (`tool_input.query`).
        WebSearch = "WebSearch",
        /// Starts a subagent (`tool_input.prompt`).
        Agent = "Agent",
        /// The former name of `Agent`, still accepted.
        Task = "Task",
        /// Updates the todo list.
        TodoWrite = "TodoWrite",
        /// Leaves plan mode (`tool_input.plan`).
        ExitPlanMode = "ExitPlanMode",
    }
}

impl ToolName {
    /// The server and tool of an MCP tool name `mcp__<server>__<tool>`
    /// (plugin servers are named `plugin_<plugin>_<server>`).
    pub fn mcp_parts(&self) -> Option<(&str, &str)> {
        let Self::Other(name) = self else { return None };
        name.strip_prefix("mcp__")?.split_once("__")
    }

    /// Whether the tool edits files, so that `tool_input` names a path that is written.
    pub fn writes_files(&self) -> bool {
        matches!(self, Self::Write | Self::Edit | Self::MultiEdit | Self::NotebookEdit)
    }
}

/// Tools Claude Code 2.1.330 has beyond [`ToolName`]'s variants (the hooks read them as
/// `Other`): names a rule may match that are no typo.
pub const OTHER_TOOLS: &[&str] = &[
    "AskUserQuestion",
    "Artifact",
    "BashOutput",
    "ClaudeDesign",
    "CronCreate",
    "CronDelete",
    "CronList",
    "EnterPlanMode",
    "EnterWorktree",
    "ExitWorktree",
    "LSP",
    "ListAgents",
    "ListMcpResourcesTool",
    "Projects",
    "ProposeSkills",
    "PushNotification",
    "REPL",
    "ReadMcpResourceDirTool",
    "ReadMcpResourceTool",
    "RefreshMcpTools",
    "RemoteTrigger",
    "ReportFindings",
    "ScheduleWakeup",
    "SendFeedback",
    "SendUserMessage",
    "SetGoal",
    "Skill",
    "SlashCommand",
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "TaskUpdate",
    "Workflow",
];

/// Every tool name Claude Code knows: [`ToolName`]'s, [`OTHER_TOOLS`] and the legacy aliases
/// ([`TOOL_ALIASES`]).
pub fn known_tool_names() -> impl Iterator<Item = &'static str> {
    ToolName::KNOWN
        .iter()
        .chain(OTHER_TOOLS)
        .copied()
        .chain(TOOL_ALIASES.iter().map(|(alias, _)| *alias))
}

/// Whether `tool` runs a shell command (`tool_input.command`).
pub fn is_shell_tool(tool: &str) -> bool {
    matches!(tool, "Bash" | "PowerShell" | "Monitor")
}

/// The argument of `tool` that names a file or folder, which `paths` conditions match:
/// `file_path`, `notebook_path` or (Glob, Grep) `path`; `None` for tools of [`ToolName`] that
/// name none, and for tools it does not know.
pub fn path_argument(tool: &str) -> Option<&'static str> {
    match tool {
        "Read" | "Write" | "Edit" | "MultiEdit" => Some("file_path"),
        "NotebookEdit" => Some("notebook_path"),
        "Glob" | "Grep" => Some("path"),
        _ => None,
    }
}

/// The legacy tool names Claude Code resolves in an exact matcher, and what they stand for.
pub const TOOL_ALIASES: &[(&str, &str)] = &[
    ("Task", "Agent"),
    ("KillShell", "TaskStop"),
    ("KillBash", "TaskStop"),
    ("ListPeers", "ListAgents"),
    ("Brief", "SendUserMessage"),
    ("ListMcpResources", "ListMcpResourcesTool"),
    ("ReadMcpResource", "ReadMcpResourceTool"),
    ("ReadMcpResourceDir", "ReadMcpResourceDirTool"),
    ("ProposeGoal", "SetGoal"),
    ("Eval", "REPL"),
];

/// Whether the exact matcher name `name` covers a call of `tool` whose `tool_input` is `input`
/// (`None` when unknown), as Claude Code 2.1.330 resolves it: through its legacy aliases
/// ([`TOOL_ALIASES`]) and its tool families (a `Monitor` call with a `command` is matched by
/// `Bash`; unknown input counts as having one).
pub fn matcher_covers(name: &str, tool: &str, input: Option<&serde_json::Value>) -> bool {
    let name = TOOL_ALIASES.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, to)| to);
    name == tool
        || (name == "Bash"
            && tool == "Monitor"
            && input.is_none_or(|input| input.get("command").is_some()))
}

#[cfg(test)]
mod tests {
    use super::{ToolName, matcher_covers};

    #[test]
    fn matchers_cover_aliases_and_families() {
        let command = serde_json::json!({"command": "ls"});
        let stream = serde_json::json!({"ws": "wss://example"});
        assert!(matcher_covers("Bash", "Bash", Some(&command)));
        assert!(matcher_covers("Bash", "Monitor", Some(&command)));
        assert!(matcher_covers("Bash", "Monitor", None));
        assert!(!matcher_covers("Bash", "Monitor", Some(&stream)));
        assert!(matcher_covers("Task", "Agent", None));
        assert!(matcher_covers("KillBash", "TaskStop", None));
        assert!(!matcher_covers("Agent", "Task", None));
        assert!(!matcher_covers("Write", "Edit", None));
    }

    #[test]
    fn known_and_unknown_names() {
        let cases: &[(&str, Option<(&str, &str)>)] = &[
            ("Bash", None),
            ("mcp__github__create_issue", Some(("github", "create_issue"))),
            ("mcp__plugin_acme_db__query", Some(("plugin_acme_db", "query"))),
            ("mcp__memory", None),
            ("SomeFutureTool", None),
        ];
        for &(name, parts) in cases {
            let tool = ToolName::from(name);
            assert_eq!(tool.as_str(), name);
            assert_eq!(tool.mcp_parts(), parts, "{name}");
            let json = serde_json::to_string(&tool).unwrap();
            assert_eq!(serde_json::from_str::<ToolName>(&json).unwrap(), tool);
        }
        assert_eq!(ToolName::from("Bash"), ToolName::Bash);
        assert_eq!(ToolName::from(String::from("Edit")), ToolName::Edit);
        assert!(matches!(ToolName::from("bash"), ToolName::Other(_)), "case-sensitive");
    }
}
