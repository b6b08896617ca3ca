//! Socket clients deciding through the real daemon and forwarder: pending
//! decisions, races, disconnects, timeouts, lagging subscribers, status and
//! the thin CLI clients.

use crate::support::daemon;

use std::process::Command;
use std::time::{Duration, Instant};

use daemon::{bash, fixture, forward_in_background, stdout_json, Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};

/// Every decision point no rule decides waits for clients (no rules needed).
const ROUTE_ALL: &str = "[decisions]\nroute_undecided = true\ntimeout = 20\n";

fn routed_daemon(config: &str) -> Daemon {
    Daemon::start_with(DaemonOptions {
        config: Some(config.to_string()),
        ..DaemonOptions::default()
    })
}

fn subscriber(d: &Daemon, name: &str) -> RawClient {
    let mut c = RawClient::hello(&d.socket, name);
    let ok = c.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok", "{ok}");
    c
}

fn next_pending(c: &mut RawClient) -> Value {
    c.wait_for("a pending event", |f| {
        f["type"] == "event" && f["pending"] == true
    })["event"]
        .clone()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_client_allows_and_denies_through_the_real_forwarder() {
    let d = routed_daemon(ROUTE_ALL);
    let mut c = subscriber(&d, "approver");
    for (verdict, command) in [("allow", "ls"), ("deny", "make clean")] {
        let fwd = forward_in_background(&d.socket, &bash(command), &[]);
        let event = next_pending(&mut c);
        assert_eq!(event["input"]["tool_input"]["command"], command);
        let reply = c.call(json!({"type": "decide", "event_id": event["id"], "verdict": verdict, "reason": format!("{verdict} by test")}));
        assert_eq!(reply["type"], "ok", "{reply}");
        let out = fwd.join().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = stdout_json(&out);
        assert_eq!(v["hookSpecificOutput"]["permissionDecision"], verdict);
        assert_eq!(
            v["hookSpecificOutput"]["permissionDecisionReason"],
            format!("{verdict} by test")
        );
    }
    let lines = d.wait_log_lines(4);
    let sources: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "decision")
        .map(|l| &l["source"])
        .collect();
    assert_eq!(
        sources,
        [&json!("client:approver"), &json!("client:approver")]
    );
}

#[test]
fn permission_request_decided_by_a_client_uses_decision_behavior() {
    let d = routed_daemon(ROUTE_ALL);
    let mut c = subscriber(&d, "approver");
    let fwd = forward_in_background(&d.socket, &fixture("PermissionRequest.json"), &[]);
    let event = next_pending(&mut c);
    let bad = c.call(json!({"type": "decide", "event_id": event["id"], "verdict": "ask"}));
    assert_eq!(bad["code"], "invalid_request", "{bad}");
    let ok = c.call(
        json!({"type": "decide", "event_id": event["id"], "verdict": "deny", "reason": "not now"}),
    );
    assert_eq!(ok["type"], "ok");
    let v = stdout_json(&fwd.join().unwrap());
    assert_eq!(
        v["hookSpecificOutput"]["decision"],
        json!({"behavior": "deny", "message": "not now"})
    );
}

