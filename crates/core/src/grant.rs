//! Remembered answers, the pure part: which permission rules a person may
//! remember an answer as (the suggestions shown before a grant applies),
//! compiling a rule into a one-rule [`RuleSet`] to judge later events
//! with, and the text a `remember: "always"` appends to the user rules
//! file.
//!
//! No IO: the daemon's `grants` module keeps, persists and expires grants.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use crate::agent::claude::InputFields;
use crate::decision::Verdict;
use crate::protocol::{Remember, Suggestion};
use crate::rules::{check_source, LayerKind, RuleSet};

/// The rules a person may remember an answer on this hook input as,
/// narrowest first, each in its `session` and `always` forms and for
/// `allow` and `deny`: Claude Code's own `permission_suggestions` (its
/// `addRules` entries) first, then the narrowest sensible rule for the
/// input (a command prefix, the file's directory, the URL's domain, the
/// exact MCP tool). A rule that matches every shell command
/// ([`matches_every_command`]: Claude Code suggests the whole `Bash` tool
/// for some commands) comes after all others, marked `every_command`.
/// Rules hookd cannot read are left out. Empty for an input without a tool.
pub fn suggestions(input: &Value) -> Vec<Suggestion> {
    let mut rules: Vec<(Option<Verdict>, String)> = crate::agent::claude::suggested_rules(input)
        .into_iter()
        .map(|(verdict, rule)| (Some(verdict), rule))
        .collect();
    if let Some(rule) = narrowest_rule(InputFields::of(input)) {
        rules.push((None, rule));
    }
    // Stable: the narrow ones keep their order, the whole shell goes last.
    rules.sort_by_key(|(_, rule)| matches_every_command(rule));
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for (only, rule) in rules {
        if !seen.insert(rule.clone()) || compile(&rule, Verdict::Allow, "check").is_err() {
            continue;
        }
        for remember in [Remember::Session, Remember::Always] {
            for verdict in [Verdict::Allow, Verdict::Deny] {
                if only.is_none_or(|v| v == verdict) {
                    out.push(Suggestion {
                        remember,
                        verdict,
                        rule: rule.clone(),
                        every_command: matches_every_command(&rule),
                        note: None,
                    });
                }
            }
        }
    }
    out
}

/// The first suggestion for `remember` and `verdict`, the default rule of
/// a `decide` that names none. Never one that matches every shell command:
/// that is remembered only when a `decide` names it.
pub fn default_rule(
    suggestions: &[Suggestion],
    remember: Remember,
    verdict: Verdict,
) -> Option<&str> {
    suggestions
        .iter()
        .find(|s| s.remember == remember && s.verdict == verdict && !s.every_command)
        .map(|s| s.rule.as_str())
}

/// Whether `rule` matches every shell command: the `Bash` tool as a whole
/// (`Bash`, `Bash()`, `Bash(*)`, `Bash(:*)`). The agents' shell tools are
/// judged as `Bash`, so this covers theirs too. Remembered as an allow,
/// such a rule lets `curl … | sh` through, whatever was shown.
pub fn matches_every_command(rule: &str) -> bool {
    let Some(rest) = rule.trim().strip_prefix("Bash") else {
        return false;
    };
    let rest = rest.trim();
    if rest.is_empty() {
        return true;
    }
    rest.strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .is_some_and(|content| matches!(content.trim(), "" | "*" | ":*" | "**" | "* *"))
}

/// Why remembering `remembered` would not change the rules' answer to an
/// event they answer `rules_say` by `rule_ids` (deny beats ask beats allow,
/// so an `allow` rule appended to the user rules loses to an `ask`), or
/// `None` when it would. The one text the approver, line mode, the phone
/// page (before) and `decide`'s reply (after) show.
pub fn outvoted(rules_say: Verdict, rule_ids: &[String], remembered: Verdict) -> Option<String> {
    if rules_say == remembered {
        return None;
    }
    let one = rule_ids.len() == 1;
    Some(format!(
        "the rules still {} this event: {} {} ({rules_say} beats {remembered}); narrow or remove {} to stop being asked",
        match rules_say {
            Verdict::Ask => "ask about",
            Verdict::Deny => "deny",
            _ => "do not decide",
        },
        if one { "rule" } else { "rules" },
        rule_ids.join(", "),
        if one { "it" } else { "them" },
    ))
}

