//! Agent-SDK runs: the adapter supervisor.
//!
//! A run is one child process, `node <adapter-dir>/adapter.mjs`, in a process
//! group of its own, speaking the NDJSON of [`crate::protocol::adapter`] on
//! its stdin and stdout (its stderr goes to our tracing log). Its life:
//!
//! 1. `run` request → [`Runs::start`] checks the options, the provider (key
//!    available, nothing overriding a claude-max login), Node.js on PATH and
//!    the adapter's `node_modules`, refusing with a message that says what
//!    to do; then spawns the child with an environment built from scratch.
//! 2. The child says `ready`; once the requesting connection has its `ok`,
//!    the supervisor sends `start`.
//! 3. Each `hook_event` is answered by [`hook::answer_in`] — the very path of
//!    a forwarder's hook: rules, pending table, clients, log, fallbacks —
//!    and the `hook_result` goes back as `decision`. Each `sdk_message`
//!    becomes a log line and a pushed frame.
//! 4. `done` or `error`, then the child exits and is reaped; whatever is
//!    left of its process group is killed; `run_done` is logged and pushed.
//!
//! `abort` is graceful first (the adapter calls the SDK's `interrupt()`);
//! after [`ABORT_GRACE`] the process group is killed. A child that crashes
//! or is killed ends its run with an error; the run's pending events fall
//! back at once; nothing else is affected.
//!
//! Architecture invariant: the supervisor never judges anything itself.
//! Every decision of a run is made by `hook::answer_in`, exactly as for
//! Claude Code's command hooks.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use futures_util::StreamExt;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin};
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::hook::{self, RunLink};
use super::hub::ClientQueue;
use super::Shared;
use crate::agent::claude::output::HookOutput;
use crate::agent::claude::sdk::{sdk_result, SdkCallback};
use crate::protocol::adapter::{Decision, Empty, FromAdapter, Start, ToAdapter};
use crate::protocol::codec::FrameCodec;
use crate::protocol::{ErrorCode, Harness, HookRequest, Reply, RunDone, RunRequest, RunStart};

/// Between a graceful `abort` and killing the run's process group.
pub const ABORT_GRACE: Duration = Duration::from_secs(5);

/// The same, when the daemon itself is stopping: it should not hang around.
const SHUTDOWN_ABORT_GRACE: Duration = Duration::from_secs(2);

/// How long the adapter may take to load the SDK and say `ready`.
const READY_TIMEOUT: Duration = Duration::from_secs(30);

/// After the adapter closes its stdout, how long it has to exit.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// The timeout the adapter registers for its hook callbacks, as Claude Code
/// uses for command hooks by default; each `hook_event` is answered before
/// it passes (pending events are bounded by `[decisions] timeout` first).
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(600);

/// Largest line the adapter may write: SDK messages carry tool results.
const ADAPTER_MAX_FRAME: usize = 64 * 1024 * 1024;

/// Longest stderr line logged in one piece.
const STDERR_LINE: u64 = 16 * 1024;

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

/// Why a run was not started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// `invalid_request` (the request or the config is wrong), `unavailable`
    /// (Node.js or the adapter's dependencies are missing), `not_found`,
    /// `shutting_down`.
    pub code: ErrorCode,
    /// Names the field or says what to install.
    pub message: String,
}

impl Refused {
    fn invalid(message: impl Into<String>) -> Refused {
        Refused {
            code: ErrorCode::InvalidRequest,
            message: message.into(),
        }
    }

    fn unavailable(message: impl Into<String>) -> Refused {
        Refused {
            code: ErrorCode::Unavailable,
            message: message.into(),
        }
    }
}

/// One run in the table, as `status` shows it.
struct RunEntry {
    pid: u32,
    client: String,
    started_at: SystemTime,
    started: Instant,
    provider: Option<String>,
    model: Option<String>,
    cwd: String,
    session_id: Option<String>,
    state: &'static str,
    aborts: mpsc::UnboundedSender<String>,
    /// Follow-up user messages for the supervisor to hand the adapter.
    steers: mpsc::UnboundedSender<String>,
    /// The prompt's first [`PROMPT_SUMMARY_CHARS`] characters.
    prompt: String,
    /// Assistant messages so far (one per model turn).
    turns: u64,
    /// The cost so far, once a result message said.
    cost_usd: Option<f64>,
}

/// How much of a run's prompt `status` shows.
pub const PROMPT_SUMMARY_CHARS: usize = 200;

