//! Gemini's tool names and inputs, mapped onto Claude Code's for the rules
//! (the table is in the module doc of [`crate::agent::gemini`]).

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::kind::EVENTS;
use crate::agent::claude::HookEventKind;
use crate::agent::dialect::{self, ToolMap};
use crate::agent::{absolute_path, reshape};

/// The prefix of Gemini's MCP tool names (`mcp_<server>_<tool>`).
pub const MCP_PREFIX: &str = "mcp_";

/// Gemini's tool-name map: its built-in tools and the Claude Code tool each
/// is judged as (how each input is reshaped is [`rule_inputs`]'s).
pub const TOOLS: ToolMap = &[
    ("run_shell_command", "Bash"),
    ("replace", "Edit"),
    ("write_file", "Write"),
    ("read_file", "Read"),
    ("read_many_files", "Read"),
    ("glob", "Glob"),
    ("grep_search", "Grep"),
    ("list_directory", "LS"),
    ("web_fetch", "WebFetch"),
    ("google_web_search", "WebSearch"),
    ("write_todos", "TodoWrite"),
    ("activate_skill", "Skill"),
    ("exit_plan_mode", "ExitPlanMode"),
    ("invoke_agent", "Agent"),
];

/// The Claude Code tool a Gemini tool is judged as: [`TOOLS`]'s name,
/// `mcp__<server>__<tool>` for an MCP tool, else its own. `raw` is the hook
/// input (its `mcp_context` names an MCP tool's server and tool exactly).
pub fn claude_tool_name<'a>(tool: &'a str, raw: &Value) -> Cow<'a, str> {
    if let Some(claude) = dialect::mapped_tool(TOOLS, tool) {
        return Cow::Borrowed(claude);
    }
    if tool.starts_with(MCP_PREFIX) {
        return mcp_name(tool, raw).map_or(Cow::Borrowed(tool), Cow::Owned);
    }
    Cow::Borrowed(tool)
}

/// `mcp__<server>__<tool>` for a Gemini MCP tool: from `mcp_context` when
/// it names both, else by splitting after `mcp_` at the first `_`, which is
/// how Gemini itself reads its names.
fn mcp_name(tool: &str, raw: &Value) -> Option<String> {
    let context = raw.get("mcp_context");
    let named = |key: &str| {
        context
            .and_then(|c| c.get(key))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    if let (Some(server), Some(name)) = (named("server_name"), named("tool_name")) {
        return Some(format!("mcp__{server}__{name}"));
    }
    let (server, name) = tool.strip_prefix(MCP_PREFIX)?.split_once('_')?;
    (!server.is_empty() && !name.is_empty()).then(|| format!("mcp__{server}__{name}"))
}

/// The Claude-shaped inputs the rules judge for a Gemini hook input: its
/// event under hookd's name (the model events keep theirs), its tool
/// mapped, Stop's `last_assistant_message` from AfterAgent's
/// `prompt_response`.
pub fn rule_inputs(raw: &Value) -> Vec<Cow<'_, Value>> {
    let (kind, event) = dialect::rules_event(EVENTS, raw);
    let Some(tool) = raw.get("tool_name").and_then(Value::as_str) else {
        return vec![Cow::Owned(event_input(raw, kind, event))];
    };
    let claude = claude_tool_name(tool, raw);
    let cwd = raw.get("cwd").and_then(Value::as_str);
    let original = match raw.get("tool_input") {
        Some(Value::Object(map)) => map.clone(),
        _ => Map::new(),
    };
    tool_inputs(tool, original, cwd)
        .into_iter()
        .map(|input| Cow::Owned(reshape(raw, event, Some((&claude, input.into())))))
        .collect()
}

/// The input of a hook without a tool, under `event` (of `kind`): Stop's
/// `last_assistant_message` is AfterAgent's `prompt_response`.
fn event_input(raw: &Value, kind: HookEventKind, event: &str) -> Value {
    let mut input = reshape(raw, event, None);
    if kind == HookEventKind::Stop {
        if let (Some(response), Value::Object(map)) = (raw.get("prompt_response"), &mut input) {
            map.entry("last_assistant_message")
                .or_insert_with(|| response.clone());
        }
    }
    input
}

