//! Binding the daemon's socket safely (DESIGN §6).
//!
//! - the path must fit in `sun_path`;
//! - its directory is created 0700, and an existing one must be ours, not a
//!   symlink, and not writable by group or others (a squatted directory would
//!   let another user swap the socket under us);
//! - a lock file next to the socket makes "already running" race-free between
//!   two daemons starting at once;
//! - an existing socket is removed only after a connect to it is refused;
//!   if something answers, another daemon owns it and we refuse to start;
//! - the socket is 0600, and it is removed on drop only if it is still ours.

use std::fs::{self, DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

use crate::paths::MAX_SOCKET_PATH_BYTES;

/// Why the socket could not be bound. Every message names the path and says
/// what to do.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// The path does not fit in a Unix socket address.
    #[error("socket path {path} is {len} bytes; Unix sockets allow at most {MAX_SOCKET_PATH_BYTES}: use a shorter --socket or HOOKD_SOCKET")]
    PathTooLong {
        /// The path.
        path: PathBuf,
        /// Its length in bytes.
        len: usize,
    },
    /// The socket's directory is not private to this user.
    #[error("refusing socket directory {dir}: {why}")]
    UnsafeDirectory {
        /// The directory.
        dir: PathBuf,
        /// What is wrong with it and how to fix it.
        why: String,
    },
    /// Another daemon already serves this socket.
    #[error("hookd is already running on {0} (a daemon holds its lock or answers on it); stop it first or pick another --socket")]
    AlreadyRunning(PathBuf),
    /// Something that is not a socket sits at the path.
    #[error("{0} exists and is not a socket; refusing to replace it")]
    NotASocket(PathBuf),
    /// A system call failed.
    #[error("{what} {path}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// On which path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> SocketError + 'a {
    move |source| SocketError::Io {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// A bound listening socket; removes its path on drop if it is still ours.
#[derive(Debug)]
pub struct BoundSocket {
    /// The listener (blocking mode; convert for tokio).
    pub listener: UnixListener,
    path: PathBuf,
    /// (device, inode) of the socket file we created, so drop never removes a
    /// socket some later daemon bound at the same path.
    identity: (u64, u64),
    _lock: Flock<File>,
}

impl BoundSocket {
    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for BoundSocket {
    fn drop(&mut self) {
        if let Ok(meta) = fs::symlink_metadata(&self.path) {
            if (meta.dev(), meta.ino()) == self.identity {
                let _ = fs::remove_file(&self.path);
            }
        }
    }
}

/// Checks the path length with a clear error.
pub fn check_path_len(path: &Path) -> Result<(), SocketError> {
    let len = path.as_os_str().len();
    if len > MAX_SOCKET_PATH_BYTES {
        return Err(SocketError::PathTooLong {
            path: path.to_path_buf(),
            len,
        });
    }
    Ok(())
}

/// Creates `dir` 0700 if missing, and checks an existing one is private.
pub fn ensure_private_dir(dir: &Path) -> Result<(), SocketError> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if let Some(parent) = dir.parent() {
                fs::create_dir_all(parent).map_err(io_err("creating", parent))?;
            }
            match DirBuilder::new().mode(0o700).create(dir) {
                Ok(()) => {}
                // Lost a race with another process: check what it made.
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_err("creating", dir)(e)),
            }
            fs::symlink_metadata(dir).map_err(io_err("inspecting", dir))?
        }
        Err(e) => return Err(io_err("inspecting", dir)(e)),
    };
    check_private_meta(dir, &meta)
}

/// Checks, creating nothing, that an existing `dir` is safe for the socket
/// (what [`ensure_private_dir`] requires); a missing one is an `Io` error
/// with kind `NotFound`. Used by `hookd doctor`.
pub fn check_private_dir(dir: &Path) -> Result<(), SocketError> {
    let meta = fs::symlink_metadata(dir).map_err(io_err("inspecting", dir))?;
    check_private_meta(dir, &meta)
}

fn check_private_meta(dir: &Path, meta: &fs::Metadata) -> Result<(), SocketError> {
    let uid = nix::unistd::geteuid().as_raw();
    match crate::paths::unsafe_dir_reason(dir, meta, uid) {
        Some(why) => Err(SocketError::UnsafeDirectory {
            dir: dir.to_path_buf(),
            why,
        }),
        None => Ok(()),
    }
}

/// Binds `path` following the rules in the module doc.
pub fn bind(path: &Path) -> Result<BoundSocket, SocketError> {
    check_path_len(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    ensure_private_dir(&dir)?;

    let mut lock_name = path.file_name().unwrap_or_default().to_os_string();
    lock_name.push(".lock");
    let lock_path = dir.join(lock_name);
    let lock_file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(&lock_path)
        .map_err(io_err("opening lock file", &lock_path))?;
    let lock = Flock::lock(lock_file, FlockArg::LockExclusiveNonblock)
        .map_err(|_| SocketError::AlreadyRunning(path.to_path_buf()))?;

    match fs::symlink_metadata(path) {
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(SocketError::NotASocket(path.to_path_buf()))
        }
        Ok(_) => match UnixStream::connect(path) {
            Ok(_) => return Err(SocketError::AlreadyRunning(path.to_path_buf())),
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                tracing::info!(path = %path.display(), "removing stale socket (connect refused)");
                fs::remove_file(path).map_err(io_err("removing stale socket", path))?;
            }
            Err(e) => return Err(io_err("probing existing socket", path)(e)),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err("inspecting", path)(e)),
    }

    let listener = UnixListener::bind(path).map_err(io_err("binding", path))?;
    // The directory is 0700, so nobody can reach the socket before this.
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .map_err(io_err("setting mode 0600 on", path))?;
    let meta = fs::symlink_metadata(path).map_err(io_err("inspecting", path))?;
    Ok(BoundSocket {
        listener,
        path: path.to_path_buf(),
        identity: (meta.dev(), meta.ino()),
        _lock: lock,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_long_paths_and_unsafe_dirs() {
        let long = PathBuf::from(format!("/tmp/{}/s.sock", "x".repeat(120)));
        let err = bind(&long).unwrap_err().to_string();
        assert!(err.contains("at most 107"), "{err}");

        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        fs::create_dir(&open).unwrap();
        fs::set_permissions(&open, fs::Permissions::from_mode(0o777)).unwrap();
        let err = bind(&open.join("s.sock")).unwrap_err().to_string();
        assert!(err.contains("writable by group or others"), "{err}");

        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path(), &link).unwrap();
        let err = bind(&link.join("s.sock")).unwrap_err().to_string();
        assert!(err.contains("symlink"), "{err}");
    }

    #[test]
    fn creates_private_dir_replaces_stale_socket_and_refuses_a_second_bind() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("run").join("s.sock");
        let first = bind(&path).unwrap();
        let dir_mode = fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777;
        assert_eq!(dir_mode, 0o700);
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert!(matches!(bind(&path), Err(SocketError::AlreadyRunning(_))));
        drop(first);
        assert!(!path.exists(), "drop removes our socket");

        // A crashed daemon leaves its socket behind, and nothing accepts on it.
        let stale_path = tmp.path().join("run").join("stale.sock");
        drop(std::os::unix::net::UnixListener::bind(&stale_path).unwrap());
        assert!(stale_path.exists());
        let again = bind(&stale_path).unwrap();
        assert!(UnixStream::connect(again.path()).is_ok());

        let file_path = tmp.path().join("run").join("file.sock");
        fs::write(&file_path, b"x").unwrap();
        assert!(matches!(bind(&file_path), Err(SocketError::NotASocket(_))));
    }
}
