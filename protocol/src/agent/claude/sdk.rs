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
//!
//! It is also the one reader of the SDK's own messages (`SDKMessage`, which
//! the adapter relays as the SDK gives them): [`SdkMessageFields`] is what
//! the daemon's run supervisor and `hookd run` read of one.

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

/// What hookd reads of one Agent SDK message, borrowed from its JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct SdkMessageFields<'a> {
    /// The session the message belongs to.
    pub session_id: Option<&'a str>,
    /// Which message it is, and what hookd reads of that kind.
    pub body: SdkBody<'a>,
    /// The run's cost so far, where a message says it before the result:
    /// a Pi run's assistant messages (`total_cost_usd`; `adapter/pi.mjs`).
    pub cost_so_far: Option<f64>,
}

/// The kinds of SDK message hookd reads something of.
#[derive(Debug, Clone, PartialEq)]
pub enum SdkBody<'a> {
    /// `system` with subtype `init`: the session has started.
    Init {
        /// The model the session really uses.
        model: Option<&'a str>,
        /// The session's working directory.
        cwd: Option<&'a str>,
    },
    /// `assistant`: one turn of the model's.
    Assistant(Blocks<'a>),
    /// `user`: what goes back to the model (tool results among it).
    User(Blocks<'a>),
    /// `result`: the run's outcome.
    Result {
        /// Token counts, as the SDK gives them.
        usage: Option<&'a Value>,
        /// What the run cost.
        total_cost_usd: Option<f64>,
        /// Model turns.
        num_turns: Option<u64>,
        /// The final text.
        result: Option<&'a str>,
    },
    /// Any other message.
    Other,
}

/// The content blocks of an `assistant` or `user` message (none when it
/// has no content list).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Blocks<'a>(&'a [Value]);

/// One content block, as hookd reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentBlock<'a> {
    /// Text the model wrote.
    Text(&'a str),
    /// A tool call: the tool's name and input.
    ToolUse {
        /// The tool's name.
        name: Option<&'a str>,
        /// The tool's input (`null` when absent).
        input: &'a Value,
    },
    /// A tool's result: its text (the text parts joined by a space) and
    /// whether it is an error.
    ToolResult {
        /// The result's text.
        text: String,
        /// The tool failed.
        is_error: bool,
    },
    /// The model's thinking.
    Thinking(&'a str),
    /// Any other block.
    Other,
}

impl<'a> SdkMessageFields<'a> {
    /// Reads `message` (any JSON: what is not there reads as absent).
    pub fn of(message: &'a Value) -> SdkMessageFields<'a> {
        let text = |key: &str| message.get(key).and_then(Value::as_str);
        let blocks = || {
            Blocks(
                message["message"]["content"]
                    .as_array()
                    .map_or(&[][..], Vec::as_slice),
            )
        };
        let body = match (text("type"), text("subtype")) {
            (Some("system"), Some("init")) => SdkBody::Init {
                model: text("model"),
                cwd: text("cwd"),
            },
            (Some("assistant"), _) => SdkBody::Assistant(blocks()),
            (Some("user"), _) => SdkBody::User(blocks()),
            (Some("result"), _) => SdkBody::Result {
                usage: message.get("usage"),
                total_cost_usd: message.get("total_cost_usd").and_then(Value::as_f64),
                num_turns: message.get("num_turns").and_then(Value::as_u64),
                result: text("result"),
            },
            _ => SdkBody::Other,
        };
        SdkMessageFields {
            session_id: text("session_id"),
            cost_so_far: match body {
                SdkBody::Assistant(_) => message.get("total_cost_usd").and_then(Value::as_f64),
                _ => None,
            },
            body,
        }
    }
}

impl<'a> Blocks<'a> {
    /// The blocks, in order.
    pub fn iter(&self) -> impl Iterator<Item = ContentBlock<'a>> + 'a {
        self.0.iter().map(|block| match block["type"].as_str() {
            Some("text") => ContentBlock::Text(block["text"].as_str().unwrap_or_default()),
            Some("thinking") => {
                ContentBlock::Thinking(block["thinking"].as_str().unwrap_or_default())
            }
            Some("tool_use") => ContentBlock::ToolUse {
                name: block["name"].as_str(),
                input: &block["input"],
            },
            Some("tool_result") => ContentBlock::ToolResult {
                text: match &block["content"] {
                    Value::String(s) => s.clone(),
                    Value::Array(parts) => parts
                        .iter()
                        .filter_map(|p| p["text"].as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                    _ => String::new(),
                },
                is_error: block["is_error"] == true,
            },
            _ => ContentBlock::Other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::claude::output::render;
    use crate::agent::claude::HookEventKind;
    use crate::decision::{Answer, Verdict};
    use serde_json::json;

    #[test]
    fn sdk_messages_are_read_here() {
        let init = json!({"type": "system", "subtype": "init", "session_id": "s1",
                          "model": "haiku", "cwd": "/p"});
        let init = SdkMessageFields::of(&init);
        assert_eq!(init.session_id, Some("s1"));
        assert_eq!(
            init.body,
            SdkBody::Init {
                model: Some("haiku"),
                cwd: Some("/p")
            }
        );
        assert_eq!(init.cost_so_far, None);
        let pi = json!({"type": "assistant", "runtime": "pi", "total_cost_usd": 0.5});
        assert_eq!(SdkMessageFields::of(&pi).cost_so_far, Some(0.5));
        let turn = json!({"type": "assistant", "message": {"content": [
            {"type": "text", "text": "hi"},
            {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}},
            {"type": "thinking", "thinking": "hmm"}, {"type": "image"}]}});
        let SdkBody::Assistant(blocks) = SdkMessageFields::of(&turn).body else {
            panic!("an assistant message")
        };
        let blocks: Vec<_> = blocks.iter().collect();
        assert_eq!(blocks[0], ContentBlock::Text("hi"));
        assert_eq!(
            blocks[1],
            ContentBlock::ToolUse {
                name: Some("Bash"),
                input: &json!({"command": "ls"})
            }
        );
        assert_eq!(blocks[2], ContentBlock::Thinking("hmm"));
        assert_eq!(blocks[3], ContentBlock::Other);
        let back = json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "is_error": true,
             "content": [{"type": "text", "text": "no"}, {"type": "text", "text": "such"}]}]}});
        let SdkBody::User(blocks) = SdkMessageFields::of(&back).body else {
            panic!("a user message")
        };
        assert_eq!(
            blocks.iter().collect::<Vec<_>>(),
            [ContentBlock::ToolResult {
                text: "no such".into(),
                is_error: true
            }]
        );
        let result = json!({"type": "result", "total_cost_usd": 0.25, "num_turns": 3,
                            "usage": {"input_tokens": 1}, "result": "done"});
        assert_eq!(
            SdkMessageFields::of(&result).body,
            SdkBody::Result {
                usage: Some(&json!({"input_tokens": 1})),
                total_cost_usd: Some(0.25),
                num_turns: Some(3),
                result: Some("done")
            }
        );
        assert_eq!(SdkMessageFields::of(&json!([1])).body, SdkBody::Other);
    }

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
