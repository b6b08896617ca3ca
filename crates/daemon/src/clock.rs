//! The daemon's wall clock: what grants' TTLs (`expires_at`, kept across
//! restarts, so wall-clock times) are measured against.
//!
//! A daemon runs on the system's clock. A test that drives the daemon in
//! its own process on tokio's paused clock (`tests/daemon/inprocess.rs`) gives it
//! [`Clock::tokio`] instead: wall time that moves when the test advances
//! tokio's clock, so a TTL is tested by moving time, not by waiting for it.

use std::time::SystemTime;

/// See the module's documentation.
#[derive(Debug, Clone, Copy, Default)]
pub enum Clock {
    /// `SystemTime::now()`.
    #[default]
    System,
    /// `start` plus tokio's time elapsed since `anchor`.
    Tokio {
        /// The wall time at `anchor`.
        start: SystemTime,
        /// Tokio's time when the clock was made.
        anchor: tokio::time::Instant,
    },
}

impl Clock {
    /// A wall clock that tokio's (paused, advanced) clock moves.
    pub fn tokio() -> Clock {
        Clock::Tokio {
            start: SystemTime::now(),
            anchor: tokio::time::Instant::now(),
        }
    }

    /// The time now.
    pub fn now(&self) -> SystemTime {
        match self {
            Clock::System => SystemTime::now(),
            Clock::Tokio { start, anchor } => *start + anchor.elapsed(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn the_tokio_clock_moves_with_tokios_time() {
        let clock = Clock::tokio();
        let before = clock.now();
        tokio::time::advance(Duration::from_secs(3600)).await;
        assert_eq!(
            clock.now().duration_since(before).unwrap(),
            Duration::from_secs(3600)
        );
    }
}
