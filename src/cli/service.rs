//! `hookd service install`: hookd as a systemd user service.

use std::io::Write as _;
use std::path::PathBuf;

use super::output::{print_json, Stdout};
use clap::Subcommand;

use super::Outcome;

/// `hookd service install [--bin-dir DIR] [--dry-run]`: the systemd user
/// units written, and the `systemctl --user` commands to run.
pub fn install(bin_dir: Option<PathBuf>, dry_run: bool, json: bool) -> anyhow::Result<()> {
    let hookd = crate::service::hookd_path(bin_dir.as_deref())?;
    let dir = crate::service::unit_dir()?;
    let outcome = crate::service::install(&dir, &hookd, dry_run)?;
    if json {
        return print_json(&outcome);
    }
    for unit in &outcome.units {
        if dry_run && unit.status != "unchanged" {
            writeln!(Stdout, "# {} ({})", unit.path.display(), unit.status)?;
            write!(Stdout, "{}", unit.contents)?;
            writeln!(Stdout)?;
        } else {
            writeln!(Stdout, "{}: {}", unit.path.display(), unit.status)?;
        }
    }
    if dry_run {
        writeln!(Stdout, "dry run: nothing written")?;
    }
    writeln!(
        Stdout,
        "ExecStart runs {}. Now run:",
        outcome.hookd.display()
    )?;
    for command in &outcome.commands {
        writeln!(Stdout, "  {command}")?;
    }
    Ok(())
}

#[derive(Subcommand)]
pub enum Command {
    /// Write hookd.socket and hookd.service into $XDG_CONFIG_HOME/systemd/user/
    /// (ExecStart = this hookd) and print the systemctl commands to run.
    Install {
        /// The directory holding the hookd to run [default: this hookd's].
        #[arg(long, value_name = "DIR")]
        bin_dir: Option<PathBuf>,
        /// Show what would be written; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `hookd service …`.
pub fn run(command: Command) -> anyhow::Result<Outcome> {
    match command {
        Command::Install {
            bin_dir,
            dry_run,
            json,
        } => install(bin_dir, dry_run, json)?,
    }
    Ok(Outcome::Success)
}
