//! Reading the JSON agents send, whatever it holds (protocol/PROTOCOL.md §2).
//!
//! Claude Code and the Agent SDK write hook inputs with JavaScript's
//! `JSON.stringify`, which emits two things serde_json refuses:
//!
//! - **a lone UTF-16 surrogate** (`"\ud800"` with no partner): a JavaScript
//!   string may hold one, and `JSON.stringify` writes it as an escape. It is
//!   not a Unicode scalar value, so no Rust `String` can hold it.
//!   [`escape_lone_surrogates`] rewrites such an escape so the string holds
//!   the escape's own six characters (`\ud800`, backslash included): nothing
//!   is dropped, the text stays visible in the log, and a rule still matches
//!   the rest of the string.
//! - **deep nesting**: serde_json stops at 128 levels. Claude Code 2.1.330
//!   relays an MCP tool input nested 38,000 levels deep to its hooks, and
//!   Node's `JSON.stringify` goes past 4,000. Every recursive walk of such a
//!   value (parsing, redaction, rule conditions, serialization, drop, and
//!   every reader of the log and of pushed frames, in any language) needs
//!   about a kilobyte of stack per level in a debug build, and a stack
//!   overflow kills the daemon. So [`flatten_deep`] keeps the first
//!   [`MAX_DEPTH`] levels as structure and each array or object below them
//!   as its JSON text, a string: the input is read whole and judged, nothing
//!   is lost, and every consumer can parse what hookd writes.
//!
//! Refusing either used to turn a hook into "no opinion": a deny rule never
//! saw the command. [`parse_lenient`] applies both; the strict parse stays
//! the fast path and these run only when it fails.
//!
//! Every scanner here is std-only and iterative (no recursion), so the
//! forwarder can use them on any input, however deep or malformed.

use std::borrow::Cow;

use serde::de::DeserializeOwned;

/// The deepest nesting of a hook input kept as structure; deeper arrays and
/// objects are kept as their JSON text ([`flatten_deep`]). 100 leaves room
/// for the frames and records that wrap an input (a `pending` reply adds
/// four levels) under serde_json's default limit of 128, so hookd's own
/// readers (`tail`, `replay`, clients) parse every line it writes, and every
/// recursive walk of an input stays within a few hundred kilobytes of stack.
pub const MAX_DEPTH: usize = 100;

/// How much of an unreadable input's text is kept for the log.
pub const UNREADABLE_TEXT_MAX: usize = 64 * 1024;

/// `text` with every lone UTF-16 surrogate escape (`\uD800`–`\uDFFF` not
/// part of a high–low pair) turned into an escaped backslash followed by the
/// escape's letters: `"a\ud800b"` becomes `"a\\ud800b"`, the string `a\ud800b`.
/// Borrowed when there is none. Only escapes are touched; everything else,
/// valid JSON or not, is left as it is.
///
/// Outside strings JSON has no backslashes, so the scan need not track
/// whether it is inside one: a backslash always starts an escape.
pub fn escape_lone_surrogates(text: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < text.len() {
        if text[i] != b'\\' {
            i += 1;
            continue;
        }
        let Some(unit) = hex_escape(text, i) else {
            // `\\`, `\"`, `\n`, …: two bytes; a malformed `\u` is left to
            // the parser to report.
            i += 2;
            continue;
        };
        let is_high = (0xD800..=0xDBFF).contains(&unit);
        let is_low = (0xDC00..=0xDFFF).contains(&unit);
        if is_high && hex_escape(text, i + 6).is_some_and(|u| (0xDC00..=0xDFFF).contains(&u)) {
            i += 12;
            continue;
        }
        if is_high || is_low {
            let out = out.get_or_insert_with(|| Vec::with_capacity(text.len() + 16));
            out.extend_from_slice(&text[copied..i]);
            out.push(b'\\');
            copied = i;
        }
        i += 6;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.extend_from_slice(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The code unit of a `\uXXXX` escape starting at `at`, if there is one.
fn hex_escape(text: &[u8], at: usize) -> Option<u16> {
    let escape = text.get(at..at + 6)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    let hex = std::str::from_utf8(&escape[2..]).ok()?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(hex, 16).ok()
}

/// `text` with every array or object nested deeper than `max_depth` levels
/// replaced by a JSON string holding its text: with `max_depth` 2,
/// `{"a":[{"b":1}]}` becomes `{"a":["{\"b\":1}"]}`. Borrowed when nothing is
/// that deep. The text that becomes a string is not checked: callers pass
/// JSON (validated, or written by `JSON.stringify`). On anything else it
/// still returns text and never fails.
pub fn flatten_deep(text: &str, max_depth: usize) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i = string_end(bytes, i).unwrap_or(bytes.len());
                continue;
            }
            b'[' | b'{' if depth == max_depth => {
                let end = container_end(bytes, i);
                let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 64));
                out.push_str(&text[copied..i]);
                out.push_str(&serde_json::Value::from(&text[i..end]).to_string());
                copied = end;
                i = end;
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut out) => {
            out.push_str(&text[copied..]);
            Cow::Owned(out)
        }
    }
}

