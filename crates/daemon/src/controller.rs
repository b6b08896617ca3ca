//! The controller: turns an event into a judgement, under one rules generation.
//!
//! A judgement here comes from the rules alone and is immediate (pure, no
//! waiting); waiting for a client on `ask` is the caller's business
//! ([`super::hook`]), where the deadline and shutdown races live.
//!
//! Rules come in two layers (see [`crate::rules`]): the user file (or the
//! embedded defaults), swapped whole on reload, and per-project files
//! (`<project>/.claude/hookd.toml`). A project file with errors keeps its
//! last good version (or none) and is reported once per change.
//!
//! A hook never touches a project's file itself (a stat on a slow or hung
//! filesystem would stall every hook on that worker):
//! - the **first** hook of a project the daemon has not seen (or has
//!   forgotten) waits while its file is read on a blocking thread, so it is
//!   judged with the project's rules, as every later hook is; hooks of the
//!   same project arriving meanwhile wait for that same load;
//! - after that hooks use the cached rules, and [`ProjectLayers::refresh`]
//!   (on a blocking thread, when [`super::watch`] sees a known project's
//!   rules directory change) stats every known file and reloads the changed
//!   ones: an edit applies at once;
//! - projects unused for [`PROJECT_IDLE`] are forgotten (when a new one
//!   comes, or a file changes: no timer wakes an idle daemon for it).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::decision::{Answer, Source, Verdict};
use crate::event::Event;
use crate::protocol::log::{DecidingLayer, MatchedRule};
use crate::rules::{project_rules_path, Layers, Query, RuleSet};

/// A project whose hooks stop for this long is forgotten (its next hook
/// loads its file again).
pub const PROJECT_IDLE: Duration = Duration::from_secs(15 * 60);

/// What the controller concluded about one event.
#[derive(Debug, Clone)]
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
    /// The rule of the session grant that decided, or that the client's
    /// answer was remembered as.
    pub grant_rule: Option<String>,
    /// How a client's answer was remembered (`session`, `always`).
    pub remembered: Option<crate::protocol::Remember>,
    /// The enforced policy source whose ask or deny the rules' answer is:
    /// no session grant may loosen it.
    pub enforced_by: Option<String>,
    /// The project layer, when one took part: where its rules are is
    /// worked out from it when the decision is recorded
    /// ([`matched_rules`]), so that a pending event holds one pointer
    /// rather than its rules' provenance.
    pub project_rules: Option<Arc<RuleSet>>,
    /// An ask the rules escalate to the team (`escalate = "team"`).
    pub escalate: Option<crate::rules::Escalation>,
    /// The session facts the judgement read, for the decision line
    /// (boxed, as `judging` and `signals`: rarely there, and every waiting
    /// hook holds a judgement).
    pub facts: Option<Box<crate::rules::facts::SessionFacts>>,
    /// The judge rules that matched, and the answers used (boxed: every
    /// waiting hook holds a judgement).
    pub judging: Option<Box<JudgeFacts>>,
    /// The `[signals]` values the judgement read, for the decision line.
    pub signals: Option<Box<crate::rules::signal::Signals>>,
}

/// A judgement's judge rules (`action = "judge"`): the questions, and the
/// model's answers the judgement used (for the decision line).
#[derive(Debug, Clone, Default)]
pub struct JudgeFacts {
    /// The judge rules that matched.
    pub asked: Vec<crate::rules::judge::JudgeHit>,
    /// The answers (a question with none fell back to its `on_error`).
    pub answers: Vec<crate::rules::judge::JudgeVerdict>,
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
            grant_rule: None,
            remembered: None,
            enforced_by: None,
            project_rules: None,
            escalate: None,
            facts: None,
            judging: None,
            signals: None,
        }
    }
}

use super::watch::{fingerprint, Fingerprint};

/// One project's layer.
struct ProjectEntry {
    dir: PathBuf,
    /// True once the first load has finished: the project's first hooks
    /// wait for it.
    loaded: watch::Sender<bool>,
    /// `loaded`, for the hooks that come after: one atomic load instead of
    /// the channel's lock.
    ready: AtomicBool,
    /// The file as last read, and its last good rules. Locked only to read
    /// or swap them, never across IO.
    state: Mutex<ProjectState>,
    /// When a hook last used it, in seconds since [`ProjectLayers::epoch`]
    /// (written only when the second changes: every hook of the project
    /// reads it, on every core).
    last_used_s: AtomicU64,
}

