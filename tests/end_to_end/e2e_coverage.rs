//! The coverage alarm with the real Claude Code, Codex CLI and Gemini CLI,
//! offline against the mock, hookd installed by `hookd install`:
//!
//! - a broken registration of each (Claude Code: a PreToolUse matcher that
//!   misses the shell tool; Codex: only PostToolUse registered, as when its
//!   PreToolUse hook is left untrusted; Gemini: only AfterTool) lets the
//!   shell command run unjudged, and the daemon says so in `status`, on
//!   `/metrics` and in the log;
//! - a healthy session of each, with two tool calls in one model turn
//!   (parallel calls), never raises it.
//!
//! Needs the pinned CLIs: `npm ci --prefix tests/agents` and
//! `npm ci --prefix tests/e2e` (`scripts/test` does both).

use crate::support::agents;
use crate::support::claude;
use crate::support::daemon;
use crate::support::http;
use crate::support::process;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use agents::{AgentRun, Cli, ModelMock};
use daemon::{Daemon, DaemonOptions};
use serde_json::{json, Value};

fn daemon_with_metrics() -> Daemon {
    Daemon::start_with(DaemonOptions {
        config: Some("[http]\nlisten = \"127.0.0.1:0\"\n".into()),
        ..DaemonOptions::default()
    })
}

