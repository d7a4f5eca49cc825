//! [`EventKind`]: the hook events, named exactly as Claude Code names them.

use std::fmt;

macro_rules! define_event_kind {
    ($( $name:ident, $kebab:literal, $input:ident, $output:ident; )+) => {
        /// A Claude Code hook event.
        ///
        /// The 31 events of the hooks reference (Claude Code 2.1.240) plus `PreModelSwitch` and
        /// `PostModelSwitch`, which the Agent SDK types (2.1.330) already declare.
        /// Nothing outside this crate matches events by string: use [`EventKind::from_name`].
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum EventKind {
            $(
                #[doc = concat!("`", stringify!($name), "`, answered by `hookpack-", $kebab, "`.")]
                $name,
            )+
        }

        impl EventKind {
            /// Every event, in the order of the hooks reference.
            pub const ALL: &'static [EventKind] = &[$(EventKind::$name),+];

            /// The name Claude Code uses in `hook_event_name` and in settings files.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( EventKind::$name => stringify!($name), )+
                }
            }

            /// The event's name in kebab case, as used in binary names and `examples/`.
            pub const fn kebab(self) -> &'static str {
                match self {
                    $( EventKind::$name => $kebab, )+
                }
            }

            /// The name of the binary that answers this event, e.g. `hookpack-pre-tool-use`.
            pub const fn binary_name(self) -> &'static str {
                match self {
                    $( EventKind::$name => concat!("hookpack-", $kebab), )+
                }
            }

            /// The event Claude Code calls `name`, spelled exactly (case-sensitive).
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $( stringify!($name) => Some(EventKind::$name), )+
                    _ => None,
                }
            }

            /// The event whose kebab-case name is `kebab`.
            pub fn from_kebab(kebab: &str) -> Option<Self> {
                match kebab {
                    $( $kebab => Some(EventKind::$name), )+
                    _ => None,
                }
            }
        }
    };
}

for_each_event!(define_event_kind);

impl EventKind {
    /// Whether the event's `hookSpecificOutput` takes `additionalContext`, text for the model.
    pub const fn accepts_additional_context(self) -> bool {
        use EventKind::{
            PostModelSwitch, PostToolBatch, PostToolUse, PostToolUseFailure, PreToolUse,
            SessionStart, Setup, Stop, SubagentStart, SubagentStop, UserPromptExpansion,
            UserPromptSubmit,
        };
        matches!(
            self,
            SessionStart
                | Setup
                | UserPromptSubmit
                | UserPromptExpansion
                | PreToolUse
                | PostToolUse
                | PostToolUseFailure
                | PostToolBatch
                | SubagentStart
                | SubagentStop
                | Stop
                | PostModelSwitch
        )
    }

    /// Whether the event honours a top-level `"decision": "block"` with a `reason`.
    pub const fn accepts_block_decision(self) -> bool {
        use EventKind::{
            ConfigChange, PostToolBatch, PostToolUse, PreCompact, Stop, SubagentStop,
            TaskCompleted, TaskCreated, TeammateIdle, UserPromptExpansion, UserPromptSubmit,
        };
        matches!(
            self,
            UserPromptSubmit
                | UserPromptExpansion
                | PostToolUse
                | PostToolBatch
                | Stop
                | SubagentStop
                | TaskCreated
                | TaskCompleted
                | TeammateIdle
                | ConfigChange
                | PreCompact
        )
    }

    /// Whether Claude Code 2.1.330 honours `"continue": false` (with its `stopReason`) on this
    /// event: it stops after the hooks run. `SessionStart`, `Setup`, `SubagentStart` and the
    /// model switches have the field but ignore it.
    pub const fn honours_continue(self) -> bool {
        use EventKind::{
            PostToolBatch, PostToolUse, PreToolUse, Stop, SubagentStop, TaskCompleted,
            TeammateIdle, UserPromptExpansion, UserPromptSubmit,
        };
        matches!(
            self,
            UserPromptSubmit
                | UserPromptExpansion
                | PreToolUse
                | PostToolUse
                | PostToolBatch
                | Stop
                | SubagentStop
                | TeammateIdle
                | TaskCompleted
        )
    }

    /// Whether a rule's context reaches the model on this event: as `additionalContext`
    /// ([`Self::accepts_additional_context`]), or, on `PreCompact`, as plain stdout, which
    /// Claude Code appends to the compaction instructions.
    pub const fn takes_context(self) -> bool {
        self.accepts_additional_context() || matches!(self, EventKind::PreCompact)
    }

    /// Whether the event's `hookSpecificOutput` takes `watchPaths`, the files whose changes
    /// run `FileChanged` (`SessionStart`, `CwdChanged`, `FileChanged`).
    pub const fn sets_watch_paths(self) -> bool {
        matches!(self, EventKind::SessionStart | EventKind::CwdChanged | EventKind::FileChanged)
    }

    /// Whether the event's `hookSpecificOutput` takes a `sessionTitle` (`SessionStart` on
    /// startup, resume and fork; `UserPromptSubmit`).
    pub const fn sets_session_title(self) -> bool {
        matches!(self, EventKind::SessionStart | EventKind::UserPromptSubmit)
    }

