//! The event log: one JSON line per event and per decision.
//!
//! Lines are serialized (and redacted) by the caller and handed to a
//! dedicated writer thread through a queue bounded in bytes (`[log]
//! queue_bytes`; lines carry hook inputs of up to the frame cap, so a count
//! would not bound memory), so answering a hook never waits for the disk. If
//! the queue is full (the disk is slow or stalled) the line is dropped and
//! counted rather than blocking a decision.
//!
//! - **Wake-ups:** the writer polls its queue every millisecond while lines
//!   keep arriving, so under a stream of hooks no sender has to wake it; after
//!   two empty polls it parks until the next line, and only then does a
//!   sender wake it (one futex). An isolated hook costs the writer about
//!   four wake-ups; an idle daemon none.
//! - **Flush and fsync policy:** the writer flushes to the OS after every
//!   batch (whenever it has caught up, and at most ~1 ms after a line was
//!   queued), so a daemon crash loses nothing that was written; it fsyncs at rotation and shutdown, and after every batch
//!   with `fsync = "always"` (config `[log]`), which also survives power loss.
//! - **Rotation:** when a line would take the file past `max_bytes`, the file
//!   becomes `<log>.1` (older ones shift up to `<log>.<keep>`, the oldest is
//!   removed) and a new file is started. Readers follow by inode. A crash
//!   at any step loses nothing: at worst one number is missing between two
//!   files whose chain goes on across it (`rotation_steps` has the
//!   argument), and the writer closes such a gap when it starts.
//! - **Torn lines:** a crash mid-write can leave a last line without its
//!   `\n`. Readers skip it; the writer truncates it away whenever it opens
//!   the file (when it starts, whether or not a line ever comes, and after
//!   an error), so new lines never glue onto it, and writes a
//!   `log_repaired` line saying so.
//! - **Hash chain:** the writer seals every line with its `seq` and a
//!   `chain` hash over the line before it ([`crate::protocol::chain`]), here
//!   on its own thread, off the hook path. It takes the chain up from the
//!   file's last line when it opens it (or, for an empty file, from the
//!   last line of `<log>.1`, else the genesis); a rotated-to file starts
//!   with a `chain_start` line. The head is in [`LogCounters::chain_head`]
//!   for `status`.
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
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::config::{Fsync, LogConfig};
use crate::protocol::chain::{ChainHead, ChainStart, LogRepaired, Sealed};

/// How long the writer sleeps between polls while busy.
const LINGER: Duration = Duration::from_millis(1);

/// Empty polls in a row before the writer parks until the next line: it
/// lingers only while lines keep arriving. Under a stream of hooks every
/// poll finds lines and the writer never parks (no sender wakes it); an
/// isolated hook (a Claude Code session: one every few seconds) costs the
/// writer a handful of wake-ups, not the ~100 of a fixed 100 ms linger.
/// Two, not one: a stream with a 1 ms gap in it does not park the writer.
const EMPTY_POLLS_BEFORE_PARKING: u32 = 2;

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
    /// The hash chain's head after the last line written (`None` before
    /// the writer has opened the file).
    pub chain_head: Mutex<Option<ChainHead>>,
    /// Woken (`notify_waiters`) after each batch of lines is written: a
    /// reader of the file (the team shipper) waits on it instead of
    /// polling, so an idle daemon is not woken. Enable the `Notified`,
    /// then compare [`LogCounters::written`], then wait.
    pub wrote: tokio::sync::Notify,
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
            chain: None,
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
    /// The chain after the last line written; `None` until the file is
    /// first opened. Kept across a rotation: the next file goes on from it.
    chain: Option<ChainHead>,
}

