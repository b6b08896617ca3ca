//! Compiled rules: actions, event sets and the rule itself.

use super::cond::Cond;
use super::tool::ToolPattern;

/// The 33 hook events of Claude Code 2.1.330 (`HOOK_EVENTS` in the SDK), the
/// names an `event` field may use.
pub const EVENTS: &[&str] = crate::agent::claude::HookEventKind::NAMES;

/// Events whose input carries `tool_name` and `tool_input`, so `tool`
/// patterns can match them.
pub const TOOL_EVENTS: [&str; 5] = [
    "PreToolUse",
    "PermissionRequest",
    "PermissionDenied",
    "PostToolUse",
    "PostToolUseFailure",
];

pub use hookd_protocol::decision::Action;

/// A set of events as a bitmask; bit 63 stands for events not in [`EVENTS`],
/// which only `event = "*"` includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EventSet(u64);

const UNKNOWN: u64 = 1 << 63;

impl EventSet {
    pub const EMPTY: EventSet = EventSet(0);

    /// `event = "*"`.
    pub fn all() -> EventSet {
        EventSet(((1u64 << EVENTS.len()) - 1) | UNKNOWN)
    }

    /// The default when `event` is absent: PreToolUse and PermissionRequest,
    /// the two events where a rule's verdict is a permission decision.
    pub fn default_set() -> EventSet {
        EventSet(Self::bit("PreToolUse") | Self::bit("PermissionRequest"))
    }

    /// The bit of an event name (the unknown bit for names not in [`EVENTS`]).
    pub fn bit(name: &str) -> u64 {
        EVENTS
            .iter()
            .position(|e| *e == name)
            .map_or(UNKNOWN, |i| 1 << i)
    }

    /// Whether `name` is a known event.
    pub fn known(name: &str) -> bool {
        EVENTS.contains(&name)
    }

    pub fn insert(&mut self, name: &str) {
        self.0 |= Self::bit(name);
    }

    /// Add the events of `other`.
    pub fn add(&mut self, other: EventSet) {
        self.0 |= other.0;
    }

    pub fn has(self, bit: u64) -> bool {
        self.0 & bit != 0
    }

    /// Whether the set includes Stop or SubagentStop.
    pub fn has_stop_event(self) -> bool {
        STOP_EVENTS.iter().any(|e| self.has(Self::bit(e)))
    }

    /// Whether the set includes an event that carries a tool.
    pub fn has_tool_event(self) -> bool {
        TOOL_EVENTS.iter().any(|e| self.has(Self::bit(e)))
    }

    /// Names in the set, for explanations.
    pub fn describe(self) -> String {
        if self == Self::all() {
            return "*".to_string();
        }
        EVENTS
            .iter()
            .filter(|e| self.has(Self::bit(e)))
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// How often a deny or ask rule may block in one stop chain: the Stops (or
/// one subagent's SubagentStops) that follow one another because a hook
/// blocked the previous one (`stop_hook_active: true`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopLimit {
    /// `max_blocks = N` (the default, without `repeat` or `max_blocks`, is 1).
    Times(u32),
    /// `repeat = true`: every time (Claude Code's own cap then ends it).
    Always,
}

impl StopLimit {
    /// What a rule says when it has neither key: block once per chain.
    pub const DEFAULT: StopLimit = StopLimit::Times(1);
}

/// The events whose block starts a stop chain (`stop_hook_active`).
pub(crate) const STOP_EVENTS: [&str; 2] = ["Stop", "SubagentStop"];

/// One compiled rule.
#[derive(Debug, Clone)]
pub(crate) struct Rule {
    pub id: String,
    pub action: Action,
    pub reason: Option<String>,
    pub events: EventSet,
    /// `agent`: the one agent whose hooks the rule judges; `None`: all.
    pub agent: Option<crate::agent::Agent>,
    /// Any of these must match; empty means the rule has no `tool`.
    pub tools: Vec<ToolPattern>,
    /// The `tool` strings as written, parallel to `tools`.
    pub tool_src: Vec<String>,
    /// The program each `Bash(...)` pattern fixes, parallel to `tools`
    /// ([`CommandPattern::program`](super::tool::CommandPattern::program),
    /// worked out once here: evaluation asks for every command).
    pub programs: Vec<Option<String>>,
    /// Conditions judged once per event.
    pub when: Vec<Cond>,
    /// Conditions judged per Bash command (they use `$command` and friends).
    pub per_command: Vec<Cond>,
    /// What `per_command` needs of a command view's `$command`,
    /// `$command.args` and `$pipeline` sets to hold at all (see
    /// [`super::cond::Need`]);
    /// empty: nothing known, judge them. Set by `RuleSet::compile`.
    pub needs: Box<[super::cond::Need]>,
    /// Judged only per command view, with `needs` to go by: its `tool` is
    /// `Bash` patterns that fix no program, or none; no per-event `when`.
    /// Set by `RuleSet::compile`.
    pub per_view_only: bool,
    /// Line of the `[[rule]]` header.
    pub line: usize,
    /// `repeat` / `max_blocks` as written; `None`: [`StopLimit::DEFAULT`].
    pub stop_limit: Option<StopLimit>,
    /// `limit`, `budget`, `after`/`within`: gates on session facts.
    pub gate: super::facts::Gate,
    /// `action = "judge"`: the model's question (then `action` is
    /// [`Action::Deny`], the matching a judge rule uses).
    pub judge: Option<Box<super::judge::JudgeSpec>>,
    /// `escalate = "team"` (with `approvals_required`): an ask rule whose
    /// question also goes to the team's approvers.
    pub escalate: Option<Escalation>,
}

/// Where an ask goes besides the local clients: `escalate = "team"`, and
/// how many different approvers must allow it (`approvals_required`, 1
/// when absent). A deny from any one approver denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Escalation {
    /// Different team approvers who must allow the ask (1 or more).
    pub approvals_required: u32,
}

impl Escalation {
    /// The most approvals `approvals_required` may ask for.
    pub const MAX_APPROVALS: u32 = 10;

    /// Two escalations of one verdict as one: the most approvals either
    /// requires.
    pub fn merge(a: Option<Escalation>, b: Option<Escalation>) -> Option<Escalation> {
        match (a, b) {
            (Some(x), Some(y)) => Some(Escalation {
                approvals_required: x.approvals_required.max(y.approvals_required),
            }),
            (x, y) => x.or(y),
        }
    }
}

impl Rule {
    /// The rule's limit on blocks per stop chain.
    pub fn stop_limit(&self) -> StopLimit {
        self.stop_limit.unwrap_or(StopLimit::DEFAULT)
    }

    /// Whether a match of this rule can block (deny, or ask that a client
    /// may turn into deny).
    pub fn blocks(&self) -> bool {
        matches!(self.action, Action::Deny | Action::Ask)
    }
}
