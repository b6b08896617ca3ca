//! `hookd team dashboard`: the team dashboard, a web page for approvers
//! (docs/team.md#the-team-dashboard). A process of its own, not a route of
//! the daemon's HTTP face: it reads and answers **as the approver** whose
//! `[team]` it connects with, because row-level security lets a machine's
//! role read only its own rows, and the database attributes an answer to
//! the role that gave it (`approver = current_user`). A daemon's face
//! holds its machine's role and could do neither.
//!
//! The security model is the face's, through its code: every request
//! passes `crate::http::check_request` (Host against DNS rebinding, a
//! non-GET's Origin, the body cap: [`MAX_BODY_BYTES`], fixed), and every
//! `/api/` route `crate::http::check_bearer` with `hookd http token`'s
//! file. Connections are served by the face's
//! `crate::http::serve_connections`: at most `[http] max_connections` at
//! once (the excess closed at accept), a deadline for each request's head
//! (a slow or idle client is dropped) and one for the whole connection. The page
//! itself (`GET /`) is a shell with no data in it: its script takes the
//! token from the URL's fragment (`#token=…`, never sent to a server or
//! in a Referer), keeps it in the tab's `sessionStorage` and sends it as
//! `Authorization: Bearer` with each `fetch`. A page of another origin can
//! neither read the answers (no CORS) nor post one (no token, and its
//! Origin is refused).
//!
//! Routes: `GET /api/fleet`, `GET /api/asks` (the open team asks, as
//! `hookd team pending --json`), `GET /api/asks/changes?after=N` (the
//! same, as soon as they differ from generation `N`: a long poll, see
//! below), `GET /api/decisions?machine=&agent=&rule=&verdict=&limit=`,
//! `POST /api/asks/{id}/answer` with `{"verdict": "allow"|"deny",
//! "reason": …}` (the same database path as `hookd team answer`), and
//! `GET /api/me` (the role answers are attributed to).
//!
//! **How the page hears of asks.** A task (`follow_asks`) holds an
//! approver's link (`hookd_team::asks_link`, as the Team pane does): a
//! connection of its own that LISTENs on `hookd_ask_published` (migration
//! 0101: an ask published, answered, decided or closed) and reads the open
//! asks back at once on each announcement, under the approver's grants,
//! and on a slow poll as the fallback (10 s, `HOOKD_TEAM_ASKS_POLL`); a
//! lost connection is made again and the asks read afresh, with backoff
//! while the database is away.
//! Each read that changes what an approver sees is a new generation, and
//! `/api/asks/changes?after=N` answers as soon as there is one past `N`
//! (else after [`LONG_POLL`] with the same), so the page shows a new ask
//! as soon as the database commits it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use hookd_team::approvals::{AnswerError, OpenAsk};
use hookd_team::asks_link::Wake;
use hookd_team::connect::Reconnecting;
use hookd_team::dashboard::Search;
use hookd_team::ConnectTarget;
use serde::Deserialize;
use serde_json::json;

use crate::http::config::PublicUrl;
use crate::http::{allowed_hosts, check_bearer, check_request, token, too_large};

/// The body cap (an answer is a verdict and a reason), fixed: `[http]
/// max_body_bytes` is the daemon's face's, whose hooks carry tool inputs.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// What a 413 names as setting [`MAX_BODY_BYTES`].
const BODY_CAP: &str = "the team dashboard's fixed cap: an answer is a verdict and a reason";

/// How long one request may wait for the database (connecting included).
const DB_DEADLINE: Duration = Duration::from_secs(10);

/// The longest `/api/asks/changes` waits for a new generation.
pub const LONG_POLL: Duration = Duration::from_secs(15);

/// A dashboard bound and connected, not serving yet.
pub struct Dashboard {
    listener: std::net::TcpListener,
    /// The address bound (a `:0` port resolved).
    pub addr: SocketAddr,
    /// The role it reads and answers as.
    pub role: String,
    /// Where the database is (no password).
    pub database: String,
    /// Connections served at once (`[http] max_connections`).
    pub max_connections: usize,
    state: Arc<Dash>,
}

