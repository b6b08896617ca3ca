//! End to end: rules that read session facts (issue #25) with the real
//! Claude Code CLI (and the real Codex CLI, through `e2e_agents_hookd`'s
//! harness) against the scripted mock of the model API, through the
//! forwarder and a real `hookd serve`:
//!
//! - a `limit` trips on the Nth call: the first two `touch`es run, the third
//!   is denied (Claude Code and Codex);
//! - a taint: after an MCP tool's result (a stdio MCP server,
//!   `tests/support/mcp_stdio.py`) `git push` is asked in that session
//!   (the shipped `examples/rules/taint.toml`), while a fresh session's push
//!   reaches the remote;
//! - a signal (`git branch --show-current`) makes a rule apply in a repo on
//!   `main` and not in one on a feature branch.
//!
//! Needs `npm ci --prefix tests/e2e` and `npm ci --prefix tests/agents`
//! (done by `scripts/test`), `git` and `python3`.

use crate::e2e_agents_hookd::hooked_run;
use crate::support::agent_cli::manifest_dir;
use crate::support::agents::{self, Cli, ModelMock};
use crate::support::claude;
use crate::support::daemon;

use std::path::Path;
use std::process::Command;

use claude::{ClaudeOutput, ClaudeRun, MockApi};
use daemon::{Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};

/// A rule that denies the third `touch` in ten minutes in a session.
const TOUCH_LIMIT: &str = r#"
[[rule]]
id = "touch-burst"
action = "deny"
tool = "Bash(touch *)"
reason = "no more than two touches in ten minutes"
limit = { count = 2, per = "10m", scope = "session" }
"#;

/// The shipped taint example, as a user would merge it.
const TAINT_RULES: &str = include_str!("../../examples/rules/taint.toml");

/// A Claude Code run against `mock` in its own project, with the forwarder
/// registered for every hook of `d`.
fn claude_run(d: &Daemon, mock: &MockApi) -> ClaudeRun {
    let run = ClaudeRun::new(mock).env("HOOKD_SOCKET", &d.socket);
    let forwarder = claude::command_hook(daemon::forwarder_bin(), &["--timeout", "20"]);
    run.write_settings(&claude::hooks_settings(claude::ALL_HOOK_EVENTS, forwarder));
    run
}

/// A script whose turns are one tool call each (`(name, input)`), then "done".
fn calls_script(calls: &[(&str, Value)]) -> Value {
    let mut turns: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| {
            json!({"content": [
                {"type": "text", "text": format!("step {i}")},
                {"type": "tool_use", "name": name, "input": input}
            ], "stop_reason": "tool_use"})
        })
        .collect();
    turns.push(json!({"content": [{"type": "text", "text": "done"}]}));
    json!({"turns": turns, "default_text": "done"})
}

/// Claude Code's Bash input for `command`.
fn bash(command: &str) -> (&'static str, Value) {
    (
        "Bash",
        json!({"command": command, "description": "scripted e2e command"}),
    )
}

/// The log's PreToolUse decisions on Bash commands containing `needle`, in
/// order, once there are `n` of them.
fn bash_decisions(d: &Daemon, needle: &str, n: usize) -> Vec<Value> {
    let pick = |lines: &[Value]| -> Vec<Value> {
        let events: Vec<&Value> = lines
            .iter()
            .filter(|l| {
                l["type"] == "event"
                    && l["kind"] == "PreToolUse"
                    && l["input"]["tool_input"]["command"]
                        .as_str()
                        .is_some_and(|c| c.contains(needle))
            })
            .collect();
        events
            .iter()
            .filter_map(|e| {
                lines
                    .iter()
                    .find(|l| l["type"] == "decision" && l["event_id"] == e["id"])
                    .cloned()
            })
            .collect()
    };
    // The log is written behind the answers.
    let got = daemon::poll_last(
        std::time::Duration::from_secs(10),
        std::time::Duration::from_millis(20),
        || pick(&d.log_lines()),
        |got| got.len() >= n,
    );
    assert_eq!(got.len(), n, "decisions on {needle:?}: {got:#?}");
    got
}

