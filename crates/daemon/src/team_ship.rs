//! Shipping the event log to the team database (`[team]`, `ship`, on by
//! default; docs/team.md "Shipping"). The log is the queue: a task reads
//! the file behind the log's writer — the lines as written, already
//! redacted and sealed — and ships them in batches
//! ([`hookd_team::ship::ship`]); nothing is held in memory but the batch
//! being shipped.
//!
//! **The cursor** lives in the database (`hookd.ship_cursor`), written in
//! the same transaction as the rows it covers: it never says more than
//! the database holds, a crash between a commit and anything else re-ships
//! at most one batch (stored once: `ON CONFLICT DO NOTHING` by (machine,
//! seq)), and a database restored from a backup takes its cursor back with
//! its rows, so the shipper refills what the restore lost for as far as the
//! log still reaches. A state file beside the log could do neither: it
//! could say "shipped" of rows the database lost.
//!
//! The cursor names the last shipped line by file (`dev:inode`), offset,
//! `seq` and chain hash. On start the shipper opens that file, checks that
//! the line at the offset has that seq and hash, and goes on after it;
//! when it does not (the file was rotated away, a log restored from a copy)
//! it finds the line by `seq` among `<log>`, `<log>.1`, ….
//!
//! **Rotation** is followed by content, not by name: once `<log>` names
//! another file, the file being read is read to its end through the open
//! descriptor (the writer finished it before renaming it), and the next
//! file is the one whose first line has the smallest `seq` above the last
//! one read. Lines are lost only if a file was deleted (more than `[log]
//! keep` rotations) before the shipper reached it: counted in `lost` and
//! logged.
//!
//! **The database away:** the batch is kept and retried with backoff (1 s
//! doubling to 60 s); the log grows meanwhile and is read on from the
//! cursor. Failures are counted (`status.team.ship`, `/metrics`) and
//! logged once per streak. Hooks never wait on any of it.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookd_team::connect::{Backoff, Reconnecting};
pub use hookd_team::ship::Cursor;
use hookd_team::ship::{Joiner, Line};
use tokio_util::sync::CancellationToken;

use crate::protocol::chain::Sealed;
use crate::protocol::hex;
use crate::Shared;

/// Most lines in one batch.
pub const BATCH_LINES: usize = 2_000;
/// Most record bytes in one batch (a batch always takes one line).
pub const BATCH_BYTES: usize = 4 << 20;
/// How many rotated files (`<log>.1` …) are looked at at most.
const MAX_ROTATED: u32 = 1000;

/// The shipper's counters, for `status.team.ship` and `/metrics`.
#[derive(Debug, Default)]
pub struct ShipState {
    shipped: AtomicU64,
    /// Last seq the database holds, +1 (0: unknown).
    next_seq: AtomicU64,
    pending_bytes: AtomicU64,
    lost: AtomicU64,
    failures: AtomicU64,
    failing: AtomicBool,
    last_error: Mutex<Option<String>>,
}

impl ShipState {
    /// `status.team.ship`; `head` is the log's chain head (its next seq).
    pub fn status(&self, log_next_seq: Option<u64>) -> crate::protocol::status::ShipStatus {
        let next = self.next_seq.load(Ordering::Relaxed);
        crate::protocol::status::ShipStatus {
            shipped: self.shipped.load(Ordering::Relaxed),
            last_seq: next.checked_sub(1),
            pending_lines: log_next_seq.map_or(0, |head| head.saturating_sub(next)),
            pending_bytes: self.pending_bytes.load(Ordering::Relaxed),
            lost: self.lost.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            last_error: self
                .last_error
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        }
    }

    fn failed(&self, what: &str, error: &dyn std::fmt::Display) {
        let message = format!("{what}: {error}");
        if !self.failing.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "shipping the event log to the team database failed (logged once until it works again): {message}"
            );
        }
        // The cause before the count: a reader that sees the failure
        // counted finds its cause too.
        *self.last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(message);
        self.failures.fetch_add(1, Ordering::Relaxed);
    }

    fn succeeded(&self) {
        if self.failing.swap(false, Ordering::Relaxed) {
            tracing::info!("shipping the event log to the team database works again");
        }
    }
}

