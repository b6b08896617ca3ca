//! Team approvals with the real Claude Code CLI: the model's Bash call hits
//! an `escalate = "team"` rule on the machine's daemon, and an approver in a
//! second process (`hookd team answer`, under the approver's own role)
//! decides whether the tool runs. The model API is the scripted mock.

use std::thread;

use crate::support::claude::{self, ClaudeOutput, ClaudeRun, MockApi};
use crate::support::daemon::{self, Daemon};
use crate::support::postgres::Postgres;
use crate::team_approvals::{answer, approver, laptop_daemon, open_asks};
use crate::team_approvals_rls::cluster;
use crate::team_init::text;

/// The machine `laptop`'s daemon: `touch` asks, escalated to the team;
/// `mkdir` needs two different approvers.
fn daemon(pg: &Postgres) -> Daemon {
    let rules = "[[rule]]\nid = \"touch-needs-team\"\naction = \"ask\"\ntool = \"Bash(touch *)\"\n\
                 reason = \"creating files needs a teammate\"\nescalate = \"team\"\n\n\
                 [[rule]]\nid = \"mkdir-needs-two\"\naction = \"ask\"\ntool = \"Bash(mkdir *)\"\n\
                 reason = \"two approvers\"\nescalate = \"team\"\napprovals_required = 2\n";
    laptop_daemon(pg, rules, "")
}

/// Runs `claude -p` in the background: its one Bash call is `command`, its
/// PreToolUse hook the real forwarder on `d`'s socket.
fn claude_in_background(
    d: &Daemon,
    mock: &MockApi,
) -> thread::JoinHandle<(ClaudeRun, ClaudeOutput)> {
    let run = ClaudeRun::new(mock).env("HOOKD_SOCKET", &d.socket);
    let forwarder = claude::command_hook(daemon::forwarder_bin(), &["--timeout", "45"]);
    run.write_settings(&claude::hooks_settings(&["PreToolUse"], forwarder));
    thread::spawn(move || {
        let out = run.run("please run the command");
        (run, out)
    })
}

#[test]
fn claude_codes_bash_call_runs_only_when_a_team_approver_allows_it() {
    let Some(pg) = cluster("claude_codes_bash_call_runs_only") else {
        return;
    };
    let d = daemon(&pg);
    let alice = approver(&pg, "alice");
    let bob = approver(&pg, "bob");

    // Allowed by an approver: the tool runs, the file is there.
    let mock = MockApi::start(&claude::one_bash_call_script("touch approved.txt"));
    let claude = claude_in_background(&d, &mock);
    let asks = open_asks(&pg, &alice, 1);
    let ask = &asks[0];
    assert_eq!(ask["machine"], "laptop");
    assert_eq!(ask["agent"], "claude-code");
    assert_eq!(ask["rule_ids"], serde_json::json!(["touch-needs-team"]));
    assert_eq!(ask["reason"], "creating files needs a teammate");
    assert_eq!(ask["tool"], "Bash");
    assert_eq!(ask["input"]["command"], "touch approved.txt");
    assert!(!claude.is_finished(), "the agent did not wait for the team");
    let out = answer(
        &pg,
        &alice,
        ask["short_id"].as_str().unwrap(),
        "allow",
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    let (run, out) = claude.join().unwrap();
    out.assert_success();
    assert!(
        run.project_dir().join("approved.txt").exists(),
        "the approved tool did not run\n{}\n{}",
        out.describe(),
        d.stderr()
    );
    let result = mock.expect_tool_result("toolu_mock_0_");
    assert!(!result.is_error, "{:?}", result.raw);

    // Denied with a reason: the tool never runs and the model is told why.
    let mock = MockApi::start(&claude::one_bash_call_script("touch denied.txt"));
    let claude = claude_in_background(&d, &mock);
    let asks = open_asks(&pg, &bob, 1);
    assert_eq!(asks[0]["input"]["command"], "touch denied.txt");
    let out = answer(
        &pg,
        &bob,
        asks[0]["id"].as_str().unwrap(),
        "deny",
        Some("no new files during the freeze"),
    );
    assert!(out.status.success(), "{}", text(&out));
    let (run, out) = claude.join().unwrap();
    out.assert_success();
    assert!(
        !run.project_dir().join("denied.txt").exists(),
        "the denied tool ran\n{}",
        out.describe()
    );
    let refusal = mock.expect_refusal("no new files during the freeze");
    assert!(refusal.content.contains("bob"), "{:?}", refusal.raw);

    // The two-person rule: one allow leaves the agent waiting; a second,
    // different approver's lets the tool run.
    let mock = MockApi::start(&claude::one_bash_call_script("mkdir twice-approved"));
    let claude = claude_in_background(&d, &mock);
    let id = open_asks(&pg, &alice, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let out = answer(&pg, &alice, &id, "allow", None);
    assert!(text(&out).contains("1 of 2"), "{}", text(&out));
    assert_eq!(
        open_asks(&pg, &bob, 1)[0]["allowed_by"],
        serde_json::json!(["alice"])
    );
    assert!(
        !claude.is_finished(),
        "one approval of two let the tool run"
    );
    let out = answer(&pg, &bob, &id, "allow", None);
    assert!(out.status.success(), "{}", text(&out));
    let (run, out) = claude.join().unwrap();
    out.assert_success();
    assert!(
        run.project_dir().join("twice-approved").is_dir(),
        "the tool two approvers allowed did not run\n{}",
        out.describe()
    );

    let status = d.status();
    assert_eq!(status["team"]["escalated"], 3, "{status}");
    assert_eq!(status["team"]["team_answers"], 3, "{status}");
    let verdicts: Vec<String> = d
        .wait_decisions(3)
        .iter()
        .map(|l| l["verdict"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(verdicts, ["allow", "deny", "allow"]);
}
