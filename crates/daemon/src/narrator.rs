//! The narrator (issue #24): a cheap model that says, in one short
//! first-person line, what an agent is doing, from a buffer of its
//! session's events. Off by default.
//!
//! ```toml
//! [narrator]
//! enabled = true
//! provider = "work"            # a [providers] entry with a key
//! model = "claude-haiku-4-5"
//! min_events = 3               # narrate once this many events gathered…
//! max_events = 20              # …at most this many in one question
//! min_interval = "20s"         # between two narrations of one session
//! system_prompt = "…"          # optional: replaces the built-in one
//! max_calls_per_day = 500
//! max_cost_usd_per_day = 0.5
//! ```

//!
//! Per session it buffers the session's events (one short redacted line
//! each, [`crate::recent::line_of`]); when `min_events` gathered, or an
//! `ask` waits for a person, it asks the model, in a task of its own, for
//! one line given the session's previous lines (kept, so it does not
//! repeat itself). A hook never waits for it: a narration that cannot be
//! asked now (one under way for the session, or too soon after the last)
//! is left for later; one asked for a waiting ask that cannot be is
//! counted `dropped`. The line goes to the log (a `narration` record) and
//! to every subscriber (a `narration` frame). Bounded per UTC day in calls
//! and dollars; `status` and `/metrics` show its use.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use crate::config::models::NarratorConfig;
use crate::model;
use crate::Shared;

/// The built-in system prompt.
pub const SYSTEM: &str = "You narrate what a coding agent is doing, for the person who supervises it. \
Given the agent's recent events and your previous lines, write ONE short first-person line (at most \
25 words) as the agent: what it is doing now and why, e.g. \"I'm clearing the build cache before \
re-running the tests.\" Do not repeat a previous line. Reply with the line only.";

/// Previous lines kept per session (and shown to the model).
const HISTORY: usize = 8;
/// Sessions kept.
const MAX_SESSIONS: usize = 256;
/// A narration's characters at most.
const MAX_CHARS: usize = 240;

/// One session's narration state.
#[derive(Default)]
struct Session {
    harness: String,
    /// Events not narrated yet.
    buffer: VecDeque<String>,
    /// The lines written so far (the last [`HISTORY`]).
    history: VecDeque<String>,
    /// When the last narration was asked.
    last: Option<Instant>,
    /// A narration is under way.
    busy: bool,
    /// When it was last noted, as a count of notes.
    touched: u64,
}

/// The narrator's state (see the module's doc).
#[derive(Default)]
pub struct Narrator {
    sessions: Mutex<(HashMap<String, Session>, u64)>,
    usage: model::DailyUsage,
}

impl std::fmt::Debug for Narrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Narrator").finish_non_exhaustive()
    }
}

/// A narration to ask for.
struct Due {
    session: String,
    harness: String,
    events: Vec<String>,
    history: Vec<String>,
    pending: Option<String>,
}

impl Narrator {
    /// Notes one event of `session` (its line, already redacted); asks for
    /// a narration in the background when one is due. `pending`: the
    /// event waits for a person now.
    pub fn note(
        &self,
        shared: &Arc<Shared>,
        session: &str,
        harness: &str,
        line: String,
        pending: Option<String>,
    ) {
        let config = shared.config();
        let nc = &config.narrator;
        if !nc.enabled {
            return;
        }
        let min_interval = Duration::from_secs(
            crate::rules::facts::parse_duration(&nc.min_interval).unwrap_or(20),
        );
        let due = {
            let mut guard = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            let (sessions, clock) = &mut *guard;
            *clock += 1;
            if !sessions.contains_key(session) && sessions.len() >= MAX_SESSIONS {
                if let Some(oldest) = sessions
                    .iter()
                    .min_by_key(|(_, s)| s.touched)
                    .map(|(k, _)| k.clone())
                {
                    sessions.remove(&oldest);
                }
            }
            let s = sessions.entry(session.to_string()).or_default();
            s.touched = *clock;
            s.harness = harness.to_string();
            s.buffer.push_back(line);
            while s.buffer.len() > nc.max_events {
                s.buffer.pop_front();
            }
            let rested = s.last.is_none_or(|t| t.elapsed() >= min_interval);
            let wanted = s.buffer.len() >= nc.min_events || pending.is_some();
            if wanted && !s.busy && (rested || pending.is_some()) {
                s.busy = true;
                s.last = Some(Instant::now());
                Some(Due {
                    session: session.to_string(),
                    harness: s.harness.clone(),
                    events: s.buffer.drain(..).collect(),
                    history: s.history.iter().cloned().collect(),
                    pending,
                })
            } else {
                if pending.is_some() {
                    // An ask waits and no line can be asked for it now.
                    drop(guard);
                    self.usage.count(shared.clock.now(), |u| u.dropped += 1);
                }
                None
            }
        };
        if let Some(due) = due {
            let shared = shared.clone();
            tokio::spawn(async move { narrate(&shared, due).await });
        }
    }

