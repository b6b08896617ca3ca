//! Redaction of secrets in logged hook inputs.
//!
//! Every string in the input JSON (object keys are left alone) is matched
//! against the patterns; each match is replaced by [`REDACTED`]. A pattern
//! with a named group `secret` replaces only that group, so
//! `password=hunter2` becomes `password=[REDACTED]` and the reader still sees
//! *what* was hidden. A `RegexSet` answers "anything to do?" in one pass, so
//! inputs without secrets (nearly all of them) cost one scan per string.

use std::borrow::Cow;

use regex::{Regex, RegexSet};
use serde_json::Value;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// The built-in patterns (name, regex), on unless the config turns them off.
pub const DEFAULT_PATTERNS: &[(&str, &str)] = &[
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{16,}"),
    ("openai-style-key", r"\bsk-[A-Za-z0-9_\-]{20,}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    (
        "github-token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
    ),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}"),
    (
        "bearer-token",
        r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9._~+/=\-]{8,})",
    ),
    (
        "private-key-block",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    ),
    (
        "password-assignment",
        r#"(?i)\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token)\b["']?\s*[=:]\s*["']?(?P<secret>[^\s"'&;,]{3,})"#,
    ),
];

/// A compiled set of redaction patterns.
#[derive(Debug, Clone)]
pub struct Redactor {
    set: RegexSet,
    patterns: Vec<Regex>,
}

/// A pattern that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("redaction pattern `{pattern}` is not a valid regex: {error}")]
pub struct PatternError {
    /// The pattern.
    pub pattern: String,
    /// Why.
    pub error: regex::Error,
}

impl Default for Redactor {
    fn default() -> Redactor {
        Redactor::new(true, &[]).expect("the default patterns compile")
    }
}

impl Redactor {
    /// The defaults (if `defaults`) plus `extra` patterns.
    pub fn new(defaults: bool, extra: &[String]) -> Result<Redactor, PatternError> {
        let sources: Vec<String> = DEFAULT_PATTERNS
            .iter()
            .filter(|_| defaults)
            .map(|(_, p)| p.to_string())
            .chain(extra.iter().cloned())
            .collect();
        let patterns = sources
            .iter()
            .map(|p| {
                Regex::new(p).map_err(|error| PatternError {
                    pattern: p.clone(),
                    error,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let set = RegexSet::new(&sources).expect("each pattern compiled alone");
        Ok(Redactor { set, patterns })
    }

    /// A redactor that changes nothing.
    pub fn none() -> Redactor {
        Redactor::new(false, &[]).expect("empty set")
    }

    /// `s` with every secret replaced; borrowed when there was none.
    pub fn redact_str<'a>(&self, s: &'a str) -> Cow<'a, str> {
        let hits = self.set.matches(s);
        if !hits.matched_any() {
            return Cow::Borrowed(s);
        }
        let mut out = s.to_string();
        for i in hits.iter() {
            let re = &self.patterns[i];
            let mut next = String::with_capacity(out.len());
            let mut last = 0;
            for caps in re.captures_iter(&out) {
                let m = caps
                    .name("secret")
                    .unwrap_or_else(|| caps.get(0).expect("group 0"));
                next.push_str(&out[last..m.start()]);
                next.push_str(REDACTED);
                last = m.end();
            }
            next.push_str(&out[last..]);
            out = next;
        }
        Cow::Owned(out)
    }

    /// `value` with every string redacted; borrowed when nothing changed.
    pub fn redact_value<'a>(&self, value: &'a Value) -> Cow<'a, Value> {
        match value {
            Value::String(s) => match self.redact_str(s) {
                Cow::Borrowed(_) => Cow::Borrowed(value),
                Cow::Owned(s) => Cow::Owned(Value::String(s)),
            },
            Value::Array(items) => {
                let redacted: Vec<_> = items.iter().map(|v| self.redact_value(v)).collect();
                if redacted.iter().all(|c| matches!(c, Cow::Borrowed(_))) {
                    Cow::Borrowed(value)
                } else {
                    Cow::Owned(Value::Array(
                        redacted.into_iter().map(Cow::into_owned).collect(),
                    ))
                }
            }
            Value::Object(map) => {
                let redacted: Vec<_> = map.iter().map(|(k, v)| (k, self.redact_value(v))).collect();
                if redacted.iter().all(|(_, c)| matches!(c, Cow::Borrowed(_))) {
                    Cow::Borrowed(value)
                } else {
                    Cow::Owned(Value::Object(
                        redacted
                            .into_iter()
                            .map(|(k, v)| (k.clone(), v.into_owned()))
                            .collect(),
                    ))
                }
            }
            _ => Cow::Borrowed(value),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn default_patterns_table() {
        let r = Redactor::default();
        let cases = [
            ("export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuv", "export ANTHROPIC_API_KEY=[REDACTED]"),
            ("curl -H 'Authorization: Bearer eyJhbGciOi.JIUzI1NiJ9.x' x", "curl -H 'Authorization: Bearer [REDACTED]' x"),
            ("aws AKIAIOSFODNN7EXAMPLE", "aws [REDACTED]"),
            ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token [REDACTED]"),
            ("mysql --password=hunter22 db", "mysql --password=[REDACTED] db"),
            ("{\"api_key\": \"abc123def\"}", "{\"api_key\": \"[REDACTED]\"}"),
            ("a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----\nz", "a\n[REDACTED]\nz"),
            ("ls -la && git status", "ls -la && git status"),
            ("the password policy", "the password policy"),
        ];
        for (input, want) in cases {
            assert_eq!(r.redact_str(input), want, "{input}");
        }
    }

    #[test]
    fn values_are_redacted_deeply_and_borrowed_when_clean() {
        let r = Redactor::default();
        let clean = json!({"tool_input": {"command": "ls"}, "n": 1});
        assert!(matches!(r.redact_value(&clean), Cow::Borrowed(_)));
        let dirty =
            json!({"tool_input": {"command": "echo", "env": ["X=1", "PASSWORD=swordfish"]}});
        let out = r.redact_value(&dirty).into_owned();
        assert_eq!(
            out,
            json!({"tool_input": {"command": "echo", "env": ["X=1", "PASSWORD=[REDACTED]"]}})
        );
    }

    #[test]
    fn custom_patterns_and_errors() {
        let r = Redactor::new(false, &["corp-[0-9]{4}".into()]).unwrap();
        assert_eq!(
            r.redact_str("id corp-1234 sk-ant-api03-abcdefghijklmnopqrstuv"),
            "id [REDACTED] sk-ant-api03-abcdefghijklmnopqrstuv"
        );
        let err = Redactor::new(true, &["(".into()]).unwrap_err();
        assert!(err.to_string().contains("`(`"), "{err}");
    }
}
