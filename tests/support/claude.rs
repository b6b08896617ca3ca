//! Drive the real Claude Code CLI against a scripted mock of the Anthropic API.
//!
//! Integration tests include this file as a module:
//!
//! ```ignore
//! #[path = "support/claude.rs"]
//! mod claude;
//! use claude::{ClaudeRun, MockApi};
//! use serde_json::json;
//!
//! #[test]
//! fn denies_bash() {
//!     // The model asks for one Bash call, then says "done".
//!     let mock = MockApi::start(&claude::one_bash_call_script("echo hello > out.txt"));
//!     let run = ClaudeRun::new(&mock)
//!         .env("HOOKD_SOCKET", "/tmp/x.sock")
//!         .permission_mode("bypassPermissions");
//!     run.write_settings(&claude::hooks_settings(
//!         &["PreToolUse"],
//!         claude::command_hook("/path/to/hook-forwarder", &["--event", "PreToolUse"]),
//!     ));
//!     let out = run.run("do the thing");
//!     out.assert_success();
//!     let tr = mock.expect_tool_result("toolu_mock_0_");
//!     assert!(tr.is_error, "{}", mock.describe_requests());
//! }
//! ```
//!
//! Requirements: `python3` on PATH (runs `tests/e2e/mock_anthropic.py`) and the
//! pinned CLI, installed with `npm ci --prefix tests/e2e` (or point
//! `$HOOKD_CLAUDE_BIN` at a `claude` binary).
//!
//! Everything a run touches lives in temp dirs that are removed on drop; child
//! processes are killed by pid (a runaway CLI with its process group and every
//! descendant) and reaped.
//! Only std, serde_json and tempfile are used, so any test crate can include it.

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

use process::{kill_process_tree, wait_with_deadline};

/// How long [`MockApi::start`] waits for the mock to publish its port.
const MOCK_START_TIMEOUT: Duration = Duration::from_secs(10);
/// Default limit for one `claude -p` run (a normal run takes well under 2 s).
const DEFAULT_RUN_TIMEOUT: Duration = Duration::from_secs(120);
/// A loopback port nothing listens on (the "discard" port, privileged, so no
/// test process can grab it). Used as HTTP(S)_PROXY: any request that escapes
/// `NO_PROXY` fails at once with ECONNREFUSED instead of reaching the internet
/// or hanging.
const REFUSING_PROXY: &str = "http://127.0.0.1:9";
/// Every hook event the pinned CLI (2.1.330) knows (`HOOK_EVENTS` in the SDK).
pub const ALL_HOOK_EVENTS: &[&str] = hookd::agent::claude::HookEventKind::NAMES;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Path of the `claude` CLI to test against.
///
/// `$HOOKD_CLAUDE_BIN` if set, else `<crate>/tests/e2e/node_modules/.bin/claude`.
/// Panics with the install command if the binary is missing, or if it is only
/// the npm placeholder (the package's postinstall did not run).
pub fn claude_bin() -> PathBuf {
    let (path, from_env) = match std::env::var_os("HOOKD_CLAUDE_BIN") {
        Some(p) if !p.is_empty() => (PathBuf::from(p), true),
        _ => (
            manifest_dir().join("tests/e2e/node_modules/.bin/claude"),
            false,
        ),
    };
    let install = format!(
        "install it with:\n    npm ci --prefix tests/e2e\n(run in {})",
        manifest_dir().display()
    );
    let meta = match fs::metadata(&path) {
        Ok(m) => m,
        Err(e) if from_env => panic!("$HOOKD_CLAUDE_BIN={}: {e}", path.display()),
        Err(e) => panic!(
            "Claude Code CLI not found at {} ({e}); {install}",
            path.display()
        ),
    };
    // The npm package ships a ~500-byte shell stub that its postinstall
    // replaces with the ~380 MB native binary; `npm ci --ignore-scripts`
    // leaves the stub, which only prints an error.
    if meta.len() < 1_000_000 && !from_env {
        panic!(
            "{} is the npm placeholder, not the native CLI (postinstall did not run, \
             e.g. --ignore-scripts or --omit=optional); {install}",
            path.display()
        );
    }
    path
}

// ---------------------------------------------------------------------------
// Scripts and settings
// ---------------------------------------------------------------------------

/// A mock script in which the model makes one Bash call (`command`), then,
/// once it has seen the result, answers "done".
///
/// The tool_use block comes second in the turn (after a short text), so its
/// id is `toolu_mock_0_1`.
pub fn one_bash_call_script(command: &str) -> Value {
    json!({
        "turns": [
            {
                "content": [
                    {"type": "text", "text": "I will run the command."},
                    {"type": "tool_use", "name": "Bash",
                     "input": {"command": command, "description": "scripted e2e command"}}
                ],
                "stop_reason": "tool_use"
            },
            {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}
        ],
        "default_text": "done"
    })
}

