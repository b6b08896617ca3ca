//! `hookd approve --plain`: line mode for dumb terminals, ssh sessions and
//! scripts. Prints each pending item (id, tool, the whole input, the rule
//! that asked, the deadline) and each resolution; reads answers as lines on
//! stdin:
//!
//! ```text
//! y|n|s|a|N <id> [reason]
//! ```
//!
//! A bad line gets one `error: …` line naming what was wrong, and the loop
//! goes on. The same [`State`] as the full-screen approver keeps the table.
//! With `--team`, the team asks open in the database are printed and
//! answered beside the local items ([`super::plain_team`]).
//! Ends at the end of stdin, or on SIGTERM / SIGINT / SIGHUP.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::time::{Instant, SystemTime};

use anyhow::Context;
use futures_util::SinkExt;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::signal::unix::{signal, SignalKind};

use super::plain_team::{self, Printed};
use super::state::{News, PendingItem, State, DEFAULT_DENY_REASON};
use super::wire::{Remember, Request};
use super::{connect, next_frame, Backoff, Conn};
use crate::agent::claude::InputFields;

/// The answers line mode reads, for its usage and error lines.
pub const USAGE: &str = "answer with `y|n|s|a|N ID [reason]`: y allow once, n deny, \
s allow for the session, a always allow, N always deny";

/// How long, after the end of stdin, line mode waits for the replies to
/// the answers it sent.
const REPLY_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs line mode on stdin and `out` until stdin ends (and the answers
/// sent have their replies). `team`: the team database, connected to as
/// the approver (`--team`).
pub fn run(
    socket: &Path,
    out: &mut impl Write,
    team: Option<hookd_team::ConnectTarget>,
) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let ended = runtime.block_on(lines(socket, out, team));
    // tokio reads stdin with a blocking read on a thread of its own, which
    // nothing can cancel: dropping the runtime would wait for it, that is
    // for the next line typed, and a Ctrl-C would end nothing until Enter.
    // The read's result is not wanted any more; the process exits without it.
    runtime.shutdown_background();
    ended
}

