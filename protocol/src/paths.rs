//! Where hookd's files live, and the rule for the socket's directory. Std
//! (and libc's `geteuid`) only: the forwarder uses this too.
//!
//! One explicit socket address for every session on the machine (never
//! derived from a hook's cwd: that broke under git worktrees, DESIGN §8):
//! `$HOOKD_SOCKET`, else `$XDG_RUNTIME_DIR/hookd/hookd.sock`, else
//! `/tmp/hookd-$UID/hookd.sock`.

use std::ffi::OsString;
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The longest socket path, in bytes: `sun_path` holds 108 bytes on Linux
/// and 104 on macOS and the BSDs, including the terminating NUL.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub const MAX_SOCKET_PATH_BYTES: usize = 107;
/// The longest socket path, in bytes: `sun_path` holds 108 bytes on Linux
/// and 104 on macOS and the BSDs, including the terminating NUL.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub const MAX_SOCKET_PATH_BYTES: usize = 103;

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

/// The effective uid.
pub fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Why `dir` (whose `symlink_metadata` is `meta`) must not hold the socket
/// of a daemon serving `uid`, or `None` when it may. The one rule for both
/// sides: the daemon refuses to bind in such a directory, the forwarder to
/// connect through one. Another user who controls the directory could put
/// their own socket there, receive every hook input and answer "allow".
/// The text names the problem and the fix.
pub fn unsafe_dir_reason(dir: &Path, meta: &Metadata, uid: u32) -> Option<String> {
    if meta.file_type().is_symlink() {
        return Some("it is a symlink; use a real directory".into());
    }
    if !meta.is_dir() {
        return Some("it is not a directory".into());
    }
    if meta.uid() != uid {
        return Some(format!(
            "it belongs to uid {}, not to this user (uid {uid}); remove it or choose another --socket",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Some(format!(
            "it is writable by group or others (mode {:o}); run `chmod 700 {}`",
            meta.mode() & 0o7777,
            dir.display()
        ));
    }
    None
}

/// The directory holding `socket` (`.` for a bare file name).
pub fn socket_dir(socket: &Path) -> &Path {
    match socket.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
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

    #[test]
    fn only_a_private_directory_of_ours_may_hold_the_socket() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let uid = current_uid();
        let check = |dir: &Path, uid: u32| {
            unsafe_dir_reason(dir, &std::fs::symlink_metadata(dir).unwrap(), uid)
        };
        let private = tmp.path().join("private");
        std::fs::create_dir(&private).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(check(&private, uid), None);
        // Readable by others is fine; writable is not.
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(check(&private, uid), None);
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(check(&private, uid)
            .unwrap()
            .contains("writable by group or others"));
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(check(&private, uid + 1)
            .unwrap()
            .contains(&format!("belongs to uid {uid}")));
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&private, &link).unwrap();
        assert!(check(&link, uid).unwrap().contains("symlink"));
        assert_eq!(socket_dir(Path::new("x.sock")), Path::new("."));
        assert_eq!(socket_dir(Path::new("/a/x.sock")), Path::new("/a"));
    }
}
