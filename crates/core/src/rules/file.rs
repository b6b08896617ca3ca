//! Reading a rules file: TOML text → compiled [`Rule`]s, with every problem
//! reported at its `file:line:column`.
//!
//! The TOML is walked by hand over `toml`'s spanned document tree instead of
//! derived with serde, so that one pass finds *all* the errors (unknown keys,
//! wrong types, bad regexes, …) rather than stopping at the first.

use super::cond::{Cond, Field, LazyRegex, Op, Scalar};
use super::diag::{Diagnostic, RulesError, Severity, Sink};
use super::path::{glob_error, string_glob, PathPattern, PathSet};
use super::rule::{Action, Escalation, EventSet, Rule, StopLimit, EVENTS};
use super::tool;
use crate::agent::claude::HookEventKind;
use crate::agent::Agent;
use globset::GlobSetBuilder;
use std::collections::HashMap;
use std::path::Path;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

#[path = "file_gate.rs"]
mod gate;

/// Which layer a file is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layer {
    /// The user file (or the embedded defaults): may hold `[trust]`.
    User,
    /// `<project>/.claude/hookd.toml`: may not trust anything.
    Project,
    /// A file of a `[policy] sources` layer: may not trust anything.
    Policy,
}

/// The result of reading a file that has no errors.
pub(crate) struct Compiled {
    pub rules: Vec<Rule>,
    /// `[trust] projects` entries as written (absolute or `~/…`, optionally
    /// ending in `/**`).
    pub trust: Vec<String>,
    pub warnings: Vec<Diagnostic>,
    /// For `hookd rules check` only; the daemon does not log them.
    pub notes: Vec<Diagnostic>,
}

const RULE_KEYS: &[&str] = &[
    "id",
    "action",
    "tool",
    "event",
    "agent",
    "reason",
    "when",
    "repeat",
    "max_blocks",
    "limit",
    "budget",
    "after",
    "within",
    "prompt",
    "provider",
    "model",
    "timeout",
    "on_error",
    "escalate",
    "approvals_required",
];
/// What `escalate` may name.
const ESCALATE_TO: &[&str] = &["team"];
const TOP_KEYS: &[&str] = &["rule", "trust"];
const COND_OPS: &[&str] = &[
    "equals", "glob", "regex", "contains", "path", "exists", "not", "any", "all",
];
const COND_KEYS: &[&str] = &[
    "field", "equals", "glob", "regex", "contains", "path", "exists", "not", "any", "all",
];

type Value<'i> = Spanned<DeValue<'i>>;

/// Where a context rule's text cannot go: for each event in `events`, the
/// agents in scope (`agent`, else all) that fire it but take no
/// `additionalContext` from its hook, as "Gemini CLI on PreToolUse
/// (BeforeTool)". A rule for every agent is not warned about an agent that
/// takes context on no event at all (Copilot CLI): no rule could reach it,
/// and its page says so.
fn undelivered_context(events: EventSet, agent: Option<Agent>) -> Vec<String> {
    // Unless the rule names its agent, those that take context nowhere
    // (Copilot, OpenCode, Pi) are left out: no event would do for them.
    let agents = agent.map_or_else(
        || {
            Agent::ALL
                .into_iter()
                .filter(|a| a.events().iter().any(|e| e.accepts_context))
                .collect()
        },
        |a| vec![a],
    );
    let mut lost = Vec::new();
    for name in EVENTS.iter().filter(|e| events.has(EventSet::bit(e))) {
        let kind = HookEventKind::from_name(name);
        for agent in &agents {
            let Some(own) = agent.event_name(kind) else {
                continue;
            };
            if !agent.accepts_context(kind) {
                let own = if own == *name {
                    String::new()
                } else {
                    format!(" ({own})")
                };
                lost.push(format!("{} on {name}{own}", agent.display_name()));
            }
        }
    }
    lost
}

/// Read and compile `src`.
pub(crate) fn compile(src: &str, origin: &Path, layer: Layer) -> Result<Compiled, RulesError> {
    let mut r = Reader {
        sink: Sink::new(src, origin),
        layer,
        ids: HashMap::new(),
    };
    let (doc, syntax) = DeTable::parse_recoverable(src);
    if !syntax.is_empty() {
        for e in syntax {
            let at = e.span().map_or(0, |s| s.start);
            r.sink
                .error(at, format!("TOML syntax error: {}", e.message()));
        }
        return Err(RulesError::new(r.sink.items));
    }
    let mut rules = Vec::new();
    let mut trust = Vec::new();
    for (key, value) in doc.get_ref().iter() {
        match key.get_ref().as_ref() {
            "rule" => match value.get_ref() {
                DeValue::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        if let Some(rule) = r.rule(item, i + 1) {
                            rules.push(rule);
                        }
                    }
                }
                DeValue::Table(_) => r.sink.error(
                    value.span().start,
                    "`rule` must be an array of tables: write `[[rule]]`, not `[rule]`",
                ),
                other => r.sink.error(
                    value.span().start,
                    format!(
                        "`rule` must be an array of tables (`[[rule]]`), found {}",
                        other.type_str()
                    ),
                ),
            },
            "trust" => trust = r.trust(key, value),
            other => r.unknown_key(key, other, "top-level key", TOP_KEYS),
        }
    }
    if r.sink.has_errors() {
        // Notes are for a file that loads; next to errors they are noise.
        let items = r.sink.items.into_iter();
        return Err(RulesError::new(
            items.filter(|d| d.severity != Severity::Note).collect(),
        ));
    }
    let (mut notes, mut warnings): (Vec<_>, Vec<_>) = r
        .sink
        .items
        .into_iter()
        .partition(|d| d.severity == Severity::Note);
    super::diag::sort(&mut warnings);
    super::diag::sort(&mut notes);
    Ok(Compiled {
        rules,
        trust,
        warnings,
        notes,
    })
}