/// An exec-form command hook handler: `command` is run directly (no shell)
/// with `args`.
pub fn command_hook(command: impl AsRef<Path>, args: &[&str]) -> Value {
    json!({
        "type": "command",
        "command": command.as_ref().to_str().expect("hook command path must be UTF-8"),
        "args": args,
    })
}

/// `settings.json` content that registers `handler` (see [`command_hook`]) for
/// each event in `events`, with no matcher (matches everything).
pub fn hooks_settings(events: &[&str], handler: Value) -> Value {
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|e| (e.to_string(), json!([{ "hooks": [handler.clone()] }])))
        .collect();
    json!({ "hooks": hooks })
}

// ---------------------------------------------------------------------------
// MockApi
// ---------------------------------------------------------------------------

/// A running `tests/e2e/mock_anthropic.py`, serving a scripted conversation on
/// 127.0.0.1. Killed (by pid) and reaped on drop.
pub struct MockApi {
    child: Child,
    /// Kept open: the mock runs with `--exit-on-stdin-eof`, so it also dies
    /// if this test process is killed before `Drop` can run.
    stdin: Option<ChildStdin>,
    port: u16,
    record: PathBuf,
    stderr: PathBuf,
    dir: TempDir,
}

impl MockApi {
    /// Start the mock with `script` (format: see the docstring of
    /// `tests/e2e/mock_anthropic.py`) and wait until it listens.
    ///
    /// Panics if it does not publish its port within 10 s or exits early
    /// (for example on a malformed script), showing its stderr.
    pub fn start(script: &Value) -> MockApi {
        MockApi::start_text(&serde_json::to_string_pretty(script).unwrap())
    }

    /// [`MockApi::start`] with the script as JSON text, for what a `Value`
    /// cannot hold (a lone surrogate escape such as `\ud800`, which the
    /// real API can send and Python reads).
    pub fn start_text(script: &str) -> MockApi {
        let dir = tempfile::Builder::new()
            .prefix("hookd-mock-")
            .tempdir()
            .expect("creating mock temp dir");
        let script_path = dir.path().join("script.json");
        let record = dir.path().join("requests.jsonl");
        let port_file = dir.path().join("port");
        let stderr = dir.path().join("mock.stderr");
        fs::write(&script_path, script).expect("writing mock script");

        let mock_py = manifest_dir().join("tests/e2e/mock_anthropic.py");
        let mut command = Command::new("python3");
        let mut child = process::private_home(&mut command, dir.path())
            .arg(&mock_py)
            .arg("--script")
            .arg(&script_path)
            .arg("--record")
            .arg(&record)
            .arg("--port-file")
            .arg(&port_file)
            .arg("--exit-on-stdin-eof")
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
                    "mock_anthropic.py exited ({status}) before listening; stderr:\n{}",
                    fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "mock_anthropic.py did not write {} within {:?}; stderr:\n{}",
                    port_file.display(),
                    MOCK_START_TIMEOUT,
                    fs::read_to_string(&stderr).unwrap_or_default()
                );
            }
            thread::sleep(Duration::from_millis(10));
        };

        MockApi {
            child,
            stdin,
            port,
            record,
            stderr,
            dir,
        }
    }

    /// The TCP port the mock listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://127.0.0.1:<port>`, the value for `ANTHROPIC_BASE_URL`.
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
    /// (`{"kind":"turn","turn":N}`, `default`, `side`, `count_tokens`, ...).
    pub fn requests(&self) -> Vec<Value> {
        read_jsonl(&self.record)
    }

    /// The bodies of the `POST /v1/messages` requests, in arrival order.
    pub fn message_requests(&self) -> Vec<Value> {
        self.requests()
            .into_iter()
            .filter(|r| r["method"] == "POST" && r["path"] == "/v1/messages")
            .map(|r| r["body"].clone())
            .collect()
    }

    /// Every `tool_result` block in the *last user message* of each recorded
    /// `/v1/messages` request — i.e. what the CLI reported back to the model
    /// after running (or refusing) a tool. In arrival order; a side request
    /// that copies the conversation yields the same result again.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        tool_results_in(&self.requests())
    }

    /// The first tool_result whose `tool_use_id` starts with `id_prefix`
    /// (e.g. `"toolu_mock_0_"` for any tool call of scripted turn 0).
    /// Panics, listing the recorded requests, if there is none.
    pub fn expect_tool_result(&self, id_prefix: &str) -> ToolResult {
        self.tool_results()
            .into_iter()
            .find(|t| t.tool_use_id.starts_with(id_prefix))
            .unwrap_or_else(|| {
                panic!(
                    "expected a follow-up /v1/messages request whose last user message has a \
                     tool_result for {id_prefix}*; recorded:\n{}",
                    self.describe_requests()
                )
            })
    }

    /// Asserts that the model was told the scripted tool call was refused:
    /// the next request carries an error tool_result for `toolu_mock_0_*`
    /// whose text contains `reason`. Returns that tool_result.
    pub fn expect_refusal(&self, reason: &str) -> ToolResult {
        let result = self.expect_tool_result("toolu_mock_0_");
        assert!(
            result.is_error && result.content.contains(reason),
            "expected an error tool_result containing {reason:?} in the next model request, got {:?}\nrequests:\n{}",
            result.raw,
            self.describe_requests()
        );
        result
    }

    /// The mock's stderr so far (request log with `--verbose`, errors).
    pub fn stderr(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// A compact, human-readable list of the recorded requests, for panic
    /// messages: one line per request with how it was answered and the start
    /// of its last user/assistant message.
    pub fn describe_requests(&self) -> String {
        let reqs = self.requests();
        if reqs.is_empty() {
            return format!("  (no requests recorded; mock stderr: {:?})", self.stderr());
        }
        describe_requests(&reqs)
    }
}

