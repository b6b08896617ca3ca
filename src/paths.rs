//! Where hookd's files live. Std only: the forwarder uses this too.
//!
//! One explicit socket address for every session on the machine (never
//! derived from a hook's cwd: that broke under git worktrees, DESIGN §8):
//! `$HOOKD_SOCKET`, else `$XDG_RUNTIME_DIR/hookd/hookd.sock`, else
//! `/tmp/hookd-$UID/hookd.sock`.

use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

/// `sun_path` holds 108 bytes on Linux, including the terminating NUL.
pub const MAX_SOCKET_PATH_BYTES: usize = 107;

/// The socket path from the process environment.
pub fn socket_path() -> PathBuf {
    socket_path_from(|key| std::env::var_os(key), current_uid)
}

/// The socket path given an environment lookup and a uid source (testable).
pub fn socket_path_from(
    env: impl Fn(&str) -> Option<OsString>,
    uid: impl FnOnce() -> u32,
) -> PathBuf {
    if let Some(path) = env("HOOKD_SOCKET").filter(|v| !v.is_empty()) {
        return PathBuf::from(path);
    }
    if let Some(dir) = env("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        return PathBuf::from(dir).join("hookd").join("hookd.sock");
    }
    PathBuf::from(format!("/tmp/hookd-{}", uid())).join("hookd.sock")
}

/// The effective uid, without libc: `/proc/self` is owned by it.
pub fn current_uid() -> u32 {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(u32::MAX)
}

/// `$XDG_STATE_HOME/hookd/events.jsonl`, else `~/.local/state/hookd/events.jsonl`.
pub fn default_log_path() -> Option<PathBuf> {
    xdg_dir("XDG_STATE_HOME", ".local/state").map(|d| d.join("hookd").join("events.jsonl"))
}

/// `$XDG_CONFIG_HOME/hookd/rules.toml`, else `~/.config/hookd/rules.toml`.
pub fn default_rules_path() -> Option<PathBuf> {
    xdg_dir("XDG_CONFIG_HOME", ".config").map(|d| d.join("hookd").join("rules.toml"))
}

/// `$XDG_CONFIG_HOME/hookd/config.toml`, else `~/.config/hookd/config.toml`.
pub fn default_config_path() -> Option<PathBuf> {
    xdg_dir("XDG_CONFIG_HOME", ".config").map(|d| d.join("hookd").join("config.toml"))
}

fn xdg_dir(var: &str, fallback_under_home: &str) -> Option<PathBuf> {
    match std::env::var_os(var).filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => std::env::var_os("HOME")
            .filter(|v| !v.is_empty())
            .map(|home| PathBuf::from(home).join(fallback_under_home)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_resolution_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            }
        };
        let both = env(&[
            ("HOOKD_SOCKET", "/s/x.sock"),
            ("XDG_RUNTIME_DIR", "/run/user/7"),
        ]);
        assert_eq!(socket_path_from(both, || 7), PathBuf::from("/s/x.sock"));
        let xdg = env(&[("HOOKD_SOCKET", ""), ("XDG_RUNTIME_DIR", "/run/user/7")]);
        assert_eq!(
            socket_path_from(xdg, || 7),
            PathBuf::from("/run/user/7/hookd/hookd.sock")
        );
        assert_eq!(
            socket_path_from(env(&[]), || 7),
            PathBuf::from("/tmp/hookd-7/hookd.sock")
        );
    }
}
