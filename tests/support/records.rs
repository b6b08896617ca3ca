//! Reading what mocks and hooks record (JSON-lines files), and shortening
//! text for panic messages. Std and serde_json only; the other support
//! modules use it as `super::records`.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::fs;
use std::path::Path;

use serde_json::Value;

/// Read a JSON-lines file. Blank lines are skipped; a line that is not JSON
/// panics, naming the file and line.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => panic!("reading {}: {e}", path.display()),
    };
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}:{}: not JSON ({e}): {l}", path.display(), i + 1))
        })
        .collect()
}

/// Shorten `s` to at most `max` characters for panic messages.
pub fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let head: String = s.chars().take(max).collect();
        format!("{head}… [{} more chars]", s.chars().count() - max)
    }
}
