//! `hookd install` / `hookd uninstall`: register `hook-forwarder` in a Claude
//! Code settings file, and take it out again. The same for Codex CLI's
//! `hooks.json` and Gemini CLI's `settings.json` ([`InstallOptions::agent`]):
//! all three hold `{"hooks": {EVENT: [{"matcher"?, "hooks": [HANDLER]}]}}`,
//! with the agent's own event names, and a handler that is Claude Code's
//! exec form (`command` + `args`, `timeout` in seconds), Codex's command
//! line (`timeout` in seconds) or Gemini's command line (`name`, `timeout`
//! in **milliseconds**); the two command lines run
//! `hook-forwarder --agent codex|gemini …`. Each agent has its own timeout
//! ladder ([`timings`]). Codex and Gemini groups have `"matcher": "*"`
//! (Gemini compares a SessionStart, SessionEnd or PreCompress matcher as a
//! plain string: `".*"` would silently drop those events).
//!
//! The core is pure: (settings text, options) → new text
//! ([`install_text`], [`uninstall_text`]). Files are read and written only at
//! the edge ([`install`], [`uninstall`]): a backup of the previous file, an
//! atomic replace (temp file in the same directory + rename) that keeps the
//! file's mode and owner.
//!
//! **Formatting.** The file is edited by splicing text into it (see
//! [`jsontext`]), never by re-serializing it, so everything hookd does not
//! add keeps its exact bytes: key order, indentation, blank lines, number
//! spelling, string escapes, CRLF line ends, a missing final newline. Added
//! entries are pretty-printed like their neighbours (the file's own indent
//! unit and line ends; compact when the enclosing object or array is written
//! on one line). A missing or blank file becomes a 2-space pretty-printed
//! object. Uninstall removes exactly the text install added, so a file
//! nobody edited in between comes back byte for byte; the only exceptions
//! are containers left empty: an event array or the `hooks` object that held
//! nothing but hookd's entries is removed (and so is a `"hooks": {}` or an
//! empty event array that was there before install), and an empty object
//! that install opened up comes back as `{}`. A file that is not plain JSON
//! (comments, trailing commas) is refused with its line:column and never
//! touched.
//!
//! **Recognising our entries.** Every handler install writes runs a file
//! named `hook-forwarder` with [`MARKER_ARG`] among its args (the words of
//! its command line, for Codex and Gemini); uninstall removes exactly those
//! (the forwarder accepts and ignores the marker).
//! Hand-written forwarder entries without the marker are left alone.

pub mod diff;
pub mod jsontext;
pub mod managed;

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::Serialize;
use serde_json::Value;

use crate::agent::claude::{FailClosed, HookEventKind};
use crate::agent::Agent;
use jsontext::{Element, Node, Out, Style};

/// The forwarder's file name: a handler whose `command` names a file called
/// this is a hookd registration.
pub const FORWARDER_NAME: &str = "hook-forwarder";

/// The argument that marks the handlers `hookd install` wrote.
pub const MARKER_ARG: &str = "--installed-by=hookd";

/// Appended to the settings file's name for the copy of the previous file.
pub const BACKUP_SUFFIX: &str = ".hookd-backup";

/// How one event's handler is registered: the deadline ladder is
/// `agent_s` (the agent kills the hook) > `forwarder_s` (the forwarder
/// gives up and applies the fallback) > the daemon's deadline (90 % of the
/// forwarder's budget, `daemon::hook::daemon_budget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Timing {
    /// The forwarder's `--timeout`, in seconds.
    pub forwarder_s: u32,
    /// The agent's `timeout`, in seconds (Gemini's file gets it in
    /// milliseconds).
    pub agent_s: u32,
    /// Whether the handler is registered with `"async": true`.
    #[serde(rename = "async")]
    pub async_hook: bool,
}

/// The groups of events that share a [`Timing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum EventClass {
    /// Events whose hook can change what happens (`is_decision_point`): a
    /// rule or a client may decide, so they get time.
    DecisionPoint,
    /// Everything else: the daemon answers at once, so the only wait is the
    /// round trip, and a short deadline bounds a wedged daemon.
    ObserveOnly,
    /// SessionEnd: Claude Code waits only 1.5 s for it by default, at exit.
    SessionEnd,
}

/// The one table of timeouts (documented in the README).
///
/// - Decision points: 30 s is Claude Code's own default for
///   UserPromptSubmit and the model-switch events, so one value keeps every
///   decision point at or below its default; the forwarder's 25 s gives the
///   daemon 24.5 s to decide (a rule or a socket client).
/// - Observe-only: answered at once; 2 s covers a busy machine and a daemon
///   restart under socket activation (connections queue meanwhile), 5 s
///   leaves Claude Code 3 s for spawning and reading the forwarder.
/// - SessionEnd: 1 s / 2 s. A per-hook `timeout` raises Claude Code's 1.5 s
///   limit, so 2 s keeps the ladder (forwarder 1 s, daemon 0.9 s) without
///   slowing an exit by more than half a second in the worst case.
///
/// No event is registered `"async": true`. Measured against Claude Code
/// 2.1.330 (`tests/e2e_install.rs`, `measure_async_observe_only_hooks`: a
/// one-Bash-call `-p` session firing 9 hooks, 4 of them observe-only, 5 runs
/// per mode, interleaved):
/// - healthy daemon: sync and async both delivered 9/9 events, SessionEnd
///   included, before the CLI exited; median wall time 830 ms sync vs 880 ms
///   async (run-to-run spread ±120 ms: no measurable gain), but async logged
///   SessionStart after UserPromptSubmit in 1 run of 5;
/// - observe-only hooks slowed by 500 ms: async saved 1.1 s per session
///   (median 1.88 s vs 2.97 s) but logged events out of order in 5/5 runs,
///   and SessionEnd reached the daemon only after the CLI had exited (from
///   the orphaned hook) in 5/5.
///
/// The log's order is the session's order for `tail` and `replay`, and the
/// gain appears only when hooks are slow, which the 2 s forwarder deadline
/// already bounds. The column stays so a future choice is one edit.
pub const TIMINGS: [(EventClass, Timing); 3] = [
    (
        EventClass::DecisionPoint,
        Timing {
            forwarder_s: 25,
            agent_s: 30,
            async_hook: false,
        },
    ),
    (
        EventClass::ObserveOnly,
        Timing {
            forwarder_s: 2,
            agent_s: 5,
            async_hook: false,
        },
    ),
    (
        EventClass::SessionEnd,
        Timing {
            forwarder_s: 1,
            agent_s: 2,
            async_hook: false,
        },
    ),
];

/// Codex CLI's ladder, in seconds like Claude Code's. Codex's own default
/// is 600 s; decision points get Claude Code's 30 s (25 s for the
/// forwarder), observe-only events 5 s (2 s). Codex clamps SessionEnd
/// hooks to 3 s whatever the file says, so 3 s is written (1 s for the
/// forwarder): the ladder holds under the clamp.
pub const CODEX_TIMINGS: [(EventClass, Timing); 3] = [
    (
        EventClass::DecisionPoint,
        Timing {
            forwarder_s: 25,
            agent_s: 30,
            async_hook: false,
        },
    ),
    (
        EventClass::ObserveOnly,
        Timing {
            forwarder_s: 2,
            agent_s: 5,
            async_hook: false,
        },
    ),
    (
        EventClass::SessionEnd,
        Timing {
            forwarder_s: 1,
            agent_s: 3,
            async_hook: false,
        },
    ),
];

/// Gemini CLI's ladder (written to its file in milliseconds). Gemini's own
/// default is 60 s for every event; the same steps as Claude Code's keep a
/// wedged daemon from holding a session for a minute.
pub const GEMINI_TIMINGS: [(EventClass, Timing); 3] = [
    (
        EventClass::DecisionPoint,
        Timing {
            forwarder_s: 25,
            agent_s: 30,
            async_hook: false,
        },
    ),
    (
        EventClass::ObserveOnly,
        Timing {
            forwarder_s: 2,
            agent_s: 5,
            async_hook: false,
        },
    ),
    (
        EventClass::SessionEnd,
        Timing {
            forwarder_s: 1,
            agent_s: 2,
            async_hook: false,
        },
    ),
];

