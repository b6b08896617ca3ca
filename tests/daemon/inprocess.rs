//! The daemon driven in the test process on tokio's paused clock
//! (`daemon::serve` on a real socket in a temp dir): the timeout and
//! deadline logic of the pending table, grants' TTLs (on a daemon clock
//! tokio's moves) and the shedding of peers without a first frame, tested
//! by moving the clock, not by waiting for it, and with no wall-clock
//! assertion. The real binaries'
//! smoke tests of the same paths stay in `tests/cli/clients.rs`.

use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use hookd::client::{connect_async, AsyncConnection};
use hookd::daemon::{self, RulesSource, ServeOptions, Shared};
use hookd::protocol::log::{LogRecord, LoggedDecision};
use hookd::protocol::{Reply, DEFAULT_MAX_FRAME};
use serde_json::{json, Value};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A daemon serving a temp socket inside this test's runtime.
struct InProcess {
    dir: tempfile::TempDir,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    served: JoinHandle<anyhow::Result<()>>,
}

impl InProcess {
    fn start(config: &str) -> InProcess {
        let dir = tempfile::tempdir().unwrap();
        // The minimal profile: these tests are about the socket and the
        // clock, not the policy, and compiling the standard profile's
        // regexes in a debug build takes real time (about a second) that
        // a paused clock turns into minutes.
        let rules = dir.path().join("rules.toml");
        std::fs::write(&rules, hookd::rules::MINIMAL_TOML).unwrap();
        let options = ServeOptions {
            socket: dir.path().join("hookd.sock"),
            rules: RulesSource::File(rules),
            log: dir.path().join("events.jsonl"),
            fail_closed: Default::default(),
            permissive: false,
            max_frame: DEFAULT_MAX_FRAME,
            config: hookd::config::Config::parse(config, Path::new("config.toml")).unwrap(),
            config_file: None,
            config_seen: None,
            adapter_dir: dir.path().join("adapter"),
            grants_file: Some(dir.path().join("grants.json")),
            user_rules: None,
            watch: Default::default(),
            clock: hookd::daemon::clock::Clock::tokio(),
        };
        let listener = tokio::net::UnixListener::bind(&options.socket).unwrap();
        let shared = Arc::new(Shared::new(
            &options,
            daemon::load_rules(&options.rules).unwrap(),
            options.config.redactor().unwrap(),
            options.socket.clone(),
            64,
            Arc::new(AtomicU64::new(0)),
        ));
        let shutdown = CancellationToken::new();
        let served = tokio::spawn(daemon::serve(listener, shared.clone(), shutdown.clone()));
        InProcess {
            dir,
            shared,
            shutdown,
            served,
        }
    }

    async fn client(&self, name: &str) -> AsyncConnection {
        connect_async(&self.socket(), name, DEFAULT_MAX_FRAME)
            .await
            .unwrap()
    }

    fn socket(&self) -> std::path::PathBuf {
        self.dir.path().join("hookd.sock")
    }

    /// Stops the daemon and returns the decisions it logged.
    async fn stop(self) -> Vec<LoggedDecision> {
        self.shutdown.cancel();
        self.served.await.unwrap().unwrap();
        self.shared.log.close();
        let text = std::fs::read_to_string(self.shared.log.path()).unwrap_or_default();
        text.lines()
            .filter_map(|l| match LogRecord::parse(l.as_bytes()) {
                Ok(LogRecord::Decision(d)) => Some(d),
                _ => None,
            })
            .collect()
    }
}

/// A daemon's config under which every hook the rules leave undecided
/// waits for a client's decision, with no timeout.
const WAIT_FOR_A_CLIENT: &str = "[decisions]\nroute_undecided = true\ntimeout = \"never\"\n";

/// A forwarder's deadline no test here reaches.
const A_DAY: Duration = Duration::from_secs(24 * 3600);

async fn send(conn: &mut AsyncConnection, frame: Value) {
    conn.send(&frame).await.unwrap();
}

async fn recv(conn: &mut AsyncConnection) -> Reply {
    let line = conn.next().await.expect("a frame").unwrap();
    serde_json::from_slice(&line).unwrap()
}

/// A subscriber that receives pending events.
async fn decider(d: &InProcess) -> AsyncConnection {
    let mut c = d.client("decider").await;
    send(
        &mut c,
        json!({"type": "subscribe", "req": "s", "filter": {"pending_only": true}}),
    )
    .await;
    assert!(matches!(recv(&mut c).await, Reply::Ok(_)));
    c
}

