//! `hookd status [--json]`: the daemon's state — rules, policy, log,
//! counters, the last decision, the HTTP listener, grants and runs.

use std::io::Write as _;

use super::output::{print_json, Stdout};
use crate::client::Client;

use super::args::ClientArgs;
use super::Outcome;

/// Prints the status of `connection`'s daemon (`--json`: the protocol's
/// `status` result).
pub fn print(connection: &mut Client, json: bool) -> anyhow::Result<()> {
    let status = connection.status()?;
    if json {
        print_json(&status)?;
        return Ok(());
    }
    writeln!(
        Stdout,
        "hookd {} (pid {}), up {:.0}s on {}",
        status.version,
        status.pid,
        status.uptime_s,
        status.socket.display()
    )?;
    writeln!(
        Stdout,
        "rules: generation {}, {} rules from {}",
        status.rules.generation, status.rules.count, status.rules.source
    )?;
    if status.rules.watch == Some(crate::protocol::WatchMode::Poll) {
        writeln!(
            Stdout,
            "rules files: polled every second (--watch poll, or the kernel's watches could not be had: see the daemon's log)"
        )?;
    }
    if let Some(revision) = &status.rules.revision {
        writeln!(Stdout, "policy revision: {revision}")?;
    }
    for line in crate::policy::status_lines(&status.rules) {
        writeln!(Stdout, "{line}")?;
    }
    for line in status.config.iter().flat_map(|c| c.lines()) {
        writeln!(Stdout, "{line}")?;
    }
    writeln!(Stdout, "log: {}", status.log.display())?;
    if let Some(team) = &status.team {
        writeln!(Stdout, "{team}")?;
    }
    if let Some(otlp) = &status.otlp {
        writeln!(Stdout, "{otlp}")?;
    }
    if let Some(chain) = &status.log_chain {
        writeln!(
            Stdout,
            "log chain: line seq {}, head {}",
            chain.seq, chain.head
        )?;
    }
    if let serde_json::Value::Object(counters) = serde_json::to_value(&status.counters)? {
        for (name, value) in counters {
            writeln!(Stdout, "  {name:<23} {value}")?;
        }
    }
    if let Some(last) = &status.last_decision {
        writeln!(
            Stdout,
            "last decision: {} {} {} ({})",
            last.verdict,
            last.kind,
            last.summary,
            if last.rule_ids.is_empty() {
                last.source.clone()
            } else {
                last.rule_ids.join(", ")
            }
        )?;
    }
    for (feature, usage) in [("judge", &status.judge), ("narrator", &status.narrator)] {
        if let Some(u) = usage {
            writeln!(Stdout, "{feature}: {}", u.line())?;
        }
    }
    if let Some(s) = &status.signals {
        writeln!(
            Stdout,
            "signals: {} runs, {} failed, {} values held",
            s.runs, s.failures, s.cached
        )?;
    }
    if !status.coverage.is_empty() {
        writeln!(Stdout, "tool calls (coverage alarm):")?;
        for agent in &status.coverage {
            writeln!(Stdout, "  {}", agent.line())?;
        }
    }
    match &status.http {
        Some(http) => {
            writeln!(
                Stdout,
                "http: {} (links on {}; {} links alive, {} connections refused)",
                http.listen, http.public_url, http.links, http.refused_connections
            )?;
            if let Some(n) = &http.notify {
                writeln!(
                    Stdout,
                    "  pushes: {} targets, {} sent, {} failed, {} dropped",
                    n.targets, n.sent, n.failed, n.dropped
                )?;
            }
        }
        None => writeln!(Stdout, "http: off")?,
    }
    writeln!(Stdout, "session grants: {}", status.grants.len())?;
    for g in &status.grants {
        writeln!(
            Stdout,
            "  {}  {:<5} {}  session {}{}",
            g.id,
            g.verdict,
            g.rule,
            g.session_id,
            g.expires_at
                .as_ref()
                .map(|at| format!("  until {at}"))
                .unwrap_or_default()
        )?;
    }
    writeln!(Stdout, "runs: {}", status.runs.len())?;
    for r in &status.runs {
        writeln!(
            Stdout,
            "  {}  {:<8} {:<10} pid {}  {:.0}s  {} turns  {}{}  {}  {}",
            r.run_id,
            r.state,
            r.runtime.as_deref().unwrap_or("-"),
            r.pid,
            r.elapsed_s,
            r.turns,
            r.cost_usd
                .map(|c| format!("${c:.4}"))
                .unwrap_or_else(|| "$?".into()),
            r.tokens
                .map(|t| format!(
                    "  {} in / {} out tokens (cache {} read, {} written)",
                    t.input, t.output, t.cache_read, t.cache_write
                ))
                .unwrap_or_default(),
            r.client,
            r.cwd,
        )?;
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub client: ClientArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `hookd status`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut connection = args.client.connect()?;
    print(&mut connection, args.json)?;
    Ok(Outcome::Success)
}
