//! `hookd doctor` on a healthy setup (daemon running, `hookd install` done,
//! a hook fired), on a fresh one (nothing fired, no adapter: notes), with
//! only Codex or Gemini registered, and on a broken one (no daemon, a
//! timeout in milliseconds, a forwarder path that does not exist, a
//! duplicate registration, a bad rules file).

use crate::support::daemon;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use daemon::Daemon;
use serde_json::{json, Value};

/// Runs `hookd ARGS` with HOME, XDG dirs and CLAUDE_CONFIG_DIR inside `root`,
/// so nothing of the machine's own setup is seen.
fn hookd(root: &Path, args: &[&str]) -> Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .current_dir(root)
        .env("HOME", root.join("home"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("HOOKD_SOCKET")
        .env_remove("XDG_RUNTIME_DIR")
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("XDG_STATE_HOME", root.join("state"))
        .output()
        .expect("running hookd")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The output line of check `name` (`✓ name: …` or `✗ name: …`).
fn line<'a>(text: &'a str, name: &str) -> &'a str {
    text.lines()
        .find(|l| {
            l[l.char_indices().nth(2).map_or(0, |(i, _)| i)..].starts_with(&format!("{name}: "))
        })
        .unwrap_or_else(|| panic!("no `{name}` line in:\n{text}"))
}

const CHECKS: [&str; 12] = [
    "forwarder",
    "socket",
    "daemon",
    "settings:user",
    "settings:project",
    "settings:local",
    "events",
    "unjudged",
    "rules",
    "log",
    "hooks fire",
    "adapter",
];

