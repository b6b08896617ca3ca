//! Redaction of secrets in what hookd logs and pushes: hook inputs, SDK
//! messages, and the answers clients give (`reason`, `additional_context`,
//! `updated_input`).
//!
//! Two mechanisms, both on by default (`[redact] defaults`):
//!
//! - **Patterns** on every string in the JSON, object keys included (two
//!   keys hidden alike in one object stay two members, the second
//!   `[REDACTED] (2)`): each match is replaced by [`REDACTED`]. A pattern with named groups
//!   whose names start with `secret` (`secret`, `secret_quoted`, …: a name
//!   may appear once in a regex, so alternatives take different names)
//!   replaces only those groups, so `password=hunter2` becomes
//!   `password=[REDACTED]` and the reader still sees *what* was hidden. A
//!   `RegexSet` answers "anything to do?" in one pass, so strings without
//!   secrets (nearly all of them) cost one scan each.
//! - **Key names** of JSON objects: a member whose key is named like a
//!   secret (`password`, `api_key`, `clientSecret`, `AWS_SECRET_ACCESS_KEY`,
//!   `authorization`, … see [`SECRET_KEY`]) has its value replaced by
//!   [`REDACTED`] whatever it looks like: a string, a number, an object.
//!   Inside JSON *text* (a string holding `{"password": "…"}`) the patterns
//!   do the same for string, number and boolean values.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::{Regex, RegexSet};
use serde_json::Value;

use crate::decision::Answer;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// A name (of a variable, option, header or JSON key) that holds a secret:
/// words joined by `_` or `-` (or glued: `PGPASSWORD`, `dbPassword`) whose
/// last word is a secret's. `DB_PASSWORD`, `MYSQL_PWD`,
/// `AWS_SECRET_ACCESS_KEY`, `api-key`, `clientSecret`, `GITHUB_TOKEN`; not
/// `max_tokens`, `tokenizer`, `DB_PASSWORD_FILE`, `PWD` or `author`. (A
/// macro, so the patterns below can splice it in with `concat!`.)
macro_rules! secret_name {
    () => {
        r"(?:(?:[a-z0-9]+[_-])*(?:[a-z0-9]*(?:password|passwd|passphrase|secret|token|credentials?|api[_-]?key|apikey|(?:access|secret|private|signing|encryption|master|client|session)[_-]?key|auth)|[a-z0-9]+_pwd))"
    };
}

/// The end of a secret's name, as the text patterns look for it: whatever
/// comes before does not change the verdict, and leaving it out keeps the
/// regex cheap on megabytes of text (a leading `(?:[a-z0-9]+[_-])*` made one
/// pattern 80 times slower than all the others together). `DB_PASSWORD`,
/// `db.password`, `PGPASSWORD`, `MYSQL_PWD`; not `max_tokens` or `PWD`.
macro_rules! secret_word {
    () => {
        r"(?:password|passwd|passphrase|secret|token|credentials?|api[_-]?key|apikey|(?:access|secret|private|signing|encryption|master|client|session)[_-]?key|auth|_pwd)"
    };
}

/// The value after a secret's name: a quoted value whole (spaces and all),
/// else a word of three characters or more.
macro_rules! secret_value {
    () => {
        r#"(?:\\?"(?P<secret_dq>[^"\\\n]+)|'(?P<secret_sq>[^'\n]+)'|(?P<secret>[^\s"'&;,)}\]-][^\s"'&;,)}\]]{2,}))"#
    };
}

/// The whole JSON key (case-insensitive) under which any value is hidden:
/// a secret's name, or an HTTP header that carries credentials.
pub const SECRET_KEY: &str = concat!(
    r"(?i)^(?:",
    secret_name!(),
    r"|authorization|proxy-authorization|cookie|set-cookie)$"
);

