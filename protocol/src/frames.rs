//! The typed frames: what a peer sends the daemon ([`Request`]) and what
//! it sends back ([`Reply`]), read and written with serde.

pub use approval::{
    AskedBy, EventRef, GrantChange, GrantPush, GrantRecord, GrantRevoke, PendingInfo, PendingItem,
    Remember, Remembered, Suggestion,
};
pub use status::{
    BundleStatus, Counters, HttpStatus, LastDecision, NotifyStatus, OtlpStatus, PolicyLayerStatus,
    ProjectsStatus, RulesStatus, RunSummary, Status, WatchMode,
};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::claude::FailClosed;
use crate::decision::Answer;
use crate::{approval, json, status};
use crate::{DecodeError, ErrorCode};

/// Which agent harness an event came from: a core type ([`crate::agent`]),
/// named here too because every frame that carries an event carries it.
pub use crate::agent::Harness;

/// A message a peer sends to the daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// The forwarder's one request: a hook to decide.
    Hook(HookRequest),
    /// Opens a long-lived connection (clients, adapters).
    Hello(Hello),
    /// Client: receive `event` / `decision` frames matching a filter.
    Subscribe(Subscribe),
    /// Client: stop receiving pushed frames.
    Unsubscribe(ReqOnly),
    /// Client: list the decision points waiting for a decision now.
    Pending(ReqOnly),
    /// Client: decide a pending event.
    Decide(Decide),
    /// Client: daemon version, uptime, rules generation, counters, runs.
    Status(ReqOnly),
    /// Client: start an agent-SDK run; its frames follow on this connection.
    Run(RunRequest),
    /// Client: end a run gracefully (then by force after a grace period).
    Abort(AbortRequest),
    /// Client: list the active session grants.
    Grants(ReqOnly),
    /// Client: end a session grant now.
    GrantRevoke(GrantRevoke),
    /// Client: send a follow-up user message into a running run.
    Steer(SteerRequest),
    /// Client: what the daemon knows of one session (issue #25).
    SessionFacts(SessionFactsRequest),
}

impl Request {
    /// The `req` id of a client request, if this is one.
    pub fn req(&self) -> Option<&str> {
        match self {
            Request::Hook(_) | Request::Hello(_) => None,
            Request::Subscribe(s) => Some(&s.req),
            Request::Unsubscribe(r)
            | Request::Pending(r)
            | Request::Status(r)
            | Request::Grants(r) => Some(&r.req),
            Request::Decide(d) => Some(&d.req),
            Request::Run(r) => Some(&r.req),
            Request::Abort(a) => Some(&a.req),
            Request::GrantRevoke(g) => Some(&g.req),
            Request::Steer(s) => Some(&s.req),
            Request::SessionFacts(s) => Some(&s.req),
        }
    }
}

/// A client request with nothing but its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReqOnly {
    /// Chosen by the client, echoed in the reply.
    pub req: String,
}

/// `subscribe`: what the client wants pushed. Replaces any earlier subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subscribe {
    /// Chosen by the client, echoed in the reply.
    pub req: String,
    /// Which events; empty matches everything.
    #[serde(default)]
    pub filter: Filter,
    /// Redact secrets in pushed event inputs, as the log does.
    #[serde(default, skip_serializing_if = "is_false")]
    pub redact: bool,
}

/// Which events a subscriber receives. Every given field must match.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    /// Event kinds (`hook_event_name`), any of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// Session ids, any of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<String>,
    /// Tool names, any of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// Only decision points (no observe-only events).
    #[serde(default, skip_serializing_if = "is_false")]
    pub decision_points: bool,
    /// Only events waiting for a client's decision (implies decision points).
    #[serde(default, skip_serializing_if = "is_false")]
    pub pending_only: bool,
    /// Also the `run_start`, `sdk_message` and `run_done` frames of every
    /// agent-SDK run (of the listed `sessions`, if any; the other fields
    /// apply to events only).
    #[serde(default, skip_serializing_if = "is_false")]
    pub runs: bool,
}

/// `decide`: a client's decision on a pending event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decide {
    /// Chosen by the client, echoed in the reply.
    pub req: String,
    /// The pending event: its uuid or its short id.
    pub event_id: EventRef,
    /// The verdict and what goes with it (`verdict`, `reason`,
    /// `updated_input`, `additional_context` on the wire).
    #[serde(flatten)]
    pub answer: Answer,
    /// `once` (the default), `session` (a grant) or `always` (a rule in
    /// the user rules file).
    #[serde(default, skip_serializing_if = "Remember::is_once")]
    pub remember: Remember,
    /// The rule to remember; default: the event's first suggestion for
    /// `remember` and the verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// `session` only: the grant expires after this many seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_s: Option<u64>,
}

