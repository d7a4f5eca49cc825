//! [`ToolName`]: Claude Code's tools, open to every MCP tool.

open_enum! {
    /// The name of a tool (`tool_name`). Built-in tools have variants; MCP tools
    /// (`mcp__<server>__<tool>`) and tools added after this version are kept in `Other`.
    pub enum ToolName {
        /// Runs a shell command (`tool_input.command`).
        Bash = "Bash",
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

#[cfg(test)]
mod tests {
    use super::ToolName;

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