/// A PreToolUse hook for `Bash(ls)` with the forwarder's deadline.
fn hook(deadline: Duration) -> Value {
    json!({"type": "hook", "id": "h", "deadline_ms": deadline.as_millis() as u64,
           "input": {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/tmp",
                     "tool_name": "Bash", "tool_input": {"command": "ls"}}})
}

async fn next_pending(c: &mut AsyncConnection) -> Value {
    loop {
        if let Reply::Event(push) = recv(c).await {
            if push.pending {
                return push.event;
            }
        }
    }
}

/// Sends client `c`'s decision `verdict` on pending `event` (request `d`),
/// its `ok` left unread.
async fn decide(c: &mut AsyncConnection, event: &Value, verdict: &str) {
    send(
        c,
        json!({"type": "decide", "req": "d", "event_id": event["id"], "verdict": verdict}),
    )
    .await;
}

/// Denies pending `event` as client `c` (a `decider`) and waits for the
/// daemon's `ok`, passing the pushed frames before it.
async fn deny(c: &mut AsyncConnection, event: &Value) {
    decide(c, event, "deny").await;
    loop {
        match recv(c).await {
            Reply::Ok(ok) if ok.req == "d" => return,
            Reply::Error(e) => panic!("the decision was refused: {e:?}"),
            _ => {}
        }
    }
}

/// The pending timeout applies after exactly the configured time: not a
/// moment before (the hook is still pending just short of it), and the
/// fallback is logged with source `timeout`.
#[tokio::test(start_paused = true)]
async fn a_pending_event_times_out_after_its_timeout() {
    let d = InProcess::start("[decisions]\nroute_undecided = true\ntimeout = 30\n");
    let mut c = decider(&d).await;
    let mut forwarder = d.client("forwarder-like").await;
    let sent = tokio::time::Instant::now();
    send(&mut forwarder, hook(Duration::from_secs(3600))).await;
    next_pending(&mut c).await;
    tokio::time::advance(Duration::from_millis(29_900)).await;
    assert_eq!(d.shared.hub.pending_count(), 1, "timed out early");
    tokio::time::advance(Duration::from_millis(200)).await;
    let Reply::HookResult(result) = recv(&mut forwarder).await else {
        panic!("no hook_result")
    };
    // On the paused clock: the answer came at the timeout, not later.
    assert!(
        sent.elapsed() < Duration::from_secs(31),
        "answered at {:?}",
        sent.elapsed()
    );
    assert_eq!(result.exit_code, 0);
    assert!(result.stdout.is_empty(), "undecided → no opinion");
    assert_eq!(d.shared.hub.pending_count(), 0);
    drop((c, forwarder));
    let decisions = d.stop().await;
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].decision.source.to_string(), "timeout");
}

/// A `never` timeout holds the event for as long as the hook's deadline
/// allows (an hour of the paused clock here), until a client decides.
#[tokio::test(start_paused = true)]
async fn a_never_timeout_is_held_until_decided() {
    let d = InProcess::start(
        "[decisions]\nroute_undecided = true\ntimeout = 0.2\n[decisions.timeouts]\nPreToolUse = \"never\"\n",
    );
    let mut c = decider(&d).await;
    let mut forwarder = d.client("forwarder-like").await;
    send(&mut forwarder, hook(A_DAY)).await;
    let event = next_pending(&mut c).await;
    tokio::time::advance(Duration::from_secs(3600)).await;
    assert_eq!(d.shared.hub.pending_count(), 1, "a never timeout expired");
    decide(&mut c, &event, "allow").await;
    let Reply::HookResult(result) = recv(&mut forwarder).await else {
        panic!("no hook_result")
    };
    let out: Value = serde_json::from_str(&result.stdout).unwrap();
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "allow");
    drop((c, forwarder));
    let decisions = d.stop().await;
    assert_eq!(decisions[0].decision.source.to_string(), "client:decider");
}

