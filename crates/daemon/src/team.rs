//! The team plane's task (`[team]`, docs/team.md): keeps this machine's
//! row in the team database's fleet current — on start, when what it says
//! changes (looked at every [`LOOK_EVERY`]), and on a heartbeat every
//! [`HEARTBEAT`]. Without `[team]` it is never started: no connection, no
//! task, no timer. The database being away never touches a hook: only this
//! task waits on it, reconnecting with backoff; failures are counted
//! (`status.team`, `/metrics`) and logged once per streak. With `ship` (the
//! default) it also starts [`crate::team_ship`], which ships the event log.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookd_team::connect::Reconnecting;
use hookd_team::fleet::FleetRow;
use tokio_util::sync::CancellationToken;

use crate::Shared;

/// How often the task looks whether the fleet row changed.
pub const LOOK_EVERY: Duration = Duration::from_secs(5);
/// The longest a row goes unwritten (its `last_seen`).
pub const HEARTBEAT: Duration = Duration::from_secs(300);

/// The team plane's state, for `status.team`; present only with `[team]`.
#[derive(Debug, Default)]
pub struct TeamState {
    database: String,
    machine: String,
    connected: AtomicBool,
    fleet_updates: AtomicU64,
    failures: AtomicU64,
    last_error: Mutex<Option<String>>,
    /// Team approvals' counters ([`crate::team_approvals`]).
    pub approvals: Arc<crate::team_approvals::Counters>,
    /// The log's shipper (`ship`, on by default; see [`crate::team_ship`]).
    ship: std::sync::OnceLock<Arc<crate::team_ship::ShipState>>,
}

impl TeamState {
    /// `status.team`; `log_next_seq` is the log's chain head (the seq its
    /// next line gets), for the lines not shipped yet.
    pub fn status(&self, log_next_seq: Option<u64>) -> crate::protocol::status::TeamStatus {
        crate::protocol::status::TeamStatus {
            database: self.database.clone(),
            machine: self.machine.clone(),
            connected: self.connected.load(Ordering::Relaxed),
            fleet_updates: self.fleet_updates.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            approvals_listening: self.approvals.listening.load(Ordering::Relaxed),
            escalated: self.approvals.escalated.load(Ordering::Relaxed),
            team_answers: self.approvals.team_answers.load(Ordering::Relaxed),
            settled_locally: self.approvals.settled_locally.load(Ordering::Relaxed),
            approvals_failures: self.approvals.failures.load(Ordering::Relaxed),
            approvals_last_error: self
                .approvals
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            last_error: self
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
            ship: self.ship.get().map(|s| s.status(log_next_seq)),
        }
    }

    /// A failure: counted; logged when it starts a streak.
    fn failed(&self, what: &str, error: &hookd_team::Error) {
        let message = format!("{what}: {error}");
        let first = self.failures.load(Ordering::Relaxed) == 0;
        if self.connected.swap(false, Ordering::Relaxed) || first {
            tracing::warn!(
                database = %self.database,
                "team database unreachable (logged once until it is back): {message}"
            );
        }
        // The cause before the count: a reader that sees the failure
        // counted finds its cause too.
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(message);
        self.failures.fetch_add(1, Ordering::Relaxed);
    }

    fn succeeded(&self) {
        if !self.connected.swap(true, Ordering::Relaxed)
            && self.failures.load(Ordering::Relaxed) > 0
        {
            tracing::info!(database = %self.database, "team database reachable again");
        }
    }
}

/// Starts the task when the configuration in force has `[team]`; returns
/// its state (kept in [`Shared`] for `status`). A `[team]` that does not
/// resolve (no role, a missing service) is logged and counted, not fatal:
/// the daemon serves its hooks either way.
pub fn start(shared: &Arc<Shared>, shutdown: &CancellationToken) -> Option<Arc<TeamState>> {
    let team = shared.config().team.clone()?;
    let target = match team.resolve() {
        Ok(target) => target,
        Err(e) => {
            tracing::error!("[team] is not usable, the team plane is off: {e}");
            return None;
        }
    };
    let state = Arc::new(TeamState {
        database: target.describe(),
        machine: target.machine.clone(),
        ..TeamState::default()
    });
    crate::team_approvals::start(
        shared,
        &state.approvals,
        state.machine.clone(),
        target.clone(),
        shutdown,
    );
    if team.ships() {
        let fleet = state.clone();
        let ship = crate::team_ship::start(
            shared,
            target.clone(),
            team.ship_interval(),
            move || fleet.fleet_updates.load(Ordering::Relaxed) > 0,
            shutdown,
        );
        let _ = state.ship.set(ship);
    }
    tokio::spawn(run(
        shared.clone(),
        state.clone(),
        Reconnecting::new(target),
        shutdown.clone(),
    ));
    Some(state)
}

/// What this machine's fleet row says now.
pub fn fleet_row(shared: &Shared, machine: &str) -> FleetRow {
    let status = shared.status();
    let agents = status
        .coverage
        .iter()
        .map(|a| {
            // What the fleet shows: the alarm, not the per-hook counts
            // (which would rewrite the row on every hook).
            serde_json::json!({
                "agent": a.agent,
                "unjudged": a.unjudged,
                "last_unjudged_at": a.last_unjudged_at,
            })
        })
        .collect();
    let policy = serde_json::json!({
        "revision": status.rules.revision,
        "source": status.rules.source,
        "layers": status.rules.layers,
        "reload_error": status.rules.reload_error,
    });
    FleetRow {
        machine: machine.to_string(),
        host: hookd_team::config::hostname(),
        os_user: std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .unwrap_or_else(|_| status.pid.to_string()),
        version: status.version,
        agents: serde_json::Value::Array(agents),
        policy,
    }
}

async fn run(
    shared: Arc<Shared>,
    state: Arc<TeamState>,
    mut db: Reconnecting,
    shutdown: CancellationToken,
) {
    let mut written: Option<FleetRow> = None;
    let mut since_write = Duration::ZERO;
    loop {
        let row = fleet_row(&shared, &state.machine);
        if written.as_ref() != Some(&row) || since_write >= HEARTBEAT {
            let result = tokio::select! {
                _ = shutdown.cancelled() => return,
                r = async {
                    let client = db.client().await?;
                    hookd_team::fleet::upsert(client, &row).await
                } => r,
            };
            match result {
                Ok(()) => {
                    state.succeeded();
                    state.fleet_updates.fetch_add(1, Ordering::Relaxed);
                    written = Some(row);
                    since_write = Duration::ZERO;
                }
                Err(e) => {
                    db.failed();
                    state.failed("writing the fleet row", &e);
                }
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(LOOK_EVERY) => since_write += LOOK_EVERY,
        }
    }
}
