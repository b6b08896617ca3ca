//! Shipping the event log: a real `hookd serve` with `[team]` ships every
//! sealed line of its log to a real PostgreSQL with its chain hash, through
//! a database outage, a daemon restart and log rotation, exactly once; and
//! `hookd team verify` passes, then names the first tampered or deleted row.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

use crate::support::daemon::{bash, hookd_bin, read_log, rule_toml, Daemon, DaemonOptions};
use crate::support::postgres::{Postgres, ADMIN};
use crate::support::process::{poll_for, private_home};

const MACHINE: &str = "laptop-1";

/// `hookd team init` as the owner, with `laptop_1` a machine role.
fn init(pg: &Postgres) {
    pg.team_init_laptop(&pg.conninfo(ADMIN));
}

fn team_config(pg: &Postgres, extra: &str) -> String {
    format!(
        "[team]\ndatabase = \"{}\"\nmachine = \"{MACHINE}\"\n{extra}",
        pg.conninfo("laptop_1")
    )
}

/// A daemon with `[team]` writing its log at `log` (kept across restarts).
fn daemon(pg: &Postgres, log: &Path, extra_config: &str) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(rule_toml("no-bash", "deny", "Bash")),
        config: Some(team_config(pg, extra_config)),
        log_path: Some(log.display().to_string()),
        ..Default::default()
    })
}

/// Every sealed line of the log and its rotated files: (seq, chain).
fn local_chain(log: &Path) -> Vec<(u64, String)> {
    let mut files = vec![log.to_path_buf()];
    for n in 1..200 {
        let p = log.with_file_name(format!(
            "{}.{n}",
            log.file_name().unwrap().to_string_lossy()
        ));
        if p.exists() {
            files.push(p);
        }
    }
    let mut out: Vec<(u64, String)> = files
        .iter()
        .flat_map(|f| read_log(f))
        .filter_map(|l| Some((l["seq"].as_u64()?, l["chain"].as_str()?.to_string())))
        .collect();
    out.sort();
    out
}

/// The machine's rows: (seq, chain), in seq order.
fn db_chain(pg: &Postgres) -> Vec<(u64, String)> {
    let out = pg.admin(&format!(
        "SELECT seq || ' ' || chain FROM hookd.decisions WHERE machine = '{MACHINE}' ORDER BY seq"
    ));
    out.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (seq, chain) = l.split_once(' ').unwrap();
            (seq.parse().unwrap(), chain.to_string())
        })
        .collect()
}

/// Waits until the database holds exactly the log's sealed lines.
fn wait_shipped(pg: &Postgres, log: &Path) -> Vec<(u64, String)> {
    poll_for(
        "every log line in the database",
        Duration::from_secs(60),
        || {
            let local = local_chain(log);
            let db = db_chain(pg);
            (!local.is_empty() && local == db).then_some(db)
        },
    )
}

fn forward_bash(daemon: &Daemon, n: usize, tag: &str) {
    for i in 0..n {
        let out = daemon.forward(&bash(&format!("echo {tag}-{i}")), &[]);
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("deny"),
            "answered whatever the database does: {out:?}"
        );
    }
}

fn verify(daemon: &Daemon, log: &Path) -> Output {
    let mut command = Command::new(hookd_bin());
    private_home(&mut command, &daemon.dir.path().join("verify-home"));
    command
        .args(["team", "verify", "--config"])
        .arg(daemon.dir.path().join("config.toml"))
        .arg("--log")
        .arg(log)
        .output()
        .unwrap()
}

