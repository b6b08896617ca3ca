//! `hookd approve` end to end: the real daemon on a temp socket with an
//! `ask` rule, the real approver (in a real terminal: tmux; or in line mode
//! through pipes), the real forwarder fed a PreToolUse input.

use crate::support::daemon;
use crate::support::plain::Plain;
use crate::support::tmux;

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use daemon::{forwarder_bin, hookd_bin, Daemon, DaemonOptions};
use serde_json::{json, Value};
use tmux::Tmux;

const ASK_NPM: &str = r#"
[[rule]]
id = "ask-npm"
action = "ask"
tool = "Bash(npm *)"
reason = "npm runs package scripts"
"#;

const WAIT: Duration = Duration::from_secs(15);

fn daemon() -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(ASK_NPM.into()),
        ..DaemonOptions::default()
    })
}

fn pre_tool_use(command: &str) -> Value {
    json!({
        "session_id": "1fce3faa-62dc-4336-ba9c-8494671dd902",
        "transcript_path": "/home/dev/.claude/projects/p/1fce3faa.jsonl",
        "cwd": "/home/dev/project",
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "run the tests"},
        "tool_use_id": "toolu_1",
    })
}

/// The forwarder, started with `input` on its stdin (closed), answering
/// in the background.
fn forward(daemon: &Daemon, input: &Value) -> Child {
    let mut child = Command::new(forwarder_bin())
        .env("HOOKD_SOCKET", &daemon.socket)
        .env("CLAUDE_PROJECT_DIR", "/home/dev/project")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.to_string().as_bytes()).unwrap();
    drop(stdin);
    child
}

/// The forwarder's stdout, parsed, once it has answered.
fn answer(child: Child) -> Value {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Waits until the daemon counts `n` subscribers: an ask sent before the
/// approver subscribed would go straight to its fallback.
fn wait_subscribers(daemon: &Daemon, n: u64) {
    daemon::poll_until(&format!("{n} subscribers"), WAIT, || {
        daemon.counter("subscribers") >= n
    });
}

fn approver_in_tmux(daemon: &Daemon) -> Tmux {
    let env: [(&str, &OsStr); 0] = [];
    let started = Instant::now();
    let tmux = Tmux::start(
        &hookd_bin(),
        [
            OsStr::new("approve"),
            OsStr::new("--socket"),
            daemon.socket.as_os_str(),
        ],
        &env,
    );
    tmux.wait_for("rules:", WAIT);
    eprintln!(
        "measured: tmux start to the approver's first screen with the daemon's status: {:?}",
        started.elapsed()
    );
    wait_subscribers(daemon, 1);
    tmux
}

#[test]
fn a_person_allows_with_y_and_denies_with_n_and_a_reason_in_a_real_terminal() {
    let daemon = daemon();
    let tmux = approver_in_tmux(&daemon);

    let sent = Instant::now();
    let forwarder = forward(&daemon, &pre_tool_use("npm test -- --grep approve"));
    tmux.wait_for("$ npm test -- --grep approve", WAIT);
    eprintln!(
        "measured: forwarder start to the item on screen: {:?} (pane polled every 20 ms)",
        sent.elapsed()
    );
    // tmux may show a frame half drawn: wait for the whole item.
    let screen = tmux.wait_until(WAIT, "the whole pending item", |screen| {
        screen.contains("remember: s: Bash(npm test")
            && screen.contains("asked by: ask-npm")
            && screen.contains("Pending (1)")
    });
    assert!(screen.contains("Pending (1)"), "{screen}");
    assert!(screen.contains("PreToolUse · Bash"), "{screen}");
    assert!(
        screen.contains("asked by: ask-npm — npm runs package scripts"),
        "{screen}"
    );
    assert!(screen.contains("remember: s: Bash(npm test"), "{screen}");
    tmux.send_keys(&["y"]);
    let out = answer(forwarder);
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out}"
    );
    tmux.wait_for("nothing is waiting", WAIT);
    let screen = tmux.wait_for("@hookd-approve", WAIT);
    assert!(
        screen.contains("@hookd-approve"),
        "the feed says who: {screen}"
    );

    let forwarder = forward(&daemon, &pre_tool_use("npm publish"));
    tmux.wait_for("$ npm publish", WAIT);
    tmux.send_keys(&["n"]);
    tmux.wait_for("reason: Denied by the user in hookd approve", WAIT);
    tmux.send_keys(&["C-u"]);
    tmux.type_text("not from this branch");
    tmux.send_keys(&["Enter"]);
    let out = answer(forwarder);
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecision"], "deny",
        "{out}"
    );
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecisionReason"], "not from this branch",
        "{out}"
    );

    // `q` leaves and gives the terminal back.
    tmux.send_keys(&["q"]);
    tmux.wait_until(WAIT, "the approver to exit", |_| tmux.pane_dead());
    let screen = tmux.capture_pane();
    assert!(
        !screen.contains("Pending ("),
        "alternate screen left: {screen}"
    );
}

