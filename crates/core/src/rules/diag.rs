//! Errors and warnings about a rules file, each with a `file:line:column`.

use serde::Serialize;
use std::fmt;
use std::path::{Path, PathBuf};

/// How bad a [`Diagnostic`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The file is refused.
    Error,
    /// The file loads, but something in it is probably not what was meant
    /// (a `tool` that can never match, for example).
    Warning,
    /// Nothing wrong; how a rule behaves may surprise (a Stop deny rule
    /// blocks once per stop chain). Shown by `hookd rules check` only.
    Note,
}

/// One problem in a rules file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file, as given to [`RuleSet::parse`](super::RuleSet::parse) or `load`.
    pub file: PathBuf,
    /// 1-based line; 0 when the problem has no position (an unreadable file).
    pub line: usize,
    /// 1-based column in characters; 0 when `line` is 0.
    pub column: usize,
    /// What is wrong, naming the rule and field.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        let kind = match self.severity {
            Severity::Error => "",
            Severity::Warning => "warning: ",
            Severity::Note => "note: ",
        };
        write!(f, ": {kind}{}", self.message)
    }
}

/// A rules file that was refused: every error found (and any warnings), in
/// file order. `Display` prints one diagnostic per line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RulesError {
    diagnostics: Vec<Diagnostic>,
    not_found: bool,
}

impl RulesError {
    pub(crate) fn new(mut diagnostics: Vec<Diagnostic>) -> RulesError {
        sort(&mut diagnostics);
        RulesError {
            diagnostics,
            not_found: false,
        }
    }

    pub(crate) fn io(path: &Path, err: &std::io::Error) -> RulesError {
        RulesError {
            diagnostics: vec![Diagnostic {
                severity: Severity::Error,
                file: path.to_path_buf(),
                line: 0,
                column: 0,
                message: format!("cannot read rules file: {err}"),
            }],
            not_found: err.kind() == std::io::ErrorKind::NotFound,
        }
    }

    /// All diagnostics, errors and warnings, in file order.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// Only the errors.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
    }

    /// The file does not exist (the daemon then falls back to the defaults).
    pub fn is_not_found(&self) -> bool {
        self.not_found
    }
}

impl fmt::Display for RulesError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for RulesError {}

pub(crate) fn sort(d: &mut [Diagnostic]) {
    d.sort_by_key(|x| (x.line, x.column));
}

/// Collects diagnostics for one source text, turning byte offsets into
/// line and column.
pub(crate) struct Sink<'a> {
    src: &'a str,
    file: &'a Path,
    line_starts: Vec<usize>,
    pub items: Vec<Diagnostic>,
}

impl<'a> Sink<'a> {
    pub fn new(src: &'a str, file: &'a Path) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        Sink {
            src,
            file,
            line_starts,
            items: Vec::new(),
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn locate(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.src.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        let column = self
            .src
            .get(start..offset)
            .map_or(1, |s| s.chars().count() + 1);
        (line, column)
    }

    fn push(&mut self, severity: Severity, offset: usize, message: String) {
        let (line, column) = self.locate(offset);
        self.items.push(Diagnostic {
            severity,
            file: self.file.to_path_buf(),
            line,
            column,
            message,
        });
    }

    pub fn error(&mut self, offset: usize, message: impl Into<String>) {
        self.push(Severity::Error, offset, message.into());
    }

    pub fn warn(&mut self, offset: usize, message: impl Into<String>) {
        self.push(Severity::Warning, offset, message.into());
    }

    pub fn note(&mut self, offset: usize, message: impl Into<String>) {
        self.push(Severity::Note, offset, message.into());
    }

    pub fn has_errors(&self) -> bool {
        self.items.iter().any(|d| d.severity == Severity::Error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_offsets() {
        let p = Path::new("f.toml");
        let s = Sink::new("ab\ncdé\n\nx", p);
        assert_eq!(s.locate(0), (1, 1));
        assert_eq!(s.locate(2), (1, 3));
        assert_eq!(s.locate(3), (2, 1));
        assert_eq!(s.locate(7), (2, 4));
        assert_eq!(s.locate(8), (3, 1));
        assert_eq!(s.locate(9), (4, 1));
        assert_eq!(s.locate(10), (4, 2));
        assert_eq!(s.locate(99), (4, 2));
    }

    #[test]
    fn displays_location() {
        let d = Diagnostic {
            severity: Severity::Warning,
            file: "r.toml".into(),
            line: 3,
            column: 9,
            message: "m".into(),
        };
        assert_eq!(d.to_string(), "r.toml:3:9: warning: m");
    }
}