/// The built-in patterns (name, regex), on unless the config turns them off.
///
/// Word boundaries are ASCII (`(?-u:\b)`): a Unicode `\b` makes the regex
/// engine give up its fast automaton on the first non-ASCII byte, and the set
/// then took seconds on a few MiB of tool output; for the ASCII names and
/// keys these patterns look for, the two mean the same.
pub const DEFAULT_PATTERNS: &[(&str, &str)] = &[
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{16,}"),
    ("openai-style-key", r"(?-u:\b)sk-[A-Za-z0-9_\-]{20,}"),
    (
        "aws-access-key",
        r"(?-u:\b)(?:AKIA|ASIA)[0-9A-Z]{16}(?-u:\b)",
    ),
    (
        "github-token",
        r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
    ),
    ("slack-token", r"(?-u:\b)xox[abposr]-[A-Za-z0-9\-]{10,}"),
    ("google-api-key", r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}"),
    (
        "bearer-token",
        r"(?i)(?-u:\b)bearer\s+(?P<secret>[A-Za-z0-9._~+/=\-]{8,})",
    ),
    // `Authorization: Basic dXNlcjpwYXNz`, `authorization="token …"`: the
    // credentials after the scheme, whatever the scheme.
    (
        "authorization-header",
        r#"(?i)(?-u:\b)(?:proxy-)?authorization\\?["']?\s*[:=]\s*\\?["']?(?:[a-z][a-z0-9-]*\s+)?(?P<secret>[A-Za-z0-9._~+/=\-]{4,})"#,
    ),
    // Also a block cut short (no END line): everything after BEGIN.
    (
        "private-key-block",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*)",
    ),
    // `https://user:pass@host`, `postgres://app:pass@db/x`, `redis://:pass@h`.
    // (Patterns here start with a literal where they can: a leading class
    // such as the scheme's makes the search slow on megabytes of output.)
    ("url-credentials", r"://[^\s/?#@:]*:(?P<secret>[^\s/?#@]+)@"),
    // `curl -u user:pass`, `curl -uuser:pass`.
    (
        "curl-user",
        r#"(?-u:\b)curl(?-u:\b)[^\n;&|]*?\s-u\s*["']?[^\s:"']*:(?P<secret>[^\s"']+)"#,
    ),
    // `--user user:pass`, `--proxy-user=user:pass`.
    (
        "user-option",
        r#"--(?:proxy-)?user[=\s]\s*["']?[^\s:"']*:(?P<secret>[^\s"']+)"#,
    ),
    // `mysql -phunter2` (the password glued to `-p`).
    (
        "mysql-password-option",
        r"(?-u:\b)mysql(?:dump|admin)?(?-u:\b)[^\n;&|]*?\s-p(?P<secret>[^\s\x22']+)",
    ),
    // NAME=value, NAME: value, "NAME": "value", --name=value for a secret's
    // NAME (see `secret_word!`), also inside JSON text (`{\"password\": …`).
    (
        "secret-assignment",
        concat!(
            r"(?i)",
            secret_word!(),
            r#"\\?["']?[ \t]*[=:][ \t]*"#,
            secret_value!()
        ),
    ),
    // `--api-key VALUE`, `--password 'two words'`: an option named like a
    // secret, its value after a space.
    (
        "secret-option",
        concat!(
            r"(?i)--[a-z0-9_-]*",
            secret_word!(),
            r"\s+",
            secret_value!()
        ),
    ),
];

/// A compiled set of redaction patterns.
#[derive(Debug, Clone)]
pub struct Redactor {
    /// The patterns, then (with the defaults) [`SECRET_WORDS`]: one pass
    /// over a text answers for both (see [`Redactor::leaves_json_alone`]).
    set: RegexSet,
    patterns: Vec<Pattern>,
    /// Keys whose values are hidden whole; `None` without the defaults.
    secret_key: Option<Regex>,
    /// Whether one scan of a value's JSON text can prove it clean (see
    /// [`Redactor::leaves_json_alone`]): no pattern anchors to the start or
    /// end of a text or a line, which a string's text has and the JSON
    /// around it does not.
    scans_json: bool,
}

/// The words one of which every key [`SECRET_KEY`] matches holds, found
/// anywhere (unanchored, case-insensitive alike): its names end with
/// [`secret_word!`]'s, `authorization` holds `auth`. The last pattern of a
/// redactor's set with the defaults; it hides nothing itself.
const SECRET_WORDS: &str = concat!(r"(?i)", secret_word!(), r"|cookie");

/// One pattern, compiled on its own the first time the set finds it in a
/// text: the set answers whether any pattern matches, and most never do.
/// Each compiled alone holds automata of its own beside the set's: the
/// defaults' took 260 KiB of an idle daemon's 1.7 MiB of own memory.
#[derive(Debug, Clone)]
struct Pattern {
    source: String,
    compiled: OnceLock<Compiled>,
}

