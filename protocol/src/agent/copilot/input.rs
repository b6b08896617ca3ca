//! Copilot's tool names and inputs (Claude format), mapped onto Claude
//! Code's for the rules (the table is in the module doc of
//! [`crate::agent::copilot`]).

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::agent::codex::patch::touched_files;
use crate::agent::dialect::{self, ToolMap};
use crate::agent::{absolute_path, reshape};

/// Copilot's patch tool (offered to OpenAI models instead of `create` /
/// `str_replace`).
pub const APPLY_PATCH: &str = "apply_patch";

/// Copilot's tool-name map: the tools its Claude-format input leaves in
/// its own words, and the Claude Code tool each is judged as. `Bash`,
/// `Write`, `Read` and `WebFetch` already arrive in Claude Code's.
pub const TOOLS: ToolMap = &[
    ("str_replace", "Edit"),
    ("edit", "Edit"),
    ("create", "Write"),
    ("view", "Read"),
    ("web_fetch", "WebFetch"),
    (APPLY_PATCH, "Edit"),
    ("glob", "Glob"),
    ("rg", "Grep"),
    ("task", "Agent"),
];

/// The Claude Code tool a Copilot tool is judged as: [`TOOLS`]'s name, else
/// its own.
pub fn claude_tool_name<'a>(tool: &'a str, _raw: &Value) -> Cow<'a, str> {
    dialect::mapped_tool(TOOLS, tool).map_or(Cow::Borrowed(tool), Cow::Borrowed)
}

/// The Claude-shaped inputs the rules judge for a Copilot hook input: the
/// input itself with its tool renamed and its fields in Claude Code's
/// words (`path` → absolute `file_path`, `file_text` → `content`,
/// `old_str` / `new_str` → `old_string` / `new_string`), one `Edit` per
/// file of an `apply_patch`.
pub fn rule_inputs(raw: &Value) -> Vec<Cow<'_, Value>> {
    let Some(tool) = raw.get("tool_name").and_then(Value::as_str) else {
        return vec![Cow::Borrowed(raw)];
    };
    let claude = claude_tool_name(tool, raw);
    let original = match raw.get("tool_input") {
        Some(Value::Object(map)) => map.clone(),
        Some(Value::String(patch)) => {
            let mut map = Map::new();
            map.insert("input".into(), patch.clone().into());
            map
        }
        _ => Map::new(),
    };
    // A tool already in Claude Code's words with nothing to rename (`Bash`,
    // `WebFetch`) is judged as it came.
    if claude == tool && !original.contains_key("path") {
        return vec![Cow::Borrowed(raw)];
    }
    let event = raw
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let cwd = raw.get("cwd").and_then(Value::as_str);
    tool_inputs(tool, original, cwd)
        .into_iter()
        .map(|input| Cow::Owned(reshape(raw, event, Some((&claude, input.into())))))
        .collect()
}

/// One Copilot tool input as the Claude Code inputs it is judged as.
fn tool_inputs(
    tool: &str,
    mut input: Map<String, Value>,
    cwd: Option<&str>,
) -> Vec<Map<String, Value>> {
    if tool == APPLY_PATCH {
        return patch_inputs(&input, cwd);
    }
    for (own, claude) in [
        ("file_text", "content"),
        ("old_str", "old_string"),
        ("new_str", "new_string"),
    ] {
        if let Some(value) = input.get(own).cloned() {
            input.entry(claude).or_insert(value);
        }
    }
    if let Some(path) = input.get("path").and_then(Value::as_str) {
        let path = absolute_path(cwd, path);
        input.insert("file_path".into(), path.into());
    }
    vec![input]
}

/// `apply_patch`: one input per file the patch touches (its text is the
/// whole `tool_input` or its `input` / `patch` field); one input with no
/// `file_path` when it names none.
fn patch_inputs(input: &Map<String, Value>, cwd: Option<&str>) -> Vec<Map<String, Value>> {
    let patch = ["input", "patch", "command"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .unwrap_or_default();
    let files = touched_files(patch);
    if files.is_empty() {
        return vec![input.clone()];
    }
    files
        .into_iter()
        .map(|f| {
            let mut one = Map::new();
            one.insert("file_path".into(), absolute_path(cwd, &f.path).into());
            if let Some(content) = f.content {
                one.insert("content".into(), content.into());
            }
            one
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn captured(name: &str) -> Value {
        let path = format!(
            "{}/../tests/fixtures/agents/copilot/captured/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    #[test]
    fn the_captured_shell_call_is_judged_as_it_came() {
        let raw = captured("PreToolUse");
        let inputs = rule_inputs(&raw);
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0].as_ref(), &raw);
        assert_eq!(inputs[0]["tool_name"], "Bash");
        assert_eq!(inputs[0]["tool_input"]["command"], "echo hello > out.txt");
    }

    #[test]
    fn file_tools_get_claude_fields_and_absolute_paths() {
        let raw = json!({"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/p",
            "tool_name": "str_replace",
            "tool_input": {"path": "src/a.rs", "old_str": "a", "new_str": "b"}});
        let v = rule_inputs(&raw);
        assert_eq!(v[0]["tool_name"], "Edit");
        assert_eq!(v[0]["tool_input"]["file_path"], "/p/src/a.rs");
        assert_eq!(v[0]["tool_input"]["old_string"], "a");
        assert_eq!(v[0]["tool_input"]["new_string"], "b");
        let raw = json!({"hook_event_name": "PreToolUse", "cwd": "/p", "tool_name": "Write",
            "tool_input": {"path": "/p/new.txt", "file_text": "hi\n"}});
        let v = rule_inputs(&raw);
        assert_eq!(v[0]["tool_name"], "Write");
        assert_eq!(v[0]["tool_input"]["file_path"], "/p/new.txt");
        assert_eq!(v[0]["tool_input"]["content"], "hi\n");
        let raw = json!({"hook_event_name": "PreToolUse", "cwd": "/p", "tool_name": "Read",
            "tool_input": {"path": "../etc/x"}});
        assert_eq!(rule_inputs(&raw)[0]["tool_input"]["file_path"], "/etc/x");
    }

    #[test]
    fn a_patch_is_one_edit_per_file() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: src/b.rs\n@@\n-a\n+b\n*** End Patch\n";
        let raw = json!({"hook_event_name": "PreToolUse", "cwd": "/p", "tool_name": "apply_patch",
            "tool_input": patch});
        let v = rule_inputs(&raw);
        let files: Vec<_> = v
            .iter()
            .map(|i| i["tool_input"]["file_path"].clone())
            .collect();
        assert_eq!(files, [json!("/p/a.txt"), json!("/p/src/b.rs")]);
        assert!(v.iter().all(|i| i["tool_name"] == "Edit"));
    }

    #[test]
    fn web_fetch_keeps_its_url() {
        let raw = json!({"hook_event_name": "PreToolUse", "cwd": "/p", "tool_name": "WebFetch",
            "tool_input": {"url": "https://example.com/x"}});
        assert_eq!(rule_inputs(&raw)[0].as_ref(), &raw);
    }
}
