//! Approvers are told of asks (migration 0101, `NOTIFY
//! hookd_ask_published`): the Team pane of `hookd approve --team`, its line
//! mode (`--plain --team`) and the dashboard's data source LISTEN on a
//! connection of their own (`hookd_team::asks_link`) and read the open
//! asks back at once. All run with their fallback poll set to an
//! hour (`HOOKD_TEAM_ASKS_POLL=3600`), so an ask that shows up within the
//! test's bound was brought by the announcement, not the poll; a dropped
//! LISTEN connection (terminated by the database) is made again and the
//! next ask still shows.

use std::ffi::OsStr;
use std::time::Duration;

use serde_json::Value;

use crate::support::daemon::hookd_bin;
use crate::support::plain::Plain;
use crate::support::postgres::{Postgres, DB};
use crate::support::process::{self, poll_for};
use crate::support::tmux::Tmux;
use crate::team_approvals::approver;
use crate::team_approvals_rls::cluster;
use crate::team_approve_plain::plain_approver_with_env;
use crate::team_dashboard::Dashboard;

const WAIT: Duration = Duration::from_secs(20);
const A: &str = "0193a0c4-0000-7000-8000-00000000000a";
const B: &str = "0193a0c4-0000-7000-8000-00000000000b";
const C: &str = "0193a0c4-0000-7000-8000-00000000000c";

/// Publishes an ask as the machine `laptop` (its own role), as the
/// daemon's `approvals::publish` does, with `command` as its input.
fn publish(pg: &Postgres, id: &str, short: &str, command: &str, approvals: u32) {
    pg.psql(
        "laptop",
        DB,
        &format!(
            "INSERT INTO hookd.asks (id, machine, short_id, deadline, agent, event, rule_ids, \
             reason, approvals_required) VALUES ('{id}', 'laptop', '{short}', \
             now() + interval '10 min', 'claude-code', \
             '{{\"tool\":\"Bash\",\"input\":{{\"command\":\"{command}\"}}}}', '{{push}}', \
             'pushing needs the team', {approvals})"
        ),
    );
}

/// Ends every backend of `role` (its LISTEN connection among them).
fn terminate(pg: &Postgres, role: &str) {
    let ended = pg.admin(&format!(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE usename = '{role}') t"
    ));
    assert_ne!(ended, "0", "no backend of {role} to end");
}

#[test]
fn the_team_pane_shows_an_announced_ask_without_waiting_for_its_poll() {
    let Some(pg) = cluster("the_team_pane_shows_an_announced_ask") else {
        return;
    };
    let alice = approver(&pg, "alice");
    let socket = pg.path().join("alice-box.sock");
    let tmux = Tmux::start(
        &hookd_bin(),
        [
            OsStr::new("approve"),
            OsStr::new("--socket"),
            socket.as_os_str(),
            OsStr::new("--team"),
            OsStr::new("--config"),
            alice.as_os_str(),
        ],
        &[("HOOKD_TEAM_ASKS_POLL", OsStr::new("3600"))],
    );
    // The first read is done, on the connection that LISTENs.
    tmux.wait_for("no team ask is open", WAIT);

    publish(&pg, A, "aaaaa", "git push origin main", 2);
    tmux.wait_until(WAIT, "the announced ask", |s| {
        s.contains("Team asks (1)")
            && s.contains("aaaaa  claude-code on laptop  rule push")
            && s.contains("allows 0/2")
            && s.contains("Bash: git push origin main")
    });
    // Another approver's allow is announced too (the allows so far).
    pg.psql(
        "bob",
        DB,
        &format!("INSERT INTO hookd.answers (ask, verdict) VALUES ('{A}', 'allow')"),
    );
    tmux.wait_for("allows 1/2 (bob)", WAIT);
    // The machine closing it (a local answer first) takes it away.
    pg.psql(
        "laptop",
        DB,
        &format!("UPDATE hookd.asks SET closed = 'client:tui' WHERE id = '{A}'"),
    );
    tmux.wait_for("no team ask is open", WAIT);

    // The database drops the pane's connection: it is noticed and made
    // again (one second later), and the next ask is announced to it.
    terminate(&pg, "alice");
    std::thread::sleep(Duration::from_secs(3));
    publish(&pg, B, "bbbbb", "git push --force origin main", 1);
    tmux.wait_for("Bash: git push --force origin main", WAIT);
    let screen = tmux.wait_for("Team asks (1)", WAIT);
    assert!(!screen.contains("aaaaa"), "{screen}");
}

