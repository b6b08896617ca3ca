//! `hookd replay LOG --rules FILE`: re-judge every recorded decision point of
//! an event log under other rules and report the decisions that would change.
//!
//! The recorded event's input is judged exactly as the daemon judges a live
//! one ([`Evaluation::answer`](crate::rules::Evaluation::answer) maps the evaluation), with
//! its project directory's `.claude/hookd.toml` if that file exists now.
//! Inputs in the log are redacted, so a rule matching a secret's text cannot
//! match in a replay. Old decisions made by a client, a timeout or a fallback
//! are compared by their verdict too; the report says who made them.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use uuid::Uuid;

use crate::agent::Agent;
use crate::protocol::log::{LogRecord, LoggedEvent};
use crate::protocol::Harness;
use crate::rules::{project_rules_path, Layers, Query, RuleSet};

/// One decision that would change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The event id.
    pub event_id: String,
    /// When it was received.
    pub received_at: String,
    /// The event kind.
    pub kind: String,
    /// The tool, for tool events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What the input was about (command, path, …).
    pub summary: String,
    /// The recorded verdict.
    pub old: String,
    /// Who made the recorded decision.
    pub old_source: String,
    /// The recorded deciding rules.
    pub old_rule_ids: Vec<String>,
    /// The verdict under the new rules.
    pub new: String,
    /// The new deciding rules.
    pub new_rule_ids: Vec<String>,
    /// The new reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_reason: Option<String>,
}

/// What a replay found.
#[derive(Debug, Default, Serialize)]
pub struct ReplayReport {
    /// Decision points judged again.
    pub judged: usize,
    /// Those whose verdict would change.
    pub changes: Vec<Change>,
    /// Lines that could not be read (torn or foreign).
    pub skipped_lines: usize,
}

impl std::fmt::Display for ReplayReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for c in &self.changes {
            let rules = |ids: &[String]| {
                if ids.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", ids.join(","))
                }
            };
            writeln!(
                f,
                "{}  {} {} {}  {} ({}){} → {}{}{}",
                c.event_id,
                c.kind,
                c.tool.as_deref().unwrap_or(""),
                c.summary,
                c.old,
                c.old_source,
                rules(&c.old_rule_ids),
                c.new,
                rules(&c.new_rule_ids),
                c.new_reason
                    .as_deref()
                    .map(|r| format!("  {r}"))
                    .unwrap_or_default(),
            )?;
        }
        write!(
            f,
            "{} decision points re-judged, {} would change",
            self.judged,
            self.changes.len()
        )?;
        if self.skipped_lines > 0 {
            write!(f, " ({} unreadable lines skipped)", self.skipped_lines)?;
        }
        writeln!(f)
    }
}

/// Replays the log at `log` under `rules`, with the signal values each
/// decision line recorded.
pub fn replay(
    log: &Path,
    rules: Arc<RuleSet>,
    home: Option<&Path>,
) -> std::io::Result<ReplayReport> {
    replay_with(log, rules, home, None)
}

/// The `[signals]` values of a project directory, now: what `hookd replay
/// --rerun-signals` judges with instead of the recorded ones.
pub type RerunSignals<'a> = &'a mut dyn FnMut(&Path) -> crate::rules::signal::Signals;

