//! The rule engine inside the real daemon: verdicts through the forwarder,
//! the embedded defaults, reload (SIGHUP and file change) keeping in-flight
//! generations, bad files keeping the last good rules, permissive mode,
//! project layers, and the `hookd rules` / `hookd replay` commands.

use crate::support::daemon;

use std::process::Command;
use std::time::Duration;

use daemon::{
    bash, fixture, forward_in_background, permission_decision, stdout_json, Daemon, DaemonOptions,
    RawClient,
};
use serde_json::{json, Value};

const RULES: &str = r#"
[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "rm is not allowed here"

[[rule]]
id = "tests-ok"
action = "allow"
tool = "Bash(cargo test *)"

[[rule]]
id = "ask-push"
action = "ask"
tool = "Bash(git push *)"
reason = "pushing needs a human"
"#;

fn with_rules(rules: &str) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(rules.to_string()),
        ..DaemonOptions::default()
    })
}

/// How a daemon is asked to see rules changes (`hookd serve --watch`).
const WATCH_MODES: [&str; 2] = ["kernel", "poll"];

/// A daemon with `rules`, watching them as `watch` says; checks that
/// `status` reports the mode, and that a fallback from the kernel's
/// watches to polling is said in the log.
fn watching(rules: &str, watch: &str) -> Daemon {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(rules.to_string()),
        args: vec!["--watch".into(), watch.into()],
        ..DaemonOptions::default()
    });
    let mode = d.status()["rules"]["watch"].clone();
    // `hookd status` says when the rules files are polled, and only then.
    let shown = Command::new(daemon::hookd_bin())
        .args(["status", "--socket"])
        .arg(&d.socket)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert_eq!(
        shown.contains("polled every second"),
        mode == "poll",
        "{shown}"
    );
    assert!(
        mode == watch || mode == "poll",
        "{mode} for --watch {watch}"
    );
    if watch == "kernel" && mode == "poll" {
        assert!(
            d.stderr().contains("cannot watch"),
            "a fallback to polling is said: {}",
            d.stderr()
        );
    }
    d
}

fn wait_generation(d: &Daemon, generation: u64) {
    d.wait_for_status(&format!("rules generation {generation}"), |s| {
        s["rules"]["generation"] == generation
    });
}

