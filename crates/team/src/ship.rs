//! Every line of the event log, shipped to `hookd.decisions` (migration
//! 0003) and checked against the log again (`hookd team verify`).
//!
//! The daemon's shipper (`hookd_daemon::team_ship`) reads the log file
//! behind its writer and hands this module batches of sealed lines as
//! written (already redacted); [`ship`] inserts a batch and moves the
//! machine's cursor (`hookd.ship_cursor`) in **one transaction**, so the
//! cursor never says more than the database holds, and inserts `ON
//! CONFLICT DO NOTHING`, so shipping a line twice (a crash between the
//! commit and the shipper's own bookkeeping) stores it once. [`verify`]
//! walks the log's lines and the machine's rows side by side by `seq`.
//!
//! Every sealed line is shipped, not only `decision` lines: the rows then
//! hold the whole chain after the first shipped line (no gaps to explain),
//! and an event's row carries the session, agent and tool its decision
//! row repeats.

use std::collections::HashMap;

use hookd_protocol::chain::Sealed;
use hookd_protocol::hex;
use hookd_protocol::log::LogKind;
use serde::{Deserialize, Serialize};
use tokio_postgres::Client;

/// One sealed line, ready for `hookd.decisions`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Its `seq`.
    pub seq: u64,
    /// Its `chain`, 64 hex digits.
    pub chain: String,
    /// The line without `seq` and `chain`, as the database takes it
    /// ([`db_record`]).
    pub record: String,
    /// Its `type`.
    pub kind: Option<&'static str>,
    /// Its time as written (`received_at`, `at`), RFC 3339.
    pub at_text: Option<String>,
    /// Its time from its uuid v7 id (`decision_id`, `id`), in ms.
    pub at_ms: Option<i64>,
    /// The session (a decision's: its event's).
    pub session: Option<String>,
    /// The agent (`harness`; a decision's: its event's).
    pub agent: Option<String>,
    /// The tool (a decision's: its event's).
    pub tool: Option<String>,
    /// A decision's verdict.
    pub verdict: Option<String>,
    /// A decision's rule ids.
    pub rule_ids: Vec<String>,
    /// A decision's deciding layer.
    pub layer: Option<String>,
    /// A decision's policy revision.
    pub revision: Option<String>,
    /// An event's id, or the event a decision decided.
    event_id: Option<String>,
}

/// The fields read off a line (the rest, hook inputs included, skipped).
#[derive(Deserialize)]
struct Fields {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    decision_id: Option<String>,
    #[serde(default)]
    event_id: Option<String>,
    #[serde(default)]
    received_at: Option<String>,
    #[serde(default)]
    at: Option<serde_json::Value>,
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default)]
    harness: Option<String>,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    verdict: Option<String>,
    #[serde(default)]
    rule_ids: Vec<serde_json::Value>,
    #[serde(default)]
    layer: Option<serde_json::Value>,
    #[serde(default)]
    revision: Option<serde_json::Value>,
}

/// A log line's `type` as the `kind` column spells it.
fn kind_name(kind: LogKind) -> &'static str {
    match kind {
        LogKind::Event => "event",
        LogKind::Decision => "decision",
        LogKind::RunStart => "run_start",
        LogKind::SdkMessage => "sdk_message",
        LogKind::RunDone => "run_done",
        LogKind::ChainStart => "chain_start",
        LogKind::LogRepaired => "log_repaired",
        LogKind::UnjudgedToolCall => "unjudged_tool_call",
        LogKind::Narration => "narration",
        LogKind::Unknown => "unknown",
    }
}

/// The record as the database stores it: the line without its seal, with
/// `\u0000` (which PostgreSQL's jsonb refuses) written as U+FFFD. A line
/// that is not JSON (never written by the daemon) is stored as a JSON
/// string holding it. [`verify`] compares with the same transformation.
pub fn db_record(sealed: &Sealed<'_>) -> String {
    let record = sealed.record();
    let text = String::from_utf8_lossy(&record);
    let text = if text.contains("\\u0000") {
        text.replace("\\u0000", "\\ufffd")
    } else {
        text.into_owned()
    };
    if serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() {
        text
    } else {
        serde_json::Value::String(text).to_string()
    }
}

