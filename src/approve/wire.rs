//! What `hookd approve` sends to the daemon.
//!
//! What it reads are the protocol's own types: [`crate::protocol::Reply`]
//! for frames, [`crate::protocol::approval`]'s `PendingItem`, `Suggestion`,
//! `AskedBy` and [`crate::decision::Verdict`] for what a pending event
//! carries. One binary ships the daemon and the approver, so there is no
//! older daemon to read.

use serde_json::Value;

use crate::decision::Answer;
use crate::protocol::{
    AbortRequest, Decide, Filter, ReqOnly, Request as Frame, SteerRequest, Subscribe,
};

pub use crate::protocol::approval::Remember;

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
        /// The event record's `harness`: which agent's hook it is.
        harness: String,
    },
    /// Answer a team ask in the database (`--team`; done by the IO loop,
    /// as `hookd team answer`).
    TeamAnswer {
        /// The team ask's id.
        id: String,
        /// Its short id, for what the footer says.
        label: String,
        /// Allow, else deny.
        allow: bool,
        /// The deny's reason.
        reason: Option<String>,
    },
}

impl Request {
    /// The frame to send with request id `req`; `None` for local work.
    pub fn frame(&self, req: &str) -> Option<Frame> {
        let req = req.to_string();
        Some(match self {
            Request::Subscribe => Frame::Subscribe(Subscribe {
                req,
                filter: Filter {
                    runs: true,
                    ..Filter::default()
                },
                redact: false,
            }),
            Request::Pending => Frame::Pending(ReqOnly { req }),
            Request::Status => Frame::Status(ReqOnly { req }),
            Request::Decide {
                event_id,
                verdict,
                reason,
                remember,
                rule,
            } => Frame::Decide(Decide {
                req,
                // Both come from the daemon's own records.
                event_id: event_id.parse().ok()?,
                answer: Answer::new(verdict.parse().ok()?, reason.clone()),
                // `once` is left off the wire: a daemon that does not know
                // `remember` reads exactly what it always did.
                remember: *remember,
                rule: rule.clone(),
                ttl_s: None,
            }),
            Request::Abort { run_id } => Frame::Abort(AbortRequest {
                req,
                run_id: run_id.clone(),
                compaction: false,
            }),
            Request::Steer { run_id, text } => Frame::Steer(SteerRequest {
                req,
                run_id: run_id.clone(),
                text: text.clone(),
            }),
            Request::Explain { .. } | Request::TeamAnswer { .. } => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ID: &str = "019ab0a4-1111-7000-8000-00000000abcd";

    #[test]
    fn a_decide_once_is_what_every_daemon_reads() {
        let once = Request::Decide {
            event_id: ID.into(),
            verdict: "allow".into(),
            reason: None,
            remember: Remember::Once,
            rule: None,
        };
        assert_eq!(
            serde_json::to_value(once.frame("7").unwrap()).unwrap(),
            json!({"type": "decide", "req": "7", "event_id": ID, "verdict": "allow"})
        );
        let always = Request::Decide {
            event_id: ID.into(),
            verdict: "deny".into(),
            reason: Some("no".into()),
            remember: Remember::Always,
            rule: Some("Bash(rm:*)".into()),
        };
        let frame = serde_json::to_value(always.frame("8").unwrap()).unwrap();
        assert_eq!(frame["remember"], "always");
        assert_eq!(frame["rule"], "Bash(rm:*)");
        assert_eq!(frame["reason"], "no");
        let sub = serde_json::to_value(Request::Subscribe.frame("1").unwrap()).unwrap();
        assert_eq!(sub["filter"], json!({"runs": true}));
        assert!(Request::Explain {
            event_id: ID.into(),
            input: Value::Null,
            harness: "claude-code".into(),
        }
        .frame("9")
        .is_none());
    }
}
