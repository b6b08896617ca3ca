//! Session facts (issue #25): what the daemon knew about a session when it
//! judged an event, carried in the decision line (`facts`) so `hookd replay`
//! re-judges with the facts as they were. The rules that read them live in
//! `hookd_core::rules::facts`.
//!
//! A struct of named, optional parts: further facts (signals, a judge's
//! verdict) are new named fields with `#[serde(default)]`, so older lines
//! still read.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the daemon knows about the session an event belongs to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionFacts {
    /// Tool calls the session made before this one (PreToolUse events), for
    /// `budget = { calls = N }`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub calls: u64,
    /// Per limited rule (its qualified id, as in `rule_ids`): matching calls
    /// earlier in the rule's window and scope.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub counts: BTreeMap<String, u32>,
    /// The tools that ran in this session (or its parent, for a subagent)
    /// which may taint it, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taint: Vec<Taint>,
    /// The daemon's clock when it judged, milliseconds since the Unix epoch;
    /// `within` compares taint times with it. 0: unknown (every taint counts).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub now_ms: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One tool run that may taint the session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taint {
    /// `tool_name` as Claude Code names it (`WebFetch`, `mcp__github__get_issue`).
    pub tool: String,
    /// The URL of a WebFetch, the path of a Read, …: what `after` patterns
    /// with a specifier compare, and what the approver shows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When it ran, milliseconds since the Unix epoch.
    pub at_ms: u64,
}

impl SessionFacts {
    /// Whether there is nothing to record.
    pub fn is_empty(&self) -> bool {
        *self == SessionFacts::default()
    }
}
