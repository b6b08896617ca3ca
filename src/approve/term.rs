//! The full-screen approver's IO loop: the terminal (crossterm's event
//! stream), the daemon's socket, a one-second tick while a countdown is on
//! screen, reconnects, signals. It redraws only when the state says
//! something changed, so an idle approver sleeps.
//!
//! The terminal is restored however the loop ends: on return (a guard), on
//! panic (a panic hook that runs before the default one prints), and on
//! SIGTERM / SIGINT / SIGHUP (they end the loop like `q`).

use std::io::{self, Stdout};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use crossterm::event::{Event, EventStream, KeyEventKind};
use crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use crossterm::{cursor, execute};
use futures_util::{SinkExt, StreamExt};
use ratatui::backend::CrosstermBackend;
use ratatui::Terminal;
use tokio::signal::unix::{signal, SignalKind};
use tokio::time::MissedTickBehavior;

use super::state::State;
use super::wire::Request;
use super::{connect, explain, next_frame, view, Backoff, Conn};

/// Runs the approver on this terminal until `q`, Ctrl-C or a signal.
/// `color`: false when `NO_COLOR` is set; `team`: the Team pane's
/// database, connected to as the approver (`--team`).
pub fn run(
    socket: &Path,
    color: bool,
    team: Option<hookd_team::ConnectTarget>,
) -> anyhow::Result<()> {
    use std::io::IsTerminal;
    if !io::stdin().is_terminal() || !io::stdout().is_terminal() {
        anyhow::bail!(
            "hookd approve needs a terminal on stdin and stdout; for pipes, scripts and dumb terminals use `hookd approve --plain`"
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        // Signals first: a SIGTERM during set-up must not leave the
        // terminal raw.
        let signals = Signals::new()?;
        let _restore = TerminalGuard::enter()?;
        let mut terminal =
            Terminal::new(CrosstermBackend::new(io::stdout())).context("opening the terminal")?;
        terminal.clear()?;
        event_loop(socket, color, team, &mut terminal, signals).await
    })
}

struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> anyhow::Result<Signals> {
        let on = |kind| signal(kind).context("installing signal handlers");
        Ok(Signals {
            term: on(SignalKind::terminate())?,
            int: on(SignalKind::interrupt())?,
            hup: on(SignalKind::hangup())?,
        })
    }

    async fn any(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {}
            _ = self.int.recv() => {}
            _ = self.hup.recv() => {}
        }
    }
}

async fn event_loop(
    socket: &Path,
    color: bool,
    team: Option<hookd_team::ConnectTarget>,
    terminal: &mut Terminal<CrosstermBackend<Stdout>>,
    mut signals: Signals,
) -> anyhow::Result<()> {
    let mut state = State::new(&socket.display().to_string(), Instant::now(), color);
    let mut team = team.map(|target| {
        state.team = Some(super::team::TeamPane::default());
        super::team::link(target)
    });
    let mut keys = EventStream::new();
    let mut conn: Option<Conn> = None;
    let mut backoff = Backoff::new();
    let mut retry_at = tokio::time::Instant::now();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    loop {
        state.now = Instant::now();
        if state.dirty {
            terminal.draw(|frame| view::draw(frame, &state))?;
            state.dirty = false;
        }
        if state.quit {
            return Ok(());
        }
        // The team's asks are read when the link says (the database
        // announced a change, the slow poll, backoff while it is away) and
        // after each answer.
        let requests = tokio::select! {
            key = keys.next() => match key {
                Some(Ok(Event::Key(key))) if key.kind == KeyEventKind::Press => {
                    state.now = Instant::now();
                    state.on_key(key)
                }
                Some(Ok(Event::Resize(..))) => {
                    terminal.autoresize()?;
                    state.dirty = true;
                    Vec::new()
                }
                Some(Ok(_)) => Vec::new(),
                Some(Err(e)) => return Err(e).context("reading the terminal"),
                None => return Ok(()),
            },
            frame = next_frame(&mut conn) => match frame {
                Some(frame) => {
                    state.now = Instant::now();
                    state.apply(frame)
                }
                None => {
                    conn = None;
                    let delay = backoff.next_delay();
                    state.disconnected("hookd closed the connection", delay.as_secs().max(1));
                    retry_at = tokio::time::Instant::now() + delay;
                    Vec::new()
                }
            },
            _ = team_changed(&mut team) => {
                if let Some(link) = team.as_mut() {
                    super::team::refresh(link, &mut state).await;
                }
                Vec::new()
            }
            _ = tick.tick(), if state.counting_down() => {
                state.tick(Instant::now());
                Vec::new()
            }
            _ = tokio::time::sleep_until(retry_at), if conn.is_none() => {
                match connect(socket).await {
                    Ok(c) => {
                        conn = Some(c);
                        backoff.reset();
                    }
                    Err(e) => {
                        let delay = backoff.next_delay();
                        let reason = match e.kind() {
                            std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => {
                                "not running".to_string()
                            }
                            _ => e.to_string(),
                        };
                        state.disconnected(&reason, delay.as_secs().max(1));
                        retry_at = tokio::time::Instant::now() + delay;
                    }
                }
                Vec::new()
            }
            _ = signals.any() => return Ok(()),
        };
        for request in requests {
            if let Request::TeamAnswer {
                id,
                label,
                allow,
                reason,
            } = &request
            {
                let outcome = match team.as_mut() {
                    Some(link) => super::team::answer(link, id, *allow, reason.as_deref()).await,
                    None => Err("no team database (`--team`)".to_string()),
                };
                state.team_answered(label, outcome);
                if let Some(link) = team.as_mut() {
                    super::team::refresh(link, &mut state).await;
                }
                continue;
            }
            if let Request::Explain {
                event_id,
                input,
                harness,
            } = &request
            {
                let agent = explain::agent_of_harness(harness);
                let text = match (state.rules_source.as_deref(), &state.daemon_rules) {
                    (Some(source), Some(daemon)) => {
                        explain::explain(input, agent, &explain::source_named(source), daemon)
                            .unwrap_or_else(|e| format!("cannot read the daemon's rules: {e:#}"))
                    }
                    _ => "the daemon has not said where its rules are yet".to_string(),
                };
                state.show_explanation(event_id, text);
                continue;
            }
            let (Some(c), Some(frame)) = (conn.as_mut(), state.frame(&request)) else {
                state.notice = Some("not connected to hookd; nothing was sent".into());
                continue;
            };
            if let Err(e) = c.send(&frame).await {
                conn = None;
                let delay = backoff.next_delay();
                state.disconnected(&format!("sending to hookd: {e}"), delay.as_secs().max(1));
                retry_at = tokio::time::Instant::now() + delay;
                break;
            }
        }
    }
}

/// When the Team pane's asks are to be read again (pending without
/// `--team`).
async fn team_changed(team: &mut Option<hookd_team::asks_link::AsksLink>) {
    match team.as_mut() {
        Some(link) => {
            link.changed().await;
        }
        None => std::future::pending().await,
    }
}

/// Raw mode and the alternate screen while it lives; restored on drop and,
/// through a panic hook, before a panic message is printed.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> anyhow::Result<TerminalGuard> {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore();
            previous(info);
        }));
        enable_raw_mode().context("switching the terminal to raw mode (is stdin a terminal?)")?;
        let guard = TerminalGuard;
        execute!(io::stdout(), EnterAlternateScreen, cursor::Hide)
            .context("entering the alternate screen")?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(io::stdout(), LeaveAlternateScreen, cursor::Show);
}
