//! Probes: the synthetic hook inputs `hookd doctor --probe` sends through a
//! registered hook command, and the answer the daemon gives one.
//!
//! A probe is an input with `"hookd_probe": true` and a session id starting
//! with [`SESSION_PREFIX`]. The daemon recognises it, answers [`answer`]
//! without consulting rules or clients, and logs it with source `probe`;
//! doctor then compares what the hook printed with
//! [`super::output::render`] of that answer, byte for byte.
//!
//! Architecture invariant: a probe's answer never grants anything (no
//! allow, no updated input): it blocks where the event can block, so the
//! output shape is exercised, adds context where the event takes only
//! context, and is "no opinion" elsewhere. So an input that merely
//! pretends to be a probe can make hookd block, never let something
//! through that a rule would stop.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::output::{accepts_context, supported_verdicts};
use super::HookEventKind;
use crate::decision::{Answer, Verdict};

/// The input field that marks a probe.
pub const MARKER: &str = "hookd_probe";

/// Every probe's session id starts with this (then a uuid), so it can
/// never be a real session's.
pub const SESSION_PREFIX: &str = "hookd-probe-";

/// The reason of a probe's block (shown by Claude Code if one ever
/// reached it).
pub const REASON: &str = "hookd doctor --probe: a synthetic event, blocked on purpose";

/// The context a probe adds where the event takes only context.
pub const CONTEXT: &str = "hookd doctor --probe: a synthetic event";

/// Whether `input` is a probe: the marker is `true` and the session id has
/// the probe prefix.
pub fn is_probe(input: &Value) -> bool {
    input.get(MARKER) == Some(&Value::Bool(true))
        && input
            .get("session_id")
            .and_then(Value::as_str)
            .is_some_and(|s| s.starts_with(SESSION_PREFIX))
}

/// The answer the daemon gives a probe of `kind`: a block where the event
/// supports one, context where it takes only context, else no opinion.
pub fn answer(kind: HookEventKind) -> Answer {
    if supported_verdicts(kind).contains(&Verdict::Deny) {
        Answer::new(Verdict::Deny, Some(REASON.into()))
    } else if accepts_context(kind) {
        Answer {
            additional_context: Some(CONTEXT.into()),
            ..Answer::no_opinion()
        }
    } else {
        Answer::no_opinion()
    }
}

/// Claude Code's probe `input` as another agent sends it: under the
/// agent's own event name `event` and, for a tool event, its shell tool's
/// name `shell_tool` (`None`: the agent calls it `Bash` too).
pub fn renamed(mut input: Value, event: &str, shell_tool: Option<&str>) -> Value {
    input["hook_event_name"] = Value::from(event);
    if let Some(tool) = shell_tool.filter(|_| input.get("tool_name").is_some()) {
        input["tool_name"] = Value::from(tool);
    }
    input
}

