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

use super::kind::EVENTS;
use crate::agent::claude::output::HookOutput;
use crate::agent::claude::HookEventKind;
use crate::agent::deny_reason;
use crate::agent::dialect::{self, Envelope};
use crate::decision::{Answer, Verdict};

/// Renders `answer` as Gemini's output for an event of `kind`: the verdicts
/// and context its events table says the event takes (no opinion for an
/// event Gemini does not have).
pub fn render(kind: HookEventKind, answer: &Answer) -> HookOutput {
    let Some(event) = dialect::row_of(EVENTS, kind) else {
        return HookOutput::default();
    };
    // Gemini cannot be asked: an ask here is one nobody answered.
    let wanted = match answer.verdict {
        Verdict::Ask => Verdict::Deny,
        v => v,
    };
    let mut out = Envelope::default();
    if dialect::honored(event.verdicts, wanted) == Verdict::Deny {
        out.block("deny", deny_reason(answer));
    }
    if kind == HookEventKind::PreToolUse
        && matches!(answer.verdict, Verdict::Allow | Verdict::NoOpinion)
    {
        if let Some(input @ Value::Object(_)) = &answer.updated_input {
            out.specific("tool_input", input.clone());
        }
    }
    out.context(event.accepts_context, answer);
    out.finish(event.name)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::claude::FailClosed;
    use crate::agent::Agent;
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
        let out = parse(&Agent::Gemini.fallback_for(
            Some(HookEventKind::PreToolUse),
            FailClosed::Tools,
            "timeout",
        ));
        assert_eq!(out["decision"], "deny");
        assert_eq!(
            Agent::Gemini.fallback_for(Some(HookEventKind::PreCompact), FailClosed::All, "timeout"),
            HookOutput::default()
        );
    }
}
