//! The race between Claude Code's own permission dialog and hookd's clients
//! (issue 10), with the real Claude Code CLI in **interactive** mode in a
//! tmux pane, against the mock Messages API, with `hook-forwarder`
//! registered and a real daemon whose rule asks about the call. What the
//! CLI does is written up in `tests/e2e/FINDINGS-interactive.md`.
//!
//! Whoever answers first wins: a client (its answer resolves the dialog),
//! or the person at the terminal (the held PermissionRequest closes as
//! `terminal`, and every client sees it go). In `-p` the PreToolUse ask is
//! still held for clients.

use crate::support::claude;
use crate::support::daemon;
use crate::support::tmux;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use claude::{claude_bin, command_hook, hooks_settings, one_bash_call_script, MockApi};
use daemon::{forwarder_bin, Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};
use tmux::Tmux;

const ASK_TOUCH: &str = r#"
[[rule]]
id = "ask-touch"
action = "ask"
tool = "Bash(touch *)"
reason = "a person should confirm file creation"
"#;

const API_KEY: &str = "sk-ant-hookd-e2e-not-a-real-key";

/// The events hookd needs to see a dialog answered (as `hookd install`
/// registers them, among all the others).
const EVENTS: &[&str] = &[
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
];

const WAIT: Duration = Duration::from_secs(60);

fn daemon() -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(ASK_TOUCH.into()),
        ..DaemonOptions::default()
    })
}

/// A project and a state directory for an interactive Claude Code session
/// that lands straight at its prompt (no onboarding, no API-key question,
/// the folder trusted), with the forwarder registered.
struct Session {
    root: tempfile::TempDir,
    tmux: Tmux,
}

impl Session {
    fn start(mock: &MockApi, daemon: &Daemon) -> Session {
        let root = tempfile::Builder::new()
            .prefix("hookd-race-")
            .tempdir()
            .unwrap();
        let dir = |d: &str| {
            let path = root.path().join(d);
            std::fs::create_dir_all(&path).unwrap();
            path
        };
        let (home, config, tmp, project) = (dir("home"), dir("config"), dir("tmp"), dir("project"));
        let key_suffix = &API_KEY[API_KEY.len() - 20..];
        let state = json!({
            "hasCompletedOnboarding": true,
            "theme": "dark",
            "customApiKeyResponses": {"approved": [key_suffix], "rejected": []},
            "projects": {project.to_str().unwrap(): {
                "hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true}},
        });
        std::fs::write(config.join(".claude.json"), state.to_string()).unwrap();
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        let settings = hooks_settings(EVENTS, command_hook(forwarder_bin(), &[]));
        std::fs::write(
            project.join(".claude/settings.json"),
            serde_json::to_string_pretty(&settings).unwrap(),
        )
        .unwrap();
        let proxy = "http://127.0.0.1:9";
        let env: Vec<(&str, OsString)> = vec![
            ("HOME", home.into()),
            ("CLAUDE_CONFIG_DIR", config.into()),
            ("TMPDIR", tmp.clone().into()),
            ("CLAUDE_CODE_TMPDIR", tmp.into()),
            ("ANTHROPIC_BASE_URL", mock.base_url().into()),
            ("ANTHROPIC_API_KEY", API_KEY.into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
            ("HTTPS_PROXY", proxy.into()),
            ("HTTP_PROXY", proxy.into()),
            ("NO_PROXY", "127.0.0.1,localhost".into()),
            ("no_proxy", "127.0.0.1,localhost".into()),
            ("HOOKD_SOCKET", daemon.socket.clone().into()),
        ];
        let env: Vec<(&str, &OsStr)> = env.iter().map(|(k, v)| (*k, v.as_os_str())).collect();
        let tmux = Tmux::start_in(
            &claude_bin(),
            ["--permission-mode", "default"],
            &env,
            Some(&project),
        );
        tmux.wait_for("? for shortcuts", WAIT);
        Session { root, tmux }
    }

    fn project(&self) -> PathBuf {
        self.root.path().join("project")
    }

    /// Presses `key` in Claude's dialog, as a person would: again if the
    /// dialog is still up a few seconds later (a key sent while a loaded
    /// machine is still drawing it can be missed).
    fn answer_dialog(&self, key: &str) {
        for _ in 0..3 {
            self.tmux.send_keys(&[key]);
            let gone = |screen: &String| !screen.contains("Do you want to proceed?");
            let screen = daemon::poll_last(
                Duration::from_secs(5),
                Duration::from_millis(50),
                || self.tmux.capture_pane(),
                gone,
            );
            if gone(&screen) {
                return;
            }
        }
        panic!("the dialog stayed:\n{}", self.tmux.capture_pane());
    }

    fn prompt(&self, text: &str) {
        self.tmux.type_text(text);
        self.tmux.send_keys(&["Enter"]);
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // The CLI and the hooks it started, then the tmux server (its own
        // drop): nothing outlives the test.
        let pid = self.tmux.pane_pid();
        let mut targets: Vec<String> = vec![pid.to_string()];
        targets.extend(descendants(pid).iter().map(u32::to_string));
        let _ = std::process::Command::new("kill")
            .arg("-KILL")
            .args(&targets)
            .stderr(std::process::Stdio::null())
            .status();
    }
}

fn descendants(pid: u32) -> Vec<u32> {
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|f| f.parse::<u32>().ok());
            if ppid == Some(parent) {
                if let Some(p) = entry.file_name().to_str().and_then(|n| n.parse().ok()) {
                    found.push(p);
                }
            }
        }
        i += 1;
    }
    found.remove(0);
    found
}

