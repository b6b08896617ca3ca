//! OpenTelemetry export through the real daemon and forwarder: a receiver
//! in the test (tests/support/otlp.rs) decodes what the daemon sends with
//! the official OTLP definitions and checks the records and their
//! attributes, over `http/protobuf` and `http/json`; a collector that is
//! down, or answering 503, never touches the hooks, is counted in
//! `status`, and export resumes when it comes back.

use crate::support::daemon;
use crate::support::otlp;

use std::time::Duration;

use daemon::{fixture, Daemon, DaemonOptions};
use opentelemetry_proto::tonic::common::v1::any_value;
use otlp::{attr, attr_int, attr_str, attr_strings, Receiver};
use serde_json::Value;

const RULES: &str = "[[rule]]\nid = \"no-echo\"\naction = \"deny\"\ntool = \"Bash(echo:*)\"\nreason = \"no echo here\"\n";

/// Long enough for a few retries (1 s, 2 s, 4 s …) on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(30);

fn daemon_exporting_to(endpoint: &str, extra: &str) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(RULES.to_string()),
        config: Some(format!(
            "[otlp]\nendpoint = \"{endpoint}\"\ninterval = 0.05\n{extra}"
        )),
        env: vec![("OTLP_TEST_TENANT".into(), "tenant-7".into())],
        ..DaemonOptions::default()
    })
}

/// Forwards the PreToolUse fixture (`echo hello > out.txt`: denied by
/// `no-echo`) and checks that the hook got the deny.
fn denied_hook(d: &Daemon) {
    let out = d.forward(&fixture("PreToolUse.json"), &[]);
    assert!(out.status.success(), "{out:?}");
    let stdout: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        stdout["hookSpecificOutput"]["permissionDecision"], "deny",
        "{stdout}"
    );
}

fn otlp_status(d: &Daemon) -> Value {
    d.status()["otlp"].clone()
}

fn wait_status(d: &Daemon, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    daemon::poll_reporting(&format!("status.otlp to show {what}"), PATIENCE, || {
        let status = otlp_status(d);
        if done(&status) {
            return Ok(status);
        }
        Err(status.to_string())
    })
}