/// The timeout table of `agent`.
pub fn timings(agent: Agent) -> &'static [(EventClass, Timing); 3] {
    match agent {
        Agent::ClaudeCode => &TIMINGS,
        Agent::Codex => &CODEX_TIMINGS,
        Agent::Gemini => &GEMINI_TIMINGS,
    }
}

/// The class of a Claude Code event.
pub fn class(kind: HookEventKind) -> EventClass {
    class_for(Agent::ClaudeCode, kind)
}

/// The class of an event of `agent` (of hookd kind `kind`): a decision
/// point is one the agent honors some verdict for.
pub fn class_for(agent: Agent, kind: HookEventKind) -> EventClass {
    if kind == HookEventKind::SessionEnd {
        EventClass::SessionEnd
    } else if agent.is_decision_point(kind) {
        EventClass::DecisionPoint
    } else {
        EventClass::ObserveOnly
    }
}

/// The timing of a Claude Code event's handler, from [`TIMINGS`].
pub fn timing(kind: HookEventKind) -> Timing {
    timing_for(Agent::ClaudeCode, kind)
}

/// The timing of `agent`'s handler for an event of kind `kind`.
pub fn timing_for(agent: Agent, kind: HookEventKind) -> Timing {
    let class = class_for(agent, kind);
    timings(agent)
        .iter()
        .find(|(c, _)| *c == class)
        .map(|(_, t)| *t)
        .expect("every class has a row")
}

/// The name `agent` gives the event hookd knows as `kind` (`BeforeTool`
/// for Gemini's PreToolUse); `None` when the agent has no such event.
pub fn event_name(agent: Agent, kind: HookEventKind) -> Option<&'static str> {
    match agent {
        Agent::ClaudeCode => (kind != HookEventKind::Unknown).then(|| kind.as_str()),
        Agent::Codex => crate::agent::codex::kind::name_of(kind),
        Agent::Gemini => crate::agent::gemini::kind::name_of(kind),
    }
}

/// The events registered for `agent` without `--events`: Claude Code's
/// [`default_events`]; every Codex event hookd maps (not `Interrupt`, which
/// nothing can decide); Gemini's events but the three model events, which
/// carry the whole conversation and fire per streamed chunk.
pub fn default_events_for(agent: Agent) -> Vec<HookEventKind> {
    match agent {
        Agent::ClaudeCode => default_events(),
        Agent::Codex => crate::agent::codex::EVENTS
            .iter()
            .map(|e| e.kind)
            .filter(|k| *k != HookEventKind::Unknown)
            .collect(),
        Agent::Gemini => crate::agent::gemini::EVENTS
            .iter()
            .filter(|e| e.registered_by_default && e.kind != HookEventKind::Unknown)
            .map(|e| e.kind)
            .collect(),
    }
}

/// Parses `--events` for `agent`, in the agent's own names
/// (`BeforeTool,AfterAgent` for Gemini).
pub fn parse_events_for(agent: Agent, list: &str) -> Result<Vec<HookEventKind>, String> {
    if agent == Agent::ClaudeCode {
        return parse_events(list);
    }
    let known: Vec<&str> = default_events_for(agent)
        .iter()
        .filter_map(|k| event_name(agent, *k))
        .collect();
    let mut events = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let kind = agent.event_kind(name);
        if kind == HookEventKind::Unknown || event_name(agent, kind) != Some(name) {
            return Err(format!(
                "--events: {agent} has no event `{name}` that hookd judges (names are \
                 case-sensitive); {agent}'s events: {}",
                known.join(",")
            ));
        }
        if !events.contains(&kind) {
            events.push(kind);
        }
    }
    if events.is_empty() {
        return Err(format!(
            "--events: give at least one event name, e.g. --events {}",
            known.first().copied().unwrap_or("PreToolUse")
        ));
    }
    Ok(events)
}

/// The events installed when `--events` is not given: all of Claude Code's
/// events except `WorktreeCreate`, whose hook *replaces* worktree creation
/// (it must create the worktree and print its path; a forwarder that answers
/// "no opinion" would make `claude --worktree` fail).
pub fn default_events() -> Vec<HookEventKind> {
    HookEventKind::ALL
        .iter()
        .copied()
        .filter(|k| *k != HookEventKind::WorktreeCreate)
        .collect()
}

/// Parses `--events` (names separated by commas, as Claude Code spells them).
pub fn parse_events(list: &str) -> Result<Vec<HookEventKind>, String> {
    let mut events = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let kind = HookEventKind::from_name(name);
        if kind == HookEventKind::Unknown {
            let known: Vec<&str> = default_events().iter().map(|k| k.as_str()).collect();
            return Err(format!(
                "--events: unknown event `{name}` (names are case-sensitive); known events: {}",
                known.join(",")
            ));
        }
        if kind == HookEventKind::WorktreeCreate {
            return Err(
                "--events: WorktreeCreate cannot be registered: its hook replaces Claude \
                 Code's worktree creation and must print the new worktree's path, which \
                 hookd does not do (`claude --worktree` would fail)"
                    .into(),
            );
        }
        if !events.contains(&kind) {
            events.push(kind);
        }
    }
    if events.is_empty() {
        return Err("--events: give at least one event name, e.g. --events PreToolUse,Stop".into());
    }
    Ok(events)
}

/// What to register.
#[derive(Debug, Clone, PartialEq)]
pub struct InstallOptions {
    /// The agent whose file it is: its event names, handler shape and
    /// timeouts, and the forwarder's `--agent`.
    pub agent: Agent,
    /// The forwarder's absolute path (see [`resolve_forwarder`]).
    pub forwarder: PathBuf,
    /// The events, in the order they are added.
    pub events: Vec<HookEventKind>,
    /// What to block when the daemon cannot answer: the events this scope
    /// covers get the forwarder's `--fail-closed[=all]` and Claude Code's
    /// `"onFailure":"block"`; the others neither.
    pub fail_closed: FailClosed,
    /// Also register `hookd statusline` (this `hookd`) as Claude Code's
    /// `statusLine`, unless the file already has one.
    pub statusline: Option<PathBuf>,
}

/// What `--statusline` did to a settings file's `statusLine`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StatuslineChange {
    /// hookd's status line was added.
    Added,
    /// hookd's status line was there already.
    Kept,
    /// The file has a status line of its own; it was left alone.
    SkippedOthers,
    /// Uninstall: hookd's status line was removed.
    Removed,
}

/// The `statusLine` command for `hookd` at `hookd`.
pub fn statusline_command(hookd: &Path) -> String {
    let path = hookd.display().to_string();
    let quoted = if path
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+".contains(&b))
    {
        path
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    };
    format!("{quoted} {STATUSLINE_ARG}")
}

/// The subcommand a status line of hookd's runs.
const STATUSLINE_ARG: &str = "statusline";

/// Whether a `statusLine` value is hookd's: a command whose program is
/// named `hookd` and whose only argument is `statusline`.
fn is_our_statusline(value: &Value) -> bool {
    let Some(command) = value.get("command").and_then(Value::as_str) else {
        return false;
    };
    let Some(program) = command.strip_suffix(&format!(" {STATUSLINE_ARG}")) else {
        return false;
    };
    let program = program.trim().trim_matches('\'');
    value.get("type").and_then(Value::as_str) == Some("command")
        && Path::new(program).file_name().is_some_and(|n| n == "hookd")
}

/// `text` with hookd's `statusLine` added at the end of the top level,
/// unless there is a `statusLine` already.
pub fn statusline_install_text(
    text: &str,
    hookd: &Path,
) -> Result<(String, StatuslineChange), SettingsError> {
    let root = parse_settings(text)?;
    if let Some(existing) = root.get("statusLine") {
        let change = if is_our_statusline(&node_value(text, &existing.value)) {
            StatuslineChange::Kept
        } else {
            StatuslineChange::SkippedOthers
        };
        return Ok((text.to_string(), change));
    }
    let value = Out::Object(vec![
        ("type".into(), Out::Str("command".into())),
        ("command".into(), Out::Str(statusline_command(hookd))),
        ("padding".into(), Out::Int(0)),
    ]);
    let edit = jsontext::append(
        text,
        &root,
        &[Element::Member("statusLine".into(), value)],
        &Style::detect(text),
    );
    Ok((jsontext::apply(text, vec![edit]), StatuslineChange::Added))
}

