//! `GET /metrics`: the daemon's metrics in Prometheus' text format (see
//! [`crate::daemon::metrics`]), behind the bearer token like every route.

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use crate::daemon::{metrics, Shared};

/// The route.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/metrics", get(scrape))
}

async fn scrape(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    let text = metrics::render(&shared.metrics, &shared.status());
    ([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], text)
}
