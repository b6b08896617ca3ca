//! `[signals.NAME]` in the real daemon (issue #25): a script in each
//! project prints its branch; the daemon runs it in the hook's project,
//! caches the value per project for its `ttl`, hands it to the rules as
//! `$signal.branch` and records it in the decision line; `hookd replay`
//! judges with the recorded values; a failing command leaves the signal
//! unknown and is counted in `status`.

use crate::support::daemon;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use daemon::{bash, permission_decision, Daemon, DaemonOptions};
use serde_json::{json, Value};

const RULES: &str = r#"
[[rule]]
id = "no-push-on-main"
action = "deny"
tool = "Bash(git push*)"
when = [{ field = "$signal.branch", equals = "main" }]
reason = "no pushes from main"
"#;

/// A project whose `branch.sh` prints the contents of its `.branch`.
fn project(root: &Path, name: &str, branch: &str) -> std::path::PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(".branch"), branch).unwrap();
    dir
}

/// The forwarder with `input` for a hook whose project is `dir`.
fn forward_in(d: &Daemon, dir: &Path, input: &Value) -> Output {
    let mut input = input.clone();
    input["cwd"] = json!(dir);
    let mut child = Command::new(daemon::forwarder_bin())
        .env("HOOKD_SOCKET", &d.socket)
        .env("CLAUDE_PROJECT_DIR", dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn daemon_with(root: &Path, extra: &str) -> Daemon {
    let script = root.join("branch.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf '  %s\\n\\n' \"$(cat .branch)\"\n",
    )
    .unwrap();
    Daemon::start_with(DaemonOptions {
        rules: Some(RULES.to_string()),
        config: Some(format!(
            "[signals.branch]\ncommand = [\"sh\", \"{}\"]\nttl = \"1s\"\ntimeout = \"2s\"\n{extra}",
            script.display()
        )),
        ..DaemonOptions::default()
    })
}

/// On `main` a push is denied, on a feature branch it is not: each
/// project's own value, trimmed, in the decision line. When the branch
/// changes, the value follows once its `ttl` passed. The replay of the log
/// reproduces every decision with the recorded values.
#[test]
fn a_signal_makes_a_rule_apply_on_one_branch_and_not_another() {
    let root = tempfile::tempdir().unwrap();
    let main = project(root.path(), "on-main", "main");
    let feature = project(root.path(), "on-feature", "feature/x");
    let d = daemon_with(root.path(), "");

    // The project's first hook waits (boundedly) for the first value.
    let denied = forward_in(&d, &main, &bash("git push origin main"));
    assert_eq!(permission_decision(&denied), "deny", "{}", d.stderr());
    assert_eq!(
        permission_decision(&forward_in(&d, &feature, &bash("git push origin HEAD"))),
        Value::Null
    );
    // Cached: a second hook in the project runs nothing.
    assert_eq!(
        permission_decision(&forward_in(&d, &main, &bash("git push"))),
        "deny"
    );
    let status = d.status();
    assert_eq!(status["signals"]["runs"], 2, "{status:#}");
    assert_eq!(status["signals"]["failures"], 0);
    assert_eq!(status["signals"]["cached"], 2);

    // The branch changes; once the ttl passed, the value follows.
    std::fs::write(main.join(".branch"), "feature/y").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1200));
    let mut verdicts = Vec::new();
    for _ in 0..50 {
        let v = permission_decision(&forward_in(&d, &main, &bash("git push")));
        verdicts.push(v.clone());
        if v == Value::Null {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(verdicts.last(), Some(&Value::Null), "{verdicts:?}");

    let decisions = d.wait_decisions(3 + verdicts.len());
    let signals: Vec<Value> = decisions.iter().map(|l| l["signals"].clone()).collect();
    assert_eq!(signals[0], json!({"branch": "main"}), "{decisions:#?}");
    assert_eq!(signals[1], json!({"branch": "feature/x"}));
    assert_eq!(signals.last().unwrap(), &json!({"branch": "feature/y"}));

    // Replay with the recorded values: the same decisions, though the
    // project is on another branch now.
    let out = Command::new(daemon::hookd_bin())
        .args(["replay", d.log.to_str().unwrap(), "--rules"])
        .arg(d.dir.path().join("rules.toml"))
        .arg("--json")
        .env("XDG_CONFIG_HOME", "/nonexistent-hookd-test")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(report["changes"], json!([]), "{report}");

    // `--rerun-signals` runs the config's signals again, now: both projects
    // are on feature branches, so every deny would change.
    let out = Command::new(daemon::hookd_bin())
        .args(["replay", d.log.to_str().unwrap(), "--rules"])
        .arg(d.dir.path().join("rules.toml"))
        .args(["--json", "--rerun-signals", "--config"])
        .arg(d.dir.path().join("config.toml"))
        .env("XDG_CONFIG_HOME", "/nonexistent-hookd-test")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(1), "{report}");
    let denied: Vec<&Value> = decisions
        .iter()
        .filter(|l| l["verdict"] == "deny")
        .map(|l| &l["event_id"])
        .collect();
    let changed: Vec<&Value> = report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c["event_id"])
        .collect();
    assert_eq!(changed, denied, "{report:#}");
    assert!(report["changes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["old"] == "deny" && c["new"] == "none"));
    // Off by default, and `--config` only with it.
    let out = Command::new(daemon::hookd_bin())
        .args(["replay", d.log.to_str().unwrap(), "--config"])
        .arg(d.dir.path().join("config.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// A command that fails or hangs past its timeout leaves the signal
/// unknown (the rule does not apply), never holds the hook past the
/// bounded first wait, and is counted in `status`.
#[test]
fn a_failing_or_hanging_signal_is_unknown_and_counted() {
    let root = tempfile::tempdir().unwrap();
    let dir = project(root.path(), "p", "main");
    let d = daemon_with(
        root.path(),
        "\n[signals.ci]\ncommand = [\"sh\", \"-c\", \"exit 3\"]\n\n[signals.slow]\ncommand = [\"sleep\", \"30\"]\ntimeout = \"300ms\"\n",
    );
    let out = forward_in(&d, &dir, &bash("git push"));
    assert_eq!(permission_decision(&out), "deny", "{}", d.stderr());
    let status = d.wait_for_status("two failed signal runs", |s| {
        s["signals"]["failures"].as_u64() == Some(2)
    });
    assert_eq!(status["signals"]["runs"], 3, "{status:#}");
    let decisions = d.wait_decisions(1);
    assert_eq!(decisions[0]["signals"], json!({"branch": "main"}));
    let shown = Command::new(daemon::hookd_bin())
        .args(["status", "--socket", d.socket.to_str().unwrap()])
        .env("XDG_CONFIG_HOME", "/nonexistent-hookd-test")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("signals: 3 runs, 2 failed"), "{shown}");
}
