//! One hook judged as several inputs: an agent's call that touches several
//! things (a Codex patch's files, a Gemini fetch's URLs) is judged once per
//! thing ([`crate::agent::Agent::rule_inputs`]) and the verdicts combined.

use std::borrow::Cow;

use serde_json::Value;

use super::{Action, Evaluation, Layers, Query};

/// Judges every rule input of one hook (see `Agent::rule_inputs`) under
/// `layers` and combines the verdicts with [`combine`]. `query` gives
/// everything but the input (each of `inputs` takes its place in turn): its
/// `event` is the hookd kind's name (`PreToolUse` for Gemini's
/// `BeforeTool`), or the agent's own name for an event no kind maps: rules
/// name events by hookd's kinds, and only `event = "*"` matches the others.
pub fn evaluate(layers: &Layers, inputs: &[Cow<'_, Value>], query: &Query<'_>) -> Evaluation {
    let evaluations = inputs
        .iter()
        .map(|input| layers.evaluate(&Query { input, ..*query }))
        .collect();
    combine(evaluations)
}

/// One verdict for a hook judged as several inputs (one per file a patch
/// touches, one per URL a fetch reads), as the rule engine combines the
/// commands of one Bash line: a **deny** of any input denies the call, else
/// an **ask** of any asks, and an **allow** needs every input allowed;
/// anything less is "no opinion". Rule ids and reasons are those of the
/// inputs that gave the winning action; context is gathered from all.
///
/// # Panics
///
/// If `evaluations` is empty (`Agent::rule_inputs` never is).
pub fn combine(mut evaluations: Vec<Evaluation>) -> Evaluation {
    assert!(!evaluations.is_empty(), "combine needs an evaluation");
    if evaluations.len() == 1 {
        return evaluations.remove(0);
    }
    let any = |action: Action| evaluations.iter().any(|e| e.action == Some(action));
    let decided = if any(Action::Deny) {
        Some(Action::Deny)
    } else if any(Action::Ask) {
        Some(Action::Ask)
    } else if evaluations.iter().all(|e| e.action == Some(Action::Allow)) {
        Some(Action::Allow)
    } else {
        None
    };
    let mut rule_ids = Vec::new();
    let mut reasons: Vec<&str> = Vec::new();
    let mut additional_context = Vec::new();
    let mut context_rule_ids = Vec::new();
    for e in &evaluations {
        if decided.is_some() && e.action == decided {
            push_new(&mut rule_ids, &e.rule_ids);
            for reason in e.reason.iter().flat_map(|r| r.split("; ")) {
                if !reasons.contains(&reason) {
                    reasons.push(reason);
                }
            }
        }
        push_new(&mut additional_context, &e.additional_context);
        push_new(&mut context_rule_ids, &e.context_rule_ids);
    }
    let action = decided.or((!additional_context.is_empty()).then_some(Action::Context));
    // One call counts once towards a limit, however many inputs it split into.
    let mut limited: Vec<super::facts::LimitedHit> = Vec::new();
    let mut gated = Vec::new();
    for e in &evaluations {
        for l in &e.limited {
            if !limited.iter().any(|x| x.rule == l.rule) {
                limited.push(l.clone());
            }
        }
        push_new(&mut gated, &e.gated);
    }
    let mut judges: Vec<super::judge::JudgeHit> = Vec::new();
    for j in evaluations.iter().flat_map(|e| &e.judges) {
        if !judges.iter().any(|x| x.rule == j.rule) {
            judges.push(j.clone());
        }
    }
    let first = &evaluations[0];
    Evaluation {
        action,
        rule_ids,
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        additional_context,
        context_rule_ids,
        generation: first.generation,
        project_generation: evaluations.iter().find_map(|e| e.project_generation),
        enforced_by: evaluations
            .iter()
            .filter(|e| decided.is_some() && e.action == decided)
            .find_map(|e| e.enforced_by.clone()),
        overridden: evaluations
            .iter()
            .filter(|e| decided.is_some() && e.action == decided)
            .flat_map(|e| e.overridden.iter().cloned())
            .collect(),
        limited,
        gated,
        judges,
        escalate: evaluations
            .iter()
            .filter(|e| decided == Some(Action::Ask) && e.action == decided)
            .fold(None, |x, e| super::Escalation::merge(x, e.escalate)),
    }
}

fn push_new(into: &mut Vec<String>, from: &[String]) {
    for item in from {
        if !into.contains(item) {
            into.push(item.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::RuleSet;
    use serde_json::json;
    use std::path::Path;
    use std::sync::Arc;

    fn layers(toml: &str) -> Layers {
        Layers::new(Arc::new(RuleSet::parse(toml, Path::new("t.toml")).unwrap()))
    }

    fn edit(path: &str) -> Value {
        json!({"hook_event_name": "PreToolUse", "cwd": "/p", "tool_name": "Edit",
               "tool_input": {"file_path": path}})
    }

    fn judge(layers: &Layers, paths: &[&str]) -> Evaluation {
        let inputs: Vec<Cow<'_, Value>> = paths.iter().map(|p| Cow::Owned(edit(p))).collect();
        evaluate(
            layers,
            &inputs,
            &Query {
                event: "PreToolUse",
                ..Query::new(&Value::Null)
            },
        )
    }

    const RULES: &str = r#"
        [[rule]]
        id = "src-ok"
        action = "allow"
        tool = "Edit(src/**)"
        [[rule]]
        id = "no-secrets"
        action = "deny"
        tool = "Edit(secrets/**)"
        reason = "secrets are read-only"
        [[rule]]
        id = "docs-ask"
        action = "ask"
        tool = "Edit(docs/**)"
        [[rule]]
        id = "note"
        action = "context"
        tool = "Edit(notes/**)"
        reason = "notes are shared"
    "#;

    #[test]
    fn a_deny_of_any_input_denies_the_call() {
        let layers = layers(RULES);
        let e = judge(&layers, &["/p/src/a.rs", "/p/secrets/k", "/p/docs/x"]);
        assert_eq!(e.action, Some(Action::Deny));
        assert_eq!(e.rule_ids, ["no-secrets"]);
        assert_eq!(e.reason.as_deref(), Some("secrets are read-only"));
        let e = judge(&layers, &["/p/src/a.rs", "/p/docs/x"]);
        assert_eq!(e.action, Some(Action::Ask));
        assert_eq!(e.rule_ids, ["docs-ask"]);
    }

    #[test]
    fn an_allow_needs_every_input_allowed() {
        let layers = layers(RULES);
        let e = judge(&layers, &["/p/src/a.rs", "/p/src/b.rs"]);
        assert_eq!(e.action, Some(Action::Allow));
        assert_eq!(e.rule_ids, ["src-ok"]);
        let e = judge(&layers, &["/p/src/a.rs", "/p/other"]);
        assert_eq!(e.action, None);
        assert!(e.rule_ids.is_empty());
        let e = judge(&layers, &["/p/src/a.rs", "/p/notes/n"]);
        assert_eq!(e.action, Some(Action::Context));
        assert_eq!(e.additional_context, ["notes are shared"]);
        assert_eq!(e.context_rule_ids, ["note"]);
    }

    #[test]
    fn one_input_is_judged_as_it_is() {
        let layers = layers(RULES);
        let input = edit("/p/secrets/k");
        let alone = layers.evaluate(&Query::new(&input));
        assert_eq!(judge(&layers, &["/p/secrets/k"]), alone);
    }
}
