//! Judge rules in the real daemon (issue #25): `action = "judge"` asks the
//! mock Messages API (`tests/support/mock_models.py`, its `side_replies`
//! scripting the verdicts) through a `[providers]` entry; the verdict, its
//! reason, the cache, single flight, the day's budget, the fallback of a
//! failing or slow model (`on_error`) while other hooks are answered, and
//! `hookd replay` re-judging with the recorded answers.

use crate::support::agent_cli::{MockServer, ModelApi};
use crate::support::daemon;

use std::process::Command;

use daemon::{
    bash, forward_in_background, permission_decision, stdout_json, Daemon, DaemonOptions,
};
use serde_json::{json, Value};

const RULES: &str = r#"
[[rule]]
id = "destructive"
action = "judge"
tool = "Bash"
prompt = "Is this command destructive outside the project?"
timeout = "3s"
on_error = "deny"
"#;

fn verdict(v: &str, reason: &str) -> String {
    json!({"verdict": v, "reason": reason}).to_string()
}

/// The mock, answering side requests whose JSON holds `match` with `text`.
fn mock(replies: Value) -> MockServer {
    MockServer::start(
        ModelApi::Anthropic,
        &json!({"turns": [], "side_replies": replies}).to_string(),
    )
}

/// A daemon whose judge asks `mock`, with `rules` and extra `[judge]` keys.
fn daemon(mock: &MockServer, rules: &str, judge: &str) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(rules.to_string()),
        config: Some(format!(
            "[providers.mock]\nkind = \"custom\"\nbase_url = \"{}\"\napi_key_env = \"HOOKD_TEST_JUDGE_KEY\"\n\n[judge]\nprovider = \"mock\"\n{judge}",
            mock.base_url()
        )),
        env: vec![("HOOKD_TEST_JUDGE_KEY".into(), "sk-test-judge".into())],
        ..DaemonOptions::default()
    })
}

/// The judge's requests the mock received.
fn judge_requests(mock: &MockServer) -> Vec<Value> {
    mock.requests()
        .into_iter()
        .filter(|r| r["reply"]["kind"] == "side")
        .collect()
}

