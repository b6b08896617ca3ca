//! The exporter: one thread (`hookd-otlp`) reads the event log **from the
//! file**, behind its writer, through the log's follower
//! ([`hookd_daemon::team_ship::Follower`], the one the team shipper
//! reads with), maps lines to records ([`super::records`]), sends them in
//! batches (up to `max_batch` log records and `max_batch` spans) with
//! [`crate::outbound`]'s blocking client, and keeps its place in a cursor
//! file (`otlp.cursor` beside the log).
//!
//! **The log is the queue.** Nothing waits in memory but the batch being
//! sent: while the collector is down or refusing the thread stops reading
//! (it never drops for want of room) and the log grows on disk; once the
//! collector is back the backlog is read from the cursor. Lines are lost
//! only when the log rotates past `[log] keep` files before the thread
//! reads them: counted (`otlp.lost`) and logged.
//!
//! **The cursor** names the last line of the last batch the collector
//! accepted, logs and spans both (`dev:inode`, offset, `seq`, chain hash),
//! and is written atomically after both were accepted. Delivery is at
//! least once: a crash between an accepted request and the cursor's write
//! sends that one batch again (record ids derive from event ids, so a
//! backend can drop the copies). Without a cursor file (export just turned
//! on) the thread starts at the log's end: the history is not sent.
//!
//! **Spans pair an event with its decision**, two lines of the log,
//! perhaps far apart (a person deciding). The mapper keeps undecided
//! events in memory; the cursor file also keeps `replay_from`, the `seq` of
//! the oldest event still undecided (no more than [`REPLAY_WINDOW`] lines
//! back). A restart reads again from there, feeding the lines up to the
//! cursor to the mapper only (nothing sent twice), so a decision after the
//! cursor still gets its span.
//!
//! The hook path only wakes the thread ([`Export::push`], a non-blocking
//! `try_send` of nothing); the thread reads `interval` later, and once more
//! after a read that found lines, then sleeps in `recv`: an idle daemon is
//! not woken. It runs at a lower priority than the threads answering hooks
//! (nice 10, Linux).
//!
//! Retries: a request that fails to connect, times out, or is answered 429,
//! 502, 503 or 504 is retried (the OTLP/HTTP specification's retryable
//! statuses), after 1 s, then twice as long each time up to 30 s (or the
//! server's `Retry-After`, if shorter than a minute); any other answer drops
//! its batch (counted in `dropped`). Every failed request is counted
//! (`otlp.failures`) and the last one's cause kept for `status`.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context;
use bytes::Bytes;
use hookd_daemon::team_ship::{Cursor, Follower, SealedLine};
use serde_json::json;

use super::config::{OtlpConfig, Protocol};
use super::records::Mapper;
use super::wire::{self, KeyValue, LogRecord, Origin, Span, Value};

/// The first retry's wait; each next one doubles, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
/// The longest wait between retries.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How far back (in log lines) a restart reads again to pair an event
/// still undecided at the cursor with its decision; an older one's
/// decision is exported without a span.
pub const REPLAY_WINDOW: u64 = 10_000;
/// The cursor file's name, in the log's directory.
pub const CURSOR_FILE: &str = "otlp.cursor";

/// The exporter's counters, plain atomics (the metrics endpoint reads them
/// as they are).
#[derive(Debug, Default)]
pub struct OtlpCounters {
    /// Log records the collector accepted.
    pub logs_exported: AtomicU64,
    /// Spans the collector accepted.
    pub spans_exported: AtomicU64,
    /// Records dropped: a batch the collector refused (not retryable).
    pub dropped: AtomicU64,
    /// Requests that failed (not sent, or not accepted).
    pub failures: AtomicU64,
    /// Records read and waiting to be sent now (one batch at most).
    pub queued: AtomicU64,
    /// The cursor's `seq` + 1 (0: none yet).
    pub next_seq: AtomicU64,
    /// Log bytes not read yet.
    pub behind_bytes: AtomicU64,
    /// Log lines rotated away before they were read.
    pub lost: AtomicU64,
}

/// The daemon's handle on the exporter; [`Export::disabled`] without
/// `[otlp]`, then every call is a no-op.
#[derive(Debug)]
pub struct Export {
    inner: Option<Running>,
}

