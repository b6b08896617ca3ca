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
//! - A pending PermissionRequest of an attended Claude Code session is also
//!   watched as a *dialog*: the person can answer it in Claude Code first,
//!   and the events that show it (the same call's PostToolUse, the turn's
//!   end) end it as answered in the terminal ([`Hub::answered_in_terminal`]).
//! - A [`PendingObserver`] (the HTTP face's one-time links) hears of every
//!   event added to and ended in the table, under the table's lock, so it
//!   never sees them out of order; when it [decides](PendingObserver::decides)
//!   it counts as a subscriber that can decide every event.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use uuid::Uuid;

use crate::agent::claude::HookEventKind;
use crate::agent::Agent;
use crate::decision::Answer;
use crate::protocol::approval::{SHORT_ID_ALPHABET, SHORT_ID_LEN};
use crate::protocol::{
    AskedBy, ErrorCode, EventRef, Filter, PendingInfo, PendingItem, Remember, Suggestion,
};

use crate::held::Held;

/// Frames a client may have queued before new ones are dropped (the byte
/// budget, `[clients] queue_bytes`, usually binds first).
pub const CLIENT_QUEUE_FRAMES: usize = 1024;

/// How many recent outcomes are remembered to tell a late decider who won.
const REMEMBERED_OUTCOMES: usize = 4096;

/// Who ended the events the daemon's stopping ended, as a late decider is
/// told.
const SHUTDOWN: &str = "shutdown";

/// What ended a pending event, as seen by the hook waiting on it.
#[derive(Debug)]
pub enum Resolution {
    /// A client decided (boxed: every pending event's channel has room
    /// for a resolution while its hook waits).
    Decided(Box<ClientDecision>),
    /// The last subscriber able to decide went away, or the daemon is
    /// stopping.
    Abandoned,
    /// The person answered in Claude Code's own permission dialog (see
    /// [`Hub::watch_dialog`]).
    Terminal,
    /// Nobody decided by the time the event may wait (see
    /// [`Hub::expire_timeouts`]).
    TimedOut,
}

/// A client's decision on a pending event.
#[derive(Debug)]
pub struct ClientDecision {
    /// The answer.
    pub answer: Answer,
    /// The client's name.
    pub client: String,
    /// How the answer was remembered, and as which rule, when it was
    /// (`session`, `always`).
    pub remembered: Option<(Remember, String)>,
}

/// A PermissionRequest held for clients while Claude Code shows its own
/// dialog for the same tool call, in an attended session.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Dialog {
    session: String,
    /// [`tool_call_key`] of the call the dialog asks about.
    tool_call: u64,
}

/// A tool call's identity within a session: its tool name and input (JSON
/// with sorted keys, so the same input hashes the same whichever event
/// carries it).
pub fn tool_call_key(tool: &str, tool_input: &Value) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    tool.hash(&mut hasher);
    tool_input.to_string().hash(&mut hasher);
    hasher.finish()
}

/// What a [`PendingObserver`] hears of an event added to the table.
#[derive(Debug, Clone, Copy)]
pub struct PendingAdded<'a> {
    /// The event.
    pub id: Uuid,
    /// Its short id.
    pub short_id: &'a str,
    /// The facts filters look at.
    pub meta: &'a EventMeta<'a>,
    /// Its record (redacted, as in the log).
    pub record: &'a Bytes,
    /// When the wait ends at the latest.
    pub deadline: Instant,
    /// When its timeout ends it (at or before `deadline`).
    pub times_out: Instant,
    /// The verdicts a decision may give.
    pub verdicts: &'a [crate::decision::Verdict],
    /// The rules that asked, and why.
    pub asked_by: &'a AskedBy,
    /// The rules its answer may be remembered as, narrowest first.
    pub suggestions: &'a [Suggestion],
}

/// Follows the pending table from outside the hub (the HTTP face's
/// one-time links). Called under the table's lock: it must be quick, and
/// must not call back into the hub.
pub trait PendingObserver: Send + Sync + std::fmt::Debug {
    /// Whether a person can decide through it (pushes are configured): then
    /// asks are held even with no socket client subscribed.
    fn decides(&self) -> bool;
    /// Event `added` waits now.
    fn added(&self, added: &PendingAdded<'_>);
    /// Event `id` waits no more; `by` ended it (`client:NAME`, `timeout`, …).
    fn ended(&self, id: Uuid, by: &str);
    /// Whether it can decide an ask escalated to the team (`escalate =
    /// "team"`) now: the team plane, while its database is reachable.
    /// Asked live, whenever such an ask is routed.
    fn decides_escalated(&self) -> bool {
        false
    }
}

/// The facts about an event that filters look at.
#[derive(Debug, Clone, Copy)]
pub struct EventMeta<'a> {
    /// `hook_event_name`.
    pub kind: &'a str,
    /// The agent that fired it.
    pub agent: Agent,
    /// Session id.
    pub session: Option<&'a str>,
    /// Tool name.
    pub tool: Option<&'a str>,
    /// Whether it is a decision point.
    pub decision_point: bool,
    /// Whether it waits for a client.
    pub pending: bool,
}

/// An event's names, shared between the pending table's entry and the
/// hook that waits: each waiting hook would otherwise hold two copies.
/// One allocation for the three, two words plus their lengths: every
/// pending event holds this twice.
#[derive(Debug, Clone)]
pub struct EventNames {
    /// `hook_event_name`, then the session id, then the tool name.
    text: Arc<str>,
    /// Where the name ends and the session id ends in `text`.
    ends: [u32; 2],
    /// Whether there is a session id (bit 0) and a tool name (bit 1).
    present: u8,
}

impl EventNames {
    /// The names `meta` shows.
    pub fn of(meta: &EventMeta<'_>) -> EventNames {
        let (session, tool) = (meta.session.unwrap_or(""), meta.tool.unwrap_or(""));
        let mut text = String::with_capacity(meta.kind.len() + session.len() + tool.len());
        text.push_str(meta.kind);
        text.push_str(session);
        text.push_str(tool);
        let end = |n: usize| u32::try_from(n).expect("an event's names are less than 4 GiB");
        EventNames {
            ends: [end(meta.kind.len()), end(meta.kind.len() + session.len())],
            text: text.into(),
            present: u8::from(meta.session.is_some()) | (u8::from(meta.tool.is_some()) << 1),
        }
    }

    /// `hook_event_name`, in its agent's words.
    pub fn name(&self) -> &str {
        &self.text[..self.ends[0] as usize]
    }

