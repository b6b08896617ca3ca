//! Drive the real Codex CLI and Gemini CLI, headless and offline, against
//! scripted mocks of their model APIs, with hooks registered in each
//! agent's own format.
//!
//! Integration tests include this file as a module:
//!
//! ```ignore
//! #[path = "support/agents.rs"]
//! mod agents;
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
//! Requirements: `python3` (runs `tests/agents/mock_models.py`), `node`, and
//! the pinned CLIs: `npm ci --prefix tests/agents` (what `scripts/test`
//! does).
//!
//! Hermetic by construction:
//! every run has its own HOME, `CODEX_HOME`/`~/.gemini`, TMPDIR and project
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

// Shared with the other harnesses: a test that includes two gets two
// copies of these std-only helpers, which is harmless.
#[allow(clippy::duplicate_mod)]
#[path = "process.rs"]
mod process;
#[path = "records.rs"]
mod records;
// Not every test crate that includes this module has a test to skip.
#[allow(unused_imports)]
pub use process::node_absent;
pub use records::read_jsonl;
use records::truncate;

use serde_json::{json, Value};
use std::cell::Cell;
use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};
use tempfile::TempDir;

pub use process::kill_process_tree;

/// How long [`ModelMock::start`] waits for the mock to publish its port.
const MOCK_START_TIMEOUT: Duration = Duration::from_secs(10);
/// Default limit for one CLI run (a Codex run takes about 1 s, a Gemini run
/// 4–15 s on a busy 2-core machine).
const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// The model each CLI is told to use. Naming one keeps Gemini from asking a
/// router model first; the mock answers for any name.
const CODEX_MODEL: &str = "gpt-5.5";
const GEMINI_MODEL: &str = "gemini-2.5-flash";

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One of the agent CLIs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    /// `@openai/codex@0.169.0` (`codex exec`), OpenAI Responses API.
    Codex,
    /// `@google/gemini-cli@0.61.0` (`gemini -p`), Gemini API.
    Gemini,
}

