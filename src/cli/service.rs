//! `hookd service install`: hookd as a systemd user service.

use std::io::Write as _;
use std::path::PathBuf;

use super::output::{print_json, Stdout};

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
