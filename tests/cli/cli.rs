//! The `hookd` command line as a user meets it: bad flag values get a clear
//! error and exit 2, and every command exits quietly when its reader goes
//! away (`hookd … | head -1`).

use crate::support::daemon;

use daemon::{fixture, forward_in_background, Daemon, DaemonOptions, RawClient};

use std::process::{Command, Stdio};

/// `hookd tail --since` with a value that is not an id, a time or an age:
/// exit 2, the flag and the value named, no panic.
#[test]
fn tail_since_refuses_bad_values_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.jsonl");
    std::fs::write(&log, "").unwrap();
    for bad in [
        "2026-02-31T00:00:00Z",
        "2026-11-22T02:49:5é",
        "2026-11-22T02:49:54éééééééé",
        "999999999d",
        "99999999999999999999d",
        "yesterday",
    ] {
        let out = Command::new(daemon::hookd_bin())
            .args(["tail", "--log"])
            .arg(&log)
            .args(["--since", bad])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {stderr}");
        assert!(
            stderr.contains("--since") && stderr.contains(bad),
            "{bad:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{bad:?}: {stderr}");
    }
    // A good value still works.
    let out = Command::new(daemon::hookd_bin())
        .args(["tail", "--log"])
        .arg(&log)
        .args(["--since", "2026-11-22T10:00:00+02:00"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// A pipe whose read end is already closed: every write to the other end
/// fails with EPIPE, as when `head -1` has read its line and gone.
fn closed_pipe() -> std::os::fd::OwnedFd {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) returns.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: both descriptors were just created and are owned only here.
    let (read, write) = unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    };
    drop(read);
    write
}

/// A log with enough lines that any command reading it writes more than a
/// pipe buffer holds.
fn big_log(dir: &std::path::Path) -> std::path::PathBuf {
    let mut text = String::new();
    for i in 0..2000u32 {
        let id = format!("01900000-0000-7000-8000-{i:012}");
        let event = serde_json::json!({
            "type": "event", "id": id, "received_at": "2026-11-22T02:18:06.747396Z",
            "harness": "claude-code", "session_id": "s", "kind": "PreToolUse", "tool": "Bash", "cwd": "/tmp",
            "input": {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": "/tmp",
                      "tool_input": {"command": format!("rm -rf / # {i}")}},
        });
        let decision = serde_json::json!({
            "type": "decision", "decision_id": format!("01900000-0000-7000-9000-{i:012}"),
            "event_id": id, "verdict": "none", "source": "default", "generation": 1,
            "latency_us": 5,
        });
        text.push_str(&format!("{event}\n{decision}\n"));
    }
    let log = dir.join("events.jsonl");
    std::fs::write(&log, text).unwrap();
    log
}

/// Every command that prints ends quietly (exit 0, nothing on stderr) when
/// its stdout's reader is gone, instead of panicking on the write.
#[test]
fn commands_exit_quietly_when_the_reader_goes_away() {
    let dir = tempfile::tempdir().unwrap();
    let log = big_log(dir.path());
    let event = dir.path().join("event.json");
    std::fs::write(
        &event,
        r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"cwd":"/tmp"}"#,
    )
    .unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, hookd::rules::DEFAULTS_TOML).unwrap();
    let log = log.to_str().unwrap();
    let event = event.to_str().unwrap();
    let rules = rules.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["tail", "--log", log],
        &["tail", "--json", "--log", log],
        // Following a log that shows nothing new: ends when the reader goes.
        &["tail", "--follow", "--kind", "WorktreeCreate", "--log", log],
        &["replay", log, "--rules", rules],
        &["replay", log, "--rules", rules, "--json"],
        &["rules", "explain", event, "--rules", rules, "--json"],
        &["rules", "explain", event, "--rules", rules],
        &["rules", "defaults"],
        &["rules", "check", rules, "--json"],
        &["--help"],
    ];
    for args in commands {
        let mut child = Command::new(daemon::hookd_bin())
            .args(*args)
            .env("XDG_CONFIG_HOME", dir.path())
            .stdin(Stdio::null())
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let limit = std::time::Duration::from_secs(20);
        let Some(status) = daemon::wait_with_deadline(&mut child, limit) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hookd {args:?} kept running after its reader went away");
        };
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert!(
            status.success() && stderr.is_empty(),
            "hookd {args:?}: {status}\n{stderr}"
        );
    }
}

