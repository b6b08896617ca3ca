//! The narrator (issue #24) where a person decides: the real daemon with
//! `[narrator]` on against the mock Messages API, the real approver in a
//! real terminal (tmux), the real forwarder. An ask that waits is narrated
//! at once and the line appears under the pending item; the person's
//! answer never waits for it.

use crate::support::agent_cli::{MockServer, ModelApi};
use crate::support::daemon;
use crate::support::tmux::Tmux;

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use daemon::{forwarder_bin, hookd_bin, Daemon, DaemonOptions};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(15);

#[test]
fn the_narrators_line_appears_beside_the_pending_item_in_the_approver() {
    let mock = MockServer::start(
        ModelApi::Anthropic,
        &json!({"side_replies": [{"match": "", "text": "I'm publishing the package now that the tests pass."}]})
            .to_string(),
    );
    let d = Daemon::start_with(DaemonOptions {
        rules: Some("[[rule]]\nid = \"ask-npm\"\naction = \"ask\"\ntool = \"Bash(npm *)\"\nreason = \"npm runs package scripts\"\n".into()),
        config: Some(format!(
            "[providers.cheap]\nkind = \"custom\"\nbase_url = \"{}\"\napi_key_env = \"HOOKD_E2E_NARRATOR_KEY\"\n\n[narrator]\nenabled = true\nprovider = \"cheap\"\nmin_events = 10\n",
            mock.base_url()
        )),
        env: vec![("HOOKD_E2E_NARRATOR_KEY".into(), "sk-e2e".into())],
        ..DaemonOptions::default()
    });
    let env: [(&str, &OsStr); 0] = [];
    let tmux = Tmux::start(
        &hookd_bin(),
        [
            OsStr::new("approve"),
            OsStr::new("--socket"),
            d.socket.as_os_str(),
        ],
        &env,
    );
    tmux.wait_for("rules:", WAIT);
    daemon::poll_until("the approver subscribed", WAIT, || {
        d.counter("subscribers") >= 1
    });

    let input: Value = json!({
        "session_id": "1fce3faa-62dc-4336-ba9c-8494671dd902",
        "cwd": "/home/dev/project",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "npm publish"},
    });
    let mut forwarder = Command::new(forwarder_bin())
        .env("HOOKD_SOCKET", &d.socket)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    forwarder
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let screen = tmux.wait_until(WAIT, "the narration under the pending item", |s| {
        s.contains("$ npm publish")
            && s.contains("narrator: I'm publishing the package now that the tests pass.")
    });
    eprintln!("the approver's screen with the narration:\n{screen}");
    assert!(screen.contains("asked by: ask-npm"), "{screen}");
    assert!(
        screen.contains("NARRATION"),
        "and a line in the feed: {screen}"
    );
    tmux.send_keys(&["y"]);
    let out = forwarder.wait_with_output().unwrap();
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "allow");
    tmux.send_keys(&["q"]);
    tmux.wait_until(WAIT, "the approver to exit", |_| tmux.pane_dead());
}
