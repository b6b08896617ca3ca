//! `[policy] sources` in the real daemon, through the real forwarder:
//! layers composed under the user's rules (a team deny always applies, a
//! user can tighten, an enforced source cannot be loosened), reloaded all
//! together, and a broken file keeping the whole last good set.

use crate::support::daemon;

use std::path::Path;
use std::time::Duration;

use daemon::{bash, permission_decision, rule_toml, Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};

/// A daemon with user `rules` over the sources in `policy_toml`.
fn daemon(rules: &str, policy_toml: &str) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(rules.to_string()),
        config: Some(format!("[policy]\n{policy_toml}\n")),
        ..DaemonOptions::default()
    })
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The `rule_ids` of the `n`th decision line (1-based): the log is
/// written behind the answers, so wait for it.
fn rule_ids(d: &Daemon, n: usize) -> Value {
    decision_line(d, n)["rule_ids"].clone()
}

/// The `n`th decision line of `d`'s log (1-based), once written.
fn decision_line(d: &Daemon, n: usize) -> Value {
    daemon::poll_reporting(&format!("decision {n}"), Duration::from_secs(10), || {
        let decisions: Vec<Value> = d
            .log_lines()
            .into_iter()
            .filter(|l| l["type"] == "decision")
            .collect();
        decisions
            .get(n - 1)
            .cloned()
            .ok_or_else(|| format!("{decisions:#?}"))
    })
}

#[test]
fn a_team_deny_beats_a_user_allow_and_a_user_deny_tightens_a_team_allow() {
    let team = tempfile::tempdir().unwrap();
    write(
        &team.path().join("10-git.toml"),
        &(rule_toml("no-force", "deny", "Bash(git push --force *)")
            + &rule_toml("cargo-ok", "allow", "Bash(cargo *)")),
    );
    let d = daemon(
        &(rule_toml("push-ok", "allow", "Bash(git push *)")
            + &rule_toml("no-publish", "deny", "Bash(cargo publish *)")),
        &format!(
            "sources = [{{ path = {:?}, name = \"team\" }}]",
            team.path()
        ),
    );
    assert_eq!(
        permission_decision(&d.forward(&bash("git push --force origin main"), &[])),
        "deny"
    );
    assert_eq!(rule_ids(&d, 1), json!(["team:no-force"]));
    // Its provenance names the policy layer and the file and line the rule
    // is at, not the user's file.
    let first = decision_line(&d, 1);
    assert_eq!(first["layer"], "team", "{first:#}");
    assert_eq!(first["rules"][0]["layer"], "team", "{first:#}");
    assert_eq!(
        first["rules"][0]["file"],
        team.path().join("10-git.toml").display().to_string()
    );
    assert_eq!(first["rules"][0]["line"], 1, "{first:#}");
    assert_eq!(
        permission_decision(&d.forward(&bash("git push origin main"), &[])),
        "allow"
    );
    assert_eq!(
        permission_decision(&d.forward(&bash("cargo publish"), &[])),
        "deny"
    );
    assert_eq!(rule_ids(&d, 3), json!(["no-publish"]));
    assert_eq!(
        permission_decision(&d.forward(&bash("cargo build"), &[])),
        "allow"
    );
    assert_eq!(rule_ids(&d, 4), json!(["team:cargo-ok"]));

    let s = d.status();
    let layers = &s["rules"]["layers"];
    assert_eq!(layers[0]["name"], "team", "{s:#}");
    assert_eq!(layers[0]["rules"], 2);
    assert_eq!(layers[0]["files"], json!([team.path().join("10-git.toml")]));
}

