//! `hookd doctor`'s checks of the coverage alarm: tool calls the running
//! daemon saw run without their pre-tool hook judged (`status.coverage`,
//! see `hookd_daemon::coverage`), and Codex hooks installed but not
//! trusted (Codex skips an untrusted hook without a word, so the daemon
//! never hears of it).

use std::path::Path;

use super::Check;
use crate::protocol::coverage::AgentCoverage;

/// One check per agent whose tool calls ran unjudged, naming what to fix;
/// one passing line when none did (nothing when the daemon saw no
/// session).
pub(super) fn unjudged(coverage: &[AgentCoverage]) -> Vec<Check> {
    let failing: Vec<Check> = coverage
        .iter()
        .filter(|a| a.unjudged > 0)
        .map(|a| {
            Check::fail(
                format!("unjudged:{}", a.agent),
                format!(
                    "{}: tool calls ran without their pre-tool hook judged",
                    a.line()
                ),
                fix_for(&a.agent),
            )
        })
        .collect();
    if !failing.is_empty() || coverage.is_empty() {
        return failing;
    }
    let (sessions, judged) = coverage
        .iter()
        .fold((0, 0), |(s, j), a| (s + a.sessions, j + a.judged));
    vec![Check::pass(
        "unjudged",
        format!(
            "every tool call the daemon saw run was judged first ({judged} judged in {sessions} session{} of {})",
            if sessions == 1 { "" } else { "s" },
            coverage
                .iter()
                .map(|a| a.agent.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )]
}

/// What to do when `agent`'s tool calls ran unjudged.
fn fix_for(agent: &str) -> String {
    match agent {
        "claude-code" => "register PreToolUse for every tool: re-run `hookd install` (matcher \"*\"), and check the settings lines above (a narrower matcher, disableAllHooks, a hook that times out before it reaches hookd)".into(),
        "agent-sdk" => "the run's PreToolUse did not reach the daemon: check the adapter (`hookd adapter status`) and the daemon's log".into(),
        "codex" => "Codex skips hooks it does not trust: start `codex` and trust hookd's hooks (/hooks), or re-run `hookd install --agent codex` and trust them again".into(),
        "gemini" => "re-run `hookd install --agent gemini` (BeforeTool with matcher \"*\"), and check the gemini lines above".into(),
        other => format!("re-run `hookd install --agent {other}` and check its lines above"),
    }
}

/// The trust Codex keeps for its hooks, in `config.toml` beside
/// `hooks.json` (`$CODEX_HOME`), as Codex 0.169.0 writes it when you
/// trust them (`tests/fixtures/agents/codex/trusted-config.toml`):
///
/// ```toml
/// [hooks.state."/home/you/.codex/hooks.json:pre_tool_use:0:0"]
/// trusted_hash = "sha256:…"
/// ```
///
/// one table per hook: the file, the event in snake case, the group's and
/// the hook's index. hookd cannot check a hash (what Codex hashes is its
/// own), only that each event hookd registered has a trusted hook: an
/// untrusted one Codex skips without a word. `None` when nothing is
/// registered there.
pub(super) fn codex_trust(hooks_json: &Path, events: &[&str]) -> Option<Check> {
    if events.is_empty() {
        return None;
    }
    let config = hooks_json.with_file_name("config.toml");
    let trusted = std::fs::read_to_string(&config)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .map(|table| trusted_events(&table, hooks_json))
        .unwrap_or_default();
    let untrusted: Vec<&str> = events
        .iter()
        .copied()
        .filter(|e| !trusted.contains(&snake_case(e)))
        .collect();
    let name = "codex:trust";
    let fix = "start `codex` in a terminal and choose to trust hookd's hooks (or review them with /hooks); automation that vets its hooks: `codex exec --dangerously-bypass-hook-trust`";
    Some(if untrusted.is_empty() {
        Check::pass(
            name,
            format!(
                "{}: Codex trusts hookd's hooks on all {} events (a hook changed since it was trusted is skipped until trusted again: the unjudged check shows it)",
                config.display(),
                events.len()
            ),
        )
    } else if untrusted.len() == events.len() {
        Check::fail(
            name,
            format!(
                "{}: Codex trusts none of hookd's hooks: it skips them silently, so none of Codex's tool calls is judged",
                config.display()
            ),
            fix,
        )
    } else {
        let tools = untrusted.contains(&"PreToolUse");
        Check::fail(
            name,
            format!(
                "{}: Codex does not trust hookd's hooks on {}: it skips them silently{}",
                config.display(),
                untrusted.join(", "),
                if tools {
                    ", so Codex's tool calls are not judged"
                } else {
                    ""
                }
            ),
            fix,
        )
    })
}

/// `PreToolUse` → `pre_tool_use`, as Codex names its events in
/// `hooks.state`.
fn snake_case(event: &str) -> String {
    let mut out = String::with_capacity(event.len() + 4);
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The events (snake case) with a hook of `hooks_json` that carries a
/// `trusted_hash` in `config`'s `hooks.state`.
fn trusted_events(config: &toml::Table, hooks_json: &Path) -> Vec<String> {
    let same_file = |path: &str| {
        let path = Path::new(path);
        path == hooks_json
            || std::fs::canonicalize(path).ok() == std::fs::canonicalize(hooks_json).ok()
                && path.exists()
    };
    let Some(state) = config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table)
    else {
        return Vec::new();
    };
    state
        .iter()
        .filter(|(_, entry)| entry.get("trusted_hash").is_some())
        .filter_map(|(key, _)| {
            // `<file>:<event>:<group>:<hook>`; the file may hold colons.
            let mut parts = key.rsplitn(4, ':');
            let (_hook, _group) = (parts.next()?, parts.next()?);
            let event = parts.next()?;
            same_file(parts.next()?).then(|| event.to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_read_from_hooks_state_as_codex_writes_it() {
        let fixture = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/agents/codex/trusted-config.toml"
        );
        let text = std::fs::read_to_string(fixture)
            .unwrap()
            .replace("CODEX_HOME", "/h/.codex");
        let table: toml::Table = text.parse().unwrap();
        let hooks = Path::new("/h/.codex/hooks.json");
        let mut trusted = trusted_events(&table, hooks);
        trusted.sort();
        assert_eq!(trusted.len(), 11, "{trusted:?}");
        assert!(trusted.contains(&"pre_tool_use".to_string()));
        assert!(trusted_events(&table, Path::new("/other/hooks.json")).is_empty());
        assert_eq!(snake_case("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn an_agent_with_unjudged_calls_fails_naming_it() {
        let codex = AgentCoverage {
            agent: "codex".into(),
            sessions: 1,
            judged: 0,
            unjudged: 3,
            last_unjudged_session: Some("1fce3faa-x".into()),
            last_unjudged_project: Some("webshop".into()),
            last_unjudged_at: None,
        };
        let checks = unjudged(&[codex]);
        assert_eq!(checks.len(), 1);
        assert!(!checks[0].ok);
        assert_eq!(checks[0].name, "unjudged:codex");
        assert!(
            checks[0]
                .message
                .contains("3 ran unjudged (last in session 1fce3faa, webshop"),
            "{}",
            checks[0].message
        );
        assert!(checks[0].fix.as_deref().unwrap().contains("trust"));
        let fine = AgentCoverage {
            agent: "gemini".into(),
            sessions: 2,
            judged: 5,
            ..AgentCoverage::default()
        };
        let checks = unjudged(&[fine]);
        assert!(checks[0].ok, "{:?}", checks[0]);
        assert!(unjudged(&[]).is_empty());
    }
}