/// How many ended runs are remembered, to tell a `steer` that its run has
/// ended rather than never existed.
const REMEMBERED_ENDED_RUNS: usize = 256;

/// The run table and the supervisors' tasks.
#[derive(Debug)]
pub struct Runs {
    adapter_dir: PathBuf,
    table: Mutex<BTreeMap<String, RunEntry>>,
    /// Recently ended runs, oldest first.
    ended: Mutex<std::collections::VecDeque<String>>,
    tasks: TaskTracker,
}

impl std::fmt::Debug for RunEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEntry")
            .field("pid", &self.pid)
            .field("state", &self.state)
            .finish()
    }
}

/// A run that was spawned; [`Started::go`] lets it start once the client
/// has been told its id (so `ok` precedes the run's frames).
#[derive(Debug)]
pub struct Started {
    /// The new run's id.
    pub run_id: String,
    go: oneshot::Sender<()>,
}

impl Started {
    /// Sends the adapter its `start`.
    pub fn go(self) {
        let _ = self.go.send(());
    }
}

/// What a run will be spawned with, once every check passed.
struct Plan {
    options: Map<String, Value>,
    env: Vec<(OsString, OsString)>,
    cwd: PathBuf,
    node: PathBuf,
}

impl Runs {
    /// A run table whose adapters live in `adapter_dir`.
    pub fn new(adapter_dir: PathBuf) -> Runs {
        Runs {
            adapter_dir,
            table: Mutex::new(BTreeMap::new()),
            ended: Mutex::new(std::collections::VecDeque::new()),
            tasks: TaskTracker::new(),
        }
    }

    /// Where `adapter.mjs` and its `node_modules` are.
    pub fn adapter_dir(&self) -> &Path {
        &self.adapter_dir
    }

    /// Checks and spawns a run for client `client`, whose connection's
    /// queue is `owner`. The run waits for [`Started::go`].
    pub fn start(
        &self,
        shared: &Arc<Shared>,
        request: RunRequest,
        owner: ClientQueue,
        client: &str,
        shutdown: &CancellationToken,
    ) -> Result<Started, Refused> {
        if shutdown.is_cancelled() {
            return Err(Refused {
                code: ErrorCode::ShuttingDown,
                message: "hookd is stopping".into(),
            });
        }
        let mut plan = self.plan(shared, &request)?;
        let run_id = crate::event::new_id().to_string();
        let session_id = choose_session(&mut plan.options);
        let mut child = tokio::process::Command::new(&plan.node)
            .arg(self.adapter_dir.join("adapter.mjs"))
            .current_dir(&plan.cwd)
            .env_clear()
            .envs(plan.env.iter().map(|(k, v)| (k, v)))
            // The SDK's Claude Code process and the command hooks it runs
            // inherit these: hook-forwarder relays HOOKD_RUN_ID, so a hook
            // registered by `hookd install` comes back here marked as a copy
            // of this run's own (see `super::unjudged`).
            .env(super::unjudged::RUN_ID_ENV, &run_id)
            .env(
                "HOOKD_SOCKET",
                std::path::absolute(&shared.socket).unwrap_or_else(|_| shared.socket.clone()),
            )
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            // Its own group: abort can kill the adapter together with the
            // Claude Code process the SDK starts, and nothing of ours.
            .process_group(0)
            .spawn()
            .map_err(|e| {
                Refused::unavailable(format!("could not start {}: {e}", plan.node.display()))
            })?;
        let pid = child.id().unwrap_or_default();
        let model = plan
            .options
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let cwd = plan.cwd.display().to_string();
        let (abort_tx, aborts) = mpsc::unbounded_channel();
        let (steer_tx, steers) = mpsc::unbounded_channel();
        let (go, go_rx) = oneshot::channel();
        let now = SystemTime::now();
        self.table.lock().unwrap_or_else(|e| e.into_inner()).insert(
            run_id.clone(),
            RunEntry {
                pid,
                client: client.to_string(),
                started_at: now,
                started: Instant::now(),
                provider: request.provider.clone(),
                model: model.clone(),
                cwd: cwd.clone(),
                session_id: Some(session_id),
                state: "starting",
                aborts: abort_tx.clone(),
                steers: steer_tx,
                prompt: request.prompt.chars().take(PROMPT_SUMMARY_CHARS).collect(),
                turns: 0,
                cost_usd: None,
            },
        );
        tracing::info!(run = %run_id, pid, client, provider = ?request.provider, model = ?model, cwd, "run started");
        let record = RunStart {
            run_id: run_id.clone(),
            received_at: crate::time::rfc3339(now),
            client: client.to_string(),
            prompt: request.prompt.clone(),
            cwd,
            provider: request.provider.clone(),
            model,
            pid,
        };
        publish_record(
            shared,
            &Reply::RunStart(record),
            None,
            Some(owner.client_id),
        );
        let run = Run {
            link: RunLink {
                run_id: run_id.clone().into(),
                owner,
                ended: CancellationToken::new(),
                can_use_tool: registers_can_use_tool(&plan.options),
            },
            pid,
            started: Instant::now(),
            start: Start {
                run_id: run_id.clone(),
                prompt: request.prompt,
                options: plan.options,
                hook_timeout_s: HOOK_TIMEOUT.as_secs(),
            },
            _abort_tx: abort_tx,
        };
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        tokio::spawn(copy_stderr(stderr, run.link.run_id.clone(), shared.clone()));
        let (shared, shutdown) = (shared.clone(), shutdown.clone());
        self.tasks.spawn(async move {
            let outcome = supervise(
                &run, child, stdin, stdout, go_rx, aborts, steers, &shared, &shutdown,
            )
            .await;
            finish(&run, outcome, &shared).await;
        });
        Ok(Started { run_id, go })
    }

