//! `hook-forwarder`: the command hook Claude Code spawns for every hook.
//!
//! It connects to the daemon, reads the hook's stdin to EOF, sends one `hook`
//! frame, waits for one `hook_result` and prints it verbatim. It must cost
//! about as much as spawning `/bin/true`, so it is std + serde_json only: no
//! async runtime, no logging framework, no configuration file.
//!
//! When anything goes wrong (no daemon, deadline, bad reply) it applies the
//! event's fallback (see [`crate::claude::output::fallback`]) and prints
//! exactly one machine-parseable line on stderr:
//!
//! ```text
//! hookd-forwarder: fallback event=PreToolUse reason=no_socket socket=/run/user/1000/hookd/hookd.sock
//! ```
//!
//! Architecture invariant: it never spawns a process (a daemon that inherited
//! its stdout would make Claude Code refuse the hook's output) and never
//! prints anything but the daemon's answer or the fallback.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use crate::claude::output::{self, HookOutput};
use crate::claude::HookEventKind;
use crate::protocol::forwarder::{decode_reply, encode_hook};
use crate::protocol::{Reply, DEFAULT_MAX_FRAME};

/// The forwarder's deadline when `--timeout` is not given: below Claude Code's
/// own 30 s default for UserPromptSubmit, so the ladder holds with an
/// unconfigured registration too. Shorter defaults apply per event, see
/// [`default_timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(25);

const USAGE: &str = "\
usage: hook-forwarder [--timeout SECS] [--fail-closed] [--socket PATH] [--installed-by=WHO]

