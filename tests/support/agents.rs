//! Drive the real Codex CLI and Gemini CLI, headless and offline, against
//! scripted mocks of their model APIs, with hooks registered in each
//! agent's own format.
//!
//! Integration tests include this file as a module:
//!
//! ```ignore
//! use crate::support::agents;
//! use agents::{AgentRun, Cli, ModelMock};
//!
//! #[test]
//! fn codex_runs_a_shell_command() {
//!     let mock = ModelMock::start(Cli::Codex, &agents::one_shell_call(Cli::Codex, "echo hi > out.txt"));
//!     let run = AgentRun::new(Cli::Codex, &mock);
//!     let record = run.write_executable("record.sh", "#!/bin/sh\ncat >> \"$0.log\"; echo >> \"$0.log\"\n");
//!     run.register_hooks(&["PreToolUse"], &record, std::time::Duration::from_secs(30));
//!     let out = run.run("do the thing");
//!     out.assert_success();
//!     assert!(mock.tool_output("call_mock_0_").text.contains("exited with code 0"));
//!     mock.assert_no_egress();
//! }
//! ```
//!
//! Requirements: `python3` (runs `tests/support/mock_models.py`), `node`, and
//! the pinned CLIs: `npm ci --prefix tests/agents` (what `scripts/test`
//! does).
//!
//! The Codex and Gemini layer over `agent_cli.rs` (the one harness every
//! agent shares): their [`AgentCli`] ([`Agent`]), their hook registration
//! and configuration, and what their mocks recorded (tool outputs, egress).
//! Hermetic by construction: every run has its own HOME, `CODEX_HOME`/`~/.gemini`, TMPDIR and project
//! dir under one temp dir removed on drop, a cleared environment, stdin from
//! `/dev/null`, and the flags and settings that keep each CLI from calling
//! out (Codex: `--disable plugins`, analytics off, no update check; Gemini:
//! `gemini-api-key` auth, telemetry, usage statistics and auto-update off,
//! `-m` so no router model is asked). Every HTTP(S) proxy variable points at
//! the mock itself, loopback excepted: anything that still tries to leave
//! the machine is refused there and recorded ([`ModelMock::assert_no_egress`]).
//! A run that exceeds its timeout is killed with everything it started, by
//! pid.
//!
//! Only std, serde_json and tempfile are used, so any test crate can include
//! it.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use super::agent_cli;
// Not every test crate that includes this module has a test to skip.
#[allow(unused_imports)]
pub use agent_cli::process::{kill_process_tree, node_absent};
#[allow(unused_imports)]
pub use agent_cli::records::read_jsonl;

use agent_cli::{manifest_dir, tail, AgentCli, HeadlessRun, MockServer, ModelApi, RunDirs};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use super::daemon::{Daemon, DaemonOptions};

/// The model each CLI is told to use. Naming one keeps Gemini from asking a
/// router model first; the mock answers for any name.
const CODEX_MODEL: &str = "gpt-5.5";
const GEMINI_MODEL: &str = "gemini-2.5-flash";

/// One of the agent CLIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    /// `@openai/codex@0.169.0` (`codex exec`), OpenAI Responses API.
    Codex,
    /// `@google/gemini-cli@0.61.0` (`gemini -p`), Gemini API.
    Gemini,
    /// `@github/copilot@1.0.102` (`copilot -p`, BYOK), OpenAI Responses API.
    Copilot,
}

