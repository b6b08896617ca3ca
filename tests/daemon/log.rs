//! The event log through the real daemon: line shapes, redaction, rotation
//! while `hookd tail --follow` reads, torn-line repair, an unwritable log.

use crate::support::daemon;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use daemon::{fixture, poll_until, Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};

/// Replaces what changes from run to run with placeholders.
fn mask(mut line: Value) -> Value {
    for key in ["id", "decision_id", "event_id"] {
        if line
            .get(key)
            .is_some_and(|v| v.as_str().is_some_and(|s| uuid::Uuid::parse_str(s).is_ok()))
        {
            line[key] = json!("<uuid>");
        }
    }
    if line.get("received_at").is_some() {
        line["received_at"] = json!("<time>");
    }
    if line.get("latency_us").is_some_and(Value::is_u64) {
        line["latency_us"] = json!("<us>");
    }
    // The hash chain covers the ids and times: `seq` stays.
    if line.get("chain").is_some_and(Value::is_string) {
        line["chain"] = json!("<sha256>");
    }
    line
}

#[test]
fn log_lines_have_the_documented_shape() {
    let d = Daemon::start();
    d.forward(&fixture("PreToolUse.json"), &[]);
    d.forward(&fixture("SessionEnd.json"), &[]);
    let lines: Vec<Value> = d.wait_log_lines(4).into_iter().map(mask).collect();
    let golden =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/log/lines.jsonl");
    let actual: String = lines.iter().map(|l| format!("{l}\n")).collect();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &actual).unwrap();
    }
    let expected =
        std::fs::read_to_string(&golden).expect("golden log lines (UPDATE_GOLDEN=1 writes them)");
    assert_eq!(actual, expected);
}

#[test]
fn secrets_are_redacted_in_the_log_and_for_subscribers_that_ask() {
    let d = Daemon::start();
    let mut raw = RawClient::hello(&d.socket, "raw");
    assert_eq!(raw.call(json!({"type": "subscribe"}))["type"], "ok");
    let mut careful = RawClient::hello(&d.socket, "careful");
    assert_eq!(
        careful.call(json!({"type": "subscribe", "redact": true}))["type"],
        "ok"
    );

    let secret = "sk-ant-api03-0123456789abcdefghij";
    let mut input = fixture("PreToolUse.json");
    input["tool_input"]["command"] = json!(format!(
        "curl -H 'x-api-key: {secret}' https://api.example.com"
    ));
    let out = d.forward(&input, &[]);
    assert_eq!(out.status.code(), Some(0));

    // The writer is asynchronous (and creates the file at its first line).
    d.wait_log_lines(2);
    let text = std::fs::read_to_string(&d.log).unwrap();
    assert!(!text.contains(secret), "secret reached the log: {text}");
    assert!(text.contains("x-api-key: [REDACTED]"), "{text}");

    let seen_raw = raw.wait_for("event", |f| f["type"] == "event");
    assert!(seen_raw["event"]["input"]["tool_input"]["command"]
        .as_str()
        .unwrap()
        .contains(secret));
    let seen = careful.wait_for("event", |f| f["type"] == "event");
    let command = seen["event"]["input"]["tool_input"]["command"]
        .as_str()
        .unwrap();
    assert!(
        !command.contains(secret) && command.contains("[REDACTED]"),
        "{command}"
    );
}

