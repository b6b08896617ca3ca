//! Golden tests for the one module that knows Claude Code's output.
//!
//! Every hook input in `tests/fixtures/events/` (the real captures of
//! Claude Code 2.1.330's hooks plus a hand-written input for every other
//! event) is parsed into a typed event and rendered under each verdict its
//! event supports, with context where the event accepts it, and as a
//! fail-closed fallback (scope `all`). Each result must equal
//! `tests/fixtures/golden/<input>.<case>.out` byte for byte.
//!
//! The same cases, as what an Agent SDK callback returns (the adapter relays
//! it as it is), must equal `tests/fixtures/golden-sdk/<input>.json`: per
//! case, the hook callback's `HookJSONOutput` and, for a PermissionRequest
//! input, `canUseTool`'s `PermissionResult` for the same answer.
//!
//! `UPDATE_GOLDEN=1 cargo test --test pure golden::` rewrites the expected files;
//! review the diff before committing it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use hookd::agent::claude::output::{
    accepts_context, fallback, render, supported_verdicts, HookOutput,
};
use hookd::agent::claude::sdk::{sdk_result, SdkCallback};
use hookd::agent::claude::{FailClosed, HookEventKind, HookInput};
use hookd::decision::{Answer, Verdict};
use serde_json::{json, Value};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every (case name, output) for one input.
fn cases(kind: HookEventKind) -> Vec<(String, HookOutput)> {
    let mut out = Vec::new();
    for &verdict in supported_verdicts(kind) {
        let answer = Answer::new(verdict, Some(format!("golden {verdict} reason")));
        out.push((verdict.as_str().to_string(), render(kind, &answer)));
    }
    if accepts_context(kind) {
        let answer = Answer {
            additional_context: Some("golden context".into()),
            ..Answer::no_opinion()
        };
        out.push(("context".into(), render(kind, &answer)));
    }
    if matches!(
        kind,
        HookEventKind::PreToolUse | HookEventKind::PermissionRequest | HookEventKind::Elicitation
    ) {
        let answer = Answer {
            updated_input: Some(json!({"command": "echo safe", "description": "rewritten"})),
            ..Answer::new(Verdict::Allow, None)
        };
        out.push(("allow-updated-input".into(), render(kind, &answer)));
    }
    // The widest scope: every guarded event blocks (`--fail-closed=all`).
    out.push((
        "fallback-closed".into(),
        fallback(kind, FailClosed::All, "timeout"),
    ));
    out
}

fn format_output(out: &HookOutput) -> String {
    format!(
        "exit_code: {}\n--- stdout\n{}--- stderr\n{}",
        out.exit_code, out.stdout, out.stderr
    )
}

