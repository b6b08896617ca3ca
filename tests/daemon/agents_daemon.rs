//! Codex and Gemini hooks through the real `hook-forwarder --agent` and a
//! real `hookd serve`: one rules file, pending table, client protocol and
//! log for every agent, each answered in the form its CLI honors.
//!
//! - the frame's harness is the agent; only the environment its dialect
//!   allows is relayed (never `GEMINI_API_KEY`);
//! - rules judge the mapped names (`run_shell_command` is `Bash`, a Codex
//!   patch is an `Edit`/`Write` of each file); `agent = "…"` restricts a rule;
//! - the log has both the agent's names and the mapped ones (the tool the
//!   rules judged a call as), and `hookd tail --tool` finds either;
//! - an ask nobody answers: Gemini gets a deny with the reason (never an
//!   ask), Codex its own flow, or a deny under fail-closed; a client's
//!   `allow` lets the tool run; `ask` is refused as a client's verdict;
//! - the forwarder's fallbacks, daemon down, in each agent's form, and the
//!   universal deny for an event no dialect knows;
//! - Gemini's AfterAgent follows the once-per-chain Stop rule, and the
//!   continuation prompt a block causes does not end the chain.

use crate::support::daemon;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use daemon::{stdout_json, Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};

fn captured(agent: &str, name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(agent)
        .join("captured")
        .join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The log's event record and decision record of the one hook whose
/// `kind` is `kind`, the last one if several.
fn logged(d: &Daemon, kind: &str) -> (Value, Value) {
    let what = format!("a {kind} event and decision in the log");
    daemon::poll_reporting(&what, Duration::from_secs(10), || {
        let lines = d.log_lines();
        let event = lines
            .iter()
            .rev()
            .find(|l| l["type"] == "event" && l["kind"] == kind)
            .cloned();
        if let Some(event) = event {
            if let Some(decision) = lines
                .iter()
                .find(|l| l["type"] == "decision" && l["event_id"] == event["id"])
            {
                return Ok((event, decision.clone()));
            }
        }
        Err(format!("{lines:#?}"))
    })
}

const DENY_ECHO: &str = r#"
[[rule]]
id = "no-echo"
action = "deny"
tool = "Bash(echo:*)"
reason = "echo is not allowed here"
"#;

#[test]
fn a_gemini_shell_call_is_judged_as_bash_and_denied_in_geminis_form() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(DENY_ECHO.into()),
        ..DaemonOptions::default()
    });
    let input = captured("gemini", "BeforeTool.json");
    let mut child = Command::new(daemon::forwarder_bin())
        .args(["--agent", "gemini"])
        .env("HOOKD_SOCKET", &d.socket)
        .env("GEMINI_API_KEY", "sk-secret-never-relayed")
        .env("GEMINI_SESSION_ID", "s-1")
        .env("GEMINI_PROJECT_DIR", "/home/dev/project")
        .env("CLAUDE_CODE_ENTRYPOINT", "not-gemini")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout_json(&out),
        json!({"decision": "deny", "reason": "echo is not allowed here"})
    );

    let (event, decision) = logged(&d, "BeforeTool");
    assert_eq!(event["harness"], "gemini");
    assert_eq!(event["tool"], "run_shell_command");
    assert_eq!(event["mapped_kind"], "PreToolUse");
    assert_eq!(event["mapped_tool"], "Bash");
    assert_eq!(decision["verdict"], "deny");
    assert_eq!(decision["rule_ids"], json!(["no-echo"]));
    let log = std::fs::read_to_string(&d.log).unwrap();
    assert!(!log.contains("sk-secret"), "the API key reached the log");
    assert!(
        !log.contains("not-gemini"),
        "Claude's variables relayed for Gemini"
    );
}

