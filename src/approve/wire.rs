//! What `hookd approve` reads from and sends to the daemon, read-side only.
//!
//! The daemon's typed frames live in [`crate::protocol`]; the fields issue
//! 10 adds (`short_id`, `suggestions`, `asked_by`, `deadline_ms` on pushed
//! events, `remember`, `steer`; see `protocol/PROTOCOL.md` §7) are read
//! here as optional, so the approver works against a daemon that does not
//! send them yet and lights up when it does.

use serde::Deserialize;
use serde_json::{json, Value};

/// A rule the daemon offers to remember with a decision (`suggestions[]`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Suggestion {
    /// `session` or `always`.
    pub remember: String,
    /// `allow` or `deny`.
    pub verdict: String,
    /// Permission-rule syntax, e.g. `Bash(npm test:*)`.
    pub rule: String,
}

/// Which rule(s) said ask (`asked_by`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct AskedBy {
    /// Empty when the event was routed because no rule decided.
    #[serde(default)]
    pub rule_ids: Vec<String>,
    /// The asking rule's reason.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A pending item as a `pending` reply lists it, or the pending facts a
/// pushed `event` frame carries beside its `event`.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PendingFacts {
    /// Milliseconds left until the daemon gives up waiting.
    #[serde(default)]
    pub deadline_ms: Option<u64>,
    /// The verdicts the event accepts.
    #[serde(default)]
    pub verdicts: Vec<String>,
    /// Five letters, unique among items pending now.
    #[serde(default)]
    pub short_id: Option<String>,
    /// Rules that could be remembered with the decision, narrowest first.
    #[serde(default)]
    pub suggestions: Vec<Suggestion>,
    /// Which rule(s) asked.
    #[serde(default)]
    pub asked_by: Option<AskedBy>,
}

/// How long a decision is remembered (`decide.remember`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remember {
    /// This event only (the default).
    Once,
    /// Later events of the session, as a grant.
    Session,
    /// A rule appended to the user's rules file.
    Always,
}

impl Remember {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Remember::Once => "once",
            Remember::Session => "session",
            Remember::Always => "always",
        }
    }
}

/// Something the approver wants done: a request to the daemon, or (for
/// [`Request::Explain`]) work done locally.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `subscribe` to every event and to runs.
    Subscribe,
    /// `pending`: the whole table (at start and after `lagged`).
    Pending,
    /// `status`: rules source, runs (at start and after `lagged`).
    Status,
    /// `decide` an event.
    Decide {
        /// The event's uuid.
        event_id: String,
        /// `allow`, `deny`, …
        verdict: String,
        /// Shown to the model (deny).
        reason: Option<String>,
        /// How long the answer holds.
        remember: Remember,
        /// The rule to remember (with `session` / `always`).
        rule: Option<String>,
    },
    /// `abort` a run.
    Abort {
        /// The run.
        run_id: String,
    },
    /// `steer`: a follow-up user message into a run.
    Steer {
        /// The run.
        run_id: String,
        /// The message.
        text: String,
    },
    /// Show `hookd rules explain` for a pending event (done locally, with
    /// the daemon's rules source).
    Explain {
        /// The event's uuid.
        event_id: String,
        /// The hook input.
        input: Value,
    },
}

impl Request {
    /// The frame to send with request id `req`; `None` for local work.
    pub fn frame(&self, req: &str) -> Option<Value> {
        Some(match self {
            Request::Subscribe => {
                json!({"type": "subscribe", "req": req, "filter": {"runs": true}})
            }
            Request::Pending => json!({"type": "pending", "req": req}),
            Request::Status => json!({"type": "status", "req": req}),
            Request::Decide {
                event_id,
                verdict,
                reason,
                remember,
                rule,
            } => {
                let mut frame = json!({
                    "type": "decide", "req": req, "event_id": event_id, "verdict": verdict,
                });
                if let Some(reason) = reason {
                    frame["reason"] = json!(reason);
                }
                // `once` is the default: left out, so a daemon that does not
                // know `remember` reads exactly what it always did.
                if *remember != Remember::Once {
                    frame["remember"] = json!(remember.as_str());
                }
                if let Some(rule) = rule {
                    frame["rule"] = json!(rule);
                }
                frame
            }
            Request::Abort { run_id } => json!({"type": "abort", "req": req, "run_id": run_id}),
            Request::Steer { run_id, text } => {
                json!({"type": "steer", "req": req, "run_id": run_id, "text": text})
            }
            Request::Explain { .. } => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decide_once_is_what_every_daemon_reads() {
        let once = Request::Decide {
            event_id: "e".into(),
            verdict: "allow".into(),
            reason: None,
            remember: Remember::Once,
            rule: None,
        };
        assert_eq!(
            once.frame("7").unwrap(),
            json!({"type": "decide", "req": "7", "event_id": "e", "verdict": "allow"})
        );
        let always = Request::Decide {
            event_id: "e".into(),
            verdict: "deny".into(),
            reason: Some("no".into()),
            remember: Remember::Always,
            rule: Some("Bash(rm:*)".into()),
        };
        let frame = always.frame("8").unwrap();
        assert_eq!(frame["remember"], "always");
        assert_eq!(frame["rule"], "Bash(rm:*)");
        assert_eq!(frame["reason"], "no");
        assert!(Request::Explain {
            event_id: "e".into(),
            input: Value::Null
        }
        .frame("9")
        .is_none());
    }

    #[test]
    fn pending_facts_read_old_and_new_daemons() {
        let old: PendingFacts =
            serde_json::from_value(json!({"event": {}, "deadline_ms": 900, "verdicts": ["allow"]}))
                .unwrap();
        assert_eq!(old.deadline_ms, Some(900));
        assert!(old.short_id.is_none() && old.suggestions.is_empty() && old.asked_by.is_none());
        let new: PendingFacts = serde_json::from_value(json!({
            "short_id": "abcde",
            "suggestions": [{"remember": "session", "verdict": "allow", "rule": "Bash(npm test:*)"}],
            "asked_by": {"rule_ids": ["ask-npm"], "reason": "npm runs scripts"},
        }))
        .unwrap();
        assert_eq!(new.short_id.as_deref(), Some("abcde"));
        assert_eq!(new.suggestions[0].rule, "Bash(npm test:*)");
        assert_eq!(new.asked_by.unwrap().rule_ids, ["ask-npm"]);
    }
}