/// The event inputs under `tests/fixtures/events/`, sorted.
fn event_inputs() -> Vec<PathBuf> {
    let mut inputs: Vec<_> = fs::read_dir(fixtures().join("events"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 34,
        "expected an input per event, found {}",
        inputs.len()
    );
    inputs
}

#[test]
fn every_event_and_verdict_reaches_the_sdk_exactly_as_golden() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let golden_dir = fixtures().join("golden-sdk");
    fs::create_dir_all(&golden_dir).unwrap();
    let mut expected_files = BTreeSet::new();
    let mut failures = Vec::new();
    let mut can_use_tool_cases = 0;

    for path in event_inputs() {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let raw: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let kind = HookInput::parse(&raw).kind;
        // The adapter registers no WorktreeCreate callback (it would replace
        // Claude Code's own worktree creation): an SDK run never asks.
        if kind == HookEventKind::WorktreeCreate {
            continue;
        }
        let tool_input = raw.get("tool_input").cloned().unwrap_or(Value::Null);
        let mut golden = serde_json::Map::new();
        for (case, out) in cases(kind) {
            let hook = sdk_result(SdkCallback::Hook, &out, &Value::Null);
            assert!(hook.is_object(), "{stem}.{case}: {hook}");
            // A hook callback that blocks says so in JSON: exit codes do
            // not reach the SDK.
            if out.exit_code == 2 {
                assert_eq!(hook["decision"], "block", "{stem}.{case}");
            }
            let mut entry = serde_json::Map::new();
            entry.insert("hook".into(), hook);
            if kind == HookEventKind::PermissionRequest {
                let permission = sdk_result(SdkCallback::CanUseTool, &out, &tool_input);
                assert!(
                    matches!(permission["behavior"].as_str(), Some("allow" | "deny")),
                    "{stem}.{case}: {permission}"
                );
                entry.insert("canUseTool".into(), permission);
                can_use_tool_cases += 1;
            }
            golden.insert(case, entry.into());
        }
        let file = golden_dir.join(format!("{stem}.json"));
        expected_files.insert(file.file_name().unwrap().to_owned());
        let actual = format!(
            "{}\n",
            serde_json::to_string_pretty(&Value::Object(golden)).unwrap()
        );
        if update {
            fs::write(&file, &actual).unwrap();
            continue;
        }
        match fs::read_to_string(&file) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{}:\n--- expected\n{expected}\n--- actual\n{actual}",
                file.display()
            )),
            Err(_) => failures.push(format!(
                "{} is missing (UPDATE_GOLDEN=1 writes it)",
                file.display()
            )),
        }
    }

    // allow, deny, no opinion, allow with an updated input, fail-closed.
    assert!(
        can_use_tool_cases >= 5,
        "only {can_use_tool_cases} canUseTool cases"
    );
    let stray: Vec<_> = fs::read_dir(&golden_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|name| !expected_files.contains(name))
        .collect();
    assert!(
        stray.is_empty(),
        "golden-sdk files with no input: {stray:?}"
    );
    assert!(
        failures.is_empty(),
        "{} golden mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_event_and_verdict_renders_exactly_as_golden() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let golden_dir = fixtures().join("golden");
    fs::create_dir_all(&golden_dir).unwrap();
    let mut expected_files = BTreeSet::new();
    let mut kinds_seen = BTreeSet::new();
    let mut failures = Vec::new();

    for path in event_inputs() {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let raw: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let input = HookInput::parse(&raw);
        if stem.starts_with("unknown.") {
            assert_eq!(input.kind, HookEventKind::Unknown, "{stem}");
        } else {
            assert_ne!(
                input.kind,
                HookEventKind::Unknown,
                "{stem}: event name not recognised"
            );
            assert_eq!(input.problem, None, "{stem}: typed parsing fell short");
            assert_eq!(
                input.kind.as_str(),
                stem.split('.').next().unwrap(),
                "{stem}"
            );
        }
        kinds_seen.insert(input.kind);

        for (case, out) in cases(input.kind) {
            // Whatever we print as JSON must be one JSON object that echoes the event.
            if !out.stdout.is_empty() {
                let v: Value = serde_json::from_str(&out.stdout)
                    .unwrap_or_else(|e| panic!("{stem}.{case}: {e}"));
                if let Some(name) = v.pointer("/hookSpecificOutput/hookEventName") {
                    assert_eq!(name, input.kind.as_str(), "{stem}.{case}");
                }
            }
            let file = golden_dir.join(format!("{stem}.{case}.out"));
            expected_files.insert(file.file_name().unwrap().to_owned());
            let actual = format_output(&out);
            if update {
                fs::write(&file, &actual).unwrap();
                continue;
            }
            match fs::read_to_string(&file) {
                Ok(expected) if expected == actual => {}
                Ok(expected) => failures.push(format!(
                    "{}:\n--- expected\n{expected}\n--- actual\n{actual}",
                    file.display()
                )),
                Err(_) => failures.push(format!(
                    "{} is missing (UPDATE_GOLDEN=1 writes it)",
                    file.display()
                )),
            }
        }
    }

    let missing: Vec<_> = HookEventKind::ALL
        .iter()
        .filter(|k| !kinds_seen.contains(k))
        .collect();
    assert!(missing.is_empty(), "no input fixture for {missing:?}");

    // Subdirectories hold the other agents' golden files (golden_agents.rs).
    let stray: Vec<_> = fs::read_dir(&golden_dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.file_name())
        .filter(|name| !expected_files.contains(name))
        .collect();
    assert!(stray.is_empty(), "golden files with no case: {stray:?}");
    assert!(
        failures.is_empty(),
        "{} golden mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
