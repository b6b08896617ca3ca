//! `hookd team pending` and `hookd team answer`: an approver's side of team
//! approvals (docs/team.md#team-approvals), connecting as the approver's
//! own role. The database decides who may answer and what the answers add
//! up to; this only asks it and says what it said.

use std::io::Write as _;
use std::path::Path;

use anyhow::Context;

use super::output::{print_json, Stdout};
use super::team::target;
use super::Outcome;

async fn client(config: Option<&Path>) -> anyhow::Result<hookd_team::approvals::Client> {
    let target = target(config)?;
    hookd_team::connect::connect(&target)
        .await
        .with_context(|| format!("connecting to {}", target.describe()))
}

/// `hookd team pending`.
pub async fn pending(config: Option<&Path>, json: bool) -> anyhow::Result<Outcome> {
    let client = client(config).await?;
    let open = hookd_team::approvals::open(&client)
        .await
        .context("reading the open team asks")?;
    if json {
        print_json(&open)?;
        return Ok(Outcome::Success);
    }
    if open.is_empty() {
        writeln!(Stdout, "no team asks open")?;
        return Ok(Outcome::Success);
    }
    for ask in &open {
        write!(Stdout, "{}", describe(ask))?;
    }
    Ok(Outcome::Success)
}

/// An open ask as `hookd team pending` prints it: the Team pane's line
/// (short id, agent and machine, rules, seconds left, allows), then the
/// reason, the tool's input, the narrator's line and the full id,
/// indented.
pub fn describe(ask: &hookd_team::approvals::OpenAsk) -> String {
    use crate::approve::team::{input_line, summary};
    let mut text = format!("{}\n", summary(ask, ask.seconds_left.max(0.0)));
    if let Some(reason) = &ask.reason {
        text.push_str(&format!("    reason: {reason}\n"));
    }
    text.push_str(&format!("    {}\n", input_line(ask)));
    if let Some(line) = &ask.narration {
        text.push_str(&format!("    narrator: {line}\n"));
    }
    text.push_str(&format!("    id: {}\n", ask.id));
    text
}

/// `hookd team answer ID allow|deny [--reason …]`.
pub async fn answer(
    config: Option<&Path>,
    id: &str,
    allow: bool,
    reason: Option<&str>,
    json: bool,
) -> anyhow::Result<Outcome> {
    let client = client(config).await?;
    let answered = hookd_team::approvals::answer(&client, id, allow, reason).await?;
    if json {
        print_json(&answered)?;
        return Ok(Outcome::Success);
    }
    match &answered.verdict {
        Some(v) => writeln!(Stdout, "{}: {v} (decided)", answered.id)?,
        None => writeln!(
            Stdout,
            "{}: allowed by {} of {} approvers needed; waiting for another",
            answered.id, answered.allows, answered.approvals_required
        )?,
    }
    Ok(Outcome::Success)
}
