//! `hookd abort`: end a running run, or only stop its context compaction.

use super::args::ClientArgs;
use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The run (from `hookd status`).
    pub run_id: String,
    /// Stop only the context compaction the run is running (Pi's
    /// abortCompaction()); the run goes on. The Claude Agent SDK has no such
    /// call: its adapter logs that and does nothing.
    #[arg(long)]
    pub compaction: bool,
}

/// `hookd abort`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut connection = args.client.connect()?;
    connection.abort(&args.run_id, args.compaction)?;
    Ok(Outcome::Success)
}
