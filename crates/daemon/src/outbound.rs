//! Outgoing HTTP(S): one client configuration for every background sender
//! the daemon has (phone pushes, policy bundle downloads, telemetry export).
//!
//! The client is blocking (`ureq`): call it from a dedicated thread or
//! `spawn_blocking`, never from a task a hook waits on. A hook must never
//! wait for the network.
//!
//! TLS is rustls (with ring) on Linux and the platform's own on macOS: ring
//! compiles C, which cannot be cross-compiled for macOS here, and
//! `scripts/test` checks that the macOS build compiles.

use std::time::Duration;

/// An HTTP agent whose every request gives up after `timeout` (connecting,
/// sending and reading included) and reports non-2xx statuses as responses,
/// not errors, so callers can tell "the server said no" from "no server".
pub fn agent(timeout: Duration) -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .user_agent(concat!("hookd/", env!("CARGO_PKG_VERSION")));
    #[cfg(target_os = "macos")]
    let config = config.tls_config(
        ureq::tls::TlsConfig::builder()
            .provider(ureq::tls::TlsProvider::NativeTls)
            .build(),
    );
    config.build().into()
}
