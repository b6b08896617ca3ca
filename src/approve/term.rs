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
        TeamLink {
            target,
            link: None,
            poll: hookd_team::approvals::open_asks_poll(),
            next_read: tokio::time::Instant::now(),
        }
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
        // The team's asks are read when the database announces a change
        // (`hookd_ask_published`), after each answer, on a slow poll, and
        // each second while the database is away.
        let team_read_at = team.as_ref().map_or_else(far_future, |link| link.next_read);
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
            _ = tokio::time::sleep_until(team_read_at), if team.is_some() => {
                if let Some(link) = team.as_mut() {
                    state.now = Instant::now();
                    link.refresh(&mut state).await;
                }
                Vec::new()
            }
            note = team_announced(&mut team) => {
                if let Some(link) = team.as_mut() {
                    if note.is_none() {
                        // The LISTEN connection ended: connect again and read.
                        link.link = None;
                    }
                    state.now = Instant::now();
                    link.refresh(&mut state).await;
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
                    Some(link) => link.answer(id, *allow, reason.as_deref()).await,
                    None => Err("no team database (`--team`)".to_string()),
                };
                state.team_answered(label, outcome);
                if let Some(link) = team.as_mut() {
                    state.now = Instant::now();
                    link.refresh(&mut state).await;
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

/// The Team pane's database: connected on first use and again after a
/// loss, every call bounded so a slow database never freezes the screen
/// for long. The connection LISTENs on `hookd_ask_published`, so a new,
/// decided or closed ask is read at once; the poll is the fallback.
struct TeamLink {
    target: hookd_team::ConnectTarget,
    link: Option<(
        hookd_team::approvals::Client,
        tokio::sync::mpsc::UnboundedReceiver<String>,
    )>,
    /// The fallback poll (`hookd_team::approvals::open_asks_poll`).
    poll: Duration,
    /// When the open asks are read next without an announcement.
    next_read: tokio::time::Instant,
}

/// A far instant, for a `sleep_until` branch that is disabled.
fn far_future() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(86_400 * 365)
}

/// The next announcement on the Team pane's connection: `Some(id)`, or
/// `None` once that connection ended; pending while there is none.
async fn team_announced(team: &mut Option<TeamLink>) -> Option<String> {
    match team.as_mut().and_then(|link| link.link.as_mut()) {
        Some((_, notes)) => notes.recv().await,
        None => std::future::pending().await,
    }
}

impl TeamLink {
    const LIMIT: Duration = Duration::from_secs(5);

    async fn client(&mut self) -> Result<&hookd_team::approvals::Client, String> {
        if self.link.as_ref().is_some_and(|(c, _)| c.is_closed()) {
            self.link = None;
        }
        if self.link.is_none() {
            let connected = tokio::time::timeout(
                Self::LIMIT,
                hookd_team::approvals::listen_on(&self.target, hookd_team::approvals::PUBLISHED),
            )
            .await
            .map_err(|_| "the team database did not answer in 5 s".to_string())?
            .map_err(|e| format!("connecting to {}: {e}", self.target.describe()))?;
            self.link = Some(connected);
        }
        Ok(&self.link.as_ref().expect("connected above").0)
    }

    async fn refresh(&mut self, state: &mut State) {
        let read = match self.client().await {
            Ok(client) => tokio::time::timeout(Self::LIMIT, super::team::read(client))
                .await
                .unwrap_or_else(|_| Err("the team database did not answer in 5 s".into())),
            Err(e) => Err(e),
        };
        // Away: try again each second; else the slow poll (announcements
        // wake it sooner).
        let wait = if read.is_err() {
            self.link = None;
            Duration::from_secs(1)
        } else {
            self.poll
        };
        self.next_read = tokio::time::Instant::now() + wait;
        state.team_read(read);
    }

    async fn answer(
        &mut self,
        id: &str,
        allow: bool,
        reason: Option<&str>,
    ) -> Result<String, String> {
        let client = self.client().await?;
        tokio::time::timeout(Self::LIMIT, super::team::answer(client, id, allow, reason))
            .await
            .unwrap_or_else(|_| Err("the team database did not answer in 5 s".into()))
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
