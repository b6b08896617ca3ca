//! The team plane at scale (issue #26), against one throw-away PostgreSQL
//! cluster (tests/support/postgres.rs: `fsync=off`, a Unix socket,
//! `max_connections` raised to fit): two phases, chosen by
//! `HOOKD_BENCH_PHASES` (`ship,asks`, the default; or either alone).
//!
//! **ship**: several hundred simulated daemons, each a task with **its own
//! connection** as its own machine role (what hookd's shipper does: one
//! connection of its own, no pool), ship synthetic sealed log lines
//! through the shipper's own code (`hookd_team::ship::{parse, ship}`: the
//! same insert, the same cursor, the same row-level security). Reports:
//! rows ingested per second, the table's size per million rows and per
//! million decisions (each decision is two rows: its event and its
//! decision), and the database's CPU time (every server process's user +
//! system time, children reaped included) per million rows.
//!
//! **asks** (`team/asks.rs`): team approvals' latency, ask published →
//! team answer → verdict read back by the daemon, p50/p99/max, at a steady
//! rate, in a burst and under the two-person rule.
//!
//! ```sh
//! nice -n 10 cargo bench --bench team --profile dev   # 300 daemons, both phases
//! HOOKD_BENCH_DAEMONS=500 HOOKD_BENCH_LINES=1000 HOOKD_BENCH_BATCH=50 \
//!     nice -n 10 cargo bench --bench team --profile dev
//! HOOKD_BENCH_PHASES=asks HOOKD_BENCH_ASK_EVERY=5 HOOKD_BENCH_ASKS=4 \
//!     nice -n 10 cargo bench --bench team --profile dev
//! ```
//!
//! `HOOKD_BENCH_BATCH` is the lines per batch: a daemon that ships behind a
//! busy agent sends its whole backlog (up to 2,000 lines) at once; a quiet
//! one, the few lines of the last second.
//!
//! Measured with `--profile dev` (a debug client) on the 2-core development
//! machine at load average 11 to 18 (docs/team.md#scale-the-benchmarks-and-10000-machines-on-paper
//! has the tables): shipping 23,100 rows/s, 43 s of database CPU and
//! 872 MB per million rows; approvals with 300 daemons, ask published →
//! verdict read back p50 31 ms, p99 107 ms, max 147 ms at 15 asks/s (one
//! approver), p50 32 ms / p99 102 ms under the two-person rule (two
//! approvers); a burst of 300 at once p50 4.4 s, p99 6.1 s, and 60 asks/s
//! p50 9.6 s (one approver process answers 30 to 50 asks/s: the queue is
//! its). Each answer's NOTIFY reaches every listening daemon (~225 heard
//! per ask), hence the daemon reads back only on its own asks'.

#[path = "../tests/support/mod.rs"]
#[allow(dead_code, unused_imports)]
mod support;

use std::sync::Arc;
use std::time::Instant;

use hookd::protocol::chain::ChainHead;
use support::postgres::{Postgres, ADMIN};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The CPU seconds (user + system, reaped children included) of the
/// server: the postmaster and every process under it.
fn server_cpu_seconds(postmaster: u32) -> f64 {
    // SAFETY: sysconf has no preconditions.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let stat = |pid: u32| -> Option<(u32, f64, f64)> {
        let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let rest = &text[text.rfind(')')? + 2..];
        let f: Vec<&str> = rest.split(' ').collect();
        let ppid = f[1].parse().ok()?;
        let own = f[11].parse::<f64>().ok()? + f[12].parse::<f64>().ok()?;
        let children = f[13].parse::<f64>().ok()? + f[14].parse::<f64>().ok()?;
        Some((ppid, own, children))
    };
    let mut total = 0.0;
    if let Some((_, own, children)) = stat(postmaster) {
        total += own + children;
    }
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if let Some((ppid, own, _)) = stat(pid) {
            if ppid == postmaster {
                total += own;
            }
        }
    }
    total / ticks
}

