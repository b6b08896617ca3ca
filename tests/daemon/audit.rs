//! Auditing (issue #14): the policy revision (`hookd rules revision`,
//! `status`), every decision's provenance and `hookd explain`, and the
//! hash-chained log with `hookd log verify` — on the real daemon, through
//! the real forwarder.

use crate::support::daemon;

use std::path::Path;
use std::process::{Command, Output};

use std::time::Duration;

use daemon::{
    fixture, forward_in_background, hookd_bin, poll_until, stdout_json, Daemon, DaemonOptions,
    RawClient,
};
use serde_json::{json, Value};

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

const SESSION: &str = "1fce3faa-62dc-4336-ba9c-8494671dd902";

/// The user layer: `rm` is refused, `npm` asks a person.
const USER_RULES: &str = r#"# The user's rules.
[[rule]]
id = "no-rm"
action = "deny"
tool = "Bash(rm:*)"
reason = "rm is not allowed here"

[[rule]]
id = "ask-npm"
action = "ask"
tool = "Bash(npm:*)"
reason = "npm runs project scripts"
"#;

/// The project layer: `make` is refused there.
const PROJECT_RULES: &str = r#"

[[rule]]
id = "no-make"
action = "deny"
tool = "Bash(make:*)"
reason = "the project builds with cargo"
"#;

fn bash_in(command: &str, cwd: &Path) -> Value {
    let mut input = fixture("PreToolUse.json");
    input["tool_input"]["command"] = json!(command);
    input["session_id"] = json!(SESSION);
    input["cwd"] = json!(cwd);
    input
}

