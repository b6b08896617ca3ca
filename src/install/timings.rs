//! The per-event timeouts `hookd install` writes for each agent: the one
//! table of deadlines (agent > forwarder > daemon) and the event lists.

use serde::Serialize;

use crate::agent::claude::HookEventKind;
use crate::agent::{dialect, Agent};

/// How one event's handler is registered: the deadline ladder is
/// `agent_s` (the agent kills the hook) > `forwarder_s` (the forwarder
/// gives up and applies the fallback) > the daemon's deadline (90 % of the
/// forwarder's budget, `daemon::hook::daemon_budget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Timing {
    /// The forwarder's `--timeout`, in seconds.
    pub forwarder_s: u32,
    /// The agent's `timeout`, in seconds (Gemini's file gets it in
    /// milliseconds).
    pub agent_s: u32,
    /// Whether the handler is registered with `"async": true`.
    #[serde(rename = "async")]
    pub async_hook: bool,
}

/// The groups of events that share a [`Timing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventClass {
    /// Events whose hook can change what happens (`is_decision_point`): a
    /// rule or a client may decide, so they get time.
    DecisionPoint,
    /// Everything else: the daemon answers at once, so the only wait is the
    /// round trip, and a short deadline bounds a wedged daemon.
    ObserveOnly,
    /// SessionEnd: Claude Code waits only 1.5 s for it by default, at exit.
    SessionEnd,
}

/// The one table of timeouts, every agent's (documented in docs/install.md,
/// "Timeouts"); an agent that clamps an event's hooks gets its clamp
/// instead ([`timing_for`]).
///
/// - Decision points: 30 s is Claude Code's own default for
///   UserPromptSubmit and the model-switch events, so one value keeps every
///   decision point at or below its default; the forwarder's 25 s gives the
///   daemon 24.5 s to decide (a rule or a socket client).
/// - Observe-only: answered at once; 2 s covers a busy machine and a daemon
///   restart under socket activation (connections queue meanwhile), 5 s
///   leaves Claude Code 3 s for spawning and reading the forwarder.
/// - SessionEnd: 1 s / 2 s. A per-hook `timeout` raises Claude Code's 1.5 s
///   limit, so 2 s keeps the ladder (forwarder 1 s, daemon 0.9 s) without
///   slowing an exit by more than half a second in the worst case.
///
/// No event is registered `"async": true`. Measured against Claude Code
/// 2.1.330 (`tests/e2e_install.rs`, `measure_async_observe_only_hooks`: a
/// one-Bash-call `-p` session firing 9 hooks, 4 of them observe-only, 5 runs
/// per mode, interleaved):
/// - healthy daemon: sync and async both delivered 9/9 events, SessionEnd
///   included, before the CLI exited; median wall time 830 ms sync vs 880 ms
///   async (run-to-run spread ±120 ms: no measurable gain), but async logged
///   SessionStart after UserPromptSubmit in 1 run of 5;
/// - observe-only hooks slowed by 500 ms: async saved 1.1 s per session
///   (median 1.88 s vs 2.97 s) but logged events out of order in 5/5 runs,
///   and SessionEnd reached the daemon only after the CLI had exited (from
///   the orphaned hook) in 5/5.
///
/// The log's order is the session's order for `tail` and `replay`, and the
/// gain appears only when hooks are slow, which the 2 s forwarder deadline
/// already bounds. The column stays so a future choice is one edit.
///
/// Codex's own default is 600 s and Gemini's 60 s for every event: the
/// same steps keep a wedged daemon from holding a session that long. Codex
/// clamps SessionEnd hooks to 3 s whatever the file says, so its file says
/// 3 s (the forwarder's 1 s keeps the ladder under the clamp).
pub const TIMINGS: [(EventClass, Timing); 3] = [
    (
        EventClass::DecisionPoint,
        Timing {
            forwarder_s: 25,
            agent_s: 30,
            async_hook: false,
        },
    ),
    (
        EventClass::ObserveOnly,
        Timing {
            forwarder_s: 2,
            agent_s: 5,
            async_hook: false,
        },
    ),
    (
        EventClass::SessionEnd,
        Timing {
            forwarder_s: 1,
            agent_s: 2,
            async_hook: false,
        },
    ),
];

/// The class of a Claude Code event.
pub fn class(kind: HookEventKind) -> EventClass {
    class_for(Agent::ClaudeCode, kind)
}

/// The class of an event of `agent` (of hookd kind `kind`): a decision
/// point is one the agent honors some verdict for.
pub fn class_for(agent: Agent, kind: HookEventKind) -> EventClass {
    if kind == HookEventKind::SessionEnd {
        EventClass::SessionEnd
    } else if agent.is_decision_point(kind) {
        EventClass::DecisionPoint
    } else {
        EventClass::ObserveOnly
    }
}

