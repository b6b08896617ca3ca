//! One accept with backoff, shared by the daemon's socket and the HTTP
//! face: a failed accept (EMFILE, ECONNABORTED…) is retried after a pause
//! that doubles from 1 ms up to 100 ms and starts over after a success, so
//! a listener out of descriptors neither spins a core nor stalls for long
//! once they come back. What a failure means (shedding, a warning, how
//! often) and what caps connections stay each listener's own.

use std::future::Future;
use std::io;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

/// The first pause after a failed accept.
const FIRST_PAUSE: Duration = Duration::from_millis(1);
/// The longest pause: a listener recovers within this once accepts succeed.
const LONGEST_PAUSE: Duration = Duration::from_millis(100);

/// What one [`AcceptBackoff::accept`] came to.
pub enum Accepted<T> {
    /// A connection (with its peer address, as the listener gives it).
    Connection(T),
    /// The accept failed and the pause is over: try again.
    Failed,
    /// `shutdown` was cancelled: stop accepting.
    Shutdown,
}

/// The pause before the next accept after consecutive failures; one per
/// accept loop.
#[derive(Debug)]
pub struct AcceptBackoff {
    pause: Duration,
}

impl Default for AcceptBackoff {
    fn default() -> Self {
        AcceptBackoff { pause: FIRST_PAUSE }
    }
}

impl AcceptBackoff {
    /// Awaits `accepting` (a listener's `accept()`) unless `shutdown` comes
    /// first (checked first, so a cancelled loop never takes one more
    /// connection). A failure is handed to `failed` (the caller's logging
    /// and shedding), then paused on; the pause is not cut short by
    /// `shutdown`, being at most `LONGEST_PAUSE`.
    pub async fn accept<T>(
        &mut self,
        accepting: impl Future<Output = io::Result<T>>,
        shutdown: &CancellationToken,
        failed: impl FnOnce(&io::Error),
    ) -> Accepted<T> {
        tokio::select! {
            biased;
            _ = shutdown.cancelled() => Accepted::Shutdown,
            accepted = accepting => match accepted {
                Ok(connection) => {
                    self.pause = FIRST_PAUSE;
                    Accepted::Connection(connection)
                }
                Err(e) => {
                    failed(&e);
                    tokio::time::sleep(self.pause).await;
                    self.pause = (self.pause * 2).min(LONGEST_PAUSE);
                    Accepted::Failed
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An accept that fails with `EMFILE`.
    async fn out_of_descriptors() -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::EMFILE))
    }

    #[tokio::test(start_paused = true)]
    async fn failures_double_the_pause_up_to_the_longest_and_a_success_resets_it() {
        let shutdown = CancellationToken::new();
        let mut backoff = AcceptBackoff::default();
        let mut pauses = Vec::new();
        for _ in 0..9 {
            let before = tokio::time::Instant::now();
            let mut seen = None;
            let accepted = backoff
                .accept(out_of_descriptors(), &shutdown, |e| seen = e.raw_os_error())
                .await;
            assert!(matches!(accepted, Accepted::Failed));
            assert_eq!(seen, Some(libc::EMFILE));
            pauses.push(before.elapsed().as_millis());
        }
        assert_eq!(pauses, [1, 2, 4, 8, 16, 32, 64, 100, 100]);
        let accepted = backoff.accept(async { Ok(7) }, &shutdown, |_| {}).await;
        assert!(matches!(accepted, Accepted::Connection(7)));
        assert_eq!(backoff.pause, FIRST_PAUSE);
    }

    #[tokio::test]
    async fn a_cancelled_shutdown_wins_over_a_ready_connection() {
        let shutdown = CancellationToken::new();
        shutdown.cancel();
        let accepted = AcceptBackoff::default()
            .accept(async { Ok(()) }, &shutdown, |_| {})
            .await;
        assert!(matches!(accepted, Accepted::Shutdown));
    }
}