#[test]
fn the_approver_says_the_daemon_is_down_and_reconnects() {
    let mut daemon = daemon();
    let tmux = approver_in_tmux(&daemon);
    daemon.stop();
    tmux.wait_for("hookd is down", WAIT);
    // A daemon again on the same socket path: the approver finds it.
    let again = Command::new(hookd_bin())
        .arg("serve")
        .arg("--socket")
        .arg(&daemon.socket)
        .arg("--log")
        .arg(daemon.dir.path().join("again.jsonl"))
        .env("XDG_CONFIG_HOME", daemon.dir.path().join("config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _again = EndByPid(again);
    let screen = tmux.wait_for("hookd 0.", WAIT);
    assert!(!screen.contains("is down"), "{screen}");
}

#[test]
fn a_resized_terminal_is_redrawn_to_its_new_size() {
    let daemon = daemon();
    let tmux = approver_in_tmux(&daemon);
    let widest = |screen: &str| screen.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert_eq!(widest(&tmux.capture_pane()), tmux::WIDTH as usize);
    tmux.tmux(["resize-window", "-t", "0", "-x", "80", "-y", "24"]);
    let screen = tmux.wait_until(WAIT, "a redraw at 80 columns", |screen| {
        screen.contains("┐") && screen.lines().all(|l| l.chars().count() <= 80)
    });
    let border = screen.lines().find(|l| l.contains("Pending")).unwrap();
    assert_eq!(border.chars().count(), 80, "{screen}");
    assert!(border.ends_with('┐'), "{screen}");
}

#[test]
fn sigterm_restores_the_terminal() {
    let daemon = daemon();
    // tmux does not always report a dead pane's exit status (the pane can
    // be marked dead before its process is collected): a shell around the
    // approver writes it down instead.
    let dir = tempfile::tempdir().unwrap();
    let exit_file = dir.path().join("exit");
    let env: [(&str, &OsStr); 0] = [];
    let tmux = Tmux::start(
        std::path::Path::new("/bin/sh"),
        [
            OsStr::new("-c"),
            OsStr::new("\"$0\" approve --socket \"$1\"; echo $? > \"$2\""),
            hookd_bin().as_os_str(),
            daemon.socket.as_os_str(),
            exit_file.as_os_str(),
        ],
        &env,
    );
    tmux.wait_for("rules:", WAIT);
    wait_subscribers(&daemon, 1);
    let shell = tmux.pane_pid();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
    let approver: u32 = children.split_whitespace().next().unwrap().parse().unwrap();
    let status = Command::new("kill")
        .arg("-TERM")
        .arg(approver.to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let code = daemon::poll_for("the approver's exit", WAIT, || {
        std::fs::read_to_string(&exit_file)
            .ok()
            .filter(|code| code.ends_with('\n'))
    });
    assert_eq!(code.trim(), "0");
    assert!(!tmux.capture_pane().contains("Pending ("));
}

/// A child ended by its pid (SIGKILL) and reaped when the test ends,
/// passed or not.
struct EndByPid(Child);

impl Drop for EndByPid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `hookd approve --plain` on `daemon`, once it has subscribed.
fn start_plain(daemon: &Daemon) -> Plain {
    let plain = Plain::spawn(
        Command::new(hookd_bin())
            .args(["approve", "--plain", "--socket"])
            .arg(&daemon.socket),
    );
    wait_subscribers(daemon, 1);
    plain
}

#[test]
fn line_mode_prints_items_reads_answers_and_names_bad_lines() {
    let daemon = daemon();
    let mut plain = start_plain(&daemon);

    let forwarder = forward(&daemon, &pre_tool_use("npm test -- --grep approve"));
    let header = plain.expect("pending ");
    assert!(header.contains("PreToolUse Bash"), "{header}");
    assert!(header.contains("deadline "), "{header}");
    let id = header.split_whitespace().nth(1).unwrap().to_string();
    plain.expect("  $ npm test -- --grep approve");
    plain.expect("  rule: ask-npm (npm runs package scripts)");
    // What `s` would remember, shown before it is used.
    let rule = plain
        .expect("  s: ")
        .trim_start()
        .strip_prefix("s: ")
        .unwrap()
        .to_string();

    plain.say(&format!("x {id}"));
    plain.expect("error: `x` is not an answer");
    plain.say("y zzzzzz");
    plain.expect("error: nothing pending is called `zzzzzz`");
    plain.say("y");
    plain.expect("error: `y` needs the id of a pending item");
    plain.say(&format!("y {id} because"));
    plain.expect("error: only n and N take a reason");

    plain.say(&format!("s {id}"));
    plain.expect(&format!("ok: allow {id}, session {rule}"));
    let out = answer(forwarder);
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out}"
    );
    // The grant answers the same command of the session without asking.
    let out = answer(forward(
        &daemon,
        &pre_tool_use("npm test -- --grep approve"),
    ));
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out}"
    );

    let forwarder = forward(&daemon, &pre_tool_use("npm publish\nnpm run lint"));
    let header = plain.expect("pending ");
    let id = header.split_whitespace().nth(1).unwrap().to_string();
    plain.expect("  $ npm publish");
    plain.expect("  npm run lint");
    plain.say(&format!("n {id} not from this branch"));
    plain.expect(&format!(
        "decided {id}: deny by client:hookd-approve (not from this branch)"
    ));
    let out = answer(forwarder);
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecision"], "deny",
        "{out}"
    );
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecisionReason"],
        "not from this branch"
    );

    // A script: an answer, then the end of stdin; the reply is printed
    // before it ends, successfully.
    let forwarder = forward(&daemon, &pre_tool_use("npm ci"));
    let header = plain.expect("pending ");
    let id = header.split_whitespace().nth(1).unwrap().to_string();
    plain.say(&format!("y {id}"));
    drop(plain.child.stdin.take());
    plain.expect(&format!("ok: allow {id}"));
    let status = plain.child.wait().unwrap();
    assert!(status.success(), "{status}");
    let out = answer(forwarder);
    assert_eq!(
        out["hookSpecificOutput"]["permissionDecision"], "allow",
        "{out}"
    );
}

