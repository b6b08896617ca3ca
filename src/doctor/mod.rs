//! `hookd doctor`: is everything in place for the agents' hooks to reach
//! hookd? One check per line, each with ✓ or ✗ and, when something is
//! wrong, what to do about it; `·` marks a note: something optional that is
//! not set up (the Agent SDK adapter, Claude Code when only Codex or Gemini
//! is registered, no hook fired yet), which never fails the report.
//!
//! The checks, in order: the forwarder `hookd install` would register; the
//! socket path and its directory; the daemon (`status`); each settings file
//! (user, project, local), what it registers and which events it fails closed
//! for; every event covered exactly
//! once; hookd's http hooks, if any (the listener, its address, the token);
//! the rules files; the event log; and whether hooks really fire (the
//! last agent's event in the log). Read-only: doctor creates, starts and
//! changes nothing.

use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::agent::claude::{FailClosed, HookEventKind};
use crate::agent::Agent;
use crate::install::{self, Inspection, Scope};
use crate::protocol::log::{LogRecord, LoggedEvent};

mod agents;
mod coverage;
mod plugins;
mod probe;

/// A Claude Code `timeout` at or above this is almost certainly meant as
/// milliseconds (Claude Code reads seconds: 1000 is over 16 minutes).
pub const MILLISECONDS_SUSPECT: f64 = 1000.0;

/// How long doctor waits for the daemon's `status` reply.
const STATUS_TIMEOUT: Duration = Duration::from_secs(3);

/// The tail of the log searched for the last Claude Code event.
const LOG_TAIL_BYTES: u64 = 8 * 1024 * 1024;

/// What to check.
#[derive(Debug, Clone)]
pub struct DoctorOptions {
    /// The daemon's socket (`--socket`, else the default resolution).
    pub socket: PathBuf,
    /// Where the project and local settings are looked for.
    pub project: PathBuf,
    /// The forwarder `hookd install` would register.
    pub forwarder: PathBuf,
    /// The user settings file (`None` when neither CLAUDE_CONFIG_DIR nor HOME is set).
    pub user_settings: Option<PathBuf>,
    /// The log when the daemon cannot tell (`$XDG_STATE_HOME/hookd/events.jsonl`).
    pub default_log: Option<PathBuf>,
    /// The rules file when the daemon cannot tell (`$XDG_CONFIG_HOME/hookd/rules.toml`).
    pub default_rules: Option<PathBuf>,
    /// The events a complete registration covers.
    pub events: Vec<HookEventKind>,
    /// Codex's and Gemini's registration files (user and project scope),
    /// checked when they exist.
    pub agent_settings: Vec<(Agent, Scope, PathBuf)>,
    /// Also run every registered hook command with a synthetic event
    /// (`--probe`, see `doctor/probe.rs`).
    pub probe: bool,
}

impl DoctorOptions {
    /// The defaults from the environment, for `socket` and `project`.
    pub fn from_env(socket: PathBuf, project: PathBuf) -> anyhow::Result<DoctorOptions> {
        Ok(DoctorOptions {
            agent_settings: agent_settings(&project),
            socket,
            project,
            forwarder: install::sibling_forwarder()?,
            user_settings: install::claude_config_dir()
                .ok()
                .map(|d| d.join("settings.json")),
            default_log: crate::paths::default_log_path(),
            default_rules: crate::paths::default_rules_path(),
            events: install::default_events(),
            probe: false,
        })
    }
}

/// Codex's, Gemini's and Copilot's registration files in user and project
/// scope.
fn agent_settings(project: &Path) -> Vec<(Agent, Scope, PathBuf)> {
    let mut files = Vec::new();
    for agent in [Agent::Codex, Agent::Gemini, Agent::Copilot] {
        for scope in [Scope::User, Scope::Project] {
            if let Ok(path) = install::agent_settings_path(agent, scope, project) {
                files.push((agent, scope, path));
            }
        }
    }
    files
}

/// One check's result.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Short name (`forwarder`, `socket`, `daemon`, `settings:user`, …).
    pub name: String,
    /// Whether it passed (a note passes).
    pub ok: bool,
    /// A note: something optional is absent or not used yet. Failures are
    /// for what is broken; a setup without the Agent SDK adapter, or with
    /// only Codex registered, is not.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub note: bool,
    /// What was found.
    pub message: String,
    /// What to do, when it failed; for a note, how to set the part up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn pass(name: impl Into<String>, message: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: true,
            note: false,
            message: message.into(),
            fix: None,
        }
    }

    fn note(name: impl Into<String>, message: impl Into<String>, how: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: true,
            note: true,
            message: message.into(),
            fix: Some(how.into()),
        }
    }

    fn fail(name: impl Into<String>, message: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: false,
            note: false,
            message: message.into(),
            fix: Some(fix.into()),
        }
    }
}