#[test]
fn a_user_allow_loosens_a_team_ask_but_not_an_enforced_one() {
    let team = tempfile::tempdir().unwrap();
    write(
        &team.path().join("ask.toml"),
        &rule_toml("ask-push", "ask", "Bash(git push *)"),
    );
    let user = rule_toml("push-ok", "allow", "Bash(git push *)");
    let loose = daemon(
        &user,
        &format!(
            "sources = [{{ path = {:?}, name = \"team\" }}]",
            team.path()
        ),
    );
    assert_eq!(
        permission_decision(&loose.forward(&bash("git push"), &[])),
        "allow"
    );
    let enforced = daemon(
        &user,
        &format!(
            "sources = [{{ path = {:?}, name = \"team\", enforced = true }}]",
            team.path()
        ),
    );
    assert_eq!(
        permission_decision(&enforced.forward(&bash("git push"), &[])),
        "ask"
    );
    assert_eq!(rule_ids(&enforced, 1), json!(["team:ask-push"]));
    assert_ne!(
        loose.status()["rules"]["revision"],
        enforced.status()["rules"]["revision"],
        "enforcing a layer changes the policy revision"
    );
}

#[test]
fn all_layers_reload_together_and_a_broken_file_keeps_the_whole_last_good_set() {
    let team = tempfile::tempdir().unwrap();
    let mine = tempfile::tempdir().unwrap();
    write(
        &team.path().join("a.toml"),
        &rule_toml("no-rm", "deny", "Bash(rm *)"),
    );
    write(
        &mine.path().join("a.toml"),
        &rule_toml("ls-ok", "allow", "Bash(ls *)"),
    );
    let d = daemon(
        "",
        &format!(
            "sources = [{{ path = {:?}, name = \"team\", enforced = true }}, {{ path = {:?}, name = \"mine\" }}]",
            team.path(),
            mine.path()
        ),
    );
    let first = d.status();
    assert_eq!(first["rules"]["generation"], 1);
    assert_eq!(permission_decision(&d.forward(&bash("rm x"), &[])), "deny");
    assert_eq!(permission_decision(&d.forward(&bash("ls"), &[])), "allow");

    // A new file in a source's directory is seen, and every layer is read
    // again into one new generation with one new revision.
    write(
        &team.path().join("b.toml"),
        &rule_toml("no-curl", "deny", "Bash(curl *)"),
    );
    let second = d.wait_for_status("the new file reloads", |s| s["rules"]["generation"] == 2);
    assert_ne!(second["rules"]["revision"], first["rules"]["revision"]);
    assert_eq!(
        permission_decision(&d.forward(&bash("curl example.com"), &[])),
        "deny"
    );

    // A broken file in a directory: refused, naming file:line; both
    // layers keep their last good rules, the user's edit to the other
    // layer included.
    write(
        &mine.path().join("a.toml"),
        &rule_toml("cat-ok", "allow", "Bash(cat *)"),
    );
    write(
        &team.path().join("c.toml"),
        "[[rule]]\nid = \"c\"\naction = \"nope\"\n",
    );
    let broken = team.path().join("c.toml");
    let refused = d.wait_for_status("the broken file is reported", |s| {
        !s["rules"]["reload_error"].is_null()
    });
    let error = refused["rules"]["reload_error"].as_str().unwrap();
    assert!(
        error.contains(&format!("{}:3", broken.display())),
        "{error}"
    );
    assert!(error.contains("policy source `team`"), "{error}");
    assert_eq!(refused["rules"]["revision"], second["rules"]["revision"]);
    assert_eq!(
        permission_decision(&d.forward(&bash("ls"), &[])),
        "allow",
        "the last good set"
    );
    assert_eq!(
        permission_decision(&d.forward(&bash("cat x"), &[])),
        Value::Null
    );
    assert!(
        d.stderr().contains("keeping the last good rules"),
        "{}",
        d.stderr()
    );

    // hookd status and doctor say so.
    let out = std::process::Command::new(daemon::hookd_bin())
        .args(["status", "--socket"])
        .arg(&d.socket)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("last reload refused"), "{text}");
    assert!(text.contains(&broken.display().to_string()), "{text}");
    assert!(text.contains("policy layer team (enforced)"), "{text}");
    let doctor = std::process::Command::new(daemon::hookd_bin())
        .args(["doctor", "--json", "--socket"])
        .arg(&d.socket)
        .env("HOME", d.dir.path())
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "policy")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(check["ok"], false, "{check:#}");
    assert!(
        check["message"]
            .as_str()
            .unwrap()
            .contains(&broken.display().to_string()),
        "{check:#}"
    );

    // Fixed: one reload takes both layers' changes.
    std::fs::remove_file(&broken).unwrap();
    let fixed = d.wait_for_status("the fix reloads", |s| s["rules"]["reload_error"].is_null());
    assert_eq!(fixed["rules"]["layers"][1]["name"], "mine");
    assert_eq!(
        permission_decision(&d.forward(&bash("cat x"), &[])),
        "allow"
    );
    assert_eq!(
        permission_decision(&d.forward(&bash("ls"), &[])),
        Value::Null
    );

    // SIGHUP reloads every layer too.
    let before = d.status()["rules"]["generation"].as_u64().unwrap();
    d.signal("HUP");
    d.wait_for_status("SIGHUP reloads", |s| s["rules"]["generation"] == before + 1);
}