/// A subscribed client that sees every frame.
fn approver(daemon: &Daemon) -> RawClient {
    let mut client = RawClient::hello(&daemon.socket, "race-approver");
    client.set_read_timeout(WAIT);
    let ok = client.call(json!({"type": "subscribe", "filter": {}}));
    assert_eq!(ok["type"], "ok", "{ok}");
    client
}

/// Reads frames (bounded by `WAIT`) until one satisfies `pred`.
fn frame_where(client: &mut RawClient, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    daemon::poll_for(what, WAIT, || match client.recv() {
        Some(frame) => pred(&frame).then_some(frame),
        None => panic!("connection closed waiting for {what}"),
    })
}

/// Prompts, and returns the pending PermissionRequest's event id, after
/// checking that the PreToolUse before it was answered `ask` at once.
fn held_permission_request(session: &Session, client: &mut RawClient) -> String {
    session.prompt("create the file");
    let pre = frame_where(client, "the PreToolUse", |f| {
        f["type"] == "event" && f["event"]["kind"] == "PreToolUse"
    });
    assert_eq!(pre["pending"], false, "attended: never held: {pre}");
    assert_eq!(
        pre["event"]["input"]["tool_input"]["command"],
        "touch made-by-claude.txt"
    );
    let pre_id = pre["event"]["id"].clone();
    let decided = frame_where(client, "the PreToolUse's decision", |f| {
        f["type"] == "decision" && f["decision"]["event_id"] == pre_id
    });
    assert_eq!(decided["decision"]["verdict"], "ask", "{decided}");
    assert_eq!(decided["decision"]["source"], "rule", "{decided}");
    let request = frame_where(client, "the held PermissionRequest", |f| {
        f["type"] == "event" && f["event"]["kind"] == "PermissionRequest"
    });
    assert_eq!(request["pending"], true, "{request}");
    session.tmux.wait_for("Do you want to proceed?", WAIT);
    request["event"]["id"].as_str().unwrap().to_string()
}

fn decision_of(client: &mut RawClient, event_id: &str) -> Value {
    frame_where(client, "the PermissionRequest's decision", |f| {
        f["type"] == "decision" && f["decision"]["event_id"] == event_id
    })["decision"]
        .clone()
}

fn wait_file(path: &Path) {
    daemon::poll_until(&format!("{} created", path.display()), WAIT, || {
        path.exists()
    });
}