/// A probe input for event `name`, shaped like Claude Code's (reference
/// §5): the base fields, the event's own fields (a harmless `true` Bash
/// call for tool events), the [`MARKER`], and `session_id`. Nothing in it
/// names a real file: the transcript is `/dev/null`.
pub fn input(name: &str, session_id: &str, cwd: &Path) -> Value {
    use HookEventKind::*;
    let cwd = cwd.display().to_string();
    let tool_input = json!({"command": "true", "description": "hookd doctor --probe"});
    let tool_use_id = "toolu_hookd_probe";
    let specific = match HookEventKind::from_name(name) {
        PreToolUse => {
            json!({"tool_name": "Bash", "tool_input": tool_input, "tool_use_id": tool_use_id})
        }
        PermissionRequest => {
            json!({"tool_name": "Bash", "tool_input": tool_input, "permission_suggestions": []})
        }
        PermissionDenied => json!({
            "tool_name": "Bash", "tool_input": tool_input, "tool_use_id": tool_use_id,
            "reason": "hookd doctor --probe"
        }),
        PostToolUse => json!({
            "tool_name": "Bash", "tool_input": tool_input, "tool_use_id": tool_use_id,
            "tool_response": {"stdout": "", "stderr": "", "interrupted": false, "isImage": false,
                              "noOutputExpected": false},
            "duration_ms": 1
        }),
        PostToolUseFailure => json!({
            "tool_name": "Bash", "tool_input": tool_input, "tool_use_id": tool_use_id,
            "error": "hookd doctor --probe", "is_interrupt": false
        }),
        PostToolBatch => json!({"tool_calls": [{
            "tool_name": "Bash", "tool_input": tool_input, "tool_use_id": tool_use_id,
            "tool_response": ""
        }]}),
        UserPromptSubmit => json!({"prompt": "hookd doctor --probe"}),
        UserPromptExpansion => json!({
            "expansion_type": "slash_command", "command_name": "hookd-probe",
            "command_args": "", "prompt": "/hookd-probe"
        }),
        SessionStart => json!({"source": "startup"}),
        SessionEnd => json!({"reason": "other"}),
        Setup => json!({"trigger": "init"}),
        Stop => json!({"stop_hook_active": false}),
        SubagentStop => json!({
            "stop_hook_active": false, "agent_id": "hookd-probe", "agent_type": "general-purpose",
            "agent_transcript_path": "/dev/null"
        }),
        StopFailure => json!({"error": "unknown"}),
        SubagentStart => json!({"agent_id": "hookd-probe", "agent_type": "general-purpose"}),
        Notification => json!({
            "message": "hookd doctor --probe", "notification_type": "idle_prompt"
        }),
        PreCompact => json!({"trigger": "manual", "custom_instructions": null}),
        PostCompact => json!({"trigger": "manual", "compact_summary": ""}),
        PreModelSwitch | PostModelSwitch => json!({
            "from_model": "hookd-probe", "to_model": "hookd-probe",
            "requested_model": "hookd-probe", "source": "command", "context_tokens": 0,
            "prompt_cache_warm": false
        }),
        TeammateIdle => json!({"teammate_name": "hookd-probe", "team_name": "hookd-probe"}),
        TaskCreated | TaskCompleted => {
            json!({"task_id": "hookd-probe", "task_subject": "hookd doctor --probe"})
        }
        Elicitation => json!({"mcp_server_name": "hookd-probe", "message": "hookd doctor --probe"}),
        ElicitationResult => json!({"mcp_server_name": "hookd-probe", "action": "cancel"}),
        ConfigChange => json!({"source": "user_settings"}),
        InstructionsLoaded => json!({
            "file_path": "/dev/null", "memory_type": "Project", "load_reason": "session_start"
        }),
        WorktreeCreate => json!({"name": "hookd-probe"}),
        WorktreeRemove => json!({"worktree_path": "/dev/null"}),
        CwdChanged => json!({"old_cwd": cwd, "new_cwd": cwd}),
        FileChanged => json!({"file_path": "/dev/null", "event": "change"}),
        DirectoryAdded => json!({"directory": cwd, "source": "slash_command"}),
        MessageDisplay => json!({
            "turn_id": "hookd-probe", "message_id": "hookd-probe", "index": 0, "final": true,
            "delta": ""
        }),
        Unknown => json!({}),
    };
    let mut input = Map::new();
    input.insert("session_id".into(), session_id.into());
    input.insert("transcript_path".into(), "/dev/null".into());
    input.insert("cwd".into(), cwd.into());
    input.insert("permission_mode".into(), "default".into());
    input.insert("hook_event_name".into(), name.into());
    if let Value::Object(fields) = specific {
        input.extend(fields);
    }
    input.insert(MARKER.into(), true.into());
    Value::Object(input)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::claude::{render, HookInput};

    #[test]
    fn a_probe_is_marked_and_in_a_probe_session() {
        let probe = input("PreToolUse", "hookd-probe-1", Path::new("/p"));
        assert!(is_probe(&probe));
        let mut real_session = probe.clone();
        real_session["session_id"] = "3cfde526".into();
        assert!(!is_probe(&real_session));
        let mut unmarked = probe.clone();
        unmarked.as_object_mut().unwrap().remove(MARKER);
        assert!(!is_probe(&unmarked));
        let mut string_marker = probe;
        string_marker[MARKER] = "true".into();
        assert!(!is_probe(&string_marker));
    }

    #[test]
    fn every_probe_input_parses_as_its_event() {
        for kind in HookEventKind::ALL.iter().copied() {
            let probe = input(kind.as_str(), "hookd-probe-1", Path::new("/p"));
            let parsed = HookInput::parse(&probe);
            assert_eq!(parsed.kind, kind);
            assert_eq!(parsed.problem, None, "{kind}: {probe}");
        }
    }

    #[test]
    fn a_probe_answer_never_grants_and_shows_a_shape_where_it_can() {
        for kind in HookEventKind::ALL.iter().copied() {
            let answer = answer(kind);
            assert!(
                matches!(answer.verdict, Verdict::Deny | Verdict::NoOpinion),
                "{kind}"
            );
            assert_eq!(answer.updated_input, None);
            let out = render(kind, &answer);
            let shaped = supported_verdicts(kind).contains(&Verdict::Deny) || accepts_context(kind);
            assert_eq!(
                out.stdout.is_empty() && out.exit_code == 0,
                !shaped,
                "{kind}"
            );
        }
    }
}
