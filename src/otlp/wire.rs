//! The part of OTLP hookd sends — log records and spans, with their
//! resource and scope — and its two encodings: protobuf (`http/protobuf`)
//! and protobuf's JSON mapping (`http/json`), as the OTLP specification
//! defines them (opentelemetry-proto's `.proto` files, v1). Pure.
//!
//! Written by hand rather than generated: these few messages are all hookd
//! needs, and the generated types would bring prost and the OpenTelemetry
//! SDK into the daemon (ARCHITECTURE.md, "OpenTelemetry export", has the
//! measurements). `tests/http/otlp.rs` decodes what this writes with the
//! official definitions (the `opentelemetry-proto` crate).

use std::borrow::Cow;

use serde_json::{json, Map, Value as Json};

use crate::hex;

use super::config::Protocol;

/// An attribute's or a body's value (`AnyValue`).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No value (an `AnyValue` with none of its fields set): JSON's `null`.
    Empty,
    /// `string_value`.
    String(String),
    /// `bool_value`.
    Bool(bool),
    /// `int_value`.
    Int(i64),
    /// `double_value`.
    Double(f64),
    /// `array_value`.
    Array(Vec<Value>),
    /// `kvlist_value`.
    Map(Vec<KeyValue>),
}

/// An attribute (`KeyValue`).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyValue {
    /// The attribute's name (`session.id`).
    pub key: Cow<'static, str>,
    /// Its value.
    pub value: Value,
}

impl KeyValue {
    /// `key = value`.
    pub fn new(key: impl Into<Cow<'static, str>>, value: Value) -> KeyValue {
        KeyValue {
            key: key.into(),
            value,
        }
    }
}

impl Value {
    /// A JSON value as an `AnyValue`: objects become key-value lists,
    /// integers that fit `int_value`, other numbers `double_value`, `null`
    /// the empty value.
    /// Takes the JSON by value: its strings move, nothing is copied.
    pub fn from_json(json: Json) -> Value {
        match json {
            Json::Null => Value::Empty,
            Json::Bool(b) => Value::Bool(b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Double(n.as_f64().unwrap_or(f64::NAN)),
            },
            Json::String(s) => Value::String(s),
            Json::Array(items) => Value::Array(items.into_iter().map(Value::from_json).collect()),
            Json::Object(fields) => Value::Map(
                fields
                    .into_iter()
                    .map(|(k, v)| KeyValue::new(k, Value::from_json(v)))
                    .collect(),
            ),
        }
    }
}

/// The sender (`Resource` and `InstrumentationScope`), the same on every
/// request.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    /// The resource's attributes (`service.name`, …).
    pub resource: Vec<KeyValue>,
    /// The instrumentation scope's name.
    pub scope_name: &'static str,
    /// The instrumentation scope's version.
    pub scope_version: &'static str,
}

/// A log record (`LogRecord`).
#[derive(Debug, Clone, PartialEq)]
pub struct LogRecord {
    /// When it happened, ns since the Unix epoch.
    pub time_unix_nano: u64,
    /// When hookd exported it.
    pub observed_time_unix_nano: u64,
    /// `SeverityNumber` (9 INFO, 13 WARN).
    pub severity_number: i32,
    /// `INFO`, `WARN`.
    pub severity_text: &'static str,
    /// The event's name (`hookd.event`, `hookd.decision`).
    pub event_name: &'static str,
    /// The record itself.
    pub body: Value,
    /// Its attributes.
    pub attributes: Vec<KeyValue>,
    /// The trace it belongs to (all zeros: none).
    pub trace_id: [u8; 16],
    /// The span it belongs to (all zeros: none).
    pub span_id: [u8; 8],
}

/// A span (`Span`).
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// Its trace.
    pub trace_id: [u8; 16],
    /// Its id.
    pub span_id: [u8; 8],
    /// Its name.
    pub name: String,
    /// `SpanKind` (2: server).
    pub kind: i32,
    /// Start, ns since the Unix epoch.
    pub start_time_unix_nano: u64,
    /// End, ns since the Unix epoch.
    pub end_time_unix_nano: u64,
    /// Its attributes.
    pub attributes: Vec<KeyValue>,
    /// What happened while it was open (`Span.Event`): the narrator's lines.
    pub events: Vec<SpanEvent>,
}

/// A span's event (`Span.Event`): a moment of the span, named.
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    /// When, ns since the Unix epoch.
    pub time_unix_nano: u64,
    /// Its name (`hookd.narration`).
    pub name: &'static str,
    /// Its attributes.
    pub attributes: Vec<KeyValue>,
}

