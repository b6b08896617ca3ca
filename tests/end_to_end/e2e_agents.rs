//! The real Codex CLI 0.169.0 and Gemini CLI 0.61.0, headless and offline
//! against this project's mocks of their APIs, with hooks of the test's own
//! registered in each agent's format (hookd is not involved yet): the
//! ground truth the dialects are built on.
//!
//! - every event each CLI fires reaches the hook, shaped as the captures in
//!   `tests/fixtures/agents/` (and the dialect reads it);
//! - the deny the dialect renders blocks a shell command and its reason
//!   reaches the model; so does the universal deny, on both;
//! - Gemini: the dialect's rendering of an ask blocks and never hangs;
//! - the dialects' rewritten input runs instead of the model's;
//! - Codex's PermissionRequest (under `--approve-for-me`) is decided by the
//!   dialect's deny, else by Codex's reviewer model (answered by the mock);
//!   Gemini without `-m` asks its router model (answered by the mock);
//! - Codex's output schemas in `tests/fixtures/agents/` are the binary's;
//! - session timings without hooks and with a recording hook on every event.
//!
//! Needs the pinned CLIs: `npm ci --prefix tests/agents` (`scripts/test`
//! does it).

use crate::support::agents;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use agents::{one_shell_call, AgentOutput, AgentRun, Cli, ModelMock};
use hookd::agent::claude::HookEventKind;
use hookd::agent::{universal_deny, Agent};
use hookd::decision::{Answer, Verdict};
use serde_json::{json, Value};

const COMMAND: &str = "echo hello > out.txt";
const HOOK_TIMEOUT: Duration = Duration::from_secs(30);

fn agent(cli: Cli) -> Agent {
    match cli {
        Cli::Codex => Agent::Codex,
        Cli::Gemini => Agent::Gemini,
        Cli::Copilot => Agent::Copilot,
    }
}

/// A hook that saves each input it is given as its own file in `dir`, named
/// by the time it ran, so [`recorded`] reads them back in order even when
/// the CLI runs hooks concurrently.
fn recorder(run: &AgentRun) -> (PathBuf, PathBuf) {
    let dir = run.scratch_dir().join("hook-inputs");
    fs::create_dir_all(&dir).unwrap();
    let script = run.write_executable(
        "record.sh",
        &format!(
            "#!/bin/sh\ncat > \"{}/$(date +%s%N).$$.json\"\n",
            dir.display()
        ),
    );
    (script, dir)
}

fn recorded(dir: &Path) -> Vec<Value> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| {
            serde_json::from_slice(&fs::read(f).unwrap())
                .unwrap_or_else(|e| panic!("{}: not JSON: {e}", f.display()))
        })
        .collect()
}

/// A hook that reads its input, notes that it ran, and prints `output`.
fn printing_hook(run: &AgentRun, output: &str) -> (PathBuf, PathBuf) {
    let output_file = run.scratch_dir().join("hook-output");
    fs::write(&output_file, output).unwrap();
    let marker = run.scratch_dir().join("hook-ran");
    let script = run.write_executable(
        "print.sh",
        &format!(
            "#!/bin/sh\ncat > \"{}\"\ncat \"{}\"\n",
            marker.display(),
            output_file.display()
        ),
    );
    (script, marker)
}

/// The captured input an event of `cli` is compared with.
fn captured(cli: Cli, name: &str, tool: Option<&str>) -> Option<Value> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(cli.name())
        .join("captured");
    let suffix = match tool {
        Some("apply_patch") => ".apply_patch",
        Some("write_file") => ".write_file",
        _ => "",
    };
    // The capture of the same tool if there is one, else of the event.
    [format!("{name}{suffix}.json"), format!("{name}.json")]
        .iter()
        .find_map(|file| fs::read(dir.join(file)).ok())
        .map(|b| serde_json::from_slice(&b).unwrap())
}