    /// Every check that can refuse a run before anything is spawned.
    fn plan(&self, shared: &Shared, request: &RunRequest) -> Result<Plan, Refused> {
        let daemon_env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        let (provider, env) = match &request.provider {
            None => (None, daemon_env),
            Some(name) => {
                let provider = shared.config.providers.get(name).ok_or_else(|| {
                    let known: Vec<&str> =
                        shared.config.providers.keys().map(String::as_str).collect();
                    Refused::invalid(format!(
                        "provider `{name}` is not configured: add [providers.{name}] to hookd's \
                         config file ({})",
                        if known.is_empty() {
                            "it has no providers".to_string()
                        } else {
                            format!("it has: {}", known.join(", "))
                        }
                    ))
                })?;
                let env = provider
                    .environment(&daemon_env)
                    .map_err(Refused::invalid)?;
                (Some(provider), env)
            }
        };
        let mut options = provider.map(|p| p.sdk_options()).unwrap_or_default();
        let cwd = sdk_options(&request.options, &mut options)?;
        let node = find_on_path("node", &env).ok_or_else(|| {
            Refused::unavailable(
                "Node.js (`node`) is not on hookd's PATH; the agent-SDK adapter runs on it: \
                 install Node.js >= 18 and restart hookd",
            )
        })?;
        let sdk = self
            .adapter_dir
            .join("node_modules/@anthropic-ai/claude-agent-sdk/package.json");
        if !sdk.is_file() {
            let message = format!(
                "the agent-SDK adapter is not installed in {dir}: run `hookd adapter install` \
                 (or, for an adapter directory of hookd's source, `npm ci --prefix {dir}`)",
                dir = self.adapter_dir.display()
            );
            return Err(Refused::unavailable(message));
        }
        if !self.adapter_dir.join("adapter.mjs").is_file() {
            return Err(Refused::unavailable(format!(
                "no adapter.mjs in {}: run `hookd adapter install`, or name a directory holding \
                 the adapter with --adapter-dir / HOOKD_ADAPTER_DIR",
                self.adapter_dir.display()
            )));
        }
        let cwd = match cwd {
            Some(cwd) => cwd,
            None => std::env::current_dir()
                .map_err(|e| Refused::invalid(format!("options.cwd: none given and {e}")))?,
        };
        options.insert("cwd".into(), cwd.display().to_string().into());
        Ok(Plan {
            options,
            env,
            cwd,
            node,
        })
    }

    /// Ends run `run_id`: gracefully, then by force after [`ABORT_GRACE`].
    /// `by` says who asked (`client:NAME`).
    pub fn abort(&self, run_id: &str, by: &str) -> Result<(), Refused> {
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        match table.get(run_id) {
            Some(entry) => {
                let _ = entry.aborts.send(by.to_string());
                Ok(())
            }
            None => Err(Refused {
                code: ErrorCode::NotFound,
                message: format!("no run {run_id} (it may have ended already)"),
            }),
        }
    }

