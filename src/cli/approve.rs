//! `hookd approve`: the approver, full-screen or line by line (the UI is
//! `crate::approve`'s).

use anyhow::Context as _;

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
    /// Add the Team pane (with --plain: the team asks' lines): the team
    /// asks open in the team database (`[team]` of the config file,
    /// connecting as an approver's role), answered with y / n as `hookd
    /// team answer` does.
    #[arg(long)]
    pub team: bool,
    /// The configuration file whose `[team]` `--team` uses
    /// [default: $XDG_CONFIG_HOME/hookd/config.toml].
    #[arg(long, value_name = "PATH", requires = "team")]
    pub config: Option<std::path::PathBuf>,
}

/// `hookd approve [--plain] [--team [--config PATH]]`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let socket = args.client.socket_path();
    let team = if args.team {
        Some(
            super::team::target(args.config.as_deref())
                .context("hookd approve --team reads [team] from config.toml")?,
        )
    } else {
        None
    };
    if args.plain {
        crate::approve::plain::run(&socket, &mut Stdout, team)?;
    } else {
        // --color and NO_COLOR, as for every command's output.
        crate::approve::term::run(&socket, super::output::color_enabled(), team)?;
    }
    Ok(Outcome::Success)
}
