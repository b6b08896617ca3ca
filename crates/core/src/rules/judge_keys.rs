//! Reading a judge rule's keys (`action = "judge"`, `prompt`, `provider`,
//! `model`, `timeout`, `on_error`) from a rules file.

use super::diag::Sink;
use super::judge::{JudgeSpec, OnError, DEFAULT_TIMEOUT_MS};
use toml::de::DeValue;
use toml::Spanned;

type Value<'i> = Spanned<DeValue<'i>>;

/// Whether an `action` value is `"judge"`.
pub(crate) fn is_judge(v: &Value<'_>) -> bool {
    matches!(v.get_ref(), DeValue::String(s) if s == "judge")
}

/// The judge keys of one rule as read so far.
#[derive(Default)]
pub(crate) struct JudgeKeys {
    /// Where `action = "judge"` is written.
    at: Option<usize>,
    prompt: Option<String>,
    provider: Option<String>,
    model: Option<String>,
    timeout_ms: Option<u64>,
    on_error: Option<OnError>,
    /// The first judge-only key, for the error when `action` is not judge.
    first_key: Option<(String, usize)>,
    /// The compiled question, set by [`JudgeKeys::finish`].
    pub spec: Option<JudgeSpec>,
}

impl JudgeKeys {
    pub fn action(&mut self, at: usize) {
        self.at = Some(at);
    }

    /// Read one of `prompt`, `provider`, `model`, `timeout`, `on_error`.
    pub fn key(&mut self, sink: &mut Sink<'_>, key: &str, v: &Value<'_>, label: &str) {
        let at = v.span().start;
        self.first_key.get_or_insert((key.to_string(), at));
        let DeValue::String(s) = v.get_ref() else {
            sink.error(
                at,
                format!(
                    "{label}: `{key}` must be a string, found {}",
                    v.get_ref().type_str()
                ),
            );
            return;
        };
        let s: &str = s;
        match key {
            "prompt" if s.trim().is_empty() => {
                sink.error(at, format!("{label}: `prompt` must not be empty"))
            }
            "prompt" => self.prompt = Some(s.to_string()),
            "provider" => self.provider = Some(s.to_string()),
            "model" => self.model = Some(s.to_string()),
            "timeout" => match parse_duration_ms(s) {
                Some(ms) if ms > 0 => self.timeout_ms = Some(ms),
                _ => sink.error(
                    at,
                    format!(
                        "{label}: `timeout`: {s:?} is not a duration such as \"3s\" or \"500ms\""
                    ),
                ),
            },
            _ => match OnError::parse(s) {
                Some(o) => self.on_error = Some(o),
                None => {
                    let hint = super::file::suggest(s, &["ask", "deny", "none"])
                        .map(|m| format!(" (did you mean {m:?}?)"))
                        .unwrap_or_default();
                    sink.error(
                        at,
                        format!("{label}: `on_error`: unknown value {s:?}; expected ask, deny or none{hint}"),
                    )
                }
            },
        }
    }

    /// Check the keys together once the rule is read.
    pub fn finish(&mut self, sink: &mut Sink<'_>, label: &str, header: usize) {
        match self.at {
            None => {
                if let Some((key, at)) = &self.first_key {
                    sink.error(
                        *at,
                        format!("{label}: `{key}` is only for judge rules (action = \"judge\")"),
                    );
                }
            }
            Some(_) => match self.prompt.take() {
                None => sink.error(
                    header,
                    format!("{label}: a judge rule needs `prompt`, the question for the model"),
                ),
                Some(prompt) => {
                    self.spec = Some(JudgeSpec {
                        prompt,
                        provider: self.provider.take(),
                        model: self.model.take(),
                        timeout_ms: self.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
                        on_error: self.on_error.unwrap_or(OnError::Ask),
                    })
                }
            },
        }
    }
}

/// `"3s"`, `"500ms"`, `"1m"` in milliseconds.
pub(crate) fn parse_duration_ms(s: &str) -> Option<u64> {
    let s = s.trim();
    let (n, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1_000)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60_000)
    } else {
        return None;
    };
    n.trim().parse::<u64>().ok()?.checked_mul(mult)
}
