//! `hookd serve`: the IO shell around the pure core.
//!
//! - [`socket`]: binding the Unix socket safely;
//! - [`connection`]: one peer (forwarder exchange or long-lived session);
//! - [`hook`]: one hook → answer, under the deadline ladder;
//! - [`controller`]: the rules generation and judgements;
//! - [`hub`]: the pending table and the subscribers;
//! - [`log`]: the JSONL event log, written off the hot path;
//! - [`runs`]: agent-SDK runs, one adapter child process each.
//!
//! Shutdown (SIGTERM/SIGINT): stop accepting, answer in-flight hooks with
//! their fallback, remove the socket, flush the log, exit 0. SIGHUP reloads
//! the rules file; a bad file keeps the last good generation.

pub mod connection;
pub mod controller;
pub mod hook;
pub mod hub;
pub mod log;
pub mod runs;
pub mod socket;
pub mod stops;
pub mod systemd;
pub mod unjudged;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use tokio::net::UnixListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::redact::Redactor;
use crate::rules::RuleSet;
use controller::Controller;
use hub::Hub;
use log::EventLog;

/// At most this many connections are served at once; more wait in the
/// kernel's backlog (a forwarder then waits, it is not refused).
const MAX_CONNECTIONS: usize = 4096;

/// How often the rules file is checked for changes. Polling (mtime, size,
/// inode) needs no watcher dependency and also catches editors that replace
/// the file by renaming a new one over it.
const RULES_POLL: Duration = Duration::from_secs(1);

/// How long in-flight connections get to finish after a shutdown signal.
/// Hooks answer their fallback at once; this only bounds slow writes.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// Where the rules come from.
#[derive(Debug, Clone, PartialEq)]
pub enum RulesSource {
    /// A TOML file (reloaded on SIGHUP).
    File(PathBuf),
    /// The embedded defaults.
    Defaults,
}

/// `hookd serve` configuration.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The socket path.
    pub socket: PathBuf,
    /// The rules.
    pub rules: RulesSource,
    /// The event log file.
    pub log: PathBuf,
    /// The events fallbacks block whatever a hook's own scope says
    /// (`--fail-closed[=tools|all]`); the wider of the two applies.
    pub fail_closed: crate::claude::FailClosed,
    /// Evaluate and log, but answer "no opinion".
    pub permissive: bool,
    /// Frame size cap in bytes.
    pub max_frame: usize,
    /// The configuration file's contents (defaults when there is none).
    pub config: crate::config::Config,
    /// Where the agent-SDK adapter (`adapter.mjs`, `node_modules/`) is.
    pub adapter_dir: PathBuf,
}

/// Counters for `status`.
#[derive(Debug, Default)]
pub struct Stats {
    /// Hooks received.
    pub events: AtomicU64,
    /// Decisions sent.
    pub decisions: AtomicU64,
    /// Decisions made by socket clients.
    pub client_decisions: AtomicU64,
    /// Pending events that reached their timeout or deadline.
    pub timeouts: AtomicU64,
    /// Decisions that were a fallback (timeout, no client, shutdown).
    pub fallbacks: AtomicU64,
    /// Peers refused for running as another user.
    pub refused_peers: AtomicU64,
}

/// State shared by every connection.
#[derive(Debug)]
pub struct Shared {
    /// Rules and judgements.
    pub controller: Controller,
    /// The event log.
    pub log: EventLog,
    /// See [`ServeOptions::fail_closed`].
    pub fail_closed: crate::claude::FailClosed,
    /// See [`Config::max_frame`].
    pub max_frame: usize,
    /// Peers must run as this uid.
    pub uid: u32,
    /// Reloaded on SIGHUP.
    pub rules: RulesSource,
    /// Pending table and subscribers.
    pub hub: Hub,
    /// The configuration file's contents.
    pub config: crate::config::Config,
    /// Applied to inputs before they reach the log.
    pub redactor: Redactor,
    /// Counters.
    pub stats: Stats,
    /// When the daemon started.
    pub started: Instant,
    /// The socket path.
    pub socket: PathBuf,
    /// Agent-SDK runs.
    pub runs: runs::Runs,
}

