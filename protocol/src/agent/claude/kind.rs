//! The 33 hook events of Claude Code 2.1.330 and what each one can do.

use std::fmt;

use crate::agent::dialect::{self, honors, EventRow};
use crate::decision::Verdict::{self, *};

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
            pub const fn as_str(self) -> &'static str {
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
    /// Code does next (block, allow, rewrite): one for which its events
    /// table, [`EVENTS`], honors some verdict. Only these are judged and may
    /// wait for a decision; every other event is observe-only and is answered
    /// at once with "no opinion".
    pub fn is_decision_point(self) -> bool {
        dialect::row_of(EVENTS, self).is_some_and(|e| e.verdicts.iter().any(|v| *v != NoOpinion))
    }

    /// The events Claude Code treats as *guarded* (the bundle's `I9` set):
    /// blocking them prevents an action, and with `"onFailure":"block"` a
    /// hook that fails blocks them. [`FailClosed::All`] blocks these. Stop-like
    /// events are deliberately absent: "blocking" a Stop makes the agent keep
    /// working, which is never a safe default.
    pub fn is_guarded(self) -> bool {
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

    /// Whether the event asks to run a tool: PreToolUse, and
    /// PermissionRequest (which is also how the Agent SDK's `canUseTool`
    /// reaches hookd). [`FailClosed::Tools`] blocks these.
    pub fn is_tool_gate(self) -> bool {
        matches!(
            self,
            HookEventKind::PreToolUse | HookEventKind::PermissionRequest
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
    /// settings give none, in milliseconds (reference §10), from [`EVENTS`].
    pub fn claude_default_timeout_ms(self) -> u64 {
        dialect::row_of(EVENTS, self).map_or(DEFAULT_TIMEOUT_MS, |e| e.default_timeout_ms)
    }
}

/// Claude Code's timeout for a command hook, in milliseconds, where the
/// reference names no other for the event.
const DEFAULT_TIMEOUT_MS: u64 = 600_000;
/// Claude Code's timeout for UserPromptSubmit and the model-switch hooks.
const PROMPT_TIMEOUT_MS: u64 = 30_000;

/// PreToolUse honors every verdict.
const TOOL_CALL: &[Verdict] = &[Allow, Deny, Ask, Defer, NoOpinion];
/// PreModelSwitch honors all but `defer`.
const MODEL_SWITCH: &[Verdict] = &[Allow, Deny, Ask, NoOpinion];
/// PermissionDenied honors only `allow` (= retry).
const RETRY: &[Verdict] = &[Allow, NoOpinion];

const fn row(kind: HookEventKind, default_timeout_ms: u64) -> EventRow {
    EventRow::observed(kind.as_str(), kind, default_timeout_ms)
}

/// Claude Code's events table (see [`crate::agent::dialect`]): what its
/// output can do for each event (reference §6–§8, golden-tested under
/// `tests/fixtures/golden/`), its default timeouts (reference §10), and
/// what `hookd install` registers: every event but `WorktreeCreate`, whose
/// hook *replaces* worktree creation (it must print the new worktree's
/// path; a forwarder that answers "no opinion" would make `claude
/// --worktree` fail). Context is left out on Stop and SubagentStop on
/// purpose: the reference does not show them in the schema's
/// `hookSpecificOutput` union, and output that fails the schema is thrown
/// away whole.
pub const EVENTS: &[EventRow] = {
    use HookEventKind as K;
    const D: u64 = DEFAULT_TIMEOUT_MS;
    &[
        row(K::PreToolUse, D).honors(TOOL_CALL).context(),
        row(K::PermissionRequest, D).honors(honors::ALLOW_DENY),
        row(K::PermissionDenied, D).honors(RETRY),
        row(K::PostToolUse, D).honors(honors::DENY).context(),
        row(K::PostToolUseFailure, D).honors(honors::DENY).context(),
        row(K::PostToolBatch, D).honors(honors::DENY).context(),
        row(K::UserPromptSubmit, PROMPT_TIMEOUT_MS)
            .honors(honors::DENY)
            .context(),
        row(K::UserPromptExpansion, D)
            .honors(honors::DENY)
            .context(),
        row(K::SessionStart, D).context(),
        row(K::SessionEnd, 1_500),
        row(K::Setup, D).context(),
        row(K::Stop, D).honors(honors::DENY),
        row(K::SubagentStop, D).honors(honors::DENY),
        row(K::StopFailure, D),
        row(K::SubagentStart, D).context(),
        row(K::Notification, D).context(),
        row(K::PreCompact, D).honors(honors::DENY),
        row(K::PostCompact, D),
        row(K::PreModelSwitch, PROMPT_TIMEOUT_MS).honors(MODEL_SWITCH),
        row(K::PostModelSwitch, PROMPT_TIMEOUT_MS).context(),
        row(K::TeammateIdle, D).honors(honors::DENY),
        row(K::TaskCreated, D).honors(honors::DENY),
        row(K::TaskCompleted, D).honors(honors::DENY),
        row(K::Elicitation, D).honors(honors::ALLOW_DENY),
        row(K::ElicitationResult, D).honors(honors::DENY),
        row(K::ConfigChange, D).honors(honors::DENY),
        row(K::InstructionsLoaded, D),
        row(K::WorktreeCreate, D).unregistered(),
        row(K::WorktreeRemove, D),
        row(K::CwdChanged, D),
        row(K::FileChanged, D),
        row(K::DirectoryAdded, D),
        row(K::MessageDisplay, 10_000),
    ]
};

impl fmt::Display for HookEventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which events a fallback blocks when nobody can decide (the daemon is
/// down, the deadline passed): `--fail-closed[=tools|all]` on the forwarder,
/// `hookd install` and `hookd serve`.
///
/// The default scope is `tools`: with the daemon down, tool calls are
/// refused but prompts still go through, so a user can still talk to Claude
/// (and be told why nothing runs). `all` also blocks prompts and the other
/// guarded events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum FailClosed {
    /// Fail open: every fallback is "no opinion".
    #[default]
    Off,
    /// Block tool calls: PreToolUse and PermissionRequest
    /// ([`HookEventKind::is_tool_gate`]).
    Tools,
    /// Block every guarded event ([`HookEventKind::is_guarded`]):
    /// tool calls, and prompts (UserPromptSubmit), compaction, config
    /// changes, model switches, elicitations, task creation.
    All,
}

impl FailClosed {
    /// The scopes a user may name, in the spelling of `--fail-closed=SCOPE`.
    pub const SCOPES: &'static [&'static str] = &["tools", "all"];

    /// Whether a fallback for an event of `kind` blocks it.
    pub fn blocks(self, kind: HookEventKind) -> bool {
        match self {
            FailClosed::Off => false,
            FailClosed::Tools => kind.is_tool_gate(),
            FailClosed::All => kind.is_guarded(),
        }
    }

    /// Parses a scope name (`tools`, `all`); `None` for anything else.
    pub fn from_scope(scope: &str) -> Option<FailClosed> {
        match scope {
            "tools" => Some(FailClosed::Tools),
            "all" => Some(FailClosed::All),
            _ => None,
        }
    }

    /// The scope's name: `off`, `tools` or `all`.
    pub fn as_str(self) -> &'static str {
        match self {
            FailClosed::Off => "off",
            FailClosed::Tools => "tools",
            FailClosed::All => "all",
        }
    }

    /// Whether any event fails closed.
    pub fn is_on(self) -> bool {
        self != FailClosed::Off
    }
}

