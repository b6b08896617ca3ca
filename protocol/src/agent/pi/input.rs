//! Pi's tool names and inputs, mapped onto Claude Code's for the rules
//! (the table is in the module doc of [`crate::agent::pi`]).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{EVENTS, TOOLS};
use crate::agent::dialect;
use crate::agent::{absolute_path, reshape};

/// The Claude Code tool a Pi tool is judged as: [`TOOLS`]'s name, else its
/// own.
pub fn claude_tool_name(tool: &str) -> &str {
    dialect::mapped_tool(TOOLS, tool).unwrap_or(tool)
}

/// The Claude-shaped input the rules judge for an input the extension
/// relayed: the event under hookd's name, the tool mapped.
pub fn rule_inputs(raw: &Value) -> Vec<Cow<'_, Value>> {
    let (_, event) = dialect::rules_event(EVENTS, raw);
    let Some(tool) = raw.get("tool_name").and_then(Value::as_str) else {
        return vec![Cow::Owned(reshape(raw, event, None))];
    };
    let cwd = raw.get("cwd").and_then(Value::as_str);
    let mut input = match raw.get("tool_input") {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    let to = match tool {
        "edit" | "write" | "read" => Some("file_path"),
        "grep" | "find" | "ls" => Some("path"),
        _ => None,
    };
    if let Some(to) = to {
        if let Some(path) = input.get("path").and_then(Value::as_str) {
            let path = absolute_path(cwd, path);
            input.insert(to.into(), path.into());
        }
    }
    vec![Cow::Owned(reshape(
        raw,
        event,
        Some((claude_tool_name(tool), input.into())),
    ))]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(tool: &str, input: Value) -> Value {
        let raw = json!({"hook_event_name": "tool_call", "cwd": "/p", "session_id": "s",
                         "tool_name": tool, "tool_input": input, "tool_use_id": "t1"});
        let out = rule_inputs(&raw);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["hook_event_name"], "PreToolUse");
        json!([out[0]["tool_name"], out[0]["tool_input"]])
    }

    #[test]
    fn tools_become_claude_tools_with_absolute_paths() {
        assert_eq!(
            call("bash", json!({"command": "ls"})),
            json!(["Bash", {"command": "ls"}])
        );
        assert_eq!(
            call("edit", json!({"path": "src/a.rs", "edits": []})),
            json!(["Edit", {"path": "src/a.rs", "file_path": "/p/src/a.rs", "edits": []}])
        );
        assert_eq!(
            call("write", json!({"path": "../x", "content": "c"})),
            json!(["Write", {"path": "../x", "file_path": "/x", "content": "c"}])
        );
        assert_eq!(
            call("read", json!({"path": "/etc/passwd"})),
            json!(["Read", {"path": "/etc/passwd", "file_path": "/etc/passwd"}])
        );
        assert_eq!(
            call("ls", json!({"path": "sub"})),
            json!(["LS", {"path": "/p/sub"}])
        );
        assert_eq!(call("custom", json!({})), json!(["custom", {}]));
    }

    #[test]
    fn events_take_hookd_names() {
        let raw = json!({"hook_event_name": "agent_end", "session_id": "s"});
        assert_eq!(rule_inputs(&raw)[0]["hook_event_name"], "Stop");
    }
}
