//! The team asks in line mode, `hookd approve --plain --team`
//! (docs/team.md): the asks open in the team database, read as the
//! approver of `[team]` through the Team pane's link
//! (`hookd_team::asks_link::AsksLink`: at once when the database announces
//! a change), printed beside the local pending items and answered with the
//! same lines (`y ID`, `n ID [reason]`). Answers go through
//! [`super::team::answer`], the Team pane's path
//! (`hookd_team::approvals::answer`): the database decides who may answer
//! and what the answers add up to, and its refusal is printed as an
//! `error:` line.
//!
//! The asks are kept where the Team pane keeps them ([`State::team`],
//! filled by [`State::team_read`]); what is here is what line mode prints
//! of them and how a line names one.

use std::collections::HashMap;

use hookd_team::approvals::OpenAsk;

use super::state::State;
use super::team::{input_line, summary, DEFAULT_TEAM_DENY_REASON};
use super::wire::Request;

/// A team ask as line mode prints it: the Team pane's summary line, then
/// the tool's input (every line of a command), the reason and the
/// narrator's line, each indented.
pub fn describe(ask: &OpenAsk, seconds_left: f64) -> String {
    let mut text = format!("team ask {}\n", summary(ask, seconds_left));
    for line in input_line(ask).lines() {
        text.push_str(&format!("  {line}\n"));
    }
    if let Some(reason) = &ask.reason {
        text.push_str(&format!("  reason: {reason}\n"));
    }
    if let Some(narration) = &ask.narration {
        text.push_str(&format!("  narrator: {narration}\n"));
    }
    text.push_str(&format!(
        "  answer with `y {0}` or `n {0} [reason]` (the team database decides)\n",
        ask.short_id
    ));
    text
}

/// What line mode has printed of the team asks, so each is printed once
/// and then only what changes.
#[derive(Debug, Default)]
pub struct Printed {
    /// Printed asks by id: their short id and the allows last said.
    asks: HashMap<String, (String, usize)>,
    /// The streak's last read failure, until a read succeeds.
    error: Option<String>,
}

impl Printed {
    /// The lines `state`'s latest read calls for: a new ask whole, a new
    /// allow, an ask no longer open, a failure to read (once per streak)
    /// and the recovery.
    pub fn news(&mut self, state: &State) -> String {
        let Some(team) = &state.team else {
            return String::new();
        };
        let mut text = String::new();
        if let Some(e) = &team.error {
            // Once per streak, whatever each failed read said.
            if self.error.is_none() {
                text.push_str(&format!("team: {e}\n"));
            }
            self.error = Some(e.clone());
            return text;
        }
        if self.error.take().is_some() {
            text.push_str("team: the team database answers again\n");
        }
        for ask in &team.asks {
            let allows = ask.allowed_by.len();
            match self.asks.get_mut(&ask.id) {
                None => {
                    text.push_str(&describe(ask, team.seconds_left(ask, state.now)));
                    self.asks
                        .insert(ask.id.clone(), (ask.short_id.clone(), allows));
                }
                Some((_, said)) if *said != allows => {
                    text.push_str(&format!(
                        "team ask {}: allowed by {allows} of {} ({})\n",
                        ask.short_id,
                        ask.approvals_required,
                        ask.allowed_by.join(", ")
                    ));
                    *said = allows;
                }
                Some(_) => {}
            }
        }
        let mut gone: Vec<(String, String)> = self
            .asks
            .iter()
            .filter(|(id, _)| !team.asks.iter().any(|a| &a.id == *id))
            .map(|(id, (short, _))| (id.clone(), short.clone()))
            .collect();
        gone.sort_by(|a, b| a.1.cmp(&b.1));
        for (id, short) in gone {
            text.push_str(&format!("team ask {short}: no longer open\n"));
            self.asks.remove(&id);
        }
        text
    }
}

