//! `hookd tail`: read (and follow) the event log. Works without a daemon.
//!
//! - By default one line per event, printed once its decision is in:
//!   `time  session  event  tool  summary  → verdict source latency  reason`.
//!   `--json` prints the raw log lines instead.
//! - A torn last line (no `\n` yet, or left by a crash) is never printed;
//!   when following, it is printed once it is complete.
//! - `--follow` keeps reading and follows rotation: when the path names a
//!   new file (another inode) the old one is read to its end through the
//!   descriptor already open, then every file rotated since, oldest first,
//!   then the new one; files are told apart by inode and queued as open
//!   descriptors, so names shifting under the reader (several rotations in
//!   one poll) lose and repeat nothing. A file truncated in place is read
//!   again from its start. A busy log is polled every 10 ms, a quiet one
//!   every 200 ms.
//! - `--since ID|TIME`: ids are uuid v7, ordered by time, so an event id, a
//!   decision id, an RFC 3339 time or an age (`90s`, `10m`, `2h`, `1d`) all
//!   become a lower bound on the line's id.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use uuid::Uuid;

use crate::decision::Verdict;
use crate::protocol::coverage::UnjudgedToolCall;
use crate::protocol::log::{LogRecord, LoggedDecision, LoggedEvent};

/// How long `--follow` waits before looking again after reading lines.
const BUSY_POLL: Duration = Duration::from_millis(10);

/// How long `--follow` waits before looking again when nothing was new.
const IDLE_POLL: Duration = Duration::from_millis(200);

/// What to show.
#[derive(Debug, Clone, Default)]
pub struct TailOptions {
    /// Keep reading as the log grows.
    pub follow: bool,
    /// Print raw JSONL.
    pub json: bool,
    /// Only this event kind.
    pub kind: Option<String>,
    /// Only sessions whose id starts with this.
    pub session: Option<String>,
    /// Only this tool: the agent's own name or the Claude Code one rules
    /// judged it as (`mapped_tool`).
    pub tool: Option<String>,
    /// Only events with a verdict other than `none`.
    pub decisions: bool,
    /// Only lines at or after this id (see [`parse_since`]).
    pub since: Option<Uuid>,
    /// Of what the log holds when tail starts, only the last this many
    /// lines, as `tail -n` (`--json --decisions` prints an event's line and
    /// then its decision's, so an odd count starts with a decision whose
    /// event line was cut); with `follow`, everything after.
    pub last: Option<usize>,
}

/// Parses `--since`: an event or decision id, an RFC 3339 time, or an age
/// such as `10m` (see [`crate::time::before`]). The error says which forms
/// are accepted and, for something that looks like a time or an age, what
/// is wrong with it.
pub fn parse_since(text: &str, now: SystemTime) -> Result<Uuid, String> {
    if let Ok(id) = Uuid::parse_str(text) {
        return Ok(id);
    }
    let looks_like_time = text.len() > 4 && text.as_bytes()[4] == b'-';
    let at = if looks_like_time {
        crate::time::parse_timestamp(text)
    } else {
        crate::time::before(now, text)
    };
    let at = at.map_err(|e| {
        format!("not an event id, an RFC 3339 time (2026-11-22T10:00:00Z) or an age (90s, 10m, 2h, 1d): {e}")
    })?;
    // A uuid v7 starts with its 48-bit Unix time in milliseconds, so the
    // smallest id of that millisecond is the timestamp and zeros. jiff's
    // range ends in year 9999, well inside 48 bits of milliseconds.
    Ok(Uuid::from_u128(crate::time::unix_millis(at) << 80))
}

