//! `hookd install` / `hookd uninstall` / `hookd service install`.
//!
//! - The pure edit on every fixture in `tests/fixtures/settings/`: the result
//!   matches the golden file in `installed/`, a second install changes
//!   nothing, and uninstall gives the input back byte for byte (or, for a
//!   file with an earlier hookd install, the golden in `uninstalled/`).
//!   `UPDATE_GOLDEN=1` rewrites the goldens.
//! - The real binary on temp files: absent file, mode and backup, dry run,
//!   --print, invalid JSON, read-only file and directory, scopes, --json.

use crate::support::daemon;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hookd::agent::claude::{FailClosed, HookEventKind};
use hookd::install::{install_text, uninstall_text, InstallOptions};
use serde_json::Value;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/settings")
}

/// The inputs that must round-trip byte for byte.
const ROUND_TRIP: [&str; 4] = [
    "empty-object.json",
    "foreign-hooks.json",
    "four-spaces-crlf.json",
    "compact.json",
];

fn golden_options() -> InstallOptions {
    InstallOptions {
        agent: hookd::agent::Agent::ClaudeCode,
        forwarder: "/opt/hookd/bin/hook-forwarder".into(),
        events: vec![
            HookEventKind::PreToolUse,
            HookEventKind::Stop,
            HookEventKind::SessionEnd,
        ],
        fail_closed: FailClosed::Tools,
        statusline: None,
        transport: Default::default(),
    }
}

fn check_golden(path: &Path, actual: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, actual).unwrap();
    }
    let expected = fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    assert_eq!(actual, expected, "{} differs", path.display());
}

#[test]
fn fixtures_install_as_the_goldens_say_and_uninstall_byte_for_byte() {
    let options = golden_options();
    for name in ROUND_TRIP {
        let before = fs::read_to_string(fixtures().join(name)).unwrap();
        let installed = install_text(Some(&before), &options).unwrap();
        check_golden(&fixtures().join("installed").join(name), &installed);
        serde_json::from_str::<Value>(&installed)
            .unwrap_or_else(|e| panic!("{name}: install made invalid JSON: {e}"));
        assert_eq!(
            install_text(Some(&installed), &options).unwrap(),
            installed,
            "{name}: a second install changed the text"
        );
        let (back, removed) = uninstall_text(&installed).unwrap();
        assert_eq!(removed, 3, "{name}");
        assert_eq!(back, before, "{name}: uninstall is not the exact inverse");
    }
}

#[test]
fn an_earlier_install_is_replaced_per_event_and_hand_written_entries_are_kept() {
    let options = golden_options();
    let before = fs::read_to_string(fixtures().join("previous-install.json")).unwrap();
    let installed = install_text(Some(&before), &options).unwrap();
    check_golden(
        &fixtures().join("installed/previous-install.json"),
        &installed,
    );
    let found = hookd::install::inspect(&installed).unwrap().registrations;
    // The two old PreToolUse entries are replaced by one, Stop and
    // SessionEnd are added, the old Notification entry (an event not
    // installed this time) stays, and so does the hand-written SessionStart
    // forwarder (no marker).
    let ours: Vec<(&str, &str)> = found
        .iter()
        .filter(|r| r.installed)
        .map(|r| (r.event.as_str(), r.command.as_str()))
        .collect();
    assert_eq!(
        ours,
        [
            ("PreToolUse", "/opt/hookd/bin/hook-forwarder"),
            ("Notification", "/old/prefix/bin/hook-forwarder"),
            ("Stop", "/opt/hookd/bin/hook-forwarder"),
            ("SessionEnd", "/opt/hookd/bin/hook-forwarder"),
        ]
    );
    assert!(found
        .iter()
        .any(|r| !r.installed && r.event == "SessionStart"));
    let (without, _) = uninstall_text(&before).unwrap();
    check_golden(
        &fixtures().join("uninstalled/previous-install.json"),
        &without,
    );
    assert_eq!(uninstall_text(&installed).unwrap().0, without);
    assert!(without.contains("/usr/local/bin/audit-bash"));
    assert!(!without.contains("--installed-by=hookd"));
}

#[test]
fn invalid_fixtures_are_refused_with_line_and_column() {
    for (name, want) in [
        ("invalid-comment.json", "3:3: not valid JSON"),
        ("invalid-trailing-comma.json", "4:3: not valid JSON"),
    ] {
        let text = fs::read_to_string(fixtures().join(name)).unwrap();
        let err = install_text(Some(&text), &golden_options())
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(want), "{name}: {err}");
        assert!(err.contains("no comments"), "{name}: {err}");
    }
}