/// Starts the shipper (the caller checked `[team]` and `ship`).
pub fn start(
    shared: &Arc<Shared>,
    target: hookd_team::ConnectTarget,
    interval: Duration,
    fleet_written: impl Fn() -> bool + Send + 'static,
    shutdown: &CancellationToken,
) -> Arc<ShipState> {
    let state = Arc::new(ShipState::default());
    tokio::spawn(run(
        shared.clone(),
        target,
        interval,
        state.clone(),
        fleet_written,
        shutdown.clone(),
    ));
    state
}

async fn run(
    shared: Arc<Shared>,
    target: hookd_team::ConnectTarget,
    interval: Duration,
    state: Arc<ShipState>,
    fleet_written: impl Fn() -> bool,
    shutdown: CancellationToken,
) {
    let machine = target.machine.clone();
    let path = shared.log.path().to_path_buf();
    let log = shared.log.counters();
    let mut db = Reconnecting::new(target);
    // How long a caught-up shipper, told a line was written, waits for
    // more before it reads: one transaction per interval at most.
    let gather = interval;
    // The log's `written` count when the last read of the file began: a
    // caught-up shipper sleeps until it moves (never polls the file).
    let mut seen = u64::MAX;
    // Row-level security lets this machine write rows only under a name
    // whose fleet row it owns: the fleet task writes it first.
    while !fleet_written() {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
    }
    let mut backoff = Backoff::default();
    let mut follower: Option<Follower> = None;
    let mut batch: Vec<Line> = Vec::new();
    let mut batch_end: Option<(String, u64)> = None;
    let mut joiner = Joiner::default();
    loop {
        let result: Result<bool, String> = async {
            if follower.is_none() {
                let client = db.client().await.map_err(|e| e.to_string())?;
                let cursor = hookd_team::ship::cursor(client, &machine)
                    .await
                    .map_err(|e| format!("reading the cursor: {e}"))?;
                if let Some(c) = &cursor {
                    state.next_seq.store(c.seq + 1, Ordering::Relaxed);
                }
                let path = path.clone();
                let f = tokio::task::spawn_blocking(move || Follower::resume(path, cursor.as_ref()))
                    .await
                    .map_err(|e| e.to_string())?;
                tracing::info!(
                    "shipping the event log after seq {}, {}",
                    f.last_seq.map_or("-".to_string(), |s| s.to_string()),
                    f.resumed
                );
                follower = Some(f);
            }
            if batch.is_empty() {
                seen = log.written.load(Ordering::Relaxed);
                let mut f = follower.take().expect("set above");
                let (mut f, lines, end) = tokio::task::spawn_blocking(move || {
                    let (lines, end) = f.fill();
                    (f, lines, end)
                })
                .await
                .map_err(|e| e.to_string())?;
                state.pending_bytes.store(f.pending_bytes(), Ordering::Relaxed);
                let lost = f.take_lost();
                if lost > 0 {
                    state.lost.fetch_add(lost, Ordering::Relaxed);
                    tracing::error!(
                        lost,
                        "{lost} log lines were rotated away before they could be shipped to the team database"
                    );
                }
                follower = Some(f);
                batch = lines;
                for line in &mut batch {
                    joiner.fill(line);
                }
                batch_end = end;
            }
            let Some((file_id, offset)) = batch_end.clone() else {
                return Ok(false);
            };
            let last = batch.last().map(|l| l.seq);
            let client = db.client_mut().await.map_err(|e| e.to_string())?;
            let inserted = hookd_team::ship::ship(client, &machine, &batch, &file_id, offset)
                .await
                .map_err(|e| format!("shipping seq {}..: {e}", batch[0].seq))?;
            state.shipped.fetch_add(inserted, Ordering::Relaxed);
            if let Some(last) = last {
                state.next_seq.store(last + 1, Ordering::Relaxed);
            }
            batch.clear();
            batch_end = None;
            Ok(true)
        }
        .await;
        match result {
            Ok(busy) => {
                state.succeeded();
                backoff.reset();
                if !busy {
                    // Caught up: sleep until the writer writes a line (an
                    // idle daemon is not woken), then gather for `gather`.
                    let wrote = log.wrote.notified();
                    tokio::pin!(wrote);
                    wrote.as_mut().enable();
                    if log.written.load(Ordering::Relaxed) == seen {
                        tokio::select! {
                            _ = shutdown.cancelled() => return,
                            _ = wrote => {}
                        }
                    }
                    tokio::select! {
                        _ = shutdown.cancelled() => return,
                        _ = tokio::time::sleep(gather) => {}
                    }
                }
            }
            Err(e) => {
                db.failed();
                state.failed("shipping", &e);
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(backoff.next_wait()) => {}
                }
            }
        }
        if shutdown.is_cancelled() {
            return;
        }
    }
}

