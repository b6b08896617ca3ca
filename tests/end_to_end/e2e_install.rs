//! End to end: `hookd install --scope project` writes the hooks, the real
//! Claude Code CLI (2.1.330) picks them up, and hookd's rules judge its tool
//! calls. Also the measurement behind the "no async hooks" decision.
//!
//! Needs `npm ci --prefix tests/e2e` (done by `scripts/test`).

use crate::support::claude;
use crate::support::daemon;

use std::process::Command;
use std::time::{Duration, Instant};

use claude::{ClaudeOutput, ClaudeRun, MockApi};
use daemon::{Daemon, DaemonOptions};
use serde_json::{json, Value};

const DENY_RM: &str = r#"
[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "hookd e2e: rm is not allowed in this project"
"#;

/// `hookd install --scope project` into the run's project, registering the
/// built forwarder, plus `extra` flags.
fn install_into(run: &ClaudeRun, extra: &[&str]) {
    let out = Command::new(daemon::hookd_bin())
        .args(["install", "--scope", "project", "--project"])
        .arg(run.project_dir())
        .arg("--forwarder")
        .arg(daemon::forwarder_bin())
        .args(extra)
        .env("HOME", run.home_dir())
        .output()
        .expect("running hookd install");
    assert!(
        out.status.success(),
        "hookd install failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `PATH` with the built `hook-forwarder` and `hookd` first, as a user
/// who installed them has it.
fn path_with_the_binaries() -> std::ffi::OsString {
    let bin = daemon::forwarder_bin().parent().unwrap().to_path_buf();
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&rest))).unwrap()
}

