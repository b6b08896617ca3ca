//! `hookd doctor`: the whole setup checked (the checks are
//! `crate::doctor`'s), printed or `--json`; exit 1 when one fails.

use std::io::Write as _;
use std::path::PathBuf;

use super::output::{print_json, Stdout};
use super::Outcome;

pub fn run(
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