/// The JSON value `node` spans in `text` (validated when parsed).
fn node_value(text: &str, node: &Node) -> Value {
    let span = node.span();
    serde_json::from_str(&text[span.start..span.end]).unwrap_or(Value::Null)
}

/// `text` without hookd's `statusLine` (another one is left alone).
pub fn statusline_uninstall_text(text: &str) -> Result<(String, bool), SettingsError> {
    if text.trim().is_empty() {
        return Ok((text.to_string(), false));
    }
    let root = parse_settings(text)?;
    let Node::Object { members, .. } = &root else {
        return Ok((text.to_string(), false));
    };
    let marks: Vec<bool> = members
        .iter()
        .map(|m| m.key == "statusLine" && is_our_statusline(&node_value(text, &m.value)))
        .collect();
    if !marks.iter().any(|m| *m) {
        return Ok((text.to_string(), false));
    }
    Ok((jsontext::apply(text, jsontext::remove(&root, &marks)), true))
}

/// The handler registered for `kind`, keys in the order written. Claude
/// Code: `type, command, args, timeout[, async][, onFailure]`. Codex:
/// `type, command, timeout` (seconds). Gemini: `type, name, command,
/// timeout` (milliseconds). Codex and Gemini get a command line (see
/// [`command_line`]).
pub fn handler(kind: HookEventKind, options: &InstallOptions) -> Out {
    let t = timing_for(options.agent, kind);
    let blocks = options.fail_closed.blocks(kind) && options.agent.is_decision_point(kind);
    let mut args = Vec::new();
    if options.agent != Agent::ClaudeCode {
        args.push("--agent".to_string());
        args.push(options.agent.as_str().to_string());
    }
    args.push("--timeout".into());
    args.push(t.forwarder_s.to_string());
    if blocks {
        args.push(fail_closed_arg(options.fail_closed));
    }
    args.push(MARKER_ARG.into());
    let forwarder = options.forwarder.to_string_lossy().into_owned();
    match options.agent {
        Agent::ClaudeCode => {}
        Agent::Codex => {
            return Out::Object(vec![
                ("type".into(), Out::Str("command".into())),
                ("command".into(), Out::Str(command_line(&forwarder, &args))),
                ("timeout".into(), Out::Int(t.agent_s.into())),
            ])
        }
        Agent::Gemini => {
            return Out::Object(vec![
                ("type".into(), Out::Str("command".into())),
                ("name".into(), Out::Str("hookd".into())),
                ("command".into(), Out::Str(command_line(&forwarder, &args))),
                ("timeout".into(), Out::Int(u64::from(t.agent_s) * 1000)),
            ])
        }
    }
    let args = args.into_iter().map(Out::Str).collect();
    let mut fields = vec![
        ("type".to_string(), Out::Str("command".into())),
        (
            "command".to_string(),
            Out::Str(options.forwarder.to_string_lossy().into_owned()),
        ),
        ("args".to_string(), Out::Array(args)),
        ("timeout".to_string(), Out::Int(t.agent_s.into())),
    ];
    if t.async_hook {
        fields.push(("async".into(), Out::Bool(true)));
    }
    // Claude Code ignores onFailure for async hooks. Only the events the
    // scope covers get it: a forwarder that cannot even start must not
    // block what the forwarder itself would let through (prompts, under
    // `tools`).
    if blocks && !t.async_hook {
        fields.push(("onFailure".into(), Out::Str("block".into())));
    }
    Out::Object(fields)
}

/// The forwarder's flag for `scope`: `--fail-closed` (tools, the
/// forwarder's default scope) or `--fail-closed=all`.
pub fn fail_closed_arg(scope: FailClosed) -> String {
    match scope {
        FailClosed::All => "--fail-closed=all".into(),
        _ => "--fail-closed".into(),
    }
}

/// A command line that runs `program` with `args` under `sh -c`, as
/// Codex and Gemini run a hook's `command`: each word single-quoted when it
/// holds anything a shell would read (`'` as `'\''`).
pub fn command_line(program: &str, args: &[String]) -> String {
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .map(|word| {
            let plain = !word.is_empty()
                && word
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
            if plain {
                word.to_string()
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of a command line as `sh` splits them, for the forms
/// [`command_line`] writes and plain hand-written ones: blanks separate
/// words, single and double quotes group, a backslash escapes outside
/// single quotes. Anything fancier (`$`, globs) is kept as written.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The matcher group holding one handler: no matcher (every tool) for
/// Claude Code; `"*"` for Codex and Gemini (see the module doc).
fn group(kind: HookEventKind, options: &InstallOptions) -> Out {
    let hooks = ("hooks".into(), Out::Array(vec![handler(kind, options)]));
    match options.agent {
        Agent::ClaudeCode => Out::Object(vec![hooks]),
        Agent::Codex | Agent::Gemini => {
            Out::Object(vec![("matcher".into(), Out::Str("*".into())), hooks])
        }
    }
}

/// The agent's names of the chosen events (an event the agent does not
/// have is skipped).
pub(crate) fn event_names(options: &InstallOptions) -> Vec<(HookEventKind, &'static str)> {
    options
        .events
        .iter()
        .filter_map(|k| Some((*k, event_name(options.agent, *k)?)))
        .collect()
}

fn hooks_object(options: &InstallOptions) -> Out {
    Out::Object(
        event_names(options)
            .into_iter()
            .map(|(k, name)| (name.to_string(), Out::Array(vec![group(k, options)])))
            .collect(),
    )
}

/// `{"hooks": {…}}` for every chosen event, pretty-printed with two spaces
/// and a final newline: what `--print` shows and what a new file holds.
pub fn hooks_block(options: &InstallOptions) -> String {
    let mut out = String::new();
    Out::Object(vec![("hooks".into(), hooks_object(options))]).pretty(
        "",
        &Style {
            unit: "  ".into(),
            newline: "\n",
        },
        &mut out,
    );
    out.push('\n');
    out
}

/// Why a settings text cannot be edited. Positions are 1-based; the caller
/// prefixes the file name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// Not valid JSON.
    #[error("{line}:{column}: not valid JSON: {message}; Claude Code settings must be plain JSON (no comments, no trailing commas)")]
    Syntax {
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What serde_json found.
        message: String,
    },
    /// Valid JSON, but not the shape of a settings file.
    #[error("{line}:{column}: {message}")]
    Shape {
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What is wrong and where.
        message: String,
    },
}

fn shape_error(text: &str, pos: usize, message: String) -> SettingsError {
    let (line, column) = jsontext::line_col(text, pos);
    SettingsError::Shape {
        line,
        column,
        message,
    }
}

/// Parses a settings text and checks the parts hookd edits: the top level
/// is an object, `hooks` (if present) an object, each event in it an array;
/// no duplicate keys there (Claude Code would silently use the last one).
fn parse_settings(text: &str) -> Result<Node, SettingsError> {
    let root = jsontext::parse(text).map_err(|e| SettingsError::Syntax {
        line: e.line,
        column: e.column,
        message: e.message,
    })?;
    let Node::Object { members, .. } = &root else {
        return Err(shape_error(
            text,
            root.span().start,
            "the settings file must hold a JSON object".into(),
        ));
    };
    check_unique_keys(text, members, "the top level")?;
    if let Some(hooks) = root.get("hooks") {
        let Node::Object { members, .. } = &hooks.value else {
            return Err(shape_error(
                text,
                hooks.value.span().start,
                "`hooks` must be an object (event name → array of matcher groups)".into(),
            ));
        };
        check_unique_keys(text, members, "`hooks`")?;
        for event in members {
            if !matches!(event.value, Node::Array { .. }) {
                return Err(shape_error(
                    text,
                    event.value.span().start,
                    format!(
                        "`hooks.{}` must be an array of matcher groups ({{\"matcher\":…, \"hooks\":[…]}})",
                        event.key
                    ),
                ));
            }
        }
    }
    Ok(root)
}

fn check_unique_keys(
    text: &str,
    members: &[jsontext::Member],
    within: &str,
) -> Result<(), SettingsError> {
    for (i, m) in members.iter().enumerate() {
        if members[..i].iter().any(|o| o.key == m.key) {
            return Err(shape_error(
                text,
                m.key_span.start,
                format!(
                    "duplicate key `{}` in {within}; Claude Code would use only the last one: merge them",
                    m.key
                ),
            ));
        }
    }
    Ok(())
}

/// A handler's program and arguments: exec form (`command` and `args`), or
/// shell form (the words of the `command` line).
fn command_words(handler: &Value) -> Option<(String, Vec<String>)> {
    let command = handler["command"].as_str()?;
    match handler["args"].as_array() {
        Some(args) => Some((
            command.to_string(),
            args.iter()
                .map(|a| a.as_str().map_or_else(|| a.to_string(), str::to_string))
                .collect(),
        )),
        None => {
            let mut words = shell_words(command).into_iter();
            Some((words.next()?, words.collect()))
        }
    }
}

/// Whether a handler runs the forwarder: exec form (`command` is its path),
/// or shell form (the command line's first word is).
fn runs_forwarder(handler: &Value) -> bool {
    handler["type"] == "command"
        && command_words(handler)
            .is_some_and(|(c, _)| Path::new(&c).file_name() == Some(FORWARDER_NAME.as_ref()))
}

/// Whether `handler` is one `hookd install` wrote.
pub fn is_installed_handler(handler: &Value) -> bool {
    runs_forwarder(handler)
        && command_words(handler).is_some_and(|(_, args)| args.iter().any(|a| a == MARKER_ARG))
}

/// Every handler in the `hooks` object, with where it sits.
struct Located<'n> {
    event: &'n jsontext::Member,
    event_index: usize,
    group: &'n Node,
    group_index: usize,
    handler: Value,
    handler_index: usize,
}

fn handlers<'n>(text: &str, root: &'n Node) -> Vec<Located<'n>> {
    let mut found = Vec::new();
    let Some(Node::Object { members, .. }) = root.get("hooks").map(|m| &m.value) else {
        return found;
    };
    for (event_index, event) in members.iter().enumerate() {
        for (group_index, group) in event.value.items().iter().enumerate() {
            let Some(list) = group.get("hooks") else {
                continue;
            };
            for (handler_index, node) in list.value.items().iter().enumerate() {
                let span = node.span();
                let handler = serde_json::from_str(&text[span.start..span.end])
                    .expect("validated JSON re-parses");
                found.push(Located {
                    event,
                    event_index,
                    group,
                    group_index,
                    handler,
                    handler_index,
                });
            }
        }
    }
    found
}