#[test]
fn two_clients_race_and_the_first_decision_wins() {
    let d = routed_daemon(ROUTE_ALL);
    let mut a = subscriber(&d, "alice");
    let mut b = subscriber(&d, "bob");
    let fwd = forward_in_background(&d.socket, &bash("make deploy"), &[]);
    let event_a = next_pending(&mut a);
    let event_b = next_pending(&mut b);
    assert_eq!(event_a["id"], event_b["id"]);
    let first = a.call(json!({"type": "decide", "event_id": event_a["id"], "verdict": "deny"}));
    let second = b.call(json!({"type": "decide", "event_id": event_b["id"], "verdict": "allow"}));
    assert_eq!(first["type"], "ok");
    assert_eq!(second["type"], "error");
    assert_eq!(second["code"], "already_decided");
    assert!(
        second["message"].as_str().unwrap().contains("client:alice"),
        "{second}"
    );
    assert_eq!(
        stdout_json(&fwd.join().unwrap())["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

#[test]
fn a_disconnecting_client_leaves_its_pending_events_for_others() {
    let d = routed_daemon(ROUTE_ALL);
    let mut a = subscriber(&d, "leaver");
    let mut b = subscriber(&d, "stayer");
    let fwd = forward_in_background(&d.socket, &bash("cargo publish"), &[]);
    let event = next_pending(&mut a);
    drop(a);
    next_pending(&mut b);
    let pending = b.call(json!({"type": "pending"}));
    assert_eq!(
        pending["result"][0]["event"]["id"], event["id"],
        "{pending}"
    );
    assert_eq!(
        b.call(json!({"type": "decide", "event_id": event["id"], "verdict": "allow"}))["type"],
        "ok"
    );
    assert_eq!(
        stdout_json(&fwd.join().unwrap())["hookSpecificOutput"]["permissionDecision"],
        "allow"
    );
}

#[test]
fn when_the_last_client_leaves_pending_events_fall_back_at_once() {
    let d = routed_daemon(ROUTE_ALL);
    let mut only = subscriber(&d, "only");
    let started = Instant::now();
    let fwd = forward_in_background(&d.socket, &bash("terraform apply"), &[]);
    next_pending(&mut only);
    drop(only);
    let out = fwd.join().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "waited for the 20 s timeout"
    );
    assert!(
        out.stdout.is_empty(),
        "an undecided event falls back to no opinion"
    );
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let lines = d.wait_log_lines(2);
    assert_eq!(lines[1]["source"], "fallback");
}

#[test]
fn with_no_client_nothing_waits() {
    let d = routed_daemon(ROUTE_ALL);
    let started = Instant::now();
    let out = d.forward(&bash("ls"), &["--timeout", "10"]);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let lines = d.wait_log_lines(2);
    assert_eq!(lines[0]["type"], "event");
    assert_eq!(
        lines[1]["source"], "fallback",
        "nobody could decide: the fallback applied at once"
    );
    assert_eq!(lines[1]["verdict"], "none");
}

#[test]
fn nobody_answering_in_time_applies_the_fallback() {
    let d = routed_daemon("[decisions]\nroute_undecided = true\ntimeout = 0.4\n");
    let mut c = subscriber(&d, "sleepy");
    // When the fallback comes is tested on the paused clock
    // (inprocess.rs); here, that the real binaries get it.
    let out = d.forward(&bash("ls"), &["--timeout", "10"]);
    assert!(
        out.stderr.is_empty(),
        "the forwarder fell back: {}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty(), "undecided → no opinion");
    let event = next_pending(&mut c);
    let late = c.call(json!({"type": "decide", "event_id": event["id"], "verdict": "allow"}));
    assert_eq!(late["code"], "already_decided", "{late}");
    assert!(
        late["message"].as_str().unwrap().contains("timeout"),
        "{late}"
    );
    let lines = d.wait_log_lines(2);
    assert_eq!(lines[1]["source"], "timeout");
}

#[test]
fn the_deadline_ladder_holds_while_a_client_thinks() {
    // A pending timeout longer than the forwarder's own deadline: the daemon
    // still answers before the forwarder gives up, so no fallback line.
    let d = routed_daemon("[decisions]\nroute_undecided = true\ntimeout = \"never\"\n");
    let _c = subscriber(&d, "slow");
    let started = Instant::now();
    let out = d.forward(&bash("ls"), &["--timeout", "1"]);
    assert!(started.elapsed() < Duration::from_millis(1500));
    assert!(
        out.stderr.is_empty(),
        "the forwarder fell back: {}",
        stderr(&out)
    );
    let lines = d.wait_log_lines(2);
    assert_eq!(lines[1]["source"], "timeout");
}

#[test]
fn a_lagging_subscriber_gets_lagged_and_never_slows_decisions() {
    let d = Daemon::start();
    let mut lazy = RawClient::hello(&d.socket, "lazy");
    assert_eq!(lazy.call(json!({"type": "subscribe"}))["type"], "ok");
    // Hooks over one persistent connection, answered one by one while the
    // lazy subscriber reads nothing.
    let mut hooks = RawClient::hello(&d.socket, "load");
    let input = fixture("PostToolUse.json");
    let started = Instant::now();
    for i in 0..3000 {
        hooks.send(
            &json!({"type": "hook", "id": format!("h{i}"), "deadline_ms": 5000, "input": input}),
        );
        let result = hooks.recv().expect("hook_result");
        assert_eq!(result["type"], "hook_result", "{result}");
    }
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(60), "{elapsed:?}");
    let lagged = lazy.wait_for("a lagged frame", |f| f["type"] == "lagged");
    assert!(lagged["dropped"].as_u64().unwrap() > 0, "{lagged}");
    let status = hooks.call(json!({"type": "status"}));
    assert!(
        status["result"]["counters"]["lagged_dropped"]
            .as_u64()
            .unwrap()
            > 0,
        "{status}"
    );
    assert_eq!(status["result"]["counters"]["decisions"], 3000);
}

#[test]
fn subscribers_see_events_and_decisions_filtered() {
    let d = Daemon::start();
    let mut c = RawClient::hello(&d.socket, "watcher");
    assert_eq!(
        c.call(json!({"type": "subscribe", "filter": {"kinds": ["Stop"]}}))["type"],
        "ok"
    );
    d.forward(&fixture("PreToolUse.json"), &[]);
    d.forward(&fixture("Stop.json"), &[]);
    let event = c.recv().unwrap();
    assert_eq!(event["type"], "event");
    assert_eq!(event["pending"], false);
    assert_eq!(
        event["event"]["kind"], "Stop",
        "the PreToolUse was filtered out"
    );
    let decision = c.recv().unwrap();
    assert_eq!(decision["type"], "decision");
    assert_eq!(decision["decision"]["event_id"], event["event"]["id"]);
    assert_eq!(c.call(json!({"type": "unsubscribe"}))["type"], "ok");
    d.forward(&fixture("Stop.json"), &[]);
    let status = c.call(json!({"type": "status"}));
    assert_eq!(
        status["type"], "ok",
        "no push arrived before the reply: {status}"
    );
}

#[test]
fn requests_before_hello_and_unknown_events_get_clear_errors() {
    let d = Daemon::start();
    let mut c = RawClient::connect(&d.socket);
    c.send(&json!({"type": "status", "req": "1"}));
    let reply = c.recv().unwrap();
    assert_eq!(reply["code"], "unexpected_frame", "{reply}");
    assert!(reply["message"].as_str().unwrap().contains("hello"));

    let mut c = RawClient::hello(&d.socket, "x");
    let reply = c.call(json!({"type": "decide", "event_id": "01a2010b-e61b-7309-aac2-2fa4573d7457", "verdict": "allow"}));
    assert_eq!(reply["code"], "not_found", "{reply}");
    let reply = c.call(json!({"type": "status"}));
    assert_eq!(reply["result"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(reply["result"]["rules"]["source"], "defaults");
}

#[test]
fn cli_status_pending_and_decide() {
    let d = routed_daemon(ROUTE_ALL);
    let hookd = |args: &[&str]| {
        Command::new(daemon::hookd_bin())
            .args(args)
            .arg("--socket")
            .arg(&d.socket)
            .output()
            .unwrap()
    };
    let status = hookd(&["status", "--json"]);
    assert!(status.status.success(), "{}", stderr(&status));
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["counters"]["pending"], 0);

    let _c = subscriber(&d, "holder");
    let fwd = forward_in_background(&d.socket, &bash("git push --force"), &[]);
    let list = daemon::poll_last(
        Duration::from_secs(10),
        Duration::from_millis(20),
        || -> Vec<Value> { serde_json::from_slice(&hookd(&["pending", "--json"]).stdout).unwrap() },
        |list| !list.is_empty(),
    );
    assert_eq!(list.len(), 1);
    let id = list[0]["event"]["id"].as_str().unwrap().to_string();
    let human = hookd(&["pending"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains(&id));
    let decided = hookd(&["decide", &id, "deny", "--reason", "not on Fridays"]);
    assert!(decided.status.success(), "{}", stderr(&decided));
    let v = stdout_json(&fwd.join().unwrap());
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecisionReason"],
        "not on Fridays"
    );
    let again = hookd(&["decide", &id, "allow"]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("already decided by client:hookd-cli"),
        "{}",
        stderr(&again)
    );

    let gone = Command::new(daemon::hookd_bin())
        .args(["status", "--socket"])
        .arg(d.dir.path().join("nope.sock"))
        .output()
        .unwrap();
    assert!(!gone.status.success());
    assert!(
        stderr(&gone).contains("is `hookd serve` running?"),
        "{}",
        stderr(&gone)
    );
}

#[test]
fn the_python_example_client_denies_by_pattern_and_approves_the_rest() {
    let d = routed_daemon(ROUTE_ALL);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/auto_decide.py");
    let mut client = Command::new("python3")
        .arg(&script)
        .args(["--deny", r"rm -rf|git push --force", "--socket"])
        .arg(&d.socket)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python3");
    // Wait until it has subscribed (it prints once connected).
    let mut stdout = std::io::BufReader::new(client.stdout.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut first).unwrap();
    assert!(first.contains("connected"), "{first}");
    let mut c = RawClient::hello(&d.socket, "probe");
    daemon::poll_until("one subscriber", Duration::from_secs(10), || {
        c.call(json!({"type": "status"}))["result"]["counters"]["subscribers"] == 1
    });

    let denied = d.forward(&bash("rm -rf ./build"), &[]);
    let allowed = d.forward(&bash("cargo test"), &[]);
    let _ = Command::new("kill").arg(client.id().to_string()).status();
    let _ = client.wait();

    let v = stdout_json(&denied);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(v["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap()
        .contains("matches"));
    assert_eq!(
        stdout_json(&allowed)["hookSpecificOutput"]["permissionDecision"],
        "allow"
    );
    let sources: Vec<Value> = d
        .wait_log_lines(4)
        .into_iter()
        .filter(|l| l["type"] == "decision")
        .map(|l| l["source"].clone())
        .collect();
    assert_eq!(
        sources,
        [json!("client:auto-decide"), json!("client:auto-decide")]
    );
}

/// A hook frame for a persistent connection.
fn hook_frame(id: &str, input: &Value) -> Value {
    json!({"type": "hook", "id": id, "deadline_ms": 600_000, "input": input})
}

#[test]
fn a_client_pipelining_hooks_it_never_reads_holds_a_bounded_number() {
    let d = routed_daemon("[decisions]\nroute_undecided = true\ntimeout = \"never\"\n");
    // Someone could decide: every routed hook waits in the pending table.
    let _decider = subscriber(&d, "decider");
    let flood = RawClient::hello(&d.socket, "flood");
    let mut writer = flood.try_clone_writer();
    let input = bash("cargo build");
    let sender = std::thread::spawn(move || {
        // Blocks once the daemon stops reading; fails once it is gone.
        for i in 0..5000 {
            let mut line = hook_frame(&format!("h{i}"), &input).to_string();
            line.push('\n');
            if std::io::Write::write_all(&mut writer, line.as_bytes()).is_err() {
                return i;
            }
        }
        5000
    });
    // The daemon holds at most 64 of them at once (that it still does an
    // hour later is tested on tokio's paused clock: inprocess.rs,
    // `a_pipelining_client_is_held_to_its_hooks_in_flight`).
    daemon::poll_reporting("64 pending", Duration::from_secs(20), || {
        let status = d.status();
        if status["counters"]["pending"].as_u64().unwrap() >= 64 {
            return Ok(());
        }
        Err(status.to_string())
    });
    let status = d.status();
    assert_eq!(status["counters"]["pending"], 64, "{status}");
    assert_eq!(status["counters"]["hooks_in_flight"], 64, "{status}");
    // Other connections are served meanwhile.
    let out = d.forward(&fixture("SessionStart.json"), &["--timeout", "5"]);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    assert_eq!(d.counter("pending"), 64);
    drop(flood);
    drop(sender);
}

#[test]
fn a_subscriber_that_never_reads_holds_a_bounded_number_of_bytes() {
    const BUDGET: u64 = 1024 * 1024;
    let d = routed_daemon(&format!("[clients]\nqueue_bytes = {BUDGET}\n"));
    let mut stuck = RawClient::hello(&d.socket, "stuck");
    assert_eq!(stuck.call(json!({"type": "subscribe"}))["type"], "ok");
    let mut hooks = RawClient::hello(&d.socket, "load");
    let idle_rss = d.rss_kib();
    // 160 events of 256 KiB each (40 MiB), far fewer than the 1024 frames
    // a queue may hold.
    let mut input = fixture("PostToolUse.json");
    input["tool_response"]["stdout"] = Value::String("y".repeat(256 * 1024));
    for i in 0..160 {
        hooks.send(&hook_frame(&format!("h{i}"), &input));
        assert_eq!(hooks.recv().expect("hook_result")["type"], "hook_result");
    }
    let status = hooks.call(json!({"type": "status"}))["result"].clone();
    let queued = status["counters"]["subscriber_queued_bytes"]
        .as_u64()
        .unwrap();
    // The budget, one frame that took an empty queue, and what the
    // socket's buffer took.
    assert!(
        queued <= BUDGET + 300 * 1024,
        "{queued} bytes queued for one client: {status}"
    );
    assert!(
        status["counters"]["lagged_dropped"].as_u64().unwrap() > 100,
        "{status}"
    );
    let grown_mib = d.rss_kib().saturating_sub(idle_rss) / 1024;
    assert!(grown_mib < 30, "RSS grew by {grown_mib} MiB");
    drop(stuck);
}

/// Runs one `ask` through a subscribed client and stops the daemon while
/// it waits; returns the forwarder's permissionDecision.
fn ask_answer_at_sigterm(stuck_subscriber: bool) -> Value {
    let mut d = Daemon::start_with(DaemonOptions {
        rules: Some(
            "[[rule]]\nid = \"ask-touch\"\naction = \"ask\"\ntool = \"Bash(touch:*)\"\n".into(),
        ),
        ..DaemonOptions::default()
    });
    let mut c = RawClient::hello(&d.socket, "decider");
    assert_eq!(c.call(json!({"type": "subscribe"}))["type"], "ok");
    if stuck_subscriber {
        // Fill the client's socket so its connection is busy writing when
        // the daemon stops: the hook then learns of the shutdown first.
        let mut load = RawClient::hello(&d.socket, "load");
        let mut input = fixture("PostToolUse.json");
        input["tool_response"]["stdout"] = Value::String("z".repeat(64 * 1024));
        for i in 0..40 {
            load.send(&hook_frame(&format!("l{i}"), &input));
            load.recv().expect("hook_result");
        }
    }
    let fwd = forward_in_background(&d.socket, &bash("touch x"), &["--timeout", "20"]);
    daemon::poll_until("the ask pending", Duration::from_secs(10), || {
        d.counter("pending") > 0
    });
    assert_eq!(d.stop().code(), Some(0), "{}", d.stderr());
    let out = fwd.join().unwrap();
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    drop(c);
    stdout_json(&out)["hookSpecificOutput"]["permissionDecision"].clone()
}

#[test]
fn sigterm_answers_a_pending_ask_with_claude_codes_own_prompt() {
    // Whichever effect of the shutdown reaches the hook first (the client
    // leaving, or the signal itself), the answer is the same as a timeout's.
    for run in 0..3 {
        assert_eq!(ask_answer_at_sigterm(false), "ask", "run {run}");
    }
    // Deterministically the signal first: the client cannot leave in time.
    assert_eq!(ask_answer_at_sigterm(true), "ask");
}
