//! The schema as numbered SQL files (`migrations/NNNN_name.sql`), applied
//! in order, each once, recorded in `hookd.schema_migrations`.
//!
//! Numbers 0001–0099 are the fleet's and the shipped decisions'; 0100 on
//! are team approvals'. A migration is never edited once released: a
//! change is a new file.

use tokio_postgres::Client;

/// One migration.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Its number.
    pub version: u32,
    /// Its name (the file's, without number and `.sql`).
    pub name: &'static str,
    /// Its SQL.
    pub sql: &'static str,
}

/// Every migration, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "schema",
        sql: include_str!("../migrations/0001_schema.sql"),
    },
    Migration {
        version: 2,
        name: "roles",
        sql: include_str!("../migrations/0002_roles.sql"),
    },
    Migration {
        version: 3,
        name: "decisions",
        sql: include_str!("../migrations/0003_decisions.sql"),
    },
    Migration {
        version: 100,
        name: "team_approvals",
        sql: include_str!("../migrations/0100_team_approvals.sql"),
    },
    Migration {
        version: 101,
        name: "team_approvals_published",
        sql: include_str!("../migrations/0101_team_approvals_published.sql"),
    },
    Migration {
        version: 102,
        name: "team_approvals_answer_lock",
        sql: include_str!("../migrations/0102_team_approvals_answer_lock.sql"),
    },
];

/// The bookkeeping table, created before anything else.
const BOOKKEEPING: &str = "CREATE SCHEMA IF NOT EXISTS hookd;
CREATE TABLE IF NOT EXISTS hookd.schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);";

/// A key for `pg_advisory_xact_lock`: two `hookd team init` at once apply
/// each migration once.
const LOCK: i64 = 0x686f_6f6b_6474_6d31; // "hookdtm1"

/// The versions already applied (empty when the bookkeeping table is missing).
pub async fn applied(client: &Client) -> crate::Result<Vec<u32>> {
    let exists: bool = client
        .query_one(
            "SELECT to_regclass('hookd.schema_migrations') IS NOT NULL",
            &[],
        )
        .await?
        .get(0);
    if !exists {
        return Ok(Vec::new());
    }
    let rows = client
        .query(
            "SELECT version FROM hookd.schema_migrations ORDER BY version",
            &[],
        )
        .await?;
    Ok(rows.iter().map(|r| r.get::<_, i32>(0) as u32).collect())
}

/// Applies every migration not applied yet, each in its own transaction;
/// returns the ones it applied (none the second time).
pub async fn migrate(client: &mut Client) -> crate::Result<Vec<Migration>> {
    let mut done = Vec::new();
    for m in MIGRATIONS {
        let tx = client.transaction().await?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK])
            .await?;
        tx.batch_execute(BOOKKEEPING).await?;
        let version = m.version as i32;
        let present = tx
            .query_opt(
                "SELECT 1 FROM hookd.schema_migrations WHERE version = $1",
                &[&version],
            )
            .await?
            .is_some();
        if present {
            tx.commit().await?;
            continue;
        }
        tx.batch_execute(m.sql)
            .await
            .map_err(|source| crate::Error::Migration {
                version: m.version,
                name: m.name,
                source,
            })?;
        tx.execute(
            "INSERT INTO hookd.schema_migrations (version, name) VALUES ($1, $2)",
            &[&version, &m.name],
        )
        .await?;
        tx.commit().await?;
        done.push(*m);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_in_order_with_approvals_from_0100() {
        let mut last = 0;
        for m in MIGRATIONS {
            assert!(m.version > last, "{} out of order", m.version);
            assert_eq!(
                m.version >= 100,
                m.name.starts_with("team_approvals"),
                "0100+ are team approvals', and only they: {}",
                m.name
            );
            last = m.version;
        }
        // Every file under migrations/ is listed.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/migrations");
        let files = std::fs::read_dir(dir).unwrap().count();
        assert_eq!(
            files,
            MIGRATIONS.len(),
            "a file in migrations/ is not in MIGRATIONS"
        );
    }
}
