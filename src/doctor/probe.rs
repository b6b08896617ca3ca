//! `hookd doctor --probe`: run every registered hook command the way Claude
//! Code would, with a synthetic event, and check that the daemon answered
//! it, logged it, and that the hook printed exactly what Claude Code honors.
//!
//! Per registration (identical handlers once, as Claude Code runs them):
//! the command with its args (`${CLAUDE_PROJECT_DIR}` substituted; a
//! shell-form command through `bash -c`), in the project directory, with
//! doctor's environment plus what Claude Code adds (`CLAUDE_PROJECT_DIR`,
//! `CLAUDECODE`, `CLAUDE_CODE_SESSION_ID`), the probe input
//! ([`crate::agent::claude::probe::input`]) and a newline on stdin, and its own
//! process group killed at its `timeout`. Then:
//! - it could not run, timed out, died, exited with neither 0 nor 2, or
//!   printed the forwarder's `fallback` line → `✗ fell back (reason)`;
//! - its exit code, stdout and stderr differ from
//!   [`crate::agent::claude::render`] of [`crate::agent::claude::probe::answer`] →
//!   `✗ wrong output`;
//! - the daemon's log has no probe event for its session with a `probe`
//!   decision → `✗ not logged`;
//! - else `✓ answered by the daemon in N ms`.
//!
//! A probe's session id is `hookd-probe-<uuid>`, so it never touches a
//! real session, and its answer never grants anything.

use std::collections::HashMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Check, SettingsFile};
use crate::agent::claude::{probe, render, HookEventKind, HookOutput};
use crate::install::{Registration, Scope};
use crate::protocol::log::LogRecord;

/// The longest doctor waits for one hook, whatever its `timeout` says (a
/// timeout written in milliseconds would otherwise hold doctor for hours;
/// the settings check flags those).
const LONGEST_WAIT: Duration = Duration::from_secs(60);

/// How long the daemon's log writer gets to write the probes' lines.
const LOG_WAIT: Duration = Duration::from_secs(3);

/// The fix when a daemon judges a probe instead of answering it as one.
const OLDER_DAEMON: &str =
    "the daemon does not know probes, so it is older than this hookd: restart it";

/// Where the daemon that answers `status` logs, if it answered.
pub(super) struct Daemon<'a> {
    /// The socket doctor checked.
    pub socket: &'a Path,
    /// The daemon's event log, from `status`.
    pub log: Option<&'a Path>,
}

/// One registration to probe.
struct Target<'a> {
    scope: Scope,
    registration: &'a Registration,
    session: String,
}

/// What running one hook command gave.
enum Ran {
    /// It could not be started.
    NotRun(String),
    /// It did not exit within its timeout, so it was killed.
    TimedOut(Duration),
    /// It died of a signal, or waiting for it failed.
    Died(String),
    /// It exited.
    Exited {
        output: HookOutput,
        elapsed: Duration,
    },
}

/// The probe checks, one per distinct registration, in file order.
pub(super) fn checks(files: &[SettingsFile], project: &Path, daemon: &Daemon<'_>) -> Vec<Check> {
    let mut targets: Vec<Target<'_>> = Vec::new();
    for file in files {
        for registration in &file.inspection.registrations {
            // Claude Code runs identical handlers once: so does the probe.
            let again = targets.iter().any(|t| {
                t.registration.event == registration.event
                    && t.registration.runs_as_one_with(registration)
            });
            if !again {
                targets.push(Target {
                    scope: file.scope,
                    registration,
                    session: format!("{}{}", probe::SESSION_PREFIX, crate::event::new_id()),
                });
            }
        }
    }
    if targets.is_empty() {
        return vec![Check::fail(
            "probe",
            "no settings file registers hook-forwarder: nothing to probe",
            "`hookd install` (every project) or `hookd install --scope project`",
        )];
    }
    let log_start = daemon
        .log
        .and_then(|log| fs::metadata(log).ok())
        .map_or(0, |m| m.len());
    let ran: Vec<Ran> = std::thread::scope(|scope| {
        let handles: Vec<_> = targets
            .iter()
            .map(|t| scope.spawn(|| run_hook(t, project)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Ran::Died("the probe thread panicked".into()))
            })
            .collect()
    });
    let answered: Vec<&str> = targets
        .iter()
        .zip(&ran)
        .filter(|(_, r)| matches!(r, Ran::Exited { output, .. } if fallback_reason(&output.stderr).is_none()))
        .map(|(t, _)| t.session.as_str())
        .collect();
    let logged = daemon
        .log
        .map(|log| logged_probes(log, log_start, &answered))
        .unwrap_or_default();
    targets
        .iter()
        .zip(ran)
        .map(|(target, ran)| judge(target, ran, logged.get(&target.session), daemon))
        .collect()
}

