//! The composition root of `hookd serve`: the daemon (`hookd_daemon`)
//! with the faces this crate builds over it — the HTTP face
//! ([`crate::http`]) and the OpenTelemetry exporter ([`crate::otlp`]).
//! The daemon's crate names neither; it calls them through
//! [`Faces`].

use crate::daemon::faces::Faces;

/// Every face hookd has.
pub fn faces() -> Faces {
    Faces {
        http: crate::http::face,
        otlp: crate::otlp::exporter::start_export,
    }
}
