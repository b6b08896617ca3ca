//! `hookd log verify [LOG…]`, and the set of files one log is kept in.

use std::path::{Path, PathBuf};

/// The files of log `log`, oldest first: its rotated files `<log>.<n>`
/// (`.1` the most recent, see [`crate::daemon::log`]) from the highest `n`
/// that exists, then `log` itself if it exists.
pub fn log_files(log: &Path) -> Vec<PathBuf> {
    let numbered = |n: u32| {
        let mut p = log.as_os_str().to_owned();
        p.push(format!(".{n}"));
        PathBuf::from(p)
    };
    let mut files: Vec<PathBuf> = (1..).map(numbered).take_while(|p| p.exists()).collect();
    files.reverse();
    if log.exists() {
        files.push(log.to_path_buf());
    }
    files
}
