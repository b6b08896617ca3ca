//! Admission: how many connections the daemon serves at once, the open-file
//! limit behind that number, and shedding idle peers when it runs short.
//!
//! Every connection holds a file descriptor and a slot of the connection
//! cap. Peers that connect and never send anything (a crashed client, a
//! leaked socket, a scan) would otherwise hold both for the 60 s first-frame
//! timeout and starve forwarders, which then wait in the kernel's backlog
//! until Claude Code's timeout lets the tool run. So:
//! - at start the soft `RLIMIT_NOFILE` is raised to the hard limit (the
//!   default soft limit, 1024, is far below what a busy machine needs);
//! - the cap is [`MAX_CONNECTIONS`], or less when the fd limit is lower, so
//!   `accept` runs out of slots before it runs out of descriptors;
//! - when fewer than an eighth of the slots are free, when they are all
//!   taken, or when `accept` fails for want of descriptors, peers that have
//!   sent no byte for [`SHED_AFTER`], or not a whole first frame for
//!   [`SHED_STALLED_AFTER`], are disconnected ([`Admission::shed_idle`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nix::sys::resource::{getrlimit, setrlimit, Resource};
use tokio::sync::futures::Notified;
use tokio::sync::{Notify, Semaphore};
// tokio's clock: the system's monotonic one, but in tests on tokio's
// paused clock, which move it to test shedding.
use tokio::time::Instant;

/// At most this many connections are served at once; more wait in the
/// kernel's backlog (a forwarder then waits, it is not refused).
pub const MAX_CONNECTIONS: usize = 4096;

/// Descriptors kept out of the connection cap: the listener, the log, the
/// lock file, the runtime's own, the adapters' pipes.
const FD_RESERVE: u64 = 128;

/// The fewest connections the cap allows, whatever the fd limit.
const MIN_CONNECTIONS: usize = 16;

/// Under pressure, a peer that has sent nothing for this long after
/// connecting is disconnected. Forwarders send their frame as soon as they
/// have read their stdin, and clients their `hello` at once.
pub const SHED_AFTER: Duration = Duration::from_secs(1);

/// Under pressure, a peer whose first frame is still incomplete this long
/// after connecting is disconnected too: a frame trickling in a byte at a
/// time would hold a slot for the whole first-frame timeout. Even the
/// largest frame crosses a local socket in far less.
pub const SHED_STALLED_AFTER: Duration = Duration::from_secs(10);

/// Shedding is signalled at most this often.
const SHED_INTERVAL: Duration = Duration::from_millis(100);

/// The open-file limit before and after [`raise_fd_limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FdLimit {
    /// The soft limit the daemon was started with.
    pub before: u64,
    /// The soft limit now.
    pub now: u64,
    /// The hard limit.
    pub hard: u64,
}

/// Raises the soft `RLIMIT_NOFILE` to the hard limit. The adapters the
/// daemon spawns inherit it (Node.js raises its own limit the same way).
pub fn raise_fd_limit() -> nix::Result<FdLimit> {
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    if soft < hard {
        setrlimit(Resource::RLIMIT_NOFILE, hard, hard)?;
    }
    let (now, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    Ok(FdLimit {
        before: soft,
        now,
        hard,
    })
}

/// The connection cap for a soft fd limit of `fd_limit`.
pub fn connection_cap(fd_limit: u64) -> usize {
    let usable = fd_limit.saturating_sub(FD_RESERVE);
    usize::try_from(usable)
        .unwrap_or(usize::MAX)
        .clamp(MIN_CONNECTIONS, MAX_CONNECTIONS)
}

/// The connection slots and the idle-peer shedding signal.
#[derive(Debug)]
pub struct Admission {
    cap: usize,
    slots: Arc<Semaphore>,
    idle: Notify,
    started: Instant,
    /// When shedding was last signalled, in ms since `started`, plus one
    /// (0: never).
    last_shed_ms: AtomicU64,
    shed: AtomicU64,
}

impl Admission {
    /// Admission with `cap` connection slots.
    pub fn new(cap: usize) -> Admission {
        Admission {
            cap,
            slots: Arc::new(Semaphore::new(cap)),
            idle: Notify::new(),
            started: Instant::now(),
            last_shed_ms: AtomicU64::new(0),
            shed: AtomicU64::new(0),
        }
    }

    /// The connection cap.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// The slots (one per connection).
    pub fn slots(&self) -> &Arc<Semaphore> {
        &self.slots
    }

    /// Connections served now.
    pub fn open(&self) -> usize {
        self.cap - self.slots.available_permits()
    }

    /// Whether fewer than an eighth of the slots are free.
    pub fn pressed(&self) -> bool {
        self.slots.available_permits() < self.cap / 8
    }

    /// Asks every peer still without a first frame to go if it has been
    /// silent for [`SHED_AFTER`] or stalled for [`SHED_STALLED_AFTER`] (at
    /// most every 100 ms, `SHED_INTERVAL`).
    pub fn shed_idle(&self) {
        let now = self.started.elapsed().as_millis() as u64 + 1;
        let last = self.last_shed_ms.load(Ordering::Relaxed);
        if last != 0 && now.saturating_sub(last) < SHED_INTERVAL.as_millis() as u64 {
            return;
        }
        if self
            .last_shed_ms
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            self.idle.notify_waiters();
        }
    }

    /// Resolves when idle peers are asked to go. Create it before checking
    /// whether to wait: it sees every [`Admission::shed_idle`] from then on.
    pub fn shedding(&self) -> Notified<'_> {
        self.idle.notified()
    }

    /// Records that an idle peer was disconnected.
    pub fn count_shed(&self) {
        self.shed.fetch_add(1, Ordering::Relaxed);
    }

    /// Idle peers disconnected since start.
    pub fn shed_count(&self) -> u64 {
        self.shed.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_descriptors_for_the_rest() {
        assert_eq!(connection_cap(1024), 1024 - 128);
        assert_eq!(connection_cap(20_000), MAX_CONNECTIONS);
        assert_eq!(connection_cap(u64::MAX), MAX_CONNECTIONS);
        assert_eq!(connection_cap(64), MIN_CONNECTIONS);
    }

    /// On tokio's paused clock, which `Admission` reads: the interval's
    /// boundary is checked to the millisecond, and nothing sleeps.
    /// `timeout(ZERO, …)` polls once: `Ok` when a peer has been told.
    #[tokio::test(start_paused = true)]
    async fn shedding_wakes_waiting_peers_at_most_every_interval() {
        use tokio::time::{advance, timeout};
        let admission = Admission::new(8);
        let first = admission.shedding();
        admission.shed_idle();
        assert!(
            timeout(Duration::ZERO, first).await.is_ok(),
            "a waiting peer is told"
        );
        advance(SHED_INTERVAL - Duration::from_millis(1)).await;
        let second = admission.shedding();
        admission.shed_idle();
        assert!(
            timeout(Duration::ZERO, second).await.is_err(),
            "rate-limited within the interval"
        );
        advance(Duration::from_millis(1)).await;
        let third = admission.shedding();
        admission.shed_idle();
        assert!(
            timeout(Duration::ZERO, third).await.is_ok(),
            "told again once the interval has passed"
        );
    }

    #[test]
    fn pressure_is_an_eighth_of_the_slots_left() {
        let admission = Admission::new(16);
        let mut held = Vec::new();
        while !admission.pressed() {
            held.push(admission.slots().clone().try_acquire_owned().unwrap());
        }
        assert_eq!(admission.open(), 15);
    }
}
