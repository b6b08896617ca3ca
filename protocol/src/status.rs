//! The `status` reply, typed: what `hookd status`, `doctor`, `statusline`
//! and the approver read.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::approval::GrantRecord;
use crate::decision::Verdict;

/// The `result` of `status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    /// The daemon's version (crate version).
    pub version: String,
    /// The protocol version it speaks.
    pub protocol: u32,
    /// Its pid.
    pub pid: u32,
    /// Seconds since it started.
    pub uptime_s: f64,
    /// The socket it listens on.
    pub socket: PathBuf,
    /// The event log.
    pub log: PathBuf,
    /// The user rules layer.
    pub rules: RulesStatus,
    /// Counters since start, and gauges.
    pub counters: Counters,
    /// The project layers' cache.
    #[serde(default)]
    pub projects: ProjectsStatus,
    /// Where the agent-SDK adapter is.
    #[serde(default)]
    pub adapter_dir: PathBuf,
    /// Agent-SDK runs in progress.
    #[serde(default)]
    pub runs: Vec<RunSummary>,
    /// Active session grants, oldest first.
    #[serde(default)]
    pub grants: Vec<GrantRecord>,
    /// The last decision that said something (not `none`), for status
    /// lines; `null` before the first.
    #[serde(default)]
    pub last_decision: Option<LastDecision>,
    /// OpenTelemetry export, when `[otlp]` configures it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub otlp: Option<OtlpStatus>,
    /// The HTTP listener (`[http]`); absent when it is off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpStatus>,
    /// The event log's hash chain after the last line written: what
    /// `hookd log verify` must end at. Keep a copy elsewhere to anchor the
    /// log. Absent before the first line, and from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_chain: Option<LogChain>,
    /// `config.toml` as the daemon last read it. Absent when it reads
    /// none, and from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConfigStatus>,
    /// Per agent: sessions seen, tool calls judged, tool calls that ran
    /// unjudged (the coverage alarm). Absent from older daemons.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coverage: Vec<crate::coverage::AgentCoverage>,
    /// The judge's use of its model today (issue #25). Absent until a judge
    /// rule first needed it, and from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<ModelUsage>,
    /// The narrator's use of its model today (issue #24). Absent when it is
    /// off, and from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub narrator: Option<ModelUsage>,
    /// `[signals]` commands (issue #25): runs and failures since the start.
    /// Absent without `[signals]`, and from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signals: Option<SignalsStatus>,
    /// The team plane (`[team]`, docs/team.md). Absent when it is off, and
    /// from older daemons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamStatus>,
}

/// The daemon's `[signals]` commands since it started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SignalsStatus {
    /// Commands run.
    pub runs: u64,
    /// Runs that failed: a non-zero exit, a timeout, a program not found.
    pub failures: u64,
    /// (signal, project directory) values held.
    pub cached: u64,
}

/// `status.team`: the team plane's database and its counters since start.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TeamStatus {
    /// `role@host:port/dbname`, without a password.
    pub database: String,
    /// This machine's name in the fleet.
    pub machine: String,
    /// Whether the last attempt reached the database.
    pub connected: bool,
    /// Writes of this machine's fleet row.
    pub fleet_updates: u64,
    /// Attempts that failed (connecting or writing).
    pub failures: u64,
    /// The last failure's cause (it stays after the database recovers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// Whether team approvals' connection listens for answers (the team
    /// can decide escalated asks).
    pub approvals_listening: bool,
    /// Asks escalated to the team (published).
    pub escalated: u64,
    /// Escalated asks the team's answer decided.
    pub team_answers: u64,
    /// Escalated asks that ended here first (a local answer, the timeout).
    pub settled_locally: u64,
    /// Team approvals' attempts to reach or query the database that failed.
    pub approvals_failures: u64,
    /// The last of those failures' cause.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approvals_last_error: Option<String>,
    /// Shipping the event log to the database (absent with `ship = false`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ship: Option<ShipStatus>,
}

