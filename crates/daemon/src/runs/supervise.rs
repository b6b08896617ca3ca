//! One run's life after its child is spawned: the supervisor loop (the
//! adapter's frames in, decisions and `start`/`abort` out, the abort and
//! ready deadlines, the child's exit), what its SDK messages become (log
//! lines and pushed frames, redacted like the log), and its end
//! (`run_done`, the process group killed).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use futures_util::StreamExt;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin};
use tokio::sync::{mpsc, oneshot};
use tokio_util::codec::FramedRead;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::{
    ABORT_GRACE, ADAPTER_MAX_FRAME, EXIT_GRACE, HOOK_TIMEOUT, READY_TIMEOUT, SHUTDOWN_ABORT_GRACE,
    STDERR_LINE,
};
use crate::agent::claude::output::HookOutput;
use crate::agent::claude::sdk::{sdk_result, SdkBody, SdkCallback, SdkMessageFields};
use crate::agent::claude::InputFields;
use crate::hook::{self, RunLink};
use crate::hub::ClientQueue;
use crate::protocol::adapter::{
    Decision, Done, Empty, FromAdapter, HookEvent, Runtime, Start, ToAdapter,
};
use crate::protocol::codec::FrameCodec;
use crate::protocol::{Harness, HookRequest, Reply, RunDone, RunStart};
use crate::Shared;

/// A spawned run, as its supervisor sees it.
pub(super) struct Run {
    pub(super) link: RunLink,
    /// Which adapter it is, and so which dialect its hook events speak.
    pub(super) runtime: Runtime,
    pub(super) pid: u32,
    pub(super) started: Instant,
    pub(super) start: Start,
    /// Keeps the abort channel open for as long as the run lives, so the
    /// supervisor's `recv` never sees it closed.
    pub(super) _abort_tx: mpsc::UnboundedSender<String>,
}

/// The shape of the value a run's callback returns: an SDK callback's
/// (with the call's input, which `canUseTool`'s allow echoes), or a Pi
/// extension handler's (`{block, reason}` or null).
enum Shape {
    Sdk(SdkCallback, Value),
    PiHandler,
}

/// What the supervisor learnt by the end.
#[derive(Debug, Default)]
pub(super) struct Outcome {
    session_id: Option<String>,
    usage: Option<Value>,
    cost_usd: Option<f64>,
    num_turns: Option<u64>,
    result: Option<String>,
    /// `done` arrived: whether it was an error.
    done: Option<bool>,
    /// The adapter's `error`, or what went wrong with it.
    error: Option<String>,
    aborted_by: Option<String>,
    exit: Option<String>,
}

/// Drives one run from `ready` to the child's exit.
#[allow(clippy::too_many_arguments)]
pub(super) async fn supervise(
    run: &Run,
    child: Child,
    stdin: ChildStdin,
    stdout: tokio::process::ChildStdout,
    go: oneshot::Receiver<()>,
    mut aborts: mpsc::UnboundedReceiver<String>,
    mut steers: mpsc::UnboundedReceiver<super::Nudge>,
    shared: &Arc<Shared>,
    shutdown: &CancellationToken,
) -> Outcome {
    let (to_adapter, outbox) = mpsc::unbounded_channel::<ToAdapter>();
    tokio::spawn(write_frames(stdin, outbox));
    let mut frames = FramedRead::new(stdout, FrameCodec::new(ADAPTER_MAX_FRAME));
    let mut s = Supervision {
        run,
        shared,
        shutdown,
        to_adapter,
        hooks: TaskTracker::new(),
        outcome: Outcome::default(),
        ready: false,
        kill_at: None,
    };
    // The client must have its `ok` before any frame of the run.
    if go.await.is_err() {
        s.outcome.aborted_by = Some("its client, which disconnected".into());
        let _ = s.to_adapter.send(ToAdapter::Abort(Empty {}));
    }
    let ready_by = tokio::time::Instant::now() + READY_TIMEOUT;
    if s.outcome.aborted_by.is_some() {
        s.kill_at = Some(tokio::time::Instant::now() + ABORT_GRACE);
    }
    loop {
        tokio::select! {
            frame = frames.next() => match frame {
                None => break,
                Some(Err(e)) => {
                    s.outcome.error.get_or_insert_with(|| format!("the adapter's output could not be read: {e}"));
                    kill_group(run.pid);
                    break;
                }
                Some(Ok(line)) => s.on_line(&line),
            },
            Some(nudge) = steers.recv() => match nudge {
                super::Nudge::Steer(text) => {
                    tracing::info!(run = %run.link.run_id, chars = text.chars().count(), "steering run");
                    let _ = s.to_adapter.send(ToAdapter::Steer(crate::protocol::adapter::Steer { text }));
                }
                super::Nudge::AbortCompaction(by) => {
                    tracing::info!(run = %run.link.run_id, by, "aborting the run's compaction");
                    let _ = s.to_adapter.send(ToAdapter::AbortCompaction(Empty {}));
                }
            },
            Some(by) = aborts.recv(), if s.outcome.aborted_by.is_none() => {
                tracing::info!(run = %run.link.run_id, by, "aborting run");
                s.abort(by, ABORT_GRACE);
            }
            _ = shutdown.cancelled(), if s.outcome.aborted_by.is_none() => {
                s.abort("hookd, which is stopping".into(), SHUTDOWN_ABORT_GRACE);
            }
            _ = sleep_until(s.kill_at) => {
                tracing::warn!(run = %run.link.run_id, pid = run.pid, "the adapter did not stop in time; killing its process group");
                kill_group(run.pid);
                s.kill_at = None;
            }
            _ = tokio::time::sleep_until(ready_by), if !s.ready => {
                s.outcome.error.get_or_insert_with(|| format!("the adapter did not start within {}s", READY_TIMEOUT.as_secs()));
                kill_group(run.pid);
                s.ready = true;
            }
        }
    }
    s.finish(child).await
}

