//! Everything hookd knows about GitHub Copilot CLI 1.0.102's hook JSON, and
//! nothing else: the Copilot dialect (see [`crate::agent`]).
//!
//! - [`mod@kind`]: Copilot's events table ([`EVENTS`], see
//!   [`crate::agent::dialect`]);
//! - [`input`]: Copilot's tools mapped onto Claude Code's, as Claude-shaped
//!   inputs for the rules;
//! - [`output`]: an answer → the exact output Copilot honors.
//!
//! What is known comes from the real CLI run offline against the scripted
//! mock (`docs/agents/copilot.md` has the probe; its captured hook inputs
//! are `tests/fixtures/agents/copilot/captured/`).
//!
//! # Registration: Claude Code's format
//!
//! Copilot reads hooks from `.github/hooks/*.json` (project) and
//! `~/.copilot/hooks/*.json` (user) in two formats: its native one
//! (`"version": 1`, camelCase events, `{sessionId, toolName, toolArgs}`
//! inputs with no event name) and Claude Code's (PascalCase events with
//! `matcher` groups, inputs with `hook_event_name`, `session_id`,
//! `tool_name`, `tool_input`). hookd registers the **Claude format**: every
//! input names its event and its tool in Claude Code's words for the tools
//! Claude Code has (`Bash`, `Write`, `Read`, `WebFetch`), so the forwarder
//! reads it as it reads Claude Code's, and Claude Code's `permissionDecision`
//! deny is honored with its reason reaching the model. The one exception:
//! `PermissionRequest` arrives in the native shape (`hookName`,
//! `toolName`), so hookd does not register it; `PreToolUse` fires first for
//! the same call and is where hookd judges.
//!
//! Copilot also reads the project's `.claude/settings.json` hooks: a
//! project where hookd is installed for Claude Code is judged under Copilot
//! too, but named Claude Code.
//!
//! # Events
//!
//! | Copilot event (Claude format) | hookd kind | what Copilot honors | registered by default |
//! | --- | --- | --- | --- |
//! | `PreToolUse` | PreToolUse | deny (`permissionDecision`, the model gets `Denied by preToolUse hook: R`); **never ask** | yes |
//! | `PostToolUse` | PostToolUse | nothing | yes |
//! | `UserPromptSubmit` | UserPromptSubmit | nothing | yes |
//! | `Stop` | Stop (carries `stop_hook_active`) | block (`decision: block`: R becomes the next prompt, which fires UserPromptSubmit: [`output::continuation_prompt`]) | yes |
//! | `SessionStart` | SessionStart | nothing | yes |
//! | `SessionEnd` | SessionEnd | nothing | yes |
//! | `PermissionRequest` | PermissionRequest | not used (native-shaped input) | no |
//!
//! # Tools
//!
//! | Copilot `tool_name` (Claude format) | model's tool | judged as | input the rules see |
//! | --- | --- | --- | --- |
//! | `Bash` | `bash` | `Bash` | `command`, `description` |
//! | `Write` | `create` | `Write` | `file_path` (= `path`), `content` (= `file_text`) |
//! | `Read` | `view` | `Read` | `file_path` (= `path`) |
//! | `str_replace` / `edit` | `str_replace` / `edit` | `Edit` | `file_path`, `old_string`, `new_string` |
//! | `apply_patch` | `apply_patch` | `Edit`, once per file the patch touches | `file_path` |
//! | `WebFetch` | `web_fetch` | `WebFetch` | `url` |
//! | `glob` / `rg` / `task` | same | `Glob` / `Grep` / `Agent` | as is |
//! | anything else | | as is | as is |
//!
//! Paths are made absolute against the input's `cwd`.

#[cfg(feature = "frames")]
pub mod input;
pub mod kind;
pub mod output;

pub use kind::{CopilotEvent, EVENTS};
pub use output::render;

/// The variables of a Copilot hook's environment worth relaying with the
/// event: none (the session is in stdin; the environment holds the user's
/// `COPILOT_PROVIDER_API_KEY` and GitHub token).
pub const HOOK_ENV: &[&str] = &[];
