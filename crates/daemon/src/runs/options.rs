//! A `run` request's options, translated into the Agent SDK's (camelCase,
//! on top of the provider's), and the choices made from them before the
//! child starts. Pure but for checking that `cwd` is a directory: every
//! refusal names the option and what is accepted, and is unit-tested here.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::Refused;
use crate::protocol::RunOptions;

/// Run options the protocol knows (`run.options`), for error messages.
const KNOWN_OPTIONS: &[&str] = &[
    "model",
    "cwd",
    "max_turns",
    "max_budget_usd",
    "allowed_tools",
    "disallowed_tools",
    "permission_mode",
    "resume",
    "setting_sources",
    "mcp_servers",
];

/// The SDK's permission modes (`options.permission_mode`, and `hookd run
/// --permission-mode`).
pub const PERMISSION_MODES: [&str; 6] = [
    "default",
    "acceptEdits",
    "bypassPermissions",
    "plan",
    "dontAsk",
    "auto",
];

/// Turns the protocol's run options into SDK options (camelCase) on top of
/// the provider's; returns the cwd, when one was given. Errors name the
/// option.
pub(super) fn sdk_options(
    run: &RunOptions,
    options: &mut Map<String, Value>,
) -> Result<Option<PathBuf>, Refused> {
    if let Some(name) = run.unknown.keys().next() {
        return Err(Refused::invalid(format!(
            "options.{name}: not a run option; known: {}",
            KNOWN_OPTIONS.join(", ")
        )));
    }
    let mut set = |key: &str, value: Value| {
        options.insert(key.into(), value);
    };
    if let Some(model) = &run.model {
        set("model", model.clone().into());
    }
    if let Some(turns) = run.max_turns {
        set("maxTurns", turns.into());
    }
    if let Some(budget) = run.max_budget_usd {
        if !(budget.is_finite() && budget > 0.0) {
            return Err(Refused::invalid(
                "options.max_budget_usd: must be a positive number",
            ));
        }
        set("maxBudgetUsd", budget.into());
    }
    if !run.allowed_tools.is_empty() {
        set("allowedTools", run.allowed_tools.clone().into());
    }
    if !run.disallowed_tools.is_empty() {
        set("disallowedTools", run.disallowed_tools.clone().into());
    }
    if let Some(mode) = &run.permission_mode {
        if !PERMISSION_MODES.contains(&mode.as_str()) {
            return Err(Refused::invalid(format!(
                "options.permission_mode: `{mode}`; expected one of {}",
                PERMISSION_MODES.join(", ")
            )));
        }
        set("permissionMode", mode.clone().into());
        // The SDK wants this second switch; asking for the mode is the
        // caller's explicit choice.
        if mode == "bypassPermissions" {
            set("allowDangerouslySkipPermissions", true.into());
        }
    }
    if let Some(resume) = &run.resume {
        set("resume", resume.clone().into());
    }
    if let Some(sources) = &run.setting_sources {
        let unique: HashSet<&str> = sources.iter().map(String::as_str).collect();
        if let Some(bad) = unique
            .iter()
            .find(|s| !["user", "project", "local"].contains(s))
        {
            return Err(Refused::invalid(format!(
                "options.setting_sources: `{bad}`; expected user, project or local"
            )));
        }
        set("settingSources", sources.clone().into());
    }
    if let Some(servers) = &run.mcp_servers {
        for (name, server) in servers {
            let kind = server
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("stdio");
            if !server.is_object() || !["stdio", "sse", "http"].contains(&kind) {
                return Err(Refused::invalid(format!(
                    "options.mcp_servers.{name}: must be a stdio, sse or http server configuration \
                     (in-process SDK servers cannot cross a process boundary)"
                )));
            }
        }
        set("mcpServers", Value::Object(servers.clone()));
    }
    match &run.cwd {
        None => Ok(None),
        Some(cwd) => {
            let path = PathBuf::from(cwd);
            if !path.is_absolute() {
                return Err(Refused::invalid(format!(
                    "options.cwd: `{cwd}` is not an absolute path"
                )));
            }
            if !path.is_dir() {
                return Err(Refused::invalid(format!(
                    "options.cwd: {cwd} is not a directory"
                )));
            }
            Ok(Some(path))
        }
    }
}

