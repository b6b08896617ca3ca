//! `e` on a pending item, and `hookd rules explain`: which rules match a
//! hook input and which nearly did, under a rules source and the input's
//! project layer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::agent::claude::HookEventKind;
use crate::agent::claude::InputFields;
use crate::agent::Agent;
use crate::daemon::RulesSource;
use crate::local::DaemonRules;
use crate::protocol::Harness;
use crate::rules::{project_rules_path, Explanation, Layers, Query, RuleSet};

/// The rules source a daemon's `status` names (`rules.source`): a path, or
/// `defaults`.
pub fn source_named(name: &str) -> RulesSource {
    if name == "defaults" {
        RulesSource::Defaults
    } else {
        RulesSource::File(PathBuf::from(name))
    }
}

/// The agent whose hook a record with this `harness` is (Claude Code's
/// when unknown: an Agent SDK run's hooks are Claude Code's).
pub fn agent_of_harness(harness: &str) -> Agent {
    serde_json::from_value::<Harness>(Value::String(harness.to_string()))
        .map_or(Agent::ClaudeCode, Harness::agent)
}

/// The event name rules judge `agent`'s hook `input` as (`PreToolUse` for
/// Gemini's `BeforeTool`); an event the agent's dialect does not map keeps
/// its own name.
pub fn judged_event(agent: Agent, input: &Value) -> String {
    let name = InputFields::of(input).event_name.unwrap_or("");
    match agent.event_kind(name) {
        HookEventKind::Unknown => name.to_string(),
        kind => kind.as_str().to_string(),
    }
}

/// Explains `agent`'s hook `input` under `user` rules and the project
/// layer of the input's `cwd`, if it has one, as the daemon judges it: one
/// explanation per Claude-shaped input the agent's dialect maps the hook
/// onto (a Codex patch has one per file it touches).
pub fn explain_with(
    input: &Value,
    agent: Agent,
    user: Arc<RuleSet>,
    home: Option<&Path>,
) -> Vec<Explanation> {
    let project_dir = InputFields::of(input).cwd.map(PathBuf::from);
    let mut layers = Layers::new(user);
    if let Some(dir) = &project_dir {
        if let Ok(project) = RuleSet::load_project(&project_rules_path(dir)) {
            layers = layers.with_project(dir.clone(), Arc::new(project));
        }
    }
    let event = judged_event(agent, input);
    agent
        .rule_inputs(input)
        .iter()
        .map(|rule_input| {
            let mut query = Query::new(rule_input).agent(agent);
            query.event = &event;
            query.project_dir = project_dir.as_deref();
            query.home = home;
            layers.explain(&query)
        })
        .collect()
}

/// `rules` numbered with the generation `daemon` has them under when it
/// enforces exactly them; otherwise left at 0, which explanations show as
/// no generation (a command's own read of the files has none).
pub fn as_daemon_has_them(rules: RuleSet, daemon: &DaemonRules) -> RuleSet {
    match daemon.generation_of(rules.revision()) {
        Some(generation) => rules.with_generation(generation),
        None => rules,
    }
}

/// [`explain_with`] the rules of `source`, as text, with the generation
/// `daemon` has them under and, when it does not enforce them, a note
/// saying so.
pub fn explain(
    input: &Value,
    agent: Agent,
    source: &RulesSource,
    daemon: &DaemonRules,
) -> anyhow::Result<String> {
    let user = as_daemon_has_them(crate::local::composed_for_cli(source)?, daemon);
    let note = daemon.note(user.revision());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut texts: Vec<String> = explain_with(input, agent, Arc::new(user), home.as_deref())
        .iter()
        .map(ToString::to_string)
        .collect();
    texts.extend(note);
    Ok(texts.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push() -> Value {
        serde_json::json!({
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "git push --force origin main"},
        })
    }

    fn shown(rules: RuleSet) -> String {
        explain_with(&push(), Agent::ClaudeCode, Arc::new(rules), None)[0].to_string()
    }

    #[test]
    fn the_generation_shown_is_the_daemons_for_its_own_rules_and_none_for_others() {
        let revision = RuleSet::defaults().revision().clone();
        let daemon = DaemonRules::Running {
            revision: Some(revision.clone()),
            generation: 3,
        };
        let text = shown(as_daemon_has_them(RuleSet::defaults(), &daemon));
        assert!(text.contains("(generation 3)"), "{text}");
        assert_eq!(daemon.note(&revision), None);

        let other = RuleSet::parse(
            "[[rule]]\nid = \"x\"\naction = \"deny\"\ntool = \"Bash\"\n",
            Path::new("other.toml"),
        )
        .unwrap();
        let other_revision = other.revision().clone();
        let text = shown(as_daemon_has_them(other, &daemon));
        assert!(!text.contains("generation"), "none made up: {text}");
        let note = daemon.note(&other_revision).unwrap();
        assert!(
            note.contains(&format!(
                "the running daemon enforces revision {revision} (generation 3); these rules are revision {other_revision}"
            )),
            "{note}"
        );

        let stopped = DaemonRules::NotRunning {
            socket: PathBuf::from("/run/hookd.sock"),
        };
        let text = shown(as_daemon_has_them(RuleSet::defaults(), &stopped));
        assert!(!text.contains("generation"), "{text}");
        let note = stopped.note(&revision).unwrap();
        assert!(
            note.contains("no hookd daemon answers at /run/hookd.sock"),
            "{note}"
        );
    }
}
