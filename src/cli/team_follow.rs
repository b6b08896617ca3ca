//! `hookd team pending --follow`: the open team asks, then each change as
//! the database announces it, until interrupted (docs/team.md#team-approvals).
//! It holds the approver's link the Team pane holds
//! (`hookd_team::asks_link::AsksLink`: LISTEN `hookd_ask_published`, the
//! fallback poll, backoff while the database is away) and prints what each
//! read changed: an ask opened (whole, as `hookd team pending` prints it),
//! a new allow, an ask no longer open, a failure to read (once per streak)
//! and the recovery. `--json`: one JSON object per line and change.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::Path;
use std::time::Duration;

use hookd_team::approvals::OpenAsk;
use hookd_team::asks_link::AsksLink;
use serde::Serialize;

use super::output::Stdout;
use super::team::target;
use super::team_approvals::describe;
use super::Outcome;

/// The bound on one call on the database (connecting included).
const LIMIT: Duration = Duration::from_secs(10);

/// One change to the open asks, as printed.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Change {
    /// An ask is open that was not (or the first read's asks).
    Opened {
        /// The ask, as `hookd team pending --json` gives it.
        ask: Box<OpenAsk>,
    },
    /// More approvers allowed it (the two-person rule).
    Allowed {
        /// Its id.
        id: String,
        /// Its short id.
        short_id: String,
        /// Who allowed so far.
        allowed_by: Vec<String>,
        /// Approvers it needs.
        approvals_required: i32,
    },
    /// Decided, closed on its machine or past its deadline.
    NoLongerOpen {
        /// Its id.
        id: String,
        /// Its short id.
        short_id: String,
    },
    /// The asks could not be read (said once per streak).
    Failing {
        /// Why (the streak's first failure).
        error: String,
    },
    /// The database answers again after a failing streak.
    Answering,
    /// The first read found no ask open.
    NoneOpen,
}

/// What has been printed, so each ask is printed once, then its changes.
#[derive(Debug, Default)]
pub struct Follow {
    /// Open asks by id: short id and allows last said.
    asks: HashMap<String, (String, usize)>,
    /// In a failing streak.
    failing: bool,
    /// A read succeeded already.
    read_once: bool,
}

impl Follow {
    /// What `read` changed since the last read.
    pub fn changes(&mut self, read: Result<Vec<OpenAsk>, String>) -> Vec<Change> {
        let asks = match read {
            Ok(asks) => asks,
            Err(error) => {
                if std::mem::replace(&mut self.failing, true) {
                    return Vec::new();
                }
                return vec![Change::Failing { error }];
            }
        };
        let mut changes = Vec::new();
        if std::mem::take(&mut self.failing) {
            changes.push(Change::Answering);
        }
        if !std::mem::replace(&mut self.read_once, true) && asks.is_empty() {
            changes.push(Change::NoneOpen);
        }
        let mut gone: Vec<(String, String)> = self
            .asks
            .iter()
            .filter(|(id, _)| !asks.iter().any(|a| &a.id == *id))
            .map(|(id, (short, _))| (id.clone(), short.clone()))
            .collect();
        gone.sort_by(|a, b| a.1.cmp(&b.1));
        for (id, short_id) in gone {
            self.asks.remove(&id);
            changes.push(Change::NoLongerOpen { id, short_id });
        }
        for ask in asks {
            let allows = ask.allowed_by.len();
            match self.asks.get_mut(&ask.id) {
                None => {
                    self.asks
                        .insert(ask.id.clone(), (ask.short_id.clone(), allows));
                    changes.push(Change::Opened { ask: Box::new(ask) });
                }
                Some((_, said)) if *said != allows => {
                    *said = allows;
                    changes.push(Change::Allowed {
                        id: ask.id,
                        short_id: ask.short_id,
                        allowed_by: ask.allowed_by,
                        approvals_required: ask.approvals_required,
                    });
                }
                Some(_) => {}
            }
        }
        changes
    }
}