/// Whether the text already holds exactly what [`install_text`] would
/// write: one group per chosen event holding the expected handler, as
/// [`group`] writes it (key order and layout aside), and no other hookd
/// handler.
fn already_installed(text: &str, root: &Node, options: &InstallOptions) -> bool {
    let names = event_names(options);
    let only: Vec<&str> = names.iter().map(|(_, n)| *n).collect();
    let ours: Vec<Located> = handlers(text, root)
        .into_iter()
        .filter(|h| touches(h, Some(&only)))
        .collect();
    if ours.len() != names.len() {
        return false;
    }
    names.iter().all(|(kind, name)| {
        let want = group(*kind, options).to_value();
        ours.iter().any(|h| {
            let span = h.group.span();
            h.event.key == *name
                && serde_json::from_str::<Value>(&text[span.start..span.end]).ok()
                    == Some(want.clone())
        })
    })
}

/// Whether `h` is a handler `hookd install` wrote for one of the events
/// named `only` (any event when `None`).
fn touches(h: &Located, only: Option<&[&str]>) -> bool {
    is_installed_handler(&h.handler)
        && only.is_none_or(|names| names.iter().any(|n| *n == h.event.key))
}

/// Removes the handlers `hookd install` wrote (for the events named in
/// `only`, or all); returns the new text and how many handlers went. A
/// matcher group left without handlers goes, then an event left without
/// groups, then `hooks` left without events.
fn remove_installed(text: &str, root: &Node, only: Option<&[&str]>) -> (String, usize) {
    let located = handlers(text, root);
    let ours = |e: usize, g: usize, h: usize| {
        located.iter().any(|l| {
            l.event_index == e && l.group_index == g && l.handler_index == h && touches(l, only)
        })
    };
    let removed = located.iter().filter(|l| touches(l, only)).count();
    if removed == 0 {
        return (text.to_string(), 0);
    }
    let hooks = &root.get("hooks").expect("handlers live under hooks").value;
    let Node::Object {
        members: events, ..
    } = hooks
    else {
        unreachable!("checked by parse_settings")
    };
    let mut inner_edits = Vec::new();
    let mut event_gone = vec![false; events.len()];
    for (e, event) in events.iter().enumerate() {
        let groups = event.value.items();
        let mut group_gone = vec![false; groups.len()];
        let mut group_edits = Vec::new();
        for (g, group) in groups.iter().enumerate() {
            let Some(list) = group.get("hooks") else {
                continue;
            };
            let marks: Vec<bool> = (0..list.value.items().len())
                .map(|h| ours(e, g, h))
                .collect();
            if !marks.is_empty() && marks.iter().all(|m| *m) {
                group_gone[g] = true;
            } else if marks.iter().any(|m| *m) {
                group_edits.extend(jsontext::remove(&list.value, &marks));
            }
        }
        if !groups.is_empty() && group_gone.iter().all(|g| *g) {
            event_gone[e] = true;
        } else {
            inner_edits.extend(group_edits);
            if group_gone.iter().any(|g| *g) {
                inner_edits.extend(jsontext::remove(&event.value, &group_gone));
            }
        }
    }
    let edits = if event_gone.iter().all(|g| *g) {
        let Node::Object { members, .. } = root else {
            unreachable!("checked by parse_settings")
        };
        let marks: Vec<bool> = members.iter().map(|m| m.key == "hooks").collect();
        jsontext::remove(root, &marks)
    } else {
        if event_gone.iter().any(|g| *g) {
            inner_edits.extend(jsontext::remove(hooks, &event_gone));
        }
        inner_edits
    };
    (jsontext::apply(text, edits), removed)
}

/// Appends one group per chosen event: to the event's array when it
/// exists, else as a new event at the end of `hooks` (a new `hooks` at the
/// end of the top level when there is none).
fn append_installed(text: &str, root: &Node, options: &InstallOptions) -> String {
    let style = Style::detect(text);
    let mut edits = Vec::new();
    match root.get("hooks") {
        None => edits.push(jsontext::append(
            text,
            root,
            &[Element::Member("hooks".into(), hooks_object(options))],
            &style,
        )),
        Some(hooks) => {
            let mut new_events = Vec::new();
            for (kind, name) in event_names(options) {
                match hooks.value.get(name) {
                    Some(event) => edits.push(jsontext::append(
                        text,
                        &event.value,
                        &[Element::Item(group(kind, options))],
                        &style,
                    )),
                    None => new_events.push(Element::Member(
                        name.into(),
                        Out::Array(vec![group(kind, options)]),
                    )),
                }
            }
            if !new_events.is_empty() {
                edits.push(jsontext::append(text, &hooks.value, &new_events, &style));
            }
        }
    }
    jsontext::apply(text, edits)
}

/// The settings text with the forwarder registered as `options` says.
/// `before` is the current text (`None` or blank: no file yet). Running it
/// on its own output changes nothing. hookd's entries for the chosen events
/// are replaced (another forwarder path, `--fail-closed`); its entries for
/// other events are left alone ([`uninstall_text`] removes them all).
pub fn install_text(
    before: Option<&str>,
    options: &InstallOptions,
) -> Result<String, SettingsError> {
    let Some(text) = before.filter(|t| !t.trim().is_empty()) else {
        return Ok(hooks_block(options));
    };
    // `--statusline` alone registers no hooks.
    if options.events.is_empty() {
        parse_settings(text)?;
        return Ok(text.to_string());
    }
    let root = parse_settings(text)?;
    if already_installed(text, &root, options) {
        return Ok(text.to_string());
    }
    let names: Vec<&str> = event_names(options).into_iter().map(|(_, n)| n).collect();
    let (cleared, _) = remove_installed(text, &root, Some(&names));
    let root = parse_settings(&cleared)?;
    Ok(append_installed(&cleared, &root, options))
}

