//! Answering one hook: event → judgement (rules, then perhaps a client) →
//! the agent's output, always before the forwarder's deadline.
//!
//! Every agent takes the same path: the frame's `harness` names the agent,
//! and its dialect ([`crate::agent::Agent`]) says which of hookd's kinds the
//! event is, whether it is a decision point, what the rules judge (see
//! [`super::controller`]), what an unanswered ask becomes and how the answer
//! is written.
//!
//! The path of a decision point whose rules say `ask` (or that no rule
//! decides, with `route_undecided`):
//! - some subscriber can decide it → it waits in the pending table until a
//!   client decides, its timeout passes, the daemon's deadline passes, or the
//!   daemon stops;
//! - nobody can → its fallback applies at once.
//!
//! The fallback of an `ask` is the agent's own (see
//! [`crate::agent::Agent::unanswered_ask`]): Claude Code's prompt
//! (`permissionDecision:"ask"` on PreToolUse), so a person at the terminal is
//! never left waiting on a daemon nobody watches; Codex's own flow (no
//! opinion), or a deny where the hook fails closed; for Gemini, which would
//! hang on an ask, a deny with the ask's reason. The fallback of an
//! undecided event is "no opinion". The same applies whatever ends the wait
//! (nobody left to decide, the timeout, the run's end, the daemon stopping).
//!
//! With a person at the Claude Code terminal ([`attended`]), Claude Code
//! shows its own permission dialog and the person races the clients: a
//! PreToolUse `ask` never waits (it brings up the dialog and a
//! PermissionRequest), and a held PermissionRequest also ends when the
//! person answers the dialog: the forwarder's connection closes (Claude
//! Code kills the hook on "no"), or the same call's PostToolUse or the
//! turn's end arrives ("yes": the hook is left running). It is then
//! decided as [`Source::Terminal`]. See tests/e2e/FINDINGS-interactive.md.
//!
//! Judging is bounded too: large inputs are evaluated off the async
//! workers, and rules that cannot judge before the deadline (or panic) give
//! the event's fallback.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::controller::{matched_rules, Judgement};
use super::hub::{tool_call_key, ClientDecision, EventMeta, EventNames, Hub, Resolution};
use super::stops::{ChainFields, StopChains};
use super::{unjudged, Shared};
use crate::agent::claude::{output, FailClosed, HookEventKind, InputFields};
use crate::agent::Agent;
use crate::config::Timeout;
use crate::decision::{Answer, Decision, Remember, Source, Verdict};
use crate::event::Event;
use crate::protocol::log::{DecidingLayer, DecisionView};
use crate::protocol::{push_frame, AskedBy, Harness, HookRequest, HookResult, PushKind};
use crate::rules::{Layers, RuleSet};

/// Hook inputs up to this size (the frame's bytes) are judged on the
/// worker that received them; larger ones on a blocking thread, one at a
/// time per [`Shared::evaluations`] slot, so that a slow evaluation never
/// holds up the threads answering every other hook. Below it the hand-off
/// would cost more than the evaluation (benches/throughput.rs;
/// docs/performance.md).
pub const INLINE_EVALUATION_MAX_BYTES: usize = 64 * 1024;

/// The daemon's share of the forwarder's budget: it answers this much
/// earlier than the forwarder gives up, so the reply (and the forwarder's
/// printing) still fits. 10 % of the budget, at least 20 ms, at most 500 ms.
pub fn daemon_budget(forwarder_budget: Duration) -> Duration {
    let margin =
        (forwarder_budget / 10).clamp(Duration::from_millis(20), Duration::from_millis(500));
    forwarder_budget.saturating_sub(margin)
}

pub use crate::hub::RunLink;

/// Answers one hook whose frame was `frame_bytes` long. Never fails: every
/// error path is a fallback.
pub fn answer<'a>(
    req: HookRequest,
    frame_bytes: usize,
    shared: &'a Arc<Shared>,
    shutdown: &'a CancellationToken,
) -> impl Future<Output = HookResult> + Send + 'a {
    answer_in(req, frame_bytes, None, shared, shutdown)
}

/// [`answer`], for the one hook of a forwarder's connection: `peer_gone`
/// is cancelled when the forwarder goes away (Claude Code killed the hook:
/// in an attended session, the person answered its dialog). A pending
/// event then stops waiting and is closed, answered in the terminal.
pub fn answer_from_forwarder<'a>(
    req: HookRequest,
    frame_bytes: usize,
    peer_gone: CancellationToken,
    shared: &'a Arc<Shared>,
    shutdown: &'a CancellationToken,
) -> impl Future<Output = HookResult> + Send + 'a {
    answer_with(req, frame_bytes, None, Some(peer_gone), shared, shutdown)
}

/// [`answer`], for a hook of agent-SDK run `run` (or of none): the same
/// rules, pending table, clients, log and fallbacks; the run's owner also
/// gets the frames, and a run that ends releases its pending events to
/// their fallback.
///
/// A panic while answering ends this hook only: it is answered with its
/// fallback (as if the daemon could not be reached) and the daemon goes on.
/// The panic hook (see [`super::run`]) has logged and counted it.
///
/// Not an `async fn`, nor an `async` block: combinators keep the request
/// and the answering future once, where an async wrapper would keep them
/// twice (a hook that waits for a client lives for minutes; its size is the
/// daemon's memory per pending decision).
pub fn answer_in<'a>(
    req: HookRequest,
    frame_bytes: usize,
    run: Option<&'a RunLink>,
    shared: &'a Arc<Shared>,
    shutdown: &'a CancellationToken,
) -> impl Future<Output = HookResult> + Send + 'a {
    answer_with(req, frame_bytes, run, None, shared, shutdown)
}