impl serde::Serialize for FailClosed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl fmt::Display for FailClosed {
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
    fn the_decision_points_are_the_events_claude_code_honors_a_verdict_for() {
        let points: Vec<&str> = HookEventKind::ALL
            .iter()
            .filter(|k| k.is_decision_point())
            .map(|k| k.as_str())
            .collect();
        assert_eq!(
            points,
            [
                "PreToolUse",
                "PermissionRequest",
                "PermissionDenied",
                "PostToolUse",
                "PostToolUseFailure",
                "PostToolBatch",
                "UserPromptSubmit",
                "UserPromptExpansion",
                "Stop",
                "SubagentStop",
                "PreCompact",
                "PreModelSwitch",
                "TeammateIdle",
                "TaskCreated",
                "TaskCompleted",
                "Elicitation",
                "ElicitationResult",
                "ConfigChange",
            ]
        );
    }

    #[test]
    fn fail_closed_events_are_decision_points() {
        for kind in HookEventKind::ALL {
            if FailClosed::All.blocks(*kind) {
                assert!(kind.is_decision_point(), "{kind}");
            }
            // Each scope blocks a subset of the next one.
            assert!(!FailClosed::Off.blocks(*kind));
            if FailClosed::Tools.blocks(*kind) {
                assert!(FailClosed::All.blocks(*kind), "{kind}");
            }
        }
        assert!(!HookEventKind::Unknown.is_decision_point());
        assert!(!FailClosed::All.blocks(HookEventKind::Unknown));
    }

    #[test]
    fn the_tools_scope_blocks_tool_calls_and_lets_prompts_through() {
        let tools: Vec<_> = HookEventKind::ALL
            .iter()
            .filter(|k| FailClosed::Tools.blocks(**k))
            .collect();
        assert_eq!(
            tools,
            [
                &HookEventKind::PreToolUse,
                &HookEventKind::PermissionRequest
            ]
        );
        assert!(!FailClosed::Tools.blocks(HookEventKind::UserPromptSubmit));
        assert!(FailClosed::All.blocks(HookEventKind::UserPromptSubmit));
        assert!(!FailClosed::All.blocks(HookEventKind::Stop));
        for scope in FailClosed::SCOPES {
            assert_eq!(FailClosed::from_scope(scope).unwrap().as_str(), *scope);
        }
        assert_eq!(FailClosed::from_scope("off"), None);
        assert!(FailClosed::Off < FailClosed::Tools && FailClosed::Tools < FailClosed::All);
    }
}
