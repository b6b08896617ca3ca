//! `hookd doctor` on a healthy setup (daemon running, `hookd install` done,
//! a hook fired) and on a broken one (no daemon, a timeout in milliseconds,
//! a forwarder path that does not exist, a duplicate registration, a bad
//! rules file).

#[path = "support/daemon.rs"]
mod daemon;

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

const CHECKS: [&str; 10] = [
    "forwarder",
    "socket",
    "daemon",
    "settings:user",
    "settings:project",
    "settings:local",
    "events",
    "rules",
    "log",
    "hooks fire",
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
    assert!(line(&text, "hooks fire").starts_with("✗ "), "{text}");
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

/// `hookd install --scope SCOPE` in `root`'s home and `project`, plus `extra`.
fn install(root: &Path, project: &Path, scope: &str, extra: &[&str]) {
    let fwd = daemon::forwarder_bin();
    let mut args = vec![
        "install",
        "--scope",
        scope,
        "--project",
        project.to_str().unwrap(),
        "--forwarder",
        fwd.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = hookd(root, &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
