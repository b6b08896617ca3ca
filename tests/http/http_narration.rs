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
