//! `hookd install|uninstall --agent opencode|pi`: hookd's in-process plugin
//! file, for the agents that run no command hooks.
//!
//! OpenCode loads every `.js` file of `.opencode/plugin/` (project) and
//! `~/.config/opencode/plugin/` (user); the Pi coding agent every `.js` file
//! of `.pi/extensions/` (project) and `~/.pi/agent/extensions/` (user,
//! `$PI_CODING_AGENT_DIR/extensions/` when set). Install writes one file
//! there, `hookd.js`: the shared socket client (`plugins/client.js`) and
//! the agent's part (`plugins/opencode.js`, `plugins/pi.js`), both embedded
//! in this binary, after a header holding [`MARKER`] and the options
//! (fail-closed, deadline). Uninstall removes exactly that file, and only
//! when its header says hookd wrote it; a file of that name without the
//! marker is never replaced or removed. The directories install created
//! stay.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Serialize;

use super::{diff, Scope};
use crate::agent::Agent;

/// `plugins/client.js`, as built: the socket client both plugins share.
pub const CLIENT_JS: &str = include_str!("../../plugins/client.js");
/// `plugins/opencode.js`, as built.
pub const OPENCODE_JS: &str = include_str!("../../plugins/opencode.js");
/// `plugins/pi.js`, as built.
pub const PI_JS: &str = include_str!("../../plugins/pi.js");

/// The line that marks a plugin file hookd wrote.
pub const MARKER: &str = "// installed-by=hookd";

/// The plugin file's name.
pub const FILE_NAME: &str = "hookd.js";

/// Whether `agent` is reached through a plugin file rather than command
/// hooks in a settings file.
pub fn is_plugin_agent(agent: Agent) -> bool {
    matches!(agent, Agent::OpenCode | Agent::Pi)
}