/// Prints the log at `path` to `out` according to `options`. A reader of
/// `out` that goes away ends it quietly: at the next write (a broken pipe),
/// or, while following a quiet log, when `reader_gone` says so.
pub fn run(
    path: &Path,
    options: &TailOptions,
    out: &mut impl Write,
    reader_gone: impl Fn() -> bool,
) -> io::Result<()> {
    let mut tail = Tail {
        options,
        events: HashMap::new(),
    };
    let mut reader = LogReader::open(path)?;
    // `-n`: the entries of what the log holds now, the oldest dropped once
    // there are more; printed when it is read to its end.
    let mut backlog = options.last.map(|_| VecDeque::new());
    let mut entry = Vec::new();
    loop {
        let mut busy = false;
        while let Some(line) = reader.next_line()? {
            busy = true;
            entry.clear();
            tail.line(&line, &mut entry)?;
            if let Err(e) = emit(&mut backlog, options.last, &mut entry, out) {
                return quiet_broken_pipe(e);
            }
        }
        if !options.follow {
            break;
        }
        if let Err(e) = flush_backlog(&mut backlog, out) {
            return quiet_broken_pipe(e);
        }
        if let Err(e) = out.flush() {
            return quiet_broken_pipe(e);
        }
        reader.check_rotation()?;
        if reader.queue.is_empty() {
            if reader_gone() {
                return Ok(());
            }
            // A busy log is polled often, so the reader stays close behind
            // a writer that rotates fast (it must reach each rotated file
            // before `keep` more rotations delete it); a quiet one rarely.
            std::thread::sleep(if busy { BUSY_POLL } else { IDLE_POLL });
        }
    }
    if !options.json {
        // Events still waiting for a decision when the log ends.
        let mut waiting: Vec<&LoggedEvent> = tail.events.values().map(|h| &h.event).collect();
        waiting.sort_by_key(|event| event.id);
        for event in waiting {
            if !options.decisions {
                entry.clear();
                writeln!(entry, "{}", pretty(event, None))?;
                if let Err(e) = emit(&mut backlog, options.last, &mut entry, out) {
                    return quiet_broken_pipe(e);
                }
            }
        }
    }
    if let Err(e) = flush_backlog(&mut backlog, out) {
        return quiet_broken_pipe(e);
    }
    out.flush().or_else(quiet_broken_pipe)
}

/// Prints one entry (what one log line produced), or keeps its lines in
/// the `-n` backlog while there is one.
fn emit(
    backlog: &mut Option<VecDeque<Vec<u8>>>,
    last: Option<usize>,
    entry: &mut Vec<u8>,
    out: &mut impl Write,
) -> io::Result<()> {
    if entry.is_empty() {
        return Ok(());
    }
    match backlog {
        None => out.write_all(entry),
        Some(backlog) => {
            let n = last.unwrap_or(0);
            for line in entry.split_inclusive(|b| *b == b'\n') {
                if n == 0 {
                    break;
                }
                if backlog.len() == n {
                    backlog.pop_front();
                }
                backlog.push_back(line.to_vec());
            }
            entry.clear();
            Ok(())
        }
    }
}

/// Prints the `-n` backlog and ends it: from now on entries print as they
/// come.
fn flush_backlog(backlog: &mut Option<VecDeque<Vec<u8>>>, out: &mut impl Write) -> io::Result<()> {
    for entry in backlog.take().into_iter().flatten() {
        out.write_all(&entry)?;
    }
    Ok(())
}

fn quiet_broken_pipe(e: io::Error) -> io::Result<()> {
    if e.kind() == io::ErrorKind::BrokenPipe {
        Ok(())
    } else {
        Err(e)
    }
}

struct Tail<'a> {
    options: &'a TailOptions,
    /// Matching events whose decision has not been seen yet.
    events: HashMap<Uuid, HeldEvent>,
}

/// A matching event waiting for its decision.
struct HeldEvent {
    event: LoggedEvent,
    /// The event's line verbatim, when it will be printed as JSON with its
    /// decision (`--json --decisions`).
    line: Option<Box<[u8]>>,
}