    /// Sends `text` into run `run_id` as a follow-up user message (the
    /// SDK's streaming input).
    pub fn steer(&self, run_id: &str, text: &str) -> Result<(), Refused> {
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        match table.get(run_id) {
            Some(entry) if entry.state == "running" => {
                let _ = entry.steers.send(text.to_string());
                Ok(())
            }
            Some(entry) => Err(Refused::invalid(format!(
                "run {run_id} is {}, not running: it cannot take a message now",
                entry.state
            ))),
            None if self
                .ended
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|id| id == run_id) =>
            {
                Err(Refused::invalid(format!("run {run_id} has ended")))
            }
            None => Err(Refused {
                code: ErrorCode::NotFound,
                message: format!("no run {run_id}"),
            }),
        }
    }

    /// The runs now, oldest first, for `status`.
    pub fn list(&self) -> Vec<crate::protocol::RunSummary> {
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table
            .iter()
            .map(|(id, r)| crate::protocol::RunSummary {
                run_id: id.clone(),
                state: r.state.to_string(),
                pid: r.pid,
                client: r.client.clone(),
                started_at: crate::time::rfc3339(r.started_at),
                elapsed_s: r.started.elapsed().as_secs_f64(),
                provider: r.provider.clone(),
                model: r.model.clone(),
                cwd: r.cwd.clone(),
                session_id: r.session_id.clone(),
                prompt: r.prompt.clone(),
                turns: r.turns,
                cost_usd: r.cost_usd,
            })
            .collect()
    }

    /// Waits (at most `limit`) for every run to end; on shutdown each has
    /// been told to stop already.
    pub async fn wait(&self, limit: Duration) {
        self.tasks.close();
        if tokio::time::timeout(limit, self.tasks.wait())
            .await
            .is_err()
        {
            tracing::warn!("runs still ending after the shutdown grace period");
        }
    }

    /// Whether run `run_id` is still in the table (its `run_done` has not
    /// been queued yet).
    pub fn is_live(&self, run_id: &str) -> bool {
        self.table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(run_id)
    }

    /// Whether a command hook that names run `run_id` (its `HOOKD_RUN_ID`)
    /// is a copy of one of that run's own hooks: the run is live, the
    /// hook's session is the run's, and the Claude Code process that ran
    /// the hook (`CLAUDE_PID`) is in the run's process group (a `claude`
    /// that the run's agent starts from a Bash tool is not). Otherwise
    /// says why not.
    pub fn recognise_copy(
        &self,
        run_id: &str,
        session_id: Option<&str>,
        claude_pid: Option<&str>,
    ) -> Result<(), &'static str> {
        let (group, session) = {
            let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
            let entry = table.get(run_id).ok_or("no such run is live")?;
            (entry.pid, entry.session_id.clone())
        };
        if session.is_some() && session.as_deref() != session_id {
            return Err("its session is not the run's");
        }
        let pid = claude_pid
            .and_then(|p| p.parse::<i32>().ok())
            .filter(|p| *p > 0)
            .ok_or("it carries no CLAUDE_PID")?;
        match nix::unistd::getpgid(Some(Pid::from_raw(pid))) {
            Ok(pgid) if pgid.as_raw() as u32 == group => Ok(()),
            _ => Err("its Claude Code process is not in the run's process group"),
        }
    }

    fn update(&self, run_id: &str, change: impl FnOnce(&mut RunEntry)) {
        if let Some(entry) = self
            .table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_mut(run_id)
        {
            change(entry);
        }
    }

    fn remove(&self, run_id: &str) {
        self.table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(run_id);
        let mut ended = self.ended.lock().unwrap_or_else(|e| e.into_inner());
        if ended.len() == REMEMBERED_ENDED_RUNS {
            ended.pop_front();
        }
        ended.push_back(run_id.to_string());
    }
}