impl Cli {
    /// The name hookd gives the agent (`codex`, `gemini`).
    pub fn name(self) -> &'static str {
        match self {
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
            Cli::Copilot => "copilot",
        }
    }

    /// The model API the CLI speaks.
    fn api(self) -> ModelApi {
        match self {
            Cli::Codex | Cli::Copilot => ModelApi::OpenAiResponses,
            Cli::Gemini => ModelApi::Gemini,
        }
    }

    /// The CLI's shell tool, as the model calls it.
    pub fn shell_tool(self) -> &'static str {
        match self {
            Cli::Codex => "exec_command",
            Cli::Gemini => "run_shell_command",
            Cli::Copilot => "bash",
        }
    }

    /// The arguments of a shell tool call running `command`.
    pub fn shell_args(self, command: &str) -> Value {
        match self {
            Cli::Codex => json!({ "cmd": command }),
            Cli::Gemini => json!({ "command": command }),
            Cli::Copilot => json!({ "command": command, "description": "run it" }),
        }
    }

    /// Every hook event the CLI fires.
    pub fn events(self) -> Vec<&'static str> {
        match self {
            Cli::Codex => hookd::agent::codex::EVENTS.iter().map(|e| e.name).collect(),
            Cli::Gemini => hookd::agent::gemini::EVENTS
                .iter()
                .map(|e| e.name)
                .collect(),
            Cli::Copilot => hookd::agent::copilot::EVENTS
                .iter()
                .map(|e| e.name)
                .collect(),
        }
    }

    /// The CLI's entry point: the native Codex binary (run directly, not
    /// through its Node launcher), Gemini's bundle (run with `node`).
    pub fn program(self) -> PathBuf {
        let modules = manifest_dir().join("tests/agents/node_modules");
        let path = match self {
            // `@openai/codex-<platform>/vendor/<target>/bin/codex`: npm
            // installs the one platform package that fits.
            Cli::Codex => fs::read_dir(modules.join("@openai"))
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("codex-"))
                .flat_map(|e| fs::read_dir(e.path().join("vendor")).into_iter().flatten())
                .flatten()
                .map(|target| target.path().join("bin/codex"))
                .find(|bin| bin.is_file())
                .unwrap_or_else(|| {
                    modules.join("@openai/codex-<platform>/vendor/<target>/bin/codex")
                }),
            Cli::Gemini => modules.join("@google/gemini-cli/bundle/gemini.js"),
            // `@github/copilot-<platform>/copilot`: the native binary its
            // Node launcher would spawn.
            Cli::Copilot => fs::read_dir(modules.join("@github"))
                .into_iter()
                .flatten()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with("copilot-"))
                .map(|e| e.path().join("copilot"))
                .find(|bin| bin.is_file())
                .unwrap_or_else(|| modules.join("@github/copilot-<platform>/copilot")),
        };
        assert!(
            path.is_file(),
            "{} is missing; install the pinned CLIs with:\n    npm ci --prefix tests/agents\n(run in {})",
            path.display(),
            manifest_dir().display()
        );
        path
    }
}

/// A script in which the model makes one shell call (`command`), then, once
/// it has seen the result, says "done". The call's id is `call_mock_0_1`.
pub fn one_shell_call(cli: Cli, command: &str) -> Value {
    json!({
        "turns": [
            {"content": [
                {"type": "text", "text": "I will run the command."},
                {"type": "tool_call", "name": cli.shell_tool(), "input": cli.shell_args(command)}
            ]},
            {"content": [{"type": "text", "text": "done"}]}
        ],
        "default_text": "done"
    })
}

// ---------------------------------------------------------------------------
// ModelMock
// ---------------------------------------------------------------------------

/// What the CLI sent back to the model for one tool call.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    /// `seq` of the request that carried it.
    pub request_seq: u64,
    /// The call id (`call_mock_<turn>_<index>`).
    pub call_id: String,
    /// Codex: the `output` text; Gemini: the `functionResponse.response`
    /// object as JSON text.
    pub text: String,
}

/// The mock of one CLI's model API (`tests/support/mock_models.py`), on
/// 127.0.0.1. Killed (by pid) and reaped on drop.
pub struct ModelMock {
    cli: Cli,
    server: MockServer,
}

impl ModelMock {
    /// Starts the mock of `cli`'s API with `script` (format: the docstring of
    /// `tests/support/mock_models.py`) and waits until it listens.
    pub fn start(cli: Cli, script: &Value) -> ModelMock {
        let script = serde_json::to_string_pretty(script).unwrap();
        ModelMock {
            cli,
            server: MockServer::start(cli.api(), &script),
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// Every request so far, in arrival order: `{"seq", "method", "path",
    /// "query", "body", "reply"}` (see the mock's docstring).
    pub fn requests(&self) -> Vec<Value> {
        self.server.requests()
    }

    /// The bodies of the main-loop model requests (scripted turns and the
    /// default answer; not Codex's reviewer nor Gemini's side requests).
    pub fn model_requests(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| matches!(r["reply"]["kind"].as_str(), Some("turn" | "default")))
            .map(|r| r["body"].clone())
            .collect()
    }

    /// Requests that tried to leave the machine through the proxy.
    pub fn egress_attempts(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["reply"]["kind"] == "egress_refused")
            .collect()
    }

