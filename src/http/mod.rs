//! hookd's HTTP face: an optional listener (`[http] listen`, or
//! `hookd serve --http ADDR`) on the daemon's tokio runtime, for a phone,
//! a browser, a metrics scraper and Claude Code's `http` hooks.
//!
//! - [`config`]: the `[http]` section and its checks;
//! - [`token`]: the bearer token file (`hookd http token`);
//! - [`links`]: one-time approve/deny links for events that wait for a
//!   person, and the approval page they open;
//! - [`notify`]: the pushes carrying them (`[notify]`: ntfy, webhooks).
//!
//! The [`router`] is assembled from one `routes()` function per area, so a
//! new area is one line. Every request passes `guard`: its Host must be
//! this listener's (DNS rebinding), a non-GET's Origin, when it has one,
//! must be too, and a declared body must fit the cap. Every route but the
//! one-time links (which are their own credential) also needs
//! `Authorization: Bearer <token>`.
//!
//! **Invariant:** nothing here can delay a hook. Connections are tasks of
//! their own, capped in number (the excess is closed at accept), with a
//! deadline for the request head and one for the whole connection; the
//! handlers take the hub's lock only as a socket client's `decide` does.

pub use crate::config::http as config;
pub mod alarm;
pub mod hook;
pub mod links;
pub mod metrics;
pub mod notify;
pub mod token;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::daemon::accept::{AcceptBackoff, Accepted};
use crate::daemon::faces::{HttpFace, PreparedHttp};
use crate::daemon::Shared;
pub use config::HttpConfig;
use config::PublicUrl;

/// How long a client has to send a request's head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one connection may stay open, however busy: bounds a client
/// that trickles a body, and a keep-alive connection's hold on its slot.
const CONNECTION_LIFETIME: Duration = Duration::from_secs(30);

/// The listener's state, kept in [`Shared::http`] while it runs.
#[derive(Debug)]
pub struct Face {
    /// The address bound (a `:0` port resolved).
    pub listen: SocketAddr,
    /// The base of links.
    pub public: PublicUrl,
    /// The bearer token's file, read per request.
    pub token_file: PathBuf,
    /// `Host` values this listener answers to, lowercased.
    allowed_hosts: Vec<String>,
    /// The request body cap.
    pub max_body_bytes: usize,
    /// The connection cap.
    pub max_connections: usize,
    /// Connections closed at accept because every slot was taken.
    pub refused_connections: AtomicU64,
    /// The one-time links.
    pub links: Arc<links::Links>,
}

/// The running listener's face, as [`start`] left it in [`Shared::http`].
pub(crate) fn face_of(shared: &Shared) -> Option<&Face> {
    shared.http.get()?.as_any().downcast_ref::<Face>()
}

