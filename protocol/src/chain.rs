//! The event log's hash chain: every line carries its place in the log and
//! a hash chained to the line before it, so that a line changed, removed,
//! inserted or moved is found by `hookd log verify` (PROTOCOL.md, "The
//! log's hash chain").
//!
//! **Construction.** The daemon writes a line as a JSON object. The log
//! writer ([`ChainHead::seal`]) adds two last fields before its closing
//! `}`: `"seq"`, the line's number in the chain (0 for the first line
//! ever, +1 per line, across rotated files), and `"chain"`, 64 lower-case
//! hex digits:
//!
//! ```text
//! chain = hex(SHA-256(prev ‖ line))
//! ```
//!
//! where `prev` is the previous line's `chain` as its 64 ASCII hex digits
//! (for the first line ever: 64 `0`s, the genesis) and `line` is the
//! line's bytes without its `,"chain":"…"` field and without its `\n`
//! (so it ends `,"seq":N}`). The chain field is always last, so a reader
//! takes it off the end of the line without parsing the JSON.
//!
//! **Rotation.** A rotated-to file starts with a `chain_start` line whose
//! `prev` is the previous file's last `chain` (it is itself chained to
//! it): each file of a rotated set verifies on its own, and the set
//! verifies as one chain. A log whose older files were removed starts from
//! that `prev`, not from the genesis.
//!
//! **Repair.** A torn last line (a crash mid-write) is removed when the
//! writer next opens the file, as before, and a `log_repaired` line then
//! says so (how many bytes, when), chained to the last whole line: a
//! repair is on the record, not mistaken for tampering.
//!
//! **What it proves.** Anyone holding the log can recompute every hash:
//! the chain shows that no line was changed, removed, inserted or moved
//! *relative to a head hash one trusts*. Someone able to rewrite the files
//! can rewrite the chain from the point of their change on, and removing
//! lines at the end of the newest file leaves a shorter valid chain. Both
//! are caught by comparing the head (`status`'s `log_chain`, the last line
//! of `hookd log verify`) with a copy kept elsewhere.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::hex;

/// The `prev` of the first line ever.
pub const GENESIS: [u8; 32] = [0; 32];

/// `,"chain":"` — the chain field's opening, last in every sealed line.
const CHAIN_OPEN: &[u8] = b",\"chain\":\"";

/// `,"seq":` — the sequence field, right before the chain field.
const SEQ_OPEN: &[u8] = b",\"seq\":";

/// Bytes a sealed line ends with after its body: `,"chain":"` 64 hex `"}`.
const CHAIN_SUFFIX_LEN: usize = CHAIN_OPEN.len() + 64 + 2;

/// Where the chain stands: the next line's number and the last line's hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChainHead {
    /// The `seq` the next line gets.
    pub next_seq: u64,
    /// The last line's `chain` (the genesis before the first line).
    pub hash: [u8; 32],
}

impl Default for ChainHead {
    fn default() -> ChainHead {
        ChainHead::genesis()
    }
}

impl ChainHead {
    /// Before the first line ever.
    pub fn genesis() -> ChainHead {
        ChainHead {
            next_seq: 0,
            hash: GENESIS,
        }
    }

    /// After the sealed line `last`.
    pub fn after(last: &Sealed<'_>) -> ChainHead {
        ChainHead {
            next_seq: last.seq + 1,
            hash: last.chain,
        }
    }

    /// The last line's hash in hex.
    pub fn hex(&self) -> String {
        hex::encode(&self.hash)
    }