    /// Panics if anything tried to leave the machine.
    pub fn assert_no_egress(&self) {
        let attempts = self.egress_attempts();
        assert!(
            attempts.is_empty(),
            "the CLI tried to reach the network: {attempts:#?}"
        );
    }

    /// Every tool output the CLI sent back to the model, first occurrence
    /// of each call id, in arrival order.
    pub fn tool_outputs(&self) -> Vec<ToolOutput> {
        let mut out: Vec<ToolOutput> = Vec::new();
        for r in self.requests() {
            if !matches!(r["reply"]["kind"].as_str(), Some("turn" | "default")) {
                continue;
            }
            let seq = r["seq"].as_u64().unwrap_or(0);
            let mut found = Vec::new();
            match self.cli {
                Cli::Codex | Cli::Copilot => {
                    for item in r["body"]["input"].as_array().into_iter().flatten() {
                        if matches!(
                            item["type"].as_str(),
                            Some("function_call_output" | "custom_tool_call_output")
                        ) {
                            let text = agent_cli::tool_output_text(&item["output"]);
                            found.push((item["call_id"].as_str().unwrap_or("").to_string(), text));
                        }
                    }
                }
                Cli::Gemini => {
                    for content in r["body"]["contents"].as_array().into_iter().flatten() {
                        for part in content["parts"].as_array().into_iter().flatten() {
                            let response = &part["functionResponse"];
                            if response.is_object() {
                                found.push((
                                    response["id"].as_str().unwrap_or("").to_string(),
                                    response["response"].to_string(),
                                ));
                            }
                        }
                    }
                }
            }
            for (call_id, text) in found {
                if !out.iter().any(|o| o.call_id == call_id) {
                    out.push(ToolOutput {
                        request_seq: seq,
                        call_id,
                        text,
                    });
                }
            }
        }
        out
    }

    /// The first tool output whose call id starts with `id_prefix`; panics,
    /// listing the requests, if there is none.
    pub fn tool_output(&self, id_prefix: &str) -> ToolOutput {
        self.tool_outputs()
            .into_iter()
            .find(|o| o.call_id.starts_with(id_prefix))
            .unwrap_or_else(|| {
                panic!(
                    "no model request carried the output of {id_prefix}*; recorded:\n{}",
                    self.describe_requests()
                )
            })
    }

    /// One line per request, for panic messages.
    pub fn describe_requests(&self) -> String {
        let reqs = self.requests();
        if reqs.is_empty() {
            return format!("  (no requests; mock stderr: {:?})", self.server.stderr());
        }
        agent_cli::describe_requests_briefly(&reqs)
    }
}

// ---------------------------------------------------------------------------
// AgentRun
// ---------------------------------------------------------------------------

/// Codex or Gemini as [`HeadlessRun`] runs it, with the options that are
/// one CLI's own.
pub struct Agent {
    cli: Cli,
    /// Codex: `--approve-for-me` instead of bypassing approvals.
    approve_for_me: bool,
    /// Gemini: pass `-m` (else its router picks a model).
    name_model: bool,
}