fn answer_with<'a>(
    mut req: HookRequest,
    frame_bytes: usize,
    run: Option<&'a RunLink>,
    peer_gone: Option<CancellationToken>,
    shared: &'a Arc<Shared>,
    shutdown: &'a CancellationToken,
) -> impl Future<Output = HookResult> + Send + 'a {
    let in_flight = Gauge::enter(&shared.stats.hooks_in_flight);
    // The reply's id is kept here, once: answering never reads it.
    let id = std::mem::take(&mut req.id);
    let agent = req.harness.agent();
    // What the fallback after a panic needs of the event: its kind (a
    // name would be a string kept by every waiting hook).
    let event_kind = agent.known_kind(InputFields::event_name_of(&req.input).unwrap_or("unknown"));
    let fail_closed = req.fail_closed.max(shared.fail_closed);
    AssertUnwindSafe(answer_unguarded(
        req,
        frame_bytes,
        run,
        peer_gone,
        shared,
        shutdown,
    ))
    .catch_unwind()
    .map(move |answered| {
        drop(in_flight);
        let out = answered.unwrap_or_else(|panic| {
            tracing::error!(
                hook = %id,
                event = ?event_kind,
                panic = super::panic_message(&*panic),
                "answering a hook panicked; it gets its fallback and the daemon goes on"
            );
            shared.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
            agent.fallback_for(event_kind, fail_closed, "internal_error")
        });
        HookResult {
            id,
            exit_code: out.exit_code,
            stdout: out.stdout,
            stderr: out.stderr,
        }
    })
}

/// Answers one hook, step by step: read the event, judge it, record it,
/// wait for a client if it went to one, record the decision.
///
/// Not an `async fn`: one would keep a slot for `req` (128 bytes) for its
/// whole life, long after reading moved it out; here the request goes into
/// the boxed judging future at once, and the waiting state holds a pointer.
fn answer_unguarded<'a>(
    req: HookRequest,
    frame_bytes: usize,
    run: Option<&'a RunLink>,
    peer_gone: Option<CancellationToken>,
    shared: &'a Arc<Shared>,
    shutdown: &'a CancellationToken,
) -> impl Future<Output = output::HookOutput> + Send + 'a {
    // Boxed, and gone once judged: the size of this future is what every
    // waiting hook holds, so it keeps only what waiting needs, not the
    // state of reading and judging.
    let judging = Box::pin(judge_and_record(req, frame_bytes, run, shared, shutdown));
    async move {
        let Recorded {
            hook,
            event,
            judgement,
            route,
            resolution,
            chain,
            summary,
            _entry,
        } = judging.await;
        let judgement = match resolution {
            Some(resolution) => wait(&hook, &event, resolution, peer_gone.as_ref())
                .await
                .settle(judgement, &hook),
            None if route.routed => fallback_of(judgement, Source::Fallback, &hook),
            None => judgement,
        };
        shared.hub.unwatch_dialog(event.id);
        record_decision(
            &hook,
            &event,
            judgement,
            chain.as_deref(),
            summary,
            route.pending,
        )
    }
}

/// A hook judged and recorded: what its wait and its decision need.
struct Recorded<'a> {
    hook: HookContext<'a>,
    /// From here on only the event's ids and names are read.
    event: Judged,
    judgement: Judgement,
    route: Route,
    /// Pending: how a client's decision arrives.
    resolution: Option<oneshot::Receiver<Resolution>>,
    /// What the stop chains need of the input once the answer is known
    /// (`None`: not a stop chain's event). Boxed, as `summary`: every
    /// waiting hook holds this struct.
    chain: Option<Box<ChainFields>>,
    /// The status line's summary of the input, when the decision may be
    /// the status line's last (see [`may_be_shown`]).
    summary: Option<Box<str>>,
    /// Removes the pending entry however the wait ends.
    _entry: Option<PendingEntry<'a>>,
}

