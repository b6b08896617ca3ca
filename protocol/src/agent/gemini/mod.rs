//! Everything hookd knows about Google Gemini CLI 0.61.0's hook JSON, and
//! nothing else: the Gemini dialect (see [`crate::agent`]).
//!
//! - [`mod@kind`]: Gemini's events table ([`EVENTS`], see
//!   [`crate::agent::dialect`]): its events mapped onto hookd's kinds, and
//!   what each can do;
//! - [`input`]: Gemini's tools mapped onto Claude Code's, as Claude-shaped
//!   inputs for the rules;
//! - [`output`]: an answer → the exact output Gemini honors.
//!
//! What is known comes from the real CLI run offline (its captured hook
//! inputs are `tests/fixtures/agents/gemini/captured/`; what it honors is
//! pinned by `tests/e2e_agents.rs`) and from its bundle (`packages/core/src/hooks/types.ts`).
//!
//! # Events
//!
//! Hooks are registered in `~/.gemini/settings.json` (or the project's
//! `.gemini/settings.json`), timeouts in **milliseconds** (default 60 000).
//! A matcher is a regex over Gemini's own tool names on tool events, but
//! compared as a plain string with the `source` / `trigger` / `reason` of
//! SessionStart, SessionEnd and PreCompress: only `"*"`, `""` or no matcher
//! matches every event (`".*"` silently drops those three).
//!
//! | Gemini event | hookd kind | what Gemini honors | registered by default |
//! | --- | --- | --- | --- |
//! | `BeforeTool` | PreToolUse | deny, rewritten input (`tool_input`); **never ask** (it hangs `gemini -p`) | yes |
//! | `AfterTool` | PostToolUse | deny (the model gets the reason instead of the output), context | yes |
//! | `BeforeAgent` | UserPromptSubmit | deny (no model call), context | yes |
//! | `AfterAgent` | Stop (carries `stop_hook_active`: the once-per-chain Stop rule holds) | deny (= retry: the reason becomes the next prompt, whose BeforeAgent continues the stop chain: [`output::continuation_prompt`]) | yes |
//! | `SessionStart` | SessionStart | context | yes |
//! | `SessionEnd` | SessionEnd | nothing | yes |
//! | `Notification` | Notification | nothing | yes |
//! | `PreCompress` | PreCompact | nothing (Gemini ignores its output; it fires before every model call) | yes |
//! | `BeforeModel` | unknown (observe-only, the name kept) | not used | no |
//! | `AfterModel` | unknown (observe-only) | not used | no |
//! | `BeforeToolSelection` | unknown (observe-only) | not used | no |
//!
//! The three model events are observe-only and not registered by default:
//! they carry the whole conversation (`llm_request`), and AfterModel fires
//! once per streamed chunk. Their own decisions (a synthetic response, a
//! tool config) are not hookd's business.
//!
//! # Tools
//!
//! | Gemini `tool_name` | judged as | input the rules see |
//! | --- | --- | --- |
//! | `run_shell_command` | `Bash` | `command`, `description`, `run_in_background` (= `is_background`), `dir_path` |
//! | `replace` | `Edit` | `file_path` (absolute), `old_string`, `new_string`, `replace_all` (= `allow_multiple`) |
//! | `write_file` | `Write` | `file_path` (absolute), `content` |
//! | `read_file` | `Read` | `file_path` (absolute) |
//! | `read_many_files` | `Read`, once per `include` entry | `file_path` (absolute; a glob entry is compared as a path) |
//! | `glob` / `grep_search` / `list_directory` | `Glob` / `Grep` / `LS` | `path` (absolute `dir_path`) |
//! | `web_fetch` | `WebFetch`, once per URL | `url`, `prompt` |
//! | `google_web_search` | `WebSearch` | `query` |
//! | `write_todos` / `activate_skill` / `exit_plan_mode` | `TodoWrite` / `Skill` (`skill` = `name`) / `ExitPlanMode` | as is |
//! | `invoke_agent` | `Agent` | `subagent_type` (= `agent_name`), `prompt` |
//! | `mcp_<server>_<tool>` | `mcp__<server>__<tool>` | as is |
//! | anything else | as is | as is |
//!
//! Gemini's paths are what the model wrote, often relative: they are made
//! absolute against the input's `cwd` (`~/` is left for the rule engine,
//! which expands it to home). MCP names come from `mcp_context.server_name`
//! and `tool_name` when present (a server name may hold `_`), else from
//! splitting at the first `_` as Gemini itself does. `web_fetch` has no URL
//! field: its `prompt` names up to 20 URLs, found as Gemini finds them
//! (whitespace-separated words holding `://`); each is judged as its own
//! `WebFetch`, so `WebFetch(domain:…)` applies to every host the call
//! reads, a deny of any denies the call, and an allow needs all. A GitHub
//! `blob` URL is also judged as the `raw.githubusercontent.com` URL Gemini
//! really fetches. A prompt with no readable URL is a `WebFetch` with no
//! `url`, which deny and ask domain rules match and allow rules do not.
//!
//! # Environment
//!
//! Gemini runs hooks with its whole environment — **`GEMINI_API_KEY`
//! included** — plus `GEMINI_SESSION_ID`, `GEMINI_PROJECT_DIR`,
//! `GEMINI_CWD`, `CLAUDE_PROJECT_DIR`. Whatever relays a Gemini hook's
//! environment must take only [`HOOK_ENV`], by name, never a prefix.

#[cfg(feature = "frames")]
pub mod input;
pub mod kind;
pub mod output;

pub use kind::{GeminiEvent, EVENTS};
pub use output::render;

/// The variables of a Gemini hook's environment worth relaying with the
/// event: an allowlist, because the same environment holds the user's
/// `GEMINI_API_KEY`.
pub const HOOK_ENV: &[&str] = &[
    "GEMINI_SESSION_ID",
    "GEMINI_PROJECT_DIR",
    "GEMINI_CWD",
    "CLAUDE_PROJECT_DIR",
];

#[cfg(test)]
mod tests {
    #[test]
    fn the_api_key_is_never_relayed() {
        assert!(super::HOOK_ENV.iter().all(|v| !v.contains("KEY")));
    }
}
