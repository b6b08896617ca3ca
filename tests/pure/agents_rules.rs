//! One rule set, every agent: the rules written in Claude Code's syntax judge
//! Codex's and Gemini's tool calls through their dialects' mapping, exactly
//! as they judge Claude Code's. Real captured inputs where there are some
//! (`tests/fixtures/agents/`), with the tool input changed to what a rule
//! is about.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use hookd::agent::Agent;
use hookd::rules::evaluate;
use hookd::rules::{Action, Evaluation, Layers, Query, RuleSet};
use serde_json::{json, Value};

const RULES: &str = r#"
[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "no rm"

[[rule]]
id = "no-secret-edits"
action = "deny"
tool = "Edit(secrets/**)"
reason = "secrets are read-only"

[[rule]]
id = "no-env-reads"
action = "deny"
tool = "Read(./.env*)"
reason = "no .env"

[[rule]]
id = "no-evil-fetch"
action = "deny"
tool = "WebFetch(domain:evil.example)"
reason = "not that host"

[[rule]]
id = "no-touch"
action = "deny"
tool = "mcp__e2e__touch"
reason = "no MCP touch"

[[rule]]
id = "src-edits-ok"
action = "allow"
tool = "Edit(src/**)"

[[rule]]
id = "ask-agents"
action = "ask"
tool = "Agent"
"#;

fn layers() -> Layers {
    Layers::new(Arc::new(
        RuleSet::parse(RULES, Path::new("rules.toml")).unwrap(),
    ))
}

fn sample(agent: Agent, name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(agent.as_str())
        .join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `raw` with its `tool_input` replaced.
fn with_input(mut raw: Value, input: Value) -> Value {
    raw["tool_input"] = input;
    raw
}

fn judge(agent: Agent, raw: &Value) -> Evaluation {
    let name = raw["hook_event_name"].as_str().unwrap();
    let kind = agent.event_kind(name);
    let inputs: Vec<Cow<'_, Value>> = agent.rule_inputs(raw);
    let cwd = raw["cwd"].as_str().map(Path::new);
    let query = Query {
        event: kind.as_str(),
        project_dir: cwd,
        ..Query::new(raw)
    };
    evaluate(&layers(), &inputs, &query)
}

fn verdict(agent: Agent, raw: &Value) -> (Option<Action>, Vec<String>) {
    let e = judge(agent, raw);
    (e.action, e.rule_ids)
}

fn deny(id: &str) -> (Option<Action>, Vec<String>) {
    (Some(Action::Deny), vec![id.to_string()])
}

#[test]
fn bash_rules_judge_codex_and_gemini_shell_commands() {
    let codex = sample(Agent::Codex, "captured/PreToolUse.json");
    let gemini = sample(Agent::Gemini, "captured/BeforeTool.json");
    for (agent, raw) in [(Agent::Codex, codex), (Agent::Gemini, gemini)] {
        let rm = with_input(raw.clone(), json!({"command": "ls && rm -rf victim"}));
        assert_eq!(verdict(agent, &rm), deny("no-rm"), "{agent}");
        assert_eq!(verdict(agent, &raw), (None, vec![]), "{agent}");
    }
}

#[test]
fn path_rules_judge_every_file_of_a_codex_patch() {
    let raw = sample(Agent::Codex, "captured/PreToolUse.apply_patch.json");
    // The captured patch adds out.txt and updates hello.txt: no rule.
    assert_eq!(verdict(Agent::Codex, &raw), (None, vec![]));
    let patch = |body: &str| with_input(raw.clone(), json!({"command": body}));
    let one_secret = patch(
        "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** Add File: secrets/key\n+k\n*** End Patch\n",
    );
    assert_eq!(verdict(Agent::Codex, &one_secret), deny("no-secret-edits"));
    let all_src = patch(
        "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** Add File: src/new.rs\n+n\n*** End Patch\n",
    );
    assert_eq!(
        verdict(Agent::Codex, &all_src),
        (Some(Action::Allow), vec!["src-edits-ok".to_string()])
    );
    let half_src = patch(
        "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-a\n+b\n*** Update File: README.md\n@@\n-a\n+b\n*** End Patch\n",
    );
    assert_eq!(verdict(Agent::Codex, &half_src), (None, vec![]));
    // Moving a file out of secrets edits it.
    let moved = patch("*** Update File: secrets/key\n*** Move to: src/key\n@@\n-a\n+b\n");
    assert_eq!(verdict(Agent::Codex, &moved), deny("no-secret-edits"));
}

#[test]
fn path_rules_judge_gemini_file_tools_with_relative_paths() {
    let replace = sample(Agent::Gemini, "captured/BeforeTool.replace.json");
    let secret = with_input(
        replace.clone(),
        json!({"file_path": "secrets/key", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(verdict(Agent::Gemini, &secret), deny("no-secret-edits"));
    let escape = with_input(
        replace.clone(),
        json!({"file_path": "src/../secrets/key", "old_string": "a", "new_string": "b"}),
    );
    assert_eq!(verdict(Agent::Gemini, &escape), deny("no-secret-edits"));
    let write = sample(Agent::Gemini, "captured/BeforeTool.write_file.json");
    let secret = with_input(write, json!({"file_path": "secrets/new", "content": "x"}));
    assert_eq!(verdict(Agent::Gemini, &secret), deny("no-secret-edits"));

    let read = sample(Agent::Gemini, "captured/BeforeTool.read_file.json");
    assert_eq!(verdict(Agent::Gemini, &read), (None, vec![]));
    let env = with_input(read, json!({"file_path": ".env.local"}));
    assert_eq!(verdict(Agent::Gemini, &env), deny("no-env-reads"));
    let many = sample(Agent::Gemini, "written/BeforeTool.read_many_files.json");
    assert_eq!(verdict(Agent::Gemini, &many), deny("no-env-reads"));
}

#[test]
fn domain_rules_judge_every_url_of_a_gemini_fetch() {
    let raw = sample(Agent::Gemini, "captured/BeforeTool.web_fetch.json");
    assert_eq!(verdict(Agent::Gemini, &raw), (None, vec![]));
    let prompt = |p: &str| with_input(raw.clone(), json!({"prompt": p}));
    let evil = prompt("Compare https://example.com/ with https://evil.example/x");
    assert_eq!(verdict(Agent::Gemini, &evil), deny("no-evil-fetch"));
    // No readable URL: a deny on a domain cannot be ruled out.
    let unreadable = prompt("fetch the usual page");
    assert_eq!(verdict(Agent::Gemini, &unreadable), deny("no-evil-fetch"));
}

#[test]
fn mcp_and_agent_rules_match_every_agent() {
    for (agent, name) in [
        (Agent::Codex, "captured/PreToolUse.mcp.json"),
        (Agent::Gemini, "captured/BeforeTool.mcp.json"),
    ] {
        assert_eq!(
            verdict(agent, &sample(agent, name)),
            deny("no-touch"),
            "{agent}"
        );
    }
    let spawn = sample(Agent::Codex, "captured/PreToolUse.spawn_agent.json");
    assert_eq!(
        verdict(Agent::Codex, &spawn),
        (Some(Action::Ask), vec!["ask-agents".to_string()])
    );
    let invoke = sample(Agent::Gemini, "written/BeforeTool.invoke_agent.json");
    assert_eq!(
        verdict(Agent::Gemini, &invoke),
        (Some(Action::Ask), vec!["ask-agents".to_string()])
    );
}

#[test]
fn rules_for_tool_calls_judge_gemini_before_tool_and_not_after_tool() {
    // A rule without `event` is about PreToolUse and PermissionRequest:
    // Gemini's BeforeTool is judged as PreToolUse, its AfterTool is not.
    let after = sample(Agent::Gemini, "captured/AfterTool.json");
    let rm = with_input(after, json!({"command": "rm -rf victim"}));
    assert_eq!(verdict(Agent::Gemini, &rm), (None, vec![]));
}
