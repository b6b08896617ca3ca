//! `hookd install --scope managed`: hookd's registrations as their own file
//! in Claude Code's managed settings directory, so every user of the
//! machine gets them, including in organizations that set
//! `allowManagedHooksOnly` (Claude Code then runs managed hooks only).
//!
//! Claude Code 2.1.330 reads `managed-settings.json` and every file of
//! `managed-settings.d/` (in name order) under `/etc/claude-code` on Linux
//! and `/Library/Application Support/ClaudeCode` on macOS; the location
//! is built in (no variable moves it: its override returns nothing in this
//! build), and it checks who may write a managed file. So the file is
//! written by root, 0644, atomically; hookd owns it whole (`50-hookd.json`), so there is no
//! backup and `uninstall` removes it once no hookd entry is left in it.
//! `HOOKD_MANAGED_SETTINGS_DIR` points hookd at another directory (for
//! tests, or an image being built).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::{
    diff_for, event_names, install_all, located, read_settings, uninstall_text, write_atomic,
    InstallOptions, Outcome,
};

/// hookd's file in the managed settings directory.
pub const MANAGED_FILE: &str = "50-hookd.json";

/// Overrides [`default_dir`].
pub const DIR_ENV: &str = "HOOKD_MANAGED_SETTINGS_DIR";

/// Claude Code's managed settings directory on this OS.
pub fn default_dir() -> PathBuf {
    if cfg!(target_os = "macos") {
        PathBuf::from("/Library/Application Support/ClaudeCode/managed-settings.d")
    } else {
        PathBuf::from("/etc/claude-code/managed-settings.d")
    }
}

/// The managed settings directory: `$HOOKD_MANAGED_SETTINGS_DIR`, else
/// [`default_dir`].
pub fn dir() -> PathBuf {
    std::env::var_os(DIR_ENV)
        .filter(|d| !d.is_empty())
        .map_or_else(default_dir, PathBuf::from)
}

/// hookd's managed settings file.
pub fn settings_file() -> PathBuf {
    dir().join(MANAGED_FILE)
}

/// Registers the forwarder in hookd's managed settings file. With
/// `dry_run`, nothing is written (and no permission is needed).
pub fn install(options: &InstallOptions, dry_run: bool) -> anyhow::Result<Outcome> {
    let path = settings_file();
    let before = read_settings(&path)?;
    let (after, hooks_changed, statusline) =
        install_all(before.as_deref(), options).map_err(|e| located(&path, e))?;
    let changed = before.as_deref() != Some(after.as_str());
    if changed && !dry_run {
        write(&path, Some(&after))?;
    }
    Ok(Outcome {
        action: "install",
        settings: path.clone(),
        changed,
        hooks_changed,
        written: changed && !dry_run,
        backup: None,
        events: event_names(options)
            .into_iter()
            .map(|(_, name)| name.into())
            .collect(),
        removed: 0,
        diff: diff_for(&path, before.as_deref(), &after),
        statusline,
    })
}

/// Removes hookd's entries from its managed settings file, and the file
/// when nothing else is left in it.
pub fn uninstall(dry_run: bool) -> anyhow::Result<Outcome> {
    let path = settings_file();
    let mut outcome = Outcome {
        action: "uninstall",
        settings: path.clone(),
        changed: false,
        hooks_changed: false,
        written: false,
        backup: None,
        events: Vec::new(),
        removed: 0,
        diff: String::new(),
        statusline: None,
    };
    let Some(before) = read_settings(&path)? else {
        return Ok(outcome);
    };
    outcome.events = super::inspect(&before)
        .map_err(|e| located(&path, e))?
        .registrations
        .into_iter()
        .filter(|r| r.installed)
        .fold(Vec::new(), |mut events, r| {
            if !events.contains(&r.event) {
                events.push(r.event);
            }
            events
        });
    let (after, removed) = uninstall_text(&before).map_err(|e| located(&path, e))?;
    let keep = !is_empty_settings(&after);
    outcome.removed = removed;
    outcome.changed = removed > 0 || !keep;
    outcome.diff = diff_for(&path, Some(&before), if keep { &after } else { "" });
    if outcome.changed && !dry_run {
        write(&path, keep.then_some(after.as_str()))?;
        outcome.written = true;
    }
    Ok(outcome)
}

/// Whether settings text says nothing: `{}`, or only an empty `hooks`.
fn is_empty_settings(text: &str) -> bool {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => map.iter().all(|(key, value)| {
            key == "hooks" && value.as_object().is_some_and(serde_json::Map::is_empty)
        }),
        _ => false,
    }
}

/// Writes (or, with `None`, removes) the managed file: refused with what to
/// do when this user may not write the directory.
fn write(path: &Path, text: Option<&str>) -> anyhow::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("/"));
    check_permission(dir)?;
    match text {
        Some(text) => {
            fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            let existing = fs::metadata(path).ok();
            write_atomic(path, text.as_bytes(), existing.as_ref())?;
            // Every user's Claude Code reads it; only its owner writes it.
            fs::set_permissions(path, fs::Permissions::from_mode(0o644))
                .with_context(|| format!("making {} readable by every user", path.display()))
        }
        None => fs::remove_file(path).with_context(|| format!("removing {}", path.display())),
    }
}

/// Refuses, with what to do, when `dir` (or, while it does not exist, its
/// nearest existing ancestor) is not writable by this user.
fn check_permission(dir: &Path) -> anyhow::Result<()> {
    use nix::unistd::{access, AccessFlags};
    let existing = dir
        .ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("/"));
    if access(existing, AccessFlags::W_OK).is_err() {
        anyhow::bail!(
            "cannot write {}: Claude Code's managed settings belong to the administrator \
             ({} is not writable by this user). Run it as root: `sudo hookd install --scope managed` \
             (and `sudo hookd uninstall --scope managed` to remove it), or set {DIR_ENV} to write elsewhere",
            dir.join(MANAGED_FILE).display(),
            existing.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_settings_are_recognised() {
        assert!(is_empty_settings("{}"));
        assert!(is_empty_settings("{\n  \"hooks\": {}\n}\n"));
        assert!(!is_empty_settings(
            "{\"hooks\": {}, \"env\": {\"A\": \"1\"}}"
        ));
        assert!(!is_empty_settings("{\"hooks\": {\"Stop\": []}}"));
    }
}
