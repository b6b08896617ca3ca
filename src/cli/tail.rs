//! `hookd tail`: the event log, printed as it is written (the reading and
//! the filters are `crate::tail`'s).

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

use super::args::{event_name_parser, log_path};
use super::output::Stdout;

/// `--kind`: every agent's event names, and the coverage alarm's record.
fn kind_parser() -> clap::builder::PossibleValuesParser {
    use clap::builder::{PossibleValue, TypedValueParser};
    let mut values: Vec<PossibleValue> = event_name_parser()
        .possible_values()
        .into_iter()
        .flatten()
        .collect();
    values.push(PossibleValue::new("unjudged_tool_call"));
    values.push(PossibleValue::new("narration"));
    clap::builder::PossibleValuesParser::new(values)
}

#[derive(Parser)]
pub struct TailArgs {
    /// The log file [default: $XDG_STATE_HOME/hookd/events.jsonl].
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Keep reading as the log grows (follows rotation).
    #[arg(short, long)]
    pub follow: bool,
    /// Of what the log holds now, print only the last N lines (then, with
    /// --follow, everything new), as `tail -n`.
    #[arg(short = 'n', long = "lines", value_name = "N")]
    pub lines: Option<usize>,
    /// Print raw JSONL lines.
    #[arg(long)]
    pub json: bool,
    /// Only this event kind, in its agent's name (e.g. PreToolUse, BeforeTool),
    /// or `unjudged_tool_call`: the tool calls that ran unjudged.
    #[arg(long, value_name = "KIND", value_parser = kind_parser())]
    pub kind: Option<String>,
    /// Only sessions whose id starts with this.
    #[arg(long, value_name = "S")]
    pub session: Option<String>,
    /// Only this tool, by its agent's name or the one rules judge it as (e.g. Bash, Write, run_shell_command).
    #[arg(long, value_name = "T")]
    pub tool: Option<String>,
    /// Only events whose verdict was not `none`.
    #[arg(long)]
    pub decisions: bool,
    /// Only from this event/decision id, RFC 3339 time, or age (90s, 10m, 2h, 1d).
    #[arg(long, value_name = "ID|TIME|AGE", value_parser = parse_since)]
    pub since: Option<uuid::Uuid>,
}

pub fn run(args: TailArgs) -> anyhow::Result<()> {
    let log = log_path(args.log)?;
    if !args.follow && !log.exists() {
        anyhow::bail!(
            "no event log at {} (has the daemon run with this log? give another with --log FILE)",
            log.display()
        );
    }
    if args.follow && !log.exists() {
        eprintln!("hookd: waiting for {} to appear", log.display());
    }
    let options = crate::tail::TailOptions {
        follow: args.follow,
        json: args.json,
        kind: args.kind,
        session: args.session,
        tool: args.tool,
        decisions: args.decisions,
        since: args.since,
        last: args.lines,
    };
    crate::tail::run(
        &log,
        &options,
        &mut Stdout,
        crate::cli::output::stdout_reader_gone,
    )
    .with_context(|| format!("reading {}", log.display()))
}

/// `--since`, read when the command line is: a bad value is a usage error
/// (exit 2) naming the flag and the value.
fn parse_since(text: &str) -> Result<uuid::Uuid, String> {
    crate::tail::parse_since(text, std::time::SystemTime::now())
}
