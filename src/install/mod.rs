//! `hookd install` / `hookd uninstall`: register `hook-forwarder` in a Claude
//! Code settings file, and take it out again. The same for Codex CLI's
//! `hooks.json` and Gemini CLI's `settings.json` ([`InstallOptions::agent`]):
//! all three hold `{"hooks": {EVENT: [{"matcher"?, "hooks": [HANDLER]}]}}`,
//! with the agent's own event names, and a handler that is Claude Code's
//! exec form (`command` + `args`, `timeout` in seconds), Codex's command
//! line (`timeout` in seconds) or Gemini's command line (`name`, `timeout`
//! in **milliseconds**); the two command lines run
//! `hook-forwarder --agent codex|gemini …`. Each agent has its own timeout
//! ladder ([`mod@timings`]). Codex and Gemini groups have `"matcher": "*"`
//! (Gemini compares a SessionStart, SessionEnd or PreCompress matcher as a
//! plain string: `".*"` would silently drop those events).
//!
//! The core is pure: (settings text, options) → new text
//! ([`install_text`], [`uninstall_text`]). Files are read and written only at
//! the edge ([`install`], [`uninstall`]): a backup of the previous file, an
//! atomic replace (temp file in the same directory + rename) that keeps the
//! file's mode and owner.
//!
//! **Formatting.** The file is edited by splicing text into it (see
//! [`jsontext`]), never by re-serializing it, so everything hookd does not
//! add keeps its exact bytes: key order, indentation, blank lines, number
//! spelling, string escapes, CRLF line ends, a missing final newline. Added
//! entries are pretty-printed like their neighbours (the file's own indent
//! unit and line ends; compact when the enclosing object or array is written
//! on one line). A missing or blank file becomes a 2-space pretty-printed
//! object. Uninstall removes exactly the text install added, so a file
//! nobody edited in between comes back byte for byte; the only exceptions
//! are containers left empty: an event array or the `hooks` object that held
//! nothing but hookd's entries is removed (and so is a `"hooks": {}` or an
//! empty event array that was there before install), and an empty object
//! that install opened up comes back as `{}`. A file that is not plain JSON
//! (comments, trailing commas) is refused with its line:column and never
//! touched.
//!
//! **Recognising our entries.** Every handler install writes runs a file
//! named `hook-forwarder` with [`MARKER_ARG`] among its args (the words of
//! its command line, for Codex and Gemini); uninstall removes exactly those
//! (the forwarder accepts and ignores the marker).
//! Hand-written forwarder entries without the marker are left alone.
//!
//! **Shared files.** A project's settings file (`--scope project`) is
//! committed and read on every machine, so it names the forwarder by its
//! bare name, found on each user's `PATH` ([`forwarder_for`]); the other
//! scopes register an absolute path (and so does `--forwarder PATH`).

pub use hookd_daemon::atomic;
pub mod diff;
pub mod jsontext;
pub mod managed;
pub mod plugin;
pub mod settings;
pub mod timings;

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Serialize;

use crate::agent::Agent;
pub use atomic::{check_writable, write_atomic};
pub use settings::*;
pub use timings::*;

/// The forwarder's file name: a handler whose `command` names a file called
/// this is a hookd registration.
pub const FORWARDER_NAME: &str = "hook-forwarder";

/// The argument that marks the handlers `hookd install` wrote.
pub const MARKER_ARG: &str = "--installed-by=hookd";

/// Appended to the settings file's name for the copy of the previous file.
pub const BACKUP_SUFFIX: &str = ".hookd-backup";

// ---------------------------------------------------------------------------
// The edges: paths, files.
// ---------------------------------------------------------------------------

/// Which settings file (`--scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when
    /// set, as Claude Code does): every project.
    User,
    /// `<project>/.claude/settings.json`: shared with the project.
    Project,
    /// `<project>/.claude/settings.local.json`: this checkout only.
    Local,
    /// hookd's own file in Claude Code's managed settings directory
    /// (`/etc/claude-code/managed-settings.d/50-hookd.json`): every user of
    /// the machine, and organizations with `allowManagedHooksOnly` (see
    /// [`managed`]). Not in [`Scope::ALL`]: an administrator's scope.
    Managed,
}

impl Scope {
    /// Every scope, in the order Claude Code layers them (lowest first).
    pub const ALL: [Scope; 3] = [Scope::User, Scope::Project, Scope::Local];

