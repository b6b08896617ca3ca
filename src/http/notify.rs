//! Pushes to a phone (`[notify]`): for every event that waits for a
//! person, one push per target carrying its approve/deny links.
//!
//! Never on a hook's path: [`Notifier::push`] only queues, and each
//! target has a thread of its own that sends, with the blocking `ureq`
//! client ([`crate::outbound`]), from a queue of its own (bounded; a full
//! queue drops that target's push and counts it). So a target that hangs
//! (a request's time limit is 10 s, its tries 4) delays only its own
//! pushes, never another target's: with one sender for all, a webhook that
//! never answered held a healthy ntfy target's pushes for 43 s each. The
//! pending table adds an event once, so an event is pushed once per
//! target, and each sender has at most one push in flight. A failed send
//! is retried with backoff, at most [`ATTEMPTS`] times and never past the
//! event's deadline or end; what happened is counted (`status`:
//! `http.notify`, summed over the targets). The senders block on their
//! queues: an idle daemon has no timer for them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use uuid::Uuid;

use super::config::{ntfy_server_and_topic, NotifyConfig, NtfyTarget, WebhookTarget};
use super::links::EventFacts;

/// Pushes waiting for a target's sender before new ones to it are dropped.
const QUEUE: usize = 256;

/// Tries per push and target.
pub const ATTEMPTS: u32 = 4;

/// The first retry's wait; doubled for each next one.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);

/// One request's time limit.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// One event's push.
#[derive(Debug, Clone)]
pub struct Push {
    /// The event.
    pub id: Uuid,
    /// What the page shows of it.
    pub facts: Arc<EventFacts>,
    /// The approve link.
    pub approve_url: String,
    /// The deny link.
    pub deny_url: String,
    /// The approve link's token (ntfy's action POSTs it as the form).
    pub approve_token: String,
    /// The deny link's token.
    pub deny_token: String,
    /// The event's deadline.
    pub deadline: Instant,
}

/// Counts of pushes, per target.
#[derive(Debug, Default)]
pub struct NotifyCounters {
    /// Delivered (a 2xx answer).
    pub sent: AtomicU64,
    /// Given up on after every attempt failed.
    pub failed: AtomicU64,
    /// Not sent: the queue was full, or the event ended first.
    pub dropped: AtomicU64,
}

/// The queues to the targets' sender threads.
#[derive(Debug)]
pub struct Notifier {
    /// One per target, in the config's order (ntfy, then webhooks).
    queues: Vec<TargetQueue>,
    /// See [`NotifyCounters`]: every target's counts, summed.
    pub counters: Arc<NotifyCounters>,
}

/// One target's queue to its sender thread.
#[derive(Debug)]
struct TargetQueue {
    queue: SyncSender<Outgoing>,
    /// The target as the config names it (`notify.webhook[0]`), for the
    /// log: its URL may hold a secret (an ntfy topic, a Slack hook).
    name: String,
}

/// What a target's sender sends: an event's push, or a coverage alarm
/// ([`super::alarm`]).
#[derive(Debug, Clone)]
enum Outgoing {
    Event(Push),
    Alarm(Arc<super::alarm::AlarmPush>),
}

/// A push target as configured.
enum Target {
    Ntfy(NtfyTarget),
    Webhook(WebhookTarget),
}

impl Target {
    /// The request that pushes `push` to it.
    fn request(&self, push: &Push) -> Result<Request, String> {
        match self {
            Target::Ntfy(target) => ntfy_request(target, push),
            Target::Webhook(target) => Ok(webhook_request(target, push)),
        }
    }
}

impl Notifier {
    /// Starts a sender thread for each of `config`'s targets; `waiting(id)`
    /// says whether event `id` still waits (a push for an ended event is
    /// dropped). `None` without targets.
    pub fn start(
        config: &NotifyConfig,
        waiting: impl Fn(Uuid) -> bool + Send + Sync + 'static,
    ) -> std::io::Result<Option<Notifier>> {
        if config.targets() == 0 {
            return Ok(None);
        }
        let waiting: Arc<dyn Fn(Uuid) -> bool + Send + Sync> = Arc::new(waiting);
        let counters = Arc::new(NotifyCounters::default());
        let ntfy = config
            .ntfy
            .iter()
            .enumerate()
            .map(|(n, target)| (format!("notify.ntfy[{n}]"), Target::Ntfy(target.clone())));
        let webhook = config.webhook.iter().enumerate().map(|(n, target)| {
            (
                format!("notify.webhook[{n}]"),
                Target::Webhook(target.clone()),
            )
        });
        let mut queues = Vec::new();
        for (n, (name, target)) in ntfy.chain(webhook).enumerate() {
            let (queue, pushes) = sync_channel::<Outgoing>(QUEUE);
            let sender = Sender {
                agent: crate::outbound::agent(REQUEST_TIMEOUT),
                name: name.clone(),
                target,
                counters: counters.clone(),
            };
            let waiting = waiting.clone();
            std::thread::Builder::new()
                .name(format!("hookd-notify-{n}"))
                .spawn(move || {
                    for push in pushes {
                        match push {
                            Outgoing::Event(push) => sender.send(&push, &*waiting),
                            Outgoing::Alarm(alarm) => sender.send_alarm(&alarm),
                        }
                    }
                })?;
            queues.push(TargetQueue { queue, name });
        }
        Ok(Some(Notifier { queues, counters }))
    }

