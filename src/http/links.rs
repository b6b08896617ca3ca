//! One-time approve/deny links and the approval page they open.
//!
//! Every event that waits for a person gets two tokens, approve and deny:
//! 144 random bits each, URL-safe, bound to that event and that verdict.
//! They live as long as the event waits: the hub's pending table tells
//! [`Links`] (a [`PendingObserver`]) when the event is added and when it
//! ends, however it ends (decided here or by a socket client, timeout,
//! shutdown), and both links die together. A link that was used or
//! expired answers 410 Gone with who ended the event and when; a token
//! never seen (or long forgotten) 404.
//!
//! `GET /a/{token}` shows the page and never decides (phones and chat apps
//! prefetch links); `POST /a/{token}` decides, as client `http`. The form
//! carries the token itself, so a page elsewhere cannot forge the POST
//! without knowing it. Links never contain the event's input: the page
//! shows it, read from the pending table's (redacted) record.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Form, Router};
use serde::Deserialize;
use serde_json::Value;
use uuid::Uuid;

use super::config::NotifyConfig;
use super::notify::{Notifier, Push};
use crate::agent::Agent;
use crate::daemon::hub::{PendingAdded, PendingObserver};
use crate::daemon::Shared;
use crate::decision::{Answer, Verdict};
use crate::protocol::{EventRef, Remember};

/// Random bytes per link token (144 bits; 24 URL-safe characters).
const TOKEN_BYTES: usize = 18;

/// Ended events whose links are remembered, to answer 410 rather than 404.
const REMEMBERED_ENDED: usize = 1024;

/// The client name decisions made here carry (`client:http` in the log).
pub const CLIENT: &str = "http";

/// What a link does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkVerdict {
    /// Allow the tool call.
    Approve,
    /// Deny it.
    Deny,
}

/// What the page shows of an event (read once, when it starts waiting).
#[derive(Debug, Clone)]
pub struct EventFacts {
    /// The event's short id.
    pub short_id: String,
    /// The agent that asks.
    pub agent: Agent,
    /// The hook event (`PermissionRequest`, …).
    pub kind: String,
    /// The tool, if any.
    pub tool: Option<String>,
    /// The command, file path, URL or pattern, in full.
    pub subject: String,
    /// The project directory (or the working directory).
    pub project: Option<String>,
    /// The rules that asked.
    pub rule_ids: Vec<String>,
    /// Their reason.
    pub reason: Option<String>,
    /// What the session's facts say (taint, calls, limits; issue #25).
    pub session_facts: Option<String>,
    /// Whether the event has a session (so "for this session" can work).
    pub session: bool,
    /// The session, for the narrator's line.
    pub session_id: Option<String>,
    /// The narrator's last line about the session (issue #24), read when
    /// the page is shown.
    pub narration: Option<String>,
    /// The rule "Approve for this session" grants, shown before it
    /// applies: the narrowest suggestion, never one that matches every
    /// shell command.
    pub session_rule: Option<String>,
    /// Why granting `session_rule` would change nothing, if it would not.
    pub session_note: Option<String>,
    /// A suggested session rule that matches every shell command, which the
    /// page names but does not offer.
    pub every_command_rule: Option<String>,
    /// When its wait ends at the latest.
    pub deadline: SystemTime,
}

/// The links of one event.
#[derive(Debug)]
struct EventLinks {
    approve: String,
    deny: String,
    facts: Arc<EventFacts>,
    deadline: Instant,
    /// Who ended the event and when, once it ended.
    ended: Option<(String, SystemTime)>,
}

#[derive(Debug, Default)]
struct LinkTable {
    /// Token → (event, verdict).
    tokens: HashMap<String, (Uuid, LinkVerdict)>,
    events: HashMap<Uuid, EventLinks>,
    /// Ended events, oldest first, forgotten past [`REMEMBERED_ENDED`].
    ended: VecDeque<Uuid>,
}

impl LinkTable {
    fn forget_oldest(&mut self) {
        while self.ended.len() > REMEMBERED_ENDED {
            let Some(id) = self.ended.pop_front() else {
                return;
            };
            if let Some(links) = self.events.remove(&id) {
                self.tokens.remove(&links.approve);
                self.tokens.remove(&links.deny);
            }
        }
    }
}

/// The links of the events that wait for a person, and the pushes that
/// carry them.
#[derive(Debug)]
pub struct Links {
    table: Arc<Mutex<LinkTable>>,
    /// `http://host:port` links are built on.
    base: String,
    /// Sends pushes, when `[notify]` has targets.
    notifier: Option<Notifier>,
}