/// A pattern compiled, and the indices of its `secret…` groups.
#[derive(Debug, Clone)]
struct Compiled {
    regex: Regex,
    /// Capture group indices whose names start with `secret`; empty: the
    /// whole match is hidden.
    secrets: Vec<usize>,
}

impl Pattern {
    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            // It compiled in the set, beside the others: alone it is smaller.
            let regex = Regex::new(&self.source).expect("a pattern of a compiled set compiles");
            let secrets = regex
                .capture_names()
                .enumerate()
                .filter(|(_, name)| name.is_some_and(|n| n.starts_with("secret")))
                .map(|(i, _)| i)
                .collect();
            Compiled { regex, secrets }
        })
    }
}

/// A pattern that does not compile.
#[derive(Debug, thiserror::Error)]
pub enum PatternError {
    /// One pattern is not a valid regex.
    #[error("redaction pattern `{pattern}` is not a valid regex: {error}")]
    Invalid {
        /// The pattern.
        pattern: String,
        /// Why.
        error: regex::Error,
    },
    /// Each compiles, but not all of them together (size limits).
    #[error("the redaction patterns are too large to match together: {0}")]
    TooLarge(regex::Error),
}

impl Default for Redactor {
    fn default() -> Redactor {
        Redactor::new(true, &[]).expect("the default patterns compile")
    }
}

impl Redactor {
    /// The defaults (if `defaults`: the patterns and key names) plus `extra`
    /// patterns.
    pub fn new(defaults: bool, extra: &[String]) -> Result<Redactor, PatternError> {
        let sources: Vec<String> = DEFAULT_PATTERNS
            .iter()
            .filter(|_| defaults)
            .map(|(_, p)| p.to_string())
            .chain(extra.iter().cloned())
            .collect();
        // The set is all a redactor needs to start. Only when it does not
        // compile is each pattern compiled alone, to name the one at fault;
        // each is compiled alone again when the set first finds it.
        let in_set = sources.iter().map(String::as_str);
        let set =
            RegexSet::new(in_set.chain(defaults.then_some(SECRET_WORDS))).map_err(|too_large| {
                sources
                    .iter()
                    .find_map(|p| {
                        Regex::new(p).err().map(|error| PatternError::Invalid {
                            pattern: p.clone(),
                            error,
                        })
                    })
                    .unwrap_or(PatternError::TooLarge(too_large))
            })?;
        let patterns: Vec<Pattern> = sources
            .into_iter()
            .map(|source| Pattern {
                source,
                compiled: OnceLock::new(),
            })
            .collect();
        let secret_key =
            defaults.then(|| Regex::new(SECRET_KEY).expect("the secret key pattern compiles"));
        let scans_json = patterns.iter().all(|p| {
            regex_syntax::parse(&p.source)
                .is_ok_and(|hir| !hir.properties().look_set().contains_anchor())
        });
        Ok(Redactor {
            set,
            patterns,
            secret_key,
            scans_json,
        })
    }

    /// A redactor that changes nothing.
    pub fn none() -> Redactor {
        Redactor::new(false, &[]).expect("empty set")
    }

