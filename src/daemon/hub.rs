//! The hub between hooks and socket clients: the pending table (decision
//! points waiting for a client's `decide`) and the subscribers that events
//! and decisions are pushed to.
//!
//! Invariants:
//! - Publishing never blocks a hook: frames go into each subscriber's bounded
//!   queue with `try_send`; a full queue drops the frame and counts it, and
//!   the client is told with a `lagged {dropped}` frame.
//! - The first valid `decide` wins: an entry leaves the table under the lock,
//!   exactly once, whoever ends it (a client, the deadline, shutdown). Later
//!   deciders are told who decided, from a bounded memory of recent outcomes.
//! - When the last subscriber that can decide goes away, every pending event
//!   is released at once to its fallback: nobody waits on a daemon nobody
//!   watches.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use crate::claude::output::supported_verdicts;
use crate::claude::HookEventKind;
use crate::decision::Answer;
use crate::protocol::{ErrorCode, Filter};

/// Frames a subscriber may have queued before new ones are dropped.
pub const SUBSCRIBER_QUEUE: usize = 1024;

/// How many recent outcomes are remembered to tell a late decider who won.
const REMEMBERED_OUTCOMES: usize = 4096;

/// What ended a pending event, as seen by the hook waiting on it.
#[derive(Debug)]
pub enum Resolution {
    /// A client decided.
    Decided {
        /// The answer.
        answer: Answer,
        /// The client's name.
        client: String,
    },
    /// The last subscriber able to decide went away.
    Abandoned,
}

/// The facts about an event that filters look at.
#[derive(Debug, Clone, Copy)]
pub struct EventMeta<'a> {
    /// `hook_event_name`.
    pub kind: &'a str,
    /// Session id.
    pub session: Option<&'a str>,
    /// Tool name.
    pub tool: Option<&'a str>,
    /// Whether it is a decision point.
    pub decision_point: bool,
    /// Whether it waits for a client.
    pub pending: bool,
}

fn matches(filter: &Filter, meta: &EventMeta<'_>) -> bool {
    let any = |list: &[String], value: Option<&str>| {
        list.is_empty() || value.is_some_and(|v| list.iter().any(|x| x == v))
    };
    any(&filter.kinds, Some(meta.kind))
        && any(&filter.sessions, meta.session)
        && any(&filter.tools, meta.tool)
        && (!filter.decision_points || meta.decision_point)
        && (!filter.pending_only || meta.pending)
}

/// A subscriber can decide an event if its filter would show it the event
/// as pending.
fn can_decide(filter: &Filter, meta: &EventMeta<'_>) -> bool {
    matches(
        filter,
        &EventMeta {
            pending: true,
            decision_point: true,
            ..*meta
        },
    )
}

/// A client connection's queue of pushed frames: the subscription's and
/// those of the runs it started share it, so they arrive in order.
#[derive(Debug, Clone)]
pub struct ClientQueue {
    /// The connection's id (from [`Hub::client_id`]).
    pub client_id: u64,
    /// Frames, `\n` included.
    pub queue: mpsc::Sender<Bytes>,
    /// Frames dropped because the queue was full; the connection reports
    /// them with `lagged`.
    pub dropped: Arc<AtomicU64>,
}

impl ClientQueue {
    /// Queues `frame` without waiting: a full queue drops it and counts it.
    /// Returns false when the connection is gone.
    pub fn push(&self, frame: Bytes) -> bool {
        match self.queue.try_send(frame) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Queues `frame`, waiting for room: for the frames a client must not
    /// miss (`run_done`). Call it from a task of its own.
    pub async fn push_surely(&self, frame: Bytes) {
        let _ = self.queue.send(frame).await;
    }
}

struct Subscriber {
    filter: Filter,
    redact: bool,
    queue: mpsc::Sender<Bytes>,
    dropped: Arc<AtomicU64>,
}

struct PendingEntry {
    kind: HookEventKind,
    name: String,
    session: Option<String>,
    tool: Option<String>,
    /// The event record (redacted, as in the log) for `pending` listings,
    /// kept serialized: listing is rare, and a parsed tree costs far more
    /// memory per pending event.
    record: Bytes,
    since: SystemTime,
    received: Instant,
    deadline: Instant,
    resolve: oneshot::Sender<Resolution>,
}

#[derive(Default)]
struct PendingTable {
    waiting: HashMap<Uuid, PendingEntry>,
    /// Recent outcomes (event id → who ended it), oldest first.
    outcomes: VecDeque<(Uuid, String)>,
}

impl PendingTable {
    fn remember(&mut self, id: Uuid, by: String) {
        if self.outcomes.len() == REMEMBERED_OUTCOMES {
            self.outcomes.pop_front();
        }
        self.outcomes.push_back((id, by));
    }