/// What a token names now.
#[derive(Debug)]
pub enum Lookup {
    /// The event waits: its facts and both tokens.
    Waiting {
        /// The event.
        id: Uuid,
        /// What this token does.
        verdict: LinkVerdict,
        /// What the page shows.
        facts: Arc<EventFacts>,
        /// The approve token.
        approve: String,
        /// The deny token.
        deny: String,
    },
    /// The event ended: by whom, when.
    Ended {
        /// `client:http`, `timeout`, …
        by: String,
        /// When.
        at: SystemTime,
    },
    /// Never seen, or forgotten.
    Unknown,
}

impl Links {
    /// The narrator's line for a waiting event (issue #24): its page shows
    /// it, and its push goes again with the line (the first went when the
    /// event began to wait, before the model answered).
    pub fn narrated(&self, narration: &crate::protocol::narration::Narration) {
        let Some(id) = narration
            .pending_event_id
            .as_deref()
            .and_then(|id| id.parse::<Uuid>().ok())
        else {
            return;
        };
        let push = {
            let mut table = self.table();
            let Some(links) = table.events.get_mut(&id).filter(|l| l.ended.is_none()) else {
                return;
            };
            let mut facts = (*links.facts).clone();
            facts.narration = Some(narration.text.clone());
            links.facts = Arc::new(facts);
            Push {
                id,
                facts: links.facts.clone(),
                approve_url: self.url(&links.approve),
                deny_url: self.url(&links.deny),
                approve_token: links.approve.clone(),
                deny_token: links.deny.clone(),
                deadline: links.deadline,
            }
        };
        if let Some(notifier) = &self.notifier {
            notifier.push(push);
        }
    }

    /// Links built on `base` (no trailing slash), pushed to `notify`'s
    /// targets (its sender thread starts now).
    pub fn new(base: String, notify: &NotifyConfig) -> std::io::Result<Links> {
        let table = Arc::new(Mutex::new(LinkTable::default()));
        let watched = Arc::downgrade(&table);
        let notifier = Notifier::start(notify, move |id| {
            watched.upgrade().is_some_and(|table| {
                table
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .events
                    .get(&id)
                    .is_some_and(|l| l.ended.is_none())
            })
        })?;
        Ok(Links {
            table,
            base,
            notifier,
        })
    }

    fn table(&self) -> std::sync::MutexGuard<'_, LinkTable> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Links alive now (two per waiting event).
    pub fn count(&self) -> usize {
        let table = self.table();
        2 * table.events.values().filter(|l| l.ended.is_none()).count()
    }

    /// The URL of `token`.
    pub fn url(&self, token: &str) -> String {
        format!("{}/a/{token}", self.base)
    }

    /// The pushes' counters, if there is a notifier.
    pub fn notifier(&self) -> Option<&Notifier> {
        self.notifier.as_ref()
    }

    /// What `token` names now.
    pub fn lookup(&self, token: &str) -> Lookup {
        let table = self.table();
        let Some((id, verdict)) = table.tokens.get(token).copied() else {
            return Lookup::Unknown;
        };
        let Some(links) = table.events.get(&id) else {
            return Lookup::Unknown;
        };
        match &links.ended {
            Some((by, at)) => Lookup::Ended {
                by: by.clone(),
                at: *at,
            },
            // Past its deadline the hub is about to end it: already gone.
            None if Instant::now() >= links.deadline => Lookup::Ended {
                by: "timeout".into(),
                at: links.facts.deadline,
            },
            None => Lookup::Waiting {
                id,
                verdict,
                facts: links.facts.clone(),
                approve: links.approve.clone(),
                deny: links.deny.clone(),
            },
        }
    }
}

impl PendingObserver for Links {
    fn decides(&self) -> bool {
        self.notifier.is_some()
    }

