//! Faults inside a daemon built like a release: `hookd` compiled once, with
//! the `fault-injection` feature, in the `fault` profile (the release
//! profile's panic strategy with cheaper codegen). A marker in a hook input
//! makes it panic or stall where a bug would (`src/daemon/fault.rs`); the
//! daemon must answer that hook with its fallback and serve on.

#[path = "support/mod.rs"]
mod support;

use support::daemon;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use daemon::{bash, fixture, stdout_json, Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};

/// `hookd` built in the `fault` profile with `--features fault-injection`,
/// once per test run, in this build's target directory (so it is cached
/// between runs).
fn fault_hookd() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        // target/<profile>/hookd → target
        let target = Path::new(env!("CARGO_BIN_EXE_hookd"))
            .parent()
            .and_then(Path::parent)
            .expect("the test binary's target directory");
        let started = Instant::now();
        let out = Command::new(env!("CARGO"))
            .args(["build", "--locked", "--profile", "fault", "--features"])
            .args(["fault-injection", "--bin", "hookd", "--target-dir"])
            .arg(target)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("running cargo");
        assert!(
            out.status.success(),
            "building the fault-injection hookd failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!(
            "built the fault-injection hookd in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        target.join("fault").join("hookd")
    })
}

fn start(config: Option<&str>) -> Daemon {
    Daemon::start_with(DaemonOptions {
        bin: Some(fault_hookd().to_path_buf()),
        config: config.map(str::to_owned),
        ..DaemonOptions::default()
    })
}

fn with_fault(mut input: Value, fault: &str) -> Value {
    input["hookd_fault"] = json!(fault);
    input
}

/// An input whose frame is far above the inline-evaluation threshold.
fn large(mut input: Value) -> Value {
    input["tool_input"]["padding"] = json!("x".repeat(256 * 1024));
    input
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_panicking_task_gets_its_fallback_and_the_daemon_serves_on() {
    let d = start(None);

    // Evaluating the rules panics: the hook is answered by the daemon (no
    // fallback line from the forwarder) with its fail-closed fallback, and
    // the decision is logged.
    let out = d.forward(
        &with_fault(bash("ls"), "panic_while_judging"),
        &["--fail-closed"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        out.stderr.is_empty(),
        "the forwarder fell back: {}\n{}",
        stderr(&out),
        d.stderr()
    );
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    let lines = d.wait_log_lines(2);
    assert_eq!(lines[1]["source"], "fallback", "{}", lines[1]);
    assert!(
        lines[1]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("internal_error")),
        "{}",
        lines[1]
    );

    // The same daemon answers the next hook as usual.
    let out = d.forward(&bash("ls"), &[]);
    assert!(
        out.stderr.is_empty() && out.stdout.is_empty(),
        "{}",
        stderr(&out)
    );

    // The hook's task panics after judging: still answered, fail-open here.
    let out = d.forward(&with_fault(bash("ls"), "panic_after_judging"), &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    assert!(out.stdout.is_empty(), "no opinion without --fail-closed");

    // A hook on a persistent connection: only that hook is affected.
    let mut c = RawClient::hello(&d.socket, "pipeline");
    for (id, fault) in [("a", "panic_after_judging"), ("b", "none")] {
        c.send(&json!({"type": "hook", "id": id, "deadline_ms": 5000, "input": with_fault(bash("ls"), fault)}));
    }
    let mut answered: Vec<String> = (0..2)
        .map(|_| {
            c.recv().expect("a hook_result")["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    answered.sort();
    assert_eq!(answered, ["a", "b"]);

    // A client's session panics: that connection closes, nothing else.
    let mut doomed = RawClient::connect(&d.socket);
    doomed.send(&json!({"type": "hello", "v": 1, "role": "client", "name": "hookd-fault:panic"}));
    assert_eq!(doomed.recv().expect("welcome")["type"], "welcome");
    assert!(doomed.is_closed());

    let status = c.call(json!({"type": "status"}));
    assert_eq!(status["result"]["counters"]["panics"], 4, "{status}");
    assert_eq!(status["result"]["pid"], d.pid());
    let log = d.stderr();
    for message in [
        "panic while judging",
        "panic after judging",
        "panic in a client's session",
    ] {
        assert!(
            log.contains(&format!("panic: injected fault: {message}")),
            "{message} not logged:\n{log}"
        );
    }
    assert!(d.forward(&fixture("Stop.json"), &[]).stderr.is_empty());
}

#[test]
fn a_slow_evaluation_does_not_hold_up_other_hooks() {
    let d = start(None);
    // Large inputs whose evaluation blocks its thread for 5 s each, more of
    // them than the runtime has workers, arriving one after the other (so
    // that each would take the worker that reads it).
    let slow: Vec<_> = (0..3)
        .map(|i| {
            let handle = daemon::forward_in_background(
                &d.socket,
                &with_fault(large(bash("ls")), "slow_judging:5000"),
                &["--timeout", "30"],
            );
            // The next one arrives once the daemon is answering this one.
            daemon::poll_until(
                "the slow hook to be in flight",
                Duration::from_secs(10),
                || d.counter("hooks_in_flight") > i,
            );
            handle
        })
        .collect();
    // Meanwhile every other forwarder is answered within its deadline.
    let started = Instant::now();
    for i in 0..6 {
        for input in [fixture("Stop.json"), bash("ls")] {
            let out = d.forward(&input, &["--timeout", "3"]);
            assert!(
                out.stderr.is_empty(),
                "forwarder {i} fell back after {:?}: {}",
                started.elapsed(),
                stderr(&out)
            );
        }
    }
    for handle in slow {
        let out = handle.join().unwrap();
        assert!(out.stderr.is_empty(), "{}", stderr(&out));
    }
}

#[test]
fn an_evaluation_past_the_deadline_gets_the_fallback_in_time() {
    let d = start(None);
    let out = d.forward(
        &with_fault(large(bash("ls")), "slow_judging:3000"),
        &["--fail-closed", "--timeout", "1"],
    );
    assert!(
        out.stderr.is_empty(),
        "the daemon must answer before the forwarder gives up: {}",
        stderr(&out)
    );
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    let lines = d.wait_log_lines(2);
    assert_eq!(lines[1]["source"], "fallback");
    assert!(
        lines[1]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("rules_too_slow")),
        "{}",
        lines[1]
    );
}
