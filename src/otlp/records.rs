//! The event log's lines as OTLP: every `event` and `decision` line is a
//! log record, and each decision point a span from its hook's arrival to
//! its decision. Pure; the exporter's thread runs it, never a hook.
//!
//! A decision line holds the decision only; the span and the decision's
//! log record also carry the event's ids and names (session, tool, prompt),
//! so the event's are kept here, by event id, until its decision comes:
//! for microseconds, or for as long as a client takes to decide, bounded
//! by [`Mapper::new`]'s `capacity`.
//!
//! The mapping (attribute names) is in ARCHITECTURE.md, "OpenTelemetry
//! export". A line's `type` is read by [`LogKind`], the protocol's; the
//! line itself as a JSON tree, not as [`crate::protocol::log::LogRecord`]:
//! the whole line becomes the record's body, fields this build does not
//! know included.

use std::collections::{HashMap, VecDeque};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value as Json;
use uuid::Uuid;

use super::wire::{
    KeyValue, LogRecord, Span, SpanEvent, Value, SEVERITY_INFO, SEVERITY_WARN, SPAN_KIND_SERVER,
};
use crate::agent::claude::HookEventKind;
use crate::agent::Harness;
use crate::protocol::log::LogKind;

/// The trace of the hook whose event id is `event_id`: the id's 16 bytes.
/// Every record of one hook (its event, its decision, its span) is in it.
pub fn trace_id(event_id: Uuid) -> [u8; 16] {
    *event_id.as_bytes()
}

/// The hook's span: the event id's last 8 bytes (random in a uuid v7).
pub fn span_id(event_id: Uuid) -> [u8; 8] {
    let mut id = [0; 8];
    id.copy_from_slice(&event_id.as_bytes()[8..]);
    id
}

/// The longest log line sent whole as a record's body (see
/// [`Mapper::map`]).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// An event waiting for its decision.
#[derive(Debug)]
struct Opened {
    start_unix_nano: u64,
    span_name: String,
    decision_point: bool,
    attributes: Vec<KeyValue>,
    /// The narrator's lines written while it waited.
    events: Vec<SpanEvent>,
    /// Its line's `seq` in the log (a sealed line's).
    seq: Option<u64>,
}

/// Turns log lines into log records and spans.
#[derive(Debug)]
pub struct Mapper {
    opened: HashMap<Uuid, Opened>,
    /// The ids of `opened` in arrival order (uuid v7 orders only by the
    /// millisecond), and of events decided since, skipped when met.
    arrivals: VecDeque<Uuid>,
    capacity: usize,
}

/// What one line became.
#[derive(Debug, Default, PartialEq)]
pub struct Mapped {
    /// Its log record (none for the lines of agent-SDK runs).
    pub log: Option<LogRecord>,
    /// The span a decision closed.
    pub span: Option<Span>,
    /// An event forgotten before its decision came (more than `capacity`
    /// waiting): its decision will have no span.
    pub forgot: bool,
}

