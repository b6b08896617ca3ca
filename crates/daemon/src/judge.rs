//! The judge in the daemon: asks a model the question of every judge rule
//! (`action = "judge"`, `hookd_core::rules::judge`) that matched an event,
//! and hands the answers to the rules' second evaluation.
//!
//! ```toml
//! [judge]
//! provider = "work"              # for judge rules that name none (a [providers] entry)
//! model = "claude-haiku-4-5"     # for rules and providers that name none
//! cache_ttl = "10m"              # how long an answer is reused
//! max_calls_per_day = 1000       # model calls per UTC day; then on_error
//! max_cost_usd_per_day = 1.0     # dollars per UTC day; then on_error
//! prices = { input = 1.0, output = 5.0 }   # $ per million tokens, for the cost
//! recent_events = 8              # the session's recent events the model sees
//! ```
//!
//! How one hook's question goes (see [`ask_all`]):
//! - the event is **redacted** with the log's redactor before anything of
//!   it leaves the daemon; the model gets the rule's prompt, the redacted
//!   event and the session's last few events ([`crate::recent`]);
//! - **cache**: answers are kept by (rule, rules revision, normalised
//!   input: event, tool, redacted tool input, cwd) for `cache_ttl`; a hit
//!   is recorded with `cached: true` and costs nothing;
//! - **single flight**: a question already being asked is not asked again;
//!   the hooks asking it wait for the one call;
//! - **budget**: calls and dollars per UTC day; past either, no call is
//!   made and the rule's `on_error` applies;
//! - **never past the deadline**: a hook waits for the answer at most the
//!   rule's `timeout`, and never past its own deadline. The call itself
//!   runs on a blocking thread, in a task of its own that outlives a hook
//!   that stopped waiting: its answer still fills the cache.
//!
//! A hook waiting for a model holds nothing another hook needs: no lock,
//! no evaluation slot; like a hook waiting for a client's decision, it is
//! one more future on the runtime.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::watch;

use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::config::models::JudgeConfig;
use crate::controller::Judgement;
use crate::event::Event;
use crate::model::{self, Endpoint, Prices};
use crate::rules::judge::{JudgeHit, JudgeVerdict};
use crate::rules::Layers;
use crate::Shared;

/// The model a judge asks when neither its rule, `[judge]` nor the
/// provider names one.
pub use crate::model::DEFAULT_MODEL;

/// How much longer than the rule's `timeout` a call may take.
const CALL_GRACE: Duration = Duration::from_secs(1);

/// Answers kept at most (the oldest go first).
const CACHE_MAX: usize = 4096;

/// The judge's system prompt.
const SYSTEM: &str = "You are hookd's judge. A coding agent wants to take one step (usually a tool call); \
a policy rule asks you one question about it. Answer the question for this step only, from the step and \
the session's recent events. Reply with exactly one JSON object and nothing else: \
{\"verdict\": \"allow\" | \"deny\" | \"ask\", \"reason\": \"one short line\"}. \
\"deny\" blocks the step, \"ask\" sends it to a person, \"allow\" lets the other rules decide. \
The reason is shown to the agent and the person.";

/// A question's identity: (rule, rules revision, normalised input).
type Key = (String, String, String);

/// A call under way: its answer, once there is one (`Some(None)`: it
/// failed).
type Flight = watch::Receiver<Option<Option<JudgeVerdict>>>;

/// The judge's state: the cache, the calls under way, today's use.
#[derive(Default)]
pub struct Judges {
    cache: Mutex<HashMap<Key, (JudgeVerdict, Instant)>>,
    flights: Mutex<HashMap<Key, Flight>>,
    usage: model::DailyUsage,
    /// A judge rule has matched since the daemon started: sessions' recent
    /// events are kept from then on.
    pub seen: AtomicBool,
}

