//! One-time approve/deny links and the approval page they open.

use std::sync::Arc;

use axum::Router;

use crate::daemon::Shared;

/// The links of the events that wait for a person.
#[derive(Debug, Default)]
pub struct Links {}

impl Links {
    /// Links alive now.
    pub fn count(&self) -> usize {
        0
    }
}

/// `GET`/`POST /a/{token}`.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
}
