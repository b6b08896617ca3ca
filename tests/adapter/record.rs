//! `hookd run --record FILE` and `--replay FILE|DIR`: a run of the real
//! Agent SDK against the mock, recorded with its model exchanges, then the
//! real SDK run again with its model side served from the recording by
//! hookd (a second daemon whose mock must see no request), under today's
//! rules.

use super::*;

/// The session's two commands: one allowed by every rules file here, one
/// that `ALLOW_BOTH` allows and `DENY_RM_NOW` denies.
fn two_calls_script() -> Value {
    json!({
        "turns": [
            {"content": [
                {"type": "text", "text": "First a greeting."},
                {"type": "tool_use", "name": "Bash",
                 "input": {"command": "echo hello", "description": "greet"}}
            ], "stop_reason": "tool_use"},
            {"content": [
                {"type": "text", "text": "Now the cleanup."},
                {"type": "tool_use", "name": "Bash",
                 "input": {"command": "rm -f scratch.txt", "description": "clean"}}
            ], "stop_reason": "tool_use"},
            {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}
        ],
        "default_text": "done"
    })
}

const ALLOW_BOTH: &str = r#"
[[rule]]
id = "echo-ok"
action = "allow"
tool = "Bash(echo:*)"
reason = "echo is harmless"

[[rule]]
id = "rm-ok"
action = "allow"
tool = "Bash(rm:*)"
reason = "cleanup is allowed here"
"#;

const DENY_RM_NOW: &str = r#"
[[rule]]
id = "echo-ok"
action = "allow"
tool = "Bash(echo:*)"
reason = "echo is harmless"

