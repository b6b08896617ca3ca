//! The three system calls std does not offer the forwarder: a Unix connect
//! bounded by a timeout, the peer's uid, and waiting for stdin with a
//! timeout. Declarations come from the `libc` crate (no code of its own runs);
//! everything else is std.

use std::io;
use std::mem;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

/// Connects to the Unix socket at `path`, waiting at most `timeout` for
/// room in the listener's backlog. std's `UnixStream::connect` blocks until
/// the daemon accepts, however long that takes: with a full backlog (a
/// wedged daemon, a flood of connections) a hook would hang until Claude
/// Code killed it. On Linux a blocking connect to a Unix socket waits up to
/// the socket's send timeout, so that is set before connecting; it then
/// fails with `WouldBlock`.
pub fn connect(path: &Path, timeout: Duration) -> io::Result<UnixStream> {
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: sockaddr_un is plain old data; all zeroes is a valid value.
    let mut addr: libc::sockaddr_un = unsafe { mem::zeroed() };
    if bytes.len() >= addr.sun_path.len() || bytes.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the socket path does not fit in a Unix socket address",
        ));
    }
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (slot, byte) in addr.sun_path.iter_mut().zip(bytes) {
        *slot = *byte as libc::c_char;
    }
    let len = mem::offset_of!(libc::sockaddr_un, sun_path) + bytes.len() + 1;

    // SAFETY: plain socket(2); the result is checked before use.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new socket that nothing else owns; the stream closes it.
    let stream = unsafe { UnixStream::from_raw_fd(fd) };
    stream.set_write_timeout(Some(timeout))?;
    loop {
        // SAFETY: `addr` is a valid sockaddr_un and `len` is within it.
        let rc = unsafe {
            libc::connect(
                fd,
                (&addr as *const libc::sockaddr_un).cast::<libc::sockaddr>(),
                len as libc::socklen_t,
            )
        };
        if rc == 0 {
            return Ok(stream);
        }
        let error = io::Error::last_os_error();
        if error.kind() != io::ErrorKind::Interrupted {
            return Err(error);
        }
    }
}

/// The uid of the process at the other end of `stream` (for a listening
/// socket's peer: whoever called `listen`).
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    // SAFETY: ucred is plain old data; all zeroes is a valid value.
    let mut cred: libc::ucred = unsafe { mem::zeroed() };
    let mut len = mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast::<libc::c_void>(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(cred.uid)
}

/// The uid of the process at the other end of `stream`.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn peer_uid(stream: &UnixStream) -> io::Result<u32> {
    let (mut uid, mut gid) = (0, 0);
    // SAFETY: both out-pointers are valid for writes.
    if unsafe { libc::getpeereid(stream.as_raw_fd(), &mut uid, &mut gid) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(uid)
}

/// Waits until `fd` is readable (data, end of file or an error to report),
/// at most `timeout`; `Ok(false)` when the time ran out.
pub fn wait_readable(fd: RawFd, timeout: Duration) -> io::Result<bool> {
    // Rounded up, so a wait of less than a millisecond does not spin.
    let millis = timeout
        .as_micros()
        .div_ceil(1000)
        .min(libc::c_int::MAX as u128);
    let mut pollfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let rc = unsafe { libc::poll(&mut pollfd, 1, millis as libc::c_int) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc > 0)
}
