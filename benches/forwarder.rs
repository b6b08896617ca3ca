//! What a hook costs Claude Code: the whole-process round trip of
//! `hook-forwarder` through a running `hookd serve`, next to spawning
//! `/bin/true` and next to equivalent Node and Python forwarders
//! (`benches/forwarder.js`, `benches/forwarder.py`).
//!
//! One run starts the release `hookd serve` on a temporary socket with a
//! generated file of 100 rules (none matches the benchmark's input, so every
//! evaluation walks all of them), then measures, in rounds of one run each in a new (seeded) order so that machine
//! noise hits every command alike, the time from spawn to exit of:
//!
//! - `/bin/true`, the floor: what any command hook costs;
//! - a static no-op (`benches/noop.c`, built here with `cc -static`; skipped
//!   with a note without `cc`): the floor of a statically linked process,
//!   which the static forwarder is;
//! - the release `hook-forwarder`;
//! - `node benches/forwarder.js` and `python3 benches/forwarder.py` (skipped
//!   with a note when `node` or `python3` is not on `PATH`).
//!
//! Each gets the same realistic PreToolUse input on a stdin pipe and the same
//! minimal environment (see `hook_env`), with its stdout and stderr captured,
//! as Claude Code does; interpreters are run from their real executables,
//! not through wrappers such as pyenv shims. A
//! forwarder that fails or prints a fallback line (the daemon was not reached)
//! stops the benchmark with an error. It prints median, p90 and p99 per
//! command, the ratios of the medians, whether the targets are met
//! (forwarder ≤ 1.02× `/bin/true` and ≤ 1.25× the static no-op, #28; ≥ 80×
//! faster than Node; reported, not asserted: machines are noisy) and the
//! daemon's resident memory afterwards.
//!
//! ```text
//! cargo bench --bench forwarder
//! HOOKD_BENCH_ITERS=1000 cargo bench --bench forwarder
//! ```
//!
//! `HOOKD_BENCH_ITERS` sets the measured iterations per command (default
//! 300), each after 20 warm-up runs. `HOOKD_FORWARDER_COMPARE=label=PATH,…`
//! adds other forwarder builds to the same run (say, a baseline built from
//! another commit). Keep the machine otherwise idle.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// `tests/fixtures/events/PreToolUse.json`, compacted: the input of a real
/// Claude Code PreToolUse hook.
const INPUT: &str = r#"{"session_id":"1fce3faa-62dc-4336-ba9c-8494671dd902","transcript_path":"/home/dev/.claude/projects/-home-dev-project/1fce3faa-62dc-4336-ba9c-8494671dd902.jsonl","cwd":"/home/dev/project","prompt_id":"78c2655b-0522-4ddc-966c-038c0bd1064d","permission_mode":"bypassPermissions","effort":{"level":"medium"},"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo hello > out.txt","description":"Write hello to out.txt"},"tool_use_id":"toolu_mock_0_1"}"#;

/// The `CLAUDE*` variables Claude Code gives a hook; every forwarder copies
/// them into its frame, so they are part of the measured work.
const CLAUDE_ENV: [(&str, &str); 2] = [
    ("CLAUDE_PROJECT_DIR", "/home/dev/project"),
    ("CLAUDE_CODE_ENTRYPOINT", "cli"),
];

const DEFAULT_ITERS: usize = 300;
const WARMUP: usize = 20;
const RULES: usize = 100;

/// The targets: #28's against `/bin/true` and the static no-op, #2's
/// against Node.
const TARGET_VS_TRUE: f64 = 1.02;
const TARGET_VS_NOOP: f64 = 1.25;
const TARGET_VS_NODE: f64 = 80.0;

/// The static no-op's label.
const NOOP: &str = "static no-op";

/// Everything that stops the benchmark is reported as one message.
type Result<T> = std::result::Result<T, String>;

