//! Integration tests: the real `hookd serve` and `hook-forwarder` binaries on
//! a temp socket. Transport, fallbacks, bad frames, lifecycle.

use crate::support::daemon;

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use daemon::{fixture, run_forwarder, stdout_json, Daemon, RawClient};
use serde_json::{json, Value};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn no_rule_means_no_opinion_and_both_lines_are_logged() {
    let d = Daemon::start();
    let out = d.forward(&fixture("PreToolUse.json"), &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stderr.is_empty(), "{}", stderr(&out));

    let lines = d.wait_log_lines(2);
    let event = lines
        .iter()
        .find(|l| l["type"] == "event")
        .expect("event line");
    let decision = lines
        .iter()
        .find(|l| l["type"] == "decision")
        .expect("decision line");
    assert_eq!(event["kind"], "PreToolUse");
    assert_eq!(event["tool"], "Bash");
    assert_eq!(event["harness"], "claude-code");
    assert_eq!(event["project_dir"], "/home/dev/project");
    assert_eq!(event["input"], fixture("PreToolUse.json"));
    assert_eq!(decision["event_id"], event["id"]);
    assert_eq!(decision["verdict"], "none");
    assert_eq!(decision["source"], "default");
    assert!(decision["latency_us"].as_u64().is_some());
}

#[test]
fn every_fixture_event_is_answered_and_logged_verbatim() {
    let d = Daemon::start();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/events");
    let mut sent = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let input = fixture(&name);
        let out = d.forward(&input, &[]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", stderr(&out));
        assert!(out.stderr.is_empty(), "{name} fell back: {}", stderr(&out));
        sent.push(input);
    }
    let lines = d.wait_log_lines(sent.len() * 2);
    let logged: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "event")
        .map(|l| &l["input"])
        .collect();
    for input in &sent {
        assert!(logged.contains(&input), "not logged verbatim: {input}");
    }
}