impl HttpFace for Face {
    fn status(&self) -> crate::protocol::HttpStatus {
        Face::status(self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn into_any(self: Arc<Self>) -> Arc<dyn std::any::Any + Send + Sync> {
        self
    }

    fn coverage_alarm(&self, alarm: &crate::protocol::coverage::CoverageAlarm) {
        if let Some(notifier) = self.links.notifier() {
            notifier.push_alarm(alarm);
        }
    }

    fn narration(&self, narration: &crate::protocol::narration::Narration) {
        self.links.narrated(narration);
    }
}

/// The HTTP face of [`hookd_daemon::faces::Faces`]: checks and binds the
/// listener `config` asks for; started on the running daemon by
/// [`start`].
pub fn face(config: &crate::config::Config) -> anyhow::Result<Option<PreparedHttp>> {
    Ok(prepare(config)?.map(|prepared| -> PreparedHttp {
        Box::new(move |shared: &Arc<Shared>, shutdown: &CancellationToken| {
            start(prepared, shared, shutdown)
        })
    }))
}

impl Face {
    /// `status.http`.
    pub fn status(&self) -> crate::protocol::HttpStatus {
        crate::protocol::HttpStatus {
            listen: self.listen.to_string(),
            public_url: self.public.base.clone(),
            token_file: self.token_file.clone(),
            refused_connections: self.refused_connections.load(Ordering::Relaxed),
            links: self.links.count() as u64,
            notify: self.links.notifier().map(|n| n.status()),
        }
    }
}

/// The `Host` values a listener on `listen` reached as `public` answers to.
pub(crate) fn allowed_hosts(listen: SocketAddr, public: &PublicUrl) -> Vec<String> {
    let mut hosts = vec![listen.to_string().to_ascii_lowercase()];
    if listen.ip().is_loopback() {
        hosts.push(format!("localhost:{}", listen.port()));
    }
    hosts.push(public.authority.clone());
    // A URL without a port is reached on the scheme's.
    if !public.authority.contains(':') || public.authority.ends_with(']') {
        let port = if public.scheme == "https" { 443 } else { 80 };
        hosts.push(format!("{}:{port}", public.authority));
    }
    hosts.sort();
    hosts.dedup();
    hosts
}

/// A listener bound at start, before the runtime serves it.
#[derive(Debug)]
pub struct Prepared {
    listener: std::net::TcpListener,
    face: Face,
}

pub use crate::config::http::check;

/// Checks `[http]`, makes sure the token file exists and binds the
/// listener: every error a misconfigured listener can have is a start-up
/// error naming the key or file. `None` when no listener is configured.
pub fn prepare(config: &crate::config::Config) -> anyhow::Result<Option<Prepared>> {
    check(config)?;
    let notify = &config.notify;
    let config = &config.http;
    let Some(listen) = config.listen else {
        return Ok(None);
    };
    let token_file = match &config.token_file {
        Some(path) => path.clone(),
        None => token::default_path().context(
            "[http]: no config directory for the token file (set HOME or XDG_CONFIG_HOME, or \
             `token_file` in [http])",
        )?,
    };
    token::ensure(&token_file).context("[http]: the bearer token file")?;
    let listener = std::net::TcpListener::bind(listen)
        .with_context(|| format!("[http]: binding {listen} (`http.listen`)"))?;
    listener.set_nonblocking(true)?;
    let bound = listener.local_addr()?;
    let public = match &config.public_url {
        Some(url) => {
            PublicUrl::parse(url).map_err(|e| anyhow::anyhow!("[http] public_url: {e}"))?
        }
        None => PublicUrl::parse(&format!("http://{bound}"))
            .map_err(|e| anyhow::anyhow!("[http] listen: {e}"))?,
    };
    if !bound.ip().is_loopback() {
        tracing::warn!(
            listen = %bound,
            "the HTTP listener is reachable from other machines (`allow_remote = true`): \
             keep it on a private network such as a tailnet; it has no TLS"
        );
    }
    let links = links::Links::new(public.base.clone(), notify)
        .context("starting the push sender thread")?;
    Ok(Some(Prepared {
        listener,
        face: Face {
            listen: bound,
            allowed_hosts: allowed_hosts(bound, &public),
            public,
            token_file,
            max_body_bytes: config.max_body_bytes(),
            max_connections: config.max_connections(),
            refused_connections: AtomicU64::new(0),
            links: Arc::new(links),
        },
    }))
}

/// Starts serving `prepared` for `shared` until `shutdown`: the face goes
/// into [`Shared::http`] and the links start following the hub's pending
/// table.
pub fn start(
    prepared: Prepared,
    shared: &Arc<Shared>,
    shutdown: &CancellationToken,
) -> anyhow::Result<()> {
    let listener = TcpListener::from_std(prepared.listener)?;
    let face = Arc::new(prepared.face);
    tracing::info!(listen = %face.listen, public_url = %face.public.base, "HTTP listener on");
    shared.hub.observe(face.links.clone());
    let _ = shared.http.set(face.clone() as Arc<dyn HttpFace>);
    tokio::spawn(serve(listener, shared.clone(), shutdown.clone()));
    Ok(())
}

/// Every route: one line per area.
pub fn router(shared: Arc<Shared>, max_body_bytes: usize) -> Router {
    let bearer = Router::new()
        .merge(status_routes())
        .merge(metrics::routes())
        .merge(hook::routes())
        .route_layer(middleware::from_fn_with_state(
            shared.clone(),
            require_bearer,
        ));
    Router::new()
        .merge(links::routes())
        .merge(bearer)
        .layer(middleware::from_fn_with_state(shared.clone(), guard))
        .layer(DefaultBodyLimit::max(max_body_bytes))
        .with_state(shared)
}

/// `GET /status`: the daemon's `status` (as the socket's `status` reply).
fn status_routes() -> Router<Arc<Shared>> {
    Router::new().route(
        "/status",
        get(|State(shared): State<Arc<Shared>>| async move { Json(shared.status()) }),
    )
}

/// Accepts until `shutdown`; each connection is a task of its own, at most
/// `max_connections` at once, each bounded in time.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>, shutdown: CancellationToken) {
    let Some(face) = shared
        .http
        .get()
        .cloned()
        .and_then(|face| face.into_any().downcast::<Face>().ok())
    else {
        return;
    };
    let router = router(shared.clone(), face.max_body_bytes);
    let limits = Limits {
        name: "the HTTP listener",
        max_connections: face.max_connections,
        refused: &face.refused_connections,
    };
    serve_connections(listener, router, limits, shutdown).await;
}

/// A listener's limits for [`serve_connections`].
#[derive(Debug)]
pub(crate) struct Limits<'a> {
    /// The listener, as the log names it.
    pub name: &'static str,
    /// Connections served at once; the excess is closed at accept.
    pub max_connections: usize,
    /// Counts the connections closed at accept.
    pub refused: &'a AtomicU64,
}

