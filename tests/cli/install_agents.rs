//! `hookd install --agent codex|gemini|all`: each agent's own registration
//! file, merged like Claude Code's (text splicing, idempotent, exact
//! uninstall, invalid files refused), with the agent's timeout ladder.

use crate::support::daemon;

use std::path::Path;
use std::process::{Command, Output};

use hookd::agent::claude::{FailClosed, HookEventKind};
use hookd::agent::Agent;
use hookd::install::{install_text, is_installed_handler, uninstall_text, InstallOptions};
use serde_json::{json, Value};

const FORWARDER: &str = "/opt/hookd/bin/hook-forwarder";

fn options(agent: Agent) -> InstallOptions {
    InstallOptions {
        agent,
        forwarder: FORWARDER.into(),
        events: hookd::install::default_events_for(agent),
        fail_closed: FailClosed::Off,
        statusline: None,
        transport: Default::default(),
    }
}

fn handler_of<'v>(file: &'v Value, event: &str) -> &'v Value {
    let groups = file["hooks"][event]
        .as_array()
        .unwrap_or_else(|| panic!("no {event} in {file:#}"));
    assert_eq!(groups.len(), 1, "{event}: {file:#}");
    assert_eq!(groups[0]["matcher"], "*", "{event}");
    &groups[0]["hooks"][0]
}

#[test]
fn codex_gets_its_events_with_seconds_and_a_command_line() {
    let text = install_text(None, &options(Agent::Codex)).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    let events: Vec<&str> = file["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for event in ["PreToolUse", "PermissionRequest", "Stop", "SessionEnd"] {
        assert!(events.contains(&event), "{events:?}");
    }
    assert!(!events.contains(&"Interrupt"), "{events:?}");
    let pre = handler_of(&file, "PreToolUse");
    assert_eq!(
        pre,
        &json!({"type": "command",
            "command": "/opt/hookd/bin/hook-forwarder --agent codex --timeout 25 --installed-by=hookd",
            "timeout": 30})
    );
    assert!(is_installed_handler(pre));
    // Codex clamps SessionEnd to 3 s: the ladder stays under it.
    let end = handler_of(&file, "SessionEnd");
    assert_eq!(end["timeout"], 3);
    assert!(end["command"].as_str().unwrap().contains("--timeout 1 "));
    assert_eq!(handler_of(&file, "PostCompact")["timeout"], 5);
}

#[test]
fn gemini_gets_milliseconds_a_star_matcher_and_no_model_events() {
    let before = "{\n  \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n  \"hooks\": {\n    \"BeforeTool\": [{\"matcher\": \"write_file\", \"hooks\": [{\"type\": \"command\", \"command\": \"mine.sh\"}]}]\n  }\n}\n";
    let mut fail_closed = options(Agent::Gemini);
    fail_closed.fail_closed = FailClosed::Tools;
    let text = install_text(Some(before), &fail_closed).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(file["security"]["auth"]["selectedType"], "gemini-api-key");
    for event in ["BeforeModel", "AfterModel", "BeforeToolSelection"] {
        assert!(file["hooks"].get(event).is_none(), "{event} registered");
    }
    let before_tool = file["hooks"]["BeforeTool"].as_array().unwrap();
    assert_eq!(before_tool.len(), 2, "the user's group stays");
    assert_eq!(before_tool[0]["hooks"][0]["command"], "mine.sh");
    assert_eq!(
        before_tool[1],
        json!({"matcher": "*", "hooks": [{"type": "command", "name": "hookd",
            "command": "/opt/hookd/bin/hook-forwarder --agent gemini --timeout 25 --fail-closed --installed-by=hookd",
            "timeout": 30000}]})
    );
    for (event, ms) in [
        ("SessionStart", 5000),
        ("PreCompress", 5000),
        ("SessionEnd", 2000),
        ("AfterAgent", 30000),
        ("BeforeAgent", 30000),
    ] {
        let groups = file["hooks"][event].as_array().unwrap();
        assert_eq!(groups[0]["matcher"], "*", "{event}");
        assert_eq!(groups[0]["hooks"][0]["timeout"], ms, "{event}");
        // Fail-closed only where Gemini can block a tool.
        let command = groups[0]["hooks"][0]["command"].as_str().unwrap();
        assert!(!command.contains("--fail-closed"), "{event}: {command}");
    }

    // Idempotent, and uninstall gives back the file byte for byte.
    assert_eq!(install_text(Some(&text), &fail_closed).unwrap(), text);
    let (after, removed) = uninstall_text(&text).unwrap();
    assert_eq!(
        removed,
        hookd::install::default_events_for(Agent::Gemini).len()
    );
    assert_eq!(after, before);
}