fn main() {
    // Errors are returned rather than panicked so that the daemon guard and
    // the temporary directory are cleaned up before the process exits.
    if let Err(message) = run() {
        eprintln!("forwarder bench: error: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let iters = iterations()?;
    let hookd = PathBuf::from(env!("CARGO_BIN_EXE_hookd"));
    let forwarder = PathBuf::from(env!("CARGO_BIN_EXE_hook-forwarder"));
    let benches = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches");

    let daemon = Daemon::start(&hookd)?;
    let mut commands = vec![
        Subject::new("/bin/true", Command::new("/bin/true"), false),
        Subject::new("hook-forwarder", Command::new(&forwarder), true),
    ];
    let mut notes = Vec::new();
    match static_noop(&benches.join("noop.c")) {
        Ok(path) => commands.push(Subject::new(NOOP, Command::new(path), false)),
        Err(why) => notes.push(format!("{NOOP}: skipped, {why}")),
    }
    // `scripts/bench` builds the statically linked forwarder (what
    // `scripts/install` installs) and names it here, so both are measured in
    // the same run.
    if let Some(path) = std::env::var_os("HOOKD_FORWARDER_STATIC") {
        let path = PathBuf::from(path);
        if !path.is_file() {
            return Err(format!(
                "HOOKD_FORWARDER_STATIC={}: no such file",
                path.display()
            ));
        }
        notes.push(format!("hook-forwarder static: {}", path.display()));
        commands.push(Subject::new(
            "hook-forwarder static",
            Command::new(path),
            true,
        ));
    }
    // Other forwarder builds to measure in the same run (a baseline from
    // another commit, a variant): `HOOKD_FORWARDER_COMPARE=label=PATH,...`.
    if let Some(list) = std::env::var_os("HOOKD_FORWARDER_COMPARE") {
        for item in list.to_string_lossy().split(',').filter(|i| !i.is_empty()) {
            let (label, path) = item
                .split_once('=')
                .ok_or_else(|| format!("HOOKD_FORWARDER_COMPARE: `{item}` is not LABEL=PATH"))?;
            if !Path::new(path).is_file() {
                return Err(format!("HOOKD_FORWARDER_COMPARE: {path}: no such file"));
            }
            notes.push(format!("{label}: {path}"));
            // Labels live for the whole run; leaking them keeps `Subject` simple.
            let label: &'static str = Box::leak(label.to_string().into_boxed_str());
            commands.push(Subject::new(label, Command::new(path), true));
        }
    }
    for (label, program, print_path, script) in [
        (
            "node forwarder.js",
            "node",
            ["-p", "process.execPath"],
            "forwarder.js",
        ),
        (
            "python3 forwarder.py",
            "python3",
            ["-c", "import sys; print(sys.executable)"],
            "forwarder.py",
        ),
    ] {
        match interpreter(program, &print_path) {
            Some(path) => {
                notes.push(format!("{program}: {}", path.display()));
                let mut command = Command::new(path);
                command.arg(benches.join(script));
                commands.push(Subject::new(label, command, true));
            }
            None => notes.push(format!("{label}: skipped, `{program}` is not on PATH")),
        }
    }
    for subject in &mut commands {
        subject
            .command
            .env_clear()
            .envs(hook_env(&daemon.socket))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
    }

    check_equivalence(&mut commands)?;
    let load_before = load_average();
    eprintln!(
        "forwarder bench: {} rounds of {} commands…",
        WARMUP + iters,
        commands.len()
    );
    // A new order every round: a command that always ran in the same
    // place of a fixed cycle (right after `/bin/true`, or after the Node
    // forwarder's 50 ms) moved its median by up to ±8 %
    // (docs/performance-history.md, "The workspace split"), and three
    // copies of one binary measured up to 25 % apart by their place
    // (docs/performance.md, "How to reproduce"); rotating only the start kept
    // every command behind the same predecessor.
    let mut order: Vec<usize> = (0..commands.len()).collect();
    let mut shuffle = Shuffle::new(0x5eed_f00d);
    for round in 0..WARMUP + iters {
        shuffle.apply(&mut order);
        for &k in &order {
            let subject = &mut commands[k];
            let elapsed = subject.run_once()?.elapsed;
            if round >= WARMUP {
                subject.samples.push(elapsed);
            }
        }
    }

    let rss = daemon.memory();
    let forwarded = (WARMUP + iters + 1) * commands.iter().filter(|s| s.forwards).count();
    let logged = daemon.stop()?;

    print_report(&commands, iters, &forwarder);
    println!(
        "load average (1, 5, 15 min) before: {load_before}, after: {}",
        load_average()
    );
    for line in &notes {
        println!("{line}");
    }
    println!("daemon memory after the run: {rss}");
    match logged {
        Some(n) => println!("daemon event log: {n} hook events for {forwarded} forwarded hooks"),
        None => println!("daemon event log: not readable"),
    }
    Ok(())
}

/// Builds `benches/noop.c` as a static, not position-independent executable
/// (the way scripts/install links the forwarder) under Cargo's temporary
/// directory for benches, and returns its path; why not, when `cc` cannot.
fn static_noop(source: &Path) -> Result<PathBuf> {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("static-noop");
    let built = Command::new("cc")
        .args(["-O2", "-static", "-no-pie", "-o"])
        .arg(&out)
        .arg(source)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("`cc` does not run: {e}"))?;
    if !built.status.success() {
        return Err(format!(
            "`cc -static` failed ({}): {}",
            built.status,
            String::from_utf8_lossy(&built.stderr).trim()
        ));
    }
    Ok(out)
}

/// A seeded Fisher–Yates shuffle (xorshift64*): the same sequence of
/// orders on every run, none favouring a command.
struct Shuffle(u64);

impl Shuffle {
    fn new(seed: u64) -> Shuffle {
        Shuffle(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn apply(&mut self, order: &mut [usize]) {
        for i in (1..order.len()).rev() {
            let j = (self.next() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
    }
}

/// `HOOKD_BENCH_ITERS`, else [`DEFAULT_ITERS`].
fn iterations() -> Result<usize> {
    match std::env::var("HOOKD_BENCH_ITERS") {
        Err(_) => Ok(DEFAULT_ITERS),
        Ok(v) => v
            .trim()
            .parse()
            .ok()
            .filter(|&n: &usize| n > 0)
            .ok_or_else(|| format!("HOOKD_BENCH_ITERS={v:?}: expected a positive integer")),
    }
}

/// The first three fields of `/proc/loadavg`: other work on the machine
/// inflates every number, and this says how much there was.
fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

/// The environment every command gets: what Claude Code adds for a hook plus
/// the host's `PATH`, `HOME` and `LANG`, nothing else. Host settings that
/// change an interpreter's start-up must not skew the comparison: with
/// `NODE_EXTRA_CA_CERTS` set, Node parses a CA bundle before running a line
/// (tens of ms); `NODE_OPTIONS` and `PYTHON*` can do similar things.
fn hook_env(socket: &Path) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = ["PATH", "HOME", "LANG"]
        .into_iter()
        .filter_map(|k| Some((k.into(), std::env::var_os(k)?)))
        .collect();
    env.extend(CLAUDE_ENV.map(|(k, v)| (k.into(), v.into())));
    env.push(("HOOKD_SOCKET".into(), socket.into()));
    env
}

/// The interpreter's own executable, as it reports it: what is on `PATH` may
/// be a wrapper whose cost is not the language's (pyenv's `python3` shim is a
/// bash script that adds tens of ms). `None` when `program` does not run.
fn interpreter(program: &str, print_path: &[&str]) -> Option<PathBuf> {
    let output = Command::new(program)
        .args(print_path)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let path = String::from_utf8(output.stdout).ok()?;
    Some(PathBuf::from(path.trim())).filter(|p| p.is_absolute())
}

/// A running `hookd serve` in its own temporary directory; stopped on drop.
struct Daemon {
    child: Child,
    socket: PathBuf,
    log: PathBuf,
    stderr: PathBuf,
    /// Removed after the daemon has stopped (fields drop after `Drop::drop`).
    _dir: tempfile::TempDir,
}

impl Daemon {
    fn start(hookd: &Path) -> Result<Daemon> {
        let dir = tempfile::Builder::new()
            .prefix("hookd-bench-")
            .tempdir()
            .map_err(|e| format!("creating a temporary directory: {e}"))?;
        let socket = dir.path().join("hookd.sock");
        // The log in a directory of its own, as the default paths keep it
        // (`~/.local/state/hookd/`, the rules in `~/.config/hookd/`): beside
        // the rules file, every append woke the daemon's watcher of that
        // directory, about 2.5 context switches per hook that no install
        // pays (docs/performance-history.md, #28).
        let log = dir.path().join("state").join("events.jsonl");
        fs::create_dir(dir.path().join("state"))
            .map_err(|e| format!("creating the log's directory: {e}"))?;
        let rules = dir.path().join("rules.toml");
        let stderr = dir.path().join("hookd.stderr");
        fs::write(&rules, rules_toml()).map_err(|e| format!("writing {}: {e}", rules.display()))?;
        let stderr_file =
            File::create(&stderr).map_err(|e| format!("creating {}: {e}", stderr.display()))?;
        let child = Command::new(hookd)
            .arg("serve")
            .arg("--socket")
            .arg(&socket)
            .arg("--log")
            .arg(&log)
            .arg("--rules")
            .arg(&rules)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr_file)
            .spawn()
            .map_err(|e| format!("starting {}: {e}", hookd.display()))?;
        let mut daemon = Daemon {
            child,
            socket,
            log,
            stderr,
            _dir: dir,
        };
        daemon.wait_ready()?;
        Ok(daemon)
    }

    /// Waits until the socket accepts a connection.
    fn wait_ready(&mut self) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if UnixStream::connect(&self.socket).is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "hookd serve exited ({status}) before accepting:\n{}",
                    self.stderr_text()
                ));
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "hookd serve did not accept on {} within 10 s:\n{}",
                    self.socket.display(),
                    self.stderr_text()
                ));
            }
            thread::sleep(Duration::from_millis(5));
        }
    }

    fn stderr_text(&self) -> String {
        fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// `VmRSS` and `VmHWM` (peak) from `/proc/<pid>/status`.
    fn memory(&self) -> String {
        let status = fs::read_to_string(format!("/proc/{}/status", self.child.id()));
        let field = |name: &str| {
            status.as_deref().ok().and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix(name))
                    .map(|v| v.trim().to_string())
            })
        };
        match (field("VmRSS:"), field("VmHWM:")) {
            (Some(rss), Some(hwm)) => format!("VmRSS {rss} (peak VmHWM {hwm})"),
            _ => "unknown (/proc/<pid>/status unreadable)".to_string(),
        }
    }

    /// SIGTERM, wait for a clean exit, then count the logged hook events.
    fn stop(mut self) -> Result<Option<usize>> {
        let status = self.terminate()?;
        if !status.success() {
            return Err(format!(
                "hookd serve exited with {status} on SIGTERM:\n{}",
                self.stderr_text()
            ));
        }
        Ok(fs::read_to_string(&self.log).ok().map(|log| {
            log.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|v| v["type"] == "event")
                .count()
        }))
    }

    /// Sends SIGTERM (through `kill(1)`: the bench is std-only) and waits up
    /// to 10 s before SIGKILL.
    fn terminate(&mut self) -> Result<ExitStatus> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Ok(status);
        }
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            match self.child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) => thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(format!("waiting for hookd serve: {e}")),
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        Err("hookd serve ignored SIGTERM for 10 s; killed".to_string())
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.terminate();
    }
}