fn reason(out: &std::process::Output) -> String {
    stdout_json(out)["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn hookd(args: &[&str]) -> std::process::Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .env("XDG_CONFIG_HOME", "/nonexistent-hookd-test")
        .output()
        .unwrap()
}

/// Deny, ask and allow as the model says, its reason reaching the agent;
/// the request carries the rule's prompt and the redacted event, with the
/// provider's key; every answer is in the decision line; `hookd replay`
/// reproduces the decisions from the log, and without the judge rule they
/// change.
#[test]
fn the_models_verdict_decides_with_its_reason_and_replays() {
    // Later questions hold the earlier commands among the recent events:
    // the last command's reply comes first.
    let mock = mock(json!([
        {"match": "ls &&", "text": verdict("allow", "harmless")},
        {"match": "git push", "text": verdict("ask", "pushing should be looked at")},
        {"match": "rm -rf build", "text": verdict("deny", "deletes the build tree outside the project")},
    ]));
    let d = daemon(&mock, RULES, "");
    let deny = d.forward(&bash("rm -rf build"), &[]);
    assert_eq!(permission_decision(&deny), "deny");
    assert_eq!(reason(&deny), "deletes the build tree outside the project");
    let ask = d.forward(&bash("git push origin main"), &[]);
    assert_eq!(permission_decision(&ask), "ask");
    assert!(
        reason(&ask).contains("pushing should be looked at"),
        "{}",
        reason(&ask)
    );
    let secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";
    let allow = d.forward(
        &bash(&format!("ls && export ANTHROPIC_API_KEY={secret}")),
        &[],
    );
    assert_eq!(
        permission_decision(&allow),
        Value::Null,
        "allow: the other rules decide"
    );

    let requests = judge_requests(&mock);
    assert_eq!(requests.len(), 3, "{requests:#?}");
    let first = &requests[0];
    let user = first["body"]["messages"][0]["content"].as_str().unwrap();
    assert!(
        user.contains("Is this command destructive outside the project?"),
        "{user}"
    );
    assert!(user.contains("rm -rf build"), "{user}");
    assert_eq!(first["body"]["model"], "claude-haiku-4-5");
    let third = requests[2]["body"].to_string();
    assert!(
        !third.contains(secret),
        "the event is redacted before it leaves: {third}"
    );
    // The recent events of the session reach the later questions.
    assert!(
        third.contains("PreToolUse Bash: git push origin main"),
        "{third}"
    );

    let decisions = d.wait_decisions(3);
    let judged: Vec<(Value, Value)> = decisions
        .iter()
        .map(|l| (l["verdict"].clone(), l["judgements"][0]["verdict"].clone()))
        .collect();
    assert_eq!(
        judged,
        [
            (json!("deny"), json!("deny")),
            (json!("ask"), json!("ask")),
            (json!("none"), json!("allow")),
        ]
    );
    assert_eq!(decisions[0]["judgements"][0]["rule"], "destructive");
    assert_eq!(decisions[0]["rule_ids"], json!(["destructive"]));

    let status = d.status();
    assert_eq!(status["judge"]["calls"], 3, "{status:#}");
    assert!(status["judge"]["input_tokens"].as_u64().unwrap() > 0);
    assert!(status["judge"]["cost_usd"].as_f64().unwrap() > 0.0);
    let shown = hookd(&["status", "--socket", d.socket.to_str().unwrap()]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("judge: 3 calls today (0 cached, 0 shared)"),
        "{shown}"
    );

    // Replay: the recorded answers, never a model call.
    let rules = d.dir.path().join("rules.toml");
    let same = hookd(&[
        "replay",
        d.log.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(
        same.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&same.stderr)
    );
    let report: Value = serde_json::from_slice(&same.stdout).unwrap();
    assert_eq!(
        (report["judged"].clone(), report["changes"].clone()),
        (json!(3), json!([])),
        "{report}"
    );
    let none = d.dir.path().join("none.toml");
    std::fs::write(&none, "").unwrap();
    let without = hookd(&[
        "replay",
        d.log.to_str().unwrap(),
        "--rules",
        none.to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(without.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&without.stdout).unwrap();
    assert_eq!(report["changes"].as_array().unwrap().len(), 2, "{report}");
    assert_eq!(judge_requests(&mock).len(), 3, "replay asks no model");
}

/// An answer that is not the required JSON, a failing endpoint: the
/// rule's `on_error`, with a reason that says so, counted.
#[test]
fn an_unusable_answer_or_a_failing_model_falls_back_to_on_error() {
    let mock = mock(json!([
        {"match": "echo broken", "text": "overloaded", "status": 529},
        {"match": "echo extra", "text": "{\"verdict\": \"deny\", \"reason\": \"x\", \"confidence\": 0.9}"},
        {"match": "echo garbage", "text": "Sure! That looks fine to me."},
    ]));
    let d = daemon(&mock, RULES, "");
    for command in ["echo garbage", "echo extra", "echo broken"] {
        let out = d.forward(&bash(command), &[]);
        assert_eq!(permission_decision(&out), "deny", "{command}");
        assert_eq!(
            reason(&out),
            "the judge of rule destructive gave no verdict",
            "{command}"
        );
    }
    let status = d.status();
    assert_eq!(status["judge"]["errors"], 3, "{status:#}");
    let decisions = d.wait_decisions(3);
    assert!(
        decisions.iter().all(|l| l.get("judgements").is_none()),
        "no answer to record"
    );
    assert!(
        d.stderr().contains("529"),
        "the log says why: {}",
        d.stderr()
    );
}

/// A model slower than the rule's timeout: `on_error` applies within the
/// deadline, and other hooks are answered while the judge waits.
#[test]
fn a_slow_model_falls_back_and_never_holds_other_hooks() {
    let mock = mock(json!([
        {"match": "slow", "text": verdict("allow", "fine"), "delay_ms": 6000},
    ]));
    let rules = RULES.to_string()
        + "\n[[rule]]\nid = \"no-cat\"\naction = \"deny\"\ntool = \"Bash(cat *)\"\nreason = \"no cat\"\n";
    let d = daemon(&mock, &rules, "");
    let slow = forward_in_background(&d.socket, &bash("echo slow"), &[]);
    // The question is under way…
    d.wait_for_status("the judged hook in flight", |s| {
        s["counters"]["hooks_in_flight"].as_u64().unwrap_or(0) > 0
    });
    // …and a hook the judge does not concern is answered meanwhile.
    let other = d.forward(
        &json!({
            "session_id": "other", "cwd": "/tmp", "hook_event_name": "PreToolUse",
            "tool_name": "Read", "tool_input": {"file_path": "/tmp/x"}
        }),
        &[],
    );
    assert_eq!(permission_decision(&other), Value::Null);
    assert!(
        !slow.is_finished(),
        "the judged hook still waits for its model"
    );
    let slow = slow.join().unwrap();
    assert_eq!(permission_decision(&slow), "deny");
    assert_eq!(
        reason(&slow),
        "the judge of rule destructive gave no verdict"
    );
    assert_eq!(d.status()["judge"]["timeouts"], 1);
}

/// Two identical events: one model call, the second answer from the cache
/// (recorded `cached`); two concurrent identical events: one call shared.
#[test]
fn the_cache_and_single_flight_save_calls() {
    let mock = mock(json!([
        {"match": "together", "text": verdict("deny", "not together"), "delay_ms": 1000},
        {"match": "cached", "text": verdict("deny", "no")},
    ]));
    let d = daemon(&mock, RULES, "");
    for _ in 0..2 {
        let out = d.forward(&bash("echo cached"), &[]);
        assert_eq!(permission_decision(&out), "deny");
        assert_eq!(reason(&out), "no");
    }
    assert_eq!(
        judge_requests(&mock).len(),
        1,
        "the second answer came from the cache"
    );
    let decisions = d.wait_decisions(2);
    assert_eq!(decisions[0]["judgements"][0].get("cached"), None);
    assert_eq!(decisions[1]["judgements"][0]["cached"], true);
    eprintln!(
        "measured: a judged hook's decision latency, asking the mock model {} µs, from the cache {} µs",
        decisions[0]["latency_us"], decisions[1]["latency_us"]
    );
    // `hookd explain` says where each answer came from.
    for (decision, from) in [
        (&decisions[0], "(asked the model) — no"),
        (&decisions[1], "(from the daemon's cache) — no"),
    ] {
        let id = decision["decision_id"].as_str().unwrap();
        let shown = hookd(&["explain", id, "--log", d.log.to_str().unwrap()]);
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(
            shown.contains(&format!("judge     destructive: deny {from}")),
            "{shown}"
        );
    }

    let a = forward_in_background(&d.socket, &bash("echo together"), &[]);
    let b = forward_in_background(&d.socket, &bash("echo together"), &[]);
    for out in [a.join().unwrap(), b.join().unwrap()] {
        assert_eq!(permission_decision(&out), "deny");
        assert_eq!(reason(&out), "not together");
    }
    assert_eq!(
        judge_requests(&mock).len(),
        2,
        "one call for two concurrent questions"
    );
    let status = d.status();
    assert_eq!(
        (
            status["judge"]["calls"].clone(),
            status["judge"]["cache_hits"].clone(),
            status["judge"]["shared"].clone()
        ),
        (json!(2), json!(1), json!(1)),
        "{status:#}"
    );
}

/// Past the day's calls, no call is made: `on_error`, counted.
#[test]
fn a_spent_budget_falls_back_to_on_error() {
    let mock = mock(json!([{"match": "", "text": verdict("allow", "fine")}]));
    let d = daemon(&mock, RULES, "max_calls_per_day = 1\n");
    assert_eq!(
        permission_decision(&d.forward(&bash("echo one"), &[])),
        Value::Null
    );
    let second = d.forward(&bash("echo two"), &[]);
    assert_eq!(permission_decision(&second), "deny");
    assert_eq!(judge_requests(&mock).len(), 1);
    let status = d.status();
    assert_eq!(status["judge"]["over_budget"], 1, "{status:#}");
    assert_eq!(status["judge"]["max_calls"], 1);
}

/// `[judge]` and `[narrator]` errors name their key, and the daemon refuses
/// to start.
#[test]
fn judge_config_errors_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    for (text, expected) in [
        (
            "[judge]\nprovider = \"nowhere\"\n",
            "config.toml:2:1: `judge.provider`: `nowhere` is not a [providers] entry of this file",
        ),
        (
            "[judge]\ncache_ttl = \"soon\"\n",
            "config.toml:2:1: `judge.cache_ttl`: \"soon\" is not a duration",
        ),
        (
            "[narrator]\nenabled = true\n",
            "`narrator.provider`: the narrator needs a provider",
        ),
    ] {
        std::fs::write(&config, text).unwrap();
        let out = Command::new(daemon::hookd_bin())
            .args(["serve", "--socket"])
            .arg(dir.path().join("s.sock"))
            .arg("--log")
            .arg(dir.path().join("e.jsonl"))
            .arg("--config")
            .arg(&config)
            .env("XDG_CONFIG_HOME", dir.path())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{text}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expected), "{text}: {err}");
    }
}

/// Another rule denies the call whatever the judge says: no model call.
#[test]
fn no_question_is_asked_when_another_rule_denies_anyway() {
    let mock = mock(json!([{"match": "", "text": verdict("allow", "fine")}]));
    let rules = format!(
        "{RULES}\n[[rule]]\nid = \"no-rm\"\naction = \"deny\"\ntool = \"Bash(rm *)\"\nreason = \"no rm here\"\n"
    );
    let d = daemon(&mock, &rules, "");
    let out = d.forward(&bash("rm -rf /tmp/x"), &[]);
    assert_eq!(permission_decision(&out), "deny");
    assert_eq!(reason(&out), "no rm here");
    assert_eq!(judge_requests(&mock).len(), 0);
    let decision = &d.wait_decisions(1)[0];
    assert_eq!(decision["rule_ids"], json!(["no-rm"]), "{decision}");
    assert_eq!(d.status()["judge"]["skipped"], 1);
    // Replay (no answer recorded: the judge falls back to on_error) keeps the deny.
    let rules_file = d.dir.path().join("rules.toml");
    let replayed = hookd(&[
        "replay",
        d.log.to_str().unwrap(),
        "--rules",
        rules_file.to_str().unwrap(),
    ]);
    assert_eq!(
        replayed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&replayed.stdout)
    );
}

/// An input past the inline limit (judged on a blocking thread) is judged
/// again there with the model's answer.
#[test]
fn a_large_input_is_judged_with_the_models_answer_too() {
    let mock = mock(json!([{"match": "echo big", "text": verdict("deny", "too big to trust")}]));
    let d = daemon(&mock, RULES, "");
    let command = format!("echo big {}", "x".repeat(100 * 1024));
    let out = d.forward(&bash(&command), &[]);
    assert_eq!(permission_decision(&out), "deny");
    assert_eq!(reason(&out), "too big to trust");
    assert_eq!(judge_requests(&mock).len(), 1);
}
