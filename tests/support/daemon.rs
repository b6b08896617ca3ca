//! Test support: the real `hookd` and `hook-forwarder` binaries on a temp socket.
//!
//! A test module takes it with `use crate::support::daemon;`. Every daemon is
//! ended by its pid (SIGTERM, then SIGKILL) and waited for; every path lives
//! in a temp dir removed on drop.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use super::process;
// Not every test crate that includes this module polls or skips.
#[allow(unused_imports)]
pub use process::{
    on_ci, poll_for, poll_last, poll_reporting, poll_until, skip_or_fail, wait_with_deadline,
};

use hookd::protocol::handshake::Handshake;
use hookd::protocol::log::LogRecord;
use serde_json::Value;

/// A PreToolUse hook input (the captured fixture) for `Bash(command)`.
pub fn bash(command: &str) -> Value {
    let mut input = fixture("PreToolUse.json");
    input["tool_input"]["command"] = Value::String(command.into());
    input
}

/// The PreToolUse permission decision the forwarder printed (`allow`,
/// `deny`, `ask`), `null` for no opinion (nothing printed).
pub fn permission_decision(out: &Output) -> Value {
    if out.stdout.is_empty() {
        return Value::Null;
    }
    stdout_json(out)["hookSpecificOutput"]["permissionDecision"].clone()
}

/// One `[[rule]]` of a rules file, its reason its id.
pub fn rule_toml(id: &str, action: &str, tool: &str) -> String {
    format!(
        "[[rule]]\nid = \"{id}\"\naction = \"{action}\"\ntool = \"{tool}\"\nreason = \"{id}\"\n"
    )
}

/// Path of the built `hookd` binary.
pub fn hookd_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hookd"))
}

/// Path of the `hook-forwarder` binary the tests run: the one `cargo test`
/// built, or the one `HOOKD_TEST_FORWARDER` names (`scripts/test` runs the
/// forwarder's tests again with the binary `scripts/install` installs,
/// built for musl: a different C library under the same code).
pub fn forwarder_bin() -> PathBuf {
    match std::env::var_os("HOOKD_TEST_FORWARDER") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => PathBuf::from(env!("CARGO_BIN_EXE_hook-forwarder")),
    }
}

/// A hook input from `tests/fixtures/events/`.
pub fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/events")
        .join(name);
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

/// A running `hookd serve`.
pub struct Daemon {
    /// The temp dir holding socket, log and rules.
    pub dir: tempfile::TempDir,
    /// The socket path.
    pub socket: PathBuf,
    /// The event log path.
    pub log: PathBuf,
    child: Option<Child>,
    stderr_path: PathBuf,
}

/// Options for [`Daemon::start_with`].
#[derive(Default, Clone)]
pub struct DaemonOptions {
    /// Contents of a rules file passed with `--rules`.
    pub rules: Option<String>,
    /// Contents of a config file passed with `--config`.
    pub config: Option<String>,
    /// Contents the log file has before the daemon starts.
    pub log_prefill: Option<String>,
    /// Use this log path instead of `<dir>/events.jsonl` (relative to the temp dir).
    pub log_path: Option<String>,
    /// Extra arguments to `hookd serve`.
    pub args: Vec<String>,
    /// Extra environment variables for the daemon (and so for the adapters
    /// it spawns), set last.
    pub env: Vec<(String, String)>,
    /// Start the daemon with only `PATH` and `env` (plus what this harness
    /// sets): nothing of the test runner's environment leaks into it.
    pub clear_env: bool,
    /// Run this `hookd` instead of the one cargo built for the tests.
    pub bin: Option<PathBuf>,
    /// Shell commands run (by `sh`) just before `exec`ing the daemon, e.g.
    /// `ulimit -Sn 1024`: limits and ignored signals are inherited.
    pub shell: Option<String>,
    /// Make the log a FIFO that nobody reads: the log writer blocks as on a
    /// stalled disk.
    pub log_fifo: bool,
}

impl Daemon {
    /// Starts a daemon with default options.
    pub fn start() -> Daemon {
        Daemon::start_with(DaemonOptions::default())
    }

