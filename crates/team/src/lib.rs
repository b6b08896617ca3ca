//! hookd's team plane: every daemon of a team talks to one PostgreSQL
//! database (docs/team.md). Off unless config.toml has `[team]`: without
//! it nothing here runs, connects or wakes.
//!
//! - [`approvals`]: team approvals, a machine's asks and an approver's
//!   answers (migration 0100);
//! - [`asks_link`]: an approver's connection to the open asks, read again
//!   as the database announces them;
//! - [`config`]: `[team]` and how it resolves to a connection the way libpq
//!   would (a URL or `key=value` string, the `PG*` variables, a service file);
//! - [`connect`]: one connection, and reconnecting with backoff;
//! - [`dashboard`]: what the team dashboard reads as an approver (the
//!   fleet, decisions searched);
//! - [`fleet`]: this machine's row in `hookd.fleet`;
//! - [`migrate`]: the schema, as numbered SQL files applied in order once
//!   each (`hookd team init`);
//! - [`ship`]: the event log's lines in `hookd.decisions`, the shipping
//!   cursor, and `hookd team verify`;
//! - [`status`]: what `hookd team status` reports;
//! - [`tls`]: TLS to the database as libpq does it (sslmode, the
//!   certificate files), rustls with ring.
//!
//! Migrations 0001–0099 are the fleet's and the shipped decisions'; 0100 on
//! are team approvals'.

pub mod approvals;
pub mod asks_link;
pub mod config;
pub mod connect;
pub mod dashboard;
pub mod fleet;
pub mod migrate;
pub mod ship;
pub mod status;
pub mod tls;

pub use config::{ConnectTarget, TeamConfig};

/// Everything that can fail talking to the team database.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `[team]` or the libpq environment describes no usable connection.
    #[error("{0}")]
    Config(String),
    /// TLS to the database cannot be set up (a file, a mode).
    #[error("team database TLS: {0}")]
    Tls(String),
    /// The database refused or failed (said with its causes: the client's
    /// own text is only "db error", "error performing TLS handshake").
    #[error("team database: {}", with_causes(.0))]
    Db(tokio_postgres::Error),
    /// A migration failed (named).
    #[error("migration {version:04} ({name}): {source}")]
    Migration {
        /// Its number.
        version: u32,
        /// Its name.
        name: &'static str,
        /// What the database said.
        source: tokio_postgres::Error,
    },
}

impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Error {
        Error::Db(e)
    }
}

/// An error and its sources, `: `-separated.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The team plane's result.
pub type Result<T> = std::result::Result<T, Error>;
