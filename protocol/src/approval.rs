//! The human loop on the wire (issue 10): pending items with their short
//! ids and suggested grants, `decide`'s `remember`, grant records and the
//! pushed `grant` frames, `status` and its run summaries and last decision.
//!
//! Every addition is optional or a new frame type: protocol v1 readers
//! ignore what they do not know.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use crate::decision::Verdict;

/// The letters of short ids: lowercase ASCII without `i`, `l` and `o`,
/// which read as `1`, `I` and `0` aloud or on a phone.
pub const SHORT_ID_ALPHABET: &[u8; 23] = b"abcdefghjkmnpqrstuvwxyz";

/// How many letters a short id has.
pub const SHORT_ID_LEN: usize = 5;

/// Whether `text` has the shape of a short id.
pub fn is_short_id(text: &str) -> bool {
    text.len() == SHORT_ID_LEN && text.bytes().all(|b| SHORT_ID_ALPHABET.contains(&b))
}

/// A pending event named by its uuid or by its short id (`decide`'s
/// `event_id`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EventRef {
    /// The event's uuid.
    Id(Uuid),
    /// The pending item's short id.
    Short(String),
}

impl From<Uuid> for EventRef {
    fn from(id: Uuid) -> EventRef {
        EventRef::Id(id)
    }
}

impl fmt::Display for EventRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EventRef::Id(id) => write!(f, "{id}"),
            EventRef::Short(short) => f.write_str(short),
        }
    }
}

impl FromStr for EventRef {
    type Err = String;

    fn from_str(text: &str) -> Result<EventRef, String> {
        if let Ok(id) = Uuid::parse_str(text) {
            return Ok(EventRef::Id(id));
        }
        if is_short_id(text) {
            return Ok(EventRef::Short(text.to_string()));
        }
        Err(format!(
            "`{text}` is neither an event uuid nor a short id (5 letters of `{}`)",
            std::str::from_utf8(SHORT_ID_ALPHABET).expect("ASCII")
        ))
    }
}

impl Serialize for EventRef {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for EventRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<EventRef, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

pub use crate::decision::Remember;

/// A rule a client may remember an answer as, shown before it applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Suggestion {
    /// `session` or `always`.
    pub remember: Remember,
    /// `allow` or `deny`.
    pub verdict: Verdict,
    /// Permission-rule syntax: `Bash(npm test:*)`, `Edit(//repo/src/**)`,
    /// `WebFetch(domain:docs.rs)`, `mcp__server__tool`.
    pub rule: String,
    /// Set for a rule that matches every shell command (the whole `Bash`
    /// tool, onto which the agents' shell tools are mapped): hookd never
    /// remembers it for a `decide` that names no rule, and a client offers
    /// it only behind a confirmation that names it, never on one key or tap.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub every_command: bool,
    /// Set when remembering this would not change the answer to the next
    /// event like this one (an `ask` rule beats an `allow` rule; a session
    /// grant does not loosen an enforced policy's ask): why, and what to do.
    /// Shown before the answer is remembered, so the person can choose.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// Which rules routed an event to clients.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AskedBy {
    /// The `ask` rules' ids; empty when no rule decided and the event was
    /// routed by `route_undecided`.
    pub rule_ids: Vec<String>,
    /// The rules' reason, if they gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the session's facts say, when the rules read them (issue #25),
    /// for the person deciding: `tainted by WebFetch https://… at 14:02:11
    /// UTC; 37 tool calls so far; limit rm-burst: call 6`
    /// ([`SessionFacts::note`](crate::facts::SessionFacts::note)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Escalated to the team (`escalate = "team"`): how many different
    /// team approvers must allow it (`approvals_required`); any one's deny
    /// denies. Absent: the ask is the local clients' alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_approvals: Option<u32>,
}

/// What a client needs to decide an event that waits for one: carried by
/// each `pending` item and by the pushed `event` frame of a pending event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingInfo {
    /// 5 letters of [`SHORT_ID_ALPHABET`], unique among pending events.
    pub short_id: String,
    /// Milliseconds until the daemon stops waiting.
    pub deadline_ms: u64,
    /// The verdicts `decide` may give this event.
    pub verdicts: Vec<Verdict>,
    /// Rules the answer may be remembered as, narrowest first.
    #[serde(default)]
    pub suggestions: Vec<Suggestion>,
    /// Which rules asked.
    #[serde(default)]
    pub asked_by: AskedBy,
}

/// One item of the `pending` reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingItem {
    /// The event record, as in the log.
    pub event: Value,
    /// When it started waiting (RFC 3339, UTC).
    pub since: String,
    /// Milliseconds it has waited.
    pub waiting_ms: u64,
    /// The agent that asks (`claude-code`, `codex`, `gemini`; an Agent
    /// SDK run's hooks are Claude Code's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Short id, deadline, verdicts, suggestions, who asked.
    #[serde(flatten)]
    pub info: PendingInfo,
}

/// A session grant: later events of `session_id` matching `rule` get
/// `verdict` without asking.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRecord {
    /// A short id (same alphabet and length as pending items').
    pub id: String,
    /// `allow` or `deny`.
    pub verdict: Verdict,
    /// Permission-rule syntax.
    pub rule: String,
    /// The session (and its subagents) it applies to.
    pub session_id: String,
    /// RFC 3339, UTC.
    pub created_at: String,
    /// RFC 3339, UTC; absent: until the session ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The event whose decision created it.
    pub from_event: Uuid,
    /// The client that decided (`hello.name`).
    pub by: String,
}

/// What happened to a grant, in a pushed `grant` frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GrantChange {
    /// A `decide` with `remember: "session"` created it.
    Added,
    /// A client revoked it.
    Revoked,
    /// Its TTL passed or its session ended.
    Expired,
}

/// `grant`: pushed to every subscriber when a grant is added, revoked or
/// expires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantPush {
    /// What happened.
    pub change: GrantChange,
    /// The grant.
    pub grant: GrantRecord,
}

/// `grant_revoke`: end grant `id` now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRevoke {
    /// Chosen by the client, echoed in the reply.
    pub req: String,
    /// The grant's id.
    pub id: String,
}

/// The `result` of a `decide` with `remember: "always"`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remembered {
    /// The rules file the rule was appended to.
    pub rules_file: String,
    /// The rule.
    pub rule: String,
    /// Set when the file was created from the embedded defaults first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub created_from_defaults: bool,
    /// Set when the rules, with the new one, still do not give this event
    /// the remembered verdict (an `ask` rule beats an `allow`): which rules
    /// and what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Set when the rules file already held this rule with this verdict
    /// (an earlier identical `remember: "always"`): nothing was appended.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub already_present: bool,
}