/// Every check, in order.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// True when every check passed.
    pub ok: bool,
    /// The checks.
    pub checks: Vec<Check>,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The alternate form (`{:#}`) colours the marks; the CLI strips
        // the escape codes where colour is not allowed.
        let (good, bad) = match f.alternate() {
            true => (crate::style::GOOD, crate::style::BAD),
            false => (anstyle::Style::new(), anstyle::Style::new()),
        };
        for c in &self.checks {
            let (style, mark) = match (c.ok, c.note) {
                (true, false) => (good, "✓"),
                (true, true) => (anstyle::Style::new(), "·"),
                (false, _) => (bad, "✗"),
            };
            write!(f, "{style}{mark}{style:#} {}: {}", c.name, c.message)?;
            match &c.fix {
                Some(how) if c.note => write!(f, " → {how}")?,
                Some(fix) => write!(f, " → fix: {fix}")?,
                None => {}
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// Runs every check.
pub fn run(options: &DoctorOptions) -> Report {
    let mut checks = vec![
        check_forwarder(&options.forwarder),
        check_socket(&options.socket),
    ];
    let (daemon_check, status) = check_daemon(&options.socket);
    checks.push(daemon_check);

    let mut files = check_claude_settings(options, &mut checks);
    // Codex's and Gemini's files are read first: whether the coverage of
    // Claude Code's is a failure depends on them. Their lines come after.
    let (agent_checks, probed) = check_agent_settings(&options.agent_settings);
    let (plugin_checks, plugin_files) = plugins::checks(
        &options.project,
        options.probe.then_some(options.socket.as_path()),
    );
    let mut other_agents: Vec<String> = probed
        .iter()
        .filter(|f| !f.inspection.registrations.is_empty())
        .map(|f| format!("{} ({})", f.agent.display_name(), f.path.display()))
        .collect();
    other_agents.extend(plugin_files);
    checks.push(check_coverage(&files, &options.events, &other_agents));
    checks.extend(check_http(&files, status.as_ref(), &|var| {
        std::env::var(var).ok()
    }));
    checks.extend(agent_checks);
    checks.extend(plugin_checks);
    // Codex skips untrusted hooks silently: the daemon cannot see it.
    checks.extend(
        probed
            .iter()
            .filter(|f| f.agent == Agent::Codex && f.scope == Scope::User)
            .filter_map(|f| {
                let mut events: Vec<&str> = f
                    .inspection
                    .registrations
                    .iter()
                    .map(|r| r.event.as_str())
                    .collect();
                events.dedup();
                coverage::codex_trust(&f.path, &events)
            }),
    );
    checks.extend(
        status
            .as_ref()
            .map(|s| coverage::unjudged(&s.coverage))
            .unwrap_or_default(),
    );
    files.extend(probed);

    let rules = status
        .as_ref()
        .map(|s| s.rules.source.as_str())
        .filter(|s| *s != "defaults")
        .map(PathBuf::from)
        .or_else(|| options.default_rules.clone().filter(|p| p.exists()));
    checks.push(check_rules(rules.as_deref(), &options.project));
    checks.extend(status.as_ref().and_then(|s| check_policy(&s.rules)));
    checks.extend(
        status
            .as_ref()
            .and_then(|s| s.config.as_ref())
            .and_then(check_config),
    );

    let log = status
        .as_ref()
        .map(|s| s.log.clone())
        .or_else(|| options.default_log.clone());
    checks.push(check_log(log.as_deref()));
    checks.push(check_fired(log.as_deref(), SystemTime::now()));
    // The running daemon's adapter, else the one it would use.
    let adapter = status
        .as_ref()
        .map(|s| s.adapter_dir.clone())
        .or_else(|| std::env::var_os("HOOKD_ADAPTER_DIR").map(PathBuf::from))
        .map_or_else(crate::adapter::default_dir, Ok);
    checks.push(check_adapter(adapter));
    if options.probe {
        let daemon = probe::Daemon {
            socket: &options.socket,
            log: status.as_ref().map(|s| s.log.as_path()),
        };
        checks.extend(probe::checks(&files, &options.project, &daemon));
    }

    Report {
        ok: checks.iter().all(|c| c.ok),
        checks,
    }
}

/// The checks of Claude Code's settings files, one a scope (a file found
/// twice, as the project's and the user's in the home directory, is
/// checked once) and hookd's managed file when installed, pushed to
/// `checks`; the files that could be read, for the coverage and the probe.
fn check_claude_settings(options: &DoctorOptions, checks: &mut Vec<Check>) -> Vec<SettingsFile> {
    let mut files = Vec::new();
    let mut seen_paths: Vec<(Scope, PathBuf)> = Vec::new();
    for scope in Scope::ALL {
        let path = match scope {
            Scope::User => options.user_settings.clone(),
            _ => install::settings_path(scope, &options.project).ok(),
        };
        let Some(path) = path else {
            checks.push(Check::fail(
                format!("settings:{}", scope.as_str()),
                "cannot locate the user settings: neither CLAUDE_CONFIG_DIR nor HOME is set",
                "set HOME",
            ));
            continue;
        };
        // In the home directory the project file *is* the user file:
        // count it once.
        let same = fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if let Some((earlier, _)) = seen_paths.iter().find(|(_, p)| *p == same) {
            checks.push(Check::pass(
                format!("settings:{}", scope.as_str()),
                format!(
                    "{}: the same file as settings:{}",
                    path.display(),
                    earlier.as_str()
                ),
            ));
            continue;
        }
        seen_paths.push((scope, same));
        let (check, inspection) = check_settings(scope, &path);
        checks.push(check);
        if let Some(inspection) = inspection {
            files.push(SettingsFile {
                agent: Agent::ClaudeCode,
                scope,
                path,
                inspection,
            });
        }
    }
    // hookd's managed settings file, when an administrator installed it.
    let managed = install::managed::settings_file();
    if managed.exists() {
        let (check, inspection) = check_settings(Scope::Managed, &managed);
        checks.push(check);
        if let Some(inspection) = inspection {
            files.push(SettingsFile {
                agent: Agent::ClaudeCode,
                scope: Scope::Managed,
                path: managed,
                inspection,
            });
        }
    }
    files
}

/// The checks of the other agents' settings files (each file once), and
/// the files that could be read, probed with Claude Code's.
fn check_agent_settings(settings: &[(Agent, Scope, PathBuf)]) -> (Vec<Check>, Vec<SettingsFile>) {
    let mut agent_checks = Vec::new();
    let mut agent_files: Vec<PathBuf> = Vec::new();
    let mut probed = Vec::new();
    for (agent, scope, path) in settings {
        // In the home directory the project file is the user file.
        let same = fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if agent_files.contains(&same) {
            continue;
        }
        agent_files.push(same);
        if let Some((check, inspection)) = agents::check(*agent, *scope, path) {
            agent_checks.push(check);
            // Probed with the Claude Code files (coverage is Claude Code's).
            if let Some(inspection) = inspection {
                probed.push(SettingsFile {
                    agent: *agent,
                    scope: *scope,
                    path: path.clone(),
                    inspection,
                });
            }
        }
    }
    (agent_checks, probed)
}

fn check_forwarder(path: &Path) -> Check {
    let name = "forwarder";
    let reinstall =
        "install hookd and hook-forwarder side by side (`scripts/install` in a hookd checkout)";
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) => {
            return Check::fail(name, format!("{}: {e}", path.display()), reinstall);
        }
    };
    if !meta.is_file() || meta.mode() & 0o111 == 0 {
        return Check::fail(
            name,
            format!("{} is not an executable file", path.display()),
            format!("`chmod +x {}`, or {reinstall}", path.display()),
        );
    }
    let output = Command::new(path)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output();
    let version = match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).trim().to_string(),
        Ok(out) => {
            return Check::fail(
                name,
                format!("{} --version failed ({})", path.display(), out.status),
                reinstall,
            )
        }
        Err(e) => {
            return Check::fail(
                name,
                format!("{} cannot run: {e}", path.display()),
                reinstall,
            )
        }
    };
    let ours = format!("hook-forwarder {}", env!("CARGO_PKG_VERSION"));
    if version != ours {
        return Check::fail(
            name,
            format!(
                "{} is `{version}`, this hookd is {}",
                path.display(),
                env!("CARGO_PKG_VERSION")
            ),
            reinstall,
        );
    }
    Check::pass(name, format!("{} ({version})", path.display()))
}

