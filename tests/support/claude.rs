//! Drive the real Claude Code CLI against a scripted mock of the Anthropic API.
//!
//! Integration tests include this file as a module:
//!
//! ```ignore
//! use crate::support::claude;
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
//! Requirements: `python3` on PATH (runs `tests/support/mock_models.py --api
//! anthropic`) and the pinned CLI, installed with `npm ci --prefix tests/e2e`
//! (or point `$HOOKD_CLAUDE_BIN` at a `claude` binary).
//!
//! The Claude-specific layer over `agent_cli.rs` (the one harness every agent
//! shares): the [`Claude`] [`AgentCli`], its settings and scripts, and what
//! the Anthropic mock recorded (tool results). Everything a run touches lives
//! in temp dirs that are removed on drop; child processes are killed by pid
//! (a runaway CLI with its process group and every descendant) and reaped.
//! Only std, serde_json and tempfile are used, so any test crate can include it.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use super::agent_cli;
// Not every test crate that includes this module has a test to skip.
#[allow(unused_imports)]
pub use agent_cli::{process::node_absent, records::read_jsonl};

use agent_cli::records::truncate;
use agent_cli::{
    manifest_dir, tail, AgentCli, Finished, HeadlessRun, MockServer, ModelApi, RunDirs,
};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

/// A loopback port nothing listens on (the "discard" port, privileged, so no
/// test process can grab it). Used as HTTP(S)_PROXY: any request that escapes
/// `NO_PROXY` fails at once with ECONNREFUSED instead of reaching the internet
/// or hanging.
const REFUSING_PROXY: &str = "http://127.0.0.1:9";
/// Every hook event the pinned CLI (2.1.330) knows (`HOOK_EVENTS` in the SDK).
pub const ALL_HOOK_EVENTS: &[&str] = hookd::agent::claude::HookEventKind::NAMES;

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

/// The mock of the Anthropic Messages API (`tests/support/mock_models.py
/// --api anthropic`), serving a scripted conversation on 127.0.0.1. Killed
/// (by pid) and reaped on drop.
pub struct MockApi {
    server: MockServer,
}

impl MockApi {
    /// Start the mock with `script` (format: see the docstring of
    /// `tests/support/mock_models.py`) and wait until it listens.
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
        MockApi {
            server: MockServer::start(ModelApi::Anthropic, script),
        }
    }

    /// The TCP port the mock listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// `http://127.0.0.1:<port>`, the value for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// Path of the JSONL file holding every request received.
    pub fn record_path(&self) -> &Path {
        self.server.record_path()
    }

    /// Every request received so far, in arrival order. Each is
    /// `{"seq", "method", "path", "query", "body", "reply"}`; `body` is the
    /// parsed JSON body (or null) and `reply` says how the mock answered
    /// (`{"kind":"turn","turn":N}`, `default`, `side`, `count_tokens`, ...).
    pub fn requests(&self) -> Vec<Value> {
        self.server.requests()
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
        self.server.stderr()
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
            let content = agent_cli::tool_output_text(&b["content"]);
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

/// Claude Code as [`HeadlessRun`] runs it: `claude -p` with stream-json
/// output in a permission mode, against the Anthropic mock.
pub struct Claude {
    /// `--permission-mode`.
    permission_mode: String,
}

impl AgentCli for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn api(&self) -> ModelApi {
        ModelApi::Anthropic
    }

    fn config_dir_in_home(&self) -> &'static str {
        ".claude"
    }

    fn command_line(&self, prompt: &str, extra: &[OsString]) -> Vec<OsString> {
        let mut line: Vec<OsString> = vec![claude_bin().into(), "-p".into(), prompt.into()];
        line.extend(
            [
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                &self.permission_mode,
            ]
            .map(OsString::from),
        );
        line.extend_from_slice(extra);
        line
    }

    fn proxy(&self, _mock_url: &str) -> String {
        REFUSING_PROXY.into()
    }

    fn env(&self, dirs: &RunDirs, mock_url: &str) -> Vec<(&'static str, OsString)> {
        claude_env(&dirs.config(), &dirs.tmp(), mock_url)
    }

    fn describe_requests(&self, requests: &[Value]) -> String {
        describe_requests(requests)
    }
}

/// Claude Code's environment against the mock model API at `base_url`: its
/// config and temp dirs, the mock as its API with a fake key, no traffic
/// besides (telemetry, updater, error reports) and no retries. The CLI's
/// runs ([`ClaudeRun`]) and the Agent SDK's (`tests/adapter/adapter.rs`: the
/// SDK runs the same CLI) both take it.
pub fn claude_env(config: &Path, tmp: &Path, base_url: &str) -> Vec<(&'static str, OsString)> {
    vec![
        ("CLAUDE_CONFIG_DIR", config.into()),
        ("CLAUDE_CODE_TMPDIR", tmp.into()),
        ("ANTHROPIC_BASE_URL", base_url.into()),
        (
            "ANTHROPIC_API_KEY",
            "sk-ant-hookd-e2e-not-a-real-key".into(),
        ),
        // Without this the CLI talks to the public API host directly,
        // ignoring the base URL.
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
        // A mock failure should fail the run at once, not after ~3 min
        // of exponential back-off (the default is 10 retries).
        ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
        // Needed (exactly "1") for bypassPermissions when running as root.
        ("IS_SANDBOX", "1".into()),
    ]
}

/// A hermetic `claude -p` invocation: its own HOME, config dir, TMPDIR and
/// project dir (all under one temp dir removed on drop), a scrubbed
/// environment, and the mock as its API. `env`, `arg`, `timeout`, the dirs
/// and `write_executable` are [`HeadlessRun`]'s.
pub type ClaudeRun = HeadlessRun<Claude>;

impl ClaudeRun {
    /// A run against `mock` in bypassPermissions mode with a 120 s timeout.
    /// Creates `<root>/home`, `<root>/home/.claude` (CLAUDE_CONFIG_DIR),
    /// `<root>/tmp`, `<root>/project` and `<root>/scratch`.
    pub fn new(mock: &MockApi) -> ClaudeRun {
        let claude = Claude {
            permission_mode: "bypassPermissions".into(),
        };
        HeadlessRun::with_agent(claude, &mock.server)
    }

    /// `--permission-mode` (`bypassPermissions`, `default`, `acceptEdits`,
    /// `plan`, `dontAsk`, `auto`).
    pub fn permission_mode(mut self, mode: &str) -> Self {
        self.agent.permission_mode = mode.into();
        self
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

    /// Run `claude -p <prompt> --output-format stream-json --verbose
    /// --permission-mode <mode>` in the project dir and wait for it.
    ///
    /// Returns whatever happened (check [`ClaudeOutput::assert_success`]);
    /// panics only if the CLI cannot be started or exceeds the timeout, in
    /// which case it and all its descendants are killed (by pid) and its
    /// stderr shown.
    pub fn run(&self, prompt: &str) -> ClaudeOutput {
        self.run_to_end(prompt)
    }
}

/// What one `claude -p` run produced: `messages` are the stream-json
/// messages (`system` init, `assistant`, `user`, `result`, and `system` hook
/// records with `--include-hook-events`); `unparsed` is normally empty.
pub type ClaudeOutput = Finished;

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
