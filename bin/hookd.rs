//! `hookd`: the daemon and its command line. Flags are parsed here; the work
//! is done by the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hookd::daemon::{self, RulesSource};

#[derive(Parser)]
#[command(
    name = "hookd",
    version,
    about = "Out-of-process hook daemon for Claude Code and the Claude Agent SDK"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the daemon in the foreground.
    Serve(ServeArgs),
}

#[derive(Parser)]
struct ServeArgs {
    /// Socket path [default: $HOOKD_SOCKET, then $XDG_RUNTIME_DIR/hookd/hookd.sock,
    /// then /tmp/hookd-$UID/hookd.sock].
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Rules file [default: $XDG_CONFIG_HOME/hookd/rules.toml if it exists,
    /// else the embedded defaults].
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// Event log [default: $XDG_STATE_HOME/hookd/events.jsonl].
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// When nobody can decide in time, block guarded events (PreToolUse, …)
    /// instead of answering no opinion.
    #[arg(long)]
    fail_closed: bool,
    /// Evaluate rules and log the would-be decisions, but answer no opinion.
    #[arg(long)]
    permissive: bool,
    /// Largest frame accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = hookd::protocol::DEFAULT_MAX_FRAME)]
    max_frame_bytes: usize,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookd: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let rules = match args.rules {
        Some(path) => RulesSource::File(path),
        None => match hookd::paths::default_rules_path().filter(|p| p.exists()) {
            Some(path) => RulesSource::File(path),
            None => RulesSource::Defaults,
        },
    };
    let log = args
        .log
        .or_else(hookd::paths::default_log_path)
        .ok_or_else(|| {
            anyhow::anyhow!("no --log given and neither XDG_STATE_HOME nor HOME is set")
        })?;
    daemon::run(daemon::Config {
        socket: args.socket.unwrap_or_else(hookd::paths::socket_path),
        rules,
        log,
        fail_closed: args.fail_closed,
        permissive: args.permissive,
        max_frame: args.max_frame_bytes,
    })
}
