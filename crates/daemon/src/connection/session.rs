//! A long-lived peer after `hello` (socket clients, `hookd run`, the
//! approver): the handshake, then one loop that reads requests (each handled
//! by its own function in [`super::requests`]), writes hook replies as they
//! are answered (at once, or when a hook that waits has its answer), and
//! pushes subscribed frames; on shutdown it lets the runs it started say
//! `run_done` first.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::Poll;

use bytes::BytesMut;
use futures_util::stream::FuturesUnordered;
use futures_util::{SinkExt, StreamExt};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{
    reject, release_idle_buffer, send, Conn, CAPABILITIES, HOOKS_IN_FLIGHT, SHUTDOWN_RUN_DRAIN,
};
use crate::hub::{ClientQueue, PushReceiver, CLIENT_QUEUE_FRAMES};
use crate::protocol::codec::{FrameError, HookResultFrame, RawFrame};
use crate::protocol::{ErrorCode, Hello, HookResult, Lagged, Reply, Request, Welcome, VERSION};
use crate::Shared;

/// What one session holds, which its requests read and change.
pub(super) struct Session<'a> {
    /// The peer's `hello`.
    pub(super) hello: Hello,
    pub(super) shared: &'a Arc<Shared>,
    pub(super) shutdown: &'a CancellationToken,
    /// This peer in the hub's subscriber table.
    pub(super) client_id: u64,
    /// Where frames pushed to this peer wait (subscriptions, its runs).
    pub(super) queue: ClientQueue,
    /// Runs this connection started: aborted when it goes away, like a
    /// terminal's processes when it closes.
    pub(super) runs: Vec<String>,
    /// Replies written into the connection's buffer and not yet sent: sent
    /// once no frame is left to read (see [`next_frame`]).
    pub(super) unflushed: bool,
}

/// A hook that was not answered at once (see `Session::hook`); its own
/// state is boxed once, when it was first polled.
pub(super) type WaitingHook = Pin<Box<dyn Future<Output = HookResult> + Send>>;

/// The hooks sent on a session that were not answered at once, at most
/// [`HOOKS_IN_FLIGHT`] (one may wait for a decision this very client is
/// about to send). One task per session, started with its first such hook,
/// polls them all ([`wait_for`]) and sends each reply to the session's
/// loop as it comes. Not a task each: a task's cell (512 bytes, in
/// cache-line multiples) was a quarter of what a pending hook allocated,
/// and 10 000 pending held 4.4 MiB less heap without (docs/performance.md).
/// Not the session's loop either: a hook decided while the loop waits to
/// write to a peer that reads slowly is still recorded at once.
pub(super) struct Waiting {
    /// To the session's waiter task, once started. Dropped with the
    /// session: the waiter then ends once its hooks are answered (their
    /// decisions are made and logged; their replies have nowhere to go).
    hooks: Option<mpsc::UnboundedSender<WaitingHook>>,
    /// The waiter's end of `replies`.
    replies_tx: mpsc::Sender<HookResult>,
    /// The hooks' replies. Of the hook results, not of `Reply`: the
    /// channel's blocks hold 32 values each, and a `Reply` is more than
    /// twice a result's size. At most [`HOOKS_IN_FLIGHT`] are in flight,
    /// so a queue of that many never makes the waiter wait.
    replies: mpsc::Receiver<HookResult>,
    /// Hooks whose reply has not reached the loop yet.
    in_flight: usize,
}

impl Waiting {
    fn new() -> Waiting {
        let (replies_tx, replies) = mpsc::channel(HOOKS_IN_FLIGHT);
        Waiting {
            hooks: None,
            replies_tx,
            replies,
            in_flight: 0,
        }
    }

    /// Hands `hook`, polled once already, to the session's waiter task.
    pub(super) fn push(&mut self, hook: WaitingHook) {
        self.in_flight += 1;
        let replies = &self.replies_tx;
        let hooks = self.hooks.get_or_insert_with(|| {
            let (hooks, received) = mpsc::unbounded_channel();
            tokio::spawn(wait_for(received, replies.clone()));
            hooks
        });
        // The waiter ends only once this sender is gone.
        let _ = hooks.send(hook);
    }
}

