//! One-time links and pushes (`[notify]`) against a local receiver standing
//! in for ntfy and a webhook: exactly one push per event that waits for a
//! person and none for rule-decided ones; a link decides once (as
//! `client:http`), the other dies, reuse and expiry answer 410; a receiver
//! that is down costs counted failures, never a hook's answer; a target
//! that hangs delays only its own pushes; a push shows what the log line
//! shows, redacted.

use crate::support::daemon;
use crate::support::http;
use crate::support::receiver;

use std::time::Duration;

use daemon::{fixture, forward_in_background, Daemon, DaemonOptions};
use receiver::Receiver;
use serde_json::Value;

const RULES: &str = r#"
[[rule]]
id = "ask-deploy"
action = "ask"
tool = "Bash(./deploy:*)"
reason = "deploys need a person"

[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
"#;

/// A daemon with `[http]` on a free port, `notify` as its `[notify]`
/// targets and `extra` config; returns it and its HTTP address.
fn start(notify: &str, extra: &str) -> (Daemon, String) {
    let daemon = Daemon::start_with(DaemonOptions {
        rules: Some(RULES.into()),
        config: Some(format!(
            "{extra}\n[http]\nlisten = \"127.0.0.1:0\"\n{notify}\n"
        )),
        ..DaemonOptions::default()
    });
    let listen = daemon.status()["http"]["listen"]
        .as_str()
        .unwrap()
        .to_string();
    (daemon, listen)
}

fn permission_request(command: &str) -> Value {
    let mut input = fixture("PermissionRequest.json");
    input["tool_input"]["command"] = command.into();
    input
}

/// The path of a link URL (`http://host:port/a/TOKEN` → `/a/TOKEN`).
fn path_of(url: &str) -> String {
    let rest = url.split_once("://").unwrap().1;
    format!("/{}", rest.split_once('/').unwrap().1)
}

fn token_of(url: &str) -> String {
    url.rsplit('/').next().unwrap().to_string()
}

fn wait_until(what: &str, done: impl FnMut() -> bool) {
    daemon::poll_until(what, Duration::from_secs(20), done);
}

/// The daemon's `http.notify` counters once `sent` reaches `n`. A receiver
/// holds a push as soon as it is read, before its answer is back with the
/// sender, which counts it only then: read at once, `sent` may lag by one.
fn notify_once_sent(daemon: &Daemon, n: u64) -> Value {
    let mut notify = Value::Null;
    wait_until(&format!("{n} pushes counted as sent"), || {
        notify = daemon.status()["http"]["notify"].clone();
        notify["sent"].as_u64() >= Some(n)
    });
    notify
}

#[test]
fn one_push_per_waiting_event_and_its_links_decide_once() {
    let receiver = Receiver::start(200);
    let (daemon, addr) = start(
        &format!(
            "[[notify.webhook]]\nurl = \"http://{0}/webhook\"\nslack = true\n\
             [[notify.ntfy]]\nurl = \"http://{0}/ntfy/hookd-topic\"\n",
            receiver.addr
        ),
        "",
    );
    // A rule decides this one: no push.
    let denied = daemon.forward(&permission_request("rm -rf build"), &["--timeout", "60"]);
    assert!(String::from_utf8_lossy(&denied.stdout).contains("deny"));
    // This one waits for a person.
    let waiting = forward_in_background(
        &daemon.socket,
        &permission_request("./deploy '<script>alert(1)</script>'"),
        &["--timeout", "60"],
    );
    // One sender thread sends the queue in order: a push for the denied
    // event would have been queued, so received, first. The first two are
    // the waiting event's, one per target (its links, asserted below, are
    // the same in both).
    let pushes = receiver.wait_for(2);
    let first = &pushes[..2];
    let webhook = first
        .iter()
        .find(|r| r.path == "/webhook")
        .expect("webhook push");
    let ntfy = first
        .iter()
        .find(|r| r.path == "/ntfy")
        .expect("ntfy push (to the server's root)");
    let doc = webhook.json();
    assert_eq!(doc["tool"], "Bash");
    assert_eq!(doc["rule_ids"], serde_json::json!(["ask-deploy"]));
    assert_eq!(doc["reason"], "deploys need a person");
    assert_eq!(doc["agent"], "claude-code", "machines get the agent's id");
    assert!(
        doc["text"]
            .as_str()
            .unwrap()
            .contains("Claude Code needs you"),
        "slack text, for a person: {doc}"
    );
    let approve = doc["approve_url"].as_str().unwrap().to_string();
    let deny = doc["deny_url"].as_str().unwrap().to_string();
    assert!(
        approve.starts_with(&format!("http://{addr}/a/")),
        "{approve}"
    );
    assert!(
        !approve.contains("deploy") && !deny.contains("deploy"),
        "links never carry the input"
    );
    assert!(token_of(&approve).len() >= 22, "≥128 bits: {approve}");
    assert_ne!(approve, deny);

    let ntfy = ntfy.json();
    assert_eq!(ntfy["topic"], "hookd-topic");
    assert!(
        ntfy["title"]
            .as_str()
            .unwrap()
            .starts_with("Claude Code needs you"),
        "{ntfy}"
    );
    let actions = ntfy["actions"].as_array().unwrap();
    assert_eq!(actions[0]["action"], "http");
    assert_eq!(actions[0]["url"], approve.as_str());
    assert_eq!(actions[0]["method"], "POST");
    assert_eq!(actions[0]["body"], format!("token={}", token_of(&approve)));
    assert_eq!(actions[1]["url"], deny.as_str());
    assert_eq!(actions[2]["action"], "view");

    // GET shows the page, escaped, and decides nothing.
    let page = http::get(&addr, &path_of(&approve), &[]);
    assert_eq!(page.status, 200);
    assert!(
        page.body
            .contains("./deploy &#39;&lt;script&gt;alert(1)&lt;/script&gt;&#39;"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<script>alert(1)"), "{}", page.body);
    assert!(page.body.contains("ask-deploy") && page.body.contains("deploys need a person"));
    assert!(page.body.contains("Approve for this session"));
    assert!(
        page.body.contains("Claude Code wants to use a tool"),
        "the agent by its name: {}",
        page.body
    );
    assert_eq!(daemon.counter("pending"), 1, "GET never decides");

    // A form without the token (a forged POST) is refused.
    let forged = http::post_form(&addr, &path_of(&approve), &[], "token=guess");
    assert_eq!(forged.status, 403);
    assert_eq!(daemon.counter("pending"), 1);

    let approved = http::post_form(
        &addr,
        &path_of(&approve),
        &[],
        &format!("token={}", token_of(&approve)),
    );
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert!(approved.body.contains("Approved"));
    let out = waiting.join().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"allow\""),
        "the forwarder prints the allow: {stdout}"
    );

    // Reuse, and the other link: 410 saying who decided.
    for url in [&approve, &deny] {
        let again = http::post_form(
            &addr,
            &path_of(url),
            &[],
            &format!("token={}", token_of(url)),
        );
        assert_eq!(again.status, 410, "{}", again.body);
        assert!(again.body.contains("client:http"), "{}", again.body);
        assert_eq!(http::get(&addr, &path_of(url), &[]).status, 410);
    }
    assert_eq!(
        http::get(&addr, "/a/AAAAAAAAAAAAAAAAAAAAAAAA", &[]).status,
        404
    );

    let log = daemon.wait_log_lines(4);
    let decision = log.iter().rev().find(|l| l["type"] == "decision").unwrap();
    assert_eq!(decision["source"], "client:http", "{decision}");
    assert_eq!(decision["verdict"], "allow");
    let notify = notify_once_sent(&daemon, 2);
    assert_eq!(notify["sent"], 2, "{notify}");
    assert_eq!(notify["failed"], 0);
}

#[test]
fn the_deny_link_denies_and_links_expire_with_the_event() {
    let receiver = Receiver::start(200);
    let (daemon, addr) = start(
        &format!("[[notify.webhook]]\nurl = \"http://{}/w\"\n", receiver.addr),
        "[decisions]\ntimeout = 1.5\n",
    );
    // Denied through its link.
    let first = forward_in_background(
        &daemon.socket,
        &permission_request("./deploy a"),
        &["--timeout", "60"],
    );
    let doc = receiver.wait_for(1)[0].json();
    let deny = doc["deny_url"].as_str().unwrap().to_string();
    let denied = http::post_form(
        &addr,
        &path_of(&deny),
        &[],
        &format!("token={}", token_of(&deny)),
    );
    assert_eq!(denied.status, 200, "{}", denied.body);
    let stdout = String::from_utf8_lossy(&first.join().unwrap().stdout).into_owned();
    assert!(stdout.contains("\"deny\""), "{stdout}");

    // Nobody answers the next one: its links expire with it.
    let second = forward_in_background(
        &daemon.socket,
        &permission_request("./deploy b"),
        &["--timeout", "60"],
    );
    let doc = receiver.wait_for(2)[1].json();
    let approve = doc["approve_url"].as_str().unwrap().to_string();
    second.join().unwrap();
    let expired = http::post_form(
        &addr,
        &path_of(&approve),
        &[],
        &format!("token={}", token_of(&approve)),
    );
    assert_eq!(expired.status, 410, "{}", expired.body);
    assert!(expired.body.contains("expired"), "{}", expired.body);
    // The log is written behind the answers.
    let decision = daemon.wait_decisions(2)[1].clone();
    assert_eq!(decision["source"], "timeout", "{decision}");
}

/// The secret part of a webhook's URL, as in a Slack incoming webhook.
const WEBHOOK_SECRET: &str = "xoxb-0123456789-secretpath";

#[test]
fn a_receiver_that_is_down_costs_counted_failures_not_answers() {
    let (daemon, addr) = start(
        &format!(
            "[[notify.webhook]]\nurl = \"http://{}/services/T0/B0/{WEBHOOK_SECRET}\"\n",
            receiver::closed_port()
        ),
        "",
    );
    let waiting = forward_in_background(
        &daemon.socket,
        &permission_request("./deploy c"),
        &["--timeout", "60"],
    );
    // Hooks are answered while the pushes fail and retry.
    for _ in 0..5 {
        let out = daemon.forward(&permission_request("rm x"), &["--timeout", "60"]);
        assert!(String::from_utf8_lossy(&out.stdout).contains("deny"));
    }
    wait_until("the push to fail after its retries", || {
        daemon.status()["http"]["notify"]["failed"] == 1
    });
    assert_eq!(daemon.status()["http"]["notify"]["sent"], 0);
    // The failures are in the daemon's stderr (the journal) by the target's
    // name in the config: a webhook's path (a Slack hook's) is its secret.
    let stderr = daemon.stderr();
    assert!(stderr.contains("notify.webhook[0]"), "{stderr}");
    assert!(!stderr.contains(WEBHOOK_SECRET), "{stderr}");
    // The event still waits for a person: the daemon's own socket client
    // could answer it; here a decide through the socket ends it.
    let mut client = daemon::RawClient::hello(&daemon.socket, "t");
    let pending = client.call(serde_json::json!({"type": "pending"}));
    let id = pending["result"][0]["event"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{pending}"))
        .to_string();
    let decided =
        client.call(serde_json::json!({"type": "decide", "event_id": id, "verdict": "deny"}));
    assert_eq!(decided["type"], "ok", "{decided}");
    let stdout = String::from_utf8_lossy(&waiting.join().unwrap().stdout).into_owned();
    assert!(stdout.contains("\"deny\""), "{stdout}");
    let _ = addr;
}

#[test]
fn approve_for_this_session_adds_a_grant() {
    let receiver = Receiver::start(200);
    let (daemon, addr) = start(
        &format!("[[notify.webhook]]\nurl = \"http://{}/w\"\n", receiver.addr),
        "",
    );
    let waiting = forward_in_background(
        &daemon.socket,
        &permission_request("./deploy staging"),
        &["--timeout", "60"],
    );
    let approve = receiver.wait_for(1)[0].json()["approve_url"]
        .as_str()
        .unwrap()
        .to_string();
    let approved = http::post_form(
        &addr,
        &path_of(&approve),
        &[],
        &format!("token={}&remember=session", token_of(&approve)),
    );
    assert_eq!(approved.status, 200, "{}", approved.body);
    assert!(
        approved.body.contains("for this session"),
        "{}",
        approved.body
    );
    let stdout = String::from_utf8_lossy(&waiting.join().unwrap().stdout).into_owned();
    assert!(stdout.contains("\"allow\""), "{stdout}");
    let grants = daemon.status()["grants"].clone();
    assert_eq!(grants.as_array().map(Vec::len), Some(1), "{grants}");
    assert_eq!(grants[0]["by"], "http", "{grants}");
}

#[test]
fn a_target_that_never_answers_delays_only_its_own_pushes() {
    let hung = receiver::Hung::start();
    let healthy = Receiver::start(200);
    let (mut daemon, _) = start(
        &format!(
            "[[notify.webhook]]\nurl = \"http://{}/hangs\"\n\
             [[notify.ntfy]]\nurl = \"http://{}/ntfy/hookd-topic\"\n",
            hung.addr, healthy.addr
        ),
        "",
    );
    let waiting: Vec<_> = (0..3)
        .map(|i| {
            forward_in_background(
                &daemon.socket,
                &permission_request(&format!("./deploy {i}")),
                &["--timeout", "60"],
            )
        })
        .collect();
    // Every push reaches the healthy target while the other holds its
    // first one unanswered (its time limit is 10 s, its tries 4: one
    // sender for both took 43 s to get past it).
    let pushes = healthy.wait_for(3);
    assert!(pushes.iter().all(|p| p.path == "/ntfy"), "{pushes:?}");
    wait_until("the hung target to be tried", || hung.accepted() >= 1);
    let notify = notify_once_sent(&daemon, 3);
    assert_eq!(notify["sent"], 3, "{notify}");
    assert_eq!(notify["failed"], 0, "{notify}");
    daemon.stop();
    for forwarder in waiting {
        forwarder.join().unwrap();
    }
}

/// A push is read from the event's log line, so it shows what the log
/// shows: a key in the working directory redacted. An http hook carries no
/// `CLAUDE_PROJECT_DIR`, so the push's project is the `cwd`.
#[test]
fn a_push_shows_the_project_redacted_as_the_log_does() {
    let receiver = Receiver::start(200);
    let (daemon, addr) = start(
        &format!(
            "[[notify.webhook]]\nurl = \"http://{}/webhook\"\n",
            receiver.addr
        ),
        "",
    );
    let secret = "sk-ant-api03-0123456789abcdefghij";
    let mut input = permission_request("./deploy now");
    input["cwd"] = format!("/home/dev/{secret}/project").into();
    let token = std::fs::read_to_string(daemon.dir.path().join("config/hookd/http-token")).unwrap();
    let bearer = format!("Bearer {}", token.trim());
    let body = serde_json::to_vec(&input).unwrap();
    let hook_addr = addr.clone();
    let hook = std::thread::spawn(move || {
        http::request(
            &hook_addr,
            "POST",
            "/hook/claude-code?timeout=60",
            &[("Authorization", &bearer)],
            &body,
        )
    });
    let pushes = receiver.wait_for(1);
    let doc = pushes[0].json();
    assert_eq!(doc["project"], "/home/dev/[REDACTED]/project", "{doc}");
    assert!(!pushes[0].body.contains(secret), "{}", pushes[0].body);

    let deny = doc["deny_url"].as_str().unwrap();
    let denied = http::post_form(
        &addr,
        &path_of(deny),
        &[],
        &format!("token={}", token_of(deny)),
    );
    assert_eq!(denied.status, 200, "{}", denied.body);
    let answered = hook.join().unwrap();
    assert!(answered.body.contains("\"deny\""), "{}", answered.body);
}

/// Claude Code suggests the whole `Bash` tool: the page shows the exact
/// rule "Approve for this session" grants (the narrowest one), names `Bash`
/// as not offered, and a form made to carry `Bash` instead decides nothing.
#[test]
fn a_whole_bash_suggestion_is_shown_but_never_granted_on_one_tap() {
    let receiver = Receiver::start(200);
    let (daemon, addr) = start(
        &format!("[[notify.webhook]]\nurl = \"http://{}/w\"\n", receiver.addr),
        "",
    );
    let mut input = permission_request("./deploy staging");
    input["permission_suggestions"] = serde_json::json!([{"type": "addRules",
        "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "localSettings"}]);
    let waiting = forward_in_background(&daemon.socket, &input, &["--timeout", "60"]);
    let approve = receiver.wait_for(1)[0].json()["approve_url"]
        .as_str()
        .unwrap()
        .to_string();
    let shown = http::get(&addr, &path_of(&approve), &[]);
    assert_eq!(shown.status, 200, "{}", shown.body);
    assert!(
        shown.body.contains(
            "For this session approves every call matching <code>Bash(./deploy staging:*)</code>"
        ),
        "the page shows the rule before it applies: {}",
        shown.body
    );
    assert!(
        shown
            .body
            .contains("name=rule value=\"Bash(./deploy staging:*)\""),
        "{}",
        shown.body
    );
    assert!(
        shown.body.contains(
            "<code>Bash</code> for this session is not offered here: it would allow every shell command"
        ),
        "{}",
        shown.body
    );
    assert!(
        !shown.body.contains("name=rule value=\"Bash\""),
        "{}",
        shown.body
    );

    // A form that carries `Bash` instead of the rule shown: nothing decided.
    let token = token_of(&approve);
    let forged = http::post_form(
        &addr,
        &path_of(&approve),
        &[],
        &format!("token={token}&remember=session&rule=Bash"),
    );
    assert_eq!(forged.status, 409, "{}", forged.body);
    assert_eq!(daemon.status()["grants"], serde_json::json!([]));
    assert_eq!(daemon.status()["counters"]["pending"], 1, "still waiting");

    // The button grants the rule it showed.
    let approved = http::post_form(
        &addr,
        &path_of(&approve),
        &[],
        &format!("token={token}&remember=session&rule=Bash(.%2Fdeploy+staging%3A*)"),
    );
    assert_eq!(approved.status, 200, "{}", approved.body);
    let stdout = String::from_utf8_lossy(&waiting.join().unwrap().stdout).into_owned();
    assert!(stdout.contains("\"allow\""), "{stdout}");
    let grants = daemon.status()["grants"].clone();
    assert_eq!(grants.as_array().map(Vec::len), Some(1), "{grants}");
    assert_eq!(grants[0]["rule"], "Bash(./deploy staging:*)", "{grants}");
}
