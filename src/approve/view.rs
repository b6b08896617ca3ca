//! The approver's screen, pure: [`draw`] renders a [`State`] into a
//! ratatui frame and nothing else (snapshot-tested with `TestBackend`).
//!
//! ```text
//!  header: daemon, pending count, rules source, feed follow/paused, filters
//!  Pending: list (id, tool, countdown) │ the selected item in full
//!  Feed: time, session, harness, event, tool, summary, verdict, by, latency
//!  Runs (when there are any)
//!  footer: the prompt being typed, the last reply, or the keys
//! ```

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Cell, Clear, Paragraph, Row, Table, Wrap};
use ratatui::Frame;
use serde_json::Value;

use super::state::{FeedRow, Link, Mode, Pane, PendingItem, State};
use super::wire::Remember;
use crate::agent::claude::InputFields;
use crate::protocol::approval::Suggestion;

/// The keys, as `?` shows them (and docs/approvals.md lists them).
pub const HELP: &[(&str, &str)] = &[
    ("y", "allow the selected item once"),
    ("n", "deny it (asks for a reason; Enter keeps the default)"),
    ("s", "allow it and this rule for the rest of the session"),
    (
        "a",
        "always allow: adds the rule to your rules file (asks first)",
    ),
    ("N", "always deny: adds the rule as a deny (asks first)"),
    ("e", "explain: the rules that match it and the near misses"),
    ("Tab ⇧Tab", "next / previous pane"),
    (
        "y n (Team)",
        "--team: allow / deny the selected team ask as you",
    ),
    ("j k ↑ ↓", "move in the pane"),
    ("/", "search the feed (Enter keeps it, Esc clears it)"),
    (
        "S T V",
        "feed: only the selected row's session / tool / verdict",
    ),
    ("c", "clear the feed's filters"),
    ("space p", "pause / follow the feed"),
    ("x", "abort the selected run (asks first)"),
    ("m", "send a message to the selected run"),
    ("?", "this help"),
    ("q Ctrl-C", "quit"),
];

struct Theme {
    color: bool,
}

impl Theme {
    fn fg(&self, color: Color) -> Style {
        if self.color {
            Style::default().fg(color)
        } else {
            Style::default()
        }
    }

    fn verdict(&self, verdict: &str) -> Style {
        self.fg(match verdict {
            "allow" => Color::Green,
            "deny" => Color::Red,
            "ask" => Color::Yellow,
            "unjudged" => Color::Magenta,
            _ => Color::Gray,
        })
    }

    fn border(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, true) => Style::default().fg(Color::Cyan),
            (true, false) => Style::default().add_modifier(Modifier::BOLD),
            _ => Style::default(),
        }
    }

    /// Reverse video: readable without colours too.
    fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }

    fn dim(&self) -> Style {
        if self.color {
            Style::default().add_modifier(Modifier::DIM)
        } else {
            Style::default()
        }
    }
}

