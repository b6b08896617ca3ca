//! Test support: a local HTTP receiver (std TcpListener, one thread)
//! standing in for ntfy and webhook targets: it records every request and
//! answers each with a fixed status.
//!
//! A test module takes it with `use crate::support::receiver;`.
#![allow(dead_code)]

use super::process;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request received.
#[derive(Debug, Clone)]
pub struct Received {
    /// `POST`, …
    pub method: String,
    /// The request target.
    pub path: String,
    /// Headers, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
}

impl Received {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// The receiver; its thread ends with the test process (it only ever
/// blocks in accept).
pub struct Receiver {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    /// Starts a receiver answering every request with `status`.
    pub fn start(status: u16) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let received = Arc::new(Mutex::new(Vec::new()));
        let record = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let mut parts = line.split_whitespace();
                let method = parts.next().unwrap_or_default().to_string();
                let path = parts.next().unwrap_or_default().to_string();
                let mut headers = Vec::new();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                        break;
                    }
                    if let Some((name, value)) = header.split_once(':') {
                        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
                    }
                }
                let length = headers
                    .iter()
                    .find(|(n, _)| n == "content-length")
                    .and_then(|(_, v)| v.parse::<usize>().ok())
                    .unwrap_or(0);
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                record.lock().unwrap().push(Received {
                    method,
                    path,
                    headers,
                    body: String::from_utf8_lossy(&body).into_owned(),
                });
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
                );
            }
        });
        Receiver { addr, received }
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// Waits (at most 20 s) until `n` requests arrived; returns them.
    pub fn wait_for(&self, n: usize) -> Vec<Received> {
        let what = format!("{n} requests");
        process::poll_reporting(&what, Duration::from_secs(20), || {
            let got = self.received();
            if got.len() >= n {
                return Ok(got);
            }
            Err(format!("got {}: {got:?}", got.len()))
        })
    }
}

/// A target that hangs: it accepts every connection and never reads or
/// answers, holding each open until the test process ends.
pub struct Hung {
    /// `127.0.0.1:PORT`.
    pub addr: String,
    accepted: Arc<AtomicUsize>,
}

impl Hung {
    /// Starts it.
    pub fn start() -> Hung {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                held.push(stream);
                count.fetch_add(1, Ordering::SeqCst);
            }
        });
        Hung { addr, accepted }
    }

    /// How many connections it has accepted (and holds).
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// A loopback address nothing listens on: a socket bound to it that never
/// listens, kept open for the test process's life, so connecting is
/// refused and no other socket of the parallel tests is given the port (a
/// port bound, then closed, was free for the next `bind` to port 0).
pub fn closed_port() -> String {
    // SAFETY: plain socket calls on a descriptor this function owns, with
    // a `sockaddr_in` sized as given.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        // Not inherited by the daemons and agents a test spawns.
        assert_eq!(libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC), 0);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from(std::net::Ipv4Addr::LOCALHOST).to_be();
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let sa = &mut addr as *mut libc::sockaddr_in as *mut libc::sockaddr;
        assert_eq!(
            libc::bind(fd, sa, len),
            0,
            "bind: {}",
            std::io::Error::last_os_error()
        );
        assert_eq!(libc::getsockname(fd, sa, &mut len), 0);
        // Never closed: the port stays this process's until it exits.
        format!("127.0.0.1:{}", u16::from_be(addr.sin_port))
    }
}