/// `hookd serve` with a mistyped config refuses to start, naming the file,
/// line and key on stderr (the journal, under systemd), never the value.
#[test]
fn a_bad_config_is_refused_without_echoing_its_values() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "[log]\nkeep = 5\n\n[decisions]\napi_key = \"sk-ant-api03-hunter2hunter2hunter2\"\n",
    )
    .unwrap();
    let out = Command::new(daemon::hookd_bin())
        .args(["serve", "--config"])
        .arg(&config)
        .arg("--socket")
        .arg(dir.path().join("s.sock"))
        .arg("--log")
        .arg(dir.path().join("events.jsonl"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{}:5:1: `decisions.api_key`", config.display())),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

/// `hookd ARGS…` with XDG dirs inside `dir` (no user file is read).
fn hookd_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("HOME", dir)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// A fixture directory with one fixture that passes under the default rules
/// and one that fails.
fn fixtures_one_failing(dir: &std::path::Path) -> std::path::PathBuf {
    let fixtures = dir.join("fixtures");
    std::fs::create_dir_all(&fixtures).unwrap();
    let event = serde_json::json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
        "tool_input": {"command": "rm -rf /"}, "cwd": "/tmp", "session_id": "s"});
    std::fs::write(
        fixtures.join("a_pass.json"),
        serde_json::json!({"event": event, "expect": {"verdict": "deny"}}).to_string(),
    )
    .unwrap();
    std::fs::write(
        fixtures.join("b_fail.json"),
        serde_json::json!({"event": event, "expect": {"verdict": "allow"}}).to_string(),
    )
    .unwrap();
    fixtures
}

/// A log with one PreToolUse `rm -rf /` that no rule decided: under the
/// default rules replay finds a change.
fn log_with_one_change(dir: &std::path::Path) -> std::path::PathBuf {
    let log = dir.join("events.jsonl");
    let id = "01900000-0000-7000-8000-000000000001";
    let event = serde_json::json!({
        "type": "event", "id": id, "received_at": "2026-11-22T02:18:06.747396Z",
        "harness": "claude-code", "session_id": "s", "kind": "PreToolUse", "tool": "Bash", "cwd": "/tmp",
        "input": {"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": "/tmp",
                  "tool_input": {"command": "rm -rf /"}},
    });
    let decision = serde_json::json!({
        "type": "decision", "decision_id": "01900000-0000-7000-8000-000000000002", "event_id": id,
        "verdict": "none", "source": "default", "rule_ids": [], "generation": 1, "latency_us": 10,
    });
    std::fs::write(&log, format!("{event}\n{decision}\n")).unwrap();
    log
}

/// The exit status table of docs/cli.md ("Exit status"), through the binary:
/// 0 ok, 1 problems found, 2 usage or operational error.
#[test]
fn exit_codes_follow_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rules = d.join("rules.toml");
    std::fs::write(&rules, hookd::rules::DEFAULTS_TOML).unwrap();
    let bad_rules = d.join("bad.toml");
    std::fs::write(&bad_rules, "[[rule]]\nid = \"x\"\naction = \"maybe\"\n").unwrap();
    let fixtures = fixtures_one_failing(d);
    let log = log_with_one_change(d);
    let missing = d.join("missing");
    let (rules, bad_rules, fixtures, log, missing) = (
        rules.to_str().unwrap(),
        bad_rules.to_str().unwrap(),
        fixtures.to_str().unwrap(),
        log.to_str().unwrap(),
        missing.to_str().unwrap(),
    );
    let table: &[(&[&str], i32)] = &[
        (&["rules", "check", rules], 0),
        (&["rules", "defaults"], 0),
        (&["tail", "--log", log], 0),
        (&["rules", "check", bad_rules], 1),
        (&["rules", "test", fixtures, "--rules", rules], 1),
        (&["replay", log, "--rules", rules], 1),
        (&["--no-such-flag"], 2),
        (&["decide", "abcde", "alow"], 2),
        (&["tail", "--kind", "PreTolUse", "--log", log], 2),
        (&["status", "--socket", missing], 2),
        (&["rules", "explain", missing], 2),
        (&["rules", "check", missing], 2),
        (&["rules", "test", missing], 2),
        (&["replay", missing], 2),
        (&["tail", "--log", missing], 2),
        (&["serve", "--config", missing, "--socket", missing], 2),
    ];
    for (args, code) in table {
        let out = hookd_in(d, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "hookd {args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "hookd {args:?}: {stderr}");
    }
}

