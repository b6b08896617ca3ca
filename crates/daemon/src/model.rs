//! A small client of the Anthropic Messages API, for the daemon's own
//! questions to a model: the judge ([`crate::judge`]) and the narrator
//! ([`crate::narrator`]).
//!
//! One request, one answer: `POST {base_url}/v1/messages` with a system
//! prompt and one user message, no tools, no streaming; the reply's text
//! blocks joined, and its token usage. The endpoint and key are a
//! `[providers.NAME]` entry's ([`crate::providers`]): `anthropic`,
//! `custom` and the hosted Anthropic-compatible kinds; `claude-max` (a
//! Claude Code login, no key) cannot be asked directly.
//!
//! The HTTP client is blocking ([`crate::outbound`]): [`ask`] runs it on a
//! blocking thread, bounded by the timeout twice over (the client's own
//! global timeout, and the awaiting side's), so a hung endpoint never holds
//! a hook past its deadline, and never an async worker at all.

use std::time::Duration;

use serde_json::{json, Value};

use crate::providers::{Auth, Provider, ProviderKind};

/// The model asked when nothing names one: a cheap one.
pub const DEFAULT_MODEL: &str = "claude-haiku-4-5";

/// Anthropic's own endpoint, for providers that name none.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// The API version header every request carries.
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Where requests go and how they are signed: a provider, its key read
/// when the endpoint is made.
#[derive(Clone)]
pub struct Endpoint {
    /// The provider's name, for errors.
    pub provider: String,
    /// `…/v1/messages` is appended.
    pub base_url: String,
    key: String,
    auth: Auth,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the key.
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .finish()
    }
}

impl Endpoint {
    /// The endpoint of `provider`, its key read now from its source.
    pub fn of(provider: &Provider) -> Result<Endpoint, String> {
        if provider.kind == ProviderKind::ClaudeMax {
            return Err(format!(
                "[providers.{}]: kind \"claude-max\" is a Claude Code login and cannot be asked \
                 directly; give the judge or narrator a provider with a key (kind \"anthropic\" \
                 or \"custom\")",
                provider.name
            ));
        }
        let key = provider.key_now()?.unwrap_or_default();
        Ok(Endpoint {
            provider: provider.name.clone(),
            base_url: provider
                .base_url
                .clone()
                .unwrap_or_else(|| ANTHROPIC_BASE_URL.to_string()),
            key,
            auth: provider.auth,
        })
    }
}

/// One question.
#[derive(Debug, Clone)]
pub struct Request {
    pub model: String,
    pub system: String,
    pub user: String,
    pub max_tokens: u32,
}

/// The model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The text blocks, joined.
    pub text: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// Why a question got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    /// No answer within the time allowed.
    #[error("the model did not answer within {0:?}")]
    Timeout(Duration),
    /// The endpoint could not be reached, or the connection failed.
    #[error("cannot reach {url}: {why}")]
    Transport { url: String, why: String },
    /// The endpoint answered with an error status.
    #[error("{url} answered HTTP {status}: {message}")]
    Status {
        url: String,
        status: u16,
        message: String,
    },
    /// A 2xx answer that is not a Messages API reply.
    #[error("the reply is not a Messages API answer: {0}")]
    Shape(String),
}

impl ModelError {
    /// A short word for counters and logs: `timeout`, `transport`,
    /// `status`, `shape`.
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::Timeout(_) => "timeout",
            ModelError::Transport { .. } => "transport",
            ModelError::Status { .. } => "status",
            ModelError::Shape(_) => "shape",
        }
    }
}

/// Asks `request` of `endpoint` on a blocking thread, giving up after
/// `timeout`.
pub async fn ask(
    endpoint: Endpoint,
    request: Request,
    timeout: Duration,
) -> Result<Reply, ModelError> {
    let call = tokio::task::spawn_blocking(move || call(&endpoint, &request, timeout));
    match tokio::time::timeout(timeout, call).await {
        Ok(Ok(reply)) => reply,
        Ok(Err(join)) => Err(ModelError::Transport {
            url: String::new(),
            why: format!("the request's thread ended: {join}"),
        }),
        Err(_) => Err(ModelError::Timeout(timeout)),
    }
}

