//! The 33 hook events of Claude Code 2.1.330 and what each one can do.

use std::fmt;

/// Declares [`HookEventKind`] from one table so the name list, the parser and
/// `ALL` can never disagree.
macro_rules! hook_events {
    ($($variant:ident),+ $(,)?) => {
        /// One Claude Code hook event (`hook_event_name`), or `Unknown` for a
        /// name this build does not know. An unknown name is never an error:
        /// the raw name is kept on the event and it is treated as observe-only.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum HookEventKind {
            $(#[doc = concat!("`", stringify!($variant), "`")] $variant,)+
            /// A name not in Claude Code 2.1.330's list.
            Unknown,
        }

        impl HookEventKind {
            /// Every known event, in the order of the reference table.
            pub const ALL: &'static [HookEventKind] = &[$(HookEventKind::$variant),+];

            /// Their names, in the same order: the one list of event names
            /// (the rule engine and the tests use it too).
            pub const NAMES: &'static [&'static str] = &[$(stringify!($variant)),+];

            /// Parses a `hook_event_name`; unknown names give `Unknown`.
            pub fn from_name(name: &str) -> HookEventKind {
                match name {
                    $(stringify!($variant) => HookEventKind::$variant,)+
                    _ => HookEventKind::Unknown,
                }
            }

            /// The event's name as Claude Code spells it (`"unknown"` for `Unknown`).
            pub fn as_str(self) -> &'static str {
                match self {
                    $(HookEventKind::$variant => stringify!($variant),)+
                    HookEventKind::Unknown => "unknown",
                }
            }
        }
    };
}

hook_events! {
    PreToolUse,
    PermissionRequest,
    PermissionDenied,
    PostToolUse,
    PostToolUseFailure,
    PostToolBatch,
    UserPromptSubmit,
    UserPromptExpansion,
    SessionStart,
    SessionEnd,
    Setup,
    Stop,
    SubagentStop,
    StopFailure,
    SubagentStart,
    Notification,
    PreCompact,
    PostCompact,
    PreModelSwitch,
    PostModelSwitch,
    TeammateIdle,
    TaskCreated,
    TaskCompleted,
    Elicitation,
    ElicitationResult,
    ConfigChange,
    InstructionsLoaded,
    WorktreeCreate,
    WorktreeRemove,
    CwdChanged,
    FileChanged,
    DirectoryAdded,
    MessageDisplay,
}

impl HookEventKind {
    /// A decision point is an event whose hook output can change what Claude
    /// Code does next (block, allow, rewrite). Only these are judged and may
    /// wait for a decision; every other event is observe-only and is answered
    /// at once with "no opinion".
    pub fn is_decision_point(self) -> bool {
        use HookEventKind::*;
        matches!(
            self,
            PreToolUse
                | PermissionRequest
                | PermissionDenied
                | PostToolUse
                | PostToolUseFailure
                | PostToolBatch
                | UserPromptSubmit
                | UserPromptExpansion
                | Stop
                | SubagentStop
                | PreCompact
                | PreModelSwitch
                | TeammateIdle
                | TaskCreated
                | TaskCompleted
                | Elicitation
                | ElicitationResult
                | ConfigChange
        )
    }

    /// The events Claude Code treats as *guarded* (the bundle's `I9` set):
    /// blocking them prevents an action. These are the events a fail-closed
    /// fallback blocks. Stop-like events are deliberately absent: "blocking"
    /// a Stop makes the agent keep working, which is never a safe default.
    pub fn blocks_when_fail_closed(self) -> bool {
        use HookEventKind::*;
        matches!(
            self,
            PreToolUse
                | PermissionRequest
                | PreModelSwitch
                | UserPromptSubmit
                | UserPromptExpansion
                | ConfigChange
                | Elicitation
                | ElicitationResult
                | PostToolBatch
                | TaskCreated
                | PreCompact
        )
    }

    /// Whether the event's input carries `tool_name` / `tool_input`.
    pub fn has_tool(self) -> bool {
        use HookEventKind::*;
        matches!(
            self,
            PreToolUse | PermissionRequest | PermissionDenied | PostToolUse | PostToolUseFailure
        )
    }

    /// Claude Code's own timeout for a command hook of this event when the
    /// settings give none, in milliseconds (reference §10).
    pub fn claude_default_timeout_ms(self) -> u64 {
        use HookEventKind::*;
        match self {
            SessionEnd => 1_500,
            UserPromptSubmit | PreModelSwitch | PostModelSwitch => 30_000,
            MessageDisplay => 10_000,
            _ => 600_000,
        }
    }
}

impl fmt::Display for HookEventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_33_events_and_names_round_trip() {
        assert_eq!(HookEventKind::ALL.len(), 33);
        for kind in HookEventKind::ALL {
            assert_eq!(HookEventKind::from_name(kind.as_str()), *kind);
        }
        assert_eq!(
            HookEventKind::from_name("pretooluse"),
            HookEventKind::Unknown
        );
        assert_eq!(
            HookEventKind::from_name("FutureEvent"),
            HookEventKind::Unknown
        );
    }

    #[test]
    fn fail_closed_events_are_decision_points() {
        for kind in HookEventKind::ALL {
            if kind.blocks_when_fail_closed() {
                assert!(kind.is_decision_point(), "{kind}");
            }
        }
        assert!(!HookEventKind::Unknown.is_decision_point());
    }
}