#[test]
fn a_healthy_setup_passes_every_check() {
    let d = Daemon::start();
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let fwd = daemon::forwarder_bin();
    let out = hookd(
        root.path(),
        &[
            "install",
            "--scope",
            "project",
            "--project",
            project.to_str().unwrap(),
            "--forwarder",
            fwd.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A hook fires: the forwarder relays one event from "Claude Code".
    let reply = d.forward(&daemon::fixture("PreToolUse.json"), &["--timeout", "5"]);
    assert!(reply.status.success());
    d.wait_log_lines(2);

    let args = [
        "doctor",
        "--socket",
        d.socket.to_str().unwrap(),
        "--project",
        project.to_str().unwrap(),
    ];
    let out = hookd(root.path(), &args);
    let text = stdout(&out);
    eprintln!("{text}");
    assert!(out.status.success(), "doctor failed:\n{text}");
    assert_eq!(text.lines().count(), CHECKS.len(), "{text}");
    for name in CHECKS {
        assert!(line(&text, name).starts_with("✓ "), "{name}:\n{text}");
    }
    assert!(line(&text, "daemon").contains("answers"), "{text}");
    assert!(
        line(&text, "settings:project").contains("32 registrations for 32 events"),
        "{text}"
    );
    assert!(line(&text, "settings:user").contains("no file"), "{text}");
    assert!(
        line(&text, "hooks fire").contains("last Claude Code event: PreToolUse"),
        "{text}"
    );
    assert!(!text.contains("fix:"), "{text}");

    let mut json_args = args.to_vec();
    json_args.push("--json");
    let out = hookd(root.path(), &json_args);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true);
    assert_eq!(report["checks"].as_array().unwrap().len(), CHECKS.len());
}

#[test]
fn a_broken_setup_fails_with_the_right_lines() {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let fwd = daemon::forwarder_bin();

    // User settings: the forwarder for PreToolUse with a timeout in ms.
    let user = root.path().join("home/.claude/settings.json");
    fs::create_dir_all(user.parent().unwrap()).unwrap();
    let handler =
        json!({"type": "command", "command": fwd, "args": ["--timeout", "25"], "timeout": 30000});
    fs::write(
        &user,
        serde_json::to_string_pretty(&json!({"hooks": {"PreToolUse": [{"hooks": [handler]}]}}))
            .unwrap(),
    )
    .unwrap();
    // Project settings: installed with a forwarder that is gone since, and
    // so PreToolUse is registered twice (user and project).
    let gone = root.path().join("old-bin/hook-forwarder");
    fs::create_dir_all(gone.parent().unwrap()).unwrap();
    fs::copy(&fwd, &gone).unwrap();
    let out = hookd(
        root.path(),
        &[
            "install",
            "--scope",
            "project",
            "--project",
            project.to_str().unwrap(),
            "--forwarder",
            gone.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    fs::remove_file(&gone).unwrap();
    // A rules file with an error.
    let rules = root.path().join("config/hookd/rules.toml");
    fs::create_dir_all(rules.parent().unwrap()).unwrap();
    fs::write(
        &rules,
        "[[rule]]\nid = \"x\"\naction = \"maybe\"\ntool = \"Bash\"\n",
    )
    .unwrap();

    // No daemon on this socket.
    let socket = root.path().join("run/hookd.sock");
    let out = hookd(
        root.path(),
        &[
            "doctor",
            "--socket",
            socket.to_str().unwrap(),
            "--project",
            project.to_str().unwrap(),
        ],
    );
    let text = stdout(&out);
    eprintln!("{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(line(&text, "forwarder").starts_with("✓ "), "{text}");
    assert!(line(&text, "socket").starts_with("✓ "), "{text}");
    let daemon = line(&text, "daemon");
    assert!(
        daemon.starts_with("✗ ") && daemon.contains("cannot reach hookd"),
        "{text}"
    );
    assert!(daemon.contains("fix: start it"), "{text}");
    let user_line = line(&text, "settings:user");
    assert!(
        user_line.starts_with("✗ ") && user_line.contains("timeout 30000 looks like milliseconds"),
        "{text}"
    );
    assert!(
        user_line.contains("fix: write the timeout in seconds (e.g. 30)"),
        "{text}"
    );
    let project_line = line(&text, "settings:project");
    assert!(
        project_line.starts_with("✗ ")
            && project_line.contains(&format!("forwarder {} does not exist", gone.display())),
        "{text}"
    );
    assert!(line(&text, "settings:local").starts_with("✓ "), "{text}");
    let events = line(&text, "events");
    assert!(
        events.starts_with("✗ ")
            && events.contains(&format!(
                "PreToolUse reaches hookd 2 times (user {}:",
                user.display()
            )),
        "{text}"
    );
    let rules_line = line(&text, "rules");
    assert!(
        rules_line.starts_with("✗ ") && rules_line.contains(&format!("{}:3:", rules.display())),
        "{text}"
    );
    // Nothing fired yet: a note (the daemon's line says what is broken).
    assert!(line(&text, "hooks fire").starts_with("· "), "{text}");
    // The log does not exist yet, but can be created.
    assert!(line(&text, "log").starts_with("✓ "), "{text}");
}

#[test]
fn an_unsafe_socket_directory_is_flagged() {
    use std::os::unix::fs::PermissionsExt;
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("open");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o777)).unwrap();
    let out = hookd(
        root.path(),
        &[
            "doctor",
            "--socket",
            dir.join("hookd.sock").to_str().unwrap(),
        ],
    );
    let text = stdout(&out);
    assert!(!out.status.success());
    let socket = line(&text, "socket");
    assert!(
        socket.starts_with("✗ ") && socket.contains("writable by group or others"),
        "{text}"
    );
}

#[test]
fn in_the_home_directory_the_project_file_is_the_user_file() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    fs::create_dir_all(&home).unwrap();
    let fwd = daemon::forwarder_bin();
    let out = hookd(
        root.path(),
        &["install", "--forwarder", fwd.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = hookd(
        root.path(),
        &[
            "doctor",
            "--socket",
            root.path().join("run/hookd.sock").to_str().unwrap(),
            "--project",
            home.to_str().unwrap(),
        ],
    );
    let text = stdout(&out);
    assert!(
        line(&text, "settings:project").contains("the same file as settings:user"),
        "{text}"
    );
    let events = line(&text, "events");
    assert!(events.starts_with("✓ "), "no false duplicates: {text}");
}

/// `hookd install --scope SCOPE` in `root`'s home and `project`, plus
/// `extra` (the built forwarder unless `extra` names another).
fn install(root: &Path, project: &Path, scope: &str, extra: &[&str]) {
    let fwd = daemon::forwarder_bin();
    let mut args = vec!["install", "--scope", scope, "--project"];
    args.push(project.to_str().unwrap());
    if !extra.contains(&"--forwarder") {
        args.extend(["--forwarder", fwd.to_str().unwrap()]);
    }
    args.extend_from_slice(extra);
    let out = hookd(root, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `hookd doctor --socket SOCKET --project PROJECT` in `root`.
fn doctor_of(root: &Path, socket: &Path, project: &Path) -> Output {
    hookd(
        root,
        &[
            "doctor",
            "--socket",
            socket.to_str().unwrap(),
            "--project",
            project.to_str().unwrap(),
        ],
    )
}

/// A daemon whose data directory is empty: no Agent SDK adapter.
fn daemon_without_adapter(root: &Path) -> Daemon {
    Daemon::start_with(daemon::DaemonOptions {
        env: vec![(
            "XDG_DATA_HOME".into(),
            root.join("data").to_str().unwrap().into(),
        )],
        ..daemon::DaemonOptions::default()
    })
}

/// A fresh setup: `hookd install`, the daemon running, no Agent SDK
/// adapter and no hook fired yet. Nothing is broken, so doctor passes; what
/// is absent and optional is a note (`·`), with how to set it up.
#[test]
fn a_fresh_setup_without_the_adapter_passes_with_notes() {
    let root = tempfile::tempdir().unwrap();
    let d = daemon_without_adapter(root.path());
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    install(root.path(), &project, "user", &[]);

    let out = doctor_of(root.path(), &d.socket, &project);
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(0), "doctor failed:\n{text}");
    let adapter = line(&text, "adapter");
    assert!(adapter.starts_with("· "), "{text}");
    assert!(adapter.contains("not installed (optional"), "{text}");
    assert!(adapter.contains("→ `hookd adapter install`"), "{text}");
    assert!(line(&text, "hooks fire").starts_with("· "), "{text}");
    assert!(line(&text, "settings:user").starts_with("✓ "), "{text}");
    assert!(line(&text, "events").starts_with("✓ "), "{text}");
    assert!(!text.contains('✗'), "{text}");

    let mut json_args = vec!["doctor", "--json", "--socket"];
    json_args.push(d.socket.to_str().unwrap());
    let out = hookd(root.path(), &json_args);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["ok"], true);
    let adapter = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "adapter")
        .unwrap();
    assert_eq!(
        (&adapter["ok"], &adapter["note"]),
        (&json!(true), &json!(true))
    );
}

/// A machine with only Codex (or only Gemini) registered: no Claude Code
/// settings is a note, not "no hook reaches hookd"; doctor fails only when
/// no agent registers the forwarder.
#[test]
fn only_codex_or_only_gemini_registered_is_a_working_setup() {
    for agent in ["codex", "gemini"] {
        let root = tempfile::tempdir().unwrap();
        let d = daemon_without_adapter(root.path());
        let project = root.path().join("project");
        fs::create_dir_all(&project).unwrap();

        let fwd = daemon::forwarder_bin();
        let out = hookd(
            root.path(),
            &[
                "install",
                "--agent",
                agent,
                "--forwarder",
                fwd.to_str().unwrap(),
            ],
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let input = json!({"session_id": "s-1", "cwd": project, "hook_event_name": "SessionEnd", "reason": "exit"});
        assert!(d.forward(&input, &["--agent", agent]).status.success());
        d.wait_decisions(1);

        if agent == "codex" {
            // Codex skips hooks it has not trusted, silently: doctor says so
            // until its config.toml trusts each event hookd registered.
            let codex_home = root.path().join("home/.codex");
            let trusted = fs::read_to_string(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/agents/codex/trusted-config.toml"
            ))
            .unwrap()
            .replace("CODEX_HOME", codex_home.to_str().unwrap());
            let trust_line = |config: Option<&str>| {
                if let Some(config) = config {
                    fs::write(codex_home.join("config.toml"), config).unwrap();
                }
                let text = stdout(&doctor_of(root.path(), &d.socket, &project));
                line(&text, "codex:trust").to_string()
            };
            let none = trust_line(None);
            assert!(none.starts_with("✗ "), "{none}");
            assert!(
                none.contains("Codex trusts none of hookd's hooks"),
                "{none}"
            );
            assert!(none.contains("/hooks"), "{none}");
            // Trusted but for PreToolUse: its tool calls go unjudged.
            let key = format!(
                "[hooks.state.\"{}/hooks.json:pre_tool_use:0:0\"]",
                codex_home.display()
            );
            let without_pre = trusted.replace(&key, "[unrelated]");
            assert_ne!(without_pre, trusted);
            let partial = trust_line(Some(&without_pre));
            assert!(partial.starts_with("✗ "), "{partial}");
            assert!(
                partial.contains("does not trust hookd's hooks on PreToolUse: it skips them silently, so Codex's tool calls are not judged"),
                "{partial}"
            );
            let all = trust_line(Some(&trusted));
            assert!(all.starts_with("✓ "), "{all}");
            assert!(all.contains("on all 11 events"), "{all}");
        }
        let out = doctor_of(root.path(), &d.socket, &project);
        let text = stdout(&out);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{agent}: doctor failed:\n{text}"
        );
        let events = line(&text, "events");
        assert!(events.starts_with("· "), "{agent}: {text}");
        assert!(
            events.contains("no Claude Code settings file registers hook-forwarder"),
            "{text}"
        );
        assert!(
            line(&text, &format!("{agent}:user")).starts_with("✓ "),
            "{text}"
        );
        let fired = line(&text, "hooks fire");
        assert!(fired.starts_with("✓ "), "{text}");
        assert!(fired.contains(" CLI event: SessionEnd"), "{text}");
        assert!(!text.contains('✗'), "{agent}: {text}");
    }

    // No agent registers the forwarder: that fails, naming every way.
    let root = tempfile::tempdir().unwrap();
    let d = daemon_without_adapter(root.path());
    let out = doctor_of(root.path(), &d.socket, root.path());
    let text = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "no agent registered:\n{text}");
    let events = line(&text, "events");
    assert!(events.starts_with("✗ "), "{text}");
    assert!(events.contains("--agent codex|gemini"), "{text}");
}

