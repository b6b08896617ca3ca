//! hookd's daemon: `hookd serve`, the IO shell around the pure core.
//!
//! Layout (each crate below this one is a dependency; nothing here names
//! the command line, a terminal, the HTTP face or the OTLP exporter: those
//! are handed in by the composition root as [`faces::Faces`]):
//!
//! - this file: [`Shared`] (the daemon's state), [`run`] and [`serve`];
//! - [`faces`]: what the composition root hands in (the HTTP face, the
//!   record exporter);
//! - [`config`]: `config.toml`, its sections and their checks;
//! - [`policy`]: the policy store — where the rules come from, `[policy]`
//!   sources and signed bundles, loading and composing the layers;
//! - [`providers`]: model providers for agent-SDK runs;
//! - [`client`]: the socket's own client (the command line's, and the
//!   watchdog's self-probe);
//! - [`outbound`]: outgoing HTTP(S) for the background senders;
//! - [`atomic`]: writing a file by atomic replace;
//! - [`socket`]: binding the Unix socket safely;
//! - [`connection`]: one peer (forwarder exchange or long-lived session);
//! - [`hook`]: one hook → answer, under the deadline ladder;
//! - [`controller`]: the rules generation and judgements;
//! - [`hub`]: the pending table and the subscribers;
//! - [`log`]: the JSONL event log, written off the hot path;
//! - [`runs`]: agent-SDK runs, one adapter child process each;
//! - [`limits`]: the connection cap, the fd limit, shedding idle peers.
//!
//! Shutdown (SIGTERM/SIGINT): stop accepting, answer in-flight hooks with
//! their fallback, remove the socket, flush the log (for a bounded time),
//! exit 0. SIGHUP reloads `config.toml` and the rules, and so does a change
//! to either (see [`watch`]); a bad file keeps the last good one. What of
//! `config.toml` cannot change live waits for a restart, and `status` says
//! so ([`reload_config`]).
//!
//! Panics: a panic in a task ends that task only (the release profile
//! unwinds; only the forwarder is built with `panic=abort`). A hook whose
//! task panics is answered with its fallback ([`hook::answer_in`]); a
//! connection whose task panics is closed. Every panic is logged with its
//! message and location and counted (`status`: `panics`).

pub use hookd_core::{decision, event, grant, redact, rules, time};
pub use hookd_protocol as protocol;
pub use hookd_protocol::{agent, hex, paths};

pub mod accept;
pub mod atomic;
pub mod client;
pub mod clock;
pub mod config;
pub mod connection;
pub mod controller;
pub mod coverage;
pub mod faces;
#[cfg(feature = "fault-injection")]
pub mod fault;
pub mod grants;
mod held;
pub mod hook;
pub mod hub;
pub mod judge;
pub mod limits;
pub mod log;
pub mod memory;
pub mod metrics;
pub mod model;
pub mod narrator;
pub mod outbound;
pub mod policy;
pub mod providers;
pub mod recent;
pub mod runs;
pub mod session_facts;
pub mod signals;
pub mod socket;
pub mod stops;
pub mod systemd;
pub mod team;
pub mod team_approvals;
pub mod team_ship;
pub mod unjudged;
pub mod watch;

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use futures_util::FutureExt;
use tokio::net::UnixListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::protocol::{Reply, ReqOnly, Request};
use crate::redact::Redactor;
use crate::rules::RuleSet;
use accept::{AcceptBackoff, Accepted};
use controller::Controller;
use hub::Hub;
use log::EventLog;

pub use crate::policy::store::{load_composed, load_rules, policy_fingerprint, RulesSource};

/// How long in-flight connections get to finish after a shutdown signal.
/// Hooks answer their fallback at once; this only bounds slow writes.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