    /// `user`, `project` or `local`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Managed => "managed",
        }
    }
}

impl std::str::FromStr for Scope {
    type Err = String;

    fn from_str(s: &str) -> Result<Scope, String> {
        match s {
            "user" => Ok(Scope::User),
            "project" => Ok(Scope::Project),
            "local" => Ok(Scope::Local),
            "managed" => Ok(Scope::Managed),
            other => Err(format!(
                "unknown scope `{other}`: use user, project, local or managed"
            )),
        }
    }
}

/// The settings file of `scope` for `project`.
pub fn settings_path(scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    Ok(match scope {
        Scope::User => claude_config_dir()?.join("settings.json"),
        Scope::Project => project.join(".claude").join("settings.json"),
        Scope::Local => project.join(".claude").join("settings.local.json"),
        Scope::Managed => managed::settings_file(),
    })
}

/// The file holding `agent`'s hook registrations in `scope` for
/// `project`. Claude Code: [`settings_path`]. Codex: `$CODEX_HOME/hooks.json`
/// (default `~/.codex/hooks.json`), or the project's `.codex/hooks.json`,
/// which Codex reads only in a project it trusts. Gemini:
/// `~/.gemini/settings.json`, or the project's `.gemini/settings.json`.
/// Copilot: a hooks file of hookd's own, `~/.copilot/hooks/hookd.json`, or
/// the project's `.github/hooks/hookd.json`. None has a local scope.
pub fn agent_settings_path(agent: Agent, scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    let (dir, file) = match agent {
        Agent::ClaudeCode => return settings_path(scope, project),
        Agent::Codex => (".codex", "hooks.json"),
        Agent::Gemini => (".gemini", "settings.json"),
        Agent::OpenCode | Agent::Pi => {
            return plugin::plugin_path(agent, scope, project);
        }
        Agent::Copilot if scope == Scope::Project => (".github/hooks", "hookd.json"),
        Agent::Copilot => (".copilot/hooks", "hookd.json"),
    };
    match scope {
        Scope::User if agent == Agent::Codex => {
            if let Some(home) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
                return Ok(PathBuf::from(home).join(file));
            }
            Ok(home_dir(agent)?.join(dir).join(file))
        }
        Scope::User => Ok(home_dir(agent)?.join(dir).join(file)),
        Scope::Project => Ok(project.join(dir).join(file)),
        Scope::Managed => bail!(
            "--scope managed: only Claude Code reads a managed settings directory; use --scope user or --scope project for {agent}"
        ),
        Scope::Local => bail!(
            "--scope local: {agent} has no local settings file; use --scope user or --scope project"
        ),
    }
}

fn home_dir(agent: Agent) -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .with_context(|| {
            format!("--agent {agent} --scope user: HOME is not set; use --settings FILE")
        })
}

/// The command that runs `agent`, looked up on `PATH` by
/// `hookd install --agent all`.
pub fn agent_program(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "claude",
        Agent::Codex => "codex",
        Agent::Gemini => "gemini",
        Agent::OpenCode => "opencode",
        Agent::Pi => "pi",
        Agent::Copilot => "copilot",
    }
}

/// What the user must do after an install for `agent`'s hooks to run, if
/// anything: Codex runs no hook it has not been told to trust, and says
/// nothing when it skips one.
pub fn after_install_note(agent: Agent) -> Option<&'static str> {
    match agent {
        Agent::Codex => Some(
            "Codex runs no hook until you trust it, and skips untrusted hooks silently: \
             start `codex` in a terminal and choose \"Trust all and continue\" when it \
             lists the new hooks (or review them with /hooks). For `codex exec` in \
             automation that already vets its hooks, `--dangerously-bypass-hook-trust` \
             runs them without that step.",
        ),
        Agent::Gemini => Some(
            "Gemini asks before it runs project-level hooks the first time; user-level \
             hooks run at once.",
        ),
        Agent::Pi => Some(
            "Pi loads the extension in every session; `pi --no-extensions` (-ne) skips it, \
             so where it must not be bypassed start Pi with `-e` naming the file.",
        ),
        Agent::ClaudeCode | Agent::Copilot | Agent::OpenCode => None,
    }
}

/// `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn claude_config_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".claude")),
        None => {
            bail!("--scope user: neither CLAUDE_CONFIG_DIR nor HOME is set; use --settings FILE")
        }
    }
}