/// A file's identity: `dev:inode`.
fn file_id(meta: &std::fs::Metadata) -> String {
    format!("{}:{}", meta.dev(), meta.ino())
}

/// `<log>.n`.
fn numbered(path: &Path, n: u32) -> PathBuf {
    let mut p = path.to_path_buf().into_os_string();
    p.push(format!(".{n}"));
    PathBuf::from(p)
}

/// The first sealed line's seq of `file` (read from its start; the
/// position is left anywhere).
fn first_seq(file: &mut File) -> Option<u64> {
    file.seek(SeekFrom::Start(0)).ok()?;
    let mut reader = io::BufReader::new(file);
    let mut line = Vec::new();
    for _ in 0..16 {
        line.clear();
        let n = io::BufRead::read_until(&mut reader, b'\n', &mut line).ok()?;
        if n == 0 || line.last() != Some(&b'\n') {
            return None;
        }
        line.pop();
        if let Some(sealed) = Sealed::read(&line) {
            return Some(sealed.seq);
        }
    }
    None
}

/// One of the log's files, open.
struct LogFile {
    file: File,
    id: String,
    first: Option<u64>,
}

/// Every file of the log now (`<log>`, `<log>.1`, …), open, without
/// duplicates. The writer shifts files from the top down, so a missing
/// number is the end only if the next is missing too.
pub fn log_files(path: &Path) -> Vec<(File, String, Option<u64>)> {
    open_all(path)
        .into_iter()
        .map(|f| (f.file, f.id, f.first))
        .collect()
}

fn open_all(path: &Path) -> Vec<LogFile> {
    let mut found: Vec<LogFile> = Vec::new();
    let mut missing = 0;
    for n in 0..=MAX_ROTATED {
        let name = if n == 0 {
            path.to_path_buf()
        } else {
            numbered(path, n)
        };
        let Ok(mut file) = File::open(&name) else {
            if n > 0 {
                missing += 1;
                if missing == 2 {
                    break;
                }
            }
            continue;
        };
        missing = 0;
        let Ok(meta) = file.metadata() else { continue };
        let id = file_id(&meta);
        if found.iter().any(|f| f.id == id) {
            continue;
        }
        let first = first_seq(&mut file);
        found.push(LogFile { file, id, first });
    }
    found
}

/// Reads the log's sealed lines in order from a cursor, following
/// rotation by content.
pub struct Follower {
    path: PathBuf,
    /// The file being read (`None` until the log exists).
    file: Option<File>,
    id: String,
    /// File offset of `buf[0]`.
    buf_offset: u64,
    buf: Vec<u8>,
    /// Where the next unread byte of `buf` is.
    start: usize,
    /// The last seq read (or shipped before this start).
    last_seq: Option<u64>,
    /// Lines at or below this seq are skipped (a resume by seq).
    skip_through: Option<u64>,
    /// `<log>` named another file at this file's end once already: the
    /// next end is final.
    drained: bool,
    lost: u64,
    /// How [`Follower::resume`] found its place, for the log.
    pub resumed: &'static str,
}