/// How long the OpenTelemetry exporter gets to send what waits at
/// shutdown (one attempt, no retries).
const OTLP_GRACE: Duration = Duration::from_secs(2);

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
    pub fail_closed: crate::agent::claude::FailClosed,
    /// Evaluate and log, but answer "no opinion".
    pub permissive: bool,
    /// Frame size cap in bytes.
    pub max_frame: usize,
    /// The configuration file's contents (defaults when there is none).
    pub config: crate::config::Config,
    /// Where `config` was read from, read again on SIGHUP and when it
    /// changes; `None`: never reloaded (tests that give `config` alone).
    pub config_file: Option<crate::config::ConfigFile>,
    /// `config_file` as it was before `config` was read from it: a change
    /// made after that, even before the daemon serves, is then seen.
    pub config_seen: watch::Fingerprint,
    /// Where the agent-SDK adapter (`adapter.mjs`, `node_modules/`) is.
    pub adapter_dir: PathBuf,
    /// Where session grants are kept (`grants.json` in the state
    /// directory); `None` keeps them in memory only.
    pub grants_file: Option<PathBuf>,
    /// The user rules file `remember: "always"` creates when the rules are
    /// the embedded defaults (`$XDG_CONFIG_HOME/hookd/rules.toml`).
    pub user_rules: Option<PathBuf>,
    /// How rules files' changes are seen (`--watch`); the kernel's watches
    /// fall back to polling where they cannot be had.
    pub watch: crate::protocol::WatchMode,
    /// The wall clock grants' TTLs are measured against (the system's,
    /// but for tests on tokio's paused clock).
    pub clock: clock::Clock,
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
    /// Decisions made by session grants.
    pub grant_decisions: AtomicU64,
    /// Pending events that reached their timeout or deadline.
    pub timeouts: AtomicU64,
    /// Decisions that were a fallback (timeout, no client, shutdown).
    pub fallbacks: AtomicU64,
    /// Peers refused for running as another user.
    pub refused_peers: AtomicU64,
    /// Panics in any of the daemon's threads (counted by the panic hook).
    pub panics: Arc<AtomicU64>,
    /// Hooks being answered now.
    pub hooks_in_flight: AtomicU64,
}

/// State shared by every connection.
#[derive(Debug)]
pub struct Shared {
    /// Rules and judgements.
    pub controller: Controller,
    /// The event log.
    pub log: EventLog,
    /// See [`ServeOptions::fail_closed`].
    pub fail_closed: crate::agent::claude::FailClosed,
    /// See [`ServeOptions::max_frame`].
    pub max_frame: usize,
    /// Peers must run as this uid.
    pub uid: u32,
    /// Reloaded on SIGHUP; becomes a file when `remember: "always"`
    /// creates the user rules file from the defaults.
    rules: std::sync::RwLock<RulesSource>,
    /// See [`ServeOptions::user_rules`].
    pub user_rules: Option<PathBuf>,
    /// Session grants.
    pub grants: grants::Grants,
    /// The last decision that said something, for `status`.
    pub last_decision: std::sync::Mutex<Option<crate::protocol::LastDecision>>,
    /// The rules file as the last reload found it (before reading it): the
    /// watcher reloads only when the file differs from that.
    pub rules_seen: std::sync::Mutex<watch::Fingerprint>,
    /// The policy sources' paths as the last reload found them, likewise.
    pub policy_seen: std::sync::Mutex<Vec<(PathBuf, watch::Fingerprint)>>,
    /// `config.toml` as the last reload found it, likewise.
    pub config_seen: std::sync::Mutex<watch::Fingerprint>,
    /// See [`ServeOptions::config_file`].
    pub config_file: Option<crate::config::ConfigFile>,
    /// The last reload of `config.toml`: refused, or waiting for a restart
    /// (`status.config`).
    config_state: std::sync::Mutex<ConfigState>,
    /// The configuration whose restart-only sections
    /// ([`crate::config::RESTART_ONLY`]) are in force: the one read at
    /// start, with `[http]` and `[notify]` as they were when the listener
    /// started.
    set_up: std::sync::Mutex<crate::config::Config>,
    /// Why the last reload was refused (`status`: `rules.reload_error`).
    pub rules_error: std::sync::Mutex<Option<String>>,
    /// The state directory (the log's): activated policy bundles live in it.
    pub state_dir: Option<PathBuf>,
    /// The policy bundles' fetch state, for `status`.
    pub bundles: Arc<crate::policy::bundle::Bundles>,
    /// Told when the rules source changes (the defaults become a file):
    /// the watcher then watches the new file.
    pub rules_source_changed: tokio::sync::Notify,
    /// Whether the watcher polls (asked to, or the kernel's watches could
    /// not be had), for `status`.
    pub(crate) watch_polling: std::sync::atomic::AtomicBool,
    /// See [`ServeOptions::watch`].
    watch_mode: crate::protocol::WatchMode,
    /// See [`ServeOptions::clock`].
    pub clock: clock::Clock,
    /// Pending table and subscribers.
    pub hub: Hub,
    /// The coverage alarm: tool calls that ran unjudged.
    pub coverage: coverage::Coverage,
    /// The team plane, once started (`[team]`; see [`team`]).
    pub team: std::sync::OnceLock<Arc<team::TeamState>>,
    /// The configuration in force (replaced whole by a reload of
    /// `config.toml`; read it through [`Shared::config`]).
    config: std::sync::RwLock<Arc<crate::config::Config>>,
    /// Applied to inputs before they reach the log (replaced with the
    /// configuration; read it through [`Shared::redactor`]).
    redactor: std::sync::RwLock<Arc<Redactor>>,
    /// The judge's cache, calls under way and daily use.
    pub judges: judge::Judges,
    /// Sessions' recent events, for the judge.
    pub recent: recent::Recent,
    /// The narrator's sessions and daily use.
    pub narrator: narrator::Narrator,
    /// Counters.
    pub stats: Stats,
    /// What only the hook path and the run supervisor count, for `/metrics`.
    pub metrics: metrics::Metrics,
    /// When the daemon started.
    pub started: Instant,
    /// The socket path.
    pub socket: PathBuf,
    /// Agent-SDK runs.
    pub runs: runs::Runs,
    /// Connection slots and idle-peer shedding.
    pub admission: limits::Admission,
    /// OpenTelemetry export (`[otlp]`), fed beside the log.
    pub otlp: Arc<dyn faces::RecordExport>,
    /// Slots for evaluating large inputs on blocking threads (see
    /// [`hook::INLINE_EVALUATION_MAX_BYTES`]): a few slow evaluations
    /// cannot take every core.
    pub evaluations: Arc<Semaphore>,
    /// The HTTP listener, once it runs (see `hookd::http::start`, handed in as [`faces::Faces::http`]).
    pub http: std::sync::OnceLock<Arc<dyn faces::HttpFace>>,
    /// The faces this daemon was built with (a reload may start the HTTP
    /// face).
    pub faces: faces::Faces,
    /// Cancelled when the daemon stops (set by [`serve`]): a listener that
    /// a reload starts stops with it.
    shutdown: std::sync::OnceLock<CancellationToken>,
    /// The running policy bundle fetchers: each source and the sender
    /// whose drop stops its thread.
    bundle_fetchers: std::sync::Mutex<Vec<(crate::policy::Source, std::sync::mpsc::Sender<()>)>>,
}

