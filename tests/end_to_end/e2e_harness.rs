//! Proves the end-to-end harness (tests/support/claude.rs + the mock API)
//! against the real Claude Code CLI, with no hookd involved: plain command
//! hooks written as shell scripts.
//!
//! Needs the pinned CLI: `npm ci --prefix tests/e2e`.

use crate::support::claude;

use claude::{
    command_hook, hooks_settings, one_bash_call_script, ClaudeRun, MockApi, ALL_HOOK_EVENTS,
};
use serde_json::{json, Value};
use std::fs;

const COMMAND: &str = "echo hello > out.txt";

/// (a) Without hooks the scripted Bash call runs, and its result goes back to
/// the model in the next request.
#[test]
fn bash_tool_call_runs_without_hooks() {
    let mock = MockApi::start(&one_bash_call_script(COMMAND));
    let run = ClaudeRun::new(&mock);
    let out = run.run("write hello to out.txt");
    eprintln!("claude run took {:?}", out.elapsed);

    out.assert_success();
    let out_txt = run.project_dir().join("out.txt");
    let content = fs::read_to_string(&out_txt).unwrap_or_else(|e| {
        panic!(
            "expected the Bash tool to create {}: {e}\n{}\nrequests:\n{}",
            out_txt.display(),
            out.describe(),
            mock.describe_requests()
        )
    });
    assert_eq!(content, "hello\n", "unexpected content of out.txt");

    let tr = mock.expect_tool_result("toolu_mock_0_");
    assert!(
        !tr.is_error,
        "expected a successful tool_result, got {:?}\nrequests:\n{}",
        tr.raw,
        mock.describe_requests()
    );
    // The model saw the final text of the script.
    assert_eq!(out.result()["result"], "done", "{}", out.describe());
}

/// (b) A PreToolUse command hook that denies: the tool does not run and the
/// reason reaches the model as an error tool_result.
#[test]
fn pretooluse_deny_hook_blocks_bash() {
    let mock = MockApi::start(&one_bash_call_script(COMMAND));
    let run = ClaudeRun::new(&mock);
    let marker = run.scratch_dir().join("deny-hook-ran");
    let hook = run.write_executable(
        "deny.sh",
        r#"#!/bin/sh
# Read the event to EOF like a well-behaved hook, note that we ran, then deny.
cat > "$1"
printf '%s\n' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"blocked by e2e"}}'
"#,
    );
    run.write_settings(&hooks_settings(
        &["PreToolUse"],
        command_hook(
            "/bin/sh",
            &[hook.to_str().unwrap(), marker.to_str().unwrap()],
        ),
    ));

    let out = run.run("write hello to out.txt");
    eprintln!("claude run took {:?}", out.elapsed);

    // The hook saw the scripted Bash call.
    let seen: Value =
        serde_json::from_str(&fs::read_to_string(&marker).unwrap_or_else(|e| {
            panic!("the PreToolUse hook did not run ({e})\n{}", out.describe())
        }))
        .expect("hook stdin is JSON");
    assert_eq!(seen["hook_event_name"], "PreToolUse");
    assert_eq!(seen["tool_input"]["command"], COMMAND);

    assert!(
        !run.project_dir().join("out.txt").exists(),
        "out.txt exists: the denied Bash call ran anyway\n{}",
        out.describe()
    );
    mock.expect_refusal("blocked by e2e");
    // A denied tool call is not a failed run.
    out.assert_success();
}

/// (c) A recording hook on every event: which events fire for a one-Bash-call
/// run, and in which order. Prints the sequence; asserts only the orderings
/// that follow from the protocol.
#[test]
fn hook_events_fire_in_protocol_order() {
    let mock = MockApi::start(&one_bash_call_script(COMMAND));
    let run = ClaudeRun::new(&mock);
    let log = run.scratch_dir().join("events.jsonl");
    // Each hook's stdin is one JSON object plus "\n"; append it whole.
    let hook = run.write_executable("record.sh", "#!/bin/sh\ncat >> \"$1\"\n");
    run.write_settings(&hooks_settings(
        ALL_HOOK_EVENTS,
        command_hook("/bin/sh", &[hook.to_str().unwrap(), log.to_str().unwrap()]),
    ));

    let out = run.run("write hello to out.txt");
    out.assert_success();
    assert!(
        run.project_dir().join("out.txt").exists(),
        "Bash did not run\n{}",
        out.describe()
    );

    let events = claude::read_jsonl(&log);
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["hook_event_name"].as_str().expect("hook_event_name"))
        .collect();
    eprintln!(
        "claude run took {:?}; hook events: {}",
        out.elapsed,
        names.join(" -> ")
    );

    let pos = |name: &str| {
        names
            .iter()
            .position(|n| *n == name)
            .unwrap_or_else(|| panic!("{name} did not fire; fired: {names:?}"))
    };
    assert_eq!(names.first(), Some(&"SessionStart"), "fired: {names:?}");
    assert_eq!(names.last(), Some(&"SessionEnd"), "fired: {names:?}");
    assert!(
        pos("UserPromptSubmit") < pos("PreToolUse"),
        "fired: {names:?}"
    );
    assert!(pos("PreToolUse") < pos("PostToolUse"), "fired: {names:?}");
    assert!(pos("PostToolUse") < pos("Stop"), "fired: {names:?}");
    for once in [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PostToolUse",
        "Stop",
        "SessionEnd",
    ] {
        assert_eq!(
            names.iter().filter(|n| **n == once).count(),
            1,
            "{once} fired: {names:?}"
        );
    }

    // All events belong to one session, and the tool events carry the
    // scripted call's id.
    let sid = &events[0]["session_id"];
    assert!(
        events.iter().all(|e| &e["session_id"] == sid),
        "mixed session ids: {events:#?}"
    );
    let pre = &events[pos("PreToolUse")];
    assert_eq!(pre["tool_use_id"], json!("toolu_mock_0_1"), "{pre:#}");
    assert_eq!(pre["tool_input"]["command"], COMMAND, "{pre:#}");
}
