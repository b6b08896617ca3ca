//! Hooks answered at once without being judged: copies of an agent-SDK
//! run's hooks, and probes from `hookd doctor --probe`.
//!
//! **Copies.** An Agent SDK run's Claude Code process loads the same
//! settings files as the `claude` CLI, so after `hookd install` each of the
//! run's hooks reaches hookd twice: from the adapter's callback (harness
//! `agent-sdk`, which the run's owner sees and a client may decide) and from
//! `hook-forwarder` (harness `claude-code`). Judging both holds an `ask`
//! twice, and the copy nobody decides falls back while the other is
//! allowed. So the daemon puts `HOOKD_RUN_ID` in the adapter's environment;
//! the SDK's Claude Code and its command hooks inherit it; the forwarder
//! relays it with the `CLAUDE*` variables; and a hook carrying it that
//! [`super::runs::Runs::recognise_copy`] accepts is a copy: answered "no
//! opinion" at once and logged with `copy_of` and source `copy`. The
//! adapter's callback carries the real decision, and Claude Code merges the
//! answers of an event's hooks with the most restrictive winning (deny >
//! defer > ask > allow; PermissionRequest waits for `canUseTool` when the
//! hooks give no decision), so "no opinion" never weakens it. The same
//! goes for the SDK's own PermissionRequest hook in a run that registered
//! `canUseTool`: the SDK asks both for one tool call, and `canUseTool` (the
//! one that carries the tool-use id and cannot be left undecided) is the
//! one judged.
//!
//! **Probes** ([`crate::agent::claude::probe`]) get their fixed answer, never a
//! rule's or a client's.
//!
//! Neither is ever pending: their answers are not `ask`, and their source
//! is neither `default` nor a rule, so [`super::hook`] never routes them to
//! clients.

use crate::agent::claude::{probe, HookEventKind};
use crate::decision::{Answer, Source};
use crate::event::Event;
use crate::protocol::adapter::CAN_USE_TOOL_ORIGIN;

use super::controller::Judgement;
use super::hub::RunLink;
use super::Shared;

/// The environment variable that names the agent-SDK run a Claude Code
/// process belongs to.
pub const RUN_ID_ENV: &str = "HOOKD_RUN_ID";

/// The judgement of `event` if it is a probe or a copy (then marked as
/// one: `copy_of`, and `run_id` for a command hook), else `None`.
/// `generation` is the rules generation to record.
pub fn recognise(
    event: &mut Event,
    run: Option<&RunLink>,
    shared: &Shared,
    generation: u64,
) -> Option<Judgement> {
    let unjudged = |answer, source| Judgement {
        answer,
        source,
        // Even in permissive mode: a probe checks the output path, and a
        // copy's answer is "no opinion" anyway.
        enforced: true,
        ..Judgement::default_for(generation)
    };
    if probe::is_probe(&event.raw) {
        return Some(unjudged(probe::answer(event.kind()), Source::Probe));
    }
    let reason = match run {
        Some(run) => {
            let shadowed = run.can_use_tool
                && event.kind() == HookEventKind::PermissionRequest
                && event.raw.get("hookd_origin").and_then(|o| o.as_str())
                    != Some(CAN_USE_TOOL_ORIGIN);
            if !shadowed {
                return None;
            }
            event.copy_of = Some(CAN_USE_TOOL_ORIGIN);
            "the SDK asks canUseTool about the same tool call, and that answer decides".to_string()
        }
        None => {
            let run_id = event.env.get(RUN_ID_ENV)?;
            let recognised = shared.runs.recognise_copy(
                run_id,
                event.input.base.session_id.as_deref(),
                event.env.get("CLAUDE_PID").map(String::as_str),
            );
            if let Err(why) = recognised {
                tracing::info!(
                    run = %run_id,
                    event = %event.known_name(),
                    "a hook names run {run_id} ({RUN_ID_ENV}), but {why}: judged as a hook of its own"
                );
                return None;
            }
            event.run_id = Some(run_id.clone());
            event.copy_of = Some("agent-sdk");
            format!(
                "a copy of a hook of run {run_id}, whose adapter reports it: that answer decides"
            )
        }
    };
    Some(unjudged(
        Answer {
            reason: Some(reason),
            ..Answer::no_opinion()
        },
        Source::Copy,
    ))
}
