//! Events: one hook invocation, as hookd records and judges it.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::SystemTime;

use serde_json::Value;
use uuid::Uuid;

use crate::protocol::log::EventView;

pub use crate::agent::claude::input_summary;
use crate::agent::claude::{HookEventKind, HookInput, InputFields};
use crate::agent::{Agent, Harness, ToolNames};

/// A new time-ordered id (uuid v7), from uuid's own generator: its shared
/// context keeps a counter within each millisecond, so ids made in a row
/// are strictly increasing, not only ordered by the millisecond. Its
/// random bits come from `rand`'s per-thread generator (uuid's `fast-rng`
/// feature), seeded once from the OS, not from a `getrandom` system call
/// per id: two ids are made per hook, on the hot path.
pub fn new_id() -> Uuid {
    Uuid::now_v7()
}

/// What an event's agent makes of it, resolved once by [`Event::new`] from
/// the agent's dialect: the daemon reads these, not the agent's tables
/// again, and a Codex patch is read once, not once per reader.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// The agent honors some verdict for this event: it is judged and may
    /// wait for a decision ([`Agent::is_decision_point`]).
    pub decision_point: bool,
    /// The Claude-shaped inputs the rules judge ([`Agent::rule_inputs`]),
    /// each `None` where it is the raw input itself (Claude Code's always
    /// is): see [`Event::rule_inputs`].
    rule_inputs: Vec<Option<Value>>,
}

impl Resolved {
    fn of(agent: Agent, kind: HookEventKind, raw: &Value) -> Resolved {
        let rule_inputs = agent
            .rule_inputs(raw)
            .into_iter()
            .map(|input| match input {
                Cow::Borrowed(input) if std::ptr::eq(input, raw) => None,
                input => Some(input.into_owned()),
            })
            .collect();
        Resolved {
            decision_point: agent.is_decision_point(kind),
            rule_inputs,
        }
    }
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
    /// What its agent makes of it.
    pub resolved: Resolved,
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
    /// The log's record of this event, with its raw input.
    pub fn view(&self) -> EventView<'_> {
        self.view_with_input(&self.raw)
    }

    /// The log's record of this event with `input` in place of its raw input (e.g.
    /// redacted).
    pub fn view_with_input<'a>(&'a self, input: &'a Value) -> EventView<'a> {
        EventView {
            id: self.id,
            received_at: crate::time::rfc3339(self.received_at),
            harness: self.harness,
            run_id: self.run_id.as_deref(),
            copy_of: self.copy_of,
            session_id: self.input.base.session_id.as_deref().map(Cow::Borrowed),
            cwd: self.input.base.cwd.as_deref().map(Cow::Borrowed),
            project_dir: self
                .env
                .get("CLAUDE_PROJECT_DIR")
                .map(|dir| Cow::Borrowed(dir.as_str())),
            kind: Cow::Borrowed(self.name()),
            tool: self.tool_name().map(Cow::Borrowed),
            mapped_kind: Some(self.rule_event()).filter(|k| *k != self.name()),
            mapped_tool: self.mapped_tool.as_deref().map(Cow::Borrowed),
            input,
            input_error: self.input_error.as_deref().map(Cow::Borrowed),
        }
    }

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
        let resolved = Resolved::of(agent, input.kind, &raw);
        Event {
            id: new_id(),
            resolved,
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
            event.resolved = Resolved::of(harness.agent(), event.input.kind, &event.raw);
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

    /// [`Event::name`] when it is one its agent has, else `unknown`: what
    /// the daemon's own stderr calls the event (any other name is the
    /// sender's text, and may be anything).
    pub fn known_name(&self) -> &str {
        match self.kind() {
            HookEventKind::Unknown => "unknown",
            _ => self.name(),
        }
    }

    /// The tool name, for tool events.
    pub fn tool_name(&self) -> Option<&str> {
        self.input.tool.tool_name.as_deref()
    }

    /// The fields of the input that the daemon reads beyond the typed
    /// [`Event::input`] (the tool's input above all, which is not copied
    /// there), borrowed from `raw` through the dialect's reader.
    pub fn fields(&self) -> InputFields<'_> {
        InputFields::of(&self.raw)
    }

    /// The tool's input, for tool events.
    pub fn tool_input(&self) -> Option<&Value> {
        self.fields().tool_input
    }

    /// The Claude-shaped inputs the rules judge for this event, as its
    /// dialect gave them when the event was made: one, or one per file a
    /// Codex patch touches, per URL a Gemini fetch reads.
    pub fn rule_inputs(&self) -> Vec<Cow<'_, Value>> {
        self.resolved
            .rule_inputs
            .iter()
            .map(|input| Cow::Borrowed(input.as_ref().unwrap_or(&self.raw)))
            .collect()
    }

    /// The project root: `CLAUDE_PROJECT_DIR`, else the session's cwd.
    pub fn project_dir(&self) -> Option<PathBuf> {
        self.env
            .get("CLAUDE_PROJECT_DIR")
            .map(PathBuf::from)
            .or_else(|| self.input.base.cwd.as_deref().map(PathBuf::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialect_is_resolved_when_the_event_is_made() {
        let raw = serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                                     "tool_input": {"command": "ls"}});
        let event = Event::new(Harness::default(), raw, BTreeMap::new());
        assert!(event.resolved.decision_point);
        let inputs = event.rule_inputs();
        assert!(
            matches!(inputs[..], [Cow::Borrowed(input)] if std::ptr::eq(input, &event.raw)),
            "Claude Code's rule input is the raw input, not a copy"
        );
        let raw = serde_json::json!({"hook_event_name": "Notification", "message": "hi"});
        let event = Event::new(Harness::default(), raw, BTreeMap::new());
        assert!(!event.resolved.decision_point);
        let event = Event::unreadable(
            Harness::default(),
            r#"{"hook_event_name":"PreToolUse","x":"#.into(),
            "cut short".into(),
            BTreeMap::new(),
        );
        assert!(
            event.resolved.decision_point,
            "resolved again for the name found"
        );
    }

    #[test]
    fn ids_made_in_a_row_are_v7_and_strictly_increasing() {
        let ids: Vec<Uuid> = (0..10_000).map(|_| new_id()).collect();
        assert!(ids.iter().all(|id| id.get_version_num() == 7));
        // Many share a millisecond: the order within one is the counter's.
        assert!(
            ids.windows(2).all(|pair| pair[0] < pair[1]),
            "ids made in a row are strictly increasing"
        );
        let later = {
            std::thread::sleep(std::time::Duration::from_millis(2));
            new_id()
        };
        assert!(ids.iter().all(|id| *id < later));
    }
}

