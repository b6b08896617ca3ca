//! `hookd uninstall`: removes exactly the entries `hookd install` wrote.

use super::install::SettingsTarget;
use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub target: SettingsTarget,
}

/// `hookd uninstall`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    super::install::uninstall(&args.target)?;
    Ok(Outcome::Success)
}