    fn outcome(&self, id: &Uuid) -> Option<&str> {
        self.outcomes
            .iter()
            .rev()
            .find(|(i, _)| i == id)
            .map(|(_, by)| by.as_str())
    }
}

/// Why a `decide` was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecideError {
    /// `not_found`, `already_decided` or `invalid_request`.
    pub code: ErrorCode,
    /// Names the event and, for `already_decided`, who decided.
    pub message: String,
}

/// See the module doc.
#[derive(Default)]
pub struct Hub {
    pending: Mutex<PendingTable>,
    subscribers: Mutex<HashMap<u64, Subscriber>>,
    next_client: AtomicU64,
    subscriber_count: AtomicU64,
    lagged_dropped: AtomicU64,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("pending", &self.pending_count())
            .field("subscribers", &self.subscriber_count())
            .finish()
    }
}

impl Hub {
    /// A fresh id for a client connection.
    pub fn client_id(&self) -> u64 {
        self.next_client.fetch_add(1, Ordering::Relaxed)
    }

    /// Adds or replaces client `id`'s subscription.
    pub fn subscribe(
        &self,
        id: u64,
        filter: Filter,
        redact: bool,
        queue: mpsc::Sender<Bytes>,
        dropped: Arc<AtomicU64>,
    ) {
        let mut subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subs.insert(
            id,
            Subscriber {
                filter,
                redact,
                queue,
                dropped,
            },
        );
        self.subscriber_count
            .store(subs.len() as u64, Ordering::Relaxed);
    }

    /// Removes client `id`'s subscription. If nobody left can decide an
    /// event that is pending, that event is released to its fallback.
    pub fn unsubscribe(&self, id: u64) {
        let subs = {
            let mut subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
            if subs.remove(&id).is_none() {
                return;
            }
            self.subscriber_count
                .store(subs.len() as u64, Ordering::Relaxed);
            subs.values().map(|s| s.filter.clone()).collect::<Vec<_>>()
        };
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let orphaned: Vec<Uuid> = table
            .waiting
            .iter()
            .filter(|(_, e)| {
                let meta = EventMeta {
                    kind: &e.name,
                    session: e.session.as_deref(),
                    tool: e.tool.as_deref(),
                    decision_point: true,
                    pending: true,
                };
                !subs.iter().any(|f| can_decide(f, &meta))
            })
            .map(|(id, _)| *id)
            .collect();
        for event_id in orphaned {
            if let Some(entry) = table.waiting.remove(&event_id) {
                let _ = entry.resolve.send(Resolution::Abandoned);
                table.remember(event_id, "fallback (no client left)".into());
            }
        }
    }

    /// Number of subscribers.
    pub fn subscriber_count(&self) -> u64 {
        self.subscriber_count.load(Ordering::Relaxed)
    }

    /// Frames dropped for slow subscribers since start.
    pub fn lagged_dropped(&self) -> u64 {
        self.lagged_dropped.load(Ordering::Relaxed)
    }

    /// Whether some subscriber would be shown this event as pending.
    pub fn has_decider(&self, meta: &EventMeta<'_>) -> bool {
        if self.subscriber_count() == 0 {
            return false;
        }
        let subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subs.values().any(|s| can_decide(&s.filter, meta))
    }

    /// Pushes an event frame to matching subscribers, except client `skip`
    /// (a run's owner, which gets its run's frames anyway). `frame(redact)`
    /// builds the frame bytes; it is called at most once per flavour.
    pub fn publish(
        &self,
        meta: &EventMeta<'_>,
        skip: Option<u64>,
        frame: impl FnMut(bool) -> Bytes,
    ) {
        self.push_where(skip, frame, |f| matches(f, meta));
    }

    /// Pushes a run frame (`run_start`, `sdk_message`, `run_done`) to the
    /// subscribers that asked for runs (and, if they listed sessions, for
    /// this one), except client `skip`.
    pub fn publish_run(
        &self,
        session: Option<&str>,
        skip: Option<u64>,
        frame: impl FnMut(bool) -> Bytes,
    ) {
        self.push_where(skip, frame, |f| {
            f.runs
                && (f.sessions.is_empty()
                    || session.is_some_and(|s| f.sessions.iter().any(|x| x == s)))
        });
    }

