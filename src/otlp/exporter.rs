//! The exporter: fed by the hook path, which hands it each log line it
//! writes (a reference-counted [`Bytes`], no copy) with a non-blocking
//! `try_send` and nothing else; drained by one thread (`hookd-otlp`) that
//! maps lines to records ([`super::records`]), batches them (up to
//! `max_batch` records, or `interval` after the oldest arrived), sends them
//! with [`crate::outbound`]'s blocking client and retries with backoff.
//!
//! Nothing here can slow a decision: the queue is bounded in lines and in
//! bytes, and a full queue drops the line (counted, `otlp.dropped`); the
//! records waiting to be sent are bounded by `max_queue`, the oldest
//! dropped first while the collector is down. The thread sleeps in `recv`
//! while there is nothing to send: an idle daemon is not woken. It runs at
//! a lower priority than the threads answering hooks (nice 10, Linux), so
//! a load that saturates the cores drops records rather than decisions
//! per second.
//!
//! Retries: a request that fails to connect, times out, or is answered 429,
//! 502, 503 or 504 is retried (the OTLP/HTTP specification's retryable
//! statuses), after 1 s, then twice as long each time up to 30 s (or the
//! server's `Retry-After`, if shorter than a minute); any other answer drops
//! its batch. Every failed request is counted (`otlp.failures`) and the last
//! one's cause kept for `status`.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use bytes::Bytes;

use super::config::{OtlpConfig, Protocol};
use super::records::Mapper;
use super::wire::{self, KeyValue, LogRecord, Origin, Span, Value};

/// Bytes of lines that may wait for the exporter's thread; a line beyond
/// them is dropped (an input can be megabytes; the log has its own queue).
const QUEUE_BYTES: usize = 16 * 1024 * 1024;
/// The first retry's wait; each next one doubles, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between retries.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// The exporter's counters, plain atomics (the metrics endpoint reads them
/// as they are).
#[derive(Debug, Default)]
pub struct OtlpCounters {
    /// Log records the collector accepted.
    pub logs_exported: AtomicU64,
    /// Spans the collector accepted.
    pub spans_exported: AtomicU64,
    /// Lines and records dropped: queue full, collector down too long, or
    /// a batch it refused.
    pub dropped: AtomicU64,
    /// Requests that failed (not sent, or not accepted).
    pub failures: AtomicU64,
    /// Records waiting to be sent now.
    pub queued: AtomicU64,
}

/// The daemon's handle on the exporter; [`Export::disabled`] without
/// `[otlp]`, then every call is a no-op.
#[derive(Debug)]
pub struct Export {
    inner: Option<Running>,
}

#[derive(Debug)]
struct Running {
    lines: SyncSender<Message>,
    queued_bytes: Arc<AtomicUsize>,
    counters: Arc<OtlpCounters>,
    last_error: Arc<Mutex<Option<String>>>,
    endpoint: String,
    protocol: Protocol,
    /// Told when the thread has sent what it could at shutdown.
    finished: Mutex<Option<Receiver<()>>>,
}

#[derive(Debug)]
enum Message {
    Line(Bytes),
    /// Send what is left (once, no retries) and end.
    Close,
}

impl Export {
    /// No export.
    pub fn disabled() -> Export {
        Export { inner: None }
    }

