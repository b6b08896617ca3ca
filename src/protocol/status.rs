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
    /// The HTTP listener (`[http]`); `null` when it is off.
    #[serde(default)]
    pub http: Option<HttpStatus>,
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
