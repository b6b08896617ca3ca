//! The real Codex CLI 0.169.0, Gemini CLI 0.61.0 and Copilot CLI 1.0.102,
//! headless and offline against this project's mocks, with hooks written by
//! `hookd install --agent codex|gemini|copilot` and judged by a real
//! `hookd serve`:
//!
//! - a deny rule blocks a shell command and its reason reaches the model;
//! - a path rule blocks an edit (Codex `apply_patch`, Gemini `write_file`);
//! - with no rule deciding, the tool runs;
//! - an `ask` answered `allow` by a socket client lets the tool run;
//! - an `ask` nobody answers never hangs the CLI: Gemini is denied with the
//!   reason; Codex runs the tool (its own flow), or is denied under
//!   fail-closed;
//! - every hook the CLI fired is in the log, with the agent as harness;
//! - a Stop rule's `max_blocks` ends each agent's session (Gemini's
//!   continuation prompt does not restart the count);
//! - `context` rules on SessionStart and UserPromptSubmit reach the model;
//! - one rules file in one daemon judges Codex, Gemini and Claude Code;
//! - session timings with hookd against no hooks (printed).
//!
//! Every hook is counted on its way in: the registered `hook-forwarder` is
//! a wrapper that saves its stdin and execs the real forwarder.
//!
//! Needs the pinned CLIs: `npm ci --prefix tests/agents` and
//! `npm ci --prefix tests/e2e` (`scripts/test` does both).

use crate::support::agents;
use crate::support::claude;
use crate::support::daemon;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use agents::{
    daemon_with, one_shell_call, AgentOutput, AgentRun, Cli, ModelMock, ASK_ECHO, COMMAND,
    DENY_ECHO,
};
use daemon::Daemon;
use serde_json::{json, Value};

/// A run of `cli` with hookd installed (`hookd install --agent`) into the
/// run's own configuration, through a counting wrapper named
/// `hook-forwarder`; returns the run and the wrapper's record dir.
pub(crate) fn hooked_run(
    cli: Cli,
    mock: &ModelMock,
    d: &Daemon,
    extra: &[&str],
) -> (AgentRun, PathBuf) {
    hooked_run_at(cli, mock, &d.socket, extra)
}

/// [`hooked_run`] with the daemon's socket at `socket` (where there may be
/// no daemon).
fn hooked_run_at(cli: Cli, mock: &ModelMock, socket: &Path, extra: &[&str]) -> (AgentRun, PathBuf) {
    let run = AgentRun::new(cli, mock).env("HOOKD_SOCKET", socket);
    let records = run.scratch_dir().join("hooks-fired");
    fs::create_dir_all(&records).unwrap();
    let wrapper_dir = run.scratch_dir().join("bin");
    fs::create_dir_all(&wrapper_dir).unwrap();
    let wrapper = wrapper_dir.join("hook-forwarder");
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nf=\"{}/$(date +%s%N).$$.json\"\ncat > \"$f\"\nexec \"{}\" \"$@\" < \"$f\"\n",
            records.display(),
            daemon::forwarder_bin().display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    let settings = match cli {
        Cli::Codex => run.config_dir().join("hooks.json"),
        Cli::Gemini => run.config_dir().join("settings.json"),
        Cli::Copilot => run.copilot_hooks_file(),
    };
    let out = Command::new(daemon::hookd_bin())
        .args(["install", "--agent", cli.name(), "--settings"])
        .arg(&settings)
        .arg("--forwarder")
        .arg(&wrapper)
        .args(extra)
        .env("HOME", run.home_dir())
        .output()
        .expect("running hookd install");
    assert!(
        out.status.success(),
        "hookd install --agent {} failed:\n{}",
        cli.name(),
        String::from_utf8_lossy(&out.stderr)
    );
    (run, records)
}

/// The hook inputs the wrapper saw, in order.
fn fired(records: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = fs::read_dir(records)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|f| serde_json::from_slice(&fs::read(f).unwrap()).ok())
        .collect()
}

/// Every hook the CLI fired is in the log with `cli` as its harness, and
/// has a decision; returns the logged event names.
fn assert_all_logged(cli: Cli, d: &Daemon, records: &Path) -> Vec<String> {
    let fired = fired(records);
    let mut want: Vec<String> = fired
        .iter()
        .map(|i| i["hook_event_name"].as_str().unwrap_or("?").to_string())
        .collect();
    assert!(!want.is_empty(), "{cli:?}: no hook fired");
    let lines = d.wait_log_lines(2 * want.len());
    let events: Vec<&Value> = lines.iter().filter(|l| l["type"] == "event").collect();
    for e in &events {
        assert_eq!(e["harness"], cli.name(), "{e}");
        assert!(
            lines
                .iter()
                .any(|l| l["type"] == "decision" && l["event_id"] == e["id"]),
            "{cli:?}: no decision for {e}"
        );
    }
    let mut got: Vec<String> = events
        .iter()
        .map(|e| e["kind"].as_str().unwrap_or("?").to_string())
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "{cli:?}: fired vs logged");
    got
}

