//! `hookd`: the daemon and its command line. Flags are parsed here; the work
//! is done by the library.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::builder::TypedValueParser as _;
use clap::{Parser, Subcommand};
use hookd::agent::Agent;
use hookd::cli::args::{fail_closed, log_path, FailScope};
use hookd::cli::install::{InstallArgs, SettingsTarget};
use hookd::cli::output::{ColorWhen, Stdout};
use hookd::cli::tail::TailArgs;
use hookd::cli::{self, Outcome};
use hookd::daemon::{self, RulesSource};
use hookd::decision::Verdict;

// Every command prints through `Stdout` (see `hookd::cli::output`): these
// two macros shadow std's in this file, so no `print!` here can panic on a
// reader that went away, including ones added later; they return the error
// with `?` from the enclosing function, which must return `anyhow::Result`.
macro_rules! println {
    ($($arg:tt)*) => {
        writeln!(Stdout, $($arg)*)?
    };
}
#[allow(unused_macros)] // none here now; one added later is Stdout's
macro_rules! print {
    ($($arg:tt)*) => {
        write!(Stdout, $($arg)*)?
    };
}

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
struct Cli {
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

#[derive(Subcommand)]
enum Command {
    /// Run the daemon in the foreground.
    Serve(ServeArgs),
    /// Print the event log (works without a daemon); --follow to keep reading.
    Tail(TailArgs),
    /// List the decision points waiting for a client's decision.
    Pending {
        #[command(flatten)]
        client: ClientArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Decide a pending event.
    Decide {
        #[command(flatten)]
        client: ClientArgs,
        /// The pending event: its short id or its uuid (from `hookd pending`).
        event_id: hookd::protocol::EventRef,
        /// The verdict.
        #[arg(value_parser = verdict_parser())]
        verdict: Verdict,
        /// Shown to the model (deny) or to the user (ask).
        #[arg(long)]
        reason: Option<String>,
        /// once (this event), session (a grant for the rest of the session)
        /// or always (a rule appended to the user rules file).
        #[arg(long, value_name = "HOW", default_value = "once", value_parser = remember_parser())]
        remember: hookd::protocol::Remember,
        /// The permission rule to remember [default: the event's first suggestion, never one matching every shell command].
        #[arg(long, value_name = "RULE")]
        rule: Option<String>,
        /// With --remember session: the grant ends after this many seconds.
        #[arg(long, value_name = "SECONDS")]
        ttl: Option<u64>,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List the session grants (answers remembered for a session), or revoke one.
    Grants {
        #[command(flatten)]
        client: ClientArgs,
        #[command(subcommand)]
        action: Option<GrantsCommand>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Send a follow-up user message into a running agent-SDK run.
    Steer {
        #[command(flatten)]
        client: ClientArgs,
        /// The run (from `hookd status`).
        run_id: String,
        /// The message.
        text: String,
    },
    /// Print one status line (daemon up/down, pending asks, the last
    /// decision) for Claude Code's statusLine setting; never waits more
    /// than 50 ms for the daemon.
    Statusline {
        /// Daemon socket [default: $HOOKD_SOCKET, then $XDG_RUNTIME_DIR/hookd/hookd.sock,
        /// then /tmp/hookd-$UID/hookd.sock].
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
    },
    /// Watch every event and answer the decisions waiting for a person, in a
    /// full-screen terminal UI (`?` lists the keys).
    Approve {
        #[command(flatten)]
        client: ClientArgs,
        /// Line mode for dumb terminals, ssh and scripts: prints each pending
        /// item and each resolution; reads `y|n|s|a|N ID [reason]` lines on stdin.
        #[arg(long)]
        plain: bool,
    },
    /// Validate, explain and test rules.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Re-judge every recorded decision point of an event log under other
    /// rules and report the decisions that would change.
    Replay {
        /// The event log (JSONL).
        log: PathBuf,
        /// The rules to judge with [default: the daemon's rules file, else the defaults].
        #[arg(long, value_name = "FILE")]
        rules: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Explain a logged decision from the log alone: its event, verdict,
    /// who decided (source, layer), the rules with file:line and reason,
    /// the policy revision and whether the rules now still have it.
    Explain {
        /// The decision's id, or its first characters (an event's id also
        /// finds its decision).
        id: String,
        /// The event log; its rotated files are searched too [default:
        /// $XDG_STATE_HOME/hookd/events.jsonl].
        #[arg(long, value_name = "FILE")]
        log: Option<PathBuf>,
        /// The rules to compare the revision with [default: the daemon's
        /// rules file, else the defaults].
        #[arg(long, value_name = "FILE")]
        rules: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The event log.
    #[command(subcommand)]
    Log(LogCommand),
    /// Show the daemon's version, uptime, rules generation and counters.
    Status {
        #[command(flatten)]
        client: ClientArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Register hook-forwarder in an agent's settings file (Claude Code's,
    /// Codex's or Gemini's; merged into what is there; idempotent; a backup
    /// of the previous file is kept).
    Install(InstallArgs),
    /// Remove exactly the entries `hookd install` wrote from a settings file.
    Uninstall {
        #[command(flatten)]
        target: SettingsTarget,
    },
    /// Check the setup: forwarder, socket, daemon, settings files, rules, log,
    /// and whether hooks really fire. Exits non-zero if anything is wrong.
    Doctor {
        /// Also run every registered hook command as Claude Code would,
        /// with a synthetic event, and check the daemon answered and logged
        /// it and the hook printed exactly what Claude Code honors.
        #[arg(long)]
        probe: bool,
        /// Daemon socket [default: $HOOKD_SOCKET, then $XDG_RUNTIME_DIR/hookd/hookd.sock,
        /// then /tmp/hookd-$UID/hookd.sock].
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// The project whose .claude/settings*.json are checked [default: the current directory].
        #[arg(long, value_name = "DIR")]
        project: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run hookd as a systemd user service.
    #[command(subcommand)]
    Service(ServiceCommand),
    /// Run a Claude Agent SDK session through the daemon, under its rules,
    /// and stream it here. Exit 0 on success; Ctrl-C aborts the run.
    Run(RunArgs),
    /// Print a shell completion script (see docs/cli.md for where each
    /// shell looks for it).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print hookd's man page, or write one page per command into a
    /// directory (hookd.1, hookd-install.1, hookd-rules-check.1, …).
    Man {
        /// Write every page into this directory instead (e.g.
        /// ~/.local/share/man/man1).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// The agent-SDK adapter `hookd run` needs (embedded in hookd; installed
    /// with its pinned Agent SDK into $XDG_DATA_HOME/hookd/adapter/).
    #[command(subcommand)]
    Adapter(AdapterCommand),
    /// The HTTP listener (`[http]` in config.toml): its bearer token.
    #[command(subcommand)]
    Http(HttpCommand),
}

#[derive(Subcommand)]
enum HttpCommand {
    /// Print the bearer token HTTP requests need (`Authorization: Bearer
    /// …`), creating it on first use in a 0600 file (`http-token` beside
    /// config.toml, or `[http] token_file`).
    Token {
        /// Replace it with a new one first; a running daemon takes the new
        /// one from its next request on.
        #[arg(long)]
        rotate: bool,
        /// The configuration file whose `[http] token_file` to use
        /// [default: $XDG_CONFIG_HOME/hookd/config.toml if it exists].
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
        /// Print JSON: {token, file, rotated}.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum AdapterCommand {
    /// Install the embedded adapter and its pinned Agent SDK (`npm ci`) into
    /// $XDG_DATA_HOME/hookd/adapter/<version>/; nothing to do when it is there.
    Install {
        /// Install into this directory instead.
        #[arg(long, value_name = "DIR", env = "HOOKD_ADAPTER_DIR")]
        dir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Where the adapter is, and whether it is installed. Exit 1 when not.
    Status {
        /// Look in this directory instead.
        #[arg(long, value_name = "DIR", env = "HOOKD_ADAPTER_DIR")]
        dir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum GrantsCommand {
    /// End a grant now.
    Revoke {
        /// The grant's id (from `hookd grants`).
        id: String,
    },
}

#[derive(Subcommand)]
enum ServiceCommand {
    /// Write hookd.socket and hookd.service into $XDG_CONFIG_HOME/systemd/user/
    /// (ExecStart = this hookd) and print the systemctl commands to run.
    Install {
        /// The directory holding the hookd to run [default: this hookd's].
        #[arg(long, value_name = "DIR")]
        bin_dir: Option<PathBuf>,
        /// Show what would be written; write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// An agent hookd judges (see [`Agent`]), as `--agent` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AgentName {
    /// Claude Code (and Agent SDK runs).
    ClaudeCode,
    /// OpenAI Codex CLI.
    Codex,
    /// Google Gemini CLI.
    Gemini,
}

impl From<AgentName> for Agent {
    fn from(name: AgentName) -> Agent {
        match name {
            AgentName::ClaudeCode => Agent::ClaudeCode,
            AgentName::Codex => Agent::Codex,
            AgentName::Gemini => Agent::Gemini,
        }
    }
}

#[derive(Parser)]
struct RunArgs {
    #[command(flatten)]
    client: ClientArgs,
    /// The prompt.
    prompt: String,
    /// Model name or alias [default: the provider's, else Claude Code's].
    #[arg(long, value_name = "M")]
    model: Option<String>,
    /// Working directory of the session [default: this one].
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Stop after N model turns.
    #[arg(long, value_name = "N")]
    max_turns: Option<u32>,
    /// Stop once the run has cost this many US dollars.
    #[arg(long, value_name = "USD")]
    max_budget_usd: Option<f64>,
    /// A [providers.NAME] of the daemon's config [default: the daemon's environment].
    #[arg(long, value_name = "P")]
    provider: Option<String>,
    /// Resume this session id.
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
    /// The SDK's permission mode.
    #[arg(long, value_name = "MODE", value_parser = clap::builder::PossibleValuesParser::new(hookd::daemon::runs::PERMISSION_MODES))]
    permission_mode: Option<String>,
    /// Tools allowed without asking (repeatable; permission-rule syntax).
    #[arg(long = "allowed-tool", value_name = "RULE")]
    allowed_tools: Vec<String>,
    /// Tools taken away from the session (repeatable).
    #[arg(long = "disallowed-tool", value_name = "RULE")]
    disallowed_tools: Vec<String>,
    /// Print every frame of the run as NDJSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum LogCommand {
    /// Check the log's hash chain: exit 0 and `✓ N lines, M files` if no
    /// line was changed, removed, inserted or moved; exit 1 naming the
    /// first one that was (file:line).
    Verify {
        /// The log [default: $XDG_STATE_HOME/hookd/events.jsonl]; one path
        /// is that log and its rotated files (<log>.N … <log>.1, <log>),
        /// several are those files, oldest first.
        #[arg(value_name = "LOG")]
        logs: Vec<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum RulesCommand {
    /// Validate a rules file: exit 0, or non-zero listing every error as file:line:column.
    /// Without FILE, also every file of the config's [policy] sources.
    Check {
        /// The file [default: $XDG_CONFIG_HOME/hookd/rules.toml, and the policy sources' files].
        file: Option<PathBuf>,
        /// Check it as a project layer (.claude/hookd.toml).
        #[arg(long)]
        project: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show the verdict for a hook input, every rule that matched and why,
    /// and the rules that nearly matched.
    Explain {
        /// A hook input (JSON), or an event line from the log.
        event: PathBuf,
        /// The agent whose hook input it is [default: an event line's
        /// harness, else claude-code].
        #[arg(long, value_enum, value_name = "AGENT")]
        agent: Option<AgentName>,
        /// The rules [default: the daemon's rules file, else the defaults].
        #[arg(long, value_name = "FILE")]
        rules: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run rule fixtures (NAME.json = {event, home?, project_dir?, expect:
    /// {verdict, rule?}}).
    ///
    /// Each fixture is a file NAME.json: `event` is the hook input as the
    /// agent sends it; `home` (optional) is the home directory `~` stands
    /// for in the rules: without it `~` patterns (`Read(~/.ssh)`) never
    /// match, so fixtures do not depend on the machine; `project_dir`
    /// (optional) is the project root, CLAUDE_PROJECT_DIR [default: the
    /// event's cwd]; `expect.verdict` is allow, deny, ask, context or none;
    /// `expect.rule` (optional) a rule id among the deciding rules, or the
    /// list of them; `description` (optional) is shown when it fails.
    Test {
        /// The fixtures directory.
        dir: PathBuf,
        /// The rules [default: the daemon's rules file, else the defaults].
        #[arg(long, value_name = "FILE")]
        rules: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Print the embedded default rules (used when there is no rules file).
    Defaults,
    /// Print the manifest.toml of a policy bundle: every file of DIR/rules/
    /// with its SHA-256, to sign with `minisign -Sm manifest.toml`.
    Manifest {
        /// The bundle's directory (holding rules/).
        dir: PathBuf,
        /// A name for this version, shown in `hookd status`.
        #[arg(long)]
        revision: Option<String>,
    },
    /// Print the policy revision of a rules file: a hash of its rules, the
    /// same for the same rules on any machine, as `status` shows and every
    /// decision records.
    Revision {
        /// The file [default: the daemon's rules file, else the defaults].
        file: Option<PathBuf>,
        /// Read it as a project layer (.claude/hookd.toml).
        #[arg(long)]
        project: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Parser)]
struct ClientArgs {
    /// Daemon socket [default: $HOOKD_SOCKET, then $XDG_RUNTIME_DIR/hookd/hookd.sock,
    /// then /tmp/hookd-$UID/hookd.sock].
    #[arg(long, value_name = "PATH", global = true)]
    socket: Option<PathBuf>,
}

impl ClientArgs {
    fn connect(&self) -> anyhow::Result<hookd::client::Client> {
        let socket = self
            .socket
            .clone()
            .unwrap_or_else(hookd::paths::socket_path);
        Ok(hookd::client::Client::connect(&socket, "hookd-cli")?)
    }
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
    /// When nobody can decide in time, block instead of answering no
    /// opinion: tool calls (PreToolUse, PermissionRequest, the SDK's
    /// canUseTool; bare --fail-closed), or every guarded event, prompts
    /// included (=all). A hook's own --fail-closed may widen it.
    #[arg(long, value_name = "SCOPE", num_args = 0..=1, require_equals = true, default_missing_value = "tools")]
    fail_closed: Option<FailScope>,
    /// Evaluate rules and log the would-be decisions, but answer no opinion.
    #[arg(long)]
    permissive: bool,
    /// Daemon configuration (pending timeouts, log rotation, redaction),
    /// read again on SIGHUP and when it changes
    /// [default: $XDG_CONFIG_HOME/hookd/config.toml if it exists].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Serve HTTP on this address (`[http] listen`, which it overrides):
    /// approval links, the approval page, the authenticated routes.
    #[arg(long, value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// Largest frame accepted, in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = hookd::protocol::DEFAULT_MAX_FRAME)]
    max_frame_bytes: usize,
    /// Where session grants are kept [default: grants.json beside the event log].
    #[arg(long, value_name = "FILE")]
    grants: Option<PathBuf>,
    /// The agent-SDK adapter: the directory holding adapter.mjs and its
    /// node_modules [default: the embedded adapter, as `hookd adapter
    /// install` installs it in $XDG_DATA_HOME/hookd/adapter/<version>/].
    #[arg(long, value_name = "DIR", env = "HOOKD_ADAPTER_DIR")]
    adapter_dir: Option<PathBuf>,
    /// How changes to the rules files are seen: the kernel's notifications
    /// (falling back to polling where they cannot be had), or a look every
    /// second, for file systems whose changes the kernel does not report
    /// (NFS, some FUSE mounts).
    #[arg(long, value_name = "HOW", value_enum, env = "HOOKD_WATCH", default_value_t = WatchArg::Kernel)]
    watch: WatchArg,
}

/// `hookd serve --watch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum WatchArg {
    Kernel,
    Poll,
}

/// With the `mimalloc` feature, mimalloc is the daemon's allocator: faster
/// under heavy load, for more idle memory (docs/performance.md: the
/// system's allocator is the default because it keeps an idle daemon
/// small). The forwarder always keeps the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `pow`, the one function of the C maths library this binary calls (from
/// tokio's multi-threaded scheduler: `f64::powf` in the moving average of
/// its tasks' poll times), defined here so that `libm.so` is not loaded at
/// all: 0.5 MiB of it was resident in an idle daemon for that one function
/// (idle RSS 9.5–9.7 against 9.7–10.0 MiB, and `hookd --version` starts in
/// 1.50 against 1.59–1.81 ms). The `libm` crate's is musl's (FreeBSD's)
/// `pow`, correct to within an ulp. Only where the C library is glibc,
/// whose `libm.so` is separate from `libc.so`; `tests/cli/cli.rs` checks that
/// the daemon does not map it.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[no_mangle]
pub extern "C" fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(cli.log_filter())
        .with_writer(std::io::stderr)
        .with_ansi(
            cli.color != ColorWhen::Never
                && anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never,
        )
        .init();
    hookd::cli::output::set_color(cli.color);
    let result = match cli.command {
        Command::Serve(args) => serve(args).map(Outcome::from),
        Command::Tail(args) => cli::tail::run(args).map(Outcome::from),
        Command::Log(LogCommand::Verify { logs, json }) => {
            let logs = match logs.is_empty() {
                true => log_path(None).map(|log| vec![log]),
                false => Ok(logs),
            };
            logs.and_then(|logs| hookd::cli::log::verify(&logs, json))
        }
        Command::Explain {
            id,
            log,
            rules,
            json,
        } => log_path(log)
            .and_then(|log| hookd::cli::explain::run(&id, &log, &rules_source(rules), json)),
        Command::Pending { client, json } => client
            .connect()
            .and_then(|mut c| hookd::cli::pending::print(&mut c, json))
            .map(Outcome::from),
        Command::Decide {
            client,
            event_id,
            verdict,
            reason,
            remember,
            rule,
            ttl,
            json,
        } => client
            .connect()
            .and_then(|mut c| {
                cli::decide::decide(
                    &mut c,
                    hookd::protocol::Decide {
                        req: String::new(),
                        event_id,
                        answer: hookd::decision::Answer::new(verdict, reason),
                        remember,
                        rule,
                        ttl_s: ttl,
                    },
                    json,
                )
            })
            .map(Outcome::from),
        Command::Grants {
            client,
            action,
            json,
        } => client
            .connect()
            .and_then(|mut c| {
                let revoke = action.map(|GrantsCommand::Revoke { id }| id);
                cli::decide::grants(&mut c, revoke.as_deref(), json)
            })
            .map(Outcome::from),
        Command::Steer {
            client,
            run_id,
            text,
        } => client
            .connect()
            .and_then(|mut c| Ok(c.steer(&run_id, &text)?))
            .map(Outcome::from),
        Command::Statusline { socket } => statusline(socket).map(Outcome::from),
        Command::Status { client, json } => client
            .connect()
            .and_then(|mut c| hookd::cli::status::print(&mut c, json))
            .map(Outcome::from),
        Command::Http(HttpCommand::Token {
            rotate,
            config,
            json,
        }) => hookd::cli::http::token(config.as_deref(), rotate, json).map(Outcome::from),
        Command::Approve { client, plain } => approve(&client, plain).map(Outcome::from),
        Command::Rules(command) => rules(command),
        Command::Replay { log, rules, json } => {
            cli::replay::replay(&log, rules_source(rules), json)
        }
        Command::Install(args) => cli::install::install(args).map(Outcome::from),
        Command::Uninstall { target } => cli::install::uninstall(&target).map(Outcome::from),
        Command::Doctor {
            probe,
            socket,
            project,
            json,
        } => cli::doctor::run(socket, project, probe, json),
        Command::Service(ServiceCommand::Install {
            bin_dir,
            dry_run,
            json,
        }) => cli::service::install(bin_dir, dry_run, json).map(Outcome::from),
        Command::Run(args) => run(args),
        Command::Completions { shell } => {
            cli::docs::completions(shell, <Cli as clap::CommandFactory>::command())
                .map(Outcome::from)
        }
        Command::Man { dir } => {
            cli::docs::man(<Cli as clap::CommandFactory>::command(), dir.as_deref())
                .map(Outcome::from)
        }
        Command::Adapter(AdapterCommand::Install { dir, json }) => {
            cli::adapter::install(dir, json).map(Outcome::from)
        }
        Command::Adapter(AdapterCommand::Status { dir, json }) => cli::adapter::status(dir, json),
    };
    hookd::cli::exit_code(result)
}

fn approve(client: &ClientArgs, plain: bool) -> anyhow::Result<()> {
    let socket = client
        .socket
        .clone()
        .unwrap_or_else(hookd::paths::socket_path);
    if plain {
        return hookd::approve::plain::run(&socket, &mut Stdout);
    }
    // --color and NO_COLOR, as for every command's output.
    hookd::approve::term::run(&socket, hookd::cli::output::color_enabled())
}

fn run(args: RunArgs) -> anyhow::Result<Outcome> {
    let cwd = args
        .cwd
        .map_or_else(std::env::current_dir, std::path::absolute)
        .context("--cwd")?;
    let options = hookd::protocol::RunOptions {
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
    let run = hookd::run_client::RunArgs {
        socket: args.client.socket.unwrap_or_else(hookd::paths::socket_path),
        prompt: args.prompt,
        options,
        provider: args.provider,
        json: args.json,
    };
    hookd::run_client::run(run, &mut Stdout).map(Outcome::Code)
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let rules = rules_source(args.rules);
    let log = log_path(args.log)?;
    // The state directory is the log's (`$XDG_STATE_HOME/hookd/`).
    let grants_file = args.grants.or_else(|| {
        log.parent()
            .map(|dir| dir.join(daemon::grants::GRANTS_FILE))
    });
    // Read again on SIGHUP and when it changes: the default path may be
    // created after start.
    let config_file = match args.config {
        Some(path) => Some(hookd::config::ConfigFile {
            path,
            required: true,
            http_listen: args.http,
        }),
        None => hookd::paths::default_config_path().map(|path| hookd::config::ConfigFile {
            path,
            required: false,
            http_listen: args.http,
        }),
    };
    // Taken before the read: a change made meanwhile is a change.
    let config_seen = config_file
        .as_ref()
        .and_then(|file| daemon::watch::fingerprint(&file.path));
    let config = match &config_file {
        Some(file) => file.read()?,
        None => {
            let mut config = hookd::config::Config::default();
            config.http.listen = args.http;
            config
        }
    };
    daemon::run(
        daemon::ServeOptions {
            socket: args.socket.unwrap_or_else(hookd::paths::socket_path),
            rules,
            log,
            fail_closed: fail_closed(args.fail_closed),
            permissive: args.permissive,
            max_frame: args.max_frame_bytes,
            config,
            config_file,
            config_seen,
            adapter_dir: match args.adapter_dir {
                Some(dir) => dir,
                None => hookd::adapter::default_dir()?,
            },
            grants_file,
            user_rules: hookd::paths::default_rules_path(),
            watch: match args.watch {
                WatchArg::Kernel => hookd::protocol::WatchMode::Kernel,
                WatchArg::Poll => hookd::protocol::WatchMode::Poll,
            },
            clock: Default::default(),
        },
        hookd::serve::faces(),
    )
}

/// A verdict by its wire name (`allow`, …, `none`): clap lists them in
/// help and completions and suggests one for a typo.
fn verdict_parser() -> impl clap::builder::TypedValueParser<Value = Verdict> {
    clap::builder::PossibleValuesParser::new(Verdict::ALL.map(Verdict::as_str))
        .try_map(|text| text.parse::<Verdict>())
}

/// `--remember once|session|always`.
fn remember_parser() -> impl clap::builder::TypedValueParser<Value = hookd::protocol::Remember> {
    clap::builder::PossibleValuesParser::new(["once", "session", "always"]).try_map(|text| {
        serde_json::from_value::<hookd::protocol::Remember>(serde_json::Value::String(text))
    })
}

fn statusline(socket: Option<PathBuf>) -> anyhow::Result<()> {
    let socket = socket.unwrap_or_else(hookd::paths::socket_path);
    let status = hookd::statusline::fetch(&socket, hookd::statusline::BUDGET);
    println!("{}", hookd::statusline::render(status.as_ref()));
    Ok(())
}

/// The rules the daemon would use: `--rules FILE`, else the default path if
/// it exists, else the embedded defaults.
fn rules_source(explicit: Option<PathBuf>) -> RulesSource {
    match explicit {
        Some(path) => RulesSource::File(path),
        None => match hookd::paths::default_rules_path().filter(|p| p.exists()) {
            Some(path) => RulesSource::File(path),
            None => RulesSource::Defaults,
        },
    }
}

fn rules(command: RulesCommand) -> anyhow::Result<Outcome> {
    match command {
        RulesCommand::Defaults => cli::rules::defaults(),
        RulesCommand::Manifest { dir, revision } => cli::rules::manifest(&dir, revision.as_deref()),
        RulesCommand::Revision {
            file,
            project,
            json,
        } => hookd::cli::revision::run(
            &rules_source(file),
            if project {
                hookd::rules::LayerKind::Project
            } else {
                hookd::rules::LayerKind::User
            },
            &hookd::paths::socket_path(),
            json,
        ),
        RulesCommand::Check {
            file,
            project,
            json,
        } => cli::rules::check(file, project, json),
        RulesCommand::Explain {
            event,
            agent,
            rules,
            json,
        } => cli::rules::explain(
            &event,
            agent.map(Agent::from),
            rules_source(rules),
            &hookd::paths::socket_path(),
            json,
        ),
        RulesCommand::Test { dir, rules, json } => {
            cli::rules::test(&dir, rules_source(rules), json)
        }
    }
}
