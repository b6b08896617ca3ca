//! `hookd rules test`: fixtures, each a recorded hook input and the verdict
//! the rules must give it.
//!
//! A fixture is a file `NAME.json` in the fixture directory:
//!
//! ```json
//! {
//!   "description": "force-pushing main is refused",
//!   "event": { "hook_event_name": "PreToolUse", "tool_name": "Bash",
//!              "tool_input": { "command": "git push --force origin main" },
//!              "cwd": "/home/dev/project", "session_id": "s1" },
//!   "project_dir": "/home/dev/project",
//!   "home": "/home/dev",
//!   "expect": { "verdict": "deny", "rule": "no-force-push-main" }
//! }
//! ```
//!
//! - `event` is the raw hook input, exactly as Claude Code sends it on stdin.
//! - `project_dir` (optional) stands for `CLAUDE_PROJECT_DIR`; without it the
//!   event's `cwd` is the project root.
//! - `home` (optional) is the home directory for `~/` patterns; without it
//!   `~` patterns cannot match, so fixtures stay independent of the machine.
//! - `expect.verdict` is `allow`, `deny`, `ask`, `context` or `none` (no opinion).
//! - `expect.rule` (optional) is a rule id that must be among the deciding
//!   rules, or a list that must be exactly the deciding rules.
//! - `description` (optional) is shown when the fixture fails.
//!
//! Other `.json`-less files are ignored; fixtures run in name order.

use super::{Action, Evaluation, Layers, Query, RuleSet};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The outcome of running a fixture directory. `Display`
/// (`crate::cli::rules`) lists each fixture
/// and ends with `N passed, M failed`; the alternate form (`{:#}`) marks
/// `ok` and `FAIL` with colour (escape codes the CLI strips where colour is
/// not allowed). `--json` is `{"results": [FixtureResult…], "passed": N,
/// "failed": M}`.
#[derive(Debug, Clone)]
pub struct FixtureReport {
    /// One entry per fixture, in name order.
    pub results: Vec<FixtureResult>,
}

/// One fixture's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct FixtureResult {
    /// The fixture file name without `.json`.
    pub name: String,
    /// Whether the verdict (and rule) matched the expectation.
    pub passed: bool,
    /// What went wrong, or the verdict for a pass.
    pub detail: String,
}

impl FixtureReport {
    /// Fixtures that passed.
    pub fn passed(&self) -> usize {
        self.results.iter().filter(|r| r.passed).count()
    }

    /// Fixtures that failed (including unreadable ones).
    pub fn failed(&self) -> usize {
        self.results.len() - self.passed()
    }

    /// True when nothing failed and at least one fixture ran.
    pub fn is_ok(&self) -> bool {
        self.failed() == 0 && !self.results.is_empty()
    }
}

impl Serialize for FixtureReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut report = s.serialize_struct("FixtureReport", 3)?;
        report.serialize_field("results", &self.results)?;
        report.serialize_field("passed", &self.passed())?;
        report.serialize_field("failed", &self.failed())?;
        report.end()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    #[serde(default)]
    description: Option<String>,
    event: serde_json::Value,
    #[serde(default)]
    project_dir: Option<PathBuf>,
    #[serde(default)]
    home: Option<PathBuf>,
    /// Session facts to judge with (`calls`, `counts`, `taint`, `now_ms`).
    #[serde(default)]
    facts: Option<super::facts::SessionFacts>,
    /// The judges' answers, as `{"rule-id": {"verdict": "deny", "reason": "…"}}`.
    #[serde(default)]
    judge: std::collections::BTreeMap<String, FixtureJudge>,
    /// Signal values, as `{"branch": "main"}`.
    #[serde(default)]
    signals: super::signal::Signals,
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FixtureJudge {
    verdict: super::judge::JudgeAction,
    reason: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    verdict: Verdict,
    #[serde(default)]
    rule: Option<RuleExpect>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "lowercase")]