async fn lines(
    socket: &Path,
    out: &mut impl Write,
    team: Option<hookd_team::ConnectTarget>,
) -> anyhow::Result<()> {
    let on = |kind| signal(kind).context("installing signal handlers");
    let (mut term, mut int, mut hup) = (
        on(SignalKind::terminate())?,
        on(SignalKind::interrupt())?,
        on(SignalKind::hangup())?,
    );
    let mut state = State::new(&socket.display().to_string(), Instant::now(), false);
    let mut stdin = BufReader::new(tokio::io::stdin()).lines();
    let mut conn: Option<Conn> = None;
    let mut backoff = Backoff::new();
    let mut retry_at = tokio::time::Instant::now();
    let mut printed: HashSet<String> = HashSet::new();
    let mut was_down = false;
    // After the end of stdin, the answers already sent still get their
    // replies printed (`echo "y kmnpq" | hookd approve --plain`), for a while.
    let mut stdin_done: Option<tokio::time::Instant> = None;
    // --team: the open team asks, read when the link says (the database
    // announced a change, the slow poll, backoff while it is away) and
    // after each answer.
    let mut team = team.map(|target| {
        state.team = Some(super::team::TeamPane::default());
        (super::team::link(target), Printed::default())
    });
    writeln!(out, "hookd approve: {USAGE}")?;
    out.flush()?;
    loop {
        // Lines are read once what they can name is known: the daemon's
        // table (or, with --team, the daemon is down) and the team's asks.
        let team_known = state
            .team
            .as_ref()
            .is_none_or(|t| t.read_at.is_some() || t.error.is_some());
        let ready = (state.table_read || (team.is_some() && was_down)) && team_known;
        if let Some(since) = stdin_done {
            if !state.awaiting_replies() || since.elapsed() >= REPLY_GRACE || conn.is_none() {
                return Ok(());
            }
        }
        let requests = tokio::select! {
            line = stdin.next_line(), if stdin_done.is_none() && ready => match line.context("reading stdin")? {
                None => {
                    stdin_done = Some(tokio::time::Instant::now());
                    Vec::new()
                }
                Some(line) => match parse_line(&line, &state) {
                    Ok(None) => Vec::new(),
                    Ok(Some(request)) => vec![request],
                    Err(e) => {
                        writeln!(out, "error: {e}")?;
                        Vec::new()
                    }
                },
            },
            frame = next_frame(&mut conn) => match frame {
                Some(frame) => {
                    state.now = Instant::now();
                    state.apply(frame)
                }
                None => {
                    conn = None;
                    writeln!(out, "hookd closed the connection; reconnecting")?;
                    state.disconnected("closed", 1);
                    was_down = true;
                    retry_at = tokio::time::Instant::now() + backoff.next_delay();
                    Vec::new()
                }
            },
            _ = tokio::time::sleep_until(retry_at), if conn.is_none() => {
                match connect(socket).await {
                    Ok(c) => {
                        if was_down {
                            writeln!(out, "connected to hookd at {}", socket.display())?;
                        }
                        conn = Some(c);
                        backoff.reset();
                        was_down = false;
                    }
                    Err(e) => {
                        if !was_down {
                            writeln!(out, "hookd is down at {} ({e}); retrying", socket.display())?;
                            was_down = true;
                        }
                        retry_at = tokio::time::Instant::now() + backoff.next_delay();
                    }
                }
                Vec::new()
            }
            _ = team_changed(&mut team) => {
                if let Some((link, _)) = team.as_mut() {
                    super::team::refresh(link, &mut state).await;
                }
                Vec::new()
            }
            _ = tokio::time::sleep(REPLY_GRACE), if stdin_done.is_some() => Vec::new(),
            _ = term.recv() => return Ok(()),
            _ = int.recv() => return Ok(()),
            _ = hup.recv() => return Ok(()),
        };
        for request in requests {
            if let Request::TeamAnswer {
                id,
                label,
                allow,
                reason,
            } = &request
            {
                let Some((link, team_printed)) = team.as_mut() else {
                    continue;
                };
                match super::team::answer(link, id, *allow, reason.as_deref()).await {
                    Ok(said) => writeln!(out, "ok: team ask {label}: {said}")?,
                    Err(e) => writeln!(out, "error: team ask {label}: {e}")?,
                }
                super::team::refresh(link, &mut state).await;
                write!(out, "{}", team_printed.news(&state))?;
                continue;
            }
            let (Some(c), Some(frame)) = (conn.as_mut(), state.frame(&request)) else {
                writeln!(out, "error: not connected to hookd; nothing was sent")?;
                continue;
            };
            if let Err(e) = c.send(&frame).await {
                writeln!(out, "error: sending to hookd: {e}")?;
            }
        }
        for news in state.take_news() {
            match news {
                News::Waiting(_) => {}
                News::Alarm(message) => writeln!(out, "alarm: {message}")?,
                News::Resolved {
                    id,
                    verdict,
                    by,
                    reason,
                } => {
                    let reason = reason.map(|r| format!(" ({r})")).unwrap_or_default();
                    writeln!(out, "decided {id}: {verdict} by {by}{reason}")?;
                }
                News::Reply { what, error: None } => writeln!(out, "ok: {what}")?,
                News::Reply {
                    what,
                    error: Some(e),
                } => writeln!(out, "error: {what}: {e}")?,
            }
        }
        // An item is printed once its deadline is known (a daemon that
        // does not push it gives it in the table read right after).
        for item in &state.pending {
            if item.deadline.is_some() && printed.insert(item.event_id.clone()) {
                write!(out, "{}", describe(item, state.now))?;
            }
        }
        printed.retain(|id| state.pending.iter().any(|p| &p.event_id == id));
        if let Some((_, team_printed)) = team.as_mut() {
            write!(out, "{}", team_printed.news(&state))?;
        }
        out.flush()?;
    }
}

