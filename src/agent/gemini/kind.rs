//! Gemini CLI 0.61.0's hook events, mapped onto hookd's event kinds.

use crate::agent::claude::HookEventKind;

/// One event Gemini fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GeminiEvent {
    /// Gemini's `hook_event_name`.
    pub name: &'static str,
    /// The hookd kind it is judged and logged as; `Unknown` for the model
    /// events, which Claude Code has no equivalent of (observe-only, their
    /// name kept).
    pub kind: HookEventKind,
    /// Whether hookd registers it by default. The model events are not:
    /// each carries the whole conversation, and AfterModel fires once per
    /// streamed chunk.
    pub registered_by_default: bool,
}

const fn event_of(name: &'static str, kind: HookEventKind, registered: bool) -> GeminiEvent {
    GeminiEvent {
        name,
        kind,
        registered_by_default: registered,
    }
}

/// Gemini's timeout for a hook that gives none, in milliseconds (every
/// event).
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;

/// Every event Gemini 0.61.0 fires (its `HookEventName` enum), in that
/// enum's order.
pub const EVENTS: &[GeminiEvent] = &[
    event_of("BeforeTool", HookEventKind::PreToolUse, true),
    event_of("AfterTool", HookEventKind::PostToolUse, true),
    event_of("BeforeAgent", HookEventKind::UserPromptSubmit, true),
    event_of("Notification", HookEventKind::Notification, true),
    event_of("AfterAgent", HookEventKind::Stop, true),
    event_of("SessionStart", HookEventKind::SessionStart, true),
    event_of("SessionEnd", HookEventKind::SessionEnd, true),
    event_of("PreCompress", HookEventKind::PreCompact, true),
    event_of("BeforeModel", HookEventKind::Unknown, false),
    event_of("AfterModel", HookEventKind::Unknown, false),
    event_of("BeforeToolSelection", HookEventKind::Unknown, false),
];

/// The event named `name`, if Gemini has one.
pub fn event(name: &str) -> Option<&'static GeminiEvent> {
    EVENTS.iter().find(|e| e.name == name)
}

/// The hookd kind of a Gemini event name (`Unknown` for the model events
/// and for names Gemini does not have).
pub fn event_kind(name: &str) -> HookEventKind {
    event(name).map_or(HookEventKind::Unknown, |e| e.kind)
}

/// Gemini's name for a hookd kind, for the kinds some Gemini event maps
/// onto (`BeforeTool` for PreToolUse).
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
    fn each_kind_has_at_most_one_gemini_event() {
        for e in EVENTS.iter().filter(|e| e.kind != HookEventKind::Unknown) {
            assert_eq!(name_of(e.kind), Some(e.name));
            assert_eq!(event_kind(e.name), e.kind);
            assert!(e.registered_by_default, "{}", e.name);
        }
        assert_eq!(name_of(HookEventKind::PermissionRequest), None);
        assert_eq!(event_kind("PreToolUse"), HookEventKind::Unknown);
        let unregistered: Vec<_> = EVENTS
            .iter()
            .filter(|e| !e.registered_by_default)
            .map(|e| e.name)
            .collect();
        assert_eq!(
            unregistered,
            ["BeforeModel", "AfterModel", "BeforeToolSelection"]
        );
    }
}