/// A strict RFC 3339 UTC shape (`2026-11-27T03:17:07.123Z`): what the
/// database casts without failing the batch.
fn rfc3339(text: &str) -> bool {
    let b = text.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    b.len() >= 20
        && b.len() <= 40
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[b.len() - 1] == b'Z'
        && (b.len() == 20 || (b[19] == b'.' && digits(20..b.len() - 1)))
        && (1..=12).contains(&text[5..7].parse::<u8>().unwrap_or(0))
        && (1..=31).contains(&text[8..10].parse::<u8>().unwrap_or(0))
        && text[11..13].parse::<u8>().unwrap_or(99) < 24
        && text[14..16].parse::<u8>().unwrap_or(99) < 60
        && text[17..19].parse::<u8>().unwrap_or(99) < 61
}

/// The Unix time in ms of a uuid v7 (its first 48 bits).
fn uuid_v7_ms(id: &str) -> Option<i64> {
    let b = id.as_bytes();
    if b.len() != 36 || b.get(14) != Some(&b'7') {
        return None;
    }
    let hex_digits: String = id[..13].chars().filter(|c| *c != '-').collect();
    i64::from_str_radix(&hex_digits, 16).ok()
}

fn text_of(value: Option<serde_json::Value>) -> Option<String> {
    match value? {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s),
        other => Some(other.to_string()),
    }
}

/// Reads one log line (without its `\n`); `None` when it carries no seal
/// (lines written before the chain existed: nothing to key them by).
pub fn parse(line: &[u8]) -> Option<Line> {
    let sealed = Sealed::read(line)?;
    let record = db_record(&sealed);
    let kind = LogKind::of(line).ok().map(kind_name);
    let fields: Option<Fields> = serde_json::from_str(&record).ok();
    let mut out = Line {
        seq: sealed.seq,
        chain: hex::encode(&sealed.chain),
        record,
        kind,
        at_text: None,
        at_ms: None,
        session: None,
        agent: None,
        tool: None,
        verdict: None,
        rule_ids: Vec::new(),
        layer: None,
        revision: None,
        event_id: None,
    };
    let Some(f) = fields else { return Some(out) };
    let at_text = f
        .received_at
        .or_else(|| text_of(f.at))
        .filter(|t| rfc3339(t));
    out.at_ms = f
        .decision_id
        .as_deref()
        .or(f.id.as_deref())
        .and_then(uuid_v7_ms);
    out.at_text = at_text;
    out.session = f.session_id;
    out.agent = f.harness;
    out.tool = f.tool;
    out.verdict = f.verdict;
    out.rule_ids = f
        .rule_ids
        .into_iter()
        .filter_map(|v| text_of(Some(v)))
        .collect();
    out.layer = text_of(f.layer);
    out.revision = text_of(f.revision);
    out.event_id = if kind == Some("decision") {
        f.event_id
    } else {
        f.id
    };
    Some(out)
}

/// Gives a decision line its event's session, agent and tool (the event
/// line comes first in the log). Holds events until their decision, at
/// most [`Joiner::MAX`] of them.
#[derive(Debug, Default)]
pub struct Joiner {
    events: HashMap<String, EventFields>,
}

/// An event's session, agent and tool.
type EventFields = (Option<String>, Option<String>, Option<String>);

impl Joiner {
    /// Events held at most (a log cut mid-way leaves some unmatched).
    pub const MAX: usize = 10_000;

    /// Remembers an event; fills a decision.
    pub fn fill(&mut self, line: &mut Line) {
        let Some(id) = line.event_id.clone() else {
            return;
        };
        match line.kind {
            Some("event") => {
                if self.events.len() >= Joiner::MAX {
                    self.events.clear();
                }
                self.events.insert(
                    id,
                    (line.session.clone(), line.agent.clone(), line.tool.clone()),
                );
            }
            Some("decision") => {
                if let Some((session, agent, tool)) = self.events.remove(&id) {
                    line.session = line.session.take().or(session);
                    line.agent = line.agent.take().or(agent);
                    line.tool = line.tool.take().or(tool);
                }
            }
            _ => {}
        }
    }
}

/// How far a machine has shipped (`hookd.ship_cursor`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cursor {
    /// The log file holding the last shipped line, `dev:inode`.
    pub file_id: String,
    /// Where that line starts in it.
    pub line_offset: u64,
    /// Its seq.
    pub seq: u64,
    /// Its chain hash (hex).
    pub chain: String,
    /// The first seq ever shipped.
    pub first_seq: u64,
    /// Rows inserted (lines already there not counted).
    pub shipped: u64,
}

