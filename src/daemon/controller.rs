//! The controller: turns an event into a judgement, under one rules generation.
//!
//! A judgement here comes from the rules alone and is immediate (pure, no
//! waiting); waiting for a client on `ask` is the caller's business
//! ([`super::hook`]), where the deadline and shutdown races live.
//!
//! Rules come in two layers (see [`crate::rules`]): the user file (or the
//! embedded defaults), swapped whole on reload, and per-project files
//! (`<project>/.claude/hookd.toml`), loaded when an event from that project
//! first arrives and reloaded when the file changes. A project file with
//! errors keeps its last good version (or none) and is reported once per
//! change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use crate::decision::{Answer, Source, Verdict};
use crate::event::Event;
use crate::rules::{project_rules_path, Action, Evaluation, Layers, Query, RuleSet};

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

/// The answer an evaluation gives: the one mapping from rule actions to
/// verdicts, shared by the daemon and `hookd replay`. Context rules add
/// `additionalContext` whatever the verdict.
pub fn answer_of(evaluation: &Evaluation) -> Answer {
    let verdict = match evaluation.action {
        Some(Action::Allow) => Verdict::Allow,
        Some(Action::Deny) => Verdict::Deny,
        Some(Action::Ask) => Verdict::Ask,
        Some(Action::Context) | None => Verdict::NoOpinion,
    };
    Answer {
        verdict,
        reason: evaluation.reason.clone(),
        updated_input: None,
        additional_context: (!evaluation.additional_context.is_empty())
            .then(|| evaluation.additional_context.join("\n")),
    }
}

/// A project's rules file as last seen.
struct ProjectEntry {
    /// (mtime, size, inode) of the file, or `None` when there is none.
    fingerprint: Option<(i64, i64, u64, u64)>,
    /// The last good rules, if any.
    rules: Option<Arc<RuleSet>>,
}

/// Owns the current rules generation and the project layers.
pub struct Controller {
    rules: RwLock<Arc<RuleSet>>,
    projects: Mutex<HashMap<PathBuf, ProjectEntry>>,
    next_project_generation: std::sync::atomic::AtomicU64,
    permissive: bool,
    home: Option<PathBuf>,
    /// Consecutive blocks per stop chain, for rules' `max_blocks`.
    stops: super::stops::StopChains,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("generation", &self.rules().generation())
            .field("permissive", &self.permissive)
            .finish()
    }
}

fn fingerprint(path: &Path) -> Option<(i64, i64, u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.mtime(), m.mtime_nsec(), m.size(), m.ino()))
}

impl Controller {
    /// A controller starting with `rules` as generation 1.
    pub fn new(rules: RuleSet, permissive: bool) -> Controller {
        Controller {
            rules: RwLock::new(Arc::new(rules.with_generation(1))),
            projects: Mutex::new(HashMap::new()),
            next_project_generation: std::sync::atomic::AtomicU64::new(1),
            permissive,
            home: std::env::var_os("HOME").map(PathBuf::from),
            stops: Default::default(),
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

    /// The project layer for `dir`, (re)loaded if its file changed.
    fn project_rules(&self, dir: &Path) -> Option<Arc<RuleSet>> {
        let path = project_rules_path(dir);
        let now = fingerprint(&path);
        let mut projects = self.projects.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = projects.get(dir) {
            if entry.fingerprint == now {
                return entry.rules.clone();
            }
        }
        let previous = projects.get(dir).and_then(|e| e.rules.clone());
        let rules = match now {
            None => None,
            Some(_) => match RuleSet::load_project(&path) {
                Ok(rules) => {
                    let generation = self
                        .next_project_generation
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tracing::info!(path = %path.display(), generation, rules = rules.len(), "project rules loaded");
                    Some(Arc::new(rules.with_generation(generation)))
                }
                Err(e) => {
                    tracing::error!(path = %path.display(), error = %e, "project rules refused; keeping the last good ones");
                    previous
                }
            },
        };
        projects.insert(
            dir.to_path_buf(),
            ProjectEntry {
                fingerprint: now,
                rules: rules.clone(),
            },
        );
        rules
    }

    /// The stop chains' counts: the hook path records what it answered.
    pub fn stop_chains(&self) -> &super::stops::StopChains {
        &self.stops
    }

    /// Judges `event` under `rules` (the user layer snapshot) and the
    /// event's project layer.
    pub fn judge(&self, event: &Event, rules: &Arc<RuleSet>) -> Judgement {
        let project_dir = event.project_dir();
        let mut layers = Layers::new(rules.clone());
        if let Some(dir) = project_dir.as_deref() {
            if let Some(project) = self.project_rules(dir) {
                layers = layers.with_project(dir, project);
            }
        }
        let evaluation = layers.evaluate(&Query {
            event: event.name(),
            input: &event.raw,
            project_dir: project_dir.as_deref(),
            home: self.home.as_deref(),
            stop_blocks: self.stops.blocks(event.kind(), &event.raw),
        });
        let answer = answer_of(&evaluation);
        let decided_by_rule =
            answer.verdict != Verdict::NoOpinion || answer.additional_context.is_some();
        let mut rule_ids = evaluation.rule_ids;
        rule_ids.extend(evaluation.context_rule_ids);
        Judgement {
            answer,
            source: if decided_by_rule {
                Source::Rule
            } else {
                Source::Default
            },
            rule_ids,
            generation: evaluation.generation,
            enforced: !self.permissive,
        }
    }
}
