//! Clients of the daemon's protocol: a small blocking one, used by `hookd
//! pending`, `hookd decide`, `hookd status` and `hookd doctor` (and usable
//! from other Rust programs), and [`connect_async`], the async opening used
//! by `hookd run` and the daemon's watchdog probe. Both open the connection
//! with [`Handshake`], the one place the `hello`/`welcome` rules live.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio_util::codec::Framed;

use crate::protocol::codec::FrameCodec;
use crate::protocol::handshake::{Handshake, HandshakeError};
use crate::protocol::{
    AbortRequest, Decide, ErrorFrame, GrantRecord, GrantRevoke, PendingItem, Reply, ReqOnly,
    Request, Status, SteerRequest,
};

/// What went wrong talking to the daemon.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No daemon at the socket.
    #[error("cannot reach hookd at {path} (is `hookd serve` running? is HOOKD_SOCKET right?)")]
    Connect {
        /// The socket.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The daemon refused the request.
    #[error("the daemon refused: {} ({})", .0.message, .0.code)]
    Refused(ErrorFrame),
    /// The connection failed or the daemon sent something unexpected.
    #[error("talking to hookd: {0}")]
    Protocol(String),
}

impl From<HandshakeError> for ClientError {
    fn from(e: HandshakeError) -> ClientError {
        match e {
            HandshakeError::Refused(refusal) => ClientError::Refused(refusal),
            other => ClientError::Protocol(other.to_string()),
        }
    }
}

/// A connection to the daemon, opened by [`connect_async`]: frames in,
/// frames out.
pub type AsyncConnection = Framed<tokio::net::UnixStream, FrameCodec>;

/// Connects to `socket` and says hello as `name` without blocking a thread;
/// returns once the daemon has welcomed us. `max_frame` caps one frame from
/// the daemon.
pub async fn connect_async(
    socket: &Path,
    name: &str,
    max_frame: usize,
) -> Result<AsyncConnection, ClientError> {
    let stream = tokio::net::UnixStream::connect(socket)
        .await
        .map_err(|source| ClientError::Connect {
            path: socket.to_path_buf(),
            source,
        })?;
    let mut conn = Framed::new(stream, FrameCodec::new(max_frame));
    let handshake = Handshake::client(name);
    let protocol = |e: crate::protocol::codec::FrameError| ClientError::Protocol(e.to_string());
    conn.send(&handshake.hello()).await.map_err(protocol)?;
    let line = conn
        .next()
        .await
        .ok_or_else(|| ClientError::Protocol("hookd closed the connection".into()))?
        .map_err(protocol)?;
    handshake.welcome(&line)?;
    Ok(conn)
}

/// A connected, welcomed client.
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_req: u64,
}

impl Client {
    /// Connects to `socket` and says hello as `name`.
    pub fn connect(socket: &Path, name: &str) -> Result<Client, ClientError> {
        Client::connect_with_timeout(socket, name, Duration::from_secs(30))
    }

    /// [`Client::connect`], waiting at most `timeout` for each reply (e.g.
    /// `hookd doctor`, which must not hang on a stopped daemon).
    pub fn connect_with_timeout(
        socket: &Path,
        name: &str,
        timeout: Duration,
    ) -> Result<Client, ClientError> {
        let stream = UnixStream::connect(socket).map_err(|source| ClientError::Connect {
            path: socket.to_path_buf(),
            source,
        })?;
        let io = |e: std::io::Error| ClientError::Protocol(e.to_string());
        stream.set_read_timeout(Some(timeout)).map_err(io)?;
        let mut client = Client {
            writer: stream.try_clone().map_err(io)?,
            reader: BufReader::new(stream),
            next_req: 1,
        };
        let handshake = Handshake::client(name);
        client.send(&handshake.hello())?;
        let mut line = Vec::new();
        match client.reader.read_until(b'\n', &mut line) {
            Ok(0) => Err(ClientError::Protocol("hookd closed the connection".into())),
            Ok(_) => {
                handshake.welcome(&line)?;
                Ok(client)
            }
            Err(e) => Err(io(e)),
        }
    }

    fn send(&mut self, request: &Request) -> Result<(), ClientError> {
        let mut line = serde_json::to_vec(request).expect("requests serialize");
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .map_err(|e| ClientError::Protocol(e.to_string()))
    }

    /// Reads the next frame.
    pub fn recv(&mut self) -> Result<Reply, ClientError> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => Err(ClientError::Protocol("hookd closed the connection".into())),
            Ok(_) => serde_json::from_str(&line)
                .map_err(|e| ClientError::Protocol(format!("bad frame from hookd: {e}"))),
            Err(e) => Err(ClientError::Protocol(e.to_string())),
        }
    }

    fn req(&mut self) -> String {
        let req = self.next_req.to_string();
        self.next_req += 1;
        req
    }

    /// Sends a request and waits for its `ok` (skipping pushed frames).
    fn call(&mut self, request: Request) -> Result<Option<Value>, ClientError> {
        let req = request.req().expect("client requests have ids").to_string();
        self.send(&request)?;
        loop {
            match self.recv()? {
                Reply::Ok(ok) if ok.req == req => return Ok(ok.result),
                Reply::Error(e) if e.req.as_deref() == Some(req.as_str()) || e.req.is_none() => {
                    return Err(ClientError::Refused(e))
                }
                _ => continue,
            }
        }
    }

    /// `status`.
    pub fn status(&mut self) -> Result<Status, ClientError> {
        let req = self.req();
        let result = self.call(Request::Status(ReqOnly { req }))?;
        serde_json::from_value(result.unwrap_or(Value::Null))
            .map_err(|e| ClientError::Protocol(format!("status: {e}")))
    }

    /// `pending`.
    pub fn pending(&mut self) -> Result<Vec<PendingItem>, ClientError> {
        let req = self.req();
        let result = self.call(Request::Pending(ReqOnly { req }))?;
        serde_json::from_value(result.unwrap_or(Value::Null))
            .map_err(|e| ClientError::Protocol(format!("pending: {e}")))
    }

    /// `decide` (its `req` is replaced by this client's next id); the
    /// reply's `result` (a grant, or the remembered rule), if any.
    pub fn decide(&mut self, decide: Decide) -> Result<Option<Value>, ClientError> {
        let req = self.req();
        self.call(Request::Decide(Decide { req, ..decide }))
    }

    /// `grants`: the active session grants.
    pub fn grants(&mut self) -> Result<Vec<GrantRecord>, ClientError> {
        let req = self.req();
        let result = self.call(Request::Grants(ReqOnly { req }))?;
        serde_json::from_value(result.unwrap_or(Value::Null))
            .map_err(|e| ClientError::Protocol(format!("grants: {e}")))
    }

    /// `grant_revoke`.
    pub fn revoke_grant(&mut self, id: &str) -> Result<(), ClientError> {
        let req = self.req();
        self.call(Request::GrantRevoke(GrantRevoke {
            req,
            id: id.to_string(),
        }))
        .map(|_| ())
    }

    /// `abort`: the run, or (`compaction`) only its compaction under way.
    pub fn abort(&mut self, run_id: &str, compaction: bool) -> Result<(), ClientError> {
        let req = self.req();
        self.call(Request::Abort(AbortRequest {
            req,
            run_id: run_id.to_string(),
            compaction,
        }))
        .map(|_| ())
    }

    /// `steer`.
    pub fn steer(&mut self, run_id: &str, text: &str) -> Result<(), ClientError> {
        let req = self.req();
        self.call(Request::Steer(SteerRequest {
            req,
            run_id: run_id.to_string(),
            text: text.to_string(),
        }))
        .map(|_| ())
    }
}
