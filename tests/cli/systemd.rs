//! systemd integration without systemd: the test plays its part, passing a
//! listening socket as fd 3 (LISTEN_FDS / LISTEN_PID) and receiving
//! sd_notify datagrams on a NOTIFY_SOCKET it binds.

use crate::support::daemon;

use std::os::fd::AsRawFd;
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use daemon::{fixture, run_forwarder};

/// Starts `hookd serve` the way systemd does for a socket-activated service.
fn activated(listener: &UnixListener, log: &Path, env: &[(&str, &str)]) -> Child {
    let fd = listener.as_raw_fd();
    let mut cmd = Command::new("sh");
    // `$$` is the shell's pid, which `exec` hands to hookd.
    cmd.arg("-c")
        .arg(r#"LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" serve --log "$1""#)
        .arg(daemon::hookd_bin())
        .arg(log)
        .envs(env.iter().copied())
        .env("RUST_LOG", "hookd=info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: dup2/fcntl are async-signal-safe; nothing else runs in the child.
    unsafe {
        cmd.pre_exec(move || {
            if fd == 3 {
                if libc::fcntl(3, libc::F_SETFD, 0) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(fd, 3) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn().unwrap()
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(child.id().to_string())
        .status();
    assert!(
        daemon::wait_with_deadline(child, Duration::from_secs(10)).is_some(),
        "hookd did not stop"
    );
}

struct Reaper(Vec<Child>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn a_restart_under_load_refuses_no_forwarder() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hookd.sock");
    // Like systemd, the test owns the listening socket across restarts.
    let listener = UnixListener::bind(&socket).unwrap();
    let log = dir.path().join("events.jsonl");
    let mut reaper = Reaper(vec![activated(&listener, &log, &[])]);

    const STREAMS: usize = 2;
    let running = Arc::new(AtomicBool::new(true));
    // Forwarders started, and forwarders that ended, across both streams.
    let started = Arc::new(AtomicUsize::new(0));
    let ended = Arc::new(AtomicUsize::new(0));
    let streams: Vec<_> = (0..STREAMS)
        .map(|_| {
            let (socket, running) = (socket.clone(), running.clone());
            let (started, ended) = (started.clone(), ended.clone());
            std::thread::spawn(move || {
                let input = fixture("PreToolUse.json").to_string();
                let mut outputs = Vec::new();
                while running.load(Ordering::Relaxed) {
                    started.fetch_add(1, Ordering::SeqCst);
                    outputs.push(run_forwarder(
                        &socket,
                        input.as_bytes(),
                        &["--timeout", "10"],
                    ));
                    ended.fetch_add(1, Ordering::SeqCst);
                }
                outputs
            })
        })
        .collect();
    let ended_at_least = |n: usize| {
        daemon::poll_until(
            &format!("{n} forwarders to end"),
            Duration::from_secs(30),
            || ended.load(Ordering::SeqCst) >= n,
        )
    };

    ended_at_least(10);
    stop(&mut reaper.0[0]);
    // The gap between the two daemons: each stream always has a forwarder
    // under way, so with the first daemon gone they queue in the backlog
    // (waiting for one to start here would wait out the queued ones'
    // timeout). The second daemon answers them, and each stream's next.
    let under_way = started.load(Ordering::SeqCst);
    reaper.0.push(activated(&listener, &log, &[]));
    ended_at_least(under_way + STREAMS);
    running.store(false, Ordering::Relaxed);

    let outputs: Vec<_> = streams
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    assert!(outputs.len() >= 10, "only {} forwarders ran", outputs.len());
    let fallbacks: Vec<String> = outputs
        .iter()
        .filter(|o| !o.stderr.is_empty() || o.status.code() != Some(0))
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .collect();
    assert!(
        fallbacks.is_empty(),
        "{} of {} forwarders fell back: {fallbacks:?}",
        fallbacks.len(),
        outputs.len()
    );
    // Stopping flushes the log (the writer is asynchronous).
    stop(&mut reaper.0[1]);
    // The socket was never removed: systemd owns it.
    assert!(socket.exists());
    let events = daemon::read_log(&log)
        .iter()
        .filter(|l| l["type"] == "event")
        .count();
    assert_eq!(
        events,
        outputs.len(),
        "every forwarder's hook reached a daemon"
    );
}

#[test]
fn ready_watchdog_and_stopping_are_sent_to_notify_socket() {
    let dir = tempfile::tempdir().unwrap();
    let listener = UnixListener::bind(dir.path().join("hookd.sock")).unwrap();
    let notify_path = dir.path().join("notify");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    notify
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let env = [
        ("NOTIFY_SOCKET", notify_path.to_str().unwrap()),
        ("WATCHDOG_USEC", "300000"),
    ];
    let mut reaper = Reaper(vec![activated(
        &listener,
        &dir.path().join("events.jsonl"),
        &env,
    )]);
    let recv = || {
        let mut buf = [0u8; 512];
        let n = notify.recv(&mut buf).expect("a notification");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    let ready = recv();
    assert!(ready.starts_with("READY=1\n"), "{ready}");
    assert!(
        ready.contains(&format!("MAINPID={}", reaper.0[0].id())),
        "{ready}"
    );
    for _ in 0..2 {
        assert_eq!(
            recv(),
            "WATCHDOG=1",
            "the watchdog is petted after each self-probe"
        );
    }
    stop(&mut reaper.0[0]);
    loop {
        let state = recv();
        if state == "STOPPING=1" {
            break;
        }
        assert_eq!(state, "WATCHDOG=1");
    }
}
