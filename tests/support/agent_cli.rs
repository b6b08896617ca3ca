//! One harness for every agent CLI: what differs per agent is an
//! [`AgentCli`] (its command line, its config dir, its environment, the
//! model API it speaks); what is the same — the scripted mock of the model
//! API ([`MockServer`], `tests/support/mock_models.py`), the hermetic run
//! dirs and environment, running with a deadline, killing by pid and
//! collecting the output ([`HeadlessRun`]) — lives here once.
//!
//! `tests/support/claude.rs` (Claude Code) and `tests/support/agents.rs`
//! (Codex, Gemini) are the per-agent layers the tests use; a new agent adds
//! an [`AgentCli`] implementation (and, if its API is new, a flavour of the
//! mock), not a copy of the run code.
//!
//! Hermetic by construction: every run has its own HOME, config dir, TMPDIR,
//! project and scratch dirs under one temp dir removed on drop, a cleared
//! environment, stdin from `/dev/null`, and every HTTP(S) proxy variable
//! pointing where the agent says (a refusing port, or the mock's egress
//! trap), loopback excepted. A run that outlives its timeout is killed with
//! everything it started, by pid.
//!
//! Only std, serde_json and tempfile are used, so any test crate can include
//! it (through `claude.rs` or `agents.rs`).

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

// Shared with the other harnesses (tests/support/mod.rs declares each once).
pub use super::{process, records};

use records::{read_jsonl, truncate};
use serde_json::Value;
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

/// How long [`MockServer::start`] waits for the mock to publish its port.
const MOCK_START_TIMEOUT: Duration = Duration::from_secs(10);
/// Default limit for one headless run (a Claude or Codex run takes about
/// 1–2 s, a Gemini run 4–15 s on a busy 2-core machine).
const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// The crate's root, where `tests/` and the pinned CLIs live.
pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

// ---------------------------------------------------------------------------
// The mock of the model APIs
// ---------------------------------------------------------------------------

/// A model API the mock speaks: the `--api` of `tests/support/mock_models.py`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelApi {
    /// The Anthropic Messages API (Claude Code).
    Anthropic,
    /// The OpenAI Responses API (Codex).
    OpenAiResponses,
    /// The Gemini API (Gemini CLI).
    Gemini,
    /// The OpenAI Chat Completions API (Pi's `openai-completions`).
    ChatCompletions,
}

impl ModelApi {
    /// The mock's `--api` value.
    pub fn flag(self) -> &'static str {
        match self {
            ModelApi::Anthropic => "anthropic",
            ModelApi::OpenAiResponses => "openai",
            ModelApi::Gemini => "gemini",
            ModelApi::ChatCompletions => "chat",
        }
    }
}

/// A running `tests/support/mock_models.py`, serving a scripted conversation
/// in one [`ModelApi`] on 127.0.0.1. Killed (by pid) and reaped on drop.
pub struct MockServer {
    api: ModelApi,
    child: Child,
    /// Kept open: the mock runs with `--exit-on-stdin-eof`, so it also dies
    /// if this test process is killed before `Drop` can run.
    stdin: Option<ChildStdin>,
    port: u16,
    record: PathBuf,
    stderr: PathBuf,
    dir: TempDir,
}

