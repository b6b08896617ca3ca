//! What the coverage alarm needs of a dialect: which events say "a tool
//! call was judged" and "a tool ran", and how one call is told from
//! another.
//!
//! The daemon's coverage alarm (`hookd_daemon::coverage`) pairs, per
//! session and agent, every event that says a tool *ran* with the event
//! that had it *judged* before it ran. A tool that ran with no judged
//! pre-tool event is a silent fail-open (a registration dropped, a matcher
//! that misses the tool, Codex hooks left untrusted for PreToolUse, a
//! plugin that did not load), and hookd says so.
//!
//! An agent plugs in with its dialect alone:
//!
//! 1. its events table maps its pre-tool event onto
//!    [`HookEventKind::PreToolUse`] and its after-tool events onto
//!    [`HookEventKind::PostToolUse`] (or `PostToolUseFailure`): Codex's
//!    `PreToolUse`/`PostToolUse`, Gemini's `BeforeTool`/`AfterTool` do;
//!    [`phase`] reads nothing else;
//! 2. [`call_id_field`] names the input field that carries the call's id on
//!    both events, when the agent gives one (`tool_use_id` for Claude Code
//!    and Codex; Gemini gives none, and its calls pair by tool name and
//!    input). One match arm.
//!
//! Both events must carry `session_id`, `tool_name` and `tool_input`
//! (the common fields every dialect's input has, read through
//! [`crate::agent::claude::InputFields`]); an in-process plugin
//! (OpenCode, Pi) writes them so in the frames it sends.

use serde_json::Value;

use crate::agent::claude::{HookEventKind, InputFields};
use crate::agent::Agent;

/// What a tool event says about a tool call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// It is about to run and this hook judges it (PreToolUse).
    Judged,
    /// It ran (PostToolUse, or PostToolUseFailure: it ran and failed).
    Ran,
}

/// The phase an event of `kind` says a tool call is in; `None` for an event
/// that is not one of a tool call's two ends (PermissionRequest is not: it
/// fires only for calls the agent asks about).
pub fn phase(kind: HookEventKind) -> Option<Phase> {
    match kind {
        HookEventKind::PreToolUse => Some(Phase::Judged),
        HookEventKind::PostToolUse | HookEventKind::PostToolUseFailure => Some(Phase::Ran),
        _ => None,
    }
}

/// The input field that carries a tool call's id on both its pre-tool and
/// its after-tool events, for agents that give one.
pub fn call_id_field(agent: Agent) -> Option<&'static str> {
    match agent {
        // The plugins relay OpenCode's `callID` and Pi's `toolCallId` as
        // `tool_use_id` on both ends of a call.
        Agent::ClaudeCode | Agent::Codex | Agent::OpenCode | Agent::Pi => Some("tool_use_id"),
        // Copilot's Claude-format inputs carry no call id.
        Agent::Gemini | Agent::Copilot => None,
    }
}

/// One tool call as a tool event names it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    /// The call's id, where the agent gives one.
    pub id: Option<&'a str>,
    /// The tool, as the agent names it.
    pub tool: &'a str,
    /// Its input (any JSON), when the event has one.
    pub input: Option<&'a Value>,
    /// How long it ran, where the after-tool event says (Claude Code's
    /// `duration_ms`): a call that started before the daemon did may have
    /// been judged by the one before it.
    pub duration_ms: Option<u64>,
}

/// The tool call `raw` (an event of `agent`) is about; `None` when it names
/// no tool.
pub fn tool_call(agent: Agent, raw: &Value) -> Option<ToolCall<'_>> {
    let fields = InputFields::of(raw);
    Some(ToolCall {
        id: call_id_field(agent)
            .and_then(|field| raw.get(field))
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty()),
        tool: fields.tool_name?,
        input: fields.tool_input,
        duration_ms: match agent {
            Agent::ClaudeCode => raw.get("duration_ms").and_then(Value::as_u64),
            Agent::Codex | Agent::Gemini | Agent::Copilot | Agent::OpenCode | Agent::Pi => None,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_agents_tool_events_have_a_phase() {
        for agent in Agent::ALL {
            let pre = agent.event_name(HookEventKind::PreToolUse).unwrap();
            let post = agent.event_name(HookEventKind::PostToolUse).unwrap();
            assert_eq!(phase(agent.event_kind(pre)), Some(Phase::Judged), "{agent}");
            assert_eq!(phase(agent.event_kind(post)), Some(Phase::Ran), "{agent}");
        }
        assert_eq!(phase(HookEventKind::PermissionRequest), None);
        assert_eq!(phase(HookEventKind::Stop), None);
    }

    #[test]
    fn a_call_is_read_with_its_id_where_the_agent_gives_one() {
        let raw = json!({"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1",
                         "duration_ms": 5});
        let call = tool_call(Agent::Codex, &raw).unwrap();
        assert_eq!((call.id, call.tool), (Some("t1"), "Bash"));
        assert_eq!(call.input, Some(&json!({"command": "ls"})));
        assert_eq!(call.duration_ms, None, "Codex says no duration");
        assert_eq!(
            tool_call(Agent::ClaudeCode, &raw).unwrap().duration_ms,
            Some(5)
        );
        assert_eq!(tool_call(Agent::Gemini, &raw).unwrap().id, None);
        assert_eq!(
            tool_call(Agent::ClaudeCode, &json!({"tool_use_id": "t"})),
            None
        );
    }
}
