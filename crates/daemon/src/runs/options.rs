//! A `run` request's options, translated into the Agent SDK's (camelCase,
//! on top of the provider's), and the choices made from them before the
//! child starts. Pure but for checking that `cwd` is a directory: every
//! refusal names the option and what is accepted, and is unit-tested here.

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::{Map, Value};

use super::Refused;
use crate::protocol::adapter::Runtime;
use crate::protocol::RunOptions;
use crate::providers::Provider;

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
    check_cwd(run)
}

/// Turns the protocol's run options into the Pi adapter's (its
/// `provider`, `model`, limits) for `provider`; returns the cwd, when one
/// was given. What Pi has no counterpart for is refused by name, never
/// dropped: a `disallowed_tools` ignored would widen what the agent may do.
pub(super) fn pi_options(
    run: &RunOptions,
    provider: &Provider,
    options: &mut Map<String, Value>,
) -> Result<Option<PathBuf>, Refused> {
    if let Some(name) = run.unknown.keys().next() {
        return Err(Refused::invalid(format!(
            "options.{name}: not a run option; known: {}",
            KNOWN_OPTIONS.join(", ")
        )));
    }
    let unsupported = [
        ("allowed_tools", !run.allowed_tools.is_empty()),
        ("disallowed_tools", !run.disallowed_tools.is_empty()),
        ("permission_mode", run.permission_mode.is_some()),
        ("resume", run.resume.is_some()),
        ("setting_sources", run.setting_sources.is_some()),
        ("mcp_servers", run.mcp_servers.is_some()),
    ];
    if let Some((name, _)) = unsupported.iter().find(|(_, given)| *given) {
        return Err(Refused::invalid(format!(
            "options.{name}: the pi runtime has no such option (it is the Claude Agent SDK's); \
             hookd's rules decide what a Pi run may do"
        )));
    }
    options.insert("provider".into(), provider.pi_provider());
    let model = run.model.clone().or_else(|| provider.model.clone());
    let Some(model) = model else {
        return Err(Refused::invalid(format!(
            "options.model: the pi runtime needs a model: give --model {}/MODEL, or set \
             [providers.{}].model",
            provider.name, provider.name
        )));
    };
    options.insert("model".into(), model.into());
    if let Some(level) = provider.pi_thinking() {
        options.insert("thinkingLevel".into(), level.into());
    }
    if let Some(turns) = run.max_turns {
        options.insert("maxTurns".into(), turns.into());
    }
    if let Some(budget) = run.max_budget_usd {
        if !(budget.is_finite() && budget > 0.0) {
            return Err(Refused::invalid(
                "options.max_budget_usd: must be a positive number",
            ));
        }
        options.insert("maxBudgetUsd".into(), budget.into());
    }
    check_cwd(run)
}

/// A `--model PROVIDER/MODEL` whose prefix names a configured provider:
/// the provider and the model's own name. Anything else is a model name as
/// it is (OpenRouter's ids have a `/` of their own).
pub(super) fn split_model(model: &str, is_provider: impl Fn(&str) -> bool) -> Option<(&str, &str)> {
    let (provider, name) = model.split_once('/')?;
    (is_provider(provider) && !name.is_empty()).then_some((provider, name))
}

/// The runtime a run asked for (`runtime`), else the one its provider's
/// API defaults to, else the Claude Agent SDK; refuses a pair that cannot
/// work.
pub(super) fn choose_runtime(
    asked: Option<&str>,
    provider: Option<&Provider>,
) -> Result<Runtime, Refused> {
    let asked = match asked {
        None => None,
        Some(name) => Some(Runtime::parse(name).ok_or_else(|| {
            let known: Vec<&str> = Runtime::ALL.iter().map(|(n, _)| *n).collect();
            Refused::invalid(format!(
                "runtime: `{name}`; expected one of {}",
                known.join(", ")
            ))
        })?),
    };
    let Some(provider) = provider else {
        return match asked {
            Some(Runtime::Pi) => Err(Refused::invalid(
                "runtime pi: a Pi run needs a provider (its endpoint and key): give --provider \
                 NAME or --model NAME/MODEL for a [providers.NAME] of hookd's config",
            )),
            other => Ok(other.unwrap_or(Runtime::ClaudeSdk)),
        };
    };
    let runtime = asked.unwrap_or(provider.api.default_runtime());
    if runtime == Runtime::ClaudeSdk && provider.api.default_runtime() != Runtime::ClaudeSdk {
        return Err(Refused::invalid(format!(
            "runtime claude-sdk: provider `{}` speaks {}, and the Claude Agent SDK speaks only \
             the Anthropic Messages API; use --runtime pi (the default for it)",
            provider.name, provider.api
        )));
    }
    if runtime == Runtime::Pi && provider.kind == crate::providers::ProviderKind::ClaudeMax {
        return Err(Refused::invalid(format!(
            "runtime pi: provider `{}` is of kind \"claude-max\", this machine's Claude Code \
             login, which only the claude-sdk runtime can use",
            provider.name
        )));
    }
    Ok(runtime)
}

