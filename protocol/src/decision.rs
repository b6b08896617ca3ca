//! Decisions: what hookd answers for an event, and who decided.
//!
//! Pure data; [`crate::agent::claude::output`] turns a decision into Claude Code's
//! exact output for the event.

use std::fmt;
use std::str::FromStr;

use serde_json::Value;
#[cfg(feature = "frames")]
use uuid::Uuid;

use std::sync::Arc;

/// The verdict on one event.
///
/// The same five verdicts serve every event; what "deny" means depends on the
/// event and is spelled out in one place, [`crate::agent::claude::output`]: on
/// PreToolUse it blocks the tool, on UserPromptSubmit it erases the prompt, on
/// Stop it refuses the stop (Claude keeps working), on PostToolUse it feeds the
/// reason back to Claude.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "frames", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "frames", serde(rename_all = "snake_case"))]
pub enum Verdict {
    /// Let it happen (on PreToolUse: skip the permission prompt).
    Allow,
    /// Stop it (block, refuse, decline), with a reason.
    Deny,
    /// Hand the question to Claude Code's own permission prompt.
    Ask,
    /// PreToolUse only: end a headless run with the call deferred.
    Defer,
    /// Say nothing: Claude Code's normal flow continues.
    #[default]
    #[cfg_attr(feature = "frames", serde(rename = "none"))]
    NoOpinion,
}

impl Verdict {
    /// Every verdict, for tables and golden tests.
    pub const ALL: [Verdict; 5] = [
        Verdict::Allow,
        Verdict::Deny,
        Verdict::Ask,
        Verdict::Defer,
        Verdict::NoOpinion,
    ];

    /// The wire spelling (`allow`, `deny`, `ask`, `defer`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Deny => "deny",
            Verdict::Ask => "ask",
            Verdict::Defer => "defer",
            Verdict::NoOpinion => "none",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Verdict {
    type Err = String;

    /// Accepts the wire spellings plus `block` (= deny) and `no-opinion`.
    fn from_str(s: &str) -> Result<Verdict, String> {
        Ok(match s {
            "allow" => Verdict::Allow,
            "deny" | "block" => Verdict::Deny,
            "ask" => Verdict::Ask,
            "defer" => Verdict::Defer,
            "none" | "no-opinion" | "no_opinion" => Verdict::NoOpinion,
            other => {
                return Err(format!(
                    "unknown verdict `{other}`: expected allow, deny, ask, defer or none"
                ))
            }
        })
    }
}

/// Who or what produced a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A rule matched (the rule ids are on the decision).
    Rule,
    /// A socket client decided; the client's name.
    Client(String),
    /// Nobody decided before the deadline; the event's fallback applied.
    Timeout,
    /// The event could not be judged (shutting down, bad input); fallback.
    Fallback,
    /// No rule matched: the default for the event (no opinion).
    Default,
    /// Not judged: a command hook's copy of a hook an agent-SDK run's
    /// adapter reports itself (or the SDK's PermissionRequest hook beside
    /// its `canUseTool`), answered "no opinion" at once; the original is
    /// judged. See the event's `copy_of`.
    Copy,
    /// Not judged: a synthetic event from `hookd doctor --probe`, answered
    /// with [`crate::agent::claude::probe::answer`].
    Probe,
    /// The person answered in Claude Code's own permission dialog while the
    /// event waited for a client: Claude abandoned the hook, and the daemon
    /// closed the pending event (verdict `none`; nobody reads the answer).
    Terminal,
    /// A session grant decided; the grant's id (the rule is the
    /// decision's `grant_rule`).
    Grant(String),
    /// A source this build does not know, as written: read from a newer
    /// daemon's log, never produced by this one.
    Unknown(String),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Rule => f.write_str("rule"),
            Source::Client(name) => write!(f, "client:{name}"),
            Source::Timeout => f.write_str("timeout"),
            Source::Fallback => f.write_str("fallback"),
            Source::Default => f.write_str("default"),
            Source::Copy => f.write_str("copy"),
            Source::Probe => f.write_str("probe"),
            Source::Terminal => f.write_str("terminal"),
            Source::Grant(id) => write!(f, "grant:{id}"),
            Source::Unknown(name) => f.write_str(name),
        }
    }
}

impl serde::Serialize for Source {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Source {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Source, D::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        Ok(match s.as_str() {
            "rule" => Source::Rule,
            "timeout" => Source::Timeout,
            "fallback" => Source::Fallback,
            "default" => Source::Default,
            "copy" => Source::Copy,
            "probe" => Source::Probe,
            "terminal" => Source::Terminal,
            other => match (other.strip_prefix("client:"), other.strip_prefix("grant:")) {
                (Some(name), _) => Source::Client(name.to_string()),
                (_, Some(id)) => Source::Grant(id.to_string()),
                _ => Source::Unknown(other.to_string()),
            },
        })
    }
}