/// Typos in typed arguments are refused by clap with a suggestion.
#[test]
fn typed_arguments_suggest_the_value_meant() {
    let dir = tempfile::tempdir().unwrap();
    for (args, meant) in [
        (&["decide", "abcde", "alow"][..], "'allow'"),
        (&["tail", "--kind", "PreTolUse"][..], "'PreToolUse'"),
        (
            &["install", "--events", "PreToolUse,Stopp", "--print"][..],
            "'Stop'",
        ),
        (
            &["install", "--scope", "projet", "--print"][..],
            "'project'",
        ),
        (
            &["run", "--permission-mode", "acceptEdit", "hi"][..],
            "'acceptEdits'",
        ),
        (
            &["decide", "abcde", "allow", "--remember", "sesion"][..],
            "'session'",
        ),
        (&["--color", "allways", "status"][..], "'always'"),
    ] {
        let out = hookd_in(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(meant), "{args:?}: {stderr}");
    }
}

/// An error prints each cause once: the io error under "cannot reach
/// hookd" and under a file that cannot be read is not repeated.
#[test]
fn errors_print_each_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let missing = missing.to_str().unwrap();
    for args in [
        &["status", "--socket", missing][..],
        &["rules", "explain", missing][..],
        &["serve", "--rules", missing, "--socket", missing][..],
        &["tail", "--follow", "--log", "/proc/self/mem/x"][..],
    ] {
        let out = hookd_in(dir.path(), args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let cause = ["No such file or directory", "Not a directory"]
            .into_iter()
            .find(|cause| stderr.contains(cause))
            .unwrap_or_else(|| panic!("{args:?}: no cause in {stderr}"));
        assert_eq!(stderr.matches(cause).count(), 1, "{args:?}: {stderr}");
        assert!(stderr.starts_with("hookd: "), "{args:?}: {stderr}");
    }
}

/// `hookd tail` names the log it looked for when there is none, and `-n N`
/// prints the last N entries.
#[test]
fn tail_names_a_missing_log_and_prints_the_last_n() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.jsonl");
    let out = hookd_in(dir.path(), &["tail", "--log", missing.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("no event log at {}", missing.display())),
        "{stderr}"
    );
    let log = big_log(dir.path());
    let log = log.to_str().unwrap();
    let out = hookd_in(dir.path(), &["tail", "-n", "3", "--log", log]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    for (line, i) in lines.iter().zip(1997..) {
        assert!(line.contains(&format!("rm -rf / # {i}")), "{text}");
    }
    let out = hookd_in(dir.path(), &["tail", "--json", "-n", "2", "--log", log]);
    let text = String::from_utf8_lossy(&out.stdout);
    // The last event line and its decision line.
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("\"type\":\"event\""), "{text}");
    assert!(lines[0].contains("000000001999"), "{text}");
    assert!(lines[1].contains("9000-000000001999"), "{text}");
    let out = hookd_in(dir.path(), &["tail", "-n", "0", "--log", log]);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");

    // `--json --decisions` prints an event's line, then its decision's:
    // `-n 1` is one line (the last decision), `-n 2` the pair.
    let log = log_with_one_change(dir.path());
    let text = std::fs::read_to_string(&log)
        .unwrap()
        .replace("\"verdict\":\"none\"", "\"verdict\":\"deny\"");
    std::fs::write(&log, &text).unwrap();
    let log = log.to_str().unwrap();
    let last = |n: &str| {
        let out = hookd_in(
            dir.path(),
            &["tail", "-n", n, "--json", "--decisions", "--log", log],
        );
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(last("1"), text.lines().nth(1).unwrap().to_string() + "\n");
    assert_eq!(last("2"), text);
}

/// Colour marks results only where allowed: never into a pipe by default,
/// with `--color always` even there, never with `--color never`.
#[test]
fn colour_only_where_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let fixtures = fixtures_one_failing(dir.path());
    let fixtures = fixtures.to_str().unwrap();
    let escape = |args: &[&str]| {
        let out = hookd_in(dir.path(), args);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(text.contains("FAIL") && text.contains("ok"), "{text}");
        text.contains('\x1b')
    };
    assert!(!escape(&["rules", "test", fixtures]));
    assert!(escape(&["rules", "test", fixtures, "--color", "always"]));
    assert!(!escape(&["rules", "test", fixtures, "--color", "never"]));
    let out = Command::new(daemon::hookd_bin())
        .args(["rules", "test", fixtures, "--color", "auto"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains('\x1b'));
}