/// 100 rules in the format of issue #3, across tools and pattern kinds, none
/// of which matches [`INPUT`] (`Bash(echo hello > out.txt)`).
fn rules_toml() -> String {
    const BASH: [&str; 36] = [
        "rm",
        "rmdir",
        "sudo",
        "su",
        "chmod",
        "chown",
        "dd",
        "mkfs",
        "shutdown",
        "reboot",
        "curl",
        "wget",
        "ssh",
        "scp",
        "nc",
        "git push",
        "git reset --hard",
        "git clean",
        "git rebase",
        "git commit --amend",
        "npm publish",
        "cargo publish",
        "docker run",
        "docker rm",
        "kubectl delete",
        "kubectl apply",
        "terraform apply",
        "terraform destroy",
        "pip install",
        "brew install",
        "mv",
        "truncate",
        "killall",
        "pkill",
        "crontab",
        "shred",
    ];
    const PATHS: [&str; 12] = [
        "./.env*",
        "./secrets/**",
        "~/.ssh/**",
        "~/.aws/**",
        "~/.gnupg/**",
        "~/.config/gh/hosts.yml",
        "//etc/shadow",
        "//etc/sudoers",
        "./**/*.pem",
        "./**/*.key",
        "./.git/config",
        "./node_modules/**",
    ];
    const EDITED: [&str; 8] = [
        "src/**",
        "Cargo.lock",
        "package-lock.json",
        ".github/workflows/**",
        "migrations/**",
        "vendor/**",
        "LICENSE",
        ".claude/settings.json",
    ];
    const DOMAINS: [&str; 12] = [
        "example.com",
        "pastebin.com",
        "gist.github.com",
        "transfer.sh",
        "ngrok.io",
        "webhook.site",
        "requestbin.net",
        "0x0.st",
        "dropboxusercontent.com",
        "drive.google.com",
        "discord.com",
        "api.telegram.org",
    ];
    const OTHERS: [&str; 9] = [
        "mcp__github__*",
        "mcp__github__delete_repository",
        "mcp__slack__post_message",
        "mcp__filesystem__write_file",
        "mcp__postgres__query",
        "mcp__linear__*",
        "mcp__aws__*",
        "mcp__gmail__send_email",
        "mcp__stripe__*",
    ];
    let mut rules: Vec<(&str, String, String)> = Vec::new();
    for (i, cmd) in BASH.iter().enumerate() {
        let action = if i % 3 == 2 { "ask" } else { "deny" };
        rules.push((
            action,
            format!("Bash({cmd}:*)"),
            format!("`{cmd}` is not run by agents here"),
        ));
    }
    for tool in ["Read", "Edit"] {
        for path in PATHS {
            rules.push((
                "deny",
                format!("{tool}({path})"),
                format!("{path} holds secrets"),
            ));
        }
    }
    for tool in ["Edit", "Write"] {
        for path in EDITED {
            rules.push((
                "ask",
                format!("{tool}({path})"),
                format!("{path} is reviewed by a human"),
            ));
        }
    }
    for domain in DOMAINS {
        rules.push((
            "deny",
            format!("WebFetch(domain:{domain})"),
            format!("{domain} is not an approved source"),
        ));
    }
    for tool in OTHERS {
        rules.push((
            "ask",
            tool.to_string(),
            format!("{tool} acts outside this machine"),
        ));
    }
    for (tool, reason) in [
        ("WebSearch", "search goes through the proxy"),
        ("NotebookEdit", "notebooks are edited by hand"),
        ("Task", "no sub-agents in this project"),
    ] {
        rules.push(("deny", tool.to_string(), reason.to_string()));
    }
    rules.truncate(RULES);
    assert_eq!(rules.len(), RULES, "the lists above make {RULES} rules");

    let mut toml = String::from("# Generated by benches/forwarder.rs; none matches its input.\n");
    for (i, (action, tool, reason)) in rules.iter().enumerate() {
        // serde_json's string escaping is valid TOML basic-string escaping
        // for this text.
        let quote = |s: &str| serde_json::to_string(s).expect("a string serializes");
        let _ = write!(
            toml,
            "\n[[rule]]\nid = \"r{:03}\"\naction = \"{action}\"\ntool = {}\nreason = {}\n",
            i + 1,
            quote(tool),
            quote(reason)
        );
    }
    toml
}