    /// `s` with every secret replaced; borrowed when there was none. The
    /// spans every matching pattern hides in `s` are merged first, so one
    /// secret caught by two patterns becomes one [`REDACTED`].
    pub fn redact_str<'a>(&self, s: &'a str) -> Cow<'a, str> {
        // `is_match` first: it may stop at the first hit and needs no
        // overlapping search, which `matches` runs over the whole string
        // for every pattern; nearly every string has nothing to hide.
        if !self.set.is_match(s) {
            return Cow::Borrowed(s);
        }
        let hits = self.set.matches(s);
        let mut spans: Vec<(usize, usize)> = Vec::new();
        // Not the secret words (the set's last), which hide nothing.
        for i in hits.iter().filter(|&i| i < self.patterns.len()) {
            let pattern = self.patterns[i].compiled();
            for caps in pattern.regex.captures_iter(s) {
                if pattern.secrets.is_empty() {
                    spans.extend(caps.get(0).map(|m| (m.start(), m.end())));
                } else {
                    spans.extend(
                        pattern
                            .secrets
                            .iter()
                            .filter_map(|&g| caps.get(g))
                            .map(|m| (m.start(), m.end())),
                    );
                }
            }
        }
        if spans.is_empty() {
            return Cow::Borrowed(s);
        }
        spans.sort_unstable();
        let mut out = String::with_capacity(s.len());
        let mut last = 0;
        for (start, end) in spans {
            if end <= last {
                continue; // inside a span already hidden
            }
            if start >= last {
                out.push_str(&s[last..start]);
                out.push_str(REDACTED);
            }
            last = end;
        }
        out.push_str(&s[last..]);
        Cow::Owned(out)
    }

    /// Whether `json`, the JSON text serde_json wrote for a value, proves
    /// that [`Redactor::redact_value`] leaves that value alone and
    /// [`Redactor::redact_str`] every string in it: one scan of the whole
    /// text where the walk would scan each string and key on its own, for
    /// the hook inputs (nearly all) that have nothing to hide. `false`
    /// says only that the walk must look.
    ///
    /// Sound because, when the text has no backslash, every string and
    /// key of the value is in it as it is, between quotes: a pattern that
    /// matches in one of them matches in the text (a `"` is no word
    /// character, as a text's ends are none, so `\b` holds alike), and a
    /// key [`SECRET_KEY`] names holds one of the words its names end with. So it is
    /// `false` for text with an escape (a secret spelled `\u0073k-…` is
    /// found by the walk, which sees the string unescaped) and for
    /// patterns anchored to a text's or a line's ends (`^`, `$`, `\A`),
    /// which match at a string's ends and not inside the text.
    pub fn leaves_json_alone(&self, json: &str) -> bool {
        self.scans_json && !json.contains('\\') && !self.set.is_match(json)
    }

    /// Whether a JSON object member named `key` holds a secret, whatever
    /// its value looks like.
    pub fn is_secret_key(&self, key: &str) -> bool {
        self.secret_key.as_ref().is_some_and(|re| re.is_match(key))
    }

    /// `value` with every string redacted and every member under a secret
    /// key hidden; borrowed when nothing changed.
    pub fn redact_value<'a>(&self, value: &'a Value) -> Cow<'a, Value> {
        // Nearly every input has nothing to hide: find that out without
        // building anything, then build only for one that has.
        if !self.hides_anything_in(value) {
            return Cow::Borrowed(value);
        }
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
                let redacted: Vec<_> = map
                    .iter()
                    .map(|(k, v)| {
                        let hidden = self.hides_member(k, v);
                        // A key is text like any other: a token used as a
                        // map's key (a cache keyed by API key) is hidden too.
                        let key = self.redact_str(k);
                        if hidden {
                            (key, Cow::Owned(Value::String(REDACTED.to_string())))
                        } else {
                            (key, self.redact_value(v))
                        }
                    })
                    .collect();
                if redacted
                    .iter()
                    .all(|(k, v)| matches!((k, v), (Cow::Borrowed(_), Cow::Borrowed(_))))
                {
                    return Cow::Borrowed(value);
                }
                let mut out = serde_json::Map::with_capacity(redacted.len());
                for (key, v) in redacted {
                    // Two keys hidden alike stay two members.
                    let mut key = key.into_owned();
                    let base = key.clone();
                    let mut n = 1;
                    while out.contains_key(&key) {
                        n += 1;
                        key = format!("{base} ({n})");
                    }
                    out.insert(key, v.into_owned());
                }
                Cow::Owned(Value::Object(out))
            }
            _ => Cow::Borrowed(value),
        }
    }

    /// Whether [`Redactor::redact_value`] changes anything in `value`.
    fn hides_anything_in(&self, value: &Value) -> bool {
        match value {
            Value::String(s) => self.finds(s),
            Value::Array(items) => items.iter().any(|v| self.hides_anything_in(v)),
            Value::Object(map) => map.iter().any(|(k, v)| {
                self.finds(k) || self.hides_member(k, v) || self.hides_anything_in(v)
            }),
            _ => false,
        }
    }

    /// Whether a pattern matches in `s` (the secret words aside).
    fn finds(&self, s: &str) -> bool {
        self.set.is_match(s)
            && (self.set.len() == self.patterns.len()
                || self.set.matches(s).iter().any(|i| i < self.patterns.len()))
    }

    /// Whether the member `key: value` of an object is hidden whole: its key
    /// names a secret and its value is not empty or hidden already.
    fn hides_member(&self, key: &str, value: &Value) -> bool {
        !matches!(value, Value::Null)
            && !matches!(value.as_str(), Some("" | REDACTED))
            && self.is_secret_key(key)
    }

    /// A decision's answer as it may be logged: a client's `reason`,
    /// `additional_context` and `updated_input` redacted like an input;
    /// borrowed when nothing changed.
    pub fn redact_answer<'a>(&self, answer: &'a Answer) -> Cow<'a, Answer> {
        let reason = answer.reason.as_deref().map(|r| self.redact_str(r));
        let context = answer
            .additional_context
            .as_deref()
            .map(|c| self.redact_str(c));
        let input = answer.updated_input.as_ref().map(|v| self.redact_value(v));
        let changed = matches!(reason, Some(Cow::Owned(_)))
            || matches!(context, Some(Cow::Owned(_)))
            || matches!(input, Some(Cow::Owned(_)));
        if !changed {
            return Cow::Borrowed(answer);
        }
        Cow::Owned(Answer {
            verdict: answer.verdict,
            reason: reason.map(Cow::into_owned),
            updated_input: input.map(Cow::into_owned),
            additional_context: context.map(Cow::into_owned),
        })
    }
}