/// Runs `target`'s command as Claude Code would run a hook.
fn run_hook(target: &Target<'_>, project: &Path) -> Ran {
    let r = target.registration;
    let input = probe::input(&r.event, &target.session, project);
    let project_dir = project.display().to_string();
    let mut command = match &r.shell_command {
        Some(_) if r.shell.as_deref().is_some_and(|s| s != "bash") => {
            return Ran::NotRun(format!(
                "a hook for shell {} cannot be probed here",
                r.shell.as_deref().unwrap_or_default()
            ))
        }
        Some(line) => {
            let mut c = Command::new("bash");
            c.arg("-c").arg(line);
            c
        }
        None => {
            let mut c = Command::new(&r.command);
            c.args(
                r.args
                    .iter()
                    .map(|a| a.replace("${CLAUDE_PROJECT_DIR}", &project_dir)),
            );
            c
        }
    };
    command
        .current_dir(project)
        .env_remove(crate::daemon::unjudged::RUN_ID_ENV)
        .env("CLAUDE_PROJECT_DIR", project)
        .env("CLAUDECODE", "1")
        .env("CLAUDE_CODE_SESSION_ID", &target.session)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Like Claude Code: its own group, killed whole at the timeout.
        .process_group(0);
    let limit = r
        .timeout
        .filter(|t| t.is_finite() && *t > 0.0)
        .map(Duration::from_secs_f64)
        .unwrap_or_else(|| {
            Duration::from_millis(HookEventKind::from_name(&r.event).claude_default_timeout_ms())
        });
    let wait = limit.min(LONGEST_WAIT);
    let started = Instant::now();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(e) => {
            return Ran::NotRun(format!(
                "cannot run {}: {e}",
                command.get_program().to_string_lossy()
            ))
        }
    };
    let mut stdin = child.stdin.take().expect("piped");
    let mut line = input.to_string().into_bytes();
    line.push(b'\n');
    // From threads: neither a hook that does not read its stdin nor one
    // that fills its stdout may stall the others.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&line);
    });
    let read = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = read(Box::new(child.stdout.take().expect("piped")));
    let stderr = read(Box::new(child.stderr.take().expect("piped")));
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if started.elapsed() >= wait => {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(child.id() as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
                let _ = child.wait();
                break Err(Ran::TimedOut(wait));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => break Err(Ran::Died(format!("waiting for {}: {e}", r.command))),
        }
    };
    let elapsed = started.elapsed();
    let _ = writer.join();
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    match status {
        Err(ran) => ran,
        Ok(status) => match status.code() {
            Some(exit_code) => Ran::Exited {
                output: HookOutput {
                    exit_code,
                    stdout,
                    stderr,
                },
                elapsed,
            },
            None => Ran::Died(format!(
                "killed by signal {}",
                status.signal().unwrap_or_default()
            )),
        },
    }
}

/// The `reason=` of the forwarder's fallback line in `stderr`, if any.
fn fallback_reason(stderr: &str) -> Option<(&str, Option<&str>)> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("hookd-forwarder: fallback "))?;
    let field = |key: &str| {
        line.split_whitespace()
            .find_map(|word| word.strip_prefix(key))
    };
    Some((field("reason=").unwrap_or("unknown"), field("socket=")))
}

/// What the daemon's log says about one probe: its event and decision.
#[derive(Debug, Default, Clone)]
struct Logged {
    /// The decision's source (`probe` from a daemon that recognises probes).
    source: Option<String>,
}