/// `judgement` (the rules' first, from [`crate::controller::Controller::judge`])
/// once its judge rules' questions are answered: the rules evaluated
/// again with the answers. Without judge rules, `judgement` as it is.
/// `inline`: the input is small enough to evaluate on this worker; a
/// larger one is evaluated again on a blocking thread, as the first time.
/// `Err`: evaluating again panicked.
pub async fn with_answers(
    shared: &Arc<Shared>,
    event: &Arc<Event>,
    layers: &Layers,
    judgement: Judgement,
    deadline: Instant,
    inline: bool,
) -> Result<Judgement, &'static str> {
    let asked = match judgement.judging.as_deref() {
        Some(j) if !j.asked.is_empty() => j.asked.clone(),
        _ => return Ok(judgement),
    };
    shared.judges.seen.store(true, Ordering::Relaxed);
    // Another rule denies whatever the judges say (a judge only tightens):
    // no question is worth its cost. The rules judged as if every judge
    // allowed, those answers not recorded (replay falls back to
    // `on_error`, and the deny stands as it did).
    let allowing: Vec<JudgeVerdict> = asked
        .iter()
        .map(|hit| JudgeVerdict {
            rule: hit.rule.clone(),
            verdict: crate::rules::judge::JudgeAction::Allow,
            reason: String::new(),
            cached: false,
        })
        .collect();
    let without = again(shared, event, layers, judgement.clone(), allowing, inline).await?;
    if without.answer.verdict == crate::decision::Verdict::Deny {
        judges_skipped(shared);
        return Ok(Judgement {
            judging: None,
            ..without
        });
    }
    let user = layers.user.revision().as_str().to_string();
    let project = layers
        .project
        .as_ref()
        .map(|p| p.rules.revision().as_str().to_string());
    let revision_of = |rule: &str| match (&project, rule.starts_with("project:")) {
        (Some(p), true) => p.clone(),
        _ => user.clone(),
    };
    let answers = ask_all(shared, event, &asked, revision_of, deadline).await;
    again(shared, event, layers, judgement, answers, inline).await
}

/// [`crate::controller::Controller::judge_again`], here or (not `inline`)
/// on a blocking thread holding an evaluation slot.
async fn again(
    shared: &Arc<Shared>,
    event: &Arc<Event>,
    layers: &Layers,
    first: Judgement,
    answers: Vec<JudgeVerdict>,
    inline: bool,
) -> Result<Judgement, &'static str> {
    if inline {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shared.controller.judge_again(event, layers, first, answers)
        }))
        .map_err(|_| "internal_error");
    }
    let slot = shared
        .evaluations
        .clone()
        .acquire_owned()
        .await
        .expect("the evaluation slots are never closed");
    let (shared, event, layers) = (shared.clone(), event.clone(), layers.clone());
    tokio::task::spawn_blocking(move || {
        let _slot = slot;
        shared
            .controller
            .judge_again(&event, &layers, first, answers)
    })
    .await
    .map_err(|e| {
        if e.is_panic() {
            "internal_error"
        } else {
            "shutting_down"
        }
    })
}

fn judges_skipped(shared: &Shared) {
    shared.judges.count(shared, |u| u.skipped += 1);
}

/// Notes `event` among its session's recent events, when the judge or the
/// narrator reads them (a judge rule has matched since the daemon started,
/// or the narrator is on), and hands it to the narrator; forgets the
/// session at its end. `pending`: the event waits for a person.
pub fn note_recent(shared: &Arc<Shared>, event: &Event, pending: bool) {
    let Some(session) = event.fields().session_id else {
        return;
    };
    if event.kind() == crate::agent::claude::HookEventKind::SessionEnd {
        shared.recent.end(session);
        shared.narrator.end(session);
        return;
    }
    // A copy of a run's hook is the same event as its original.
    if event.copy_of.is_some() {
        return;
    }
    let judge = shared.judges.seen.load(Ordering::Relaxed);
    let narrate = shared.config().narrator.enabled;
    if !judge && !narrate {
        return;
    }
    let redacted = shared.redactor().redact_value(&event.raw).into_owned();
    let line = crate::recent::line_of(event.name(), event.tool_name(), &redacted);
    if narrate {
        let harness = serde_json::to_value(event.harness)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        shared.narrator.note(
            shared,
            session,
            &harness,
            line.clone(),
            pending.then(|| event.id.to_string()),
        );
    }
    if judge {
        shared.recent.note(session, line);
    }
}

/// The answer to every question of `hits` about `event`, asked in
/// parallel; a question that got none (failure, timeout, budget) has no
/// answer here, so its rule's `on_error` applies. Never past `deadline`.
pub async fn ask_all(
    shared: &Arc<Shared>,
    event: &Event,
    hits: &[JudgeHit],
    revision_of: impl Fn(&str) -> String,
    deadline: Instant,
) -> Vec<JudgeVerdict> {
    let config = shared.config();
    let redactor = shared.redactor();
    let step = json!({
        "event": event.name(),
        "tool": event.tool_name(),
        "tool_input": event.tool_input().map(|i| redactor.redact_value(i).into_owned()),
        "cwd": event.input.base.cwd.as_deref().map(|c| redactor.redact_str(c).into_owned()),
    });
    // serde_json's maps sort their keys: the text is a normal form.
    let normal = step.to_string();
    let session = event.fields().session_id.unwrap_or("");
    let recent = shared.recent.lines(session, config.judge.recent_events);
    let asks = hits.iter().map(|hit| {
        let key = (hit.rule.clone(), revision_of(&hit.rule), normal.clone());
        one(shared, &config, hit, key, &step, &recent, deadline)
    });
    futures_util::future::join_all(asks)
        .await
        .into_iter()
        .flatten()
        .collect()
}

