//! The coverage alarm with synthetic hook frames through the real
//! forwarder and daemon: a tool call that ran with no judged pre-tool event
//! is counted (status, /metrics), logged (`unjudged_tool_call`, chained),
//! pushed to subscribers and to `[notify]` targets, throttled per session;
//! calls that pair, in either order, by id or by tool and input, never
//! raise it.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::daemon::{hookd_bin, Daemon, DaemonOptions, RawClient};
use crate::support::process::poll_for;
use crate::support::{http, receiver};

fn tool_event(event: &str, session: &str, tool: &str, input: Value, id: Option<&str>) -> Value {
    let mut v = json!({
        "session_id": session, "cwd": "/work/webshop", "hook_event_name": event,
        "tool_name": tool, "tool_input": input,
    });
    if let Some(id) = id {
        v["tool_use_id"] = json!(id);
    }
    v
}

fn session_end(session: &str) -> Value {
    json!({"session_id": session, "cwd": "/work/webshop", "hook_event_name": "SessionEnd", "reason": "exit"})
}

fn coverage_of(status: &Value, agent: &str) -> Value {
    status["coverage"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["agent"] == agent)
        .cloned()
        .unwrap_or(Value::Null)
}

fn hookd(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(hookd_bin())
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("HOOKD_SOCKET")
        .output()
        .unwrap()
}