#[test]
fn a_codex_patch_is_judged_per_file_and_its_deny_fits_codexs_schema() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(
            r#"
[[rule]]
id = "hello-is-frozen"
action = "deny"
tool = "Edit(hello.txt)"
reason = "hello.txt is frozen"

[[rule]]
id = "new-files-ok"
action = "allow"
tool = "Write"
"#
            .into(),
        ),
        ..DaemonOptions::default()
    });
    let input = captured("codex", "PreToolUse.apply_patch.json");
    let out = d.forward(&input, &["--agent", "codex"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Exactly Codex's schema fields, a deny with its reason.
    assert_eq!(
        stdout_json(&out),
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "deny", "permissionDecisionReason": "hello.txt is frozen"}})
    );
    let (event, decision) = logged(&d, "PreToolUse");
    assert_eq!(event["harness"], "codex");
    assert_eq!(event["tool"], "apply_patch");
    assert_eq!(event["mapped_tool"], "Edit");
    assert!(event.get("mapped_kind").is_none(), "{event}");
    assert_eq!(decision["rule_ids"], json!(["hello-is-frozen"]));

    // A patch that only adds a file is allowed by the Write rule, which
    // Codex cannot be told: no opinion, its own flow runs it.
    let mut add_only = input.clone();
    add_only["tool_input"]["command"] =
        json!("*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch\n");
    let out = d.forward(&add_only, &["--agent", "codex"]);
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The logged `mapped_tool` is the tool the rules judged a call as (a Codex
/// patch that only adds a file is a `Write`; one that also updates a file
/// an `Edit`), and `hookd tail --tool` finds Codex's and Gemini's edits by
/// that name.
#[test]
fn an_edit_is_logged_and_tailed_as_the_tool_the_rules_judged_it_as() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(
            r#"
[[rule]]
id = "no-new-files"
action = "deny"
tool = "Write"
reason = "no new files"
"#
            .into(),
        ),
        ..DaemonOptions::default()
    });
    let mixed = captured("codex", "PreToolUse.apply_patch.json");
    let mut add_only = mixed.clone();
    add_only["tool_use_id"] = json!("call_add_only");
    add_only["tool_input"]["command"] =
        json!("*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch\n");
    let out = d.forward(&add_only, &["--agent", "codex"]);
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecisionReason"],
        "no new files"
    );
    let (event, decision) = logged(&d, "PreToolUse");
    assert_eq!(decision["rule_ids"], json!(["no-new-files"]));
    assert_eq!(
        event["mapped_tool"], "Write",
        "judged by the Write rule: {event}"
    );

    d.forward(&mixed, &["--agent", "codex"]);
    d.forward(
        &captured("gemini", "BeforeTool.write_file.json"),
        &["--agent", "gemini"],
    );
    d.forward(
        &captured("gemini", "BeforeTool.replace.json"),
        &["--agent", "gemini"],
    );
    d.wait_decisions(4);
    let lines = d.log_lines();
    let mapped: Vec<(&Value, &Value)> = lines
        .iter()
        .filter(|l| l["type"] == "event")
        .map(|l| (&l["tool"], &l["mapped_tool"]))
        .collect();
    assert_eq!(
        mapped,
        [
            (&json!("apply_patch"), &json!("Write")),
            (&json!("apply_patch"), &json!("Edit")),
            (&json!("write_file"), &json!("Write")),
            (&json!("replace"), &json!("Edit")),
        ]
    );

    let tail = |tool: &str| -> Vec<String> {
        let out = Command::new(daemon::hookd_bin())
            .args(["tail", "--json", "--tool", tool, "--log"])
            .arg(&d.log)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|l| l["type"] == "event")
            .map(|l| {
                format!(
                    "{}:{}",
                    l["harness"].as_str().unwrap(),
                    l["tool"].as_str().unwrap()
                )
            })
            .collect()
    };
    assert_eq!(tail("Write"), ["codex:apply_patch", "gemini:write_file"]);
    assert_eq!(tail("Edit"), ["codex:apply_patch", "gemini:replace"]);
    assert_eq!(
        tail("replace"),
        ["gemini:replace"],
        "the agent's own name still works"
    );
}

#[test]
fn a_rule_for_one_agent_judges_only_that_agents_hooks() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(
            r#"
[[rule]]
id = "codex-no-echo"
agent = "codex"
action = "deny"
tool = "Bash(echo:*)"
reason = "not in Codex"
"#
            .into(),
        ),
        ..DaemonOptions::default()
    });
    let codex = d.forward(&captured("codex", "PreToolUse.json"), &["--agent", "codex"]);
    assert_eq!(
        stdout_json(&codex)["hookSpecificOutput"]["permissionDecisionReason"],
        "not in Codex"
    );
    let gemini = d.forward(
        &captured("gemini", "BeforeTool.json"),
        &["--agent", "gemini"],
    );
    assert!(
        gemini.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&gemini.stdout)
    );
    let mut claude = captured("codex", "PreToolUse.json");
    claude["tool_name"] = json!("Bash");
    let claude = d.forward(&claude, &[]);
    assert!(
        claude.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&claude.stdout)
    );
}