/// `hookd doctor` for `project` against a socket nobody serves.
fn doctor(root: &Path, project: &Path) -> String {
    stdout(&hookd(
        root,
        &[
            "doctor",
            "--socket",
            root.join("run/hookd.sock").to_str().unwrap(),
            "--project",
            project.to_str().unwrap(),
        ],
    ))
}

#[test]
fn the_same_handler_in_user_and_project_settings_is_not_a_duplicate() {
    // Claude Code runs identical handlers once (tests/e2e_duplicates.rs).
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    install(root.path(), &project, "user", &[]);
    install(root.path(), &project, "project", &[]);
    let text = doctor(root.path(), &project);
    let events = line(&text, "events");
    assert!(events.starts_with("✓ "), "{text}");
    assert!(
        events.contains("32 registrations are identical to another, which Claude Code runs once"),
        "{text}"
    );
}

#[test]
fn handlers_that_differ_are_flagged_with_their_files_and_difference() {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    install(root.path(), &project, "user", &[]);
    // The project's PreToolUse handler has other args: both run.
    let local = project.join(".claude/settings.local.json");
    fs::create_dir_all(local.parent().unwrap()).unwrap();
    let handler = json!({"type": "command", "command": daemon::forwarder_bin(),
                         "args": ["--timeout", "20"], "timeout": 30});
    fs::write(
        &local,
        json!({"hooks": {"PreToolUse": [{"hooks": [handler]}]}}).to_string(),
    )
    .unwrap();
    let text = doctor(root.path(), &project);
    let events = line(&text, "events");
    let user = root.path().join("home/.claude/settings.json");
    assert!(events.starts_with("✗ "), "{text}");
    assert!(
        events.contains(&format!(
            "PreToolUse reaches hookd 2 times (user {}:",
            user.display()
        )) && events.contains(&format!(
            "and local {}:1 differ: args `--timeout 25 --installed-by=hookd` vs `--timeout 20`",
            local.display()
        )),
        "{text}"
    );
    assert!(
        !events.contains("Stop") && !events.contains("UserPromptSubmit"),
        "only PreToolUse doubles: {text}"
    );
    assert!(
        events.contains("fix: keep one registration per event"),
        "{text}"
    );
}