/// Reads, judges and records one hook.
async fn judge_and_record<'a>(
    req: HookRequest,
    frame_bytes: usize,
    run: Option<&'a RunLink>,
    shared: &'a Arc<Shared>,
    shutdown: &CancellationToken,
) -> Recorded<'a> {
    let started = Instant::now();
    let deadline = started + daemon_budget(Duration::from_millis(req.deadline_ms));
    let fail_closed = req.fail_closed.max(shared.fail_closed);
    // The generation this event is judged under, whatever reloads happen
    // while it waits.
    let rules = shared.controller.rules();
    // The request's parts move into the event; its id stays for the reply.
    let (event, unjudged) = read_event(
        req.harness,
        req.input,
        req.input_error,
        req.env,
        run,
        shared,
        rules.generation(),
    );
    if unjudged.is_none() {
        super::coverage::note(shared, &event);
    }
    let kind = event.kind();
    let hook = HookContext {
        shared,
        run_link: run,
        copy: event.copy_of.is_some(),
        agent: event.agent(),
        kind,
        fail_closed,
        started,
        deadline,
        attended: attended(&event),
        rules: rules.clone(),
    };
    shared.stats.events.fetch_add(1, Ordering::Relaxed);
    if hook.attended {
        dialog_answered(&event, &shared.hub);
    }

    let judgement = match unjudged {
        Some(judgement) => judgement,
        None => judge_event(&hook, &event, rules, frame_bytes, shutdown).await,
    };
    #[cfg(feature = "fault-injection")]
    super::fault::after_judging(&event.raw);
    let route = route(&hook, &event, &judgement);
    if kind == HookEventKind::SessionEnd && event.copy_of.is_none() {
        if let Some(session) = &event.input.base.session_id {
            super::grants::end_session(shared, session);
        }
    }

    let names = EventNames::of(&meta_of(&event, hook.agent, route.pending));
    let resolution = record_event(&hook, &event, &names, &judgement, route.pending);
    super::judge::note_recent(shared, &event, route.pending);
    let _entry = resolution.is_some().then(|| PendingEntry {
        hub: &shared.hub,
        id: event.id,
    });
    let chain = StopChains::chain_fields(kind, event.fields()).map(Box::new);
    let summary = may_be_shown(&judgement, route, resolution.is_some()).then(|| {
        crate::event::input_summary(&event.raw, super::grants::LAST_DECISION_SUMMARY_CHARS)
            .into_boxed_str()
    });
    Recorded {
        hook,
        // The rest of the event (the input's tree above all) goes now,
        // before a pending event's wait.
        event: Judged::of(event, names),
        judgement,
        route,
        resolution,
        chain,
        summary,
        _entry,
    }
}

/// What every step of answering one hook reads: where it came from, its
/// kind, its budget and the daemon's shared state.
struct HookContext<'a> {
    shared: &'a Arc<Shared>,
    /// The run the hook is of.
    run_link: Option<&'a RunLink>,
    /// A copy of a run's hook: its frames are not its run's.
    copy: bool,
    agent: Agent,
    kind: HookEventKind,
    fail_closed: FailClosed,
    started: Instant,
    /// When the daemon answers at the latest (see [`daemon_budget`]).
    deadline: Instant,
    /// A person sits at the Claude Code terminal (see [`attended`]).
    attended: bool,
    /// The user layer the event is judged under: its revision, and where
    /// its deciding rules are, go on the decision.
    rules: Arc<RuleSet>,
}

impl<'a> HookContext<'a> {
    /// The run whose owner gets this hook's frames (none for a copy: the
    /// owner gets the original).
    fn run(&self) -> Option<&'a RunLink> {
        self.run_link.filter(|_| !self.copy)
    }

    /// The client not to publish to: the run's owner, which gets every
    /// frame of its run directly (or, for a copy, none).
    fn skip(&self) -> Option<u64> {
        self.run_link.map(|r| r.owner.client_id)
    }
}

/// The event of a hook request's `input` (of run `run`, if any), and its
/// judgement if it is not to be judged (a probe, a copy of a run's hook).
fn read_event(
    harness: Harness,
    input: Value,
    input_error: Option<String>,
    env: BTreeMap<String, String>,
    run: Option<&RunLink>,
    shared: &Shared,
    generation: u64,
) -> (Arc<Event>, Option<Judgement>) {
    let mut event = match input_error {
        None => Event::new(harness, input, env),
        Some(error) => {
            let text = match input {
                Value::String(text) => text,
                other => other.to_string(),
            };
            Event::unreadable(harness, text, error, env)
        }
    };
    event.run_id = run.map(|r| r.run_id.to_string());
    let unjudged = unjudged::recognise(&mut event, run, shared, generation);
    if let Some(problem) = &event.input.problem {
        tracing::debug!(event = %event.known_name(), %problem, "hook input not fully typed; kept raw");
    }
    (Arc::new(event), unjudged)
}

/// The judgement of `event` under `rules`: the fallback for an unreadable
/// input, the rules' (and then the session grants') for a decision point,
/// no opinion for an observe-only event.
async fn judge_event(
    hook: &HookContext<'_>,
    event: &Arc<Event>,
    rules: Arc<RuleSet>,
    frame_bytes: usize,
    shutdown: &CancellationToken,
) -> Judgement {
    let generation = rules.generation();
    if event.input_error.is_some() {
        // Nothing to judge: the fallback applies, a block where the hook
        // fails closed, never a silent pass through the rules. What was
        // wrong is the sender's text: it goes into the (redacted) log
        // line, not the daemon's stderr.
        tracing::warn!(event = %event.known_name(), id = %event.id, "hook input is not JSON; answering with the fallback (the event's log line says why)");
        Judgement {
            answer: output::fallback_answer(hook.kind, hook.fail_closed, "unreadable_input"),
            source: Source::Fallback,
            ..Judgement::default_for(generation)
        }
    } else if hook.agent.is_judged(hook.kind) {
        // Boxed: this future's size is the memory every waiting hook holds,
        // and judging's state, gone once judged, would set it. An
        // observe-only event is judged for its context alone (SessionStart).
        let judgement = Box::pin(judge(
            event,
            rules,
            frame_bytes,
            hook.fail_closed,
            hook.shared,
            hook.deadline,
            shutdown,
        ))
        .await;
        if hook.agent.is_decision_point(hook.kind) {
            super::grants::apply(hook.shared, event, judgement)
        } else {
            judgement
        }
    } else {
        // Observe-only: answered at once, never waits on anything.
        Judgement::default_for(generation)
    }
}

/// Where a judged event goes next.
#[derive(Debug, Clone, Copy)]
struct Route {
    /// It is for a client to decide (an `ask`, or undecided under
    /// `route_undecided`): it waits for one, or gets its fallback.
    routed: bool,
    /// Routed, and some subscriber can decide it: it waits in the pending
    /// table.
    pending: bool,
}

