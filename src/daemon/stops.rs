//! Stop chains: how many times in a row each session's Stop (and each
//! subagent's SubagentStop) was blocked, so a rule's `max_blocks` can be
//! judged (see "Stop chains" in [`crate::rules`]).
//!
//! The rule engine stays pure: [`StopChains::blocks`] gives the count that
//! goes into [`crate::rules::Query::stop_blocks`], and the hook path calls
//! [`StopChains::record`] with what was finally answered (a rule's verdict,
//! or a client's). A chain ends, and its count with it, when a Stop is not
//! blocked, when the session's next prompt arrives, or when the session ends.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::agent::claude::HookEventKind;

/// Sessions tracked at most; past that the counts start over (a session
/// that never sent SessionEnd cannot grow the table forever). Losing a
/// count only means a chain's next Stop is taken as its second.
const MAX_SESSIONS: usize = 4096;

/// One session's chains: (subagent id for SubagentStop, `None` for Stop;
/// blocks in a row). A handful at most.
type SessionChains = Vec<(Option<String>, u32)>;

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
    /// (its session and subagent ids; nothing for events that are no part
    /// of a chain): a waiting hook keeps this, not the input.
    pub fn chain_fields(kind: HookEventKind, input: &Value) -> Value {
        if chain_of(kind, input).is_none() && !ends_session(kind) {
            return Value::Null;
        }
        let mut fields = serde_json::Map::new();
        for key in ["session_id", "agent_id"] {
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
            .and_then(|chains| chains.iter().find(|(a, _)| a.as_deref() == agent))
            .map_or(0, |(_, n)| *n)
    }

    /// Notes what was answered to an event: a blocked Stop or SubagentStop
    /// adds one to its chain, one let through ends it; a new prompt or the
    /// session's end ends all the session's chains. Other events are
    /// ignored (without taking the lock).
    pub fn record(&self, kind: HookEventKind, input: &Value, blocked: bool) {
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
                let chains = sessions.entry(session.to_string()).or_default();
                match chains.iter_mut().find(|(a, _)| a.as_deref() == agent) {
                    Some((_, n)) => *n = n.saturating_add(1),
                    None => chains.push((agent.map(str::to_string), 1)),
                }
            }
            Some((session, agent)) => {
                if let Some(chains) = sessions.get_mut(session) {
                    chains.retain(|(a, _)| a.as_deref() != agent);
                    if chains.is_empty() {
                        sessions.remove(session);
                    }
                }
            }
            None => {
                if let Some(session) = input.get("session_id").and_then(Value::as_str) {
                    sessions.remove(session);
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
        chains.record(Stop, &stop, true);
        chains.record(Stop, &stop, true);
        chains.record(SubagentStop, &sub("a"), true);
        assert_eq!(chains.blocks(Stop, &stop), 2);
        assert_eq!(chains.blocks(SubagentStop, &sub("a")), 1);
        assert_eq!(chains.blocks(SubagentStop, &sub("b")), 0);
        // Another session's chain is its own.
        assert_eq!(chains.blocks(Stop, &json!({"session_id": "t"})), 0);
        // A Stop let through ends its chain only.
        chains.record(Stop, &stop, false);
        assert_eq!(chains.blocks(Stop, &stop), 0);
        assert_eq!(chains.blocks(SubagentStop, &sub("a")), 1);
        // A new prompt ends them all; other events change nothing.
        chains.record(Stop, &stop, true);
        chains.record(PreToolUse, &prompt, true);
        assert_eq!(chains.blocks(Stop, &stop), 1);
        chains.record(UserPromptSubmit, &prompt, false);
        assert_eq!(chains.blocks(Stop, &stop), 0);
        assert_eq!(chains.blocks(SubagentStop, &sub("a")), 0);
        chains.record(Stop, &stop, true);
        chains.record(SessionEnd, &prompt, false);
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
        );
        assert_eq!(chains.blocks(SubagentStop, &sub), 1);
        let prompt = json!({"session_id": "s", "prompt": "go on"});
        chains.record(
            UserPromptSubmit,
            &StopChains::chain_fields(UserPromptSubmit, &prompt),
            false,
        );
        assert_eq!(chains.blocks(SubagentStop, &sub), 0);
        assert_eq!(
            StopChains::chain_fields(PreToolUse, &sub),
            Value::Null,
            "not a chain's"
        );
    }

    #[test]
    fn the_table_stays_bounded() {
        let chains = StopChains::default();
        for i in 0..MAX_SESSIONS + 10 {
            chains.record(Stop, &json!({"session_id": format!("s{i}")}), true);
        }
        assert!(chains.sessions.lock().unwrap().len() <= MAX_SESSIONS);
    }
}
