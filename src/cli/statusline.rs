//! `hookd statusline`: one status line for Claude Code's statusLine setting
//! (the fetch and the rendering are `crate::statusline`'s).

use std::io::Write as _;
use std::path::PathBuf;

use super::output::Stdout;
use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    /// Daemon socket [default: $HOOKD_SOCKET, then $XDG_RUNTIME_DIR/hookd/hookd.sock,
    /// then /tmp/hookd-$UID/hookd.sock].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

/// `hookd statusline`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let socket = args.socket.unwrap_or_else(crate::paths::socket_path);
    let status = crate::statusline::fetch(&socket, crate::statusline::BUDGET);
    writeln!(Stdout, "{}", crate::statusline::render(status.as_ref()))?;
    Ok(Outcome::Success)
}