fn route(hook: &HookContext<'_>, event: &Event, judgement: &Judgement) -> Route {
    // With a person at the terminal, a PreToolUse `ask` is answered at
    // once: Claude Code shows its dialog and fires PermissionRequest, which
    // waits for clients while the person can answer the dialog. (An
    // undecided PreToolUse under `route_undecided` still waits: answering
    // it would not bring up a dialog.)
    let to_dialog = hook.attended
        && hook.kind == HookEventKind::PreToolUse
        && judgement.answer.verdict == Verdict::Ask;
    let routed = hook.agent.is_decision_point(hook.kind)
        && judgement.enforced
        && !to_dialog
        && (judgement.answer.verdict == Verdict::Ask
            || (judgement.source == Source::Default
                && hook.shared.config().decisions.route_undecided));
    let hub = &hook.shared.hub;
    let pending = routed
        && (hub.has_decider(&meta_of(event, hook.agent, true))
            || (judgement.escalate.is_some() && hub.team_decides()));
    Route { routed, pending }
}

/// Records `event`: logs it, puts it in the pending table when it is
/// `pending` (returning what its wait ends on) and publishes it.
///
/// Redacted for the log (and subscribers that asked), raw for the others.
/// One serialization each, shared by all, and all of it dropped before the
/// wait but the log line (which the pending table keeps): a waiting hook
/// holds as little as it can.
fn record_event(
    hook: &HookContext<'_>,
    event: &Event,
    names: &EventNames,
    judgement: &Judgement,
    pending: bool,
) -> Option<oneshot::Receiver<Resolution>> {
    let shared = hook.shared;
    let meta = meta_of(event, hook.agent, pending);
    let redactor = shared.redactor();
    // The event as it came, written once: when one scan of that text
    // proves there is nothing to hide (nearly every hook), it is the log's
    // line too; else the input is walked and redacted, and the log's line
    // written from what the walk left.
    let mut clean = false;
    let plain = line_of(|buf| {
        clean = redactor.leaves_json_alone(event.view().write_json_str(buf));
    });
    let redacted = (!clean).then(|| {
        let input = redactor.redact_value(&event.raw);
        let view = event
            .view_with_input(&input)
            .redact_text(|text| redactor.redact_str(text));
        (
            matches!(input, Cow::Owned(_)),
            line_of(|buf| view.write_json(buf)),
        )
    });
    let (input_redacted, log_line) = match &redacted {
        Some((changed, line)) => (*changed, line),
        None => (false, &plain),
    };
    // In the table before anyone is told it is pending: a client that
    // decides the instant it sees the event must find it there.
    let (resolution, info) = match pending {
        true => {
            let asked_by = AskedBy {
                rule_ids: judgement.rule_ids.clone(),
                reason: judgement.answer.reason.clone(),
                // What tainted the session, its calls and limits: its
                // details (a URL, a path) redacted as the event is.
                session: judgement
                    .facts
                    .as_ref()
                    .and_then(|f| f.note())
                    .map(|note| redactor.redact_str(&note).into_owned()),
                team_approvals: judgement.escalate.map(|e| e.approvals_required),
            };
            let (resolution, info) = shared.hub.add_pending(
                event.id,
                hook.kind,
                &meta,
                names.clone(),
                log_line.slice(..log_line.len() - 1),
                hook.deadline,
                waits_until(hook, event.name()),
                suggestions_for(event, judgement),
                asked_by,
            );
            (Some(resolution), Some(info))
        }
        false => (None, None),
    };
    if resolution.is_some() && hook.attended && hook.kind == HookEventKind::PermissionRequest {
        if let (Some(session), Some(tool)) = (&event.input.base.session_id, event.tool_name()) {
            let call = tool_call_key(tool, event.tool_input().unwrap_or(&Value::Null));
            shared.hub.watch_dialog(event.id, session, call);
        }
    }
    let mut frames: [Option<Bytes>; 2] = [None, None];
    let mut frame = |redact: bool| {
        let kind = PushKind::Event {
            pending,
            info: info.as_ref(),
        };
        frames[redact as usize]
            .get_or_insert_with(|| match (input_redacted, redact) {
                (true, false) => push_frame(kind, json_of(&plain)),
                _ => push_frame(kind, json_of(log_line)),
            })
            .clone()
    };
    shared.hub.publish(&meta, hook.skip(), &mut frame);
    if let Some(run) = hook.run() {
        run.owner.push(frame(false));
    }
    // Last, so that the line is not copied for the frames above (a copy of
    // `Bytes` is an allocation the first time); still before the decision's.
    let log_line = match redacted {
        Some((_, line)) => line,
        None => plain,
    };
    shared.otlp.push(&log_line);
    shared.log.push(log_line);
    resolution
}

/// When a pending event of kind `name` stops waiting for a client: its
/// configured timeout, and never past the hook's deadline. The pending
/// table's timer ends it then ([`Hub::expire_timeouts`]): a waiting hook
/// holds no timer of its own.
fn waits_until(hook: &HookContext<'_>, name: &str) -> Instant {
    match hook.shared.config().decisions.timeout_for(name) {
        Timeout::After(limit) => hook.deadline.min(hook.started + limit),
        Timeout::Never => hook.deadline,
    }
}