impl Shared {
    /// The `status` result.
    pub fn status(&self) -> serde_json::Value {
        let rules = self.controller.rules();
        let log = self.log.counters();
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        serde_json::json!({
            "version": env!("CARGO_PKG_VERSION"),
            "protocol": crate::protocol::VERSION,
            "pid": std::process::id(),
            "uptime_s": self.started.elapsed().as_secs_f64(),
            "socket": self.socket,
            "log": self.log.path(),
            "rules": {
                "generation": rules.generation(),
                "count": rules.len(),
                "source": match &self.rules {
                    RulesSource::File(path) => path.display().to_string(),
                    RulesSource::Defaults => "defaults".to_string(),
                },
            },
            "counters": {
                "events": n(&self.stats.events),
                "decisions": n(&self.stats.decisions),
                "client_decisions": n(&self.stats.client_decisions),
                "timeouts": n(&self.stats.timeouts),
                "fallbacks": n(&self.stats.fallbacks),
                "pending": self.hub.pending_count(),
                "subscribers": self.hub.subscriber_count(),
                "lagged_dropped": self.hub.lagged_dropped(),
                "refused_peers": n(&self.stats.refused_peers),
                "log_written": n(&log.written),
                "log_dropped": n(&log.dropped),
                "log_errors": n(&log.errors),
                "log_rotations": n(&log.rotations),
            },
            "adapter_dir": self.runs.adapter_dir(),
            "runs": self.runs.list(),
        })
    }
}

/// Loads the rules named by `source`.
pub fn load_rules(source: &RulesSource) -> anyhow::Result<RuleSet> {
    match source {
        RulesSource::Defaults => Ok(RuleSet::defaults()),
        RulesSource::File(path) => {
            let rules =
                RuleSet::load(path).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))?;
            for warning in rules.warnings() {
                tracing::warn!("{warning}");
            }
            Ok(rules)
        }
    }
}

/// Runs the daemon until SIGTERM/SIGINT. Errors are start-up failures.
pub fn run(options: ServeOptions) -> anyhow::Result<()> {
    let rules = load_rules(&options.rules)?;
    let redactor = options.config.redactor()?;
    // Before any thread exists: this reads and clears LISTEN_* variables.
    let activated = systemd::take_listener().context("taking the socket passed by systemd")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("hookd")
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        // With socket activation systemd owns the socket: no bind, no lock,
        // and the path is left in place at exit.
        let (listener, bound, socket_path) = match activated {
            Some(listener) => {
                let path = listener
                    .local_addr()
                    .ok()
                    .and_then(|a| a.as_pathname().map(PathBuf::from))
                    .unwrap_or_else(|| options.socket.clone());
                (listener, None, path)
            }
            None => {
                let bound = socket::bind(&options.socket)?;
                (
                    bound.listener.try_clone()?,
                    Some(bound),
                    options.socket.clone(),
                )
            }
        };
        let log = EventLog::open(&options.log, &options.config.log);
        let shared = Arc::new(Shared {
            controller: Controller::new(rules, options.permissive),
            log,
            fail_closed: options.fail_closed,
            max_frame: options.max_frame,
            uid: nix::unistd::geteuid().as_raw(),
            rules: options.rules.clone(),
            hub: Hub::default(),
            config: options.config.clone(),
            redactor,
            stats: Stats::default(),
            started: Instant::now(),
            socket: socket_path,
            runs: runs::Runs::new(options.adapter_dir.clone()),
        });
        listener.set_nonblocking(true)?;
        let listener = UnixListener::from_std(listener)?;
        let shutdown = CancellationToken::new();
        tokio::spawn(handle_signals(shared.clone(), shutdown.clone()));
        tokio::spawn(watch_rules(shared.clone(), shutdown.clone()));
        if let Some(interval) = systemd::watchdog_interval() {
            tokio::spawn(watchdog(shared.clone(), interval, shutdown.clone()));
        }
        let rules = shared.controller.rules();
        tracing::info!(
            socket = %shared.socket.display(),
            rules = ?options.rules,
            rule_count = rules.len(),
            log = %options.log.display(),
            permissive = options.permissive,
            "hookd listening"
        );
        notify(&format!(
            "READY=1\nSTATUS=listening on {}\nMAINPID={}",
            shared.socket.display(),
            std::process::id()
        ));
        // On a worker thread, not the block_on thread: a connection then
        // reaches its task without a hand-off between threads.
        tokio::spawn(accept_loop(listener, shared.clone(), shutdown))
            .await
            .context("the accept loop failed")?;
        notify("STOPPING=1");
        // Every run was told to stop when the shutdown began; give them the
        // grace they were promised before the process goes.
        shared
            .runs
            .wait(SHUTDOWN_GRACE + Duration::from_secs(2))
            .await;
        drop(bound);
        shared.log.close();
        tracing::info!("hookd stopped");
        Ok(())
    })
}

