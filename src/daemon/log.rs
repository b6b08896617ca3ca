//! The event log: one JSON line per event and per decision.
//!
//! Lines are serialized by the caller and handed to a dedicated writer thread
//! through a bounded channel, so answering a hook never waits for the disk.
//! If the channel is full (the disk is stalled) the line is dropped and
//! counted rather than blocking a decision. The writer flushes to the OS
//! whenever the channel runs empty; it fsyncs on shutdown. (Issue #4 adds
//! rotation, redaction and torn-line repair.)

use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread::JoinHandle;

use serde::Serialize;
use tokio::sync::mpsc;

use crate::decision::Decision;
use crate::event::Event;

/// Lines waiting for the writer before new ones are dropped.
const QUEUE_LINES: usize = 64 * 1024;

/// Handle to the event log; cheap to share.
#[derive(Debug)]
pub struct EventLog {
    /// `None` once closed; a read lock per line is uncontended in practice.
    tx: RwLock<Option<mpsc::Sender<Vec<u8>>>>,
    counters: Arc<LogCounters>,
    writer: Mutex<Option<JoinHandle<()>>>,
    path: PathBuf,
}

/// What the log has done, for `status` and tests.
#[derive(Debug, Default)]
pub struct LogCounters {
    /// Lines written to the file.
    pub written: AtomicU64,
    /// Lines dropped because the queue was full.
    pub dropped: AtomicU64,
    /// Write errors (disk full, file gone).
    pub errors: AtomicU64,
}

#[derive(Serialize)]
struct DecisionLine<'a> {
    #[serde(rename = "type")]
    tag: &'static str,
    #[serde(flatten)]
    decision: &'a Decision,
    /// Only written when false: permissive mode logged but did not send it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    permissive: bool,
}

impl EventLog {
    /// Opens (creating 0600, in a 0700 directory if missing) and starts the writer.
    pub fn open(path: &Path) -> io::Result<EventLog> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        let (tx, mut rx) = mpsc::channel::<Vec<u8>>(QUEUE_LINES);
        let counters = Arc::new(LogCounters::default());
        let thread_counters = counters.clone();
        let log_path = path.to_path_buf();
        let writer = std::thread::Builder::new()
            .name("hookd-log".into())
            .spawn(move || {
                let mut out = BufWriter::with_capacity(64 * 1024, file);
                let mut failing = false;
                while let Some(line) = rx.blocking_recv() {
                    let mut batch = vec![line];
                    while let Ok(more) = rx.try_recv() {
                        batch.push(more);
                    }
                    let result = batch
                        .iter()
                        .try_for_each(|l| out.write_all(l))
                        .and_then(|()| out.flush());
                    match result {
                        Ok(()) => {
                            failing = false;
                            thread_counters
                                .written
                                .fetch_add(batch.len() as u64, Ordering::Relaxed);
                        }
                        Err(e) => {
                            thread_counters.errors.fetch_add(1, Ordering::Relaxed);
                            if !failing {
                                tracing::error!(path = %log_path.display(), error = %e, "event log write failed; decisions go on");
                            }
                            failing = true;
                        }
                    }
                }
                let _ = out.flush();
                let _ = out.get_ref().sync_all();
            })?;
        Ok(EventLog {
            tx: RwLock::new(Some(tx)),
            counters,
            writer: Mutex::new(Some(writer)),
            path: path.to_path_buf(),
        })
    }

    /// The log file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Counters.
    pub fn counters(&self) -> &LogCounters {
        &self.counters
    }

    /// Records an event.
    pub fn event(&self, event: &Event) {
        self.push(&event.record());
    }

    /// Records a decision; `enforced` is false when permissive mode kept it
    /// from Claude Code.
    pub fn decision(&self, decision: &Decision, enforced: bool) {
        self.push(&DecisionLine {
            tag: "decision",
            decision,
            permissive: !enforced,
        });
    }

    fn push(&self, record: &impl Serialize) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!(error = %e, "could not serialize a log record");
                return;
            }
        };
        line.push(b'\n');
        let tx = self.tx.read().unwrap_or_else(|e| e.into_inner());
        let Some(tx) = tx.as_ref() else { return };
        if tx.try_send(line).is_err() {
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Writes out everything queued, fsyncs and stops the writer. Lines
    /// pushed afterwards are ignored.
    pub fn close(&self) {
        self.tx.write().unwrap_or_else(|e| e.into_inner()).take();
        let writer = self.writer.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(writer) = writer {
            let _ = writer.join();
        }
    }
}

impl Drop for EventLog {
    fn drop(&mut self) {
        self.close();
    }
}
