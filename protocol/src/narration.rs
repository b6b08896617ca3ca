//! The narrator's lines (issue #24): one short first-person line of what an
//! agent is doing, written by a model from the session's recent events.
//! A `narration` log line, and the same object pushed to every subscriber
//! as a `narration` frame ([`crate::Reply::Narration`]).

use serde::{Deserialize, Serialize};

/// One narration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Narration {
    /// When it was written (RFC 3339, UTC).
    pub at: String,
    /// The session's harness (`claude-code`, `codex`, …).
    pub harness: String,
    /// The session.
    pub session_id: String,
    /// The line.
    pub text: String,
    /// How many of the session's events it narrates.
    pub events: u64,
    /// The event that waits for a person, when an ask asked for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_event_id: Option<String>,
}