impl Tail<'_> {
    fn line(&mut self, line: &[u8], out: &mut impl Write) -> io::Result<()> {
        let Ok(record) = LogRecord::parse(line) else {
            return Ok(()); // not ours to judge: skip what does not parse
        };
        let o = self.options;
        match record {
            LogRecord::Event(event) => {
                if !self.event_matches(&event) || o.since.is_some_and(|since| event.id < since) {
                    return Ok(());
                }
                if o.json && !o.decisions {
                    out.write_all(line)?;
                    out.write_all(b"\n")?;
                }
                // Cap what is held for unmatched events (a log cut mid-way).
                if self.events.len() > 100_000 {
                    self.events.clear();
                }
                let line = (o.json && o.decisions).then(|| line.into());
                self.events.insert(event.id, HeldEvent { event, line });
            }
            LogRecord::Decision(decision) => {
                let Some(held) = self.events.remove(&decision.decision.event_id) else {
                    return Ok(());
                };
                if o.decisions && decision.decision.answer.verdict == Verdict::NoOpinion {
                    return Ok(());
                }
                if o.json {
                    if let Some(event_line) = &held.line {
                        out.write_all(event_line)?;
                        out.write_all(b"\n")?;
                    }
                    out.write_all(line)?;
                    out.write_all(b"\n")?;
                } else {
                    writeln!(out, "{}", pretty(&held.event, Some(&decision)))?;
                }
            }
            LogRecord::UnjudgedToolCall(unjudged) => {
                if self.unjudged_matches(&unjudged) {
                    if o.json {
                        out.write_all(line)?;
                        out.write_all(b"\n")?;
                    } else {
                        writeln!(out, "{}", pretty_unjudged(&unjudged))?;
                    }
                }
            }
            LogRecord::Narration(n) => {
                let o = self.options;
                let shown = o.kind.as_deref().is_none_or(|k| k == "narration")
                    && o.tool.is_none()
                    && !o.decisions
                    && o.session
                        .as_deref()
                        .is_none_or(|s| n.session_id.starts_with(s));
                if shown {
                    if o.json {
                        out.write_all(line)?;
                        out.write_all(b"\n")?;
                    } else {
                        let time = n.at.get(11..23).unwrap_or("??:??:??.???");
                        let session = n.session_id.get(..8).unwrap_or(&n.session_id);
                        writeln!(
                            out,
                            "{time} {session:<8} {:<18} {}",
                            format!("{}:NARRATION", n.harness),
                            n.text
                        )?;
                    }
                }
            }
            LogRecord::RunStart(_)
            | LogRecord::SdkMessage(_)
            | LogRecord::RunDone(_)
            | LogRecord::ChainStart(_)
            | LogRecord::LogRepaired(_)
            | LogRecord::Unknown => {}
        }
        Ok(())
    }

    /// An `unjudged_tool_call` line passes the filters an event would,
    /// `--kind unjudged_tool_call` naming it.
    fn unjudged_matches(&self, unjudged: &UnjudgedToolCall) -> bool {
        let o = self.options;
        o.kind.as_deref().is_none_or(|k| k == "unjudged_tool_call")
            && o.tool.as_deref().is_none_or(|t| unjudged.tool == t)
            && o.session
                .as_deref()
                .is_none_or(|s| unjudged.session_id.starts_with(s))
            && o.since
                .is_none_or(|since| Uuid::parse_str(&unjudged.event_id).is_ok_and(|id| id >= since))
    }

    fn event_matches(&self, event: &LoggedEvent) -> bool {
        let o = self.options;
        o.kind.as_deref().is_none_or(|k| event.kind == k)
            && o.tool.as_deref().is_none_or(|t| {
                // The agent's own name or the one rules judged it as:
                // `--tool Write` finds Gemini's write_file and Codex's
                // patches that add files.
                event.tool.as_deref() == Some(t) || event.mapped_tool.as_deref() == Some(t)
            })
            && o.session.as_deref().is_none_or(|s| {
                event
                    .session_id
                    .as_deref()
                    .is_some_and(|id| id.starts_with(s))
            })
    }
}

/// One human line for a tool call that ran unjudged.
pub fn pretty_unjudged(unjudged: &UnjudgedToolCall) -> String {
    let time = unjudged.at.get(11..23).unwrap_or("??:??:??.???");
    let session = &unjudged.session_id;
    let session = session.get(..8).unwrap_or(session);
    format!(
        "{time} {session:<8} {:<18} {:<10} ran without its pre-tool hook judged ({} in this session)",
        format!("{}:UNJUDGED", unjudged.harness),
        unjudged.tool,
        unjudged.session_unjudged
    )
}

