//! The policy store: where the rules come from and how the layers are
//! loaded and composed — the user's file (or the embedded defaults) over
//! `[policy]`'s sources. The daemon's controller reloads through it; the
//! command line and the approver read the same rules through it, without a
//! daemon. Blocking.

use std::path::{Path, PathBuf};

use crate::rules::RuleSet;

/// Where the rules come from.
#[derive(Debug, Clone, PartialEq)]
pub enum RulesSource {
    /// A TOML file (reloaded on SIGHUP).
    File(PathBuf),
    /// The embedded defaults.
    Defaults,
}

/// The fingerprints of every path of `policy`'s sources (blocking).
pub fn policy_fingerprint(
    policy: &super::PolicyConfig,
    state_dir: Option<&std::path::Path>,
) -> Vec<(PathBuf, Fingerprint)> {
    policy
        .watched(state_dir)
        .into_iter()
        .map(|path| {
            let fingerprint = fingerprint(&path);
            (path, fingerprint)
        })
        .collect()
}

/// The rules named by `source`, composed over `policy`'s sources: the set
/// the daemon judges with (its revision covers every layer). Blocking.
pub fn load_composed(
    source: &RulesSource,
    policy: &super::PolicyConfig,
    state_dir: Option<&std::path::Path>,
) -> anyhow::Result<RuleSet> {
    let user = load_rules(source)?;
    if policy.is_empty() {
        return Ok(user);
    }
    let layers = policy.load(state_dir)?;
    for file in layers.iter().flat_map(|l| &l.files) {
        for warning in file.warnings() {
            tracing::warn!("{warning}");
        }
    }
    Ok(user.with_policy(layers))
}

/// Loads the rules named by `source`.
pub fn load_rules(source: &RulesSource) -> anyhow::Result<RuleSet> {
    match source {
        RulesSource::Defaults => Ok(RuleSet::defaults()),
        RulesSource::File(path) => {
            let rules =
                RuleSet::load(path).map_err(|e| anyhow::anyhow!("{}", e.to_string().trim_end()))?;
            for warning in rules.warnings() {
                tracing::warn!("{warning}");
            }
            Ok(rules)
        }
    }
}

/// A file identity: (mtime, mtime ns, size, inode). `None`: no file.
pub type Fingerprint = Option<(i64, i64, u64, u64)>;

/// `path`'s fingerprint (a stat: blocking).
pub fn fingerprint(path: &Path) -> Fingerprint {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path)
        .ok()
        .map(|m| (m.mtime(), m.mtime_nsec(), m.size(), m.ino()))
}
