//! The fleet: a real `hookd serve` with `[team]` keeps its row in a real
//! PostgreSQL current — on start, on a change of policy — and rides out
//! the database stopping and starting again.

use std::time::Duration;

use crate::support::daemon::{rule_toml, Daemon, DaemonOptions};
use crate::support::postgres::{Postgres, ADMIN};
use crate::support::process::poll_for;

/// The fleet row of `machine` as JSON, read as the superuser.
fn row(pg: &Postgres, machine: &str) -> Option<serde_json::Value> {
    let out = pg.admin(&format!(
        "SELECT row_to_json(f) FROM hookd.fleet f WHERE machine = '{machine}'"
    ));
    (!out.is_empty()).then(|| serde_json::from_str(&out).unwrap())
}

#[test]
fn a_daemon_keeps_its_fleet_row_current_through_a_database_restart() {
    let Some(mut pg) = Postgres::start("a_daemon_keeps_its_fleet_row_current") else {
        return;
    };
    pg.team_init_laptop(&pg.conninfo(ADMIN));

    let daemon = Daemon::start_with(DaemonOptions {
        rules: Some(rule_toml("r1", "allow", "Read")),
        config: Some(format!(
            "[team]\ndatabase = \"{}\"\nmachine = \"laptop-1\"\n",
            pg.conninfo("laptop_1")
        )),
        ..Default::default()
    });
    let first = poll_for("the fleet row", Duration::from_secs(30), || {
        row(&pg, "laptop-1")
    });
    let status = daemon.status();
    assert_eq!(first["version"], status["version"]);
    assert_eq!(first["db_role"], "laptop_1");
    assert_eq!(first["policy"]["revision"], status["rules"]["revision"]);
    assert!(first["policy"]["revision"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    assert_eq!(status["team"]["machine"], "laptop-1");
    assert_eq!(status["team"]["connected"], true);
    assert!(status["team"]["fleet_updates"].as_u64().unwrap() >= 1);

    // A new policy: the row follows.
    let rules = daemon.dir.path().join("rules.toml");
    std::fs::write(&rules, rule_toml("r2", "deny", "Write")).unwrap();
    let revision = poll_for("the new revision", Duration::from_secs(30), || {
        let r = daemon.status()["rules"]["revision"].clone();
        (r != first["policy"]["revision"]).then_some(r)
    });
    poll_for("the row's new revision", Duration::from_secs(30), || {
        (row(&pg, "laptop-1")?["policy"]["revision"] == revision).then_some(())
    });

    // The database stops: a change meanwhile fails, is counted, and is
    // written once the database is back.
    pg.stop();
    std::fs::write(&rules, rule_toml("r3", "ask", "Bash")).unwrap();
    let down = poll_for("a failure counted", Duration::from_secs(60), || {
        let team = daemon.status()["team"].clone();
        (team["failures"].as_u64()? >= 1).then_some(team)
    });
    assert_eq!(down["connected"], false);
    assert!(
        down["last_error"].as_str().unwrap().contains("fleet row"),
        "{down}"
    );
    let metrics_revision = daemon.status()["rules"]["revision"].clone();
    pg.start_server();
    poll_for("the row after the restart", Duration::from_secs(90), || {
        (row(&pg, "laptop-1")?["policy"]["revision"] == metrics_revision).then_some(())
    });
    let up = poll_for("connected again", Duration::from_secs(30), || {
        let team = daemon.status()["team"].clone();
        (team["connected"] == true).then_some(team)
    });
    assert!(up["failures"].as_u64().unwrap() >= 1);
    // Logged once for the streak, however many attempts failed.
    let stderr = daemon.stderr();
    assert_eq!(
        stderr.matches("team database unreachable").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn without_a_team_section_there_is_no_team_status() {
    let daemon = Daemon::start();
    let status = daemon.status();
    assert!(status.get("team").is_none(), "{status}");
}