/// `run`: start an agent-SDK run. The daemon answers `ok {result:{run_id}}`
/// (or an error), then pushes the run's frames to this connection until
/// `run_done`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRequest {
    /// Chosen by the client, echoed in the reply.
    pub req: String,
    /// The prompt.
    pub prompt: String,
    /// How to run it; every field is optional.
    #[serde(default, skip_serializing_if = "RunOptions::is_empty")]
    pub options: RunOptions,
    /// A `[providers.NAME]` of the daemon's config; absent: the daemon's own
    /// environment decides (`ANTHROPIC_*`, or the Claude Code login).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// `claude-sdk` or `pi`; absent: the provider's API decides
    /// (PROTOCOL.md §8.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// A local URL the client serves the model API at (`hookd run --record`
    /// and `--replay`): the run's model requests go there instead, and the
    /// `ok` reply's `model_upstream` says where they would have gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_relay: Option<String>,
}

/// The options of a [`RunRequest`], in the protocol's spelling (the daemon
/// turns them into the SDK's). Unknown names are kept in `unknown` so the
/// daemon can refuse them by name: a misspelt `disallowed_tools` must not
/// silently widen what an agent may do.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// Model name or alias; default: the provider's, else Claude Code's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Working directory of the session (absolute); default: the daemon's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Stop after this many model turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u32>,
    /// Stop once the run has cost this much.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_budget_usd: Option<f64>,
    /// Tools allowed without asking (permission-rule syntax).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_tools: Vec<String>,
    /// Tools removed from the session (permission-rule syntax).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disallowed_tools: Vec<String>,
    /// `default`, `acceptEdits`, `bypassPermissions`, `plan`, `dontAsk`, `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
    /// Resume this session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Which settings files to load: `user`, `project`, `local`; `[]` loads
    /// none. Absent: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting_sources: Option<Vec<String>>,
    /// MCP servers by name: `stdio`, `sse` or `http` configurations (JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<serde_json::Map<String, Value>>,
    /// Options this daemon does not know; a `run` carrying any is refused.
    #[serde(flatten)]
    pub unknown: BTreeMap<String, Value>,
}

impl RunOptions {
    fn is_empty(&self) -> bool {
        *self == RunOptions::default()
    }
}

/// `abort`: end run `run_id`, or only stop its compaction under way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AbortRequest {
    /// Chosen by the client, echoed in the reply.
    pub req: String,
    /// The run, from the `run` request's `ok`.
    pub run_id: String,
    /// Stop only a context compaction under way; the run goes on.
    #[serde(default, skip_serializing_if = "is_false")]
    pub compaction: bool,
}

/// `steer`: a follow-up user message into run `run_id`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SteerRequest {
    /// Chosen by the client, echoed in the reply.
    pub req: String,
    /// The run, from the `run` request's `ok`.
    pub run_id: String,
    /// The message.
    pub text: String,
}

/// `session_facts`: the session facts of `session_id` (its tool calls so
/// far and what tainted it), as the next judgement would read them; the
/// `ok` carries [`SessionFactsReply`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionFactsRequest {
    /// Chosen by the client, echoed in the reply.
    pub req: String,
    /// The agent's session id.
    pub session_id: String,
}

/// The `ok` result of `session_facts`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionFactsReply {
    /// The facts (empty when the daemon tracks none: no rule reads facts,
    /// or the session is unknown), taint details redacted.
    pub facts: crate::facts::SessionFacts,
    /// [`SessionFacts::note`](crate::facts::SessionFacts::note) of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A message the daemon sends to a peer: the one type the daemon writes
