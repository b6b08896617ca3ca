//! The real `hook-forwarder` against sockets it must not trust, a daemon
//! that never accepts, a stdin that never closes, and hook inputs serde_json
//! refuses by default: it sends nothing it should not, never waits past its
//! deadline, and a deny rule still sees every command. The same bytes
//! POSTed as a Claude Code `http` hook get the same answer.

use crate::support::daemon;
use crate::support::http;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use daemon::{fixture, run_forwarder, stdout_json, Daemon, DaemonOptions};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The forwarder fell back for `reason` and, fail-closed, denied the tool.
fn assert_denied_for(out: &Output, reason: &str) {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    assert!(
        stderr(out).contains(&format!("event=PreToolUse reason={reason} ")),
        "{}",
        stderr(out)
    );
    assert_eq!(
        stdout_json(out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
}

fn pre_tool_use() -> Vec<u8> {
    fixture("PreToolUse.json").to_string().into_bytes()
}

/// A listener of ours at `dir/hookd.sock`; it must never see a connection.
fn assert_untrusted_dir(dir: &Path, socket: &Path) {
    let listener = UnixListener::bind(dir.join("hookd.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let out = run_forwarder(socket, &pre_tool_use(), &["--fail-closed"]);
    assert_denied_for(&out, "untrusted_dir");
    assert!(stderr(&out).contains("detail="), "{}", stderr(&out));
    assert!(
        listener.accept().is_err(),
        "the forwarder connected through an untrusted directory"
    );
    let open = run_forwarder(socket, &pre_tool_use(), &[]);
    assert!(open.stdout.is_empty(), "fail-open: no opinion");
    assert!(stderr(&open).contains("reason=untrusted_dir"));
}

#[test]
fn a_socket_in_a_directory_others_can_write_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let open = tmp.path().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_untrusted_dir(&open, &open.join("hookd.sock"));
    let out = run_forwarder(&open.join("hookd.sock"), &pre_tool_use(), &[]);
    assert!(
        stderr(&out).contains("writable by group or others"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_socket_behind_a_symlinked_directory_is_not_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let real = tmp.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = tmp.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    assert_untrusted_dir(&real, &link.join("hookd.sock"));
}

#[test]
fn a_socket_in_another_users_directory_is_not_trusted() {
    if nix::unistd::geteuid().as_raw() != 0 {
        eprintln!("skipped: needs root to give a directory to another uid");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o700)).unwrap();
    nix::unistd::chown(&theirs, Some(65534.into()), Some(65534.into())).unwrap();
    assert_untrusted_dir(&theirs, &theirs.join("hookd.sock"));
}

/// Listens on `path` as uid 65534 and prints `ready`, then how many bytes
/// its one peer sent before closing.
const LISTEN_AS_ANOTHER_USER: &str = "\
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
print('ready', flush=True)
s.settimeout(30)
conn, _ = s.accept()
conn.settimeout(30)
received = 0
while True:
    chunk = conn.recv(65536)
    if not chunk:
        break
    received += len(chunk)
print(received, flush=True)
";

/// A child process, killed by pid and reaped when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_daemon_running_as_another_user_gets_nothing() {
    if nix::unistd::geteuid().as_raw() != 0 {
        eprintln!("skipped: needs root to run a listener as another uid");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The other user binds in a directory of theirs...
    let theirs = tmp.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    nix::unistd::chown(&theirs, Some(65534.into()), Some(65534.into())).unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o711)).unwrap();
    let mut listener = Reaped(
        Command::new("python3")
            .args(["-c", LISTEN_AS_ANOTHER_USER])
            .arg(theirs.join("hookd.sock"))
            .uid(65534)
            .gid(65534)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(listener.0.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready");
    // ...and the socket ends up in ours, which passes every directory check
    // (say, planted there before we created it; here we move it).
    let ours = tmp.path().join("ours");
    std::fs::create_dir(&ours).unwrap();
    std::fs::set_permissions(&ours, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = ours.join("hookd.sock");
    std::fs::rename(theirs.join("hookd.sock"), &socket).unwrap();

    let out = run_forwarder(&socket, &pre_tool_use(), &["--fail-closed"]);
    assert_denied_for(&out, "untrusted_peer");
    assert!(
        stderr(&out).contains("runs as uid 65534, this hook as uid 0"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        lines.next().unwrap().unwrap(),
        "0",
        "the other user's process received the hook input"
    );
}

/// Listens on `path` with a backlog of 0, fills the backlog with its own
/// connections, prints `full` and then never accepts.
const FULL_BACKLOG: &str = "\
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(0)
clients = []
while True:
    c = socket.socket(socket.AF_UNIX)
    c.setblocking(False)
    try:
        c.connect(sys.argv[1])
    except BlockingIOError:
        break
    clients.append(c)
print('full', flush=True)
time.sleep(120)
";

/// Waits for `child` to exit, at most `limit`; the test's own generous
/// bound, not a claim about how fast the forwarder is.
fn wait_exit(child: Child, limit: Duration) -> Output {
    let pid = child.id();
    let done = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let out = child.wait_with_output();
        let _ = done.0.send(());
        out
    });
    let started = Instant::now();
    if done.1.recv_timeout(limit).is_err() {
        let _ = Command::new("kill")
            .arg("-KILL")
            .arg(pid.to_string())
            .status();
        panic!("the forwarder was still running after {limit:?}");
    }
    eprintln!("forwarder exited after {:?}", started.elapsed());
    waiter.join().unwrap().unwrap()
}

#[test]
fn a_full_listen_backlog_does_not_hold_the_forwarder_past_its_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let socket = tmp.path().join("hookd.sock");
    let mut wedged = Reaped(
        Command::new("python3")
            .args(["-c", FULL_BACKLOG])
            .arg(&socket)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut lines = BufReader::new(wedged.0.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "full");

    let mut child = Command::new(daemon::forwarder_bin())
        .args(["--timeout", "2", "--fail-closed"])
        .env("HOOKD_SOCKET", &socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&pre_tool_use())
        .unwrap();
    let out = wait_exit(child, Duration::from_secs(20));
    assert_denied_for(&out, "timeout");
}

#[test]
fn a_stdin_that_never_closes_does_not_hold_the_forwarder_past_its_timeout() {
    let d = Daemon::start();
    let mut child = Command::new(daemon::forwarder_bin())
        .args(["--timeout", "2", "--fail-closed"])
        .env("HOOKD_SOCKET", &d.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The whole input, but stdin stays open.
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&pre_tool_use()).unwrap();
    let out = wait_exit(child, Duration::from_secs(20));
    drop(stdin);
    assert_denied_for(&out, "stdin_timeout");
    assert!(d.log_lines().is_empty(), "nothing was sent");
}

const DENY_RM: &str = r#"
[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "no rm here"
"#;

/// A PreToolUse for Bash `command` with `extra` fields in its tool input,
/// as JSON text (which may hold what serde_json refuses).
fn bash_input(command_json: &str, extra: &str) -> Vec<u8> {
    format!(
        r#"{{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":{command_json}{extra}}},"tool_use_id":"toolu_1"}}"#
    )
    .into_bytes()
}

/// A daemon with [`DENY_RM`] (and `args`) reached both ways Claude Code
/// sends a hook: through `hook-forwarder` and as an `http` hook.
struct BothTransports {
    daemon: Daemon,
    /// The HTTP listener's address.
    addr: String,
    /// `Bearer <token>`.
    bearer: String,
}

impl BothTransports {
    fn start(args: &[&str]) -> BothTransports {
        let daemon = Daemon::start_with(DaemonOptions {
            rules: Some(DENY_RM.into()),
            config: Some("[http]\nlisten = \"127.0.0.1:0\"\n".into()),
            args: args.iter().map(|a| a.to_string()).collect(),
            ..DaemonOptions::default()
        });
        let addr = daemon.status()["http"]["listen"]
            .as_str()
            .expect("status.http.listen")
            .to_string();
        let token =
            std::fs::read_to_string(daemon.dir.path().join("config/hookd/http-token")).unwrap();
        BothTransports {
            daemon,
            addr,
            bearer: format!("Bearer {}", token.trim()),
        }
    }

    /// What `input` is answered with through each transport (the
    /// forwarder's stdout, the HTTP body), the transport named;
    /// `fail_closed` is the forwarder's `--fail-closed`, and the handler's
    /// `fail_closed=tools` in its URL.
    fn answers(&self, input: &[u8], fail_closed: bool) -> [(&'static str, String); 2] {
        let args: &[&str] = if fail_closed { &["--fail-closed"] } else { &[] };
        let forwarded = run_forwarder(&self.daemon.socket, input, args);
        assert_eq!(forwarded.status.code(), Some(0), "{}", stderr(&forwarded));
        let path = match fail_closed {
            true => "/hook/claude-code?timeout=30&fail_closed=tools",
            false => "/hook/claude-code?timeout=30",
        };
        let response = http::request(
            &self.addr,
            "POST",
            path,
            &[
                ("Authorization", &self.bearer),
                ("Content-Type", "application/json"),
            ],
            input,
        );
        assert_eq!(response.status, 200, "{}", response.body);
        [
            (
                "hook-forwarder",
                String::from_utf8_lossy(&forwarded.stdout).into_owned(),
            ),
            ("POST /hook/claude-code", response.body),
        ]
    }

    /// Asserts that both transports denied `input` (with `reason`, when
    /// given) and answered it alike.
    fn assert_both_deny(&self, input: &[u8], fail_closed: bool, reason: Option<&str>) {
        let [forwarded, posted] = self.answers(input, fail_closed);
        for (transport, body) in [&forwarded, &posted] {
            let v: serde_json::Value = serde_json::from_str(body)
                .unwrap_or_else(|e| panic!("{transport} answered {body:?}, not JSON: {e}"));
            assert_eq!(
                v["hookSpecificOutput"]["permissionDecision"], "deny",
                "{transport} answered {body}"
            );
            if let Some(reason) = reason {
                assert_eq!(
                    v["hookSpecificOutput"]["permissionDecisionReason"], reason,
                    "{transport}"
                );
            }
        }
        assert_eq!(forwarded.1, posted.1, "the same bytes, the same answer");
    }
}

#[test]
fn a_lone_surrogate_does_not_hide_a_command_from_the_rules() {
    let both = BothTransports::start(&[]);
    // What JSON.stringify writes for a JavaScript string with a lone
    // surrogate in it.
    let input = bash_input(r#""rm -rf /tmp/x \ud800""#, "");
    both.assert_both_deny(&input, false, Some("no rm here"));
    let lines = both.daemon.wait_log_lines(4);
    for event in [&lines[0], &lines[2]] {
        assert_eq!(
            event["input"]["tool_input"]["command"], "rm -rf /tmp/x \\ud800",
            "the log shows the escape as text"
        );
    }
    for decision in [&lines[1], &lines[3]] {
        assert_eq!(decision["rule_ids"], serde_json::json!(["no-rm"]));
    }
}

#[test]
fn deep_nesting_does_not_hide_a_command_from_the_rules() {
    let both = BothTransports::start(&[]);
    // Claude Code relays tool inputs nested this deep (an MCP tool's).
    let depth = 38_000;
    let deep = format!(r#","x":{}{}"#, "[".repeat(depth), "]".repeat(depth));
    both.assert_both_deny(&bash_input(r#""rm -rf /tmp/x""#, &deep), false, None);
    let lines = both.daemon.wait_log_lines(4);
    for event in [&lines[0], &lines[2]] {
        let x = &event["input"]["tool_input"]["x"];
        assert!(x.is_array(), "the top of the nesting is kept as structure");
    }
    assert_eq!(lines[1]["verdict"], "deny");
    assert_eq!(lines[3]["verdict"], "deny");
    // The daemon is still there for the next hook.
    let out = run_forwarder(&both.daemon.socket, &pre_tool_use(), &[]);
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn an_input_of_several_mebibytes_is_read_whole() {
    // The forwarder reads stdin in growing pieces (a page first, then up
    // to 1 MiB at a time): 3 MiB of input is read whole, or it would not
    // be JSON and would fall back instead of being denied by the rule.
    // (The HTTP face caps bodies at 1 MiB, so this is the forwarder's alone.)
    let both = BothTransports::start(&[]);
    let padding = format!(r#","description":"{}""#, "x".repeat(3 << 20));
    let input = bash_input(r#""rm -rf /tmp/x""#, &padding);
    let out = run_forwarder(&both.daemon.socket, &input, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let answer = &stdout_json(&out)["hookSpecificOutput"];
    assert_eq!(answer["permissionDecision"], "deny", "{answer}");
    assert_eq!(answer["permissionDecisionReason"], "no rm here");
}

#[test]
fn input_nobody_can_read_fails_closed_where_configured_on_both_transports() {
    // Cut short: not JSON by any reader, but plainly a PreToolUse.
    let input =
        br#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf ~""#;
    let both = BothTransports::start(&[]);
    // The hook's own scope (the forwarder's --fail-closed, the URL's
    // fail_closed) blocks it.
    both.assert_both_deny(input, true, None);
    // Without one: no opinion from both, never a verdict of the rules
    // (there was nothing to judge), and both logged with what was wrong.
    let [forwarded, posted] = both.answers(input, false);
    assert_eq!(forwarded.1, "", "{forwarded:?}");
    assert_eq!(posted.1, "", "{posted:?}");
    let events: Vec<_> = both
        .daemon
        .wait_log_lines(8)
        .into_iter()
        .filter(|l| l["type"] == "event")
        .collect();
    assert_eq!(events.len(), 4, "{events:?}");
    for event in &events {
        assert_eq!(event["kind"], "PreToolUse", "{event}");
        let error = event["input_error"].as_str().unwrap_or_default();
        assert!(error.contains("not JSON"), "{event}");
    }
    // The daemon's own --fail-closed blocks it whatever the hook says.
    let both = BothTransports::start(&["--fail-closed"]);
    both.assert_both_deny(input, false, None);
}
