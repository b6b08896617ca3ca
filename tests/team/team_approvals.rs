//! Team approvals end to end: a real `hookd serve` with `[team]` on a real
//! PostgreSQL, the real forwarder asking, approvers answering with `hookd
//! team answer` under their own roles.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use serde_json::{json, Value};

use crate::support::daemon::{
    bash, forward_in_background, permission_decision, stdout_json, Daemon, DaemonOptions, RawClient,
};
use crate::support::postgres::{Postgres, DB};
use crate::support::process::poll_for;
use crate::team_approvals_rls::cluster;
use crate::team_init::{config, hookd, text};

/// A daemon on `laptop` whose rule `push` asks about `git push` and
/// escalates it to the team, needing `approvals` approvers.
pub(crate) fn daemon(pg: &Postgres, approvals: u32, decisions: &str) -> Daemon {
    let rules = format!(
        "[[rule]]\nid = \"push\"\naction = \"ask\"\ntool = \"Bash(git push *)\"\n\
         reason = \"pushing needs the team\"\nescalate = \"team\"\napprovals_required = {approvals}\n\n\
         [[rule]]\nid = \"ls\"\naction = \"allow\"\ntool = \"Bash(ls *)\"\n"
    );
    laptop_daemon(pg, &rules, decisions)
}

/// A daemon on machine `laptop` with `rules` and `[team]` (then `config`,
/// more of config.toml), once team approvals listen.
pub(crate) fn laptop_daemon(pg: &Postgres, rules: &str, config: &str) -> Daemon {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(rules.to_string()),
        config: Some(format!(
            "[team]\ndatabase = \"{}\"\nmachine = \"laptop\"\n{config}",
            pg.conninfo("laptop")
        )),
        ..Default::default()
    });
    d.wait_for_status("team approvals listening", |s| {
        s["team"]["approvals_listening"] == true
    });
    d
}

/// An approver's config file.
pub(crate) fn approver(pg: &Postgres, role: &str) -> PathBuf {
    config(pg, role, role, &format!("{role}-box"))
}

/// `hookd team pending --json` as `who`, once it lists `n` asks.
pub(crate) fn open_asks(pg: &Postgres, who: &Path, n: usize) -> Vec<Value> {
    poll_for(
        &format!("{n} open team asks"),
        Duration::from_secs(20),
        || {
            let out = hookd(pg, &["team", "pending", "--json"], who);
            assert!(out.status.success(), "{}", text(&out));
            let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
            (list.len() == n).then_some(list)
        },
    )
}

pub(crate) fn answer(
    pg: &Postgres,
    who: &Path,
    id: &str,
    verdict: &str,
    reason: Option<&str>,
) -> Output {
    let mut args = vec!["team", "answer", id, verdict];
    if let Some(r) = reason {
        args.extend(["--reason", r]);
    }
    hookd(pg, &args, who)
}