const ASK_ECHO: &str = r#"
[[rule]]
id = "ask-echo"
action = "ask"
tool = "Bash(echo:*)"
reason = "echo needs a look"
"#;

#[test]
fn an_ask_nobody_answers_becomes_what_each_agent_can_do() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(ASK_ECHO.into()),
        ..DaemonOptions::default()
    });
    // Gemini would hang on an ask: a deny with the ask's reason.
    let gemini = d.forward(
        &captured("gemini", "BeforeTool.json"),
        &["--agent", "gemini"],
    );
    assert_eq!(
        stdout_json(&gemini),
        json!({"decision": "deny", "reason": "echo needs a look"})
    );
    // Codex cannot ask: its own flow (no opinion)...
    let codex = captured("codex", "PreToolUse.json");
    let open = d.forward(&codex, &["--agent", "codex"]);
    assert!(
        open.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&open.stdout)
    );
    // ... or a deny where the hook fails closed.
    let closed = d.forward(&codex, &["--agent", "codex", "--fail-closed"]);
    assert_eq!(
        stdout_json(&closed)["hookSpecificOutput"],
        json!({"hookEventName": "PreToolUse", "permissionDecision": "deny",
               "permissionDecisionReason": "echo needs a look"})
    );
    let (_, decision) = logged(&d, "BeforeTool");
    assert_eq!(decision["source"], "fallback");
    assert_eq!(decision["verdict"], "deny");
}

#[test]
fn a_clients_allow_lets_the_tool_run_and_ask_is_refused() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(ASK_ECHO.into()),
        ..DaemonOptions::default()
    });
    for (agent, file) in [("gemini", "BeforeTool.json"), ("codex", "PreToolUse.json")] {
        let mut client = RawClient::hello(&d.socket, "approver");
        client.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
        let socket = d.socket.clone();
        let input = captured(agent, file);
        let hook = std::thread::spawn(move || {
            daemon::run_forwarder(
                &socket,
                input.to_string().as_bytes(),
                &["--agent", agent, "--timeout", "20"],
            )
        });
        let pushed = client.wait_for("pending event", |f| {
            f["type"] == "event" && f["pending"] == true
        });
        let event_id = pushed["event"]["id"].clone();
        assert_eq!(pushed["event"]["harness"], agent);
        let listed = client.call(json!({"type": "pending"}));
        let item = &listed["result"][0];
        assert_eq!(item["agent"], agent, "{listed}");
        assert_eq!(item["verdicts"], json!(["allow", "deny", "none"]));
        let refused =
            client.call(json!({"type": "decide", "event_id": event_id, "verdict": "ask"}));
        assert_eq!(refused["type"], "error", "{refused}");
        assert_eq!(refused["code"], "invalid_request", "{refused}");
        let ok = client.call(json!({"type": "decide", "event_id": event_id, "verdict": "allow"}));
        assert_eq!(ok["type"], "ok", "{ok}");
        let out = hook.join().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        // Neither CLI has a bare allow: the tool runs under its own flow.
        assert!(
            out.stdout.is_empty(),
            "{agent}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    }
}

#[test]
fn without_a_daemon_each_agent_gets_its_own_fail_closed_form() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("none.sock");
    let forward = |input: &Value, args: &[&str]| {
        daemon::run_forwarder(&socket, input.to_string().as_bytes(), args)
    };
    let gemini = forward(
        &captured("gemini", "BeforeTool.json"),
        &["--agent", "gemini", "--fail-closed"],
    );
    let out = stdout_json(&gemini);
    assert_eq!(out["decision"], "deny", "{out}");
    assert!(
        out["reason"].as_str().unwrap().contains("no_socket"),
        "{out}"
    );
    assert!(out.get("hookSpecificOutput").is_none(), "{out}");
    assert!(stderr(&gemini).contains("event=BeforeTool reason=no_socket"));

    let codex = forward(
        &captured("codex", "PreToolUse.json"),
        &["--agent", "codex", "--fail-closed"],
    );
    let out = stdout_json(&codex);
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "deny");
    assert!(out.get("decision").is_none(), "{out}");

    // Gemini's AfterAgent is Stop-like: never blocked by a fallback.
    let stop = forward(
        &captured("gemini", "AfterAgent.json"),
        &["--agent", "gemini", "--fail-closed=all"],
    );
    assert!(stop.stdout.is_empty());

    // An event no dialect knows, no --agent: the deny every agent honors.
    let unknown = json!({"hook_event_name": "preToolUse", "toolName": "bash"});
    let out = forward(&unknown, &["--fail-closed"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        hookd::agent::universal_deny(
            "hookd could not decide (no_socket); blocked because the hook is fail-closed"
        )
        .stdout
    );
    // Fail-open stays silent.
    assert!(forward(&unknown, &[]).stdout.is_empty());
}

