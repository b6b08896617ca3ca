//! `hookd doctor`'s checks of the OpenCode plugin and the Pi extension
//! (`hookd install --agent opencode|pi`): each file, when it exists, is
//! hookd's and matches this hookd's embedded plugin; with `--probe`, a
//! synthetic tool call goes through the installed file, run by Node with a
//! stand-in for the agent, to the daemon and back.

use std::fs;
use std::io;
use std::path::Path;
use std::process::{Command, Stdio};

use super::Check;
use crate::agent::Agent;
use crate::install::plugin::{self, MARKER};
use crate::install::Scope;

/// The checks of every plugin file that exists, and each hookd plugin
/// found (`OpenCode (PATH)`), which counts as an agent reaching hookd.
/// `probe`: the daemon's socket, to probe each plugin through.
pub(super) fn checks(project: &Path, probe: Option<&Path>) -> (Vec<Check>, Vec<String>) {
    let mut checks = Vec::new();
    let mut found = Vec::new();
    let mut seen = Vec::new();
    for agent in [Agent::OpenCode, Agent::Pi] {
        for scope in [Scope::User, Scope::Project] {
            let Ok(path) = plugin::plugin_path(agent, scope, project) else {
                continue;
            };
            let same = fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if seen.contains(&same) {
                continue;
            }
            seen.push(same);
            let name = format!("{agent}:{}", scope.as_str());
            let text = match fs::read_to_string(&path) {
                Ok(text) => text,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    checks.push(Check::fail(
                        name,
                        format!("{}: {e}", path.display()),
                        "make the file readable",
                    ));
                    continue;
                }
            };
            checks.push(check_file(agent, &name, &path, &text));
            if text.starts_with(MARKER) {
                found.push(format!("{} ({})", agent.display_name(), path.display()));
                if let Some(socket) = probe {
                    checks.push(probe_file(agent, &format!("probe:{name}"), &path, socket));
                }
            }
        }
    }
    (checks, found)
}

fn check_file(agent: Agent, name: &str, path: &Path, text: &str) -> Check {
    let reinstall = format!("run `hookd install --agent {agent}` again");
    if !text.starts_with(MARKER) {
        return Check::fail(
            name,
            format!(
                "{}: not written by hookd install (no `{MARKER}` header)",
                path.display()
            ),
            format!("move it away and {reinstall}"),
        );
    }
    // The body after the header's three lines is the embedded plugin.
    let fail_closed = text.contains("failClosed: true");
    let expected = plugin::plugin_text(agent, fail_closed, 0);
    let body = |t: &str| t.splitn(4, '\n').nth(3).map(str::to_string);
    if body(text) != body(&expected) {
        return Check::fail(
            name,
            format!(
                "{}: hookd's plugin from another hookd version",
                path.display()
            ),
            reinstall,
        );
    }
    Check::pass(
        name,
        format!(
            "{}: hookd's {} plugin, {}",
            path.display(),
            agent.display_name(),
            if fail_closed {
                "fail-closed for tool calls"
            } else {
                "fail-open"
            }
        ),
    )
}

/// Node's part of the probe: imports the plugin file, calls it with a
/// stand-in for the agent, and sends one tool call whose command names the
/// probe; prints what the plugin did (`answer:` JSON) on stdout.
const PROBE_JS: &str = r#"
const [file, agent] = process.argv.slice(1);
// A data: URL: Node reads a bare .js file as CommonJS without a package.json saying otherwise.
const { readFileSync } = await import("node:fs");
const mod = await import("data:text/javascript;base64," + readFileSync(file).toString("base64"));
const input = { command: "echo hookd-doctor-probe" };
let answer;
if (agent === "pi") {
  const handlers = {};
  mod.default({ on: (name, fn) => { handlers[name] = fn; } });
  const ctx = { cwd: process.cwd(), sessionManager: { getSessionId: () => "hookd-doctor-probe" } };
  answer = await handlers.tool_call({ type: "tool_call", toolName: "bash", toolCallId: "probe", input }, ctx);
} else {
  const hooks = await mod.HookdPlugin({ directory: process.cwd() });
  try {
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: "hookd-doctor-probe", callID: "probe" }, { args: input });
  } catch (e) {
    answer = { block: true, reason: e.message };
  }
}
console.log("answer:" + JSON.stringify(answer ?? null));
"#;

fn probe_file(agent: Agent, name: &str, path: &Path, socket: &Path) -> Check {
    let out = Command::new("node")
        .arg("--input-type=module")
        .arg("-e")
        .arg(PROBE_JS)
        .arg(path)
        .arg(agent.as_str())
        .env("HOOKD_PLUGIN_DEADLINE_MS", "5000")
        .env("HOOKD_SOCKET", socket)
        .stdin(Stdio::null())
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) => {
            return Check::fail(
                name,
                format!("could not run node: {e}"),
                "install Node.js 20 or later",
            )
        }
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let Some(answer) = stdout.lines().find_map(|l| l.strip_prefix("answer:")) else {
        return Check::fail(
            name,
            format!("the plugin did not run: {}", stderr.trim()),
            format!("run `hookd install --agent {agent}` again"),
        );
    };
    if let Some(line) = stderr.lines().find(|l| l.starts_with("hookd:")) {
        return Check::fail(
            name,
            format!("a tool call fell back: {line}"),
            "start the daemon (`hookd serve`) and check its socket",
        );
    }
    Check::pass(
        name,
        format!(
            "a synthetic tool call through {} reached the daemon; answer {answer}",
            path.display()
        ),
    )
}