#[test]
fn starting_with_a_broken_policy_file_is_an_error_naming_the_place() {
    let team = tempfile::tempdir().unwrap();
    write(
        &team.path().join("a.toml"),
        "[[rule]]\nid = \"a\"\naction = \"deny\"\ntoll = \"Bash\"\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    write(
        &config,
        &format!(
            "[policy]\nsources = [{{ path = {:?}, name = \"team\" }}]\n",
            team.path()
        ),
    );
    let out = std::process::Command::new(daemon::hookd_bin())
        .arg("serve")
        .arg("--socket")
        .arg(dir.path().join("s.sock"))
        .arg("--log")
        .arg(dir.path().join("events.jsonl"))
        .arg("--config")
        .arg(&config)
        .env("XDG_CONFIG_HOME", dir.path().join("xdg"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:4", team.path().join("a.toml").display())),
        "{stderr}"
    );
}

#[test]
fn rules_explain_and_test_judge_with_the_composed_set() {
    let home = tempfile::tempdir().unwrap();
    let team = home.path().join("team");
    write(
        &team.join("a.toml"),
        &rule_toml("ask-push", "ask", "Bash(git push *)"),
    );
    write(
        &home.path().join("config/hookd/config.toml"),
        &format!("[policy]\nsources = [{{ path = {team:?}, name = \"team\", enforced = true }}]\n"),
    );
    write(
        &home.path().join("config/hookd/rules.toml"),
        &rule_toml("push-ok", "allow", "Bash(git push *)"),
    );
    let input = home.path().join("input.json");
    write(&input, &bash("git push").to_string());
    let hookd = |args: &[&str]| {
        std::process::Command::new(daemon::hookd_bin())
            .args(args)
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .output()
            .unwrap()
    };
    let out = hookd(&["rules", "explain", "--json", input.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let explained: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(explained["evaluation"]["action"], "ask", "{explained:#}");
    assert_eq!(explained["evaluation"]["enforced_by"], "team");
    let layers: Vec<&str> = explained["matched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["layer"].as_str().unwrap())
        .collect();
    assert_eq!(layers, ["user", "team"]);
    let text = hookd(&["rules", "explain", input.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("team:ask-push"), "{text}");
    assert!(
        text.contains(&team.join("a.toml").display().to_string()),
        "{text}"
    );

    let fixtures = home.path().join("fixtures");
    write(
        &fixtures.join("push.json"),
        &json!({"event": bash("git push"), "expect": {"verdict": "ask", "rule": "team:ask-push"}})
            .to_string(),
    );
    // `rules check` without FILE checks the user file and every policy file.
    let out = hookd(&["rules", "check", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reports: Value = serde_json::from_slice(&out.stdout).unwrap();
    let paths: Vec<&str> = reports
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{reports:#}");
    assert!(paths[1].ends_with("team/a.toml"), "{paths:?}");
    write(&team.join("b.toml"), "[trust]\nprojects = [\"/x\"]\n");
    let out = hookd(&["rules", "check"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("{}:1", team.join("b.toml").display())),
        "{text}"
    );
    std::fs::remove_file(team.join("b.toml")).unwrap();

    let out = hookd(&["rules", "test", fixtures.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The `note` of a pending event's first session allow suggestion ("" for
/// none).
fn session_allow_note(pending: &Value) -> String {
    pending["suggestions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["remember"] == "session" && s["verdict"] == "allow")
        .and_then(|s| s["note"].as_str())
        .unwrap_or("")
        .to_string()
}

#[test]
fn a_session_grant_does_not_loosen_an_enforced_ask() {
    let team = tempfile::tempdir().unwrap();
    write(
        &team.path().join("npm.toml"),
        &rule_toml("ask-npm", "ask", "Bash(npm:*)"),
    );
    let mut options = DaemonOptions {
        rules: Some(String::new()),
        config: Some(format!(
            "[decisions]\ntimeout = 20\n[policy]\nsources = [{{ path = {:?}, name = \"team\", enforced = true }}]\n",
            team.path()
        )),
        ..DaemonOptions::default()
    };
    let d = Daemon::start_with(options.clone());
    let mut client = RawClient::hello(&d.socket, "approver");
    assert_eq!(
        client.call(json!({"type": "subscribe", "filter": {}}))["type"],
        "ok"
    );
    let ask_and_decide = |client: &mut RawClient, decide: Value| {
        let fwd = daemon::forward_in_background(&d.socket, &bash("npm test"), &[]);
        let pending = client.wait_for("a pending event", |f| {
            f["type"] == "event" && f["pending"] == true
        });
        // Said before the person chooses: a session grant changes nothing.
        let note = session_allow_note(&pending);
        assert!(
            note.contains("the enforced policy team asks about this event")
                && note.contains("a session grant does not loosen it"),
            "{pending}"
        );
        let mut decide = decide;
        decide["type"] = json!("decide");
        decide["event_id"] = pending["short_id"].clone();
        let reply = client.call(decide);
        assert_eq!(reply["type"], "ok", "{reply}");
        permission_decision(&fwd.join().unwrap())
    };
    let first = ask_and_decide(
        &mut client,
        json!({"verdict": "allow", "remember": "session", "rule": "Bash(npm:*)"}),
    );
    assert_eq!(first, "allow");
    // The grant exists, but the enforced ask still goes to a person.
    let second = ask_and_decide(&mut client, json!({"verdict": "deny"}));
    assert_eq!(second, "deny");
    assert_eq!(d.counter("grant_decisions"), 0);

    // Not enforced: the same grant answers the second call itself.
    options.config = Some(
        options
            .config
            .unwrap()
            .replace("enforced = true", "enforced = false"),
    );
    let d = Daemon::start_with(options);
    let mut client = RawClient::hello(&d.socket, "approver");
    assert_eq!(
        client.call(json!({"type": "subscribe", "filter": {}}))["type"],
        "ok"
    );
    let fwd = daemon::forward_in_background(&d.socket, &bash("npm test"), &[]);
    let pending = client.wait_for("a pending event", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    assert_eq!(session_allow_note(&pending), "", "{pending}");
    client.call(json!({"type": "decide", "event_id": pending["short_id"], "verdict": "allow", "remember": "session", "rule": "Bash(npm:*)"}));
    assert_eq!(permission_decision(&fwd.join().unwrap()), "allow");
    assert_eq!(
        permission_decision(&d.forward(&bash("npm test"), &[])),
        "allow"
    );
    assert_eq!(d.counter("grant_decisions"), 1);
}