/// The agent-SDK adapter `hookd run` needs: installed, this build's, and
/// Node.js to run it.
fn check_adapter(dir: anyhow::Result<PathBuf>) -> Check {
    let name = "adapter";
    let dir = match dir {
        Ok(dir) => dir,
        Err(e) => return Check::fail(name, format!("{e:#}"), "set HOME"),
    };
    let status = crate::adapter::status(&dir);
    if !status.installed {
        // Optional: only `hookd run` (Agent SDK runs) uses it.
        return Check::note(
            name,
            format!(
                "{}: not installed (optional: only `hookd run`, for Agent SDK runs, needs it)",
                dir.display()
            ),
            "`hookd adapter install` to use `hookd run`",
        );
    }
    let Some(node) = status.node else {
        return Check::fail(
            name,
            format!("{}: installed, but `node` is not on PATH", dir.display()),
            "install Node.js >= 18",
        );
    };
    let which = if status.embedded {
        format!("this hookd's ({})", status.version)
    } else {
        "not this hookd's embedded version".to_string()
    };
    Check::pass(
        name,
        format!(
            "{}: installed, {which}; node: {}",
            dir.display(),
            node.display()
        ),
    )
}

fn check_socket(socket: &Path) -> Check {
    use crate::daemon::socket::{check_path_len, check_private_dir, SocketError};
    let name = "socket";
    if let Err(e) = check_path_len(socket) {
        return Check::fail(name, e.to_string(), "set a shorter HOOKD_SOCKET");
    }
    let dir = match socket.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match check_private_dir(dir) {
        Ok(()) => {}
        Err(SocketError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Check::pass(
                name,
                format!(
                    "{} (its directory does not exist yet; hookd serve creates it 0700)",
                    socket.display()
                ),
            );
        }
        Err(e) => {
            return Check::fail(
                name,
                e.to_string(),
                format!(
                    "the directory must be yours, mode 0700, not a symlink: `chmod 700 {}` or remove it and let hookd create it",
                    dir.display()
                ),
            );
        }
    }
    match fs::symlink_metadata(socket) {
        Ok(meta) if !meta.file_type().is_socket() => Check::fail(
            name,
            format!("{} exists and is not a socket", socket.display()),
            format!("remove {}", socket.display()),
        ),
        _ => Check::pass(
            name,
            format!("{} (directory private to this user)", socket.display()),
        ),
    }
}

fn check_daemon(socket: &Path) -> (Check, Option<crate::protocol::Status>) {
    let name = "daemon";
    let fix = "start it: `systemctl --user start hookd.socket` (after `hookd service install`), \
               or `hookd serve` in a terminal; check HOOKD_SOCKET is the same for hookd and Claude Code";
    let status =
        crate::client::Client::connect_with_timeout(socket, "hookd-doctor", STATUS_TIMEOUT)
            .and_then(|mut c| c.status());
    match status {
        Ok(status) => {
            let message = format!(
                "hookd {} (pid {}) answers, up {:.0}s, rules generation {} ({} rules from {})",
                status.version,
                status.pid,
                status.uptime_s,
                status.rules.generation,
                status.rules.count,
                status.rules.source,
            );
            (Check::pass(name, message), Some(status))
        }
        Err(e) => (Check::fail(name, e.to_string(), fix), None),
    }
}

/// `"30"` for whole numbers, else as written.
fn secs(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// A Claude Code settings file of `scope` at `path`: what it registers
/// (as a one-line summary), and what in it would keep hookd from working.
fn check_settings(scope: Scope, path: &Path) -> (Check, Option<Inspection>) {
    let name = format!("settings:{}", scope.as_str());
    let inspection = match read_settings(path) {
        Ok(Some(inspection)) => inspection,
        Ok(None) => {
            let check = Check::pass(name, format!("{}: no file", path.display()));
            return (check, None);
        }
        Err((problem, fix)) => return (Check::fail(name, problem, fix), None),
    };
    let regs = &inspection.registrations;
    let mut problems = Problems::default();
    if inspection.disable_all_hooks {
        problems.push(
            "\"disableAllHooks\": true turns every hook off".to_string(),
            "remove disableAllHooks",
        );
    }
    let mut missing_paths: Vec<&str> = Vec::new();
    for r in regs {
        registration_problems(r, &mut problems);
        // An http handler runs no program: the `http` check looks at it.
        let exists = r.http.is_some() || find_executable(&r.command).is_some();
        if !exists && !missing_paths.contains(&r.command.as_str()) {
            missing_paths.push(&r.command);
        }
    }
    for path in &missing_paths {
        missing_forwarder(path, scope, &mut problems);
    }
    let message = format!("{}: {}", path.display(), settings_summary(regs));
    let check = if problems.problems.is_empty() {
        Check::pass(name, message)
    } else {
        problems.fixes.dedup();
        Check::fail(
            name,
            format!("{message}; {}", problems.problems.join("; ")),
            problems.fixes.join("; "),
        )
    };
    (check, Some(inspection))
}

/// The settings file at `path` inspected; `None` when there is none, and
/// the problem and its fix when it cannot be read or parsed.
fn read_settings(path: &Path) -> Result<Option<Inspection>, (String, &'static str)> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err((format!("{}: {e}", path.display()), "make the file readable")),
    };
    match install::inspect(&text) {
        Ok(inspection) => Ok(Some(inspection)),
        Err(e) => Err((
            format!("{}:{e}", path.display()),
            "fix the file: Claude Code cannot use a settings file it cannot parse",
        )),
    }
}

/// What is wrong with a settings file, each with its fix, in the order
/// found.
#[derive(Default)]
struct Problems {
    problems: Vec<String>,
    /// One a problem; the same fix twice in a row is said once.
    fixes: Vec<String>,
}

