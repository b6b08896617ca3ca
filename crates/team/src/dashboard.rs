//! What the team dashboard (`hookd team dashboard`) reads, as an
//! approver: the whole fleet and the recent decisions, searched by
//! machine, agent, rule and verdict. The open asks and answering them are
//! [`crate::approvals`]'s, the same path as `hookd team pending`/`answer`.

use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

/// One machine's fleet row, as the dashboard shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    /// `[team] machine`.
    pub machine: String,
    /// The role that wrote the row.
    pub db_role: String,
    /// Its host name.
    pub host: String,
    /// The user the daemon runs as.
    pub os_user: String,
    /// hookd's version.
    pub version: String,
    /// Per agent: `agent`, `unjudged` (the coverage alarm), `last_unjudged_at`.
    pub agents: serde_json::Value,
    /// The policy in force: `revision`, `source`, `layers`, `reload_error`.
    pub policy: serde_json::Value,
    /// First written (RFC 3339).
    pub started_at: String,
    /// Last written (RFC 3339).
    pub last_seen: String,
    /// Seconds since `last_seen`.
    pub seen_seconds_ago: f64,
}

/// Every fleet row the connected role may read (an approver: all), by name.
pub async fn fleet(client: &Client) -> crate::Result<Vec<Machine>> {
    let rows = client
        .query(
            "SELECT machine, db_role::text, host, os_user, version, agents, policy,
                    to_json(started_at)#>>'{}', to_json(last_seen)#>>'{}',
                    extract(epoch FROM now() - last_seen)::float8
               FROM hookd.fleet ORDER BY machine",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Machine {
            machine: r.get(0),
            db_role: r.get(1),
            host: r.get(2),
            os_user: r.get(3),
            version: r.get(4),
            agents: r.get(5),
            policy: r.get(6),
            started_at: r.get(7),
            last_seen: r.get(8),
            seen_seconds_ago: r.get(9),
        })
        .collect())
}

/// A search of the shipped decisions: each given field must match exactly
/// (`rule`: the first rule or any of `rule_ids`); empty means any.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Search {
    /// The machine's name.
    pub machine: Option<String>,
    /// The agent (`claude-code`, …).
    pub agent: Option<String>,
    /// A rule id.
    pub rule: Option<String>,
    /// `allow`, `deny`, `ask`, …
    pub verdict: Option<String>,
    /// How many, newest first (1 to 500; default 100).
    pub limit: Option<i64>,
}

impl Search {
    /// The most rows one search returns.
    pub const MAX: i64 = 500;
}

/// One shipped decision line.
#[derive(Debug, Clone, Serialize)]
pub struct Decision {
    /// The machine.
    pub machine: String,
    /// The line's seq in that machine's log.
    pub seq: i64,
    /// When (RFC 3339).
    pub at: String,
    /// The agent.
    pub agent: Option<String>,
    /// The tool.
    pub tool: Option<String>,
    /// The verdict.
    pub verdict: Option<String>,
    /// The rules that decided.
    pub rule_ids: Vec<String>,
    /// The layer of the first.
    pub layer: Option<String>,
    /// The policy revision.
    pub revision: Option<String>,
    /// Who answered (`source`: `rules`, `client:tui`, `team:alice`, …).
    pub source: Option<String>,
    /// The decision's reason.
    pub reason: Option<String>,
}

fn given(field: &Option<String>) -> Option<&str> {
    field.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

/// The newest decisions matching `search`, newest first.
pub async fn decisions(client: &Client, search: &Search) -> crate::Result<Vec<Decision>> {
    let limit = search.limit.unwrap_or(100).clamp(1, Search::MAX);
    let rows = client
        .query(
            "SELECT machine, seq, to_json(at)#>>'{}', agent, tool, verdict, rule_ids, layer,
                    revision, record->>'source', record->>'reason'
               FROM hookd.decisions
              WHERE kind = 'decision'
                AND ($1::text IS NULL OR machine = $1)
                AND ($2::text IS NULL OR agent = $2)
                AND ($3::text IS NULL OR rule = $3 OR $3 = ANY(rule_ids))
                AND ($4::text IS NULL OR verdict = $4)
              ORDER BY at DESC, seq DESC
              LIMIT $5",
            &[
                &given(&search.machine),
                &given(&search.agent),
                &given(&search.rule),
                &given(&search.verdict),
                &limit,
            ],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| Decision {
            machine: r.get(0),
            seq: r.get(1),
            at: r.get(2),
            agent: r.get(3),
            tool: r.get(4),
            verdict: r.get(5),
            rule_ids: r.get(6),
            layer: r.get(7),
            revision: r.get(8),
            source: r.get(9),
            reason: r.get(10),
        })
        .collect())
}

/// The connected role, and whether it is an approver (a member of
/// `hookd_approver`): the dashboard reads and answers as one.
pub async fn whoami(client: &Client) -> crate::Result<(String, bool)> {
    let row = client
        .query_one(
            "SELECT current_user::text,
                    coalesce(pg_has_role(current_user, 'hookd_approver', 'MEMBER'), false)",
            &[],
        )
        .await?;
    Ok((row.get(0), row.get(1)))
}
