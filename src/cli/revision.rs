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
use crate::rules::{LayerKind, Revision, RuleSet};

/// How long `rules revision` and `rules explain` wait for the running
/// daemon's `status`: a stopped or stuck daemon must not hold them up.
const STATUS_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// What the running daemon enforces, as its `status` says: what the rules
/// a command reads itself are compared with, since the daemon loads them
/// only on SIGHUP or when it sees a file change (and refuses a bad one).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "daemon", rename_all = "snake_case")]
pub enum DaemonRules {
    /// No daemon answers at the socket.
    NotRunning {
        /// The socket asked.
        socket: std::path::PathBuf,
    },
    /// The daemon's rules.
    Running {
        /// Their policy revision (`None` from daemons before revisions).
        revision: Option<Revision>,
        /// Their generation (1 at start, +1 per reload).
        generation: u64,
    },
}

impl DaemonRules {
    /// Asks the daemon at `socket` (default: the one `hookd status`
    /// asks); any failure to get an answer reads as not running.
    pub fn ask(socket: &std::path::Path) -> DaemonRules {
        let status = crate::client::Client::connect_with_timeout(socket, "rules", STATUS_TIMEOUT)
            .and_then(|mut client| client.status());
        match status {
            Ok(status) => DaemonRules::from_status(&status.rules),
            Err(_) => DaemonRules::NotRunning {
                socket: socket.to_path_buf(),
            },
        }
    }

    /// From a `status` reply's `rules`.
    pub fn from_status(rules: &crate::protocol::RulesStatus) -> DaemonRules {
        DaemonRules::Running {
            revision: rules.revision.clone(),
            generation: rules.generation,
        }
    }

    /// The generation rules of `revision` have in the daemon: its own when
    /// it enforces exactly them, else none (rules a command read itself
    /// have no generation of their own).
    pub fn generation_of(&self, revision: &Revision) -> Option<u64> {
        match self {
            DaemonRules::Running {
                revision: Some(running),
                generation,
            } if running == revision => Some(*generation),
            _ => None,
        }
    }

    /// A note for a reader of rules of `revision`, when the daemon does
    /// not enforce them (or is not running); `None` when it does.
    pub fn note(&self, revision: &Revision) -> Option<String> {
        match self {
            DaemonRules::NotRunning { socket } => Some(format!(
                "note: no hookd daemon answers at {}: these rules (revision {revision}) are what it would load at start",
                socket.display()
            )),
            DaemonRules::Running {
                revision: Some(running),
                generation,
            } if running != revision => Some(format!(
                "note: the running daemon enforces revision {running} (generation {generation}); \
                 these rules are revision {revision} — it has not loaded them (it reloads on SIGHUP \
                 or when it sees a file change, and keeps the last good rules when a file has an \
                 error: `hookd status` says why)"
            )),
            DaemonRules::Running {
                revision: None,
                generation,
            } => Some(format!(
                "note: the running daemon (generation {generation}) does not say its revision; \
                 it may not enforce these rules (revision {revision})"
            )),
            DaemonRules::Running { .. } => None,
        }
    }
}

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
