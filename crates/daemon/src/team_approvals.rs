//! Team approvals, the daemon's side (`[team]` and `escalate = "team"`,
//! docs/team.md#team-approvals): the team is one more decider in the
//! hub's pending table (its `"team"` slot). An ask escalated to the team —
//! by its rules at once, or by `[decisions] escalate_after` once no local
//! client answered it in time — is published to `hookd.asks` with its
//! redacted event, rules, reason, deadline and the narrator's line; the
//! task LISTENs on [`CHANNEL`](hookd_team::approvals::CHANNEL) and, on a
//! notification naming one of its asks, on a reconnect and on a slow poll,
//! reads the verdicts back from the table (never from a notification
//! alone; every daemon hears every answer, and ignores the others') and gives them
//! to the hub as a client's `decide`. The first answer wins: a local
//! answer first closes the ask's row, so approvers see it settled.
//!
//! Only this task waits on the database, each query at most
//! [`QUERY_TIMEOUT`]: a hook never does, and its ask's own timeout falls
//! back as without a team. While the database is away the team cannot
//! decide ([`PendingObserver::decides_escalated`] is false), so an
//! escalated ask no local client can decide falls back at once. Without
//! `[team]` nothing here runs.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use hookd_team::approvals::{self, Ask, Client, Outcome};
use hookd_team::connect::Backoff;
use hookd_team::ConnectTarget;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use crate::decision::{Answer, Verdict};
use crate::hub::{PendingAdded, PendingObserver};
use crate::protocol::approval::EventRef;
use crate::Shared;

/// The longest one query may take before the connection counts as lost.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the published asks still open are read back anyway (a
/// backstop for a notification that never came).
pub const POLL_EVERY: Duration = Duration::from_secs(10);

/// The task's counters, in `status.team`.
#[derive(Debug, Default)]
pub struct Counters {
    /// Whether the approvals connection (and its LISTEN) is up.
    pub listening: AtomicBool,
    /// Asks published to the team.
    pub escalated: AtomicU64,
    /// Asks the team's answer decided here.
    pub team_answers: AtomicU64,
    /// Published asks that ended here first (a local answer, the timeout).
    pub settled_locally: AtomicU64,
    /// Attempts to connect or query that failed.
    pub failures: AtomicU64,
    /// The last failure's cause.
    pub last_error: std::sync::Mutex<Option<String>>,
}

/// An ask the task follows.
#[derive(Debug)]
struct Waiting {
    short_id: String,
    agent: String,
    session: Option<String>,
    record: Bytes,
    rule_ids: Vec<String>,
    reason: Option<String>,
    approvals: u32,
    /// When it ends on this machine at the latest.
    deadline: Instant,
    /// When it goes to the team (now, or after `escalate_after`).
    escalate_at: Instant,
}

#[derive(Debug)]
enum Message {
    Added(Uuid, Box<Waiting>),
    Ended(Uuid, String),
}

/// The hub's `"team"` observer: hears what waits, and says whether the
/// team can decide an escalated ask now.
#[derive(Debug)]
struct Observer {
    counters: Arc<Counters>,
    escalate_after: Option<Duration>,
    tx: mpsc::UnboundedSender<Message>,
}

impl PendingObserver for Observer {
    fn decides(&self) -> bool {
        false
    }

    fn added(&self, added: &PendingAdded<'_>) {
        let now = Instant::now();
        let deadline = added.deadline.min(added.times_out);
        let (approvals, escalate_at) = match (added.asked_by.team_approvals, self.escalate_after) {
            (Some(n), _) => (n, now),
            (None, Some(after)) if now + after < deadline => (1, now + after),
            _ => return,
        };
        let waiting = Waiting {
            short_id: added.short_id.to_string(),
            agent: added.meta.agent.as_str().to_string(),
            session: added.meta.session.map(str::to_string),
            record: added.record.clone(),
            rule_ids: added.asked_by.rule_ids.clone(),
            reason: added.asked_by.reason.clone(),
            approvals,
            deadline,
            escalate_at,
        };
        let _ = self.tx.send(Message::Added(added.id, Box::new(waiting)));
    }

    fn ended(&self, id: Uuid, by: &str) {
        let _ = self.tx.send(Message::Ended(id, by.to_string()));
    }

    fn decides_escalated(&self) -> bool {
        self.counters.listening.load(Ordering::Relaxed)
    }
}

