//! `hookd grants`: the session grants, or revoking one.

use clap::Subcommand;

use super::args::ClientArgs;
use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(subcommand)]
    pub action: Option<Command>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Subcommand)]
pub enum Command {
    /// End a grant now.
    Revoke {
        /// The grant's id (from `hookd grants`).
        id: String,
    },
}

/// `hookd grants [revoke ID]`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut connection = args.client.connect()?;
    let revoke = args.action.map(|Command::Revoke { id }| id);
    super::decide::grants(&mut connection, revoke.as_deref(), args.json)?;
    Ok(Outcome::Success)
}