#[derive(Debug)]
struct Running {
    wake: SyncSender<Message>,
    counters: Arc<OtlpCounters>,
    last_error: Arc<Mutex<Option<String>>>,
    endpoint: String,
    protocol: Protocol,
    /// Told when the thread has sent what it could at shutdown.
    finished: Mutex<Option<Receiver<()>>>,
}

#[derive(Debug)]
enum Message {
    /// Lines were handed to the log.
    Wake,
    /// Read to the log's end, send (once, no retries) and end.
    Close,
}

/// Where the exporter is in the log: the last line the collector
/// accepted, and where a restart reads from to pair spans.
#[derive(Debug, Clone, PartialEq)]
pub struct CursorFile {
    /// The last exported line.
    pub at: Cursor,
    /// The oldest event undecided then (a restart reads from it).
    pub replay_from: Option<u64>,
}

impl CursorFile {
    /// The file's JSON.
    pub fn to_json(&self) -> String {
        json!({
            "file_id": self.at.file_id,
            "line_offset": self.at.line_offset,
            "seq": self.at.seq,
            "chain": self.at.chain,
            "replay_from": self.replay_from,
        })
        .to_string()
    }

    /// Reads the file's JSON; an error names what is wrong.
    pub fn parse(text: &str) -> Result<CursorFile, String> {
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let text_of = |key: &str| {
            v[key]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("no `{key}`"))
        };
        let int_of = |key: &str| v[key].as_u64().ok_or_else(|| format!("no `{key}`"));
        Ok(CursorFile {
            at: Cursor {
                file_id: text_of("file_id")?,
                line_offset: int_of("line_offset")?,
                seq: int_of("seq")?,
                chain: text_of("chain")?,
                first_seq: 0,
                shipped: 0,
            },
            replay_from: v["replay_from"].as_u64(),
        })
    }
}

/// The cursor file of the log at `log`.
pub fn cursor_path(log: &Path) -> PathBuf {
    log.parent()
        .unwrap_or_else(|| Path::new("."))
        .join(CURSOR_FILE)
}

impl Export {
    /// No export.
    pub fn disabled() -> Export {
        Export { inner: None }
    }