/// `role`'s one backend as `pid query_start` (when its last query
/// started).
fn last_query(pg: &Postgres, role: &str) -> String {
    let rows = pg.admin(&format!(
        "SELECT pid || ' ' || query_start FROM pg_stat_activity WHERE usename = '{role}'"
    ));
    assert_eq!(rows.lines().count(), 1, "one connection of {role}: {rows}");
    rows
}

#[test]
fn line_mode_prints_an_announced_ask_without_waiting_for_its_poll() {
    let Some(pg) = cluster("line_mode_prints_an_announced_ask") else {
        return;
    };
    let alice = approver(&pg, "alice");
    let mut plain = plain_approver_with_env(
        &pg,
        &pg.path().join("alice-box.sock"),
        &alice,
        &[("HOOKD_TEAM_ASKS_POLL", "3600")],
    );
    // Lines are read once the first read is done (no daemon on this box).
    plain.say("y zzzzz");
    plain.expect("no team ask is open");

    // Idle, line mode asks the database nothing: its one connection's
    // last query stays the first read (line mode used to read every
    // second).
    let idle = last_query(&pg, "alice");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(last_query(&pg, "alice"), idle, "no poll while idle");

    // The poll is an hour away: the announcement brings it, read on the
    // connection that LISTENs.
    publish(&pg, A, "aaaaa", "git push origin main", 2);
    plain.expect("team ask aaaaa  claude-code on laptop  rule push");
    plain.expect("  Bash: git push origin main");
    let read = last_query(&pg, "alice");
    assert_ne!(read, idle, "read again on the announcement");
    assert_eq!(
        read.split(' ').next(),
        idle.split(' ').next(),
        "on the same connection"
    );
    // Another approver's allow, then the machine closing it.
    pg.psql(
        "bob",
        DB,
        &format!("INSERT INTO hookd.answers (ask, verdict) VALUES ('{A}', 'allow')"),
    );
    plain.expect("team ask aaaaa: allowed by 1 of 2 (bob)");
    pg.psql(
        "laptop",
        DB,
        &format!("UPDATE hookd.asks SET closed = 'client:tui' WHERE id = '{A}'"),
    );
    plain.expect("team ask aaaaa: no longer open");

    // The database drops line mode's connection: made again at once (the
    // database is up, so no `team:` failure is said), and the next ask is
    // announced on the new one (or read right after it connected).
    terminate(&pg, "alice");
    publish(&pg, B, "bbbbb", "git push --force origin main", 1);
    let lines = plain.expect_lines("team ask bbbbb  claude-code on laptop");
    assert!(
        !lines.iter().any(|l| l.starts_with("team: ")),
        "a reconnect that succeeds says nothing: {lines:?}"
    );
    plain.expect("  Bash: git push --force origin main");
    // And the new connection is listening: a third ask, announced.
    publish(&pg, C, "ccccc", "git push origin v2", 1);
    plain.expect("team ask ccccc  claude-code on laptop");
}

/// `hookd team pending --follow` as `config`'s role (`extra` args more),
/// with the fallback poll an hour away; its stdout's lines.
fn follower(pg: &Postgres, config: &std::path::Path, extra: &[&str]) -> Plain {
    let mut command = std::process::Command::new(hookd_bin());
    process::private_home(&mut command, &pg.path().join("follower"));
    command
        .args(["team", "pending", "--follow", "--config"])
        .arg(config)
        .args(extra)
        .env("HOOKD_TEAM_ASKS_POLL", "3600")
        .env_remove("PGHOST")
        .env_remove("PGUSER")
        .env_remove("PGSERVICE");
    Plain::spawn(&mut command)
}

