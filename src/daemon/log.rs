//! The event log: one JSON line per event and per decision.
//!
//! Lines are serialized (and redacted) by the caller and handed to a
//! dedicated writer thread through a queue bounded in bytes (`[log]
//! queue_bytes`; lines carry hook inputs of up to the frame cap, so a count
//! would not bound memory), so answering a hook never waits for the disk. If
//! the queue is full (the disk is slow or stalled) the line is dropped and
//! counted rather than blocking a decision.
//!
//! - **Flush and fsync policy:** the writer flushes to the OS after every
//!   batch (whenever it has caught up, and at most ~1 ms after a line was
//!   queued), so a daemon crash loses nothing that was written; it fsyncs at rotation and shutdown, and after every batch
//!   with `fsync = "always"` (config `[log]`), which also survives power loss.
//! - **Rotation:** when a line would take the file past `max_bytes`, the file
//!   becomes `<log>.1` (older ones shift up to `<log>.<keep>`, the oldest is
//!   removed) and a new file is started. Readers follow by inode.
//! - **Torn lines:** a crash mid-write can leave a last line without its
//!   `\n`. Readers skip it; the writer truncates it away whenever it opens
//!   the file (at start and after an error), so new lines never glue onto it.
//! - **Failures:** an unwritable log (directory gone, disk full, permissions)
//!   is counted in `errors`, reported once per failure streak with
//!   `tracing::error!`, and retried with the next batch; decisions go on.
//!   Torn lines repaired during a streak (each failed retry on a full disk
//!   tears one) are reported once too. A streak ends after
//!   a minute (`STREAK_QUIET`) without a failure.
//! - **Shutdown:** [`EventLog::close`] gives the writer [`CLOSE_GRACE`] to
//!   write out what is queued. A writer stuck on a stalled disk is left
//!   behind (the process exit ends it) and the lines it could not write are
//!   counted and reported: a stalled disk never keeps the daemon from
//!   stopping.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io::{self, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::config::{Fsync, LogConfig};

/// How long the writer sleeps between polls while busy.
const LINGER: Duration = Duration::from_millis(1);

/// Empty polls (≈ 100 ms) before the writer parks until the next line.
const IDLE_POLLS_BEFORE_PARKING: u32 = 100;

/// Lines waiting for the writer before new ones are dropped (the byte
/// budget usually binds first).
const QUEUE_LINES: usize = 64 * 1024;

/// Most lines written in one batch.
const BATCH_LINES: usize = 4096;

/// A failure streak ends after this long without a failed write: a nearly
/// full disk lets small batches through between failures, and that is
/// still one outage, reported once.
const STREAK_QUIET: Duration = Duration::from_secs(60);

/// How long [`EventLog::close`] waits for the writer to finish.
pub const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Handle to the event log; cheap to share.
#[derive(Debug)]
pub struct EventLog {
    /// `None` once closed; a read lock per line is uncontended in practice.
    tx: RwLock<Option<mpsc::Sender<Bytes>>>,
    counters: Arc<LogCounters>,
    writer: Mutex<Option<JoinHandle<()>>>,
    path: PathBuf,
    max_queued_bytes: usize,
}

/// What the log has done, for `status` and tests.
#[derive(Debug, Default)]
pub struct LogCounters {
    /// Lines written to the file.
    pub written: AtomicU64,
    /// Lines dropped: queue full, or the file could not be written.
    pub dropped: AtomicU64,
    /// Failed attempts to open or write the file.
    pub errors: AtomicU64,
    /// Files rotated.
    pub rotations: AtomicU64,
    /// Torn last lines removed.
    pub repaired: AtomicU64,
    /// Lines queued and not yet written or dropped by the writer.
    pub queued_lines: AtomicU64,
    /// Bytes of those lines.
    pub queued_bytes: AtomicUsize,
}