/// frames with (but `event` and `decision`, built around their log record's
/// bytes by [`push_frame`]) and every client reads them as, the pushed
/// frames (`event`, `decision`, `grant`, `lagged`, `run_start`,
/// `sdk_message`, `run_done`) included.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    /// The answer to a [`HookRequest`].
    HookResult(HookResult),
    /// The answer to a [`Hello`].
    Welcome(Welcome),
    /// Something was wrong; see [`ErrorCode`].
    Error(ErrorFrame),
    /// A client request succeeded.
    Ok(OkFrame),
    /// Pushed to subscribers: an event was received.
    Event(EventPush),
    /// Pushed to subscribers: an event was decided.
    Decision(DecisionPush),
    /// Pushed to a subscriber whose queue overflowed: frames were dropped.
    Lagged(Lagged),
    /// Pushed: an agent-SDK run started (subscribers with `runs`).
    RunStart(RunStart),
    /// Pushed: one SDK message of a run (its owner; subscribers with `runs`).
    SdkMessage(SdkMessage),
    /// Pushed: a run ended (its owner; subscribers with `runs`).
    RunDone(RunDone),
    /// Pushed to every subscriber: a session grant was added, revoked or
    /// expired.
    Grant(GrantPush),
    /// Pushed to every subscriber: tool calls of a session ran unjudged
    /// (see [`crate::coverage`]).
    CoverageAlarm(crate::coverage::CoverageAlarm),
    /// Pushed to every subscriber: the narrator's line about a session
    /// (also its `narration` log line).
    Narration(crate::narration::Narration),
    /// A frame of a `type` this build does not know (a newer daemon's):
    /// readers skip it, so one client binary reads every daemon that
    /// speaks v1. The daemon never sends it.
    #[serde(other)]
    Unknown,
}

/// `run_start`: a run's adapter was spawned. Also its line in the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunStart {
    /// The run.
    pub run_id: String,
    /// RFC 3339, UTC.
    pub received_at: String,
    /// The client that asked for it (`hello.name`).
    pub client: String,
    /// The prompt (redacted in the log).
    pub prompt: String,
    /// The session's working directory.
    pub cwd: String,
    /// The provider, when one was named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The model asked for, when one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The adapter's pid (also its process group).
    pub pid: u32,
    /// The runtime that hosts it (`claude-sdk`, `pi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
}

/// `sdk_message`: one message of a run's SDK stream, verbatim (system init,
/// assistant, user, result, …). Also its line in the log (redacted there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SdkMessage {
    /// The run.
    pub run_id: String,
    /// RFC 3339, UTC.
    pub received_at: String,
    /// The session, once known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The SDKMessage.
    pub message: Value,
}

impl SdkMessage {
    /// The SDK message's own `type` (`system`, `assistant`, `user`,
    /// `result`, …): what a client that summarises a run looks at first.
    pub fn kind(&self) -> Option<&str> {
        self.message.get("type").and_then(Value::as_str)
    }
}

/// `run_done`: a run ended, successfully or not. Also its line in the log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunDone {
    /// The run.
    pub run_id: String,
    /// RFC 3339, UTC.
    pub received_at: String,
    /// True when the SDK reported success and nothing went wrong.
    pub ok: bool,
    /// The session (for `resume`), when known.
    pub session_id: Option<String>,
    /// The result message's `usage`, verbatim, when there was one.
    pub usage: Option<Value>,
    /// The result message's `total_cost_usd`.
    pub cost_usd: Option<f64>,
    /// Model turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_turns: Option<u64>,
    /// Wall-clock time from spawn to end.
    pub duration_ms: u64,
    /// The final text, when the run produced one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// What went wrong (`aborted by client:x`, the adapter's error, a crash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `ok`: a client request succeeded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OkFrame {
    /// The request's id.
    pub req: String,
    /// The request's result (`pending`: a list, `status`: an object), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// `event`: pushed to subscribers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventPush {
    /// Waiting for a client's `decide`.
    pub pending: bool,
    /// The event record, as in the log.
    pub event: Value,
    /// For a pending event: short id, deadline, verdicts, suggestions, who
    /// asked.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub info: Option<PendingInfo>,
}

/// `decision`: pushed to subscribers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionPush {
    /// The decision record, as in the log.
    pub decision: Value,
}

/// `lagged`: this many pushed frames were dropped because the client read
/// too slowly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lagged {
    /// Frames dropped since the last `lagged`.
    pub dropped: u64,
}

