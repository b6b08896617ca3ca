//! `[signals.NAME]`: commands whose output rules read as `$signal.NAME`
//! (see `hookd_core::rules::signal`).
//!
//! ```toml
//! [signals.branch]
//! command = ["git", "branch", "--show-current"]   # argv, no shell
//! ttl = "30s"       # how long a value holds (default 30s)
//! timeout = "2s"    # the command's limit (default 2s)
//! ```
//!
//! The daemon runs a signal's command in the session's project directory
//! (its `cwd` when it names none), at most once per `ttl` per project, off
//! the hook path: a hook reads the cached value ([`SignalCache::values`]).
//! When the value is stale the hook takes it as it is and a refresh starts
//! in the background; only a project's *first* hook waits for the command,
//! and no longer than [`FIRST_WAIT`] (or the signal's `timeout`, if
//! shorter): past that the signal is *unknown* for that hook. A command
//! that fails (non-zero exit, killed at its timeout, not found) leaves the
//! signal unknown until it succeeds again, and is counted in `status`
//! (`signals.failures`). The value is the standard output, trimmed, its
//! first [`MAX_VALUE`] bytes. Nothing runs while no hook comes, and nothing
//! at all without `[signals]`.
//!
//! The values a judgement read reach the rules as `Query::signals` and are
//! recorded in the decision line's `signals`, which `hookd replay` uses.

use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::rules::signal::Signals;

/// The longest a project's first hook waits for a signal's first value.
pub const FIRST_WAIT: Duration = Duration::from_millis(500);
/// A value's bytes kept at most.
pub const MAX_VALUE: usize = 256;
/// Default `ttl`.
pub const DEFAULT_TTL: Duration = Duration::from_secs(30);
/// Default `timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);
/// (signal, project) entries kept at most; past that the oldest is dropped.
pub const MAX_ENTRIES: usize = 1024;

/// One `[signals.NAME]` table.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignalConfig {
    /// The argv, run in the session's project directory; no shell unless
    /// the argv names one.
    pub command: Vec<String>,
    /// How long a value holds, as `"30s"`.
    #[serde(default)]
    pub ttl: Option<String>,
    /// The command's time limit, as `"2s"`.
    #[serde(default)]
    pub timeout: Option<String>,
}

impl SignalConfig {
    /// Check a table: a non-empty argv and readable durations.
    pub fn validate(&self) -> Result<(), String> {
        if self.command.first().is_none_or(|p| p.is_empty()) {
            return Err(
                "`command` must name a program, as [\"git\", \"branch\", \"--show-current\"]"
                    .into(),
            );
        }
        for (key, v) in [("ttl", &self.ttl), ("timeout", &self.timeout)] {
            if let Some(v) = v {
                if duration_ms(v).is_none() {
                    return Err(format!(
                        "`{key}`: {v:?} is not a duration such as \"30s\" or \"500ms\""
                    ));
                }
            }
        }
        Ok(())
    }
}

impl SignalConfig {
    /// `ttl`, or [`DEFAULT_TTL`].
    pub fn ttl(&self) -> Duration {
        self.ttl
            .as_deref()
            .and_then(duration_ms)
            .map_or(DEFAULT_TTL, Duration::from_millis)
    }

    /// `timeout`, or [`DEFAULT_TIMEOUT`].
    pub fn timeout(&self) -> Duration {
        self.timeout
            .as_deref()
            .and_then(duration_ms)
            .map_or(DEFAULT_TIMEOUT, Duration::from_millis)
    }
}

/// One signal in one project.
struct Entry {
    /// The last good value and when the command that gave it started.
    value: Option<(String, Instant)>,
    /// When the last run started (a refresh is under way while it has no
    /// result yet).
    started: Option<Instant>,
    /// Sent `true` when a run ends: the first hook waits for it.
    done: tokio::sync::watch::Sender<bool>,
    /// Last touched, for the bound.
    used: Instant,
}