    /// Starts a daemon and waits until its socket accepts.
    pub fn start_with(options: DaemonOptions) -> Daemon {
        let dir = tempfile::Builder::new()
            .prefix("hookd-test")
            .tempdir()
            .unwrap();
        let socket = dir.path().join("run").join("hookd.sock");
        let log = dir
            .path()
            .join(options.log_path.as_deref().unwrap_or("events.jsonl"));
        let stderr_path = dir.path().join("daemon.stderr");
        if let Some(prefill) = &options.log_prefill {
            std::fs::write(&log, prefill).unwrap();
        }
        if options.log_fifo {
            nix::unistd::mkfifo(&log, nix::sys::stat::Mode::S_IRWXU).unwrap();
        }
        let bin = options.bin.clone().unwrap_or_else(hookd_bin);
        let mut cmd = match &options.shell {
            // `exec` keeps the pid: the harness still ends the daemon by it.
            Some(commands) => {
                let mut cmd = Command::new("sh");
                cmd.arg("-c")
                    .arg(format!("{commands}\nexec \"$0\" \"$@\""))
                    .arg(&bin);
                cmd
            }
            None => Command::new(&bin),
        };
        if options.clear_env {
            cmd.env_clear();
            if let Some(path) = std::env::var_os("PATH") {
                cmd.env("PATH", path);
            }
        }
        cmd.arg("serve")
            .arg("--socket")
            .arg(&socket)
            .arg("--log")
            .arg(&log);
        if let Some(rules) = &options.rules {
            let path = dir.path().join("rules.toml");
            std::fs::write(&path, rules).unwrap();
            cmd.arg("--rules").arg(path);
        }
        if let Some(config) = &options.config {
            let path = dir.path().join("config.toml");
            std::fs::write(&path, config).unwrap();
            cmd.arg("--config").arg(path);
        }
        // The source tree's adapter (`npm ci --prefix adapter`), unless the
        // test gives the daemon a data directory of its own (and installs
        // the adapter there).
        if options.env.iter().any(|(k, _)| k == "XDG_DATA_HOME") {
            cmd.env_remove("HOOKD_ADAPTER_DIR");
        } else {
            cmd.env(
                "HOOKD_ADAPTER_DIR",
                concat!(env!("CARGO_MANIFEST_DIR"), "/adapter"),
            );
        }
        // A home of its own (the tests' `env` may still name other dirs).
        process::private_home(&mut cmd, dir.path());
        cmd.args(&options.args)
            .env("RUST_LOG", "hookd=debug")
            .env_remove("HOOKD_SOCKET")
            // No user rules or config file from the machine: the embedded defaults.
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .envs(options.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr_path).unwrap());
        let child = cmd.spawn().expect("spawn hookd");
        let mut daemon = Daemon {
            dir,
            socket,
            log,
            child: Some(child),
            stderr_path,
        };
        daemon.wait_until_ready();
        daemon
    }

    fn wait_until_ready(&mut self) {
        let what = format!("hookd to accept on {}", self.socket.display());
        poll_reporting(&what, Duration::from_secs(10), || {
            if UnixStream::connect(&self.socket).is_ok() {
                return Ok(());
            }
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("hookd exited early ({status}):\n{}", self.stderr());
            }
            Err(format!("its stderr:\n{}", self.stderr()))
        });
    }

    /// The daemon's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("daemon already stopped").id()
    }

    /// Everything the daemon logged on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Sends `signal` (e.g. "TERM", "KILL", "STOP", "CONT", "HUP") to the daemon's pid.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill -{signal} {}", self.pid());
    }

    /// SIGTERM, and wait (bounded) for the exit status.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        self.signal("TERM");
        self.wait_exit(Duration::from_secs(10))
    }

    /// Waits for the daemon to exit; panics after `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("daemon already stopped");
        if let Some(status) = process::wait_with_deadline(&mut child, limit) {
            return status;
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("hookd did not exit within {limit:?}:\n{}", self.stderr());
    }

    /// The event log, parsed (a torn last line is skipped).
    pub fn log_lines(&self) -> Vec<Value> {
        read_log(&self.log)
    }

    /// Waits until the log holds at least `n` lines (the writer is asynchronous).
    pub fn wait_log_lines(&self, n: usize) -> Vec<Value> {
        poll_last(
            Duration::from_secs(10),
            Duration::from_millis(10),
            || self.log_lines(),
            |lines| lines.len() >= n,
        )
    }

    /// The log's decision lines once there are at least `n` (within 10 s):
    /// the log is written behind the answers, so a test that has its
    /// forwarder's answer waits for the line.
    pub fn wait_decisions(&self, n: usize) -> Vec<Value> {
        let decisions = || -> Vec<Value> {
            self.log_lines()
                .into_iter()
                .filter(|l| l["type"] == "decision")
                .collect()
        };
        poll_until(
            &format!("{n} decisions in the log"),
            Duration::from_secs(10),
            || decisions().len() >= n,
        );
        decisions()
    }

    /// Runs the forwarder against this daemon.
    pub fn forward(&self, input: &Value, args: &[&str]) -> Output {
        run_forwarder(&self.socket, input.to_string().as_bytes(), args)
    }

    /// The `status` result once `pred` holds of it (within 10 s; `what`
    /// names the wait in the failure, with the status and the daemon's
    /// stderr).
    pub fn wait_for_status(&self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        poll_reporting(what, Duration::from_secs(10), || {
            let status = self.status();
            if pred(&status) {
                return Ok(status);
            }
            Err(format!("{status:#}\n{}", self.stderr()))
        })
    }

    /// The `status` result, through a new client connection.
    pub fn status(&self) -> Value {
        let mut c = RawClient::hello(&self.socket, "status");
        c.call(serde_json::json!({"type": "status"}))["result"].clone()
    }

    /// One of the `status` counters.
    pub fn counter(&self, name: &str) -> u64 {
        let status = self.status();
        status["counters"][name]
            .as_u64()
            .unwrap_or_else(|| panic!("no counter {name} in {status}"))
    }

    /// The daemon's resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/PID/status")
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-KILL")
                .arg(child.id().to_string())
                .status();
            let _ = child.wait();
        }
    }
}

