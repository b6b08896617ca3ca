//! `hookd statusline`: one status line for Claude Code's statusLine setting
//! (the fetch and the rendering are `crate::statusline`'s).

use std::io::Write as _;
use std::path::PathBuf;

use super::output::Stdout;
use super::Outcome;

#[derive(clap::Args)]
pub struct Args {
    /// Daemon socket [default: $HOOKD_SOCKET, then $XDG_RUNTIME_DIR/hookd/hookd.sock,
    /// then /tmp/hookd-$UID/hookd.sock].
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
}

/// `hookd statusline`.
pub fn run(args: Args) -> anyhow::Result<Outcome> {
    let socket = args.socket.unwrap_or_else(crate::paths::socket_path);
    let session = session_from_stdin();
    let fetched =
        crate::statusline::fetch_with(&socket, crate::statusline::BUDGET, session.as_deref());
    let (status, note) = match &fetched {
        Some((status, note)) => (Some(status), note.as_deref()),
        None => (None, None),
    };
    writeln!(Stdout, "{}", crate::statusline::render_with(status, note))?;
    Ok(Outcome::Success)
}

/// The `session_id` of the JSON Claude Code writes on the status line
/// command's stdin; `None` from a terminal, or when nothing readable came
/// within [`STDIN_WAIT`] (a pipe nobody closes never holds the line up).
fn session_from_stdin() -> Option<String> {
    use std::io::{IsTerminal as _, Read as _};
    if std::io::stdin().is_terminal() {
        return None;
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = std::io::stdin().take(1 << 20).read_to_end(&mut text);
        let _ = tx.send(text);
    });
    let text = rx.recv_timeout(STDIN_WAIT).ok()?;
    let input: serde_json::Value = serde_json::from_slice(&text).ok()?;
    input
        .get("session_id")
        .and_then(|s| s.as_str())
        .map(str::to_owned)
}

/// How long the line waits for Claude Code's JSON on stdin.
const STDIN_WAIT: std::time::Duration = std::time::Duration::from_millis(50);
