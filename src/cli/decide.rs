//! `hookd decide` (a one-line confirmation, or `--json`: what was decided
//! and what was remembered) and `hookd grants [revoke ID]`.

use std::io::Write as _;

use super::output::{print_json, style, Stdout};
use crate::client::Client;
use clap::builder::TypedValueParser as _;

use super::args::ClientArgs;
use super::Outcome;
use crate::decision::Verdict;

/// `hookd decide --json`: what was decided, and what was remembered.
#[derive(serde::Serialize)]
pub struct DecideReport {
    /// The event's uuid.
    event_id: Option<uuid::Uuid>,
    /// Its short id, when it was still listed as pending.
    short_id: Option<String>,
    /// The verdict given.
    verdict: crate::decision::Verdict,
    /// The event's kind (`PreToolUse`) and tool, and its most telling
    /// field, when it was still listed as pending.
    kind: Option<String>,
    tool: Option<String>,
    summary: Option<String>,
    /// `--remember session`: the grant made.
    #[serde(skip_serializing_if = "Option::is_none")]
    grant: Option<crate::protocol::GrantRecord>,
    /// `--remember always`: the rule added.
    #[serde(skip_serializing_if = "Option::is_none")]
    remembered: Option<crate::protocol::Remembered>,
}

/// Sends `decide` to `connection`'s daemon and confirms it in one line
/// (`--json`: a [`DecideReport`]).
pub fn decide(
    connection: &mut Client,
    decide: crate::protocol::Decide,
    json: bool,
) -> anyhow::Result<()> {
    // The pending item, for the confirmation: which event was decided.
    let item = connection
        .pending()?
        .into_iter()
        .find(|item| match &decide.event_id {
            crate::protocol::EventRef::Short(short) => item.info.short_id == *short,
            crate::protocol::EventRef::Id(id) => item.event["id"].as_str() == Some(&id.to_string()),
        });
    let event = item.as_ref().and_then(|item| {
        serde_json::from_value::<crate::protocol::log::LoggedEvent>(item.event.clone()).ok()
    });
    let verdict = decide.answer.verdict;
    let event_ref = decide.event_id.clone();
    let remember = decide.remember;
    let result = connection.decide(decide)?;
    let mut report = DecideReport {
        event_id: match &event_ref {
            crate::protocol::EventRef::Id(id) => Some(*id),
            crate::protocol::EventRef::Short(_) => event.as_ref().map(|e| e.id),
        },
        short_id: item.as_ref().map(|item| item.info.short_id.clone()),
        verdict,
        kind: event.as_ref().map(|e| e.kind.clone()),
        tool: event.as_ref().and_then(|e| e.tool.clone()),
        summary: event.as_ref().map(|e| crate::tail::summary(&e.input)),
        grant: None,
        remembered: None,
    };
    match (remember, result) {
        (crate::protocol::Remember::Session, Some(result)) => {
            report.grant = Some(serde_json::from_value(result)?);
        }
        (crate::protocol::Remember::Always, Some(result)) => {
            report.remembered = Some(serde_json::from_value(result)?);
        }
        _ => {}
    }
    if json {
        return print_json(&report);
    }
    let done = match verdict {
        crate::decision::Verdict::Allow => "allowed",
        crate::decision::Verdict::Deny => "denied",
        crate::decision::Verdict::Ask => "asked the user about",
        crate::decision::Verdict::Defer => "deferred",
        crate::decision::Verdict::NoOpinion => "no opinion on",
    };
    let mut line = format!(
        "{} {event_ref}",
        style::paint(style::verdict(verdict), done)
    );
    if let Some(event) = &event {
        let what = [Some(event.kind.as_str()), event.tool.as_deref()]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" ");
        line.push_str(&format!(
            " ({what} `{}`)",
            crate::tail::summary(&event.input)
        ));
    }
    writeln!(Stdout, "{line}")?;
    if let Some(grant) = &report.grant {
        writeln!(
            Stdout,
            "grant {}: {} {} for session {}{}",
            grant.id,
            grant.verdict,
            grant.rule,
            grant.session_id,
            grant
                .expires_at
                .as_ref()
                .map(|at| format!(" until {at}"))
                .unwrap_or_default()
        )?;
    }
    if let Some(done) = &report.remembered {
        if done.created_from_defaults {
            writeln!(
                Stdout,
                "created {} from the embedded default rules",
                done.rules_file
            )?;
        }
        if done.already_present {
            writeln!(
                Stdout,
                "{} is already in {}; nothing added",
                done.rule, done.rules_file
            )?;
        } else {
            writeln!(Stdout, "added {} to {}", done.rule, done.rules_file)?;
        }
        if let Some(note) = &done.note {
            writeln!(Stdout, "note: {note}")?;
        }
    }
    Ok(())
}

