//! The Team pane of `hookd approve --team`: the team asks open in the
//! database (docs/team.md#team-approvals), read as the approver of
//! `[team]` in `--config`, and answered through the same path as `hookd
//! team answer` (`hookd_team::approvals::answer`: the database decides
//! who may answer and what the answers add up to).
//!
//! The pane's state is pure ([`TeamPane`], keys in [`State::team_key`]);
//! the IO loops (`term`, and line mode's) hold an [`AsksLink`], which says
//! when to read the open asks again (the database announces a change,
//! `LISTEN hookd_ask_published`; a slow poll; backoff while the database is
//! away), read them after every answer too, and run the
//! [`Request::TeamAnswer`]s the keys make.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent};
use hookd_team::approvals::OpenAsk;
use hookd_team::asks_link::AsksLink;

use super::state::{edit, Edit, Mode, Pane, State};
use super::wire::Request;

/// The reason a deny from the Team pane starts with.
pub const DEFAULT_TEAM_DENY_REASON: &str = "Denied by a team approver in hookd approve";

/// What the Team pane shows.
#[derive(Debug, Default)]
pub struct TeamPane {
    /// The open asks, oldest first, as last read.
    pub asks: Vec<OpenAsk>,
    /// When they were read (for the countdowns).
    pub read_at: Option<Instant>,
    /// The selected ask (index into `asks`).
    pub selected: usize,
    /// The last failure to read them, until the next read succeeds.
    pub error: Option<String>,
}

impl TeamPane {
    /// The selected ask.
    pub fn selected_ask(&self) -> Option<&OpenAsk> {
        self.asks.get(self.selected)
    }

    /// Seconds left for `ask` at `now` (its deadline as last read).
    pub fn seconds_left(&self, ask: &OpenAsk, now: Instant) -> f64 {
        let since = self
            .read_at
            .map_or(0.0, |at| now.saturating_duration_since(at).as_secs_f64());
        (ask.seconds_left - since).max(0.0)
    }
}

/// One ask's line: `short  agent on machine  rule R  Ns left  allows a/n`.
pub fn summary(ask: &OpenAsk, seconds_left: f64) -> String {
    format!(
        "{}  {} on {}  rule {}  {}s left  allows {}/{}{}",
        ask.short_id,
        ask.agent,
        ask.machine,
        if ask.rule_ids.is_empty() {
            "-".to_string()
        } else {
            ask.rule_ids.join(",")
        },
        seconds_left.round(),
        ask.allowed_by.len(),
        ask.approvals_required,
        if ask.allowed_by.is_empty() {
            String::new()
        } else {
            format!(" ({})", ask.allowed_by.join(", "))
        },
    )
}

/// The ask's input as one line: a command as it is, else the JSON.
pub fn input_line(ask: &OpenAsk) -> String {
    let input = match &ask.input {
        serde_json::Value::Null => String::new(),
        v => v
            .get("command")
            .and_then(|c| c.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string()),
    };
    format!("{}: {input}", ask.tool.as_deref().unwrap_or("input"))
}

impl State {
    /// The open asks as read now, or why they could not be.
    pub fn team_read(&mut self, read: Result<Vec<OpenAsk>, String>) {
        let Some(team) = self.team.as_mut() else {
            return;
        };
        match read {
            Ok(asks) => {
                let selected = team.selected_ask().map(|a| a.id.clone());
                team.asks = asks;
                team.read_at = Some(self.now);
                team.error = None;
                team.selected = selected
                    .and_then(|id| team.asks.iter().position(|a| a.id == id))
                    .unwrap_or(team.selected)
                    .min(team.asks.len().saturating_sub(1));
            }
            Err(e) => team.error = Some(e),
        }
        self.dirty = true;
    }

    /// What an answer from the pane did (the footer says it).
    pub fn team_answered(&mut self, label: &str, outcome: Result<String, String>) {
        self.notice = Some(match outcome {
            Ok(said) => format!("team ask {label}: {said}"),
            Err(e) => format!("team ask {label}: {e}"),
        });
        self.dirty = true;
    }