// ── hookd doctor --probe ─────────────────────────────────────────────────────

/// `hookd doctor --probe` for `project`, with `socket` as both doctor's
/// `--socket` and the hooks' HOOKD_SOCKET (as Claude Code would pass it on).
fn probe(root: &Path, project: &Path, socket: &Path) -> (Output, String) {
    probe_with(root, project, socket, "--probe", None)
}

/// `hookd doctor [--probe]` (`probe` is the flag or `""`), as [`probe`]
/// runs it, with `HOOKD_HTTP_TOKEN` set to `token` (else unset).
fn probe_with(
    root: &Path,
    project: &Path,
    socket: &Path,
    probe: &str,
    token: Option<&str>,
) -> (Output, String) {
    let mut command = Command::new(daemon::hookd_bin());
    match token {
        Some(token) => command.env("HOOKD_HTTP_TOKEN", token),
        None => command.env_remove("HOOKD_HTTP_TOKEN"),
    };
    let out = command
        .arg("doctor")
        .args([probe].into_iter().filter(|a| !a.is_empty()))
        .arg("--socket")
        .arg(socket)
        .arg("--project")
        .arg(project)
        .current_dir(root)
        .env("HOME", root.join("home"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("HOOKD_SOCKET", socket)
        .env_remove("XDG_RUNTIME_DIR")
        .env("XDG_CONFIG_HOME", root.join("config"))
        .env("XDG_STATE_HOME", root.join("state"))
        .output()
        .expect("running hookd doctor --probe");
    let text = stdout(&out);
    (out, text)
}

/// The `probe:…` lines of doctor's output.
fn probe_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l[4..].starts_with("probe:"))
        .collect()
}