/// What the last reload of `config.toml` left to say (`status.config`).
#[derive(Debug, Default)]
struct ConfigState {
    /// Why it was refused (the last good configuration stays in force).
    error: Option<String>,
    /// The sections changed in the file that only a restart applies.
    restart_needed: Vec<String>,
}

impl Shared {
    /// How rules files' changes are to be seen (`--watch`).
    pub fn watch_mode(&self) -> crate::protocol::WatchMode {
        self.watch_mode
    }

    /// The configuration in force now. A hook reads it once, so a reload
    /// never changes one under way.
    pub fn config(&self) -> Arc<crate::config::Config> {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The redactor of the configuration in force now.
    pub fn redactor(&self) -> Arc<Redactor> {
        self.redactor
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The state of a daemon serving `options` on `socket`: `rules` and
    /// `redactor` are the loaded rules and the config's redaction (start-up
    /// errors are the caller's), the event log's writer starts now.
    /// `panics` counts the process's panics (see `run`'s panic hook).
    pub fn new(
        options: &ServeOptions,
        rules: RuleSet,
        redactor: Redactor,
        socket: PathBuf,
        max_connections: usize,
        panics: Arc<AtomicU64>,
    ) -> Shared {
        Shared {
            controller: Controller::new(rules, options.permissive),
            log: EventLog::open(&options.log, &options.config.log),
            fail_closed: options.fail_closed,
            max_frame: options.max_frame,
            uid: nix::unistd::geteuid().as_raw(),
            rules: std::sync::RwLock::new(options.rules.clone()),
            user_rules: options.user_rules.clone(),
            grants: grants::Grants::load(options.grants_file.clone(), options.clock.now()),
            last_decision: std::sync::Mutex::new(None),
            rules_seen: std::sync::Mutex::new(match &options.rules {
                RulesSource::File(path) => watch::fingerprint(path),
                RulesSource::Defaults => None,
            }),
            rules_source_changed: tokio::sync::Notify::new(),
            watch_polling: std::sync::atomic::AtomicBool::new(
                options.watch == crate::protocol::WatchMode::Poll,
            ),
            watch_mode: options.watch,
            clock: options.clock,
            policy_seen: std::sync::Mutex::new(policy_fingerprint(
                &options.config.policy,
                state_dir(&options.log).as_deref(),
            )),
            config_seen: std::sync::Mutex::new(options.config_seen),
            config_file: options.config_file.clone(),
            config_state: Default::default(),
            set_up: std::sync::Mutex::new(options.config.clone()),
            rules_error: std::sync::Mutex::new(None),
            state_dir: state_dir(&options.log),
            bundles: Default::default(),
            hub: Hub::default(),
            coverage: Default::default(),
            team: Default::default(),
            config: std::sync::RwLock::new(Arc::new(options.config.clone())),
            redactor: std::sync::RwLock::new(Arc::new(redactor)),
            judges: Default::default(),
            recent: Default::default(),
            narrator: Default::default(),
            stats: Stats {
                panics,
                ..Stats::default()
            },
            metrics: metrics::Metrics::default(),
            started: Instant::now(),
            socket,
            runs: runs::Runs::new(options.adapter_dir.clone()),
            admission: limits::Admission::new(max_connections),
            otlp: Arc::new(faces::NoExport),
            evaluations: Arc::new(Semaphore::new(evaluation_slots())),
            http: std::sync::OnceLock::new(),
            faces: faces::Faces::none(),
            shutdown: std::sync::OnceLock::new(),
            bundle_fetchers: Default::default(),
        }
    }

    /// This state, exporting to OpenTelemetry through `otlp`.
    pub fn with_faces(self, faces: faces::Faces, otlp: Arc<dyn faces::RecordExport>) -> Shared {
        Shared {
            faces,
            otlp,
            ..self
        }
    }

    /// Where the rules come from now.
    pub fn rules_source(&self) -> RulesSource {
        self.rules.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Switches where the rules come from (the next reload reads it).
    pub fn set_rules_source(&self, source: RulesSource) {
        *self.rules.write().unwrap_or_else(|e| e.into_inner()) = source;
        self.rules_source_changed.notify_one();
    }

    /// The `status` result.
    pub fn status(&self) -> crate::protocol::Status {
        use crate::protocol::{Counters, RulesStatus, Status};
        let rules = self.controller.rules();
        let log = self.log.counters();
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let now = self.clock.now();
        // Read before the literal below, which holds the head's lock.
        let log_next_seq =
            (log.chain_head.lock().unwrap_or_else(|e| e.into_inner())).map(|head| head.next_seq);
        Status {
            version: env!("CARGO_PKG_VERSION").to_string(),
            protocol: crate::protocol::VERSION,
            pid: std::process::id(),
            uptime_s: self.started.elapsed().as_secs_f64(),
            socket: self.socket.clone(),
            log: self.log.path().to_path_buf(),
            rules: RulesStatus {
                generation: rules.generation(),
                count: rules.len(),
                source: match self.rules_source() {
                    RulesSource::File(path) => path.display().to_string(),
                    RulesSource::Defaults => "defaults".to_string(),
                },
                revision: Some(rules.revision().clone()),
                layers: self.policy_status(&rules),
                reload_error: self
                    .rules_error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone(),
                watch: Some(if self.watch_polling.load(Ordering::Relaxed) {
                    crate::protocol::WatchMode::Poll
                } else {
                    crate::protocol::WatchMode::Kernel
                }),
            },
            counters: Counters {
                events: n(&self.stats.events),
                decisions: n(&self.stats.decisions),
                client_decisions: n(&self.stats.client_decisions),
                grant_decisions: n(&self.stats.grant_decisions),
                timeouts: n(&self.stats.timeouts),
                fallbacks: n(&self.stats.fallbacks),
                pending: self.hub.pending_count() as u64,
                grants: self.grants.count() as u64,
                subscribers: self.hub.subscriber_count(),
                lagged_dropped: self.hub.lagged_dropped(),
                refused_peers: n(&self.stats.refused_peers),
                log_written: n(&log.written),
                log_dropped: n(&log.dropped),
                log_errors: n(&log.errors),
                log_rotations: n(&log.rotations),
                log_queued_bytes: log.queued_bytes.load(Ordering::Relaxed) as u64,
                subscriber_queued_bytes: self.hub.queued_bytes() as u64,
                panics: n(&self.stats.panics),
                hooks_in_flight: n(&self.stats.hooks_in_flight),
                connections: self.admission.open() as u64,
                max_connections: self.admission.cap() as u64,
                shed_peers: self.admission.shed_count(),
            },
            projects: self.controller.projects().status(),
            adapter_dir: self.runs.adapter_dir().to_path_buf(),
            runs: self.runs.list(),
            grants: self.grants.list(now),
            last_decision: self
                .last_decision
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            otlp: self.otlp.status().map(|mut otlp| {
                let exported = otlp.cursor_seq.map_or(0, |seq| seq + 1);
                otlp.behind_lines = log_next_seq.map_or(0, |head| head.saturating_sub(exported));
                otlp
            }),
            http: self.http.get().map(|face| face.status()),
            config: self.config_file.as_ref().map(|file| {
                let state = self.config_state.lock().unwrap_or_else(|e| e.into_inner());
                crate::protocol::status::ConfigStatus {
                    path: file.path.clone(),
                    reload_error: state.error.clone(),
                    restart_needed: state.restart_needed.clone(),
                }
            }),
            log_chain: log
                .chain_head
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .and_then(|head| {
                    Some(crate::protocol::status::LogChain {
                        seq: head.next_seq.checked_sub(1)?,
                        head: head.hex(),
                    })
                }),
            coverage: self.coverage.status(),
            judge: self.judges.status(self),
            narrator: self.narrator.status(self),
            signals: (!self.config().signals.is_empty()).then(|| self.controller.signals_status()),
            team: self.team.get().map(|t| t.status(log_next_seq)),
        }
    }
}

impl Shared {
    /// `status.rules.layers`: the policy layers of `rules`, with their
    /// sources (and bundles') state.
    fn policy_status(&self, rules: &RuleSet) -> Vec<crate::protocol::PolicyLayerStatus> {
        use crate::policy::Location;
        self.config()
            .policy
            .sources
            .iter()
            .map(|source| {
                let layer = rules.policy().iter().find(|l| l.name == source.name);
                crate::protocol::PolicyLayerStatus {
                    name: source.name.clone(),
                    enforced: source.enforced,
                    source: match &source.location {
                        Location::Path(path) => path.display().to_string(),
                        Location::Bundle(bundle) => bundle.location.to_string(),
                    },
                    files: layer.map_or_else(Vec::new, |l| {
                        l.files.iter().map(|f| f.origin().to_path_buf()).collect()
                    }),
                    rules: layer.map_or(0, |l| l.files.iter().map(RuleSet::len).sum()),
                    bundle: match &source.location {
                        Location::Bundle(_) => Some(self.bundles.status(&source.name)),
                        Location::Path(_) => None,
                    },
                }
            })
            .collect()
    }
}

/// The state directory: the event log's (`$XDG_STATE_HOME/hookd/`).
fn state_dir(log: &std::path::Path) -> Option<PathBuf> {
    log.parent()
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(PathBuf::from)
}

/// The message of a panic's payload (`panic!` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(not a string)")
}

/// Logs every panic of the process (message, location, thread, and the
/// backtrace when `RUST_BACKTRACE` asks for one) and counts it in `panics`.
fn install_panic_hook(panics: Arc<AtomicU64>) {
    std::panic::set_hook(Box::new(move |info| {
        panics.fetch_add(1, Ordering::Relaxed);
        let thread = std::thread::current();
        let location = info.location().map(ToString::to_string).unwrap_or_default();
        let backtrace = std::backtrace::Backtrace::capture();
        let backtrace = match backtrace.status() {
            std::backtrace::BacktraceStatus::Captured => format!("\n{backtrace}"),
            _ => String::new(),
        };
        tracing::error!(
            thread = thread.name().unwrap_or("unnamed"),
            %location,
            "panic: {}{backtrace}",
            panic_message(info.payload())
        );
    }));
}

/// Runs the daemon until SIGTERM/SIGINT. Errors are start-up failures.
pub fn run(options: ServeOptions, faces: faces::Faces) -> anyhow::Result<()> {
    let panics = Arc::new(AtomicU64::new(0));
    install_panic_hook(panics.clone());
    let fd_limit = match limits::raise_fd_limit() {
        Ok(limit) => {
            if limit.now != limit.before {
                tracing::info!(
                    from = limit.before,
                    to = limit.now,
                    "raised the open-file limit"
                );
            }
            limit.now
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not read or raise the open-file limit");
            1024
        }
    };
    let rules = load_composed(
        &options.rules,
        &options.config.policy,
        state_dir(&options.log).as_deref(),
    )?;
    let redactor = options.config.redactor()?;
    let http = (faces.http)(&options.config)?;
    // Before any thread exists: this reads and clears LISTEN_* variables.
    let activated = systemd::take_listener().context("taking the socket passed by systemd")?;
    // Its thread starts only now that the environment is no longer changed.
    let otlp = match &options.config.otlp {
        Some(config) => (faces.otlp)(config, &options.log)?,
        None => Arc::new(faces::NoExport),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("hookd")
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async move {
        // Before the socket can accept: a client that reached the daemon
        // may signal it, and SIGHUP's default action would end it.
        let signals = Signals::install().context("installing the signal handlers")?;
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
        let shared = Arc::new(
            Shared::new(
                &options,
                rules,
                redactor,
                socket_path,
                limits::connection_cap(fd_limit),
                panics,
            )
            .with_faces(faces, otlp),
        );
        listener.set_nonblocking(true)?;
        let listener = UnixListener::from_std(listener)?;
        let shutdown = CancellationToken::new();
        tokio::spawn(handle_signals(signals, shared.clone(), shutdown.clone()));
        if let Some(start) = http {
            start(&shared, &shutdown)?;
        }
        serve(listener, shared.clone(), shutdown).await?;
        drop(bound);
        // The log first: the exporter reads what it wrote last from the
        // file; what it cannot send now is sent from its cursor next time.
        let lost = shared.log.close();
        let unsent = shared.otlp.close(OTLP_GRACE);
        if unsent > 0 {
            tracing::info!(
                unsent,
                "{unsent} OpenTelemetry records were not sent (sent from the cursor at the next start)"
            );
        }
        if lost > 0 {
            tracing::info!(lost, "hookd stopped; {lost} event log lines were lost");
        } else {
            tracing::info!("hookd stopped");
        }
        Ok(())
    })
}

/// Serves `listener` with `shared` until `shutdown` is cancelled: the
/// rules and projects watchers, the systemd watchdog (when systemd asks for
/// one), the accept loop; then waits (bounded) for in-flight connections
/// and runs. Signals, the socket's binding and the log's closing are the
/// caller's: `run` for `hookd serve`, the test itself for a daemon tested
/// in-process (on tokio's paused clock).
pub async fn serve(
    listener: UnixListener,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let _ = shared.shutdown.set(shutdown.clone());
    tokio::spawn(watch::watch_rules(shared.clone(), shutdown.clone()));
    tokio::spawn({
        let (shared, shutdown) = (shared.clone(), shutdown.clone());
        async move { shared.hub.expire_timeouts(shutdown).await }
    });
    tokio::spawn(grants::expire_loop(shared.clone(), shutdown.clone()));
    sync_bundle_fetchers(&shared);
    tokio::spawn({
        let (shared, shutdown) = (shared.clone(), shutdown.clone());
        async move {
            shutdown.cancelled().await;
            shared
                .bundle_fetchers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        }
    });
    if let Some(interval) = systemd::watchdog_interval() {
        tokio::spawn(watchdog(shared.clone(), interval, shutdown.clone()));
    }
    if let Some(state) = team::start(&shared, &shutdown) {
        let _ = shared.team.set(state);
    }
    // Counted, not held: a generation held here would live as long as the
    // accept loop, whatever replaced it.
    tracing::info!(
        socket = %shared.socket.display(),
        rules = ?shared.rules_source(),
        rule_count = shared.controller.rules().len(),
        log = %shared.log.path().display(),
        permissive = shared.controller.permissive(),
        max_connections = shared.admission.cap(),
        "hookd listening"
    );
    notify(&format!(
        "READY=1\nSTATUS=listening on {}\nMAINPID={}",
        shared.socket.display(),
        std::process::id()
    ));
    // What start-up compiled and parsed is done with; an idle daemon keeps
    // only what it uses, of its heap and of its code.
    memory::release_free_memory();
    memory::release_startup_pages();
    // On a worker thread, not the caller's: a connection then reaches its
    // task without a hand-off between threads.
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
    Ok(())
}

/// One fetcher thread per bundle source of the configuration in force
/// (see [`crate::policy::bundle`]): each activation reloads every layer.
/// Called at start and after each reload of `config.toml`: a source added
/// gets its thread, a removed or changed one's stops (as all do at
/// shutdown, when [`serve`] empties the list).
fn sync_bundle_fetchers(shared: &Arc<Shared>) {
    use crate::policy::Location;
    let Some(state_dir) = shared.state_dir.clone() else {
        return;
    };
    let config = shared.config();
    let mut fetchers = shared
        .bundle_fetchers
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    fetchers.retain(|(running, _)| config.policy.sources.contains(running));
    for source in &config.policy.sources {
        let Location::Bundle(bundle) = &source.location else {
            continue;
        };
        if fetchers.iter().any(|(running, _)| running == source) {
            continue;
        }
        let (stop, stopped) = std::sync::mpsc::channel();
        let reloading = shared.clone();
        let started = crate::policy::bundle::spawn(
            source.name.clone(),
            bundle.clone(),
            state_dir.clone(),
            shared.bundles.clone(),
            move || reload(&reloading),
            stopped,
        );
        match started {
            Ok(_) => fetchers.push((source.clone(), stop)),
            Err(e) => {
                tracing::error!(source = %source.name, error = %e, "cannot start the policy bundle's fetcher")
            }
        }
    }
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
    use futures_util::{SinkExt, StreamExt};
    let mut conn =
        crate::client::connect_async(socket, "watchdog", crate::protocol::DEFAULT_MAX_FRAME)
            .await
            .map_err(std::io::Error::other)?;
    let status = Request::Status(ReqOnly { req: "w".into() });
    conn.send(&status).await.map_err(std::io::Error::other)?;
    let line = conn
        .next()
        .await
        .unwrap_or(Ok(Default::default()))
        .map_err(std::io::Error::other)?;
    match serde_json::from_slice::<Reply>(&line) {
        Ok(Reply::Ok(ok)) if ok.req == "w" => Ok(()),
        _ => Err(std::io::Error::other(format!(
            "unexpected reply: {}",
            String::from_utf8_lossy(&line)
        ))),
    }
}

/// Blocking threads that may evaluate large inputs at once: half the
/// cores, at least one, so the async workers keep theirs.
fn evaluation_slots() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}

/// Accepts until `shutdown`, then waits (bounded) for in-flight connections.
pub async fn accept_loop(listener: UnixListener, shared: Arc<Shared>, shutdown: CancellationToken) {
    let tracker = TaskTracker::new();
    let admission = &shared.admission;
    let mut backoff = AcceptBackoff::default();
    let mut last_warning: Option<Instant> = None;
    'accepting: loop {
        let permit = match admission.slots().clone().try_acquire_owned() {
            Ok(permit) => permit,
            // Every slot taken: make room by shedding idle peers, again
            // and again while waiting (the idle ones age meanwhile).
            Err(_) => loop {
                admission.shed_idle();
                tokio::select! {
                    biased;
                    _ = shutdown.cancelled() => break 'accepting,
                    permit = admission.slots().clone().acquire_owned() => {
                        break permit.expect("the semaphore is never closed");
                    }
                    _ = tokio::time::sleep(limits::SHED_AFTER / 2) => {}
                }
            },
        };
        if admission.pressed() {
            admission.shed_idle();
        }
        let failed = |e: &std::io::Error| {
            // EMFILE and friends: shed idle peers to free descriptors, and
            // retry soon (forwarders wait in the backlog meanwhile) without
            // spinning.
            if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) {
                admission.shed_idle();
            }
            if last_warning.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
                tracing::warn!(error = %e, open = admission.open(), "accept failed");
                last_warning = Some(Instant::now());
            }
        };
        let stream = match backoff.accept(listener.accept(), &shutdown, failed).await {
            Accepted::Connection((stream, _)) => stream,
            Accepted::Failed => continue,
            Accepted::Shutdown => break,
        };
        let shared = shared.clone();
        let shutdown = shutdown.clone();
        tracker.spawn(async move {
            let served = AssertUnwindSafe(connection::handle(stream, &shared, &shutdown))
                .catch_unwind()
                .await;
            if let Err(panic) = served {
                tracing::error!(
                    panic = panic_message(&*panic),
                    "a connection's task panicked; that connection is closed and the daemon goes on"
                );
            }
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

/// The signals the daemon handles (SIGTERM, SIGINT: stop; SIGHUP:
/// reload), installed before its socket accepts.
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Installs the handlers (inside the runtime).
    fn install() -> std::io::Result<Signals> {
        use tokio::signal::unix::{signal, SignalKind};
        Ok(Signals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
        })
    }
}