impl AgentCli for Agent {
    fn name(&self) -> &'static str {
        self.cli.name()
    }

    fn api(&self) -> ModelApi {
        self.cli.api()
    }

    fn config_dir_in_home(&self) -> &'static str {
        match self.cli {
            Cli::Codex => ".codex",
            Cli::Gemini => ".gemini",
            Cli::Copilot => ".copilot",
        }
    }

    fn command_line(&self, prompt: &str, extra: &[OsString]) -> Vec<OsString> {
        let program = self.cli.program();
        let mut line: Vec<OsString> = match self.cli {
            Cli::Codex => {
                let mut line = vec![program.into()];
                line.extend(
                    [
                        "exec",
                        "--json",
                        "--skip-git-repo-check",
                        "--disable",
                        "plugins",
                        "--dangerously-bypass-hook-trust",
                        if self.approve_for_me {
                            "--approve-for-me"
                        } else {
                            "--dangerously-bypass-approvals-and-sandbox"
                        },
                    ]
                    .map(OsString::from),
                );
                line
            }
            Cli::Gemini => {
                let mut line = vec!["node".into(), program.into()];
                line.extend(
                    [
                        "--output-format",
                        "stream-json",
                        "--skip-trust",
                        "--approval-mode",
                        "yolo",
                    ]
                    .map(OsString::from),
                );
                if self.name_model {
                    line.extend(["-m", GEMINI_MODEL].map(OsString::from));
                }
                line.push("-p".into());
                line
            }
            Cli::Copilot => {
                let mut line = vec![program.into()];
                line.push("--allow-all-tools".into());
                line.extend_from_slice(extra);
                line.push("-p".into());
                line.push(prompt.into());
                return line;
            }
        };
        line.extend_from_slice(extra);
        line.push(prompt.into());
        line
    }

    /// The mock itself: it refuses anything that tries to leave the machine
    /// and records the attempt ([`ModelMock::assert_no_egress`]).
    fn proxy(&self, mock_url: &str) -> String {
        mock_url.into()
    }

    fn env(&self, dirs: &RunDirs, mock_url: &str) -> Vec<(&'static str, OsString)> {
        let mut env = vec![("NO_COLOR", "1".into()), ("ALL_PROXY", mock_url.into())];
        match self.cli {
            Cli::Codex => env.extend([
                ("CODEX_HOME", dirs.config().into()),
                ("CODEX_MOCK_API_KEY", "hookd-e2e-not-a-real-key".into()),
            ]),
            Cli::Gemini => env.extend([
                ("GEMINI_API_KEY", "hookd-e2e-not-a-real-key".into()),
                ("GOOGLE_GEMINI_BASE_URL", mock_url.into()),
                ("GEMINI_CLI_TRUST_WORKSPACE", "true".into()),
            ]),
            // Bring your own key, offline: no GitHub sign-in, no web tools.
            Cli::Copilot => env.extend([
                ("COPILOT_OFFLINE", "true".into()),
                ("COPILOT_PROVIDER_BASE_URL", format!("{mock_url}/v1").into()),
                ("COPILOT_PROVIDER_TYPE", "openai".into()),
                ("COPILOT_PROVIDER_WIRE_API", "responses".into()),
                (
                    "COPILOT_PROVIDER_API_KEY",
                    "hookd-e2e-not-a-real-key".into(),
                ),
                ("COPILOT_MODEL", CODEX_MODEL.into()),
                ("COPILOT_ALLOW_ALL", "true".into()),
            ]),
        }
        env
    }
}

/// A hermetic headless run of one CLI: its own HOME, config dir, TMPDIR,
/// project and scratch dirs (under one temp dir removed on drop), a cleared
/// environment, and the mock as its API. `env`, `arg` (before the prompt),
/// `timeout`, the dirs and `write_executable` are [`HeadlessRun`]'s.
pub type AgentRun = HeadlessRun<Agent>;

impl AgentRun {
    /// A run of `cli` against `mock` with a 120 s timeout: creates
    /// `<root>/{home,tmp,project,scratch}` and the CLI's configuration
    /// (Codex `$CODEX_HOME/config.toml`, Gemini `~/.gemini/settings.json`),
    /// with no hooks.
    pub fn new(cli: Cli, mock: &ModelMock) -> AgentRun {
        let agent = Agent {
            cli,
            approve_for_me: false,
            name_model: true,
        };
        let run = HeadlessRun::with_agent(agent, &mock.server);
        match cli {
            Cli::Codex => fs::write(run.config_dir().join("config.toml"), run.codex_config())
                .expect("writing config.toml"),
            Cli::Gemini => run.write_gemini_settings(None),
            Cli::Copilot => {}
        }
        run
    }

    /// Codex: route approvals through its automatic reviewer
    /// (`--approve-for-me`, workspace-write sandbox) instead of bypassing
    /// them: the only mode in which `codex exec` fires PermissionRequest
    /// (for a command that asks for escalation), and asks its reviewer
    /// model (the mock) when no hook decides.
    pub fn approve_for_me(mut self) -> Self {
        assert_eq!(self.agent.cli, Cli::Codex, "--approve-for-me is Codex's");
        self.agent.approve_for_me = true;
        self
    }

    /// Gemini: name no model, so the CLI first asks its router model which
    /// one to use (the mock answers it).
    pub fn without_model(mut self) -> Self {
        assert_eq!(self.agent.cli, Cli::Gemini, "the model router is Gemini's");
        self.agent.name_model = false;
        self
    }

