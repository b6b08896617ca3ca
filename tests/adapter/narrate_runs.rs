//! The narrator narrates `hookd run` sessions from what the run itself says
//! and does (issue #24): the adapter's streamed messages (the model's text,
//! its tool calls) join the session's hook events in the narrator's buffer.
//! A real run on each runtime (the Claude Agent SDK, Pi) against the mock
//! Messages API, which also plays the narrator's cheap model: a tool call
//! the rules ask about waits, the narrator is asked at once, and its
//! question carries the run's own words (which no hook event holds); its
//! line is logged for the run's session, beside the waiting event.

use super::*;

/// What the model says before its tool call: in no hook event, only in the
/// run's messages.
const SAID: &str = "The deploy failed on a stale lockfile, so I will regenerate it first.";
/// The narrator's scripted line.
const NARRATED: &str = "I'm regenerating the stale lockfile that broke the deploy.";

const ASK_LOCK: &str = r#"
[[rule]]
id = "ask-lock"
action = "ask"
tool = "Bash(touch:*)"
reason = "a person should confirm lockfile changes"
"#;

/// The narrator's config after a `[providers.NAME]` the mock serves; it
/// narrates only when an ask waits (`min_events` out of reach).
fn narrator(provider: &str) -> String {
    format!("\n[decisions]\ntimeout = 60\n\n[narrator]\nenabled = true\nprovider = \"{provider}\"\nmin_events = 50\nmax_events = 50\n")
}

/// The turn: the text, then the tool call (`tool_use` for the SDK's mock
/// turn, `tool_call` for Pi's), then "done"; the narrator's questions get
/// [`NARRATED`].
fn script(tool_block: &str, tool: &str) -> Value {
    json!({
        "turns": [
            {"content": [
                {"type": "text", "text": SAID},
                {"type": tool_block, "name": tool, "input": {"command": "touch package-lock.json", "description": "lock"}}
            ], "stop_reason": "tool_use"},
            {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}
        ],
        "default_text": "done",
        "side_replies": [{"match": "You narrate what a coding agent", "text": NARRATED}]
    })
}

/// Runs `options` (a `run` frame's, on `sdk`), answers its waiting ask once
/// the narration came, and checks what the narrator was told and wrote.
fn narrated_run(sdk: &Sdk, run: Value, tool_line: &str) {
    let mut approver = sdk.client("approver");
    // A Pi session takes seconds to start on a loaded machine.
    approver.set_read_timeout(Duration::from_secs(60));
    let ok = approver.call(json!({"type": "subscribe", "filter": {}}));
    assert_eq!(ok["type"], "ok");
    let mut owner = sdk.client("owner");
    let reply = owner.call(run);
    assert_eq!(reply["type"], "ok", "{reply}\n{}", sdk.daemon.stderr());
    let run_id = reply["result"]["run_id"].as_str().unwrap().to_string();
    // The waiting event and the narration, in whichever order they come.
    let (mut pending, mut narration) = (None, None);
    while pending.is_none() || narration.is_none() {
        let frame = approver
            .recv()
            .expect("the connection stayed open until the narration");
        if frame["type"] == "event" && frame["pending"] == true {
            pending = Some(frame);
        } else if frame["type"] == "narration" {
            narration = Some(frame);
        }
    }
    let (pending, narration) = (pending.unwrap(), narration.unwrap());
    let event = pending["event"].clone();
    assert_eq!(event["run_id"], run_id.as_str(), "{event}");
    assert_eq!(narration["text"], NARRATED, "{narration}");
    assert_eq!(narration["pending_event_id"], event["id"], "{narration}");
    assert_eq!(narration["session_id"], event["session_id"], "{narration}");
    let reply = approver.call(json!({"type": "decide", "event_id": event["id"], "verdict": "allow", "reason": "approved by the test"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let frames = frames_until_done(&mut owner);
    assert_eq!(frames.last().unwrap()["ok"], true, "{frames:?}");

    // The narrator's question: the run's own words and its tool call, from
    // its messages, beside its hook events.
    let asked: Vec<String> = sdk
        .mock
        .requests()
        .iter()
        .map(Value::to_string)
        .filter(|r| r.contains("You narrate what a coding agent"))
        .collect();
    assert_eq!(asked.len(), 1, "one narration: {asked:?}");
    assert!(
        asked[0].contains(&format!("the agent wrote: {SAID}")),
        "the run's text: {}",
        asked[0]
    );
    assert!(
        asked[0].contains(tool_line),
        "the run's tool call: {}",
        asked[0]
    );
    assert!(
        asked[0].contains("waits for the person's approval"),
        "{}",
        asked[0]
    );
    // Logged for the run's session.
    let log = sdk.daemon.wait_log_lines(1);
    let logged = log
        .iter()
        .find(|l| l["type"] == "narration")
        .expect("a narration record in the log");
    assert_eq!(logged["text"], NARRATED);
    assert_eq!(logged["session_id"], event["session_id"]);
}

#[test]
fn an_sdk_run_is_narrated_from_its_own_messages() {
    if claude::node_absent("an_sdk_run_is_narrated_from_its_own_messages") {
        return;
    }
    let sdk = Sdk::start_with(
        &script("tool_use", "Bash"),
        Some(ASK_LOCK),
        None,
        |options, _| {
            let url = options
                .env
                .iter()
                .find(|(k, _)| k == "ANTHROPIC_BASE_URL")
                .map(|(_, v)| v.clone())
                .expect("the harness points the agents at its mock");
            options.config = Some(format!(
            "[providers.cheap]\nkind = \"custom\"\nbase_url = \"{url}\"\napi_key_env = \"NARRATOR_KEY\"\n{}",
            narrator("cheap")
        ));
            options.env.push(("NARRATOR_KEY".into(), "test-key".into()));
        },
    );
    let project = sdk.project();
    narrated_run(
        &sdk,
        json!({"type": "run", "prompt": "please fix the deploy", "options": {"cwd": project}}),
        "the agent called Bash: touch package-lock.json",
    );
    assert!(project.join("package-lock.json").exists());
}

#[test]
fn a_pi_run_is_narrated_from_its_own_messages() {
    if claude::node_absent("a_pi_run_is_narrated_from_its_own_messages") {
        return;
    }
    let sdk = super::pi::pi_daemon(
        &script("tool_call", "bash"),
        Some(ASK_LOCK),
        &narrator("mock"),
    );
    let project = sdk.project();
    narrated_run(
        &sdk,
        json!({"type": "run", "prompt": "please fix the deploy", "runtime": "pi",
               "options": {"cwd": project, "model": "mock/claude-mock"}}),
        "the agent called bash: touch package-lock.json",
    );
    assert!(project.join("package-lock.json").exists());
}