/// `SeverityNumber` INFO.
pub const SEVERITY_INFO: i32 = 9;
/// `SeverityNumber` WARN.
pub const SEVERITY_WARN: i32 = 13;
/// `SpanKind` SERVER: the daemon answers a request (the hook).
pub const SPAN_KIND_SERVER: i32 = 2;

/// An `ExportLogsServiceRequest` of `records`, encoded for `protocol`.
pub fn logs_request(origin: &Origin, records: &[LogRecord], protocol: Protocol) -> Vec<u8> {
    match protocol {
        Protocol::HttpProtobuf => {
            let mut request = Pb::default();
            request.message(1, |resource_logs| {
                resource_logs.message(1, |resource| resource.attributes(1, &origin.resource));
                resource_logs.message(2, |scope_logs| {
                    scope_logs.message(1, |scope| origin.encode_scope(scope));
                    for record in records {
                        scope_logs.message(2, |pb| record.encode(pb));
                    }
                });
            });
            request.0
        }
        Protocol::HttpJson => {
            let records: Vec<Json> = records.iter().map(LogRecord::to_json).collect();
            to_vec(&json!({"resourceLogs": [{
                "resource": {"attributes": json_attributes(&origin.resource)},
                "scopeLogs": [{"scope": origin.scope_json(), "logRecords": records}],
            }]}))
        }
    }
}

/// An `ExportTraceServiceRequest` of `spans`, encoded for `protocol`.
pub fn traces_request(origin: &Origin, spans: &[Span], protocol: Protocol) -> Vec<u8> {
    match protocol {
        Protocol::HttpProtobuf => {
            let mut request = Pb::default();
            request.message(1, |resource_spans| {
                resource_spans.message(1, |resource| resource.attributes(1, &origin.resource));
                resource_spans.message(2, |scope_spans| {
                    scope_spans.message(1, |scope| origin.encode_scope(scope));
                    for span in spans {
                        scope_spans.message(2, |pb| span.encode(pb));
                    }
                });
            });
            request.0
        }
        Protocol::HttpJson => {
            let spans: Vec<Json> = spans.iter().map(Span::to_json).collect();
            to_vec(&json!({"resourceSpans": [{
                "resource": {"attributes": json_attributes(&origin.resource)},
                "scopeSpans": [{"scope": origin.scope_json(), "spans": spans}],
            }]}))
        }
    }
}

fn to_vec(json: &Json) -> Vec<u8> {
    serde_json::to_vec(json).expect("JSON values serialize")
}

impl Origin {
    fn encode_scope(&self, pb: &mut Pb) {
        pb.string(1, self.scope_name);
        pb.string(2, self.scope_version);
    }

    fn scope_json(&self) -> Json {
        json!({"name": self.scope_name, "version": self.scope_version})
    }
}

impl LogRecord {
    // Field numbers: opentelemetry/proto/logs/v1/logs.proto.
    fn encode(&self, pb: &mut Pb) {
        pb.fixed64(1, self.time_unix_nano);
        pb.varint_field(2, self.severity_number as u64);
        pb.string(3, self.severity_text);
        pb.message(5, |body| body.any_value(&self.body));
        pb.attributes(6, &self.attributes);
        if self.trace_id != [0; 16] {
            pb.bytes(9, &self.trace_id);
            pb.bytes(10, &self.span_id);
        }
        pb.fixed64(11, self.observed_time_unix_nano);
        pb.string(12, self.event_name);
    }

    fn to_json(&self) -> Json {
        let mut record = json!({
            "timeUnixNano": self.time_unix_nano.to_string(),
            "observedTimeUnixNano": self.observed_time_unix_nano.to_string(),
            "severityNumber": self.severity_number,
            "severityText": self.severity_text,
            "eventName": self.event_name,
            "body": json_value(&self.body),
            "attributes": json_attributes(&self.attributes),
        });
        if self.trace_id != [0; 16] {
            record["traceId"] = Json::String(hex::encode(&self.trace_id));
            record["spanId"] = Json::String(hex::encode(&self.span_id));
        }
        record
    }
}

impl Span {
    // Field numbers: opentelemetry/proto/trace/v1/trace.proto.
    fn encode(&self, pb: &mut Pb) {
        pb.bytes(1, &self.trace_id);
        pb.bytes(2, &self.span_id);
        pb.string(5, &self.name);
        pb.varint_field(6, self.kind as u64);
        pb.fixed64(7, self.start_time_unix_nano);
        pb.fixed64(8, self.end_time_unix_nano);
        pb.attributes(9, &self.attributes);
        for event in &self.events {
            pb.message(11, |pb| {
                pb.fixed64(1, event.time_unix_nano);
                pb.string(2, event.name);
                pb.attributes(3, &event.attributes);
            });
        }
    }

