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
    /// The prompt (none with --replay: the recording's).
    #[arg(required_unless_present = "replay")]
    pub prompt: Option<String>,
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
    /// Print every frame of the run as NDJSON (with --replay: the diff as JSON, a line per recording).
    #[arg(long)]
    pub json: bool,
    /// Record the run as one JSONL session in FILE: its events, hookd's decisions and the model exchanges needed to replay it.
    #[arg(long, value_name = "FILE", conflicts_with = "replay")]
    pub record: Option<PathBuf>,
    /// Run the agent again from a recording (or each *.jsonl of a directory), its model served from it; print the decisions that changed under today's rules (exit 1 if any).
    #[arg(long, value_name = "PATH", conflicts_with_all = ["prompt", "model", "max_turns", "max_budget_usd", "provider", "runtime", "resume", "permission_mode", "allowed_tools", "disallowed_tools"])]
    pub replay: Option<PathBuf>,
    /// The config whose `[redact]` patterns a recording is redacted with (the daemon's, if it was started with --config) [default: $XDG_CONFIG_HOME/hookd/config.toml if it exists].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// `hookd run`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    if let Some(path) = &args.replay {
        return replay(
            &args.client.socket_path(),
            path,
            args.cwd.as_deref(),
            args.config.as_deref(),
            args.json,
        );
    }
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
    let tap = match &args.record {
        Some(_) => Some(crate::run_record::start_recording(args.config.as_deref())?),
        None => None,
    };
    let prompt = args.prompt.unwrap_or_default();
    let run = crate::run_client::RunArgs {
        socket: args.client.socket_path(),
        prompt: prompt.clone(),
        options: options.clone(),
        provider: args.provider.clone(),
        runtime: args.runtime.clone(),
        json: args.json,
        tap: tap.clone(),
    };
    let code = crate::run_client::run(run, &mut Stdout);
    if let (Some(tap), Some(path)) = (tap, &args.record) {
        crate::run_record::write_recording(
            tap,
            path,
            &prompt,
            &options,
            args.provider.as_deref(),
            args.runtime.as_deref(),
        )?;
        eprintln!("hookd run: recorded in {}", path.display());
    }
    code.map(Outcome::Code)
}

/// `hookd run --replay PATH`: each recording replayed in turn, in `cwd` or
/// a fresh empty directory of its own.
fn replay(
    socket: &std::path::Path,
    path: &std::path::Path,
    cwd: Option<&std::path::Path>,
    config: Option<&std::path::Path>,
    json: bool,
) -> anyhow::Result<Outcome> {
    let mut changed = false;
    for recording in crate::run_record::recordings(path)? {
        let scratch;
        let dir = match cwd {
            Some(dir) => std::path::absolute(dir).context("--cwd")?,
            None => {
                scratch = Scratch::new()?;
                scratch.0.clone()
            }
        };
        let report =
            crate::run_record::replay(&recording, &dir, config, |header, options, tap| {
                let run = crate::run_client::RunArgs {
                    socket: socket.to_path_buf(),
                    prompt: header.prompt.clone(),
                    options,
                    provider: header.provider.clone(),
                    runtime: header.runtime.clone(),
                    json: false,
                    tap: Some(tap),
                };
                crate::run_client::run(run, &mut std::io::sink())
            })?;
        changed |= report.changed();
        let mut out = Stdout;
        if json {
            let mut line = serde_json::to_vec(&report)?;
            line.push(b'\n');
            std::io::Write::write_all(&mut out, &line)?;
        } else {
            crate::run_record::print(&report, &mut out)?;
        }
    }
    Ok(Outcome::Code(u8::from(changed)))
}

/// An empty directory for a replay's session, removed afterwards: the
/// tool calls today's rules allow run for real, there.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> anyhow::Result<Scratch> {
        let base = std::env::temp_dir();
        for n in 0..1000u32 {
            let dir = base.join(format!("hookd-replay-{}-{n}", std::process::id()));
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(Scratch(dir)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e).with_context(|| format!("creating {}", dir.display())),
            }
        }
        anyhow::bail!("no free scratch directory name in {}", base.display())
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