/// `hook`: one hook invocation, relayed verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookRequest {
    /// Protocol version of the sender; absent means 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v: Option<u32>,
    /// Chosen by the sender, echoed in the reply.
    pub id: String,
    /// Where the hook came from.
    #[serde(default)]
    pub harness: Harness,
    /// How long the sender will wait for the reply, in milliseconds from the
    /// moment it sent this frame. The daemon answers before that.
    pub deadline_ms: u64,
    /// Which events the sender blocks when it gets no answer, `"tools"` or
    /// `"all"` (absent: none); the daemon's own fallbacks for this hook block
    /// at least the same. `true`, the spelling before scopes existed, means
    /// `"all"`.
    #[serde(
        default,
        skip_serializing_if = "is_off",
        serialize_with = "fail_closed_wire::serialize",
        deserialize_with = "fail_closed_wire::deserialize"
    )]
    pub fail_closed: FailClosed,
    /// The variables of the hook process's environment its agent's dialect
    /// relays (Claude Code: `CLAUDE*` and `HOOKD_RUN_ID`; Gemini: its
    /// `HOOK_ENV` allowlist; Codex: none).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The hook's stdin, parsed but otherwise untouched; when `input_error`
    /// is set, its text as a string.
    pub input: Value,
    /// Set when the hook's stdin could not be read as JSON: what was wrong.
    /// The daemon logs the event with it and answers with the fallback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_error: Option<String>,
}

impl HookRequest {
    /// A `hook` frame whose `input` serde_json refused (a lone surrogate,
    /// nesting past 128 levels, a number out of range), read anyway: the
    /// envelope with `input` kept raw (serde_json skips a raw value without
    /// a depth limit and without checking surrogates), then `input` with
    /// [`json::read_input`], as an HTTP hook's body is read. An input even
    /// that cannot read becomes `input_error` (and its text `input`), so the
    /// daemon still logs the event and answers with its fallback rather
    /// than refusing the frame.
    /// `None` when the envelope is not a valid `hook` frame either.
    fn decode_lenient(line: &[u8]) -> Option<HookRequest> {
        let raw: BTreeMap<String, &serde_json::value::RawValue> =
            serde_json::from_slice(line).ok()?;
        let mut fields = serde_json::Map::new();
        let mut input = None;
        for (key, value) in raw {
            if key == "input" {
                input = Some(value);
            } else {
                fields.insert(key, json::parse_lenient(value.get().as_bytes()).ok()?);
            }
        }
        let input = input?;
        fields.insert("input".into(), Value::Null);
        let mut hook: HookRequest = serde_json::from_value(Value::Object(fields)).ok()?;
        let (input, error) = json::read_input(input.get().as_bytes());
        hook.input = input;
        if let Some(error) = error {
            hook.input_error.get_or_insert(error);
        }
        Some(hook)
    }
}

fn is_off(scope: &FailClosed) -> bool {
    !scope.is_on()
}

/// `fail_closed` on the wire: a scope name, or the boolean of protocol
/// version 1 before scopes (`true` = `"all"`, what it meant then).
mod fail_closed_wire {
    use std::fmt;

    use serde::de::{self, Visitor};
    use serde::{Deserializer, Serializer};

    use crate::agent::claude::FailClosed;

