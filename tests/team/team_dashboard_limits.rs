//! The team dashboard's limits, the HTTP face's (its code, shared): a
//! connection cap (`[http] max_connections`; the excess closed at accept),
//! a deadline for a request's head (a slow-loris client and an idle
//! keep-alive connection are dropped, and their slots freed), and a body
//! cap whose 413 names the dashboard's own fixed limit. Real sockets, a
//! real `hookd team dashboard` on a real PostgreSQL.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::support::http;
use crate::support::process::poll_for;
use crate::team_approvals::approver;
use crate::team_approvals_rls::cluster;
use crate::team_dashboard::Dashboard;

/// The HTTP face's `CONNECTION_LIFETIME` (src/http/mod.rs): a connection
/// closed well before it was cut by the head deadline, not by this.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(30);

/// Reads `stream` until the server closes it (or resets it); what it sent.
/// Panics if it is still open after `limit`.
fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> String {
    stream.set_read_timeout(Some(limit)).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
            Err(e) => panic!(
                "the connection is still open ({e}); read so far: {:?}",
                String::from_utf8_lossy(&got)
            ),
        }
    }
    String::from_utf8_lossy(&got).to_string()
}

/// A raw request `head` (and `body`), sent whole; the whole response.
fn raw(addr: &str, head: &str, body: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    read_until_closed(&mut stream, Duration::from_secs(20))
}

#[test]
fn the_dashboard_caps_connections_drops_slow_heads_and_names_its_body_cap() {
    let Some(pg) = cluster("the_dashboards_limits") else {
        return;
    };
    let bob = approver(&pg, "bob");
    let mut config = std::fs::read_to_string(&bob).unwrap();
    config.push_str("\n[http]\nmax_connections = 3\n");
    std::fs::write(&bob, config).unwrap();
    let dash = Dashboard::start(&pg, &bob);
    let addr = dash.addr.as_str();
    let bearer = dash.bearer();
    let answer_head = |length: &str| {
        format!(
            "POST /api/asks/kmnpq/answer HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
             Authorization: {bearer}\r\nContent-Type: application/json\r\n{length}\r\n"
        )
    };

    // A declared body past the cap: refused before it is read, naming the
    // dashboard's own limit, not the daemon's `[http]` key.
    let said = raw(addr, &answer_head("Content-Length: 20000\r\n"), b"");
    assert!(said.starts_with("HTTP/1.1 413"), "{said}");
    assert!(
        said.contains(
            "bodies are capped at 16384 bytes (the team dashboard's fixed cap: an answer is a \
             verdict and a reason)"
        ),
        "{said}"
    );
    assert!(!said.contains("http.max_body_bytes"), "{said}");
    // One sent in chunks, with no length to refuse early: cut while read,
    // and said the same way (as the page's JSON error).
    let big = format!(
        "{{\"verdict\":\"deny\",\"reason\":\"{}\"}}",
        "x".repeat(17_000)
    );
    let chunked = format!("{:x}\r\n{big}\r\n0\r\n\r\n", big.len());
    let said = raw(
        addr,
        &answer_head("Transfer-Encoding: chunked\r\n"),
        chunked.as_bytes(),
    );
    assert!(said.starts_with("HTTP/1.1 413"), "{said}");
    assert!(
        said.contains("bodies are capped at 16384 bytes (the team dashboard's fixed cap"),
        "{said}"
    );

    // Three clients take every slot, trickling their heads (slow loris);
    // a fourth connection is closed at accept, unanswered.
    let mut slow: Vec<TcpStream> = (0..3)
        .map(|_| {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.write_all(b"GET /api/me HTTP/1.1\r\n").unwrap();
            stream
        })
        .collect();
    let mut fourth = TcpStream::connect(addr).unwrap();
    let refused = read_until_closed(&mut fourth, Duration::from_secs(10));
    assert_eq!(
        refused, "",
        "a connection past the cap is closed unanswered"
    );

    // The head deadline drops each slow client however it trickles, long
    // before the connection's lifetime would have.
    let start = Instant::now();
    let mut open = vec![true; slow.len()];
    while open.iter().any(|o| *o) {
        assert!(
            start.elapsed() < CONNECTION_LIFETIME - Duration::from_secs(5),
            "slow clients still connected after {:?}",
            start.elapsed()
        );
        for (stream, open) in slow.iter_mut().zip(open.iter_mut()) {
            if !*open {
                continue;
            }
            // A write fails once the server has reset the connection; a
            // read sees its end.
            let _ = stream.write_all(b"X");
            stream
                .set_read_timeout(Some(Duration::from_millis(50)))
                .unwrap();
            let mut buf = [0u8; 64];
            match stream.read(&mut buf) {
                Ok(0) => *open = false,
                Ok(n) => panic!(
                    "a slow client got an answer: {:?}",
                    String::from_utf8_lossy(&buf[..n])
                ),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(_) => *open = false,
            }
        }
        std::thread::sleep(Duration::from_millis(250));
    }

    // Their slots are free again: a keep-alive client is served, and
    // dropped once idle for the head deadline.
    let mut idle = poll_for("a slot free again", Duration::from_secs(20), || {
        let mut stream = TcpStream::connect(addr).ok()?;
        let head =
            format!("GET /api/me HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {bearer}\r\n\r\n");
        stream.write_all(head.as_bytes()).ok()?;
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut buf = [0u8; 4096];
        let n = stream.read(&mut buf).ok()?;
        let said = String::from_utf8_lossy(&buf[..n]).to_string();
        said.starts_with("HTTP/1.1 200").then_some((stream, said))
    });
    let rest = read_until_closed(&mut idle.0, CONNECTION_LIFETIME - Duration::from_secs(5));
    let said = idle.1 + &rest;
    assert!(said.contains("\"role\":\"bob\""), "{said}");
    assert_eq!(
        http::get(addr, "/api/me", &[("Authorization", &bearer)]).status,
        200
    );
    drop(slow);
}
