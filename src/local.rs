//! The rules and the policy this machine's files give, read as the daemon
//! would read them, for the commands that judge without asking a daemon:
//! `hookd rules check|test|explain`, `hookd replay`, the approver's
//! explanations. Blocking.

use std::path::PathBuf;

use crate::config::Config;
use crate::policy::store::{load_composed, RulesSource};
use crate::policy::PolicyConfig;
use crate::rules::RuleSet;

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