enum Verdict {
    Allow,
    Deny,
    Ask,
    Context,
    None,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RuleExpect {
    One(String),
    Exactly(Vec<String>),
}

/// Run every `*.json` fixture in `dir` against `rules`.
pub fn run_fixtures(dir: &Path, rules: &RuleSet) -> FixtureReport {
    run_fixtures_layers(dir, &Layers::new(Arc::new(rules.clone())))
}

/// Run every `*.json` fixture in `dir` against user and project layers.
pub fn run_fixtures_layers(dir: &Path, layers: &Layers) -> FixtureReport {
    let mut results = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            results.push(FixtureResult {
                name: dir.display().to_string(),
                passed: false,
                detail: format!("cannot read fixture directory: {e}"),
            });
            return FixtureReport { results };
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        results.push(FixtureResult {
            name: dir.display().to_string(),
            passed: false,
            detail: "no *.json fixtures found".to_string(),
        });
    }
    for path in files {
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        let (passed, detail) = run_one(&path, layers);
        results.push(FixtureResult {
            name,
            passed,
            detail,
        });
    }
    FixtureReport { results }
}

fn run_one(path: &Path, layers: &Layers) -> (bool, String) {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return (false, format!("cannot read {}: {e}", path.display())),
    };
    let fx: Fixture = match serde_json::from_str(&text) {
        Ok(f) => f,
        Err(e) => return (false, format!("{}: not a fixture: {e}", path.display())),
    };
    if !fx.event.is_object() {
        return (
            false,
            format!(
                "{}: `event` must be a JSON object (the raw hook input)",
                path.display()
            ),
        );
    }
    let event = crate::agent::claude::InputFields::of(&fx.event)
        .event_name
        .unwrap_or("");
    let judgements: Vec<super::judge::JudgeVerdict> = fx
        .judge
        .iter()
        .map(|(rule, j)| super::judge::JudgeVerdict {
            rule: rule.clone(),
            verdict: j.verdict,
            reason: j.reason.clone(),
            cached: false,
        })
        .collect();
    let q = Query {
        event,
        agent: crate::agent::Agent::ClaudeCode,
        input: &fx.event,
        project_dir: fx.project_dir.as_deref(),
        home: fx.home.as_deref(),
        stop_blocks: 0,
        facts: fx.facts.as_ref(),
        judgements: &judgements,
        signals: Some(&fx.signals),
    };
    let ev = layers.evaluate(&q);
    let got = verdict_of(&ev);
    let mut problems = Vec::new();
    if got != fx.expect.verdict {
        problems.push(format!(
            "expected {}, got {}",
            verdict_name(fx.expect.verdict),
            describe(&ev)
        ));
    }
    match &fx.expect.rule {
        Some(RuleExpect::One(id)) if !ev.rule_ids.contains(id) && got == fx.expect.verdict => {
            problems.push(format!(
                "expected rule {id:?} among the deciding rules, got {}",
                describe(&ev)
            ));
        }
        Some(RuleExpect::Exactly(ids)) if got == fx.expect.verdict => {
            let mut want = ids.clone();
            want.sort();
            let mut have = ev.rule_ids.clone();
            have.sort();
            if want != have {
                problems.push(format!(
                    "expected exactly rules {ids:?}, got {}",
                    describe(&ev)
                ));
            }
        }
        _ => {}
    }
    if problems.is_empty() {
        (true, describe(&ev))
    } else {
        let mut d = problems.join("; ");
        if let Some(desc) = fx.description {
            d.push_str(&format!(" ({desc})"));
        }
        (false, d)
    }
}

fn verdict_of(ev: &Evaluation) -> Verdict {
    match ev.action {
        Some(Action::Allow) => Verdict::Allow,
        Some(Action::Deny) => Verdict::Deny,
        Some(Action::Ask) => Verdict::Ask,
        Some(Action::Context) => Verdict::Context,
        None => Verdict::None,
    }
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Allow => "allow",
        Verdict::Deny => "deny",
        Verdict::Ask => "ask",
        Verdict::Context => "context",
        Verdict::None => "none",
    }
}

fn describe(ev: &Evaluation) -> String {
    match ev.action {
        Some(a) => format!("{a} by [{}]", ev.rule_ids.join(", ")),
        None => "none (no opinion)".to_string(),
    }
}

impl fmt::Display for FixtureReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (good, bad) = match f.alternate() {
            true => (
                anstyle::AnsiColor::Green.on_default(),
                anstyle::AnsiColor::Red.on_default().bold(),
            ),
            false => (anstyle::Style::new(), anstyle::Style::new()),
        };
        for r in &self.results {
            if r.passed {
                writeln!(f, "{good}ok{good:#}   {}: {}", r.name, r.detail)?;
            } else {
                writeln!(f, "{bad}FAIL{bad:#} {}: {}", r.name, r.detail)?;
            }
        }
        write!(f, "{} passed, {} failed", self.passed(), self.failed())
    }
}