/// The daemon's signal values, per (signal, project directory).
#[derive(Default)]
pub struct SignalCache {
    entries: Mutex<HashMap<(String, PathBuf), Entry>>,
    runs: AtomicU64,
    failures: AtomicU64,
}

impl SignalCache {
    /// The values of `config`'s signals for a hook in `dir`: the cached
    /// ones, refreshed in the background when stale; a first value waited
    /// for at most [`FIRST_WAIT`]. Unknown signals are absent.
    pub async fn values(
        self: &Arc<Self>,
        config: &BTreeMap<String, SignalConfig>,
        dir: &Path,
    ) -> Signals {
        let mut signals = Signals::new();
        let mut waits = Vec::new();
        for (name, signal) in config {
            let now = Instant::now();
            let key = (name.clone(), dir.to_path_buf());
            let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if !entries.contains_key(&key) && entries.len() >= MAX_ENTRIES {
                if let Some(old) = entries
                    .iter()
                    .min_by_key(|(_, e)| e.used)
                    .map(|(k, _)| k.clone())
                {
                    entries.remove(&old);
                }
            }
            let entry = entries.entry(key.clone()).or_insert_with(|| Entry {
                value: None,
                started: None,
                done: tokio::sync::watch::channel(false).0,
                used: now,
            });
            entry.used = now;
            let fresh = entry
                .value
                .as_ref()
                .is_some_and(|(_, at)| now.duration_since(*at) < signal.ttl());
            // A run under way, or one that failed less than a ttl ago.
            let recently_run = entry
                .started
                .is_some_and(|at| now.duration_since(at) < signal.ttl().max(signal.timeout()));
            if !fresh && !recently_run {
                entry.started = Some(now);
                entry.done.send_replace(false);
                self.refresh(key.clone(), signal.clone());
            }
            match &entry.value {
                Some((v, _)) => {
                    signals = signals.with(name, v);
                }
                None if entry
                    .started
                    .is_some_and(|at| now.duration_since(at) < signal.timeout()) =>
                {
                    waits.push((name.clone(), key, signal.timeout(), entry.done.subscribe()));
                }
                None => {}
            }
        }
        for (name, key, timeout, mut done) in waits {
            let wait = FIRST_WAIT.min(timeout);
            let _ = tokio::time::timeout(wait, done.wait_for(|d| *d)).await;
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((v, _)) = entries.get(&key).and_then(|e| e.value.as_ref()) {
                signals = signals.with(&name, v);
            }
        }
        signals
    }

    /// Runs `signal` for `key` in the background and stores its value.
    fn refresh(self: &Arc<Self>, key: (String, PathBuf), signal: SignalConfig) {
        let cache = self.clone();
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            cache.runs.fetch_add(1, Ordering::Relaxed);
            let started = Instant::now();
            let value = run(&signal, &key.1).await;
            if let Err(why) = &value {
                cache.failures.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(signal = %key.0, dir = %key.1.display(), why, "a signal's command failed; the signal is unknown");
            }
            let mut entries = cache.entries.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(entry) = entries.get_mut(&key) {
                if let Ok(v) = value {
                    entry.value = Some((v, started));
                    // A later stale read starts the next run.
                    entry.started = None;
                }
                entry.done.send_replace(true);
            }
        });
    }

    /// `status.signals`: runs and failures since the daemon started, and the
    /// (signal, project) values held.
    pub fn status(&self) -> crate::protocol::status::SignalsStatus {
        crate::protocol::status::SignalsStatus {
            runs: self.runs.load(Ordering::Relaxed),
            failures: self.failures.load(Ordering::Relaxed),
            cached: self.entries.lock().unwrap_or_else(|e| e.into_inner()).len() as u64,
        }
    }
}

