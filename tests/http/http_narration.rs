//! The narrator's line where a person decides from the phone (issue #24):
//! a push goes when the event begins to wait (before the model answers);
//! when the narrator's line comes, the push goes again with it (ntfy
//! message, webhook `narration`), and the approval page shows it.

use crate::support::agent_cli::{MockServer, ModelApi};
use crate::support::daemon;
use crate::support::http;
use crate::support::receiver::Receiver;

use daemon::{fixture, forward_in_background, Daemon, DaemonOptions};
use serde_json::json;

#[test]
fn a_waiting_events_push_goes_again_with_the_narration_and_its_page_shows_it() {
    let mock = MockServer::start(
        ModelApi::Anthropic,
        &json!({"side_replies": [{"match": "", "text": "I'm deploying the fix to staging.", "delay_ms": 300}]})
            .to_string(),
    );
    let receiver = Receiver::start(200);
    let d = Daemon::start_with(DaemonOptions {
        rules: Some("[[rule]]\nid = \"ask-deploy\"\naction = \"ask\"\ntool = \"Bash(./deploy:*)\"\nreason = \"deploys need a person\"\n".into()),
        config: Some(format!(
            "[providers.cheap]\nkind = \"custom\"\nbase_url = \"{}\"\napi_key_env = \"HOOKD_TEST_NARRATOR_KEY\"\n\n\
             [narrator]\nenabled = true\nprovider = \"cheap\"\n\n\
             [http]\nlisten = \"127.0.0.1:0\"\n\
             [[notify.webhook]]\nurl = \"http://{1}/webhook\"\n\
             [[notify.ntfy]]\nurl = \"http://{1}/ntfy/topic\"\n",
            mock.base_url(),
            receiver.addr
        )),
        env: vec![("HOOKD_TEST_NARRATOR_KEY".into(), "sk-test".into())],
        ..DaemonOptions::default()
    });
    let addr = d.status()["http"]["listen"].as_str().unwrap().to_string();
    let mut input = fixture("PermissionRequest.json");
    input["tool_input"]["command"] = "./deploy staging".into();
    let waiting = forward_in_background(&d.socket, &input, &["--timeout", "60"]);
    let pushes = receiver.wait_for(4);
    let webhooks: Vec<_> = pushes
        .iter()
        .filter(|r| r.path == "/webhook")
        .map(|r| r.json())
        .collect();
    assert_eq!(webhooks.len(), 2, "{pushes:?}");
    assert_eq!(
        webhooks[0].get("narration"),
        Some(&serde_json::Value::Null),
        "the first, before the model answered"
    );
    assert_eq!(
        webhooks[1]["narration"],
        "I'm deploying the fix to staging."
    );
    assert_eq!(
        webhooks[0]["approve_url"], webhooks[1]["approve_url"],
        "the same links"
    );
    let ntfy = pushes.iter().rfind(|r| r.path == "/ntfy").unwrap().json();
    assert!(
        ntfy["message"]
            .as_str()
            .unwrap()
            .ends_with("\nI'm deploying the fix to staging."),
        "{ntfy}"
    );
    let approve = webhooks[1]["approve_url"].as_str().unwrap();
    let path = format!(
        "/{}",
        approve
            .split_once("://")
            .unwrap()
            .1
            .split_once('/')
            .unwrap()
            .1
    );
    let page = http::get(&addr, &path, &[]);
    assert!(
        page.body
            .contains("<dt>Narrator</dt><dd class=\"\">I&#39;m deploying the fix to staging.</dd>"),
        "{}",
        page.body
    );
    let token = approve.rsplit('/').next().unwrap();
    let approved = http::post_form(&addr, &path, &[], &format!("token={token}"));
    assert_eq!(approved.status, 200, "{}", approved.body);
    let out = waiting.join().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"allow\""));
}