fn metrics(d: &Daemon) -> String {
    let addr = d.status()["http"]["listen"].as_str().unwrap().to_string();
    let token = fs::read_to_string(d.dir.path().join("config/hookd/http-token")).unwrap();
    http::get(
        &addr,
        "/metrics",
        &[("Authorization", &format!("Bearer {}", token.trim()))],
    )
    .body
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

fn install(home: &Path, args: &[&str]) {
    let out = Command::new(daemon::hookd_bin())
        .arg("install")
        .args(args)
        .arg("--forwarder")
        .arg(daemon::forwarder_bin())
        .env("HOME", home)
        .output()
        .expect("running hookd install");
    assert!(
        out.status.success(),
        "hookd install {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A Codex, Gemini or Copilot run with `hookd install --agent` (and `extra`).
fn agent_run(cli: Cli, mock: &ModelMock, d: &Daemon, extra: &[&str]) -> AgentRun {
    let run = AgentRun::new(cli, mock).env("HOOKD_SOCKET", &d.socket);
    let settings = match cli {
        Cli::Codex => run.config_dir().join("hooks.json"),
        Cli::Gemini => run.config_dir().join("settings.json"),
        Cli::Copilot => run.copilot_hooks_file(),
    };
    let mut args = vec![
        "--agent",
        cli.name(),
        "--settings",
        settings.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    install(&run.home_dir(), &args);
    run
}

/// A Claude Code run with `hookd install --scope project`; `miss_shell`
/// narrows the PreToolUse matcher to `Read`, so Bash calls skip it.
fn claude_run(mock: &claude::MockApi, d: &Daemon, miss_shell: bool) -> claude::ClaudeRun {
    let run = claude::ClaudeRun::new(mock).env("HOOKD_SOCKET", &d.socket);
    let project = run.project_dir();
    install(
        &run.home_dir(),
        &["--scope", "project", "--project", project.to_str().unwrap()],
    );
    if miss_shell {
        let path = project.join(".claude/settings.json");
        let mut settings: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        for group in settings["hooks"]["PreToolUse"].as_array_mut().unwrap() {
            group["matcher"] = json!("Read");
        }
        fs::write(&path, serde_json::to_vec_pretty(&settings).unwrap()).unwrap();
    }
    run
}

/// Two shell calls in one model turn, then "done".
fn two_shell_calls(tool: &str, args: impl Fn(&str) -> Value) -> Value {
    json!({
        "turns": [
            {"content": [
                {"type": "text", "text": "I will run both."},
                {"type": "tool_call", "name": tool, "input": args("echo a > a.txt")},
                {"type": "tool_call", "name": tool, "input": args("echo b > b.txt")}
            ]},
            {"content": [{"type": "text", "text": "done"}]}
        ],
        "default_text": "done"
    })
}

fn claude_two_bash_calls() -> Value {
    let bash = |command: &str| {
        json!({"type": "tool_use", "name": "Bash",
               "input": {"command": command, "description": "scripted"}})
    };
    json!({
        "turns": [
            {"content": [{"type": "text", "text": "I will run both."},
                         bash("echo a > a.txt"), bash("echo b > b.txt")],
             "stop_reason": "tool_use"},
            {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}
        ],
        "default_text": "done"
    })
}

/// Waits for `agent`'s unjudged count to reach `n`, and checks the log and
/// `/metrics` say the same.
fn assert_alarmed(d: &Daemon, agent: &str, n: u64) {
    let status = d.wait_for_status(&format!("{agent}: {n} unjudged"), |s| {
        coverage_of(s, agent)["unjudged"] == n
    });
    let coverage = coverage_of(&status, agent);
    assert_eq!(coverage["judged"], 0, "{agent}: {coverage}");
    // The log's writer may write the alarm's line a moment after status
    // counts it.
    let count = |lines: &Vec<Value>| {
        lines
            .iter()
            .filter(|l| l["type"] == "unjudged_tool_call" && l["harness"] == agent)
            .count() as u64
    };
    let lines = process::poll_last(
        Duration::from_secs(10),
        Duration::from_millis(50),
        || d.log_lines(),
        |lines| count(lines) >= n,
    );
    assert_eq!(count(&lines), n, "{agent}: {lines:#?}");
    let metrics = metrics(d);
    let series = format!("hookd_unjudged_tool_calls_total{{agent=\"{agent}\"}} {n}");
    assert!(metrics.lines().any(|l| l == series), "{series}\n{metrics}");
}

/// `agent`'s healthy session: its tool calls were judged, none ran
/// unjudged, once its SessionEnd (which concludes whatever waits) is in.
fn assert_healthy(d: &Daemon, agent: &str, session_end: &str, judged: u64) {
    let status = d.wait_for_status(&format!("{agent}: the session's end"), |s| {
        coverage_of(s, agent)["judged"].as_u64() >= Some(judged)
            && d.log_lines()
                .iter()
                .any(|l| l["type"] == "event" && l["harness"] == agent && l["kind"] == session_end)
    });
    let coverage = coverage_of(&status, agent);
    assert_eq!(coverage["unjudged"], 0, "{agent}: {coverage}");
    assert!(
        !d.log_lines()
            .iter()
            .any(|l| l["type"] == "unjudged_tool_call"),
        "{agent}"
    );
    let metrics = metrics(d);
    let series = format!("hookd_unjudged_tool_calls_total{{agent=\"{agent}\"}} 0");
    assert!(metrics.lines().any(|l| l == series), "{series}\n{metrics}");
}

#[test]
fn a_broken_registration_of_each_agent_raises_the_alarm() {
    if agents::node_absent("a_broken_registration_of_each_agent_raises_the_alarm") {
        return;
    }
    for (cli, post) in [
        (Cli::Codex, "PostToolUse"),
        (Cli::Gemini, "AfterTool"),
        (Cli::Copilot, "PostToolUse"),
    ] {
        let d = daemon_with_metrics();
        let mock = ModelMock::start(cli, &agents::one_shell_call(cli, "echo hello > out.txt"));
        let run = agent_run(cli, &mock, &d, &["--events", post]);
        let out = run.run("write hello to out.txt");
        out.assert_success();
        assert!(
            run.project_dir().join("out.txt").exists(),
            "{cli:?}: the command ran\n{}",
            out.describe()
        );
        assert_alarmed(&d, cli.name(), 1);
    }

    let d = daemon_with_metrics();
    let mock = claude::MockApi::start(&claude::one_bash_call_script("echo hello > out.txt"));
    let run = claude_run(&mock, &d, true);
    let out = run.run("write hello to out.txt");
    out.assert_success();
    assert!(
        run.project_dir().join("out.txt").exists(),
        "{}",
        out.describe()
    );
    // Claude Code's SessionEnd is registered: the call is concluded at
    // once, and the session's last alarm is its count.
    assert_alarmed(&d, "claude-code", 1);
}

#[test]
fn a_healthy_session_of_each_agent_never_raises_it() {
    if agents::node_absent("a_healthy_session_of_each_agent_never_raises_it") {
        return;
    }
    let d = daemon_with_metrics();
    for cli in [Cli::Codex, Cli::Gemini, Cli::Copilot] {
        let mock = ModelMock::start(
            cli,
            &two_shell_calls(cli.shell_tool(), |c| cli.shell_args(c)),
        );
        let run = agent_run(cli, &mock, &d, &[]);
        let out = run.run("write a and b");
        out.assert_success();
        assert!(
            run.project_dir().join("b.txt").exists(),
            "{cli:?}\n{}",
            out.describe()
        );
        assert_healthy(&d, cli.name(), "SessionEnd", 2);
    }
    let mock = claude::MockApi::start(&claude_two_bash_calls());
    let run = claude_run(&mock, &d, false);
    let out = run.run("write a and b");
    out.assert_success();
    assert!(
        run.project_dir().join("b.txt").exists(),
        "{}",
        out.describe()
    );
    assert_healthy(&d, "claude-code", "SessionEnd", 2);
}