    /// Registers `command` (a path, run with no arguments) as a hook for each
    /// of `events`, matching every tool, in the CLI's own format: Codex's
    /// `$CODEX_HOME/hooks.json` with the timeout in seconds, Gemini's
    /// `settings.json` `hooks` with it in milliseconds. Replaces any earlier
    /// registration.
    pub fn register_hooks(&self, events: &[&str], command: &Path, timeout: Duration) {
        let command = command.to_str().expect("hook command path must be UTF-8");
        match self.agent.cli {
            Cli::Codex => {
                let seconds = timeout.as_secs().max(1);
                let hooks: serde_json::Map<String, Value> = events
                    .iter()
                    .map(|e| {
                        let group = json!([{"matcher": "*", "hooks": [
                            {"type": "command", "command": command, "timeout": seconds}
                        ]}]);
                        (e.to_string(), group)
                    })
                    .collect();
                fs::write(
                    self.config_dir().join("hooks.json"),
                    serde_json::to_vec_pretty(&json!({ "hooks": hooks })).unwrap(),
                )
                .expect("writing hooks.json");
            }
            Cli::Gemini => {
                let millis = timeout.as_millis() as u64;
                let hooks: serde_json::Map<String, Value> = events
                    .iter()
                    .map(|e| {
                        // "*" and not ".*": Gemini compares the matcher of
                        // a SessionStart, SessionEnd or PreCompress hook
                        // with the event's source or trigger as a plain
                        // string; only tool events take a regex.
                        let group = json!([{"matcher": "*", "hooks": [
                            {"type": "command", "name": "hookd-test", "command": command, "timeout": millis}
                        ]}]);
                        (e.to_string(), group)
                    })
                    .collect();
                self.write_gemini_settings(Some(Value::Object(hooks)));
            }
            // Claude Code's format, in the project's `.github/hooks/`.
            Cli::Copilot => {
                let seconds = timeout.as_secs().max(1);
                let hooks: serde_json::Map<String, Value> = events
                    .iter()
                    .map(|e| {
                        let group = json!([{"matcher": "*", "hooks": [
                            {"type": "command", "command": command, "timeout": seconds}
                        ]}]);
                        (e.to_string(), group)
                    })
                    .collect();
                let file = self.copilot_hooks_file();
                fs::create_dir_all(file.parent().unwrap()).unwrap();
                fs::write(
                    file,
                    serde_json::to_vec_pretty(&json!({ "hooks": hooks })).unwrap(),
                )
                .expect("writing .github/hooks/hookd.json");
            }
        }
    }

    /// Copilot: the project's hooks file hookd installs,
    /// `.github/hooks/hookd.json`.
    pub fn copilot_hooks_file(&self) -> PathBuf {
        self.project_dir().join(".github/hooks/hookd.json")
    }

    fn codex_config(&self) -> String {
        format!(
            r#"model = "{CODEX_MODEL}"
model_provider = "mock"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.mock]
name = "mock"
base_url = "{}/v1"
wire_api = "responses"
env_key = "CODEX_MOCK_API_KEY"
"#,
            self.mock_url()
        )
    }

    fn write_gemini_settings(&self, hooks: Option<Value>) {
        let mut settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
            "telemetry": {"enabled": false},
            "general": {"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        });
        if let Some(hooks) = hooks {
            settings["hooks"] = hooks;
        }
        fs::write(
            self.config_dir().join("settings.json"),
            serde_json::to_vec_pretty(&settings).unwrap(),
        )
        .expect("writing settings.json");
    }

    /// Runs the CLI headless on `prompt` in the project dir and waits.
    ///
    /// Codex: `codex exec --json --skip-git-repo-check --disable plugins
    /// --dangerously-bypass-hook-trust
    /// --dangerously-bypass-approvals-and-sandbox PROMPT` (or
    /// `--approve-for-me`). Gemini: `node gemini.js --output-format
    /// stream-json --skip-trust --approval-mode yolo -m gemini-2.5-flash -p
    /// PROMPT` (without `-m` if so asked). Returns whatever happened; panics only if the
    /// CLI cannot start or outlives the timeout, in which case it and all it
    /// started are killed by pid.
    pub fn run(&self, prompt: &str) -> AgentOutput {
        let finished = self.run_to_end(prompt);
        AgentOutput {
            cli: self.agent.cli,
            status: finished.status,
            messages: finished.messages,
            stdout: finished.stdout,
            stderr: finished.stderr,
            elapsed: finished.elapsed,
        }
    }
}