fn shell_tool_event(cli: Cli) -> &'static str {
    match cli {
        Cli::Codex | Cli::Copilot => "PreToolUse",
        Cli::Gemini => "BeforeTool",
    }
}

/// What the model is told when a hook denies the shell call.
fn blocked_text(cli: Cli, reason: &str) -> String {
    match cli {
        Cli::Codex => format!("Command blocked by PreToolUse hook: {reason}. Command: {COMMAND}"),
        Cli::Gemini => format!("Tool execution blocked: {reason}"),
        Cli::Copilot => format!("Denied by preToolUse hook: {reason}"),
    }
}

pub(crate) fn assert_shell_blocked(
    cli: Cli,
    run: &AgentRun,
    out: &AgentOutput,
    mock: &ModelMock,
    reason: &str,
) {
    out.assert_success();
    assert!(
        !run.project_dir().join("out.txt").exists(),
        "{cli:?}: the denied command ran\n{}",
        out.describe()
    );
    let sent = mock.tool_output("call_mock_0_").text;
    let expected = blocked_text(cli, reason);
    assert!(
        sent.contains(&expected),
        "{cli:?}: the model was not told {expected:?}; it got {sent:?}"
    );
}

fn assert_shell_ran(cli: Cli, run: &AgentRun, out: &AgentOutput) {
    out.assert_success();
    assert_eq!(
        fs::read_to_string(run.project_dir().join("out.txt")).unwrap_or_default(),
        "hello\n",
        "{cli:?}: the command did not run\n{}",
        out.describe()
    );
}

#[test]
fn a_deny_rule_blocks_each_agents_shell_command_and_every_hook_is_logged() {
    if agents::node_absent("a_deny_rule_blocks_each_agents_shell_command_and_every_hook_is_logged")
    {
        return;
    }
    for cli in [Cli::Codex, Cli::Gemini, Cli::Copilot] {
        let d = daemon_with(DENY_ECHO);
        let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
        let (run, records) = hooked_run(cli, &mock, &d, &[]);
        let out = run.run("write hello to out.txt");
        mock.assert_no_egress();
        assert_shell_blocked(cli, &run, &out, &mock, "hookd e2e: echo is not allowed");
        let logged = assert_all_logged(cli, &d, &records);
        eprintln!("{}: logged {}", cli.name(), logged.join(" "));
        for event in match cli {
            Cli::Codex => &["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"][..],
            Cli::Gemini => &["SessionStart", "BeforeAgent", "BeforeTool", "AfterAgent"],
            // No PostToolUse: the denied tool did not run.
            Cli::Copilot => &[
                "SessionStart",
                "UserPromptSubmit",
                "PreToolUse",
                "Stop",
                "SessionEnd",
            ],
        } {
            assert!(logged.iter().any(|l| l == event), "{cli:?}: no {event}");
        }
        let lines = d.log_lines();
        let pre = lines
            .iter()
            .find(|l| l["type"] == "event" && l["kind"] == shell_tool_event(cli))
            .unwrap();
        let decision = lines
            .iter()
            .find(|l| l["type"] == "decision" && l["event_id"] == pre["id"])
            .unwrap();
        assert_eq!(decision["verdict"], "deny", "{cli:?}");
        assert_eq!(decision["rule_ids"], json!(["no-echo"]), "{cli:?}");
    }
}

