//! What the in-process plugins of OpenCode and the Pi coding agent share
//! (`plugins/` in the repository; see [`crate::agent::opencode`] and
//! [`crate::agent::pi`]): the input they relay and the one small answer
//! they execute.
//!
//! Neither agent runs a command hook: a plugin inside the agent's process
//! keeps one connection to the daemon and sends each event as a `hook`
//! frame (`harness: "opencode"` or `"pi"`). Its `input` is the agent's own
//! event, its values unchanged, under the keys every dialect shares:
//!
//! | key | OpenCode | Pi |
//! | --- | --- | --- |
//! | `hook_event_name` | the hook's name (`tool.execute.before`, or the bus event's `type`, `session.idle`) | the event's `type` (`tool_call`) |
//! | `session_id` | `sessionID` | `ctx.sessionManager.getSessionId()` |
//! | `cwd` | the plugin's `directory` | `ctx.cwd` |
//! | `tool_name` | `tool` | `toolName` |
//! | `tool_input` | `output.args` | `input` |
//! | `tool_use_id` | `callID` | `toolCallId` |
//!
//! plus whatever else the event carries (a prompt's `prompt`). The dialect
//! maps the names and the inputs onto Claude Code's for the rules.
//!
//! The answer ([`render`]) is a `hook_result` whose `stdout` is empty ("no
//! opinion": the agent goes on) or one JSON object the plugin executes
//! without reading anything else into it:
//!
//! ```json
//! {"block":true,"reason":"R"}
//! ```
//!
//! Pi's own handler result; OpenCode's plugin throws `Error(R)`, which
//! OpenCode gives the model as the tool's failed result. Neither agent can
//! be asked from a plugin, nor has an allow that skips its own checks: an
//! allow is "no opinion".

use crate::agent::claude::output::HookOutput;
use crate::agent::claude::{FailClosed, HookEventKind};
use crate::agent::deny_reason;
use crate::agent::dialect::{self, EventTable};
use crate::decision::{Answer, Verdict};

/// Renders `answer` for an event of `kind` of the agent whose events are
/// `table`: `{"block":true,"reason":R}` when the event honors the deny,
/// else nothing.
pub fn render(table: EventTable, kind: HookEventKind, answer: &Answer) -> HookOutput {
    let Some(event) = dialect::row_of(table, kind) else {
        return HookOutput::default();
    };
    if dialect::honored(event.verdicts, answer.verdict) != Verdict::Deny {
        return HookOutput::default();
    }
    let reason = serde_json::Value::from(deny_reason(answer));
    HookOutput {
        exit_code: 0,
        stdout: format!("{{\"block\":true,\"reason\":{reason}}}\n"),
        stderr: String::new(),
    }
}

/// The answer [`render`] wrote, as the value the Pi adapter of `hookd run`
/// returns from its handler: the `{"block":true,"reason":R}` object, or
/// `null` for "no opinion" (and for anything else, which would be a bug).
#[cfg(feature = "frames")]
pub fn handler_result(output: &HookOutput) -> serde_json::Value {
    match serde_json::from_str::<serde_json::Value>(output.stdout.trim()) {
        Ok(answer) if answer.get("block") == Some(&serde_json::Value::Bool(true)) => answer,
        _ => serde_json::Value::Null,
    }
}

/// What an `ask` nobody answered becomes for an agent that cannot be
/// asked from a plugin. `own_flow`: the agent has a permission flow of its
/// own (OpenCode), which goes on ("no opinion") unless the plugin fails
/// closed for the event; without one (Pi) nothing would ever ask, so it is
/// a deny with the ask's reason.
pub fn unanswered_ask(
    kind: HookEventKind,
    fail_closed: FailClosed,
    own_flow: bool,
    ask: Answer,
) -> Answer {
    if own_flow && !fail_closed.blocks(kind) {
        return Answer {
            additional_context: ask.additional_context,
            ..Answer::no_opinion()
        };
    }
    let reason = ask
        .reason
        .unwrap_or_else(|| "hookd asked and nobody answered".into());
    Answer {
        additional_context: ask.additional_context,
        ..Answer::new(Verdict::Deny, Some(reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;

    #[cfg(feature = "frames")]
    #[test]
    fn the_pi_adapter_returns_the_block_or_null() {
        let deny = Agent::Pi.render(
            HookEventKind::PreToolUse,
            &Answer::new(Verdict::Deny, Some("no".into())),
        );
        assert_eq!(
            handler_result(&deny),
            serde_json::json!({"block": true, "reason": "no"})
        );
        let allow = Agent::Pi.render(
            HookEventKind::PreToolUse,
            &Answer::new(Verdict::Allow, None),
        );
        assert_eq!(handler_result(&allow), serde_json::Value::Null);
    }

    #[test]
    fn a_deny_is_one_small_json_and_everything_else_nothing() {
        for agent in [Agent::OpenCode, Agent::Pi] {
            let out = agent.render(
                HookEventKind::PreToolUse,
                &Answer::new(Verdict::Deny, Some("no \"rm\"".into())),
            );
            assert_eq!(
                out.stdout,
                "{\"block\":true,\"reason\":\"no \\\"rm\\\"\"}\n"
            );
            assert_eq!((out.exit_code, out.stderr.as_str()), (0, ""));
            let out = agent.render(HookEventKind::PreToolUse, &Answer::new(Verdict::Deny, None));
            assert!(out.stdout.contains("Blocked by hookd"), "{}", out.stdout);
            for verdict in [Verdict::Allow, Verdict::Ask, Verdict::NoOpinion] {
                let out = agent.render(HookEventKind::PreToolUse, &Answer::new(verdict, None));
                assert_eq!(out, HookOutput::default(), "{agent} {verdict:?}");
            }
            // Observe-only events are never blocked.
            let out = agent.render(HookEventKind::Stop, &Answer::new(Verdict::Deny, None));
            assert_eq!(out, HookOutput::default(), "{agent}");
        }
    }

    #[test]
    fn fallbacks_block_tool_calls_only_when_fail_closed() {
        for agent in [Agent::OpenCode, Agent::Pi] {
            let name = agent.event_name(HookEventKind::PreToolUse).unwrap();
            let out = agent.fallback(name, FailClosed::Tools, "no_socket");
            assert!(out.stdout.starts_with("{\"block\":true"), "{agent}");
            assert!(out.stdout.contains("no_socket"));
            assert_eq!(
                agent.fallback(name, FailClosed::Off, "no_socket"),
                HookOutput::default()
            );
        }
    }

    #[test]
    fn an_unanswered_ask_follows_the_agents_own_flow() {
        let ask = || Answer::new(Verdict::Ask, Some("why".into()));
        let pi = Agent::Pi.unanswered_ask(HookEventKind::PreToolUse, FailClosed::Off, ask());
        assert_eq!(pi, Answer::new(Verdict::Deny, Some("why".into())));
        let oc = Agent::OpenCode.unanswered_ask(HookEventKind::PreToolUse, FailClosed::Off, ask());
        assert_eq!(oc.verdict, Verdict::NoOpinion);
        let oc =
            Agent::OpenCode.unanswered_ask(HookEventKind::PreToolUse, FailClosed::Tools, ask());
        assert_eq!(oc, Answer::new(Verdict::Deny, Some("why".into())));
    }
}