/// A session's waiter task: polls the hooks it is handed until each has its
/// answer, and sends the answers to the session; ends once the session is
/// gone and its last hook answered.
async fn wait_for(
    mut hooks: mpsc::UnboundedReceiver<WaitingHook>,
    replies: mpsc::Sender<HookResult>,
) {
    let mut waiting = FuturesUnordered::new();
    let mut more = true;
    loop {
        tokio::select! {
            hook = hooks.recv(), if more => match hook {
                Some(hook) => waiting.push(hook),
                None => more = false,
            },
            Some(result) = waiting.next(), if !waiting.is_empty() => {
                // Never full (see `Waiting::replies`); closed once the
                // session is gone.
                let _ = replies.send(result).await;
            }
            else => return,
        }
    }
}

/// Serves a peer that opened with `hello` until it goes away or the daemon
/// stops.
pub(super) async fn serve(
    hello: Hello,
    mut conn: Conn,
    shared: &Arc<Shared>,
    shutdown: &CancellationToken,
) {
    if !welcome(&hello, &mut conn).await {
        return;
    }
    let client_id = shared.hub.client_id();
    let (queue, mut pushes) = ClientQueue::channel(
        client_id,
        CLIENT_QUEUE_FRAMES,
        shared.config().clients.queue_bytes,
    );
    let dropped = queue.dropped.clone();
    let mut session = Session {
        hello,
        shared,
        shutdown,
        client_id,
        queue,
        runs: Vec::new(),
        unflushed: false,
    };
    // Whether the peer may send more frames. A peer that shut down its
    // writing side still reads: the hooks it sent are answered first (a
    // hook's own deadline bounds how long that takes).
    let mut open = true;
    let mut waiting = Waiting::new();
    loop {
        if !open && waiting.in_flight == 0 {
            break;
        }
        let reading = open && waiting.in_flight < HOOKS_IN_FLIGHT;
        tokio::select! {
            _ = shutdown.cancelled() => {
                // The runs started here are being aborted: let their last
                // frames (run_done above all) through first, for a while.
                let drain = drain_runs(&session.runs, shared, &mut pushes, &mut conn);
                let _ = tokio::time::timeout(SHUTDOWN_RUN_DRAIN, drain).await;
                send(&mut conn, &Reply::error(ErrorCode::ShuttingDown, "hookd is stopping", None)).await;
                break;
            }
            Some(result) = waiting.replies.recv() => {
                waiting.in_flight -= 1;
                // Sent with the next flush, as the hooks answered at once
                // are: those decided together go in one write.
                if let Err(e) = conn.feed(HookResultFrame(result)).await {
                    tracing::debug!(error = %e, "could not write to peer (gone?)");
                }
                session.unflushed = true;
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
            frame = next_frame(&mut conn, reading, &mut session.unflushed) => {
                if frame.is_none() {
                    open = false;
                    continue;
                }
                let Some((request, frame_bytes)) = read_request(frame, &session.hello, &mut conn).await else {
                    break;
                };
                session.dispatch(request, frame_bytes, &mut waiting, &mut conn).await;
            }
        }
    }
    if session.unflushed {
        // Answers written into the buffer are sent once nothing is left to
        // read: the end of the peer's frames came first.
        let flush = SinkExt::<RawFrame>::flush(&mut conn);
        if let Ok(Err(e)) = tokio::time::timeout(SHUTDOWN_RUN_DRAIN, flush).await {
            tracing::debug!(error = %e, "could not write to peer (gone?)");
        }
    }
    shared.hub.unsubscribe(client_id);
    for run_id in session.runs {
        // Ended runs are gone from the table already; that is fine.
        let _ = shared.runs.abort(&run_id, "its client, which disconnected");
    }
    tracing::info!(name = %session.hello.name, "peer disconnected");
}

/// The peer's next frame, when `reading` (the session has room for more
/// hooks); until one comes, the replies written into the connection's
/// buffer (`unflushed`) are sent. Hooks answered at once (see
/// `Session::hook`) are written there as they are answered: a burst of
/// pipelined hooks is answered in one write, once the burst is read.
fn next_frame<'c>(
    conn: &'c mut Conn,
    reading: bool,
    unflushed: &'c mut bool,
) -> impl std::future::Future<Output = Option<Result<BytesMut, FrameError>>> + 'c {
    std::future::poll_fn(move |cx| {
        if reading {
            if let Poll::Ready(frame) = conn.poll_next_unpin(cx) {
                return Poll::Ready(frame);
            }
        }
        if *unflushed {
            if let Poll::Ready(flushed) = SinkExt::<RawFrame>::poll_flush_unpin(conn, cx) {
                *unflushed = false;
                if let Err(e) = flushed {
                    tracing::debug!(error = %e, "could not write to peer (gone?)");
                }
            }
        }
        Poll::Pending
    })
}