fn notify(state: &str) {
    if let Err(e) = systemd::notify(state) {
        tracing::warn!(error = %e, "could not notify systemd");
    }
}

/// Pets systemd's watchdog, but only after a round trip through our own
/// socket proves the accept loop and connection handling still work.
async fn watchdog(shared: Arc<Shared>, interval: Duration, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(interval / 2);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        match tokio::time::timeout(interval / 4, self_probe(&shared.socket)).await {
            Ok(Ok(())) => notify("WATCHDOG=1"),
            Ok(Err(e)) => {
                tracing::error!(error = %e, "watchdog self-probe failed; not petting the watchdog")
            }
            Err(_) => tracing::error!("watchdog self-probe timed out; not petting the watchdog"),
        }
    }
}

async fn self_probe(socket: &std::path::Path) -> std::io::Result<()> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let mut stream = tokio::net::UnixStream::connect(socket).await?;
    stream
        .write_all(b"{\"type\":\"hello\",\"v\":1,\"role\":\"client\",\"name\":\"watchdog\"}\n{\"type\":\"status\",\"req\":\"w\"}\n")
        .await?;
    let mut lines = BufReader::new(stream).lines();
    for expected in ["\"welcome\"", "\"ok\""] {
        let line = lines.next_line().await?.unwrap_or_default();
        if !line.contains(expected) {
            return Err(std::io::Error::other(format!("unexpected reply: {line}")));
        }
    }
    Ok(())
}

/// Accepts until `shutdown`, then waits (bounded) for in-flight connections.
pub async fn accept_loop(listener: UnixListener, shared: Arc<Shared>, shutdown: CancellationToken) {
    let tracker = TaskTracker::new();
    let limit = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut backoff = Duration::from_millis(1);
    loop {
        let permit = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            permit = limit.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
        };
        let stream = tokio::select! {
            biased;
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    backoff = Duration::from_millis(1);
                    stream
                }
                Err(e) => {
                    // EMFILE and friends: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(1));
                    continue;
                }
            },
        };
        let shared = shared.clone();
        let shutdown = shutdown.clone();
        tracker.spawn(async move {
            connection::handle(stream, &shared, &shutdown).await;
            drop(permit);
        });
    }
    drop(listener);
    tracker.close();
    if tokio::time::timeout(SHUTDOWN_GRACE, tracker.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the shutdown grace period; dropping them");
    }
}

async fn handle_signals(shared: Arc<Shared>, shutdown: CancellationToken) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::error!("could not install signal handlers");
        return;
    };
    loop {
        tokio::select! {
            _ = term.recv() => break,
            _ = int.recv() => break,
            _ = hup.recv() => reload(&shared),
        }
    }
    tracing::info!("stopping: answering in-flight hooks with their fallback");
    shutdown.cancel();
}

/// Reloads the rules whenever the rules file changes.
async fn watch_rules(shared: Arc<Shared>, shutdown: CancellationToken) {
    let RulesSource::File(path) = &shared.rules else {
        return;
    };
    let fingerprint = |path: &std::path::Path| {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path)
            .ok()
            .map(|m| (m.mtime(), m.mtime_nsec(), m.size(), m.ino()))
    };
    let mut last = fingerprint(path);
    let mut tick = tokio::time::interval(RULES_POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let now = fingerprint(path);
        if now != last {
            last = now;
            tracing::info!(path = %path.display(), "rules file changed");
            reload(&shared);
        }
    }
}

/// Reloads the rules; a bad file keeps the current generation.
pub fn reload(shared: &Shared) {
    match load_rules(&shared.rules) {
        Ok(rules) => {
            let generation = shared.controller.replace_rules(rules);
            tracing::info!(generation, "rules reloaded");
        }
        Err(e) => tracing::error!(error = %e, "rules reload refused; keeping the last good rules"),
    }
}