/// The content of an answer: everything that shapes Claude Code's output.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "frames", derive(serde::Serialize, serde::Deserialize))]
pub struct Answer {
    /// The verdict.
    pub verdict: Verdict,
    /// Shown to the model (deny) or the user (ask).
    #[cfg_attr(
        feature = "frames",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub reason: Option<String>,
    /// A replacement for the whole tool input (PreToolUse, PermissionRequest)
    /// or the elicitation content (Elicitation accept).
    #[cfg_attr(
        feature = "frames",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub updated_input: Option<Value>,
    /// Text added to Claude's context, where the event allows it.
    #[cfg_attr(
        feature = "frames",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub additional_context: Option<String>,
}

impl Answer {
    /// An answer with just a verdict and an optional reason.
    pub fn new(verdict: Verdict, reason: Option<String>) -> Answer {
        Answer {
            verdict,
            reason,
            ..Answer::default()
        }
    }

    /// "No opinion".
    pub fn no_opinion() -> Answer {
        Answer::default()
    }
}

/// A decision on one event, as recorded in the log and sent to subscribers.
#[cfg(feature = "frames")]
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Decision {
    /// This decision's id (uuid v7).
    pub decision_id: Uuid,
    /// The event decided.
    pub event_id: Uuid,
    /// The agent-SDK run the event came from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// What was answered.
    #[serde(flatten)]
    pub answer: Answer,
    /// Who decided.
    pub source: Source,
    /// The deciding rule ids (empty unless `source` is `rule`).
    #[serde(default)]
    pub rule_ids: Vec<String>,
    /// The permission rule of the grant that decided (`source`
    /// `grant:<id>`), or the rule a client's answer was remembered as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_rule: Option<String>,
    /// How the client's answer was remembered (`session`, `always`);
    /// absent for `once` and for every other source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remembered: Option<Remember>,
    /// The rules generation the event was judged under.
    pub generation: u64,
    /// Time from receiving the event to deciding, in microseconds.
    pub latency_us: u64,
    /// Which layer decided (`user`, `project`, `grant`, `client`,
    /// `fallback`, …); absent in logs of daemons before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layer: Option<DecidingLayer>,
    /// Where each of `rule_ids` is (file and line) and what it says, in
    /// the same order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<MatchedRule>,
    /// The policy revision of the rules the event was judged under (see
    /// `crate::rules::Revision`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<Revision>,
    /// The project layer's own revision, when one took part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_revision: Option<Revision>,
    /// The session facts the judgement read (issue #25): present when a
    /// rule with `limit`, `budget` or `after` was considered, so a replay
    /// re-judges with them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<crate::facts::SessionFacts>,
    /// The answers of the judge rules (`action = "judge"`) that matched, as
    /// `{"rule", "verdict", "reason", "cached"}` (the core's
    /// `rules::judge::JudgeVerdict`): `hookd replay` re-judges with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub judgements: Vec<serde_json::Value>,
    /// The project's known signal values (`$signal.NAME`) the rules saw.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub signals: std::collections::BTreeMap<String, String>,
}

/// How long a client's answer holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "frames", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "frames", serde(rename_all = "snake_case"))]
pub enum Remember {
    /// This event only.
    #[default]
    Once,
    /// A grant: later events of the session that match the rule get the
    /// same verdict without asking, until the grant expires.
    Session,
    /// The rule is appended to the user rules file.
    Always,
}

impl Remember {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Remember::Once => "once",
            Remember::Session => "session",
            Remember::Always => "always",
        }
    }

    /// Whether this is the default (`once`), left off the wire.
    pub fn is_once(&self) -> bool {
        *self == Remember::Once
    }
}

/// Which layer of the policy decided, or who did when no rule did: a
/// decision's `layer`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DecidingLayer {
    /// The embedded default rules (there is no user rules file).
    Defaults,
    /// The user rules file.
    User,
    /// The project's `.claude/hookd.toml`.
    Project,
    /// A session grant.
    Grant,
    /// A socket client (a person at `hookd approve`, a bot).
    Client,
    /// The person, in Claude Code's own permission dialog.
    Terminal,
    /// Nobody could decide in time (or the input could not be judged): the
    /// event's fallback.
    Fallback,
    /// No rule decided: Claude Code's own flow goes on.
    None,
    /// Not judged (a copy of a run's hook, a doctor's probe).
    Unjudged,
    /// A `[policy] sources` layer, by its name (the names above are
    /// reserved), or a layer a newer daemon names, as written.
    Policy(String),
}

impl DecidingLayer {
    /// The wire spelling.
    pub fn as_str(&self) -> &str {
        match self {
            DecidingLayer::Defaults => "defaults",
            DecidingLayer::User => "user",
            DecidingLayer::Project => "project",
            DecidingLayer::Grant => "grant",
            DecidingLayer::Client => "client",
            DecidingLayer::Terminal => "terminal",
            DecidingLayer::Fallback => "fallback",
            DecidingLayer::None => "none",
            DecidingLayer::Unjudged => "unjudged",
            DecidingLayer::Policy(name) => name,
        }
    }

