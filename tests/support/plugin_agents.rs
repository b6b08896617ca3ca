//! Drive the real OpenCode and Pi coding agent, headless and offline,
//! against the Anthropic flavour of the scripted mock, with hookd's
//! in-process plugin installed by the real `hookd install --agent
//! opencode|pi`.
//!
//! The OpenCode and Pi layer over `agent_cli.rs` (the one harness every
//! agent shares): their [`AgentCli`] ([`PluginAgent`]), their model
//! configuration pointing at the mock, and what the mock recorded (the
//! tool results the model was sent). Both reach the mock through their own
//! Anthropic provider: OpenCode's built-in `anthropic` with its `baseURL`
//! (`~/.config/opencode/opencode.json`), Pi a `mock-anthropic` provider in
//! `$PI_CODING_AGENT_DIR/models.json`. Every HTTP(S) proxy variable points
//! at the mock (its egress trap): OpenCode tries `models.opencode.ai` and
//! the npm registry (for `@opencode-ai/plugin`) and is refused there,
//! harmlessly; Pi (`PI_OFFLINE=1`) tries nothing.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use super::agent_cli;

use agent_cli::{manifest_dir, AgentCli, Finished, HeadlessRun, MockServer, ModelApi, RunDirs};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::fs;
use std::path::PathBuf;

/// OpenCode or Pi.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginCli {
    /// `opencode-ai@1.18.33` (`opencode run`).
    OpenCode,
    /// `@mariozechner/pi-coding-agent@0.73.1` (`pi -p --mode json`).
    Pi,
}

impl PluginCli {
    /// hookd's name for the agent (`--agent`, the log's `harness`).
    pub fn name(self) -> &'static str {
        match self {
            PluginCli::OpenCode => "opencode",
            PluginCli::Pi => "pi",
        }
    }

    /// The agent's own name for its event of a tool call.
    pub fn tool_event(self) -> &'static str {
        match self {
            PluginCli::OpenCode => "tool.execute.before",
            PluginCli::Pi => "tool_call",
        }
    }

    fn program(self) -> PathBuf {
        let bin = match self {
            PluginCli::OpenCode => "opencode",
            PluginCli::Pi => "pi",
        };
        manifest_dir()
            .join("tests/agents/node_modules/.bin")
            .join(bin)
    }
}

/// The [`AgentCli`] of OpenCode and Pi.
pub struct PluginAgent {
    pub cli: PluginCli,
}

impl AgentCli for PluginAgent {
    fn name(&self) -> &'static str {
        self.cli.name()
    }

    fn api(&self) -> ModelApi {
        ModelApi::Anthropic
    }

    fn config_dir_in_home(&self) -> &'static str {
        match self.cli {
            PluginCli::OpenCode => ".config/opencode",
            PluginCli::Pi => ".pi/agent",
        }
    }

    fn command_line(&self, prompt: &str, extra: &[OsString]) -> Vec<OsString> {
        let program = self.cli.program().into_os_string();
        let mut line: Vec<OsString> = match self.cli {
            PluginCli::OpenCode => vec![program, "run".into()],
            PluginCli::Pi => {
                let mut line = vec!["node".into(), program];
                line.extend(
                    [
                        "-p",
                        "--mode",
                        "json",
                        "--no-session",
                        "--provider",
                        "mock-anthropic",
                        "--model",
                        "claude-mock",
                    ]
                    .map(OsString::from),
                );
                line
            }
        };
        line.extend_from_slice(extra);
        line.push(prompt.into());
        line
    }

    fn proxy(&self, mock_url: &str) -> String {
        mock_url.to_string()
    }

    fn env(&self, dirs: &RunDirs, _mock_url: &str) -> Vec<(&'static str, OsString)> {
        match self.cli {
            PluginCli::OpenCode => vec![
                ("OPENCODE_DISABLE_AUTOUPDATE", "1".into()),
                ("TERM", "dumb".into()),
            ],
            PluginCli::Pi => vec![
                ("PI_CODING_AGENT_DIR", dirs.config().into_os_string()),
                ("PI_OFFLINE", "1".into()),
                ("PI_TELEMETRY", "0".into()),
                ("PI_SKIP_VERSION_CHECK", "1".into()),
                ("TERM", "dumb".into()),
            ],
        }
    }
}

/// A hermetic run of OpenCode or Pi pointed at `mock` (its model
/// configuration written into the run's config dir).
pub fn plugin_run(cli: PluginCli, mock: &MockServer) -> HeadlessRun<PluginAgent> {
    let run = HeadlessRun::with_agent(PluginAgent { cli }, mock);
    let url = mock.base_url();
    let (file, config) = match cli {
        PluginCli::OpenCode => (
            "opencode.json",
            json!({
                "provider": {"anthropic": {"options": {"baseURL": format!("{url}/v1"), "apiKey": "test-key"}}},
                "model": "anthropic/claude-sonnet-4-5",
                "autoupdate": false,
                "share": "disabled"
            }),
        ),
        PluginCli::Pi => (
            "models.json",
            json!({"providers": {"mock-anthropic": {
                "baseUrl": url, "api": "anthropic-messages", "apiKey": "test-key",
                "models": [{"id": "claude-mock", "contextWindow": 200000, "maxTokens": 8192,
                            "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}]}}}),
        ),
    };
    fs::write(run.config_dir().join(file), config.to_string()).unwrap();
    run
}

/// A script: one call of `tool` with `input`, then "done".
pub fn one_call(tool: &str, input: Value) -> Value {
    json!({
        "turns": [
            {"content": [
                {"type": "text", "text": "I will do it."},
                {"type": "tool_call", "name": tool, "input": input}
            ]},
            {"content": [{"type": "text", "text": "done"}]}
        ],
        "default_text": "done"
    })
}

/// The `tool_result` blocks the agent sent the model (Anthropic
/// requests), in order: `(tool_use_id, text, is_error)`.
pub fn tool_results(mock: &MockServer) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = Vec::new();
    for request in mock.requests() {
        let Some(messages) = request["body"]["messages"].as_array() else {
            continue;
        };
        for message in messages {
            let Some(parts) = message["content"].as_array() else {
                continue;
            };
            for part in parts.iter().filter(|p| p["type"] == "tool_result") {
                let id = part["tool_use_id"].as_str().unwrap_or_default().to_string();
                if out.iter().any(|(seen, _, _)| *seen == id) {
                    continue;
                }
                let text = agent_cli::tool_output_text(&part["content"]);
                out.push((id, text, part["is_error"] == true));
            }
        }
    }
    out
}

/// What a run printed, for panic messages.
pub fn describe(out: &Finished) -> String {
    format!(
        "status {:?}\n--- stderr ---\n{}\n--- stdout ---\n{}",
        out.status,
        agent_cli::tail(&out.stderr, 30),
        agent_cli::tail(&out.stdout, 20)
    )
}

/// The egress the mock refused that is not OpenCode's known, harmless
/// tries (its models catalogue, the npm registry).
pub fn unexpected_egress(mock: &MockServer) -> Vec<String> {
    mock.requests()
        .into_iter()
        .filter(|r| r["reply"]["kind"] == "egress_refused")
        .map(|r| r["path"].as_str().unwrap_or_default().to_string())
        .filter(|host| {
            !host.starts_with("models.opencode.ai") && !host.starts_with("registry.npmjs.org")
        })
        .collect()
}
