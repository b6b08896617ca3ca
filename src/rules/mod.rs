//! The rule engine: placeholder with the interface the engine (issue #3)
//! implements; it is replaced wholesale when the engine lands.

use std::fmt;
use std::path::Path;

/// One compiled, immutable rule set.
#[derive(Debug, Default)]
pub struct RuleSet {
    generation: u64,
}

/// What a rule set is evaluated against.
pub struct Query<'a> {
    /// `hook_event_name`.
    pub event: &'a str,
    /// The raw hook input.
    pub input: &'a serde_json::Value,
    /// The project root.
    pub project_dir: Option<&'a Path>,
    /// The user's home, for `~/` paths.
    pub home: Option<&'a Path>,
}

/// A rule's action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// allow
    Allow,
    /// deny
    Deny,
    /// ask
    Ask,
    /// add context only
    Context,
}

/// The result of evaluating a rule set.
#[derive(Debug, Clone, Default)]
pub struct Evaluation {
    /// None = no opinion.
    pub action: Option<Action>,
    /// The deciding rules.
    pub rule_ids: Vec<String>,
    /// The deciding rule's reason.
    pub reason: Option<String>,
    /// From `context` rules.
    pub additional_context: Vec<String>,
    /// The generation judged under.
    pub generation: u64,
}

/// A rules file that could not be loaded.
#[derive(Debug)]
pub struct RulesError(String);

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RulesError {}

impl RuleSet {
    /// The embedded defaults.
    pub fn defaults() -> RuleSet {
        RuleSet::default()
    }
    /// Reads and compiles a file.
    pub fn load(path: &Path) -> Result<RuleSet, RulesError> {
        std::fs::read_to_string(path)
            .map(|_| RuleSet::default())
            .map_err(|e| RulesError(format!("{}: {e}", path.display())))
    }
    /// This set's generation.
    pub fn generation(&self) -> u64 {
        self.generation
    }
    /// The same rules under another generation.
    pub fn with_generation(self, generation: u64) -> RuleSet {
        RuleSet { generation }
    }
    /// Number of rules.
    pub fn len(&self) -> usize {
        0
    }
    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        true
    }
    /// Judges one event.
    pub fn evaluate(&self, _q: &Query<'_>) -> Evaluation {
        Evaluation {
            generation: self.generation,
            ..Evaluation::default()
        }
    }
}