/// A Gemini tool's input (`original`) as the Claude Code tool's inputs it
/// is judged as: fields renamed, paths made absolute against `cwd`, one
/// input per file of `read_many_files` and per URL of `web_fetch`.
fn tool_inputs(
    tool: &str,
    original: Map<String, Value>,
    cwd: Option<&str>,
) -> Vec<Map<String, Value>> {
    match tool {
        "run_shell_command" => vec![renamed(
            &original,
            &[("is_background", "run_in_background")],
        )],
        "replace" => {
            let mut input = renamed(&original, &[("allow_multiple", "replace_all")]);
            absolute(&mut input, cwd, "file_path", "file_path");
            vec![input]
        }
        "write_file" | "read_file" => {
            let mut input = original.clone();
            absolute(&mut input, cwd, "file_path", "file_path");
            vec![input]
        }
        "read_many_files" => read_many_inputs(&original, cwd),
        "glob" | "grep_search" | "list_directory" => {
            let mut input = original.clone();
            absolute(&mut input, cwd, "dir_path", "path");
            vec![input]
        }
        "web_fetch" => fetch_inputs(&original),
        "activate_skill" => vec![renamed(&original, &[("name", "skill")])],
        "invoke_agent" => vec![renamed(&original, &[("agent_name", "subagent_type")])],
        _ => vec![original],
    }
}

/// `read_many_files`: one `Read` input per `include` entry, made absolute
/// (one empty input when it names none).
fn read_many_inputs(original: &Map<String, Value>, cwd: Option<&str>) -> Vec<Map<String, Value>> {
    let entries: Vec<&str> = original
        .get("include")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if entries.is_empty() {
        vec![Map::new()]
    } else {
        entries
            .into_iter()
            .map(|entry| {
                let mut input = Map::new();
                input.insert("file_path".into(), absolute_path(cwd, entry).into());
                input
            })
            .collect()
    }
}

/// `web_fetch`: one `WebFetch` input per URL it fetches (its `url`, those
/// of its prompt, and the raw URL of a GitHub page), each with the prompt
/// (one without a URL when there is none).
fn fetch_inputs(original: &Map<String, Value>) -> Vec<Map<String, Value>> {
    let text = |key: &str| original.get(key).and_then(Value::as_str);
    let mut urls: Vec<String> = Vec::new();
    for url in text("url")
        .into_iter()
        .chain(prompt_urls(text("prompt").unwrap_or_default()))
    {
        for url in std::iter::once(url.to_string()).chain(github_raw(url)) {
            if !urls.contains(&url) {
                urls.push(url);
            }
        }
    }
    let prompt = original.get("prompt").cloned();
    let with_url = |url: Option<String>| {
        let mut input = Map::new();
        if let Some(url) = url {
            input.insert("url".into(), url.into());
        }
        if let Some(prompt) = &prompt {
            input.insert("prompt".into(), prompt.clone());
        }
        input
    };
    if urls.is_empty() {
        vec![with_url(None)]
    } else {
        urls.into_iter().map(|u| with_url(Some(u))).collect()
    }
}

/// `input` plus Claude Code's name for each of Gemini's fields in `pairs`
/// (Gemini's is kept too).
fn renamed(input: &Map<String, Value>, pairs: &[(&str, &str)]) -> Map<String, Value> {
    let mut out = input.clone();
    for (gemini, claude) in pairs {
        if let Some(value) = input.get(*gemini) {
            out.entry(*claude).or_insert_with(|| value.clone());
        }
    }
    out
}

/// Sets `to` to the absolute form of the path in `from`, when there is one.
fn absolute(input: &mut Map<String, Value>, cwd: Option<&str>, from: &str, to: &str) {
    if let Some(path) = input.get(from).and_then(Value::as_str) {
        let path = absolute_path(cwd, path);
        input.insert(to.into(), path.into());
    }
}

/// The URLs of a `web_fetch` prompt, as Gemini's `parsePrompt` finds them:
/// every whitespace-separated word holding `://` (Gemini refuses the call
/// unless each is a valid http(s) URL).
pub fn prompt_urls(prompt: &str) -> impl Iterator<Item = &str> {
    prompt
        .split_whitespace()
        .filter(|word| word.contains("://"))
}