#[test]
fn a_healthy_install_probes_every_event_through_the_daemon() {
    // Rules that would hold every probed tool call for the watcher below:
    // a probe is answered without rules or clients.
    let d = Daemon::start_with(daemon::DaemonOptions {
        rules: Some("[[rule]]\nid = \"ask-bash\"\naction = \"ask\"\ntool = \"Bash\"\n".into()),
        ..daemon::DaemonOptions::default()
    });
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    install(root.path(), &project, "project", &[]);
    // A real hook fired before, and a client watches for pending events.
    d.forward(&daemon::fixture("PreToolUse.json"), &["--timeout", "5"]);
    let mut watcher = daemon::RawClient::hello(&d.socket, "watcher");
    watcher.call(json!({"type": "subscribe", "filter": {"pending_only": true}}));

    let (out, text) = probe(root.path(), &project, &d.socket);
    eprintln!("{text}");
    assert!(out.status.success(), "{text}\n{}", d.stderr());
    let probes = probe_lines(&text);
    assert_eq!(probes.len(), 32, "{text}");
    for l in &probes {
        assert!(
            l.starts_with("✓ probe:project:") && l.contains(": answered by the daemon in "),
            "{l}"
        );
    }
    assert!(
        line(&text, "probe:project:PreToolUse").ends_with(" ms"),
        "{text}"
    );
    // The daemon logged each probe, decided by source `probe`.
    let log = d.wait_log_lines(2 + 2 * 32);
    let probe_events: Vec<&Value> = log
        .iter()
        .filter(|l| {
            l["type"] == "event"
                && l["session_id"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("hookd-probe-"))
        })
        .collect();
    assert_eq!(probe_events.len(), 32);
    let sources: Vec<&str> = log
        .iter()
        .filter(|l| l["type"] == "decision")
        .filter(|l| probe_events.iter().any(|e| e["id"] == l["event_id"]))
        .map(|l| l["source"].as_str().unwrap())
        .collect();
    assert_eq!(sources, vec!["probe"; 32]);
    // No client was shown a probe as pending.
    watcher.send(&json!({"type": "status", "req": "after"}));
    let frame = watcher.recv().unwrap();
    assert_eq!(frame["req"], "after", "a pushed frame: {frame}");
    // Doctor's "hooks fire" still names the real hook, not a probe.
    let (_, again) = probe(root.path(), &project, &d.socket);
    let fired = line(&again, "hooks fire");
    let session = daemon::fixture("PreToolUse.json")["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        fired.contains(&format!("session {}", &session[..8])),
        "{again}"
    );
}

