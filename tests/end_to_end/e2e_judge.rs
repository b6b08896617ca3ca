//! End to end: a judge rule (issue #25) with the real Claude Code CLI (and
//! the real Codex and Gemini CLIs, through `e2e_agents_hookd`'s harness). Claude
//! Code plays its scripted conversation against one mock of the Messages
//! API; hookd's judge asks another (`side_replies` script its verdicts). A
//! judged deny blocks the tool with the model's reason; the same call again
//! is answered from the judge's cache, without a model request; a judge
//! slower than its timeout falls back to `on_error` within the deadline.
//!
//! Needs `npm ci --prefix tests/e2e` (done by `scripts/test`).

use crate::e2e_agents_hookd::{assert_shell_blocked, hooked_run};
use crate::support::agent_cli::{MockServer, ModelApi};
use crate::support::agents::{self, one_shell_call, Cli, ModelMock, COMMAND};
use crate::support::claude;
use crate::support::daemon;

use claude::{ClaudeRun, MockApi};
use daemon::{Daemon, DaemonOptions};
use serde_json::{json, Value};

const JUDGE_RM: &str = r#"
[[rule]]
id = "judge-rm"
action = "judge"
tool = "Bash(rm *)"
prompt = "Does this command delete something the user keeps?"
timeout = "2s"
on_error = "ask"
"#;

/// A daemon whose judge asks `judge`, and a Claude Code run against
/// `script` with the forwarder registered for every hook.
fn session(judge: &MockServer, script: &Value) -> (Daemon, MockApi, ClaudeRun) {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(JUDGE_RM.to_string()),
        config: Some(format!(
            "[providers.judge]\nkind = \"custom\"\nbase_url = \"{}\"\napi_key_env = \"HOOKD_E2E_JUDGE_KEY\"\n\n[judge]\nprovider = \"judge\"\n",
            judge.base_url()
        )),
        env: vec![("HOOKD_E2E_JUDGE_KEY".into(), "sk-e2e".into())],
        ..DaemonOptions::default()
    });
    let mock = MockApi::start_text(&script.to_string());
    let run = ClaudeRun::new(&mock).env("HOOKD_SOCKET", &d.socket);
    let forwarder = claude::command_hook(daemon::forwarder_bin(), &["--timeout", "20"]);
    run.write_settings(&claude::hooks_settings(claude::ALL_HOOK_EVENTS, forwarder));
    (d, mock, run)
}

/// No hook fell back in the forwarder: every one had the daemon's answer.
fn assert_no_fallback(out: &claude::ClaudeOutput) {
    for m in out.messages_of_type("system") {
        let stderr = m["stderr"].as_str().unwrap_or_default();
        assert!(
            !stderr.contains("hookd-forwarder: fallback"),
            "a hook fell back: {m}"
        );
    }
}

/// The judge's requests.
fn judge_calls(judge: &MockServer) -> usize {
    judge
        .requests()
        .iter()
        .filter(|r| r["reply"]["kind"] == "side")
        .count()
}

/// The model runs `rm -f victim.txt` twice: the judge denies the first
/// with its reason, which reaches the model; the second is denied from the
/// cache, with no second judge request; the file survives.
#[test]
fn a_judged_deny_blocks_the_tool_and_the_cache_answers_the_same_call_again() {
    let judge = MockServer::start(
        ModelApi::Anthropic,
        &json!({"side_replies": [{"match": "rm -f victim.txt",
            "text": "{\"verdict\": \"deny\", \"reason\": \"victim.txt is the user's file\"}"}]})
        .to_string(),
    );
    let call = |turn: usize| {
        json!({"content": [
            {"type": "text", "text": format!("attempt {turn}")},
            {"type": "tool_use", "name": "Bash", "input": {"command": "rm -f victim.txt", "description": "remove"}}
        ], "stop_reason": "tool_use"})
    };
    let script = json!({"turns": [call(0), call(1), {"content": [{"type": "text", "text": "done"}]}], "default_text": "done"});
    let (d, mock, run) = session(&judge, &script);
    std::fs::write(run.project_dir().join("victim.txt"), "keep me").unwrap();
    let out = run.run("please clean up");
    out.assert_success();
    assert!(
        run.project_dir().join("victim.txt").exists(),
        "rm ran\n{}",
        out.describe()
    );
    mock.expect_refusal("victim.txt is the user's file");
    let results = mock.tool_results();
    assert_eq!(results.len(), 2, "{}", mock.describe_requests());
    assert!(results
        .iter()
        .all(|r| r.is_error && r.content.contains("victim.txt is the user's file")));
    assert_eq!(
        judge_calls(&judge),
        1,
        "the second call came from the cache"
    );
    let decisions: Vec<Value> = d
        .wait_decisions(1)
        .into_iter()
        .filter(|l| l.get("judgements").is_some())
        .collect();
    assert_eq!(decisions.len(), 2, "{decisions:#?}");
    assert_eq!(decisions[0]["verdict"], "deny");
    assert_eq!(decisions[0]["judgements"][0].get("cached"), None);
    assert_eq!(decisions[1]["judgements"][0]["cached"], true);
}