/// Waits for a client to decide pending `event`, until the table times it
/// out (see [`waits_until`]), the forwarder leaves, its run ends or the
/// daemon stops.
///
/// However the wait ends without a client's answer (nobody left, timeout,
/// the run's end, shutdown), the same fallback applies: an `ask` goes to
/// Claude Code's own prompt. A stopping daemon answers like a timeout,
/// whichever of its effects (the subscribers leaving, or the pending table
/// ending every event, [`Hub::expire_timeouts`]) reaches this hook first:
/// the hook does not watch the shutdown itself.
async fn wait(
    hook: &HookContext<'_>,
    event: &Judged,
    resolution: oneshot::Receiver<Resolution>,
    peer_gone: Option<&CancellationToken>,
) -> WaitEnd {
    let shared = hook.shared;
    // Boxed, and only for a hook that has one: waiting on a token is a
    // waker's worth of state, which every other waiting hook (a socket
    // client's, the HTTP face's) would hold too.
    let gone = match (peer_gone, hook.run()) {
        (Some(forwarder), _) => Some(Box::pin(gone(forwarder, Gone::Forwarder))),
        (None, Some(run)) => Some(Box::pin(gone(&run.ended, Gone::Run))),
        (None, None) => None,
    };
    let gone = async {
        match gone {
            Some(gone) => gone.await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        resolved = resolution => match resolved {
            Ok(Resolution::Decided(decided)) => {
                shared.stats.client_decisions.fetch_add(1, Ordering::Relaxed);
                WaitEnd::Decided(decided)
            }
            Ok(Resolution::Terminal) => WaitEnd::Terminal,
            // The pending table's timer ended it (and took it out).
            Ok(Resolution::TimedOut) => {
                shared.stats.timeouts.fetch_add(1, Ordering::Relaxed);
                WaitEnd::Fallback(Source::Timeout)
            }
            Ok(Resolution::Abandoned) | Err(_) => WaitEnd::Fallback(Source::Fallback),
        },
        what = gone => match what {
            // Claude Code kills a hook whose dialog the person answered
            // (no, or Esc); anything else that ends a forwarder early
            // (a killed CLI) leaves nobody to answer either.
            Gone::Forwarder if hook.attended => {
                shared.hub.finish(event.id, "terminal (answered in Claude Code)");
                WaitEnd::Terminal
            }
            Gone::Forwarder => {
                shared.hub.finish(event.id, "fallback (the hook went away)");
                WaitEnd::Fallback(Source::Fallback)
            }
            Gone::Run => {
                shared.hub.finish(event.id, "fallback (run ended)");
                WaitEnd::Fallback(Source::Fallback)
            }
        },
    }
}

/// How a pending event's wait ended.
///
/// Not the judgement itself: the judgement stays where it is while the
/// hook waits (moved into the wait, it would be held twice: the size of
/// this future is the daemon's memory per pending decision).
enum WaitEnd {
    /// A client decided.
    Decided(Box<ClientDecision>),
    /// The person answered in Claude Code's own dialog.
    Terminal,
    /// Nobody decided (the source says why): the fallback applies.
    Fallback(Source),
}

impl WaitEnd {
    /// `judgement` once its wait ended this way.
    fn settle(self, judgement: Judgement, hook: &HookContext<'_>) -> Judgement {
        match self {
            WaitEnd::Decided(decided) => {
                let ClientDecision {
                    answer,
                    client,
                    remembered,
                } = *decided;
                let (remembered, grant_rule) = remembered.unzip();
                Judgement {
                    answer,
                    source: Source::Client(client),
                    grant_rule,
                    remembered,
                    ..judgement
                }
            }
            WaitEnd::Terminal => answered_in_terminal(judgement),
            WaitEnd::Fallback(source) => fallback_of(judgement, source, hook),
        }
    }
}

/// Records the decision on `event`: the counters, its stop chain, the
/// status line's last decision, the log and the subscribers. Returns what
/// the agent is answered (nothing in permissive mode).
fn record_decision(
    hook: &HookContext<'_>,
    event: &Judged,
    judgement: Judgement,
    chain: Option<&ChainFields>,
    summary: Option<Box<str>>,
    pending: bool,
) -> output::HookOutput {
    let shared = hook.shared;
    if matches!(judgement.source, Source::Fallback | Source::Timeout) {
        shared.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
    }
    record_stop_chain(hook, &judgement, chain);
    let out = if judgement.enforced {
        hook.agent.render(hook.kind, &judgement.answer)
    } else {
        output::HookOutput::default()
    };
    let rules = matched_rules(
        &hook.rules,
        judgement.project_rules.as_deref(),
        &judgement.rule_ids,
    );
    let layer = DecidingLayer::of(&judgement.source, &rules);
    let decision = Decision {
        decision_id: crate::event::new_id(),
        event_id: event.id,
        run_id: event.run_id.clone(),
        answer: judgement.answer,
        source: judgement.source,
        rule_ids: judgement.rule_ids,
        grant_rule: judgement.grant_rule,
        remembered: judgement.remembered,
        generation: judgement.generation,
        latency_us: hook.started.elapsed().as_micros() as u64,
        layer: Some(layer),
        rules,
        revision: Some(hook.rules.revision().clone()),
        project_revision: judgement.project_rules.map(|p| p.revision().clone()),
        facts: judgement.facts.map(|facts| *facts),
        judgements: judgement
            .judging
            .map(|j| {
                j.answers
                    .iter()
                    .filter_map(|v| serde_json::to_value(v).ok())
                    .collect()
            })
            .unwrap_or_default(),
        signals: judgement.signals.map(|s| s.0).unwrap_or_default(),
    };
    if shown_as_last(judgement.enforced, &decision.answer, &decision.source) {
        super::grants::note_last_decision(
            shared,
            event.names.name(),
            event.names.tool(),
            summary.map(str::into_string).unwrap_or_default(),
            &decision,
        );
    }
    publish_decision(hook, event, &decision, judgement.enforced, pending);
    out
}

/// Whether a decision becomes the status line's last decision: one the
/// agent is told, with an opinion, judged (not a copy's or a probe's).
fn shown_as_last(enforced: bool, answer: &Answer, source: &Source) -> bool {
    enforced
        && answer.verdict != Verdict::NoOpinion
        && !matches!(source, Source::Copy | Source::Probe)
}

/// Whether the decision on an event judged `judgement` and routed `route`
/// may be shown as the status line's last ([`shown_as_last`]), so that its
/// input's summary is needed: when it waits for a client or gets its
/// fallback, the answer is not known yet; else it is the judgement's. Most
/// hooks get no opinion, and their summary (about 1 900 instructions a
/// hook) is not made.
fn may_be_shown(judgement: &Judgement, route: Route, pending: bool) -> bool {
    pending
        || route.routed
        || shown_as_last(judgement.enforced, &judgement.answer, &judgement.source)
}

/// Counts what was sent for a stop chain to go on or not (rules'
/// `max_blocks`). Copies and probes are not the chain's: a copy's "no
/// opinion" racing its run's judged original must not reset the count.
fn record_stop_chain(hook: &HookContext<'_>, judgement: &Judgement, chain: Option<&ChainFields>) {
    if matches!(judgement.source, Source::Copy | Source::Probe) {
        return;
    }
    let blocked = judgement.enforced && judgement.answer.verdict == Verdict::Deny;
    let continuation = blocked
        .then(|| hook.agent.continuation_prompt(hook.kind, &judgement.answer))
        .flatten();
    hook.shared.controller.stop_chains().record(
        hook.kind,
        chain.map(ChainFields::fields).unwrap_or_default(),
        blocked,
        continuation,
    );
}

/// Counts `decision` and hands it on: to the metrics, the subscribers and
/// the run that own the event (redacted for those that asked), then the
/// log and the OTLP exporter.
fn publish_decision(
    hook: &HookContext<'_>,
    event: &Judged,
    decision: &Decision,
    enforced: bool,
    pending: bool,
) {
    let shared = hook.shared;
    tracing::debug!(event = %event.known_name(), verdict = %decision.answer.verdict, source = %decision.source, "decided");
    shared.stats.decisions.fetch_add(1, Ordering::Relaxed);
    // A client's answer (reason, context, rewritten input) is redacted for
    // the log and for subscribers that asked, like the event's input.
    let redacted_decision = match shared.redactor().redact_answer(&decision.answer) {
        Cow::Borrowed(_) => None,
        Cow::Owned(answer) => Some(Decision {
            answer,
            ..decision.clone()
        }),
    };
    let decision_line = line_of(|buf| {
        DecisionView::of(redacted_decision.as_ref().unwrap_or(decision), enforced).write_json(buf)
    });
    shared.metrics.record_decision(hook.kind, decision);
    let meta = event.meta(hook.agent, pending);
    // Built only if someone will receive it (most hooks have no subscriber).
    let mut decision_frames: [Option<Bytes>; 2] = [None, None];
    let mut frame = |redact: bool| {
        decision_frames[redact as usize]
            .get_or_insert_with(|| match (&redacted_decision, redact) {
                (Some(_), false) => {
                    let raw = serde_json::to_vec(&DecisionView::of(decision, enforced))
                        .expect("records serialize");
                    push_frame(PushKind::Decision, &raw)
                }
                _ => push_frame(PushKind::Decision, json_of(&decision_line)),
            })
            .clone()
    };
    shared.hub.publish(&meta, hook.skip(), &mut frame);
    if let Some(run) = hook.run() {
        run.owner.push(frame(false));
    }
    // Last, as the event's line (see `record_event`).
    shared.otlp.push(&decision_line);
    shared.log.push(decision_line);
}

/// The rules' judgement of decision point `event`, bounded by `deadline`
/// and by shutdown. Inputs larger than [`INLINE_EVALUATION_MAX_BYTES`] are
/// evaluated on a blocking thread; a project seen for the first time has
/// its rules file loaded off the async workers (see
/// [`super::controller`]). When the rules cannot judge in time, or
/// evaluating them panicked, the event's fallback applies (a deny where
/// the hook is fail-closed) and the log says so.
async fn judge(
    event: &Arc<Event>,
    rules: Arc<RuleSet>,
    frame_bytes: usize,
    fail_closed: FailClosed,
    shared: &Arc<Shared>,
    deadline: Instant,
    shutdown: &CancellationToken,
) -> Judgement {
    let generation = rules.generation();
    let work = async {
        let layers = shared.controller.layers(event, rules).await;
        let signals = shared
            .controller
            .signals_for(event, &shared.config().signals)
            .await;
        let first = if frame_bytes <= INLINE_EVALUATION_MAX_BYTES {
            std::panic::catch_unwind(AssertUnwindSafe(|| {
                evaluate(shared, event, &layers, signals)
            }))
            .map(|judgement| (judgement, layers))
            .map_err(|_| "internal_error")
        } else {
            let slot = shared
                .evaluations
                .clone()
                .acquire_owned()
                .await
                .expect("the evaluation slots are never closed");
            let (shared, event) = (shared.clone(), event.clone());
            tokio::task::spawn_blocking(move || {
                // Held until the evaluation really ends, even when the hook
                // stopped waiting for it at its deadline.
                let _slot = slot;
                let judgement = evaluate(&shared, &event, &layers, signals);
                (judgement, layers)
            })
            .await
            .map_err(|e| {
                if e.is_panic() {
                    "internal_error"
                } else {
                    "shutting_down"
                }
            })
        };
        let (judgement, layers) = first?;
        // Judge rules matched: their model's answers, then the rules again
        // (no slot held, no lock: other hooks go on meanwhile).
        super::judge::with_answers(
            shared,
            event,
            &layers,
            judgement,
            deadline,
            frame_bytes <= INLINE_EVALUATION_MAX_BYTES,
        )
        .await
    };
    // Nearly always done at the first poll (known project, small input):
    // then no timer is set up.
    let mut work = std::pin::pin!(work);
    let outcome = match (&mut work).now_or_never() {
        Some(outcome) => outcome,
        None => tokio::select! {
            biased;
            outcome = work => outcome,
            _ = tokio::time::sleep_until(deadline.into()) => Err("rules_too_slow"),
            _ = shutdown.cancelled() => Err("shutting_down"),
        },
    };
    outcome.unwrap_or_else(|why| {
        if why == "shutting_down" {
            tracing::debug!(event = %event.known_name(), id = %event.id, "hookd is stopping; the event gets its fallback");
        } else {
            tracing::warn!(event = %event.known_name(), id = %event.id, why, "the rules could not judge this event; its fallback applies");
        }
        Judgement {
            answer: output::fallback_answer(event.kind(), fail_closed, why),
            source: Source::Fallback,
            enforced: shared.controller.enforced(),
            ..Judgement::default_for(generation)
        }
    })
}

fn evaluate(
    shared: &Shared,
    event: &Event,
    layers: &Layers,
    signals: Option<crate::rules::signal::Signals>,
) -> Judgement {
    #[cfg(feature = "fault-injection")]
    super::fault::while_judging(&event.raw);
    shared.controller.judge_with(event, layers, signals)
}

/// The facts about `event` that subscribers' filters look at.
fn meta_of(event: &Event, agent: Agent, pending: bool) -> EventMeta<'_> {
    EventMeta {
        kind: event.name(),
        agent,
        session: event.input.base.session_id.as_deref(),
        tool: event.tool_name(),
        decision_point: event.resolved.decision_point,
        pending,
    }
}

