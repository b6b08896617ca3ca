//! The opening of a long-lived connection, without IO: the peer sends
//! `hello`, the daemon answers `welcome` (or an `error` and closes).
//!
//! [`Handshake`] makes the `hello` line and judges the first reply line;
//! whoever owns the socket moves the bytes. The blocking client
//! ([`crate::client::Client`]), the async one ([`crate::client::connect_async`]:
//! `hookd run`, the daemon's watchdog probe) and the tests' raw client all
//! open connections through it, so the handshake's rules live here once.

use super::{ErrorFrame, Hello, Reply, Request, Role, Welcome, VERSION};

/// One peer's side of the handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    hello: Hello,
}

/// Why the daemon's first reply does not open the connection.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HandshakeError {
    /// The daemon refused the `hello` (another protocol version, shutting
    /// down, …).
    #[error("the daemon refused the connection: {} ({})", .0.message, .0.code)]
    Refused(ErrorFrame),
    /// The daemon welcomed us in a protocol version we do not speak.
    #[error("hookd speaks protocol version {daemon}, this client {VERSION}: upgrade the older of the two")]
    Version {
        /// The version in the `welcome`.
        daemon: u32,
    },
    /// The reply was not a `welcome` (or not a frame at all).
    #[error("expected `welcome` from hookd, got: {0}")]
    Unexpected(String),
}

impl Handshake {
    /// A socket client named `name` (shown in the daemon's logs, and as
    /// `client:<name>` on its decisions).
    pub fn client(name: impl Into<String>) -> Handshake {
        Handshake {
            hello: Hello {
                v: VERSION,
                role: Role::Client,
                name: name.into(),
            },
        }
    }

    /// The `hello` frame.
    pub fn hello(&self) -> Request {
        Request::Hello(self.hello.clone())
    }

    /// The `hello` frame as the line to write, `\n` included.
    pub fn hello_line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(&self.hello()).expect("frames serialize");
        line.push(b'\n');
        line
    }

    /// Judges the daemon's first reply line (with or without its `\n`).
    pub fn welcome(&self, line: &[u8]) -> Result<Welcome, HandshakeError> {
        let text = || String::from_utf8_lossy(line).trim_end().to_string();
        match serde_json::from_slice::<Reply>(line) {
            Ok(Reply::Welcome(welcome)) if welcome.v == VERSION => Ok(welcome),
            Ok(Reply::Welcome(welcome)) => Err(HandshakeError::Version { daemon: welcome.v }),
            Ok(Reply::Error(refusal)) => Err(HandshakeError::Refused(refusal)),
            Ok(_) | Err(_) => Err(HandshakeError::Unexpected(text())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::ErrorCode;

    #[test]
    fn the_hello_line_is_one_hello_frame() {
        let line = Handshake::client("cli").hello_line();
        assert_eq!(line.last(), Some(&b'\n'));
        let Ok(Request::Hello(hello)) = Request::decode(&line[..line.len() - 1]) else {
            panic!("not a hello: {}", String::from_utf8_lossy(&line));
        };
        assert_eq!(
            hello,
            Hello {
                v: VERSION,
                role: Role::Client,
                name: "cli".into()
            }
        );
    }

    #[test]
    fn only_a_welcome_in_our_version_opens_the_connection() {
        let h = Handshake::client("cli");
        let welcome = h
            .welcome(
                b"{\"type\":\"welcome\",\"v\":1,\"server_version\":\"9\",\"capabilities\":[]}\n",
            )
            .unwrap();
        assert_eq!(welcome.server_version, "9");
        assert_eq!(
            h.welcome(br#"{"type":"welcome","v":2,"server_version":"9","capabilities":[]}"#),
            Err(HandshakeError::Version { daemon: 2 })
        );
        let refused = h
            .welcome(br#"{"type":"error","code":"shutting_down","message":"stopping"}"#)
            .unwrap_err();
        assert!(
            matches!(&refused, HandshakeError::Refused(e) if e.code == ErrorCode::ShuttingDown),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("stopping"), "{refused}");
        let odd = h.welcome(br#"{"type":"ok","req":"x"}"#).unwrap_err();
        assert!(odd.to_string().contains(r#"{"type":"ok""#), "{odd}");
        assert!(matches!(
            h.welcome(b"not json"),
            Err(HandshakeError::Unexpected(_))
        ));
    }
}