/// Draws the whole screen.
pub fn draw(frame: &mut Frame, state: &State) {
    let theme = Theme { color: state.color };
    let area = frame.area();
    // As tall as the selected item needs (its input, wrapped roughly),
    // between 8 rows and 45 % of the screen.
    let pending_height = match state.selected_item() {
        None => 3,
        Some(item) => {
            let width = area.width.saturating_sub(40).max(20) as usize;
            let input_rows: usize = input_lines(item, &theme)
                .iter()
                .map(|l| l.width().div_ceil(width).max(1))
                .sum();
            let wanted = (input_rows + 6).max(state.pending.len() + 2) as u16;
            wanted.clamp(8, (area.height * 45 / 100).max(8))
        }
    };
    let runs_height = if state.runs.is_empty() {
        0
    } else {
        (state.runs.len() as u16 + 3).min(7)
    };
    // The Team pane (`--team`): two rows an ask, between 4 and 12 rows.
    let team_height = state
        .team
        .as_ref()
        .map_or(0, |t| (t.asks.len() as u16 * 3 + 3).clamp(4, 12));
    let [header, pending, team, feed, runs, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(pending_height),
        Constraint::Length(team_height),
        Constraint::Min(4),
        Constraint::Length(runs_height),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_header(frame, header, state, &theme);
    draw_pending(frame, pending, state, &theme);
    if team_height > 0 {
        draw_team(frame, team, state, &theme);
    }
    draw_feed(frame, feed, state, &theme);
    if runs_height > 0 {
        draw_runs(frame, runs, state, &theme);
    }
    draw_footer(frame, footer, state, &theme);
    match &state.mode {
        Mode::Help => draw_help(frame, area, &theme),
        Mode::Explain {
            title,
            text,
            scroll,
        } => draw_popup(frame, area, title, text, *scroll, 90, &theme),
        Mode::Confirm { question, .. } => draw_popup(
            frame,
            area,
            "confirm",
            &format!("{question}\n\ny / Enter: yes    n / Esc: no"),
            0,
            70,
            &theme,
        ),
        _ => {}
    }
}

fn draw_header(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let link = match &state.link {
        Link::Connecting => Span::raw(format!("connecting to {}…", state.socket)),
        Link::Up { version } => Span::styled(format!("hookd {version}"), theme.fg(Color::Green)),
        Link::Down { reason, .. } => Span::styled(
            format!("hookd is down ({reason}) at {}; reconnecting", state.socket),
            theme.fg(Color::Red).add_modifier(Modifier::BOLD),
        ),
    };
    let mut spans = vec![Span::raw(" hookd approve · "), link];
    spans.push(Span::raw(format!(" · {} pending", state.pending.len())));
    if let Some(rules) = &state.rules_source {
        spans.push(Span::raw(format!(" · rules: {rules}")));
    }
    spans.push(Span::raw(if state.follow {
        " · following"
    } else {
        " · PAUSED"
    }));
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// `m:ss` left until `item`'s deadline.
pub fn countdown(item: &PendingItem, state: &State) -> String {
    match item.deadline {
        Some(deadline) => {
            let left = deadline.saturating_duration_since(state.now).as_secs();
            format!("{}:{:02}", left / 60, left % 60)
        }
        None => "–:––".to_string(),
    }
}

fn draw_pending(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let block = Block::bordered()
        .title(format!(" Pending ({}) ", state.pending.len()))
        .border_style(theme.border(state.focus == Pane::Pending));
    if state.pending.is_empty() {
        frame.render_widget(
            Paragraph::new("nothing is waiting for a decision").block(block),
            area,
        );
        return;
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [list, detail] =
        Layout::horizontal([Constraint::Length(36), Constraint::Min(20)]).areas(inner);
    let rows: Vec<Line> = state
        .pending
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let line = Line::from(vec![
                Span::styled(
                    format!("{:<6}", item.display_id()),
                    theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
                ),
                Span::raw(format!(
                    " {:<16} ",
                    clip(item.tool.as_deref().unwrap_or(&item.event), 16)
                )),
                Span::raw(format!("{:>6}", countdown(item, state))),
            ]);
            if i == state.selected_pending {
                line.style(theme.selected())
            } else {
                line
            }
        })
        .collect();
    frame.render_widget(Paragraph::new(rows), list);
    if let Some(item) = state.selected_item() {
        frame.render_widget(
            Paragraph::new(item_text(item, state, theme)).wrap(Wrap { trim: false }),
            detail,
        );
    }
}

/// The selected pending item in full: what it is, the whole input, who
/// asked, what can be remembered, the keys.
fn item_text<'a>(item: &'a PendingItem, state: &State, theme: &Theme) -> Text<'a> {
    let mut lines = vec![Line::from(vec![
        Span::styled(
            item.display_id(),
            theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
        ),
        Span::raw(format!(
            "  {} · {} · session {} ({}) · {} left",
            item.event,
            item.tool.as_deref().unwrap_or("-"),
            short_session(item.session.as_deref()),
            item.project.as_deref().unwrap_or("?"),
            countdown(item, state),
        )),
    ])];
    lines.extend(input_lines(item, theme));
    let asked = match &item.asked_by {
        Some(asked) if asked.rule_ids.is_empty() => "asked by: no rule decided".to_string(),
        Some(asked) => format!(
            "asked by: {}{}",
            asked.rule_ids.join(", "),
            asked
                .reason
                .as_deref()
                .map(|r| format!(" — {r}"))
                .unwrap_or_default()
        ),
        None => "asked by: the rules (this hookd does not say which)".to_string(),
    };
    lines.push(Line::styled(asked, theme.fg(Color::Cyan)));
    if let Some(session) = item.asked_by.as_ref().and_then(|a| a.session.as_deref()) {
        lines.push(Line::styled(
            format!("session: {session}"),
            theme.fg(Color::Yellow),
        ));
    }
    if let Some(narration) = &item.narration {
        lines.push(Line::styled(
            format!("narrator: {narration}"),
            theme.fg(Color::Magenta),
        ));
    }
    let offered: Vec<(char, &Suggestion)> = [
        ('s', Remember::Session, "allow"),
        ('a', Remember::Always, "allow"),
    ]
    .iter()
    .filter_map(|(key, remember, verdict)| item.suggestion(*remember, verdict).map(|s| (*key, s)))
    .collect();
    let remember: Vec<String> = offered
        .iter()
        .map(|(key, s)| {
            let broad = if s.every_command {
                " (EVERY shell command)"
            } else {
                ""
            };
            format!("{key}: {}{broad}", s.rule)
        })
        .collect();
    lines.push(Line::styled(
        if remember.is_empty() {
            "remember: no rule to remember for this item".to_string()
        } else {
            format!("remember: {}", remember.join(" · "))
        },
        theme.dim(),
    ));
    // Said before the key is pressed: remembering this changes nothing.
    for (key, s) in &offered {
        if let Some(note) = &s.note {
            lines.push(Line::styled(
                format!("{key} would change nothing: {note}"),
                theme.fg(Color::Yellow),
            ));
        }
    }
    lines.push(Line::styled(
        "y allow · n deny · s session · a always · N never · e explain",
        theme.dim(),
    ));
    Text::from(lines)
}