/// [`install_text`], then `options.statusline` when asked for.
pub(crate) fn install_all(
    before: Option<&str>,
    options: &InstallOptions,
) -> Result<(String, Option<StatuslineChange>), SettingsError> {
    let text = install_text(before, options)?;
    match &options.statusline {
        None => Ok((text, None)),
        Some(hookd) => {
            statusline_install_text(&text, hookd).map(|(text, change)| (text, Some(change)))
        }
    }
}

/// The settings text without the handlers `hookd install` wrote, and how
/// many were removed.
pub fn uninstall_text(before: &str) -> Result<(String, usize), SettingsError> {
    if before.trim().is_empty() {
        return Ok((before.to_string(), 0));
    }
    let root = parse_settings(before)?;
    let (text, removed) = remove_installed(before, &root, None);
    let (text, statusline) = statusline_uninstall_text(&text)?;
    Ok((text, removed + statusline as usize))
}

/// One handler that runs the forwarder, found in a settings file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Registration {
    /// The event it is registered for.
    pub event: String,
    /// The line of the handler.
    pub line: usize,
    /// The forwarder path (the first word of a shell-form command).
    pub command: String,
    /// Its arguments (the other words of a shell-form command).
    pub args: Vec<String>,
    /// Claude Code's `timeout` as written (seconds, if the user did not
    /// mistake it for milliseconds).
    pub timeout: Option<f64>,
    /// The forwarder's `--timeout`, from the args.
    pub forwarder_timeout: Option<f64>,
    /// The group's matcher, if any.
    pub matcher: Option<String>,
    /// Written by `hookd install` (carries [`MARKER_ARG`]).
    pub installed: bool,
    /// Registered with `"async": true`.
    #[serde(rename = "async")]
    pub async_hook: bool,
    /// The whole `command` string when the handler has no `args`: Claude
    /// Code then runs it through a shell (`command` and `args` above are
    /// its words).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell_command: Option<String>,
    /// The handler's `shell` (`bash`, `powershell`), as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// The handler's `if` (a permission rule), as written.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// What the forwarder blocks when the daemon cannot answer, read from
    /// its args as the forwarder reads them (an argument error keeps any
    /// `--fail-closed`, see [`crate::forwarder::fail_closed_in`]).
    pub fail_closed: FailClosed,
    /// `"onFailure": "block"`: Claude Code blocks a guarded event when the
    /// hook itself fails (cannot start, times out, crashes).
    pub on_failure_block: bool,
}

impl Registration {
    /// Whether this registration's event is blocked when the daemon is
    /// down, by the forwarder's fallback.
    pub fn fails_closed(&self) -> bool {
        self.fail_closed
            .blocks(HookEventKind::from_name(&self.event))
    }

    /// Whether Claude Code runs `self` and `other` as one handler when
    /// both are registered for the same event: it de-duplicates an event's
    /// handlers by `shell + command + args + if`, across settings files
    /// and matcher groups (reference §3; checked against the real CLI in
    /// `tests/e2e_duplicates.rs`). `timeout`, `matcher` and the rest do not
    /// count.
    pub fn runs_as_one_with(&self, other: &Registration) -> bool {
        self.differences(other).is_empty()
    }

    /// How `self` and `other` differ in what Claude Code de-duplicates by,
    /// for people (empty when they run as one).
    pub fn differences(&self, other: &Registration) -> Vec<String> {
        let mut found = Vec::new();
        match (&self.shell_command, &other.shell_command) {
            (Some(a), Some(b)) if a != b => {
                found.push(format!("command `{a}` vs `{b}`"));
            }
            (Some(_), Some(_)) => {}
            (None, None) => {
                if self.command != other.command {
                    found.push(format!("command {} vs {}", self.command, other.command));
                }
                if self.args != other.args {
                    found.push(format!(
                        "args `{}` vs `{}`",
                        self.args.join(" "),
                        other.args.join(" ")
                    ));
                }
            }
            (a, _) => found.push(format!(
                "{} vs {}",
                if a.is_some() {
                    "shell form"
                } else {
                    "exec form"
                },
                if a.is_some() {
                    "exec form"
                } else {
                    "shell form"
                },
            )),
        }
        if self.shell != other.shell {
            found.push(format!(
                "shell {} vs {}",
                self.shell.as_deref().unwrap_or("(none)"),
                other.shell.as_deref().unwrap_or("(none)")
            ));
        }
        if self.condition != other.condition {
            found.push(format!(
                "`if` {} vs {}",
                self.condition.as_deref().unwrap_or("(none)"),
                other.condition.as_deref().unwrap_or("(none)")
            ));
        }
        found
    }
}

/// The fail-closed scope a forwarder run with `args` applies.
fn forwarder_scope(args: &[String]) -> FailClosed {
    let args: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    match crate::forwarder::parse_args(&args) {
        Ok(crate::forwarder::Command::Forward(options)) => options.fail_closed,
        Ok(crate::forwarder::Command::Print(_)) => FailClosed::Off,
        Err(_) => crate::forwarder::fail_closed_in(&args),
    }
}

/// What [`inspect`] found in a settings file.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Inspection {
    /// Every forwarder handler, in file order.
    pub registrations: Vec<Registration>,
    /// `"disableAllHooks": true`: Claude Code runs no hook from any file.
    pub disable_all_hooks: bool,
}

/// Finds every forwarder registration in a settings text (for `hookd doctor`).
pub fn inspect(text: &str) -> Result<Inspection, SettingsError> {
    if text.trim().is_empty() {
        return Ok(Inspection::default());
    }
    let root = parse_settings(text)?;
    let disable_all_hooks = root.get("disableAllHooks").is_some_and(|m| {
        let span = m.value.span();
        &text[span.start..span.end] == "true"
    });
    let mut registrations = Vec::new();
    for h in handlers(text, &root) {
        if !runs_forwarder(&h.handler) {
            continue;
        }
        let command = h.handler["command"].as_str().unwrap_or_default();
        let shell_command = (!h.handler["args"].is_array()).then(|| command.to_string());
        let (command, args) = command_words(&h.handler).unwrap_or_default();
        let forwarder_timeout =
            args.iter()
                .enumerate()
                .find_map(|(i, a)| match a.strip_prefix("--timeout") {
                    Some("") => args.get(i + 1).and_then(|v| v.parse().ok()),
                    Some(rest) => rest.strip_prefix('=').and_then(|v| v.parse().ok()),
                    None => None,
                });
        let group_span = h.group.span();
        let group: Value =
            serde_json::from_str(&text[group_span.start..group_span.end]).unwrap_or(Value::Null);
        let handler_start = h
            .group
            .get("hooks")
            .expect("located under hooks")
            .value
            .items()[h.handler_index]
            .span()
            .start;
        let fail_closed = forwarder_scope(&args);
        registrations.push(Registration {
            event: h.event.key.clone(),
            line: jsontext::line_col(text, handler_start).0,
            installed: is_installed_handler(&h.handler),
            command,
            args,
            timeout: h.handler["timeout"].as_f64(),
            forwarder_timeout,
            matcher: group["matcher"].as_str().map(str::to_string),
            async_hook: h.handler["async"] == true,
            shell_command,
            shell: h.handler["shell"].as_str().map(str::to_string),
            condition: h.handler["if"].as_str().map(str::to_string),
            fail_closed,
            on_failure_block: h.handler["onFailure"] == "block",
        });
    }
    Ok(Inspection {
        registrations,
        disable_all_hooks,
    })
}

// ---------------------------------------------------------------------------
// The edges: paths, files.
// ---------------------------------------------------------------------------