/// Completion scripts know the subcommands, flags and typed values; the
/// man page of `hookd install` names its flags.
#[test]
fn completions_and_man_pages_describe_the_flags() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = hookd_in(dir.path(), &["completions", shell]);
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{shell}: {out:?}");
        for word in ["install", "fail-closed"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
        // Elvish's and PowerShell's scripts complete flags, not values.
        if !["elvish", "powershell"].contains(&shell) {
            assert!(script.contains("acceptEdits"), "{shell}: no values");
        }
    }
    let man = dir.path().join("man1");
    let out = hookd_in(dir.path(), &["man", "--dir", man.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(man.join("hookd-install.1")).unwrap();
    for flag in [
        "\\-\\-agent",
        "\\-\\-scope",
        "\\-\\-events",
        "\\-\\-fail\\-closed",
        "\\-\\-dry\\-run",
        "\\-\\-statusline",
    ] {
        assert!(page.contains(flag), "hookd-install.1 lacks {flag}:\n{page}");
    }
    assert!(man.join("hookd-rules-check.1").exists());
    // NAME, and --help, name every agent hookd serves.
    let page = std::fs::read_to_string(man.join("hookd.1")).unwrap();
    let name = page
        .split(".SH NAME")
        .nth(1)
        .and_then(|rest| rest.split(".SH").next())
        .unwrap_or_else(|| panic!("hookd.1 has no NAME:\n{page}"));
    let help = hookd_in(dir.path(), &["--help"]);
    let help = String::from_utf8_lossy(&help.stdout);
    for agent in ["Claude Code", "Agent SDK", "Codex CLI", "Gemini CLI"] {
        assert!(name.contains(agent), "hookd.1's NAME lacks {agent}:{name}");
        assert!(help.contains(agent), "--help lacks {agent}:\n{help}");
    }
}

/// `actual`, with `dir` written as `$DIR`, against
/// `tests/fixtures/cli/NAME`; `UPDATE_GOLDEN=1` rewrites the file.
fn assert_golden(name: &str, dir: &std::path::Path, actual: &[u8]) {
    let actual = String::from_utf8_lossy(actual).replace(dir.to_str().unwrap(), "$DIR");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cli")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} is missing (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(actual, expected, "{name} differs from {}", path.display());
}

/// The `--json` shapes docs/cli.md's table promises, pinned by golden files for
/// the verbs that need no daemon.
#[test]
fn json_output_matches_the_golden_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rules = d.join("rules.toml");
    std::fs::write(&rules, hookd::rules::DEFAULTS_TOML).unwrap();
    let bad_rules = d.join("bad.toml");
    std::fs::write(&bad_rules, "[[rule]]\nid = \"x\"\naction = \"maybe\"\n").unwrap();
    let fixtures = fixtures_one_failing(d);
    let log = log_with_one_change(d);
    let event = d.join("event.json");
    std::fs::write(
        &event,
        r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"cwd":"/tmp"}"#,
    )
    .unwrap();
    let settings = d.join("settings.json");
    std::fs::write(&settings, "{}\n").unwrap();
    let forwarder = d.join("hook-forwarder");
    std::fs::write(&forwarder, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(
        &forwarder,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let (rules, bad_rules, fixtures, log, event, settings, forwarder) = (
        rules.to_str().unwrap(),
        bad_rules.to_str().unwrap(),
        fixtures.to_str().unwrap(),
        log.to_str().unwrap(),
        event.to_str().unwrap(),
        settings.to_str().unwrap(),
        forwarder.to_str().unwrap(),
    );
    let verbs: &[(&str, &[&str])] = &[
        ("rules-check.json", &["rules", "check", bad_rules, "--json"]),
        (
            "rules-test.json",
            &["rules", "test", fixtures, "--rules", rules, "--json"],
        ),
        (
            "rules-explain.json",
            &["rules", "explain", event, "--rules", rules, "--json"],
        ),
        ("replay.json", &["replay", log, "--rules", rules, "--json"]),
        (
            "install-dry-run.json",
            &[
                "install",
                "--settings",
                settings,
                "--events",
                "PreToolUse",
                "--forwarder",
                forwarder,
                "--dry-run",
                "--json",
            ],
        ),
    ];
    for (name, args) in verbs {
        let out = hookd_in(d, args);
        assert!(out.status.code() != Some(2), "{args:?}: {out:?}");
        serde_json::from_slice::<serde_json::Value>(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: not JSON ({e})"));
        assert_golden(name, d, &out.stdout);
    }
}

/// `hookd decide` confirms in one line which event it decided; `--json`
/// gives the same as a document.
#[test]
fn decide_confirms_what_it_decided() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(
            "[[rule]]\nid = \"ask-npm\"\naction = \"ask\"\ntool = \"Bash(npm:*)\"\n".into(),
        ),
        config: Some("[decisions]\ntimeout = 20\n".into()),
        ..DaemonOptions::default()
    });
    let mut subscriber = RawClient::hello(&d.socket, "approver");
    let ok = subscriber.call(serde_json::json!({"type": "subscribe", "filter": {}}));
    assert_eq!(ok["type"], "ok", "{ok}");
    let mut decide = |command: &str, args: &[&str]| {
        let mut input = fixture("PreToolUse.json");
        input["tool_input"]["command"] = command.into();
        let hook = forward_in_background(&d.socket, &input, &[]);
        let pushed = subscriber.wait_for("a pending event", |f| {
            f["type"] == "event" && f["pending"] == true
        });
        let short = pushed["short_id"].as_str().unwrap().to_string();
        let id = pushed["event"]["id"].as_str().unwrap().to_string();
        let out = Command::new(daemon::hookd_bin())
            .arg("decide")
            .args(
                args.iter()
                    .map(|a| a.replace("SHORT", &short).replace("ID", &id)),
            )
            .arg("--socket")
            .arg(&d.socket)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        hook.join().unwrap();
        (short, id, String::from_utf8(out.stdout).unwrap())
    };
    let (short, _, text) = decide("npm test", &["SHORT", "allow"]);
    assert_eq!(
        text,
        format!("allowed {short} (PreToolUse Bash `npm test`)\n")
    );
    let (short, id, text) = decide("npm publish", &["ID", "deny", "--json"]);
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        report,
        serde_json::json!({"event_id": id, "short_id": short, "verdict": "deny",
            "kind": "PreToolUse", "tool": "Bash", "summary": "npm publish"})
    );
}