/// What a hook reads of its event once it is judged and recorded: a
/// pending event holds this, not the event, while it waits for a client
/// (the daemon's memory per pending decision).
struct Judged {
    id: Uuid,
    run_id: Option<String>,
    kind: HookEventKind,
    /// Shared with the pending table's entry, when there is one.
    names: EventNames,
}

impl Judged {
    /// What is kept of `event`, whose names are `names`.
    fn of(event: Arc<Event>, names: EventNames) -> Judged {
        let (id, kind) = (event.id, event.kind());
        let run_id = match Arc::try_unwrap(event) {
            Ok(event) => event.run_id,
            Err(event) => event.run_id.clone(),
        };
        Judged {
            id,
            run_id,
            kind,
            names,
        }
    }

    fn name(&self) -> &str {
        self.names.name()
    }

    /// See [`Event::known_name`].
    fn known_name(&self) -> &str {
        match self.kind {
            HookEventKind::Unknown => "unknown",
            _ => self.name(),
        }
    }

    fn meta(&self, agent: Agent, pending: bool) -> EventMeta<'_> {
        EventMeta {
            kind: self.names.name(),
            agent,
            session: self.names.session(),
            tool: self.names.tool(),
            decision_point: agent.is_decision_point(self.kind),
            pending,
        }
    }
}

