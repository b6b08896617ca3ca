//! Stop chains: how many times in a row each session's Stop (and each
//! subagent's SubagentStop) was blocked, so a rule's `max_blocks` can be
//! judged (see "Stop chains" in [`crate::rules`]).
//!
//! The rule engine stays pure: [`StopChains::blocks`] gives the count that
//! goes into [`crate::rules::Query::stop_blocks`], and the hook path calls
//! [`StopChains::record`] with what was finally answered (a rule's verdict,
//! or a client's). A chain ends, and its count with it, when a Stop is not
//! blocked, when the session's next prompt arrives, or when the session ends.
//!
//! A prompt the agent sends itself because its Stop was blocked is no next
//! prompt: Gemini answers a blocked AfterAgent by prompting itself with the
//! block's reason, which fires BeforeAgent (a UserPromptSubmit) before the
//! chain's next Stop. The agent's dialect says what that prompt is
//! ([`crate::agent::Agent::continuation_prompt`]); the session expects it
//! once, and it goes on with the chain (taking every BeforeAgent for a new
//! prompt reset the count at each block, so `max_blocks` never held).

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::agent::claude::HookEventKind;

/// Sessions tracked at most; past that the counts start over (a session
/// that never sent SessionEnd cannot grow the table forever). Losing a
/// count only means a chain's next Stop is taken as its second.
const MAX_SESSIONS: usize = 4096;

/// One session's stop chains.
#[derive(Debug, Default)]
struct SessionChains {
    /// (subagent id for SubagentStop, `None` for Stop; blocks in a row). A
    /// handful at most.
    chains: Vec<(Option<String>, u32)>,
    /// The prompt the agent sends itself because its last Stop was blocked
    /// (Gemini's continuation), expected once: that prompt goes on with the
    /// chain instead of ending it.
    continuation: Option<Box<str>>,
}

/// Consecutive blocks per stop chain, per session.
#[derive(Debug, Default)]
pub struct StopChains {
    /// Session id → its chains.
    sessions: Mutex<HashMap<String, SessionChains>>,
}

/// The chain an event belongs to: its session and, for SubagentStop, its
/// subagent. `None` for other events and inputs without a session id.
fn chain_of(kind: HookEventKind, input: &Value) -> Option<(&str, Option<&str>)> {
    let session = input.get("session_id")?.as_str()?;
    match kind {
        HookEventKind::Stop => Some((session, None)),
        HookEventKind::SubagentStop => Some((
            session,
            Some(input.get("agent_id").and_then(Value::as_str).unwrap_or("")),
        )),
        _ => None,
    }
}

/// Whether `kind` ends every chain of its session.
fn ends_session(kind: HookEventKind) -> bool {
    matches!(
        kind,
        HookEventKind::UserPromptSubmit | HookEventKind::SessionEnd
    )
}

impl StopChains {
    /// The part of a `kind` hook input that [`StopChains::record`] reads
    /// (its session and subagent ids, a prompt's text; nothing for events
    /// that are no part of a chain): a waiting hook keeps this, not the
    /// input.
    pub fn chain_fields(kind: HookEventKind, input: &Value) -> Value {
        if chain_of(kind, input).is_none() && !ends_session(kind) {
            return Value::Null;
        }
        let prompt = (kind == HookEventKind::UserPromptSubmit).then_some("prompt");
        let mut fields = serde_json::Map::new();
        for key in ["session_id", "agent_id"].into_iter().chain(prompt) {
            if let Some(value) = input.get(key) {
                fields.insert(key.to_string(), value.clone());
            }
        }
        Value::Object(fields)
    }

    /// How many times in a row the chain of this Stop or SubagentStop has
    /// been blocked so far (0 for any other event).
    pub fn blocks(&self, kind: HookEventKind, input: &Value) -> u32 {
        let Some((session, agent)) = chain_of(kind, input) else {
            return 0;
        };
        let sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions
            .get(session)
            .and_then(|session| session.chains.iter().find(|(a, _)| a.as_deref() == agent))
            .map_or(0, |(_, n)| *n)
    }

