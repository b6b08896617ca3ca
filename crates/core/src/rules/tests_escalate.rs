//! `escalate = "team"` and `approvals_required`: read with the same error
//! quality as every other key, carried to the verdict, shown by explain.

use super::*;
use serde_json::json;
use std::path::Path;

fn rules(src: &str) -> RuleSet {
    RuleSet::parse(src, Path::new("t.toml")).unwrap_or_else(|e| panic!("{e}\n--- in ---\n{src}"))
}

fn push(cmd: &str) -> serde_json::Value {
    json!({"hook_event_name": "PreToolUse", "cwd": "/p", "session_id": "s",
           "tool_name": "Bash", "tool_input": {"command": cmd}})
}

const TWO: &str = r#"
[[rule]]
id = "push"
action = "ask"
tool = "Bash(git push *)"
reason = "pushes need a second pair of eyes"
escalate = "team"
approvals_required = 2

[[rule]]
id = "net"
action = "ask"
tool = "Bash(curl *)"
escalate = "team"

[[rule]]
id = "local"
action = "ask"
tool = "Bash(rm *)"
"#;

#[test]
fn an_escalated_ask_carries_its_approvals_to_the_verdict() {
    let set = rules(TWO);
    let q = |v: &serde_json::Value| set.evaluate(&Query::new(v)).escalate;
    assert_eq!(
        q(&push("git push origin main")),
        Some(Escalation {
            approvals_required: 2
        })
    );
    assert_eq!(
        q(&push("curl example.com")),
        Some(Escalation {
            approvals_required: 1
        })
    );
    assert_eq!(
        q(&push("rm x")),
        None,
        "an ask without escalate stays local"
    );
    // Two asking rules: the most approvals either requires.
    assert_eq!(
        q(&push("curl x && git push")),
        Some(Escalation {
            approvals_required: 2
        })
    );
    // A deny beside an escalated ask is a deny: nothing to escalate.
    let deny =
        format!("{TWO}\n[[rule]]\nid = \"d\"\naction = \"deny\"\ntool = \"Bash(git push *)\"\n");
    assert_eq!(
        rules(&deny)
            .evaluate(&Query::new(&push("git push")))
            .escalate,
        None
    );
    // In the serialized evaluation only where there is one.
    let e = set.evaluate(&Query::new(&push("git push")));
    let v = serde_json::to_value(&e).unwrap();
    assert_eq!(v["escalate"], json!({"approvals_required": 2}));
    let v = serde_json::to_value(set.evaluate(&Query::new(&push("rm x")))).unwrap();
    assert!(v.get("escalate").is_none(), "{v}");
}

#[test]
fn explain_shows_the_escalation() {
    let set = rules(TWO);
    let v = push("git push");
    let text = set.explain(&Query::new(&v)).to_string();
    assert!(
        text.contains("escalated to the team: 2 different approvers' allow"),
        "{text}"
    );
    assert!(
        text.contains("escalate = \"team\": 2 different approvers' allow"),
        "{text}"
    );
}

#[test]
fn bad_escalations_are_errors_at_their_place() {
    let table: &[(&str, &str)] = &[
        (
            "[[rule]]\nid = \"a\"\naction = \"ask\"\nescalate = \"teams\"\n",
            "t.toml:4:12: rule \"a\": `escalate`: unknown target \"teams\"; did you mean `team`?",
        ),
        (
            "[[rule]]\nid = \"a\"\naction = \"ask\"\nescalate = \"boss\"\n",
            "t.toml:4:12: rule \"a\": `escalate`: unknown target \"boss\"; expected `team`",
        ),
        (
            "[[rule]]\nid = \"a\"\naction = \"ask\"\nescalate = true\n",
            "t.toml:4:12: rule \"a\": `escalate` must be a string (\"team\"), found boolean",
        ),
        (
            "[[rule]]\nid = \"a\"\naction = \"deny\"\nescalate = \"team\"\n",
            "t.toml:4:12: rule \"a\": `escalate` sends an ask to the team's approvers; only ask rules ask (this one is deny)",
        ),
        (
            "[[rule]]\nid = \"a\"\naction = \"ask\"\napprovals_required = 2\n",
            "t.toml:4:22: rule \"a\": `approvals_required` counts team approvers; add `escalate = \"team\"`",
        ),
        (
            "[[rule]]\nid = \"a\"\naction = \"ask\"\nescalate = \"team\"\napprovals_required = 0\n",
            "t.toml:5:22: rule \"a\": `approvals_required` must be a whole number from 1 to 10",
        ),
        (
            "[[rule]]\nid = \"a\"\naction = \"ask\"\nescalate = \"team\"\napprovals_required = \"2\"\n",
            "t.toml:5:22: rule \"a\": `approvals_required` must be a whole number, found string",
        ),
        (
            "[[rule]]\nid = \"a\"\naction = \"ask\"\nescalte = \"team\"\n",
            "t.toml:4:1: unknown key in rule \"a\": `escalte`; did you mean `escalate`?",
        ),
        (
            "[[rule]]\nid = \"a\"\naction = \"ask\"\napprovals_requird = 2\n",
            "t.toml:4:1: unknown key in rule \"a\": `approvals_requird`; did you mean `approvals_required`?",
        ),
    ];
    for (src, want) in table {
        let err = RuleSet::parse(src, Path::new("t.toml")).expect_err(src);
        let errors: Vec<String> = err.errors().map(ToString::to_string).collect();
        assert_eq!(errors.len(), 1, "{src}\n=> {err}");
        assert!(
            errors[0].contains(want),
            "want: {want}\n got: {}",
            errors[0]
        );
    }
}