/// When line mode's team asks are to be read again (pending without
/// `--team`).
async fn team_changed(team: &mut Option<(hookd_team::asks_link::AsksLink, Printed)>) {
    match team.as_mut() {
        Some((link, _)) => {
            link.changed().await;
        }
        None => std::future::pending().await,
    }
}

/// A pending item as line mode prints it.
pub fn describe(item: &PendingItem, now: Instant) -> String {
    let mut text = format!(
        "pending {}  {} {}  session {} ({})",
        item.display_id(),
        item.event,
        item.tool.as_deref().unwrap_or("-"),
        item.session
            .as_deref()
            .map_or("-".to_string(), |s| s.chars().take(8).collect()),
        item.project.as_deref().unwrap_or("?"),
    );
    if let Some(deadline) = item.deadline {
        let left = deadline.saturating_duration_since(now);
        let at = SystemTime::now() + left;
        text.push_str(&format!(
            "  deadline {}s ({})",
            left.as_secs(),
            crate::time::rfc3339(at)
        ));
    }
    text.push('\n');
    let input = InputFields::of(&item.input)
        .tool_input
        .unwrap_or(&serde_json::Value::Null);
    let whole = match input["command"].as_str() {
        Some(command) => format!("$ {command}"),
        None if input.is_null() => item.input.to_string(),
        None => input.to_string(),
    };
    for line in whole.lines() {
        text.push_str(&format!("  {line}\n"));
    }
    match &item.asked_by {
        Some(asked) if !asked.rule_ids.is_empty() => {
            text.push_str(&format!("  rule: {}", asked.rule_ids.join(", ")));
            if let Some(reason) = &asked.reason {
                text.push_str(&format!(" ({reason})"));
            }
            text.push('\n');
        }
        Some(_) => text.push_str("  rule: none decided\n"),
        None => {}
    }
    if let Some(session) = item.asked_by.as_ref().and_then(|a| a.session.as_deref()) {
        text.push_str(&format!("  session: {session}\n"));
    }
    if let Some(narration) = &item.narration {
        text.push_str(&format!("  narrator: {narration}\n"));
    }
    for (key, remember, verdict) in [
        ('s', Remember::Session, "allow"),
        ('a', Remember::Always, "allow"),
    ] {
        let Some(s) = item.suggestion(remember, verdict) else {
            continue;
        };
        if s.every_command {
            // Line mode has no question to ask first: not on one line.
            text.push_str(&format!(
                "  {key}: {} would allow EVERY shell command; not offered here (`hookd decide {} allow --remember {} --rule '{}'` grants it)\n",
                s.rule,
                item.display_id(),
                remember.as_str(),
                s.rule
            ));
            continue;
        }
        text.push_str(&format!("  {key}: {}\n", s.rule));
        // Said before the answer is typed: remembering this changes nothing.
        if let Some(note) = &s.note {
            text.push_str(&format!("  {key} would change nothing: {note}\n"));
        }
    }
    text
}