[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "rm is no longer allowed"
"#;

/// `hookd run ARGS` against `sdk`'s daemon, the client's config and
/// scratch directories in the sandbox.
fn hookd_run(sdk: &Sdk, args: &[&str]) -> std::process::Output {
    Command::new(daemon::hookd_bin())
        .arg("run")
        .arg("--socket")
        .arg(&sdk.daemon.socket)
        .args(args)
        .env("XDG_CONFIG_HOME", sdk.sandbox.path().join("home/.config"))
        .env("TMPDIR", sdk.sandbox.path().join("tmp"))
        .output()
        .unwrap()
}

fn text(out: &std::process::Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Records the two-call session under `ALLOW_BOTH` into `file`.
fn record(file: &Path) {
    let sdk = Sdk::start(&two_calls_script(), Some(ALLOW_BOTH), None);
    std::fs::write(sdk.project().join("scratch.txt"), "x").unwrap();
    let out = hookd_run(
        &sdk,
        &[
            "--cwd",
            sdk.project().to_str().unwrap(),
            "--record",
            file.to_str().unwrap(),
            "please greet then clean up",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out),
        sdk.daemon.stderr()
    );
    assert!(
        !sdk.project().join("scratch.txt").exists(),
        "the allowed rm ran in the recorded run"
    );
}

fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A daemon under `rules` whose own mock has nothing to say: a replay's
/// model side must come from the recording alone.
fn replayer(rules: &str) -> Sdk {
    Sdk::start(
        &json!({"turns": [], "default_text": "the mock was asked"}),
        Some(rules),
        None,
    )
}

fn assert_mock_unused(sdk: &Sdk) {
    assert!(
        sdk.mock.message_requests().is_empty(),
        "the replay asked the live model API:\n{}",
        sdk.mock.describe_requests()
    );
}

#[test]
fn a_recorded_run_has_its_events_decisions_and_model_exchanges() {
    if claude::node_absent("a_recorded_run_has_its_events_decisions_and_model_exchanges") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    record(&file);
    let lines = lines(&file);
    let header = &lines[0];
    assert_eq!(header["type"], "header", "{header}");
    assert_eq!(header["format"], "hookd-run-recording");
    assert_eq!(header["version"], 1);
    assert_eq!(header["prompt"], "please greet then clean up");
    assert!(header["hookd_version"].is_string(), "{header}");
    assert!(
        header["policy_revision"]
            .as_str()
            .is_some_and(|r| r.starts_with("sha256:")),
        "{header}"
    );
    let of = |ty: &str| lines.iter().filter(|l| l["type"] == ty).collect::<Vec<_>>();
    // Offsets never go back.
    let offsets: Vec<u64> = lines[1..]
        .iter()
        .map(|l| l["offset_ms"].as_u64().unwrap())
        .collect();
    assert!(offsets.windows(2).all(|w| w[0] <= w[1]), "{offsets:?}");
    let calls: Vec<&str> = of("tool_call")
        .iter()
        .map(|l| l["input"]["command"].as_str().unwrap())
        .collect();
    assert_eq!(calls, ["echo hello", "rm -f scratch.txt"]);
    assert_eq!(of("tool_result").len(), 2);
    assert!(of("text").iter().any(|l| l["text"] == "Now the cleanup."));
    let rm = of("decision")
        .into_iter()
        .find(|d| d["kind"] == "PreToolUse" && d["summary"] == "rm -f scratch.txt")
        .expect("the rm's PreToolUse decision");
    assert_eq!(rm["verdict"], "allow");
    assert_eq!(rm["rule_ids"], json!(["rm-ok"]));
    assert_eq!(rm["revision"], header["policy_revision"]);
    assert!(of("hook").iter().any(|h| h["event_id"] == rm["event_id"]));
    // The model side: three streamed turns of the Messages API at least.
    let exchanges = of("exchange");
    let turns: Vec<_> = exchanges
        .iter()
        .filter(|e| {
            e["request"]["path"]
                .as_str()
                .unwrap()
                .starts_with("/v1/messages")
                && e["request"]["body"]["tools"]
                    .as_array()
                    .is_some_and(|t| !t.is_empty())
        })
        .collect();
    assert!(turns.len() >= 3, "{exchanges:?}");
    // The tools offered are kept by name, not their definitions.
    assert!(
        turns.iter().all(|e| e["request"]["body"]["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("Bash"))),
        "{turns:?}"
    );
    assert!(
        turns.iter().all(|e| e["response"]["status"] == 200
            && e["response"]["body"]
                .as_str()
                .unwrap()
                .contains("event: message_start")),
        "{turns:?}"
    );
    let done = of("done");
    assert_eq!(done.len(), 1);
    assert_eq!(done[0]["ok"], true);
    // The recorded key is not in the file.
    assert!(!std::fs::read_to_string(&file)
        .unwrap()
        .contains("x-api-key"));
}

#[test]
fn a_replay_under_a_changed_rule_reports_the_flipped_decision_and_exits_1() {
    if claude::node_absent("a_replay_under_a_changed_rule_reports_the_flipped_decision_and_exits_1")
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    record(&file);

    // The same rules: nothing changed, twice, byte for byte.
    let same = replayer(ALLOW_BOTH);
    let first = hookd_run(&same, &["--replay", file.to_str().unwrap(), "--json"]);
    assert_eq!(
        first.status.code(),
        Some(0),
        "{}\n{}",
        text(&first),
        same.daemon.stderr()
    );
    let second = hookd_run(&same, &["--replay", file.to_str().unwrap(), "--json"]);
    assert_eq!(second.status.code(), Some(0), "{}", text(&second));
    assert_eq!(first.stdout, second.stdout, "two replays differ");
    let report: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(report["changes"], json!([]), "{report}");
    assert!(
        report["decisions"].as_array().unwrap().len() >= 2,
        "{report}"
    );
    assert_mock_unused(&same);

    // rm denied now: the change, the rule that decides now, exit 1.
    let changed = replayer(DENY_RM_NOW);
    std::fs::write(changed.project().join("scratch.txt"), "x").unwrap();
    let out = hookd_run(
        &changed,
        &[
            "--replay",
            file.to_str().unwrap(),
            "--cwd",
            changed.project().to_str().unwrap(),
        ],
    );
    let shown = text(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{shown}\n{}",
        changed.daemon.stderr()
    );
    assert!(
        shown.contains("PreToolUse Bash `rm -f scratch.txt`: allow (rule rm-ok) then, deny (rule no-rm) now: rm is no longer allowed"),
        "{shown}"
    );
    assert!(
        !shown.contains("`echo hello`"),
        "echo did not change: {shown}"
    );
    assert!(
        changed.project().join("scratch.txt").exists(),
        "the denied rm ran in the replay"
    );
    let json_out = hookd_run(&changed, &["--replay", file.to_str().unwrap(), "--json"]);
    assert_eq!(json_out.status.code(), Some(1), "{}", text(&json_out));
    let report: Value = serde_json::from_slice(&json_out.stdout).unwrap();
    let change = &report["changes"][0];
    assert_eq!(change["then"]["verdict"], "allow", "{report}");
    assert_eq!(change["now"]["verdict"], "deny");
    assert_eq!(change["now"]["rule_ids"], json!(["no-rm"]));
    assert_mock_unused(&changed);
}

#[test]
fn a_replay_refuses_a_model_request_the_recording_does_not_hold() {
    if claude::node_absent("a_replay_refuses_a_model_request_the_recording_does_not_hold") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("run.jsonl");
    record(&file);
    // Cut the last turn of the agent's: the replay's third request has no answer.
    let mut kept = lines(&file);
    let last_turn = kept
        .iter()
        .rposition(|l| {
            l["type"] == "exchange"
                && l["request"]["body"]["tools"]
                    .as_array()
                    .is_some_and(|t| !t.is_empty())
        })
        .unwrap();
    kept.remove(last_turn);
    let cut = dir.path().join("cut.jsonl");
    let text_lines: Vec<String> = kept.iter().map(Value::to_string).collect();
    std::fs::write(&cut, text_lines.join("\n") + "\n").unwrap();
    let sdk = replayer(ALLOW_BOTH);
    let out = hookd_run(&sdk, &["--replay", cut.to_str().unwrap()]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(2), "{shown}");
    assert!(
        shown.contains("the recording holds no further POST /v1/messages"),
        "{shown}"
    );
    assert_mock_unused(&sdk);

    // Not a recording at all: a clear error.
    let bogus = dir.path().join("bogus.jsonl");
    std::fs::write(&bogus, "{\"type\":\"event\"}\n").unwrap();
    let out = hookd_run(&sdk, &["--replay", bogus.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("not a hookd run recording"),
        "{}",
        text(&out)
    );
}

/// The project's own golden recordings (`tests/fixtures/runs/`), a policy
/// regression suite: replayed as a directory under the rules they were
/// recorded with, nothing changes.
#[test]
fn the_golden_recordings_replay_unchanged() {
    if claude::node_absent("the_golden_recordings_replay_unchanged") {
        return;
    }
    let fixtures = golden_dir();
    let rules = std::fs::read_to_string(fixtures.join("rules.toml")).unwrap();
    let sdk = replayer(&rules);
    let out = hookd_run(&sdk, &["--replay", fixtures.to_str().unwrap()]);
    let shown = text(&out);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{shown}\n{}",
        sdk.daemon.stderr()
    );
    let recordings = std::fs::read_dir(&fixtures)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "jsonl")
        })
        .count();
    assert!(recordings >= 2, "{recordings} golden recordings");
    assert_eq!(shown.matches("none changed").count(), recordings, "{shown}");
    assert_mock_unused(&sdk);
}

/// The rules the golden recordings were made under (`rules.toml` there).
fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs")
}

