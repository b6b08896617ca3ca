//! Events: one hook invocation, as hookd records and judges it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::claude::{HookEventKind, HookInput};
use crate::protocol::Harness;

/// One hook invocation. The raw input is kept verbatim: unknown events and
/// fields survive to the log and to subscribers untouched.
#[derive(Debug, Clone)]
pub struct Event {
    /// uuid v7: ids sort by time.
    pub id: Uuid,
    /// When the daemon received it.
    pub received_at: SystemTime,
    /// Where it came from.
    pub harness: Harness,
    /// The typed view of `raw`.
    pub input: HookInput,
    /// The hook input exactly as Claude Code sent it.
    pub raw: Value,
    /// The `CLAUDE*` environment of the hook process.
    pub env: BTreeMap<String, String>,
}

impl Event {
    /// A new event received now.
    pub fn new(harness: Harness, raw: Value, env: BTreeMap<String, String>) -> Event {
        Event {
            id: Uuid::now_v7(),
            received_at: SystemTime::now(),
            harness,
            input: HookInput::parse(&raw),
            raw,
            env,
        }
    }

    /// The event kind.
    pub fn kind(&self) -> HookEventKind {
        self.input.kind
    }

    /// `hook_event_name` verbatim, or `unknown` when there is none.
    pub fn name(&self) -> &str {
        if self.input.name.is_empty() {
            "unknown"
        } else {
            &self.input.name
        }
    }

    /// The tool name, for tool events.
    pub fn tool_name(&self) -> Option<&str> {
        self.input.tool.tool_name.as_deref()
    }

    /// The project root: `CLAUDE_PROJECT_DIR`, else the session's cwd.
    pub fn project_dir(&self) -> Option<PathBuf> {
        self.env
            .get("CLAUDE_PROJECT_DIR")
            .map(PathBuf::from)
            .or_else(|| self.input.base.cwd.as_deref().map(PathBuf::from))
    }

    /// The log / subscription record of this event.
    pub fn record(&self) -> EventRecord<'_> {
        self.record_with_input(&self.raw)
    }

    /// The record with `input` in place of the raw input (e.g. redacted).
    pub fn record_with_input<'a>(&'a self, input: &'a Value) -> EventRecord<'a> {
        EventRecord {
            kind_tag: "event",
            id: self.id,
            received_at: crate::time::rfc3339(self.received_at),
            harness: self.harness,
            session_id: self.input.base.session_id.as_deref(),
            cwd: self.input.base.cwd.as_deref(),
            project_dir: self.env.get("CLAUDE_PROJECT_DIR").map(Path::new),
            kind: self.name(),
            tool: self.tool_name(),
            input,
        }
    }
}

/// How an event appears in the log: `{"type":"event", ...}`.
#[derive(Debug, Serialize)]
pub struct EventRecord<'a> {
    #[serde(rename = "type")]
    kind_tag: &'static str,
    /// The event id.
    pub id: Uuid,
    /// RFC 3339, UTC.
    pub received_at: String,
    /// `claude-code` or `agent-sdk`.
    pub harness: Harness,
    /// The session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a str>,
    /// The session's cwd.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<&'a str>,
    /// `CLAUDE_PROJECT_DIR`, when the hook had it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_dir: Option<&'a Path>,
    /// `hook_event_name` verbatim.
    pub kind: &'a str,
    /// The tool, for tool events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    /// The raw hook input.
    pub input: &'a Value,
}