// ---------------------------------------------------------------------------
// The binary.
// ---------------------------------------------------------------------------

/// Runs `hookd ARGS` in `cwd` with a private HOME (no user settings leak in).
fn hookd(cwd: &Path, args: &[&str]) -> Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .current_dir(cwd)
        .env("HOME", cwd.join("home"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("XDG_CONFIG_HOME", cwd.join("xdg-config"))
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

fn failed(out: &Output) -> String {
    assert!(
        !out.status.success(),
        "hookd succeeded unexpectedly:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn forwarder() -> String {
    daemon::forwarder_bin().to_str().unwrap().to_string()
}

/// `install --settings FILE --forwarder <built forwarder>` plus `extra`.
fn install(cwd: &Path, file: &Path, extra: &[&str]) -> Output {
    let fwd = forwarder();
    let mut args = vec![
        "install",
        "--settings",
        file.to_str().unwrap(),
        "--forwarder",
        &fwd,
    ];
    args.extend_from_slice(extra);
    hookd(cwd, &args)
}

fn uninstall(cwd: &Path, file: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["uninstall", "--settings", file.to_str().unwrap()];
    args.extend_from_slice(extra);
    hookd(cwd, &args)
}

/// Files in `dir` other than `keep` (temp files must never be left behind).
fn stray_files(dir: &Path, keep: &[&str]) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

#[test]
fn an_absent_file_is_created_and_uninstall_leaves_an_empty_object() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("proj/.claude/settings.json");
    let out = ok(&install(tmp.path(), &file, &[]));
    assert!(
        out.contains("registered hook-forwarder for 32 events"),
        "{out}"
    );
    let settings: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    let hooks = settings["hooks"].as_object().unwrap();
    assert_eq!(hooks.len(), 32);
    assert!(!hooks.contains_key("WorktreeCreate"));
    let pre = &hooks["PreToolUse"][0]["hooks"][0];
    assert_eq!(pre["command"], forwarder().as_str());
    assert_eq!(
        pre["args"],
        serde_json::json!(["--timeout", "25", "--installed-by=hookd"])
    );
    assert_eq!(pre["timeout"], 30);
    assert_eq!(hooks["SessionEnd"][0]["hooks"][0]["timeout"], 2);
    assert!(
        !file.with_file_name("settings.json.hookd-backup").exists(),
        "no previous file, no backup"
    );

    let again = ok(&install(tmp.path(), &file, &[]));
    assert!(again.contains("nothing to do"), "{again}");
    ok(&uninstall(tmp.path(), &file, &[]));
    assert_eq!(fs::read_to_string(&file).unwrap(), "{}\n");
    let nothing = ok(&uninstall(tmp.path(), &file, &[]));
    assert!(nothing.contains("nothing to do"), "{nothing}");
}

#[test]
fn the_write_is_atomic_keeps_the_mode_and_leaves_a_backup() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    let original = fs::read(fixtures().join("foreign-hooks.json")).unwrap();
    fs::write(&file, &original).unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
    let inode = fs::metadata(&file).unwrap().ino();

    ok(&install(tmp.path(), &file, &[]));
    let meta = fs::metadata(&file).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o640, "mode kept");
    assert_ne!(
        meta.ino(),
        inode,
        "replaced by rename, not rewritten in place"
    );
    let backup = tmp.path().join("settings.json.hookd-backup");
    assert_eq!(fs::read(&backup).unwrap(), original);
    assert_eq!(fs::metadata(&backup).unwrap().mode() & 0o777, 0o640);
    assert_eq!(
        stray_files(tmp.path(), &["settings.json", "settings.json.hookd-backup"]),
        Vec::<String>::new()
    );

    ok(&uninstall(tmp.path(), &file, &[]));
    assert_eq!(
        fs::read(&file).unwrap(),
        original,
        "byte-identical after uninstall"
    );
    assert_eq!(fs::metadata(&file).unwrap().mode() & 0o777, 0o640);
}