/// Secrets the log line's JSON spells with escapes are hidden as those
/// written plainly, and a clean input's line is the input as it came: the
/// one scan of the line that finds nearly every hook clean never vouches
/// for a line with an escape (a newline in a string is `\n` there, which a
/// pattern's `\s` does not match), and the walk then reads the strings
/// unescaped. A secret the frame spells with `\u` escapes is plain in the
/// line, which is written from the parsed input.
#[test]
fn secrets_written_with_json_escapes_are_redacted() {
    let d = Daemon::start_with(DaemonOptions {
        config: Some("[redact]\npatterns = ['pin:\\s+(?P<secret>[0-9]{4})']\n".into()),
        ..DaemonOptions::default()
    });
    let mut hooks = RawClient::hello(&d.socket, "escapes");
    let mut input = fixture("PreToolUse.json");
    input["tool_input"]["command"] = json!("echo SECRET");
    let escaped = input
        .to_string()
        .replace("SECRET", r"\u0073k-ant-api03-0123456789abcdefghij");
    let frame = format!(r#"{{"type":"hook","id":"h1","deadline_ms":5000,"input":{escaped}}}"#);
    hooks.send_raw(format!("{frame}\n").as_bytes()).unwrap();
    assert_eq!(hooks.recv().unwrap()["type"], "hook_result");
    let mut pin = fixture("PreToolUse.json");
    pin["tool_input"]["command"] = json!("unlock --pin:\n4711 && ls");
    hooks.send(&json!({"type": "hook", "id": "h2", "deadline_ms": 5000, "input": pin}));
    assert_eq!(hooks.recv().unwrap()["type"], "hook_result");
    let mut clean = fixture("PreToolUse.json");
    clean["tool_input"]["command"] = json!("echo \"quoted\" && ls");
    hooks.send(&json!({"type": "hook", "id": "h3", "deadline_ms": 5000, "input": clean}));
    assert_eq!(hooks.recv().unwrap()["type"], "hook_result");

    let lines = d.wait_log_lines(6);
    let text = std::fs::read_to_string(&d.log).unwrap();
    assert!(
        !text.contains("0123456789abcdefghij"),
        "secret reached the log: {text}"
    );
    assert!(!text.contains("4711"), "secret reached the log: {text}");
    assert_eq!(
        lines[0]["input"]["tool_input"]["command"],
        "echo [REDACTED]"
    );
    assert_eq!(
        lines[2]["input"]["tool_input"]["command"],
        "unlock --pin:\n[REDACTED] && ls"
    );
    assert_eq!(lines[4]["input"], clean);
}

/// A secret used as a JSON object's key, and one in the event's `cwd`
/// (which the line also carries on its own, beside the input), are hidden
/// in the log line, which is also what subscribers that ask, pushes and
/// OTLP export get.
#[test]
fn secrets_in_keys_and_in_the_cwd_are_redacted() {
    let d = Daemon::start();
    let mut careful = RawClient::hello(&d.socket, "careful");
    assert_eq!(
        careful.call(json!({"type": "subscribe", "redact": true}))["type"],
        "ok"
    );
    let secret = "sk-ant-api03-0123456789abcdefghij";
    let mut input = fixture("PreToolUse.json");
    input["cwd"] = json!(format!("/home/dev/{secret}/project"));
    input["tool_input"]["cache"] = json!({ secret: "a key's entry" });
    let out = d.forward(&input, &[]);
    assert_eq!(out.status.code(), Some(0));

    let lines = d.wait_log_lines(2);
    let text = std::fs::read_to_string(&d.log).unwrap();
    assert!(!text.contains(secret), "secret reached the log: {text}");
    assert_eq!(lines[0]["cwd"], "/home/dev/[REDACTED]/project");
    assert_eq!(lines[0]["input"]["cwd"], "/home/dev/[REDACTED]/project");
    assert_eq!(
        lines[0]["input"]["tool_input"]["cache"],
        json!({"[REDACTED]": "a key's entry"})
    );
    let seen = careful.wait_for("event", |f| f["type"] == "event");
    assert!(!seen.to_string().contains(secret), "{seen}");
}

/// A frame with a mistyped field holding a secret, as a connection's first
/// frame and as a client's, and a hook input with one: the error frame
/// names the field and what was expected, and neither it nor the daemon's
/// stderr (the journal) quotes the value.
#[test]
fn a_mistyped_secret_is_echoed_neither_to_the_peer_nor_to_stderr() {
    let d = Daemon::start();
    let secret = "sk-ant-api03-0123456789abcdefghij";

    let mut first = RawClient::connect(&d.socket);
    first.send(&json!({"type": "hook", "id": "h", "deadline_ms": secret, "input": {}}));
    let error = first.recv().expect("an error frame");
    assert_eq!(error["code"], "invalid_frame", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("`deadline_ms`: invalid type: expected u64, found string"),
        "{message}"
    );

    let mut client = RawClient::hello(&d.socket, "typo");
    client.send(&json!({"type": "subscribe", "redact": secret}));
    let error = client.recv().expect("an error frame");
    assert_eq!(error["code"], "invalid_frame", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("`redact`: invalid type: expected a boolean, found string"),
        "{error}"
    );

    // A hook input with a mistyped field: judged, and its problem noted;
    // and one whose event name is the secret.
    let mut stop = fixture("Stop.json");
    stop["stop_hook_active"] = json!(secret);
    assert_eq!(d.forward(&stop, &[]).status.code(), Some(0));
    let named = json!({"hook_event_name": secret, "session_id": "s"});
    assert_eq!(d.forward(&named, &[]).status.code(), Some(0));

    daemon::poll_until(
        "the daemon's notes on both frames and the input",
        Duration::from_secs(10),
        || {
            let stderr = d.stderr();
            stderr.contains("bad first frame")
                && stderr.contains("bad frame;")
                && stderr.contains("not fully typed")
                && stderr.contains("event=unknown")
        },
    );
    let stderr = d.stderr();
    assert!(!stderr.contains(secret), "the daemon's stderr: {stderr}");
    assert!(stderr.contains("deadline_ms"), "{stderr}");
}

/// What a client decides (its reason, its context, the input it rewrote) is
/// redacted in the log and for subscribers that asked, like an input; the
/// forwarder still gets it verbatim, and so do subscribers that did not ask.
#[test]
fn client_decisions_are_redacted_in_the_log() {
    let d = Daemon::start_with(DaemonOptions {
        config: Some("[decisions]\nroute_undecided = true\ntimeout = 20\n".into()),
        ..DaemonOptions::default()
    });
    let mut approver = RawClient::hello(&d.socket, "approver");
    let ok = approver.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok", "{ok}");
    let mut careful = RawClient::hello(&d.socket, "careful");
    assert_eq!(
        careful.call(json!({"type": "subscribe", "redact": true}))["type"],
        "ok"
    );
    let mut input = fixture("PreToolUse.json");
    input["tool_input"]["command"] = json!("psql -h db");
    let fwd = daemon::forward_in_background(&d.socket, &input, &[]);
    let event = approver.wait_for("a pending event", |f| {
        f["type"] == "event" && f["pending"] == true
    })["event"]
        .clone();
    let reply = approver.call(json!({
        "type": "decide", "event_id": event["id"], "verdict": "allow",
        "reason": "fine with PGPASSWORD=hunter2-reason",
        "additional_context": "the db is at postgres://app:hunter2-context@db/x",
        "updated_input": {"command": "psql -h db", "password": "hunter2-input"},
    }));
    assert_eq!(reply["type"], "ok", "{reply}");
    let out = fwd.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("hunter2-input"),
        "Claude Code gets the input as decided: {stdout}"
    );

    let lines = d.wait_log_lines(2);
    let text = std::fs::read_to_string(&d.log).unwrap();
    assert!(
        !text.contains("hunter2"),
        "a client's secret reached the log: {text}"
    );
    let decision = lines.iter().find(|l| l["type"] == "decision").unwrap();
    assert_eq!(decision["reason"], "fine with PGPASSWORD=[REDACTED]");
    assert_eq!(decision["updated_input"]["password"], "[REDACTED]");
    let seen = careful.wait_for("decision", |f| f["type"] == "decision");
    assert!(!seen.to_string().contains("hunter2"), "{seen}");
    let raw = approver.wait_for("decision", |f| f["type"] == "decision");
    assert_eq!(
        raw["decision"]["updated_input"]["password"], "hunter2-input",
        "{raw}"
    );
}