#[test]
fn a_path_rule_blocks_each_agents_edit() {
    if agents::node_absent("a_path_rule_blocks_each_agents_edit") {
        return;
    }
    let rules = r#"
[[rule]]
id = "secrets-are-read-only"
action = "deny"
tool = ["Edit(secret/**)", "Write(secret/**)"]
reason = "hookd e2e: secret/ is read-only"
"#;
    let patch = "*** Begin Patch\n*** Add File: secret/key.txt\n+leaked\n*** End Patch\n";
    for cli in [Cli::Codex, Cli::Gemini, Cli::Copilot] {
        let d = daemon_with(rules);
        let call = match cli {
            Cli::Codex => {
                json!({"type": "custom_tool_call", "name": "apply_patch", "input": patch})
            }
            Cli::Gemini => json!({"type": "tool_call", "name": "write_file",
                "input": {"file_path": "secret/key.txt", "content": "leaked\n"}}),
            Cli::Copilot => json!({"type": "tool_call", "name": "create",
                "input": {"path": "secret/key.txt", "file_text": "leaked\n"}}),
        };
        let script = json!({"turns": [
            {"content": [call]},
            {"content": [{"type": "text", "text": "done"}]}
        ]});
        let mock = ModelMock::start(cli, &script);
        let (run, records) = hooked_run(cli, &mock, &d, &[]);
        fs::create_dir_all(run.project_dir().join("secret")).unwrap();
        let out = run.run("write the key");
        mock.assert_no_egress();
        out.assert_success();
        assert!(
            !run.project_dir().join("secret/key.txt").exists(),
            "{cli:?}: the denied edit happened\n{}",
            out.describe()
        );
        let sent = mock.tool_output("call_mock_0_").text;
        assert!(
            sent.contains("hookd e2e: secret/ is read-only"),
            "{cli:?}: the model got {sent:?}"
        );
        assert_all_logged(cli, &d, &records);
        let lines = d.log_lines();
        let edit = lines
            .iter()
            .find(|l| l["type"] == "event" && l["kind"] == shell_tool_event(cli))
            .unwrap();
        // The tool the rules judged the call as: a file written (a patch
        // that only adds a file is a Write of it).
        // Copilot names its `create` tool `Write` itself: nothing to map.
        let judged = match edit["mapped_tool"].is_null() {
            true => &edit["tool"],
            false => &edit["mapped_tool"],
        };
        assert_eq!(judged, "Write", "{cli:?}: {edit}");
    }
}

#[test]
fn with_no_rule_deciding_the_tool_runs_and_sessions_are_timed() {
    if agents::node_absent("with_no_rule_deciding_the_tool_runs_and_sessions_are_timed") {
        return;
    }
    for cli in [Cli::Codex, Cli::Gemini, Cli::Copilot] {
        let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
        let bare = AgentRun::new(cli, &mock);
        let plain = bare.run("write hello to out.txt");
        assert_shell_ran(cli, &bare, &plain);

        let d = daemon_with("");
        let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
        let (run, records) = hooked_run(cli, &mock, &d, &[]);
        let out = run.run("write hello to out.txt");
        mock.assert_no_egress();
        assert_shell_ran(cli, &run, &out);
        let logged = assert_all_logged(cli, &d, &records);
        eprintln!(
            "timing: {} one shell call: no hooks {:.2} s; through hookd {:.2} s ({} hooks)",
            cli.name(),
            plain.elapsed.as_secs_f64(),
            out.elapsed.as_secs_f64(),
            logged.len()
        );
    }
}

#[test]
fn an_ask_a_client_allows_lets_each_agents_tool_run() {
    if agents::node_absent("an_ask_a_client_allows_lets_each_agents_tool_run") {
        return;
    }
    for cli in [Cli::Codex, Cli::Gemini, Cli::Copilot] {
        let d = daemon_with(ASK_ECHO);
        let client = agents::deciding_client(
            &d.socket,
            "e2e-approver",
            "allow",
            None,
            Duration::from_secs(120),
        );
        let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
        let (run, _) = hooked_run(cli, &mock, &d, &[]);
        let out = run.run("write hello to out.txt");
        mock.assert_no_egress();
        assert_shell_ran(cli, &run, &out);
        assert_eq!(client.join().unwrap(), shell_tool_event(cli), "{cli:?}");
        let decision = d
            .log_lines()
            .into_iter()
            .find(|l| l["type"] == "decision" && l["source"] == "client:e2e-approver")
            .unwrap_or_else(|| panic!("{cli:?}: no client decision logged"));
        assert_eq!(decision["verdict"], "allow");
    }
}