/// The index just past the array or object starting at `start` (the end of
/// `text` if it is never closed).
fn container_end(text: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < text.len() {
        match text[i] {
            b'"' => {
                i = string_end(text, i).unwrap_or(text.len());
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    text.len()
}

/// Parses one JSON value the way hookd reads what agents send: strictly
/// first (the fast path); if that fails, with invalid UTF-8 replaced by
/// U+FFFD, nesting past [`MAX_DEPTH`] kept as text ([`flatten_deep`]) and
/// lone surrogates escaped ([`escape_lone_surrogates`]). What is still not
/// JSON (a syntax error, a number out of range) is an error saying what was
/// wrong, for the log.
pub fn parse_lenient<T: DeserializeOwned>(text: &[u8]) -> Result<T, String> {
    if let Ok(value) = serde_json::from_slice(text) {
        return Ok(value);
    }
    let text = String::from_utf8_lossy(text);
    let text = flatten_deep(&text, MAX_DEPTH);
    let text = escape_lone_surrogates(text.as_bytes());
    serde_json::from_slice(&text).map_err(|e| e.to_string())
}

/// A hook input as the daemon reads it, however it came: a forwarder's
/// `hook` frame, an adapter's `hook_event`, an HTTP hook's body. One
/// function for every transport, so the same bytes are judged alike
/// whichever way they arrive: the value [`parse_lenient`] reads (lone
/// surrogates and deep nesting included), or, when even that cannot read
/// them, their text ([`unreadable_text`]) as a string and what was wrong,
/// the request's `input` and `input_error`. Text that is not UTF-8 is
/// unreadable, as the forwarder finds it (a frame's input always is UTF-8).
pub fn read_input(text: &[u8]) -> (serde_json::Value, Option<String>) {
    let error = match std::str::from_utf8(text) {
        Err(e) => format!("not UTF-8 (byte {})", e.valid_up_to()),
        Ok(_) => match parse_lenient(text) {
            Ok(value) => return (value, None),
            Err(error) => format!("not JSON: {error}"),
        },
    };
    (
        serde_json::Value::String(unreadable_text(text)),
        Some(error),
    )
}

/// The text of an input that could not be read as JSON, for the log and
/// the `hook` frame's `input`: its first [`UNREADABLE_TEXT_MAX`] bytes (cut
/// on a character boundary), invalid UTF-8 replaced by U+FFFD.
pub fn unreadable_text(input: &[u8]) -> String {
    let mut cut = input.len().min(UNREADABLE_TEXT_MAX);
    // Back up over continuation bytes so no character is split.
    while cut < input.len() && cut > 0 && input[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    String::from_utf8_lossy(&input[..cut]).into_owned()
}

/// The top-level `hook_event_name` of a hook input that may not be valid
/// JSON (cut short, a stray byte), best effort: the first string value of
/// that key at depth 1 before anything makes the scan lose its way. Used to
/// pick the fallback of an input nobody could read.
pub fn find_event_name(text: &[u8]) -> Option<String> {
    const KEY: &[u8] = b"\"hook_event_name\"";
    let mut depth = 0usize;
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'"' => {
                let end = string_end(text, i)?;
                let token = &text[i..end];
                i = end;
                if depth == 1 && token == KEY {
                    let colon = skip_space(text, i);
                    if text.get(colon) != Some(&b':') {
                        continue;
                    }
                    let start = skip_space(text, colon + 1);
                    if text.get(start) != Some(&b'"') {
                        return None;
                    }
                    let value = &text[start..string_end(text, start)?];
                    return serde_json::from_slice(&escape_lone_surrogates(value)).ok();
                }
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The index just past the string token starting with the quote at `start`.
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

fn skip_space(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// A serde error message without the value it quotes: serde's messages
/// quote the offending value (`invalid type: string "sk-…", expected
/// u32`, ``unknown variant `sk-…` ``), and the messages go where secrets
/// must not (the daemon's stderr, an error a user pastes). Keeps what was
/// expected and the kind of what was found, drops the value itself; any
/// other message is returned as it is.
pub fn without_value(message: &str) -> String {
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some((found, expected)) = message
            .strip_prefix(prefix)
            .and_then(|rest| rest.rsplit_once(", expected "))
        {
            let kind = found.split(['`', '"']).next().unwrap_or("").trim();
            return format!("{prefix}expected {expected}, found {kind}");
        }
    }
    if let Some((_, expected)) = message
        .strip_prefix("unknown variant `")
        .and_then(|rest| rest.rsplit_once("`, expected "))
    {
        return format!("unknown value, expected {expected}");
    }
    message.to_string()
}

/// `text` as a JSON string, quotes and escapes included.
pub fn quote(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn escaped(text: &str) -> String {
        String::from_utf8(escape_lone_surrogates(text.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn lone_surrogates_become_their_own_text_and_pairs_stay() {
        let table = [
            (r#""a\ud800b""#, r#""a\\ud800b""#),
            (r#""\uDC00""#, r#""\\uDC00""#),
            (r#""\ud83d\ude00""#, r#""\ud83d\ude00""#),
            // A high surrogate followed by another high one: both lone.
            (r#""\ud800\ud800""#, r#""\\ud800\\ud800""#),
            // Low then high: both lone.
            (r#""\udc00\ud800""#, r#""\\udc00\\ud800""#),
            // High then a proper pair.
            (r#""\ud800\ud83d\ude00""#, r#""\\ud800\ud83d\ude00""#),
            // An escaped backslash followed by letters is not an escape.
            (r#""\\ud800""#, r#""\\ud800""#),
            (r#""\\\ud800""#, r#""\\\\ud800""#),
            (r#""\u0041\n\"""#, r#""\u0041\n\"""#),
            // At the very end, cut short: left for the parser to report.
            (r#""\ud8"#, r#""\ud8"#),
            (r#""\ud800"#, r#""\\ud800"#),
        ];
        for (input, want) in table {
            assert_eq!(escaped(input), want, "{input}");
        }
        assert!(matches!(
            escape_lone_surrogates(br#"{"a":"\ud83d\ude00"}"#),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn read_input_reads_what_it_can_and_says_what_it_cannot() {
        let (v, error) = read_input(br#"{"command":"rm \ud800"}"#);
        assert_eq!((v, error), (json!({"command": "rm \\ud800"}), None));
        let (v, error) = read_input(br#"{"command":"rm"#);
        assert_eq!(v, json!(r#"{"command":"rm"#));
        assert!(error.unwrap().starts_with("not JSON: "));
        let (v, error) = read_input(b"{\"a\":\"\xff\"}");
        assert_eq!(v, json!("{\"a\":\"\u{fffd}\"}"));
        assert_eq!(error.as_deref(), Some("not UTF-8 (byte 6)"));
    }

    #[test]
    fn lenient_parse_reads_what_node_writes() {
        let v =
            parse_lenient::<Value>(br#"{"command":"rm -rf /\ud800","ok":"\ud83d\ude00"}"#).unwrap();
        assert_eq!(v, json!({"command": "rm -rf /\\ud800", "ok": "😀"}));
        // Valid input is parsed exactly as serde_json does.
        assert_eq!(
            parse_lenient::<Value>(br#"[1,"\\u00e9"]"#).unwrap(),
            json!([1, "\\u00e9"])
        );
        assert_eq!(
            parse_lenient::<Value>(b"[\"a\xffb\"]").unwrap(),
            json!(["a\u{fffd}b"])
        );
    }

    /// Depth of the structure of `v` (a string counts as a leaf).
    fn depth_of(v: &Value) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(v, 1usize)];
        while let Some((v, d)) = stack.pop() {
            match v {
                Value::Array(items) => {
                    deepest = deepest.max(d);
                    stack.extend(items.iter().map(|i| (i, d + 1)));
                }
                Value::Object(map) => {
                    deepest = deepest.max(d);
                    stack.extend(map.values().map(|i| (i, d + 1)));
                }
                _ => {}
            }
        }
        deepest
    }

    #[test]
    fn deep_input_keeps_its_top_as_structure_and_the_rest_as_text() {
        // As Claude Code relays an MCP tool's input: 38,000 levels.
        let inner = format!("{}{}", "[".repeat(38_000), "]".repeat(38_000));
        let text = format!(
            r#"{{"hook_event_name":"PreToolUse","tool_input":{{"command":"rm -rf /","x":{inner},"s":"[[\"}}"}}}}"#
        );
        let v: Value = parse_lenient(text.as_bytes()).unwrap();
        assert_eq!(v["tool_input"]["command"], "rm -rf /");
        assert_eq!(v["tool_input"]["s"], "[[\"}");
        assert_eq!(depth_of(&v), MAX_DEPTH);
        // Nothing is lost: the text below the cut is the input's own.
        let mut level = &v["tool_input"]["x"];
        let mut levels = 3;
        while let Some(inner) = level.as_array().and_then(|a| a.first()) {
            level = inner;
            levels += 1;
        }
        assert_eq!(levels, MAX_DEPTH + 1);
        let rest = level.as_str().unwrap();
        assert_eq!(rest.len(), 2 * (38_000 - (MAX_DEPTH - 2)));
        assert!(rest.starts_with("[[") && rest.ends_with("]]"));
        // What hookd writes, every serde_json reader can read back.
        let reply = json!({"type": "ok", "result": [{"event": {"input": v}}]});
        assert!(serde_json::from_str::<Value>(&reply.to_string()).is_ok());
    }

    #[test]
    fn flattening_cuts_at_the_given_depth() {
        let table = [
            (r#"{"a":[{"b":1}]}"#, 2, r#"{"a":["{\"b\":1}"]}"#),
            (r#"{"a":[{"b":1}]}"#, 3, r#"{"a":[{"b":1}]}"#),
            (
                r#"[[], {"x": "]"}, [[1]]]"#,
                1,
                r#"["[]", "{\"x\": \"]\"}", "[[1]]"]"#,
            ),
            (
                r#"{"s":"[[[[","t":[[[1]]]}"#,
                2,
                r#"{"s":"[[[[","t":["[[1]]"]}"#,
            ),
            // Unbalanced input: still text, never a panic.
            ("[[[1", 1, r#"["[[1""#),
            ("]]]", 0, "]]]"),
        ];
        for (input, depth, want) in table {
            assert_eq!(flatten_deep(input, depth), want, "{input} at {depth}");
        }
        assert!(matches!(flatten_deep("[[1]]", 2), Cow::Borrowed(_)));
    }

    #[test]
    fn lenient_parse_says_what_is_wrong() {
        let e = parse_lenient::<Value>(b"{\"a\":").unwrap_err();
        assert!(e.contains("EOF"), "{e}");
        let e = parse_lenient::<Value>(b"[1e400]").unwrap_err();
        assert!(e.contains("out of range"), "{e}");
    }

    #[test]
    fn the_event_name_is_found_in_broken_input() {
        let cases: [(&[u8], Option<&str>); 7] = [
            (
                br#"{"hook_event_name":"PreToolUse","tool_input":{"#,
                Some("PreToolUse"),
            ),
            (
                br#"{"x":{"hook_event_name":"Stop"}, "hook_event_name" : "PreToolUse""#,
                Some("PreToolUse"),
            ),
            (
                br#"{"s":"\"hook_event_name\":\"Stop\"","hook_event_name":"Stop"}"#,
                Some("Stop"),
            ),
            (b"{\"hook_event_name\":\"Pre\xffToolUse\"}", None),
            (br#"{"hook_event_name":"Pre\ud800"}"#, Some("Pre\\ud800")),
            (br#"{"hook_event_name":7}"#, None),
            (b"not json at all", None),
        ];
        for (text, want) in cases {
            assert_eq!(
                find_event_name(text).as_deref(),
                want,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
    }

    #[test]
    fn unreadable_text_is_lossy_and_bounded() {
        assert_eq!(unreadable_text(b"a\xffb"), "a\u{fffd}b");
        let long = "é".repeat(UNREADABLE_TEXT_MAX);
        let text = unreadable_text(long.as_bytes());
        assert!(text.len() <= UNREADABLE_TEXT_MAX);
        assert!(text.chars().all(|c| c == 'é'));
    }
}