#[test]
fn custom_redaction_patterns_from_the_config() {
    let d = Daemon::start_with(DaemonOptions {
        config: Some("[redact]\npatterns = ['ticket-(?P<secret>[0-9]{6})']\n".into()),
        ..DaemonOptions::default()
    });
    let mut input = fixture("UserPromptSubmit.json");
    input["prompt"] = json!("look at ticket-123456 please");
    d.forward(&input, &[]);
    let lines = d.wait_log_lines(1);
    assert_eq!(
        lines[0]["input"]["prompt"],
        "look at ticket-[REDACTED] please"
    );
}

#[test]
fn rotation_while_tailing_loses_nothing() {
    let d = Daemon::start_with(DaemonOptions {
        config: Some("[log]\nmax_bytes = 4000\nkeep = 20\n".into()),
        ..DaemonOptions::default()
    });
    // A first hook, so that the log exists and tail holds it open from the
    // start (a tail started before the file exists waits for it to appear).
    assert!(d.forward(&fixture("Stop.json"), &[]).stderr.is_empty());
    d.wait_log_lines(2);
    let mut tail = Command::new(daemon::hookd_bin())
        .args(["tail", "--follow", "--json", "--log"])
        .arg(&d.log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // tail follows the file it opened: rotating before it has one would
    // test nothing.
    daemon::poll_until("tail to open the log", Duration::from_secs(10), || {
        daemon::has_open(tail.id(), &d.log)
    });
    let mut stdout = tail.stdout.take().unwrap();
    let (seen_tx, seen) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        for line in BufReader::new(&mut stdout).lines() {
            out.push_str(&line.unwrap());
            out.push('\n');
            let _ = seen_tx.send(());
        }
        out
    });
    let mut hooks = RawClient::hello(&d.socket, "load");
    for i in 0..40 {
        hooks.send(&json!({"type": "hook", "id": format!("h{i}"), "deadline_ms": 5000, "input": fixture("Stop.json")}));
        assert_eq!(hooks.recv().unwrap()["type"], "hook_result");
        std::thread::sleep(Duration::from_millis(15));
    }
    let status = hooks.call(json!({"type": "status"}));
    let rotations = status["result"]["counters"]["log_rotations"]
        .as_u64()
        .unwrap();
    assert!(
        rotations >= 3,
        "the test must rotate several times: {status}"
    );
    // tail has caught up once it printed all 82 lines (an event and a
    // decision per hook); a line printed twice would make it 82 early and
    // fail the count below.
    let deadline = Instant::now() + Duration::from_secs(20);
    for _ in 0..82 {
        let left = deadline.saturating_duration_since(Instant::now());
        if seen.recv_timeout(left).is_err() {
            break;
        }
    }
    let _ = Command::new("kill").arg(tail.id().to_string()).status();
    let _ = tail.wait();
    let out = reader.join().unwrap();
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let events = lines.iter().filter(|l| l["type"] == "event").count();
    let decisions = lines.iter().filter(|l| l["type"] == "decision").count();
    assert_eq!(
        (events, decisions),
        (41, 41),
        "tail lost lines across {rotations} rotations"
    );
}