    fn to_json(&self) -> Json {
        let mut span = json!({
            "traceId": hex::encode(&self.trace_id),
            "spanId": hex::encode(&self.span_id),
            "name": self.name,
            "kind": self.kind,
            "startTimeUnixNano": self.start_time_unix_nano.to_string(),
            "endTimeUnixNano": self.end_time_unix_nano.to_string(),
            "attributes": json_attributes(&self.attributes),
        });
        if !self.events.is_empty() {
            span["events"] = self
                .events
                .iter()
                .map(|e| {
                    json!({
                        "timeUnixNano": e.time_unix_nano.to_string(),
                        "name": e.name,
                        "attributes": json_attributes(&e.attributes),
                    })
                })
                .collect();
        }
        span
    }
}

/// The JSON mapping of `AnyValue`: 64-bit integers as strings, ids as hex.
fn json_value(value: &Value) -> Json {
    match value {
        Value::Empty => json!({}),
        Value::String(s) => json!({"stringValue": s}),
        Value::Bool(b) => json!({"boolValue": b}),
        Value::Int(i) => json!({"intValue": i.to_string()}),
        // JSON has no NaN or infinities; the mapping spells them as strings.
        Value::Double(d) if d.is_finite() => json!({"doubleValue": d}),
        Value::Double(d) => {
            json!({"doubleValue": if d.is_nan() { "NaN" } else if *d > 0.0 { "Infinity" } else { "-Infinity" }})
        }
        Value::Array(items) => {
            json!({"arrayValue": {"values": items.iter().map(json_value).collect::<Vec<_>>()}})
        }
        Value::Map(fields) => json!({"kvlistValue": {"values": json_attributes(fields)}}),
    }
}

fn json_attributes(attributes: &[KeyValue]) -> Json {
    Json::Array(
        attributes
            .iter()
            .map(|kv| {
                let mut pair = Map::new();
                pair.insert("key".into(), Json::String(kv.key.to_string()));
                pair.insert("value".into(), json_value(&kv.value));
                Json::Object(pair)
            })
            .collect(),
    )
}

/// A protobuf message being written.
#[derive(Default)]
struct Pb(Vec<u8>);

// Wire types.
const VARINT: u32 = 0;
const FIXED64: u32 = 1;
const LEN: u32 = 2;

impl Pb {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn key(&mut self, field: u32, wire_type: u32) {
        self.varint(u64::from(field << 3 | wire_type));
    }

    fn varint_field(&mut self, field: u32, v: u64) {
        self.key(field, VARINT);
        self.varint(v);
    }

    fn fixed64(&mut self, field: u32, v: u64) {
        self.key(field, FIXED64);
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, LEN);
        self.varint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    fn string(&mut self, field: u32, s: &str) {
        self.bytes(field, s.as_bytes());
    }

    /// An embedded message: written after its length, which is known only
    /// once it is written.
    fn message(&mut self, field: u32, write: impl FnOnce(&mut Pb)) {
        let mut inner = Pb::default();
        write(&mut inner);
        self.bytes(field, &inner.0);
    }

    fn attributes(&mut self, field: u32, attributes: &[KeyValue]) {
        for kv in attributes {
            self.message(field, |pair| {
                pair.string(1, &kv.key);
                pair.message(2, |value| value.any_value(&kv.value));
            });
        }
    }

    // Field numbers: opentelemetry/proto/common/v1/common.proto.
    fn any_value(&mut self, value: &Value) {
        match value {
            Value::Empty => {}
            Value::String(s) => self.string(1, s),
            Value::Bool(b) => self.varint_field(2, u64::from(*b)),
            Value::Int(i) => self.varint_field(3, *i as u64),
            Value::Double(d) => self.fixed64(4, d.to_bits()),
            Value::Array(items) => self.message(5, |array| {
                for item in items {
                    array.message(1, |pb| pb.any_value(item));
                }
            }),
            Value::Map(fields) => self.message(6, |list| list.attributes(1, fields)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_are_little_endian_groups_of_seven_bits() {
        let mut pb = Pb::default();
        pb.varint(1);
        pb.varint(300);
        pb.varint(u64::MAX);
        assert_eq!(
            pb.0,
            [1, 0xac, 0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }

    #[test]
    fn a_negative_int_is_its_twos_complement_in_ten_bytes() {
        let mut pb = Pb::default();
        pb.any_value(&Value::Int(-1));
        assert_eq!(pb.0.len(), 1 + 10);
    }
}