/// Synthetic sealed lines: an event (a Bash command, ~500 bytes) then its
/// decision (~450 bytes), as the daemon writes them.
fn lines(machine: usize, n: usize) -> Vec<Vec<u8>> {
    let mut head = ChainHead::genesis();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let event_id = format!(
            "019ac3f0-{:04x}-7{:03x}-8000-{:012x}",
            machine % 0xffff,
            i % 0xfff,
            i
        );
        let line = if i % 2 == 0 {
            format!(
                r#"{{"type":"event","id":"{event_id}","received_at":"2026-11-27T03:00:00.{:06}Z","harness":"claude-code","session_id":"5f0c2a4e-9b1d-4c3e-8f7a-{machine:012}","cwd":"/home/dev/src/project-{machine}","kind":"PreToolUse","tool":"Bash","input":{{"session_id":"5f0c2a4e-9b1d-4c3e-8f7a-{machine:012}","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{{"command":"cargo test --workspace -- --test-threads 2 {i}","description":"Run the tests"}},"permission_mode":"default"}}}}"#,
                i % 1_000_000
            )
        } else {
            format!(
                r#"{{"type":"decision","decision_id":"{event_id}","event_id":"{event_id}","verdict":"allow","reason":"cargo test is allowed","source":"rule","rule_ids":["allow-cargo-test"],"generation":1,"latency_us":{},"layer":"user","rules":[{{"id":"allow-cargo-test","file":"/home/dev/.config/hookd/rules.toml","line":12}}],"revision":"sha256:3f1e0c5d9a7b2e4f6a8c0d1e2f3a4b5c"}}"#,
                100 + i % 400
            )
        };
        let mut sealed = Vec::new();
        head.seal(line.as_bytes(), &mut sealed).unwrap();
        sealed.pop();
        out.push(sealed);
    }
    out
}

/// How to connect as `user` (machine name = role name).
fn target(pg: &Postgres, user: &str) -> hookd_team::ConnectTarget {
    let team = hookd_team::TeamConfig {
        database: Some(pg.conninfo(user)),
        machine: Some(user.to_string()),
        ..Default::default()
    };
    team.resolve().unwrap()
}

