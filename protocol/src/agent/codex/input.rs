//! Codex's tool names and inputs, mapped onto Claude Code's for the rules.
//!
//! Codex's inputs are already Claude-like (same event names, the same common
//! fields, `Bash` with `command`, `mcp__server__tool`); only its edit tool,
//! its image viewer and its subagent tools need mapping (the table is in the
//! module doc of [`crate::agent::codex`]).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::patch::{touched_files, Change};
use crate::agent::dialect::{self, ToolMap};
use crate::agent::{absolute_path, reshape};

/// Codex's edit tool.
pub const APPLY_PATCH: &str = "apply_patch";
/// Codex's image viewer, which reads a file.
pub const VIEW_IMAGE: &str = "view_image";
/// The namespace of Codex's subagent tools, glued to the tool name
/// (`collaborationspawn_agent`).
pub const COLLABORATION: &str = "collaboration";

/// Codex's tool-name map: the tools judged as a Claude Code tool by name
/// alone (their inputs are reshaped by [`rule_inputs`]); `apply_patch` and
/// the subagent tools are particular ([`claude_tool_name`]).
pub const TOOLS: ToolMap = &[(VIEW_IMAGE, "Read")];

/// The Claude Code tool a Codex tool is judged as (the log's `mapped_tool`).
/// `apply_patch` (`raw` is its hook input) is judged per file: a patch that
/// only adds files is a `Write`, like each of its files; one that updates,
/// deletes or moves a file is an `Edit`, also when it adds others, since
/// `Edit(path)` rules judge the added files too (as in Claude Code), and a
/// patch that names no file is an `Edit` of none.
pub fn claude_tool_name<'a>(tool: &'a str, raw: &Value) -> Cow<'a, str> {
    if let Some(claude) = dialect::mapped_tool(TOOLS, tool) {
        return Cow::Borrowed(claude);
    }
    Cow::Borrowed(match tool {
        APPLY_PATCH => {
            let patch = raw
                .get("tool_input")
                .and_then(|t| t.get("command"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            let files = touched_files(patch);
            if !files.is_empty() && files.iter().all(|f| f.change.claude_tool() == "Write") {
                "Write"
            } else {
                "Edit"
            }
        }
        t if t.starts_with(COLLABORATION) => "Agent",
        t => t,
    })
}

/// The Claude-shaped inputs the rules judge for a Codex hook input: the
/// input itself, except for the tools that need mapping.
pub fn rule_inputs(raw: &Value) -> Vec<Cow<'_, Value>> {
    let Some(tool) = raw.get("tool_name").and_then(Value::as_str) else {
        return vec![Cow::Borrowed(raw)];
    };
    let event = raw
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let cwd = raw.get("cwd").and_then(Value::as_str);
    let tool_input = raw.get("tool_input");
    let field = |name: &str| tool_input.and_then(|t| t.get(name));
    match tool {
        APPLY_PATCH => {
            let patch = field("command").and_then(Value::as_str).unwrap_or_default();
            let files = touched_files(patch);
            if files.is_empty() {
                // Nothing to place: judged as an edit of no file, which
                // `Edit` rules match and path rules cannot.
                return vec![Cow::Owned(reshape(
                    raw,
                    event,
                    Some(("Edit", Value::Object(Map::new()))),
                ))];
            }
            files
                .into_iter()
                .map(|file| {
                    let mut input = Map::new();
                    input.insert("file_path".into(), absolute_path(cwd, &file.path).into());
                    input.insert("change".into(), file.change.as_str().into());
                    if let (Change::Add, Some(content)) = (file.change, file.content) {
                        input.insert("content".into(), content.into());
                    }
                    Cow::Owned(reshape(
                        raw,
                        event,
                        Some((file.change.claude_tool(), input.into())),
                    ))
                })
                .collect()
        }
        VIEW_IMAGE => {
            let mut input = Map::new();
            if let Some(path) = field("path").and_then(Value::as_str) {
                input.insert("file_path".into(), absolute_path(cwd, path).into());
            }
            vec![Cow::Owned(reshape(
                raw,
                event,
                Some(("Read", input.into())),
            ))]
        }
        t if t.starts_with(COLLABORATION) => {
            let mut input = match tool_input {
                Some(Value::Object(map)) => map.clone(),
                _ => Map::new(),
            };
            for (claude, codex) in [
                ("prompt", "message"),
                ("description", "task_name"),
                ("subagent_type", "agent_type"),
            ] {
                if let Some(value) = field(codex) {
                    input.entry(claude).or_insert_with(|| value.clone());
                }
            }
            vec![Cow::Owned(reshape(
                raw,
                event,
                Some(("Agent", input.into())),
            ))]
        }
        _ => vec![Cow::Borrowed(raw)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pre(tool: &str, input: Value) -> Value {
        json!({"hook_event_name": "PreToolUse", "cwd": "/p", "session_id": "s",
               "tool_name": tool, "tool_input": input, "tool_use_id": "call_1"})
    }

    #[test]
    fn bash_and_mcp_are_judged_as_they_are() {
        for raw in [
            pre("Bash", json!({"command": "ls"})),
            pre("mcp__e2e__touch", json!({"path": "x"})),
        ] {
            let inputs = rule_inputs(&raw);
            assert!(matches!(inputs.as_slice(), [Cow::Borrowed(v)] if **v == raw));
        }
        let stop = json!({"hook_event_name": "Stop", "stop_hook_active": false});
        assert!(matches!(rule_inputs(&stop).as_slice(), [Cow::Borrowed(_)]));
    }

    #[test]
    fn a_patch_is_one_input_per_file() {
        let raw = pre(
            "apply_patch",
            json!({"command": "*** Begin Patch\n*** Add File: new.txt\n+hi\n*** Update File: ../up.txt\n*** Move to: /abs/moved.txt\n*** Delete File: d\n*** End Patch\n"}),
        );
        let inputs: Vec<(Value, Value)> = rule_inputs(&raw)
            .iter()
            .map(|i| (i["tool_name"].clone(), i["tool_input"].clone()))
            .collect();
        assert_eq!(
            inputs,
            [
                (
                    json!("Write"),
                    json!({"file_path": "/p/new.txt", "change": "add", "content": "hi\n"})
                ),
                (
                    json!("Edit"),
                    json!({"file_path": "/up.txt", "change": "move_from"})
                ),
                (
                    json!("Write"),
                    json!({"file_path": "/abs/moved.txt", "change": "move_to"})
                ),
                (
                    json!("Edit"),
                    json!({"file_path": "/p/d", "change": "delete"})
                ),
            ]
        );
        let first = &rule_inputs(&raw)[0];
        assert_eq!(first["session_id"], "s");
        assert_eq!(first["hook_event_name"], "PreToolUse");
    }

    #[test]
    fn a_patch_with_no_file_is_an_edit_of_nothing() {
        let raw = pre("apply_patch", json!({"command": "garbage"}));
        let inputs = rule_inputs(&raw);
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0]["tool_name"], "Edit");
        assert_eq!(inputs[0]["tool_input"], json!({}));
    }

    #[test]
    fn images_are_reads_and_subagents_are_agents() {
        let raw = pre("view_image", json!({"path": "img/a.png"}));
        assert_eq!(
            rule_inputs(&raw)[0]["tool_input"],
            json!({"file_path": "/p/img/a.png"})
        );
        let raw = pre(
            "collaborationspawn_agent",
            json!({"task_name": "sub1", "message": "do it", "agent_type": "explorer"}),
        );
        let input = &rule_inputs(&raw)[0];
        assert_eq!(input["tool_name"], "Agent");
        assert_eq!(
            input["tool_input"],
            json!({"task_name": "sub1", "message": "do it", "agent_type": "explorer",
                   "prompt": "do it", "description": "sub1", "subagent_type": "explorer"})
        );
        let none = json!({});
        assert_eq!(claude_tool_name("collaborationwait_agent", &none), "Agent");
        assert_eq!(claude_tool_name("Bash", &none), "Bash");
        assert_eq!(claude_tool_name("apply_patch", &none), "Edit");
    }

    #[test]
    fn a_patch_is_named_as_the_tool_its_files_are_judged_as() {
        let named = |patch: &str| {
            let raw = pre("apply_patch", json!({ "command": patch }));
            claude_tool_name("apply_patch", &raw).into_owned()
        };
        let add = "*** Begin Patch\n*** Add File: a.txt\n+a\n*** End Patch\n";
        let update = "*** Begin Patch\n*** Update File: b.txt\n@@\n-b\n+c\n*** End Patch\n";
        let both =
            "*** Begin Patch\n*** Add File: a.txt\n+a\n*** Delete File: b.txt\n*** End Patch\n";
        let moved = "*** Begin Patch\n*** Update File: b.txt\n*** Move to: c.txt\n*** End Patch\n";
        assert_eq!(named(add), "Write");
        assert_eq!(named(update), "Edit");
        assert_eq!(named(both), "Edit");
        assert_eq!(named(moved), "Edit");
        assert_eq!(named("not a patch"), "Edit");
    }
}