/// The machine's cursor, if it ever shipped.
pub async fn cursor(client: &Client, machine: &str) -> crate::Result<Option<Cursor>> {
    let row = client
        .query_opt(
            "SELECT file_id, line_offset, seq, chain, first_seq, shipped
             FROM hookd.ship_cursor WHERE machine = $1",
            &[&machine],
        )
        .await?;
    Ok(row.map(|r| Cursor {
        file_id: r.get(0),
        line_offset: r.get::<_, i64>(1) as u64,
        seq: r.get::<_, i64>(2) as u64,
        chain: r.get(3),
        first_seq: r.get::<_, i64>(4) as u64,
        shipped: r.get::<_, i64>(5) as u64,
    }))
}

/// The insert: one statement per batch, its columns as arrays.
const INSERT: &str = "INSERT INTO hookd.decisions
    (machine, seq, at, kind, session, agent, tool, verdict, rule, rule_ids, layer, revision, chain, record)
  SELECT $1, r.seq,
         COALESCE(r.at_text::timestamptz, to_timestamp(r.at_ms / 1000.0), now()),
         r.kind, r.session, r.agent, r.tool, r.verdict, r.rule_ids ->> 0,
         ARRAY(SELECT jsonb_array_elements_text(r.rule_ids)),
         r.layer, r.revision, r.chain, r.record::jsonb
  FROM unnest($2::bigint[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[],
              $8::text[], $9::text[], $10::jsonb[], $11::text[], $12::text[], $13::text[], $14::text[])
       AS r(seq, at_text, at_ms, kind, session, agent, tool, verdict, rule_ids, layer, revision, chain, record)
  ON CONFLICT (machine, seq) DO NOTHING";

/// Inserts `lines` (in seq order, at least one) and moves the cursor to
/// the last of them, which starts at `line_offset` in the file `file_id`,
/// in one transaction. Returns the rows inserted (lines already there are
/// skipped: shipping is idempotent by (machine, seq)).
pub async fn ship(
    client: &mut Client,
    machine: &str,
    lines: &[Line],
    file_id: &str,
    line_offset: u64,
) -> crate::Result<u64> {
    let Some(last) = lines.last() else {
        return Ok(0);
    };
    let seq: Vec<i64> = lines.iter().map(|l| l.seq as i64).collect();
    let at_text: Vec<Option<&str>> = lines.iter().map(|l| l.at_text.as_deref()).collect();
    let at_ms: Vec<Option<i64>> = lines.iter().map(|l| l.at_ms).collect();
    let kind: Vec<Option<&str>> = lines.iter().map(|l| l.kind).collect();
    let col = |f: fn(&Line) -> Option<&str>| lines.iter().map(f).collect::<Vec<_>>();
    let session = col(|l| l.session.as_deref());
    let agent = col(|l| l.agent.as_deref());
    let tool = col(|l| l.tool.as_deref());
    let verdict = col(|l| l.verdict.as_deref());
    let layer = col(|l| l.layer.as_deref());
    let revision = col(|l| l.revision.as_deref());
    let rule_ids: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::Value::from(l.rule_ids.clone()))
        .collect();
    let chain: Vec<&str> = lines.iter().map(|l| l.chain.as_str()).collect();
    let record: Vec<&str> = lines.iter().map(|l| l.record.as_str()).collect();
    let tx = client.transaction().await?;
    let inserted = tx
        .execute(
            INSERT,
            &[
                &machine, &seq, &at_text, &at_ms, &kind, &session, &agent, &tool, &verdict,
                &rule_ids, &layer, &revision, &chain, &record,
            ],
        )
        .await?;
    tx.execute(
        "INSERT INTO hookd.ship_cursor
             (machine, file_id, line_offset, seq, chain, first_seq, shipped)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (machine) DO UPDATE SET
             file_id = EXCLUDED.file_id, line_offset = EXCLUDED.line_offset,
             seq = EXCLUDED.seq, chain = EXCLUDED.chain,
             shipped = hookd.ship_cursor.shipped + EXCLUDED.shipped, updated_at = now()
         WHERE hookd.ship_cursor.seq <= EXCLUDED.seq",
        &[
            &machine,
            &file_id,
            &(line_offset as i64),
            &(last.seq as i64),
            &last.chain,
            &seq[0],
            &(inserted as i64),
        ],
    )
    .await?;
    tx.commit().await?;
    Ok(inserted)
}

