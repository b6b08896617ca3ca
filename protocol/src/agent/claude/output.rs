//! The one place that knows Claude Code's hook *output*: a decision becomes the
//! exact stdout / stderr / exit code Claude Code 2.1.330 honors for the event.
//!
//! Rules of the road (reference §6–§8, all golden-tested under
//! `tests/fixtures/golden/`):
//! - "No opinion" is exit 0 with empty stdout: Claude Code's own flow goes on.
//! - Decisions are JSON on stdout with exit 0; `hookSpecificOutput.hookEventName`
//!   always echoes the event, or Claude Code throws the output away.
//! - PermissionRequest is decided only through `decision.behavior`; exit 2 is
//!   ignored there, so it is never used.
//! - Exit 2 is used only where JSON has no way to say it: TeammateIdle and
//!   TaskCompleted ("keep working", with the reason as feedback on stderr).
//! - A verdict an event cannot express (say `ask` on Stop) is "no opinion".

use super::{FailClosed, HookEventKind, EVENTS};
use crate::agent::dialect::{self, Envelope};
use crate::decision::{Answer, Verdict};

/// What the forwarder prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HookOutput {
    /// Process exit code.
    pub exit_code: i32,
    /// Exactly what goes to stdout.
    pub stdout: String,
    /// Exactly what goes to stderr.
    pub stderr: String,
}

/// Used when a blocking decision carries no reason of its own.
pub const DEFAULT_DENY_REASON: &str = "Blocked by hookd";

/// The verdicts that change what Claude Code does for `kind` (always
/// including "no opinion"), from [`EVENTS`]. Any other verdict renders as
/// no opinion.
pub fn supported_verdicts(kind: HookEventKind) -> &'static [Verdict] {
    dialect::supported_verdicts(EVENTS, kind)
}

/// Whether `hookSpecificOutput.additionalContext` is accepted for `kind`
/// (from [`EVENTS`], which says why Stop and SubagentStop take none).
pub fn accepts_context(kind: HookEventKind) -> bool {
    dialect::accepts_context(EVENTS, kind)
}

/// Renders `answer` as Claude Code's output for an event of `kind`.
pub fn render(kind: HookEventKind, answer: &Answer) -> HookOutput {
    use HookEventKind::*;
    let verdict = dialect::honored(supported_verdicts(kind), answer.verdict);
    let reason = answer.reason.as_deref();
    let mut out = Envelope::default();

    match (kind, verdict) {
        (_, Verdict::NoOpinion) => {}
        (PreToolUse | PreModelSwitch, v) => {
            out.specific("permissionDecision", v.as_str());
            if let Some(r) = reason {
                out.specific("permissionDecisionReason", r);
            }
        }
        (PermissionRequest, Verdict::Allow) => {
            let input = answer.updated_input.clone();
            out.permission("allow", input.map(|i| ("updatedInput", i)));
        }
        (PermissionRequest, _) => {
            let message = reason.unwrap_or(DEFAULT_DENY_REASON);
            out.permission("deny", Some(("message", message.into())));
        }
        (PermissionDenied, _) => out.specific("retry", true),
        (Elicitation, Verdict::Allow) => {
            out.specific("action", "accept");
            if let Some(content) = &answer.updated_input {
                out.specific("content", content.clone());
            }
        }
        (Elicitation | ElicitationResult, _) => out.specific("action", "decline"),
        (TeammateIdle | TaskCompleted, _) => {
            return HookOutput {
                exit_code: 2,
                stdout: String::new(),
                stderr: format!("{}\n", reason.unwrap_or(DEFAULT_DENY_REASON)),
            };
        }
        (_, _) => out.block("block", reason.unwrap_or(DEFAULT_DENY_REASON)),
    }

    // PreToolUse takes a rewritten input with allow, ask or no decision at
    // all; Claude Code ignores it with deny/defer, so it is not sent then.
    if kind == PreToolUse && matches!(verdict, Verdict::Allow | Verdict::Ask | Verdict::NoOpinion) {
        if let Some(input) = &answer.updated_input {
            out.specific("updatedInput", input.clone());
        }
    }
    out.context(accepts_context(kind), answer);
    out.finish(kind.as_str())
}

/// The body of an `http` hook's response that says what `out` says to a
/// command hook: its stdout, but an exit 2 (which HTTP cannot carry)
/// becomes the JSON that blocks, `decision: "block"` with the stderr as
/// the reason. Claude Code reads a 2xx body as exit-0 stdout
/// (tests/e2e/FINDINGS-http-hooks.md).
pub fn http_body(out: &HookOutput) -> String {
    if out.exit_code != 2 {
        return out.stdout.clone();
    }
    let reason = match out.stderr.trim() {
        "" => DEFAULT_DENY_REASON,
        reason => reason,
    };
    let mut body = Envelope::default();
    body.block("block", reason);
    // Top-level fields only: no event name is written.
    body.finish("").stdout
}

