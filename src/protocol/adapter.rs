//! The daemon ↔ agent-SDK adapter messages (protocol/PROTOCOL.md §9).
//!
//! The daemon spawns one adapter (`node adapter/adapter.mjs`) per run and
//! speaks NDJSON over the child's stdin and stdout, framed exactly like the
//! socket (§2). The adapter is dumb on purpose: hook inputs go out verbatim,
//! decisions come back as the very `hook_result` fields a forwarder would
//! print, so [`crate::claude::output`] stays the only place that knows
//! Claude Code's output JSON.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::HookResult;

/// A message the daemon writes to the adapter's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToAdapter {
    /// Start the run (sent once, after `ready`).
    Start(Start),
    /// The answer to a `hook_event`: what a command hook would have printed.
    Decision(HookResult),
    /// End the run gracefully (the SDK's `interrupt()`).
    Abort(Empty),
}

/// A message the adapter writes to its stdout.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromAdapter {
    /// The adapter has loaded the SDK and waits for `start`.
    Ready(Empty),
    /// A hook callback (or `canUseTool`) fired and waits for a `decision`.
    HookEvent(HookEvent),
    /// One message of the SDK's stream, verbatim.
    SdkMessage(AdapterSdkMessage),
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

/// `hook_event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookEvent {
    /// Chosen by the adapter, echoed in the `decision`.
    pub id: String,
    /// The SDK hook input, verbatim (`canUseTool`: a synthetic
    /// `PermissionRequest` input with `hookd_origin: "canUseTool"`).
    pub input: Value,
}

/// `sdk_message`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AdapterSdkMessage {
    /// The SDKMessage.
    pub message: Value,
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