    /// Forgets `session`.
    pub fn end(&self, session: &str) {
        let mut guard = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        guard.0.remove(session);
    }

    /// The last line written for `session`, if any.
    pub fn last_line(&self, session: &str) -> Option<String> {
        let guard = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        guard.0.get(session)?.history.back().cloned()
    }

    /// Today's use, for `status` and `/metrics`; `None` when it is off.
    pub fn status(&self, shared: &Shared) -> Option<crate::protocol::status::ModelUsage> {
        let config = shared.config();
        let nc = &config.narrator;
        if !nc.enabled {
            return None;
        }
        let now = shared.clock.now();
        Some(
            self.usage
                .today(now, nc.max_calls_per_day, nc.max_cost_usd_per_day)
                .unwrap_or_else(|| crate::protocol::status::ModelUsage {
                    day: crate::time::rfc3339(now)[..10].to_string(),
                    max_calls: Some(nc.max_calls_per_day),
                    max_cost_usd: Some(nc.max_cost_usd_per_day),
                    ..Default::default()
                }),
        )
    }

    fn finish(&self, session: &str, line: Option<&str>) {
        let mut guard = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(s) = guard.0.get_mut(session) {
            s.busy = false;
            if let Some(line) = line {
                if s.history.len() == HISTORY {
                    s.history.pop_front();
                }
                s.history.push_back(line.to_string());
            }
        }
    }
}

/// Asks for one narration and publishes it.
async fn narrate(shared: &Arc<Shared>, due: Due) {
    let narrator = &shared.narrator;
    let line = ask(shared, &due).await;
    narrator.finish(&due.session, line.as_deref());
    let Some(text) = line else { return };
    let narration = crate::protocol::narration::Narration {
        at: crate::time::rfc3339(shared.clock.now()),
        harness: due.harness,
        session_id: due.session,
        text,
        events: due.events.len() as u64,
        pending_event_id: due.pending,
    };
    tracing::debug!(session = %narration.session_id, text = %narration.text, "narration");
    if let Some(face) = shared.http.get() {
        face.narration(&narration);
    }
    let mut line = serde_json::to_vec(&crate::protocol::Reply::Narration(narration))
        .expect("records serialize");
    line.push(b'\n');
    let line = bytes::Bytes::from(line);
    shared.otlp.push(&line);
    shared.log.push(line.clone());
    shared.hub.push_to_all(line);
}

/// The model's line, or `None` (counted and logged).
async fn ask(shared: &Arc<Shared>, due: &Due) -> Option<String> {
    let config = shared.config();
    let nc = &config.narrator;
    let narrator = &shared.narrator;
    let now = || shared.clock.now();
    let provider = nc.provider.as_ref().and_then(|p| config.providers.get(p));
    let endpoint = match provider
        .ok_or_else(|| "no [narrator] provider".to_string())
        .and_then(model::Endpoint::of)
    {
        Ok(e) => e,
        Err(why) => {
            narrator.usage.count(now(), |u| u.errors += 1);
            tracing::warn!(%why, "the narrator cannot ask a model");
            return None;
        }
    };
    if let Err(why) = narrator
        .usage
        .reserve(now(), nc.max_calls_per_day, nc.max_cost_usd_per_day)
    {
        tracing::debug!(%why, "the narrator's budget is spent");
        return None;
    }
    let mut user = String::new();
    if !due.history.is_empty() {
        user.push_str("Your previous lines, oldest first:\n");
        for l in &due.history {
            user.push_str("- ");
            user.push_str(l);
            user.push('\n');
        }
        user.push('\n');
    }
    user.push_str("The agent's events since (secrets redacted), oldest first:\n");
    for e in &due.events {
        user.push_str("- ");
        user.push_str(e);
        user.push('\n');
    }
    if due.pending.is_some() {
        user.push_str("\nThe last step waits for the person's approval.\n");
    }
    let request = model::Request {
        model: nc
            .model
            .clone()
            .or_else(|| provider?.model.clone())
            .unwrap_or_else(|| model::DEFAULT_MODEL.to_string()),
        system: nc
            .system_prompt
            .clone()
            .unwrap_or_else(|| SYSTEM.to_string()),
        user,
        max_tokens: 120,
    };
    let timeout =
        Duration::from_secs(crate::rules::facts::parse_duration(&nc.timeout).unwrap_or(10));
    match model::ask(endpoint, request, timeout).await {
        Ok(reply) => {
            narrator.usage.spent(now(), &reply, nc.prices);
            match one_line(&reply.text) {
                Some(line) => Some(line),
                None => {
                    narrator.usage.count(now(), |u| u.errors += 1);
                    tracing::warn!("the narrator's model answered no line");
                    None
                }
            }
        }
        Err(e) => {
            narrator.usage.count(now(), |u| match e {
                model::ModelError::Timeout(_) => u.timeouts += 1,
                _ => u.errors += 1,
            });
            tracing::warn!(error = %e, "the narrator's model call failed");
            None
        }
    }
}

