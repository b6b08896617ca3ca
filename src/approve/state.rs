//! The approver's state, pure: frames in ([`State::apply`]), keys in
//! ([`State::on_key`]), requests out. No IO, no clock of its own (the IO
//! loop sets [`State::now`]), so every behaviour is a unit test.

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;

use serde::Deserialize;

use super::wire::{Remember, Request};
use crate::agent::claude::sdk::{SdkBody, SdkMessageFields};
use crate::decision::Verdict;
use crate::protocol::approval::{
    AskedBy, GrantChange, GrantPush, PendingInfo, PendingItem as ProtocolPendingItem, Suggestion,
};
use crate::protocol::{EventPush, Reply, SdkMessage};

/// Feed rows kept; older ones are dropped.
pub const FEED_CAP: usize = 5000;

/// The reason a deny gets when the person just presses Enter.
pub const DEFAULT_DENY_REASON: &str = "Denied by the user in hookd approve";

/// Which pane has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// Decisions waiting for a person.
    Pending,
    /// Every event.
    Feed,
    /// Agent-SDK runs.
    Runs,
    /// Team asks open in the database (`hookd approve --team`).
    Team,
}

/// What the keyboard does now.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// Panes and item keys.
    Normal,
    /// The key list.
    Help,
    /// Typing the feed's text filter (`/`).
    Search {
        /// The text so far.
        text: String,
    },
    /// Typing a deny reason (`n`).
    Reason {
        /// The event denied.
        event_id: String,
        /// What the item is called on screen.
        label: String,
        /// The reason so far (starts as [`DEFAULT_DENY_REASON`]).
        text: String,
    },
    /// Typing a team deny's reason (`n` in the Team pane).
    TeamReason {
        /// The team ask's id.
        id: String,
        /// Its short id.
        label: String,
        /// The reason so far.
        text: String,
    },
    /// A yes/no question before something that lasts (`a`, `N`, `x`).
    Confirm {
        /// The question, with what would be done.
        question: String,
        /// Sent on yes.
        request: Request,
    },
    /// Typing a follow-up message into a run (`m`).
    Steer {
        /// The run.
        run_id: String,
        /// The message so far.
        text: String,
    },
    /// `hookd rules explain` of a pending item.
    Explain {
        /// What is explained.
        title: String,
        /// The explanation.
        text: String,
        /// First line shown.
        scroll: u16,
    },
}

/// The daemon connection, as the header shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// Connecting for the first time.
    Connecting,
    /// Welcomed.
    Up {
        /// The daemon's version.
        version: String,
    },
    /// Lost or never reached; the IO loop retries.
    Down {
        /// Why (the connect error, or "hookd closed the connection").
        reason: String,
        /// Seconds until the next attempt.
        retry_s: u64,
    },
}

/// One event in the feed, joined with its decision when that arrives.
#[derive(Debug, Clone, PartialEq)]
pub struct FeedRow {
    /// Arrival number, for a selection that survives the ring buffer.
    pub seq: u64,
    /// The event's uuid.
    pub event_id: String,
    /// `HH:MM:SS`, UTC, from `received_at`.
    pub time: String,
    /// The session id.
    pub session: Option<String>,
    /// The project directory's name.
    pub project: Option<String>,
    /// `claude-code`, `agent-sdk`, …
    pub harness: String,
    /// `hook_event_name`.
    pub event: String,
    /// The tool, for tool events.
    pub tool: Option<String>,
    /// Command, path, URL or prompt, on one line.
    pub summary: String,
    /// Once decided.
    pub verdict: Option<String>,
    /// Rule id(s), `client:NAME`, `grant:ID`, `timeout`, `terminal`, …
    pub decided_by: Option<String>,
    /// Microseconds from receipt to decision.
    pub latency_us: Option<u64>,
    /// It waited for a person.
    pub pending: bool,
}

/// A decision waiting for a person.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingItem {
    /// The event's uuid.
    pub event_id: String,
    /// The daemon's short id, when it gives one.
    pub short_id: Option<String>,
    /// `hook_event_name`.
    pub event: String,
    /// The tool.
    pub tool: Option<String>,
    /// The session id.
    pub session: Option<String>,
    /// The project directory's name.
    pub project: Option<String>,
    /// The hook input.
    pub input: Value,
    /// The event record's `harness` (`claude-code`, `codex`, …).
    pub harness: String,
    /// When the daemon stops waiting (fallback applies).
    pub deadline: Option<Instant>,
    /// The verdicts it accepts (empty: unknown, assume allow and deny).
    pub verdicts: Vec<Verdict>,
    /// Rules that could be remembered.
    pub suggestions: Vec<Suggestion>,
    /// Which rule(s) asked.
    pub asked_by: Option<AskedBy>,
    /// The narrator's last line about its session (issue #24).
    pub narration: Option<String>,
    /// Arrival order.
    pub seq: u64,
}

impl PendingItem {
    /// The id shown and typed: the daemon's short id, else the last six hex
    /// digits of the uuid (a v7 uuid starts with its timestamp, which
    /// events close in time share; its end is random).
    pub fn display_id(&self) -> String {
        match &self.short_id {
            Some(short) => short.clone(),
            None => {
                let hex: String = self.event_id.chars().filter(|c| *c != '-').collect();
                hex[hex.len().saturating_sub(6)..].to_string()
            }
        }
    }

    /// Whether `typed` names this item: its short id, its uuid, or the end
    /// or start of its uuid (at least 4 characters).
    pub fn answers_to(&self, typed: &str) -> bool {
        let typed = typed.to_ascii_lowercase();
        if self.short_id.as_deref() == Some(typed.as_str()) || self.display_id() == typed {
            return true;
        }
        let hex: String = self.event_id.chars().filter(|c| *c != '-').collect();
        let typed_hex: String = typed.chars().filter(|c| *c != '-').collect();
        typed_hex.len() >= 4 && (hex.starts_with(&typed_hex) || hex.ends_with(&typed_hex))
    }

    /// Whether it takes `verdict` (an unknown list takes allow and deny).
    pub fn accepts(&self, verdict: &str) -> bool {
        if self.verdicts.is_empty() {
            matches!(verdict, "allow" | "deny")
        } else {
            self.verdicts.iter().any(|v| v.as_str() == verdict)
        }
    }

    /// The verdicts it accepts, as a refusal names them: `allow, deny`.
    pub fn verdict_list(&self) -> String {
        let names: Vec<&str> = self.verdicts.iter().map(|v| v.as_str()).collect();
        names.join(", ")
    }

    /// The rule `remember` with `verdict` would keep: the first suggestion
    /// for that kind of memory and verdict; for `always`, else any
    /// `always` suggestion (a deny keeps the same rule an allow would).
    /// One that matches every shell command only when there is no other
    /// (and then it is confirmed by name first).
    pub fn suggestion(&self, remember: Remember, verdict: &str) -> Option<&Suggestion> {
        let first = |broad: bool| {
            self.suggestions
                .iter()
                .filter(|s| s.every_command == broad)
                .find(|s| s.remember == remember && s.verdict.as_str() == verdict)
                .or_else(|| {
                    (remember == Remember::Always)
                        .then(|| {
                            self.suggestions
                                .iter()
                                .find(|s| s.every_command == broad && s.remember == remember)
                        })
                        .flatten()
                })
        };
        first(false).or_else(|| first(true))
    }
}

/// An agent-SDK run in progress.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// The run.
    pub run_id: String,
    /// The prompt (first line).
    pub prompt: String,
    /// The model, when known.
    pub model: Option<String>,
    /// The runtime hosting it (`claude-sdk`, `pi`), when the daemon said.
    pub runtime: Option<String>,
    /// Model turns so far.
    pub turns: u64,
    /// Cost so far, when known.
    pub cost_usd: Option<f64>,
}