Registered as a command hook in Claude Code's settings.json: reads the hook's
JSON on stdin, asks the hookd daemon, prints its decision.

  --timeout SECS   deadline for the whole exchange (default: 25, or two thirds
                   of Claude Code's default timeout for events with a shorter one)
  --fail-closed    when the daemon cannot answer, block guarded events
                   (PreToolUse, PermissionRequest, ...) instead of no opinion
  --socket PATH    daemon socket (default: $HOOKD_SOCKET, then
                   $XDG_RUNTIME_DIR/hookd/hookd.sock, then /tmp/hookd-$UID/hookd.sock)
  --installed-by=WHO  ignored: marks the entries `hookd install` wrote
";

/// Command-line options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Options {
    /// `--timeout`.
    pub timeout: Option<Duration>,
    /// `--fail-closed`.
    pub fail_closed: bool,
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

/// Parses the arguments (without the program name).
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| format!("argument {a:?} is not UTF-8"))?;
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg, None),
        };
        let mut value = |name: &str| -> Result<OsString, String> {
            inline
                .clone()
                .map(OsString::from)
                .or_else(|| args.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--timeout" => {
                let v = value("--timeout")?;
                let secs: f64 = v
                    .to_str()
                    .and_then(|s| s.parse().ok())
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| {
                        format!("--timeout: {v:?} is not a positive number of seconds")
                    })?;
                options.timeout = Some(Duration::from_secs_f64(secs));
            }
            "--fail-closed" => options.fail_closed = true,
            "--socket" => options.socket = Some(PathBuf::from(value("--socket")?)),
            // Written by `hookd install` so `hookd uninstall` can recognise its
            // own entries (see `crate::install::MARKER_ARG`); it changes nothing.
            "--installed-by" => {
                value("--installed-by")?;
            }
            "-h" | "--help" => return Ok(Command::Print(USAGE.to_string())),
            "-V" | "--version" => {
                return Ok(Command::Print(format!(
                    "hook-forwarder {}\n",
                    env!("CARGO_PKG_VERSION")
                )))
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(Command::Forward(options))
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
    /// stdin was not one JSON value.
    BadInput,
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
            FallbackReason::BadInput => "bad_input",
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

/// Just enough of the hook input to pick the fallback; serde skips the rest
/// while still checking that stdin is one valid JSON value.
#[derive(Deserialize)]
struct Probe {
    hook_event_name: Option<String>,
}

/// Runs the forwarder with the process's args, env and stdio; returns the exit code.
pub fn main() -> i32 {
    let started = Instant::now();
    let options = match parse_args(std::env::args_os().skip(1)) {
        Ok(Command::Forward(options)) => Ok(options),
        Ok(Command::Print(text)) => {
            let _ = io::stdout().write_all(text.as_bytes());
            return 0;
        }
        Err(message) => Err(message),
    };
    let (options, bad_args) = match options {
        Ok(o) => (o, false),
        Err(_) => (Options::default(), true),
    };
    let socket = options
        .socket
        .clone()
        .unwrap_or_else(crate::paths::socket_path);
    // Connect before reading stdin: Claude Code has already written it, and a
    // missing daemon is then known without waiting on anything.
    let stream = UnixStream::connect(&socket);

    let mut input = Vec::new();
    let read = io::stdin().lock().read_to_end(&mut input);
    let probe = serde_json::from_slice::<Probe>(&input).ok();
    let name = probe.as_ref().and_then(|p| p.hook_event_name.clone());
    let kind = HookEventKind::from_name(name.as_deref().unwrap_or(""));
    let event = name.unwrap_or_else(|| "unknown".into());

    let outcome = if bad_args {
        Err(FallbackReason::BadArgs)
    } else if read.is_err() || probe.is_none() {
        Err(FallbackReason::BadInput)
    } else {
        let budget = options.timeout.unwrap_or_else(|| default_timeout(kind));
        stream
            .map_err(|e| FallbackReason::from_connect(&e))
            .and_then(|s| exchange(s, &input, options.fail_closed, started + budget))
    };
    let out = match outcome {
        Ok(out) => out,
        Err(reason) => {
            let mut out = output::fallback(kind, options.fail_closed, reason.as_str());
            out.stderr = fallback_line(&event, reason, &socket);
            out
        }
    };
    let _ = io::stdout().write_all(out.stdout.as_bytes());
    let _ = io::stdout().flush();
    let _ = io::stderr().write_all(out.stderr.as_bytes());
    out.exit_code
}

/// The one stderr line printed on fallback.
pub fn fallback_line(event: &str, reason: FallbackReason, socket: &Path) -> String {
    format!(
        "hookd-forwarder: fallback event={} reason={} socket={}\n",
        event.replace(char::is_whitespace, "_"),
        reason.as_str(),
        socket.display()
    )
}

/// Sends the hook frame and waits for the matching `hook_result`.
fn exchange(
    mut stream: UnixStream,
    input: &[u8],
    fail_closed: bool,
    deadline: Instant,
) -> Result<HookOutput, FallbackReason> {
    let remaining = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or(FallbackReason::Timeout)
    };
    let id = request_id();
    let env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("CLAUDE") || k == "HOOKD_RUN_ID")
        .collect();
    let budget_ms = remaining()?.as_millis() as u64;
    let frame = encode_hook(&id, budget_ms, fail_closed, &env, input);

    let io_err = |e: io::Error| FallbackReason::from_io(&e);
    stream
        .set_write_timeout(Some(remaining()?))
        .map_err(io_err)?;
    // If the write fails, the daemon may already have said why before it
    // closed (an `error` frame, e.g. a refused uid): read that first.
    let write_failed = stream.write_all(&frame).err().map(io_err);

    let mut reply = Vec::with_capacity(4096);
    let mut chunk = [0u8; 16 * 1024];
    let line_end = loop {
        stream
            .set_read_timeout(Some(remaining()?))
            .map_err(io_err)?;
        let n = match stream.read(&mut chunk) {
            Ok(0) => return Err(write_failed.unwrap_or(FallbackReason::Closed)),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(write_failed.unwrap_or_else(|| io_err(e))),
        };
        let scanned = reply.len();
        reply.extend_from_slice(&chunk[..n]);
        if let Some(pos) = reply[scanned..].iter().position(|&b| b == b'\n') {
            break scanned + pos;
        }
        if reply.len() > DEFAULT_MAX_FRAME {
            return Err(FallbackReason::BadReply);
        }
    };
    match decode_reply(&reply[..line_end]) {
        Ok(Reply::HookResult(r)) if r.id == id => Ok(HookOutput {
            exit_code: r.exit_code,
            stdout: r.stdout,
            stderr: r.stderr,
        }),
        Ok(Reply::Error(_)) => Err(FallbackReason::DaemonError),
        _ => Err(FallbackReason::BadReply),
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

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_flags() {
        let cmd = parse_args(args(&[
            "--timeout",
            "2.5",
            "--fail-closed",
            "--socket=/x.sock",
        ]));
        assert_eq!(
            cmd.unwrap(),
            Command::Forward(Options {
                timeout: Some(Duration::from_millis(2500)),
                fail_closed: true,
                socket: Some("/x.sock".into()),
            })
        );
        assert!(parse_args(args(&["--timeout", "0"]))
            .unwrap_err()
            .contains("--timeout"));
        assert!(parse_args(args(&["--timeout"]))
            .unwrap_err()
            .contains("needs a value"));
        assert!(parse_args(args(&["--frob"]))
            .unwrap_err()
            .contains("--frob"));
        assert!(matches!(
            parse_args(args(&["--help"])),
            Ok(Command::Print(_))
        ));
    }

    #[test]
    fn the_install_marker_is_accepted_and_ignored() {
        assert_eq!(
            parse_args(args(&["--timeout", "25", "--installed-by=hookd"])).unwrap(),
            Command::Forward(Options {
                timeout: Some(Duration::from_secs(25)),
                ..Options::default()
            })
        );
        assert_eq!(
            parse_args(args(&["--installed-by", "hookd"])).unwrap(),
            Command::Forward(Options::default())
        );
        assert!(parse_args(args(&["--installed-by"]))
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
        let line = fallback_line("Pre Tool", FallbackReason::NoSocket, Path::new("/s.sock"));
        assert_eq!(
            line,
            "hookd-forwarder: fallback event=Pre_Tool reason=no_socket socket=/s.sock\n"
        );
    }
}
