//! `hookd statusline`: one line for Claude Code's `statusLine` setting.
//!
//! Claude Code runs the command after each message and shows its first
//! line under the prompt; it must be fast and must never hang. So this is
//! a bare exchange on the socket (no async runtime, no logging): `hello`
//! and `status` written at once, the two replies read with one deadline
//! for everything ([`BUDGET`]); a daemon that does not answer by then
//! shows as down.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::protocol::handshake::Handshake;
use crate::protocol::{Reply, ReqOnly, Request, SessionFactsReply, SessionFactsRequest, Status};

/// How long the whole exchange may take before the daemon counts as down.
pub const BUDGET: Duration = Duration::from_millis(50);

/// How much of the last decision's summary the line shows.
const SUMMARY_CHARS: usize = 24;

/// The daemon's status, or `None` when it did not answer within `budget`.
pub fn fetch(socket: &Path, budget: Duration) -> Option<Status> {
    fetch_with(socket, budget, None).map(|(status, _)| status)
}

/// The daemon's status and, for `session`, what its facts say (what
/// tainted it, its calls: [`SessionFacts::note`](crate::protocol::facts::SessionFacts::note)),
/// or `None` when the daemon did not answer within `budget`. A daemon
/// that does not know `session_facts` gives its status alone.
pub fn fetch_with(
    socket: &Path,
    budget: Duration,
    session: Option<&str>,
) -> Option<(Status, Option<String>)> {
    let deadline = Instant::now() + budget;
    let stream = UnixStream::connect(socket).ok()?;
    stream.set_write_timeout(Some(budget)).ok()?;
    // All frames in one write: the replies need no second round trip.
    let mut frames = Handshake::client("statusline").hello_line();
    serde_json::to_writer(&mut frames, &Request::Status(ReqOnly { req: "s".into() })).ok()?;
    frames.push(b'\n');
    if let Some(session) = session {
        let ask = Request::SessionFacts(SessionFactsRequest {
            req: "f".into(),
            session_id: session.to_string(),
        });
        serde_json::to_writer(&mut frames, &ask).ok()?;
        frames.push(b'\n');
    }
    (&stream).write_all(&frames).ok()?;
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    let mut status: Option<Status> = None;
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        if left.is_zero() {
            return None;
        }
        stream.set_read_timeout(Some(left)).ok()?;
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return status.map(|s| (s, None));
        }
        match serde_json::from_str::<Reply>(&line).ok()? {
            Reply::Ok(ok) if ok.req == "s" => {
                let s: Status = serde_json::from_value(ok.result?).ok()?;
                if session.is_none() {
                    return Some((s, None));
                }
                status = Some(s);
            }
            Reply::Ok(ok) if ok.req == "f" => {
                let facts = ok
                    .result
                    .and_then(|r| serde_json::from_value::<SessionFactsReply>(r).ok());
                return status.map(|s| (s, facts.and_then(|f| f.note)));
            }
            // The session's question is the one an older daemon refuses.
            Reply::Error(_) => return status.map(|s| (s, None)),
            _ => continue,
        }
    }
}

/// How much of the session's taint the line shows.
const TAINT_CHARS: usize = 64;

/// [`render`] with the session's note from [`fetch_with`]: its taint, when
/// something tainted it, after the daemon's state (`⚠ tainted by WebFetch
/// https://example.com/… at 14:02:11 UTC`).
pub fn render_with(status: Option<&Status>, note: Option<&str>) -> String {
    let mut line = render(status);
    let taint = note
        .filter(|_| status.is_some())
        .and_then(|n| n.split("; ").find(|part| part.starts_with("tainted by ")));
    if let Some(taint) = taint {
        let mut shown: String = taint.chars().take(TAINT_CHARS).collect();
        if taint.chars().count() > TAINT_CHARS {
            shown.pop();
            shown.push('…');
        }
        line.push_str(&format!(" · ⚠ {shown}"));
    }
    line
}

/// The line for `status` (`None`: the daemon is down).
pub fn render(status: Option<&Status>) -> String {
    let Some(status) = status else {
        return "hookd ✗ down".to_string();
    };
    let mut line = String::from("hookd ✓");
    let pending = status.counters.pending;
    if pending > 0 {
        line.push_str(&format!(" · {pending} pending"));
    }
    let grants = status.counters.grants;
    if grants > 0 {
        line.push_str(&format!(
            " · {grants} grant{}",
            if grants == 1 { "" } else { "s" }
        ));
    }
    if let Some(last) = &status.last_decision {
        let mut summary: String = last.summary.chars().take(SUMMARY_CHARS).collect();
        if last.summary.chars().count() > SUMMARY_CHARS {
            summary.pop();
            summary.push('…');
        }
        let by = if last.rule_ids.is_empty() {
            last.source.clone()
        } else {
            last.rule_ids.join(",")
        };
        line.push_str(&format!(" · {} {summary} ({by})", last.verdict));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Verdict;
    use crate::protocol::LastDecision;

    #[test]
    fn the_line_says_up_pending_grants_and_the_last_decision() {
        let status: Status = serde_json::from_value(serde_json::json!({
            "version": "0", "protocol": 1, "pid": 1, "uptime_s": 1.0, "socket": "/s",
            "log": "/l", "rules": {"generation": 1, "count": 1, "source": "defaults"},
            "counters": {"events": 0, "decisions": 0, "client_decisions": 0, "timeouts": 0,
                "fallbacks": 0, "pending": 2, "subscribers": 0, "lagged_dropped": 0,
                "refused_peers": 0, "log_written": 0, "log_dropped": 0, "log_errors": 0,
                "log_rotations": 0, "log_queued_bytes": 0, "subscriber_queued_bytes": 0,
                "panics": 0, "hooks_in_flight": 0, "connections": 0, "max_connections": 0,
                "shed_peers": 0},
            "projects": {"known": 0, "checks": 0, "loads": 0},
            "adapter_dir": "/a", "runs": [],
        }))
        .unwrap();
        assert_eq!(render(Some(&status)), "hookd ✓ · 2 pending");
        let mut status = status;
        status.last_decision = Some(LastDecision {
            verdict: Verdict::Deny,
            kind: "PreToolUse".into(),
            tool: Some("Bash".into()),
            summary: "rm -rf /tmp/some/very/long/path/indeed".into(),
            source: "rule".into(),
            rule_ids: vec!["no-rm".into()],
        });
        status.counters.grants = 1;
        assert_eq!(
            render(Some(&status)),
            "hookd ✓ · 2 pending · 1 grant · deny rm -rf /tmp/some/very/l… (no-rm)"
        );
        assert_eq!(render(None), "hookd ✗ down");
        let note =
            "tainted by WebFetch https://example.com/a/path at 14:02:11 UTC; 3 tool calls so far";
        assert_eq!(
            render_with(Some(&status), Some(note)),
            "hookd ✓ · 2 pending · 1 grant · deny rm -rf /tmp/some/very/l… (no-rm) · ⚠ tainted by WebFetch https://example.com/a/path at 14:02:11 UTC"
        );
        // Calls alone are not worth the room; a down daemon says nothing more.
        assert_eq!(
            render_with(Some(&status), Some("3 tool calls so far")),
            render(Some(&status))
        );
        assert_eq!(render_with(None, Some(note)), "hookd ✗ down");
    }
}