impl Problems {
    fn push(&mut self, problem: String, fix: impl Into<String>) {
        self.problems.push(problem);
        self.fixes.push(fix.into());
    }
}

/// What is wrong with one registration: a timeout in milliseconds, a
/// forwarder timeout not below the agent's, WorktreeCreate, an
/// `onFailure` the forwarder does not agree with, an async decision point.
fn registration_problems(r: &install::Registration, problems: &mut Problems) {
    let at = format!("{} (line {})", r.event, r.line);
    let kind = HookEventKind::from_name(&r.event);
    if let Some(t) = r.timeout.filter(|t| *t >= MILLISECONDS_SUSPECT) {
        problems.push(
            format!(
                "{at}: timeout {} looks like milliseconds; Claude Code reads seconds",
                secs(t)
            ),
            format!("write the timeout in seconds (e.g. {})", secs(t / 1000.0)),
        );
    }
    let claude = r
        .timeout
        .unwrap_or_else(|| kind.claude_default_timeout_ms() as f64 / 1000.0);
    let forwarder = r
        .forwarder_timeout
        .unwrap_or_else(|| crate::forwarder::default_timeout(kind).as_secs_f64());
    if forwarder >= claude {
        problems.push(
            format!(
                "{at}: the forwarder's --timeout {} is not below Claude Code's timeout {} (Claude Code would kill it first and let the action proceed)",
                secs(forwarder),
                secs(claude)
            ),
            "keep timeout > --timeout (see the timeout table in docs/install.md)",
        );
    }
    if r.event == HookEventKind::WorktreeCreate.as_str() {
        problems.push(
            format!(
                "{at}: WorktreeCreate must create the worktree and print its path; the forwarder does not"
            ),
            "remove the WorktreeCreate entry",
        );
    }
    if r.on_failure_block && !r.fails_closed() && FailClosed::All.blocks(kind) {
        problems.push(
            format!(
                "{at}: \"onFailure\": \"block\" but the forwarder fails open there (its scope is {}): Claude Code blocks it when the forwarder cannot start, not when the daemon is down",
                r.fail_closed
            ),
            "re-run `hookd install --fail-closed` (tools) or `--fail-closed=all` so both agree",
        );
    }
    if r.async_hook && kind.is_decision_point() {
        problems.push(
            format!("{at}: registered async, so its decision is ignored"),
            format!("remove \"async\" from {}", r.event),
        );
    }
}

/// A registered forwarder `path` that is not there. A bare name is a
/// shared file's (`--scope project`): the agent looks it up on PATH, so
/// PATH is what to fix, not the file.
fn missing_forwarder(path: &str, scope: Scope, problems: &mut Problems) {
    if path.contains('/') {
        problems.push(
            format!("forwarder {path} does not exist or is not executable"),
            format!(
                "re-run `hookd install --scope {}` (it rewrites its entries with the current path)",
                scope.as_str()
            ),
        );
    } else {
        problems.push(
            format!("forwarder `{path}` is not on PATH"),
            format!("put {path} on PATH (`scripts/install` installs it into ~/.cargo/bin)"),
        );
    }
}

/// What a settings file registers, in one line: how many handlers for how
/// many events, their timeout ladders, and which events fail closed.
fn settings_summary(regs: &[install::Registration]) -> String {
    if regs.is_empty() {
        return "registers no hook-forwarder and no hookd http hook".to_string();
    }
    let mut events: Vec<&str> = regs.iter().map(|r| r.event.as_str()).collect();
    events.dedup();
    let mut ladders: BTreeMap<String, usize> = BTreeMap::new();
    for r in regs {
        let key = format!(
            "{}/{}s",
            r.forwarder_timeout.map_or("default".into(), secs),
            r.timeout.map_or("default".into(), secs)
        );
        *ladders.entry(key).or_default() += 1;
    }
    let ladders: Vec<String> = ladders
        .into_iter()
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect();
    let mut closed: Vec<&str> = regs
        .iter()
        .filter(|r| r.fails_closed())
        .map(|r| r.event.as_str())
        .collect();
    closed.dedup();
    let http = regs.iter().filter(|r| r.http.is_some()).count();
    format!(
        "{} registration{}{} for {} event{} (forwarder/Claude Code timeouts: {}); {}",
        regs.len(),
        if regs.len() == 1 { "" } else { "s" },
        match http {
            0 => String::new(),
            n => format!(" ({n} http)"),
        },
        events.len(),
        if events.len() == 1 { "" } else { "s" },
        ladders.join(", "),
        if closed.is_empty() {
            "fails open (no event is blocked when the daemon is down)".to_string()
        } else {
            format!("fails closed for {}", closed.join(", "))
        }
    )
}

/// `command` if it is an executable file; a bare name is looked up in
/// `PATH`, as a shell-form hook command would be.
fn find_executable(command: &str) -> Option<PathBuf> {
    let executable = |p: &Path| fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0);
    if command.contains('/') {
        let path = PathBuf::from(command);
        return executable(&path).then_some(path);
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(command))
        .find(|p| executable(p))
}

/// A settings file doctor read, and what it registers.
struct SettingsFile {
    /// The agent that reads it (its hooks are probed in its form).
    agent: Agent,
    scope: Scope,
    path: PathBuf,
    inspection: Inspection,
}