#[test]
fn an_ask_nobody_answers_never_hangs_either_agent() {
    if agents::node_absent("an_ask_nobody_answers_never_hangs_either_agent") {
        return;
    }
    let limit = Duration::from_secs(90);
    // Gemini would wait forever on an ask: it is denied with the reason.
    let d = daemon_with(ASK_ECHO);
    let mock = ModelMock::start(Cli::Gemini, &one_shell_call(Cli::Gemini, COMMAND));
    let (run, _) = hooked_run(Cli::Gemini, &mock, &d, &[]);
    let out = run.timeout(limit).run("write hello to out.txt");
    mock.assert_no_egress();
    let run_dir = out.describe();
    assert!(out.status.success(), "{run_dir}");
    let sent = mock.tool_output("call_mock_0_").text;
    assert!(
        sent.contains(&blocked_text(Cli::Gemini, "hookd e2e: echo needs a person")),
        "gemini: {sent}"
    );

    // Codex cannot ask: its own flow runs the tool...
    let d = daemon_with(ASK_ECHO);
    let mock = ModelMock::start(Cli::Codex, &one_shell_call(Cli::Codex, COMMAND));
    let (run, _) = hooked_run(Cli::Codex, &mock, &d, &[]);
    let out = run.run("write hello to out.txt");
    assert_shell_ran(Cli::Codex, &run, &out);

    // ... unless the hook fails closed: then it is denied with the reason.
    let d = daemon_with(ASK_ECHO);
    let mock = ModelMock::start(Cli::Codex, &one_shell_call(Cli::Codex, COMMAND));
    let (run, _) = hooked_run(Cli::Codex, &mock, &d, &["--fail-closed"]);
    let out = run.run("write hello to out.txt");
    assert_shell_blocked(
        Cli::Codex,
        &run,
        &out,
        &mock,
        "hookd e2e: echo needs a person",
    );
}

#[test]
fn one_rules_file_in_one_daemon_judges_claude_code_codex_gemini_and_copilot() {
    if agents::node_absent(
        "one_rules_file_in_one_daemon_judges_claude_code_codex_gemini_and_copilot",
    ) {
        return;
    }
    let d = daemon_with(DENY_ECHO);
    for cli in [Cli::Codex, Cli::Gemini, Cli::Copilot] {
        let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
        let (run, _) = hooked_run(cli, &mock, &d, &[]);
        let out = run.run("write hello to out.txt");
        assert_shell_blocked(cli, &run, &out, &mock, "hookd e2e: echo is not allowed");
    }

    let mock = claude::MockApi::start(&claude::one_bash_call_script(COMMAND));
    let run = claude::ClaudeRun::new(&mock).env("HOOKD_SOCKET", &d.socket);
    let out = Command::new(daemon::hookd_bin())
        .args(["install", "--scope", "project", "--project"])
        .arg(run.project_dir())
        .arg("--forwarder")
        .arg(daemon::forwarder_bin())
        .env("HOME", run.home_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run.run("write hello to out.txt");
    out.assert_success();
    assert!(
        !run.project_dir().join("out.txt").exists(),
        "{}",
        out.describe()
    );
    mock.expect_refusal("hookd e2e: echo is not allowed");

    let lines = d.log_lines();
    let denied: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "decision" && l["verdict"] == "deny")
        .filter_map(|dec| {
            lines
                .iter()
                .find(|e| e["type"] == "event" && e["id"] == dec["event_id"])
                .and_then(|e| e["harness"].as_str())
        })
        .collect();
    assert_eq!(denied, ["codex", "gemini", "copilot", "claude-code"]);
}

/// A model that answers "done" to everything.
fn says_done() -> Value {
    json!({"turns": [{"content": [{"type": "text", "text": "done"}]}], "default_text": "done"})
}

/// A Stop rule with `max_blocks = 2` ends each agent's session after two
/// blocks: Codex (Stop) and Gemini (AfterAgent), whose block makes it prompt
/// itself with the reason (a BeforeAgent), which once reset the count so
/// that Gemini looped until killed.
#[test]
fn a_stop_rule_with_max_blocks_ends_each_agents_session() {
    if agents::node_absent("a_stop_rule_with_max_blocks_ends_each_agents_session") {
        return;
    }
    let rules = r#"
[[rule]]
id = "two-more-turns"
action = "deny"
event = "Stop"
reason = "hookd e2e: check your work once more"
max_blocks = 2
"#;
    for cli in [Cli::Codex, Cli::Gemini, Cli::Copilot] {
        let d = daemon_with(rules);
        let mock = ModelMock::start(cli, &says_done());
        let (run, records) = hooked_run(cli, &mock, &d, &[]);
        // Kept: the records are in the run's directory.
        let run = run.timeout(Duration::from_secs(90));
        let out = run.run("say done");
        mock.assert_no_egress();
        out.assert_success();
        let stop = match cli {
            Cli::Codex | Cli::Copilot => "Stop",
            Cli::Gemini => "AfterAgent",
        };
        let stops = fired(&records)
            .iter()
            .filter(|i| i["hook_event_name"] == stop)
            .count();
        assert_eq!(
            stops,
            3,
            "{cli:?}: blocked twice, then let through\n{}",
            out.describe()
        );
        assert_all_logged(cli, &d, &records);
        let lines = d.log_lines();
        let verdicts: Vec<&Value> = lines
            .iter()
            .filter(|dec| {
                dec["type"] == "decision"
                    && lines.iter().any(|e| {
                        e["type"] == "event" && e["id"] == dec["event_id"] && e["kind"] == stop
                    })
            })
            .map(|dec| &dec["verdict"])
            .collect();
        assert_eq!(verdicts, ["deny", "deny", "none"], "{cli:?}");
    }
}

