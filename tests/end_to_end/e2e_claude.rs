//! End to end: the real Claude Code CLI (2.1.330, from npm) runs headless
//! against this project's scripted mock of the Messages API, with the real
//! `hook-forwarder` registered for every hook event in the temp project's
//! `.claude/settings.json`, talking to a real `hookd serve`.
//!
//! Needs `npm ci --prefix tests/e2e` (done by `scripts/test`).

use crate::support::claude;
use crate::support::daemon;

use std::collections::BTreeSet;

use claude::{ClaudeOutput, ClaudeRun, MockApi};
use daemon::{Daemon, DaemonOptions};

const DENY_RM: &str = r#"
[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "hookd e2e: rm is not allowed in this project"
"#;

/// Runs `command` as the model's one Bash call, with the forwarder registered
/// for all 33 events and `hookd` judging with `rules`.
fn run_with_hookd(
    rules: Option<&str>,
    command: &str,
    prepare: impl FnOnce(&ClaudeRun),
) -> (Daemon, MockApi, ClaudeRun, ClaudeOutput) {
    let script = serde_json::to_string(&claude::one_bash_call_script(command)).unwrap();
    run_script_with_hookd(rules, &script, prepare)
}

/// [`run_with_hookd`] with the mock's script as JSON text.
fn run_script_with_hookd(
    rules: Option<&str>,
    script: &str,
    prepare: impl FnOnce(&ClaudeRun),
) -> (Daemon, MockApi, ClaudeRun, ClaudeOutput) {
    let d = Daemon::start_with(DaemonOptions {
        rules: rules.map(str::to_owned),
        ..DaemonOptions::default()
    });
    let mock = MockApi::start_text(script);
    let run = ClaudeRun::new(&mock)
        .env("HOOKD_SOCKET", &d.socket)
        .arg("--include-hook-events");
    let forwarder = claude::command_hook(daemon::forwarder_bin(), &["--timeout", "20"]);
    run.write_settings(&claude::hooks_settings(claude::ALL_HOOK_EVENTS, forwarder));
    prepare(&run);
    let out = run.run("please run the command");
    (d, mock, run, out)
}

/// Hook events Claude Code reports having started (`--include-hook-events`).
fn hooks_fired(out: &ClaudeOutput) -> Vec<String> {
    out.messages
        .iter()
        .filter(|m| m["type"] == "system" && m["subtype"] == "hook_started")
        .filter_map(|m| m["hook_event"].as_str().map(str::to_owned))
        .collect()
}

/// No hook response may carry a forwarder fallback line: every hook reached the daemon.
fn assert_no_fallbacks(out: &ClaudeOutput) {
    for m in out.messages_of_type("system") {
        let stderr = m["stderr"].as_str().unwrap_or_default();
        assert!(
            !stderr.contains("hookd-forwarder: fallback"),
            "a hook fell back: {m}"
        );
    }
}

#[test]
fn deny_rule_blocks_rm_and_the_reason_reaches_the_model() {
    let (d, mock, run, out) = run_with_hookd(Some(DENY_RM), "rm -f victim.txt", |run| {
        std::fs::write(run.project_dir().join("victim.txt"), "still here").unwrap();
    });
    out.assert_success();
    assert_no_fallbacks(&out);
    assert!(
        run.project_dir().join("victim.txt").exists(),
        "rm ran despite the deny rule\n{}",
        out.describe()
    );
    mock.expect_refusal("hookd e2e: rm is not allowed in this project");

    let lines = d.wait_log_lines(2);
    let decision = lines
        .iter()
        .find(|l| l["type"] == "decision" && l["verdict"] == "deny")
        .unwrap_or_else(|| panic!("no deny decision logged: {lines:#?}"));
    assert_eq!(decision["source"], "rule");
    assert_eq!(decision["rule_ids"], serde_json::json!(["no-rm"]));
    // PostToolUse does not fire for a denied tool.
    assert!(!hooks_fired(&out).iter().any(|e| e == "PostToolUse"));
}

/// The model's command ends in a lone surrogate, which Claude Code passes to
/// its hooks as `JSON.stringify` writes it (`\ud800`). serde_json refuses
/// that escape; hookd used to answer `invalid_json`, the forwarder fell back
/// to no opinion and the denied command ran.
#[test]
fn a_lone_surrogate_in_a_command_does_not_get_it_past_a_deny_rule() {
    let script = serde_json::to_string(&claude::one_bash_call_script("rm -f victim.txt LONE"))
        .unwrap()
        .replace("LONE", "\\ud800");
    assert!(script.contains(r"victim.txt \ud800"), "{script}");
    let (d, mock, run, out) = run_script_with_hookd(Some(DENY_RM), &script, |run| {
        std::fs::write(run.project_dir().join("victim.txt"), "still here").unwrap();
    });
    // The CLI's own stream-json echoes the escape too (in the result's
    // permission denials), so its lines are read the way hookd reads them.
    assert!(out.status.success(), "{}", out.describe());
    let result = out
        .stdout
        .lines()
        .filter_map(|l| {
            hookd::protocol::json::parse_lenient::<serde_json::Value>(l.as_bytes()).ok()
        })
        .find(|m| m["type"] == "result")
        .unwrap_or_else(|| panic!("no result message\n{}", out.describe()));
    assert_eq!(result["subtype"], "success", "{result}");
    assert_no_fallbacks(&out);
    assert!(
        run.project_dir().join("victim.txt").exists(),
        "rm ran despite the deny rule\n{}",
        out.describe()
    );
    mock.expect_refusal("hookd e2e: rm is not allowed in this project");
    let lines = d.wait_log_lines(2);
    let event = lines
        .iter()
        .find(|l| l["type"] == "event" && l["kind"] == "PreToolUse")
        .unwrap_or_else(|| panic!("no PreToolUse logged: {lines:#?}"));
    // Claude Code relayed the escape itself, not a replacement character.
    assert_eq!(
        event["input"]["tool_input"]["command"],
        "rm -f victim.txt \\ud800"
    );
}

#[test]
fn without_a_matching_rule_the_tool_runs() {
    let (_d, mock, run, out) = run_with_hookd(Some(DENY_RM), "echo hello > out.txt", |_| {});
    out.assert_success();
    assert_no_fallbacks(&out);
    let written = std::fs::read_to_string(run.project_dir().join("out.txt"))
        .unwrap_or_else(|e| panic!("out.txt missing ({e})\n{}", out.describe()));
    assert_eq!(written.trim(), "hello");
    let result = mock.expect_tool_result("toolu_mock_0_");
    assert!(!result.is_error, "{}", mock.describe_requests());
}

#[test]
fn every_event_claude_code_fired_reached_the_log() {
    let (d, _mock, _run, out) = run_with_hookd(None, "echo hi", |_| {});
    out.assert_success();
    assert_no_fallbacks(&out);
    let fired = hooks_fired(&out);
    assert!(
        fired.len() >= 8,
        "expected the full hook sequence, got {fired:?}\n{}",
        out.describe()
    );
    // SessionEnd fires as the CLI exits; give the log writer a moment.
    let lines = d.wait_log_lines(fired.len() * 2);
    let logged: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "event")
        .filter_map(|l| l["kind"].as_str())
        .collect();
    let fired_set: BTreeSet<&str> = fired.iter().map(String::as_str).collect();
    for event in &fired_set {
        let want = fired.iter().filter(|e| e == event).count();
        let got = logged.iter().filter(|e| *e == event).count();
        assert!(
            got >= want,
            "{event}: fired {want}×, logged {got}×\nlogged: {logged:?}"
        );
    }
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ] {
        assert!(
            logged.contains(&event),
            "{event} never reached the daemon: {logged:?}"
        );
    }
    // Every event line has its decision, and all came from one session.
    let decisions = lines.iter().filter(|l| l["type"] == "decision").count();
    assert_eq!(decisions, logged.len());
    let sessions: BTreeSet<&str> = lines
        .iter()
        .filter(|l| l["type"] == "event")
        .filter_map(|l| l["session_id"].as_str())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
}

