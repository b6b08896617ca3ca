//! `hookd`: the daemon and its command line. Flags are parsed here; the work
//! is done by the library.

use std::io::{self, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use hookd::agent::claude::FailClosed;
use hookd::agent::Agent;
use hookd::daemon::{self, RulesSource};
use hookd::decision::Verdict;
use hookd::protocol::log::LogRecord;

// Command output and a reader that goes away (`hookd replay … | head -1`).
//
// Rust ignores SIGPIPE, so a write to a closed pipe fails with EPIPE, and
// std's `print!`/`println!` panic on any write error. The daemon must keep
// ignoring SIGPIPE (it writes to sockets; so do the client commands), so
// instead every command prints through `Stdout`, which tags EPIPE as
// `ReaderGone`, and `main` ends the command quietly (exit 0) on it. These two
// macros shadow std's in this file, so no `print!` here can panic, including
// ones added later; they return the error with `?` from the enclosing
// function, which must return `anyhow::Result`.
macro_rules! println {
    ($($arg:tt)*) => {
        writeln!(Stdout, $($arg)*)?
    };
}
macro_rules! print {
    ($($arg:tt)*) => {
        write!(Stdout, $($arg)*)?
    };
}

/// The process's stdout, for command output: a write the reader is no longer
/// there to take fails with a [`ReaderGone`] error.
struct Stdout;

impl io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        io::stdout().write(buf).map_err(tag_reader_gone)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        io::stdout().lock().write_all(buf).map_err(tag_reader_gone)
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().flush().map_err(tag_reader_gone)
    }
}

/// stdout's reader went away (EPIPE): not a failure of the command.
#[derive(Debug, thiserror::Error)]
#[error("the reader of stdout went away")]
struct ReaderGone;

fn tag_reader_gone(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        io::Error::new(io::ErrorKind::BrokenPipe, ReaderGone)
    } else {
        e
    }
}

/// Whether `e` is, or was caused by, a write to stdout nobody reads any more.
fn is_reader_gone(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
            .is_some_and(|inner| inner.is::<ReaderGone>())
    })
}

/// Whether stdout is a pipe or socket whose reader has gone, without
/// writing to it: what `tail --follow` checks while the log is quiet, so
/// `hookd tail -f | head -1` ends even when nothing more is logged.
fn stdout_reader_gone() -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid, initialised pollfd and a zero timeout; poll only
    // writes `revents`. POLLERR and POLLHUP are reported whatever `events`.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready == 1 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

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
        /// allow, deny, ask, defer or none.
        verdict: Verdict,
        /// Shown to the model (deny) or to the user (ask).
        #[arg(long)]
        reason: Option<String>,
        /// once (this event), session (a grant for the rest of the session)
        /// or always (a rule appended to the user rules file).
        #[arg(long, value_name = "HOW", default_value = "once", value_parser = parse_remember)]
        remember: hookd::protocol::Remember,
        /// The permission rule to remember [default: the event's first suggestion].
        #[arg(long, value_name = "RULE")]
        rule: Option<String>,
        /// With --remember session: the grant ends after this many seconds.
        #[arg(long, value_name = "SECONDS")]
        ttl: Option<u64>,
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
    /// Show the daemon's version, uptime, rules generation and counters.
    Status {
        #[command(flatten)]
        client: ClientArgs,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Register hook-forwarder in a Claude Code settings file (merged into
    /// what is there; idempotent; a backup of the previous file is kept).
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
    /// The agent-SDK adapter `hookd run` needs (embedded in hookd; installed
    /// with its pinned Agent SDK into $XDG_DATA_HOME/hookd/adapter/).
    #[command(subcommand)]
    Adapter(AdapterCommand),
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
    },
}

