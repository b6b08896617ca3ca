//! Session facts (issue #25): what the daemon knows about a session beyond
//! the one hook input, passed into the judgement as [`Query::facts`] and
//! recorded in the decision line, so `hookd replay` re-judges with the facts
//! as they were.
//!
//! The core stays pure: it never counts, never reads a clock. The daemon
//! gathers [`SessionFacts`] before it judges an event; rules only read them.
//! Three rule keys use them, each a *gate* on an otherwise ordinary rule:
//!
//! ```toml
//! [[rule]]
//! id = "rm-burst"
//! action = "ask"
//! tool = "Bash(rm *)"
//! limit = { count = 5, per = "10m", scope = "session" }  # applies from the 6th rm in 10 minutes
//!
//! [[rule]]
//! id = "long-session"
//! action = "ask"
//! budget = { calls = 500 }            # applies once the session made 500 tool calls
//! # budget = { usd = 2.5 }            # a `hookd run` run: once its cost reached $2.50
//!
//! [[rule]]
//! id = "push-after-web"
//! action = "ask"
//! tool = "Bash(git push *)"
//! after = ["WebFetch", "mcp__*", "Read(~/Downloads/**)"]  # only in sessions where one ran
//! within = "30m"                      # optional: and not longer ago than this
//! ```
//!
//! **Two-phase counting for `limit`.** The core reports, in
//! [`Evaluation::limited`](super::Evaluation::limited), every limited rule whose
//! tool, event and conditions matched this call, whether or not its limit was
//! passed; the daemon adds the call to those rules' sliding windows. The
//! count the daemon passes in ([`SessionFacts::counts`]) is the number of
//! earlier matching calls in the window, so a rule with `count = N` applies
//! on the (N+1)-th matching call.
//!
//! **Extension point.** [`SessionFacts`] is a struct of named, optional
//! parts; further facts (the judge's signals) are added as new named fields
//! with `#[serde(default, skip_serializing_if = …)]`, so older decision lines
//! still read and replay.
//!
//! [`Query::facts`]: super::Query::facts

use super::path::{PathPattern, PathSet, ResolvedPath};
use super::tool::{url_host, ToolPattern};
use serde::{Deserialize, Serialize};

pub use hookd_protocol::facts::{SessionFacts, Taint};

/// `limit.scope`: whose calls one window counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// The calls of one session (the default).
    Session,
    /// The calls of every session of the same agent.
    Agent,
    /// Every call on this machine (this daemon).
    Machine,
}

impl Scope {
    /// The names `scope` accepts.
    pub const NAMES: [&'static str; 3] = ["session", "agent", "machine"];

    /// Parse a `scope` value.
    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "session" => Some(Scope::Session),
            "agent" => Some(Scope::Agent),
            "machine" => Some(Scope::Machine),
            _ => None,
        }
    }
}

/// A rule's `limit`, as the daemon needs it to count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limit {
    /// The rule applies once more than this many matching calls fall in the window.
    pub count: u32,
    /// The window, in seconds.
    pub per_secs: u64,
    /// Whose calls count.
    pub scope: Scope,
}

/// A limited rule that matched this call (see "Two-phase counting").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitedHit {
    /// The rule's qualified id.
    pub rule: String,
    /// Its limit.
    pub limit: Limit,
}

/// One compiled `after` pattern.
#[derive(Debug, Clone)]
pub(crate) struct AfterPattern {
    pub src: String,
    pub pattern: ToolPattern,
    /// For path patterns: the compiled set of that one pattern.
    pub paths: Option<PathSet>,
}

impl AfterPattern {
    pub fn new(src: String, pattern: ToolPattern) -> AfterPattern {
        let paths = match &pattern {
            ToolPattern::Path { pattern: p, .. } => {
                Some(PathSet::new(std::slice::from_ref::<PathPattern>(p), true))
            }
            _ => None,
        };
        AfterPattern {
            src,
            pattern,
            paths,
        }
    }

    /// Whether the tool run `t` is one this pattern names.
    pub fn matches(&self, t: &Taint, home: Option<&str>, project: Option<&str>) -> bool {
        let tool = t.tool.as_str();
        match &self.pattern {
            ToolPattern::Tool(names) => names.iter().any(|n| n == tool),
            ToolPattern::McpPrefix(prefix) => tool.starts_with(prefix.as_str()),
            ToolPattern::Domain(d) => {
                tool == "WebFetch"
                    && d.check_host(t.detail.as_deref().and_then(url_host)) == super::tool::Tri::Yes
            }
            ToolPattern::Path { tools, .. } => {
                tools.contains(&tool)
                    && match (&self.paths, t.detail.as_deref()) {
                        (Some(set), Some(abs)) if abs.starts_with('/') => {
                            set.is_match(&ResolvedPath::new(abs, home, project))
                        }
                        _ => false,
                    }
            }
            ToolPattern::Command(c) => {
                tool == "Bash" && t.detail.as_deref().is_some_and(|d| c.is_match(d))
            }
            ToolPattern::Param { tools, .. } => tools.iter().any(|n| n == tool),
            ToolPattern::Never => false,
        }
    }
}

/// A rule's gates on session facts: all present ones must hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct Gate {
    pub limit: Option<Limit>,
    /// `budget.calls`.
    pub budget_calls: Option<u64>,
    /// `budget.usd`: a run's cost, in dollars.
    pub budget_usd: Option<f64>,
    /// `after`.
    pub after: Vec<AfterPattern>,
    /// `within`, seconds.
    pub within_secs: Option<u64>,
}