#[test]
fn a_torn_last_line_is_repaired_at_start_and_skipped_by_readers() {
    let torn =
        "{\"type\":\"event\",\"id\":\"01a2010b-e61b-7309-aac2-2fa4573d7457\",\"kind\":\"Stop\"";
    let good = "{\"type\":\"event\",\"id\":\"01a2010b-e61b-7309-aac2-000000000001\",\"received_at\":\"2026-11-22T02:00:00.000000Z\",\"harness\":\"claude-code\",\"kind\":\"Stop\",\"input\":{}}\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crashed.jsonl");
    std::fs::write(&file, format!("{good}{torn}")).unwrap();
    let out = Command::new(daemon::hookd_bin())
        .args(["tail", "--json", "--log"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        good,
        "readers skip the torn line"
    );

    let d = Daemon::start_with(DaemonOptions {
        log_prefill: Some(format!("{good}{torn}")),
        ..DaemonOptions::default()
    });
    d.forward(&fixture("Stop.json"), &[]);
    let text = daemon::poll_last(
        Duration::from_secs(5),
        Duration::from_millis(10),
        || std::fs::read_to_string(&d.log).unwrap(),
        |text| text.lines().count() >= 3,
    );
    assert!(text.starts_with(good));
    assert!(!text.contains(torn), "torn line still there:\n{text}");
    for line in text.lines() {
        serde_json::from_str::<Value>(line).unwrap_or_else(|e| panic!("{e}: {line}"));
    }
}