#[test]
fn a_forwarder_path_with_blanks_is_quoted_and_still_recognised() {
    let mut options = options(Agent::Codex);
    options.forwarder = "/opt/my tools/it's/hook-forwarder".into();
    options.events = vec![HookEventKind::PreToolUse];
    let text = install_text(None, &options).unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    let command = file["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert_eq!(
        command,
        r#"'/opt/my tools/it'\''s/hook-forwarder' --agent codex --timeout 25 --installed-by=hookd"#
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("set -- {command}; printf '%s\\n' \"$@\""))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "/opt/my tools/it's/hook-forwarder\n--agent\ncodex\n--timeout\n25\n--installed-by=hookd\n"
    );
    assert_eq!(install_text(Some(&text), &options).unwrap(), text);
    assert_eq!(uninstall_text(&text).unwrap().1, 1);
}

#[test]
fn event_names_are_the_agents_own() {
    let gemini = hookd::install::parse_events_for(Agent::Gemini, "BeforeTool,AfterAgent").unwrap();
    assert_eq!(gemini, [HookEventKind::PreToolUse, HookEventKind::Stop]);
    let e = hookd::install::parse_events_for(Agent::Gemini, "PreToolUse").unwrap_err();
    assert!(e.contains("gemini has no event `PreToolUse`"), "{e}");
    assert!(e.contains("BeforeTool"), "{e}");
    let e = hookd::install::parse_events_for(Agent::Gemini, "BeforeModel").unwrap_err();
    assert!(e.contains("BeforeModel"), "{e}");
    let codex = hookd::install::parse_events_for(Agent::Codex, "PreToolUse").unwrap();
    assert_eq!(codex, [HookEventKind::PreToolUse]);
}

fn hookd(args: &[&str], home: &Path, path: &str) -> Output {
    Command::new(daemon::hookd_bin())
        .args(args)
        .env_clear()
        .env("HOME", home)
        .env("PATH", path)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
}

#[test]
fn the_cli_writes_each_agents_file_and_all_skips_agents_not_on_path() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let forwarder = daemon::forwarder_bin();
    let forwarder = forwarder.to_str().unwrap();
    let bin = home.join("bin");
    std::fs::create_dir(&bin).unwrap();
    for program in ["codex", "gemini"] {
        let path = bin.join(program);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = bin.to_str().unwrap();

    let out = hookd(
        &["install", "--agent", "all", "--forwarder", forwarder],
        home,
        path,
    );
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("skipped claude-code: `claude` is not on PATH"),
        "{said}"
    );
    assert!(said.contains("Trust all and continue"), "{said}");
    assert!(!home.join(".claude").exists());
    let codex: Value =
        serde_json::from_slice(&std::fs::read(home.join(".codex/hooks.json")).unwrap()).unwrap();
    assert!(codex["hooks"]["PreToolUse"].is_array());
    let gemini: Value =
        serde_json::from_slice(&std::fs::read(home.join(".gemini/settings.json")).unwrap())
            .unwrap();
    assert_eq!(
        gemini["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"],
        30000
    );

    // Project scope, and no local scope for these agents.
    let project = home.join("proj");
    std::fs::create_dir(&project).unwrap();
    let project = project.to_str().unwrap();
    let out = hookd(
        &[
            "install",
            "--agent",
            "gemini",
            "--scope",
            "project",
            "--project",
            project,
            "--forwarder",
            forwarder,
        ],
        home,
        path,
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(home.join("proj/.gemini/settings.json").is_file());
    let out = hookd(
        &[
            "install",
            "--agent",
            "codex",
            "--scope",
            "local",
            "--forwarder",
            forwarder,
        ],
        home,
        path,
    );
    assert!(!out.status.success());
    assert!(
        text(&out).contains("codex has no local settings file"),
        "{}",
        text(&out)
    );

    // An invalid file is refused and left alone.
    std::fs::write(home.join(".codex/hooks.json"), "{\"hooks\": {},}\n").unwrap();
    let out = hookd(
        &["install", "--agent", "codex", "--forwarder", forwarder],
        home,
        path,
    );
    assert!(!out.status.success());
    assert!(text(&out).contains("hooks.json:1:"), "{}", text(&out));
    assert_eq!(
        std::fs::read_to_string(home.join(".codex/hooks.json")).unwrap(),
        "{\"hooks\": {},}\n"
    );

    // Uninstall takes out exactly what install wrote.
    let out = hookd(&["uninstall", "--agent", "gemini"], home, path);
    assert!(out.status.success(), "{}", text(&out));
    let gemini = std::fs::read_to_string(home.join(".gemini/settings.json")).unwrap();
    assert!(!gemini.contains("hook-forwarder"), "{gemini}");
}

