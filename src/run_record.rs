//! `hookd run --record FILE` and `hookd run --replay FILE|DIR`: a run kept
//! as one JSONL session, and the real agent run again from it with its
//! model side served from the recording, so the same tool calls reach
//! today's rules.
//!
//! Both stand a small HTTP relay on 127.0.0.1 between the agent and its
//! model API (the run request's `model_relay`; the daemon points the
//! run's endpoint at it and says where it pointed before). Recording, the
//! relay forwards each request to that upstream and keeps the exchange,
//! the response streamed through as it comes; replaying, it answers each
//! request with the next recorded exchange of the same method, path and
//! model, and refuses any request the recording does not hold (the run
//! then fails). Not SDK-specific: any runtime whose endpoint hookd sets.
//!
//! The format is `protocol::recording`'s, described in `docs/runs.md`
//! ("Recording and replay"). Everything written is redacted with the log's
//! redactor (the default config's `[redact]`).

use std::collections::HashMap;
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;
use serde_json::Value;

use crate::agent::claude::sdk::{ContentBlock, SdkBody, SdkMessageFields};
use crate::protocol::recording::{
    RecordItem, RecordLine, RecordedDecision, RecordedExchange, RecordedRequest, RecordedResponse,
    RecordingHeader, RECORDING_FORMAT, RECORDING_VERSION,
};
use crate::protocol::{Reply, RunOptions};
use crate::redact::Redactor;
use crate::tail::summary;

/// How long a recorded request may take upstream.
const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(600);

/// The log's redactor: `config`'s `[redact]` (`hookd run --config`), else
/// the default config's (`$XDG_CONFIG_HOME/hookd/config.toml`, when it
/// exists), else the built-in patterns.
pub fn redactor(config: Option<&Path>) -> anyhow::Result<Redactor> {
    let path = match config {
        Some(path) => Some(path.to_path_buf()),
        None => crate::paths::default_config_path().filter(|p| p.exists()),
    };
    let config = match &path {
        Some(path) => crate::config::Config::load(path)
            .with_context(|| format!("the config {}", path.display()))?,
        None => crate::config::Config::default(),
    };
    config.redactor().context("the config's [redact] patterns")
}

/// One recorded model exchange.
#[derive(Debug, Clone)]
struct Exchange {
    method: String,
    path: String,
    /// The request body's `model`, when it is JSON with one.
    model: Option<String>,
    /// Whether the request offers the model tools (the agent's turns do;
    /// its side requests, titles and summaries, do not).
    tools: bool,
    status: u16,
    content_type: Option<String>,
    body: String,
}

impl Exchange {
    fn of(recorded: &RecordedExchange) -> Exchange {
        Exchange {
            method: recorded.request.method.clone(),
            path: recorded.request.path.clone(),
            model: recorded.request.body["model"].as_str().map(str::to_owned),
            tools: offers_tools(&recorded.request.body),
            status: recorded.response.status,
            content_type: recorded.response.content_type.clone(),
            body: recorded.response.body.clone(),
        }
    }

    fn key(&self) -> String {
        format!(
            "{} {} (model {}, {})",
            self.method,
            self.path,
            self.model.as_deref().unwrap_or("none"),
            if self.tools { "with tools" } else { "no tools" }
        )
    }
}

fn offers_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// A request body with its `tools` written as the tools' names: their
/// definitions (schemas and descriptions, tens of KB per request of an
/// agent's) are the agent's, the same in every request, and a replay reads
/// only whether tools were offered. The Messages and Responses APIs' `name`,
/// Chat Completions' `function.name`, Gemini's `functionDeclarations[].name`;
/// a tool none of those name stays as it is.
fn slim_tools(mut body: Value) -> Value {
    let Some(tools) = body.get_mut("tools").and_then(Value::as_array_mut) else {
        return body;
    };
    let slim: Vec<Value> = tools
        .drain(..)
        .flat_map(|tool| {
            let name = tool
                .get("name")
                .or_else(|| tool.get("function").and_then(|f| f.get("name")))
                .and_then(Value::as_str)
                .map(|n| vec![Value::from(n)]);
            let declared = tool
                .get("functionDeclarations")
                .and_then(Value::as_array)
                .map(|d| {
                    d.iter()
                        .filter_map(|d| d.get("name").and_then(Value::as_str))
                        .map(Value::from)
                        .collect::<Vec<_>>()
                })
                .filter(|d| !d.is_empty());
            name.or(declared).unwrap_or_else(|| vec![tool])
        })
        .collect();
    *tools = slim;
    body
}