#[test]
fn dry_run_prints_a_diff_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    let original = fs::read(fixtures().join("compact.json")).unwrap();
    fs::write(&file, &original).unwrap();
    let out = ok(&install(
        tmp.path(),
        &file,
        &["--dry-run", "--events", "PreToolUse"],
    ));
    let path = file.display().to_string();
    assert!(
        out.starts_with(&format!(
            "--- {path}\n+++ {path}\n@@ -1 +1 @@\n-{{\"model\""
        )),
        "{out}"
    );
    assert!(
        out.contains("would register hook-forwarder for 1 event"),
        "{out}"
    );
    assert_eq!(fs::read(&file).unwrap(), original);
    assert_eq!(
        stray_files(tmp.path(), &["settings.json"]),
        Vec::<String>::new()
    );

    let absent = tmp.path().join("absent/settings.json");
    let out = ok(&install(tmp.path(), &absent, &["--dry-run"]));
    assert!(out.starts_with("--- /dev/null\n"), "{out}");
    assert!(!absent.exists() && !absent.parent().unwrap().exists());

    ok(&install(tmp.path(), &file, &[]));
    let installed = fs::read(&file).unwrap();
    let out = ok(&uninstall(tmp.path(), &file, &["--dry-run"]));
    assert!(out.contains("would lose 32 hookd entries"), "{out}");
    assert_eq!(fs::read(&file).unwrap(), installed);
}

#[test]
fn print_shows_valid_json_and_touches_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let fwd = forwarder();
    let out = ok(&hookd(
        tmp.path(),
        &["install", "--print", "--fail-closed", "--forwarder", &fwd],
    ));
    let block: Value = serde_json::from_str(&out).expect("--print is JSON");
    let hooks = block["hooks"].as_object().unwrap();
    assert_eq!(hooks.len(), 32);
    let pre = &hooks["PreToolUse"][0]["hooks"][0];
    assert_eq!(pre["onFailure"], "block");
    assert_eq!(
        pre["args"],
        serde_json::json!(["--timeout", "25", "--fail-closed", "--installed-by=hookd"])
    );
    // Prompts, Stop-like and observe-only events never block on failure
    // under the default scope.
    for event in ["UserPromptSubmit", "Stop", "SessionStart", "Notification"] {
        assert!(
            hooks[event][0]["hooks"][0].get("onFailure").is_none(),
            "{event}"
        );
    }
    assert!(!tmp.path().join("home").exists());
}

#[test]
fn invalid_json_is_refused_with_line_and_column_and_never_touched() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    let original = fs::read(fixtures().join("invalid-comment.json")).unwrap();
    fs::write(&file, &original).unwrap();
    for out in [
        install(tmp.path(), &file, &[]),
        uninstall(tmp.path(), &file, &[]),
    ] {
        let err = failed(&out);
        assert!(
            err.contains(&format!("{}:3:3: not valid JSON", file.display())),
            "{err}"
        );
        assert!(err.contains("was not changed"), "{err}");
    }
    assert_eq!(fs::read(&file).unwrap(), original);
    assert_eq!(
        stray_files(tmp.path(), &["settings.json"]),
        Vec::<String>::new()
    );
}

#[test]
fn read_only_files_and_directories_are_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    fs::write(&file, "{}\n").unwrap();
    fs::set_permissions(&file, fs::Permissions::from_mode(0o444)).unwrap();
    let err = failed(&install(tmp.path(), &file, &[]));
    assert!(err.contains("is read-only (mode 444)"), "{err}");
    assert!(err.contains("chmod u+w"), "{err}");
    assert_eq!(fs::read_to_string(&file).unwrap(), "{}\n");

    let dir = tmp.path().join("locked");
    fs::create_dir(&dir).unwrap();
    let inner = dir.join("settings.json");
    fs::write(&inner, "{}\n").unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o555)).unwrap();
    let err = failed(&install(tmp.path(), &inner, &[]));
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    assert!(
        err.contains(&format!("cannot write in {}", dir.display())),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&inner).unwrap(), "{}\n");
    assert_eq!(stray_files(&dir, &["settings.json"]), Vec::<String>::new());
}

