//! Daemon throughput and memory, measured side by side in one run.
//!
//! `cargo bench --bench throughput` (release build) prints:
//!
//! 1. **Persistent connections:** decisions per second through `hookd serve`
//!    (with the embedded default rules) over C long-lived connections, each
//!    pipelining hook frames (a writer thread sends, a reader thread counts
//!    replies). Target: ≥ 100 000/s on a 2-core machine. 1b: the same with
//!    large Bash commands, on both sides of the inline-evaluation threshold.
//! 2. **32 parallel forwarders vs the spawn-only ceiling:** 32 threads, each
//!    spawning `hook-forwarder` (stdin piped, output read) back to back for a
//!    fixed time, next to the same with `/bin/true`. Target: ≥ 90 % of the
//!    ceiling.
//! 3. **Memory:** the daemon's RSS idle, and with 10 000 decisions pending
//!    (a subscriber holds them; nobody decides), sent over 200 connections
//!    (one connection has at most 64 hooks in flight); then with 3 000
//!    pending the way Claude Code sends them, each on a connection of its
//!    own as `hook-forwarder` holds one.
//!
//! 4. **OpenTelemetry export:** this build with `[otlp]` off and on (to a
//!    sink in the benchmark that answers every request 200), side by side:
//!    decisions/s over 4 connections, what the exporter sent, dropped and
//!    lost once it caught up with the log (lost: log lines rotated away
//!    before it read them, which the bench's flood outruns), start-up
//!    (spawn to the socket accepting) and idle RSS.
//!
//! `HOOKD_BENCH_SECS` sets the duration of each timed phase (default 3).
//! `HOOKD_BENCH_PHASES=1,3` runs only those phases (`1`, `1b`, `2`, `3`, `4`).
//! `HOOKD_BENCH_BASELINE=/path/to/hookd` runs every phase against that
//! daemon too, alternating with this build's, and prints both side by side
//! (e.g. a build of main: the comparison then shares one machine state;
//! phases 1 and 1b measure each twice, A B B A, and average);
//! `HOOKD_BENCH_BASELINE_FORWARDER` is the forwarder phase 2 spawns for it
//! (default: this build's) and `HOOKD_BENCH_BASELINE_LABEL` its column's
//! name. `scripts/bench --against REV` sets all three. Phase 2 spawns
//! `HOOKD_FORWARDER_STATIC` for this build when it is set (scripts/bench
//! sets it to the forwarder as scripts/install builds it).
//! Nothing here asserts a time: machines are shared and noisy. Every daemon
//! is ended by its pid, every temp dir removed.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PRE_TOOL_USE: &str = r#"{"session_id":"1fce3faa-62dc-4336-ba9c-8494671dd902","transcript_path":"/home/dev/.claude/projects/-home-dev-project/1fce3faa-62dc-4336-ba9c-8494671dd902.jsonl","cwd":"/home/dev/project","prompt_id":"78c2655b-0522-4ddc-966c-038c0bd1064d","permission_mode":"default","effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"cargo test --workspace && git status","description":"Run the tests"},"tool_use_id":"toolu_01"}"#;

