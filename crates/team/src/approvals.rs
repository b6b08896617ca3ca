//! Team approvals in the database (migrations 0100, 0101): a machine
//! publishes an escalated ask, listens for `hookd_ask_answered` and reads
//! the verdict back from `hookd.asks`; an approver listens for
//! `hookd_ask_published` ([`PUBLISHED`]), lists the open asks and answers
//! one as itself. Who may do which is the database's (row-level
//! security), and so is the two-person rule (a trigger): this module only
//! says it in SQL and reads the outcome.

use std::time::Duration;

use serde::Serialize;
use tokio::sync::mpsc;
use tokio_postgres::AsyncMessage;

pub use tokio_postgres::Client;

use crate::config::ConnectTarget;

/// The channel the trigger notifies, with the ask's id as the payload.
pub const CHANNEL: &str = "hookd_ask_answered";

/// The channel announcing a change to the open asks (migration 0101): an
/// ask published, decided or closed; the payload is its id. Listeners read
/// the open asks back ([`open`]) under their own grants, never trusting
/// the payload.
pub const PUBLISHED: &str = "hookd_ask_published";

/// How often an approver's client (the Team pane, the dashboard) reads the
/// open asks while [`PUBLISHED`] says nothing: a fallback, since every
/// change is announced.
pub const OPEN_ASKS_POLL: Duration = Duration::from_secs(10);

/// [`OPEN_ASKS_POLL`], or the whole seconds in `HOOKD_TEAM_ASKS_POLL` (a
/// test hook: a long poll shows that announced asks need no poll; 1 to
/// 86400).
pub fn open_asks_poll() -> Duration {
    std::env::var("HOOKD_TEAM_ASKS_POLL")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| (1..=86_400).contains(s))
        .map_or(OPEN_ASKS_POLL, Duration::from_secs)
}

/// What a machine publishes for an escalated ask.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ask {
    /// The event's id (a UUID, as text).
    pub id: String,
    /// `[team] machine`.
    pub machine: String,
    /// The short id local clients see.
    pub short_id: String,
    /// How long until the ask ends on the machine (its deadline).
    pub remaining: Duration,
    /// The agent that asked (`claude-code`, …).
    pub agent: String,
    /// The redacted event record, as in the machine's log.
    pub event: serde_json::Value,
    /// The rules that asked.
    pub rule_ids: Vec<String>,
    /// Their reason.
    pub reason: Option<String>,
    /// The narrator's last line for the session, if any.
    pub narration: Option<String>,
    /// Different approvers whose allow it needs (1–10).
    pub approvals_required: u32,
}

/// An ask's verdict, as the database worked it out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    /// The ask's id.
    pub id: String,
    /// `allow` or `deny`.
    pub allow: bool,
    /// The approvers: the one who denied, or every one who allowed.
    pub decided_by: Vec<String>,
    /// The deciding answer's reason.
    pub reason: Option<String>,
}

/// Publishes `ask` as the connected machine role (an id published before,
/// e.g. again after a reconnect, is left as it is).
pub async fn publish(client: &Client, ask: &Ask) -> crate::Result<()> {
    let approvals = i32::try_from(ask.approvals_required).unwrap_or(i32::MAX);
    let remaining = ask.remaining.as_secs_f64();
    client
        .execute(
            "INSERT INTO hookd.asks (id, machine, short_id, deadline, agent, event, rule_ids,
                                     reason, narration, approvals_required)
             VALUES ($1::text::uuid, $2, $3, now() + make_interval(secs => $4::float8), $5, $6,
                     $7, $8, $9, $10)
             ON CONFLICT (id) DO NOTHING",
            &[
                &ask.id,
                &ask.machine,
                &ask.short_id,
                &remaining,
                &ask.agent,
                &ask.event,
                &ask.rule_ids,
                &ask.reason,
                &ask.narration,
                &approvals,
            ],
        )
        .await?;
    Ok(())
}

/// The verdicts of those of `ids` the database has decided.
pub async fn outcomes(client: &Client, ids: &[String]) -> crate::Result<Vec<Outcome>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = client
        .query(
            "SELECT id::text, verdict, coalesce(decided_by, '{}'), decided_reason
               FROM hookd.asks
              WHERE id = ANY($1::text[]::uuid[]) AND verdict IS NOT NULL",
            &[&ids],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Outcome {
            id: r.get(0),
            allow: r.get::<_, String>(1) == "allow",
            decided_by: r.get(2),
            reason: r.get(3),
        })
        .collect())
}

