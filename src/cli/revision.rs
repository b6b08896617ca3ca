//! `hookd rules revision [FILE]`: the policy revision of a rules file, as
//! the daemon would stamp its decisions with it (see
//! [`crate::rules::Revision`]) — and whether the running daemon enforces
//! it ([`DaemonRules`]), which `hookd rules explain` and the approver's
//! explanation say too.

use std::io::Write as _;

use serde::Serialize;

use super::output::{print_json, Stdout};
use super::Outcome;
use crate::daemon::RulesSource;
pub use crate::local::DaemonRules;
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
    /// What the running daemon enforces (for the user layer: a project
    /// layer's revision is not the daemon's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running: Option<DaemonRules>,
    /// Whether the running daemon enforces exactly these rules (`None`
    /// when no daemon answers, or for a project layer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enforced: Option<bool>,
}

/// Prints the revision of `source` read as a `kind` layer; a file that
/// cannot be read or has errors is an operational error (exit 2). For the
/// user layer, a note on stderr when the daemon at `socket` does not
/// enforce it (or is not running), which is not a failure.
pub fn run(
    source: &RulesSource,
    kind: LayerKind,
    socket: &std::path::Path,
    json: bool,
) -> anyhow::Result<Outcome> {
    let rules = match (source, kind) {
        (RulesSource::File(path), LayerKind::Project) => RuleSet::load_project(path)
            .map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))?,
        _ => crate::local::composed_for_cli(source)?,
    };
    let running = (kind != LayerKind::Project).then(|| DaemonRules::ask(socket));
    let report = RevisionReport {
        enforced: match &running {
            Some(running @ DaemonRules::Running { .. }) => {
                Some(running.generation_of(rules.revision()).is_some())
            }
            _ => None,
        },
        running,
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
        // On stderr: `$(hookd rules revision)` stays the revision alone.
        if let Some(note) = report
            .running
            .as_ref()
            .and_then(|r| r.note(rules.revision()))
        {
            eprintln!("{note}");
        }
    }
    Ok(Outcome::Success)
}
