//! `hookd doctor`: the whole setup checked (the checks are
//! `crate::doctor`'s), printed or `--json`; exit 1 when one fails.

use std::io::Write as _;
use std::path::PathBuf;

use super::output::{print_json, Stdout};
use super::Outcome;

pub fn doctor(
    socket: Option<PathBuf>,
    project: Option<PathBuf>,
    probe: bool,
    json: bool,
) -> anyhow::Result<Outcome> {
    let project = std::path::absolute(project.unwrap_or_else(|| ".".into()))?;
    let options = crate::doctor::DoctorOptions {
        probe,
        ..crate::doctor::DoctorOptions::from_env(
            socket.unwrap_or_else(crate::paths::socket_path),
            project,
        )?
    };
    let report = crate::doctor::run(&options);
    if json {
        print_json(&report)?;
    } else {
        write!(Stdout, "{report:#}")?;
    }
    Ok(Outcome::problems_unless(report.ok))
}

#[derive(clap::Args)]
pub struct Args {
    /// Also run every registered hook command as Claude Code would,
    /// with a synthetic event, and check the daemon answered and logged
    /// it and the hook printed exactly what Claude Code honors.
    #[arg(long)]
    pub probe: bool,
    /// Daemon socket [default: $HOOKD_SOCKET, then $XDG_RUNTIME_DIR/hookd/hookd.sock,
    /// then /tmp/hookd-$UID/hookd.sock].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// The project whose .claude/settings*.json are checked [default: the current directory].
    #[arg(long, value_name = "DIR")]
    pub project: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `hookd doctor`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    doctor(args.socket, args.project, args.probe, args.json)
}
