//! `hookd doctor`'s checks of Codex's and Gemini's registrations: each
//! file `hookd install --agent codex|gemini` writes, when it exists.

use std::fs;
use std::io;
use std::path::Path;

use super::Check;
use crate::agent::claude::HookEventKind;
use crate::agent::Agent;
use crate::install::{self, Inspection, Registration, Scope};

/// Gemini compares the matcher of these events with their `source`,
/// `trigger` or `reason` as a plain string: only `"*"`, `""` or no matcher
/// matches them all (`".*"` silently matches none).
const GEMINI_PLAIN_MATCHER_EVENTS: [&str; 3] = ["SessionStart", "SessionEnd", "PreCompress"];

/// The check of `agent`'s registration file at `path`, and what it
/// registers when it could be read (`None` when there is no such file:
/// nothing registered there, nothing to say).
pub(super) fn check(
    agent: Agent,
    scope: Scope,
    path: &Path,
) -> Option<(Check, Option<Inspection>)> {
    let name = format!("{agent}:{}", scope.as_str());
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
        Err(e) => {
            return Some((
                Check::fail(
                    name,
                    format!("{}: {e}", path.display()),
                    "make the file readable",
                ),
                None,
            ))
        }
    };
    let inspection = match install::inspect(&text) {
        Ok(inspection) => inspection,
        Err(e) => {
            return Some((
                Check::fail(
                    name,
                    format!("{}:{e}", path.display()),
                    format!("fix the file: {agent} cannot use a file it cannot parse"),
                ),
                None,
            ))
        }
    };
    let check = check_registrations(agent, name, path, &inspection);
    Some((check, Some(inspection)))
}

fn check_registrations(agent: Agent, name: String, path: &Path, inspection: &Inspection) -> Check {
    let regs = &inspection.registrations;
    if regs.is_empty() {
        return Check::pass(name, format!("{}: no hook-forwarder entry", path.display()));
    }
    let mut problems = Vec::new();
    let mut fixes = Vec::new();
    let reinstall = format!("re-run `hookd install --agent {agent}`");
    for r in regs {
        problems.extend(registration_problems(agent, r));
    }
    if !problems.is_empty() {
        fixes.push(reinstall.clone());
    }
    let gate = install::event_name(agent, HookEventKind::PreToolUse).unwrap_or("PreToolUse");
    if !regs.iter().any(|r| r.event == gate) {
        problems.push(format!(
            "{gate} is not registered: {agent}'s tool calls are not judged"
        ));
        fixes.push(reinstall);
    }
    let events = {
        let mut names: Vec<&str> = regs.iter().map(|r| r.event.as_str()).collect();
        names.dedup();
        names.len()
    };
    if problems.is_empty() {
        let trust = match agent {
            Agent::Codex => "; Codex runs them once they are trusted (`codex`, /hooks)",
            _ => "",
        };
        Check::pass(
            name,
            format!(
                "{}: hook-forwarder --agent {agent} on {events} event{}{trust}",
                path.display(),
                if events == 1 { "" } else { "s" }
            ),
        )
    } else {
        fixes.dedup();
        Check::fail(
            name,
            format!("{}: {}", path.display(), problems.join("; ")),
            fixes.join("; "),
        )
    }
}

/// What is wrong with one forwarder registration in `agent`'s file.
fn registration_problems(agent: Agent, r: &Registration) -> Vec<String> {
    let at = format!("{} (line {})", r.event, r.line);
    let mut problems = Vec::new();
    let args: Vec<std::ffi::OsString> = r.args.iter().map(Into::into).collect();
    if crate::forwarder::agent_in(&args) != Some(agent) {
        problems.push(format!(
            "{at}: the forwarder is not told `--agent {agent}`: hookd would read {agent}'s hook as Claude Code's"
        ));
    }
    let kind = agent.event_kind(&r.event);
    if !agent.knows_event(&r.event) {
        problems.push(format!("{at}: {agent} has no event {}", r.event));
    }
    // The agent's timeout, in seconds: Gemini writes milliseconds.
    let agent_s = r.timeout.map(|t| match agent {
        Agent::Gemini => t / 1000.0,
        _ => t,
    });
    let forwarder_s = r
        .forwarder_timeout
        .unwrap_or_else(|| crate::forwarder::default_timeout(kind).as_secs_f64());
    match agent_s {
        Some(agent_s) if forwarder_s >= agent_s => problems.push(format!(
            "{at}: the forwarder's --timeout {forwarder_s} s is not below {agent}'s timeout {agent_s} s ({agent} would kill it first and let the action proceed{})",
            if agent == Agent::Gemini { "; Gemini's timeout is in milliseconds" } else { "" }
        )),
        _ => {}
    }
    if agent == Agent::Gemini
        && GEMINI_PLAIN_MATCHER_EVENTS.contains(&r.event.as_str())
        && r.matcher.as_deref().is_some_and(|m| !matches!(m, "*" | ""))
    {
        problems.push(format!(
            "{at}: matcher {:?}: Gemini compares it with the event's source as plain text, so the hook never runs; use \"*\"",
            r.matcher.as_deref().unwrap_or_default()
        ));
    }
    problems
}
