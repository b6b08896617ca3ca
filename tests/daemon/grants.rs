//! Humans in the loop through the real daemon and forwarder: short ids,
//! session grants (suggested, decided, applied, revoked, expired, kept
//! across reloads and restarts), `remember: "always"` editing the user
//! rules file, `hookd grants`, `hookd decide` by short id, and `hookd
//! statusline`.

use crate::support::daemon;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use daemon::{fixture, forward_in_background, stdout_json, Daemon, DaemonOptions, RawClient};
use serde_json::{json, Value};

const SESSION: &str = "1fce3faa-62dc-4336-ba9c-8494671dd902";

/// `npm` asks a person; `npm publish` is never allowed.
const RULES: &str = r#"
[[rule]]
id = "ask-npm"
action = "ask"
tool = "Bash(npm:*)"
reason = "npm runs project scripts"

[[rule]]
id = "no-publish"
action = "deny"
tool = "Bash(npm publish:*)"
reason = "publishing is done by CI"
"#;

const CONFIG: &str = "[decisions]\ntimeout = 20\n";

fn start(extra_args: &[String]) -> Daemon {
    Daemon::start_with(DaemonOptions {
        rules: Some(RULES.into()),
        config: Some(CONFIG.into()),
        args: extra_args.to_vec(),
        ..DaemonOptions::default()
    })
}

fn subscriber(d: &Daemon, name: &str) -> RawClient {
    let mut c = RawClient::hello(&d.socket, name);
    let ok = c.call(json!({"type": "subscribe", "filter": {}}));
    assert_eq!(ok["type"], "ok", "{ok}");
    c
}

fn bash(command: &str, session: &str) -> Value {
    let mut input = fixture("PreToolUse.json");
    input["tool_input"]["command"] = Value::String(command.into());
    input["session_id"] = Value::String(session.into());
    input
}

fn next_pending(c: &mut RawClient) -> Value {
    c.wait_for("a pending event", |f| {
        f["type"] == "event" && f["pending"] == true
    })
}

