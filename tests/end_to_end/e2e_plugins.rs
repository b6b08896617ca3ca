//! The real OpenCode 1.18.33 and Pi coding agent 0.73.1, headless and
//! offline against the Anthropic mock, with hookd's in-process plugin
//! installed by the real `hookd install --agent opencode|pi` (project
//! scope) and judged by a real `hookd serve`:
//!
//! - a deny rule in Claude Code's vocabulary (`Bash(echo:*)`) blocks the
//!   shell tool and its reason reaches the model as the tool's result;
//! - a command no rule denies runs, with the plugin installed for the
//!   user; every hook is logged once, with the agent as harness and the
//!   agent's session;
//! - an `ask` answered by a socket client (allow: runs; deny: blocked);
//!   a client that never answers, until the plugin's deadline: Pi is
//!   denied, OpenCode's own flow runs the tool;
//! - `Write(…)`, `Edit(…)` and `WebFetch(domain:…)` rules catch the
//!   agents' own file and fetch tools;
//! - with the daemon down the tool runs (fail-open, one line on stderr) or
//!   is blocked (installed `--fail-closed`).
//!
//! Needs the pinned CLIs: `npm ci --prefix tests/agents` (`scripts/test`).

use crate::support::agent_cli::{Finished, HeadlessRun, MockServer, ModelApi};
use crate::support::agents::{self, daemon_with, ASK_ECHO, COMMAND, DENY_ECHO};
use crate::support::daemon::{self, Daemon};
use crate::support::plugin_agents::{
    describe, one_call, plugin_run, tool_results, unexpected_egress, PluginAgent, PluginCli,
};
use crate::support::process;

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

const BOTH: [PluginCli; 2] = [PluginCli::Pi, PluginCli::OpenCode];
fn shell(cli: PluginCli, command: &str) -> Value {
    match cli {
        PluginCli::OpenCode => {
            one_call("bash", json!({"command": command, "description": "run it"}))
        }
        PluginCli::Pi => one_call("bash", json!({"command": command})),
    }
}