impl Follower {
    /// Positions after `cursor` (or at the log's oldest line).
    pub fn resume(path: PathBuf, cursor: Option<&Cursor>) -> Follower {
        let mut f = Follower {
            path,
            file: None,
            id: String::new(),
            buf_offset: 0,
            buf: Vec::new(),
            start: 0,
            last_seq: cursor.map(|c| c.seq),
            skip_through: cursor.map(|c| c.seq),
            drained: false,
            lost: 0,
            resumed: "from the log's oldest line (no cursor yet)",
        };
        let mut files = open_all(&f.path);
        if let Some(c) = cursor {
            // The fast way: the very line the cursor names.
            if let Some(at) = files.iter().position(|lf| lf.id == c.file_id) {
                let mut file = files.swap_remove(at).file;
                if let Some(end) = line_at(&mut file, c.line_offset, c.seq, &c.chain) {
                    if file.seek(SeekFrom::Start(end)).is_ok() {
                        f.id = c.file_id.clone();
                        f.file = Some(file);
                        f.buf_offset = end;
                        f.resumed = "at the cursor's line";
                        return f;
                    }
                }
                files = open_all(&f.path);
            }
        }
        // By seq: the file holding the line after the cursor, else the
        // oldest (lines between were rotated away).
        let after = cursor.map(|c| c.seq + 1).unwrap_or(0);
        files.retain(|lf| lf.first.is_some());
        files.sort_by_key(|lf| lf.first);
        let chosen = files
            .iter()
            .rposition(|lf| lf.first.is_some_and(|first| first <= after))
            .or(if files.is_empty() { None } else { Some(0) });
        if cursor.is_some() {
            f.resumed = "by seq (the cursor's file or line is gone)";
        }
        if let Some(at) = chosen {
            // Lines between the cursor and this file's first are counted
            // lost by `fill` when it meets the gap.
            let lf = files.swap_remove(at);
            f.open(lf.file, lf.id);
        }
        f
    }

    fn open(&mut self, mut file: File, id: String) {
        let _ = file.seek(SeekFrom::Start(0));
        self.file = Some(file);
        self.id = id;
        self.buf.clear();
        self.start = 0;
        self.buf_offset = 0;
        self.drained = false;
    }

    /// Lines never shipped found since the last call.
    pub fn take_lost(&mut self) -> u64 {
        std::mem::take(&mut self.lost)
    }

    /// Bytes not read yet: the rest of this file, and `<log>` when this
    /// is a rotated one (files between not counted).
    pub fn pending_bytes(&self) -> u64 {
        let Some(file) = &self.file else { return 0 };
        let read = self.buf_offset + self.start as u64;
        let here = file
            .metadata()
            .map(|m| m.len().saturating_sub(read))
            .unwrap_or(0);
        let live = std::fs::metadata(&self.path)
            .ok()
            .filter(|m| file_id(m) != self.id)
            .map_or(0, |m| m.len());
        here + live
    }

    /// The next batch of lines, and where the last of them starts
    /// (`file_id`, offset); empty when caught up.
    pub fn fill(&mut self) -> (Vec<Line>, Option<(String, u64)>) {
        let mut lines = Vec::new();
        let mut bytes = 0;
        let mut end = None;
        while lines.len() < BATCH_LINES && bytes < BATCH_BYTES {
            let Some((offset, raw)) = self.next_raw() else {
                break;
            };
            let Some(line) = hookd_team::ship::parse(&raw) else {
                continue; // unsealed: from before the chain
            };
            if self.skip_through.is_some_and(|s| line.seq <= s) {
                continue;
            }
            self.skip_through = None;
            if let Some(last) = self.last_seq {
                if line.seq > last + 1 {
                    self.lost += line.seq - last - 1;
                }
            }
            self.last_seq = Some(line.seq);
            bytes += line.record.len();
            end = Some((self.id.clone(), offset));
            lines.push(line);
        }
        (lines, end)
    }

    /// The next sealed line not read yet, raw (no newline), with where it
    /// starts; `None` when caught up. A gap in `seq` is counted lost, as
    /// in [`Follower::fill`]. The OpenTelemetry exporter reads the log
    /// through this (`hookd::otlp::exporter`).
    pub fn next_sealed(&mut self) -> Option<SealedLine> {
        loop {
            let (offset, raw) = self.next_raw()?;
            let Some(sealed) = Sealed::read(&raw) else {
                continue; // unsealed: from before the chain
            };
            let seq = sealed.seq;
            if self.skip_through.is_some_and(|s| seq <= s) {
                continue;
            }
            self.skip_through = None;
            if let Some(last) = self.last_seq {
                if seq > last + 1 {
                    self.lost += seq - last - 1;
                }
            }
            self.last_seq = Some(seq);
            let chain = hex::encode(&sealed.chain);
            return Some(SealedLine {
                file_id: self.id.clone(),
                offset,
                seq,
                chain,
                raw,
            });
        }
    }

