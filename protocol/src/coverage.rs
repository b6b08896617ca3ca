//! The coverage alarm's records: a tool call that ran without its pre-tool
//! hook having been judged (PROTOCOL.md §7.4, `unjudged_tool_call`), the
//! alarm pushed to subscribers (`coverage_alarm`), and what `status` says
//! per agent (`status.coverage`). See [`crate::agent::coverage`] for what a
//! dialect gives the alarm.

use serde::{Deserialize, Serialize};

/// An `unjudged_tool_call` log line: one tool call that ran (its after-tool
/// event arrived) while no pre-tool event of the same call reached the
/// daemon. One line per call; hash-chained like every line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "unjudged_tool_call")]
pub struct UnjudgedToolCall {
    /// When the daemon concluded it (RFC 3339, UTC): its after-tool event's
    /// arrival plus the pairing grace.
    pub at: String,
    /// The harness (`claude-code`, `agent-sdk`, `codex`, `gemini`, …).
    pub harness: String,
    /// The session.
    pub session_id: String,
    /// The session's cwd, when the event had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The tool, as the agent names it.
    pub tool: String,
    /// The call's id, where the agent gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    /// The after-tool event's id (its `event` line is in the log).
    pub event_id: String,
    /// Tool calls of this session that ran unjudged so far, this one
    /// included.
    pub session_unjudged: u64,
}

/// `coverage_alarm`: pushed to every subscriber, and to the `[notify]`
/// targets, when tool calls of a session ran unjudged. At most one per
/// session per [`ALARM_EVERY_S`] seconds, and one when the session ends
/// with calls not yet told.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CoverageAlarm {
    /// RFC 3339, UTC.
    pub at: String,
    /// The harness (`codex`, …).
    pub harness: String,
    /// The agent's name for a person (`Codex CLI`).
    pub agent_name: String,
    /// The session.
    pub session_id: String,
    /// The project directory's name, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Tool calls of the session that ran unjudged so far.
    pub unjudged: u64,
    /// The last of them's tool.
    pub tool: String,
    /// One line for a person: `session 1fce3faa (webshop, Codex CLI): 3
    /// tool calls ran unjudged`.
    pub message: String,
}

/// The least time between two alarms of one session, in seconds.
pub const ALARM_EVERY_S: u64 = 600;

/// One agent in `status.coverage`: since the daemon started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AgentCoverage {
    /// The harness (`claude-code`, `agent-sdk`, `codex`, `gemini`, …).
    pub agent: String,
    /// Sessions seen (a session forgotten while idle and seen again counts
    /// again).
    pub sessions: u64,
    /// Tool calls judged before they ran (pre-tool events).
    pub judged: u64,
    /// Tool calls that ran unjudged.
    pub unjudged: u64,
    /// The last session with a tool call that ran unjudged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_unjudged_session: Option<String>,
    /// Its project directory's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_unjudged_project: Option<String>,
    /// When (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_unjudged_at: Option<String>,
}

impl AgentCoverage {
    /// `hookd status`'s line: `codex: 2 sessions, 12 tool calls judged, 3
    /// ran unjudged (last in session 1fce3faa, webshop, at …)`.
    pub fn line(&self) -> String {
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let mut line = format!(
            "{}: {}, {} judged, {} ran unjudged",
            self.agent,
            plural(self.sessions, "session", "sessions"),
            plural(self.judged, "tool call", "tool calls"),
            self.unjudged
        );
        if let Some(session) = &self.last_unjudged_session {
            let short: String = session.chars().take(8).collect();
            line.push_str(&format!(" (last in session {short}"));
            if let Some(project) = &self.last_unjudged_project {
                line.push_str(&format!(", {project}"));
            }
            if let Some(at) = &self.last_unjudged_at {
                line.push_str(&format!(", at {at}"));
            }
            line.push(')');
        }
        line
    }
}

/// The alarm's line for a person.
pub fn alarm_message(
    session_id: &str,
    project: Option<&str>,
    agent: &str,
    unjudged: u64,
) -> String {
    let short: String = session_id.chars().take(8).collect();
    let place = match project {
        Some(project) => format!("{project}, {agent}"),
        None => agent.to_string(),
    };
    let calls = if unjudged == 1 {
        "1 tool call ran unjudged".to_string()
    } else {
        format!("{unjudged} tool calls ran unjudged")
    };
    format!("session {short} ({place}): {calls}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alarm_says_session_project_agent_and_count() {
        assert_eq!(
            alarm_message("1fce3faa-0000", Some("webshop"), "Codex CLI", 3),
            "session 1fce3faa (webshop, Codex CLI): 3 tool calls ran unjudged"
        );
        assert_eq!(
            alarm_message("s", None, "Gemini CLI", 1),
            "session s (Gemini CLI): 1 tool call ran unjudged"
        );
    }

    #[test]
    fn the_record_reads_back_with_its_type() {
        let record = UnjudgedToolCall {
            at: "2026-11-26T22:00:00.000000Z".into(),
            harness: "codex".into(),
            session_id: "s".into(),
            cwd: None,
            tool: "Bash".into(),
            tool_use_id: Some("call_1".into()),
            event_id: "e".into(),
            session_unjudged: 1,
        };
        let line = serde_json::to_string(&record).unwrap();
        assert!(
            line.starts_with(r#"{"type":"unjudged_tool_call","#),
            "{line}"
        );
        assert_eq!(
            serde_json::from_str::<UnjudgedToolCall>(&line).unwrap(),
            record
        );
    }
}