    pub fn serialize<S: Serializer>(scope: &FailClosed, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(scope.as_str())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<FailClosed, D::Error> {
        struct Scope;
        impl Visitor<'_> for Scope {
            type Value = FailClosed;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("\"tools\", \"all\" or a boolean")
            }

            fn visit_bool<E: de::Error>(self, on: bool) -> Result<FailClosed, E> {
                Ok(if on { FailClosed::All } else { FailClosed::Off })
            }

            fn visit_str<E: de::Error>(self, scope: &str) -> Result<FailClosed, E> {
                FailClosed::from_scope(scope)
                    .ok_or_else(|| E::unknown_variant(scope, FailClosed::SCOPES))
            }
        }
        d.deserialize_any(Scope)
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `hook_result`: exactly what the forwarder prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookResult {
    /// The request's id.
    pub id: String,
    /// Exit code for the forwarder.
    pub exit_code: i32,
    /// Written to stdout verbatim.
    pub stdout: String,
    /// Written to stderr verbatim.
    pub stderr: String,
}

impl HookResult {
    /// This result's `hook_result` frame (without its newline), byte for
    /// byte what serde_json writes of [`Reply::HookResult`]: written by
    /// hand (see [`crate::json_write`]), as the daemon answers every hook
    /// with one, and `stdout` (the agent's JSON, as a string) is mostly
    /// quotes to escape.
    pub fn write_frame(&self, out: &mut Vec<u8>) {
        use crate::json_write::write_str;
        out.extend_from_slice(br#"{"type":"hook_result","id":"#);
        write_str(out, &self.id);
        out.extend_from_slice(br#","exit_code":"#);
        match u8::try_from(self.exit_code) {
            // 0 or 2, nearly always: no formatting machinery for a digit.
            Ok(digit @ 0..=9) => out.push(b'0' + digit),
            _ => {
                use std::io::Write;
                write!(out, "{}", self.exit_code).expect("a Vec takes every write");
            }
        }
        out.extend_from_slice(br#","stdout":"#);
        write_str(out, &self.stdout);
        out.extend_from_slice(br#","stderr":"#);
        write_str(out, &self.stderr);
        out.push(b'}');
    }
}

/// `hello`: the first frame of a long-lived connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol version the peer speaks.
    pub v: u32,
    /// `client` or `adapter`.
    pub role: Role,
    /// A human-readable name, shown in logs and as `client:<name>` sources.
    pub name: String,
}

/// The kind of long-lived peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// A socket client: subscribes, decides, queries.
    Client,
    /// An agent-SDK adapter.
    Adapter,
}

/// `welcome`: the daemon accepts a `hello`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Welcome {
    /// The protocol version the daemon speaks.
    pub v: u32,
    /// The daemon's version (crate version).
    pub server_version: String,
    /// Optional features the daemon offers.
    pub capabilities: Vec<String>,
}

/// `error`: a stable code and a message for humans.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorFrame {
    /// Stable, machine-readable.
    pub code: ErrorCode,
    /// For humans; names what was wrong.
    pub message: String,
    /// The hook id this answers, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The client request this answers, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub req: Option<String>,
}

impl Reply {
    /// An `error` frame.
    pub fn error(code: ErrorCode, message: impl Into<String>, id: Option<String>) -> Reply {
        Reply::Error(ErrorFrame {
            code,
            message: message.into(),
            id,
            req: None,
        })
    }

    /// An `error` frame answering client request `req`.
    pub fn request_error(req: &str, code: ErrorCode, message: impl Into<String>) -> Reply {
        Reply::Error(ErrorFrame {
            code,
            message: message.into(),
            id: None,
            req: Some(req.to_string()),
        })
    }

