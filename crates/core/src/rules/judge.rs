//! The judge: a rule whose verdict a model gives.
//!
//! ```toml
//! [[rule]]
//! id = "destructive-outside"
//! action = "judge"
//! tool = "Bash"
//! prompt = "Is this command destructive outside the project?"
//! provider = "anthropic"        # a `[providers]` entry of the daemon's config
//! model = "claude-haiku-4-5"    # optional: the provider's cheap model
//! timeout = "3s"                # optional, default 5s, within the hook's deadline
//! on_error = "ask"              # ask (default), deny or none
//! ```
//!
//! A judge rule matches like a deny rule (its `tool` and `when` decide
//! whether the model is asked at all). The core stays pure: the daemon asks
//! the model for every matching judge rule and passes the answers in as
//! [`Query::judgements`](super::Query::judgements); evaluation only reads
//! them. The model's verdict is
//!
//! - `deny` or `ask`: the rule decides so, with the model's one-line reason;
//! - `allow`: the rule does not apply. A judge only tightens: it cannot allow
//!   what the other rules would not.
//!
//! A matching judge rule with no answer (the model failed, timed out, said
//! something that is not the required JSON, or the day's budget is spent)
//! falls back to `on_error`: `ask` or `deny` with a reason saying the judge
//! was unavailable, or `none` (the rule does not apply).
//!
//! Every answer a decision used is recorded in its decision line, so
//! `hookd replay` re-judges with the recorded answer.

use super::Action;
use serde::{Deserialize, Serialize};

/// What a judge rule does when the model gives no verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnError {
    Ask,
    Deny,
    None,
}

impl OnError {
    /// Parse `on_error`.
    pub fn parse(s: &str) -> Option<OnError> {
        Some(match s {
            "ask" => OnError::Ask,
            "deny" => OnError::Deny,
            "none" => OnError::None,
            _ => return None,
        })
    }
}

/// Default time a judge may take.
pub const DEFAULT_TIMEOUT_MS: u64 = 5_000;

/// A judge rule's question, as compiled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JudgeSpec {
    pub prompt: String,
    /// A `[providers]` name; `None`: the daemon's default provider.
    pub provider: Option<String>,
    pub model: Option<String>,
    pub timeout_ms: u64,
    pub on_error: OnError,
}

/// A judge rule that matched an input: the question the daemon asks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JudgeHit {
    /// The rule's qualified id (`project:<id>` for a project rule).
    pub rule: String,
    /// Its question.
    pub spec: JudgeSpec,
}

/// The model's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JudgeAction {
    Allow,
    Deny,
    Ask,
}

/// One judge answer, a fact of the decision line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgeVerdict {
    /// The judge rule's id (`project:<id>` for a project rule).
    pub rule: String,
    pub verdict: JudgeAction,
    /// The model's one-line reason.
    pub reason: String,
    /// The answer came from the daemon's cache.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cached: bool,
}

impl JudgeVerdict {
    /// Parse a model's reply strictly: one JSON object
    /// `{"verdict": "allow"|"deny"|"ask", "reason": "…"}` (surrounding
    /// whitespace allowed), a non-empty one-line reason, nothing else.
    pub fn parse_reply(rule: &str, text: &str) -> Result<JudgeVerdict, String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Reply {
            verdict: JudgeAction,
            reason: String,
        }
        let r: Reply = serde_json::from_str(text.trim())
            .map_err(|e| format!("the judge's reply is not the required JSON: {e}"))?;
        let reason = r.reason.trim();
        if reason.is_empty() || reason.contains('\n') {
            return Err("the judge's reason must be one non-empty line".to_string());
        }
        Ok(JudgeVerdict {
            rule: rule.to_string(),
            verdict: r.verdict,
            reason: reason.to_string(),
            cached: false,
        })
    }
}

/// The action and reason a matching judge rule `rule` contributes, given the
/// answers; `None`: the rule does not apply.
pub(crate) fn resolve(
    spec: &JudgeSpec,
    rule: &str,
    answers: &[JudgeVerdict],
) -> Option<(Action, String)> {
    match answers.iter().find(|v| v.rule == rule) {
        Some(v) => match v.verdict {
            JudgeAction::Allow => None,
            JudgeAction::Deny => Some((Action::Deny, v.reason.clone())),
            JudgeAction::Ask => Some((Action::Ask, v.reason.clone())),
        },
        None => {
            let why = format!("the judge of rule {rule} gave no verdict");
            match spec.on_error {
                OnError::Ask => Some((Action::Ask, why)),
                OnError::Deny => Some((Action::Deny, why)),
                OnError::None => None,
            }
        }
    }
}