    /// Starts exporting as `config` says: reads its headers' secrets
    /// (`env` reads one environment variable) and starts the thread.
    pub fn start(
        config: &OtlpConfig,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Export> {
        let headers = config
            .resolve_headers(env)
            .map_err(|e| anyhow::anyhow!(e))?;
        let capacity = config.max_queue.max(1);
        let (lines, receiver) = mpsc::sync_channel(capacity);
        let (done, finished) = mpsc::channel();
        let queued_bytes = Arc::new(AtomicUsize::new(0));
        let counters = Arc::new(OtlpCounters::default());
        let last_error = Arc::new(Mutex::new(None));
        let sender = Sender {
            agent: crate::outbound::agent(config.timeout),
            logs_url: config.endpoint.signal("logs"),
            traces_url: config.endpoint.signal("traces"),
            protocol: config.protocol,
            headers,
            origin: origin(config),
        };
        let worker = Worker {
            receiver,
            queued_bytes: queued_bytes.clone(),
            counters: counters.clone(),
            last_error: last_error.clone(),
            mapper: Mapper::new(capacity),
            logs: VecDeque::new(),
            spans: VecDeque::new(),
            oldest: None,
            retry_at: None,
            backoff: FIRST_BACKOFF,
            failing: false,
            interval: config.interval,
            max_batch: config.max_batch.max(1),
            max_queue: capacity,
            sender,
        };
        std::thread::Builder::new()
            .name("hookd-otlp".into())
            .spawn(move || {
                lower_priority();
                worker.run();
                let _ = done.send(());
            })
            .context("starting the OpenTelemetry exporter's thread")?;
        tracing::info!(
            endpoint = config.endpoint.as_str(),
            protocol = config.protocol.as_str(),
            "exporting events and decisions to OpenTelemetry"
        );
        Ok(Export {
            inner: Some(Running {
                lines,
                queued_bytes,
                counters,
                last_error,
                endpoint: config.endpoint.as_str().to_string(),
                protocol: config.protocol,
                finished: Mutex::new(Some(finished)),
            }),
        })
    }

    /// Hands one log line (with its newline) to the exporter, never
    /// waiting: when the queue is full the line is dropped and counted.
    pub fn push(&self, line: &Bytes) {
        let Some(running) = &self.inner else {
            return;
        };
        let len = line.len();
        if running.queued_bytes.fetch_add(len, Ordering::Relaxed) + len > QUEUE_BYTES {
            running.queued_bytes.fetch_sub(len, Ordering::Relaxed);
            running.counters.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if let Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) =
            running.lines.try_send(Message::Line(line.clone()))
        {
            running.queued_bytes.fetch_sub(len, Ordering::Relaxed);
            running.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The counters, for metrics; `None` when export is off.
    pub fn counters(&self) -> Option<&Arc<OtlpCounters>> {
        self.inner.as_ref().map(|r| &r.counters)
    }

    /// `status.otlp`; `None` when export is off.
    pub fn status(&self) -> Option<crate::protocol::OtlpStatus> {
        let running = self.inner.as_ref()?;
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let counters = &running.counters;
        Some(crate::protocol::OtlpStatus {
            endpoint: running.endpoint.clone(),
            protocol: running.protocol.as_str().to_string(),
            logs_exported: n(&counters.logs_exported),
            spans_exported: n(&counters.spans_exported),
            dropped: n(&counters.dropped),
            failures: n(&counters.failures),
            queued: n(&counters.queued),
            last_error: running
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        })
    }

    /// At shutdown: sends what is waiting (one attempt, no retries), for at
    /// most `grace`. Returns the records that were not sent.
    pub fn close(&self, grace: Duration) -> u64 {
        let Some(running) = &self.inner else {
            return 0;
        };
        // Blocking for a moment at most: the queue may be full, and the
        // thread is draining it.
        let deadline = Instant::now() + grace;
        let mut close = Message::Close;
        loop {
            match running.lines.try_send(close) {
                Ok(()) => break,
                Err(TrySendError::Full(message)) if Instant::now() < deadline => {
                    close = message;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return running.counters.queued.load(Ordering::Relaxed),
            }
        }
        let finished = running
            .finished
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(finished) = finished {
            let _ = finished.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        }
        running.counters.queued.load(Ordering::Relaxed)
    }
}

/// Makes the calling thread yield the CPU to the daemon's others (nice
/// 10): under a load that saturates the cores, mapping and encoding
/// records would otherwise take a share from answering hooks; this way
/// the records wait, or are dropped and counted, instead. Linux only
/// (there a thread has its own nice value); elsewhere a no-op.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: plain system calls on the calling thread, no memory
        // passed.
        let failed = unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, 10) != 0
        };
        if failed {
            tracing::debug!(
                error = %std::io::Error::last_os_error(),
                "could not lower the OpenTelemetry exporter's priority"
            );
        }
    }
}

/// The resource and scope of every request.
fn origin(config: &OtlpConfig) -> Origin {
    use super::config::AttributeValue;
    let mut resource = vec![
        KeyValue::new("service.name", Value::String(config.service_name.clone())),
        KeyValue::new(
            "service.version",
            Value::String(env!("CARGO_PKG_VERSION").to_string()),
        ),
    ];
    for (key, value) in &config.resource {
        let value = match value {
            AttributeValue::String(s) => Value::String(s.clone()),
            AttributeValue::Bool(b) => Value::Bool(*b),
            AttributeValue::Int(i) => Value::Int(*i),
            AttributeValue::Double(d) => Value::Double(*d),
        };
        resource.retain(|kv| kv.key != key.as_str());
        resource.push(KeyValue::new(key.clone(), value));
    }
    Origin {
        resource,
        scope_name: "hookd",
        scope_version: env!("CARGO_PKG_VERSION"),
    }
}