fn decision_point_and_observed_event_are_exported(protocol: &str) {
    let receiver = Receiver::start();
    let d = daemon_exporting_to(
        &receiver.endpoint(),
        &format!(
            "protocol = \"{protocol}\"\nservice_name = \"hookd-test\"\n\
             [otlp.headers]\nx-tenant = {{ env = \"OTLP_TEST_TENANT\" }}\n\
             [otlp.resource]\n\"deployment.environment.name\" = \"ci\"\n"
        ),
    );
    denied_hook(&d);
    let post = d.forward(&fixture("Notification.json"), &[]);
    assert!(post.status.success(), "{post:?}");

    let got = receiver.wait_for(PATIENCE, |r| {
        r.log_records().len() >= 4 && !r.spans().is_empty()
    });
    let expected_type = match protocol {
        "http/json" => "application/json",
        _ => "application/x-protobuf",
    };
    for request in &got.requests {
        assert_eq!(request.content_type, expected_type, "{request:?}");
        assert!(
            request
                .headers
                .iter()
                .any(|(n, v)| n == "x-tenant" && v == "tenant-7"),
            "the header read from the environment: {request:?}"
        );
    }
    let resource = got.logs[0].resource_logs[0].resource.as_ref().unwrap();
    assert_eq!(
        attr_str(&resource.attributes, "service.name"),
        Some("hookd-test")
    );
    assert_eq!(
        attr_str(&resource.attributes, "deployment.environment.name"),
        Some("ci")
    );

    // One span: the decision point (PreToolUse), not the observed event.
    let spans = got.spans();
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let span = spans[0];
    assert_eq!(span.name, "PreToolUse Bash");
    let a = &span.attributes;
    for (key, value) in [
        ("session.id", "1fce3faa-62dc-4336-ba9c-8494671dd902"),
        (
            "gen_ai.conversation.id",
            "1fce3faa-62dc-4336-ba9c-8494671dd902",
        ),
        ("prompt.id", "78c2655b-0522-4ddc-966c-038c0bd1064d"),
        ("gen_ai.tool.name", "Bash"),
        ("gen_ai.tool.call.id", "toolu_mock_0_1"),
        ("hookd.harness", "claude-code"),
        ("hookd.event", "PreToolUse"),
        ("hookd.verdict", "deny"),
        ("hookd.source", "rule"),
        ("hookd.reason", "no echo here"),
    ] {
        assert_eq!(attr_str(a, key), Some(value), "{key} in {a:#?}");
    }
    assert_eq!(
        attr_strings(a, "hookd.rule_ids"),
        Some(vec!["no-echo".to_string()])
    );
    assert_eq!(attr_int(a, "hookd.rules.generation"), Some(1));
    let latency_us = attr_int(a, "hookd.latency_us").expect("hookd.latency_us");
    assert!(latency_us >= 0);
    assert_eq!(
        span.end_time_unix_nano - span.start_time_unix_nano,
        latency_us as u64 * 1_000,
        "the span lasts from the hook's arrival to its decision"
    );

    // The log records: the event and the decision of each hook, in the
    // hook's trace; the decision carries the event's ids too.
    let log_lines = d.wait_log_lines(4);
    let records = got.log_records();
    let event_id = log_lines[0]["id"].as_str().unwrap();
    let in_span: Vec<_> = records
        .iter()
        .filter(|r| r.trace_id == span.trace_id && r.span_id == span.span_id)
        .collect();
    assert_eq!(
        in_span
            .iter()
            .map(|r| r.event_name.as_str())
            .collect::<Vec<_>>(),
        ["hookd.event", "hookd.decision"]
    );
    assert_eq!(
        uuid::Uuid::from_slice(&span.trace_id).unwrap().to_string(),
        event_id,
        "the trace id is the event id"
    );
    let decision = in_span[1];
    assert_eq!(decision.severity_text, "WARN");
    assert_eq!(
        attr_str(&decision.attributes, "hookd.verdict"),
        Some("deny")
    );
    assert_eq!(
        attr_str(&decision.attributes, "gen_ai.tool.call.id"),
        Some("toolu_mock_0_1")
    );
    // The body is the log line itself.
    let Some(any_value::Value::KvlistValue(body)) =
        decision.body.as_ref().and_then(|b| b.value.as_ref())
    else {
        panic!("the body is a key-value list: {decision:#?}");
    };
    assert!(matches!(
        attr(&body.values, "event_id"),
        Some(any_value::Value::StringValue(id)) if id == event_id
    ));
    let observed: Vec<_> = records
        .iter()
        .filter(|r| attr_str(&r.attributes, "hookd.event") == Some("Notification"))
        .collect();
    assert_eq!(observed.len(), 2, "the observed event and its decision");

    let status = wait_status(&d, "4 logs and 1 span", |s| {
        s["logs_exported"] == 4 && s["spans_exported"] == 1
    });
    assert_eq!(status["dropped"], 0, "{status}");
    assert_eq!(status["failures"], 0, "{status}");
    assert_eq!(status["protocol"], protocol);
}

#[test]
fn hooks_are_exported_as_logs_and_spans_over_http_protobuf() {
    decision_point_and_observed_event_are_exported("http/protobuf");
}

#[test]
fn hooks_are_exported_as_logs_and_spans_over_http_json() {
    decision_point_and_observed_event_are_exported("http/json");
}