/// The plugin file of `agent` in `scope` for `project`.
pub fn plugin_path(agent: Agent, scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    let env_dir = |key: &str| {
        std::env::var_os(key)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let home = || {
        env_dir("HOME").with_context(|| {
            format!("--agent {agent} --scope user: HOME is not set; use --scope project")
        })
    };
    let dir = match (agent, scope) {
        (Agent::OpenCode, Scope::Project) => project.join(".opencode").join("plugin"),
        (Agent::OpenCode, Scope::User) => match env_dir("XDG_CONFIG_HOME") {
            Some(dir) => dir.join("opencode").join("plugin"),
            None => home()?.join(".config").join("opencode").join("plugin"),
        },
        (Agent::Pi, Scope::Project) => project.join(".pi").join("extensions"),
        (Agent::Pi, Scope::User) => match env_dir("PI_CODING_AGENT_DIR") {
            Some(dir) => dir.join("extensions"),
            None => home()?.join(".pi").join("agent").join("extensions"),
        },
        (Agent::OpenCode | Agent::Pi, scope) => bail!(
            "--scope {}: {agent} loads plugins from a user or a project directory; use --scope user or --scope project",
            scope.as_str()
        ),
        (agent, _) => bail!("{agent} takes command hooks in its settings file, not a plugin"),
    };
    Ok(dir.join(FILE_NAME))
}

/// The whole plugin file for `agent`: the header, the client, the agent's
/// part. `fail_closed`: block tool calls when the daemon cannot answer.
pub fn plugin_text(agent: Agent, fail_closed: bool, deadline_ms: u64) -> String {
    let part = match agent {
        Agent::OpenCode => OPENCODE_JS,
        _ => PI_JS,
    };
    format!(
        "{MARKER} {version}: hookd's {name} plugin, written by `hookd install --agent {agent}`\n\
         // and removed by `hookd uninstall --agent {agent}`; install replaces it, so do not edit it.\n\
         const HOOKD_CONFIG = {{ failClosed: {fail_closed}, deadlineMs: {deadline_ms} }};\n\n\
         {CLIENT_JS}\n{part}",
        version = env!("CARGO_PKG_VERSION"),
        name = agent.display_name(),
    )
}

/// What a plugin install or uninstall did (or would do).
#[derive(Debug, Clone, Serialize)]
pub struct PluginOutcome {
    /// `install` or `uninstall`.
    pub action: &'static str,
    /// The agent.
    pub agent: &'static str,
    /// The plugin file.
    pub plugin: PathBuf,
    /// Whether the file changed (or would).
    pub changed: bool,
    /// Whether it was written or removed (false for a dry run).
    pub written: bool,
    /// The change as a unified diff.
    pub diff: String,
}

impl PluginOutcome {
    /// One human sentence saying what happened.
    pub fn summary(&self) -> String {
        let path = self.plugin.display();
        match (self.action, self.changed, self.written) {
            ("install", false, _) => {
                format!("{path}: hookd's plugin is already installed; nothing to do")
            }
            ("install", true, true) => format!("{path}: installed hookd's {} plugin", self.agent),
            ("install", true, false) => format!("dry run: would write {path}; nothing written"),
            (_, false, _) => format!("{path}: no plugin written by hookd install; nothing to do"),
            (_, true, true) => format!("{path}: removed hookd's {} plugin", self.agent),
            (_, true, false) => format!("dry run: would remove {path}; nothing written"),
        }
    }
}

fn read(path: &Path) -> anyhow::Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

fn ours(text: &str) -> bool {
    text.starts_with(MARKER)
}

/// Writes the plugin file at `path` (its directories created when
/// missing), replacing one hookd wrote; refuses a file of that name that
/// hookd did not write.
pub fn install(
    path: &Path,
    agent: Agent,
    text: &str,
    dry_run: bool,
) -> anyhow::Result<PluginOutcome> {
    let before = read(path)?;
    if let Some(existing) = &before {
        if !ours(existing) {
            bail!(
                "{}: a file hookd did not write is there; move it away (hookd never replaces it)",
                path.display()
            );
        }
    }
    let changed = before.as_deref() != Some(text);
    let name = path.display().to_string();
    let diff = diff::unified(
        before.as_deref().unwrap_or(""),
        text,
        if before.is_some() { &name } else { "/dev/null" },
        &name,
    );
    if changed && !dry_run {
        let dir = path.parent().context("the plugin path has no directory")?;
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        super::write_atomic(path, text.as_bytes(), None)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(PluginOutcome {
        action: "install",
        agent: agent.as_str(),
        plugin: path.to_path_buf(),
        changed,
        written: changed && !dry_run,
        diff,
    })
}

/// Removes the plugin file at `path` when hookd wrote it.
pub fn uninstall(path: &Path, agent: Agent, dry_run: bool) -> anyhow::Result<PluginOutcome> {
    let before = read(path)?;
    let changed = match &before {
        None => false,
        Some(text) if ours(text) => true,
        Some(_) => bail!(
            "{}: hookd did not write this file (no `{MARKER}` header); left it alone",
            path.display()
        ),
    };
    let name = path.display().to_string();
    let diff = match &before {
        Some(text) if changed => diff::unified(text, "", &name, "/dev/null"),
        _ => String::new(),
    };
    if changed && !dry_run {
        fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    }
    Ok(PluginOutcome {
        action: "uninstall",
        agent: agent.as_str(),
        plugin: path.to_path_buf(),
        changed,
        written: changed && !dry_run,
        diff,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_and_uninstall_round_trip_and_spare_foreign_files() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("p").join(FILE_NAME);
        let text = plugin_text(Agent::Pi, true, 1000);
        assert!(text.starts_with(MARKER));
        assert!(text.contains("failClosed: true, deadlineMs: 1000"));
        let dry = install(&path, Agent::Pi, &text, true).unwrap();
        assert!(dry.changed && !dry.written && !path.exists());
        assert!(install(&path, Agent::Pi, &text, false).unwrap().written);
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
        assert!(!install(&path, Agent::Pi, &text, false).unwrap().changed);
        assert!(uninstall(&path, Agent::Pi, false).unwrap().written);
        assert!(!path.exists());
        assert!(!uninstall(&path, Agent::Pi, false).unwrap().changed);
        fs::write(&path, "// mine\n").unwrap();
        assert!(install(&path, Agent::Pi, &text, false).is_err());
        assert!(uninstall(&path, Agent::Pi, false).is_err());
        assert_eq!(fs::read_to_string(&path).unwrap(), "// mine\n");
    }

    #[test]
    fn paths_per_scope() {
        let p = Path::new("/proj");
        assert_eq!(
            plugin_path(Agent::OpenCode, Scope::Project, p).unwrap(),
            Path::new("/proj/.opencode/plugin/hookd.js")
        );
        assert_eq!(
            plugin_path(Agent::Pi, Scope::Project, p).unwrap(),
            Path::new("/proj/.pi/extensions/hookd.js")
        );
        assert!(plugin_path(Agent::Pi, Scope::Local, p).is_err());
        assert!(plugin_path(Agent::Codex, Scope::User, p).is_err());
    }
}