    /// Session id.
    pub fn session(&self) -> Option<&str> {
        (self.present & 1 != 0).then(|| &self.text[self.ends[0] as usize..self.ends[1] as usize])
    }

    /// Tool name.
    pub fn tool(&self) -> Option<&str> {
        (self.present & 2 != 0).then(|| &self.text[self.ends[1] as usize..])
    }
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

/// How a pushed frame fared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pushed {
    /// In the queue.
    Queued,
    /// The queue was full (by frames or by bytes): dropped and counted.
    Dropped,
    /// The connection is gone.
    Closed,
}

/// A client connection's queue of pushed frames: the subscription's and
/// those of the runs it started share it, so they arrive in order.
///
/// Bounded twice: by frames (the channel's capacity) and by bytes
/// (`max_bytes`, `[clients] queue_bytes`), because frames carry hook inputs
/// of up to the frame cap: a count alone lets one stuck client hold
/// gigabytes. A frame is always accepted into an empty queue, so an event
/// larger than the byte budget still reaches a client that keeps up.
#[derive(Debug, Clone)]
pub struct ClientQueue {
    /// The connection's id (from [`Hub::client_id`]).
    pub client_id: u64,
    queue: mpsc::Sender<Bytes>,
    /// Frames dropped because the queue was full; the connection reports
    /// them with `lagged`.
    pub dropped: Arc<AtomicU64>,
    /// Bytes queued now (added on push, taken off by [`PushReceiver`]).
    queued_bytes: Arc<AtomicUsize>,
    max_bytes: usize,
}

/// The receiving end of a [`ClientQueue`], read by the connection's task.
#[derive(Debug)]
pub struct PushReceiver {
    queue: mpsc::Receiver<Bytes>,
    queued_bytes: Arc<AtomicUsize>,
}

impl ClientQueue {
    /// A queue for client `client_id` holding at most `max_frames` frames
    /// and (but for a lone frame) `max_bytes` bytes.
    pub fn channel(
        client_id: u64,
        max_frames: usize,
        max_bytes: usize,
    ) -> (ClientQueue, PushReceiver) {
        let (tx, rx) = mpsc::channel(max_frames);
        let queued_bytes = Arc::new(AtomicUsize::new(0));
        let queue = ClientQueue {
            client_id,
            queue: tx,
            dropped: Arc::new(AtomicU64::new(0)),
            queued_bytes: queued_bytes.clone(),
            max_bytes,
        };
        (
            queue,
            PushReceiver {
                queue: rx,
                queued_bytes,
            },
        )
    }

    /// Queues `frame` without waiting: a full queue drops it and counts it.
    pub fn push(&self, frame: Bytes) -> Pushed {
        let len = frame.len();
        // Reserve first, then check: concurrent pushers each see the
        // others' reservations, so the budget is never overrun.
        let before = self.queued_bytes.fetch_add(len, Ordering::Relaxed);
        if before > 0 && before + len > self.max_bytes {
            self.queued_bytes.fetch_sub(len, Ordering::Relaxed);
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return Pushed::Dropped;
        }
        match self.queue.try_send(frame) {
            Ok(()) => Pushed::Queued,
            Err(e) => {
                self.queued_bytes.fetch_sub(len, Ordering::Relaxed);
                match e {
                    mpsc::error::TrySendError::Full(_) => {
                        self.dropped.fetch_add(1, Ordering::Relaxed);
                        Pushed::Dropped
                    }
                    mpsc::error::TrySendError::Closed(_) => Pushed::Closed,
                }
            }
        }
    }

    /// Queues `frame`, waiting for room (ignoring the byte budget): for the
    /// frames a client must not miss (`run_done`). Call it from a task of
    /// its own.
    pub async fn push_surely(&self, frame: Bytes) {
        let len = frame.len();
        self.queued_bytes.fetch_add(len, Ordering::Relaxed);
        if self.queue.send(frame).await.is_err() {
            self.queued_bytes.fetch_sub(len, Ordering::Relaxed);
        }
    }

    /// Bytes queued now.
    pub fn queued_bytes(&self) -> usize {
        self.queued_bytes.load(Ordering::Relaxed)
    }
}

impl PushReceiver {
    /// The next frame; `None` once every sender is gone.
    pub async fn recv(&mut self) -> Option<Bytes> {
        let frame = self.queue.recv().await?;
        self.queued_bytes.fetch_sub(frame.len(), Ordering::Relaxed);
        Some(frame)
    }

    /// The next frame if one is queued.
    pub fn try_recv(&mut self) -> Option<Bytes> {
        let frame = self.queue.try_recv().ok()?;
        self.queued_bytes.fetch_sub(frame.len(), Ordering::Relaxed);
        Some(frame)
    }
}

struct Subscriber {
    filter: Filter,
    redact: bool,
    queue: ClientQueue,
}

struct PendingEntry {
    kind: HookEventKind,
    short_id: ShortId,
    agent: Agent,
    /// Shared with the waiting hook.
    names: EventNames,
    /// Escalated to the team: the approvals it needs (every `unsubscribe`
    /// reads this of every waiting event).
    team_approvals: Option<u32>,
    /// The event record (redacted, as in the log), its suggestions and
    /// what asked for it, for `pending` listings and `decide`: kept
    /// serialized and deflated, as both are rare, and a parsed tree costs
    /// far more memory per pending event, the log line and the suggestions
    /// themselves over twice as much ([`crate::held`]).
    held: Held,
    since: SystemTime,
    received: Instant,
    deadline: Instant,
    /// When the event stops waiting: its deadline, or sooner the
    /// configured timeout (in [`PendingTable::timeouts`]).
    times_out: tokio::time::Instant,
    resolve: oneshot::Sender<Resolution>,
}