/// Every event registered at least once, and none that reaches hookd more
/// than once. Claude Code runs an event's identical handlers once (same
/// command, args, `if` and shell; see [`install::Registration::runs_as_one_with`]),
/// wherever they are registered; only handlers that differ, say in their
/// args, each run, so hookd sees those hooks twice.
///
/// No Claude Code file registering hookd is a note when another agent's
/// file does (`other_agents`, as "Codex CLI (path)"): a machine with only
/// Codex or Gemini is set up. It fails only when no agent's file does.
fn check_coverage(
    files: &[SettingsFile],
    events: &[HookEventKind],
    other_agents: &[String],
) -> Check {
    let name = "events";
    // Per event: the distinct handlers, each with where it is registered.
    let mut seen: BTreeMap<&str, Vec<(&install::Registration, Vec<String>)>> = BTreeMap::new();
    let mut identical = 0;
    for file in files {
        for r in &file.inspection.registrations {
            let at = format!("{} {}:{}", file.scope.as_str(), file.path.display(), r.line);
            let handlers = seen.entry(r.event.as_str()).or_default();
            match handlers.iter_mut().find(|(h, _)| h.runs_as_one_with(r)) {
                Some((_, places)) => {
                    identical += 1;
                    places.push(at);
                }
                None => handlers.push((r, vec![at])),
            }
        }
    }
    if seen.is_empty() && !other_agents.is_empty() {
        return Check::note(
            name,
            format!(
                "no Claude Code settings file registers hook-forwarder; hooks reach hookd from {}",
                other_agents.join(", ")
            ),
            "`hookd install` if you also use Claude Code",
        );
    }
    if seen.is_empty() {
        return Check::fail(
            name,
            "no settings file of Claude Code, Codex or Gemini registers hook-forwarder or a hookd http hook, so no hook reaches hookd",
            "`hookd install` (Claude Code, every project), `hookd install --scope project`, or `hookd install --agent codex|gemini|opencode|pi`",
        );
    }
    let missing: Vec<&str> = events
        .iter()
        .map(|k| k.as_str())
        .filter(|e| !seen.contains_key(e))
        .collect();
    let doubled: Vec<String> = seen
        .iter()
        .filter(|(_, handlers)| handlers.len() > 1)
        .map(|(event, handlers)| {
            let (first, first_at) = &handlers[0];
            let others: Vec<String> = handlers[1..]
                .iter()
                .map(|(other, at)| {
                    format!(
                        "{} and {} differ: {}",
                        first_at[0],
                        at[0],
                        first.differences(other).join(", ")
                    )
                })
                .collect();
            format!(
                "{event} reaches hookd {} times ({})",
                handlers.len(),
                others.join("; ")
            )
        })
        .collect();
    let mut problems = Vec::new();
    let mut fixes = Vec::new();
    if !missing.is_empty() {
        problems.push(format!("not registered: {}", missing.join(", ")));
        fixes.push("`hookd install` registers every event".to_string());
    }
    if !doubled.is_empty() {
        problems.push(format!(
            "Claude Code runs each of these differing handlers, so hookd sees their hooks more than once: {}",
            doubled.join("; ")
        ));
        fixes.push(
            "keep one registration per event, or make them identical (Claude Code runs identical handlers once); \
             `hookd uninstall --scope …` removes hookd's entries from a file"
                .to_string(),
        );
    }
    if problems.is_empty() {
        let mut message = format!("{} events registered, each reaching hookd once", seen.len());
        if identical > 0 {
            message.push_str(&format!(
                " ({identical} registration{} identical to another, which Claude Code runs once)",
                if identical == 1 { " is" } else { "s are" }
            ));
        }
        Check::pass(name, message)
    } else {
        Check::fail(name, problems.join("; "), fixes.join("; "))
    }
}

/// hookd's `http` hooks (`hookd install --transport http`), when a settings
/// file has any: the daemon's HTTP listener is on, the URLs point at it,
/// and the token variable they send is set, here, to the daemon's token.
/// Claude Code lets the action proceed on a refused connection or a 401
/// (blocks it with `"onFailure": "block"`), so each of these is a hook that
/// silently does nothing.
fn check_http(
    files: &[SettingsFile],
    status: Option<&crate::protocol::Status>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<Check> {
    let name = "http";
    let handlers: Vec<HttpHook> = files
        .iter()
        .flat_map(|f| {
            f.inspection
                .registrations
                .iter()
                .filter_map(move |r| r.http.as_ref().map(|h| (f, r, h)))
        })
        .collect();
    let (first_file, first, _) = handlers.first()?;
    let at = |f: &SettingsFile, r: &install::Registration| {
        format!("{}:{} ({})", f.path.display(), r.line, r.event)
    };
    let fallback = if handlers.iter().any(|(_, r, _)| r.on_failure_block) {
        "Claude Code blocks those hooks (\"onFailure\": \"block\")"
    } else {
        "Claude Code lets those actions proceed unjudged"
    };
    let Some(status) = status else {
        return Some(Check::fail(
            name,
            format!(
                "{} http hook{} (first at {}), and no daemon answers `status` to say where it listens",
                handlers.len(),
                if handlers.len() == 1 { "" } else { "s" },
                at(first_file, first)
            ),
            "start the daemon with `[http] listen` set in config.toml",
        ));
    };
    let Some(http) = &status.http else {
        return Some(Check::fail(
            name,
            format!(
                "{} http hook{} (first at {}) post to the daemon, but its HTTP listener is off: {fallback}",
                handlers.len(),
                if handlers.len() == 1 { "" } else { "s" },
                at(first_file, first)
            ),
            "set `[http] listen = \"127.0.0.1:7878\"` in config.toml (the running daemon \
             starts the listener when it sees the change), or switch back with \
             `hookd install --transport command`",
        ));
    };
    let mut problems = Problems::default();
    elsewhere_problem(&handlers, http, fallback, &mut problems);
    token_problems(&handlers, http, env, fallback, &mut problems);
    Some(if problems.problems.is_empty() {
        Check::pass(
            name,
            format!(
                "{} http hook{} post to the daemon's listener {} with its token",
                handlers.len(),
                if handlers.len() == 1 { "" } else { "s" },
                http.listen
            ),
        )
    } else {
        Check::fail(
            name,
            problems.problems.join("; "),
            problems.fixes.join("; "),
        )
    })
}

/// An `http` hook: the file and the registration it is in, and its handler.
type HttpHook<'a> = (
    &'a SettingsFile,
    &'a install::Registration,
    &'a install::HttpHandler,
);

/// The http hooks that post somewhere other than the daemon's listener,
/// named once each.
fn elsewhere_problem(
    handlers: &[HttpHook],
    http: &crate::protocol::HttpStatus,
    fallback: &str,
    problems: &mut Problems,
) {
    let mut elsewhere: Vec<&str> = Vec::new();
    for (_, _, h) in handlers {
        if !reaches(&h.url, &http.listen) && !elsewhere.contains(&h.url.as_str()) {
            elsewhere.push(&h.url);
        }
    }
    if !elsewhere.is_empty() {
        problems.push(
            format!(
                "{} posts to another address than the daemon's listener {}: {fallback}",
                elsewhere.join(", "),
                http.listen
            ),
            format!(
                "`hookd install --transport http --http-url http://{}`",
                http.listen
            ),
        );
    }
}

