//! `hookd service install`: put the systemd user units (`systemd/`, embedded
//! here) into `$XDG_CONFIG_HOME/systemd/user/`, with `ExecStart=` pointing at
//! the real `hookd`. It never runs `systemctl`; it prints the commands.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Serialize;

/// `systemd/hookd.socket`, as shipped.
pub const SOCKET_UNIT: &str = include_str!("../systemd/hookd.socket");

/// `systemd/hookd.service`, as shipped (its `ExecStart=` is rewritten).
pub const SERVICE_UNIT: &str = include_str!("../systemd/hookd.service");

/// What to run after the units are in place.
pub const COMMANDS: [&str; 2] = [
    "systemctl --user daemon-reload",
    "systemctl --user enable --now hookd.socket",
];

/// `$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`.
pub fn unit_dir() -> anyhow::Result<PathBuf> {
    match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => Ok(PathBuf::from(dir).join("systemd/user")),
        None => match std::env::var_os("HOME").filter(|v| !v.is_empty()) {
            Some(home) => Ok(PathBuf::from(home).join(".config/systemd/user")),
            None => bail!("neither XDG_CONFIG_HOME nor HOME is set: cannot locate the systemd user unit directory"),
        },
    }
}

/// Quotes a path for a systemd command line (`systemd.service(5)`, "Command
/// lines"): `%` specifiers and `$` variables are escaped by doubling, and a
/// path with spaces, quotes or backslashes goes in double quotes.
pub fn exec_quote(path: &str) -> String {
    let escaped = path.replace('%', "%%").replace('$', "$$");
    if escaped
        .chars()
        .any(|c| c.is_whitespace() || matches!(c, '"' | '\'' | '\\' | ';'))
    {
        format!("\"{}\"", escaped.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        escaped
    }
}

/// `hookd.service` with `ExecStart=<hookd> serve`.
pub fn service_unit(hookd: &Path) -> String {
    let exec = format!("ExecStart={} serve", exec_quote(&hookd.to_string_lossy()));
    SERVICE_UNIT
        .lines()
        .map(|line| {
            if line.starts_with("ExecStart=") {
                exec.as_str()
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// One unit file written (or, in a dry run, to be written).
#[derive(Debug, Clone, Serialize)]
pub struct UnitFile {
    /// Where.
    pub path: PathBuf,
    /// `created`, `updated` or `unchanged`.
    pub status: &'static str,
    /// The contents.
    pub contents: String,
}

/// What `service install` did.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceOutcome {
    /// The `hookd` that `ExecStart=` runs.
    pub hookd: PathBuf,
    /// The two units.
    pub units: Vec<UnitFile>,
    /// Whether anything was written.
    pub written: bool,
    /// What to run next.
    pub commands: Vec<String>,
}

/// The `hookd` binary: `<bin_dir>/hookd`, else the running executable.
pub fn hookd_path(bin_dir: Option<&Path>) -> anyhow::Result<PathBuf> {
    let path = match bin_dir {
        Some(dir) => std::path::absolute(dir)
            .with_context(|| format!("--bin-dir {}", dir.display()))?
            .join("hookd"),
        None => std::env::current_exe().context("finding the hookd executable")?,
    };
    let executable = fs::metadata(&path).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0);
    if !executable {
        bail!(
            "--bin-dir: {} is not an executable hookd; pass the directory that holds hookd (e.g. ~/.cargo/bin)",
            path.display()
        );
    }
    Ok(path)
}

/// Writes the units into `dir` (created if missing) for `hookd`; with
/// `dry_run`, writes nothing. systemd runs only on Linux: elsewhere this
/// refuses and says what to do instead.
pub fn install(dir: &Path, hookd: &Path, dry_run: bool) -> anyhow::Result<ServiceOutcome> {
    if !cfg!(target_os = "linux") {
        bail!(
            "`hookd service install` installs systemd user units, and systemd runs only on Linux \
             (launchd is not supported): run `hookd serve` under your own supervisor instead"
        );
    }
    let wanted = [
        (dir.join("hookd.socket"), SOCKET_UNIT.to_string()),
        (dir.join("hookd.service"), service_unit(hookd)),
    ];
    let mut units = Vec::new();
    for (path, contents) in wanted {
        let status = match fs::read_to_string(&path) {
            Ok(old) if old == contents => "unchanged",
            Ok(_) => "updated",
            Err(_) => "created",
        };
        units.push(UnitFile {
            path,
            status,
            contents,
        });
    }
    let changed = units.iter().any(|u| u.status != "unchanged");
    if changed && !dry_run {
        fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        for unit in units.iter().filter(|u| u.status != "unchanged") {
            let like = fs::metadata(&unit.path).ok();
            crate::install::write_atomic(&unit.path, unit.contents.as_bytes(), like.as_ref())?;
        }
    }
    let mut commands: Vec<String> = COMMANDS.iter().map(|c| c.to_string()).collect();
    if units.iter().any(|u| u.status == "updated") {
        commands.push("systemctl --user restart hookd.service   # if it was running".into());
    }
    Ok(ServiceOutcome {
        hookd: hookd.to_path_buf(),
        units,
        written: changed && !dry_run,
        commands,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_start_points_at_the_given_hookd() {
        let unit = service_unit(Path::new("/opt/hookd/bin/hookd"));
        assert!(
            unit.contains("\nExecStart=/opt/hookd/bin/hookd serve\n"),
            "{unit}"
        );
        assert_eq!(unit.matches("ExecStart=").count(), 1);
        assert!(unit.contains("Type=notify") && unit.contains("WatchdogSec="));
    }

    #[test]
    fn odd_paths_are_quoted() {
        assert_eq!(exec_quote("/a/b"), "/a/b");
        assert_eq!(
            exec_quote("/my bins/100%/hookd"),
            "\"/my bins/100%%/hookd\""
        );
        assert_eq!(exec_quote("/x$y"), "/x$$y");
    }

    #[test]
    fn writes_then_reports_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let units = dir.path().join("systemd/user");
        let hookd = Path::new("/usr/local/bin/hookd");
        let dry = install(&units, hookd, true).unwrap();
        assert!(!dry.written && !units.exists());
        let first = install(&units, hookd, false).unwrap();
        assert!(first.written);
        assert_eq!(
            fs::read_to_string(units.join("hookd.socket")).unwrap(),
            SOCKET_UNIT
        );
        let again = install(&units, hookd, false).unwrap();
        assert!(!again.written);
        assert!(again.units.iter().all(|u| u.status == "unchanged"));
        let moved = install(&units, Path::new("/elsewhere/hookd"), false).unwrap();
        assert_eq!(moved.units[1].status, "updated");
        assert!(moved.commands.iter().any(|c| c.contains("restart")));
    }
}
