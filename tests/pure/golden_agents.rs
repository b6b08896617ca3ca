//! Golden tests for the Codex and Gemini dialects, the only modules that know
//! those agents' hook JSON.
//!
//! - Every input in `tests/fixtures/agents/<agent>/{captured,written}/` (the
//!   real captures, and hand-written ones for what they miss) → its
//!   normalized view: hookd kind, decision point, both tool names, and the
//!   Claude-shaped inputs the rules judge (written as what they change in
//!   the raw input) = `tests/fixtures/golden/<agent>/view/<input>.json`.
//! - Every event of each agent × every verdict (with and without a reason,
//!   context, a rewritten input), the unanswered ask and the fallbacks →
//!   the exact output = `tests/fixtures/golden/<agent>/output/<Event>.out`.
//! - Every Codex output hookd can produce validates against the output
//!   schema Codex embeds (`tests/fixtures/agents/codex/hook-schemas.json`)
//!   and the rules Codex adds to it; every captured Codex input validates
//!   against its input schema.
//!
//! - The same holds for what a real `hookd serve` answers every Codex input
//!   through `hook-forwarder --agent codex`, under rules that deny, ask and
//!   add context on every event, fail-open and fail-closed.
//! - A `context` rule's text reaches, through a real `hookd serve`, every
//!   event each agent takes context for (SessionStart too), exactly as the
//!   golden `context` case renders it.
//!
//! `UPDATE_GOLDEN=1 cargo test --test pure golden_agents::` rewrites the expected
//! files; review the diff before committing it.

use crate::support::daemon;

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use hookd::agent::claude::output::HookOutput;
use hookd::agent::claude::{FailClosed, HookEventKind};
use hookd::agent::Agent;
use hookd::decision::{Answer, Verdict};
use serde_json::{json, Map, Value};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn update() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some()
}

/// Compares `actual` with the golden file `path` (or writes it under
/// `UPDATE_GOLDEN`), collecting mismatches.
fn check_golden(path: &Path, actual: &str, failures: &mut Vec<String>) {
    if update() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, actual).unwrap();
        return;
    }
    match fs::read_to_string(path) {
        Ok(expected) if expected == actual => {}
        Ok(expected) => failures.push(format!(
            "{}:\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        )),
        Err(_) => failures.push(format!(
            "{} is missing (UPDATE_GOLDEN=1 writes it)",
            path.display()
        )),
    }
}

/// Fails on golden files no case produced any more.
fn assert_no_stray(dir: &Path, expected: &BTreeSet<PathBuf>) {
    let stray: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !expected.contains(p))
        .collect();
    assert!(stray.is_empty(), "golden files with no case: {stray:?}");
}