/// Forwards `input` as a hook of the project in `project`
/// (`CLAUDE_PROJECT_DIR`).
fn forward_in(d: &Daemon, project: &Path, input: &Value) -> Output {
    use std::io::Write;
    let mut child = Command::new(daemon::forwarder_bin())
        .env("HOOKD_SOCKET", &d.socket)
        .env("CLAUDE_PROJECT_DIR", project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.to_string().as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The decision logged for the event the forwarder sent as `input`.
fn decision_for(d: &Daemon, command: &str) -> Value {
    let what = format!("a decision logged for `{command}`");
    daemon::poll_for(&what, Duration::from_secs(10), || {
        let lines = d.log_lines();
        let event = lines
            .iter()
            .rev()
            .find(|l| l["type"] == "event" && l["input"]["tool_input"]["command"] == command)?;
        lines
            .iter()
            .find(|l| l["type"] == "decision" && l["event_id"] == event["id"])
            .cloned()
    })
}

/// `hookd explain ID --json` and its human output, against `d`'s log and
/// rules file.
fn explain(d: &Daemon, id: &str) -> (Value, String) {
    let rules = d.dir.path().join("rules.toml");
    let args = |json: bool| {
        let mut args = vec![
            "explain".to_string(),
            id.to_string(),
            "--log".into(),
            d.log.display().to_string(),
            "--rules".into(),
            rules.display().to_string(),
        ];
        if json {
            args.push("--json".into());
        }
        args
    };
    let run = |json: bool| {
        let args = args(json);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        hookd(d.dir.path(), &args)
    };
    (json_of(&run(true)), stdout(&run(false)))
}

/// A decision by each of the five: a user rule, a project rule, a client,
/// a session grant and nobody (the default) — each explained from the log.
#[test]
fn every_decision_is_explained_from_the_log_alone() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(USER_RULES.to_string()),
        config: Some("[decisions]\ntimeout = 20\n".to_string()),
        ..DaemonOptions::default()
    });
    let rules_file = d.dir.path().join("rules.toml");
    let revision = d.status()["rules"]["revision"]
        .as_str()
        .unwrap()
        .to_string();
    let project = d.dir.path().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    let project_file = project.join(".claude/hookd.toml");
    std::fs::write(&project_file, PROJECT_RULES).unwrap();
    let elsewhere = d.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let forward =
        |command: &str, project: &Path| forward_in(&d, project, &bash_in(command, project));

    // A user rule.
    let out = forward("rm -rf build", &elsewhere);
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    let logged = decision_for(&d, "rm -rf build");
    assert_eq!(logged["layer"], "user");
    assert_eq!(logged["revision"], revision.as_str());
    assert!(logged.get("project_revision").is_none(), "{logged}");
    let id = logged["decision_id"].as_str().unwrap();
    // A prefix is enough when it is unique.
    let (json, human) = explain(&d, &id[..id.len() - 4]);
    assert_eq!(json["decision"]["decision_id"], id);
    assert_eq!(json["event"]["tool"], "Bash");
    assert_eq!(json["summary"], "rm -rf build");
    assert_eq!(json["decision"]["verdict"], "deny");
    assert_eq!(json["decision"]["source"], "rule");
    assert_eq!(json["decision"]["layer"], "user");
    assert_eq!(
        json["decision"]["rules"],
        json!([{
            "id": "no-rm", "layer": "user", "action": "deny",
            "file": rules_file.display().to_string(), "line": 2,
            "reason": "rm is not allowed here"
        }])
    );
    assert_eq!(json["same_revision"], true);
    for expected in [
        "input     rm -rf build".to_string(),
        "source    rule, layer user".to_string(),
        format!(
            "rule      no-rm (deny, user layer) at {}:2 — rm is not allowed here",
            rules_file.display()
        ),
        format!("revision  {revision} (generation 1; the rules now have it too)"),
        "latency   ".to_string(),
    ] {
        assert!(human.contains(&expected), "no `{expected}` in:\n{human}");
    }

    // A project rule: file and line in the project's file, its revision.
    let out = forward("make all", &project);
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "deny"
    );
    let logged = decision_for(&d, "make all");
    let (json, human) = explain(&d, logged["decision_id"].as_str().unwrap());
    assert_eq!(json["decision"]["layer"], "project");
    assert_eq!(
        json["decision"]["rules"],
        json!([{
            "id": "project:no-make", "layer": "project", "action": "deny",
            "file": project_file.display().to_string(), "line": 3,
            "reason": "the project builds with cargo"
        }])
    );
    assert!(json["decision"]["project_revision"]
        .as_str()
        .unwrap()
        .starts_with("sha256:"));
    assert_eq!(json["same_project_revision"], true);
    assert!(human.contains("source    rule, layer project"), "{human}");
    assert!(
        human.contains(&format!("at {}:3", project_file.display())),
        "{human}"
    );

    // A client: the rule that asked stays, the layer is the client's.
    let mut approver = RawClient::hello(&d.socket, "approve");
    let ok = approver.call(json!({"type": "subscribe", "filter": {}}));
    assert_eq!(ok["type"], "ok", "{ok}");
    let fwd = forward_in_background(&d.socket, &bash_in("npm test", &elsewhere), &[]);
    let pending = approver.wait_for("the pending npm test", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let reply = approver.call(json!({
        "type": "decide", "event_id": pending["short_id"], "verdict": "deny",
        "reason": "not today"
    }));
    assert_eq!(reply["type"], "ok", "{reply}");
    fwd.join().unwrap();
    let logged = decision_for(&d, "npm test");
    let (json, human) = explain(&d, logged["decision_id"].as_str().unwrap());
    assert_eq!(json["decision"]["source"], "client:approve");
    assert_eq!(json["decision"]["layer"], "client");
    assert_eq!(json["decision"]["reason"], "not today");
    assert_eq!(json["decision"]["rules"][0]["id"], "ask-npm");
    assert_eq!(json["decision"]["rules"][0]["action"], "ask");
    assert!(
        human.contains("source    client:approve, layer client"),
        "{human}"
    );
    assert!(human.contains("ask-npm (ask, user layer)"), "{human}");

    // A session grant: remembered by the client, then deciding alone.
    let fwd = forward_in_background(&d.socket, &bash_in("npm ci", &elsewhere), &[]);
    let pending = approver.wait_for("the pending npm ci", |f| {
        f["type"] == "event" && f["pending"] == true
    });
    let reply = approver.call(json!({
        "type": "decide", "event_id": pending["short_id"], "verdict": "allow",
        "remember": "session", "rule": "Bash(npm:*)"
    }));
    assert_eq!(reply["type"], "ok", "{reply}");
    fwd.join().unwrap();
    let grant = reply["result"]["id"].as_str().unwrap().to_string();
    let out = forward("npm run lint", &elsewhere);
    assert_eq!(
        stdout_json(&out)["hookSpecificOutput"]["permissionDecision"],
        "allow"
    );
    let logged = decision_for(&d, "npm run lint");
    let (json, human) = explain(&d, logged["decision_id"].as_str().unwrap());
    assert_eq!(json["decision"]["source"], format!("grant:{grant}"));
    assert_eq!(json["decision"]["layer"], "grant");
    assert_eq!(json["decision"]["grant_rule"], "Bash(npm:*)");
    assert!(json["decision"].get("rules").is_none(), "{json}");
    assert!(human.contains("grant     Bash(npm:*)"), "{human}");
    assert!(human.contains(", layer grant"), "{human}");

    // Nobody: no rule decided, Claude Code's own flow goes on.
    let out = forward("ls -la", &elsewhere);
    assert!(out.stdout.is_empty(), "{out:?}");
    let logged = decision_for(&d, "ls -la");
    let (json, human) = explain(&d, logged["decision_id"].as_str().unwrap());
    assert_eq!(json["decision"]["source"], "default");
    assert_eq!(json["decision"]["layer"], "none");
    assert_eq!(json["decision"]["verdict"], "none");
    assert_eq!(json["decision"]["revision"], revision.as_str());
    assert!(human.contains("source    default, layer none"), "{human}");

    // The event's id finds its decision too.
    let (json, _) = explain(&d, logged["event_id"].as_str().unwrap());
    assert_eq!(json["decision"]["decision_id"], logged["decision_id"]);

    // Once the rules change, the explanation says the revision is old.
    std::fs::write(&rules_file, USER_RULES.replace("npm runs", "npm may run")).unwrap();
    let (json, human) = explain(&d, logged["decision_id"].as_str().unwrap());
    assert_eq!(json["same_revision"], false);
    assert_ne!(json["current_revision"], revision.as_str());
    assert!(human.contains("; the rules now are sha256:"), "{human}");

    // A prefix that several decisions share, and one nobody has: errors
    // that say so (exit 2).
    let log = d.log.display().to_string();
    let not_an_id = hookd(d.dir.path(), &["explain", "npm", "--log", &log]);
    assert_eq!(not_an_id.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&not_an_id.stderr).contains("is not a decision id"),
        "{not_an_id:?}"
    );
    let shared_prefix = &logged["decision_id"].as_str().unwrap()[..4];
    let ambiguous = hookd(d.dir.path(), &["explain", shared_prefix, "--log", &log]);
    assert_eq!(ambiguous.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&ambiguous.stderr).contains("give more of it"),
        "{ambiguous:?}"
    );
    let missing = hookd(d.dir.path(), &["explain", "ffffffff-ffff", "--log", &log]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("no decision (nor event)"),
        "{missing:?}"
    );
}