/// The URL Gemini really fetches for a GitHub `blob` page
/// (`convertGithubUrlToRaw`): `https://github.com/o/r/blob/b/f` →
/// `https://raw.githubusercontent.com/o/r/b/f`.
fn github_raw(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let (host, path) = rest.split_once('/')?;
    if !host.eq_ignore_ascii_case("github.com") {
        return None;
    }
    let mut parts = path.splitn(4, '/');
    let (owner, repo, blob, tail) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    (blob == "blob").then(|| format!("{scheme}://raw.githubusercontent.com/{owner}/{repo}/{tail}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn before(tool: &str, input: Value) -> Value {
        json!({"hook_event_name": "BeforeTool", "cwd": "/p", "session_id": "s",
               "timestamp": "t", "tool_name": tool, "tool_input": input})
    }

    fn tools(raw: &Value) -> Vec<(Value, Value)> {
        rule_inputs(raw)
            .iter()
            .map(|i| {
                assert_eq!(i["hook_event_name"], "PreToolUse");
                (i["tool_name"].clone(), i["tool_input"].clone())
            })
            .collect()
    }

    #[test]
    fn shell_and_files_become_claude_tools_with_absolute_paths() {
        assert_eq!(
            tools(&before(
                "run_shell_command",
                json!({"command": "ls", "is_background": false})
            )),
            [(
                json!("Bash"),
                json!({"command": "ls", "is_background": false, "run_in_background": false})
            )]
        );
        assert_eq!(
            tools(&before(
                "replace",
                json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "b"})
            )),
            [(
                json!("Edit"),
                json!({"file_path": "/p/src/a.rs", "old_string": "a", "new_string": "b"})
            )]
        );
        assert_eq!(
            tools(&before(
                "write_file",
                json!({"file_path": "../x", "content": "c"})
            )),
            [(json!("Write"), json!({"file_path": "/x", "content": "c"}))]
        );
        assert_eq!(
            tools(&before(
                "read_many_files",
                json!({"include": [".env", "src/*.rs"]})
            )),
            [
                (json!("Read"), json!({"file_path": "/p/.env"})),
                (json!("Read"), json!({"file_path": "/p/src/*.rs"}))
            ]
        );
        assert_eq!(
            tools(&before("list_directory", json!({"dir_path": "sub"}))),
            [(json!("LS"), json!({"dir_path": "sub", "path": "/p/sub"}))]
        );
        assert_eq!(
            tools(&before("glob", json!({"pattern": "*.rs"}))),
            [(json!("Glob"), json!({"pattern": "*.rs"}))]
        );
    }

    #[test]
    fn a_fetch_is_one_input_per_url() {
        let raw = before(
            "web_fetch",
            json!({"prompt": "Compare https://a.example/x and http://b.example:8080/y, then https://github.com/o/r/blob/main/f.md"}),
        );
        let urls: Vec<Value> = tools(&raw)
            .into_iter()
            .map(|(_, i)| i["url"].clone())
            .collect();
        assert_eq!(
            urls,
            [
                json!("https://a.example/x"),
                json!("http://b.example:8080/y,"),
                json!("https://github.com/o/r/blob/main/f.md"),
                json!("https://raw.githubusercontent.com/o/r/main/f.md"),
            ]
        );
        let raw = before("web_fetch", json!({"prompt": "no url here"}));
        assert_eq!(
            tools(&raw),
            [(json!("WebFetch"), json!({"prompt": "no url here"}))]
        );
        assert_eq!(github_raw("https://github.com/o/r"), None);
        assert_eq!(github_raw("https://gitlab.com/o/r/blob/b/f"), None);
    }

    #[test]
    fn mcp_names_prefer_the_context() {
        let raw = json!({"mcp_context": {"server_name": "my_server", "tool_name": "do_it"}});
        assert_eq!(
            claude_tool_name("mcp_my_server_do_it", &raw),
            "mcp__my_server__do_it"
        );
        assert_eq!(
            claude_tool_name("mcp_e2e_touch", &json!({})),
            "mcp__e2e__touch"
        );
        assert_eq!(claude_tool_name("mcp_", &json!({})), "mcp_");
        assert_eq!(claude_tool_name("mcp_x", &json!({})), "mcp_x");
        assert_eq!(claude_tool_name("some_tool", &json!({})), "some_tool");
    }

    #[test]
    fn events_take_hookd_names_and_stop_gets_its_last_message() {
        let raw = json!({"hook_event_name": "AfterAgent", "prompt": "p",
                         "prompt_response": "done", "stop_hook_active": true});
        let input = &rule_inputs(&raw)[0];
        assert_eq!(input["hook_event_name"], "Stop");
        assert_eq!(input["last_assistant_message"], "done");
        assert_eq!(input["stop_hook_active"], true);
        let raw = json!({"hook_event_name": "BeforeModel", "llm_request": {}});
        assert_eq!(rule_inputs(&raw)[0]["hook_event_name"], "BeforeModel");
    }
}