/// Counts one hook in flight while it lives (a panic included).
struct Gauge<'a>(&'a AtomicU64);

impl<'a> Gauge<'a> {
    fn enter(gauge: &'a AtomicU64) -> Gauge<'a> {
        gauge.fetch_add(1, Ordering::Relaxed);
        Gauge(gauge)
    }
}

impl Drop for Gauge<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Takes a pending event out of the table however its hook ends: every
/// ordinary path has done so already (this is then a no-op); after a panic
/// it keeps a dead entry from being listed and decided.
struct PendingEntry<'a> {
    hub: &'a Hub,
    id: Uuid,
}

impl Drop for PendingEntry<'_> {
    fn drop(&mut self) {
        self.hub.finish(self.id, "fallback (internal error)");
    }
}

/// What went away from under a waiting hook.
#[derive(Debug, Clone, Copy)]
enum Gone {
    /// Its forwarder (Claude Code killed the hook).
    Forwarder,
    /// The agent-SDK run it belongs to ended.
    Run,
}

/// Resolves when `token` is cancelled, saying what went (`what`).
async fn gone(token: &CancellationToken, what: Gone) -> Gone {
    token.cancelled().await;
    what
}

/// Whether a person sits at the Claude Code terminal this hook came from:
/// Claude Code 2.1.330 sets `CLAUDE_CODE_SESSION_ATTENDED=1` for hooks of
/// an interactive session, `0` for `-p` and SDK sessions
/// (tests/e2e/FINDINGS-interactive.md). Only then does it show its own
/// permission dialog.
pub fn attended(event: &Event) -> bool {
    event.harness == Harness::ClaudeCode
        && event
            .env
            .get("CLAUDE_CODE_SESSION_ATTENDED")
            .is_some_and(|v| v == "1")
}