/// The answer used when nobody could decide (daemon unreachable, deadline
/// passed, shutting down): "no opinion", or a real block on the events the
/// hook's fail-closed scope covers.
pub fn fallback_answer(kind: HookEventKind, fail_closed: FailClosed, why: &str) -> Answer {
    if fail_closed.blocks(kind) {
        let reason =
            format!("hookd could not decide ({why}); blocked because the hook is fail-closed");
        Answer::new(Verdict::Deny, Some(reason))
    } else {
        Answer::no_opinion()
    }
}

/// [`fallback_answer`], rendered.
pub fn fallback(kind: HookEventKind, fail_closed: FailClosed, why: &str) -> HookOutput {
    render(kind, &fallback_answer(kind, fail_closed, why))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn an_http_body_says_what_the_exit_code_said() {
        let allow = render(
            HookEventKind::PreToolUse,
            &Answer::new(Verdict::Allow, None),
        );
        assert_eq!(http_body(&allow), allow.stdout);
        assert_eq!(http_body(&HookOutput::default()), "");
        let keep_working = render(
            HookEventKind::TaskCompleted,
            &Answer::new(Verdict::Deny, Some("tests fail".into())),
        );
        assert_eq!(keep_working.exit_code, 2);
        assert_eq!(
            serde_json::from_str::<Value>(&http_body(&keep_working)).unwrap(),
            json!({"decision": "block", "reason": "tests fail"})
        );
    }

    fn parse(out: &HookOutput) -> Value {
        serde_json::from_str(&out.stdout).unwrap()
    }

    #[test]
    fn no_opinion_is_silent_everywhere() {
        for kind in HookEventKind::ALL
            .iter()
            .copied()
            .chain([HookEventKind::Unknown])
        {
            assert_eq!(
                render(kind, &Answer::no_opinion()),
                HookOutput::default(),
                "{kind}"
            );
        }
    }

    #[test]
    fn every_supported_verdict_changes_the_output() {
        for kind in HookEventKind::ALL.iter().copied() {
            for v in supported_verdicts(kind) {
                let out = render(kind, &Answer::new(*v, Some("r".into())));
                assert_eq!(
                    out == HookOutput::default(),
                    *v == Verdict::NoOpinion,
                    "{kind} {v}"
                );
            }
        }
    }

    #[test]
    fn permission_request_never_exits_2() {
        for v in Verdict::ALL {
            let out = render(HookEventKind::PermissionRequest, &Answer::new(v, None));
            assert_eq!(out.exit_code, 0);
        }
        let out = fallback(
            HookEventKind::PermissionRequest,
            FailClosed::Tools,
            "timeout",
        );
        assert_eq!(
            parse(&out)["hookSpecificOutput"]["decision"]["behavior"],
            "deny"
        );
    }

    #[test]
    fn pre_tool_use_updated_input_only_when_honored() {
        let mut answer = Answer::new(Verdict::Allow, None);
        answer.updated_input = Some(json!({"command": "ls -la"}));
        let out = parse(&render(HookEventKind::PreToolUse, &answer));
        assert_eq!(
            out["hookSpecificOutput"]["updatedInput"]["command"],
            "ls -la"
        );
        answer.verdict = Verdict::Deny;
        let out = parse(&render(HookEventKind::PreToolUse, &answer));
        assert!(out["hookSpecificOutput"].get("updatedInput").is_none());
    }

    #[test]
    fn fail_open_fallback_is_silent_and_stop_never_blocks() {
        assert_eq!(
            fallback(HookEventKind::PreToolUse, FailClosed::Off, "timeout"),
            HookOutput::default()
        );
        assert_eq!(
            fallback(HookEventKind::Stop, FailClosed::All, "timeout"),
            HookOutput::default()
        );
        // The default scope lets prompts through; `all` blocks them.
        assert_eq!(
            fallback(
                HookEventKind::UserPromptSubmit,
                FailClosed::Tools,
                "no_socket"
            ),
            HookOutput::default()
        );
        let out = parse(&fallback(
            HookEventKind::UserPromptSubmit,
            FailClosed::All,
            "no_socket",
        ));
        assert_eq!(out["decision"], "block");
        let out = parse(&fallback(
            HookEventKind::PreToolUse,
            FailClosed::Tools,
            "no_socket",
        ));
        assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
        assert!(out["hookSpecificOutput"]["permissionDecisionReason"]
            .as_str()
            .unwrap()
            .contains("no_socket"));
    }
}