#[test]
fn a_torn_last_line_is_repaired_at_start_even_by_a_daemon_that_logs_nothing() {
    let good = "{\"type\":\"event\",\"id\":\"01a2010b-e61b-7309-aac2-000000000001\",\"received_at\":\"2026-11-22T02:00:00.000000Z\",\"harness\":\"claude-code\",\"kind\":\"Stop\",\"input\":{}}\n";
    let torn = "{\"type\":\"event\",\"id\":\"01a2";
    let d = Daemon::start_with(DaemonOptions {
        log_prefill: Some(format!("{good}{torn}")),
        ..DaemonOptions::default()
    });
    // No hook, no client: the start alone repairs it. Cutting the torn
    // line comes before the line that says so: wait for that line (and
    // the warning), not only for the file to end with a newline.
    poll_until("the torn line repaired", Duration::from_secs(10), || {
        std::fs::read_to_string(&d.log)
            .is_ok_and(|text| text.ends_with('\n') && text.contains("\"log_repaired\""))
            && d.stderr().contains("removed a torn last line")
    });
    let lines = d.log_lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[1]["type"], "log_repaired", "{lines:?}");
    assert_eq!(lines[1]["removed_bytes"], torn.len(), "{lines:?}");
    assert!(
        d.stderr().contains("removed a torn last line"),
        "{}",
        d.stderr()
    );
}

