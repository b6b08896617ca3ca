//! A few recent events per session, as short redacted lines: what the judge
//! ([`crate::judge`]) tells the model of a session beside the event it
//! judges, and what the narrator ([`crate::narrator`]) narrates from.
//!
//! Kept only while some rule is a judge rule or the narrator is on (the
//! hook path asks [`Recent::note`] then): a daemon with neither keeps
//! nothing. Bounded: [`MAX_LINES`] per session, [`MAX_SESSIONS`] sessions
//! (past that the session noted longest ago is forgotten), and a session's
//! lines go at its `SessionEnd`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Lines kept per session.
pub const MAX_LINES: usize = 16;
/// Sessions kept.
pub const MAX_SESSIONS: usize = 256;
/// Characters of an input's summary in a line.
const SUMMARY_CHARS: usize = 120;

#[derive(Default)]
struct Session {
    lines: VecDeque<String>,
    /// When it was last noted, as a count of notes: the oldest is forgotten.
    touched: u64,
}

/// The recent events of every session (see the module's doc).
#[derive(Default)]
pub struct Recent {
    sessions: Mutex<(HashMap<String, Session>, u64)>,
}

impl std::fmt::Debug for Recent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recent")
            .field("sessions", &self.len())
            .finish()
    }
}

impl Recent {
    /// Notes `line` for `session`.
    pub fn note(&self, session: &str, line: String) {
        let mut guard = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        let (sessions, clock) = &mut *guard;
        *clock += 1;
        if !sessions.contains_key(session) && sessions.len() >= MAX_SESSIONS {
            if let Some(oldest) = sessions
                .iter()
                .min_by_key(|(_, s)| s.touched)
                .map(|(k, _)| k.clone())
            {
                sessions.remove(&oldest);
            }
        }
        let s = sessions.entry(session.to_string()).or_default();
        s.touched = *clock;
        if s.lines.len() == MAX_LINES {
            s.lines.pop_front();
        }
        s.lines.push_back(line);
    }

    /// The last `n` lines of `session`, oldest first.
    pub fn lines(&self, session: &str, n: usize) -> Vec<String> {
        let guard = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        guard.0.get(session).map_or_else(Vec::new, |s| {
            s.lines
                .iter()
                .skip(s.lines.len().saturating_sub(n))
                .cloned()
                .collect()
        })
    }

    /// Forgets `session`.
    pub fn end(&self, session: &str) {
        let mut guard = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        guard.0.remove(session);
    }

    /// Sessions kept now.
    pub fn len(&self) -> usize {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .len()
    }

    /// Whether no session is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One event as a recent line: `PreToolUse Bash: cargo test`, from its
/// (already redacted) input.
pub fn line_of(kind: &str, tool: Option<&str>, redacted_input: &serde_json::Value) -> String {
    let summary = crate::event::input_summary(redacted_input, SUMMARY_CHARS);
    match tool {
        Some(tool) if summary != tool => format!("{kind} {tool}: {summary}"),
        Some(tool) => format!("{kind} {tool}"),
        None if summary.is_empty() || summary == kind => kind.to_string(),
        None => format!("{kind}: {summary}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_bounded_per_session_and_in_sessions() {
        let r = Recent::default();
        for i in 0..MAX_LINES + 3 {
            r.note("a", format!("line {i}"));
        }
        let lines = r.lines("a", 100);
        assert_eq!(lines.len(), MAX_LINES);
        assert_eq!(lines.last().unwrap(), &format!("line {}", MAX_LINES + 2));
        assert_eq!(
            r.lines("a", 2),
            [
                format!("line {}", MAX_LINES + 1),
                format!("line {}", MAX_LINES + 2)
            ]
        );
        for i in 0..MAX_SESSIONS {
            r.note(&format!("s{i}"), "x".into());
        }
        assert_eq!(r.len(), MAX_SESSIONS);
        assert!(
            r.lines("a", 1).is_empty(),
            "the session noted longest ago went"
        );
        r.end("s1");
        assert!(r.lines("s1", 1).is_empty());
    }

    #[test]
    fn a_line_says_the_event_tool_and_what_it_is_about() {
        let input =
            serde_json::json!({"tool_name": "Bash", "tool_input": {"command": "cargo  test"}});
        assert_eq!(
            line_of("PreToolUse", Some("Bash"), &input),
            "PreToolUse Bash: cargo test"
        );
        assert_eq!(
            line_of(
                "Stop",
                None,
                &serde_json::json!({"hook_event_name": "Stop"})
            ),
            "Stop"
        );
    }
}
