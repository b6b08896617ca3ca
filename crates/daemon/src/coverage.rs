//! The coverage alarm: proof that no tool call went unjudged.
//!
//! Silent fail-open is what a hook system's users fear most: a dropped
//! registration, Codex hooks left untrusted, a matcher that misses a tool,
//! a plugin that did not load. The daemon sees every session's events, so
//! it notices: per session and agent, every event that says a tool *ran*
//! (PostToolUse, PostToolUseFailure, Codex's PostToolUse, Gemini's
//! AfterTool: [`crate::agent::coverage::phase`]) is paired with the
//! pre-tool event that had the same call judged (PreToolUse, BeforeTool).
//! A call that ran with no judged pre-tool event is *unjudged*: counted
//! (`status.coverage`, `hookd_unjudged_tool_calls_total{agent}`), logged
//! (one `unjudged_tool_call` line per call, PROTOCOL.md §7.4) and alarmed
//! (a `coverage_alarm` frame to every subscriber, which the approver shows
//! in its feed, and a push to the `[notify]` targets), at most once per
//! session per [`ALARM_EVERY`], and once more when the session ends with
//! calls not yet told.
//!
//! **Pairing.** By the call's id where the agent gives one on both events
//! (`tool_use_id`: Claude Code, the Agent SDK, Codex), else by the tool's
//! name and input within the session (Gemini), else, where the agent gives
//! no id, by the tool's name alone: a registration or a matcher misses a
//! *tool*, never one call of it, so nothing that can go wrong is lost, and
//! an agent that adds a field to the input after the pre-tool hook raises
//! no false alarm. Order does not matter: a pre-tool event noted after its
//! after-tool event (hooks run in parallel; the two arrive on different
//! connections) still pairs with it, within [`GRACE`]. An after-tool event
//! is concluded unjudged only once [`GRACE`] has passed without its
//! pre-tool event (or at once when its session ends).
//!
//! **What it does not detect.** A session none of whose tool events
//! arrive (hookd not registered at all, every Codex hook untrusted) leaves
//! the daemon nothing to pair; `hookd doctor` reads the registrations
//! instead (the pre-tool event registered, Codex's trust recorded). No
//! "other evidence" (a transcript, a turn's end) is read: none says for
//! sure that a tool ran without a false alarm on some agent. A tool call
//! judged by a daemon that was restarted before the tool ended is counted
//! unjudged by the new one (it never saw the pre-tool event), unless the
//! after-tool event says how long the tool ran (Claude Code's
//! `duration_ms`): a call that started before the daemon is not paired.
//! Copies of an SDK run's hooks and doctor's probes are not counted.
//!
//! **Bounds.** At most [`MAX_SESSIONS`] sessions are tracked (sessions
//! idle for [`SESSION_IDLE`] are forgotten when a new one arrives, and the
//! least recently active when the table is still full); a session ends
//! with its SessionEnd. Per session at most [`MAX_OPEN_CALLS`] judged calls
//! wait for their after-tool event (a denied call never gets one: the
//! oldest goes first), and at most [`MAX_WAITING`] after-tool events wait
//! for their pre-tool event in all (past that the oldest is concluded at
//! once). A session's state is a few hundred bytes plus 32 per open call
//! (`a_session_costs_what_the_bounds_say`).
//!
//! **No timer when idle.** One task concludes the waiting after-tool
//! events; it exists only while one waits, and ends when none does.
//!
//! An agent plugs in through its dialect alone ([`crate::agent::coverage`]).

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use uuid::Uuid;

use crate::agent::claude::HookEventKind;
use crate::agent::coverage::{phase, tool_call, Phase};
use crate::agent::Harness;
use crate::event::Event;
use crate::protocol::coverage::{
    alarm_message, AgentCoverage, CoverageAlarm, UnjudgedToolCall, ALARM_EVERY_S,
};
use crate::protocol::Reply;
use crate::Shared;