/// One line of input → the request it makes (`None` for a blank line).
pub fn parse_line(line: &str, state: &State) -> Result<Option<Request>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let (verb, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let (verdict, remember) = match verb {
        "y" => ("allow", Remember::Once),
        "n" => ("deny", Remember::Once),
        "s" => ("allow", Remember::Session),
        "a" => ("allow", Remember::Always),
        "N" => ("deny", Remember::Always),
        other => return Err(format!("`{other}` is not an answer; {USAGE}")),
    };
    let rest = rest.trim_start();
    let (id, reason) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    if id.is_empty() {
        return Err(format!(
            "`{verb}` needs the id of a pending item, e.g. `{verb} kmnpq`"
        ));
    }
    let reason = reason.trim();
    // An id no local item answers to may name a team ask (--team).
    if !state.pending.iter().any(|p| p.answers_to(id)) {
        if let Some(ask) = plain_team::find(id, state) {
            return ask.and_then(|ask| plain_team::request(verb, ask, reason).map(Some));
        }
    }
    let item = find(id, state).map_err(|e| {
        if state.pending.iter().any(|p| p.answers_to(id)) {
            e
        } else {
            plain_team::with_open_asks(e, state)
        }
    })?;
    if !reason.is_empty() && verdict == "allow" {
        return Err(format!(
            "only n and N take a reason; `{verb} {id}` was not sent"
        ));
    }
    if !item.accepts(verdict) {
        return Err(format!(
            "{} ({}) does not take {verdict}; it takes {}",
            item.display_id(),
            item.event,
            item.verdict_list()
        ));
    }
    let rule = match remember {
        Remember::Once => None,
        _ => {
            let s = item.suggestion(remember, verdict).ok_or_else(|| {
                format!(
                    "no rule to remember for {}; answer it with y or n",
                    item.display_id()
                )
            })?;
            if s.every_command && verdict == "allow" {
                return Err(format!(
                    "the only rule to remember for {} is `{}`, which allows EVERY shell command; it is not granted on one line: `hookd decide {} allow --remember {} --rule '{}'` does, or answer with y",
                    item.display_id(),
                    s.rule,
                    item.display_id(),
                    remember.as_str(),
                    s.rule
                ));
            }
            Some(s.rule.clone())
        }
    };
    let reason = (verdict == "deny").then(|| {
        if reason.is_empty() {
            DEFAULT_DENY_REASON.to_string()
        } else {
            reason.to_string()
        }
    });
    Ok(Some(Request::Decide {
        event_id: item.event_id.clone(),
        verdict: verdict.to_string(),
        reason,
        remember,
        rule,
    }))
}

