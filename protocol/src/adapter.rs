//! The daemon ↔ adapter messages (protocol/PROTOCOL.md §9): the runtime
//! interface every agent runtime of `hookd run` implements.
//!
//! The daemon spawns one adapter per run — `node adapter/adapter.mjs` for
//! the Claude Agent SDK, `node adapter/pi.mjs` for the Pi coding agent
//! ([`Runtime`]) — and speaks NDJSON over the child's stdin and stdout,
//! framed exactly like the socket (§2). The adapter is dumb on purpose: hook
//! inputs go out verbatim, in their agent's dialect, and each decision comes
//! back as the value the callback returns, computed by the dialect
//! ([`crate::agent::claude::sdk`] for the SDK, [`crate::agent::plugin`] for
//! Pi), so the adapter only relays and `protocol/src/agent/` stays the only
//! place that knows an agent's output JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json;

/// A message the daemon writes to the adapter's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToAdapter {
    /// Start the run (sent once, after `ready`).
    Start(Start),
    /// The answer to a `hook_event`: what its SDK callback returns.
    Decision(Decision),
    /// End the run gracefully (the SDK's `interrupt()`).
    Abort(Empty),
    /// A follow-up user message into the running session (the SDK's
    /// streaming input; Pi's `steer`).
    Steer(Steer),
    /// Stop a context compaction under way, if any (Pi's
    /// `abortCompaction()`; the SDK has none and ignores it).
    AbortCompaction(Empty),
    /// The daemon is done with the session: release it and exit (sent
    /// after `done`; an adapter still working aborts first).
    Dispose(Empty),
}

/// The agent runtimes `hookd run` hosts, each an adapter of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Runtime {
    /// The Claude Agent SDK (`adapter.mjs`): the Anthropic Messages API.
    ClaudeSdk,
    /// The Pi coding agent's SDK session (`pi.mjs`): the OpenAI, Gemini and
    /// Anthropic APIs.
    Pi,
}

impl Runtime {
    /// Every runtime, with its name on the wire and the command line.
    pub const ALL: [(&'static str, Runtime); 2] =
        [("claude-sdk", Runtime::ClaudeSdk), ("pi", Runtime::Pi)];

    /// The runtime called `name`.
    pub fn parse(name: &str) -> Option<Runtime> {
        Runtime::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, r)| *r)
    }

    /// Its name (`claude-sdk`, `pi`).
    pub fn as_str(self) -> &'static str {
        match self {
            Runtime::ClaudeSdk => "claude-sdk",
            Runtime::Pi => "pi",
        }
    }

    /// The adapter's file in the adapter directory.
    pub fn script(self) -> &'static str {
        match self {
            Runtime::ClaudeSdk => "adapter.mjs",
            Runtime::Pi => "pi.mjs",
        }
    }

    /// The npm package the adapter runs on, as pinned in the adapter's
    /// `package.json`.
    pub fn package(self) -> &'static str {
        match self {
            Runtime::ClaudeSdk => "@anthropic-ai/claude-agent-sdk",
            Runtime::Pi => "@mariozechner/pi-coding-agent",
        }
    }
}

impl std::fmt::Display for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `decision`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The `hook_event`'s id.
    pub id: String,
    /// What the SDK callback returns, as it is: a hook callback's
    /// `HookJSONOutput`, or `canUseTool`'s `PermissionResult`.
    pub result: Value,
}

/// `steer`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Steer {
    /// The user message's text.
    pub text: String,
}

/// A message the adapter writes to its stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromAdapter {
    /// The adapter has loaded the SDK and waits for `start`.
    Ready(Empty),
    /// A hook callback (or `canUseTool`) fired and waits for a `decision`.
    HookEvent(HookEvent),
    /// One message of the session's stream, in the Agent SDK's shape (the
    /// SDK's verbatim; Pi's translated, with `runtime: "pi"`).
    SdkMessage(AdapterSdkMessage),
    /// The run's usage and cost so far (Pi, after each model turn; the
    /// SDK's are in its messages).
    Usage(Usage),
    /// The run ended with a result message.
    Done(Done),
    /// The run failed (or ended without a result).
    Error(AdapterError),
}

/// A message with no fields (`ready`, `abort`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Empty {}