#[test]
fn geminis_after_agent_blocks_once_per_stop_chain() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(
            r#"
[[rule]]
id = "check-tests"
action = "deny"
event = "Stop"
reason = "run the tests first"
"#
            .into(),
        ),
        ..DaemonOptions::default()
    });
    let mut stop = captured("gemini", "AfterAgent.json");
    stop["stop_hook_active"] = json!(false);
    let first = d.forward(&stop, &["--agent", "gemini"]);
    assert_eq!(
        stdout_json(&first),
        json!({"decision": "deny", "reason": "run the tests first"})
    );
    stop["stop_hook_active"] = json!(true);
    let again = d.forward(&stop, &["--agent", "gemini"]);
    assert!(
        again.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    let (event, _) = logged(&d, "AfterAgent");
    assert_eq!(event["mapped_kind"], "Stop");
}

/// Gemini answers a blocked AfterAgent by prompting itself with the block's
/// reason, and that prompt fires BeforeAgent (UserPromptSubmit) before the
/// next AfterAgent: it continues the stop chain instead of ending it, so
/// `max_blocks = 2` ends the chain after two blocks (it looped forever).
#[test]
fn geminis_continuation_prompt_does_not_end_the_stop_chain() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(
            r#"
[[rule]]
id = "check-tests"
action = "deny"
event = "Stop"
reason = "run the tests first"
max_blocks = 2
"#
            .into(),
        ),
        ..DaemonOptions::default()
    });
    let mut prompt = captured("gemini", "BeforeAgent.json");
    let mut stop = captured("gemini", "AfterAgent.json");
    assert!(d.forward(&prompt, &["--agent", "gemini"]).stdout.is_empty());
    stop["stop_hook_active"] = json!(false);
    let mut answers = Vec::new();
    for _ in 0..4 {
        let out = d.forward(&stop, &["--agent", "gemini"]);
        let blocked = !out.stdout.is_empty();
        answers.push(blocked);
        if !blocked {
            break;
        }
        assert_eq!(
            stdout_json(&out),
            json!({"decision": "deny", "reason": "run the tests first"})
        );
        // What Gemini does next: the reason is its next prompt.
        prompt["prompt"] = json!("run the tests first");
        let out = d.forward(&prompt, &["--agent", "gemini"]);
        assert!(out.stdout.is_empty(), "{}", stderr(&out));
        stop["stop_hook_active"] = json!(true);
    }
    assert_eq!(
        answers,
        [true, true, false],
        "blocked, blocked, let through"
    );

    // A prompt of the user's own ends the chain as before.
    stop["stop_hook_active"] = json!(false);
    assert!(!d.forward(&stop, &["--agent", "gemini"]).stdout.is_empty());
    prompt["prompt"] = json!("now something else");
    d.forward(&prompt, &["--agent", "gemini"]);
    stop["stop_hook_active"] = json!(true);
    assert!(
        !d.forward(&stop, &["--agent", "gemini"]).stdout.is_empty(),
        "a new prompt starts a new chain"
    );
}