/// The feed's filters; every one set must match.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeedFilter {
    /// Only this session.
    pub session: Option<String>,
    /// Only this tool.
    pub tool: Option<String>,
    /// Only this verdict.
    pub verdict: Option<String>,
    /// Text anywhere in the row (case-insensitive).
    pub text: String,
}

impl FeedFilter {
    /// Whether no filter is set.
    pub fn is_empty(&self) -> bool {
        *self == FeedFilter::default()
    }

    fn shows(&self, row: &FeedRow) -> bool {
        let same = |want: &Option<String>, have: &Option<String>| {
            want.is_none() || want.as_deref() == have.as_deref()
        };
        same(&self.session, &row.session)
            && same(&self.tool, &row.tool)
            && same(&self.verdict, &row.verdict)
            && (self.text.is_empty() || {
                let needle = self.text.to_lowercase();
                [
                    Some(&row.summary),
                    Some(&row.event),
                    row.tool.as_ref(),
                    row.project.as_ref(),
                    row.decided_by.as_ref(),
                    row.session.as_ref(),
                ]
                .into_iter()
                .flatten()
                .any(|field| field.to_lowercase().contains(&needle))
            })
    }
}

/// What happened to the pending table, for line mode (`--plain`), which
/// prints each.
#[derive(Debug, Clone, PartialEq)]
pub enum News {
    /// A new item waits (its event id).
    Waiting(String),
    /// An item left the table.
    Resolved {
        /// What it was called on screen.
        id: String,
        /// The verdict.
        verdict: String,
        /// Who decided.
        by: String,
        /// The reason, if any.
        reason: Option<String>,
    },
    /// Tool calls ran unjudged (a coverage alarm's line).
    Alarm(String),
    /// The answer to one of our requests.
    Reply {
        /// What the request was, for people.
        what: String,
        /// `None`: it succeeded; else the daemon's error.
        error: Option<String>,
    },
}

/// See the module doc.
#[derive(Debug)]
pub struct State {
    /// The clock for countdowns; the IO loop sets it before applying
    /// anything and at each tick.
    pub now: Instant,
    /// Colours on (`NO_COLOR` unset).
    pub color: bool,
    /// The daemon's socket, for the header.
    pub socket: String,
    /// The connection.
    pub link: Link,
    /// The daemon's capabilities (`welcome`).
    pub capabilities: Vec<String>,
    /// The daemon's rules source (`status.rules.source`).
    pub rules_source: Option<String>,
    /// The revision and generation of the daemon's rules (`status.rules`):
    /// an explanation shows that generation only for rules of that revision.
    pub daemon_rules: Option<crate::local::DaemonRules>,
    /// Events, oldest first, at most [`FEED_CAP`].
    pub feed: VecDeque<FeedRow>,
    /// Waiting decisions, oldest first.
    pub pending: Vec<PendingItem>,
    /// Runs in progress.
    pub runs: Vec<RunRow>,
    /// The feed's filters.
    pub filter: FeedFilter,
    /// Which pane has the keyboard.
    pub focus: Pane,
    /// Selected pending item (index into `pending`).
    pub selected_pending: usize,
    /// Selected feed row (its `seq`) while paused.
    pub selected_feed: Option<u64>,
    /// Selected run (index into `runs`).
    pub selected_run: usize,
    /// The feed follows new events (else it is paused at the selection).
    pub follow: bool,
    /// The keyboard's mode.
    pub mode: Mode,
    /// One line for the footer (the last reply, a refusal), until the next key.
    pub notice: Option<String>,
    /// Set when the screen must be redrawn.
    pub dirty: bool,
    /// Set by `q`.
    pub quit: bool,
    /// The daemon's pending table has been read since connecting (line mode
    /// reads no answer before: an id typed at once must be found).
    pub table_read: bool,
    next_seq: u64,
    next_req: u64,
    /// Our requests waiting for their reply: req → what it was.
    in_flight: HashMap<String, InFlight>,
    news: Vec<News>,
    /// The narrator's last line per session.
    narrations: HashMap<String, String>,
    /// The Team pane (`--team`), else `None`.
    pub team: Option<super::team::TeamPane>,
}

#[derive(Debug, Clone)]
enum InFlight {
    Pending,
    Status,
    /// Told only if it fails.
    Quiet(&'static str),
    Other(String),
}

impl State {
    /// A fresh state for the daemon at `socket`.
    pub fn new(socket: &str, now: Instant, color: bool) -> State {
        State {
            now,
            color,
            socket: socket.to_string(),
            link: Link::Connecting,
            capabilities: Vec::new(),
            rules_source: None,
            daemon_rules: None,
            feed: VecDeque::new(),
            pending: Vec::new(),
            runs: Vec::new(),
            filter: FeedFilter::default(),
            focus: Pane::Pending,
            selected_pending: 0,
            selected_feed: None,
            selected_run: 0,
            follow: true,
            mode: Mode::Normal,
            notice: None,
            dirty: true,
            quit: false,
            table_read: false,
            next_seq: 0,
            next_req: 1,
            in_flight: HashMap::new(),
            news: Vec::new(),
            narrations: HashMap::new(),
            team: None,
        }
    }

    /// The frame for `request`, remembering what it was so its reply can
    /// be told; `None` for local work ([`Request::Explain`]).
    pub fn frame(&mut self, request: &Request) -> Option<crate::protocol::Request> {
        let req = self.next_req.to_string();
        let frame = request.frame(&req)?;
        self.next_req += 1;
        let what = match request {
            Request::Pending => InFlight::Pending,
            Request::Status => InFlight::Status,
            Request::Subscribe => InFlight::Quiet("subscribe"),
            Request::Decide {
                event_id,
                verdict,
                remember,
                rule,
                ..
            } => {
                let label = self
                    .pending
                    .iter()
                    .find(|p| &p.event_id == event_id)
                    .map_or_else(|| event_id.clone(), PendingItem::display_id);
                InFlight::Other(match (remember, rule) {
                    (Remember::Once, _) | (_, None) => format!("{verdict} {label}"),
                    (remember, Some(rule)) => {
                        format!("{verdict} {label}, {} {rule}", remember.as_str())
                    }
                })
            }
            Request::Abort { run_id } => InFlight::Other(format!("abort run {run_id}")),
            Request::Steer { run_id, .. } => InFlight::Other(format!("message to run {run_id}")),
            Request::Explain { .. } | Request::TeamAnswer { .. } => {
                unreachable!("explain and team answers have no frame")
            }
        };
        self.in_flight.insert(req, what);
        Some(frame)
    }

    /// Whether a decision, abort or message sent is still without its reply.
    pub fn awaiting_replies(&self) -> bool {
        self.in_flight
            .values()
            .any(|f| matches!(f, InFlight::Other(_)))
    }

    /// What happened since the last call (line mode prints it).
    pub fn take_news(&mut self) -> Vec<News> {
        std::mem::take(&mut self.news)
    }

    /// The connection went down (or could not be made): pending items can
    /// no longer be decided from here, so they are dropped; the feed stays.
    pub fn disconnected(&mut self, reason: &str, retry_s: u64) {
        self.link = Link::Down {
            reason: reason.to_string(),
            retry_s,
        };
        self.pending.clear();
        self.runs.clear();
        self.in_flight.clear();
        self.table_read = false;
        if matches!(
            self.mode,
            Mode::Reason { .. } | Mode::Confirm { .. } | Mode::Steer { .. }
        ) {
            self.mode = Mode::Normal;
        }
        self.clamp();
        self.dirty = true;
    }

    /// A new second: countdowns move.
    pub fn tick(&mut self, now: Instant) {
        self.now = now;
        if self.counting_down() {
            self.dirty = true;
        }
    }

    /// Whether a countdown is on screen (the IO loop ticks only then).
    pub fn counting_down(&self) -> bool {
        self.pending.iter().any(|p| p.deadline.is_some())
    }