/// Codex with only PostToolUse registered (or PreToolUse untrusted): three
/// calls run unjudged. Each is logged once, chained; subscribers and the
/// push target hear once for the burst and once more at the session's end;
/// status and /metrics count them.
#[test]
fn tools_that_ran_unjudged_are_counted_logged_and_alarmed_once_per_burst() {
    let target = receiver::Receiver::start(200);
    let d = Daemon::start_with(DaemonOptions {
        config: Some(format!(
            "[http]\nlisten = \"127.0.0.1:0\"\n[[notify.webhook]]\nurl = \"http://{}/hook\"\n",
            target.addr
        )),
        ..DaemonOptions::default()
    });
    let mut approver = RawClient::hello(&d.socket, "approver");
    approver.call(json!({"type": "subscribe", "filter": {}}));
    let session = "1fce3faa-0000-4000-8000-000000000001";
    for n in 0..3 {
        let post = tool_event(
            "PostToolUse",
            session,
            "Bash",
            json!({"command": format!("echo {n}")}),
            Some(&format!("call_{n}")),
        );
        assert!(d.forward(&post, &["--agent", "codex"]).status.success());
    }
    let status = d.wait_for_status("three unjudged Codex calls", |s| {
        coverage_of(s, "codex")["unjudged"] == 3
    });
    let codex = coverage_of(&status, "codex");
    assert_eq!(codex["judged"], 0, "{codex}");
    assert_eq!(codex["sessions"], 1, "{codex}");
    assert_eq!(codex["last_unjudged_session"], session);
    assert_eq!(codex["last_unjudged_project"], "webshop");

    let alarm = approver.wait_for("the coverage alarm", |f| f["type"] == "coverage_alarm");
    assert_eq!(alarm["harness"], "codex");
    assert_eq!(alarm["agent_name"], "Codex CLI");
    assert_eq!(
        alarm["unjudged"], 1,
        "the burst's first call alarms: {alarm}"
    );
    assert_eq!(
        alarm["message"],
        "session 1fce3faa (webshop, Codex CLI): 1 tool call ran unjudged"
    );
    // The session ends: the calls not yet told are, once.
    assert!(d
        .forward(&session_end(session), &["--agent", "codex"])
        .status
        .success());
    let last = approver.wait_for("the session's last alarm", |f| {
        f["type"] == "coverage_alarm"
    });
    assert_eq!(
        last["message"],
        "session 1fce3faa (webshop, Codex CLI): 3 tool calls ran unjudged"
    );
    let pushes = target.wait_for(2);
    let bodies: Vec<Value> = pushes.iter().map(|p| p.json()).collect();
    assert!(
        bodies.iter().all(|b| b["kind"] == "coverage_alarm"),
        "{bodies:?}"
    );
    assert_eq!(bodies[1]["unjudged"], 3, "{bodies:?}");
    assert_eq!(bodies[1]["summary"], last["message"]);

    // One log line per call, each naming its after-tool event, chained.
    let lines = d.wait_log_lines(3 * 2 + 2 + 3);
    let unjudged: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "unjudged_tool_call")
        .collect();
    assert_eq!(unjudged.len(), 3, "{lines:#?}");
    for (n, record) in unjudged.iter().enumerate() {
        assert_eq!(record["harness"], "codex");
        assert_eq!(record["session_id"], session);
        assert_eq!(record["tool"], "Bash");
        assert_eq!(record["tool_use_id"], format!("call_{n}"));
        assert_eq!(record["session_unjudged"], n as u64 + 1);
        assert!(record["chain"].is_string(), "chained: {record}");
        let event_id = record["event_id"].as_str().unwrap();
        assert!(
            lines
                .iter()
                .any(|l| l["type"] == "event" && l["id"] == event_id),
            "its event is logged"
        );
    }
    let verify = hookd(d.dir.path(), &["log", "verify", d.log.to_str().unwrap()]);
    assert!(
        verify.status.success(),
        "{}",
        String::from_utf8_lossy(&verify.stdout)
    );
    // tail and replay read the new line and go on.
    let tail = hookd(d.dir.path(), &["tail", "--log", d.log.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&tail.stdout);
    assert!(tail.status.success(), "{text}");
    assert_eq!(
        text.matches("codex:UNJUDGED").count(),
        3,
        "tail prints each: {text}"
    );
    let only = hookd(
        d.dir.path(),
        &[
            "tail",
            "--kind",
            "unjudged_tool_call",
            "--log",
            d.log.to_str().unwrap(),
        ],
    );
    let only = String::from_utf8_lossy(&only.stdout);
    assert_eq!(only.lines().count(), 3, "{only}");
    assert!(only.lines().all(|l| l.contains("codex:UNJUDGED")), "{only}");
    let replay = hookd(d.dir.path(), &["replay", d.log.to_str().unwrap()]);
    assert!(
        replay.status.success(),
        "{}{}",
        String::from_utf8_lossy(&replay.stdout),
        String::from_utf8_lossy(&replay.stderr)
    );

    // /metrics.
    let addr = d.status()["http"]["listen"].as_str().unwrap().to_string();
    let token = std::fs::read_to_string(d.dir.path().join("config/hookd/http-token")).unwrap();
    let bearer = format!("Bearer {}", token.trim());
    let metrics = http::get(&addr, "/metrics", &[("Authorization", &bearer)]).body;
    assert!(
        metrics
            .lines()
            .any(|l| l == r#"hookd_unjudged_tool_calls_total{agent="codex"} 3"#),
        "{metrics}"
    );
}

/// Healthy sessions of every agent: parallel calls (pre A, pre B, post B,
/// post A), a call whose after-tool event is noted before its pre-tool
/// event, Gemini's calls without ids (one whose input the agent changed
/// after the pre-tool hook). Each session's end concludes nothing: no
/// call waited, none ran unjudged.
#[test]
fn paired_calls_in_any_order_never_raise_the_alarm() {
    let d = Daemon::start();
    let mut approver = RawClient::hello(&d.socket, "approver");
    approver.call(json!({"type": "subscribe", "filter": {}}));
    let a = || json!({"command": "npm test"});
    let b = || json!({"file_path": "/work/webshop/a.txt", "content": "x"});
    for (agent, pre, post, tool_a, tool_b) in [
        ("claude-code", "PreToolUse", "PostToolUse", "Bash", "Write"),
        ("codex", "PreToolUse", "PostToolUse", "Bash", "apply_patch"),
    ] {
        let s = format!("{agent}-session");
        let send = |event: Value| {
            assert!(d.forward(&event, &["--agent", agent]).status.success());
        };
        send(tool_event(pre, &s, tool_a, a(), Some("A")));
        send(tool_event(pre, &s, tool_b, b(), Some("B")));
        send(tool_event(post, &s, tool_b, b(), Some("B")));
        send(tool_event("PostToolUseFailure", &s, tool_a, a(), Some("A")));
        // After-tool first, then its pre-tool event, back to back on one
        // connection (hooks run in parallel: their frames race).
        let mut hooks = RawClient::hello(&d.socket, "hooks");
        for (id, event) in [("post", post), ("pre", pre)] {
            hooks.send(
                &json!({"type": "hook", "id": id, "deadline_ms": 5000, "harness": agent,
                               "input": tool_event(event, &s, tool_a, a(), Some("C"))}),
            );
        }
        for _ in 0..2 {
            let reply = hooks.wait_for("a hook_result", |f| f["type"] == "hook_result");
            assert_eq!(reply["exit_code"], 0, "{reply}");
        }
        send(session_end(&s));
    }
    let g = "gemini-session";
    let gemini = |event: Value| {
        assert!(d.forward(&event, &["--agent", "gemini"]).status.success());
    };
    gemini(tool_event("BeforeTool", g, "run_shell_command", a(), None));
    gemini(tool_event("BeforeTool", g, "replace", b(), None));
    gemini(tool_event("AfterTool", g, "run_shell_command", a(), None));
    let mut changed = b();
    changed["modified_by_user"] = json!(true);
    gemini(tool_event("AfterTool", g, "replace", changed, None));
    gemini(session_end(g));

    let status = d.status();
    for (agent, judged) in [("claude-code", 3), ("codex", 3), ("gemini", 2)] {
        let coverage = coverage_of(&status, agent);
        assert_eq!(coverage["judged"], judged, "{agent}: {coverage}");
        assert_eq!(coverage["unjudged"], 0, "{agent}: {coverage}");
        assert_eq!(coverage["sessions"], 1, "{agent}: {coverage}");
    }
    let lines = d.wait_log_lines(2 * (7 * 2) + 5 * 2);
    assert!(
        !lines.iter().any(|l| l["type"] == "unjudged_tool_call"),
        "{lines:#?}"
    );
    // Nothing was pushed before the answer to a request sent last.
    approver.send(&json!({"type": "status", "req": "last"}));
    loop {
        let frame = approver.recv().expect("the status reply");
        assert_ne!(frame["type"], "coverage_alarm", "{frame}");
        if frame["type"] == "ok" {
            break;
        }
    }
    // Doctor agrees.
    let doctor = Command::new(hookd_bin())
        .args(["doctor", "--socket", d.socket.to_str().unwrap()])
        .env("HOME", d.dir.path())
        .env_remove("HOOKD_SOCKET")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    let line = text
        .lines()
        .find(|l| l.contains(" unjudged: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.starts_with("✓ "), "{text}");
}

/// A call of a session that the daemon has not seen end is concluded after
/// the grace; the same call's pre-tool event arriving later does not undo
/// it, and a pre-tool event of another session pairs nothing.
#[test]
fn only_the_same_sessions_pre_tool_event_pairs() {
    let d = Daemon::start();
    let pre = tool_event(
        "PreToolUse",
        "other",
        "Bash",
        json!({"command": "ls"}),
        Some("X"),
    );
    assert!(d.forward(&pre, &[]).status.success());
    let post = tool_event(
        "PostToolUse",
        "mine",
        "Bash",
        json!({"command": "ls"}),
        Some("X"),
    );
    assert!(d.forward(&post, &[]).status.success());
    let status = d.wait_for_status("the unjudged call", |s| {
        coverage_of(s, "claude-code")["unjudged"] == 1
    });
    let coverage = coverage_of(&status, "claude-code");
    assert_eq!(coverage["sessions"], 2, "{coverage}");
    assert_eq!(coverage["last_unjudged_session"], "mine");
    let human = hookd(
        d.dir.path(),
        &["status", "--socket", d.socket.to_str().unwrap()],
    );
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("tool calls (coverage alarm):\n  claude-code: 2 sessions, 1 tool call judged, 1 ran unjudged (last in session mine, webshop, at "),
        "{human}"
    );
    // Doctor names the agent and the fix.
    let doctor = Command::new(hookd_bin())
        .args(["doctor", "--socket", d.socket.to_str().unwrap()])
        .env("HOME", d.dir.path())
        .env_remove("HOOKD_SOCKET")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    let line = poll_for("doctor's line", Duration::from_secs(1), || {
        text.lines().find(|l| l.contains("unjudged:claude-code"))
    });
    assert!(line.starts_with("✗ "), "{text}");
    assert!(
        line.contains("1 ran unjudged (last in session mine"),
        "{line}"
    );
    assert!(line.contains("re-run `hookd install`"), "{line}");
    assert_eq!(doctor.status.code(), Some(1), "{text}");
}

/// A call that started before the daemon did (Claude Code says how long it
/// ran) may have been judged by the daemon before it: it is not counted. A
/// call after it in the same session is.
#[test]
fn a_call_older_than_the_daemon_is_not_counted() {
    let d = Daemon::start();
    let mut old = tool_event(
        "PostToolUse",
        "s",
        "Bash",
        json!({"command": "make"}),
        Some("old"),
    );
    old["duration_ms"] = json!(86_400_000u64);
    assert!(d.forward(&old, &[]).status.success());
    let mut new = tool_event(
        "PostToolUse",
        "s",
        "Bash",
        json!({"command": "ls"}),
        Some("new"),
    );
    new["duration_ms"] = json!(3);
    assert!(d.forward(&new, &[]).status.success());
    // Concluded in arrival order: the first would be counted by now.
    let status = d.wait_for_status("the newer call concluded", |s| {
        coverage_of(s, "claude-code")["unjudged"] == 1
    });
    assert_eq!(coverage_of(&status, "claude-code")["unjudged"], 1);
    let lines = d.wait_log_lines(5);
    let unjudged: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "unjudged_tool_call")
        .collect();
    assert_eq!(unjudged.len(), 1, "{lines:#?}");
    assert_eq!(unjudged[0]["tool_use_id"], "new");
}