/// The obvious Stop rule costs one extra model turn, not a loop: hookd
/// blocks the first Stop, Claude Code goes on once (its next Stop says
/// `stop_hook_active`), the rule lets that one through and the session
/// ends. Before stop chains, the same rule blocked 9 Stops in a row and the
/// model was asked 10 times.
#[test]
fn a_stop_deny_rule_blocks_once_then_the_session_ends() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(
            r#"
[[rule]]
id = "keep-going"
action = "deny"
event = "Stop"
reason = "hookd e2e: check your work once more"
"#
            .into(),
        ),
        ..DaemonOptions::default()
    });
    let mock = MockApi::start(&serde_json::json!({
        "turns": [{"content": [{"type": "text", "text": "all done"}]}],
        "default_text": "checked again, done"
    }));
    let run = ClaudeRun::new(&mock).env("HOOKD_SOCKET", &d.socket);
    let forwarder = claude::command_hook(daemon::forwarder_bin(), &["--timeout", "20"]);
    run.write_settings(&claude::hooks_settings(claude::ALL_HOOK_EVENTS, forwarder));
    let out = run.run("say done");
    out.assert_success();
    assert_no_fallbacks(&out);

    // The model was asked twice in the main loop: the first turn, and the
    // one the block bought. (Side requests carry no tools; a request that
    // copies the conversation has the same turn number.)
    let turns: BTreeSet<u64> = mock
        .requests()
        .iter()
        .filter(|r| matches!(r["reply"]["kind"].as_str(), Some("turn" | "default")))
        .filter_map(|r| r["reply"]["turn"].as_u64())
        .collect();
    assert_eq!(
        turns,
        BTreeSet::from([0, 1]),
        "model turns\n{}",
        mock.describe_requests()
    );
    let asked_again = mock.message_requests().iter().any(|body| {
        body.to_string()
            .contains("hookd e2e: check your work once more")
    });
    assert!(
        asked_again,
        "the block's reason never reached the model\n{}",
        mock.describe_requests()
    );

    // Two Stops reached hookd: the first blocked by the rule, the second
    // (stop_hook_active) let through.
    // The log writer is asynchronous: wait for both Stops' decisions.
    let stop_decisions = |lines: &Vec<serde_json::Value>| {
        lines
            .iter()
            .filter(|l| l["type"] == "event" && l["kind"] == "Stop")
            .filter(|e| {
                lines
                    .iter()
                    .any(|l| l["type"] == "decision" && l["event_id"] == e["id"])
            })
            .count()
    };
    let lines = daemon::poll_last(
        std::time::Duration::from_secs(10),
        std::time::Duration::from_millis(20),
        || d.log_lines(),
        |lines| stop_decisions(lines) >= 2,
    );
    let stops: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["type"] == "event" && l["kind"] == "Stop")
        .collect();
    assert_eq!(stops.len(), 2, "{lines:#?}");
    assert_eq!(stops[1]["input"]["stop_hook_active"], true);
    let verdict_of = |event: &serde_json::Value| {
        lines
            .iter()
            .find(|l| l["type"] == "decision" && l["event_id"] == event["id"])
            .map(|l| (l["verdict"].clone(), l["rule_ids"].clone()))
    };
    assert_eq!(
        verdict_of(stops[0]),
        Some((serde_json::json!("deny"), serde_json::json!(["keep-going"])))
    );
    assert_eq!(
        verdict_of(stops[1]),
        Some((serde_json::json!("none"), serde_json::json!([])))
    );
}
