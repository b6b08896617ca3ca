//! The approval page in a real browser: a daemon with `[http]` and a
//! webhook target; a real `hook-forwarder` sends a PermissionRequest a rule
//! asks about; the local receiver gets the push; headless Chromium opens
//! its approve link, a screenshot is kept in
//! `target/test-artifacts/http-approve.png`, the Approve button is clicked
//! with real mouse events, and the waiting forwarder prints the allow.

use crate::support::browser;
use crate::support::daemon;
use crate::support::receiver;

use std::path::Path;

use daemon::{fixture, forward_in_background, Daemon, DaemonOptions};
use receiver::Receiver;

#[test]
fn approving_from_the_page_in_chromium() {
    let Some(chromium) = browser::chromium() else {
        daemon::skip_or_fail(
            "approving_from_the_page_in_chromium",
            "needs Chromium, and `chromium` is not on PATH (scripts/test installs Debian's `chromium`)",
        );
        return;
    };
    let receiver = Receiver::start(200);
    let daemon = Daemon::start_with(DaemonOptions {
        rules: Some(
            "[[rule]]\nid = \"ask-deploy\"\naction = \"ask\"\ntool = \"Bash(./deploy:*)\"\n\
             reason = \"production deploys need a person\"\n"
                .into(),
        ),
        config: Some(format!(
            "[http]\nlisten = \"127.0.0.1:0\"\n[[notify.webhook]]\nurl = \"http://{}/hook\"\n",
            receiver.addr
        )),
        ..DaemonOptions::default()
    });
    let mut input = fixture("PermissionRequest.json");
    input["tool_input"]["command"] = "./deploy --env production --tag v2.4.1".into();
    let waiting = forward_in_background(&daemon.socket, &input, &["--timeout", "120"]);
    let push = receiver.wait_for(1)[0].json();
    let approve = push["approve_url"].as_str().unwrap().to_string();

    let mut browser = browser::Browser::start(&chromium);
    browser.navigate(&approve);
    let text = browser.text();
    assert!(
        text.contains("./deploy --env production --tag v2.4.1"),
        "{text}"
    );
    assert!(text.contains("production deploys need a person"), "{text}");
    assert!(text.contains("ask-deploy"), "{text}");
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    browser.screenshot(&artifacts.join("http-approve.png"));
    assert_eq!(
        daemon.counter("pending"),
        1,
        "opening the page decides nothing"
    );

    browser.click_and_wait_load("#approve");
    let done = browser.text();
    assert!(done.contains("Approved"), "{done}");
    browser.screenshot(&artifacts.join("http-approved.png"));

    let out = waiting.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"allow\""),
        "the forwarder prints the allow: {stdout}"
    );
    // The log is written behind the answers.
    let decision = daemon.wait_decisions(1)[0].clone();
    assert_eq!(decision["source"], "client:http", "{decision}");
    drop(browser);
}

/// Claude Code suggests the whole `Bash` tool: in the browser the page
/// shows the exact rule "Approve for this session" grants (the narrowest,
/// `Bash(./deploy:*)`) and names `Bash` as not offered; clicking the button
/// grants that rule, not `Bash`.
#[test]
fn approving_for_the_session_in_chromium_grants_the_rule_shown() {
    let Some(chromium) = browser::chromium() else {
        daemon::skip_or_fail(
            "approving_for_the_session_in_chromium_grants_the_rule_shown",
            "needs Chromium, and `chromium` is not on PATH (scripts/test installs Debian's `chromium`)",
        );
        return;
    };
    let receiver = Receiver::start(200);
    let daemon = Daemon::start_with(DaemonOptions {
        rules: Some(
            "[[rule]]\nid = \"ask-deploy\"\naction = \"ask\"\ntool = \"Bash(./deploy:*)\"\n".into(),
        ),
        config: Some(format!(
            "[http]\nlisten = \"127.0.0.1:0\"\n[[notify.webhook]]\nurl = \"http://{}/hook\"\n",
            receiver.addr
        )),
        ..DaemonOptions::default()
    });
    let mut input = fixture("PermissionRequest.json");
    input["tool_input"]["command"] = "./deploy --env staging".into();
    input["permission_suggestions"] = serde_json::json!([{"type": "addRules",
        "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "localSettings"}]);
    let waiting = forward_in_background(&daemon.socket, &input, &["--timeout", "120"]);
    let approve = receiver.wait_for(1)[0].json()["approve_url"]
        .as_str()
        .unwrap()
        .to_string();

    let mut browser = browser::Browser::start(&chromium);
    browser.navigate(&approve);
    let text = browser.text();
    assert!(
        text.contains(
            "For this session approves every call matching Bash(./deploy:*) without asking."
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "Bash for this session is not offered here: it would allow every shell command"
        ),
        "{text}"
    );
    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-artifacts");
    browser.screenshot(&artifacts.join("http-approve-session.png"));
    browser.click_and_wait_load("#approve-session");
    let done = browser.text();
    assert!(done.contains("Approved for this session."), "{done}");

    let out = waiting.join().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"allow\""));
    let grants = daemon.status()["grants"].clone();
    assert_eq!(grants.as_array().map(Vec::len), Some(1), "{grants}");
    assert_eq!(grants[0]["rule"], "Bash(./deploy:*)", "{grants}");
    drop(browser);
}