/// Which settings file (`--scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json` when
    /// set, as Claude Code does): every project.
    User,
    /// `<project>/.claude/settings.json`: shared with the project.
    Project,
    /// `<project>/.claude/settings.local.json`: this checkout only.
    Local,
    /// hookd's own file in Claude Code's managed settings directory
    /// (`/etc/claude-code/managed-settings.d/50-hookd.json`): every user of
    /// the machine, and organizations with `allowManagedHooksOnly` (see
    /// [`managed`]). Not in [`Scope::ALL`]: an administrator's scope.
    Managed,
}

impl Scope {
    /// Every scope, in the order Claude Code layers them (lowest first).
    pub const ALL: [Scope; 3] = [Scope::User, Scope::Project, Scope::Local];

    /// `user`, `project` or `local`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Managed => "managed",
        }
    }
}

impl std::str::FromStr for Scope {
    type Err = String;

    fn from_str(s: &str) -> Result<Scope, String> {
        match s {
            "user" => Ok(Scope::User),
            "project" => Ok(Scope::Project),
            "local" => Ok(Scope::Local),
            "managed" => Ok(Scope::Managed),
            other => Err(format!(
                "unknown scope `{other}`: use user, project, local or managed"
            )),
        }
    }
}

/// The settings file of `scope` for `project`.
pub fn settings_path(scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    Ok(match scope {
        Scope::User => claude_config_dir()?.join("settings.json"),
        Scope::Project => project.join(".claude").join("settings.json"),
        Scope::Local => project.join(".claude").join("settings.local.json"),
        Scope::Managed => managed::settings_file(),
    })
}

/// The file holding `agent`'s hook registrations in `scope` for
/// `project`. Claude Code: [`settings_path`]. Codex: `$CODEX_HOME/hooks.json`
/// (default `~/.codex/hooks.json`), or the project's `.codex/hooks.json`,
/// which Codex reads only in a project it trusts. Gemini:
/// `~/.gemini/settings.json`, or the project's `.gemini/settings.json`.
/// Neither has a local scope.
pub fn agent_settings_path(agent: Agent, scope: Scope, project: &Path) -> anyhow::Result<PathBuf> {
    let (dir, file) = match agent {
        Agent::ClaudeCode => return settings_path(scope, project),
        Agent::Codex => (".codex", "hooks.json"),
        Agent::Gemini => (".gemini", "settings.json"),
    };
    match scope {
        Scope::User if agent == Agent::Codex => {
            if let Some(home) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
                return Ok(PathBuf::from(home).join(file));
            }
            Ok(home_dir(agent)?.join(dir).join(file))
        }
        Scope::User => Ok(home_dir(agent)?.join(dir).join(file)),
        Scope::Project => Ok(project.join(dir).join(file)),
        Scope::Managed => bail!(
            "--scope managed: only Claude Code reads a managed settings directory; use --scope user or --scope project for {agent}"
        ),
        Scope::Local => bail!(
            "--scope local: {agent} has no local settings file; use --scope user or --scope project"
        ),
    }
}

fn home_dir(agent: Agent) -> anyhow::Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .with_context(|| {
            format!("--agent {agent} --scope user: HOME is not set; use --settings FILE")
        })
}

/// The command that runs `agent`, looked up on `PATH` by
/// `hookd install --agent all`.
pub fn agent_program(agent: Agent) -> &'static str {
    match agent {
        Agent::ClaudeCode => "claude",
        Agent::Codex => "codex",
        Agent::Gemini => "gemini",
    }
}

/// What the user must do after an install for `agent`'s hooks to run, if
/// anything: Codex runs no hook it has not been told to trust, and says
/// nothing when it skips one.
pub fn after_install_note(agent: Agent) -> Option<&'static str> {
    match agent {
        Agent::Codex => Some(
            "Codex runs no hook until you trust it, and skips untrusted hooks silently: \
             start `codex` in a terminal and choose \"Trust all and continue\" when it \
             lists the new hooks (or review them with /hooks). For `codex exec` in \
             automation that already vets its hooks, `--dangerously-bypass-hook-trust` \
             runs them without that step.",
        ),
        Agent::Gemini => Some(
            "Gemini asks before it runs project-level hooks the first time; user-level \
             hooks run at once.",
        ),
        Agent::ClaudeCode => None,
    }
}

/// `$CLAUDE_CONFIG_DIR`, else `~/.claude`.
pub fn claude_config_dir() -> anyhow::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    match std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".claude")),
        None => {
            bail!("--scope user: neither CLAUDE_CONFIG_DIR nor HOME is set; use --settings FILE")
        }
    }
}

/// The `hook-forwarder` next to the running `hookd` executable.
pub fn sibling_forwarder() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("finding the hookd executable")?;
    Ok(exe
        .parent()
        .context("the hookd executable has no directory")?
        .join(FORWARDER_NAME))
}

/// `--forwarder PATH` made absolute, or the forwarder next to `hookd`; it
/// must exist and be executable.
pub fn resolve_forwarder(explicit: Option<&Path>) -> anyhow::Result<PathBuf> {
    let (path, flag) = match explicit {
        Some(p) => (
            std::path::absolute(p).with_context(|| format!("--forwarder {}", p.display()))?,
            "--forwarder",
        ),
        None => (sibling_forwarder()?, "the forwarder next to hookd"),
    };
    let meta = fs::metadata(&path).with_context(|| {
        format!(
            "{flag}: {} not found; build and install both binaries (`cargo install --path .`) \
             or pass --forwarder /path/to/hook-forwarder",
            path.display()
        )
    })?;
    if !meta.is_file() || meta.mode() & 0o111 == 0 {
        bail!(
            "{flag}: {} is not an executable file; pass the path of the hook-forwarder binary",
            path.display()
        );
    }
    if path.to_str().is_none() {
        bail!(
            "{flag}: {} is not valid UTF-8, which settings.json cannot hold",
            path.display()
        );
    }
    Ok(path)
}

/// What an install or uninstall did (or, with `--dry-run`, would do).
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// `install` or `uninstall`.
    pub action: &'static str,
    /// The settings file.
    pub settings: PathBuf,
    /// Whether the text changed.
    pub changed: bool,
    /// Whether the file was written (false for a dry run or no change).
    pub written: bool,
    /// The copy of the previous file, when one was written.
    pub backup: Option<PathBuf>,
    /// Install: the events registered. Uninstall: the events whose hookd
    /// entries were removed.
    pub events: Vec<String>,
    /// Uninstall: how many handlers were removed.
    pub removed: usize,
    /// The change as a unified diff (empty when nothing changed).
    pub diff: String,
    /// What `--statusline` did, when it was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statusline: Option<StatuslineChange>,
}

impl Outcome {
    /// One human sentence saying what happened.
    pub fn summary(&self) -> String {
        let main = self.hooks_summary();
        match self.statusline {
            Some(StatuslineChange::Added) => format!(
                "{main}\n{}: {} hookd's statusLine",
                self.settings.display(),
                if self.written { "registered" } else { "would register" }
            ),
            Some(StatuslineChange::Kept) => format!(
                "{main}\n{}: hookd's statusLine is already registered",
                self.settings.display()
            ),
            Some(StatuslineChange::SkippedOthers) => format!(
                "{main}\n{}: has a statusLine of its own; left it alone (remove it first to use `hookd statusline`)",
                self.settings.display()
            ),
            Some(StatuslineChange::Removed) | None => main,
        }
    }

    fn hooks_summary(&self) -> String {
        let path = self.settings.display();
        let n = self.events.len();
        let events = format!("{n} event{}", if n == 1 { "" } else { "s" });
        let backup = self
            .backup
            .as_ref()
            .map(|b| format!(" (previous file kept as {})", b.display()))
            .unwrap_or_default();
        match (self.action, self.changed, self.written) {
            ("install", false, _) => {
                format!("{path} already registers hook-forwarder for these {events}; nothing to do")
            }
            ("install", true, true) => {
                format!("{path}: registered hook-forwarder for {events}{backup}")
            }
            ("install", true, false) => {
                format!(
                    "dry run: {path} would register hook-forwarder for {events}; nothing written"
                )
            }
            (_, false, _) => {
                format!("{path} holds no entry written by hookd install; nothing to do")
            }
            (_, true, true) => format!(
                "{path}: removed {} hookd entr{} ({events}){backup}",
                self.removed,
                if self.removed == 1 { "y" } else { "ies" }
            ),
            (_, true, false) => format!(
                "dry run: {path} would lose {} hookd entr{}; nothing written",
                self.removed,
                if self.removed == 1 { "y" } else { "ies" }
            ),
        }
    }
}

