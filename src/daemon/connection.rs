//! One connection: check the peer, read the first frame, and either answer a
//! forwarder's `hook` or hold a long-lived `hello` session.
//!
//! A bad frame (invalid JSON, unknown type, oversize) gets an `error` frame
//! and closes this connection only; nothing here can stop the daemon.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use nix::sys::socket::{getsockopt, sockopt::PeerCredentials};
use tokio::net::UnixStream;
use tokio_util::codec::Framed;
use tokio_util::sync::CancellationToken;

use super::{hook, Shared};
use crate::protocol::codec::{FrameCodec, FrameError};
use crate::protocol::{ErrorCode, Hello, Reply, Request, Welcome, VERSION};

/// A peer that connects and says nothing is dropped after this long.
const FIRST_FRAME_TIMEOUT: Duration = Duration::from_secs(60);

type Conn = Framed<UnixStream, FrameCodec>;

/// Serves one accepted connection to completion.
pub async fn handle(stream: UnixStream, shared: &Shared, shutdown: &CancellationToken) {
    match getsockopt(&stream, PeerCredentials) {
        Ok(cred) if cred.uid() == shared.uid => {}
        Ok(cred) => {
            tracing::warn!(
                peer_uid = cred.uid(),
                peer_pid = cred.pid(),
                "refused a peer running as another user"
            );
            let mut conn = Framed::new(stream, FrameCodec::new(shared.max_frame));
            let message = format!(
                "this hookd serves uid {}; peers running as uid {} are refused",
                shared.uid,
                cred.uid()
            );
            send(
                &mut conn,
                Reply::error(ErrorCode::PermissionDenied, message, None),
            )
            .await;
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not read peer credentials; closing");
            return;
        }
    }
    let mut conn = Framed::new(stream, FrameCodec::new(shared.max_frame));
    let first = tokio::select! {
        _ = shutdown.cancelled() => return,
        first = tokio::time::timeout(FIRST_FRAME_TIMEOUT, conn.next()) => first,
    };
    let line = match first {
        Err(_) => {
            tracing::debug!("peer sent no frame in time; closing");
            return;
        }
        Ok(None) => return,
        Ok(Some(Err(e))) => return reject(&mut conn, e).await,
        Ok(Some(Ok(line))) => line,
    };
    match Request::decode(&line) {
        Err(e) => {
            tracing::warn!(code = %e.code, error = %e.message, "bad first frame; closing that connection");
            send(&mut conn, Reply::error(e.code, e.message, None)).await;
        }
        Ok(Request::Hook(req)) => {
            let result = hook::answer(req, shared, shutdown).await;
            send(&mut conn, Reply::HookResult(result)).await;
        }
        Ok(Request::Hello(hello)) => session(hello, conn, shared, shutdown).await,
    }
}

/// A long-lived peer after `hello`.
async fn session(hello: Hello, mut conn: Conn, shared: &Shared, shutdown: &CancellationToken) {
    if hello.v != VERSION {
        let message = format!(
            "this hookd speaks protocol v{VERSION}; `{}` asked for v{}",
            hello.name, hello.v
        );
        send(
            &mut conn,
            Reply::error(ErrorCode::UnsupportedVersion, message, None),
        )
        .await;
        return;
    }
    let welcome = Welcome {
        v: VERSION,
        server_version: env!("CARGO_PKG_VERSION").to_string(),
        capabilities: vec!["hook".to_string()],
    };
    send(&mut conn, Reply::Welcome(welcome)).await;
    tracing::info!(name = %hello.name, role = ?hello.role, "peer connected");
    loop {
        let frame = tokio::select! {
            _ = shutdown.cancelled() => {
                let reply = Reply::error(ErrorCode::ShuttingDown, "hookd is stopping", None);
                send(&mut conn, reply).await;
                return;
            }
            frame = conn.next() => frame,
        };
        let line = match frame {
            None => break,
            Some(Err(e)) => return reject(&mut conn, e).await,
            Some(Ok(line)) => line,
        };
        match Request::decode(&line) {
            Ok(Request::Hook(req)) => {
                let result = hook::answer(req, shared, shutdown).await;
                send(&mut conn, Reply::HookResult(result)).await;
            }
            Ok(Request::Hello(_)) => {
                let reply = Reply::error(
                    ErrorCode::UnexpectedFrame,
                    "`hello` was already sent on this connection",
                    None,
                );
                send(&mut conn, reply).await;
            }
            Err(e) => {
                tracing::warn!(name = %hello.name, code = %e.code, error = %e.message, "bad frame; closing that connection");
                send(&mut conn, Reply::error(e.code, e.message, None)).await;
                return;
            }
        }
    }
    tracing::info!(name = %hello.name, "peer disconnected");
}

async fn reject(conn: &mut Conn, error: FrameError) {
    match error {
        FrameError::TooLarge { max } => {
            tracing::warn!(max, "frame too large; closing that connection");
            let message = format!("frame exceeds the {max}-byte limit; connection closed");
            send(conn, Reply::error(ErrorCode::FrameTooLarge, message, None)).await;
        }
        FrameError::Truncated(n) => tracing::debug!(bytes = n, "peer closed mid-frame"),
        FrameError::Io(e) => tracing::debug!(error = %e, "connection failed"),
    }
}

async fn send(conn: &mut Conn, reply: Reply) {
    if let Err(e) = conn.send(&reply).await {
        tracing::debug!(error = %e, "could not write to peer (gone?)");
    }
}