/// Which settings file, shared by install and uninstall.
#[derive(Parser)]
struct SettingsTarget {
    /// The agent whose hooks file it is: claude-code, codex ($CODEX_HOME/hooks.json,
    /// default ~/.codex/hooks.json; project: <project>/.codex/hooks.json),
    /// gemini (~/.gemini/settings.json; project: <project>/.gemini/settings.json),
    /// or all (every one of them found on PATH).
    #[arg(long, value_enum, value_name = "AGENT", default_value = "claude-code")]
    agent: AgentChoice,
    /// user (~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json),
    /// project (<project>/.claude/settings.json) or local
    /// (<project>/.claude/settings.local.json) [default: user].
    #[arg(long, value_name = "SCOPE", conflicts_with = "settings")]
    scope: Option<hookd::install::Scope>,
    /// This settings file instead of a scope's.
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,
    /// The project for --scope project|local [default: the current directory].
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Print the change as a unified diff; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    json: bool,
}

impl SettingsTarget {
    /// The agents this command applies to, and those `all` skipped because
    /// their command is not on PATH.
    fn agents(&self) -> anyhow::Result<(Vec<Agent>, Vec<Agent>)> {
        match self.agent.one() {
            Some(agent) => Ok((vec![agent], Vec::new())),
            None => {
                if self.settings.is_some() {
                    anyhow::bail!("--agent all writes each agent's own file; --settings names one file: give one --agent");
                }
                Ok(Agent::ALL
                    .into_iter()
                    .partition(|a| on_path(hookd::install::agent_program(*a))))
            }
        }
    }

    fn path(&self, agent: Agent) -> anyhow::Result<PathBuf> {
        if let Some(path) = &self.settings {
            return Ok(std::path::absolute(path)?);
        }
        let project = std::path::absolute(self.project.clone().unwrap_or_else(|| ".".into()))?;
        hookd::install::agent_settings_path(
            agent,
            self.scope.unwrap_or(hookd::install::Scope::User),
            &project,
        )
    }

    fn report(&self, outcome: &hookd::install::Outcome) -> anyhow::Result<()> {
        if self.json {
            println!("{}", serde_json::to_string_pretty(outcome)?);
            return Ok(());
        }
        if self.dry_run {
            print!("{}", outcome.diff);
        }
        println!("{}", outcome.summary());
        Ok(())
    }
}

/// `--agent` of install and uninstall: one agent, or every one found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AgentChoice {
    /// Claude Code (and Agent SDK runs): its settings.json.
    ClaudeCode,
    /// OpenAI Codex CLI: its hooks.json.
    Codex,
    /// Google Gemini CLI: its settings.json.
    Gemini,
    /// Every agent whose command (claude, codex, gemini) is on PATH.
    All,
}

impl AgentChoice {
    fn one(self) -> Option<Agent> {
        match self {
            AgentChoice::ClaudeCode => Some(Agent::ClaudeCode),
            AgentChoice::Codex => Some(Agent::Codex),
            AgentChoice::Gemini => Some(Agent::Gemini),
            AgentChoice::All => None,
        }
    }
}

/// Whether an executable file called `program` is in a `PATH` directory.
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(program))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
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

/// The scope of `--fail-closed[=SCOPE]` (see [`FailClosed`]).
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
enum FailScope {
    /// PreToolUse and PermissionRequest (the SDK's canUseTool).
    Tools,
    /// Every guarded event: tools, prompts (UserPromptSubmit), compaction, …
    All,
}

/// The scope asked for, `Off` without the flag.
fn fail_closed(scope: Option<FailScope>) -> FailClosed {
    match scope {
        None => FailClosed::Off,
        Some(FailScope::Tools) => FailClosed::Tools,
        Some(FailScope::All) => FailClosed::All,
    }
}