    /// Applies one frame from the daemon; returns what to ask next.
    pub fn apply(&mut self, frame: Reply) -> Vec<Request> {
        self.dirty = true;
        match frame {
            Reply::Welcome(welcome) => {
                self.link = Link::Up {
                    version: welcome.server_version,
                };
                self.capabilities = welcome.capabilities;
                // Subscribed before the table is read: an item that arrives
                // in between shows up in both, and is kept once.
                vec![Request::Subscribe, Request::Pending, Request::Status]
            }
            Reply::Event(push) => {
                self.on_event(push);
                Vec::new()
            }
            Reply::Decision(push) => {
                self.on_decision(&push.decision);
                Vec::new()
            }
            Reply::Lagged(lagged) => {
                self.notice = Some(format!(
                    "{} frames were dropped (this view fell behind); refreshed",
                    lagged.dropped
                ));
                vec![Request::Pending, Request::Status]
            }
            Reply::Ok(ok) => {
                self.on_reply(&ok.req, ok.result.as_ref().unwrap_or(&Value::Null), None);
                Vec::new()
            }
            Reply::Error(error) => {
                let message = format!("{} ({})", error.message, error.code);
                match &error.req {
                    Some(req) => self.on_reply(req, &Value::Null, Some(message)),
                    None => self.notice = Some(format!("hookd: {message}")),
                }
                Vec::new()
            }
            Reply::Grant(GrantPush { change, grant }) => {
                let change = match change {
                    GrantChange::Added => "added",
                    GrantChange::Revoked => "revoked",
                    GrantChange::Expired => "expired",
                };
                self.notice = Some(format!(
                    "grant {change}: {} {} for session {}",
                    grant.verdict,
                    grant.rule,
                    short(&grant.session_id),
                ));
                Vec::new()
            }
            Reply::RunStart(start) => {
                self.runs.push(RunRow {
                    run_id: start.run_id,
                    prompt: first_line(&start.prompt),
                    model: start.model,
                    runtime: start.runtime,
                    turns: 0,
                    cost_usd: None,
                });
                Vec::new()
            }
            Reply::SdkMessage(message) => {
                self.on_sdk_message(&message);
                Vec::new()
            }
            Reply::CoverageAlarm(alarm) => {
                self.on_coverage_alarm(alarm);
                Vec::new()
            }
            Reply::Narration(narration) => {
                self.on_narration(narration);
                Vec::new()
            }
            Reply::RunDone(done) => {
                self.runs.retain(|r| r.run_id != done.run_id);
                self.clamp();
                Vec::new()
            }
            Reply::HookResult(_) | Reply::Unknown => {
                self.dirty = false;
                Vec::new()
            }
        }
    }

    /// [`State::apply`] for a frame written as JSON: the tests' frames are
    /// complete ones, or this panics.
    #[cfg(test)]
    pub fn apply_json(&mut self, frame: &Value) -> Vec<Request> {
        use serde::Deserialize;
        self.apply(Reply::deserialize(frame).expect("a frame the daemon sends"))
    }

    /// A coverage alarm: a line in the feed and the notice (line mode
    /// prints it).
    fn on_coverage_alarm(&mut self, alarm: crate::protocol::coverage::CoverageAlarm) {
        let row = FeedRow {
            seq: self.next_seq,
            event_id: String::new(),
            time: alarm
                .at
                .split('T')
                .nth(1)
                .map(|t| t.chars().take(8).collect())
                .unwrap_or_default(),
            session: Some(alarm.session_id),
            project: alarm.project,
            harness: alarm.harness,
            event: "UNJUDGED".into(),
            tool: (!alarm.tool.is_empty()).then_some(alarm.tool),
            summary: alarm.message.clone(),
            verdict: Some("unjudged".into()),
            decided_by: None,
            latency_us: None,
            pending: false,
        };
        self.next_seq += 1;
        if self.feed.len() == FEED_CAP {
            self.feed.pop_front();
        }
        self.feed.push_back(row);
        self.notice = Some(format!("alarm: {}", alarm.message));
        self.news.push(News::Alarm(alarm.message));
    }

    /// The narrator's line: beside the session's pending items, and a
    /// line in the feed.
    fn on_narration(&mut self, n: crate::protocol::narration::Narration) {
        for item in self
            .pending
            .iter_mut()
            .filter(|p| p.session.as_deref() == Some(n.session_id.as_str()))
        {
            item.narration = Some(n.text.clone());
        }
        let row = FeedRow {
            seq: self.next_seq,
            event_id: String::new(),
            time: n
                .at
                .split('T')
                .nth(1)
                .map(|t| t.chars().take(8).collect())
                .unwrap_or_default(),
            session: Some(n.session_id.clone()),
            project: None,
            harness: n.harness,
            event: "NARRATION".into(),
            tool: None,
            summary: n.text.clone(),
            // Nothing to decide: not `…` (undecided).
            verdict: Some(String::new()),
            decided_by: None,
            latency_us: None,
            pending: false,
        };
        self.next_seq += 1;
        if self.feed.len() == FEED_CAP {
            self.feed.pop_front();
        }
        self.feed.push_back(row);
        if self.narrations.len() >= 256 && !self.narrations.contains_key(&n.session_id) {
            self.narrations.clear();
        }
        self.narrations.insert(n.session_id, n.text);
    }

    fn on_event(&mut self, push: EventPush) {
        let mut row = feed_row(&push.event, self.next_seq);
        self.next_seq += 1;
        if push.pending {
            row.pending = true;
            self.add_pending(&push.event, push.info);
        }
        if self.feed.len() == FEED_CAP {
            self.feed.pop_front();
        }
        self.feed.push_back(row);
    }