/// One measured command.
struct Subject {
    label: &'static str,
    /// Reused: `Command::spawn` may be called any number of times.
    command: Command,
    /// A forwarder: must exit 0 without a fallback line.
    forwards: bool,
    samples: Vec<Duration>,
}

/// One run's result.
struct Run {
    elapsed: Duration,
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Subject {
    fn new(label: &'static str, command: Command, forwards: bool) -> Subject {
        Subject {
            label,
            command,
            forwards,
            samples: Vec::new(),
        }
    }

    /// Spawns, writes [`INPUT`] to stdin, closes it, collects the output and
    /// waits: the whole of what Claude Code does per hook.
    fn run_once(&mut self) -> Result<Run> {
        let started = Instant::now();
        let mut child = self
            .command
            .spawn()
            .map_err(|e| format!("{}: cannot spawn: {e}", self.label))?;
        let mut stdin = child.stdin.take().expect("stdin is piped");
        match stdin.write_all(INPUT.as_bytes()) {
            // `/bin/true` may exit before reading.
            Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
                return Err(format!("{}: writing stdin: {e}", self.label))
            }
            _ => drop(stdin),
        }
        let output = child
            .wait_with_output()
            .map_err(|e| format!("{}: waiting: {e}", self.label))?;
        let elapsed = started.elapsed();
        let run = Run {
            elapsed,
            code: output.status.code(),
            stdout: output.stdout,
            stderr: output.stderr,
        };
        if self.forwards {
            let stderr = String::from_utf8_lossy(&run.stderr);
            if run.code != Some(0) || stderr.contains("hookd-forwarder: fallback") {
                return Err(format!(
                    "{} did not get the daemon's answer ({}); stderr:\n{stderr}",
                    self.label, output.status
                ));
            }
        }
        Ok(run)
    }
}