struct Dash {
    db: tokio::sync::Mutex<Reconnecting>,
    /// The open asks as [`follow_asks`] last read them.
    asks: tokio::sync::watch::Sender<AsksView>,
    target: ConnectTarget,
    token_file: PathBuf,
    hosts: Vec<String>,
    name: String,
    role: String,
}

/// Checks that `target` connects as an approver, makes sure the token in
/// `token_file` exists and binds `listen`. `allow_remote`: a listen address
/// other than loopback is refused without it. `max_connections`: served at
/// once, the excess closed at accept.
pub async fn prepare(
    target: ConnectTarget,
    listen: SocketAddr,
    token_file: PathBuf,
    allow_remote: bool,
    max_connections: usize,
) -> anyhow::Result<Dashboard> {
    if !listen.ip().is_loopback() && !allow_remote {
        anyhow::bail!(
            "--listen {listen} is reachable from other machines: the dashboard has no TLS; \
             listen on 127.0.0.1 (reach it through an SSH tunnel or a tailnet), or pass \
             --allow-remote to mean it"
        );
    }
    token::ensure(&token_file).context("the bearer token file")?;
    let database = target.describe();
    let client = hookd_team::connect::connect(&target)
        .await
        .with_context(|| format!("connecting to {database}"))?;
    let (role, approver) = hookd_team::dashboard::whoami(&client)
        .await
        .context("asking the database who this role is (has `hookd team init` run?)")?;
    if !approver {
        anyhow::bail!(
            "role {role} is not an approver (a member of hookd_approver): the dashboard reads the \
             whole fleet and answers asks, which only an approver's role may. Give `--config` a \
             config.toml whose [team] connects as an approver (`hookd team init --approver-role \
             NAME` makes one)"
        );
    }
    drop(client);
    let listener = std::net::TcpListener::bind(listen)
        .with_context(|| format!("binding {listen} (`--listen`)"))?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let public = PublicUrl::parse(&format!("http://{addr}"))
        .map_err(|e| anyhow::anyhow!("--listen: {e}"))?;
    let state = Arc::new(Dash {
        db: tokio::sync::Mutex::new(Reconnecting::new(target.clone())),
        asks: tokio::sync::watch::Sender::new(AsksView::default()),
        target,
        token_file,
        hosts: allowed_hosts(addr, &public),
        name: public.authority.clone(),
        role: role.clone(),
    });
    Ok(Dashboard {
        listener,
        addr,
        role,
        database,
        max_connections: max_connections.max(1),
        state,
    })
}

impl Dashboard {
    /// The page's address carrying `token` in its fragment.
    pub fn url(&self, token: &str) -> String {
        format!("http://{}/#token={token}", self.addr)
    }

    /// Serves until `shutdown` resolves, with the HTTP face's connection
    /// cap and deadlines.
    pub async fn serve(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let listener = tokio::net::TcpListener::from_std(self.listener)?;
        let follower = tokio::spawn(follow_asks(
            self.state.target.clone(),
            self.state.asks.clone(),
            hookd_team::approvals::open_asks_poll(),
        ));
        let cancel = tokio_util::sync::CancellationToken::new();
        let on_shutdown = cancel.clone();
        tokio::spawn(async move {
            shutdown.await;
            on_shutdown.cancel();
        });
        let refused = AtomicU64::new(0);
        let limits = crate::http::Limits {
            name: "the team dashboard",
            max_connections: self.max_connections,
            refused: &refused,
        };
        crate::http::serve_connections(listener, router(self.state), limits, cancel).await;
        follower.abort();
        Ok(())
    }
}

/// The open asks as the dashboard's follower last read them.
#[derive(Debug, Clone, Default)]
struct AsksView {
    /// Bumped by each read that changed `asks` or `error`.
    generation: u64,
    asks: Vec<OpenAsk>,
    error: Option<String>,
}

