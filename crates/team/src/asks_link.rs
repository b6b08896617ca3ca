//! An approver's link to the open team asks: one connection, as the
//! approver's role, that LISTENs on [`PUBLISHED`] and says when the open
//! asks are to be read again. The Team pane of `hookd approve --team`, its
//! line mode (`--plain --team`), `hookd team pending --follow` and the team
//! dashboard's follower all hold one.
//!
//! The asks are read again ([`AsksLink::changed`] returns, then
//! [`AsksLink::read`]):
//!
//! - at once on each announcement (several at once make one read);
//! - on the fallback poll (`poll`, [`open_asks_poll`]: every change is
//!   announced, so this only covers what a notice could miss);
//! - at once when the connection is found lost (its notifications end, or
//!   a read fails): what changed meanwhile was announced to nobody;
//! - while the database is away, with backoff ([`Backoff`]: 1 s doubling to
//!   60 s), reset by the first read that succeeds.
//!
//! Its user reads them again after each answer too ([`AsksLink::read`]).
//! Every call on the database is bounded by `limit`, connecting included,
//! so a slow database holds its user for that long at most. Failures are
//! returned as text; saying them once per streak is the user's (it knows
//! how it shows them).
//!
//! [`open_asks_poll`]: crate::approvals::open_asks_poll

use std::time::Duration;

use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

use crate::approvals::{self, Client, OpenAsk, PUBLISHED};
use crate::config::ConnectTarget;
use crate::connect::Backoff;

/// The approver's connection to the open asks; see the module's text.
pub struct AsksLink {
    target: ConnectTarget,
    /// The connection and its announcements, while there is one.
    link: Option<(Client, UnboundedReceiver<String>)>,
    /// The fallback poll.
    poll: Duration,
    /// The bound on one call on the database.
    limit: Duration,
    /// Waits between reads while the database is away.
    backoff: Backoff,
    /// When the asks are read next without an announcement.
    next_read: Instant,
}

impl AsksLink {
    /// Not connected yet; the first [`AsksLink::changed`] returns at once.
    /// `poll`: the fallback poll; `limit`: the bound on each call.
    pub fn new(target: ConnectTarget, poll: Duration, limit: Duration) -> AsksLink {
        AsksLink {
            target,
            link: None,
            poll,
            limit,
            backoff: Backoff::default(),
            next_read: Instant::now(),
        }
    }

    /// Where the database is (no password).
    pub fn describe(&self) -> String {
        self.target.describe()
    }

    /// Returns when the open asks are to be read again, and why: an
    /// announcement, the connection lost, the poll or the backoff due.
    /// Cancel-safe (a `select!` branch): nothing is lost when another
    /// branch wins.
    pub async fn changed(&mut self) -> Wake {
        let until = self.next_read;
        let wake = match self.link.as_mut() {
            Some((_, notes)) => tokio::select! {
                note = notes.recv() => {
                    // Several announcements at once: one read.
                    while notes.try_recv().is_ok() {}
                    if note.is_some() { Wake::Announced } else { Wake::Lost }
                }
                _ = tokio::time::sleep_until(until) => Wake::Due,
            },
            None => {
                tokio::time::sleep_until(until).await;
                Wake::Due
            }
        };
        if wake == Wake::Lost {
            // Read (and so connect) again at once.
            self.link = None;
        }
        wake
    }

    /// The open asks, oldest first, as the approver may see them (or why
    /// they could not be read); schedules the next read without an
    /// announcement: the poll, or the backoff after a failure.
    pub async fn read(&mut self) -> Result<Vec<OpenAsk>, String> {
        let limit = self.limit;
        let read = match self.client().await {
            Ok(client) => tokio::time::timeout(limit, approvals::open(client))
                .await
                .map_err(|_| timed_out(limit))
                .and_then(|r| r.map_err(|e| format!("reading the open team asks: {e}"))),
            Err(e) => Err(e),
        };
        let wait = match read {
            Ok(_) => {
                self.backoff.reset();
                self.poll
            }
            Err(_) => {
                self.link = None;
                self.backoff.next_wait()
            }
        };
        self.next_read = Instant::now() + wait;
        read
    }

    /// The live client (for an answer), connecting — and LISTENing — if
    /// there is none, whatever the backoff says: an answer is a person's.
    pub async fn client(&mut self) -> Result<&Client, String> {
        if self.link.as_ref().is_some_and(|(c, _)| c.is_closed()) {
            self.link = None;
        }
        if self.link.is_none() {
            let connected =
                tokio::time::timeout(self.limit, approvals::listen_on(&self.target, PUBLISHED))
                    .await
                    .map_err(|_| timed_out(self.limit))?
                    .map_err(|e| format!("connecting to {}: {e}", self.target.describe()))?;
            self.link = Some(connected);
        }
        Ok(&self.link.as_ref().expect("connected above").0)
    }

    /// The bound on one call on the database.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// Drops the connection after a failure its user saw (an answer that
    /// timed out): the next call connects again.
    pub fn failed(&mut self) {
        self.link = None;
        self.next_read = Instant::now();
    }
}

/// Why [`AsksLink::changed`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// The database announced a change on [`PUBLISHED`].
    Announced,
    /// The connection ended (its announcements stopped): the next read
    /// connects again.
    Lost,
    /// The fallback poll, or the backoff while the database is away.
    Due,
}

fn timed_out(limit: Duration) -> String {
    format!(
        "the team database did not answer within {} s",
        limit.as_secs()
    )
}