/// `hookd log verify ARGS --json`: its report and exit code.
fn verify(d: &Daemon, logs: &[&Path]) -> (Value, Option<i32>) {
    let mut args = vec!["log".to_string(), "verify".into(), "--json".into()];
    args.extend(logs.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = hookd(d.dir.path(), &args);
    let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (report, out.status.code())
}

/// Forwards `n` hooks and waits until their `2n` lines are written.
fn fill(d: &Daemon, n: usize) {
    let before = d.counter("log_written");
    for i in 0..n {
        let mut input = fixture("PreToolUse.json");
        input["tool_input"]["command"] = json!(format!("echo {i}"));
        d.forward(&input, &[]);
    }
    daemon::poll_until("the lines written", Duration::from_secs(10), || {
        d.counter("log_written") >= before + 2 * n as u64
    });
}

/// The log's lines (without their `\n`).
fn log_lines(path: &Path) -> Vec<Vec<u8>> {
    std::fs::read(path)
        .unwrap()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

fn write_lines(path: &Path, lines: &[Vec<u8>]) {
    let bytes: Vec<u8> = lines
        .iter()
        .flat_map(|l| l.iter().chain(b"\n"))
        .copied()
        .collect();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn an_intact_log_verifies_and_every_kind_of_tampering_is_found_at_its_line() {
    let d = Daemon::start();
    fill(&d, 10);
    let (report, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["ok"], true);
    assert_eq!(report["verified"]["lines"], 20);
    assert_eq!(report["verified"]["starts_from"], "genesis");
    // The head is the daemon's, as status shows it.
    let status = d.status();
    assert_eq!(report["verified"]["head"], status["log_chain"]["head"]);
    assert_eq!(status["log_chain"]["seq"], 19);
    let human = stdout(&hookd(
        d.dir.path(),
        &["log", "verify", d.log.to_str().unwrap()],
    ));
    assert!(human.starts_with("✓ 20 lines, 1 file\n"), "{human}");

    let lines = log_lines(&d.log);
    let tampered = d.dir.path().join("tampered.jsonl");
    let broken = |edit: &dyn Fn(&mut Vec<Vec<u8>>)| {
        let mut copy = lines.clone();
        edit(&mut copy);
        write_lines(&tampered, &copy);
        let (report, code) = verify(&d, &[&tampered]);
        assert_eq!(code, Some(1), "{report}");
        assert_eq!(report["ok"], false);
        assert_eq!(report["broken"]["file"], tampered.display().to_string());
        (
            report["broken"]["line"].as_u64().unwrap(),
            report["broken"]["kind"].as_str().unwrap().to_string(),
        )
    };
    // One changed byte: `echo 3` → `echo 4` in the event on line 7.
    let changed = broken(&|l| {
        let text = String::from_utf8(l[6].clone()).unwrap();
        assert!(text.contains("echo 3"), "{text}");
        l[6] = text.replacen("echo 3", "echo 4", 1).into_bytes();
    });
    assert_eq!(changed, (7, "changed".into()));
    // A decision taken out.
    assert_eq!(broken(&|l| drop(l.remove(9))), (10, "removed".into()));
    // A line inserted: a copy of an earlier one.
    assert_eq!(
        broken(&|l| {
            let copy = l[2].clone();
            l.insert(12, copy)
        }),
        (13, "inserted".into())
    );
    // A pair swapped.
    assert_eq!(broken(&|l| l.swap(14, 15)), (15, "swapped".into()));
    // The human report names the line.
    let out = hookd(d.dir.path(), &["log", "verify", tampered.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!("✗ {}:15: ", tampered.display())),
        "{text}"
    );
}

#[test]
fn a_rotated_set_verifies_as_one_chain_and_a_cut_between_files_is_found() {
    let d = Daemon::start_with(DaemonOptions {
        config: Some("[log]\nmax_bytes = 4000\nkeep = 20\n".to_string()),
        ..DaemonOptions::default()
    });
    fill(&d, 20);
    assert!(d.counter("log_rotations") >= 3, "{}", d.status());
    let files = hookd::cli::log::log_files(&d.log);
    assert!(files.len() >= 4, "{files:?}");
    let (report, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["verified"]["files"], files.len());
    // Every line of the files, chain starts included, counted once.
    let total: usize = files.iter().map(|f| log_lines(f).len()).sum();
    assert_eq!(report["verified"]["lines"], total);
    assert_eq!(report["verified"]["starts_from"], "genesis");
    // Each rotated file verifies on its own, from where the one before ended.
    let (alone, code) = verify(&d, &[&files[1], &files[2]]);
    assert_eq!(code, Some(0), "{alone}");
    assert_ne!(alone["verified"]["starts_from"], "genesis");

    // The last line of a rotated file removed: found where the next file
    // starts.
    let mut second = log_lines(&files[1]);
    second.pop();
    write_lines(&files[1], &second);
    let (report, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["broken"]["file"], files[2].display().to_string());
    assert_eq!(report["broken"]["line"], 1);
    assert_eq!(report["broken"]["kind"], "discontinuous");

    // A whole file missing from the set: the same.
    let (report, code) = verify(&d, &[&files[0], &files[2], &files[3]]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["broken"]["file"], files[2].display().to_string());
    assert_eq!(report["broken"]["line"], 1);
}

/// A daemon rotating its log every 16 KiB into 8 files, filled until
/// `.1` to `.5` exist, then stopped: a set nothing writes to.
fn rotated_set() -> Daemon {
    let mut d = Daemon::start_with(DaemonOptions {
        config: Some("[log]\nmax_bytes = 16384\nkeep = 8\n".to_string()),
        ..DaemonOptions::default()
    });
    while !numbered(&d.log, 5).exists() {
        fill(&d, 10);
    }
    d.stop();
    d
}

/// `<log>.<n>`.
fn numbered(log: &Path, n: u32) -> std::path::PathBuf {
    let mut path = log.as_os_str().to_owned();
    path.push(format!(".{n}"));
    path.into()
}

#[test]
fn a_rotated_file_removed_from_the_middle_is_named_and_the_files_past_it_are_checked() {
    let d = rotated_set();
    let files = hookd::cli::log::log_files(&d.log);
    std::fs::remove_file(numbered(&d.log, 3)).unwrap();

    let (report, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(report["ok"], false);
    assert_eq!(report["broken"]["kind"], "missing", "{report}");
    assert_eq!(
        report["broken"]["file"],
        numbered(&d.log, 2).display().to_string()
    );
    assert_eq!(report["broken"]["line"], 1);
    let detail = report["broken"]["detail"].as_str().unwrap();
    let named = format!(
        "{} is missing between {} and {}",
        numbered(&d.log, 3).display(),
        numbered(&d.log, 4).display(),
        numbered(&d.log, 2).display()
    );
    assert!(detail.starts_with(&named), "{report}");
    assert_eq!(report["gaps"][0]["missing"], json!([numbered(&d.log, 3)]));
    assert_eq!(report["gaps"][0]["lines_missing"], true);
    // Every file that is there was checked, past the gap too.
    assert_eq!(
        report["files"].as_array().unwrap().len(),
        files.len() - 1,
        "{report}"
    );
    let human = hookd(d.dir.path(), &["log", "verify", d.log.to_str().unwrap()]);
    assert_eq!(human.status.code(), Some(1));
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.starts_with(&format!("✗ {}:1: {named}", numbered(&d.log, 2).display())),
        "{text}"
    );

    // A line changed in a file beyond the gap is found.
    let mut oldest = log_lines(&numbered(&d.log, 5));
    let last = oldest.len() - 1;
    let at = oldest[last].iter().position(|&b| b == b':').unwrap() + 2;
    oldest[last][at] ^= 1;
    write_lines(&numbered(&d.log, 5), &oldest);
    let (report, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(1), "{report}");
    assert_eq!(
        report["broken"]["file"],
        numbered(&d.log, 5).display().to_string()
    );
    assert_eq!(report["broken"]["kind"], "changed", "{report}");
}

#[test]
fn a_rotation_cut_short_by_a_crash_verifies_and_the_next_start_renumbers() {
    let d = rotated_set();
    let (intact, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(0), "{intact}");
    // What a kill -9 between two renames of a rotation leaves: `.4` and up
    // moved up one, `.3` not yet, so no `.3`.
    let highest = (1..)
        .take_while(|&n| numbered(&d.log, n).exists())
        .last()
        .unwrap();
    for n in (3..=highest).rev() {
        std::fs::rename(numbered(&d.log, n), numbered(&d.log, n + 1)).unwrap();
    }
    let (report, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(0), "no lines are missing: {report}");
    assert_eq!(report["verified"]["lines"], intact["verified"]["lines"]);
    assert_eq!(report["verified"]["head"], intact["verified"]["head"]);
    assert_eq!(report["gaps"][0]["missing"], json!([numbered(&d.log, 3)]));
    assert_eq!(report["gaps"][0]["lines_missing"], false, "{report}");
    let human = stdout(&hookd(
        d.dir.path(),
        &["log", "verify", d.log.to_str().unwrap()],
    ));
    assert!(human.contains("but no lines are"), "{human}");

    // The next daemon on that log closes the gap when it starts.
    let next = Daemon::start_with(DaemonOptions {
        config: Some("[log]\nmax_bytes = 16384\nkeep = 8\n".to_string()),
        log_path: Some(d.log.display().to_string()),
        ..DaemonOptions::default()
    });
    poll_until(
        "the rotated files renumbered",
        Duration::from_secs(10),
        || numbered(&d.log, 3).exists() && !numbered(&d.log, highest + 1).exists(),
    );
    let (report, code) = verify(&next, &[&d.log]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report.get("gaps"), None, "{report}");
    assert_eq!(report["verified"]["head"], intact["verified"]["head"]);
    assert_eq!(report["verified"]["lines"], intact["verified"]["lines"]);
    assert!(next.stderr().contains("renumbered"), "{}", next.stderr());
}

/// Hooks over one connection, one after another, until the daemon is gone.
fn load_until_killed(socket: &Path) -> std::thread::JoinHandle<u64> {
    let mut client = RawClient::hello(socket, "load");
    let input = fixture("PostToolUse.json");
    std::thread::spawn(move || {
        let mut answered = 0;
        for i in 0.. {
            let hook =
                json!({"type": "hook", "id": format!("h{i}"), "deadline_ms": 5000, "input": input});
            if client.send_raw(format!("{hook}\n").as_bytes()).is_err() || client.recv().is_none() {
                break;
            }
            answered += 1;
        }
        answered
    })
}

/// Waits until every thread of process `pid` is stopped (state `T` in
/// `/proc/<pid>/task/*/stat`), after a SIGSTOP.
fn wait_stopped(pid: u32) {
    poll_until(
        "the daemon's threads stopped",
        Duration::from_secs(10),
        || {
            let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
                return false;
            };
            tasks.flatten().all(|task| {
                std::fs::read_to_string(task.path().join("stat"))
                    .ok()
                    .and_then(|stat| {
                        // `pid (comm) S …`: the state follows the last `)`.
                        let rest = &stat[stat.rfind(')')? + 1..];
                        rest.split_whitespace().next().map(|state| state == "T")
                    })
                    .unwrap_or(true)
            })
        },
    );
}

/// The gaps among `log`'s rotated files' numbers.
fn gaps(log: &Path) -> Vec<hookd::daemon::log::Gap> {
    let numbers = hookd::daemon::log::rotated_numbers(log).unwrap();
    hookd::daemon::log::Gap::all(&numbers)
}

#[test]
fn kill_9_in_the_middle_of_a_rotation_under_load_loses_nothing_and_the_next_start_renumbers() {
    // About a file per hook, and up to 300 of them: a rotation renames
    // every file there, so the writer is often in the middle of one.
    const CONFIG: &str = "[log]\nmax_bytes = 2048\nkeep = 300\n";
    let first = Daemon::start_with(DaemonOptions {
        config: Some(CONFIG.to_string()),
        ..DaemonOptions::default()
    });
    let log = first.log.clone();
    let mut d = first;
    // Owns the log's directory once `d` is a later daemon.
    let mut kept = Vec::new();
    for _ in 0..3 {
        let load = load_until_killed(&d.socket);
        poll_until("rotations under load", Duration::from_secs(60), || {
            d.counter("log_rotations") >= 20
        });
        // Stopped where a rotation has moved some files up and not yet
        // the rest (a number is missing): killed right there.
        let mut stopped_mid_rotation = false;
        for _ in 0..1000 {
            d.signal("STOP");
            // kill(2) returns before every thread has stopped: a rename
            // under way could still close the gap seen below.
            wait_stopped(d.pid());
            if !gaps(&log).is_empty() {
                stopped_mid_rotation = true;
                break;
            }
            d.signal("CONT");
        }
        assert!(
            stopped_mid_rotation,
            "never stopped the daemon mid-rotation"
        );
        d.signal("KILL");
        d.wait_exit(Duration::from_secs(10));
        assert!(load.join().unwrap() > 0);
        // What the kill left verifies: no lines are missing across the gap.
        let (report, code) = verify(&d, &[&log]);
        assert_eq!(code, Some(0), "{report}");
        assert_eq!(report["gaps"][0]["lines_missing"], false, "{report}");
        let next = Daemon::start_with(DaemonOptions {
            config: Some(CONFIG.to_string()),
            log_path: Some(log.display().to_string()),
            ..DaemonOptions::default()
        });
        kept.push(std::mem::replace(&mut d, next));
    }
    poll_until("the gap closed", Duration::from_secs(10), || {
        gaps(&log).is_empty()
    });
    let (report, code) = verify(&d, &[&log]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report.get("gaps"), None, "{report}");
    assert_eq!(report["verified"]["starts_from"], "genesis", "{report}");
    let files = hookd::cli::log::log_files(&log);
    assert_eq!(report["verified"]["files"], files.len(), "{report}");
}

#[test]
fn a_crash_mid_line_is_repaired_on_the_record_and_still_verifies() {
    let mut d = Daemon::start();
    fill(&d, 3);
    d.stop();
    // What a crash mid-write leaves: a last line without its end.
    let mut crashed = std::fs::read(&d.log).unwrap();
    crashed.extend_from_slice(br#"{"type":"event","id":"01a2"#);

    let (report, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(0), "{report}");
    std::fs::write(&d.log, &crashed).unwrap();
    let (report, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(0), "a torn tail is not tampering: {report}");
    assert_eq!(report["verified"]["lines"], 6);
    assert!(
        report["verified"]["notes"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("torn last line"),
        "{report}"
    );

    // The next daemon on that log removes the torn line, says so in the
    // chain, and goes on from the last whole line.
    let d = Daemon::start_with(DaemonOptions {
        log_prefill: Some(String::from_utf8(crashed).unwrap()),
        ..DaemonOptions::default()
    });
    fill(&d, 1);
    let (report, code) = verify(&d, &[&d.log]);
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(report["verified"]["lines"], 6 + 1 + 2);
    let notes = report["verified"]["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{report}");
    assert_eq!(notes[0]["line"], 7);
    assert!(
        notes[0]["detail"]
            .as_str()
            .unwrap()
            .contains("a torn line of 26 bytes was removed"),
        "{report}"
    );
    let repaired = &d.log_lines()[6];
    assert_eq!(repaired["type"], "log_repaired");
    assert_eq!(repaired["removed_bytes"], 26);
    assert_eq!(repaired["seq"], 6);
    let human = stdout(&hookd(
        d.dir.path(),
        &["log", "verify", d.log.to_str().unwrap()],
    ));
    assert!(
        human.contains("a torn line of 26 bytes was removed"),
        "{human}"
    );
}
