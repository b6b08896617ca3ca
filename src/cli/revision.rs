//! `hookd rules revision [FILE]`: the policy revision of a rules file, as
//! the daemon would stamp its decisions with it (see
//! [`crate::rules::Revision`]).

use std::io::Write as _;

use serde::Serialize;

use super::output::{print_json, Stdout};
use super::Outcome;
use crate::daemon::{load_rules, RulesSource};
use crate::rules::{LayerKind, RuleSet};

/// `--json`'s shape.
#[derive(Debug, Serialize)]
pub struct RevisionReport {
    /// `sha256:` and 32 hex digits.
    pub revision: String,
    /// The rules file, or `defaults`.
    pub source: String,
    /// `user` or `project`.
    pub layer: &'static str,
    /// How many rules.
    pub rules: usize,
}

/// Prints the revision of `source` read as a `kind` layer; a file that
/// cannot be read or has errors is an operational error (exit 2).
pub fn run(source: &RulesSource, kind: LayerKind, json: bool) -> anyhow::Result<Outcome> {
    let rules = match (source, kind) {
        (RulesSource::File(path), LayerKind::Project) => RuleSet::load_project(path)
            .map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))?,
        _ => load_rules(source)?,
    };
    let report = RevisionReport {
        revision: rules.revision().to_string(),
        source: match source {
            RulesSource::File(path) => path.display().to_string(),
            RulesSource::Defaults => "defaults".to_string(),
        },
        layer: kind.label(),
        rules: rules.len(),
    };
    if json {
        print_json(&report)?;
    } else {
        writeln!(Stdout, "{}", report.revision)?;
    }
    Ok(Outcome::Success)
}