impl Cli {
    /// The name hookd gives the agent (`codex`, `gemini`).
    pub fn name(self) -> &'static str {
        match self {
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
        }
    }

    /// The `--api` of `mock_models.py`.
    fn api(self) -> &'static str {
        match self {
            Cli::Codex => "openai",
            Cli::Gemini => "gemini",
        }
    }

    /// The CLI's shell tool, as the model calls it.
    pub fn shell_tool(self) -> &'static str {
        match self {
            Cli::Codex => "exec_command",
            Cli::Gemini => "run_shell_command",
        }
    }

    /// The arguments of a shell tool call running `command`.
    pub fn shell_args(self, command: &str) -> Value {
        match self {
            Cli::Codex => json!({ "cmd": command }),
            Cli::Gemini => json!({ "command": command }),
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

fn tail(s: &str, lines: usize) -> String {
    let all: Vec<&str> = s.lines().collect();
    all[all.len().saturating_sub(lines)..]
        .iter()
        .map(|l| truncate(l, 400))
        .collect::<Vec<_>>()
        .join("\n")
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

/// A running `tests/agents/mock_models.py` for one CLI's API, on 127.0.0.1.
/// Killed (by pid) and reaped on drop.
pub struct ModelMock {
    cli: Cli,
    child: Child,
    /// Kept open: the mock exits when it closes, so it also dies if the test
    /// process is killed before `Drop` runs.
    stdin: Option<ChildStdin>,
    port: u16,
    record: PathBuf,
    stderr: PathBuf,
    dir: TempDir,
}

impl ModelMock {
    /// Starts the mock of `cli`'s API with `script` (format: the docstring of
    /// `tests/agents/mock_models.py`) and waits until it listens.
    pub fn start(cli: Cli, script: &Value) -> ModelMock {
        let dir = tempfile::Builder::new()
            .prefix("hookd-model-mock-")
            .tempdir()
            .expect("creating mock temp dir");
        let script_path = dir.path().join("script.json");
        let record = dir.path().join("requests.jsonl");
        let port_file = dir.path().join("port");
        let stderr = dir.path().join("mock.stderr");
        fs::write(&script_path, serde_json::to_vec_pretty(script).unwrap()).unwrap();
        let mock_py = manifest_dir().join("tests/agents/mock_models.py");
        let mut command = Command::new("python3");
        let mut child = process::private_home(&mut command, dir.path())
            .arg(&mock_py)
            .args(["--api", cli.api(), "--exit-on-stdin-eof"])
            .arg("--script")
            .arg(&script_path)
            .arg("--record")
            .arg(&record)
            .arg("--port-file")
            .arg(&port_file)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning python3 {}: {e}", mock_py.display()));
        let stdin = child.stdin.take();
        let deadline = Instant::now() + MOCK_START_TIMEOUT;
        let port = loop {
            if let Ok(text) = fs::read_to_string(&port_file) {
                break text
                    .trim()
                    .parse::<u16>()
                    .unwrap_or_else(|e| panic!("mock port file holds {text:?}: {e}"));
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "mock_models.py exited ({status}) before listening; stderr:\n{}",
                    fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("mock_models.py did not listen within {MOCK_START_TIMEOUT:?}");
            }
            thread::sleep(Duration::from_millis(10));
        };
        ModelMock {
            cli,
            child,
            stdin,
            port,
            record,
            stderr,
            dir,
        }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every request so far, in arrival order: `{"seq", "method", "path",
    /// "query", "body", "reply"}` (see the mock's docstring).
    pub fn requests(&self) -> Vec<Value> {
        read_jsonl(&self.record)
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
                Cli::Codex => {
                    for item in r["body"]["input"].as_array().into_iter().flatten() {
                        if matches!(
                            item["type"].as_str(),
                            Some("function_call_output" | "custom_tool_call_output")
                        ) {
                            let text = match &item["output"] {
                                Value::String(s) => s.clone(),
                                Value::Array(parts) => parts
                                    .iter()
                                    .filter_map(|p| p["text"].as_str())
                                    .collect::<Vec<_>>()
                                    .join("\n"),
                                other => other.to_string(),
                            };
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
            return format!(
                "  (no requests; mock stderr: {:?})",
                fs::read_to_string(&self.stderr).unwrap_or_default()
            );
        }
        reqs.iter()
            .map(|r| {
                format!(
                    "  #{} {} {} -> {}",
                    r["seq"],
                    r["method"].as_str().unwrap_or("?"),
                    r["path"].as_str().unwrap_or("?"),
                    r["reply"]
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for ModelMock {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------
// AgentRun
// ---------------------------------------------------------------------------

/// A hermetic headless run of one CLI: its own HOME, config dir, TMPDIR,
/// project and scratch dirs (under one temp dir removed on drop), a cleared
/// environment, and the mock as its API.
pub struct AgentRun {
    cli: Cli,
    root: TempDir,
    base_url: String,
    mock_record: PathBuf,
    env: Vec<(OsString, OsString)>,
    args: Vec<OsString>,
    timeout: Duration,
    runs: Cell<usize>,
    /// Codex: `--approve-for-me` instead of bypassing approvals.
    approve_for_me: bool,
    /// Gemini: pass `-m` (else its router picks a model).
    name_model: bool,
}

impl AgentRun {
    /// A run of `cli` against `mock` with a 120 s timeout: creates
    /// `<root>/{home,tmp,project,scratch}` and the CLI's configuration
    /// (Codex `$CODEX_HOME/config.toml`, Gemini `~/.gemini/settings.json`),
    /// with no hooks.
    pub fn new(cli: Cli, mock: &ModelMock) -> AgentRun {
        assert_eq!(
            mock.cli,
            cli,
            "a {} run needs the {} mock",
            cli.name(),
            cli.api()
        );
        let root = tempfile::Builder::new()
            .prefix(&format!("hookd-{}-", cli.name()))
            .tempdir()
            .expect("creating run temp dir");
        for d in ["home", "tmp", "project", "scratch"] {
            fs::create_dir_all(root.path().join(d)).unwrap();
        }
        let run = AgentRun {
            cli,
            root,
            base_url: mock.base_url(),
            mock_record: mock.record.clone(),
            env: Vec::new(),
            args: Vec::new(),
            timeout: DEFAULT_RUN_TIMEOUT,
            runs: Cell::new(0),
            approve_for_me: false,
            name_model: true,
        };
        fs::create_dir_all(run.config_dir()).unwrap();
        match cli {
            Cli::Codex => fs::write(run.config_dir().join("config.toml"), run.codex_config())
                .expect("writing config.toml"),
            Cli::Gemini => run.write_gemini_settings(None),
        }
        run
    }

    /// The CLI's project dir: its cwd.
    pub fn project_dir(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// A dir outside the project for hook scripts and their records.
    pub fn scratch_dir(&self) -> PathBuf {
        self.root.path().join("scratch")
    }

    /// The CLI's HOME.
    pub fn home_dir(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// Where the CLI's configuration lives: `$CODEX_HOME` (`<home>/.codex`)
    /// or `<home>/.gemini`.
    pub fn config_dir(&self) -> PathBuf {
        match self.cli {
            Cli::Codex => self.home_dir().join(".codex"),
            Cli::Gemini => self.home_dir().join(".gemini"),
        }
    }

    /// Adds an environment variable for the CLI (and its hooks), after the
    /// hermetic defaults, so it can override them.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().into(), value.as_ref().into()));
        self
    }

    /// Appends a CLI argument (before the prompt).
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().into());
        self
    }

    /// Codex: route approvals through its automatic reviewer
    /// (`--approve-for-me`, workspace-write sandbox) instead of bypassing
    /// them: the only mode in which `codex exec` fires PermissionRequest
    /// (for a command that asks for escalation), and asks its reviewer
    /// model (the mock) when no hook decides.
    pub fn approve_for_me(mut self) -> Self {
        assert_eq!(self.cli, Cli::Codex, "--approve-for-me is Codex's");
        self.approve_for_me = true;
        self
    }

    /// Gemini: name no model, so the CLI first asks its router model which
    /// one to use (the mock answers it).
    pub fn without_model(mut self) -> Self {
        assert_eq!(self.cli, Cli::Gemini, "the model router is Gemini's");
        self.name_model = false;
        self
    }

    /// Overall limit for [`AgentRun::run`] (default 120 s).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = limit;
        self
    }

    /// Writes an executable (0755) file into the scratch dir.
    pub fn write_executable(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.scratch_dir().join(name);
        fs::write(&path, contents).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// Registers `command` (a path, run with no arguments) as a hook for each
    /// of `events`, matching every tool, in the CLI's own format: Codex's
    /// `$CODEX_HOME/hooks.json` with the timeout in seconds, Gemini's
    /// `settings.json` `hooks` with it in milliseconds. Replaces any earlier
    /// registration.
    pub fn register_hooks(&self, events: &[&str], command: &Path, timeout: Duration) {
        let command = command.to_str().expect("hook command path must be UTF-8");
        match self.cli {
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
        }
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
            self.base_url
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
        let n = self.runs.get();
        self.runs.set(n + 1);
        let stdout_path = self.root.path().join(format!("run-{n}.stdout"));
        let stderr_path = self.root.path().join(format!("run-{n}.stderr"));
        let program = self.cli.program();
        let mut cmd = match self.cli {
            Cli::Codex => {
                let mut cmd = Command::new(&program);
                cmd.args([
                    "exec",
                    "--json",
                    "--skip-git-repo-check",
                    "--disable",
                    "plugins",
                    "--dangerously-bypass-hook-trust",
                ]);
                cmd.arg(if self.approve_for_me {
                    "--approve-for-me"
                } else {
                    "--dangerously-bypass-approvals-and-sandbox"
                });
                cmd
            }
            Cli::Gemini => {
                let mut cmd = Command::new("node");
                cmd.arg(&program).args([
                    "--output-format",
                    "stream-json",
                    "--skip-trust",
                    "--approval-mode",
                    "yolo",
                ]);
                if self.name_model {
                    cmd.args(["-m", GEMINI_MODEL]);
                }
                cmd.arg("-p");
                cmd
            }
        };
        let mock_proxy = &self.base_url;
        cmd.args(&self.args)
            .arg(prompt)
            .current_dir(self.project_dir())
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
            )
            .env("HOME", self.home_dir())
            .env("TMPDIR", self.root.path().join("tmp"))
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            // Anything that tries to leave the machine reaches the mock,
            // which refuses it and records the attempt. NO_PROXY keeps the
            // API calls to the mock itself direct.
            .env("HTTPS_PROXY", mock_proxy)
            .env("HTTP_PROXY", mock_proxy)
            .env("https_proxy", mock_proxy)
            .env("http_proxy", mock_proxy)
            .env("ALL_PROXY", mock_proxy)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost");
        match self.cli {
            Cli::Codex => {
                cmd.env("CODEX_HOME", self.config_dir())
                    .env("CODEX_MOCK_API_KEY", "hookd-e2e-not-a-real-key");
            }
            Cli::Gemini => {
                cmd.env("GEMINI_API_KEY", "hookd-e2e-not-a-real-key")
                    .env("GOOGLE_GEMINI_BASE_URL", &self.base_url)
                    .env("GEMINI_CLI_TRUST_WORKSPACE", "true");
            }
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(File::create(&stdout_path).unwrap())
            .stderr(File::create(&stderr_path).unwrap())
            // Its own process group, so it can be ended with what it started.
            .process_group(0);

        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", program.display()));
        let status = match process::wait_with_deadline(&mut child, self.timeout) {
            Some(status) => status,
            None => {
                kill_process_tree(&mut child);
                panic!(
                    "{} did not finish within {:?}; killed.\n--- stderr ---\n{}\n--- stdout (tail) ---\n{}\n--- mock requests ---\n{}",
                    self.cli.name(),
                    self.timeout,
                    tail(&fs::read_to_string(&stderr_path).unwrap_or_default(), 30),
                    tail(&fs::read_to_string(&stdout_path).unwrap_or_default(), 20),
                    read_jsonl(&self.mock_record)
                        .iter()
                        .map(|r| format!("  #{} {} -> {}", r["seq"], r["path"], r["reply"]))
                        .collect::<Vec<_>>()
                        .join("\n"),
                );
            }
        };
        let elapsed = started.elapsed();

        let stdout = fs::read_to_string(&stdout_path).unwrap_or_default();
        let stderr = fs::read_to_string(&stderr_path).unwrap_or_default();
        let messages = stdout
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect();
        AgentOutput {
            cli: self.cli,
            status,
            messages,
            stdout,
            stderr,
            elapsed,
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