    /// Adds a pending event, or takes what `info` knows into the item
    /// already listed (the table's view is newer than a pushed frame's).
    fn add_pending(&mut self, record: &Value, info: Option<PendingInfo>) {
        let Some(event_id) = record["id"].as_str() else {
            return;
        };
        if let Some(known) = self.pending.iter_mut().find(|p| p.event_id == event_id) {
            if let Some(info) = info {
                known.deadline = Some(self.now + Duration::from_millis(info.deadline_ms));
                known.short_id = Some(info.short_id);
                known.verdicts = info.verdicts;
                known.suggestions = info.suggestions;
                known.asked_by = Some(info.asked_by);
            }
            return;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let (short_id, deadline, verdicts, suggestions, asked_by) = match info {
            Some(info) => (
                Some(info.short_id),
                Some(self.now + Duration::from_millis(info.deadline_ms)),
                info.verdicts,
                info.suggestions,
                Some(info.asked_by),
            ),
            None => (None, None, Vec::new(), Vec::new(), None),
        };
        self.pending.push(PendingItem {
            event_id: event_id.to_string(),
            short_id,
            event: record["kind"].as_str().unwrap_or("?").to_string(),
            tool: record["tool"].as_str().map(str::to_owned),
            session: record["session_id"].as_str().map(str::to_owned),
            project: project_name(record),
            input: record["input"].clone(),
            harness: record["harness"]
                .as_str()
                .unwrap_or("claude-code")
                .to_string(),
            deadline,
            verdicts,
            suggestions,
            asked_by,
            narration: record["session_id"]
                .as_str()
                .and_then(|s| self.narrations.get(s).cloned()),
            seq,
        });
        self.news.push(News::Waiting(event_id.to_string()));
    }

    fn on_decision(&mut self, decision: &Value) {
        let Some(event_id) = decision["event_id"].as_str() else {
            return;
        };
        let verdict = decision["verdict"].as_str().unwrap_or("none").to_string();
        let source = decision["source"].as_str().unwrap_or("?");
        let by = match (source, decision["rule_ids"].as_array()) {
            ("rule", Some(ids)) if !ids.is_empty() => ids
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(","),
            _ => source.to_string(),
        };
        if let Some(row) = self.feed.iter_mut().rev().find(|r| r.event_id == event_id) {
            row.verdict = Some(verdict.clone());
            row.decided_by = Some(by.clone());
            row.latency_us = decision["latency_us"].as_u64();
        }
        if let Some(at) = self.pending.iter().position(|p| p.event_id == event_id) {
            let item = self.pending.remove(at);
            self.news.push(News::Resolved {
                id: item.display_id(),
                verdict,
                by,
                reason: decision["reason"].as_str().map(str::to_owned),
            });
            // A question about an item that is gone must not be answered.
            let stale = match &self.mode {
                Mode::Reason { event_id: e, .. } | Mode::Explain { title: e, .. } => {
                    e == event_id || e.contains(&item.display_id())
                }
                Mode::Confirm { request, .. } => {
                    matches!(request, Request::Decide { event_id: e, .. } if e == event_id)
                }
                _ => false,
            };
            if stale {
                self.mode = Mode::Normal;
                self.notice = Some(format!("{} was decided elsewhere", item.display_id()));
            }
            self.clamp();
        }
    }

    fn on_reply(&mut self, req: &str, result: &Value, error: Option<String>) {
        match self.in_flight.remove(req) {
            Some(InFlight::Pending) => {
                if let Ok(list) = Vec::<ProtocolPendingItem>::deserialize(result) {
                    self.replace_pending(list);
                    self.table_read = true;
                }
            }
            Some(InFlight::Status) => {
                let status = result;
                self.rules_source = status["rules"]["source"].as_str().map(str::to_owned);
                self.daemon_rules = serde_json::from_value(status["rules"].clone())
                    .ok()
                    .map(|rules| crate::local::DaemonRules::from_status(&rules));
                if let Some(runs) = status["runs"].as_array() {
                    self.runs = runs
                        .iter()
                        .map(|r| RunRow {
                            run_id: r["run_id"].as_str().unwrap_or("?").to_string(),
                            prompt: first_line(r["prompt"].as_str().unwrap_or("")),
                            model: r["model"].as_str().map(str::to_owned),
                            runtime: r["runtime"].as_str().map(str::to_owned),
                            turns: r["turns"].as_u64().unwrap_or(0),
                            cost_usd: r["cost_usd"].as_f64(),
                        })
                        .collect();
                    self.clamp();
                }
            }
            Some(InFlight::Quiet(what)) => {
                if let Some(e) = error {
                    self.notice = Some(format!("{what}: {e}"));
                }
            }
            Some(InFlight::Other(what)) => {
                self.notice = Some(match &error {
                    // `always`: the daemon says which file got the rule.
                    None if result["rules_file"].is_string() => format!(
                        "{what}: {} `{}` {} {}{}",
                        if result["already_present"] == true {
                            "nothing added:"
                        } else {
                            "added"
                        },
                        result["rule"].as_str().unwrap_or("?"),
                        if result["already_present"] == true {
                            "is already in"
                        } else {
                            "to"
                        },
                        result["rules_file"].as_str().unwrap_or("?"),
                        result["note"]
                            .as_str()
                            .map(|note| format!("; note: {note}"))
                            .unwrap_or_default()
                    ),
                    None => format!("{what}: done"),
                    Some(e) => format!("{what}: {e}"),
                });
                self.news.push(News::Reply { what, error });
            }
            None => {
                if let Some(e) = error {
                    self.notice = Some(format!("hookd: {e}"));
                }
            }
        }
    }

    /// The daemon's whole table: items it no longer lists are gone; known
    /// ones keep their place; new ones are added oldest first.
    fn replace_pending(&mut self, list: Vec<ProtocolPendingItem>) {
        let listed: Vec<&str> = list.iter().filter_map(|p| p.event["id"].as_str()).collect();
        self.pending
            .retain(|p| listed.contains(&p.event_id.as_str()));
        for entry in list {
            self.add_pending(&entry.event, Some(entry.info));
        }
        self.clamp();
    }

    fn on_sdk_message(&mut self, frame: &SdkMessage) {
        let Some(run) = self.runs.iter_mut().find(|r| r.run_id == frame.run_id) else {
            return;
        };
        let message = &frame.message;
        let fields = SdkMessageFields::of(message);
        run.cost_usd = fields.cost_so_far.or(run.cost_usd);
        match fields.body {
            SdkBody::Init { model, .. } if run.model.is_none() => {
                run.model = model.map(str::to_owned);
            }
            SdkBody::Assistant(_) => run.turns += 1,
            SdkBody::Result {
                num_turns,
                total_cost_usd,
                ..
            } => {
                run.turns = num_turns.unwrap_or(run.turns);
                run.cost_usd = total_cost_usd.or(run.cost_usd);
            }
            _ => self.dirty = false,
        }
    }

    /// The feed rows the filters show, oldest first.
    pub fn visible_feed(&self) -> Vec<&FeedRow> {
        self.feed.iter().filter(|r| self.filter.shows(r)).collect()
    }

    /// The selected pending item.
    pub fn selected_item(&self) -> Option<&PendingItem> {
        self.pending.get(self.selected_pending)
    }

    /// The selected feed row (the newest shown while following).
    pub fn selected_row(&self) -> Option<&FeedRow> {
        let rows = self.visible_feed();
        match self.selected_feed {
            Some(seq) if !self.follow => rows
                .iter()
                .find(|r| r.seq == seq)
                .copied()
                .or(rows.last().copied()),
            _ => rows.last().copied(),
        }
    }

    fn clamp(&mut self) {
        self.selected_pending = self
            .selected_pending
            .min(self.pending.len().saturating_sub(1));
        self.selected_run = self.selected_run.min(self.runs.len().saturating_sub(1));
    }

    /// One key; returns the requests it makes.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Request> {
        self.dirty = true;
        if key.modifiers.contains(KeyModifiers::CONTROL)
            && matches!(key.code, KeyCode::Char('c') | KeyCode::Char('d'))
        {
            self.quit = true;
            return Vec::new();
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Normal => self.normal_key(key),
            Mode::Help => Vec::new(),
            Mode::Explain {
                title,
                text,
                scroll,
            } => {
                let scroll = match key.code {
                    KeyCode::Down | KeyCode::Char('j') => scroll.saturating_add(1),
                    KeyCode::Up | KeyCode::Char('k') => scroll.saturating_sub(1),
                    KeyCode::PageDown | KeyCode::Char(' ') => scroll.saturating_add(10),
                    KeyCode::PageUp => scroll.saturating_sub(10),
                    _ => return Vec::new(),
                };
                self.mode = Mode::Explain {
                    title,
                    text,
                    scroll,
                };
                Vec::new()
            }
            Mode::Confirm { question, request } => match key.code {
                KeyCode::Char('y') | KeyCode::Enter => vec![request],
                KeyCode::Char('n') | KeyCode::Esc => {
                    self.notice = Some("cancelled".into());
                    Vec::new()
                }
                _ => {
                    self.mode = Mode::Confirm { question, request };
                    Vec::new()
                }
            },
            Mode::Search { text } => {
                match edit(text, key) {
                    Edit::Typing(text) => {
                        self.filter.text = text.clone();
                        self.mode = Mode::Search { text };
                    }
                    Edit::Done(text) => self.filter.text = text,
                    Edit::Cancelled => self.filter.text.clear(),
                }
                Vec::new()
            }
            Mode::Reason {
                event_id,
                label,
                text,
            } => match edit(text, key) {
                Edit::Typing(text) => {
                    self.mode = Mode::Reason {
                        event_id,
                        label,
                        text,
                    };
                    Vec::new()
                }
                Edit::Done(text) => vec![Request::Decide {
                    event_id,
                    verdict: "deny".into(),
                    reason: Some(if text.trim().is_empty() {
                        DEFAULT_DENY_REASON.to_string()
                    } else {
                        text
                    }),
                    remember: Remember::Once,
                    rule: None,
                }],
                Edit::Cancelled => {
                    self.notice = Some("cancelled".into());
                    Vec::new()
                }
            },
            Mode::TeamReason { id, label, text } => self.team_reason_key(id, label, text, key),
            Mode::Steer { run_id, text } => match edit(text, key) {
                Edit::Typing(text) => {
                    self.mode = Mode::Steer { run_id, text };
                    Vec::new()
                }
                Edit::Done(text) if !text.trim().is_empty() => {
                    vec![Request::Steer { run_id, text }]
                }
                Edit::Done(_) | Edit::Cancelled => {
                    self.notice = Some("cancelled".into());
                    Vec::new()
                }
            },
        }
    }

