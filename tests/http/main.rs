//! hookd over HTTP and OTLP: the HTTP listener and its hooks, the approval
//! page in a real browser, the links and webhooks it sends, the metrics a
//! real Prometheus scrapes, and the OpenTelemetry export. One crate for the
//! network-facing outputs (issue #22); each test binds its own loopback
//! port (port 0).

#[path = "../support/mod.rs"]
mod support;

mod http;
mod http_approve;
mod http_hooks;
mod http_links;
mod http_narration;
mod otlp;
