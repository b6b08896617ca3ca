//! `config.toml` on a running daemon: read again on SIGHUP and when it
//! changes, what can change live in force at once (a `[policy]` source,
//! `[http]` turned on), what needs a restart reported by `status` and
//! `doctor`, a broken file refused with the last good one kept — and
//! `hookd rules explain|revision` saying when the daemon enforces other
//! rules than the ones they read.
//!
//! Every daemon here reads the default config path (`$XDG_CONFIG_HOME/
//! hookd/config.toml` in its temp dir), which may not exist at start, as
//! on a fresh setup.

use crate::support::daemon;
use crate::support::http;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use daemon::{bash, permission_decision, poll_until, rule_toml, Daemon, DaemonOptions};
use serde_json::Value;

/// A daemon with `config` (if any) at the default config path before it
/// starts, its `HOME` its own temp dir.
fn daemon(config: Option<&str>) -> Daemon {
    daemon_watching(config, "kernel")
}

/// [`daemon`], seeing changes as `--watch WATCH` says.
fn daemon_watching(config: Option<&str>, watch: &str) -> Daemon {
    // The harness makes the temp dir; the config must be in it before the
    // daemon starts, so a shell step writes it there.
    let shell = config.map(|text| {
        format!(
            "mkdir -p \"$XDG_CONFIG_HOME/hookd\" && cat > \"$XDG_CONFIG_HOME/hookd/config.toml\" <<'EOF'\n{text}\nEOF\nexport HOME=\"$(dirname \"$XDG_CONFIG_HOME\")\""
        )
    });
    Daemon::start_with(DaemonOptions {
        shell: Some(
            shell.unwrap_or_else(|| "export HOME=\"$(dirname \"$XDG_CONFIG_HOME\")\"".to_string()),
        ),
        args: vec!["--watch".into(), watch.into()],
        ..DaemonOptions::default()
    })
}