/// Sends encoded batches.
struct Sender {
    agent: ureq::Agent,
    logs_url: String,
    traces_url: String,
    protocol: Protocol,
    headers: Vec<(String, String)>,
    origin: Origin,
}

/// Why a request did not get through.
enum Failure {
    /// Worth retrying (no connection, a timeout, 429/502/503/504), after
    /// the server's `Retry-After` when it gave one.
    Retry(String, Option<Duration>),
    /// The collector refused the batch: retrying would not help.
    Refused(String),
}

impl Sender {
    fn post(&self, url: &str, body: Vec<u8>) -> Result<(), Failure> {
        let mut request = self
            .agent
            .post(url)
            .header("Content-Type", self.protocol.content_type());
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        match request.send(&body[..]) {
            Ok(response) => {
                let status = response.status().as_u16();
                if (200..300).contains(&status) {
                    return Ok(());
                }
                let why = format!("{url} answered {status}");
                if matches!(status, 429 | 502 | 503 | 504) {
                    let after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .filter(|secs| *secs <= 60)
                        .map(Duration::from_secs);
                    Err(Failure::Retry(why, after))
                } else {
                    Err(Failure::Refused(why))
                }
            }
            Err(e) => Err(Failure::Retry(format!("{url}: {e}"), None)),
        }
    }

    fn logs(&self, records: &[LogRecord]) -> Result<(), Failure> {
        let body = wire::logs_request(&self.origin, records, self.protocol);
        self.post(&self.logs_url, body)
    }

    fn spans(&self, spans: &[Span]) -> Result<(), Failure> {
        let body = wire::traces_request(&self.origin, spans, self.protocol);
        self.post(&self.traces_url, body)
    }
}

struct Worker {
    receiver: Receiver<Message>,
    queued_bytes: Arc<AtomicUsize>,
    counters: Arc<OtlpCounters>,
    last_error: Arc<Mutex<Option<String>>>,
    mapper: Mapper,
    logs: VecDeque<LogRecord>,
    spans: VecDeque<Span>,
    /// When the oldest record waiting arrived.
    oldest: Option<Instant>,
    /// After a failure: no request before this.
    retry_at: Option<Instant>,
    backoff: Duration,
    /// The last request failed: the next success is logged.
    failing: bool,
    interval: Duration,
    max_batch: usize,
    max_queue: usize,
    sender: Sender,
}

