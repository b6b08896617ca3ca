//! Reading the session-fact keys of a rule (`limit`, `budget`, `after`,
//! `within`; see [`super::super::facts`]) with the same error quality as the
//! other keys: `file:line:col`, and "did you mean" for unknown sub-keys.

use super::super::facts::{parse_duration, AfterPattern, Limit, Scope};
use super::{tool, Reader, Value};
use toml::de::DeValue;

const LIMIT_KEYS: &[&str] = &["count", "per", "scope"];
const BUDGET_KEYS: &[&str] = &["calls", "usd"];

impl Reader<'_> {
    /// A whole number ≥ 1, or an error naming `what`.
    fn positive(&mut self, v: &Value<'_>, what: &str) -> Option<u64> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) if n >= 1 => Some(n as u64),
                _ => {
                    self.sink
                        .error(at, format!("{what} must be a whole number of at least 1"));
                    None
                }
            },
            other => {
                self.sink.error(
                    at,
                    format!("{what} must be a whole number, found {}", other.type_str()),
                );
                None
            }
        }
    }

    /// A duration string (`"10m"`), in seconds.
    fn duration(&mut self, v: &Value<'_>, what: &str) -> Option<u64> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::String(s) => match parse_duration(s) {
                Ok(n) => Some(n),
                Err(e) => {
                    self.sink.error(at, format!("{what}: {e}"));
                    None
                }
            },
            other => {
                self.sink.error(
                    at,
                    format!(
                        "{what} must be a duration such as \"10m\", found {}",
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// `limit = { count = N, per = "1m", scope = "session" }`.
    pub(super) fn limit(&mut self, v: &Value<'_>, label: &str) -> Option<Limit> {
        let DeValue::Table(t) = v.get_ref() else {
            self.sink.error(
                v.span().start,
                format!(
                    "{label}: `limit` must be a table such as {{ count = 20, per = \"1m\" }}, found {}",
                    v.get_ref().type_str()
                ),
            );
            return None;
        };
        let (mut count, mut per, mut scope) = (None, None, Some(Scope::Session));
        for (k, val) in t.iter() {
            match k.get_ref().as_ref() {
                "count" => {
                    count = self
                        .positive(val, &format!("{label}: `limit.count`"))
                        .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
                }
                "per" => per = self.duration(val, &format!("{label}: `limit.per`")),
                "scope" => {
                    scope = match val.get_ref() {
                        DeValue::String(s) => Scope::parse(s).or_else(|| {
                            let hint = super::suggest(s, &Scope::NAMES)
                                .map(|h| format!("; did you mean `{h}`?"))
                                .unwrap_or_default();
                            self.sink.error(
                                val.span().start,
                                format!("{label}: `limit.scope`: unknown scope `{s}`: use session, agent or machine{hint}"),
                            );
                            None
                        }),
                        other => {
                            self.sink.error(
                                val.span().start,
                                format!(
                                    "{label}: `limit.scope` must be a string, found {}",
                                    other.type_str()
                                ),
                            );
                            None
                        }
                    }
                }
                other => self.unknown_key(k, other, &format!("key in {label}: `limit`:"), LIMIT_KEYS),
            }
        }
        let at = v.span().start;
        if count.is_none() && t.get("count").is_none() {
            self.sink.error(
                at,
                format!("{label}: `limit` needs `count` (how many calls)"),
            );
        }
        if per.is_none() && t.get("per").is_none() {
            self.sink.error(
                at,
                format!("{label}: `limit` needs `per` (the window, e.g. \"10m\")"),
            );
        }
        Some(Limit {
            count: count?,
            per_secs: per?,
            scope: scope?,
        })
    }

    /// `budget = { calls = N }` and/or `{ usd = X }` (a `hookd run` run's
    /// cost): the calls and the dollars.
    pub(super) fn budget(&mut self, v: &Value<'_>, label: &str) -> (Option<u64>, Option<f64>) {
        let DeValue::Table(t) = v.get_ref() else {
            self.sink.error(
                v.span().start,
                format!(
                    "{label}: `budget` must be a table such as {{ calls = 500 }}, found {}",
                    v.get_ref().type_str()
                ),
            );
            return (None, None);
        };
        let mut calls = None;
        let mut usd = None;
        for (k, val) in t.iter() {
            match k.get_ref().as_ref() {
                "calls" => calls = self.positive(val, &format!("{label}: `budget.calls`")),
                "usd" => usd = self.dollars(val, &format!("{label}: `budget.usd`")),
                other => {
                    self.unknown_key(k, other, &format!("key in {label}: `budget`:"), BUDGET_KEYS)
                }
            }
        }
        if t.get("calls").is_none() && t.get("usd").is_none() {
            self.sink.error(
                v.span().start,
                format!(
                    "{label}: `budget` needs `calls` (how many tool calls) or `usd` (a run's cost in dollars)"
                ),
            );
        }
        (calls, usd)
    }

    /// A positive number of dollars (`2`, `0.5`).
    fn dollars(&mut self, v: &Value<'_>, what: &str) -> Option<f64> {
        let at = v.span().start;
        let n = match v.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .ok()
                .map(|n| n as f64),
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            other => {
                self.sink.error(
                    at,
                    format!(
                        "{what} must be a number of dollars such as 2.5, found {}",
                        other.type_str()
                    ),
                );
                return None;
            }
        };
        match n {
            Some(n) if n.is_finite() && n > 0.0 => Some(n),
            _ => {
                self.sink
                    .error(at, format!("{what} must be more than 0 dollars"));
                None
            }
        }
    }

    /// `after`: tool patterns, as in `tool`.
    pub(super) fn after(&mut self, v: &Value<'_>, label: &str) -> Vec<AfterPattern> {
        let mut out = Vec::new();
        for (s, span) in self.strings(v, label, "after") {
            match tool::parse(&s) {
                Ok(p) => {
                    if let Some(w) = p.warning {
                        self.sink.warn(span, format!("{label}: `after`: {w}"));
                    }
                    out.push(AfterPattern::new(s, p.pattern));
                }
                Err(e) => self.sink.error(span, format!("{label}: `after`: {e}")),
            }
        }
        out
    }

    /// `within`: how long a taint lasts.
    pub(super) fn within(&mut self, v: &Value<'_>, label: &str) -> Option<u64> {
        self.duration(v, &format!("{label}: `within`"))
    }
}
