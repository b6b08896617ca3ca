//! Events: one hook invocation, as hookd records and judges it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;
use uuid::Uuid;

use crate::agent::claude::{HookEventKind, HookInput};
use crate::agent::{Agent, ToolNames};
use crate::protocol::Harness;

/// A new time-ordered id (uuid v7). The random bits come from a per-thread
/// generator seeded once from the OS (through std's `RandomState`), not
/// from a `getrandom` system call per id as `Uuid::now_v7` would: two ids
/// are made per hook, on the hot path.
pub fn new_id() -> Uuid {
    use std::cell::Cell;
    use std::hash::{BuildHasher, Hasher};
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            std::collections::hash_map::RandomState::new().build_hasher().finish() | 1,
        );
    }
    // splitmix64: a fast generator with good statistical quality; ids need
    // uniqueness, not secrecy.
    let next = || {
        STATE.with(|state| {
            let mut z = state.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
            state.set(z);
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
    };
    let (a, b) = (next().to_le_bytes(), next().to_le_bytes());
    let mut random = [0u8; 10];
    random[..8].copy_from_slice(&a);
    random[8..].copy_from_slice(&b[..2]);
    let millis = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid()
}

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
    /// The hook input exactly as the agent sent it.
    pub raw: Value,
    /// The tool's names, the agent's own and the Claude Code one rules
    /// judge it as, for tool events of Codex and Gemini whose names differ.
    pub mapped_tool: Option<String>,
    /// The environment of the hook process its dialect relays.
    pub env: BTreeMap<String, String>,
    /// The agent-SDK run it came from, if any.
    pub run_id: Option<String>,
    /// Set when this hook is a copy of one judged elsewhere, naming where:
    /// `agent-sdk` (a command hook of run `run_id`, whose adapter reports
    /// the same hook) or `canUseTool` (the SDK's PermissionRequest hook,
    /// decided by the run's `canUseTool`). Copies are answered "no opinion"
    /// at once and never judged.
    pub copy_of: Option<&'static str>,
    /// Why the hook input could not be read as JSON, if it could not; `raw`
    /// then holds its text (see [`Event::unreadable`]).
    pub input_error: Option<String>,
}

impl Event {
    /// A new event received now.
    pub fn new(harness: Harness, raw: Value, env: BTreeMap<String, String>) -> Event {
        let agent = harness.agent();
        let input = match agent {
            Agent::ClaudeCode => HookInput::parse(&raw),
            agent => HookInput::parse_with(&raw, |name| agent.event_kind(name)),
        };
        let mapped_tool = match agent {
            Agent::ClaudeCode => None,
            agent => agent
                .tool_names(&raw)
                .filter(|names| names.agent != names.claude)
                .map(|ToolNames { claude, .. }| claude),
        };
        Event {
            id: new_id(),
            received_at: SystemTime::now(),
            harness,
            input,
            mapped_tool,
            raw,
            env,
            run_id: None,
            copy_of: None,
            input_error: None,
        }
    }

    /// An event whose input could not be read as JSON: `text` is what there
    /// was, `error` what was wrong. Its kind comes from a best-effort look
    /// for `hook_event_name` in the text, so that the fallback blocks where
    /// the hook fails closed.
    pub fn unreadable(
        harness: Harness,
        text: String,
        error: String,
        env: BTreeMap<String, String>,
    ) -> Event {
        let name = crate::protocol::json::find_event_name(text.as_bytes());
        let mut event = Event::new(harness, Value::String(text), env);
        if let Some(name) = name {
            event.input.kind = harness.agent().event_kind(&name);
            event.input.name = name;
        }
        event.input_error = Some(error);
        event
    }

    /// The event kind: the agent's event mapped onto hookd's (Gemini's
    /// `BeforeTool` is PreToolUse).
    pub fn kind(&self) -> HookEventKind {
        self.input.kind
    }

    /// The agent that fired it.
    pub fn agent(&self) -> Agent {
        self.harness.agent()
    }

    /// The name rules know the event by: its kind's, or the agent's own
    /// name for an event no kind maps (which only `event = "*"` matches).
    pub fn rule_event(&self) -> &str {
        match self.kind() {
            HookEventKind::Unknown => self.name(),
            kind => kind.as_str(),
        }
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
            run_id: self.run_id.as_deref(),
            copy_of: self.copy_of,
            session_id: self.input.base.session_id.as_deref(),
            cwd: self.input.base.cwd.as_deref(),
            project_dir: self.env.get("CLAUDE_PROJECT_DIR").map(Path::new),
            kind: self.name(),
            tool: self.tool_name(),
            mapped_kind: Some(self.rule_event()).filter(|k| *k != self.name()),
            mapped_tool: self.mapped_tool.as_deref(),
            input,
            input_error: self.input_error.as_deref(),
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
    /// `claude-code`, `agent-sdk`, `codex` or `gemini`: which agent fired
    /// it (an Agent SDK run's hooks are Claude Code's).
    pub harness: Harness,
    /// The agent-SDK run, for events of one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<&'a str>,
    /// Where the judged original of this copy went (see [`Event::copy_of`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_of: Option<&'a str>,
    /// The session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<&'a str>,
    /// The session's cwd.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<&'a str>,
    /// `CLAUDE_PROJECT_DIR`, when the hook had it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_dir: Option<&'a Path>,
    /// `hook_event_name` verbatim: the agent's own name.
    pub kind: &'a str,
    /// The tool, for tool events: the agent's own name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<&'a str>,
    /// The hookd kind the agent's event maps onto, which rules name
    /// (`PreToolUse` for Gemini's `BeforeTool`), when it differs from `kind`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapped_kind: Option<&'a str>,
    /// The Claude Code tool rules judge the agent's tool as (`Bash` for
    /// Gemini's `run_shell_command`), when it differs from `tool`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapped_tool: Option<&'a str>,
    /// The raw hook input.
    pub input: &'a Value,
    /// Why the input could not be read as JSON (`input` is then its text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_error: Option<&'a str>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_v7_unique_and_time_ordered() {
        let ids: Vec<Uuid> = (0..10_000).map(|_| new_id()).collect();
        assert!(ids.iter().all(|id| id.get_version_num() == 7));
        let unique: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(unique.len(), ids.len());
        let later = {
            std::thread::sleep(std::time::Duration::from_millis(2));
            new_id()
        };
        assert!(ids.iter().all(|id| *id < later));
    }
}