/// Why a session grant of `allow` would not answer an event an enforced
/// policy source (`source`) asks about: a grant never loosens it.
pub fn held_by_policy(source: &str, rule_ids: &[String]) -> String {
    format!(
        "the enforced policy {source} asks about this event ({}); a session grant does not loosen it, so the next one asks again",
        rule_ids.join(", ")
    )
}

/// The id of a rule in the user rules file's `text` that `remember:
/// "always"` appended before for `rule` with `verdict` (the block
/// [`append_rule`] writes), if there is one: the same remember again
/// appends nothing.
pub fn remembered_already(text: &str, rule: &str, verdict: Verdict) -> Option<String> {
    let block = format!(
        "\naction = \"{}\"\ntool = {}\n",
        verdict.as_str(),
        toml_string(rule)
    );
    let mut from = 0;
    while let Some(at) = text[from..].find(&block).map(|i| from + i) {
        let before = &text[..at];
        let line = before.rsplit('\n').next().unwrap_or(before);
        if let Some(id) = line
            .strip_prefix("id = \"")
            .and_then(|id| id.strip_suffix('"'))
        {
            return Some(id.to_string());
        }
        from = at + 1;
    }
    None
}

/// The narrowest sensible rule for a tool call: `Bash(npm test:*)`, the
/// file's directory (`Edit(//repo/src/**)`), `WebFetch(domain:docs.rs)`,
/// the exact MCP tool, or the tool's name.
pub fn narrowest_rule(input: InputFields<'_>) -> Option<String> {
    let tool = input.tool_name?;
    let tool_input = input.tool_input.unwrap_or(&Value::Null);
    let field = |name: &str| tool_input.get(name).and_then(Value::as_str);
    let cwd = input.cwd.map(Path::new);
    Some(match tool {
        "Bash" => format!("Bash({}:*)", command_prefix(field("command")?)?),
        "Edit" | "Write" | "MultiEdit" | "NotebookEdit" => {
            let path = field("file_path").or_else(|| field("notebook_path"))?;
            format!(
                "Edit({}/**)",
                absolute_rule_path(parent(&absolute(path, cwd)))
            )
        }
        "Read" => {
            let path = field("file_path")?;
            format!(
                "Read({}/**)",
                absolute_rule_path(parent(&absolute(path, cwd)))
            )
        }
        "Glob" | "Grep" | "LS" => {
            let dir = match field("path") {
                Some(path) => absolute(path, cwd),
                None => cwd?.to_path_buf(),
            };
            format!("Read({}/**)", absolute_rule_path(&dir))
        }
        "WebFetch" => format!("WebFetch(domain:{})", host(field("url")?)?),
        "Agent" | "Task" => match field("subagent_type") {
            Some(kind) if is_plain(kind) => format!("{tool}({kind})"),
            _ => tool.to_string(),
        },
        _ => tool.to_string(),
    })
}

/// The command's program and, when it reads like a subcommand (`npm
/// test`, `git push`), its first argument: `None` when the command does
/// not start with a plain word.
fn command_prefix(command: &str) -> Option<String> {
    let mut words = command.split_whitespace();
    let program = words.next().filter(|w| is_plain(w))?;
    Some(match words.next() {
        Some(sub)
            if is_plain(sub)
                && !sub.starts_with('-')
                && !sub.contains(['.', '/', '='])
                && sub.bytes().any(|b| b.is_ascii_alphabetic()) =>
        {
            format!("{program} {sub}")
        }
        _ => program.to_string(),
    })
}

/// Letters, digits, `-`, `_`, `.`, `/`, `=`: nothing a shell or the rule
/// syntax reads specially.
fn is_plain(word: &str) -> bool {
    !word.is_empty()
        && word
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=".contains(&b))
}

fn absolute(path: &str, cwd: Option<&Path>) -> PathBuf {
    let path = Path::new(path);
    match cwd {
        Some(cwd) if path.is_relative() => cwd.join(path),
        _ => path.to_path_buf(),
    }
}

fn parent(path: &Path) -> &Path {
    path.parent().unwrap_or(path)
}

/// An absolute path in the rule syntax: `//` starts at the filesystem
/// root (a single `/` is the project root).
fn absolute_rule_path(dir: &Path) -> String {
    let text = dir.display().to_string();
    let trimmed = text.trim_end_matches('/');
    format!("/{trimmed}")
}

fn host(url: &str) -> Option<String> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = host.split(':').next()?.to_ascii_lowercase();
    (!host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-'))
    .then_some(host)
}