    /// The layer behind `source`; for [`Source::Rule`], the layer of the
    /// first deciding rule (`rules`), as rules are listed user layer first.
    pub fn of(source: &Source, rules: &[MatchedRule]) -> DecidingLayer {
        match source {
            Source::Rule => rules
                .first()
                .map_or(DecidingLayer::User, |rule| rule.layer.clone()),
            Source::Client(_) => DecidingLayer::Client,
            Source::Grant(_) => DecidingLayer::Grant,
            Source::Terminal => DecidingLayer::Terminal,
            Source::Timeout | Source::Fallback => DecidingLayer::Fallback,
            Source::Default => DecidingLayer::None,
            Source::Copy | Source::Probe => DecidingLayer::Unjudged,
            Source::Unknown(name) => DecidingLayer::Policy(name.clone()),
        }
    }
}

impl std::fmt::Display for DecidingLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for DecidingLayer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for DecidingLayer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DecidingLayer, D::Error> {
        let name = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
        Ok(match name.as_ref() {
            "defaults" => DecidingLayer::Defaults,
            "user" => DecidingLayer::User,
            "project" => DecidingLayer::Project,
            "grant" => DecidingLayer::Grant,
            "client" => DecidingLayer::Client,
            "terminal" => DecidingLayer::Terminal,
            "fallback" => DecidingLayer::Fallback,
            "none" => DecidingLayer::None,
            "unjudged" => DecidingLayer::Unjudged,
            other => DecidingLayer::Policy(other.to_string()),
        })
    }
}

/// Where a deciding rule of a decision is and what it says: enough to
/// explain the decision from its log line alone, whatever the rules files
/// say by then.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "frames", derive(serde::Serialize, serde::Deserialize))]
pub struct MatchedRule {
    /// The rule's id as in `rule_ids` (`project:<id>` for a project rule).
    pub id: String,
    /// `defaults`, `user` or `project`.
    pub layer: DecidingLayer,
    /// What the rule does (`allow`, `deny`, `ask`, `context`).
    pub action: Action,
    /// The rules file, or `defaults` for the embedded defaults.
    pub file: String,
    /// The line of its `[[rule]]` header (in `hookd rules defaults` for the
    /// embedded defaults).
    pub line: u32,
    /// The rule's own `reason`.
    #[cfg_attr(
        feature = "frames",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub reason: Option<String>,
}

impl MatchedRule {
    /// `file:line`.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// What a rule does when it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "frames", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "frames", serde(rename_all = "lowercase"))]
pub enum Action {
    /// Let the tool run without asking (only if no deny or ask rule matches).
    Allow,
    /// Refuse; beats every other action.
    Deny,
    /// Put the decision in front of the user; beats allow.
    Ask,
    /// Decide nothing, add the rule's `reason` as `additionalContext`.
    Context,
}

impl Action {
    /// The name used in rules files and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Allow => "allow",
            Action::Deny => "deny",
            Action::Ask => "ask",
            Action::Context => "context",
        }
    }

    pub fn parse(s: &str) -> Option<Action> {
        Some(match s {
            "allow" => Action::Allow,
            "deny" => Action::Deny,
            "ask" => Action::Ask,
            "context" => Action::Context,
            _ => return None,
        })
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A policy revision (see `hookd_core::rules::revision`), `sha256:` and 32 hex digits. Cheap to clone: every
/// decision carries the one of its rules.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Revision(Arc<str>);

impl Revision {
    /// A revision as written (read from a log line or a status): kept as
    /// is, whatever its form.
    pub fn from_written(text: &str) -> Revision {
        Revision(text.into())
    }

    /// The text, `sha256:…`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Revision({})", self.0)
    }
}

impl serde::Serialize for Revision {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Revision {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Revision, D::Error> {
        let text = <std::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(d)?;
        Ok(Revision::from_written(&text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_and_sources_round_trip() {
        for v in Verdict::ALL {
            assert_eq!(v.as_str().parse::<Verdict>().unwrap(), v);
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
        assert_eq!("block".parse::<Verdict>().unwrap(), Verdict::Deny);
        assert!("maybe".parse::<Verdict>().unwrap_err().contains("maybe"));
        for s in [
            Source::Rule,
            Source::Client("phone".into()),
            Source::Timeout,
            Source::Copy,
            Source::Probe,
            Source::Terminal,
            Source::Grant("bcdef".into()),
        ] {
            let json = serde_json::to_string(&s).unwrap();
            assert_eq!(serde_json::from_str::<Source>(&json).unwrap(), s);
        }
        assert_eq!(Source::Client("a:b".into()).to_string(), "client:a:b");
    }
}