/// A judge slower than its rule's timeout: `on_error = "ask"` applies
/// within the hook's deadline; nobody is subscribed, so the ask becomes
/// Claude Code's own (in `-p` mode, a refusal), and the file survives.
#[test]
fn a_slow_judge_falls_back_to_on_error_within_the_deadline() {
    let judge = MockServer::start(
        ModelApi::Anthropic,
        &json!({"side_replies": [{"match": "", "delay_ms": 8000,
            "text": "{\"verdict\": \"allow\", \"reason\": \"late\"}"}]})
        .to_string(),
    );
    let script = claude::one_bash_call_script("rm -f victim.txt");
    let (d, _mock, run) = session(&judge, &script);
    std::fs::write(run.project_dir().join("victim.txt"), "keep me").unwrap();
    let out = run.run("please clean up");
    out.assert_success();
    assert!(
        run.project_dir().join("victim.txt").exists(),
        "rm ran\n{}",
        out.describe()
    );
    let decision = d
        .wait_decisions(1)
        .into_iter()
        .find(|l| l["rule_ids"] == json!(["judge-rm"]))
        .expect("the judge rule decided");
    assert_eq!(decision["verdict"], "ask", "{decision}");
    assert_eq!(
        decision["reason"],
        "the judge of rule judge-rm gave no verdict"
    );
    // The rule's ask, which nobody could answer: Claude Code's own
    // (`source: fallback` in the daemon), not the forwarder's fallback at
    // its deadline.
    assert_eq!(decision["source"], "fallback", "{decision}");
    assert_no_fallback(&out);
    assert_eq!(d.status()["judge"]["timeouts"], 1);
}

/// Codex and Gemini: the same judge rule blocks each one's shell command
/// with the model's reason (their shell tools judged as `Bash`).
#[test]
fn a_judged_deny_blocks_codexs_and_geminis_shell_command() {
    if agents::node_absent("a_judged_deny_blocks_codexs_and_geminis_shell_command") {
        return;
    }
    for cli in [Cli::Codex, Cli::Gemini] {
        let judge = MockServer::start(
            ModelApi::Anthropic,
            &json!({"side_replies": [{"match": "echo", "text": "{\"verdict\": \"deny\", \"reason\": \"no writes from this agent\"}"}]})
                .to_string(),
        );
        let d = Daemon::start_with(DaemonOptions {
            rules: Some("[[rule]]\nid = \"judge-shell\"\naction = \"judge\"\ntool = \"Bash\"\nprompt = \"Does this write files?\"\nprovider = \"judge\"\n".into()),
            config: Some(format!(
                "[providers.judge]\nkind = \"custom\"\nbase_url = \"{}\"\napi_key_env = \"HOOKD_E2E_JUDGE_KEY\"\n",
                judge.base_url()
            )),
            env: vec![("HOOKD_E2E_JUDGE_KEY".into(), "sk-e2e".into())],
            ..DaemonOptions::default()
        });
        let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
        let (run, _records) = hooked_run(cli, &mock, &d, &[]);
        let out = run.run("write hello to out.txt");
        mock.assert_no_egress();
        assert_shell_blocked(cli, &run, &out, &mock, "no writes from this agent");
        assert_eq!(judge_calls(&judge), 1, "{cli:?}");
        let decision = d
            .wait_decisions(1)
            .into_iter()
            .find(|l| l["rule_ids"] == json!(["judge-shell"]))
            .unwrap_or_else(|| panic!("{cli:?}: no judged decision"));
        assert_eq!(decision["verdict"], "deny", "{cli:?}");
        assert_eq!(decision["judgements"][0]["verdict"], "deny", "{cli:?}");
    }
}