fn decision_of(out: &Output) -> String {
    stdout_json(out)["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or("none")
        .to_string()
}

fn hookd(d: &Daemon, args: &[&str]) -> Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .arg("--socket")
        .arg(&d.socket)
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

/// The decision record logged for event `id`.
fn logged_decision(d: &Daemon, id: &str) -> Value {
    let what = format!("a decision logged for {id}");
    daemon::poll_for(&what, Duration::from_secs(10), || {
        d.log_lines()
            .into_iter()
            .find(|l| l["type"] == "decision" && l["event_id"] == id)
    })
}

/// Asks through the forwarder; the subscriber decides it with `decide`
/// (`event_id` filled in with the short id); returns the pending frame,
/// the reply, and the forwarder's output.
fn ask_and_decide(
    d: &Daemon,
    c: &mut RawClient,
    command: &str,
    mut decide: Value,
) -> (Value, Value, Output) {
    let fwd = forward_in_background(&d.socket, &bash(command, SESSION), &[]);
    let pending = next_pending(c);
    decide["type"] = json!("decide");
    decide["event_id"] = pending["short_id"].clone();
    let reply = c.call(decide);
    (pending, reply, fwd.join().unwrap())
}

#[test]
fn a_pending_event_carries_its_short_id_suggestions_and_who_asked() {
    let d = start(&[]);
    let mut c = subscriber(&d, "approve");
    let fwd = forward_in_background(&d.socket, &bash("npm test -- --ci", SESSION), &[]);
    let pushed = next_pending(&mut c);
    let short = pushed["short_id"].as_str().unwrap();
    assert_eq!(short.len(), 5, "{pushed}");
    assert!(short
        .bytes()
        .all(|b| b.is_ascii_lowercase() && !b"ilo".contains(&b)));
    assert_eq!(
        pushed["asked_by"],
        json!({"rule_ids": ["ask-npm"], "reason": "npm runs project scripts"})
    );
    assert!(pushed["deadline_ms"].as_u64().unwrap() > 0);
    assert_eq!(
        pushed["verdicts"],
        json!(["allow", "deny", "ask", "defer", "none"])
    );
    let suggestions = pushed["suggestions"].as_array().unwrap();
    assert!(
        suggestions.contains(
            &json!({"remember": "session", "verdict": "allow", "rule": "Bash(npm test:*)"})
        ),
        "{pushed}"
    );
    assert!(
        suggestions.contains(
            &json!({"remember": "always", "verdict": "deny", "rule": "Bash(npm test:*)"})
        ),
        "{pushed}"
    );
    // The `pending` listing says the same.
    let list = c.call(json!({"type": "pending"}));
    let item = &list["result"][0];
    assert_eq!(item["short_id"], short);
    assert_eq!(item["suggestions"], pushed["suggestions"]);
    assert_eq!(item["asked_by"], pushed["asked_by"]);
    // `hookd pending` shows it; `hookd decide` takes the short id.
    let human = hookd(&d, &["pending"]);
    assert!(text(&human).contains(short), "{}", text(&human));
    let decided = hookd(&d, &["decide", short, "deny", "--reason", "not now"]);
    assert!(decided.status.success(), "{}", text(&decided));
    assert_eq!(decision_of(&fwd.join().unwrap()), "deny");
    let again = hookd(&d, &["decide", short, "allow"]);
    assert!(
        text(&again).contains("already decided by client:hookd-cli"),
        "{}",
        text(&again)
    );
    let bad = hookd(&d, &["decide", "l0l0l", "allow"]);
    assert!(!bad.status.success());
    assert!(
        text(&bad).contains("neither an event uuid nor a short id"),
        "{}",
        text(&bad)
    );
}

#[test]
fn a_session_grant_answers_later_events_of_its_session_but_never_over_a_deny() {
    let d = start(&[]);
    let mut c = subscriber(&d, "approve");
    let (pending, reply, out) = ask_and_decide(
        &d,
        &mut c,
        "npm test",
        json!({"verdict": "allow", "remember": "session", "rule": "Bash(npm:*)"}),
    );
    assert_eq!(reply["type"], "ok", "{reply}");
    assert_eq!(decision_of(&out), "allow");
    let grant = reply["result"].clone();
    let id = grant["id"].as_str().unwrap().to_string();
    assert_eq!(grant["rule"], "Bash(npm:*)");
    assert_eq!(grant["session_id"], SESSION);
    assert_eq!(grant["by"], "approve");
    assert_eq!(grant["from_event"], pending["event"]["id"]);
    let pushed = c.wait_for("the grant frame", |f| f["type"] == "grant");
    assert_eq!(
        pushed,
        json!({"type": "grant", "change": "added", "grant": grant})
    );
    let first = logged_decision(&d, pending["event"]["id"].as_str().unwrap());
    assert_eq!(first["source"], "client:approve");
    assert_eq!(first["remembered"], "session");
    assert_eq!(first["grant_rule"], "Bash(npm:*)");

    // Later events of the session: answered by the grant, nobody asked.
    let out = d.forward(&bash("npm run build", SESSION), &[]);
    assert_eq!(decision_of(&out), "allow");
    let event = c.wait_for("the granted event", |f| f["type"] == "event");
    assert_eq!(event["pending"], false);
    let record = logged_decision(&d, event["event"]["id"].as_str().unwrap());
    assert_eq!(record["source"], format!("grant:{id}"));
    assert_eq!(record["grant_rule"], "Bash(npm:*)");
    // Its subagents share the session id: granted too.
    let mut subagent = bash("npm run lint", SESSION);
    subagent["agent_id"] = json!("acc6486aafe01fbb1");
    subagent["agent_type"] = json!("general-purpose");
    assert_eq!(decision_of(&d.forward(&subagent, &[])), "allow");
    // A deny rule still wins over the grant.
    let out = d.forward(&bash("npm publish", SESSION), &[]);
    assert_eq!(decision_of(&out), "deny");
    // Another session is asked.
    let fwd = forward_in_background(&d.socket, &bash("npm run build", "other-session"), &[]);
    let other = next_pending(&mut c);
    c.call(json!({"type": "decide", "event_id": other["short_id"], "verdict": "deny"}));
    assert_eq!(decision_of(&fwd.join().unwrap()), "deny");

    let status = d.status();
    assert_eq!(status["counters"]["grants"], 1);
    assert_eq!(status["counters"]["grant_decisions"], 2);
    assert_eq!(status["grants"][0]["id"], id.as_str());

    // `hookd grants` lists and revokes.
    let listed = hookd(&d, &["grants", "--json"]);
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed, json!([grant]));
    let human = hookd(&d, &["grants"]);
    assert!(
        text(&human).contains(&id) && text(&human).contains("Bash(npm:*)"),
        "{}",
        text(&human)
    );
    let revoked = hookd(&d, &["grants", "revoke", &id]);
    assert!(revoked.status.success(), "{}", text(&revoked));
    let pushed = c.wait_for("the revoke frame", |f| f["type"] == "grant");
    assert_eq!(pushed["change"], "revoked");
    let again = hookd(&d, &["grants", "revoke", &id]);
    assert!(text(&again).contains("no active grant"), "{}", text(&again));
    // Asked again.
    let fwd = forward_in_background(&d.socket, &bash("npm run build", SESSION), &[]);
    let asked = next_pending(&mut c);
    c.call(json!({"type": "decide", "event_id": asked["event"]["id"], "verdict": "allow"}));
    assert_eq!(decision_of(&fwd.join().unwrap()), "allow");
}

