//! `explain`: the verdict, every rule that matched and why, and the rules that
//! nearly matched (all but one check passed).

use super::eval::{
    applies, collect, match_rule_with, pattern_tri, qualified_id, stop_chain_check, verdict,
    LayerRef, Subject,
};
use super::rule::{Action, Rule};
use super::tool::{CommandPattern, ToolPattern, Tri};
use super::{Evaluation, Query};
use serde::Serialize;
use std::fmt;

/// Why a hook input got its verdict. `Display` (`crate::cli::rules`) is
/// for people; `Serialize` is the `--json` form.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    /// `hook_event_name` as given.
    pub event: String,
    /// `tool_name`, if the input has one.
    pub tool: Option<String>,
    /// The verdict, exactly as [`RuleSet::evaluate`](super::RuleSet::evaluate) gives it.
    pub evaluation: Evaluation,
    /// For Bash: the commands the input was split into.
    pub commands: Vec<ExplainedCommand>,
    /// For Bash: the command could not be read reliably (see the module doc).
    pub command_unreadable: bool,
    /// For Bash: the command is too large to analyse (its length in bytes):
    /// it was not split, and rules that might match it matched.
    pub command_too_large: Option<usize>,
    /// For file tools: the absolute path the tool touches.
    pub path: Option<String>,
    /// Rules that matched, in file order (user layer first).
    pub matched: Vec<RuleReport>,
    /// Commands (1-based) that no allow rule covers while others are covered;
    /// an allow verdict for Bash needs every command covered.
    pub uncovered: Vec<usize>,
    /// Rules that failed exactly one check.
    pub near_misses: Vec<RuleReport>,
    /// Allow/context rules of a project layer the user does not trust.
    pub ignored: Vec<RuleReport>,
}

/// One command of a split Bash input.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainedCommand {
    /// 1-based position.
    pub index: usize,
    /// The command as written (words unquoted, joined by spaces).
    pub text: String,
    /// Other readings deny/ask rules also see (wrappers stripped).
    pub stripped: Vec<String>,
    /// Came from input that could not be read reliably.
    pub unreadable: bool,
}

/// One rule and the checks that decided whether it matched.
#[derive(Debug, Clone, Serialize)]
pub struct RuleReport {
    /// The rule id (`<layer>:<id>` for a layer other than the user's:
    /// `project:<id>`, `team:<id>`).
    pub id: String,
    /// `user`, `project`, or the name of the policy source it came from.
    pub layer: String,
    /// `file:line` of the rule.
    pub origin: String,
    /// The rule's action.
    pub action: Action,
    /// The rule's reason, if any.
    pub reason: Option<String>,
    /// The embedded profile the rule comes from (`minimal`, `standard`,
    /// `strict`), when its id is one of a profile's: the embedded defaults,
    /// or a file started with `hookd rules init`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<&'static str>,
    /// `escalate = "team"` and its `approvals_required`, on an ask rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub escalate: Option<super::Escalation>,
    /// Each check, passed or not.
    pub checks: Vec<Check>,
}

/// One check of one rule.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Whether it passed.
    pub ok: bool,
    /// What was checked and what was seen.
    pub text: String,
}