/// The whole input: a command as it is, an edit as a diff, a write as its
/// new content, anything else as pretty JSON.
fn input_lines<'a>(item: &PendingItem, theme: &Theme) -> Vec<Line<'a>> {
    let input = InputFields::of(&item.input)
        .tool_input
        .unwrap_or(&Value::Null);
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let mut lines = Vec::new();
    let diff = |lines: &mut Vec<Line<'a>>, old: &str, new: &str| {
        for l in old.lines() {
            lines.push(Line::styled(format!("- {l}"), theme.fg(Color::Red)));
        }
        for l in new.lines() {
            lines.push(Line::styled(format!("+ {l}"), theme.fg(Color::Green)));
        }
    };
    match item.tool.as_deref() {
        Some("Bash") => {
            for (i, l) in text(&input["command"]).lines().enumerate() {
                let prefix = if i == 0 { "$ " } else { "  " };
                lines.push(Line::styled(
                    format!("{prefix}{l}"),
                    Style::default().add_modifier(Modifier::BOLD),
                ));
            }
        }
        Some("Edit") => {
            lines.push(Line::raw(format!("edit {}", text(&input["file_path"]))));
            diff(
                &mut lines,
                &text(&input["old_string"]),
                &text(&input["new_string"]),
            );
        }
        Some("MultiEdit") => {
            lines.push(Line::raw(format!("edit {}", text(&input["file_path"]))));
            for edit in input["edits"].as_array().into_iter().flatten() {
                diff(
                    &mut lines,
                    &text(&edit["old_string"]),
                    &text(&edit["new_string"]),
                );
            }
        }
        Some("Write") => {
            lines.push(Line::raw(format!("write {}", text(&input["file_path"]))));
            diff(&mut lines, "", &text(&input["content"]));
        }
        _ => {
            let shown = if input.is_null() { &item.input } else { input };
            let pretty = serde_json::to_string_pretty(shown).unwrap_or_default();
            lines.extend(pretty.lines().map(|l| Line::raw(l.to_string())));
        }
    }
    lines
}

