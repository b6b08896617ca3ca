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
//! (the connection is not read while that many wait for their answer),
//! their replies (a queue of as many), and the pushed frames waiting for a
//! slow client (by frames and by bytes, see [`super::hub::ClientQueue`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use tokio::net::UnixStream;
use tokio::sync::mpsc;
use tokio_util::codec::{Framed, FramedParts};
use tokio_util::sync::CancellationToken;

use super::hub::{ClientQueue, CLIENT_QUEUE_FRAMES};
use super::limits::{SHED_AFTER, SHED_STALLED_AFTER};
use super::{hook, Shared};
use crate::protocol::codec::{FrameCodec, FrameError, RawFrame};
use crate::protocol::{ErrorCode, Hello, Lagged, Reply, Request, Welcome, VERSION};

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
];

type Conn = Framed<UnixStream, FrameCodec>;

/// Serves one accepted connection to completion.
pub async fn handle(stream: UnixStream, shared: &Arc<Shared>, shutdown: &CancellationToken) {
    // tokio's peer credentials: SO_PEERCRED on Linux, getpeereid and
    // LOCAL_PEERPID on macOS and the BSDs.
    match stream.peer_cred() {
        Ok(cred) if cred.uid() == shared.uid => {}
        Ok(cred) => {
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
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "could not read peer credentials; closing");
            return;
        }
    }
    let accepted = Instant::now();
    let mut conn = framed(stream, shared.max_frame);
    // A connection accepted just before shutdown is still answered: its
    // first frame gets a short grace instead of being cut off.
    let stopping = async {
        shutdown.cancelled().await;
        tokio::time::sleep(SHUTDOWN_FIRST_FRAME_GRACE).await;
    };
    tokio::pin!(stopping);
    let too_late = tokio::time::sleep(FIRST_FRAME_TIMEOUT);
    tokio::pin!(too_late);
    let first = loop {
        let shedding = shared.admission.shedding();
        tokio::select! {
            _ = &mut stopping => return,
            _ = &mut too_late => {
                tracing::debug!("peer sent no frame in time; closing");
                return;
            }
            first = conn.next() => break first,
            _ = shedding => {
                // The daemon runs short of connections: a peer that has
                // not sent a byte for a while, or not a whole frame for
                // much longer, gives its slot up.
                let age = accepted.elapsed();
                let silent = conn.read_buffer().is_empty() && age >= SHED_AFTER;
                if silent || age >= SHED_STALLED_AFTER {
                    shared.admission.count_shed();
                    tracing::debug!(silent, "closing a peer still without a first frame, to make room");
                    return;
                }
            }
        }
    };
    let line = match first {
        None => return,
        Some(Err(e)) => return reject(&mut conn, e).await,
        Some(Ok(line)) => line,
    };
    match Request::decode(&line) {
        Err(e) => {
            tracing::warn!(code = %e.code, error = %e.message, "bad first frame; closing that connection");
            send(&mut conn, &Reply::error(e.code, e.message, None)).await;
        }
        Ok(Request::Hook(req)) => {
            // A forwarder sends nothing after its hook: the connection
            // becoming readable means it closed (Claude Code killed the
            // hook), which a waiting event must hear about.
            let peer_gone = CancellationToken::new();
            let answering =
                hook::answer_from_forwarder(req, line.len(), &peer_gone, shared, shutdown);
            tokio::pin!(answering);
            let mut watching = true;
            let result = loop {
                tokio::select! {
                    result = &mut answering => break result,
                    _ = conn.get_ref().readable(), if watching => {
                        let mut byte = [0u8; 1];
                        match conn.get_ref().try_read(&mut byte) {
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                            Ok(0) | Err(_) => {
                                peer_gone.cancel();
                                watching = false;
                            }
                            // More bytes after the hook: not the forwarder
                            // this daemon knows; it gets its answer, unwatched.
                            Ok(_) => watching = false,
                        }
                    }
                }
            };
            send(&mut conn, &Reply::HookResult(result)).await;
        }
        Ok(Request::Hello(hello)) => session(hello, conn, shared, shutdown).await,
        Ok(other) => {
            let message = format!(
                "`{}` needs a `hello` first",
                other.req().map_or("request", |_| "client request")
            );
            send(
                &mut conn,
                &Reply::error(ErrorCode::UnexpectedFrame, message, None),
            )
            .await;
        }
    }
}

