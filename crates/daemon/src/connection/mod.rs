//! One connection: check the peer, read the first frame, and either answer a
//! forwarder's `hook` or hold a long-lived `hello` session (socket clients).
//!
//! A bad frame (invalid JSON, unknown type, oversize) gets an `error` frame
//! and closes this connection only; nothing here can stop the daemon. A
//! request that is well-formed but cannot be carried out (unknown event,
//! already decided) gets an `error` frame and the connection stays open.
//!
//! What one connection can make the daemon hold is bounded: one frame being
//! read (the frame cap), at most [`HOOKS_IN_FLIGHT`] hooks being answered
//! (the connection is not read while that many wait for their answer) and
//! their replies, and the pushed frames waiting for a slow client (by
//! frames and by bytes, see [`super::hub::ClientQueue`]).
//!
//! Here: the peer check and the first frame. `forwarder.rs` answers a
//! forwarder's one hook; `session.rs` holds a `hello` session's loop;
//! `requests.rs` has one function per request a session sends.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::Either;
use futures_util::{FutureExt, SinkExt, StreamExt};
use tokio::net::unix::UCred;
use tokio::net::UnixStream;
use tokio_util::codec::{Framed, FramedParts};
use tokio_util::sync::CancellationToken;

use super::limits::{SHED_AFTER, SHED_STALLED_AFTER};
use super::Shared;
use crate::protocol::codec::{FrameCodec, FrameError};
use crate::protocol::{DecodeError, ErrorCode, Reply, Request};

/// A peer that connects and says nothing is dropped after this long (much
/// sooner when the daemon runs short of connections, see
/// [`super::limits`]).
const FIRST_FRAME_TIMEOUT: Duration = Duration::from_secs(60);

/// Hooks one long-lived connection may have unanswered at once; while it
/// has that many, the daemon reads nothing more from it.
pub const HOOKS_IN_FLIGHT: usize = 64;

/// After shutdown starts, how long an accepted connection may take to send
/// its first frame and still be answered.
const SHUTDOWN_FIRST_FRAME_GRACE: Duration = Duration::from_millis(500);

/// On shutdown, how long a connection waits for the runs it started to end
/// (they are being aborted) so that their `run_done` reaches it; within the
/// accept loop's grace.
const SHUTDOWN_RUN_DRAIN: Duration = Duration::from_millis(2500);

/// What a version-1 daemon offers in `welcome`.
pub const CAPABILITIES: &[&str] = &[
    "hook",
    "subscribe",
    "pending",
    "decide",
    "status",
    "run",
    "abort",
    "grants",
    "steer",
    "session_facts",
];

/// A connection's framed socket.
type Conn = Framed<UnixStream, FrameCodec>;

mod forwarder;
mod requests;
mod session;

/// Serves one accepted connection to completion.
///
/// Two steps, each its own future: reading the first frame, then serving
/// what it asked. The second is what a waiting forwarder holds for minutes,
/// so it keeps nothing of the first (its timers, the frame, the decoded
/// request: an `async fn` keeps the slot of every local that lives across
/// an await). Chained with `then`, not awaited in turn in an `async fn`,
/// which would keep the first step's result beside the second's state.
pub fn handle<'a>(
    stream: UnixStream,
    shared: &'a Arc<Shared>,
    shutdown: &'a CancellationToken,
) -> impl Future<Output = ()> + Send + 'a {
    first_frame(stream, shared, shutdown).then(move |first| match first {
        Some((conn, request, frame_bytes)) => {
            Either::Left(serve_first(conn, request, frame_bytes, shared, shutdown))
        }
        None => Either::Right(std::future::ready(())),
    })
}

/// A connection's first frame, decoded, and its length.
type FirstFrame = (Conn, Result<Request, DecodeError>, usize);

/// Checks the peer and reads its first frame; `None` when the connection
/// is done with (a peer of another user, shed, silent too long, closed,
/// or a frame refused).
async fn first_frame(
    stream: UnixStream,
    shared: &Arc<Shared>,
    shutdown: &CancellationToken,
) -> Option<FirstFrame> {
    // tokio's peer credentials: SO_PEERCRED on Linux, getpeereid and
    // LOCAL_PEERPID on macOS and the BSDs.
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == shared.uid => {}
        Ok(cred) => {
            refuse_peer(stream, cred, shared).await;
            return None;
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not read peer credentials; closing");
            return None;
        }
    }
    let mut conn = framed(stream, shared.max_frame);
    let line = match read_first(&mut conn, shared, shutdown).await? {
        Err(e) => {
            reject(&mut conn, e).await;
            return None;
        }
        Ok(line) => line,
    };
    let request = Request::decode(&line);
    let frame_bytes = line.len();
    // The frame shares the read buffer's allocation: kept, it would hold
    // that for as long as the connection lives.
    drop(line);
    Some((conn, request, frame_bytes))
}

/// Refuses a peer running as another user (`cred`) with an error frame.
async fn refuse_peer(stream: UnixStream, cred: UCred, shared: &Arc<Shared>) {
    shared.stats.refused_peers.fetch_add(1, Ordering::Relaxed);
    tracing::warn!(
        peer_uid = cred.uid(),
        peer_pid = cred.pid(),
        "refused a peer running as another user"
    );
    let mut conn = framed(stream, shared.max_frame);
    let message = format!(
        "this hookd serves uid {}; peers running as uid {} are refused",
        shared.uid,
        cred.uid()
    );
    send(
        &mut conn,
        &Reply::error(ErrorCode::PermissionDenied, message, None),
    )
    .await;
}