/// The log's event lines read back as they were written (the decision and
/// run lines' round trips are in `hookd_protocol::log`).
#[cfg(test)]
mod log_line_tests {
    use std::collections::BTreeMap;

    use serde_json::{json, Value};

    use super::*;
    use crate::protocol::log::LogRecord;

    fn read_back(written: &[u8]) -> LogRecord {
        let parsed = LogRecord::parse(written).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(written));
        });
        let derived: LogRecord = serde_json::from_slice(written).unwrap();
        assert_eq!(parsed, derived, "parse and the derived Deserialize differ");
        assert_eq!(
            serde_json::to_value(&parsed).unwrap(),
            serde_json::from_slice::<Value>(written).unwrap(),
            "the reader lost or changed a field: {}",
            String::from_utf8_lossy(written)
        );
        parsed
    }

    fn every_field_event() -> Event {
        let raw = json!({
            "session_id": "s1", "cwd": "/p", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": "ls"}
        });
        let env = BTreeMap::from([("CLAUDE_PROJECT_DIR".to_string(), "/p".to_string())]);
        let mut event = Event::new(Harness::AgentSdk, raw, env);
        event.run_id = Some("run-1".into());
        event.copy_of = Some("canUseTool");
        event.input_error = Some("bad".into());
        event
    }

    #[test]
    fn the_reader_reads_every_event_line_the_writer_writes() {
        let full = every_field_event();
        let bare = Event::new(Harness::ClaudeCode, json!({}), BTreeMap::new());
        for event in [&full, &bare] {
            let line = serde_json::to_vec(&event.view()).unwrap();
            let LogRecord::Event(logged) = read_back(&line) else {
                panic!("not an event: {}", String::from_utf8_lossy(&line));
            };
            assert_eq!(logged.id, event.id);
            assert_eq!(logged.harness, event.harness.as_str());
        }
        let redacted = json!({"hook_event_name": "PreToolUse", "x": "[REDACTED]"});
        let line = serde_json::to_vec(&full.view_with_input(&redacted)).unwrap();
        let LogRecord::Event(logged) = read_back(&line) else {
            unreachable!()
        };
        assert_eq!(logged.input, redacted);
        assert_eq!(logged.project_dir(), Some("/p"));
        assert_eq!(logged.copy_of.as_deref(), Some("canUseTool"));
    }
}