/// How long an after-tool event waits for its pre-tool event before its
/// call is concluded unjudged.
pub const GRACE: Duration = Duration::from_secs(2);
/// Sessions tracked at most.
pub const MAX_SESSIONS: usize = 512;
/// A session idle this long is forgotten when a new session arrives.
pub const SESSION_IDLE: Duration = Duration::from_secs(3600);
/// Judged calls per session waiting for their after-tool event.
pub const MAX_OPEN_CALLS: usize = 64;
/// After-tool events waiting for their pre-tool event, in all sessions.
pub const MAX_WAITING: usize = 1024;
/// The least time between two alarms of one session.
pub const ALARM_EVERY: Duration = Duration::from_secs(ALARM_EVERY_S);
/// Characters kept of a session id and of a project name.
const MAX_NAME_CHARS: usize = 64;

/// The alarm's state: see the module doc.
#[derive(Debug, Default)]
pub struct Coverage {
    table: Mutex<Table>,
    /// The task that concludes waiting after-tool events runs.
    settling: AtomicBool,
}

#[derive(Debug, Default)]
struct Table {
    sessions: HashMap<SessionKey, Session>,
    /// Per harness, in the order first seen.
    agents: Vec<(Harness, Totals)>,
    /// After-tool events waiting for their pre-tool event, oldest first
    /// (their deadlines are in this order: the grace is one constant).
    waiting: VecDeque<Waiting>,
}

/// A session: its harness and its id's hash.
type SessionKey = (Harness, u64);

#[derive(Debug)]
struct Session {
    /// Its id, cut to [`MAX_NAME_CHARS`].
    id: Box<str>,
    project: Option<Box<str>>,
    last_seen: Instant,
    unjudged: u64,
    /// `unjudged` when the last alarm went.
    told: u64,
    last_alarm: Option<Instant>,
    /// Judged calls whose after-tool event has not come, oldest first.
    open: VecDeque<CallKey>,
}

/// One call's identity, hashed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CallKey {
    id: Option<u64>,
    tool: u64,
    input: u64,
}

impl CallKey {
    /// Whether `self` (a judged call) is the call `ran` is about: by id
    /// when both have one, else by tool and input.
    fn same(&self, ran: &CallKey) -> bool {
        match (self.id, ran.id) {
            (Some(a), Some(b)) => a == b,
            _ => self.tool == ran.tool && self.input == ran.input,
        }
    }

    /// The fallback where the agent gives no id: the same tool.
    fn same_tool(&self, ran: &CallKey) -> bool {
        self.id.is_none() && ran.id.is_none() && self.tool == ran.tool
    }
}

#[derive(Debug)]
struct Waiting {
    session: SessionKey,
    call: CallKey,
    due: Instant,
    tool: Box<str>,
    tool_use_id: Option<Box<str>>,
    event_id: Uuid,
    cwd: Option<Box<str>>,
}

#[derive(Debug, Default)]
struct Totals {
    sessions: u64,
    judged: u64,
    unjudged: u64,
    last: Option<(Box<str>, Option<Box<str>>, std::time::SystemTime)>,
}

/// What a concluded call produces, written out once the table's lock is
/// released.
#[derive(Debug)]
struct Concluded {
    record: UnjudgedToolCall,
    alarm: Option<CoverageAlarm>,
}

fn hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

fn cut(text: &str) -> Box<str> {
    text.chars().take(MAX_NAME_CHARS).collect::<String>().into()
}

/// The project's name: the last component of the cwd.
fn project_of(cwd: Option<&str>) -> Option<Box<str>> {
    let cwd = cwd?.trim_end_matches('/');
    let name = cwd.rsplit('/').next().filter(|n| !n.is_empty())?;
    Some(cut(name))
}

/// The name a person reads for a harness.
pub fn harness_name(harness: Harness) -> &'static str {
    match harness {
        Harness::AgentSdk => "Agent SDK",
        other => other.agent().display_name(),
    }
}

