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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// For a `hookd run` run's session: the run's cost so far in dollars,
    /// as its adapter last reported it, for `budget = { usd = X }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_cost_usd: Option<f64>,
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

    /// What a person deciding for the session should know, or `None`:
    /// `tainted by WebFetch https://… at 14:02:11 UTC (and 1 earlier); 37
    /// tool calls so far; limit rm-burst: call 6` — the newest taint, the
    /// session's tool calls before this one, and each limited rule's place
    /// in its window (this call included).
    pub fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(t) = self.taint.last() {
            let secs = (t.at_ms / 1000) % 86_400;
            let mut part = format!("tainted by {}", t.tool);
            if let Some(detail) = &t.detail {
                part.push(' ');
                part.push_str(detail);
            }
            part.push_str(&format!(
                " at {:02}:{:02}:{:02} UTC",
                secs / 3600,
                secs / 60 % 60,
                secs % 60
            ));
            if self.taint.len() > 1 {
                part.push_str(&format!(" (and {} earlier)", self.taint.len() - 1));
            }
            parts.push(part);
        }
        if self.calls > 0 {
            parts.push(format!(
                "{} tool call{} so far",
                self.calls,
                if self.calls == 1 { "" } else { "s" }
            ));
        }
        for (rule, earlier) in &self.counts {
            parts.push(format!("limit {rule}: call {}", earlier.saturating_add(1)));
        }
        if let Some(cost) = self.run_cost_usd {
            parts.push(format!("the run has cost ${cost:.4}"));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_names_the_newest_taint_the_calls_and_the_limits() {
        assert_eq!(SessionFacts::default().note(), None);
        let facts = SessionFacts {
            calls: 37,
            counts: BTreeMap::from([("rm-burst".to_string(), 5)]),
            taint: vec![
                Taint {
                    tool: "mcp__github__get_issue".into(),
                    detail: None,
                    at_ms: 0,
                },
                Taint {
                    tool: "WebFetch".into(),
                    detail: Some("https://example.com/x".into()),
                    // 1970-01-02 14:02:11 UTC
                    at_ms: (86_400 + 14 * 3600 + 2 * 60 + 11) * 1000,
                },
            ],
            now_ms: 1,
            run_cost_usd: None,
        };
        assert_eq!(
            facts.note().unwrap(),
            "tainted by WebFetch https://example.com/x at 14:02:11 UTC (and 1 earlier); \
             37 tool calls so far; limit rm-burst: call 6"
        );
        let one = SessionFacts {
            calls: 1,
            ..SessionFacts::default()
        };
        assert_eq!(one.note().unwrap(), "1 tool call so far");
    }
}