#[test]
fn a_collector_down_or_failing_never_touches_a_hook_and_export_resumes() {
    // A port nobody listens on (yet).
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let d = daemon_exporting_to(&format!("http://127.0.0.1:{port}"), "");
    denied_hook(&d);
    let status = wait_status(&d, "a failure", |s| s["failures"].as_u64() >= Some(1));
    assert!(
        status["last_error"]
            .as_str()
            .is_some_and(|e| e.contains(&port.to_string())),
        "{status}"
    );
    // Hooks go on being answered while the exporter retries.
    for _ in 0..3 {
        denied_hook(&d);
    }
    assert_eq!(status["logs_exported"], 0);

    // The collector comes up: what waited is sent.
    let receiver = Receiver::start_on(port);
    receiver.wait_for(PATIENCE, |r| {
        r.log_records().len() >= 8 && r.spans().len() >= 4
    });
    wait_status(&d, "the records sent", |s| {
        s["logs_exported"] == 8 && s["spans_exported"] == 4 && s["queued"] == 0
    });

    // It answers 503 for a while: counted, retried, never lost.
    receiver.answer_with(503);
    let failures = otlp_status(&d)["failures"].as_u64().unwrap();
    denied_hook(&d);
    // Waited for by its error, not by the count alone: a CI run once saw
    // the count rise first with a "connection refused" although the
    // collector was up (not understood yet), before any 503.
    let status = wait_status(&d, "a 503", |s| {
        s["last_error"].as_str().is_some_and(|e| e.contains("503"))
    });
    assert!(status["failures"].as_u64() > Some(failures), "{status}");
    receiver.answer_with(200);
    receiver.wait_for(PATIENCE, |r| r.spans().len() >= 5);
    let status = wait_status(&d, "the batch retried", |s| s["logs_exported"] == 10);
    assert_eq!(status["dropped"], 0, "{status}");
    assert!(receiver.received().refused >= 1);
}

/// A port nobody listens on (yet).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The `hookd.log.seq` of every log record received, sorted; panics on a
/// record sent twice.
fn received_seqs(receiver: &Receiver) -> Vec<i64> {
    let received = receiver.received();
    let mut seqs: Vec<i64> = received
        .log_records()
        .iter()
        .map(|r| attr_int(&r.attributes, "hookd.log.seq").expect("hookd.log.seq"))
        .collect();
    seqs.sort_unstable();
    let before = seqs.len();
    seqs.dedup();
    assert_eq!(seqs.len(), before, "a record was sent twice: {seqs:?}");
    seqs
}

/// The `seq` of every event and decision line of the log (every file).
fn logged_seqs(log: &std::path::Path) -> Vec<i64> {
    let mut files = vec![log.to_path_buf()];
    for n in 1..20 {
        let rotated = std::path::PathBuf::from(format!("{}.{n}", log.display()));
        if rotated.exists() {
            files.push(rotated);
        }
    }
    let mut seqs: Vec<i64> = files
        .iter()
        .flat_map(|f| daemon::read_log(f))
        .filter(|l| l["type"] == "event" || l["type"] == "decision")
        .map(|l| l["seq"].as_i64().unwrap())
        .collect();
    seqs.sort_unstable();
    seqs
}

#[test]
fn a_collector_down_past_the_queue_loses_nothing_the_log_is_the_queue() {
    let port = free_port();
    // Once, 3 records waiting dropped the rest: now the log is the queue.
    let d = daemon_exporting_to(
        &format!("http://127.0.0.1:{port}"),
        "max_queue = 3\nmax_batch = 4\n",
    );
    for _ in 0..12 {
        denied_hook(&d);
    }
    let status = wait_status(&d, "failures and a backlog", |s| {
        s["failures"].as_u64() >= Some(2) && s["behind_lines"].as_u64() >= Some(20)
    });
    assert_eq!(status["dropped"], 0, "{status}");
    assert!(
        status["queued"].as_u64() <= Some(8),
        "one batch at most: {status}"
    );
    let text = std::process::Command::new(daemon::hookd_bin())
        .args(["status", "--socket"])
        .arg(&d.socket)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("otlp: http://127.0.0.1:") && l.contains("log lines behind")),
        "hookd status shows the exporter: {text}"
    );

    // The collector comes up: every record arrives, once.
    let receiver = Receiver::start_on(port);
    receiver.wait_for(PATIENCE, |r| {
        r.log_records().len() >= 24 && r.spans().len() >= 12
    });
    let status = wait_status(&d, "caught up", |s| {
        s["logs_exported"] == 24 && s["behind_lines"] == 0
    });
    assert_eq!(status["spans_exported"], 12, "{status}");
    assert_eq!(status["dropped"], 0, "{status}");
    assert_eq!(received_seqs(&receiver), logged_seqs(&d.log));
    // Batches of at most max_batch records.
    assert!(
        receiver
            .received()
            .logs
            .iter()
            .all(|r| r.resource_logs[0].scope_logs[0].log_records.len() <= 4),
        "batches of max_batch"
    );
    // The cursor file names the last line exported.
    let cursor: Value = serde_json::from_str(
        &std::fs::read_to_string(d.log.parent().unwrap().join("otlp.cursor")).unwrap(),
    )
    .unwrap();
    assert_eq!(cursor["seq"], status["cursor_seq"], "{cursor} {status}");
}