impl Writer {
    fn run(&mut self, mut rx: mpsc::Receiver<Bytes>) {
        // At start, not at the first line: a crash's leftovers (a torn last
        // line, a rotation cut short) are repaired even if this daemon
        // never logs anything.
        self.close_gaps();
        if let Err(e) = self.open().and_then(|()| self.flush_opened()) {
            self.counters.errors.fetch_add(1, Ordering::Relaxed);
            tracing::error!(path = %self.path.display(), error = %e, "cannot open the event log; decisions go on, and each batch of lines tries again");
            self.last_failure = Some(Instant::now());
        }
        let mut batch = Vec::with_capacity(256);
        let mut empty_polls = 0u32;
        loop {
            // While lines keep arriving, poll: a sender then never has to
            // wake this thread (a futex on every hook's path). Once polls
            // come back empty (`EMPTY_POLLS_BEFORE_PARKING`), park until the
            // next line, so an isolated hook or an idle daemon costs next to
            // nothing. A sender wakes the writer only while it is parked:
            // the queue's receiver registers its waker only in
            // `blocking_recv`, and a send with no waker registered is an
            // atomic operation, not a system call.
            match rx.try_recv() {
                Ok(line) => {
                    batch.push(line);
                    empty_polls = 0;
                }
                Err(mpsc::error::TryRecvError::Disconnected) => break,
                Err(mpsc::error::TryRecvError::Empty)
                    if empty_polls < EMPTY_POLLS_BEFORE_PARKING =>
                {
                    empty_polls += 1;
                    std::thread::sleep(LINGER);
                    continue;
                }
                Err(mpsc::error::TryRecvError::Empty) => match rx.blocking_recv() {
                    Some(line) => {
                        batch.push(line);
                        empty_polls = 0;
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
                    self.counters.wrote.notify_waiters();
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

    /// Writes out what opening the file wrote (a `chain_start`, a
    /// `log_repaired`) and publishes the chain's head, before any line.
    fn flush_opened(&mut self) -> io::Result<()> {
        if let Some(file) = self.file.as_mut() {
            file.flush()?;
        }
        *self
            .counters
            .chain_head
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = self.chain;
        Ok(())
    }

    fn write_batch(&mut self, batch: &[Bytes]) -> io::Result<()> {
        for line in batch {
            if self.file.is_none() {
                self.open()?;
            }
            let rotate_at = self.config.max_bytes;
            let sealed_len = line.len() as u64 + SEAL_BYTES;
            if rotate_at > 0 && self.size > 0 && self.size + sealed_len > rotate_at {
                self.rotate()?;
            }
            let file = self.file.as_mut().expect("opened above");
            let chain = self.chain.as_mut().expect("set when the file was opened");
            self.size += chain.seal(line, file)? as u64;
        }
        if let Some(file) = self.file.as_mut() {
            file.flush()?;
            if self.config.fsync == Fsync::Always {
                file.get_ref().sync_data()?;
            }
        }
        *self
            .counters
            .chain_head
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = self.chain;
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
        let removed = repair_torn_tail(&mut file)?;
        if removed > 0 {
            self.counters.repaired.fetch_add(1, Ordering::Relaxed);
            if !self.repair_reported {
                self.repair_reported = true;
                tracing::warn!(path = %self.path.display(), "removed a torn last line (an earlier crash or failed write)");
            }
        }
        self.size = file.metadata()?.len();
        let mut file = BufWriter::with_capacity(64 * 1024, file);
        // Where the chain goes on from: the file's last line; for an empty
        // file, the line before it (this daemon's last one before a
        // rotation, else the last one of `<log>.1`), announced by a
        // `chain_start` line; else the genesis. An unsealed last line (an
        // older hookd's) starts a new chain from the genesis.
        let mut chain = if self.size > 0 {
            last_head(file.get_mut(), self.size)?.unwrap_or_default()
        } else {
            match self.chain.or_else(|| last_head_of(&self.numbered(1))) {
                Some(mut chain) => {
                    let start = ChainStart {
                        at: crate::time::rfc3339(SystemTime::now()),
                        prev: chain.hex(),
                    };
                    let line = serde_json::to_vec(&start).expect("records serialize");
                    self.size += chain.seal(&line, &mut file)? as u64;
                    chain
                }
                None => ChainHead::genesis(),
            }
        };
        if removed > 0 {
            let repaired = LogRepaired {
                at: crate::time::rfc3339(SystemTime::now()),
                removed_bytes: removed,
            };
            let line = serde_json::to_vec(&repaired).expect("records serialize");
            self.size += chain.seal(&line, &mut file)? as u64;
        }
        self.chain = Some(chain);
        self.file = Some(file);
        Ok(())
    }

    /// `<log>.<n>`: the `n`th most recent rotated file.
    fn numbered(&self, n: u32) -> PathBuf {
        rotated_path(&self.path, n)
    }

    fn rotate(&mut self) -> io::Result<()> {
        if let Some(mut file) = self.file.take() {
            file.flush()?;
            file.get_ref().sync_all()?;
        }
        for step in rotation_steps(&self.path, self.config.keep)? {
            step.apply(&self.path)?;
        }
        sync_dir(&self.path);
        self.counters.rotations.fetch_add(1, Ordering::Relaxed);
        self.open()
    }

    /// Closes the gaps an interrupted rotation left in the rotated files'
    /// numbers (see [`rotation_steps`]), and names those it cannot prove
    /// hide no file. Run once, when the writer starts.
    fn close_gaps(&self) {
        let renumbering = match renumbering(&self.path) {
            Ok(renumbering) => renumbering,
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "could not check the rotated log files' numbers");
                return;
            }
        };
        for gap in &renumbering.unproven {
            tracing::warn!(
                path = %self.path.display(),
                "{} of the log's rotated files missing between {} and {}, and the chain does not show that no lines went with them; left as they are (`hookd log verify` reports it)",
                gap.describe(&self.path),
                gap.older(&self.path).display(),
                gap.newer(&self.path).display(),
            );
        }
        let closed = renumbering.renames.len();
        for step in renumbering.renames {
            if let Err(e) = step.apply(&self.path) {
                tracing::warn!(path = %self.path.display(), error = %e, "could not renumber the rotated log files");
                return;
            }
        }
        if closed > 0 {
            sync_dir(&self.path);
            tracing::warn!(
                path = %self.path.display(),
                "renumbered {closed} rotated log files: an interrupted rotation (a crash) had left a number out; no lines were missing"
            );
        }
    }
}

/// `<log>.<n>`: the `n`th most recent rotated file of `log`.
pub fn rotated_path(log: &Path, n: u32) -> PathBuf {
    let mut p = log.as_os_str().to_owned();
    p.push(format!(".{n}"));
    PathBuf::from(p)
}

/// The numbers of `log`'s rotated files that exist, ascending (newest
/// first). Every `<log>.<n>` in the directory counts, whatever the gaps
/// between them: a reader that stopped at the first missing number would
/// silently skip the files past it.
pub fn rotated_numbers(log: &Path) -> io::Result<Vec<u32>> {
    let Some(name) = log.file_name().and_then(|n| n.to_str()) else {
        return Ok(Vec::new());
    };
    let dir = match log.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut numbers = Vec::new();
    for entry in entries {
        let entry = entry?;
        let file_name = entry.file_name();
        let Some(digits) = file_name
            .to_str()
            .and_then(|f| f.strip_prefix(name))
            .and_then(|f| f.strip_prefix('.'))
        else {
            continue;
        };
        // Only the names the writer makes: `.7`, not `.07` or `.+7`.
        match digits.parse::<u32>() {
            Ok(n) if n > 0 && n.to_string() == digits => numbers.push(n),
            _ => {}
        }
    }
    numbers.sort_unstable();
    Ok(numbers)
}

/// Numbers missing between two rotated files of a set: `first..=last`
/// are absent while `<log>.<last + 1>` exists, and so does the file newer
/// than `<log>.<first>` (`<log>.<first - 1>`, or `<log>` itself when
/// `first` is 1 — the log is not looked at: every rotated file is newer
/// than none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// The lowest missing number.
    pub first: u32,
    /// The highest missing number.
    pub last: u32,
}

impl Gap {
    /// The gaps in `numbers` (ascending, as [`rotated_numbers`] gives
    /// them), lowest first.
    pub fn all(numbers: &[u32]) -> Vec<Gap> {
        let mut gaps = Vec::new();
        let mut expected = 1;
        for &n in numbers {
            if n > expected {
                gaps.push(Gap {
                    first: expected,
                    last: n - 1,
                });
            }
            expected = n + 1;
        }
        gaps
    }

    /// The file just older than the gap.
    pub fn older(&self, log: &Path) -> PathBuf {
        rotated_path(log, self.last + 1)
    }

    /// The file just newer than the gap.
    pub fn newer(&self, log: &Path) -> PathBuf {
        match self.first {
            1 => log.to_path_buf(),
            n => rotated_path(log, n - 1),
        }
    }

    /// `<log>.3 is` or `<log>.3 to <log>.5 are`, for messages.
    pub fn describe(&self, log: &Path) -> String {
        let first = rotated_path(log, self.first);
        if self.first == self.last {
            format!("{} is", first.display())
        } else {
            format!(
                "{} to {} are",
                first.display(),
                rotated_path(log, self.last).display()
            )
        }
    }
}

/// One file-system step of a rotation or of a repair.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Remove(PathBuf),
    Rename(PathBuf, PathBuf),
}

impl Step {
    /// Does it. A rotated file of `log` that is already gone is no error
    /// (a person removed it); `log` itself missing is (the writer reopens
    /// it).
    fn apply(&self, log: &Path) -> io::Result<()> {
        let (result, path) = match self {
            Step::Remove(path) => (fs::remove_file(path), path),
            Step::Rename(from, to) => (fs::rename(from, to), from),
        };
        match result {
            Err(e) if e.kind() == io::ErrorKind::NotFound && path != log => Ok(()),
            other => other,
        }
    }
}

/// The steps of a rotation of `log`, in order: each rotated file moves up
/// one number, newest last, those past `keep` are removed, then `<log>`
/// becomes `<log>.1` (the writer then starts a new `<log>`).
///
/// Why a crash at any point leaves a set nothing is lost from (each step
/// is one atomic `rename` or `unlink`):
/// - while the files past `keep` are removed: only the oldest go, which
///   the rotation removes anyway;
/// - after `.n` moved to `.n+1` and before `.n-1` moves to `.n`: the
///   number `n` is missing, but the files on either side of it follow one
///   another (`.n-1`'s `chain_start` names `.n+1`'s last `chain`). Readers
///   take every number present, so nothing is skipped; `verify` sees that
///   the chain goes on across the gap; the writer closes it when it next
///   starts ([`renumbering`]);
/// - after `<log>` became `<log>.1`: there is no `<log>`; the writer
///   creates it and goes on from `<log>.1`'s last line with a
///   `chain_start`, exactly as after the rotation.
///
/// Files already missing in the middle (a person removed one) keep their
/// place: every file present moves up by one, so the gap stays between
/// the same two files and `verify` keeps naming it.
fn rotation_steps(log: &Path, keep: u32) -> io::Result<Vec<Step>> {
    let mut steps = Vec::new();
    for n in rotated_numbers(log)?.into_iter().rev() {
        if n >= keep {
            steps.push(Step::Remove(rotated_path(log, n)));
        } else {
            steps.push(Step::Rename(rotated_path(log, n), rotated_path(log, n + 1)));
        }
    }
    steps.push(match keep {
        0 => Step::Remove(log.to_path_buf()),
        _ => Step::Rename(log.to_path_buf(), rotated_path(log, 1)),
    });
    Ok(steps)
}

/// How to close the gaps in `log`'s rotated files that the chain proves
/// hide no file (an interrupted rotation's), and the gaps it cannot.
#[derive(Debug, Default)]
struct Renumbering {
    /// Renames, to be done in order: files older than a closed gap move
    /// down, lowest first, so no rename overwrites a file.
    renames: Vec<Step>,
    /// Gaps across which the chain does not go on (or cannot be read).
    unproven: Vec<Gap>,
}

/// Plans the closing of the gaps left by interrupted rotations: a gap is
/// closed when the file just newer than it starts with a `chain_start`
/// that goes on from the last line of the file just older (so no file
/// was there). A crash during the renames leaves a gap of the same kind,
/// closed at the next start.
fn renumbering(log: &Path) -> io::Result<Renumbering> {
    let numbers = rotated_numbers(log)?;
    let mut plan = Renumbering::default();
    let mut shift = 0;
    let mut gaps = Gap::all(&numbers).into_iter().peekable();
    for n in numbers {
        if let Some(gap) = gaps.next_if(|gap| gap.last + 1 == n) {
            if goes_on(&gap.newer(log), &gap.older(log)) {
                shift += gap.last - gap.first + 1;
            } else {
                plan.unproven.push(gap);
            }
        }
        if shift > 0 {
            plan.renames.push(Step::Rename(
                rotated_path(log, n),
                rotated_path(log, n - shift),
            ));
        }
    }
    Ok(plan)
}

/// Whether the file at `newer` goes on from the last line of the file at
/// `older`: its first line is a `chain_start` whose `prev` is that line's
/// `chain`.
fn goes_on(newer: &Path, older: &Path) -> bool {
    let Some(head) = last_head_of(older) else {
        return false;
    };
    let Ok(file) = File::open(newer) else {
        return false;
    };
    // A `chain_start` line is short; a longer first line is something else.
    let mut first = Vec::with_capacity(512);
    if file.take(4096).read_to_end(&mut first).is_err() {
        return false;
    }
    let first = first.split(|&b| b == b'\n').next().unwrap_or_default();
    crate::protocol::chain::starts_after(first, &head)
}

/// Makes the renames in `log`'s directory durable (they are only in the
/// directory's metadata). Best effort: a directory that cannot be opened
/// or synced still has the renames, only not yet on disk.
fn sync_dir(log: &Path) {
    let dir = match log.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
}

/// Truncates a last line that has no `\n`. Returns how many bytes it
/// removed (0: the file ended with a whole line).
pub fn repair_torn_tail(file: &mut File) -> io::Result<u64> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    let mut last = [0u8; 1];
    file.seek(SeekFrom::Start(len - 1))?;
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(0);
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
    Ok(len - keep)
}