/// What an approver sees of an ask change (not its countdown).
fn same_asks(a: &[OpenAsk], b: &[OpenAsk]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(a, b)| a.id == b.id && a.allowed_by == b.allowed_by)
}

/// Keeps `view` current through an approver's link
/// ([`hookd_team::asks_link::AsksLink`], bounded by [`DB_DEADLINE`]): the
/// open asks are read at once on each announcement on
/// `hookd_ask_published`, every `poll` as the fallback, at once when the
/// connection is found lost (made again, and the asks read afresh: what
/// changed meanwhile was announced to nobody) and with backoff while the
/// database is away. A failure (a lost connection among them) is a
/// generation when it says something new.
async fn follow_asks(
    target: ConnectTarget,
    view: tokio::sync::watch::Sender<AsksView>,
    poll: Duration,
) {
    let fail = |error: String| {
        view.send_if_modified(|v| {
            if v.error.as_deref() == Some(error.as_str()) {
                return false;
            }
            v.error = Some(error);
            v.generation += 1;
            true
        });
    };
    let mut link = hookd_team::asks_link::AsksLink::new(target, poll, DB_DEADLINE);
    loop {
        if link.changed().await == Wake::Lost {
            fail("the team database connection was lost".into());
        }
        match link.read().await {
            Ok(asks) => {
                view.send_if_modified(|v| {
                    // The first read is a generation even when empty.
                    if v.generation > 0 && v.error.is_none() && same_asks(&v.asks, &asks) {
                        v.asks = asks; // the countdowns, silently
                        return false;
                    }
                    v.asks = asks;
                    v.error = None;
                    v.generation += 1;
                    true
                });
            }
            Err(error) => fail(error),
        }
    }
}

fn router(state: Arc<Dash>) -> Router {
    let api = Router::new()
        .route("/api/me", get(me))
        .route("/api/fleet", get(fleet))
        .route("/api/asks", get(asks))
        .route("/api/asks/changes", get(asks_changes))
        .route("/api/asks/{id}/answer", post(answer))
        .route("/api/decisions", get(decisions))
        .route_layer(middleware::from_fn_with_state(state.clone(), bearer));
    Router::new()
        .route("/", get(page))
        .merge(api)
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(state)
}

async fn guard(State(state): State<Arc<Dash>>, request: Request, next: Next) -> Response {
    match check_request(
        &state.hosts,
        &state.name,
        "Open it as the address `hookd team dashboard` printed (a tunnel keeps that name)",
        (MAX_BODY_BYTES, BODY_CAP),
        &request,
    ) {
        None => next.run(request).await,
        Some(refused) => refused,
    }
}

async fn bearer(State(state): State<Arc<Dash>>, request: Request, next: Next) -> Response {
    match check_bearer(&state.token_file, request.headers()).await {
        None => {
            let mut response = next.run(request).await;
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, "no-store".parse().expect("a header"));
            response
        }
        Some(refused) => refused,
    }
}

fn failure(status: StatusCode, error: impl std::fmt::Display) -> Response {
    (status, Json(json!({ "error": error.to_string() }))).into_response()
}

/// Runs `query` on the database connection (connecting again if it was
/// lost), within [`DB_DEADLINE`]; a failure drops the connection, so the
/// next request connects afresh.
macro_rules! with_db {
    ($state:expr, |$client:ident| $query:expr) => {{
        let mut db = $state.db.lock().await;
        let result = tokio::time::timeout(DB_DEADLINE, async {
            let $client = db.client().await?;
            $query.await
        })
        .await;
        match result {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => {
                db.failed();
                Err(failure(StatusCode::SERVICE_UNAVAILABLE, e))
            }
            Err(_) => {
                db.failed();
                Err(failure(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the team database did not answer within 10 s",
                ))
            }
        }
    }};
}

async fn me(State(state): State<Arc<Dash>>) -> Response {
    Json(json!({ "role": state.role })).into_response()
}

async fn fleet(State(state): State<Arc<Dash>>) -> Response {
    match with_db!(state, |client| hookd_team::dashboard::fleet(client)) {
        Ok(rows) => Json(rows).into_response(),
        Err(refused) => refused,
    }
}

