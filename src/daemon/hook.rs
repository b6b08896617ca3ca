//! Answering one hook: event → judgement (rules, then perhaps a client) →
//! Claude Code output, always before the forwarder's deadline.
//!
//! The path of a decision point whose rules say `ask` (or that no rule
//! decides, with `route_undecided`):
//! - some subscriber can decide it → it waits in the pending table until a
//!   client decides, its timeout passes, the daemon's deadline passes, or the
//!   daemon stops;
//! - nobody can → its fallback applies at once.
//!
//! The fallback of an `ask` is Claude Code's own prompt
//! (`permissionDecision:"ask"` on PreToolUse): a person at the terminal is
//! never left waiting on a daemon nobody watches. The fallback of an
//! undecided event is "no opinion". The same applies whatever ends the wait
//! (nobody left to decide, the timeout, the run's end, the daemon stopping).
//!
//! Judging is bounded too: large inputs are evaluated off the async
//! workers, and rules that cannot judge before the deadline (or panic) give
//! the event's fallback.

use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::controller::Judgement;
use super::hub::{ClientQueue, EventMeta, Hub, Resolution};
use super::stops::StopChains;
use super::{unjudged, Shared};
use crate::agent::claude::{output, FailClosed, HookEventKind};
use crate::config::Timeout;
use crate::decision::{Answer, Decision, Source, Verdict};
use crate::event::Event;
use crate::protocol::log::{DecisionView, EventView};
use crate::protocol::{push_frame, HookRequest, HookResult, PushKind};
use crate::rules::{Layers, RuleSet};

/// Hook inputs up to this size (the frame's bytes) are judged on the
/// worker that received them; larger ones on a blocking thread, one at a
/// time per [`Shared::evaluations`] slot, so that a slow evaluation never
/// holds up the threads answering every other hook. Below it the hand-off
/// would cost more than the evaluation (benches/throughput.rs; README,
/// Performance).
pub const INLINE_EVALUATION_MAX_BYTES: usize = 64 * 1024;

/// The daemon's share of the forwarder's budget: it answers this much
/// earlier than the forwarder gives up, so the reply (and the forwarder's
/// printing) still fits. 10 % of the budget, at least 20 ms, at most 500 ms.
pub fn daemon_budget(forwarder_budget: Duration) -> Duration {
    let margin =
        (forwarder_budget / 10).clamp(Duration::from_millis(20), Duration::from_millis(500));
    forwarder_budget.saturating_sub(margin)
}

/// The agent-SDK run a hook came from (see [`super::runs`]).
#[derive(Debug, Clone)]
pub struct RunLink {
    /// The run's id, recorded on its events and decisions.
    pub run_id: Arc<str>,
    /// The connection that started the run: it gets every frame of its
    /// run, whatever its subscription.
    pub owner: ClientQueue,
    /// Cancelled when the run ends: its events stop waiting for clients.
    pub ended: CancellationToken,
    /// The adapter registered `canUseTool`: the SDK's PermissionRequest
    /// hook is then a copy of the `canUseTool` call beside it.
    pub can_use_tool: bool,
}

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
    let in_flight = Gauge::enter(&shared.stats.hooks_in_flight);
    let id = req.id.clone();
    let kind = HookEventKind::from_name(
        req.input
            .get("hook_event_name")
            .and_then(Value::as_str)
            .unwrap_or(""),
    );
    let fail_closed = req.fail_closed.max(shared.fail_closed);
    AssertUnwindSafe(answer_unguarded(req, frame_bytes, run, shared, shutdown))
        .catch_unwind()
        .map(move |answered| {
            drop(in_flight);
            answered.unwrap_or_else(|panic| {
                tracing::error!(
                    hook = %id,
                    event = %kind,
                    panic = super::panic_message(&*panic),
                    "answering a hook panicked; it gets its fallback and the daemon goes on"
                );
                shared.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
                let out = output::fallback(kind, fail_closed, "internal_error");
                HookResult {
                    id,
                    exit_code: out.exit_code,
                    stdout: out.stdout,
                    stderr: out.stderr,
                }
            })
        })
}