/// One line of the local log, for [`verify`].
#[derive(Debug, Clone)]
pub struct LocalLine {
    /// Its seq.
    pub seq: u64,
    /// Its chain (hex).
    pub chain: String,
    /// [`db_record`] of it.
    pub record: String,
}

/// One disagreement between the log and the database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Mismatch {
    /// The seq at fault.
    pub seq: u64,
    /// What is wrong.
    pub what: String,
}

/// What `hookd team verify` found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    /// This machine's name.
    pub machine: String,
    /// The machine's cursor: the last seq shipped.
    pub shipped_through: Option<u64>,
    /// The first seq ever shipped.
    pub first_shipped: Option<u64>,
    /// The log's first and last seq.
    pub log_range: Option<(u64, u64)>,
    /// Rows held for this machine.
    pub rows: u64,
    /// Rows compared with their line (same chain, same record).
    pub matched: u64,
    /// Rows older than the log's first line (rotated away here): not checkable.
    pub rotated_away: u64,
    /// Log lines before the first shipped one (never shipped, by design).
    pub before_first_shipped: u64,
    /// Log lines after the cursor (not shipped yet).
    pub pending: u64,
    /// Disagreements, in seq order (the first [`VerifyReport::MAX_LISTED`]).
    pub mismatches: Vec<Mismatch>,
    /// Disagreements in all.
    pub mismatch_count: u64,
}

impl VerifyReport {
    /// Mismatches listed at most.
    pub const MAX_LISTED: usize = 20;

    /// Whether the database matches the log.
    pub fn ok(&self) -> bool {
        self.mismatch_count == 0
    }

    /// The first seq at fault.
    pub fn first_bad(&self) -> Option<u64> {
        self.mismatches.first().map(|m| m.seq)
    }

    fn mismatch(&mut self, seq: u64, what: String) {
        self.mismatch_count += 1;
        if self.mismatches.len() < VerifyReport::MAX_LISTED {
            self.mismatches.push(Mismatch { seq, what });
        }
    }
}

/// Rows read per query while verifying.
const PAGE: i64 = 5_000;

