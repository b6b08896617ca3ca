//! `hook-forwarder`: the command hook Claude Code (or Codex CLI, or Gemini
//! CLI: `--agent`) spawns for every hook.
//!
//! It connects to the daemon, reads the hook's stdin to EOF, sends one `hook`
//! frame, waits for one `hook_result` and prints it verbatim. It must cost
//! about as much as spawning `/bin/true`, so it is std + serde_json only (and
//! the `libc` crate's declarations for the few calls std lacks, see `sys`): no
//! async runtime, no logging framework, no configuration file, no thread.
//!
//! Before it sends anything it checks that it talks to this user's daemon:
//! the socket's directory must be private to this user (the daemon's own
//! rule, [`hookd_protocol::paths::unsafe_dir_reason`]) and the peer must run as this
//! user. Every step is bounded by the deadline: the connect (a full listen
//! backlog), the stdin read (a writer that never closes it), the exchange.
//! That takes a send timeout set before connecting and `poll` before each
//! read of stdin rather than a watchdog thread: measured side by side
//! (`benches/forwarder.rs`, `HOOKD_FORWARDER_COMPARE`), they cost about 2 %
//! of the round trip of the static build, a thread about 7 %.
//!
//! `--agent codex|gemini|copilot|claude-code` (written by `hookd install --agent`,
//! default `claude-code`) names the agent whose hook JSON stdin holds: it
//! goes to the daemon as the frame's `harness`, picks which environment
//! variables are relayed ([`Agent::relays_env`]) and the fallback's form.
//!
//! When anything goes wrong (no daemon, deadline, bad reply, bad arguments)
//! it applies the event's fallback in the agent's own form (see
//! [`Agent::fallback`]), blocking what its `--fail-closed` scope covers (an
//! event name the agent does not have, fail-closed, gets
//! [`hookd_protocol::agent::universal_deny`], which every agent honors), and prints
//! exactly one machine-parseable line on stderr:
//!
//! ```text
//! hookd-forwarder: fallback event=PreToolUse reason=no_socket socket=/run/user/1000/hookd/hookd.sock
//! ```
//!
//! A stdin that is not JSON is still sent (as text, with `input_error`), so
//! the daemon logs it and answers with the fallback.
//!
//! Architecture invariant: it never spawns a process (a daemon that inherited
//! its stdout would make Claude Code refuse the hook's output) and never
//! prints anything but the daemon's answer or the fallback.

mod sys;

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, CStr, OsStr, OsString};
use std::io::{self, Write};
use std::mem::ManuallyDrop;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hookd_protocol::agent::claude::output::HookOutput;
use hookd_protocol::agent::claude::{FailClosed, HookEventKind};
use hookd_protocol::agent::Agent;
use hookd_protocol::agent::Harness;
use hookd_protocol::forwarder::{decode_reply, encode_hook, ForwarderReply, HookFrame};
use hookd_protocol::{json, DEFAULT_MAX_FRAME};

/// The forwarder's deadline when `--timeout` is not given: below Claude Code's
/// own 30 s default for UserPromptSubmit, so the ladder holds with an
/// unconfigured registration too. Shorter defaults apply per event, see
/// [`default_timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(25);

/// The longest `--timeout` accepted: a day. Claude Code kills a hook at its
/// own timeout long before; a bigger number is a mistake (milliseconds?).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

const USAGE: &str = "\
usage: hook-forwarder [--agent NAME] [--timeout SECS] [--fail-closed[=tools|all]] [--socket PATH] [--installed-by=WHO]

