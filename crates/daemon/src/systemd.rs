//! systemd integration, in a few lines over the documented interfaces rather
//! than a dependency:
//!
//! - **Socket activation** (`sd_listen_fds(3)`): when `LISTEN_PID` is this
//!   process and `LISTEN_FDS` ≥ 1, fd 3 is the listening socket. systemd owns
//!   it: the daemon neither binds, locks nor removes the path, and while the
//!   daemon restarts, connections queue in the kernel instead of failing.
//! - **Readiness and stopping** (`sd_notify(3)`): `READY=1` once the socket
//!   accepts, `STOPPING=1` on shutdown, as datagrams to `$NOTIFY_SOCKET`
//!   (a path, or `@name` for the abstract namespace).
//! - **Watchdog**: with `WATCHDOG_USEC` set, `WATCHDOG=1` is sent every half
//!   interval, but only after a real round trip through the daemon's own
//!   socket (connect, `hello`, `status`) succeeded: a daemon whose accept loop
//!   or connection handling is stuck stops petting and gets restarted.

use std::io;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::Path;
use std::time::Duration;

/// The first passed file descriptor (`SD_LISTEN_FDS_START`).
const LISTEN_FDS_START: RawFd = 3;

/// Takes the listening socket passed by systemd, if any, and clears the
/// variables so children do not inherit them.
pub fn take_listener() -> io::Result<Option<UnixListener>> {
    let for_us = std::env::var("LISTEN_PID")
        .ok()
        .and_then(|pid| pid.parse::<u32>().ok())
        .is_some_and(|pid| pid == std::process::id());
    let count = std::env::var("LISTEN_FDS")
        .ok()
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(0);
    // SAFETY: single-threaded at this point of start-up (called before the
    // runtime starts); nothing else reads the environment concurrently.
    unsafe {
        std::env::remove_var("LISTEN_PID");
        std::env::remove_var("LISTEN_FDS");
        std::env::remove_var("LISTEN_FDNAMES");
    }
    if !for_us || count == 0 {
        return Ok(None);
    }
    if count > 1 {
        tracing::warn!(
            count,
            "systemd passed several sockets; using the first (fd 3)"
        );
    }
    let fd = LISTEN_FDS_START;
    let kind = nix::sys::socket::getsockname::<nix::sys::socket::UnixAddr>(fd)
        .map_err(|e| io::Error::other(format!("fd 3 from systemd is not a Unix socket: {e}")))?;
    // SAFETY: fd 3 is open (getsockname just succeeded on it) and stays
    // open while borrowed: nothing closes it before the listener below
    // owns it.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let flags =
        nix::fcntl::fcntl(borrowed, nix::fcntl::FcntlArg::F_GETFD).map_err(io::Error::from)?;
    let _ = nix::fcntl::fcntl(
        borrowed,
        nix::fcntl::FcntlArg::F_SETFD(
            nix::fcntl::FdFlag::from_bits_truncate(flags) | nix::fcntl::FdFlag::FD_CLOEXEC,
        ),
    );
    tracing::info!(address = ?kind.path(), "using the socket passed by systemd (fd 3)");
    // SAFETY: systemd passed fd 3 to this process for us to own.
    Ok(Some(unsafe { UnixListener::from_raw_fd(fd) }))
}

/// Sends `state` to systemd. `Ok(false)` when not run under systemd.
pub fn notify(state: &str) -> io::Result<bool> {
    let Some(target) = std::env::var_os("NOTIFY_SOCKET") else {
        return Ok(false);
    };
    let socket = UnixDatagram::unbound()?;
    // `@name`: a socket in Linux's abstract namespace (systemd exists only
    // there; elsewhere such a name is a path like any other).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    if let Some(name) = target.as_encoded_bytes().strip_prefix(b"@") {
        #[cfg(target_os = "android")]
        use std::os::android::net::SocketAddrExt;
        #[cfg(target_os = "linux")]
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
        socket.send_to_addr(state.as_bytes(), &addr)?;
        return Ok(true);
    }
    socket.send_to(state.as_bytes(), Path::new(&target))?;
    Ok(true)
}

/// The watchdog interval systemd expects pings within, if enabled for us.
pub fn watchdog_interval() -> Option<Duration> {
    let for_us = std::env::var("WATCHDOG_PID")
        .ok()
        .and_then(|pid| pid.parse::<u32>().ok())
        .is_none_or(|pid| pid == std::process::id());
    let usec = std::env::var("WATCHDOG_USEC").ok()?.parse::<u64>().ok()?;
    (for_us && usec > 0).then(|| Duration::from_micros(usec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_sends_datagrams_to_the_notify_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notify");
        let receiver = UnixDatagram::bind(&path).unwrap();
        // SAFETY: this test alone touches NOTIFY_SOCKET.
        unsafe { std::env::set_var("NOTIFY_SOCKET", &path) };
        assert!(notify("READY=1").unwrap());
        // SAFETY: as above.
        unsafe { std::env::remove_var("NOTIFY_SOCKET") };
        let mut buf = [0u8; 64];
        let n = receiver.recv(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"READY=1");
        assert!(!notify("READY=1").unwrap());
    }
}
