//! How `hookd rules check`, `rules test` and `rules explain` read to a
//! person: the rules module returns data ([`CheckReport`],
//! [`FixtureReport`], [`Explanation`], each also `Serialize` for `--json`),
//! and their text form lives here, with the rest of the CLI's output, so the
//! core never decides how a report looks.

use std::fmt;

use crate::rules::{CheckReport, Diagnostic, Explanation, FixtureReport, RuleReport};

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut all: Vec<&Diagnostic> = self
            .errors
            .iter()
            .chain(&self.warnings)
            .chain(&self.notes)
            .collect();
        all.sort_by_key(|d| (d.line, d.column));
        for d in all {
            writeln!(f, "{d}")?;
        }
        let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
        if self.is_ok() {
            write!(
                f,
                "{}: ok, {}, {}",
                self.path.display(),
                plural(self.rules, "rule"),
                plural(self.warnings.len(), "warning")
            )?;
            if !self.notes.is_empty() {
                write!(f, ", {}", plural(self.notes.len(), "note"))?;
            }
            Ok(())
        } else {
            write!(
                f,
                "{}: refused, {}, {}",
                self.path.display(),
                plural(self.errors.len(), "error"),
                plural(self.warnings.len(), "warning")
            )
        }
    }
}

impl fmt::Display for FixtureReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (good, bad) = match f.alternate() {
            true => (
                anstyle::AnsiColor::Green.on_default(),
                anstyle::AnsiColor::Red.on_default().bold(),
            ),
            false => (anstyle::Style::new(), anstyle::Style::new()),
        };
        for r in &self.results {
            if r.passed {
                writeln!(f, "{good}ok{good:#}   {}: {}", r.name, r.detail)?;
            } else {
                writeln!(f, "{bad}FAIL{bad:#} {}: {}", r.name, r.detail)?;
            }
        }
        write!(f, "{} passed, {} failed", self.passed(), self.failed())
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "event: {}",
            if self.event.is_empty() {
                "(none)"
            } else {
                &self.event
            }
        )?;
        if let Some(t) = &self.tool {
            write!(f, ", tool: {t}")?;
        }
        writeln!(f)?;
        if let Some(p) = &self.path {
            writeln!(f, "path: {p}")?;
        }
        if let Some(bytes) = self.command_too_large {
            writeln!(
                f,
                "command: too large to analyse ({bytes} bytes), not split: deny/ask rules that might match it match, allow rules only if they allow all Bash"
            )?;
        } else if !self.commands.is_empty() {
            let note = if self.command_unreadable {
                " (could not be read reliably: deny/ask rules match any piece, allow rules only if they allow all Bash)"
            } else {
                ""
            };
            writeln!(f, "commands{note}:")?;
            for c in &self.commands {
                write!(f, "  [{}] {}", c.index, c.text)?;
                if !c.stripped.is_empty() {
                    write!(f, "   (also read as: {})", c.stripped.join(" | "))?;
                }
                writeln!(f)?;
            }
        }
        let ev = &self.evaluation;
        match ev.action {
            Some(a) => writeln!(
                f,
                "verdict: {a} by {} (generation {})",
                ev.rule_ids.join(", "),
                ev.generation
            )?,
            None => writeln!(
                f,
                "verdict: no opinion; no rule decided, so Claude Code's own permission flow continues (generation {})",
                ev.generation
            )?,
        }
        if let Some(r) = &ev.reason {
            writeln!(f, "reason: {r}")?;
        }
        for c in &ev.additional_context {
            writeln!(f, "context: {c}")?;
        }
        if !self.uncovered.is_empty() {
            let list: Vec<String> = self
                .uncovered
                .iter()
                .map(|i| format!("[{i}] `{}`", self.commands[i - 1].text))
                .collect();
            writeln!(
                f,
                "not covered by any allow rule (so no allow): {}",
                list.join(", ")
            )?;
        }
        section(f, "matched", &self.matched)?;
        section(f, "near misses (one check failed)", &self.near_misses)?;
        section(f, "ignored (project layer not trusted)", &self.ignored)?;
        if self.matched.is_empty() && self.near_misses.is_empty() {
            writeln!(f, "\nno rule matched or nearly matched")?;
        }
        Ok(())
    }
}

fn section(f: &mut fmt::Formatter<'_>, title: &str, rules: &[RuleReport]) -> fmt::Result {
    if rules.is_empty() {
        return Ok(());
    }
    writeln!(f, "\n{title}:")?;
    for r in rules {
        writeln!(
            f,
            "  {:<7} {}  ({}, {})",
            r.action.as_str(),
            r.id,
            r.layer,
            r.origin
        )?;
        for c in &r.checks {
            writeln!(
                f,
                "          {} {}",
                if c.ok { "yes" } else { "NO " },
                c.text
            )?;
        }
    }
    Ok(())
}