/// `a` on an item the `ask-npm` rule covers: line mode says under the
/// item, before anything is typed, that the rule would change nothing; the
/// next identical call is asked again, and `a` again appends nothing.
#[test]
fn line_mode_says_an_always_would_change_nothing_before_it_is_written() {
    let daemon = daemon();
    let rules = daemon.dir.path().join("rules.toml");
    let mut plain = start_plain(&daemon);
    for round in 0..2 {
        let forwarder = forward(&daemon, &pre_tool_use("npm test"));
        let header = plain.expect("pending ");
        let id = header.split_whitespace().nth(1).unwrap().to_string();
        plain.expect("  a: Bash(npm test:*)");
        plain.expect(
            "  a would change nothing: the rules still ask about this event: rule ask-npm (ask beats allow)",
        );
        plain.say(&format!("a {id}"));
        plain.expect(&format!("ok: allow {id}, always Bash(npm test:*)"));
        let out = answer(forwarder);
        assert_eq!(
            out["hookSpecificOutput"]["permissionDecision"], "allow",
            "round {round}: {out}"
        );
    }
    let text = std::fs::read_to_string(&rules).unwrap();
    assert_eq!(
        text.matches("tool = \"Bash(npm test:*)\"").count(),
        1,
        "{text}"
    );
}

