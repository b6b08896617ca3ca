//! End to end with the real Claude Code CLI (2.1.330): which duplicate
//! registrations really make a hook reach hookd twice. Claude Code runs an
//! event's identical handlers once (same command, args, `if` and shell),
//! wherever they are registered; handlers that differ (other args) each
//! run. `hookd doctor` flags exactly the second case.
//!
//! Needs `npm ci --prefix tests/e2e` (done by `scripts/test`).

use crate::support::claude;
use crate::support::daemon;

use std::collections::BTreeMap;
use std::process::{Command, Output};

use claude::{ClaudeRun, MockApi};
use daemon::Daemon;
use serde_json::json;

/// `hookd ARGS` with the run's home and config dir.
fn hookd(run: &ClaudeRun, args: &[&str]) -> Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .env("HOME", run.home_dir())
        .env("CLAUDE_CONFIG_DIR", run.config_dir())
        .env_remove("HOOKD_SOCKET")
        .output()
        .unwrap()
}

fn install(run: &ClaudeRun, scope: &str) {
    let project = run.project_dir();
    let forwarder = daemon::forwarder_bin();
    let out = hookd(
        run,
        &[
            "install",
            "--scope",
            scope,
            "--project",
            project.to_str().unwrap(),
            "--forwarder",
            forwarder.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// How many times each event kind of `session` reached the daemon.
fn kinds_of_session(d: &Daemon, session: &str) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for l in d.log_lines() {
        if l["type"] == "event" && l["session_id"] == session {
            *counts
                .entry(l["kind"].as_str().unwrap().to_string())
                .or_default() += 1;
        }
    }
    counts
}

/// Runs one session and returns its id, once its SessionEnd is logged.
fn session(run: &ClaudeRun, d: &Daemon) -> String {
    let out = run.run("please run the command");
    out.assert_success();
    let id = out.result()["session_id"].as_str().unwrap().to_string();
    daemon::poll_until(
        "SessionEnd logged",
        std::time::Duration::from_secs(10),
        || kinds_of_session(d, &id).contains_key("SessionEnd"),
    );
    id
}

/// The `events` line of `hookd doctor` for the run's project.
fn doctor_events(run: &ClaudeRun, d: &Daemon) -> String {
    let project = run.project_dir();
    let out = hookd(
        run,
        &[
            "doctor",
            "--socket",
            d.socket.to_str().unwrap(),
            "--project",
            project.to_str().unwrap(),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.lines()
        .find(|l| l.contains(" events: "))
        .unwrap_or_else(|| panic!("no events line:\n{text}"))
        .to_string()
}

#[test]
fn claude_code_runs_identical_handlers_once_and_differing_ones_each() {
    let d = Daemon::start();
    let mock = MockApi::start(&claude::one_bash_call_script("echo hi"));
    let run = ClaudeRun::new(&mock).env("HOOKD_SOCKET", &d.socket);

    // The same handler in the user and the project settings.
    install(&run, "user");
    install(&run, "project");
    let first = session(&run, &d);
    let counts = kinds_of_session(&d, &first);
    // (MessageDisplay fires once per message: twice in this session.)
    for kind in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ] {
        assert_eq!(counts.get(kind), Some(&1), "{kind}: {counts:?}");
    }
    let events = doctor_events(&run, &d);
    assert!(events.starts_with("✓ "), "{events}");

    // A PreToolUse handler with other args in the local settings: it runs
    // beside the installed one.
    let handler = json!({"type": "command", "command": daemon::forwarder_bin(),
                         "args": ["--timeout", "20"], "timeout": 30});
    std::fs::write(
        run.project_dir().join(".claude/settings.local.json"),
        json!({"hooks": {"PreToolUse": [{"hooks": [handler]}]}}).to_string(),
    )
    .unwrap();
    let second = session(&run, &d);
    let counts = kinds_of_session(&d, &second);
    assert_eq!(counts.get("PreToolUse"), Some(&2), "{counts:?}");
    assert_eq!(counts.get("UserPromptSubmit"), Some(&1), "{counts:?}");
    let events = doctor_events(&run, &d);
    assert!(
        events.starts_with("✗ ") && events.contains("PreToolUse reaches hookd 2 times"),
        "{events}"
    );
}
