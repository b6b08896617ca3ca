//! `hookd log verify [LOG…]`, and the set of files one log is kept in.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Serialize;

use super::output::{print_json, style, Stdout};
use super::Outcome;
use crate::daemon::log::{rotated_numbers, rotated_path, Gap};
use crate::protocol::chain::{Broken, Verified, Verifier};
use clap::Subcommand;

use super::args::log_path;

/// The files of log `log`, oldest first: every rotated file `<log>.<n>`
/// there is (`.1` the most recent, see [`crate::daemon::log`]), highest
/// `n` first, whatever numbers are missing between them, then `log`
/// itself if it exists.
pub fn log_files(log: &Path) -> Vec<PathBuf> {
    let numbers = rotated_numbers(log).unwrap_or_default();
    let mut files: Vec<PathBuf> = numbers
        .iter()
        .rev()
        .map(|&n| rotated_path(log, n))
        .collect();
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
    /// The first line that was changed, removed, inserted or moved, or
    /// the first file missing from the set (`kind: "missing"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broken: Option<Broken>,
    /// Numbers missing among the rotated files, oldest first, each checked
    /// across: the files on either side are still verified.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gaps: Vec<MissingFiles>,
}

/// Rotated files missing between two that are there.
#[derive(Debug, Clone, Serialize)]
pub struct MissingFiles {
    /// The missing files, oldest first.
    pub missing: Vec<PathBuf>,
    /// The file just older than them.
    pub after: PathBuf,
    /// The file just newer than them.
    pub before: PathBuf,
    /// Whether lines went with them: `false` when `before` goes on from
    /// `after`'s last line (an interrupted rotation left a number out; the
    /// daemon renumbers the files when it next starts), `true` when the
    /// chain breaks there (a file was removed: `broken` names the first).
    pub lines_missing: bool,
}

/// Checks the hash chain of `logs` (one path: that log and its rotated
/// files; several: those files, oldest first) and prints the result: exit
/// 0 if it holds, 1 at the first line that does not (`file:line`) or the
/// first rotated file missing from the set.
pub fn verify(logs: &[PathBuf], json: bool) -> anyhow::Result<Outcome> {
    let (files, gaps) = match logs {
        [one] => (log_files(one), gaps_of(one)),
        many => (many.to_vec(), Vec::new()),
    };
    anyhow::ensure!(
        !files.is_empty(),
        "no event log at {} (nor rotated files beside it); give the daemon's log (`hookd status` shows it)",
        logs.first().map_or(String::new(), |p| p.display().to_string())
    );
    let mut verifier = Verifier::new();
    let mut broken = None;
    let mut checked_gaps = Vec::new();
    for file in &files {
        let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        if let Some(mut gap) = gaps.iter().find(|gap| gap.before == *file).cloned() {
            // Past a missing file, the next one is still checked, from its
            // own `chain_start`.
            gap.lines_missing = !verifier.goes_on_with(&bytes);
            if gap.lines_missing {
                broken.get_or_insert_with(|| Broken {
                    file: file.display().to_string(),
                    line: 1,
                    kind: "missing",
                    detail: gap.sentence(),
                });
                verifier.restart();
            }
            checked_gaps.push(gap);
        }
        if let Err(at) = verifier.file(&file.display().to_string(), &bytes) {
            broken.get_or_insert(at);
            break;
        }
    }
    let report = VerifyReport {
        ok: broken.is_none(),
        files,
        verified: broken.is_none().then(|| verifier.finish()),
        broken,
        gaps: checked_gaps,
    };
    if json {
        print_json(&report)?;
    } else {
        print_report(&report)?;
    }
    Ok(Outcome::problems_unless(report.ok))
}

/// The gaps among `log`'s rotated files, lines not yet checked.
fn gaps_of(log: &Path) -> Vec<MissingFiles> {
    let numbers = rotated_numbers(log).unwrap_or_default();
    Gap::all(&numbers)
        .into_iter()
        .rev()
        .map(|gap| MissingFiles {
            missing: (gap.first..=gap.last)
                .rev()
                .map(|n| rotated_path(log, n))
                .collect(),
            after: gap.older(log),
            before: gap.newer(log),
            lines_missing: true,
        })
        .collect()
}

impl MissingFiles {
    /// What the gap is, for a person.
    fn sentence(&self) -> String {
        let names: Vec<String> = self
            .missing
            .iter()
            .map(|f| f.display().to_string())
            .collect();
        let missing = match names.len() {
            1 => format!("{} is", names[0]),
            _ => format!("{} are", names.join(", ")),
        };
        let (after, before) = (self.after.display(), self.before.display());
        if self.lines_missing {
            format!("{missing} missing between {after} and {before}, and the chain does not go on from the one to the other: a rotated file was removed")
        } else {
            format!("{missing} missing between {after} and {before}, but no lines are: the chain goes on from the one to the other (a rotation was cut short; the daemon renumbers the files when it next starts)")
        }
    }
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
        // Files past a missing one were still checked: the other gaps.
        let reported = (broken.kind == "missing").then_some(broken.file.as_str());
        for gap in &report.gaps {
            if gap.lines_missing && reported != Some(&*gap.before.to_string_lossy()) {
                writeln!(out, "{mark} {}:1: {}", gap.before.display(), gap.sentence())?;
            }
        }
        print_renumbered_gaps(&report.gaps)?;
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
    print_renumbered_gaps(&report.gaps)
}

/// The gaps no lines went with, as notes.
fn print_renumbered_gaps(gaps: &[MissingFiles]) -> anyhow::Result<()> {
    for gap in gaps.iter().filter(|gap| !gap.lines_missing) {
        writeln!(Stdout, "  note: {}", gap.sentence())?;
    }
    Ok(())
}

// The doc comments below are clap help text, printed as written:
// brackets and <placeholders> in them are not links or HTML.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(Subcommand)]
pub enum Command {
    /// Check the log's hash chain: exit 0 and `✓ N lines, M files` if no
    /// line was changed, removed, inserted or moved; exit 1 naming the
    /// first one that was (file:line).
    Verify {
        /// The log [default: $XDG_STATE_HOME/hookd/events.jsonl]; one path
        /// is that log and its rotated files (<log>.N … <log>.1, <log>),
        /// several are those files, oldest first.
        #[arg(value_name = "LOG")]
        logs: Vec<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `hookd log …`.
pub fn run(command: Command) -> anyhow::Result<Outcome> {
    match command {
        Command::Verify { logs, json } => {
            let logs = match logs.is_empty() {
                true => vec![log_path(None)?],
                false => logs,
            };
            verify(&logs, json)
        }
    }
}