#[test]
fn a_deny_grant_denies_and_bad_remembers_are_refused_with_the_event_still_pending() {
    let d = start(&[]);
    let mut c = subscriber(&d, "approve");
    let fwd = forward_in_background(&d.socket, &bash("npm ci", SESSION), &[]);
    let pending = next_pending(&mut c);
    let short = pending["short_id"].clone();
    for (decide, says) in [
        (
            json!({"verdict": "allow", "remember": "session", "rule": "Bash(npm"}),
            "`Bash(npm` is not a permission rule",
        ),
        (
            json!({"verdict": "ask", "remember": "session"}),
            "only allow and deny can be remembered",
        ),
        (
            json!({"verdict": "allow", "remember": "always", "ttl_s": 5}),
            "`ttl_s` goes with",
        ),
    ] {
        let mut decide = decide;
        decide["type"] = json!("decide");
        decide["event_id"] = short.clone();
        let reply = c.call(decide);
        assert_eq!(reply["code"], "invalid_request", "{reply}");
        assert!(reply["message"].as_str().unwrap().contains(says), "{reply}");
    }
    let reply = c.call(json!({"type": "decide", "event_id": short, "verdict": "deny", "reason": "no npm today", "remember": "session"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    assert_eq!(
        reply["result"]["rule"], "Bash(npm ci:*)",
        "the first suggestion"
    );
    assert_eq!(decision_of(&fwd.join().unwrap()), "deny");
    let out = d.forward(&bash("npm ci --force", SESSION), &[]);
    assert_eq!(decision_of(&out), "deny");
    let reason = stdout_json(&out)["hookSpecificOutput"]["permissionDecisionReason"].clone();
    assert!(reason.as_str().unwrap().contains("grant"), "{reason}");
}

#[test]
fn grants_survive_a_reload_and_a_restart_and_end_with_their_session() {
    let state = tempfile::tempdir().unwrap();
    let grants_file = state.path().join("grants.json");
    let args = vec!["--grants".to_string(), grants_file.display().to_string()];
    let mut d = start(&args);
    let mut c = subscriber(&d, "approve");
    let (_, reply, _) = ask_and_decide(
        &d,
        &mut c,
        "npm test",
        json!({"verdict": "allow", "remember": "session"}),
    );
    let grant = reply["result"].clone();
    // (A TTL's end is tested on tokio's paused clock: inprocess.rs,
    // `a_session_grant_ends_with_its_ttl`.)

    // A reload keeps it.
    d.signal("HUP");
    daemon::poll_until("the reload", Duration::from_secs(10), || {
        d.status()["rules"]["generation"] == 2
    });
    assert_eq!(
        decision_of(&d.forward(&bash("npm test", SESSION), &[])),
        "allow"
    );

    // So does a restart: the file holds it, private.
    wait_for_file(&grants_file, |text| text.contains("npm test"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&grants_file)
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    drop(c);
    d.stop();
    let d = start(&args);
    let mut c = subscriber(&d, "approve");
    assert_eq!(c.call(json!({"type": "grants"}))["result"], json!([grant]));
    assert_eq!(
        decision_of(&d.forward(&bash("npm test", SESSION), &[])),
        "allow"
    );

    // The session's end ends it.
    let mut end = fixture("SessionEnd.json");
    end["session_id"] = json!(SESSION);
    d.forward(&end, &[]);
    let ended = c.wait_for("the session's end", |f| f["type"] == "grant");
    assert_eq!(
        ended,
        json!({"type": "grant", "change": "expired", "grant": grant})
    );
    assert_eq!(c.call(json!({"type": "grants"}))["result"], json!([]));
    wait_for_file(&grants_file, |text| !text.contains("npm test"));
}

fn wait_for_file(path: &Path, ok: impl Fn(&str) -> bool) {
    let what = format!("the text wanted in {}", path.display());
    daemon::poll_reporting(&what, Duration::from_secs(10), || {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if !text.is_empty() && ok(&text) {
            return Ok(());
        }
        Err(text)
    })
}

#[test]
fn always_creates_the_user_rules_file_from_the_defaults_and_appends_the_rule() {
    let d = Daemon::start_with(DaemonOptions {
        config: Some("[decisions]\nroute_undecided = true\ntimeout = 20\n".into()),
        ..DaemonOptions::default()
    });
    let user_file = d.dir.path().join("config/hookd/rules.toml");
    assert!(!user_file.exists());
    let mut c = subscriber(&d, "approve");
    let (pending, reply, out) = ask_and_decide(
        &d,
        &mut c,
        "cargo test --workspace",
        json!({"verdict": "allow", "remember": "always"}),
    );
    assert_eq!(reply["type"], "ok", "{reply}\n{}", d.stderr());
    assert_eq!(decision_of(&out), "allow");
    assert_eq!(
        reply["result"],
        json!({"rules_file": user_file.display().to_string(), "rule": "Bash(cargo test:*)", "created_from_defaults": true})
    );
    let text = std::fs::read_to_string(&user_file).unwrap();
    assert!(
        text.starts_with(hookd::rules::DEFAULTS_TOML),
        "the defaults, as text"
    );
    let event_id = pending["event"]["id"].as_str().unwrap();
    assert!(
        text.contains(&format!("(approve answered allow \"always\" for event {event_id}).\n[[rule]]\nid = \"remembered-allow\"\naction = \"allow\"\ntool = \"Bash(cargo test:*)\"\n")),
        "{text}"
    );
    let record = logged_decision(&d, event_id);
    assert_eq!(record["remembered"], "always");
    assert_eq!(record["grant_rule"], "Bash(cargo test:*)");
    let status = d.status();
    assert_eq!(status["rules"]["source"], user_file.display().to_string());
    // The next one is the rule's, in any session.
    let out = d.forward(&bash("cargo test -p x", "another"), &[]);
    assert_eq!(decision_of(&out), "allow");
    let hookd_check = Command::new(daemon::hookd_bin())
        .args(["rules", "check"])
        .arg(&user_file)
        .output()
        .unwrap();
    assert!(hookd_check.status.success(), "{}", text_of(&hookd_check));

    // The daemon now watches the file it created: an edit by hand is
    // picked up without a SIGHUP.
    let generation = d.status()["rules"]["generation"].as_u64().unwrap();
    let mut edited = std::fs::read_to_string(&user_file).unwrap();
    edited.push_str(
        "\n[[rule]]\nid = \"no-cargo-publish\"\naction = \"deny\"\ntool = \"Bash(cargo publish:*)\"\n",
    );
    std::fs::write(&user_file, edited).unwrap();
    daemon::poll_reporting("the edit reloaded", Duration::from_secs(10), || {
        if d.status()["rules"]["generation"].as_u64().unwrap() != generation {
            return Ok(());
        }
        Err(d.stderr())
    });
    let out = d.forward(&bash("cargo publish", "another"), &[]);
    assert_eq!(decision_of(&out), "deny");
}

fn text_of(out: &Output) -> String {
    text(out)
}

#[test]
fn always_refuses_a_read_only_rules_file_and_says_what_to_do() {
    use std::os::unix::fs::PermissionsExt;
    let d = start(&[]);
    let rules = d.dir.path().join("rules.toml");
    std::fs::set_permissions(&rules, std::fs::Permissions::from_mode(0o444)).unwrap();
    let mut c = subscriber(&d, "approve");
    let fwd = forward_in_background(&d.socket, &bash("npm test", SESSION), &[]);
    let pending = next_pending(&mut c);
    let reply = c.call(json!({"type": "decide", "event_id": pending["short_id"], "verdict": "allow", "remember": "always"}));
    assert_eq!(reply["code"], "invalid_request", "{reply}");
    let message = reply["message"].as_str().unwrap();
    assert!(
        message.contains("read-only") && message.contains("chmod u+w"),
        "{message}"
    );
    assert_eq!(std::fs::read_to_string(&rules).unwrap(), RULES, "untouched");
    // Still pending: answered once instead.
    let reply =
        c.call(json!({"type": "decide", "event_id": pending["short_id"], "verdict": "allow"}));
    assert_eq!(reply["type"], "ok", "{reply}");
    assert_eq!(decision_of(&fwd.join().unwrap()), "allow");
    // And a writable file is edited as text, reloaded.
    std::fs::set_permissions(&rules, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (_, reply, _) = ask_and_decide(
        &d,
        &mut c,
        "npm test",
        json!({"verdict": "allow", "remember": "always"}),
    );
    assert_eq!(
        reply["result"]["created_from_defaults"],
        Value::Null,
        "{reply}"
    );
    let text = std::fs::read_to_string(&rules).unwrap();
    assert!(text.starts_with(RULES), "{text}");
    assert_eq!(
        std::fs::metadata(&rules).unwrap().permissions().mode() & 0o777,
        0o644
    );
    assert_eq!(d.status()["rules"]["count"], 3);
    // `ask-npm` still matches, and ask beats allow: the person is told.
    let note = reply["result"]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("ask about") && note.contains("ask-npm"),
        "{reply}"
    );
}

#[test]
fn the_statusline_shows_up_pending_and_the_last_decision_and_down_when_it_must() {
    let d = Daemon::start_with(DaemonOptions {
        rules: Some(format!(
            "{RULES}\n[[rule]]\nid = \"no-rm\"\naction = \"deny\"\ntool = \"Bash(rm:*)\"\n"
        )),
        config: Some(CONFIG.into()),
        ..DaemonOptions::default()
    });
    let line = |socket: &Path| {
        let out = Command::new(daemon::hookd_bin())
            .args(["statusline", "--socket"])
            .arg(socket)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(line(&d.socket), "hookd ✓\n");
    d.forward(&bash("rm -rf /tmp/x", SESSION), &[]);
    let _c = subscriber(&d, "approve");
    let fwd = forward_in_background(&d.socket, &bash("npm test", SESSION), &[]);
    daemon::poll_until("the ask pending", Duration::from_secs(10), || {
        d.counter("pending") > 0
    });
    assert_eq!(
        line(&d.socket),
        "hookd ✓ · 1 pending · deny rm -rf /tmp/x (no-rm)\n"
    );
    // A daemon that does not answer shows as down, and the line still comes.
    d.signal("STOP");
    let stopped = line(&d.socket);
    d.signal("CONT");
    assert_eq!(stopped, "hookd ✗ down\n");
    assert_eq!(line(&d.dir.path().join("nothing.sock")), "hookd ✗ down\n");
    drop(_c);
    fwd.join().unwrap();
}

/// A `hello.name` that would write a line of its own into the rules file
/// (a newline, then an allow-all rule) is refused at `hello`, naming what a
/// name may hold; a name with quotes, `#` and non-ASCII letters is fine and
/// lands in the comment as it is, with exactly the one rule appended.
#[test]
fn a_client_name_can_never_add_a_rule_to_the_rules_file() {
    let d = start(&[]);
    let rules = d.dir.path().join("rules.toml");
    let injected = "approve). \n[[rule]]\nid = \"evil\"\naction = \"allow\"\ntool = \"Bash\"\n# (";
    let mut approver = subscriber(&d, "approve");
    let mut attacker = RawClient::connect(&d.socket);
    attacker.send(&json!({"type": "hello", "v": 1, "role": "client", "name": injected}));
    let answer = attacker.recv().expect("an answer to hello");
    let fwd = forward_in_background(&d.socket, &bash("npm test", SESSION), &[]);
    let pending = next_pending(&mut approver);
    if answer["type"] == "welcome" {
        // Let in: it remembers an `always` under its name.
        let reply = attacker.call(json!({"type": "decide", "event_id": pending["short_id"],
            "verdict": "allow", "remember": "always"}));
        assert_eq!(reply["type"], "ok", "{reply}");
    } else {
        let reply = approver
            .call(json!({"type": "decide", "event_id": pending["short_id"], "verdict": "allow"}));
        assert_eq!(reply["type"], "ok", "{reply}");
    }
    assert_eq!(decision_of(&fwd.join().unwrap()), "allow");
    let text = std::fs::read_to_string(&rules).unwrap();
    assert!(
        !text.lines().any(|l| l.starts_with("id = \"evil\"")),
        "a rule was injected:\n{text}"
    );
    assert_eq!(text, RULES, "untouched");
    assert_eq!(d.status()["rules"]["count"], 2);
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["code"], "invalid_frame", "{answer}");
    let message = answer["message"].as_str().unwrap();
    assert!(
        message.contains("`hello.name` must be 1 to 64 printable characters")
            && message.contains("\\u{a}"),
        "{message}"
    );
    assert_eq!(attacker.recv(), None, "the connection is closed");

    // An odd but printable name is let in and kept, as it is, in the comment.
    let odd = "Zoë's \"phone\" #2 — 承認";
    let mut c = subscriber(&d, odd);
    let (pending, reply, _) = ask_and_decide(
        &d,
        &mut c,
        "npm test",
        json!({"verdict": "allow", "remember": "always"}),
    );
    assert_eq!(reply["type"], "ok", "{reply}");
    let text = std::fs::read_to_string(&rules).unwrap();
    let event_id = pending["event"]["id"].as_str().unwrap();
    assert!(
        text.contains(&format!(
            "({odd} answered allow \"always\" for event {event_id}).\n[[rule]]\nid = \"remembered-allow\"\n"
        )),
        "{text}"
    );
    assert_eq!(d.status()["rules"]["count"], 3, "one rule appended");
    let checked = Command::new(daemon::hookd_bin())
        .args(["rules", "check"])
        .arg(&rules)
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", text_of(&checked));
}

/// `always allow` on an event an `ask` rule covers: the pending item's
/// suggestion says, before anything is written, that the rule would change
/// nothing; the next identical call is asked again, and remembering it
/// again leaves the rules file with the one rule.
#[test]
fn an_outvoted_always_is_said_first_and_the_same_always_twice_appends_one_rule() {
    let d = start(&[]);
    let rules = d.dir.path().join("rules.toml");
    let mut c = subscriber(&d, "approve");
    let mut replies = Vec::new();
    for round in 0..2 {
        let (pending, reply, out) = ask_and_decide(
            &d,
            &mut c,
            "npm test",
            json!({"verdict": "allow", "remember": "always"}),
        );
        let always = pending["suggestions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["remember"] == "always" && s["verdict"] == "allow")
            .cloned()
            .unwrap();
        assert_eq!(
            always["note"],
            "the rules still ask about this event: rule ask-npm (ask beats allow); narrow or remove it to stop being asked",
            "round {round}: said before: {pending}"
        );
        assert_eq!(reply["type"], "ok", "{reply}");
        assert_eq!(decision_of(&out), "allow");
        replies.push(reply);
    }
    assert_eq!(replies[0]["result"]["already_present"], Value::Null);
    assert_eq!(
        replies[1]["result"]["already_present"], true,
        "{}",
        replies[1]
    );
    assert!(
        replies[1]["result"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("ask-npm")),
        "{}",
        replies[1]
    );
    let file = std::fs::read_to_string(&rules).unwrap();
    assert_eq!(file.matches("[[rule]]").count(), 3, "{file}");
    assert_eq!(
        file.matches("tool = \"Bash(npm test:*)\"").count(),
        1,
        "{file}"
    );
    assert_eq!(d.status()["rules"]["count"], 3);
    // `hookd decide` says so too.
    let fwd = forward_in_background(&d.socket, &bash("npm test", SESSION), &[]);
    let pending = next_pending(&mut c);
    let out = hookd(
        &d,
        &[
            "decide",
            pending["short_id"].as_str().unwrap(),
            "allow",
            "--remember",
            "always",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "Bash(npm test:*) is already in {}; nothing added",
            rules.display()
        )),
        "{}",
        text(&out)
    );
    assert_eq!(decision_of(&fwd.join().unwrap()), "allow");
    assert_eq!(d.status()["rules"]["count"], 3);
}