/// `status.team.ship`: the event log shipped to `hookd.decisions`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShipStatus {
    /// Rows inserted since start (lines the database already held not counted).
    pub shipped: u64,
    /// The last seq the database holds (the cursor), once known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seq: Option<u64>,
    /// Log lines written and not shipped yet.
    pub pending_lines: u64,
    /// Log bytes not read yet by the shipper.
    pub pending_bytes: u64,
    /// Lines never shipped: rotated away before the shipper read them.
    pub lost: u64,
    /// Batches that failed (connecting, inserting).
    pub failures: u64,
    /// The last failure's cause (it stays after shipping recovers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl std::fmt::Display for TeamStatus {
    /// `hookd status`'s line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "team: {} as {} ({}): {} fleet updates, {} failures",
            self.database,
            self.machine,
            if self.connected {
                "connected"
            } else {
                "not connected"
            },
            self.fleet_updates,
            self.failures,
        )?;
        if self.escalated > 0 {
            write!(
                f,
                "; {} asks escalated, {} answered by the team",
                self.escalated, self.team_answers
            )?;
        }
        if let Some(e) = &self.last_error {
            write!(f, "; last error: {e}")?;
        }
        if let Some(ship) = &self.ship {
            write!(
                f,
                "\nteam shipping: {} lines shipped, {} pending ({} bytes), {} lost, {} failures",
                ship.shipped, ship.pending_lines, ship.pending_bytes, ship.lost, ship.failures
            )?;
            if let Some(e) = &ship.last_error {
                write!(f, "; last error: {e}")?;
            }
        }
        Ok(())
    }
}

/// One UTC day's use of a model by the daemon's own questions (the judge,
/// the narrator): calls, answers reused, failures, tokens, dollars, and the
/// day's bounds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModelUsage {
    /// The UTC day, `YYYY-MM-DD`.
    pub day: String,
    /// Model calls made.
    pub calls: u64,
    /// Answers taken from the cache (no call).
    pub cache_hits: u64,
    /// Questions that waited for the same question's call under way.
    pub shared: u64,
    /// Calls that failed or gave an unusable answer.
    pub errors: u64,
    /// Questions not answered in time.
    pub timeouts: u64,
    /// Questions not asked: the day's budget was spent.
    pub over_budget: u64,
    /// Questions dropped for another reason (the narrator: a call already
    /// under way, too soon after the last).
    pub dropped: u64,
    /// Questions not asked: another rule denied whatever the answer (the
    /// judge only tightens).
    pub skipped: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Dollars, at the configured prices.
    pub cost_usd: f64,
    /// Answers kept in the cache now.
    pub cached_answers: u64,
    /// The day's bound on calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_calls: Option<u64>,
    /// The day's bound on dollars.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
}

impl ModelUsage {
    /// `hookd status`'s line: `12 calls (3 cached, 1 shared), 0 errors, …`.
    pub fn line(&self) -> String {
        let mut out = format!(
            "{} calls today ({} cached, {} shared), {} errors, {} timeouts, {} over budget",
            self.calls, self.cache_hits, self.shared, self.errors, self.timeouts, self.over_budget
        );
        if self.dropped > 0 {
            out.push_str(&format!(", {} dropped", self.dropped));
        }
        if self.skipped > 0 {
            out.push_str(&format!(", {} not needed", self.skipped));
        }
        out.push_str(&format!(
            "; {} + {} tokens, ${:.4}",
            self.input_tokens, self.output_tokens, self.cost_usd
        ));
        match (self.max_calls, self.max_cost_usd) {
            (Some(c), Some(d)) => out.push_str(&format!(" (bounds: {c} calls, ${d:.2} a day)")),
            (Some(c), None) => out.push_str(&format!(" (bound: {c} calls a day)")),
            (None, Some(d)) => out.push_str(&format!(" (bound: ${d:.2} a day)")),
            (None, None) => {}
        }
        out
    }
}

/// `status.config`: what the last reload of `config.toml` (SIGHUP, or a
/// change the daemon saw) left to say.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConfigStatus {
    /// The file (it may not exist: the defaults apply then).
    pub path: PathBuf,
    /// Why the last reload was refused, with file:line:column: the last
    /// good configuration stays in force. Absent when it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reload_error: Option<String>,
    /// What changed in the file that only a restart applies (`[http]
    /// listen`, `[log]`, `[otlp]`, `[notify]`, …); empty when everything
    /// in the file is in force.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub restart_needed: Vec<String>,
}

impl ConfigStatus {
    /// What `hookd status` and `doctor` say about it, one line each (none
    /// when all is in force).
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.restart_needed.is_empty() {
            lines.push(format!(
                "{} changed since start: restart to apply {}",
                self.path.display(),
                self.restart_needed.join(", ")
            ));
        }
        if let Some(error) = &self.reload_error {
            lines.push(format!(
                "{} reload refused, the last good configuration stays in force:\n  {}",
                self.path.display(),
                error.replace('\n', "\n  ")
            ));
        }
        lines
    }
}