impl Table {
    fn totals(&mut self, harness: Harness) -> &mut Totals {
        let at = match self.agents.iter().position(|(h, _)| *h == harness) {
            Some(at) => at,
            None => {
                self.agents.push((harness, Totals::default()));
                self.agents.len() - 1
            }
        };
        &mut self.agents[at].1
    }

    /// The session `key`, made when new (forgetting idle ones, or the
    /// least recently active when the table is full).
    fn session(
        &mut self,
        key: SessionKey,
        id: &str,
        cwd: Option<&str>,
        now: Instant,
    ) -> &mut Session {
        if !self.sessions.contains_key(&key) {
            // A new session is rare beside tool calls: this scan of at most
            // MAX_SESSIONS is what forgets the idle ones, without a timer.
            self.sessions
                .retain(|_, s| now.duration_since(s.last_seen) < SESSION_IDLE);
            if self.sessions.len() >= MAX_SESSIONS {
                if let Some(oldest) = self
                    .sessions
                    .iter()
                    .min_by_key(|(_, s)| s.last_seen)
                    .map(|(k, _)| *k)
                {
                    self.sessions.remove(&oldest);
                }
            }
            self.totals(key.0).sessions += 1;
            self.sessions.insert(
                key,
                Session {
                    id: cut(id),
                    project: project_of(cwd),
                    last_seen: now,
                    unjudged: 0,
                    told: 0,
                    last_alarm: None,
                    open: VecDeque::new(),
                },
            );
        }
        let session = self.sessions.get_mut(&key).expect("just made");
        session.last_seen = now;
        if session.project.is_none() {
            session.project = project_of(cwd);
        }
        session
    }

    /// A judged call: pairs it with a waiting after-tool event, or keeps
    /// it open.
    fn judged(&mut self, key: SessionKey, call: CallKey) {
        self.totals(key.0).judged += 1;
        let waiting = self
            .waiting
            .iter()
            .position(|w| w.session == key && call.same(&w.call))
            .or_else(|| {
                self.waiting
                    .iter()
                    .position(|w| w.session == key && call.same_tool(&w.call))
            });
        if let Some(at) = waiting {
            self.waiting.remove(at);
            return;
        }
        let Some(session) = self.sessions.get_mut(&key) else {
            return;
        };
        if session.open.len() == MAX_OPEN_CALLS {
            session.open.pop_front();
        }
        session.open.push_back(call);
    }

    /// A call that ran: pairs it with its judged call, or makes it wait.
    /// Returns whether it waits.
    fn ran(&mut self, key: SessionKey, call: CallKey, waiting: impl FnOnce() -> Waiting) -> bool {
        if let Some(session) = self.sessions.get_mut(&key) {
            let open = session
                .open
                .iter()
                .position(|c| c.same(&call))
                .or_else(|| session.open.iter().position(|c| c.same_tool(&call)));
            if let Some(at) = open {
                session.open.remove(at);
                return false;
            }
        }
        self.waiting.push_back(waiting());
        true
    }

    /// Concludes `w`: its call ran unjudged.
    fn conclude(&mut self, w: Waiting, now: Instant, wall: std::time::SystemTime) -> Concluded {
        let harness = w.session.0;
        let (id, project, unjudged, alarm) = match self.sessions.get_mut(&w.session) {
            Some(session) => {
                session.unjudged += 1;
                let due = session
                    .last_alarm
                    .is_none_or(|at| now.duration_since(at) >= ALARM_EVERY);
                if due {
                    session.last_alarm = Some(now);
                    session.told = session.unjudged;
                }
                (
                    session.id.clone(),
                    session.project.clone(),
                    session.unjudged,
                    due,
                )
            }
            // Forgotten since (the table was full): alone, it alarms.
            None => ("?".into(), project_of(w.cwd.as_deref()), 1, true),
        };
        let totals = self.totals(harness);
        totals.unjudged += 1;
        totals.last = Some((id.clone(), project.clone(), wall));
        let at = crate::time::rfc3339(wall);
        let alarm =
            alarm.then(|| alarm_of(harness, &id, project.as_deref(), unjudged, &w.tool, &at));
        Concluded {
            record: UnjudgedToolCall {
                at,
                harness: harness.as_str().to_string(),
                session_id: id.into(),
                cwd: w.cwd.map(Into::into),
                tool: w.tool.into(),
                tool_use_id: w.tool_use_id.map(Into::into),
                event_id: w.event_id.to_string(),
                session_unjudged: unjudged,
            },
            alarm,
        }
    }