#[derive(Default)]
struct ProjectState {
    /// `None` until a load has checked the file; then the file's
    /// fingerprint (`None` inside when there is no file).
    seen: Option<Fingerprint>,
    rules: Option<Arc<RuleSet>>,
}

/// The project layers: a cache that hooks read without IO, filled and
/// refreshed on blocking threads.
pub struct ProjectLayers {
    entries: Mutex<HashMap<PathBuf, Arc<ProjectEntry>>>,
    next_generation: AtomicU64,
    epoch: Instant,
    /// Project files stat'ed (by loads and refreshes), for `status`.
    checks: AtomicU64,
    /// Project files read and compiled, for `status`.
    loads: AtomicU64,
    /// Told whenever a project becomes known or is forgotten: the watcher
    /// then watches its directory, or stops.
    known: watch::Sender<()>,
}

impl ProjectLayers {
    fn new() -> ProjectLayers {
        ProjectLayers {
            entries: Mutex::new(HashMap::new()),
            next_generation: AtomicU64::new(1),
            epoch: Instant::now(),
            checks: AtomicU64::new(0),
            loads: AtomicU64::new(0),
            known: watch::Sender::new(()),
        }
    }

    /// Changes whenever the set of known projects does (see
    /// [`ProjectLayers::files`]).
    pub fn subscribe(&self) -> watch::Receiver<()> {
        self.known.subscribe()
    }

    /// The rules files of the projects known now.
    pub fn files(&self) -> Vec<PathBuf> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.keys().map(|dir| project_rules_path(dir)).collect()
    }

    /// Forgets the projects unused for [`PROJECT_IDLE`]; true if any was.
    fn forget_idle(&self, entries: &mut HashMap<PathBuf, Arc<ProjectEntry>>) -> bool {
        let (now, idle, before) = (self.now_s(), PROJECT_IDLE.as_secs(), entries.len());
        entries.retain(|_, e| now.saturating_sub(e.last_used_s.load(Ordering::Relaxed)) < idle);
        entries.len() != before
    }

    fn now_s(&self) -> u64 {
        self.epoch.elapsed().as_secs()
    }

    /// The layer for project `dir`: at once when known, else once its file
    /// has been read on a blocking thread.
    async fn get(self: &Arc<Self>, dir: &Path) -> Option<Arc<RuleSet>> {
        let entry = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            match entries.get(dir) {
                Some(entry) => entry.clone(),
                None => {
                    self.forget_idle(&mut entries);
                    let entry = Arc::new(ProjectEntry {
                        dir: dir.to_path_buf(),
                        loaded: watch::Sender::new(false),
                        ready: AtomicBool::new(false),
                        state: Mutex::new(ProjectState::default()),
                        last_used_s: AtomicU64::new(self.now_s()),
                    });
                    entries.insert(dir.to_path_buf(), entry.clone());
                    self.known.send_replace(());
                    // Exactly one first load per project, whatever happens
                    // to the hooks waiting for it (their deadline may pass
                    // on a hung filesystem: they get their fallback, and no
                    // further blocking thread is spent on the same file).
                    let (layers, loading) = (self.clone(), entry.clone());
                    tokio::spawn(async move {
                        let loaded = loading.clone();
                        // A load that panicked leaves the state unseen: the
                        // next refresh tries again.
                        let _ = tokio::task::spawn_blocking(move || layers.check(&loading)).await;
                        loaded.ready.store(true, Ordering::Release);
                        loaded.loaded.send_replace(true);
                    });
                    entry
                }
            }
        };
        let now = self.now_s();
        if entry.last_used_s.load(Ordering::Relaxed) != now {
            entry.last_used_s.store(now, Ordering::Relaxed);
        }
        if !entry.ready.load(Ordering::Acquire) {
            // Fails only if the sender is gone, and `entry` holds it.
            let _ = entry.loaded.subscribe().wait_for(|loaded| *loaded).await;
        }
        let state = entry.state.lock().unwrap_or_else(|e| e.into_inner());
        state.rules.clone()
    }

    /// Stats `entry`'s file and reloads it if it changed. Blocking: call it
    /// on a blocking thread.
    fn check(&self, entry: &ProjectEntry) {
        let path = project_rules_path(&entry.dir);
        self.checks.fetch_add(1, Ordering::Relaxed);
        let now = fingerprint(&path);
        let seen = entry.state.lock().unwrap_or_else(|e| e.into_inner()).seen;
        if seen == Some(now) {
            return;
        }
        let rules = match now {
            None => Ok(None),
            Some(_) => {
                self.loads.fetch_add(1, Ordering::Relaxed);
                RuleSet::load_project(&path).map(Some)
            }
        };
        let mut state = entry.state.lock().unwrap_or_else(|e| e.into_inner());
        state.seen = Some(now);
        match rules {
            Ok(Some(rules)) => {
                let generation = self.next_generation.fetch_add(1, Ordering::Relaxed);
                tracing::info!(path = %path.display(), generation, rules = rules.len(), "project rules loaded");
                state.rules = Some(Arc::new(rules.with_generation(generation)));
            }
            Ok(None) => {
                if state.rules.take().is_some() {
                    tracing::info!(path = %path.display(), "project rules file removed");
                }
            }
            Err(e) => {
                tracing::error!(path = %path.display(), error = %e, "project rules refused; keeping the last good ones");
            }
        }
    }

    /// Forgets the projects unused for [`PROJECT_IDLE`], then checks every
    /// other known project's file and reloads the changed ones. Blocking:
    /// call it on a blocking thread (the daemon does, when a rules
    /// directory changes, see [`super::watch`]).
    pub fn refresh(&self) {
        let known: Vec<Arc<ProjectEntry>> = {
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if self.forget_idle(&mut entries) {
                self.known.send_replace(());
            }
            entries.values().cloned().collect()
        };
        for entry in known {
            // A project still on its first load is its first hook's.
            if entry.ready.load(Ordering::Acquire) {
                self.check(&entry);
            }
        }
    }

    /// Whether no project is known (nothing to refresh).
    pub fn is_empty(&self) -> bool {
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// `{known, checks, loads}`, for `status`.
    pub fn status(&self) -> crate::protocol::ProjectsStatus {
        crate::protocol::ProjectsStatus {
            known: self.entries.lock().unwrap_or_else(|e| e.into_inner()).len() as u64,
            checks: self.checks.load(Ordering::Relaxed),
            loads: self.loads.load(Ordering::Relaxed),
        }
    }
}

