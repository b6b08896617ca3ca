//! What the pending table keeps of a waiting event for the rare requests
//! that read it: deflated, in one exact-size allocation ([`Held`]).
//!
//! A `pending` listing shows each waiting event's record (its log line,
//! redacted), its suggestions and what asked for it; a `decide` reads the
//! suggestions, and a `decide … remember always` evaluates the record's
//! input again. Nothing else reads them while the event waits, and every
//! waiting event holds them for as long as it waits (the daemon's memory
//! per pending decision, docs/performance.md). Raw deflate at the fastest
//! level takes a Claude Code Bash PreToolUse record from 727 to 384
//! bytes (docs/performance-history.md, #28); inflating it again for a
//! listing costs microseconds.

use std::io::Read;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::protocol::{AskedBy, Suggestion};

/// Bytes kept deflated.
pub struct Deflated(Box<[u8]>);

/// The daemon's one compressor, made once and reset for each event: a new
/// one allocates and zeroes ~300 KiB of tables, 145 µs a record on a
/// loaded machine against 19 µs reused. Events are added to the table
/// one at a time, so one is enough.
static DEFLATE: Mutex<Option<flate2::Compress>> = Mutex::new(None);

impl Deflated {
    /// `bytes`, deflated.
    pub fn of(bytes: &[u8]) -> Deflated {
        let mut deflate = DEFLATE.lock().unwrap_or_else(|e| e.into_inner());
        let deflate = deflate
            .get_or_insert_with(|| flate2::Compress::new(flate2::Compression::fast(), false));
        deflate.reset();
        let mut out = Vec::with_capacity(bytes.len() / 2 + 64);
        let mut rest = bytes;
        loop {
            let before = deflate.total_in();
            let status = deflate
                .compress_vec(rest, &mut out, flate2::FlushCompress::Finish)
                .expect("deflating into memory cannot fail");
            rest = &rest[(deflate.total_in() - before) as usize..];
            match status {
                flate2::Status::StreamEnd => break,
                // Out of room.
                flate2::Status::Ok | flate2::Status::BufError => out.reserve(out.len() + 64),
            }
        }
        Deflated(out.into_boxed_slice())
    }

    /// The bytes again.
    pub fn inflate(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.0.len() * 3);
        flate2::read::DeflateDecoder::new(&self.0[..])
            .read_to_end(&mut bytes)
            .expect("the table inflates only what it deflated");
        bytes
    }

    /// How many bytes it keeps.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.len()
    }
}

impl std::fmt::Debug for Deflated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Deflated({} bytes)", self.0.len())
    }
}

/// What the pending table keeps of a waiting event for `pending` listings
/// and `decide`: its record, the rules a decision may be remembered as
/// (each rule's text four times over, session and always, allow and deny,
/// as a `Vec` of [`Suggestion`]s: ~0.3 KiB for one rule) and what asked
/// for it, in one deflated allocation (the suggestions add ~0.1 KiB to the
/// record's).
pub struct Held(Deflated);

/// A [`Held`] opened.
pub struct Opened {
    /// The event's record (redacted, as in the log).
    pub record: Vec<u8>,
    /// Its suggestions.
    pub suggestions: Vec<Suggestion>,
    /// What asked for a client's decision.
    pub asked_by: AskedBy,
}

/// The part of a [`Held`] before the record.
#[derive(Serialize, Deserialize)]
struct Facts<S, A> {
    suggestions: S,
    asked_by: A,
}

impl Held {
    /// `record`, `suggestions` and `asked_by`, kept.
    pub fn of(record: &[u8], suggestions: &[Suggestion], asked_by: &AskedBy) -> Held {
        // The facts as JSON, after their length; the record after them.
        let facts = serde_json::to_vec(&Facts {
            suggestions,
            asked_by,
        })
        .expect("suggestions serialize");
        let mut bytes = Vec::with_capacity(4 + facts.len() + record.len());
        bytes.extend_from_slice(&(facts.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&facts);
        bytes.extend_from_slice(record);
        Held(Deflated::of(&bytes))
    }

    /// What was kept.
    pub fn open(&self) -> Opened {
        let bytes = self.0.inflate();
        let (len, rest) = bytes.split_at(4);
        let len = u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize;
        let (facts, record) = rest.split_at(len);
        let facts: Facts<Vec<Suggestion>, AskedBy> =
            serde_json::from_slice(facts).expect("the table reads only what it wrote");
        Opened {
            record: record.to_vec(),
            suggestions: facts.suggestions,
            asked_by: facts.asked_by,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_deflated_inflates_the_same() {
        let record = br#"{"id":"019ac2f1-7d3e-7a51-9f6b-2c8e4a1b3d5f","harness":"claude_code","session_id":"1fce3faa-62dc-4336-ba9c-8494671dd902","input":{"session_id":"1fce3faa-62dc-4336-ba9c-8494671dd902","transcript_path":"/home/dev/.claude/projects/-home-dev-project/1fce3faa-62dc-4336-ba9c-8494671dd902.jsonl","tool_input":{"command":"cargo test"}}}"#;
        let kept = Deflated::of(record);
        assert!(kept.len() < record.len(), "{} bytes", kept.len());
        assert_eq!(kept.inflate(), record);
        // Bytes that do not deflate come out larger than the room first
        // made for them.
        let mut state = 1u64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                (state >> 56) as u8
            })
            .collect();
        for bytes in [&b""[..], b"x", &[0u8; 70_000][..], &noise] {
            assert_eq!(Deflated::of(bytes).inflate(), bytes);
        }
        assert!(Deflated::of(&noise).len() > noise.len() / 2 + 64);
    }

    #[test]
    fn a_held_event_opens_to_what_was_kept() {
        let suggestions: Vec<Suggestion> = serde_json::from_str(
            r#"[{"remember":"session","verdict":"allow","rule":"Bash(cargo test:*)"},
                {"remember":"always","verdict":"deny","rule":"Bash","every_command":true,"note":"why"}]"#,
        )
        .unwrap();
        let asked_by = AskedBy {
            rule_ids: vec!["ask-cargo".into()],
            reason: Some("tests".into()),
            session: None,
            team_approvals: Some(2),
        };
        for record in [&b"{\"id\":1}"[..], b"", b"not json \xff"] {
            let opened = Held::of(record, &suggestions, &asked_by).open();
            assert_eq!(opened.record, record);
            assert_eq!(opened.suggestions, suggestions);
            assert_eq!(opened.asked_by, asked_by);
        }
    }
}