    /// Queues `push` to every target without waiting.
    pub fn push(&self, push: Push) {
        self.queue(Outgoing::Event(push));
    }

    /// Queues a coverage alarm to every target without waiting.
    pub fn push_alarm(&self, alarm: &crate::protocol::coverage::CoverageAlarm) {
        self.queue(Outgoing::Alarm(Arc::new(alarm.clone())));
    }

    fn queue(&self, push: Outgoing) {
        for target in &self.queues {
            match target.queue.try_send(push.clone()) {
                Ok(()) => {}
                Err(TrySendError::Full(_)) => {
                    tracing::warn!(
                        target = %target.name,
                        "push queue full (the target is slow or hangs); this push to it is dropped"
                    );
                    self.counters.dropped.fetch_add(1, Ordering::Relaxed);
                }
                Err(TrySendError::Disconnected(_)) => {
                    self.counters.dropped.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// `status.http.notify`.
    pub fn status(&self) -> crate::protocol::NotifyStatus {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        crate::protocol::NotifyStatus {
            targets: self.queues.len() as u64,
            sent: n(&self.counters.sent),
            failed: n(&self.counters.failed),
            dropped: n(&self.counters.dropped),
        }
    }
}

/// A request ready to send: URL, headers, body.
pub(super) struct Request {
    pub(super) url: String,
    pub(super) headers: Vec<(&'static str, String)>,
    pub(super) body: String,
}

/// One target's sender, on its own thread.
struct Sender {
    agent: ureq::Agent,
    /// The target as the config names it (`notify.webhook[0]`): what the
    /// log says, never the URL, whose path may be the secret.
    name: String,
    target: Target,
    counters: Arc<NotifyCounters>,
}

impl Sender {
    /// Sends `push` to the target, retrying with backoff while the event
    /// waits.
    fn send(&self, push: &Push, waiting: &dyn Fn(Uuid) -> bool) {
        let request = self.target.request(push);
        self.send_request(request, push.deadline, || waiting(push.id));
    }

    /// Sends a coverage alarm, retrying with backoff for a minute at most.
    fn send_alarm(&self, alarm: &super::alarm::AlarmPush) {
        let request = match &self.target {
            Target::Ntfy(target) => super::alarm::ntfy_request(target, alarm),
            Target::Webhook(target) => Ok(super::alarm::webhook_request(target, alarm)),
        };
        self.send_request(request, Instant::now() + super::alarm::SEND_FOR, || true);
    }

    /// Sends `request`, retrying with backoff while `wanted()` and before
    /// `deadline`.
    fn send_request(
        &self,
        request: Result<Request, String>,
        deadline: Instant,
        wanted: impl Fn() -> bool,
    ) {
        let request = match request {
            Ok(request) => request,
            Err(e) => {
                tracing::error!(target = %self.name, error = %e, "push not sent");
                self.counters.failed.fetch_add(1, Ordering::Relaxed);
                return;
            }
        };
        let mut backoff = FIRST_BACKOFF;
        for attempt in 1..=ATTEMPTS {
            if !wanted() || Instant::now() >= deadline {
                self.counters.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            let mut builder = self.agent.post(&request.url);
            for (name, value) in &request.headers {
                builder = builder.header(*name, value.as_str());
            }
            let failure = match builder.send(request.body.as_str()) {
                Ok(response) if response.status().is_success() => {
                    self.counters.sent.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                Ok(response) => format!("answered {}", response.status()),
                Err(e) => e.to_string(),
            };
            tracing::warn!(target = %self.name, attempt, error = %failure, "push failed");
            if attempt < ATTEMPTS {
                std::thread::sleep(backoff.min(deadline.saturating_duration_since(Instant::now())));
                backoff *= 2;
            }
        }
        self.counters.failed.fetch_add(1, Ordering::Relaxed);
    }
}

/// One line saying what waits: `Bash: npm publish`.
fn headline(facts: &EventFacts) -> String {
    let subject: String = facts.subject.chars().take(200).collect();
    match &facts.tool {
        Some(tool) => format!("{tool}: {subject}"),
        None => format!("{}: {subject}", facts.kind),
    }
}

/// ntfy's JSON publish format: POSTed to the server's root, the topic in
/// the body, two `http` actions that POST the links' forms, one `view`.
fn ntfy_request(target: &NtfyTarget, push: &Push) -> Result<Request, String> {
    let (server, topic) = ntfy_server_and_topic(&target.url)
        .ok_or_else(|| format!("`{}` names no topic", target.url))?;
    let facts = &push.facts;
    let mut message = headline(facts);
    if let Some(project) = &facts.project {
        message.push_str(&format!("\nin {project}"));
    }
    if let Some(reason) = &facts.reason {
        message.push_str(&format!("\n{reason}"));
    }
    if let Some(narration) = &facts.narration {
        message.push_str(&format!("\n{narration}"));
    }
    let form_action = |label: &str, url: &str, token: &str| {
        json!({
            "action": "http",
            "label": label,
            "url": url,
            "method": "POST",
            "headers": {"Content-Type": "application/x-www-form-urlencoded"},
            "body": format!("token={token}"),
            "clear": true,
        })
    };
    let body = json!({
        "topic": topic,
        "title": format!("{} needs you ({})", facts.agent.display_name(), facts.short_id),
        "message": message,
        "priority": 4,
        "tags": ["robot"],
        "click": push.approve_url,
        "actions": [
            form_action("Approve", &push.approve_url, &push.approve_token),
            form_action("Deny", &push.deny_url, &push.deny_token),
            {"action": "view", "label": "Open", "url": push.approve_url},
        ],
    });
    let mut headers = vec![("Content-Type", "application/json".to_string())];
    let token = ntfy_token(target)?;
    if let Some(token) = token {
        headers.push(("Authorization", format!("Bearer {token}")));
    }
    Ok(Request {
        url: server,
        headers,
        body: body.to_string(),
    })
}

/// The bearer token an ntfy target is configured with, if any.
pub(super) fn ntfy_token(target: &NtfyTarget) -> Result<Option<String>, String> {
    Ok(match (&target.token_env, &target.token_file) {
        (Some(var), _) => {
            Some(std::env::var(var).map_err(|_| format!("`token_env`: ${var} is not set"))?)
        }
        (None, Some(file)) => Some(
            std::fs::read_to_string(file)
                .map_err(|e| format!("`token_file` {}: {e}", file.display()))?
                .trim()
                .to_string(),
        ),
        (None, None) => None,
    })
}

/// The webhook document (docs/approvals.md, "Approving from your phone").
fn webhook_request(target: &WebhookTarget, push: &Push) -> Request {
    let facts = &push.facts;
    let mut body = json!({
        "event_id": push.id,
        "short_id": facts.short_id,
        "agent": facts.agent.as_str(),
        "event": facts.kind,
        "tool": facts.tool,
        "summary": facts.subject,
        "project": facts.project,
        "rule_ids": facts.rule_ids,
        "reason": facts.reason,
        "narration": facts.narration,
        "deadline": crate::time::rfc3339(facts.deadline),
        "approve_url": push.approve_url,
        "deny_url": push.deny_url,
        "page_url": push.approve_url,
    });
    if target.slack {
        body["text"] = Value::String(format!(
            "*{} needs you* ({})\n`{}`{}\n<{}|Review and approve> · <{}|Deny>",
            facts.agent.display_name(),
            facts.short_id,
            headline(facts),
            facts
                .reason
                .as_deref()
                .map(|r| format!("\n{r}"))
                .unwrap_or_default(),
            push.approve_url,
            push.deny_url
        ));
    }
    Request {
        url: target.url.clone(),
        headers: vec![("Content-Type", "application/json".to_string())],
        body: body.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push() -> Push {
        let facts = EventFacts {
            short_id: "abcde".into(),
            agent: crate::agent::Agent::ClaudeCode,
            kind: "PermissionRequest".into(),
            tool: Some("Bash".into()),
            subject: "./deploy".into(),
            project: None,
            rule_ids: Vec::new(),
            reason: None,
            session_facts: None,
            session: false,
            session_id: None,
            narration: None,
            session_rule: None,
            session_note: None,
            every_command_rule: None,
            deadline: std::time::SystemTime::now(),
        };
        Push {
            id: Uuid::now_v7(),
            facts: Arc::new(facts),
            approve_url: "http://127.0.0.1/a/x".into(),
            deny_url: "http://127.0.0.1/a/y".into(),
            approve_token: "x".into(),
            deny_token: "y".into(),
            deadline: Instant::now() + Duration::from_secs(60),
        }
    }

    #[test]
    fn a_full_queue_drops_only_its_own_targets_pushes() {
        // A target whose sender never takes a push, its queue holding one,
        // and one whose pushes are taken.
        let (stuck, _never_taken) = sync_channel(1);
        let (healthy, taken) = sync_channel(QUEUE);
        let notifier = Notifier {
            queues: vec![
                TargetQueue {
                    queue: stuck,
                    name: "notify.webhook[0]".into(),
                },
                TargetQueue {
                    queue: healthy,
                    name: "notify.ntfy[0]".into(),
                },
            ],
            counters: Arc::default(),
        };
        for _ in 0..3 {
            notifier.push(push());
        }
        assert_eq!(taken.try_iter().count(), 3);
        let status = notifier.status();
        assert_eq!((status.targets, status.dropped), (2, 2), "{status:?}");
    }
}