async fn answer_unguarded(
    req: HookRequest,
    frame_bytes: usize,
    run: Option<&RunLink>,
    shared: &Arc<Shared>,
    shutdown: &CancellationToken,
) -> HookResult {
    let started = Instant::now();
    let deadline = started + daemon_budget(Duration::from_millis(req.deadline_ms));
    let fail_closed = req.fail_closed.max(shared.fail_closed);
    // The generation this event is judged under, whatever reloads happen
    // while it waits.
    let rules = shared.controller.rules();
    // Built in a block of its own: a named, shadowed `Event` would keep its
    // storage in this future's state for as long as the hook waits.
    let (event, unjudged) = {
        let mut event = match req.input_error {
            None => Event::new(req.harness, req.input, req.env),
            Some(error) => {
                let text = match req.input {
                    serde_json::Value::String(text) => text,
                    other => other.to_string(),
                };
                Event::unreadable(req.harness, text, error, req.env)
            }
        };
        event.run_id = run.map(|r| r.run_id.to_string());
        // Probes and copies of a run's hooks: answered at once, unjudged.
        let unjudged = unjudged::recognise(&mut event, run, shared, rules.generation());
        (Arc::new(event), unjudged)
    };
    let skip = run.map(|r| r.owner.client_id);
    // A copy's frames are not its run's: the owner gets the original.
    let run = run.filter(|_| event.copy_of.is_none());
    if let Some(problem) = &event.input.problem {
        tracing::debug!(event = %event.name(), %problem, "hook input not fully typed; kept raw");
    }
    let kind = event.kind();
    shared.stats.events.fetch_add(1, Ordering::Relaxed);

    let judgement = if let Some(judgement) = unjudged {
        judgement
    } else if let Some(error) = &event.input_error {
        // Nothing to judge: the fallback applies, a block where the hook
        // fails closed, never a silent pass through the rules.
        tracing::warn!(event = %event.name(), %error, "hook input is not JSON; answering with the fallback");
        Judgement {
            answer: output::fallback_answer(kind, fail_closed, "unreadable_input"),
            source: Source::Fallback,
            ..Judgement::default_for(rules.generation())
        }
    } else if kind.is_decision_point() {
        // Boxed: this future's size is the memory every waiting hook holds,
        // and judging's state, gone once judged, would set it.
        Box::pin(judge(
            &event,
            rules,
            frame_bytes,
            fail_closed,
            shared,
            deadline,
            shutdown,
        ))
        .await
    } else {
        // Observe-only: answered at once, never waits on anything.
        Judgement::default_for(rules.generation())
    };
    #[cfg(feature = "fault-injection")]
    super::fault::after_judging(&event.raw);
    let routed = kind.is_decision_point()
        && judgement.enforced
        && (judgement.answer.verdict == Verdict::Ask
            || (judgement.source == Source::Default && shared.config.decisions.route_undecided));
    let pending = routed && shared.hub.has_decider(&meta_of(&event, true));

    // Record the event: redacted for the log (and subscribers that asked),
    // raw for the others. One serialization each, shared by all, and all
    // of it dropped before the wait but the log line (which the pending
    // table keeps): a waiting hook holds as little as it can.
    let resolution = {
        let meta = meta_of(&event, pending);
        let redacted = shared.redactor.redact_value(&event.raw);
        let log_line = line(
            &serde_json::to_vec(&EventView::with_input(&event, &redacted))
                .expect("records serialize"),
        );
        let log_json = log_line.slice(..log_line.len() - 1);
        shared.log.push(log_line);
        // In the table before anyone is told it is pending: a client that
        // decides the instant it sees the event must find it there.
        let resolution = pending.then(|| {
            shared
                .hub
                .add_pending(event.id, kind, &meta, log_json.clone(), deadline)
        });
        let mut frames: [Option<Bytes>; 2] = [None, None];
        let mut frame = |redact: bool| {
            frames[redact as usize]
                .get_or_insert_with(|| match (&redacted, redact) {
                    (Cow::Owned(_), false) => {
                        let raw =
                            serde_json::to_vec(&EventView::of(&event)).expect("records serialize");
                        push_frame(PushKind::Event { pending }, &raw)
                    }
                    _ => push_frame(PushKind::Event { pending }, &log_json),
                })
                .clone()
        };
        shared.hub.publish(&meta, skip, &mut frame);
        if let Some(run) = run {
            run.owner.push(frame(false));
        }
        resolution
    };
    let _entry = resolution.is_some().then(|| PendingEntry {
        hub: &shared.hub,
        id: event.id,
    });
    // What the stop chains need of the input once the answer is known.
    let chain = StopChains::chain_fields(kind, &event.raw);
    // From here on only the event's ids and names are read: the rest (the
    // input's tree above all) goes now, before a pending event's wait.
    let event = Judged::from(event);

    let judgement = if let Some(resolution) = resolution {
        let wait_until = match shared.config.decisions.timeout_for(event.name()) {
            Timeout::After(limit) => deadline.min(started + limit),
            Timeout::Never => deadline,
        };
        // However the wait ends without a client's answer (nobody left,
        // timeout, the run's end, shutdown), the same fallback applies: an
        // `ask` goes to Claude Code's own prompt. A stopping daemon answers
        // like a timeout, whichever of its effects (the subscribers leaving,
        // or the shutdown signal) reaches this hook first.
        tokio::select! {
            resolved = resolution => match resolved {
                Ok(Resolution::Decided { answer, client }) => {
                    shared.stats.client_decisions.fetch_add(1, Ordering::Relaxed);
                    Judgement { answer, source: Source::Client(client), ..judgement }
                }
                Ok(Resolution::Abandoned) | Err(_) => fallback_of(judgement, Source::Fallback),
            },
            _ = tokio::time::sleep_until(wait_until.into()) => {
                shared.hub.finish(event.id, "timeout");
                shared.stats.timeouts.fetch_add(1, Ordering::Relaxed);
                fallback_of(judgement, Source::Timeout)
            }
            _ = run_ended(run) => {
                shared.hub.finish(event.id, "fallback (run ended)");
                fallback_of(judgement, Source::Fallback)
            }
            _ = shutdown.cancelled() => {
                shared.hub.finish(event.id, "shutdown");
                fallback_of(judgement, Source::Fallback)
            }
        }
    } else if routed {
        fallback_of(judgement, Source::Fallback)
    } else {
        judgement
    };
    if matches!(judgement.source, Source::Fallback | Source::Timeout) {
        shared.stats.fallbacks.fetch_add(1, Ordering::Relaxed);
    }
    // What was sent decides whether a stop chain goes on (rules' `max_blocks`).
    // Copies and probes are not the chain's: a copy's "no opinion" racing
    // its run's judged original must not reset the count.
    if !matches!(judgement.source, Source::Copy | Source::Probe) {
        let blocked = judgement.enforced && judgement.answer.verdict == Verdict::Deny;
        shared
            .controller
            .stop_chains()
            .record(kind, &chain, blocked);
    }

    let out = if judgement.enforced {
        output::render(kind, &judgement.answer)
    } else {
        output::HookOutput::default()
    };
    let decision = Decision {
        decision_id: crate::event::new_id(),
        event_id: event.id,
        run_id: event.run_id.clone(),
        answer: judgement.answer,
        source: judgement.source,
        rule_ids: judgement.rule_ids,
        generation: judgement.generation,
        latency_us: started.elapsed().as_micros() as u64,
    };
    tracing::debug!(event = %event.name(), verdict = %decision.answer.verdict, source = %decision.source, "decided");
    shared.stats.decisions.fetch_add(1, Ordering::Relaxed);
    // A client's answer (reason, context, rewritten input) is redacted for
    // the log and for subscribers that asked, like the event's input.
    let redacted_decision = match shared.redactor.redact_answer(&decision.answer) {
        Cow::Borrowed(_) => None,
        Cow::Owned(answer) => Some(Decision {
            answer,
            ..decision.clone()
        }),
    };
    let decision_json = serde_json::to_vec(&DecisionView::of(
        redacted_decision.as_ref().unwrap_or(&decision),
        judgement.enforced,
    ))
    .expect("records serialize");
    shared.log.push(line(&decision_json));
    let meta = event.meta(pending);
    // Built only if someone will receive it (most hooks have no subscriber).
    let mut decision_frames: [Option<Bytes>; 2] = [None, None];
    let mut frame = |redact: bool| {
        decision_frames[redact as usize]
            .get_or_insert_with(|| match (&redacted_decision, redact) {
                (Some(_), false) => {
                    let raw = serde_json::to_vec(&DecisionView::of(&decision, judgement.enforced))
                        .expect("records serialize");
                    push_frame(PushKind::Decision, &raw)
                }
                _ => push_frame(PushKind::Decision, &decision_json),
            })
            .clone()
    };
    shared.hub.publish(&meta, skip, &mut frame);
    if let Some(run) = run {
        run.owner.push(frame(false));
    }
    HookResult {
        id: req.id,
        exit_code: out.exit_code,
        stdout: out.stdout,
        stderr: out.stderr,
    }
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
        if frame_bytes <= INLINE_EVALUATION_MAX_BYTES {
            std::panic::catch_unwind(AssertUnwindSafe(|| evaluate(shared, event, &layers)))
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
                evaluate(&shared, &event, &layers)
            })
            .await
            .map_err(|e| {
                if e.is_panic() {
                    "internal_error"
                } else {
                    "shutting_down"
                }
            })
        }
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
            tracing::debug!(event = %event.name(), id = %event.id, "hookd is stopping; the event gets its fallback");
        } else {
            tracing::warn!(event = %event.name(), id = %event.id, why, "the rules could not judge this event; its fallback applies");
        }
        Judgement {
            answer: output::fallback_answer(event.kind(), fail_closed, why),
            source: Source::Fallback,
            enforced: shared.controller.enforced(),
            ..Judgement::default_for(generation)
        }
    })
}

