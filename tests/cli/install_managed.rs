//! `hookd install --scope managed`: hookd's own file in Claude Code's
//! managed settings directory (`HOOKD_MANAGED_SETTINGS_DIR` points it at a
//! temp directory), written atomically and readable by every user,
//! `--dry-run`, `uninstall`, the refusal without permission, and doctor.

use crate::support::daemon;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

fn hookd(root: &Path, managed: &Path, args: &[&str]) -> Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .current_dir(root)
        .env("HOME", root.join("home"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("XDG_CONFIG_HOME", root.join("xdg-config"))
        .env("HOOKD_MANAGED_SETTINGS_DIR", managed)
        .output()
        .expect("running hookd")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "hookd failed ({}):\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn managed_scope_writes_its_own_file_and_uninstall_removes_it() {
    let root = tempfile::tempdir().unwrap();
    let managed = root.path().join("etc/claude-code/managed-settings.d");
    let file = managed.join("50-hookd.json");

    // A dry run shows the file and writes nothing.
    let diff = ok(&hookd(
        root.path(),
        &managed,
        &["install", "--scope", "managed", "--dry-run"],
    ));
    assert!(diff.contains("hook-forwarder"), "{diff}");
    assert!(!managed.exists(), "a dry run creates nothing");

    let out: Value = serde_json::from_str(&ok(&hookd(
        root.path(),
        &managed,
        &["install", "--scope", "managed", "--json"],
    )))
    .unwrap();
    assert_eq!(out["settings"], file.to_str().unwrap());
    assert_eq!(out["written"], true);
    assert_eq!(out["backup"], Value::Null);
    let settings: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(command.contains("hook-forwarder"), "{command}");
    assert_eq!(
        fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o644,
        "every user's Claude Code reads it"
    );
    let entries: Vec<_> = fs::read_dir(&managed)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        entries,
        ["50-hookd.json"],
        "no backup or temp file beside it"
    );

    // Again: nothing changes.
    let again: Value = serde_json::from_str(&ok(&hookd(
        root.path(),
        &managed,
        &["install", "--scope", "managed", "--json"],
    )))
    .unwrap();
    assert_eq!(again["changed"], false);

    // Doctor lists it.
    let doctor = hookd(
        root.path(),
        &managed,
        &[
            "doctor",
            "--json",
            "--socket",
            root.path().join("none.sock").to_str().unwrap(),
        ],
    );
    let report: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "settings:managed")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert!(
        check["message"].as_str().unwrap().contains("50-hookd.json"),
        "{check:#}"
    );

    // Codex and Gemini read no managed directory.
    let codex = hookd(
        root.path(),
        &managed,
        &["install", "--scope", "managed", "--agent", "codex"],
    );
    assert_eq!(codex.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&codex.stderr).contains("only Claude Code reads"));

    let dry = ok(&hookd(
        root.path(),
        &managed,
        &["uninstall", "--scope", "managed", "--dry-run"],
    ));
    assert!(dry.contains("dry run"), "{dry}");
    assert!(file.exists());
    ok(&hookd(
        root.path(),
        &managed,
        &["uninstall", "--scope", "managed"],
    ));
    assert!(!file.exists(), "nothing of hookd's left: the file goes");
}

#[test]
fn managed_scope_without_permission_is_refused_with_what_to_do() {
    let root = tempfile::Builder::new()
        .prefix("hookd-managed")
        .tempdir()
        .unwrap();
    fs::set_permissions(root.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let managed = root.path().join("managed-settings.d");
    fs::create_dir(&managed).unwrap();
    let mut command = if nix::unistd::geteuid().is_root() {
        // Root may write anywhere: run as nobody, as an ordinary user would.
        let mut c = Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(daemon::hookd_bin());
        c
    } else {
        fs::set_permissions(&managed, fs::Permissions::from_mode(0o555)).unwrap();
        Command::new(daemon::hookd_bin())
    };
    let out = command
        .args(["install", "--scope", "managed"])
        .env("HOME", root.path())
        .env("HOOKD_MANAGED_SETTINGS_DIR", &managed)
        .output()
        .expect("running hookd");
    fs::set_permissions(&managed, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("sudo hookd install --scope managed"), "{err}");
    assert!(
        err.contains(&managed.join("50-hookd.json").display().to_string()),
        "{err}"
    );
    assert!(!managed.join("50-hookd.json").exists());
}