#[derive(Default)]
struct PendingTable {
    /// See [`Hub::observe_as`]: each observer with its slot's name.
    observers: Vec<(&'static str, Arc<dyn PendingObserver>)>,
    /// Boxed: the table's slots are sized for its capacity, up to twice
    /// the entries; a slot is then a pointer, not a whole entry.
    waiting: HashMap<Uuid, Box<PendingEntry>>,
    /// Short id → event id, for the events waiting now.
    short_ids: HashMap<ShortId, Uuid>,
    /// Recent outcomes (event id, its short id → who ended it), oldest
    /// first.
    outcomes: VecDeque<(Uuid, String, String)>,
    /// The waiting events by when they time out, earliest first: one timer
    /// for them all ([`Hub::expire_timeouts`]), not one per waiting hook.
    timeouts: BTreeSet<(tokio::time::Instant, Uuid)>,
    /// The daemon is stopping: every event was ended, and one added now
    /// ends at once ([`Hub::expire_timeouts`]).
    closed: bool,
}

impl PendingTable {
    /// Takes event `id` out of the table (and frees its short id), noting
    /// who ended it.
    fn end(&mut self, id: Uuid, by: String) -> Option<PendingEntry> {
        let entry = *self.waiting.remove(&id)?;
        self.short_ids.remove(&entry.short_id);
        self.timeouts.remove(&(entry.times_out, id));
        for (_, observer) in &self.observers {
            observer.ended(id, &by);
        }
        if self.outcomes.len() == REMEMBERED_OUTCOMES {
            self.outcomes.pop_front();
        }
        self.outcomes
            .push_back((id, entry.short_id.as_str().to_string(), by));
        Some(entry)
    }

    /// The event `event` names, if it waits now.
    fn find(&self, event: &EventRef) -> Option<Uuid> {
        match event {
            EventRef::Id(id) => self.waiting.contains_key(id).then_some(*id),
            EventRef::Short(short) => {
                ShortId::of(short).and_then(|short| self.short_ids.get(&short).copied())
            }
        }
    }

    /// Who ended the event `event` names, if it ended recently. A short
    /// id may have been reused since: the latest holder counts.
    fn outcome(&self, event: &EventRef) -> Option<&str> {
        self.outcomes
            .iter()
            .rev()
            .find(|(id, short, _)| match event {
                EventRef::Id(i) => i == id,
                EventRef::Short(s) => s == short,
            })
            .map(|(_, _, by)| by.as_str())
    }
}

/// A waiting event's short id as the table keeps it: its letters inline,
/// not a `String` (each waiting event has two: its entry's and the
/// index's key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ShortId([u8; SHORT_ID_LEN]);

impl ShortId {
    /// `text`, if it is as long as a short id (its letters are not
    /// checked: one that is not a short id is found nowhere).
    fn of(text: &str) -> Option<ShortId> {
        text.as_bytes().try_into().ok().map(ShortId)
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.0).expect("short ids are ASCII letters")
    }
}

/// A short id not `taken`: [`SHORT_ID_LEN`] letters of
/// [`SHORT_ID_ALPHABET`], drawn from `random` (each `u64` gives one id),
/// drawing again while the id is taken.
pub fn short_id(mut random: impl FnMut() -> u64, taken: impl Fn(&str) -> bool) -> String {
    loop {
        let mut bits = random();
        let id: String = (0..SHORT_ID_LEN)
            .map(|_| {
                let letter = SHORT_ID_ALPHABET[(bits % SHORT_ID_ALPHABET.len() as u64) as usize];
                bits /= SHORT_ID_ALPHABET.len() as u64;
                letter as char
            })
            .collect();
        if !taken(&id) {
            return id;
        }
    }
}

/// 64 random bits (from a fresh v7 uuid's random part).
pub fn random_u64() -> u64 {
    let bytes = crate::event::new_id().into_bytes();
    u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"))
}

/// What a `decide` may look at before it decides: the pending event, and
/// what its answer could be remembered as.
#[derive(Debug, Clone)]
pub struct PendingView {
    /// The event.
    pub id: Uuid,
    /// Its session, if it has one.
    pub session: Option<String>,
    /// Its suggestions.
    pub suggestions: Vec<Suggestion>,
    /// Its record (redacted, as in the log).
    pub record: Bytes,
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
    /// Pending events whose question Claude Code also shows in its own
    /// dialog, by event id: what ends them from the terminal's side.
    dialogs: Mutex<HashMap<Uuid, Dialog>>,
    dialog_count: AtomicUsize,
    subscribers: Mutex<HashMap<u64, Subscriber>>,
    next_client: AtomicU64,
    subscriber_count: AtomicU64,
    lagged_dropped: AtomicU64,
    /// Whether some observer decides (read without the table's lock).
    observer_decides: std::sync::atomic::AtomicBool,
    /// Whether an observer may decide escalated asks (then it is asked,
    /// under the table's lock, whether it can now).
    observer_escalates: std::sync::atomic::AtomicBool,
    /// Told when an event that times out before every other waits now.
    earliest_timeout: tokio::sync::Notify,
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
    /// Makes `observer` hear of every event added to and ended in the
    /// pending table from now on (the HTTP face's slot; see
    /// [`Hub::observe_as`]).
    pub fn observe(&self, observer: Arc<dyn PendingObserver>) {
        self.observe_as("http", observer);
    }

    /// Makes `observer` hear of every event added to and ended in the
    /// pending table from now on, in place of the one in `slot` (the HTTP
    /// face's links, the team plane's approvals).
    pub fn observe_as(&self, slot: &'static str, observer: Arc<dyn PendingObserver>) {
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        table.observers.retain(|(s, _)| *s != slot);
        table.observers.push((slot, observer));
        let decides = table.observers.iter().any(|(_, o)| o.decides());
        self.observer_decides.store(decides, Ordering::Relaxed);
        self.observer_escalates.store(true, Ordering::Relaxed);
    }

    /// Whether an observer counts as a client that can decide anything.
    fn observer_decides(&self) -> bool {
        self.observer_decides.load(Ordering::Relaxed)
    }

    /// Whether an observer can decide an ask escalated to the team now.
    pub fn team_decides(&self) -> bool {
        if !self.observer_escalates.load(Ordering::Relaxed) {
            return false;
        }
        let table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        table.observers.iter().any(|(_, o)| o.decides_escalated())
    }

    /// A fresh id for a client connection.
    pub fn client_id(&self) -> u64 {
        self.next_client.fetch_add(1, Ordering::Relaxed)
    }

