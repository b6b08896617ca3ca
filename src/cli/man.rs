//! `hookd man`: the man pages.

use std::path::PathBuf;

use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    /// Write every page into this directory instead (e.g.
    /// ~/.local/share/man/man1).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `hookd man [--dir DIR]`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    super::docs::man(super::app::command(), args.dir.as_deref())?;
    Ok(Outcome::Success)
}