/// The token the http hooks send: a variable unset in `env`, else an
/// Authorization that is not the daemon's token.
fn token_problems(
    handlers: &[HttpHook],
    http: &crate::protocol::HttpStatus,
    env: &dyn Fn(&str) -> Option<String>,
    fallback: &str,
    problems: &mut Problems,
) {
    let mut unset: Vec<&str> = handlers
        .iter()
        .flat_map(|(_, _, h)| h.unset_vars(env))
        .collect();
    unset.sort_unstable();
    unset.dedup();
    if !unset.is_empty() {
        problems.push(
            format!(
                "${} is not set here, so a Claude Code started from this environment sends no token \
                 and gets 401: {fallback}",
                unset.join(", $")
            ),
            format!(
                "`export {}=\"$(hookd http token)\"` in the shell profile Claude Code starts from",
                unset[0]
            ),
        );
    } else if let Ok(token) = crate::http::token::read(&http.token_file) {
        let expected = format!("Bearer {token}");
        let wrong = handlers.iter().any(|(_, _, h)| {
            h.expanded_headers(env)
                .iter()
                .any(|(k, v)| k.eq_ignore_ascii_case("authorization") && *v != expected)
        });
        if wrong {
            problems.push(
                format!(
                    "the Authorization the http hooks send here is not the daemon's token ({}), so \
                     they get 401: {fallback}",
                    http.token_file.display()
                ),
                format!(
                    "`export {}=\"$(hookd http token)\"` (the token changes with `hookd http token --rotate`)",
                    install::HTTP_TOKEN_ENV
                ),
            );
        }
    }
}

/// Whether `url` (`http://host:port/…`) reaches a listener bound to
/// `listen` (`ip:port`; an unspecified ip listens on every address).
fn reaches(url: &str, listen: &str) -> bool {
    use std::net::{SocketAddr, ToSocketAddrs};
    let Ok(listen) = listen.parse::<SocketAddr>() else {
        return false;
    };
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(_, port)| !port.is_empty() && !port.ends_with(']'));
    let authority = match has_port {
        true => authority.to_string(),
        false => format!("{authority}:80"),
    };
    let Ok(addrs) = authority.to_socket_addrs() else {
        return false;
    };
    addrs.into_iter().any(|a| {
        a.port() == listen.port() && (listen.ip().is_unspecified() || a.ip() == listen.ip())
    })
}

fn check_rules(user: Option<&Path>, project: &Path) -> Check {
    let name = "rules";
    let mut parts = Vec::new();
    let mut errors = Vec::new();
    match user {
        Some(path) => {
            let report = crate::rules::check(path);
            match report.errors.first() {
                None => parts.push(format!("{}: {} rules", path.display(), report.rules)),
                Some(first) => errors.push(plural_errors(first, report.errors.len())),
            }
        }
        None => parts.push("no rules file, the built-in defaults apply".to_string()),
    }
    let project_file = crate::rules::project_rules_path(project);
    if project_file.exists() {
        let report = crate::rules::check_as(&project_file, crate::rules::LayerKind::Project);
        match report.errors.first() {
            None => parts.push(format!(
                "{}: {} rules",
                project_file.display(),
                report.rules
            )),
            Some(first) => errors.push(plural_errors(first, report.errors.len())),
        }
    }
    if errors.is_empty() {
        Check::pass(name, parts.join("; "))
    } else {
        Check::fail(
            name,
            errors.join("; "),
            "fix the file (`hookd rules check FILE` lists every error); the daemon keeps the last good rules meanwhile",
        )
    }
}

/// The first error of a rules file, and how many there are.
/// The running daemon's policy layers: fails when its last reload was
/// refused or a bundle could not be activated (the last good rules stay
/// in effect meanwhile). `None` without policy sources or problems.
fn check_policy(rules: &crate::protocol::RulesStatus) -> Option<Check> {
    let lines = crate::policy::status_lines(rules);
    if lines.is_empty() {
        return None;
    }
    let failed = rules.reload_error.is_some()
        || rules
            .layers
            .iter()
            .any(|l| l.bundle.as_ref().is_some_and(|b| b.error.is_some()));
    let message = lines.join("\n");
    Some(if failed {
        Check::fail(
            "policy",
            message,
            "fix the file named above (`hookd rules check FILE`, or the bundle's source); the daemon reloads it when it changes",
        )
    } else {
        Check::pass("policy", message)
    })
}

/// The running daemon's `config.toml`: fails when its last reload was
/// refused (the last good configuration stays in force) or when the file
/// changed in a way only a restart applies. `None` when all is in force.
fn check_config(config: &crate::protocol::status::ConfigStatus) -> Option<Check> {
    let lines = config.lines();
    if lines.is_empty() {
        return None;
    }
    let fix = if config.reload_error.is_some() {
        "fix the file at the line named above; the daemon reads it again when it changes (or on SIGHUP)"
    } else {
        "restart hookd (`systemctl --user restart hookd`, or stop and start `hookd serve`)"
    };
    Some(Check::fail("config", lines.join("\n"), fix))
}

fn plural_errors(first: &impl fmt::Display, n: usize) -> String {
    match n {
        1 => format!("{first}"),
        n => format!(
            "{first} (and {} more error{})",
            n - 1,
            if n == 2 { "" } else { "s" }
        ),
    }
}