fn draw_feed(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let rows = state.visible_feed();
    let mut title = format!(" Feed ({}", rows.len());
    if !state.filter.is_empty() {
        let f = &state.filter;
        let parts: Vec<String> = [
            f.session
                .as_deref()
                .map(|s| format!("session {}", short_session(Some(s)))),
            f.tool.as_deref().map(|t| format!("tool {t}")),
            f.verdict.as_deref().map(|v| format!("verdict {v}")),
            (!f.text.is_empty()).then(|| format!("/{}", f.text)),
        ]
        .into_iter()
        .flatten()
        .collect();
        title.push_str(&format!(" shown; filter: {}", parts.join(", ")));
    }
    title.push_str(if state.follow { ") " } else { ", paused) " });
    let block = Block::bordered()
        .title(title)
        .border_style(theme.border(state.focus == Pane::Feed));
    let inner_height = area.height.saturating_sub(3) as usize;
    let selected = state.selected_row().map(|r| r.seq);
    // The window of rows: ending at the selection (the newest row while
    // following).
    let end = selected
        .and_then(|seq| rows.iter().position(|r| r.seq == seq))
        .map_or(rows.len(), |i| i + 1);
    let start = end.saturating_sub(inner_height);
    let table_rows: Vec<Row> = rows[start..end]
        .iter()
        .map(|row| {
            let r = feed_cells(row, theme);
            if Some(row.seq) == selected && state.focus == Pane::Feed {
                r.style(theme.selected())
            } else {
                r
            }
        })
        .collect();
    let header = Row::new([
        "time", "session", "harness", "event", "tool", "input", "verdict", "by", "latency",
    ])
    .style(Style::default().add_modifier(Modifier::BOLD));
    let table = Table::new(
        table_rows,
        [
            Constraint::Length(8),
            Constraint::Length(18),
            Constraint::Length(7),
            Constraint::Length(event_column_width(&rows, area.width.saturating_sub(2))),
            Constraint::Length(8),
            Constraint::Min(20),
            Constraint::Length(7),
            Constraint::Length(14),
            Constraint::Length(7),
        ],
    )
    .header(header)
    .block(block);
    frame.render_widget(table, area);
}

/// The feed's columns other than event and input, and the gaps between
/// all nine (ratatui's one column each).
const FEED_FIXED_WIDTH: u16 = 8 + 18 + 7 + 8 + 7 + 14 + 7 + 8;

/// The narrowest the feed's input column is made.
const FEED_INPUT_MIN: u16 = 20;

/// The feed's event column: as wide as the longest event name shown
/// (`UserPromptSubmit`, `PostToolUseFailure`), as far as the table's
/// `width` leaves the input column its [`FEED_INPUT_MIN`]; never cut below
/// 14 columns to make room.
fn event_column_width(rows: &[&FeedRow], width: u16) -> u16 {
    let longest = rows
        .iter()
        .map(|r| r.event.chars().count())
        .max()
        .unwrap_or(0)
        .max("event".len());
    let longest = u16::try_from(longest).unwrap_or(u16::MAX);
    let room = width.saturating_sub(FEED_FIXED_WIDTH + FEED_INPUT_MIN);
    longest.min(room.max(14))
}

fn feed_cells<'a>(row: &FeedRow, theme: &Theme) -> Row<'a> {
    let verdict = match (&row.verdict, row.pending) {
        (Some(v), _) => v.clone(),
        (None, true) => "waiting".into(),
        (None, false) => "…".into(),
    };
    Row::new(vec![
        Cell::from(row.time.clone()),
        Cell::from(format!(
            "{} {}",
            short_session(row.session.as_deref()),
            row.project.as_deref().unwrap_or("")
        )),
        Cell::from(
            match row.harness.as_str() {
                "claude-code" => "claude",
                "agent-sdk" => "sdk",
                other => other,
            }
            .to_string(),
        ),
        Cell::from(row.event.clone()),
        Cell::from(row.tool.clone().unwrap_or_default()),
        Cell::from(row.summary.clone()),
        Cell::from(Span::styled(verdict.clone(), theme.verdict(&verdict))),
        // A client as `@name`: the column is narrow and names are long.
        Cell::from(match row.decided_by.as_deref() {
            Some(by) => by
                .strip_prefix("client:")
                .map_or_else(|| by.to_string(), |name| format!("@{name}")),
            None => String::new(),
        }),
        Cell::from(row.latency_us.map(latency).unwrap_or_default()),
    ])
}