#[test]
fn rules_check_names_a_bad_agent_and_explain_shows_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[[rule]]\nid = \"x\"\naction = \"deny\"\nagent = \"cursor\"\n",
    )
    .unwrap();
    let out = Command::new(daemon::hookd_bin())
        .args(["rules", "check"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("bad.toml:4:"), "{text}");
    assert!(
        text.contains(
            "unknown agent \"cursor\"; expected one of claude-code, codex, gemini, copilot, opencode, pi"
        ),
        "{text}"
    );

    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"codex-no-echo\"\nagent = \"codex\"\naction = \"deny\"\ntool = \"Bash(echo:*)\"\n",
    )
    .unwrap();
    let input = dir.path().join("input.json");
    std::fs::write(&input, captured("gemini", "BeforeTool.json").to_string()).unwrap();
    let explain = |agent: &str| {
        let out = Command::new(daemon::hookd_bin())
            .args(["rules", "explain", "--agent", agent, "--rules"])
            .arg(&rules)
            .arg(&input)
            .env("HOME", dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = explain("gemini");
    assert!(
        text.contains("agent: gemini (BeforeTool judged as PreToolUse)"),
        "{text}"
    );
    assert!(
        text.contains("agent codex: the hook is gemini's, not codex's"),
        "{text}"
    );
}

/// A person's grant on a Gemini shell call is a `Bash(…)` rule, as for
/// Claude Code: suggested in the rules' vocabulary (never the whole
/// `run_shell_command` tool), and it answers later matching calls of the
/// session without asking, but not other commands.
#[test]
fn a_grant_on_a_gemini_shell_call_is_a_bash_rule_and_covers_only_its_commands() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(ASK_ECHO.into()),
        config: Some("[decisions]\ntimeout = 20\n".into()),
        ..DaemonOptions::default()
    });
    let mut client = RawClient::hello(&d.socket, "approver");
    client.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    let shell = |command: &str| {
        let mut input = captured("gemini", "BeforeTool.json");
        input["tool_input"]["command"] = json!(command);
        input
    };
    let forward = |input: Value| {
        let socket = d.socket.clone();
        std::thread::spawn(move || {
            daemon::run_forwarder(
                &socket,
                input.to_string().as_bytes(),
                &["--agent", "gemini", "--timeout", "20"],
            )
        })
    };

    let first = forward(shell("echo hello > out.txt"));
    let pushed = client.wait_for("pending event", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let rules: Vec<&str> = pushed["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["rule"].as_str())
        .collect();
    assert!(
        rules.contains(&"Bash(echo hello:*)"),
        "suggestions in the rules' vocabulary: {pushed}"
    );
    assert!(
        !rules.iter().any(|r| r.contains("run_shell_command")),
        "a grant must not cover every shell command: {pushed}"
    );
    let ok = client.call(json!({"type": "decide", "event_id": pushed["short_id"],
        "verdict": "allow", "remember": "session", "rule": "Bash(echo hello:*)"}));
    assert_eq!(ok["type"], "ok", "{ok}");
    assert_eq!(first.join().unwrap().status.code(), Some(0));

    // The same command again: answered by the grant, never pending.
    let again = forward(shell("echo hello again")).join().unwrap();
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    // The log is written behind the answer: wait for this call's lines.
    let what = "the second call in the log";
    let decision = daemon::poll_reporting(what, Duration::from_secs(10), || {
        let lines = d.log_lines();
        let event = lines.iter().find(|l| {
            l["type"] == "event" && l["input"]["tool_input"]["command"] == "echo hello again"
        });
        let decision = event.and_then(|event| {
            lines
                .iter()
                .find(|l| l["type"] == "decision" && l["event_id"] == event["id"])
        });
        decision.cloned().ok_or_else(|| format!("{lines:#?}"))
    });
    assert!(
        decision["source"].as_str().unwrap().starts_with("grant:"),
        "{decision}"
    );
    assert_eq!(decision["grant_rule"], "Bash(echo hello:*)");

    // Another echo is asked again.
    let other = forward(shell("echo bye"));
    let pushed = client.wait_for("pending event", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    assert_eq!(
        pushed["event"]["input"]["tool_input"]["command"],
        "echo bye"
    );
    client.call(json!({"type": "decide", "event_id": pushed["short_id"], "verdict": "deny"}));
    assert_eq!(other.join().unwrap().status.code(), Some(0));
}