/// The run's `cwd`, checked: absolute and a directory.
fn check_cwd(run: &RunOptions) -> Result<Option<PathBuf>, Refused> {
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

    fn provider(text: &str) -> Provider {
        Provider::parse("p", &toml::from_str(text).unwrap()).unwrap()
    }

    #[test]
    fn the_runtime_follows_the_provider_unless_asked() {
        let anthropic = provider("kind = \"anthropic\"\napi_key_env = \"A\"");
        let openai = provider("kind = \"openai\"\napi_key_env = \"O\"");
        let max = provider("kind = \"claude-max\"");
        assert_eq!(choose_runtime(None, None).unwrap(), Runtime::ClaudeSdk);
        assert_eq!(
            choose_runtime(None, Some(&anthropic)).unwrap(),
            Runtime::ClaudeSdk
        );
        assert_eq!(
            choose_runtime(Some("pi"), Some(&anthropic)).unwrap(),
            Runtime::Pi
        );
        assert_eq!(choose_runtime(None, Some(&openai)).unwrap(), Runtime::Pi);
        for (asked, provider, expected) in [
            (Some("claude-sdk"), Some(&openai), "speaks openai-responses"),
            (Some("pi"), Some(&max), "only the claude-sdk runtime"),
            (Some("pi"), None, "needs a provider"),
            (
                Some("codex"),
                None,
                "runtime: `codex`; expected one of claude-sdk, pi",
            ),
        ] {
            let err = choose_runtime(asked, provider).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest);
            assert!(
                err.message.contains(expected),
                "{asked:?} → {}",
                err.message
            );
        }
    }

    #[test]
    fn a_model_names_its_provider_only_when_one_is_configured() {
        let known = |p: &str| p == "oai";
        assert_eq!(split_model("oai/gpt-5", known), Some(("oai", "gpt-5")));
        assert_eq!(split_model("anthropic/claude-sonnet-4", known), None);
        assert_eq!(split_model("oai/", known), None);
        assert_eq!(split_model("haiku", known), None);
    }

    #[test]
    fn pi_options_carry_the_provider_and_refuse_what_pi_lacks() {
        let p = provider(
            "kind = \"openai\"\napi_key_env = \"O\"\nmodel = \"gpt-5\"\nthinking = \"max\"",
        );
        let mut out = Map::new();
        pi_options(
            &options(json!({"max_turns": 2, "max_budget_usd": 0.5})),
            &p,
            &mut out,
        )
        .unwrap();
        assert_eq!(out["model"], "gpt-5");
        assert_eq!(out["provider"]["api"], "openai-responses");
        assert_eq!(out["thinkingLevel"], "xhigh");
        assert_eq!(
            (out["maxTurns"].clone(), out["maxBudgetUsd"].clone()),
            (json!(2), json!(0.5))
        );
        assert!(
            !Value::Object(out.clone()).to_string().contains("api_key"),
            "no key in the options"
        );
        let err = pi_options(
            &options(json!({"disallowed_tools": ["Bash"]})),
            &p,
            &mut Map::new(),
        )
        .unwrap_err();
        assert!(
            err.message
                .starts_with("options.disallowed_tools: the pi runtime"),
            "{}",
            err.message
        );
        let bare = provider("kind = \"openai\"\napi_key_env = \"O\"");
        let err = pi_options(&options(json!({})), &bare, &mut Map::new()).unwrap_err();
        assert!(
            err.message.contains("needs a model: give --model p/MODEL"),
            "{}",
            err.message
        );
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