#[test]
fn an_unwritable_log_never_fails_a_decision() {
    // A regular file where the log's directory should be: no open can work,
    // even as root.
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("blocker"), "").unwrap();
    let d = Daemon::start_with(DaemonOptions {
        log_prefill: None,
        log_path: Some(
            elsewhere
                .path()
                .join("blocker/events.jsonl")
                .display()
                .to_string(),
        ),
        ..DaemonOptions::default()
    });
    // The daemon is up although its log directory cannot exist.
    for _ in 0..3 {
        let out = d.forward(&fixture("PreToolUse.json"), &["--fail-closed"]);
        assert_eq!(out.status.code(), Some(0));
        assert!(
            out.stderr.is_empty(),
            "fell back: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let mut c = RawClient::hello(&d.socket, "status");
    daemon::poll_reporting("a log error counted", Duration::from_secs(5), || {
        let status = c.call(json!({"type": "status"}));
        let errors = status["result"]["counters"]["log_errors"].as_u64().unwrap();
        if errors > 0 {
            return Ok(());
        }
        Err(status.to_string())
    });
    // Once, at start (the writer opens the log then), not per batch.
    assert_eq!(
        d.stderr().matches("cannot open the event log").count(),
        1,
        "{}",
        d.stderr()
    );
    assert!(
        !d.stderr().contains("event log write failed"),
        "{}",
        d.stderr()
    );
}

/// A PostToolUse input with `kib` KiB of tool output.
fn post_tool_use(kib: usize) -> Value {
    let mut input = fixture("PostToolUse.json");
    input["tool_response"]["stdout"] = Value::String("o".repeat(kib * 1024));
    input
}

#[test]
fn a_stalled_log_disk_drops_lines_keeps_answering_and_lets_sigterm_finish() {
    const BUDGET: u64 = 1024 * 1024;
    // The log is a FIFO nobody reads: once the pipe is full the writer
    // blocks, as on a disk that stopped taking writes.
    let mut d = Daemon::start_with(DaemonOptions {
        log_fifo: true,
        config: Some(format!("[log]\nqueue_bytes = {BUDGET}\n")),
        ..DaemonOptions::default()
    });
    let idle_rss = d.rss_kib();
    let mut hooks = RawClient::hello(&d.socket, "load");
    let input = post_tool_use(256);
    // 160 hooks of 256 KiB: 80 MiB of log lines.
    for i in 0..160 {
        hooks.send(
            &json!({"type": "hook", "id": format!("h{i}"), "deadline_ms": 5000, "input": input}),
        );
        assert_eq!(hooks.recv().expect("hook_result")["type"], "hook_result");
    }
    let status = hooks.call(json!({"type": "status"}))["result"].clone();
    let counters = &status["counters"];
    assert!(
        counters["log_queued_bytes"].as_u64().unwrap() <= BUDGET + 300 * 1024,
        "{status}"
    );
    // Of the 160 event lines about 4 fit in the budget.
    assert!(counters["log_dropped"].as_u64().unwrap() > 100, "{status}");
    assert_eq!(counters["decisions"], 160);
    let grown_mib = d.rss_kib().saturating_sub(idle_rss) / 1024;
    assert!(grown_mib < 30, "RSS grew by {grown_mib} MiB");
    drop(hooks);

    let status = d.stop();
    assert_eq!(status.code(), Some(0), "{}", d.stderr());
    assert!(
        d.stderr().contains("queued lines were not written"),
        "{}",
        d.stderr()
    );
}

#[test]
fn a_full_disk_reports_the_torn_line_once_per_streak() {
    // A file size limit plays the full disk: every write past it fails
    // (EFBIG, the signal ignored) after writing what fits, so each retry
    // tears a line that the next one repairs.
    let d = Daemon::start_with(DaemonOptions {
        shell: Some("trap '' XFSZ\nulimit -f 2048".into()),
        env: vec![("RUST_LOG".into(), "hookd=info".into())],
        ..DaemonOptions::default()
    });
    let mut hooks = RawClient::hello(&d.socket, "load");
    let input = post_tool_use(8);
    let mut i = 0;
    // Each probe sends 50 hooks, then reads the counter.
    daemon::poll_reporting("the log to fill up", Duration::from_secs(30), || {
        for _ in 0..50 {
            hooks.send(
                &json!({"type": "hook", "id": format!("h{i}"), "deadline_ms": 5000, "input": input}),
            );
            assert_eq!(hooks.recv().expect("hook_result")["type"], "hook_result");
            i += 1;
        }
        let status = hooks.call(json!({"type": "status"}))["result"].clone();
        if status["counters"]["log_errors"].as_u64().unwrap() >= 5 {
            return Ok(());
        }
        Err(status.to_string())
    });
    let stderr = d.stderr();
    assert_eq!(
        stderr.matches("removed a torn last line").count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("event log write failed").count(),
        1,
        "{stderr}"
    );
}

/// `hookd tail --follow` under rotations far faster than it polls: the
/// daemon's own log writer (`EventLog`, tiny `max_bytes`) rotates hundreds of
/// times a second while tail reads. Every line arrives once, in order.
#[test]
fn fast_rotation_while_tailing_loses_and_repeats_nothing() {
    use hookd::config::LogConfig;
    use hookd::daemon::log::EventLog;

    const LINES: usize = 3000;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    // ~5 lines per file (each sealed with its `seq` and `chain`, after the
    // file's `chain_start`): about 600 rotations; `keep` is large enough
    // that no file is deleted before tail could read it. Each line is a
    // minimal event record (tail prints only what it can read), numbered by
    // the last digits of its id.
    let config = LogConfig {
        max_bytes: 1400,
        keep: 700,
        ..LogConfig::default()
    };
    let line = |n: usize| {
        format!(
            "{{\"type\":\"event\",\"id\":\"01900000-0000-7000-8000-{n:012}\",\"received_at\":\"\",\"harness\":\"\",\"kind\":\"\",\"input\":0}}\n"
        )
    };
    let log = EventLog::open(&path, &config);
    log.push(line(0).into());
    daemon::poll_until(
        "the log writer to create the file",
        Duration::from_secs(10),
        || path.exists(),
    );
    let mut tail = Command::new(daemon::hookd_bin())
        .args(["tail", "--follow", "--json", "--log"])
        .arg(&path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = tail.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 64 * 1024];
        let mut text = String::new();
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 {
                break;
            }
            text.push_str(std::str::from_utf8(&buf[..n]).unwrap());
            let _ = tx.send(text.lines().count());
        }
        text
    });
    daemon::poll_until("tail to open the log", Duration::from_secs(10), || {
        daemon::has_open(tail.id(), &path)
    });
    // One line at a time: the writer batches whatever is queued, and a
    // loaded machine would otherwise merge many lines into one write and
    // rotate far less. Waiting for each line to be written keeps the
    // rotation count the same on any machine (~7 lines per file), while
    // still rotating many times within one of tail's polls.
    let written = |log: &EventLog| {
        log.counters()
            .written
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    for n in 1..LINES {
        log.push(line(n).into());
        let deadline = Instant::now() + Duration::from_secs(10);
        while written(&log) < n as u64 + 1 {
            assert!(Instant::now() < deadline, "line {n} was never written");
            std::thread::yield_now();
        }
    }
    log.close();
    let rotations = log
        .counters()
        .rotations
        .load(std::sync::atomic::Ordering::Relaxed);
    assert!(
        rotations as usize > LINES / 10,
        "the test must rotate fast: {rotations} rotations"
    );
    // A last line, written behind the writer's back once it has closed:
    // tail reads in order, so once it prints this one, any line it would
    // repeat has been printed already.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(line(LINES).as_bytes())
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while let Ok(count) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        if count > LINES {
            break;
        }
    }
    let _ = Command::new("kill").arg(tail.id().to_string()).status();
    let _ = tail.wait();
    let text = reader.join().unwrap();
    let seen: Vec<usize> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["id"].as_str().unwrap()[24..].parse().unwrap()
        })
        .collect();
    let missing: Vec<usize> = (0..=LINES).filter(|n| !seen.contains(n)).collect();
    let repeated = (seen.len() + missing.len()).saturating_sub(LINES + 1);
    let in_order: Vec<usize> = (0..=LINES).collect();
    assert!(
        seen == in_order,
        "{rotations} rotations: tail printed {} lines for {} written; \
         {} missing (first: {:?}), {repeated} repeated",
        seen.len(),
        LINES + 1,
        missing.len(),
        &missing[..missing.len().min(20)]
    );
}