fn check_log(log: Option<&Path>) -> Check {
    let name = "log";
    let Some(log) = log else {
        return Check::fail(
            name,
            "no log path: neither XDG_STATE_HOME nor HOME is set",
            "set HOME, or run the daemon with --log",
        );
    };
    let fix = |what: &Path| {
        format!(
            "make {} writable by this user, or point hookd at another log (`hookd serve --log FILE`, XDG_STATE_HOME)",
            what.display()
        )
    };
    match fs::metadata(log) {
        Ok(meta) => {
            // Opening for append writes nothing; mode bits are checked too
            // because root passes every access check.
            let writable =
                meta.mode() & 0o222 != 0 && OpenOptions::new().append(true).open(log).is_ok();
            if writable {
                Check::pass(
                    name,
                    format!("{} is writable ({} bytes)", log.display(), meta.len()),
                )
            } else {
                Check::fail(name, format!("{} is not writable", log.display()), fix(log))
            }
        }
        Err(_) => {
            // Not created yet: the nearest existing ancestor must let us
            // create the rest.
            let mut dir = log.parent();
            while let Some(d) = dir {
                if let Ok(meta) = fs::metadata(d) {
                    let ok = meta.is_dir()
                        && meta.mode() & 0o222 != 0
                        && nix::unistd::access(d, nix::unistd::AccessFlags::W_OK).is_ok();
                    return if ok {
                        Check::pass(
                            name,
                            format!("{} does not exist yet; hookd can create it", log.display()),
                        )
                    } else {
                        Check::fail(
                            name,
                            format!(
                                "{} cannot be created: {} is not writable",
                                log.display(),
                                d.display()
                            ),
                            fix(d),
                        )
                    };
                }
                dir = d.parent();
            }
            Check::fail(
                name,
                format!("{} cannot be created", log.display()),
                fix(log),
            )
        }
    }
}

/// The last event line in `path` (or its first rotation) that a registered
/// hook relayed: from Claude Code, Codex or Gemini, not an Agent SDK run's
/// (the adapter's) and not doctor's own probes.
pub fn last_agent_event(path: &Path) -> Option<LoggedEvent> {
    let mut rotated = path.as_os_str().to_os_string();
    rotated.push(".1");
    [path.to_path_buf(), PathBuf::from(rotated)]
        .iter()
        .find_map(|p| {
            let text = read_tail(p, LOG_TAIL_BYTES).ok()?;
            text.lines()
                .rev()
                .find_map(|line| match LogRecord::parse(line.as_bytes()) {
                    Ok(LogRecord::Event(event))
                        if Agent::from_name(&event.harness).is_some()
                            && !crate::agent::claude::probe::is_probe(&event.input) =>
                    {
                        Some(event)
                    }
                    _ => None,
                })
        })
}

fn read_tail(path: &Path, max: u64) -> io::Result<String> {
    let mut file = fs::File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(max)))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Whether hooks really reach hookd: the last agent's event in the log.
/// None yet is a note, not a failure: a fresh setup has fired nothing.
fn check_fired(log: Option<&Path>, now: SystemTime) -> Check {
    let name = "hooks fire";
    let fix = "start a session of an agent whose hooks are registered (Claude Code, Codex, Gemini) and run doctor again; \
               `claude --debug=hooks` shows what Claude Code runs";
    let Some(log) = log else {
        return Check::fail(name, "no log to look in", fix);
    };
    match last_agent_event(log) {
        Some(event) => {
            let at = crate::time::parse_rfc3339(&event.received_at);
            let ago = at
                .and_then(|t| now.duration_since(t).ok())
                .map_or("at an unknown time".to_string(), |d| {
                    format!("{} ago", human(d))
                });
            Check::pass(
                name,
                format!(
                    "last {} event: {} {ago} (session {}, cwd {})",
                    Agent::from_name(&event.harness).map_or("?", Agent::display_name),
                    event.kind,
                    event
                        .session_id
                        .as_deref()
                        .map_or("?", |s| &s[..s.len().min(8)]),
                    event.cwd.as_deref().unwrap_or("?"),
                ),
            )
        }
        None => Check::note(
            name,
            format!("no hook has reached hookd yet ({})", log.display()),
            fix,
        ),
    }
}

