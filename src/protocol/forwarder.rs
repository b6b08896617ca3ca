//! The forwarder's side of the protocol: blocking, std and serde_json only.
//!
//! The hook's stdin is embedded in the `hook` frame as it is (newlines, the
//! only whitespace that could break the framing, are blanked), so the
//! forwarder never builds a JSON tree of a possibly large PostToolUse input.

use std::collections::BTreeMap;

use super::{DecodeError, ErrorCode, Reply, VERSION};

/// Encodes a `hook` frame (with its `\n`). `input` must be one valid JSON
/// value; the caller checks that before calling.
pub fn encode_hook(
    id: &str,
    deadline_ms: u64,
    fail_closed: bool,
    env: &BTreeMap<String, String>,
    input: &[u8],
) -> Vec<u8> {
    let mut frame = Vec::with_capacity(input.len() + 256);
    frame.extend_from_slice(br#"{"type":"hook","v":"#);
    frame.extend_from_slice(VERSION.to_string().as_bytes());
    frame.extend_from_slice(br#","id":"#);
    serde_json::to_writer(&mut frame, id).expect("a string serializes");
    frame.extend_from_slice(br#","harness":"claude-code","deadline_ms":"#);
    frame.extend_from_slice(deadline_ms.to_string().as_bytes());
    if fail_closed {
        frame.extend_from_slice(br#","fail_closed":true"#);
    }
    frame.extend_from_slice(br#","env":"#);
    serde_json::to_writer(&mut frame, env).expect("a string map serializes");
    frame.extend_from_slice(br#","input":"#);
    // In valid JSON a raw CR or LF can only be whitespace between tokens
    // (strings must escape them), so blanking them keeps the value intact.
    frame.extend(
        input
            .iter()
            .map(|&b| if b == b'\n' || b == b'\r' { b' ' } else { b }),
    );
    frame.extend_from_slice(b"}\n");
    frame
}

/// Parses the daemon's reply line (without its `\n`).
pub fn decode_reply(line: &[u8]) -> Result<Reply, DecodeError> {
    serde_json::from_slice(line).map_err(|e| DecodeError {
        code: ErrorCode::InvalidFrame,
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{HookRequest, Request};
    use serde_json::json;

    #[test]
    fn encoded_hook_is_one_valid_frame() {
        let env = BTreeMap::from([("CLAUDE_PROJECT_DIR".to_string(), "/p".to_string())]);
        let input = b"{\n  \"hook_event_name\": \"Stop\",\r\n  \"text\": \"a\\nb\"\n}\n";
        let frame = encode_hook("id-1", 900, true, &env, input);
        assert_eq!(frame.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(frame.last(), Some(&b'\n'));
        let Request::Hook(hook) = Request::decode(&frame[..frame.len() - 1]).unwrap() else {
            panic!("not a hook frame")
        };
        assert_eq!(
            hook,
            HookRequest {
                v: Some(1),
                id: "id-1".into(),
                harness: Default::default(),
                deadline_ms: 900,
                fail_closed: true,
                env,
                input: json!({"hook_event_name": "Stop", "text": "a\nb"}),
            }
        );
    }
}
