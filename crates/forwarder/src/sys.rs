//! What std does not offer the forwarder, or offers at a cost paid on every
//! hook: a Unix connect bounded by a timeout, the peer's uid, this process's
//! uid without a system call, waiting for stdin with a timeout, reads that
//! zero no buffer, a send that does not wait, and the relayed environment
//! variables found without copying the others. Declarations come from the
//! `libc` crate (no code of its own runs); everything else is std.

use std::ffi::{c_char, CStr};
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

/// This process's effective uid. On Linux it is read from the auxiliary
/// vector the kernel hands every process (`AT_EUID`), which is what
/// `geteuid` would answer in a process that never changes its ids, as the
/// forwarder does not: no system call on the path every hook takes.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn euid() -> u32 {
    // SAFETY: getauxval has no preconditions; AT_EUID is always present.
    let uid = unsafe { libc::getauxval(libc::AT_EUID) };
    // A uid is 32 bits; anything else would be a kernel bug: ask the kernel.
    // SAFETY: geteuid has no preconditions and cannot fail.
    u32::try_from(uid).unwrap_or_else(|_| unsafe { libc::geteuid() })
}

/// This process's effective uid.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// What [`wait_readable`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readable {
    /// Data, end of file or an error to report. `hung_up`: the writer has
    /// closed its end, so every read from now on returns at once (what is
    /// left, then end of file) and needs no wait.
    Now { hung_up: bool },
    /// The time ran out.
    TimedOut,
}

/// Waits until `fd` is readable (data, end of file or an error to report),
/// at most `timeout`.
pub fn wait_readable(fd: RawFd, timeout: Duration) -> io::Result<Readable> {
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
    if rc == 0 {
        return Ok(Readable::TimedOut);
    }
    Ok(Readable::Now {
        hung_up: pollfd.revents & libc::POLLHUP != 0,
    })
}

/// Reads from `fd` into `buf`'s spare capacity (at least one byte of it
/// must be free) and returns how many bytes came: `read(2)` straight into
/// the vector, with no zeroed buffer beside it or under it (zeroing touches
/// pages the read may never reach).
pub fn read_into(fd: RawFd, buf: &mut Vec<u8>) -> io::Result<usize> {
    let spare = buf.spare_capacity_mut();
    debug_assert!(!spare.is_empty());
    // SAFETY: `spare` is valid for writes of its length; read(2) writes at
    // most that many bytes.
    let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast::<libc::c_void>(), spare.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = n as usize;
    // SAFETY: read(2) initialised the first `n` bytes of the spare capacity.
    unsafe { buf.set_len(buf.len() + n) };
    Ok(n)
}

/// Sends as much of `bytes` as the socket takes without waiting (no
/// SIGPIPE: a closed peer is an `EPIPE` error). A hook frame nearly always
/// fits the socket's buffer at once, and then needs no send timeout.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn send_nowait(stream: &UnixStream, bytes: &[u8]) -> io::Result<usize> {
    // SAFETY: `bytes` is valid for reads of its length.
    let n = unsafe {
        libc::send(
            stream.as_raw_fd(),
            bytes.as_ptr().cast::<libc::c_void>(),
            bytes.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(n as usize)
}

/// Sends nothing: without `MSG_NOSIGNAL` a send to a closed peer raises
/// SIGPIPE, so the caller's blocking writes (std's) send it all.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn send_nowait(_stream: &UnixStream, _bytes: &[u8]) -> io::Result<usize> {
    Ok(0)
}

extern "C" {
    /// The C runtime's environment: what `std::env` reads too.
    static environ: *const *const c_char;
}

/// The environment variables whose name `wanted` accepts, as `(name,
/// value)`, invalid UTF-8 replaced. `std::env::vars` copies every variable
/// into two `String`s (and panics on one that is not UTF-8); an agent's
/// environment holds dozens, of which a hook relays a few.
///
/// Only for a process with one thread that does not change its environment
/// while this runs: the forwarder.
pub fn env_matching(mut wanted: impl FnMut(&str) -> bool) -> Vec<(String, String)> {
    let mut found = Vec::new();
    // SAFETY: `environ` is the C runtime's, null or a null-terminated array
    // of NUL-terminated strings; nothing changes it while this reads (one
    // thread, no setenv).
    let mut entry = unsafe { environ };
    if entry.is_null() {
        return found;
    }
    loop {
        // SAFETY: `entry` points into the null-terminated array.
        let pointer = unsafe { *entry };
        if pointer.is_null() {
            return found;
        }
        // SAFETY: each entry is a NUL-terminated string.
        let bytes = unsafe { CStr::from_ptr(pointer) }.to_bytes();
        // A name is what comes before the first `=` (std skips its first
        // byte, so that `=C:` style names keep their `=`).
        let split = bytes.iter().skip(1).position(|&b| b == b'=').map(|i| i + 1);
        if let Some(eq) = split {
            if let Ok(name) = std::str::from_utf8(&bytes[..eq]) {
                if wanted(name) {
                    let value = String::from_utf8_lossy(&bytes[eq + 1..]).into_owned();
                    found.push((name.to_string(), value));
                }
            }
        }
        // SAFETY: not past the terminating null yet.
        entry = unsafe { entry.add(1) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn the_environment_is_read_as_std_reads_it() {
        let path = env_matching(|name| name == "PATH");
        match std::env::var("PATH") {
            Ok(value) => assert_eq!(path, [("PATH".to_string(), value)]),
            Err(_) => assert!(path.is_empty()),
        }
        assert!(env_matching(|_| false).is_empty());
        let all = env_matching(|_| true);
        assert_eq!(all.len(), std::env::vars_os().count());
    }

    #[test]
    fn the_euid_is_the_kernels() {
        // SAFETY: geteuid has no preconditions.
        assert_eq!(euid(), unsafe { libc::geteuid() });
    }

    #[test]
    fn reads_fill_spare_room_and_polls_see_the_hang_up() {
        let (reader, mut writer) = std::os::unix::net::UnixStream::pair().unwrap();
        assert_eq!(
            wait_readable(reader.as_raw_fd(), Duration::from_millis(1)).unwrap(),
            Readable::TimedOut
        );
        writer.write_all(b"hello").unwrap();
        drop(writer);
        let mut buf = Vec::with_capacity(3);
        buf.push(b'>');
        assert!(matches!(
            wait_readable(reader.as_raw_fd(), Duration::from_secs(5)).unwrap(),
            Readable::Now { hung_up: true }
        ));
        assert_eq!(read_into(reader.as_raw_fd(), &mut buf).unwrap(), 2);
        buf.reserve(16);
        assert_eq!(read_into(reader.as_raw_fd(), &mut buf).unwrap(), 3);
        assert_eq!(read_into(reader.as_raw_fd(), &mut buf).unwrap(), 0);
        assert_eq!(buf, b">hello");
    }
}
