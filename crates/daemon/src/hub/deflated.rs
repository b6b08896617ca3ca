//! What the pending table keeps of a waiting event for the rare requests
//! that read it: deflated, in one exact-size allocation.
//!
//! A `pending` listing shows each waiting event's record (its log line,
//! redacted), and a `decide … remember always` evaluates the record's
//! input again; nothing else reads it while the event waits, and every
//! waiting event holds it for as long as it waits (the daemon's memory per
//! pending decision, docs/performance.md). Raw deflate at the fastest
//! level takes a Claude Code Bash PreToolUse record from 697 to ~390
//! bytes; inflating it again for a listing costs microseconds.

use std::io::{Read, Write};

/// Bytes kept deflated.
pub struct Deflated(Box<[u8]>);

impl Deflated {
    /// `bytes`, deflated.
    pub fn of(bytes: &[u8]) -> Deflated {
        let mut encoder = flate2::write::DeflateEncoder::new(
            Vec::with_capacity(bytes.len() / 2 + 64),
            flate2::Compression::fast(),
        );
        encoder
            .write_all(bytes)
            .expect("deflating into memory cannot fail");
        let deflated = encoder.finish().expect("deflating into memory cannot fail");
        Deflated(deflated.into_boxed_slice())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_deflated_inflates_the_same() {
        let record = br#"{"id":"019ac2f1-7d3e-7a51-9f6b-2c8e4a1b3d5f","harness":"claude_code","session_id":"1fce3faa-62dc-4336-ba9c-8494671dd902","input":{"session_id":"1fce3faa-62dc-4336-ba9c-8494671dd902","transcript_path":"/home/dev/.claude/projects/-home-dev-project/1fce3faa-62dc-4336-ba9c-8494671dd902.jsonl","tool_input":{"command":"cargo test"}}}"#;
        let kept = Deflated::of(record);
        assert!(kept.len() < record.len(), "{} bytes", kept.len());
        assert_eq!(kept.inflate(), record);
        for bytes in [&b""[..], b"x", &[0u8; 70_000][..]] {
            assert_eq!(Deflated::of(bytes).inflate(), bytes);
        }
    }
}
