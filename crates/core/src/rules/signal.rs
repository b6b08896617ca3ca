//! Signals: facts about a session's project that rules read in `when`.
//!
//! `[signals.NAME]` in the daemon's config names a command (for example
//! `["git", "branch", "--show-current"]`) that the daemon runs in the
//! session's project directory, off the hook path, and caches per project.
//! Rules test its last value with a condition on the field `$signal.NAME`:
//!
//! ```toml
//! [[rule]]
//! id = "no-push-on-main"
//! action = "deny"
//! tool = "Bash(git push*)"
//! when = [{ field = "$signal.branch", equals = "main" }]
//! ```
//!
//! The value is the command's standard output, trimmed. A signal the daemon
//! has no value for yet (the first hook in a project, a command that failed
//! or timed out) is *unknown*: it is absent from [`Signals`], and a condition
//! on it behaves as on a missing field — it matches nothing except
//! `exists = false` (and so `not` of anything). The evaluation never waits
//! for a signal. The values a decision read are facts in its decision line,
//! so `hookd replay` judges with the same values.

use std::collections::BTreeMap;

/// The known signal values of one project, by signal name.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Signals(pub BTreeMap<String, String>);

impl Signals {
    /// No value known.
    pub fn new() -> Signals {
        Signals::default()
    }

    /// Set a signal's value.
    pub fn with(mut self, name: &str, value: &str) -> Signals {
        self.0.insert(name.to_string(), value.to_string());
        self
    }

    /// A signal's value, `None` when unknown.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// True when no value is known.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The prefix of signal fields in `when` conditions.
pub const FIELD_PREFIX: &str = "$signal.";