fn main() {
    let daemons = env("HOOKD_BENCH_DAEMONS", 300);
    let approvers = 2;
    let phases = std::env::var("HOOKD_BENCH_PHASES").unwrap_or_else(|_| "ship,asks".into());
    let phases: Vec<&str> = phases.split(',').map(str::trim).collect();
    for p in &phases {
        assert!(
            ["ship", "asks"].contains(p),
            "HOOKD_BENCH_PHASES: {p:?} is not a phase (ship, asks)"
        );
    }
    // Every simulated daemon and approver holds a connection, plus the
    // admin's and psql's: the cluster's max_connections (400 in the tests)
    // raised to fit.
    let max_connections = (daemons + approvers + 50).max(400);
    std::env::set_var("HOOKD_PG_MAX_CONNECTIONS", max_connections.to_string());
    let Some(pg) = Postgres::start("bench_team") else {
        eprintln!("PostgreSQL is not installed: nothing measured");
        return;
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    // The schema, one login role per simulated daemon (`m0`…) and per
    // approver (`a0`, `a1`).
    let postmaster: u32 = runtime.block_on(async {
        let mut admin = hookd_team::connect::connect(&target(&pg, ADMIN))
            .await
            .unwrap();
        hookd_team::migrate::migrate(&mut admin).await.unwrap();
        let mut sql = String::new();
        for m in 0..daemons {
            sql.push_str(&format!("CREATE ROLE m{m} LOGIN IN ROLE hookd_machine;"));
        }
        for a in 0..approvers {
            sql.push_str(&format!("CREATE ROLE a{a} LOGIN IN ROLE hookd_approver;"));
        }
        admin.batch_execute(&sql).await.unwrap();
        let backend: i32 = admin
            .query_one("SELECT pg_backend_pid()", &[])
            .await
            .unwrap()
            .get(0);
        let stat = std::fs::read_to_string(format!("/proc/{backend}/stat")).unwrap();
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        rest.split(' ').nth(1).unwrap().parse().unwrap()
    });
    println!(
        "PostgreSQL: max_connections {}",
        pg.admin("SHOW max_connections")
    );
    if phases.contains(&"ship") {
        shipping(&pg, &runtime, daemons, postmaster);
    }
    if phases.contains(&"asks") {
        asks::run(&pg, &runtime, daemons, postmaster);
    }
}

fn shipping(pg: &Postgres, runtime: &tokio::runtime::Runtime, daemons: usize, postmaster: u32) {
    let per_daemon = env("HOOKD_BENCH_LINES", 2_000);
    let batch = env("HOOKD_BENCH_BATCH", 200).max(1);
    eprintln!("{daemons} daemons × {per_daemon} lines, {batch} lines a batch: preparing lines…");
    let prepared: Vec<Arc<Vec<hookd_team::ship::Line>>> = (0..daemons)
        .map(|m| {
            Arc::new(
                lines(m, per_daemon)
                    .iter()
                    .map(|l| hookd_team::ship::parse(l).unwrap())
                    .collect(),
            )
        })
        .collect();
    let cpu_before = server_cpu_seconds(postmaster);
    let started = Instant::now();
    let latencies = runtime.block_on(async {
        let mut tasks = Vec::new();
        for (m, lines) in prepared.iter().enumerate() {
            let target = target(pg, &format!("m{m}"));
            let lines = lines.clone();
            tasks.push(tokio::spawn(async move {
                let mut client = hookd_team::connect::connect(&target).await.unwrap();
                let row = hookd_team::fleet::FleetRow {
                    machine: target.machine.clone(),
                    host: "bench".into(),
                    os_user: "bench".into(),
                    version: "bench".into(),
                    agents: serde_json::json!([]),
                    policy: serde_json::json!({}),
                };
                hookd_team::fleet::upsert(&client, &row).await.unwrap();
                let mut batch_ms = Vec::new();
                for (i, chunk) in lines.chunks(batch).enumerate() {
                    let t = Instant::now();
                    let inserted = hookd_team::ship::ship(
                        &mut client,
                        &target.machine,
                        chunk,
                        "0:0",
                        (i * batch) as u64,
                    )
                    .await
                    .unwrap();
                    assert_eq!(inserted as usize, chunk.len());
                    batch_ms.push(t.elapsed().as_secs_f64() * 1e3);
                }
                batch_ms
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all
    });
    let elapsed = started.elapsed().as_secs_f64();
    // Let the backends exit and be reaped, so their time is counted.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let cpu = server_cpu_seconds(postmaster) - cpu_before;
    let rows: u64 = pg
        .admin("SELECT count(*) FROM hookd.decisions")
        .parse()
        .unwrap();
    pg.admin("VACUUM ANALYZE hookd.decisions");
    let table: u64 = pg
        .admin("SELECT pg_total_relation_size('hookd.decisions')")
        .parse()
        .unwrap();
    let heap: u64 = pg
        .admin("SELECT pg_relation_size('hookd.decisions')")
        .parse()
        .unwrap();
    let mut sorted = latencies.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let pct = |p: f64| sorted[((sorted.len() as f64 - 1.0) * p) as usize];
    let per_million = |x: f64| x * 1e6 / rows as f64;
    println!("team shipping: {daemons} daemons (one connection each), {per_daemon} lines each, {batch} lines a batch");
    println!(
        "  rows ingested          {rows} in {elapsed:.2} s: {:.0} rows/s",
        rows as f64 / elapsed
    );
    println!(
        "  batch latency          p50 {:.1} ms, p99 {:.1} ms ({} batches)",
        pct(0.5),
        pct(0.99),
        sorted.len()
    );
    println!(
        "  size                   {:.0} MB per million rows ({:.0} MB heap), {:.0} MB per million decisions (event + decision rows)",
        per_million(table as f64) / 1e6,
        per_million(heap as f64) / 1e6,
        2.0 * per_million(table as f64) / 1e6
    );
    println!(
        "  database CPU           {cpu:.1} s: {:.1} s per million rows",
        per_million(cpu)
    );
}

/// Team approvals' latency: simulated daemons publish asks and wait for
/// the team's verdict exactly as the daemon's task does; approvers answer
/// as `hookd approve --team` and the dashboard do.
#[path = "team/asks.rs"]
mod asks;
