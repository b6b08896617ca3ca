//! `hookd explain DECISION_ID`: why a logged decision was made, from the
//! log alone — its event, the verdict, who decided (source and layer), the
//! deciding rules with their file, line and reason as they were then, the
//! policy revision (and whether the rules in effect now still have it) and
//! the latency.

use std::fmt;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Serialize;

use super::output::{print_json, style, Stdout};
use super::Outcome;
use crate::daemon::{load_rules, RulesSource};
use crate::protocol::log::{LogRecord, LoggedDecision, LoggedEvent};
use crate::rules::{project_rules_path, Revision, RuleSet};

use super::args::{log_path, rules_source};

/// `--json`'s shape: the two log lines and what was worked out from them.
#[derive(Debug, Serialize)]
pub struct Explained {
    /// The decision line.
    pub decision: LoggedDecision,
    /// Where it is, `file:line`.
    pub found_at: String,
    /// Its event's line, when the log still has it.
    pub event: Option<LoggedEvent>,
    /// One line saying what the event's input was about.
    pub summary: Option<String>,
    /// The revision of the rules in effect now (the daemon's rules file,
    /// else the defaults, or `--rules`); `None` if they cannot be read.
    pub current_revision: Option<Revision>,
    /// Whether the decision's revision is the current one (`None` when
    /// either is unknown).
    pub same_revision: Option<bool>,
    /// Whether the decision's project revision is that of the project's
    /// file now (`None` when there was no project layer).
    pub same_project_revision: Option<bool>,
}

/// Finds the decision whose id starts with `id` (else the decision of the
/// event whose id does) in `log`'s files, newest first, and explains it.
/// Not found, or ambiguous: an error naming the files searched.
pub fn explain(id: &str, log: &Path, rules: &RulesSource, json: bool) -> anyhow::Result<Outcome> {
    let id = id.trim().to_ascii_lowercase();
    anyhow::ensure!(
        id.len() >= 4 && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-'),
        "`{id}` is not a decision id: give its first characters (at least 4 hex digits), as `hookd tail` shows them"
    );
    let files = super::log::log_files(log);
    anyhow::ensure!(
        !files.is_empty(),
        "no event log at {} (nor rotated files beside it); give the daemon's with --log",
        log.display()
    );
    let (decision, found_at) = find_decision(&files, &id)?;
    let event = find_event(&files, &decision.decision.event_id.to_string())?;
    let summary = event
        .as_ref()
        .map(|e| crate::event::input_summary(&e.input, 120));
    let current_revision = load_rules(rules).ok().map(|set| set.revision().clone());
    let same_revision = match (&decision.decision.revision, &current_revision) {
        (Some(then), Some(now)) => Some(then == now),
        _ => None,
    };
    let same_project_revision = decision.decision.project_revision.as_ref().map(|then| {
        event
            .as_ref()
            .and_then(|e| e.project_dir())
            .and_then(|dir| RuleSet::load_project(&project_rules_path(Path::new(dir))).ok())
            .is_some_and(|now| now.revision() == then)
    });
    let explained = Explained {
        decision,
        found_at,
        event,
        summary,
        current_revision,
        same_revision,
        same_project_revision,
    };
    if json {
        print_json(&explained)?;
    } else {
        write!(Stdout, "{explained}")?;
    }
    Ok(Outcome::Success)
}

/// Every line of `file` with its number, skipping what cannot be read as
/// text (a torn tail, another program's bytes).
fn lines(file: &Path) -> anyhow::Result<impl Iterator<Item = (usize, String)>> {
    let reader = BufReader::new(
        std::fs::File::open(file).with_context(|| format!("reading {}", file.display()))?,
    );
    Ok(reader
        .lines()
        .enumerate()
        .filter_map(|(i, line)| line.ok().map(|line| (i + 1, line))))
}

