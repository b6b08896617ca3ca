//! `hookd replay LOG`: the decisions of a log re-judged under other rules
//! (the work is [`crate::replay`]'s; this prints it).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::output::{print_json, Stdout};
use super::Outcome;
use crate::daemon::RulesSource;
use crate::rules::signal::Signals;

use super::args::rules_source;

/// Exits 1 when a decision would change, as `diff` does: a check that new
/// rules leave the past alone can gate on it. `rerun_signals`: the config
/// whose `[signals]` run again now, once per signal and project, instead
/// of the values the log recorded.
pub fn replay(
    log: &Path,
    rules: RulesSource,
    json: bool,
    rerun_signals: Option<&Path>,
) -> anyhow::Result<Outcome> {
    let rules = Arc::new(crate::local::composed_for_cli(&rules)?);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let report = match rerun_signals {
        None => crate::replay::replay(log, rules, home.as_deref())?,
        Some(config) => {
            let signals = crate::config::Config::load(config)?.signals;
            let mut values: HashMap<PathBuf, Signals> = HashMap::new();
            let mut rerun = |dir: &Path| -> Signals {
                values
                    .entry(dir.to_path_buf())
                    .or_insert_with(|| run_signals(&signals, dir))
                    .clone()
            };
            crate::replay::replay_with(log, rules, home.as_deref(), Some(&mut rerun))?
        }
    };
    if json {
        print_json(&report)?;
    } else {
        write!(Stdout, "{report}")?;
    }
    Ok(Outcome::problems_unless(report.changes.is_empty()))
}

/// The values of `signals` in `dir`, each run now; one that fails is
/// unknown, and said on stderr once.
fn run_signals(
    signals: &std::collections::BTreeMap<String, crate::daemon::signals::SignalConfig>,
    dir: &Path,
) -> Signals {
    let mut values = Signals::new();
    for (name, signal) in signals {
        match crate::daemon::signals::run_blocking(signal, dir) {
            Ok(value) => values = values.with(name, &value),
            Err(why) => eprintln!(
                "hookd replay: signal {name} in {}: {why} (unknown)",
                dir.display()
            ),
        }
    }
    values
}

#[derive(clap::Args)]
pub struct Args {
    /// The event log (JSONL).
    pub log: PathBuf,
    /// The rules to judge with [default: the daemon's rules file, else the defaults].
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Run the config's `[signals]` again now, in each event's project,
    /// instead of judging with the values the log recorded.
    #[arg(long)]
    pub rerun_signals: bool,
    /// The config.toml whose `[signals]` `--rerun-signals` runs [default:
    /// the daemon's config file].
    #[arg(long, value_name = "FILE", requires = "rerun_signals")]
    pub config: Option<PathBuf>,
}

/// `hookd replay`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let config = match (args.rerun_signals, args.config) {
        (false, _) => None,
        (true, Some(path)) => Some(path),
        (true, None) => Some(crate::paths::default_config_path().ok_or_else(|| {
            anyhow::anyhow!(
                "--rerun-signals: no config file to read ($HOME is unset); give --config FILE"
            )
        })?),
    };
    replay(
        &args.log,
        rules_source(args.rules),
        args.json,
        config.as_deref(),
    )
}