/// Characters of one buffered line taken from a run's message.
const MESSAGE_CHARS: usize = 160;

/// The lines one of a `hookd run` session's messages (the adapter's
/// `sdk_message`, Claude SDK or Pi alike) adds to the session's buffer,
/// beside its hook events: what the model wrote and each tool it called
/// (an assistant turn), and each tool that failed (a user message).
/// Thinking is left out. Redacted by `redactor`, each bounded.
pub fn lines_of_message(
    body: &crate::agent::claude::sdk::SdkBody<'_>,
    redactor: &crate::redact::Redactor,
) -> Vec<String> {
    use crate::agent::claude::sdk::{ContentBlock, SdkBody};
    let short = |text: &str| -> String {
        let text = redactor.redact_str(text);
        let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let mut out: String = flat.chars().take(MESSAGE_CHARS).collect();
        if flat.chars().count() > MESSAGE_CHARS {
            out.pop();
            out.push('…');
        }
        out
    };
    let blocks = match body {
        SdkBody::Assistant(blocks) | SdkBody::User(blocks) => blocks,
        _ => return Vec::new(),
    };
    blocks
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) if matches!(body, SdkBody::Assistant(_)) => {
                let text = short(text);
                (!text.is_empty()).then(|| format!("the agent wrote: {text}"))
            }
            ContentBlock::ToolUse { name, input } => {
                // As a hook's input holds it, for the same summary.
                let input = serde_json::json!({"tool_input": redactor.redact_value(input)});
                Some(crate::recent::line_of(
                    "the agent called",
                    Some(name.unwrap_or("a tool")),
                    &input,
                ))
            }
            ContentBlock::ToolResult {
                text,
                is_error: true,
            } => Some(format!("the tool failed: {}", short(&text))),
            _ => None,
        })
        .collect()
}

/// The first non-empty line of `text`, unquoted, at most [`MAX_CHARS`].
fn one_line(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let line = line.trim_matches('"').trim();
    if line.is_empty() {
        return None;
    }
    let mut out: String = line.chars().take(MAX_CHARS).collect();
    if line.chars().count() > MAX_CHARS {
        out.pop();
        out.push('…');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_narration_is_one_short_unquoted_line() {
        assert_eq!(
            one_line("\n \"I'm running the tests.\"\nmore").as_deref(),
            Some("I'm running the tests.")
        );
        assert_eq!(one_line("  \n"), None);
        assert_eq!(
            one_line(&"x".repeat(500)).unwrap().chars().count(),
            MAX_CHARS
        );
    }

    #[test]
    fn a_runs_turn_gives_its_text_and_tool_calls_redacted_and_a_failed_tool() {
        use crate::agent::claude::sdk::SdkMessageFields;
        let redactor = crate::redact::Redactor::default();
        let secret = "sk-ant-api03-0123456789abcdefghij";
        let turn = serde_json::json!({"type": "assistant", "message": {"content": [
            {"type": "thinking", "thinking": "private"},
            {"type": "text", "text": format!("I'll check   the\nkey {secret} first.")},
            {"type": "tool_use", "name": "Bash", "input": {"command": "cat .python-version"}}]}});
        let lines = lines_of_message(&SdkMessageFields::of(&turn).body, &redactor);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[0].starts_with("the agent wrote: I'll check the key ")
                && lines[0].contains("[REDACTED]")
                && !lines[0].contains(secret),
            "{lines:?}"
        );
        assert_eq!(lines[1], "the agent called Bash: cat .python-version");
        let back = serde_json::json!({"type": "user", "message": {"content": [
            {"type": "text", "text": "not the model's"},
            {"type": "tool_result", "content": "fine"},
            {"type": "tool_result", "content": "no such file", "is_error": true}]}});
        assert_eq!(
            lines_of_message(&SdkMessageFields::of(&back).body, &redactor),
            ["the tool failed: no such file"]
        );
        let long = serde_json::json!({"type": "assistant", "message": {"content": [
            {"type": "text", "text": "y".repeat(500)}]}});
        let lines = lines_of_message(&SdkMessageFields::of(&long).body, &redactor);
        assert!(lines[0].chars().count() <= MESSAGE_CHARS + 20, "{lines:?}");
        let other = serde_json::json!({"type": "result", "result": "done"});
        assert!(lines_of_message(&SdkMessageFields::of(&other).body, &redactor).is_empty());
    }
}
