//! JSON written by hand into a buffer, byte for byte what serde_json
//! writes, where serde's generic path costs the daemon most: the event
//! log's line of every hook ([`crate::log::EventView::write_json`]).
//!
//! serde_json escapes a string a byte at a time, and writes a struct's
//! member names through the same escaping; here a string is scanned
//! sixteen bytes at a time for the bytes JSON escapes (`"`, `\`, and the
//! control characters below 0x20), names are constants, and numbers are
//! still serde_json's (its float formatting is the log's). The tests below
//! hold the output to serde_json's over strings and values built to find
//! a difference.

use serde_json::Value;

/// Whether JSON escapes `b` in a string (as serde_json does: nothing else,
/// not `/`, not DEL, not non-ASCII).
fn escaped(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Whether any of the eight bytes of `word` is one [`escaped`] says is
/// (exact as an answer for the word: the borrows these tricks can carry
/// only set bits above a byte that already matched).
fn word_escaped(word: u64) -> bool {
    const ONES: u64 = u64::from_le_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let zero_in = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH;
    control | zero_in(word ^ (ONES * b'"' as u64)) | zero_in(word ^ (ONES * b'\\' as u64)) != 0
}

/// `s` as a JSON string, quotes included.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    const CHUNK: usize = 16;
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // Bytes before `start` are written; `at` is where the scan is.
    let (mut start, mut at) = (0, 0);
    while at < bytes.len() {
        // A whole chunk without a byte to escape goes at once: sixteen
        // bytes (the fold over a fixed-size chunk has no early exit: vector
        // compares), else eight as one word; else its bytes one by one.
        let rest = &bytes[at..];
        let (clean, len) = if let Some(chunk) = rest.first_chunk::<CHUNK>() {
            (!chunk.iter().fold(false, |any, &b| any | escaped(b)), CHUNK)
        } else if let Some(word) = rest.first_chunk::<8>() {
            (!word_escaped(u64::from_le_bytes(*word)), 8)
        } else {
            (false, rest.len())
        };
        if !clean {
            for (i, &b) in rest[..len].iter().enumerate() {
                if escaped(b) {
                    out.extend_from_slice(&bytes[start..at + i]);
                    write_escape(out, b);
                    start = at + i + 1;
                }
            }
        }
        at += len;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// The escape of `b` (one [`escaped`] says is), as serde_json writes it.
fn write_escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match b {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[(b >> 4) as usize],
                HEX[(b & 0xf) as usize],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

/// `value` as compact JSON, members in the map's order (as serde_json
/// writes a `Value`).
pub fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => serde_json::to_writer(&mut *out, n).expect("a number serializes"),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                write_value(out, item);
            }
            out.push(b'}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn str_json(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        write_str(&mut out, s);
        out
    }

    /// The word test agrees with the byte test on every byte at every
    /// place of a word, beside every other byte.
    #[test]
    fn a_word_has_a_byte_to_escape_exactly_when_one_of_its_bytes_is() {
        for b in 0..=255u8 {
            for other in [0u8, b'a', 0x1f, 0x20, b'"', b'\\', 0x7f, 0x80, 0xff] {
                for at in 0..8 {
                    let mut word = [other; 8];
                    word[at] = b;
                    assert_eq!(
                        word_escaped(u64::from_le_bytes(word)),
                        word.iter().any(|&b| escaped(b)),
                        "{word:?}"
                    );
                }
            }
        }
    }

    /// Every byte JSON escapes, at every place against the chunks' edges,
    /// beside multi-byte characters and DEL: as serde_json writes them.
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let specials: Vec<char> = (0u8..0x20)
            .map(char::from)
            .chain(['"', '\\', '/', '\u{7f}', 'é', '€', '😀', 'a'])
            .collect();
        for &c in &specials {
            for before in 0..40 {
                for after in [0, 1, 15, 16, 17] {
                    let s: String = "x".repeat(before) + &c.to_string() + &"y".repeat(after);
                    assert_eq!(str_json(&s), serde_json::to_vec(&s).unwrap(), "{s:?}");
                }
            }
        }
        let all: String = specials.iter().cycle().take(500).collect();
        assert_eq!(str_json(&all), serde_json::to_vec(&all).unwrap());
        assert_eq!(str_json(""), b"\"\"");
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        let value = json!({
            "null": null, "t": true, "f": false,
            "u": 18446744073709551615u64, "i": -9223372036854775808i64,
            "f64": 1.5e300, "small": 0.1, "neg": -0.0, "whole": 3.0,
            "empty": {}, "none": [], "nested": [[], [{}], {"a": [1, "two\n", null]}],
            "keys \"quoted\"\t": "values \\ too\u{1}",
            "command": "cargo test --workspace && git status \"quoted\" — ünïcode",
        });
        let mut out = Vec::new();
        write_value(&mut out, &value);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            serde_json::to_string(&value).unwrap()
        );
        // Every real hook input.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/events");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let input: Value =
                serde_json::from_slice(&std::fs::read(entry.unwrap().path()).unwrap()).unwrap();
            let mut out = Vec::new();
            write_value(&mut out, &input);
            assert_eq!(out, serde_json::to_vec(&input).unwrap());
            seen += 1;
        }
        assert!(seen > 30, "{seen} fixtures");
    }
}
