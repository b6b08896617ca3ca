//! Pi runs end to end: the real Pi coding agent (0.73.1, from npm, in
//! `adapter/node_modules`) driven by `adapter/pi.mjs`, spawned by a real
//! `hookd serve`, talking to this project's scripted mock of the model
//! APIs. Every tool call of the session is judged by the daemon through
//! the Pi dialect, as a hook of hookd's Pi extension is.
//!
//! A child of `adapter.rs` (`#[path]`), whose harness ([`Sdk`]) it shares: the daemon
//! gets a `[providers.mock]` pointing at the mock, and runs name it with
//! `--model mock/claude-mock`.

use super::*;
use crate::support::agent_cli::{MockServer, ModelApi};

/// The provider every Pi run here uses: the Anthropic mock, priced at
/// $3 / $15 per million input / output tokens.
fn provider(base_url: &str, api: &str) -> String {
    format!(
        "[providers.mock]\nkind = \"custom\"\nbase_url = \"{base_url}\"\napi = \"{api}\"\n\
         api_key_env = \"MOCK_KEY\"\nmodel = \"claude-mock\"\n\
         price = {{ input = 3.0, output = 15.0, cache_read = 0.3, cache_write = 3.75 }}\n"
    )
}

fn require_pi() {
    let pi = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("adapter/node_modules/@mariozechner/pi-coding-agent/package.json");
    assert!(
        pi.is_file(),
        "Pi is not installed for the adapter; run `npm ci --prefix adapter` in {}",
        env!("CARGO_MANIFEST_DIR")
    );
}

/// A daemon whose `[providers.mock]` is the harness's Anthropic mock, with
/// `config` after it.
pub(super) fn pi_daemon(script: &Value, rules: Option<&str>, config: &str) -> Sdk {
    require_pi();
    Sdk::start_with(script, rules, None, |options, _| {
        let url = options
            .env
            .iter()
            .find(|(k, _)| k == "ANTHROPIC_BASE_URL")
            .map(|(_, v)| v.clone())
            .expect("the harness points the agents at its mock");
        options.config = Some(format!("{}{config}", provider(&url, "anthropic-messages")));
        options.env.push(("MOCK_KEY".into(), "test-key".into()));
    })
}

/// Pi's shell tool calls `command`, then the model says "done".
fn bash_script(command: &str) -> Value {
    json!({
        "turns": [
            {"content": [
                {"type": "text", "text": "I will run the command."},
                {"type": "tool_call", "name": "bash", "input": {"command": command}}
            ]},
            {"content": [{"type": "text", "text": "done"}]}
        ],
        "default_text": "done"
    })
}

/// Sends a Pi `run` (the provider named by the model) and returns its id.
fn run_pi(sdk: &Sdk, client: &mut RawClient, mut options: Value) -> String {
    options["cwd"] = json!(sdk.project());
    options["model"] = json!("mock/claude-mock");
    let reply = client.call(json!({"type": "run", "prompt": "please run the command",
                                   "runtime": "pi", "options": options}));
    assert_eq!(reply["type"], "ok", "{reply}\n{}", sdk.daemon.stderr());
    reply["result"]["run_id"].as_str().unwrap().to_string()
}