/// Runs every forwarder once and requires the same exit code, stdout and
/// stderr from all: the scripts must do the Rust forwarder's work, no less.
fn check_equivalence(subjects: &mut [Subject]) -> Result<()> {
    let mut reference: Option<(&str, Run)> = None;
    for subject in subjects.iter_mut().filter(|s| s.forwards) {
        let run = subject.run_once()?;
        match &reference {
            None => reference = Some((subject.label, run)),
            Some((label, first)) => {
                if (run.code, &run.stdout, &run.stderr)
                    != (first.code, &first.stdout, &first.stderr)
                {
                    return Err(format!(
                        "{} and {label} answered differently:\n  {:?} {:?} {:?}\n  {:?} {:?} {:?}",
                        subject.label,
                        run.code,
                        String::from_utf8_lossy(&run.stdout),
                        String::from_utf8_lossy(&run.stderr),
                        first.code,
                        String::from_utf8_lossy(&first.stdout),
                        String::from_utf8_lossy(&first.stderr),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// µs below 10 ms, ms above.
fn human(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 10_000.0 {
        format!("{us:.0} µs")
    } else {
        format!("{:.1} ms", us / 1000.0)
    }
}

fn print_report(subjects: &[Subject], iters: usize, forwarder: &Path) {
    let medians: Vec<Duration> = subjects
        .iter()
        .map(|s| {
            let mut sorted = s.samples.clone();
            sorted.sort();
            percentile(&sorted, 50.0)
        })
        .collect();
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    let (true_median, fwd_median) = (medians[0], medians[1]);

    println!();
    println!(
        "hook round trip, spawn to exit: {iters} runs each after {WARMUP} warm-up, in rounds of shuffled order; \
         daemon with {RULES} rules, none matching"
    );
    if let Ok(meta) = fs::metadata(forwarder) {
        println!(
            "hook-forwarder: {} ({} KiB)",
            forwarder.display(),
            meta.len() / 1024
        );
    }
    println!();
    println!(
        "{:<22} {:>10} {:>10} {:>10} {:>12} {:>16}",
        "command", "median", "p90", "p99", "/ /bin/true", "/ hook-forwarder"
    );
    for (subject, &median) in subjects.iter().zip(&medians) {
        let mut sorted = subject.samples.clone();
        sorted.sort();
        println!(
            "{:<22} {:>10} {:>10} {:>10} {:>11.2}× {:>15.1}×",
            subject.label,
            human(median),
            human(percentile(&sorted, 90.0)),
            human(percentile(&sorted, 99.0)),
            ratio(median, true_median),
            ratio(median, fwd_median),
        );
    }
    println!();

    let verdict = |met: bool| if met { "met" } else { "NOT met" };
    let node = subjects
        .iter()
        .zip(&medians)
        .find(|(s, _)| s.label.starts_with("node"))
        .map(|(_, &m)| m);
    let noop = subjects
        .iter()
        .zip(&medians)
        .find(|(s, _)| s.label == NOOP)
        .map(|(_, &m)| m);
    for (subject, &median) in subjects.iter().zip(&medians) {
        if !subject.forwards
            || subject.label.starts_with("node")
            || subject.label.starts_with("python")
        {
            continue;
        }
        let vs_true = ratio(median, true_median);
        println!(
            "target: {} ≤ {TARGET_VS_TRUE}× /bin/true: {vs_true:.3}× — {}",
            subject.label,
            verdict(vs_true <= TARGET_VS_TRUE)
        );
        match noop {
            Some(noop) => {
                let vs_noop = ratio(median, noop);
                println!(
                    "target: {} ≤ {TARGET_VS_NOOP}× a static no-op: {vs_noop:.3}× — {}",
                    subject.label,
                    verdict(vs_noop <= TARGET_VS_NOOP)
                );
            }
            None => println!(
                "target: {} ≤ {TARGET_VS_NOOP}× a static no-op: not measured",
                subject.label
            ),
        }
        match node {
            Some(node) => {
                let vs_node = ratio(node, median);
                println!(
                    "target: {} ≥ {TARGET_VS_NODE}× faster than Node: {vs_node:.1}× — {}",
                    subject.label,
                    verdict(vs_node >= TARGET_VS_NODE)
                );
            }
            None => println!(
                "target: {} ≥ {TARGET_VS_NODE}× faster than Node: not measured",
                subject.label
            ),
        }
    }
}
