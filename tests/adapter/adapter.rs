//! Agent-SDK runs end to end: the real Claude Agent SDK (0.3.330, from npm,
//! in `adapter/node_modules`) driven by `adapter/adapter.mjs`, spawned by a
//! real `hookd serve`, talking to this project's scripted mock of the
//! Messages API. The same rules, pending table and clients judge its hooks
//! as Claude Code's.
//!
//! Needs `npm ci --prefix adapter` (done by `scripts/test`).

use crate::support::claude;
use crate::support::daemon;
use crate::support::otlp;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use claude::MockApi;
use daemon::{Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};
use tempfile::TempDir;

const DENY_RM: &str = r#"
[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "hookd adapter test: rm is not allowed in this project"
"#;

const ALLOW_ECHO: &str = r#"
[[rule]]
id = "echo-ok"
action = "allow"
tool = "Bash(echo:*)"
reason = "echo is harmless"
"#;

const ASK_TOUCH: &str = r#"
[[rule]]
id = "ask-touch"
action = "ask"
tool = "Bash(touch:*)"
reason = "a person should confirm file creation"
"#;

/// Panics with the install command when the adapter's dependencies are missing.
fn require_adapter() {
    let sdk = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("adapter/node_modules/@anthropic-ai/claude-agent-sdk/package.json");
    assert!(
        sdk.is_file(),
        "the Agent SDK is not installed for the adapter; run `npm ci --prefix adapter` in {}",
        env!("CARGO_MANIFEST_DIR")
    );
}

/// A daemon whose adapters run hermetically against `mock`: their own HOME,
/// config dir and TMPDIR under `sandbox`, the mock as the API, every other
/// destination a closed port.
struct Sdk {
    sandbox: TempDir,
    mock: MockApi,
    daemon: Daemon,
}

fn hermetic_env(sandbox: &Path, base_url: &str) -> Vec<(String, String)> {
    let p = |rel: &str| sandbox.join(rel).display().to_string();
    let claude = claude::claude_env(
        &sandbox.join("home/.claude"),
        &sandbox.join("tmp"),
        base_url,
    )
    .into_iter()
    .map(|(k, v)| (k, v.into_string().unwrap()));
    [
        ("HOME", p("home")),
        ("TMPDIR", p("tmp")),
        ("LANG", "C.UTF-8".into()),
        ("HTTPS_PROXY", "http://127.0.0.1:9".into()),
        ("HTTP_PROXY", "http://127.0.0.1:9".into()),
        ("https_proxy", "http://127.0.0.1:9".into()),
        ("http_proxy", "http://127.0.0.1:9".into()),
        ("NO_PROXY", "127.0.0.1,localhost".into()),
        ("no_proxy", "127.0.0.1,localhost".into()),
    ]
    .into_iter()
    .chain(claude)
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

impl Sdk {
    fn start(script: &Value, rules: Option<&str>, config: Option<&str>) -> Sdk {
        Sdk::start_with(script, rules, config, |_, _| {})
    }

    /// `tweak(options, sandbox)` may change the daemon's options last.
    fn start_with(
        script: &Value,
        rules: Option<&str>,
        config: Option<&str>,
        tweak: impl FnOnce(&mut DaemonOptions, &Path),
    ) -> Sdk {
        Sdk::start_text(&script.to_string(), rules, config, tweak)
    }

    /// [`Sdk::start_with`] with the mock's script as JSON text.
    fn start_text(
        script: &str,
        rules: Option<&str>,
        config: Option<&str>,
        tweak: impl FnOnce(&mut DaemonOptions, &Path),
    ) -> Sdk {
        require_adapter();
        let sandbox = tempfile::Builder::new()
            .prefix("hookd-sdk-")
            .tempdir()
            .unwrap();
        for d in ["home/.claude", "tmp", "project", "project2"] {
            std::fs::create_dir_all(sandbox.path().join(d)).unwrap();
        }
        let mock = MockApi::start_text(script);
        let mut options = DaemonOptions {
            rules: rules.map(str::to_owned),
            config: config.map(str::to_owned),
            env: hermetic_env(sandbox.path(), &mock.base_url()),
            clear_env: true,
            ..DaemonOptions::default()
        };
        tweak(&mut options, sandbox.path());
        let daemon = Daemon::start_with(options);
        Sdk {
            sandbox,
            mock,
            daemon,
        }
    }

    fn project(&self) -> PathBuf {
        self.sandbox.path().join("project")
    }

    fn client(&self, name: &str) -> RawClient {
        RawClient::hello(&self.daemon.socket, name)
    }

    /// Sends `run` and returns the run id.
    fn run(&self, client: &mut RawClient, options: Value) -> String {
        let reply = client
            .call(json!({"type": "run", "prompt": "please run the command", "options": options}));
        assert_eq!(reply["type"], "ok", "{reply}\n{}", self.daemon.stderr());
        reply["result"]["run_id"].as_str().unwrap().to_string()
    }

    /// `hookd run ARGS` against this daemon.
    fn cli(&self, args: &[&str]) -> std::process::Output {
        Command::new(daemon::hookd_bin())
            .arg("run")
            .arg("--socket")
            .arg(&self.daemon.socket)
            .args(args)
            .output()
            .unwrap()
    }

    fn status(&self) -> Value {
        let mut c = self.client("status");
        c.call(json!({"type": "status"}))["result"].clone()
    }

    /// Polls `status` until no run is listed.
    fn wait_no_runs(&self) {
        daemon::poll_reporting("no run listed", Duration::from_secs(10), || {
            let runs = self.status()["runs"].clone();
            if runs.as_array().is_some_and(|r| r.is_empty()) {
                return Ok(());
            }
            Err(format!("runs still listed: {runs}"))
        });
    }
}

/// Reads the owner's frames until `run_done` (which is returned last).
fn frames_until_done(client: &mut RawClient) -> Vec<Value> {
    let mut frames = Vec::new();
    loop {
        let frame = client
            .recv()
            .expect("the connection stayed open until run_done");
        let done = frame["type"] == "run_done";
        frames.push(frame);
        if done {
            return frames;
        }
    }
}

/// `(kind, verdict, source)` of the decisions among the owner's frames.
fn decisions(frames: &[Value]) -> Vec<(String, String, String)> {
    let kinds: std::collections::HashMap<&str, &str> = frames
        .iter()
        .filter(|f| f["type"] == "event")
        .map(|f| {
            (
                f["event"]["id"].as_str().unwrap(),
                f["event"]["kind"].as_str().unwrap(),
            )
        })
        .collect();
    frames
        .iter()
        .filter(|f| f["type"] == "decision")
        .map(|f| {
            let d = &f["decision"];
            (
                kinds[d["event_id"].as_str().unwrap()].to_string(),
                d["verdict"].as_str().unwrap().to_string(),
                d["source"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Children of `pid` that are zombies (exited, not reaped).
fn zombie_children(pid: u32) -> Vec<u32> {
    processes()
        .into_iter()
        .filter(|p| p.ppid == pid && p.state == 'Z')
        .map(|p| p.pid)
        .collect()
}

struct Proc {
    pid: u32,
    ppid: u32,
    pgrp: u32,
    state: char,
    cmdline: String,
}

fn processes() -> Vec<Proc> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp ...": comm may hold spaces and parens.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let cmdline = std::fs::read(entry.path().join("cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        out.push(Proc {
            pid,
            state: fields[0].chars().next().unwrap_or('?'),
            ppid: fields[1].parse().unwrap_or(0),
            pgrp: fields[2].parse().unwrap_or(0),
            cmdline,
        });
    }
    out
}

#[test]
fn a_deny_rule_blocks_rm_in_a_run_and_the_reason_reaches_the_model() {
    if claude::node_absent("a_deny_rule_blocks_rm_in_a_run_and_the_reason_reaches_the_model") {
        return;
    }
    let sdk = Sdk::start(
        &claude::one_bash_call_script("rm -f victim.txt"),
        Some(DENY_RM),
        None,
    );
    std::fs::write(sdk.project().join("victim.txt"), "still here").unwrap();
    let out = sdk.cli(&[
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
        stdout.contains("→ Bash rm -f victim.txt")
            && stdout.contains("deny (rule no-rm): hookd adapter test: rm is not allowed"),
        "{stdout}"
    );
    assert!(
        stdout.contains("✓ result: done") && stdout.contains("cost $"),
        "{stdout}"
    );
    // The model got the refusal, reason included, as the tool's result.
    sdk.mock.expect_refusal("rm is not allowed in this project");
    // The log has the run's events, judged like Claude Code's.
    let log = sdk.daemon.wait_log_lines(1);
    let pre = log
        .iter()
        .find(|l| l["type"] == "event" && l["kind"] == "PreToolUse")
        .expect("a PreToolUse event in the log");
    assert_eq!(pre["harness"], "agent-sdk");
    assert!(pre["run_id"].is_string(), "{pre}");
    let decision = log
        .iter()
        .find(|l| l["type"] == "decision" && l["event_id"] == pre["id"])
        .unwrap();
    assert_eq!(decision["verdict"], "deny");
    assert_eq!(decision["rule_ids"], json!(["no-rm"]));
    assert_eq!(decision["run_id"], pre["run_id"]);
}

/// The SDK relays a lone surrogate in the model's command as `JSON.stringify`
/// writes it; the daemon used to drop the adapter's `hook_event` line, so the
/// hook waited until the SDK's 600 s timeout and then ran the command.
#[test]
fn a_lone_surrogate_in_a_run_does_not_get_a_command_past_a_deny_rule() {
    if claude::node_absent("a_lone_surrogate_in_a_run_does_not_get_a_command_past_a_deny_rule") {
        return;
    }
    let script = claude::one_bash_call_script("rm -f victim.txt LONE")
        .to_string()
        .replace("LONE", "\\ud800");
    let sdk = Sdk::start_text(&script, Some(DENY_RM), None, |_, _| {});
    std::fs::write(sdk.project().join("victim.txt"), "still here").unwrap();
    let started = Instant::now();
    let out = sdk.cli(&[
        "--cwd",
        sdk.project().to_str().unwrap(),
        "please remove victim.txt",
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
        sdk.project().join("victim.txt").exists(),
        "rm ran despite the deny rule\n{stdout}"
    );
    assert!(
        stdout.contains("deny (rule no-rm): hookd adapter test: rm is not allowed"),
        "{stdout}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "the run waited for a hook"
    );
    let log = sdk.daemon.wait_log_lines(1);
    let pre = log
        .iter()
        .find(|l| l["type"] == "event" && l["kind"] == "PreToolUse")
        .expect("a PreToolUse event in the log");
    assert_eq!(
        pre["input"]["tool_input"]["command"],
        "rm -f victim.txt \\ud800"
    );
}

#[test]
fn a_run_allowed_to_completion_records_usage_and_cost() {
    if claude::node_absent("a_run_allowed_to_completion_records_usage_and_cost") {
        return;
    }
    let sdk = Sdk::start(
        &claude::one_bash_call_script("echo hello > out.txt"),
        Some(ALLOW_ECHO),
        None,
    );
    let mut owner = sdk.client("owner");
    let started = Instant::now();
    let run_id = sdk.run(
        &mut owner,
        json!({"cwd": sdk.project(), "permission_mode": "default", "max_turns": 5}),
    );
    let frames = frames_until_done(&mut owner);
    let elapsed = started.elapsed();
    let done = frames.last().unwrap();
    assert_eq!(done["ok"], true, "{done}\n{}", sdk.daemon.stderr());
    assert_eq!(done["run_id"], run_id.as_str());
    assert_eq!(done["num_turns"], 2);
    assert_eq!(done["result"], "done");
    assert!(
        done["usage"]["input_tokens"].as_u64().unwrap() > 0,
        "{done}"
    );
    assert!(
        done["usage"]["output_tokens"].as_u64().unwrap() > 0,
        "{done}"
    );
    let cost = done["cost_usd"].as_f64().unwrap();
    assert!(cost > 0.0, "{done}");
    let session = done["session_id"].as_str().unwrap();
    assert_eq!(
        std::fs::read_to_string(sdk.project().join("out.txt")).unwrap(),
        "hello\n"
    );
    // Every frame is tagged with the run; the rule allowed the call.
    for f in &frames {
        let id = match f["type"].as_str().unwrap() {
            "event" => &f["event"]["run_id"],
            "decision" => &f["decision"]["run_id"],
            _ => &f["run_id"],
        };
        assert_eq!(id, run_id.as_str(), "{f}");
    }
    let decided = decisions(&frames);
    assert!(
        decided.contains(&("PreToolUse".into(), "allow".into(), "rule".into())),
        "{decided:?}"
    );
    let result = frames
        .iter()
        .find(|f| f["type"] == "sdk_message" && f["message"]["type"] == "result")
        .expect("the SDK's result message was pushed");
    assert_eq!(result["message"]["total_cost_usd"].as_f64(), Some(cost));
    assert!(result["message"]["modelUsage"].is_object(), "{result}");
    assert!(frames.iter().any(|f| f["type"] == "sdk_message"
        && f["message"]["type"] == "system"
        && f["message"]["subtype"] == "init"));
    // The log has the run's start, its SDK messages and its end with usage and cost.
    let log = sdk.daemon.wait_log_lines(1);
    let wait_done = || {
        sdk.daemon
            .wait_log_lines(1)
            .into_iter()
            .find(|l| l["type"] == "run_done")
    };
    daemon::poll_until("run_done in the log", Duration::from_secs(5), || {
        wait_done().is_some()
    });
    let logged = wait_done().unwrap();
    assert_eq!(logged["cost_usd"].as_f64(), Some(cost));
    assert_eq!(logged["usage"], done["usage"]);
    assert_eq!(logged["session_id"], session);
    assert!(log
        .iter()
        .any(|l| l["type"] == "run_start" && l["run_id"] == run_id.as_str()));
    assert!(log
        .iter()
        .any(|l| l["type"] == "sdk_message" && l["message"]["type"] == "result"));
    let kinds: Vec<&str> = log
        .iter()
        .filter(|l| l["type"] == "event")
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    eprintln!("hook events the SDK fired: {kinds:?}; run took {elapsed:?}");
    for kind in ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"] {
        assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
    }
    // The coverage alarm: the run's call was judged before it ran. (The
    // adapter registers every event with no matcher, and a run's hooks
    // come in order on one pipe: its PostToolUse cannot come first.)
    let coverage = &sdk.daemon.status()["coverage"];
    let runs = coverage
        .as_array()
        .and_then(|c| c.iter().find(|a| a["agent"] == "agent-sdk"))
        .unwrap_or_else(|| panic!("{coverage}"));
    assert_eq!(runs["judged"], 1, "{coverage}");
    assert_eq!(runs["unjudged"], 0, "{coverage}");
    sdk.wait_no_runs();
    assert!(zombie_children(sdk.daemon.pid()).is_empty());
}

#[test]
fn an_ask_in_a_run_is_answered_by_a_socket_client() {
    if claude::node_absent("an_ask_in_a_run_is_answered_by_a_socket_client") {
        return;
    }
    let sdk = Sdk::start(
        &claude::one_bash_call_script("touch made-by-run.txt"),
        Some(ASK_TOUCH),
        Some("[decisions]\ntimeout = 30\n"),
    );
    let mut approver = sdk.client("approver");
    let ok = approver.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok");
    let mut owner = sdk.client("owner");
    let run_id = sdk.run(&mut owner, json!({"cwd": sdk.project()}));
    let pending = approver.wait_for("the run's pending PreToolUse", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let event = &pending["event"];
    assert_eq!(event["kind"], "PreToolUse");
    assert_eq!(event["harness"], "agent-sdk");
    assert_eq!(event["run_id"], run_id.as_str());
    assert_eq!(
        event["input"]["tool_input"]["command"],
        "touch made-by-run.txt"
    );
    let reply = approver.call(json!({"type": "decide", "event_id": event["id"], "verdict": "allow", "reason": "approved by the test"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let frames = frames_until_done(&mut owner);
    let done = frames.last().unwrap();
    assert_eq!(done["ok"], true, "{done}");
    assert!(sdk.project().join("made-by-run.txt").exists());
    // The owner saw its event wait and who decided it.
    assert!(frames
        .iter()
        .any(|f| f["type"] == "event" && f["pending"] == true && f["event"]["id"] == event["id"]));
    assert!(
        decisions(&frames).contains(&(
            "PreToolUse".into(),
            "allow".into(),
            "client:approver".into()
        )),
        "{:?}",
        decisions(&frames)
    );
}

#[test]
fn abort_interrupts_a_run_gracefully() {
    if claude::node_absent("abort_interrupts_a_run_gracefully") {
        return;
    }
    let marker = format!("hookd-abort-{}", std::process::id());
    let command = format!("python3 -c \"import time; time.sleep(30)\" {marker}");
    let sdk = Sdk::start(&claude::one_bash_call_script(&command), None, None);
    let mut owner = sdk.client("owner");
    let run_id = sdk.run(
        &mut owner,
        json!({"cwd": sdk.project(), "permission_mode": "bypassPermissions"}),
    );
    let sleeping = || {
        processes()
            .iter()
            .any(|p| p.cmdline.contains(&marker) && p.cmdline.contains("python3"))
    };
    daemon::poll_until("the slow tool to run", Duration::from_secs(30), sleeping);
    let asked = Instant::now();
    let reply = owner.call(json!({"type": "abort", "run_id": run_id}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let frames = frames_until_done(&mut owner);
    let took = asked.elapsed();
    let done = frames.last().unwrap();
    assert_eq!(done["ok"], false);
    assert_eq!(done["error"], "aborted by client:owner", "{done}");
    // Graceful: the SDK's interrupt ended it, no kill was needed.
    assert!(
        !sdk.daemon.stderr().contains("did not stop in time"),
        "{}",
        sdk.daemon.stderr()
    );
    eprintln!("abort to run_done: {took:?}");
    daemon::poll_until("the tool to be gone", Duration::from_secs(10), || {
        !sleeping()
    });
    sdk.wait_no_runs();
    assert!(zombie_children(sdk.daemon.pid()).is_empty());
    let again = owner.call(json!({"type": "abort", "run_id": run_id}));
    assert_eq!(again["code"], "not_found", "{again}");
}

#[test]
fn a_killed_adapter_ends_its_run_with_an_error_and_nothing_else() {
    if claude::node_absent("a_killed_adapter_ends_its_run_with_an_error_and_nothing_else") {
        return;
    }
    let sdk = Sdk::start(
        &claude::one_bash_call_script("touch never.txt"),
        Some(ASK_TOUCH),
        Some("[decisions]\ntimeout = 60\n"),
    );
    let mut watcher = sdk.client("watcher");
    watcher.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    let mut owner = sdk.client("owner");
    let run_id = sdk.run(&mut owner, json!({"cwd": sdk.project()}));
    let pending = watcher.wait_for("the pending PreToolUse", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let runs = sdk.status()["runs"].clone();
    assert_eq!(runs.as_array().unwrap().len(), 1, "{runs}");
    assert_eq!(runs[0]["run_id"], run_id.as_str());
    assert_eq!(runs[0]["state"], "running");
    let pid = runs[0]["pid"].as_u64().unwrap() as u32;
    assert!(
        processes().iter().any(|p| p.pgrp == pid && p.pid != pid),
        "the adapter's group also holds the Claude Code process"
    );
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
    // Its pending decision was released to the fallback at once.
    let released = watcher.wait_for("the released decision", |f| f["type"] == "decision");
    assert_eq!(released["decision"]["event_id"], pending["event"]["id"]);
    assert_eq!(released["decision"]["source"], "fallback");
    let mut c = sdk.client("check");
    assert_eq!(c.call(json!({"type": "pending"}))["result"], json!([]));
    // Nothing of the run is left: not the adapter, not its group, no zombie.
    sdk.wait_no_runs();
    daemon::poll_until(
        "the adapter's group to be gone",
        Duration::from_secs(5),
        || !processes().iter().any(|p| p.pgrp == pid),
    );
    assert!(zombie_children(sdk.daemon.pid()).is_empty());
    assert!(!sdk.project().join("never.txt").exists());
    // The daemon carries on: a forwarder hook is still answered.
    let out = sdk.daemon.forward(&daemon::fixture("PreToolUse.json"), &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("fallback"));
}

#[test]
fn two_concurrent_runs_are_independent() {
    if claude::node_absent("two_concurrent_runs_are_independent") {
        return;
    }
    let sdk = Sdk::start(
        &claude::one_bash_call_script("touch made.txt"),
        Some(ASK_TOUCH),
        Some("[decisions]\ntimeout = 60\n"),
    );
    let mut approver = sdk.client("approver");
    approver.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    let mut a = sdk.client("a");
    let mut b = sdk.client("b");
    let project2 = sdk.sandbox.path().join("project2");
    let run_a = sdk.run(&mut a, json!({"cwd": sdk.project()}));
    let run_b = sdk.run(&mut b, json!({"cwd": project2}));
    assert_ne!(run_a, run_b);
    // Both wait on a decision at once: two runs in the table, both running.
    let first = approver.wait_for("a pending event", |f| f["pending"] == true);
    let second = approver.wait_for("another pending event", |f| f["pending"] == true);
    let mut waiting: Vec<&str> = [&first, &second]
        .iter()
        .map(|f| f["event"]["run_id"].as_str().unwrap())
        .collect();
    waiting.sort();
    let mut both = vec![run_a.as_str(), run_b.as_str()];
    both.sort();
    assert_eq!(waiting, both);
    let runs = sdk.status()["runs"].clone();
    assert_eq!(runs.as_array().unwrap().len(), 2, "{runs}");
    assert!(runs
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["state"] == "running"));
    for f in [&first, &second] {
        let r = approver
            .call(json!({"type": "decide", "event_id": f["event"]["id"], "verdict": "allow"}));
        assert_eq!(r["type"], "ok", "{r}");
    }
    let (frames_a, frames_b) = (frames_until_done(&mut a), frames_until_done(&mut b));
    for (frames, run_id) in [(&frames_a, &run_a), (&frames_b, &run_b)] {
        let done = frames.last().unwrap();
        assert_eq!(done["ok"], true, "{done}");
        assert_eq!(done["run_id"], run_id.as_str());
        // A run's owner gets that run's frames only.
        assert!(frames.iter().all(|f| {
            let id = match f["type"].as_str().unwrap() {
                "event" => &f["event"]["run_id"],
                "decision" => &f["decision"]["run_id"],
                _ => &f["run_id"],
            };
            id == run_id.as_str()
        }));
    }
    assert_ne!(
        frames_a.last().unwrap()["session_id"],
        frames_b.last().unwrap()["session_id"]
    );
    assert!(sdk.project().join("made.txt").exists() && project2.join("made.txt").exists());
    sdk.wait_no_runs();
    assert!(zombie_children(sdk.daemon.pid()).is_empty());
}

#[test]
fn provider_config_errors_name_the_field() {
    if claude::node_absent("provider_config_errors_name_the_field") {
        return;
    }
    // Refused when the config is loaded: the daemon does not start.
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[providers.x]\nkind = \"bedrock\"\n",
            "[providers.x].kind: unknown kind `bedrock`",
        ),
        (
            "[providers.x]\nkind = \"anthropic\"\n",
            "[providers.x]: kind \"anthropic\" needs a key",
        ),
        (
            "[providers.x]\nkind = \"custom\"\napi_key_env = \"K\"\nbase_url = \"not a url\"\n",
            "[providers.x].base_url: `not a url` is not an http",
        ),
        (
            "[providers.x]\nkind = \"claude-max\"\napi_key_env = \"K\"\n",
            "takes no key",
        ),
    ];
    for (config, expected) in cases {
        let path = dir.path().join("config.toml");
        std::fs::write(&path, config).unwrap();
        let out = Command::new(daemon::hookd_bin())
            .args(["serve", "--config"])
            .arg(&path)
            .arg("--socket")
            .arg(dir.path().join("s.sock"))
            .arg("--log")
            .arg(dir.path().join("events.jsonl"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{config}");
        assert!(stderr.contains(expected), "{config}\n→ {stderr}");
    }

    // Refused before spawning: the key must be there when the run starts.
    let key_file = dir.path().join("gateway.key");
    std::fs::write(&key_file, "sk-provider-secret-0123456789abcdef\n").unwrap();
    let config = format!(
        "[providers.unset]\nkind = \"anthropic\"\napi_key_env = \"HOOKD_TEST_UNSET_KEY\"\n\
         [providers.nofile]\nkind = \"zai\"\napi_key_file = \"{missing}\"\n\
         [providers.max]\nkind = \"claude-max\"\n\
         [providers.gateway]\nkind = \"custom\"\nbase_url = \"MOCK\"\napi_key_file = \"{key}\"\n",
        missing = dir.path().join("missing.key").display(),
        key = key_file.display(),
    );
    let script = claude::one_bash_call_script("echo via-provider");
    // The gateway provider points at the mock; the daemon's own
    // ANTHROPIC_BASE_URL goes nowhere, so a run only succeeds through it.
    let mock = MockApi::start(&script);
    let config = config.replace("MOCK", &mock.base_url());
    let sdk = Sdk::start_with(&script, None, Some(&config), |options, _| {
        for (k, v) in options.env.iter_mut() {
            if k == "ANTHROPIC_BASE_URL" {
                *v = "http://127.0.0.1:9".into();
            }
        }
    });
    let mut c = sdk.client("c");
    let refusals = [
        ("unset", "[providers.unset].api_key_env: HOOKD_TEST_UNSET_KEY is not set"),
        ("nofile", "[providers.nofile].api_key_file: cannot read"),
        ("max", "[providers.max]: kind \"claude-max\" uses this machine's Claude Code login, but ANTHROPIC_API_KEY is set"),
        ("nope", "provider `nope` is not configured"),
    ];
    for (provider, expected) in refusals {
        let reply = c.call(json!({"type": "run", "prompt": "hi", "provider": provider, "options": {"cwd": sdk.project()}}));
        assert_eq!(reply["type"], "error", "{reply}");
        assert_eq!(reply["code"], "invalid_request", "{reply}");
        assert!(
            reply["message"].as_str().unwrap().contains(expected),
            "{provider}: {reply}"
        );
    }
    let bad_option = c.call(json!({"type": "run", "prompt": "hi", "options": {"max_turn": 3}}));
    assert!(
        bad_option["message"]
            .as_str()
            .unwrap()
            .contains("options.max_turn"),
        "{bad_option}"
    );
    assert_eq!(sdk.status()["runs"], json!([]), "nothing was spawned");

    let run_id = sdk.run(
        &mut c,
        json!({"cwd": sdk.project(), "permission_mode": "bypassPermissions"}),
    );
    let done = frames_until_done(&mut c).pop().unwrap();
    assert_eq!(done["run_id"], run_id.as_str());
    // The default provider's endpoint is dead: the run failed. Now through the gateway.
    assert_eq!(done["ok"], false, "{done}");
    let reply = c.call(json!({"type": "run", "prompt": "hi", "provider": "gateway", "options": {"cwd": sdk.project(), "permission_mode": "bypassPermissions"}}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let done = frames_until_done(&mut c).pop().unwrap();
    assert_eq!(done["ok"], true, "{done}\n{}", sdk.daemon.stderr());
    assert!(!mock.requests().is_empty());
    // The key went to the child's environment only.
    let log = std::fs::read_to_string(&sdk.daemon.log).unwrap();
    assert!(!log.contains("sk-provider-secret"));
    assert!(!sdk.daemon.stderr().contains("sk-provider-secret"));
}

#[test]
fn missing_node_dependencies_name_the_install_command() {
    if claude::node_absent("missing_node_dependencies_name_the_install_command") {
        return;
    }
    let empty = tempfile::tempdir().unwrap();
    let dir = empty.path().display().to_string();
    let d = Daemon::start_with(DaemonOptions {
        args: vec!["--adapter-dir".into(), dir.clone()],
        ..DaemonOptions::default()
    });
    let mut c = RawClient::hello(&d.socket, "c");
    let reply = c.call(json!({"type": "run", "prompt": "hi"}));
    assert_eq!(reply["type"], "error", "{reply}");
    assert_eq!(reply["code"], "unavailable");
    let command = format!("npm ci --prefix {dir}");
    assert!(
        reply["message"].as_str().unwrap().contains(&command),
        "{reply}"
    );
    let out = Command::new(daemon::hookd_bin())
        .args(["run", "--socket"])
        .arg(&d.socket)
        .arg("hi")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&command), "{stderr}");
}

#[test]
fn the_adapters_stderr_and_run_errors_are_redacted_in_the_daemons_logs() {
    if claude::node_absent("the_adapters_stderr_and_run_errors_are_redacted_in_the_daemons_logs") {
        return;
    }
    // Claude Code rejects a `resume` that is no session, quoting it: on the
    // adapter's stderr and in the run's error.
    let secret = "sk-ant-api03-hookdTestSecret0123456789";
    let sdk = Sdk::start(&claude::one_bash_call_script("echo hi"), None, None);
    let mut owner = sdk.client("owner");
    sdk.run(
        &mut owner,
        json!({"cwd": sdk.project(), "resume": secret, "permission_mode": "bypassPermissions"}),
    );
    let done = frames_until_done(&mut owner).pop().unwrap();
    assert_eq!(done["ok"], false, "{done}");
    assert!(
        done["error"].as_str().unwrap().contains(secret),
        "the run's own client gets it verbatim: {done}"
    );
    daemon::poll_until(
        "the adapter's stderr in the daemon's log",
        Duration::from_secs(10),
        || {
            sdk.daemon
                .stderr()
                .contains("--resume requires a valid session ID")
        },
    );
    let stderr = sdk.daemon.stderr();
    assert!(!stderr.contains(secret), "{stderr}");
    assert!(stderr.contains("[REDACTED]"), "{stderr}");
    // The log writer is asynchronous.
    daemon::poll_until("run_done in the log", Duration::from_secs(10), || {
        sdk.daemon
            .log_lines()
            .iter()
            .any(|l| l["type"] == "run_done")
    });
    let log = std::fs::read_to_string(&sdk.daemon.log).unwrap();
    assert!(!log.contains(secret), "{log}");
    let run_done = sdk
        .daemon
        .log_lines()
        .into_iter()
        .find(|l| l["type"] == "run_done")
        .unwrap();
    assert!(
        run_done["error"]
            .as_str()
            .is_some_and(|e| e.contains("[REDACTED]")),
        "{run_done}"
    );
}

// ── A run's hooks are judged once, whatever is installed ────────────────────

const ASK_PERMISSION_FOR_TOUCH: &str = r#"
[[rule]]
id = "ask-touch-permission"
action = "ask"
event = "PermissionRequest"
tool = "Bash(touch:*)"
reason = "a person should confirm file creation"
"#;

/// `hookd install --scope SCOPE` into the sandbox (its HOME and config dir,
/// which the adapter's SDK reads too; the project for project scope),
/// registering the built forwarder.
fn install(sdk: &Sdk, scope: &str) {
    let home = sdk.sandbox.path().join("home");
    let out = Command::new(daemon::hookd_bin())
        .args(["install", "--scope", scope, "--project"])
        .arg(sdk.project())
        .arg("--forwarder")
        .arg(daemon::forwarder_bin())
        .env("HOME", &home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "hookd install --scope {scope}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Sends `request` and returns the frames pushed before its reply. The
/// daemon queues a connection's pushes and replies in order, so these are
/// every frame pushed before the request was read.
fn pushed_before(client: &mut RawClient, mut request: Value) -> Vec<Value> {
    request["req"] = "drain".into();
    client.send(&request);
    let mut pushed = Vec::new();
    loop {
        let frame = client.recv().expect("a reply");
        if frame["req"] == "drain" {
            return pushed;
        }
        pushed.push(frame);
    }
}

/// `hookd pending --json` against the sandbox's daemon.
fn pending_cli(sdk: &Sdk) -> Vec<Value> {
    let out = Command::new(daemon::hookd_bin())
        .args(["pending", "--json", "--socket"])
        .arg(&sdk.daemon.socket)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<Vec<Value>>(&out.stdout).unwrap()
}

/// Waits until the log holds an event satisfying `pred`, and returns it.
fn wait_logged(sdk: &Sdk, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let mut found = None;
    daemon::poll_until(what, Duration::from_secs(10), || {
        found = sdk
            .daemon
            .log_lines()
            .into_iter()
            .find(|l| l["type"] == "event" && pred(l));
        found.is_some()
    });
    found.unwrap()
}

/// With hookd installed in `scope`, an `ask` in a run is one pending event:
/// a client's `allow` lets the tool run, and the forwarder's copies of the
/// run's hooks are logged as copies, answered "no opinion", never pending.
fn an_ask_in_a_run_is_pending_once_with_an_install(scope: &str) {
    let sdk = Sdk::start(
        &claude::one_bash_call_script("touch made-by-run.txt"),
        Some(ASK_TOUCH),
        Some("[decisions]\ntimeout = 30\n"),
    );
    install(&sdk, scope);
    let mut approver = sdk.client("approver");
    approver.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    let mut owner = sdk.client("owner");
    let run_id = sdk.run(&mut owner, json!({"cwd": sdk.project()}));
    let pending = approver.wait_for("the run's pending PreToolUse", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    assert_eq!(pending["event"]["harness"], "agent-sdk", "{pending}");
    assert_eq!(pending["event"]["kind"], "PreToolUse");
    // The forwarder's copy of the same PreToolUse has reached the daemon.
    let copy = wait_logged(&sdk, "the forwarder's PreToolUse", |l| {
        l["kind"] == "PreToolUse" && l["harness"] == "claude-code"
    });
    let listed = pending_cli(&sdk);
    assert_eq!(listed.len(), 1, "hookd pending: {listed:#?}");
    assert_eq!(listed[0]["event"]["id"], pending["event"]["id"]);
    assert_eq!(copy["copy_of"], "agent-sdk", "{copy}");
    assert_eq!(copy["run_id"], run_id.as_str(), "{copy}");
    assert_eq!(
        copy["input"]["tool_input"],
        pending["event"]["input"]["tool_input"]
    );

    // As a person would: `hookd decide`, while the approver holds the ask.
    let decided = Command::new(daemon::hookd_bin())
        .args(["decide", "--socket"])
        .arg(&sdk.daemon.socket)
        .arg(pending["event"]["id"].as_str().unwrap())
        .arg("allow")
        .output()
        .unwrap();
    assert!(
        decided.status.success(),
        "{}",
        String::from_utf8_lossy(&decided.stderr)
    );
    let done = frames_until_done(&mut owner).pop().unwrap();
    assert_eq!(done["ok"], true, "{done}\n{}", sdk.daemon.stderr());
    assert!(sdk.project().join("made-by-run.txt").exists());
    let result = sdk.mock.expect_tool_result("toolu_mock_0_");
    assert!(!result.is_error, "{:?}", result.raw);
    // Nothing else was ever pending.
    let later: Vec<Value> = pushed_before(&mut approver, json!({"type": "status"}))
        .into_iter()
        .filter(|f| f["type"] == "event" && f["pending"] == true)
        .collect();
    assert_eq!(later, Vec::<Value>::new());

    // Every hook the forwarder relayed is logged as a copy of this run's,
    // decided "no opinion" by source `copy`.
    let log = sdk.daemon.log_lines();
    let copies: Vec<&Value> = log
        .iter()
        .filter(|l| l["type"] == "event" && l["harness"] == "claude-code")
        .collect();
    let kinds: Vec<&str> = copies.iter().map(|c| c["kind"].as_str().unwrap()).collect();
    for kind in ["UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"] {
        assert!(kinds.contains(&kind), "no copy of {kind}: {kinds:?}");
    }
    for copy in &copies {
        assert_eq!(copy["copy_of"], "agent-sdk", "{copy}");
        assert_eq!(copy["run_id"], run_id.as_str(), "{copy}");
        let decision = log
            .iter()
            .find(|l| l["type"] == "decision" && l["event_id"] == copy["id"])
            .unwrap_or_else(|| panic!("no decision for {copy}"));
        assert_eq!(decision["source"], "copy", "{decision}");
        assert_eq!(decision["verdict"], "none", "{decision}");
    }
    // The run's own hooks are judged as before.
    assert!(log.iter().any(|l| l["type"] == "decision"
        && l["event_id"] == pending["event"]["id"]
        && l["source"] == "client:hookd-cli"));
    // The coverage alarm counts the run's calls, never the copies: a
    // copy's PostToolUse is not a Claude Code call that ran unjudged.
    let coverage = sdk.daemon.status()["coverage"].clone();
    let agents: Vec<&str> = coverage
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["agent"].as_str())
        .collect();
    assert_eq!(agents, ["agent-sdk"], "{coverage}");
    assert_eq!(coverage[0]["unjudged"], 0, "{coverage}");
}

#[test]
fn a_user_scope_install_does_not_judge_a_runs_hooks_twice() {
    if claude::node_absent("a_user_scope_install_does_not_judge_a_runs_hooks_twice") {
        return;
    }
    an_ask_in_a_run_is_pending_once_with_an_install("user");
}

#[test]
fn a_project_scope_install_does_not_judge_a_runs_hooks_twice() {
    if claude::node_absent("a_project_scope_install_does_not_judge_a_runs_hooks_twice") {
        return;
    }
    an_ask_in_a_run_is_pending_once_with_an_install("project");
}

#[test]
fn with_an_install_a_deny_rule_still_blocks_a_run() {
    if claude::node_absent("with_an_install_a_deny_rule_still_blocks_a_run") {
        return;
    }
    // The copy answers "no opinion" while the adapter's hook denies: Claude
    // Code keeps the deny.
    let sdk = Sdk::start(
        &claude::one_bash_call_script("rm -f victim.txt"),
        Some(DENY_RM),
        None,
    );
    install(&sdk, "user");
    std::fs::write(sdk.project().join("victim.txt"), "still here").unwrap();
    let mut owner = sdk.client("owner");
    sdk.run(&mut owner, json!({"cwd": sdk.project()}));
    let frames = frames_until_done(&mut owner);
    assert_eq!(
        frames.last().unwrap()["ok"],
        true,
        "{}",
        sdk.daemon.stderr()
    );
    assert!(sdk.project().join("victim.txt").exists(), "rm ran");
    sdk.mock.expect_refusal("rm is not allowed in this project");
    assert!(
        decisions(&frames).contains(&("PreToolUse".into(), "deny".into(), "rule".into())),
        "{:?}",
        decisions(&frames)
    );
    // The owner saw its run's hooks, not their copies.
    assert!(frames
        .iter()
        .all(|f| f["type"] != "event" || f["event"]["copy_of"].is_null()));
    wait_logged(&sdk, "the forwarder's copy", |l| {
        l["kind"] == "PreToolUse" && l["copy_of"] == "agent-sdk"
    });
}

#[test]
fn in_default_mode_a_permission_request_is_judged_once() {
    if claude::node_absent("in_default_mode_a_permission_request_is_judged_once") {
        return;
    }
    // The SDK asks its PermissionRequest hook and canUseTool about one tool
    // call (and, installed, the forwarder relays the hook too): canUseTool's
    // is judged, the others are copies.
    let sdk = Sdk::start(
        &claude::one_bash_call_script("touch permitted.txt"),
        Some(ASK_PERMISSION_FOR_TOUCH),
        Some("[decisions]\ntimeout = 30\n"),
    );
    install(&sdk, "project");
    let mut approver = sdk.client("approver");
    approver.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    let mut owner = sdk.client("owner");
    let run_id = sdk.run(
        &mut owner,
        json!({"cwd": sdk.project(), "permission_mode": "default"}),
    );
    let pending = approver.wait_for("the pending PermissionRequest", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let event = &pending["event"];
    assert_eq!(event["kind"], "PermissionRequest", "{pending}");
    assert_eq!(event["input"]["hookd_origin"], "canUseTool", "{pending}");
    let hook_copy = wait_logged(&sdk, "the SDK's PermissionRequest hook", |l| {
        l["kind"] == "PermissionRequest" && l["copy_of"] == "canUseTool"
    });
    assert_eq!(hook_copy["harness"], "agent-sdk");
    assert_eq!(hook_copy["run_id"], run_id.as_str());
    wait_logged(&sdk, "the forwarder's PermissionRequest", |l| {
        l["kind"] == "PermissionRequest" && l["copy_of"] == "agent-sdk"
    });
    assert_eq!(pending_cli(&sdk).len(), 1);

    let reply =
        approver.call(json!({"type": "decide", "event_id": event["id"], "verdict": "allow"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let done = frames_until_done(&mut owner).pop().unwrap();
    assert_eq!(done["ok"], true, "{done}");
    assert!(sdk.project().join("permitted.txt").exists());
    let later: Vec<Value> = pushed_before(&mut approver, json!({"type": "status"}))
        .into_iter()
        .filter(|f| f["type"] == "event" && f["pending"] == true)
        .collect();
    assert_eq!(later, Vec::<Value>::new());
}

#[test]
fn a_hook_naming_a_run_is_a_copy_only_from_that_runs_claude_code() {
    if claude::node_absent("a_hook_naming_a_run_is_a_copy_only_from_that_runs_claude_code") {
        return;
    }
    let sdk = Sdk::start(
        &claude::one_bash_call_script("touch held.txt"),
        Some(&format!("{ASK_TOUCH}{DENY_RM}")),
        Some("[decisions]\ntimeout = 30\n"),
    );
    let mut approver = sdk.client("approver");
    approver.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    let mut owner = sdk.client("owner");
    let run_id = sdk.run(&mut owner, json!({"cwd": sdk.project()}));
    // The run waits on its ask, so it is live, with a known session and
    // process group.
    let pending = approver.wait_for("the run's pending PreToolUse", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let session = pending["event"]["session_id"].as_str().unwrap().to_string();
    let runs = sdk.status()["runs"].clone();
    assert_eq!(runs[0]["session_id"], session.as_str(), "{runs}");
    let adapter = runs[0]["pid"].as_u64().unwrap() as u32;
    let claude_code = processes()
        .into_iter()
        .find(|p| p.pgrp == adapter && p.pid != adapter)
        .expect("the SDK's Claude Code process, in the adapter's group")
        .pid;

    let forward = |run: &str, session: &str, claude_pid: u32| {
        let mut input = daemon::fixture("PreToolUse.json");
        input["session_id"] = session.into();
        input["tool_input"]["command"] = "rm -f precious".into();
        let mut child = Command::new(daemon::forwarder_bin())
            .env("HOOKD_SOCKET", &sdk.daemon.socket)
            .env("HOOKD_RUN_ID", run)
            .env("CLAUDE_PID", claude_pid.to_string())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
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
        String::from_utf8(out.stdout).unwrap()
    };
    let judged = |stdout: &str| stdout.contains(r#""permissionDecision":"deny""#);
    // Judged by the rules: no such run, another session, another process.
    assert!(judged(&forward("no-such-run", &session, claude_code)));
    assert!(judged(&forward(&run_id, "another-session", claude_code)));
    assert!(judged(&forward(&run_id, &session, std::process::id())));
    // From the run's own Claude Code, in its session: a copy.
    assert_eq!(forward(&run_id, &session, claude_code), "");
    let relayed = || -> Vec<Value> {
        sdk.daemon
            .log_lines()
            .into_iter()
            .filter(|l| l["type"] == "event" && l["harness"] == "claude-code")
            .collect()
    };
    daemon::poll_until(
        "the four relayed hooks in the log",
        Duration::from_secs(10),
        || relayed().len() == 4,
    );
    let copies: Vec<Value> = relayed()
        .into_iter()
        .filter(|l| l["copy_of"] == "agent-sdk")
        .collect();
    assert_eq!(copies.len(), 1, "{copies:#?}");
    assert_eq!(copies[0]["run_id"], run_id.as_str());

    let reply = approver
        .call(json!({"type": "decide", "event_id": pending["event"]["id"], "verdict": "deny"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    assert_eq!(frames_until_done(&mut owner).pop().unwrap()["ok"], true);
}

#[test]
fn a_steer_reaches_the_next_model_request_and_status_shows_the_run() {
    if claude::node_absent("a_steer_reaches_the_next_model_request_and_status_shows_the_run") {
        return;
    }
    let marker = format!("steer-marker-{}", std::process::id());
    let sdk = Sdk::start(
        &claude::one_bash_call_script("touch steered.txt"),
        Some(ASK_TOUCH),
        Some("[decisions]\ntimeout = 30\n"),
    );
    let mut approver = sdk.client("approver");
    let ok = approver.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok");
    let mut owner = sdk.client("owner");
    let run_id = sdk.run(&mut owner, json!({"cwd": sdk.project()}));
    let pending = approver.wait_for("the run's pending PreToolUse", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    // What the approver's Runs pane shows.
    let runs = sdk.status()["runs"].clone();
    let run = &runs[0];
    assert_eq!(run["run_id"], run_id.as_str(), "{runs}");
    assert_eq!(run["prompt"], "please run the command");
    assert_eq!(run["state"], "running");
    assert!(run["model"].is_string(), "the session's model: {run}");
    assert!(run["turns"].as_u64().unwrap() >= 1, "{run}");
    assert!(run.get("cost_usd").is_some(), "{run}");

    // Through the command line: `hookd steer RUN_ID TEXT`.
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
    let reply = approver
        .call(json!({"type": "decide", "event_id": pending["short_id"], "verdict": "allow"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let frames = frames_until_done(&mut owner);
    assert_eq!(frames.last().unwrap()["ok"], true, "{:?}", frames.last());
    // The follow-up is in a model request after the one that asked for the tool.
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

    // Steering an ended run, or none at all, says so.
    let ended = approver.call(json!({"type": "steer", "run_id": run_id, "text": "late"}));
    assert_eq!(ended["code"], "invalid_request", "{ended}");
    let unknown = approver.call(json!({"type": "steer", "run_id": "nope", "text": "x"}));
    assert_eq!(unknown["code"], "not_found", "{unknown}");
}

/// `hookd adapter ARGS` with `data` as the data directory.
fn adapter_command(data: &Path, args: &[&str]) -> std::process::Output {
    Command::new(daemon::hookd_bin())
        .arg("adapter")
        .args(args)
        .env("XDG_DATA_HOME", data)
        .env_remove("HOOKD_ADAPTER_DIR")
        .output()
        .unwrap()
}

#[test]
fn an_installed_hookd_runs_the_embedded_adapter_from_its_data_directory() {
    if claude::node_absent("an_installed_hookd_runs_the_embedded_adapter_from_its_data_directory") {
        return;
    }
    require_adapter(); // the npm cache then holds the pinned SDK: offline-safe
    let data = tempfile::tempdir().unwrap();
    let status = |data: &Path| -> Value {
        let out = adapter_command(data, &["status", "--json"]);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let before = status(data.path());
    assert_eq!(before["installed"], false, "{before}");
    let dir = PathBuf::from(before["dir"].as_str().unwrap());
    assert!(
        dir.starts_with(data.path().join("hookd/adapter")),
        "{before}"
    );

    let out = adapter_command(data.path(), &["install"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).ends_with(": installed\n"));
    let after = status(data.path());
    assert_eq!(
        (&after["installed"], &after["embedded"]),
        (&json!(true), &json!(true)),
        "{after}"
    );
    // Nothing but the version's directory is left behind.
    let entries: Vec<_> = std::fs::read_dir(data.path().join("hookd/adapter"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, [dir.file_name().unwrap()]);

    // A second install is a no-op.
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(&dir).unwrap().ino();
    let again = adapter_command(data.path(), &["install"]);
    assert!(again.status.success());
    assert!(String::from_utf8_lossy(&again.stdout).contains("already installed"));
    assert_eq!(std::fs::metadata(&dir).unwrap().ino(), inode);

    // A daemon with no --adapter-dir runs it from there.
    let sdk = Sdk::start_with(
        &claude::one_bash_call_script("echo hi"),
        Some(ALLOW_ECHO),
        None,
        |options, _| {
            options
                .env
                .push(("XDG_DATA_HOME".into(), data.path().display().to_string()))
        },
    );
    assert_eq!(sdk.daemon.status()["adapter_dir"], json!(dir));
    let mut owner = sdk.client("owner");
    sdk.run(
        &mut owner,
        json!({"cwd": sdk.project(), "permission_mode": "bypassPermissions"}),
    );
    let done = frames_until_done(&mut owner).pop().unwrap();
    assert_eq!(done["ok"], true, "{done}\n{}", sdk.daemon.stderr());

    // doctor reports it.
    let out = Command::new(daemon::hookd_bin())
        .args(["doctor", "--json", "--socket"])
        .arg(&sdk.daemon.socket)
        .env("XDG_DATA_HOME", data.path())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "adapter")
        .cloned()
        .unwrap();
    assert_eq!(check["ok"], true, "{check}");
    assert!(
        check["message"].as_str().unwrap().contains("this hookd's"),
        "{check}"
    );
}

#[test]
fn doctor_says_how_to_install_a_missing_adapter() {
    let data = tempfile::tempdir().unwrap();
    let out = Command::new(daemon::hookd_bin())
        .args(["doctor", "--json", "--socket"])
        .arg(data.path().join("no.sock"))
        .env("XDG_DATA_HOME", data.path())
        .env_remove("HOOKD_ADAPTER_DIR")
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "adapter")
        .cloned()
        .unwrap();
    // Optional: a note, not a failure.
    assert_eq!(
        (&check["ok"], &check["note"]),
        (&json!(true), &json!(true)),
        "{check}"
    );
    assert_eq!(
        check["fix"], "`hookd adapter install` to use `hookd run`",
        "{check}"
    );
    let status = adapter_command(data.path(), &["status"]);
    assert_eq!(status.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&status.stdout).contains("hookd adapter install"));
}

#[test]
fn a_runs_start_end_and_hooks_are_exported_to_opentelemetry() {
    let receiver = otlp::Receiver::start();
    let config = format!(
        "[otlp]\nendpoint = \"{}\"\ninterval = 0.05\n",
        receiver.endpoint()
    );
    let sdk = Sdk::start(
        &claude::one_bash_call_script("echo hello > out.txt"),
        Some(ALLOW_ECHO),
        Some(&config),
    );
    let mut owner = sdk.client("owner");
    let run_id = sdk.run(
        &mut owner,
        json!({"cwd": sdk.project(), "permission_mode": "default", "max_turns": 5}),
    );
    let frames = frames_until_done(&mut owner);
    let done = frames.last().unwrap();
    assert_eq!(done["ok"], true, "{done}\n{}", sdk.daemon.stderr());
    let got = receiver.wait_for(Duration::from_secs(30), |r| {
        r.log_records()
            .iter()
            .any(|l| l.event_name == "hookd.run_done")
    });
    let records = got.log_records();
    let of_kind = |name: &str| {
        records
            .iter()
            .filter(|l| l.event_name == name)
            .collect::<Vec<_>>()
    };
    let start = of_kind("hookd.run_start");
    assert_eq!(start.len(), 1);
    assert_eq!(
        otlp::attr_str(&start[0].attributes, "hookd.run.id"),
        Some(run_id.as_str())
    );
    let end = of_kind("hookd.run_done")[0];
    let a = &end.attributes;
    assert_eq!(otlp::attr_str(a, "hookd.run.id"), Some(run_id.as_str()));
    assert_eq!(otlp::attr_str(a, "session.id"), done["session_id"].as_str());
    assert_eq!(
        otlp::attr_int(a, "gen_ai.usage.input_tokens"),
        done["usage"]["input_tokens"].as_i64()
    );
    // The run's transcript stays in the log; its hooks are exported, tied
    // to the run.
    assert!(records
        .iter()
        .all(|l| !l.event_name.contains("sdk_message")));
    let pre_tool_use = got
        .spans()
        .into_iter()
        .find(|s| s.name == "PreToolUse Bash")
        .cloned()
        .or_else(|| {
            receiver
                .wait_for(Duration::from_secs(30), |r| {
                    r.spans().iter().any(|s| s.name == "PreToolUse Bash")
                })
                .spans()
                .into_iter()
                .find(|s| s.name == "PreToolUse Bash")
                .cloned()
        })
        .unwrap();
    assert_eq!(
        otlp::attr_str(&pre_tool_use.attributes, "hookd.run.id"),
        Some(run_id.as_str())
    );
    assert_eq!(
        otlp::attr_str(&pre_tool_use.attributes, "hookd.harness"),
        Some("agent-sdk")
    );
    assert_eq!(
        otlp::attr_str(&pre_tool_use.attributes, "hookd.verdict"),
        Some("allow")
    );
    sdk.wait_no_runs();
}

/// Pi runs, on this harness (a child module: it shares the private helpers).
#[path = "pi.rs"]
mod pi;

/// `hookd run --record` / `--replay` (issue #24).
#[path = "record.rs"]
mod record;

/// The narrator on runs' own messages (issue #24).
#[path = "narrate_runs.rs"]
mod narrate_runs;

/// `hookd abort --compaction` on both runtimes (issue #24).
#[path = "compaction.rs"]
mod compaction;