/// Ctrl-C (SIGINT, sent by pid) ends line mode at once while its stdin is
/// open and being read, exit status 0 as for the end of stdin, its output
/// closed after whole lines; SIGTERM the same.
#[test]
fn line_mode_ends_at_once_on_sigint_and_sigterm_while_reading_stdin() {
    let daemon = daemon();
    for (signal, name) in [(libc::SIGINT, "SIGINT"), (libc::SIGTERM, "SIGTERM")] {
        let mut plain = start_plain(&daemon);
        // An answer read and refused: stdin is being read (only once the
        // table is known), and is read again, blocking, for the next line.
        plain.say("x");
        plain.expect("error: `x` is not an answer");
        let pid = plain.child.id() as libc::pid_t;
        // SAFETY: kill(2) on our own child's pid, which has not been reaped.
        assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "{name}");
        let mut status = None;
        daemon::poll_until(&format!("line mode to end on {name}"), WAIT, || {
            status = plain.child.try_wait().unwrap();
            status.is_some()
        });
        let status = status.unwrap();
        assert_eq!(status.code(), Some(0), "{name}: {status}");
        // Its stdout is closed: the reader sees the end, after whole lines.
        loop {
            match plain.lines.recv_timeout(WAIT) {
                Ok(line) => assert!(!line.contains('\u{1b}'), "{name}: {line:?}"),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(e) => panic!("{name}: stdout still open: {e}"),
            }
        }
    }
}

/// A script that pipes an answer in at once: the answer waits until the
/// table has been read, so the id is found.
#[test]
fn line_mode_reads_answers_only_once_it_knows_the_table() {
    let daemon = daemon();
    // An item already waiting, held by another subscriber.
    let mut holder = daemon::RawClient::hello(&daemon.socket, "holder");
    holder.call(json!({"type": "subscribe"}));
    let forwarder = forward(&daemon, &pre_tool_use("npm ci"));
    let held = holder.wait_for("the held event", |f| f["type"] == "event");
    let id = held["event"]["id"].as_str().unwrap().to_string();
    let out = Command::new(hookd_bin())
        .args(["approve", "--plain", "--socket"])
        .arg(&daemon.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            let mut stdin = child.stdin.take().unwrap();
            writeln!(stdin, "y {id}")?;
            drop(stdin);
            child.wait_with_output()
        })
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("ok: allow"), "{text}");
    let answered = answer(forwarder);
    assert_eq!(
        answered["hookSpecificOutput"]["permissionDecision"],
        "allow"
    );
}

/// The approver's CPU time while idle for 60 s (no events, no pending
/// items): a measurement for docs/approvals.md, not an assertion. Run with
/// `cargo test --test end_to_end e2e_approve::idle_cpu -- --ignored --nocapture`.
#[test]
#[ignore]
fn idle_cpu() {
    let daemon = daemon();
    let tmux = approver_in_tmux(&daemon);
    let pid = tmux.pane_pid();
    let ticks = || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        // utime and stime: fields 14 and 15, i.e. 11 and 12 after `state`.
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    };
    let hz = 100.0; // USER_HZ on Linux
    let before = ticks();
    std::thread::sleep(Duration::from_secs(60));
    let used = ticks() - before;
    eprintln!(
        "measured: hookd approve idle for 60 s used {used} ticks = {:.2} s CPU ({:.3} %)",
        used as f64 / hz,
        used as f64 / hz / 60.0 * 100.0
    );
}