/// Serves `router` on `listener` until `shutdown`, as every listener of
/// hookd's does (this face and `hookd team dashboard`): each connection a
/// task of its own, at most `limits.max_connections` at once (the excess
/// closed at accept, counted, and logged once per streak), each with
/// [`HEADER_TIMEOUT`] for a request's head (which also ends a keep-alive
/// connection idle that long) and [`CONNECTION_LIFETIME`] in all (which
/// bounds a trickled body).
pub(crate) async fn serve_connections(
    listener: TcpListener,
    router: Router,
    limits: Limits<'_>,
    shutdown: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let tracker = TaskTracker::new();
    let mut backoff = AcceptBackoff::default();
    let mut refusing = false;
    loop {
        let failed = |e: &std::io::Error| tracing::warn!(error = %e, "HTTP accept failed");
        let stream = match backoff.accept(listener.accept(), &shutdown, failed).await {
            Accepted::Connection((stream, _)) => stream,
            Accepted::Failed => continue,
            Accepted::Shutdown => break,
        };
        // Full: close it now rather than let it wait; a client that holds
        // every slot delays only other HTTP clients, never a hook.
        let Ok(permit) = slots.clone().try_acquire_owned() else {
            limits.refused.fetch_add(1, Ordering::Relaxed);
            if !refusing {
                refusing = true;
                tracing::warn!(
                    max_connections = limits.max_connections,
                    "{}: every connection slot is taken; closing new connections until one ends",
                    limits.name
                );
            }
            drop(stream);
            continue;
        };
        refusing = false;
        let service = TowerToHyperService::new(router.clone());
        let shutdown = shutdown.clone();
        tracker.spawn(async move {
            let _ = stream.set_nodelay(true);
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .max_buf_size(64 * 1024);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            let mut connection = std::pin::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                _ = tokio::time::sleep(CONNECTION_LIFETIME) => {}
                _ = shutdown.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(Duration::from_secs(1), connection).await;
                }
            }
            drop(permit);
        });
    }
    tracker.close();
    let _ = tokio::time::timeout(Duration::from_secs(2), tracker.wait()).await;
}

/// A refusal with a plain-text body that says why.
pub(crate) fn refuse(status: StatusCode, why: impl Into<String>) -> Response {
    let mut body = why.into();
    body.push('\n');
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// Host, Origin and body-size checks for every request.
async fn guard(State(shared): State<Arc<Shared>>, request: Request, next: Next) -> Response {
    let Some(face) = face_of(&shared) else {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "the HTTP listener is not set up",
        );
    };
    if let Some(refused) = check_request(
        &face.allowed_hosts,
        &face.public.authority,
        "Set `public_url` in [http]",
        (face.max_body_bytes, "`http.max_body_bytes`"),
        &request,
    ) {
        return refused;
    }
    next.run(request).await
}