/// Ends the pending PermissionRequests whose dialog `event` shows was
/// answered in the terminal: the tool ran (PostToolUse, PostToolUseFailure
/// for the same call: the person said yes), or the turn is over (Stop, a
/// new prompt, the session's end). A "no" needs nothing here: Claude Code
/// kills the hook, and its forwarder's connection closes.
fn dialog_answered(event: &Event, hub: &Hub) {
    let Some(session) = event.input.base.session_id.as_deref() else {
        return;
    };
    let call = match event.kind() {
        HookEventKind::PostToolUse | HookEventKind::PostToolUseFailure => match event.tool_name() {
            Some(tool) => Some(tool_call_key(
                tool,
                event.tool_input().unwrap_or(&Value::Null),
            )),
            None => return,
        },
        HookEventKind::Stop
        | HookEventKind::StopFailure
        | HookEventKind::UserPromptSubmit
        | HookEventKind::SessionEnd => None,
        _ => return,
    };
    let ended = hub.answered_in_terminal(session, call);
    if ended > 0 {
        tracing::debug!(session, ended, event = %event.known_name(), "answered in Claude Code's dialog");
    }
}

/// A pending event the person answered in Claude Code's dialog: nobody
/// reads this hook's answer any more; "no opinion", logged as `terminal`.
fn answered_in_terminal(judgement: Judgement) -> Judgement {
    Judgement {
        answer: Answer::no_opinion(),
        source: Source::Terminal,
        ..judgement
    }
}

/// What applies when a routed event gets no client decision: an `ask`
/// becomes what `agent` does with an unanswered ask (Claude Code's own
/// prompt, Codex's own flow, a deny for Gemini); an undecided event gets no
/// opinion. The rule ids stay, so the log shows which rule asked.
fn fallback_of(judgement: Judgement, source: Source, hook: &HookContext<'_>) -> Judgement {
    let answer = if judgement.answer.verdict == Verdict::Ask {
        hook.agent
            .unanswered_ask(hook.kind, hook.fail_closed, judgement.answer)
    } else {
        Answer::no_opinion()
    };
    Judgement {
        answer,
        source,
        ..judgement
    }
}

/// The rules a person may remember an answer on `event` as: those of the
/// Claude-shaped inputs its agent's dialect maps it onto (a Gemini
/// `run_shell_command` is suggested as `Bash(…)`, one entry per file of a
/// Codex patch), in order, without repeats. An allow that would change
/// nothing, by the `judgement` that made the event wait, carries a note
/// saying why: an `always` rule when `ask` rules asked (ask beats allow),
/// a `session` grant when an enforced policy asked.
fn suggestions_for(event: &Event, judgement: &Judgement) -> Vec<crate::protocol::Suggestion> {
    let mut all: Vec<crate::protocol::Suggestion> = Vec::new();
    for input in event.rule_inputs() {
        for suggestion in crate::grant::suggestions(&input) {
            if !all.contains(&suggestion) {
                all.push(suggestion);
            }
        }
    }
    let asked_by_rules =
        judgement.source == Source::Rule && judgement.answer.verdict == Verdict::Ask;
    for suggestion in all.iter_mut().filter(|s| s.verdict == Verdict::Allow) {
        suggestion.note = match (suggestion.remember, &judgement.enforced_by) {
            (Remember::Always, _) if asked_by_rules => {
                crate::grant::outvoted(Verdict::Ask, &judgement.rule_ids, Verdict::Allow)
            }
            (Remember::Session, Some(policy)) if asked_by_rules => {
                Some(crate::grant::held_by_policy(policy, &judgement.rule_ids))
            }
            _ => None,
        };
    }
    // Kept by the pending table while the event waits.
    all.shrink_to_fit();
    all
}

/// A line's JSON, without its newline.
fn json_of(line: &Bytes) -> &[u8] {
    &line[..line.len() - 1]
}

/// The JSON `write` appends and a newline, in one allocation of its size:
/// written into this thread's buffer (grown to the largest line yet, and
/// kept), then copied out, where writing into a new `Vec` grows it from
/// 128 bytes by doubling, four or five allocations a line.
fn line_of(write: impl FnOnce(&mut Vec<u8>)) -> Bytes {
    /// A buffer grown past this by a huge line is let go of after it.
    const KEEP: usize = 64 * 1024;
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with_borrow_mut(|buf| {
        buf.clear();
        write(buf);
        buf.push(b'\n');
        let line = Bytes::copy_from_slice(buf);
        if buf.capacity() > KEEP {
            *buf = Vec::new();
        }
        line
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_answers_before_the_forwarder_gives_up() {
        for ms in [0u64, 10, 100, 1_000, 25_000, 600_000] {
            let budget = Duration::from_millis(ms);
            let ours = daemon_budget(budget);
            assert!(ours < budget || ms == 0, "{ms}");
            assert!(
                budget - ours >= Duration::from_millis(20).min(budget),
                "{ms}"
            );
        }
        assert_eq!(
            daemon_budget(Duration::from_secs(25)),
            Duration::from_millis(24_500)
        );
        assert_eq!(
            daemon_budget(Duration::from_secs(1)),
            Duration::from_millis(900)
        );
    }
}
