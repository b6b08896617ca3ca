//! `hookd rules suggest`: rules proposed from what a person decided by
//! hand, read from the event log (PROTOCOL.md §7.4).
//!
//! A decision of source `client:<name>` with verdict `allow` or `deny` is a
//! person's answer. Answers are grouped by the rule they generalise to
//! ([`crate::grant::narrowest_rule`]: `Bash(cargo test:*)` from `cargo test
//! -p x` and `cargo test --all`); a group answered the same way at least
//! `threshold` times becomes a proposal, unless one of these holds (each is
//! reported, with why, as skipped):
//!
//! - the rule would be a whole tool (`Bash`, `Edit`, …) or every command;
//! - the same rule was answered both ways;
//! - the rules in force already decide every one of those events that way;
//! - for an allow: a rule in force or a default rule denies or asks about
//!   one of the events, or about a probe the rule would also allow
//!   (`rm -rf /` for `Bash(rm:*)`, `<dir>/.env` for `Read(//dir/**)`),
//!   judged with the real evaluation;
//! - the rules file with the rule appended does not decide those events
//!   that way (judged again, with the file's text parsed as the daemon
//!   would).
//!
//! Decisions of a session grant (`grant:<id>`) whose rule is the proposal's
//! are counted beside it as evidence, not towards the threshold: a grant
//! repeats one answer.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde::Serialize;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::agent::claude::InputFields;
use crate::agent::Agent;
use crate::decision::{Source, Verdict};
use crate::protocol::log::{LogRecord, LoggedEvent};
use crate::protocol::Harness;
use crate::rules::{check_source, LayerKind, Layers, Query, RuleSet};

/// What to read and how much evidence a rule needs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only events received at or after this time.
    pub since: Option<SystemTime>,
    /// Answers needed for a proposal.
    pub threshold: usize,
    /// The home directory `~` stands for in the rules.
    pub home: Option<PathBuf>,
}

/// One proposed rule and its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct Proposal {
    /// The new rule's id in the rules file.
    pub id: String,
    /// `allow` or `deny`.
    pub action: String,
    /// The permission rule (`tool = …`).
    pub tool: String,
    /// How many times a person answered so.
    pub count: usize,
    /// Events a session grant of this rule decided as well.
    pub by_grant: usize,
    /// The sessions the answers came from.
    pub sessions: Vec<String>,
    /// The agents (harnesses).
    pub agents: Vec<String>,
    /// Who answered (`client:<name>`).
    pub deciders: Vec<String>,
    /// When the first and last of those events were received.
    pub first_seen: String,
    /// When the last one was received.
    pub last_seen: String,
    /// Up to three of the inputs, summarised.
    pub examples: Vec<String>,
    /// The event ids.
    pub event_ids: Vec<String>,
}

/// A group of answers that did not become a rule, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Skipped {
    /// `allow` or `deny`.
    pub action: String,
    /// The rule it would have been.
    pub tool: String,
    /// How many answers.
    pub count: usize,
    /// Why no rule is proposed.
    pub why: String,
}

/// A log line that could not be read.
#[derive(Debug, Clone, Serialize)]
pub struct Malformed {
    /// The file.
    pub file: PathBuf,
    /// Its line number (from 1).
    pub line: usize,
    /// What is wrong.
    pub error: String,
}

/// What `suggest` found.
#[derive(Debug, Default, Serialize)]
pub struct Report {
    /// Lines read (every file).
    pub lines: usize,
    /// Answers by a person (client decisions of allow or deny) in range.
    pub manual_answers: usize,
    /// The rules proposed.
    pub proposals: Vec<Proposal>,
    /// Groups of answers that gave no rule.
    pub skipped: Vec<Skipped>,
    /// Unreadable lines, skipped.
    pub malformed: Vec<Malformed>,
}

/// One person's answer, with what the rules need to judge its event again.
struct Answer {
    event: LoggedEvent,
    decider: String,
    exact: Option<String>,
}

#[derive(Default)]
struct Group {
    answers: Vec<Answer>,
    by_grant: usize,
}

/// The files of the log at `log`, oldest first: its rotated files
/// (`<log>.N` … `<log>.1`) then itself.
pub fn log_files(log: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for n in 1..=1000 {
        let mut name = log.as_os_str().to_owned();
        name.push(format!(".{n}"));
        let path = PathBuf::from(name);
        if !path.exists() {
            break;
        }
        files.push(path);
    }
    files.reverse();
    files.push(log.to_path_buf());
    files
}

