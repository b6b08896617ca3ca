//! `hookd steer`: a follow-up user message into a running agent-SDK run.

use super::args::ClientArgs;
use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The run (from `hookd status`).
    pub run_id: String,
    /// The message.
    pub text: String,
}

/// `hookd steer`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut connection = args.client.connect()?;
    connection.steer(&args.run_id, &args.text)?;
    Ok(Outcome::Success)
}
