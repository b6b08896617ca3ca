//! Team approvals' latency (`HOOKD_BENCH_PHASES=asks`): each simulated
//! daemon is a task with **its own connection as its own machine role**
//! running the daemon's path (`crates/daemon/src/team_approvals.rs`, through
//! the same `hookd_team::approvals` functions): `LISTEN hookd_ask_answered`,
//! publish an ask ([`approvals::publish`]), and on each notification (or
//! the 10 s poll) read the verdict back from `hookd.asks`
//! ([`approvals::outcomes`]), never from the notification. Approvers are
//! tasks with their own connections as approver roles, doing what `hookd
//! approve --team` and the dashboard do: `LISTEN hookd_ask_published`, read
//! the open asks ([`approvals::open`]) on each announcement and answer each
//! with [`approvals::answer`] (allow).
//!
//! Measured per ask: from the daemon's publish to the verdict read back by
//! that daemon. Three runs: a steady rate (each daemon one ask every
//! `HOOKD_BENCH_ASK_EVERY` seconds, default 20, staggered, for
//! `HOOKD_BENCH_ASKS` asks each, default 2), a burst (every daemon's ask at
//! the same instant), and the two-person rule (the steady rate, two
//! approvers, `approvals_required = 2`).
//!
//! `HOOKD_BENCH_READBACK=each` reads back once per notification received,
//! the daemon's path before it looked at the payload (every daemon hears
//! every answer on the one channel); the default, `own`, is today's daemon:
//! a notification naming one of its own open asks reads back (a hint only:
//! the verdict still comes from the table), others are ignored.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hookd_team::approvals::{self, AnswerError, Ask};
use hookd_team::ConnectTarget;
use tokio::sync::{watch, Barrier};

use super::{env, server_cpu_seconds, target};
use crate::support::postgres::Postgres;

/// The daemon's fallback read-back (`team_approvals::POLL_EVERY`).
const POLL_EVERY: Duration = hookd_daemon::team_approvals::POLL_EVERY;

#[derive(Clone, Copy)]
struct Plan {
    name: &'static str,
    /// Asks per daemon.
    asks: usize,
    /// Between a daemon's asks (zero: all at once, one ask each).
    every: Duration,
    approvers: usize,
    required: u32,
}

#[derive(Default)]
struct Counters {
    /// Read-backs (`outcomes` queries) the daemons ran.
    read_backs: AtomicU64,
    /// Notifications the daemons received.
    notes: AtomicU64,
    /// Reads of the open asks the approvers ran.
    approver_reads: AtomicU64,
    /// Answers the approvers gave.
    answers: AtomicU64,
}

pub fn run(pg: &Postgres, runtime: &tokio::runtime::Runtime, daemons: usize, postmaster: u32) {
    let every = Duration::from_secs(env("HOOKD_BENCH_ASK_EVERY", 20) as u64);
    let asks = env("HOOKD_BENCH_ASKS", 2).max(1);
    let each = match std::env::var("HOOKD_BENCH_READBACK").as_deref() {
        Ok("each") => true,
        Ok("own") | Err(_) => false,
        Ok(other) => panic!("HOOKD_BENCH_READBACK: {other:?} is not `each` or `own`"),
    };
    let plans = [
        Plan {
            name: "steady",
            asks,
            every,
            approvers: 1,
            required: 1,
        },
        Plan {
            name: "burst",
            asks: 1,
            every: Duration::ZERO,
            approvers: 1,
            required: 1,
        },
        Plan {
            name: "two-person rule",
            asks,
            every,
            approvers: 2,
            required: 2,
        },
    ];
    println!(
        "team approvals: {daemons} daemons (one LISTEN connection each, as its machine role), \
         read-back on {} notification",
        if each { "every" } else { "its own asks'" }
    );
    for plan in plans {
        let counters = Arc::new(Counters::default());
        let cpu_before = server_cpu_seconds(postmaster);
        let (mut ms, elapsed) = runtime.block_on(one(pg, daemons, plan, each, counters.clone()));
        std::thread::sleep(Duration::from_millis(500));
        let cpu = server_cpu_seconds(postmaster) - cpu_before;
        ms.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let pct = |p: f64| ms[((ms.len() as f64 - 1.0) * p) as usize];
        let n = ms.len() as f64;
        let c = |a: &AtomicU64| a.load(Ordering::Relaxed) as f64;
        if plan.every.is_zero() {
            println!(
                "  {:<16} {} asks at once, {} approver(s), {} approval(s) each",
                plan.name,
                ms.len(),
                plan.approvers,
                plan.required
            );
        } else {
            println!(
                "  {:<16} {} asks ({:.0}/s: each daemon one every {} s), {} approver(s), {} approval(s) each",
                plan.name,
                ms.len(),
                daemons as f64 / plan.every.as_secs_f64(),
                plan.every.as_secs(),
                plan.approvers,
                plan.required
            );
        }
        println!(
            "      ask published → verdict read by its daemon: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            pct(0.5),
            pct(0.99),
            ms[ms.len() - 1]
        );
        println!(
            "      per ask: {:.1} notifications heard by the daemons, {:.1} read-backs, {:.2} approver reads; \
             database CPU {cpu:.1} s ({:.1} ms per ask) in {elapsed:.1} s",
            c(&counters.notes) / n,
            c(&counters.read_backs) / n,
            c(&counters.approver_reads) / n,
            cpu * 1e3 / n
        );
    }
}