/// The proposals for the log files `files` (oldest first), judged against
/// `rules` (the rules in force) and `text`, the user rules file's text
/// (`origin` its path), which the proposals are appended to.
pub fn suggest(
    files: &[PathBuf],
    rules: &Arc<RuleSet>,
    text: &str,
    origin: &Path,
    options: &Options,
) -> std::io::Result<Report> {
    let mut report = Report::default();
    let mut events: HashMap<Uuid, LoggedEvent> = HashMap::new();
    let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
    let mut grants: Vec<(String, String)> = Vec::new();
    for path in files {
        let file = std::fs::File::open(path)
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        for (n, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
            let line = line?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            report.lines += 1;
            let record = match LogRecord::parse(&line) {
                Ok(LogRecord::Unknown) => continue,
                Ok(record) => record,
                Err(e) => {
                    report.malformed.push(Malformed {
                        file: path.clone(),
                        line: n + 1,
                        error: e.to_string(),
                    });
                    continue;
                }
            };
            let (event, logged) = match record {
                LogRecord::Event(event) => {
                    events.insert(event.id, event);
                    continue;
                }
                LogRecord::Decision(logged) => match events.remove(&logged.decision.event_id) {
                    Some(event) => (event, logged),
                    None => continue,
                },
                _ => continue,
            };
            if let Some(since) = options.since {
                let at = crate::time::parse_rfc3339(&event.received_at);
                if at.is_none_or(|at| at < since) {
                    continue;
                }
            }
            let verdict = logged.decision.answer.verdict;
            if !matches!(verdict, Verdict::Allow | Verdict::Deny) {
                continue;
            }
            match &logged.decision.source {
                Source::Client(name) => {
                    let agent = agent_of(&event);
                    let inputs = agent.rule_inputs(&event.input);
                    let Some(input) = inputs.first() else {
                        continue;
                    };
                    let Some(rule) = crate::grant::narrowest_rule(InputFields::of(input)) else {
                        continue;
                    };
                    let exact = exact_rule(input);
                    report.manual_answers += 1;
                    groups
                        .entry((verdict.as_str().to_string(), rule))
                        .or_default()
                        .answers
                        .push(Answer {
                            event,
                            decider: format!("client:{name}"),
                            exact,
                        });
                }
                Source::Grant(_) => {
                    if let Some(rule) = logged.decision.grant_rule {
                        grants.push((verdict.as_str().to_string(), rule));
                    }
                }
                _ => {}
            }
        }
    }
    for key in grants {
        if let Some(group) = groups.get_mut(&key) {
            group.by_grant += 1;
        }
    }
    let mut new_text = text.to_string();
    let both: BTreeSet<String> = {
        let mut seen: HashMap<&str, BTreeSet<&str>> = HashMap::new();
        for (action, rule) in groups.keys() {
            seen.entry(rule).or_default().insert(action);
        }
        seen.into_iter()
            .filter(|(_, actions)| actions.len() > 1)
            .map(|(rule, _)| rule.to_string())
            .collect()
    };
    let home = options.home.as_deref();
    for ((action, rule), group) in groups {
        let count = group.answers.len();
        if count < options.threshold {
            report.skipped.push(Skipped {
                action,
                tool: rule,
                count,
                why: format!("answered {count} times, fewer than {}", options.threshold),
            });
            continue;
        }
        let verdict = if action == "allow" {
            Verdict::Allow
        } else {
            Verdict::Deny
        };
        let skip = |why: String| Skipped {
            action: action.clone(),
            tool: rule.clone(),
            count,
            why,
        };
        if is_whole_tool(&rule) {
            report.skipped.push(skip(format!(
                "`{rule}` would cover the whole tool; decide these in the rules file by hand"
            )));
            continue;
        }
        if both.contains(&rule) {
            report
                .skipped
                .push(skip(format!("`{rule}` was answered both allow and deny")));
            continue;
        }
        // What the rules in force say about each of these events.
        let now: Vec<(Verdict, Vec<String>)> = group
            .answers
            .iter()
            .map(|a| judge(&Layers::new(rules.clone()), &a.event, home))
            .collect();
        if now.iter().all(|(v, _)| *v == verdict) {
            let mut ids: Vec<String> = now.iter().flat_map(|(_, ids)| ids.clone()).collect();
            ids.dedup();
            report.skipped.push(skip(format!(
                "the rules already {action} these ({})",
                ids.join(", ")
            )));
            continue;
        }
        if verdict == Verdict::Allow {
            if let Some(why) = covered_by_deny(rules, text, &rule, &group, &now, home) {
                report.skipped.push(skip(why));
                continue;
            }
        }
        let id = unique_id(&new_text, &action, &rule);
        let proposal = proposal(id, &action, &rule, &group);
        let candidate = append(&new_text, &proposal);
        // The file with the rule, judged as the daemon would judge it.
        let check = check_source(&candidate, origin, LayerKind::User);
        let parsed = RuleSet::parse(&candidate, origin)
            .ok()
            .filter(|_| check.is_ok())
            .map(|set| Arc::new(set.with_policy(rules.policy().to_vec())));
        let Some(parsed) = parsed else {
            report.skipped.push(skip(format!(
                "the rules file would not pass `hookd rules check` with `{rule}`"
            )));
            continue;
        };
        let after: Vec<(Verdict, Vec<String>)> = group
            .answers
            .iter()
            .map(|a| judge(&Layers::new(parsed.clone()), &a.event, home))
            .collect();
        if let Some((v, ids)) = after.iter().find(|(v, _)| *v != verdict) {
            report.skipped.push(skip(format!(
                "with `{rule}` added, the rules would still {} one of these ({})",
                v.as_str(),
                ids.join(", ")
            )));
            continue;
        }
        new_text = candidate;
        report.proposals.push(proposal);
    }
    Ok(report)
}

