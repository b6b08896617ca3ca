//! Test support: `hookd approve --plain` through pipes, its stdout lines
//! arriving on a channel; ended by its pid (SIGKILL) and reaped on drop.
//!
//! A test module takes it with `use crate::support::plain::Plain;`.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long [`Plain::expect`] waits for its line.
pub const WAIT: Duration = Duration::from_secs(15);

/// Line mode through pipes.
pub struct Plain {
    /// The process (its stdin piped: [`Plain::say`]).
    pub child: Child,
    /// Its stdout's lines, until it closes.
    pub lines: mpsc::Receiver<String>,
}

impl Plain {
    /// Spawns `command` (`hookd approve --plain …`) with stdin and stdout
    /// piped, stderr inherited.
    pub fn spawn(command: &mut Command) -> Plain {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Plain { child, lines }
    }

    /// Types `line` and Enter.
    pub fn say(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads lines until one contains `text` (within [`WAIT`]); returns it.
    pub fn expect(&self, text: &str) -> String {
        self.expect_lines(text).pop().expect("the line found")
    }

    /// Reads lines until one contains `text`, as [`Plain::expect`], and
    /// returns every line read up to it (that one included).
    pub fn expect_lines(&self, text: &str) -> Vec<String> {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let done = line.contains(text);
                    seen.push(line);
                    if done {
                        return seen;
                    }
                }
                Err(_) => panic!("no line with `{text}`; got:\n{}", seen.join("\n")),
            }
        }
    }
}

impl Drop for Plain {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