    fn normal_key(&mut self, key: KeyEvent) -> Vec<Request> {
        self.notice = None;
        if self.focus == Pane::Team {
            if let Some(requests) = self.team_key(&key) {
                return requests;
            }
        }
        match key.code {
            KeyCode::Char('q') => self.quit = true,
            KeyCode::Char('?') => self.mode = Mode::Help,
            KeyCode::Tab => self.focus = self.step_pane(1),
            KeyCode::BackTab => self.focus = self.step_pane(-1),
            KeyCode::Down | KeyCode::Char('j') => self.move_selection(1),
            KeyCode::Up | KeyCode::Char('k') => self.move_selection(-1),
            KeyCode::Char('y') => return self.decide_selected("allow", Remember::Once),
            KeyCode::Char('s') => return self.decide_selected("allow", Remember::Session),
            KeyCode::Char('a') => return self.decide_selected("allow", Remember::Always),
            KeyCode::Char('N') => return self.decide_selected("deny", Remember::Always),
            KeyCode::Char('n') => match self.selected_item() {
                Some(item) if item.accepts("deny") => {
                    self.mode = Mode::Reason {
                        event_id: item.event_id.clone(),
                        label: item.display_id(),
                        text: DEFAULT_DENY_REASON.to_string(),
                    }
                }
                Some(item) => self.notice = Some(refusal(item, "deny")),
                None => self.notice = Some("nothing is waiting for a decision".into()),
            },
            KeyCode::Char('e') => match self.selected_item() {
                Some(item) => {
                    return vec![Request::Explain {
                        event_id: item.event_id.clone(),
                        input: item.input.clone(),
                        harness: item.harness.clone(),
                    }]
                }
                None => self.notice = Some("nothing is waiting for a decision".into()),
            },
            KeyCode::Char('/') => {
                self.mode = Mode::Search {
                    text: self.filter.text.clone(),
                }
            }
            KeyCode::Char(' ') | KeyCode::Char('p') => {
                self.follow = !self.follow;
                self.selected_feed = if self.follow {
                    None
                } else {
                    self.selected_row().map(|r| r.seq)
                };
            }
            KeyCode::Char('S') => {
                let value = self.selected_row().and_then(|r| r.session.clone());
                toggle(&mut self.filter.session, value);
            }
            KeyCode::Char('T') => {
                let value = self.selected_row().and_then(|r| r.tool.clone());
                toggle(&mut self.filter.tool, value);
            }
            KeyCode::Char('V') => {
                let value = self.selected_row().and_then(|r| r.verdict.clone());
                toggle(&mut self.filter.verdict, value);
            }
            KeyCode::Char('c') => self.filter = FeedFilter::default(),
            KeyCode::Char('x') => match self.runs.get(self.selected_run) {
                Some(run) => {
                    self.mode = Mode::Confirm {
                        question: format!("Abort run {} ({})?", run.run_id, run.prompt),
                        request: Request::Abort {
                            run_id: run.run_id.clone(),
                        },
                    }
                }
                None => self.notice = Some("no run in progress".into()),
            },
            KeyCode::Char('m') => match self.runs.get(self.selected_run) {
                Some(_) if !self.capabilities.iter().any(|c| c == "steer") => {
                    self.notice = Some("this hookd cannot steer runs (it predates `steer`)".into())
                }
                Some(run) => {
                    self.mode = Mode::Steer {
                        run_id: run.run_id.clone(),
                        text: String::new(),
                    }
                }
                None => self.notice = Some("no run in progress".into()),
            },
            _ => self.dirty = false,
        }
        Vec::new()
    }

    fn move_selection(&mut self, by: i64) {
        let step = |at: usize, len: usize| -> usize {
            (at as i64 + by).clamp(0, len.saturating_sub(1) as i64) as usize
        };
        match self.focus {
            Pane::Pending => {
                self.selected_pending = step(self.selected_pending, self.pending.len())
            }
            Pane::Runs => self.selected_run = step(self.selected_run, self.runs.len()),
            // Its keys are the Team pane's own (`team_key`).
            Pane::Team => {}
            Pane::Feed => {
                let rows = self.visible_feed();
                let at = self
                    .selected_row()
                    .and_then(|sel| rows.iter().position(|r| r.seq == sel.seq))
                    .unwrap_or(rows.len().saturating_sub(1));
                let to = step(at, rows.len());
                let seq = rows.get(to).map(|r| r.seq);
                // Moving off the newest row pauses the feed there; moving
                // back onto it follows again.
                self.follow = to + 1 >= rows.len();
                self.selected_feed = if self.follow { None } else { seq };
            }
        }
    }

    fn decide_selected(&mut self, verdict: &str, remember: Remember) -> Vec<Request> {
        let Some(item) = self.selected_item() else {
            self.notice = Some("nothing is waiting for a decision".into());
            return Vec::new();
        };
        if !item.accepts(verdict) {
            self.notice = Some(refusal(item, verdict));
            return Vec::new();
        }
        let rule = match remember {
            Remember::Once => None,
            _ => match item.suggestion(remember, verdict) {
                Some(s) => Some(s.rule.clone()),
                None => {
                    self.notice = Some(format!(
                        "no rule to remember for {}; y allows once, n denies",
                        item.display_id()
                    ));
                    return Vec::new();
                }
            },
        };
        let (every_command, note) = item
            .suggestion(remember, verdict)
            .filter(|_| rule.is_some())
            .map_or((false, None), |s| {
                (
                    s.every_command,
                    s.note.clone().filter(|_| verdict == "allow"),
                )
            });
        let request = Request::Decide {
            event_id: item.event_id.clone(),
            verdict: verdict.to_string(),
            reason: None,
            remember,
            rule: rule.clone(),
        };
        let Some(rule) = rule else {
            return vec![request];
        };
        // What lasts, what allows every shell command, and what would
        // change nothing are each said before they are sent.
        let mut question = match remember {
            Remember::Always => format!(
                "Always {verdict} {rule}? This adds `{rule}` to your rules file ({}).",
                self.rules_source
                    .as_deref()
                    .unwrap_or("the user rules file")
            ),
            _ if every_command || note.is_some() => {
                format!("Allow {rule} for this session?")
            }
            _ => return vec![request],
        };
        if every_command && verdict == "allow" {
            question.push_str(&format!(
                "\n\n`{rule}` is the whole shell tool: it allows EVERY command (`curl … | sh` too), not just this one."
            ));
        }
        if let Some(note) = note {
            question.push_str(&format!("\n\nIt would change nothing: {note}."));
        }
        self.mode = Mode::Confirm { question, request };
        Vec::new()
    }