#[test]
fn a_deny_blocks_pis_shell_tool_and_the_reason_reaches_the_model() {
    if claude::node_absent("a_deny_blocks_pis_shell_tool_and_the_reason_reaches_the_model") {
        return;
    }
    let sdk = pi_daemon(&bash_script("rm -f victim.txt"), Some(DENY_RM), "");
    std::fs::write(sdk.project().join("victim.txt"), "still here").unwrap();
    let out = sdk.cli(&[
        "--runtime",
        "pi",
        "--model",
        "mock/claude-mock",
        "--cwd",
        sdk.project().to_str().unwrap(),
        "please remove victim.txt",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{stderr}\n{}",
        sdk.daemon.stderr()
    );
    assert!(
        sdk.project().join("victim.txt").exists(),
        "rm ran despite the deny rule\n{stdout}"
    );
    assert!(
        stdout.contains("· pi · model mock/claude-mock")
            && stdout.contains("→ bash rm -f victim.txt")
            && stdout.contains("deny (rule no-rm): hookd adapter test: rm is not allowed")
            && stdout.contains("← error: hookd adapter test: rm is not allowed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("✓ result: done") && !stdout.contains("--resume"),
        "{stdout}"
    );
    // The model got the refusal, reason included, as the tool's result.
    sdk.mock.expect_refusal("rm is not allowed in this project");
    // The log has the run's events, judged as Pi's.
    let log = sdk.daemon.wait_log_lines(1);
    let start = log.iter().find(|l| l["type"] == "run_start").unwrap();
    assert_eq!(start["runtime"], "pi", "{start}");
    assert_eq!(start["provider"], "mock", "{start}");
    let call = log
        .iter()
        .find(|l| l["type"] == "event" && l["input"]["hook_event_name"] == "tool_call")
        .expect("Pi's tool_call in the log");
    assert_eq!(call["harness"], "pi");
    assert!(call["run_id"].is_string(), "{call}");
    let decision = log
        .iter()
        .find(|l| l["type"] == "decision" && l["event_id"] == call["id"])
        .unwrap();
    assert_eq!(decision["verdict"], "deny");
    assert_eq!(decision["rule_ids"], json!(["no-rm"]));
    assert_eq!(decision["run_id"], call["run_id"]);
    // Pi's session events came through too, and its healthy run raised no
    // coverage alarm (its tool_call was judged before the tool ran).
    for event in ["session_start", "input", "agent_end", "session_shutdown"] {
        assert!(
            log.iter()
                .any(|l| l["type"] == "event" && l["input"]["hook_event_name"] == event),
            "no {event} in the log"
        );
    }
    assert!(!log.iter().any(|l| l["type"] == "unjudged_tool_call"));
}

#[test]
fn a_pi_run_reports_usage_and_cost_priced_from_its_provider() {
    if claude::node_absent("a_pi_run_reports_usage_and_cost_priced_from_its_provider") {
        return;
    }
    let sdk = pi_daemon(&bash_script("echo hello > out.txt"), Some(ALLOW_ECHO), "");
    let mut owner = sdk.client("owner");
    let run_id = run_pi(&sdk, &mut owner, json!({"max_turns": 5}));
    let frames = frames_until_done(&mut owner);
    let done = frames.last().unwrap();
    assert_eq!(done["ok"], true, "{done}\n{}", sdk.daemon.stderr());
    assert_eq!(done["run_id"], run_id.as_str());
    assert_eq!(done["num_turns"], 2);
    assert_eq!(done["result"], "done");
    assert_eq!(
        std::fs::read_to_string(sdk.project().join("out.txt"))
            .ok()
            .as_deref(),
        Some("hello\n"),
        "{frames:#?}"
    );
    let usage = &done["usage"];
    let n = |key: &str| usage[key].as_u64().unwrap();
    assert!(n("input_tokens") > 0 && n("output_tokens") > 0, "{done}");
    // Priced by Pi from the provider's price: $3 in, $15 out per million
    // (the mock's usage has no cache).
    let expected = (n("input_tokens") * 3 + n("output_tokens") * 15) as f64 / 1e6;
    let cost = done["cost_usd"].as_f64().unwrap();
    assert!(
        (cost - expected).abs() < 1e-9,
        "{cost} != {expected}: {done}"
    );
    // The tokens are the mock's own counts, summed over the two turns.
    let answered: u64 = sdk.mock.message_requests().len().try_into().unwrap();
    assert_eq!(answered, 2, "{}", sdk.mock.describe_requests());
    // The rule allowed the call, and the messages were in the SDK's shape.
    assert!(
        decisions(&frames).contains(&("tool_call".into(), "allow".into(), "rule".into())),
        "{:?}",
        decisions(&frames)
    );
    let kinds: Vec<&str> = frames
        .iter()
        .filter(|f| f["type"] == "sdk_message")
        .map(|f| f["message"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"system"), "{kinds:?}");
    // Each assistant message carries the run's cost so far, the last all of it.
    let so_far: Vec<f64> = frames
        .iter()
        .filter(|f| f["type"] == "sdk_message" && f["message"]["type"] == "assistant")
        .map(|f| f["message"]["total_cost_usd"].as_f64().unwrap())
        .collect();
    assert_eq!(so_far.len(), 2, "{so_far:?}");
    assert!(
        so_far[0] > 0.0 && (so_far[1] - cost).abs() < 1e-9,
        "{so_far:?} vs {cost}"
    );
    assert_eq!(kinds.last(), Some(&"result"), "{kinds:?}");
    assert!(
        kinds.contains(&"assistant") && kinds.contains(&"user"),
        "{kinds:?}"
    );
    sdk.wait_no_runs();
    // The call ran judged: its tool_result paired with its tool_call, no
    // coverage alarm (the session's end concludes every call at once).
    let log = sdk.daemon.wait_log_lines(1);
    assert!(
        log.iter()
            .any(|l| l["type"] == "event" && l["input"]["hook_event_name"] == "session_shutdown"),
        "the session's end is logged"
    );
    assert!(
        !log.iter().any(|l| l["type"] == "unjudged_tool_call"),
        "a judged Pi call raised the coverage alarm"
    );
    let status = sdk.status();
    let pi = status["coverage"]
        .as_array()
        .and_then(|agents| agents.iter().find(|a| a["agent"] == "pi"))
        .unwrap_or_else(|| panic!("no coverage for pi: {status}"));
    assert_eq!(
        (pi["judged"].as_u64(), pi["unjudged"].as_u64()),
        (Some(1), Some(0)),
        "{pi}"
    );
}

#[test]
fn an_ask_in_a_pi_run_waits_for_a_client_and_steer_reaches_the_model() {
    if claude::node_absent("an_ask_in_a_pi_run_waits_for_a_client_and_steer_reaches_the_model") {
        return;
    }
    let marker = format!("steer-marker-{}", std::process::id());
    let sdk = pi_daemon(
        &bash_script("touch made-by-pi.txt"),
        Some(ASK_TOUCH),
        "[decisions]\ntimeout = 30\n",
    );
    let mut approver = sdk.client("approver");
    let ok = approver.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok");
    let mut owner = sdk.client("owner");
    let run_id = run_pi(&sdk, &mut owner, json!({}));
    let pending = approver.wait_for("the run's pending tool_call", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let event = &pending["event"];
    assert_eq!(event["harness"], "pi");
    assert_eq!(event["run_id"], run_id.as_str());
    assert_eq!(event["tool"], "bash");
    assert_eq!(
        event["mapped_tool"], "Bash",
        "judged as Claude Code's Bash: {event}"
    );
    assert_eq!(
        event["input"]["tool_input"]["command"],
        "touch made-by-pi.txt"
    );
    assert!(!sdk.project().join("made-by-pi.txt").exists());
    // What `hookd status` and the approver's Runs pane show of a Pi run.
    let runs = sdk.status()["runs"].clone();
    let run = &runs[0];
    assert_eq!(run["run_id"], run_id.as_str(), "{runs}");
    assert_eq!(run["runtime"], "pi", "{run}");
    assert_eq!(run["provider"], "mock", "{run}");
    assert_eq!(run["model"], "claude-mock", "{run}");
    assert_eq!(run["state"], "running");
    assert_eq!(run["turns"], 1, "{run}");
    assert!(run["cost_usd"].as_f64().unwrap() > 0.0, "{run}");
    assert!(run["tokens"]["input"].as_u64().unwrap() > 0, "{run}");
    let text = Command::new(daemon::hookd_bin())
        .args(["status", "--socket"])
        .arg(&sdk.daemon.socket)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!("{run_id}  running  pi ")) && text.contains(" in / "),
        "{text}"
    );

    // Steered while the tool call waits: `hookd steer RUN_ID TEXT`.
    let steered = Command::new(daemon::hookd_bin())
        .args(["steer", &run_id, &marker, "--socket"])
        .arg(&sdk.daemon.socket)
        .output()
        .unwrap();
    assert!(
        steered.status.success(),
        "{}",
        String::from_utf8_lossy(&steered.stderr)
    );
    let reply = approver.call(json!({"type": "decide", "event_id": pending["short_id"],
                                     "verdict": "allow", "reason": "approved by the test"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let frames = frames_until_done(&mut owner);
    let done = frames.last().unwrap();
    assert_eq!(done["ok"], true, "{done}\n{}", sdk.daemon.stderr());
    assert!(sdk.project().join("made-by-pi.txt").exists());
    assert!(
        decisions(&frames).contains(&(
            "tool_call".into(),
            "allow".into(),
            "client:approver".into()
        )),
        "{:?}",
        decisions(&frames)
    );
    // The steer is in a model request after the one that asked for the tool.
    let requests = sdk.mock.message_requests();
    let with_marker = requests
        .iter()
        .position(|r| r.to_string().contains(&marker))
        .unwrap_or_else(|| {
            panic!(
                "no model request carries the steer:\n{}",
                sdk.mock.describe_requests()
            )
        });
    assert!(with_marker >= 1, "{}", sdk.mock.describe_requests());
    let ended = approver.call(json!({"type": "steer", "run_id": run_id, "text": "late"}));
    assert_eq!(ended["code"], "invalid_request", "{ended}");
}

#[test]
fn an_ask_nobody_answers_in_a_pi_run_is_a_deny_with_its_reason() {
    if claude::node_absent("an_ask_nobody_answers_in_a_pi_run_is_a_deny_with_its_reason") {
        return;
    }
    let sdk = pi_daemon(
        &bash_script("touch never.txt"),
        Some(ASK_TOUCH),
        "[decisions]\ntimeout = 1\n",
    );
    let mut owner = sdk.client("owner");
    run_pi(&sdk, &mut owner, json!({}));
    let frames = frames_until_done(&mut owner);
    assert_eq!(frames.last().unwrap()["ok"], true, "{:?}", frames.last());
    assert!(!sdk.project().join("never.txt").exists());
    sdk.mock
        .expect_refusal("a person should confirm file creation");
}

#[test]
fn aborting_a_pi_run_stops_its_tool_and_ends_it() {
    if claude::node_absent("aborting_a_pi_run_stops_its_tool_and_ends_it") {
        return;
    }
    let marker = format!("hookd-pi-abort-{}", std::process::id());
    let command = format!("python3 -c \"import time; time.sleep(30)\" {marker}");
    let sdk = pi_daemon(&bash_script(&command), None, "");
    let mut owner = sdk.client("owner");
    let run_id = run_pi(&sdk, &mut owner, json!({}));
    let sleeping = || {
        processes()
            .iter()
            .any(|p| p.cmdline.contains(&marker) && p.cmdline.contains("python3"))
    };
    daemon::poll_until("the slow tool to run", Duration::from_secs(30), sleeping);
    let reply = owner.call(json!({"type": "abort", "run_id": run_id}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let frames = frames_until_done(&mut owner);
    let done = frames.last().unwrap();
    assert_eq!(done["ok"], false);
    assert_eq!(done["error"], "aborted by client:owner", "{done}");
    // Graceful: Pi's abort() ended it, no kill was needed.
    assert!(
        !sdk.daemon.stderr().contains("did not stop in time"),
        "{}",
        sdk.daemon.stderr()
    );
    daemon::poll_until("the tool to be gone", Duration::from_secs(10), || {
        !sleeping()
    });
    sdk.wait_no_runs();
    assert!(zombie_children(sdk.daemon.pid()).is_empty());
}

/// Ctrl-C in `hookd run` aborts its Pi run gracefully and exits 130.
#[test]
fn ctrl_c_in_hookd_run_aborts_a_pi_run() {
    if claude::node_absent("ctrl_c_in_hookd_run_aborts_a_pi_run") {
        return;
    }
    let marker = format!("hookd-pi-ctrl-c-{}", std::process::id());
    let command = format!("python3 -c \"import time; time.sleep(30)\" {marker}");
    let sdk = pi_daemon(&bash_script(&command), None, "");
    let child = Command::new(daemon::hookd_bin())
        .args([
            "run",
            "--model",
            "mock/claude-mock",
            "--runtime",
            "pi",
            "--cwd",
        ])
        .arg(sdk.project())
        .arg("--socket")
        .arg(&sdk.daemon.socket)
        .arg("please wait")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let sleeping = || {
        processes()
            .iter()
            .any(|p| p.cmdline.contains(&marker) && p.cmdline.contains("python3"))
    };
    daemon::poll_until("the slow tool to run", Duration::from_secs(30), sleeping);
    let interrupted = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupted.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(stderr.contains("aborting run"), "{stderr}");
    assert!(
        stdout.contains("✗ run failed: aborted by client:hookd-run-"),
        "{stdout}"
    );
    daemon::poll_until("the tool to be gone", Duration::from_secs(10), || {
        !sleeping()
    });
    sdk.wait_no_runs();
}

#[test]
fn a_pi_run_stops_at_its_turn_limit_and_its_budget() {
    if claude::node_absent("a_pi_run_stops_at_its_turn_limit_and_its_budget") {
        return;
    }
    // Three tool-calling turns, then "done".
    let turn = |n: u32| {
        json!({"content": [{"type": "tool_call", "name": "bash",
                            "input": {"command": format!("echo turn{n} >> turns.txt")}}]})
    };
    let script = json!({"turns": [turn(0), turn(1), turn(2),
                                  {"content": [{"type": "text", "text": "done"}]}],
                        "default_text": "done"});
    for (options, expected) in [
        (
            json!({"max_turns": 1}),
            "the run reached its limit of turns",
        ),
        (
            json!({"max_budget_usd": 0.000001}),
            "the run reached its budget",
        ),
    ] {
        let sdk = pi_daemon(&script, Some(ALLOW_ECHO), "");
        let mut owner = sdk.client("owner");
        run_pi(&sdk, &mut owner, options.clone());
        let frames = frames_until_done(&mut owner);
        let done = frames.last().unwrap();
        assert_eq!(done["ok"], false, "{options}: {done}");
        assert_eq!(done["error"], expected, "{options}: {done}");
        assert_eq!(done["num_turns"], 1, "{options}: {done}");
        assert!(done["cost_usd"].as_f64().unwrap() > 0.0, "{done}");
        // The session stopped after its first turn: one model request.
        assert_eq!(
            sdk.mock.message_requests().len(),
            1,
            "{options}: {}",
            sdk.mock.describe_requests()
        );
    }
}

#[test]
fn a_crashed_pi_adapter_ends_its_run_and_frees_its_pending_decision() {
    if claude::node_absent("a_crashed_pi_adapter_ends_its_run_and_frees_its_pending_decision") {
        return;
    }
    let sdk = pi_daemon(
        &bash_script("touch never.txt"),
        Some(ASK_TOUCH),
        "[decisions]\ntimeout = 60\n",
    );
    let mut watcher = sdk.client("watcher");
    watcher.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    let mut owner = sdk.client("owner");
    let run_id = run_pi(&sdk, &mut owner, json!({}));
    let pending = watcher.wait_for("the pending tool_call", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let runs = sdk.status()["runs"].clone();
    assert_eq!(runs[0]["run_id"], run_id.as_str(), "{runs}");
    let pid = runs[0]["pid"].as_u64().unwrap() as u32;
    let killed = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let frames = frames_until_done(&mut owner);
    let done = frames.last().unwrap();
    assert_eq!(done["ok"], false);
    let error = done["error"].as_str().unwrap();
    assert!(
        error.contains("ended without a result") && error.contains("signal: 9"),
        "{error}"
    );
    let released = watcher.wait_for("the released decision", |f| f["type"] == "decision");
    assert_eq!(released["decision"]["event_id"], pending["event"]["id"]);
    assert_eq!(released["decision"]["source"], "fallback");
    let mut c = sdk.client("check");
    assert_eq!(c.call(json!({"type": "pending"}))["result"], json!([]));
    sdk.wait_no_runs();
    daemon::poll_until(
        "the adapter's group to be gone",
        Duration::from_secs(5),
        || !processes().iter().any(|p| p.pgrp == pid),
    );
    assert!(zombie_children(sdk.daemon.pid()).is_empty());
    assert!(!sdk.project().join("never.txt").exists());
}

/// A provider that speaks the OpenAI Responses or Chat Completions API, or
/// Gemini's, runs on Pi without being told: the runtime follows the
/// provider.
#[test]
fn openai_and_gemini_providers_run_on_pi_by_default() {
    if claude::node_absent("openai_and_gemini_providers_run_on_pi_by_default") {
        return;
    }
    require_pi();
    let script = json!({"turns": [
        {"content": [{"type": "tool_call", "name": "bash", "input": {"command": "rm -f victim.txt"}}]},
        {"content": [{"type": "text", "text": "done"}]}], "default_text": "done"});
    for (api, mock_api, path) in [
        ("openai-responses", ModelApi::OpenAiResponses, "/v1"),
        ("google-generative-ai", ModelApi::Gemini, "/v1beta"),
        ("openai-completions", ModelApi::ChatCompletions, "/v1"),
    ] {
        let mock = MockServer::start(mock_api, &script.to_string());
        let url = format!("{}{path}", mock.base_url());
        let sdk = Sdk::start_with(&json!({"turns": []}), Some(DENY_RM), None, |options, _| {
            options.config = Some(provider(&url, api));
            options.env.push(("MOCK_KEY".into(), "test-key".into()));
        });
        std::fs::write(sdk.project().join("victim.txt"), "still here").unwrap();
        let out = sdk.cli(&[
            "--model",
            "mock/model-mock",
            "--cwd",
            sdk.project().to_str().unwrap(),
            "please remove victim.txt",
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{api}: {stdout}\n{}\n{}",
            String::from_utf8_lossy(&out.stderr),
            sdk.daemon.stderr()
        );
        assert!(
            stdout.contains("· pi · model mock/model-mock"),
            "{api}: {stdout}"
        );
        assert!(stdout.contains("deny (rule no-rm)"), "{api}: {stdout}");
        assert!(sdk.project().join("victim.txt").exists(), "{api}");
        // The refusal went back to the model as the call's output.
        let requests = mock.requests();
        assert!(
            requests
                .iter()
                .any(|r| r.to_string().contains("rm is not allowed in this project")),
            "{api}: {requests:?}"
        );
        // The Claude Agent SDK cannot speak it: asking for it is refused.
        let out = sdk.cli(&[
            "--runtime",
            "claude-sdk",
            "--model",
            "mock/model-mock",
            "hi",
        ]);
        assert_eq!(out.status.code(), Some(2), "{api}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("provider `mock` speaks {api}"))
                && stderr.contains("use --runtime pi"),
            "{stderr}"
        );
    }
}

#[test]
fn pi_run_errors_say_what_to_do() {
    if claude::node_absent("pi_run_errors_say_what_to_do") {
        return;
    }
    let sdk = pi_daemon(&bash_script("true"), None, "");
    let mut c = sdk.client("c");
    for (request, expected) in [
        (json!({"runtime": "pi"}), "a Pi run needs a provider"),
        (
            json!({"runtime": "codex"}),
            "runtime: `codex`; expected one of claude-sdk, pi",
        ),
        (
            json!({"runtime": "pi", "provider": "mock", "options": {"permission_mode": "plan"}}),
            "options.permission_mode: the pi runtime has no such option",
        ),
        (
            json!({"provider": "other", "options": {"model": "mock/claude-mock"}}),
            "provider `other` is not configured",
        ),
        (
            json!({"runtime": "pi", "options": {"model": "mock/claude-mock", "cwd": "relative"}}),
            "options.cwd: `relative` is not an absolute path",
        ),
    ] {
        let mut frame = request.clone();
        frame["type"] = json!("run");
        frame["prompt"] = json!("hi");
        let reply = c.call(frame);
        assert_eq!(reply["code"], "invalid_request", "{request}: {reply}");
        let message = reply["message"].as_str().unwrap();
        assert!(message.contains(expected), "{request}: {message}");
    }
}

/// `--model PROVIDER/MODEL` names the provider for the Claude Agent SDK
/// too; an Anthropic provider runs there unless told otherwise.
#[test]
fn a_model_naming_an_anthropic_provider_runs_on_the_sdk() {
    if claude::node_absent("a_model_naming_an_anthropic_provider_runs_on_the_sdk") {
        return;
    }
    let sdk = pi_daemon(
        &claude::one_bash_call_script("echo hello > out.txt"),
        Some(ALLOW_ECHO),
        "",
    );
    let out = sdk.cli(&[
        "--model",
        "mock/claude-mock",
        "--cwd",
        sdk.project().to_str().unwrap(),
        "please say hello",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        sdk.daemon.stderr()
    );
    assert!(
        stdout.contains("· claude-sdk · model claude-mock"),
        "{stdout}"
    );
    assert!(stdout.contains("(continue with --resume"), "{stdout}");
    assert!(sdk.project().join("out.txt").exists(), "{stdout}");
    // The SDK asked the provider's endpoint for the model by its own name.
    let models: Vec<Value> = sdk
        .mock
        .message_requests()
        .iter()
        .map(|r| r["model"].clone())
        .collect();
    assert!(models.contains(&json!("claude-mock")), "{models:?}");
    let log = sdk.daemon.wait_log_lines(1);
    let start = log.iter().find(|l| l["type"] == "run_start").unwrap();
    assert_eq!(
        (&start["runtime"], &start["provider"], &start["model"]),
        (&json!("claude-sdk"), &json!("mock"), &json!("claude-mock")),
        "{start}"
    );
}

/// `hookd adapter install` installs the Pi adapter beside the SDK's, with
/// the Pi its lock pins, and a daemon with no `--adapter-dir` runs a Pi
/// run from there.
#[test]
fn an_installed_hookd_runs_a_pi_run_from_its_data_directory() {
    if claude::node_absent("an_installed_hookd_runs_a_pi_run_from_its_data_directory") {
        return;
    }
    require_pi(); // the npm cache then holds the pinned Pi: offline-safe
    let data = tempfile::tempdir().unwrap();
    let out = adapter_command(data.path(), &["install"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status: Value =
        serde_json::from_slice(&adapter_command(data.path(), &["status", "--json"]).stdout)
            .unwrap();
    let dir = PathBuf::from(status["dir"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(dir.join("pi.mjs")).unwrap(),
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("adapter/pi.mjs"))
            .unwrap(),
        "the embedded Pi adapter"
    );
    let pinned: Value = serde_json::from_str(
        &std::fs::read_to_string(
            dir.join("node_modules/@mariozechner/pi-coding-agent/package.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(pinned["version"], "0.73.1");

    let sdk = Sdk::start_with(
        &bash_script("rm -f victim.txt"),
        Some(DENY_RM),
        None,
        |options, _| {
            let url = options
                .env
                .iter()
                .find(|(k, _)| k == "ANTHROPIC_BASE_URL")
                .map(|(_, v)| v.clone())
                .unwrap();
            options.config = Some(provider(&url, "anthropic-messages"));
            options.env.push(("MOCK_KEY".into(), "test-key".into()));
            options
                .env
                .push(("XDG_DATA_HOME".into(), data.path().display().to_string()));
        },
    );
    assert_eq!(sdk.daemon.status()["adapter_dir"], json!(dir));
    std::fs::write(sdk.project().join("victim.txt"), "still here").unwrap();
    let mut owner = sdk.client("owner");
    run_pi(&sdk, &mut owner, json!({}));
    let done = frames_until_done(&mut owner).pop().unwrap();
    assert_eq!(done["ok"], true, "{done}\n{}", sdk.daemon.stderr());
    assert!(sdk.project().join("victim.txt").exists());
    sdk.mock.expect_refusal("rm is not allowed in this project");
}

/// `budget = { usd = X }` (issue #25): a Pi run's cost, reported after each
/// model reply, reaches its session's facts; a deny rule with a budget the
/// first reply already spent blocks the run's first `touch`, while the same
/// rule with a budget the run never reaches lets it run. The decision line
/// records the cost it read.
#[test]
fn a_usd_budget_applies_once_a_pi_runs_cost_passed_it() {
    if claude::node_absent("a_usd_budget_applies_once_a_pi_runs_cost_passed_it") {
        return;
    }
    let rule = |usd: &str| {
        format!(
            "[[rule]]\nid = \"run-budget\"\naction = \"deny\"\ntool = \"Bash(touch *)\"\n\
             budget = {{ usd = {usd} }}\nreason = \"this run spent its budget\"\n"
        )
    };
    let mut outcomes = Vec::new();
    for usd in ["0.000001", "1000"] {
        let sdk = pi_daemon(&bash_script("touch made.txt"), Some(&rule(usd)), "");
        let mut owner = sdk.client("owner");
        // A loaded machine starts Pi slowly: more than the client's 10 s.
        owner.set_read_timeout(Duration::from_secs(60));
        run_pi(&sdk, &mut owner, json!({"max_turns": 5}));
        let frames = frames_until_done(&mut owner);
        assert_eq!(
            frames.last().unwrap()["ok"],
            true,
            "{:?}\n{}",
            frames.last(),
            sdk.daemon.stderr()
        );
        let log = sdk.daemon.wait_log_lines(1);
        let call = log
            .iter()
            .find(|l| l["type"] == "event" && l["input"]["hook_event_name"] == "tool_call")
            .expect("Pi's tool_call in the log")
            .clone();
        let decision = sdk
            .daemon
            .wait_decisions(1)
            .into_iter()
            .find(|l| l["event_id"] == call["id"])
            .expect("the tool_call's decision");
        outcomes.push((sdk.project().join("made.txt").exists(), decision));
    }
    let (made, decision) = &outcomes[0];
    assert!(!made, "the touch ran past a spent budget: {decision}");
    assert_eq!(decision["verdict"], "deny", "{decision}");
    assert_eq!(decision["rule_ids"], json!(["run-budget"]));
    let cost = decision["facts"]["run_cost_usd"].as_f64().unwrap_or(0.0);
    assert!(cost > 0.000001, "{decision}");
    let (made, decision) = &outcomes[1];
    assert!(made, "the touch did not run under the budget: {decision}");
    assert_eq!(decision["verdict"], "none", "{decision}");
    assert!(
        decision["facts"]["run_cost_usd"].as_f64().unwrap_or(0.0) > 0.0,
        "{decision}"
    );
}