    fn added(&self, added: &PendingAdded<'_>) {
        if !added.verdicts.contains(&Verdict::Allow) || !added.verdicts.contains(&Verdict::Deny) {
            return;
        }
        let (Ok(approve), Ok(deny)) = (
            super::token::random_token(TOKEN_BYTES),
            super::token::random_token(TOKEN_BYTES),
        ) else {
            tracing::error!(event = %added.id, "no randomness for one-time links; the event gets none");
            return;
        };
        let facts = Arc::new(facts_of(added));
        // In the table before the push is queued: the sender drops a push
        // whose event it cannot find waiting.
        {
            let mut table = self.table();
            table
                .tokens
                .insert(approve.clone(), (added.id, LinkVerdict::Approve));
            table
                .tokens
                .insert(deny.clone(), (added.id, LinkVerdict::Deny));
            table.events.insert(
                added.id,
                EventLinks {
                    approve: approve.clone(),
                    deny: deny.clone(),
                    facts: facts.clone(),
                    deadline: added.deadline,
                    ended: None,
                },
            );
        }
        if let Some(notifier) = &self.notifier {
            notifier.push(Push {
                id: added.id,
                facts: facts.clone(),
                approve_url: self.url(&approve),
                deny_url: self.url(&deny),
                approve_token: approve,
                deny_token: deny,
                deadline: added.deadline,
            });
        }
    }

    fn ended(&self, id: Uuid, by: &str) {
        let mut table = self.table();
        let Some(links) = table.events.get_mut(&id) else {
            return;
        };
        links.ended = Some((by.to_string(), SystemTime::now()));
        table.ended.push_back(id);
        table.forget_oldest();
    }
}

/// What the page shows of `added`, from its record.
fn facts_of(added: &PendingAdded<'_>) -> EventFacts {
    let record: Value = serde_json::from_slice(added.record).unwrap_or(Value::Null);
    let input = &record["input"];
    let tool_input = crate::agent::claude::InputFields::of(input)
        .tool_input
        .unwrap_or(&Value::Null);
    let subject = [
        "command",
        "file_path",
        "notebook_path",
        "url",
        "pattern",
        "path",
        "query",
    ]
    .iter()
    .find_map(|k| tool_input.get(*k).and_then(Value::as_str))
    .map(str::to_string)
    .unwrap_or_else(|| crate::event::input_summary(input, 2000));
    let project = record["project_dir"]
        .as_str()
        .or_else(|| record["cwd"].as_str())
        .map(str::to_string);
    let remaining = added.deadline.saturating_duration_since(Instant::now());
    let for_session = |broad: bool| {
        added.suggestions.iter().find(|s| {
            s.remember == Remember::Session
                && s.verdict == Verdict::Allow
                && s.every_command == broad
        })
    };
    let session_rule = for_session(false);
    EventFacts {
        session_rule: session_rule.map(|s| s.rule.clone()),
        session_note: session_rule.and_then(|s| s.note.clone()),
        every_command_rule: for_session(true).map(|s| s.rule.clone()),
        short_id: added.short_id.to_string(),
        agent: added.meta.agent,
        kind: added.meta.kind.to_string(),
        tool: added.meta.tool.map(str::to_string),
        subject,
        project,
        rule_ids: added.asked_by.rule_ids.clone(),
        reason: added.asked_by.reason.clone(),
        session_facts: added.asked_by.session.clone(),
        session: added.meta.session.is_some(),
        session_id: added.meta.session.map(str::to_string),
        narration: None,
        deadline: SystemTime::now() + remaining,
    }
}

/// `GET`/`POST /a/{token}`.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/a/{token}", get(show).post(decide))
}

fn links_of(shared: &Shared) -> Option<&Links> {
    super::face_of(shared).map(|face| &*face.links)
}

async fn show(State(shared): State<Arc<Shared>>, Path(token): Path<String>) -> Response {
    let Some(links) = links_of(&shared) else {
        return page(StatusCode::NOT_FOUND, "Unknown link", &unknown_body());
    };
    match links.lookup(&token) {
        Lookup::Unknown => page(StatusCode::NOT_FOUND, "Unknown link", &unknown_body()),
        Lookup::Ended { by, at } => gone(&by, at),
        Lookup::Waiting {
            verdict,
            facts,
            approve,
            deny,
            ..
        } => {
            let mut facts = (*facts).clone();
            if facts.narration.is_none() {
                facts.narration = facts
                    .session_id
                    .as_deref()
                    .and_then(|s| shared.narrator.last_line(s));
            }
            page(
                StatusCode::OK,
                "Approve?",
                &approval_body(&facts, verdict, &approve, &deny),
            )
        }
    }
}

/// The approval form.
#[derive(Debug, Deserialize)]
pub struct DecideForm {
    /// The link's token again (the CSRF check).
    token: String,
    /// `session` to remember an approval for the session.
    #[serde(default)]
    remember: Option<String>,
    /// The rule the page showed for the session; it must be the one the
    /// event offers.
    #[serde(default)]
    rule: Option<String>,
}