    /// Writes `line` (a JSON object, with or without its `\n`) to `out`
    /// sealed (`seq` and `chain` added, then `\n`) and moves the head past
    /// it. Returns the bytes written. A line that is not a JSON object
    /// (never written by the daemon) is written as it is: `verify` then
    /// reports it.
    pub fn seal(&mut self, line: &[u8], out: &mut impl Write) -> io::Result<usize> {
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let Some(body) = line.strip_suffix(b"}").filter(|b| b.len() > 1) else {
            out.write_all(line)?;
            out.write_all(b"\n")?;
            return Ok(line.len() + 1);
        };
        // The number and its `}` on the stack: nothing allocated a line.
        let mut number = [0u8; 21];
        let digits = {
            let mut cursor = &mut number[..];
            write!(cursor, "{}}}", self.next_seq).expect("a u64 and a brace fit in 21 bytes");
            21 - cursor.len()
        };
        let seq = &number[..digits];
        let mut hasher = Sha256::new();
        hasher.update(hex::encode_digest(&self.hash));
        hasher.update(body);
        hasher.update(SEQ_OPEN);
        hasher.update(seq);
        let hash: [u8; 32] = hasher.finalize().into();
        let seq = &seq[..seq.len() - 1];
        out.write_all(body)?;
        out.write_all(SEQ_OPEN)?;
        out.write_all(seq)?;
        out.write_all(CHAIN_OPEN)?;
        out.write_all(&hex::encode_digest(&hash))?;
        out.write_all(b"\"}\n")?;
        self.next_seq += 1;
        self.hash = hash;
        Ok(body.len() + SEQ_OPEN.len() + seq.len() + CHAIN_SUFFIX_LEN + 1)
    }
}

/// A sealed line taken apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sealed<'a> {
    /// The line without its chain field (ending `,"seq":N}`, without its
    /// `}`): what, with `}`, was hashed.
    pub body: &'a [u8],
    /// Its `seq`.
    pub seq: u64,
    /// Its `chain`.
    pub chain: [u8; 32],
}

impl Sealed<'_> {
    /// Reads the seal off `line` (without its `\n`); `None` if it has none.
    pub fn read(line: &[u8]) -> Option<Sealed<'_>> {
        let split = line.len().checked_sub(CHAIN_SUFFIX_LEN)?;
        let (body, suffix) = line.split_at(split);
        let hex_digits = suffix.strip_prefix(CHAIN_OPEN)?.strip_suffix(b"\"}")?;
        let chain = unhex(hex_digits)?;
        let at = body.windows(SEQ_OPEN.len()).rposition(|w| w == SEQ_OPEN)?;
        let digits = &body[at + SEQ_OPEN.len()..];
        if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let seq = std::str::from_utf8(digits).ok()?.parse().ok()?;
        Some(Sealed { body, seq, chain })
    }

    /// Whether this line's `chain` is the hash of it after `prev`.
    pub fn follows(&self, prev: &[u8; 32]) -> bool {
        let mut hasher = Sha256::new();
        hasher.update(hex::encode(prev).as_bytes());
        hasher.update(self.body);
        hasher.update(b"}");
        let hash: [u8; 32] = hasher.finalize().into();
        hash == self.chain
    }

    /// The line as it was before it was sealed (without `seq` and `chain`).
    pub fn record(&self) -> Vec<u8> {
        let at = self
            .body
            .windows(SEQ_OPEN.len())
            .rposition(|w| w == SEQ_OPEN)
            .expect("read found it");
        let mut record = self.body[..at].to_vec();
        record.push(b'}');
        record
    }
}

/// The first line of a rotated-to file: where its chain starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "chain_start")]
pub struct ChainStart {
    /// RFC 3339, UTC.
    pub at: String,
    /// The previous file's last `chain`: this line's `prev`.
    pub prev: String,
}

/// The line written after a torn last line was removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename = "log_repaired")]
pub struct LogRepaired {
    /// RFC 3339, UTC.
    pub at: String,
    /// How many bytes the torn line had.
    pub removed_bytes: u64,
}

/// Why a log does not verify: the first line that was changed, removed,
/// inserted or moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Broken {
    /// The file.
    pub file: String,
    /// The line (1-based) where the chain first fails.
    pub line: usize,
    /// `changed`, `removed`, `inserted`, `swapped`, `unsealed`,
    /// `discontinuous` (the files do not follow one another) or `missing`
    /// (a rotated file's number is missing and the chain does not go on
    /// across it: set by `hookd log verify`, which knows the file names).
    pub kind: &'static str,
    /// What was found, for a person.
    pub detail: String,
}

