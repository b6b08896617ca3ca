//! `hookd pending` through the binary: what it lists, and why it is empty.

use crate::support::daemon;

use std::process::Command;

use daemon::{Daemon, DaemonOptions, RawClient};
use serde_json::json;

fn pending(d: &Daemon) -> String {
    let out = Command::new(daemon::hookd_bin())
        .args(["pending", "--socket"])
        .arg(&d.socket)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn an_empty_list_says_whether_anyone_could_hold_an_ask() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(
            "[[rule]]\nid = \"ask-touch\"\naction = \"ask\"\ntool = \"Bash(touch:*)\"\n".into(),
        ),
        ..DaemonOptions::default()
    });
    assert_eq!(
        pending(&d),
        "nothing pending — no client is subscribed, so asks go to Claude Code's own prompt\n"
    );
    // With nobody subscribed, an ask is answered at once with Claude
    // Code's own prompt: that is why the list was empty.
    let mut input = daemon::fixture("PreToolUse.json");
    input["tool_input"]["command"] = "touch x".into();
    let out = d.forward(&input, &["--timeout", "5"]);
    assert_eq!(
        daemon::stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "ask"
    );

    let mut client = RawClient::hello(&d.socket, "watcher");
    let ok = client.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok");
    assert_eq!(pending(&d), "nothing pending\n");
    // A subscriber holds the next ask, and `pending` lists it.
    let waiting = daemon::forward_in_background(&d.socket, &input, &["--timeout", "5"]);
    let event = client.wait_for("the pending event", |f| f["pending"] == true);
    let listed = pending(&d);
    let id = event["event"]["id"].as_str().unwrap();
    let short = event["short_id"].as_str().unwrap();
    assert!(listed.starts_with(&format!("{short}  {id}  ")), "{listed}");
    // `ask-touch` outvotes an `always allow`: said before anyone answers.
    assert!(
        listed.contains(&format!(
            "\n       remember as: Bash(touch x:*) (hookd decide {short} allow --remember session|always)\n       always would change nothing: the rules still ask about this event: rule ask-touch (ask beats allow)"
        )),
        "{listed}"
    );
    let decided =
        client.call(json!({"type": "decide", "event_id": event["event"]["id"], "verdict": "deny"}));
    assert_eq!(decided["type"], "ok", "{decided}");
    waiting.join().unwrap();
}
