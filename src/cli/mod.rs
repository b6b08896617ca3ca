//! What every `hookd` command shares, so a new command follows the
//! conventions by using it (ARCHITECTURE.md, "How to add a command"):
//!
//! - how it ends: [`Outcome`], mapped to the process's exit code by
//!   [`exit_code`] in `main` only (0 ok, 1 found problems, 2 usage or
//!   operational error);
//! - how it prints: [`output::Stdout`] (a reader that goes away ends the
//!   command quietly; colour stripped unless allowed) and
//!   [`output::print_json`] for `--json`;
//! - colour: [`output::ColorWhen`] (`--color`, `NO_COLOR`) and the styles
//!   in [`output::style`].

pub mod abort;
pub mod adapter;
pub mod app;
pub mod approve;
pub mod args;
pub mod completions;
pub mod decide;
pub mod docs;
pub mod doctor;
pub mod explain;
pub mod grants;
pub mod http;
pub mod install;
pub mod log;
pub mod man;
pub mod output;
pub mod pending;
pub mod profile;
pub mod replay;
pub mod revision;
pub mod rules;
pub mod run;
pub mod serve;
pub mod service;
pub mod status;
pub mod statusline;
pub mod steer;
pub mod suggest;
pub mod tail;
pub mod team;
pub mod team_approvals;
pub mod team_follow;
pub mod uninstall;

pub use app::main;

use std::process::ExitCode;

/// Exit code of a command that ran and found problems: a rules file with
/// errors, a failing fixture or doctor check, a replay that changes
/// decisions.
pub const EXIT_PROBLEMS: u8 = 1;

/// Exit code of a usage error (clap's own) or an operational one: the
/// daemon unreachable, a file unreadable, a refused request.
pub const EXIT_ERROR: u8 = 2;

/// How a command that did not fail ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// It did what was asked and found nothing wrong: exit 0.
    Success,
    /// It ran to the end and found problems, which it printed: exit
    /// [`EXIT_PROBLEMS`].
    Problems,
    /// A command whose exit status is its own (`hookd run` passes on its
    /// run's; see `run_client::run`).
    Code(u8),
}

impl Outcome {
    /// [`Outcome::Success`] when `ok`, else [`Outcome::Problems`].
    pub fn problems_unless(ok: bool) -> Outcome {
        if ok {
            Outcome::Success
        } else {
            Outcome::Problems
        }
    }
}

impl From<()> for Outcome {
    fn from((): ()) -> Outcome {
        Outcome::Success
    }
}

/// The process's exit code for a command's result; prints the error, each
/// cause once, as `hookd: what: why`. A reader of stdout that went away is
/// not an error (`hookd replay … | head -1`).
pub fn exit_code(result: anyhow::Result<Outcome>) -> ExitCode {
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Problems) => ExitCode::from(EXIT_PROBLEMS),
        Ok(Outcome::Code(code)) => ExitCode::from(code),
        Err(e) if output::is_reader_gone(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hookd: {}", error_chain(&e));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// `e` and its causes joined by `: `, a cause whose text the previous
/// message already ends with left out: an `io::Error` wrapped by a type
/// that also prints it would otherwise read "…: No such file …: No such
/// file …".
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let message = cause.to_string();
        if text.ends_with(&message) || text.contains(&format!("{message}: ")) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&message);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_is_printed_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(io)
            .context("reading /x: No such file")
            .context("loading rules");
        assert_eq!(error_chain(&e), "loading rules: reading /x: No such file");
        let e = anyhow::anyhow!("inner").context("outer");
        assert_eq!(error_chain(&e), "outer: inner");
    }
}
