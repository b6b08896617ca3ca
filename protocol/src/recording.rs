//! A run recording (`hookd run --record FILE`): one JSONL session, the
//! header first, then the run's lines by their offset. Read by `hookd run
//! --replay`. Described in docs/runs.md ("The recording format"); this is
//! version [`RECORDING_VERSION`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::frames::RunOptions;

/// The header's `format`.
pub const RECORDING_FORMAT: &str = "hookd-run-recording";

/// The format's version, the header's `version`.
pub const RECORDING_VERSION: u64 = 1;

/// One line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordLine {
    /// Milliseconds since the run started (none on the header).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_ms: Option<u64>,
    /// What it records.
    #[serde(flatten)]
    pub item: RecordItem,
}

/// What a [`RecordLine`] records, by its `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RecordItem {
    /// The first line.
    Header(RecordingHeader),
    /// The assistant's text.
    Text {
        /// The text.
        text: String,
    },
    /// The assistant's thinking.
    Thinking {
        /// The thinking.
        thinking: String,
    },
    /// A tool call of the assistant's.
    ToolCall {
        /// The tool.
        name: String,
        /// Its input.
        input: Value,
    },
    /// A tool's result.
    ToolResult {
        /// The result's text.
        content: String,
        /// The tool failed.
        is_error: bool,
    },
    /// A hook event of the run.
    Hook {
        /// The event's id.
        event_id: String,
        /// Its kind (`PreToolUse`, …).
        kind: String,
        /// Its tool, if any.
        tool: String,
        /// What it was about (command, path, …).
        summary: String,
        /// The tool's input.
        tool_input: Value,
        /// It waited for a client.
        pending: bool,
    },
    /// hookd's decision on a hook event.
    Decision(RecordedDecision),
    /// One model API exchange.
    Exchange(RecordedExchange),
    /// The run's error.
    Error {
        /// What went wrong.
        message: String,
    },
    /// The run ended.
    Done {
        /// It succeeded.
        ok: bool,
        /// The result text.
        #[serde(default)]
        result: Option<String>,
        /// The result's `usage`.
        #[serde(default)]
        usage: Option<Value>,
        /// Its cost.
        #[serde(default)]
        cost_usd: Option<f64>,
        /// Model turns.
        #[serde(default)]
        num_turns: Option<u64>,
    },
    /// A line of a later version: skipped.
    #[serde(other)]
    Unknown,
}

/// The header: what was run, by which hookd, under which policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordingHeader {
    /// [`RECORDING_FORMAT`].
    pub format: String,
    /// [`RECORDING_VERSION`].
    pub version: u64,
    /// The hookd that recorded it.
    pub hookd_version: String,
    /// The prompt (redacted).
    pub prompt: String,
    /// The run's options (`run.options`).
    #[serde(default)]
    pub options: RunOptions,
    /// The provider named, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The runtime asked for, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// The policy revision of the run's first decision.
    #[serde(default)]
    pub policy_revision: Option<String>,
}

/// A decision, with what its event was about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedDecision {
    /// The event's id.
    pub event_id: String,
    /// The event's kind.
    pub kind: String,
    /// Its tool, if any.
    pub tool: String,
    /// What it was about.
    pub summary: String,
    /// `allow`, `deny`, `ask`, `none`, …
    pub verdict: String,
    /// Who decided (`rule`, `client`, `default`, …).
    pub source: String,
    /// The deciding rules.
    #[serde(default)]
    pub rule_ids: Vec<String>,
    /// The reason given.
    #[serde(default)]
    pub reason: Option<String>,
    /// The policy revision it was made under.
    #[serde(default)]
    pub revision: Option<String>,
}

/// A model API request and its response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedExchange {
    /// The order the requests arrived in.
    pub seq: u64,
    /// The request.
    pub request: RecordedRequest,
    /// The response.
    pub response: RecordedResponse,
}

/// A recorded request: no headers (the key is in them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// `POST`, `GET`.
    pub method: String,
    /// Path and query (`/v1/messages?beta=true`).
    pub path: String,
    /// The body: its JSON, or its text when it is not JSON.
    pub body: Value,
}

/// A recorded response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedResponse {
    /// The HTTP status.
    pub status: u16,
    /// Its `content-type`.
    #[serde(default)]
    pub content_type: Option<String>,
    /// The body as received (a stream's server-sent events verbatim).
    pub body: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_in_their_documented_shape() {
        let line = RecordLine {
            offset_ms: Some(12),
            item: RecordItem::Text { text: "hi".into() },
        };
        let text = serde_json::to_string(&line).unwrap();
        assert_eq!(text, r#"{"offset_ms":12,"type":"text","text":"hi"}"#);
        assert_eq!(serde_json::from_str::<RecordLine>(&text).unwrap(), line);
        let later: RecordLine =
            serde_json::from_str(r#"{"offset_ms":1,"type":"from_the_future","x":1}"#).unwrap();
        assert_eq!(later.item, RecordItem::Unknown);
    }
}