Registered as a command hook in Claude Code's settings.json (or Codex's
hooks.json, Gemini's settings.json, or a Copilot hooks file): reads the hook's JSON on stdin, asks
the hookd daemon, prints its decision.

  --agent NAME     the agent that runs this hook: claude-code (the default),
                   codex, gemini or copilot

  --timeout SECS   deadline for the whole exchange (default: 25, or two thirds
                   of Claude Code's default timeout for events with a shorter one)
  --fail-closed[=tools|all]
                   when the daemon cannot answer, block instead of no opinion:
                   tool calls (PreToolUse, PermissionRequest; the default scope),
                   or every guarded event, prompts included (=all)
  --socket PATH    daemon socket (default: $HOOKD_SOCKET, then
                   $XDG_RUNTIME_DIR/hookd/hookd.sock, then /tmp/hookd-$UID/hookd.sock)
  --installed-by=WHO  ignored: marks the entries `hookd install` wrote

Argument errors fall back too, keeping any --fail-closed on the line.
";

/// Command-line options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// `--agent`; `None`: Claude Code.
    pub agent: Option<Agent>,
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--fail-closed[=tools|all]`.
    pub fail_closed: FailClosed,
    /// `--socket`.
    pub socket: Option<PathBuf>,
}

/// What the command line asked for.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// Forward the hook.
    Forward(Options),
    /// Print this text on stdout and exit 0 (`--help`, `--version`).
    Print(String),
}

/// The arguments `main` was given, without the program name.
///
/// The forwarder has no std `main` (see `bin/hook-forwarder.rs`), so
/// `std::env::args_os()` is empty on every libc but glibc, which alone hands
/// the arguments to std before `main`; a dropped `--fail-closed` would fail
/// open. So they are read from `argv`.
///
/// # Safety
///
/// `argv` must hold `argc` pointers to NUL-terminated strings (or be null),
/// as the C runtime passes them to `main`.
pub unsafe fn args_from_main(argc: c_int, argv: *const *const c_char) -> Vec<OsString> {
    if argv.is_null() {
        return Vec::new();
    }
    let mut args = Vec::new();
    for i in 1..usize::try_from(argc).unwrap_or(0) {
        // SAFETY: i < argc, and argv holds argc pointers.
        let arg = unsafe { *argv.add(i) };
        if arg.is_null() {
            break;
        }
        // SAFETY: each argument is a NUL-terminated string that outlives this call.
        let bytes = unsafe { CStr::from_ptr(arg) }.to_bytes();
        args.push(OsStr::from_bytes(bytes).to_os_string());
    }
    args
}

/// Parses the arguments (without the program name). The error names the
/// argument and what is wrong with it.
pub fn parse_args(args: &[OsString]) -> Result<Command, String> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let bytes = arg.as_bytes();
        let (flag, inline) = match bytes.iter().position(|&b| b == b'=') {
            Some(eq) if bytes.starts_with(b"--") => {
                (&bytes[..eq], Some(OsStr::from_bytes(&bytes[eq + 1..])))
            }
            _ => (bytes, None),
        };
        let mut value = |name: &str| -> Result<&OsStr, String> {
            inline
                .or_else(|| args.next().map(OsString::as_os_str))
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag {
            b"--timeout" => options.timeout = Some(parse_timeout(value("--timeout")?)?),
            b"--agent" => options.agent = Some(parse_agent(value("--agent")?)?),
            b"--fail-closed" => {
                let scope = match inline {
                    None => FailClosed::Tools,
                    Some(scope) => scope
                        .to_str()
                        .and_then(FailClosed::from_scope)
                        .ok_or_else(|| {
                            format!(
                                "--fail-closed: unknown scope `{}`; use --fail-closed (tools) or --fail-closed=all",
                                scope.to_string_lossy()
                            )
                        })?,
                };
                options.fail_closed = options.fail_closed.max(scope);
            }
            b"--socket" => options.socket = Some(PathBuf::from(value("--socket")?)),
            // Written by `hookd install` so `hookd uninstall` can recognise its
            // own entries (see `crate::install::MARKER_ARG`); it changes nothing.
            b"--installed-by" => {
                value("--installed-by")?;
            }
            b"-h" | b"--help" if inline.is_none() => return Ok(Command::Print(USAGE.to_string())),
            b"-V" | b"--version" if inline.is_none() => {
                return Ok(Command::Print(format!(
                    "hook-forwarder {}\n",
                    env!("CARGO_PKG_VERSION")
                )))
            }
            _ => {
                return Err(format!(
                    "unknown argument `{}` (see hook-forwarder --help)",
                    arg.to_string_lossy()
                ))
            }
        }
    }
    Ok(Command::Forward(options))
}

fn parse_agent(value: &OsStr) -> Result<Agent, String> {
    value.to_str().and_then(Agent::from_name).ok_or_else(|| {
        format!(
            "--agent: unknown agent `{}`; use claude-code, codex, gemini or copilot",
            value.to_string_lossy()
        )
    })
}

/// The agent an argument list names, read without parsing it: what applies
/// when [`parse_args`] refuses the line, so that a typo elsewhere still
/// gives the fallback in the agent's own form. `None` when no valid
/// `--agent NAME` / `--agent=NAME` is on the line.
pub fn agent_in(args: &[OsString]) -> Option<Agent> {
    let mut found = None;
    let mut previous_flag = false;
    for arg in args {
        let bytes = arg.as_bytes();
        let name = match bytes.strip_prefix(b"--agent=") {
            Some(name) => Some(name),
            None if previous_flag => Some(bytes),
            None => None,
        };
        if let Some(agent) = name
            .and_then(|n| std::str::from_utf8(n).ok())
            .and_then(Agent::from_name)
        {
            found = Some(agent);
        }
        previous_flag = bytes == b"--agent";
    }
    found
}

fn parse_timeout(value: &OsStr) -> Result<Duration, String> {
    let text = value.to_string_lossy();
    let secs: f64 = text
        .parse()
        .map_err(|_| format!("--timeout: `{text}` is not a number of seconds"))?;
    if !secs.is_finite() || secs <= 0.0 {
        return Err(format!(
            "--timeout: `{text}` is not a positive number of seconds"
        ));
    }
    if secs > MAX_TIMEOUT.as_secs_f64() {
        return Err(format!(
            "--timeout: `{text}` is more than a day ({} seconds); it is in seconds",
            MAX_TIMEOUT.as_secs()
        ));
    }
    match Duration::try_from_secs_f64(secs) {
        Ok(timeout) if !timeout.is_zero() => Ok(timeout),
        _ => Err(format!("--timeout: `{text}` is too small")),
    }
}

/// The fail-closed scope an argument list asks for, read without parsing
/// it: what applies when [`parse_args`] refuses the line, so that a typo
/// elsewhere never turns a fail-closed hook into a fail-open one. Case and
/// `_` for `-` are ignored. Bare `--fail-closed` is `tools`,
/// `--fail-closed=tools` too; any other spelling that starts like it
/// (`--fail-closed=everything`, `--fail-closed-all`, `--fail-closed all`)
/// is read as `all`, the safe side.
pub fn fail_closed_in(args: &[OsString]) -> FailClosed {
    let mut scope = FailClosed::Off;
    let mut previous_bare = false;
    for arg in args {
        let token = arg.to_string_lossy().to_ascii_lowercase().replace('_', "-");
        let this = match token.strip_prefix("--fail-closed") {
            Some("") | Some("=tools") => FailClosed::Tools,
            Some(_) => FailClosed::All,
            None if previous_bare && token == "all" => FailClosed::All,
            None => FailClosed::Off,
        };
        previous_bare = token == "--fail-closed";
        scope = scope.max(this);
    }
    scope
}

/// The deadline used without `--timeout`: [`DEFAULT_TIMEOUT`], or two thirds
/// of Claude Code's default for events whose default is shorter (SessionEnd's
/// 1.5 s gives 1 s).
pub fn default_timeout(kind: HookEventKind) -> Duration {
    let claude = Duration::from_millis(kind.claude_default_timeout_ms());
    DEFAULT_TIMEOUT.min(claude * 2 / 3)
}

/// Why the forwarder fell back instead of relaying a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FallbackReason {
    /// The arguments could not be parsed.
    BadArgs,
    /// The socket path does not exist: no daemon.
    NoSocket,
    /// Something is at the path, but nobody accepts (stale socket).
    ConnectRefused,
    /// The socket or its directory is not ours to use.
    PermissionDenied,
    /// Any other connect failure.
    ConnectFailed,
    /// The socket's directory is not private to this user: another user
    /// could have put a socket there.
    UntrustedDir,
    /// The process listening on the socket runs as another user.
    UntrustedPeer,
    /// stdin could not be read.
    BadInput,
    /// stdin was still open at the deadline.
    StdinTimeout,
    /// No answer before the deadline.
    Timeout,
    /// The daemon closed the connection without answering.
    Closed,
    /// The reply was not a valid `hook_result` for this request.
    BadReply,
    /// The daemon answered with an `error` frame.
    DaemonError,
    /// Reading or writing the socket failed.
    Io,
}

impl FallbackReason {
    /// The `reason=` token.
    pub fn as_str(self) -> &'static str {
        match self {
            FallbackReason::BadArgs => "bad_args",
            FallbackReason::NoSocket => "no_socket",
            FallbackReason::ConnectRefused => "connect_refused",
            FallbackReason::PermissionDenied => "permission_denied",
            FallbackReason::ConnectFailed => "connect_failed",
            FallbackReason::UntrustedDir => "untrusted_dir",
            FallbackReason::UntrustedPeer => "untrusted_peer",
            FallbackReason::BadInput => "bad_input",
            FallbackReason::StdinTimeout => "stdin_timeout",
            FallbackReason::Timeout => "timeout",
            FallbackReason::Closed => "closed",
            FallbackReason::BadReply => "bad_reply",
            FallbackReason::DaemonError => "daemon_error",
            FallbackReason::Io => "io_error",
        }
    }

    fn from_connect(e: &io::Error) -> FallbackReason {
        match e.kind() {
            io::ErrorKind::NotFound => FallbackReason::NoSocket,
            io::ErrorKind::ConnectionRefused => FallbackReason::ConnectRefused,
            io::ErrorKind::PermissionDenied => FallbackReason::PermissionDenied,
            // The listen backlog stayed full until the deadline.
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => FallbackReason::Timeout,
            _ => FallbackReason::ConnectFailed,
        }
    }

    fn from_io(e: &io::Error) -> FallbackReason {
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => FallbackReason::Timeout,
            io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::UnexpectedEof => FallbackReason::Closed,
            _ => FallbackReason::Io,
        }
    }
}

/// A fallback's reason, and what exactly went wrong when there is more to
/// say than the reason (shown as `detail=`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Failure {
    reason: FallbackReason,
    detail: Option<String>,
}

impl From<FallbackReason> for Failure {
    fn from(reason: FallbackReason) -> Failure {
        Failure {
            reason,
            detail: None,
        }
    }
}

impl Failure {
    fn new(reason: FallbackReason, detail: impl Into<String>) -> Failure {
        Failure {
            reason,
            detail: Some(detail.into()),
        }
    }
}

/// What stdin held.
enum Input {
    /// One JSON value, with its `hook_event_name` if it has a string one.
    Json { name: Option<String> },
    /// Not JSON: what was wrong, and the event name if one can be seen.
    Unreadable { error: String, name: Option<String> },
}

impl Input {
    fn probe(input: &[u8]) -> Input {
        if let Err(e) = std::str::from_utf8(input) {
            return Input::Unreadable {
                error: format!("stdin is not UTF-8 (byte {})", e.valid_up_to()),
                name: json::find_event_name(input),
            };
        }
        match hookd_protocol::agent::probe_event_name(input) {
            Ok(name) => Input::Json { name },
            Err(e) => Input::Unreadable {
                error: format!("stdin is not JSON: {e}"),
                name: json::find_event_name(input),
            },
        }
    }

    fn name(&self) -> Option<&str> {
        match self {
            Input::Json { name } | Input::Unreadable { name, .. } => name.as_deref(),
        }
    }
}

/// Runs the forwarder with these arguments and the process's env and stdio;
/// returns the exit code.
pub fn run(args: &[OsString]) -> i32 {
    let started = Instant::now();
    let (options, bad_args) = match parse_args(args) {
        Ok(Command::Print(text)) => {
            let _ = io::stdout().write_all(text.as_bytes());
            return 0;
        }
        Ok(Command::Forward(options)) => (options, None),
        Err(message) => {
            let options = Options {
                agent: agent_in(args),
                fail_closed: fail_closed_in(args),
                ..Options::default()
            };
            (options, Some(message))
        }
    };
    let socket = options
        .socket
        .clone()
        .unwrap_or_else(hookd_protocol::paths::socket_path);
    // Until stdin names the event, the deadline is `--timeout` or the
    // longest default.
    let early_deadline = deadline(started, options.timeout.unwrap_or(DEFAULT_TIMEOUT));
    // Connect before reading stdin: Claude Code has already written it, and a
    // missing daemon is then known without waiting on anything.
    let stream = match &bad_args {
        None => connect(&socket, early_deadline),
        Some(message) => Err(Failure::new(FallbackReason::BadArgs, message.clone())),
    };
    let (input, read) = read_stdin(early_deadline);
    let probe = Input::probe(&input);
    let agent = options.agent.unwrap_or(Agent::ClaudeCode);
    let kind = agent.event_kind(probe.name().unwrap_or(""));
    let event = probe.name().unwrap_or("unknown").to_string();

    let outcome = match (bad_args, read) {
        (None, Err(failure)) => Err(failure),
        _ => stream.and_then(|stream| {
            let budget = options.timeout.unwrap_or_else(|| default_timeout(kind));
            let input_error = match &probe {
                Input::Json { .. } => None,
                Input::Unreadable { error, .. } => Some(error.as_str()),
            };
            exchange(
                stream,
                agent,
                input,
                input_error,
                options.fail_closed,
                deadline(started, budget),
            )
        }),
    };
    let out = match outcome {
        Ok(out) => out,
        Err(failure) => {
            let mut out = agent.fallback(&event, options.fail_closed, failure.reason.as_str());
            out.stderr = fallback_line(&event, failure.reason, &socket, failure.detail.as_deref());
            out
        }
    };
    let _ = io::stdout().write_all(out.stdout.as_bytes());
    let _ = io::stdout().flush();
    let _ = io::stderr().write_all(out.stderr.as_bytes());
    out.exit_code
}

/// `started + budget`, never overflowing.
fn deadline(started: Instant, budget: Duration) -> Instant {
    started.checked_add(budget).unwrap_or(started)
}

/// What is left until `deadline`, or a timeout.
fn remaining(deadline: Instant) -> Result<Duration, FallbackReason> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
        .ok_or(FallbackReason::Timeout)
}

/// Connects to the daemon at `socket` if it is this user's: the socket's
/// directory must pass [`hookd_protocol::paths::unsafe_dir_reason`] and the process
/// listening must run as this user. Nothing is sent before both checks pass.
fn connect(socket: &Path, deadline: Instant) -> Result<UnixStream, Failure> {
    let dir = hookd_protocol::paths::socket_dir(socket);
    let meta =
        std::fs::symlink_metadata(dir).map_err(|e| match FallbackReason::from_connect(&e) {
            FallbackReason::NoSocket => Failure::from(FallbackReason::NoSocket),
            reason => Failure::new(reason, format!("socket directory {}: {e}", dir.display())),
        })?;
    let uid = sys::euid();
    if let Some(why) = hookd_protocol::paths::unsafe_dir_reason(dir, &meta, uid) {
        return Err(Failure::new(
            FallbackReason::UntrustedDir,
            format!("socket directory {}: {why}", dir.display()),
        ));
    }
    let stream = sys::connect(socket, remaining(deadline)?).map_err(|e| {
        let reason = FallbackReason::from_connect(&e);
        match reason {
            FallbackReason::NoSocket | FallbackReason::ConnectRefused => Failure::from(reason),
            _ => Failure::new(reason, e.to_string()),
        }
    })?;
    let peer = sys::peer_uid(&stream).map_err(|e| {
        Failure::new(
            FallbackReason::ConnectFailed,
            format!("reading the daemon's uid: {e}"),
        )
    })?;
    if peer != uid {
        return Err(Failure::new(
            FallbackReason::UntrustedPeer,
            format!("the process serving the socket runs as uid {peer}, this hook as uid {uid}"),
        ));
    }
    Ok(stream)
}

/// Reads stdin to its end, or until `deadline`. Whatever was read is
/// returned either way (the event name may be in it).
fn read_stdin(deadline: Instant) -> (Vec<u8>, Result<(), Failure>) {
    // Read straight into `input`'s spare room (`sys::read_into`), growing
    // it only when it is full, instead of through a zeroed 64 KiB buffer on
    // the stack: a hook's input is a few KiB, and each page a buffer zeroes
    // is a page fault on the path every hook takes (16 of them for 64 KiB:
    // 54 faults per run against 39, the `perf stat` in
    // docs/performance-history.md). Once `poll` has seen the writer hang up, what
    // is left is in the pipe and the reads need no more waits.
    let mut input: Vec<u8> = Vec::new();
    let mut hung_up = false;
    loop {
        if !hung_up {
            let wait = deadline.saturating_duration_since(Instant::now());
            match sys::wait_readable(0, wait) {
                Ok(sys::Readable::Now { hung_up: hup }) => hung_up = hup,
                Ok(sys::Readable::TimedOut) => {
                    return (
                        input,
                        Err(Failure::new(
                            FallbackReason::StdinTimeout,
                            "stdin was not closed before the deadline",
                        )),
                    )
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return (
                        input,
                        Err(Failure::new(FallbackReason::BadInput, e.to_string())),
                    )
                }
            }
        }
        if input.capacity() - input.len() < MIN_READ {
            input.reserve_exact(read_size(input.len()));
        }
        match sys::read_into(0, &mut input) {
            Ok(0) => return (input, Ok(())),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) => {}
            Err(e) => {
                let detail = format!("reading stdin: {e}");
                return (input, Err(Failure::new(FallbackReason::BadInput, detail)));
            }
        }
    }
}

/// The least room a read is given: below it the buffer grows first. The
/// read that finds the end of stdin usually fits in what the first read
/// left free, so a small input costs one allocation.
const MIN_READ: usize = 512;

/// How much more room to make after `filled` bytes: one page first (most
/// hook inputs fit), then as much again as is there, up to 1 MiB at a time,
/// so a large input takes few reads.
fn read_size(filled: usize) -> usize {
    filled.clamp(4096, 1 << 20)
}

/// The one stderr line printed on fallback. `detail`, when given, is the
/// last token, a JSON string.
pub fn fallback_line(
    event: &str,
    reason: FallbackReason,
    socket: &Path,
    detail: Option<&str>,
) -> String {
    let mut line = format!(
        "hookd-forwarder: fallback event={} reason={} socket={}",
        event.replace(char::is_whitespace, "_"),
        reason.as_str(),
        socket.display()
    );
    if let Some(detail) = detail {
        line.push_str(" detail=");
        line.push_str(&json::quote(detail));
    }
    line.push('\n');
    line
}

/// Sends the hook frame and waits for the matching `hook_result`. The
/// connection is left open: the process ends right after, and its exit
/// closes it (a `close` fewer on every hook).
fn exchange(
    stream: UnixStream,
    agent: Agent,
    input: Vec<u8>,
    input_error: Option<&str>,
    fail_closed: FailClosed,
    deadline: Instant,
) -> Result<HookOutput, Failure> {
    let mut stream = ManuallyDrop::new(stream);
    let id = request_id();
    let env: BTreeMap<String, String> = sys::env_matching(|name| agent.relays_env(name))
        .into_iter()
        .collect();
    let budget_ms = u64::try_from(remaining(deadline)?.as_millis()).unwrap_or(u64::MAX);
    let frame = encode_hook(&HookFrame {
        id: &id,
        harness: Harness::of_forwarded(agent),
        deadline_ms: budget_ms,
        fail_closed,
        env: &env,
        input: &input,
        input_error,
    });

    let io_err = |e: io::Error| FallbackReason::from_io(&e);
    // If the write fails, the daemon may already have said why before it
    // closed (an `error` frame, e.g. a refused uid): read that first.
    let mut write_failed = None;
    // The frame nearly always fits the socket's buffer: sent without
    // waiting, it needs no send timeout set (one system call fewer).
    let mut sent = match sys::send_nowait(&stream, &frame) {
        Ok(n) => n,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
            ) =>
        {
            0
        }
        Err(e) => {
            write_failed = Some(io_err(e));
            frame.len()
        }
    };
    while sent < frame.len() {
        // A large frame takes several writes; each gets only what is left.
        stream
            .set_write_timeout(Some(remaining(deadline)?))
            .map_err(io_err)?;
        match stream.write(&frame[sent..]) {
            Ok(0) => {
                write_failed = Some(FallbackReason::Closed);
                break;
            }
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                write_failed = Some(io_err(e));
                break;
            }
        }
    }

    // Read into `reply`'s spare room, as stdin is read: nothing zeroed.
    // It is stdin's buffer, whose pages the input has already touched: a
    // new one would be page faults on every hook.
    let mut reply = input;
    reply.clear();
    let line_end = loop {
        stream
            .set_read_timeout(Some(remaining(deadline)?))
            .map_err(io_err)?;
        let scanned = reply.len();
        if reply.capacity() - scanned < MIN_READ {
            reply.reserve_exact(read_size(scanned));
        }
        match sys::read_into(stream.as_raw_fd(), &mut reply) {
            Ok(0) => return Err(write_failed.unwrap_or(FallbackReason::Closed).into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(write_failed.unwrap_or_else(|| io_err(e)).into()),
        }
        if let Some(pos) = reply[scanned..].iter().position(|&b| b == b'\n') {
            break scanned + pos;
        }
        if reply.len() > DEFAULT_MAX_FRAME {
            return Err(FallbackReason::BadReply.into());
        }
    };
    match decode_reply(&reply[..line_end]) {
        Ok(ForwarderReply::HookResult {
            id: answered,
            exit_code,
            stdout,
            stderr,
        }) if answered == id => Ok(HookOutput {
            exit_code,
            stdout,
            stderr,
        }),
        Ok(ForwarderReply::Error { code, message }) => Err(Failure::new(
            FallbackReason::DaemonError,
            format!("{code}: {message}"),
        )),
        _ => Err(FallbackReason::BadReply.into()),
    }
}

/// A request id unique on this machine: pid and wall-clock nanoseconds.
fn request_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("fwd-{:x}-{:x}", std::process::id(), nanos)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_flags() {
        let cmd = parse_args(&args(&[
            "--timeout",
            "2.5",
            "--fail-closed",
            "--socket=/x.sock",
        ]));
        assert_eq!(
            cmd.unwrap(),
            Command::Forward(Options {
                timeout: Some(Duration::from_millis(2500)),
                fail_closed: FailClosed::Tools,
                socket: Some("/x.sock".into()),
                agent: None,
            })
        );
        assert!(parse_args(&args(&["--timeout", "0"]))
            .unwrap_err()
            .contains("--timeout"));
        assert!(parse_args(&args(&["--timeout"]))
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse_args(&args(&["--frob"]))
            .unwrap_err()
            .contains("--frob"));
        assert!(matches!(
            parse_args(&args(&["--help"])),
            Ok(Command::Print(_))
        ));
    }

    #[test]
    fn the_agent_is_a_flag_and_survives_a_refused_line() {
        let agent = |list: &[&str]| match parse_args(&args(list)) {
            Ok(Command::Forward(o)) => Ok(o.agent),
            Ok(Command::Print(_)) => panic!("printed"),
            Err(e) => Err(e),
        };
        assert_eq!(agent(&[]), Ok(None));
        assert_eq!(agent(&["--agent", "codex"]), Ok(Some(Agent::Codex)));
        assert_eq!(agent(&["--agent=gemini"]), Ok(Some(Agent::Gemini)));
        assert_eq!(agent(&["--agent=claude-code"]), Ok(Some(Agent::ClaudeCode)));
        assert_eq!(agent(&["--agent", "copilot"]), Ok(Some(Agent::Copilot)));
        let e = agent(&["--agent", "cursor"]).unwrap_err();
        assert!(e.contains("unknown agent `cursor`"), "{e}");
        assert!(agent(&["--agent"]).unwrap_err().contains("needs a value"));
        // A refused line keeps the agent, so the fallback has its form.
        for line in [
            &["--agent", "gemini", "--frob"][..],
            &["--frob", "--agent=gemini"],
            &["--timeout", "0", "--agent", "gemini"],
        ] {
            let line = args(line);
            assert!(parse_args(&line).is_err());
            assert_eq!(agent_in(&line), Some(Agent::Gemini), "{line:?}");
        }
        assert_eq!(agent_in(&args(&["--agent", "cursor"])), None);
        assert_eq!(agent_in(&args(&["codex"])), None);
    }

    #[test]
    fn fail_closed_takes_a_scope() {
        let scope = |list: &[&str]| match parse_args(&args(list)) {
            Ok(Command::Forward(o)) => Ok(o.fail_closed),
            Ok(Command::Print(_)) => panic!("printed"),
            Err(e) => Err(e),
        };
        assert_eq!(scope(&[]), Ok(FailClosed::Off));
        assert_eq!(scope(&["--fail-closed"]), Ok(FailClosed::Tools));
        assert_eq!(scope(&["--fail-closed=tools"]), Ok(FailClosed::Tools));
        assert_eq!(scope(&["--fail-closed=all"]), Ok(FailClosed::All));
        // Given twice, the wider scope holds.
        assert_eq!(
            scope(&["--fail-closed=all", "--fail-closed"]),
            Ok(FailClosed::All)
        );
        let e = scope(&["--fail-closed=prompts"]).unwrap_err();
        assert!(e.contains("unknown scope `prompts`"), "{e}");
    }

    #[test]
    fn argument_errors_keep_the_fail_closed_scope_wherever_it_is() {
        let table: &[(&[&str], FailClosed)] = &[
            (&["--frob", "--fail-closed"], FailClosed::Tools),
            (&["--fail-closed", "--frob"], FailClosed::Tools),
            (
                &["--timeout", "1e300", "--fail-closed=all"],
                FailClosed::All,
            ),
            (&["--fail-closed=everything"], FailClosed::All),
            (&["--fail-closed", "all"], FailClosed::All),
            (&["--Fail_Closed"], FailClosed::Tools),
            (&["--fail-closed-all"], FailClosed::All),
            (&["--timeout"], FailClosed::Off),
            (&["--frob"], FailClosed::Off),
        ];
        for (line, want) in table {
            let line = args(line);
            assert!(parse_args(&line).is_err(), "{line:?} parsed");
            assert_eq!(fail_closed_in(&line), *want, "{line:?}");
        }
    }

    #[test]
    fn timeouts_are_checked_without_panicking() {
        for bad in [
            "1e300", "inf", "-1", "NaN", "0", "1e-300", "", "ten", "86401",
        ] {
            let e = parse_args(&args(&["--timeout", bad])).unwrap_err();
            assert!(e.starts_with("--timeout: "), "{bad}: {e}");
        }
        assert_eq!(
            parse_args(&args(&["--timeout=86400"])).unwrap(),
            Command::Forward(Options {
                timeout: Some(MAX_TIMEOUT),
                ..Options::default()
            })
        );
    }

    /// A small fuzz: random lines of flags, values and junk never panic,
    /// and a refused line keeps at least the scope a `--fail-closed` in it
    /// asked for.
    #[test]
    fn random_argument_lines_never_panic_and_never_drop_fail_closed() {
        const POOL: &[&str] = &[
            "--timeout",
            "--timeout=",
            "--timeout=2",
            "1e300",
            "-1",
            "nan",
            "25",
            "0.001",
            "--fail-closed",
            "--fail-closed=all",
            "--fail-closed=tools",
            "--fail-closed=",
            "--fail-closed=x",
            "all",
            "--socket",
            "--socket=/s",
            "/tmp/x.sock",
            "--installed-by",
            "--installed-by=hookd",
            "--help=1",
            "-V=",
            "=",
            "--",
            "-",
            "",
            "--=",
            "é",
            "\u{0}",
            "--frob",
            "--timeout=1e400",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..20_000 {
            let len = (next() % 6) as usize;
            let mut line: Vec<OsString> = (0..len)
                .map(|_| OsString::from(POOL[(next() % POOL.len() as u64) as usize]))
                .collect();
            if next() % 8 == 0 {
                line.push(OsStr::from_bytes(b"--fail-closed=\xff").to_os_string());
            }
            let asked = line
                .iter()
                .any(|a| a.as_bytes().starts_with(b"--fail-closed"));
            match parse_args(&line) {
                Err(_) => {
                    if asked {
                        assert!(fail_closed_in(&line).is_on(), "{line:?}");
                    }
                }
                Ok(Command::Forward(options)) => {
                    assert!(options.fail_closed <= fail_closed_in(&line), "{line:?}");
                    if let Some(timeout) = options.timeout {
                        assert!(!timeout.is_zero() && timeout <= MAX_TIMEOUT, "{line:?}");
                    }
                }
                Ok(Command::Print(_)) => {}
            }
        }
    }

    #[test]
    fn arguments_come_from_argv() {
        let owned: Vec<CString> = ["hook-forwarder", "--fail-closed=all", "--socket", "/s p"]
            .iter()
            .map(|a| CString::new(*a).unwrap())
            .chain([CString::new(b"--x=\xff".to_vec()).unwrap()])
            .collect();
        let mut argv: Vec<*const c_char> = owned.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        // SAFETY: argv holds argc valid strings and a final null, as C's does.
        let got = unsafe { args_from_main(owned.len() as c_int, argv.as_ptr()) };
        assert_eq!(got.len(), 4, "the program name is skipped");
        assert_eq!(got[0], "--fail-closed=all");
        assert_eq!(got[2], "/s p");
        assert_eq!(got[3].as_bytes(), b"--x=\xff");
        assert_eq!(fail_closed_in(&got), FailClosed::All);
        // SAFETY: null and empty argument vectors are allowed.
        assert!(unsafe { args_from_main(0, std::ptr::null()) }.is_empty());
        assert!(unsafe { args_from_main(1, argv.as_ptr()) }.is_empty());
    }

    #[test]
    fn the_install_marker_is_accepted_and_ignored() {
        assert_eq!(
            parse_args(&args(&["--timeout", "25", "--installed-by=hookd"])).unwrap(),
            Command::Forward(Options {
                timeout: Some(Duration::from_secs(25)),
                ..Options::default()
            })
        );
        assert_eq!(
            parse_args(&args(&["--installed-by", "hookd"])).unwrap(),
            Command::Forward(Options::default())
        );
        assert!(parse_args(&args(&["--installed-by"]))
            .unwrap_err()
            .contains("needs a value"));
    }

    #[test]
    fn default_timeouts_sit_below_claude_codes() {
        for kind in HookEventKind::ALL.iter().copied() {
            let claude = Duration::from_millis(kind.claude_default_timeout_ms());
            assert!(default_timeout(kind) < claude, "{kind}");
        }
        assert_eq!(
            default_timeout(HookEventKind::SessionEnd),
            Duration::from_secs(1)
        );
        assert_eq!(default_timeout(HookEventKind::PreToolUse), DEFAULT_TIMEOUT);
    }

    #[test]
    fn fallback_line_is_one_parseable_line() {
        let line = fallback_line(
            "Pre Tool",
            FallbackReason::NoSocket,
            Path::new("/s.sock"),
            None,
        );
        assert_eq!(
            line,
            "hookd-forwarder: fallback event=Pre_Tool reason=no_socket socket=/s.sock\n"
        );
        let line = fallback_line(
            "PreToolUse",
            FallbackReason::BadArgs,
            Path::new("/s.sock"),
            Some("unknown argument `--x`\n"),
        );
        assert_eq!(
            line,
            "hookd-forwarder: fallback event=PreToolUse reason=bad_args socket=/s.sock detail=\"unknown argument `--x`\\n\"\n"
        );
    }

    #[test]
    fn the_probe_reads_any_json_and_names_broken_input() {
        let name = |text: &[u8]| match Input::probe(text) {
            Input::Json { name } => Ok(name),
            Input::Unreadable { name, error } => Err((name, error)),
        };
        let deep = format!(
            r#"{{"hook_event_name":"PreToolUse","x":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(name(deep.as_bytes()), Ok(Some("PreToolUse".into())));
        assert_eq!(
            name(br#"{"hook_event_name":"PreToolUse","tool_input":{"command":"rm \ud800"}}"#),
            Ok(Some("PreToolUse".into()))
        );
        assert_eq!(
            name(br#"{"hook_event_name":"Pre\udc00"}"#),
            Ok(Some("Pre\\udc00".into()))
        );
        assert_eq!(name(br#"{"hook_event_name":7}"#), Ok(None));
        let (found, error) = name(br#"{"hook_event_name":"Stop","x":"#).unwrap_err();
        assert_eq!(found.as_deref(), Some("Stop"));
        assert!(error.starts_with("stdin is not JSON"), "{error}");
        let (_, error) = name(b"{\"a\":\"\xff\"}").unwrap_err();
        assert!(error.contains("not UTF-8"), "{error}");
    }
}