impl Mapper {
    /// A mapper that remembers at most `capacity` undecided events.
    pub fn new(capacity: usize) -> Mapper {
        Mapper {
            opened: HashMap::new(),
            arrivals: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// Undecided events remembered now.
    pub fn open(&self) -> usize {
        self.opened.len()
    }

    /// The smallest log `seq` of an event remembered undecided: where a
    /// reader of the log starts again to pair those events with their
    /// decisions (the exporter's cursor file keeps it).
    pub fn oldest_open_seq(&self) -> Option<u64> {
        self.opened.values().filter_map(|o| o.seq).min()
    }

    /// Maps one log line (without its newline), read at `now`.
    ///
    /// A line longer than [`MAX_BODY_BYTES`] (a large input or tool
    /// response) keeps its attributes, but its body is its first
    /// [`MAX_BODY_BYTES`] as text, marked `hookd.body_truncated`: collectors
    /// and backends refuse records and requests past a few MiB, which
    /// would lose the whole batch. The event log keeps the full line.
    pub fn map(&mut self, line: &[u8], now: SystemTime) -> serde_json::Result<Mapped> {
        let json: Json = serde_json::from_slice(line)?;
        let observed = unix_nano(now);
        // The line's place in a hash-chained log: what `hookd log verify`
        // names, for a record to be checked against the file.
        let seq = json["seq"].as_i64();
        // A line without a readable `type` maps to nothing, as one of a
        // type this build does not know.
        let kind = LogKind::of(line).unwrap_or(LogKind::Unknown);
        let mut mapped = match kind {
            LogKind::Event => self.event(json, observed, seq),
            LogKind::Decision => self.decision(json, observed),
            LogKind::RunStart => run(json, "hookd.run_start", observed),
            LogKind::RunDone => run(json, "hookd.run_done", observed),
            LogKind::UnjudgedToolCall => unjudged(json, observed),
            // An SDK message is the run's transcript, not a decision: it
            // stays in the event log.
            LogKind::Narration => self.narration(json, observed),
            LogKind::SdkMessage | LogKind::ChainStart | LogKind::LogRepaired | LogKind::Unknown => {
                Mapped::default()
            }
        };
        if let (Some(log), Some(seq)) = (mapped.log.as_mut(), seq) {
            log.attributes
                .push(KeyValue::new("hookd.log.seq", Value::Int(seq)));
        }
        if let Some(log) = mapped.log.as_mut().filter(|_| line.len() > MAX_BODY_BYTES) {
            let text = String::from_utf8_lossy(&line[..MAX_BODY_BYTES]);
            // A cut inside a character leaves a replacement character.
            log.body = Value::String(text.trim_end_matches('\u{fffd}').to_string());
            log.attributes
                .push(KeyValue::new("hookd.body_truncated", Value::Bool(true)));
        }
        Ok(mapped)
    }

    fn event(&mut self, json: Json, observed: u64, seq: Option<i64>) -> Mapped {
        let Some(id) = uuid_of(&json["id"]) else {
            return Mapped::default();
        };
        let time = json["received_at"]
            .as_str()
            .and_then(crate::time::parse_rfc3339)
            .map_or(observed, unix_nano);
        let input = &json["input"];
        let kind = json["kind"].as_str().unwrap_or("unknown");
        let tool = json["tool"].as_str();
        let mut attributes = Vec::with_capacity(12);
        let mut text = |key, value| push_text(&mut attributes, key, value);
        let session = json["session_id"].as_str();
        // Claude Code's own telemetry names (`session.id`, `prompt.id`), and
        // the GenAI conventions' where they name the same thing.
        text("session.id", session);
        text("gen_ai.conversation.id", session);
        text("prompt.id", input["prompt_id"].as_str());
        text("gen_ai.tool.name", tool);
        text("gen_ai.tool.call.id", input["tool_use_id"].as_str());
        text("hookd.harness", json["harness"].as_str());
        text("hookd.event", Some(kind));
        text("hookd.event.id", json["id"].as_str());
        text("hookd.run.id", json["run_id"].as_str());
        text("hookd.copy_of", json["copy_of"].as_str());
        let mapped_kind = json["mapped_kind"].as_str().unwrap_or(kind);
        let decision_point = json["harness"]
            .as_str()
            .and_then(|h| serde_json::from_value::<Harness>(Json::String(h.into())).ok())
            .is_some_and(|h| {
                h.agent()
                    .is_decision_point(HookEventKind::from_name(mapped_kind))
            });
        let span_name = match tool {
            Some(tool) => format!("{kind} {tool}"),
            None => kind.to_string(),
        };
        let log = LogRecord {
            time_unix_nano: time,
            observed_time_unix_nano: observed,
            severity_number: SEVERITY_INFO,
            severity_text: "INFO",
            event_name: "hookd.event",
            body: Value::from_json(json),
            attributes: attributes.clone(),
            trace_id: trace_id(id),
            span_id: span_id(id),
        };
        let forgot = self.opened.len() >= self.capacity && self.forget_oldest();
        self.arrivals.push_back(id);
        self.opened.insert(
            id,
            Opened {
                start_unix_nano: time,
                span_name,
                decision_point,
                attributes,
                events: Vec::new(),
                seq: seq.and_then(|s| u64::try_from(s).ok()),
            },
        );
        Mapped {
            log: Some(log),
            span: None,
            forgot,
        }
    }

    /// Forgets the undecided event that came first; true if there was one.
    fn forget_oldest(&mut self) -> bool {
        while let Some(id) = self.arrivals.pop_front() {
            if self.opened.remove(&id).is_some() {
                return true;
            }
        }
        false
    }

    fn decision(&mut self, json: Json, observed: u64) -> Mapped {
        let Some(event_id) = uuid_of(&json["event_id"]) else {
            return Mapped::default();
        };
        let opened = self.opened.remove(&event_id);
        // Decided ids stay in `arrivals` until met; never more than the
        // undecided ones by much.
        if self.arrivals.len() > 2 * self.opened.len() + 64 {
            let opened = &self.opened;
            self.arrivals.retain(|id| opened.contains_key(id));
        }
        let latency_us = json["latency_us"].as_u64().unwrap_or(0);
        let verdict = json["verdict"].as_str().unwrap_or("none");
        let mut attributes = opened
            .as_ref()
            .map(|o| o.attributes.clone())
            .unwrap_or_default();
        if opened.is_none() {
            attributes.push(KeyValue::new(
                "hookd.event.id",
                Value::String(event_id.to_string()),
            ));
        }
        let mut text = |key, value| push_text(&mut attributes, key, value);
        text("hookd.decision.id", json["decision_id"].as_str());
        text("hookd.verdict", Some(verdict));
        text("hookd.source", json["source"].as_str());
        text("hookd.reason", json["reason"].as_str());
        text("hookd.grant_rule", json["grant_rule"].as_str());
        // Provenance (issue 14): the deciding layer and the policy
        // revisions, on the lines of daemons that write them.
        text("hookd.layer", json["layer"].as_str());
        text("hookd.policy.revision", json["revision"].as_str());
        text(
            "hookd.policy.project_revision",
            json["project_revision"].as_str(),
        );
        let rule_ids = json["rule_ids"]
            .as_array()
            .map(|ids| {
                ids.iter()
                    .filter_map(Json::as_str)
                    .map(|id| Value::String(id.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        attributes.push(KeyValue::new("hookd.rule_ids", Value::Array(rule_ids)));
        // Where each deciding rule is written (`file:line`), on the lines
        // of daemons that record the rules' provenance.
        if let Some(rules) = json["rules"].as_array().filter(|r| !r.is_empty()) {
            let locations = rules
                .iter()
                .map(
                    |rule| match (rule["file"].as_str(), rule["line"].as_u64()) {
                        (Some(file), Some(line)) => Value::String(format!("{file}:{line}")),
                        (Some(file), None) => Value::String(file.to_string()),
                        _ => Value::Empty,
                    },
                )
                .collect();
            attributes.push(KeyValue::new(
                "hookd.rule_locations",
                Value::Array(locations),
            ));
        }
        if let Some(generation) = json["generation"].as_i64() {
            attributes.push(KeyValue::new(
                "hookd.rules.generation",
                Value::Int(generation),
            ));
        }
        attributes.push(KeyValue::new(
            "hookd.latency_us",
            Value::Int(i64::try_from(latency_us).unwrap_or(i64::MAX)),
        ));
        if json["permissive"].as_bool() == Some(true) {
            attributes.push(KeyValue::new("hookd.permissive", Value::Bool(true)));
        }
        let end = opened
            .as_ref()
            .map_or(observed, |o| o.start_unix_nano + latency_us * 1_000);
        let span = opened.filter(|o| o.decision_point).map(|o| Span {
            trace_id: trace_id(event_id),
            span_id: span_id(event_id),
            name: o.span_name,
            kind: SPAN_KIND_SERVER,
            start_time_unix_nano: o.start_unix_nano,
            end_time_unix_nano: end,
            attributes: attributes.clone(),
            events: o.events,
        });
        let warn = verdict == "deny";
        let log = LogRecord {
            time_unix_nano: end,
            observed_time_unix_nano: observed,
            severity_number: if warn { SEVERITY_WARN } else { SEVERITY_INFO },
            severity_text: if warn { "WARN" } else { "INFO" },
            event_name: "hookd.decision",
            body: Value::from_json(json),
            attributes,
            trace_id: trace_id(event_id),
            span_id: span_id(event_id),
        };
        Mapped {
            log: Some(log),
            span,
            forgot: false,
        }
    }
}

/// A `run_start` or `run_done` line: a run (Agent SDK or Pi) began or ended. Its
/// hooks are traced on their own (their lines carry `run_id`).
fn run(json: Json, event_name: &'static str, observed: u64) -> Mapped {
    let mut attributes = Vec::new();
    let mut text = |key, value| push_text(&mut attributes, key, value);
    text("hookd.run.id", json["run_id"].as_str());
    text("session.id", json["session_id"].as_str());
    text("gen_ai.conversation.id", json["session_id"].as_str());
    text("gen_ai.request.model", json["model"].as_str());
    text("hookd.provider", json["provider"].as_str());
    text("hookd.runtime", json["runtime"].as_str());
    text("hookd.client", json["client"].as_str());
    text("hookd.error", json["error"].as_str());
    let usage = &json["usage"];
    for (key, field) in [
        ("gen_ai.usage.input_tokens", "input_tokens"),
        ("gen_ai.usage.output_tokens", "output_tokens"),
    ] {
        if let Some(tokens) = usage[field].as_i64() {
            attributes.push(KeyValue::new(key, Value::Int(tokens)));
        }
    }
    if let Some(cost) = json["cost_usd"].as_f64() {
        attributes.push(KeyValue::new("hookd.cost_usd", Value::Double(cost)));
    }
    if let Some(turns) = json["num_turns"].as_i64() {
        attributes.push(KeyValue::new("hookd.num_turns", Value::Int(turns)));
    }
    if let Some(ms) = json["duration_ms"].as_i64() {
        attributes.push(KeyValue::new("hookd.duration_ms", Value::Int(ms)));
    }
    let failed = json["ok"].as_bool() == Some(false);
    if json["ok"].is_boolean() {
        attributes.push(KeyValue::new("hookd.run.ok", Value::Bool(!failed)));
    }
    let time = json["received_at"]
        .as_str()
        .and_then(crate::time::parse_rfc3339)
        .map_or(observed, unix_nano);
    log_only(json, time, observed, event_name, failed, attributes)
}

/// A tool call that ran unjudged (the coverage alarm): a warning, named
/// `hookd.unjudged_tool_call`, with the session, the tool and its call.
fn unjudged(json: Json, observed: u64) -> Mapped {
    let mut attributes = Vec::new();
    let mut text = |key, value| push_text(&mut attributes, key, value);
    text("session.id", json["session_id"].as_str());
    text("gen_ai.conversation.id", json["session_id"].as_str());
    text("gen_ai.tool.name", json["tool"].as_str());
    text("gen_ai.tool.call.id", json["tool_use_id"].as_str());
    text("hookd.harness", json["harness"].as_str());
    text("hookd.event.id", json["event_id"].as_str());
    let time = json["at"]
        .as_str()
        .and_then(crate::time::parse_rfc3339)
        .map_or(observed, unix_nano);
    log_only(
        json,
        time,
        observed,
        "hookd.unjudged_tool_call",
        true,
        attributes,
    )
}

/// The narrator's line (issue #24): an INFO log record of its session. A
/// line written for an event that waits for a person is in that event's
/// trace, and, while the event waits, an event of its span
/// (`hookd.narration`, the line as `hookd.narration.text`), exported when
/// the decision closes it.
impl Mapper {
    fn narration(&mut self, json: Json, observed: u64) -> Mapped {
        let mut attributes = Vec::new();
        for (key, field) in [
            ("session.id", "session_id"),
            ("gen_ai.conversation.id", "session_id"),
            ("hookd.harness", "harness"),
            ("hookd.event.id", "pending_event_id"),
        ] {
            push_text(&mut attributes, key, json[field].as_str());
        }
        let time = json["at"]
            .as_str()
            .and_then(crate::time::parse_rfc3339)
            .map_or(observed, unix_nano);
        let waiting = uuid_of(&json["pending_event_id"]);
        if let Some(opened) = waiting.and_then(|id| self.opened.get_mut(&id)) {
            let mut event = Vec::new();
            push_text(&mut event, "hookd.narration.text", json["text"].as_str());
            opened.events.push(SpanEvent {
                time_unix_nano: time,
                name: "hookd.narration",
                attributes: event,
            });
        }
        let mut mapped = log_only(json, time, observed, "hookd.narration", false, attributes);
        if let (Some(id), Some(log)) = (waiting, mapped.log.as_mut()) {
            log.trace_id = trace_id(id);
            log.span_id = span_id(id);
        }
        mapped
    }
}

/// Adds a string attribute when the value is there.
fn push_text(attributes: &mut Vec<KeyValue>, key: &'static str, value: Option<&str>) {
    if let Some(value) = value {
        attributes.push(KeyValue::new(key, Value::String(value.to_string())));
    }
}

/// A line that is a log record and no span (runs, the coverage alarm, the
/// narrator): WARN when `warn`, else INFO, the line itself as its body.
fn log_only(
    json: Json,
    time: u64,
    observed: u64,
    event_name: &'static str,
    warn: bool,
    attributes: Vec<KeyValue>,
) -> Mapped {
    Mapped {
        log: Some(LogRecord {
            time_unix_nano: time,
            observed_time_unix_nano: observed,
            severity_number: if warn { SEVERITY_WARN } else { SEVERITY_INFO },
            severity_text: if warn { "WARN" } else { "INFO" },
            event_name,
            body: Value::from_json(json),
            attributes,
            trace_id: [0; 16],
            span_id: [0; 8],
        }),
        span: None,
        forgot: false,
    }
}

fn uuid_of(json: &Json) -> Option<Uuid> {
    json.as_str().and_then(|s| s.parse().ok())
}

/// Nanoseconds since the Unix epoch (0 before it).
pub fn unix_nano(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a Value> {
        attributes
            .iter()
            .find(|kv| kv.key == key)
            .map(|kv| &kv.value)
    }

    fn s(text: &str) -> Value {
        Value::String(text.to_string())
    }

    fn event_line(id: Uuid, kind: &str) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "type": "event", "id": id, "received_at": "2026-11-23T22:00:00.000001Z",
            "harness": "claude-code", "session_id": "s1", "kind": kind, "tool": "Bash",
            "input": {"prompt_id": "p1", "tool_use_id": "toolu_1", "tool_name": "Bash"}
        }))
        .unwrap()
    }

    fn decision_line(event: Uuid) -> Vec<u8> {
        serde_json::to_vec(&json!({
            "type": "decision", "decision_id": crate::event::new_id(), "event_id": event,
            "verdict": "deny", "reason": "no", "source": "rule", "rule_ids": ["no-rm"],
            "generation": 3, "latency_us": 250
        }))
        .unwrap()
    }

    #[test]
    fn a_decision_point_becomes_a_span_joined_on_its_event() {
        let mut mapper = Mapper::new(16);
        let id = crate::event::new_id();
        let now = SystemTime::now();
        let event = mapper.map(&event_line(id, "PreToolUse"), now).unwrap();
        let log = event.log.unwrap();
        assert_eq!(log.trace_id, trace_id(id));
        assert_eq!(
            attr(&log.attributes, "gen_ai.tool.call.id"),
            Some(&s("toolu_1"))
        );
        assert!(event.span.is_none());
        let decided = mapper.map(&decision_line(id), now).unwrap();
        let span = decided.span.expect("a decision point has a span");
        assert_eq!(span.name, "PreToolUse Bash");
        assert_eq!(span.end_time_unix_nano - span.start_time_unix_nano, 250_000);
        assert_eq!(span.start_time_unix_nano, 1_795_471_200_000_001_000);
        for (key, value) in [
            ("session.id", "s1"),
            ("prompt.id", "p1"),
            ("gen_ai.tool.name", "Bash"),
            ("hookd.verdict", "deny"),
            ("hookd.source", "rule"),
        ] {
            assert_eq!(attr(&span.attributes, key), Some(&s(value)), "{key}");
        }
        assert_eq!(
            attr(&span.attributes, "hookd.rule_ids"),
            Some(&Value::Array(vec![Value::String("no-rm".into())]))
        );
        let log = decided.log.unwrap();
        assert_eq!((log.trace_id, log.span_id), (span.trace_id, span.span_id));
        assert_eq!(log.severity_text, "WARN");
        assert_eq!(mapper.open(), 0);
    }

    #[test]
    fn provenance_on_a_decision_line_is_exported() {
        let mut mapper = Mapper::new(16);
        let id = crate::event::new_id();
        mapper
            .map(&event_line(id, "PreToolUse"), SystemTime::now())
            .unwrap();
        let mut line: Json = serde_json::from_slice(&decision_line(id)).unwrap();
        line["layer"] = json!("project");
        line["revision"] = json!("sha256:00ff");
        line["project_revision"] = json!("sha256:ff00");
        line["rules"] = json!([{"id": "no-rm", "layer": "project", "action": "deny",
            "file": "/p/.claude/hookd.toml", "line": 12}]);
        line["seq"] = json!(42);
        let decided = mapper
            .map(&serde_json::to_vec(&line).unwrap(), SystemTime::now())
            .unwrap();
        assert_eq!(
            attr(&decided.log.as_ref().unwrap().attributes, "hookd.log.seq"),
            Some(&Value::Int(42))
        );
        let span = decided.span.unwrap();
        for (key, value) in [
            ("hookd.layer", "project"),
            ("hookd.policy.revision", "sha256:00ff"),
            ("hookd.policy.project_revision", "sha256:ff00"),
        ] {
            assert_eq!(attr(&span.attributes, key), Some(&s(value)), "{key}");
        }
        assert_eq!(
            attr(&span.attributes, "hookd.rule_locations"),
            Some(&Value::Array(vec![s("/p/.claude/hookd.toml:12")]))
        );
    }

    #[test]
    fn a_large_line_keeps_its_attributes_and_a_cut_body() {
        let mut mapper = Mapper::new(16);
        let id = crate::event::new_id();
        let mut line: Json = serde_json::from_slice(&event_line(id, "PreToolUse")).unwrap();
        line["input"]["tool_input"] = json!({"content": "é".repeat(MAX_BODY_BYTES)});
        let line = serde_json::to_vec(&line).unwrap();
        let log = mapper.map(&line, SystemTime::now()).unwrap().log.unwrap();
        let Value::String(body) = &log.body else {
            panic!("a text body: {:?}", log.body);
        };
        assert!(body.len() <= MAX_BODY_BYTES && body.len() > MAX_BODY_BYTES - 4);
        assert!(line.starts_with(body.as_bytes()));
        assert_eq!(
            attr(&log.attributes, "hookd.body_truncated"),
            Some(&Value::Bool(true))
        );
        assert_eq!(
            attr(&log.attributes, "gen_ai.tool.call.id"),
            Some(&s("toolu_1"))
        );
        let small = mapper
            .map(
                &event_line(crate::event::new_id(), "PreToolUse"),
                SystemTime::now(),
            )
            .unwrap()
            .log
            .unwrap();
        assert!(matches!(small.body, Value::Map(_)));
        assert_eq!(attr(&small.attributes, "hookd.body_truncated"), None);
    }

    #[test]
    fn a_runs_end_is_a_log_record_with_its_usage() {
        let line = serde_json::to_vec(&json!({
            "type": "run_done", "run_id": "r1", "received_at": "2026-11-23T22:00:00.000001Z",
            "ok": true, "session_id": "s1", "usage": {"input_tokens": 12, "output_tokens": 34},
            "cost_usd": 0.25, "num_turns": 2, "duration_ms": 900
        }))
        .unwrap();
        let log = Mapper::new(4)
            .map(&line, SystemTime::now())
            .unwrap()
            .log
            .unwrap();
        assert_eq!(log.event_name, "hookd.run_done");
        assert_eq!(attr(&log.attributes, "hookd.run.id"), Some(&s("r1")));
        assert_eq!(attr(&log.attributes, "session.id"), Some(&s("s1")));
        assert_eq!(
            attr(&log.attributes, "gen_ai.usage.output_tokens"),
            Some(&Value::Int(34))
        );
        assert_eq!(
            attr(&log.attributes, "hookd.cost_usd"),
            Some(&Value::Double(0.25))
        );
        assert_eq!(log.trace_id, [0; 16], "a run is no hook's trace");
        let start = serde_json::to_vec(&json!({
            "type": "run_start", "run_id": "r1", "received_at": "2026-11-23T22:00:00.000001Z",
            "client": "c", "prompt": "p", "cwd": "/", "provider": "oai", "model": "gpt-5",
            "pid": 7, "runtime": "pi"
        }))
        .unwrap();
        let started = Mapper::new(4)
            .map(&start, SystemTime::now())
            .unwrap()
            .log
            .unwrap();
        assert_eq!(started.event_name, "hookd.run_start");
        assert_eq!(attr(&started.attributes, "hookd.runtime"), Some(&s("pi")));
        let message = br#"{"type":"sdk_message","run_id":"r1","received_at":"2026-11-23T22:00:00.000001Z","message":{}}"#;
        assert_eq!(
            Mapper::new(4).map(message, SystemTime::now()).unwrap(),
            Mapped::default()
        );
    }

    #[test]
    fn a_tool_call_that_ran_unjudged_is_a_warning() {
        let line = serde_json::to_vec(&json!({
            "type": "unjudged_tool_call", "at": "2026-11-23T22:00:00.000001Z",
            "harness": "codex", "session_id": "s1", "tool": "Bash",
            "tool_use_id": "call_1", "event_id": "e", "session_unjudged": 1
        }))
        .unwrap();
        let log = Mapper::new(4)
            .map(&line, SystemTime::now())
            .unwrap()
            .log
            .unwrap();
        assert_eq!(log.event_name, "hookd.unjudged_tool_call");
        assert_eq!(log.severity_text, "WARN");
        assert_eq!(
            attr(&log.attributes, "gen_ai.tool.call.id"),
            Some(&s("call_1"))
        );
        assert_eq!(attr(&log.attributes, "hookd.harness"), Some(&s("codex")));
    }

    #[test]
    fn a_narration_is_an_info_record_of_its_session() {
        let line = serde_json::to_vec(&json!({
            "type": "narration", "at": "2026-11-23T22:00:00.000001Z",
            "harness": "claude-code", "session_id": "s1", "text": "I'm testing.",
            "events": 3, "pending_event_id": "e1"
        }))
        .unwrap();
        let log = Mapper::new(4)
            .map(&line, SystemTime::now())
            .unwrap()
            .log
            .unwrap();
        assert_eq!(log.event_name, "hookd.narration");
        assert_eq!(log.severity_text, "INFO");
        assert_eq!(attr(&log.attributes, "session.id"), Some(&s("s1")));
        assert_eq!(attr(&log.attributes, "hookd.event.id"), Some(&s("e1")));
    }

    #[test]
    fn a_narration_for_a_waiting_event_is_in_its_trace_and_an_event_of_its_span() {
        let mut mapper = Mapper::new(16);
        let id = crate::event::new_id();
        let now = SystemTime::now();
        mapper.map(&event_line(id, "PreToolUse"), now).unwrap();
        let line = serde_json::to_vec(&json!({
            "type": "narration", "at": "2026-11-23T22:00:00.5Z",
            "harness": "agent-sdk", "session_id": "s1",
            "text": "I'm regenerating the lockfile.", "events": 4, "pending_event_id": id
        }))
        .unwrap();
        let log = mapper.map(&line, now).unwrap().log.unwrap();
        assert_eq!(log.trace_id, trace_id(id));
        assert_eq!(log.span_id, span_id(id));
        let span = mapper.map(&decision_line(id), now).unwrap().span.unwrap();
        assert_eq!(span.events.len(), 1, "{span:?}");
        let event = &span.events[0];
        assert_eq!(event.name, "hookd.narration");
        assert_eq!(
            event.time_unix_nano,
            crate::time::parse_rfc3339("2026-11-23T22:00:00.5Z").map_or(0, unix_nano)
        );
        assert_eq!(
            attr(&event.attributes, "hookd.narration.text"),
            Some(&s("I'm regenerating the lockfile."))
        );
        // A narration of nothing waiting: a record of no trace, no event.
        let other = crate::event::new_id();
        mapper.map(&event_line(other, "PreToolUse"), now).unwrap();
        let line = serde_json::to_vec(&json!({
            "type": "narration", "at": "2026-11-23T22:00:01Z", "harness": "pi",
            "session_id": "s1", "text": "I'm reading.", "events": 3
        }))
        .unwrap();
        let log = mapper.map(&line, now).unwrap().log.unwrap();
        assert_eq!(log.trace_id, [0; 16]);
        let span = mapper
            .map(&decision_line(other), now)
            .unwrap()
            .span
            .unwrap();
        assert!(span.events.is_empty());
    }

    #[test]
    fn an_observe_only_event_has_logs_and_no_span() {
        let mut mapper = Mapper::new(16);
        let id = crate::event::new_id();
        mapper
            .map(&event_line(id, "Notification"), SystemTime::now())
            .unwrap();
        let decided = mapper.map(&decision_line(id), SystemTime::now()).unwrap();
        assert!(decided.span.is_none());
        assert_eq!(
            attr(&decided.log.unwrap().attributes, "session.id"),
            Some(&s("s1"))
        );
    }

    #[test]
    fn undecided_events_are_bounded_oldest_first() {
        let mut mapper = Mapper::new(2);
        let ids: Vec<Uuid> = (0..3).map(|_| crate::event::new_id()).collect();
        let forgot: Vec<bool> = ids
            .iter()
            .map(|id| {
                mapper
                    .map(&event_line(*id, "PreToolUse"), SystemTime::now())
                    .unwrap()
                    .forgot
            })
            .collect();
        assert_eq!(forgot, [false, false, true]);
        assert_eq!(mapper.open(), 2);
        let first = mapper
            .map(&decision_line(ids[0]), SystemTime::now())
            .unwrap();
        assert!(first.span.is_none(), "the oldest was forgotten");
        let last = mapper
            .map(&decision_line(ids[2]), SystemTime::now())
            .unwrap();
        assert!(last.span.is_some());
    }
}