/// Marks asks as ended on the machine before the team decided them (`by`:
/// `client:tui`, `timeout`, …): approvers no longer see them open, and the
/// database refuses answers to them.
pub async fn close(client: &Client, ids: &[(String, String)]) -> crate::Result<()> {
    for (id, by) in ids {
        client
            .execute(
                "UPDATE hookd.asks SET closed = $2
                  WHERE id = $1::text::uuid AND verdict IS NULL AND closed IS NULL",
                &[id, by],
            )
            .await?;
    }
    Ok(())
}

/// A connection that listens on [`CHANNEL`]: the client, and the ids the
/// notifications name. The receiver ends when the connection does (then
/// connect again, and read back every ask still waiting: answers given
/// meanwhile are in the table).
pub async fn listen(
    target: &ConnectTarget,
) -> crate::Result<(Client, mpsc::UnboundedReceiver<String>)> {
    listen_on(target, CHANNEL).await
}

/// A connection that listens on `channel` ([`CHANNEL`] or [`PUBLISHED`]):
/// the client (usable for queries too), and the notifications' payloads.
/// The receiver ends when the connection does: connect again and read the
/// table back, since what changed meanwhile was announced to nobody.
pub async fn listen_on(
    target: &ConnectTarget,
    channel: &str,
) -> crate::Result<(Client, mpsc::UnboundedReceiver<String>)> {
    let (client, mut connection) = crate::tls::connect(&target.config, &target.tls).await?;
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    if tx.send(n.payload().to_string()).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::debug!("team approvals connection ended: {e}");
                    return;
                }
                None => return,
            }
        }
    });
    client.batch_execute(&format!("LISTEN {channel}")).await?;
    Ok((client, rx))
}

/// An open ask, as an approver sees it.
#[derive(Debug, Clone, Serialize)]
pub struct OpenAsk {
    /// Its id.
    pub id: String,
    /// The short id the machine's local clients see.
    pub short_id: String,
    /// The machine that asked.
    pub machine: String,
    /// The agent.
    pub agent: String,
    /// The rules that asked.
    pub rule_ids: Vec<String>,
    /// Their reason.
    pub reason: Option<String>,
    /// The narrator's line, if any.
    pub narration: Option<String>,
    /// The tool (from the event), if any.
    pub tool: Option<String>,
    /// The tool's input or the hook's payload (the redacted event's
    /// `input`/`tool_input`).
    pub input: serde_json::Value,
    /// Different approvers whose allow it needs.
    pub approvals_required: i32,
    /// Who allowed so far.
    pub allowed_by: Vec<String>,
    /// Seconds until its deadline.
    pub seconds_left: f64,
}

/// The asks still open (undecided, not closed, before their deadline),
/// oldest first, as the connected role may see them.
pub async fn open(client: &Client) -> crate::Result<Vec<OpenAsk>> {
    let rows = client
        .query(
            "SELECT a.id::text, a.short_id, a.machine, a.agent, a.rule_ids, a.reason,
                    a.narration, a.event, a.approvals_required,
                    coalesce((SELECT array_agg(approver::text ORDER BY at) FROM hookd.answers
                               WHERE ask = a.id AND verdict = 'allow'), '{}'),
                    extract(epoch FROM a.deadline - now())::float8
               FROM hookd.asks a
              WHERE a.verdict IS NULL AND a.closed IS NULL AND a.deadline > now()
              ORDER BY a.asked_at",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let event: serde_json::Value = r.get(7);
            let tool = event
                .pointer("/tool")
                .or_else(|| event.pointer("/tool_name"))
                .or_else(|| event.pointer("/input/tool_name"))
                .and_then(|t| t.as_str())
                .map(str::to_string);
            let input = ["/input/tool_input", "/tool_input", "/input"]
                .iter()
                .find_map(|p| event.pointer(p))
                .cloned()
                .unwrap_or(serde_json::Value::Null);
            OpenAsk {
                id: r.get(0),
                short_id: r.get(1),
                machine: r.get(2),
                agent: r.get(3),
                rule_ids: r.get(4),
                reason: r.get(5),
                narration: r.get(6),
                tool,
                input,
                approvals_required: r.get(8),
                allowed_by: r.get(9),
                seconds_left: r.get(10),
            }
        })
        .collect())
}

