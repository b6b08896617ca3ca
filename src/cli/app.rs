//! The command line: the top-level [`Cli`] (its global flags), the
//! [`Command`] enum with one variant per verb module, and [`main`], which
//! parses, sets up logging and colour, runs the verb and maps its outcome
//! to the exit code. A verb's arguments and body are its own module's.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use super::output::ColorWhen;
use super::{
    abort, adapter, approve, completions, decide, doctor, explain, grants, http, install, log, man,
    pending, replay, rules, run, serve, service, status, statusline, steer, tail, team, uninstall,
    Outcome,
};

#[derive(Parser)]
#[command(
    name = "hookd",
    version,
    about = "Out-of-process hook daemon for coding agents: Claude Code, the Claude Agent SDK, \
             Codex CLI and Gemini CLI",
    after_help = "Exit status: 0 ok; 1 problems found (rules check, rules test, doctor, \
                  replay with changed decisions); 2 usage or operational error (bad \
                  flag, daemon unreachable, file unreadable)."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to colour human output [default: auto: when stdout is a
    /// terminal and NO_COLOR is unset].
    #[arg(long, value_enum, value_name = "WHEN", global = true, default_value_t = ColorWhen::Auto, hide_default_value = true)]
    color: ColorWhen,
    /// Log less on stderr (-q: warnings and errors, -qq: errors only).
    #[arg(short, long, action = clap::ArgAction::Count, global = true, conflicts_with = "verbose")]
    quiet: u8,
    /// Log more on stderr (-v: debug, -vv: trace). RUST_LOG, when set,
    /// takes precedence (e.g. RUST_LOG=hookd=debug).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
}

impl Cli {
    /// The tracing filter: RUST_LOG when set (not empty), else the level
    /// -q/-v ask for (info by default).
    fn log_filter(&self) -> tracing_subscriber::EnvFilter {
        let level = match (self.quiet, self.verbose) {
            (0, 0) => "info",
            (1, _) => "warn",
            (q, _) if q >= 2 => "error",
            (_, 1) => "debug",
            _ => "trace",
        };
        // An empty RUST_LOG counts as unset, as the flags' default.
        match std::env::var("RUST_LOG") {
            Ok(directives) if !directives.trim().is_empty() => {
                tracing_subscriber::EnvFilter::new(directives)
            }
            _ => tracing_subscriber::EnvFilter::new(level),
        }
    }
}

/// Every verb: one module of `src/cli/` each, holding its arguments and
/// its body.
#[derive(Subcommand)]
pub enum Command {
    /// Run the daemon in the foreground.
    Serve(serve::Args),
    /// Print the event log (works without a daemon); --follow to keep reading.
    Tail(tail::TailArgs),
    /// List the decision points waiting for a client's decision.
    Pending(pending::Args),
    /// Decide a pending event.
    Decide(decide::Args),
    /// List the session grants (answers remembered for a session), or revoke one.
    Grants(grants::Args),
    /// Send a follow-up user message into a running agent-SDK run.
    Steer(steer::Args),
    /// Abort a run (gracefully, then by force), or with --compaction only
    /// stop the context compaction it is running.
    Abort(abort::Args),
    /// Print one status line (daemon up/down, pending asks, the last
    /// decision) for Claude Code's statusLine setting; never waits more
    /// than 50 ms for the daemon.
    Statusline(statusline::Args),
    /// Watch every event and answer the decisions waiting for a person, in a
    /// full-screen terminal UI (`?` lists the keys).
    Approve(approve::Args),
    /// Validate, explain and test rules.
    #[command(subcommand)]
    Rules(rules::Command),
    /// Re-judge every recorded decision point of an event log under other
    /// rules and report the decisions that would change.
    Replay(replay::Args),
    /// Explain a logged decision from the log alone: its event, verdict,
    /// who decided (source, layer), the rules with file:line and reason,
    /// the policy revision and whether the rules now still have it.
    Explain(explain::Args),
    /// The event log.
    #[command(subcommand)]
    Log(log::Command),
    /// Show the daemon's version, uptime, rules generation and counters.
    Status(status::Args),
    /// Register hook-forwarder in an agent's settings file (Claude Code's,
    /// Codex's or Gemini's; merged into what is there; idempotent; a backup
    /// of the previous file is kept).
    Install(install::InstallArgs),
    /// Remove exactly the entries `hookd install` wrote from a settings file.
    Uninstall(uninstall::Args),
    /// Check the setup: forwarder, socket, daemon, settings files, rules, log,
    /// and whether hooks really fire. Exits non-zero if anything is wrong.
    Doctor(doctor::Args),
    /// Run hookd as a systemd user service.
    #[command(subcommand)]
    Service(service::Command),
    /// Run a Claude Agent SDK session through the daemon, under its rules,
    /// and stream it here. Exit 0 on success; Ctrl-C aborts the run.
    Run(run::Args),
    /// Print a shell completion script (see docs/cli.md for where each
    /// shell looks for it).
    Completions(completions::Args),
    /// Print hookd's man page, or write one page per command into a
    /// directory (hookd.1, hookd-install.1, hookd-rules-check.1, …).
    Man(man::Args),
    /// The agent-SDK adapter `hookd run` needs (embedded in hookd; installed
    /// with its pinned Agent SDK into $XDG_DATA_HOME/hookd/adapter/).
    #[command(subcommand)]
    Adapter(adapter::Command),
    /// The HTTP listener (`[http]` in config.toml): its bearer token.
    #[command(subcommand)]
    Http(http::Command),
    /// The team plane (`[team]` in config.toml): its PostgreSQL database.
    #[command(subcommand)]
    Team(team::Command),
}

/// The clap command of `hookd`, for the completions and the man pages.
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// `hookd`: parses the command line, runs the verb, and returns the exit
/// code ([`super::exit_code`]).
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(cli.log_filter())
        .with_writer(std::io::stderr)
        .with_ansi(
            cli.color != ColorWhen::Never
                && anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never,
        )
        .init();
    super::output::set_color(cli.color);
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Tail(args) => tail::run(args).map(Outcome::from),
        Command::Pending(args) => pending::run(args),
        Command::Decide(args) => decide::run(args),
        Command::Grants(args) => grants::run(args),
        Command::Steer(args) => steer::run(args),
        Command::Abort(args) => abort::run(args),
        Command::Statusline(args) => statusline::run(args),
        Command::Approve(args) => approve::run(args),
        Command::Rules(command) => rules::run(command),
        Command::Replay(args) => replay::run(args),
        Command::Explain(args) => explain::run(args),
        Command::Log(command) => log::run(command),
        Command::Status(args) => status::run(args),
        Command::Install(args) => install::install(args).map(Outcome::from),
        Command::Uninstall(args) => uninstall::run(args),
        Command::Doctor(args) => doctor::run(args),
        Command::Service(command) => service::run(command),
        Command::Run(args) => run::run(args),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
        Command::Adapter(command) => adapter::run(command),
        Command::Http(command) => http::run(command),
        Command::Team(command) => team::run(command),
    };
    super::exit_code(result)
}