/// `42s`, `3m`, `5h`, `2d`.
fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=119 => format!("{s}s"),
        120..=7199 => format!("{}m", s / 60),
        7200..=172_799 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inspection(text: &str) -> Inspection {
        install::inspect(text).unwrap()
    }

    fn file(scope: Scope, path: &str, text: &str) -> SettingsFile {
        SettingsFile {
            agent: Agent::ClaudeCode,
            scope,
            path: PathBuf::from(path),
            inspection: inspection(text),
        }
    }

    #[test]
    fn coverage_flags_missing_events_and_handlers_that_really_double() {
        let plain = r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"/x/hook-forwarder","args":["--timeout","25"]}]}]}}"#;
        // The same handler in two files (another timeout does not count):
        // Claude Code runs it once.
        let same = plain.replace(r#""args""#, r#""timeout":45,"args""#);
        let check = check_coverage(
            &[
                file(Scope::User, "/u.json", plain),
                file(Scope::Project, "/p.json", &same),
            ],
            &[HookEventKind::PreToolUse, HookEventKind::Stop],
            &[],
        );
        assert!(!check.ok);
        assert_eq!(
            check.message, "not registered: Stop",
            "identical handlers are not flagged"
        );
        let check = check_coverage(
            &[
                file(Scope::User, "/u.json", plain),
                file(Scope::Project, "/p.json", &same),
            ],
            &[HookEventKind::PreToolUse],
            &[],
        );
        assert!(check.ok, "{}", check.message);
        assert!(
            check
                .message
                .contains("1 registration is identical to another"),
            "{}",
            check.message
        );
        // Other args: both run.
        let other = plain.replace(r#""25""#, r#""20""#);
        let check = check_coverage(
            &[
                file(Scope::User, "/u.json", plain),
                file(Scope::Project, "/p.json", &other),
            ],
            &[HookEventKind::PreToolUse],
            &[],
        );
        assert!(!check.ok);
        assert!(
            check.message.contains(
                "PreToolUse reaches hookd 2 times (user /u.json:1 and project /p.json:1 differ: args `--timeout 25` vs `--timeout 20`)"
            ),
            "{}",
            check.message
        );
        let none = check_coverage(&[], &[HookEventKind::PreToolUse], &[]);
        assert!(!none.ok && none.message.contains("no settings file"));
        // Only another agent registers hookd: a note.
        let codex = ["Codex CLI (/h/.codex/hooks.json)".to_string()];
        let only_codex = check_coverage(&[], &[HookEventKind::PreToolUse], &codex);
        assert!(only_codex.ok && only_codex.note, "{only_codex:?}");
        assert!(only_codex
            .message
            .ends_with("from Codex CLI (/h/.codex/hooks.json)"));
    }

    #[test]
    fn settings_flag_milliseconds_missing_forwarders_and_a_broken_ladder() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        fs::write(
            &path,
            r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"/nowhere/hook-forwarder","args":["--timeout","25"],"timeout":30000}]}],
               "Stop":[{"hooks":[{"type":"command","command":"/nowhere/hook-forwarder","args":["--timeout","25"],"timeout":20}]}]}}"#,
        )
        .unwrap();
        let (check, _) = check_settings(Scope::Project, &path);
        assert!(!check.ok);
        for want in [
            "PreToolUse (line 1): timeout 30000 looks like milliseconds",
            "Stop (line 2): the forwarder's --timeout 25 is not below Claude Code's timeout 20",
            "forwarder /nowhere/hook-forwarder does not exist",
        ] {
            assert!(check.message.contains(want), "{want}: {}", check.message);
        }
        assert!(check.fix.unwrap().contains("seconds (e.g. 30)"));
    }

    #[test]
    fn settings_say_which_events_fail_closed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let handler = |args: &str, on_failure: &str| {
            format!(
                r#"[{{"hooks":[{{"type":"command","command":"/bin/true/hook-forwarder","args":{args},"timeout":30{on_failure}}}]}}]"#
            )
        };
        let block = r#","onFailure":"block""#;
        fs::write(
            &path,
            format!(
                r#"{{"hooks":{{"PreToolUse":{},"PermissionRequest":{},"UserPromptSubmit":{},"Stop":{}}}}}"#,
                handler(r#"["--timeout","25","--fail-closed"]"#, block),
                handler(r#"["--timeout","25","--frob","--fail-closed"]"#, block),
                handler(r#"["--timeout","25","--fail-closed"]"#, block),
                handler(r#"["--timeout","25","--fail-closed=all"]"#, ""),
            ),
        )
        .unwrap();
        let (check, _) = check_settings(Scope::Project, &path);
        // An argument error keeps the scope, so PermissionRequest counts.
        assert!(
            check
                .message
                .contains("fails closed for PreToolUse, PermissionRequest;"),
            "{}",
            check.message
        );
        assert!(
            check.message.contains(
                "UserPromptSubmit (line 1): \"onFailure\": \"block\" but the forwarder fails open there (its scope is tools)"
            ),
            "{}",
            check.message
        );
        fs::write(
            &path,
            format!(r#"{{"hooks":{{"Stop":{}}}}}"#, handler("[]", "")),
        )
        .unwrap();
        let (check, _) = check_settings(Scope::Project, &path);
        assert!(
            check.message.contains("; fails open (no event"),
            "{}",
            check.message
        );
    }

    #[test]
    fn an_http_hook_reaches_the_listener_by_address_or_name() {
        assert!(reaches(
            "http://127.0.0.1:7878/hook/claude-code?timeout=25",
            "127.0.0.1:7878"
        ));
        assert!(reaches(
            "http://localhost:7878/hook/claude-code",
            "127.0.0.1:7878"
        ));
        assert!(
            reaches("http://127.0.0.1:7878/x", "0.0.0.0:7878"),
            "every address"
        );
        assert!(!reaches("http://127.0.0.1:7879/x", "127.0.0.1:7878"));
        assert!(!reaches("http://127.0.0.2:7878/x", "127.0.0.1:7878"));
        assert!(
            reaches("http://127.0.0.1/x", "127.0.0.1:80"),
            "port 80 by default"
        );
        assert!(
            !reaches("https://127.0.0.1:7878/x", "127.0.0.1:7878"),
            "hookd serves http"
        );
    }

    #[test]
    fn http_headers_expand_only_allowed_variables() {
        let handler = install::HttpHandler {
            url: "http://127.0.0.1:7878/hook/claude-code".into(),
            headers: vec![
                ("Authorization".into(), "Bearer $HOOKD_HTTP_TOKEN".into()),
                ("X-Other".into(), "${HOME} ${HOOKD_HTTP_TOKEN}".into()),
            ],
            allowed_env_vars: vec!["HOOKD_HTTP_TOKEN".into()],
        };
        let env = |v: &str| (v == "HOOKD_HTTP_TOKEN").then(|| "t0k".to_string());
        assert_eq!(
            handler.expanded_headers(env),
            vec![
                ("Authorization".to_string(), "Bearer t0k".to_string()),
                ("X-Other".to_string(), "${HOME} t0k".to_string()),
            ]
        );
        assert!(handler.unset_vars(env).is_empty());
        assert_eq!(handler.unset_vars(|_| None), vec!["HOOKD_HTTP_TOKEN"]);
        assert_eq!(
            handler.unset_vars(|_| Some(String::new())),
            vec!["HOOKD_HTTP_TOKEN"]
        );
    }

    #[test]
    fn the_last_agents_event_is_found_and_aged() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("events.jsonl");
        fs::write(
            &log,
            concat!(
                r#"{"type":"event","id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","harness":"claude-code","kind":"PreToolUse","received_at":"2026-11-22T10:00:00Z","session_id":"abcdef0123","cwd":"/p","input":{}}"#,
                "\n",
                r#"{"type":"event","id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6c","harness":"agent-sdk","kind":"Stop","received_at":"2026-11-22T10:01:00Z","input":{}}"#,
                "\n{\"torn",
            ),
        )
        .unwrap();
        let now = crate::time::parse_rfc3339("2026-11-22T10:05:00Z").unwrap();
        let check = check_fired(Some(&log), now);
        assert!(check.ok);
        assert_eq!(
            check.message,
            "last Claude Code event: PreToolUse 5m ago (session abcdef01, cwd /p)"
        );
        // Codex's hooks count as well.
        let mut text = fs::read_to_string(&log).unwrap();
        text.insert_str(
            text.rfind("{\"torn").unwrap(),
            "{\"type\":\"event\",\"id\":\"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6d\",\"harness\":\"codex\",\"kind\":\"Stop\",\"received_at\":\"2026-11-22T10:02:00Z\",\"session_id\":\"c0dex\",\"cwd\":\"/q\",\"input\":{}}\n",
        );
        fs::write(&log, text).unwrap();
        assert_eq!(
            check_fired(Some(&log), now).message,
            "last Codex CLI event: Stop 3m ago (session c0dex, cwd /q)"
        );
        // Nothing fired yet: a note, not a failure.
        let empty = dir.path().join("empty.jsonl");
        fs::write(&empty, "").unwrap();
        let check = check_fired(Some(&empty), now);
        assert!(check.ok && check.note, "{check:?}");
    }
}
