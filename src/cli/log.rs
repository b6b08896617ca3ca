//! `hookd log verify [LOG…]`, and the set of files one log is kept in.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Serialize;

use super::output::{print_json, style, Stdout};
use super::Outcome;
use crate::protocol::chain::{Broken, Verified, Verifier};

/// The files of log `log`, oldest first: its rotated files `<log>.<n>`
/// (`.1` the most recent, see [`crate::daemon::log`]) from the highest `n`
/// that exists, then `log` itself if it exists.
pub fn log_files(log: &Path) -> Vec<PathBuf> {
    let numbered = |n: u32| {
        let mut p = log.as_os_str().to_owned();
        p.push(format!(".{n}"));
        PathBuf::from(p)
    };
    let mut files: Vec<PathBuf> = (1..).map(numbered).take_while(|p| p.exists()).collect();
    files.reverse();
    if log.exists() {
        files.push(log.to_path_buf());
    }
    files
}

/// `--json`'s shape.
#[derive(Debug, Serialize)]
pub struct VerifyReport {
    /// Whether every line checked out.
    pub ok: bool,
    /// The files checked, oldest first.
    pub files: Vec<PathBuf>,
    /// What verified; absent when the chain breaks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verified: Option<Verified>,
    /// The first line that was changed, removed, inserted or moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broken: Option<Broken>,
}

/// Checks the hash chain of `logs` (one path: that log and its rotated
/// files; several: those files, oldest first) and prints the result: exit
/// 0 if it holds, 1 at the first line that does not (`file:line`).
pub fn verify(logs: &[PathBuf], json: bool) -> anyhow::Result<Outcome> {
    let files = match logs {
        [one] => log_files(one),
        many => many.to_vec(),
    };
    anyhow::ensure!(
        !files.is_empty(),
        "no event log at {} (nor rotated files beside it); give the daemon's log (`hookd status` shows it)",
        logs.first().map_or(String::new(), |p| p.display().to_string())
    );
    let mut verifier = Verifier::new();
    let mut broken = None;
    for file in &files {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        if let Err(at) = verifier.file(&file.display().to_string(), &bytes) {
            broken = Some(at);
            break;
        }
    }
    let report = VerifyReport {
        ok: broken.is_none(),
        files,
        verified: broken.is_none().then(|| verifier.finish()),
        broken,
    };
    if json {
        print_json(&report)?;
    } else {
        print_report(&report)?;
    }
    Ok(Outcome::problems_unless(report.ok))
}

fn print_report(report: &VerifyReport) -> anyhow::Result<()> {
    let mut out = Stdout;
    if let Some(broken) = &report.broken {
        let mark = style::paint(style::BAD, "✗");
        writeln!(
            out,
            "{mark} {}:{}: {}",
            broken.file, broken.line, broken.detail
        )?;
        return Ok(());
    }
    let verified = report.verified.as_ref().expect("ok reports have it");
    let mark = style::paint(style::GOOD, "✓");
    let plural = |n: u64, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    writeln!(
        out,
        "{mark} {}, {}",
        plural(verified.lines, "line"),
        plural(verified.files as u64, "file")
    )?;
    if let (Some(head), Some(seq)) = (&verified.head, verified.last_seq) {
        let from = match verified.starts_from.as_str() {
            "genesis" => "the genesis".to_string(),
            prev => format!("{prev} (the older files are gone)"),
        };
        writeln!(out, "  from {from}")?;
        writeln!(
            out,
            "  head {head} (seq {seq}): compare it with a copy kept elsewhere"
        )?;
    }
    if verified.unsealed_before_chain > 0 {
        writeln!(
            out,
            "  note: {} before the chain starts (an older hookd's), not verified",
            plural(verified.unsealed_before_chain, "line")
        )?;
    }
    for note in &verified.notes {
        writeln!(out, "  note: {}:{}: {}", note.file, note.line, note.detail)?;
    }
    Ok(())
}