/// `status.otlp`: the OpenTelemetry exporter's counters since start.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct OtlpStatus {
    /// The collector's base URL.
    pub endpoint: String,
    /// `http/protobuf` or `http/json`.
    pub protocol: String,
    /// Log records the collector accepted.
    pub logs_exported: u64,
    /// Spans the collector accepted.
    pub spans_exported: u64,
    /// Records dropped: batches the collector refused for good (a
    /// collector down drops nothing: the log is the queue).
    pub dropped: u64,
    /// Requests that failed.
    pub failures: u64,
    /// Records read and waiting to be sent (one batch at most).
    pub queued: u64,
    /// The last log line the collector accepted (the exporter's cursor);
    /// `None` before the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cursor_seq: Option<u64>,
    /// Log lines written and not yet exported (read from the cursor on).
    pub behind_lines: u64,
    /// Log bytes the exporter has not read yet.
    pub behind_bytes: u64,
    /// Log lines rotated away before the exporter read them.
    pub lost: u64,
    /// The last failure's cause (it stays after the collector recovers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl std::fmt::Display for OtlpStatus {
    /// `hookd status`'s lines: where to, what was sent and lost, why.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "otlp: {} ({}): {} log records and {} spans exported, {} queued, {} dropped, {} failed requests",
            self.endpoint,
            self.protocol,
            self.logs_exported,
            self.spans_exported,
            self.queued,
            self.dropped,
            self.failures
        )?;
        write!(
            f,
            ", {} log lines behind, {} lost to rotation",
            self.behind_lines, self.lost
        )?;
        if let Some(error) = &self.last_error {
            write!(f, "\n  last failure: {error}")?;
        }
        Ok(())
    }
}

/// `status.http`: the HTTP listener.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpStatus {
    /// The address it listens on.
    pub listen: String,
    /// The base URL of approval links.
    pub public_url: String,
    /// The bearer token's file.
    pub token_file: PathBuf,
    /// Connections closed at accept because every slot was taken.
    #[serde(default)]
    pub refused_connections: u64,
    /// One-time links alive now (two per event waiting for a person).
    #[serde(default)]
    pub links: u64,
    /// Pushes (`[notify]`); `null` without targets.
    #[serde(default)]
    pub notify: Option<NotifyStatus>,
}

/// `status.http.notify`: pushes per target since start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotifyStatus {
    /// Targets configured.
    pub targets: u64,
    /// Delivered.
    pub sent: u64,
    /// Given up on after every retry failed.
    pub failed: u64,
    /// Not sent: the queue was full, or the event ended first.
    pub dropped: u64,
}

/// `status.log_chain`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogChain {
    /// The last line's `seq`.
    pub seq: u64,
    /// The last line's `chain` (64 hex digits).
    pub head: String,
}

/// `status.rules`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulesStatus {
    /// The rules generation (1 at start, +1 per reload).
    pub generation: u64,
    /// How many rules.
    pub count: usize,
    /// The rules file, or `defaults`.
    pub source: String,
    /// The policy revision of the rules in effect (`sha256:…`, see
    /// [`crate::decision::Revision`]): every decision made under them
    /// records it. Absent from daemons before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<crate::decision::Revision>,
    /// The `[policy] sources` layers under the user rules, lowest
    /// precedence first (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<PolicyLayerStatus>,
    /// Why the last reload (of the user file or any policy source) was
    /// refused, naming each file and line: every layer kept its last good
    /// rules. Absent when the last reload succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reload_error: Option<String>,
    /// How the daemon learns that a rules file changed. Absent from
    /// daemons before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchMode>,
}

/// How the daemon learns that a rules file changed (`status.rules.watch`,
/// `hookd serve --watch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchMode {
    /// The kernel tells it (inotify, kqueue): an idle daemon sleeps.
    #[default]
    Kernel,
    /// It looks at the files' identities (mtime to the nanosecond, size,
    /// inode) every second: for file systems whose changes the kernel does
    /// not report (NFS, some FUSE mounts), and where its watches cannot be
    /// had.
    Poll,
}

/// One policy layer in `status.rules.layers`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyLayerStatus {
    /// The source's name (its rule ids are `<name>:<id>`).
    pub name: String,
    /// Whether later layers may not loosen it.
    #[serde(default)]
    pub enforced: bool,
    /// Where it is read from: a directory, a file, or a bundle's location.
    pub source: String,
    /// Its files now in effect.
    #[serde(default)]
    pub files: Vec<PathBuf>,
    /// How many rules they hold.
    #[serde(default)]
    pub rules: usize,
    /// For a bundle source: what was fetched and activated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<BundleStatus>,
}