/// Turns the protocol's run options into SDK options (camelCase) on top of
/// the provider's; returns the cwd, when one was given. Errors name the
/// option.
fn sdk_options(
    run: &crate::protocol::RunOptions,
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
fn choose_session(options: &mut Map<String, Value>) -> String {
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
fn registers_can_use_tool(options: &Map<String, Value>) -> bool {
    options.get("permissionMode").and_then(Value::as_str) != Some("bypassPermissions")
}

/// `name` in the `PATH` of `env`, if it is an executable file there.
fn find_on_path(name: &str, env: &[(OsString, OsString)]) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v)?;
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// A spawned run, as its supervisor sees it.
struct Run {
    link: RunLink,
    pid: u32,
    started: Instant,
    start: Start,
    /// Keeps the abort channel open for as long as the run lives, so the
    /// supervisor's `recv` never sees it closed.
    _abort_tx: mpsc::UnboundedSender<String>,
}

/// What the supervisor learnt by the end.
#[derive(Debug, Default)]
struct Outcome {
    session_id: Option<String>,
    usage: Option<Value>,
    cost_usd: Option<f64>,
    num_turns: Option<u64>,
    result: Option<String>,
    /// `done` arrived: whether it was an error.
    done: Option<bool>,
    /// The adapter's `error`, or what went wrong with it.
    error: Option<String>,
    aborted_by: Option<String>,
    exit: Option<String>,
}

/// Drives one run from `ready` to the child's exit.
#[allow(clippy::too_many_arguments)]
async fn supervise(
    run: &Run,
    mut child: Child,
    stdin: ChildStdin,
    stdout: tokio::process::ChildStdout,
    go: oneshot::Receiver<()>,
    mut aborts: mpsc::UnboundedReceiver<String>,
    mut steers: mpsc::UnboundedReceiver<String>,
    shared: &Arc<Shared>,
    shutdown: &CancellationToken,
) -> Outcome {
    let run_id = run.link.run_id.clone();
    let mut outcome = Outcome::default();
    let (to_adapter, outbox) = mpsc::unbounded_channel::<ToAdapter>();
    tokio::spawn(write_frames(stdin, outbox));
    let hooks = TaskTracker::new();
    let mut frames = FramedRead::new(stdout, FrameCodec::new(ADAPTER_MAX_FRAME));
    // The client must have its `ok` before any frame of the run.
    if go.await.is_err() {
        outcome.aborted_by = Some("its client, which disconnected".into());
        let _ = to_adapter.send(ToAdapter::Abort(Empty {}));
    }
    let mut ready = false;
    let ready_by = tokio::time::Instant::now() + READY_TIMEOUT;
    let mut kill_at: Option<tokio::time::Instant> = outcome
        .aborted_by
        .is_some()
        .then(|| tokio::time::Instant::now() + ABORT_GRACE);
    loop {
        tokio::select! {
            frame = frames.next() => {
                let line = match frame {
                    None => break,
                    Some(Err(e)) => {
                        outcome.error.get_or_insert_with(|| format!("the adapter's output could not be read: {e}"));
                        kill_group(run.pid);
                        break;
                    }
                    Some(Ok(line)) => line,
                };
                let message = match FromAdapter::decode(&line) {
                    Ok(message) => message,
                    Err(e) => {
                        tracing::warn!(run = %run_id, error = %e, "ignoring a bad line from the adapter");
                        continue;
                    }
                };
                match message {
                    FromAdapter::Ready(_) => {
                        ready = true;
                        if outcome.aborted_by.is_none() {
                            let _ = to_adapter.send(ToAdapter::Start(run.start.clone()));
                            shared.runs.update(&run_id, |e| e.state = "running");
                        }
                    }
                    FromAdapter::HookEvent(event) => {
                        let callback = if event.from_can_use_tool() {
                            SdkCallback::CanUseTool
                        } else {
                            SdkCallback::Hook
                        };
                        let tool_input = match callback {
                            SdkCallback::CanUseTool => event.input.get("tool_input").cloned().unwrap_or(Value::Null),
                            SdkCallback::Hook => Value::Null,
                        };
                        let request = HookRequest {
                            v: None,
                            id: event.id,
                            harness: Harness::AgentSdk,
                            deadline_ms: HOOK_TIMEOUT.as_millis() as u64,
                            fail_closed: crate::agent::claude::FailClosed::Off,
                            env: BTreeMap::new(),
                            input: event.input,
                            input_error: event.input_error,
                        };
                        let (link, shared, shutdown, to_adapter) =
                            (run.link.clone(), shared.clone(), shutdown.clone(), to_adapter.clone());
                        let frame_bytes = line.len();
                        hooks.spawn(async move {
                            let answered = hook::answer_in(request, frame_bytes, Some(&link), &shared, &shutdown).await;
                            let output = HookOutput {
                                exit_code: answered.exit_code,
                                stdout: answered.stdout,
                                stderr: answered.stderr,
                            };
                            let result = sdk_result(callback, &output, &tool_input);
                            let _ = to_adapter.send(ToAdapter::Decision(Decision { id: answered.id, result }));
                        });
                    }
                    FromAdapter::SdkMessage(m) => on_sdk_message(run, m.message, &mut outcome, shared),
                    FromAdapter::Done(done) => {
                        outcome.done = Some(done.is_error);
                        outcome.session_id = done.session_id.or(outcome.session_id.take());
                        outcome.usage = done.usage.or(outcome.usage.take());
                        outcome.cost_usd = done.cost_usd.or(outcome.cost_usd);
                        outcome.num_turns = done.num_turns.or(outcome.num_turns);
                        outcome.result = done.result.or(outcome.result.take());
                    }
                    FromAdapter::Error(e) => {
                        outcome.error = Some(e.message);
                    }
                }
            }
            Some(text) = steers.recv() => {
                tracing::info!(run = %run_id, chars = text.chars().count(), "steering run");
                let _ = to_adapter.send(ToAdapter::Steer(crate::protocol::adapter::Steer { text }));
            }
            Some(by) = aborts.recv(), if outcome.aborted_by.is_none() => {
                tracing::info!(run = %run_id, by, "aborting run");
                outcome.aborted_by = Some(by);
                let _ = to_adapter.send(ToAdapter::Abort(Empty {}));
                shared.runs.update(&run_id, |e| e.state = "aborting");
                kill_at = Some(tokio::time::Instant::now() + ABORT_GRACE);
            }
            _ = shutdown.cancelled(), if outcome.aborted_by.is_none() => {
                outcome.aborted_by = Some("hookd, which is stopping".into());
                let _ = to_adapter.send(ToAdapter::Abort(Empty {}));
                shared.runs.update(&run_id, |e| e.state = "aborting");
                kill_at = Some(tokio::time::Instant::now() + SHUTDOWN_ABORT_GRACE);
            }
            _ = sleep_until(kill_at) => {
                tracing::warn!(run = %run_id, pid = run.pid, "the adapter did not stop in time; killing its process group");
                kill_group(run.pid);
                kill_at = None;
            }
            _ = tokio::time::sleep_until(ready_by), if !ready => {
                outcome.error.get_or_insert_with(|| format!("the adapter did not start within {}s", READY_TIMEOUT.as_secs()));
                kill_group(run.pid);
                ready = true;
            }
        }
    }
    // Nobody will read decisions any more: pending events fall back now.
    run.link.ended.cancel();
    if outcome.done.is_none() {
        // Crashed, killed or aborted: the Claude Code process it started
        // goes too. Not reaped yet, the adapter keeps its group id taken.
        kill_group(run.pid);
    }
    let status = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
        Ok(status) => status,
        Err(_) => {
            tracing::warn!(run = %run_id, pid = run.pid, "the adapter closed its output but did not exit; killing its process group");
            kill_group(run.pid);
            child.wait().await
        }
    };
    // Whatever is still left of the group goes too. A group id cannot be
    // handed out again while any member lives; with none left this is
    // ESRCH (pids are allocated in sequence, not reused at once).
    kill_group(run.pid);
    outcome.exit = Some(match status {
        Ok(status) => status.to_string(),
        Err(e) => format!("unknown ({e})"),
    });
    hooks.close();
    if tokio::time::timeout(Duration::from_secs(2), hooks.wait())
        .await
        .is_err()
    {
        tracing::warn!(run = %run_id, "hook answers still running after the run ended");
    }
    outcome
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn kill_group(pid: u32) {
    if pid == 0 {
        return;
    }
    match killpg(Pid::from_raw(pid as i32), Signal::SIGKILL) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(e) => {
            tracing::warn!(pgid = pid, error = %e, "could not kill the adapter's process group")
        }
    }
}