    /// Notes what was answered to an event: a blocked Stop or SubagentStop
    /// adds one to its chain, one let through ends it; a new prompt or the
    /// session's end ends all the session's chains. `continuation` is, for
    /// a blocked Stop, the prompt the agent will send itself because of the
    /// block ([`crate::agent::Agent::continuation_prompt`]): when it comes,
    /// it ends nothing. Other events are ignored (without taking the lock).
    pub fn record(
        &self,
        kind: HookEventKind,
        input: &Value,
        blocked: bool,
        continuation: Option<&str>,
    ) {
        let chain = chain_of(kind, input);
        if chain.is_none() && !ends_session(kind) {
            return;
        }
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        match chain {
            Some((session, agent)) if blocked => {
                if !sessions.contains_key(session) && sessions.len() >= MAX_SESSIONS {
                    sessions.clear();
                }
                let state = sessions.entry(session.to_string()).or_default();
                match state.chains.iter_mut().find(|(a, _)| a.as_deref() == agent) {
                    Some((_, n)) => *n = n.saturating_add(1),
                    None => state.chains.push((agent.map(str::to_string), 1)),
                }
                if agent.is_none() {
                    state.continuation = continuation.map(Box::from);
                }
            }
            Some((session, agent)) => {
                if let Some(state) = sessions.get_mut(session) {
                    state.chains.retain(|(a, _)| a.as_deref() != agent);
                    if agent.is_none() {
                        state.continuation = None;
                    }
                    if state.chains.is_empty() {
                        sessions.remove(session);
                    }
                }
            }
            None => {
                let Some(session) = input.get("session_id").and_then(Value::as_str) else {
                    return;
                };
                let prompt = input.get("prompt").and_then(Value::as_str);
                match sessions.get_mut(session) {
                    Some(state)
                        if kind == HookEventKind::UserPromptSubmit
                            && prompt.is_some()
                            && state.continuation.as_deref() == prompt =>
                    {
                        state.continuation = None;
                    }
                    _ => {
                        sessions.remove(session);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use HookEventKind::*;

    #[test]
    fn counts_consecutive_blocks_per_chain_and_resets() {
        let chains = StopChains::default();
        let stop = json!({"session_id": "s", "hook_event_name": "Stop"});
        let sub = |agent: &str| json!({"session_id": "s", "agent_id": agent});
        let prompt = json!({"session_id": "s"});
        assert_eq!(chains.blocks(Stop, &stop), 0);
        chains.record(Stop, &stop, true, None);
        chains.record(Stop, &stop, true, None);
        chains.record(SubagentStop, &sub("a"), true, None);
        assert_eq!(chains.blocks(Stop, &stop), 2);
        assert_eq!(chains.blocks(SubagentStop, &sub("a")), 1);
        assert_eq!(chains.blocks(SubagentStop, &sub("b")), 0);
        // Another session's chain is its own.
        assert_eq!(chains.blocks(Stop, &json!({"session_id": "t"})), 0);
        // A Stop let through ends its chain only.
        chains.record(Stop, &stop, false, None);
        assert_eq!(chains.blocks(Stop, &stop), 0);
        assert_eq!(chains.blocks(SubagentStop, &sub("a")), 1);
        // A new prompt ends them all; other events change nothing.
        chains.record(Stop, &stop, true, None);
        chains.record(PreToolUse, &prompt, true, None);
        assert_eq!(chains.blocks(Stop, &stop), 1);
        chains.record(UserPromptSubmit, &prompt, false, None);
        assert_eq!(chains.blocks(Stop, &stop), 0);
        assert_eq!(chains.blocks(SubagentStop, &sub("a")), 0);
        chains.record(Stop, &stop, true, None);
        chains.record(SessionEnd, &prompt, false, None);
        assert_eq!(chains.blocks(Stop, &stop), 0);
        assert!(chains.sessions.lock().unwrap().is_empty());
    }

    #[test]
    fn the_chain_fields_record_what_the_whole_input_would() {
        let chains = StopChains::default();
        let sub = json!({"session_id": "s", "agent_id": "a", "last_assistant_message": "done"});
        chains.record(
            SubagentStop,
            &StopChains::chain_fields(SubagentStop, &sub),
            true,
            None,
        );
        assert_eq!(chains.blocks(SubagentStop, &sub), 1);
        let prompt = json!({"session_id": "s", "prompt": "go on"});
        chains.record(
            UserPromptSubmit,
            &StopChains::chain_fields(UserPromptSubmit, &prompt),
            false,
            None,
        );
        assert_eq!(chains.blocks(SubagentStop, &sub), 0);
        assert_eq!(
            StopChains::chain_fields(PreToolUse, &sub),
            Value::Null,
            "not a chain's"
        );
    }

    #[test]
    fn the_prompt_a_blocked_stop_causes_goes_on_with_the_chain() {
        let chains = StopChains::default();
        let stop = json!({"session_id": "s"});
        let prompt = |text: &str| {
            StopChains::chain_fields(
                UserPromptSubmit,
                &json!({"session_id": "s", "prompt": text, "cwd": "/p"}),
            )
        };
        chains.record(Stop, &stop, true, Some("run the tests"));
        chains.record(UserPromptSubmit, &prompt("run the tests"), false, None);
        assert_eq!(
            chains.blocks(Stop, &stop),
            1,
            "the continuation ends nothing"
        );
        // Expected once: the same text again is the user's.
        chains.record(UserPromptSubmit, &prompt("run the tests"), false, None);
        assert_eq!(chains.blocks(Stop, &stop), 0);
        // Any other prompt ends the chain.
        chains.record(Stop, &stop, true, Some("run the tests"));
        chains.record(UserPromptSubmit, &prompt("something else"), false, None);
        assert_eq!(chains.blocks(Stop, &stop), 0);
        // A Stop let through forgets the continuation with its chain.
        chains.record(Stop, &stop, true, Some("run the tests"));
        chains.record(
            SubagentStop,
            &json!({"session_id": "s", "agent_id": "a"}),
            true,
            None,
        );
        chains.record(Stop, &stop, false, None);
        chains.record(UserPromptSubmit, &prompt("run the tests"), false, None);
        assert!(chains.sessions.lock().unwrap().is_empty());
    }

    #[test]
    fn the_table_stays_bounded() {
        let chains = StopChains::default();
        for i in 0..MAX_SESSIONS + 10 {
            chains.record(Stop, &json!({"session_id": format!("s{i}")}), true, None);
        }
        assert!(chains.sessions.lock().unwrap().len() <= MAX_SESSIONS);
    }
}