async fn handle_signals(signals: Signals, shared: Arc<Shared>, shutdown: CancellationToken) {
    let Signals {
        mut term,
        mut int,
        mut hup,
    } = signals;
    loop {
        tokio::select! {
            _ = term.recv() => break,
            _ = int.recv() => break,
            _ = hup.recv() => {
                tracing::info!("SIGHUP: reloading config.toml and the rules");
                reload_off_worker(&shared).await
            }
        }
    }
    tracing::info!("stopping: answering in-flight hooks with their fallback");
    shutdown.cancel();
}

/// [`reload_config`] then [`reload`], on a blocking thread: what SIGHUP
/// and a change the watcher sees do.
pub(crate) async fn reload_off_worker(shared: &Arc<Shared>) {
    let shared = shared.clone();
    let _ = tokio::task::spawn_blocking(move || {
        reload_config(&shared);
        reload(&shared);
    })
    .await;
}

/// Reads `config.toml` again (blocking; inside the runtime, which a
/// listener it starts needs). What can change live is replaced at once:
/// `[decisions]`, `[clients]`, `[redact]`, `[providers]`, `[policy]` (the
/// rules reload that follows composes the new sources; bundle fetchers
/// start and stop), and `[http]` where no listener runs yet. A change to
/// what only a restart applies ([`crate::config::RESTART_ONLY`]) is kept
/// for `status` (`config.restart_needed`). A file with an error, or a
/// listener that cannot start, is refused whole: the last good
/// configuration stays, and `status` says why (`config.reload_error`).
pub fn reload_config(shared: &Arc<Shared>) {
    let Some(file) = &shared.config_file else {
        return;
    };
    // Noted before reading: a change made during the read is a change.
    *shared.config_seen.lock().unwrap_or_else(|e| e.into_inner()) = watch::fingerprint(&file.path);
    let refuse = |error: anyhow::Error| {
        let error = format!("{error:#}");
        tracing::error!(%error, "config.toml reload refused; keeping the last good configuration");
        shared
            .config_state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .error = Some(error);
    };
    let config = match file.read().and_then(|config| {
        crate::config::http::check(&config)
            .with_context(|| format!("{}", file.path.display()))
            .map(|()| config)
    }) {
        Ok(config) => config,
        Err(e) => return refuse(e),
    };
    // `Config::parse` compiled the patterns already; this cannot fail but
    // is not unwrapped.
    let redactor = match config.redactor() {
        Ok(redactor) => redactor,
        Err(e) => return refuse(anyhow::anyhow!("{}: [redact]: {e}", file.path.display())),
    };
    let mut set_up = shared.set_up.lock().unwrap_or_else(|e| e.into_inner());
    if shared.http.get().is_none() && config.http.listen.is_some() {
        if let Err(e) = start_http(shared, &config) {
            return refuse(e.context(format!("{}: [http]", file.path.display())));
        }
        set_up.http = config.http.clone();
        set_up.notify = config.notify.clone();
    }
    let restart_needed = config.restart_needed(&set_up);
    drop(set_up);
    if !restart_needed.is_empty() {
        tracing::warn!(
            sections = %restart_needed.join(", "),
            "config.toml changed since start: restart to apply {}",
            restart_needed.join(", ")
        );
    }
    *shared.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(config);
    *shared.redactor.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(redactor);
    *shared
        .config_state
        .lock()
        .unwrap_or_else(|e| e.into_inner()) = ConfigState {
        error: None,
        restart_needed,
    };
    tracing::info!(path = %file.path.display(), "config.toml reloaded");
    sync_bundle_fetchers(shared);
}