/// The handshake's answer to `hello`: `welcome`, or an error frame for a
/// protocol version or a name hookd refuses. Whether the session goes on.
async fn welcome(hello: &Hello, conn: &mut Conn) -> bool {
    if hello.v != VERSION {
        let message = format!(
            "this hookd speaks protocol v{VERSION}; `{}` asked for v{}",
            hello.name, hello.v
        );
        send(
            conn,
            &Reply::error(ErrorCode::UnsupportedVersion, message, None),
        )
        .await;
        return false;
    }
    // Checked before anything shows or stores the name (see `check_name`).
    if let Err(message) = crate::protocol::handshake::check_name(&hello.name) {
        tracing::warn!(name = ?hello.name, "hello with a name hookd refuses; closing that connection");
        send(conn, &Reply::error(ErrorCode::InvalidFrame, message, None)).await;
        return false;
    }
    let welcome = Welcome {
        v: VERSION,
        server_version: env!("CARGO_PKG_VERSION").to_string(),
        capabilities: CAPABILITIES.iter().map(|c| c.to_string()).collect(),
    };
    send(conn, &Reply::Welcome(welcome)).await;
    tracing::info!(name = %hello.name, role = ?hello.role, "peer connected");
    #[cfg(feature = "fault-injection")]
    crate::fault::on_hello(&hello.name);
    true
}

/// Passes on the frames pushed to this peer while any of `runs` (the ones
/// it started) is live, then those already queued; ends when the peer is
/// gone. The caller bounds it in time.
async fn drain_runs(runs: &[String], shared: &Shared, pushes: &mut PushReceiver, conn: &mut Conn) {
    loop {
        let live = runs.iter().any(|id| shared.runs.is_live(id));
        let frame = if live {
            pushes.recv().await
        } else {
            pushes.try_recv()
        };
        match frame {
            Some(frame) => {
                if conn.send(RawFrame(frame)).await.is_err() {
                    return;
                }
            }
            None => return,
        }
    }
}

/// The request in the peer's next `frame`, and its length on the wire;
/// `None` when the peer is gone or sent a frame that ends the session (the
/// error is sent to it first). The read buffer is let go of once idle.
async fn read_request(
    frame: Option<Result<BytesMut, FrameError>>,
    hello: &Hello,
    conn: &mut Conn,
) -> Option<(Request, usize)> {
    let line = match frame {
        None => return None,
        Some(Err(e)) => {
            reject(conn, e).await;
            return None;
        }
        Some(Ok(line)) => line,
    };
    let request = Request::decode(&line);
    let frame_bytes = line.len();
    drop(line);
    release_idle_buffer(conn);
    match request {
        Ok(request) => Some((request, frame_bytes)),
        Err(e) => {
            tracing::warn!(name = %hello.name, code = %e.code, error = %e.message, "bad frame; closing that connection");
            send(conn, &Reply::error(e.code, e.message, None)).await;
            None
        }
    }
}