impl EventLog {
    /// Starts the writer for `path`. Never fails: a log that cannot be
    /// opened now is reported and retried on every batch.
    pub fn open(path: &Path, config: &LogConfig) -> EventLog {
        let (tx, rx) = mpsc::channel::<Bytes>(QUEUE_LINES);
        let counters = Arc::new(LogCounters::default());
        let mut writer = Writer {
            path: path.to_path_buf(),
            config: config.clone(),
            counters: counters.clone(),
            file: None,
            size: 0,
            last_failure: None,
            repair_reported: false,
        };
        let handle = std::thread::Builder::new()
            .name("hookd-log".into())
            .spawn(move || writer.run(rx))
            .expect("spawning the log writer thread");
        EventLog {
            tx: RwLock::new(Some(tx)),
            counters,
            writer: Mutex::new(Some(handle)),
            path: path.to_path_buf(),
            max_queued_bytes: config.queue_bytes,
        }
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Counters.
    pub fn counters(&self) -> &LogCounters {
        &self.counters
    }

    /// Queues one line (which must end with `\n`). Never blocks: past the
    /// byte budget the line is dropped and counted. A line is always taken
    /// into an empty queue, whatever its size.
    pub fn push(&self, line: Bytes) {
        let tx = self.tx.read().unwrap_or_else(|e| e.into_inner());
        let Some(tx) = tx.as_ref() else { return };
        let len = line.len();
        let counters = &self.counters;
        let before = counters.queued_bytes.fetch_add(len, Ordering::Relaxed);
        if before > 0 && before + len > self.max_queued_bytes {
            counters.queued_bytes.fetch_sub(len, Ordering::Relaxed);
            counters.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        counters.queued_lines.fetch_add(1, Ordering::Relaxed);
        if tx.try_send(line).is_err() {
            counters.queued_bytes.fetch_sub(len, Ordering::Relaxed);
            counters.queued_lines.fetch_sub(1, Ordering::Relaxed);
            counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Stops taking lines and lets the writer write out what is queued and
    /// fsync, for at most [`CLOSE_GRACE`]. Returns how many queued lines
    /// were not written (0 unless the disk is stalled); the writer is then
    /// left behind. Lines pushed afterwards are ignored.
    pub fn close(&self) -> u64 {
        self.tx.write().unwrap_or_else(|e| e.into_inner()).take();
        let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        let Some(writer) = writer else { return 0 };
        let deadline = Instant::now() + CLOSE_GRACE;
        while !writer.is_finished() {
            if Instant::now() >= deadline {
                let lost = self.counters.queued_lines.load(Ordering::Relaxed);
                tracing::error!(
                    path = %self.path.display(),
                    lost,
                    "the event log writer did not finish within {}s (a stalled disk?); {lost} queued lines were not written",
                    CLOSE_GRACE.as_secs()
                );
                return lost;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = writer.join();
        0
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        self.close();
    }
}

struct Writer {
    path: PathBuf,
    config: LogConfig,
    counters: Arc<LogCounters>,
    file: Option<BufWriter<File>>,
    size: u64,
    /// The last failed write, while a failure streak lasts: a streak is
    /// reported once, not per batch.
    last_failure: Option<Instant>,
    /// A torn line was reported in this streak (or since start): a full
    /// disk tears a line on every retry, which is worth one warning.
    repair_reported: bool,
}

impl Writer {
    fn run(&mut self, mut rx: mpsc::Receiver<Bytes>) {
        let mut batch = Vec::with_capacity(256);
        let mut idle_polls = 0u32;
        loop {
            // While busy, poll: a sender then never has to wake this thread
            // (a futex on every hook's path). After a while with nothing to
            // do, park until the next line so an idle daemon costs nothing.
            match rx.try_recv() {
                Ok(line) => {
                    batch.push(line);
                    idle_polls = 0;
                }
                Err(mpsc::error::TryRecvError::Disconnected) => break,
                Err(mpsc::error::TryRecvError::Empty) if idle_polls < IDLE_POLLS_BEFORE_PARKING => {
                    idle_polls += 1;
                    std::thread::sleep(LINGER);
                    continue;
                }
                Err(mpsc::error::TryRecvError::Empty) => match rx.blocking_recv() {
                    Some(line) => {
                        batch.push(line);
                        idle_polls = 0;
                        // Gather what arrives right behind the first line.
                        std::thread::sleep(LINGER);
                    }
                    None => break,
                },
            }
            while batch.len() < BATCH_LINES {
                match rx.try_recv() {
                    Ok(line) => batch.push(line),
                    Err(_) => break,
                }
            }
            let result = self.write_batch(&batch);
            // Out of the queue's budget only once written (or given up on):
            // a batch stuck in a stalled write still holds its memory.
            let bytes: usize = batch.iter().map(Bytes::len).sum();
            self.counters
                .queued_bytes
                .fetch_sub(bytes, Ordering::Relaxed);
            self.counters
                .queued_lines
                .fetch_sub(batch.len() as u64, Ordering::Relaxed);
            match result {
                Ok(()) => {
                    self.counters
                        .written
                        .fetch_add(batch.len() as u64, Ordering::Relaxed);
                    if self
                        .last_failure
                        .is_some_and(|at| at.elapsed() >= STREAK_QUIET)
                    {
                        tracing::info!(path = %self.path.display(), "event log writable again");
                        self.last_failure = None;
                    }
                }
                Err(e) => {
                    self.counters.errors.fetch_add(1, Ordering::Relaxed);
                    self.counters
                        .dropped
                        .fetch_add(batch.len() as u64, Ordering::Relaxed);
                    if self.last_failure.is_none() {
                        tracing::error!(path = %self.path.display(), error = %e, "event log write failed; decisions go on, lines are dropped until it recovers");
                        self.repair_reported = false;
                    }
                    self.last_failure = Some(Instant::now());
                    // Reopen (and repair) on the next batch.
                    self.file = None;
                }
            }
            batch.clear();
        }
        if let Some(mut file) = self.file.take() {
            let _ = file.flush();
            let _ = file.get_ref().sync_all();
        }
    }

    fn write_batch(&mut self, batch: &[Bytes]) -> io::Result<()> {
        for line in batch {
            if self.file.is_none() {
                self.open()?;
            }
            let rotate_at = self.config.max_bytes;
            if rotate_at > 0 && self.size > 0 && self.size + line.len() as u64 > rotate_at {
                self.rotate()?;
            }
            let file = self.file.as_mut().expect("opened above");
            file.write_all(line)?;
            self.size += line.len() as u64;
        }
        if let Some(file) = self.file.as_mut() {
            file.flush()?;
            if self.config.fsync == Fsync::Always {
                file.get_ref().sync_data()?;
            }
        }
        Ok(())
    }

    fn open(&mut self) -> io::Result<()> {
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)?;
        if repair_torn_tail(&mut file)? {
            self.counters.repaired.fetch_add(1, Ordering::Relaxed);
            if !self.repair_reported {
                self.repair_reported = true;
                tracing::warn!(path = %self.path.display(), "removed a torn last line (an earlier crash or failed write)");
            }
        }
        self.size = file.metadata()?.len();
        self.file = Some(BufWriter::with_capacity(64 * 1024, file));
        Ok(())
    }

    fn rotate(&mut self) -> io::Result<()> {
        if let Some(mut file) = self.file.take() {
            file.flush()?;
            file.get_ref().sync_all()?;
        }
        let keep = self.config.keep;
        let numbered = |n: u32| {
            let mut p = self.path.clone().into_os_string();
            p.push(format!(".{n}"));
            PathBuf::from(p)
        };
        if keep == 0 {
            fs::remove_file(&self.path)?;
        } else {
            let _ = fs::remove_file(numbered(keep));
            for n in (1..keep).rev() {
                match fs::rename(numbered(n), numbered(n + 1)) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
                    _ => {}
                }
            }
            fs::rename(&self.path, numbered(1))?;
        }
        self.counters.rotations.fetch_add(1, Ordering::Relaxed);
        self.open()
    }
}

/// Truncates a last line that has no `\n`. Returns whether it did.
pub fn repair_torn_tail(file: &mut File) -> io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(false);
    }
    // Scan back in chunks for the previous newline.
    let mut end = len;
    let mut keep = 0;
    let mut chunk = vec![0u8; 64 * 1024];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut chunk[..n])?;
        if let Some(pos) = chunk[..n].iter().rposition(|&b| b == b'\n') {
            keep = start + pos as u64 + 1;
            break;
        }
        end = start;
    }
    file.set_len(keep)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait_written(log: &EventLog, n: u64) {
        for _ in 0..500 {
            if log.counters().written.load(Ordering::Relaxed) >= n {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("log wrote {:?}", log.counters());
    }

    #[test]
    fn repairs_a_torn_tail_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        fs::write(&path, "{\"a\":1}\n{\"b\":2}\n{\"torn\":").unwrap();
        let log = EventLog::open(&path, &LogConfig::default());
        log.push(Bytes::from_static(b"{\"c\":3}\n"));
        log.close();
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n"
        );
        assert_eq!(log.counters().repaired.load(Ordering::Relaxed), 1);

        fs::write(&path, "no newline at all").unwrap();
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        assert!(repair_torn_tail(&mut f).unwrap());
        assert_eq!(fs::read(&path).unwrap(), b"");
    }