/// Waits (at most [`LOG_WAIT`]) until each of `sessions` has an event and
/// a decision in `log` after byte `start`, and returns what was found.
fn logged_probes(log: &Path, start: u64, sessions: &[&str]) -> HashMap<String, Logged> {
    let deadline = Instant::now() + LOG_WAIT;
    loop {
        let found = read_probes(log, start);
        let complete = sessions
            .iter()
            .all(|s| found.get(*s).is_some_and(|l| l.source.is_some()));
        if complete || Instant::now() >= deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The probes' events and decisions in `log` from byte `start` on (and in
/// its first rotation, if the log rotated since).
fn read_probes(log: &Path, start: u64) -> HashMap<String, Logged> {
    let mut rotated = log.as_os_str().to_os_string();
    rotated.push(".1");
    let len = fs::metadata(log).map_or(0, |m| m.len());
    let mut text = String::new();
    let mut read_from = |path: &Path, offset: u64| {
        if let Ok(mut file) = fs::File::open(path) {
            let mut bytes = Vec::new();
            if file.seek(SeekFrom::Start(offset)).is_ok() && file.read_to_end(&mut bytes).is_ok() {
                text.push_str(&String::from_utf8_lossy(&bytes));
                text.push('\n');
            }
        }
    };
    if len >= start {
        read_from(log, start);
    } else {
        read_from(Path::new(&rotated), start);
        read_from(log, 0);
    }
    let mut sessions: HashMap<String, Logged> = HashMap::new();
    let mut event_session: HashMap<uuid::Uuid, String> = HashMap::new();
    for line in text.lines() {
        match LogRecord::parse(line.as_bytes()) {
            Ok(LogRecord::Event(event)) => {
                if let Some(session) = event.session_id {
                    if session.starts_with(probe::SESSION_PREFIX) {
                        sessions.entry(session.clone()).or_default();
                        event_session.insert(event.id, session);
                    }
                }
            }
            Ok(LogRecord::Decision(logged)) => {
                if let Some(session) = event_session.get(&logged.decision.event_id) {
                    sessions.entry(session.clone()).or_default().source =
                        Some(logged.decision.source.to_string());
                }
            }
            _ => {}
        }
    }
    sessions
}

/// The check for one probe.
fn judge(target: &Target<'_>, ran: Ran, logged: Option<&Logged>, daemon: &Daemon<'_>) -> Check {
    let r = target.registration;
    let name = format!("probe:{}:{}", target.scope.as_str(), r.event);
    let reinstall = format!(
        "re-run `hookd install --scope {}` (it rewrites hookd's entries), then `hookd doctor --probe`",
        target.scope.as_str()
    );
    let (output, elapsed) = match ran {
        Ran::NotRun(why) => return Check::fail(name, format!("fell back ({why})"), reinstall),
        Ran::TimedOut(after) => {
            return Check::fail(
                name,
                format!(
                    "fell back (timeout): no answer within {}s, when Claude Code kills the hook \
                     and lets the action proceed",
                    after.as_secs_f64()
                ),
                "the forwarder's --timeout must be below the hook's timeout; check that the \
                 registered command is hook-forwarder and that `hookd status` answers",
            )
        }
        Ran::Died(why) => {
            return Check::fail(
                name,
                format!("fell back ({why}): Claude Code lets the action proceed"),
                reinstall,
            )
        }
        Ran::Exited { output, elapsed } => (output, elapsed),
    };
    if let Some((reason, socket)) = fallback_reason(&output.stderr) {
        let at = socket.map_or(String::new(), |s| format!(" at {s}"));
        let fix = match reason {
            "no_socket" | "connect_refused" | "connect_failed" | "permission_denied" => format!(
                "start hookd on {} (`systemctl --user start hookd.socket`, or `hookd serve`), \
                 or make Claude Code's HOOKD_SOCKET the socket hookd serves",
                socket.unwrap_or("the hook's socket")
            ),
            "timeout" => "the daemon did not answer before the forwarder's --timeout: check \
                          `hookd status` and the daemon's log"
                .to_string(),
            "bad_args" => reinstall,
            _ => "check the daemon's log (`journalctl --user -u hookd.service`)".to_string(),
        };
        return Check::fail(
            name,
            format!("fell back ({reason}): the forwarder could not get the daemon's answer{at}"),
            fix,
        );
    }
    let kind = HookEventKind::from_name(&r.event);
    let expected = render(kind, &probe::answer(kind));
    if !matches!(output.exit_code, 0 | 2) {
        // What a hook that failed looks like to Claude Code (the forwarder
        // itself never exits so).
        return Check::fail(
            name,
            format!(
                "fell back (exit {}: {}): Claude Code reports a non-blocking error and lets the \
                 action proceed",
                output.exit_code,
                shorten(output.stderr.lines().next().unwrap_or("no stderr"))
            ),
            reinstall,
        );
    }
    if output != expected {
        let judged_by_rules = logged
            .and_then(|l| l.source.as_deref())
            .filter(|s| *s != "probe");
        let message = format!(
            "wrong output: expected exit {} with stdout {:?} and stderr {:?}, got exit {} with stdout {:?} and stderr {:?}",
            expected.exit_code,
            expected.stdout,
            expected.stderr,
            output.exit_code,
            shorten(&output.stdout),
            shorten(&output.stderr),
        );
        let fix = match judged_by_rules {
            Some(source) => {
                format!("the daemon judged the probe (source {source}): {OLDER_DAEMON}")
            }
            None => "register hook-forwarder itself (`hookd install`); a wrapper must pass the \
                     forwarder's stdout, stderr and exit code through unchanged"
                .to_string(),
        };
        return Check::fail(name, message, fix);
    }
    let Some(log) = daemon.log else {
        return Check::fail(
            name,
            format!(
                "answered, but no daemon answers `status` at {} to say where it logs, so \
                 the answer cannot be confirmed",
                daemon.socket.display()
            ),
            "start the daemon, or pass the socket Claude Code's hooks use with --socket",
        );
    };
    match logged.and_then(|l| l.source.as_deref()) {
        Some("probe") => Check::pass(
            name,
            format!("answered by the daemon in {} ms", elapsed.as_millis()),
        ),
        Some(source) => Check::fail(
            name,
            format!("answered, but the daemon judged it as an ordinary hook (source {source})"),
            OLDER_DAEMON,
        ),
        None => Check::fail(
            name,
            format!(
                "answered, but the log of the daemon at {} ({}) has no such event",
                daemon.socket.display(),
                log.display()
            ),
            "the hook reached another daemon: make Claude Code's HOOKD_SOCKET the daemon's \
             socket (or pass that socket with --socket); `hookd status` shows log_dropped",
        ),
    }
}

/// `text`, cut to a readable length for a one-line message.
fn shorten(text: &str) -> String {
    const MAX: usize = 200;
    match text.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
