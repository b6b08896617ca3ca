//! Auditing (issue #14): the policy revision (`hookd rules revision`,
//! `status`), every decision's provenance and `hookd explain`, and the
//! hash-chained log with `hookd log verify` — on the real daemon, through
//! the real forwarder.

#[path = "support/daemon.rs"]
mod daemon;

use std::path::Path;
use std::process::{Command, Output};

use daemon::{hookd_bin, Daemon, DaemonOptions};
use serde_json::Value;

const RULES: &str = r#"
# The team's rules.
[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "rm is not allowed here"

[[rule]]
id = "tests-ok"
action = "allow"
tool = ["Bash(cargo test *)", "Bash(npm test)"]
"#;

/// [`RULES`] written otherwise: other comments, blank lines, key order and
/// quoting.
const SAME_RULES: &str = "[[rule]]\nreason='rm is not allowed here'\ntool='Bash(rm:*)'\n\
    action='deny'\nid='no-rm'\n[[rule]]\nid='tests-ok' # tests\naction='allow'\n\
    tool=['Bash(cargo test *)','Bash(npm test)']\n";

/// Runs `hookd ARGS` with HOME and XDG dirs in `home`, so no real rules
/// file or daemon of the user's is read.
fn hookd(home: &Path, args: &[&str]) -> Output {
    Command::new(hookd_bin())
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_RUNTIME_DIR", home.join("run"))
        .env_remove("HOOKD_SOCKET")
        .output()
        .unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{:?}\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap()
}

#[test]
fn the_same_rules_in_two_files_have_one_revision_and_any_change_another() {
    let home = tempfile::tempdir().unwrap();
    let a = home.path().join("a/rules.toml");
    let b = home.path().join("elsewhere/deeper/other.toml");
    for (path, text) in [(&a, RULES), (&b, SAME_RULES)] {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let revision_a = stdout(&hookd(
        home.path(),
        &["rules", "revision", a.to_str().unwrap()],
    ));
    let revision_b = stdout(&hookd(
        home.path(),
        &["rules", "revision", b.to_str().unwrap()],
    ));
    assert_eq!(revision_a, revision_b);
    let revision = revision_a.trim_end();
    assert!(
        revision.starts_with("sha256:") && revision.len() == 7 + 32,
        "{revision}"
    );

    let json = json_of(&hookd(
        home.path(),
        &["rules", "revision", "--json", a.to_str().unwrap()],
    ));
    assert_eq!(json["revision"], revision);
    assert_eq!(json["rules"], 2);
    assert_eq!(json["layer"], "user");

    // Any change to a rule is another revision.
    std::fs::write(&b, SAME_RULES.replace("'deny'", "'ask'")).unwrap();
    let changed = stdout(&hookd(
        home.path(),
        &["rules", "revision", b.to_str().unwrap()],
    ));
    assert_ne!(changed.trim_end(), revision);

    // Without a file: the defaults' revision, another again.
    let defaults = stdout(&hookd(home.path(), &["rules", "revision"]));
    assert_ne!(defaults.trim_end(), revision);
    assert!(defaults.starts_with("sha256:"));

    // A file with errors is an operational error, naming the file.
    std::fs::write(&b, "[[rule]]\nid = 1\n").unwrap();
    let out = hookd(home.path(), &["rules", "revision", b.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("other.toml"));
}

#[test]
fn status_shows_the_revision_of_the_rules_in_effect() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("rules.toml");
    std::fs::write(&file, SAME_RULES).unwrap();
    let expected = stdout(&hookd(
        home.path(),
        &["rules", "revision", file.to_str().unwrap()],
    ));
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(RULES.to_string()),
        ..DaemonOptions::default()
    });
    assert_eq!(d.status()["rules"]["revision"], expected.trim_end());
    let out = hookd(
        home.path(),
        &["status", "--socket", d.socket.to_str().unwrap()],
    );
    assert!(
        stdout(&out).contains(&format!("policy revision: {}", expected.trim_end())),
        "{}",
        stdout(&out)
    );
}