    /// An `ok` frame answering client request `req`.
    pub fn ok(req: &str, result: Option<Value>) -> Reply {
        Reply::Ok(OkFrame {
            req: req.to_string(),
            result,
        })
    }
}

/// Builds a pushed `event` or `decision` frame around an already serialized
/// record, so one serialization serves the log and every subscriber.
pub fn push_frame(kind: PushKind<'_>, record_json: &[u8]) -> bytes::Bytes {
    let mut frame = Vec::with_capacity(record_json.len() + 48);
    match kind {
        PushKind::Event { pending, info } => {
            frame.extend_from_slice(br#"{"type":"event","pending":"#);
            frame.extend_from_slice(if pending { b"true" } else { b"false" });
            if let Some(info) = info {
                let info = serde_json::to_vec(info).expect("pending info serializes");
                // The object's members without its braces.
                if info.len() > 2 {
                    frame.push(b',');
                    frame.extend_from_slice(&info[1..info.len() - 1]);
                }
            }
            frame.extend_from_slice(br#","event":"#);
        }
        PushKind::Decision => frame.extend_from_slice(br#"{"type":"decision","decision":"#),
    }
    frame.extend_from_slice(record_json);
    frame.extend_from_slice(b"}\n");
    frame.into()
}

/// Which pushed frame [`push_frame`] builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushKind<'a> {
    /// `event`, waiting for a client or not.
    Event {
        /// Waiting for a client's `decide`.
        pending: bool,
        /// What a client needs to decide it, when it is pending.
        info: Option<&'a PendingInfo>,
    },
    /// `decision`.
    Decision,
}

impl DecodeError {
    /// The error of a frame serde_json refused as a `T`, said without any
    /// value the frame held (see [`describe_json_error`]), with the frame's
    /// field it is in when there is one.
    fn of<'a, T: Deserialize<'a>>(line: &'a [u8], e: serde_json::Error) -> DecodeError {
        use serde_json::error::Category;
        let (code, field) = match e.classify() {
            // Only a data error is in a field; find which (the slow path,
            // for a refused frame only).
            Category::Data => {
                let mut de = serde_json::Deserializer::from_slice(line);
                let field = serde_path_to_error::deserialize::<_, T>(&mut de)
                    .err()
                    .and_then(|e| match e.path().iter().next() {
                        Some(serde_path_to_error::Segment::Map { key }) => Some(key.clone()),
                        _ => None,
                    });
                (ErrorCode::InvalidFrame, field)
            }
            _ => (ErrorCode::InvalidJson, None),
        };
        DecodeError {
            code,
            message: describe_json_error(&e, field.as_deref()),
        }
    }
}

/// What serde_json found wrong, said without any value it read: serde's
/// messages quote the value (`invalid type: string "sk-ant-…", expected
/// u64`, ``unknown variant `…` ``, ``unknown field `…` ``), and these
/// messages go into the daemon's stderr (the journal) and to the peer, which
/// may log them in turn: a client's mistyped secret must not travel on. Says
/// the kind of what was found, what was expected, the frame's top-level
/// `field` when known (a frame's field names are the protocol's; a key
/// deeper down may be a client's own, so the path stops there) and the
/// position. Syntax errors name no value and are kept as serde words them.
pub fn describe_json_error(e: &serde_json::Error, field: Option<&str>) -> String {
    use serde_json::error::Category;
    let full = e.to_string();
    let position = match e.line() {
        0 => String::new(),
        line => format!(" at line {line} column {}", e.column()),
    };
    let message = full.strip_suffix(&position).unwrap_or(&full);
    let message = match e.classify() {
        Category::Data => data_error_without_value(message),
        _ => message.to_string(),
    };
    match field {
        Some(field) => format!("`{field}`: {message}{position}"),
        None => format!("{message}{position}"),
    }
}

/// A serde data error's message with the value it quotes left out; a
/// message of a shape not known here (a type's own `custom` error, which
/// may say anything) becomes "invalid value".
fn data_error_without_value(message: &str) -> String {
    if let Some(rest) = message.strip_prefix("unknown field `") {
        return match rest.rsplit_once("`, expected ") {
            Some((_, expected)) => format!("unknown field, expected {expected}"),
            None => "unknown field".into(),
        };
    }
    let kept = ["missing field `", "duplicate field `", "invalid length "];
    if kept.iter().any(|prefix| message.starts_with(prefix)) {
        // Field names the type declares, and a count.
        return message.to_string();
    }
    let rewritten = ["invalid type: ", "invalid value: ", "unknown variant `"];
    if rewritten.iter().any(|prefix| message.starts_with(prefix)) {
        let message = crate::json::without_value(message);
        if !message.starts_with("unknown variant `") {
            return message;
        }
    }
    "invalid value".into()
}

impl Request {
    /// Parses one frame (without its `\n`).
    ///
    /// Serde's internally tagged enums buffer the whole frame into an
    /// intermediate tree before deserializing it again; a `hook` frame can
    /// carry megabytes of tool output. So the `type` is read first (the rest
    /// is skipped without allocating) and the frame is then deserialized once,
    /// straight into its own type.
    pub fn decode(line: &[u8]) -> Result<Request, DecodeError> {
        #[derive(Deserialize)]
        struct Tag<'a> {
            #[serde(rename = "type", borrow)]
            kind: std::borrow::Cow<'a, str>,
        }
        // The frame's UTF-8 checked once, whole, and its strings then read
        // without serde_json checking each again (from bytes, it checks
        // every string and key on its own: about 95 instructions each, 30 in
        // a hook input). A frame that is not UTF-8 is read as bytes, for
        // the same error as before.
        fn parse<'a, T: Deserialize<'a>>(line: &'a [u8]) -> Result<T, DecodeError> {
            match std::str::from_utf8(line) {
                Ok(text) => serde_json::from_str(text),
                Err(_) => serde_json::from_slice(line),
            }
            .map_err(|e| DecodeError::of::<T>(line, e))
        }
        // What every forwarder and adapter sends first, and nearly every
        // frame the daemon reads: a hook frame that says so in its first
        // member. Reading its `type` would skip the whole frame once more
        // before reading it; the frame is read whole below either way. (A
        // second `type` member in such a frame is ignored, as any other
        // member a hook frame does not know, where the tag's reading would
        // have refused the frame for it.)
        if line.starts_with(br#"{"type":"hook","#) {
            return Ok(Request::Hook(match parse(line) {
                Ok(hook) => hook,
                Err(strict) => HookRequest::decode_lenient(line).ok_or(strict)?,
            }));
        }
        let tag: Tag<'_> = parse(line)?;
        Ok(match tag.kind.as_ref() {
            "hook" => Request::Hook(match parse(line) {
                Ok(hook) => hook,
                Err(strict) => HookRequest::decode_lenient(line).ok_or(strict)?,
            }),
            "hello" => Request::Hello(parse(line)?),
            "subscribe" => Request::Subscribe(parse(line)?),
            "unsubscribe" => Request::Unsubscribe(parse(line)?),
            "pending" => Request::Pending(parse(line)?),
            "decide" => Request::Decide(parse(line)?),
            "status" => Request::Status(parse(line)?),
            "run" => Request::Run(parse(line)?),
            "abort" => Request::Abort(parse(line)?),
            "grants" => Request::Grants(parse(line)?),
            "grant_revoke" => Request::GrantRevoke(parse(line)?),
            "steer" => Request::Steer(parse(line)?),
            "session_facts" => Request::SessionFacts(parse(line)?),
            _ => {
                // The type is not quoted: it is the peer's text, and may be
                // anything.
                return Err(DecodeError {
                    code: ErrorCode::InvalidFrame,
                    message: format!(
                        "unknown frame type; expected one of: {}",
                        Request::TYPES.join(", ")
                    ),
                });
            }
        })
    }

    /// The `type`s a peer may send: one per variant, in declaration order.
    /// `types_name_every_variant` checks this against the list serde derives
    /// from the enum itself, so a new variant cannot be left out.
    pub const TYPES: &'static [&'static str] = &[
        "hook",
        "hello",
        "subscribe",
        "unsubscribe",
        "pending",
        "decide",
        "status",
        "run",
        "abort",
        "grants",
        "grant_revoke",
        "steer",
        "session_facts",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_newer_daemon_s_frames_read_as_far_as_they_are_known() {
        let later: Reply =
            serde_json::from_str(r#"{"type":"policy_changed","revision":"abc"}"#).unwrap();
        assert_eq!(later, Reply::Unknown);
        let lagged: Reply =
            serde_json::from_str(r#"{"type":"lagged","dropped":3,"since":"later"}"#).unwrap();
        assert_eq!(lagged, Reply::Lagged(Lagged { dropped: 3 }));
        let Reply::Error(error) =
            serde_json::from_str(r#"{"type":"error","code":"over_budget","message":"m"}"#).unwrap()
        else {
            panic!("not an error frame")
        };
        assert_eq!(error.code, ErrorCode::Internal);
    }

    #[test]
    fn decode_tells_bad_json_from_bad_frames() {
        assert_eq!(
            Request::decode(b"{nope").unwrap_err().code,
            ErrorCode::InvalidJson
        );
        assert_eq!(
            Request::decode(b"\xff\xfe").unwrap_err().code,
            ErrorCode::InvalidJson
        );
        let e = Request::decode(br#"{"type":"launch"}"#).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidFrame);
        assert!(
            e.message.contains("expected one of: hook,"),
            "{}",
            e.message
        );
        let e = Request::decode(br#"{"type":"hook","id":"x","input":{}}"#).unwrap_err();
        assert!(e.message.contains("deadline_ms"), "{}", e.message);
    }

    /// A frame's error names the field and what was expected, never the
    /// value found there: it goes to the daemon's stderr and to the peer.
    #[test]
    fn decode_errors_never_quote_the_value() {
        let secret = "sk-ant-api03-SECRETSECRETSECRETSECRET";
        let table = [
            (
                format!(r#"{{"type":"hook","id":"x","deadline_ms":"{secret}","input":{{}}}}"#),
                "`deadline_ms`: invalid type: expected u64, found string at line 1 column",
            ),
            (
                format!(
                    r#"{{"type":"hook","id":"x","deadline_ms":1,"fail_closed":"{secret}","input":{{}}}}"#
                ),
                "`fail_closed`: unknown value, expected `tools` or `all`",
            ),
            (
                format!(
                    r#"{{"type":"hook","id":"x","deadline_ms":1,"env":{{"{secret}":1}},"input":{{}}}}"#
                ),
                "`env`: invalid type: expected a string, found integer",
            ),
            (
                format!(r#"{{"type":"{secret}"}}"#),
                "unknown frame type; expected one of:",
            ),
            (
                format!(r#"{{"type":"hello","v":1,"name":"{secret}","role":"{secret}"}}"#),
                "`role`: unknown value, expected",
            ),
        ];
        for (line, want) in &table {
            let e = Request::decode(line.as_bytes()).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidFrame, "{line}");
            assert!(e.message.starts_with(want), "{line}: {}", e.message);
            assert!(!e.message.contains("SECRET"), "{line}: {}", e.message);
        }
    }

    fn hook(line: &str) -> HookRequest {
        match Request::decode(line.as_bytes()) {
            Ok(Request::Hook(hook)) => hook,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn hook_frames_carry_any_input_the_agents_send() {
        // A lone surrogate, as JSON.stringify writes it: the text is kept.
        let h = hook(
            r#"{"type":"hook","id":"a","deadline_ms":9,"fail_closed":"tools","input":{"hook_event_name":"PreToolUse","tool_input":{"command":"rm -rf / \ud800"}}}"#,
        );
        assert_eq!(h.input["tool_input"]["command"], "rm -rf / \\ud800");
        assert_eq!(h.fail_closed, FailClosed::Tools);
        assert_eq!(h.input_error, None);
        // Deeper than serde_json's 128 levels.
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let h = hook(&format!(
            r#"{{"type":"hook","id":"b","deadline_ms":9,"input":{{"hook_event_name":"PreToolUse","tool_input":{{"command":"rm -rf /","x":{deep}}}}}}}"#
        ));
        assert_eq!(h.input["tool_input"]["command"], "rm -rf /");
        assert_eq!(h.input_error, None);
        // JSON, but not something serde_json can hold: reported, not refused.
        let h = hook(
            r#"{"type":"hook","id":"c","deadline_ms":9,"input":{"hook_event_name":"PreToolUse","n":1e400}}"#,
        );
        assert_eq!(
            h.input,
            Value::String(r#"{"hook_event_name":"PreToolUse","n":1e400}"#.into())
        );
        assert!(h.input_error.unwrap().contains("out of range"));
        // A bad envelope is still a bad frame, with serde's first error.
        let e = Request::decode(br#"{"type":"hook","id":"d","input":"\ud800"}"#).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidJson, "{}", e.message);
    }

    #[test]
    fn fail_closed_is_a_scope_on_the_wire() {
        let scope = |value: &str| {
            Request::decode(
                format!(r#"{{"type":"hook","id":"a","deadline_ms":9,"fail_closed":{value},"input":{{}}}}"#)
                    .as_bytes(),
            )
            .map(|r| match r {
                Request::Hook(h) => h.fail_closed,
                _ => unreachable!(),
            })
        };
        assert_eq!(scope(r#""tools""#), Ok(FailClosed::Tools));
        assert_eq!(scope(r#""all""#), Ok(FailClosed::All));
        // Before scopes, `true` meant every guarded event.
        assert_eq!(scope("true"), Ok(FailClosed::All));
        assert_eq!(scope("false"), Ok(FailClosed::Off));
        let e = scope(r#""prompts""#).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidFrame);
        // Named and explained, the value not quoted (see
        // decode_errors_never_quote_the_value).
        assert!(
            e.message
                .starts_with("`fail_closed`: unknown value, expected `tools` or `all`"),
            "{}",
            e.message
        );
        let mut h = hook(r#"{"type":"hook","id":"a","deadline_ms":9,"input":{}}"#);
        assert_eq!(h.fail_closed, FailClosed::Off);
        assert!(!serde_json::to_string(&h).unwrap().contains("fail_closed"));
        h.fail_closed = FailClosed::All;
        assert!(serde_json::to_string(&h)
            .unwrap()
            .contains(r#""fail_closed":"all""#));
    }

    /// `TYPES` is exactly the tags serde derives for `Request` (its "unknown
    /// variant" error lists them), in the same order, and `decode` knows
    /// every one of them.
    #[test]
    fn types_name_every_variant() {
        let err = serde_json::from_str::<Request>(r#"{"type":"-"}"#)
            .unwrap_err()
            .to_string();
        let listed = err
            .split_once("expected one of ")
            .unwrap_or_else(|| panic!("serde's message changed: {err}"))
            .1;
        let derived: Vec<&str> = listed
            .split(", ")
            .map(|tag| tag.split('`').nth(1).unwrap_or(tag))
            .collect();
        assert_eq!(Request::TYPES, derived.as_slice(), "{err}");
        for tag in Request::TYPES {
            let frame = format!(r#"{{"type":"{tag}"}}"#);
            let e = Request::decode(frame.as_bytes()).unwrap_err();
            assert!(
                !e.message.contains("unknown frame type"),
                "{tag}: {}",
                e.message
            );
        }
    }
}