/// Owns the current rules generation and the project layers.
pub struct Controller {
    rules: RwLock<Arc<RuleSet>>,
    projects: Arc<ProjectLayers>,
    permissive: bool,
    home: Option<PathBuf>,
    /// Consecutive blocks per stop chain, for rules' `max_blocks`.
    stops: super::stops::StopChains,
    /// Session facts for rules with `limit`, `budget`, `after`.
    facts: super::session_facts::FactsStore,
    /// `[signals]` values per project.
    signals: Arc<super::signals::SignalCache>,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("generation", &self.rules().generation())
            .field("permissive", &self.permissive)
            .finish()
    }
}

impl Controller {
    /// A controller starting with `rules` as generation 1.
    pub fn new(rules: RuleSet, permissive: bool) -> Controller {
        Controller {
            rules: RwLock::new(Arc::new(rules.with_generation(1))),
            projects: Arc::new(ProjectLayers::new()),
            permissive,
            home: std::env::var_os("HOME").map(PathBuf::from),
            stops: Default::default(),
            facts: Default::default(),
            signals: Default::default(),
        }
    }

    /// True in permissive mode: verdicts are logged, "no opinion" is sent.
    pub fn permissive(&self) -> bool {
        self.permissive
    }

    /// The current generation. Events take this snapshot when they start and
    /// keep it, so a reload never changes a judgement already under way.
    pub fn rules(&self) -> Arc<RuleSet> {
        self.rules.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Installs `rules` as the next generation and returns its number.
    /// The generation it replaces is freed when the last hook judging under
    /// it is done (here, when none is), after the lock is released: hooks
    /// reading the rules never wait for a rule set to be freed.
    pub fn replace_rules(&self, rules: RuleSet) -> u64 {
        let mut current = self.rules.write().unwrap_or_else(|e| e.into_inner());
        let generation = current.generation() + 1;
        let replaced =
            std::mem::replace(&mut *current, Arc::new(rules.with_generation(generation)));
        drop(current);
        drop(replaced);
        generation
    }

    /// The project layers (for the refresh task and `status`).
    pub fn projects(&self) -> &Arc<ProjectLayers> {
        &self.projects
    }

    /// The stop chains' counts: the hook path records what it answered.
    pub fn stop_chains(&self) -> &super::stops::StopChains {
        &self.stops
    }

    /// Whether answers are sent (false in permissive mode).
    pub fn enforced(&self) -> bool {
        !self.permissive
    }

    /// The layers `event` is judged under: `rules` (the user layer
    /// snapshot) and the event's project layer. No IO on the caller's
    /// thread; a project's first hook waits for its file to be read on a
    /// blocking thread.
    pub async fn layers(&self, event: &Event, rules: Arc<RuleSet>) -> Layers {
        let layers = Layers::new(rules);
        match event.project_dir() {
            Some(dir) => match self.projects.get(&dir).await {
                Some(project) => layers.with_project(dir, project),
                None => layers,
            },
            None => layers,
        }
    }

    /// Judges `event` under `layers` (from [`Controller::layers`]). Pure
    /// computation: its cost grows with the input. Judge rules that matched
    /// are judged by their `on_error` here; their questions are in
    /// [`Judgement::judging`], for the caller to ask a model and
    /// [`Controller::judge_again`] with the answers.
    pub fn judge(&self, event: &Event, layers: &Layers) -> Judgement {
        self.judge_with(event, layers, None)
    }

    /// [`Controller::judge`] with the `[signals]` values of the event's
    /// project (from [`Controller::signals_for`]).
    pub fn judge_with(
        &self,
        event: &Event,
        layers: &Layers,
        signals: Option<crate::rules::signal::Signals>,
    ) -> Judgement {
        let facts = self.gather_facts(event, layers);
        let evaluation = self.evaluate(event, layers, facts.as_ref(), &[], signals.as_ref());
        if facts.is_some() {
            self.record_facts(event, &evaluation.limited);
        }
        let judging = (!evaluation.judges.is_empty()).then(|| {
            Box::new(JudgeFacts {
                asked: evaluation.judges.clone(),
                answers: Vec::new(),
            })
        });
        let mut judgement =
            self.judgement_of(event, layers, evaluation, facts.map(Box::new), judging);
        judgement.signals = signals.map(Box::new);
        judgement
    }

    /// The `[signals]` values for `event`'s project (see
    /// [`super::signals::SignalCache::values`]); `None` without `[signals]`
    /// or without a project directory.
    pub async fn signals_for(
        &self,
        event: &Event,
        config: &std::collections::BTreeMap<String, super::signals::SignalConfig>,
    ) -> Option<crate::rules::signal::Signals> {
        if config.is_empty() {
            return None;
        }
        let dir = event.project_dir()?;
        Some(self.signals.values(config, &dir).await)
    }

    /// `status.signals`.
    pub fn signals_status(&self) -> crate::protocol::status::SignalsStatus {
        self.signals.status()
    }

    /// `first` (from [`Controller::judge`]) judged again with the judge
    /// rules' `answers`: the same facts, counted once.
    pub fn judge_again(
        &self,
        event: &Event,
        layers: &Layers,
        first: Judgement,
        answers: Vec<crate::rules::judge::JudgeVerdict>,
    ) -> Judgement {
        let evaluation = self.evaluate(
            event,
            layers,
            first.facts.as_deref(),
            &answers,
            first.signals.as_deref(),
        );
        let asked = first.judging.map(|j| j.asked).unwrap_or_default();
        let mut judgement = self.judgement_of(
            event,
            layers,
            evaluation,
            first.facts,
            Some(Box::new(JudgeFacts { asked, answers })),
        );
        judgement.signals = first.signals;
        judgement
    }

    fn evaluate(
        &self,
        event: &Event,
        layers: &Layers,
        facts: Option<&crate::rules::facts::SessionFacts>,
        answers: &[crate::rules::judge::JudgeVerdict],
        signals: Option<&crate::rules::signal::Signals>,
    ) -> crate::rules::Evaluation {
        let project_dir = event.project_dir();
        // The Claude-shaped inputs the rules judge, as the agent's dialect
        // gave them when the event was made: one, or one per file a Codex
        // patch touches, per URL a Gemini fetch reads.
        crate::rules::evaluate(
            layers,
            &event.rule_inputs(),
            &Query {
                event: event.rule_event(),
                agent: event.agent(),
                input: &event.raw,
                project_dir: project_dir.as_deref(),
                home: self.home.as_deref(),
                stop_blocks: self.stops.blocks(event.kind(), event.fields()),
                facts,
                judgements: answers,
                signals,
            },
        )
    }

    fn judgement_of(
        &self,
        event: &Event,
        layers: &Layers,
        mut evaluation: crate::rules::Evaluation,
        facts: Option<Box<crate::rules::facts::SessionFacts>>,
        judging: Option<Box<JudgeFacts>>,
    ) -> Judgement {
        if !event.resolved.decision_point {
            evaluation = evaluation.context_only();
        }
        let answer = evaluation.answer();
        let decided_by_rule =
            answer.verdict != Verdict::NoOpinion || answer.additional_context.is_some();
        let enforced_by = evaluation.enforced_by;
        let escalate = evaluation.escalate;
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
            grant_rule: None,
            remembered: None,
            enforced_by,
            project_rules: layers.project.as_ref().map(|p| p.rules.clone()),
            escalate,
            facts,
            judging: judging.filter(|_| event.resolved.decision_point),
            signals: None,
        }
    }