fn find<'a>(id: &str, state: &'a State) -> Result<&'a PendingItem, String> {
    let matching: Vec<&PendingItem> = state.pending.iter().filter(|p| p.answers_to(id)).collect();
    match matching.as_slice() {
        [one] => Ok(one),
        [] if state.pending.is_empty() => Err(format!(
            "nothing pending is called `{id}` (nothing is pending)"
        )),
        [] => Err(format!(
            "nothing pending is called `{id}`; pending now: {}",
            state
                .pending
                .iter()
                .map(PendingItem::display_id)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        several => Err(format!(
            "`{id}` names {} pending items ({}); type more of it",
            several.len(),
            several
                .iter()
                .map(|p| p.display_id())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn state_with(items: &[(&str, Option<&str>)]) -> State {
        let mut state = State::new("/s", Instant::now(), false);
        for (id, short) in items {
            state.apply_json(&json!({"type": "event", "pending": true, "deadline_ms": 20000,
                "short_id": short, "verdicts": ["allow", "deny"],
                "suggestions": if short.is_some() {
                    json!([{"remember": "session", "verdict": "allow", "rule": "Bash(ls:*)"}])
                } else { json!([]) },
                "event": {"id": id, "kind": "PreToolUse", "tool": "Bash", "cwd": "/home/dev/project",
                          "session_id": "1fce3faa-62dc", "input": {"tool_input": {"command": "ls -la\necho two"}}}}));
        }
        state
    }

    #[test]
    fn answers_are_parsed_and_bad_lines_name_what_was_wrong() {
        let state = state_with(&[
            ("019ab0a4-1111-7000-8000-00000000abcd", Some("kmnpq")),
            ("019ab0a4-1111-7000-8000-0000000000ef", None),
        ]);
        assert_eq!(parse_line("   ", &state), Ok(None));
        let Ok(Some(Request::Decide {
            verdict, reason, ..
        })) = parse_line("y kmnpq", &state)
        else {
            panic!()
        };
        assert_eq!((verdict.as_str(), reason), ("allow", None));
        let Ok(Some(Request::Decide { reason, .. })) = parse_line("n 0000ef not today", &state)
        else {
            panic!()
        };
        assert_eq!(reason.as_deref(), Some("not today"));
        let Ok(Some(Request::Decide { reason, .. })) = parse_line("n kmnpq", &state) else {
            panic!()
        };
        assert_eq!(reason.as_deref(), Some(DEFAULT_DENY_REASON));
        let Ok(Some(Request::Decide { remember, rule, .. })) = parse_line("s kmnpq", &state) else {
            panic!()
        };
        assert_eq!(
            (remember, rule.as_deref()),
            (Remember::Session, Some("Bash(ls:*)"))
        );
        let errors = [
            ("x kmnpq", "`x` is not an answer"),
            ("y", "`y` needs the id"),
            (
                "y zzzzz",
                "nothing pending is called `zzzzz`; pending now: kmnpq, 0000ef",
            ),
            ("y 019ab0a4", "names 2 pending items"),
            ("y kmnpq because", "only n and N take a reason"),
            ("s 0000ef", "no rule to remember for 0000ef"),
        ];
        for (line, want) in errors {
            let e = parse_line(line, &state).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
    }

    #[test]
    fn an_item_is_described_whole() {
        let state = state_with(&[("019ab0a4-1111-7000-8000-00000000abcd", Some("kmnpq"))]);
        let text = describe(&state.pending[0], state.now);
        assert!(
            text.starts_with(
                "pending kmnpq  PreToolUse Bash  session 1fce3faa (project)  deadline 20s ("
            ),
            "{text}"
        );
        assert!(text.contains("\n  $ ls -la\n  echo two\n"), "{text}");
        assert!(text.contains("  s: Bash(ls:*)\n"), "{text}");
    }

    #[test]
    fn a_tainted_session_is_said() {
        let mut state = State::new("/s", Instant::now(), false);
        state.apply_json(
            &json!({"type": "event", "pending": true, "deadline_ms": 20000,
            "short_id": "kmnpq", "verdicts": ["allow", "deny"], "suggestions": [],
            "asked_by": {"rule_ids": ["tainted-push"], "reason": "confirm pushes",
                         "session": "tainted by WebFetch https://example.com at 14:02:11 UTC; 3 tool calls so far"},
            "event": {"id": "019ab0a4-1111-7000-8000-00000000abcd", "kind": "PreToolUse",
                      "tool": "Bash", "session_id": "1fce3faa-62dc",
                      "input": {"tool_input": {"command": "git push"}}}}),
        );
        let text = describe(&state.pending[0], state.now);
        assert!(
            text.contains("  rule: tainted-push (confirm pushes)\n  session: tainted by WebFetch https://example.com at 14:02:11 UTC; 3 tool calls so far\n"),
            "{text}"
        );
    }

    #[test]
    fn an_outvoted_allow_is_said_and_the_whole_shell_is_not_offered() {
        let mut state = State::new("/s", Instant::now(), false);
        state.apply_json(&json!({"type": "event", "pending": true, "deadline_ms": 20000,
            "short_id": "kmnpq", "verdicts": ["allow", "deny"],
            "suggestions": [
                {"remember": "session", "verdict": "allow", "rule": "Bash", "every_command": true},
                {"remember": "always", "verdict": "allow", "rule": "Bash(npm test:*)",
                 "note": "the rules still ask about this event: rule ask-npm (ask beats allow); narrow or remove it to stop being asked"},
            ],
            "event": {"id": "019ab0a4-1111-7000-8000-00000000abcd", "kind": "PreToolUse", "tool": "Bash",
                      "session_id": "1fce3faa-62dc", "input": {"tool_input": {"command": "npm test"}}}}));
        let text = describe(&state.pending[0], state.now);
        assert!(
            text.contains("  a: Bash(npm test:*)\n  a would change nothing: the rules still ask about this event: rule ask-npm (ask beats allow)"),
            "{text}"
        );
        assert!(
            text.contains("  s: Bash would allow EVERY shell command; not offered here (`hookd decide kmnpq allow --remember session --rule 'Bash'` grants it)\n"),
            "{text}"
        );
        let e = parse_line("s kmnpq", &state).unwrap_err();
        assert!(
            e.contains("allows EVERY shell command; it is not granted on one line"),
            "{e}"
        );
        assert!(matches!(
            parse_line("a kmnpq", &state),
            Ok(Some(Request::Decide { .. }))
        ));
    }
}