#[test]
fn doctor_checks_each_agents_registration() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let forwarder = daemon::forwarder_bin();
    let forwarder = forwarder.to_str().unwrap();
    for agent in ["codex", "gemini", "copilot"] {
        let out = hookd(
            &["install", "--agent", agent, "--forwarder", forwarder],
            home,
            "/usr/bin:/bin",
        );
        assert!(out.status.success(), "{}", text(&out));
    }
    let doctor = || {
        let out = Command::new(daemon::hookd_bin())
            .args(["doctor", "--json", "--socket"])
            .arg(home.join("none.sock"))
            .arg("--project")
            .arg(home)
            .env_clear()
            .env("HOME", home)
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        let report: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
        report["checks"].as_array().unwrap().clone()
    };
    let check = |checks: &[Value], name: &str| -> Value {
        checks
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name} check: {checks:#?}"))
            .clone()
    };
    let checks = doctor();
    let codex = check(&checks, "codex:user");
    assert_eq!(codex["ok"], true, "{codex}");
    assert!(
        codex["message"].as_str().unwrap().contains("trusted"),
        "{codex}"
    );
    assert_eq!(check(&checks, "gemini:user")["ok"], true);
    assert_eq!(check(&checks, "copilot:user")["ok"], true);
    assert!(
        checks.iter().all(|c| c["name"] != "gemini:project"),
        "no file, no check"
    );

    // A hand edit Gemini would silently ignore, and a registration without
    // its agent.
    let path = home.join(".gemini/settings.json");
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replacen("\"matcher\": \"*\"", "\"matcher\": \".*\"", 6)
        .replace(" --agent gemini", "");
    std::fs::write(&path, edited).unwrap();
    let gemini = check(&doctor(), "gemini:user");
    assert_eq!(gemini["ok"], false);
    let message = gemini["message"].as_str().unwrap();
    assert!(
        message.contains("is not told `--agent gemini`"),
        "{message}"
    );
    assert!(
        message.contains("SessionStart") && message.contains("use \"*\""),
        "{message}"
    );
    assert!(
        gemini["fix"]
            .as_str()
            .unwrap()
            .contains("hookd install --agent gemini"),
        "{gemini}"
    );
}

