//! Test support: a real terminal, tmux on a private socket.
//!
//! A test module takes it with `use crate::support::tmux;`. Each [`Tmux`] is
//! its own tmux server (`tmux -S <temp dir>/tmux.sock`, no user config)
//! with one window of a fixed size running one command under
//! `TERM=xterm-256color`. The pane is read as plain text (`capture-pane
//! -p`); [`Tmux::wait_for`] polls it until a text shows up. On drop the
//! server is killed by its pid (`#{pid}`), never by name, and the dir is
//! removed.
#![allow(dead_code)]

use super::process;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// Columns of every test terminal.
pub const WIDTH: u16 = 120;
/// Rows of every test terminal.
pub const HEIGHT: u16 = 40;

/// How often [`Tmux::wait_for`] reads the pane.
const POLL: Duration = Duration::from_millis(20);

/// A tmux server with one pane running a command.
pub struct Tmux {
    dir: tempfile::TempDir,
    socket: PathBuf,
    server_pid: u32,
}

impl Tmux {
    /// Starts a server whose one pane runs `program args` with `env` added
    /// to a clean environment (`PATH`, `HOME` of the test, `TERM`,
    /// `LANG=C.UTF-8`). The pane stays open after the command exits, so its
    /// last screen can still be read.
    pub fn start<I, S>(program: &Path, args: I, env: &[(&str, &OsStr)]) -> Tmux
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Self::start_in(program, args, env, None)
    }

    /// [`Tmux::start`] with the pane's working directory `cwd`.
    pub fn start_in<I, S>(
        program: &Path,
        args: I,
        env: &[(&str, &OsStr)],
        cwd: Option<&Path>,
    ) -> Tmux
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let dir = tempfile::Builder::new()
            .prefix("hookd-tmux")
            .tempdir()
            .expect("temp dir for tmux");
        let socket = dir.path().join("tmux.sock");
        // No user config; the pane (and what it last showed) stays when its
        // command exits, however soon that is.
        let config = dir.path().join("tmux.conf");
        std::fs::write(
            &config,
            "set -g remain-on-exit on\nset -g history-limit 0\n",
        )
        .expect("write tmux.conf");
        let mut cmd = Command::new("tmux");
        // The server's environment is every pane's: a home of its own.
        process::private_home(&mut cmd, dir.path());
        cmd.arg("-S")
            .arg(&socket)
            .arg("-f")
            .arg(&config)
            .args(["new-session", "-d", "-x"])
            .arg(WIDTH.to_string())
            .arg("-y")
            .arg(HEIGHT.to_string());
        if let Some(cwd) = cwd {
            cmd.arg("-c").arg(cwd);
        }
        // The pane's command gets exactly this environment: `env -i` so
        // nothing of the test runner's (HOOKD_SOCKET, NO_COLOR, …) leaks in.
        cmd.arg("--").arg("env").arg("-i");
        let mut vars: Vec<(String, std::ffi::OsString)> = vec![
            ("TERM".into(), "xterm-256color".into()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        for key in ["PATH", "HOME"] {
            if let Some(value) = std::env::var_os(key) {
                vars.push((key.into(), value));
            }
        }
        vars.extend(env.iter().map(|(k, v)| (k.to_string(), v.to_os_string())));
        for (key, value) in vars {
            let mut pair = std::ffi::OsString::from(format!("{key}="));
            pair.push(value);
            cmd.arg(pair);
        }
        cmd.arg(program).args(args);
        cmd.env("TERM", "xterm-256color").env_remove("TMUX");
        let out = cmd
            .output()
            .expect("run tmux (is it installed? scripts/test installs it)");
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut tmux = Tmux {
            dir,
            socket,
            server_pid: 0,
        };
        tmux.server_pid = tmux
            .query("#{pid}")
            .trim()
            .parse()
            .expect("tmux prints its server's pid");
        tmux
    }

    /// Runs `tmux -S <socket> ARGS` and asserts it succeeded.
    pub fn tmux<I, S>(&self, args: I) -> Output
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new("tmux");
        let out = process::private_home(&mut command, self.dir.path())
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env_remove("TMUX")
            .stdin(Stdio::null())
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// A format (`#{pane_pid}`, `#{pid}`, …) evaluated by tmux for the pane.
    pub fn query(&self, format: &str) -> String {
        let out = self.tmux(["display-message", "-p", "-t", "0", format]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The tmux server's pid.
    pub fn server_pid(&self) -> u32 {
        self.server_pid
    }

    /// The pid of the pane's process (`env -i` execs the command, so it is
    /// the command's own pid).
    pub fn pane_pid(&self) -> u32 {
        self.query("#{pane_pid}")
            .trim()
            .parse()
            .expect("tmux prints the pane's pid")
    }

    /// Whether the pane's command has exited.
    pub fn pane_dead(&self) -> bool {
        self.query("#{pane_dead}").trim() == "1"
    }

    /// Sends keys in tmux's key syntax (`y`, `Enter`, `C-c`, `Tab`, …), one
    /// key per argument.
    pub fn send_keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.tmux(args);
    }

    /// Types `text` literally (no key names).
    pub fn type_text(&self, text: &str) {
        self.tmux(["send-keys", "-t", "0", "-l", text]);
    }

    /// The visible pane as plain text, one line per row.
    pub fn capture_pane(&self) -> String {
        let out = self.tmux(["capture-pane", "-p", "-t", "0"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls the pane until it shows `text`; returns that screen. Panics
    /// with the last screen after `timeout`.
    pub fn wait_for(&self, text: &str, timeout: Duration) -> String {
        self.wait_until(timeout, &format!("`{text}`"), |screen| {
            screen.contains(text)
        })
    }

    /// Polls the pane until it no longer shows `text`; returns that screen.
    pub fn wait_gone(&self, text: &str, timeout: Duration) -> String {
        self.wait_until(timeout, &format!("`{text}` to go"), |screen| {
            !screen.contains(text)
        })
    }

    /// Polls the pane until `done(screen)`; returns that screen. Panics with
    /// the last screen after `timeout`, saying it waited for `what`.
    pub fn wait_until(&self, timeout: Duration, what: &str, done: impl Fn(&str) -> bool) -> String {
        let screen = process::poll_last(timeout, POLL, || self.capture_pane(), |s| done(s));
        assert!(
            done(&screen),
            "waited {timeout:?} for {what}; the pane shows:\n{screen}"
        );
        screen
    }

    /// The temp dir this server lives in (free for the test's own files).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        if self.server_pid == 0 {
            return;
        }
        // SIGTERM lets tmux hang its panes up (their processes get SIGHUP);
        // SIGKILL if it has not gone within two seconds.
        for (signal, patience) in [("-TERM", 2), ("-KILL", 2)] {
            let _ = Command::new("kill")
                .arg(signal)
                .arg(self.server_pid.to_string())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let patience = Duration::from_secs(patience);
            if !process::poll_last(
                patience,
                Duration::from_millis(10),
                || alive(self.server_pid),
                |up| !up,
            ) {
                return;
            }
        }
    }
}

/// Whether `pid` runs (a zombie waiting for its reaper does not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}
