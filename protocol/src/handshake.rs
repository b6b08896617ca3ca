//! The opening of a long-lived connection, without IO: the peer sends
//! `hello`, the daemon answers `welcome` (or an `error` and closes).
//!
//! [`Handshake`] makes the `hello` line and judges the first reply line;
//! whoever owns the socket moves the bytes. The blocking client
//! (`hookd_daemon::client::Client`), the async one (`connect_async` there:
//! `hookd run`, the daemon's watchdog probe) and the tests' raw client all
//! open connections through it, so the handshake's rules live here once.

use super::{ErrorFrame, Hello, Reply, Request, Role, Welcome, VERSION};

/// The most characters a `hello.name` may have: it is shown in a
/// terminal's one-line rows and in the logs.
pub const MAX_NAME_CHARS: usize = 64;

/// Checks a peer's `hello.name`: 1 to [`MAX_NAME_CHARS`] characters, none
/// of them a control character (a newline, a tab, an escape) or a Unicode
/// line or paragraph separator. The name reaches the daemon's log, every
/// client's screen and, for `remember: "always"`, a comment in the user
/// rules file: a newline there would start a line the peer wrote. The
/// error names what is allowed and what was wrong.
pub fn check_name(name: &str) -> Result<(), String> {
    let allowed = format!(
        "`hello.name` must be 1 to {MAX_NAME_CHARS} printable characters \
         (no control characters such as newlines or tabs)"
    );
    if let Some(bad) = name
        .chars()
        .find(|&c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}'))
    {
        return Err(format!(
            "{allowed}; it holds {} ({})",
            bad.escape_unicode(),
            bad.escape_debug()
        ));
    }
    match name.chars().count() {
        0 => Err(format!("{allowed}; it is empty")),
        count if count > MAX_NAME_CHARS => Err(format!("{allowed}; it has {count}")),
        _ => Ok(()),
    }
}

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
    use crate::ErrorCode;

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
    fn a_name_is_printable_and_bounded() {
        for fine in ["cli", "hookd-approve", "Zoë's \"phone\" #2", "承認者"] {
            assert_eq!(check_name(fine), Ok(()), "{fine}");
        }
        let long = "x".repeat(MAX_NAME_CHARS + 1);
        for (bad, why) in [
            ("", "it is empty"),
            ("me\n[[rule]]", "\\u{a}"),
            ("a\tb", "\\u{9}"),
            ("a\u{1b}[2J", "\\u{1b}"),
            ("a\u{2028}b", "\\u{2028}"),
            (long.as_str(), "it has 65"),
        ] {
            let e = check_name(bad).unwrap_err();
            assert!(
                e.contains("1 to 64 printable characters") && e.contains(why),
                "{bad:?}: {e}"
            );
        }
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
