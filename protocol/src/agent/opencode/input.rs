//! OpenCode's tool names and inputs, mapped onto Claude Code's for the
//! rules (the table is in the module doc of [`crate::agent::opencode`]).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{EVENTS, TOOLS};
use crate::agent::codex::patch::{touched_files, Change};
use crate::agent::dialect;
use crate::agent::{absolute_path, reshape};

/// The Claude Code tool an OpenCode tool is judged as: [`TOOLS`]'s name,
/// `mcp__<server>__<tool>` for a name holding `_` that is not built in,
/// else its own.
pub fn claude_tool_name(tool: &str) -> Cow<'_, str> {
    if let Some(claude) = dialect::mapped_tool(TOOLS, tool) {
        return Cow::Borrowed(claude);
    }
    match tool.split_once('_') {
        Some((server, name)) if !server.is_empty() && !name.is_empty() => {
            Cow::Owned(format!("mcp__{server}__{name}"))
        }
        _ => Cow::Borrowed(tool),
    }
}

/// The Claude-shaped inputs the rules judge for an input the plugin
/// relayed: the event under hookd's name, the tool mapped, one input per
/// file of an `apply_patch`.
pub fn rule_inputs(raw: &Value) -> Vec<Cow<'_, Value>> {
    let (_, event) = dialect::rules_event(EVENTS, raw);
    let Some(tool) = raw.get("tool_name").and_then(Value::as_str) else {
        return vec![Cow::Owned(reshape(raw, event, None))];
    };
    let claude = claude_tool_name(tool);
    let cwd = raw.get("cwd").and_then(Value::as_str);
    let original = match raw.get("tool_input") {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    if tool == "apply_patch" {
        let patch = original
            .get("patchText")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let files = touched_files(patch);
        if files.is_empty() {
            return vec![Cow::Owned(reshape(
                raw,
                event,
                Some(("Edit", Value::Object(Map::new()))),
            ))];
        }
        return files
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
            .collect();
    }
    let input = tool_input(tool, original, cwd);
    vec![Cow::Owned(reshape(
        raw,
        event,
        Some((&claude, input.into())),
    ))]
}

/// An OpenCode tool's arguments under Claude Code's field names (OpenCode's
/// are kept too), paths made absolute against `cwd`.
fn tool_input(tool: &str, original: Map<String, Value>, cwd: Option<&str>) -> Map<String, Value> {
    let mut input = original;
    let mut rename = |from: &str, to: &str| {
        if let Some(value) = input.get(from).cloned() {
            input.entry(to).or_insert(value);
        }
    };
    if tool == "edit" {
        rename("oldString", "old_string");
        rename("newString", "new_string");
        rename("replaceAll", "replace_all");
    }
    let path_key = match tool {
        "edit" | "write" | "read" => Some(("filePath", "file_path")),
        "glob" | "grep" | "list" => Some(("path", "path")),
        _ => None,
    };
    if let Some((from, to)) = path_key {
        if let Some(path) = input.get(from).and_then(Value::as_str) {
            let path = absolute_path(cwd, path);
            input.insert(to.into(), path.into());
        }
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn before(tool: &str, args: Value) -> Value {
        json!({"hook_event_name": "tool.execute.before", "cwd": "/p", "session_id": "ses_1",
               "tool_name": tool, "tool_input": args, "tool_use_id": "toolu_1"})
    }

    fn tools(raw: &Value) -> Vec<(Value, Value)> {
        rule_inputs(raw)
            .iter()
            .map(|i| {
                assert_eq!(i["hook_event_name"], "PreToolUse");
                assert_eq!(i["session_id"], "ses_1");
                (i["tool_name"].clone(), i["tool_input"].clone())
            })
            .collect()
    }

    #[test]
    fn tools_become_claude_tools_with_absolute_paths() {
        let bash = tools(&before(
            "bash",
            json!({"command": "rm -rf x", "description": "d"}),
        ));
        assert_eq!(
            bash,
            [(
                json!("Bash"),
                json!({"command": "rm -rf x", "description": "d"})
            )]
        );
        let edit = tools(&before(
            "edit",
            json!({"filePath": "src/a.rs", "oldString": "a", "newString": "b"}),
        ));
        assert_eq!(edit[0].0, "Edit");
        assert_eq!(edit[0].1["file_path"], "/p/src/a.rs");
        assert_eq!(edit[0].1["old_string"], "a");
        assert_eq!(edit[0].1["new_string"], "b");
        let write = tools(&before(
            "write",
            json!({"filePath": "/abs/x", "content": "c"}),
        ));
        assert_eq!(write[0].0, "Write");
        assert_eq!(write[0].1["file_path"], "/abs/x");
        let read = tools(&before("read", json!({"filePath": ".env"})));
        assert_eq!(
            (read[0].0.clone(), read[0].1["file_path"].clone()),
            (json!("Read"), json!("/p/.env"))
        );
        let fetch = tools(&before(
            "webfetch",
            json!({"url": "https://evil.example/x", "format": "text"}),
        ));
        assert_eq!(fetch[0].0, "WebFetch");
        assert_eq!(fetch[0].1["url"], "https://evil.example/x");
        let list = tools(&before("list", json!({"path": "sub"})));
        assert_eq!(list[0], (json!("LS"), json!({"path": "/p/sub"})));
    }

    #[test]
    fn a_patch_is_one_input_per_file() {
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+hi\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** End Patch";
        let inputs = tools(&before("apply_patch", json!({"patchText": patch})));
        assert_eq!(inputs.len(), 2);
        assert_eq!(inputs[0].0, "Write");
        assert_eq!(inputs[0].1["file_path"], "/p/new.txt");
        assert_eq!(inputs[1].0, "Edit");
        assert_eq!(inputs[1].1["file_path"], "/p/src/a.rs");
    }

    #[test]
    fn mcp_and_unknown_names() {
        assert_eq!(claude_tool_name("e2e_touch"), "mcp__e2e__touch");
        assert_eq!(claude_tool_name("my-server_do_it"), "mcp__my-server__do_it");
        assert_eq!(claude_tool_name("custom"), "custom");
        assert_eq!(claude_tool_name("_x"), "_x");
        assert_eq!(claude_tool_name("bash"), "Bash");
    }

    #[test]
    fn events_take_hookd_names() {
        let raw = json!({"hook_event_name": "session.idle", "session_id": "s"});
        assert_eq!(rule_inputs(&raw)[0]["hook_event_name"], "Stop");
        let raw = json!({"hook_event_name": "something.new"});
        assert_eq!(rule_inputs(&raw)[0]["hook_event_name"], "something.new");
    }
}