/// One SDK message: remembered (session, usage), logged, pushed.
fn on_sdk_message(run: &Run, message: Value, outcome: &mut Outcome, shared: &Arc<Shared>) {
    let run_id = &run.link.run_id;
    if let Some(session) = message.get("session_id").and_then(Value::as_str) {
        if outcome.session_id.as_deref() != Some(session) {
            outcome.session_id = Some(session.to_string());
            let session = session.to_string();
            shared.runs.update(run_id, |e| e.session_id = Some(session));
        }
    }
    match message.get("type").and_then(Value::as_str) {
        Some("assistant") => shared.runs.update(run_id, |e| e.turns += 1),
        // The model the session really uses, when the run did not name one.
        Some("system") if message.get("subtype").and_then(Value::as_str) == Some("init") => {
            if let Some(model) = message.get("model").and_then(Value::as_str) {
                let model = model.to_string();
                shared
                    .runs
                    .update(run_id, |e| e.model = e.model.take().or(Some(model)));
            }
        }
        Some("result") => {
            let cost = message.get("total_cost_usd").and_then(Value::as_f64);
            shared
                .runs
                .update(run_id, |e| e.cost_usd = cost.or(e.cost_usd));
        }
        _ => {}
    }
    if message.get("type").and_then(Value::as_str) == Some("result") {
        outcome.usage = message.get("usage").cloned();
        outcome.cost_usd = message.get("total_cost_usd").and_then(Value::as_f64);
        outcome.num_turns = message.get("num_turns").and_then(Value::as_u64);
        outcome.result = message
            .get("result")
            .and_then(Value::as_str)
            .map(str::to_owned);
    }
    let record = Reply::SdkMessage(crate::protocol::SdkMessage {
        run_id: run_id.to_string(),
        received_at: crate::time::rfc3339(SystemTime::now()),
        session_id: outcome.session_id.clone(),
        message,
    });
    publish_record(shared, &record, Some(&run.link.owner), None);
}

