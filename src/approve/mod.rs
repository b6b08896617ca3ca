//! `hookd approve`: a person's seat in the loop. A socket client of the
//! daemon that shows every event, the decisions waiting for a person and
//! the agent-SDK runs, and answers them from the keyboard
//! (`--plain`: from lines on stdin).
//!
//! Layout of the module:
//! - [`wire`]: what it reads and sends, every issue-10 field optional;
//! - [`state`]: the pure state (feed, pending table, runs, filters,
//!   selection, mode) with `apply(frame)` and `on_key(key)` → requests;
//! - [`view`]: the pure screen, `draw(frame, &state)`;
//! - [`term`]: the IO loop (terminal, socket, signals, reconnects);
//! - [`plain`]: line mode; [`plain_team`]: its team asks (`--plain --team`);
//! - [`explain`]: `e`, and `hookd rules explain`;
//! - [`team`]: the Team pane of `--team` (team asks in the database).
//!
//! Nothing is polled: after `subscribe` (events and runs) every change
//! arrives as a pushed frame; the table and `status` are read once at
//! start and again after a `lagged`.

pub mod explain;
pub mod plain;
pub mod plain_team;
pub mod state;
pub mod team;
pub mod term;
pub mod view;
pub mod wire;

use std::path::Path;
use std::time::Duration;

use futures_util::SinkExt;
use tokio::net::UnixStream;
use tokio_util::codec::Framed;

use crate::protocol::codec::FrameCodec;
use crate::protocol::handshake::Handshake;

/// The name the approver says hello with; decisions it sends are logged
/// with source `client:hookd-approve`.
pub const CLIENT_NAME: &str = "hookd-approve";

/// Largest frame accepted from the daemon (pushed events carry tool inputs).
const MAX_FRAME: usize = 64 * 1024 * 1024;

/// A connection to the daemon.
pub type Conn = Framed<UnixStream, FrameCodec>;

/// Connects and says hello; the `welcome` arrives as the first frame.
pub async fn connect(socket: &Path) -> std::io::Result<Conn> {
    let stream = UnixStream::connect(socket).await?;
    let mut conn = Framed::new(stream, FrameCodec::new(MAX_FRAME));
    conn.send(&Handshake::client(CLIENT_NAME).hello())
        .await
        .map_err(std::io::Error::other)?;
    Ok(conn)
}

/// The next frame, read as the protocol's [`crate::protocol::Reply`];
/// `None` when the connection is gone (closed, failed, or no connection at
/// all: then it never resolves). A frame that cannot be read is skipped.
pub async fn next_frame(conn: &mut Option<Conn>) -> Option<crate::protocol::Reply> {
    use futures_util::StreamExt;
    let Some(c) = conn.as_mut() else {
        return std::future::pending().await;
    };
    loop {
        match c.next().await {
            Some(Ok(line)) => match serde_json::from_slice(&line) {
                Ok(frame) => return Some(frame),
                // A frame of an unknown `type` reads as `Reply::Unknown`;
                // this is one the daemon should not have sent.
                Err(e) => tracing::debug!(error = %e, "skipping a frame that cannot be read"),
            },
            Some(Err(_)) | None => return None,
        }
    }
}

/// Reconnect delays: 250 ms, doubling, at most 5 s; back to the start
/// once connected.
#[derive(Debug)]
pub struct Backoff {
    next: Duration,
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(250);
    const MAX: Duration = Duration::from_secs(5);

    /// Starts at the first delay.
    pub fn new() -> Backoff {
        Backoff { next: Self::FIRST }
    }

    /// The delay before the next attempt (and doubles the one after).
    pub fn next_delay(&mut self) -> Duration {
        let delay = self.next;
        self.next = (self.next * 2).min(Self::MAX);
        delay
    }

    /// Connected: the next loss retries quickly again.
    pub fn reset(&mut self) {
        self.next = Self::FIRST;
    }
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_a_cap_and_resets() {
        let mut b = Backoff::new();
        let delays: Vec<u64> = (0..7).map(|_| b.next_delay().as_millis() as u64).collect();
        assert_eq!(delays, [250, 500, 1000, 2000, 4000, 5000, 5000]);
        b.reset();
        assert_eq!(b.next_delay(), Duration::from_millis(250));
    }
}