/// The daemon answers before the forwarder's deadline however long the
/// pending timeout: with `never`, the hook gets its fallback just before
/// the deadline, not after it.
#[tokio::test(start_paused = true)]
async fn a_pending_event_is_answered_before_the_forwarders_deadline() {
    let d = InProcess::start(WAIT_FOR_A_CLIENT);
    let mut c = decider(&d).await;
    let mut forwarder = d.client("forwarder-like").await;
    let deadline = Duration::from_secs(600);
    send(&mut forwarder, hook(deadline)).await;
    next_pending(&mut c).await;
    let sent = tokio::time::Instant::now();
    let Reply::HookResult(result) = recv(&mut forwarder).await else {
        panic!("no hook_result")
    };
    let answered = sent.elapsed();
    assert!(
        answered < deadline,
        "answered after the deadline: {answered:?}"
    );
    assert!(
        answered > deadline / 2,
        "gave up long before the deadline: {answered:?}"
    );
    assert_eq!(result.exit_code, 0);
    drop((c, forwarder));
    let decisions = d.stop().await;
    assert_eq!(decisions[0].decision.source.to_string(), "timeout");
}

/// A daemon that stops answers a forwarder's pending hook at once with
/// its fallback (the pending table ends every waiting event: the hook
/// does not watch the shutdown itself), not at its deadline.
#[tokio::test(start_paused = true)]
async fn a_forwarders_pending_hook_gets_its_fallback_when_the_daemon_stops() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let d = InProcess::start(WAIT_FOR_A_CLIENT);
    let mut c = decider(&d).await;
    // A forwarder's connection: the hook is its first and only frame.
    let (read, mut write) = tokio::net::UnixStream::connect(d.socket())
        .await
        .unwrap()
        .into_split();
    let mut frame = serde_json::to_vec(&hook(Duration::from_secs(600))).unwrap();
    frame.push(b'\n');
    write.write_all(&frame).await.unwrap();
    next_pending(&mut c).await;
    let stopping = tokio::time::Instant::now();
    d.shutdown.cancel();
    let mut reply = String::new();
    tokio::io::BufReader::new(read)
        .read_line(&mut reply)
        .await
        .unwrap();
    let Reply::HookResult(result) = serde_json::from_str(&reply).unwrap() else {
        panic!("no hook_result: {reply}")
    };
    assert!(
        stopping.elapsed() < Duration::from_secs(1),
        "answered at {:?} of the paused clock, not at the shutdown",
        stopping.elapsed()
    );
    assert_eq!(result.exit_code, 0);
    assert!(result.stdout.is_empty(), "undecided → no opinion");
    drop((c, write));
    let decisions = d.stop().await;
    assert_eq!(decisions.len(), 1);
    assert_eq!(decisions[0].decision.source.to_string(), "fallback");
}

/// Nobody answering in time: the hook gets the fallback at the pending
/// timeout, and a decision that comes later is refused as already decided,
/// naming the timeout.
#[tokio::test(start_paused = true)]
async fn nobody_answering_in_time_applies_the_fallback() {
    let d = InProcess::start("[decisions]\nroute_undecided = true\ntimeout = 0.4\n");
    let mut c = decider(&d).await;
    let mut forwarder = d.client("forwarder-like").await;
    let sent = tokio::time::Instant::now();
    send(&mut forwarder, hook(Duration::from_secs(10))).await;
    let event = next_pending(&mut c).await;
    let Reply::HookResult(result) = recv(&mut forwarder).await else {
        panic!("no hook_result")
    };
    // Not before the timeout, on the paused clock (which also jumps ahead
    // while the daemon waits on its blocking threads, so "how long after"
    // is not pinned here; `a_pending_event_times_out_after_its_timeout`
    // steps the clock by hand).
    assert!(
        sent.elapsed() >= Duration::from_millis(400),
        "answered after {:?} of the paused clock",
        sent.elapsed()
    );
    assert!(result.stdout.is_empty(), "undecided → no opinion");
    send(
        &mut c,
        json!({"type": "decide", "req": "late", "event_id": event["id"], "verdict": "allow"}),
    )
    .await;
    let late = loop {
        match recv(&mut c).await {
            Reply::Error(e) => break e,
            Reply::Event(_) | Reply::Decision(_) => continue,
            other => panic!("expected the late decide's error, got {other:?}"),
        }
    };
    assert_eq!(late.code.to_string(), "already_decided", "{late:?}");
    assert!(late.message.contains("timeout"), "{late:?}");
    drop((c, forwarder));
    let decisions = d.stop().await;
    assert_eq!(decisions[0].decision.source.to_string(), "timeout");
}

