//! Gemini CLI 0.61.0's events table (see [`crate::agent::dialect`]): its
//! events mapped onto hookd's kinds, what its output can do for each, and
//! which hookd registers.

use crate::agent::claude::HookEventKind;
use crate::agent::dialect::{honors, EventRow, EventTable};

/// One event Gemini fires.
pub type GeminiEvent = EventRow;

/// Gemini's timeout for a hook that gives none, in milliseconds (every
/// event).
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;

const fn row(name: &'static str, kind: HookEventKind) -> EventRow {
    EventRow::observed(name, kind, DEFAULT_TIMEOUT_MS)
}

/// Every event Gemini 0.61.0 fires (its `HookEventName` enum), in that
/// enum's order. Deny (never ask: see [`super::output`]) on the tool, agent
/// and after-agent events; context where Gemini shows it to the model. The
/// model events map onto no kind and are not registered by default: each
/// carries the whole conversation, and AfterModel fires once per streamed
/// chunk.
pub const EVENTS: EventTable = {
    use HookEventKind as K;
    &[
        row("BeforeTool", K::PreToolUse).honors(honors::DENY),
        row("AfterTool", K::PostToolUse)
            .honors(honors::DENY)
            .context(),
        row("BeforeAgent", K::UserPromptSubmit)
            .honors(honors::DENY)
            .context(),
        row("Notification", K::Notification),
        row("AfterAgent", K::Stop).honors(honors::DENY),
        row("SessionStart", K::SessionStart).context(),
        row("SessionEnd", K::SessionEnd),
        row("PreCompress", K::PreCompact),
        row("BeforeModel", K::Unknown).unregistered(),
        row("AfterModel", K::Unknown).unregistered(),
        row("BeforeToolSelection", K::Unknown).unregistered(),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::dialect::{event_kind, name_of};

    #[test]
    fn each_kind_has_at_most_one_gemini_event() {
        for e in EVENTS.iter().filter(|e| e.kind != HookEventKind::Unknown) {
            assert_eq!(name_of(EVENTS, e.kind), Some(e.name));
            assert_eq!(event_kind(EVENTS, e.name), e.kind);
            assert!(e.registered_by_default, "{}", e.name);
        }
        assert_eq!(name_of(EVENTS, HookEventKind::PermissionRequest), None);
        assert_eq!(event_kind(EVENTS, "PreToolUse"), HookEventKind::Unknown);
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
