//! The golden vectors in `protocol/vectors/` parse as the messages they claim
//! to be and survive a round trip unchanged: the normative text and the code
//! cannot drift apart silently.

use std::path::Path;

use hookd::protocol::adapter::{FromAdapter, ToAdapter};
use hookd::protocol::{ErrorCode, Reply, Request};
use serde_json::Value;

fn lines(name: &str) -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("protocol/vectors")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert!(!lines.is_empty(), "{name} is empty");
    lines
}

#[test]
fn request_vectors_round_trip() {
    // Every frame type a peer may send has a vector (so decode knows it).
    let all = lines("requests.ndjson").join("\n");
    for kind in Request::TYPES {
        assert!(
            all.contains(&format!("{{\"type\":\"{kind}\"")),
            "no vector for `{kind}`"
        );
    }
    for line in lines("requests.ndjson") {
        let request = Request::decode(line.as_bytes()).unwrap_or_else(|e| panic!("{line}\n{e:?}"));
        // The hand-written dispatch in decode agrees with serde's derived one.
        let derived: Request = serde_json::from_str(&line).unwrap();
        assert_eq!(request, derived, "{line}");
        let again: Value = serde_json::to_value(&request).unwrap();
        assert_eq!(
            again,
            serde_json::from_str::<Value>(&line).unwrap(),
            "{line}"
        );
    }
}

#[test]
fn reply_vectors_round_trip() {
    for line in lines("replies.ndjson") {
        let reply: Reply = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}\n{e}"));
        let again: Value = serde_json::to_value(&reply).unwrap();
        assert_eq!(
            again,
            serde_json::from_str::<Value>(&line).unwrap(),
            "{line}"
        );
        // The forwarder's own reader (no serde derive in its build) reads
        // the frames it acts on as the typed reader does.
        use hookd::protocol::forwarder::{decode_reply, ForwarderReply};
        let expected = match &reply {
            Reply::HookResult(r) => ForwarderReply::HookResult {
                id: r.id.clone(),
                exit_code: r.exit_code,
                stdout: r.stdout.clone(),
                stderr: r.stderr.clone(),
            },
            Reply::Error(e) => ForwarderReply::Error {
                code: e.code,
                message: e.message.clone(),
            },
            _ => ForwarderReply::Other,
        };
        assert_eq!(decode_reply(line.as_bytes()).unwrap(), expected, "{line}");
    }
}

/// An `unknown frame type` error in the reply vectors is word for word what
/// the daemon answers to an unknown type (the list of valid types included;
/// the type itself not quoted: it is the peer's text).
#[test]
fn unknown_type_reply_vectors_match_decode() {
    let mut seen = 0;
    for line in lines("replies.ndjson") {
        let reply: Value = serde_json::from_str(&line).unwrap();
        let message = reply["message"].as_str().unwrap_or_default();
        if !message.starts_with("unknown frame type") {
            continue;
        }
        let frame = serde_json::json!({ "type": "launch" }).to_string();
        let err = Request::decode(frame.as_bytes()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidFrame);
        assert_eq!(err.message, message, "{line}");
        seen += 1;
    }
    assert!(seen > 0, "replies.ndjson has no unknown-type error vector");
}

#[test]
fn rejected_vectors_are_rejected_with_their_code() {
    for line in lines("rejected.ndjson") {
        let case: Value = serde_json::from_str(&line).unwrap();
        let frame = case["frame"].as_str().unwrap();
        let code: ErrorCode = serde_json::from_value(case["code"].clone()).unwrap();
        let err = Request::decode(frame.as_bytes()).expect_err(frame);
        assert_eq!(err.code, code, "{frame}: {}", err.message);
    }
}

/// Each line parses as `T` and serializes back to the same JSON.
fn round_trip<T: serde::de::DeserializeOwned + serde::Serialize>(name: &str) {
    for line in lines(name) {
        let value: T = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line}\n{e}"));
        assert_eq!(
            serde_json::to_value(&value).unwrap(),
            serde_json::from_str::<Value>(&line).unwrap(),
            "{line}"
        );
    }
}

#[test]
fn adapter_vectors_round_trip() {
    round_trip::<ToAdapter>("adapter-in.ndjson");
    round_trip::<FromAdapter>("adapter-out.ndjson");
}

/// The `result`s of `pending`, `status`, `grants` and `decide` in the reply
/// vectors read as their types (clients parse them so), and the current
/// shapes (every field written) survive a round trip unchanged.
#[test]
fn typed_results_match_their_vectors() {
    use hookd::protocol::{GrantRecord, PendingItem, Remembered, Status};
    fn check<T: serde::de::DeserializeOwned + serde::Serialize>(result: &Value, exact: bool) {
        let typed: T =
            serde_json::from_value(result.clone()).unwrap_or_else(|e| panic!("{result}\n{e}"));
        if exact {
            assert_eq!(&serde_json::to_value(&typed).unwrap(), result);
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for line in lines("replies.ndjson") {
        let reply: Value = serde_json::from_str(&line).unwrap();
        if reply["type"] != "ok" || reply["result"].is_null() {
            continue;
        }
        let result = &reply["result"];
        let current = line.contains("\"short_id\"")
            || line.contains("\"last_decision\"")
            || line.contains("\"from_event\"")
            || line.contains("\"rules_file\"");
        match reply["req"].as_str().unwrap() {
            "5" => check::<Vec<PendingItem>>(result, current),
            "9" => check::<Status>(result, current),
            "15" => check::<GrantRecord>(result, true),
            "16" => check::<Remembered>(result, true),
            "17" => check::<Vec<GrantRecord>>(result, true),
            _ => continue,
        }
        seen.insert(reply["req"].as_str().unwrap().to_string());
    }
    assert_eq!(seen.len(), 5, "{seen:?}");
}
