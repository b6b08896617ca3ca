//! The rules and the policy this machine's files give, read as the daemon
//! would read them, for the commands that judge without asking a daemon:
//! `hookd rules check|test|explain`, `hookd replay`, the approver's
//! explanations — and what the running daemon enforces, which they compare
//! those rules with ([`DaemonRules`]). Blocking.

use std::path::PathBuf;

use crate::config::Config;
use crate::policy::store::{load_composed, RulesSource};
use crate::policy::PolicyConfig;
use crate::rules::{Revision, RuleSet};

use serde::Serialize;

/// The rules a `hookd rules …` command (or `replay`) judges with, as the
/// daemon would: `source` composed over the `[policy] sources` of the
/// default config file (`$XDG_CONFIG_HOME/hookd/config.toml`), bundles as
/// activated in the default state directory. Blocking.
pub fn composed_for_cli(source: &RulesSource) -> anyhow::Result<RuleSet> {
    let (policy, state_dir) = config_for_cli()?;
    load_composed(source, &policy, state_dir.as_deref())
}

/// The default config's policy: its sources and the default state
/// directory.
fn config_for_cli() -> anyhow::Result<(PolicyConfig, Option<PathBuf>)> {
    let config = match crate::paths::default_config_path().filter(|p| p.exists()) {
        Some(path) => Config::load(&path)?,
        None => Config::default(),
    };
    let state_dir =
        crate::paths::default_log_path().and_then(|log| log.parent().map(PathBuf::from));
    Ok((config.policy, state_dir))
}

/// Every file of the default config's policy sources, in precedence
/// order (blocking); a source that cannot be listed is an error naming it.
pub fn files_for_cli() -> anyhow::Result<Vec<PathBuf>> {
    let (policy, state_dir) = config_for_cli()?;
    let mut files = Vec::new();
    for source in &policy.sources {
        files.extend(
            source
                .files(state_dir.as_deref())
                .map_err(|e| anyhow::anyhow!("policy source `{}`: {e}", source.name))?,
        );
    }
    Ok(files)
}

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
