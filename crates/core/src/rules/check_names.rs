//! `hookd rules check` against the daemon's config: judge rules naming a
//! provider the config does not define (an error: the judge could never be
//! asked) and `$signal.NAME` conditions with no `[signals.NAME]` (a warning:
//! the signal stays unknown, so its conditions never match).

use super::diag::{Diagnostic, Severity, Sink};
use super::file::suggest;
use super::signal::FIELD_PREFIX;
use std::path::Path;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The problems of rules text `src` (named `origin`) against the names the
/// config defines. Text that does not parse gives nothing here: the rest of
/// `rules check` reports it.
pub fn check_names(
    src: &str,
    origin: &Path,
    providers: &[&str],
    signals: &[&str],
) -> Vec<Diagnostic> {
    let mut sink = Sink::new(src, origin);
    let Ok(doc) = DeTable::parse(src) else {
        return Vec::new();
    };
    let Some(rules) = doc.get_ref().get("rule") else {
        return Vec::new();
    };
    let DeValue::Array(items) = rules.get_ref() else {
        return Vec::new();
    };
    for item in items {
        let DeValue::Table(t) = item.get_ref() else {
            continue;
        };
        let label = match t.get("id").map(|v| v.get_ref()) {
            Some(DeValue::String(s)) => format!("rule {s:?}"),
            _ => "rule".to_string(),
        };
        if let Some(v) = t.get("provider") {
            if let DeValue::String(p) = v.get_ref() {
                if !providers.contains(&p.as_ref()) {
                    let hint = hint(p, providers);
                    let known = if providers.is_empty() {
                        "the config defines no [providers]".to_string()
                    } else {
                        format!("known: {}", providers.join(", "))
                    };
                    sink.error(
                        v.span().start,
                        format!(
                            "{label}: `provider`: no [providers.{p}] in the config ({known}){hint}"
                        ),
                    );
                }
            }
        }
        if let Some(when) = t.get("when") {
            fields(when, &mut |name, at| {
                if !signals.contains(&name) {
                    let hint = hint(name, signals);
                    sink.warn(
                        at,
                        format!("{label}: `{FIELD_PREFIX}{name}`: no [signals.{name}] in the config; the signal stays unknown and this condition never matches{hint}"),
                    );
                }
            });
        }
    }
    let mut out = sink.items;
    out.retain(|d| matches!(d.severity, Severity::Error | Severity::Warning));
    out
}

/// Judge rules of rules text `src` that name no `provider`, when the
/// daemon's config names no default one (`[judge] provider`): an error,
/// their judge could never be asked.
pub fn judges_without_provider(src: &str, origin: &Path) -> Vec<Diagnostic> {
    let mut sink = Sink::new(src, origin);
    let Ok(doc) = DeTable::parse(src) else {
        return Vec::new();
    };
    let Some(DeValue::Array(items)) = doc.get_ref().get("rule").map(|r| r.get_ref()) else {
        return Vec::new();
    };
    for item in items {
        let DeValue::Table(t) = item.get_ref() else {
            continue;
        };
        let is_judge = t
            .get("action")
            .is_some_and(|a| matches!(a.get_ref(), DeValue::String(s) if s == "judge"));
        if !is_judge || t.contains_key("provider") {
            continue;
        }
        let label = match t.get("id").map(|v| v.get_ref()) {
            Some(DeValue::String(s)) => format!("rule {s:?}"),
            _ => "rule".to_string(),
        };
        let at = t
            .get("action")
            .map_or(item.span().start, |a| a.span().start);
        sink.error(
            at,
            format!(
                "{label}: a judge rule with no `provider`, and the config names no default \
                 ([judge] provider): its judge could never be asked; name one in the rule or in \
                 config.toml's [judge]"
            ),
        );
    }
    let mut out = sink.items;
    out.retain(|d| d.severity == Severity::Error);
    out
}

fn hint(name: &str, known: &[&str]) -> String {
    suggest(name, known)
        .map(|m| format!(" (did you mean {m:?}?)"))
        .unwrap_or_default()
}

/// Every `field = "$signal.NAME"` in a `when` value, nested or not.
fn fields(v: &Spanned<DeValue<'_>>, f: &mut dyn FnMut(&str, usize)) {
    match v.get_ref() {
        DeValue::Array(items) => items.iter().for_each(|i| fields(i, f)),
        DeValue::Table(t) => {
            for (k, v) in t.iter() {
                match (k.get_ref().as_ref(), v.get_ref()) {
                    ("field", DeValue::String(s)) => {
                        if let Some(name) = s.strip_prefix(FIELD_PREFIX) {
                            f(name, v.span().start);
                        }
                    }
                    _ => fields(v, f),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"
[[rule]]
id = "j"
action = "judge"
tool = "Bash"
prompt = "Destructive?"
provider = "antrhopic"

[[rule]]
id = "s"
action = "deny"
tool = "Bash"
when = [{ any = [{ field = "$signal.brnach", equals = "main" }] }]
"#;

    #[test]
    fn unknown_provider_is_an_error_and_unknown_signal_a_warning() {
        let d = check_names(SRC, Path::new("r.toml"), &["anthropic"], &["branch"]);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].severity, Severity::Error);
        assert_eq!((d[0].line, d[0].column), (7, 12));
        assert!(
            d[0].message.contains("did you mean \"anthropic\"?"),
            "{}",
            d[0]
        );
        assert_eq!(d[1].severity, Severity::Warning);
        assert_eq!(d[1].line, 13);
        assert!(
            d[1].message.contains("did you mean \"branch\"?"),
            "{}",
            d[1]
        );
        let none = check_names(SRC, Path::new("r.toml"), &["antrhopic"], &["brnach"]);
        assert!(none.is_empty(), "{none:?}");
    }

    #[test]
    fn a_judge_without_a_provider_needs_the_configs_default() {
        let src = "[[rule]]\nid = \"j\"\naction = \"judge\"\nprompt = \"?\"\n\n[[rule]]\nid = \"k\"\naction = \"judge\"\nprompt = \"?\"\nprovider = \"p\"\n";
        let d = judges_without_provider(src, Path::new("r.toml"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!((d[0].line, d[0].column), (3, 10));
        assert!(
            d[0].message
                .starts_with("rule \"j\": a judge rule with no `provider`"),
            "{}",
            d[0]
        );
    }
}