async fn decide(
    State(shared): State<Arc<Shared>>,
    Path(token): Path<String>,
    Form(form): Form<DecideForm>,
) -> Response {
    let Some(links) = links_of(&shared) else {
        return page(StatusCode::NOT_FOUND, "Unknown link", &unknown_body());
    };
    if !super::token::matches(form.token.as_bytes(), token.as_bytes()) {
        return page(
            StatusCode::FORBIDDEN,
            "Refused",
            "<p>The form does not carry this link's token. Open the link again and use its buttons.</p>",
        );
    }
    let (id, verdict, facts) = match links.lookup(&token) {
        Lookup::Unknown => return page(StatusCode::NOT_FOUND, "Unknown link", &unknown_body()),
        Lookup::Ended { by, at } => return gone(&by, at),
        Lookup::Waiting {
            id, verdict, facts, ..
        } => (id, verdict, facts),
    };
    let for_session = form.remember.as_deref() == Some("session");
    // Only the rule the page shows is granted: never the whole shell, never
    // a rule the form was made to carry instead.
    let session_rule = match (&facts.session_rule, &form.rule) {
        (Some(shown), None) => Some(shown.clone()),
        (Some(shown), Some(sent)) if sent == shown => Some(shown.clone()),
        _ => None,
    };
    if for_session && verdict == LinkVerdict::Approve && session_rule.is_none() {
        return page(
            StatusCode::CONFLICT,
            "Not decided",
            &format!(
                "<p>This page grants only the rule it shows for this session{}; nothing was decided. Open the link again.</p>",
                facts
                    .session_rule
                    .as_deref()
                    .map(|rule| format!(", <code>{}</code>", escape(rule)))
                    .unwrap_or_default()
            ),
        );
    }
    let answer = match verdict {
        LinkVerdict::Approve => Answer::new(Verdict::Allow, None),
        LinkVerdict::Deny => Answer::new(
            Verdict::Deny,
            Some("denied from hookd's approval page".into()),
        ),
    };
    let decided = if for_session && verdict == LinkVerdict::Approve {
        let d = crate::protocol::Decide {
            req: "http".into(),
            event_id: EventRef::Id(id),
            answer,
            remember: Remember::Session,
            rule: session_rule,
            ttl_s: None,
        };
        match crate::daemon::grants::decide(&shared, d, CLIENT).await {
            crate::protocol::Reply::Ok(_) => Ok(()),
            crate::protocol::Reply::Error(e) => Err(e.message),
            other => Err(format!("unexpected reply {other:?}")),
        }
    } else {
        shared
            .hub
            .decide(&EventRef::Id(id), answer, CLIENT, None)
            .map_err(|e| e.message)
    };
    match decided {
        Ok(()) => {
            let (title, what) = match (verdict, for_session) {
                (LinkVerdict::Approve, true) => ("Approved", "Approved for this session."),
                (LinkVerdict::Approve, false) => ("Approved", "Approved."),
                (LinkVerdict::Deny, _) => ("Denied", "Denied."),
            };
            page(
                StatusCode::OK,
                title,
                &format!(
                    "<p class=done>{what}</p><p>The agent has its answer. You can close this page.</p>"
                ),
            )
        }
        Err(message) => match links.lookup(&token) {
            Lookup::Ended { by, at } => gone(&by, at),
            _ => page(
                StatusCode::CONFLICT,
                "Not decided",
                &format!("<p>{}</p>", escape(&message)),
            ),
        },
    }
}

fn unknown_body() -> String {
    "<p>This link is unknown: it never existed, or it is too old to remember.</p>".into()
}

/// 410 Gone: who ended the event, and when.
fn gone(by: &str, at: SystemTime) -> Response {
    let when = crate::time::rfc3339(at);
    let what = match by {
        "timeout" => "This request expired: nobody answered before its deadline.".to_string(),
        by if by.starts_with("client:") => format!("Already decided by {by}."),
        by => format!("This request ended: {by}."),
    };
    page(
        StatusCode::GONE,
        "Already answered",
        &format!(
            "<p class=done>{}</p><p class=muted>at <time>{}</time></p>",
            escape(&what),
            escape(&when)
        ),
    )
}