/// A long-lived peer after `hello`.
async fn session(hello: Hello, mut conn: Conn, shared: &Arc<Shared>, shutdown: &CancellationToken) {
    if hello.v != VERSION {
        let message = format!(
            "this hookd speaks protocol v{VERSION}; `{}` asked for v{}",
            hello.name, hello.v
        );
        send(
            &mut conn,
            &Reply::error(ErrorCode::UnsupportedVersion, message, None),
        )
        .await;
        return;
    }
    let welcome = Welcome {
        v: VERSION,
        server_version: env!("CARGO_PKG_VERSION").to_string(),
        capabilities: CAPABILITIES.iter().map(|c| c.to_string()).collect(),
    };
    send(&mut conn, &Reply::Welcome(welcome)).await;
    tracing::info!(name = %hello.name, role = ?hello.role, "peer connected");
    #[cfg(feature = "fault-injection")]
    super::fault::on_hello(&hello.name);

    let client_id = shared.hub.client_id();
    let (queue, mut pushes) = ClientQueue::channel(
        client_id,
        CLIENT_QUEUE_FRAMES,
        shared.config.clients.queue_bytes,
    );
    let dropped = queue.dropped.clone();
    // Runs this connection started: aborted when it goes away, like a
    // terminal's processes when it closes.
    let mut runs: Vec<String> = Vec::new();
    // Hooks sent on this connection are answered by their own tasks: one may
    // wait for a decision that this very client is about to send. At most
    // HOOKS_IN_FLIGHT of them: each sends exactly one reply, so a queue of
    // that many never makes one wait.
    let (reply_tx, mut replies) = mpsc::channel::<Reply>(HOOKS_IN_FLIGHT);
    let mut in_flight = 0usize;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => {
                // The runs started here are being aborted: let their last
                // frames (run_done above all) through first, for a while.
                let drain = async {
                    loop {
                        let live = runs.iter().any(|id| shared.runs.is_live(id));
                        let frame = if live { pushes.recv().await } else { pushes.try_recv() };
                        match frame {
                            Some(frame) => {
                                if conn.send(RawFrame(frame)).await.is_err() {
                                    return;
                                }
                            }
                            None => return,
                        }
                    }
                };
                let _ = tokio::time::timeout(SHUTDOWN_RUN_DRAIN, drain).await;
                send(&mut conn, &Reply::error(ErrorCode::ShuttingDown, "hookd is stopping", None)).await;
                break;
            }
            Some(reply) = replies.recv() => {
                in_flight -= 1;
                send(&mut conn, &reply).await;
            }
            Some(frame) = pushes.recv() => {
                let lost = dropped.swap(0, Ordering::Relaxed);
                if lost > 0 {
                    send(&mut conn, &Reply::Lagged(Lagged { dropped: lost })).await;
                }
                if let Err(e) = conn.send(RawFrame(frame)).await {
                    tracing::debug!(error = %e, "could not push to client (gone?)");
                    break;
                }
            }
            frame = conn.next(), if in_flight < HOOKS_IN_FLIGHT => {
                let line = match frame {
                    None => break,
                    Some(Err(e)) => {
                        reject(&mut conn, e).await;
                        break;
                    }
                    Some(Ok(line)) => line,
                };
                let request = Request::decode(&line);
                let frame_bytes = line.len();
                drop(line);
                release_idle_buffer(&mut conn);
                let request = match request {
                    Ok(request) => request,
                    Err(e) => {
                        tracing::warn!(name = %hello.name, code = %e.code, error = %e.message, "bad frame; closing that connection");
                        send(&mut conn, &Reply::error(e.code, e.message, None)).await;
                        break;
                    }
                };
                let reply = match request {
                    Request::Hook(req) => {
                        let (shared, shutdown, reply_tx) = (shared.clone(), shutdown.clone(), reply_tx.clone());
                        in_flight += 1;
                        tokio::spawn(async move {
                            let result = hook::answer(req, frame_bytes, &shared, &shutdown).await;
                            let _ = reply_tx.send(Reply::HookResult(result)).await;
                        });
                        continue;
                    }
                    Request::Hello(_) => Reply::error(ErrorCode::UnexpectedFrame, "`hello` was already sent on this connection", None),
                    Request::Subscribe(sub) => {
                        shared.hub.subscribe(sub.filter, sub.redact, queue.clone());
                        Reply::ok(&sub.req, None)
                    }
                    Request::Unsubscribe(r) => {
                        shared.hub.unsubscribe(client_id);
                        Reply::ok(&r.req, None)
                    }
                    Request::Pending(r) => Reply::ok(&r.req, Some(serde_json::to_value(shared.hub.pending_list()).expect("items serialize"))),
                    Request::Status(r) => Reply::ok(&r.req, Some(serde_json::to_value(shared.status()).expect("status serializes"))),
                    Request::Grants(r) => Reply::ok(&r.req, Some(serde_json::to_value(shared.grants.list(std::time::SystemTime::now())).expect("grants serialize"))),
                    Request::GrantRevoke(g) => match shared.grants.revoke(&g.id) {
                        Some(grant) => {
                            super::grants::announce(shared, crate::protocol::GrantChange::Revoked, vec![grant]);
                            Reply::ok(&g.req, None)
                        }
                        None => Reply::request_error(&g.req, ErrorCode::NotFound, format!("no active grant {}", g.id)),
                    },
                    Request::Steer(s) => match shared.runs.steer(&s.run_id, &s.text) {
                        Ok(()) => Reply::ok(&s.req, None),
                        Err(e) => Reply::request_error(&s.req, e.code, e.message),
                    },
                    Request::Run(r) => {
                        let req = r.req.clone();
                        match shared.runs.start(shared, r, queue.clone(), &hello.name, shutdown) {
                            Ok(started) => {
                                runs.push(started.run_id.clone());
                                let result = serde_json::json!({ "run_id": started.run_id });
                                send(&mut conn, &Reply::ok(&req, Some(result))).await;
                                started.go();
                                continue;
                            }
                            Err(e) => Reply::request_error(&req, e.code, e.message),
                        }
                    }
                    Request::Abort(a) => match shared.runs.abort(&a.run_id, &format!("client:{}", hello.name)) {
                        Ok(()) => Reply::ok(&a.req, None),
                        Err(e) => Reply::request_error(&a.req, e.code, e.message),
                    },
                    Request::Decide(d) => super::grants::decide(shared, d, &hello.name).await,
                };
                send(&mut conn, &reply).await;
            }
        }
    }
    shared.hub.unsubscribe(client_id);
    for run_id in runs {
        // Ended runs are gone from the table already; that is fine.
        let _ = shared.runs.abort(&run_id, "its client, which disconnected");
    }
    tracing::info!(name = %hello.name, "peer disconnected");
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
