//! End to end: the real Claude Code CLI (2.1.330) with the settings
//! `hookd install --transport http` writes: `type: "http"` handlers posting
//! to a real daemon's `/hook/claude-code` with the bearer token from
//! `$HOOKD_HTTP_TOKEN`, and the forwarder kept for the events that cannot
//! have an http handler (SessionStart above all).
//!
//! Needs `npm ci --prefix tests/e2e` (done by `scripts/test`).

use crate::support::claude;
use crate::support::daemon;

use claude::{ClaudeOutput, ClaudeRun, MockApi};
use daemon::{Daemon, DaemonOptions};
use hookd::install::{InstallOptions, Transport};
use serde_json::Value;

const DENY_RM: &str = r#"
[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "hookd e2e: rm is not allowed in this project"
"#;

/// A daemon with [`DENY_RM`] and an HTTP listener; Claude Code running
/// `command` as its one Bash call with the http transport installed.
fn run_over_http(
    command: &str,
    prepare: impl FnOnce(&ClaudeRun),
) -> (Daemon, MockApi, ClaudeRun, ClaudeOutput) {
    let script = serde_json::to_string(&claude::one_bash_call_script(command)).unwrap();
    run_script_over_http(&script, prepare)
}

/// [`run_over_http`] with the mock's script as JSON text (which may hold
/// what a `Value` cannot: a lone surrogate escape).
fn run_script_over_http(
    script: &str,
    prepare: impl FnOnce(&ClaudeRun),
) -> (Daemon, MockApi, ClaudeRun, ClaudeOutput) {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(DENY_RM.into()),
        config: Some("[http]\nlisten = \"127.0.0.1:0\"\n".into()),
        ..DaemonOptions::default()
    });
    let listen = d.status()["http"]["listen"]
        .as_str()
        .expect("status.http.listen")
        .to_string();
    let token = std::fs::read_to_string(d.dir.path().join("config/hookd/http-token")).unwrap();
    let settings = hookd::install::install_text(
        None,
        &InstallOptions {
            agent: hookd::agent::Agent::ClaudeCode,
            forwarder: daemon::forwarder_bin(),
            events: hookd::install::default_events(),
            fail_closed: Default::default(),
            statusline: None,
            transport: Transport::Http {
                base_url: format!("http://{listen}"),
            },
        },
    )
    .unwrap();
    let mock = MockApi::start_text(script);
    let run = ClaudeRun::new(&mock)
        .env("HOOKD_SOCKET", &d.socket)
        .env(hookd::install::HTTP_TOKEN_ENV, token.trim())
        .arg("--include-hook-events");
    run.write_settings(&serde_json::from_str(&settings).unwrap());
    prepare(&run);
    let out = run.run("please run the command");
    (d, mock, run, out)
}

/// The log's events of `kind`.
fn events<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "event" && l["kind"] == kind)
        .collect()
}

#[test]
fn a_deny_rule_blocks_through_an_http_hook() {
    let (d, mock, run, out) = run_over_http("rm -f victim.txt", |run| {
        std::fs::write(run.project_dir().join("victim.txt"), "still here").unwrap();
    });
    out.assert_success();
    assert!(
        run.project_dir().join("victim.txt").exists(),
        "rm ran despite the deny rule\n{}",
        out.describe()
    );
    mock.expect_refusal("hookd e2e: rm is not allowed in this project");
    let lines = d.wait_log_lines(4);
    let decision = lines
        .iter()
        .find(|l| l["type"] == "decision" && l["verdict"] == "deny")
        .unwrap_or_else(|| panic!("no deny decision logged: {lines:#?}"));
    assert_eq!(decision["rule_ids"], serde_json::json!(["no-rm"]));
    // The PreToolUse came over HTTP, which carries none of the hook
    // process's environment (the forwarder relays `CLAUDE_PROJECT_DIR`,
    // logged as `project_dir`), and SessionStart, which cannot have an
    // http hook, through the forwarder.
    let pre = events(&lines, "PreToolUse");
    assert_eq!(pre.len(), 1, "{lines:#?}");
    assert!(pre[0].get("project_dir").is_none(), "{}", pre[0]);
    let start = events(&lines, "SessionStart");
    assert_eq!(
        start.len(),
        1,
        "SessionStart through the forwarder: {lines:#?}"
    );
    assert!(start[0]["project_dir"].is_string(), "{}", start[0]);
    assert!(d.counter("fallbacks") == 0, "{}", d.status());
}

/// The model's command ends in a lone surrogate, which Claude Code posts to
/// its http hooks as `JSON.stringify` writes it (`\ud800`). The route used
/// to read the body with strict serde_json, answer no opinion, and the
/// denied command ran; the forwarder's path denied the same bytes.
#[test]
fn a_lone_surrogate_in_a_command_does_not_get_it_past_a_deny_rule_over_http() {
    let script = serde_json::to_string(&claude::one_bash_call_script("rm -f victim.txt LONE"))
        .unwrap()
        .replace("LONE", "\\ud800");
    assert!(script.contains(r"victim.txt \ud800"), "{script}");
    let (d, mock, run, out) = run_script_over_http(&script, |run| {
        std::fs::write(run.project_dir().join("victim.txt"), "still here").unwrap();
    });
    assert!(out.status.success(), "{}", out.describe());
    assert!(
        run.project_dir().join("victim.txt").exists(),
        "rm ran despite the deny rule\n{}",
        out.describe()
    );
    mock.expect_refusal("hookd e2e: rm is not allowed in this project");
    let denied_by_the_rule = |l: &Value| {
        l["type"] == "decision"
            && l["verdict"] == "deny"
            && l["rule_ids"] == serde_json::json!(["no-rm"])
    };
    daemon::poll_until(
        "the deny in the log",
        std::time::Duration::from_secs(10),
        || d.log_lines().iter().any(denied_by_the_rule),
    );
    let lines = d.log_lines();
    let pre = events(&lines, "PreToolUse");
    assert_eq!(pre.len(), 1, "{lines:#?}");
    // Over HTTP (no project_dir), the escape kept as its text.
    assert!(pre[0].get("project_dir").is_none(), "{}", pre[0]);
    assert_eq!(
        pre[0]["input"]["tool_input"]["command"],
        "rm -f victim.txt \\ud800"
    );
}

#[test]
fn without_a_matching_rule_the_tool_runs_through_an_http_hook() {
    let (d, mock, run, out) = run_over_http("echo hello > out.txt", |_| {});
    out.assert_success();
    let written = std::fs::read_to_string(run.project_dir().join("out.txt"))
        .unwrap_or_else(|e| panic!("out.txt missing ({e})\n{}", out.describe()));
    assert_eq!(written.trim(), "hello");
    assert!(!mock.expect_tool_result("toolu_mock_0_").is_error);
    let lines = d.wait_log_lines(4);
    let pre = events(&lines, "PreToolUse");
    assert_eq!(pre.len(), 1, "{lines:#?}");
    assert!(pre[0].get("project_dir").is_none(), "over HTTP: {}", pre[0]);
    assert_eq!(events(&lines, "PostToolUse").len(), 1, "{lines:#?}");
}
