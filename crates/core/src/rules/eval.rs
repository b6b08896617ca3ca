//! Evaluation: which rules match a hook input, and the resulting verdict.
//!
//! Each [`RuleSet`] carries an [`Index`] built once at load:
//! rules by tool name, `Bash(...)` patterns by program name, MCP prefixes,
//! and every path pattern in three glob sets. An evaluation looks up the few
//! candidate rules for the input's tool (and, for Bash, for each command's
//! program) and runs [`match_rule`] on each; `explain` runs the same
//! `match_rule` on every rule, so the two cannot disagree.
//!
//! # A command too large to analyse
//!
//! A Bash command past the splitter's caps (`shell.rs`: over 1 MiB, over
//! 4,096 simple commands, …) is not split. It is judged conservatively, as
//! an unreadable command is: a deny or ask rule matches if it *might*: its
//! `Bash(...)` pattern names no fixed program, or the program appears in the
//! command as a word (quotes and backslashes removed, so `r''m` is `rm`),
//! and its per-command conditions (`$command`, `$command.args`,
//! `$pipeline`) are taken to hold. Allow and context rules match only if
//! they cover every Bash command (`Bash`, `Bash(*)`, no `tool`) without
//! per-command conditions. A deny or ask decided this way says so in its
//! reason. Evaluation stays linear: one pass over the command.

use super::cond::{CommandScope, CondSets, Env, SetCache, ViewScope};
use super::path::{
    normalize_borrowed, normalize_dir_borrowed, resolve, Base, PathPattern, PathSet, ResolvedPath,
};
use super::rule::{Action, Escalation, EventSet, Rule, StopLimit, STOP_EVENTS};
use super::shell::{split, ParsedCommand};
use super::tool::{path_field, url_host, CommandPattern, ToolPattern, Tri};
use super::{Evaluation, Query, RuleSet};
use crate::agent::claude::InputFields;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;

/// A rule in an index list, with its events so lookups can skip rules for
/// other events without touching the rule.
#[derive(Debug, Clone, Copy)]
struct PatRef {
    rule: u32,
    events: EventSet,
}

/// Candidate lookup tables for one rule set.
#[derive(Debug, Clone, Default)]
pub(crate) struct Index {
    /// Tool name → rules with a bare-name, param or domain pattern for it.
    by_tool: HashMap<String, Vec<PatRef>>,
    /// MCP name prefixes.
    mcp: Vec<(String, PatRef)>,
    /// Program name → rules with a `Bash(...)` pattern fixing that program.
    by_program: HashMap<String, Vec<PatRef>>,
    /// Rules with a `Bash(...)` pattern that can match any program, and rules
    /// without `tool` (judged per command on Bash inputs).
    any_program: Vec<PatRef>,
    /// Rules without `tool`.
    toolless: Vec<PatRef>,
    /// All path patterns of all rules, with `below` semantics.
    paths: PathSet,
    /// Path pattern id → rule.
    path_rules: Vec<PatRef>,
}

impl Index {
    /// Build the index, assigning path pattern ids inside `rules`.
    pub fn build(rules: &mut [Rule]) -> Index {
        let mut ix = Index::default();
        let mut path_patterns: Vec<PathPattern> = Vec::new();
        for (ri, rule) in rules.iter_mut().enumerate() {
            let r = PatRef {
                rule: ri as u32,
                events: rule.events,
            };
            if rule.tools.is_empty() {
                ix.toolless.push(r);
                ix.any_program.push(r);
            }
            let push = |list: &mut Vec<PatRef>| {
                if list.last().map(|p| p.rule) != Some(r.rule) {
                    list.push(r);
                }
            };
            for p in rule.tools.iter_mut() {
                match p {
                    ToolPattern::Tool(names) | ToolPattern::Param { tools: names, .. } => {
                        for n in names.iter() {
                            push(ix.by_tool.entry(n.clone()).or_default());
                        }
                    }
                    ToolPattern::Domain(_) => {
                        push(ix.by_tool.entry("WebFetch".into()).or_default())
                    }
                    ToolPattern::McpPrefix(prefix) => ix.mcp.push((prefix.clone(), r)),
                    ToolPattern::Command(c) => match c.program() {
                        Some(prog) => push(ix.by_program.entry(prog.to_string()).or_default()),
                        None => push(&mut ix.any_program),
                    },
                    ToolPattern::Path { pattern, id, .. } => {
                        *id = path_patterns.len();
                        path_patterns.push(pattern.clone());
                        ix.path_rules.push(r);
                    }
                    ToolPattern::Never => {}
                }
            }
        }
        ix.paths = PathSet::new(&path_patterns, true);
        ix
    }
}

