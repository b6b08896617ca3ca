//! Everything hookd knows about OpenAI Codex CLI 0.169.0's hook JSON, and
//! nothing else: the Codex dialect (see [`crate::agent`]).
//!
//! - [`mod@kind`]: Codex's events table ([`EVENTS`], see
//!   [`crate::agent::dialect`]): its events mapped onto hookd's kinds, and
//!   what each can do;
//! - [`input`]: Codex's tools mapped onto Claude Code's, as Claude-shaped
//!   inputs for the rules ([`patch`] reads `apply_patch`'s patch);
//! - [`output`]: an answer → the exact output Codex honors.
//!
//! What is known comes from the real CLI run offline (its captured hook
//! inputs are `tests/fixtures/agents/codex/captured/`; what it honors is
//! pinned by `tests/e2e_agents.rs`) and from the output schemas embedded in its binary
//! (`tests/fixtures/agents/codex/hook-schemas.json`).
//!
//! # Events
//!
//! Codex's events are Claude Code's, by name; hooks are registered in
//! `$CODEX_HOME/hooks.json` with timeouts in seconds (default 600; Codex
//! clamps SessionEnd and Interrupt to 3 s).
//!
//! | Codex event | hookd kind | what Codex honors |
//! | --- | --- | --- |
//! | `SessionStart` | SessionStart | context |
//! | `UserPromptSubmit` | UserPromptSubmit | deny (the prompt never reaches the model), context |
//! | `PreToolUse` | PreToolUse | deny (with a reason), rewritten input, context; **no ask, no allow** |
//! | `PermissionRequest` | PermissionRequest | allow, deny (fires only on the approval path, `--approve-for-me`) |
//! | `PostToolUse` | PostToolUse | deny (the tool's output is replaced by the reason), context |
//! | `PreCompact` | PreCompact | nothing (observe-only: its output has no decision) |
//! | `PostCompact` | PostCompact | nothing |
//! | `Stop` | Stop | deny (= keep working; the reason becomes the next prompt) |
//! | `SubagentStart` | SubagentStart | context |
//! | `SubagentStop` | SubagentStop | deny (keep working) |
//! | `SessionEnd` | SessionEnd | nothing |
//! | `Interrupt` | unknown (observe-only; the name is kept) | nothing |
//!
//! `Stop` carries `stop_hook_active`, so the once-per-chain Stop rule holds
//! as for Claude Code.
//!
//! # Tools
//!
//! | Codex `tool_name` | judged as | input the rules see |
//! | --- | --- | --- |
//! | `Bash` (the `exec_command` tool) | `Bash` | as is (`command`) |
//! | `apply_patch` | `Write` per added file, `Edit` per updated or deleted file, `Edit` + `Write` for a move | one input per file: `{file_path, change, content?}`, paths absolute against `cwd` |
//! | `view_image` | `Read` | `{file_path}` from `path` |
//! | `collaboration…` (subagent tools, `collaborationspawn_agent`, …) | `Agent` | as is, plus `prompt` (`message`), `description` (`task_name`), `subagent_type` (`agent_type`) |
//! | `mcp__server__tool` | as is | as is |
//! | anything else | as is | as is |
//!
//! A patch touching several files is judged once per file: a deny of any
//! file denies the whole patch; an allow needs every file allowed
//! (`crate::agent::combine`). The log's `mapped_tool` is `Write` for a
//! patch that only adds files, else `Edit` ([`input::claude_tool_name`]).
//!
//! # Outputs
//!
//! Codex validates hook output against a strict schema per event
//! (`additionalProperties: false`) and silently runs the tool when the
//! output does not fit: an unknown field, a deny without a reason, `decision:
//! "deny"`, `permissionDecision: "ask"`. So [`output`] writes only schema
//! fields, always a non-empty reason with a deny, and renders what Codex
//! cannot do (ask, a bare allow on PreToolUse) as "no opinion". A
//! test validates every output hookd can produce against the schemas.
//!
//! # Environment
//!
//! Codex runs hooks with its own environment unchanged (no `CODEX_*`
//! variables are added; the session id is only on stdin), in the session's
//! cwd, unsandboxed; several matching hook groups run concurrently.

#[cfg(feature = "frames")]
pub mod input;
pub mod kind;
pub mod output;
pub mod patch;

pub use kind::{CodexEvent, EVENTS};
pub use output::render;

/// The variables of a Codex hook's environment worth relaying with the
/// event: none. Codex adds nothing of its own (the session id is on stdin),
/// and the rest is the user's whole environment, API keys included.
pub const HOOK_ENV: &[&str] = &[];
