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
use crate::agent::claude::{probe, HookOutput};
use crate::agent::Agent;
use crate::install::{HttpHandler, Registration, Scope};
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
    /// The agent whose file registers it: the probe is its event, run and
    /// answered in its form.
    agent: Agent,
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
    /// An `http` hook: the daemon's listener answered.
    Posted {
        status: u16,
        body: String,
        elapsed: Duration,
    },
}

impl Ran {
    /// Whether the daemon answered it (so its decision should be logged).
    fn answered(&self) -> bool {
        match self {
            Ran::Exited { output, .. } => fallback_reason(&output.stderr).is_none(),
            Ran::Posted { status, .. } => (200..300).contains(status),
            _ => false,
        }
    }
}

/// The probe checks, one per distinct registration, in file order.
pub(super) fn checks(files: &[SettingsFile], project: &Path, daemon: &Daemon<'_>) -> Vec<Check> {
    let mut targets: Vec<Target<'_>> = Vec::new();
    for file in files {
        for registration in &file.inspection.registrations {
            // Claude Code runs identical handlers once: so does the probe.
            let again = targets.iter().any(|t| {
                t.agent == file.agent
                    && t.registration.event == registration.event
                    && t.registration.runs_as_one_with(registration)
            });
            if !again {
                targets.push(Target {
                    agent: file.agent,
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
            "no settings file registers hook-forwarder or a hookd http hook: nothing to probe",
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
        .filter(|(_, r)| r.answered())
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
    let agent = target.agent;
    let kind = agent.event_kind(&r.event);
    let input = match agent {
        Agent::ClaudeCode => probe::input(&r.event, &target.session, project),
        // Claude Code's probe of the same kind, under the agent's own
        // event (and shell tool) name.
        _ => {
            let shell_tool = (agent == Agent::Gemini).then_some("run_shell_command");
            let input = probe::input(kind.as_str(), &target.session, project);
            probe::renamed(input, &r.event, shell_tool)
        }
    };
    if let Some(http) = &r.http {
        return post_hook(http, &input, hook_timeout(agent, r));
    }
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
        .env_remove(crate::daemon::unjudged::RUN_ID_ENV);
    // What each agent adds to a hook's environment.
    match agent {
        Agent::ClaudeCode => {
            command
                .env("CLAUDE_PROJECT_DIR", project)
                .env("CLAUDECODE", "1")
                .env("CLAUDE_CODE_SESSION_ID", &target.session);
        }
        // Codex and Copilot add nothing; OpenCode and Pi run no command hooks.
        Agent::Codex | Agent::Copilot | Agent::OpenCode | Agent::Pi => {}
        Agent::Gemini => {
            command
                .env("CLAUDE_PROJECT_DIR", project)
                .env("GEMINI_PROJECT_DIR", project)
                .env("GEMINI_CWD", project)
                .env("GEMINI_SESSION_ID", &target.session);
        }
    }
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Like Claude Code: its own group, killed whole at the timeout.
        .process_group(0);
    let wait = hook_timeout(agent, r);
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

/// How long the agent gives `r`'s hook (at most [`LONGEST_WAIT`]).
fn hook_timeout(agent: Agent, r: &Registration) -> Duration {
    r.timeout
        .filter(|t| t.is_finite() && *t > 0.0)
        // Gemini's timeouts are milliseconds.
        .map(|t| {
            if agent == Agent::Gemini {
                t / 1000.0
            } else {
                t
            }
        })
        .map(Duration::from_secs_f64)
        .unwrap_or_else(|| {
            Duration::from_millis(agent.event_kind(&r.event).claude_default_timeout_ms())
        })
        .min(LONGEST_WAIT)
}

/// POSTs `input` to an `http` hook's URL as Claude Code would: JSON, with
/// its headers and the allowed variables expanded from doctor's
/// environment, given up at `wait`.
fn post_hook(http: &HttpHandler, input: &serde_json::Value, wait: Duration) -> Ran {
    let client = crate::outbound::agent(wait);
    let mut request = client
        .post(&http.url)
        .header("Content-Type", "application/json");
    for (name, value) in http.expanded_headers(|var| std::env::var(var).ok()) {
        request = request.header(name, value);
    }
    let started = Instant::now();
    match request.send(input.to_string()) {
        Ok(mut response) => Ran::Posted {
            status: response.status().as_u16(),
            body: response.body_mut().read_to_string().unwrap_or_default(),
            elapsed: started.elapsed(),
        },
        Err(ureq::Error::Timeout(_)) => Ran::TimedOut(wait),
        Err(e) => Ran::NotRun(format!("cannot reach {}: {e}", http.url)),
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
    let (name, reinstall) = match target.agent {
        Agent::ClaudeCode => (
            format!("probe:{}:{}", target.scope.as_str(), r.event),
            format!(
                "re-run `hookd install --scope {}` (it rewrites hookd's entries), then `hookd doctor --probe`",
                target.scope.as_str()
            ),
        ),
        agent => (
            format!("probe:{agent}:{}:{}", target.scope.as_str(), r.event),
            format!(
                "re-run `hookd install --agent {agent} --scope {}` (it rewrites hookd's entries), then `hookd doctor --probe`",
                target.scope.as_str()
            ),
        ),
    };
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
        Ran::Posted {
            status,
            body,
            elapsed,
        } => return judge_posted(target, (status, body, elapsed), logged, daemon, name),
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
    let kind = target.agent.event_kind(&r.event);
    let expected = target.agent.render(kind, &probe::answer(kind));
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
    confirmed(name, elapsed, logged, daemon)
}

/// The check for an `http` hook's probe, which the listener answered with
/// `status` and `body` after `elapsed`.
fn judge_posted(
    target: &Target<'_>,
    (status, body, elapsed): (u16, String, Duration),
    logged: Option<&Logged>,
    daemon: &Daemon<'_>,
    name: String,
) -> Check {
    let r = target.registration;
    if !(200..300).contains(&status) {
        let fix = match status {
            401 => format!(
                "Claude Code sends the token from ${}: `export {}=\"$(hookd http token)\"` where \
                 Claude Code gets its environment",
                crate::install::HTTP_TOKEN_ENV,
                crate::install::HTTP_TOKEN_ENV
            ),
            404 | 405 => "the URL is not hookd's listener: re-run `hookd install --transport http \
                          --http-url http://<the daemon's [http] listen>`"
                .to_string(),
            _ => "check the daemon's log (`journalctl --user -u hookd.service`)".to_string(),
        };
        return Check::fail(
            name,
            format!(
                "fell back (HTTP {status}: {}): Claude Code lets the action proceed",
                shorten(body.lines().next().unwrap_or_default())
            ),
            fix,
        );
    }
    let kind = target.agent.event_kind(&r.event);
    let expected =
        crate::agent::claude::output::http_body(&target.agent.render(kind, &probe::answer(kind)));
    let same = |a: &str, b: &str| match (
        serde_json::from_str::<serde_json::Value>(a),
        serde_json::from_str::<serde_json::Value>(b),
    ) {
        (Ok(a), Ok(b)) => a == b,
        _ => a.trim() == b.trim(),
    };
    if !same(&body, &expected) {
        let fix = match logged.and_then(|l| l.source.as_deref()) {
            Some(source) if source != "probe" => {
                format!("the daemon judged the probe (source {source}): {OLDER_DAEMON}")
            }
            _ => "the URL must be hookd's `/hook/claude-code`: re-run `hookd install --transport \
                  http`"
                .to_string(),
        };
        return Check::fail(
            name,
            format!(
                "wrong answer: expected body {:?}, got {:?}",
                expected.trim(),
                shorten(body.trim())
            ),
            fix,
        );
    }
    confirmed(name, elapsed, logged, daemon)
}

/// A probe the hook answered as the daemon answers probes: passes when the
/// daemon's log has it as a probe.
fn confirmed(
    name: String,
    elapsed: Duration,
    logged: Option<&Logged>,
    daemon: &Daemon<'_>,
) -> Check {
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