/// The agent of a logged event, from its `harness`.
fn agent_of(event: &LoggedEvent) -> Agent {
    serde_json::from_value::<Harness>(Value::String(event.harness.clone()))
        .map_or(Agent::ClaudeCode, Harness::agent)
}

/// The verdict `layers` give a logged event, and the deciding rules.
fn judge(layers: &Layers, event: &LoggedEvent, home: Option<&Path>) -> (Verdict, Vec<String>) {
    let agent = agent_of(event);
    let project_dir = event.project_dir().map(PathBuf::from);
    let evaluation = crate::rules::evaluate(
        layers,
        &agent.rule_inputs(&event.input),
        &Query {
            event: event.mapped_kind.as_deref().unwrap_or(&event.kind),
            agent,
            input: &event.input,
            project_dir: project_dir.as_deref(),
            home,
            stop_blocks: 0,
            facts: None,
            judgements: &[],
            signals: None,
        },
    );
    (evaluation.answer().verdict, evaluation.rule_ids)
}

/// The rule for exactly this Bash command, when it is one.
fn exact_rule(input: &Value) -> Option<String> {
    let fields = InputFields::of(input);
    if fields.tool_name? != "Bash" {
        return None;
    }
    let command = fields.tool_input?.get("command")?.as_str()?;
    Some(command.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// A rule that names a built-in tool without narrowing it, or every
/// shell command.
fn is_whole_tool(rule: &str) -> bool {
    crate::grant::matches_every_command(rule)
        || (!rule.contains('(') && crate::rules::KNOWN_TOOLS.contains(&rule))
        || rule.ends_with("(*)")
        || rule.ends_with("(//**)")
}

/// Why allowing `rule` would allow what a deny or ask rule (in force, or
/// a default rule) covers: one of the answered events, or a probe the rule
/// would also match.
fn covered_by_deny(
    rules: &Arc<RuleSet>,
    text: &str,
    rule: &str,
    group: &Group,
    now: &[(Verdict, Vec<String>)],
    home: Option<&Path>,
) -> Option<String> {
    if let Some((v, ids)) = now
        .iter()
        .find(|(v, _)| matches!(v, Verdict::Deny | Verdict::Ask))
    {
        return Some(format!(
            "the rules {} one of these ({}), which beats an allow",
            v.as_str(),
            ids.join(", ")
        ));
    }
    let allow = crate::grant::compile(rule, Verdict::Allow, "candidate").ok()?;
    let defaults = RuleSet::defaults();
    let cwd = group.answers[0]
        .event
        .cwd
        .clone()
        .unwrap_or_else(|| "/".to_string());
    let mut all = probes(rule, &cwd);
    for source in [text, crate::rules::DEFAULTS_TOML] {
        all.extend(deny_probes(source, &cwd, home));
    }
    for probe in all {
        let query = Query {
            event: "PreToolUse",
            agent: Agent::ClaudeCode,
            input: &probe,
            project_dir: None,
            home,
            stop_blocks: 0,
            facts: None,
            judgements: &[],
            signals: None,
        };
        // Only probes the candidate itself would allow.
        if allow.evaluate(&query).answer().verdict != Verdict::Allow {
            continue;
        }
        for set in [rules.as_ref(), &defaults] {
            let evaluation = set.evaluate(&query);
            let verdict = evaluation.answer().verdict;
            if matches!(verdict, Verdict::Deny | Verdict::Ask) {
                return Some(format!(
                    "`{rule}` would also allow `{}`, which {} {} ({})",
                    crate::tail::summary(&probe),
                    if set.is_defaults() {
                        "the default rules"
                    } else {
                        "the rules"
                    },
                    verdict.as_str(),
                    evaluation.rule_ids.join(", ")
                ));
            }
        }
    }
    None
}

/// Inputs a rule generalised from a few answers would also match, some of
/// which the default rules deny: dangerous arguments after a command
/// prefix, secrets below a directory.
fn probes(rule: &str, cwd: &str) -> Vec<Value> {
    let call = |tool: &str, input: Value| json!({"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "cwd": cwd});
    let Some((tool, content)) = rule.strip_suffix(')').and_then(|r| r.split_once('(')) else {
        return Vec::new();
    };
    match tool {
        "Bash" => {
            let prefix = content.trim_end_matches(":*").trim_end_matches(" *");
            // A subcommand's own arguments; a program's also its
            // subcommands (`git` → `git push --force origin main`).
            let one_word = !prefix.contains(' ');
            [" -rf /", " -rf ~", " -rf .", " --force origin main"]
                .iter()
                .chain(one_word.then_some(&" push --force origin main"))
                .map(|tail| call("Bash", json!({ "command": format!("{prefix}{tail}") })))
                .collect()
        }
        "Read" | "Edit" => {
            let dir = content.trim_end_matches("/**");
            let dir = dir.strip_prefix('/').unwrap_or(dir);
            [".env", ".ssh/id_ed25519", "x/.env"]
                .iter()
                .map(|file| call(tool, json!({ "file_path": format!("{dir}/{file}") })))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// One input per `tool` pattern of the deny and ask rules of the rules
/// file `text`, made of the pattern's own text (`*` read as `x`): what an
/// allow rule must not cover (`docker run --privileged x` for
/// `Bash(docker run --privileged *)`). A text that is not TOML gives none.
fn deny_probes(text: &str, cwd: &str, home: Option<&Path>) -> Vec<Value> {
    let Ok(file) = toml::from_str::<toml::Table>(text) else {
        return Vec::new();
    };
    let rules = file.get("rule").and_then(toml::Value::as_array);
    let mut out = Vec::new();
    for rule in rules.into_iter().flatten() {
        let action = rule.get("action").and_then(toml::Value::as_str);
        if !matches!(action, Some("deny" | "ask")) {
            continue;
        }
        let tools: Vec<&str> = match rule.get("tool") {
            Some(toml::Value::String(one)) => vec![one.as_str()],
            Some(toml::Value::Array(many)) => many.iter().filter_map(toml::Value::as_str).collect(),
            _ => continue,
        };
        for tool in tools {
            let Some((name, content)) = tool.strip_suffix(')').and_then(|t| t.split_once('('))
            else {
                continue;
            };
            let literal = content.trim_end_matches(":*").replace('*', "x");
            let input = match name {
                "Bash" => json!({ "command": literal }),
                "WebFetch" => match literal.strip_prefix("domain:") {
                    Some(host) => json!({ "url": format!("https://{host}/") }),
                    None => continue,
                },
                _ => {
                    let path = if let Some(rest) = literal.strip_prefix("//") {
                        format!("/{rest}")
                    } else if let Some(rest) = literal.strip_prefix('~') {
                        match home {
                            Some(home) => format!("{}{rest}", home.display()),
                            None => continue,
                        }
                    } else if let Some(rest) = literal.strip_prefix('/') {
                        format!("{cwd}/{rest}")
                    } else {
                        format!("{cwd}/{literal}")
                    };
                    json!({ "file_path": path })
                }
            };
            out.push(json!({"hook_event_name": "PreToolUse", "tool_name": name,
                            "tool_input": input, "cwd": cwd}));
        }
    }
    out
}

/// An id for a proposed rule not in `text`: `suggested-allow-bash-cargo-test`.
fn unique_id(text: &str, action: &str, rule: &str) -> String {
    let mut slug = String::new();
    for c in rule.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_matches('-').chars().take(40).collect();
    let base = format!("suggested-{action}-{}", slug.trim_end_matches('-'));
    let mut id = base.clone();
    let mut n = 1;
    while text.contains(&format!("id = \"{id}\"")) {
        n += 1;
        id = format!("{base}-{n}");
    }
    id
}

fn proposal(id: String, action: &str, rule: &str, group: &Group) -> Proposal {
    let set = |f: &dyn Fn(&Answer) -> Option<String>| -> Vec<String> {
        let set: BTreeSet<String> = group.answers.iter().filter_map(f).collect();
        set.into_iter().collect()
    };
    let mut examples: Vec<String> = Vec::new();
    for answer in &group.answers {
        let summary = answer
            .exact
            .clone()
            .unwrap_or_else(|| crate::tail::summary(&answer.event.input));
        if !examples.contains(&summary) && examples.len() < 3 {
            examples.push(summary);
        }
    }
    let times: Vec<&str> = group
        .answers
        .iter()
        .map(|a| a.event.received_at.as_str())
        .collect();
    Proposal {
        id,
        action: action.to_string(),
        tool: rule.to_string(),
        count: group.answers.len(),
        by_grant: group.by_grant,
        sessions: set(&|a| a.event.session_id.clone()),
        agents: set(&|a| Some(a.event.harness.clone())),
        deciders: set(&|a| Some(a.decider.clone())),
        first_seen: times.iter().min().unwrap_or(&"").to_string(),
        last_seen: times.iter().max().unwrap_or(&"").to_string(),
        examples,
        event_ids: group
            .answers
            .iter()
            .map(|a| a.event.id.to_string())
            .collect(),
    }
}

/// `text` with `proposal` appended as a `[[rule]]`, its evidence in the
/// comment above it.
pub fn append(text: &str, proposal: &Proposal) -> String {
    let comment = crate::grant::comment_text;
    let mut out = text.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    let sessions = if proposal.sessions.is_empty() {
        "no session id".to_string()
    } else {
        proposal.sessions.join(", ")
    };
    out.push_str(&format!(
        "# Suggested by `hookd rules suggest`: answered {} by hand {} times ({}) in {} session(s) ({}),\n",
        proposal.action,
        proposal.count,
        comment(&proposal.deciders.join(", ")),
        proposal.sessions.len(),
        comment(&sessions),
    ));
    if proposal.by_grant > 0 {
        out.push_str(&format!(
            "# and {} more times by a session grant of this rule,\n",
            proposal.by_grant
        ));
    }
    out.push_str(&format!(
        "# first {}, last {}; agents: {}.\n",
        comment(&proposal.first_seen),
        comment(&proposal.last_seen),
        comment(&proposal.agents.join(", "))
    ));
    for example in &proposal.examples {
        out.push_str(&format!("#   e.g. {}\n", comment(example)));
    }
    out.push_str(&format!(
        "[[rule]]\nid = {}\naction = \"{}\"\ntool = {}\n",
        toml_string(&proposal.id),
        proposal.action,
        toml_string(&proposal.tool)
    ));
    out
}

fn toml_string(text: &str) -> String {
    // A JSON string is a TOML basic string.
    Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_tools_are_never_proposed() {
        for rule in [
            "Bash",
            "Bash(*)",
            "Bash(:*)",
            "Edit",
            "Read(//**)",
            "WebFetch",
        ] {
            assert!(is_whole_tool(rule), "{rule}");
        }
        for rule in [
            "Bash(cargo test:*)",
            "Edit(//repo/src/**)",
            "mcp__db__query",
        ] {
            assert!(!is_whole_tool(rule), "{rule}");
        }
    }
}