/// The `hook-forwarder` next to the running `hookd` executable.
pub fn sibling_forwarder() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding the hookd executable")?;
    Ok(exe
        .parent()
        .context("the hookd executable has no directory")?
        .join(FORWARDER_NAME))
}

/// `--forwarder PATH` made absolute, or the forwarder next to `hookd`; it
/// must exist and be executable.
pub fn resolve_forwarder(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let (path, flag) = match explicit {
        Some(p) => (
            std::path::absolute(p).with_context(|| format!("--forwarder {}", p.display()))?,
            "--forwarder",
        ),
        None => (sibling_forwarder()?, "the forwarder next to hookd"),
    };
    let meta = fs::metadata(&path).with_context(|| {
        format!(
            "{flag}: {} not found; build and install both binaries (`scripts/install` in a hookd checkout) \
             or pass --forwarder /path/to/hook-forwarder",
            path.display()
        )
    })?;
    if !meta.is_file() || meta.mode() & 0o111 == 0 {
        bail!(
            "{flag}: {} is not an executable file; pass the path of the hook-forwarder binary",
            path.display()
        );
    }
    if path.to_str().is_none() {
        bail!(
            "{flag}: {} is not valid UTF-8, which settings.json cannot hold",
            path.display()
        );
    }
    Ok(path)
}

/// The forwarder `hookd install` registers in `scope`: `--forwarder PATH`
/// when given, else for `--scope project` [`shared_program`]'s bare
/// `hook-forwarder` (the project's settings file is committed and read on
/// every machine, so the path of this machine's forwarder would be wrong
/// for everyone else), else the forwarder next to `hookd` (see
/// [`resolve_forwarder`]).
pub fn forwarder_for(scope: Option<Scope>, explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    match (scope, explicit) {
        (Some(Scope::Project), None) => shared_program(FORWARDER_NAME),
        _ => resolve_forwarder(explicit),
    }
}

/// `program`'s bare name, as a settings file shared with a project names
/// it: each agent finds it on its user's `PATH` (Claude Code execs a bare
/// `command` through `PATH`, Codex and Gemini run their command line
/// through a shell), so the file means the same on every machine. It must
/// be on this user's `PATH` already: a hook whose command cannot start
/// does nothing, or, registered fail-closed, blocks every tool call.
pub fn shared_program(program: &str) -> anyhow::Result<PathBuf> {
    if find_on_path(program).is_none() {
        bail!(
            "--scope project: the project's settings file is shared, so it runs `{program}` \
             from each user's PATH, and `{program}` is not on yours; install hookd's binaries \
             (`scripts/install`, into ~/.cargo/bin) or add their directory to PATH, or use \
             --scope local (this checkout only), which registers this machine's paths"
        );
    }
    Ok(PathBuf::from(program))
}

/// The executable file called `program` in the first `PATH` directory
/// that has one.
pub fn find_on_path(program: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(program))
        .find(|p| fs::metadata(p).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0))
}

/// What an install or uninstall did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// `install` or `uninstall`.
    pub action: &'static str,
    /// The settings file.
    pub settings: PathBuf,
    /// Whether the text changed.
    pub changed: bool,
    /// Install: whether hookd's hook entries changed (`changed` counts the
    /// status line too), so the summary says only what did.
    #[serde(skip)]
    pub hooks_changed: bool,
    /// Whether the file was written (false for a dry run or no change).
    pub written: bool,
    /// The copy of the previous file, when one was written.
    pub backup: Option<PathBuf>,
    /// Install: the events registered. Uninstall: the events whose hookd
    /// entries were removed.
    pub events: Vec<String>,
    /// Uninstall: how many handlers were removed.
    pub removed: usize,
    /// The change as a unified diff (empty when nothing changed).
    pub diff: String,
    /// What `--statusline` did, when it was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statusline: Option<StatuslineChange>,
}

impl Outcome {
    /// One human sentence saying what happened.
    pub fn summary(&self) -> String {
        let main = self.hooks_summary();
        match self.statusline {
            Some(StatuslineChange::Added) if self.written => format!(
                "{main}\n{}: registered hookd's statusLine",
                self.settings.display()
            ),
            Some(StatuslineChange::Added) if self.hooks_changed => format!(
                "{main}\n{}: would register hookd's statusLine",
                self.settings.display()
            ),
            Some(StatuslineChange::Added) => format!(
                "{main}\ndry run: {} would register hookd's statusLine; nothing written",
                self.settings.display()
            ),
            Some(StatuslineChange::Kept) => format!(
                "{main}\n{}: hookd's statusLine is already registered",
                self.settings.display()
            ),
            Some(StatuslineChange::SkippedOthers) => format!(
                "{main}\n{}: has a statusLine of its own; left it alone (remove it first to use `hookd statusline`)",
                self.settings.display()
            ),
            Some(StatuslineChange::Removed) | None => main,
        }
    }