/// A bundle source's state, in [`PolicyLayerStatus::bundle`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct BundleStatus {
    /// The active bundle's `manifest.toml` revision, if it names one.
    pub revision: Option<String>,
    /// The active bundle's `serial`: a lower one is refused (no rollback).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<u64>,
    /// The active bundle's `expires` (RFC 3339), if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires: Option<String>,
    /// SHA-256 of the active archive (hex).
    pub sha256: Option<String>,
    /// When the active bundle was activated (RFC 3339).
    pub activated_at: Option<String>,
    /// When the source was last checked (RFC 3339).
    pub checked_at: Option<String>,
    /// Why the last fetch, verification or compilation failed: the last
    /// good bundle (if any) stays active. Absent after a success.
    pub error: Option<String>,
}

/// `status.counters`. Readers take a missing counter as 0 (older daemons
/// had fewer).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counters {
    /// Hooks received.
    pub events: u64,
    /// Decisions sent.
    pub decisions: u64,
    /// Decisions made by socket clients.
    pub client_decisions: u64,
    /// Decisions made by session grants.
    pub grant_decisions: u64,
    /// Pending events that reached their timeout or deadline.
    pub timeouts: u64,
    /// Decisions that were a fallback.
    pub fallbacks: u64,
    /// Events waiting for a client now.
    pub pending: u64,
    /// Active session grants now.
    pub grants: u64,
    /// Subscribed clients now.
    pub subscribers: u64,
    /// Pushed frames dropped for slow subscribers.
    pub lagged_dropped: u64,
    /// Peers refused for running as another user.
    pub refused_peers: u64,
    /// Log lines written.
    pub log_written: u64,
    /// Log lines dropped (queue full).
    pub log_dropped: u64,
    /// Log write errors.
    pub log_errors: u64,
    /// Log rotations.
    pub log_rotations: u64,
    /// Bytes waiting for the log writer.
    pub log_queued_bytes: u64,
    /// Bytes waiting in subscribers' queues.
    pub subscriber_queued_bytes: u64,
    /// Panics caught.
    pub panics: u64,
    /// Hooks being answered now.
    pub hooks_in_flight: u64,
    /// Open connections.
    pub connections: u64,
    /// The connection cap.
    pub max_connections: u64,
    /// Idle peers shed to make room.
    pub shed_peers: u64,
}

/// `status.projects`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProjectsStatus {
    /// Projects whose rules are cached.
    pub known: u64,
    /// Project files stat'ed.
    pub checks: u64,
    /// Project files read and compiled.
    pub loads: u64,
}

/// One agent-SDK run in `status.runs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// The run.
    pub run_id: String,
    /// `starting`, `running`, `aborting`.
    pub state: String,
    /// The adapter's pid.
    pub pid: u32,
    /// The client that started it.
    pub client: String,
    /// RFC 3339, UTC.
    pub started_at: String,
    /// Seconds since it started.
    pub elapsed_s: f64,
    /// The provider, when one was named.
    pub provider: Option<String>,
    /// The model asked for (or, once known, the one the session uses).
    pub model: Option<String>,
    /// The session's working directory.
    pub cwd: String,
    /// The session, once known.
    pub session_id: Option<String>,
    /// The prompt's first 200 characters.
    #[serde(default)]
    pub prompt: String,
    /// Model turns so far.
    #[serde(default)]
    pub turns: u64,
    /// Cost so far in US dollars; `null` while unknown.
    #[serde(default)]
    pub cost_usd: Option<f64>,
    /// The runtime that hosts it (`claude-sdk`, `pi`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<String>,
    /// Tokens so far (input, output, cache read, cache written), once
    /// known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<RunTokens>,
}

/// A run's tokens so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunTokens {
    /// Input tokens not read from the cache.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
    /// Input tokens written to the cache.
    pub cache_write: u64,
}

/// The last decision that said something, for a status line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastDecision {
    /// What was answered.
    pub verdict: Verdict,
    /// The event (`hook_event_name`).
    pub kind: String,
    /// The tool, for tool events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// One short line: the command, path, URL or prompt, at most 60
    /// characters.
    pub summary: String,
    /// Who decided (`rule`, `client:NAME`, `grant:ID`, …).
    pub source: String,
    /// The deciding rules.
    pub rule_ids: Vec<String>,
}
