//! The forwarder's side of the protocol: blocking, std and serde_json only.
//!
//! The hook's stdin is embedded in the `hook` frame as it is (newlines, the
//! only whitespace that could break the framing, are blanked), so the
//! forwarder never builds a JSON tree of a possibly large PostToolUse input.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::agent::claude::FailClosed;
use crate::agent::Harness;
use crate::{json, DecodeError, ErrorCode, VERSION};

/// What goes into a `hook` frame.
#[derive(Debug, Clone, Copy)]
pub struct HookFrame<'a> {
    /// The request id.
    pub id: &'a str,
    /// The agent that fired the hook (`--agent`), as the frame's `harness`.
    pub harness: Harness,
    /// The daemon must answer within this many milliseconds.
    pub deadline_ms: u64,
    /// Which events the forwarder blocks when it gets no answer.
    pub fail_closed: FailClosed,
    /// The hook's environment, as much of it as the agent's dialect relays
    /// ([`crate::agent::Agent::relays_env`]).
    pub env: &'a BTreeMap<String, String>,
    /// The hook's stdin: one JSON value, unless `input_error` says why not.
    pub input: &'a [u8],
    /// Why `input` is not JSON: it is then sent as text (a JSON string of
    /// [`json::unreadable_text`]) with this as `input_error`.
    pub input_error: Option<&'a str>,
}

/// Encodes a `hook` frame (with its `\n`).
pub fn encode_hook(hook: &HookFrame<'_>) -> Vec<u8> {
    let mut frame = Vec::with_capacity(hook.input.len() + 256);
    frame.extend_from_slice(br#"{"type":"hook","v":"#);
    frame.extend_from_slice(VERSION.to_string().as_bytes());
    frame.extend_from_slice(br#","id":"#);
    serde_json::to_writer(&mut frame, hook.id).expect("a string serializes");
    frame.extend_from_slice(br#","harness":""#);
    frame.extend_from_slice(hook.harness.as_str().as_bytes());
    frame.extend_from_slice(br#"","deadline_ms":"#);
    frame.extend_from_slice(hook.deadline_ms.to_string().as_bytes());
    if hook.fail_closed.is_on() {
        frame.extend_from_slice(br#","fail_closed":""#);
        frame.extend_from_slice(hook.fail_closed.as_str().as_bytes());
        frame.push(b'"');
    }
    frame.extend_from_slice(br#","env":"#);
    serde_json::to_writer(&mut frame, hook.env).expect("a string map serializes");
    frame.extend_from_slice(br#","input":"#);
    match hook.input_error {
        None => {
            // In valid JSON a raw CR or LF can only be whitespace between
            // tokens (strings must escape them), so blanking them keeps the
            // value intact.
            frame.extend(
                hook.input
                    .iter()
                    .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
            );
        }
        Some(error) => {
            let text = json::unreadable_text(hook.input);
            serde_json::to_writer(&mut frame, &text).expect("a string serializes");
            frame.extend_from_slice(br#","input_error":"#);
            serde_json::to_writer(&mut frame, error).expect("a string serializes");
        }
    }
    frame.extend_from_slice(b"}\n");
    frame
}

/// The daemon's answer to a `hook` frame, as the forwarder reads it: the
/// two frames it acts on, read without serde's derive (the forwarder's
/// build has none). `tests/pure/protocol_vectors.rs` checks that it reads every
/// reply vector as the typed [`Reply`](crate::Reply) does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForwarderReply {
    /// `hook_result`: what to print and how to exit.
    HookResult {
        /// The request's id.
        id: String,
        /// Exit code for the forwarder.
        exit_code: i32,
        /// Written to stdout verbatim.
        stdout: String,
        /// Written to stderr verbatim.
        stderr: String,
    },
    /// `error`: the daemon refused the frame.
    Error {
        /// The error's code.
        code: ErrorCode,
        /// What was wrong.
        message: String,
    },
    /// Any other frame: not an answer to a hook.
    Other,
}

/// Parses the daemon's reply line (without its `\n`).
pub fn decode_reply(line: &[u8]) -> Result<ForwarderReply, DecodeError> {
    let invalid = |message: String| DecodeError {
        code: ErrorCode::InvalidFrame,
        message,
    };
    let frame: Value = serde_json::from_slice(line).map_err(|e| invalid(e.to_string()))?;
    let text = |key: &str| -> Result<String, DecodeError> {
        match frame.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(invalid(format!("`{key}` is not a string"))),
            None => Err(invalid(format!("missing field `{key}`"))),
        }
    };
    match frame.get("type").and_then(Value::as_str) {
        Some("hook_result") => Ok(ForwarderReply::HookResult {
            id: text("id")?,
            exit_code: frame
                .get("exit_code")
                .and_then(Value::as_i64)
                .and_then(|code| i32::try_from(code).ok())
                .ok_or_else(|| invalid("`exit_code` is not an i32".into()))?,
            stdout: text("stdout")?,
            stderr: text("stderr")?,
        }),
        Some("error") => Ok(ForwarderReply::Error {
            code: ErrorCode::from_wire(&text("code")?),
            message: text("message")?,
        }),
        Some(_) => Ok(ForwarderReply::Other),
        None => Err(invalid("missing field `type`".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{HookRequest, Request};
    use serde_json::json;

    fn decode(frame: &[u8]) -> HookRequest {
        assert_eq!(frame.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(frame.last(), Some(&b'\n'));
        let Request::Hook(hook) = Request::decode(&frame[..frame.len() - 1]).unwrap() else {
            panic!("not a hook frame")
        };
        hook
    }

    #[test]
    fn encoded_hook_is_one_valid_frame() {
        let env = BTreeMap::from([("CLAUDE_PROJECT_DIR".to_string(), "/p".to_string())]);
        let input = b"{\n  \"hook_event_name\": \"Stop\",\r\n  \"text\": \"a\\nb\"\n}\n";
        let frame = encode_hook(&HookFrame {
            id: "id-1",
            harness: Harness::ClaudeCode,
            deadline_ms: 900,
            fail_closed: FailClosed::All,
            env: &env,
            input,
            input_error: None,
        });
        assert_eq!(
            decode(&frame),
            HookRequest {
                v: Some(1),
                id: "id-1".into(),
                harness: Default::default(),
                deadline_ms: 900,
                fail_closed: FailClosed::All,
                env,
                input: json!({"hook_event_name": "Stop", "text": "a\nb"}),
                input_error: None,
            }
        );
    }

    #[test]
    fn unreadable_input_travels_as_text_with_its_error() {
        let env = BTreeMap::new();
        let frame = encode_hook(&HookFrame {
            id: "id-2",
            harness: Harness::Gemini,
            deadline_ms: 900,
            fail_closed: FailClosed::Tools,
            env: &env,
            input: b"{\"hook_event_name\":\"PreToolUse\",\n\xff",
            input_error: Some("stdin is not UTF-8 (byte 33)"),
        });
        let hook = decode(&frame);
        assert_eq!(hook.harness, Harness::Gemini);
        assert_eq!(hook.fail_closed, FailClosed::Tools);
        assert_eq!(
            hook.input,
            json!("{\"hook_event_name\":\"PreToolUse\",\n\u{fffd}")
        );
        assert_eq!(
            hook.input_error.as_deref(),
            Some("stdin is not UTF-8 (byte 33)")
        );
    }
}