#[test]
fn scopes_name_claude_codes_files() {
    let tmp = tempfile::tempdir().unwrap();
    let fwd = forwarder();
    let project = tmp.path().join("proj");
    fs::create_dir_all(&project).unwrap();
    let p = project.to_str().unwrap();
    for (scope, file) in [
        ("user", tmp.path().join("home/.claude/settings.json")),
        ("project", project.join(".claude/settings.json")),
        ("local", project.join(".claude/settings.local.json")),
    ] {
        ok(&hookd(
            tmp.path(),
            &[
                "install",
                "--scope",
                scope,
                "--project",
                p,
                "--forwarder",
                &fwd,
                "--events",
                "Stop",
            ],
        ));
        assert!(file.exists(), "{scope}: {} missing", file.display());
    }
    // --project defaults to the current directory.
    ok(&hookd(&project, &["uninstall", "--scope", "local"]));
    assert_eq!(
        fs::read_to_string(project.join(".claude/settings.local.json")).unwrap(),
        "{}\n"
    );
    // CLAUDE_CONFIG_DIR moves the user file, as it does for Claude Code.
    let out = Command::new(daemon::hookd_bin())
        .args(["install", "--forwarder", &fwd, "--events", "Stop", "--json"])
        .env("CLAUDE_CONFIG_DIR", tmp.path().join("cfg"))
        .output()
        .unwrap();
    let outcome: Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(
        outcome["settings"],
        tmp.path().join("cfg/settings.json").to_str().unwrap()
    );
    assert_eq!(outcome["action"], "install");
    assert_eq!(outcome["written"], true);
    assert_eq!(outcome["events"], serde_json::json!(["Stop"]));

    let err = failed(&hookd(
        tmp.path(),
        &["install", "--scope", "global", "--forwarder", &fwd],
    ));
    // A typed argument: clap refuses it and lists the scopes.
    assert!(
        err.contains("invalid value 'global' for '--scope <SCOPE>'")
            && err.contains("[possible values: user, project, local, managed]"),
        "{err}"
    );
}

#[test]
fn bad_flags_are_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    let err = failed(&hookd(
        tmp.path(),
        &[
            "install",
            "--settings",
            file.to_str().unwrap(),
            "--forwarder",
            "/nowhere/hook-forwarder",
        ],
    ));
    assert!(
        err.contains("--forwarder: /nowhere/hook-forwarder not found"),
        "{err}"
    );
    let err = failed(&install(
        tmp.path(),
        &file,
        &["--events", "PreToolUse,WorktreeCreate"],
    ));
    assert!(err.contains("WorktreeCreate cannot be registered"), "{err}");
    let err = failed(&install(tmp.path(), &file, &["--events", "PreTool"]));
    assert!(
        err.contains("invalid value 'PreTool' for '--events <LIST>'")
            && err.contains("a similar value exists: 'PreToolUse'"),
        "{err}"
    );
    assert!(!file.exists());
}

#[test]
fn service_install_writes_the_units_with_the_real_hookd() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = daemon::hookd_bin();
    let bin_dir = bin.parent().unwrap().to_str().unwrap().to_string();
    let units = tmp.path().join("xdg-config/systemd/user");

    let out = ok(&hookd(tmp.path(), &["service", "install", "--dry-run"]));
    assert!(out.contains("dry run: nothing written"), "{out}");
    assert!(
        out.contains(&format!("ExecStart={} serve", bin.display())),
        "{out}"
    );
    assert!(!units.exists());

    let out = ok(&hookd(
        tmp.path(),
        &["service", "install", "--bin-dir", &bin_dir],
    ));
    assert!(out.contains("systemctl --user daemon-reload"), "{out}");
    assert!(
        out.contains("systemctl --user enable --now hookd.socket"),
        "{out}"
    );
    let service = fs::read_to_string(units.join("hookd.service")).unwrap();
    assert!(
        service.contains(&format!("\nExecStart={} serve\n", bin.display())),
        "{service}"
    );
    let shipped =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("systemd/hookd.socket"))
            .unwrap();
    assert_eq!(
        fs::read_to_string(units.join("hookd.socket")).unwrap(),
        shipped
    );
    let again = ok(&hookd(
        tmp.path(),
        &["service", "install", "--bin-dir", &bin_dir],
    ));
    assert!(again.contains("hookd.service: unchanged"), "{again}");

    let err = failed(&hookd(
        tmp.path(),
        &["service", "install", "--bin-dir", "/nowhere"],
    ));
    assert!(
        err.contains("/nowhere/hookd is not an executable hookd"),
        "{err}"
    );
}

