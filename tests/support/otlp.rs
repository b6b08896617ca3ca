//! Test support: an OTLP/HTTP receiver (a collector's `/v1/logs` and
//! `/v1/traces`) on a std `TcpListener` thread, decoding each request with
//! the official definitions (the `opentelemetry-proto` crate: prost for
//! `application/x-protobuf`, its serde mapping for `application/json`).
//!
//! A test module takes it with `use crate::support::otlp;`. The thread ends
//! when the receiver is dropped.
#![allow(dead_code)]

use super::process;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::logs::v1::LogRecord;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

/// What the receiver got, decoded.
#[derive(Debug, Default, Clone)]
pub struct Received {
    /// Every `/v1/logs` request.
    pub logs: Vec<ExportLogsServiceRequest>,
    /// Every `/v1/traces` request.
    pub traces: Vec<ExportTraceServiceRequest>,
    /// Every request's path, `Content-Type` and headers (lower-case names).
    pub requests: Vec<Request>,
    /// Requests answered with an error status.
    pub refused: usize,
}

/// One request's envelope.
#[derive(Debug, Clone)]
pub struct Request {
    /// `/v1/logs` or `/v1/traces`.
    pub path: String,
    /// Its `Content-Type`.
    pub content_type: String,
    /// All its headers, names in lower case.
    pub headers: Vec<(String, String)>,
}

impl Received {
    /// Every log record, in arrival order.
    pub fn log_records(&self) -> Vec<&LogRecord> {
        self.logs
            .iter()
            .flat_map(|r| &r.resource_logs)
            .flat_map(|r| &r.scope_logs)
            .flat_map(|s| &s.log_records)
            .collect()
    }

    /// Every span, in arrival order.
    pub fn spans(&self) -> Vec<&Span> {
        self.traces
            .iter()
            .flat_map(|r| &r.resource_spans)
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| &s.spans)
            .collect()
    }
}

/// A running receiver.
pub struct Receiver {
    /// Where it listens.
    pub addr: SocketAddr,
    received: Arc<Mutex<Received>>,
    /// The status it answers with (200 unless a test says otherwise).
    status: Arc<AtomicU16>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Receiver {
    /// A receiver on a free loopback port.
    pub fn start() -> Receiver {
        Receiver::on(TcpListener::bind("127.0.0.1:0").unwrap())
    }

    /// A receiver on `port` (a collector coming up where the daemon
    /// already sends).
    pub fn start_on(port: u16) -> Receiver {
        Receiver::on(TcpListener::bind(("127.0.0.1", port)).unwrap())
    }

    fn on(listener: TcpListener) -> Receiver {
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Received::default()));
        let status = Arc::new(AtomicU16::new(200));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (received, status, stop) = (received.clone(), status.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((stream, _)) => serve(stream, &received, &status),
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(5))
                        }
                        Err(e) => panic!("accept: {e}"),
                    }
                }
            })
        };
        Receiver {
            addr,
            received,
            status,
            stop,
            thread: Some(thread),
        }
    }

    /// The endpoint to configure: `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Answers every request with `status` from now on (e.g. 503).
    pub fn answer_with(&self, status: u16) {
        self.status.store(status, Ordering::Relaxed);
    }

    /// What was received so far.
    pub fn received(&self) -> Received {
        self.received.lock().unwrap().clone()
    }

    /// Waits (up to `limit`) until `done` holds for what was received.
    pub fn wait_for(&self, limit: Duration, done: impl Fn(&Received) -> bool) -> Received {
        process::poll_reporting("what the receiver was expected to get", limit, || {
            let received = self.received();
            if done(&received) {
                return Ok(received);
            }
            Err(format!(
                "it got {} log requests, {} trace requests: {:#?}",
                received.logs.len(),
                received.traces.len(),
                received.requests
            ))
        })
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Serves one connection: keep-alive requests until the peer closes.
fn serve(stream: TcpStream, received: &Mutex<Received>, status: &AtomicU16) {
    stream.set_nonblocking(false).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        match reader.read_line(&mut request_line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let (name, value) = line.split_once(':').expect("a header line");
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        let body = match header("content-length") {
            Some(len) => {
                let mut body = vec![0; len.parse().unwrap()];
                reader.read_exact(&mut body).unwrap();
                body
            }
            None => read_chunked(&mut reader),
        };
        let content_type = header("content-type").unwrap_or_default();
        let answer = status.load(Ordering::Relaxed);
        {
            let mut received = received.lock().unwrap();
            received.requests.push(Request {
                path: path.clone(),
                content_type: content_type.clone(),
                headers: headers.clone(),
            });
            if answer == 200 {
                let json = content_type == "application/json";
                match path.as_str() {
                    "/v1/logs" => received.logs.push(decode(&body, json)),
                    "/v1/traces" => received.traces.push(decode(&body, json)),
                    other => panic!("a request to {other}"),
                }
            } else {
                received.refused += 1;
            }
        }
        let reason = if answer == 200 { "OK" } else { "Error" };
        let response = format!(
            "HTTP/1.1 {answer} {reason}\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n"
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn decode<T: Message + Default + serde::de::DeserializeOwned>(body: &[u8], json: bool) -> T {
    if json {
        serde_json::from_slice(body).unwrap_or_else(|e| {
            panic!(
                "not an OTLP JSON request: {e}: {}",
                String::from_utf8_lossy(body)
            )
        })
    } else {
        T::decode(body).unwrap_or_else(|e| panic!("not an OTLP protobuf request: {e}"))
    }
}

fn read_chunked(reader: &mut impl BufRead) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let mut size = String::new();
        reader.read_line(&mut size).unwrap();
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        let mut chunk = vec![0; size + 2];
        reader.read_exact(&mut chunk).unwrap();
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// The attribute `key` of `attributes`.
pub fn attr<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a any_value::Value> {
    attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

/// The string attribute `key`, if it is one.
pub fn attr_str<'a>(attributes: &'a [KeyValue], key: &str) -> Option<&'a str> {
    match attr(attributes, key) {
        Some(any_value::Value::StringValue(s)) => Some(s),
        _ => None,
    }
}

/// The integer attribute `key`, if it is one.
pub fn attr_int(attributes: &[KeyValue], key: &str) -> Option<i64> {
    match attr(attributes, key) {
        Some(any_value::Value::IntValue(i)) => Some(*i),
        _ => None,
    }
}

/// The strings of array attribute `key`.
pub fn attr_strings(attributes: &[KeyValue], key: &str) -> Option<Vec<String>> {
    match attr(attributes, key) {
        Some(any_value::Value::ArrayValue(array)) => Some(
            array
                .values
                .iter()
                .filter_map(|v: &AnyValue| match &v.value {
                    Some(any_value::Value::StringValue(s)) => Some(s.clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}