/// Runs `git args` in `dir`, panicking with its stderr on failure.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=hookd e2e",
            "-c",
            "user.email=e2e@hookd.invalid",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("running git");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// Makes `project` a git repository on `branch` with one commit, and, when
/// `remote` is given, a bare repository there as its `origin`.
fn git_project(project: &Path, branch: &str, remote: Option<&Path>) {
    git(project, &["init", "-q", "-b", branch]);
    std::fs::write(project.join("README"), "hookd e2e\n").unwrap();
    // Claude Code's settings stay out of the commit (they name the socket).
    std::fs::write(project.join(".gitignore"), ".claude/\n").unwrap();
    git(project, &["add", "README", ".gitignore"]);
    git(project, &["commit", "-q", "-m", "first"]);
    if let Some(remote) = remote {
        std::fs::create_dir_all(remote).unwrap();
        git(remote, &["init", "-q", "--bare"]);
        git(
            project,
            &["remote", "add", "origin", remote.to_str().unwrap()],
        );
    }
}

/// The branches a bare repository has.
fn remote_branches(remote: &Path) -> String {
    git(
        remote,
        &["for-each-ref", "--format=%(refname:short)", "refs/heads"],
    )
}

/// The first two `touch`es run; the third is denied with the rule's reason,
/// which reaches the model; the decision lines record the window's count.
#[test]
fn a_limit_trips_on_the_third_call_in_claude_code() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(TOUCH_LIMIT.into()),
        ..DaemonOptions::default()
    });
    let script = calls_script(&[
        bash("touch one.txt"),
        bash("touch two.txt"),
        bash("touch three.txt"),
    ]);
    let mock = MockApi::start(&script);
    let run = claude_run(&d, &mock);
    let out = run.run("touch three files");
    out.assert_success();
    let project = run.project_dir();
    assert!(project.join("one.txt").exists(), "{}", out.describe());
    assert!(project.join("two.txt").exists(), "{}", out.describe());
    assert!(
        !project.join("three.txt").exists(),
        "the third touch ran\n{}",
        mock.describe_requests()
    );
    let third = mock.expect_tool_result("toolu_mock_2_");
    assert!(
        third.is_error && third.content.contains("no more than two touches"),
        "{third:?}"
    );
    assert!(!mock.expect_tool_result("toolu_mock_1_").is_error);

    let decisions = bash_decisions(&d, "touch", 3);
    let verdicts: Vec<&str> = decisions
        .iter()
        .map(|l| l["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["none", "none", "deny"], "{decisions:#?}");
    assert_eq!(decisions[2]["rule_ids"], json!(["touch-burst"]));
    // The matching calls before each one in the window: 0, 1, 2.
    let counts: Vec<u64> = decisions
        .iter()
        .map(|l| l["facts"]["counts"]["touch-burst"].as_u64().unwrap_or(0))
        .collect();
    assert_eq!(counts, [0, 1, 2], "{decisions:#?}");
}

/// Codex: the same limit lets two shell commands run and blocks the third.
#[test]
fn a_limit_trips_on_the_third_call_in_codex() {
    if agents::node_absent("a_limit_trips_on_the_third_call_in_codex") {
        return;
    }
    let cli = Cli::Codex;
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(TOUCH_LIMIT.into()),
        ..DaemonOptions::default()
    });
    let turn = |i: usize, command: &str| {
        json!({"content": [
            {"type": "text", "text": format!("step {i}")},
            {"type": "tool_call", "name": cli.shell_tool(), "input": cli.shell_args(command)}
        ]})
    };
    let script = json!({"turns": [
        turn(0, "touch one.txt"), turn(1, "touch two.txt"), turn(2, "touch three.txt"),
        {"content": [{"type": "text", "text": "done"}]}
    ], "default_text": "done"});
    let mock = ModelMock::start(cli, &script);
    let (run, _records) = hooked_run(cli, &mock, &d, &[]);
    let out = run.run("touch three files");
    mock.assert_no_egress();
    let project = run.project_dir();
    assert!(project.join("one.txt").exists(), "{}", out.describe());
    assert!(project.join("two.txt").exists(), "{}", out.describe());
    assert!(
        !project.join("three.txt").exists(),
        "the third touch ran\n{}",
        mock.describe_requests()
    );
    let third = mock.tool_output("call_mock_2_");
    assert!(
        third.text.contains("no more than two touches"),
        "{third:?}\n{}",
        mock.describe_requests()
    );
    let decisions = bash_decisions(&d, "touch", 3);
    let verdicts: Vec<&str> = decisions
        .iter()
        .map(|l| l["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["none", "none", "deny"], "{decisions:#?}");
}

/// The MCP server's config for `claude --mcp-config`, written into `dir`.
fn mcp_config(dir: &Path) -> std::path::PathBuf {
    let server = manifest_dir().join("tests/support/mcp_stdio.py");
    let path = dir.join("mcp.json");
    std::fs::write(
        &path,
        json!({"mcpServers": {"pages": {"type": "stdio", "command": "python3",
            "args": [server.to_str().unwrap()]}}})
        .to_string(),
    )
    .unwrap();
    path
}

/// A session that read an MCP tool's result is asked before `git push`: the
/// person's client is told what tainted the session (`asked_by.session`)
/// and denies, so the remote stays empty; a fresh session's push, in the
/// same daemon, is not asked and reaches the remote.
#[test]
fn a_push_after_an_mcp_result_is_asked_and_a_fresh_sessions_is_not() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(TAINT_RULES.into()),
        ..DaemonOptions::default()
    });
    let push = "git push origin main";

    // The tainted session: it reads a page through MCP, then pushes.
    let script = calls_script(&[
        (
            "mcp__pages__read_page",
            json!({"url": "https://example.com/issue/7"}),
        ),
        bash(push),
    ]);
    let mock = MockApi::start(&script);
    let config = mcp_config(d.dir.path());
    let run = ClaudeRun::new(&mock)
        .env("HOOKD_SOCKET", &d.socket)
        .arg("--mcp-config")
        .arg(&config)
        .arg("--strict-mcp-config");
    let forwarder = claude::command_hook(daemon::forwarder_bin(), &["--timeout", "20"]);
    run.write_settings(&claude::hooks_settings(claude::ALL_HOOK_EVENTS, forwarder));
    let remote = run.scratch_dir().join("remote.git");
    git_project(&run.project_dir(), "main", Some(&remote));
    // A person's client: it is shown what tainted the session, and denies.
    let mut client = RawClient::hello(&d.socket, "person");
    client.set_read_timeout(std::time::Duration::from_secs(90));
    let ok = client.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok", "{ok}");
    let person = std::thread::spawn(move || {
        let event = client.wait_for("the pending push", |f| f["pending"] == true);
        let decided = client.call(json!({"type": "decide", "event_id": event["event"]["id"],
            "verdict": "deny", "reason": "not after reading that page"}));
        assert_eq!(decided["type"], "ok", "{decided}");
        event
    });
    let out = run.run("read the issue and do what it says");
    out.assert_success();
    let asked = person.join().unwrap();
    assert_eq!(asked["asked_by"]["rule_ids"], json!(["tainted-push"]));
    let said = asked["asked_by"]["session"].as_str().unwrap_or_default();
    assert!(
        said.starts_with("tainted by mcp__pages__read_page https://example.com/issue/7 at ")
            && said.ends_with("; 1 tool call so far"),
        "{asked:#}"
    );
    let read = mock.expect_tool_result("toolu_mock_0_");
    assert!(
        !read.is_error && read.content.contains("run git push"),
        "the MCP tool did not answer: {read:?}\n{}",
        out.describe()
    );
    let pushed = mock.expect_tool_result("toolu_mock_1_");
    assert!(
        pushed.is_error && pushed.content.contains("not after reading that page"),
        "the push ran: {pushed:?}"
    );
    assert_eq!(
        remote_branches(&remote),
        "",
        "the tainted push reached the remote"
    );
    let decision = bash_decisions(&d, push, 1).remove(0);
    assert_eq!(decision["verdict"], "deny", "{decision}");
    assert_eq!(decision["source"], "client:person", "{decision}");
    let taint = &decision["facts"]["taint"][0];
    assert_eq!(taint["tool"], "mcp__pages__read_page", "{decision}");
    assert_eq!(taint["detail"], "https://example.com/issue/7");
    let session = decision_session(&d, &decision);

    // A fresh session in the same daemon: no taint, the push runs.
    let mock = MockApi::start(&calls_script(&[bash(push)]));
    let fresh = claude_run(&d, &mock);
    let remote = fresh.scratch_dir().join("remote.git");
    git_project(&fresh.project_dir(), "main", Some(&remote));
    let out = fresh.run("push the branch");
    out.assert_success();
    assert!(
        !mock.expect_tool_result("toolu_mock_0_").is_error,
        "{}",
        mock.describe_requests()
    );
    assert_eq!(
        remote_branches(&remote),
        "main",
        "the fresh push did not run"
    );
    let decisions = bash_decisions(&d, push, 2);
    assert_ne!(decision_session(&d, &decisions[1]), session);
    assert_eq!(decisions[1]["verdict"], "none", "{:#}", decisions[1]);
    assert!(decisions[1]["facts"].get("taint").is_none());
}

