//! The narrator in the real daemon (issue #24), against the mock Messages
//! API (`side_replies` script its lines): a line once enough events
//! gathered, at once for an ask that waits for a person (beside it for the
//! clients), in the log and to subscribers; redacted input; a slow model
//! never delays an answer; the day's budget stops it; off by default.

use crate::support::agent_cli::{MockServer, ModelApi};
use crate::support::daemon;

use daemon::{bash, permission_decision, Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};

const ASK_PUSH: &str = r#"
[[rule]]
id = "ask-push"
action = "ask"
tool = "Bash(git push *)"
reason = "pushing needs a person"
"#;

fn mock(replies: Value) -> MockServer {
    MockServer::start(
        ModelApi::Anthropic,
        &json!({"turns": [], "side_replies": replies}).to_string(),
    )
}

/// A daemon with the narrator on, asking `mock`, with extra `[narrator]` keys.
fn daemon(mock: &MockServer, narrator: &str) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(ASK_PUSH.to_string()),
        config: Some(format!(
            "[providers.cheap]\nkind = \"custom\"\nbase_url = \"{}\"\napi_key_env = \"HOOKD_TEST_NARRATOR_KEY\"\n\n[narrator]\nenabled = true\nprovider = \"cheap\"\nmin_interval = \"1s\"\n{narrator}",
            mock.base_url()
        )),
        env: vec![("HOOKD_TEST_NARRATOR_KEY".into(), "sk-test".into())],
        ..DaemonOptions::default()
    })
}

fn in_session(command: &str, session: &str) -> Value {
    let mut input = bash(command);
    input["session_id"] = json!(session);
    input
}

fn narrations(d: &Daemon) -> Vec<Value> {
    d.log_lines()
        .into_iter()
        .filter(|l| l["type"] == "narration")
        .collect()
}

fn wait_narrations(d: &Daemon, n: usize) -> Vec<Value> {
    crate::support::process::poll_until(
        &format!("{n} narrations in the log"),
        std::time::Duration::from_secs(10),
        || narrations(d).len() >= n,
    );
    narrations(d)
}

