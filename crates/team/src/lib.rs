//! hookd's team plane: every daemon of a team talks to one PostgreSQL
//! database (docs/team.md). Off unless config.toml has `[team]`: without
//! it nothing here runs, connects or wakes.
//!
//! - [`approvals`]: team approvals, a machine's asks and an approver's
//!   answers (migration 0100);
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
//! - [`status`]: what `hookd team status` reports.
//!
//! Migrations 0001–0099 are the fleet's and the shipped decisions'; 0100 on
//! are team approvals'.

pub mod approvals;
pub mod config;
pub mod connect;
pub mod dashboard;
pub mod fleet;
pub mod migrate;
pub mod ship;
pub mod status;

pub use config::{ConnectTarget, TeamConfig};

/// Everything that can fail talking to the team database.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `[team]` or the libpq environment describes no usable connection.
    #[error("{0}")]
    Config(String),
    /// The database refused or failed.
    #[error("team database: {0}")]
    Db(#[from] tokio_postgres::Error),
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

/// The team plane's result.
pub type Result<T> = std::result::Result<T, Error>;