/// What the relay does with a request.
enum Mode {
    /// Forward to the upstream (known once the daemon said), keep each
    /// exchange as `(seq, offset_ms, line)`.
    Record {
        lines: Vec<(u64, RecordedExchange)>,
        next_seq: u64,
    },
    /// Answer from the recording, each exchange once.
    Replay {
        exchanges: Vec<(Exchange, bool)>,
        refused: Vec<String>,
    },
}

struct Inner {
    mode: Mutex<Mode>,
    upstream: (Mutex<Option<String>>, Condvar),
    started: Instant,
    redactor: Arc<Redactor>,
}

/// The local model relay; lives as long as this value.
pub struct Relay {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    inner: Arc<Inner>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Relay {
    fn start(mode: Mode, redactor: Arc<Redactor>) -> anyhow::Result<Relay> {
        let listener =
            std::net::TcpListener::bind("127.0.0.1:0").context("binding the model relay")?;
        listener.set_nonblocking(true)?;
        let url = format!("http://{}", listener.local_addr()?);
        let inner = Arc::new(Inner {
            mode: Mutex::new(mode),
            upstream: (Mutex::new(None), Condvar::new()),
            started: Instant::now(),
            redactor,
        });
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let state = inner.clone();
        let thread = std::thread::Builder::new()
            .name("hookd-model-relay".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("the relay's runtime");
                runtime.block_on(async move {
                    let listener =
                        tokio::net::TcpListener::from_std(listener).expect("a tokio listener");
                    let app = axum::Router::new().fallback(handle).with_state(state);
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(async {
                            let _ = stopped.await;
                        })
                        .await;
                });
            })?;
        Ok(Relay {
            url,
            inner,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// A relay that forwards to the upstream and records.
    pub fn recording(redactor: Arc<Redactor>) -> anyhow::Result<Relay> {
        Relay::start(
            Mode::Record {
                lines: Vec::new(),
                next_seq: 0,
            },
            redactor,
        )
    }

    /// A relay that answers from a recording's exchanges.
    fn replaying(lines: &[RecordLine], redactor: Arc<Redactor>) -> anyhow::Result<Relay> {
        let exchanges = lines
            .iter()
            .filter_map(|line| match &line.item {
                RecordItem::Exchange(e) => Some((Exchange::of(e), false)),
                _ => None,
            })
            .collect();
        Relay::start(
            Mode::Replay {
                exchanges,
                refused: Vec::new(),
            },
            redactor,
        )
    }

    /// The daemon said where the run's model requests were going.
    pub fn set_upstream(&self, url: &str) {
        let (lock, ready) = &self.inner.upstream;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = Some(url.to_string());
        ready.notify_all();
    }

    /// Stops serving; returns the recorded exchange lines (recording) or
    /// the refusals (replaying).
    fn finish(mut self) -> (Recorded, Vec<String>) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let mut mode = self.inner.mode.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *mode {
            Mode::Record { lines, .. } => (std::mem::take(lines), Vec::new()),
            Mode::Replay { refused, .. } => (Vec::new(), std::mem::take(refused)),
        }
    }
}

type Response = axum::response::Response;

fn plain(status: u16, content_type: Option<&str>, body: axum::body::Body) -> Response {
    let mut response = axum::response::Response::new(body);
    *response.status_mut() =
        axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::BAD_GATEWAY);
    if let Some(value) = content_type.and_then(|c| c.parse().ok()) {
        response
            .headers_mut()
            .insert(axum::http::header::CONTENT_TYPE, value);
    }
    response
}

/// An error in the shape of the Messages API's, so the agent shows it.
fn api_error(status: u16, message: &str) -> Response {
    // The Messages API's error body (`type` set by hand: it is the API's
    // shape, not one of hookd's frames).
    let mut body = serde_json::Map::new();
    body.insert("type".into(), "error".into());
    let mut error = serde_json::Map::new();
    error.insert("type".into(), "invalid_request_error".into());
    error.insert("message".into(), message.into());
    body.insert("error".into(), error.into());
    let body = Value::Object(body);
    plain(
        status,
        Some("application/json"),
        axum::body::Body::from(body.to_string()),
    )
}

async fn handle(
    axum::extract::State(inner): axum::extract::State<Arc<Inner>>,
    request: axum::extract::Request,
) -> Response {
    let method = request.method().as_str().to_string();
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let headers: Vec<(String, String)> = request
        .headers()
        .iter()
        .filter(|(name, _)| {
            !matches!(
                name.as_str(),
                "host" | "content-length" | "accept-encoding" | "connection" | "transfer-encoding"
            )
        })
        .filter_map(|(name, value)| Some((name.to_string(), value.to_str().ok()?.to_string())))
        .collect();
    let body = match axum::body::to_bytes(request.into_body(), usize::MAX).await {
        Ok(body) => body,
        Err(e) => return api_error(400, &format!("hookd relay: reading the request: {e}")),
    };
    let offset_ms = inner.started.elapsed().as_millis() as u64;
    let parsed: Option<Value> = serde_json::from_slice(&body).ok();
    let model = parsed
        .as_ref()
        .and_then(|b| b["model"].as_str())
        .map(str::to_owned);
    let tools = parsed.as_ref().is_some_and(offers_tools);
    let seq = {
        let mut mode = inner.mode.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *mode {
            Mode::Replay { exchanges, refused } => {
                return answer(exchanges, refused, method, path, model, tools)
            }
            Mode::Record { next_seq, .. } => {
                *next_seq += 1;
                *next_seq - 1
            }
        }
    };
    record(inner, seq, offset_ms, method, path, headers, body, parsed).await
}

/// The next recorded exchange of this method, path, model and kind, once;
/// none left: an API error, the refusal kept.
fn answer(
    exchanges: &mut [(Exchange, bool)],
    refused: &mut Vec<String>,
    method: String,
    path: String,
    model: Option<String>,
    tools: bool,
) -> Response {
    let wanted = Exchange {
        method,
        path,
        model,
        tools,
        status: 0,
        content_type: None,
        body: String::new(),
    }
    .key();
    match exchanges
        .iter_mut()
        .find(|(e, used)| !*used && e.key() == wanted)
    {
        Some((exchange, used)) => {
            *used = true;
            plain(
                exchange.status,
                exchange.content_type.as_deref(),
                axum::body::Body::from(exchange.body.clone()),
            )
        }
        None => {
            let message = format!(
                "hookd replay: the recording holds no further {wanted}; the agent asked \
                 the model something the recorded run did not"
            );
            refused.push(message.clone());
            api_error(400, &message)
        }
    }
}

/// Forwards one request upstream; streams the response back while keeping
/// it; the exchange is kept once the response has ended.
#[allow(clippy::too_many_arguments)]
async fn record(
    inner: Arc<Inner>,
    seq: u64,
    offset_ms: u64,
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: bytes::Bytes,
    parsed: Option<Value>,
) -> Response {
    let (head_tx, head_rx) =
        tokio::sync::oneshot::channel::<Result<(u16, Option<String>), String>>();
    let (chunks_tx, chunks_rx) =
        tokio::sync::mpsc::channel::<Result<bytes::Bytes, std::io::Error>>(64);
    let state = inner.clone();
    tokio::task::spawn_blocking(move || {
        let upstream = {
            let (lock, ready) = &state.upstream;
            let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
            let (guard, _) = ready
                .wait_timeout_while(guard, Duration::from_secs(30), |u| u.is_none())
                .unwrap_or_else(|e| e.into_inner());
            guard.clone()
        };
        let Some(upstream) = upstream else {
            let _ = head_tx.send(Err(
                "hookd relay: the daemon never said where the run's model API is".into(),
            ));
            return;
        };
        let url = format!("{}{}", upstream.trim_end_matches('/'), path);
        let agent = crate::outbound::agent(UPSTREAM_TIMEOUT);
        let sent = match method.as_str() {
            "POST" => {
                let mut builder = agent.post(&url);
                for (name, value) in &headers {
                    builder = builder.header(name, value);
                }
                builder.send(&body[..])
            }
            "GET" => {
                let mut builder = agent.get(&url);
                for (name, value) in &headers {
                    builder = builder.header(name, value);
                }
                builder.call()
            }
            other => {
                let _ = head_tx.send(Err(format!("hookd relay: method {other} is not relayed")));
                return;
            }
        };
        let response = match sent {
            Ok(response) => response,
            Err(e) => {
                let _ = head_tx.send(Err(format!("hookd relay: {url}: {e}")));
                return;
            }
        };
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let _ = head_tx.send(Ok((status, content_type.clone())));
        let mut reader = response.into_body().into_reader();
        let mut kept = Vec::new();
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match reader.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    kept.extend_from_slice(&buf[..n]);
                    let _ = chunks_tx.blocking_send(Ok(bytes::Bytes::copy_from_slice(&buf[..n])));
                }
                Err(e) => {
                    let _ = chunks_tx.blocking_send(Err(std::io::Error::other(e.to_string())));
                    break;
                }
            }
        }
        let redactor = &state.redactor;
        let request = match &parsed {
            Some(v) => slim_tools(redactor.redact_value(v).into_owned()),
            None => Value::String(
                redactor
                    .redact_str(&String::from_utf8_lossy(&body))
                    .into_owned(),
            ),
        };
        let exchange = RecordedExchange {
            seq,
            request: RecordedRequest {
                method,
                path,
                body: request,
            },
            response: RecordedResponse {
                status,
                content_type,
                body: redactor
                    .redact_str(&String::from_utf8_lossy(&kept))
                    .into_owned(),
            },
        };
        if let Mode::Record { lines, .. } =
            &mut *state.mode.lock().unwrap_or_else(|e| e.into_inner())
        {
            lines.push((offset_ms, exchange));
        }
    });
    match head_rx.await {
        Ok(Ok((status, content_type))) => {
            let stream = futures_util::stream::unfold(chunks_rx, |mut rx| async move {
                rx.recv().await.map(|chunk| (chunk, rx))
            });
            plain(
                status,
                content_type.as_deref(),
                axum::body::Body::from_stream(stream),
            )
        }
        Ok(Err(message)) => api_error(502, &message),
        Err(_) => api_error(502, "hookd relay: the upstream request ended unexpectedly"),
    }
}