/// `context` rules on SessionStart and UserPromptSubmit reach each agent's
/// model: the text is in the model request's body. SessionStart is
/// observe-only, and its context was once never judged, so never sent.
#[test]
fn context_rules_reach_each_agents_model() {
    if agents::node_absent("context_rules_reach_each_agents_model") {
        return;
    }
    let rules = r#"
[[rule]]
id = "session-note"
action = "context"
event = "SessionStart"
reason = "hookd-e2e-session-note-7f3a"

[[rule]]
id = "prompt-note"
action = "context"
event = "UserPromptSubmit"
reason = "hookd-e2e-prompt-note-91c2"
"#;
    for cli in [Cli::Codex, Cli::Gemini] {
        let d = daemon_with(rules);
        let mock = ModelMock::start(cli, &says_done());
        let (run, records) = hooked_run(cli, &mock, &d, &[]);
        let out = run.run("say done");
        mock.assert_no_egress();
        out.assert_success();
        assert_all_logged(cli, &d, &records);
        let bodies: Vec<String> = mock.model_requests().iter().map(Value::to_string).collect();
        let first = bodies
            .first()
            .unwrap_or_else(|| panic!("{cli:?}: no model request"));
        for note in ["hookd-e2e-session-note-7f3a", "hookd-e2e-prompt-note-91c2"] {
            assert!(
                first.contains(note),
                "{cli:?}: {note} is not in the model request:\n{}",
                mock.describe_requests()
            );
        }
    }
}

/// Copilot cannot ask from a hook (`copilot -p` has nobody to ask): an ask
/// nobody answers is a deny with the ask's reason, well within Copilot's
/// hook timeout.
#[test]
fn an_ask_nobody_answers_denies_copilots_tool_with_the_reason() {
    if agents::node_absent("an_ask_nobody_answers_denies_copilots_tool_with_the_reason") {
        return;
    }
    let cli = Cli::Copilot;
    let d = daemon_with(ASK_ECHO);
    let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
    let (run, records) = hooked_run(cli, &mock, &d, &[]);
    let run = run.timeout(Duration::from_secs(90));
    let out = run.run("write hello to out.txt");
    mock.assert_no_egress();
    assert_shell_blocked(cli, &run, &out, &mock, "hookd e2e: echo needs a person");
    assert_all_logged(cli, &d, &records);
}

/// A client that denies the ask: Copilot's tool does not run and the
/// model gets the client's refusal.
#[test]
fn an_ask_a_client_denies_blocks_copilots_tool() {
    if agents::node_absent("an_ask_a_client_denies_blocks_copilots_tool") {
        return;
    }
    let cli = Cli::Copilot;
    let d = daemon_with(ASK_ECHO);
    let client = agents::deciding_client(
        &d.socket,
        "e2e-denier",
        "deny",
        Some("hookd e2e: a person said no"),
        Duration::from_secs(120),
    );
    let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
    let (run, _) = hooked_run(cli, &mock, &d, &[]);
    let out = run.run("write hello to out.txt");
    client.join().unwrap();
    assert_shell_blocked(cli, &run, &out, &mock, "hookd e2e: a person said no");
}

/// With the daemon down, Copilot's hook has no opinion (the tool runs) by
/// default, and blocks the tool with `--fail-closed`.
#[test]
fn copilot_with_the_daemon_down_runs_the_tool_unless_fail_closed() {
    if agents::node_absent("copilot_with_the_daemon_down_runs_the_tool_unless_fail_closed") {
        return;
    }
    let cli = Cli::Copilot;
    let gone = tempfile::tempdir().unwrap();
    let socket = gone.path().join("no-daemon.sock");
    for (extra, blocked) in [(&[][..], false), (&["--fail-closed"][..], true)] {
        let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
        let (run, _) = hooked_run_at(cli, &mock, &socket, extra);
        let out = run.run("write hello to out.txt");
        mock.assert_no_egress();
        if blocked {
            assert_shell_blocked(cli, &run, &out, &mock, "hookd could not decide (no_socket)");
        } else {
            assert_shell_ran(cli, &run, &out);
        }
    }
}