#[test]
fn a_restart_resumes_at_the_cursor_with_no_gap_and_no_copy() {
    let receiver = Receiver::start();
    let mut first = daemon_exporting_to(&receiver.endpoint(), "");
    for _ in 0..3 {
        denied_hook(&first);
    }
    wait_status(&first, "3 hooks exported", |s| s["spans_exported"] == 3);
    // The collector refuses (retryable) while the first daemon stops:
    // its last records are not sent, and stay in the log.
    receiver.answer_with(503);
    for _ in 0..2 {
        denied_hook(&first);
    }
    wait_status(&first, "a 503", |s| {
        s["last_error"].as_str().is_some_and(|e| e.contains("503"))
    });
    assert!(first.stop().success());
    let log = first.log.clone();
    assert_eq!(received_seqs(&receiver).len(), 6, "only the first 3 hooks");

    receiver.answer_with(200);
    let second = Daemon::start_with(DaemonOptions {
        rules: Some(RULES.to_string()),
        config: Some(format!(
            "[otlp]\nendpoint = \"{}\"\ninterval = 0.05\n",
            receiver.endpoint()
        )),
        log_path: Some(log.display().to_string()),
        ..DaemonOptions::default()
    });
    denied_hook(&second);
    receiver.wait_for(PATIENCE, |r| r.log_records().len() >= 12);
    wait_status(&second, "caught up", |s| {
        s["logs_exported"] == 6 && s["behind_lines"] == 0
    });
    // Every line of both runs, once: no gap at the restart, no copy.
    assert_eq!(received_seqs(&receiver), logged_seqs(&log));
    assert_eq!(receiver.received().spans().len(), 6);
    assert!(
        second
            .stderr()
            .contains("exporting the event log to OpenTelemetry after seq"),
        "{}",
        second.stderr()
    );
    drop(first);
}

#[test]
fn the_log_rotating_while_the_collector_is_down_loses_nothing() {
    let port = free_port();
    let d = daemon_exporting_to(
        &format!("http://127.0.0.1:{port}"),
        "max_batch = 5\n[log]\nmax_bytes = 4096\nkeep = 50\n[http]\nlisten = \"127.0.0.1:0\"\n",
    );
    for _ in 0..15 {
        denied_hook(&d);
    }
    wait_status(&d, "failures", |s| s["failures"].as_u64() >= Some(1));
    let rotated = std::path::PathBuf::from(format!("{}.3", d.log.display()));
    assert!(rotated.exists(), "the log rotated at least 3 times");
    let receiver = Receiver::start_on(port);
    receiver.wait_for(PATIENCE, |r| r.log_records().len() >= 30);
    let status = wait_status(&d, "caught up", |s| {
        s["logs_exported"] == 30 && s["behind_lines"] == 0
    });
    assert_eq!(status["lost"], 0, "{status}");
    assert_eq!(status["spans_exported"], 15, "{status}");
    assert_eq!(received_seqs(&receiver), logged_seqs(&d.log));

    // The same counters on /metrics.
    let listen = d.status()["http"]["listen"].as_str().unwrap().to_string();
    let token = std::fs::read_to_string(d.dir.path().join("config/hookd/http-token")).unwrap();
    let bearer = format!("Bearer {}", token.trim());
    let metrics = crate::support::http::get(&listen, "/metrics", &[("Authorization", &bearer)]);
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    let sample = |series: &str| -> Option<u64> {
        metrics
            .body
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.rsplit_once(' '))
            .find(|(s, _)| *s == series)
            .and_then(|(_, v)| v.parse().ok())
    };
    assert_eq!(
        sample("hookd_otlp_logs_exported_total"),
        Some(30),
        "{}",
        metrics.body
    );
    assert_eq!(sample("hookd_otlp_spans_exported_total"), Some(15));
    assert_eq!(sample("hookd_otlp_behind_lines"), Some(0));
    assert_eq!(sample("hookd_otlp_lost_total"), Some(0));
    assert_eq!(sample("hookd_otlp_dropped_total"), Some(0));
    assert!(sample("hookd_otlp_failures_total") >= Some(1));
    assert!(sample("hookd_otlp_behind_bytes").is_some());
}