/// The hook input, prepared once per evaluation: event bit, tool, resolved
/// directories, the path a file tool touches, the split Bash command.
pub(crate) struct Subject<'q> {
    pub event: &'q str,
    pub agent: crate::agent::Agent,
    pub event_bit: u64,
    pub input: &'q Value,
    pub tool: Option<&'q str>,
    pub tool_input: Option<&'q Value>,
    cwd: Option<Cow<'q, str>>,
    home: Option<Cow<'q, str>>,
    project: Option<Cow<'q, str>>,
    /// Absolute path for Read/Edit/Write/…; `None` for other tools.
    pub target: Option<String>,
    /// The split command for Bash.
    pub command: Option<ParsedCommand>,
    /// WebFetch: the URL's host (`Some(None)`: no readable URL).
    web_host: Option<Option<String>>,
    /// A Stop or SubagentStop with `stop_hook_active: true`: how many times
    /// its chain was blocked already (at least 1).
    pub stop_chain: Option<u32>,
    /// For a Bash command too large to analyse: the words in it.
    pub words: Option<CommandWords>,
    /// The session facts the daemon passed in, if any.
    pub facts: Option<&'q super::facts::SessionFacts>,
    /// [`Query::judgements`].
    pub judgements: &'q [super::judge::JudgeVerdict],
    /// [`Query::signals`].
    pub signals: Option<&'q super::signal::Signals>,
}

/// The words of a command too large to split, for "might this rule's
/// program run?": the text with quotes and backslashes removed, cut at
/// blanks, shell operators, `$`, braces, `=` and `/`. Kept as hashes, so a
/// command of millions of distinct words costs a few bytes each.
pub(crate) struct CommandWords {
    hasher: std::hash::RandomState,
    hashes: HashSet<u64>,
    /// The command's length, for explanations.
    pub bytes: usize,
}

impl CommandWords {
    fn new(command: &str) -> CommandWords {
        let hasher = std::hash::RandomState::new();
        let mut hashes = HashSet::new();
        let mut word = String::new();
        let mut flush = |word: &mut String| {
            if !word.is_empty() {
                hashes.insert(hasher.hash_one(word.as_str()));
                word.clear();
            }
        };
        for c in command.chars() {
            match c {
                '\'' | '"' | '\\' => {}
                c if c.is_whitespace()
                    || matches!(
                        c,
                        ';' | '&' | '|' | '(' | ')' | '<' | '>' | '`' | '$' | '{' | '}' | '=' | '/'
                    ) =>
                {
                    flush(&mut word)
                }
                c => word.push(c),
            }
        }
        flush(&mut word);
        CommandWords {
            hasher,
            hashes,
            bytes: command.len(),
        }
    }

    /// Whether `word` occurs in the command (or, rarely, one with the same
    /// hash: a false "yes" is the conservative answer).
    pub fn contains(&self, word: &str) -> bool {
        self.hashes.contains(&self.hasher.hash_one(word))
    }
}

/// The grouped condition sets of the rule set being evaluated, with this
/// evaluation's cache of their results.
pub(crate) type Fast<'a> = Option<(&'a CondSets, &'a SetCache)>;

impl<'q> Subject<'q> {
    pub fn new(q: &Query<'q>) -> Subject<'q> {
        let input = q.input;
        let fields = InputFields::of(input);
        let (tool, tool_input) = (fields.tool_name, fields.tool_input);
        let cwd = fields
            .cwd
            .filter(|c| c.starts_with('/'))
            .map(normalize_borrowed);
        let home = normalize_dir_borrowed(q.home);
        let project = normalize_dir_borrowed(q.project_dir).or_else(|| cwd.clone());
        let continues_chain = STOP_EVENTS.contains(&q.event) && fields.stop_hook_active;
        let mut s = Subject {
            event: q.event,
            agent: q.agent,
            event_bit: EventSet::bit(q.event),
            input,
            tool,
            tool_input,
            cwd,
            home,
            project,
            target: None,
            command: None,
            web_host: None,
            stop_chain: continues_chain.then_some(q.stop_blocks.max(1)),
            words: None,
            facts: q.facts,
            judgements: q.judgements,
            signals: q.signals,
        };
        if let Some(t) = tool {
            if let Some(field) = path_field(t) {
                let value = tool_input
                    .and_then(|ti| ti.get(field))
                    .and_then(Value::as_str);
                s.target = match value {
                    Some(v) => resolve(v, &s.base(), false),
                    // Glob, Grep and LS default to the working directory.
                    None if field == "path" => s.cwd.as_deref().map(str::to_string),
                    None => None,
                };
            }
            if t == "WebFetch" {
                let url = tool_input
                    .and_then(|ti| ti.get("url"))
                    .and_then(Value::as_str);
                s.web_host = Some(url.and_then(url_host).map(str::to_string));
            }
            if t == "Bash" {
                let cmd = tool_input
                    .and_then(|ti| ti.get("command"))
                    .and_then(Value::as_str);
                s.command = Some(match cmd {
                    Some(c) => {
                        let parsed = split(c);
                        if parsed.too_large {
                            s.words = Some(CommandWords::new(c));
                        }
                        parsed
                    }
                    None => {
                        let mut p = split("");
                        p.uncertain = true;
                        for seg in &mut p.segments {
                            seg.uncertain = true;
                        }
                        p
                    }
                });
            }
        }
        s
    }

    pub fn base(&self) -> Base<'_> {
        Base {
            cwd: self.cwd.as_deref(),
            home: self.home.as_deref(),
            project: self.project.as_deref(),
        }
    }

