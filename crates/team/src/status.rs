//! What `hookd team status` reports.

use serde::Serialize;
use tokio_postgres::Client;

use crate::migrate::{applied, MIGRATIONS};

/// The database as this machine's role sees it.
#[derive(Debug, Clone, Serialize)]
pub struct TeamStatus {
    /// `user@host:port/dbname`.
    pub target: String,
    /// This machine's name in the fleet.
    pub machine: String,
    /// The server's version string.
    pub server_version: String,
    /// Migrations applied.
    pub applied: Vec<u32>,
    /// Migrations this hookd knows and the database lacks
    /// (`hookd team init` applies them).
    pub pending: Vec<u32>,
    /// Fleet rows this role can see (its own, or all for an approver).
    pub fleet_rows: Option<i64>,
    /// Decisions this role can see.
    pub decisions: Option<i64>,
    /// This connection's TLS, as the server sees it.
    pub tls: TlsStatus,
}

/// This connection's TLS (`pg_stat_ssl`) and the sslmode asked for.
#[derive(Debug, Clone, Serialize)]
pub struct TlsStatus {
    /// `sslmode` (crate::tls).
    pub sslmode: String,
    /// Whether the connection is encrypted.
    pub in_use: bool,
    /// `TLSv1.3`, … when in use.
    pub version: Option<String>,
    /// The cipher suite when in use.
    pub cipher: Option<String>,
}

/// Reads the status.
pub async fn status(client: &Client, target: &crate::ConnectTarget) -> crate::Result<TeamStatus> {
    let server_version: String = client.query_one("SHOW server_version", &[]).await?.get(0);
    let applied = applied(client).await?;
    let pending = MIGRATIONS
        .iter()
        .map(|m| m.version)
        .filter(|v| !applied.contains(v))
        .collect();
    let none_applied = applied.is_empty();
    let count = |table: &'static str| async move {
        if none_applied {
            return None;
        }
        client
            .query_one(&format!("SELECT count(*) FROM hookd.{table}"), &[])
            .await
            .ok()
            .map(|r| r.get::<_, i64>(0))
    };
    let ssl = client
        .query_one(
            "SELECT ssl, version, cipher FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await?;
    let tls = TlsStatus {
        sslmode: target.tls.mode.to_string(),
        in_use: ssl.get(0),
        version: ssl.get(1),
        cipher: ssl.get(2),
    };
    let fleet_rows = count("fleet").await;
    let decisions = count("decisions").await;
    Ok(TeamStatus {
        target: target.describe(),
        machine: target.machine.clone(),
        server_version,
        applied,
        pending,
        fleet_rows,
        decisions,
        tls,
    })
}
