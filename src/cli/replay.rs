//! `hookd replay LOG`: the decisions of a log re-judged under other rules
//! (the work is [`crate::replay`]'s; this prints it).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::output::{print_json, Stdout};
use super::Outcome;
use crate::daemon::RulesSource;

use super::args::rules_source;

/// Exits 1 when a decision would change, as `diff` does: a check that new
/// rules leave the past alone can gate on it.
pub fn replay(log: &Path, rules: RulesSource, json: bool) -> anyhow::Result<Outcome> {
    let rules = Arc::new(crate::local::composed_for_cli(&rules)?);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let report = crate::replay::replay(log, rules, home.as_deref())?;
    if json {
        print_json(&report)?;
    } else {
        write!(Stdout, "{report}")?;
    }
    Ok(Outcome::problems_unless(report.changes.is_empty()))
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
}

/// `hookd replay`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    replay(&args.log, rules_source(args.rules), args.json)
}