    /// Whether Claude Code shows the output's `systemMessage` to the user for this event.
    /// The events that discard it (or, `DirectoryAdded`, give it to the model) are those of
    /// Claude Code 2.1.330.
    pub const fn shows_system_message(self) -> bool {
        use EventKind::{
            ConfigChange, DirectoryAdded, Elicitation, ElicitationResult, InstructionsLoaded,
            MessageDisplay, Notification, PermissionDenied, PermissionRequest, PostCompact,
            PreCompact, SessionEnd, StopFailure, TaskCompleted, TaskCreated, WorktreeCreate,
            WorktreeRemove,
        };
        !matches!(
            self,
            PermissionRequest
                | PermissionDenied
                | TaskCreated
                | TaskCompleted
                | DirectoryAdded
                | Notification
                | StopFailure
                | InstructionsLoaded
                | MessageDisplay
                | ConfigChange
                | WorktreeCreate
                | WorktreeRemove
                | SessionEnd
                | PreCompact
                | PostCompact
                | Elicitation
                | ElicitationResult
        )
    }

    /// Whether Claude Code shows the output's `systemMessage` in every mode, print mode (`-p`)
    /// included, as observed with Claude Code 2.1.330 (`SessionStart`'s, for one, is not shown
    /// in print mode): where a notice told once per session must be told.
    pub const fn shows_system_message_in_every_mode(self) -> bool {
        use EventKind::{PostToolUse, PreToolUse, Stop, UserPromptSubmit};
        matches!(self, UserPromptSubmit | PreToolUse | PostToolUse | Stop)
    }

    /// Whether the event's hook does a job of its own, rules or not: a wired `WorktreeCreate`
    /// hook replaces Claude Code's worktree creation (it must print the new worktree's path),
    /// and `WorktreeRemove` then runs for the worktrees it made.
    pub const fn acts_without_rules(self) -> bool {
        matches!(self, EventKind::WorktreeCreate | EventKind::WorktreeRemove)
    }

    /// The payload field whose value a settings entry's `matcher` names for this event, and
    /// whether an exact list of names may hold `-` and `,` (Claude Code 2.1.330: yes on the 21
    /// "matcher" events, not on the others, where such a matcher is a regex). `None` where
    /// the matcher is ignored, or matched against something no payload field holds as it is
    /// (the model switches' model family, `FileChanged`'s file name).
    pub const fn matcher_field(self) -> Option<(&'static str, bool)> {
        use EventKind::{
            ConfigChange, DirectoryAdded, Elicitation, ElicitationResult, InstructionsLoaded,
            Notification, PostCompact, PreCompact, SessionEnd, SessionStart, Setup, StopFailure,
            SubagentStart, SubagentStop, UserPromptExpansion,
        };
        match self {
            _ if self.is_tool_event() => Some(("tool_name", true)),
            UserPromptExpansion => Some(("command_name", true)),
            SessionStart | ConfigChange | DirectoryAdded => Some(("source", true)),
            Setup | PreCompact | PostCompact => Some(("trigger", true)),
            Notification => Some(("notification_type", true)),
            SessionEnd => Some(("reason", true)),
            SubagentStart | SubagentStop => Some(("agent_type", true)),
            Elicitation | ElicitationResult => Some(("mcp_server_name", true)),
            InstructionsLoaded => Some(("load_reason", true)),
            StopFailure => Some(("error", false)),
            _ => None,
        }
    }

    /// Whether the event's payload carries `tool_name` and `tool_input`.
    pub const fn is_tool_event(self) -> bool {
        use EventKind::{
            PermissionDenied, PermissionRequest, PostToolUse, PostToolUseFailure, PreToolUse,
        };
        matches!(
            self,
            PreToolUse | PermissionRequest | PermissionDenied | PostToolUse | PostToolUseFailure
        )
    }

    /// Whether Claude Code documents the event only in the Agent SDK types, not in the hooks
    /// reference: its shape is less certain than the others'.
    pub const fn is_sdk_only(self) -> bool {
        matches!(self, EventKind::PreModelSwitch | EventKind::PostModelSwitch)
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for EventKind {
    type Err = UnknownEvent;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::from_name(name).ok_or_else(|| UnknownEvent(name.to_owned()))
    }
}

impl serde::Serialize for EventKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A name that is not one of Claude Code's hook events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownEvent(pub String);

impl fmt::Display for UnknownEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown hook event `{}`", self.0)
    }
}

impl std::error::Error for UnknownEvent {}

#[cfg(test)]
mod tests {
    use super::EventKind;

    #[test]
    fn names_round_trip() {
        for &kind in EventKind::ALL {
            assert_eq!(EventKind::from_name(kind.as_str()), Some(kind));
            assert_eq!(EventKind::from_kebab(kind.kebab()), Some(kind));
            assert_eq!(kind.binary_name(), format!("hookpack-{}", kind.kebab()));
        }
    }

    #[test]
    fn kebab_is_derived_from_the_name() {
        for &kind in EventKind::ALL {
            let mut kebab = String::new();
            for (i, c) in kind.as_str().char_indices() {
                if c.is_ascii_uppercase() && i > 0 {
                    kebab.push('-');
                }
                kebab.push(c.to_ascii_lowercase());
            }
            assert_eq!(kind.kebab(), kebab);
        }
    }

    #[test]
    fn thirty_one_documented_events_plus_two_from_the_sdk() {
        assert_eq!(EventKind::ALL.len(), 33);
        assert_eq!(EventKind::ALL.iter().filter(|k| k.is_sdk_only()).count(), 2);
    }

    #[test]
    fn names_are_case_sensitive() {
        assert_eq!(EventKind::from_name("pretooluse"), None);
        assert_eq!(EventKind::from_name("PreToolUse "), None);
        assert!("Nope".parse::<EventKind>().is_err());
    }
}