/// What [`supervise`] keeps while a run goes: the way to its adapter, the
/// hooks being answered, what is known of the outcome so far, and the
/// deadlines.
struct Supervision<'a> {
    run: &'a Run,
    shared: &'a Arc<Shared>,
    shutdown: &'a CancellationToken,
    /// Frames to the adapter's stdin (written by `write_frames`).
    to_adapter: mpsc::UnboundedSender<ToAdapter>,
    /// The run's hook answers, waited for (bounded) at the end.
    hooks: TaskTracker,
    outcome: Outcome,
    /// The adapter said `ready`, or was given up on for not saying it.
    ready: bool,
    /// When the adapter's process group is killed, once it was told to
    /// abort.
    kill_at: Option<tokio::time::Instant>,
}

impl Supervision<'_> {
    /// One line of the adapter's output; a line that is not one of its
    /// frames is logged and ignored.
    fn on_line(&mut self, line: &[u8]) {
        let message = match FromAdapter::decode(line) {
            Ok(message) => message,
            Err(e) => {
                let error = crate::protocol::describe_json_error(&e, None);
                tracing::warn!(run = %self.run.link.run_id, %error, "ignoring a bad line from the adapter");
                return;
            }
        };
        match message {
            FromAdapter::Ready(_) => {
                self.ready = true;
                if self.outcome.aborted_by.is_none() {
                    let _ = self
                        .to_adapter
                        .send(ToAdapter::Start(self.run.start.clone()));
                    self.shared
                        .runs
                        .update(&self.run.link.run_id, |e| e.state = "running");
                }
            }
            FromAdapter::HookEvent(event) => self.answer(event, line.len()),
            FromAdapter::SdkMessage(m) => {
                on_sdk_message(self.run, m.message, &mut self.outcome, self.shared);
            }
            FromAdapter::Usage(usage) => {
                self.shared.runs.record_usage(&self.run.link.run_id, &usage);
                note_cost(self.shared, &self.run.link.run_id, usage.cost_usd);
            }
            FromAdapter::Done(done) => {
                self.outcome.record_done(done);
                // Nothing more to say to it: it may let go of the session.
                let _ = self.to_adapter.send(ToAdapter::Dispose(Empty {}));
            }
            FromAdapter::Error(e) => self.outcome.error = Some(e.message),
        }
    }

    /// Answers a hook of the run's session (`frame_bytes` long on the wire)
    /// in a task of its own, as a forwarder's (or Pi extension's) would be,
    /// and sends the decision back in the shape its callback takes.
    fn answer(&self, event: HookEvent, frame_bytes: usize) {
        let (harness, shape) = match self.run.runtime {
            Runtime::ClaudeSdk if event.from_can_use_tool() => {
                let tool_input = InputFields::of(&event.input)
                    .tool_input
                    .cloned()
                    .unwrap_or(Value::Null);
                let shape = Shape::Sdk(SdkCallback::CanUseTool, tool_input);
                (Harness::AgentSdk, shape)
            }
            Runtime::ClaudeSdk => (
                Harness::AgentSdk,
                Shape::Sdk(SdkCallback::Hook, Value::Null),
            ),
            // Pi's dialect, exactly as a hook of hookd's Pi extension.
            Runtime::Pi => (Harness::Pi, Shape::PiHandler),
        };
        let request = HookRequest {
            v: None,
            id: event.id,
            harness,
            deadline_ms: HOOK_TIMEOUT.as_millis() as u64,
            fail_closed: crate::agent::claude::FailClosed::Off,
            env: BTreeMap::new(),
            input: event.input,
            input_error: event.input_error,
        };
        let (link, shared, shutdown, to_adapter) = (
            self.run.link.clone(),
            self.shared.clone(),
            self.shutdown.clone(),
            self.to_adapter.clone(),
        );
        self.hooks.spawn(async move {
            let answered =
                hook::answer_in(request, frame_bytes, Some(&link), &shared, &shutdown).await;
            let output = HookOutput {
                exit_code: answered.exit_code,
                stdout: answered.stdout,
                stderr: answered.stderr,
            };
            let result = match &shape {
                Shape::Sdk(callback, tool_input) => sdk_result(*callback, &output, tool_input),
                Shape::PiHandler => crate::agent::plugin::handler_result(&output),
            };
            let _ = to_adapter.send(ToAdapter::Decision(Decision {
                id: answered.id,
                result,
            }));
        });
    }

    /// Tells the adapter to abort, on behalf of `by`, and gives it `grace`
    /// before its process group is killed.
    fn abort(&mut self, by: String, grace: Duration) {
        self.outcome.aborted_by = Some(by);
        let _ = self.to_adapter.send(ToAdapter::Abort(Empty {}));
        self.shared
            .runs
            .update(&self.run.link.run_id, |e| e.state = "aborting");
        self.kill_at = Some(tokio::time::Instant::now() + grace);
    }

    /// After the adapter's output ended: pending events fall back, the
    /// process group goes, the child is reaped and the hook answers still
    /// running get a moment to finish.
    async fn finish(mut self, mut child: Child) -> Outcome {
        let run_id = &self.run.link.run_id;
        let pid = self.run.pid;
        // Nobody will read decisions any more: pending events fall back now.
        self.run.link.ended.cancel();
        if self.outcome.done.is_none() {
            // Crashed, killed or aborted: the Claude Code process it started
            // goes too. Not reaped yet, the adapter keeps its group id taken.
            kill_group(pid);
        }
        let status = match tokio::time::timeout(EXIT_GRACE, child.wait()).await {
            Ok(status) => status,
            Err(_) => {
                tracing::warn!(run = %run_id, pid, "the adapter closed its output but did not exit; killing its process group");
                kill_group(pid);
                child.wait().await
            }
        };
        // Whatever is still left of the group goes too. A group id cannot be
        // handed out again while any member lives; with none left this is
        // ESRCH (pids are allocated in sequence, not reused at once).
        kill_group(pid);
        self.outcome.exit = Some(match status {
            Ok(status) => status.to_string(),
            Err(e) => format!("unknown ({e})"),
        });
        self.hooks.close();
        if tokio::time::timeout(Duration::from_secs(2), self.hooks.wait())
            .await
            .is_err()
        {
            tracing::warn!(run = %run_id, "hook answers still running after the run ended");
        }
        self.outcome
    }
}