    fn hooks_summary(&self) -> String {
        let path = self.settings.display();
        let n = self.events.len();
        let events = format!("{n} event{}", if n == 1 { "" } else { "s" });
        let backup = self
            .backup
            .as_ref()
            .map(|b| format!(" (previous file kept as {})", b.display()))
            .unwrap_or_default();
        match (self.action, self.changed, self.written) {
            ("install", false, _) => {
                format!("{path} already registers hook-forwarder for these {events}; nothing to do")
            }
            // Only the status line changes: the line after says so.
            ("install", true, _) if !self.hooks_changed => {
                format!("{path} already registers hook-forwarder for these {events}")
            }
            ("install", true, true) => {
                format!("{path}: registered hook-forwarder for {events}{backup}")
            }
            ("install", true, false) => {
                format!(
                    "dry run: {path} would register hook-forwarder for {events}; nothing written"
                )
            }
            (_, false, _) => {
                format!("{path} holds no entry written by hookd install; nothing to do")
            }
            (_, true, true) => format!(
                "{path}: removed {} hookd entr{} ({events}){backup}",
                self.removed,
                if self.removed == 1 { "y" } else { "ies" }
            ),
            (_, true, false) => format!(
                "dry run: {path} would lose {} hookd entr{}; nothing written",
                self.removed,
                if self.removed == 1 { "y" } else { "ies" }
            ),
        }
    }
}

/// Reads a settings file: `None` when it does not exist.
fn read_settings(path: &Path) -> anyhow::Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text; fix the file", path.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn located(path: &Path, e: SettingsError) -> anyhow::Error {
    anyhow::anyhow!("{}:{e}; the file was not changed", path.display())
}

fn diff_for(path: &Path, before: Option<&str>, after: &str) -> String {
    let name = path.display().to_string();
    match before {
        Some(b) => diff::unified(b, after, &name, &name),
        None => diff::unified("", after, "/dev/null", &name),
    }
}

/// Registers the forwarder in the settings file at `path` (created when
/// missing). With `dry_run`, nothing is written.
pub fn install(path: &Path, options: &InstallOptions, dry_run: bool) -> anyhow::Result<Outcome> {
    let before = read_settings(path)?;
    let (after, hooks_changed, statusline) =
        install_all(before.as_deref(), options).map_err(|e| located(path, e))?;
    let changed = before.as_deref() != Some(after.as_str());
    let backup = if changed && !dry_run {
        write_settings(path, before.as_deref(), &after)?
    } else {
        None
    };
    Ok(Outcome {
        action: "install",
        settings: path.to_path_buf(),
        changed,
        hooks_changed,
        written: changed && !dry_run,
        backup,
        events: event_names(options)
            .into_iter()
            .map(|(_, name)| name.into())
            .collect(),
        removed: 0,
        diff: diff_for(path, before.as_deref(), &after),
        statusline,
    })
}

/// Removes the handlers `hookd install` wrote from the settings file at
/// `path`. A missing file is nothing to do. With `dry_run`, nothing is
/// written.
pub fn uninstall(path: &Path, dry_run: bool) -> anyhow::Result<Outcome> {
    let before = read_settings(path)?;
    let (after, removed, events) = match before.as_deref() {
        None => (None, 0, Vec::new()),
        Some(text) => {
            let events = inspect(text)
                .map_err(|e| located(path, e))?
                .registrations
                .into_iter()
                .filter(|r| r.installed)
                .fold(Vec::<String>::new(), |mut acc, r| {
                    if !acc.contains(&r.event) {
                        acc.push(r.event);
                    }
                    acc
                });
            let (after, removed) = uninstall_text(text).map_err(|e| located(path, e))?;
            (Some(after), removed, events)
        }
    };
    let changed = after.is_some() && after != before;
    let backup = match (&after, changed && !dry_run) {
        (Some(after), true) => write_settings(path, before.as_deref(), after)?,
        _ => None,
    };
    Ok(Outcome {
        action: "uninstall",
        settings: path.to_path_buf(),
        changed,
        hooks_changed: changed,
        written: changed && !dry_run,
        backup,
        events,
        removed,
        diff: match &after {
            Some(after) => diff_for(path, before.as_deref(), after),
            None => String::new(),
        },
        statusline: None,
    })
}