/// `hookd install --agent <cli> --scope project` into the run's project,
/// as a user would run it (`extra`: `--fail-closed`, or `--scope user`
/// for the run's own home and Pi's `PI_CODING_AGENT_DIR`).
fn install(run: &HeadlessRun<PluginAgent>, cli: PluginCli, extra: &[&str]) {
    let mut command = Command::new(daemon::hookd_bin());
    command.args(["install", "--agent", cli.name()]);
    if !extra.contains(&"--scope") {
        command.args(["--scope", "project"]);
    }
    let out = command
        .arg("--project")
        .arg(run.project_dir())
        .args(extra)
        .env("HOME", run.home_dir())
        .env_remove("XDG_CONFIG_HOME")
        .env("PI_CODING_AGENT_DIR", run.config_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hookd install --agent {}: {}",
        cli.name(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A run of `cli` on `script` with hookd's plugin installed, reaching the
/// daemon at `socket`.
fn hooked(
    cli: PluginCli,
    mock: &MockServer,
    socket: &Path,
    extra: &[&str],
) -> HeadlessRun<PluginAgent> {
    let run = plugin_run(cli, mock)
        .env("HOOKD_SOCKET", socket)
        .timeout(Duration::from_secs(150));
    install(&run, cli, extra);
    run
}

fn skip(test: &str) -> bool {
    agents::node_absent(test)
}

/// The one tool result the model was sent.
fn only_result(cli: PluginCli, mock: &MockServer, out: &Finished) -> (String, bool) {
    let results = tool_results(mock);
    assert_eq!(results.len(), 1, "{cli:?}: {results:?}\n{}", describe(out));
    let (_, text, is_error) = results.into_iter().next().unwrap();
    (text, is_error)
}

fn assert_blocked(
    cli: PluginCli,
    run: &HeadlessRun<PluginAgent>,
    mock: &MockServer,
    out: &Finished,
    reason: &str,
) {
    assert!(
        !run.project_dir().join("out.txt").exists(),
        "{cli:?}: the command ran\n{}",
        describe(out)
    );
    let (text, is_error) = only_result(cli, mock, out);
    assert!(text.contains(reason), "{cli:?}: the model got {text:?}");
    assert!(is_error, "{cli:?}: a block is an error result");
}

fn assert_ran(cli: PluginCli, run: &HeadlessRun<PluginAgent>, out: &Finished) {
    let written = fs::read_to_string(run.project_dir().join("out.txt")).unwrap_or_default();
    assert_eq!(
        written,
        "hello\n",
        "{cli:?}: the command did not run\n{}",
        describe(out)
    );
}

/// The daemon's event records of `cli`.
fn events_of(d: &Daemon, cli: PluginCli) -> Vec<Value> {
    d.log_lines()
        .into_iter()
        .filter(|l| l["type"] == "event" && l["harness"] == cli.name())
        .collect()
}

#[test]
fn a_deny_rule_blocks_each_agents_shell_and_the_model_gets_the_reason() {
    if skip("a_deny_rule_blocks_each_agents_shell_and_the_model_gets_the_reason") {
        return;
    }
    for cli in BOTH {
        let d = daemon_with(DENY_ECHO);
        let mock = MockServer::start(ModelApi::Anthropic, &shell(cli, COMMAND).to_string());
        let run = hooked(cli, &mock, &d.socket, &[]);
        let out = run.run_to_end("write hello to out.txt");
        assert_blocked(cli, &run, &mock, &out, "hookd e2e: echo is not allowed");
        let calls: Vec<Value> = events_of(&d, cli)
            .into_iter()
            .filter(|e| e["kind"] == cli.tool_event())
            .collect();
        assert_eq!(calls.len(), 1, "{cli:?}: {calls:#?}");
        assert_eq!(calls[0]["tool"], "bash");
        assert_eq!(calls[0]["mapped_tool"], "Bash");
        assert_eq!(calls[0]["mapped_kind"], "PreToolUse");
        assert!(
            calls[0]["session_id"]
                .as_str()
                .is_some_and(|s| !s.is_empty()),
            "{cli:?}: {}",
            calls[0]
        );
        assert_eq!(unexpected_egress(&mock), Vec::<String>::new());
    }
}

#[test]
fn a_harmless_command_runs_and_every_hook_is_logged_once() {
    if skip("a_harmless_command_runs_and_every_hook_is_logged_once") {
        return;
    }
    for cli in BOTH {
        let d = daemon_with(&daemon::rule_toml("no-rm", "deny", "Bash(rm:*)"));
        let mock = MockServer::start(ModelApi::Anthropic, &shell(cli, COMMAND).to_string());
        // Installed for the user this time: the agent finds it in its home.
        let run = hooked(cli, &mock, &d.socket, &["--scope", "user"]);
        let user_file = match cli {
            PluginCli::OpenCode => run.home_dir().join(".config/opencode/plugin/hookd.js"),
            PluginCli::Pi => run.config_dir().join("extensions/hookd.js"),
        };
        assert!(user_file.is_file(), "{cli:?}: no {}", user_file.display());
        let out = run.run_to_end("write hello to out.txt");
        assert_ran(cli, &run, &out);
        let events = events_of(&d, cli);
        let kinds: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
        let session = events
            .iter()
            .find(|e| e["kind"] == cli.tool_event())
            .and_then(|e| e["session_id"].as_str())
            .unwrap_or_else(|| panic!("{cli:?}: no tool call logged: {kinds:?}"))
            .to_string();
        let calls = kinds.iter().filter(|k| **k == cli.tool_event()).count();
        assert_eq!(calls, 1, "{cli:?}: {kinds:?}");
        // Every event the plugin relayed names the session (Pi's session
        // events too); none is logged twice.
        let mut ids: Vec<&str> = events.iter().filter_map(|e| e["id"].as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), events.len(), "{cli:?}: an event logged twice");
        for e in &events {
            if e["session_id"].is_string() {
                assert_eq!(e["session_id"], session.as_str(), "{cli:?}: {e}");
            }
        }
        assert!(kinds.len() >= 3, "{cli:?}: only {kinds:?}");
        // The coverage alarm pairs the call's two ends by the id the plugin
        // relays: judged, and nothing ran unjudged once the 2 s a lone
        // end waits for its pair have passed.
        let coverage = |s: &Value| coverage_of(s, cli);
        d.wait_for_status(&format!("{cli:?}: the call judged"), |s| {
            coverage(s)["judged"].as_u64() >= Some(1)
        });
        std::thread::sleep(Duration::from_millis(2500));
        assert_eq!(coverage(&d.status())["unjudged"], 0, "{cli:?}");
        assert!(
            !d.log_lines()
                .iter()
                .any(|l| l["type"] == "unjudged_tool_call"),
            "{cli:?}: an alarm for a healthy session"
        );
    }
}

/// `cli`'s row of the coverage alarm in a status.
fn coverage_of(status: &Value, cli: PluginCli) -> Value {
    status["coverage"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["agent"] == cli.name())
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_plugin_that_misses_tool_calls_raises_the_coverage_alarm() {
    if skip("a_plugin_that_misses_tool_calls_raises_the_coverage_alarm") {
        return;
    }
    for cli in BOTH {
        let d = daemon_with(&daemon::rule_toml("no-rm", "deny", "Bash(rm:*)"));
        let mock = MockServer::start(ModelApi::Anthropic, &shell(cli, COMMAND).to_string());
        let run = hooked(cli, &mock, &d.socket, &[]);
        // A plugin edited (or out of date) so that it no longer hooks the
        // tool call itself, only its result: the call runs unjudged.
        let (file, hook, unhooked) = match cli {
            PluginCli::OpenCode => (
                run.project_dir().join(".opencode/plugin/hookd.js"),
                r#""tool.execute.before":"#,
                r#""tool.execute.before.off":"#,
            ),
            PluginCli::Pi => (
                run.project_dir().join(".pi/extensions/hookd.js"),
                r#"pi.on("tool_call","#,
                r#"pi.on("tool_call_off","#,
            ),
        };
        let text = fs::read_to_string(&file).unwrap();
        assert!(
            text.contains(hook),
            "{cli:?}: {hook} not in {}",
            file.display()
        );
        fs::write(&file, text.replacen(hook, unhooked, 1)).unwrap();
        let out = run.run_to_end("write hello to out.txt");
        assert_ran(cli, &run, &out);
        let status = d.wait_for_status(&format!("{cli:?}: 1 tool call unjudged"), |s| {
            coverage_of(s, cli)["unjudged"] == 1
        });
        assert_eq!(coverage_of(&status, cli)["judged"], 0, "{cli:?}");
        let alarms = process::poll_last(
            Duration::from_secs(10),
            Duration::from_millis(50),
            || d.log_lines(),
            |lines| lines.iter().any(|l| l["type"] == "unjudged_tool_call"),
        );
        assert!(
            alarms
                .iter()
                .any(|l| l["type"] == "unjudged_tool_call" && l["harness"] == cli.name()),
            "{cli:?}: no alarm in the log"
        );
    }
}

#[test]
fn an_ask_is_decided_by_a_socket_client() {
    if skip("an_ask_is_decided_by_a_socket_client") {
        return;
    }
    for cli in BOTH {
        for verdict in ["allow", "deny"] {
            let d = daemon_with(ASK_ECHO);
            let client = agents::deciding_client(
                &d.socket,
                "e2e-plugins",
                verdict,
                Some("decided by the e2e client"),
                Duration::from_secs(150),
            );
            let mock = MockServer::start(ModelApi::Anthropic, &shell(cli, COMMAND).to_string());
            let run = hooked(cli, &mock, &d.socket, &[]);
            let out = run.run_to_end("write hello to out.txt");
            assert_eq!(client.join().unwrap(), cli.tool_event(), "{cli:?}");
            if verdict == "allow" {
                assert_ran(cli, &run, &out);
            } else {
                assert_blocked(cli, &run, &mock, &out, "decided by the e2e client");
            }
        }
    }
}

#[test]
fn an_ask_nobody_answers_ends_at_the_plugins_deadline() {
    if skip("an_ask_nobody_answers_ends_at_the_plugins_deadline") {
        return;
    }
    for cli in BOTH {
        let d = daemon_with(ASK_ECHO);
        // A client that sees the ask pending and never decides: the ask
        // waits for it until the plugin's deadline.
        let mut watcher = daemon::RawClient::hello(&d.socket, "e2e-silent");
        let ok = watcher.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
        assert_eq!(ok["type"], "ok", "{ok}");
        let mock = MockServer::start(ModelApi::Anthropic, &shell(cli, COMMAND).to_string());
        let run = hooked(cli, &mock, &d.socket, &[]).env("HOOKD_PLUGIN_DEADLINE_MS", "3000");
        let out = run.run_to_end("write hello to out.txt");
        let pending = watcher.wait_for("the ask, pending", |f| {
            f["type"] == "event" && f["pending"] == true
        });
        assert_eq!(pending["event"]["kind"], cli.tool_event());
        let held = pending["deadline_ms"].as_u64().unwrap_or(0);
        assert!(
            held > 0 && held <= 3000,
            "{cli:?}: held for {held} ms: {pending}"
        );
        match cli {
            // Pi has no prompt of its own: nobody asked is a deny.
            PluginCli::Pi => {
                assert_blocked(cli, &run, &mock, &out, "hookd e2e: echo needs a person")
            }
            // OpenCode's own permission flow goes on.
            PluginCli::OpenCode => assert_ran(cli, &run, &out),
        }
    }
}

#[test]
fn file_and_fetch_tools_are_caught_by_claude_rules() {
    if skip("file_and_fetch_tools_are_caught_by_claude_rules") {
        return;
    }
    let rules = r#"
[[rule]]
id = "no-secret-writes"
action = "deny"
tool = "Write(**/secret*)"
reason = "hookd e2e: no secret writes"

[[rule]]
id = "no-secret-edits"
action = "deny"
tool = "Edit(**/notes.txt)"
reason = "hookd e2e: notes are read-only"

[[rule]]
id = "no-evil-fetch"
action = "deny"
tool = "WebFetch(domain:evil.example)"
reason = "hookd e2e: not that host"
"#;
    let cases: Vec<(PluginCli, &str, Value, &str)> = vec![
        (
            PluginCli::Pi,
            "write",
            json!({"path": "secret.txt", "content": "x"}),
            "no secret writes",
        ),
        (
            PluginCli::Pi,
            "edit",
            json!({"path": "notes.txt", "edits": [{"oldText": "a", "newText": "b"}]}),
            "notes are read-only",
        ),
        (
            PluginCli::OpenCode,
            "write",
            json!({"filePath": "secret.txt", "content": "x"}),
            "no secret writes",
        ),
        (
            PluginCli::OpenCode,
            "edit",
            json!({"filePath": "notes.txt", "oldString": "a", "newString": "b"}),
            "notes are read-only",
        ),
        (
            PluginCli::OpenCode,
            "webfetch",
            json!({"url": "https://evil.example/x", "format": "text"}),
            "not that host",
        ),
    ];
    for (cli, tool, input, reason) in cases {
        let d = daemon_with(rules);
        let mock = MockServer::start(ModelApi::Anthropic, &one_call(tool, input).to_string());
        let run = hooked(cli, &mock, &d.socket, &[]);
        fs::write(run.project_dir().join("notes.txt"), "a\n").unwrap();
        let out = run.run_to_end("do it");
        let (text, is_error) = only_result(cli, &mock, &out);
        assert!(
            text.contains(reason),
            "{cli:?} {tool}: the model got {text:?}"
        );
        assert!(is_error, "{cli:?} {tool}");
        assert!(!run.project_dir().join("secret.txt").exists());
        assert_eq!(
            fs::read_to_string(run.project_dir().join("notes.txt")).unwrap(),
            "a\n"
        );
    }
}

#[test]
fn with_the_daemon_down_tools_run_or_are_blocked_when_fail_closed() {
    if skip("with_the_daemon_down_tools_run_or_are_blocked_when_fail_closed") {
        return;
    }
    for cli in BOTH {
        let nowhere = tempfile::tempdir().unwrap();
        let socket = nowhere.path().join("hookd.sock");
        let mock = MockServer::start(ModelApi::Anthropic, &shell(cli, COMMAND).to_string());
        let run = hooked(cli, &mock, &socket, &[]);
        let out = run.run_to_end("write hello to out.txt");
        assert_ran(cli, &run, &out);
        assert!(
            out.stderr.contains("hookd: ") && out.stderr.contains("no opinion"),
            "{cli:?}: no fallback line\n{}",
            describe(&out)
        );

        let mock = MockServer::start(ModelApi::Anthropic, &shell(cli, COMMAND).to_string());
        let run = hooked(cli, &mock, &socket, &["--fail-closed"]);
        let out = run.run_to_end("write hello to out.txt");
        assert_blocked(
            cli,
            &run,
            &mock,
            &out,
            "blocked because the hook is fail-closed",
        );
    }
}

#[test]
fn the_plugin_reconnects_after_a_daemon_restart_within_one_session() {
    if skip("the_plugin_reconnects_after_a_daemon_restart_within_one_session") {
        return;
    }
    for cli in BOTH {
        // The plugin's socket path is a link the test repoints from the
        // first daemon to the second, as a restart would reuse one path.
        let link_dir = tempfile::tempdir().unwrap();
        let link = link_dir.path().join("hookd.sock");
        let mut first = daemon_with(DENY_ECHO);
        std::os::unix::fs::symlink(&first.socket, &link).unwrap();
        let call = |command: &str| match cli {
            PluginCli::OpenCode => json!({"type": "tool_call", "name": "bash",
                                          "input": {"command": command, "description": "run it"}}),
            PluginCli::Pi => {
                json!({"type": "tool_call", "name": "bash", "input": {"command": command}})
            }
        };
        let script = json!({"turns": [
            {"content": [call("sleep 6; printf one > one.txt")]},
            {"content": [call("echo two > two.txt")]},
            {"content": [{"type": "text", "text": "done"}]}
        ], "default_text": "done"});
        let mock = MockServer::start(ModelApi::Anthropic, &script.to_string());
        let run = hooked(cli, &mock, &link, &[]);
        let second = daemon_with(DENY_ECHO);
        let restart = {
            let link = link.clone();
            let second_socket = second.socket.clone();
            let first_log = first.log.clone();
            std::thread::spawn(move || {
                // Once the first call is logged (it then sleeps 6 s), the
                // first daemon stops and the path leads to the second.
                crate::support::process::poll_until(
                    "the first call to reach the first daemon",
                    Duration::from_secs(120),
                    || {
                        daemon::read_log(&first_log)
                            .iter()
                            .any(|l| l["type"] == "event" && l["tool"] == "bash")
                    },
                );
                fs::remove_file(&link).unwrap();
                std::os::unix::fs::symlink(&second_socket, &link).unwrap();
            })
        };
        // Stopped from this thread once the link moved.
        let out = {
            let handle = std::thread::spawn(move || {
                restart.join().unwrap();
                first.stop();
                first
            });
            let out = run.run_to_end("run both");
            drop(handle.join().unwrap());
            out
        };
        assert_eq!(
            fs::read_to_string(run.project_dir().join("one.txt")).unwrap_or_default(),
            "one",
            "{}",
            describe(&out)
        );
        assert!(
            !run.project_dir().join("two.txt").exists(),
            "{cli:?}: the second call ran\n{}",
            describe(&out)
        );
        let results = tool_results(&mock);
        assert!(
            results
                .iter()
                .any(|(_, text, _)| text.contains("hookd e2e: echo is not allowed")),
            "{cli:?}: {results:?}"
        );
        let calls = events_of(&second, cli)
            .into_iter()
            .filter(|e| e["kind"] == cli.tool_event())
            .count();
        assert_eq!(calls, 1, "{cli:?}: the second daemon judged {calls} calls");
    }
}
