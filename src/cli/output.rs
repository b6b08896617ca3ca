//! Command output: stdout that survives its reader going away, colour only
//! where allowed, and `--json`.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe fails with EPIPE, and
//! std's `print!`/`println!` panic on any write error. The daemon must keep
//! ignoring SIGPIPE (it writes to sockets; so do the client commands), so
//! every command prints through [`Stdout`], which tags EPIPE as
//! [`ReaderGone`]; [`super::exit_code`] ends the command quietly (exit 0)
//! on it.
//!
//! Human output may carry [`style`]s; [`Stdout`] strips them unless colour
//! is allowed: `--color always`, or `--color auto` (the default) with
//! stdout a terminal, `NO_COLOR` unset and `TERM` not `dumb` (anstream's
//! rules, which also honour `CLICOLOR` and `CLICOLOR_FORCE`).

use std::io::{self, Write};
use std::sync::{Mutex, OnceLock};

use serde::Serialize;

/// `--color`: when human output is coloured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    /// When stdout is a terminal and `NO_COLOR` is not set.
    #[default]
    Auto,
    /// Always, even into a pipe.
    Always,
    /// Never.
    Never,
}

/// The stream under every [`Stdout`], with its colour choice; made on
/// first use, with [`ColorWhen::Auto`] unless [`set_color`] came first.
static STREAM: OnceLock<Mutex<anstream::AutoStream<io::Stdout>>> = OnceLock::new();

fn stream() -> &'static Mutex<anstream::AutoStream<io::Stdout>> {
    STREAM.get_or_init(|| Mutex::new(auto_stream(ColorWhen::Auto)))
}

fn auto_stream(when: ColorWhen) -> anstream::AutoStream<io::Stdout> {
    let choice = match when {
        ColorWhen::Auto => anstream::ColorChoice::Auto,
        ColorWhen::Always => anstream::ColorChoice::Always,
        ColorWhen::Never => anstream::ColorChoice::Never,
    };
    anstream::AutoStream::new(io::stdout(), choice)
}

/// Sets `--color` for the process; call it before the first output (a
/// later call is ignored: output already written keeps its choice).
pub fn set_color(when: ColorWhen) {
    let _ = STREAM.set(Mutex::new(auto_stream(when)));
}

/// Whether human output on stdout is coloured.
pub fn color_enabled() -> bool {
    let stream = stream().lock().unwrap_or_else(|e| e.into_inner());
    stream.current_choice() != anstream::ColorChoice::Never
}

/// The process's stdout, for command output: a write the reader is no longer
/// there to take fails with a [`ReaderGone`] error; styles are stripped
/// unless colour is allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stdout;

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut stream = stream().lock().unwrap_or_else(|e| e.into_inner());
        stream.write(buf).map_err(tag_reader_gone)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut stream = stream().lock().unwrap_or_else(|e| e.into_inner());
        stream.write_all(buf).map_err(tag_reader_gone)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut stream = stream().lock().unwrap_or_else(|e| e.into_inner());
        stream.flush().map_err(tag_reader_gone)
    }
}

/// stdout's reader went away (EPIPE): not a failure of the command.
#[derive(Debug, thiserror::Error)]
#[error("the reader of stdout went away")]
pub struct ReaderGone;

fn tag_reader_gone(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        io::Error::new(io::ErrorKind::BrokenPipe, ReaderGone)
    } else {
        e
    }
}

/// Whether `e` is, or was caused by, a write to stdout nobody reads any more.
pub fn is_reader_gone(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
            .is_some_and(|inner| inner.is::<ReaderGone>())
    })
}

/// Whether stdout is a pipe or socket whose reader has gone, without
/// writing to it: what `tail --follow` checks while the log is quiet, so
/// `hookd tail -f | head -1` ends even when nothing more is logged.
pub fn stdout_reader_gone() -> bool {
    let mut fd = libc::pollfd {
        fd: libc::STDOUT_FILENO,
        events: 0,
        revents: 0,
    };
    // SAFETY: one valid, initialised pollfd and a zero timeout; poll only
    // writes `revents`. POLLERR and POLLHUP are reported whatever `events`.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready == 1 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}

/// `--json`: `value` pretty-printed on stdout, one document and a newline.
/// The shapes are the protocol's and the reports' own `Serialize` types,
/// listed in docs/cli.md ("`--json`").
pub fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    // Serialized first: serde_json's writer would hide a `ReaderGone`
    // inside its own error type.
    let mut text = serde_json::to_vec_pretty(value)?;
    text.push(b'\n');
    Stdout.write_all(&text)?;
    Ok(())
}

pub use crate::style;
