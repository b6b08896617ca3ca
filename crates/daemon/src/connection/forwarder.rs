//! A forwarder's connection: its one `hook`, answered while watching for
//! the forwarder to go away.

use std::future::Future;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use futures_util::SinkExt;

use super::Conn;
use crate::protocol::codec::HookResultFrame;
use crate::protocol::HookRequest;
use crate::{hook, Shared};

/// Answers the hook `req` (its frame `frame_bytes` long) and closes.
///
/// A forwarder sends nothing after its hook: the connection becoming
/// readable means it closed (Claude Code killed the hook), which a waiting
/// event must hear about.
///
/// Not an `async fn`: one keeps a slot for each argument for its whole
/// life, and this future is what every waiting forwarder holds; here the
/// request goes into the answering future at once.
pub(super) fn answer<'a>(
    req: HookRequest,
    frame_bytes: usize,
    mut conn: Conn,
    shared: &'a Arc<Shared>,
    shutdown: &'a CancellationToken,
) -> impl Future<Output = ()> + Send + 'a {
    let peer_gone = CancellationToken::new();
    // Boxed here, not pinned inside the block: pinning moves a captured
    // future into a second slot of the block's own, twice its size.
    let mut answering = Box::pin(hook::answer_from_forwarder(
        req,
        frame_bytes,
        peer_gone.clone(),
        shared,
        shutdown,
    ));
    async move {
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
                        // More bytes after the hook: not the forwarder this
                        // daemon knows; it gets its answer, unwatched.
                        Ok(_) => watching = false,
                    }
                }
            }
        };
        if let Err(e) = conn.send(HookResultFrame(result)).await {
            tracing::debug!(error = %e, "could not write to peer (gone?)");
        }
    }
}