/// One line per recorded request (see [`MockApi::requests`]): how the mock
/// answered it and the start of its last user/assistant message.
pub fn describe_requests(requests: &[Value]) -> String {
    requests
        .iter()
        .map(|r| {
            let body = &r["body"];
            // The CLI appends role "system" entries; the last user or
            // assistant message is the informative one.
            let last = body["messages"]
                .as_array()
                .and_then(|m| m.iter().rev().find(|m| m["role"] != "system"))
                .map(|m| {
                    format!(
                        "{}: {}",
                        m["role"],
                        truncate(&m["content"].to_string(), 300)
                    )
                })
                .unwrap_or_default();
            format!(
                "  #{} {} {} reply={} tools={} messages={} last {}",
                r["seq"],
                r["method"].as_str().unwrap_or("?"),
                r["path"].as_str().unwrap_or("?"),
                r["reply"],
                body["tools"].as_array().map_or(0, |t| t.len()),
                body["messages"].as_array().map_or(0, |m| m.len()),
                last
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Drop for MockApi {
    fn drop(&mut self) {
        // Closing stdin asks the mock to shut down cleanly; if it does not
        // within a second, kill it by pid. Either way reap it.
        drop(self.stdin.take());
        if wait_with_deadline(&mut self.child, Duration::from_secs(1)).is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// One `tool_result` block the CLI sent back to the model.
#[derive(Debug, Clone)]
pub struct ToolResult {
    /// `seq` of the recorded request that carried it.
    pub request_seq: u64,
    pub tool_use_id: String,
    pub is_error: bool,
    /// The result's text: the string content, or its text blocks joined by
    /// newlines.
    pub content: String,
    /// The whole block as sent.
    pub raw: Value,
}

/// The tool_result blocks in the last user message of each `/v1/messages`
/// request in `requests` (as returned by [`MockApi::requests`]).
pub fn tool_results_in(requests: &[Value]) -> Vec<ToolResult> {
    let mut out = Vec::new();
    for r in requests {
        if r["path"] != "/v1/messages" {
            continue;
        }
        let Some(messages) = r["body"]["messages"].as_array() else {
            continue;
        };
        // Role "system" entries may be interleaved; the tool results live in
        // the last *user* message.
        let Some(last_user) = messages.iter().rev().find(|m| m["role"] == "user") else {
            continue;
        };
        let Some(blocks) = last_user["content"].as_array() else {
            continue;
        };
        for b in blocks.iter().filter(|b| b["type"] == "tool_result") {
            let content = match &b["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            out.push(ToolResult {
                request_seq: r["seq"].as_u64().unwrap_or(0),
                tool_use_id: b["tool_use_id"].as_str().unwrap_or_default().to_string(),
                is_error: b["is_error"].as_bool().unwrap_or(false),
                content,
                raw: b.clone(),
            });
        }
    }
    out
}

// ---------------------------------------------------------------------------
// ClaudeRun
// ---------------------------------------------------------------------------

/// A hermetic `claude -p` invocation: its own HOME, config dir, TMPDIR and
/// project dir (all under one temp dir removed on drop), a scrubbed
/// environment, and the mock as its API.
pub struct ClaudeRun {
    root: TempDir,
    base_url: String,
    mock_record: PathBuf,
    permission_mode: String,
    env: Vec<(OsString, OsString)>,
    args: Vec<OsString>,
    timeout: Duration,
    /// Number of runs so far; names each run's stdout/stderr files.
    runs: Cell<usize>,
}

impl ClaudeRun {
    /// A run against `mock` in bypassPermissions mode with a 120 s timeout.
    /// Creates `<root>/home`, `<root>/home/.claude` (CLAUDE_CONFIG_DIR),
    /// `<root>/tmp`, `<root>/project` and `<root>/scratch`.
    pub fn new(mock: &MockApi) -> ClaudeRun {
        let root = tempfile::Builder::new()
            .prefix("hookd-e2e-")
            .tempdir()
            .expect("creating run temp dir");
        for d in ["home/.claude", "tmp", "project", "scratch"] {
            fs::create_dir_all(root.path().join(d)).expect("creating run dirs");
        }
        ClaudeRun {
            root,
            base_url: mock.base_url(),
            mock_record: mock.record_path().to_path_buf(),
            permission_mode: "bypassPermissions".into(),
            env: Vec::new(),
            args: Vec::new(),
            timeout: DEFAULT_RUN_TIMEOUT,
            runs: Cell::new(0),
        }
    }

    /// `--permission-mode` (`bypassPermissions`, `default`, `acceptEdits`,
    /// `plan`, `dontAsk`, `auto`).
    pub fn permission_mode(mut self, mode: &str) -> Self {
        self.permission_mode = mode.into();
        self
    }

    /// Add an environment variable for the CLI (and so for its hooks), e.g.
    /// `HOOKD_SOCKET`. Set after the hermetic defaults, so it can override them.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().into(), value.as_ref().into()));
        self
    }

    /// Append an extra CLI argument (e.g. `--include-hook-events`).
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().into());
        self
    }

    /// Overall limit for [`run`](Self::run) (default 120 s).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = limit;
        self
    }

    /// The project dir: the CLI's cwd, where `.claude/settings.json` goes.
    pub fn project_dir(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// A scratch dir outside the project, for hook scripts, sockets, logs.
    /// Short path (under the system temp dir) so Unix socket paths fit.
    pub fn scratch_dir(&self) -> PathBuf {
        self.root.path().join("scratch")
    }

    /// The CLI's HOME.
    pub fn home_dir(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// The CLI's CLAUDE_CONFIG_DIR (`<home>/.claude`); transcripts land here.
    pub fn config_dir(&self) -> PathBuf {
        self.root.path().join("home/.claude")
    }

    /// Write `<project>/.claude/settings.json` (replacing any previous one).
    pub fn write_settings(&self, settings: &Value) {
        let dir = self.project_dir().join(".claude");
        fs::create_dir_all(&dir).expect("creating .claude dir");
        fs::write(
            dir.join("settings.json"),
            serde_json::to_vec_pretty(settings).unwrap(),
        )
        .expect("writing settings.json");
    }

    /// Write an executable (0755) file `name` into the scratch dir and return
    /// its path — handy for hook scripts (`#!/bin/sh ...`).
    pub fn write_executable(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.scratch_dir().join(name);
        fs::write(&path, contents).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// Run `claude -p <prompt> --output-format stream-json --verbose
    /// --permission-mode <mode>` in the project dir and wait for it.
    ///
    /// Returns whatever happened (check [`ClaudeOutput::assert_success`]);
    /// panics only if the CLI cannot be started or exceeds the timeout, in
    /// which case it and all its descendants are killed (by pid) and its
    /// stderr shown.
    pub fn run(&self, prompt: &str) -> ClaudeOutput {
        let bin = claude_bin();
        let n = self.runs.get();
        self.runs.set(n + 1);
        let stdout_path = self.root.path().join(format!("claude-{n}.stdout"));
        let stderr_path = self.root.path().join(format!("claude-{n}.stderr"));
        let tmp = self.root.path().join("tmp");

        let mut cmd = Command::new(&bin);
        cmd.arg("-p")
            .arg(prompt)
            .args([
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
            ])
            .arg(&self.permission_mode)
            .args(&self.args)
            .current_dir(self.project_dir())
            .env_clear()
            .env(
                "PATH",
                std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into()),
            )
            .env("HOME", self.home_dir())
            .env("CLAUDE_CONFIG_DIR", self.config_dir())
            .env("TMPDIR", &tmp)
            .env("CLAUDE_CODE_TMPDIR", &tmp)
            .env("LANG", "C.UTF-8")
            .env("ANTHROPIC_BASE_URL", &self.base_url)
            .env("ANTHROPIC_API_KEY", "sk-ant-hookd-e2e-not-a-real-key")
            // Without this the CLI talks to the public API host directly,
            // ignoring the base URL.
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            // A mock failure should fail the run at once, not after ~3 min
            // of exponential back-off (the default is 10 retries).
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            // Needed (exactly "1") for bypassPermissions when running as root.
            .env("IS_SANDBOX", "1")
            // Anything that tries to leave the machine hits a closed port.
            // NO_PROXY is essential: the CLI applies the proxy to loopback
            // too, and without it never reaches the mock.
            .env("HTTPS_PROXY", REFUSING_PROXY)
            .env("HTTP_PROXY", REFUSING_PROXY)
            .env("https_proxy", REFUSING_PROXY)
            .env("http_proxy", REFUSING_PROXY)
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
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
            .unwrap_or_else(|e| panic!("spawning {}: {e}", bin.display()));
        let status = match wait_with_deadline(&mut child, self.timeout) {
            Some(status) => status,
            None => {
                kill_process_tree(&mut child);
                panic!(
                    "claude did not finish within {:?}; killed.\n--- stderr ---\n{}\n\
                     --- stdout (tail) ---\n{}\n--- mock requests ---\n{}",
                    self.timeout,
                    fs::read_to_string(&stderr_path).unwrap_or_default(),
                    tail(&fs::read_to_string(&stdout_path).unwrap_or_default(), 20),
                    describe_requests(&read_jsonl(&self.mock_record)),
                );
            }
        };
        let elapsed = started.elapsed();

        let stdout = fs::read_to_string(&stdout_path).unwrap_or_default();
        let stderr = fs::read_to_string(&stderr_path).unwrap_or_default();
        let mut messages = Vec::new();
        let mut unparsed = Vec::new();
        for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
            match serde_json::from_str::<Value>(line) {
                Ok(v) => messages.push(v),
                Err(_) => unparsed.push(line.to_string()),
            }
        }
        ClaudeOutput {
            status,
            messages,
            unparsed,
            stdout,
            stderr,
            elapsed,
        }
    }
}

fn tail(s: &str, lines: usize) -> String {
    let all: Vec<&str> = s.lines().collect();
    all[all.len().saturating_sub(lines)..]
        .iter()
        .map(|l| truncate(l, 400))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What one `claude -p` run produced.
#[derive(Debug)]
pub struct ClaudeOutput {
    pub status: ExitStatus,
    /// stdout lines parsed as JSON: the stream-json messages (`system` init,
    /// `assistant`, `user`, `result`, and `system` hook records with
    /// `--include-hook-events`).
    pub messages: Vec<Value>,
    /// stdout lines that were not JSON (normally none).
    pub unparsed: Vec<String>,
    pub stdout: String,
    pub stderr: String,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

impl ClaudeOutput {
    /// The final `{"type":"result"}` message, if any.
    pub fn try_result(&self) -> Option<&Value> {
        self.messages.iter().rev().find(|m| m["type"] == "result")
    }

    /// The final `{"type":"result"}` message; panics (showing the output) if
    /// there is none.
    pub fn result(&self) -> &Value {
        self.try_result()
            .unwrap_or_else(|| panic!("no result message in claude's output\n{}", self.describe()))
    }

    /// Messages with the given `type` (`system`, `assistant`, `user`, `result`).
    pub fn messages_of_type(&self, ty: &str) -> Vec<&Value> {
        self.messages.iter().filter(|m| m["type"] == ty).collect()
    }

    /// Panic unless the CLI exited 0 and its result says success.
    ///
    /// Checks `is_error` as well as `subtype`: an API failure still comes back
    /// as `subtype:"success"` with `is_error:true`.
    pub fn assert_success(&self) {
        let ok = self.status.success()
            && self
                .try_result()
                .is_some_and(|r| r["subtype"] == "success" && r["is_error"] == false);
        assert!(ok, "expected a successful claude run\n{}", self.describe());
    }

    /// Exit status, stderr, and the tail of stdout, for panic messages.
    pub fn describe(&self) -> String {
        format!(
            "exit: {} (after {:?})\n--- stderr ---\n{}\n--- stdout (last 15 lines) ---\n{}{}",
            self.status,
            self.elapsed,
            self.stderr,
            tail(&self.stdout, 15),
            if self.unparsed.is_empty() {
                String::new()
            } else {
                format!("\n--- non-JSON stdout ---\n{}", self.unparsed.join("\n"))
            }
        )
    }
}