pub use hookd_protocol::json::without_value;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::Verdict;
    use serde_json::json;

    /// Every default pattern, and what it must leave alone.
    #[test]
    fn default_patterns_table() {
        let r = Redactor::default();
        let cases: &[(&str, &str)] = &[
            ("export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuv", "export ANTHROPIC_API_KEY=[REDACTED]"),
            ("curl -H 'Authorization: Bearer eyJhbGciOi.JIUzI1NiJ9.x' x", "curl -H 'Authorization: Bearer [REDACTED]' x"),
            ("aws AKIAIOSFODNN7EXAMPLE", "aws [REDACTED]"),
            ("token ghp_abcdefghijklmnopqrstuvwxyz0123456789", "token [REDACTED]"),
            ("mysql --password=hunter22 db", "mysql --password=[REDACTED] db"),
            ("{\"api_key\": \"abc123def\"}", "{\"api_key\": \"[REDACTED]\"}"),
            ("a\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA\n-----END OPENSSH PRIVATE KEY-----\nz", "a\n[REDACTED]\nz"),
            // Environment variables named like secrets.
            ("DB_PASSWORD=hunter2 ./migrate", "DB_PASSWORD=[REDACTED] ./migrate"),
            ("PGPASSWORD=hunter2 psql -h db", "PGPASSWORD=[REDACTED] psql -h db"),
            ("MYSQL_PWD=hunter2 mysql", "MYSQL_PWD=[REDACTED] mysql"),
            ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY", "export AWS_SECRET_ACCESS_KEY=[REDACTED]"),
            ("GITHUB_TOKEN=abcdef123456 gh pr list", "GITHUB_TOKEN=[REDACTED] gh pr list"),
            ("export DB_PASSWORD=\"two words\"; run", "export DB_PASSWORD=\"[REDACTED]\"; run"),
            ("--db-password 'x y z'", "--db-password '[REDACTED]'"),
            ("docker login --password hunter22 -u bob", "docker login --password [REDACTED] -u bob"),
            ("gh api --token=abc123def x", "gh api --token=[REDACTED] x"),
            ("cmd --no-auth --verbose", "cmd --no-auth --verbose"),
            ("docker login --password-stdin < f", "docker login --password-stdin < f"),
            ("--db-password='x y z'", "--db-password='[REDACTED]'"),
            // JSON text inside a string.
            ("curl -d '{\"password\":\"hunter2\",\"user\":\"bob\"}' x", "curl -d '{\"password\":\"[REDACTED]\",\"user\":\"bob\"}' x"),
            ("{\"api_key\": 123456}", "{\"api_key\": [REDACTED]}"),
            ("{\\\"password\\\":\\\"hunter2\\\"}", "{\\\"password\\\":\\\"[REDACTED]\\\"}"),
            ("config: {clientSecret: abc123}", "config: {clientSecret: [REDACTED]}"),
            // curl -u / --user, URL credentials, Basic auth.
            ("curl -u alice:s3cret https://x", "curl -u alice:[REDACTED] https://x"),
            ("curl -ualice:s3cret https://x", "curl -ualice:[REDACTED] https://x"),
            ("curl -s https://x --user alice:s3cret", "curl -s https://x --user alice:[REDACTED]"),
            ("wget --user=alice:s3cret x", "wget --user=alice:[REDACTED] x"),
            ("git clone https://bob:hunter2@github.com/x/y", "git clone https://bob:[REDACTED]@github.com/x/y"),
            ("psql postgres://app:pa55word@db:5432/x", "psql postgres://app:[REDACTED]@db:5432/x"),
            ("redis-cli -u redis://:pa55@cache:6379", "redis-cli -u redis://:[REDACTED]@cache:6379"),
            ("curl -H 'Authorization: Basic dXNlcjpwYXNz' x", "curl -H 'Authorization: Basic [REDACTED]' x"),
            ("{\"Authorization\": \"Basic dXNlcjpwYXNz\"}", "{\"Authorization\": \"Basic [REDACTED]\"}"),
            ("mysql -uroot -phunter2 db", "mysql -uroot -p[REDACTED] db"),
            // A private key cut short: everything from BEGIN on.
            ("cat <<EOF\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA", "cat <<EOF\n[REDACTED]"),
            // Left alone.
            ("ls -la && git status", "ls -la && git status"),
            ("the password policy", "the password policy"),
            ("echo $PWD; cd $OLDPWD", "echo $PWD; cd $OLDPWD"),
            ("PWD=/home/dev/project make", "PWD=/home/dev/project make"),
            ("DB_PASSWORD_FILE=/run/secrets/db ./run", "DB_PASSWORD_FILE=/run/secrets/db ./run"),
            ("max_tokens=4096 tokenizer=bpe author=jane", "max_tokens=4096 tokenizer=bpe author=jane"),
            ("curl http://localhost:8080/a@b", "curl http://localhost:8080/a@b"),
            ("docker run -u 1000:1000 img", "docker run -u 1000:1000 img"),
            ("sort -u names.txt && git add -u", "sort -u names.txt && git add -u"),
            ("mysql -P 3306 -h db", "mysql -P 3306 -h db"),
            ("basic usage of the tool", "basic usage of the tool"),
        ];
        for (input, want) in cases {
            assert_eq!(r.redact_str(input), *want, "{input}");
        }
    }

    #[test]
    fn values_are_redacted_deeply_and_borrowed_when_clean() {
        let r = Redactor::default();
        let clean = json!({"tool_input": {"command": "ls"}, "n": 1,
            "usage": {"input_tokens": 5, "output_tokens": 7, "max_tokens": 9},
            "apiKeySource": "none", "session_id": "s", "token_count": 3});
        assert!(matches!(r.redact_value(&clean), Cow::Borrowed(_)));
        let dirty =
            json!({"tool_input": {"command": "echo", "env": ["X=1", "PASSWORD=swordfish"]}});
        let out = r.redact_value(&dirty).into_owned();
        assert_eq!(
            out,
            json!({"tool_input": {"command": "echo", "env": ["X=1", "PASSWORD=[REDACTED]"]}})
        );
    }

    /// A member whose key is named like a secret is hidden whatever its
    /// value looks like, at any depth.
    #[test]
    fn secret_keys_hide_their_values() {
        let r = Redactor::default();
        let input = json!({
            "tool_name": "mcp__db__connect",
            "tool_input": {
                "host": "db",
                "password": "short",
                "api_key": 12345,
                "config": {"clientSecret": "x", "DB_PASSWORD": true,
                           "AWS_SECRET_ACCESS_KEY": "k", "pgpassword": "p"},
                "credentials": {"user": "bob", "pass": "hunter2"},
                "headers": [{"Authorization": "opaque-value"}, {"Cookie": "sid=abc"}],
                "token": null,
                "secret": "",
                "max_tokens": 100,
                "author": "jane",
            }
        });
        let out = r.redact_value(&input).into_owned();
        assert_eq!(
            out["tool_input"],
            json!({
                "host": "db",
                "password": REDACTED,
                "api_key": REDACTED,
                "config": {"clientSecret": REDACTED, "DB_PASSWORD": REDACTED,
                           "AWS_SECRET_ACCESS_KEY": REDACTED, "pgpassword": REDACTED},
                "credentials": REDACTED,
                "headers": [{"Authorization": REDACTED}, {"Cookie": REDACTED}],
                "token": null,
                "secret": "",
                "max_tokens": 100,
                "author": "jane",
            })
        );
        // Without the defaults, keys are not judged either.
        let none = Redactor::new(false, &[]).unwrap();
        assert!(matches!(none.redact_value(&input), Cow::Borrowed(_)));
    }

    /// A secret used as an object's key is hidden like one in a value;
    /// two keys hidden alike stay two members.
    #[test]
    fn secrets_in_keys_are_redacted() {
        let r = Redactor::default();
        let key = "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA";
        let other = "sk-ant-api03-BBBBBBBBBBBBBBBBBBBBBBBB";
        let input = json!({"cache": {key: 1, other: 2, "plain": 3}});
        let out = r.redact_value(&input).into_owned();
        assert_eq!(
            out,
            json!({"cache": {"[REDACTED]": 1, "[REDACTED] (2)": 2, "plain": 3}})
        );
        let clean = json!({"cache": {"plain": 3}});
        assert!(matches!(r.redact_value(&clean), Cow::Borrowed(_)));
    }

    /// A client's answer is redacted like an input before it is logged.
    #[test]
    fn answers_are_redacted() {
        let r = Redactor::default();
        let answer = Answer {
            verdict: Verdict::Allow,
            reason: Some("ok, PGPASSWORD=hunter2 is fine".into()),
            updated_input: Some(json!({"command": "psql", "password": "hunter2"})),
            additional_context: Some("use https://bob:hunter2@db/x".into()),
        };
        let out = r.redact_answer(&answer);
        assert!(matches!(out, Cow::Owned(_)));
        let text = serde_json::to_string(&*out).unwrap();
        assert!(!text.contains("hunter2"), "{text}");
        assert_eq!(out.verdict, Verdict::Allow);
        assert_eq!(
            out.reason.as_deref(),
            Some("ok, PGPASSWORD=[REDACTED] is fine")
        );
        let clean = Answer::new(Verdict::Deny, Some("no".into()));
        assert!(matches!(r.redact_answer(&clean), Cow::Borrowed(_)));
    }

    /// Real hook inputs (every event of Claude Code 2.1.330) hold no
    /// secret: redaction must leave every one of them untouched.
    #[test]
    fn real_hook_inputs_are_left_alone() {
        let r = Redactor::default();
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/events");
        let mut seen = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let input: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            if let Cow::Owned(changed) = r.redact_value(&input) {
                panic!("{}: redacted to {changed:#}", path.display());
            }
            seen += 1;
        }
        assert!(seen > 30, "{seen} fixtures");
    }

    /// One scan of a value's JSON text proves it clean only when the walk
    /// would find nothing: never for a secret in a string or a key, a key
    /// named like a secret, a secret spelled with JSON escapes, or with a
    /// pattern anchored to a text's ends.
    #[test]
    fn one_scan_of_the_json_proves_it_clean_only_when_the_walk_agrees() {
        let r = Redactor::default();
        let text = |v: &Value| serde_json::to_string(v).unwrap();
        let clean = json!({"tool_input": {"command": "cargo test --workspace && git status"},
            "cwd": "/home/dev/project", "n": 1, "ok": true, "none": null});
        assert!(r.leaves_json_alone(&text(&clean)));
        assert!(matches!(r.redact_value(&clean), Cow::Borrowed(_)));
        for dirty in [
            json!({"command": "export ANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuv"}),
            json!({"cache": {"sk-ant-api03-abcdefghijklmnopqrstuv": 1}}),
            json!({"password": 12345}),
            json!({"headers": {"Cookie": "sid"}}),
            json!({"nested": [{"deep": {"clientSecret": {"a": 1}}}]}),
        ] {
            assert!(!r.leaves_json_alone(&text(&dirty)), "{dirty}");
            assert!(matches!(r.redact_value(&dirty), Cow::Owned(_)), "{dirty}");
        }
        // A secret written with escapes in the raw text: the scan does not
        // see it, so it refuses to vouch for any text with a backslash, and
        // the walk (on the string unescaped) hides it.
        let escaped = r#"{"command":"echo sk-ant-api03-abcdefghijklmnopqrstuv"}"#;
        let value: Value = serde_json::from_str(escaped).unwrap();
        assert!(!r.leaves_json_alone(escaped));
        assert_eq!(
            r.redact_value(&value).into_owned(),
            json!({"command": "echo [REDACTED]"})
        );
        // A newline is `\n` in the text, which `\s` does not match.
        let pin = Redactor::new(false, &[r"pin:\s+(?P<secret>[0-9]{4})".into()]).unwrap();
        let split = json!({"command": "unlock --pin:\n4711"});
        assert!(!pin.leaves_json_alone(&text(&split)));
        assert_eq!(
            pin.redact_value(&split).into_owned(),
            json!({"command": "unlock --pin:\n[REDACTED]"})
        );
        let quoted = json!({"command": "git commit -m \"fine\""});
        assert!(!r.leaves_json_alone(&text(&quoted)));
        assert!(matches!(r.redact_value(&quoted), Cow::Borrowed(_)));
        // A pattern anchored to a string's start matches the string, not
        // the text around it: with one, the scan never vouches.
        let anchored = Redactor::new(true, &["^corp-[0-9]{4}".into()]).unwrap();
        let ticket = json!({"prompt": "corp-1234 is down"});
        assert!(!anchored.leaves_json_alone(&text(&ticket)));
        assert!(!anchored.leaves_json_alone(&text(&clean)));
        assert_eq!(
            anchored.redact_value(&ticket).into_owned(),
            json!({"prompt": "[REDACTED] is down"})
        );
        let unanchored = Redactor::new(false, &["corp-[0-9]{4}".into()]).unwrap();
        assert!(unanchored.leaves_json_alone(&text(&clean)));
        assert!(!unanchored.leaves_json_alone(&text(&ticket)));
    }

    /// Over every real hook input: where the scan vouches, the walk leaves
    /// the input alone (and it vouches for most of them).
    #[test]
    fn the_scan_agrees_with_the_walk_on_real_inputs() {
        let r = Redactor::default();
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/events");
        let (mut vouched, mut seen) = (0, 0);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let input: Value =
                serde_json::from_slice(&std::fs::read(entry.unwrap().path()).unwrap()).unwrap();
            seen += 1;
            if r.leaves_json_alone(&serde_json::to_string(&input).unwrap()) {
                vouched += 1;
                assert!(matches!(r.redact_value(&input), Cow::Borrowed(_)));
            }
        }
        assert!(vouched * 2 > seen, "{vouched} of {seen}");
    }

    #[test]
    fn a_pattern_is_compiled_when_the_set_first_finds_it() {
        let r = Redactor::default();
        let compiled = |r: &Redactor| -> Vec<usize> {
            (0..r.patterns.len())
                .filter(|&i| r.patterns[i].compiled.get().is_some())
                .collect()
        };
        assert_eq!(compiled(&r), Vec::<usize>::new());
        assert_eq!(r.redact_str("nothing secret here"), "nothing secret here");
        assert_eq!(compiled(&r), Vec::<usize>::new());
        assert_eq!(
            r.redact_str("key sk-ant-api03-abcdefghijklmnopqrstuv"),
            "key [REDACTED]"
        );
        let anthropic = DEFAULT_PATTERNS
            .iter()
            .position(|(name, _)| *name == "anthropic-key")
            .unwrap();
        assert!(compiled(&r).contains(&anthropic), "{:?}", compiled(&r));
        assert!(compiled(&r).len() < r.patterns.len(), "{:?}", compiled(&r));
    }

    #[test]
    fn custom_patterns_and_errors() {
        let r = Redactor::new(false, &["corp-[0-9]{4}".into()]).unwrap();
        assert_eq!(
            r.redact_str("id corp-1234 sk-ant-api03-abcdefghijklmnopqrstuv"),
            "id [REDACTED] sk-ant-api03-abcdefghijklmnopqrstuv"
        );
        let r = Redactor::new(
            false,
            &["pin (?P<secret_a>[0-9]+)|code (?P<secret_b>[a-z]+)".into()],
        )
        .unwrap();
        assert_eq!(
            r.redact_str("pin 1234, code abc"),
            "pin [REDACTED], code [REDACTED]"
        );
        let err = Redactor::new(true, &["(".into()]).unwrap_err();
        assert!(err.to_string().contains("`(`"), "{err}");
    }
}
