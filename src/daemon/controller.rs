//! The controller: turns an event into a judgement, under one rules generation.
//!
//! A judgement here comes from the rules alone and is immediate (pure, no
//! waiting); waiting for a client on `ask` is the caller's business
//! ([`super::hook`]), where the deadline and shutdown races live.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use crate::decision::{Answer, Source, Verdict};
use crate::event::Event;
use crate::rules::{Action, Query, RuleSet};

/// What the controller concluded about one event.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    /// The answer (what was, or in permissive mode would have been, sent).
    pub answer: Answer,
    /// Who decided.
    pub source: Source,
    /// Deciding rule ids.
    pub rule_ids: Vec<String>,
    /// Rules generation used.
    pub generation: u64,
    /// False in permissive mode: the answer was logged, not sent.
    pub enforced: bool,
}

impl Judgement {
    /// "No opinion" by default, under `generation`.
    pub fn default_for(generation: u64) -> Judgement {
        Judgement {
            answer: Answer::no_opinion(),
            source: Source::Default,
            rule_ids: Vec::new(),
            generation,
            enforced: true,
        }
    }
}

/// Owns the current rules generation.
#[derive(Debug)]
pub struct Controller {
    rules: RwLock<Arc<RuleSet>>,
    permissive: bool,
    home: Option<PathBuf>,
}

impl Controller {
    /// A controller starting with `rules` as generation 1.
    pub fn new(rules: RuleSet, permissive: bool) -> Controller {
        Controller {
            rules: RwLock::new(Arc::new(rules.with_generation(1))),
            permissive,
            home: std::env::var_os("HOME").map(PathBuf::from),
        }
    }

    /// The current generation. Events take this snapshot when they start and
    /// keep it, so a reload never changes a judgement already under way.
    pub fn rules(&self) -> Arc<RuleSet> {
        self.rules.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Installs `rules` as the next generation and returns its number.
    pub fn replace_rules(&self, rules: RuleSet) -> u64 {
        let mut current = self.rules.write().unwrap_or_else(|e| e.into_inner());
        let generation = current.generation() + 1;
        *current = Arc::new(rules.with_generation(generation));
        generation
    }

    /// Judges `event` under `rules`: pure, no waiting.
    pub fn judge(&self, event: &Event, rules: &RuleSet) -> Judgement {
        let project_dir = event.project_dir();
        let evaluation = rules.evaluate(&Query {
            event: event.name(),
            input: &event.raw,
            project_dir: project_dir.as_deref(),
            home: self.home.as_deref(),
        });
        let verdict = match evaluation.action {
            Some(Action::Allow) => Verdict::Allow,
            Some(Action::Deny) => Verdict::Deny,
            Some(Action::Ask) => Verdict::Ask,
            Some(Action::Context) | None => Verdict::NoOpinion,
        };
        let context = (!evaluation.additional_context.is_empty())
            .then(|| evaluation.additional_context.join("\n"));
        let decided_by_rule = verdict != Verdict::NoOpinion || context.is_some();
        Judgement {
            answer: Answer {
                verdict,
                reason: evaluation.reason,
                updated_input: None,
                additional_context: context,
            },
            source: if decided_by_rule {
                Source::Rule
            } else {
                Source::Default
            },
            rule_ids: evaluation.rule_ids,
            generation: evaluation.generation,
            enforced: !self.permissive,
        }
    }
}
