//! NDJSON framing for tokio: `\n`-terminated lines with a size cap.

use bytes::{BufMut, BytesMut};
use serde::Serialize;
use tokio_util::codec::{Decoder, Encoder};

/// Why a frame could not be read off the wire.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// A line longer than the cap; the connection must be closed.
    #[error("frame exceeds the {max}-byte limit")]
    TooLarge {
        /// The cap in force.
        max: usize,
    },
    /// The peer closed the connection in the middle of a frame.
    #[error("connection closed in the middle of a frame ({0} bytes without a newline)")]
    Truncated(usize),
    /// The socket failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// Splits a byte stream into frames (without the `\n`; a trailing `\r` is
/// dropped too) and writes serializable values as frames.
#[derive(Debug, Clone)]
pub struct FrameCodec {
    max: usize,
    /// How far the buffer has already been searched for `\n`, so a frame that
    /// arrives in many reads is scanned once, not once per read.
    scanned: usize,
}

impl FrameCodec {
    /// A codec refusing frames longer than `max` bytes.
    pub fn new(max: usize) -> FrameCodec {
        FrameCodec { max, scanned: 0 }
    }
}

impl Decoder for FrameCodec {
    type Item = BytesMut;
    type Error = FrameError;

    fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<BytesMut>, FrameError> {
        match memchr::memchr(b'\n', &buf[self.scanned..]) {
            Some(offset) => {
                let end = self.scanned + offset;
                self.scanned = 0;
                if end > self.max {
                    return Err(FrameError::TooLarge { max: self.max });
                }
                let mut line = buf.split_to(end + 1);
                line.truncate(end);
                if line.last() == Some(&b'\r') {
                    line.truncate(end - 1);
                }
                Ok(Some(line))
            }
            None if buf.len() > self.max => Err(FrameError::TooLarge { max: self.max }),
            None => {
                self.scanned = buf.len();
                Ok(None)
            }
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> Result<Option<BytesMut>, FrameError> {
        match self.decode(buf)? {
            Some(frame) => Ok(Some(frame)),
            None if buf.is_empty() => Ok(None),
            None => Err(FrameError::Truncated(buf.len())),
        }
    }
}

impl<T: Serialize> Encoder<&T> for FrameCodec {
    type Error = FrameError;

    fn encode(&mut self, item: &T, dst: &mut BytesMut) -> Result<(), FrameError> {
        let mut writer = dst.writer();
        serde_json::to_writer(&mut writer, item).map_err(std::io::Error::from)?;
        writer.into_inner().put_u8(b'\n');
        Ok(())
    }
}

/// A frame already encoded, `\n` included (pushed frames are serialized once
/// and shared by every subscriber).
#[derive(Debug, Clone)]
pub struct RawFrame(pub bytes::Bytes);

impl Encoder<RawFrame> for FrameCodec {
    type Error = FrameError;

    fn encode(&mut self, item: RawFrame, dst: &mut BytesMut) -> Result<(), FrameError> {
        dst.extend_from_slice(&item.0);
        Ok(())
    }
}

/// A `hook_result` frame, written by hand ([`crate::HookResult::write_frame`]):
/// the same bytes as `&Reply::HookResult(result)` through serde, at a
/// fraction of the cost.
#[derive(Debug)]
pub struct HookResultFrame(pub crate::HookResult);

impl Encoder<HookResultFrame> for FrameCodec {
    type Error = FrameError;

    fn encode(&mut self, item: HookResultFrame, dst: &mut BytesMut) -> Result<(), FrameError> {
        /// A buffer grown past this by a huge answer is let go of after it.
        const KEEP: usize = 64 * 1024;
        thread_local! {
            static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        SCRATCH.with_borrow_mut(|buf| {
            buf.clear();
            item.0.write_frame(buf);
            buf.push(b'\n');
            dst.extend_from_slice(buf);
            if buf.capacity() > KEEP {
                *buf = Vec::new();
            }
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hand-written `hook_result` frame is serde's, byte for byte,
    /// over ids, exit codes and outputs built to find a difference.
    #[test]
    fn hook_result_frames_are_written_as_serde_writes_them() {
        let texts = [
            "",
            "x",
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}"#,
            "line\nwith \"quotes\", a \\ backslash, \t tab, \u{1} \u{1f} controls, \u{7f} DEL",
            "non-ASCII: é 日本 \u{1F600} / slash",
            "sixteen bytes ok\"then a quote after a clean chunk",
        ];
        for (i, text) in texts.iter().enumerate() {
            for exit_code in [0, 2, 9, 10, -1, 255, i32::MIN, i32::MAX] {
                let result = crate::HookResult {
                    id: format!("{i}{text}"),
                    exit_code,
                    stdout: text.to_string(),
                    stderr: texts[(i + 1) % texts.len()].to_string(),
                };
                let mut serde = BytesMut::new();
                FrameCodec::new(1 << 20)
                    .encode(&crate::Reply::HookResult(result.clone()), &mut serde)
                    .unwrap();
                let mut by_hand = BytesMut::new();
                FrameCodec::new(1 << 20)
                    .encode(HookResultFrame(result), &mut by_hand)
                    .unwrap();
                assert_eq!(by_hand, serde, "{}", String::from_utf8_lossy(&serde));
            }
        }
    }

    #[test]
    fn splits_lines_across_reads_and_enforces_the_cap() {
        let mut codec = FrameCodec::new(10);
        let mut buf = BytesMut::from(&b"{\"a\":"[..]);
        assert!(codec.decode(&mut buf).unwrap().is_none());
        buf.extend_from_slice(b"1}\r\n{}\n");
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"{\"a\":1}");
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"{}");
        assert!(codec.decode(&mut buf).unwrap().is_none());

        let mut buf = BytesMut::from(&b"0123456789ab"[..]);
        assert!(matches!(
            codec.decode(&mut buf),
            Err(FrameError::TooLarge { max: 10 })
        ));
        let mut codec = FrameCodec::new(10);
        let mut buf = BytesMut::from(&b"0123456789ab\n"[..]);
        assert!(matches!(
            codec.decode(&mut buf),
            Err(FrameError::TooLarge { .. })
        ));
        let mut buf = BytesMut::from(&b"{\"x\""[..]);
        assert!(matches!(
            codec.decode_eof(&mut buf),
            Err(FrameError::Truncated(4))
        ));
    }
}