/// Reads a settings file: `None` when it does not exist.
pub(crate) fn read_settings(path: &Path) -> anyhow::Result<Option<String>> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text; fix the file", path.display())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

pub(crate) fn located(path: &Path, e: SettingsError) -> anyhow::Error {
    anyhow::anyhow!("{}:{e}; the file was not changed", path.display())
}

pub(crate) fn diff_for(path: &Path, before: Option<&str>, after: &str) -> String {
    let name = path.display().to_string();
    match before {
        Some(b) => diff::unified(b, after, &name, &name),
        None => diff::unified("", after, "/dev/null", &name),
    }
}

/// Registers the forwarder in the settings file at `path` (created when
/// missing). With `dry_run`, nothing is written.
pub fn install(path: &Path, options: &InstallOptions, dry_run: bool) -> anyhow::Result<Outcome> {
    let before = read_settings(path)?;
    let (after, statusline) =
        install_all(before.as_deref(), options).map_err(|e| located(path, e))?;
    let changed = before.as_deref() != Some(after.as_str());
    let backup = if changed && !dry_run {
        write_settings(path, before.as_deref(), &after)?
    } else {
        None
    };
    Ok(Outcome {
        action: "install",
        settings: path.to_path_buf(),
        changed,
        written: changed && !dry_run,
        backup,
        events: event_names(options)
            .into_iter()
            .map(|(_, name)| name.into())
            .collect(),
        removed: 0,
        diff: diff_for(path, before.as_deref(), &after),
        statusline,
    })
}

/// Removes the handlers `hookd install` wrote from the settings file at
/// `path`. A missing file is nothing to do. With `dry_run`, nothing is
/// written.
pub fn uninstall(path: &Path, dry_run: bool) -> anyhow::Result<Outcome> {
    let before = read_settings(path)?;
    let (after, removed, events) = match before.as_deref() {
        None => (None, 0, Vec::new()),
        Some(text) => {
            let events = inspect(text)
                .map_err(|e| located(path, e))?
                .registrations
                .into_iter()
                .filter(|r| r.installed)
                .fold(Vec::<String>::new(), |mut acc, r| {
                    if !acc.contains(&r.event) {
                        acc.push(r.event);
                    }
                    acc
                });
            let (after, removed) = uninstall_text(text).map_err(|e| located(path, e))?;
            (Some(after), removed, events)
        }
    };
    let changed = after.is_some() && after != before;
    let backup = match (&after, changed && !dry_run) {
        (Some(after), true) => write_settings(path, before.as_deref(), after)?,
        _ => None,
    };
    Ok(Outcome {
        action: "uninstall",
        settings: path.to_path_buf(),
        changed,
        written: changed && !dry_run,
        backup,
        events,
        removed,
        diff: match &after {
            Some(after) => diff_for(path, before.as_deref(), after),
            None => String::new(),
        },
        statusline: None,
    })
}

/// The backup path of a settings file.
pub fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(BACKUP_SUFFIX);
    path.with_file_name(name)
}

/// Writes `after` over the settings file: a backup of `before` first (when
/// there was a file), then an atomic replace keeping mode and owner. A
/// symlinked settings file is followed, so the link stays a link. Returns
/// the backup's path.
fn write_settings(
    path: &Path,
    before: Option<&str>,
    after: &str,
) -> anyhow::Result<Option<PathBuf>> {
    let target = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path).with_context(|| {
            format!(
                "{} is a symlink to a missing file; fix the link",
                path.display()
            )
        })?,
        _ => path.to_path_buf(),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    if before.is_none() {
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    check_writable(&target, &dir)?;
    let existing = fs::metadata(&target).ok();
    let backup = match before {
        Some(before) => {
            let backup = backup_path(&target);
            write_atomic(&backup, before.as_bytes(), existing.as_ref())?;
            Some(backup)
        }
        None => None,
    };
    write_atomic(&target, after.as_bytes(), existing.as_ref())?;
    Ok(backup)
}

/// Refuses a read-only file or directory with a message that says what to
/// do. Mode bits are checked as well as access(2), so the refusal holds for
/// root too: a file with no write bit is a statement.
pub fn check_writable(file: &Path, dir: &Path) -> anyhow::Result<()> {
    use nix::unistd::{access, AccessFlags};
    if let Ok(meta) = fs::metadata(file) {
        if meta.mode() & 0o222 == 0 || access(file, AccessFlags::W_OK).is_err() {
            bail!(
                "{} is read-only (mode {:o}); make it writable (`chmod u+w {}`) and run again, \
                 or merge the block from `hookd install --print` by hand",
                file.display(),
                meta.mode() & 0o7777,
                file.display()
            );
        }
    }
    let meta = fs::metadata(dir).with_context(|| format!("inspecting {}", dir.display()))?;
    if meta.mode() & 0o222 == 0 || access(dir, AccessFlags::W_OK).is_err() {
        bail!(
            "cannot write in {} (mode {:o}): the settings file is replaced atomically through \
             a temp file in its directory; make the directory writable (`chmod u+w {}`) or merge \
             the block from `hookd install --print` by hand",
            dir.display(),
            meta.mode() & 0o7777,
            dir.display()
        );
    }
    Ok(())
}

