//! OpenTelemetry export (`[otlp]` in config.toml): the event log's `event`
//! and `decision` lines as OTLP log records, and each decision point as a
//! span (hook received → decision sent), sent over OTLP/HTTP
//! (`http/protobuf` or `http/json`) to a collector.
//!
//! - [`config`]: the `[otlp]` table (pure; kept with the rest of
//!   `config.toml` in the daemon's crate);
//! - [`wire`]: the OTLP messages hookd sends and their two encodings (pure);
//! - [`records`]: log lines → log records and spans, ids derived from the
//!   event id so a span and its logs correlate (pure);
//! - [`exporter`]: the daemon's side: one thread that reads the event log
//!   from a cursor file, batches, sends and retries (the hook path only
//!   wakes it).

pub use crate::config::otlp as config;
pub mod exporter;
pub mod records;
pub mod wire;

pub use config::OtlpConfig;
pub use exporter::{Export, OtlpCounters};