/// The narration as a person sees it: headless Chromium opens the approve
/// link of a waiting ask after the narrator's line came, and the page shows
/// that line beside the item (under "Narrator", next to the command and the
/// rule). A screenshot is kept in `target/test-artifacts/` (as the other
/// browser tests keep theirs), its path printed, to look at.
#[test]
fn the_approval_page_in_chromium_shows_the_narration_beside_the_item() {
    let Some(chromium) = crate::support::browser::chromium() else {
        daemon::skip_or_fail(
            "the_approval_page_in_chromium_shows_the_narration_beside_the_item",
            "needs Chromium, and `chromium` is not on PATH (scripts/test installs Debian's `chromium`)",
        );
        return;
    };
    let line = "I'm rolling the payments service back to v2.4.0 because the new build fails its health check.";
    let mock = MockServer::start(
        ModelApi::Anthropic,
        &json!({"side_replies": [{"match": "", "text": line}]}).to_string(),
    );
    let receiver = Receiver::start(200);
    let d = Daemon::start_with(DaemonOptions {
        rules: Some("[[rule]]\nid = \"ask-rollback\"\naction = \"ask\"\ntool = \"Bash(./rollback:*)\"\nreason = \"rollbacks need a person\"\n".into()),
        config: Some(format!(
            "[providers.cheap]\nkind = \"custom\"\nbase_url = \"{}\"\napi_key_env = \"HOOKD_TEST_NARRATOR_KEY\"\n\n\
             [narrator]\nenabled = true\nprovider = \"cheap\"\n\n\
             [http]\nlisten = \"127.0.0.1:0\"\n\
             [[notify.webhook]]\nurl = \"http://{}/webhook\"\n",
            mock.base_url(),
            receiver.addr
        )),
        env: vec![("HOOKD_TEST_NARRATOR_KEY".into(), "sk-test".into())],
        ..DaemonOptions::default()
    });
    let mut input = fixture("PermissionRequest.json");
    input["tool_input"]["command"] = "./rollback payments v2.4.0".into();
    let waiting = forward_in_background(&d.socket, &input, &["--timeout", "60"]);
    // The second push is the one with the narration: the page has it by then.
    let pushes = receiver.wait_for(2);
    let narrated = pushes[1].json();
    assert_eq!(narrated["narration"], line, "{pushes:?}");
    let approve = narrated["approve_url"].as_str().unwrap().to_string();

    let mut browser = crate::support::browser::Browser::start(&chromium);
    browser.navigate(&approve);
    let text = browser.text();
    assert!(text.contains("./rollback payments v2.4.0"), "{text}");
    assert!(text.contains("ask-rollback"), "{text}");
    assert!(text.contains(line), "the narration on the page: {text}");
    // Beside the item: in the item's own list, the row after its label.
    let shown = browser.eval(
        "(() => { const dt = [...document.querySelectorAll('dt')].find(e => e.textContent === 'Narrator'); \
         return dt && dt.nextElementSibling ? dt.nextElementSibling.textContent : null; })()",
    );
    assert_eq!(shown, json!(line), "{text}");
    // Kept where the other browser tests keep theirs (inside the build's
    // target dir, never in /tmp): target/test-artifacts/.
    let shot = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-artifacts/approval-page-with-narration.png");
    browser.screenshot(&shot);
    eprintln!("the approval page with the narration: {}", shot.display());
    assert!(std::fs::metadata(&shot).unwrap().len() > 1000);

    browser.click_and_wait_load("#approve");
    assert!(browser.text().contains("Approved"));
    let out = waiting.join().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"allow\""));
    drop(browser);
}

/// The narration of a waiting ask in OpenTelemetry, over both encodings,
/// decoded by the official definitions: an event of the ask's span
/// (`hookd.narration`, its line in `hookd.narration.text`), and its log
/// record in the ask's trace.
#[test]
fn a_waiting_asks_narration_is_an_event_of_its_span_in_otlp() {
    for protocol in ["http/protobuf", "http/json"] {
        let line = "I'm deploying the fix to staging.";
        let mock = MockServer::start(
            ModelApi::Anthropic,
            &json!({"side_replies": [{"match": "", "text": line}]}).to_string(),
        );
        let collector = crate::support::otlp::Receiver::start();
        let d = Daemon::start_with(DaemonOptions {
            rules: Some("[[rule]]\nid = \"ask-deploy\"\naction = \"ask\"\ntool = \"Bash(./deploy:*)\"\nreason = \"deploys need a person\"\n".into()),
            config: Some(format!(
                "[providers.cheap]\nkind = \"custom\"\nbase_url = \"{}\"\napi_key_env = \"HOOKD_TEST_NARRATOR_KEY\"\n\n\
                 [narrator]\nenabled = true\nprovider = \"cheap\"\n\n\
                 [otlp]\nendpoint = \"{}\"\ninterval = 0.05\nprotocol = \"{protocol}\"\n",
                mock.base_url(),
                collector.endpoint()
            )),
            env: vec![("HOOKD_TEST_NARRATOR_KEY".into(), "sk-test".into())],
            ..DaemonOptions::default()
        });
        let mut input = fixture("PermissionRequest.json");
        input["tool_input"]["command"] = "./deploy staging".into();
        let mut approver = crate::support::daemon::RawClient::hello(&d.socket, "approver");
        approver.call(json!({"type": "subscribe", "filter": {}}));
        let waiting = forward_in_background(&d.socket, &input, &["--timeout", "60"]);
        let narration = approver.wait_for("the narration", |f| f["type"] == "narration");
        let event_id = narration["pending_event_id"].as_str().unwrap().to_string();
        let reply =
            approver.call(json!({"type": "decide", "event_id": event_id, "verdict": "allow"}));
        assert_eq!(reply["type"], "ok", "{reply}");
        waiting.join().unwrap();

        let got = collector.wait_for(std::time::Duration::from_secs(30), |r| {
            !r.spans().is_empty()
                && r.log_records()
                    .iter()
                    .any(|l| l.event_name == "hookd.narration")
        });
        let spans = got.spans();
        assert_eq!(spans.len(), 1, "{protocol}: {spans:?}");
        let span = spans[0];
        assert_eq!(span.events.len(), 1, "{protocol}: {span:?}");
        assert_eq!(span.events[0].name, "hookd.narration");
        assert_eq!(
            crate::support::otlp::attr_str(&span.events[0].attributes, "hookd.narration.text"),
            Some(line),
            "{protocol}"
        );
        assert!(
            span.events[0].time_unix_nano >= span.start_time_unix_nano
                && span.events[0].time_unix_nano <= span.end_time_unix_nano,
            "{protocol}: the event is within its span: {span:?}"
        );
        let record = got
            .log_records()
            .into_iter()
            .find(|l| l.event_name == "hookd.narration")
            .unwrap();
        assert_eq!(record.trace_id, span.trace_id, "{protocol}");
        assert_eq!(record.span_id, span.span_id, "{protocol}");
    }
}