/// One run: connects every daemon and approver, then starts them at once;
/// returns each ask's latency in ms and the run's length in seconds.
async fn one(
    pg: &Postgres,
    daemons: usize,
    plan: Plan,
    each: bool,
    counters: Arc<Counters>,
) -> (Vec<f64>, f64) {
    let ready = Arc::new(Barrier::new(daemons + plan.approvers + 1));
    let (stop_tx, stop) = watch::channel(false);
    let mut approver_tasks = Vec::new();
    for a in 0..plan.approvers {
        let t = target(pg, &format!("a{a}"));
        approver_tasks.push(tokio::spawn(approver(
            t,
            ready.clone(),
            stop.clone(),
            counters.clone(),
        )));
    }
    let start_in = Duration::from_millis(200);
    let mut tasks = Vec::new();
    for m in 0..daemons {
        let t = target(pg, &format!("m{m}"));
        // Staggered over `every`: a steady rate.
        let offset = plan.every.mul_f64(m as f64 / daemons as f64);
        let at: Vec<Duration> = (0..plan.asks)
            .map(|k| start_in + offset + plan.every * k as u32)
            .collect();
        tasks.push(tokio::spawn(daemon(
            t,
            m,
            at,
            plan.required,
            each,
            ready.clone(),
            counters.clone(),
        )));
    }
    ready.wait().await;
    let started = Instant::now();
    let mut ms = Vec::new();
    for t in tasks {
        ms.extend(t.await.unwrap());
    }
    let elapsed = started.elapsed().as_secs_f64();
    let _ = stop_tx.send(true);
    for t in approver_tasks {
        t.await.unwrap();
    }
    (ms, elapsed)
}

/// A redacted Bash event, as the daemon publishes it (~500 bytes).
fn event(m: usize, k: usize) -> serde_json::Value {
    serde_json::json!({
        "type": "event",
        "id": uuid::Uuid::now_v7().to_string(),
        "harness": "claude-code",
        "session_id": format!("5f0c2a4e-9b1d-4c3e-8f7a-{m:012}"),
        "cwd": format!("/home/dev/src/project-{m}"),
        "kind": "PreToolUse",
        "tool": "Bash",
        "input": {
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": format!("git push origin release-{k}"), "description": "Push the release"},
            "permission_mode": "default"
        }
    })
}

/// A simulated daemon: its own connection as its machine role, listening
/// as the daemon's approvals task does; publishes an ask at each of `at`
/// (after the start) and waits for its verdict. Returns the latencies (ms).
async fn daemon(
    t: ConnectTarget,
    m: usize,
    at: Vec<Duration>,
    required: u32,
    each: bool,
    ready: Arc<Barrier>,
    counters: Arc<Counters>,
) -> Vec<f64> {
    let (client, mut notes) = approvals::listen(&t).await.unwrap();
    ready.wait().await;
    let start = tokio::time::Instant::now();
    let mut ms = Vec::with_capacity(at.len());
    for (k, offset) in at.into_iter().enumerate() {
        tokio::time::sleep_until(start + offset).await;
        // Notifications heard while nothing was open wake the daemon's
        // task but read nothing back (its published set is empty).
        while notes.try_recv().is_ok() {
            counters.notes.fetch_add(1, Ordering::Relaxed);
        }
        let id = uuid::Uuid::now_v7().to_string();
        let ask = Ask {
            id: id.clone(),
            machine: t.machine.clone(),
            short_id: format!("{:05}", (m * 7 + k) % 100_000),
            remaining: Duration::from_secs(120),
            agent: "claude-code".into(),
            event: event(m, k),
            rule_ids: vec!["push".into()],
            reason: Some("pushing needs the team".into()),
            narration: None,
            approvals_required: required,
        };
        let t0 = Instant::now();
        approvals::publish(&client, &ask).await.unwrap();
        let ids = [id.clone()];
        loop {
            // The daemon's task: a notification (or the poll) then a
            // read-back of its open asks from the table.
            match tokio::time::timeout(POLL_EVERY, notes.recv()).await {
                Ok(Some(payload)) => {
                    counters.notes.fetch_add(1, Ordering::Relaxed);
                    if !each && payload != id {
                        continue;
                    }
                }
                Ok(None) => panic!("m{m}: the LISTEN connection ended"),
                Err(_) => {}
            }
            counters.read_backs.fetch_add(1, Ordering::Relaxed);
            let outcomes = approvals::outcomes(&client, &ids).await.unwrap();
            if let Some(o) = outcomes.first() {
                assert!(o.allow, "m{m}: {o:?}");
                break;
            }
        }
        ms.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    ms
}

/// An approver: its own connection as its approver role, listening for
/// announced asks; reads the open ones and allows each it has not answered.
async fn approver(
    t: ConnectTarget,
    ready: Arc<Barrier>,
    mut stop: watch::Receiver<bool>,
    counters: Arc<Counters>,
) {
    let me = t.machine.clone();
    let (client, mut notes) = approvals::listen_on(&t, approvals::PUBLISHED)
        .await
        .unwrap();
    ready.wait().await;
    loop {
        counters.approver_reads.fetch_add(1, Ordering::Relaxed);
        let open = approvals::open(&client).await.unwrap();
        for ask in open {
            if ask.allowed_by.contains(&me) {
                continue;
            }
            match approvals::answer(&client, &ask.id, true, None).await {
                Ok(_) => {
                    counters.answers.fetch_add(1, Ordering::Relaxed);
                }
                // The other approver's allow decided it meanwhile.
                Err(AnswerError::NotOpen { .. } | AnswerError::AlreadyAnswered(_)) => {}
                Err(e) => panic!("{me}: {e}"),
            }
        }
        tokio::select! {
            note = notes.recv() => {
                note.expect("the approver's LISTEN connection ended");
                // Several announcements at once: one read.
                while notes.try_recv().is_ok() {}
            }
            _ = tokio::time::sleep(approvals::OPEN_ASKS_POLL) => {}
            _ = stop.changed() => return,
        }
    }
}