#[test]
fn bad_otlp_configs_are_refused_naming_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[otlp]\nendpoint = \"https://otlp.example.com\"\nheaders = { authorization = \"Bearer sk-secret\" }\n",
    )
    .unwrap();
    let out = std::process::Command::new(daemon::hookd_bin())
        .args(["serve", "--socket"])
        .arg(dir.path().join("s.sock"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("otlp.headers.authorization"), "{stderr}");
    assert!(stderr.contains("{ env = "), "says what to write: {stderr}");
    assert!(
        !stderr.contains("sk-secret"),
        "never repeats the value: {stderr}"
    );

    std::fs::write(
        &config,
        "[otlp]\nendpoint = \"https://otlp.example.com\"\nheaders = { authorization = { env = \"HOOKD_TEST_UNSET_TOKEN\" } }\n",
    )
    .unwrap();
    let out = std::process::Command::new(daemon::hookd_bin())
        .args(["serve", "--socket"])
        .arg(dir.path().join("s.sock"))
        .arg("--config")
        .arg(&config)
        .env_remove("HOOKD_TEST_UNSET_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("headers.authorization") && stderr.contains("HOOKD_TEST_UNSET_TOKEN"),
        "names the header and its variable: {stderr}"
    );

    std::fs::write(
        &config,
        "[otlp]\nendpoint = \"http://collector.example.com:4318\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(daemon::hookd_bin())
        .args(["serve", "--socket"])
        .arg(dir.path().join("s.sock"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("otlp.endpoint") && stderr.contains("https://"),
        "{stderr}"
    );
}

#[test]
fn a_collector_that_never_answers_does_not_hold_up_hooks() {
    // Accepts connections and never reads or answers them.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let holder = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok((stream, _)) = listener.accept() {
                    held.push(stream);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let d = daemon_exporting_to(&format!("http://{addr}"), "timeout = 1\n");
    // Every hook is judged and answered (a stalled daemon would have the
    // forwarder print its fallback, which allows).
    for _ in 0..5 {
        denied_hook(&d);
    }
    let status = wait_status(&d, "a timed-out request", |s| {
        s["failures"].as_u64() >= Some(1)
    });
    assert!(
        status["last_error"]
            .as_str()
            .is_some_and(|e| e.to_lowercase().contains("timeout") || e.contains("timed out")),
        "{status}"
    );
    assert_eq!(d.counter("fallbacks"), 0);
    denied_hook(&d);
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    holder.join().unwrap();
}

#[test]
fn a_decision_exported_after_a_restart_still_gets_its_events_span() {
    let receiver = Receiver::start();
    let rules = format!(
        "{RULES}[[rule]]\nid = \"ask-npm\"\naction = \"ask\"\ntool = \"Bash(npm test*)\"\nreason = \"tests\"\n"
    );
    let options = |log: Option<String>| DaemonOptions {
        rules: Some(rules.clone()),
        config: Some(format!(
            "[otlp]\nendpoint = \"{}\"\ninterval = 0.05\n",
            receiver.endpoint()
        )),
        log_path: log,
        ..DaemonOptions::default()
    };
    let mut first = Daemon::start_with(options(None));
    let mut approver = daemon::RawClient::hello(&first.socket, "approve");
    let ok = approver.call(serde_json::json!({"type": "subscribe", "filter": {}}));
    assert_eq!(ok["type"], "ok", "{ok}");
    let hook = daemon::forward_in_background(&first.socket, &daemon::bash("npm test"), &[]);
    let pending = approver.wait_for("the pending npm test", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    // The event is exported (the cursor passes it) while it waits.
    wait_status(&first, "the event exported", |s| s["logs_exported"] == 1);
    // Its decision is not: the collector refuses until the daemon stops.
    receiver.answer_with(503);
    let reply = approver.call(serde_json::json!({
        "type": "decide", "event_id": pending["short_id"], "verdict": "deny"
    }));
    assert_eq!(reply["type"], "ok", "{reply}");
    hook.join().unwrap();
    wait_status(&first, "a 503", |s| {
        s["last_error"].as_str().is_some_and(|e| e.contains("503"))
    });
    drop(approver);
    assert!(first.stop().success());
    let cursor: Value = serde_json::from_str(
        &std::fs::read_to_string(first.log.parent().unwrap().join("otlp.cursor")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        cursor["replay_from"], cursor["seq"],
        "the event waited at the cursor: {cursor}"
    );
    assert!(receiver.received().spans().is_empty());

    receiver.answer_with(200);
    let second = Daemon::start_with(options(Some(first.log.display().to_string())));
    let received = receiver.wait_for(PATIENCE, |r| !r.spans().is_empty());
    let span = received.spans()[0].clone();
    assert_eq!(span.name, "PreToolUse Bash", "{span:?}");
    assert_eq!(attr_str(&span.attributes, "hookd.verdict"), Some("deny"));
    assert_eq!(
        attr_str(&span.attributes, "gen_ai.tool.name"),
        Some("Bash"),
        "the event's attributes, read again from the log"
    );
    wait_status(&second, "caught up", |s| s["behind_lines"] == 0);
    // The event's record was not sent again.
    assert_eq!(received_seqs(&receiver), logged_seqs(&first.log));
}

#[test]
fn an_unreadable_cursor_file_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[otlp]\nendpoint = \"http://127.0.0.1:9\"\n").unwrap();
    let cursor = dir.path().join("otlp.cursor");
    std::fs::write(&cursor, "{\"seq\": \"seven\"}").unwrap();
    let out = std::process::Command::new(daemon::hookd_bin())
        .args(["serve", "--socket"])
        .arg(dir.path().join("s.sock"))
        .arg("--log")
        .arg(dir.path().join("events.jsonl"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&cursor.display().to_string()) && stderr.contains("delete it"),
        "names the file and what to do: {stderr}"
    );
}

/// The `hookd-otlp` thread's voluntary context switches (Linux).
fn exporter_switches(pid: u32) -> u64 {
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let task = task.unwrap().path();
        let comm = std::fs::read_to_string(task.join("comm")).unwrap_or_default();
        if comm.trim() == "hookd-otlp" {
            let status = std::fs::read_to_string(task.join("status")).unwrap();
            return status
                .lines()
                .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
        }
    }
    panic!("no hookd-otlp thread in {pid}");
}

#[test]
fn a_caught_up_exporter_sleeps_until_the_next_hook() {
    let receiver = Receiver::start();
    let d = daemon_exporting_to(&receiver.endpoint(), "");
    denied_hook(&d);
    wait_status(&d, "caught up", |s| {
        s["spans_exported"] == 1 && s["behind_lines"] == 0
    });
    // It polls once more after the read that found the lines, then
    // sleeps in recv: no wake-up while no hook comes.
    std::thread::sleep(Duration::from_millis(300));
    let before = exporter_switches(d.pid());
    std::thread::sleep(Duration::from_millis(700));
    assert_eq!(exporter_switches(d.pid()), before, "the idle exporter woke");
    // The next hook wakes it.
    denied_hook(&d);
    wait_status(&d, "the next hook", |s| s["spans_exported"] == 2);
    assert!(exporter_switches(d.pid()) > before);
}