#[test]
fn team_pending_follow_prints_each_announced_change_until_a_signal() {
    let Some(pg) = cluster("team_pending_follow") else {
        return;
    };
    let alice = approver(&pg, "alice");
    let mut text = follower(&pg, &alice, &[]);
    let mut json = follower(&pg, &alice, &["--json"]);
    text.expect("following the open team asks on");
    text.expect("no team asks open");
    let first: Value = serde_json::from_str(&json.expect("{")).unwrap();
    assert_eq!(first["change"], "none_open", "{first}");

    // The poll is an hour away: each change comes by announcement.
    publish(&pg, A, "aaaaa", "git push origin main", 2);
    text.expect("aaaaa  claude-code on laptop  rule push  ");
    text.expect("    Bash: git push origin main");
    text.expect(&format!("    id: {A}"));
    let opened: Value = serde_json::from_str(&json.expect("{")).unwrap();
    assert_eq!(opened["change"], "opened", "{opened}");
    assert_eq!(opened["ask"]["id"], A, "{opened}");
    assert_eq!(opened["ask"]["input"]["command"], "git push origin main");
    pg.psql(
        "bob",
        DB,
        &format!("INSERT INTO hookd.answers (ask, verdict) VALUES ('{A}', 'allow')"),
    );
    text.expect("aaaaa: allowed by 1 of 2 (bob)");
    let allowed: Value = serde_json::from_str(&json.expect("{")).unwrap();
    assert_eq!(allowed["change"], "allowed", "{allowed}");
    assert_eq!(
        allowed["allowed_by"],
        serde_json::json!(["bob"]),
        "{allowed}"
    );
    pg.psql(
        "laptop",
        DB,
        &format!("UPDATE hookd.asks SET closed = 'client:tui' WHERE id = '{A}'"),
    );
    text.expect("aaaaa: no longer open");
    let gone: Value = serde_json::from_str(&json.expect("{")).unwrap();
    assert_eq!(gone["change"], "no_longer_open", "{gone}");

    // Interrupted, it ends with status 0.
    for plain in [&mut text, &mut json] {
        let pid = nix::unistd::Pid::from_raw(plain.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
        let status = process::wait_with_deadline(&mut plain.child, WAIT).expect("it ended");
        assert_eq!(status.code(), Some(0), "{status:?}");
    }
}

/// `GET /api/asks/changes?after=N` until its asks satisfy `done`, at most
/// `rounds` long polls; returns the last answer.
fn changes_until(
    dash: &Dashboard,
    after: &mut u64,
    rounds: usize,
    done: impl Fn(&[Value]) -> bool,
) -> Value {
    let mut last = Value::Null;
    for _ in 0..rounds {
        last = dash.api(&format!("/api/asks/changes?after={after}"));
        *after = last["generation"].as_u64().unwrap();
        if last["error"].is_null() && done(last["asks"].as_array().unwrap()) {
            return last;
        }
    }
    panic!("the asks never came to what the test waits for: {last}");
}

#[test]
fn the_dashboards_asks_follow_the_announcements_without_waiting_for_its_poll() {
    let Some(pg) = cluster("the_dashboards_asks_follow_the_announcements") else {
        return;
    };
    let alice = approver(&pg, "alice");
    let dash = Dashboard::start_with_env(&pg, &alice, &[("HOOKD_TEAM_ASKS_POLL", "3600")]);
    // The first read: nothing open.
    let mut after = 0;
    let first = changes_until(&dash, &mut after, 1, |asks| asks.is_empty());
    assert_eq!(first["generation"], 1, "{first}");

    publish(&pg, A, "aaaaa", "git push origin main", 1);
    // One long poll (15 s at most) brings it: the poll is an hour away.
    let seen = changes_until(&dash, &mut after, 1, |asks| asks.len() == 1);
    let ask = &seen["asks"][0];
    assert_eq!(ask["id"], A, "{seen}");
    assert_eq!(ask["input"]["command"], "git push origin main", "{seen}");
    // The long poll carries what `/api/asks` reads.
    assert_eq!(dash.api("/api/asks")[0]["id"], A);

    // Decided by an approver: it leaves the open asks at once.
    pg.psql(
        "bob",
        DB,
        &format!("INSERT INTO hookd.answers (ask, verdict, reason) VALUES ('{A}', 'deny', 'no')"),
    );
    changes_until(&dash, &mut after, 1, |asks| asks.is_empty());

    // The follower's connection dropped by the database: noticed (the
    // error is a generation of its own), made again, and the next ask is
    // announced to the new connection.
    terminate(&pg, "alice");
    let back = poll_for("the follower listening again", WAIT, || {
        let v = dash.api(&format!("/api/asks/changes?after={after}"));
        after = v["generation"].as_u64().unwrap();
        v["error"].is_null().then_some(v)
    });
    assert_eq!(back["asks"], Value::Array(vec![]), "{back}");
    publish(&pg, C, "ccccc", "git push origin v2", 1);
    let seen = changes_until(&dash, &mut after, 1, |asks| asks.len() == 1);
    assert_eq!(seen["asks"][0]["id"], C, "{seen}");
}