impl MockServer {
    /// Starts the mock of `api` with `script` (JSON text; format: the
    /// docstring of `tests/support/mock_models.py`) and waits until it
    /// listens.
    ///
    /// Panics if it does not publish its port within 10 s or exits early
    /// (for example on a malformed script), showing its stderr.
    pub fn start(api: ModelApi, script: &str) -> MockServer {
        let dir = tempfile::Builder::new()
            .prefix("hookd-mock-")
            .tempdir()
            .expect("creating mock temp dir");
        let script_path = dir.path().join("script.json");
        let record = dir.path().join("requests.jsonl");
        let port_file = dir.path().join("port");
        let stderr = dir.path().join("mock.stderr");
        fs::write(&script_path, script).expect("writing mock script");

        let mock_py = manifest_dir().join("tests/support/mock_models.py");
        let mut command = Command::new("python3");
        let mut child = process::private_home(&mut command, dir.path())
            .arg(&mock_py)
            .args(["--api", api.flag(), "--exit-on-stdin-eof"])
            .arg("--script")
            .arg(&script_path)
            .arg("--record")
            .arg(&record)
            .arg("--port-file")
            .arg(&port_file)
            .stdin(Stdio::piped())
            .stdout(File::create(dir.path().join("mock.stdout")).unwrap())
            .stderr(File::create(&stderr).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("spawning python3 {}: {e}", mock_py.display()));
        let stdin = child.stdin.take();

        let deadline = Instant::now() + MOCK_START_TIMEOUT;
        let port = loop {
            // The mock writes the file atomically (tmp + rename), so any
            // content we see is complete.
            if let Ok(text) = fs::read_to_string(&port_file) {
                break text
                    .trim()
                    .parse::<u16>()
                    .unwrap_or_else(|e| panic!("mock port file holds {text:?}: {e}"));
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "mock_models.py --api {} exited ({status}) before listening; stderr:\n{}",
                    api.flag(),
                    fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "mock_models.py --api {} did not write {} within {MOCK_START_TIMEOUT:?}; stderr:\n{}",
                    api.flag(),
                    port_file.display(),
                    fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            thread::sleep(Duration::from_millis(10));
        };

        MockServer {
            api,
            child,
            stdin,
            port,
            record,
            stderr,
            dir,
        }
    }

    /// The API this mock speaks.
    pub fn api(&self) -> ModelApi {
        self.api
    }

    /// The TCP port the mock listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Path of the JSONL file holding every request received.
    pub fn record_path(&self) -> &Path {
        &self.record
    }

    /// Every request received so far, in arrival order. Each is
    /// `{"seq", "method", "path", "query", "body", "reply"}`; `body` is the
    /// parsed JSON body (or null) and `reply` says how the mock answered
    /// (`{"kind":"turn","turn":N}`, `default`, `side`, ...: see the mock's
    /// docstring).
    pub fn requests(&self) -> Vec<Value> {
        read_jsonl(&self.record)
    }

    /// The mock's stderr so far (errors; the request log with `--verbose`).
    pub fn stderr(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        // Closing stdin asks the mock to shut down cleanly; if it does not
        // within a second, kill it by pid. Either way reap it.
        drop(self.stdin.take());
        if process::wait_with_deadline(&mut self.child, Duration::from_secs(1)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One line per recorded request (see [`MockServer::requests`]): how the
/// mock answered it. The default of [`AgentCli::describe_requests`].
pub fn describe_requests_briefly(requests: &[Value]) -> String {
    requests
        .iter()
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

// ---------------------------------------------------------------------------
// What differs per agent
// ---------------------------------------------------------------------------

/// One agent CLI as the harness runs it headless: everything that differs
/// from one agent to the next. [`HeadlessRun`] does the rest.
pub trait AgentCli {
    /// What run dirs and panic messages call the agent (`claude`, `codex`).
    fn name(&self) -> &'static str;

    /// The model API its mock must speak.
    fn api(&self) -> ModelApi;

    /// Its configuration dir, relative to its HOME (`.claude`, `.codex`).
    fn config_dir_in_home(&self) -> &'static str;

    /// The whole command line of one headless run on `prompt`, program
    /// first; `extra` are the test's own arguments
    /// ([`HeadlessRun::arg`]), placed where the CLI takes them.
    fn command_line(&self, prompt: &str, extra: &[OsString]) -> Vec<OsString>;

    /// Where HTTP(S) traffic that is not for the mock goes (every proxy
    /// variable is set to it, loopback excepted): a port that refuses, or
    /// the mock itself, which records the attempt.
    fn proxy(&self, mock_url: &str) -> String;

    /// The agent's own environment variables (API key, base URL, config
    /// dir, telemetry off...), set after the hermetic base.
    fn env(&self, dirs: &RunDirs, mock_url: &str) -> Vec<(&'static str, OsString)>;

    /// The recorded mock requests, for the panic message of a run that timed
    /// out.
    fn describe_requests(&self, requests: &[Value]) -> String {
        describe_requests_briefly(requests)
    }
}

// ---------------------------------------------------------------------------
// Running one
// ---------------------------------------------------------------------------

/// The dirs of one run, under one temp dir removed on drop:
/// `<root>/{home,tmp,project,scratch}` and the agent's config dir in home.
pub struct RunDirs {
    root: TempDir,
    config_dir_in_home: &'static str,
}

impl RunDirs {
    fn new(agent: &dyn AgentCli) -> RunDirs {
        let root = tempfile::Builder::new()
            .prefix(&format!("hookd-{}-", agent.name()))
            .tempdir()
            .expect("creating run temp dir");
        let config = format!("home/{}", agent.config_dir_in_home());
        for d in [config.as_str(), "tmp", "project", "scratch"] {
            fs::create_dir_all(root.path().join(d)).expect("creating run dirs");
        }
        RunDirs {
            root,
            config_dir_in_home: agent.config_dir_in_home(),
        }
    }

    /// The root of the run's temp dir (stdout and stderr files land here).
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The CLI's HOME.
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// The CLI's configuration dir (`<home>/.claude`, `<home>/.codex`...).
    pub fn config(&self) -> PathBuf {
        self.home().join(self.config_dir_in_home)
    }

    /// The CLI's TMPDIR.
    pub fn tmp(&self) -> PathBuf {
        self.root.path().join("tmp")
    }

    /// The project dir: the CLI's cwd.
    pub fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// A dir outside the project for hook scripts, sockets, logs. Short
    /// (under the system temp dir) so Unix socket paths fit.
    pub fn scratch(&self) -> PathBuf {
        self.root.path().join("scratch")
    }
}

/// A hermetic headless run of one agent CLI against a [`MockServer`]: its
/// dirs, the test's extra environment and arguments, a timeout. Run it as
/// often as the test wants; each run keeps its stdout and stderr.
pub struct HeadlessRun<A: AgentCli> {
    /// The agent and its options (a permission mode, an approval mode...).
    pub agent: A,
    dirs: RunDirs,
    base_url: String,
    mock_record: PathBuf,
    env: Vec<(OsString, OsString)>,
    args: Vec<OsString>,
    timeout: Duration,
    /// Number of runs so far; names each run's stdout/stderr files.
    runs: Cell<usize>,
}

impl<A: AgentCli> HeadlessRun<A> {
    /// A run of `agent` against `mock` with a 120 s timeout; creates its
    /// dirs (see [`RunDirs`]). Panics if the mock speaks another API.
    pub fn with_agent(agent: A, mock: &MockServer) -> HeadlessRun<A> {
        assert_eq!(
            mock.api(),
            agent.api(),
            "a {} run needs the {} mock",
            agent.name(),
            agent.api().flag()
        );
        HeadlessRun {
            dirs: RunDirs::new(&agent),
            agent,
            base_url: mock.base_url(),
            mock_record: mock.record_path().to_path_buf(),
            env: Vec::new(),
            args: Vec::new(),
            timeout: DEFAULT_RUN_TIMEOUT,
            runs: Cell::new(0),
        }
    }

    /// The run's dirs.
    pub fn dirs(&self) -> &RunDirs {
        &self.dirs
    }

    /// The project dir: the CLI's cwd (where project settings go).
    pub fn project_dir(&self) -> PathBuf {
        self.dirs.project()
    }

    /// A dir outside the project for hook scripts, sockets, logs. Short
    /// (under the system temp dir) so Unix socket paths fit.
    pub fn scratch_dir(&self) -> PathBuf {
        self.dirs.scratch()
    }

    /// The CLI's HOME.
    pub fn home_dir(&self) -> PathBuf {
        self.dirs.home()
    }

    /// The CLI's configuration dir in its HOME (`CLAUDE_CONFIG_DIR`,
    /// `CODEX_HOME`, `~/.gemini`).
    pub fn config_dir(&self) -> PathBuf {
        self.dirs.config()
    }

    /// The mock's URL, as the agent is given it.
    pub fn mock_url(&self) -> &str {
        &self.base_url
    }

    /// Adds an environment variable for the CLI (and so for its hooks), e.g.
    /// `HOOKD_SOCKET`. Set after the hermetic defaults, so it can override
    /// them.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().into(), value.as_ref().into()));
        self
    }

    /// Appends a CLI argument (where [`AgentCli::command_line`] puts them).
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().into());
        self
    }

    /// Overall limit for one run (default 120 s).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = limit;
        self
    }

    /// Writes an executable (0755) file `name` into the scratch dir and
    /// returns its path — for hook scripts (`#!/bin/sh ...`).
    pub fn write_executable(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dirs.scratch().join(name);
        fs::write(&path, contents).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// Runs the CLI headless on `prompt` in the project dir and waits.
    ///
    /// Returns whatever happened; panics only if the CLI cannot be started
    /// or exceeds the timeout, in which case it and all its descendants are
    /// killed (by pid) and its stderr and the mock's requests shown.
    pub fn run_to_end(&self, prompt: &str) -> Finished {
        let n = self.runs.get();
        self.runs.set(n + 1);
        let name = self.agent.name();
        let stdout_path = self.dirs.root().join(format!("{name}-{n}.stdout"));
        let stderr_path = self.dirs.root().join(format!("{name}-{n}.stderr"));
        let line = self.agent.command_line(prompt, &self.args);
        let (program, args) = line
            .split_first()
            .expect("a command line names its program");
        let proxy = self.agent.proxy(&self.base_url);

        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(self.dirs.project())
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
            )
            .env("HOME", self.dirs.home())
            .env("TMPDIR", self.dirs.tmp())
            .env("LANG", "C.UTF-8")
            // Anything that tries to leave the machine meets the agent's
            // proxy. NO_PROXY is essential: the CLIs apply the proxy to
            // loopback too, and without it never reach the mock.
            .env("HTTPS_PROXY", &proxy)
            .env("HTTP_PROXY", &proxy)
            .env("https_proxy", &proxy)
            .env("http_proxy", &proxy)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
            .envs(self.agent.env(&self.dirs, &self.base_url))
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(File::create(&stdout_path).unwrap())
            .stderr(File::create(&stderr_path).unwrap())
            // Own process group, so a timeout can kill the CLI together with
            // what it spawned (see kill_process_tree).
            .process_group(0);

        let started = Instant::now();
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {}: {e}", Path::new(program).display()));
        let status = match process::wait_with_deadline(&mut child, self.timeout) {
            Some(status) => status,
            None => {
                process::kill_process_tree(&mut child);
                panic!(
                    "{name} did not finish within {:?}; killed.\n--- stderr (tail) ---\n{}\n\
                     --- stdout (tail) ---\n{}\n--- mock requests ---\n{}",
                    self.timeout,
                    tail(&fs::read_to_string(&stderr_path).unwrap_or_default(), 30),
                    tail(&fs::read_to_string(&stdout_path).unwrap_or_default(), 20),
                    self.agent.describe_requests(&read_jsonl(&self.mock_record)),
                );
            }
        };
        let elapsed = started.elapsed();
        let stdout = fs::read_to_string(&stdout_path).unwrap_or_default();
        let stderr = fs::read_to_string(&stderr_path).unwrap_or_default();
        let (messages, unparsed) = json_lines(&stdout);
        Finished {
            status,
            messages,
            unparsed,
            stdout,
            stderr,
            elapsed,
        }
    }
}

/// What one headless run produced, before an agent reads it.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    /// stdout lines parsed as JSON (the CLIs' stream-json or `--json`
    /// events).
    pub messages: Vec<Value>,
    /// stdout lines that were not JSON.
    pub unparsed: Vec<String>,
    pub stdout: String,
    pub stderr: String,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

/// The non-blank lines of `stdout` split into those that parse as JSON and
/// those that do not.
fn json_lines(stdout: &str) -> (Vec<Value>, Vec<String>) {
    let mut messages = Vec::new();
    let mut unparsed = Vec::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(v) => messages.push(v),
            Err(_) => unparsed.push(line.to_string()),
        }
    }
    (messages, unparsed)
}

/// The text of what a CLI sent back for a tool call: a string as it is,
/// an array of parts as their `text`s joined by newlines, nothing as "".
/// Anthropic's `tool_result.content` and OpenAI's `function_call_output.output`
/// take the same shapes.
pub fn tool_output_text(output: &Value) -> String {
    match output {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The last `lines` lines of `s`, each shortened, for panic messages.
pub fn tail(s: &str, lines: usize) -> String {
    let all: Vec<&str> = s.lines().collect();
    all[all.len().saturating_sub(lines)..]
        .iter()
        .map(|l| truncate(l, 400))
        .collect::<Vec<_>>()
        .join("\n")
}