    /// Shows an explanation (the answer to [`Request::Explain`]).
    pub fn show_explanation(&mut self, event_id: &str, text: String) {
        let label = self
            .pending
            .iter()
            .find(|p| p.event_id == event_id)
            .map_or_else(|| event_id.to_string(), PendingItem::display_id);
        self.mode = Mode::Explain {
            title: format!("explain {label}"),
            text,
            scroll: 0,
        };
        self.dirty = true;
    }
}

fn refusal(item: &PendingItem, verdict: &str) -> String {
    format!(
        "{} ({}) does not take {verdict}; it takes {}",
        item.display_id(),
        item.event,
        item.verdict_list()
    )
}

fn toggle(slot: &mut Option<String>, value: Option<String>) {
    *slot = if slot.is_some() { None } else { value };
}

pub(super) enum Edit {
    Typing(String),
    Done(String),
    Cancelled,
}

/// One key into a one-line text field.
pub(super) fn edit(mut text: String, key: KeyEvent) -> Edit {
    match key.code {
        KeyCode::Enter => Edit::Done(text),
        KeyCode::Esc => Edit::Cancelled,
        KeyCode::Backspace => {
            text.pop();
            Edit::Typing(text)
        }
        KeyCode::Char('u') if key.modifiers.contains(KeyModifiers::CONTROL) => {
            Edit::Typing(String::new())
        }
        KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
            text.push(c);
            Edit::Typing(text)
        }
        _ => Edit::Typing(text),
    }
}

fn short(id: &str) -> String {
    id.chars().take(8).collect()
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").to_string()
}

/// The project directory's name: `project_dir` (`CLAUDE_PROJECT_DIR`),
/// else the session's `cwd`.
fn project_name(record: &Value) -> Option<String> {
    record["project_dir"]
        .as_str()
        .or(record["cwd"].as_str())
        .and_then(|p| std::path::Path::new(p).file_name())
        .map(|n| n.to_string_lossy().into_owned())
}