/// Asks `request` of `endpoint`, blocking, for at most `timeout`.
pub fn call(
    endpoint: &Endpoint,
    request: &Request,
    timeout: Duration,
) -> Result<Reply, ModelError> {
    let url = format!("{}/v1/messages", endpoint.base_url.trim_end_matches('/'));
    let body = json!({
        "model": request.model,
        "max_tokens": request.max_tokens,
        "system": request.system,
        "messages": [{"role": "user", "content": request.user}],
    });
    let agent = crate::outbound::agent(timeout);
    let post = agent
        .post(&url)
        .header("anthropic-version", ANTHROPIC_VERSION)
        .header("content-type", "application/json");
    let post = match endpoint.auth {
        Auth::ApiKey => post.header("x-api-key", &endpoint.key),
        Auth::Bearer => post.header("authorization", &format!("Bearer {}", endpoint.key)),
    };
    let mut response = post.send(body.to_string()).map_err(|e| match e {
        ureq::Error::Timeout(_) => ModelError::Timeout(timeout),
        e => ModelError::Transport {
            url: url.clone(),
            why: e.to_string(),
        },
    })?;
    let status = response.status().as_u16();
    let text = response
        .body_mut()
        .with_config()
        .limit(1024 * 1024)
        .read_to_string()
        .map_err(|e| match e {
            ureq::Error::Timeout(_) => ModelError::Timeout(timeout),
            e => ModelError::Transport {
                url: url.clone(),
                why: e.to_string(),
            },
        })?;
    if !(200..300).contains(&status) {
        return Err(ModelError::Status {
            url,
            status,
            message: error_message(&text),
        });
    }
    parse_reply(&text)
}

/// The message of an error body (`{"error": {"message": …}}`), else its
/// first 200 characters.
fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| body.chars().take(200).collect())
}

/// A Messages API reply's text and usage.
pub fn parse_reply(body: &str) -> Result<Reply, ModelError> {
    let v: Value =
        serde_json::from_str(body).map_err(|e| ModelError::Shape(format!("not JSON: {e}")))?;
    let content = v["content"]
        .as_array()
        .ok_or_else(|| ModelError::Shape("no `content` array".into()))?;
    // Text blocks are the ones with a `text` (thinking blocks have
    // `thinking`, tool calls `input`).
    let text: String = content.iter().filter_map(|b| b["text"].as_str()).collect();
    if text.is_empty() {
        return Err(ModelError::Shape("no text in `content`".into()));
    }
    let tokens = |k: &str| v["usage"][k].as_u64().unwrap_or(0);
    Ok(Reply {
        text,
        input_tokens: tokens("input_tokens"),
        output_tokens: tokens("output_tokens"),
    })
}

/// The JSON object of a model's text: the text itself, or the inside of
/// one Markdown code fence around it (models add them unasked).
pub fn unfenced(text: &str) -> &str {
    let t = text.trim();
    match t
        .strip_prefix("```")
        .and_then(|rest| rest.strip_suffix("```"))
    {
        Some(inner) => {
            let inner = inner.strip_prefix("json").unwrap_or(inner);
            inner.trim()
        }
        None => t,
    }
}

/// Prices, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prices {
    /// Input tokens.
    pub input: f64,
    /// Output tokens.
    pub output: f64,
}

impl Default for Prices {
    /// Claude Haiku 4.5's: $1 in, $5 out.
    fn default() -> Prices {
        Prices {
            input: 1.0,
            output: 5.0,
        }
    }
}

impl Prices {
    /// What `reply` cost.
    pub fn cost(&self, reply: &Reply) -> f64 {
        (reply.input_tokens as f64 * self.input + reply.output_tokens as f64 * self.output) / 1e6
    }
}

/// One feature's use of its model per UTC day (the judge's, the
/// narrator's): counts that start again each day, and the day's bounds.
#[derive(Default)]
pub struct DailyUsage {
    inner: std::sync::Mutex<Day>,
}

#[derive(Default)]
struct Day {
    /// Days since the epoch these counts are of; 0: never used.
    day: u64,
    usage: crate::protocol::status::ModelUsage,
}

impl Day {
    fn roll(&mut self, now: std::time::SystemTime) {
        let day = crate::time::unix_millis(now) as u64 / 86_400_000;
        if day != self.day {
            *self = Day {
                day,
                usage: crate::protocol::status::ModelUsage {
                    day: crate::time::rfc3339(now)[..10].to_string(),
                    ..Default::default()
                },
            };
        }
    }
}

impl DailyUsage {
    /// Updates today's counts.
    pub fn count(
        &self,
        now: std::time::SystemTime,
        f: impl FnOnce(&mut crate::protocol::status::ModelUsage),
    ) {
        let mut day = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        day.roll(now);
        f(&mut day.usage);
    }