pub(crate) fn reason(out: &Output) -> String {
    stdout_json(out)["hookSpecificOutput"]["permissionDecisionReason"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_approver_allows_or_denies_an_escalated_ask_and_the_forwarder_gets_it() {
    let Some(pg) = cluster("an_approver_allows_or_denies") else {
        return;
    };
    let d = daemon(&pg, 1, "");
    let alice = approver(&pg, "alice");
    let bob = approver(&pg, "bob");

    // Nobody local is subscribed: the ask waits for the team alone.
    let fwd = forward_in_background(
        &d.socket,
        &bash("git push origin main"),
        &["--timeout", "30"],
    );
    let asks = open_asks(&pg, &alice, 1);
    let ask = &asks[0];
    assert_eq!(ask["machine"], "laptop");
    assert_eq!(ask["agent"], "claude-code");
    assert_eq!(ask["rule_ids"], json!(["push"]));
    assert_eq!(ask["reason"], "pushing needs the team");
    assert_eq!(ask["tool"], "Bash");
    assert_eq!(ask["input"]["command"], "git push origin main");
    assert_eq!(ask["approvals_required"], 1);
    let left = ask["seconds_left"].as_f64().unwrap();
    assert!(left > 0.0 && left <= 30.0, "{left}");
    let listed = hookd(&pg, &["team", "pending"], &alice);
    assert!(
        text(&listed).contains("git push origin main") && text(&listed).contains("on laptop"),
        "{}",
        text(&listed)
    );

    let out = answer(
        &pg,
        &alice,
        ask["short_id"].as_str().unwrap(),
        "allow",
        None,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("allow (decided)"), "{}", text(&out));
    let out = fwd.join().unwrap();
    assert_eq!(permission_decision(&out), "allow", "{}", d.stderr());

    // A deny reaches the agent with the approver's reason.
    let fwd = forward_in_background(
        &d.socket,
        &bash("git push --force origin main"),
        &["--timeout", "30"],
    );
    let asks = open_asks(&pg, &bob, 1);
    let out = answer(
        &pg,
        &bob,
        asks[0]["id"].as_str().unwrap(),
        "deny",
        Some("not on a Friday"),
    );
    assert!(out.status.success(), "{}", text(&out));
    let out = fwd.join().unwrap();
    assert_eq!(permission_decision(&out), "deny");
    assert!(reason(&out).contains("not on a Friday"), "{}", reason(&out));
    assert!(reason(&out).contains("bob"), "{}", reason(&out));

    // Decided: no more answers, said plainly.
    let out = answer(&pg, &alice, asks[0]["id"].as_str().unwrap(), "allow", None);
    assert!(!out.status.success());
    assert!(text(&out).contains("no longer open"), "{}", text(&out));

    let status = d.status();
    assert_eq!(status["team"]["escalated"], 2, "{status}");
    assert_eq!(status["team"]["team_answers"], 2, "{status}");
}

#[test]
fn two_different_approvers_are_needed_and_a_machine_cannot_answer() {
    let Some(pg) = cluster("two_different_approvers_are_needed") else {
        return;
    };
    let d = daemon(&pg, 2, "");
    let alice = approver(&pg, "alice");
    let bob = approver(&pg, "bob");
    let laptop = config(&pg, "laptop", "laptop", "laptop");

    let fwd = forward_in_background(
        &d.socket,
        &bash("git push origin main"),
        &["--timeout", "40"],
    );
    let id = open_asks(&pg, &alice, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();

    // The machine's own role is refused by the database.
    let out = answer(&pg, &laptop, &id, "allow", None);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("refused") && text(&out).contains("permission denied"),
        "{}",
        text(&out)
    );

    // One approval of two: still open; the same approver again counts once.
    let out = answer(&pg, &alice, &id, "allow", None);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("1 of 2"), "{}", text(&out));
    let out = answer(&pg, &alice, &id, "allow", None);
    assert!(!out.status.success());
    assert!(text(&out).contains("already"), "{}", text(&out));
    let open = open_asks(&pg, &bob, 1);
    assert_eq!(open[0]["allowed_by"], json!(["alice"]));
    assert!(!fwd.is_finished(), "one approval of two decided it");

    // A second, different approver settles it.
    let out = answer(&pg, &bob, &id, "allow", Some("reviewed"));
    assert!(out.status.success(), "{}", text(&out));
    let out = fwd.join().unwrap();
    assert_eq!(permission_decision(&out), "allow");
    assert_eq!(
        pg.admin(&format!(
            "SELECT array_to_string(decided_by, ',') FROM hookd.asks WHERE id = '{id}'"
        )),
        "alice,bob"
    );
}

#[test]
fn a_local_answer_first_wins_and_settles_the_team_row() {
    let Some(pg) = cluster("a_local_answer_first_wins") else {
        return;
    };
    let d = daemon(&pg, 1, "");
    let alice = approver(&pg, "alice");
    let mut client = RawClient::hello(&d.socket, "tui");
    let ok = client.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok");

    let fwd = forward_in_background(
        &d.socket,
        &bash("git push origin main"),
        &["--timeout", "30"],
    );
    let pending = client.wait_for("the pending ask", |f| f["pending"] == true);
    assert_eq!(pending["asked_by"]["team_approvals"], 1, "{pending}");
    let id = pending["event"]["id"].as_str().unwrap().to_string();
    open_asks(&pg, &alice, 1);
    let decided = client.call(json!({"type": "decide", "event_id": id, "verdict": "deny"}));
    assert_eq!(decided["type"], "ok", "{decided}");
    assert_eq!(permission_decision(&fwd.join().unwrap()), "deny");
    poll_for("the team row closed", Duration::from_secs(20), || {
        let closed = pg.admin(&format!("SELECT closed FROM hookd.asks WHERE id = '{id}'"));
        (closed == "client:tui").then_some(())
    });
    open_asks(&pg, &alice, 0);
    let out = answer(&pg, &alice, &id, "allow", None);
    assert!(
        text(&out).contains("ended on its machine"),
        "{}",
        text(&out)
    );
    assert_eq!(d.status()["team"]["settled_locally"], 1);
}

#[test]
fn the_database_stopping_mid_ask_never_holds_a_hook_past_its_deadline() {
    let Some(mut pg) = cluster("the_database_stopping_mid_ask") else {
        return;
    };
    let d = daemon(&pg, 1, "");
    let alice = approver(&pg, "alice");
    let fwd = forward_in_background(
        &d.socket,
        &bash("git push origin main"),
        &["--timeout", "4"],
    );
    open_asks(&pg, &alice, 1);
    pg.stop();
    // The hook falls back at its own deadline (the agent's own prompt).
    let out = fwd.join().unwrap();
    assert_eq!(permission_decision(&out), "ask", "{}", d.stderr());
    // Other hooks are answered as ever.
    let out = d.forward(&bash("ls -la"), &["--timeout", "5"]);
    assert_eq!(permission_decision(&out), "allow");
    let status = d.wait_for_status("the loss noticed", |s| {
        s["team"]["approvals_listening"] == false
            && s["team"]["approvals_failures"].as_u64() > Some(0)
    });
    assert!(
        status["team"]["approvals_last_error"].is_string(),
        "{status}"
    );
    // With the team away and nobody local, an escalated ask falls back at
    // once rather than waiting for a team that cannot answer.
    let out = d.forward(&bash("git push origin dev"), &["--timeout", "20"]);
    assert_eq!(permission_decision(&out), "ask");
    let stderr = d.stderr();
    assert_eq!(
        stderr
            .matches("team approvals: database unreachable")
            .count(),
        1,
        "logged once per streak: {stderr}"
    );
    pg.start_server();
    d.wait_for_status("listening again", |s| {
        s["team"]["approvals_listening"] == true
    });
}

#[test]
fn an_answer_given_while_the_listen_connection_was_down_is_still_read() {
    let Some(mut pg) = cluster("an_answer_given_while_the_listen") else {
        return;
    };
    let d = daemon(&pg, 1, "");
    let alice = approver(&pg, "alice");
    let fwd = forward_in_background(
        &d.socket,
        &bash("git push origin main"),
        &["--timeout", "60"],
    );
    let id = open_asks(&pg, &alice, 1)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Restart the cluster: the LISTEN connection drops. The machine's role
    // may not log in until the answer is in, so no notification can reach
    // the daemon: it must read the table on reconnecting.
    pg.admin("ALTER ROLE laptop NOLOGIN");
    pg.stop();
    d.wait_for_status("the LISTEN connection lost", |s| {
        s["team"]["approvals_listening"] == false
    });
    pg.start_server();
    pg.psql(
        "alice",
        DB,
        &format!("INSERT INTO hookd.answers (ask, verdict) VALUES ('{id}', 'allow')"),
    );
    assert_eq!(
        pg.admin(&format!("SELECT verdict FROM hookd.asks WHERE id = '{id}'")),
        "allow"
    );
    assert!(!fwd.is_finished(), "answered before the daemon was back");
    assert_eq!(d.status()["team"]["approvals_listening"], false);
    pg.admin("ALTER ROLE laptop LOGIN");
    let out = fwd.join().unwrap();
    assert_eq!(permission_decision(&out), "allow", "{}", d.stderr());
    let status = d.wait_for_status("listening again", |s| {
        s["team"]["approvals_listening"] == true
    });
    assert_eq!(status["team"]["team_answers"], 1);
    assert!(status["team"]["approvals_failures"].as_u64().unwrap() >= 1);
}

#[test]
fn escalate_after_sends_an_unanswered_ask_to_the_team() {
    let Some(pg) = cluster("escalate_after_sends") else {
        return;
    };
    let rules = "[[rule]]\nid = \"touch\"\naction = \"ask\"\ntool = \"Bash(touch *)\"\n";
    let d = laptop_daemon(&pg, rules, "[decisions]\nescalate_after = 1\n");
    let alice = approver(&pg, "alice");
    // A local client is subscribed (so the ask waits), but does not answer.
    let mut client = RawClient::hello(&d.socket, "tui");
    client.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    let fwd = forward_in_background(&d.socket, &bash("touch x"), &["--timeout", "30"]);
    client.wait_for("the pending ask", |f| f["pending"] == true);
    let ask = &open_asks(&pg, &alice, 1)[0];
    assert_eq!(ask["rule_ids"], json!(["touch"]));
    let out = answer(&pg, &alice, ask["id"].as_str().unwrap(), "allow", None);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(permission_decision(&fwd.join().unwrap()), "allow");
}