/// Something worth saying about a log that verifies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Note {
    /// The file.
    pub file: String,
    /// The line (1-based).
    pub line: usize,
    /// What it is.
    pub detail: String,
}

/// A log set that verified.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verified {
    /// Sealed lines checked.
    pub lines: u64,
    /// Files checked.
    pub files: usize,
    /// The chain's head after the last line (`null` for an empty log).
    pub head: Option<String>,
    /// The last line's `seq`.
    pub last_seq: Option<u64>,
    /// `genesis`, or the `prev` the oldest file starts from (its older
    /// files are gone).
    pub starts_from: String,
    /// Lines before the first sealed one (written by a hookd before the
    /// chain), not verified.
    pub unsealed_before_chain: u64,
    /// Repairs and torn tails on the record.
    pub notes: Vec<Note>,
}

/// Checks a log's files, oldest first, as one chain: feed each file's
/// bytes to [`Verifier::file`], then [`Verifier::finish`].
#[derive(Debug, Default)]
pub struct Verifier {
    head: Option<ChainHead>,
    /// The head before the last line: a line that follows it shows that
    /// the last line was inserted.
    before_last: Option<ChainHead>,
    /// Where the last sealed line was, for messages.
    last_at: Option<(String, usize)>,
    starts_from: Option<String>,
    lines: u64,
    files: usize,
    unsealed: u64,
    notes: Vec<Note>,
}

impl Verifier {
    /// A verifier before any file.
    pub fn new() -> Verifier {
        Verifier::default()
    }