/// Starts the HTTP listener `config` asks for on a running daemon.
fn start_http(shared: &Arc<Shared>, config: &crate::config::Config) -> anyhow::Result<()> {
    let shutdown = shared
        .shutdown
        .get()
        .context("the daemon is not serving yet")?;
    match (shared.faces.http)(config)? {
        Some(start) => start(shared, shutdown),
        None => Ok(()),
    }
}

/// Reloads the rules and every policy source together, as one new
/// generation; any error keeps the current generation whole (and says so
/// in `status`).
pub fn reload(shared: &Shared) {
    let source = shared.rules_source();
    let state_dir = shared.state_dir.as_deref();
    // Noted before reading: a change made during the read is a change.
    if let RulesSource::File(path) = &source {
        *shared.rules_seen.lock().unwrap_or_else(|e| e.into_inner()) = watch::fingerprint(path);
    }
    let config = shared.config();
    *shared.policy_seen.lock().unwrap_or_else(|e| e.into_inner()) =
        policy_fingerprint(&config.policy, state_dir);
    let mut error = shared.rules_error.lock().unwrap_or_else(|e| e.into_inner());
    match load_composed(&source, &config.policy, state_dir) {
        Ok(rules) => {
            let revision = rules.revision().clone();
            let generation = shared.controller.replace_rules(rules);
            tracing::info!(generation, %revision, "rules reloaded");
            *error = None;
        }
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "rules reload refused; keeping the last good rules of every layer");
            *error = Some(format!("{e:#}"));
        }
    }
    drop(error);
    // The compile's scratch memory, and the rules this generation replaced
    // when no hook still holds them.
    memory::release_free_memory();
}