#[derive(Parser)]
struct InstallArgs {
    #[command(flatten)]
    target: SettingsTarget,
    /// Events to register, comma-separated, in the agent's own names
    /// [default: Claude Code: every event but WorktreeCreate, whose hook
    /// must create the worktree itself; Codex: every event but Interrupt;
    /// Gemini: every event but BeforeModel, AfterModel and
    /// BeforeToolSelection].
    #[arg(long, value_name = "LIST")]
    events: Option<String>,
    /// When the daemon cannot answer, block instead of no opinion: tool
    /// calls (PreToolUse, PermissionRequest; bare --fail-closed), or every
    /// guarded event, prompts included (=all). Those events get
    /// --fail-closed[=all] and "onFailure":"block".
    #[arg(long, value_name = "SCOPE", num_args = 0..=1, require_equals = true, default_missing_value = "tools")]
    fail_closed: Option<FailScope>,
    /// Print the "hooks" block for a hand-managed settings file; touch no file.
    #[arg(long)]
    print: bool,
    /// The hook-forwarder to register [default: the one next to this hookd].
    #[arg(long, value_name = "PATH")]
    forwarder: Option<PathBuf>,
    /// Also register `hookd statusline` as Claude Code's statusLine (a
    /// statusLine already there is left alone).
    #[arg(long)]
    statusline: bool,
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
    /// default, acceptEdits, bypassPermissions, plan, dontAsk or auto.
    #[arg(long, value_name = "MODE")]
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
enum RulesCommand {
    /// Validate a rules file: exit 0, or non-zero listing every error as file:line:column.
    Check {
        /// The file [default: $XDG_CONFIG_HOME/hookd/rules.toml].
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
    /// Run rule fixtures (NAME.json = {event, expect: {verdict, rule?}}).
    Test {
        /// The fixtures directory.
        dir: PathBuf,
        /// The rules [default: the daemon's rules file, else the defaults].
        #[arg(long, value_name = "FILE")]
        rules: Option<PathBuf>,
    },
    /// Print the embedded default rules (used when there is no rules file).
    Defaults,
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
struct TailArgs {
    /// The log file [default: $XDG_STATE_HOME/hookd/events.jsonl].
    #[arg(long, value_name = "FILE")]
    log: Option<PathBuf>,
    /// Keep reading as the log grows (follows rotation).
    #[arg(short, long)]
    follow: bool,
    /// Print raw JSONL lines.
    #[arg(long)]
    json: bool,
    /// Only this event kind (e.g. PreToolUse).
    #[arg(long, value_name = "K")]
    kind: Option<String>,
    /// Only sessions whose id starts with this.
    #[arg(long, value_name = "S")]
    session: Option<String>,
    /// Only this tool (e.g. Bash).
    #[arg(long, value_name = "T")]
    tool: Option<String>,
    /// Only events whose verdict was not `none`.
    #[arg(long)]
    decisions: bool,
    /// Only from this event/decision id, RFC 3339 time, or age (90s, 10m, 2h, 1d).
    #[arg(long, value_name = "ID|TIME|AGE", value_parser = parse_since)]
    since: Option<uuid::Uuid>,
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
    /// Daemon configuration (pending timeouts, log rotation, redaction)
    /// [default: $XDG_CONFIG_HOME/hookd/config.toml if it exists].
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
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
}

/// With the `mimalloc` feature, mimalloc is the daemon's allocator: faster
/// under heavy load, for more idle memory (README, Performance: the
/// system's allocator is the default because it keeps an idle daemon
/// small). The forwarder always keeps the system allocator.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
        Command::Tail(args) => tail(args),
        Command::Pending { client, json } => pending(&client, json),
        Command::Decide {
            client,
            event_id,
            verdict,
            reason,
            remember,
            rule,
            ttl,
        } => decide(
            &client,
            hookd::protocol::Decide {
                req: String::new(),
                event_id,
                answer: hookd::decision::Answer::new(verdict, reason),
                remember,
                rule,
                ttl_s: ttl,
            },
        ),
        Command::Grants {
            client,
            action,
            json,
        } => grants(&client, action, json),
        Command::Steer {
            client,
            run_id,
            text,
        } => client
            .connect()
            .and_then(|mut c| Ok(c.steer(&run_id, &text)?)),
        Command::Statusline { socket } => statusline(socket),
        Command::Status { client, json } => status(&client, json),
        Command::Approve { client, plain } => approve(&client, plain),
        Command::Rules(command) => rules(command),
        Command::Replay { log, rules, json } => replay(&log, rules, json),
        Command::Install(args) => install(args),
        Command::Uninstall { target } => uninstall(&target),
        Command::Doctor {
            probe,
            socket,
            project,
            json,
        } => doctor(socket, project, probe, json),
        Command::Service(ServiceCommand::Install { bin_dir, dry_run }) => {
            service_install(bin_dir, dry_run)
        }
        Command::Run(args) => return run(args),
        Command::Adapter(AdapterCommand::Install { dir, json }) => adapter_install(dir, json),
        Command::Adapter(AdapterCommand::Status { dir, json }) => return adapter_status(dir, json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if is_reader_gone(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookd: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn approve(client: &ClientArgs, plain: bool) -> anyhow::Result<()> {
    let socket = client
        .socket
        .clone()
        .unwrap_or_else(hookd::paths::socket_path);
    if plain {
        return hookd::approve::plain::run(&socket, &mut Stdout);
    }
    // https://no-color.org: set and not empty.
    let color = std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    hookd::approve::term::run(&socket, color)
}

fn run(args: RunArgs) -> ExitCode {
    let cwd = match args
        .cwd
        .map_or_else(std::env::current_dir, std::path::absolute)
    {
        Ok(cwd) => cwd,
        Err(e) => {
            eprintln!("hookd: --cwd: {e}");
            return ExitCode::FAILURE;
        }
    };
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
    match hookd::run_client::run(run, &mut Stdout) {
        Ok(code) => ExitCode::from(code),
        Err(e) if is_reader_gone(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookd: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let rules = rules_source(args.rules);
    let log = log_path(args.log)?;
    // The state directory is the log's (`$XDG_STATE_HOME/hookd/`).
    let grants_file = args.grants.or_else(|| {
        log.parent()
            .map(|dir| dir.join(daemon::grants::GRANTS_FILE))
    });
    let config = match args.config {
        Some(path) => hookd::config::Config::load(&path)?,
        None => match hookd::paths::default_config_path().filter(|p| p.exists()) {
            Some(path) => hookd::config::Config::load(&path)?,
            None => hookd::config::Config::default(),
        },
    };
    daemon::run(daemon::ServeOptions {
        socket: args.socket.unwrap_or_else(hookd::paths::socket_path),
        rules,
        log,
        fail_closed: fail_closed(args.fail_closed),
        permissive: args.permissive,
        max_frame: args.max_frame_bytes,
        config,
        adapter_dir: match args.adapter_dir {
            Some(dir) => dir,
            None => hookd::adapter::default_dir()?,
        },
        grants_file,
        user_rules: hookd::paths::default_rules_path(),
    })
}

fn parse_remember(text: &str) -> Result<hookd::protocol::Remember, String> {
    serde_json::from_value(serde_json::Value::String(text.to_string()))
        .map_err(|_| format!("`{text}`: expected once, session or always"))
}

fn decide(client: &ClientArgs, decide: hookd::protocol::Decide) -> anyhow::Result<()> {
    let remember = decide.remember;
    let result = client.connect()?.decide(decide)?;
    match (remember, result) {
        (hookd::protocol::Remember::Session, Some(result)) => {
            let grant: hookd::protocol::GrantRecord = serde_json::from_value(result)?;
            println!(
                "grant {}: {} {} for session {}{}",
                grant.id,
                grant.verdict,
                grant.rule,
                grant.session_id,
                grant
                    .expires_at
                    .map(|at| format!(" until {at}"))
                    .unwrap_or_default()
            );
        }
        (hookd::protocol::Remember::Always, Some(result)) => {
            let done: hookd::protocol::Remembered = serde_json::from_value(result)?;
            if done.created_from_defaults {
                println!(
                    "created {} from the embedded default rules",
                    done.rules_file
                );
            }
            println!("added {} to {}", done.rule, done.rules_file);
            if let Some(note) = done.note {
                println!("note: {note}");
            }
        }
        _ => {}
    }
    Ok(())
}

fn grants(client: &ClientArgs, action: Option<GrantsCommand>, json: bool) -> anyhow::Result<()> {
    let mut connection = client.connect()?;
    if let Some(GrantsCommand::Revoke { id }) = action {
        connection.revoke_grant(&id)?;
        println!("revoked grant {id}");
        return Ok(());
    }
    let list = connection.grants()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if list.is_empty() {
        println!("no session grants");
    }
    for grant in &list {
        println!(
            "{}  {:<5} {}  session {}  by {}  since {}{}",
            grant.id,
            grant.verdict,
            grant.rule,
            grant.session_id,
            grant.by,
            grant.created_at,
            grant
                .expires_at
                .as_ref()
                .map(|at| format!("  until {at}"))
                .unwrap_or_default()
        );
    }
    Ok(())
}

fn statusline(socket: Option<PathBuf>) -> anyhow::Result<()> {
    let socket = socket.unwrap_or_else(hookd::paths::socket_path);
    let status = hookd::statusline::fetch(&socket, hookd::statusline::BUDGET);
    println!("{}", hookd::statusline::render(status.as_ref()));
    Ok(())
}

/// `--log FILE`, else the default event log path.
fn log_path(explicit: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    explicit
        .or_else(hookd::paths::default_log_path)
        .ok_or_else(|| anyhow::anyhow!("no --log given and neither XDG_STATE_HOME nor HOME is set"))
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

fn rules(command: RulesCommand) -> anyhow::Result<()> {
    use hookd::rules::{check_as, LayerKind, DEFAULTS_TOML};
    match command {
        RulesCommand::Defaults => {
            print!("{DEFAULTS_TOML}");
            Ok(())
        }
        RulesCommand::Check {
            file,
            project,
            json,
        } => {
            let path = match file.or_else(hookd::paths::default_rules_path) {
                Some(path) => path,
                None => anyhow::bail!("no FILE given and neither XDG_CONFIG_HOME nor HOME is set"),
            };
            let kind = if project {
                LayerKind::Project
            } else {
                LayerKind::User
            };
            let report = check_as(&path, kind);
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!("{report}");
            }
            if report.is_ok() {
                Ok(())
            } else {
                std::process::exit(1)
            }
        }
        RulesCommand::Explain {
            event,
            agent,
            rules,
            json,
        } => {
            let text = std::fs::read_to_string(&event)
                .with_context(|| format!("reading {}", event.display()))?;
            let mut input: serde_json::Value = serde_json::from_str(&text)
                .with_context(|| format!("{} is not JSON", event.display()))?;
            // An event line from the log carries the hook input inside it,
            // and its agent.
            let mut logged_agent = None;
            if let Ok(LogRecord::Event(logged)) = LogRecord::parse(text.trim_end().as_bytes()) {
                if logged.input.is_object() {
                    logged_agent = serde_json::from_value::<hookd::protocol::Harness>(
                        serde_json::Value::String(logged.harness),
                    )
                    .ok()
                    .map(hookd::protocol::Harness::agent);
                    input = logged.input;
                }
            }
            let agent = agent
                .map(Agent::from)
                .or(logged_agent)
                .unwrap_or(Agent::ClaudeCode);
            let user = std::sync::Arc::new(daemon::load_rules(&rules_source(rules))?);
            let home = std::env::var_os("HOME").map(PathBuf::from);
            let explanations =
                hookd::approve::explain::explain_with(&input, agent, user, home.as_deref());
            let name = input["hook_event_name"].as_str().unwrap_or("");
            let event_name = hookd::approve::explain::judged_event(agent, &input);
            if json {
                match explanations.as_slice() {
                    [one] => println!("{}", serde_json::to_string_pretty(one)?),
                    all => println!("{}", serde_json::to_string_pretty(all)?),
                }
            } else {
                if agent != Agent::ClaudeCode {
                    println!("agent: {agent} ({name} judged as {event_name})");
                }
                for (i, explanation) in explanations.iter().enumerate() {
                    if explanations.len() > 1 {
                        println!("input {} of {}:", i + 1, explanations.len());
                    }
                    print!("{explanation}");
                }
            }
            Ok(())
        }
        RulesCommand::Test { dir, rules } => {
            let rules = daemon::load_rules(&rules_source(rules))?;
            let report = hookd::rules::run_fixtures(&dir, &rules);
            println!("{report}");
            if report.is_ok() {
                Ok(())
            } else {
                std::process::exit(1)
            }
        }
    }
}

fn replay(log: &std::path::Path, rules: Option<PathBuf>, json: bool) -> anyhow::Result<()> {
    let rules = std::sync::Arc::new(daemon::load_rules(&rules_source(rules))?);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let report = hookd::replay::replay(log, rules, home.as_deref())?;
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{report}");
    }
    Ok(())
}

fn tail(args: TailArgs) -> anyhow::Result<()> {
    let log = log_path(args.log)?;
    let options = hookd::tail::TailOptions {
        follow: args.follow,
        json: args.json,
        kind: args.kind,
        session: args.session,
        tool: args.tool,
        decisions: args.decisions,
        since: args.since,
    };
    hookd::tail::run(&log, &options, &mut Stdout, stdout_reader_gone)
        .with_context(|| format!("reading {}", log.display()))
}

/// `--since`, read when the command line is: a bad value is a usage error
/// (exit 2) naming the flag and the value.
fn parse_since(text: &str) -> Result<uuid::Uuid, String> {
    hookd::tail::parse_since(text, std::time::SystemTime::now())
}

fn pending(client: &ClientArgs, json: bool) -> anyhow::Result<()> {
    let mut connection = client.connect()?;
    let list = connection.pending()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&list)?);
        return Ok(());
    }
    if list.is_empty() {
        // An ask waits only while a subscriber could decide it; without
        // one it goes straight to Claude Code's prompt, so say why the
        // list is empty rather than let it look like nothing asked.
        let subscribers = connection.status()?.counters.subscribers;
        if subscribers == 0 {
            println!(
                "nothing pending — no client is subscribed, so asks go to Claude Code's own prompt"
            );
        } else {
            println!("nothing pending");
        }
    }
    for item in &list {
        let event = &item.event;
        let line = serde_json::from_value::<hookd::protocol::log::LoggedEvent>(event.clone())
            .map_or_else(
                |e| format!("(unreadable event: {e})"),
                |event| hookd::tail::pretty(&event, None),
            );
        println!(
            "{}  {}  {}  waiting {}ms, {}ms left  [{}]",
            item.info.short_id,
            event["id"].as_str().unwrap_or("?"),
            line.trim_end_matches("  → (pending)"),
            item.waiting_ms,
            item.info.deadline_ms,
            item.info
                .verdicts
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join("|"),
        );
        if let Some(suggestion) = item.info.suggestions.first() {
            println!(
                "       remember as: {} (hookd decide {} allow --remember session|always)",
                suggestion.rule, item.info.short_id
            );
        }
    }
    Ok(())
}

fn status(client: &ClientArgs, json: bool) -> anyhow::Result<()> {
    let status = client.connect()?.status()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&status)?);
        return Ok(());
    }
    println!(
        "hookd {} (pid {}), up {:.0}s on {}",
        status.version,
        status.pid,
        status.uptime_s,
        status.socket.display()
    );
    println!(
        "rules: generation {}, {} rules from {}",
        status.rules.generation, status.rules.count, status.rules.source
    );
    println!("log: {}", status.log.display());
    if let serde_json::Value::Object(counters) = serde_json::to_value(&status.counters)? {
        for (name, value) in counters {
            println!("  {name:<23} {value}");
        }
    }
    if let Some(last) = &status.last_decision {
        println!(
            "last decision: {} {} {} ({})",
            last.verdict,
            last.kind,
            last.summary,
            if last.rule_ids.is_empty() {
                last.source.clone()
            } else {
                last.rule_ids.join(", ")
            }
        );
    }
    println!("session grants: {}", status.grants.len());
    for g in &status.grants {
        println!(
            "  {}  {:<5} {}  session {}{}",
            g.id,
            g.verdict,
            g.rule,
            g.session_id,
            g.expires_at
                .as_ref()
                .map(|at| format!("  until {at}"))
                .unwrap_or_default()
        );
    }
    println!("agent-sdk runs: {}", status.runs.len());
    for r in &status.runs {
        println!(
            "  {}  {:<8} pid {}  {:.0}s  {} turns  {}  {}  {}",
            r.run_id,
            r.state,
            r.pid,
            r.elapsed_s,
            r.turns,
            r.cost_usd
                .map(|c| format!("${c:.4}"))
                .unwrap_or_else(|| "$?".into()),
            r.client,
            r.cwd,
        );
    }
    Ok(())
}