/// Keeps tokio's paused clock from jumping ahead on its own while held:
/// a runtime with nothing to do advances the paused clock to its next
/// timer, and a test waiting on a socket has, for an instant, nothing to
/// do. A running blocking task stops that; `advance` still moves time.
///
/// While it is held no timeout can fire, so a reply that never comes
/// would hang the test (and CI) for good: a watchdog on a plain thread
/// (not one of the runtime's, whose drop would wait for it) ends the test
/// binary with the test's name after [`HeldClock::LIMIT`] of real time.
struct HeldClock {
    _release: std::sync::mpsc::Sender<()>,
    _watchdog: std::sync::mpsc::Sender<()>,
}

impl HeldClock {
    /// Far beyond what any test here takes (milliseconds), on a busy
    /// machine too.
    const LIMIT: Duration = Duration::from_secs(120);

    fn hold() -> HeldClock {
        let (release, released) = std::sync::mpsc::channel::<()>();
        tokio::task::spawn_blocking(move || {
            let _ = released.recv();
        });
        let (watchdog, dropped) = std::sync::mpsc::channel::<()>();
        let test = std::thread::current()
            .name()
            .unwrap_or("a test")
            .to_string();
        std::thread::spawn(move || {
            if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                dropped.recv_timeout(Self::LIMIT)
            {
                // Not `eprintln!`: the test harness captures that, and the
                // capture is lost with the process.
                let _ = std::io::Write::write_fmt(
                    &mut std::io::stderr(),
                    format_args!(
                        "{test}: still running after {:?} of real time on a held paused clock, \
                     where no timeout can fire (a reply that never came?): failing the run\n",
                        Self::LIMIT
                    ),
                );
                std::process::exit(101);
            }
        });
        HeldClock {
            _release: release,
            _watchdog: watchdog,
        }
    }
}