/// Runs `signal`'s command in `dir`: its trimmed, bounded output, or why not.
async fn run(signal: &SignalConfig, dir: &Path) -> Result<String, String> {
    let (program, args) = signal
        .command
        .split_first()
        .ok_or_else(|| "no command".to_string())?;
    let child = tokio::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    let out = tokio::time::timeout(signal.timeout(), child.wait_with_output())
        .await
        .map_err(|_| format!("timed out after {:?}", signal.timeout()))?
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("exited with {}", out.status));
    }
    Ok(value_of(&out.stdout))
}

/// A signal's value from its command's standard output: trimmed, its
/// first [`MAX_VALUE`] bytes.
fn value_of(stdout: &[u8]) -> String {
    let text = String::from_utf8_lossy(stdout);
    let mut value = text.trim().to_string();
    if value.len() > MAX_VALUE {
        let mut end = MAX_VALUE;
        while !value.is_char_boundary(end) {
            end -= 1;
        }
        value.truncate(end);
    }
    value
}

/// Runs `signal`'s command in `dir` now, on this thread, as the daemon
/// would (killed at its `timeout`): its value, or why there is none. For
/// `hookd replay --rerun-signals`, which has no runtime and no cache.
pub fn run_blocking(signal: &SignalConfig, dir: &Path) -> Result<String, String> {
    use std::io::Read as _;
    let (program, args) = signal
        .command
        .split_first()
        .ok_or_else(|| "no command".to_string())?;
    let mut child = std::process::Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("{program}: {e}"))?;
    // The output is read on another thread, so a command that fills the
    // pipe cannot outlive its timeout.
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + signal.timeout();
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => break status,
            None if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {:?}", signal.timeout()));
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let out = reader.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("exited with {status}"));
    }
    Ok(value_of(&out))
}

/// `"3s"`, `"500ms"`, `"1m"` in milliseconds.
fn duration_ms(s: &str) -> Option<u64> {
    let s = s.trim();
    let (n, mult) = if let Some(n) = s.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = s.strip_suffix('s') {
        (n, 1_000)
    } else if let Some(n) = s.strip_suffix('m') {
        (n, 60_000)
    } else {
        return None;
    };
    n.trim()
        .parse::<u64>()
        .ok()?
        .checked_mul(mult)
        .filter(|&ms| ms > 0)
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use std::path::Path;

    #[test]
    fn a_blocking_run_gives_the_value_or_why_not() {
        let config = |argv: &[&str], timeout: &str| super::SignalConfig {
            command: argv.iter().map(|s| s.to_string()).collect(),
            ttl: None,
            timeout: Some(timeout.into()),
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("marker"), "").unwrap();
        let ls = config(&["ls"], "2s");
        assert_eq!(super::run_blocking(&ls, dir.path()).unwrap(), "marker");
        let failing = config(&["false"], "2s");
        assert!(super::run_blocking(&failing, dir.path())
            .unwrap_err()
            .contains("exited"));
        let slow = config(&["sleep", "5"], "100ms");
        assert!(super::run_blocking(&slow, dir.path())
            .unwrap_err()
            .contains("timed out"));
        let missing = config(&["no-such-program-hookd"], "1s");
        assert!(super::run_blocking(&missing, dir.path()).is_err());
    }

    #[test]
    fn signals_are_read_and_checked_with_their_place() {
        let ok = "[signals.branch]\ncommand = [\"git\", \"branch\", \"--show-current\"]\nttl = \"30s\"\n";
        let c = Config::parse(ok, Path::new("c.toml")).unwrap();
        assert_eq!(c.signals["branch"].command[0], "git");
        let empty = "[signals.branch]\ncommand = []\n";
        let e = Config::parse(empty, Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("c.toml:1:") && e.contains("signals.branch") && e.contains("`command`"),
            "{e}"
        );
        let bad = "[signals.ci]\ncommand = [\"true\"]\ntimeout = \"soon\"\n";
        let e = Config::parse(bad, Path::new("c.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`timeout`"), "{e}");
        let unknown = "[signals.ci]\ncommand = [\"true\"]\nshell = true\n";
        assert!(Config::parse(unknown, Path::new("c.toml")).is_err());
    }
}