/// The run's frames as recording lines, with their offsets.
pub struct Session {
    started: Instant,
    redactor: Arc<Redactor>,
    lines: Vec<(u64, RecordItem)>,
    /// event id → (kind, tool, summary).
    events: HashMap<String, (String, String, String)>,
    /// The relay's upstream, once the daemon said.
    upstream: Option<String>,
    /// The first decision's policy revision.
    revision: Option<String>,
}

impl Session {
    fn new(redactor: Arc<Redactor>) -> Session {
        Session {
            started: Instant::now(),
            redactor,
            lines: Vec::new(),
            events: HashMap::new(),
            upstream: None,
            revision: None,
        }
    }

    fn push(&mut self, item: RecordItem) {
        let offset = self.started.elapsed().as_millis() as u64;
        self.lines.push((offset, item));
    }

    fn redacted(&self, text: &str) -> String {
        self.redactor.redact_str(text).into_owned()
    }

    /// Takes one frame of the run.
    fn frame(&mut self, frame: &Reply) {
        match frame {
            Reply::Ok(ok) if ok.req == "run" => {
                self.upstream = ok
                    .result
                    .as_ref()
                    .and_then(|r| r["model_upstream"].as_str())
                    .map(str::to_owned);
            }
            Reply::Event(push) => {
                let e = &push.event;
                let text = |key: &str| e[key].as_str().unwrap_or_default().to_string();
                let (event_id, kind, tool) = (text("id"), text("kind"), text("tool"));
                let about = self.redacted(&summary(&e["input"]));
                let tool_input = crate::agent::claude::InputFields::of(&e["input"])
                    .tool_input
                    .map_or(Value::Null, |input| {
                        self.redactor.redact_value(input).into_owned()
                    });
                self.events.insert(
                    event_id.clone(),
                    (kind.clone(), tool.clone(), about.clone()),
                );
                self.push(RecordItem::Hook {
                    event_id,
                    kind,
                    tool,
                    summary: about,
                    tool_input,
                    pending: push.pending,
                });
            }
            Reply::Decision(push) => {
                let d = &push.decision;
                let event_id = d["event_id"].as_str().unwrap_or_default().to_string();
                let Some((kind, tool, summary)) = self.events.remove(&event_id) else {
                    return;
                };
                let revision = d["revision"].as_str().map(str::to_owned);
                if self.revision.is_none() {
                    self.revision = revision.clone();
                }
                let decision = RecordedDecision {
                    event_id,
                    kind,
                    tool,
                    summary,
                    verdict: d["verdict"].as_str().unwrap_or("none").to_string(),
                    source: d["source"].as_str().unwrap_or_default().to_string(),
                    rule_ids: d["rule_ids"]
                        .as_array()
                        .map(|ids| {
                            ids.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default(),
                    reason: d["reason"].as_str().map(|r| self.redacted(r)),
                    revision,
                };
                self.push(RecordItem::Decision(decision));
            }
            Reply::SdkMessage(m) => {
                let message = self.redactor.redact_value(&m.message).into_owned();
                let items: Vec<RecordItem> = match SdkMessageFields::of(&message).body {
                    SdkBody::Assistant(blocks) | SdkBody::User(blocks) => blocks
                        .iter()
                        .filter_map(|block| match block {
                            ContentBlock::Text(text) => {
                                Some(RecordItem::Text { text: text.into() })
                            }
                            ContentBlock::Thinking(thinking) => Some(RecordItem::Thinking {
                                thinking: thinking.into(),
                            }),
                            ContentBlock::ToolUse { name, input } => Some(RecordItem::ToolCall {
                                name: name.unwrap_or_default().into(),
                                input: input.clone(),
                            }),
                            ContentBlock::ToolResult { text, is_error } => {
                                Some(RecordItem::ToolResult {
                                    content: text,
                                    is_error,
                                })
                            }
                            ContentBlock::Other => None,
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                for item in items {
                    self.push(item);
                }
            }
            Reply::RunDone(done) => {
                if let Some(error) = &done.error {
                    let message = self.redacted(error);
                    self.push(RecordItem::Error { message });
                }
                let result = done.result.as_deref().map(|r| self.redacted(r));
                self.push(RecordItem::Done {
                    ok: done.ok,
                    result,
                    usage: done.usage.clone(),
                    cost_usd: done.cost_usd,
                    num_turns: done.num_turns,
                });
            }
            _ => {}
        }
    }

    /// The decisions that shaped the run, as the diff compares them.
    fn decisions(&self) -> Vec<Decision> {
        decisions(self.lines.iter().map(|(_, item)| item))
    }
}

/// The exchanges a recording relay kept, with their offsets.
type Recorded = Vec<(u64, RecordedExchange)>;

/// What `hookd run` hands its frames to (and takes the relay URL from).
#[derive(Clone)]
pub struct Tap {
    session: Arc<Mutex<Session>>,
    relay: Arc<Relay>,
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap")
            .field("relay", &self.relay.url)
            .finish()
    }
}

impl Tap {
    fn new(relay: Relay, redactor: Arc<Redactor>) -> Tap {
        Tap {
            session: Arc::new(Mutex::new(Session::new(redactor))),
            relay: Arc::new(relay),
        }
    }

    /// The relay's URL, for the run request's `model_relay`.
    pub fn relay_url(&self) -> String {
        self.relay.url.clone()
    }

    /// Takes one frame (and tells the relay its upstream when the daemon
    /// says it).
    pub fn frame(&self, frame: &Reply) {
        let mut session = self.session.lock().unwrap_or_else(|e| e.into_inner());
        session.frame(frame);
        if let (Reply::Ok(_), Some(upstream)) = (frame, &session.upstream) {
            self.relay.set_upstream(upstream);
        }
    }

    fn finish(self) -> anyhow::Result<(Session, Recorded, Vec<String>)> {
        let relay = Arc::try_unwrap(self.relay)
            .map_err(|_| anyhow::anyhow!("the model relay is still in use"))?;
        let (exchanges, refused) = relay.finish();
        let session = Arc::try_unwrap(self.session)
            .map_err(|_| anyhow::anyhow!("the recording is still in use"))?
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        Ok((session, exchanges, refused))
    }
}

/// `hookd run --record FILE`: starts the relay; run the run with the
/// returned tap, then [`write_recording`].
pub fn start_recording(config: Option<&Path>) -> anyhow::Result<Tap> {
    let redactor = Arc::new(redactor(config)?);
    let relay = Relay::recording(redactor.clone())?;
    Ok(Tap::new(relay, redactor))
}

/// Writes the recording of a run to `path`: the header, then every line by
/// its offset (a model exchange at the offset of its request).
pub fn write_recording(
    tap: Tap,
    path: &Path,
    prompt: &str,
    options: &RunOptions,
    provider: Option<&str>,
    runtime: Option<&str>,
) -> anyhow::Result<()> {
    let (session, exchanges, _) = tap.finish()?;
    let header = RecordingHeader {
        format: RECORDING_FORMAT.into(),
        version: RECORDING_VERSION,
        hookd_version: env!("CARGO_PKG_VERSION").into(),
        prompt: session.redacted(prompt),
        options: options.clone(),
        provider: provider.map(str::to_owned),
        runtime: runtime.map(str::to_owned),
        policy_revision: session.revision.clone(),
    };
    // By offset; at one offset the run's own lines first, in their order,
    // then the exchanges in theirs.
    let mut lines: Vec<(u64, u64, RecordItem)> = session
        .lines
        .into_iter()
        .enumerate()
        .map(|(i, (offset, item))| (offset, i as u64, item))
        .collect();
    let base = lines.len() as u64;
    lines.extend(
        exchanges
            .into_iter()
            .map(|(offset, e)| (offset, base + e.seq, RecordItem::Exchange(e))),
    );
    lines.sort_by_key(|(offset, order, _)| (*offset, *order));
    let mut out = Vec::new();
    let header = RecordLine {
        offset_ms: None,
        item: RecordItem::Header(header),
    };
    serde_json::to_writer(&mut out, &header)?;
    out.push(b'\n');
    for (offset, _, item) in lines {
        let line = RecordLine {
            offset_ms: Some(offset),
            item,
        };
        serde_json::to_writer(&mut out, &line)?;
        out.push(b'\n');
    }
    std::fs::write(path, out).with_context(|| format!("writing {}", path.display()))
}

/// One decision, as the diff compares it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// The hook event's kind.
    pub kind: String,
    /// Its tool.
    pub tool: String,
    /// What it was about.
    pub summary: String,
    /// allow, deny, ask, none.
    pub verdict: String,
    /// Who decided (rule, client, …).
    pub source: String,
    /// The deciding rules.
    pub rule_ids: Vec<String>,
    /// The reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn decisions<'a>(items: impl Iterator<Item = &'a RecordItem>) -> Vec<Decision> {
    items
        .filter_map(|item| match item {
            RecordItem::Decision(d) => Some(Decision {
                kind: d.kind.clone(),
                tool: d.tool.clone(),
                summary: d.summary.clone(),
                verdict: d.verdict.clone(),
                source: d.source.clone(),
                rule_ids: d.rule_ids.clone(),
                reason: d.reason.clone(),
            }),
            _ => None,
        })
        // What shaped the run: permission decisions always, the rest when
        // something was decided (as `hookd run` shows them).
        .filter(|d| {
            d.verdict != "none" || matches!(d.kind.as_str(), "PreToolUse" | "PermissionRequest")
        })
        .collect()
}

/// A decision that differs between the recording and the replay.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// The hook event's kind.
    pub kind: String,
    /// Its tool.
    pub tool: String,
    /// What it was about.
    pub summary: String,
    /// The recorded decision.
    pub then: Decision,
    /// Today's.
    pub now: Decision,
}

/// One recording replayed.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The recording.
    pub recording: String,
    /// Today's decisions, in order.
    pub decisions: Vec<Decision>,
    /// The decisions that changed.
    pub changes: Vec<Change>,
    /// Recorded decision points the replay did not reach.
    pub only_then: Vec<Decision>,
    /// Decision points only the replay reached.
    pub only_now: Vec<Decision>,
}

impl Report {
    /// Whether anything differs.
    pub fn changed(&self) -> bool {
        !(self.changes.is_empty() && self.only_then.is_empty() && self.only_now.is_empty())
    }
}

/// The diff: the n-th decision about the same call then and now.
pub fn diff(recording: &str, then: Vec<Decision>, now: Vec<Decision>) -> Report {
    type Key = (String, String, String);
    let key = |d: &Decision| -> Key { (d.kind.clone(), d.tool.clone(), d.summary.clone()) };
    let mut pending: HashMap<Key, std::collections::VecDeque<Decision>> = HashMap::new();
    let mut order = Vec::new();
    for d in then {
        order.push(key(&d));
        pending.entry(key(&d)).or_default().push_back(d);
    }
    let mut changes = Vec::new();
    let mut only_now = Vec::new();
    for d in &now {
        match pending.get_mut(&key(d)).and_then(|q| q.pop_front()) {
            Some(old) if old.verdict != d.verdict => changes.push(Change {
                kind: d.kind.clone(),
                tool: d.tool.clone(),
                summary: d.summary.clone(),
                then: old,
                now: d.clone(),
            }),
            Some(_) => {}
            None => only_now.push(d.clone()),
        }
    }
    let only_then = order
        .iter()
        .filter_map(|k| pending.get_mut(k).and_then(|q| q.pop_front()))
        .collect();
    Report {
        recording: recording.to_string(),
        decisions: now,
        changes,
        only_then,
        only_now,
    }
}

/// Reads a recording: its header and its lines (the header first).
pub fn read(path: &Path) -> anyhow::Result<(RecordingHeader, Vec<RecordLine>)> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut lines = Vec::new();
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        let record: RecordLine = serde_json::from_str(&line).with_context(|| {
            format!(
                "{}:{}: not a line of a hookd run recording",
                path.display(),
                n + 1
            )
        })?;
        lines.push(record);
    }
    let header = match lines.first().map(|l| &l.item) {
        Some(RecordItem::Header(header)) if header.format == RECORDING_FORMAT => header.clone(),
        _ => anyhow::bail!(
            "{}:1: not a hookd run recording (its first line is no header of format \
             \"{RECORDING_FORMAT}\")",
            path.display()
        ),
    };
    if header.version != RECORDING_VERSION {
        anyhow::bail!(
            "{}:1: recording format version {} (this hookd reads version {RECORDING_VERSION})",
            path.display(),
            header.version
        );
    }
    Ok((header, lines))
}