/// Logs a run record (redacted) and pushes it to the subscribers that want
/// runs, except `skip`, and to `owner` (raw).
fn publish_record(shared: &Shared, record: &Reply, owner: Option<&ClientQueue>, skip: Option<u64>) {
    let line = |record: &Reply| -> Bytes {
        let mut bytes = serde_json::to_vec(record).expect("records serialize");
        bytes.push(b'\n');
        bytes.into()
    };
    let raw_line = line(record);
    let log_line = match redacted(&shared.redactor, record) {
        Some(redacted) => line(&redacted),
        None => raw_line.clone(),
    };
    shared.log.push(log_line.clone());
    let session = match record {
        Reply::SdkMessage(m) => m.session_id.as_deref(),
        Reply::RunDone(d) => d.session_id.as_deref(),
        _ => None,
    };
    let skip = skip.or(owner.map(|o| o.client_id));
    shared.hub.publish_run(session, skip, |redact| {
        if redact {
            log_line.clone()
        } else {
            raw_line.clone()
        }
    });
    if let Some(owner) = owner {
        owner.push(raw_line);
    }
}

/// The record with secrets redacted as in the log (prompt, message,
/// result), or `None` when there was nothing to hide.
fn redacted(redactor: &crate::redact::Redactor, record: &Reply) -> Option<Reply> {
    use std::borrow::Cow;
    let text = |s: &str| match redactor.redact_str(s) {
        Cow::Owned(s) => Some(s),
        Cow::Borrowed(_) => None,
    };
    match record {
        Reply::RunStart(r) => text(&r.prompt).map(|prompt| {
            Reply::RunStart(RunStart {
                prompt,
                ..r.clone()
            })
        }),
        Reply::SdkMessage(m) => match redactor.redact_value(&m.message) {
            Cow::Borrowed(_) => None,
            Cow::Owned(message) => Some(Reply::SdkMessage(crate::protocol::SdkMessage {
                run_id: m.run_id.clone(),
                received_at: m.received_at.clone(),
                session_id: m.session_id.clone(),
                message,
            })),
        },
        Reply::RunDone(d) => {
            // The SDK's error often quotes what it was given (a `resume`
            // id, a path): the same redaction as the result.
            let result = d.result.as_deref().and_then(text);
            let error = d.error.as_deref().and_then(text);
            (result.is_some() || error.is_some()).then(|| {
                Reply::RunDone(RunDone {
                    result: result.or_else(|| d.result.clone()),
                    error: error.or_else(|| d.error.clone()),
                    ..d.clone()
                })
            })
        }
        _ => None,
    }
}

