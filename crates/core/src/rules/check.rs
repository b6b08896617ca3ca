//! `hookd rules check`: validate a rules file and list every problem.

use super::diag::{Diagnostic, Severity};
use super::file::{compile, Layer};
use super::{LayerKind, RulesError};
use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// The result of checking one rules file: every error and warning, in file
/// order. Its text form (one per line, then a summary line) is
/// `crate::cli::rules`'s `Display`.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The file checked.
    pub path: PathBuf,
    /// Number of rules, when the file has no errors.
    pub rules: usize,
    /// Errors: the file would be refused.
    pub errors: Vec<Diagnostic>,
    /// Warnings: the file loads, but something looks wrong.
    pub warnings: Vec<Diagnostic>,
    /// Notes: nothing wrong, but a rule may not do what its reader expects
    /// (a Stop deny rule blocks once per stop chain).
    pub notes: Vec<Diagnostic>,
}

impl CheckReport {
    /// True when the file has no errors (warnings are allowed).
    pub fn is_ok(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Check a user rules file (the kind that may hold `[trust]`).
pub fn check(path: &Path) -> CheckReport {
    check_as(path, LayerKind::User)
}

/// Check a file as the given layer (a project file may not hold `[trust]`).
pub fn check_as(path: &Path, kind: LayerKind) -> CheckReport {
    match std::fs::read_to_string(path) {
        Ok(src) => check_source(&src, path, kind),
        Err(e) => report(path, RulesError::io(path, &e).diagnostics().to_vec(), 0),
    }
}

/// Check rules text; `origin` names it in messages.
pub fn check_source(src: &str, origin: &Path, kind: LayerKind) -> CheckReport {
    let layer = match kind {
        LayerKind::User => Layer::User,
        LayerKind::Project => Layer::Project,
        LayerKind::Policy => Layer::Policy,
    };
    match compile(src, origin, layer) {
        Ok(c) => report(
            origin,
            c.warnings.into_iter().chain(c.notes).collect(),
            c.rules.len(),
        ),
        Err(e) => report(origin, e.diagnostics().to_vec(), 0),
    }
}

fn report(path: &Path, diagnostics: Vec<Diagnostic>, rules: usize) -> CheckReport {
    let mut report = CheckReport {
        path: path.to_path_buf(),
        rules,
        errors: Vec::new(),
        warnings: Vec::new(),
        notes: Vec::new(),
    };
    for d in diagnostics {
        match d.severity {
            Severity::Error => report.errors.push(d),
            Severity::Warning => report.warnings.push(d),
            Severity::Note => report.notes.push(d),
        }
    }
    report
}

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
