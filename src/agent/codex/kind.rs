//! Codex CLI 0.169.0's hook events, mapped onto hookd's event kinds.

use crate::agent::claude::HookEventKind;

/// One event Codex fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodexEvent {
    /// Codex's `hook_event_name`.
    pub name: &'static str,
    /// The hookd kind it is judged and logged as; `Unknown` for an event
    /// Claude Code has no equivalent of (observe-only, its name kept).
    pub kind: HookEventKind,
    /// Codex's timeout for a hook of this event when `hooks.json` gives
    /// none, in seconds; the most it allows where it clamps the timeout.
    pub default_timeout_s: u64,
}

const fn event_of(name: &'static str, kind: HookEventKind, default_timeout_s: u64) -> CodexEvent {
    CodexEvent {
        name,
        kind,
        default_timeout_s,
    }
}

/// Codex's own default hook timeout, in seconds.
const DEFAULT_TIMEOUT_S: u64 = 600;
/// Codex clamps SessionEnd and Interrupt hooks to this, in seconds.
const CLAMPED_TIMEOUT_S: u64 = 3;

/// Every event Codex 0.169.0 fires (the hook schemas embedded in its binary
/// list exactly these), in the order it documents them.
pub const EVENTS: &[CodexEvent] = &[
    event_of(
        "SessionStart",
        HookEventKind::SessionStart,
        DEFAULT_TIMEOUT_S,
    ),
    event_of(
        "UserPromptSubmit",
        HookEventKind::UserPromptSubmit,
        DEFAULT_TIMEOUT_S,
    ),
    event_of("PreToolUse", HookEventKind::PreToolUse, DEFAULT_TIMEOUT_S),
    event_of(
        "PermissionRequest",
        HookEventKind::PermissionRequest,
        DEFAULT_TIMEOUT_S,
    ),
    event_of("PostToolUse", HookEventKind::PostToolUse, DEFAULT_TIMEOUT_S),
    event_of("PreCompact", HookEventKind::PreCompact, DEFAULT_TIMEOUT_S),
    event_of("PostCompact", HookEventKind::PostCompact, DEFAULT_TIMEOUT_S),
    event_of("Stop", HookEventKind::Stop, DEFAULT_TIMEOUT_S),
    event_of(
        "SubagentStart",
        HookEventKind::SubagentStart,
        DEFAULT_TIMEOUT_S,
    ),
    event_of(
        "SubagentStop",
        HookEventKind::SubagentStop,
        DEFAULT_TIMEOUT_S,
    ),
    event_of("SessionEnd", HookEventKind::SessionEnd, CLAMPED_TIMEOUT_S),
    event_of("Interrupt", HookEventKind::Unknown, CLAMPED_TIMEOUT_S),
];

/// The event named `name`, if Codex has one.
pub fn event(name: &str) -> Option<&'static CodexEvent> {
    EVENTS.iter().find(|e| e.name == name)
}

/// The hookd kind of a Codex event name (`Unknown` for names Codex does not
/// have, and for `Interrupt`).
pub fn event_kind(name: &str) -> HookEventKind {
    event(name).map_or(HookEventKind::Unknown, |e| e.kind)
}

/// Codex's name for a hookd kind, for the kinds some Codex event maps onto.
pub fn name_of(kind: HookEventKind) -> Option<&'static str> {
    if kind == HookEventKind::Unknown {
        return None;
    }
    EVENTS.iter().find(|e| e.kind == kind).map(|e| e.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_names_are_claude_names_but_interrupt() {
        for e in EVENTS {
            if e.name == "Interrupt" {
                assert_eq!(e.kind, HookEventKind::Unknown);
            } else {
                assert_eq!(e.kind.as_str(), e.name);
                assert_eq!(name_of(e.kind), Some(e.name));
            }
        }
        assert_eq!(event_kind("BeforeTool"), HookEventKind::Unknown);
        assert_eq!(name_of(HookEventKind::Unknown), None);
        assert_eq!(name_of(HookEventKind::Setup), None);
    }
}