/// The backup path of a settings file.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(BACKUP_SUFFIX);
    path.with_file_name(name)
}

/// Writes `after` over the settings file: a backup of `before` first (when
/// there was a file), then an atomic replace keeping mode and owner. A
/// symlinked settings file is followed, so the link stays a link. Returns
/// the backup's path.
fn write_settings(
    path: &Path,
    before: Option<&str>,
    after: &str,
) -> anyhow::Result<Option<PathBuf>> {
    let target = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path).with_context(|| {
            format!(
                "{} is a symlink to a missing file; fix the link",
                path.display()
            )
        })?,
        _ => path.to_path_buf(),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if before.is_none() {
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    check_writable(&target, &dir)?;
    let existing = fs::metadata(&target).ok();
    let backup = match before {
        Some(before) => {
            let backup = backup_path(&target);
            write_atomic(&backup, before.as_bytes(), existing.as_ref())?;
            Some(backup)
        }
        None => None,
    };
    write_atomic(&target, after.as_bytes(), existing.as_ref())?;
    Ok(backup)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::claude::{FailClosed, HookEventKind};

    fn options(events: &[HookEventKind], fail_closed: FailClosed) -> InstallOptions {
        InstallOptions {
            statusline: None,
            agent: Agent::ClaudeCode,
            forwarder: "/opt/hookd/bin/hook-forwarder".into(),
            events: events.to_vec(),
            fail_closed,
            transport: Transport::Command,
        }
    }

    #[test]
    fn the_ladder_holds_for_every_event() {
        for kind in default_events() {
            let t = timing(kind);
            let forwarder = std::time::Duration::from_secs(t.forwarder_s.into());
            assert!(t.agent_s > t.forwarder_s, "{kind}");
            assert!(
                crate::daemon::hook::daemon_budget(forwarder) < forwarder,
                "{kind}"
            );
            // Never above Claude Code's own default, except SessionEnd,
            // whose 1.5 s is raised on purpose to keep the ladder.
            if kind != HookEventKind::SessionEnd {
                assert!(
                    u64::from(t.agent_s) * 1000 <= kind.claude_default_timeout_ms(),
                    "{kind}"
                );
            }
        }
        assert_eq!(
            timing(HookEventKind::SessionEnd),
            Timing {
                forwarder_s: 1,
                agent_s: 2,
                async_hook: false
            }
        );
        assert_eq!(timing(HookEventKind::PreToolUse).agent_s, 30);
        assert_eq!(timing(HookEventKind::UserPromptSubmit).agent_s, 30);
    }

    #[test]
    fn events_flag() {
        assert_eq!(
            parse_events("PreToolUse, Stop,PreToolUse").unwrap(),
            [HookEventKind::PreToolUse, HookEventKind::Stop]
        );
        assert!(parse_events("pretooluse")
            .unwrap_err()
            .contains("`pretooluse`"));
        assert!(parse_events("WorktreeCreate")
            .unwrap_err()
            .contains("worktree"));
        assert!(parse_events(",").is_err());
        assert_eq!(default_events().len(), 32);
        assert!(!default_events().contains(&HookEventKind::WorktreeCreate));
    }

    #[test]
    fn handlers_in_exec_form_with_the_marker() {
        let o = options(&[HookEventKind::PreToolUse], FailClosed::Tools);
        let mut text = String::new();
        handler(HookEventKind::PreToolUse, &o).compact(&mut text);
        assert_eq!(
            text,
            r#"{"type":"command","command":"/opt/hookd/bin/hook-forwarder","args":["--timeout","25","--fail-closed","--installed-by=hookd"],"timeout":30,"onFailure":"block"}"#
        );
        // Stop is not guarded: fail-closed changes nothing there.
        let mut text = String::new();
        handler(HookEventKind::Stop, &o).compact(&mut text);
        assert!(
            !text.contains("fail-closed") && !text.contains("onFailure"),
            "{text}"
        );
        assert!(is_installed_handler(
            &handler(HookEventKind::Stop, &o).to_value()
        ));
    }

    #[test]
    fn only_the_events_of_the_scope_fail_closed() {
        let compact = |kind, scope| {
            let mut text = String::new();
            handler(kind, &options(&[kind], scope)).compact(&mut text);
            text
        };
        // `tools` (bare --fail-closed): a prompt is never blocked, not even
        // by a forwarder that cannot start.
        for kind in [HookEventKind::PreToolUse, HookEventKind::PermissionRequest] {
            let text = compact(kind, FailClosed::Tools);
            assert!(text.contains(r#""--fail-closed","#), "{text}");
            assert!(text.contains(r#""onFailure":"block""#), "{text}");
        }
        let text = compact(HookEventKind::UserPromptSubmit, FailClosed::Tools);
        assert!(
            !text.contains("fail-closed") && !text.contains("onFailure"),
            "{text}"
        );
        // `all`: every guarded event, prompts included.
        for kind in [HookEventKind::PreToolUse, HookEventKind::UserPromptSubmit] {
            let text = compact(kind, FailClosed::All);
            assert!(text.contains(r#""--fail-closed=all","#), "{text}");
            assert!(text.contains(r#""onFailure":"block""#), "{text}");
        }
        // What inspect reads back is what the forwarder will do.
        let all = options(&default_events(), FailClosed::All);
        let tools = options(&default_events(), FailClosed::Tools);
        for (o, scope) in [(all, FailClosed::All), (tools, FailClosed::Tools)] {
            for r in inspect(&hooks_block(&o)).unwrap().registrations {
                let kind = HookEventKind::from_name(&r.event);
                assert_eq!(r.fails_closed(), scope.blocks(kind), "{}", r.event);
                assert_eq!(r.on_failure_block, scope.blocks(kind), "{}", r.event);
            }
        }
    }

    #[test]
    fn install_is_idempotent_and_uninstall_restores() {
        let o = options(
            &[HookEventKind::PreToolUse, HookEventKind::SessionEnd],
            FailClosed::Off,
        );
        let before = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [{\"type\": \"command\", \"command\": \"/bin/true\"}]\n            }\n        ]\n    }\n}\n";
        let once = install_text(Some(before), &o).unwrap();
        assert_eq!(install_text(Some(&once), &o).unwrap(), once);
        assert!(once.contains("\n            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\","), "{once}");
        let (back, removed) = uninstall_text(&once).unwrap();
        assert_eq!(removed, 2);
        assert_eq!(back, before);
        // Other options replace the entries of the events installed, and
        // leave hookd's other events alone.
        let closed = options(&[HookEventKind::PreToolUse], FailClosed::Tools);
        let twice = install_text(Some(&once), &closed).unwrap();
        let found = inspect(&twice).unwrap().registrations;
        assert_eq!(found.len(), 2);
        assert!(found
            .iter()
            .any(|r| r.event == "PreToolUse" && r.args.contains(&"--fail-closed".to_string())));
        assert!(found.iter().any(|r| r.event == "SessionEnd"));
        assert_eq!(install_text(Some(&twice), &closed).unwrap(), twice);
        assert_eq!(uninstall_text(&twice).unwrap().0, before);
    }

    #[test]
    fn containers_left_empty_go_even_if_they_were_there_before() {
        // Documented exception to "byte for byte": uninstall cannot tell an
        // empty array or `hooks` object of the user's from one it emptied.
        let o = options(&[HookEventKind::Stop], FailClosed::Off);
        let before = "{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n";
        let installed = install_text(Some(before), &o).unwrap();
        assert_eq!(uninstall_text(&installed).unwrap().0, "{}\n");
    }

    #[test]
    fn refusals_name_the_position() {
        let o = options(&[HookEventKind::PreToolUse], FailClosed::Off);
        let err = install_text(Some("{\n  \"a\": 1, // no\n}"), &o).unwrap_err();
        assert!(
            matches!(
                err,
                SettingsError::Syntax {
                    line: 2,
                    column: 11,
                    ..
                }
            ),
            "{err}"
        );
        let err = install_text(Some("[]"), &o).unwrap_err().to_string();
        assert!(
            err.starts_with("1:1: the settings file must hold a JSON object"),
            "{err}"
        );
        let err = install_text(Some("{\"hooks\": {\"Stop\": {}}}"), &o)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("1:20: `hooks.Stop` must be an array"),
            "{err}"
        );
        let err = install_text(Some("{\"hooks\": {}, \"hooks\": {}}"), &o)
            .unwrap_err()
            .to_string();
        assert!(err.contains("duplicate key `hooks`"), "{err}");
    }

    #[test]
    fn a_handwritten_forwarder_entry_is_seen_but_never_removed() {
        let text = r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"/x/hook-forwarder --timeout 20","timeout":30000}]}]}}"#;
        let found = inspect(text).unwrap().registrations;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].command, "/x/hook-forwarder");
        assert_eq!(found[0].forwarder_timeout, Some(20.0));
        assert_eq!(found[0].timeout, Some(30000.0));
        assert!(!found[0].installed);
        assert_eq!(
            found[0].shell_command.as_deref(),
            Some("/x/hook-forwarder --timeout 20")
        );
        assert_eq!(uninstall_text(text).unwrap(), (text.to_string(), 0));
    }

    #[test]
    fn registrations_run_as_one_when_claude_code_would_deduplicate_them() {
        let text = r#"{"hooks":{"PreToolUse":[
            {"hooks":[{"type":"command","command":"/x/hook-forwarder","args":["--timeout","25"],"timeout":30}]},
            {"matcher":"Bash","hooks":[{"type":"command","command":"/x/hook-forwarder","args":["--timeout","25"],"timeout":45}]},
            {"hooks":[{"type":"command","command":"/x/hook-forwarder","args":["--timeout","20"]}]},
            {"hooks":[{"type":"command","command":"/x/hook-forwarder --timeout 25"}]},
            {"hooks":[{"type":"command","command":"/x/hook-forwarder","args":["--timeout","25"],"if":"Bash(git *)"}]}
        ]}}"#;
        let found = inspect(text).unwrap().registrations;
        assert_eq!(found.len(), 5);
        // Another timeout and matcher: still one handler.
        assert!(found[0].runs_as_one_with(&found[1]));
        assert_eq!(
            found[0].differences(&found[2]),
            ["args `--timeout 25` vs `--timeout 20`"]
        );
        assert_eq!(found[0].differences(&found[3]), ["exec form vs shell form"]);
        assert_eq!(
            found[0].differences(&found[4]),
            ["`if` (none) vs Bash(git *)"]
        );
    }

    #[test]
    fn the_http_transport_writes_http_handlers_that_uninstall_removes() {
        let before = "{\n  \"model\": \"opus\"\n}\n";
        let mut http = options(&default_events(), FailClosed::Tools);
        http.transport = Transport::Http {
            base_url: "http://127.0.0.1:7878/".into(),
        };
        let text = install_text(Some(before), &http).unwrap();
        let settings: serde_json::Value = serde_json::from_str(&text).unwrap();
        let pre = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
        assert_eq!(
            *pre,
            serde_json::json!({
                "type": "http",
                "url": "http://127.0.0.1:7878/hook/claude-code?timeout=25&fail_closed=tools",
                "headers": {
                    "Authorization": "Bearer $HOOKD_HTTP_TOKEN",
                    "X-Hookd-Installed-By": "hookd"
                },
                "allowedEnvVars": ["HOOKD_HTTP_TOKEN"],
                "timeout": 30,
                "onFailure": "block"
            })
        );
        // No onFailure, and no fail_closed, where the scope does not block.
        let prompt = &settings["hooks"]["UserPromptSubmit"][0]["hooks"][0];
        assert_eq!(prompt["type"], "http");
        assert!(prompt.get("onFailure").is_none(), "{prompt}");
        assert!(
            !prompt["url"].as_str().unwrap().contains("fail_closed"),
            "{prompt}"
        );
        // The forwarder where an http handler cannot say it all.
        for event in ["SessionStart", "Setup", "TeammateIdle", "TaskCompleted"] {
            let handler = &settings["hooks"][event][0]["hooks"][0];
            assert_eq!(handler["type"], "command", "{event}: {handler}");
        }
        assert_eq!(install_text(Some(&text), &http).unwrap(), text);
        // Back to the forwarder: hookd's http handlers are replaced.
        let command = options(&default_events(), FailClosed::Tools);
        let switched = install_text(Some(&text), &command).unwrap();
        assert!(!switched.contains("\"http\""), "{switched}");
        assert_eq!(switched, install_text(Some(before), &command).unwrap());
        let (after, removed) = uninstall_text(&text).unwrap();
        assert_eq!(removed, default_events().len());
        assert_eq!(after, before);
    }
}