/// Most bytes sealing adds to a line: `,"seq":` and 20 digits, then
/// `,"chain":"`, 64 hex digits and `"}` in place of `}`.
const SEAL_BYTES: u64 = 7 + 20 + 10 + 64 + 1;

/// The chain after the last line of `file` (`len` bytes, ending with a
/// whole line): `None` if that line is not sealed. Reads only its end,
/// where the seal is.
fn last_head(file: &mut File, len: u64) -> io::Result<Option<ChainHead>> {
    let start = len.saturating_sub(256);
    let mut tail = vec![0u8; (len - start) as usize];
    file.seek(SeekFrom::Start(start))?;
    file.read_exact(&mut tail)?;
    let tail = tail.strip_suffix(b"\n").unwrap_or(&tail);
    let last = match tail.iter().rposition(|&b| b == b'\n') {
        Some(at) => &tail[at + 1..],
        None => tail,
    };
    Ok(Sealed::read(last).map(|sealed| ChainHead::after(&sealed)))
}

/// [`last_head`] of the file at `path`, if it exists and can be read.
fn last_head_of(path: &Path) -> Option<ChainHead> {
    let mut file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    // Skip a torn tail: the chain goes on from the last whole line.
    let mut end = len;
    let mut byte = [0u8; 1];
    while end > 0 {
        file.seek(SeekFrom::Start(end - 1)).ok()?;
        file.read_exact(&mut byte).ok()?;
        if byte[0] == b'\n' {
            break;
        }
        end -= 1;
    }
    last_head(&mut file, end).ok().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::chain::{Broken, Verified, Verifier};

    fn wait_written(log: &EventLog, n: u64) {
        for _ in 0..500 {
            if log.counters().written.load(Ordering::Relaxed) >= n {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        panic!("log wrote {:?}", log.counters());
    }

    /// The lines of `path` as they were before sealing (without `seq`
    /// and `chain`), and whether the file verifies on its own.
    fn records(path: &Path) -> (Vec<String>, Result<Verified, Broken>) {
        let bytes = fs::read(path).unwrap();
        let records = bytes
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| match Sealed::read(l) {
                Some(sealed) => String::from_utf8(sealed.record()).unwrap(),
                None => format!("unsealed: {}", String::from_utf8_lossy(l)),
            })
            .collect();
        let mut verifier = Verifier::new();
        let verified = verifier
            .file(&path.display().to_string(), &bytes)
            .map(|()| verifier.finish());
        (records, verified)
    }

    /// Drops the time from a `chain_start` or `log_repaired` record.
    fn timeless(record: &str) -> String {
        match record.find(",\"at\":\"") {
            Some(at) => {
                let end = record[at + 7..].find('"').unwrap() + at + 8;
                format!("{}{}", &record[..at], &record[end..])
            }
            None => record.to_string(),
        }
    }

    #[test]
    fn repairs_a_torn_tail_at_open_and_records_it_in_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let log = EventLog::open(&path, &LogConfig::default());
        log.push(Bytes::from_static(b"{\"a\":1}\n"));
        log.push(Bytes::from_static(b"{\"b\":2}\n"));
        log.close();
        // A crash mid-write.
        let mut torn = fs::read(&path).unwrap();
        torn.extend_from_slice(b"{\"torn\":");
        fs::write(&path, &torn).unwrap();

        let log = EventLog::open(&path, &LogConfig::default());
        log.push(Bytes::from_static(b"{\"c\":3}\n"));
        log.close();
        let (records, verified) = records(&path);
        let records: Vec<String> = records.iter().map(|r| timeless(r)).collect();
        assert_eq!(
            records,
            [
                "{\"a\":1}",
                "{\"b\":2}",
                "{\"type\":\"log_repaired\",\"removed_bytes\":8}",
                "{\"c\":3}"
            ]
        );
        let verified = verified.unwrap();
        assert_eq!(
            (verified.lines, verified.starts_from.as_str()),
            (4, "genesis")
        );
        assert_eq!(verified.notes.len(), 1, "{verified:?}");
        assert!(verified.notes[0].detail.contains("8 bytes"), "{verified:?}");
        assert_eq!(log.counters().repaired.load(Ordering::Relaxed), 1);
        assert_eq!(
            *log.counters().chain_head.lock().unwrap(),
            Some(ChainHead {
                next_seq: 4,
                hash: Sealed::read(fs::read(&path).unwrap().trim_ascii_end())
                    .unwrap()
                    .chain
            })
        );

        fs::write(&path, "no newline at all").unwrap();
        let mut f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        assert_eq!(repair_torn_tail(&mut f).unwrap(), 17);
        assert_eq!(fs::read(&path).unwrap(), b"");
    }

    #[test]
    fn a_restarted_writer_goes_on_with_the_chain() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        for n in 0..3 {
            let log = EventLog::open(&path, &LogConfig::default());
            log.push(Bytes::from(format!("{{\"run\":{n}}}\n")));
            log.close();
        }
        let (records, verified) = records(&path);
        assert_eq!(records, ["{\"run\":0}", "{\"run\":1}", "{\"run\":2}"]);
        assert_eq!(verified.unwrap().lines, 3);
    }

    #[test]
    fn rotates_by_size_keeping_n_files_each_starting_where_the_last_ended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let config = LogConfig {
            max_bytes: 20,
            keep: 2,
            ..LogConfig::default()
        };
        let log = EventLog::open(&path, &config);
        for i in 0..7 {
            log.push(Bytes::from(format!("{{\"line\":{i:04}}}\n")));
        }
        log.close();
        let start = "{\"type\":\"chain_start\",\"prev\":\"";
        for (file, line) in [
            ("events.jsonl", 6),
            ("events.jsonl.1", 5),
            ("events.jsonl.2", 4),
        ] {
            let (records, verified) = records(&dir.path().join(file));
            assert_eq!(records.len(), 2, "{records:?}");
            assert!(timeless(&records[0]).starts_with(start), "{records:?}");
            assert_eq!(records[1], format!("{{\"line\":{line:04}}}"));
            // Each file verifies on its own, from where the one before ended.
            assert_ne!(verified.unwrap().starts_from, "genesis");
        }
        assert!(!dir.path().join("events.jsonl.3").exists());
        assert_eq!(log.counters().rotations.load(Ordering::Relaxed), 6);
        // And the set as one chain.
        let mut verifier = Verifier::new();
        for file in ["events.jsonl.2", "events.jsonl.1", "events.jsonl"] {
            verifier
                .file(file, &fs::read(dir.path().join(file)).unwrap())
                .unwrap();
        }
        assert_eq!(verifier.finish().lines, 6);
    }

    /// Every line of the files of `log`'s set that are there (oldest
    /// first, whatever numbers are missing), as records without the
    /// chain's own lines, after checking that they form one chain.
    fn set_records(log: &Path) -> Vec<String> {
        let mut files: Vec<PathBuf> = rotated_numbers(log)
            .unwrap()
            .into_iter()
            .rev()
            .map(|n| rotated_path(log, n))
            .collect();
        files.extend(Some(log.to_path_buf()).filter(|l| l.exists()));
        let mut verifier = Verifier::new();
        let mut all = Vec::new();
        for file in &files {
            let (records, _) = records(file);
            verifier
                .file(&file.display().to_string(), &fs::read(file).unwrap())
                .unwrap_or_else(|broken| panic!("{broken:?} in {files:?}"));
            all.extend(
                records
                    .into_iter()
                    .filter(|r| !r.contains("\"type\":\"chain_start\"")),
            );
        }
        all
    }

    /// Copies the files of `from`'s directory into `to`.
    fn copy_dir(from: &Path, to: &Path) {
        for entry in fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }

    #[test]
    fn a_crash_after_any_step_of_a_rotation_loses_nothing_and_the_next_start_renumbers() {
        let built = tempfile::tempdir().unwrap();
        let config = LogConfig {
            max_bytes: 160,
            keep: 5,
            ..LogConfig::default()
        };
        let log = EventLog::open(&built.path().join("events.jsonl"), &config);
        for i in 0..9 {
            log.push(Bytes::from(format!("{{\"line\":{i:04}}}\n")));
        }
        log.close();
        let built_log = built.path().join("events.jsonl");
        assert_eq!(rotated_numbers(&built_log).unwrap(), [1, 2, 3, 4, 5]);
        let before = set_records(&built_log);
        let oldest = records(&rotated_path(&built_log, 5)).0;
        let steps = rotation_steps(&built_log, config.keep).unwrap();
        // Remove .5, move .4 … .1 up, move the log to .1.
        assert_eq!(steps.len(), 6, "{steps:?}");
        for crash_after in 0..=steps.len() {
            let dir = tempfile::tempdir().unwrap();
            copy_dir(built.path(), dir.path());
            let path = dir.path().join("events.jsonl");
            for step in &rotation_steps(&path, config.keep).unwrap()[..crash_after] {
                step.apply(&path).unwrap();
            }
            // What a reader sees at that instant: every line, one chain
            // (the oldest file gone once its removal ran).
            let at_crash = set_records(&path);
            let lost = if crash_after == 0 {
                0
            } else {
                oldest.len() - 1
            };
            assert_eq!(at_crash, before[lost..], "after {crash_after} steps");

            // The next start closes the gap, and the chain goes on.
            let restarted = EventLog::open(&path, &config);
            restarted.push(Bytes::from_static(b"{\"after\":\"restart\"}\n"));
            restarted.close();
            let numbers = rotated_numbers(&path).unwrap();
            let expected: Vec<u32> = (1..=numbers.len() as u32).collect();
            assert_eq!(numbers, expected, "after {crash_after} steps");
            let after = set_records(&path);
            assert_eq!(
                after.last().map(String::as_str),
                Some("{\"after\":\"restart\"}"),
                "after {crash_after} steps"
            );
            // Only whole oldest files went (the restart's line rotated).
            let (kept, _) = after.split_at(after.len() - 1);
            assert!(
                at_crash.ends_with(kept) && kept.len() >= 4,
                "after {crash_after} steps: {at_crash:?} then {after:?}"
            );
        }
    }

    #[test]
    fn a_rotation_keeps_a_removed_file_s_gap_between_the_same_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let config = LogConfig {
            max_bytes: 160,
            keep: 8,
            ..LogConfig::default()
        };
        let log = EventLog::open(&path, &config);
        for i in 0..6 {
            log.push(Bytes::from(format!("{{\"line\":{i:04}}}\n")));
        }
        log.close();
        assert_eq!(rotated_numbers(&path).unwrap(), [1, 2, 3, 4, 5]);
        let third = records(&rotated_path(&path, 3)).0;
        let fourth = records(&rotated_path(&path, 4)).0;
        fs::remove_file(rotated_path(&path, 3)).unwrap();
        // A start does not renumber across it: the chain breaks there.
        let log = EventLog::open(&path, &config);
        log.push(Bytes::from_static(b"{\"line\":9999}\n"));
        log.close();
        assert_eq!(rotated_numbers(&path).unwrap(), [1, 2, 3, 5, 6]);
        assert_eq!(records(&rotated_path(&path, 5)).0, fourth);
        assert_ne!(records(&rotated_path(&path, 3)).0, third);
        assert_eq!(Gap::all(&[1, 2, 3, 5, 6]), [Gap { first: 4, last: 4 }]);
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
        // Wait for the line to be dropped, not only for an error: the
        // writer's first open fails (and counts) before the line arrives,
        // and a slow machine may reach the line only after the blocker is
        // gone, which would write it.
        for _ in 0..2000 {
            if log.counters().dropped.load(Ordering::Relaxed) > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(log.counters().dropped.load(Ordering::Relaxed), 1);
        assert!(log.counters().errors.load(Ordering::Relaxed) > 0);
        fs::remove_file(&blocker).unwrap();
        log.push(Bytes::from_static(b"{\"after\":1}\n"));
        wait_written(&log, 1);
        log.close();
        assert_eq!(records(&path).0, ["{\"after\":1}"]);
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
