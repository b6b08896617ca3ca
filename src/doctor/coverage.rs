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

/// The trust Codex keeps for its hooks: `[hooks.state."…"] trusted_hash`
/// tables in `config.toml` beside `hooks.json` (`$CODEX_HOME`). hookd
/// cannot check a hash (its format is Codex's own), only that Codex
/// trusted some hook at all: none trusted means none of hookd's runs.
/// `None` when nothing is registered there.
pub(super) fn codex_trust(hooks_json: &Path, registered: usize) -> Option<Check> {
    if registered == 0 {
        return None;
    }
    let config = hooks_json.with_file_name("config.toml");
    let trusted = std::fs::read_to_string(&config)
        .ok()
        .and_then(|text| text.parse::<toml::Table>().ok())
        .map_or(0, |table| trusted_hashes(&table));
    let name = "codex:trust";
    Some(if trusted == 0 {
        Check::fail(
            name,
            format!(
                "{}: Codex has trusted no hook ({registered} of hookd's registered): it skips untrusted hooks silently, so no tool call of Codex is judged",
                config.display()
            ),
            "start `codex` in a terminal and choose to trust the new hooks (or review them with /hooks); automation that vets its hooks: `codex exec --dangerously-bypass-hook-trust`",
        )
    } else {
        Check::pass(
            name,
            format!(
                "{}: {trusted} hook{} trusted ({registered} registered by hookd; a hook changed since it was trusted is skipped until trusted again, which the unjudged check shows)",
                config.display(),
                if trusted == 1 { "" } else { "s" }
            ),
        )
    })
}

/// How many `hooks.state` entries carry a `trusted_hash`.
fn trusted_hashes(config: &toml::Table) -> usize {
    config
        .get("hooks")
        .and_then(|h| h.get("state"))
        .and_then(toml::Value::as_table)
        .map_or(0, |state| {
            state
                .values()
                .filter(|entry| entry.get("trusted_hash").is_some())
                .count()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_read_from_hooks_state() {
        let table: toml::Table = r#"
model = "x"
[hooks.state."/h/hooks.json:PreToolUse:0"]
trusted_hash = "abc"
[hooks.state."/h/hooks.json:PostToolUse:0"]
enabled = true
"#
        .parse()
        .unwrap();
        assert_eq!(trusted_hashes(&table), 1);
        assert_eq!(trusted_hashes(&toml::Table::new()), 0);
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
