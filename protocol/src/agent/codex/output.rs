//! The one place that knows Codex CLI's hook *output*: an answer becomes the
//! exact stdout / stderr / exit code Codex 0.169.0 honors for the event.
//!
//! Codex checks each event's output against its own schema
//! (`tests/fixtures/agents/codex/hook-schemas.json`, from the binary), with
//! `additionalProperties: false` at every level, plus a few rules of its
//! own; an output that breaks any of them is dropped without a word and the
//! action goes ahead. So (all golden-tested, and every output checked
//! against the schemas):
//! - "No opinion" is exit 0 with empty stdout.
//! - Only schema fields are written, and only the event's own:
//!   `hookSpecificOutput.hookEventName` echoes the event.
//! - A deny always carries a non-empty reason (Codex drops a reasonless
//!   deny): the answer's, or [`DEFAULT_DENY_REASON`].
//! - PreToolUse: deny is `permissionDecision: "deny"` with its reason. Codex
//!   does not support `ask`, nor `allow` as a grant: both render as "no
//!   opinion" (Codex's own flow goes on). A rewritten input is
//!   `permissionDecision: "allow"` + `updatedInput`, the only form Codex
//!   takes it in; it is sent with an allow or no opinion, never with a deny.
//! - PermissionRequest: `decision.behavior` allow / deny (with `message`);
//!   never `updatedInput` (Codex fails closed on it).
//! - UserPromptSubmit, PostToolUse, Stop, SubagentStop: deny is
//!   `{"decision":"block","reason":R}`.
//! - Context (`additionalContext`) where the event's schema has it:
//!   PreToolUse, PostToolUse, UserPromptSubmit, SessionStart, SubagentStart.
//! - Nothing else is ever written (`continue`, `stopReason`,
//!   `suppressOutput`, `systemMessage` are Codex's but hookd has no use for
//!   them; PreToolUse rejects the first three).

use super::kind::EVENTS;
use crate::agent::claude::output::HookOutput;
use crate::agent::claude::{FailClosed, HookEventKind};
use crate::agent::deny_reason;
use crate::agent::dialect::{self, Envelope};
use crate::decision::{Answer, Verdict};

pub use crate::agent::claude::output::DEFAULT_DENY_REASON;

/// Renders `answer` as Codex's output for an event of `kind`: the verdicts
/// and context its events table says the event takes (no opinion for an
/// event Codex does not have).
pub fn render(kind: HookEventKind, answer: &Answer) -> HookOutput {
    use HookEventKind::*;
    let Some(event) = dialect::row_of(EVENTS, kind) else {
        return HookOutput::default();
    };
    let verdict = dialect::honored(event.verdicts, answer.verdict);
    let mut out = Envelope::default();
    match (kind, verdict) {
        (_, Verdict::NoOpinion) => {}
        (PreToolUse, _) => {
            out.specific("permissionDecision", "deny");
            out.specific("permissionDecisionReason", deny_reason(answer));
        }
        (PermissionRequest, Verdict::Allow) => out.permission("allow", None),
        (PermissionRequest, _) => {
            out.permission("deny", Some(("message", deny_reason(answer).into())));
        }
        (_, _) => out.block("block", deny_reason(answer)),
    }
    // Codex takes a rewritten input only with `permissionDecision: "allow"`,
    // which otherwise grants nothing: the call runs through Codex's own
    // flow with the new input. Not with an ask: that is not a go-ahead.
    if kind == PreToolUse && matches!(answer.verdict, Verdict::Allow | Verdict::NoOpinion) {
        if let Some(input) = &answer.updated_input {
            out.specific("permissionDecision", "allow");
            out.specific("updatedInput", input.clone());
        }
    }
    out.context(event.accepts_context, answer);
    out.finish(event.name)
}