/// What one run produced.
#[derive(Debug)]
pub struct AgentOutput {
    pub cli: Cli,
    pub status: ExitStatus,
    /// stdout lines that are JSON: Codex's `exec --json` events, Gemini's
    /// stream-json messages.
    pub messages: Vec<Value>,
    pub stdout: String,
    pub stderr: String,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

impl AgentOutput {
    /// Panics unless the CLI exited 0 and said it finished: Codex's
    /// `turn.completed`, Gemini's `result` with `status: "success"`.
    pub fn assert_success(&self) {
        let finished = match self.cli {
            Cli::Codex => self.messages.iter().any(|m| m["type"] == "turn.completed"),
            Cli::Gemini => self
                .messages
                .iter()
                .any(|m| m["type"] == "result" && m["status"] == "success"),
            // `copilot -p` prints the conversation as text.
            Cli::Copilot => !self.stdout.trim().is_empty(),
        };
        assert!(
            self.status.success() && finished,
            "expected a successful {} run\n{}",
            self.cli.name(),
            self.describe()
        );
    }

    /// Exit status, stderr and the tail of stdout, for panic messages.
    pub fn describe(&self) -> String {
        format!(
            "exit: {} (after {:?})\n--- stderr (tail) ---\n{}\n--- stdout (tail) ---\n{}",
            self.status,
            self.elapsed,
            tail(&self.stderr, 30),
            tail(&self.stdout, 20)
        )
    }
}

/// The command the agent end-to-end tests have an agent run.
pub const COMMAND: &str = "echo hello > out.txt";

/// Rules that deny [`COMMAND`] (any `echo`) with a reason the tests look for.
pub const DENY_ECHO: &str = r#"
[[rule]]
id = "no-echo"
action = "deny"
tool = "Bash(echo:*)"
reason = "hookd e2e: echo is not allowed"
"#;

/// Rules that ask about [`COMMAND`] (any `echo`).
pub const ASK_ECHO: &str = r#"
[[rule]]
id = "ask-echo"
action = "ask"
tool = "Bash(echo:*)"
reason = "hookd e2e: echo needs a person"
"#;

/// A daemon judging with `rules`.
pub fn daemon_with(rules: &str) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(rules.into()),
        ..DaemonOptions::default()
    })
}

/// A socket client named `name` that decides the first pending event with `verdict`
/// (and `reason`) as soon as it is shown, reading for up to `limit` (not the
/// support client's 10 s: some CLIs take longer than that to start); the
/// thread returns that event's kind once the daemon has taken the decision.
pub fn deciding_client(
    socket: &Path,
    name: &'static str,
    verdict: &'static str,
    reason: Option<&'static str>,
    limit: Duration,
) -> std::thread::JoinHandle<String> {
    use std::io::{BufRead, BufReader, Write};
    let stream = std::os::unix::net::UnixStream::connect(socket).unwrap();
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut send = move |frame: Value| writer.write_all(format!("{frame}\n").as_bytes()).unwrap();
    let mut recv = move || {
        let mut line = String::new();
        reader
            .read_line(&mut line)
            .unwrap_or_else(|e| panic!("no frame within {limit:?}: {e}"));
        serde_json::from_str::<Value>(&line).unwrap_or(Value::Null)
    };
    send(json!({"type": "hello", "v": 1, "role": "client", "name": name}));
    assert_eq!(recv()["type"], "welcome");
    send(json!({"type": "subscribe", "req": "s", "filter": {"pending_only": true}}));
    assert_eq!(recv()["type"], "ok");
    std::thread::spawn(move || loop {
        let frame = recv();
        assert!(!frame.is_null(), "the daemon closed the connection");
        if frame["type"] == "event" && frame["pending"] == true {
            let event = &frame["event"];
            let mut decide =
                json!({"type": "decide", "req": "d", "event_id": event["id"], "verdict": verdict});
            if let Some(reason) = reason {
                decide["reason"] = reason.into();
            }
            send(decide);
            loop {
                let reply = recv();
                if reply["req"] == "d" {
                    assert_eq!(reply["type"], "ok", "{reply}");
                    return event["kind"].as_str().unwrap_or("?").to_string();
                }
            }
        }
    })
}