    /// Reserves one call, or says why the day's budget allows none.
    pub fn reserve(
        &self,
        now: std::time::SystemTime,
        max_calls: u64,
        max_cost_usd: f64,
    ) -> Result<(), String> {
        let mut day = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        day.roll(now);
        let u = &mut day.usage;
        if u.calls >= max_calls {
            u.over_budget += 1;
            return Err(format!("{} of {max_calls} calls today", u.calls));
        }
        if u.cost_usd >= max_cost_usd {
            u.over_budget += 1;
            return Err(format!("${:.4} of ${max_cost_usd:.4} today", u.cost_usd));
        }
        u.calls += 1;
        Ok(())
    }

    /// Counts a reply's tokens and cost.
    pub fn spent(&self, now: std::time::SystemTime, reply: &Reply, prices: Prices) {
        self.count(now, |u| {
            u.input_tokens += reply.input_tokens;
            u.output_tokens += reply.output_tokens;
            u.cost_usd += prices.cost(reply);
        });
    }

    /// Today's use with its bounds; `None` if it was never used.
    pub fn today(
        &self,
        now: std::time::SystemTime,
        max_calls: u64,
        max_cost_usd: f64,
    ) -> Option<crate::protocol::status::ModelUsage> {
        let mut day = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if day.day == 0 {
            return None;
        }
        day.roll(now);
        Some(crate::protocol::status::ModelUsage {
            max_calls: Some(max_calls),
            max_cost_usd: Some(max_cost_usd),
            ..day.usage.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_gives_its_text_and_usage_or_says_what_is_wrong() {
        let r = parse_reply(
            r#"{"content":[{"type":"text","text":"{\"verdict\":"},{"type":"text","text":"\"deny\"}"}],"usage":{"input_tokens":12,"output_tokens":3}}"#,
        )
        .unwrap();
        assert_eq!(r.text, r#"{"verdict":"deny"}"#);
        assert_eq!((r.input_tokens, r.output_tokens), (12, 3));
        let e = parse_reply(r#"{"content":[{"type":"tool_use"}]}"#).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the reply is not a Messages API answer: no text in `content`"
        );
        assert!(parse_reply("<html>")
            .unwrap_err()
            .to_string()
            .contains("not JSON"));
        assert_eq!(
            error_message(r#"{"type":"error","error":{"message":"overloaded"}}"#),
            "overloaded"
        );
    }

    #[test]
    fn fences_are_taken_off() {
        assert_eq!(unfenced(" {\"a\":1} "), "{\"a\":1}");
        assert_eq!(unfenced("```json\n{\"a\":1}\n```"), "{\"a\":1}");
        assert_eq!(unfenced("```\n{}\n```"), "{}");
        assert_eq!(unfenced("sure: {}"), "sure: {}");
    }

    #[test]
    fn a_day_is_bounded_in_calls_and_dollars_and_starts_again_the_next() {
        use std::time::{Duration, UNIX_EPOCH};
        let day1 = UNIX_EPOCH + Duration::from_secs(20_000 * 86_400 + 5);
        let u = DailyUsage::default();
        assert_eq!(u.today(day1, 2, 1.0), None);
        u.reserve(day1, 2, 1.0).unwrap();
        let pricey = Reply {
            text: String::new(),
            input_tokens: 1_000_000,
            output_tokens: 0,
        };
        u.spent(day1, &pricey, Prices::default());
        assert_eq!(
            u.reserve(day1, 2, 1.0).unwrap_err(),
            "$1.0000 of $1.0000 today"
        );
        let today = u.today(day1, 2, 1.0).unwrap();
        assert_eq!(
            (today.calls, today.over_budget, today.day.as_str()),
            (1, 1, "2024-10-04")
        );
        let day2 = day1 + Duration::from_secs(86_400);
        u.reserve(day2, 2, 1.0).unwrap();
        u.reserve(day2, 2, 1.0).unwrap();
        assert_eq!(u.reserve(day2, 2, 1.0).unwrap_err(), "2 of 2 calls today");
    }

    #[test]
    fn costs_follow_the_prices() {
        let r = Reply {
            text: String::new(),
            input_tokens: 1_000_000,
            output_tokens: 200_000,
        };
        assert!((Prices::default().cost(&r) - 2.0).abs() < 1e-9);
    }
}