impl Worker {
    fn run(mut self) {
        loop {
            let message = match self.next_send() {
                // Nothing to send: sleep until a line comes.
                None => self
                    .receiver
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected),
                Some(at) => self
                    .receiver
                    .recv_timeout(at.saturating_duration_since(Instant::now())),
            };
            match message {
                Ok(Message::Line(line)) => {
                    self.queued_bytes.fetch_sub(line.len(), Ordering::Relaxed);
                    self.take(&line);
                }
                Ok(Message::Close) | Err(RecvTimeoutError::Disconnected) => {
                    // Lines sent before `Close` are in the queue before it.
                    while let Ok(Message::Line(line)) = self.receiver.try_recv() {
                        self.queued_bytes.fetch_sub(line.len(), Ordering::Relaxed);
                        self.take(&line);
                    }
                    self.retry_at = None;
                    while !self.logs.is_empty() || !self.spans.is_empty() {
                        if !self.send_batch() {
                            break;
                        }
                    }
                    return;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            if self.next_send().is_some_and(|at| at <= Instant::now()) {
                self.send_batch();
            }
        }
    }

    /// When the next request is due: `None` when nothing waits.
    fn next_send(&self) -> Option<Instant> {
        let oldest = self.oldest?;
        let due = if self.logs.len() >= self.max_batch || self.spans.len() >= self.max_batch {
            Instant::now()
        } else {
            oldest + self.interval
        };
        Some(self.retry_at.map_or(due, |retry| retry.max(due)))
    }

    fn take(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let mapped = match self.mapper.map(line, SystemTime::now()) {
            Ok(mapped) => mapped,
            Err(e) => {
                tracing::warn!(error = %e, "OpenTelemetry export: a log line is not JSON; skipped");
                return;
            }
        };
        if mapped.forgot {
            tracing::debug!(
                "OpenTelemetry export: too many undecided events; the oldest will have no span"
            );
        }
        self.logs.extend(mapped.log);
        self.spans.extend(mapped.span);
        // The collector down for long: the oldest records make room.
        let excess = (self.logs.len() + self.spans.len()).saturating_sub(self.max_queue);
        if excess > 0 {
            let from_logs = excess.min(self.logs.len());
            self.logs.drain(..from_logs);
            self.spans.drain(..excess - from_logs);
            self.counters
                .dropped
                .fetch_add(excess as u64, Ordering::Relaxed);
        }
        if self.oldest.is_none() && !(self.logs.is_empty() && self.spans.is_empty()) {
            self.oldest = Some(Instant::now());
        }
        self.note_queued();
    }

    fn note_queued(&self) {
        self.counters.queued.store(
            (self.logs.len() + self.spans.len()) as u64,
            Ordering::Relaxed,
        );
    }

    /// Sends one batch of logs and one of spans; false if a request failed.
    fn send_batch(&mut self) -> bool {
        let ok = self.send(Signal::Logs) && self.send(Signal::Spans);
        if ok {
            self.backoff = FIRST_BACKOFF;
            self.retry_at = None;
            if std::mem::take(&mut self.failing) {
                tracing::info!("OpenTelemetry export: the collector is reachable again");
            }
        }
        self.oldest = (!(self.logs.is_empty() && self.spans.is_empty())).then(Instant::now);
        self.note_queued();
        ok
    }

    fn send(&mut self, signal: Signal) -> bool {
        let (count, result) = match signal {
            Signal::Logs => {
                let count = self.logs.len().min(self.max_batch);
                if count == 0 {
                    return true;
                }
                let batch = &self.logs.make_contiguous()[..count];
                (count, self.sender.logs(batch))
            }
            Signal::Spans => {
                let count = self.spans.len().min(self.max_batch);
                if count == 0 {
                    return true;
                }
                let batch = &self.spans.make_contiguous()[..count];
                (count, self.sender.spans(batch))
            }
        };
        let sent = |this: &mut Worker| match signal {
            Signal::Logs => drop(this.logs.drain(..count)),
            Signal::Spans => drop(this.spans.drain(..count)),
        };
        match result {
            Ok(()) => {
                sent(self);
                let counter = match signal {
                    Signal::Logs => &self.counters.logs_exported,
                    Signal::Spans => &self.counters.spans_exported,
                };
                counter.fetch_add(count as u64, Ordering::Relaxed);
                true
            }
            Err(Failure::Refused(why)) => {
                sent(self);
                tracing::warn!(%why, dropped = count, "OpenTelemetry export: the collector refused a batch; dropped");
                // The cause before the count: a reader that sees the
                // failure counted finds its cause too.
                self.set_error(why);
                self.counters.failures.fetch_add(1, Ordering::Relaxed);
                self.counters
                    .dropped
                    .fetch_add(count as u64, Ordering::Relaxed);
                true
            }
            Err(Failure::Retry(why, after)) => {
                let wait = after.unwrap_or(self.backoff);
                if std::mem::replace(&mut self.failing, true) {
                    tracing::debug!(%why, retry_in = ?wait, "OpenTelemetry export failed again; will retry");
                } else {
                    tracing::warn!(%why, retry_in = ?wait, "OpenTelemetry export failed; retrying with backoff (hooks are not affected)");
                }
                self.retry_at = Some(Instant::now() + wait);
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                // The cause before the count (as above).
                self.set_error(why);
                self.counters.failures.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    fn set_error(&self, why: String) {
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
    }
}

#[derive(Clone, Copy)]
enum Signal {
    Logs,
    Spans,
}
/// The record exporter of [`hookd_daemon::faces::Faces`]: the process's
/// environment gives the headers' secrets.
pub fn start_export(
    config: &OtlpConfig,
) -> anyhow::Result<Arc<dyn hookd_daemon::faces::RecordExport>> {
    Ok(Arc::new(Export::start(config, |var| {
        std::env::var(var).ok()
    })?))
}

impl hookd_daemon::faces::RecordExport for Export {
    fn push(&self, line: &Bytes) {
        Export::push(self, line)
    }

    fn status(&self) -> Option<crate::protocol::OtlpStatus> {
        Export::status(self)
    }

    fn close(&self, grace: Duration) -> u64 {
        Export::close(self, grace)
    }
}
