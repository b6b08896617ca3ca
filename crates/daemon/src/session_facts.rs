//! The session facts the daemon gathers for rules with `limit`, `budget`
//! and `after` (issue #25; see `hookd_core::rules::facts`).
//!
//! Per session: its tool calls (PreToolUse events) and the tool runs that
//! taint it (PostToolUse events of a tool some rule's `after` names). Per
//! (limited rule, scope key): the times of its matching calls, a sliding
//! window. Everything is bounded ([`MAX_SESSIONS`], [`MAX_WINDOWS`],
//! [`MAX_TAINT`], and a window keeps at most `count + 1` times) and pruned
//! lazily when read: no timers, nothing runs while idle, and nothing is
//! gathered at all when no rule uses facts.
//!
//! The counts live in memory only and start over when the daemon restarts:
//! a limit is a brake on a burst, and a restart is rare and deliberate, so
//! losing a window costs at most one more burst; persisting them would put a
//! write on every limited call.
//!
//! Claude Code's subagents send their hooks with the parent's `session_id`
//! (and their own `agent_id`), so a subagent shares — inherits — its
//! parent's taint and call count.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use crate::rules::facts::{Limit, LimitedHit, Scope, SessionFacts, Taint};

/// Sessions tracked at most; past that the oldest is forgotten.
pub const MAX_SESSIONS: usize = 4096;
/// Sliding windows kept at most.
pub const MAX_WINDOWS: usize = 16_384;
/// Taints kept per session (the newest).
pub const MAX_TAINT: usize = 16;

#[derive(Default)]
struct Session {
    calls: u64,
    taint: VecDeque<Taint>,
    last_ms: u64,
    /// A run's session: the run's cost so far, as its adapter reported.
    cost_usd: Option<f64>,
}

#[derive(Default)]
struct Inner {
    sessions: HashMap<String, Session>,
    windows: HashMap<(String, String), VecDeque<u64>>,
}

/// The daemon's session facts.
#[derive(Default)]
pub struct FactsStore {
    inner: Mutex<Inner>,
}

/// The key of `scope` for a call of `agent` in `session`.
fn scope_key(scope: Scope, session: &str, agent: &str) -> String {
    match scope {
        Scope::Session => format!("s:{session}"),
        Scope::Agent => format!("a:{agent}"),
        Scope::Machine => "m".to_string(),
    }
}

impl FactsStore {
    /// The facts for a call in `session` by `agent` at `now_ms`, for the
    /// limited rules `limited`.
    pub fn gather(
        &self,
        session: &str,
        agent: &str,
        now_ms: u64,
        limited: &[(String, Limit)],
    ) -> SessionFacts {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let mut facts = SessionFacts {
            now_ms,
            ..SessionFacts::default()
        };
        if let Some(s) = inner.sessions.get(session) {
            facts.calls = s.calls;
            facts.taint = s.taint.iter().cloned().collect();
            facts.run_cost_usd = s.cost_usd;
        }
        for (rule, limit) in limited {
            let key = (rule.clone(), scope_key(limit.scope, session, agent));
            if let Some(w) = inner.windows.get_mut(&key) {
                let since = now_ms.saturating_sub(limit.per_secs * 1000);
                while w.front().is_some_and(|&t| t <= since) {
                    w.pop_front();
                }
                if !w.is_empty() {
                    facts.counts.insert(rule.clone(), w.len() as u32);
                }
            }
        }
        facts
    }

    /// Counts a judged call: the session's calls (for PreToolUse) and each
    /// limited rule that matched it.
    pub fn record_call(
        &self,
        session: &str,
        agent: &str,
        now_ms: u64,
        tool_call: bool,
        limited: &[LimitedHit],
    ) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if tool_call {
            let s = session_mut(&mut inner, session, now_ms);
            s.calls += 1;
        }
        for hit in limited {
            let key = (hit.rule.clone(), scope_key(hit.limit.scope, session, agent));
            if !inner.windows.contains_key(&key) && inner.windows.len() >= MAX_WINDOWS {
                // Forget the window whose newest call is oldest.
                if let Some(old) = inner
                    .windows
                    .iter()
                    .min_by_key(|(_, w)| w.back().copied().unwrap_or(0))
                    .map(|(k, _)| k.clone())
                {
                    inner.windows.remove(&old);
                }
            }
            let w = inner.windows.entry(key).or_default();
            w.push_back(now_ms);
            let cap = hit.limit.count as usize + 1;
            while w.len() > cap {
                w.pop_front();
            }
        }
    }

    /// Notes a tool run that taints `session`.
    pub fn record_taint(&self, session: &str, taint: Taint) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        let s = session_mut(&mut inner, session, taint.at_ms);
        s.taint.push_back(taint);
        while s.taint.len() > MAX_TAINT {
            s.taint.pop_front();
        }
    }

    /// Notes the cost so far of the run whose session is `session`, for
    /// `budget = { usd = X }`.
    pub fn record_cost(&self, session: &str, cost_usd: f64, now_ms: u64) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        session_mut(&mut inner, session, now_ms).cost_usd = Some(cost_usd);
    }

    /// Sessions and windows held (for tests of the bounds).
    pub fn sizes(&self) -> (usize, usize) {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        (inner.sessions.len(), inner.windows.len())
    }
}

