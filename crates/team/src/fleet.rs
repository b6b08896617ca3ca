//! The fleet: each daemon keeps one row current (`hookd.fleet`), on
//! start, on a change and on a slow heartbeat.

use serde::Serialize;
use tokio_postgres::Client;

/// What a machine's row says.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetRow {
    /// This machine's name (`[team] machine`).
    pub machine: String,
    /// Its host name.
    pub host: String,
    /// The user the daemon runs as.
    pub os_user: String,
    /// hookd's version.
    pub version: String,
    /// The agents seen and their coverage (tool calls that ran unjudged).
    pub agents: serde_json::Value,
    /// The policy in force: its revision and layers.
    pub policy: serde_json::Value,
}

/// Writes the row (inserting it the first time) and sets `last_seen`.
/// Row-level security lets a machine's role write only a row it owns: a
/// name another role holds fails here.
pub async fn upsert(client: &Client, row: &FleetRow) -> crate::Result<()> {
    client
        .execute(
            "INSERT INTO hookd.fleet (machine, host, os_user, version, agents, policy, last_seen)
             VALUES ($1, $2, $3, $4, $5, $6, now())
             ON CONFLICT (machine) DO UPDATE SET
                 host = EXCLUDED.host, os_user = EXCLUDED.os_user,
                 version = EXCLUDED.version, agents = EXCLUDED.agents,
                 policy = EXCLUDED.policy, last_seen = now()",
            &[
                &row.machine,
                &row.host,
                &row.os_user,
                &row.version,
                &row.agents,
                &row.policy,
            ],
        )
        .await?;
    Ok(())
}