#[test]
fn doctor_probe_runs_each_agents_hooks_through_the_daemon() {
    let d = daemon::Daemon::start();
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let forwarder = daemon::forwarder_bin();
    let forwarder = forwarder.to_str().unwrap();
    for agent in ["codex", "gemini", "copilot"] {
        let out = hookd(
            &["install", "--agent", agent, "--forwarder", forwarder],
            home,
            "/usr/bin:/bin",
        );
        assert!(out.status.success(), "{}", text(&out));
    }
    let out = Command::new(daemon::hookd_bin())
        .args(["doctor", "--probe", "--json", "--socket"])
        .arg(&d.socket)
        .arg("--project")
        .arg(home)
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .env("HOOKD_SOCKET", &d.socket)
        .output()
        .unwrap();
    let report: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    let probes: Vec<&Value> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["name"].as_str().unwrap().starts_with("probe:"))
        .collect();
    for (agent, count) in [
        (
            "codex",
            hookd::install::default_events_for(Agent::Codex).len(),
        ),
        (
            "gemini",
            hookd::install::default_events_for(Agent::Gemini).len(),
        ),
        (
            "copilot",
            hookd::install::default_events_for(Agent::Copilot).len(),
        ),
    ] {
        let mine: Vec<&&Value> = probes
            .iter()
            .filter(|c| {
                c["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("probe:{agent}:user:"))
            })
            .collect();
        assert_eq!(mine.len(), count, "{agent}: {probes:#?}");
        for c in mine {
            assert_eq!(c["ok"], true, "{c}");
        }
    }
    // The daemon logged them as the agents' probes.
    let harnesses: Vec<String> = d
        .log_lines()
        .iter()
        .filter(|l| l["type"] == "event")
        .filter_map(|l| l["harness"].as_str().map(str::to_owned))
        .collect();
    assert!(harnesses.iter().any(|h| h == "codex"), "{harnesses:?}");
    assert!(harnesses.iter().any(|h| h == "gemini"), "{harnesses:?}");
    assert!(harnesses.iter().any(|h| h == "copilot"), "{harnesses:?}");
}

/// Copilot: Claude Code's hook format in a file of hookd's own
/// (`~/.copilot/hooks/hookd.json`, the project's `.github/hooks/hookd.json`),
/// every entry `hook-forwarder --agent copilot`, PermissionRequest left
/// out (Copilot sends it in its native shape); uninstall is the exact
/// inverse.
#[test]
fn copilot_gets_claude_format_hooks_in_its_hooks_dir_and_uninstall_is_exact() {
    let written = install_text(None, &options(Agent::Copilot)).unwrap();
    let file: Value = serde_json::from_str(&written).unwrap();
    let events: Vec<&str> = file["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for event in ["PreToolUse", "Stop", "SessionStart", "SessionEnd"] {
        assert!(events.contains(&event), "{events:?}");
    }
    assert!(!events.contains(&"PermissionRequest"), "{events:?}");
    assert_eq!(
        handler_of(&file, "PreToolUse"),
        &json!({"type": "command",
            "command": "/opt/hookd/bin/hook-forwarder --agent copilot --timeout 25 --installed-by=hookd",
            "timeout": 30})
    );
    let (left, removed) = uninstall_text(&written).unwrap();
    assert_eq!(removed, events.len(), "{left}");
    assert!(!left.contains("hook-forwarder"), "{left}");

    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let forwarder = daemon::forwarder_bin();
    let forwarder = forwarder.to_str().unwrap();
    let path = "/usr/bin:/bin";
    let project = home.join("proj");
    std::fs::create_dir(&project).unwrap();
    let user_file = home.join(".copilot/hooks/hookd.json");
    let project_file = project.join(".github/hooks/hookd.json");
    // Someone's own hook in the same file survives the round trip.
    std::fs::create_dir_all(project_file.parent().unwrap()).unwrap();
    let theirs = "{\n  \"hooks\": {\n    \"PostToolUse\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"mine\"}]}]\n  }\n}\n";
    std::fs::write(&project_file, theirs).unwrap();
    for scope in ["user", "project"] {
        let out = hookd(
            &[
                "install",
                "--agent",
                "copilot",
                "--scope",
                scope,
                "--project",
                project.to_str().unwrap(),
                "--forwarder",
                forwarder,
            ],
            home,
            path,
        );
        assert!(out.status.success(), "{}", text(&out));
    }
    for file in [&user_file, &project_file] {
        let written = std::fs::read_to_string(file).unwrap();
        assert!(
            written.contains("--agent copilot"),
            "{}: {written}",
            file.display()
        );
    }
    for scope in ["user", "project"] {
        let out = hookd(
            &[
                "uninstall",
                "--agent",
                "copilot",
                "--scope",
                scope,
                "--project",
                project.to_str().unwrap(),
            ],
            home,
            path,
        );
        assert!(out.status.success(), "{}", text(&out));
    }
    assert_eq!(std::fs::read_to_string(&project_file).unwrap(), theirs);
    let user = std::fs::read_to_string(&user_file).unwrap_or_default();
    assert!(!user.contains("hook-forwarder"), "{user}");
}
