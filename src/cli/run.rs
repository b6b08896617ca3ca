//! `hookd run`: a Claude Agent SDK or Pi session through the daemon,
//! streamed here (the client is `crate::run_client`'s).

use std::path::PathBuf;

use anyhow::Context;

use super::args::ClientArgs;
use super::output::Stdout;
use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The prompt.
    pub prompt: String,
    /// Model name or alias, or PROVIDER/MODEL for a [providers.PROVIDER] [default: the provider's, else Claude Code's].
    #[arg(long, value_name = "M")]
    pub model: Option<String>,
    /// Working directory of the session [default: this one].
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Stop after N model turns.
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Stop once the run has cost this many US dollars.
    #[arg(long, value_name = "USD")]
    pub max_budget_usd: Option<f64>,
    /// A [providers.NAME] of the daemon's config [default: the daemon's environment].
    #[arg(long, value_name = "P")]
    pub provider: Option<String>,
    /// The runtime that hosts the session [default: the provider's API decides: Anthropic's → claude-sdk, others → pi].
    #[arg(long, value_name = "RUNTIME", value_parser = clap::builder::PossibleValuesParser::new(crate::protocol::adapter::Runtime::ALL.map(|(name, _)| name)))]
    pub runtime: Option<String>,
    /// Resume this session id.
    #[arg(long, value_name = "ID")]
    pub resume: Option<String>,
    /// The SDK's permission mode.
    #[arg(long, value_name = "MODE", value_parser = clap::builder::PossibleValuesParser::new(crate::daemon::runs::PERMISSION_MODES))]
    pub permission_mode: Option<String>,
    /// Tools allowed without asking (repeatable; permission-rule syntax).
    #[arg(long = "allowed-tool", value_name = "RULE")]
    pub allowed_tools: Vec<String>,
    /// Tools taken away from the session (repeatable).
    #[arg(long = "disallowed-tool", value_name = "RULE")]
    pub disallowed_tools: Vec<String>,
    /// Print every frame of the run as NDJSON.
    #[arg(long)]
    pub json: bool,
}

/// `hookd run`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let cwd = args
        .cwd
        .map_or_else(std::env::current_dir, std::path::absolute)
        .context("--cwd")?;
    let options = crate::protocol::RunOptions {
        model: args.model,
        cwd: Some(cwd.display().to_string()),
        max_turns: args.max_turns,
        max_budget_usd: args.max_budget_usd,
        allowed_tools: args.allowed_tools,
        disallowed_tools: args.disallowed_tools,
        permission_mode: args.permission_mode,
        resume: args.resume,
        ..Default::default()
    };
    let run = crate::run_client::RunArgs {
        socket: args.client.socket_path(),
        prompt: args.prompt,
        options,
        provider: args.provider,
        runtime: args.runtime,
        json: args.json,
    };
    crate::run_client::run(run, &mut Stdout).map(Outcome::Code)
}