#[test]
fn a_client_answers_while_claude_shows_its_dialog() {
    let daemon = daemon();
    let mock = MockApi::start(&one_bash_call_script("touch made-by-claude.txt"));
    let mut client = approver(&daemon);
    let session = Session::start(&mock, &daemon);
    let id = held_permission_request(&session, &mut client);
    let reply = client.call(json!({"type": "decide", "event_id": id, "verdict": "allow"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    assert_eq!(
        decision_of(&mut client, &id)["source"],
        "client:race-approver"
    );
    // The client's allow resolved the dialog: the tool ran.
    wait_file(&session.project().join("made-by-claude.txt"));
    session.tmux.wait_gone("Do you want to proceed?", WAIT);
}

#[test]
fn yes_in_the_terminal_closes_the_held_request_as_terminal() {
    let daemon = daemon();
    let mock = MockApi::start(&one_bash_call_script("touch made-by-claude.txt"));
    let mut client = approver(&daemon);
    let session = Session::start(&mock, &daemon);
    let id = held_permission_request(&session, &mut client);
    session.answer_dialog("1");
    let decision = decision_of(&mut client, &id);
    assert_eq!(decision["source"], "terminal", "{decision}");
    assert_eq!(decision["verdict"], "none", "{decision}");
    wait_file(&session.project().join("made-by-claude.txt"));
    // Gone from the table; a late client is told who answered.
    let late = client.call(json!({"type": "decide", "event_id": id, "verdict": "deny"}));
    assert_eq!(late["code"], "already_decided", "{late}");
    assert!(
        late["message"].as_str().unwrap().contains("terminal"),
        "{late}"
    );
    // The log writer is asynchronous: the line comes soon after.
    daemon::poll_until("a terminal decision in the log", WAIT, || {
        daemon.log_lines().iter().any(|l| {
            l["type"] == "decision" && l["event_id"] == id.as_str() && l["source"] == "terminal"
        })
    });
}

#[test]
fn no_in_the_terminal_closes_the_held_request_as_terminal() {
    let daemon = daemon();
    let mock = MockApi::start(&one_bash_call_script("touch made-by-claude.txt"));
    let mut client = approver(&daemon);
    // `hookd approve` watches too, in a terminal of its own.
    let tui = Tmux::start(
        &daemon::hookd_bin(),
        [
            OsStr::new("approve"),
            OsStr::new("--socket"),
            daemon.socket.as_os_str(),
        ],
        &[],
    );
    tui.wait_for("rules:", WAIT);
    daemon::poll_until("hookd approve subscribed", WAIT, || {
        daemon.counter("subscribers") >= 2
    });
    let session = Session::start(&mock, &daemon);
    let id = held_permission_request(&session, &mut client);
    tui.wait_for("PermissionRequest · Bash", WAIT);
    session.answer_dialog("2");
    let decision = decision_of(&mut client, &id);
    assert_eq!(decision["source"], "terminal", "{decision}");
    // Gone from every client's screen; the feed says who answered.
    // The pending list and the feed's row are two redraws apart on a
    // loaded machine: wait for the row, not just the empty list.
    tui.wait_for("nothing is waiting", WAIT);
    tui.wait_for("terminal", WAIT);
    session.tmux.wait_for("Interrupted", WAIT);
    assert!(!session.project().join("made-by-claude.txt").exists());
    let pending = client.call(json!({"type": "pending"}));
    assert_eq!(pending["result"], json!([]), "{pending}");
}

/// `-p` has no dialog (an `ask` there is a denial): the PreToolUse ask is
/// held for clients, as before.
#[test]
fn headless_asks_are_still_held_for_clients() {
    let daemon = daemon();
    let mock = MockApi::start(&one_bash_call_script("touch made-by-claude.txt"));
    let mut client = approver(&daemon);
    std::thread::scope(|scope| {
        let run = scope.spawn(|| {
            let run = claude::ClaudeRun::new(&mock)
                .permission_mode("default")
                .env("HOOKD_SOCKET", &daemon.socket);
            run.write_settings(&hooks_settings(EVENTS, command_hook(forwarder_bin(), &[])));
            let out = run.run("create the file");
            (out, run.project_dir().join("made-by-claude.txt").exists())
        });
        let held = frame_where(&mut client, "the held PreToolUse", |f| {
            f["type"] == "event" && f["event"]["kind"] == "PreToolUse"
        });
        assert_eq!(held["pending"], true, "{held}");
        let reply = client
            .call(json!({"type": "decide", "event_id": held["event"]["id"], "verdict": "allow"}));
        assert_eq!(reply["type"], "ok", "{reply}");
        let (out, created) = run.join().unwrap();
        out.assert_success();
        assert!(created, "the allowed call ran: {}", out.describe());
    });
}

/// The forwarder of a held event killed (what Claude Code does to the hook
/// when the person says no), without the CLI: attended → `terminal`;
/// otherwise (a killed `claude -p`) → the fallback at once, not at the
/// timeout.
#[test]
fn a_held_event_whose_forwarder_dies_ends_at_once() {
    let daemon = daemon();
    let mut client = approver(&daemon);
    for (attended, kind, source) in [
        ("1", "PermissionRequest", "terminal"),
        ("0", "PreToolUse", "fallback"),
    ] {
        let input = json!({
            "session_id": format!("s-{attended}"), "cwd": "/tmp", "hook_event_name": kind,
            "tool_name": "Bash", "tool_input": {"command": "touch x"},
        });
        let mut forwarder = std::process::Command::new(forwarder_bin())
            .env("HOOKD_SOCKET", &daemon.socket)
            .env("CLAUDE_CODE_SESSION_ATTENDED", attended)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = forwarder.stdin.take().unwrap();
            stdin.write_all(input.to_string().as_bytes()).unwrap();
        }
        let held = frame_where(&mut client, "the held event", |f| {
            f["type"] == "event" && f["event"]["kind"] == kind
        });
        assert_eq!(held["pending"], true, "{held}");
        let killed = Instant::now();
        forwarder.kill().unwrap();
        forwarder.wait().unwrap();
        let id = held["event"]["id"].as_str().unwrap().to_string();
        let decision = decision_of(&mut client, &id);
        assert_eq!(decision["source"], source, "{decision}");
        assert!(
            killed.elapsed() < Duration::from_secs(10),
            "ended when the forwarder went, not at the 20 s timeout: {:?}",
            killed.elapsed()
        );
    }
}