/// Replaces `path` atomically: a temp file in the same directory, fsynced,
/// given the old file's mode and owner (`like`), renamed over it. A new file
/// gets the default mode (0666 less the umask).
pub fn write_atomic(path: &Path, bytes: &[u8], like: Option<&fs::Metadata>) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".hookd-tmp.{}", std::process::id()));
    let temp = dir.join(name);
    let result = (|| -> io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            // Private until it has the old file's mode.
            .mode(if like.is_some() { 0o600 } else { 0o666 })
            .open(&temp)?;
        file.write_all(bytes)?;
        if let Some(meta) = like {
            // Keep the owner when root edits someone's file; an ordinary
            // user cannot change it and needs not.
            let _ = std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid()));
            file.set_permissions(fs::Permissions::from_mode(meta.mode() & 0o7777))?;
        }
        file.sync_all()?;
        fs::rename(&temp, path)?;
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.with_context(|| format!("writing {} (through {})", path.display(), temp.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(events: &[HookEventKind], fail_closed: FailClosed) -> InstallOptions {
        InstallOptions {
            statusline: None,
            agent: Agent::ClaudeCode,
            forwarder: "/opt/hookd/bin/hook-forwarder".into(),
            events: events.to_vec(),
            fail_closed,
        }
    }

    #[test]
    fn the_ladder_holds_for_every_event() {
        for kind in default_events() {
            let t = timing(kind);
            let forwarder = std::time::Duration::from_secs(t.forwarder_s.into());
            assert!(t.agent_s > t.forwarder_s, "{kind}");
            assert!(
                crate::daemon::hook::daemon_budget(forwarder) < forwarder,
                "{kind}"
            );
            // Never above Claude Code's own default, except SessionEnd,
            // whose 1.5 s is raised on purpose to keep the ladder.
            if kind != HookEventKind::SessionEnd {
                assert!(
                    u64::from(t.agent_s) * 1000 <= kind.claude_default_timeout_ms(),
                    "{kind}"
                );
            }
        }
        assert_eq!(
            timing(HookEventKind::SessionEnd),
            Timing {
                forwarder_s: 1,
                agent_s: 2,
                async_hook: false
            }
        );
        assert_eq!(timing(HookEventKind::PreToolUse).agent_s, 30);
        assert_eq!(timing(HookEventKind::UserPromptSubmit).agent_s, 30);
    }

    #[test]
    fn events_flag() {
        assert_eq!(
            parse_events("PreToolUse, Stop,PreToolUse").unwrap(),
            [HookEventKind::PreToolUse, HookEventKind::Stop]
        );
        assert!(parse_events("pretooluse")
            .unwrap_err()
            .contains("`pretooluse`"));
        assert!(parse_events("WorktreeCreate")
            .unwrap_err()
            .contains("worktree"));
        assert!(parse_events(",").is_err());
        assert_eq!(default_events().len(), 32);
        assert!(!default_events().contains(&HookEventKind::WorktreeCreate));
    }

    #[test]
    fn handlers_in_exec_form_with_the_marker() {
        let o = options(&[HookEventKind::PreToolUse], FailClosed::Tools);
        let mut text = String::new();
        handler(HookEventKind::PreToolUse, &o).compact(&mut text);
        assert_eq!(
            text,
            r#"{"type":"command","command":"/opt/hookd/bin/hook-forwarder","args":["--timeout","25","--fail-closed","--installed-by=hookd"],"timeout":30,"onFailure":"block"}"#
        );
        // Stop is not guarded: fail-closed changes nothing there.
        let mut text = String::new();
        handler(HookEventKind::Stop, &o).compact(&mut text);
        assert!(
            !text.contains("fail-closed") && !text.contains("onFailure"),
            "{text}"
        );
        assert!(is_installed_handler(
            &handler(HookEventKind::Stop, &o).to_value()
        ));
    }

    #[test]
    fn only_the_events_of_the_scope_fail_closed() {
        let compact = |kind, scope| {
            let mut text = String::new();
            handler(kind, &options(&[kind], scope)).compact(&mut text);
            text
        };
        // `tools` (bare --fail-closed): a prompt is never blocked, not even
        // by a forwarder that cannot start.
        for kind in [HookEventKind::PreToolUse, HookEventKind::PermissionRequest] {
            let text = compact(kind, FailClosed::Tools);
            assert!(text.contains(r#""--fail-closed","#), "{text}");
            assert!(text.contains(r#""onFailure":"block""#), "{text}");
        }
        let text = compact(HookEventKind::UserPromptSubmit, FailClosed::Tools);
        assert!(
            !text.contains("fail-closed") && !text.contains("onFailure"),
            "{text}"
        );
        // `all`: every guarded event, prompts included.
        for kind in [HookEventKind::PreToolUse, HookEventKind::UserPromptSubmit] {
            let text = compact(kind, FailClosed::All);
            assert!(text.contains(r#""--fail-closed=all","#), "{text}");
            assert!(text.contains(r#""onFailure":"block""#), "{text}");
        }
        // What inspect reads back is what the forwarder will do.
        let all = options(&default_events(), FailClosed::All);
        let tools = options(&default_events(), FailClosed::Tools);
        for (o, scope) in [(all, FailClosed::All), (tools, FailClosed::Tools)] {
            for r in inspect(&hooks_block(&o)).unwrap().registrations {
                let kind = HookEventKind::from_name(&r.event);
                assert_eq!(r.fails_closed(), scope.blocks(kind), "{}", r.event);
                assert_eq!(r.on_failure_block, scope.blocks(kind), "{}", r.event);
            }
        }
    }

    #[test]
    fn install_is_idempotent_and_uninstall_restores() {
        let o = options(
            &[HookEventKind::PreToolUse, HookEventKind::SessionEnd],
            FailClosed::Off,
        );
        let before = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PreToolUse\": [\n            {\n                \"matcher\": \"Bash\",\n                \"hooks\": [{\"type\": \"command\", \"command\": \"/bin/true\"}]\n            }\n        ]\n    }\n}\n";
        let once = install_text(Some(before), &o).unwrap();
        assert_eq!(install_text(Some(&once), &o).unwrap(), once);
        assert!(once.contains("\n            {\n                \"hooks\": [\n                    {\n                        \"type\": \"command\","), "{once}");
        let (back, removed) = uninstall_text(&once).unwrap();
        assert_eq!(removed, 2);
        assert_eq!(back, before);
        // Other options replace the entries of the events installed, and
        // leave hookd's other events alone.
        let closed = options(&[HookEventKind::PreToolUse], FailClosed::Tools);
        let twice = install_text(Some(&once), &closed).unwrap();
        let found = inspect(&twice).unwrap().registrations;
        assert_eq!(found.len(), 2);
        assert!(found
            .iter()
            .any(|r| r.event == "PreToolUse" && r.args.contains(&"--fail-closed".to_string())));
        assert!(found.iter().any(|r| r.event == "SessionEnd"));
        assert_eq!(install_text(Some(&twice), &closed).unwrap(), twice);
        assert_eq!(uninstall_text(&twice).unwrap().0, before);
    }

    #[test]
    fn containers_left_empty_go_even_if_they_were_there_before() {
        // Documented exception to "byte for byte": uninstall cannot tell an
        // empty array or `hooks` object of the user's from one it emptied.
        let o = options(&[HookEventKind::Stop], FailClosed::Off);
        let before = "{\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n";
        let installed = install_text(Some(before), &o).unwrap();
        assert_eq!(uninstall_text(&installed).unwrap().0, "{}\n");
    }

    #[test]
    fn refusals_name_the_position() {
        let o = options(&[HookEventKind::PreToolUse], FailClosed::Off);
        let err = install_text(Some("{\n  \"a\": 1, // no\n}"), &o).unwrap_err();
        assert!(
            matches!(
                err,
                SettingsError::Syntax {
                    line: 2,
                    column: 11,
                    ..
                }
            ),
            "{err}"
        );
        let err = install_text(Some("[]"), &o).unwrap_err().to_string();
        assert!(
            err.starts_with("1:1: the settings file must hold a JSON object"),
            "{err}"
        );
        let err = install_text(Some("{\"hooks\": {\"Stop\": {}}}"), &o)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("1:20: `hooks.Stop` must be an array"),
            "{err}"
        );
        let err = install_text(Some("{\"hooks\": {}, \"hooks\": {}}"), &o)
            .unwrap_err()
            .to_string();
        assert!(err.contains("duplicate key `hooks`"), "{err}");
    }

    #[test]
    fn a_handwritten_forwarder_entry_is_seen_but_never_removed() {
        let text = r#"{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"/x/hook-forwarder --timeout 20","timeout":30000}]}]}}"#;
        let found = inspect(text).unwrap().registrations;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].command, "/x/hook-forwarder");
        assert_eq!(found[0].forwarder_timeout, Some(20.0));
        assert_eq!(found[0].timeout, Some(30000.0));
        assert!(!found[0].installed);
        assert_eq!(
            found[0].shell_command.as_deref(),
            Some("/x/hook-forwarder --timeout 20")
        );
        assert_eq!(uninstall_text(text).unwrap(), (text.to_string(), 0));
    }

    #[test]
    fn registrations_run_as_one_when_claude_code_would_deduplicate_them() {
        let text = r#"{"hooks":{"PreToolUse":[
            {"hooks":[{"type":"command","command":"/x/hook-forwarder","args":["--timeout","25"],"timeout":30}]},
            {"matcher":"Bash","hooks":[{"type":"command","command":"/x/hook-forwarder","args":["--timeout","25"],"timeout":45}]},
            {"hooks":[{"type":"command","command":"/x/hook-forwarder","args":["--timeout","20"]}]},
            {"hooks":[{"type":"command","command":"/x/hook-forwarder --timeout 25"}]},
            {"hooks":[{"type":"command","command":"/x/hook-forwarder","args":["--timeout","25"],"if":"Bash(git *)"}]}
        ]}}"#;
        let found = inspect(text).unwrap().registrations;
        assert_eq!(found.len(), 5);
        // Another timeout and matcher: still one handler.
        assert!(found[0].runs_as_one_with(&found[1]));
        assert_eq!(
            found[0].differences(&found[2]),
            ["args `--timeout 25` vs `--timeout 20`"]
        );
        assert_eq!(found[0].differences(&found[3]), ["exec form vs shell form"]);
        assert_eq!(
            found[0].differences(&found[4]),
            ["`if` (none) vs Bash(git *)"]
        );
    }
}
