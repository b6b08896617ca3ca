//! GitHub Copilot CLI 1.0.102's events table, Claude format (see
//! [`crate::agent::dialect`]): its events mapped onto hookd's kinds, what its
//! output can do for each, and which hookd registers.

use crate::agent::claude::HookEventKind;
use crate::agent::dialect::{honors, EventRow, EventTable};

/// One event Copilot fires.
pub type CopilotEvent = EventRow;

/// The timeout hookd gives a Copilot hook when none is set, in
/// milliseconds (Copilot's own `timeoutSec` default is 30 s).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

const fn row(name: &'static str, kind: HookEventKind) -> EventRow {
    EventRow::observed(name, kind, DEFAULT_TIMEOUT_MS)
}

/// Every event Copilot fires in Claude format. Deny on PreToolUse (never
/// ask), block on Stop; the rest observe-only. PermissionRequest is not
/// registered: its input comes in Copilot's native shape.
pub const EVENTS: EventTable = {
    use HookEventKind as K;
    &[
        row("SessionStart", K::SessionStart),
        row("UserPromptSubmit", K::UserPromptSubmit),
        row("PreToolUse", K::PreToolUse).honors(honors::DENY),
        row("PermissionRequest", K::PermissionRequest).unregistered(),
        row("PostToolUse", K::PostToolUse),
        row("Stop", K::Stop).honors(honors::DENY),
        row("SessionEnd", K::SessionEnd),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::dialect::{event_kind, name_of};

    #[test]
    fn each_kind_has_one_copilot_event_and_permission_requests_are_not_registered() {
        for e in EVENTS {
            assert_eq!(name_of(EVENTS, e.kind), Some(e.name));
            assert_eq!(event_kind(EVENTS, e.name), e.kind);
        }
        let unregistered: Vec<_> = EVENTS
            .iter()
            .filter(|e| !e.registered_by_default)
            .map(|e| e.name)
            .collect();
        assert_eq!(unregistered, ["PermissionRequest"]);
        assert_eq!(event_kind(EVENTS, "preToolUse"), HookEventKind::Unknown);
    }
}