    pub fn env<'a>(&'a self, command: Option<CommandScope<'a>>) -> Env<'a> {
        self.env_with(command, None)
    }

    pub fn env_with<'a>(&'a self, command: Option<CommandScope<'a>>, fast: Fast<'a>) -> Env<'a> {
        Env {
            input: self.input,
            tool_input: self.tool_input,
            base: self.base(),
            target: self.target.as_deref(),
            command,
            sets: fast,
            signals: self.signals,
        }
    }

    /// The target path related to home and project.
    pub fn resolved_target(&self) -> Option<ResolvedPath<'_>> {
        let t = self.target.as_deref()?;
        Some(ResolvedPath::new(
            t,
            self.home.as_deref(),
            self.project.as_deref(),
        ))
    }

    fn tool_is(&self, name: &str) -> bool {
        self.tool == Some(name)
    }
}

/// For a rule that blocks, on a Stop or SubagentStop that continues a stop
/// chain: whether it may block again, and why, for explanations. `None`
/// when the stop chain has nothing to do with it.
pub(crate) fn stop_chain_check(rule: &Rule, s: &Subject<'_>) -> Option<(bool, String)> {
    let blocks = s.stop_chain.filter(|_| rule.blocks())?;
    let times = |n: u32| {
        if n == 1 {
            "once".to_string()
        } else {
            format!("{n} times")
        }
    };
    Some(match (rule.stop_limit, rule.stop_limit()) {
        (_, StopLimit::Always) => (
            true,
            "blocks again in this stop chain: `repeat = true`".to_string(),
        ),
        (_, StopLimit::Times(n)) if blocks < n => (
            true,
            format!(
                "blocks again in this stop chain: blocked {} so far, `max_blocks = {n}`",
                times(blocks)
            ),
        ),
        (None, _) => (
            false,
            "not blocking again: stop_hook_active and the rule has no repeat (a rule blocks once per stop chain unless it says `repeat = true` or `max_blocks = N`)".to_string(),
        ),
        (Some(_), StopLimit::Times(n)) => (
            false,
            format!(
                "not blocking again: this stop chain was blocked {} already (`max_blocks = {n}`)",
                times(blocks)
            ),
        ),
    })
}

/// Whether a rule's session-fact gates (`limit`, `budget`, `after`) let it
/// apply to this subject, and why. `id` is its qualified id.
pub(crate) fn gate_check(rule: &Rule, id: &str, s: &Subject<'_>) -> (bool, String) {
    rule.gate
        .check(id, s.facts, s.home.as_deref(), s.project.as_deref())
}

/// How one rule matched the subject.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Matched the event as a whole (a non-command pattern, or no `tool` on a
    /// non-Bash input).
    pub whole: bool,
    /// Indices of the Bash commands it matched.
    pub commands: Vec<usize>,
    /// First command match: (command, view, pattern index or `usize::MAX`).
    pub first: Option<(usize, usize, usize)>,
    /// Pattern index of the first whole-event match.
    pub whole_pattern: Option<usize>,
}

impl Outcome {
    pub fn matched(&self) -> bool {
        self.whole || !self.commands.is_empty()
    }
}

/// Compare a non-command pattern with the subject.
pub(crate) fn pattern_tri(p: &ToolPattern, s: &Subject<'_>, path_ids: &[usize]) -> Tri {
    let Some(tool) = s.tool else {
        return Tri::No;
    };
    let yes = |b: bool| if b { Tri::Yes } else { Tri::No };
    match p {
        ToolPattern::Tool(names) => yes(names.iter().any(|n| n == tool)),
        ToolPattern::Param {
            tools,
            field,
            value,
        } => {
            if !tools.iter().any(|n| n == tool) {
                return Tri::No;
            }
            match s.tool_input.and_then(|ti| ti.get(field.as_str())) {
                Some(Value::String(v)) => yes(value.is_match(v)),
                Some(v @ (Value::Bool(_) | Value::Number(_))) => {
                    yes(value.is_match(&v.to_string()))
                }
                _ => Tri::No,
            }
        }
        ToolPattern::Domain(d) => {
            if tool != "WebFetch" {
                return Tri::No;
            }
            d.check_host(s.web_host.as_ref().and_then(|h| h.as_deref()))
        }
        ToolPattern::McpPrefix(prefix) => yes(tool.starts_with(prefix.as_str())),
        ToolPattern::Path { tools, id, .. } => {
            yes(tools.contains(&tool) && path_ids.binary_search(id).is_ok())
        }
        ToolPattern::Command(_) | ToolPattern::Never => Tri::No,
    }
}