/// One question's answer.
async fn one(
    shared: &Arc<Shared>,
    config: &crate::config::Config,
    hit: &JudgeHit,
    key: Key,
    step: &Value,
    recent: &[String],
    deadline: Instant,
) -> Option<JudgeVerdict> {
    let judges = &shared.judges;
    let jc = &config.judge;
    let now = Instant::now();
    {
        let cache = judges.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((verdict, until)) = cache.get(&key) {
            if *until > now {
                judges.count(shared, |u| u.cache_hits += 1);
                return Some(JudgeVerdict {
                    cached: true,
                    ..verdict.clone()
                });
            }
        }
    }
    let wait = Duration::from_millis(hit.spec.timeout_ms).min(
        deadline
            .saturating_duration_since(now)
            // Room to evaluate again and answer.
            .saturating_sub(Duration::from_millis(5)),
    );
    let mut flight = {
        let mut flights = judges.flights.lock().unwrap_or_else(|e| e.into_inner());
        // A call whose task ended without answering (it panicked) is no
        // flight to join.
        if flights.get(&key).is_some_and(|f| f.has_changed().is_err()) {
            flights.remove(&key);
        }
        match flights.get(&key) {
            Some(flight) => {
                judges.count(shared, |u| u.shared += 1);
                flight.clone()
            }
            None => {
                let endpoint = match endpoint_for(config, hit) {
                    Ok(e) => e,
                    Err(why) => {
                        judges.count(shared, |u| u.errors += 1);
                        tracing::warn!(rule = %hit.rule, %why, "the judge cannot ask a model; the rule's on_error applies");
                        return None;
                    }
                };
                if let Err(why) = judges.usage.reserve(
                    shared.clock.now(),
                    jc.max_calls_per_day,
                    jc.max_cost_usd_per_day,
                ) {
                    tracing::warn!(rule = %hit.rule, %why, "the judge's budget is spent; the rule's on_error applies");
                    return None;
                }
                let (tx, rx) = watch::channel(None);
                flights.insert(key.clone(), rx.clone());
                let request = model::Request {
                    model: hit
                        .spec
                        .model
                        .clone()
                        .or_else(|| jc.model.clone())
                        .or_else(|| {
                            let name = hit.spec.provider.as_ref().or(jc.provider.as_ref())?;
                            config.providers.get(name)?.model.clone()
                        })
                        .unwrap_or_else(|| DEFAULT_MODEL.to_string()),
                    system: SYSTEM.to_string(),
                    user: question(&hit.spec.prompt, step, recent),
                    max_tokens: 200,
                };
                let (shared, rule, ttl, prices) =
                    (shared.clone(), hit.rule.clone(), jc.ttl(), jc.prices);
                // A little longer than any hook waits: a slow model is a
                // question not answered in time (counted where the hook
                // gave up), and its late answer still fills the cache.
                let timeout = Duration::from_millis(hit.spec.timeout_ms) + CALL_GRACE;
                tokio::spawn(async move {
                    let answer = call(&shared, endpoint, request, timeout, &rule, prices).await;
                    let judges = &shared.judges;
                    if let Some(v) = &answer {
                        let mut cache = judges.cache.lock().unwrap_or_else(|e| e.into_inner());
                        let now = Instant::now();
                        if cache.len() >= CACHE_MAX {
                            cache.retain(|_, (_, until)| *until > now);
                        }
                        if cache.len() >= CACHE_MAX {
                            if let Some(oldest) = cache
                                .iter()
                                .min_by_key(|(_, (_, u))| *u)
                                .map(|(k, _)| k.clone())
                            {
                                cache.remove(&oldest);
                            }
                        }
                        cache.insert(key.clone(), (v.clone(), now + ttl));
                    }
                    judges
                        .flights
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&key);
                    let _ = tx.send(Some(answer));
                });
                rx
            }
        }
    };
    let answer = match tokio::time::timeout(wait, flight.wait_for(Option::is_some)).await {
        Ok(Ok(answer)) => answer.clone().flatten(),
        Ok(Err(_)) => None,
        Err(_) => {
            judges.count(shared, |u| u.timeouts += 1);
            tracing::warn!(rule = %hit.rule, ?wait, "the judge did not answer in time; the rule's on_error applies");
            None
        }
    };
    answer
}

