//! `hookd pending [--json]`: the events waiting for a client's decision,
//! one line each, with the rule a decision could be remembered as.

use std::io::Write as _;

use super::output::{print_json, Stdout};
use crate::client::Client;

use super::args::ClientArgs;
use super::Outcome;

/// Prints what `connection`'s daemon has pending (`--json`: the list as
/// the protocol's `pending` reply has it).
pub fn print(connection: &mut Client, json: bool) -> anyhow::Result<()> {
    let list = connection.pending()?;
    if json {
        print_json(&list)?;
        return Ok(());
    }
    if list.is_empty() {
        // An ask waits only while a subscriber could decide it; without
        // one it goes straight to Claude Code's prompt, so say why the
        // list is empty rather than let it look like nothing asked.
        let subscribers = connection.status()?.counters.subscribers;
        if subscribers == 0 {
            writeln!(
                Stdout,
                "nothing pending — no client is subscribed, so asks go to Claude Code's own prompt"
            )?;
        } else {
            writeln!(Stdout, "nothing pending")?;
        }
    }
    for item in &list {
        let event = &item.event;
        let line = serde_json::from_value::<crate::protocol::log::LoggedEvent>(event.clone())
            .map_or_else(
                |e| format!("(unreadable event: {e})"),
                |event| crate::tail::pretty(&event, None),
            );
        writeln!(
            Stdout,
            "{}  {}  {}  waiting {}ms, {}ms left  [{}]",
            item.info.short_id,
            event["id"].as_str().unwrap_or("?"),
            line.trim_end_matches("  → (pending)"),
            item.waiting_ms,
            item.info.deadline_ms,
            item.info
                .verdicts
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join("|"),
        )?;
        if let Some(session) = &item.info.asked_by.session {
            writeln!(Stdout, "       session: {session}")?;
        }
        match item.info.suggestions.first() {
            // The only rule matches every shell command: never a default.
            Some(suggestion) if suggestion.every_command => writeln!(
                Stdout,
                "       remember as: {} only by name, it allows EVERY shell command (hookd decide {} allow --remember session|always --rule '{}')",
                suggestion.rule, item.info.short_id, suggestion.rule
            )?,
            Some(suggestion) => writeln!(
                Stdout,
                "       remember as: {} (hookd decide {} allow --remember session|always)",
                suggestion.rule, item.info.short_id
            )?,
            None => {}
        }
        let outvoted = item.info.suggestions.iter().find(|s| {
            s.remember == crate::protocol::Remember::Always
                && s.verdict == crate::decision::Verdict::Allow
                && !s.every_command
        });
        if let Some(note) = outvoted.and_then(|s| s.note.as_deref()) {
            writeln!(Stdout, "       always would change nothing: {note}")?;
        }
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

/// `hookd pending`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut connection = args.client.connect()?;
    print(&mut connection, args.json)?;
    Ok(Outcome::Success)
}