/// The run's session id, known before the SDK starts so that copies of
/// the run's hooks can be told from other sessions' (see
/// [`Runs::recognise_copy`]): the session being resumed, else a new id
/// given to the SDK as its `sessionId`.
pub(super) fn choose_session(options: &mut Map<String, Value>) -> String {
    if let Some(resume) = options.get("resume").and_then(Value::as_str) {
        return resume.to_string();
    }
    let id = crate::event::new_id().to_string();
    options.insert("sessionId".into(), id.clone().into());
    id
}

/// Whether the adapter registers `canUseTool` for a run with these SDK
/// options: always but in `bypassPermissions` mode, where the SDK never
/// consults it (`adapter/adapter.mjs` makes the same choice).
pub(super) fn registers_can_use_tool(options: &Map<String, Value>) -> bool {
    options.get("permissionMode").and_then(Value::as_str) != Some("bypassPermissions")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorCode;
    use serde_json::json;

    fn options(json: Value) -> RunOptions {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn run_options_become_sdk_options() {
        let mut out = Map::new();
        out.insert("model".into(), "provider-model".into());
        let cwd = sdk_options(
            &options(json!({
                "model": "m", "max_turns": 3, "max_budget_usd": 0.5,
                "allowed_tools": ["Read"], "disallowed_tools": ["Bash(rm:*)"],
                "permission_mode": "bypassPermissions", "resume": "s",
                "setting_sources": [], "cwd": "/",
                "mcp_servers": {"x": {"command": "srv"}}
            })),
            &mut out,
        )
        .unwrap();
        assert_eq!(cwd, Some(PathBuf::from("/")));
        assert_eq!(
            Value::Object(out),
            json!({
                "model": "m", "maxTurns": 3, "maxBudgetUsd": 0.5,
                "allowedTools": ["Read"], "disallowedTools": ["Bash(rm:*)"],
                "permissionMode": "bypassPermissions", "allowDangerouslySkipPermissions": true,
                "resume": "s", "settingSources": [], "mcpServers": {"x": {"command": "srv"}}
            })
        );
    }

    #[test]
    fn bad_run_options_are_refused_by_name() {
        let cases = [
            (json!({"max_turn": 3}), "options.max_turn: not a run option"),
            (
                json!({"permission_mode": "yolo"}),
                "options.permission_mode: `yolo`",
            ),
            (
                json!({"setting_sources": ["team"]}),
                "options.setting_sources: `team`",
            ),
            (
                json!({"cwd": "relative"}),
                "options.cwd: `relative` is not an absolute",
            ),
            (
                json!({"cwd": "/nonexistent/dir"}),
                "options.cwd: /nonexistent/dir is not a directory",
            ),
            (json!({"max_budget_usd": -1}), "options.max_budget_usd"),
            (
                json!({"mcp_servers": {"a": {"type": "sdk"}}}),
                "options.mcp_servers.a",
            ),
        ];
        for (json, expected) in cases {
            let err = sdk_options(&options(json.clone()), &mut Map::new()).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest);
            assert!(err.message.contains(expected), "{json}\n→ {}", err.message);
        }
    }

    #[test]
    fn a_resumed_run_keeps_its_session_and_a_new_one_is_given_an_id() {
        let mut resumed = Map::new();
        resumed.insert("resume".into(), "s-old".into());
        assert_eq!(choose_session(&mut resumed), "s-old");
        assert!(!resumed.contains_key("sessionId"));

        let mut fresh = Map::new();
        let id = choose_session(&mut fresh);
        assert_eq!(fresh["sessionId"], id.as_str());
        assert_ne!(choose_session(&mut Map::new()), id);
    }

    #[test]
    fn can_use_tool_is_registered_unless_permissions_are_bypassed() {
        let mut out = Map::new();
        assert!(registers_can_use_tool(&out));
        for (mode, registers) in [
            ("default", true),
            ("plan", true),
            ("bypassPermissions", false),
        ] {
            sdk_options(&options(json!({ "permission_mode": mode })), &mut out).unwrap();
            assert_eq!(registers_can_use_tool(&out), registers, "{mode}");
        }
        assert_eq!(out["allowDangerouslySkipPermissions"], true);
    }
}