/// One human line for an event and (if decided) its decision.
pub fn pretty(event: &LoggedEvent, decision: Option<&LoggedDecision>) -> String {
    let time = event.received_at.get(11..23).unwrap_or("??:??:??.???");
    let session = event
        .session_id
        .as_deref()
        .map_or("-", |s| s.get(..8).unwrap_or(s));
    let kind = &event.kind;
    // Another agent's events are marked with it: `gemini:BeforeTool`.
    let kind = match event.harness.as_str() {
        agent @ ("codex" | "gemini" | "opencode" | "pi") => Cow::Owned(format!("{agent}:{kind}")),
        _ => Cow::Borrowed(kind.as_str()),
    };
    let tool = event.tool.as_deref().unwrap_or("");
    let mut line = format!(
        "{time} {session:<8} {kind:<18} {tool:<10} {}",
        summary(&event.input)
    );
    match decision {
        None => line.push_str("  → (pending)"),
        Some(logged) => {
            let d = &logged.decision;
            let verdict = d.answer.verdict;
            let mut source = d.source.to_string();
            if !d.rule_ids.is_empty() {
                source = format!("{source}:{}", d.rule_ids.join(","));
            }
            let latency = format_latency(d.latency_us);
            line.push_str(&format!("  → {verdict} {source} {latency}"));
            if logged.permissive {
                line.push_str(" (permissive: not sent)");
            }
            if let Some(reason) = &d.answer.reason {
                line.push_str(&format!("  {}", clip(reason, 100)));
            }
        }
    }
    line
}

fn format_latency(us: u64) -> String {
    if us < 10_000 {
        format!("{us}µs")
    } else if us < 10_000_000 {
        format!("{}ms", us / 1000)
    } else {
        format!("{:.1}s", us as f64 / 1e6)
    }
}

/// The most telling field of a hook input, clipped to one short line.
pub fn summary(input: &Value) -> String {
    let fields = crate::agent::claude::InputFields::of(input);
    let ti = fields.tool_input.unwrap_or(&Value::Null);
    let of_tool = [
        &ti["command"],
        &ti["file_path"],
        &ti["notebook_path"],
        &ti["url"],
        &ti["pattern"],
        &ti["query"],
        &ti["path"],
        &ti["prompt"],
    ];
    let of_event = [
        &input["message"],
        &input["last_assistant_message"],
        &input["reason"],
        &input["source"],
        &input["trigger"],
        &input["file_path"],
    ];
    of_tool
        .iter()
        .find_map(|v| v.as_str())
        .or(fields.prompt)
        .or_else(|| of_event.iter().find_map(|v| v.as_str()))
        .map_or(String::new(), |s| clip(s, 80))
}