/// Parses the event log, skipping a torn last line. Every other line must
/// read as a record [`LogRecord`] knows: whatever a test makes the daemon
/// write, the readers' one type (tail, replay, doctor) reads it.
pub fn read_log(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let value = serde_json::from_str(l).ok()?;
            match LogRecord::parse(l.as_bytes()) {
                Ok(LogRecord::Unknown) => panic!("a log line of no known type: {l}"),
                Ok(_) => Some(value),
                Err(e) => panic!("a log line LogRecord cannot read ({e}): {l}"),
            }
        })
        .collect()
}

/// Runs `hook-forwarder ARGS` with `HOOKD_SOCKET=socket` and `stdin` piped in.
pub fn run_forwarder(socket: &Path, stdin: &[u8], args: &[&str]) -> Output {
    let mut child = Command::new(forwarder_bin())
        .args(args)
        .env("HOOKD_SOCKET", socket)
        .env("CLAUDE_PROJECT_DIR", "/home/dev/project")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let input = stdin.to_vec();
    // Written from a thread: a large input must not deadlock against the
    // forwarder's own output.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// A raw protocol client for tests that speak frames directly.
pub struct RawClient {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

impl RawClient {
    /// Connects to `socket`.
    pub fn connect(socket: &Path) -> RawClient {
        let stream = UnixStream::connect(socket).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        RawClient {
            writer: stream.try_clone().unwrap(),
            reader: BufReader::new(stream),
        }
    }

    /// How long [`RawClient::recv`] waits for a frame (10 s unless set).
    pub fn set_read_timeout(&self, limit: Duration) {
        self.reader.get_ref().set_read_timeout(Some(limit)).unwrap();
    }

    /// Another handle on the connection's writing side (for a thread).
    pub fn try_clone_writer(&self) -> UnixStream {
        self.writer.try_clone().unwrap()
    }

    /// Writes raw bytes.
    pub fn send_raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.writer.write_all(bytes)
    }

    /// Writes one JSON frame.
    pub fn send(&mut self, frame: &Value) {
        let mut line = frame.to_string().into_bytes();
        line.push(b'\n');
        self.send_raw(&line).unwrap();
    }

    /// Reads one frame; `None` on EOF.
    pub fn recv(&mut self) -> Option<Value> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad frame {line:?}: {e}")),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => None,
            Err(e) => panic!("read failed: {e}"),
        }
    }

    /// Connects, says hello as `name` and checks the welcome, with the
    /// clients' own handshake.
    pub fn hello(socket: &Path, name: &str) -> RawClient {
        let mut c = RawClient::connect(socket);
        let handshake = Handshake::client(name);
        c.send_raw(&handshake.hello_line()).unwrap();
        let mut welcome = Vec::new();
        c.reader.read_until(b'\n', &mut welcome).unwrap();
        if let Err(e) = handshake.welcome(&welcome) {
            panic!("{name}: {e}");
        }
        c
    }

    /// Sends a request and returns its `ok`/`error` reply, skipping pushes.
    pub fn call(&mut self, mut request: Value) -> Value {
        let req = format!("r{}", rand_u32());
        request["req"] = Value::String(req.clone());
        self.send(&request);
        loop {
            let frame = self.recv().expect("a reply");
            if frame["req"] == req.as_str() {
                return frame;
            }
        }
    }

    /// Reads frames until one satisfies `pred` (panics on EOF or timeout).
    pub fn wait_for(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            match self.recv() {
                Some(frame) if pred(&frame) => return frame,
                Some(_) => continue,
                None => panic!("connection closed while waiting for {what}"),
            }
        }
    }

    /// True once the daemon has closed the connection.
    pub fn is_closed(&mut self) -> bool {
        let mut buf = [0u8; 1];
        matches!(self.reader.read(&mut buf), Ok(0) | Err(_))
    }
}

/// Parses the forwarder's stdout as one JSON object (panics if it is not).
pub fn stdout_json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {:?}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn rand_u32() -> u32 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Whether process `pid` has `path` open, read off `/proc/<pid>/fd` (so a
/// test waits for a reader to have a file open instead of guessing how long
/// it takes to start).
pub fn has_open(pid: u32, path: &Path) -> bool {
    let Ok(path) = std::fs::canonicalize(path) else {
        return false;
    };
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| target == path))
}

/// Raises this process's soft open-file limit to the hard limit and
/// returns it: tests that open thousands of connections need it.
pub fn raise_own_fd_limit() -> u64 {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    setrlimit(Resource::RLIMIT_NOFILE, hard, hard).unwrap();
    hard
}

/// Runs the forwarder on a thread; join the handle for its output.
pub fn forward_in_background(
    socket: &Path,
    input: &Value,
    args: &[&str],
) -> std::thread::JoinHandle<Output> {
    let socket = socket.to_path_buf();
    let input = input.to_string();
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    std::thread::spawn(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_forwarder(&socket, input.as_bytes(), &args)
    })
}