/// `-q`/`-v` set the daemon's log level on stderr when RUST_LOG does not.
#[test]
fn quiet_and_verbose_set_the_log_level() {
    let level_lines = |args: &[&str]| {
        let mut d = Daemon::start_with(DaemonOptions {
            args: args.iter().map(|a| a.to_string()).collect(),
            env: vec![("RUST_LOG".into(), String::new())],
            ..DaemonOptions::default()
        });
        d.forward(&fixture("PreToolUse.json"), &[]);
        d.stop();
        let stderr = d.stderr();
        let count = |level: &str| stderr.matches(&format!(" {level} ")).count();
        (count("INFO"), count("DEBUG"), stderr)
    };
    let (info, debug, stderr) = level_lines(&[]);
    assert!(info > 0 && debug == 0, "{stderr}");
    let (info, debug, stderr) = level_lines(&["-v"]);
    assert!(info > 0 && debug > 0, "{stderr}");
    let (info, debug, stderr) = level_lines(&["-qq"]);
    assert!(info == 0 && debug == 0, "{stderr}");
}

/// The running daemon does not load glibc's `libm.so`: its one maths
/// function, `pow` (tokio's scheduler), is defined in `bin/hookd.rs`, which
/// keeps the library's pages out of an idle daemon. A dependency that
/// starts calling another maths function brings the library back: give
/// that function the same treatment, or take this test out knowingly.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_daemon_does_not_load_the_maths_library() {
    let d = Daemon::start();
    let maps = std::fs::read_to_string(format!("/proc/{}/maps", d.pid())).unwrap();
    let libm: Vec<&str> = maps.lines().filter(|l| l.contains("/libm.so")).collect();
    assert!(
        libm.is_empty(),
        "the daemon maps libm.so (some code calls a C maths function other than pow): {libm:#?}"
    );
    assert!(
        maps.lines().any(|l| l.contains("/libc.so")),
        "the maps were read from a dynamically linked daemon"
    );
}

/// `hookd rules test --help` says what a fixture holds, `home` and
/// `project_dir` included: without `home`, a `~` rule never matches.
#[test]
fn rules_test_help_names_the_fixture_keys() {
    let dir = tempfile::tempdir().unwrap();
    let out = hookd_in(dir.path(), &["rules", "test", "--help"]);
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8_lossy(&out.stdout);
    for key in [
        "event",
        "home",
        "~",
        "project_dir",
        "expect.verdict",
        "expect.rule",
    ] {
        assert!(help.contains(key), "rules test --help lacks {key}:\n{help}");
    }
}

/// A request the daemon refuses is reported once as `hookd: …`: the
/// daemon's error frame is "the daemon refused", not a second "hookd".
#[test]
fn a_refusal_by_the_daemon_names_hookd_once() {
    let d = Daemon::start();
    let out = Command::new(daemon::hookd_bin())
        .args(["decide", "abcde", "allow", "--socket"])
        .arg(&d.socket)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "hookd: the daemon refused: no pending event abcde (not_found)\n"
    );
}