/// `start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Start {
    /// The run's id (for the adapter's diagnostics).
    pub run_id: String,
    /// The prompt.
    pub prompt: String,
    /// SDK `Options`, in the SDK's own spelling (`maxTurns`, …), built by the
    /// daemon from the `run` request and the provider. The adapter adds its
    /// hooks and `canUseTool` and passes the rest to `query()` unchanged.
    pub options: serde_json::Map<String, Value>,
    /// The timeout, in seconds, the adapter registers for its hook callbacks;
    /// the daemon answers each `hook_event` before it passes.
    pub hook_timeout_s: u64,
}

/// The `hookd_origin` the adapter gives the synthetic PermissionRequest it
/// sends for a `canUseTool` call, as the input's first key.
pub const CAN_USE_TOOL_ORIGIN: &str = "canUseTool";

/// `hook_event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookEvent {
    /// Chosen by the adapter, echoed in the `decision`.
    pub id: String,
    /// The SDK hook input, verbatim (`canUseTool`: a synthetic
    /// `PermissionRequest` input with `hookd_origin: "canUseTool"`); when
    /// `input_error` is set, its text as a string.
    pub input: Value,
    /// Not on the wire: set by [`FromAdapter::decode`] when the input could
    /// not be read even leniently, saying why (see
    /// [`crate::HookRequest::input_error`]).
    #[serde(skip)]
    pub input_error: Option<String>,
}

impl HookEvent {
    /// Whether the SDK's `canUseTool` sent this event (its answer is then a
    /// `PermissionResult`), not a hook callback. Also known for an input
    /// nobody could read: the adapter writes `hookd_origin` first, so it
    /// heads even the cut text of that input.
    pub fn from_can_use_tool(&self) -> bool {
        match &self.input {
            Value::Object(input) => {
                input.get("hookd_origin").and_then(Value::as_str) == Some(CAN_USE_TOOL_ORIGIN)
            }
            Value::String(text) if self.input_error.is_some() => {
                text.starts_with(&format!("{{\"hookd_origin\":\"{CAN_USE_TOOL_ORIGIN}\""))
            }
            _ => false,
        }
    }
}

impl FromAdapter {
    /// Parses one line of the adapter's stdout (without its `\n`).
    ///
    /// Strictly first; then, since everything the adapter relays comes from
    /// `JSON.stringify`, leniently ([`json::parse_lenient`]: lone surrogates,
    /// deep nesting). A `hook_event` whose input even that cannot read is
    /// still returned, with `input_error` set, so its hook gets an answer
    /// (the fallback) instead of waiting for one until the SDK gives up.
    pub fn decode(line: &[u8]) -> Result<FromAdapter, serde_json::Error> {
        let strict = match serde_json::from_slice(line) {
            Ok(message) => return Ok(message),
            Err(e) => e,
        };
        #[derive(Deserialize)]
        struct Tag<'a> {
            #[serde(rename = "type", borrow)]
            kind: std::borrow::Cow<'a, str>,
        }
        let Ok(tag) = serde_json::from_slice::<Tag<'_>>(line) else {
            return Err(strict);
        };
        // Each type straight into its struct (the enum would buffer the
        // whole line into serde's own tree first, recursively).
        let lenient = match tag.kind.as_ref() {
            "ready" => json::parse_lenient(line).map(FromAdapter::Ready),
            "hook_event" => json::parse_lenient(line).map(FromAdapter::HookEvent),
            "sdk_message" => json::parse_lenient(line).map(FromAdapter::SdkMessage),
            "usage" => json::parse_lenient(line).map(FromAdapter::Usage),
            "done" => json::parse_lenient(line).map(FromAdapter::Done),
            "error" => json::parse_lenient(line).map(FromAdapter::Error),
            _ => return Err(strict),
        };
        if let Ok(message) = lenient {
            return Ok(message);
        }
        #[derive(Deserialize)]
        struct RawHookEvent<'a> {
            id: String,
            #[serde(borrow)]
            input: &'a serde_json::value::RawValue,
        }
        match serde_json::from_slice::<RawHookEvent<'_>>(line) {
            Ok(event) if tag.kind == "hook_event" => {
                let (input, input_error) = json::read_input(event.input.get().as_bytes());
                Ok(FromAdapter::HookEvent(HookEvent {
                    id: event.id,
                    input,
                    input_error,
                }))
            }
            _ => Err(strict),
        }
    }
}

