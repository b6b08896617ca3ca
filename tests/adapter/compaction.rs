//! `hookd abort --compaction RUN` (the `abort` frame's `compaction`):
//! through the daemon to the run's adapter, on both runtimes. Pi calls its
//! session's `abortCompaction()` (and says whether one was under way); the
//! Claude Agent SDK has no such call, and its adapter says so. Either way
//! the run goes on. (A real compaction needs a context near the model's
//! window, 200k tokens here: these runs have none under way.)

use super::*;

/// `hookd abort ARGS` against `sdk`'s daemon.
fn abort_cli(sdk: &Sdk, args: &[&str]) -> std::process::Output {
    Command::new(daemon::hookd_bin())
        .arg("abort")
        .args(args)
        .arg("--socket")
        .arg(&sdk.daemon.socket)
        .output()
        .unwrap()
}

/// Starts `run` on `sdk`, waits for its ask, aborts its compaction from the
/// command line, sees the adapter's `said`, then allows the ask: the run
/// ends well.
fn compaction_aborted_mid_run(sdk: &Sdk, run: Value, said: &str) {
    let mut approver = sdk.client("approver");
    // A Pi session takes seconds to start on a loaded machine.
    approver.set_read_timeout(Duration::from_secs(60));
    let ok = approver.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok");
    let mut owner = sdk.client("owner");
    let reply = owner.call(run);
    assert_eq!(reply["type"], "ok", "{reply}\n{}", sdk.daemon.stderr());
    let run_id = reply["result"]["run_id"].as_str().unwrap().to_string();
    let pending = approver.wait_for("the run's pending tool call", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let out = abort_cli(sdk, &[&run_id, "--compaction"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    daemon::poll_reporting(
        "the adapter's word on abort_compaction",
        Duration::from_secs(10),
        || {
            let stderr = sdk.daemon.stderr();
            if stderr.contains(said) {
                return Ok(());
            }
            Err(stderr)
        },
    );
    // The run was not aborted.
    let runs = sdk.status()["runs"].clone();
    assert_eq!(runs[0]["state"], "running", "{runs}");
    let reply = approver.call(json!({"type": "decide", "event_id": pending["event"]["id"],
                                     "verdict": "allow", "reason": "approved by the test"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    let frames = frames_until_done(&mut owner);
    let done = frames.last().unwrap();
    assert_eq!(done["ok"], true, "{done}\n{}", sdk.daemon.stderr());
    assert!(sdk
        .daemon
        .stderr()
        .contains("aborting the run's compaction"));

    // An ended run: not found, said plainly.
    let out = abort_cli(sdk, &[&run_id, "--compaction"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("no run {run_id}")), "{stderr}");
}

#[test]
fn abort_compaction_reaches_a_pi_run_which_goes_on() {
    if claude::node_absent("abort_compaction_reaches_a_pi_run_which_goes_on") {
        return;
    }
    let script = json!({
        "turns": [
            {"content": [{"type": "tool_call", "name": "bash", "input": {"command": "touch made-by-pi.txt"}}]},
            {"content": [{"type": "text", "text": "done"}]}
        ],
        "default_text": "done"
    });
    let sdk = super::pi::pi_daemon(&script, Some(ASK_TOUCH), "[decisions]\ntimeout = 60\n");
    let project = sdk.project();
    compaction_aborted_mid_run(
        &sdk,
        json!({"type": "run", "prompt": "please touch", "runtime": "pi",
               "options": {"cwd": project, "model": "mock/claude-mock"}}),
        "abort_compaction: no compaction under way",
    );
    assert!(project.join("made-by-pi.txt").exists());
}

#[test]
fn abort_compaction_on_an_sdk_run_says_the_sdk_has_no_such_call() {
    if claude::node_absent("abort_compaction_on_an_sdk_run_says_the_sdk_has_no_such_call") {
        return;
    }
    let sdk = Sdk::start(
        &claude::one_bash_call_script("touch made-by-run.txt"),
        Some(ASK_TOUCH),
        Some("[decisions]\ntimeout = 60\n"),
    );
    let project = sdk.project();
    compaction_aborted_mid_run(
        &sdk,
        json!({"type": "run", "prompt": "please touch", "options": {"cwd": project}}),
        "abort_compaction: the Claude Agent SDK has no call to stop a compaction; nothing done",
    );
    assert!(project.join("made-by-run.txt").exists());
}
