//! `hookd rules suggest`: rules proposed from what a person decided by hand
//! (the work is [`crate::suggest`]'s), printed as a diff of the user rules
//! file, written only with `--write`.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use anyhow::Context;

use super::output::{print_json, Stdout};
use super::Outcome;
use crate::rules::{check_source, LayerKind, DEFAULTS_TOML};
use crate::suggest::{log_files, suggest, Options};

/// `hookd rules suggest`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Only events of this age or younger (90s, 10m, 2h, 7d) or after
    /// this RFC 3339 time [default: the whole log].
    #[arg(long, value_name = "AGE|TIME")]
    pub since: Option<String>,
    /// The event log [default: $XDG_STATE_HOME/hookd/events.jsonl]; its
    /// rotated files (LOG.1, LOG.2, …) are read too.
    #[arg(long, value_name = "PATH")]
    pub log: Option<PathBuf>,
    /// The rules file to extend [default: $XDG_CONFIG_HOME/hookd/rules.toml].
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
    /// How many answers the same way make a rule.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub threshold: u32,
    /// Write the proposed rules into the rules file (atomically, after
    /// checking it as `hookd rules check` does).
    #[arg(long)]
    pub write: bool,
    /// Print the proposals as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `hookd rules suggest`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let now = SystemTime::now();
    let since = args
        .since
        .as_deref()
        .map(|text| {
            let looks_like_time = text.len() > 4 && text.as_bytes()[4] == b'-';
            if looks_like_time {
                crate::time::parse_timestamp(text)
            } else {
                crate::time::before(now, text)
            }
            .map_err(|e| {
                anyhow::anyhow!(
                    "--since {text}: not an RFC 3339 time (2026-11-22T10:00:00Z) or an age (90s, 10m, 2h, 7d): {e}"
                )
            })
        })
        .transpose()?;
    let log = super::args::log_path(args.log)?;
    let path = match args.rules.or_else(crate::paths::default_rules_path) {
        Some(path) => path,
        None => anyhow::bail!("no --rules given and neither XDG_CONFIG_HOME nor HOME is set"),
    };
    let exists = path.exists();
    // A new rules file replaces the embedded defaults: it starts from them.
    let text = if exists {
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?
    } else {
        DEFAULTS_TOML.to_string()
    };
    let source = if exists {
        crate::daemon::RulesSource::File(path.clone())
    } else {
        crate::daemon::RulesSource::Defaults
    };
    let rules = Arc::new(crate::local::composed_for_cli(&source)?);
    let files = log_files(&log);
    let options = Options {
        since,
        threshold: args.threshold as usize,
        home: std::env::var_os("HOME").map(PathBuf::from),
    };
    let report = suggest(&files, &rules, &text, &path, &options)?;
    for bad in &report.malformed {
        eprintln!(
            "hookd: {}:{}: skipped a line that is not a log record: {}",
            bad.file.display(),
            bad.line,
            bad.error
        );
    }
    let mut new_text = text.clone();
    for proposal in &report.proposals {
        new_text = crate::suggest::append(&new_text, proposal);
    }
    if args.json {
        print_json(&report)?;
    } else if report.lines == 0 {
        writeln!(
            Stdout,
            "the event log {} is empty: nothing to suggest",
            log.display()
        )?;
    } else if report.manual_answers == 0 {
        writeln!(
            Stdout,
            "no allow or deny answered by hand in {} ({} lines read): nothing to suggest",
            log.display(),
            report.lines
        )?;
    } else {
        for skipped in &report.skipped {
            writeln!(
                Stdout,
                "# not suggested: {} {} ({} answers): {}",
                skipped.action, skipped.tool, skipped.count, skipped.why
            )?;
        }
        if report.proposals.is_empty() {
            writeln!(
                Stdout,
                "no rule to suggest from {} answers by hand",
                report.manual_answers
            )?;
        } else {
            let old_name = if exists {
                path.display().to_string()
            } else {
                "/dev/null".to_string()
            };
            let diff = crate::install::diff::unified(
                if exists { &text } else { "" },
                &new_text,
                &old_name,
                &path.display().to_string(),
            );
            write!(Stdout, "{diff}")?;
        }
    }
    if args.write && !report.proposals.is_empty() {
        write_rules(&path, &text, &new_text, exists)?;
        eprintln!(
            "hookd: wrote {} rule(s) to {}",
            report.proposals.len(),
            path.display()
        );
    }
    Ok(Outcome::Success)
}

/// Replaces the rules file at `path` with `new`, refused (the old file
/// kept) unless `new` passes `hookd rules check`.
fn write_rules(path: &std::path::Path, old: &str, new: &str, exists: bool) -> anyhow::Result<()> {
    let report = check_source(new, path, LayerKind::User);
    if !report.is_ok() {
        anyhow::bail!(
            "the rules file would not pass `hookd rules check`; {} was left as it was:\n{report}",
            path.display()
        );
    }
    let like = if exists {
        // Written over only if it is still what was read.
        let now = std::fs::read_to_string(path)?;
        anyhow::ensure!(
            now == old,
            "{} changed while the suggestions were made; run again",
            path.display()
        );
        Some(std::fs::metadata(path)?)
    } else {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        }
        None
    };
    crate::daemon::atomic::write_atomic(path, new.as_bytes(), like.as_ref())
        .with_context(|| format!("writing {}", path.display()))?;
    // Read back as `hookd rules check` reads it.
    let written = crate::rules::check_as(path, LayerKind::User);
    if !written.is_ok() {
        let restore = if exists {
            crate::daemon::atomic::write_atomic(path, old.as_bytes(), like.as_ref())
        } else {
            std::fs::remove_file(path).map_err(Into::into)
        };
        restore.with_context(|| format!("restoring {}", path.display()))?;
        anyhow::bail!(
            "{} did not pass `hookd rules check` once written and was restored:\n{written}",
            path.display()
        );
    }
    Ok(())
}