fn install(args: InstallArgs) -> anyhow::Result<()> {
    let (agents, skipped) = args.target.agents()?;
    if agents.len() != 1 && args.events.is_some() {
        anyhow::bail!("--events names one agent's events: give one --agent with it");
    }
    let forwarder = hookd::install::resolve_forwarder(args.forwarder.as_deref())?;
    // The status line is Claude Code's setting; other agents have none.
    let statusline = match args.statusline {
        true => Some(std::env::current_exe().context("finding this hookd for --statusline")?),
        false => None,
    };
    if statusline.is_some() && !agents.contains(&Agent::ClaudeCode) {
        anyhow::bail!("--statusline is Claude Code's setting: install it with --agent claude-code");
    }
    let mut options = Vec::new();
    for agent in &agents {
        options.push(hookd::install::InstallOptions {
            agent: *agent,
            forwarder: forwarder.clone(),
            events: match &args.events {
                Some(list) => {
                    hookd::install::parse_events_for(*agent, list).map_err(anyhow::Error::msg)?
                }
                None => hookd::install::default_events_for(*agent),
            },
            fail_closed: fail_closed(args.fail_closed),
            statusline: statusline.clone().filter(|_| *agent == Agent::ClaudeCode),
        });
    }
    if args.print {
        for options in &options {
            if options.agent != Agent::ClaudeCode || agents.len() > 1 {
                println!("// {}", options.agent);
            }
            print!("{}", hookd::install::hooks_block(options));
        }
        return Ok(());
    }
    report_skipped(&skipped, args.target.json)?;
    if agents.is_empty() {
        anyhow::bail!(
            "--agent all: none of claude, codex, gemini is on PATH; name one with --agent"
        );
    }
    let mut written = false;
    for options in &options {
        let path = args.target.path(options.agent)?;
        let outcome = hookd::install::install(&path, options, args.target.dry_run)?;
        args.target.report(&outcome)?;
        written |= outcome.written;
        if !args.target.json && !args.target.dry_run {
            if let Some(note) = hookd::install::after_install_note(options.agent) {
                println!("{note}");
            }
        }
    }
    if written && !args.target.json {
        println!("`hookd doctor` checks the whole setup.");
    }
    Ok(())
}