    /// A key while the Team pane has the keyboard: `Some` when the pane
    /// took it (`y` allow, `n` deny with a reason, moving), else `None`
    /// for the keys every pane shares.
    pub fn team_key(&mut self, key: &KeyEvent) -> Option<Vec<Request>> {
        let team = self.team.as_mut()?;
        match key.code {
            KeyCode::Down | KeyCode::Char('j') => {
                team.selected = (team.selected + 1).min(team.asks.len().saturating_sub(1));
            }
            KeyCode::Up | KeyCode::Char('k') => team.selected = team.selected.saturating_sub(1),
            KeyCode::Char('y') => match team.selected_ask() {
                Some(ask) => {
                    return Some(vec![Request::TeamAnswer {
                        id: ask.id.clone(),
                        label: ask.short_id.clone(),
                        allow: true,
                        reason: None,
                    }])
                }
                None => self.notice = Some("no team ask is open".into()),
            },
            KeyCode::Char('n') => match team.selected_ask() {
                Some(ask) => {
                    self.mode = Mode::TeamReason {
                        id: ask.id.clone(),
                        label: ask.short_id.clone(),
                        text: DEFAULT_TEAM_DENY_REASON.to_string(),
                    }
                }
                None => self.notice = Some("no team ask is open".into()),
            },
            KeyCode::Char('s' | 'a' | 'N' | 'e') => {
                self.notice =
                    Some("a team ask takes y (allow) or n (deny with a reason) only".into())
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    /// A key while typing a team deny's reason.
    pub(super) fn team_reason_key(
        &mut self,
        id: String,
        label: String,
        text: String,
        key: KeyEvent,
    ) -> Vec<Request> {
        match edit(text, key) {
            Edit::Typing(text) => {
                self.mode = Mode::TeamReason { id, label, text };
                Vec::new()
            }
            Edit::Done(text) => vec![Request::TeamAnswer {
                id,
                label,
                allow: false,
                reason: Some(if text.trim().is_empty() {
                    DEFAULT_TEAM_DENY_REASON.to_string()
                } else {
                    text
                }),
            }],
            Edit::Cancelled => {
                self.notice = Some("cancelled".into());
                Vec::new()
            }
        }
    }

    /// The panes Tab walks through, in order.
    pub(super) fn panes(&self) -> Vec<Pane> {
        let mut panes = vec![Pane::Pending, Pane::Feed, Pane::Runs];
        if self.team.is_some() {
            panes.insert(1, Pane::Team);
        }
        panes
    }

    /// The pane `by` steps from the focused one (Tab: 1, ⇧Tab: -1).
    pub(super) fn step_pane(&self, by: i64) -> Pane {
        let panes = self.panes();
        let at = panes.iter().position(|p| *p == self.focus).unwrap_or(0) as i64;
        panes[(at + by).rem_euclid(panes.len() as i64) as usize]
    }
}

/// The approver's link to the team asks, as the Team pane and line mode
/// hold it: `poll` the fallback poll, each call bounded by [`TEAM_LIMIT`].
pub fn link(target: hookd_team::ConnectTarget) -> AsksLink {
    AsksLink::new(target, hookd_team::approvals::open_asks_poll(), TEAM_LIMIT)
}

/// The bound on one call on the team database (connecting included), so
/// a slow database holds the screen or the lines that long at most.
pub const TEAM_LIMIT: Duration = Duration::from_secs(5);

/// Reads the open asks through `link` into `state` (or why they could not
/// be).
pub async fn refresh(link: &mut AsksLink, state: &mut State) {
    let read = link.read().await;
    state.now = Instant::now();
    state.team_read(read);
}

/// Answers `id` as the approver through `link`, and says what that did as
/// `hookd team answer` does.
pub async fn answer(
    link: &mut AsksLink,
    id: &str,
    allow: bool,
    reason: Option<&str>,
) -> Result<String, String> {
    let limit = link.limit();
    let client = link.client().await?;
    let answered = tokio::time::timeout(
        limit,
        hookd_team::approvals::answer(client, id, allow, reason),
    )
    .await;
    match answered {
        Err(_) => {
            link.failed();
            Err(format!(
                "the team database did not answer within {} s",
                limit.as_secs()
            ))
        }
        Ok(Ok(a)) => Ok(match &a.verdict {
            Some(v) => format!("{v} (decided)"),
            None => format!(
                "allowed by {} of {} approvers needed; waiting for another",
                a.allows, a.approvals_required
            ),
        }),
        Ok(Err(e)) => Err(e.to_string()),
    }
}

/// A team ask for tests: `git push origin main` on `machine`, rule `push`,
/// two approvals required, `allowed_by` so far, 27.4 s left.
#[cfg(test)]
pub(crate) fn test_ask(id: &str, short: &str, machine: &str, allowed_by: &[&str]) -> OpenAsk {
    OpenAsk {
        id: id.into(),
        short_id: short.into(),
        machine: machine.into(),
        agent: "claude-code".into(),
        rule_ids: vec!["push".into()],
        reason: Some("pushing needs the team".into()),
        narration: None,
        tool: Some("Bash".into()),
        input: serde_json::json!({"command": "git push origin main"}),
        approvals_required: 2,
        allowed_by: allowed_by.iter().map(|s| s.to_string()).collect(),
        seconds_left: 27.4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::KeyModifiers;

    fn ask(id: &str, short: &str) -> OpenAsk {
        test_ask(id, short, "laptop", &["alice"])
    }

    fn key(c: KeyCode) -> KeyEvent {
        KeyEvent::new(c, KeyModifiers::NONE)
    }

    #[test]
    fn the_team_pane_allows_or_denies_with_a_reason_and_keeps_its_selection() {
        let mut state = State::new("/s", Instant::now(), false);
        state.team = Some(TeamPane::default());
        assert_eq!(
            state.panes(),
            [Pane::Pending, Pane::Team, Pane::Feed, Pane::Runs]
        );
        state.on_key(key(KeyCode::Tab));
        assert_eq!(state.focus, Pane::Team);
        state.on_key(key(KeyCode::Char('y')));
        assert_eq!(state.notice.as_deref(), Some("no team ask is open"));

        state.team_read(Ok(vec![ask("1", "aaaaa"), ask("2", "bbbbb")]));
        state.on_key(key(KeyCode::Char('j')));
        // A new read keeps the selection on the same ask.
        state.team_read(Ok(vec![
            ask("0", "zzzzz"),
            ask("1", "aaaaa"),
            ask("2", "bbbbb"),
        ]));
        assert_eq!(state.team.as_ref().unwrap().selected, 2);
        assert_eq!(
            state.on_key(key(KeyCode::Char('y'))),
            [Request::TeamAnswer {
                id: "2".into(),
                label: "bbbbb".into(),
                allow: true,
                reason: None
            }]
        );
        assert!(state.on_key(key(KeyCode::Char('n'))).is_empty());
        state.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        for c in "freeze".chars() {
            state.on_key(key(KeyCode::Char(c)));
        }
        assert_eq!(
            state.on_key(key(KeyCode::Enter)),
            [Request::TeamAnswer {
                id: "2".into(),
                label: "bbbbb".into(),
                allow: false,
                reason: Some("freeze".into())
            }]
        );
        assert_eq!(
            summary(&ask("1", "aaaaa"), 27.4),
            "aaaaa  claude-code on laptop  rule push  27s left  allows 1/2 (alice)"
        );
        assert_eq!(input_line(&ask("1", "aaaaa")), "Bash: git push origin main");
        // Without --team there is no Team pane.
        let state = State::new("/s", Instant::now(), false);
        assert!(!state.panes().contains(&Pane::Team));
    }
}