fn approval_body(facts: &EventFacts, verdict: LinkVerdict, approve: &str, deny: &str) -> String {
    let mut rows = String::new();
    let mut row = |name: &str, value: &str, class: &str| {
        rows.push_str(&format!(
            "<dt>{name}</dt><dd class=\"{class}\">{}</dd>",
            escape(value)
        ));
    };
    row("Agent", facts.agent.display_name(), "");
    row(
        "Tool",
        &format!("{} ({})", facts.tool.as_deref().unwrap_or("—"), facts.kind),
        "",
    );
    row(
        if facts.subject.contains('\n') || facts.tool.as_deref() == Some("Bash") {
            "Command"
        } else {
            "Target"
        },
        &facts.subject,
        "subject",
    );
    if let Some(project) = &facts.project {
        row("Project", project, "mono");
    }
    if !facts.rule_ids.is_empty() {
        row("Rule", &facts.rule_ids.join(", "), "mono");
    }
    if let Some(reason) = &facts.reason {
        row("Reason", reason, "");
    }
    if let Some(session) = &facts.session_facts {
        row("Session", session, "");
    }
    if let Some(narration) = &facts.narration {
        row("Narrator", narration, "");
    }
    let remaining = facts
        .deadline
        .duration_since(SystemTime::now())
        .unwrap_or(Duration::ZERO)
        .as_secs();
    let deadline_ms = crate::time::unix_millis(facts.deadline);
    let hint = match verdict {
        LinkVerdict::Approve => "You opened the approve link.",
        LinkVerdict::Deny => "You opened the deny link.",
    };
    // The exact rule a session approval grants, shown before it applies;
    // a rule that matches every shell command is named, never offered.
    let (session_button, session_text) = match (&facts.session_rule, facts.session) {
        (Some(rule), true) => (
            format!(
                "<form method=post action=\"/a/{approve}\"><input type=hidden name=token value=\"{approve}\">\
                 <input type=hidden name=remember value=session>\
                 <input type=hidden name=rule value=\"{rule}\">\
                 <button id=approve-session class=session>Approve for this session</button></form>",
                rule = escape(rule)
            ),
            format!(
                "<p id=session-rule class=muted>For this session approves every call matching \
                 <code>{}</code> without asking.</p>{}",
                escape(rule),
                facts
                    .session_note
                    .as_deref()
                    .map(|note| format!(
                        "<p id=session-note class=note>It would change nothing: {}.</p>",
                        escape(note)
                    ))
                    .unwrap_or_default()
            ),
        ),
        _ => (String::new(), String::new()),
    };
    let session_text = match (&facts.every_command_rule, facts.session) {
        (Some(rule), true) => format!(
            "{session_text}<p id=every-command class=note><code>{}</code> for this session is not offered here: \
             it would allow every shell command, not just this one. Grant it by name with \
             <code>hookd decide {} allow --remember session --rule '{}'</code>.</p>",
            escape(rule),
            escape(&facts.short_id),
            escape(rule)
        ),
        _ => session_text,
    };
    format!(
        "<p class=muted>{agent} wants to use a tool · event <b>{short}</b></p>\
         <dl>{rows}</dl>\
         <p class=countdown>Answer within <span id=left data-deadline=\"{deadline_ms}\">{remaining}</span> s, \
         or the agent falls back to its own prompt.</p>\
         <div class=buttons>\
         <form method=post action=\"/a/{approve}\"><input type=hidden name=token value=\"{approve}\">\
         <button id=approve class=approve>Approve</button></form>\
         <form method=post action=\"/a/{deny}\"><input type=hidden name=token value=\"{deny}\">\
         <button id=deny class=deny>Deny</button></form>\
         {session_button}</div>{session_text}\
         <p class=muted>{hint} Nothing is decided until you press a button.</p>\
         <script>(function(){{var e=document.getElementById('left'),d=+e.dataset.deadline;\
         function t(){{var s=Math.max(0,Math.round((d-Date.now())/1000));e.textContent=s;\
         if(s>0)setTimeout(t,1000);}}t();}})();</script>",
        agent = escape(facts.agent.display_name()),
        short = escape(&facts.short_id),
    )
}

/// A complete page: small, self-contained, readable on a phone.
fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=en><head><meta charset=utf-8>\
         <meta name=viewport content=\"width=device-width,initial-scale=1\">\
         <meta name=referrer content=same-origin>\
         <title>hookd · {title}</title><style>{STYLE}</style></head>\
         <body><main><h1>{title}</h1>{body}</main></body></html>",
        title = escape(title),
    );
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
            ),
            (header::X_FRAME_OPTIONS, "DENY"),
        ],
        html,
    )
        .into_response()
}