fn clip(s: &str, max: usize) -> String {
    let one_line: String = s.chars().map(|c| if c == '\n' { '⏎' } else { c }).collect();
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

/// Reads complete lines from a log file, following rotation.
///
/// On rotation the writer renames `<log>` to `<log>.1`, shifting older files
/// up (`.1` → `.2`, …), and starts a new `<log>`. Several rotations can
/// happen between two polls, and more while the reader catches up, so a
/// file's name says little about which file it is: the reader only trusts
/// open descriptors and inodes.
///
/// - The file being read is held open until it is drained: a rotation
///   renames it, the descriptor still reads it, and the writer has finished
///   with it before renaming it.
/// - When `<log>` names another inode, the reader opens `<log>` first, then
///   walks `<log>.1`, `.2`, … opening each, until it meets the inode it is
///   reading. Files only ever move to higher numbers, so a rotation during
///   the walk can show a file twice (skipped by its inode) but never hide
///   one. The files found are queued **as open descriptors**, oldest first,
///   and read in that order whatever is renamed meanwhile.
/// - Held descriptors keep their inodes allocated, so an inode compared
///   with one of them cannot have been reused by a newer file.
///
/// Lines are lost only if the writer deleted a file before the reader got
/// to it (more than `keep` rotations behind).
struct LogReader {
    path: PathBuf,
    file: Option<File>,
    /// Inode of `file`.
    inode: u64,
    pos: u64,
    buf: Vec<u8>,
    /// Where the next unread byte of `buf` is.
    start: usize,
    /// Files to read, oldest first, after `file` is drained; the last may
    /// still be growing (it was `<log>` when it was opened).
    queue: VecDeque<(File, u64)>,
    /// When the log did not exist yet at start: the inodes of rotated files
    /// that did (history, not to be replayed when the log appears).
    history: Option<HashSet<u64>>,
}

impl LogReader {
    fn open(path: &Path) -> io::Result<LogReader> {
        let mut reader = LogReader {
            path: path.to_path_buf(),
            file: None,
            inode: 0,
            pos: 0,
            buf: Vec::new(),
            start: 0,
            queue: VecDeque::new(),
            history: None,
        };
        match File::open(path) {
            Ok(file) => {
                reader.inode = file.metadata()?.ino();
                reader.file = Some(file);
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                reader.history = Some(
                    reader
                        .open_rotated(|_| false)
                        .0
                        .into_iter()
                        .map(|(_, ino)| ino)
                        .collect(),
                );
            }
            // The caller names the path.
            Err(e) => return Err(e),
        }
        Ok(reader)
    }

    /// The next complete line, or `None` at the end of what is written.
    fn next_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(offset) = self.buf[self.start..].iter().position(|&b| b == b'\n') {
                let line = self.buf[self.start..self.start + offset].to_vec();
                self.start += offset + 1;
                return Ok(Some(line));
            }
            self.buf.drain(..self.start);
            self.start = 0;
            let mut chunk = [0u8; 64 * 1024];
            let n = match self.file.as_mut() {
                Some(file) => file.read(&mut chunk)?,
                None => 0,
            };
            if n > 0 {
                self.pos += n as u64;
                self.buf.extend_from_slice(&chunk[..n]);
                continue;
            }
            // End of this file. A queued file follows it only once this one
            // was rotated away, complete; a partial last line in it is a
            // crash's torn line that will never be completed: drop it.
            let Some((file, inode)) = self.queue.pop_front() else {
                return Ok(None);
            };
            self.buf.clear();
            self.pos = 0;
            self.file = Some(file);
            self.inode = inode;
        }
    }

    /// `<log>.n`.
    fn numbered(&self, n: u32) -> PathBuf {
        let mut p = self.path.clone().into_os_string();
        p.push(format!(".{n}"));
        PathBuf::from(p)
    }

    /// Opens `<log>.1`, `<log>.2`, … (newest first) until `stop` says an
    /// inode is where to stop (that one is not returned; the bool says it
    /// was met) or the files run out. An inode already opened in this walk
    /// (it moved up a number while we walked) is skipped.
    ///
    /// The writer shifts files from the top down (`.4` → `.5`, then `.3` →
    /// `.4`, …), so for a moment one number is missing in the middle: a
    /// missing number is only the end if the next one is missing too.
    fn open_rotated(&self, stop: impl Fn(u64) -> bool) -> (Vec<(File, u64)>, bool) {
        let mut found: Vec<(File, u64)> = Vec::new();
        let mut missing_in_a_row = 0;
        for n in 1..=MAX_ROTATED {
            let opened =
                File::open(self.numbered(n)).and_then(|file| Ok((file.metadata()?.ino(), file)));
            let Ok((ino, file)) = opened else {
                missing_in_a_row += 1;
                if missing_in_a_row == 2 {
                    break;
                }
                continue;
            };
            missing_in_a_row = 0;
            if stop(ino) {
                return (found, true);
            }
            if found.iter().all(|(_, seen)| *seen != ino) {
                found.push((file, ino));
            }
        }
        (found, false)
    }

    /// Notices rotation or truncation; queues what must be read next.
    fn check_rotation(&mut self) -> io::Result<()> {
        if !self.queue.is_empty() {
            return Ok(()); // still catching up
        }
        // The new `<log>` is opened before the walk: whatever rotates after
        // this moment pushes it to `<log>.1` and beyond, where the walk
        // finds it again (and skips it by its inode).
        let current = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let meta = current.metadata()?;
        let current_ino = meta.ino();
        if self.file.is_some() && current_ino == self.inode {
            if meta.len() < self.pos {
                // Truncated in place: start over.
                if let Some(file) = self.file.as_mut() {
                    file.seek(SeekFrom::Start(0))?;
                }
                self.pos = 0;
                self.buf.clear();
                self.start = 0;
            }
            return Ok(());
        }
        // Rotated files newer than ours sit between ours (at <log>.k, or
        // history if we started before the log existed) and <log>.
        let reading = self.file.is_some().then_some(self.inode);
        let history = self.history.take().unwrap_or_default();
        let stop = |ino: u64| match reading {
            Some(ours) => ino == ours,
            None => history.contains(&ino),
        };
        // Not meeting our file means it was deleted (more than `keep`
        // rotations behind) or a rotation raced the walk: walk again, a
        // few times, before settling for what was found.
        let mut newer = Vec::new();
        for _ in 0..WALKS {
            let met;
            (newer, met) = self.open_rotated(stop);
            if met || (reading.is_none() && history.is_empty()) {
                break;
            }
        }
        // Files met before `current` in the walk (newest first) were made
        // after it: they come after it, and the next check finds them.
        if let Some(at) = newer.iter().position(|(_, ino)| *ino == current_ino) {
            newer.drain(..=at);
        }
        self.queue.extend(newer.into_iter().rev());
        self.queue.push_back((current, current_ino));
        Ok(())
    }
}