/// What a `[[rule]]` table's keys say, read one key at a time; the checks
/// across keys come after.
struct RuleKeys {
    action: Option<Action>,
    /// `action = "judge"` and its keys (see `judge.rs`).
    judge: super::judge_keys::JudgeKeys,
    reason: Option<String>,
    /// `None` without an `event` key; `event = "*"` is `EventSet::all()`.
    events: Option<EventSet>,
    /// Where `event` is written, else the rule's header.
    event_span: usize,
    agent: Option<Agent>,
    tools: Vec<tool::ToolPattern>,
    /// Each of `tools` as written.
    tool_src: Vec<String>,
    when: Vec<Cond>,
    /// The conditions judged per Bash command (they use `$command` and
    /// friends).
    per_command: Vec<Cond>,
    /// `repeat`, with where it is written.
    repeat: Option<(bool, usize)>,
    /// `max_blocks`, with where it is written.
    max_blocks: Option<(u32, usize)>,
    /// `limit`, `budget`, `after`, `within`.
    gate: super::facts::Gate,
    /// Where `within` is written, to report it without `after`.
    within_at: Option<usize>,
    /// `escalate = "team"`, with where it is written.
    escalate: Option<usize>,
    /// `approvals_required`, with where it is written.
    approvals: Option<(u32, usize)>,
}

impl RuleKeys {
    fn new(header: usize) -> RuleKeys {
        RuleKeys {
            action: None,
            judge: Default::default(),
            reason: None,
            events: None,
            event_span: header,
            agent: None,
            tools: Vec::new(),
            tool_src: Vec::new(),
            when: Vec::new(),
            per_command: Vec::new(),
            repeat: None,
            max_blocks: None,
            gate: Default::default(),
            within_at: None,
            escalate: None,
            approvals: None,
        }
    }

    /// The rule these keys make, with what the checks across them decided.
    fn into_rule(
        self,
        id: String,
        action: Action,
        events: EventSet,
        stop_limit: Option<StopLimit>,
        escalate: Option<Escalation>,
        line: usize,
    ) -> Rule {
        let programs = self
            .tools
            .iter()
            .map(|p| match p {
                tool::ToolPattern::Command(c) => c.program().map(str::to_string),
                _ => None,
            })
            .collect();
        Rule {
            id,
            programs,
            action,
            reason: self.reason,
            events,
            agent: self.agent,
            tools: self.tools,
            tool_src: self.tool_src,
            when: self.when,
            per_command: self.per_command,
            needs: Box::default(),
            per_view_only: false,
            line,
            stop_limit,
            gate: self.gate,
            judge: self.judge.spec.map(Box::new),
            escalate,
        }
    }
}

struct Reader<'a> {
    sink: Sink<'a>,
    layer: Layer,
    /// Rule id → line of its first use.
    ids: HashMap<String, usize>,
}