const STYLE: &str = "body{margin:0;font:16px/1.45 system-ui,-apple-system,sans-serif;background:#f5f5f4;color:#1c1917}\
main{max-width:34rem;margin:0 auto;padding:1rem}h1{font-size:1.4rem;margin:.5rem 0}\
dl{background:#fff;border-radius:.6rem;padding:.75rem 1rem;margin:.75rem 0;box-shadow:0 1px 2px #0002}\
dt{font-size:.8rem;color:#78716c;margin-top:.5rem}dd{margin:0;overflow-wrap:anywhere}\
.subject,.mono{font-family:ui-monospace,monospace;white-space:pre-wrap}\
.subject{background:#1c1917;color:#fafaf9;padding:.5rem;border-radius:.4rem}\
.buttons{display:flex;flex-wrap:wrap;gap:.5rem}.buttons form{flex:1 1 8rem}\
button{width:100%;font-size:1.1rem;padding:.9rem;border:0;border-radius:.6rem;color:#fff;cursor:pointer}\
.approve{background:#15803d}.deny{background:#b91c1c}.session{background:#1d4ed8}\
.muted,.countdown{color:#78716c;font-size:.9rem}.done{font-size:1.2rem}\
.note{color:#92400e;font-size:.9rem}code{font-family:ui-monospace,monospace;overflow-wrap:anywhere}";

/// `text` with HTML's special characters escaped (for text and
/// double-quoted attribute values alike).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            escape("<script>alert('x')</script> & \"q\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
    }

    #[test]
    fn the_page_escapes_what_the_agent_sent() {
        let facts = EventFacts {
            short_id: "abcde".into(),
            agent: Agent::ClaudeCode,
            kind: "PermissionRequest".into(),
            tool: Some("Bash".into()),
            subject: "echo </dd><script>alert(1)</script>".into(),
            reason: Some("<b>bold</b>".into()),
            session_facts: Some(
                "tainted by WebFetch https://example.com/<x> at 14:02:11 UTC".into(),
            ),
            deadline: SystemTime::now() + Duration::from_secs(30),
            project: None,
            rule_ids: vec![],
            session: true,
            session_id: None,
            narration: Some("I'm <testing> the page.".into()),
            session_rule: Some("Bash(echo \"<x>\":*)".into()),
            session_note: None,
            every_command_rule: Some("Bash".into()),
        };
        let body = approval_body(&facts, LinkVerdict::Approve, "tokA", "tokD");
        assert!(!body.contains("<script>alert"), "{body}");
        assert!(
            body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{body}"
        );
        assert!(!body.contains("<b>bold"), "{body}");
        assert!(
            body.contains("<dt>Narrator</dt><dd class=\"\">I&#39;m &lt;testing&gt; the page.</dd>"),
            "the narrator's line, escaped: {body}"
        );
        assert!(
            body.contains("<dt>Session</dt><dd class=\"\">tainted by WebFetch https://example.com/&lt;x&gt; at 14:02:11 UTC</dd>"),
            "the session's taint, escaped: {body}"
        );
        assert_eq!(body.matches("<script>").count(), 1, "only the countdown's");
        assert!(
            body.contains("name=rule value=\"Bash(echo &quot;&lt;x&gt;&quot;:*)\"")
                && body.contains("<code>Bash(echo &quot;&lt;x&gt;&quot;:*)</code>"),
            "{body}"
        );
    }

    #[test]
    fn the_page_says_when_a_session_approval_would_change_nothing() {
        let facts = EventFacts {
            short_id: "abcde".into(),
            agent: Agent::ClaudeCode,
            kind: "PermissionRequest".into(),
            tool: Some("Bash".into()),
            subject: "./deploy prod".into(),
            reason: None,
            session_facts: None,
            deadline: SystemTime::now() + Duration::from_secs(30),
            project: None,
            rule_ids: vec!["team:ask-deploy".into()],
            session: true,
            session_id: None,
            narration: None,
            session_rule: Some("Bash(./deploy prod:*)".into()),
            session_note: Some(crate::grant::held_by_policy(
                "team",
                &["team:ask-deploy".into()],
            )),
            every_command_rule: None,
        };
        let body = approval_body(&facts, LinkVerdict::Approve, "tokA", "tokD");
        assert!(
            body.contains("<p id=session-note class=note>It would change nothing: the enforced policy team asks about this event (team:ask-deploy); a session grant does not loosen it, so the next one asks again.</p>"),
            "{body}"
        );
        assert!(!body.contains("id=every-command"), "{body}");
    }
}
