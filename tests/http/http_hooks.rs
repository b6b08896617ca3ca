//! `GET /metrics` (scraped by the real Prometheus) and `POST
//! /hook/claude-code` (answered as `hook-forwarder` would be): real daemon,
//! real forwarders, real sockets.

use crate::support::daemon;
use crate::support::http;
use crate::support::prometheus;

use std::time::Duration;

use daemon::{bash, fixture, Daemon, DaemonOptions};
use serde_json::Value;

const DENY_ECHO: &str = r#"
[[rule]]
id = "no-echo"
action = "deny"
tool = "Bash(echo:*)"
reason = "echo is not allowed here"
"#;

/// A daemon with [`DENY_ECHO`] listening for HTTP on a free loopback port;
/// returns it, the address and the bearer token.
fn daemon_with_http() -> (Daemon, String, String) {
    let daemon = Daemon::start_with(DaemonOptions {
        rules: Some(DENY_ECHO.into()),
        config: Some("[http]\nlisten = \"127.0.0.1:0\"\n".into()),
        ..DaemonOptions::default()
    });
    let listen = daemon.status()["http"]["listen"]
        .as_str()
        .expect("status.http.listen")
        .to_string();
    let token = std::fs::read_to_string(daemon.dir.path().join("config/hookd/http-token"))
        .unwrap()
        .trim()
        .to_string();
    (daemon, listen, token)
}

/// The value of the sample `series` in a metrics text.
fn sample<'a>(text: &'a str, series: &str) -> Option<&'a str> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.rsplit_once(' '))
        .find(|(s, _)| *s == series)
        .map(|(_, v)| v)
}

#[test]
fn metrics_need_the_token_and_count_what_forwarders_were_answered() {
    let (daemon, addr, token) = daemon_with_http();
    for _ in 0..3 {
        let out = daemon.forward(&bash("echo hi"), &[]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("deny"));
    }
    daemon.forward(&bash("ls"), &[]);

    assert_eq!(http::get(&addr, "/metrics", &[]).status, 401);
    let bearer = format!("Bearer {token}");
    let response = http::get(&addr, "/metrics", &[("Authorization", &bearer)]);
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(
        response.header("content-type"),
        Some("text/plain; version=0.0.4; charset=utf-8")
    );
    let text = &response.body;
    assert_eq!(
        sample(
            text,
            r#"hookd_decisions_total{event="PreToolUse",verdict="deny",source="rule"}"#
        ),
        Some("3"),
        "{text}"
    );
    assert_eq!(
        sample(
            text,
            r#"hookd_decisions_total{event="PreToolUse",verdict="none",source="default"}"#
        ),
        Some("1"),
        "{text}"
    );
    assert_eq!(sample(text, "hookd_events_total"), Some("4"));
    assert_eq!(
        sample(text, "hookd_decision_latency_seconds_count"),
        Some("4")
    );
    assert_eq!(sample(text, "hookd_pending"), Some("0"));
}

/// The real Prometheus scrapes the daemon with the bearer token, and its
/// own query API returns `hookd_decisions_total` with the right value.
#[test]
fn prometheus_scrapes_the_decisions() {
    if prometheus::binary().is_none() {
        daemon::skip_or_fail(
            "prometheus_scrapes_the_decisions",
            "needs Prometheus, and `prometheus` is not on PATH (Debian package `prometheus`; \
             scripts/test installs it)",
        );
        return;
    }
    let (daemon, addr, token) = daemon_with_http();
    for _ in 0..5 {
        daemon.forward(&bash("echo hi"), &[]);
    }
    let server = prometheus::Prometheus::scrape(&addr, &token);
    let query = r#"hookd_decisions_total{event="PreToolUse",verdict="deny",source="rule"}"#;
    let result = server.wait_for(query, Duration::from_secs(30), |r| !r.is_empty());
    assert_eq!(result.len(), 1, "{result:?}");
    assert_eq!(result[0]["metric"]["job"], "hookd");
    assert_eq!(result[0]["value"][1], "5", "{result:?}");
    // Two more decisions reach Prometheus at its next scrapes.
    daemon.forward(&bash("echo again"), &[]);
    daemon.forward(&bash("echo and again"), &[]);
    server.wait_for(query, Duration::from_secs(30), |r| {
        r.first().is_some_and(|s| s["value"][1] == "7")
    });
    let up = server.query("up");
    assert_eq!(up[0]["value"][1], "1", "the scrape succeeded: {up:?}");
}

#[test]
fn the_claude_code_route_answers_what_the_forwarder_prints() {
    let (daemon, addr, token) = daemon_with_http();
    let bearer = format!("Bearer {token}");
    for (input, blocks) in [
        (bash("echo hi"), true),
        (bash("ls"), false),
        (fixture("Stop.json"), false),
    ] {
        let body = serde_json::to_vec(&input).unwrap();
        let response = http::request(
            &addr,
            "POST",
            "/hook/claude-code?timeout=30",
            &[
                ("Authorization", &bearer),
                ("Content-Type", "application/json"),
            ],
            &body,
        );
        assert_eq!(response.status, 200, "{}", response.body);
        let forwarded = daemon.forward(&input, &[]);
        assert_eq!(
            response.body,
            String::from_utf8_lossy(&forwarded.stdout),
            "{input}"
        );
        assert_eq!(response.body.contains("\"deny\""), blocks, "{input}");
    }
    // Both transports' hooks are in the log, judged alike.
    let decisions: Vec<Value> = daemon
        .wait_log_lines(12)
        .into_iter()
        .filter(|l| l["type"] == "decision")
        .collect();
    assert_eq!(decisions.len(), 6, "{decisions:?}");

    let unauthorized = http::request(&addr, "POST", "/hook/claude-code", &[], b"{}");
    assert_eq!(unauthorized.status, 401);
    let bad_query = http::request(
        &addr,
        "POST",
        "/hook/claude-code?timeout=soon",
        &[("Authorization", &bearer)],
        b"{}",
    );
    assert_eq!(bad_query.status, 400);
    assert!(
        bad_query
            .body
            .contains("`timeout` is not a whole number of seconds"),
        "{}",
        bad_query.body
    );
}