    /// Concludes what waited past its grace (or, with `ended`, what that
    /// session left waiting).
    fn settle(
        &mut self,
        now: Instant,
        wall: std::time::SystemTime,
        ended: Option<SessionKey>,
    ) -> Vec<Concluded> {
        let mut out = Vec::new();
        if let Some(ended) = ended {
            let mut at = 0;
            while at < self.waiting.len() {
                if self.waiting[at].session == ended {
                    let w = self.waiting.remove(at).expect("in range");
                    out.push(self.conclude(w, now, wall));
                } else {
                    at += 1;
                }
            }
        }
        while self
            .waiting
            .front()
            .is_some_and(|w| w.due <= now || self.waiting.len() > MAX_WAITING)
        {
            let w = self.waiting.pop_front().expect("checked");
            out.push(self.conclude(w, now, wall));
        }
        out
    }

    /// The session's end: a last alarm if calls ran unjudged since the
    /// last one, and the session is forgotten.
    fn end(&mut self, key: SessionKey, wall: std::time::SystemTime) -> Option<CoverageAlarm> {
        let session = self.sessions.remove(&key)?;
        (session.unjudged > session.told).then(|| {
            alarm_of(
                key.0,
                &session.id,
                session.project.as_deref(),
                session.unjudged,
                "",
                &crate::time::rfc3339(wall),
            )
        })
    }

    fn status(&self) -> Vec<AgentCoverage> {
        self.agents
            .iter()
            .map(|(harness, t)| AgentCoverage {
                agent: harness.as_str().to_string(),
                sessions: t.sessions,
                judged: t.judged,
                unjudged: t.unjudged,
                last_unjudged_session: t.last.as_ref().map(|(s, _, _)| s.to_string()),
                last_unjudged_project: t
                    .last
                    .as_ref()
                    .and_then(|(_, p, _)| p.as_ref().map(|p| p.to_string())),
                last_unjudged_at: t.last.as_ref().map(|(_, _, at)| crate::time::rfc3339(*at)),
            })
            .collect()
    }
}

fn alarm_of(
    harness: Harness,
    session: &str,
    project: Option<&str>,
    unjudged: u64,
    tool: &str,
    at: &str,
) -> CoverageAlarm {
    CoverageAlarm {
        at: at.to_string(),
        harness: harness.as_str().to_string(),
        agent_name: harness_name(harness).to_string(),
        session_id: session.to_string(),
        project: project.map(str::to_owned),
        unjudged,
        tool: tool.to_string(),
        message: alarm_message(session, project, harness_name(harness), unjudged),
    }
}

impl Coverage {
    /// `status.coverage`: per agent seen.
    pub fn status(&self) -> Vec<AgentCoverage> {
        self.lock().status()
    }

    /// Sessions tracked now.
    pub fn sessions(&self) -> usize {
        self.lock().sessions.len()
    }

