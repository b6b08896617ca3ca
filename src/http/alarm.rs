//! The coverage alarm's push to the `[notify]` targets: "session 1fce3faa
//! (webshop, Codex CLI): 3 tool calls ran unjudged". The daemon throttles
//! alarms per session (`hookd_daemon::coverage`); each target's sender
//! sends it like an event's push ([`super::notify`]), without links, and
//! retries for [`SEND_FOR`] at most.

use std::time::Duration;

use serde_json::json;

use super::config::{ntfy_server_and_topic, NtfyTarget, WebhookTarget};
use super::notify::{ntfy_token, Request};
use crate::protocol::coverage::CoverageAlarm;

/// How long a target's sender retries an alarm.
pub const SEND_FOR: Duration = Duration::from_secs(60);

/// One alarm, as the senders send it.
pub type AlarmPush = CoverageAlarm;

/// What a person should do about it.
const HINT: &str = "A hook did not run before these tools ran: run `hookd doctor` on that machine.";

/// ntfy's JSON publish format, as for an event's push, with no actions.
pub(super) fn ntfy_request(target: &NtfyTarget, push: &AlarmPush) -> Result<Request, String> {
    let (server, topic) = ntfy_server_and_topic(&target.url)
        .ok_or_else(|| format!("`{}` names no topic", target.url))?;
    let body = json!({
        "topic": topic,
        "title": format!("{}: tool calls ran unjudged", push.agent_name),
        "message": format!("{}\n{HINT}", push.message),
        "priority": 4,
        "tags": ["warning"],
    });
    let mut headers = vec![("Content-Type", "application/json".to_string())];
    if let Some(token) = ntfy_token(target)? {
        headers.push(("Authorization", format!("Bearer {token}")));
    }
    Ok(Request {
        url: server,
        headers,
        body: body.to_string(),
    })
}

/// The webhook document of an alarm (docs/approvals.md): `kind:
/// "coverage_alarm"` tells it from an event's.
pub(super) fn webhook_request(target: &WebhookTarget, push: &AlarmPush) -> Request {
    let alarm = push;
    let mut body = json!({
        "kind": "coverage_alarm",
        "agent": alarm.harness,
        "session_id": alarm.session_id,
        "project": alarm.project,
        "unjudged": alarm.unjudged,
        "tool": alarm.tool,
        "at": alarm.at,
        "summary": alarm.message,
    });
    if target.slack {
        body["text"] = json!(format!("*{}*\n{HINT}", alarm.message));
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

    #[test]
    fn the_alarm_names_session_project_agent_and_count() {
        let alarm = CoverageAlarm {
            at: "2026-11-26T22:00:00.000000Z".into(),
            harness: "codex".into(),
            agent_name: "Codex CLI".into(),
            session_id: "1fce3faa-1".into(),
            project: Some("webshop".into()),
            unjudged: 3,
            tool: "Bash".into(),
            message: "session 1fce3faa (webshop, Codex CLI): 3 tool calls ran unjudged".into(),
        };
        let push = alarm;
        let target: WebhookTarget =
            serde_json::from_value(json!({"url": "http://127.0.0.1:1/h", "slack": true})).unwrap();
        let body: serde_json::Value =
            serde_json::from_str(&webhook_request(&target, &push).body).unwrap();
        assert_eq!(body["kind"], "coverage_alarm");
        assert_eq!(body["unjudged"], 3);
        assert!(body["text"]
            .as_str()
            .unwrap()
            .contains("3 tool calls ran unjudged"));
    }
}