fn uninstall(target: &SettingsTarget) -> anyhow::Result<()> {
    let (agents, skipped) = target.agents()?;
    report_skipped(&skipped, target.json)?;
    for agent in agents {
        let path = target.path(agent)?;
        let outcome = hookd::install::uninstall(&path, target.dry_run)?;
        target.report(&outcome)?;
    }
    Ok(())
}

/// Says which agents `--agent all` left out (on stderr: stdout may be JSON).
fn report_skipped(skipped: &[Agent], json: bool) -> anyhow::Result<()> {
    for agent in skipped {
        let program = hookd::install::agent_program(*agent);
        if json {
            eprintln!("skipped {agent}: `{program}` is not on PATH");
        } else {
            println!("skipped {agent}: `{program}` is not on PATH");
        }
    }
    Ok(())
}

fn doctor(
    socket: Option<PathBuf>,
    project: Option<PathBuf>,
    probe: bool,
    json: bool,
) -> anyhow::Result<()> {
    let project = std::path::absolute(project.unwrap_or_else(|| ".".into()))?;
    let options = hookd::doctor::DoctorOptions {
        probe,
        ..hookd::doctor::DoctorOptions::from_env(
            socket.unwrap_or_else(hookd::paths::socket_path),
            project,
        )?
    };
    let report = hookd::doctor::run(&options);
    if json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{report}");
    }
    if report.ok {
        Ok(())
    } else {
        std::process::exit(1)
    }
}