/// Walks the log's `lines` (in seq order) and this machine's rows side by
/// side: every shipped seq is there once with the log's chain hash and
/// record; no row is missing after the first shipped line up to the
/// cursor; no row is in the database that the log does not have.
pub async fn verify(
    client: &Client,
    machine: &str,
    lines: impl IntoIterator<Item = LocalLine>,
) -> crate::Result<VerifyReport> {
    let cursor = cursor(client, machine).await?;
    let mut report = VerifyReport {
        machine: machine.to_string(),
        shipped_through: cursor.as_ref().map(|c| c.seq),
        first_shipped: cursor.as_ref().map(|c| c.first_seq),
        ..VerifyReport::default()
    };
    let first_shipped = cursor.as_ref().map_or(u64::MAX, |c| c.first_seq);
    let shipped_through = cursor.as_ref().map(|c| c.seq);
    let mut lines = lines.into_iter().peekable();
    let mut page: std::collections::VecDeque<(u64, String, serde_json::Value)> = Default::default();
    let mut after: i64 = -1;
    let mut rows_done = false;
    let mut local_first: Option<u64> = None;
    let mut local_last: Option<u64> = None;
    loop {
        if page.is_empty() && !rows_done {
            let rows = client
                .query(
                    "SELECT seq, chain, record FROM hookd.decisions
                     WHERE machine = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                    &[&machine, &after, &PAGE],
                )
                .await?;
            rows_done = (rows.len() as i64) < PAGE;
            for r in rows {
                let seq: i64 = r.get(0);
                after = seq;
                page.push_back((seq as u64, r.get(1), r.get(2)));
            }
        }
        let row_seq = page.front().map(|r| r.0);
        let line_seq = lines.peek().map(|l| l.seq);
        match (line_seq, row_seq) {
            (None, None) => break,
            (Some(l), r) if r.is_none_or(|r| l < r) => {
                let line = lines.next().expect("peeked");
                if local_last.is_some_and(|last| line.seq <= last) {
                    report.mismatch(line.seq, "the log's lines are out of order here".into());
                }
                local_first.get_or_insert(line.seq);
                local_last = Some(line.seq);
                if l < first_shipped {
                    report.before_first_shipped += 1;
                } else if shipped_through.is_none_or(|through| l > through) {
                    report.pending += 1;
                } else {
                    report.mismatch(l, "missing from the database".into());
                }
            }
            (l, Some(r)) if l.is_none_or(|l| r < l) => {
                page.pop_front();
                report.rows += 1;
                if local_first.is_none() && l.is_some() {
                    report.rotated_away += 1;
                } else if local_first.is_none() {
                    // The log holds nothing at all.
                    report.rotated_away += 1;
                } else {
                    report.mismatch(r, "in the database but not in the log".into());
                }
            }
            (Some(_), Some(r)) => {
                let line = lines.next().expect("peeked");
                let (_, chain, record) = page.pop_front().expect("peeked");
                report.rows += 1;
                local_first.get_or_insert(line.seq);
                local_last = Some(line.seq);
                if chain != line.chain {
                    report.mismatch(
                        r,
                        format!("chain hash differs (database {chain}, log {})", line.chain),
                    );
                } else if serde_json::from_str::<serde_json::Value>(&line.record).ok()
                    != Some(record)
                {
                    report.mismatch(r, "record differs from the log's line".into());
                } else {
                    report.matched += 1;
                }
            }
            _ => unreachable!("one side has a next item"),
        }
    }
    if let (Some(first), Some(last)) = (local_first, local_last) {
        report.log_range = Some((first, last));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hookd_protocol::chain::ChainHead;

    fn sealed(lines: &[&str]) -> Vec<Vec<u8>> {
        let mut head = ChainHead::genesis();
        lines
            .iter()
            .map(|l| {
                let mut out = Vec::new();
                head.seal(l.as_bytes(), &mut out).unwrap();
                out.pop();
                out
            })
            .collect()
    }

    #[test]
    fn a_decision_gets_its_events_session_agent_and_tool() {
        let lines = sealed(&[
            r#"{"type":"event","id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","received_at":"2026-11-22T02:18:06.747396Z","harness":"claude-code","session_id":"s1","kind":"PreToolUse","tool":"Bash","input":{"a":[1,{"b":"\u0000"}]}}"#,
            r#"{"type":"decision","decision_id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6c","event_id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","verdict":"deny","source":"rule","rule_ids":["no-rm"],"generation":1,"latency_us":168,"layer":"user","revision":"sha256:00"}"#,
        ]);
        let mut joiner = Joiner::default();
        let mut event = parse(&lines[0]).unwrap();
        joiner.fill(&mut event);
        let mut decision = parse(&lines[1]).unwrap();
        joiner.fill(&mut decision);
        assert_eq!(event.seq, 0);
        assert_eq!(event.kind, Some("event"));
        assert_eq!(
            event.at_text.as_deref(),
            Some("2026-11-22T02:18:06.747396Z")
        );
        assert!(event.record.contains("\\ufffd") && !event.record.contains("\\u0000"));
        assert!(!event.record.contains("\"seq\""));
        assert_eq!(decision.seq, 1);
        assert_eq!(decision.kind, Some("decision"));
        assert_eq!(decision.verdict.as_deref(), Some("deny"));
        assert_eq!(decision.rule_ids, ["no-rm"]);
        assert_eq!(decision.layer.as_deref(), Some("user"));
        assert_eq!(decision.session.as_deref(), Some("s1"));
        assert_eq!(decision.agent.as_deref(), Some("claude-code"));
        assert_eq!(decision.tool.as_deref(), Some("Bash"));
        assert_eq!(decision.at_ms, Some(0x0193a0b45c6d));
        assert_eq!(decision.chain.len(), 64);
    }

    #[test]
    fn unsealed_lines_are_not_shipped_and_bad_times_are_left_to_the_id() {
        assert!(parse(br#"{"type":"event","id":"x"}"#).is_none());
        let lines = sealed(&[r#"{"type":"chain_start","at":"2026-13-01T00:00:00Z","prev":"00"}"#]);
        let line = parse(&lines[0]).unwrap();
        assert_eq!(line.at_text, None, "month 13 would fail the whole batch");
        assert!(rfc3339("2026-11-27T03:17:07Z"));
        assert!(rfc3339("2026-11-27T03:17:07.123456789Z"));
        assert!(!rfc3339("2026-11-27 03:17:07Z"));
        assert!(!rfc3339("2026-11-27T03:17:07+01:00"));
    }
}