impl Reader<'_> {
    fn unknown_key(
        &mut self,
        key: &Spanned<std::borrow::Cow<'_, str>>,
        name: &str,
        what: &str,
        known: &[&str],
    ) {
        let hint = suggest(name, known)
            .map(|s| format!("; did you mean `{s}`?"))
            .unwrap_or_else(|| format!("; expected one of {}", quote_list(known)));
        self.sink
            .error(key.span().start, format!("unknown {what} `{name}`{hint}"));
    }

    fn trust(
        &mut self,
        key: &Spanned<std::borrow::Cow<'_, str>>,
        value: &Value<'_>,
    ) -> Vec<String> {
        if self.layer != Layer::User {
            let why = match self.layer {
                Layer::Project => "a project file cannot trust itself",
                _ => "a policy source cannot trust projects for the user",
            };
            self.sink.error(
                key.span().start,
                format!("`[trust]` is only read from the user rules file: {why}"),
            );
            return Vec::new();
        }
        let DeValue::Table(t) = value.get_ref() else {
            self.sink.error(
                value.span().start,
                format!(
                    "`trust` must be a table, found {}",
                    value.get_ref().type_str()
                ),
            );
            return Vec::new();
        };
        let mut out = Vec::new();
        for (k, v) in t.iter() {
            if k.get_ref() != "projects" {
                self.unknown_key(k, k.get_ref(), "key in `[trust]`", &["projects"]);
                continue;
            }
            for (s, span) in self.strings(v, "", "trust.projects") {
                let ok =
                    (s.starts_with('/') || s == "~" || s.starts_with("~/")) && !s.contains("//");
                let glob_ok = !s.contains(['*', '?', '['])
                    || (s.ends_with("/**") && !s[..s.len() - 3].contains(['*', '?', '[']));
                if !ok || !glob_ok {
                    self.sink.error(
                        span,
                        format!("`trust.projects`: `{s}` must be an absolute path or start with `~/`, optionally ending in `/**`"),
                    );
                } else {
                    out.push(s);
                }
            }
        }
        out
    }

    /// A string or an array of strings, with spans; type errors are reported
    /// as `{label}: `{field}`: …`.
    fn strings(&mut self, v: &Value<'_>, label: &str, field: &str) -> Vec<(String, usize)> {
        let field = if label.is_empty() {
            format!("`{field}`")
        } else {
            format!("{label}: `{field}`")
        };
        match v.get_ref() {
            DeValue::String(s) => vec![(s.to_string(), v.span().start)],
            DeValue::Array(items) => {
                let mut out = Vec::new();
                for item in items.iter() {
                    match item.get_ref() {
                        DeValue::String(s) => out.push((s.to_string(), item.span().start)),
                        other => self.sink.error(
                            item.span().start,
                            format!("{field}: expected a string, found {}", other.type_str()),
                        ),
                    }
                }
                if items.is_empty() {
                    self.sink
                        .error(v.span().start, format!("{field}: empty list"));
                }
                out
            }
            other => {
                self.sink.error(
                    v.span().start,
                    format!(
                        "{field}: expected a string or a list of strings, found {}",
                        other.type_str()
                    ),
                );
                Vec::new()
            }
        }
    }

    /// Compile the `n`th `[[rule]]` table: its id, each key, then the checks
    /// across keys. `None` when it has an error (reported).
    fn rule(&mut self, item: &Value<'_>, n: usize) -> Option<Rule> {
        let header = item.span().start;
        let line = self.sink.locate(header).0;
        let DeValue::Table(t) = item.get_ref() else {
            self.sink.error(
                header,
                format!(
                    "rule #{n}: expected a table, found {}",
                    item.get_ref().type_str()
                ),
            );
            return None;
        };
        let errors_before = self.sink.items.len();
        // The id first, so every later message can name the rule.
        let id = self.rule_id(t, n, line);
        let label = match &id {
            Some(s) => format!("rule {s:?}"),
            None => format!("rule #{n}"),
        };
        if id.is_none() && get(t, "id").is_none() {
            self.sink
                .error(header, format!("{label}: missing required field `id`"));
        }

        let mut keys = RuleKeys::new(header);
        for (k, v) in t.iter() {
            self.rule_key(k, v, &label, &mut keys);
        }
        let Some(action) = keys.action else {
            if get(t, "action").is_none() {
                self.sink.error(
                    header,
                    format!(
                        "{label}: missing required field `action` (allow, deny, ask or context)"
                    ),
                );
            }
            return None;
        };
        keys.judge.finish(&mut self.sink, &label, header);
        let (events, stop_limit) = self.rule_checks(action, &keys, &label, header);
        if let (Some(at), true) = (keys.within_at, keys.gate.after.is_empty()) {
            if get(t, "after").is_none() {
                self.sink.error(
                    at,
                    format!(
                        "{label}: `within` needs `after` (the tools whose run taints the session)"
                    ),
                );
            }
        }
        let escalate = self.escalation(action, &keys, &label);
        if self.sink.items[errors_before..]
            .iter()
            .any(|d| d.severity == Severity::Error)
        {
            return None;
        }
        Some(keys.into_rule(id?, action, events, stop_limit, escalate, line))
    }

    /// A rule's `id`, remembered with the rule's `line` so a second use is
    /// reported. `None` without one, or (reported) when it is not a
    /// non-empty string.
    fn rule_id(&mut self, t: &DeTable<'_>, n: usize, line: usize) -> Option<String> {
        let v = get(t, "id")?;
        match v.get_ref() {
            DeValue::String(s) if !s.trim().is_empty() => {
                let s = s.to_string();
                if let Some(first) = self.ids.get(&s) {
                    self.sink.error(
                        v.span().start,
                        format!("rule {s:?}: `id`: duplicate id (first used by the rule on line {first})"),
                    );
                } else {
                    self.ids.insert(s.clone(), line);
                }
                Some(s)
            }
            DeValue::String(_) => {
                self.sink
                    .error(v.span().start, format!("rule #{n}: `id` must not be empty"));
                None
            }
            other => {
                self.sink.error(
                    v.span().start,
                    format!(
                        "rule #{n}: `id` must be a string, found {}",
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// Read one key of a `[[rule]]` table into `keys` (`id` is read first, by
    /// `rule_id`).
    fn rule_key(
        &mut self,
        k: &Spanned<std::borrow::Cow<'_, str>>,
        v: &Value<'_>,
        label: &str,
        keys: &mut RuleKeys,
    ) {
        match k.get_ref().as_ref() {
            "id" => {}
            "action" if super::judge_keys::is_judge(v) => {
                keys.judge.action(v.span().start);
                keys.action = Some(Action::Deny);
            }
            "action" => keys.action = self.action(v, label),
            "prompt" | "provider" | "model" | "timeout" | "on_error" => {
                keys.judge.key(&mut self.sink, k.get_ref(), v, label)
            }
            "agent" => keys.agent = self.agent(v, label),
            "reason" => keys.reason = self.reason(v, label),
            "tool" => self.tools(v, label, keys),
            "event" => {
                keys.event_span = v.span().start;
                keys.events = Some(self.events(v, label));
            }
            "when" => self.when(v, label, keys),
            "repeat" => keys.repeat = self.repeat(v, label),
            "max_blocks" => keys.max_blocks = self.max_blocks(v, label),
            "limit" => keys.gate.limit = self.limit(v, label),
            "budget" => (keys.gate.budget_calls, keys.gate.budget_usd) = self.budget(v, label),
            "after" => keys.gate.after = self.after(v, label),
            "within" => {
                keys.within_at = Some(v.span().start);
                keys.gate.within_secs = self.within(v, label);
            }
            "escalate" => keys.escalate = self.escalate(v, label),
            "approvals_required" => keys.approvals = self.approvals(v, label),
            other => self.unknown_key(k, other, &format!("key in {label}:"), RULE_KEYS),
        }
    }

    /// `action`: allow, deny, ask or context.
    fn action(&mut self, v: &Value<'_>, label: &str) -> Option<Action> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::String(s) => {
                let action = Action::parse(s);
                if action.is_none() {
                    self.sink.error(
                        at,
                        format!("{label}: `action`: unknown action {s:?}; expected one of allow, deny, ask, context, judge"),
                    );
                }
                action
            }
            other => {
                self.sink.error(
                    at,
                    format!("{label}: `action` must be a string (allow, deny, ask or context), found {}", other.type_str()),
                );
                None
            }
        }
    }

    /// `agent`: the one agent a rule is for.
    fn agent(&mut self, v: &Value<'_>, label: &str) -> Option<Agent> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::String(s) => {
                let agent = Agent::from_name(s);
                if agent.is_none() {
                    self.sink.error(
                        at,
                        format!(
                            "{label}: `agent`: unknown agent {s:?}; expected one of {}",
                            agent_names().join(", ")
                        ),
                    );
                }
                agent
            }
            other => {
                self.sink.error(
                    at,
                    format!(
                        "{label}: `agent` must be a string (one of {}), found {}",
                        agent_names().join(", "),
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// `reason`: the text shown with a verdict (a context rule's context).
    fn reason(&mut self, v: &Value<'_>, label: &str) -> Option<String> {
        match v.get_ref() {
            DeValue::String(s) => Some(s.to_string()),
            other => {
                self.sink.error(
                    v.span().start,
                    format!(
                        "{label}: `reason` must be a string, found {}",
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// `tool`: one pattern or a list, each kept with its source text.
    fn tools(&mut self, v: &Value<'_>, label: &str, keys: &mut RuleKeys) {
        for (s, span) in self.strings(v, label, "tool") {
            match tool::parse(&s) {
                Ok(p) => {
                    if let Some(w) = p.warning {
                        self.sink.warn(span, format!("{label}: `tool`: {w}"));
                    }
                    keys.tools.push(p.pattern);
                    keys.tool_src.push(s);
                }
                Err(e) => self.sink.error(span, format!("{label}: `tool`: {e}")),
            }
        }
    }

    /// `event`: hook event names, or `*` alone for every event.
    fn events(&mut self, v: &Value<'_>, label: &str) -> EventSet {
        let mut set = EventSet::EMPTY;
        let names = self.strings(v, label, "event");
        let star = names.iter().any(|(s, _)| s == "*");
        for (s, span) in &names {
            if s == "*" {
                if names.len() > 1 {
                    self.sink.error(
                        *span,
                        format!("{label}: `event`: `*` already means every event; list names or use `*` alone"),
                    );
                }
            } else if EventSet::known(s) {
                set.insert(s);
            } else {
                let hint = suggest(s, EVENTS)
                    .map(|x| format!("did you mean `{x}`?"))
                    .unwrap_or_else(|| {
                        "see the Claude Code hook event list (PreToolUse, PermissionRequest, PostToolUse, Stop, …)".to_string()
                    });
                self.sink.error(
                    *span,
                    format!("{label}: `event`: unknown event {s:?}; {hint}"),
                );
            }
        }
        if star {
            EventSet::all()
        } else {
            set
        }
    }

    /// `when`: a condition table or a list of them; a condition over
    /// `$command` and the like goes to `per_command`.
    fn when(&mut self, v: &Value<'_>, label: &str, keys: &mut RuleKeys) {
        let items: Vec<&Value<'_>> = match v.get_ref() {
            DeValue::Array(a) => a.iter().collect(),
            DeValue::Table(_) => vec![v],
            other => {
                self.sink.error(
                    v.span().start,
                    format!(
                        "{label}: `when` must be a list of condition tables, found {}",
                        other.type_str()
                    ),
                );
                Vec::new()
            }
        };
        for (i, c) in items.into_iter().enumerate() {
            let where_ = format!("when[{}]", i + 1);
            if let Some(c) = self.cond(c, None, label, &where_) {
                if c.per_command() {
                    keys.per_command.push(c);
                } else {
                    keys.when.push(c);
                }
            }
        }
    }

    /// `repeat`, with where it is written.
    fn repeat(&mut self, v: &Value<'_>, label: &str) -> Option<(bool, usize)> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::Boolean(b) => Some((*b, at)),
            other => {
                self.sink.error(
                    at,
                    format!(
                        "{label}: `repeat` must be true or false, found {}",
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// `max_blocks`, with where it is written.
    fn max_blocks(&mut self, v: &Value<'_>, label: &str) -> Option<(u32, usize)> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::Integer(i) => {
                match i64::from_str_radix(i.as_str(), i.radix())
                    .ok()
                    .and_then(|n| u32::try_from(n).ok())
                {
                    Some(n) if n >= 1 => Some((n, at)),
                    _ => {
                        self.sink.error(
                            at,
                            format!("{label}: `max_blocks` must be a whole number of at least 1 (how many times the rule may block in one stop chain)"),
                        );
                        None
                    }
                }
            }
            other => {
                self.sink.error(
                    at,
                    format!(
                        "{label}: `max_blocks` must be a whole number, found {}",
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// `escalate`: where else the ask goes (`"team"`, the only place).
    fn escalate(&mut self, v: &Value<'_>, label: &str) -> Option<usize> {
        let at = v.span().start;
        match v.get_ref() {
            DeValue::String(s) if ESCALATE_TO.contains(&s.as_ref()) => Some(at),
            DeValue::String(s) => {
                let hint = suggest(s, ESCALATE_TO)
                    .map(|x| format!("did you mean `{x}`?"))
                    .unwrap_or_else(|| format!("expected {}", quote_list(ESCALATE_TO)));
                self.sink.error(
                    at,
                    format!("{label}: `escalate`: unknown target {s:?}; {hint}"),
                );
                None
            }
            other => {
                self.sink.error(
                    at,
                    format!(
                        "{label}: `escalate` must be a string (\"team\"), found {}",
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// `approvals_required`, with where it is written.
    fn approvals(&mut self, v: &Value<'_>, label: &str) -> Option<(u32, usize)> {
        let at = v.span().start;
        let max = Escalation::MAX_APPROVALS;
        match v.get_ref() {
            DeValue::Integer(i) => {
                match i64::from_str_radix(i.as_str(), i.radix())
                    .ok()
                    .and_then(|n| u32::try_from(n).ok())
                {
                    Some(n) if (1..=max).contains(&n) => Some((n, at)),
                    _ => {
                        self.sink.error(
                            at,
                            format!("{label}: `approvals_required` must be a whole number from 1 to {max} (how many different team approvers must allow the ask)"),
                        );
                        None
                    }
                }
            }
            other => {
                self.sink.error(
                    at,
                    format!(
                        "{label}: `approvals_required` must be a whole number, found {}",
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// `escalate` and `approvals_required` across the rule: only an ask
    /// is escalated, and approvals are counted only where it is.
    fn escalation(&mut self, action: Action, keys: &RuleKeys, label: &str) -> Option<Escalation> {
        if let Some(at) = keys.escalate.filter(|_| action != Action::Ask) {
            self.sink.error(
                at,
                format!("{label}: `escalate` sends an ask to the team's approvers; only ask rules ask (this one is {action})"),
            );
            return None;
        }
        match (keys.escalate, keys.approvals) {
            (Some(_), approvals) => Some(Escalation {
                approvals_required: approvals.map_or(1, |(n, _)| n),
            }),
            (None, Some((_, at))) => {
                self.sink.error(
                    at,
                    format!("{label}: `approvals_required` counts team approvers; add `escalate = \"team\"` so the ask goes to them"),
                );
                None
            }
            (None, None) => None,
        }
    }

    /// The checks across a rule's keys, once it has an action. Returns the
    /// events it is judged on (the default set without `event`) and its
    /// stop limit.
    fn rule_checks(
        &mut self,
        action: Action,
        keys: &RuleKeys,
        label: &str,
        header: usize,
    ) -> (EventSet, Option<StopLimit>) {
        if action == Action::Context && keys.reason.is_none() {
            self.sink.error(
                header,
                format!("{label}: `action = \"context\"` needs a `reason`: it is the text added as additionalContext"),
            );
        }
        // The events a rule names: context rules are checked against them
        // (`*` means "wherever it can go", the default is PreToolUse's).
        let named_events = keys.events.filter(|e| *e != EventSet::all());
        let events = keys.events.unwrap_or_else(EventSet::default_set);
        if let Some(named) = named_events.filter(|_| action == Action::Context) {
            let lost = undelivered_context(named, keys.agent);
            if !lost.is_empty() {
                self.sink.warn(
                    keys.event_span,
                    format!("{label}: this context never reaches {}: the agent takes no additionalContext there; name events it does take context on (SessionStart, UserPromptSubmit, PostToolUse, …) or say which `agent` the rule is for", lost.join(", ")),
                );
            }
        }
        let stop_limit = self.stop_limit(action, keys, events, label, header);
        if !keys.tools.is_empty() && !events.has_tool_event() && events != EventSet::EMPTY {
            self.sink.warn(
                keys.event_span,
                format!("{label}: `tool` only matches tool events (PreToolUse, PermissionRequest, PermissionDenied, PostToolUse, PostToolUseFailure), and `event` names none, so this rule can never match"),
            );
        }
        if self.layer == Layer::Project && matches!(action, Action::Allow | Action::Context) {
            self.sink.warn(
                header,
                format!("{label}: a project file's `{action}` rules apply only if the user rules file trusts this project (`[trust] projects`)"),
            );
        }
        (events, stop_limit)
    }

    /// How often a rule blocks a stop chain: `repeat` or `max_blocks` (not
    /// both, and only on a deny or ask rule that can see a stop event), else
    /// once, which a stop rule is told about.
    fn stop_limit(
        &mut self,
        action: Action,
        keys: &RuleKeys,
        events: EventSet,
        label: &str,
        header: usize,
    ) -> Option<StopLimit> {
        let (repeat, max_blocks) = (keys.repeat, keys.max_blocks);
        let stop_limit = match (repeat, max_blocks) {
            (Some((_, at)), Some(_)) => {
                self.sink.error(
                    at,
                    format!("{label}: give `repeat = true` (block every time) or `max_blocks = N`, not both"),
                );
                None
            }
            (Some((true, _)), None) => Some(StopLimit::Always),
            (Some((false, _)), None) => Some(StopLimit::DEFAULT),
            (None, Some((n, _))) => Some(StopLimit::Times(n)),
            (None, None) => None,
        };
        if let Some(at) = repeat.map(|r| r.1).or(max_blocks.map(|m| m.1)) {
            let key = if repeat.is_some() {
                "repeat"
            } else {
                "max_blocks"
            };
            if !matches!(action, Action::Deny | Action::Ask) {
                self.sink.error(
                    at,
                    format!("{label}: `{key}` says how often a rule blocks Stop and SubagentStop; only deny and ask rules block"),
                );
            } else if !events.has_stop_event() {
                self.sink.warn(
                    at,
                    format!("{label}: `{key}` only applies to Stop and SubagentStop, and `event` names neither"),
                );
            }
        }
        if matches!(action, Action::Deny | Action::Ask)
            && keys.tools.is_empty()
            && events.has_stop_event()
            && stop_limit.is_none()
        {
            self.sink.note(
                header,
                format!("{label}: blocks Stop/SubagentStop once per stop chain: when Claude Code stops again after this block (`stop_hook_active`), the rule lets it; add `max_blocks = N` or `repeat = true` to block again"),
            );
        }
        stop_limit
    }

    /// Compile one condition table. `inherited` is the enclosing `field`.
    fn cond(
        &mut self,
        v: &Value<'_>,
        inherited: Option<(&str, &Field)>,
        label: &str,
        where_: &str,
    ) -> Option<Cond> {
        let at = v.span().start;
        let DeValue::Table(t) = v.get_ref() else {
            self.sink.error(
                at,
                format!("{label}: `{where_}` must be a table such as {{ field = \"tool_input.command\", regex = \"…\" }}, found {}", v.get_ref().type_str()),
            );
            return None;
        };
        let own_field = self.cond_field(t, label, where_)?;
        let field: Option<(&str, &Field)> = own_field
            .as_ref()
            .map(|(s, f)| (s.as_str(), f))
            .or(inherited);
        let op_name = self.cond_operator(t, at, label, where_)?;
        let operand = get(t, &op_name)?;
        let op_where = format!("{where_}.{op_name}");
        match op_name.as_str() {
            "not" => {
                let inner = self.cond(operand, field, label, &op_where)?;
                Some(Cond::Not(Box::new(inner)))
            }
            "any" | "all" => self.cond_list(operand, field, label, &op_where, op_name == "any"),
            _ => {
                let Some((fname, field)) = field else {
                    self.sink.error(
                        at,
                        format!("{label}: `{where_}` needs a `field` (a dotted input path such as `tool_input.command`, or one of $command, $command.args, $pipeline, $path)"),
                    );
                    return None;
                };
                let op = self.leaf_op(&op_name, operand, label, &op_where)?;
                Some(Cond::Leaf {
                    field: field.clone(),
                    name: fname.to_string(),
                    op: Box::new(op),
                    slot: None,
                })
            }
        }
    }

    /// A condition's own `field`: `Some(None)` without one, `None` (reported)
    /// when it is not a string naming a field.
    fn cond_field(
        &mut self,
        t: &DeTable<'_>,
        label: &str,
        where_: &str,
    ) -> Option<Option<(String, Field)>> {
        let Some(f) = get(t, "field") else {
            return Some(None);
        };
        match f.get_ref() {
            DeValue::String(s) => match Field::parse(s) {
                Ok(field) => Some(Some((s.to_string(), field))),
                Err(e) => {
                    self.sink
                        .error(f.span().start, format!("{label}: `{where_}.field`: {e}"));
                    None
                }
            },
            other => {
                self.sink.error(
                    f.span().start,
                    format!(
                        "{label}: `{where_}.field` must be a string, found {}",
                        other.type_str()
                    ),
                );
                None
            }
        }
    }

    /// The name of a condition's one operator (see `COND_OPS`); unknown keys
    /// are reported, and so are no operator or several (then `None`).
    fn cond_operator(
        &mut self,
        t: &DeTable<'_>,
        at: usize,
        label: &str,
        where_: &str,
    ) -> Option<String> {
        let mut ops = Vec::new();
        let mut unknown = false;
        for (k, _) in t.iter() {
            let name = k.get_ref().as_ref();
            if COND_OPS.contains(&name) {
                ops.push(name.to_string());
            } else if name != "field" {
                unknown = true;
                self.unknown_key(k, name, &format!("key in {label}: `{where_}`:"), COND_KEYS);
            }
        }
        if ops.is_empty() && unknown {
            // The unknown key (probably a misspelt operator) says it all.
            return None;
        }
        if ops.len() != 1 {
            let msg = if ops.is_empty() {
                format!(
                    "{label}: `{where_}` needs one operator: {}",
                    quote_list(COND_OPS)
                )
            } else {
                format!(
                    "{label}: `{where_}` has several operators ({}); use one per condition, or `all = [...]`",
                    quote_list(&ops.iter().map(String::as_str).collect::<Vec<_>>())
                )
            };
            self.sink.error(at, msg);
            return None;
        }
        ops.pop()
    }

    /// `any = [...]` (`any` true) or `all = [...]`: a non-empty list of
    /// conditions, each inheriting `field`. Every item is read (and its
    /// problems reported) before one that fails makes this `None`.
    fn cond_list(
        &mut self,
        operand: &Value<'_>,
        field: Option<(&str, &Field)>,
        label: &str,
        op_where: &str,
        any: bool,
    ) -> Option<Cond> {
        let oat = operand.span().start;
        let DeValue::Array(items) = operand.get_ref() else {
            self.sink.error(
                oat,
                format!(
                    "{label}: `{op_where}` must be a list of conditions, found {}",
                    operand.get_ref().type_str()
                ),
            );
            return None;
        };
        if items.is_empty() {
            self.sink
                .error(oat, format!("{label}: `{op_where}` is an empty list"));
            return None;
        }
        let mut cs = Vec::new();
        for (i, c) in items.iter().enumerate() {
            cs.push(self.cond(c, field, label, &format!("{op_where}[{}]", i + 1)));
        }
        let cs: Option<Vec<Cond>> = cs.into_iter().collect();
        let cs = cs?;
        Some(if any { Cond::Any(cs) } else { Cond::All(cs) })
    }

    /// The operator of a leaf condition (one that tests a field), named
    /// `op_name` with `operand` written at `op_where`.
    fn leaf_op(
        &mut self,
        op_name: &str,
        operand: &Value<'_>,
        label: &str,
        op_where: &str,
    ) -> Option<Op> {
        let op = match op_name {
            "equals" => Op::Equals(self.scalars(operand, label, op_where)?),
            "exists" => match operand.get_ref() {
                DeValue::Boolean(b) => Op::Exists(*b),
                other => {
                    self.sink.error(
                        operand.span().start,
                        format!(
                            "{label}: `{op_where}` must be true or false, found {}",
                            other.type_str()
                        ),
                    );
                    return None;
                }
            },
            "contains" => {
                let items = self.strings(operand, label, op_where);
                Op::Contains(items.into_iter().map(|(s, _)| s).collect())
            }
            "regex" => Op::Regex(self.regexes(operand, label, op_where)),
            "glob" => self.glob_op(operand, label, op_where)?,
            "path" => self.path_op(operand, label, op_where),
            _ => return None,
        };
        Some(op)
    }

    /// `regex`: the patterns that compile; the others are reported.
    fn regexes(&mut self, operand: &Value<'_>, label: &str, op_where: &str) -> Vec<LazyRegex> {
        let mut rs = Vec::new();
        for (s, span) in self.strings(operand, label, op_where) {
            match LazyRegex::new(&s) {
                Ok(r) => rs.push(r),
                Err(e) => self.sink.error(
                    span,
                    format!(
                        "{label}: `{op_where}`: invalid regex `{s}`: {}",
                        regex_error(&e)
                    ),
                ),
            }
        }
        rs
    }

    /// `glob`: the globs that parse, as one set; the others are reported.
    fn glob_op(&mut self, operand: &Value<'_>, label: &str, op_where: &str) -> Option<Op> {
        let mut b = GlobSetBuilder::new();
        let mut src = Vec::new();
        for (s, span) in self.strings(operand, label, op_where) {
            match string_glob(&s) {
                Ok(g) => {
                    b.add(g);
                    src.push(s);
                }
                Err(e) => self.sink.error(
                    span,
                    format!("{label}: `{op_where}`: invalid glob `{s}`: {e}"),
                ),
            }
        }
        match b.build() {
            Ok(set) => Some(Op::Glob { set, src }),
            Err(e) => {
                self.sink.error(
                    operand.span().start,
                    format!("{label}: `{op_where}`: {}", glob_error(&e)),
                );
                None
            }
        }
    }

    /// `path`: the path patterns that parse; the others are reported.
    fn path_op(&mut self, operand: &Value<'_>, label: &str, op_where: &str) -> Op {
        let mut pats = Vec::new();
        let mut src = Vec::new();
        for (s, span) in self.strings(operand, label, op_where) {
            match PathPattern::parse(&s) {
                Ok(p) => {
                    pats.push(p);
                    src.push(s);
                }
                Err(e) => self.sink.error(span, format!("{label}: `{op_where}`: {e}")),
            }
        }
        Op::Path {
            set: Box::new(PathSet::new(&pats, false)),
            src,
        }
    }

    fn scalars(&mut self, v: &Value<'_>, label: &str, where_: &str) -> Option<Vec<Scalar>> {
        let one = |this: &mut Self, v: &Value<'_>| -> Option<Scalar> {
            let s = match v.get_ref() {
                DeValue::String(s) => Scalar::Str(s.to_string()),
                DeValue::Boolean(b) => Scalar::Bool(*b),
                DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                    Ok(n) => Scalar::Int(n),
                    Err(_) => {
                        this.sink.error(
                            v.span().start,
                            format!("{label}: `{where_}`: integer out of range"),
                        );
                        return None;
                    }
                },
                DeValue::Float(f) => Scalar::Float(f.as_str().parse().unwrap_or(f64::NAN)),
                other => {
                    this.sink.error(
                        v.span().start,
                        format!(
                            "{label}: `{where_}` must be a string, number or boolean, found {}",
                            other.type_str()
                        ),
                    );
                    return None;
                }
            };
            Some(s)
        };
        match v.get_ref() {
            DeValue::Array(items) if items.is_empty() => {
                self.sink
                    .error(v.span().start, format!("{label}: `{where_}`: empty list"));
                None
            }
            DeValue::Array(items) => items.iter().map(|i| one(self, i)).collect(),
            _ => one(self, v).map(|s| vec![s]),
        }
    }
}

fn get<'t, 'i>(t: &'t DeTable<'i>, key: &str) -> Option<&'t Value<'i>> {
    t.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
}

/// The useful line of a regex syntax error (its Display draws a diagram).
fn regex_error(e: &regex::Error) -> String {
    let text = e.to_string();
    text.lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or(text.lines().last().unwrap_or(""))
        .to_string()
}

fn quote_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The closest candidate within a small edit distance, for "did you mean".
pub(crate) fn suggest<'c>(name: &str, candidates: &[&'c str]) -> Option<&'c str> {
    let best = candidates
        .iter()
        .map(|c| {
            (
                edit_distance(&name.to_ascii_lowercase(), &c.to_ascii_lowercase()),
                *c,
            )
        })
        .min_by_key(|(d, _)| *d)?;
    (best.0 <= 2.max(name.len() / 4)).then_some(best.1)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Every agent's name as a rule's `agent` spells it.
fn agent_names() -> Vec<&'static str> {
    Agent::ALL.iter().map(|a| a.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(suggest("rules", TOP_KEYS), Some("rule"));
        assert_eq!(suggest("acton", RULE_KEYS), Some("action"));
        assert_eq!(suggest("PreToolUs", EVENTS), Some("PreToolUse"));
        assert_eq!(suggest("zzzzzz", RULE_KEYS), None);
    }
}
