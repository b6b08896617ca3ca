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
use crate::protocol::{Reply, ReqOnly, Request, Status};

/// How long the whole exchange may take before the daemon counts as down.
pub const BUDGET: Duration = Duration::from_millis(50);

/// How much of the last decision's summary the line shows.
const SUMMARY_CHARS: usize = 24;

/// The daemon's status, or `None` when it did not answer within `budget`.
pub fn fetch(socket: &Path, budget: Duration) -> Option<Status> {
    let deadline = Instant::now() + budget;
    let stream = UnixStream::connect(socket).ok()?;
    stream.set_write_timeout(Some(budget)).ok()?;
    // Both frames in one write: the status reply needs no second round trip.
    let mut frames = Handshake::client("statusline").hello_line();
    serde_json::to_writer(&mut frames, &Request::Status(ReqOnly { req: "s".into() })).ok()?;
    frames.push(b'\n');
    (&stream).write_all(&frames).ok()?;
    let mut reader = BufReader::new(&stream);
    let mut line = String::new();
    loop {
        let left = deadline.checked_duration_since(Instant::now())?;
        if left.is_zero() {
            return None;
        }
        stream.set_read_timeout(Some(left)).ok()?;
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        match serde_json::from_str::<Reply>(&line).ok()? {
            Reply::Ok(ok) if ok.req == "s" => return serde_json::from_value(ok.result?).ok(),
            Reply::Error(_) => return None,
            _ => continue,
        }
    }
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
    }
}