/// Lists the session grants (`--json`: as the protocol has them), or
/// revokes grant `revoke`.
pub fn grants(connection: &mut Client, revoke: Option<&str>, json: bool) -> anyhow::Result<()> {
    if let Some(id) = revoke {
        connection.revoke_grant(id)?;
        writeln!(Stdout, "revoked grant {id}")?;
        return Ok(());
    }
    let list = connection.grants()?;
    if json {
        print_json(&list)?;
        return Ok(());
    }
    if list.is_empty() {
        writeln!(Stdout, "no session grants")?;
    }
    for grant in &list {
        writeln!(
            Stdout,
            "{}  {:<5} {}  session {}  by {}  since {}{}",
            grant.id,
            grant.verdict,
            grant.rule,
            grant.session_id,
            grant.by,
            grant.created_at,
            grant
                .expires_at
                .as_ref()
                .map(|at| format!("  until {at}"))
                .unwrap_or_default()
        )?;
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub client: ClientArgs,
    /// The pending event: its short id or its uuid (from `hookd pending`).
    pub event_id: crate::protocol::EventRef,
    /// The verdict.
    #[arg(value_parser = verdict_parser())]
    pub verdict: Verdict,
    /// Shown to the model (deny) or to the user (ask).
    #[arg(long)]
    pub reason: Option<String>,
    /// once (this event), session (a grant for the rest of the session)
    /// or always (a rule appended to the user rules file).
    #[arg(long, value_name = "HOW", default_value = "once", value_parser = remember_parser())]
    pub remember: crate::protocol::Remember,
    /// The permission rule to remember [default: the event's first suggestion, never one matching every shell command].
    #[arg(long, value_name = "RULE")]
    pub rule: Option<String>,
    /// With --remember session: the grant ends after this many seconds.
    #[arg(long, value_name = "SECONDS")]
    pub ttl: Option<u64>,
    /// Print the outcome as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `hookd decide`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let mut connection = args.client.connect()?;
    decide(
        &mut connection,
        crate::protocol::Decide {
            req: String::new(),
            event_id: args.event_id,
            answer: crate::decision::Answer::new(args.verdict, args.reason),
            remember: args.remember,
            rule: args.rule,
            ttl_s: args.ttl,
        },
        args.json,
    )?;
    Ok(Outcome::Success)
}

/// A verdict by its wire name (`allow`, …, `none`): clap lists them in
/// help and completions and suggests one for a typo.
fn verdict_parser() -> impl clap::builder::TypedValueParser<Value = Verdict> {
    clap::builder::PossibleValuesParser::new(Verdict::ALL.map(Verdict::as_str))
        .try_map(|text| text.parse::<Verdict>())
}

/// `--remember once|session|always`.
fn remember_parser() -> impl clap::builder::TypedValueParser<Value = crate::protocol::Remember> {
    clap::builder::PossibleValuesParser::new(["once", "session", "always"]).try_map(|text| {
        serde_json::from_value::<crate::protocol::Remember>(serde_json::Value::String(text))
    })
}