fn draw_runs(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let block = Block::bordered()
        .title(format!(" Runs ({}) ", state.runs.len()))
        .border_style(theme.border(state.focus == Pane::Runs));
    let rows: Vec<Row> = state
        .runs
        .iter()
        .enumerate()
        .map(|(i, run)| {
            let row = Row::new(vec![
                run.run_id.clone(),
                run.runtime.clone().unwrap_or_else(|| "-".into()),
                run.model.clone().unwrap_or_else(|| "-".into()),
                format!("{} turns", run.turns),
                run.cost_usd
                    .map_or_else(|| "$?".into(), |c| format!("${c:.4}")),
                run.prompt.clone(),
            ]);
            if i == state.selected_run && state.focus == Pane::Runs {
                row.style(theme.selected())
            } else {
                row
            }
        })
        .collect();
    let table = Table::new(
        rows,
        [
            Constraint::Length(14),
            Constraint::Length(10),
            Constraint::Length(20),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Min(10),
        ],
    )
    .header(
        Row::new(["run", "runtime", "model", "turns", "cost", "prompt"])
            .style(Style::default().add_modifier(Modifier::BOLD)),
    )
    .block(block);
    frame.render_widget(table, area);
}

fn draw_team(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let Some(team) = state.team.as_ref() else {
        return;
    };
    let focused = state.focus == Pane::Team;
    let block = Block::bordered()
        .title(format!(" Team asks ({}) ", team.asks.len()))
        .border_style(theme.border(focused));
    let mut lines: Vec<Line> = Vec::new();
    if let Some(e) = &team.error {
        lines.push(Line::styled(e.clone(), theme.fg(Color::Red)));
    }
    if team.asks.is_empty() && team.error.is_none() {
        lines.push(Line::styled(
            if team.read_at.is_some() {
                "no team ask is open"
            } else {
                "reading the team's asks…"
            },
            theme.dim(),
        ));
    }
    for (i, ask) in team.asks.iter().enumerate() {
        let head = super::team::summary(ask, team.seconds_left(ask, state.now));
        let selected = i == team.selected;
        let marker = if selected { "▶ " } else { "  " };
        let style = if selected && focused {
            theme.selected()
        } else {
            Style::default()
        };
        lines.push(Line::styled(format!("{marker}{head}"), style));
        if let Some(reason) = &ask.reason {
            lines.push(Line::raw(format!("    reason: {reason}")));
        }
        lines.push(Line::raw(format!("    {}", super::team::input_line(ask))));
    }
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn draw_footer(frame: &mut Frame, area: Rect, state: &State, theme: &Theme) {
    let line = match &state.mode {
        Mode::Search { text } => Line::raw(format!("/{text}▏  (Enter keep · Esc clear)")),
        Mode::Reason { label, text, .. } => Line::raw(format!(
            "deny {label}, reason: {text}▏  (Enter deny · Esc cancel)"
        )),
        Mode::TeamReason { label, text, .. } => Line::raw(format!(
            "deny team ask {label}, reason: {text}▏  (Enter deny · Esc cancel)"
        )),
        Mode::Steer { run_id, text } => Line::raw(format!(
            "message to run {run_id}: {text}▏  (Enter send · Esc cancel)"
        )),
        _ => match &state.notice {
            Some(notice) => Line::styled(notice.clone(), theme.fg(Color::Yellow)),
            None if state.focus == Pane::Team => Line::styled(
                "team ask: y allow · n deny (with a reason) · j k move · Tab pane · ? help · q quit",
                theme.dim(),
            ),
            None => Line::styled(
                "y allow · n deny · s session · a always · N never · e explain · Tab pane · / search · ? help · q quit",
                theme.dim(),
            ),
        },
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn draw_help(frame: &mut Frame, area: Rect, theme: &Theme) {
    let lines: Vec<Line> = HELP
        .iter()
        .map(|(keys, what)| {
            Line::from(vec![
                Span::styled(
                    format!("{keys:>10}  "),
                    theme.fg(Color::Yellow).add_modifier(Modifier::BOLD),
                ),
                Span::raw(*what),
            ])
        })
        .chain([Line::raw(""), Line::styled("any key closes", theme.dim())])
        .collect();
    let popup = centered(area, 76, lines.len() as u16 + 2);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(Block::bordered().title(" keys ")),
        popup,
    );
}

fn draw_popup(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    text: &str,
    scroll: u16,
    width: u16,
    theme: &Theme,
) {
    // Lines as wrapped inside the border, so a long question shows whole.
    let inner = usize::from(width.min(area.width).saturating_sub(2)).max(1);
    let rows: usize = text
        .lines()
        .map(|line| line.chars().count().div_ceil(inner).max(1))
        .sum();
    let height = (rows as u16 + 4).min(area.height.saturating_sub(2));
    let popup = centered(area, width, height);
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(text.to_string())
            .wrap(Wrap { trim: false })
            .scroll((scroll, 0))
            .block(
                Block::bordered()
                    .title(format!(" {title} "))
                    .title_bottom(Line::styled(" Esc closes ", theme.dim())),
            ),
        popup,
    );
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    }
}