    /// After-tool events waiting for their pre-tool event now.
    pub fn waiting(&self) -> usize {
        self.lock().waiting.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Notes `event` (a hook the daemon judges: not a copy of a run's hook,
/// not a probe): its session, and the tool call it says was judged or ran.
/// On the hook path: a lock, a few hashes, no IO but what a conclusion
/// writes (at a session's end).
pub fn note(shared: &Arc<Shared>, event: &Event) {
    let Some(session_id) = event.input.base.session_id.as_deref() else {
        return;
    };
    let kind = event.kind();
    let phase = phase(kind);
    if phase.is_none()
        && !matches!(
            kind,
            HookEventKind::SessionStart | HookEventKind::SessionEnd
        )
    {
        // Only tool events and a session's ends are read: every other
        // event is not worth the lock.
        return;
    }
    let now = Instant::now();
    let key = (event.harness, hash(session_id));
    let cwd = event.input.base.cwd.as_deref();
    let coverage = &shared.coverage;
    let mut table = coverage.lock();
    table.session(key, session_id, cwd, now);
    let call = || {
        let call = tool_call(event.agent(), &event.raw)?;
        // The input is compared only for agents that give no id (its text
        // is as long as the input: a written file's content).
        let input = match (call.id, call.input) {
            (None, Some(input)) => hash(&input.to_string()),
            _ => 0,
        };
        Some((
            call,
            CallKey {
                id: call.id.map(hash),
                tool: hash(call.tool),
                input,
            },
        ))
    };
    match phase {
        Some(Phase::Judged) => {
            if let Some((_, key_of_call)) = call() {
                table.judged(key, key_of_call);
            }
        }
        Some(Phase::Ran) => {
            let Some((call, key_of_call)) = call() else {
                return;
            };
            if call
                .duration_ms
                .is_some_and(|ran| Duration::from_millis(ran) >= shared.started.elapsed())
            {
                // It started before this daemon did: the one before may
                // have judged it.
                tracing::debug!(
                    session = session_id,
                    tool = call.tool,
                    "a tool call older than the daemon is not paired"
                );
                return;
            }
            let waits = table.ran(key, key_of_call, || Waiting {
                session: key,
                call: key_of_call,
                due: now + GRACE,
                tool: cut(call.tool),
                tool_use_id: call.id.map(cut),
                event_id: event.id,
                cwd: cwd.map(cut),
            });
            let full = table.waiting.len() > MAX_WAITING;
            if full {
                let concluded = table.settle(now, shared.clock.now(), None);
                drop(table);
                publish(shared, concluded);
            } else if waits {
                drop(table);
                settle_later(shared);
            }
        }
        None if kind == HookEventKind::SessionEnd => {
            let wall = shared.clock.now();
            let concluded = table.settle(now, wall, Some(key));
            let last = table.end(key, wall);
            drop(table);
            publish(shared, concluded);
            if let Some(alarm) = last {
                raise(shared, alarm);
            }
        }
        None => {}
    }
}

/// Starts the task that concludes waiting after-tool events, unless it
/// runs: it sleeps until the oldest one's grace ends, concludes what is
/// due, and ends when nothing waits.
fn settle_later(shared: &Arc<Shared>) {
    if shared.coverage.settling.swap(true, Ordering::AcqRel) {
        return;
    }
    let shared = shared.clone();
    tokio::spawn(async move {
        loop {
            let next = shared.coverage.lock().waiting.front().map(|w| w.due);
            let Some(due) = next else {
                shared.coverage.settling.store(false, Ordering::Release);
                // One may have been added after the look and before the
                // flag went down: it found the flag up and started nothing.
                if shared.coverage.lock().waiting.is_empty()
                    || shared.coverage.settling.swap(true, Ordering::AcqRel)
                {
                    return;
                }
                continue;
            };
            tokio::time::sleep_until(due).await;
            let concluded = shared
                .coverage
                .lock()
                .settle(Instant::now(), shared.clock.now(), None);
            publish(&shared, concluded);
        }
    });
}

/// Writes what was concluded: the log line of each call, the alarms.
fn publish(shared: &Arc<Shared>, concluded: Vec<Concluded>) {
    for Concluded { record, alarm } in concluded {
        tracing::warn!(
            agent = %record.harness,
            session = %record.session_id,
            tool = %record.tool,
            "a tool call ran without its pre-tool hook judged"
        );
        let mut line = serde_json::to_vec(&record).expect("records serialize");
        line.push(b'\n');
        let line = bytes::Bytes::from(line);
        shared.otlp.push(&line);
        shared.log.push(line);
        if let Some(alarm) = alarm {
            raise(shared, alarm);
        }
    }
}

/// Tells every subscriber and the push targets.
fn raise(shared: &Arc<Shared>, alarm: CoverageAlarm) {
    tracing::warn!(agent = %alarm.harness, session = %alarm.session_id, unjudged = alarm.unjudged, "{}", alarm.message);
    if let Some(face) = shared.http.get() {
        face.coverage_alarm(&alarm);
    }
    let mut frame = serde_json::to_vec(&Reply::CoverageAlarm(alarm)).expect("frames serialize");
    frame.push(b'\n');
    shared.hub.push_to_all(frame.into());
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    fn call(id: Option<&str>, tool: &str, input: &str) -> CallKey {
        CallKey {
            id: id.map(hash),
            tool: hash(tool),
            input: hash(input),
        }
    }

    fn waiting(key: SessionKey, call: CallKey, due: Instant) -> Waiting {
        Waiting {
            session: key,
            call,
            due,
            tool: "Bash".into(),
            tool_use_id: None,
            event_id: Uuid::nil(),
            cwd: Some("/p/webshop".into()),
        }
    }

    #[test]
    fn pairs_by_id_in_either_order_and_by_tool_without_one() {
        let now = Instant::now();
        let wall = SystemTime::now();
        let mut t = Table::default();
        let s = (Harness::Codex, 1);
        t.session(s, "s1", Some("/p/webshop"), now);
        // Judged then ran, by id.
        t.judged(s, call(Some("a"), "Bash", "1"));
        assert!(!t.ran(s, call(Some("a"), "Bash", "changed"), || unreachable!()));
        // Ran then judged (parallel hooks): paired while it waits.
        let b = call(Some("b"), "Bash", "2");
        assert!(t.ran(s, b, || waiting(s, b, now + GRACE)));
        t.judged(s, b);
        assert!(t.waiting.is_empty());
        // Another id does not pair.
        let c = call(Some("c"), "Bash", "3");
        t.judged(s, call(Some("d"), "Bash", "3"));
        assert!(t.ran(s, c, || waiting(s, c, now + GRACE)));
        assert!(t.settle(now, wall, None).is_empty(), "not due yet");
        let concluded = t.settle(now + GRACE, wall, None);
        assert_eq!(concluded.len(), 1);
        assert_eq!(concluded[0].record.session_unjudged, 1);
        let alarm = concluded[0].alarm.as_ref().expect("the first alarms");
        assert_eq!(
            alarm.message,
            "session s1 (webshop, Codex CLI): 1 tool call ran unjudged"
        );
        // Gemini: no ids; an input changed after the pre-tool hook pairs by
        // the tool.
        let g = (Harness::Gemini, 2);
        t.session(g, "g", None, now);
        t.judged(g, call(None, "replace", "before"));
        assert!(!t.ran(g, call(None, "replace", "after"), || unreachable!()));
        // Another session's judged call pairs nothing.
        t.judged(g, call(None, "run_shell_command", "x"));
        let other = (Harness::Gemini, 3);
        t.session(other, "o", None, now);
        let x = call(None, "run_shell_command", "x");
        assert!(t.ran(other, x, || waiting(other, x, now)));
    }

    #[test]
    fn alarms_are_throttled_per_session_and_the_end_tells_the_rest() {
        let now = Instant::now();
        let wall = SystemTime::now();
        let mut t = Table::default();
        let s = (Harness::ClaudeCode, 1);
        t.session(s, "1fce3faa-aaaa", Some("/w/webshop"), now);
        for n in 0..3 {
            let c = call(Some(&n.to_string()), "Bash", "");
            t.ran(s, c, || waiting(s, c, now));
        }
        let concluded = t.settle(now, wall, None);
        assert_eq!(concluded.len(), 3, "one log line per call");
        let alarms: Vec<_> = concluded.iter().filter_map(|c| c.alarm.as_ref()).collect();
        assert_eq!(alarms.len(), 1, "one alarm for the burst");
        // Past the throttle, the next call alarms with the session's count.
        let later = now + ALARM_EVERY;
        let c = call(Some("late"), "Bash", "");
        t.ran(s, c, || waiting(s, c, later));
        let concluded = t.settle(later, wall, None);
        assert_eq!(concluded[0].alarm.as_ref().unwrap().unjudged, 4);
        // Two more, within the throttle: told when the session ends.
        for n in 0..2 {
            let c = call(Some(&format!("e{n}")), "Bash", "");
            t.ran(s, c, || waiting(s, c, later + GRACE));
        }
        let concluded = t.settle(later, wall, Some(s));
        assert_eq!(concluded.len(), 2, "a session's end concludes what waits");
        assert!(concluded.iter().all(|c| c.alarm.is_none()));
        let last = t.end(s, wall).expect("calls not yet told");
        assert_eq!(
            last.message,
            "session 1fce3faa (webshop, Claude Code): 6 tool calls ran unjudged"
        );
        assert!(t.sessions.is_empty());
        let status = t.status();
        assert_eq!((status[0].sessions, status[0].unjudged), (1, 6));
        assert_eq!(status[0].last_unjudged_project.as_deref(), Some("webshop"));
    }

    #[test]
    fn a_session_costs_what_the_bounds_say() {
        let now = Instant::now();
        let wall = SystemTime::now();
        let mut t = Table::default();
        // Sessions: the table holds MAX_SESSIONS; the least recently
        // active goes first.
        for n in 0..MAX_SESSIONS as u64 + 10 {
            let at = now + Duration::from_millis(n);
            t.session(
                (Harness::Codex, n),
                &"x".repeat(1000),
                Some(&"/p".repeat(500)),
                at,
            );
        }
        assert_eq!(t.sessions.len(), MAX_SESSIONS);
        assert!(!t.sessions.contains_key(&(Harness::Codex, 0)));
        assert!(t
            .sessions
            .contains_key(&(Harness::Codex, MAX_SESSIONS as u64 + 9)));
        let s = &t.sessions[&(Harness::Codex, 100)];
        assert_eq!(s.id.chars().count(), MAX_NAME_CHARS, "ids are cut");
        // Idle sessions go when a new one comes.
        t.session(
            (Harness::Codex, u64::MAX),
            "new",
            None,
            now + SESSION_IDLE * 2,
        );
        assert_eq!(t.sessions.len(), 1);
        assert_eq!(t.status()[0].sessions, MAX_SESSIONS as u64 + 11);
        // Open calls: the oldest go past MAX_OPEN_CALLS (denied calls
        // never get an after-tool event).
        let s = (Harness::Codex, u64::MAX);
        for n in 0..MAX_OPEN_CALLS + 5 {
            t.judged(s, call(Some(&n.to_string()), "Bash", ""));
        }
        assert_eq!(t.sessions[&s].open.len(), MAX_OPEN_CALLS);
        // Waiting after-tool events: past MAX_WAITING the oldest is
        // concluded at once.
        for n in 0..MAX_WAITING + 3 {
            let c = call(Some(&format!("w{n}")), "Bash", "");
            t.ran(s, c, || waiting(s, c, now + SESSION_IDLE * 3));
        }
        let concluded = t.settle(now + SESSION_IDLE * 2, wall, None);
        assert_eq!(concluded.len(), 3);
        assert_eq!(t.waiting.len(), MAX_WAITING);
        // What a session and a waiting event hold, beside their strings.
        assert!(
            std::mem::size_of::<Session>() <= 160,
            "{}",
            std::mem::size_of::<Session>()
        );
        assert_eq!(std::mem::size_of::<CallKey>(), 32);
        assert!(
            std::mem::size_of::<Waiting>() <= 144,
            "{}",
            std::mem::size_of::<Waiting>()
        );
    }
}
