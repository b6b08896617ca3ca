//! What the composition root (`hookd serve`, in the command line's crate)
//! hands the daemon: the faces it serves besides its socket. The daemon's
//! core names none of them; it calls through these.
//!
//! - the **HTTP face** (`hookd::http`: hooks over HTTP, the approval
//!   pages, `/metrics`, the pushes with their links): bound before the
//!   runtime starts, so a taken port fails start-up, and started once the
//!   daemon serves; a reload of `config.toml` that adds `[http]` starts it
//!   then ([`Faces::http`]). The daemon reads only its status.
//! - the **record exporter** (`hookd::otlp`, OpenTelemetry): it reads the
//!   log file from its own cursor; every line the log is handed wakes it
//!   ([`RecordExport::push`]).

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio_util::sync::CancellationToken;

use crate::config::otlp::OtlpConfig;
use crate::config::Config;
use crate::protocol::{HttpStatus, OtlpStatus};
use crate::Shared;

/// The HTTP face, as the daemon sees it once it runs.
pub trait HttpFace: Send + Sync + 'static {
    /// `status.http`.
    fn status(&self) -> HttpStatus;
    /// The face itself, for its own handlers to find it again in
    /// [`Shared::http`].
    fn as_any(&self) -> &dyn Any;
    /// [`HttpFace::as_any`], shared.
    fn into_any(self: Arc<Self>) -> Arc<dyn Any + Send + Sync>;
    /// Tool calls of a session ran unjudged: push it to the `[notify]`
    /// targets (see [`crate::coverage`]). Never blocks.
    /// The narrator wrote a line (for a waiting event's push, sent then).
    fn narration(&self, _narration: &crate::protocol::narration::Narration) {}
    fn coverage_alarm(&self, _alarm: &crate::protocol::coverage::CoverageAlarm) {}
}

/// An HTTP listener bound and ready: started on the running daemon, it
/// sets [`Shared::http`] and serves until `shutdown`.
pub type PreparedHttp =
    Box<dyn FnOnce(&Arc<Shared>, &CancellationToken) -> anyhow::Result<()> + Send>;

/// Where the daemon's log lines go besides the log file.
pub trait RecordExport: Send + Sync + 'static {
    /// One event or decision line was handed to the log (never blocks): a
    /// wake-up, the exporter reads the line from the file.
    fn push(&self, line: &Bytes);
    /// `status.otlp`; `None` when nothing is exported.
    fn status(&self) -> Option<OtlpStatus>;
    /// Sends what waits, for at most `grace`; returns how many records
    /// were not sent.
    fn close(&self, grace: Duration) -> u64;
}

/// Exports nothing: no `[otlp]`, or a daemon built without an exporter.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoExport;

impl RecordExport for NoExport {
    fn push(&self, _line: &Bytes) {}

    fn status(&self) -> Option<OtlpStatus> {
        None
    }

    fn close(&self, _grace: Duration) -> u64 {
        0
    }
}

/// The faces a daemon is built with.
#[derive(Clone, Copy)]
pub struct Faces {
    /// Checks the `[http]` and `[notify]` of a configuration and binds the
    /// listener it asks for (`Ok(None)`: it asks for none).
    pub http: fn(&Config) -> anyhow::Result<Option<PreparedHttp>>,
    /// Starts the exporter `[otlp]` asks for, reading the event log at
    /// the path given.
    pub otlp: fn(&OtlpConfig, &std::path::Path) -> anyhow::Result<Arc<dyn RecordExport>>,
}

impl Faces {
    /// No face: a configuration that asks for one is refused by name.
    pub fn none() -> Faces {
        Faces {
            http: |config| match config.http.listen {
                None => Ok(None),
                Some(_) => anyhow::bail!("[http]: this daemon was built without its HTTP face"),
            },
            otlp: |_, _| anyhow::bail!("[otlp]: this daemon was built without an exporter"),
        }
    }
}

impl Default for Faces {
    fn default() -> Faces {
        Faces::none()
    }
}

impl std::fmt::Debug for Faces {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Faces")
    }
}

impl std::fmt::Debug for dyn HttpFace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("HttpFace").field(&self.status()).finish()
    }
}

impl std::fmt::Debug for dyn RecordExport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RecordExport").field(&self.status()).finish()
    }
}
