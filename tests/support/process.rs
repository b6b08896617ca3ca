//! Waiting for a child with a deadline, and ending it with everything it
//! started, by pid. Std only; the other support modules use it as
//! `super::process`.

// Each test crate uses a different subset of these helpers.
#![allow(dead_code)]

use std::fs;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Points `command`'s `HOME` and XDG base directories into `root` (made
/// here; the runtime directory mode 0700, as its users require): whatever
/// the child keeps "at home" lands in the test's temp dir, never in the
/// real home — Chromium's `~/.config/chromium` and dconf's `~/.cache/dconf`,
/// a shell's history, an agent CLI's settings. Every support harness that
/// starts a program other than `kill` goes through it (tests/repo/tidy.rs, and
/// scripts/home-guard around the whole suite).
pub fn private_home<'c>(command: &'c mut Command, root: &std::path::Path) -> &'c mut Command {
    use std::os::unix::fs::PermissionsExt;
    let home = root.join("home");
    let dirs = [
        ("HOME", home.clone()),
        ("XDG_CONFIG_HOME", home.join(".config")),
        ("XDG_CACHE_HOME", home.join(".cache")),
        ("XDG_DATA_HOME", home.join(".local/share")),
        ("XDG_STATE_HOME", home.join(".local/state")),
        ("XDG_RUNTIME_DIR", root.join("runtime")),
    ];
    for (name, dir) in &dirs {
        fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        if *name == "XDG_RUNTIME_DIR" {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700)).unwrap();
        }
        command.env(name, dir);
    }
    command
}

/// Whether Node.js is missing (`node` on no directory of `PATH`); if so,
/// [`skip_or_fail`]s `test`. Tests that run the Agent SDK or a
/// Node-launched CLI call it first: a machine without Node skips them with
/// this message instead of failing; a machine with Node but without the npm
/// packages still fails, saying what to install.
pub fn node_absent(test: &str) -> bool {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join("node").is_file()));
    if !found {
        skip_or_fail(test, "needs Node.js, and `node` is not on PATH");
    }
    !found
}

/// Whether the tests run on CI (`CI=true`, as `.ci/run` is started): there
/// every program a test needs is installed (scripts/test sees to it), so a
/// missing one is a broken setup, not a reason to skip.
pub fn on_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| v == "true")
}

/// Says on stderr that `test` is skipped because of `reason` (what it
/// needs and is missing: "needs Node.js, and …"), as `skipped: <test>
/// <reason>`; on CI ([`on_ci`]) panics with that instead, so a broken CI
/// setup fails rather than passing with the test unrun. The caller returns
/// right after.
pub fn skip_or_fail(test: &str, reason: &str) {
    if on_ci() {
        panic!("{test} {reason}: on CI (CI=true) that is a broken setup, not a skip");
    }
    eprintln!("skipped: {test} {reason}");
}

/// How often [`poll_reporting`], [`poll_for`] and [`poll_until`] probe.
const POLL_EVERY: Duration = Duration::from_millis(10);

/// Calls `probe` every 10 ms until it returns `Ok`, and returns that: a bounded wait on
/// a condition the test cannot be told about (a counter, a log line, a
/// child's open files). `Err` carries what the probe saw; after `limit`
/// (a ceiling for a loaded machine, not a duration the test relies on) the
/// last one (if not empty) is in the panic, after `what`.
pub fn poll_reporting<T>(
    what: &str,
    limit: Duration,
    mut probe: impl FnMut() -> Result<T, String>,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        match probe() {
            Ok(found) => return found,
            Err(seen) if Instant::now() >= deadline => {
                let seen = if seen.is_empty() {
                    seen
                } else {
                    format!(": {seen}")
                };
                panic!("gave up after {limit:?} waiting for {what}{seen}")
            }
            Err(_) => thread::sleep(POLL_EVERY),
        }
    }
}

/// [`poll_reporting`] for a probe that has nothing to report: returns what
/// it finds once it finds it.
pub fn poll_for<T>(what: &str, limit: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    poll_reporting(what, limit, || probe().ok_or_else(String::new))
}

/// The first value of `probe` (called every `every`) that `done` accepts,
/// or the last one read once `limit` has passed, without panicking: for
/// callers that assert on what they get, whose own assertion says more
/// than a timeout would, or that poll at a pace of their own (a tmux pane
/// read every 20 ms, which the approver's measured latencies assume).
pub fn poll_last<T>(
    limit: Duration,
    every: Duration,
    mut probe: impl FnMut() -> T,
    done: impl Fn(&T) -> bool,
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        let seen = probe();
        if done(&seen) || Instant::now() >= deadline {
            return seen;
        }
        thread::sleep(every);
    }
}

/// [`poll_reporting`] for a condition: returns once `ok` holds.
pub fn poll_until(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    poll_for(what, limit, || ok().then_some(()))
}

/// Waits for `child` until `limit` has passed; `None` if it is still running.
pub fn wait_with_deadline(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() >= deadline => return None,
            Ok(None) => thread::sleep(Duration::from_millis(10)),
            Err(e) => panic!("waiting for child {}: {e}", child.id()),
        }
    }
}

/// Pids of all living descendants of `pid`, found through the ppid field of
/// `/proc/<pid>/stat`.
pub fn descendants(pid: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for entry in fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(p) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces and parens, so
        // parse after the last ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|f| f.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parent_of.push((p, ppid));
        }
    }
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// Kills `child` (spawned with `process_group(0)`, so its group id is its
/// pid), its group and every descendant, by pid, and reaps it. The
/// descendants are collected first, while they are still linked to it: the
/// agent CLIs start tools and hooks in process groups of their own.
pub fn kill_process_tree(child: &mut Child) {
    let pid = child.id();
    let mut targets = vec![format!("-{pid}")];
    targets.extend(descendants(pid).iter().map(|p| p.to_string()));
    // std has no kill(2) for arbitrary pids; /bin/kill takes a negative pid
    // for a process group.
    let _ = Command::new("kill")
        .arg("-KILL")
        .arg("--")
        .args(&targets)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}