    /// Checks the next file, `name` (for messages), whose content is
    /// `bytes`. Stops at the first line where the chain fails.
    pub fn file(&mut self, name: &str, bytes: &[u8]) -> Result<(), Broken> {
        self.files += 1;
        let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        // The piece after the last `\n`: empty, or a torn last line.
        let tail = lines.pop().unwrap_or_default();
        if !tail.is_empty() {
            self.notes.push(Note {
                file: name.to_string(),
                line: lines.len() + 1,
                detail: format!(
                    "a torn last line ({} bytes, no newline: a crash mid-write); the daemon removes it when it next opens the log, and records that",
                    tail.len()
                ),
            });
        }
        let broken = |line: usize, kind: &'static str, detail: String| Broken {
            file: name.to_string(),
            line,
            kind,
            detail,
        };
        for (i, line) in lines.iter().enumerate() {
            let number = i + 1;
            let Some(sealed) = Sealed::read(line) else {
                if self.head.is_none() {
                    self.unsealed += 1;
                    continue;
                }
                return Err(broken(
                    number,
                    "unsealed",
                    "this line has no seq and chain: it was inserted, or its end was edited".into(),
                ));
            };
            let start = chain_start_prev(&sealed);
            let head = match (self.head, start) {
                (None, Some(prev)) => {
                    // After a restart the set still starts where it started.
                    self.starts_from.get_or_insert_with(|| {
                        if prev == GENESIS {
                            "genesis".into()
                        } else {
                            hex::encode(&prev)
                        }
                    });
                    ChainHead {
                        next_seq: sealed.seq,
                        hash: prev,
                    }
                }
                (None, None) => {
                    self.starts_from.get_or_insert_with(|| "genesis".into());
                    ChainHead::genesis()
                }
                (Some(head), Some(prev)) if prev != head.hash => {
                    let (file, line) = self.last_at.clone().unwrap_or_default();
                    return Err(broken(
                        number,
                        "discontinuous",
                        format!(
                            "the chain restarts here from {} but the line before ({file}:{line}) ends at {}: lines were removed at the end of the file before, or a file is missing or out of order",
                            hex::encode(&prev),
                            hex::encode(&head.hash)
                        ),
                    ));
                }
                (Some(head), _) => head,
            };
            let before_last = self.before_last.filter(|_| i > 0);
            if sealed.seq < head.next_seq
                && before_last.is_some_and(|b| sealed.seq == b.next_seq && sealed.follows(&b.hash))
            {
                return Err(broken(
                    number - 1,
                    "inserted",
                    format!(
                        "this line (seq {}) was inserted: the next line follows the one before it",
                        head.next_seq - 1
                    ),
                ));
            }
            if let Some(problem) = diagnose(&head, &sealed, lines.get(i + 1).copied()) {
                let (kind, detail) = problem;
                return Err(broken(number, kind, detail));
            }
            if let Ok(repaired) = serde_json::from_slice::<LogRepaired>(&sealed.record()) {
                self.notes.push(Note {
                    file: name.to_string(),
                    line: number,
                    detail: format!(
                        "a torn line of {} bytes was removed here at {} (a crash mid-write), and the chain goes on from the line before",
                        repaired.removed_bytes, repaired.at
                    ),
                });
            }
            self.before_last = Some(head);
            self.head = Some(ChainHead::after(&sealed));
            self.last_at = Some((name.to_string(), number));
            self.lines += 1;
        }
        Ok(())
    }

    /// Whether a file that begins with `bytes` goes on from the chain
    /// checked so far: its first line is a `chain_start` whose `prev` is
    /// the last line's `chain` and whose `seq` is the next one. `false`
    /// before any sealed line. Tells a file missing from a rotated set
    /// (lines missing) from a number missing (an interrupted rotation).
    pub fn goes_on_with(&self, bytes: &[u8]) -> bool {
        let first = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
        self.head.is_some_and(|head| starts_after(first, &head))
    }

    /// Forgets the chain checked so far: the next file is checked from its
    /// own `chain_start`, as if the files before it were gone. For going on
    /// past a file missing from a set, which the caller reports.
    pub fn restart(&mut self) {
        self.head = None;
        self.before_last = None;
        self.last_at = None;
    }

    /// The result once every file was checked.
    pub fn finish(self) -> Verified {
        Verified {
            lines: self.lines,
            files: self.files,
            head: self.head.map(|h| h.hex()),
            last_seq: self.head.and_then(|h| h.next_seq.checked_sub(1)),
            starts_from: self.starts_from.unwrap_or_else(|| "genesis".into()),
            unsealed_before_chain: self.unsealed,
            notes: self.notes,
        }
    }
}

/// What is wrong with `line` after `head`, if anything: the kind and a
/// sentence. `next` (the line after it in the same file) tells an insertion
/// from a change and a swap from a removal.
fn diagnose(
    head: &ChainHead,
    line: &Sealed<'_>,
    next: Option<&[u8]>,
) -> Option<(&'static str, String)> {
    let expected = head.next_seq;
    let next = next.and_then(Sealed::read);
    // The line after this one follows the line before it directly: this
    // one is not part of the chain.
    let skipped_by_next = next.is_some_and(|n| n.seq == expected && n.follows(&head.hash));
    if line.seq == expected {
        if line.follows(&head.hash) {
            return None;
        }
        if skipped_by_next {
            return Some((
                "inserted",
                format!("this line (seq {expected}) was inserted: the next line follows the one before it"),
            ));
        }
        return Some((
            "changed",
            format!("this line (seq {expected}) was changed: its hash does not match its content (or the line before it was rewritten with its hash recomputed)"),
        ));
    }
    if line.seq > expected {
        if skipped_by_next {
            return Some((
                "swapped",
                format!(
                    "this line (seq {}) and the next (seq {expected}) were swapped",
                    line.seq
                ),
            ));
        }
        let gap = line.seq - expected;
        return Some((
            "removed",
            format!(
                "{gap} line{} removed before this one (seq {expected}{} missing)",
                if gap == 1 { " was" } else { "s were" },
                if gap == 1 {
                    String::new()
                } else {
                    format!("–{}", line.seq - 1)
                }
            ),
        ));
    }
    Some((
        "inserted",
        format!(
            "this line (seq {}) was inserted or moved here: seq {expected} was expected",
            line.seq
        ),
    ))
}