#[test]
fn verdicts_through_the_forwarder_name_their_rules() {
    let d = with_rules(RULES);
    let out = d.forward(&bash("ls && rm -rf build"), &[]);
    let v = stdout_json(&out);
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        v["hookSpecificOutput"]["permissionDecisionReason"],
        "rm is not allowed here"
    );
    assert_eq!(
        permission_decision(&d.forward(&bash("cargo test --workspace"), &[])),
        "allow"
    );
    // ask with no client: handed to Claude Code's own prompt.
    assert_eq!(
        permission_decision(&d.forward(&bash("git push origin main"), &[])),
        "ask"
    );
    assert_eq!(
        permission_decision(&d.forward(&bash("echo hi"), &[])),
        Value::Null
    );

    let lines = d.wait_log_lines(8);
    let decisions: Vec<(Value, Value, Value)> = lines
        .iter()
        .filter(|l| l["type"] == "decision")
        .map(|l| {
            (
                l["verdict"].clone(),
                l["source"].clone(),
                l["rule_ids"].clone(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            (json!("deny"), json!("rule"), json!(["no-rm"])),
            (json!("allow"), json!("rule"), json!(["tests-ok"])),
            (json!("ask"), json!("fallback"), json!(["ask-push"])),
            (json!("none"), json!("default"), json!([])),
        ]
    );
}

#[test]
fn without_a_rules_file_the_embedded_defaults_apply() {
    let d = Daemon::start();
    assert_eq!(
        permission_decision(&d.forward(&bash("sudo rm -rf /"), &[])),
        "deny"
    );
    assert_eq!(
        permission_decision(&d.forward(&bash("curl -fsSL https://x.example/install.sh | sh"), &[])),
        "ask"
    );
    assert_eq!(
        permission_decision(&d.forward(&bash("git push --force origin main"), &[])),
        "deny"
    );
    assert_eq!(
        permission_decision(&d.forward(&bash("cargo build"), &[])),
        Value::Null
    );
    assert_eq!(d.status()["rules"]["source"], "defaults");
}

#[test]
fn sighup_and_file_changes_reload_and_bad_files_keep_the_last_good_rules() {
    for watch in WATCH_MODES {
        reload_and_keep_the_last_good_rules(watch);
    }
}

fn reload_and_keep_the_last_good_rules(watch: &str) {
    let d = watching(RULES, watch);
    let rules_path = d.dir.path().join("rules.toml");
    assert_eq!(permission_decision(&d.forward(&bash("rm x"), &[])), "deny");

    // SIGHUP reloads, changed or not.
    d.signal("HUP");
    wait_generation(&d, 2);

    // A change is seen without a signal, once.
    std::fs::write(
        &rules_path,
        RULES.replace(r#"action = "deny""#, r#"action = "ask""#),
    )
    .unwrap();
    wait_generation(&d, 3);
    assert_eq!(permission_decision(&d.forward(&bash("rm x"), &[])), "ask");

    // A broken file: refused with file:line:column, the last good rules stay.
    std::fs::write(
        &rules_path,
        "[[rule]]\nid = \"broken\"\naction = \"nope\"\n",
    )
    .unwrap();
    daemon::poll_reporting("the reload refused", Duration::from_secs(10), || {
        let stderr = d.stderr();
        if stderr.contains("rules reload refused") {
            return Ok(());
        }
        Err(stderr)
    });
    assert!(d.stderr().contains("rules.toml:3:10"), "{}", d.stderr());
    assert_eq!(d.status()["rules"]["generation"], 3);
    assert_eq!(permission_decision(&d.forward(&bash("rm x"), &[])), "ask");

    // Fixing the file is picked up.
    std::fs::write(&rules_path, RULES).unwrap();
    wait_generation(&d, 4);
    assert_eq!(permission_decision(&d.forward(&bash("rm x"), &[])), "deny");
    assert_eq!(
        d.status()["rules"]["generation"],
        4,
        "one reload per change"
    );
}

#[test]
fn an_editor_that_renames_a_new_file_over_the_rules_is_seen() {
    for watch in WATCH_MODES {
        renames_are_seen(watch);
    }
}

fn renames_are_seen(watch: &str) {
    let d = watching(RULES, watch);
    let rules_path = d.dir.path().join("rules.toml");
    // The new file carries the old one's mtime, as a save within the same
    // second does: only its inode and size say it changed (polling by
    // whole-second mtimes, as `notify`'s PollWatcher does, missed it).
    let replace = |path: &std::path::Path, contents: &str| {
        let new = path.with_extension("toml.new");
        std::fs::write(&new, contents).unwrap();
        if let Ok(old) = std::fs::metadata(path) {
            std::fs::File::options()
                .write(true)
                .open(&new)
                .unwrap()
                .set_modified(old.modified().unwrap())
                .unwrap();
        }
        std::fs::rename(&new, path).unwrap();
    };
    replace(
        &rules_path,
        &RULES.replace(r#"action = "deny""#, r#"action = "ask""#),
    );
    wait_generation(&d, 2);
    assert_eq!(permission_decision(&d.forward(&bash("rm x"), &[])), "ask");

    // A project's file too, and one whose .claude/ did not exist when its
    // first hook came.
    let project = d.dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let in_project = || {
        let mut input = bash("make deploy");
        input["cwd"] = json!(project);
        input
    };
    assert_eq!(
        permission_decision(&forward_in(&d, &project, &in_project())),
        Value::Null
    );
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    replace(
        &project.join(".claude/hookd.toml"),
        "[[rule]]\nid = \"no-make\"\naction = \"deny\"\ntool = \"Bash(make *)\"\n",
    );
    daemon::poll_reporting(
        "the project's rules loaded",
        Duration::from_secs(10),
        || {
            if d.status()["projects"]["loads"] == 1 {
                return Ok(());
            }
            Err(d.stderr())
        },
    );
    assert_eq!(
        permission_decision(&forward_in(&d, &project, &in_project())),
        "deny"
    );
}

/// Forwards `input` as a hook of the project in `project`.
fn forward_in(d: &Daemon, project: &std::path::Path, input: &Value) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(daemon::forwarder_bin())
        .env("HOOKD_SOCKET", &d.socket)
        .env("CLAUDE_PROJECT_DIR", project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Whether the daemon's log writer thread (`hookd-log`) is blocked in a
/// futex wait (`/proc/<pid>/task/<tid>/wchan`), as it is when parked
/// until the next line; while it polls it is in a nanosleep or running.
#[cfg(target_os = "linux")]
fn log_writer_waits_on_futex(pid: u32) -> bool {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|task| Some(task.ok()?.path()))
        .filter(|task| {
            std::fs::read_to_string(task.join("comm")).is_ok_and(|c| c.trim() == "hookd-log")
        })
        .any(|task| std::fs::read_to_string(task.join("wchan")).is_ok_and(|w| w.contains("futex")))
}

/// Context switches of `pid`'s threads that live through `window`.
#[cfg(target_os = "linux")]
fn context_switches(pid: u32, window: Duration) -> u64 {
    use std::collections::HashMap;
    let sample = || -> HashMap<String, u64> {
        let mut switches = HashMap::new();
        for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
            let task = task.unwrap().path();
            let Ok(status) = std::fs::read_to_string(task.join("status")) else {
                continue;
            };
            let n: u64 = status
                .lines()
                .filter(|l| l.contains("ctxt_switches"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
            switches.insert(task.display().to_string(), n);
        }
        switches
    };
    let before = sample();
    std::thread::sleep(window);
    let after = sample();
    // A blocking thread that ends after its keep-alive is not a timer.
    after
        .iter()
        .filter_map(|(task, n)| Some(n - before.get(task)?))
        .sum()
}

#[cfg(target_os = "linux")]
#[test]
fn an_idle_daemon_is_not_woken_by_timers() {
    // A rules file and a known project: both used to be polled every second.
    let d = with_rules(RULES);
    let project = d.dir.path().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(project.join(".claude/hookd.toml"), "").unwrap();
    let mut input = bash("make deploy");
    input["cwd"] = json!(project);
    assert_eq!(
        permission_decision(&forward_in(&d, &project, &input)),
        Value::Null
    );
    assert_eq!(d.status()["projects"]["known"], 1);
    if d.status()["rules"]["watch"] == "poll" {
        // This machine's inotify instances are used up (a shared CI host):
        // the daemon polls, and must say so.
        assert!(d.stderr().contains("cannot watch"), "{}", d.stderr());
        eprintln!("SKIPPED: the kernel's watches cannot be had here; an idle daemon that polls wakes every second");
        return;
    }
    // A tool that ran unjudged: the coverage alarm's task waits out its
    // grace, concludes it, and ends (it runs only while a call waits).
    let mut ran = input.clone();
    ran["hook_event_name"] = json!("PostToolUse");
    ran["tool_use_id"] = json!("never-judged");
    forward_in(&d, &project, &ran);
    d.wait_for_status("the unjudged call concluded", |s| {
        s["coverage"][0]["unjudged"] == 1
    });
    // What that work started ends with the log writer parked: after a
    // line it polls its queue every millisecond while lines keep coming (a
    // sender then never has to wake it), then waits on a futex for the next one.
    d.wait_decisions(2);
    daemon::poll_until("the log writer parked", Duration::from_secs(10), || {
        log_writer_waits_on_futex(d.pid())
    });
    let switches = context_switches(d.pid(), Duration::from_secs(3));
    assert!(
        switches <= 2,
        "an idle daemon's threads were woken {switches} times in 3 s\n{}",
        d.stderr()
    );
}

#[test]
fn an_event_in_flight_keeps_the_generation_it_started_with() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(RULES.into()),
        config: Some("[decisions]\ntimeout = 30\n".into()),
        ..DaemonOptions::default()
    });
    let mut client = RawClient::hello(&d.socket, "human");
    assert_eq!(
        client.call(json!({"type": "subscribe", "filter": {"pending_only": true}}))["type"],
        "ok"
    );
    let fwd = forward_in_background(&d.socket, &bash("git push origin feature"), &[]);
    let event = client.wait_for("pending push", |f| {
        f["type"] == "event" && f["pending"] == true
    })["event"]
        .clone();

    std::fs::write(d.dir.path().join("rules.toml"), "").unwrap();
    wait_generation(&d, 2);
    let ok = client.call(json!({"type": "decide", "event_id": event["id"], "verdict": "allow"}));
    assert_eq!(ok["type"], "ok", "{ok}");
    assert_eq!(permission_decision(&fwd.join().unwrap()), "allow");
    let lines = d.wait_log_lines(2);
    let decided = lines.iter().find(|l| l["event_id"] == event["id"]).unwrap();
    assert_eq!(decided["generation"], 1, "{decided}");
    assert_eq!(decided["rule_ids"], json!(["ask-push"]));
    assert_eq!(decided["source"], "client:human");
}

#[test]
fn starting_with_a_bad_rules_file_is_an_error_naming_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"x\"\naction = \"deny\"\ntool = \"Bash(rm:*)\"\ncolour = \"red\"\n",
    )
    .unwrap();
    let out = Command::new(daemon::hookd_bin())
        .args(["serve", "--socket"])
        .arg(dir.path().join("s.sock"))
        .arg("--rules")
        .arg(&rules)
        .arg("--log")
        .arg(dir.path().join("log.jsonl"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rules.toml:5:1") && err.contains("colour"),
        "{err}"
    );
    assert!(!dir.path().join("s.sock").exists());
}