/// `hookd install --scope project` into the run's project with no
/// `--forwarder`: the shared file names `hook-forwarder`, found on `path`.
fn install_shared_into(run: &ClaudeRun, path: &std::ffi::OsStr) {
    let out = Command::new(daemon::hookd_bin())
        .args(["install", "--scope", "project", "--project"])
        .arg(run.project_dir())
        .env("HOME", run.home_dir())
        .env("PATH", path)
        .output()
        .expect("running hookd install");
    assert!(
        out.status.success(),
        "hookd install failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Hook events Claude Code reports having started (`--include-hook-events`).
fn hooks_fired(out: &ClaudeOutput) -> Vec<String> {
    out.messages
        .iter()
        .filter(|m| m["type"] == "system" && m["subtype"] == "hook_started")
        .filter_map(|m| m["hook_event"].as_str().map(str::to_owned))
        .collect()
}

/// The forwarder fallback lines Claude Code saw on hook stderr.
fn fallbacks(out: &ClaudeOutput) -> Vec<String> {
    out.messages_of_type("system")
        .iter()
        .filter_map(|m| m["stderr"].as_str())
        .filter(|s| s.contains("hookd-forwarder: fallback"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn hooks_written_by_install_let_a_deny_rule_block_rm() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(DENY_RM.into()),
        ..DaemonOptions::default()
    });
    let mock = MockApi::start(&claude::one_bash_call_script("rm -f victim.txt"));
    // The project's shared file runs `hook-forwarder` from PATH.
    let path = path_with_the_binaries();
    let run = ClaudeRun::new(&mock)
        .env("HOOKD_SOCKET", &d.socket)
        .env("PATH", &path)
        .arg("--include-hook-events");
    install_shared_into(&run, &path);
    let settings =
        std::fs::read_to_string(run.project_dir().join(".claude/settings.json")).unwrap();
    assert!(
        settings.contains(r#""command": "hook-forwarder""#),
        "{settings}"
    );
    std::fs::write(run.project_dir().join("victim.txt"), "still here").unwrap();

    let out = run.run("please run the command");
    out.assert_success();
    assert_eq!(
        fallbacks(&out),
        Vec::<String>::new(),
        "every hook reached hookd"
    );
    assert!(
        run.project_dir().join("victim.txt").exists(),
        "rm ran despite the deny rule\n{}",
        out.describe()
    );
    mock.expect_refusal("hookd e2e: rm is not allowed in this project");
    let fired = hooks_fired(&out);
    assert!(fired.iter().any(|e| e == "PreToolUse"), "{fired:?}");

    // SessionEnd (forwarder 1 s, timeout 2 s) fires as the CLI exits.
    let lines = d.wait_log_lines(2 * (fired.len() + 1));
    let decision = lines
        .iter()
        .find(|l| l["type"] == "decision" && l["verdict"] == "deny")
        .unwrap_or_else(|| panic!("no deny decision logged: {lines:#?}"));
    assert_eq!(decision["rule_ids"], json!(["no-rm"]));
    let logged: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "event")
        .filter_map(|l| l["kind"].as_str())
        .collect();
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "Stop",
        "SessionEnd",
    ] {
        assert!(
            logged.contains(&event),
            "{event} never reached hookd: {logged:?}"
        );
    }
}

/// `hookd install --fail-closed` with the daemon down: the prompt still
/// goes through (UserPromptSubmit is not a tool event), the tool call is
/// blocked. Before scopes, the same install refused every prompt.
#[test]
fn a_fail_closed_install_blocks_rm_but_not_the_prompt_when_the_daemon_is_down() {
    let mock = MockApi::start(&claude::one_bash_call_script("rm -f victim.txt"));
    let run = ClaudeRun::new(&mock).arg("--include-hook-events");
    // Nothing listens here.
    let socket = run.scratch_dir().join("no-daemon.sock");
    let run = run.env("HOOKD_SOCKET", socket);
    install_into(&run, &["--fail-closed"]);
    std::fs::write(run.project_dir().join("victim.txt"), "still here").unwrap();

    let out = run.run("please run the command");
    out.assert_success();
    assert!(
        run.project_dir().join("victim.txt").exists(),
        "rm ran although the hook is fail-closed and no daemon answers\n{}",
        out.describe()
    );
    // The model got the prompt and was told why its tool call was refused.
    mock.expect_refusal("hookd could not decide (no_socket)");
    let fell_back = fallbacks(&out);
    for event in ["UserPromptSubmit", "PreToolUse"] {
        assert!(
            fell_back
                .iter()
                .any(|l| l.contains(&format!("event={event} reason=no_socket"))),
            "{event}: {fell_back:?}\n{}",
            out.describe()
        );
    }
}

/// `--fail-closed=all` keeps the old, wider behaviour: with the daemon down
/// the prompt itself is refused, and the model never sees it.
#[test]
fn a_fail_closed_all_install_refuses_the_prompt_when_the_daemon_is_down() {
    let mock = MockApi::start(&claude::one_bash_call_script("rm -f victim.txt"));
    let run = ClaudeRun::new(&mock).arg("--include-hook-events");
    let socket = run.scratch_dir().join("no-daemon.sock");
    let run = run.env("HOOKD_SOCKET", socket);
    install_into(&run, &["--fail-closed=all"]);
    std::fs::write(run.project_dir().join("victim.txt"), "still here").unwrap();

    let out = run.run("please run the command");
    assert!(run.project_dir().join("victim.txt").exists());
    let main_loop = mock
        .message_requests()
        .into_iter()
        .filter(|body| body["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .count();
    assert_eq!(
        main_loop,
        0,
        "the prompt reached the model\n{}\n{}",
        mock.describe_requests(),
        out.describe()
    );
    assert!(
        out.stdout.contains("hookd could not decide (no_socket)"),
        "{}",
        out.describe()
    );
}

#[test]
fn user_scope_writes_where_claude_code_reads_user_settings() {
    let d = Daemon::start();
    let mock = MockApi::start(&claude::one_bash_call_script("echo hi"));
    let run = ClaudeRun::new(&mock);
    // A config dir of its own, not the default ~/.claude: both hookd install
    // and Claude Code must follow CLAUDE_CONFIG_DIR.
    let config = run.scratch_dir().join("claude-config");
    let run = run
        .env("HOOKD_SOCKET", &d.socket)
        .env("CLAUDE_CONFIG_DIR", &config);
    let out = Command::new(daemon::hookd_bin())
        .args([
            "install",
            "--scope",
            "user",
            "--events",
            "PreToolUse",
            "--forwarder",
        ])
        .arg(daemon::forwarder_bin())
        .env("HOME", run.home_dir())
        .env("CLAUDE_CONFIG_DIR", &config)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(config.join("settings.json").exists());
    assert!(!run.home_dir().join(".claude/settings.json").exists());

    run.run("please run the command").assert_success();
    d.wait_log_lines(2);
    let kinds = logged_kinds(&d);
    assert_eq!(kinds, ["PreToolUse"], "the user-scope hook did not fire");
}

/// Event kinds in the daemon's log, in log order.
fn logged_kinds(d: &Daemon) -> Vec<String> {
    d.log_lines()
        .iter()
        .filter(|l| l["type"] == "event")
        .filter_map(|l| l["kind"].as_str().map(str::to_owned))
        .collect()
}

/// The measurement behind the table's `async` column (run it with
/// `cargo test --test end_to_end e2e_install:: -- --ignored --nocapture`): the same
/// one-Bash-call session, N times with every observe-only event registered
/// synchronously and N times with `"async": true`, recording the run's wall
/// time, which events reached the daemon (right after the CLI exits and 3 s
/// later), and whether they arrived in the order Claude Code fired them.
#[test]
#[ignore = "a measurement, not a check: prints numbers"]
fn measure_async_observe_only_hooks() {
    const RUNS: usize = 5;
    // "slow": observe-only hooks go through a wrapper that sleeps 500 ms
    // before exec'ing the forwarder, standing in for a busy machine.
    let modes = ["sync", "async", "sync-slow", "async-slow"];
    let mut walls: Vec<Vec<Duration>> = vec![Vec::new(); modes.len()];
    let mut reference: Option<Vec<String>> = None;
    for n in 0..RUNS {
        for (m, mode) in modes.iter().enumerate() {
            let d = Daemon::start();
            let mock = MockApi::start(&claude::one_bash_call_script("echo hi"));
            let run = ClaudeRun::new(&mock)
                .env("HOOKD_SOCKET", &d.socket)
                .arg("--include-hook-events");
            let forwarder = daemon::forwarder_bin();
            let slow = run.write_executable(
                "slow-forwarder",
                &format!(
                    "#!/bin/sh\nsleep 0.5\nexec '{}' \"$@\"\n",
                    forwarder.display()
                ),
            );
            let mut hooks = serde_json::Map::new();
            for kind in hookd::install::default_events() {
                let t = hookd::install::timing(kind);
                let observe = !kind.is_decision_point();
                let command = if observe && mode.ends_with("slow") {
                    &slow
                } else {
                    &forwarder
                };
                let mut handler = json!({
                    "type": "command",
                    "command": command.to_str().unwrap(),
                    "args": ["--timeout", t.forwarder_s.to_string()],
                    "timeout": t.agent_s,
                });
                if observe && mode.starts_with("async") {
                    handler["async"] = Value::Bool(true);
                }
                hooks.insert(kind.as_str().into(), json!([{ "hooks": [handler] }]));
            }
            run.write_settings(&json!({ "hooks": hooks }));
            let started = Instant::now();
            let out = run.run("please run the command");
            let wall = started.elapsed();
            out.assert_success();
            let at_exit = logged_kinds(&d);
            std::thread::sleep(Duration::from_secs(3));
            let later = logged_kinds(&d);
            let fired: Vec<String> = out
                .messages
                .iter()
                .filter(|m| m["type"] == "system" && m["subtype"] == "hook_started")
                .filter_map(|m| m["hook_event"].as_str().map(str::to_owned))
                .collect();
            if reference.is_none() {
                reference = Some(later.clone());
            }
            eprintln!(
                "{mode} #{n}: wall {wall:?}; hook_started {}; logged at exit {}, +3 s {}; SessionEnd at exit {}, +3 s {}; order as sync: {}\n  {later:?}",
                fired.len(),
                at_exit.len(),
                later.len(),
                at_exit.iter().any(|k| k == "SessionEnd"),
                later.iter().any(|k| k == "SessionEnd"),
                reference.as_ref() == Some(&later),
            );
            walls[m].push(wall);
        }
    }
    for (m, mode) in modes.iter().enumerate() {
        let w = &mut walls[m];
        w.sort();
        eprintln!("{mode}: median wall {:?} of {w:?}", w[w.len() / 2]);
    }
}
