//! The one place that knows Copilot CLI's hook *output* (Claude format): an
//! answer becomes the exact stdout Copilot 1.0.102 honors for the event.
//!
//! Observed on the real CLI (`docs/agents/copilot.md`):
//! - "No opinion" is exit 0 with empty stdout.
//! - PreToolUse: a deny is Claude Code's
//!   `hookSpecificOutput.permissionDecision: "deny"` with its reason; the
//!   tool does not run and the model gets `Denied by preToolUse hook: R`.
//!   Copilot ignores a top-level `decision: "block"` there, and exit 2
//!   loses the reason.
//! - **`ask` is never written**: `copilot -p` has nobody to ask. An ask that
//!   reaches the output is one nobody answered: a deny with its reason.
//! - Stop: `{"decision":"block","reason":R}` keeps the agent working: R is
//!   sent as the next user prompt (which fires UserPromptSubmit), and the
//!   next Stop carries `stop_hook_active: true`.
//! - Every other event is observe-only.

use super::kind::EVENTS;
use crate::agent::claude::output::HookOutput;
use crate::agent::claude::HookEventKind;
use crate::agent::deny_reason;
use crate::agent::dialect::{self, Envelope};
use crate::decision::{Answer, Verdict};

/// Renders `answer` as Copilot's output for an event of `kind`.
pub fn render(kind: HookEventKind, answer: &Answer) -> HookOutput {
    let Some(event) = dialect::row_of(EVENTS, kind) else {
        return HookOutput::default();
    };
    let wanted = match answer.verdict {
        Verdict::Ask => Verdict::Deny,
        v => v,
    };
    if dialect::honored(event.verdicts, wanted) != Verdict::Deny {
        return HookOutput::default();
    }
    let reason = deny_reason(answer);
    let mut out = Envelope::default();
    match kind {
        HookEventKind::PreToolUse => {
            out.specific("permissionDecision", "deny");
            out.specific("permissionDecisionReason", reason);
        }
        _ => out.block("block", reason),
    }
    out.finish(event.name)
}

/// The prompt Copilot sends itself after a blocked Stop: the reason, which
/// fires UserPromptSubmit with it as `prompt`. `None` for any other event.
pub fn continuation_prompt(kind: HookEventKind, answer: &Answer) -> Option<&str> {
    (kind == HookEventKind::Stop).then(|| deny_reason(answer))
}

/// What an ask nobody answered becomes: a deny with the ask's reason, since
/// `copilot -p` cannot ask.
pub fn unanswered_ask(ask: Answer) -> Answer {
    let reason = ask
        .reason
        .unwrap_or_else(|| "hookd asked and nobody answered".into());
    Answer::new(Verdict::Deny, Some(reason))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::claude::FailClosed;
    use crate::agent::Agent;
    use serde_json::{json, Value};

    fn parse(out: &HookOutput) -> Value {
        serde_json::from_str(&out.stdout).unwrap()
    }

    #[test]
    fn a_tool_deny_is_claude_codes_permission_decision() {
        let out = render(
            HookEventKind::PreToolUse,
            &Answer::new(Verdict::Deny, Some("no rm".into())),
        );
        assert_eq!(
            parse(&out),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "no rm"}})
        );
        assert_eq!(out.exit_code, 0);
    }

    #[test]
    fn ask_is_never_written_and_allow_is_no_opinion() {
        for kind in HookEventKind::ALL.iter().copied() {
            let out = render(kind, &Answer::new(Verdict::Ask, Some("r".into())));
            assert!(!out.stdout.contains("ask"), "{kind}: {}", out.stdout);
        }
        assert_eq!(
            render(
                HookEventKind::PreToolUse,
                &Answer::new(Verdict::Allow, None)
            ),
            HookOutput::default()
        );
        assert_eq!(
            render(
                HookEventKind::PostToolUse,
                &Answer::new(Verdict::Deny, None)
            ),
            HookOutput::default()
        );
    }

    #[test]
    fn a_stop_block_continues_with_its_reason() {
        let answer = Answer::new(Verdict::Deny, Some("run the tests".into()));
        assert_eq!(
            parse(&render(HookEventKind::Stop, &answer)),
            json!({"decision": "block", "reason": "run the tests"})
        );
        assert_eq!(
            continuation_prompt(HookEventKind::Stop, &answer),
            Some("run the tests")
        );
    }

    #[test]
    fn fallbacks_are_no_opinion_or_a_real_block() {
        assert_eq!(
            Agent::Copilot.fallback("PreToolUse", FailClosed::Off, "no_socket"),
            HookOutput::default()
        );
        let out = parse(&Agent::Copilot.fallback("PreToolUse", FailClosed::Tools, "no_socket"));
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("no_socket"));
    }
}