fn session_mut<'a>(inner: &'a mut Inner, session: &str, now_ms: u64) -> &'a mut Session {
    if !inner.sessions.contains_key(session) && inner.sessions.len() >= MAX_SESSIONS {
        if let Some(old) = inner
            .sessions
            .iter()
            .min_by_key(|(_, s)| s.last_ms)
            .map(|(k, _)| k.clone())
        {
            inner.sessions.remove(&old);
        }
    }
    let s = inner.sessions.entry(session.to_string()).or_default();
    s.last_ms = now_ms;
    s
}

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The taint a run of `tool` with `input` leaves: its URL, path or command
/// as the detail.
pub fn taint_of(tool: &str, input: Option<&serde_json::Value>, at_ms: u64) -> Taint {
    let detail = input.and_then(|i| {
        ["url", "file_path", "path", "command"]
            .iter()
            .find_map(|k| i.get(*k).and_then(|v| v.as_str()))
            .map(|s| s.chars().take(200).collect::<String>())
    });
    Taint {
        tool: tool.to_string(),
        detail,
        at_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(count: u32, per_secs: u64, scope: Scope) -> LimitedHit {
        LimitedHit {
            rule: "r".into(),
            limit: Limit {
                count,
                per_secs,
                scope,
            },
        }
    }

    #[test]
    fn window_counts_and_slides() {
        let f = FactsStore::default();
        let h = hit(2, 60, Scope::Session);
        let limited = [(h.rule.clone(), h.limit)];
        for t in [1_000, 2_000, 3_000] {
            f.record_call("s1", "claude-code", t, true, std::slice::from_ref(&h));
        }
        let now = f.gather("s1", "claude-code", 3_500, &limited);
        assert_eq!(now.counts.get("r"), Some(&3));
        assert_eq!(now.calls, 3);
        // Another session has its own window.
        assert!(f
            .gather("s2", "claude-code", 3_500, &limited)
            .counts
            .is_empty());
        // A minute later the first two calls left the window.
        let later = f.gather("s1", "claude-code", 62_500, &limited);
        assert_eq!(later.counts.get("r"), Some(&1));
    }

    #[test]
    fn machine_scope_spans_sessions() {
        let f = FactsStore::default();
        let h = hit(5, 60, Scope::Machine);
        f.record_call("a", "codex", 1, true, std::slice::from_ref(&h));
        f.record_call("b", "gemini", 2, true, std::slice::from_ref(&h));
        let facts = f.gather("c", "claude-code", 3, &[(h.rule.clone(), h.limit)]);
        assert_eq!(facts.counts.get("r"), Some(&2));
    }

    #[test]
    fn memory_is_bounded() {
        let f = FactsStore::default();
        let h = hit(3, 3600, Scope::Session);
        for i in 0..(MAX_SESSIONS + 50) {
            f.record_call(
                &format!("s{i}"),
                "x",
                i as u64,
                true,
                std::slice::from_ref(&h),
            );
        }
        let (sessions, windows) = f.sizes();
        assert!(sessions <= MAX_SESSIONS, "{sessions}");
        assert!(windows <= MAX_WINDOWS, "{windows}");
        for i in 0..100 {
            f.record_taint(
                "t",
                Taint {
                    tool: "WebFetch".into(),
                    detail: None,
                    at_ms: i,
                },
            );
        }
        assert_eq!(f.gather("t", "x", 200, &[]).taint.len(), MAX_TAINT);
    }
}
