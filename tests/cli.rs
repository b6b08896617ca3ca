//! The `hookd` command line as a user meets it: bad flag values get a clear
//! error and exit 2, and every command exits quietly when its reader goes
//! away (`hookd … | head -1`).

#[path = "support/daemon.rs"]
mod daemon;

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
        &["tail", "--follow", "--kind", "NoSuchEvent", "--log", log],
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
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("hookd {args:?} kept running after its reader went away");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
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