    /// The cost so far of the `hookd run` run whose session is `session`
    /// (from its adapter's `usage` or result), for `budget = { usd = X }`.
    pub fn note_run_cost(&self, session: &str, cost_usd: f64) {
        self.facts
            .record_cost(session, cost_usd, crate::session_facts::now_ms());
    }

    /// What the daemon knows of `session` now (its calls and taint; no
    /// limit counts): the `session_facts` request's answer.
    pub fn session_facts(&self, session: &str) -> crate::rules::facts::SessionFacts {
        self.facts
            .gather(session, "", crate::session_facts::now_ms(), &[])
    }

    /// The session facts for `event`, when some rule reads them.
    fn gather_facts(
        &self,
        event: &Event,
        layers: &Layers,
    ) -> Option<crate::rules::facts::SessionFacts> {
        if !layers.uses_facts() {
            return None;
        }
        let session = event.fields().session_id.unwrap_or("");
        let now_ms = crate::session_facts::now_ms();
        let facts = self.facts.gather(
            session,
            event.agent().as_str(),
            now_ms,
            &layers.limited_rules(),
        );
        // Note a tool run that taints the session for later calls.
        if event.kind() == crate::agent::claude::HookEventKind::PostToolUse {
            if let Some(tool) = event.tool_name() {
                let taint = crate::session_facts::taint_of(tool, event.tool_input(), now_ms);
                let project = event.project_dir();
                if layers.taints(&taint, self.home.as_deref(), project.as_deref()) {
                    self.facts.record_taint(session, taint);
                }
            }
        }
        Some(facts)
    }