struct Daemon {
    child: Child,
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Daemon {
    fn start(bin: &Path, config: &str) -> Daemon {
        Daemon::start_with(bin, config, None)
    }

    /// A daemon judging with `rules` (a rules file's text) instead of the
    /// embedded defaults.
    fn start_with(bin: &Path, config: &str, rules: Option<&str>) -> Daemon {
        let dir = tempfile::Builder::new()
            .prefix("hookd-bench")
            .tempdir()
            .unwrap();
        let socket = dir.path().join("hookd.sock");
        let config_path = dir.path().join("config.toml");
        std::fs::write(&config_path, config).unwrap();
        let state = dir.path().join("state");
        std::fs::create_dir(&state).unwrap();
        let mut command = Command::new(bin);
        command.args(["serve", "--socket"]).arg(&socket);
        if let Some(rules) = rules {
            let path = dir.path().join("rules.toml");
            std::fs::write(&path, rules).unwrap();
            command.arg("--rules").arg(path);
        }
        let child = command
            .arg("--log")
            // In a directory of its own, as the default paths keep it: in
            // the one `HOME` the daemon watches (its default rules file's
            // nearest existing directory), every append woke the watcher.
            .arg(state.join("events.jsonl"))
            .arg("--config")
            .arg(&config_path)
            .env("RUST_LOG", "warn")
            .env_remove("XDG_CONFIG_HOME")
            .env("HOME", dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn hookd");
        let deadline = Instant::now() + Duration::from_secs(10);
        while UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "hookd did not start");
            std::thread::sleep(Duration::from_millis(1));
        }
        Daemon {
            child,
            socket,
            _dir: dir,
        }
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn hello(socket: &Path, name: &str) -> (UnixStream, BufReader<UnixStream>) {
    let mut stream = UnixStream::connect(socket).unwrap();
    writeln!(
        stream,
        r#"{{"type":"hello","v":1,"role":"client","name":"{name}"}}"#
    )
    .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.contains("welcome"), "{line}");
    (stream, reader)
}

/// The requests one connection keeps in flight: at most [`Window::MAX`],
/// the writer sleeping (not spinning: a window kept by spinning on
/// `yield_now` took 40 % of the two cores from the daemon it measured)
/// until answers bring it down to [`Window::RESUME`].
#[derive(Default)]
struct Window {
    in_flight: AtomicU64,
    lock: std::sync::Mutex<()>,
    room: std::sync::Condvar,
}

impl Window {
    const MAX: u64 = 256;
    const RESUME: u64 = 128;

    fn wait_for_room(&self) {
        if self.in_flight.load(Ordering::Acquire) <= Self::MAX {
            return;
        }
        let mut guard = self.lock.lock().unwrap();
        while self.in_flight.load(Ordering::Acquire) > Self::RESUME {
            // Timed: a wake-up between the load and the wait is not lost for long.
            guard = self
                .room
                .wait_timeout(guard, Duration::from_millis(5))
                .unwrap()
                .0;
        }
    }

    fn sent(&self, n: u64) {
        self.in_flight.fetch_add(n, Ordering::AcqRel);
    }

