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
//! Without it the deadline is Claude Code's default, 600 s. Nor does it say
//! whether the handler fails closed (`onFailure`): install writes the
//! forwarder's `--fail-closed` scope beside it, `&fail_closed=tools|all`,
//! which the daemon's own fallbacks for the hook honor, as a frame's.
//!
//! The body is read by [`json::read_input`], the function that reads a
//! forwarder's frame's input, so the same bytes are the same event.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use tokio_util::sync::CancellationToken;

use crate::agent::claude::{output, FailClosed};
use crate::daemon::{hook, Shared};
use crate::protocol::{json, Harness, HookRequest};

/// Claude Code's default hook timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The route.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/hook/claude-code", post(claude_code))
}

/// What the handler's URL says about it (`hookd install --transport http`
/// writes both): `timeout=<seconds>`, the forwarder's `--timeout`, and
/// `fail_closed=tools|all`, the forwarder's `--fail-closed`.
#[derive(Debug, Default, PartialEq, Eq)]
struct HandlerQuery {
    timeout: Option<u64>,
    fail_closed: FailClosed,
}

impl HandlerQuery {
    /// The URL's query read, or what is wrong with it.
    fn parse(query: Option<&str>) -> Result<HandlerQuery, String> {
        let mut handler = HandlerQuery::default();
        for pair in query
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
        {
            match pair.split_once('=') {
                Some(("timeout", seconds)) => {
                    handler.timeout =
                        Some(seconds.parse::<u64>().map_err(|_| {
                            "`timeout` is not a whole number of seconds".to_string()
                        })?)
                }
                Some(("fail_closed", scope)) => {
                    handler.fail_closed = FailClosed::from_scope(scope).ok_or_else(|| {
                        format!(
                            "`fail_closed` is not a scope; expected one of: {}",
                            FailClosed::SCOPES.join(", ")
                        )
                    })?
                }
                // Named, not quoted: the values of a query are not echoed.
                _ => {
                    let name = pair.split_once('=').map_or(pair, |(name, _)| name);
                    return Err(format!("unknown parameter `{name}`"));
                }
            }
        }
        Ok(handler)
    }
}

async fn claude_code(State(shared): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let handler = match HandlerQuery::parse(uri.query()) {
        Ok(handler) => handler,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!(
                    "400 Bad Request: {e}; the parameters are `timeout` (the handler's, in \
                     seconds) and `fail_closed` (`tools` or `all`)\n"
                ),
            )
                .into_response()
        }
    };
    let deadline = handler
        .timeout
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
        .min(DEFAULT_TIMEOUT * 6);
    // Read as a forwarder's frame is: the same bytes, the same event. What
    // not even the tolerant reader can read is judged as the fallback (a
    // block where the handler or the daemon fails closed), with what was
    // wrong in the log.
    let (input, input_error) = json::read_input(&body);
    let request = HookRequest {
        v: None,
        id: crate::event::new_id().to_string(),
        harness: Harness::ClaudeCode,
        deadline_ms: deadline.as_millis() as u64,
        fail_closed: handler.fail_closed,
        // An HTTP hook carries none of the hook process's environment.
        env: Default::default(),
        input,
        input_error: input_error.map(|e| format!("the request body is {e}")),
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
    fn the_query_holds_the_timeout_and_the_fail_closed_scope() {
        let parse = HandlerQuery::parse;
        assert_eq!(parse(None), Ok(HandlerQuery::default()));
        assert_eq!(
            parse(Some("timeout=30")),
            Ok(HandlerQuery {
                timeout: Some(30),
                fail_closed: FailClosed::Off
            })
        );
        assert_eq!(
            parse(Some("timeout=25&fail_closed=all")),
            Ok(HandlerQuery {
                timeout: Some(25),
                fail_closed: FailClosed::All
            })
        );
        assert!(parse(Some("timeout=1.5"))
            .unwrap_err()
            .contains("whole number"));
        assert!(parse(Some("fail_closed=yes"))
            .unwrap_err()
            .contains("`fail_closed` is not a scope; expected one of: tools, all"));
        assert!(parse(Some("token=x")).unwrap_err().contains("`token`"));
        assert!(!parse(Some("token=x")).unwrap_err().contains('x'));
    }
}
