//! `hookd approve`: the approver, full-screen or line by line (the UI is
//! `crate::approve`'s).

use super::args::ClientArgs;
use super::output::Stdout;
use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Line mode for dumb terminals, ssh and scripts: prints each pending
    /// item and each resolution; reads `y|n|s|a|N ID [reason]` lines on stdin.
    #[arg(long)]
    pub plain: bool,
}

/// `hookd approve [--plain]`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let socket = args.client.socket_path();
    if args.plain {
        crate::approve::plain::run(&socket, &mut Stdout)?;
    } else {
        // --color and NO_COLOR, as for every command's output.
        crate::approve::term::run(&socket, super::output::color_enabled())?;
    }
    Ok(Outcome::Success)
}