fn adapter_install(dir: Option<PathBuf>, json: bool) -> anyhow::Result<()> {
    let dir = match dir {
        Some(dir) => dir,
        None => hookd::adapter::default_dir()?,
    };
    if !json {
        eprintln!(
            "installing the agent-SDK adapter {} into {} (npm ci)",
            hookd::adapter::version(),
            dir.display()
        );
    }
    let outcome = hookd::adapter::install(&dir)?;
    if json {
        let status = hookd::adapter::status(&dir);
        let out = serde_json::json!({ "outcome": outcome, "status": status });
        println!("{out}");
    } else if outcome == hookd::adapter::Installed::AlreadyInstalled {
        println!("{}: already installed", dir.display());
    } else {
        println!("{}: installed", dir.display());
    }
    Ok(())
}

fn adapter_status(dir: Option<PathBuf>, json: bool) -> ExitCode {
    let report = || -> anyhow::Result<bool> {
        let dir = match dir {
            Some(dir) => dir,
            None => hookd::adapter::default_dir()?,
        };
        let status = hookd::adapter::status(&dir);
        if json {
            println!("{}", serde_json::to_string(&status)?);
        } else {
            let state = match (status.installed, status.embedded) {
                (true, true) => "installed",
                (true, false) => "installed, but not this hookd's adapter",
                (false, _) => "not installed: run `hookd adapter install`",
            };
            println!("adapter {} in {}: {state}", status.version, dir.display());
            match &status.node {
                Some(node) => println!("node: {}", node.display()),
                None => println!("node: not on PATH (install Node.js >= 18)"),
            }
        }
        Ok(status.installed && status.node.is_some())
    };
    match report() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) if is_reader_gone(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookd: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn service_install(bin_dir: Option<PathBuf>, dry_run: bool) -> anyhow::Result<()> {
    let hookd = hookd::service::hookd_path(bin_dir.as_deref())?;
    let dir = hookd::service::unit_dir()?;
    let outcome = hookd::service::install(&dir, &hookd, dry_run)?;
    for unit in &outcome.units {
        if dry_run && unit.status != "unchanged" {
            println!("# {} ({})", unit.path.display(), unit.status);
            print!("{}", unit.contents);
            println!();
        } else {
            println!("{}: {}", unit.path.display(), unit.status);
        }
    }
    if dry_run {
        println!("dry run: nothing written");
    }
    println!("ExecStart runs {}. Now run:", outcome.hookd.display());
    for command in &outcome.commands {
        println!("  {command}");
    }
    Ok(())
}