/// `sdk_message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterSdkMessage {
    /// The SDKMessage.
    pub message: Value,
}

/// `usage`: the run's totals so far, in the SDK's token names.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Input tokens (not read from the cache).
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the cache.
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
    /// The cost so far, priced from the model's table.
    #[serde(default)]
    pub cost_usd: f64,
    /// Model turns so far.
    #[serde(default)]
    pub num_turns: u64,
}

/// `done`: the result message's essentials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Done {
    /// The session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The result's `usage`, verbatim.
    #[serde(default)]
    pub usage: Option<Value>,
    /// The result's `total_cost_usd`.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// Model turns.
    #[serde(default)]
    pub num_turns: Option<u64>,
    /// The result was an error (`is_error`, or a subtype other than `success`).
    pub is_error: bool,
    /// The final text (or the errors, joined).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
}

/// `error`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdapterError {
    /// What went wrong.
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the daemon logs of a line it cannot read names no value in it.
    #[test]
    fn a_bad_line_is_described_without_its_values() {
        let line = r#"{"type":"done","num_turns":"sk-ant-api03-SECRETSECRETSECRET"}"#;
        let e = FromAdapter::decode(line.as_bytes()).unwrap_err();
        let described = crate::describe_json_error(&e, None);
        assert!(
            described.starts_with("invalid type: expected u64, found string"),
            "{described}"
        );
        assert!(
            e.to_string().contains("SECRET"),
            "serde's own message quotes it"
        );
    }

    #[test]
    fn adapter_lines_carry_what_json_stringify_writes() {
        let hook = |line: &str| match FromAdapter::decode(line.as_bytes()) {
            Ok(FromAdapter::HookEvent(event)) => event,
            other => panic!("{line}: {other:?}"),
        };
        let e = hook(
            r#"{"type":"hook_event","id":"h1","input":{"hook_event_name":"PreToolUse","tool_input":{"command":"rm \udfff"}}}"#,
        );
        assert_eq!(e.id, "h1");
        assert_eq!(e.input["tool_input"]["command"], "rm \\udfff");
        assert_eq!(e.input_error, None);
        let deep = format!("{}1{}", "{\"a\":".repeat(3000), "}".repeat(3000));
        let e = hook(&format!(
            r#"{{"type":"hook_event","id":"h2","input":{{"hook_event_name":"PreToolUse","x":{deep}}}}}"#
        ));
        assert_eq!(e.input["hook_event_name"], "PreToolUse");
        // Unreadable input still yields the hook, so it gets an answer.
        let e = hook(
            r#"{"type":"hook_event","id":"h3","input":{"hook_event_name":"Stop","n":-1e999}}"#,
        );
        assert_eq!(e.id, "h3");
        assert!(!e.from_can_use_tool());
        assert!(e.input_error.unwrap().contains("out of range"));
        // canUseTool's input says so first, readable or not.
        let e = hook(
            r#"{"type":"hook_event","id":"h4","input":{"hookd_origin":"canUseTool","hook_event_name":"PermissionRequest","tool_input":{"n":-1e999}}}"#,
        );
        assert!(e.input_error.is_some());
        assert!(e.from_can_use_tool());
        let e = hook(
            r#"{"type":"hook_event","id":"h5","input":{"hook_event_name":"PermissionRequest","tool_input":{},"hookd_origin":"canUseTool"}}"#,
        );
        assert!(e.from_can_use_tool());
        let e = hook(
            r#"{"type":"hook_event","id":"h6","input":{"hook_event_name":"PreToolUse","tool_input":{"hookd_origin":"canUseTool"}}}"#,
        );
        assert!(!e.from_can_use_tool());
        // Other messages too.
        let m = FromAdapter::decode(br#"{"type":"done","is_error":false,"result":"ok \ud800"}"#);
        assert!(
            matches!(m, Ok(FromAdapter::Done(Done { result: Some(r), .. })) if r == "ok \\ud800")
        );
        assert!(FromAdapter::decode(b"{\"type\":\"hook_event\"").is_err());
        assert!(FromAdapter::decode(br#"{"type":"nope","x":"\ud800"}"#).is_err());
    }
}