/// Logs and pushes `run_done`, and takes the run out of the table.
async fn finish(run: &Run, outcome: Outcome, shared: &Arc<Shared>) {
    let run_id = run.link.run_id.to_string();
    let error = match (&outcome.aborted_by, outcome.done, &outcome.error) {
        (Some(by), _, _) => Some(format!("aborted by {by}")),
        (None, Some(false), _) => None,
        (None, Some(true), _) => Some(
            outcome
                .result
                .clone()
                .unwrap_or_else(|| "the SDK reported an error".into()),
        ),
        (None, None, Some(error)) => Some(error.clone()),
        (None, None, None) => Some(format!(
            "the adapter ended without a result ({})",
            outcome.exit.as_deref().unwrap_or("no exit status")
        )),
    };
    let done = RunDone {
        run_id: run_id.clone(),
        received_at: crate::time::rfc3339(SystemTime::now()),
        ok: error.is_none(),
        session_id: outcome.session_id,
        usage: outcome.usage,
        cost_usd: outcome.cost_usd,
        num_turns: outcome.num_turns,
        duration_ms: run.started.elapsed().as_millis() as u64,
        result: outcome.result,
        error,
    };
    tracing::info!(
        run = %run_id,
        ok = done.ok,
        error = ?done.error.as_deref().map(|e| shared.redactor.redact_str(e)),
        cost_usd = ?done.cost_usd,
        exit = ?outcome.exit,
        duration_ms = done.duration_ms,
        "run ended"
    );
    shared.metrics.record_run(&done);
    let record = Reply::RunDone(done);
    // Everything of this run is in the owner's queue already; this frame
    // must not be dropped for a full queue, so it waits for room.
    let owner = run.link.owner.clone();
    publish_record(shared, &record, None, Some(owner.client_id));
    let mut frame = serde_json::to_vec(&record).expect("records serialize");
    frame.push(b'\n');
    owner.push_surely(frame.into()).await;
    // Out of the table only now: a run that is not live any more has its
    // run_done queued (a stopping connection relies on that).
    shared.runs.remove(&run_id);
}

/// Writes frames to the adapter's stdin until every sender is gone or the
/// pipe breaks (the adapter exited).
async fn write_frames(mut stdin: ChildStdin, mut outbox: mpsc::UnboundedReceiver<ToAdapter>) {
    while let Some(frame) = outbox.recv().await {
        let mut line = serde_json::to_vec(&frame).expect("frames serialize");
        line.push(b'\n');
        if let Err(e) = stdin.write_all(&line).await {
            tracing::debug!(error = %e, "the adapter's stdin is closed");
            return;
        }
    }
}

/// Copies the adapter's stderr into our log, line by line, redacted like
/// every other line (the SDK and Claude Code echo their inputs in errors).
/// It must be drained whatever happens: a full pipe would stall the
/// adapter.
async fn copy_stderr(stderr: ChildStderr, run_id: Arc<str>, shared: Arc<Shared>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(STDERR_LINE)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end();
                if !text.is_empty() {
                    let text = shared.redactor.redact_str(text);
                    tracing::info!(target: "hookd::adapter", run = %run_id, "{text}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RunOptions;
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
    fn run_records_are_redacted_like_the_log() {
        let redactor = crate::redact::Redactor::default();
        let secret = "sk-ant-api03-0123456789abcdefghij";
        let done = |result: Option<&str>, error: Option<&str>| {
            Reply::RunDone(RunDone {
                run_id: "r".into(),
                received_at: "t".into(),
                ok: error.is_none(),
                session_id: None,
                usage: None,
                cost_usd: None,
                num_turns: None,
                duration_ms: 1,
                result: result.map(str::to_owned),
                error: error.map(str::to_owned),
            })
        };
        let quoted = format!("Provided value \"{secret}\" is not a UUID");
        let Some(Reply::RunDone(d)) = redacted(&redactor, &done(Some(&quoted), Some(&quoted)))
        else {
            panic!("nothing redacted")
        };
        for text in [d.result.unwrap(), d.error.unwrap()] {
            assert!(
                !text.contains(secret) && text.contains("[REDACTED]"),
                "{text}"
            );
        }
        let Some(Reply::RunDone(d)) = redacted(&redactor, &done(Some("fine"), Some(&quoted)))
        else {
            panic!("the error alone must be redacted")
        };
        assert_eq!(d.result.as_deref(), Some("fine"));
        assert!(!d.error.unwrap().contains(secret));
        assert!(redacted(&redactor, &done(Some("fine"), Some("aborted"))).is_none());
    }

    #[test]
    fn node_is_found_on_the_childs_path_only() {
        let dir = tempfile::tempdir().unwrap();
        let env = |path: &Path| vec![(OsString::from("PATH"), path.as_os_str().to_owned())];
        assert_eq!(find_on_path("node", &env(dir.path())), None);
        let node = dir.path().join("node");
        std::fs::write(&node, "#!/bin/sh\n").unwrap();
        assert_eq!(
            find_on_path("node", &env(dir.path())),
            None,
            "not executable"
        );
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(find_on_path("node", &env(dir.path())), Some(node));
        assert_eq!(find_on_path("node", &[]), None);
    }
}