fn find_decision(files: &[PathBuf], id: &str) -> anyhow::Result<(LoggedDecision, String)> {
    // By its own id first; then as the decision of an event.
    for key in ["\"decision_id\":\"", "\"event_id\":\""] {
        let needle = format!("{key}{id}");
        let mut found: Vec<(LoggedDecision, String)> = Vec::new();
        for file in files.iter().rev() {
            for (n, line) in lines(file)? {
                if !line.contains(&needle) {
                    continue;
                }
                if let Ok(LogRecord::Decision(decision)) = LogRecord::parse(line.as_bytes()) {
                    let own = match key {
                        "\"decision_id\":\"" => decision.decision.decision_id,
                        _ => decision.decision.event_id,
                    };
                    if own.to_string().starts_with(id) {
                        found.push((decision, format!("{}:{n}", file.display())));
                    }
                }
            }
        }
        match found.len() {
            0 => continue,
            1 => return Ok(found.remove(0)),
            n => anyhow::bail!(
                "`{id}` starts {n} decision ids ({}{}); give more of it",
                found
                    .iter()
                    .take(3)
                    .map(|(d, _)| d.decision.decision_id.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                if n > 3 { ", …" } else { "" }
            ),
        }
    }
    anyhow::bail!(
        "no decision (nor event) with an id starting `{id}` in {}",
        files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn find_event(files: &[PathBuf], event_id: &str) -> anyhow::Result<Option<LoggedEvent>> {
    let needle = format!("\"id\":\"{event_id}\"");
    for file in files.iter().rev() {
        for (_, line) in lines(file)? {
            if !line.contains(&needle) {
                continue;
            }
            if let Ok(LogRecord::Event(event)) = LogRecord::parse(line.as_bytes()) {
                if event.id.to_string() == event_id {
                    return Ok(Some(event));
                }
            }
        }
    }
    Ok(None)
}

impl fmt::Display for Explained {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.decision.decision;
        writeln!(f, "decision {}  ({})", d.decision_id, self.found_at)?;
        match &self.event {
            Some(event) => {
                let tool = event
                    .tool
                    .as_deref()
                    .map_or(String::new(), |t| format!(" {t}"));
                writeln!(f, "  event     {}{tool}  ({})", event.kind, event.id)?;
                let mut from = format!("{} at {}", event.harness, event.received_at);
                if let Some(session) = &event.session_id {
                    from.push_str(&format!(", session {session}"));
                }
                if let Some(dir) = event.project_dir() {
                    from.push_str(&format!(", in {dir}"));
                }
                writeln!(f, "  from      {from}")?;
                if let Some(summary) = &self.summary {
                    writeln!(f, "  input     {summary}")?;
                }
            }
            None => writeln!(f, "  event     {} (no longer in the log)", d.event_id)?,
        }
        let mut verdict = style::paint(style::verdict(d.answer.verdict), d.answer.verdict);
        if let Some(reason) = &d.answer.reason {
            verdict.push_str(&format!(" — {reason}"));
        }
        if self.decision.permissive {
            verdict.push_str(" (permissive: logged, not sent)");
        }
        writeln!(f, "  verdict   {verdict}")?;
        let layer = d
            .layer
            .as_ref()
            .map_or(String::new(), |l| format!(", layer {l}"));
        writeln!(f, "  source    {}{layer}", d.source)?;
        if let Some(rule) = &d.grant_rule {
            writeln!(f, "  grant     {rule}")?;
        }
        if let Some(remembered) = &d.remembered {
            writeln!(f, "  remembered {remembered:?}")?;
        }
        if d.rules.is_empty() {
            for id in &d.rule_ids {
                writeln!(f, "  rule      {id}")?;
            }
        }
        for rule in &d.rules {
            let reason = rule
                .reason
                .as_deref()
                .map_or(String::new(), |r| format!(" — {r}"));
            writeln!(
                f,
                "  rule      {} ({}, {} layer) at {}{reason}",
                rule.id,
                rule.action,
                rule.layer,
                rule.location()
            )?;
        }
        // The judge rules' answers the decision used (issue #25).
        for j in &d.judgements {
            let text = |k: &str| j[k].as_str().unwrap_or("?").to_string();
            let cached = if j["cached"] == true {
                " (from the daemon's cache)"
            } else {
                " (asked the model)"
            };
            writeln!(
                f,
                "  judge     {}: {}{cached} — {}",
                text("rule"),
                text("verdict"),
                text("reason")
            )?;
        }
        // The session facts and signal values it read (issue #25).
        if let Some(facts) = &d.facts {
            writeln!(f, "  facts     {}", facts_summary(facts))?;
        }
        if !d.signals.is_empty() {
            let shown: Vec<String> = d
                .signals
                .iter()
                .map(|(k, v)| format!("{k}={v:?}"))
                .collect();
            writeln!(f, "  signals   {}", shown.join(", "))?;
        }
        match &d.revision {
            Some(revision) => {
                let now = match (self.same_revision, &self.current_revision) {
                    (Some(true), _) => "the rules now have it too".to_string(),
                    (Some(false), Some(now)) => format!("the rules now are {now}"),
                    _ => "the rules now could not be read".to_string(),
                };
                writeln!(
                    f,
                    "  revision  {revision} (generation {}; {now})",
                    d.generation
                )?;
            }
            None => writeln!(
                f,
                "  revision  not recorded (an older daemon; generation {})",
                d.generation
            )?,
        }
        if let Some(revision) = &d.project_revision {
            let now = match self.same_project_revision {
                Some(true) => "the project's file now has it too",
                _ => "the project's file has changed since",
            };
            writeln!(f, "  project   {revision} ({now})")?;
        }
        writeln!(f, "  latency   {:.3} ms", d.latency_us as f64 / 1000.0)
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// The decision's id, or its first characters (an event's id also
    /// finds its decision).
    pub id: String,
    /// The event log; its rotated files are searched too [default:
    /// $XDG_STATE_HOME/hookd/events.jsonl].
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// The rules to compare the revision with [default: the daemon's
    /// rules file, else the defaults].
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `hookd explain`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let log = log_path(args.log)?;
    explain(&args.id, &log, &rules_source(args.rules), args.json)
}

/// One line for a decision's session facts: the session's calls, each
/// limited rule's count in its window, and what tainted the session.
fn facts_summary(facts: &crate::protocol::facts::SessionFacts) -> String {
    let mut parts = vec![format!("{} earlier tool calls in the session", facts.calls)];
    for (rule, n) in &facts.counts {
        parts.push(format!("{rule}: {n} earlier in its window"));
    }
    if facts.taint.is_empty() {
        parts.push("not tainted".to_string());
    }
    for t in &facts.taint {
        let detail = t
            .detail
            .as_deref()
            .map(|d| format!(" {d}"))
            .unwrap_or_default();
        parts.push(format!("tainted by {}{detail}", t.tool));
    }
    parts.join("; ")
}