/// The timing of a Claude Code event's handler, from [`TIMINGS`].
pub fn timing(kind: HookEventKind) -> Timing {
    timing_for(Agent::ClaudeCode, kind)
}

/// The timing of `agent`'s handler for an event of kind `kind`: its class's
/// row of [`TIMINGS`], with the agent's timeout raised or lowered to the
/// clamp its events table gives the event (Codex's SessionEnd), since the
/// agent uses nothing else.
pub fn timing_for(agent: Agent, kind: HookEventKind) -> Timing {
    let class = class_for(agent, kind);
    let ladder = TIMINGS
        .iter()
        .find(|(c, _)| *c == class)
        .map(|(_, t)| *t)
        .expect("every class has a row");
    let clamp = dialect::row_of(agent.events(), kind).and_then(|e| e.max_timeout_s);
    Timing {
        agent_s: clamp.unwrap_or(ladder.agent_s),
        ..ladder
    }
}

/// The name `agent` gives the event hookd knows as `kind` (`BeforeTool`
/// for Gemini's PreToolUse); `None` when the agent has no such event.
pub fn event_name(agent: Agent, kind: HookEventKind) -> Option<&'static str> {
    agent.event_name(kind)
}

/// The events registered for `agent` without `--events`: those its events
/// table registers by default and maps onto a hookd kind (Claude Code's
/// [`default_events`]; every Codex event but `Interrupt`, which nothing can
/// decide; Gemini's events but the three model events, which carry the
/// whole conversation and fire per streamed chunk).
pub fn default_events_for(agent: Agent) -> Vec<HookEventKind> {
    agent
        .events()
        .iter()
        .filter(|e| e.registered_by_default && e.kind != HookEventKind::Unknown)
        .map(|e| e.kind)
        .collect()
}

/// Parses `--events` for `agent`, in the agent's own names
/// (`BeforeTool,AfterAgent` for Gemini).
pub fn parse_events_for(agent: Agent, list: &str) -> Result<Vec<HookEventKind>, String> {
    if agent == Agent::ClaudeCode {
        return parse_events(list);
    }
    let known: Vec<&str> = default_events_for(agent)
        .iter()
        .filter_map(|k| event_name(agent, *k))
        .collect();
    let mut events = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let kind = agent.event_kind(name);
        if kind == HookEventKind::Unknown || event_name(agent, kind) != Some(name) {
            return Err(format!(
                "--events: {agent} has no event `{name}` that hookd judges (names are \
                 case-sensitive); {agent}'s events: {}",
                known.join(",")
            ));
        }
        if !events.contains(&kind) {
            events.push(kind);
        }
    }
    if events.is_empty() {
        return Err(format!(
            "--events: give at least one event name, e.g. --events {}",
            known.first().copied().unwrap_or("PreToolUse")
        ));
    }
    Ok(events)
}

/// The events installed for Claude Code when `--events` is not given: all
/// of its events except `WorktreeCreate`, whose hook *replaces* worktree
/// creation (see [`crate::agent::claude::EVENTS`]).
pub fn default_events() -> Vec<HookEventKind> {
    default_events_for(Agent::ClaudeCode)
}

/// Parses `--events` (names separated by commas, as Claude Code spells them).
pub fn parse_events(list: &str) -> Result<Vec<HookEventKind>, String> {
    let mut events = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let kind = HookEventKind::from_name(name);
        if kind == HookEventKind::Unknown {
            let known: Vec<&str> = default_events().iter().map(|k| k.as_str()).collect();
            return Err(format!(
                "--events: unknown event `{name}` (names are case-sensitive); known events: {}",
                known.join(",")
            ));
        }
        if kind == HookEventKind::WorktreeCreate {
            return Err(
                "--events: WorktreeCreate cannot be registered: its hook replaces Claude \
                 Code's worktree creation and must print the new worktree's path, which \
                 hookd does not do (`claude --worktree` would fail)"
                    .into(),
            );
        }
        if !events.contains(&kind) {
            events.push(kind);
        }
    }
    if events.is_empty() {
        return Err("--events: give at least one event name, e.g. --events PreToolUse,Stop".into());
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ladder_holds_for_every_agent_and_clamps_are_written() {
        for agent in Agent::ALL {
            for kind in default_events_for(agent) {
                let t = timing_for(agent, kind);
                assert!(t.forwarder_s < t.agent_s, "{agent} {kind}: {t:?}");
            }
        }
        let session_end = |agent| timing_for(agent, HookEventKind::SessionEnd).agent_s;
        assert_eq!(session_end(Agent::ClaudeCode), 2);
        assert_eq!(session_end(Agent::Gemini), 2);
        assert_eq!(session_end(Agent::Codex), 3);
    }
}
