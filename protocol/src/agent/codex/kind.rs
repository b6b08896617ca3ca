//! Codex CLI 0.169.0's events table (see [`crate::agent::dialect`]): its
//! events mapped onto hookd's kinds, what its output can do for each
//! (the schemas embedded in its binary,
//! `tests/fixtures/agents/codex/hook-schemas.json`), and its timeouts.

use crate::agent::claude::HookEventKind;
use crate::agent::dialect::{honors, EventRow, EventTable};

/// One event Codex fires.
pub type CodexEvent = EventRow;

/// Codex's own default hook timeout, in milliseconds.
const DEFAULT_TIMEOUT_MS: u64 = 600_000;
/// Codex clamps SessionEnd and Interrupt hooks to this, in seconds.
const CLAMPED_TIMEOUT_S: u32 = 3;

const fn row(name: &'static str, kind: HookEventKind) -> EventRow {
    EventRow::observed(name, kind, DEFAULT_TIMEOUT_MS)
}

const fn clamped(name: &'static str, kind: HookEventKind) -> EventRow {
    EventRow::observed(name, kind, CLAMPED_TIMEOUT_S as u64 * 1000).clamped(CLAMPED_TIMEOUT_S)
}

/// Every event Codex 0.169.0 fires (the hook schemas embedded in its binary
/// list exactly these), in the order it documents them. Deny is honored
/// where the event's schema has a decision, context where it has
/// `additionalContext`; PreToolUse has no ask and no allow (see
/// [`super::output`]). Every event hookd maps is registered by default;
/// `Interrupt` maps onto none and nothing can decide it.
pub const EVENTS: EventTable = {
    use HookEventKind as K;
    &[
        row("SessionStart", K::SessionStart).context(),
        row("UserPromptSubmit", K::UserPromptSubmit)
            .honors(honors::DENY)
            .context(),
        row("PreToolUse", K::PreToolUse)
            .honors(honors::DENY)
            .context(),
        row("PermissionRequest", K::PermissionRequest).honors(honors::ALLOW_DENY),
        row("PostToolUse", K::PostToolUse)
            .honors(honors::DENY)
            .context(),
        row("PreCompact", K::PreCompact),
        row("PostCompact", K::PostCompact),
        row("Stop", K::Stop).honors(honors::DENY),
        row("SubagentStart", K::SubagentStart).context(),
        row("SubagentStop", K::SubagentStop).honors(honors::DENY),
        clamped("SessionEnd", K::SessionEnd),
        clamped("Interrupt", K::Unknown).unregistered(),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::dialect::{event_kind, name_of};

    #[test]
    fn codex_names_are_claude_names_but_interrupt() {
        for e in EVENTS {
            if e.name == "Interrupt" {
                assert_eq!(e.kind, HookEventKind::Unknown);
                assert!(!e.registered_by_default);
            } else {
                assert_eq!(e.kind.as_str(), e.name);
                assert_eq!(name_of(EVENTS, e.kind), Some(e.name));
                assert!(e.registered_by_default);
            }
        }
        assert_eq!(event_kind(EVENTS, "BeforeTool"), HookEventKind::Unknown);
        assert_eq!(name_of(EVENTS, HookEventKind::Unknown), None);
        assert_eq!(name_of(EVENTS, HookEventKind::Setup), None);
    }
}