    /// Adds or replaces the subscription of the client whose queue is
    /// `queue`.
    pub fn subscribe(&self, filter: Filter, redact: bool, queue: ClientQueue) {
        let mut subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subs.insert(
            queue.client_id,
            Subscriber {
                filter,
                redact,
                queue,
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
        if self.observer_decides() {
            return;
        }
        let team = self.team_decides();
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let orphaned: Vec<Uuid> = table
            .waiting
            .iter()
            .filter(|(_, e)| !(team && e.team_approvals.is_some()))
            .filter(|(_, e)| {
                let meta = EventMeta {
                    kind: e.names.name(),
                    agent: e.agent,
                    session: e.names.session(),
                    tool: e.names.tool(),
                    decision_point: true,
                    pending: true,
                };
                !subs.iter().any(|f| can_decide(f, &meta))
            })
            .map(|(id, _)| *id)
            .collect();
        for event_id in orphaned {
            if let Some(entry) = table.end(event_id, "fallback (no client left)".into()) {
                let _ = entry.resolve.send(Resolution::Abandoned);
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

    /// Bytes waiting in subscribers' queues now.
    pub fn queued_bytes(&self) -> usize {
        if self.subscriber_count() == 0 {
            return 0;
        }
        let subs = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subs.values().map(|s| s.queue.queued_bytes()).sum()
    }

    /// Whether some subscriber would be shown this event as pending.
    pub fn has_decider(&self, meta: &EventMeta<'_>) -> bool {
        if self.observer_decides() {
            return true;
        }
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

    /// Pushes `frame` to every subscriber (`grant` frames).
    pub fn push_to_all(&self, frame: Bytes) {
        self.push_where(None, |_| frame.clone(), |_| true);
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
            if sub.queue.push(bytes) == Pushed::Dropped {
                self.lagged_dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Puts an event in the pending table with a fresh short id; the
    /// receiver resolves when a client decides or the event is abandoned.
    /// Returns what clients are told about it with the pushed event.
    #[allow(clippy::too_many_arguments)]
    pub fn add_pending(
        &self,
        id: Uuid,
        kind: HookEventKind,
        meta: &EventMeta<'_>,
        names: EventNames,
        record: Bytes,
        deadline: Instant,
        times_out: Instant,
        suggestions: Vec<Suggestion>,
        asked_by: AskedBy,
    ) -> (oneshot::Receiver<Resolution>, PendingInfo) {
        let (resolve, rx) = oneshot::channel();
        // Before the lock: deflating is the slowest step here.
        let held = Held::of(&record, &suggestions, &asked_by);
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let short = short_id(random_u64, |s| {
            ShortId::of(s).is_some_and(|s| table.short_ids.contains_key(&s))
        });
        let kept_short = ShortId::of(&short).expect("short ids are SHORT_ID_LEN letters");
        let info = PendingInfo {
            short_id: short,
            deadline_ms: deadline
                .saturating_duration_since(Instant::now())
                .as_millis() as u64,
            verdicts: meta.agent.decidable_verdicts(kind).to_vec(),
            suggestions,
            asked_by,
        };
        let entry = PendingEntry {
            kind,
            short_id: kept_short,
            agent: meta.agent,
            names,
            team_approvals: info.asked_by.team_approvals,
            held,
            since: SystemTime::now(),
            received: Instant::now(),
            deadline,
            times_out: times_out.into(),
            resolve,
        };
        for (_, observer) in &table.observers {
            observer.added(&PendingAdded {
                id,
                short_id: &info.short_id,
                meta,
                record: &record,
                deadline,
                times_out,
                verdicts: &info.verdicts,
                asked_by: &info.asked_by,
                suggestions: &info.suggestions,
            });
        }
        table.short_ids.insert(kept_short, id);
        let earliest = table
            .timeouts
            .first()
            .is_none_or(|&(first, _)| entry.times_out < first);
        table.timeouts.insert((entry.times_out, id));
        table.waiting.insert(id, Box::new(entry));
        if table.closed {
            if let Some(entry) = table.end(id, SHUTDOWN.to_string()) {
                let _ = entry.resolve.send(Resolution::Abandoned);
            }
        }
        drop(table);
        if earliest {
            self.earliest_timeout.notify_one();
        }
        (rx, info)
    }

    /// Ends each waiting event when it times out (telling its hook
    /// [`Resolution::TimedOut`]), until `shutdown`. One timer, set to the
    /// earliest timeout, for every waiting event.
    ///
    /// At `shutdown`, ends every waiting event, and every one added later,
    /// as `shutdown` (telling its hook [`Resolution::Abandoned`]: its
    /// fallback applies): a waiting hook does not watch the shutdown
    /// itself (a second waker per pending decision).
    pub async fn expire_timeouts(&self, shutdown: tokio_util::sync::CancellationToken) {
        loop {
            let earliest = self
                .pending
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .timeouts
                .first()
                .map(|&(at, _)| at);
            let due = async {
                match earliest {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = shutdown.cancelled() => return self.close(),
                _ = self.earliest_timeout.notified() => continue,
                _ = due => {}
            }
            let now = tokio::time::Instant::now();
            let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
            while let Some(&(at, id)) = table.timeouts.first() {
                if at > now {
                    break;
                }
                table.timeouts.pop_first();
                if let Some(entry) = table.end(id, "timeout".to_string()) {
                    let _ = entry.resolve.send(Resolution::TimedOut);
                }
            }
        }
    }

    /// Ends every waiting event, and every event added from now on, as
    /// [`SHUTDOWN`]: their hooks get their fallback.
    fn close(&self) {
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        table.closed = true;
        let waiting: Vec<Uuid> = table.waiting.keys().copied().collect();
        for id in waiting {
            if let Some(entry) = table.end(id, SHUTDOWN.to_string()) {
                let _ = entry.resolve.send(Resolution::Abandoned);
            }
        }
    }

    /// Ends a pending event without a client decision (timeout, shutdown);
    /// `by` is what a late decider is told.
    pub fn finish(&self, id: Uuid, by: &str) {
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        table.end(id, by.to_string());
    }

    /// The pending event `event` names, for a `decide` to check what it
    /// will remember before it decides.
    pub fn view(&self, event: &EventRef) -> Result<PendingView, DecideError> {
        let table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let id = table.find(event).ok_or_else(|| gone(&table, event))?;
        let entry = &table.waiting[&id];
        let held = entry.held.open();
        Ok(PendingView {
            id,
            session: entry.names.session().map(str::to_owned),
            suggestions: held.suggestions,
            record: held.record.into(),
        })
    }

    /// A client's decision. The first valid one wins.
    pub fn decide(
        &self,
        event: &EventRef,
        answer: Answer,
        client: &str,
        remembered: Option<(Remember, String)>,
    ) -> Result<(), DecideError> {
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let Some(id) = table.find(event) else {
            return Err(gone(&table, event));
        };
        let entry = &table.waiting[&id];
        let supported = entry.agent.decidable_verdicts(entry.kind);
        if !supported.contains(&answer.verdict) {
            let list: Vec<&str> = supported.iter().map(|v| v.as_str()).collect();
            return Err(DecideError {
                code: ErrorCode::InvalidRequest,
                message: format!(
                    "{}'s {} does not support verdict `{}`; use one of: {}",
                    entry.agent,
                    entry.names.name(),
                    answer.verdict,
                    list.join(", ")
                ),
            });
        }
        let entry = table
            .end(id, format!("client:{client}"))
            .expect("checked above");
        drop(table);
        // The hook may have given up between our check and now; then its
        // fallback stands and this decision was too late.
        entry
            .resolve
            .send(Resolution::Decided(Box::new(ClientDecision {
                answer,
                client: client.to_string(),
                remembered,
            })))
            .map_err(|_| DecideError {
                code: ErrorCode::AlreadyDecided,
                message: format!("event {id} reached its deadline before this decision"),
            })
    }

    /// Pending event `id` is a PermissionRequest for tool call `tool_call`
    /// of attended `session`: Claude Code shows its dialog meanwhile. When
    /// the person answers there, [`Hub::answered_in_terminal`] ends it.
    pub fn watch_dialog(&self, id: Uuid, session: &str, tool_call: u64) {
        let mut dialogs = self.dialogs.lock().unwrap_or_else(|e| e.into_inner());
        dialogs.insert(
            id,
            Dialog {
                session: session.to_string(),
                tool_call,
            },
        );
        self.dialog_count.store(dialogs.len(), Ordering::Relaxed);
    }

    /// Forgets event `id`'s dialog (its wait is over).
    pub fn unwatch_dialog(&self, id: Uuid) {
        if self.dialog_count.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut dialogs = self.dialogs.lock().unwrap_or_else(|e| e.into_inner());
        dialogs.remove(&id);
        self.dialog_count.store(dialogs.len(), Ordering::Relaxed);
    }

    /// An event of `session` shows that the person answered Claude Code's
    /// dialog: tool call `tool_call` ran (PostToolUse), or, with `None`, the
    /// turn is over (Stop, a new prompt). The pending events waiting on
    /// those dialogs end as answered in the terminal; returns how many.
    /// Costs one atomic load while no dialog is watched.
    pub fn answered_in_terminal(&self, session: &str, tool_call: Option<u64>) -> usize {
        if self.dialog_count.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        let ended: Vec<Uuid> = {
            let mut dialogs = self.dialogs.lock().unwrap_or_else(|e| e.into_inner());
            let ended: Vec<Uuid> = dialogs
                .iter()
                .filter(|(_, d)| {
                    d.session == session && tool_call.is_none_or(|call| call == d.tool_call)
                })
                .map(|(id, _)| *id)
                .collect();
            for id in &ended {
                dialogs.remove(id);
            }
            self.dialog_count.store(dialogs.len(), Ordering::Relaxed);
            ended
        };
        let mut table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        ended
            .into_iter()
            .filter(
                |id| match table.end(*id, "terminal (answered in Claude Code)".into()) {
                    Some(entry) => entry.resolve.send(Resolution::Terminal).is_ok(),
                    None => false,
                },
            )
            .count()
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
    pub fn pending_list(&self) -> Vec<PendingItem> {
        let table = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let mut list: Vec<(&Instant, PendingItem)> = table
            .waiting
            .values()
            .map(|e| {
                let held = e.held.open();
                (
                    &e.received,
                    PendingItem {
                        event: serde_json::from_slice::<Value>(&held.record).unwrap_or(Value::Null),
                        since: crate::time::rfc3339(e.since),
                        waiting_ms: now.duration_since(e.received).as_millis() as u64,
                        agent: Some(e.agent.as_str().to_string()),
                        info: PendingInfo {
                            short_id: e.short_id.as_str().to_string(),
                            deadline_ms: e.deadline.saturating_duration_since(now).as_millis()
                                as u64,
                            verdicts: e.agent.decidable_verdicts(e.kind).to_vec(),
                            suggestions: held.suggestions,
                            asked_by: held.asked_by,
                        },
                    },
                )
            })
            .collect();
        list.sort_by_key(|(t, _)| **t);
        list.into_iter().map(|(_, v)| v).collect()
    }
}

/// The error for a `decide` of an event that does not wait (any more).
fn gone(table: &PendingTable, event: &EventRef) -> DecideError {
    match table.outcome(event) {
        Some(by) => DecideError {
            code: ErrorCode::AlreadyDecided,
            message: format!("event {event} was already decided by {by}"),
        },
        None => DecideError {
            code: ErrorCode::NotFound,
            message: format!("no pending event {event}"),
        },
    }
}

/// The agent-SDK run a hook came from (see [`crate::runs`]).
#[derive(Debug, Clone)]
pub struct RunLink {
    /// The run's id, recorded on its events and decisions.
    pub run_id: Arc<str>,
    /// The connection that started the run: it gets every frame of its
    /// run, whatever its subscription.
    pub owner: ClientQueue,
    /// Cancelled when the run ends: its events stop waiting for clients.
    pub ended: tokio_util::sync::CancellationToken,
    /// The adapter registered `canUseTool`: the SDK's PermissionRequest
    /// hook is then a copy of the `canUseTool` call beside it.
    pub can_use_tool: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Verdict;
    use serde_json::json;
    use std::time::Duration;

    /// A hub with its table's timer running until the token is cancelled.
    fn timed_hub() -> (
        Arc<Hub>,
        tokio_util::sync::CancellationToken,
        tokio::task::JoinHandle<()>,
    ) {
        let hub = Arc::new(Hub::default());
        let shutdown = tokio_util::sync::CancellationToken::new();
        let timer = tokio::spawn({
            let (hub, shutdown) = (hub.clone(), shutdown.clone());
            async move { hub.expire_timeouts(shutdown).await }
        });
        (hub, shutdown, timer)
    }

    /// A pending event of `kind` with no record to speak of, no
    /// suggestions and nobody asking: what most of these tests add.
    fn add_plain(
        hub: &Hub,
        id: Uuid,
        kind: HookEventKind,
        deadline: Instant,
    ) -> (oneshot::Receiver<Resolution>, PendingInfo) {
        hub.add_pending(
            id,
            kind,
            &meta(kind.as_str()),
            EventNames::of(&meta(kind.as_str())),
            Bytes::from_static(b"{}"),
            deadline,
            deadline,
            Vec::new(),
            AskedBy::default(),
        )
    }

    fn meta(kind: &str) -> EventMeta<'_> {
        EventMeta {
            kind,
            agent: Agent::ClaudeCode,
            session: Some("s1"),
            tool: Some("Bash"),
            decision_point: true,
            pending: true,
        }
    }

    /// An event's names come back as they went in, each present or not,
    /// empty or not.
    #[test]
    fn event_names_keep_each_name() {
        for (session, tool) in [
            (Some("s1"), Some("Bash")),
            (None, Some("Bash")),
            (Some("s1"), None),
            (None, None),
            (Some(""), Some("")),
            (Some("é🦀"), Some("mcp__x")),
        ] {
            let names = EventNames::of(&EventMeta {
                session,
                tool,
                ..meta("PreToolUse")
            });
            assert_eq!(names.name(), "PreToolUse");
            assert_eq!(names.session(), session);
            assert_eq!(names.tool(), tool);
        }
        let names = EventNames::of(&EventMeta {
            kind: "",
            ..meta("")
        });
        assert_eq!(
            (names.name(), names.session(), names.tool()),
            ("", Some("s1"), Some("Bash"))
        );
    }

    /// One timer for the whole table: each waiting event is ended when it
    /// times out, in order, and one decided before never is.
    #[tokio::test(start_paused = true)]
    async fn the_table_times_its_events_out_in_order() {
        let (hub, shutdown, timer) = timed_hub();
        let add = |after: u64| {
            let id = Uuid::now_v7();
            let at = Instant::now() + Duration::from_secs(after);
            let (rx, _) = add_plain(&hub, id, HookEventKind::PreToolUse, at);
            (id, rx)
        };
        let (_, mut late) = add(30);
        let (_, mut early) = add(10);
        let (decided, mut answered) = add(20);
        hub.decide(
            &EventRef::from(decided),
            Answer {
                verdict: Verdict::Allow,
                ..Answer::default()
            },
            "c",
            None,
        )
        .unwrap();
        assert!(matches!(answered.try_recv(), Ok(Resolution::Decided(_))));
        // (Margins: the paused clock started a moment before the std
        // instants above were read.)
        tokio::time::advance(Duration::from_millis(10_050)).await;
        assert!(matches!((&mut early).await, Ok(Resolution::TimedOut)));
        assert!(late.try_recv().is_err(), "timed out early");
        assert_eq!(hub.pending_count(), 1);
        tokio::time::advance(Duration::from_secs(20)).await;
        assert!(matches!((&mut late).await, Ok(Resolution::TimedOut)));
        assert_eq!(hub.pending_count(), 0);
        assert_eq!(
            hub.pending.lock().unwrap().timeouts.len(),
            0,
            "the decided event's timeout went with it"
        );
        shutdown.cancel();
        timer.await.unwrap();
    }

    fn subscriber(
        hub: &Hub,
        filter: Filter,
        capacity: usize,
    ) -> (u64, PushReceiver, Arc<AtomicU64>) {
        let id = hub.client_id();
        let (queue, rx) = ClientQueue::channel(id, capacity, usize::MAX);
        let dropped = queue.dropped.clone();
        hub.subscribe(filter, false, queue);
        (id, rx, dropped)
    }

    #[test]
    fn filters() {
        let f = |json: Value| serde_json::from_value::<Filter>(json).unwrap();
        let m = EventMeta {
            kind: "PreToolUse",
            agent: Agent::ClaudeCode,
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
        let rx = add_plain(&hub, event, HookEventKind::PreToolUse, deadline).0;
        assert_eq!(hub.pending_list().len(), 1);
        let bad = hub.decide(
            &event.into(),
            Answer::new(Verdict::NoOpinion, None),
            "a",
            None,
        );
        assert!(bad.is_ok(), "none is supported everywhere");
        let Resolution::Decided(decided) = rx.await.unwrap() else {
            panic!()
        };
        assert_eq!(decided.client, "a");
        let late = hub
            .decide(&event.into(), Answer::new(Verdict::Deny, None), "b", None)
            .unwrap_err();
        assert_eq!(late.code, ErrorCode::AlreadyDecided);
        assert!(late.message.contains("client:a"), "{}", late.message);
        let unknown = hub
            .decide(&Uuid::now_v7().into(), Answer::default(), "b", None)
            .unwrap_err();
        assert_eq!(unknown.code, ErrorCode::NotFound);
    }

    #[test]
    fn short_ids_use_the_alphabet_and_skip_taken_ones() {
        let mut draws = [7u64, 7, 7, 8].into_iter();
        let first = short_id(|| 7, |_| false);
        assert!(crate::protocol::approval::is_short_id(&first), "{first}");
        let second = short_id(|| draws.next().unwrap(), |id| id == first);
        assert_ne!(second, first, "a taken id is drawn again");
        assert_eq!(second, short_id(|| 8, |_| false));
        let many: std::collections::HashSet<String> = (0..10_000)
            .map(|_| short_id(random_u64, |_| false))
            .collect();
        assert!(many
            .iter()
            .all(|id| id.bytes().all(|b| !b"ilo".contains(&b))));
        assert!(many.len() > 9_900, "ids spread over the alphabet");
    }

    #[tokio::test]
    async fn a_short_id_decides_and_is_free_again_once_its_event_ends() {
        let hub = Hub::default();
        let event = Uuid::now_v7();
        let (rx, info) = add_plain(
            &hub,
            event,
            HookEventKind::PreToolUse,
            Instant::now() + Duration::from_secs(5),
        );
        let short = EventRef::Short(info.short_id.clone());
        assert_eq!(hub.pending_list()[0].info.short_id, info.short_id);
        assert_eq!(hub.view(&short).unwrap().id, event);
        hub.decide(&short, Answer::new(Verdict::Allow, None), "phone", None)
            .unwrap();
        assert!(matches!(rx.await.unwrap(), Resolution::Decided(_)));
        let late = hub
            .decide(&short, Answer::new(Verdict::Deny, None), "b", None)
            .unwrap_err();
        assert_eq!(late.code, ErrorCode::AlreadyDecided);
        assert!(late.message.contains("client:phone"), "{}", late.message);
        // Freed: pending events never share a short id, ended ones may.
        assert!(!hub
            .pending
            .lock()
            .unwrap()
            .short_ids
            .contains_key(&ShortId::of(&info.short_id).unwrap()));
        let ids: std::collections::HashSet<String> = (0..500)
            .map(|_| {
                add_plain(
                    &hub,
                    Uuid::now_v7(),
                    HookEventKind::PreToolUse,
                    Instant::now() + Duration::from_secs(5),
                )
                .1
                .short_id
            })
            .collect();
        assert_eq!(ids.len(), 500);
        assert_eq!(hub.pending_count(), 500);
    }

    #[test]
    fn unsupported_verdicts_are_refused_and_the_event_stays_pending() {
        let hub = Hub::default();
        let event = Uuid::now_v7();
        let _rx = add_plain(&hub, event, HookEventKind::Stop, Instant::now()).0;
        let err = hub
            .decide(&event.into(), Answer::new(Verdict::Ask, None), "a", None)
            .unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidRequest);
        assert!(err.message.contains("deny"), "{}", err.message);
        assert_eq!(hub.pending_count(), 1);
    }

    #[test]
    fn a_decide_is_checked_against_the_agents_verdicts() {
        let hub = Hub::default();
        let pending = |agent: Agent| {
            let event = Uuid::now_v7();
            let (rx, _info) = hub.add_pending(
                event,
                HookEventKind::PreToolUse,
                &EventMeta {
                    agent,
                    ..meta("PreToolUse")
                },
                EventNames::of(&meta("PreToolUse")),
                Bytes::from_static(b"{}"),
                Instant::now(),
                Instant::now(),
                Vec::new(),
                AskedBy::default(),
            );
            (EventRef::from(event), rx)
        };
        for agent in [Agent::Codex, Agent::Gemini] {
            let (event, _rx) = pending(agent);
            let err = hub
                .decide(&event, Answer::new(Verdict::Ask, None), "a", None)
                .unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidRequest);
            assert!(err.message.contains(agent.as_str()), "{}", err.message);
            let listed = hub.pending_list();
            let item = listed
                .iter()
                .find(|i| i.agent.as_deref() == Some(agent.as_str()));
            assert_eq!(
                item.unwrap().info.verdicts,
                [Verdict::Allow, Verdict::Deny, Verdict::NoOpinion],
                "{agent}"
            );
            hub.decide(&event, Answer::new(Verdict::Allow, None), "a", None)
                .unwrap();
        }
        let (event, _rx) = pending(Agent::ClaudeCode);
        hub.decide(&event, Answer::new(Verdict::Ask, None), "a", None)
            .unwrap();
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
        let rx = add_plain(&hub, event, HookEventKind::PreToolUse, Instant::now()).0;
        hub.unsubscribe(b);
        assert_eq!(hub.pending_count(), 1, "a can still decide it");
        hub.unsubscribe(a);
        assert!(matches!(rx.await.unwrap(), Resolution::Abandoned));
        assert_eq!(hub.pending_count(), 0);
    }

    #[tokio::test]
    async fn a_dialog_answered_in_the_terminal_ends_its_pending_event() {
        let hub = Hub::default();
        let (_id, _rx, _) = subscriber(&hub, Filter::default(), 8);
        let add = |call: u64| {
            let id = Uuid::now_v7();
            let (rx, _) = add_plain(
                &hub,
                id,
                HookEventKind::PermissionRequest,
                Instant::now() + Duration::from_secs(60),
            );
            hub.watch_dialog(id, "s1", call);
            (id, rx)
        };
        let touch = tool_call_key("Bash", &json!({"command": "touch a", "description": "x"}));
        let same = tool_call_key("Bash", &json!({"description": "x", "command": "touch a"}));
        assert_eq!(touch, same, "key order does not matter");
        let (ran, ran_rx) = add(touch);
        let (other, _other_rx) = add(touch + 1);
        // Another session's tool run, or another call, ends nothing.
        assert_eq!(hub.answered_in_terminal("s2", Some(touch)), 0);
        assert_eq!(hub.answered_in_terminal("s1", Some(touch + 2)), 0);
        assert_eq!(hub.answered_in_terminal("s1", Some(touch)), 1);
        assert!(matches!(ran_rx.await.unwrap(), Resolution::Terminal));
        let late = hub
            .decide(
                &ran.into(),
                Answer::new(Verdict::Allow, None),
                "phone",
                None,
            )
            .unwrap_err();
        assert!(late.message.contains("terminal"), "{}", late.message);
        // The turn ending closes whatever dialog of the session is left.
        assert_eq!(hub.answered_in_terminal("s1", None), 1);
        assert_eq!(hub.pending_count(), 0);
        assert_eq!(hub.dialog_count.load(Ordering::Relaxed), 0);
        hub.unwatch_dialog(other);
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
        assert!(rx.try_recv().is_some() && rx.try_recv().is_some() && rx.try_recv().is_none());
    }

    #[test]
    fn a_queue_is_bounded_by_bytes_but_takes_one_big_frame_when_empty() {
        let (queue, mut rx) = ClientQueue::channel(1, 1024, 100);
        let big = Bytes::from(vec![b'x'; 300]);
        assert_eq!(
            queue.push(big.clone()),
            Pushed::Queued,
            "an empty queue takes any frame"
        );
        assert_eq!(queue.push(Bytes::from_static(b"{}\n")), Pushed::Dropped);
        assert_eq!(queue.queued_bytes(), 300);
        assert_eq!(rx.try_recv(), Some(big));
        assert_eq!(queue.queued_bytes(), 0);
        for _ in 0..3 {
            assert_eq!(queue.push(Bytes::from(vec![b'y'; 30])), Pushed::Queued);
        }
        assert_eq!(
            queue.push(Bytes::from(vec![b'y'; 30])),
            Pushed::Dropped,
            "90 + 30 > 100"
        );
        assert_eq!(queue.queued_bytes(), 90);
        assert_eq!(queue.dropped.load(Ordering::Relaxed), 2);
        drop(rx);
        assert_eq!(queue.push(Bytes::from_static(b"{}\n")), Pushed::Closed);
    }

    /// The team plane's observer, as the hub sees it: hears what waits,
    /// and can decide an escalated ask while its database is reachable.
    #[derive(Debug, Default)]
    struct TeamSeen {
        up: std::sync::atomic::AtomicBool,
        added: Mutex<Vec<(Uuid, Option<u32>)>>,
        ended: Mutex<Vec<(Uuid, String)>>,
    }

    impl PendingObserver for TeamSeen {
        fn decides(&self) -> bool {
            false
        }
        fn added(&self, added: &PendingAdded<'_>) {
            let approvals = added.asked_by.team_approvals;
            self.added.lock().unwrap().push((added.id, approvals));
        }
        fn ended(&self, id: Uuid, by: &str) {
            self.ended.lock().unwrap().push((id, by.to_string()));
        }
        fn decides_escalated(&self) -> bool {
            self.up.load(Ordering::Relaxed)
        }
    }

    /// An escalated ask joins the local clients in one pending table: the
    /// first answer wins (the team's here, a local client's late one is
    /// told who won), an escalated ask outlives the last local client
    /// while the team can answer, and an observer in another slot (the
    /// HTTP face's) is kept beside the team's.
    #[tokio::test]
    async fn the_team_is_one_more_decider_and_the_first_answer_wins() {
        let hub = Hub::default();
        let team = Arc::new(TeamSeen::default());
        let links = Arc::new(TeamSeen::default());
        hub.observe(links.clone());
        hub.observe_as("team", team.clone());
        assert!(!hub.team_decides(), "database down: nobody to escalate to");
        team.up.store(true, Ordering::Relaxed);
        assert!(hub.team_decides());
        let add = |team_approvals: Option<u32>| {
            let id = Uuid::now_v7();
            let (rx, info) = hub.add_pending(
                id,
                HookEventKind::PreToolUse,
                &meta("PreToolUse"),
                EventNames::of(&meta("PreToolUse")),
                Bytes::from_static(b"{}"),
                Instant::now() + Duration::from_secs(60),
                Instant::now() + Duration::from_secs(60),
                Vec::new(),
                AskedBy {
                    rule_ids: vec!["push".into()],
                    reason: None,
                    session: None,
                    team_approvals,
                },
            );
            (id, rx, info)
        };
        let (escalated, rx, info) = add(Some(2));
        assert_eq!(info.asked_by.team_approvals, Some(2));
        assert_eq!(team.added.lock().unwrap()[0], (escalated, Some(2)));
        assert_eq!(links.added.lock().unwrap().len(), 1, "both slots hear");
        hub.decide(
            &EventRef::from(escalated),
            Answer::new(Verdict::Deny, Some("not on a Friday".into())),
            "team:alice,bob",
            None,
        )
        .unwrap();
        match rx.await.unwrap() {
            Resolution::Decided(decided) => {
                assert_eq!(decided.answer.verdict, Verdict::Deny);
                assert_eq!(decided.client, "team:alice,bob");
            }
            other => panic!("{other:?}"),
        }
        let late = hub
            .decide(
                &EventRef::from(escalated),
                Answer::new(Verdict::Allow, None),
                "tui",
                None,
            )
            .unwrap_err();
        assert_eq!(late.code, ErrorCode::AlreadyDecided);
        assert!(
            late.message.contains("client:team:alice,bob"),
            "{}",
            late.message
        );
        assert_eq!(
            team.ended.lock().unwrap()[0],
            (escalated, "client:team:alice,bob".to_string())
        );

        // The last local client leaves: the local ask falls back, the
        // escalated one still waits for the team.
        let (client, _rx, _) = subscriber(&hub, Filter::default(), 16);
        let (local, mut local_rx, _) = add(None);
        let (escalated, mut escalated_rx, _) = add(Some(1));
        hub.unsubscribe(client);
        assert!(matches!(local_rx.try_recv(), Ok(Resolution::Abandoned)));
        assert!(escalated_rx.try_recv().is_err(), "still waits for the team");
        assert_eq!(hub.pending_count(), 1);
        assert!(team
            .ended
            .lock()
            .unwrap()
            .iter()
            .any(|(id, by)| *id == local && by.starts_with("fallback")));
        let _ = escalated;
    }

    /// At shutdown the table ends every waiting event, and any added
    /// afterwards at once, as `shutdown`: a waiting hook does not watch the
    /// shutdown itself.
    #[tokio::test(start_paused = true)]
    async fn the_table_ends_its_events_at_shutdown() {
        let (hub, shutdown, timer) = timed_hub();
        let add = || {
            let at = Instant::now() + Duration::from_secs(600);
            add_plain(&hub, Uuid::now_v7(), HookEventKind::PreToolUse, at)
        };
        let (mut waiting, info) = add();
        tokio::task::yield_now().await;
        assert!(waiting.try_recv().is_err());
        shutdown.cancel();
        timer.await.unwrap();
        assert!(matches!(waiting.await, Ok(Resolution::Abandoned)));
        assert_eq!(hub.pending_count(), 0);
        let late = hub
            .decide(
                &EventRef::Short(info.short_id),
                Answer::new(Verdict::Allow, None),
                "phone",
                None,
            )
            .unwrap_err();
        assert_eq!(late.code, ErrorCode::AlreadyDecided);
        assert!(late.message.contains("shutdown"), "{}", late.message);
        let (after, _) = add();
        assert!(matches!(after.await, Ok(Resolution::Abandoned)));
        assert_eq!(hub.pending_count(), 0);
    }

    /// What the table keeps deflated comes back whole: the listing's
    /// record, suggestions and asked-by, and `decide`'s view.
    #[test]
    fn a_pending_event_lists_what_it_was_added_with() {
        let hub = Hub::default();
        let record = json!({"id": "e1", "kind": "PreToolUse",
            "input": {"tool_name": "Bash", "tool_input": {"command": "cargo test"}}});
        let record = Bytes::from(serde_json::to_vec(&record).unwrap());
        let suggestions: Vec<Suggestion> = serde_json::from_value(json!([
            {"remember": "session", "verdict": "allow", "rule": "Bash(cargo test:*)"},
            {"remember": "always", "verdict": "allow", "rule": "Bash(cargo test:*)",
             "note": "an ask rule outvotes it"},
        ]))
        .unwrap();
        let asked_by = AskedBy {
            rule_ids: vec!["ask-tests".into()],
            reason: Some("tests run code".into()),
            session: None,
            team_approvals: None,
        };
        let (_rx, info) = hub.add_pending(
            Uuid::now_v7(),
            HookEventKind::PreToolUse,
            &meta("PreToolUse"),
            EventNames::of(&meta("PreToolUse")),
            record.clone(),
            Instant::now() + Duration::from_secs(5),
            Instant::now() + Duration::from_secs(5),
            suggestions.clone(),
            asked_by.clone(),
        );
        assert_eq!(
            (&info.suggestions, &info.asked_by),
            (&suggestions, &asked_by)
        );
        let listed = &hub.pending_list()[0];
        assert_eq!(
            listed.event,
            serde_json::from_slice::<Value>(&record).unwrap()
        );
        assert_eq!(listed.info.short_id, info.short_id);
        assert_eq!(listed.info.suggestions, suggestions);
        assert_eq!(listed.info.asked_by, asked_by);
        let view = hub.view(&EventRef::Short(info.short_id)).unwrap();
        assert_eq!(view.record, record);
        assert_eq!(view.suggestions, suggestions);
    }
}