    fn push_where(
        &self,
        skip: Option<u64>,
        mut frame: impl FnMut(bool) -> Bytes,
        wanted: impl Fn(&Filter) -> bool,
    ) {
        if self.subscriber_count() == 0 {
            return;
        }
        let subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        let mut built: [Option<Bytes>; 2] = [None, None];
        for (_, sub) in subs
            .iter()
            .filter(|(id, s)| Some(**id) != skip && wanted(&s.filter))
        {
            let bytes = built[sub.redact as usize]
                .get_or_insert_with(|| frame(sub.redact))
                .clone();
            if sub.queue.try_send(bytes).is_err() {
                sub.dropped.fetch_add(1, Ordering::Relaxed);
                self.lagged_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Puts an event in the pending table; the receiver resolves when a
    /// client decides or the event is abandoned.
    #[allow(clippy::too_many_arguments)]
    pub fn add_pending(
        &self,
        id: Uuid,
        kind: HookEventKind,
        meta: &EventMeta<'_>,
        record: Bytes,
        deadline: Instant,
    ) -> oneshot::Receiver<Resolution> {
        let (resolve, rx) = oneshot::channel();
        let entry = PendingEntry {
            kind,
            name: meta.kind.to_string(),
            session: meta.session.map(str::to_owned),
            tool: meta.tool.map(str::to_owned),
            record,
            since: SystemTime::now(),
            received: Instant::now(),
            deadline,
            resolve,
        };
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .insert(id, entry);
        rx
    }

    /// Ends a pending event without a client decision (timeout, shutdown);
    /// `by` is what a late decider is told.
    pub fn finish(&self, id: Uuid, by: &str) {
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        if table.waiting.remove(&id).is_some() {
            table.remember(id, by.to_string());
        }
    }

    /// A client's decision. The first valid one wins.
    pub fn decide(&self, id: Uuid, answer: Answer, client: &str) -> Result<(), DecideError> {
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let Some(entry) = table.waiting.get(&id) else {
            return Err(match table.outcome(&id) {
                Some(by) => DecideError {
                    code: ErrorCode::AlreadyDecided,
                    message: format!("event {id} was already decided by {by}"),
                },
                None => DecideError {
                    code: ErrorCode::NotFound,
                    message: format!("no pending event {id}"),
                },
            });
        };
        let supported = supported_verdicts(entry.kind);
        if !supported.contains(&answer.verdict) {
            let list: Vec<&str> = supported.iter().map(|v| v.as_str()).collect();
            return Err(DecideError {
                code: ErrorCode::InvalidRequest,
                message: format!(
                    "{} does not support verdict `{}`; use one of: {}",
                    entry.name,
                    answer.verdict,
                    list.join(", ")
                ),
            });
        }
        let entry = table.waiting.remove(&id).expect("checked above");
        table.remember(id, format!("client:{client}"));
        drop(table);
        // The hook may have given up between our check and now; then its
        // fallback stands and this decision was too late.
        entry
            .resolve
            .send(Resolution::Decided {
                answer,
                client: client.to_string(),
            })
            .map_err(|_| DecideError {
                code: ErrorCode::AlreadyDecided,
                message: format!("event {id} reached its deadline before this decision"),
            })
    }

    /// Number of pending events.
    pub fn pending_count(&self) -> usize {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .waiting
            .len()
    }

    /// The pending events, oldest first, for a `pending` request.
    pub fn pending_list(&self) -> Vec<Value> {
        let table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let mut list: Vec<(&Instant, Value)> = table
            .waiting
            .values()
            .map(|e| {
                (
                    &e.received,
                    json!({
                        "event": serde_json::from_slice::<Value>(&e.record).unwrap_or(Value::Null),
                        "since": crate::time::rfc3339(e.since),
                        "waiting_ms": now.duration_since(e.received).as_millis() as u64,
                        "deadline_ms": e.deadline.saturating_duration_since(now).as_millis() as u64,
                        "verdicts": supported_verdicts(e.kind).iter().map(|v| v.as_str()).collect::<Vec<_>>(),
                    }),
                )
            })
            .collect();
        list.sort_by_key(|(t, _)| **t);
        list.into_iter().map(|(_, v)| v).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Verdict;
    use std::time::Duration;

    fn meta(kind: &str) -> EventMeta<'_> {
        EventMeta {
            kind,
            session: Some("s1"),
            tool: Some("Bash"),
            decision_point: true,
            pending: true,
        }
    }

    fn subscriber(
        hub: &Hub,
        filter: Filter,
        capacity: usize,
    ) -> (u64, mpsc::Receiver<Bytes>, Arc<AtomicU64>) {
        let id = hub.client_id();
        let (tx, rx) = mpsc::channel(capacity);
        let dropped = Arc::new(AtomicU64::new(0));
        hub.subscribe(id, filter, false, tx, dropped.clone());
        (id, rx, dropped)
    }

    #[test]
    fn filters() {
        let f = |json: Value| serde_json::from_value::<Filter>(json).unwrap();
        let m = EventMeta {
            kind: "PreToolUse",
            session: Some("s1"),
            tool: Some("Bash"),
            decision_point: true,
            pending: false,
        };
        assert!(matches(&f(json!({})), &m));
        assert!(matches(
            &f(json!({"kinds": ["Stop", "PreToolUse"], "tools": ["Bash"]})),
            &m
        ));
        assert!(!matches(&f(json!({"sessions": ["other"]})), &m));
        assert!(!matches(&f(json!({"pending_only": true})), &m));
        assert!(can_decide(&f(json!({"pending_only": true})), &m));
        let observe = EventMeta {
            tool: None,
            decision_point: false,
            ..m
        };
        assert!(!matches(&f(json!({"decision_points": true})), &observe));
        assert!(!matches(&f(json!({"tools": ["Bash"]})), &observe));
    }

    #[tokio::test]
    async fn first_decide_wins_and_late_deciders_learn_who() {
        let hub = Hub::default();
        let (_id, _rx, _) = subscriber(&hub, Filter::default(), 8);
        let event = Uuid::now_v7();
        let deadline = Instant::now() + Duration::from_secs(5);
        let rx = hub.add_pending(
            event,
            HookEventKind::PreToolUse,
            &meta("PreToolUse"),
            Bytes::from_static(b"{}"),
            deadline,
        );
        assert_eq!(hub.pending_list().len(), 1);
        let bad = hub.decide(event, Answer::new(Verdict::NoOpinion, None), "a");
        assert!(bad.is_ok(), "none is supported everywhere");
        let Resolution::Decided { client, .. } = rx.await.unwrap() else {
            panic!()
        };
        assert_eq!(client, "a");
        let late = hub
            .decide(event, Answer::new(Verdict::Deny, None), "b")
            .unwrap_err();
        assert_eq!(late.code, ErrorCode::AlreadyDecided);
        assert!(late.message.contains("client:a"), "{}", late.message);
        let unknown = hub
            .decide(Uuid::now_v7(), Answer::default(), "b")
            .unwrap_err();
        assert_eq!(unknown.code, ErrorCode::NotFound);
    }

    #[test]
    fn unsupported_verdicts_are_refused_and_the_event_stays_pending() {
        let hub = Hub::default();
        let event = Uuid::now_v7();
        let _rx = hub.add_pending(
            event,
            HookEventKind::Stop,
            &meta("Stop"),
            Bytes::from_static(b"{}"),
            Instant::now(),
        );
        let err = hub
            .decide(event, Answer::new(Verdict::Ask, None), "a")
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
        assert!(err.message.contains("deny"), "{}", err.message);
        assert_eq!(hub.pending_count(), 1);
    }

    #[tokio::test]
    async fn last_decider_leaving_releases_pending_events() {
        let hub = Hub::default();
        let (a, _rxa, _) = subscriber(&hub, Filter::default(), 8);
        let (b, _rxb, _) = subscriber(
            &hub,
            Filter {
                kinds: vec!["Stop".into()],
                ..Filter::default()
            },
            8,
        );
        let event = Uuid::now_v7();
        let rx = hub.add_pending(
            event,
            HookEventKind::PreToolUse,
            &meta("PreToolUse"),
            Bytes::from_static(b"{}"),
            Instant::now(),
        );
        hub.unsubscribe(b);
        assert_eq!(hub.pending_count(), 1, "a can still decide it");
        hub.unsubscribe(a);
        assert!(matches!(rx.await.unwrap(), Resolution::Abandoned));
        assert_eq!(hub.pending_count(), 0);
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_blocking() {
        let hub = Hub::default();
        let (_id, mut rx, dropped) = subscriber(&hub, Filter::default(), 2);
        for _ in 0..5 {
            hub.publish(&meta("PreToolUse"), None, |_| Bytes::from_static(b"{}\n"));
        }
        assert_eq!(dropped.load(Ordering::Relaxed), 3);
        assert_eq!(hub.lagged_dropped(), 3);
        assert!(rx.try_recv().is_ok() && rx.try_recv().is_ok() && rx.try_recv().is_err());
    }
}