/// The permission decision in a hook's result (`None`: no opinion).
fn permission(result: &hookd::protocol::HookResult) -> Option<String> {
    if result.stdout.is_empty() {
        return None;
    }
    let out: Value = serde_json::from_str(&result.stdout).unwrap();
    out["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .map(str::to_owned)
}

/// Sends one hook on a connection of its own and returns its result,
/// failing if it waits for a person instead (`c` subscribes to pending
/// events).
async fn answered_at_once(d: &InProcess, c: &mut AsyncConnection) -> hookd::protocol::HookResult {
    let mut forwarder = d.client("forwarder-like").await;
    send(&mut forwarder, hook(A_DAY)).await;
    tokio::select! {
        reply = recv(&mut forwarder) => match reply {
            Reply::HookResult(result) => result,
            other => panic!("expected a hook_result, got {other:?}"),
        },
        event = next_pending(c) => panic!("the hook waits for a person: {event}"),
    }
}

/// A grant's TTL ends it on time, on the daemon's wall clock (grants keep
/// `expires_at` across restarts): it answers the session's calls until
/// just before `ttl_s`, subscribers hear that it expired right after, and
/// the next call waits for a person again.
#[tokio::test(start_paused = true)]
async fn a_session_grant_ends_with_its_ttl() {
    let _held = HeldClock::hold();
    let d = InProcess::start(WAIT_FOR_A_CLIENT);
    let mut c = d.client("approve").await;
    send(
        &mut c,
        json!({"type": "subscribe", "req": "s", "filter": {}}),
    )
    .await;
    assert!(matches!(recv(&mut c).await, Reply::Ok(_)));
    let first = hook_in_background(&d);
    let event = next_pending(&mut c).await;
    send(
        &mut c,
        json!({"type": "decide", "req": "d", "event_id": event["id"], "verdict": "allow",
               "remember": "session", "ttl_s": 3600}),
    )
    .await;
    let grant = loop {
        match recv(&mut c).await {
            Reply::Ok(ok) if ok.req == "d" => break ok.result.expect("the grant"),
            Reply::Error(e) => panic!("decide refused: {e:?}"),
            _ => continue,
        }
    };
    let Reply::HookResult(result) = first.await.unwrap() else {
        panic!("no hook_result")
    };
    assert_eq!(permission(&result).as_deref(), Some("allow"));

    // A second short of its TTL, the grant answers.
    tokio::time::advance(Duration::from_secs(3599)).await;
    let granted = answered_at_once(&d, &mut c).await;
    assert_eq!(
        permission(&granted).as_deref(),
        Some("allow"),
        "{granted:?}"
    );
    assert_eq!(d.shared.hub.pending_count(), 0, "the grant answered");

    // At its TTL (and the sweep's slack) it expires, and says so.
    tokio::time::advance(Duration::from_secs(1) + hookd::daemon::grants::EXPIRY_SLACK).await;
    let expired = loop {
        match recv(&mut c).await {
            Reply::Grant(push) if push.change == hookd::protocol::GrantChange::Expired => {
                break push
            }
            _ => continue,
        }
    };
    assert_eq!(serde_json::to_value(&expired.grant).unwrap(), grant);

    // The next call waits for a person again.
    let again = hook_in_background(&d);
    let event = next_pending(&mut c).await;
    send(
        &mut c,
        json!({"type": "decide", "req": "d2", "event_id": event["id"], "verdict": "deny"}),
    )
    .await;
    let Reply::HookResult(result) = again.await.unwrap() else {
        panic!("no hook_result")
    };
    assert_eq!(permission(&result).as_deref(), Some("deny"));
    drop(c);
    let decisions = d.stop().await;
    let sources: Vec<String> = decisions
        .iter()
        .map(|d| d.decision.source.to_string())
        .collect();
    let by_grant = format!("grant:{}", grant["id"].as_str().unwrap());
    assert_eq!(sources, ["client:approve", &by_grant, "client:approve"]);
}

/// Opens `n` connections that each send `first_bytes` and nothing more,
/// and waits until the daemon has accepted them all.
async fn peers_without_a_frame(
    d: &InProcess,
    n: usize,
    first_bytes: &[u8],
) -> Vec<tokio::net::UnixStream> {
    use tokio::io::AsyncWriteExt;
    let mut peers = Vec::new();
    for _ in 0..n {
        let mut peer = tokio::net::UnixStream::connect(d.socket()).await.unwrap();
        peer.write_all(first_bytes).await.unwrap();
        peers.push(peer);
    }
    while d.shared.admission.open() < n {
        tokio::task::yield_now().await;
    }
    peers
}

/// Lets the daemon's tasks run without moving the (held) clock.
async fn settle() {
    for _ in 0..200 {
        tokio::task::yield_now().await;
    }
}

/// A hook sent on a connection of its own, in the background.
fn hook_in_background(d: &InProcess) -> JoinHandle<Reply> {
    let socket = d.socket();
    tokio::spawn(async move {
        let mut forwarder = connect_async(&socket, "forwarder-like", DEFAULT_MAX_FRAME)
            .await
            .unwrap();
        send(&mut forwarder, hook(A_DAY)).await;
        recv(&mut forwarder).await
    })
}

/// With every connection slot taken by peers that sent `first_bytes` and
/// nothing more, none is disconnected 100 ms before `after`, and a hook
/// waiting in the kernel's backlog is answered once they have been.
async fn shed_on_time(first_bytes: &[u8], after: Duration) {
    use hookd::daemon::limits::SHED_AFTER;
    let _held = HeldClock::hold();
    let d = InProcess::start("");
    let cap = d.shared.admission.cap();
    let _peers = peers_without_a_frame(&d, cap, first_bytes).await;
    let waiting = hook_in_background(&d);
    tokio::time::advance(after - Duration::from_millis(100)).await;
    settle().await;
    assert_eq!(d.shared.admission.shed_count(), 0, "shed early");
    assert!(!waiting.is_finished(), "answered with every slot taken");
    // The accept loop asks again every SHED_AFTER / 2 while it waits.
    tokio::time::advance(SHED_AFTER).await;
    let Reply::HookResult(result) = waiting.await.unwrap() else {
        panic!("no hook_result")
    };
    assert_eq!(result.exit_code, 0);
    assert!(d.shared.admission.shed_count() > 0);
}

/// Peers that have sent nothing give their slots up after `SHED_AFTER`.
#[tokio::test(start_paused = true)]
async fn silent_peers_give_their_slots_up_after_shed_after() {
    shed_on_time(b"", hookd::daemon::limits::SHED_AFTER).await;
}

/// Peers stuck inside their first frame are given `SHED_STALLED_AFTER`,
/// ten times a silent peer's time.
#[tokio::test(start_paused = true)]
async fn stalled_peers_give_their_slots_up_after_shed_stalled_after() {
    shed_on_time(b"{", hookd::daemon::limits::SHED_STALLED_AFTER).await;
}

/// A client that pipelines hooks and never reads the answers is held to
/// `HOOKS_IN_FLIGHT` of them: once that many wait, the daemon stops
/// reading its connection, and an hour later it still holds that many.
#[tokio::test(start_paused = true)]
async fn a_pipelining_client_is_held_to_its_hooks_in_flight() {
    use hookd::daemon::connection::HOOKS_IN_FLIGHT;
    let _held = HeldClock::hold();
    let d = InProcess::start(WAIT_FOR_A_CLIENT);
    let _decider = decider(&d).await;
    let mut flood = d.client("flood").await;
    // More than that many, written by a task of its own (they fit in the
    // socket's buffer: the daemon could read them all).
    let writer = tokio::spawn(async move {
        for i in 0..HOOKS_IN_FLIGHT + 36 {
            let mut frame = hook(A_DAY);
            frame["id"] = json!(format!("h{i}"));
            send(&mut flood, frame).await;
        }
        flood
    });
    while d.shared.hub.pending_count() < HOOKS_IN_FLIGHT {
        tokio::task::yield_now().await;
    }
    settle().await;
    assert_eq!(d.shared.hub.pending_count(), HOOKS_IN_FLIGHT);
    tokio::time::advance(Duration::from_secs(3600)).await;
    settle().await;
    assert_eq!(
        d.shared.hub.pending_count(),
        HOOKS_IN_FLIGHT,
        "more read while that many waited"
    );
    writer.abort();
}

/// A session's hooks are answered as soon as each is decided: one that
/// waits for a client goes on by itself while the ones sent after it,
/// which the rules answer at once, are answered in the loop that reads
/// them, and written once there is nothing left to read (the client sends
/// nothing more here: a reply kept for a later write would never come).
/// The one that waited is answered when a client decides.
#[tokio::test(start_paused = true)]
async fn hooks_answered_at_once_pass_one_that_waits() {
    let _held = HeldClock::hold();
    let d = InProcess::start(WAIT_FOR_A_CLIENT);
    let mut c = decider(&d).await;
    let mut session = d.client("pipeliner").await;
    let at_once = |id: String| {
        // Observe-only: answered at once, whatever the routing.
        let mut frame = hook(A_DAY);
        frame["id"] = json!(id);
        frame["input"] = json!({"hook_event_name": "Notification", "session_id": "s",
                                "cwd": "/tmp", "message": "waiting for input"});
        frame
    };
    // The first hook of a project waits for its rules file to be looked
    // for (off the async workers): after it, the project's hooks are
    // answered without waiting on anything.
    send(&mut session, at_once("first".into())).await;
    assert!(matches!(recv(&mut session).await, Reply::HookResult(_)));
    let mut waits = hook(A_DAY);
    waits["id"] = json!("waits");
    send(&mut session, waits).await;
    for i in 0..5 {
        send(&mut session, at_once(format!("at-once-{i}"))).await;
    }
    for i in 0..5 {
        // A reply left unsent is never coming: the test waits here until
        // the `HeldClock` watchdog ends it.
        match recv(&mut session).await {
            Reply::HookResult(result) => assert_eq!(result.id, format!("at-once-{i}")),
            other => panic!("expected a hook_result, got {other:?}"),
        }
    }
    let event = next_pending(&mut c).await;
    assert_eq!(d.shared.hub.pending_count(), 1);
    decide(&mut c, &event, "allow").await;
    let Reply::HookResult(result) = recv(&mut session).await else {
        panic!("no hook_result")
    };
    assert_eq!(result.id, "waits");
    let out: Value = serde_json::from_str(&result.stdout).unwrap();
    assert_eq!(out["hookSpecificOutput"]["permissionDecision"], "allow");
    drop((c, session));
    let decisions = d.stop().await;
    assert_eq!(decisions.len(), 7);
}

/// A session that ends while one of its hooks waits (here: it sent a frame
/// that is not JSON, which closes it) leaves that hook waiting: another
/// client still decides it, and the decision is logged as that client's.
/// The waiting hook was the session's to poll; it goes on without it.
#[tokio::test(start_paused = true)]
async fn a_hook_waiting_when_its_session_ends_is_still_decided() {
    use tokio::io::AsyncWriteExt;
    let _held = HeldClock::hold();
    let d = InProcess::start(WAIT_FOR_A_CLIENT);
    let mut c = decider(&d).await;
    let mut session = d.client("leaves-early").await;
    send(&mut session, hook(A_DAY)).await;
    let event = next_pending(&mut c).await;
    session.get_mut().write_all(b"not json\n").await.unwrap();
    match recv(&mut session).await {
        Reply::Error(e) => assert_eq!(e.code, hookd::protocol::ErrorCode::InvalidJson, "{e:?}"),
        other => panic!("expected an error frame, got {other:?}"),
    }
    assert!(session.next().await.is_none(), "the session stayed open");
    settle().await;
    assert_eq!(
        d.shared.hub.pending_count(),
        1,
        "the waiting hook went with its session"
    );
    deny(&mut c, &event).await;
    settle().await;
    drop(c);
    let decisions = d.stop().await;
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0].decision.source.to_string(), "client:decider");
}

