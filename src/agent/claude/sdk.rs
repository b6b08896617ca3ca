//! What a Claude Agent SDK callback returns for an answer: the same decision
//! as [`super::output::render`], in the shapes the SDK's callbacks take
//! instead of a command hook's stdout and exit status.
//!
//! The adapter (`adapter/adapter.mjs`) returns these values to the SDK as
//! they are, so this module and `output.rs` stay the only code that knows
//! Claude Code's output JSON (golden-tested under `tests/fixtures/golden-sdk/`):
//! - a hook callback returns a `HookJSONOutput`: what a command hook would
//!   print on stdout, parsed (`{}` for no opinion), or, where a command hook
//!   blocks with exit status 2 (TeammateIdle, TaskCompleted), `{decision:
//!   "block", reason}`, which is how a callback says the same;
//! - `canUseTool` returns a `PermissionResult`: the PermissionRequest answer's
//!   `decision` as `{behavior: "allow", updatedInput, updatedPermissions?}` or
//!   `{behavior: "deny", message, interrupt?}`, and a deny saying nobody
//!   approved when nobody had an opinion.

use serde_json::{Map, Value};

use super::output::{HookOutput, DEFAULT_DENY_REASON};

/// The SDK callback a hook event came from, which decides the shape of its
/// result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SdkCallback {
    /// A hook callback (`options.hooks`): returns a `HookJSONOutput`.
    Hook,
    /// `canUseTool`, sent as a synthetic PermissionRequest: returns a
    /// `PermissionResult`.
    CanUseTool,
}

/// Why `canUseTool` denies when no rule or client had an opinion: the SDK
/// calls it only where Claude Code would otherwise show a permission prompt,
/// and an SDK run has nobody at one.
pub const NOBODY_APPROVED: &str = "hookd: no rule or client approved this tool call, and an \
                                   Agent SDK run has nobody at a prompt to ask";

/// `output` (rendered for the event's kind by [`super::output::render`] or
/// [`super::output::fallback`]) as what `callback` returns to the SDK.
/// `tool_input` is the input of the tool call `canUseTool` asks about: an
/// allow without a rewritten input lets it run unchanged.
pub fn sdk_result(callback: SdkCallback, output: &HookOutput, tool_input: &Value) -> Value {
    match callback {
        SdkCallback::Hook => hook_json_output(output),
        SdkCallback::CanUseTool => permission_result(output, tool_input),
    }
}

/// `output` as a hook callback's `HookJSONOutput`.
pub fn hook_json_output(output: &HookOutput) -> Value {
    if output.exit_code == 2 {
        let reason = output.stderr.trim();
        let reason = if reason.is_empty() {
            DEFAULT_DENY_REASON
        } else {
            reason
        };
        let mut block = Map::new();
        block.insert("decision".into(), "block".into());
        block.insert("reason".into(), reason.into());
        return block.into();
    }
    let stdout = output.stdout.trim();
    if stdout.is_empty() {
        return Value::Object(Map::new());
    }
    // `render` prints one JSON object or nothing; anything else would be a
    // bug there, and the SDK reads `{}` as no opinion.
    match serde_json::from_str::<Value>(stdout) {
        Ok(json @ Value::Object(_)) => json,
        _ => Value::Object(Map::new()),
    }
}

/// `output`, rendered for a PermissionRequest, as `canUseTool`'s
/// `PermissionResult` for a call of a tool with `tool_input`.
pub fn permission_result(output: &HookOutput, tool_input: &Value) -> Value {
    let hook = hook_json_output(output);
    let decision = hook
        .pointer("/hookSpecificOutput/decision")
        .and_then(Value::as_object);
    let behavior = decision
        .and_then(|d| d.get("behavior"))
        .and_then(Value::as_str);
    let mut result = Map::new();
    match (behavior, decision) {
        (Some("allow"), Some(decision)) => {
            result.insert("behavior".into(), "allow".into());
            let input = decision.get("updatedInput").unwrap_or(tool_input);
            result.insert("updatedInput".into(), input.clone());
            if let Some(permissions) = decision.get("updatedPermissions") {
                result.insert("updatedPermissions".into(), permissions.clone());
            }
        }
        (Some("deny"), Some(decision)) => {
            result.insert("behavior".into(), "deny".into());
            let message = decision
                .get("message")
                .and_then(Value::as_str)
                .filter(|m| !m.is_empty())
                .unwrap_or(DEFAULT_DENY_REASON);
            result.insert("message".into(), message.into());
            if decision.get("interrupt") == Some(&Value::Bool(true)) {
                result.insert("interrupt".into(), true.into());
            }
        }
        _ => {
            result.insert("behavior".into(), "deny".into());
            result.insert("message".into(), NOBODY_APPROVED.into());
        }
    }
    result.into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::claude::output::render;
    use crate::agent::claude::HookEventKind;
    use crate::decision::{Answer, Verdict};
    use serde_json::json;

    #[test]
    fn exit_2_blocks_and_no_opinion_is_empty() {
        let out = render(
            HookEventKind::TeammateIdle,
            &Answer::new(Verdict::Deny, Some("keep going".into())),
        );
        assert_eq!(
            hook_json_output(&out),
            json!({"decision": "block", "reason": "keep going"})
        );
        assert_eq!(hook_json_output(&HookOutput::default()), json!({}));
    }

    #[test]
    fn can_use_tool_without_an_opinion_denies() {
        let out = render(HookEventKind::PermissionRequest, &Answer::no_opinion());
        let result = permission_result(&out, &json!({"command": "ls"}));
        assert_eq!(
            result,
            json!({"behavior": "deny", "message": NOBODY_APPROVED})
        );
        let out = render(
            HookEventKind::PermissionRequest,
            &Answer::new(Verdict::Allow, None),
        );
        let result = permission_result(&out, &json!({"command": "ls"}));
        assert_eq!(
            result,
            json!({"behavior": "allow", "updatedInput": {"command": "ls"}})
        );
    }
}