/// Whether `p` is about the subject's tool at all (for explanations).
pub(crate) fn applies(p: &ToolPattern, tool: Option<&str>) -> bool {
    let Some(tool) = tool else { return false };
    match p {
        ToolPattern::Tool(names) | ToolPattern::Param { tools: names, .. } => {
            names.iter().any(|n| n == tool)
        }
        ToolPattern::Command(_) => tool == "Bash",
        ToolPattern::Path { tools, .. } => tools.contains(&tool),
        ToolPattern::Domain(_) => tool == "WebFetch",
        ToolPattern::McpPrefix(p) => tool.starts_with(p.as_str()),
        ToolPattern::Never => false,
    }
}

/// Match one rule against the subject (the event is checked by the caller).
/// `path_ids` are the sorted ids of this rule set's path patterns that match
/// the subject's target.
pub(crate) fn match_rule(
    rule: &Rule,
    s: &Subject<'_>,
    path_ids: &[usize],
    fast: Fast<'_>,
    views: &Views<'_>,
) -> Outcome {
    match_rule_with(rule, s, path_ids, true, fast, Some(views))
}

/// [`match_rule`], optionally ignoring the per-event `when` conditions (for
/// explanations, which report those separately); `views` as
/// [`command_views`] built them for `fast`, if it did.
pub(crate) fn match_rule_with(
    rule: &Rule,
    s: &Subject<'_>,
    path_ids: &[usize],
    check_when: bool,
    fast: Fast<'_>,
    views: Option<&Views<'_>>,
) -> Outcome {
    let mut out = Outcome::default();
    let env = s.env_with(None, fast);
    if check_when && !rule.when.iter().all(|c| c.holds(&env)) {
        return out;
    }
    let doubtful_ok = matches!(rule.action, Action::Deny | Action::Ask);
    // Whole-event patterns.
    for (pi, p) in rule.tools.iter().enumerate() {
        if matches!(p, ToolPattern::Command(_)) {
            continue;
        }
        let hit = match pattern_tri(p, s, path_ids) {
            Tri::Yes => true,
            Tri::Unsure => doubtful_ok,
            Tri::No => false,
        };
        if hit && rule.per_command.iter().all(|c| c.holds(&env)) {
            out.whole = true;
            out.whole_pattern = Some(pi);
            break;
        }
    }
    if let Some(cmd) = s.command.as_ref().filter(|_| s.tool_is("Bash")) {
        let has_command_patterns = rule.tools.is_empty()
            || rule
                .tools
                .iter()
                .any(|p| matches!(p, ToolPattern::Command(_)));
        if has_command_patterns {
            if let Some(words) = s.words.as_ref().filter(|_| cmd.too_large) {
                if let Some(pi) = might_match(rule, words) {
                    out.commands.push(0);
                    out.first = Some((0, 0, pi));
                }
            } else {
                for si in 0..cmd.segments.len() {
                    if let Some((vi, pi)) = match_command(rule, cmd, si, s, fast, views) {
                        out.commands.push(si);
                        out.first.get_or_insert((si, vi, pi));
                    }
                }
            }
        }
    } else if rule.tools.is_empty() {
        out.whole = rule.per_command.iter().all(|c| c.holds(&env));
    }
    out
}

/// Every view of the subject's Bash command as evaluation with the sets
/// judges it ([`ViewScope`]), and where each command's views start.
#[derive(Default)]
pub(crate) struct Views<'a> {
    list: Vec<ViewScope<'a>>,
    first: Vec<usize>,
}

/// The [`Views`] of the subject's Bash command, each view's environment
/// built once per layer; empty unless it is a Bash command that was split
/// and the sets are there.
fn command_views<'a>(s: &'a Subject<'_>, fast: Fast<'a>) -> Views<'a> {
    let (Some(cmd), Some((sets, cache))) = (
        s.command
            .as_ref()
            .filter(|c| !c.too_large && s.tool_is("Bash")),
        fast,
    ) else {
        return Views::default();
    };
    let mut views = Views {
        list: Vec::with_capacity(cmd.segments.len()),
        first: Vec::with_capacity(cmd.segments.len()),
    };
    for (si, segment) in cmd.segments.iter().enumerate() {
        views.first.push(views.list.len());
        for vi in 0..segment.views.len() {
            let scope = CommandScope::of(cmd, si, vi);
            let env = s.env_with(Some(scope), fast);
            views.list.push(sets.view_scope(env, cache));
        }
    }
    views
}

