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
//! 3. Each `hook_event` is answered by [`super::hook::answer_in`] — the very path of
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

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use nix::unistd::Pid;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

mod options;
mod relay;
mod supervise;

pub use options::PERMISSION_MODES;
use options::{
    choose_runtime, choose_session, pi_options, registers_can_use_tool, sdk_options, split_model,
};
use supervise::{copy_stderr, finish, publish_record, supervise, Run};

use super::hook::RunLink;
use super::hub::ClientQueue;
use super::Shared;
use crate::protocol::adapter::{Runtime, Start, Usage};
use crate::protocol::{ErrorCode, Reply, RunRequest, RunStart};

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

/// What a client sends a running run besides an abort.
#[derive(Debug)]
pub(super) enum Nudge {
    /// A follow-up user message.
    Steer(String),
    /// Stop a compaction under way, asked by (`client:NAME`).
    AbortCompaction(String),
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
    /// Follow-up user messages (and compaction aborts) for the supervisor
    /// to hand the adapter.
    steers: mpsc::UnboundedSender<Nudge>,
    /// The prompt's first [`PROMPT_SUMMARY_CHARS`] characters.
    prompt: String,
    /// Assistant messages so far (one per model turn).
    turns: u64,
    /// The cost so far, once a result message said.
    cost_usd: Option<f64>,
    /// The runtime hosting it.
    runtime: Runtime,
    /// Tokens so far, once the adapter reported them (`usage`).
    tokens: Option<crate::protocol::status::RunTokens>,
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
    /// With a `model_relay`: where the run's model requests would have
    /// gone (the relay's upstream).
    pub model_upstream: Option<String>,
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
    runtime: Runtime,
    provider: Option<String>,
    options: Map<String, Value>,
    env: Vec<(OsString, OsString)>,
    cwd: PathBuf,
    node: PathBuf,
    model_upstream: Option<String>,
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
            .arg(self.adapter_dir.join(plan.runtime.script()))
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
                provider: plan.provider.clone(),
                model: model.clone(),
                cwd: cwd.clone(),
                session_id: Some(session_id),
                state: "starting",
                aborts: abort_tx.clone(),
                steers: steer_tx,
                prompt: request.prompt.chars().take(PROMPT_SUMMARY_CHARS).collect(),
                turns: 0,
                cost_usd: None,
                runtime: plan.runtime,
                tokens: None,
            },
        );
        tracing::info!(run = %run_id, pid, client, runtime = %plan.runtime, provider = ?plan.provider, model = ?model, cwd, "run started");
        let record = RunStart {
            run_id: run_id.clone(),
            received_at: crate::time::rfc3339(now),
            client: client.to_string(),
            prompt: request.prompt.clone(),
            cwd,
            provider: plan.provider.clone(),
            model,
            pid,
            runtime: Some(plan.runtime.as_str().into()),
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
                can_use_tool: plan.runtime == Runtime::ClaudeSdk
                    && registers_can_use_tool(&plan.options),
            },
            runtime: plan.runtime,
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
        Ok(Started {
            run_id,
            model_upstream: plan.model_upstream,
            go,
        })
    }

    /// Every check that can refuse a run before anything is spawned.
    fn plan(&self, shared: &Shared, request: &RunRequest) -> Result<Plan, Refused> {
        let daemon_env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        let config = shared.config();
        // `--model PROVIDER/MODEL` names the provider, when no provider
        // is named otherwise (with one, the model is the provider's to
        // read: OpenRouter's ids have a `/` of their own).
        let mut run_options = request.options.clone();
        let mut provider_name = request.provider.clone();
        if provider_name.is_none() {
            if let Some((provider, model)) = run_options
                .model
                .as_deref()
                .and_then(|m| split_model(m, |p| config.providers.contains_key(p)))
            {
                provider_name = Some(provider.to_string());
                run_options.model = Some(model.to_string());
            }
        }
        let provider = match &provider_name {
            None => None,
            Some(name) => Some(config.providers.get(name).ok_or_else(|| {
                let known: Vec<&str> = config.providers.keys().map(String::as_str).collect();
                Refused::invalid(format!(
                    "provider `{name}` is not configured: add [providers.{name}] to hookd's \
                     config file ({})",
                    if known.is_empty() {
                        "it has no providers".to_string()
                    } else {
                        format!("it has: {}", known.join(", "))
                    }
                ))
            })?),
        };
        let runtime = choose_runtime(request.runtime.as_deref(), provider)?;
        let (mut env, mut options, cwd) = match (runtime, provider) {
            (Runtime::ClaudeSdk, None) => {
                let mut options = Map::new();
                let cwd = sdk_options(&run_options, &mut options)?;
                (daemon_env, options, cwd)
            }
            (Runtime::ClaudeSdk, Some(provider)) => {
                let env = provider
                    .environment(&daemon_env)
                    .map_err(Refused::invalid)?;
                let mut options = provider.sdk_options();
                let cwd = sdk_options(&run_options, &mut options)?;
                (env, options, cwd)
            }
            // choose_runtime refuses it first; said again rather than assumed.
            (Runtime::Pi, None) => {
                return Err(Refused::invalid(
                    "runtime pi: a Pi run needs a provider (its endpoint and key)",
                ))
            }
            (Runtime::Pi, Some(provider)) => {
                let mut options = Map::new();
                let cwd = pi_options(&run_options, provider, &mut options)?;
                let env = provider
                    .pi_environment(&daemon_env)
                    .map_err(Refused::invalid)?;
                (env, options, cwd)
            }
        };
        let node = find_on_path("node", &env).ok_or_else(|| {
            Refused::unavailable(
                "Node.js (`node`) is not on hookd's PATH; the agent-SDK adapter runs on it: \
                 install Node.js >= 18 and restart hookd",
            )
        })?;
        let sdk = self
            .adapter_dir
            .join("node_modules")
            .join(runtime.package())
            .join("package.json");
        if !sdk.is_file() {
            let message = format!(
                "the {runtime} adapter is not installed in {dir} (no {package}): run `hookd \
                 adapter install` (or, for an adapter directory of hookd's source, `npm ci \
                 --prefix {dir}`)",
                dir = self.adapter_dir.display(),
                package = runtime.package(),
            );
            return Err(Refused::unavailable(message));
        }
        if !self.adapter_dir.join(runtime.script()).is_file() {
            return Err(Refused::unavailable(format!(
                "no {} in {}: run `hookd adapter install`, or name a directory holding \
                 the adapter with --adapter-dir / HOOKD_ADAPTER_DIR",
                runtime.script(),
                self.adapter_dir.display()
            )));
        }
        let cwd = match cwd {
            Some(cwd) => cwd,
            None => std::env::current_dir()
                .map_err(|e| Refused::invalid(format!("options.cwd: none given and {e}")))?,
        };
        options.insert("cwd".into(), cwd.display().to_string().into());
        let model_upstream = match &request.model_relay {
            None => None,
            Some(relay) => Some(relay::point_at(relay, runtime, &mut env, &mut options)?),
        };
        Ok(Plan {
            runtime,
            provider: provider_name,
            options,
            env,
            cwd,
            node,
            model_upstream,
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

    /// Asks run `run_id` to stop a context compaction under way (Pi's
    /// `abortCompaction()`; the Claude SDK has no such call, its adapter
    /// says so in the daemon's log). The run goes on. `by` says who asked.
    pub fn abort_compaction(&self, run_id: &str, by: &str) -> Result<(), Refused> {
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        match table.get(run_id) {
            Some(entry) => {
                let _ = entry.steers.send(Nudge::AbortCompaction(by.to_string()));
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
                let _ = entry.steers.send(Nudge::Steer(text.to_string()));
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
                runtime: Some(r.runtime.as_str().into()),
                tokens: r.tokens,
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

    /// The session of run `run_id`, while it is in the table.
    pub fn session_of(&self, run_id: &str) -> Option<String> {
        self.table
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(run_id)
            .and_then(|e| e.session_id.clone())
    }

    /// A run's `usage` report: its totals so far.
    fn record_usage(&self, run_id: &str, usage: &Usage) {
        self.update(run_id, |e| {
            e.turns = usage.num_turns;
            e.cost_usd = Some(usage.cost_usd);
            e.tokens = Some(crate::protocol::status::RunTokens {
                input: usage.input_tokens,
                output: usage.output_tokens,
                cache_read: usage.cache_read_input_tokens,
                cache_write: usage.cache_creation_input_tokens,
            });
        });
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

#[cfg(test)]
mod tests {
    use super::*;

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