#[test]
fn probes_fall_back_when_the_daemon_is_down() {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    install(
        root.path(),
        &project,
        "project",
        &["--events", "PreToolUse,Stop"],
    );
    let socket = root.path().join("run/hookd.sock");
    let (out, text) = probe(root.path(), &project, &socket);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let probes = probe_lines(&text);
    assert_eq!(probes.len(), 2, "{text}");
    for l in probes {
        assert!(
            l.starts_with("✗ ") && l.contains("fell back (no_socket)"),
            "{text}"
        );
        assert!(l.contains(&socket.display().to_string()), "{l}");
    }
}

#[test]
fn a_fail_closed_fallback_is_recognised_as_a_fallback() {
    // The forwarder then prints a real deny of its own: that is the
    // fallback blocking, not the daemon answering.
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    install(
        root.path(),
        &project,
        "project",
        &["--fail-closed", "--events", "PreToolUse"],
    );
    let socket = root.path().join("run/hookd.sock");
    let (out, text) = probe(root.path(), &project, &socket);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let l = line(&text, "probe:project:PreToolUse");
    assert!(
        l.starts_with("✗ ") && l.contains("fell back (no_socket)") && !l.contains("wrong output"),
        "{text}"
    );
}

#[test]
fn a_wrapper_that_prints_something_else_is_wrong_output() {
    use std::os::unix::fs::PermissionsExt;
    let d = Daemon::start();
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    // Named hook-forwarder, so it counts as hookd's registration; it asks
    // the daemon, then prints its own answer.
    let wrapper = root.path().join("wrap/hook-forwarder");
    fs::create_dir_all(wrapper.parent().unwrap()).unwrap();
    fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n'{}' \"$@\" > /dev/null\necho '{{}}'\n",
            daemon::forwarder_bin().display()
        ),
    )
    .unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    install(
        root.path(),
        &project,
        "project",
        &[
            "--events",
            "PreToolUse",
            "--forwarder",
            wrapper.to_str().unwrap(),
        ],
    );
    let (out, text) = probe(root.path(), &project, &d.socket);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let l = line(&text, "probe:project:PreToolUse");
    assert!(l.starts_with("✗ ") && l.contains("wrong output"), "{text}");
    assert!(l.contains(r#"got exit 0 with stdout "{}\n""#), "{l}");
    assert!(l.contains("permissionDecision"), "the expected output: {l}");
}

#[test]
fn a_forwarder_that_cannot_run_is_a_fallback() {
    // Exec form: Claude Code cannot spawn it. Shell form: the shell exits
    // 127. Either way the action proceeds unjudged.
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    let settings = project.join(".claude/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let gone = root.path().join("gone/hook-forwarder");
    let gone = gone.to_str().unwrap();
    fs::write(
        &settings,
        json!({"hooks": {
            "PreToolUse": [{"hooks": [{"type": "command", "command": gone, "args": ["--timeout", "25"], "timeout": 30}]}],
            "Stop": [{"hooks": [{"type": "command", "command": format!("{gone} --timeout 25"), "timeout": 30}]}]
        }})
        .to_string(),
    )
    .unwrap();
    let (out, text) = probe(root.path(), &project, &root.path().join("run/hookd.sock"));
    assert_eq!(out.status.code(), Some(1), "{text}");
    let exec = line(&text, "probe:project:PreToolUse");
    assert!(
        exec.starts_with("✗ ") && exec.contains(&format!("fell back (cannot run {gone}")),
        "{text}"
    );
    let shell = line(&text, "probe:project:Stop");
    assert!(
        shell.starts_with("✗ ") && shell.contains("fell back (exit 127"),
        "{text}"
    );
}

// ── http hooks (`hookd install --transport http`) ───────────────────────────

/// A daemon whose HTTP listener is on (a free loopback port); returns it,
/// the address it listens on and its token.
fn daemon_with_http() -> (Daemon, String, String) {
    let d = Daemon::start_with(daemon::DaemonOptions {
        config: Some("[http]\nlisten = \"127.0.0.1:0\"\n".into()),
        ..daemon::DaemonOptions::default()
    });
    let listen = d.status()["http"]["listen"]
        .as_str()
        .expect("status.http.listen")
        .to_string();
    let token = fs::read_to_string(d.dir.path().join("config/hookd/http-token"))
        .unwrap()
        .trim()
        .to_string();
    (d, listen, token)
}

#[test]
fn http_hooks_are_checked_and_probed_through_the_listener() {
    let (d, listen, token) = daemon_with_http();
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let url = format!("http://{listen}");
    install(
        root.path(),
        &project,
        "project",
        &["--transport", "http", "--http-url", &url],
    );
    // A hook fired before (doctor's "hooks fire").
    d.forward(&daemon::fixture("PreToolUse.json"), &["--timeout", "5"]);

    let (out, text) = probe_with(root.path(), &project, &d.socket, "--probe", Some(&token));
    eprintln!("{text}");
    assert!(out.status.success(), "{text}\n{}", d.stderr());
    let http = line(&text, "http");
    assert!(
        http.starts_with("✓ ") && http.contains(&format!("post to the daemon's listener {listen}")),
        "{text}"
    );
    // The forwarder stays for the events Claude Code sends no http hook for.
    let settings = line(&text, "settings:project");
    assert!(settings.contains("32 registrations (28 http)"), "{text}");
    assert!(line(&text, "events").starts_with("✓ "), "{text}");
    let probes = probe_lines(&text);
    assert_eq!(probes.len(), 32, "{text}");
    assert!(
        probes
            .iter()
            .all(|l| l.contains(": answered by the daemon in ")),
        "{text}"
    );
    // The http probes reached the daemon as probes, over HTTP.
    let log = d.wait_log_lines(2 + 2 * 32);
    let decided_as_probe = log
        .iter()
        .filter(|l| l["type"] == "decision" && l["source"] == "probe")
        .count();
    assert_eq!(decided_as_probe, 32, "{log:?}");

    // No token in the environment: Claude Code would get 401 and let the
    // action proceed. Doctor says so, and the probe shows it.
    let (out, text) = probe_with(root.path(), &project, &d.socket, "--probe", None);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let http = line(&text, "http");
    assert!(
        http.starts_with("✗ ") && http.contains("$HOOKD_HTTP_TOKEN is not set here"),
        "{text}"
    );
    assert!(http.contains("fix: `export HOOKD_HTTP_TOKEN="), "{text}");
    let pre = line(&text, "probe:project:PreToolUse");
    assert!(
        pre.starts_with("✗ ") && pre.contains("fell back (HTTP 401"),
        "{text}"
    );
    // The forwarder's events do not need the token.
    assert!(
        line(&text, "probe:project:SessionStart").starts_with("✓ "),
        "{text}"
    );

    // A stale token (rotated since): 401 too.
    let (out, text) = probe_with(root.path(), &project, &d.socket, "", Some("stale"));
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(
        line(&text, "http").contains("is not the daemon's token"),
        "{text}"
    );
}

#[test]
fn http_hooks_without_the_listener_or_at_another_address_are_flagged() {
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    let (d, listen, token) = daemon_with_http();
    // Another port than the listener's.
    let port: u16 = listen.rsplit_once(':').unwrap().1.parse().unwrap();
    let elsewhere = format!("http://127.0.0.1:{}", if port == 1 { 2 } else { port - 1 });
    install(
        root.path(),
        &project,
        "project",
        &["--transport", "http", "--http-url", &elsewhere],
    );
    let (out, text) = probe_with(root.path(), &project, &d.socket, "", Some(&token));
    assert_eq!(out.status.code(), Some(1), "{text}");
    let http = line(&text, "http");
    assert!(
        http.starts_with("✗ ")
            && http.contains(&format!(
                "posts to another address than the daemon's listener {listen}"
            ))
            && http.contains(&format!("--http-url http://{listen}")),
        "{text}"
    );
    drop(d);

    // A daemon without the listener.
    let d = Daemon::start();
    let (out, text) = probe_with(root.path(), &project, &d.socket, "", Some(&token));
    assert_eq!(out.status.code(), Some(1), "{text}");
    let http = line(&text, "http");
    assert!(
        http.starts_with("✗ ")
            && http.contains("28 http hooks")
            && http.contains("its HTTP listener is off")
            && http.contains("fix: set `[http] listen"),
        "{text}"
    );
    // Nothing else is wrong with an http install.
    assert!(line(&text, "settings:project").starts_with("✓ "), "{text}");
    assert!(line(&text, "events").starts_with("✓ "), "{text}");
}