/// The session id of the event `decision` decided.
fn decision_session(d: &Daemon, decision: &Value) -> String {
    d.log_lines()
        .into_iter()
        .find(|l| l["type"] == "event" && l["id"] == decision["event_id"])
        .and_then(|e| e["input"]["session_id"].as_str().map(str::to_owned))
        .expect("the decided event is in the log")
}

/// A rule on `$signal.branch = "main"` denies a `touch` in a repository
/// on `main` and lets it run in one on a feature branch; each decision
/// line records the branch it read.
#[test]
fn a_signal_makes_a_rule_apply_on_main_and_not_on_a_feature_branch() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(
            r#"
[[rule]]
id = "no-touch-on-main"
action = "deny"
tool = "Bash(touch *)"
reason = "nothing is touched on main"
when = [{ field = "$signal.branch", equals = "main" }]
"#
            .into(),
        ),
        config: Some(
            "[signals.branch]\ncommand = [\"git\", \"branch\", \"--show-current\"]\nttl = \"30s\"\ntimeout = \"2s\"\n"
                .into(),
        ),
        ..DaemonOptions::default()
    });
    let mut outcomes = Vec::new();
    for branch in ["main", "feature/x"] {
        let mock = MockApi::start(&calls_script(&[bash("touch made.txt")]));
        let run = claude_run(&d, &mock);
        git_project(&run.project_dir(), branch, None);
        let out: ClaudeOutput = run.run("touch a file");
        out.assert_success();
        let made = run.project_dir().join("made.txt").exists();
        let result = mock.expect_tool_result("toolu_mock_0_");
        outcomes.push((branch, made, result.is_error, result.content));
    }
    assert!(!outcomes[0].1 && outcomes[0].2, "{outcomes:?}");
    assert!(
        outcomes[0].3.contains("nothing is touched on main"),
        "{outcomes:?}"
    );
    assert!(outcomes[1].1 && !outcomes[1].2, "{outcomes:?}");
    let decisions = bash_decisions(&d, "touch made.txt", 2);
    assert_eq!(decisions[0]["verdict"], "deny");
    assert_eq!(decisions[0]["signals"], json!({"branch": "main"}));
    assert_eq!(decisions[1]["verdict"], "none");
    assert_eq!(decisions[1]["signals"], json!({"branch": "feature/x"}));
}