/// The daemon's log writer thread (`hookd-log`): its `/proc` task
/// directory, once the thread is there (it may start after the socket).
#[cfg(target_os = "linux")]
fn log_writer_task(pid: u32) -> std::path::PathBuf {
    let find = || {
        std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .filter_map(|task| Some(task.ok()?.path()))
            .find(|task| {
                std::fs::read_to_string(task.join("comm")).is_ok_and(|c| c.trim() == "hookd-log")
            })
    };
    poll_until("the hookd-log thread", Duration::from_secs(10), || {
        find().is_some()
    });
    find().unwrap()
}

/// Voluntary and involuntary context switches of one thread so far.
#[cfg(target_os = "linux")]
fn switches_of(task: &std::path::Path) -> u64 {
    std::fs::read_to_string(task.join("status"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("ctxt_switches"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum()
}

/// Parked until the next line: blocked in a futex wait, not in the
/// nanosleep of a poll.
#[cfg(target_os = "linux")]
fn parked(task: &std::path::Path) -> bool {
    std::fs::read_to_string(task.join("wchan")).is_ok_and(|w| w.contains("futex"))
}

#[cfg(target_os = "linux")]
#[test]
fn an_isolated_hook_costs_the_log_writer_a_few_wake_ups() {
    // A Claude Code session sends a hook every few seconds. The writer used
    // to poll its queue every millisecond for ~100 ms after each line (about
    // 100 wake-ups a hook); it now lingers only while lines keep coming.
    let d = Daemon::start();
    let task = log_writer_task(d.pid());
    let hooks = 10;
    let mut total = 0;
    for i in 1..=hooks {
        poll_until("the log writer parked", Duration::from_secs(10), || {
            parked(&task)
        });
        let before = switches_of(&task);
        let out = d.forward(&fixture("PreToolUse.json"), &[]);
        assert!(out.status.success(), "{out:?}");
        d.wait_decisions(i);
        poll_until(
            "the log writer parked again",
            Duration::from_secs(10),
            || parked(&task),
        );
        total += switches_of(&task) - before;
    }
    // Woken for the line, a sleep to gather what follows it, two empty
    // polls: about 4 each (a fixed 100 ms linger made it about 100).
    assert!(
        total < hooks as u64 * 10,
        "{hooks} isolated hooks cost the log writer {total} context switches\n{}",
        d.stderr()
    );
}