/// [`replay`], but with `rerun` given every decision is judged with the
/// signal values it returns for the event's project (none, for an event
/// with no project) instead of the values its decision line recorded.
pub fn replay_with(
    log: &Path,
    rules: Arc<RuleSet>,
    home: Option<&Path>,
    mut rerun: Option<RerunSignals<'_>>,
) -> std::io::Result<ReplayReport> {
    let file = std::fs::File::open(log)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", log.display())))?;
    let mut report = ReplayReport::default();
    let mut events: HashMap<Uuid, LoggedEvent> = HashMap::new();
    let mut projects: HashMap<PathBuf, Option<Arc<RuleSet>>> = HashMap::new();
    for line in std::io::BufReader::new(file).split(b'\n') {
        let line = line?;
        let Ok(record) = LogRecord::parse(&line) else {
            report.skipped_lines += usize::from(!line.is_empty());
            continue;
        };
        let (event, logged) = match record {
            LogRecord::Event(event) => {
                let agent = agent_of(&event);
                if agent.is_decision_point(agent.event_kind(&event.kind)) {
                    events.insert(event.id, event);
                }
                continue;
            }
            LogRecord::Decision(logged) => match events.remove(&logged.decision.event_id) {
                Some(event) => (event, logged),
                None => continue,
            },
            // Nothing to judge in a run's own records.
            LogRecord::RunStart(_) | LogRecord::SdkMessage(_) | LogRecord::RunDone(_) => continue,
            // The log's own bookkeeping (its hash chain).
            LogRecord::ChainStart(_) | LogRecord::LogRepaired(_) => continue,
            // The coverage alarm's record: nothing to judge.
            LogRecord::UnjudgedToolCall(_) | LogRecord::Narration(_) => continue,
            LogRecord::Unknown => {
                report.skipped_lines += 1;
                continue;
            }
        };
        // Never judged live (copies of a run's hooks, doctor's probes):
        // nothing a rule could change.
        if !logged.was_judged() {
            continue;
        }
        report.judged += 1;
        let project_dir = event.project_dir().map(PathBuf::from);
        let mut layers = Layers::new(rules.clone());
        if let Some(dir) = &project_dir {
            let project = projects.entry(dir.clone()).or_insert_with(|| {
                RuleSet::load_project(&project_rules_path(dir))
                    .ok()
                    .map(Arc::new)
            });
            if let Some(project) = project {
                layers = layers.with_project(dir.clone(), project.clone());
            }
        }
        let agent = agent_of(&event);
        // The facts the live decision read: the judges' recorded answers
        // (never asked again) and the signal values.
        let judgements: Vec<crate::rules::judge::JudgeVerdict> = logged
            .decision
            .judgements
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        let signals = match (&mut rerun, &project_dir) {
            (Some(run), Some(dir)) => run(dir),
            (Some(_), None) => crate::rules::signal::Signals::new(),
            (None, _) => crate::rules::signal::Signals(logged.decision.signals.clone()),
        };
        let evaluation = crate::rules::evaluate(
            &layers,
            &agent.rule_inputs(&event.input),
            &Query {
                event: event.mapped_kind.as_deref().unwrap_or(&event.kind),
                agent,
                input: &event.input,
                project_dir: project_dir.as_deref(),
                home,
                // A Stop chain is not recounted: under other rules it would
                // not be the same chain. `stop_hook_active` alone means
                // "blocked once".
                stop_blocks: 0,
                facts: logged.decision.facts.as_ref(),
                judgements: &judgements,
                signals: Some(&signals),
            },
        );
        let answer = evaluation.answer();
        let old = logged.decision.answer.verdict;
        if answer.verdict != old {
            report.changes.push(Change {
                event_id: event.id.to_string(),
                summary: crate::tail::summary(&event.input),
                received_at: event.received_at,
                kind: event.kind,
                tool: event.tool,
                old: old.as_str().to_string(),
                old_source: logged.decision.source.to_string(),
                old_rule_ids: logged.decision.rule_ids,
                new: answer.verdict.as_str().to_string(),
                new_rule_ids: evaluation.rule_ids,
                new_reason: answer.reason,
            });
        }
    }
    Ok(report)
}

/// The agent of a logged event, from its `harness` (Claude Code's when
/// absent or unknown).
fn agent_of(event: &LoggedEvent) -> Agent {
    serde_json::from_value::<Harness>(serde_json::Value::String(event.harness.clone()))
        .map_or(Agent::ClaudeCode, Harness::agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_probes_are_not_judged_again() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        // Event ids by name: uuid v7s, as the daemon writes them.
        let ids: HashMap<&str, Uuid> = ["judged", "copy", "probe"]
            .into_iter()
            .map(|name| (name, crate::event::new_id()))
            .collect();
        let event = |name: &str| {
            serde_json::json!({"type": "event", "id": ids[name], "received_at": "2026-11-22T10:00:00Z",
                "harness": "claude-code", "kind": "PreToolUse", "tool": "Bash",
                "input": {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "rm -rf /"}}})
        };
        let decision = |name: &str, source: &str| {
            serde_json::json!({"type": "decision", "decision_id": crate::event::new_id(),
                               "event_id": ids[name], "verdict": "none", "source": source,
                               "generation": 1, "latency_us": 5})
        };
        let lines = [
            event("judged"),
            decision("judged", "default"),
            event("copy"),
            decision("copy", "copy"),
            event("probe"),
            decision("probe", "probe"),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&log, text).unwrap();
        let report = replay(&log, Arc::new(RuleSet::defaults()), None).unwrap();
        assert_eq!(report.judged, 1);
        let changed: Vec<&str> = report.changes.iter().map(|c| c.event_id.as_str()).collect();
        assert_eq!(changed, [ids["judged"].to_string()]);
    }
}