#[test]
fn every_line_is_shipped_once_through_an_outage_and_a_restart_and_verify_catches_tampering() {
    let Some(mut pg) = Postgres::start("every_line_is_shipped_once") else {
        return;
    };
    init(&pg);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("events.jsonl");
    let mut first = daemon(&pg, &log, "");
    forward_bash(&first, 5, "a");
    first.wait_decisions(5);
    let shipped = wait_shipped(&pg, &log);
    assert_eq!(shipped[0].0, 0);
    assert_eq!(
        shipped.len() as u64,
        shipped.last().unwrap().0 + 1,
        "no gaps"
    );

    // A decision row carries its verdict, rule, session, agent and tool;
    // the record is the line as written (redacted, without its seal).
    let row: Value = serde_json::from_str(&pg.admin(&format!(
        "SELECT row_to_json(d) FROM hookd.decisions d WHERE machine = '{MACHINE}' \
         AND kind = 'decision' ORDER BY seq LIMIT 1"
    )))
    .unwrap();
    assert_eq!(row["verdict"], "deny", "{row}");
    assert_eq!(row["rule"], "no-bash");
    assert_eq!(row["rule_ids"], serde_json::json!(["no-bash"]));
    assert_eq!(row["tool"], "Bash");
    assert_eq!(row["agent"], "claude-code");
    assert!(row["session"].is_string(), "{row}");
    assert!(row["revision"].as_str().unwrap().starts_with("sha256:"));
    assert_eq!(row["db_role"], "laptop_1");
    assert!(row["record"].get("seq").is_none());
    assert_eq!(row["record"]["rule_ids"][0], "no-bash");

    // Row-level security: this machine's role cannot write under another
    // machine's name (with ON CONFLICT DO NOTHING such rows would stand
    // in for that machine's own).
    let refused = pg.try_psql(
        "laptop_1",
        "hookd",
        "INSERT INTO hookd.decisions (machine, seq, at, chain, record) \
         VALUES ('someone-else', 0, now(), 'x', '{}')",
    );
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("row-level security"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );

    // The database goes away: hooks are still answered, the lines wait in
    // the log, failures are counted.
    pg.stop();
    forward_bash(&first, 8, "b");
    let down = poll_for(
        "a shipping failure counted",
        Duration::from_secs(60),
        || {
            let ship = first.status()["team"]["ship"].clone();
            (ship["failures"].as_u64()? >= 1 && ship["pending_lines"].as_u64()? >= 16)
                .then_some(ship)
        },
    );
    assert!(down["last_error"].is_string(), "{down}");
    pg.start_server();
    let shipped = wait_shipped(&pg, &log);
    assert_eq!(
        shipped.len() as u64,
        shipped.last().unwrap().0 + 1,
        "no gaps"
    );
    let up = first.wait_for_status("nothing pending", |s| {
        s["team"]["ship"]["pending_lines"] == 0
    });
    assert_eq!(
        up["team"]["ship"]["shipped"].as_u64().unwrap(),
        shipped.len() as u64,
        "each line inserted once: {up}"
    );
    let stderr = first.stderr();
    assert_eq!(
        stderr
            .matches("shipping the event log to the team database failed")
            .count(),
        1,
        "logged once per streak: {stderr}"
    );
    let metrics_like = up["team"]["ship"].clone();
    assert_eq!(metrics_like["lost"], 0);

    // A restart resumes at the cursor: only the new lines are inserted.
    first.stop();
    let before_restart = local_chain(&log).len() as u64;
    let second = daemon(&pg, &log, "");
    forward_bash(&second, 3, "c");
    second.wait_decisions(3);
    let shipped = wait_shipped(&pg, &log);
    assert_eq!(
        shipped.len() as u64,
        shipped.last().unwrap().0 + 1,
        "no gaps"
    );
    let after = second.wait_for_status("nothing pending after the restart", |s| {
        s["team"]["ship"]["pending_lines"] == 0
    });
    assert_eq!(
        after["team"]["ship"]["shipped"].as_u64().unwrap(),
        shipped.len() as u64 - before_restart,
        "only what was written after the restart: {after}"
    );
    assert!(
        second.stderr().contains("at the cursor's line"),
        "{}",
        second.stderr()
    );

    // verify: the database matches the chain.
    let ok = verify(&second, &log);
    let text = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(text.contains("ok: the database matches the log"), "{text}");
    assert!(
        text.contains(&format!("matched {}", shipped.len())),
        "{text}"
    );

    // A tampered row: verify names it.
    let decision_seq: u64 = pg
        .admin(&format!(
            "SELECT max(seq) FROM hookd.decisions WHERE machine = '{MACHINE}' AND kind = 'decision'"
        ))
        .parse()
        .unwrap();
    pg.admin(&format!(
        "UPDATE hookd.decisions SET record = jsonb_set(record, '{{verdict}}', '\"allow\"') \
         WHERE machine = '{MACHINE}' AND seq = {decision_seq}"
    ));
    let bad = verify(&second, &log);
    let text = String::from_utf8_lossy(&bad.stdout);
    assert_eq!(bad.status.code(), Some(1), "{text}");
    assert!(
        text.contains(&format!("the first at seq {decision_seq}")),
        "{text}"
    );
    assert!(text.contains("record differs"), "{text}");

    // A deleted row before it: now that one is the first bad seq.
    pg.admin(&format!(
        "DELETE FROM hookd.decisions WHERE machine = '{MACHINE}' AND seq = 3"
    ));
    let bad = verify(&second, &log);
    let text = String::from_utf8_lossy(&bad.stdout);
    assert_eq!(bad.status.code(), Some(1), "{text}");
    assert!(text.contains("seq 3: missing from the database"), "{text}");
    assert!(text.contains("the first at seq 3"), "{text}");
}