fn config_path(d: &Daemon) -> PathBuf {
    d.dir.path().join("config/hookd/config.toml")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A directory with one policy file asking for `git push`.
fn team_dir(d: &Daemon) -> PathBuf {
    let team = d.dir.path().join("team");
    write(
        &team.join("10-push.toml"),
        &rule_toml("ask-push", "ask", "Bash(git push *)"),
    );
    team
}

fn team_source(team: &Path) -> String {
    format!("[policy]\nsources = [{{ path = {team:?}, name = \"team\", enforced = true }}]\n")
}

/// `hookd ARGS` as a user of `d` runs it: its config dir and socket.
fn hookd(d: &Daemon, args: &[&str]) -> Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .env("HOME", d.dir.path())
        .env("XDG_CONFIG_HOME", d.dir.path().join("config"))
        .env("XDG_STATE_HOME", d.dir.path().join("state"))
        .env("HOOKD_SOCKET", &d.socket)
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// What `git push` gets from `d` now.
fn push_verdict(d: &Daemon) -> Value {
    permission_decision(&d.forward(&bash("git push origin main"), &[]))
}

#[test]
fn a_policy_source_added_to_config_toml_is_enforced_once_the_daemon_sees_the_change() {
    a_policy_source_is_enforced_once_seen("kernel");
}

#[test]
fn a_policy_source_added_to_config_toml_is_enforced_when_the_daemon_polls() {
    a_policy_source_is_enforced_once_seen("poll");
}

fn a_policy_source_is_enforced_once_seen(watch: &str) {
    let d = daemon_watching(None, watch);
    assert_eq!(d.status()["rules"]["watch"], watch);
    assert_eq!(push_verdict(&d), Value::Null, "no rule decides it at first");
    let team = team_dir(&d);
    write(&config_path(&d), &team_source(&team));
    poll_until(
        "the team's ask, with no signal",
        Duration::from_secs(10),
        || push_verdict(&d) == "ask",
    );
    let status: Value = serde_json::from_slice(&hookd(&d, &["status", "--json"]).stdout).unwrap();
    let layers = &status["rules"]["layers"];
    assert_eq!(layers[0]["name"], "team", "{status:#}");
    assert_eq!(layers[0]["enforced"], true);
    assert_eq!(layers[0]["rules"], 1);
    assert!(status["config"]["reload_error"].is_null(), "{status:#}");
    let human = text(&hookd(&d, &["status"]));
    assert!(
        human.contains("policy layer team (enforced): 1 rules"),
        "{human}"
    );

    // Removed again: the layer goes, and so does its ask.
    write(&config_path(&d), "# no policy\n");
    poll_until("the team layer removed", Duration::from_secs(10), || {
        push_verdict(&d) == Value::Null
    });
    assert!(d.status()["rules"]["layers"].is_null());
}

#[test]
fn sighup_reads_config_toml_again_even_when_the_watcher_sees_no_change() {
    let d = daemon(Some("# padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding padding"));
    let team = team_dir(&d);
    let path = config_path(&d);
    let before = std::fs::metadata(&path).unwrap();
    let mut new = team_source(&team);
    let old_len = before.len() as usize;
    assert!(new.len() <= old_len, "the new config must fit: {new}");
    // Same size, same inode, same mtime: the watcher's fingerprint does not
    // change, so only SIGHUP can make the daemon read it.
    new.push_str(&"#".repeat(old_len - new.len() - 1));
    new.push('\n');
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    std::io::Write::write_all(&mut &file, new.as_bytes()).unwrap();
    file.set_modified(before.modified().unwrap()).unwrap();
    drop(file);
    d.signal("HUP");
    poll_until(
        "the team's ask after SIGHUP",
        Duration::from_secs(10),
        || push_verdict(&d) == "ask",
    );
    assert_eq!(d.status()["rules"]["layers"][0]["name"], "team");
}

#[test]
fn http_turned_on_in_config_toml_answers_without_a_restart() {
    let d = daemon(None);
    assert!(d.status()["http"].is_null());
    write(&config_path(&d), "[http]\nlisten = \"127.0.0.1:0\"\n");
    let status = d.wait_for_status("the HTTP listener started", |s| {
        s["http"]["listen"].is_string()
    });
    let addr = status["http"]["listen"].as_str().unwrap().to_string();
    let token = std::fs::read_to_string(d.dir.path().join("config/hookd/http-token")).unwrap();
    let bearer = format!("Bearer {}", token.trim());
    let response = http::get(&addr, "/status", &[("Authorization", &bearer)]);
    assert_eq!(response.status, 200, "{response:?}");
    let served: Value = serde_json::from_str(&response.body).unwrap();
    assert_eq!(served["pid"], d.pid());
    assert!(status["config"]["restart_needed"].is_null(), "{status:#}");
}

#[test]
fn a_change_only_a_restart_applies_is_reported_by_status_and_doctor() {
    let d = daemon(Some("[http]\nlisten = \"127.0.0.1:0\"\n"));
    let team = team_dir(&d);
    write(
        &config_path(&d),
        &format!(
            "{}[http]\nlisten = \"127.0.0.2:0\"\n[log]\nmax_bytes = 4096\n",
            team_source(&team)
        ),
    );
    // The configuration is swapped first, the rules composed under it next.
    let status = d.wait_for_status("the restart reported, the layer loaded", |s| {
        !s["config"]["restart_needed"].is_null() && s["rules"]["layers"][0]["rules"] == 1
    });
    assert_eq!(
        status["config"]["restart_needed"],
        serde_json::json!(["[log]", "[http] listen"]),
        "{status:#}"
    );
    // What can change live did.
    assert_eq!(status["rules"]["layers"][0]["name"], "team");
    assert_eq!(push_verdict(&d), "ask");
    let line = format!(
        "{} changed since start: restart to apply [log], [http] listen",
        config_path(&d).display()
    );
    let human = text(&hookd(&d, &["status"]));
    assert!(human.contains(&line), "{human}");
    let doctor = hookd(&d, &["doctor"]);
    let report = text(&doctor);
    assert!(report.contains(&line), "{report}");
    assert!(report.contains("restart hookd"), "{report}");
}

#[test]
fn a_broken_config_toml_is_refused_and_the_last_good_one_stays() {
    let d = daemon(None);
    let team = team_dir(&d);
    write(&config_path(&d), &team_source(&team));
    poll_until("the team's ask", Duration::from_secs(10), || {
        push_verdict(&d) == "ask"
    });
    write(
        &config_path(&d),
        &format!("{}[decisions]\ntimeout = \"soon\"\n", team_source(&team)),
    );
    let status = d.wait_for_status("the refusal reported", |s| {
        s["config"]["reload_error"].is_string()
    });
    let error = status["config"]["reload_error"].as_str().unwrap();
    let at = format!("{}:4:", config_path(&d).display());
    assert!(error.contains(&at), "names file:line:column: {error}");
    assert!(
        error.contains("decisions.timeout"),
        "names the key: {error}"
    );
    assert_eq!(push_verdict(&d), "ask", "the last good config stays");
    assert_eq!(status["rules"]["layers"][0]["name"], "team");
    let human = text(&hookd(&d, &["status"]));
    assert!(
        human.contains("reload refused, the last good configuration stays in force"),
        "{human}"
    );
    let report = text(&hookd(&d, &["doctor"]));
    assert!(report.contains(&at), "{report}");

    write(&config_path(&d), &team_source(&team));
    d.wait_for_status("the error cleared once fixed", |s| {
        s["config"]["reload_error"].is_null()
    });
}

#[test]
fn rules_explain_and_revision_say_when_the_daemon_enforces_other_rules() {
    let d = daemon(None);
    let input = d.dir.path().join("input.json");
    write(&input, &bash("git push origin main").to_string());
    let input = input.to_str().unwrap();

    // The daemon enforces what explain reads: its generation, no note.
    let same = hookd(&d, &["rules", "explain", input]);
    let same = text(&same);
    let generation = d.status()["rules"]["generation"].as_u64().unwrap();
    assert!(
        same.contains(&format!("(generation {generation})")),
        "{same}"
    );
    assert!(!same.contains("note:"), "{same}");

    // Rules the daemon has not loaded (it is given other ones): a note,
    // and no generation made up for them.
    let other = d.dir.path().join("other.toml");
    write(&other, &rule_toml("ask-push", "ask", "Bash(git push *)"));
    let out = hookd(
        &d,
        &[
            "rules",
            "explain",
            "--rules",
            other.to_str().unwrap(),
            input,
        ],
    );
    let explained = text(&out);
    assert!(out.status.success(), "{explained}");
    let running = d.status()["rules"]["revision"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        explained.contains(&format!(
            "note: the running daemon enforces revision {running} (generation {generation})"
        )),
        "{explained}"
    );
    assert!(explained.contains("it has not loaded them"), "{explained}");
    assert!(!explained.contains("generation 0"), "{explained}");
    let revision = hookd(&d, &["rules", "revision", other.to_str().unwrap()]);
    let said = text(&revision);
    assert!(revision.status.success(), "{said}");
    assert!(
        said.contains(&format!("the running daemon enforces revision {running}")),
        "{said}"
    );
    let json: Value = serde_json::from_slice(
        &hookd(
            &d,
            &["rules", "revision", "--json", other.to_str().unwrap()],
        )
        .stdout,
    )
    .unwrap();
    assert_eq!(json["enforced"], false, "{json:#}");
    assert_eq!(json["running"]["revision"], running.as_str(), "{json:#}");

    // No daemon: said plainly, not a failure.
    let socket = d.socket.clone();
    let mut d = d;
    d.stop();
    let out = hookd(&d, &["rules", "revision"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&format!("no hookd daemon answers at {}", socket.display())),
        "{said}"
    );
}
