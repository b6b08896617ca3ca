//! Judge rules and signals: the facts the daemon gathers, as evaluation
//! reads them.

use super::judge::{JudgeAction, JudgeVerdict};
use super::signal::Signals;
use super::*;
use serde_json::{json, Value};
use std::path::Path;

fn bash(cmd: &str) -> Value {
    json!({
        "session_id": "s1",
        "cwd": "/home/dev/project",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": { "command": cmd },
    })
}

fn rules(src: &str) -> RuleSet {
    RuleSet::parse(src, Path::new("test.toml")).unwrap_or_else(|e| panic!("{e}"))
}

fn errors(src: &str) -> String {
    RuleSet::parse(src, Path::new("test.toml"))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default()
}

const JUDGE: &str = r#"
[[rule]]
id = "outside"
action = "judge"
tool = "Bash(rm *)"
prompt = "Is this command destructive outside the project?"
provider = "anthropic"
timeout = "2s"
on_error = "deny"
"#;

fn answer(rule: &str, verdict: JudgeAction, reason: &str) -> JudgeVerdict {
    JudgeVerdict {
        rule: rule.to_string(),
        verdict,
        reason: reason.to_string(),
        cached: false,
    }
}

#[test]
fn judge_deny_decides_with_the_models_reason() {
    let set = rules(JUDGE);
    let input = bash("rm -rf /etc");
    let answers = [answer("outside", JudgeAction::Deny, "removes /etc")];
    let e = set.evaluate(&Query::new(&input).judgements(&answers));
    assert_eq!(e.action, Some(Action::Deny));
    assert_eq!(e.reason.as_deref(), Some("removes /etc"));
    assert_eq!(e.rule_ids, vec!["outside".to_string()]);
}

#[test]
fn judge_ask_asks_and_allow_leaves_the_rule_out() {
    let set = rules(JUDGE);
    let input = bash("rm -rf build");
    let ask = [answer("outside", JudgeAction::Ask, "unsure")];
    assert_eq!(
        set.evaluate(&Query::new(&input).judgements(&ask)).action,
        Some(Action::Ask)
    );
    let allow = [answer("outside", JudgeAction::Allow, "inside the project")];
    let e = set.evaluate(&Query::new(&input).judgements(&allow));
    assert_eq!(e.action, None, "a judge's allow only removes its rule");
}

#[test]
fn judge_without_answer_falls_back_by_on_error() {
    let input = bash("rm -rf /tmp/x");
    for (on_error, want) in [
        ("deny", Some(Action::Deny)),
        ("ask", Some(Action::Ask)),
        ("none", None),
    ] {
        let set = rules(&JUDGE.replace("on_error = \"deny\"", &format!("on_error = {on_error:?}")));
        let e = set.evaluate(&Query::new(&input));
        assert_eq!(e.action, want, "on_error = {on_error}");
        if want.is_some() {
            assert!(e.reason.unwrap().contains("gave no verdict"));
        }
    }
}

#[test]
fn judge_rule_that_does_not_match_needs_no_answer() {
    let set = rules(JUDGE);
    let input = bash("ls");
    assert_eq!(set.evaluate(&Query::new(&input)).action, None);
}

#[test]
fn judge_answer_for_another_rule_is_not_used() {
    let set = rules(JUDGE);
    let input = bash("rm x");
    let answers = [answer("other", JudgeAction::Allow, "fine")];
    assert_eq!(
        set.evaluate(&Query::new(&input).judgements(&answers))
            .action,
        Some(Action::Deny),
        "no answer for `outside`: on_error = deny"
    );
}