/// The team ask `typed` names — its short id, or its full id (8
/// characters of it or more) — when it names any: `Err` when it names
/// several (machines pick short ids alone).
pub fn find<'a>(typed: &str, state: &'a State) -> Option<Result<&'a OpenAsk, String>> {
    let team = state.team.as_ref()?;
    let typed = typed.to_ascii_lowercase();
    let matching: Vec<&OpenAsk> = team
        .asks
        .iter()
        .filter(|a| a.short_id == typed || (typed.len() >= 8 && a.id.starts_with(&typed)))
        .collect();
    match matching.as_slice() {
        [] => None,
        [one] => Some(Ok(one)),
        several => Some(Err(format!(
            "`{typed}` names {} team asks ({}); type its full id instead",
            several.len(),
            several
                .iter()
                .map(|a| format!("{} on {}", a.id, a.machine))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The answer `verb` (with `reason`) makes to `ask`: `y` allows, `n`
/// denies (with [`DEFAULT_TEAM_DENY_REASON`] when no reason is given);
/// the remembering answers are not the team's.
pub fn request(verb: &str, ask: &OpenAsk, reason: &str) -> Result<Request, String> {
    let allow = match verb {
        "y" => true,
        "n" => false,
        _ => {
            return Err(format!(
                "team ask {} takes y (allow) or n (deny, with a reason) only; `{verb}` remembers \
                 a rule on this machine, which a team ask has not",
                ask.short_id
            ))
        }
    };
    if allow && !reason.is_empty() {
        return Err(format!(
            "only n takes a reason; `y {}` was not sent",
            ask.short_id
        ));
    }
    Ok(Request::TeamAnswer {
        id: ask.id.clone(),
        label: ask.short_id.clone(),
        allow,
        reason: (!allow).then(|| {
            if reason.is_empty() {
                DEFAULT_TEAM_DENY_REASON.to_string()
            } else {
                reason.to_string()
            }
        }),
    })
}

/// `error` (nothing local is called so) with the team asks open added,
/// when there is a team.
pub fn with_open_asks(error: String, state: &State) -> String {
    let Some(team) = &state.team else {
        return error;
    };
    if team.asks.is_empty() {
        return format!("{error}; no team ask is open");
    }
    format!(
        "{error}; team asks open: {}",
        team.asks
            .iter()
            .map(|a| a.short_id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approve::team::TeamPane;
    use std::time::Instant;

    fn ask(id: &str, short: &str, machine: &str, allowed_by: &[&str]) -> OpenAsk {
        OpenAsk {
            input: serde_json::json!({"command": "git push origin main\necho done"}),
            ..crate::approve::team::test_ask(id, short, machine, allowed_by)
        }
    }

    fn team_state(asks: Vec<OpenAsk>) -> State {
        let mut state = State::new("/s", Instant::now(), false);
        state.team = Some(TeamPane::default());
        state.team_read(Ok(asks));
        state
    }

    #[test]
    fn a_team_ask_is_printed_once_then_its_changes() {
        let mut state = team_state(vec![ask("019a-1", "kmnpq", "laptop", &[])]);
        let mut printed = Printed::default();
        let text = printed.news(&state);
        assert_eq!(
            text,
            "team ask kmnpq  claude-code on laptop  rule push  27s left  allows 0/2\n  \
             Bash: git push origin main\n  echo done\n  reason: pushing needs the team\n  \
             answer with `y kmnpq` or `n kmnpq [reason]` (the team database decides)\n"
        );
        assert_eq!(printed.news(&state), "");
        state.team_read(Ok(vec![ask("019a-1", "kmnpq", "laptop", &["alice"])]));
        assert_eq!(
            printed.news(&state),
            "team ask kmnpq: allowed by 1 of 2 (alice)\n"
        );
        state.team_read(Err("reading the open team asks: db error".into()));
        assert_eq!(
            printed.news(&state),
            "team: reading the open team asks: db error\n"
        );
        assert_eq!(printed.news(&state), "", "once per streak");
        state.team_read(Err("connecting to the database: refused".into()));
        assert_eq!(printed.news(&state), "", "whatever each read says");
        state.team_read(Ok(vec![]));
        assert_eq!(
            printed.news(&state),
            "team: the team database answers again\nteam ask kmnpq: no longer open\n"
        );
    }

    #[test]
    fn team_answers_are_y_or_n_and_a_shared_short_id_needs_the_full_one() {
        let state = team_state(vec![
            ask("019a0000-aaaa", "kmnpq", "laptop", &[]),
            ask("019a0000-bbbb", "kmnpq", "desk", &[]),
            ask("019a0000-cccc", "wxyzt", "desk", &[]),
        ]);
        let e = find("kmnpq", &state).unwrap().unwrap_err();
        assert!(
            e.contains("names 2 team asks (019a0000-aaaa on laptop, 019a0000-bbbb on desk)"),
            "{e}"
        );
        let one = find("019a0000-bb", &state).unwrap().unwrap();
        assert_eq!(one.machine, "desk");
        assert!(find("zzzzz", &state).is_none());
        let ask = find("wxyzt", &state).unwrap().unwrap();
        assert_eq!(
            request("n", ask, ""),
            Ok(Request::TeamAnswer {
                id: "019a0000-cccc".into(),
                label: "wxyzt".into(),
                allow: false,
                reason: Some(DEFAULT_TEAM_DENY_REASON.into())
            })
        );
        assert_eq!(
            request("y", ask, ""),
            Ok(Request::TeamAnswer {
                id: "019a0000-cccc".into(),
                label: "wxyzt".into(),
                allow: true,
                reason: None
            })
        );
        assert!(request("s", ask, "")
            .unwrap_err()
            .contains("takes y (allow) or n"));
        assert!(request("y", ask, "sure")
            .unwrap_err()
            .contains("only n takes a reason"));
        assert_eq!(
            with_open_asks("nothing pending is called `q`".into(), &state),
            "nothing pending is called `q`; team asks open: kmnpq, kmnpq, wxyzt"
        );
    }
}