/// The recordings a `--replay` path names: the file, or a directory's
/// `*.jsonl` files, sorted.
pub fn recordings(path: &Path) -> anyhow::Result<Vec<PathBuf>> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .with_context(|| format!("listing {}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    if files.is_empty() {
        anyhow::bail!("{}: no *.jsonl recordings in it", path.display());
    }
    Ok(files)
}

/// Replays one recording: `run` runs its prompt with these options (the
/// session in `cwd`) through the daemon, the frames to the tap (`hookd
/// run`'s client, handed in from above); today's decisions against the
/// recorded ones.
pub fn replay(
    path: &Path,
    cwd: &Path,
    config: Option<&Path>,
    run: impl FnOnce(&RecordingHeader, RunOptions, Tap) -> anyhow::Result<u8>,
) -> anyhow::Result<Report> {
    let (header, lines) = read(path)?;
    let redactor = Arc::new(redactor(config)?);
    let relay = Relay::replaying(&lines, redactor.clone())?;
    let tap = Tap::new(relay, redactor);
    let mut options = header.options.clone();
    options.cwd = Some(cwd.display().to_string());
    options.resume = None;
    let outcome = run(&header, options, tap.clone());
    let (session, _, refused) = tap.finish()?;
    if let Some(first) = refused.first() {
        anyhow::bail!(
            "replaying {}: the run failed: {first}{}",
            path.display(),
            match refused.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            }
        );
    }
    outcome.with_context(|| format!("replaying {}", path.display()))?;
    Ok(diff(
        &path.display().to_string(),
        decisions(lines.iter().map(|l| &l.item)),
        session.decisions(),
    ))
}