impl Gate {
    pub fn is_empty(&self) -> bool {
        self.limit.is_none()
            && self.budget_calls.is_none()
            && self.budget_usd.is_none()
            && self.after.is_empty()
    }

    /// Whether the gate lets the rule apply, and why (for explanations).
    pub fn check(
        &self,
        id: &str,
        facts: Option<&SessionFacts>,
        home: Option<&str>,
        project: Option<&str>,
    ) -> (bool, String) {
        let none = SessionFacts::default();
        let f = facts.unwrap_or(&none);
        let mut why = Vec::new();
        if let Some(l) = self.limit {
            let earlier = f.counts.get(id).copied().unwrap_or(0);
            let n = earlier.saturating_add(1);
            if n <= l.count {
                return (
                    false,
                    format!(
                        "limit not passed: call {n} of {} allowed per {} ({:?} scope)",
                        l.count,
                        show_secs(l.per_secs),
                        l.scope
                    ),
                );
            }
            why.push(format!(
                "limit passed: call {n}, over {} per {}",
                l.count,
                show_secs(l.per_secs)
            ));
        }
        if let Some(b) = self.budget_calls {
            if f.calls < b {
                return (false, format!("budget not spent: {} of {b} calls", f.calls));
            }
            why.push(format!("budget spent: {} of {b} calls", f.calls));
        }
        if let Some(b) = self.budget_usd {
            match f.run_cost_usd {
                Some(c) if c >= b => {
                    why.push(format!("budget spent: ${c:.4} of ${b} (the run's cost)"))
                }
                Some(c) => {
                    return (
                        false,
                        format!("budget not spent: ${c:.4} of ${b} (the run's cost)"),
                    )
                }
                None => {
                    return (
                        false,
                        format!(
                            "budget not spent: no run's cost known (${b} is a `hookd run` budget)"
                        ),
                    )
                }
            }
        }
        if !self.after.is_empty() {
            let cause = f.taint.iter().rev().find(|t| {
                let fresh = match (self.within_secs, f.now_ms) {
                    (Some(w), now) if now > 0 => now.saturating_sub(t.at_ms) <= w * 1000,
                    _ => true,
                };
                fresh && self.after.iter().any(|a| a.matches(t, home, project))
            });
            match cause {
                Some(t) => why.push(format!("tainted by {}", describe_taint(t))),
                None => {
                    let pats: Vec<&str> = self.after.iter().map(|a| a.src.as_str()).collect();
                    return (
                        false,
                        format!(
                            "not tainted: no {} ran in this session{}",
                            pats.join(", "),
                            self.within_secs
                                .map(|w| format!(" in the last {}", show_secs(w)))
                                .unwrap_or_default()
                        ),
                    );
                }
            }
        }
        (true, why.join("; "))
    }
}

/// `WebFetch https://example.com/x at 1700000000000`: a taint for people.
pub fn describe_taint(t: &Taint) -> String {
    match &t.detail {
        Some(d) => format!("{} {d} at {}", t.tool, t.at_ms),
        None => format!("{} at {}", t.tool, t.at_ms),
    }
}

/// `90` → `1m30s`.
pub(crate) fn show_secs(s: u64) -> String {
    match s {
        s if s % 86400 == 0 => format!("{}d", s / 86400),
        s if s % 3600 == 0 => format!("{}h", s / 3600),
        s if s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// Parse a duration such as `30s`, `10m`, `1h`, `2d` into seconds.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).ok_or_else(|| {
        format!("`{s}` has no unit: write e.g. \"30s\", \"10m\", \"1h\" or \"1d\"")
    })?;
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| {
        format!("`{s}` is not a duration: write e.g. \"30s\", \"10m\", \"1h\" or \"1d\"")
    })?;
    let mul = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86400,
        other => return Err(format!("unknown unit `{other}` in `{s}`: use s, m, h or d")),
    };
    if n == 0 {
        return Err(format!("`{s}` is zero: a window must be at least 1s"));
    }
    n.checked_mul(mul)
        .ok_or_else(|| format!("`{s}` is too long"))
}

impl super::Layers {
    /// Whether any rule of these layers reads session facts (`limit`,
    /// `budget`, `after`): without one the daemon gathers nothing.
    pub fn uses_facts(&self) -> bool {
        self.refs(None)
            .iter()
            .any(|l| l.set.rules.iter().any(|r| !r.gate.is_empty()))
    }

    /// Every rule with a `limit`, by qualified id: the counts the daemon
    /// passes in [`SessionFacts::counts`].
    pub fn limited_rules(&self) -> Vec<(String, Limit)> {
        let mut out = Vec::new();
        for l in self.refs(None) {
            for r in &l.set.rules {
                if let Some(limit) = r.gate.limit {
                    out.push((super::eval::qualified_id(&l, &r.id), limit));
                }
            }
        }
        out
    }

    /// Whether the tool run `t` taints a session for some rule's `after`:
    /// the daemon keeps only those.
    pub fn taints(
        &self,
        t: &Taint,
        home: Option<&std::path::Path>,
        project: Option<&std::path::Path>,
    ) -> bool {
        let home = super::path::normalize_dir(home);
        let project = super::path::normalize_dir(project);
        self.refs(None).iter().any(|l| {
            l.set.rules.iter().any(|r| {
                r.gate
                    .after
                    .iter()
                    .any(|a| a.matches(t, home.as_deref(), project.as_deref()))
            })
        })
    }
}