    /// The next complete line and where it starts, following rotation.
    fn next_raw(&mut self) -> Option<(u64, Vec<u8>)> {
        loop {
            if let Some(at) = self.buf[self.start..].iter().position(|&b| b == b'\n') {
                let offset = self.buf_offset + self.start as u64;
                let line = self.buf[self.start..self.start + at].to_vec();
                self.start += at + 1;
                return Some((offset, line));
            }
            self.buf_offset += self.start as u64;
            self.buf.drain(..self.start);
            self.start = 0;
            let mut chunk = vec![0u8; 256 * 1024];
            let n = match self.file.as_mut() {
                Some(file) => file.read(&mut chunk).unwrap_or(0),
                None => 0,
            };
            if n > 0 {
                self.buf.extend_from_slice(&chunk[..n]);
                continue;
            }
            // The end of this file: is it still the live one?
            let live = std::fs::metadata(&self.path).ok().map(|m| file_id(&m));
            match live {
                None => return None, // mid-rotation, or no log yet
                Some(live) if self.file.is_some() && live == self.id => return None,
                Some(_) if self.file.is_some() && !self.drained => {
                    // Rotated: read to its end once more (the writer
                    // finished it before renaming it).
                    self.drained = true;
                    continue;
                }
                Some(_) => {}
            }
            // Go on with the file whose first seq is the smallest above
            // the last read (a torn last line of the old one is dropped).
            let mut files = open_all(&self.path);
            files.retain(|lf| lf.id != self.id && lf.first.is_some());
            let next = match self.last_seq {
                Some(last) => files
                    .into_iter()
                    .filter(|lf| lf.first.is_some_and(|first| first > last))
                    .min_by_key(|lf| lf.first),
                None => files.into_iter().min_by_key(|lf| lf.first),
            };
            let next = next?;
            self.open(next.file, next.id);
        }
    }
}

/// One line as [`Follower::next_sealed`] reads it.
#[derive(Debug, Clone)]
pub struct SealedLine {
    /// Its file (`dev:inode`).
    pub file_id: String,
    /// Where it starts in that file.
    pub offset: u64,
    /// Its `seq`.
    pub seq: u64,
    /// Its chain hash, hex.
    pub chain: String,
    /// The line as written, without its newline.
    pub raw: Vec<u8>,
}

/// When the line starting at `offset` in `file` has `seq` and `chain`,
/// the offset just after it.
fn line_at(file: &mut File, offset: u64, seq: u64, chain: &str) -> Option<u64> {
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut reader = io::BufReader::new(file);
    let mut line = Vec::new();
    io::BufRead::read_until(&mut reader, b'\n', &mut line).ok()?;
    if line.pop() != Some(b'\n') {
        return None;
    }
    let sealed = Sealed::read(&line)?;
    (sealed.seq == seq && hex::encode(&sealed.chain) == chain)
        .then_some(offset + line.len() as u64 + 1)
}

