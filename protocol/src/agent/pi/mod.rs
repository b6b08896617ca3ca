//! Everything hookd knows about the Pi coding agent 0.73.1's extension
//! events, and nothing else: the Pi dialect (see [`crate::agent`]).
//!
//! Pi has no command hooks and no permission prompts: a tool runs unless
//! an extension blocks it. hookd's extension (`plugins/pi.js`, installed
//! in `.pi/extensions/` or `~/.pi/agent/extensions/`) relays its events
//! to the daemon as [`crate::agent::plugin`] describes and returns the
//! answer as its handler result; `hookd run`'s Pi runtime speaks the same
//! dialect. A block is Pi's own `{block: true, reason}`: the tool does not
//! run and the model gets the reason verbatim as the tool's result.
//!
//! # Events
//!
//! | Pi event | hookd kind | what the answer can do |
//! | --- | --- | --- |
//! | `tool_call` | PreToolUse | deny |
//! | `tool_result` | PostToolUse | nothing |
//! | `input` | UserPromptSubmit | nothing |
//! | `session_start` | SessionStart | nothing |
//! | `agent_end` | Stop | nothing |
//! | `session_shutdown` | SessionEnd | nothing |
//!
//! Pi cannot ask: an `ask` is held for clients, and when nobody answers it
//! is a deny with its reason (Pi has no prompt of its own that would ask
//! instead). An allow is "no opinion": nothing in Pi stops a tool anyway.
//!
//! # Tools
//!
//! | Pi `toolName` | judged as | input the rules see |
//! | --- | --- | --- |
//! | `bash` | `Bash` | `command`, `timeout` |
//! | `edit` | `Edit` | `file_path` (absolute `path`), `edits` |
//! | `write` | `Write` | `file_path`, `content` |
//! | `read` | `Read` | `file_path`, `offset`, `limit` |
//! | `grep` / `find` / `ls` | `Grep` / `Glob` / `LS` | `path` (absolute), `pattern` |
//! | anything else (an extension's tool) | as is | as is |
//!
//! Pi's paths are what the model wrote; they are made absolute against the
//! session's `cwd`. Pi has no web or MCP tool of its own.

#[cfg(feature = "frames")]
pub mod input;

use crate::agent::claude::HookEventKind;
use crate::agent::dialect::{honors, EventRow, EventTable, ToolMap};

/// The deadline the extension gives a hook unless told otherwise, in
/// milliseconds (Pi itself waits for a handler forever).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

const fn row(name: &'static str, kind: HookEventKind) -> EventRow {
    EventRow::observed(name, kind, DEFAULT_TIMEOUT_MS)
}

/// The events hookd's extension relays.
pub const EVENTS: EventTable = {
    use HookEventKind as K;
    &[
        row("tool_call", K::PreToolUse).honors(honors::DENY),
        row("tool_result", K::PostToolUse),
        row("input", K::UserPromptSubmit),
        row("session_start", K::SessionStart),
        row("agent_end", K::Stop),
        row("session_shutdown", K::SessionEnd),
    ]
};

/// Pi's built-in tools and the Claude Code tool each is judged as.
pub const TOOLS: ToolMap = &[
    ("bash", "Bash"),
    ("edit", "Edit"),
    ("write", "Write"),
    ("read", "Read"),
    ("grep", "Grep"),
    ("find", "Glob"),
    ("ls", "LS"),
];