    /// Counts `event`'s call towards the budget and the limits it matched.
    fn record_facts(&self, event: &Event, limited: &[crate::rules::facts::LimitedHit]) {
        let session = event.fields().session_id.unwrap_or("");
        let tool_call = event.kind() == crate::agent::claude::HookEventKind::PreToolUse;
        self.facts.record_call(
            session,
            event.agent().as_str(),
            crate::session_facts::now_ms(),
            tool_call,
            limited,
        );
    }
}

/// Where each of `rule_ids` (as in a judgement: `project:<id>` for the
/// project layer's, `<name>:<id>` for a policy layer's) is in `user`, its
/// policy layers and `project`, and what it says: a decision's provenance.
pub fn matched_rules(
    user: &RuleSet,
    project: Option<&RuleSet>,
    rule_ids: &[String],
) -> Vec<MatchedRule> {
    rule_ids
        .iter()
        .filter_map(|id| matched_rule(user, project, id))
        .collect()
}

fn matched_rule(user: &RuleSet, project: Option<&RuleSet>, id: &str) -> Option<MatchedRule> {
    let (set, own_id, layer) = match id.split_once(':') {
        Some(("project", own)) => (project?, own, DecidingLayer::Project),
        // A policy layer's rule: `<name>:<id>`, in one of its files.
        Some((name, own)) if user.policy().iter().any(|l| l.name == name) => {
            let layer = user.policy().iter().find(|l| l.name == name)?;
            let file = layer.files.iter().find(|f| f.rule(own).is_some())?;
            (file, own, DecidingLayer::Policy(name.to_string()))
        }
        _ if user.is_defaults() => (user, id, DecidingLayer::Defaults),
        _ => (user, id, DecidingLayer::User),
    };
    let rule = set.rule(own_id)?;
    Some(MatchedRule {
        id: id.to_string(),
        file: if layer == DecidingLayer::Defaults {
            "defaults".to_string()
        } else {
            set.origin().display().to_string()
        },
        layer,
        action: rule.action,
        line: rule.line as u32,
        reason: rule.reason.map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event_in(project: &Path, command: &str) -> Event {
        let input = serde_json::json!({
            "hook_event_name": "PreToolUse",
            "cwd": project,
            "tool_name": "Bash",
            "tool_input": {"command": command},
        });
        Event::new(Default::default(), input, Default::default())
    }

    const DENY_MAKE: &str =
        "[[rule]]\nid = \"no-make\"\naction = \"deny\"\ntool = \"Bash(make:*)\"\n";

    #[tokio::test]
    async fn a_projects_first_hook_sees_its_rules_and_later_ones_do_no_io() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        std::fs::write(project_rules_path(dir.path()), DENY_MAKE).unwrap();
        let controller = Controller::new(RuleSet::defaults(), false);
        let judge = |c: &Controller, layers: &Layers, command: &str| {
            c.judge(&event_in(dir.path(), command), layers)
                .answer
                .verdict
        };
        let event = event_in(dir.path(), "make all");
        let layers = controller.layers(&event, controller.rules()).await;
        assert_eq!(
            judge(&controller, &layers, "make all"),
            Verdict::Deny,
            "the first hook waits for the file"
        );
        let projects = controller.projects();
        assert_eq!(
            (
                projects.checks.load(Ordering::Relaxed),
                projects.loads.load(Ordering::Relaxed)
            ),
            (1, 1)
        );
        for _ in 0..100 {
            controller.layers(&event, controller.rules()).await;
        }
        assert_eq!(
            projects.checks.load(Ordering::Relaxed),
            1,
            "hooks never stat the file"
        );

        // An edit is picked up by the refresh (on a blocking thread in the
        // daemon), not by hooks.
        std::fs::write(
            project_rules_path(dir.path()),
            DENY_MAKE.replace("make", "cargo"),
        )
        .unwrap();
        let layers = controller.layers(&event, controller.rules()).await;
        assert_eq!(
            judge(&controller, &layers, "make all"),
            Verdict::Deny,
            "cached until refreshed"
        );
        projects.refresh();
        let layers = controller.layers(&event, controller.rules()).await;
        assert_eq!(judge(&controller, &layers, "make all"), Verdict::NoOpinion);
        assert_eq!(judge(&controller, &layers, "cargo build"), Verdict::Deny);
        projects.refresh();
        assert_eq!(
            projects.loads.load(Ordering::Relaxed),
            2,
            "an unchanged file is not read again"
        );

        // A broken edit keeps the last good rules; a removed file drops them.
        std::fs::write(project_rules_path(dir.path()), "[[rule]]\nnope").unwrap();
        projects.refresh();
        let layers = controller.layers(&event, controller.rules()).await;
        assert_eq!(judge(&controller, &layers, "cargo build"), Verdict::Deny);
        std::fs::remove_file(project_rules_path(dir.path())).unwrap();
        projects.refresh();
        let layers = controller.layers(&event, controller.rules()).await;
        assert_eq!(
            judge(&controller, &layers, "cargo build"),
            Verdict::NoOpinion
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_first_hooks_of_a_project_share_one_load() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".claude")).unwrap();
        std::fs::write(project_rules_path(dir.path()), DENY_MAKE).unwrap();
        let controller = Arc::new(Controller::new(RuleSet::defaults(), false));
        let hooks: Vec<_> = (0..16)
            .map(|_| {
                let (controller, event) = (controller.clone(), event_in(dir.path(), "make"));
                tokio::spawn(async move {
                    let layers = controller.layers(&event, controller.rules()).await;
                    controller.judge(&event, &layers).answer.verdict
                })
            })
            .collect();
        for hook in hooks {
            assert_eq!(hook.await.unwrap(), Verdict::Deny);
        }
        let projects = controller.projects();
        assert_eq!(projects.loads.load(Ordering::Relaxed), 1);
        assert_eq!(projects.checks.load(Ordering::Relaxed), 1);
    }
}