/// How many rotated files (`<log>.1` …) a reader looks at; more than any
/// sensible `[log] keep`.
const MAX_ROTATED: u32 = 1000;

/// How many times the rotated files are walked looking for the one being
/// read before it is taken to be deleted.
const WALKS: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::UNIX_EPOCH;

    #[test]
    fn since_parses_ids_times_and_ages() {
        let now = UNIX_EPOCH + Duration::from_secs(1_795_315_794);
        let id = Uuid::now_v7();
        assert_eq!(parse_since(&id.to_string(), now).unwrap(), id);
        let t = parse_since("2026-11-22T02:49:54Z", now).unwrap();
        let earlier = parse_since("10m", now).unwrap();
        assert!(earlier < t);
        assert_eq!(parse_since("2026-11-22T02:39:54Z", now).unwrap(), earlier);
        // A v7 id made at that instant sorts after the bound.
        let at = Uuid::new_v7(uuid::Timestamp::from_unix(
            uuid::NoContext,
            1_795_315_794,
            1,
        ));
        assert!(at >= t);
    }

    /// Bad `--since` values are refused with a message, never a panic or a
    /// silently wrong bound.
    #[test]
    fn since_refuses_bad_values_with_a_reason() {
        let now = UNIX_EPOCH + Duration::from_secs(1_795_315_794);
        let table: &[(&str, &str)] = &[
            ("yesterday", "an age"),
            ("2026-02-31T00:00:00Z", "day"),
            ("2026-11-22T02:49:5é", "RFC 3339"),
            ("2026-11-22T02:49:54éééééééé", "RFC 3339"),
            ("999999999d", "day"),
            ("99999999999999999999d", "an age"),
            ("-5m", "positive"),
            ("", "an age"),
        ];
        for (text, says) in table {
            let err = parse_since(text, now).unwrap_err();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }

    #[test]
    fn pretty_lines_show_what_matters() {
        let record = |line: Value| LogRecord::parse(line.to_string().as_bytes()).unwrap();
        let LogRecord::Event(event) = record(
            json!({"type":"event","id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","received_at":"2026-11-22T02:18:06.747396Z","harness":"claude-code","session_id":"1fce3faa-62dc","kind":"PreToolUse","tool":"Bash","input":{"tool_input":{"command":"rm -rf build\nls"}}}),
        ) else {
            panic!("not an event")
        };
        let LogRecord::Decision(decision) = record(
            json!({"type":"decision","decision_id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6c","event_id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","verdict":"deny","source":"rule","rule_ids":["no-rm"],"generation":1,"latency_us":168,"reason":"no rm"}),
        ) else {
            panic!("not a decision")
        };
        let line = pretty(&event, Some(&decision));
        assert_eq!(line, "02:18:06.747 1fce3faa PreToolUse         Bash       rm -rf build⏎ls  → deny rule:no-rm 168µs  no rm");
        assert!(pretty(&event, None).ends_with("(pending)"));
        let LogRecord::Event(gemini) = record(
            json!({"type":"event","id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6d","received_at":"2026-11-22T02:18:06.747396Z","harness":"gemini","session_id":"71671cf4-0020","kind":"BeforeTool","tool":"run_shell_command","mapped_kind":"PreToolUse","mapped_tool":"Bash","input":{"tool_input":{"command":"ls"}}}),
        ) else {
            panic!("not an event")
        };
        assert_eq!(
            pretty(&gemini, None),
            "02:18:06.747 71671cf4 gemini:BeforeTool  run_shell_command ls  → (pending)"
        );
    }
}