fn describe(d: &Decision) -> String {
    let mut s = d.verdict.clone();
    if d.rule_ids.is_empty() {
        s.push_str(&format!(" ({})", d.source));
    } else {
        s.push_str(&format!(" ({} {})", d.source, d.rule_ids.join(",")));
    }
    s
}

/// The text report of one replay.
pub fn print(report: &Report, out: &mut impl Write) -> std::io::Result<()> {
    let changed = report.changes.len() + report.only_then.len() + report.only_now.len();
    writeln!(
        out,
        "{} {}: {} decisions, {}",
        if report.changed() { "✗" } else { "✓" },
        report.recording,
        report.decisions.len(),
        if changed == 0 {
            "none changed".to_string()
        } else {
            format!("{changed} changed")
        }
    )?;
    let subject = |kind: &str, tool: &str, about: &str| {
        let mut s = kind.to_string();
        if !tool.is_empty() {
            s.push_str(&format!(" {tool}"));
        }
        if !about.is_empty() {
            s.push_str(&format!(" `{about}`"));
        }
        s
    };
    for c in &report.changes {
        write!(
            out,
            "  {}: {} then, {} now",
            subject(&c.kind, &c.tool, &c.summary),
            describe(&c.then),
            describe(&c.now)
        )?;
        match &c.now.reason {
            Some(reason) => writeln!(out, ": {reason}")?,
            None => writeln!(out)?,
        }
    }
    for d in &report.only_then {
        writeln!(
            out,
            "  {}: {} then, not reached now",
            subject(&d.kind, &d.tool, &d.summary),
            describe(d)
        )?;
    }
    for d in &report.only_now {
        writeln!(
            out,
            "  {}: not reached then, {} now",
            subject(&d.kind, &d.tool, &d.summary),
            describe(d)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(kind: &str, about: &str, verdict: &str, rule: &str) -> Decision {
        Decision {
            kind: kind.into(),
            tool: "Bash".into(),
            summary: about.into(),
            verdict: verdict.into(),
            source: "rule".into(),
            rule_ids: vec![rule.into()],
            reason: None,
        }
    }

    #[test]
    fn a_recorded_requests_tools_are_their_names_and_still_offered() {
        let body = serde_json::json!({"model": "m", "messages": [], "tools": [
            {"name": "Bash", "description": "runs", "input_schema": {"type": "object"}},
            {"type": "function", "function": {"name": "read", "parameters": {}}},
            {"functionDeclarations": [{"name": "edit", "parameters": {}}, {"name": "ls"}]},
            {"googleSearch": {}}]});
        let slim = slim_tools(body);
        assert_eq!(
            slim["tools"],
            serde_json::json!(["Bash", "read", "edit", "ls", {"googleSearch": {}}])
        );
        assert_eq!(slim["model"], "m");
        assert!(offers_tools(&slim));
        let none = slim_tools(serde_json::json!({"model": "m", "tools": []}));
        assert!(!offers_tools(&none));
        assert_eq!(
            slim_tools(serde_json::json!("text")),
            serde_json::json!("text")
        );
    }

    #[test]
    fn the_diff_pairs_the_nth_decision_about_the_same_call() {
        let then = vec![
            d("PreToolUse", "echo a", "allow", "ok"),
            d("PreToolUse", "rm x", "allow", "ok"),
            d("PreToolUse", "rm x", "deny", "no"),
            d("PreToolUse", "ls", "allow", "ok"),
        ];
        let now = vec![
            d("PreToolUse", "echo a", "allow", "ok"),
            d("PreToolUse", "rm x", "deny", "no-rm"),
            d("PreToolUse", "rm x", "deny", "no-rm"),
            d("PreToolUse", "cat y", "allow", "ok"),
        ];
        let report = diff("r", then, now);
        assert_eq!(report.changes.len(), 1);
        assert_eq!(report.changes[0].then.verdict, "allow");
        assert_eq!(report.changes[0].now.rule_ids, ["no-rm"]);
        assert_eq!(report.only_then, [d("PreToolUse", "ls", "allow", "ok")]);
        assert_eq!(report.only_now, [d("PreToolUse", "cat y", "allow", "ok")]);
        assert!(report.changed());
        let mut out = Vec::new();
        print(&report, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains("PreToolUse Bash `rm x`: allow (rule ok) then, deny (rule no-rm) now"),
            "{text}"
        );
    }
}