fn keys(v: &Value) -> BTreeSet<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// Every recorded input is one the dialect knows, with the fields of the
/// captured input of the same event and tool (and the same `tool_input`
/// fields where it has them).
fn assert_shapes(cli: Cli, inputs: &[Value]) {
    let agent = agent(cli);
    for input in inputs {
        let name = input["hook_event_name"].as_str().expect("hook_event_name");
        assert!(agent.knows_event(name), "{cli:?}: unknown event {name}");
        let tool = input["tool_name"].as_str();
        let Some(sample) = captured(cli, name, tool) else {
            panic!("{cli:?}: no captured {name} to compare with");
        };
        assert_eq!(
            keys(input),
            keys(&sample),
            "{cli:?} {name}: fields differ from the capture\n{input:#}"
        );
        if tool.is_some() && tool == sample["tool_name"].as_str() {
            assert_eq!(
                keys(&input["tool_input"]),
                keys(&sample["tool_input"]),
                "{cli:?} {name}: tool_input fields differ from the capture"
            );
        }
        // The dialect reads every one of them.
        assert!(!agent.rule_inputs(input).is_empty());
    }
}

fn names(inputs: &[Value]) -> Vec<String> {
    inputs
        .iter()
        .map(|i| i["hook_event_name"].as_str().unwrap().to_string())
        .collect()
}

fn position(names: &[String], name: &str) -> usize {
    names
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("{name} did not fire; fired: {names:?}"))
}