/// `min_events` events of a session: one line, in the log and pushed to a
/// subscriber, from a request that holds the events redacted; the next
/// question carries the line before it.
#[test]
fn a_session_is_narrated_once_enough_events_gathered() {
    let mock = mock(json!([
        {"match": "Your previous lines", "text": "I'm checking what changed before I commit."},
        {"match": "", "text": "\"I'm looking around the project to see what is there.\""},
    ]));
    let d = daemon(&mock, "min_events = 2\n");
    let mut client = RawClient::hello(&d.socket, "feed");
    assert_eq!(client.call(json!({"type": "subscribe"}))["type"], "ok");
    let secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    d.forward(&in_session("ls", "s1"), &[]);
    assert!(narrations(&d).is_empty());
    d.forward(
        &in_session(
            &format!("export ANTHROPIC_API_KEY={secret}; cat README"),
            "s1",
        ),
        &[],
    );
    let lines = wait_narrations(&d, 1);
    assert_eq!(
        lines[0]["text"],
        "I'm looking around the project to see what is there."
    );
    assert_eq!(
        (
            lines[0]["session_id"].clone(),
            lines[0]["events"].clone(),
            lines[0]["harness"].clone()
        ),
        (json!("s1"), json!(2), json!("claude-code"))
    );
    let pushed = client.wait_for("the narration frame", |f| f["type"] == "narration");
    assert_eq!(pushed["text"], lines[0]["text"]);
    let request = mock
        .requests()
        .into_iter()
        .find(|r| r["reply"]["kind"] == "side")
        .unwrap();
    let body = request["body"].to_string();
    assert!(body.contains("PreToolUse Bash: ls"), "{body}");
    assert!(!body.contains(secret), "redacted: {body}");

    // Two more events: the second line, asked with the first.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    d.forward(&in_session("git status", "s1"), &[]);
    d.forward(&in_session("git diff", "s1"), &[]);
    let lines = wait_narrations(&d, 2);
    assert_eq!(
        lines[1]["text"],
        "I'm checking what changed before I commit."
    );
    let status = d.status();
    assert_eq!(status["narrator"]["calls"], 2, "{status:#}");
    assert!(status["narrator"]["cost_usd"].as_f64().unwrap() > 0.0);
    let shown = std::process::Command::new(daemon::hookd_bin())
        .args(["status", "--socket", d.socket.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("narrator: 2 calls today"));
    // `hookd tail` prints them, `--kind narration` only them.
    let tail = std::process::Command::new(daemon::hookd_bin())
        .args([
            "tail",
            "--kind",
            "narration",
            "--log",
            d.log.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let tail = String::from_utf8_lossy(&tail.stdout);
    assert_eq!(tail.lines().count(), 2, "{tail}");
    assert!(
        tail.contains("s1       claude-code:NARRATION I'm checking what changed before I commit."),
        "{tail}"
    );
}

/// An ask waiting for a person is narrated at once (before `min_events`),
/// the line naming the pending event; the hook waits for the person, not
/// for the narrator.
#[test]
fn an_ask_waiting_is_narrated_at_once() {
    let mock = mock(json!([{"match": "", "text": "I'm pushing my fix so CI can run it."}]));
    let d = daemon(&mock, "min_events = 10\n");
    let mut client = RawClient::hello(&d.socket, "approver");
    assert_eq!(
        client.call(json!({"type": "subscribe", "filter": {"pending_only": true}}))["type"],
        "ok"
    );
    let waiting = daemon::forward_in_background(
        &d.socket,
        &in_session("git push origin main", "s2"),
        &["--timeout", "20"],
    );
    let event = client.wait_for("the pending event", |f| f["pending"] == true);
    let narration = client.wait_for("its narration", |f| f["type"] == "narration");
    assert_eq!(narration["pending_event_id"], event["event"]["id"]);
    assert_eq!(narration["text"], "I'm pushing my fix so CI can run it.");
    let decided =
        client.call(json!({"type": "decide", "event_id": event["event"]["id"], "verdict": "deny"}));
    assert_eq!(decided["type"], "ok");
    assert_eq!(permission_decision(&waiting.join().unwrap()), "deny");
}

/// A model slower than every hook: the hooks are answered meanwhile (the
/// line comes later); a spent day's budget stops the narrator.
#[test]
fn a_slow_model_never_delays_a_hook_and_the_budget_stops_it() {
    let mock = mock(json!([{"match": "", "text": "I'm working.", "delay_ms": 3000}]));
    let d = daemon(&mock, "min_events = 1\nmax_calls_per_day = 1\n");
    for i in 0..3 {
        let out = d.forward(&in_session(&format!("git push origin b{i}"), "s3"), &[]);
        assert_eq!(
            permission_decision(&out),
            "ask",
            "answered at once, nobody subscribed"
        );
    }
    assert!(narrations(&d).is_empty(), "the slow line is not there yet");
    let lines = wait_narrations(&d, 1);
    assert_eq!(lines.len(), 1);
    // The day's one call is spent: more events, no more calls.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    d.forward(&in_session("ls", "s3"), &[]);
    let status = d.wait_for_status("the budget refusal counted", |s| {
        s["narrator"]["over_budget"].as_u64().unwrap_or(0) >= 1
    });
    assert_eq!(status["narrator"]["calls"], 1, "{status:#}");
    let calls = mock
        .requests()
        .iter()
        .filter(|r| r["reply"]["kind"] == "side")
        .count();
    assert_eq!(calls, 1);
}

/// Off by default: no narration, no `narrator` in status.
#[test]
fn the_narrator_is_off_by_default() {
    let d = Daemon::start_with(DaemonOptions::default());
    for _ in 0..5 {
        d.forward(&in_session("ls", "s4"), &[]);
    }
    assert!(d.status().get("narrator").is_none());
    assert!(narrations(&d).is_empty());
}