fn evaluate(shared: &Shared, event: &Event, layers: &Layers) -> Judgement {
    #[cfg(feature = "fault-injection")]
    super::fault::while_judging(&event.raw);
    shared.controller.judge(event, layers)
}

/// The facts about `event` that subscribers' filters look at.
fn meta_of(event: &Event, pending: bool) -> EventMeta<'_> {
    EventMeta {
        kind: event.name(),
        session: event.input.base.session_id.as_deref(),
        tool: event.tool_name(),
        decision_point: event.kind().is_decision_point(),
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
    name: String,
    session: Option<String>,
    tool: Option<String>,
}

impl From<Arc<Event>> for Judged {
    /// Moves the names out when this was the last reference (always, but
    /// after a slow evaluation that outlived its deadline); else copies them.
    fn from(event: Arc<Event>) -> Judged {
        match Arc::try_unwrap(event) {
            Ok(event) => Judged {
                id: event.id,
                kind: event.input.kind,
                name: if event.input.name.is_empty() {
                    event.name().to_string()
                } else {
                    event.input.name
                },
                run_id: event.run_id,
                session: event.input.base.session_id,
                tool: event.input.tool.tool_name,
            },
            Err(event) => Judged {
                id: event.id,
                run_id: event.run_id.clone(),
                kind: event.kind(),
                name: event.name().to_string(),
                session: event.input.base.session_id.clone(),
                tool: event.tool_name().map(str::to_string),
            },
        }
    }
}

impl Judged {
    fn name(&self) -> &str {
        &self.name
    }

    fn meta(&self, pending: bool) -> EventMeta<'_> {
        EventMeta {
            kind: &self.name,
            session: self.session.as_deref(),
            tool: self.tool.as_deref(),
            decision_point: self.kind.is_decision_point(),
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

/// Resolves when `run` ends; never for a hook that is not part of a run.
async fn run_ended(run: Option<&RunLink>) {
    match run {
        Some(run) => run.ended.cancelled().await,
        None => std::future::pending().await,
    }
}

/// What applies when a routed event gets no client decision: an `ask` goes
/// to Claude Code's own prompt; an undecided event gets no opinion. The rule
/// ids stay, so the log shows which rule asked.
fn fallback_of(judgement: Judgement, source: Source) -> Judgement {
    let answer = if judgement.answer.verdict == Verdict::Ask {
        judgement.answer
    } else {
        Answer::no_opinion()
    };
    Judgement {
        answer,
        source,
        ..judgement
    }
}

fn line(json: &[u8]) -> Bytes {
    let mut line = Vec::with_capacity(json.len() + 1);
    line.extend_from_slice(json);
    line.push(b'\n');
    line.into()
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