    fn answered(&self) {
        if self.in_flight.fetch_sub(1, Ordering::AcqRel) == Self::RESUME + 1 {
            let _guard = self.lock.lock().unwrap();
            self.room.notify_one();
        }
    }
}

/// Decisions per second over `conns` pipelined persistent connections,
/// each hook's input being `input`.
fn persistent(socket: &Path, conns: usize, secs: f64, input: &str) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    for c in 0..conns {
        let (mut writer, mut reader) = hello(socket, &format!("bench-{c}"));
        let window = Arc::new(Window::default());
        let (stop_w, window_w) = (stop.clone(), window.clone());
        let input = input.to_string();
        threads.push(std::thread::spawn(move || {
            let mut i = 0u64;
            let mut batch = Vec::with_capacity(64 * 1024);
            while !stop_w.load(Ordering::Relaxed) {
                window_w.wait_for_room();
                batch.clear();
                for _ in 0..32 {
                    write!(
                        batch,
                        r#"{{"type":"hook","id":"{c}-{i}","deadline_ms":60000,"input":{input}}}"#
                    )
                    .unwrap();
                    batch.push(b'\n');
                    i += 1;
                }
                window_w.sent(32);
                if writer.write_all(&batch).is_err() {
                    break;
                }
            }
        }));
        let (stop_r, answered_r) = (stop.clone(), answered.clone());
        threads.push(std::thread::spawn(move || {
            let mut line = Vec::new();
            while !stop_r.load(Ordering::Relaxed) {
                line.clear();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        debug_assert!(line.starts_with(br#"{"type":"hook_result""#));
                        window.answered();
                        answered_r.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    std::thread::sleep(Duration::from_millis(300)); // warm-up
    let start_count = answered.load(Ordering::Relaxed);
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(secs));
    let done = answered.load(Ordering::Relaxed) - start_count;
    let rate = done as f64 / started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    // The readers may be blocked on a read; closing the daemon ends them.
    drop(threads);
    rate
}

/// Processes completed per second by `parallel` threads spawning `program`.
fn spawn_rate(program: &Path, socket: &Path, parallel: usize, secs: f64) -> (f64, u64) {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let fallbacks = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..parallel)
        .map(|_| {
            let (stop, done, fallbacks) = (stop.clone(), done.clone(), fallbacks.clone());
            let (program, socket) = (program.to_path_buf(), socket.to_path_buf());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let mut child = Command::new(&program)
                        .env("HOOKD_SOCKET", &socket)
                        .stdin(Stdio::piped())
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .spawn()
                        .unwrap();
                    let _ = child
                        .stdin
                        .take()
                        .unwrap()
                        .write_all(PRE_TOOL_USE.as_bytes());
                    let mut err = Vec::new();
                    let _ = child.stderr.take().unwrap().read_to_end(&mut err);
                    let _ = child.wait_with_output();
                    if !err.is_empty() {
                        fallbacks.fetch_add(1, Ordering::Relaxed);
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let start_count = done.load(Ordering::Relaxed);
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(secs));
    let n = done.load(Ordering::Relaxed) - start_count;
    let rate = n as f64 / started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    (rate, fallbacks.load(Ordering::Relaxed))
}

/// A daemon whose undecided hooks wait for a decision as long as their
/// deadline allows, and its RSS once started.
fn waiting_daemon(bin: &Path) -> (Daemon, u64) {
    let d = Daemon::start(
        bin,
        "[decisions]\nroute_undecided = true\ntimeout = \"never\"\n",
    );
    std::thread::sleep(Duration::from_millis(200));
    let idle = d.rss_kib();
    (d, idle)
}

/// A subscriber to pending events (which makes hooks wait for a decision
/// nobody sends), its pushed frames drained so it never lags.
fn hold_pending(d: &Daemon) -> UnixStream {
    let (mut sub, mut sub_reader) = hello(&d.socket, "holder");
    writeln!(
        sub,
        r#"{{"type":"subscribe","req":"s","filter":{{"pending_only":true}}}}"#
    )
    .unwrap();
    let mut line = String::new();
    sub_reader.read_line(&mut line).unwrap();
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        while sub_reader
            .read_until(b'\n', &mut sink)
            .map(|n| n > 0)
            .unwrap_or(false)
        {
            sink.clear();
        }
    });
    sub
}

/// Waits (a minute at most) until `d` holds `n` pending decisions.
fn wait_pending(d: &Daemon, n: usize) {
    let (mut probe, mut probe_reader) = hello(&d.socket, "probe");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        writeln!(probe, r#"{{"type":"status","req":"st"}}"#).unwrap();
        let mut status = String::new();
        probe_reader.read_line(&mut status).unwrap();
        let v: serde_json::Value = serde_json::from_str(&status).unwrap();
        if v["result"]["counters"]["pending"].as_u64() == Some(n as u64) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "only {} pending",
            v["result"]["counters"]["pending"]
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// RSS idle and with `n` decisions pending.
fn rss_with_pending(bin: &Path, n: usize) -> (u64, u64) {
    const CONNECTIONS: usize = 200;
    let (d, idle) = waiting_daemon(bin);
    let sub = hold_pending(&d);
    let mut load = Vec::new();
    for c in 0..CONNECTIONS {
        let (mut writer, reader) = hello(&d.socket, &format!("pending-load-{c}"));
        let mut batch = Vec::new();
        for i in (c..n).step_by(CONNECTIONS) {
            write!(
                batch,
                r#"{{"type":"hook","id":"p{i}","deadline_ms":600000,"input":{PRE_TOOL_USE}}}"#
            )
            .unwrap();
            batch.push(b'\n');
        }
        writer.write_all(&batch).unwrap();
        load.push((writer, reader));
    }
    wait_pending(&d, n);
    let loaded = d.rss_kib();
    drop(sub);
    (idle, loaded)
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing we need.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let secs: f64 = std::env::var("HOOKD_BENCH_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    println!(
        "hookd throughput benchmark ({} cores, {secs} s per phase)\n",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );

    let this_build = PathBuf::from(env!("CARGO_BIN_EXE_hookd"));
    let mut daemons = vec![("this build", this_build)];
    // A label that outlives main(): the rows print it as the column's name.
    let baseline_label: &'static str = Box::leak(
        std::env::var("HOOKD_BENCH_BASELINE_LABEL")
            .unwrap_or_else(|_| "baseline".into())
            .into_boxed_str(),
    );
    if let Some(baseline) = std::env::var_os("HOOKD_BENCH_BASELINE") {
        daemons.push((baseline_label, PathBuf::from(baseline)));
    }
    let names: Vec<&str> = daemons.iter().map(|(name, _)| *name).collect();
    println!(
        "{:<40}{}",
        "",
        names.iter().map(|n| format!("{n:>14}")).collect::<String>()
    );
    let row = |label: &str, values: &[String]| {
        println!(
            "{label:<40}{}",
            values
                .iter()
                .map(|v| format!("{v:>14}"))
                .collect::<String>()
        );
    };

    let phases = std::env::var("HOOKD_BENCH_PHASES").ok();
    let phase = |name: &str| {
        phases
            .as_deref()
            .is_none_or(|list| list.split(',').any(|p| p.trim() == name))
    };

    if phase("1") {
        persistent_phase(&daemons, secs, &row);
    }
    if phase("1b") {
        large_inputs_phase(&daemons, secs, &row);
    }
    if phase("2") {
        forwarders_phase(&daemons, secs, &row);
    }
    if phase("3") {
        memory_phase(&daemons, &row);
    }
    if phase("4") {
        export_phase(&daemons[0].1, secs);
    }
}

/// An OTLP/HTTP collector that accepts everything and keeps nothing.
fn otlp_sink() -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                loop {
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        if reader.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        if line == "\r\n" {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':') {
                            if name.eq_ignore_ascii_case("content-length") {
                                length = value.trim().parse().unwrap();
                            }
                        }
                    }
                    let mut body = vec![0; length];
                    if reader.read_exact(&mut body).is_err()
                        || writer
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                            .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    addr
}

fn export_phase(bin: &Path, secs: f64) {
    println!("\n4. OpenTelemetry export (this build), off vs on to a local sink");
    let sink = otlp_sink();
    let on = format!("[otlp]\nendpoint = \"http://{sink}\"\n");
    let configs = [("export off", String::new()), ("export on", on)];
    println!("{:<40}{:>14}{:>14}", "", configs[0].0, configs[1].0);
    let mut rates = [0.0; 2];
    let mut exported = 0;
    let mut dropped = 0;
    let mut lost = 0;
    let mut behind_at_end = 0;
    // A B B A: a drifting machine favours neither.
    for i in [0, 1, 1, 0] {
        let d = Daemon::start(bin, &configs[i].1);
        rates[i] += persistent(&d.socket, 4, secs, PRE_TOOL_USE) / 2.0;
        if i == 1 {
            // Read once the exporter has caught up with the log (or given
            // up on what rotated away: it counts a loss only when it gets
            // there), for at most 30 s.
            let (mut client, mut reader) = hello(&d.socket, "bench-status");
            let deadline = Instant::now() + Duration::from_secs(30);
            let otlp = loop {
                writeln!(client, r#"{{"type":"status","req":"st"}}"#).unwrap();
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let status: serde_json::Value = serde_json::from_str(&line).unwrap();
                let otlp = status["result"]["otlp"].clone();
                let behind = otlp["behind_bytes"].as_u64().unwrap_or(0)
                    + otlp["queued"].as_u64().unwrap_or(0);
                if behind == 0 || Instant::now() >= deadline {
                    break otlp;
                }
                std::thread::sleep(Duration::from_millis(100));
            };
            exported += otlp["logs_exported"].as_u64().unwrap_or(0)
                + otlp["spans_exported"].as_u64().unwrap_or(0);
            dropped += otlp["dropped"].as_u64().unwrap_or(0);
            lost += otlp["lost"].as_u64().unwrap_or(0);
            behind_at_end += otlp["behind_bytes"].as_u64().unwrap_or(0);
        }
    }
    println!(
        "{:<40}{:>14.0}{:>14.0}",
        "   decisions/s, 4 connections", rates[0], rates[1]
    );
    // Wider than the column: its own separator.
    println!(
        "{:<40}{:>14} {:>13}",
        "   exported / dropped / lost (2 runs)",
        "-",
        format!("{exported} / {dropped} / {lost}")
    );
    if behind_at_end > 0 {
        println!(
            "   (the exporter was still {behind_at_end} bytes behind the log 30 s after the load)"
        );
    }
    let mut startup = [0.0; 2];
    let mut idle = [0; 2];
    const STARTS: u32 = 5;
    for _ in 0..STARTS {
        for i in [0, 1] {
            let started = Instant::now();
            let d = Daemon::start(bin, &configs[i].1);
            startup[i] += started.elapsed().as_secs_f64() * 1000.0 / f64::from(STARTS);
            std::thread::sleep(Duration::from_millis(200));
            idle[i] += d.rss_kib() / u64::from(STARTS);
        }
    }
    println!(
        "{:<40}{:>11.1} ms{:>11.1} ms",
        "   start-up (spawn to accepting)", startup[0], startup[1]
    );
    println!(
        "{:<40}{:>10.1} MiB{:>10.1} MiB",
        "   idle RSS",
        idle[0] as f64 / 1024.0,
        idle[1] as f64 / 1024.0
    );
}

/// `measure` for every daemon, twice, in the order A B … B A, averaged: a
/// machine whose load drifts during the run favours no one.
fn side_by_side(daemons: &[(&str, PathBuf)], measure: impl Fn(&Path) -> f64) -> Vec<String> {
    let mut sums = vec![0.0; daemons.len()];
    let order: Vec<usize> = (0..daemons.len()).chain((0..daemons.len()).rev()).collect();
    for i in order {
        sums[i] += measure(&daemons[i].1);
    }
    sums.iter().map(|sum| format!("{:.0}", sum / 2.0)).collect()
}

fn persistent_phase(daemons: &[(&str, PathBuf)], secs: f64, row: &dyn Fn(&str, &[String])) {
    println!("1. persistent connections, pipelined (default rules loaded), decisions/s");
    for conns in [1, 4, 16] {
        let rates = side_by_side(daemons, |bin| {
            let d = Daemon::start(bin, "");
            persistent(&d.socket, conns, secs, PRE_TOOL_USE)
        });
        row(&format!("   {conns:>2} connection(s)"), &rates);
    }
}

fn large_inputs_phase(daemons: &[(&str, PathBuf)], secs: f64, row: &dyn Fn(&str, &[String])) {
    println!(
        "\n1b. large inputs: a Bash command of N KiB (judged inline up to 64 KiB of frame, \
         on a blocking thread above), 4 connections, decisions/s"
    );
    for kib in [1, 16, 48, 96] {
        let command = "echo hookd && ".repeat(kib * 1024 / 13);
        let input = PRE_TOOL_USE.replace("cargo test --workspace && git status", &command);
        let rates = side_by_side(daemons, |bin| {
            let d = Daemon::start(bin, "");
            persistent(&d.socket, 4, secs, &input)
        });
        row(&format!("   {kib:>2} KiB command"), &rates);
    }
}

fn forwarders_phase(daemons: &[(&str, PathBuf)], secs: f64, row: &dyn Fn(&str, &[String])) {
    println!("\n2. 32 parallel forwarders vs the spawn-only ceiling, per s");
    // Each daemon with its own forwarder: this build's as scripts/install
    // builds it when scripts/bench says where (else the bench profile's),
    // the baseline's when HOOKD_BENCH_BASELINE_FORWARDER names it.
    let this_forwarder = std::env::var_os("HOOKD_FORWARDER_STATIC").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_hook-forwarder")),
        PathBuf::from,
    );
    let baseline_forwarder = std::env::var_os("HOOKD_BENCH_BASELINE_FORWARDER")
        .map_or(this_forwarder.clone(), PathBuf::from);
    let mut ceilings = Vec::new();
    let mut trips = Vec::new();
    let mut ratios = Vec::new();
    for (i, (_, bin)) in daemons.iter().enumerate() {
        let forwarder = if i == 0 {
            &this_forwarder
        } else {
            &baseline_forwarder
        };
        let d = Daemon::start(bin, "");
        let (ceiling, _) = spawn_rate(Path::new("/bin/true"), &d.socket, 32, secs);
        let (forwarders, fallbacks) = spawn_rate(forwarder, &d.socket, 32, secs);
        ceilings.push(format!("{ceiling:.0}"));
        trips.push(format!("{forwarders:.0} ({fallbacks} fb)"));
        ratios.push(format!("{:.1} %", forwarders / ceiling * 100.0));
    }
    row("   /bin/true", &ceilings);
    row("   hook-forwarder round trips", &trips);
    row("   ratio (target ≥ 90 %)", &ratios);
}

fn memory_phase(daemons: &[(&str, PathBuf)], row: &dyn Fn(&str, &[String])) {
    println!("\n3. memory");
    let mut idle = Vec::new();
    let mut loaded = Vec::new();
    let mut each = Vec::new();
    for (_, bin) in daemons {
        let (i, l) = rss_with_pending(bin, 10_000);
        idle.push(format!("{:.1} MiB", i as f64 / 1024.0));
        loaded.push(format!("{:.1} MiB", l as f64 / 1024.0));
        each.push(format!("{:.2} KiB", l.saturating_sub(i) as f64 / 10_000.0));
    }
    row("   idle RSS", &idle);
    // The embedded defaults are the standard profile (issue #27): the
    // same daemon on the minimal profile's seven rules, beside it.
    let mut minimal = Vec::new();
    for (_, bin) in daemons {
        let d = Daemon::start_with(
            bin,
            "[decisions]\nroute_undecided = true\ntimeout = \"never\"\n",
            Some(hookd::rules::MINIMAL_TOML),
        );
        std::thread::sleep(Duration::from_millis(200));
        minimal.push(format!("{:.1} MiB", d.rss_kib() as f64 / 1024.0));
    }
    row("   idle RSS, minimal profile (--rules)", &minimal);
    row("   RSS with 10 000 pending", &loaded);
    row("   per pending decision", &each);

    // Claude Code's way: each hook on a forwarder's connection of its own.
    let n = forwarder_connections();
    let mut loaded = Vec::new();
    let mut each = Vec::new();
    for (_, bin) in daemons {
        let (i, l) = rss_with_forwarders_pending(bin, n);
        loaded.push(format!("{:.1} MiB", l as f64 / 1024.0));
        each.push(format!("{:.2} KiB", l.saturating_sub(i) as f64 / n as f64));
    }
    row(&format!("   RSS with {n} forwarders pending"), &loaded);
    row("   per pending forwarder", &each);
}

/// How many forwarder connections the memory phase holds: 3 000 (under
/// the daemon's 4 096 connection slots), fewer where this process may not
/// open that many files (the soft limit is raised to the hard one).
fn forwarder_connections() -> usize {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    let (soft, _) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    3000.min(soft.saturating_sub(100) as usize)
}

/// RSS idle and with `n` hooks pending, each on a connection of its own
/// that sent one `hook` frame and waits, as `hook-forwarder` does.
fn rss_with_forwarders_pending(bin: &Path, n: usize) -> (u64, u64) {
    let (d, idle) = waiting_daemon(bin);
    let sub = hold_pending(&d);
    let forwarders: Vec<UnixStream> = (0..n)
        .map(|i| {
            let mut stream = UnixStream::connect(&d.socket).unwrap();
            writeln!(
                stream,
                r#"{{"type":"hook","id":"f{i}","deadline_ms":600000,"input":{PRE_TOOL_USE}}}"#
            )
            .unwrap();
            stream
        })
        .collect();
    wait_pending(&d, n);
    let loaded = d.rss_kib();
    drop(forwarders);
    drop(sub);
    (idle, loaded)
}
