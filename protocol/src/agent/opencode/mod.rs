//! Everything hookd knows about OpenCode 1.18.33's plugin events, and
//! nothing else: the OpenCode dialect (see [`crate::agent`]).
//!
//! OpenCode runs no command hooks. hookd's plugin (`plugins/opencode.js`,
//! installed in `.opencode/plugin/` or `~/.config/opencode/plugin/`) relays
//! its events to the daemon as [`crate::agent::plugin`] describes, and
//! executes the answer: a block throws, which OpenCode gives the model as
//! the tool's failed result (`is_error`, the message as its text).
//!
//! # Events
//!
//! | OpenCode (plugin hook / bus event) | hookd kind | what the answer can do |
//! | --- | --- | --- |
//! | `tool.execute.before` | PreToolUse | deny (the plugin throws) |
//! | `tool.execute.after` | PostToolUse | nothing |
//! | `chat.message` | UserPromptSubmit | nothing |
//! | `session.created` (bus) | SessionStart | nothing |
//! | `session.idle` (bus) | Stop | nothing |
//! | `session.deleted` (bus) | SessionEnd | nothing |
//!
//! OpenCode 1.18.33 declares a `permission.ask` plugin hook but never calls
//! it (its binary triggers no such hook; its permission prompts are bus
//! events a plugin can only watch), so an `ask` cannot reach OpenCode's
//! own prompt from a plugin: it is held for clients like Codex's, and when
//! nobody answers OpenCode's own permission flow goes on (a deny where the
//! plugin fails closed). An allow is "no opinion" for the same reason.
//!
//! # Tools
//!
//! | OpenCode `tool` | judged as | input the rules see |
//! | --- | --- | --- |
//! | `bash` | `Bash` | `command`, `description`, `timeout` |
//! | `edit` | `Edit` | `file_path` (absolute `filePath`), `old_string`, `new_string`, `replace_all` |
//! | `write` | `Write` | `file_path`, `content` |
//! | `read` | `Read` | `file_path`, `offset`, `limit` |
//! | `apply_patch` | `Edit` / `Write` per file of `patchText` | `file_path`, `change` |
//! | `glob` / `grep` / `list` | `Glob` / `Grep` / `LS` | `path` (absolute), `pattern` |
//! | `webfetch` / `websearch` | `WebFetch` / `WebSearch` | `url`, `format` / `query` |
//! | `task` | `Agent` | `subagent_type`, `prompt`, `description` |
//! | `todowrite` / `todoread` / `skill` | `TodoWrite` / `TodoRead` / `Skill` | as is |
//! | `<server>_<tool>` (an MCP tool) | `mcp__<server>__<tool>` | as is |
//!
//! OpenCode names an MCP tool `<server>_<tool>` (each sanitized to
//! `[A-Za-z0-9_-]`); any tool not in the table whose name holds `_` is read
//! that way, split at the first `_` (a server name holding `_` reads
//! wrong: name such servers without one).

#[cfg(feature = "frames")]
pub mod input;

use crate::agent::claude::HookEventKind;
use crate::agent::dialect::{honors, EventRow, EventTable, ToolMap};

/// The deadline the plugin gives a hook unless told otherwise, in
/// milliseconds (OpenCode itself waits for a plugin forever).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

const fn row(name: &'static str, kind: HookEventKind) -> EventRow {
    EventRow::observed(name, kind, DEFAULT_TIMEOUT_MS)
}

/// The events hookd's plugin relays.
pub const EVENTS: EventTable = {
    use HookEventKind as K;
    &[
        row("tool.execute.before", K::PreToolUse).honors(honors::DENY),
        row("tool.execute.after", K::PostToolUse),
        row("chat.message", K::UserPromptSubmit),
        row("session.created", K::SessionStart),
        row("session.idle", K::Stop),
        row("session.deleted", K::SessionEnd),
    ]
};

/// OpenCode's built-in tools and the Claude Code tool each is judged as.
pub const TOOLS: ToolMap = &[
    ("bash", "Bash"),
    ("edit", "Edit"),
    ("write", "Write"),
    ("read", "Read"),
    ("apply_patch", "Edit"),
    ("glob", "Glob"),
    ("grep", "Grep"),
    ("list", "LS"),
    ("webfetch", "WebFetch"),
    ("websearch", "WebSearch"),
    ("task", "Agent"),
    ("todowrite", "TodoWrite"),
    ("todoread", "TodoRead"),
    ("skill", "Skill"),
];
