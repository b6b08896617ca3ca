//! One connection to the team database, and reconnecting with backoff.

use std::time::Duration;

use tokio_postgres::Client;

use crate::config::ConnectTarget;

/// Opens one connection and drives it on its own task; the client fails
/// (`is_closed`) once the connection is gone.
pub async fn connect(target: &ConnectTarget) -> crate::Result<Client> {
    // TLS as the target's sslmode says (crate::tls).
    let (client, connection) = crate::tls::connect(&target.config, &target.tls).await?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("team database connection ended: {e}");
        }
    });
    Ok(client)
}

/// Exponential backoff between reconnects: 1 s doubling to 60 s, reset by
/// a success.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff {
            next: Backoff::FIRST,
        }
    }
}

impl Backoff {
    /// The first wait.
    pub const FIRST: Duration = Duration::from_secs(1);
    /// The longest wait.
    pub const MAX: Duration = Duration::from_secs(60);

    /// The wait before the next attempt (and doubles the one after).
    pub fn next_wait(&mut self) -> Duration {
        let wait = self.next;
        self.next = (self.next * 2).min(Backoff::MAX);
        wait
    }

    /// A success: the next failure waits [`Backoff::FIRST`] again.
    pub fn reset(&mut self) {
        self.next = Backoff::FIRST;
    }
}

/// A connection kept open: [`Reconnecting::client`] returns the live client
/// or connects again (no more often than the backoff allows).
pub struct Reconnecting {
    target: ConnectTarget,
    client: Option<Client>,
    backoff: Backoff,
    not_before: Option<tokio::time::Instant>,
}

impl Reconnecting {
    /// Not connected yet.
    pub fn new(target: ConnectTarget) -> Reconnecting {
        Reconnecting {
            target,
            client: None,
            backoff: Backoff::default(),
            not_before: None,
        }
    }

    /// The target.
    pub fn target(&self) -> &ConnectTarget {
        &self.target
    }

    /// The live client, connecting if there is none; `Err` when the
    /// database is away (or the backoff says not yet).
    pub async fn client(&mut self) -> crate::Result<&Client> {
        if self.client.as_ref().is_some_and(Client::is_closed) {
            self.client = None;
        }
        if self.client.is_none() {
            if let Some(at) = self.not_before {
                tokio::time::sleep_until(at).await;
            }
            match connect(&self.target).await {
                Ok(client) => {
                    self.backoff.reset();
                    self.not_before = None;
                    self.client = Some(client);
                }
                Err(e) => {
                    self.not_before = Some(tokio::time::Instant::now() + self.backoff.next_wait());
                    return Err(e);
                }
            }
        }
        Ok(self.client.as_ref().expect("connected above"))
    }

    /// [`Reconnecting::client`], mutable (for a transaction).
    pub async fn client_mut(&mut self) -> crate::Result<&mut Client> {
        self.client().await?;
        Ok(self.client.as_mut().expect("connected above"))
    }

    /// Drops the client after a failure, so the next call reconnects.
    pub fn failed(&mut self) {
        self.client = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap_and_resets() {
        let mut b = Backoff::default();
        let waits: Vec<u64> = (0..8).map(|_| b.next_wait().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60]);
        b.reset();
        assert_eq!(b.next_wait(), Backoff::FIRST);
    }
}
