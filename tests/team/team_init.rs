//! `hookd team init` and `hookd team status`, and what the roles and
//! grants it applies let each role do.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::daemon::hookd_bin;
use crate::support::postgres::{Postgres, ADMIN};
use crate::support::process;

/// A config.toml with `[team]` connecting as `role`.
pub(crate) fn config(pg: &Postgres, name: &str, role: &str, machine: &str) -> PathBuf {
    let path = pg.path().join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "[team]\ndatabase = \"{}\"\nmachine = \"{machine}\"\n",
            pg.conninfo(role)
        ),
    )
    .unwrap();
    path
}

pub(crate) fn hookd(pg: &Postgres, args: &[&str], config: &Path) -> Output {
    let mut command = Command::new(hookd_bin());
    process::private_home(&mut command, &pg.path().join("client"));
    command
        .args(args)
        .arg("--config")
        .arg(config)
        .env_remove("PGHOST")
        .env_remove("PGUSER")
        .env_remove("PGSERVICE")
        .output()
        .unwrap()
}

pub(crate) fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn init_applies_each_migration_once_and_status_says_what_is_there() {
    let Some(pg) = Postgres::start("init_applies_each_migration_once") else {
        return;
    };
    let admin = config(&pg, "admin", ADMIN, "admin-box");

    // Before init: everything pending, exit 1, told what to run.
    let out = hookd(&pg, &["team", "status"], &admin);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    // Every migration this hookd ships (the list grows; the test follows it).
    let migrations = hookd_team::migrate::MIGRATIONS;
    let numbers: Vec<u32> = migrations.iter().map(|m| m.version).collect();
    let pending = numbers
        .iter()
        .map(|n| format!("{n:04}"))
        .collect::<Vec<_>>()
        .join(", ");
    assert!(numbers.starts_with(&[1, 2, 3]), "{numbers:?}");
    assert!(
        text(&out).contains(&format!("pending: {pending}")),
        "{}",
        text(&out)
    );
    assert!(text(&out).contains("hookd team init"), "{}", text(&out));

    let out = hookd(&pg, &["team", "init", "--json"], &admin);
    assert!(out.status.success(), "{}", text(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<String> = migrations
        .iter()
        .map(|m| format!("{:04}_{}", m.version, m.name))
        .collect();
    assert_eq!(report["applied"], serde_json::json!(names));

    // Again: nothing applied, nothing changed.
    let out = hookd(&pg, &["team", "init"], &admin);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("the schema is up to date"),
        "{}",
        text(&out)
    );
    assert!(
        text(&out).contains("GRANT hookd_machine TO"),
        "prints the grants: {}",
        text(&out)
    );
    assert_eq!(
        pg.admin("SELECT count(*) FROM hookd.schema_migrations"),
        migrations.len().to_string()
    );

    let out = hookd(&pg, &["team", "status", "--json"], &admin);
    assert!(out.status.success(), "{}", text(&out));
    let status: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(status["applied"], serde_json::json!(numbers));
    assert_eq!(status["pending"], serde_json::json!([]));
    assert_eq!(status["machine"], "admin-box");
    assert_eq!(status["fleet_rows"], 0);
    // A Unix socket: no TLS, whatever the mode (as with libpq).
    assert_eq!(status["tls"]["in_use"], false, "{status}");
    assert_eq!(status["tls"]["sslmode"], "prefer");
    assert!(status["server_version"]
        .as_str()
        .unwrap()
        .starts_with(char::is_numeric));
}

#[test]
fn a_machine_role_touches_only_its_own_rows_and_an_approver_only_reads() {
    let Some(pg) = Postgres::start("a_machine_role_touches_only_its_own_rows") else {
        return;
    };
    let admin = config(&pg, "admin", ADMIN, "admin-box");
    let out = hookd(
        &pg,
        &[
            "team",
            "init",
            "--machine-role",
            "m1",
            "--machine-role",
            "m2",
            "--approver-role",
            "lead",
        ],
        &admin,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("role m1: hookd_machine"),
        "{}",
        text(&out)
    );

    let insert = |machine: &str| {
        format!(
            "INSERT INTO hookd.fleet (machine, host, os_user, version) \
             VALUES ('{machine}', 'h', 'u', 'v')"
        )
    };
    pg.psql("m1", "hookd", &insert("m1"));
    pg.psql("m2", "hookd", &insert("m2"));
    // m1 sees only its own row, and cannot change m2's.
    assert_eq!(
        pg.psql("m1", "hookd", "SELECT machine FROM hookd.fleet"),
        "m1"
    );
    assert_eq!(
        pg.psql(
            "m1",
            "hookd",
            "UPDATE hookd.fleet SET host = 'x' WHERE machine = 'm2' RETURNING 1"
        ),
        ""
    );
    // Nor write a row as another role.
    let out = pg.try_psql(
        "m1",
        "hookd",
        "INSERT INTO hookd.fleet (machine, db_role, host, os_user, version) \
         VALUES ('m3', 'm2', 'h', 'u', 'v')",
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("row-level security"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Nor delete (no grant).
    let out = pg.try_psql("m1", "hookd", "DELETE FROM hookd.fleet");
    assert!(String::from_utf8_lossy(&out.stderr).contains("permission denied"));

    // The approver reads every row and writes none.
    assert_eq!(
        pg.psql(
            "lead",
            "hookd",
            "SELECT string_agg(machine, ',' ORDER BY machine) FROM hookd.fleet"
        ),
        "m1,m2"
    );
    let out = pg.try_psql("lead", "hookd", &insert("lead"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("permission denied"));
    // Nobody but the owner changes the schema's bookkeeping.
    let out = pg.try_psql("m1", "hookd", "DELETE FROM hookd.schema_migrations");
    assert!(String::from_utf8_lossy(&out.stderr).contains("permission denied"));
}

#[test]
fn a_team_section_with_a_bad_sslmode_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    std::fs::write(
        &path,
        "[log]\n\n[team]\ndatabase = \"host=db.example.com sslmode=verify\"\n",
    )
    .unwrap();
    let mut command = Command::new(hookd_bin());
    process::private_home(&mut command, dir.path());
    let out = command
        .args(["team", "status", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("config.toml:4:"), "{err}");
    assert!(err.contains("`team.database`"), "{err}");
    assert!(err.contains("sslmode `verify`"), "{err}");

    // A config without [team] says where to add it.
    std::fs::write(&path, "[log]\n").unwrap();
    let mut command = Command::new(hookd_bin());
    process::private_home(&mut command, dir.path());
    let out = command
        .args(["team", "init", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no [team] section"));
}