/// `rule` as a one-rule [`RuleSet`] deciding `verdict` (id `id`), judging
/// PreToolUse and PermissionRequest like any `tool` rule. The error names
/// what is wrong with the rule.
pub fn compile(rule: &str, verdict: Verdict, id: &str) -> Result<RuleSet, String> {
    let action = match verdict {
        Verdict::Allow => "allow",
        Verdict::Deny => "deny",
        other => {
            return Err(format!(
                "a remembered verdict is allow or deny, not {other}"
            ))
        }
    };
    let text = format!(
        "[[rule]]\nid = {}\naction = \"{action}\"\ntool = {}\n",
        toml_string(id),
        toml_string(rule)
    );
    let origin = Path::new("<grant>");
    let set = RuleSet::parse(&text, origin).map_err(|e| rule_error(rule, &e.to_string()))?;
    if let Some(warning) = set.warnings().first() {
        return Err(rule_error(rule, &warning.to_string()));
    }
    Ok(set)
}

fn rule_error(rule: &str, detail: &str) -> String {
    // The diagnostics name our synthetic TOML; keep what they say.
    let detail = detail
        .lines()
        .map(|l| {
            l.trim_start_matches("<grant>")
                .trim_start_matches(|c: char| c == ':' || c == ' ' || c.is_ascii_digit())
        })
        .collect::<Vec<_>>()
        .join("; ");
    format!("`{rule}` is not a permission rule hookd can read: {detail}")
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text` fit for one line of a TOML comment: every control character
/// (a newline would end the comment and start a line of whoever chose the
/// text) and Unicode line or paragraph separator is written as its
/// `\u{…}` escape. Everything else, quotes and `#` included, is kept: in a
/// comment it means nothing.
pub fn comment_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// What `remember: "always"` does to the user rules file's text: one
/// `[[rule]]` appended after everything there (never re-serialized), with
/// a comment saying when and from which event; `id` is unique in the
/// file. Nothing the client chose goes in unescaped: the rule is a TOML
/// string, `by` (its `hello.name`) goes through [`comment_text`], and the
/// new text must hold exactly one rule more than the old. The new text is
/// checked as `hookd rules check` would; the error lists what it found.
pub fn append_rule(
    text: &str,
    origin: &Path,
    rule: &str,
    verdict: Verdict,
    event_id: &uuid::Uuid,
    by: &str,
    now: SystemTime,
) -> Result<String, String> {
    compile(rule, verdict, "check")?;
    let action = verdict.as_str();
    let base = format!("remembered-{action}");
    let mut id = base.clone();
    let mut n = 1;
    while text.contains(&format!("id = \"{id}\"")) {
        n += 1;
        id = format!("{base}-{n}");
    }
    let mut out = String::with_capacity(text.len() + 200);
    out.push_str(text);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!(
        "# Added by hookd on {} ({} answered {action} \"always\" for event {event_id}).\n[[rule]]\nid = {}\naction = \"{action}\"\ntool = {}\n",
        crate::time::rfc3339(now),
        comment_text(by),
        toml_string(&id),
        toml_string(rule),
    ));
    let report = check_source(&out, origin, LayerKind::User);
    if !report.is_ok() {
        let errors: Vec<String> = report.errors.iter().map(|e| e.to_string()).collect();
        return Err(format!(
            "the rules file would not pass `hookd rules check` with the rule added: {}",
            errors.join("; ")
        ));
    }
    let before = check_source(text, origin, LayerKind::User).rules;
    if report.rules != before + 1 {
        return Err(format!(
            "appending `{rule}` would change the rules file by {} rules, not one; nothing was written",
            report.rules as i64 - before as i64
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules_of(input: Value) -> Vec<String> {
        let mut rules: Vec<String> = Vec::new();
        for s in suggestions(&input) {
            if !rules.contains(&s.rule) {
                rules.push(s.rule);
            }
        }
        rules
    }

    #[test]
    fn the_narrowest_sensible_rule_per_tool() {
        let call = |tool: &str, input: Value| {
            let input = json!({"tool_name": tool, "tool_input": input, "cwd": "/repo"});
            narrowest_rule(InputFields::of(&input))
        };
        let bash = |c: &str| call("Bash", json!({ "command": c }));
        assert_eq!(bash("npm test").as_deref(), Some("Bash(npm test:*)"));
        assert_eq!(
            bash("git push origin main").as_deref(),
            Some("Bash(git push:*)")
        );
        assert_eq!(bash("ls -la /tmp").as_deref(), Some("Bash(ls:*)"));
        assert_eq!(bash("cat ./x.txt").as_deref(), Some("Bash(cat:*)"));
        assert_eq!(bash("$(evil) x"), None);
        assert_eq!(
            call("Edit", json!({"file_path": "/repo/src/main.rs"})).as_deref(),
            Some("Edit(//repo/src/**)")
        );
        assert_eq!(
            call("Write", json!({"file_path": "notes/a.md"})).as_deref(),
            Some("Edit(//repo/notes/**)")
        );
        assert_eq!(
            call("Read", json!({"file_path": "/etc/hosts"})).as_deref(),
            Some("Read(//etc/**)")
        );
        assert_eq!(
            call("Grep", json!({"pattern": "x"})).as_deref(),
            Some("Read(//repo/**)")
        );
        assert_eq!(
            call("WebFetch", json!({"url": "https://Docs.rs:443/x?y"})).as_deref(),
            Some("WebFetch(domain:docs.rs)")
        );
        assert_eq!(
            call("mcp__github__create_issue", json!({})).as_deref(),
            Some("mcp__github__create_issue")
        );
    }

    #[test]
    fn claude_codes_suggestions_come_first_in_both_forms() {
        let input = json!({
            "hook_event_name": "PermissionRequest",
            "tool_name": "Bash",
            "tool_input": {"command": "echo hello > out.txt"},
            "permission_suggestions": [
                {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "echo hello *"}],
                 "behavior": "allow", "destination": "localSettings"},
                {"type": "addDirectories", "directories": ["/x"], "destination": "session"},
            ],
        });
        assert_eq!(
            rules_of(input.clone()),
            ["Bash(echo hello *)", "Bash(echo hello:*)"]
        );
        let all = suggestions(&input);
        assert_eq!(
            default_rule(&all, Remember::Session, Verdict::Allow),
            Some("Bash(echo hello *)")
        );
        // Claude Code suggested an allow: the deny form is hookd's own.
        assert_eq!(
            default_rule(&all, Remember::Always, Verdict::Deny),
            Some("Bash(echo hello:*)")
        );
        assert!(rules_of(json!({"hook_event_name": "Stop"})).is_empty());
    }

    #[test]
    fn a_compiled_grant_judges_like_a_rule() {
        use crate::rules::{Action, Query};
        let set = compile("Bash(npm test:*)", Verdict::Allow, "g1").unwrap();
        let judge = |command: &str| {
            let input = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                "tool_input": {"command": command}});
            set.evaluate(&Query::new(&input)).action
        };
        assert_eq!(judge("npm test -- --watch"), Some(Action::Allow));
        assert_eq!(
            judge("npm test && rm -rf x"),
            None,
            "every command must match"
        );
        assert_eq!(judge("npm publish"), None);
        let e = compile("Bash(unclosed", Verdict::Allow, "g").unwrap_err();
        assert!(e.contains("Bash(unclosed"), "{e}");
        assert!(compile("Frobnicate", Verdict::Allow, "g").is_err());
        assert!(compile("Bash", Verdict::Ask, "g").is_err());
    }

    #[test]
    fn always_appends_text_and_keeps_what_was_there() {
        let before = "# mine\n[[rule]]\nid = \"x\"\naction = \"deny\"\ntool = \"Bash(rm:*)\"";
        let id = uuid::Uuid::nil();
        let after = append_rule(
            before,
            Path::new("rules.toml"),
            "Bash(npm \"test\":*)",
            Verdict::Allow,
            &id,
            "approve",
            SystemTime::UNIX_EPOCH,
        )
        .unwrap();
        assert!(after.starts_with(before), "{after}");
        assert!(after.contains("# Added by hookd on 1970-01-01T00:00:00.000000Z (approve answered allow \"always\" for event 00000000-0000-0000-0000-000000000000).\n"), "{after}");
        assert!(after.contains("id = \"remembered-allow\""));
        assert!(
            after.contains(r#"tool = "Bash(npm \"test\":*)""#),
            "{after}"
        );
        let again = append_rule(
            &after,
            Path::new("rules.toml"),
            "WebFetch(domain:docs.rs)",
            Verdict::Allow,
            &id,
            "approve",
            SystemTime::UNIX_EPOCH,
        )
        .unwrap();
        assert!(again.contains("id = \"remembered-allow-2\""), "{again}");
        assert_eq!(RuleSet::parse(&again, Path::new("r")).unwrap().len(), 3);
        // A file that does not check is refused with what is wrong.
        let e = append_rule(
            "[[rule]]\nnope",
            Path::new("rules.toml"),
            "Bash",
            Verdict::Allow,
            &id,
            "a",
            SystemTime::UNIX_EPOCH,
        )
        .unwrap_err();
        assert!(e.contains("rules check"), "{e}");
    }

    #[test]
    fn nothing_a_client_names_becomes_a_line_of_the_rules_file() {
        let id = uuid::Uuid::nil();
        let append = |by: &str| {
            append_rule(
                "",
                Path::new("rules.toml"),
                "Bash(npm test:*)",
                Verdict::Allow,
                &id,
                by,
                SystemTime::UNIX_EPOCH,
            )
        };
        let injected = "x).\n[[rule]]\nid = \"evil\"\naction = \"allow\"\ntool = \"Bash\"\r\n# (";
        let text = append(injected).unwrap();
        assert_eq!(
            RuleSet::parse(&text, Path::new("r")).unwrap().len(),
            1,
            "{text}"
        );
        assert!(!text.contains("\nid = \"evil\""), "{text}");
        assert!(
            text.starts_with("# Added by hookd on 1970-01-01T00:00:00.000000Z (x).\\u{a}[[rule]]\\u{a}id = \"evil\""),
            "{text}"
        );
        assert_eq!(text.lines().count(), 5, "{text}");
        let odd = "Zoë's \"phone\" #2 — 承認\u{2028}";
        let text = append(odd).unwrap();
        assert!(
            text.starts_with("# Added by hookd on 1970-01-01T00:00:00.000000Z (Zoë's \"phone\" #2 — 承認\\u{2028} answered"),
            "{text}"
        );
    }

    #[test]
    fn a_whole_shell_suggestion_goes_last_and_is_never_a_default() {
        for broad in ["Bash", "Bash()", "Bash(*)", "Bash(:*)", " Bash ( * ) "] {
            assert!(matches_every_command(broad), "{broad}");
        }
        for narrow in [
            "Bash(npm test:*)",
            "Bash(curl *)",
            "BashOutput",
            "Edit",
            "Read(**)",
        ] {
            assert!(!matches_every_command(narrow), "{narrow}");
        }
        let input = |command: &str| {
            json!({
                "hook_event_name": "PermissionRequest", "tool_name": "Bash",
                "tool_input": {"command": command},
                "permission_suggestions": [{"type": "addRules", "rules": [{"toolName": "Bash"}],
                    "behavior": "allow", "destination": "localSettings"}],
            })
        };
        let all = suggestions(&input("npm test"));
        assert_eq!(rules_of(input("npm test")), ["Bash(npm test:*)", "Bash"]);
        assert!(all.iter().all(|s| s.every_command == (s.rule == "Bash")));
        for remember in [Remember::Session, Remember::Always] {
            assert_eq!(
                default_rule(&all, remember, Verdict::Allow),
                Some("Bash(npm test:*)")
            );
        }
        // No narrower rule: none by default, though `Bash` is suggested.
        let only = suggestions(&input("$(curl x) | sh"));
        assert_eq!(rules_of(input("$(curl x) | sh")), ["Bash"]);
        assert_eq!(default_rule(&only, Remember::Session, Verdict::Allow), None);
    }

    #[test]
    fn an_allow_that_an_ask_outvotes_is_said_and_an_identical_remember_is_found() {
        let ids = ["ask-npm".to_string()];
        assert_eq!(
            outvoted(Verdict::Ask, &ids, Verdict::Allow).as_deref(),
            Some("the rules still ask about this event: rule ask-npm (ask beats allow); narrow or remove it to stop being asked")
        );
        assert_eq!(outvoted(Verdict::Allow, &ids, Verdict::Allow), None);
        let text = append_rule(
            "",
            Path::new("rules.toml"),
            "Bash(npm \"test\":*)",
            Verdict::Allow,
            &uuid::Uuid::nil(),
            "approve",
            SystemTime::UNIX_EPOCH,
        )
        .unwrap();
        assert_eq!(
            remembered_already(&text, "Bash(npm \"test\":*)", Verdict::Allow).as_deref(),
            Some("remembered-allow")
        );
        assert_eq!(
            remembered_already(&text, "Bash(npm \"test\":*)", Verdict::Deny),
            None
        );
        assert_eq!(
            remembered_already(&text, "Bash(npm:*)", Verdict::Allow),
            None
        );
    }
}
