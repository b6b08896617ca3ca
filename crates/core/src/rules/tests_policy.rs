//! Policy layers composed under the user's rules: who may loosen what.

use super::*;
use serde_json::{json, Value};
use std::path::Path;

const PROJECT: &str = "/home/dev/project";

fn bash(cmd: &str) -> Value {
    json!({
        "session_id": "s1",
        "cwd": PROJECT,
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": { "command": cmd },
    })
}

fn rule(id: &str, action: &str, tool: &str) -> String {
    format!(
        "[[rule]]\nid = \"{id}\"\naction = \"{action}\"\ntool = \"{tool}\"\nreason = \"{id}\"\n"
    )
}

fn layer(name: &str, enforced: bool, src: &str) -> PolicyLayer {
    PolicyLayer {
        name: name.to_string(),
        enforced,
        files: vec![RuleSet::parse_policy(src, Path::new(&format!("/srv/{name}/a.toml"))).unwrap()],
    }
}

fn user(src: &str, layers: Vec<PolicyLayer>) -> RuleSet {
    RuleSet::parse(src, Path::new("/home/dev/.config/hookd/rules.toml"))
        .unwrap()
        .with_policy(layers)
}

fn judge(set: &RuleSet, command: &str) -> (Option<Action>, Vec<String>) {
    let input = bash(command);
    let e = set.evaluate(&Query::new(&input));
    (e.action, e.rule_ids)
}

#[test]
fn a_policy_deny_always_applies_enforced_or_not() {
    for enforced in [false, true] {
        let set = user(
            &rule("push-ok", "allow", "Bash(git push *)"),
            vec![layer(
                "team",
                enforced,
                &rule("no-push", "deny", "Bash(git push *)"),
            )],
        );
        assert_eq!(
            judge(&set, "git push origin main"),
            (Some(Action::Deny), vec!["team:no-push".to_string()]),
            "enforced: {enforced}"
        );
    }
}

#[test]
fn a_user_deny_or_ask_tightens_a_policy_allow() {
    for enforced in [false, true] {
        let team = || {
            vec![layer(
                "team",
                enforced,
                &rule("tests", "allow", "Bash(cargo *)"),
            )]
        };
        let deny = user(&rule("no-publish", "deny", "Bash(cargo publish *)"), team());
        assert_eq!(
            judge(&deny, "cargo publish --dry-run").0,
            Some(Action::Deny)
        );
        assert_eq!(judge(&deny, "cargo test").0, Some(Action::Allow));
        let ask = user(&rule("ask-publish", "ask", "Bash(cargo publish *)"), team());
        assert_eq!(judge(&ask, "cargo publish --dry-run").0, Some(Action::Ask));
    }
}

#[test]
fn a_user_allow_loosens_a_policy_ask_unless_the_policy_is_enforced() {
    let team_ask = rule("ask-push", "ask", "Bash(git push *)");
    let user_allow = rule("push-ok", "allow", "Bash(git push *)");

    let loose = user(&user_allow, vec![layer("team", false, &team_ask)]);
    let input = bash("git push origin main");
    let e = loose.evaluate(&Query::new(&input));
    assert_eq!(e.action, Some(Action::Allow));
    assert_eq!(e.rule_ids, ["push-ok"]);
    assert_eq!(e.overridden, ["team:ask-push"]);
    assert_eq!(e.enforced_by, None);

    let enforced = user(&user_allow, vec![layer("team", true, &team_ask)]);
    let e = enforced.evaluate(&Query::new(&input));
    assert_eq!(e.action, Some(Action::Ask));
    assert_eq!(e.rule_ids, ["team:ask-push"]);
    assert_eq!(e.enforced_by.as_deref(), Some("team"));
    assert!(e.overridden.is_empty());

    // Nothing above the ask: it stands, enforced or not.
    let alone = user("", vec![layer("team", false, &team_ask)]);
    assert_eq!(judge(&alone, "git push").0, Some(Action::Ask));
}