fn report(failures: Vec<String>) {
    assert!(
        failures.is_empty(),
        "{} golden mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The inputs of one agent, `(set, stem, raw)`, in name order.
fn inputs(agent: Agent) -> Vec<(&'static str, String, Value)> {
    let mut out = Vec::new();
    for set in ["captured", "written"] {
        let dir = fixtures().join("agents").join(agent.as_str()).join(set);
        let mut paths: Vec<_> = fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        paths.sort();
        for path in paths {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            let raw = serde_json::from_slice(&fs::read(&path).unwrap())
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            out.push((set, stem, raw));
        }
    }
    out
}

/// What a rule input changes in the raw input: its fields that are new or
/// differ. Asserts that it keeps every other field as it is.
fn changes(raw: &Value, input: &Value) -> Value {
    let raw = raw.as_object().unwrap();
    let input = input.as_object().unwrap();
    for key in raw.keys() {
        assert!(input.contains_key(key), "a rule input lost `{key}`");
    }
    let changed: Map<String, Value> = input
        .iter()
        .filter(|(k, v)| raw.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Object(changed)
}

/// The normalized view of one input, as the golden file shows it.
fn view(agent: Agent, raw: &Value) -> Value {
    let name = raw["hook_event_name"].as_str().unwrap();
    let kind = agent.event_kind(name);
    let tool = agent
        .tool_names(raw)
        .map(|t| json!({"agent": t.agent, "claude": t.claude}));
    let inputs = agent.rule_inputs(raw);
    let rule_inputs = match inputs.as_slice() {
        [Cow::Borrowed(input)] => {
            assert_eq!(*input, raw);
            json!("the raw input, as it is")
        }
        _ => Value::Array(inputs.iter().map(|i| changes(raw, i)).collect()),
    };
    json!({
        "event": name,
        "kind": kind.as_str(),
        "decision_point": agent.is_decision_point(kind),
        "tool": tool,
        "rule_inputs": rule_inputs,
    })
}

#[test]
fn every_input_normalizes_exactly_as_golden() {
    let mut failures = Vec::new();
    for agent in [Agent::Codex, Agent::Gemini] {
        let dir = fixtures().join("golden").join(agent.as_str()).join("view");
        let mut expected = BTreeSet::new();
        let mut events_seen = BTreeSet::new();
        for (set, stem, raw) in inputs(agent) {
            let name = raw["hook_event_name"].as_str().unwrap().to_string();
            assert!(agent.knows_event(&name), "{agent} {stem}: unknown event");
            assert_eq!(stem.split('.').next(), Some(name.as_str()), "{stem}");
            let kind = agent.event_kind(&name);
            for input in agent.rule_inputs(&raw).iter() {
                // Rules see hookd's event names, and Claude Code's tools.
                let event = if kind == HookEventKind::Unknown {
                    name.as_str()
                } else {
                    kind.as_str()
                };
                assert_eq!(input["hook_event_name"], event, "{agent} {stem}");
                if let Some(tool) = input["tool_name"].as_str() {
                    assert!(
                        hookd::rules::KNOWN_TOOLS.contains(&tool) || tool.starts_with("mcp__"),
                        "{agent} {stem}: `{tool}` is not a Claude Code tool"
                    );
                }
            }
            events_seen.insert(name);
            let path = dir.join(format!("{stem}.json"));
            let actual = format!("{:#}\n", view(agent, &raw));
            check_golden(&path, &actual, &mut failures);
            expected.insert(path);
            let _ = set;
        }
        let all: BTreeSet<String> = match agent {
            Agent::Codex => hookd::agent::codex::EVENTS
                .iter()
                .map(|e| e.name.into())
                .collect(),
            _ => hookd::agent::gemini::EVENTS
                .iter()
                .map(|e| e.name.into())
                .collect(),
        };
        let missing: Vec<_> = all.difference(&events_seen).collect();
        assert!(missing.is_empty(), "{agent}: no input for {missing:?}");
        if !update() {
            assert_no_stray(&dir, &expected);
        }
    }
    report(failures);
}

/// Every case rendered for one event, `(name, output)`.
fn cases(agent: Agent, kind: HookEventKind) -> Vec<(String, HookOutput)> {
    let reason = |v: Verdict| Some(format!("golden {v} reason"));
    let mut out = Vec::new();
    for v in Verdict::ALL {
        out.push((v.as_str().to_string(), Answer::new(v, reason(v))));
    }
    out.push((
        "deny-without-reason".into(),
        Answer::new(Verdict::Deny, None),
    ));
    let context = |verdict: Verdict| Answer {
        additional_context: Some("golden context".into()),
        ..Answer::new(verdict, reason(verdict))
    };
    out.push(("context".into(), context(Verdict::NoOpinion)));
    out.push(("deny-context".into(), context(Verdict::Deny)));
    for v in [Verdict::Allow, Verdict::NoOpinion, Verdict::Ask] {
        let answer = Answer {
            updated_input: Some(json!({"command": "echo safe"})),
            ..Answer::new(v, None)
        };
        out.push((format!("{v}-updated-input"), answer));
    }
    let ask = Answer::new(Verdict::Ask, Some("golden ask reason".into()));
    out.push((
        "unanswered-ask".into(),
        agent.unanswered_ask(kind, FailClosed::Off, ask.clone()),
    ));
    out.push((
        "unanswered-ask-fail-closed".into(),
        agent.unanswered_ask(kind, FailClosed::Tools, ask),
    ));
    let mut rendered: Vec<(String, HookOutput)> = out
        .into_iter()
        .map(|(case, answer)| (case, agent.render(kind, &answer)))
        .collect();
    for scope in [FailClosed::Off, FailClosed::Tools, FailClosed::All] {
        let name = event_name(agent, kind);
        rendered.push((
            format!("fallback-{scope}"),
            agent.fallback(&name, scope, "timeout"),
        ));
    }
    rendered
}

fn event_name(agent: Agent, kind: HookEventKind) -> String {
    agent.event_name(kind).unwrap().to_string()
}

/// The agent's events, `(name, kind)`.
fn events(agent: Agent) -> Vec<(&'static str, HookEventKind)> {
    match agent {
        Agent::Codex => hookd::agent::codex::EVENTS
            .iter()
            .map(|e| (e.name, e.kind))
            .collect(),
        _ => hookd::agent::gemini::EVENTS
            .iter()
            .map(|e| (e.name, e.kind))
            .collect(),
    }
}

#[test]
fn every_event_and_verdict_renders_exactly_as_golden() {
    let mut failures = Vec::new();
    for agent in [Agent::Codex, Agent::Gemini] {
        let dir = fixtures()
            .join("golden")
            .join(agent.as_str())
            .join("output");
        let mut expected = BTreeSet::new();
        for (name, kind) in events(agent) {
            let mut text = String::new();
            let cases = if kind == HookEventKind::Unknown {
                // Observe-only events with no hookd kind say nothing, whatever
                // the answer: one case shows it, the fallbacks the rest.
                let answer = Answer::new(Verdict::Deny, Some("r".into()));
                assert_eq!(agent.render(kind, &answer), HookOutput::default());
                vec![(
                    "fallback-all".to_string(),
                    agent.fallback(name, FailClosed::All, "timeout"),
                )]
            } else {
                cases(agent, kind)
            };
            for (case, out) in cases {
                assert!(
                    !out.stdout.contains("\"ask\""),
                    "{agent} {name} {case}: {}",
                    out.stdout
                );
                if !out.stdout.is_empty() {
                    let v: Value = serde_json::from_str(&out.stdout)
                        .unwrap_or_else(|e| panic!("{agent} {name} {case}: {e}"));
                    if let Some(echo) = v.pointer("/hookSpecificOutput/hookEventName") {
                        assert_eq!(echo, name, "{agent} {case}");
                    }
                }
                text.push_str(&format!(
                    "== {case}\nexit_code: {}\n--- stdout\n{}--- stderr\n{}",
                    out.exit_code, out.stdout, out.stderr
                ));
            }
            let path = dir.join(format!("{name}.out"));
            check_golden(&path, &text, &mut failures);
            expected.insert(path);
        }
        if !update() {
            assert_no_stray(&dir, &expected);
        }
    }
    report(failures);
}

#[test]
fn every_supported_verdict_changes_the_output_and_no_other_does() {
    for agent in [Agent::Codex, Agent::Gemini] {
        for (name, kind) in events(agent) {
            let supported = agent.supported_verdicts(kind);
            for v in Verdict::ALL {
                let out = agent.render(kind, &Answer::new(v, Some("r".into())));
                // Gemini's ask is the one exception: it renders as its deny.
                let honored = supported.contains(&v)
                    || (agent == Agent::Gemini
                        && v == Verdict::Ask
                        && supported.contains(&Verdict::Deny));
                assert_eq!(
                    out != HookOutput::default(),
                    honored && v != Verdict::NoOpinion,
                    "{agent} {name} {v}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Codex's schemas
// ---------------------------------------------------------------------------

fn codex_schemas() -> Map<String, Value> {
    let path = fixtures().join("agents/codex/hook-schemas.json");
    match serde_json::from_slice(&fs::read(&path).unwrap()).unwrap() {
        Value::Object(map) => map,
        _ => panic!("{}: not an object", path.display()),
    }
}

/// `PreToolUse` → `pre-tool-use`, the stem of Codex's schema titles.
fn kebab(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Checks `value` against `schema`, a draft-07 subset: exactly the keywords
/// Codex's schemas use. Any other keyword panics, so a schema this checker
/// does not understand can never pass by accident.
fn validate(schema: &Value, root: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let s = match schema {
        Value::Object(s) => s,
        // Draft-07 boolean schemas: anything, or nothing.
        Value::Bool(true) => return,
        Value::Bool(false) => return errors.push(format!("{at}: no value is allowed")),
        _ => panic!("{at}: a schema is an object or a boolean, not {schema}"),
    };
    for (key, rule) in s {
        match key.as_str() {
            "$schema" | "title" | "description" | "default" | "definitions" => {}
            "$ref" => {
                let name = rule
                    .as_str()
                    .and_then(|r| r.strip_prefix("#/definitions/"))
                    .unwrap_or_else(|| panic!("{at}: unsupported $ref {rule}"));
                validate(&root["definitions"][name], root, value, at, errors);
            }
            "allOf" => {
                for sub in rule.as_array().unwrap() {
                    validate(sub, root, value, at, errors);
                }
            }
            "type" => {
                let types: Vec<&str> = match rule {
                    Value::String(t) => vec![t.as_str()],
                    Value::Array(ts) => ts.iter().map(|t| t.as_str().unwrap()).collect(),
                    _ => panic!("{at}: bad type {rule}"),
                };
                let ok = types.iter().any(|t| match *t {
                    "object" => value.is_object(),
                    "string" => value.is_string(),
                    "boolean" => value.is_boolean(),
                    "null" => value.is_null(),
                    "array" => value.is_array(),
                    "integer" => value.is_i64() || value.is_u64(),
                    "number" => value.is_number(),
                    other => panic!("{at}: unsupported type {other}"),
                });
                if !ok {
                    errors.push(format!("{at}: {value} is not of type {rule}"));
                }
            }
            "enum" => {
                if !rule.as_array().unwrap().contains(value) {
                    errors.push(format!("{at}: {value} is not one of {rule}"));
                }
            }
            "const" => {
                if rule != value {
                    errors.push(format!("{at}: {value} is not {rule}"));
                }
            }
            "required" => {
                if let Value::Object(v) = value {
                    for field in rule.as_array().unwrap() {
                        if !v.contains_key(field.as_str().unwrap()) {
                            errors.push(format!("{at}: `{field}` is required"));
                        }
                    }
                }
            }
            "properties" => {
                if let Value::Object(v) = value {
                    for (field, sub) in rule.as_object().unwrap() {
                        if let Some(fv) = v.get(field) {
                            // A `default: null` field may be null.
                            if fv.is_null() && sub.get("default") == Some(&Value::Null) {
                                continue;
                            }
                            validate(sub, root, fv, &format!("{at}.{field}"), errors);
                        }
                    }
                }
            }
            "additionalProperties" => {
                if let Value::Object(v) = value {
                    assert_eq!(
                        rule,
                        &json!(false),
                        "{at}: unsupported additionalProperties"
                    );
                    let known = s.get("properties").and_then(Value::as_object);
                    for field in v.keys() {
                        if !known.is_some_and(|k| k.contains_key(field)) {
                            errors.push(format!("{at}: unknown field `{field}`"));
                        }
                    }
                }
            }
            other => panic!("{at}: schema keyword `{other}` is not supported by this checker"),
        }
    }
}

fn schema_errors(schema: &Value, value: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    validate(schema, schema, value, "$", &mut errors);
    errors
}

/// The rules Codex checks beyond its schemas, from the messages in its
/// binary ("PreToolUse hook returned unsupported …", "… without a non-empty
/// …"): any of them makes Codex drop the output and run the tool.
fn codex_rule_errors(event: &str, out: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let s = |v: &Value| v.as_str().map(str::trim).unwrap_or_default().to_string();
    let specific = &out["hookSpecificOutput"];
    if out.get("decision").is_some() && s(&out["reason"]).is_empty() {
        errors.push("decision:block without a non-empty reason".into());
    }
    if out.get("reason").is_some() && out.get("decision").is_none() {
        errors.push("reason without decision".into());
    }
    if out["decision"] == "approve" {
        errors.push("unsupported decision:approve".into());
    }
    if matches!(event, "PreToolUse" | "PermissionRequest") {
        for field in ["continue", "stopReason", "suppressOutput"] {
            if out.get(field).is_some() {
                errors.push(format!("unsupported {field}"));
            }
        }
    }
    if event == "PreToolUse" {
        let decision = specific["permissionDecision"].as_str();
        match decision {
            Some("deny") if s(&specific["permissionDecisionReason"]).is_empty() => {
                errors.push("permissionDecision:deny without a non-empty reason".into())
            }
            Some("ask") => errors.push("unsupported permissionDecision:ask".into()),
            Some("allow") if specific.get("updatedInput").is_none() => {
                errors.push("unsupported permissionDecision:allow".into())
            }
            _ => {}
        }
        if specific.get("updatedInput").is_some() && decision != Some("allow") {
            errors.push("updatedInput without permissionDecision:allow".into());
        }
        if specific.get("permissionDecisionReason").is_some() && decision.is_none() {
            errors.push("permissionDecisionReason without permissionDecision".into());
        }
    }
    if event == "PermissionRequest" {
        let decision = &specific["decision"];
        for field in ["updatedInput", "updatedPermissions"] {
            if decision.get(field).is_some() {
                errors.push(format!("unsupported {field}"));
            }
        }
        if decision["interrupt"] == true {
            errors.push("unsupported interrupt:true".into());
        }
    }
    errors
}

#[test]
fn every_codex_output_validates_against_codex_schemas() {
    let schemas = codex_schemas();
    let mut checked = 0;
    for (name, kind) in events(Agent::Codex) {
        let title = format!("{}.command.output", kebab(name));
        let schema = schemas.get(&title);
        let mut outputs: Vec<(String, HookOutput)> = if kind == HookEventKind::Unknown {
            Vec::new()
        } else {
            cases(Agent::Codex, kind)
        };
        for v in Verdict::ALL {
            // Every verdict, with everything an answer can carry.
            let answer = Answer {
                updated_input: Some(json!({"command": "x"})),
                additional_context: Some("c".into()),
                ..Answer::new(v, Some("r".into()))
            };
            outputs.push((
                format!("{v}-everything"),
                Agent::Codex.render(kind, &answer),
            ));
        }
        for scope in [FailClosed::Tools, FailClosed::All] {
            outputs.push((
                format!("fallback-{scope}"),
                Agent::Codex.fallback(name, scope, "why"),
            ));
        }
        for (case, out) in outputs {
            assert_eq!(out.stderr, "", "{name} {case}");
            assert_eq!(out.exit_code, 0, "{name} {case}");
            if out.stdout.is_empty() {
                continue;
            }
            let schema = schema.unwrap_or_else(|| {
                panic!(
                    "{name} {case}: Codex has no output for {name}, hookd wrote {}",
                    out.stdout
                )
            });
            let value: Value = serde_json::from_str(&out.stdout).unwrap();
            let mut errors = schema_errors(schema, &value);
            errors.extend(codex_rule_errors(name, &value));
            assert!(
                errors.is_empty(),
                "{name} {case}: Codex would drop {}: {errors:?}",
                out.stdout
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} outputs checked");
}

#[test]
fn the_schema_checker_rejects_what_codex_drops() {
    let schemas = codex_schemas();
    let pre = &schemas["pre-tool-use.command.output"];
    let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny", "permissionDecisionReason": "R"}});
    assert_eq!(schema_errors(pre, &deny), Vec::<String>::new());
    // outputs.md: each of these let the tool run.
    let mut extra = deny.clone();
    extra["extraTop"] = json!(1);
    assert!(!schema_errors(pre, &extra).is_empty());
    let mut inner = deny.clone();
    inner["hookSpecificOutput"]["foo"] = json!(2);
    assert!(!schema_errors(pre, &inner).is_empty());
    assert!(!schema_errors(pre, &json!({"decision": "deny", "reason": "R"})).is_empty());
    let reasonless = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "deny"}});
    assert!(!codex_rule_errors("PreToolUse", &reasonless).is_empty());
    let ask = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
        "permissionDecision": "ask"}});
    assert!(!codex_rule_errors("PreToolUse", &ask).is_empty());
    // The universal deny is valid for Codex's PreToolUse.
    let universal: Value = serde_json::from_str(&hookd::agent::universal_deny("R").stdout).unwrap();
    assert_eq!(schema_errors(pre, &universal), Vec::<String>::new());
    assert_eq!(
        codex_rule_errors("PreToolUse", &universal),
        Vec::<String>::new()
    );
}

#[test]
fn every_codex_input_validates_against_its_schema() {
    let schemas = codex_schemas();
    for (set, stem, raw) in inputs(Agent::Codex) {
        let name = raw["hook_event_name"].as_str().unwrap();
        let title = format!("{}.command.input", kebab(name));
        let schema = schemas
            .get(&title)
            .unwrap_or_else(|| panic!("no schema {title}"));
        let errors = schema_errors(schema, &raw);
        assert!(errors.is_empty(), "{set}/{stem}: {errors:?}");
    }
}

/// Every answer the daemon gives a Codex hook, whatever the rules say, is
/// one Codex honors: rules that deny, ask and add context on every event,
/// fail-open and fail-closed, answered with no client (asks fall back).
#[test]
fn every_codex_output_the_daemon_gives_validates_against_codex_schemas() {
    let schemas = codex_schemas();
    let rules = r#"
[[rule]]
id = "context-everywhere"
action = "context"
event = "*"
reason = "hookd was here"

[[rule]]
id = "deny-echo"
action = "deny"
tool = ["Bash(echo:*)", "Edit"]
event = ["PreToolUse", "PermissionRequest", "PostToolUse"]
reason = "no echo"

[[rule]]
id = "ask-rest"
action = "ask"
event = "*"
reason = "a person should look"
"#;
    let d = daemon::Daemon::start_with(daemon::DaemonOptions {
        rules: Some(rules.into()),
        ..Default::default()
    });
    let mut checked = 0;
    for (set, stem, raw) in inputs(Agent::Codex) {
        let name = raw["hook_event_name"].as_str().unwrap().to_string();
        for args in [
            &["--agent", "codex"][..],
            &["--agent", "codex", "--fail-closed=all"],
        ] {
            let out = d.forward(&raw, args);
            assert_eq!(out.status.code(), Some(0), "{set}/{stem} {args:?}");
            assert!(
                out.stderr.is_empty(),
                "{set}/{stem}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if out.stdout.is_empty() {
                continue;
            }
            let title = format!("{}.command.output", kebab(&name));
            let schema = schemas.get(&title).unwrap_or_else(|| {
                panic!("{set}/{stem}: Codex has no output for {name}, hookd wrote something")
            });
            let value: Value = serde_json::from_slice(&out.stdout).unwrap();
            let mut errors = schema_errors(schema, &value);
            errors.extend(codex_rule_errors(&name, &value));
            assert!(
                errors.is_empty(),
                "{set}/{stem} {args:?}: Codex would drop {value}: {errors:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} outputs checked");
}

/// The stdout of case `case` in the golden output file of `agent`'s event
/// `name` (`== case` … `--- stdout` … `--- stderr`).
fn golden_stdout(agent: Agent, name: &str, case: &str) -> String {
    let path = fixtures()
        .join("golden")
        .join(agent.as_str())
        .join("output")
        .join(format!("{name}.out"));
    let text = fs::read_to_string(&path).unwrap();
    let section = text
        .split("== ")
        .find(|s| s.starts_with(&format!("{case}\n")))
        .unwrap_or_else(|| panic!("{}: no case {case}", path.display()));
    let stdout = section.split("--- stdout\n").nth(1).unwrap();
    stdout.split("--- stderr\n").next().unwrap().to_string()
}

/// A `context` rule's text reaches every event each agent (Codex, Gemini,
/// and Claude Code) takes context for, through a real `hookd serve` and
/// `hook-forwarder [--agent]`, exactly
/// as the golden `context` case renders it: the observe-only ones
/// (SessionStart, SubagentStart) included, which the daemon once answered
/// without judging, so their context never went out.
#[test]
fn context_rules_reach_every_event_that_takes_context_through_the_daemon() {
    let rules = r#"
[[rule]]
id = "golden"
action = "context"
event = "*"
reason = "golden context"
"#;
    let d = daemon::Daemon::start_with(daemon::DaemonOptions {
        rules: Some(rules.into()),
        ..Default::default()
    });
    let mut reached = BTreeSet::new();
    for agent in [Agent::Codex, Agent::Gemini] {
        for (set, stem, raw) in inputs(agent) {
            let name = raw["hook_event_name"].as_str().unwrap().to_string();
            let kind = agent.event_kind(&name);
            let out = d.forward(&raw, &["--agent", agent.as_str()]);
            let stdout = String::from_utf8_lossy(&out.stdout);
            if agent.accepts_context(kind) {
                assert_eq!(
                    stdout,
                    golden_stdout(agent, &name, "context"),
                    "{agent} {set}/{stem}"
                );
                reached.insert(format!("{agent} {name}"));
            } else {
                assert!(
                    !stdout.contains("golden context"),
                    "{agent} {set}/{stem}: {stdout}"
                );
            }
        }
    }
    // Claude Code's own events too (`tests/fixtures/events/`, golden
    // `tests/fixtures/golden/<Event>.context.out`).
    let events = fixtures().join("events");
    let mut paths: Vec<PathBuf> = fs::read_dir(&events)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let raw: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        let name = raw["hook_event_name"].as_str().unwrap().to_string();
        let kind = HookEventKind::from_name(&name);
        let out = d.forward(&raw, &[]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        if Agent::ClaudeCode.accepts_context(kind) {
            let golden = fixtures()
                .join("golden")
                .join(format!("{stem}.context.out"));
            let golden = fs::read_to_string(&golden).unwrap();
            let want = golden.split("--- stdout\n").nth(1).unwrap();
            assert_eq!(
                stdout,
                want.split("--- stderr\n").next().unwrap(),
                "claude-code {stem}"
            );
            reached.insert(format!("claude-code {name}"));
        } else {
            assert!(
                !stdout.contains("golden context"),
                "claude-code {stem}: {stdout}"
            );
        }
    }
    for must in [
        "codex SessionStart",
        "gemini SessionStart",
        "codex UserPromptSubmit",
        "gemini BeforeAgent",
        "claude-code SessionStart",
    ] {
        assert!(reached.contains(must), "{must} not covered: {reached:?}");
    }
}