/// Whether `rule` (index `ri`), judged only per command view
/// ([`Rule::per_view_only`]), has [`Rule::needs`] that none of `views`
/// (from [`command_views`]) meets, as `met` says
/// ([`CondSets::needs_met_by`]): then [`match_rule`] would match nothing,
/// and it is skipped without it (most of the standard profile's rules on
/// most commands).
fn cannot_match_any_view(rule: &Rule, ri: u32, views: &Views<'_>, met: &[u64]) -> bool {
    rule.per_view_only && !views.list.is_empty() && met[ri as usize / 64] >> (ri % 64) & 1 == 0
}

/// For a command too large to analyse: the pattern (index, or `usize::MAX`
/// for a rule without `tool`) by which `rule` might match it, judged as the
/// module doc says.
fn might_match(rule: &Rule, words: &CommandWords) -> Option<usize> {
    let covers_all =
        |pattern: &CommandPattern| *pattern == CommandPattern::Any && rule.per_command.is_empty();
    if rule.tools.is_empty() {
        let hit = match rule.action {
            Action::Deny | Action::Ask => true,
            Action::Allow | Action::Context => covers_all(&CommandPattern::Any),
        };
        return hit.then_some(usize::MAX);
    }
    rule.tools.iter().position(|p| match p {
        ToolPattern::Command(c) => match rule.action {
            Action::Deny | Action::Ask => c.program().is_none_or(|prog| words.contains(prog)),
            Action::Allow | Action::Context => covers_all(c),
        },
        _ => false,
    })
}

/// The first (view, pattern) of command `si` that `rule` matches.
fn match_command(
    rule: &Rule,
    cmd: &ParsedCommand,
    si: usize,
    s: &Subject<'_>,
    fast: Fast<'_>,
    views: Option<&Views<'_>>,
) -> Option<(usize, usize)> {
    let seg = &cmd.segments[si];
    let try_one = |vi: usize, pattern: &CommandPattern, program: Option<&str>| -> bool {
        let view = &seg.views[vi];
        // A pattern that fixes its program cannot match another program's
        // command: skip it without reading the command's text, so a rule
        // costs O(1) per command of a long compound command, not its length.
        if program.is_some_and(|p| !runs_program(&view.text, p)) {
            return false;
        }
        if rule.action == Action::Allow {
            // Allow rules see the command as written, and nothing of a
            // command that could not be read unless they allow all Bash.
            let is_any = *pattern == CommandPattern::Any;
            if !view.literal || (seg.uncertain && !is_any) {
                return false;
            }
        }
        if !pattern.is_match(&view.text) {
            return false;
        }
        if rule.per_command.is_empty() {
            return true;
        }
        // The view's environment and block as `command_views` built them,
        // or (explanations, without the sets) built here.
        if let (Some(views), Some((sets, cache))) = (views.filter(|v| !v.list.is_empty()), fast) {
            let view = &views.list[views.first[si] + vi];
            return sets.may_hold(&rule.needs, view, cache)
                && rule.per_command.iter().all(|c| c.holds(&view.env));
        }
        let env = s.env_with(Some(CommandScope::of(cmd, si, vi)), fast);
        rule.per_command.iter().all(|c| c.holds(&env))
    };
    for vi in 0..seg.views.len() {
        if rule.tools.is_empty() {
            if try_one(vi, &CommandPattern::Any, None) {
                return Some((vi, usize::MAX));
            }
            continue;
        }
        for (pi, p) in rule.tools.iter().enumerate() {
            if let ToolPattern::Command(c) = p {
                if try_one(vi, c, rule.programs[pi].as_deref()) {
                    return Some((vi, pi));
                }
            }
        }
    }
    None
}

/// Whether a command's text (words joined by single spaces) runs `program`:
/// its first word is `program`. A comparison of `program.len()` bytes.
fn runs_program(text: &str, program: &str) -> bool {
    text.as_bytes().starts_with(program.as_bytes())
        && matches!(text.as_bytes().get(program.len()), None | Some(b' '))
}