#[test]
fn a_symlinked_settings_file_stays_a_symlink() {
    let tmp = tempfile::tempdir().unwrap();
    let dotfiles = tmp.path().join("dotfiles");
    fs::create_dir(&dotfiles).unwrap();
    let real = dotfiles.join("claude-settings.json");
    fs::write(&real, "{\n  \"model\": \"opus\"\n}\n").unwrap();
    let link = tmp.path().join("settings.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();

    ok(&install(tmp.path(), &link, &["--events", "Stop"]));
    assert!(fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(fs::read_to_string(&real)
        .unwrap()
        .contains("--installed-by=hookd"));
    assert!(dotfiles.join("claude-settings.json.hookd-backup").exists());
    ok(&uninstall(tmp.path(), &link, &[]));
    assert_eq!(
        fs::read_to_string(&real).unwrap(),
        "{\n  \"model\": \"opus\"\n}\n"
    );
}

/// Each event's handler: whether the forwarder gets `--fail-closed…` and
/// Claude Code `"onFailure":"block"`.
fn fail_closed_handlers(file: &Path) -> Vec<(String, Option<String>, bool)> {
    let settings: Value = serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap();
    let hooks = settings["hooks"].as_object().unwrap();
    assert_eq!(hooks.len(), 32, "every event stays registered");
    hooks
        .iter()
        .map(|(event, groups)| {
            assert_eq!(groups.as_array().unwrap().len(), 1, "{event}");
            let handler = &groups[0]["hooks"][0];
            let flag = handler["args"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(Value::as_str)
                .find(|a| a.starts_with("--fail-closed"))
                .map(str::to_owned);
            (event.clone(), flag, handler["onFailure"] == "block")
        })
        .collect()
}

#[test]
fn fail_closed_means_tools_unless_all_is_asked_for() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    ok(&install(tmp.path(), &file, &["--fail-closed"]));
    for (event, flag, on_failure) in fail_closed_handlers(&file) {
        let tool = matches!(event.as_str(), "PreToolUse" | "PermissionRequest");
        assert_eq!(flag.as_deref(), tool.then_some("--fail-closed"), "{event}");
        assert_eq!(on_failure, tool, "{event}");
    }
    let again = ok(&install(tmp.path(), &file, &["--fail-closed=tools"]));
    assert!(again.contains("nothing to do"), "{again}");

    ok(&install(tmp.path(), &file, &["--fail-closed=all"]));
    for (event, flag, on_failure) in fail_closed_handlers(&file) {
        let guarded = HookEventKind::from_name(&event).is_guarded();
        assert_eq!(
            flag.as_deref(),
            guarded.then_some("--fail-closed=all"),
            "{event}"
        );
        assert_eq!(on_failure, guarded, "{event}");
    }
    assert!(FailClosed::All.blocks(HookEventKind::UserPromptSubmit));

    let out = hookd(
        tmp.path(),
        &[
            "install",
            "--settings",
            file.to_str().unwrap(),
            "--fail-closed=prompts",
        ],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("prompts") && stderr.contains("tools") && stderr.contains("all"),
        "{stderr}"
    );
}

#[test]
fn statusline_is_spliced_in_beside_the_hooks_and_a_users_own_is_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    let before = "{\n    \"model\": \"opus\"\n}\n";
    fs::write(&file, before).unwrap();
    let out = ok(&install(
        tmp.path(),
        &file,
        &["--statusline", "--events", "Stop"],
    ));
    assert!(out.contains("registered hookd's statusLine"), "{out}");
    let text = fs::read_to_string(&file).unwrap();
    let settings: Value = serde_json::from_str(&text).unwrap();
    let hookd = daemon::hookd_bin().display().to_string();
    assert_eq!(
        settings["statusLine"],
        serde_json::json!({"type": "command", "command": format!("{hookd} statusline"), "padding": 0})
    );
    assert!(text.starts_with("{\n    \"model\": \"opus\",\n"), "{text}");
    let again = ok(&install(
        tmp.path(),
        &file,
        &["--statusline", "--events", "Stop"],
    ));
    assert!(
        again.contains("statusLine is already registered"),
        "{again}"
    );
    ok(&uninstall(tmp.path(), &file, &[]));
    assert_eq!(fs::read_to_string(&file).unwrap(), before, "byte for byte");

    // A statusLine the user has is never replaced, and uninstall keeps it.
    let theirs = "{\"statusLine\": {\"type\": \"command\", \"command\": \"~/bin/my-line\"}}\n";
    fs::write(&file, theirs).unwrap();
    let out = ok(&install(
        tmp.path(),
        &file,
        &["--statusline", "--events", "Stop"],
    ));
    assert!(
        out.contains("has a statusLine of its own; left it alone"),
        "{out}"
    );
    let settings: Value = serde_json::from_str(&fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(settings["statusLine"]["command"], "~/bin/my-line");
    ok(&uninstall(tmp.path(), &file, &[]));
    assert_eq!(fs::read_to_string(&file).unwrap(), theirs);
}

/// The directory the built `hookd` and `hook-forwarder` are in.
fn bin_dir() -> PathBuf {
    daemon::forwarder_bin().parent().unwrap().to_path_buf()
}

/// `hookd ARGS` as [`hookd`] runs it, with `path` as its whole `PATH`.
fn hookd_with_path(cwd: &Path, args: &[&str], path: &Path) -> Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .current_dir(cwd)
        .env("HOME", cwd.join("home"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("XDG_CONFIG_HOME", cwd.join("xdg-config"))
        .env("XDG_STATE_HOME", cwd.join("xdg-state"))
        .env_remove("XDG_RUNTIME_DIR")
        .env("PATH", path)
        .output()
        .expect("running hookd")
}

/// A project's settings file is committed, so `--scope project` names
/// `hook-forwarder` and `hookd` by their bare names (found on each user's
/// PATH), never this machine's paths; it refuses when they are not on this
/// user's PATH; doctor and uninstall recognise the entries; `--scope local`
/// (this checkout only) keeps the absolute path.
#[test]
fn a_project_scope_install_runs_the_forwarder_from_path_and_local_keeps_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("proj");
    fs::create_dir_all(&project).unwrap();
    let p = project.to_str().unwrap();
    let file = project.join(".claude/settings.json");
    let args = [
        "install",
        "--scope",
        "project",
        "--project",
        p,
        "--events",
        "PreToolUse,Stop",
        "--fail-closed",
        "--statusline",
    ];

    ok(&hookd_with_path(tmp.path(), &args, &bin_dir()));
    let text = fs::read_to_string(&file).unwrap();
    check_golden(&fixtures().join("installed/project-scope.json"), &text);

    // Doctor recognises the entries and finds the forwarder on PATH.
    let socket = tmp.path().join("nobody.sock");
    let doctor = [
        "doctor",
        "--project",
        p,
        "--socket",
        socket.to_str().unwrap(),
    ];
    let out = hookd_with_path(tmp.path(), &doctor, &bin_dir());
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    let line = |report: &str| {
        report
            .lines()
            .find(|l| l.contains("settings:project:"))
            .unwrap_or_else(|| panic!("no settings:project line:\n{report}"))
            .to_string()
    };
    let project_line = line(&report);
    assert!(
        project_line.starts_with("✓") && project_line.contains("2 registrations"),
        "{report}"
    );
    // …and says what to fix for a user who does not have it on PATH.
    let empty = tmp.path().join("empty-bin");
    fs::create_dir_all(&empty).unwrap();
    let out = hookd_with_path(tmp.path(), &doctor, &empty);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        line(&report).contains("forwarder `hook-forwarder` is not on PATH"),
        "{report}"
    );

    ok(&hookd_with_path(
        tmp.path(),
        &["uninstall", "--scope", "project", "--project", p],
        &bin_dir(),
    ));
    assert_eq!(fs::read_to_string(&file).unwrap(), "{}\n");

    // Not on this user's PATH: refused with what to do, nothing written.
    let err = failed(&hookd_with_path(tmp.path(), &args, &empty));
    assert!(
        err.contains("`hook-forwarder` is not on yours") && err.contains("--scope local"),
        "{err}"
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), "{}\n");

    // The local file is this checkout's: the absolute path, as before.
    ok(&hookd_with_path(
        tmp.path(),
        &[
            "install",
            "--scope",
            "local",
            "--project",
            p,
            "--events",
            "Stop",
        ],
        &empty,
    ));
    let local: Value = serde_json::from_str(
        &fs::read_to_string(project.join(".claude/settings.local.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        local["hooks"]["Stop"][0]["hooks"][0]["command"],
        forwarder().as_str()
    );
}

/// `--statusline --dry-run` over hooks already registered says that only
/// the status line would be added, not that the events would be.
#[test]
fn a_statusline_dry_run_over_registered_hooks_names_only_the_status_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    ok(&install(tmp.path(), &file, &[]));
    let before = fs::read_to_string(&file).unwrap();
    let out = ok(&install(tmp.path(), &file, &["--statusline", "--dry-run"]));
    let summary: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with(['+', '-', '@', ' ']))
        .collect();
    let path = file.display();
    assert_eq!(
        summary,
        [
            format!("{path} already registers hook-forwarder for these 32 events"),
            format!("dry run: {path} would register hookd's statusLine; nothing written"),
        ],
        "{out}"
    );
    assert_eq!(fs::read_to_string(&file).unwrap(), before);
}