/// Registers the team's slot in the hub and starts the task, which
/// publishes as `machine` and keeps `counters` (`status.team` shows them).
pub fn start(
    shared: &Arc<Shared>,
    counters: &Arc<Counters>,
    machine: String,
    target: ConnectTarget,
    shutdown: &CancellationToken,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let escalate_after = match shared.config().decisions.escalate_after {
        crate::config::Timeout::After(d) => Some(d),
        crate::config::Timeout::Never => None,
    };
    shared.hub.observe_as(
        "team",
        Arc::new(Observer {
            counters: counters.clone(),
            escalate_after,
            tx,
        }),
    );
    tokio::spawn(
        Task {
            shared: shared.clone(),
            counters: counters.clone(),
            machine,
            target,
            waiting: HashMap::new(),
            published: HashSet::new(),
            to_close: Vec::new(),
            streak: false,
        }
        .run(rx, shutdown.clone()),
    );
}

struct Task {
    shared: Arc<Shared>,
    counters: Arc<Counters>,
    machine: String,
    target: ConnectTarget,
    /// Every ask followed, published or not yet.
    waiting: HashMap<Uuid, Waiting>,
    /// Those published (and not yet settled).
    published: HashSet<Uuid>,
    /// Published asks that ended here first, to close in the table.
    to_close: Vec<(Uuid, String)>,
    /// Whether a streak of failures is under way (logged once).
    streak: bool,
}

/// One query, bounded by [`QUERY_TIMEOUT`].
async fn bounded<T>(
    what: &'static str,
    f: impl std::future::Future<Output = hookd_team::Result<T>>,
) -> Result<T, String> {
    match tokio::time::timeout(QUERY_TIMEOUT, f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(format!("{what}: {e}")),
        Err(_) => Err(format!("{what}: no answer in {}s", QUERY_TIMEOUT.as_secs())),
    }
}

