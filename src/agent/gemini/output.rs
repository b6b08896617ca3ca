//! The one place that knows Gemini CLI's hook *output*: an answer becomes the
//! exact stdout / stderr / exit code Gemini 0.61.0 honors for the event.
//!
//! Gemini reads the top-level `decision` (`deny` or `block` block alike),
//! `reason`, and a few `hookSpecificOutput` fields; it ignores what it does
//! not know, and Claude Code's `permissionDecision`. So (all golden-tested):
//! - "No opinion" is exit 0 with empty stdout.
//! - A deny is `{"decision":"deny","reason":R}` with a non-empty reason
//!   (Gemini shows "No reason provided" otherwise): BeforeTool (the tool
//!   does not run; the model gets `Tool execution blocked: R`), AfterTool
//!   (the model gets R instead of the output), BeforeAgent (no model call),
//!   AfterAgent (one more turn, prompted with R).
//! - **`ask` is never written**: `{"decision":"ask"}` makes `gemini -p` wait
//!   forever for a confirmation nobody can give. An ask that reaches the
//!   output is one nobody answered, and renders as a deny with its reason.
//! - A rewritten tool input is `hookSpecificOutput.tool_input` (merged into
//!   the call's arguments by Gemini), on BeforeTool, with an allow or no
//!   opinion; it must be an object.
//! - Context is `hookSpecificOutput.additionalContext` on AfterTool,
//!   BeforeAgent and SessionStart (Gemini shows it to the model inside
//!   `<hook_context>`).
//! - `hookSpecificOutput.hookEventName` echoes Gemini's event name.

use serde_json::Value;

use super::kind::{name_of, EVENTS};
use crate::agent::claude::output::{fallback_answer, HookOutput};
use crate::agent::claude::{FailClosed, HookEventKind};
use crate::agent::deny_reason;
use crate::agent::dialect::{self, Envelope};
use crate::decision::{Answer, Verdict};

/// The verdicts Gemini honors for an event of `kind` (always including "no
/// opinion"), from its events table. Any other verdict renders as no
/// opinion, except `ask`, which renders as a deny where Gemini can deny.
pub fn supported_verdicts(kind: HookEventKind) -> &'static [Verdict] {
    dialect::supported_verdicts(EVENTS, kind)
}

/// Whether Gemini takes `hookSpecificOutput.additionalContext` for `kind`.
pub fn accepts_context(kind: HookEventKind) -> bool {
    dialect::accepts_context(EVENTS, kind)
}

/// Renders `answer` as Gemini's output for an event of `kind`.
pub fn render(kind: HookEventKind, answer: &Answer) -> HookOutput {
    let Some(event) = name_of(kind) else {
        return HookOutput::default();
    };
    // Gemini cannot be asked: an ask here is one nobody answered.
    let wanted = match answer.verdict {
        Verdict::Ask => Verdict::Deny,
        v => v,
    };
    let mut out = Envelope::default();
    if dialect::honored(supported_verdicts(kind), wanted) == Verdict::Deny {
        out.block("deny", deny_reason(answer));
    }
    if kind == HookEventKind::PreToolUse
        && matches!(answer.verdict, Verdict::Allow | Verdict::NoOpinion)
    {
        if let Some(input @ Value::Object(_)) = &answer.updated_input {
            out.specific("tool_input", input.clone());
        }
    }
    out.context(accepts_context(kind), answer);
    out.finish(event)
}

/// The prompt Gemini sends itself after a blocked AfterAgent (Stop): the
/// reason [`render`] wrote, as the text of a new user message, which fires
/// BeforeAgent with it as `prompt` (its `sendMessageStream` continues with
/// `[{text: reason}]`). `None` for any other event.
pub fn continuation_prompt(kind: HookEventKind, answer: &Answer) -> Option<&str> {
    (kind == HookEventKind::Stop).then(|| deny_reason(answer))
}

/// What an ask nobody answered becomes: a deny with the ask's reason (and
/// its context), since asking would hang Gemini.
pub fn unanswered_ask(ask: Answer) -> Answer {
    let reason = ask
        .reason
        .unwrap_or_else(|| "hookd asked and nobody answered".into());
    Answer {
        additional_context: ask.additional_context,
        ..Answer::new(Verdict::Deny, Some(reason))
    }
}

/// The output when nobody could decide: no opinion, or a deny where the
/// hook fails closed and Gemini can deny the event
/// ([`crate::agent::claude::output::fallback_answer`], rendered for Gemini).
pub fn fallback(kind: HookEventKind, fail_closed: FailClosed, why: &str) -> HookOutput {
    render(kind, &fallback_answer(kind, fail_closed, why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(out: &HookOutput) -> Value {
        serde_json::from_str(&out.stdout).unwrap()
    }

    #[test]
    fn ask_is_never_written() {
        for kind in HookEventKind::ALL.iter().copied() {
            for reason in [None, Some("r".to_string())] {
                let out = render(kind, &Answer::new(Verdict::Ask, reason));
                assert!(!out.stdout.contains("ask"), "{kind}: {}", out.stdout);
            }
        }
        let out = parse(&render(
            HookEventKind::PreToolUse,
            &Answer::new(Verdict::Ask, Some("r".into())),
        ));
        assert_eq!(out, json!({"decision": "deny", "reason": "r"}));
    }

    #[test]
    fn a_rewritten_input_is_tool_input_and_only_an_object() {
        let mut answer = Answer::new(Verdict::Allow, None);
        answer.updated_input = Some(json!({"command": "echo safe"}));
        assert_eq!(
            parse(&render(HookEventKind::PreToolUse, &answer)),
            json!({"hookSpecificOutput": {"hookEventName": "BeforeTool",
                   "tool_input": {"command": "echo safe"}}})
        );
        answer.updated_input = Some(json!("echo safe"));
        assert_eq!(
            render(HookEventKind::PreToolUse, &answer),
            HookOutput::default()
        );
    }

    #[test]
    fn an_unanswered_ask_denies_with_its_reason() {
        let denied = unanswered_ask(Answer::new(Verdict::Ask, Some("why".into())));
        assert_eq!(denied, Answer::new(Verdict::Deny, Some("why".into())));
        let out = parse(&fallback(
            HookEventKind::PreToolUse,
            FailClosed::Tools,
            "timeout",
        ));
        assert_eq!(out["decision"], "deny");
        assert_eq!(
            fallback(HookEventKind::PreCompact, FailClosed::All, "timeout"),
            HookOutput::default()
        );
    }
}