async fn asks(State(state): State<Arc<Dash>>) -> Response {
    match with_db!(state, |client| hookd_team::approvals::open(client)) {
        Ok(rows) => Json(rows).into_response(),
        Err(refused) => refused,
    }
}

/// `GET /api/asks/changes`'s query.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Changes {
    /// The generation the page has; answered once there is a later one.
    #[serde(default)]
    after: u64,
}

/// The open asks once they differ from generation `after` (or after
/// [`LONG_POLL`]): `{"generation", "asks", "error"}`.
async fn asks_changes(State(state): State<Arc<Dash>>, Form(changes): Form<Changes>) -> Response {
    let mut view = state.asks.subscribe();
    let _ = tokio::time::timeout(LONG_POLL, view.wait_for(|v| v.generation > changes.after)).await;
    let v = view.borrow().clone();
    Json(json!({ "generation": v.generation, "asks": v.asks, "error": v.error })).into_response()
}

async fn decisions(State(state): State<Arc<Dash>>, Form(search): Form<Search>) -> Response {
    if let Some(limit) = search.limit {
        if !(1..=Search::MAX).contains(&limit) {
            return failure(
                StatusCode::BAD_REQUEST,
                format!("limit must be 1 to {}, not {limit}", Search::MAX),
            );
        }
    }
    match with_db!(state, |client| hookd_team::dashboard::decisions(
        client, &search
    )) {
        Ok(rows) => Json(rows).into_response(),
        Err(refused) => refused,
    }
}

/// `POST /api/asks/{id}/answer`'s body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerBody {
    verdict: String,
    #[serde(default)]
    reason: Option<String>,
}

async fn answer(
    State(state): State<Arc<Dash>>,
    Path(id): Path<String>,
    body: Result<Json<AnswerBody>, JsonRejection>,
) -> Response {
    // A body past the cap without a Content-Length (chunked) is cut while
    // read: said as the guard says a declared one.
    let body = match body {
        Ok(Json(body)) => body,
        Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return failure(e.status(), too_large(MAX_BODY_BYTES, BODY_CAP))
        }
        Err(e) => return failure(e.status(), e.body_text()),
    };
    let allow = match body.verdict.as_str() {
        "allow" => true,
        "deny" => false,
        other => {
            return failure(
                StatusCode::BAD_REQUEST,
                format!("verdict must be \"allow\" or \"deny\", not {other:?}"),
            )
        }
    };
    let reason = body
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    let mut db = state.db.lock().await;
    let result = tokio::time::timeout(DB_DEADLINE, async {
        let client = db.client().await.map_err(AnswerError::Db)?;
        hookd_team::approvals::answer(client, &id, allow, reason).await
    })
    .await;
    let error = match result {
        Ok(Ok(answered)) => {
            tracing::info!(ask = %answered.id, verdict = body.verdict, role = %state.role,
                "answered a team ask from the dashboard");
            return Json(answered).into_response();
        }
        Ok(Err(e)) => e,
        Err(_) => {
            db.failed();
            return failure(
                StatusCode::SERVICE_UNAVAILABLE,
                "the team database did not answer within 10 s",
            );
        }
    };
    let status = match &error {
        AnswerError::NotFound(_) => StatusCode::NOT_FOUND,
        AnswerError::Ambiguous(_) | AnswerError::NotOpen { .. } => StatusCode::CONFLICT,
        AnswerError::AlreadyAnswered(_) => StatusCode::CONFLICT,
        AnswerError::Refused(_) => StatusCode::FORBIDDEN,
        AnswerError::Db(_) => {
            db.failed();
            StatusCode::SERVICE_UNAVAILABLE
        }
    };
    failure(status, error)
}

async fn page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; \
                 connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
            ),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        PAGE,
    )
        .into_response()
}

/// The page: no data in it, no external asset; its script builds every
/// element with `textContent` (nothing the agents sent is parsed as HTML).
const PAGE: &str = include_str!("team_dashboard.html");