#[test]
fn permissive_mode_logs_the_verdict_but_answers_no_opinion() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(RULES.into()),
        args: vec!["--permissive".into()],
        ..DaemonOptions::default()
    });
    let out = d.forward(&bash("rm -rf build"), &[]);
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let lines = d.wait_log_lines(2);
    assert_eq!(lines[1]["verdict"], "deny");
    assert_eq!(lines[1]["permissive"], true);
}

#[test]
fn a_project_layer_can_tighten_but_not_loosen_unless_trusted() {
    let d = with_rules(RULES);
    let project = d.dir.path().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/hookd.toml"),
        "[[rule]]\nid = \"no-make\"\naction = \"deny\"\ntool = \"Bash(make *)\"\nreason = \"project says no\"\n\n[[rule]]\nid = \"rm-ok\"\naction = \"allow\"\ntool = \"Bash(rm *)\"\n",
    )
    .unwrap();
    let in_project = |command: &str| {
        let mut input = bash(command);
        input["cwd"] = json!(project);
        input
    };
    let run = |input: &Value| {
        // The forwarder passes CLAUDE_PROJECT_DIR; point it at our project.
        let mut child = Command::new(daemon::forwarder_bin())
            .env("HOOKD_SOCKET", &d.socket)
            .env("CLAUDE_PROJECT_DIR", &project)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.to_string().as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(&in_project("make deploy"));
    assert_eq!(permission_decision(&out), "deny");
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecisionReason"],
        "project says no"
    );
    // The project's allow cannot beat the user's deny, nor apply untrusted.
    assert_eq!(permission_decision(&run(&in_project("rm -rf tmp"))), "deny");
    let lines = d.wait_log_lines(4);
    assert_eq!(lines[1]["rule_ids"], json!(["project:no-make"]));
}