pub(crate) fn explain(layers: &[LayerRef<'_>], q: &Query<'_>) -> Explanation {
    let s = Subject::new(q);
    let m = collect(layers, &s);
    let evaluation = verdict(layers, &m);
    let mut e = Explanation {
        event: q.event.to_string(),
        tool: s.tool.map(str::to_string),
        evaluation,
        commands: Vec::new(),
        command_unreadable: false,
        command_too_large: s.words.as_ref().map(|w| w.bytes),
        path: s.target.clone(),
        matched: Vec::new(),
        uncovered: Vec::new(),
        near_misses: Vec::new(),
        ignored: Vec::new(),
    };
    if let Some(cmd) = s.command.as_ref() {
        e.command_unreadable = cmd.uncertain;
        e.commands = cmd
            .segments
            .iter()
            .enumerate()
            .map(|(i, seg)| ExplainedCommand {
                index: i + 1,
                text: seg.views[0].text.clone(),
                stripped: seg.views[1..].iter().map(|v| v.text.clone()).collect(),
                unreadable: seg.uncertain,
            })
            .collect();
        if m.covered.iter().any(|&c| c) {
            e.uncovered = m
                .covered
                .iter()
                .enumerate()
                .filter(|(_, &c)| !c)
                .map(|(i, _)| i + 1)
                .collect();
        }
    }
    for layer in layers {
        let mut path_ids = Vec::new();
        super::eval::candidates(layer.set, &s, &mut path_ids);
        let trusted = layer.trusted;
        for rule in &layer.set.rules {
            let event_ok = rule.events.has(s.event_bit);
            let outcome = match_rule_with(rule, &s, &path_ids, true, None, None);
            let held_back = stop_chain_check(rule, &s).is_some_and(|(may_block, _)| !may_block);
            let agent_ok = rule.agent.is_none_or(|a| a == s.agent);
            let matched = event_ok && agent_ok && outcome.matched() && !held_back;
            let (checks, near) = checks(rule, &s, &path_ids, event_ok);
            let report = RuleReport {
                id: qualified_id(layer, &rule.id),
                layer: layer.name.to_string(),
                origin: format!("{}:{}", layer.set.origin().display(), rule.line),
                action: rule.action,
                reason: rule.reason.clone(),
                profile: super::Profile::of_rule(&rule.id).map(super::Profile::name),
                escalate: rule.escalate,
                checks,
            };
            if matched {
                if !trusted && matches!(rule.action, Action::Allow | Action::Context) {
                    e.ignored.push(report);
                } else {
                    e.matched.push(report);
                }
            } else if near {
                e.near_misses.push(report);
            }
        }
    }
    e
}

/// How close a rule came: failed checks, weighted, and specific checks passed.
#[derive(Default)]
struct Tally {
    /// A near miss has exactly 1; a check that says "this rule is about
    /// something else" (another tool, another program, another event for a
    /// rule with no pattern) weighs 2.
    failures: usize,
    /// Passed checks that are about this input in particular (a pattern that
    /// is not just a tool name, a condition).
    specific: usize,
}

/// Describe every check of `rule`. A near miss failed exactly one check and
/// passed at least one specific one.
fn checks(rule: &Rule, s: &Subject<'_>, path_ids: &[usize], event_ok: bool) -> (Vec<Check>, bool) {
    let mut out = Vec::new();
    let mut t = Tally::default();
    let mut check = |ok: bool, text: String, weight: usize, specific: bool, t: &mut Tally| {
        if !ok {
            t.failures += weight;
        } else if specific {
            t.specific += 1;
        }
        out.push(Check { ok, text });
    };
    let event_text = if event_ok {
        format!("event {} is one of: {}", s.event, rule.events.describe())
    } else {
        format!(
            "event {} is not one of: {}",
            s.event,
            rule.events.describe()
        )
    };
    check(
        event_ok,
        event_text,
        if rule.tools.is_empty() { 2 } else { 1 },
        false,
        &mut t,
    );
    if let Some(agent) = rule.agent {
        let ok = agent == s.agent;
        let text = if ok {
            format!("agent {agent}: the hook is {}'s", s.agent)
        } else {
            format!("agent {agent}: the hook is {}'s, not {agent}'s", s.agent)
        };
        // Weighs 1: a rule that matches but for the agent is the near miss
        // worth showing.
        check(ok, text, 1, false, &mut t);
    }
    // Content, ignoring `when` (reported separately below).
    let content = match_rule_with(rule, s, path_ids, false, None, None);
    let env = s.env(None);
    let mut command_scope_ok = true;
    if rule.tools.is_empty() {
        check(
            true,
            "no `tool`: any tool or none".to_string(),
            0,
            false,
            &mut t,
        );
    } else if !rule.tools.iter().any(|p| applies(p, s.tool)) {
        let what = s.tool.map_or("an event without a tool".to_string(), |t| {
            format!("tool {t}")
        });
        check(
            false,
            format!("tool {} is not about {what}", quote_all(&rule.tool_src)),
            2,
            false,
            &mut t,
        );
    } else if let Some(pi) = content.whole_pattern {
        let specific = !matches!(
            rule.tools[pi],
            ToolPattern::Tool(_) | ToolPattern::McpPrefix(_)
        );
        check(true, whole_detail(rule, pi, s), 0, specific, &mut t);
    } else if let Some((si, vi, pi)) = content.first {
        let specific = pi != usize::MAX && !is_any(&rule.tools[pi]);
        check(
            true,
            command_detail(rule, s, si, vi, pi, &content.commands),
            0,
            specific,
            &mut t,
        );
    } else if let Some((si, vi, pi)) = first_pattern_view(rule, s) {
        // The pattern matched a command, but per-command conditions did not.
        let specific = !is_any(&rule.tools[pi]);
        check(
            true,
            command_detail(rule, s, si, vi, pi, &[si]),
            0,
            specific,
            &mut t,
        );
        if let Some(cmd) = &s.command {
            let env = s.env(Some(super::cond::CommandScope::of(cmd, si, vi)));
            for c in &rule.per_command {
                let ok = c.holds(&env);
                let seen = c.observed(&env).unwrap_or_default();
                check(
                    ok,
                    format!("when {} (saw {seen})", c.describe()),
                    1,
                    true,
                    &mut t,
                );
            }
        }
        command_scope_ok = false;
    } else {
        let (text, informative) = miss_detail(rule, s, path_ids);
        check(false, text, if informative { 1 } else { 2 }, false, &mut t);
        if informative {
            t.specific += 1;
        }
        command_scope_ok = false;
    }
    for c in &rule.when {
        let ok = c.holds(&env);
        let seen = c
            .observed(&env)
            .map(|v| format!(" (saw {v})"))
            .unwrap_or_default();
        check(ok, format!("when {}{seen}", c.describe()), 1, true, &mut t);
    }
    if command_scope_ok && (content.whole || content.first.is_some()) {
        for c in &rule.per_command {
            check(true, format!("when {}", c.describe()), 0, true, &mut t);
        }
    }
    if let Some((may_block, text)) = stop_chain_check(rule, s).filter(|_| event_ok) {
        check(may_block, text, 1, false, &mut t);
        if !may_block {
            // The rule matched but for this: the most telling near miss.
            t.specific += 1;
        }
    }
    if !rule.gate.is_empty() && event_ok {
        // Session facts (issue #25); counts are keyed by the rule's id as
        // the user layer qualifies it.
        let (ok, text) = super::eval::gate_check(rule, &rule.id, s);
        check(ok, text, 1, true, &mut t);
    }
    (out, t.failures == 1 && t.specific > 0)
}

/// A pattern that matches every use of its tool.
fn is_any(p: &ToolPattern) -> bool {
    matches!(
        p,
        ToolPattern::Command(CommandPattern::Any)
            | ToolPattern::Tool(_)
            | ToolPattern::McpPrefix(_)
    )
}

fn quote_all(srcs: &[String]) -> String {
    srcs.iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn whole_detail(rule: &Rule, pi: usize, s: &Subject<'_>) -> String {
    let src = &rule.tool_src[pi];
    let tool = s.tool.unwrap_or("");
    match &rule.tools[pi] {
        ToolPattern::Path { .. } => format!(
            "tool `{src}` matches {tool} of {}",
            s.target.as_deref().unwrap_or("?")
        ),
        ToolPattern::Domain(_) => {
            let url = s
                .tool_input
                .and_then(|t| t.get("url"))
                .and_then(|u| u.as_str());
            match url {
                Some(u) if pattern_tri(&rule.tools[pi], s, &[]) == Tri::Unsure => {
                    format!("tool `{src}`: URL {u:?} could not be read, which deny/ask rules treat as a match")
                }
                Some(u) => format!("tool `{src}` matches the host of {u:?}"),
                None => format!(
                    "tool `{src}`: no URL in the input, which deny/ask rules treat as a match"
                ),
            }
        }
        ToolPattern::Param { field, .. } => {
            let v = s.tool_input.and_then(|t| t.get(field.as_str()));
            format!(
                "tool `{src}` matches tool_input.{field} = {}",
                v.map_or("?".to_string(), |v| v.to_string())
            )
        }
        _ => format!("tool `{src}` matches tool {tool}"),
    }
}

fn command_detail(
    rule: &Rule,
    s: &Subject<'_>,
    si: usize,
    vi: usize,
    pi: usize,
    all: &[usize],
) -> String {
    let Some(cmd) = &s.command else {
        return String::new();
    };
    let seg = &cmd.segments[si];
    let view = &seg.views[vi];
    let src = if pi == usize::MAX {
        "(no `tool`)".to_string()
    } else {
        format!("`{}`", rule.tool_src[pi])
    };
    if cmd.too_large {
        let what = match (pi, rule.tools.get(pi)) {
            (_, Some(ToolPattern::Command(c))) => match c.program() {
                Some(program) => format!("the command names `{program}`"),
                None => "the pattern names no program".to_string(),
            },
            _ => "the rule has no `tool`".to_string(),
        };
        return format!(
            "tool {src} might match: the command is too large to analyse and {what}, so per-command conditions are taken to hold"
        );
    }
    let mut text = format!("tool {src} matched command [{}] `{}`", si + 1, view.text);
    if !view.literal {
        text.push_str(&format!(" (after stripping {})", view.stripped));
    }
    if seg.uncertain {
        text.push_str(" (from a command that could not be read reliably)");
    }
    if all.len() > 1 {
        let others: Vec<String> = all
            .iter()
            .filter(|&&c| c != si)
            .map(|c| format!("[{}]", c + 1))
            .collect();
        text.push_str(&format!(", also {}", others.join(" ")));
    }
    text
}

/// The first command view a `Bash(...)` pattern of `rule` matches, ignoring
/// conditions (allow rules still only see literal, readable commands).
fn first_pattern_view(rule: &Rule, s: &Subject<'_>) -> Option<(usize, usize, usize)> {
    let cmd = s.command.as_ref()?;
    for (si, seg) in cmd.segments.iter().enumerate() {
        for (vi, view) in seg.views.iter().enumerate() {
            for (pi, p) in rule.tools.iter().enumerate() {
                let ToolPattern::Command(c) = p else { continue };
                if rule.action == Action::Allow
                    && (!view.literal || (seg.uncertain && *c != CommandPattern::Any))
                {
                    continue;
                }
                if c.is_match(&view.text) {
                    return Some((si, vi, pi));
                }
            }
        }
    }
    None
}

/// Why no pattern matched, and whether that is informative (an allow rule that
/// would match but for the allow restrictions) rather than "about something else".
fn miss_detail(rule: &Rule, s: &Subject<'_>, path_ids: &[usize]) -> (String, bool) {
    let srcs = quote_all(&rule.tool_src);
    if let Some(cmd) = &s.command {
        let has_command = rule
            .tools
            .iter()
            .any(|p| matches!(p, ToolPattern::Command(_)));
        if has_command {
            // Would a view allow rules may not use have matched?
            if rule.action == Action::Allow {
                for (si, seg) in cmd.segments.iter().enumerate() {
                    for view in &seg.views {
                        let hit = rule.tools.iter().any(|p| match p {
                            ToolPattern::Command(c) => c.is_match(&view.text),
                            _ => false,
                        });
                        if hit && !view.literal {
                            let text = format!(
                                "tool {srcs} matches command [{}] only after stripping {}; allow rules only see commands as written",
                                si + 1,
                                view.stripped
                            );
                            return (text, true);
                        }
                        if hit && seg.uncertain {
                            let text = format!(
                                "tool {srcs} matches command [{}], but the command could not be read reliably, so only deny/ask rules (and a bare `Bash` allow) match it",
                                si + 1
                            );
                            return (text, true);
                        }
                    }
                }
            }
            return (format!("tool {srcs} matched none of the commands"), false);
        }
    }
    let mut informative = false;
    let detail = rule
        .tools
        .iter()
        .zip(&rule.tool_src)
        .filter(|(p, _)| applies(p, s.tool))
        .map(|(p, src)| match (p, pattern_tri(p, s, path_ids)) {
            (ToolPattern::Domain(_), Tri::Unsure) => {
                informative = true;
                format!(
                    "`{src}`: the URL could not be read; only deny/ask rules treat that as a match"
                )
            }
            (ToolPattern::Path { .. }, _) => match &s.target {
                Some(t) => format!("`{src}` does not match {t}"),
                None => format!("`{src}`: the input names no path"),
            },
            (ToolPattern::Param { field, .. }, _) => {
                let v = s.tool_input.and_then(|t| t.get(field.as_str()));
                format!(
                    "`{src}` does not match tool_input.{field} = {}",
                    v.map_or("(absent)".to_string(), |v| v.to_string())
                )
            }
            (ToolPattern::Domain(_), _) => {
                let url = s
                    .tool_input
                    .and_then(|t| t.get("url"))
                    .map(|u| u.to_string());
                format!(
                    "`{src}` does not match the host of {}",
                    url.unwrap_or_default()
                )
            }
            _ => format!("`{src}` does not match"),
        })
        .collect::<Vec<_>>();
    (format!("tool {}", detail.join("; ")), informative)
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "event: {}",
            if self.event.is_empty() {
                "(none)"
            } else {
                &self.event
            }
        )?;
        if let Some(t) = &self.tool {
            write!(f, ", tool: {t}")?;
        }
        writeln!(f)?;
        if let Some(p) = &self.path {
            writeln!(f, "path: {p}")?;
        }
        if let Some(bytes) = self.command_too_large {
            writeln!(
                f,
                "command: too large to analyse ({bytes} bytes), not split: deny/ask rules that might match it match, allow rules only if they allow all Bash"
            )?;
        } else if !self.commands.is_empty() {
            let note = if self.command_unreadable {
                " (could not be read reliably: deny/ask rules match any piece, allow rules only if they allow all Bash)"
            } else {
                ""
            };
            writeln!(f, "commands{note}:")?;
            for c in &self.commands {
                write!(f, "  [{}] {}", c.index, c.text)?;
                if !c.stripped.is_empty() {
                    write!(f, "   (also read as: {})", c.stripped.join(" | "))?;
                }
                writeln!(f)?;
            }
        }
        let ev = &self.evaluation;
        // Generation 0: rules no daemon numbered (read by the command
        // itself, not the ones a running daemon enforces): none to show.
        let generation = match ev.generation {
            0 => String::new(),
            n => format!(" (generation {n})"),
        };
        match ev.action {
            Some(a) => writeln!(
                f,
                "verdict: {a} by {}{generation}",
                ev.rule_ids.join(", ")
            )?,
            None => writeln!(
                f,
                "verdict: no opinion; no rule decided, so Claude Code's own permission flow continues{generation}"
            )?,
        }
        if let Some(r) = &ev.reason {
            writeln!(f, "reason: {r}")?;
        }
        if let Some(e) = &ev.escalate {
            writeln!(f, "escalated to the team: {}", approvals(e))?;
        }
        if let Some(layer) = &ev.enforced_by {
            writeln!(
                f,
                "enforced by policy source {layer}: no later layer or grant can loosen it"
            )?;
        }
        if !ev.overridden.is_empty() {
            writeln!(
                f,
                "overridden by a later layer's allow: {}",
                ev.overridden.join(", ")
            )?;
        }
        for c in &ev.additional_context {
            writeln!(f, "context: {c}")?;
        }
        if !self.uncovered.is_empty() {
            let list: Vec<String> = self
                .uncovered
                .iter()
                .map(|i| format!("[{i}] `{}`", self.commands[i - 1].text))
                .collect();
            writeln!(
                f,
                "not covered by any allow rule (so no allow): {}",
                list.join(", ")
            )?;
        }
        section(f, "matched", &self.matched)?;
        section(f, "near misses (one check failed)", &self.near_misses)?;
        section(f, "ignored (project layer not trusted)", &self.ignored)?;
        if self.matched.is_empty() && self.near_misses.is_empty() {
            writeln!(f, "\nno rule matched or nearly matched")?;
        }
        Ok(())
    }
}

/// What a team escalation needs, in words.
fn approvals(e: &super::Escalation) -> String {
    match e.approvals_required {
        1 => "one approver's allow (any approver's deny denies)".to_string(),
        n => format!("{n} different approvers' allow (any approver's deny denies)"),
    }
}

fn section(f: &mut fmt::Formatter<'_>, title: &str, rules: &[RuleReport]) -> fmt::Result {
    if rules.is_empty() {
        return Ok(());
    }
    writeln!(f, "\n{title}:")?;
    for r in rules {
        let mut profile = r
            .profile
            .map(|p| format!(", profile {p}"))
            .unwrap_or_default();
        if let Some(e) = &r.escalate {
            profile.push_str(&format!(", escalate = \"team\": {}", approvals(e)));
        }
        writeln!(
            f,
            "  {:<7} {}  ({}, {}{profile})",
            r.action.as_str(),
            r.id,
            r.layer,
            r.origin
        )?;
        for c in &r.checks {
            writeln!(
                f,
                "          {} {}",
                if c.ok { "yes" } else { "NO " },
                c.text
            )?;
        }
    }
    Ok(())
}