/// Why an answer was not taken.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// No ask has that id or short id (or this role may not see it).
    #[error("no team ask {0} (see `hookd team pending`)")]
    NotFound(String),
    /// More than one open ask has that short id (machines pick theirs
    /// alone): give the full id.
    #[error("{0} names more than one ask: give its full id (`hookd team pending --json`)")]
    Ambiguous(String),
    /// It was decided, closed on its machine, or past its deadline.
    #[error("team ask {id} is no longer open: {why}")]
    NotOpen {
        /// The id.
        id: String,
        /// What ended it.
        why: String,
    },
    /// This approver answered it already (one approver counts once).
    #[error("you ({0}) answered this ask already: one approver counts once")]
    AlreadyAnswered(String),
    /// The database refused (a role that may not answer: a machine's).
    #[error("the database refused the answer: {0}")]
    Refused(String),
    /// Anything else.
    #[error(transparent)]
    Db(#[from] crate::Error),
}

/// What an answer did.
#[derive(Debug, Clone, Serialize)]
pub struct Answered {
    /// The ask's id.
    pub id: String,
    /// The verdict now, if the answer (with those before it) decided it.
    pub verdict: Option<String>,
    /// Allows so far, and how many it needs.
    pub allows: i64,
    /// How many it needs.
    pub approvals_required: i32,
}

/// Answers the ask `id` (its full id or its short id) as the connected
/// role. The database decides whether this role may, and what the answers
/// add up to.
pub async fn answer(
    client: &Client,
    id: &str,
    allow: bool,
    reason: Option<&str>,
) -> Result<Answered, AnswerError> {
    let db = |e: tokio_postgres::Error| AnswerError::Db(crate::Error::Db(e));
    let rows = client
        .query(
            "SELECT id::text, verdict, closed, deadline <= now(), approvals_required
               FROM hookd.asks WHERE id::text = $1 OR short_id = $1",
            &[&id],
        )
        .await
        .map_err(db)?;
    let open: Vec<_> = rows
        .iter()
        .filter(|r| {
            r.get::<_, Option<String>>(1).is_none()
                && r.get::<_, Option<String>>(2).is_none()
                && !r.get::<_, bool>(3)
        })
        .collect();
    let row = match (open.as_slice(), rows.as_slice()) {
        ([one], _) => *one,
        ([], []) => return Err(AnswerError::NotFound(id.to_string())),
        ([], [r, ..]) => {
            let why = match (r.get::<_, Option<String>>(1), r.get::<_, Option<String>>(2)) {
                (Some(v), _) => format!("the team decided it ({v})"),
                (None, Some(by)) => format!("it ended on its machine ({by})"),
                (None, None) => "its deadline passed".to_string(),
            };
            return Err(AnswerError::NotOpen { id: r.get(0), why });
        }
        (_, _) => return Err(AnswerError::Ambiguous(id.to_string())),
    };
    let full: String = row.get(0);
    let required: i32 = row.get(4);
    let verdict = if allow { "allow" } else { "deny" };
    if let Err(e) = client
        .execute(
            "INSERT INTO hookd.answers (ask, verdict, reason) VALUES ($1::text::uuid, $2, $3)",
            &[&full, &verdict, &reason],
        )
        .await
    {
        let code = e.code().cloned();
        let message = e
            .as_db_error()
            .map(|d| d.message().to_string())
            .unwrap_or_else(|| e.to_string());
        return Err(match code {
            Some(c) if c == tokio_postgres::error::SqlState::UNIQUE_VIOLATION => {
                AnswerError::AlreadyAnswered(current_user(client).await.unwrap_or_default())
            }
            Some(_) => AnswerError::Refused(message),
            None => db(e),
        });
    }
    let after = client
        .query_one(
            "SELECT verdict, (SELECT count(*) FROM hookd.answers WHERE ask = $1::text::uuid AND verdict = 'allow')
               FROM hookd.asks WHERE id = $1::text::uuid",
            &[&full],
        )
        .await
        .map_err(db)?;
    Ok(Answered {
        id: full,
        verdict: after.get(0),
        allows: after.get(1),
        approvals_required: required,
    })
}

async fn current_user(client: &Client) -> Option<String> {
    client
        .query_one("SELECT current_user::text", &[])
        .await
        .ok()
        .map(|r| r.get(0))
}