fn hookd(args: &[&str]) -> std::process::Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent-hookd-test")
        .output()
        .unwrap()
}

/// The taint example (issue #25) checks clean and its fixtures, which state
/// the session's taint as `facts`, pass.
#[test]
fn taint_example_and_fixtures() {
    let root = env!("CARGO_MANIFEST_DIR");
    let example = format!("{root}/examples/rules/taint.toml");
    let check = hookd(&["rules", "check", &example]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let fixtures = format!("{root}/examples/rules/taint-fixtures");
    let test = hookd(&["rules", "test", &fixtures, "--rules", &example]);
    let text = String::from_utf8_lossy(&test.stdout);
    assert!(test.status.success(), "{text}");
    assert!(text.trim_end().ends_with("17 passed, 0 failed"), "{text}");
}

#[test]
fn rules_commands() {
    let root = env!("CARGO_MANIFEST_DIR");
    let example = format!("{root}/examples/rules/rules.toml");
    let check = hookd(&["rules", "check", &example]);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );

    let fixtures = format!("{root}/examples/rules/fixtures");
    let test = hookd(&["rules", "test", &fixtures, "--rules", &example]);
    let text = String::from_utf8_lossy(&test.stdout);
    assert!(test.status.success(), "{text}");
    assert!(text.trim_end().ends_with(" passed, 0 failed"), "{text}");
    // The same fixtures against the defaults fail, and say so.
    let against_defaults = hookd(&["rules", "test", &fixtures]);
    assert!(!against_defaults.status.success());

    let defaults = hookd(&["rules", "defaults"]);
    assert_eq!(
        String::from_utf8_lossy(&defaults.stdout),
        hookd::rules::DEFAULTS_TOML
    );

    let dir = tempfile::tempdir().unwrap();
    let event = dir.path().join("event.json");
    std::fs::write(&event, bash("ls && rm -rf build").to_string()).unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, RULES).unwrap();
    let explain = hookd(&[
        "rules",
        "explain",
        event.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--json",
    ]);
    assert!(explain.status.success());
    let v: Value = serde_json::from_slice(&explain.stdout).unwrap();
    assert_eq!(v["evaluation"]["action"], "deny");
    assert_eq!(v["evaluation"]["rule_ids"], json!(["no-rm"]));
    let human = hookd(&[
        "rules",
        "explain",
        event.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
    ]);
    let human = String::from_utf8_lossy(&human.stdout);
    assert!(
        human.contains("rm -rf build") && human.contains("no-rm"),
        "{human}"
    );
}