/// A session held up writing to a peer that stopped reading (its socket
/// full of pushed events) does not hold up its waiting hook: decided by
/// another client, the hook is recorded at once, while the peer still
/// reads nothing.
#[tokio::test(start_paused = true)]
async fn a_waiting_hook_is_logged_when_decided_while_its_session_cannot_write() {
    let _held = HeldClock::hold();
    let d = InProcess::start(WAIT_FOR_A_CLIENT);
    let mut c = decider(&d).await;
    let mut slow = d.client("stops-reading").await;
    send(
        &mut slow,
        json!({"type": "subscribe", "req": "s", "filter": {}}),
    )
    .await;
    assert!(matches!(recv(&mut slow).await, Reply::Ok(_)));
    send(&mut slow, hook(A_DAY)).await;
    let event = next_pending(&mut c).await;
    // From here on `slow` reads nothing. Events answered at once, each
    // pushed to it, fill its socket: its session waits on the write.
    let mut flood = d.client("flood").await;
    let padding = "x".repeat(2048);
    for i in 0..2_000 {
        let mut frame = hook(A_DAY);
        frame["id"] = json!(format!("n{i}"));
        frame["input"] = json!({"hook_event_name": "Notification", "session_id": "s",
                                "cwd": "/tmp", "message": padding});
        send(&mut flood, frame).await;
        assert!(matches!(recv(&mut flood).await, Reply::HookResult(_)));
    }
    deny(&mut c, &event).await;
    let id: uuid::Uuid = event["id"].as_str().unwrap().parse().unwrap();
    let log = d.shared.log.path().to_path_buf();
    let mut logged = false;
    for _ in 0..100 {
        settle().await;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        logged = text.lines().any(|l| {
            matches!(LogRecord::parse(l.as_bytes()),
                     Ok(LogRecord::Decision(d)) if d.decision.event_id == id)
        });
        if logged {
            break;
        }
        // Real time, for the log's writer thread (the clock is held).
        tokio::task::spawn_blocking(|| std::thread::sleep(Duration::from_millis(50)))
            .await
            .unwrap();
    }
    assert!(
        logged,
        "the decision was not logged while its session waited to write"
    );
    drop((c, slow, flood));
    let decisions = d.stop().await;
    let ours = decisions
        .iter()
        .find(|d| d.decision.event_id == id)
        .unwrap();
    assert_eq!(ours.decision.source.to_string(), "client:decider");
}

/// A reload frees the generation it replaces once no hook is judging under
/// it: nothing in the serving daemon keeps an old rule set (the start-up
/// generation was once held by `serve` itself for as long as it served,
/// 1.1 MiB for sixty regex rules).
#[tokio::test(start_paused = true)]
async fn a_replaced_rules_generation_is_freed() {
    let _held = HeldClock::hold();
    let d = InProcess::start("");
    // Served: the accept loop is running, so `serve`'s start-up is over.
    drop(d.client("probe").await);
    let first = Arc::downgrade(&d.shared.controller.rules());
    daemon::reload(&d.shared);
    assert_eq!(d.shared.controller.rules().generation(), 2);
    assert!(
        first.upgrade().is_none(),
        "the replaced generation is still held ({} strong references)",
        first.strong_count()
    );
    d.stop().await;
}