fn short_session(session: Option<&str>) -> String {
    session.map_or_else(|| "-".into(), |s| s.chars().take(8).collect())
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let cut: String = text.chars().take(max - 1).collect();
        format!("{cut}…")
    }
}

fn latency(us: u64) -> String {
    if us < 1_000 {
        format!("{us}µs")
    } else if us < 1_000_000 {
        format!("{}ms", us / 1_000)
    } else {
        format!("{:.1}s", us as f64 / 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approve::state::State;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    use serde_json::json;
    use std::time::{Duration, Instant};

    fn render(state: &State, width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|f| draw(f, state)).unwrap();
        let buffer = terminal.backend().buffer();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn event(id: &str, tool: &str, tool_input: Value) -> Value {
        json!({
            "type": "event", "id": id, "received_at": "2026-11-23T19:04:05.123456Z",
            "harness": "claude-code", "session_id": "1fce3faa-62dc-4336-ba9c-8494671dd902",
            "cwd": "/home/dev/project", "kind": "PreToolUse", "tool": tool,
            "input": {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input},
        })
    }

    fn state() -> State {
        let mut state = State::new("/run/hookd.sock", Instant::now(), false);
        state.apply_json(
            &json!({"type": "welcome", "v": 1, "server_version": "0.1.0", "capabilities": []}),
        );
        state
    }

    #[test]
    fn the_runs_pane_shows_each_runs_runtime_turns_and_cost_so_far() {
        let mut state = state();
        state.apply_json(&json!({"type": "run_start", "run_id": "01a21a77-pi", "prompt": "clean up",
            "model": "gpt-5", "runtime": "pi", "received_at": "", "client": "c", "cwd": "/", "pid": 7}));
        state.apply_json(
            &json!({"type": "sdk_message", "run_id": "01a21a77-pi", "received_at": "",
            "message": {"type": "assistant", "runtime": "pi", "total_cost_usd": 0.0213,
                        "message": {"content": []}}}),
        );
        let screen = render(&state, 120, 30);
        let row = screen
            .lines()
            .find(|l| l.contains("01a21a77-pi"))
            .unwrap_or_else(|| panic!("no run row: {screen}"));
        for part in ["pi", "gpt-5", "1 turns", "$0.0213", "clean up"] {
            assert!(row.contains(part), "{part}: {row}");
        }
        assert!(screen.contains("runtime"), "the column's header: {screen}");
    }

    #[test]
    fn a_pending_item_shows_its_id_whole_command_rule_and_countdown() {
        let mut state = state();
        let long = format!(
            "npm test -- --grep '{}' && echo the-very-end",
            "x".repeat(90)
        );
        state.apply_json(&json!({"type": "event", "pending": true, "deadline_ms": 83_500,
            "short_id": "kmnpq", "verdicts": ["allow", "deny"],
            "asked_by": {"rule_ids": ["ask-npm"], "reason": "npm runs package scripts"},
            "suggestions": [{"remember": "session", "verdict": "allow", "rule": "Bash(npm test:*)"}],
            "event": event("019ab0a4-1111-7000-8000-00000000abcd", "Bash", json!({"command": long}))}));
        let screen = render(&state, 120, 40);
        assert!(screen.contains("kmnpq"), "{screen}");
        assert!(screen.contains("1:23"), "countdown: {screen}");
        assert!(
            screen.contains("the-very-end"),
            "whole command, wrapped: {screen}"
        );
        assert!(
            screen.contains("asked by: ask-npm — npm runs package scripts"),
            "{screen}"
        );
        assert!(screen.contains("s: Bash(npm test:*)"), "{screen}");
        assert!(screen.contains("1 pending"), "{screen}");
        // A second later, the countdown moved.
        state.tick(state.now + Duration::from_secs(1));
        assert!(render(&state, 120, 40).contains("1:22"));
    }

    #[test]
    fn an_outvoted_always_is_said_on_the_item_and_in_the_question() {
        let note = "the rules still ask about this event: rule ask-npm (ask beats allow); narrow or remove it to stop being asked";
        let mut state = state();
        state.apply_json(&json!({"type": "event", "pending": true, "deadline_ms": 83_500,
            "short_id": "kmnpq", "verdicts": ["allow", "deny"],
            "asked_by": {"rule_ids": ["ask-npm"]},
            "suggestions": [
                {"remember": "session", "verdict": "allow", "rule": "Bash(npm test:*)"},
                {"remember": "always", "verdict": "allow", "rule": "Bash(npm test:*)", "note": note}],
            "event": event("019ab0a4-1111-7000-8000-00000000abcd", "Bash", json!({"command": "npm test"}))}));
        let screen = render(&state, 160, 40);
        assert!(
            screen.contains(
                "a would change nothing: the rules still ask about this event: rule ask-npm"
            ),
            "{screen}"
        );
        state.on_key(crossterm::event::KeyEvent::from(
            crossterm::event::KeyCode::Char('a'),
        ));
        let screen = render(&state, 120, 40);
        // Wrapped in the popup, whole: its last words are there.
        assert!(screen.contains("It would change nothing:"), "{screen}");
        assert!(screen.contains("to stop being asked."), "{screen}");
        assert!(screen.contains("y / Enter: yes"), "{screen}");
    }

    #[test]
    fn an_edit_is_previewed_as_a_diff() {
        let mut state = state();
        state.apply_json(&json!({"type": "event", "pending": true, "deadline_ms": 1000,
            "event": event("019ab0a4-1111-7000-8000-0000000000ef", "Edit",
                json!({"file_path": "/repo/src/lib.rs", "old_string": "let a = 1;", "new_string": "let a = 2;\nlet b = 3;"}))}));
        let screen = render(&state, 120, 40);
        assert!(screen.contains("edit /repo/src/lib.rs"), "{screen}");
        assert!(screen.contains("- let a = 1;"), "{screen}");
        assert!(
            screen.contains("+ let a = 2;") && screen.contains("+ let b = 3;"),
            "{screen}"
        );
        assert!(screen.contains("0000ef"), "uuid end as the id: {screen}");
        assert!(screen.contains("no rule to remember"), "{screen}");
    }

    #[test]
    fn the_feed_has_its_columns() {
        let mut state = state();
        state.apply_json(&json!({"type": "event", "pending": false,
            "event": event("e1", "Bash", json!({"command": "rm -rf build"}))}));
        state.apply_json(
            &json!({"type": "decision", "decision": {"event_id": "e1", "verdict": "deny",
            "source": "rule", "rule_ids": ["no-rm"], "latency_us": 2300}}),
        );
        let screen = render(&state, 140, 30);
        for column in [
            "time", "session", "harness", "event", "tool", "input", "verdict", "by", "latency",
        ] {
            assert!(screen.contains(column), "{column}: {screen}");
        }
        let row = screen
            .lines()
            .find(|l| l.contains("rm -rf build"))
            .expect(&screen);
        for cell in [
            "19:04:05",
            "1fce3faa project",
            "claude",
            "PreToolUse",
            "Bash",
            "deny",
            "no-rm",
            "2ms",
        ] {
            assert!(row.contains(cell), "{cell}: {row}");
        }
        assert!(screen.contains("nothing is waiting"), "{screen}");
    }

    /// At 160 columns every event name fits its column whole (it was cut
    /// to 14 characters: `UserPromptSubm`).
    #[test]
    fn the_feed_fits_the_longest_event_name_when_there_is_room() {
        let mut state = state();
        for (id, kind) in [
            ("e1", "UserPromptSubmit"),
            ("e2", "PostToolUseFailure"),
            ("e3", "Stop"),
        ] {
            let mut e = event(id, "", json!({}));
            e["kind"] = kind.into();
            e["input"]["hook_event_name"] = kind.into();
            state.apply_json(&json!({"type": "event", "pending": false, "event": e}));
        }
        let screen = render(&state, 160, 30);
        for kind in ["UserPromptSubmit", "PostToolUseFailure"] {
            assert!(
                screen.lines().any(|l| l.contains(&format!(" {kind} "))),
                "{kind} cut: {screen}"
            );
        }
        // Narrower, the input column keeps its 20 and the event column its
        // old 14; ratatui shares out any shortfall from there.
        let rows = state.visible_feed();
        assert_eq!(event_column_width(&rows, 158), 18);
        assert_eq!(event_column_width(&rows, 98), 14);
        assert_eq!(event_column_width(&rows[2..], 158), 5);
    }

    #[test]
    fn help_lists_every_key_and_the_daemon_down_is_said() {
        let mut state = state();
        state.mode = Mode::Help;
        let screen = render(&state, 120, 40);
        for (keys, what) in HELP {
            assert!(
                screen.contains(keys) && screen.contains(what),
                "{keys}: {screen}"
            );
        }
        state.mode = Mode::Normal;
        state.disconnected("connection refused", 2);
        let screen = render(&state, 120, 40);
        assert!(
            screen.contains("hookd is down (connection refused)"),
            "{screen}"
        );
    }

    #[test]
    fn no_color_means_no_colour() {
        let coloured_cells = |color: bool| {
            let mut state = state();
            state.color = color;
            state.apply_json(&json!({"type": "event", "pending": true, "deadline_ms": 1000,
                "event": event("e1", "Edit", json!({"file_path": "/a", "old_string": "x", "new_string": "y"}))}));
            let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
            terminal.draw(|f| draw(f, &state)).unwrap();
            let buffer = terminal.backend().buffer().clone();
            buffer
                .content()
                .iter()
                .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
                .count()
        };
        assert!(coloured_cells(true) > 0);
        assert_eq!(coloured_cells(false), 0);
    }

    #[test]
    fn the_team_pane_lists_each_ask_with_its_reason_input_and_countdown() {
        let mut state = state();
        state.team = Some(crate::approve::team::TeamPane::default());
        assert!(render(&state, 100, 30).contains("reading the team's asks"));
        state.team_read(Ok(vec![hookd_team::approvals::OpenAsk {
            id: "0193a0c4".into(),
            short_id: "qhxbz".into(),
            machine: "laptop".into(),
            agent: "claude-code".into(),
            rule_ids: vec!["push".into()],
            reason: Some("pushing to main needs two approvers".into()),
            narration: None,
            tool: Some("Bash".into()),
            input: json!({"command": "git push origin main"}),
            approvals_required: 2,
            allowed_by: vec!["alice".into()],
            seconds_left: 30.0,
        }]));
        state.now += Duration::from_secs(3);
        let screen = render(&state, 100, 30);
        assert!(screen.contains("Team asks (1)"), "{screen}");
        assert!(
            screen.contains(
                "▶ qhxbz  claude-code on laptop  rule push  27s left  allows 1/2 (alice)"
            ),
            "{screen}"
        );
        assert!(
            screen.contains("reason: pushing to main needs two approvers"),
            "{screen}"
        );
        assert!(screen.contains("Bash: git push origin main"), "{screen}");
        state.team_read(Err("reading the open team asks: connection refused".into()));
        assert!(render(&state, 100, 30).contains("connection refused"));
        for (w, h) in [(1, 1), (10, 5), (40, 12)] {
            render(&state, w, h);
        }
    }

    #[test]
    fn a_tiny_terminal_does_not_panic() {
        let mut state = state();
        state.apply_json(
            &json!({"type": "event", "pending": true, "deadline_ms": 1000,
            "event": event("e1", "Bash", json!({"command": "ls"}))}),
        );
        state.mode = Mode::Help;
        for (w, h) in [(1, 1), (10, 5), (40, 12)] {
            render(&state, w, h);
        }
    }
}