/// One layer of rules as evaluation sees it: one file, with the place of
/// its layer in the composition (see "Layers" in [`super`]).
pub(crate) struct LayerRef<'a> {
    pub set: &'a RuleSet,
    /// Its index in the slice evaluated (hits name their layer by it).
    pub tag: u16,
    /// Whether its allow and context rules count (false only for a
    /// project layer the user does not trust).
    pub trusted: bool,
    /// `user`, `project`, or the policy source's name; rule ids of layers
    /// other than the user's are reported as `<name>:<id>`.
    pub name: &'a str,
    /// Precedence: a layer's `ask` gives way to the `allow` of a layer of
    /// higher rank, unless its layer is enforced. The user and project
    /// layers share the highest rank; policy sources rank below, in the
    /// order of `[policy] sources`.
    pub rank: u8,
    /// An enforced policy source: a higher layer's allow cannot loosen its
    /// ask (nor a session grant).
    pub enforced: bool,
}

/// A matched rule: layer tag and rule index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Hit {
    pub layer: u16,
    pub rule: u32,
}

/// Everything matched, before the verdict is taken.
#[derive(Debug, Default)]
pub(crate) struct Matches {
    pub deny: Vec<Hit>,
    pub ask: Vec<Hit>,
    pub context: Vec<Hit>,
    /// Allow rules that matched the event as a whole.
    pub allow: Vec<Hit>,
    /// Allow rules that matched some Bash commands.
    pub allow_commands: Vec<Hit>,
    /// Per Bash command: covered by some allow rule.
    pub covered: Vec<bool>,
    /// Per Bash command: the highest rank + 1 of a layer whose allow rule
    /// covers it (0: none).
    pub covered_rank: Vec<u16>,
    /// Allow/context rules of an untrusted project layer that matched.
    pub ignored: Vec<Hit>,
    /// The Bash command was too large to analyse: matched conservatively.
    pub too_large: bool,
    /// Limited rules that matched, passed or not (issue #25).
    pub limited: Vec<super::facts::LimitedHit>,
    /// Gated rules that applied, with the facts that let them.
    pub gated: Vec<String>,
    /// Judge rules that decided, with the reason their judge gave.
    pub judged: Vec<(Hit, String)>,
    /// Every judge rule that matched, answered or not: the questions the
    /// daemon asks a model.
    pub judges: Vec<super::judge::JudgeHit>,
}

/// The candidate rules of one layer for this subject, sorted and deduplicated.
pub(crate) fn candidates(set: &RuleSet, s: &Subject<'_>, path_ids: &mut Vec<usize>) -> Vec<u32> {
    let ix = &set.index;
    let bit = s.event_bit;
    let mut out: Vec<u32> = Vec::with_capacity(ix.any_program.len() + 8);
    // Rules reachable through several lists are taken once (a bit per
    // rule, on the stack for up to 256 rules).
    let words = set.rules.len().div_ceil(64);
    let (mut small, mut large) = ([0u64; 4], Vec::new());
    let seen: &mut [u64] = if words <= small.len() {
        &mut small[..words]
    } else {
        large.resize(words, 0);
        &mut large
    };
    let mut add = |p: &PatRef| {
        let r = p.rule as usize;
        if p.events.has(bit) && seen[r / 64] >> (r % 64) & 1 == 0 {
            seen[r / 64] |= 1 << (r % 64);
            out.push(p.rule);
        }
    };
    path_ids.clear();
    if let Some(tool) = s.tool {
        if let Some(list) = ix.by_tool.get(tool) {
            list.iter().for_each(&mut add);
        }
        if tool.starts_with("mcp__") {
            ix.mcp
                .iter()
                .filter(|(prefix, _)| tool.starts_with(prefix.as_str()))
                .for_each(|(_, p)| add(p));
        }
        if let Some(target) = s.resolved_target() {
            if ix.paths.len() > 0 {
                let mut scratch = Vec::new();
                ix.paths.matches_into(&target, &mut scratch, path_ids);
                path_ids.sort_unstable();
                path_ids.dedup();
                path_ids.iter().for_each(|&id| add(&ix.path_rules[id]));
            }
        }
    }
    match s.command.as_ref().filter(|_| s.tool_is("Bash")) {
        Some(cmd) => {
            ix.any_program.iter().for_each(&mut add);
            if let Some(words) = s.words.as_ref().filter(|_| cmd.too_large) {
                for (program, list) in &ix.by_program {
                    if words.contains(program) {
                        list.iter().for_each(&mut add);
                    }
                }
            }
            for seg in &cmd.segments {
                for view in &seg.views {
                    if let Some(list) = ix.by_program.get(view.program()) {
                        list.iter().for_each(&mut add);
                    }
                }
            }
        }
        None => ix.toolless.iter().for_each(&mut add),
    }
    out
}

