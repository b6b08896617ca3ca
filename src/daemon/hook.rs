//! Answering one `hook` request: event → judgement → Claude Code output,
//! always before the forwarder's deadline.

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::controller::Judgement;
use super::Shared;
use crate::claude::output;
use crate::decision::{Answer, Decision, Source};
use crate::event::Event;
use crate::protocol::{HookRequest, HookResult};

/// The daemon's share of the forwarder's budget: it answers this much
/// earlier than the forwarder gives up, so the reply (and the forwarder's
/// printing) still fits. 10 % of the budget, at least 20 ms, at most 500 ms.
pub fn daemon_budget(forwarder_budget: Duration) -> Duration {
    let margin =
        (forwarder_budget / 10).clamp(Duration::from_millis(20), Duration::from_millis(500));
    forwarder_budget.saturating_sub(margin)
}

/// Answers one hook. Never fails: every error path is a fallback.
pub async fn answer(req: HookRequest, shared: &Shared, shutdown: &CancellationToken) -> HookResult {
    let started = Instant::now();
    let deadline = started + daemon_budget(Duration::from_millis(req.deadline_ms));
    let fail_closed = req.fail_closed || shared.fail_closed;
    let event = Event::new(req.harness, req.input, req.env);
    if let Some(problem) = &event.input.problem {
        tracing::debug!(event = %event.name(), %problem, "hook input not fully typed; kept raw");
    }
    shared.log.event(&event);
    let kind = event.kind();

    let judgement = if !kind.is_decision_point() {
        // Observe-only: answered at once, never waits on anything.
        Judgement {
            answer: Answer::no_opinion(),
            source: Source::Default,
            rule_ids: Vec::new(),
            generation: shared.controller.rules().generation(),
            enforced: true,
        }
    } else {
        tokio::select! {
            biased;
            judgement = shared.controller.decide(&event) => judgement,
            _ = tokio::time::sleep_until(deadline.into()) => fallback(&event, fail_closed, Source::Timeout, "timeout", shared),
            _ = shutdown.cancelled() => fallback(&event, fail_closed, Source::Fallback, "shutting_down", shared),
        }
    };

    let out = if judgement.enforced {
        output::render(kind, &judgement.answer)
    } else {
        output::HookOutput::default()
    };
    let decision = Decision {
        decision_id: uuid::Uuid::now_v7(),
        event_id: event.id,
        answer: judgement.answer,
        source: judgement.source,
        rule_ids: judgement.rule_ids,
        generation: judgement.generation,
        latency_us: started.elapsed().as_micros() as u64,
    };
    tracing::debug!(event = %event.name(), verdict = %decision.answer.verdict, source = %decision.source, "decided");
    shared.log.decision(&decision, judgement.enforced);
    HookResult {
        id: req.id,
        exit_code: out.exit_code,
        stdout: out.stdout,
        stderr: out.stderr,
    }
}

fn fallback(
    event: &Event,
    fail_closed: bool,
    source: Source,
    why: &str,
    shared: &Shared,
) -> Judgement {
    Judgement {
        answer: output::fallback_answer(event.kind(), fail_closed, why),
        source,
        rule_ids: Vec::new(),
        generation: shared.controller.rules().generation(),
        enforced: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daemon_answers_before_the_forwarder_gives_up() {
        for ms in [0u64, 10, 100, 1_000, 25_000, 600_000] {
            let budget = Duration::from_millis(ms);
            let ours = daemon_budget(budget);
            assert!(ours < budget || ms == 0, "{ms}");
            assert!(
                budget - ours >= Duration::from_millis(20).min(budget),
                "{ms}"
            );
        }
        assert_eq!(
            daemon_budget(Duration::from_secs(25)),
            Duration::from_millis(24_500)
        );
        assert_eq!(
            daemon_budget(Duration::from_secs(1)),
            Duration::from_millis(900)
        );
    }
}
