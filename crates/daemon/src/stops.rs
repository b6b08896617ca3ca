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

use crate::agent::claude::{HookEventKind, InputFields};

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
fn chain_of(kind: HookEventKind, input: InputFields<'_>) -> Option<(&str, Option<&str>)> {
    let session = input.session_id?;
    match kind {
        HookEventKind::Stop => Some((session, None)),
        HookEventKind::SubagentStop => Some((session, Some(input.agent_id.unwrap_or("")))),
        _ => None,
    }
}

/// The part of a hook input that [`StopChains::record`] reads (its session
/// and subagent ids, a prompt's text), owned: a waiting hook keeps this,
/// not the input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChainFields {
    session_id: Option<Box<str>>,
    agent_id: Option<Box<str>>,
    prompt: Option<Box<str>>,
}

impl ChainFields {
    /// The fields as the stop chains read them.
    pub fn fields(&self) -> InputFields<'_> {
        InputFields {
            session_id: self.session_id.as_deref(),
            agent_id: self.agent_id.as_deref(),
            prompt: self.prompt.as_deref(),
            ..InputFields::default()
        }
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
    /// (nothing for events that are no part of a chain).
    pub fn chain_fields(kind: HookEventKind, input: InputFields<'_>) -> Option<ChainFields> {
        if chain_of(kind, input).is_none() && !ends_session(kind) {
            return None;
        }
        let prompt = input
            .prompt
            .filter(|_| kind == HookEventKind::UserPromptSubmit);
        Some(ChainFields {
            session_id: input.session_id.map(Box::from),
            agent_id: input.agent_id.map(Box::from),
            prompt: prompt.map(Box::from),
        })
    }

    /// How many times in a row the chain of this Stop or SubagentStop has
    /// been blocked so far (0 for any other event).
    pub fn blocks(&self, kind: HookEventKind, input: InputFields<'_>) -> u32 {
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
        input: InputFields<'_>,
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
                let Some(session) = input.session_id else {
                    return;
                };
                let prompt = input.prompt;
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
    use serde_json::{json, Value};
    use HookEventKind::*;

    fn of(input: &Value) -> InputFields<'_> {
        InputFields::of(input)
    }

    #[test]
    fn counts_consecutive_blocks_per_chain_and_resets() {
        let chains = StopChains::default();
        let stop = json!({"session_id": "s", "hook_event_name": "Stop"});
        let stop = of(&stop);
        let (a, b) = (
            json!({"session_id": "s", "agent_id": "a"}),
            json!({"session_id": "s", "agent_id": "b"}),
        );
        let (a, b) = (of(&a), of(&b));
        let prompt = json!({"session_id": "s"});
        let prompt = of(&prompt);
        assert_eq!(chains.blocks(Stop, stop), 0);
        chains.record(Stop, stop, true, None);
        chains.record(Stop, stop, true, None);
        chains.record(SubagentStop, a, true, None);
        assert_eq!(chains.blocks(Stop, stop), 2);
        assert_eq!(chains.blocks(SubagentStop, a), 1);
        assert_eq!(chains.blocks(SubagentStop, b), 0);
        // Another session's chain is its own.
        assert_eq!(chains.blocks(Stop, of(&json!({"session_id": "t"}))), 0);
        // A Stop let through ends its chain only.
        chains.record(Stop, stop, false, None);
        assert_eq!(chains.blocks(Stop, stop), 0);
        assert_eq!(chains.blocks(SubagentStop, a), 1);
        // A new prompt ends them all; other events change nothing.
        chains.record(Stop, stop, true, None);
        chains.record(PreToolUse, prompt, true, None);
        assert_eq!(chains.blocks(Stop, stop), 1);
        chains.record(UserPromptSubmit, prompt, false, None);
        assert_eq!(chains.blocks(Stop, stop), 0);
        assert_eq!(chains.blocks(SubagentStop, a), 0);
        chains.record(Stop, stop, true, None);
        chains.record(SessionEnd, prompt, false, None);
        assert_eq!(chains.blocks(Stop, stop), 0);
        assert!(chains.sessions.lock().unwrap().is_empty());
    }

    #[test]
    fn the_chain_fields_record_what_the_whole_input_would() {
        let chains = StopChains::default();
        let sub = json!({"session_id": "s", "agent_id": "a", "last_assistant_message": "done"});
        let kept = StopChains::chain_fields(SubagentStop, of(&sub)).unwrap();
        chains.record(SubagentStop, kept.fields(), true, None);
        assert_eq!(chains.blocks(SubagentStop, of(&sub)), 1);
        let prompt = json!({"session_id": "s", "prompt": "go on"});
        let kept = StopChains::chain_fields(UserPromptSubmit, of(&prompt)).unwrap();
        chains.record(UserPromptSubmit, kept.fields(), false, None);
        assert_eq!(chains.blocks(SubagentStop, of(&sub)), 0);
        assert_eq!(
            StopChains::chain_fields(PreToolUse, of(&sub)),
            None,
            "not a chain's"
        );
    }

    #[test]
    fn the_prompt_a_blocked_stop_causes_goes_on_with_the_chain() {
        let chains = StopChains::default();
        let stop = json!({"session_id": "s"});
        let stop = of(&stop);
        let prompt = |text: &str| {
            StopChains::chain_fields(
                UserPromptSubmit,
                of(&json!({"session_id": "s", "prompt": text, "cwd": "/p"})),
            )
            .unwrap()
        };
        chains.record(Stop, stop, true, Some("run the tests"));
        chains.record(
            UserPromptSubmit,
            prompt("run the tests").fields(),
            false,
            None,
        );
        assert_eq!(
            chains.blocks(Stop, stop),
            1,
            "the continuation ends nothing"
        );
        // Expected once: the same text again is the user's.
        chains.record(
            UserPromptSubmit,
            prompt("run the tests").fields(),
            false,
            None,
        );
        assert_eq!(chains.blocks(Stop, stop), 0);
        // Any other prompt ends the chain.
        chains.record(Stop, stop, true, Some("run the tests"));
        chains.record(
            UserPromptSubmit,
            prompt("something else").fields(),
            false,
            None,
        );
        assert_eq!(chains.blocks(Stop, stop), 0);
        // A Stop let through forgets the continuation with its chain.
        chains.record(Stop, stop, true, Some("run the tests"));
        chains.record(
            SubagentStop,
            of(&json!({"session_id": "s", "agent_id": "a"})),
            true,
            None,
        );
        chains.record(Stop, stop, false, None);
        chains.record(
            UserPromptSubmit,
            prompt("run the tests").fields(),
            false,
            None,
        );
        assert!(chains.sessions.lock().unwrap().is_empty());
    }

    #[test]
    fn the_table_stays_bounded() {
        let chains = StopChains::default();
        for i in 0..MAX_SESSIONS + 10 {
            let stop = json!({"session_id": format!("s{i}")});
            chains.record(Stop, of(&stop), true, None);
        }
        assert!(chains.sessions.lock().unwrap().len() <= MAX_SESSIONS);
    }
}