#[test]
fn only_a_higher_layers_allow_loosens_an_ask_and_it_must_cover_every_command() {
    // Two sources: the later one ranks above the earlier one.
    let base = layer("base", false, &rule("ask-push", "ask", "Bash(git push *)"));
    let team = layer(
        "team",
        false,
        &format!(
            "{}{}",
            rule("push-ok", "allow", "Bash(git push *)"),
            rule("ask-rm", "ask", "Bash(rm *)")
        ),
    );
    let set = user(
        &rule("ls-ok", "allow", "Bash(ls *)"),
        vec![base.clone(), team.clone()],
    );
    assert_eq!(
        judge(&set, "git push").0,
        Some(Action::Allow),
        "team allow over base ask"
    );
    assert_eq!(
        judge(&set, "ls -l && git push").0,
        Some(Action::Allow),
        "every command allowed from above the ask (user ls, team push)"
    );
    assert_eq!(
        judge(&set, "rm x").0,
        Some(Action::Ask),
        "nothing above team's ask"
    );
    assert_eq!(
        judge(&set, "git push && rm x").0,
        Some(Action::Ask),
        "the rm is not allowed from above the team's ask"
    );
    // The earlier source's allow does not loosen the later one's ask.
    let reversed = user("", vec![team, base]);
    let set = user(
        &rule("x", "allow", "Bash(true)"),
        reversed.policy().to_vec(),
    );
    assert_eq!(judge(&set, "git push").0, Some(Action::Ask));
}

#[test]
fn without_policy_layers_the_user_and_project_layers_judge_as_before() {
    // Within one layer, and between user and project, ask beats allow.
    let set = user(
        &format!(
            "{}{}",
            rule("ask-push", "ask", "Bash(git push *)"),
            rule("push-ok", "allow", "Bash(git *)")
        ),
        Vec::new(),
    );
    assert_eq!(judge(&set, "git push").0, Some(Action::Ask));
    let project =
        RuleSet::parse_project(&rule("ask-make", "ask", "Bash(make *)"), Path::new("p")).unwrap();
    let layers = Layers::new(Arc::new(user(
        &rule("make-ok", "allow", "Bash(make *)"),
        vec![layer("team", false, &rule("t", "allow", "Bash(true)"))],
    )))
    .with_project(PROJECT, Arc::new(project));
    let input = bash("make all");
    let e = layers.evaluate(&Query::new(&input));
    assert_eq!(
        e.action,
        Some(Action::Ask),
        "a project ask is not loosened by the user"
    );
    assert_eq!(e.rule_ids, ["project:ask-make"]);
}

#[test]
fn explain_names_the_layer_and_file_of_each_matching_rule() {
    let set = user(
        &rule("push-ok", "allow", "Bash(git push *)"),
        vec![layer(
            "team",
            true,
            &rule("ask-push", "ask", "Bash(git push *)"),
        )],
    );
    let input = bash("git push");
    let explanation = set.explain(&Query::new(&input));
    let matched: Vec<(&str, &str, &str)> = explanation
        .matched
        .iter()
        .map(|r| (r.id.as_str(), r.layer.as_str(), r.origin.as_str()))
        .collect();
    assert_eq!(
        matched,
        [
            ("push-ok", "user", "/home/dev/.config/hookd/rules.toml:1"),
            ("team:ask-push", "team", "/srv/team/a.toml:1"),
        ]
    );
    let text = explanation.to_string();
    assert!(text.contains("enforced by policy source team"), "{text}");
}

#[test]
fn the_revision_covers_every_layer_and_whether_it_is_enforced() {
    let src = rule("ask-push", "ask", "Bash(git push *)");
    let alone = user("", Vec::new()).revision().clone();
    let loose = user("", vec![layer("team", false, &src)])
        .revision()
        .clone();
    let enforced = user("", vec![layer("team", true, &src)]).revision().clone();
    let renamed = user("", vec![layer("corp", false, &src)])
        .revision()
        .clone();
    assert_ne!(alone, loose);
    assert_ne!(loose, enforced);
    assert_ne!(loose, renamed);
    assert_eq!(
        loose,
        user("", vec![layer("team", false, &src)])
            .revision()
            .clone()
    );
}

#[test]
fn a_policy_file_cannot_trust_projects() {
    let err = RuleSet::parse_policy(
        "[trust]\nprojects = [\"/work/**\"]\n",
        Path::new("/srv/team/t.toml"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("/srv/team/t.toml:1"), "{err}");
    assert!(err.contains("policy source cannot trust"), "{err}");
}
