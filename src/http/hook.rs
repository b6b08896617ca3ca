//! `POST /hook/claude-code`: Claude Code's `http` hook handler. The body is
//! the hook input a command hook reads on stdin; the answer is what
//! `hook-forwarder` would print, computed by the same path its frames take
//! (`daemon::hook::answer` → `claude::output`), with what a command hook
//! says by exiting 2 turned into its JSON form (HTTP has no exit code; see
//! tests/e2e/FINDINGS-http-hooks.md).
//!
//! Claude Code does not send the handler's `timeout`: `hookd install
//! --transport http` writes it into the URL as `?timeout=<seconds>`, and
//! the daemon answers before it, as it does before a forwarder's deadline.
//! Without it the deadline is Claude Code's default, 600 s.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::agent::claude::output;
use crate::daemon::{hook, Shared};
use crate::protocol::{Harness, HookRequest};

/// Claude Code's default hook timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The route.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/hook/claude-code", post(claude_code))
}

/// The handler's `timeout` from the URL's query (`timeout=<seconds>`, the
/// only parameter), or what is wrong with the query.
fn timeout_of(query: Option<&str>) -> Result<Option<u64>, String> {
    let mut timeout = None;
    for pair in query
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty())
    {
        match pair.split_once('=') {
            Some(("timeout", seconds)) => {
                timeout =
                    Some(seconds.parse::<u64>().map_err(|_| {
                        format!("`timeout={seconds}` is not a whole number of seconds")
                    })?)
            }
            _ => return Err(format!("unknown parameter `{pair}`")),
        }
    }
    Ok(timeout)
}

async fn claude_code(State(shared): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let timeout = match timeout_of(uri.query()) {
        Ok(timeout) => timeout,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!(
                    "400 Bad Request: {e}; the only parameter is `timeout` (the handler's, in \
                     seconds)\n"
                ),
            )
                .into_response()
        }
    };
    let deadline = timeout
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
        .min(DEFAULT_TIMEOUT * 6);
    // As the forwarder does: input that is not JSON is judged as the
    // fallback, with what was wrong in the log.
    let (input, input_error) = match serde_json::from_slice(&body) {
        Ok(input) => (input, None),
        Err(e) => (
            serde_json::Value::String(String::from_utf8_lossy(&body).into_owned()),
            Some(format!("the request body is not JSON: {e}")),
        ),
    };
    let request = HookRequest {
        v: None,
        id: crate::event::new_id().to_string(),
        harness: Harness::ClaudeCode,
        deadline_ms: deadline.as_millis() as u64,
        fail_closed: Default::default(),
        // An HTTP hook carries none of the hook process's environment.
        env: Default::default(),
        input,
        input_error,
    };
    // Not cancelled by the daemon's shutdown here: the listener ends this
    // connection then, and dropping the answer ends its wait.
    let shutdown = CancellationToken::new();
    let result = hook::answer(request, body.len(), &shared, &shutdown).await;
    let out = output::HookOutput {
        exit_code: result.exit_code,
        stdout: result.stdout,
        stderr: result.stderr,
    };
    (
        [(header::CONTENT_TYPE, "application/json")],
        output::http_body(&out),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_holds_the_timeout_only() {
        assert_eq!(timeout_of(None), Ok(None));
        assert_eq!(timeout_of(Some("timeout=30")), Ok(Some(30)));
        assert!(timeout_of(Some("timeout=1.5"))
            .unwrap_err()
            .contains("whole number"));
        assert!(timeout_of(Some("token=x"))
            .unwrap_err()
            .contains("`token=x`"));
    }
}