/// What an ask nobody answered becomes: Codex cannot ask from a hook, so its
/// own flow goes on ("no opinion", keeping any context), unless the hook
/// fails closed for `kind`: then it is a deny, with the ask's reason.
pub fn unanswered_ask(kind: HookEventKind, fail_closed: FailClosed, ask: Answer) -> Answer {
    if fail_closed.blocks(kind) {
        let reason = ask.reason.unwrap_or_else(|| {
            "hookd asked and nobody answered; blocked because the hook is fail-closed".into()
        });
        Answer {
            additional_context: ask.additional_context,
            ..Answer::new(Verdict::Deny, Some(reason))
        }
    } else {
        Answer {
            additional_context: ask.additional_context,
            ..Answer::no_opinion()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Agent;
    use serde_json::{json, Value};

    fn parse(out: &HookOutput) -> Value {
        serde_json::from_str(&out.stdout).unwrap()
    }

    #[test]
    fn a_deny_always_has_a_reason() {
        for reason in [None, Some(""), Some("  ")] {
            let answer = Answer::new(Verdict::Deny, reason.map(String::from));
            let out = parse(&render(HookEventKind::PreToolUse, &answer));
            assert_eq!(
                out["hookSpecificOutput"]["permissionDecisionReason"],
                DEFAULT_DENY_REASON
            );
            let out = parse(&render(HookEventKind::Stop, &answer));
            assert_eq!(out["reason"], DEFAULT_DENY_REASON);
            let out = parse(&render(HookEventKind::PermissionRequest, &answer));
            assert_eq!(
                out["hookSpecificOutput"]["decision"]["message"],
                DEFAULT_DENY_REASON
            );
        }
    }

    #[test]
    fn ask_and_a_bare_allow_say_nothing_on_pre_tool_use() {
        for v in [Verdict::Ask, Verdict::Allow, Verdict::Defer] {
            let out = render(HookEventKind::PreToolUse, &Answer::new(v, Some("r".into())));
            assert_eq!(out, HookOutput::default(), "{v}");
        }
    }

    #[test]
    fn a_rewritten_input_goes_with_allow_only() {
        let mut answer = Answer::new(Verdict::NoOpinion, None);
        answer.updated_input = Some(json!({"command": "echo safe"}));
        let out = parse(&render(HookEventKind::PreToolUse, &answer));
        assert_eq!(
            out,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                   "permissionDecision": "allow", "updatedInput": {"command": "echo safe"}}})
        );
        for v in [Verdict::Deny, Verdict::Ask] {
            answer.verdict = v;
            let out = render(HookEventKind::PreToolUse, &answer);
            assert!(!out.stdout.contains("updatedInput"), "{v}: {}", out.stdout);
        }
        answer.verdict = Verdict::Allow;
        let out = render(HookEventKind::PermissionRequest, &answer);
        assert!(!out.stdout.contains("updatedInput"), "{}", out.stdout);
    }

    #[test]
    fn an_unanswered_ask_is_no_opinion_unless_fail_closed() {
        let ask = Answer {
            additional_context: Some("ctx".into()),
            ..Answer::new(Verdict::Ask, Some("why".into()))
        };
        let open = unanswered_ask(HookEventKind::PreToolUse, FailClosed::Off, ask.clone());
        assert_eq!(open.verdict, Verdict::NoOpinion);
        assert_eq!(open.additional_context.as_deref(), Some("ctx"));
        let closed = unanswered_ask(HookEventKind::PreToolUse, FailClosed::Tools, ask);
        assert_eq!(closed.verdict, Verdict::Deny);
        assert_eq!(closed.reason.as_deref(), Some("why"));
    }

    #[test]
    fn events_without_a_decision_never_block() {
        for kind in [
            HookEventKind::PreCompact,
            HookEventKind::SessionEnd,
            HookEventKind::Unknown,
        ] {
            assert_eq!(
                Agent::Codex.fallback_for(Some(kind), FailClosed::All, "timeout"),
                HookOutput::default()
            );
        }
        let out = parse(&Agent::Codex.fallback_for(
            Some(HookEventKind::UserPromptSubmit),
            FailClosed::All,
            "timeout",
        ));
        assert_eq!(out["decision"], "block");
    }
}