#[test]
fn codex_fires_every_event_of_a_session_to_the_hook_as_captured() {
    let cli = Cli::Codex;
    let patch =
        "*** Begin Patch\n*** Add File: patched.txt\n+patched by apply_patch\n*** End Patch\n";
    let script = json!({"turns": [
        {"content": [
            {"type": "text", "text": "First the shell."},
            {"type": "tool_call", "name": "exec_command", "input": {"cmd": COMMAND}}
        ]},
        {"content": [{"type": "custom_tool_call", "name": "apply_patch", "input": patch}]},
        {"content": [{"type": "text", "text": "done"}]}
    ]});
    let mock = ModelMock::start(cli, &script);
    let run = AgentRun::new(cli, &mock);
    let (hook, dir) = recorder(&run);
    run.register_hooks(&cli.events(), &hook, HOOK_TIMEOUT);
    let out = run.run("do the thing");
    out.assert_success();
    mock.assert_no_egress();
    assert_eq!(
        fs::read_to_string(run.project_dir().join("out.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        fs::read_to_string(run.project_dir().join("patched.txt")).unwrap(),
        "patched by apply_patch\n"
    );

    let inputs = recorded(&dir);
    let names = names(&inputs);
    eprintln!("codex hook events: {}", names.join(" -> "));
    assert_eq!(names.first().map(String::as_str), Some("SessionStart"));
    assert_eq!(names.last().map(String::as_str), Some("SessionEnd"));
    assert!(position(&names, "UserPromptSubmit") < position(&names, "PreToolUse"));
    assert!(position(&names, "PostToolUse") < position(&names, "Stop"));
    let tools: Vec<(&str, &str)> = inputs
        .iter()
        .filter_map(|i| Some((i["hook_event_name"].as_str()?, i["tool_name"].as_str()?)))
        .collect();
    assert_eq!(
        tools,
        [
            ("PreToolUse", "Bash"),
            ("PostToolUse", "Bash"),
            ("PreToolUse", "apply_patch"),
            ("PostToolUse", "apply_patch"),
        ]
    );
    assert_shapes(cli, &inputs);

    // The patch is judged as a Write of the file it adds, by absolute path.
    let pre_patch = inputs
        .iter()
        .find(|i| i["tool_name"] == "apply_patch")
        .unwrap();
    assert_eq!(pre_patch["tool_input"]["command"], patch);
    let judged = Agent::Codex.rule_inputs(pre_patch);
    let cwd = pre_patch["cwd"].as_str().unwrap();
    assert_eq!(judged.len(), 1);
    assert_eq!(judged[0]["tool_name"], "Write");
    assert_eq!(
        judged[0]["tool_input"]["file_path"],
        format!("{cwd}/patched.txt")
    );
}

#[test]
fn gemini_fires_every_event_of_a_session_to_the_hook_as_captured() {
    if agents::node_absent("gemini_fires_every_event_of_a_session_to_the_hook_as_captured") {
        return;
    }
    let cli = Cli::Gemini;
    let script = json!({"turns": [
        {"content": [
            {"type": "text", "text": "First the shell."},
            {"type": "tool_call", "name": "run_shell_command", "input": {"command": COMMAND}}
        ]},
        {"content": [{"type": "tool_call", "name": "write_file",
                      "input": {"file_path": "written.txt", "content": "written by write_file\n"}}]},
        {"content": [{"type": "text", "text": "done"}]}
    ]});
    let mock = ModelMock::start(cli, &script);
    let run = AgentRun::new(cli, &mock);
    let (hook, dir) = recorder(&run);
    // Every event, the model events too (hookd does not register those).
    run.register_hooks(&cli.events(), &hook, HOOK_TIMEOUT);
    let out = run.run("do the thing");
    out.assert_success();
    mock.assert_no_egress();
    assert_eq!(
        fs::read_to_string(run.project_dir().join("out.txt")).unwrap(),
        "hello\n"
    );
    assert_eq!(
        fs::read_to_string(run.project_dir().join("written.txt")).unwrap(),
        "written by write_file\n"
    );

    let inputs = recorded(&dir);
    let names = names(&inputs);
    eprintln!("gemini hook events: {}", names.join(" -> "));
    assert_eq!(names.first().map(String::as_str), Some("SessionStart"));
    assert_eq!(names.last().map(String::as_str), Some("SessionEnd"));
    for name in [
        "BeforeAgent",
        "PreCompress",
        "BeforeModel",
        "BeforeToolSelection",
        "AfterModel",
        "BeforeTool",
        "AfterTool",
        "AfterAgent",
    ] {
        position(&names, name);
    }
    assert!(position(&names, "BeforeAgent") < position(&names, "BeforeTool"));
    assert!(position(&names, "AfterTool") < position(&names, "AfterAgent"));
    let tools: Vec<(&str, &str)> = inputs
        .iter()
        .filter_map(|i| Some((i["hook_event_name"].as_str()?, i["tool_name"].as_str()?)))
        .collect();
    assert_eq!(
        tools,
        [
            ("BeforeTool", "run_shell_command"),
            ("AfterTool", "run_shell_command"),
            ("BeforeTool", "write_file"),
            ("AfterTool", "write_file"),
        ]
    );
    assert_shapes(cli, &inputs);
    let stop = inputs
        .iter()
        .find(|i| i["hook_event_name"] == "AfterAgent")
        .unwrap();
    assert_eq!(stop["stop_hook_active"], false);

    // The relative path the model wrote is judged as an absolute one.
    let write = inputs
        .iter()
        .find(|i| i["hook_event_name"] == "BeforeTool" && i["tool_name"] == "write_file")
        .unwrap();
    assert_eq!(write["tool_input"]["file_path"], "written.txt");
    let judged = Agent::Gemini.rule_inputs(write);
    let cwd = write["cwd"].as_str().unwrap();
    assert_eq!(judged[0]["hook_event_name"], "PreToolUse");
    assert_eq!(judged[0]["tool_name"], "Write");
    assert_eq!(
        judged[0]["tool_input"]["file_path"],
        format!("{cwd}/written.txt")
    );
}

/// Runs one shell call with a PreToolUse-equivalent hook printing `output`;
/// returns the run's output and what the model was sent for the call.
fn shell_call_with_hook(
    cli: Cli,
    output: &str,
    limit: Duration,
) -> (AgentOutput, String, AgentRun) {
    let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
    let run = AgentRun::new(cli, &mock).timeout(limit);
    let (hook, marker) = printing_hook(&run, output);
    let event = match cli {
        Cli::Codex | Cli::Copilot => "PreToolUse",
        Cli::Gemini => "BeforeTool",
    };
    run.register_hooks(&[event], &hook, HOOK_TIMEOUT);
    let out = run.run("write hello to out.txt");
    mock.assert_no_egress();
    let seen: Value = serde_json::from_slice(
        &fs::read(&marker)
            .unwrap_or_else(|e| panic!("the hook did not run ({e})\n{}", out.describe())),
    )
    .unwrap();
    assert_eq!(seen["hook_event_name"], event);
    let sent = mock.tool_output("call_mock_0_").text;
    (out, sent, run)
}

fn assert_blocked(cli: Cli, output: &str, reason: &str) -> AgentOutput {
    let (out, sent, run) = shell_call_with_hook(cli, output, Duration::from_secs(120));
    assert!(
        !run.project_dir().join("out.txt").exists(),
        "{cli:?}: the denied command ran\n{}",
        out.describe()
    );
    let expected = match cli {
        Cli::Codex => format!("Command blocked by PreToolUse hook: {reason}. Command: {COMMAND}"),
        Cli::Gemini => format!("Tool execution blocked: {reason}"),
        Cli::Copilot => format!("Denied by preToolUse hook: {reason}"),
    };
    assert!(
        sent.contains(&expected),
        "{cli:?}: the model was not told {expected:?}; it got {sent:?}"
    );
    out.assert_success();
    out
}

#[test]
fn codex_honors_the_deny_its_dialect_renders() {
    let reason = "hookd e2e: codex deny";
    let out = hookd::agent::codex::render(
        HookEventKind::PreToolUse,
        &Answer::new(Verdict::Deny, Some(reason.into())),
    );
    assert_eq!(out.exit_code, 0);
    assert_blocked(Cli::Codex, &out.stdout, reason);
}

#[test]
fn gemini_honors_the_deny_its_dialect_renders() {
    if agents::node_absent("gemini_honors_the_deny_its_dialect_renders") {
        return;
    }
    let reason = "hookd e2e: gemini deny";
    let out = hookd::agent::gemini::render(
        HookEventKind::PreToolUse,
        &Answer::new(Verdict::Deny, Some(reason.into())),
    );
    assert_eq!(out.exit_code, 0);
    assert_blocked(Cli::Gemini, &out.stdout, reason);
}

#[test]
fn copilot_honors_the_deny_its_dialect_renders() {
    let reason = "hookd e2e: copilot deny";
    let out = hookd::agent::copilot::render(
        HookEventKind::PreToolUse,
        &Answer::new(Verdict::Deny, Some(reason.into())),
    );
    assert_eq!(out.exit_code, 0);
    assert_blocked(Cli::Copilot, &out.stdout, reason);
}

#[test]
fn the_universal_deny_blocks_on_codex_gemini_and_copilot() {
    if agents::node_absent("the_universal_deny_blocks_on_codex_gemini_and_copilot") {
        return;
    }
    let reason = "hookd e2e: universal deny";
    let out = universal_deny(reason);
    for cli in [Cli::Codex, Cli::Gemini, Cli::Copilot] {
        assert_blocked(cli, &out.stdout, reason);
    }
}

#[test]
fn gemini_never_hangs_on_an_ask_its_dialect_renders() {
    if agents::node_absent("gemini_never_hangs_on_an_ask_its_dialect_renders") {
        return;
    }
    // `{"decision":"ask"}` would make `gemini -p` wait forever; the
    // dialect's ask is a deny. A hang fails the run's 60 s limit (killed by
    // pid) instead of the suite's.
    let reason = "hookd e2e: nobody can answer";
    let out = hookd::agent::gemini::render(
        HookEventKind::PreToolUse,
        &Answer::new(Verdict::Ask, Some(reason.into())),
    );
    let (out, sent, run) = shell_call_with_hook(Cli::Gemini, &out.stdout, Duration::from_secs(60));
    out.assert_success();
    assert!(!run.project_dir().join("out.txt").exists());
    assert!(sent.contains(reason), "{sent}");
}

#[test]
fn codex_and_gemini_run_the_input_their_dialect_rewrites() {
    if agents::node_absent("codex_and_gemini_run_the_input_their_dialect_rewrites") {
        return;
    }
    for cli in [Cli::Codex, Cli::Gemini] {
        let answer = Answer {
            updated_input: Some(json!({"command": "echo rewritten > rewritten.txt"})),
            ..Answer::no_opinion()
        };
        let out = agent(cli).render(HookEventKind::PreToolUse, &answer);
        let (out, _, run) = shell_call_with_hook(cli, &out.stdout, Duration::from_secs(120));
        out.assert_success();
        assert!(
            !run.project_dir().join("out.txt").exists(),
            "{cli:?}: the original command ran\n{}",
            out.describe()
        );
        assert_eq!(
            fs::read_to_string(run.project_dir().join("rewritten.txt")).unwrap_or_default(),
            "rewritten\n",
            "{cli:?}: the rewritten command did not run\n{}",
            out.describe()
        );
    }
}

/// A Codex script whose shell call asks for escalation, so that under
/// `--approve-for-me` it needs an approval: PermissionRequest fires.
fn escalated_shell_call() -> Value {
    json!({"turns": [
        {"content": [{"type": "tool_call", "name": "exec_command", "input": {
            "cmd": COMMAND,
            "sandbox_permissions": "require_escalated",
            "justification": "needs to write out.txt"
        }}]},
        {"content": [{"type": "text", "text": "done"}]}
    ]})
}

fn guardian_requests(mock: &ModelMock) -> usize {
    mock.requests()
        .iter()
        .filter(|r| r["reply"]["kind"] == "guardian")
        .count()
}

#[test]
fn codex_permission_request_is_decided_by_its_dialect_else_by_the_reviewer() {
    let cli = Cli::Codex;
    // No decision from the hook: Codex asks its reviewer model (the mock
    // allows), and the command runs.
    let mock = ModelMock::start(cli, &escalated_shell_call());
    let run = AgentRun::new(cli, &mock).approve_for_me();
    let (hook, dir) = recorder(&run);
    run.register_hooks(&["PermissionRequest"], &hook, HOOK_TIMEOUT);
    let out = run.run("write hello to out.txt");
    out.assert_success();
    mock.assert_no_egress();
    let inputs = recorded(&dir);
    assert_eq!(names(&inputs), ["PermissionRequest"]);
    assert_shapes(cli, &inputs);
    assert_eq!(
        inputs[0]["tool_input"]["description"],
        "needs to write out.txt"
    );
    assert_eq!(guardian_requests(&mock), 1, "{}", mock.describe_requests());
    assert!(
        run.project_dir().join("out.txt").exists(),
        "{}",
        out.describe()
    );

    // The dialect's deny: no reviewer, no command, the reason to the model.
    let reason = "hookd e2e: no escalation";
    let deny = hookd::agent::codex::render(
        HookEventKind::PermissionRequest,
        &Answer::new(Verdict::Deny, Some(reason.into())),
    );
    let mock = ModelMock::start(cli, &escalated_shell_call());
    let run = AgentRun::new(cli, &mock).approve_for_me();
    let (hook, marker) = printing_hook(&run, &deny.stdout);
    run.register_hooks(&["PermissionRequest"], &hook, HOOK_TIMEOUT);
    let out = run.run("write hello to out.txt");
    out.assert_success();
    mock.assert_no_egress();
    assert!(marker.exists(), "the hook did not run\n{}", out.describe());
    assert_eq!(guardian_requests(&mock), 0, "{}", mock.describe_requests());
    assert!(
        !run.project_dir().join("out.txt").exists(),
        "{}",
        out.describe()
    );
    let sent = mock.tool_output("call_mock_0_").text;
    assert!(sent.contains(reason), "the model got {sent:?}");
}

#[test]
fn gemini_without_a_model_flag_is_routed_by_the_mock() {
    if agents::node_absent("gemini_without_a_model_flag_is_routed_by_the_mock") {
        return;
    }
    let cli = Cli::Gemini;
    let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
    let run = AgentRun::new(cli, &mock).without_model();
    let out = run.run("write hello to out.txt");
    out.assert_success();
    mock.assert_no_egress();
    let routed = mock
        .requests()
        .iter()
        .filter(|r| r["reply"]["kind"] == "router")
        .count();
    assert!(routed >= 1, "{}", mock.describe_requests());
    assert!(
        run.project_dir().join("out.txt").exists(),
        "{}",
        out.describe()
    );
}

/// The schemas embedded in the Codex binary: each starts with
/// `{\n  "$schema"`, keyed by its `title`.
fn embedded_schemas(binary: &[u8]) -> serde_json::Map<String, Value> {
    const START: &[u8] = b"{\n  \"$schema\"";
    let mut schemas = serde_json::Map::new();
    let mut from = 0;
    while let Some(at) = find(&binary[from..], START).map(|i| i + from) {
        let end = json_end(&binary[at..])
            .map(|e| e + at)
            .expect("unterminated schema");
        let schema: Value = serde_json::from_slice(&binary[at..end]).expect("schema is JSON");
        let title = schema["title"]
            .as_str()
            .expect("schema has a title")
            .to_string();
        schemas.insert(title, schema);
        from = end;
    }
    schemas
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = haystack[from..].iter().position(|b| *b == needle[0]) {
        let at = from + i;
        if haystack[at..].starts_with(needle) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// The end (exclusive) of the JSON object starting at `bytes[0]`.
fn json_end(bytes: &[u8]) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, b) in bytes.iter().enumerate() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') => in_string = false,
            (true, false, _) => {}
            (false, _, b'"') => in_string = true,
            (false, _, b'{') => depth += 1,
            (false, _, b'}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

#[test]
fn codex_schemas_are_the_ones_the_binary_embeds() {
    let binary = fs::read(Cli::Codex.program()).unwrap();
    let embedded = embedded_schemas(&binary);
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents/codex/hook-schemas.json");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let mut text = serde_json::to_string_pretty(&embedded).unwrap();
        text.push('\n');
        fs::write(&fixture, text).unwrap();
    }
    let committed: serde_json::Map<String, Value> =
        serde_json::from_slice(&fs::read(&fixture).unwrap()).unwrap();
    assert_eq!(
        embedded.keys().collect::<Vec<_>>(),
        committed.keys().collect::<Vec<_>>()
    );
    assert!(
        embedded == committed,
        "{} differs from the schemas in the codex binary (UPDATE_GOLDEN=1 rewrites it)",
        fixture.display()
    );
    // Every event the dialect knows has an input schema, and no other.
    let events: BTreeSet<String> = hookd::agent::codex::EVENTS
        .iter()
        .map(|e| e.name.to_string())
        .collect();
    let with_input: BTreeSet<String> = committed
        .values()
        .filter(|s| s["title"].as_str().unwrap().ends_with(".command.input"))
        .map(|s| {
            s["properties"]["hook_event_name"]["const"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(with_input, events);
}

#[test]
fn session_timings_without_hooks_and_with_a_recording_hook_on_every_event() {
    if agents::node_absent("session_timings_without_hooks_and_with_a_recording_hook_on_every_event")
    {
        return;
    }
    for cli in [Cli::Codex, Cli::Gemini, Cli::Copilot] {
        let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
        let bare = AgentRun::new(cli, &mock);
        let plain = bare.run("write hello to out.txt");
        plain.assert_success();

        let mock = ModelMock::start(cli, &one_shell_call(cli, COMMAND));
        let hooked = AgentRun::new(cli, &mock);
        let (hook, dir) = recorder(&hooked);
        // The events hookd registers by default.
        let events: Vec<&str> = match cli {
            Cli::Codex => cli.events(),
            Cli::Gemini => hookd::agent::gemini::EVENTS
                .iter()
                .filter(|e| e.registered_by_default)
                .map(|e| e.name)
                .collect(),
            Cli::Copilot => hookd::agent::copilot::EVENTS
                .iter()
                .filter(|e| e.registered_by_default)
                .map(|e| e.name)
                .collect(),
        };
        hooked.register_hooks(&events, &hook, HOOK_TIMEOUT);
        let out = hooked.run("write hello to out.txt");
        out.assert_success();
        mock.assert_no_egress();
        let hook_runs = recorded(&dir).len();
        assert!(hook_runs >= 6, "{cli:?}: {hook_runs} hook runs");
        eprintln!(
            "timing: {} one shell call: no hooks {:.2} s; recording hook on {} events {:.2} s ({} hook runs)",
            cli.name(),
            plain.elapsed.as_secs_f64(),
            events.len(),
            out.elapsed.as_secs_f64(),
            hook_runs
        );
    }
}