/// Match every layer and collect the hits.
pub(crate) fn collect(layers: &[LayerRef<'_>], s: &Subject<'_>) -> Matches {
    let mut m = Matches::default();
    if let Some(cmd) = &s.command {
        m.covered = vec![false; cmd.segments.len()];
        m.covered_rank = vec![0; cmd.segments.len()];
        m.too_large = cmd.too_large;
    }
    let mut path_ids = Vec::new();
    for layer in layers {
        let cache = SetCache::new(&layer.set.sets, s.command.as_ref());
        let fast = Some((&layer.set.sets, &cache));
        let views = command_views(s, fast);
        let rules = layer.set.rules.len();
        let met = layer
            .set
            .sets
            .needs_met_by(&views.list, &cache, s.event_bit, rules);
        for ri in candidates(layer.set, s, &mut path_ids) {
            let rule = &layer.set.rules[ri as usize];
            if !rule.events.has(s.event_bit) || rule.agent.is_some_and(|a| a != s.agent) {
                continue;
            }
            // Only a Stop that continues a chain has one to check (and its
            // reasons are text, built only then).
            if s.stop_chain.is_some()
                && stop_chain_check(rule, s).is_some_and(|(may_block, _)| !may_block)
            {
                continue;
            }
            if cannot_match_any_view(rule, ri, &views, &met) {
                continue;
            }
            let outcome = match_rule(rule, s, &path_ids, fast, &views);
            if !rule.gate.is_empty() && outcome.matched() {
                let id = qualified_id(layer, &rule.id);
                let (applies, why) = gate_check(rule, &id, s);
                if let Some(limit) = rule.gate.limit {
                    m.limited.push(super::facts::LimitedHit {
                        rule: id.clone(),
                        limit,
                    });
                }
                if !applies {
                    continue;
                }
                m.gated.push(format!("{id}: {why}"));
            }
            if let Some(spec) = rule.judge.as_deref().filter(|_| outcome.matched()) {
                let id = qualified_id(layer, &rule.id);
                if !m.judges.iter().any(|j| j.rule == id) {
                    m.judges.push(super::judge::JudgeHit {
                        rule: id.clone(),
                        spec: spec.clone(),
                    });
                }
                match super::judge::resolve(spec, &id, s.judgements) {
                    Some((action, reason)) => {
                        let hit = Hit {
                            layer: layer.tag,
                            rule: ri,
                        };
                        match action {
                            Action::Ask => m.ask.push(hit),
                            _ => m.deny.push(hit),
                        }
                        m.judged.push((hit, reason));
                    }
                    None => continue,
                }
                continue;
            }
            record(&mut m, layer, ri, rule, &outcome);
        }
    }
    m
}

pub(crate) fn record(m: &mut Matches, layer: &LayerRef<'_>, ri: u32, rule: &Rule, o: &Outcome) {
    if !o.matched() {
        return;
    }
    let hit = Hit {
        layer: layer.tag,
        rule: ri,
    };
    let trusted = layer.trusted;
    match rule.action {
        Action::Deny => m.deny.push(hit),
        Action::Ask => m.ask.push(hit),
        Action::Context if trusted => m.context.push(hit),
        Action::Allow if trusted => {
            if o.whole {
                m.allow.push(hit);
            }
            if !o.commands.is_empty() {
                m.allow_commands.push(hit);
                for &c in &o.commands {
                    m.covered[c] = true;
                    m.covered_rank[c] = m.covered_rank[c].max(u16::from(layer.rank) + 1);
                }
            }
        }
        Action::Context | Action::Allow => m.ignored.push(hit),
    }
}

/// Take the verdict: deny > ask > allow; context rules only add context.
pub(crate) fn verdict(layers: &[LayerRef<'_>], m: &Matches) -> Evaluation {
    let rule = |h: &Hit| -> &Rule { &layers[h.layer as usize].set.rules[h.rule as usize] };
    let layer = |h: &Hit| -> &LayerRef<'_> { &layers[h.layer as usize] };
    let ids = |hits: &[Hit]| -> Vec<String> {
        let mut hs = hits.to_vec();
        hs.sort_unstable();
        hs.dedup();
        hs.iter()
            .map(|h| qualified_id(layer(h), &rule(h).id))
            .collect()
    };
    let reasons = |hits: &[Hit]| -> Option<String> {
        let mut hs = hits.to_vec();
        hs.sort_unstable();
        hs.dedup();
        let mut out: Vec<&str> = Vec::new();
        for h in &hs {
            let judged = m.judged.iter().find(|(j, _)| j == h).map(|(_, r)| r);
            if let Some(r) = judged.or(rule(h).reason.as_ref()).map(String::as_str) {
                if !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        (!out.is_empty()).then(|| join_reasons(&out))
    };
    let all_covered = !m.covered.is_empty() && m.covered.iter().all(|&c| c);
    let allow_hits: Vec<Hit> = if all_covered {
        m.allow.iter().chain(&m.allow_commands).copied().collect()
    } else {
        m.allow.clone()
    };
    let mut overridden = Vec::new();
    let (action, deciding) = if !m.deny.is_empty() {
        (Some(Action::Deny), m.deny.clone())
    } else if !m.ask.is_empty() {
        match allowed_over_asks(layers, m) {
            Some(allows) => {
                overridden = ids(&m.ask);
                (Some(Action::Allow), allows)
            }
            None => (Some(Action::Ask), m.ask.clone()),
        }
    } else if !allow_hits.is_empty() {
        (Some(Action::Allow), allow_hits)
    } else if !m.context.is_empty() {
        (Some(Action::Context), m.context.clone())
    } else {
        (None, Vec::new())
    };
    let mut context_hits = m.context.clone();
    context_hits.sort_unstable();
    context_hits.dedup();
    let reason = match action {
        Some(Action::Context) => None,
        Some(Action::Deny | Action::Ask) if m.too_large => Some(match reasons(&deciding) {
            Some(r) => format!("{r} ({TOO_LARGE_NOTE})"),
            None => TOO_LARGE_NOTE.to_string(),
        }),
        _ => reasons(&deciding),
    };
    Evaluation {
        action,
        rule_ids: ids(&deciding),
        reason,
        additional_context: context_hits
            .iter()
            .filter_map(|h| rule(h).reason.clone())
            .collect(),
        context_rule_ids: ids(&context_hits),
        generation: layers.first().map_or(0, |l| l.set.generation),
        project_generation: layers
            .iter()
            .find(|l| l.set.kind() == super::LayerKind::Project)
            .map(|l| l.set.generation),
        enforced_by: match action {
            Some(Action::Deny | Action::Ask) => deciding
                .iter()
                .map(layer)
                .find(|l| l.enforced)
                .map(|l| l.name.to_string()),
            _ => None,
        },
        overridden,
        limited: m.limited.clone(),
        gated: m.gated.clone(),
        judges: m.judges.clone(),
        escalate: match action {
            Some(Action::Ask) => deciding
                .iter()
                .fold(None, |e, h| Escalation::merge(e, rule(h).escalate)),
            _ => None,
        },
    }
}

/// When rules asked and none denied: the allow hits that loosen every
/// ask, if there are: an ask gives way to the allow of a layer of higher
/// rank (a user allow over a policy source's ask), never over an enforced
/// layer's. The allow must cover the whole input by itself (for Bash,
/// every command, by allow rules of layers above every asking layer).
fn allowed_over_asks(layers: &[LayerRef<'_>], m: &Matches) -> Option<Vec<Hit>> {
    let layer = |h: &Hit| -> &LayerRef<'_> { &layers[h.layer as usize] };
    if m.ask.iter().any(|h| layer(h).enforced) {
        return None;
    }
    let asking = m.ask.iter().map(|h| layer(h).rank).max()?;
    let above = |h: &&Hit| layer(h).rank > asking;
    let mut allows: Vec<Hit> = m.allow.iter().filter(above).copied().collect();
    let commands_covered =
        !m.covered_rank.is_empty() && m.covered_rank.iter().all(|&r| r > u16::from(asking) + 1);
    if commands_covered {
        allows.extend(m.allow_commands.iter().filter(above));
    }
    (!allows.is_empty()).then_some(allows)
}

/// Added to the reason of a deny or ask of a command too large to analyse,
/// so the model (and the user) know why, and that a smaller command may pass.
pub(crate) const TOO_LARGE_NOTE: &str =
    "hookd could not analyse this command, it is too large, so every rule that might match it applied";

/// The deciding rules' reasons as one text: `"; "` between them, or a
/// space after a reason that ends its sentence (`… project root. refusing
/// …`, not `… project root.; refusing …`).
pub(crate) fn join_reasons(reasons: &[&str]) -> String {
    let mut joined = String::new();
    for reason in reasons {
        if !joined.is_empty() {
            joined.push_str(if joined.ends_with(['.', '!', '?']) {
                " "
            } else {
                "; "
            });
        }
        joined.push_str(reason);
    }
    joined
}

/// Rule ids from the user layer are reported as they are, others as
/// `<layer>:<id>` (`project:<id>`, `team:<id>`).
pub(crate) fn qualified_id(layer: &LayerRef<'_>, id: &str) -> String {
    if layer.set.kind() == super::LayerKind::User {
        id.to_string()
    } else {
        format!("{}:{id}", layer.name)
    }
}

/// Evaluate layers against a query.
pub(crate) fn evaluate(layers: &[LayerRef<'_>], q: &Query<'_>) -> Evaluation {
    let s = Subject::new(q);
    let m = collect(layers, &s);
    verdict(layers, &m)
}