    /// Starts exporting the log at `log` as `config` says: reads its
    /// headers' secrets (`env` reads one environment variable), the cursor
    /// file, and starts the thread.
    pub fn start(
        config: &OtlpConfig,
        log: &Path,
        env: impl Fn(&str) -> Option<String>,
    ) -> anyhow::Result<Export> {
        let headers = config
            .resolve_headers(env)
            .map_err(|e| anyhow::anyhow!(e))?;
        let capacity = config.max_queue.max(1);
        let (wake, receiver) = mpsc::sync_channel(1);
        let (done, finished) = mpsc::channel();
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
        let cursor_path = cursor_path(log);
        // Before the log's writer starts: the end found here is the end of
        // what was written before this start.
        let saved = match std::fs::read_to_string(&cursor_path) {
            Ok(text) => match CursorFile::parse(&text) {
                Ok(saved) => Some(saved),
                Err(e) => anyhow::bail!(
                    "{}: the OpenTelemetry exporter's cursor is unreadable ({e}); delete it to start at the log's end",
                    cursor_path.display()
                ),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(e).with_context(|| format!("reading {}", cursor_path.display()))
            }
        };
        let (follower, replay_through) = resume(log, saved.as_ref(), &counters);
        let worker = Worker {
            receiver,
            counters: counters.clone(),
            last_error: last_error.clone(),
            mapper: Mapper::new(capacity),
            follower,
            replay_through,
            cursor_path,
            logs: Vec::new(),
            spans: Vec::new(),
            logs_done: false,
            batch_end: None,
            more: false,
            retry_at: None,
            backoff: FIRST_BACKOFF,
            failing: false,
            cursor_failing: false,
            interval: config.interval,
            max_batch: config.max_batch.max(1),
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
                wake,
                counters,
                last_error,
                endpoint: config.endpoint.as_str().to_string(),
                protocol: config.protocol,
                finished: Mutex::new(Some(finished)),
            }),
        })
    }

    /// Wakes the exporter: a line was handed to the log. Never waits.
    pub fn push(&self, _line: &Bytes) {
        if let Some(running) = &self.inner {
            let _ = running.wake.try_send(Message::Wake);
        }
    }

    /// The counters, for metrics; `None` when export is off.
    pub fn counters(&self) -> Option<&Arc<OtlpCounters>> {
        self.inner.as_ref().map(|r| &r.counters)
    }

    /// `status.otlp`; `None` when export is off (`behind_lines` is the
    /// daemon's to fill: it knows the log's head).
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
            cursor_seq: n(&counters.next_seq).checked_sub(1),
            behind_lines: 0,
            behind_bytes: n(&counters.behind_bytes),
            lost: n(&counters.lost),
            last_error: running
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        })
    }

    /// At shutdown (after the log's writer finished): reads to the log's
    /// end and sends it (one attempt, no retries), for at most `grace`.
    /// Returns the records read and not sent (they are sent from the
    /// cursor at the next start).
    pub fn close(&self, grace: Duration) -> u64 {
        let Some(running) = &self.inner else {
            return 0;
        };
        let deadline = Instant::now() + grace;
        let mut close = Message::Close;
        loop {
            match running.wake.try_send(close) {
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

/// The follower positioned for `saved`, and the `seq` through which lines
/// are read again only to pair spans.
fn resume(
    log: &Path,
    saved: Option<&CursorFile>,
    counters: &OtlpCounters,
) -> (Follower, Option<u64>) {
    let Some(saved) = saved else {
        // No cursor: start at the log's end (or its start, when it has no
        // line yet).
        let follower = Follower::resume(log.to_path_buf(), last_line(log).as_ref());
        return (follower, None);
    };
    counters.next_seq.store(saved.at.seq + 1, Ordering::Relaxed);
    let replay_from = saved
        .replay_from
        .filter(|&from| from <= saved.at.seq && saved.at.seq - from < REPLAY_WINDOW);
    let follower = match replay_from {
        // By seq: the line before `from` is named by seq alone.
        Some(from) => Follower::resume(
            log.to_path_buf(),
            Some(&Cursor {
                file_id: String::new(),
                line_offset: 0,
                seq: from.wrapping_sub(1),
                chain: String::new(),
                first_seq: 0,
                shipped: 0,
            })
            .filter(|_| from > 0),
        ),
        None => Follower::resume(log.to_path_buf(), Some(&saved.at)),
    };
    tracing::info!(
        "exporting the event log to OpenTelemetry after seq {}, {}",
        saved.at.seq,
        follower.resumed
    );
    (follower, replay_from.map(|_| saved.at.seq))
}

/// The live log's last sealed line, as a cursor.
fn last_line(log: &Path) -> Option<Cursor> {
    use std::os::unix::fs::MetadataExt;
    let file = std::fs::File::open(log).ok()?;
    let meta = file.metadata().ok()?;
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    let mut offset = 0u64;
    let mut last = None;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).ok()?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        line.pop();
        if let Some(sealed) = crate::protocol::chain::Sealed::read(&line) {
            last = Some(Cursor {
                file_id: format!("{}:{}", meta.dev(), meta.ino()),
                line_offset: offset,
                seq: sealed.seq,
                chain: crate::protocol::hex::encode(&sealed.chain),
                first_seq: 0,
                shipped: 0,
            });
        }
        offset += n as u64;
    }
    last
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
    counters: Arc<OtlpCounters>,
    last_error: Arc<Mutex<Option<String>>>,
    mapper: Mapper,
    follower: Follower,
    /// Lines up to this seq were exported before this start: read again
    /// only to pair events with their decisions.
    replay_through: Option<u64>,
    cursor_path: PathBuf,
    /// The batch being sent.
    logs: Vec<LogRecord>,
    spans: Vec<Span>,
    /// The collector accepted the batch's log records (its spans wait).
    logs_done: bool,
    /// The batch's last line: the cursor once it is accepted.
    batch_end: Option<SealedLine>,
    /// The last read stopped at a full batch: read again at once.
    more: bool,
    /// After a failure: no request before this.
    retry_at: Option<Instant>,
    backoff: Duration,
    /// The last request failed: the next success is logged.
    failing: bool,
    /// Writing the cursor failed: the next success is logged.
    cursor_failing: bool,
    interval: Duration,
    max_batch: usize,
    sender: Sender,
}

impl Worker {
    fn run(mut self) {
        // Read `interval` from now: lines written while the daemon was
        // down, or before the thread started, are read at once.
        let mut poll = true;
        // A wake-up came since the last read.
        let mut fresh = true;
        loop {
            let deadline = if self.batch_end.is_some() {
                Some(self.retry_at.unwrap_or_else(Instant::now))
            } else if self.more {
                Some(Instant::now())
            } else if poll {
                Some(Instant::now() + self.interval)
            } else {
                None
            };
            match self.wait(deadline) {
                Wait::Close => return self.finish(),
                Wait::Woken => {
                    fresh = true;
                    poll = true;
                }
                Wait::Due => {}
            }
            if deadline.is_none() {
                // Woken from sleep: read `interval` later (a batch fills).
                continue;
            }
            if self.batch_end.is_none() {
                let read = self.read();
                // Once more after a read that found lines or followed a
                // wake-up (the writer may not have written them yet);
                // then sleep until the next.
                poll = read || std::mem::take(&mut fresh);
                if self.batch_end.is_none() {
                    continue;
                }
            }
            self.send_batch();
        }
    }

    /// Waits until `deadline` (`None`: until woken), noting wake-ups.
    fn wait(&mut self, deadline: Option<Instant>) -> Wait {
        let mut woken = false;
        loop {
            let message = match deadline {
                None => self
                    .receiver
                    .recv()
                    .map_err(|_| RecvTimeoutError::Disconnected),
                Some(at) => {
                    let left = at.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return if woken { Wait::Woken } else { Wait::Due };
                    }
                    self.receiver.recv_timeout(left)
                }
            };
            match message {
                Ok(Message::Wake) if deadline.is_none() => return Wait::Woken,
                Ok(Message::Wake) => woken = true,
                Ok(Message::Close) | Err(RecvTimeoutError::Disconnected) => return Wait::Close,
                Err(RecvTimeoutError::Timeout) => {
                    return if woken { Wait::Woken } else { Wait::Due };
                }
            }
        }
    }

    /// At shutdown: read to the end and send, one attempt per batch.
    fn finish(mut self) {
        self.retry_at = None;
        loop {
            if self.batch_end.is_none() {
                self.read();
                if self.batch_end.is_none() {
                    return;
                }
            }
            if !self.send_batch() {
                return;
            }
        }
    }

    /// Reads lines into the batch until it is full or the log's end;
    /// true if any line was read.
    fn read(&mut self) -> bool {
        let mut any = false;
        self.more = false;
        let now = SystemTime::now();
        loop {
            if self.logs.len() >= self.max_batch || self.spans.len() >= self.max_batch {
                self.more = true;
                break;
            }
            let Some(line) = self.follower.next_sealed() else {
                break;
            };
            any = true;
            let replayed = self
                .replay_through
                .is_some_and(|through| line.seq <= through);
            match self.mapper.map(&line.raw, now) {
                Ok(mapped) if !replayed => {
                    self.logs.extend(mapped.log);
                    self.spans.extend(mapped.span);
                }
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(error = %e, seq = line.seq, "OpenTelemetry export: a log line is not JSON; skipped");
                }
            }
            if !replayed {
                self.replay_through = None;
                self.batch_end = Some(line);
            }
        }
        let lost = self.follower.take_lost();
        if lost > 0 {
            self.counters.lost.fetch_add(lost, Ordering::Relaxed);
            tracing::error!(
                lost,
                "{lost} event log lines were rotated away before they could be exported to OpenTelemetry"
            );
        }
        self.counters
            .behind_bytes
            .store(self.follower.pending_bytes(), Ordering::Relaxed);
        self.note_queued();
        any
    }

    fn note_queued(&self) {
        self.counters.queued.store(
            (self.logs.len() + self.spans.len()) as u64,
            Ordering::Relaxed,
        );
    }

    /// Sends the batch's logs, then its spans; once both are accepted,
    /// writes the cursor. False if a request failed (retried later).
    fn send_batch(&mut self) -> bool {
        if !self.logs_done {
            if !self.send(Signal::Logs) {
                return false;
            }
            self.logs_done = true;
        }
        if !self.send(Signal::Spans) {
            return false;
        }
        self.backoff = FIRST_BACKOFF;
        self.retry_at = None;
        if std::mem::take(&mut self.failing) {
            tracing::info!("OpenTelemetry export: the collector is reachable again");
        }
        self.logs.clear();
        self.spans.clear();
        self.logs_done = false;
        if let Some(end) = self.batch_end.take() {
            self.save_cursor(&end);
            self.counters.next_seq.store(end.seq + 1, Ordering::Relaxed);
        }
        self.note_queued();
        true
    }

    fn save_cursor(&mut self, end: &SealedLine) {
        let file = CursorFile {
            at: Cursor {
                file_id: end.file_id.clone(),
                line_offset: end.offset,
                seq: end.seq,
                chain: end.chain.clone(),
                first_seq: 0,
                shipped: 0,
            },
            replay_from: self
                .mapper
                .oldest_open_seq()
                .filter(|&from| end.seq.saturating_sub(from) < REPLAY_WINDOW),
        };
        match hookd_daemon::atomic::write_atomic(&self.cursor_path, file.to_json().as_bytes(), None)
        {
            Ok(()) => {
                if std::mem::take(&mut self.cursor_failing) {
                    tracing::info!("OpenTelemetry export: the cursor file is written again");
                }
            }
            Err(e) => {
                if !std::mem::replace(&mut self.cursor_failing, true) {
                    tracing::warn!(
                        error = %format!("{e:#}"),
                        "OpenTelemetry export: could not write the cursor file (a restart sends again from the last one written)"
                    );
                }
            }
        }
    }

    /// Sends the batch's records of `signal`; true when accepted, or
    /// refused for good (dropped, counted).
    fn send(&mut self, signal: Signal) -> bool {
        let (count, result) = match signal {
            Signal::Logs => {
                if self.logs.is_empty() {
                    return true;
                }
                (self.logs.len(), self.sender.logs(&self.logs))
            }
            Signal::Spans => {
                if self.spans.is_empty() {
                    return true;
                }
                (self.spans.len(), self.sender.spans(&self.spans))
            }
        };
        match result {
            Ok(()) => {
                let counter = match signal {
                    Signal::Logs => &self.counters.logs_exported,
                    Signal::Spans => &self.counters.spans_exported,
                };
                counter.fetch_add(count as u64, Ordering::Relaxed);
                true
            }
            Err(Failure::Refused(why)) => {
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
                    tracing::warn!(%why, retry_in = ?wait, "OpenTelemetry export failed; retrying with backoff, reading the log no further meanwhile (hooks are not affected)");
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

/// How [`Worker::wait`] ended.
enum Wait {
    /// The deadline passed, no wake-up meanwhile.
    Due,
    /// Lines were handed to the log meanwhile.
    Woken,
    /// Shutdown.
    Close,
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
    log: &Path,
) -> anyhow::Result<Arc<dyn hookd_daemon::faces::RecordExport>> {
    Ok(Arc::new(Export::start(config, log, |var| {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_file_round_trips_and_a_bad_one_names_what_is_missing() {
        let file = CursorFile {
            at: Cursor {
                file_id: "64768:1234".into(),
                line_offset: 4096,
                seq: 41,
                chain: "ab".repeat(32),
                first_seq: 0,
                shipped: 0,
            },
            replay_from: Some(39),
        };
        assert_eq!(CursorFile::parse(&file.to_json()), Ok(file.clone()));
        let none = CursorFile {
            replay_from: None,
            ..file
        };
        assert_eq!(CursorFile::parse(&none.to_json()), Ok(none));
        assert_eq!(
            CursorFile::parse(r#"{"file_id":"1:2","line_offset":0,"chain":"ab"}"#),
            Err("no `seq`".to_string())
        );
        assert!(CursorFile::parse("{").is_err());
        assert_eq!(
            cursor_path(Path::new("/var/lib/hookd/events.jsonl")),
            Path::new("/var/lib/hookd/otlp.cursor")
        );
    }
}