#[test]
fn judge_keys_are_checked() {
    assert!(errors(&JUDGE.replace("prompt = ", "# ")).contains("needs `prompt`"));
    assert!(errors(&JUDGE.replace("\"deny\"", "\"dney\"")).contains("did you mean \"deny\"?"));
    assert!(errors(&JUDGE.replace("\"2s\"", "\"soon\"")).contains("`timeout`"));
    let not_judge = JUDGE.replace("action = \"judge\"", "action = \"deny\"");
    assert!(errors(&not_judge).contains("only for judge rules"));
    assert!(errors(&JUDGE.replace("prompt =", "promt =")).contains("prompt"));
}

#[test]
fn judge_reply_is_parsed_strictly() {
    let ok =
        JudgeVerdict::parse_reply("r", r#" {"verdict":"deny","reason":"rm of /etc"} "#).unwrap();
    assert_eq!(ok.verdict, JudgeAction::Deny);
    assert_eq!(ok.reason, "rm of /etc");
    for bad in [
        "Sure! It is destructive.",
        r#"{"verdict":"maybe","reason":"x"}"#,
        r#"{"verdict":"deny"}"#,
        r#"{"verdict":"deny","reason":""}"#,
        r#"{"verdict":"deny","reason":"two\nlines"}"#,
        r#"{"verdict":"deny","reason":"x","extra":1}"#,
        r#"```json {"verdict":"deny","reason":"x"} ```"#,
    ] {
        assert!(JudgeVerdict::parse_reply("r", bad).is_err(), "{bad}");
    }
}

const ON_MAIN: &str = r#"
[[rule]]
id = "no-push-on-main"
action = "deny"
tool = "Bash(git push*)"
reason = "no pushes from main"
when = [{ field = "$signal.branch", equals = "main" }]
"#;

#[test]
fn signal_condition_reads_the_known_value() {
    let set = rules(ON_MAIN);
    let input = bash("git push");
    let main = Signals::new().with("branch", "main");
    let feature = Signals::new().with("branch", "feature");
    assert_eq!(
        set.evaluate(&Query::new(&input).signals(&main)).action,
        Some(Action::Deny)
    );
    assert_eq!(
        set.evaluate(&Query::new(&input).signals(&feature)).action,
        None
    );
}

#[test]
fn unknown_signal_matches_nothing_but_exists_false() {
    let set = rules(ON_MAIN);
    let input = bash("git push");
    assert_eq!(set.evaluate(&Query::new(&input)).action, None);
    let other = Signals::new().with("ci", "true");
    assert_eq!(
        set.evaluate(&Query::new(&input).signals(&other)).action,
        None
    );
    let unknown = rules(
        r#"
[[rule]]
id = "branch-unknown"
action = "ask"
tool = "Bash(git push*)"
when = [{ field = "$signal.branch", exists = false }]
"#,
    );
    assert_eq!(
        unknown.evaluate(&Query::new(&input)).action,
        Some(Action::Ask)
    );
}

#[test]
fn signal_in_many_rules_uses_the_grouped_sets_and_explains() {
    // Regex conditions on one field are grouped; the signal field must take
    // part like any other.
    let mut src = String::new();
    for i in 0..5 {
        src.push_str(&format!(
            "[[rule]]\nid = \"r{i}\"\naction = \"deny\"\ntool = \"Bash\"\nwhen = [{{ field = \"$signal.branch\", regex = \"^rel-{i}$\" }}]\n"
        ));
    }
    let set = rules(&src);
    let input = bash("make");
    let s = Signals::new().with("branch", "rel-3");
    let e = set.evaluate(&Query::new(&input).signals(&s));
    assert_eq!(e.rule_ids, vec!["r3".to_string()]);
    let x = set.explain(&Query::new(&input).signals(&s));
    assert!(format!("{x}").contains("\"rel-3\""), "{x}");
}

#[test]
fn signal_field_names_are_checked() {
    let bad = ON_MAIN.replace("$signal.branch", "$signal.");
    assert!(errors(&bad).contains("not a signal field"));
    let bad = ON_MAIN.replace("$signal.branch", "$sgnal.branch");
    assert!(errors(&bad).contains("$signal.NAME"));
}