/// Every sealed line the log holds now, oldest first, as
/// [`hookd_team::ship::verify`] takes them (for `hookd team verify`).
pub fn local_lines(path: &Path) -> io::Result<Vec<hookd_team::ship::LocalLine>> {
    let mut files = open_all(path);
    if files.is_empty() && !path.exists() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no event log at {}", path.display()),
        ));
    }
    files.sort_by_key(|lf| lf.first.unwrap_or(u64::MAX));
    let mut out = Vec::new();
    for mut lf in files {
        lf.file.seek(SeekFrom::Start(0))?;
        let mut reader = io::BufReader::new(lf.file);
        let mut line = Vec::new();
        loop {
            line.clear();
            if io::BufRead::read_until(&mut reader, b'\n', &mut line)? == 0 {
                break;
            }
            if line.pop() != Some(b'\n') {
                break; // a torn last line
            }
            if let Some(sealed) = Sealed::read(&line) {
                out.push(hookd_team::ship::LocalLine {
                    seq: sealed.seq,
                    chain: hex::encode(&sealed.chain),
                    record: hookd_team::ship::db_record(&sealed),
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::protocol::chain::ChainHead;

    /// Appends sealed lines `{"type":"event","n":i}` to `path`.
    fn append(path: &Path, head: &mut ChainHead, n: usize) {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        for _ in 0..n {
            let line = format!(r#"{{"type":"event","n":{}}}"#, head.next_seq);
            head.seal(line.as_bytes(), &mut file).unwrap();
        }
        file.flush().unwrap();
    }

    fn seqs(lines: &[Line]) -> Vec<u64> {
        lines.iter().map(|l| l.seq).collect()
    }

    #[test]
    fn the_follower_reads_a_rotated_file_to_its_end_then_the_next_by_seq() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        let mut head = ChainHead::genesis();
        append(&log, &mut head, 3);
        let mut f = Follower::resume(log.clone(), None);
        let (lines, end) = f.fill();
        assert_eq!(seqs(&lines), [0, 1, 2]);
        assert!(end.is_some());
        // The writer finishes the file, rotates it twice over before the
        // follower looks again.
        append(&log, &mut head, 1);
        std::fs::rename(&log, numbered(&log, 1)).unwrap();
        append(&log, &mut head, 2);
        std::fs::rename(numbered(&log, 1), numbered(&log, 2)).unwrap();
        std::fs::rename(&log, numbered(&log, 1)).unwrap();
        append(&log, &mut head, 2);
        let (lines, _) = f.fill();
        assert_eq!(seqs(&lines), [3, 4, 5, 6, 7]);
        assert_eq!(f.take_lost(), 0);
        assert!(f.fill().0.is_empty(), "caught up");
    }

    #[test]
    fn next_sealed_gives_raw_lines_with_their_place_and_counts_gaps() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        let mut head = ChainHead::genesis();
        append(&log, &mut head, 2);
        let mut f = Follower::resume(log.clone(), None);
        let first = f.next_sealed().unwrap();
        let second = f.next_sealed().unwrap();
        assert!(f.next_sealed().is_none(), "caught up");
        assert_eq!((first.seq, second.seq), (0, 1));
        assert_eq!(first.offset, 0);
        assert_eq!(second.offset, first.raw.len() as u64 + 1);
        assert!(std::str::from_utf8(&second.raw)
            .unwrap()
            .starts_with(r#"{"type":"event","n":1"#));
        // Resumed at the second line: the next one follows.
        append(&log, &mut head, 1);
        let at = Cursor {
            file_id: second.file_id.clone(),
            line_offset: second.offset,
            seq: second.seq,
            chain: second.chain.clone(),
            first_seq: 0,
            shipped: 0,
        };
        let mut f = Follower::resume(log.clone(), Some(&at));
        assert_eq!(f.resumed, "at the cursor's line");
        assert_eq!(f.next_sealed().unwrap().seq, 2);
        // A gap in seq (lines rotated away) is counted lost.
        let mut skipped = ChainHead {
            next_seq: 6,
            ..head
        };
        append(&log, &mut skipped, 1);
        assert_eq!(f.next_sealed().unwrap().seq, 6);
        assert_eq!(f.take_lost(), 3);
    }

    #[test]
    fn a_resume_takes_the_cursors_line_or_finds_the_next_by_seq_and_counts_the_rest_lost() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        let mut head = ChainHead::genesis();
        append(&log, &mut head, 4);
        let mut first = Follower::resume(log.clone(), None);
        let (lines, end) = first.fill();
        let (file_id, offset) = end.unwrap();
        let cursor = |seq: u64, chain: &str, file_id: &str, offset: u64| Cursor {
            file_id: file_id.into(),
            line_offset: offset,
            seq,
            chain: chain.into(),
            first_seq: 0,
            shipped: 0,
        };
        // The very line: resumed right after it.
        append(&log, &mut head, 2);
        let at = cursor(3, &lines[3].chain, &file_id, offset);
        let mut f = Follower::resume(log.clone(), Some(&at));
        assert_eq!(f.resumed, "at the cursor's line");
        assert_eq!(seqs(&f.fill().0), [4, 5]);
        // Another file id: found by seq.
        let moved = cursor(3, &lines[3].chain, "0:0", offset);
        let mut f = Follower::resume(log.clone(), Some(&moved));
        assert!(f.resumed.starts_with("by seq"), "{}", f.resumed);
        assert_eq!(seqs(&f.fill().0), [4, 5]);
        // The files holding seq 2..=5 are gone: what is left is shipped,
        // what is gone counted.
        std::fs::remove_file(&log).unwrap();
        let mut rotated = ChainHead {
            next_seq: 6,
            ..head
        };
        append(&log, &mut rotated, 2);
        let mut f = Follower::resume(log.clone(), Some(&cursor(1, "x", "0:0", 0)));
        assert_eq!(seqs(&f.fill().0), [6, 7]);
        assert_eq!(f.take_lost(), 4, "seq 2, 3, 4 and 5");
    }
}