/// Whether `first_line` (without its `\n`) is a `chain_start` that goes on
/// from `head`: its `prev` is `head`'s hash and its `seq` the next one. How
/// the log writer and `verify` prove that no file is missing between two
/// files of a rotated set whose numbers are not adjacent.
pub fn starts_after(first_line: &[u8], head: &ChainHead) -> bool {
    Sealed::read(first_line).is_some_and(|sealed| {
        sealed.seq == head.next_seq && chain_start_prev(&sealed) == Some(head.hash)
    })
}

/// The `prev` of a `chain_start` line, `None` for any other line.
fn chain_start_prev(line: &Sealed<'_>) -> Option<[u8; 32]> {
    const TAG: &[u8] = b"{\"type\":\"chain_start\"";
    if !line.body.starts_with(TAG) {
        return None;
    }
    let start: ChainStart = serde_json::from_slice(&line.record()).ok()?;
    unhex(start.prev.as_bytes())
}

/// 32 bytes from 64 lower-case hex digits.
fn unhex(digits: &[u8]) -> Option<[u8; 32]> {
    fn value(d: u8) -> Option<u8> {
        match d {
            b'0'..=b'9' => Some(d - b'0'),
            b'a'..=b'f' => Some(d - b'a' + 10),
            _ => None,
        }
    }
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, pair) in digits.chunks(2).enumerate() {
        out[i] = value(pair[0])? << 4 | value(pair[1])?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` sealed lines from the genesis, and the head after them.
    fn sealed_log(n: usize) -> (Vec<u8>, ChainHead) {
        let mut head = ChainHead::genesis();
        let mut out = Vec::new();
        for i in 0..n {
            head.seal(
                format!("{{\"type\":\"event\",\"n\":{i}}}\n").as_bytes(),
                &mut out,
            )
            .unwrap();
        }
        (out, head)
    }

    fn split(log: &[u8]) -> Vec<Vec<u8>> {
        log.split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    }

    fn join(lines: &[Vec<u8>]) -> Vec<u8> {
        lines
            .iter()
            .flat_map(|l| l.iter().chain(b"\n"))
            .copied()
            .collect()
    }

    fn verify(files: &[&[u8]]) -> Result<Verified, Broken> {
        let mut verifier = Verifier::new();
        for (i, bytes) in files.iter().enumerate() {
            verifier.file(&format!("f{i}"), bytes)?;
        }
        Ok(verifier.finish())
    }

    #[test]
    fn a_sealed_line_is_its_record_with_seq_and_chain_last() {
        let mut head = ChainHead::genesis();
        let mut out = Vec::new();
        let written = head
            .seal(b"{\"type\":\"event\",\"a\":1}\n", &mut out)
            .unwrap();
        assert_eq!(written, out.len());
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(
            text.starts_with("{\"type\":\"event\",\"a\":1,\"seq\":0,\"chain\":\""),
            "{text}"
        );
        assert!(text.ends_with("\"}\n"));
        // The construction, independently: SHA-256 of the genesis in hex
        // and the line without its chain field.
        let mut hasher = Sha256::new();
        hasher.update("0".repeat(64).as_bytes());
        hasher.update(b"{\"type\":\"event\",\"a\":1,\"seq\":0}");
        let expected = hex::encode(&hasher.finalize());
        assert!(text.contains(&expected), "{text}");
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["seq"], 0);
        assert_eq!(value["chain"], expected);
        let sealed = Sealed::read(&out[..out.len() - 1]).unwrap();
        assert_eq!(sealed.seq, 0);
        assert!(sealed.follows(&GENESIS));
        assert_eq!(sealed.record(), b"{\"type\":\"event\",\"a\":1}");
        assert_eq!(head, ChainHead::after(&sealed));
    }

    #[test]
    fn an_intact_log_verifies() {
        let (log, head) = sealed_log(50);
        let verified = verify(&[&log]).unwrap();
        assert_eq!(verified.lines, 50);
        assert_eq!(verified.head, Some(head.hex()));
        assert_eq!(verified.last_seq, Some(49));
        assert_eq!(verified.starts_from, "genesis");
        assert!(verified.notes.is_empty());
    }

    #[test]
    fn a_changed_byte_is_found_at_its_line() {
        let (log, _) = sealed_log(20);
        let mut lines = split(&log);
        let at = lines[7].iter().position(|&b| b == b'7').unwrap();
        lines[7][at] = b'8';
        let broken = verify(&[&join(&lines)]).unwrap_err();
        assert_eq!((broken.line, broken.kind), (8, "changed"), "{broken:?}");
    }

    #[test]
    fn a_removed_line_is_found_where_it_was() {
        let (log, _) = sealed_log(20);
        let mut lines = split(&log);
        lines.remove(11);
        let broken = verify(&[&join(&lines)]).unwrap_err();
        assert_eq!((broken.line, broken.kind), (12, "removed"), "{broken:?}");
        assert!(broken.detail.contains("seq 11"), "{broken:?}");
    }

    #[test]
    fn an_inserted_line_is_found_at_its_line() {
        let (log, _) = sealed_log(20);
        let mut lines = split(&log);
        // A copy of an earlier line, and a made-up line sealed as the next
        // one would be (the chain can be recomputed by anyone).
        let copy = lines[2].clone();
        lines.insert(9, copy);
        let broken = verify(&[&join(&lines)]).unwrap_err();
        assert_eq!((broken.line, broken.kind), (10, "inserted"), "{broken:?}");

        let (log, _) = sealed_log(20);
        let mut lines = split(&log);
        let mut head = ChainHead::after(&Sealed::read(&lines[4]).unwrap());
        let mut forged = Vec::new();
        head.seal(
            b"{\"type\":\"decision\",\"verdict\":\"allow\"}\n",
            &mut forged,
        )
        .unwrap();
        forged.pop();
        lines.insert(5, forged);
        let broken = verify(&[&join(&lines)]).unwrap_err();
        assert_eq!((broken.line, broken.kind), (6, "inserted"), "{broken:?}");

        let (log, _) = sealed_log(5);
        let mut lines = split(&log);
        lines.insert(3, b"{\"type\":\"event\"}".to_vec());
        let broken = verify(&[&join(&lines)]).unwrap_err();
        assert_eq!((broken.line, broken.kind), (4, "unsealed"), "{broken:?}");
    }

    #[test]
    fn a_swapped_pair_is_found_at_its_first_line() {
        let (log, _) = sealed_log(20);
        let mut lines = split(&log);
        lines.swap(13, 14);
        let broken = verify(&[&join(&lines)]).unwrap_err();
        assert_eq!((broken.line, broken.kind), (14, "swapped"), "{broken:?}");
    }

    #[test]
    fn unsealed_lines_of_an_older_hookd_before_the_chain_are_counted_not_verified() {
        let (log, _) = sealed_log(3);
        let mut old = b"{\"type\":\"event\",\"old\":1}\n{\"type\":\"event\",\"old\":2}\n".to_vec();
        old.extend_from_slice(&log);
        let verified = verify(&[&old]).unwrap();
        assert_eq!((verified.lines, verified.unsealed_before_chain), (3, 2));
    }

    #[test]
    fn a_torn_tail_is_a_note_not_a_break() {
        let (mut log, _) = sealed_log(3);
        log.extend_from_slice(b"{\"type\":\"event\",\"to");
        let verified = verify(&[&log]).unwrap();
        assert_eq!(verified.lines, 3);
        assert_eq!(verified.notes.len(), 1);
        assert_eq!(verified.notes[0].line, 4);
    }
}