#[test]
fn unknown_event_is_kept_and_answered_with_no_opinion() {
    let d = Daemon::start();
    let input = fixture("unknown.FutureEvent.json");
    let out = d.forward(&input, &["--fail-closed"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let lines = d.wait_log_lines(2);
    assert_eq!(lines[0]["kind"], "FutureEvent");
    assert_eq!(lines[0]["input"]["brand_new_field"], json!({"x": 1}));
}

#[test]
fn daemon_absent_falls_back_open_or_closed_with_one_stderr_line() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("nobody.sock");
    let input = fixture("PreToolUse.json").to_string();

    let open = run_forwarder(&socket, input.as_bytes(), &[]);
    assert_eq!(open.status.code(), Some(0));
    assert!(open.stdout.is_empty());
    assert_eq!(
        stderr(&open),
        format!(
            "hookd-forwarder: fallback event=PreToolUse reason=no_socket socket={}\n",
            socket.display()
        )
    );

    let closed = run_forwarder(&socket, input.as_bytes(), &["--fail-closed"]);
    assert_eq!(closed.status.code(), Some(0));
    let v = stdout_json(&closed);
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "PreToolUse");
    assert_eq!(v["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(stderr(&closed).lines().count(), 1);

    // PermissionRequest blocks through decision.behavior, never exit 2.
    let pr = fixture("PermissionRequest.json").to_string();
    let closed = run_forwarder(&socket, pr.as_bytes(), &["--fail-closed"]);
    assert_eq!(closed.status.code(), Some(0));
    assert_eq!(
        stdout_json(&closed)["hookSpecificOutput"]["decision"]["behavior"],
        "deny"
    );

    // Stop is never blocked by a fallback: that would keep the agent running.
    let stop = fixture("Stop.json").to_string();
    let closed = run_forwarder(&socket, stop.as_bytes(), &["--fail-closed"]);
    assert_eq!(closed.status.code(), Some(0));
    assert!(closed.stdout.is_empty());
    assert!(stderr(&closed).contains("event=Stop reason=no_socket"));
}

#[test]
fn stale_socket_gives_connect_refused_and_a_new_daemon_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    let out = run_forwarder(
        &socket,
        fixture("PreToolUse.json").to_string().as_bytes(),
        &[],
    );
    assert!(
        stderr(&out).contains("reason=connect_refused"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn stdin_that_is_not_json_is_logged_and_answered_with_the_fallback() {
    let d = Daemon::start();
    let out = run_forwarder(&d.socket, b"this is not json", &["--fail-closed"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "an unknown event is never blocked");
    assert!(
        out.stderr.is_empty(),
        "the daemon answered: {}",
        stderr(&out)
    );

    // Cut short, but the event can still be seen: a fail-closed PreToolUse
    // is blocked, by the daemon, which logs what was wrong.
    let broken =
        br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"#;
    let out = run_forwarder(&d.socket, broken, &["--fail-closed"]);
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let out = run_forwarder(&d.socket, broken, &[]);
    assert!(out.stdout.is_empty(), "fail-open: no opinion");

    let lines = d.wait_log_lines(6);
    let events: Vec<&Value> = lines.iter().filter(|l| l["type"] == "event").collect();
    assert_eq!(events.len(), 3, "{lines:#?}");
    assert_eq!(events[0]["kind"], "unknown");
    assert_eq!(events[0]["input"], "this is not json");
    assert!(
        events[0]["input_error"]
            .as_str()
            .unwrap()
            .starts_with("stdin is not JSON"),
        "{}",
        events[0]
    );
    assert_eq!(events[1]["kind"], "PreToolUse");
    assert_eq!(events[1]["input"], String::from_utf8_lossy(broken).as_ref());
    let decisions: Vec<&Value> = lines.iter().filter(|l| l["type"] == "decision").collect();
    assert_eq!(decisions[1]["verdict"], "deny");
    assert_eq!(decisions[1]["source"], "fallback");
    assert_eq!(decisions[2]["verdict"], "none");
}

/// JSON the forwarder passes on but serde_json cannot hold (a number out of
/// range): the daemon cannot read the input either, and says so in the log
/// instead of refusing the frame.
#[test]
fn input_the_daemon_cannot_read_is_logged_and_answered_with_the_fallback() {
    let d = Daemon::start();
    let input = br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /","n":1e400}}"#;
    let out = run_forwarder(&d.socket, input, &["--fail-closed"]);
    assert!(
        out.stderr.is_empty(),
        "the daemon answered: {}",
        stderr(&out)
    );
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    let lines = d.wait_log_lines(2);
    assert_eq!(lines[0]["kind"], "PreToolUse");
    assert!(
        lines[0]["input_error"]
            .as_str()
            .unwrap()
            .contains("number out of range"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1]["source"], "fallback");
}

#[test]
fn bad_args_fall_back_and_keep_fail_closed() {
    let d = Daemon::start();
    let out = d.forward(&fixture("PreToolUse.json"), &["--frobnicate"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(
        stderr(&out).contains("event=PreToolUse reason=bad_args")
            && stderr(&out).contains(r#"detail="unknown argument `--frobnicate`"#),
        "{}",
        stderr(&out)
    );
    // An error anywhere on the line keeps a --fail-closed anywhere on it,
    // and nothing panics.
    for args in [
        &["--frobnicate", "--fail-closed"][..],
        &["--fail-closed", "--frobnicate"],
        &["--fail-closed", "--timeout", "1e300"],
        &["--timeout", "inf", "--fail-closed=all"],
    ] {
        let out = d.forward(&fixture("PreToolUse.json"), args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
            "deny",
            "{args:?}"
        );
        assert!(stderr(&out).contains("reason=bad_args"), "{}", stderr(&out));
    }
    let out = d.forward(
        &fixture("UserPromptSubmit.json"),
        &["--frob", "--fail-closed=all"],
    );
    assert_eq!(stdout_json(&out)["decision"], "block");
    let out = d.forward(
        &fixture("UserPromptSubmit.json"),
        &["--frob", "--fail-closed"],
    );
    assert!(out.stdout.is_empty(), "tools only: the prompt goes through");
    assert!(d.log_lines().is_empty(), "nothing was sent");
}

#[test]
fn malformed_frames_close_only_their_connection() {
    let d = Daemon::start();
    let cases: &[(&[u8], &str)] = &[
        (b"{not json}\n", "invalid_json"),
        (b"\xff\xfe\n", "invalid_json"),
        (b"{\"type\":\"launch_missiles\"}\n", "invalid_frame"),
        (b"{\"type\":\"hook\",\"id\":\"x\"}\n", "invalid_frame"),
        (b"[1,2,3]\n", "invalid_frame"),
    ];
    for (bytes, code) in cases {
        let mut c = RawClient::connect(&d.socket);
        c.send_raw(bytes).unwrap();
        let reply = c.recv().expect("an error frame");
        assert_eq!(reply["type"], "error");
        assert_eq!(reply["code"], *code, "{reply}");
        assert!(!reply["message"].as_str().unwrap().is_empty());
        assert!(c.is_closed(), "connection must be closed after {code}");
    }
    // The daemon keeps serving.
    let out = d.forward(&fixture("Stop.json"), &[]);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn oversize_frame_is_refused_and_large_valid_inputs_pass() {
    let d = Daemon::start();
    // 9 MiB without a newline: over the default 8 MiB cap.
    let mut c = RawClient::connect(&d.socket);
    let big = vec![b' '; 9 * 1024 * 1024];
    let _ = c.send_raw(&big); // the daemon may close before reading it all
    let reply = c.recv().expect("an error frame");
    assert_eq!(reply["code"], "frame_too_large", "{reply}");
    assert!(c.is_closed());

    // A 2 MiB PostToolUse (tool output) is well within the cap.
    let mut input = fixture("PostToolUse.json");
    input["tool_response"]["stdout"] = Value::String("x".repeat(2 * 1024 * 1024));
    let out = d.forward(&input, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    let lines = d.wait_log_lines(1);
    assert_eq!(
        lines[0]["input"]["tool_response"]["stdout"]
            .as_str()
            .unwrap()
            .len(),
        2 * 1024 * 1024
    );
}

/// A client that sends its hooks and shuts down its writing side gets
/// every answer before the daemon closes the connection: the end of its
/// frames loses neither the answers the rules gave at once (written when
/// nothing is left to read) nor those of hooks answered by a task of their
/// own (the first hook of a project waits for its rules file to be looked
/// for).
#[test]
fn hooks_sent_before_the_peer_shuts_down_its_side_are_answered() {
    let d = Daemon::start();
    let mut c = RawClient::hello(&d.socket, "half-closer");
    for i in 0..3 {
        c.send(
            &json!({"type": "hook", "id": format!("h{i}"), "deadline_ms": 5000,
                       "input": fixture("Stop.json")}),
        );
    }
    c.try_clone_writer()
        .shutdown(std::net::Shutdown::Write)
        .unwrap();
    let mut ids = Vec::new();
    while let Some(frame) = c.recv() {
        assert_eq!(frame["type"], "hook_result", "{frame}");
        ids.push(frame["id"].as_str().unwrap().to_string());
    }
    // Each as it is decided: the first waited for the project's rules.
    ids.sort();
    assert_eq!(ids, ["h0", "h1", "h2"]);
}

#[test]
fn hello_welcome_and_version_mismatch() {
    let d = Daemon::start();
    let mut c = RawClient::connect(&d.socket);
    c.send(&json!({"type": "hello", "v": 1, "role": "client", "name": "test"}));
    let welcome = c.recv().unwrap();
    assert_eq!(welcome["type"], "welcome");
    assert_eq!(welcome["v"], 1);
    assert_eq!(welcome["server_version"], env!("CARGO_PKG_VERSION"));
    // Hooks may also be sent on a long-lived connection.
    c.send(
        &json!({"type": "hook", "id": "h1", "deadline_ms": 5000, "input": fixture("Stop.json")}),
    );
    let result = c.recv().unwrap();
    assert_eq!(
        result,
        json!({"type": "hook_result", "id": "h1", "exit_code": 0, "stdout": "", "stderr": ""})
    );
    c.send(&json!({"type": "hello", "v": 1, "role": "client", "name": "again"}));
    assert_eq!(c.recv().unwrap()["code"], "unexpected_frame");

    let mut old = RawClient::connect(&d.socket);
    old.send(&json!({"type": "hello", "v": 2, "role": "client", "name": "future"}));
    let reply = old.recv().unwrap();
    assert_eq!(reply["code"], "unsupported_version");
    assert!(reply["message"].as_str().unwrap().contains("v1"), "{reply}");
    assert!(old.is_closed());
}

#[test]
fn second_daemon_on_the_same_socket_is_refused() {
    let d = Daemon::start();
    let out = std::process::Command::new(daemon::hookd_bin())
        .args(["serve", "--socket"])
        .arg(&d.socket)
        .arg("--log")
        .arg(d.dir.path().join("other.jsonl"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("already running"), "{}", stderr(&out));
    // The first one is unharmed.
    assert!(d.forward(&fixture("Stop.json"), &[]).stderr.is_empty());
}

#[test]
fn sigterm_removes_the_socket_and_exits_zero() {
    let mut d = Daemon::start();
    assert!(d.forward(&fixture("Stop.json"), &[]).stderr.is_empty());
    let status = d.stop();
    assert_eq!(status.code(), Some(0), "{}", d.stderr());
    assert!(!d.socket.exists(), "socket left behind");
    // The log was flushed before exit.
    assert_eq!(daemon::read_log(&d.log).len(), 2);
    let out = run_forwarder(&d.socket, fixture("Stop.json").to_string().as_bytes(), &[]);
    assert!(stderr(&out).contains("reason=no_socket"));
}

/// The Unix sockets the kernel lists under `path` (/proc/net/unix): the
/// listener, and each connection in its backlog.
#[cfg(target_os = "linux")]
fn unix_sockets_at(path: &std::path::Path) -> usize {
    let path = path.to_str().unwrap();
    std::fs::read_to_string("/proc/net/unix")
        .unwrap()
        .lines()
        .filter(|line| line.split_whitespace().nth(7) == Some(path))
        .count()
}

#[cfg(target_os = "linux")]
#[test]
fn daemon_stopped_then_killed_mid_request() {
    let d = Daemon::start();
    // A frozen daemon: the kernel accepts the connection, nobody answers.
    d.signal("STOP");
    let out = d.forward(&fixture("PreToolUse.json"), &["--timeout", "0.3"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stderr(&out).contains("event=PreToolUse reason=timeout"),
        "{}",
        stderr(&out)
    );

    // Now kill it while a request is in flight: once the forwarder's
    // connection waits in the frozen daemon's backlog (the kernel lists it
    // in /proc/net/unix under the socket's path), whether or not its frame
    // is written yet, the daemon's death closes it.
    let before = unix_sockets_at(&d.socket);
    let socket = d.socket.clone();
    let input = fixture("PreToolUse.json").to_string();
    let forwarder = std::thread::spawn(move || {
        run_forwarder(
            &socket,
            input.as_bytes(),
            &["--fail-closed", "--timeout", "20"],
        )
    });
    daemon::poll_until("the forwarder to connect", Duration::from_secs(10), || {
        unix_sockets_at(&d.socket) > before
    });
    d.signal("KILL");
    let out = forwarder.join().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("reason=closed"), "{}", stderr(&out));
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

#[test]
fn peers_running_as_another_user_are_refused() {
    if nix::unistd::geteuid().as_raw() != 0 {
        eprintln!("skipped: needs root to run a peer as another uid");
        return;
    }
    let d = Daemon::start();
    // Open the directory and socket so the kernel lets uid 65534 connect at
    // all; the daemon's own SO_PEERCRED check must then refuse it.
    let run = d.socket.parent().unwrap();
    std::fs::set_permissions(d.dir.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(run, std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&d.socket, std::fs::Permissions::from_mode(0o666)).unwrap();

    use std::os::unix::process::CommandExt;
    // A raw client: the forwarder itself would not even connect to another
    // user's daemon (tests/daemon/forwarder.rs).
    let frame = format!(
        r#"{{"type":"hook","id":"x","deadline_ms":5000,"input":{}}}"#,
        fixture("PreToolUse.json")
    );
    // The daemon answers and closes as soon as it has checked the peer,
    // so the send may meet a closed socket; the answer is read anyway.
    let client = "import socket, sys\n\
                  s = socket.socket(socket.AF_UNIX)\n\
                  s.connect(sys.argv[1])\n\
                  try:\n    s.sendall(sys.argv[2].encode() + b'\\n')\n\
                  except OSError:\n    pass\n\
                  print(s.makefile().readline(), end='')\n";
    let out = std::process::Command::new("python3")
        .args(["-c", client])
        .arg(&d.socket)
        .arg(&frame)
        .uid(65534)
        .gid(65534)
        .output()
        .unwrap();
    let reply: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "permission_denied", "{reply}");
    assert!(
        d.stderr()
            .contains("refused a peer running as another user"),
        "{}",
        d.stderr()
    );
    assert!(
        d.log_lines().is_empty(),
        "a refused peer's hook must not be logged"
    );
}

/// Opens up to `n` connections to `socket` that never send anything,
/// without blocking: connects that find the backlog full are not retried.
fn idle_connections(path: &std::path::Path, n: usize) -> Vec<std::os::fd::OwnedFd> {
    use nix::sys::socket::{connect, socket, AddressFamily, SockFlag, SockType, UnixAddr};
    let addr = UnixAddr::new(path).unwrap();
    let mut open = Vec::with_capacity(n);
    for _ in 0..n {
        // Non-blocking and close-on-exec through fcntl (SOCK_NONBLOCK and
        // SOCK_CLOEXEC are Linux's alone): the daemons other tests spawn
        // meanwhile must not inherit these.
        use nix::fcntl::{fcntl, FcntlArg, FdFlag, OFlag};
        let fd = socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::empty(),
            None,
        )
        .unwrap();
        fcntl(&fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).unwrap();
        fcntl(&fd, FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).unwrap();
        if connect(std::os::fd::AsRawFd::as_raw_fd(&fd), &addr).is_ok() {
            open.push(fd);
        }
    }
    open
}

fn soft_fd_limit(pid: u32) -> u64 {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    line.split_whitespace().nth(3).unwrap().parse().unwrap()
}

#[test]
fn thousands_of_idle_connections_do_not_starve_forwarders() {
    let hard = daemon::raise_own_fd_limit();
    assert!(
        hard >= 6000,
        "this test needs an open-file hard limit of 6000, not {hard}"
    );
    // Started with the usual default soft limit: it raises its own.
    let d = Daemon::start_with(daemon::DaemonOptions {
        shell: Some("ulimit -Sn 1024".into()),
        ..daemon::DaemonOptions::default()
    });
    assert_eq!(soft_fd_limit(d.pid()), hard);
    assert!(
        d.stderr().contains("raised the open-file limit") && d.stderr().contains("from=1024"),
        "{}",
        d.stderr()
    );
    // More idle peers than the 4096 connections served at once.
    let idle = idle_connections(&d.socket, 5000);
    assert!(idle.len() > 4096, "only {} connected", idle.len());
    let out = d.forward(&fixture("PreToolUse.json"), &["--timeout", "15"]);
    assert!(
        out.stderr.is_empty(),
        "the forwarder was starved: {}",
        stderr(&out)
    );
    let status = d.status();
    assert!(
        status["counters"]["shed_peers"].as_u64().unwrap() > 0,
        "{status}"
    );
    drop(idle);
}

#[test]
fn idle_connections_beyond_a_low_fd_limit_do_not_starve_forwarders() {
    daemon::raise_own_fd_limit();
    // A hard limit of 1024 cannot be raised: the daemon caps connections
    // below it and sheds idle peers instead of running out of descriptors.
    let d = Daemon::start_with(daemon::DaemonOptions {
        shell: Some("ulimit -n 1024".into()),
        ..daemon::DaemonOptions::default()
    });
    assert_eq!(soft_fd_limit(d.pid()), 1024);
    let status = d.status();
    assert_eq!(
        status["counters"]["max_connections"],
        1024 - 128,
        "{status}"
    );
    let idle = idle_connections(&d.socket, 2000);
    let out = d.forward(&fixture("PreToolUse.json"), &["--timeout", "15"]);
    assert!(
        out.stderr.is_empty(),
        "the forwarder was starved: {}",
        stderr(&out)
    );
    assert!(d.counter("shed_peers") > 0);
    drop(idle);
}

// Peers stalled inside their first frame (`SHED_STALLED_AFTER`) and silent
// ones (`SHED_AFTER`) are shed on time: tests/daemon/inprocess.rs, on tokio's
// paused clock.

#[test]
fn project_rules_are_read_off_the_hook_path_and_edits_still_apply() {
    let d = Daemon::start();
    let project = d.dir.path().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let rules = |tool: &str| {
        format!("[[rule]]\nid = \"no\"\naction = \"deny\"\ntool = \"Bash({tool}:*)\"\n")
    };
    std::fs::write(project.join(".claude/hookd.toml"), rules("make")).unwrap();
    let mut c = RawClient::hello(&d.socket, "hooks");
    let mut verdict = |command: &str| {
        let mut input = fixture("PreToolUse.json");
        input["cwd"] = json!(project);
        input["tool_input"]["command"] = json!(command);
        c.send(&json!({"type": "hook", "id": "x", "deadline_ms": 5000, "env": {"CLAUDE_PROJECT_DIR": project}, "input": input}));
        let reply = c.recv().expect("hook_result");
        let stdout = reply["stdout"].as_str().unwrap().to_string();
        if stdout.is_empty() {
            "none".to_string()
        } else {
            let v: Value = serde_json::from_str(&stdout).unwrap();
            v["hookSpecificOutput"]["permissionDecision"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    // The project's first hook is judged with its rules.
    let started = std::time::Instant::now();
    assert_eq!(verdict("make all"), "deny");
    for _ in 0..200 {
        assert_eq!(verdict("make all"), "deny");
    }
    // The file is checked about once a second, not once per hook: at most
    // one check per second begun (rounded up; a loaded machine may take
    // 0.9 s or 2.1 s for these hooks), the first hook's, and a margin.
    let projects = d.status()["projects"].clone();
    let seconds = started.elapsed().as_secs_f64().ceil() as u64;
    assert!(
        projects["checks"].as_u64().unwrap() <= seconds + 3,
        "{projects} after {seconds} s"
    );
    assert_eq!(projects["loads"], 1, "{projects}");

    std::fs::write(project.join(".claude/hookd.toml"), rules("cargo")).unwrap();
    daemon::poll_until("the edit applied", Duration::from_secs(10), || {
        verdict("make all") != "deny"
    });
    assert_eq!(verdict("cargo build"), "deny");
}