/// A change as a text line (or an opened ask's block).
pub fn text(change: &Change) -> String {
    match change {
        Change::Opened { ask } => describe(ask),
        Change::Allowed {
            short_id,
            allowed_by,
            approvals_required,
            ..
        } => format!(
            "{short_id}: allowed by {} of {approvals_required} ({})\n",
            allowed_by.len(),
            allowed_by.join(", ")
        ),
        Change::NoLongerOpen { short_id, .. } => format!("{short_id}: no longer open\n"),
        Change::Failing { error } => {
            format!("team: {error} (trying again; said once until it answers)\n")
        }
        Change::Answering => "team: the team database answers again\n".to_string(),
        Change::NoneOpen => "no team asks open\n".to_string(),
    }
}

/// `hookd team pending --follow [--json]`: until SIGINT or SIGTERM (exit 0).
pub async fn follow(config: Option<&Path>, json: bool) -> anyhow::Result<Outcome> {
    let target = target(config)?;
    let mut link = AsksLink::new(target, hookd_team::approvals::open_asks_poll(), LIMIT);
    use tokio::signal::unix::{signal, SignalKind};
    let (mut term, mut int) = (
        signal(SignalKind::terminate())?,
        signal(SignalKind::interrupt())?,
    );
    let mut follow = Follow::default();
    if !json {
        writeln!(
            Stdout,
            "following the open team asks on {} (Ctrl-C ends it)",
            link.describe()
        )?;
    }
    loop {
        tokio::select! {
            _ = link.changed() => {}
            _ = int.recv() => return Ok(Outcome::Success),
            _ = term.recv() => return Ok(Outcome::Success),
        }
        let read = link.read().await;
        for change in follow.changes(read) {
            if json {
                let mut line = serde_json::to_vec(&change)?;
                line.push(b'\n');
                Stdout.write_all(&line)?;
            } else {
                write!(Stdout, "{}", text(&change))?;
            }
        }
        Stdout.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(id: &str, short: &str, allowed_by: &[&str]) -> OpenAsk {
        crate::approve::team::test_ask(id, short, "laptop", allowed_by)
    }

    #[test]
    fn each_ask_is_said_once_then_its_allows_and_its_end_and_failures_once_a_streak() {
        let mut f = Follow::default();
        let none = f.changes(Ok(vec![]));
        assert!(matches!(none.as_slice(), [Change::NoneOpen]), "{none:?}");
        let first = f.changes(Ok(vec![ask("019a-1", "kmnpq", &[])]));
        assert_eq!(first.len(), 1);
        assert_eq!(
            text(&first[0]),
            "kmnpq  claude-code on laptop  rule push  27s left  allows 0/2\n    \
             reason: pushing needs the team\n    Bash: git push origin main\n    id: 019a-1\n"
        );
        assert!(f.changes(Ok(vec![ask("019a-1", "kmnpq", &[])])).is_empty());
        let allowed = f.changes(Ok(vec![ask("019a-1", "kmnpq", &["alice"])]));
        assert_eq!(text(&allowed[0]), "kmnpq: allowed by 1 of 2 (alice)\n");
        let failing = f.changes(Err("connecting to db: refused".into()));
        assert_eq!(
            text(&failing[0]),
            "team: connecting to db: refused (trying again; said once until it answers)\n"
        );
        assert_eq!(failing.len(), 1);
        assert!(f.changes(Err("another".into())).is_empty(), "once a streak");
        let back = f.changes(Ok(vec![ask("019a-2", "wxyzt", &[])]));
        assert!(matches!(back[0], Change::Answering), "{back:?}");
        assert_eq!(text(&back[1]), "kmnpq: no longer open\n");
        assert!(matches!(&back[2], Change::Opened { ask } if ask.short_id == "wxyzt"));
        assert_eq!(
            serde_json::to_string(&back[1]).unwrap(),
            r#"{"change":"no_longer_open","id":"019a-1","short_id":"kmnpq"}"#
        );
    }
}