/// Asks the model and reads its verdict; counts tokens, cost and errors.
async fn call(
    shared: &Arc<Shared>,
    endpoint: Endpoint,
    request: model::Request,
    timeout: Duration,
    rule: &str,
    prices: Prices,
) -> Option<JudgeVerdict> {
    let judges = &shared.judges;
    match model::ask(endpoint, request, timeout).await {
        Ok(reply) => {
            judges.usage.spent(shared.clock.now(), &reply, prices);
            match JudgeVerdict::parse_reply(rule, model::unfenced(&reply.text)) {
                Ok(v) => Some(v),
                Err(why) => {
                    judges.count(shared, |u| u.errors += 1);
                    tracing::warn!(rule, %why, "the judge's answer is unusable; the rule's on_error applies");
                    None
                }
            }
        }
        Err(e) => {
            // A call that timed out: every hook asking had given up first,
            // and counted it.
            if !matches!(e, model::ModelError::Timeout(_)) {
                judges.count(shared, |u| u.errors += 1);
            }
            tracing::warn!(rule, error = %e, "the judge's model call failed; the rule's on_error applies");
            None
        }
    }
}

/// The endpoint a judge rule asks.
fn endpoint_for(config: &crate::config::Config, hit: &JudgeHit) -> Result<Endpoint, String> {
    let name = hit
        .spec
        .provider
        .as_ref()
        .or(config.judge.provider.as_ref())
        .ok_or_else(|| {
            "no provider: name one in the rule (`provider`) or in config.toml's [judge] provider"
                .to_string()
        })?;
    let provider = config
        .providers
        .get(name)
        .ok_or_else(|| format!("provider `{name}` is not a [providers] entry of config.toml"))?;
    Endpoint::of(provider)
}

/// The user message: the rule's question, the step, the recent events.
fn question(prompt: &str, step: &Value, recent: &[String]) -> String {
    let mut q = format!(
        "Question: {prompt}\n\nThe step (secrets redacted):\n{}\n",
        serde_json::to_string_pretty(step).unwrap_or_default()
    );
    if !recent.is_empty() {
        q.push_str("\nThe session's recent events, oldest first:\n");
        for line in recent {
            q.push_str("- ");
            q.push_str(line);
            q.push('\n');
        }
    }
    q.push_str(
        "\nReply with one JSON object only: {\"verdict\": \"allow\" | \"deny\" | \"ask\", \"reason\": \"…\"}\n",
    );
    q
}

impl std::fmt::Debug for Judges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judges").finish_non_exhaustive()
    }
}

impl Judges {
    /// Updates today's counts.
    fn count(&self, shared: &Shared, f: impl FnOnce(&mut crate::protocol::status::ModelUsage)) {
        self.usage.count(shared.clock.now(), f);
    }

    /// Today's use, for `status` and `/metrics`; `None` before the judge
    /// was ever needed.
    pub fn status(&self, shared: &Shared) -> Option<crate::protocol::status::ModelUsage> {
        let jc = &shared.config().judge;
        let mut u = self.usage.today(
            shared.clock.now(),
            jc.max_calls_per_day,
            jc.max_cost_usd_per_day,
        )?;
        u.cached_answers = self.cache.lock().unwrap_or_else(|e| e.into_inner()).len() as u64;
        Some(u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_question_holds_the_prompt_the_step_and_the_recent_events() {
        let q = question(
            "Is this destructive?",
            &json!({"tool": "Bash", "tool_input": {"command": "rm -rf /"}}),
            &["PreToolUse Bash: ls".to_string()],
        );
        assert!(q.starts_with("Question: Is this destructive?\n"), "{q}");
        assert!(q.contains("\"command\": \"rm -rf /\""), "{q}");
        assert!(q.contains("- PreToolUse Bash: ls\n"), "{q}");
    }

    #[test]
    fn config_errors_name_the_key() {
        let providers = Default::default();
        let bad_ttl = JudgeConfig {
            cache_ttl: "soon".into(),
            ..JudgeConfig::default()
        };
        assert_eq!(bad_ttl.validate(&providers).unwrap_err().0, "cache_ttl");
        let bad_provider = JudgeConfig {
            provider: Some("nope".into()),
            ..JudgeConfig::default()
        };
        let (key, why) = bad_provider.validate(&providers).unwrap_err();
        assert_eq!(key, "provider");
        assert!(why.contains("`nope`"), "{why}");
    }
}