impl Task {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Message>, shutdown: CancellationToken) {
        let mut conn: Option<(Client, mpsc::UnboundedReceiver<String>)> = None;
        let mut backoff = Backoff::default();
        let mut retry_at = tokio::time::Instant::now();
        let mut read_back = false;
        let mut next_poll = tokio::time::Instant::now() + POLL_EVERY;
        loop {
            let now = tokio::time::Instant::now();
            if conn.is_none() && now >= retry_at {
                match bounded("connecting", approvals::listen(&self.target)).await {
                    Ok(c) => {
                        conn = Some(c);
                        backoff.reset();
                        self.up();
                        // Answers given while it was away are in the table.
                        read_back = true;
                    }
                    Err(e) => {
                        self.failed(e);
                        retry_at = tokio::time::Instant::now() + backoff.next_wait();
                    }
                }
            }
            if let Some((client, _)) = &conn {
                if let Err(e) = self.work(client, read_back).await {
                    conn = None;
                    self.failed(e);
                    retry_at = tokio::time::Instant::now() + backoff.next_wait();
                } else {
                    read_back = false;
                }
                if !self.published.is_empty() && tokio::time::Instant::now() >= next_poll {
                    read_back = true;
                    next_poll = tokio::time::Instant::now() + POLL_EVERY;
                    continue;
                }
            }
            // Sleep until something happens: a message, a notification, the
            // next ask to escalate, the poll, a reconnect.
            let next_escalation = self
                .waiting
                .iter()
                .filter(|(id, _)| !self.published.contains(id))
                .map(|(_, w)| w.escalate_at)
                .min()
                .map(tokio::time::Instant::from_std);
            let mut wake = next_escalation;
            if conn.is_none() {
                wake = Some(wake.map_or(retry_at, |w| w.min(retry_at)));
            } else if !self.published.is_empty() {
                wake = Some(wake.map_or(next_poll, |w| w.min(next_poll)));
            }
            let sleep = async {
                match wake {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            let notified = async {
                match &mut conn {
                    Some((_, notes)) => notes.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = shutdown.cancelled() => return,
                m = rx.recv() => match m {
                    Some(m) => self.message(m),
                    None => return,
                },
                n = notified => match n {
                    // Every daemon hears every answer on the one channel:
                    // only one naming an ask of its own reads back (the
                    // verdict still from the table; the poll and each
                    // reconnect read back whatever the payload said).
                    Some(id) => {
                        if id.parse::<Uuid>().is_ok_and(|id| self.published.contains(&id)) {
                            read_back = true;
                            tracing::debug!(ask = %id, "team answer notified");
                        }
                    }
                    None => {
                        conn = None;
                        self.failed("the LISTEN connection was lost".to_string());
                        retry_at = tokio::time::Instant::now();
                    }
                },
                _ = sleep => {}
            }
            // Take every message that arrived meanwhile before working.
            while let Ok(m) = rx.try_recv() {
                self.message(m);
            }
        }
    }

    fn message(&mut self, message: Message) {
        match message {
            Message::Added(id, waiting) => {
                self.waiting.insert(id, *waiting);
            }
            Message::Ended(id, by) => {
                self.waiting.remove(&id);
                if self.published.remove(&id) && !by.starts_with("client:team:") {
                    self.counters
                        .settled_locally
                        .fetch_add(1, Ordering::Relaxed);
                    self.to_close.push((id, by));
                }
            }
        }
    }

    /// Publishes what is due, closes what ended here, and reads back the
    /// verdicts when asked to.
    async fn work(&mut self, client: &Client, read_back: bool) -> Result<(), String> {
        let now = Instant::now();
        let due: Vec<Uuid> = self
            .waiting
            .iter()
            .filter(|(id, w)| !self.published.contains(id) && w.escalate_at <= now)
            .map(|(id, _)| *id)
            .collect();
        for id in due {
            let w = &self.waiting[&id];
            let ask = Ask {
                id: id.to_string(),
                machine: self.machine.clone(),
                short_id: w.short_id.clone(),
                remaining: w.deadline.saturating_duration_since(now),
                agent: w.agent.clone(),
                event: serde_json::from_slice(&w.record).unwrap_or(serde_json::Value::Null),
                rule_ids: w.rule_ids.clone(),
                reason: w.reason.clone(),
                narration: w
                    .session
                    .as_deref()
                    .and_then(|s| self.shared.narrator.last_line(s)),
                approvals_required: w.approvals,
            };
            bounded("publishing an ask", approvals::publish(client, &ask)).await?;
            self.published.insert(id);
            self.counters.escalated.fetch_add(1, Ordering::Relaxed);
        }
        if !self.to_close.is_empty() {
            let closing: Vec<(String, String)> = self
                .to_close
                .iter()
                .map(|(id, by)| (id.to_string(), by.clone()))
                .collect();
            bounded("closing asks", approvals::close(client, &closing)).await?;
            self.to_close.clear();
        }
        if read_back && !self.published.is_empty() {
            let ids: Vec<String> = self.published.iter().map(Uuid::to_string).collect();
            let outcomes = bounded("reading answers", approvals::outcomes(client, &ids)).await?;
            for outcome in outcomes {
                self.decide(outcome);
            }
        }
        self.up();
        Ok(())
    }

    /// Gives the team's verdict to the hub, as a client's `decide`.
    fn decide(&mut self, outcome: Outcome) {
        let Ok(id) = outcome.id.parse::<Uuid>() else {
            return;
        };
        self.published.remove(&id);
        self.waiting.remove(&id);
        let who = outcome.decided_by.join(",");
        let (verdict, reason) = if outcome.allow {
            (Verdict::Allow, outcome.reason)
        } else {
            let reason = match outcome.reason {
                Some(r) if !r.trim().is_empty() => format!("{r} (team: {who})"),
                _ => format!("denied by the team ({who})"),
            };
            (Verdict::Deny, Some(reason))
        };
        match self.shared.hub.decide(
            &EventRef::from(id),
            Answer::new(verdict, reason),
            &format!("team:{who}"),
            None,
        ) {
            Ok(()) => {
                self.counters.team_answers.fetch_add(1, Ordering::Relaxed);
            }
            // Ended here first (a local answer, the timeout): closed by
            // its `ended`.
            Err(e) => tracing::debug!(ask = %id, "the team's answer came late: {}", e.message),
        }
    }

    fn up(&mut self) {
        self.counters.listening.store(true, Ordering::Relaxed);
        if std::mem::take(&mut self.streak) {
            tracing::info!("team approvals: database reachable again");
        }
    }

    fn failed(&mut self, message: String) {
        self.counters.listening.store(false, Ordering::Relaxed);
        if !std::mem::replace(&mut self.streak, true) {
            tracing::warn!(
                "team approvals: database unreachable (logged once until it is back): {message}"
            );
        }
        let counters = &self.counters;
        // The cause before the count (a reader seeing one finds the other).
        *counters
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = Some(message);
        counters.failures.fetch_add(1, Ordering::Relaxed);
    }
}
