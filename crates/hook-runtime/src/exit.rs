//! [`ExitStatus`]: the only place an outcome becomes an exit code.

/// How a hook run ends.
///
/// Claude Code reads exit code 2 as "block" on the events that can block, and any other
/// non-zero code as a non-blocking error. hookpack says its decisions in JSON with exit 0 on
/// every event (Claude Code 2.1.330 reads a JSON block wherever exit 2 blocks); only the
/// worktree hooks, which do a job of their own, fail with [`ExitStatus::Failed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// Exit 0: the answer, if any, is on stdout. Every normal case, decisions included, and
    /// every failure that fails open.
    Proceed,
    /// Exit 1: a non-blocking error Claude Code reports as `<hook> hook error`; for a worktree
    /// hook, the worktree could not be made or removed.
    Failed,
    /// Exit 2: block, with the reason on stderr. Not used by the hooks today.
    Block,
}

impl ExitStatus {
    /// The process exit code.
    pub const fn code(self) -> u8 {
        match self {
            ExitStatus::Proceed => 0,
            ExitStatus::Failed => 1,
            ExitStatus::Block => 2,
        }
    }

    /// A short name for reports and snapshots.
    pub const fn name(self) -> &'static str {
        match self {
            ExitStatus::Proceed => "proceed",
            ExitStatus::Failed => "failed",
            ExitStatus::Block => "block",
        }
    }
}
