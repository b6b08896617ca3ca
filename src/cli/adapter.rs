//! `hookd adapter install|status`: the agent-SDK adapter `hookd run` needs,
//! embedded in the binary and installed into the data directory.

use std::io::Write as _;
use std::path::PathBuf;

use super::output::{print_json, style, Stdout};
use super::Outcome;
use clap::Subcommand;

/// `hookd adapter install [--dir DIR]`: `npm ci` of the embedded adapter
/// into the data directory (a no-op when this version is there).
pub fn install(dir: Option<PathBuf>, json: bool) -> anyhow::Result<()> {
    let dir = match dir {
        Some(dir) => dir,
        None => crate::adapter::default_dir()?,
    };
    if !json {
        eprintln!(
            "installing the agent-SDK adapter {} into {} (npm ci)",
            crate::adapter::version(),
            dir.display()
        );
    }
    let outcome = crate::adapter::install(&dir)?;
    if json {
        let status = crate::adapter::status(&dir);
        return print_json(&serde_json::json!({ "outcome": outcome, "status": status }));
    }
    if outcome == crate::adapter::Installed::AlreadyInstalled {
        writeln!(Stdout, "{}: already installed", dir.display())?;
    } else {
        writeln!(Stdout, "{}: installed", dir.display())?;
    }
    Ok(())
}

/// `hookd adapter status`. Exits 1 (problems found) when the adapter is not installed or Node is
/// missing.
pub fn status(dir: Option<PathBuf>, json: bool) -> anyhow::Result<Outcome> {
    let dir = match dir {
        Some(dir) => dir,
        None => crate::adapter::default_dir()?,
    };
    let status = crate::adapter::status(&dir);
    if json {
        print_json(&status)?;
    } else {
        let state = match (status.installed, status.embedded) {
            (true, true) => style::paint(style::GOOD, "installed"),
            (true, false) => style::paint(style::NOTICE, "installed, but not this hookd's adapter"),
            (false, _) => style::paint(style::BAD, "not installed: run `hookd adapter install`"),
        };
        writeln!(
            Stdout,
            "adapter {} in {}: {state}",
            status.version,
            dir.display()
        )?;
        match &status.node {
            Some(node) => writeln!(Stdout, "node: {}", node.display())?,
            None => writeln!(Stdout, "node: not on PATH (install Node.js >= 18)")?,
        }
    }
    Ok(Outcome::problems_unless(
        status.installed && status.node.is_some(),
    ))
}

// The doc comments below are clap help text, printed as written:
// brackets and <placeholders> in them are not links or HTML.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(Subcommand)]
pub enum Command {
    /// Install the embedded adapter and its pinned Agent SDK (`npm ci`) into
    /// $XDG_DATA_HOME/hookd/adapter/<version>/; nothing to do when it is there.
    Install {
        /// Install into this directory instead.
        #[arg(long, value_name = "DIR", env = "HOOKD_ADAPTER_DIR")]
        dir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Where the adapter is, and whether it is installed. Exit 1 when not.
    Status {
        /// Look in this directory instead.
        #[arg(long, value_name = "DIR", env = "HOOKD_ADAPTER_DIR")]
        dir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `hookd adapter …`.
pub fn run(command: Command) -> anyhow::Result<Outcome> {
    match command {
        Command::Install { dir, json } => install(dir, json).map(|()| Outcome::Success),
        Command::Status { dir, json } => status(dir, json),
    }
}