/// The checks every request to a listener of hookd's passes (this face's
/// and `hookd team dashboard`'s): its Host must be one of `hosts` (DNS
/// rebinding; `name` is the one shown, `hint` says how to add another), a
/// non-GET's Origin, when it
/// has one, must be too, and a declared body must fit the cap `(bytes,
/// what sets it)`. The refusal to send, if any.
pub(crate) fn check_request(
    hosts: &[String],
    name: &str,
    hint: &str,
    (max_body_bytes, cap): (usize, &str),
    request: &Request,
) -> Option<Response> {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    if !hosts.contains(&host.to_ascii_lowercase()) {
        return Some(refuse(
            StatusCode::FORBIDDEN,
            format!(
                "403 Forbidden: Host `{host}` is not this listener's ({name}); requests must name \
                 it as their Host (a guard against DNS rebinding). Reaching it under another \
                 name? {hint}"
            ),
        ));
    }
    if !matches!(*request.method(), Method::GET | Method::HEAD) {
        if let Some(origin) = request.headers().get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("(not text)");
            let lower = origin.to_ascii_lowercase();
            let own = ["http://", "https://"].iter().any(|scheme| {
                lower
                    .strip_prefix(scheme)
                    .is_some_and(|host| hosts.iter().any(|h| h == host))
            });
            if !own {
                return Some(refuse(
                    StatusCode::FORBIDDEN,
                    format!(
                        "403 Forbidden: a page from `{origin}` may not send requests here; only \
                         this listener's own pages may"
                    ),
                ));
            }
        }
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|n| n > max_body_bytes as u64) {
        return Some(refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            too_large(max_body_bytes, cap),
        ));
    }
    None
}

/// A 413's text: the cap in bytes and `cap`, what sets it.
pub(crate) fn too_large(max_body_bytes: usize, cap: &str) -> String {
    format!("413 Payload Too Large: bodies are capped at {max_body_bytes} bytes ({cap})")
}

/// `Authorization: Bearer <token>`, checked against the token file as it
/// is now (so a rotation takes effect at once).
async fn require_bearer(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(face) = face_of(&shared) else {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "the HTTP listener is not set up",
        );
    };
    match check_bearer(&face.token_file, request.headers()).await {
        None => next.run(request).await,
        Some(refused) => refused,
    }
}

/// `headers`' `Authorization: Bearer <token>` against the token in `token_file` as
/// it is now (so a rotation takes effect at once). The refusal to send,
/// if any.
pub(crate) async fn check_bearer(token_file: &Path, headers: &HeaderMap) -> Option<Response> {
    let token_file = token_file.to_path_buf();
    let expected = match tokio::task::spawn_blocking(move || token::read(&token_file)).await {
        Ok(Ok(token)) => token,
        Ok(Err(e)) => {
            tracing::error!(error = %e, "refusing HTTP requests: the token file is unusable");
            return Some(refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "500: the token file is unusable; the log says why",
            ));
        }
        Err(_) => {
            return Some(refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "500: reading the token failed",
            ))
        }
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match given {
        Some(given) if token::matches(given.as_bytes(), expected.as_bytes()) => None,
        Some(_) => Some(refuse(
            StatusCode::UNAUTHORIZED,
            "401 Unauthorized: wrong bearer token (`hookd http token` prints the right one)",
        )),
        None => Some(refuse(
            StatusCode::UNAUTHORIZED,
            "401 Unauthorized: send `Authorization: Bearer <token>` (`hookd http token` prints it)",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_of_a_loopback_listener_and_a_public_url() {
        let listen: SocketAddr = "127.0.0.1:7878".parse().unwrap();
        let local = PublicUrl::parse("http://127.0.0.1:7878").unwrap();
        assert_eq!(
            allowed_hosts(listen, &local),
            ["127.0.0.1:7878", "localhost:7878"]
        );
        let tailnet = PublicUrl::parse("https://Box.ts.net").unwrap();
        assert_eq!(
            allowed_hosts(listen, &tailnet),
            [
                "127.0.0.1:7878",
                "box.ts.net",
                "box.ts.net:443",
                "localhost:7878"
            ]
        );
    }
}