    #[test]
    fn rotates_by_size_keeping_n_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let config = LogConfig {
            max_bytes: 20,
            keep: 2,
            ..LogConfig::default()
        };
        let log = EventLog::open(&path, &config);
        for i in 0..7 {
            log.push(Bytes::from(format!("{{\"line\":{i:04}}}\n"))); // 14 bytes
        }
        log.close();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"line\":0006}\n");
        assert_eq!(
            fs::read_to_string(dir.path().join("events.jsonl.1")).unwrap(),
            "{\"line\":0005}\n"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("events.jsonl.2")).unwrap(),
            "{\"line\":0004}\n"
        );
        assert!(!dir.path().join("events.jsonl.3").exists());
        assert_eq!(log.counters().rotations.load(Ordering::Relaxed), 6);
    }

    #[test]
    fn an_unwritable_log_counts_errors_and_recovers() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the log's directory should be: every open fails.
        let blocker = dir.path().join("state");
        fs::write(&blocker, "").unwrap();
        let path = blocker.join("events.jsonl");
        let log = EventLog::open(&path, &LogConfig::default());
        log.push(Bytes::from_static(b"{}\n"));
        for _ in 0..500 {
            if log.counters().errors.load(Ordering::Relaxed) > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(log.counters().errors.load(Ordering::Relaxed) > 0);
        fs::remove_file(&blocker).unwrap();
        log.push(Bytes::from_static(b"{\"after\":1}\n"));
        wait_written(&log, 1);
        log.close();
        assert_eq!(fs::read_to_string(&path).unwrap(), "{\"after\":1}\n");
    }

    /// A log on a FIFO nobody reads: the writer blocks once the pipe is
    /// full, as on a stalled disk.
    fn stalled_log(dir: &Path, queue_bytes: usize) -> EventLog {
        let path = dir.join("events.jsonl");
        nix::unistd::mkfifo(&path, nix::sys::stat::Mode::S_IRWXU).unwrap();
        let config = LogConfig {
            queue_bytes,
            ..LogConfig::default()
        };
        EventLog::open(&path, &config)
    }

    #[test]
    fn a_stalled_disk_bounds_the_queue_by_bytes_and_counts_drops() {
        let dir = tempfile::tempdir().unwrap();
        let log = stalled_log(dir.path(), 64 * 1024);
        let line = Bytes::from(format!("{{\"pad\":\"{}\"}}\n", "x".repeat(1000)));
        for _ in 0..2000 {
            log.push(line.clone());
        }
        let counters = log.counters();
        let queued = counters.queued_bytes.load(Ordering::Relaxed);
        assert!(queued <= 64 * 1024, "{queued} bytes queued");
        // The pipe takes 64 KiB, the queue as much: the rest is dropped.
        let dropped = counters.dropped.load(Ordering::Relaxed);
        assert!(dropped >= 2000 - 2 * 66, "{counters:?}");
    }

    #[test]
    fn closing_a_stalled_log_ends_in_bounded_time_and_counts_what_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let log = stalled_log(dir.path(), 1024 * 1024);
        let line = Bytes::from(format!("{{\"pad\":\"{}\"}}\n", "x".repeat(1000)));
        for _ in 0..500 {
            log.push(line.clone());
        }
        let started = Instant::now();
        let lost = log.close();
        assert!(started.elapsed() < CLOSE_GRACE + Duration::from_secs(2));
        assert!(lost > 300, "{lost} lines lost; {:?}", log.counters());
        assert_eq!(log.close(), 0, "closing again does not wait again");
    }
}