/// A feed row from an event record.
fn feed_row(record: &Value, seq: u64) -> FeedRow {
    let time = record["received_at"]
        .as_str()
        .and_then(|t| t.split('T').nth(1))
        .map(|t| t.chars().take(8).collect())
        .unwrap_or_default();
    FeedRow {
        seq,
        event_id: record["id"].as_str().unwrap_or("").to_string(),
        time,
        session: record["session_id"].as_str().map(str::to_owned),
        project: project_name(record),
        harness: record["harness"].as_str().unwrap_or("").to_string(),
        event: record["kind"].as_str().unwrap_or("?").to_string(),
        tool: record["tool"].as_str().map(str::to_owned),
        summary: crate::tail::summary(&record["input"]),
        verdict: None,
        decided_by: None,
        latency_us: None,
        pending: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn event(id: &str, command: &str) -> Value {
        json!({
            "type": "event", "id": id, "received_at": "2026-11-23T19:04:05.123456Z",
            "harness": "claude-code", "session_id": "1fce3faa-62dc-4336-ba9c-8494671dd902",
            "cwd": "/home/dev/project", "kind": "PreToolUse", "tool": "Bash",
            "input": {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": command}},
        })
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn ch(c: char) -> KeyEvent {
        key(KeyCode::Char(c))
    }

    const ID: &str = "019ab0a4-1111-7000-8000-00000000abcd";

    /// A pending `event` frame carrying `facts` (any of the pending facts
    /// given completes the rest with defaults, as the daemon sends them all).
    fn with_pending(facts: Value) -> State {
        let mut state = State::new("/tmp/s", Instant::now(), true);
        let mut frame = json!({"type": "event", "pending": true, "event": event(ID, "npm test")});
        let facts = facts.as_object().unwrap().clone();
        if !facts.is_empty() {
            frame.as_object_mut().unwrap().extend(
                json!({"short_id": "zxcvb", "deadline_ms": 30000, "verdicts": ["allow", "deny"]})
                    .as_object()
                    .unwrap()
                    .clone(),
            );
        }
        frame.as_object_mut().unwrap().extend(facts);
        state.apply_json(&frame);
        state
    }

    #[test]
    fn a_narration_goes_beside_its_sessions_pending_item_and_in_the_feed() {
        let mut state = with_pending(json!({}));
        state.apply_json(
            &json!({"type": "narration", "at": "2026-11-23T19:04:06.000001Z",
            "harness": "claude-code", "session_id": "1fce3faa-62dc-4336-ba9c-8494671dd902",
            "text": "I'm running the tests before I push.", "events": 3, "pending_event_id": ID}),
        );
        assert_eq!(
            state.pending[0].narration.as_deref(),
            Some("I'm running the tests before I push.")
        );
        let row = state.feed.back().expect("a feed line");
        assert_eq!(
            (row.event.as_str(), row.time.as_str()),
            ("NARRATION", "19:04:06")
        );
        assert!(
            crate::approve::plain::describe(&state.pending[0], state.now)
                .contains("  narrator: I'm running the tests before I push.\n")
        );
        // Another session's line stays with it.
        state.apply_json(&json!({"type": "narration", "at": "2026-11-23T19:04:07Z",
            "harness": "codex", "session_id": "other", "text": "x", "events": 1}));
        assert_eq!(
            state.pending[0].narration.as_deref(),
            Some("I'm running the tests before I push.")
        );
    }

    #[test]
    fn a_coverage_alarm_is_a_feed_line_and_news() {
        let mut state = State::new("/s", Instant::now(), false);
        state.apply_json(
            &json!({"type": "coverage_alarm", "at": "2026-11-26T21:04:05.123456Z",
            "harness": "codex", "agent_name": "Codex CLI", "session_id": "1fce3faa-1",
            "project": "webshop", "unjudged": 3, "tool": "Bash",
            "message": "session 1fce3faa (webshop, Codex CLI): 3 tool calls ran unjudged"}),
        );
        let row = state.feed.back().expect("a feed line");
        assert_eq!(row.event, "UNJUDGED");
        assert_eq!(row.time, "21:04:05");
        assert_eq!(row.verdict.as_deref(), Some("unjudged"));
        assert_eq!(
            row.summary,
            "session 1fce3faa (webshop, Codex CLI): 3 tool calls ran unjudged"
        );
        assert!(
            matches!(state.take_news().as_slice(), [News::Alarm(m)] if m.contains("3 tool calls"))
        );
    }

    #[test]
    fn a_welcome_subscribes_then_reads_the_table_and_status() {
        let mut state = State::new("/tmp/s", Instant::now(), true);
        let asks = state.apply_json(
            &json!({"type": "welcome", "v": 1, "server_version": "0.1.0",
                                       "capabilities": ["decide"]}),
        );
        assert_eq!(
            asks,
            [Request::Subscribe, Request::Pending, Request::Status]
        );
        assert_eq!(
            state.link,
            Link::Up {
                version: "0.1.0".into()
            }
        );
        let sub = state.frame(&Request::Subscribe).unwrap();
        assert_eq!(serde_json::to_value(sub).unwrap()["filter"]["runs"], true);
    }

    #[test]
    fn y_allows_once_and_the_decision_removes_the_item() {
        let mut state = with_pending(json!({"deadline_ms": 30000, "verdicts": ["allow", "deny"]}));
        assert_eq!(state.pending.len(), 1);
        assert_eq!(state.take_news(), [News::Waiting(ID.into())]);
        let asks = state.on_key(ch('y'));
        assert_eq!(
            asks,
            [Request::Decide {
                event_id: ID.into(),
                verdict: "allow".into(),
                reason: None,
                remember: Remember::Once,
                rule: None
            }]
        );
        state.apply_json(&json!({"type": "decision", "decision": {
            "event_id": ID, "verdict": "allow", "source": "client:hookd-approve", "latency_us": 1500}}));
        assert!(state.pending.is_empty());
        let row = &state.feed[0];
        assert_eq!(row.verdict.as_deref(), Some("allow"));
        assert_eq!(row.decided_by.as_deref(), Some("client:hookd-approve"));
        assert_eq!(row.latency_us, Some(1500));
    }

    #[test]
    fn n_asks_for_a_reason_with_a_default() {
        let mut state = with_pending(json!({"deadline_ms": 30000}));
        assert!(state.on_key(ch('n')).is_empty());
        assert!(matches!(&state.mode, Mode::Reason { text, .. } if text == DEFAULT_DENY_REASON));
        // Enter on the default denies with it.
        let asks = state.on_key(key(KeyCode::Enter));
        assert!(
            matches!(&asks[..], [Request::Decide { verdict, reason: Some(r), .. }]
            if verdict == "deny" && r == DEFAULT_DENY_REASON)
        );
        // Or the person types their own.
        state.on_key(ch('n'));
        state.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        for c in "not on main".chars() {
            state.on_key(ch(c));
        }
        let asks = state.on_key(key(KeyCode::Enter));
        assert!(
            matches!(&asks[..], [Request::Decide { reason: Some(r), .. }] if r == "not on main")
        );
        // Esc leaves without deciding.
        state.on_key(ch('n'));
        assert!(state.on_key(key(KeyCode::Esc)).is_empty());
        assert_eq!(state.mode, Mode::Normal);
    }

    #[test]
    fn without_suggestions_there_is_no_rule_to_remember() {
        let mut state = with_pending(json!({"deadline_ms": 30000}));
        for c in ['s', 'a', 'N'] {
            assert!(state.on_key(ch(c)).is_empty(), "{c}");
            assert!(
                state
                    .notice
                    .as_deref()
                    .unwrap()
                    .contains("no rule to remember"),
                "{c}: {:?}",
                state.notice
            );
            assert_eq!(state.mode, Mode::Normal);
        }
    }

    #[test]
    fn s_remembers_for_the_session_and_a_confirms_the_rule_first() {
        let mut state = with_pending(json!({
            "deadline_ms": 30000, "short_id": "qwert",
            "suggestions": [
                {"remember": "session", "verdict": "allow", "rule": "Bash(npm test:*)"},
                {"remember": "always", "verdict": "allow", "rule": "Bash(npm:*)"},
            ],
        }));
        let asks = state.on_key(ch('s'));
        assert!(
            matches!(&asks[..], [Request::Decide { remember: Remember::Session, rule: Some(r), verdict, .. }]
            if r == "Bash(npm test:*)" && verdict == "allow")
        );
        assert!(state.on_key(ch('a')).is_empty());
        let Mode::Confirm { question, .. } = &state.mode else {
            panic!("{:?}", state.mode)
        };
        assert!(question.contains("Bash(npm:*)"), "{question}");
        let asks = state.on_key(ch('y'));
        assert!(
            matches!(&asks[..], [Request::Decide { remember: Remember::Always, rule: Some(r), .. }]
            if r == "Bash(npm:*)")
        );
        // N keeps the same rule as a deny; n at the question cancels.
        state.on_key(ch('N'));
        assert!(state.on_key(ch('n')).is_empty());
        assert_eq!(state.notice.as_deref(), Some("cancelled"));
    }

    const OUTVOTED: &str = "the rules still ask about this event: rule ask-npm (ask beats allow); narrow or remove it to stop being asked";

    #[test]
    fn a_says_before_it_writes_that_an_ask_rule_outvotes_the_allow() {
        let mut state = with_pending(json!({
            "deadline_ms": 30000, "short_id": "qwert",
            "suggestions": [
                {"remember": "session", "verdict": "allow", "rule": "Bash(npm test:*)"},
                {"remember": "always", "verdict": "allow", "rule": "Bash(npm test:*)", "note": OUTVOTED},
                {"remember": "always", "verdict": "deny", "rule": "Bash(npm test:*)"},
            ],
        }));
        assert!(state.on_key(ch('a')).is_empty(), "nothing sent yet");
        let Mode::Confirm { question, .. } = &state.mode else {
            panic!("{:?}", state.mode)
        };
        assert!(
            question.contains(&format!("It would change nothing: {OUTVOTED}.")),
            "{question}"
        );
        // The person chooses: n sends nothing.
        assert!(state.on_key(ch('n')).is_empty());
        // N (always deny) wins over the ask: no note.
        state.on_key(ch('N'));
        let Mode::Confirm { question, .. } = &state.mode else {
            panic!("{:?}", state.mode)
        };
        assert!(!question.contains("change nothing"), "{question}");
        state.on_key(ch('y'));
        // The same rule again: the daemon appended nothing, and says so.
        let again = Request::Decide {
            event_id: ID.into(),
            verdict: "allow".into(),
            reason: None,
            remember: Remember::Always,
            rule: Some("Bash(npm test:*)".into()),
        };
        let frame = state.frame(&again).unwrap();
        state.apply_json(
            &json!({"type": "ok", "req": frame.req().unwrap(), "result": {
            "rules_file": "/u/rules.toml", "rule": "Bash(npm test:*)", "already_present": true,
            "note": OUTVOTED}}),
        );
        let notice = state.notice.clone().unwrap();
        assert!(
            notice.contains("nothing added: `Bash(npm test:*)` is already in /u/rules.toml; note: the rules still ask"),
            "{notice}"
        );
    }

    #[test]
    fn the_whole_shell_is_never_one_key_away() {
        let mut state = with_pending(json!({
            "deadline_ms": 30000, "short_id": "qwert",
            "suggestions": [
                {"remember": "session", "verdict": "allow", "rule": "Bash", "every_command": true},
                {"remember": "always", "verdict": "allow", "rule": "Bash", "every_command": true},
            ],
        }));
        assert!(state.on_key(ch('s')).is_empty(), "asks first");
        let Mode::Confirm { question, request } = &state.mode else {
            panic!("{:?}", state.mode)
        };
        assert!(
            question.starts_with("Allow Bash for this session?")
                && question.contains("it allows EVERY command"),
            "{question}"
        );
        assert!(matches!(request, Request::Decide { rule: Some(r), .. } if r == "Bash"));
        assert!(state.on_key(ch('n')).is_empty());
        // With a narrower one, `s` takes it at once.
        let mut state = with_pending(json!({
            "deadline_ms": 30000, "short_id": "qwert",
            "suggestions": [
                {"remember": "session", "verdict": "allow", "rule": "Bash(npm test:*)"},
                {"remember": "session", "verdict": "allow", "rule": "Bash", "every_command": true},
            ],
        }));
        let asks = state.on_key(ch('s'));
        assert!(
            matches!(&asks[..], [Request::Decide { rule: Some(r), .. }] if r == "Bash(npm test:*)"),
            "{asks:?}"
        );
    }

    #[test]
    fn items_are_named_by_short_id_or_the_uuid_s_random_end() {
        let state = with_pending(json!({}));
        let item = &state.pending[0];
        assert_eq!(item.display_id(), "00abcd");
        assert!(item.answers_to("00abcd") && item.answers_to(ID) && item.answers_to("019ab0a4"));
        assert!(!item.answers_to("abc"), "too short to be sure");
        let state = with_pending(json!({"short_id": "kmnpq"}));
        assert_eq!(state.pending[0].display_id(), "kmnpq");
        assert!(state.pending[0].answers_to("KMNPQ"));
    }

    #[test]
    fn the_table_refreshes_a_pushed_item_and_drops_what_it_no_longer_lists() {
        let mut state = State::new("/tmp/s", Instant::now(), true);
        let asks = state.apply_json(&json!({"type": "event", "pending": true,
            "short_id": "kmnpq", "deadline_ms": 9000, "verdicts": ["allow", "deny"],
            "event": event(ID, "ls")}));
        assert!(asks.is_empty(), "a pushed item says all a client needs");
        let frame = state.frame(&Request::Pending).unwrap();
        state.apply_json(&json!({"type": "ok", "req": frame.req().unwrap(), "result": [
            {"event": event(ID, "ls"), "since": "2026-11-23T19:04:05.123456Z", "waiting_ms": 4000,
             "short_id": "kmnpq", "deadline_ms": 5000, "verdicts": ["allow", "deny", "ask"]}
        ]}));
        assert_eq!(state.pending.len(), 1, "kept once");
        assert_eq!(
            state.pending[0].deadline,
            Some(state.now + Duration::from_millis(5000))
        );
        assert!(state.pending[0].accepts("ask"));
        // A table without it: the item is gone.
        let frame = state.frame(&Request::Pending).unwrap();
        state.apply_json(&json!({"type": "ok", "req": frame.req().unwrap(), "result": []}));
        assert!(state.pending.is_empty());
    }

    #[test]
    fn the_feed_is_a_ring_filtered_by_session_tool_verdict_and_text() {
        let mut state = State::new("/tmp/s", Instant::now(), true);
        for i in 0..FEED_CAP + 10 {
            let mut e = event(&format!("id-{i}"), &format!("echo {i}"));
            if i % 2 == 0 {
                e["tool"] = json!("Read");
            }
            state.apply_json(&json!({"type": "event", "pending": false, "event": e}));
        }
        assert_eq!(state.feed.len(), FEED_CAP);
        assert_eq!(state.feed[0].event_id, "id-10");
        state.focus = Pane::Feed;
        state.on_key(ch('T'));
        assert_eq!(
            state.filter.tool.as_deref(),
            Some("Bash"),
            "newest row's tool"
        );
        assert!(state
            .visible_feed()
            .iter()
            .all(|r| r.tool.as_deref() == Some("Bash")));
        state.on_key(ch('/'));
        for c in "echo 5007".chars() {
            state.on_key(ch(c));
        }
        state.on_key(key(KeyCode::Enter));
        assert_eq!(state.visible_feed().len(), 1);
        state.on_key(ch('c'));
        assert!(state.filter.is_empty());
        // Moving up pauses the feed at that row; new events don't move it.
        state.on_key(ch('k'));
        assert!(!state.follow);
        let held = state.selected_row().unwrap().seq;
        state.apply_json(&json!({"type": "event", "pending": false, "event": event("new", "ls")}));
        assert_eq!(state.selected_row().unwrap().seq, held);
        state.on_key(ch(' '));
        assert!(state.follow);
        assert_eq!(state.selected_row().unwrap().event_id, "new");
    }

    #[test]
    fn runs_count_turns_and_cost_and_x_asks_before_aborting() {
        let mut state = State::new("/tmp/s", Instant::now(), true);
        state.apply_json(&json!({"type": "run_start", "run_id": "r1", "prompt": "fix the tests\nplease",
                            "model": "haiku", "received_at": "", "client": "c", "cwd": "/", "pid": 1}));
        state.apply_json(
            &json!({"type": "sdk_message", "run_id": "r1", "received_at": "",
                     "message": {"type": "assistant"}}),
        );
        assert_eq!(state.runs[0].turns, 1);
        assert_eq!(state.runs[0].runtime, None, "a daemon that does not say");
        state.apply_json(
            &json!({"type": "run_start", "run_id": "r2", "prompt": "p", "runtime": "pi",
                            "received_at": "", "client": "c", "cwd": "/", "pid": 2}),
        );
        assert_eq!(state.runs[1].runtime.as_deref(), Some("pi"));
        // A Pi run's assistant messages carry its cost so far.
        state.apply_json(&json!({"type": "sdk_message", "run_id": "r2", "received_at": "",
                                 "message": {"type": "assistant", "runtime": "pi",
                                             "total_cost_usd": 0.0125, "message": {"content": []}}}));
        assert_eq!(
            (state.runs[1].turns, state.runs[1].cost_usd),
            (1, Some(0.0125))
        );
        state.apply_json(
            &json!({"type": "run_done", "run_id": "r2", "received_at": "", "ok": true,
                            "session_id": null, "usage": null, "cost_usd": null, "duration_ms": 1}),
        );
        assert_eq!(state.runs.len(), 1);
        assert_eq!(state.runs[0].prompt, "fix the tests");
        state.apply_json(
            &json!({"type": "sdk_message", "run_id": "r1", "received_at": "",
                            "message": {"type": "result", "num_turns": 3, "total_cost_usd": 0.25}}),
        );
        assert_eq!(
            (state.runs[0].turns, state.runs[0].cost_usd),
            (3, Some(0.25))
        );
        assert!(state.on_key(ch('x')).is_empty());
        assert_eq!(
            state.on_key(ch('y')),
            [Request::Abort {
                run_id: "r1".into()
            }]
        );
        // `m` needs a daemon that steers.
        state.on_key(ch('m'));
        assert!(state.notice.as_deref().unwrap().contains("cannot steer"));
        state.capabilities.push("steer".into());
        state.on_key(ch('m'));
        for c in "also lint".chars() {
            state.on_key(ch(c));
        }
        assert_eq!(
            state.on_key(key(KeyCode::Enter)),
            [Request::Steer {
                run_id: "r1".into(),
                text: "also lint".into()
            }]
        );
        state.apply_json(
            &json!({"type": "run_done", "run_id": "r1", "received_at": "",
                                 "ok": true, "duration_ms": 1}),
        );
        assert!(state.runs.is_empty());
    }

    #[test]
    fn replies_are_told_and_a_decision_elsewhere_closes_the_question() {
        let mut state = with_pending(json!({"short_id": "abcde"}));
        let asks = state.on_key(ch('y'));
        let frame = state.frame(&asks[0]).unwrap();
        state.apply_json(
            &json!({"type": "error", "req": frame.req().unwrap(), "code": "already_decided",
                            "message": "event x was already decided by client:phone"}),
        );
        assert!(state.notice.as_deref().unwrap().contains("client:phone"));
        state.on_key(ch('n'));
        assert!(matches!(state.mode, Mode::Reason { .. }));
        state.apply_json(&json!({"type": "decision", "decision": {
            "event_id": ID, "verdict": "none", "source": "terminal"}}));
        assert_eq!(state.mode, Mode::Normal);
        assert!(state
            .notice
            .as_deref()
            .unwrap()
            .contains("decided elsewhere"));
        let news = state.take_news();
        assert!(news.iter().any(
            |n| matches!(n, News::Resolved { id, by, .. } if id == "abcde" && by == "terminal")
        ));
    }

    #[test]
    fn grants_and_remembered_rules_are_told() {
        let mut state = with_pending(json!({"suggestions": [
            {"remember": "always", "verdict": "allow", "rule": "Bash(npm test:*)"}]}));
        state.on_key(ch('a'));
        let asks = state.on_key(key(KeyCode::Enter));
        let frame = state.frame(&asks[0]).unwrap();
        state.apply_json(&json!({"type": "ok", "req": frame.req().unwrap(),
            "result": {"rules_file": "/home/u/.config/hookd/rules.toml", "rule": "Bash(npm test:*)"}}));
        let notice = state.notice.clone().unwrap();
        assert!(
            notice.contains("added `Bash(npm test:*)` to /home/u/.config/hookd/rules.toml"),
            "{notice}"
        );
        state.apply_json(&json!({"type": "grant", "change": "added", "grant": {
            "id": "qwert", "verdict": "allow", "rule": "Bash(ls:*)", "session_id": "1fce3faa-62dc",
            "created_at": "2026-11-23T19:04:05Z", "from_event": ID, "by": "approve"}}));
        assert_eq!(
            state.notice.as_deref(),
            Some("grant added: allow Bash(ls:*) for session 1fce3faa")
        );
    }

    #[test]
    fn losing_the_daemon_drops_what_can_no_longer_be_decided() {
        let mut state = with_pending(json!({}));
        state.on_key(ch('n'));
        state.disconnected("connection refused", 2);
        assert!(state.pending.is_empty());
        assert_eq!(state.mode, Mode::Normal);
        assert_eq!(state.feed.len(), 1, "the feed stays");
        assert!(matches!(&state.link, Link::Down { reason, .. } if reason == "connection refused"));
    }
}