/// Makes the golden recordings again (after a change of the format or of
/// the pinned SDK): `cargo test --test adapter regenerate_golden -- --ignored`.
#[test]
#[ignore = "writes tests/fixtures/runs/; run by hand"]
fn regenerate_golden_recordings() {
    let dir = golden_dir();
    let rules = std::fs::read_to_string(dir.join("rules.toml")).unwrap();
    let cases = [
        (
            "greet-and-list",
            "echo hello",
            "ls",
            "please greet, then list the files",
        ),
        (
            "cleanup-denied",
            "echo cleaning",
            "rm -rf build",
            "please clean the build",
        ),
    ];
    for (name, first, second, prompt) in cases {
        let script = json!({
            "turns": [
                {"content": [{"type": "text", "text": "Step one."},
                    {"type": "tool_use", "name": "Bash", "input": {"command": first, "description": "one"}}],
                 "stop_reason": "tool_use"},
                {"content": [{"type": "text", "text": "Step two."},
                    {"type": "tool_use", "name": "Bash", "input": {"command": second, "description": "two"}}],
                 "stop_reason": "tool_use"},
                {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}
            ],
            "default_text": "done"
        });
        let sdk = Sdk::start(&script, Some(&rules), None);
        let file = dir.join(format!("{name}.jsonl"));
        let out = hookd_run(
            &sdk,
            &[
                "--cwd",
                sdk.project().to_str().unwrap(),
                "--record",
                file.to_str().unwrap(),
                prompt,
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    }
}

/// The same for a Pi run: the relay stands in for the provider's
/// `base_url`, and a rules change flips the shell call's decision.
#[test]
fn a_pi_run_is_recorded_and_replayed_under_changed_rules() {
    if claude::node_absent("a_pi_run_is_recorded_and_replayed_under_changed_rules") {
        return;
    }
    let script = json!({
        "turns": [
            {"content": [{"type": "text", "text": "Greeting."},
                {"type": "tool_call", "name": "bash", "input": {"command": "echo hello"}}]},
            {"content": [{"type": "text", "text": "Cleaning."},
                {"type": "tool_call", "name": "bash", "input": {"command": "rm -f scratch.txt"}}]},
            {"content": [{"type": "text", "text": "done"}]}
        ],
        "default_text": "done"
    });
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pi.jsonl");
    let recorder = super::pi::pi_daemon(&script, Some(ALLOW_BOTH), "");
    let out = hookd_run(
        &recorder,
        &[
            "--runtime",
            "pi",
            "--model",
            "mock/claude-mock",
            "--cwd",
            recorder.project().to_str().unwrap(),
            "--record",
            file.to_str().unwrap(),
            "greet, then clean",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out),
        recorder.daemon.stderr()
    );
    let recorded = std::fs::read_to_string(&file).unwrap();
    assert!(recorded.contains(r#""runtime":"pi""#), "{recorded}");
    assert!(
        recorded.contains(r#""type":"exchange""#),
        "no model exchange recorded"
    );

    let same = super::pi::pi_daemon(&json!({"turns": []}), Some(ALLOW_BOTH), "");
    let out = hookd_run(&same, &["--replay", file.to_str().unwrap(), "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}\n{}",
        text(&out),
        same.daemon.stderr()
    );
    assert_mock_unused(&same);

    let changed = super::pi::pi_daemon(&json!({"turns": []}), Some(DENY_RM_NOW), "");
    let out = hookd_run(&changed, &["--replay", file.to_str().unwrap()]);
    let shown = text(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{shown}\n{}",
        changed.daemon.stderr()
    );
    assert!(
        shown.contains("allow (rule rm-ok) then, deny (rule no-rm) now"),
        "{shown}"
    );
    assert_mock_unused(&changed);
}

/// A recording is redacted with `[redact]` of `hookd run --config FILE`,
/// else of the default config (`$XDG_CONFIG_HOME/hookd/config.toml`): the
/// prompt's secret is in neither the header nor the model exchanges. A
/// `--config` that cannot be read is an error before anything runs.
#[test]
fn a_recording_is_redacted_with_the_given_or_the_default_config() {
    if claude::node_absent("a_recording_is_redacted_with_the_given_or_the_default_config") {
        return;
    }
    let sdk = Sdk::start(&two_calls_script(), Some(ALLOW_BOTH), None);
    let dir = tempfile::tempdir().unwrap();
    let default_config = sdk.sandbox.path().join("home/.config/hookd/config.toml");
    std::fs::create_dir_all(default_config.parent().unwrap()).unwrap();
    std::fs::write(
        &default_config,
        "[redact]\npatterns = [\"corp-[0-9]{6}\"]\n",
    )
    .unwrap();
    let given = dir.path().join("daemon-config.toml");
    std::fs::write(&given, "[redact]\npatterns = [\"zebra-[0-9]{3}\"]\n").unwrap();
    let cases = [
        ("default.jsonl", None, "corp-123456"),
        ("given.jsonl", Some(&given), "zebra-042"),
    ];
    let project = sdk.project();
    for (name, config, secret) in cases {
        let file = dir.path().join(name);
        let prompt = format!("please greet then clean up; ticket {secret}");
        let mut args = vec![
            "--cwd",
            project.to_str().unwrap(),
            "--record",
            file.to_str().unwrap(),
        ];
        if let Some(config) = config {
            args.extend(["--config", config.to_str().unwrap()]);
        }
        args.push(&prompt);
        let out = hookd_run(&sdk, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let recorded = std::fs::read_to_string(&file).unwrap();
        assert!(!recorded.contains(secret), "{name}: {secret} recorded");
        let header = &lines(&file)[0];
        assert_eq!(
            header["prompt"], "please greet then clean up; ticket [REDACTED]",
            "{name}"
        );
        assert!(
            lines(&file).iter().any(|l| l["type"] == "exchange"
                && l["request"]["body"]
                    .to_string()
                    .contains("ticket [REDACTED]")),
            "{name}: the exchanges are redacted too"
        );
    }
    // With --config the default file's pattern is not the one used.
    let given_text = std::fs::read_to_string(dir.path().join("given.jsonl")).unwrap();
    assert!(
        !given_text.contains("corp-"),
        "no corp secret was in that run"
    );

    let missing = dir.path().join("missing.toml");
    let out = hookd_run(
        &sdk,
        &[
            "--config",
            missing.to_str().unwrap(),
            "--record",
            dir.path().join("never.jsonl").to_str().unwrap(),
            "hello",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("the config {}", missing.display())),
        "{}",
        text(&out)
    );
    assert!(!dir.path().join("never.jsonl").exists());
}
