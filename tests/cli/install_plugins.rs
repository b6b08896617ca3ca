//! `hookd install|uninstall --agent opencode|pi`: hookd's plugin file in
//! each agent's plugin directory, written whole and removed exactly, a
//! foreign file of that name never touched; `hookd doctor` counts it as an
//! agent reaching hookd, and `--probe` sends a synthetic tool call through
//! the installed file to the daemon.

use crate::support::daemon;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use daemon::Daemon;
use serde_json::Value;

fn hookd(root: &Path, args: &[&str]) -> Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .current_dir(root)
        .env("HOME", root.join("home"))
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("PI_CODING_AGENT_DIR")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .env_remove("HOOKD_SOCKET")
        .env_remove("XDG_RUNTIME_DIR")
        .env("XDG_STATE_HOME", root.join("state"))
        .env("XDG_DATA_HOME", root.join("data"))
        .output()
        .expect("running hookd")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Every file under `dir`, with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push((path.clone(), fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn each_agents_plugin_installs_where_it_loads_and_uninstalls_exactly() {
    let cases = [
        ("opencode", "user", "home/.config/opencode/plugin/hookd.js"),
        ("opencode", "project", "project/.opencode/plugin/hookd.js"),
        ("pi", "user", "home/.pi/agent/extensions/hookd.js"),
        ("pi", "project", "project/.pi/extensions/hookd.js"),
    ];
    for (agent, scope, file) in cases {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("project");
        fs::create_dir_all(project.join("src")).unwrap();
        fs::write(project.join("src/main.rs"), "fn main() {}\n").unwrap();
        fs::create_dir_all(root.path().join("home")).unwrap();
        let before = tree(root.path());
        let args = [
            "--agent",
            agent,
            "--scope",
            scope,
            "--project",
            project.to_str().unwrap(),
        ];
        let dry = ok(&hookd(
            root.path(),
            &[&["install", "--dry-run"][..], &args].concat(),
        ));
        assert!(dry.contains("dry run"), "{dry}");
        assert_eq!(
            tree(root.path()),
            before,
            "{agent} {scope}: a dry run wrote"
        );

        let said = ok(&hookd(
            root.path(),
            &[&["install"][..], &args, &["--fail-closed"]].concat(),
        ));
        let path = root.path().join(file);
        assert!(said.contains(&path.display().to_string()), "{said}");
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("// installed-by=hookd"), "{agent}");
        assert!(text.contains("failClosed: true"), "{agent}");
        assert!(
            text.contains("class HookdClient"),
            "{agent}: the client is in the file"
        );
        let again = ok(&hookd(
            root.path(),
            &[&["install"][..], &args, &["--fail-closed"]].concat(),
        ));
        assert!(again.contains("nothing to do"), "{again}");

        let json = ok(&hookd(
            root.path(),
            &[&["uninstall", "--json"][..], &args].concat(),
        ));
        let outcome: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(outcome["written"], true, "{json}");
        assert!(!path.exists());
        assert_eq!(
            tree(root.path()),
            before,
            "{agent} {scope}: uninstall left a file"
        );

        // A file of that name hookd did not write is never touched.
        fs::write(&path, "// my own plugin\n").unwrap();
        let refused = hookd(root.path(), &[&["install"][..], &args].concat());
        assert!(!refused.status.success());
        assert!(String::from_utf8_lossy(&refused.stderr).contains("hookd did not write"));
        assert!(!hookd(root.path(), &[&["uninstall"][..], &args].concat())
            .status
            .success());
        assert_eq!(fs::read_to_string(&path).unwrap(), "// my own plugin\n");
    }
}

#[test]
fn plugin_options_that_do_not_apply_are_refused() {
    let root = tempfile::tempdir().unwrap();
    for args in [
        &["install", "--agent", "pi", "--events", "tool_call"][..],
        &["install", "--agent", "opencode", "--statusline"][..],
        &["install", "--agent", "pi", "--scope", "local"][..],
    ] {
        let out = hookd(root.path(), args);
        assert!(!out.status.success(), "{args:?}");
        assert!(
            !String::from_utf8_lossy(&out.stderr).trim().is_empty(),
            "{args:?}"
        );
    }
}

#[test]
fn doctor_counts_a_plugin_and_probes_it_through_the_daemon() {
    if crate::support::process::node_absent(
        "doctor_counts_a_plugin_and_probes_it_through_the_daemon",
    ) {
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let d = Daemon::start();
    let project = root.path().join("project");
    fs::create_dir_all(&project).unwrap();
    for agent in ["opencode", "pi"] {
        ok(&hookd(
            root.path(),
            &[
                "install",
                "--agent",
                agent,
                "--scope",
                "project",
                "--project",
                project.to_str().unwrap(),
            ],
        ));
    }
    let out = hookd(
        root.path(),
        &[
            "doctor",
            "--probe",
            "--socket",
            d.socket.to_str().unwrap(),
            "--project",
            project.to_str().unwrap(),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    for name in [
        "opencode:project",
        "pi:project",
        "probe:opencode:project",
        "probe:pi:project",
    ] {
        let line = text
            .lines()
            .find(|l| l.contains(&format!("{name}: ")))
            .unwrap_or_else(|| panic!("no {name} line:\n{text}"));
        assert!(line.starts_with("✓ "), "{line}\n{text}");
    }
    let events = text.lines().find(|l| l.contains("events: ")).unwrap();
    assert!(
        events.contains("hooks reach hookd from OpenCode"),
        "{events}"
    );
    // The log is written behind the answers the probes got.
    let probes: Vec<Value> = daemon::poll_last(
        std::time::Duration::from_secs(10),
        std::time::Duration::from_millis(20),
        || {
            d.log_lines()
                .into_iter()
                .filter(|l| l["type"] == "event" && l["session_id"] == "hookd-doctor-probe")
                .collect()
        },
        |probes: &Vec<Value>| probes.len() >= 2,
    );
    assert_eq!(probes.len(), 2, "{probes:#?}");

    // A plugin file from another hookd fails, naming the fix.
    let path = project.join(".pi/extensions/hookd.js");
    let stale = fs::read_to_string(&path)
        .unwrap()
        .replace("class HookdClient", "class OldClient");
    fs::write(&path, stale).unwrap();
    let out = hookd(
        root.path(),
        &[
            "doctor",
            "--socket",
            d.socket.to_str().unwrap(),
            "--project",
            project.to_str().unwrap(),
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = text.lines().find(|l| l.contains("pi:project: ")).unwrap();
    assert!(
        line.starts_with("✗ ") && line.contains("another hookd version"),
        "{text}"
    );
}
