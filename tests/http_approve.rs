//! The approval page in a real browser: a daemon with `[http]` and a
//! webhook target; a real `hook-forwarder` sends a PermissionRequest a rule
//! asks about; the local receiver gets the push; headless Chromium opens
//! its approve link, a screenshot is kept in
//! `target/test-artifacts/http-approve.png`, the Approve button is clicked
//! with real mouse events, and the waiting forwarder prints the allow.

#[path = "support/browser.rs"]
mod browser;
#[path = "support/daemon.rs"]
mod daemon;
#[path = "support/receiver.rs"]
mod receiver;

use std::path::Path;

use daemon::{fixture, forward_in_background, Daemon, DaemonOptions};
use receiver::Receiver;

#[test]
fn approving_from_the_page_in_chromium() {
    let Some(chromium) = browser::chromium() else {
        eprintln!(
            "SKIPPED approving_from_the_page_in_chromium: no chromium on PATH \
             (scripts/test installs Debian's `chromium`)"
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