impl Outcome {
    /// The adapter's `done`: what it says wins over what the SDK's
    /// messages said before.
    fn record_done(&mut self, done: Done) {
        self.done = Some(done.is_error);
        self.session_id = done.session_id.or(self.session_id.take());
        self.usage = done.usage.or(self.usage.take());
        self.cost_usd = done.cost_usd.or(self.cost_usd);
        self.num_turns = done.num_turns.or(self.num_turns);
        self.result = done.result.or(self.result.take());
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

pub(super) fn kill_group(pid: u32) {
    if pid == 0 {
        return;
    }
    match killpg(Pid::from_raw(pid as i32), Signal::SIGKILL) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
        Err(e) => {
            tracing::warn!(pgid = pid, error = %e, "could not kill the adapter's process group")
        }
    }
}

/// The run's cost so far, for its session's `budget = { usd = X }` rules:
/// the next hook of the run is judged with it.
fn note_cost(shared: &Shared, run_id: &str, cost_usd: f64) {
    if let Some(session) = shared.runs.session_of(run_id) {
        shared.controller.note_run_cost(&session, cost_usd);
    }
}

/// One SDK message: remembered (session, usage), logged, pushed.
fn on_sdk_message(run: &Run, message: Value, outcome: &mut Outcome, shared: &Arc<Shared>) {
    let run_id = &run.link.run_id;
    let fields = SdkMessageFields::of(&message);
    if let Some(session) = fields.session_id {
        if outcome.session_id.as_deref() != Some(session) {
            outcome.session_id = Some(session.to_string());
            let session = session.to_string();
            shared.runs.update(run_id, |e| e.session_id = Some(session));
        }
    }
    // What the run says and does, for the narrator beside its hook events.
    if let Some(session) = outcome.session_id.as_deref() {
        if shared.config().narrator.enabled {
            let harness = match run.runtime {
                Runtime::ClaudeSdk => "agent-sdk",
                Runtime::Pi => "pi",
            };
            for line in crate::narrator::lines_of_message(&fields.body, &shared.redactor()) {
                shared.narrator.note(shared, session, harness, line, None);
            }
        }
    }
    match fields.body {
        SdkBody::Assistant(_) => shared.runs.update(run_id, |e| e.turns += 1),
        // The model the session really uses, when the run did not name one.
        SdkBody::Init { model, .. } => {
            if let Some(model) = model {
                let model = model.to_string();
                shared
                    .runs
                    .update(run_id, |e| e.model = e.model.take().or(Some(model)));
            }
        }
        SdkBody::Result {
            usage,
            total_cost_usd,
            num_turns,
            result,
        } => {
            shared
                .runs
                .update(run_id, |e| e.cost_usd = total_cost_usd.or(e.cost_usd));
            if let Some(cost) = total_cost_usd {
                note_cost(shared, run_id, cost);
            }
            outcome.usage = usage.cloned();
            outcome.cost_usd = total_cost_usd;
            outcome.num_turns = num_turns;
            outcome.result = result.map(str::to_owned);
        }
        SdkBody::User(_) | SdkBody::Other => {}
    }
    let record = Reply::SdkMessage(crate::protocol::SdkMessage {
        run_id: run_id.to_string(),
        received_at: crate::time::rfc3339(SystemTime::now()),
        session_id: outcome.session_id.clone(),
        message,
    });
    publish_record(shared, &record, Some(&run.link.owner), None);
}

/// Logs a run record (redacted) and pushes it to the subscribers that want
/// runs, except `skip`, and to `owner` (raw).
pub(super) fn publish_record(
    shared: &Shared,
    record: &Reply,
    owner: Option<&ClientQueue>,
    skip: Option<u64>,
) {
    let line = |record: &Reply| -> Bytes {
        let mut bytes = serde_json::to_vec(record).expect("records serialize");
        bytes.push(b'\n');
        bytes.into()
    };
    let raw_line = line(record);
    let log_line = match redacted(&shared.redactor(), record) {
        Some(redacted) => line(&redacted),
        None => raw_line.clone(),
    };
    // The run's start and end, not its transcript.
    if !matches!(record, Reply::SdkMessage(_)) {
        shared.otlp.push(&log_line);
    }
    shared.log.push(log_line.clone());
    let session = match record {
        Reply::SdkMessage(m) => m.session_id.as_deref(),
        Reply::RunDone(d) => d.session_id.as_deref(),
        _ => None,
    };
    let skip = skip.or(owner.map(|o| o.client_id));
    shared.hub.publish_run(session, skip, |redact| {
        if redact {
            log_line.clone()
        } else {
            raw_line.clone()
        }
    });
    if let Some(owner) = owner {
        owner.push(raw_line);
    }
}

/// The record with secrets redacted as in the log (prompt, message,
/// result), or `None` when there was nothing to hide.
pub(super) fn redacted(redactor: &crate::redact::Redactor, record: &Reply) -> Option<Reply> {
    use std::borrow::Cow;
    let text = |s: &str| match redactor.redact_str(s) {
        Cow::Owned(s) => Some(s),
        Cow::Borrowed(_) => None,
    };
    match record {
        Reply::RunStart(r) => text(&r.prompt).map(|prompt| {
            Reply::RunStart(RunStart {
                prompt,
                ..r.clone()
            })
        }),
        Reply::SdkMessage(m) => match redactor.redact_value(&m.message) {
            Cow::Borrowed(_) => None,
            Cow::Owned(message) => Some(Reply::SdkMessage(crate::protocol::SdkMessage {
                run_id: m.run_id.clone(),
                received_at: m.received_at.clone(),
                session_id: m.session_id.clone(),
                message,
            })),
        },
        Reply::RunDone(d) => {
            // The SDK's error often quotes what it was given (a `resume`
            // id, a path): the same redaction as the result.
            let result = d.result.as_deref().and_then(text);
            let error = d.error.as_deref().and_then(text);
            (result.is_some() || error.is_some()).then(|| {
                Reply::RunDone(RunDone {
                    result: result.or_else(|| d.result.clone()),
                    error: error.or_else(|| d.error.clone()),
                    ..d.clone()
                })
            })
        }
        _ => None,
    }
}

/// Logs and pushes `run_done`, and takes the run out of the table.
pub(super) async fn finish(run: &Run, outcome: Outcome, shared: &Arc<Shared>) {
    let run_id = run.link.run_id.to_string();
    let error = match (&outcome.aborted_by, outcome.done, &outcome.error) {
        (Some(by), _, _) => Some(format!("aborted by {by}")),
        (None, Some(false), _) => None,
        (None, Some(true), _) => Some(
            outcome
                .result
                .clone()
                .unwrap_or_else(|| "the SDK reported an error".into()),
        ),
        (None, None, Some(error)) => Some(error.clone()),
        (None, None, None) => Some(format!(
            "the adapter ended without a result ({})",
            outcome.exit.as_deref().unwrap_or("no exit status")
        )),
    };
    let done = RunDone {
        run_id: run_id.clone(),
        received_at: crate::time::rfc3339(SystemTime::now()),
        ok: error.is_none(),
        session_id: outcome.session_id,
        usage: outcome.usage,
        cost_usd: outcome.cost_usd,
        num_turns: outcome.num_turns,
        duration_ms: run.started.elapsed().as_millis() as u64,
        result: outcome.result,
        error,
    };
    tracing::info!(
        run = %run_id,
        ok = done.ok,
        error = ?done.error.as_deref().map(|e| shared.redactor().redact_str(e)),
        cost_usd = ?done.cost_usd,
        exit = ?outcome.exit,
        duration_ms = done.duration_ms,
        "run ended"
    );
    shared.metrics.record_run(&done);
    let record = Reply::RunDone(done);
    // Everything of this run is in the owner's queue already; this frame
    // must not be dropped for a full queue, so it waits for room.
    let owner = run.link.owner.clone();
    publish_record(shared, &record, None, Some(owner.client_id));
    let mut frame = serde_json::to_vec(&record).expect("records serialize");
    frame.push(b'\n');
    owner.push_surely(frame.into()).await;
    // Out of the table only now: a run that is not live any more has its
    // run_done queued (a stopping connection relies on that).
    shared.runs.remove(&run_id);
}

/// Writes frames to the adapter's stdin until every sender is gone or the
/// pipe breaks (the adapter exited).
async fn write_frames(mut stdin: ChildStdin, mut outbox: mpsc::UnboundedReceiver<ToAdapter>) {
    while let Some(frame) = outbox.recv().await {
        let mut line = serde_json::to_vec(&frame).expect("frames serialize");
        line.push(b'\n');
        if let Err(e) = stdin.write_all(&line).await {
            tracing::debug!(error = %e, "the adapter's stdin is closed");
            return;
        }
    }
}

/// Copies the adapter's stderr into our log, line by line, redacted like
/// every other line (the SDK and Claude Code echo their inputs in errors).
/// It must be drained whatever happens: a full pipe would stall the
/// adapter.
pub(super) async fn copy_stderr(stderr: ChildStderr, run_id: Arc<str>, shared: Arc<Shared>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut reader)
            .take(STDERR_LINE)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.trim_end();
                if !text.is_empty() {
                    let text = shared.redactor().redact_str(text);
                    tracing::info!(target: "hookd::adapter", run = %run_id, "{text}");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_records_are_redacted_like_the_log() {
        let redactor = crate::redact::Redactor::default();
        let secret = "sk-ant-api03-0123456789abcdefghij";
        let done = |result: Option<&str>, error: Option<&str>| {
            Reply::RunDone(RunDone {
                run_id: "r".into(),
                received_at: "t".into(),
                ok: error.is_none(),
                session_id: None,
                usage: None,
                cost_usd: None,
                num_turns: None,
                duration_ms: 1,
                result: result.map(str::to_owned),
                error: error.map(str::to_owned),
            })
        };
        let quoted = format!("Provided value \"{secret}\" is not a UUID");
        let Some(Reply::RunDone(d)) = redacted(&redactor, &done(Some(&quoted), Some(&quoted)))
        else {
            panic!("nothing redacted")
        };
        for text in [d.result.unwrap(), d.error.unwrap()] {
            assert!(
                !text.contains(secret) && text.contains("[REDACTED]"),
                "{text}"
            );
        }
        let Some(Reply::RunDone(d)) = redacted(&redactor, &done(Some("fine"), Some(&quoted)))
        else {
            panic!("the error alone must be redacted")
        };
        assert_eq!(d.result.as_deref(), Some("fine"));
        assert!(!d.error.unwrap().contains(secret));
        assert!(redacted(&redactor, &done(Some("fine"), Some("aborted"))).is_none());
    }
}