#[test]
fn shipping_follows_rotation_live_and_across_an_outage() {
    let Some(mut pg) = Postgres::start("shipping_follows_rotation") else {
        return;
    };
    init(&pg);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("events.jsonl");
    let d = daemon(
        &pg,
        &log,
        "\n[log]\nmax_bytes = 4096\nkeep = 100\n[http]\nlisten = \"127.0.0.1:0\"\n",
    );
    forward_bash(&d, 20, "live");
    d.wait_decisions(1);
    let shipped = wait_shipped(&pg, &log);
    assert_eq!(shipped.len() as u64, shipped.last().unwrap().0 + 1);
    let rotations = d.status()["log"]["rotations"].as_u64().unwrap_or(0);
    assert!(
        log.with_file_name("events.jsonl.3").exists(),
        "several rotations while shipping ({rotations})"
    );

    // Down while the log rotates several times: all of it arrives after.
    pg.stop();
    forward_bash(&d, 30, "down");
    poll_for("a failure", Duration::from_secs(60), || {
        (d.status()["team"]["ship"]["failures"].as_u64()? >= 1).then_some(())
    });
    pg.start_server();
    let shipped = wait_shipped(&pg, &log);
    assert_eq!(
        shipped.len() as u64,
        shipped.last().unwrap().0 + 1,
        "no gaps"
    );
    let status = d.wait_for_status("nothing pending", |s| {
        s["team"]["ship"]["pending_lines"] == 0
    });
    assert_eq!(status["team"]["ship"]["lost"], 0, "{status}");
    assert_eq!(
        status["team"]["ship"]["shipped"].as_u64().unwrap(),
        shipped.len() as u64
    );
    let ok = verify(&d, &log);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );

    // The same counters on /metrics.
    let listen = status["http"]["listen"].as_str().unwrap().to_string();
    let token = std::fs::read_to_string(d.dir.path().join("config/hookd/http-token"))
        .unwrap()
        .trim()
        .to_string();
    let bearer = format!("Bearer {token}");
    let metrics = crate::support::http::get(&listen, "/metrics", &[("Authorization", &bearer)]);
    assert_eq!(metrics.status, 200, "{}", metrics.body);
    let sample = |series: &str| -> Option<u64> {
        metrics
            .body
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.rsplit_once(' '))
            .find(|(s, _)| *s == series)
            .and_then(|(_, v)| v.parse().ok())
    };
    assert_eq!(
        sample("hookd_team_shipped_total"),
        Some(shipped.len() as u64),
        "{}",
        metrics.body
    );
    assert_eq!(sample("hookd_team_ship_pending_lines"), Some(0));
    assert_eq!(sample("hookd_team_ship_lost_total"), Some(0));
    assert!(sample("hookd_team_ship_failures_total") >= Some(1));
    assert!(sample("hookd_team_ship_pending_bytes").is_some());
}

#[test]
fn with_ship_false_nothing_is_shipped() {
    let Some(pg) = Postgres::start("with_ship_false") else {
        return;
    };
    init(&pg);
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("events.jsonl");
    let d = daemon(&pg, &log, "ship = false\n");
    forward_bash(&d, 2, "x");
    d.wait_decisions(2);
    let status = d.wait_for_status("the fleet row", |s| {
        s["team"]["fleet_updates"].as_u64() >= Some(1)
    });
    assert!(status["team"].get("ship").is_none(), "{status}");
    assert_eq!(pg.admin("SELECT count(*) FROM hookd.decisions"), "0");
}