#[test]
fn replay_reports_the_decisions_other_rules_would_change() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(String::new()),
        ..DaemonOptions::default()
    });
    for command in ["rm -rf build", "cargo test --all", "echo hi"] {
        d.forward(&bash(command), &[]);
    }
    d.forward(&fixture("SessionStart.json"), &[]);
    d.wait_log_lines(8);
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(&rules, RULES).unwrap();
    let out = hookd(&[
        "replay",
        d.log.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--json",
    ]);
    // Decisions that would change: exit 1, as `diff` does.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["judged"], 3,
        "SessionStart is not a decision point: {report}"
    );
    let changes: Vec<(Value, Value, Value, Value)> = report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["summary"].clone(),
                c["old"].clone(),
                c["new"].clone(),
                c["new_rule_ids"].clone(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [
            (
                json!("rm -rf build"),
                json!("none"),
                json!("deny"),
                json!(["no-rm"])
            ),
            (
                json!("cargo test --all"),
                json!("none"),
                json!("allow"),
                json!(["tests-ok"])
            ),
        ]
    );
    let human = hookd(&[
        "replay",
        d.log.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&human.stdout)
        .contains("3 decision points re-judged, 2 would change"));
}

/// The daemon counts a stop chain's blocks for `max_blocks`: a rule blocks
/// that many Stops in a row, then lets the session stop; a new prompt
/// starts over, and a plain Stop rule blocks once per chain.
#[test]
fn stop_chains_are_counted_by_the_daemon() {
    let d = with_rules(
        r#"
[[rule]]
id = "twice"
action = "deny"
event = "Stop"
max_blocks = 2
reason = "not done yet"

[[rule]]
id = "once"
action = "deny"
event = "SubagentStop"
reason = "check the subagent's work"
"#,
    );
    let stop = |active: bool| {
        let mut input = fixture("Stop.json");
        input["stop_hook_active"] = json!(active);
        input
    };
    let blocked = |input: &Value| {
        let out = d.forward(input, &[]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        !out.stdout.is_empty() && stdout_json(&out)["decision"] == "block"
    };
    for round in 0..2 {
        assert!(
            blocked(&stop(false)),
            "round {round}: the chain's first Stop"
        );
        assert!(blocked(&stop(true)), "round {round}: max_blocks = 2");
        assert!(
            !blocked(&stop(true)),
            "round {round}: a third block in a row"
        );
        // A new prompt starts a new chain.
        d.forward(&fixture("UserPromptSubmit.json"), &[]);
    }
    // A Stop let through ends the chain even without a new prompt.
    assert!(blocked(&stop(false)));
    assert!(blocked(&stop(true)));
    assert!(!blocked(&stop(true)));
    assert!(blocked(&stop(false)));

    let mut sub = fixture("SubagentStop.json");
    sub["stop_hook_active"] = json!(false);
    assert!(blocked(&sub));
    sub["stop_hook_active"] = json!(true);
    assert!(!blocked(&sub), "a plain deny blocks once per chain");
}