/// Waits for the first frame on `conn`, just accepted; `None` when there
/// is none to answer: the peer closed, sent nothing in time, gave its slot
/// up to shedding, or shutdown's grace ran out.
async fn read_first(
    conn: &mut Conn,
    shared: &Arc<Shared>,
    shutdown: &CancellationToken,
) -> Option<Result<bytes::BytesMut, FrameError>> {
    // tokio's clock (as the shedding's): tests move it.
    let accepted = tokio::time::Instant::now();
    // A connection accepted just before shutdown is still answered: its
    // first frame gets a short grace instead of being cut off.
    let stopping = async {
        shutdown.cancelled().await;
        tokio::time::sleep(SHUTDOWN_FIRST_FRAME_GRACE).await;
    };
    tokio::pin!(stopping);
    let too_late = tokio::time::sleep(FIRST_FRAME_TIMEOUT);
    tokio::pin!(too_late);
    loop {
        let shedding = shared.admission.shedding();
        tokio::select! {
            _ = &mut stopping => return None,
            _ = &mut too_late => {
                tracing::debug!("peer sent no frame in time; closing");
                return None;
            }
            first = conn.next() => return first,
            _ = shedding => {
                // The daemon runs short of connections: a peer that has
                // not sent a byte for a while, or not a whole frame for
                // much longer, gives its slot up.
                let age = accepted.elapsed();
                let silent = conn.read_buffer().is_empty() && age >= SHED_AFTER;
                if silent || age >= SHED_STALLED_AFTER {
                    shared.admission.count_shed();
                    tracing::debug!(silent, "closing a peer still without a first frame, to make room");
                    return None;
                }
            }
        }
    }
}

/// Serves what the first frame asked: a forwarder's hook, a session, or a
/// refusal.
fn serve_first<'a>(
    mut conn: Conn,
    request: Result<Request, DecodeError>,
    frame_bytes: usize,
    shared: &'a Arc<Shared>,
    shutdown: &'a CancellationToken,
) -> Either<impl Future<Output = ()> + Send + 'a, Pin<Box<dyn Future<Output = ()> + Send + 'a>>> {
    match request {
        Ok(Request::Hook(req)) => {
            // A forwarder sends nothing after its hook (`forwarder.rs`
            // watches the socket itself, for it going away): its read
            // buffer goes now, not when its hook has been answered (with
            // the first frame's state gone too, a waiting forwarder holds
            // 9.6 KiB, not 15.8: benches/throughput.rs, phase 3).
            *conn.read_buffer_mut() = bytes::BytesMut::new();
            Either::Left(forwarder::answer(req, frame_bytes, conn, shared, shutdown))
        }
        // Boxed: most connections are a forwarder's, one per waiting hook,
        // and a session's far larger state would set their size.
        Ok(Request::Hello(hello)) => {
            Either::Right(Box::pin(session::serve(hello, conn, shared, shutdown)))
        }
        other => Either::Right(Box::pin(refuse_first(other, conn))),
    }
}

/// Answers a first frame that is neither a hook nor a `hello` with an
/// error, which closes the connection.
async fn refuse_first(request: Result<Request, DecodeError>, mut conn: Conn) {
    let error = match request {
        Err(e) => {
            tracing::warn!(code = %e.code, error = %e.message, "bad first frame; closing that connection");
            Reply::error(e.code, e.message, None)
        }
        Ok(other) => {
            let message = format!(
                "`{}` needs a `hello` first",
                other.req().map_or("request", |_| "client request")
            );
            Reply::error(ErrorCode::UnexpectedFrame, message, None)
        }
    };
    send(&mut conn, &error).await;
}

/// `stream` framed, with a read buffer of [`READ_BUFFER_BYTES`] and a
/// write buffer that starts empty and grows to what is written: most
/// connections write one small reply, and a waiting connection should not
/// hold `Framed`'s default 8 KiB for it.
fn framed(stream: UnixStream, max_frame: usize) -> Conn {
    let mut parts = FramedParts::new::<&Reply>(stream, FrameCodec::new(max_frame));
    parts.read_buf = bytes::BytesMut::with_capacity(READ_BUFFER_BYTES);
    Framed::from_parts(parts)
}

/// The read buffer a connection starts with (`Framed`'s own initial size).
const READ_BUFFER_BYTES: usize = 8 * 1024;

/// Gives back the read buffer's memory once it is empty: after a burst of
/// pipelined hooks or a large input, a connection that waits for its hooks'
/// decisions, or just stays open, would otherwise hold the largest burst it
/// ever read (a split-off buffer keeps its whole allocation). A connection
/// that keeps pipelining empties its buffer at most once per read: one
/// allocation per read.
fn release_idle_buffer(conn: &mut Conn) {
    let buffer = conn.read_buffer_mut();
    if buffer.is_empty() {
        *buffer = bytes::BytesMut::with_capacity(READ_BUFFER_BYTES);
    }
}

async fn reject(conn: &mut Conn, error: FrameError) {
    match error {
        FrameError::TooLarge { max } => {
            tracing::warn!(max, "frame too large; closing that connection");
            let message = format!("frame exceeds the {max}-byte limit; connection closed");
            send(conn, &Reply::error(ErrorCode::FrameTooLarge, message, None)).await;
        }
        FrameError::Truncated(n) => tracing::debug!(bytes = n, "peer closed mid-frame"),
        FrameError::Io(e) => tracing::debug!(error = %e, "connection failed"),
    }
}

async fn send(conn: &mut Conn, reply: &Reply) {
    if let Err(e) = conn.send(reply).await {
        tracing::debug!(error = %e, "could not write to peer (gone?)");
    }
}
