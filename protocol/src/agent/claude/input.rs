//! Claude Code's hook input (the JSON a command hook reads on stdin), typed.
//!
//! Parsing never fails: an unknown event name, extra fields, or a field of an
//! unexpected type are all kept (the raw JSON travels with the event) and only
//! reported in [`HookInput::problem`]. Field lists follow
//! Claude Code 2.1.330's hook inputs (real captures in `tests/fixtures/events/`); every event-specific field is
//! optional here because Claude Code has added and dropped fields between
//! releases and a hook must keep working across them.
//!
//! Fields that hold arbitrary JSON (`tool_input`, `tool_response`, schemas…)
//! are typed [`Json`]: their presence is recorded but they are not copied —
//! a PostToolUse response can be megabytes, and the event keeps the raw
//! input anyway. Read them from there.

use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

/// A field holding arbitrary JSON: present or not, never copied.
pub type Json = IgnoredAny;

use super::HookEventKind;

/// Fields every hook input carries (`BaseHookInput`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct BaseInput {
    /// The Claude Code session.
    pub session_id: Option<String>,
    /// The session transcript (JSONL).
    pub transcript_path: Option<String>,
    /// The session's working directory.
    pub cwd: Option<String>,
    /// The event name, verbatim.
    pub hook_event_name: Option<String>,
    /// Absent before the first prompt and on SessionStart.
    pub prompt_id: Option<String>,
    /// `default|acceptEdits|bypassPermissions|plan|dontAsk|auto`.
    pub permission_mode: Option<String>,
    /// Set only inside a subagent.
    pub agent_id: Option<String>,
    /// The subagent type, inside a subagent.
    pub agent_type: Option<String>,
}

/// Tool call fields shared by the tool events.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct ToolCall {
    /// e.g. `Bash`, `Edit`, `mcp__github__create_issue`.
    pub tool_name: Option<String>,
    /// The tool's input (present or not; read it from the raw input).
    pub tool_input: Option<Json>,
    /// Absent on PermissionRequest.
    pub tool_use_id: Option<String>,
}

/// Declares one payload struct per event: the event-specific fields.
macro_rules! payloads {
    ($($(#[$meta:meta])* $name:ident { $($field:ident : $ty:ty),* $(,)? })+) => {
        $(
            $(#[$meta])*
            #[derive(Debug, Clone, Default, PartialEq, Deserialize)]
            #[allow(missing_docs)]
            pub struct $name { $(pub $field: Option<$ty>,)* }
        )+
    };
}

payloads! {
    /// `PreToolUse`.
    PreToolUse { tool_name: String, tool_input: Json, tool_use_id: String }
    /// `PermissionRequest` (no `tool_use_id`).
    PermissionRequest { tool_name: String, tool_input: Json, permission_suggestions: Vec<Json> }
    /// `PermissionDenied`.
    PermissionDenied { tool_name: String, tool_input: Json, tool_use_id: String, reason: String }
    /// `PostToolUse`.
    PostToolUse { tool_name: String, tool_input: Json, tool_response: Json, tool_use_id: String, duration_ms: u64 }
    /// `PostToolUseFailure`.
    PostToolUseFailure { tool_name: String, tool_input: Json, tool_use_id: String, error: String, is_interrupt: bool, duration_ms: u64 }
    /// `PostToolBatch`.
    PostToolBatch { tool_calls: Vec<Json> }
    /// `UserPromptSubmit`.
    UserPromptSubmit { prompt: String, source: String, session_title: String }
    /// `UserPromptExpansion`.
    UserPromptExpansion { expansion_type: String, command_name: String, command_args: Json, command_source: String, prompt: String }
    /// `SessionStart`.
    SessionStart { source: String, agent_type: String, model: String, session_title: String, seconds_since_last_response: f64, context_tokens: u64, prompt_cache_likely_expired: bool, estimated_cache_write_usd: f64 }
    /// `SessionEnd`.
    SessionEnd { reason: String }
    /// `Setup`.
    Setup { trigger: String }
    /// `Stop`.
    Stop { stop_hook_active: bool, last_assistant_message: String, background_tasks: Vec<Json>, session_crons: Vec<Json> }
    /// `SubagentStop`.
    SubagentStop { stop_hook_active: bool, agent_id: String, agent_transcript_path: String, agent_type: String, last_assistant_message: String, background_tasks: Vec<Json>, session_crons: Vec<Json> }
    /// `StopFailure`.
    StopFailure { error: Json, error_details: Json, last_assistant_message: String }
    /// `SubagentStart`.
    SubagentStart { agent_id: String, agent_type: String }
    /// `Notification`.
    Notification { message: String, title: String, notification_type: String }
    /// `PreCompact`.
    PreCompact { trigger: String, custom_instructions: String }
    /// `PostCompact`.
    PostCompact { trigger: String, compact_summary: String }
    /// `PreModelSwitch`.
    PreModelSwitch { from_model: String, to_model: String, requested_model: String, source: String, context_tokens: u64, prompt_cache_warm: bool, cache_ttl: Json, estimated_cache_write_usd: f64, pricing: Json }
    /// `PostModelSwitch`.
    PostModelSwitch { from_model: String, to_model: String, requested_model: String, source: String, context_tokens: u64, prompt_cache_warm: bool, cache_ttl: Json, estimated_cache_write_usd: f64, pricing: Json }
    /// `TeammateIdle`.
    TeammateIdle { teammate_name: String, team_name: String }
    /// `TaskCreated`.
    TaskCreated { task_id: String, task_subject: String, task_description: String, teammate_name: String, team_name: String }
    /// `TaskCompleted`.
    TaskCompleted { task_id: String, task_subject: String, task_description: String, teammate_name: String, team_name: String }
    /// `Elicitation`.
    Elicitation { mcp_server_name: String, message: String, mode: String, url: String, elicitation_id: String, requested_schema: Json }
    /// `ElicitationResult`.
    ElicitationResult { mcp_server_name: String, elicitation_id: String, mode: String, action: String, content: Json }
    /// `ConfigChange`.
    ConfigChange { source: String, file_path: String }
    /// `InstructionsLoaded`.
    InstructionsLoaded { file_path: String, memory_type: String, load_reason: String, globs: Vec<String>, trigger_file_path: String, parent_file_path: String }
    /// `WorktreeCreate`.
    WorktreeCreate { name: String }
    /// `WorktreeRemove`.
    WorktreeRemove { worktree_path: String }
    /// `CwdChanged`.
    CwdChanged { old_cwd: String, new_cwd: String }
    /// `FileChanged`.
    FileChanged { file_path: String, event: String }
    /// `DirectoryAdded`.
    DirectoryAdded { directory: String, source: String }
    /// `MessageDisplay`.
    MessageDisplay { turn_id: String, message_id: String, index: u64, r#final: bool, delta: String }
}

/// Declares [`Payload`] and its parser from the event list.
macro_rules! payload_enum {
    ($($variant:ident),+ $(,)?) => {
        /// The event-specific part of a hook input, one variant per event.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Payload {
            $(#[doc = concat!("`", stringify!($variant), "`")] $variant($variant),)+
            /// An event this build does not know, or a known event whose
            /// fields did not have the expected types (see `problem`).
            Other,
        }

        impl Payload {
            fn parse(kind: HookEventKind, raw: &Value) -> Result<Payload, String> {
                Ok(match kind {
                    $(HookEventKind::$variant => Payload::$variant(typed(raw)?),)+
                    HookEventKind::Unknown => Payload::Other,
                })
            }
        }
    };
}

payload_enum! {
    PreToolUse, PermissionRequest, PermissionDenied, PostToolUse, PostToolUseFailure,
    PostToolBatch, UserPromptSubmit, UserPromptExpansion, SessionStart, SessionEnd, Setup,
    Stop, SubagentStop, StopFailure, SubagentStart, Notification, PreCompact, PostCompact,
    PreModelSwitch, PostModelSwitch, TeammateIdle, TaskCreated, TaskCompleted, Elicitation,
    ElicitationResult, ConfigChange, InstructionsLoaded, WorktreeCreate, WorktreeRemove,
    CwdChanged, FileChanged, DirectoryAdded, MessageDisplay,
}

/// Deserializes `raw` into `T`, naming the offending field on error, not
/// the value found there (the problem is logged on the daemon's stderr).
fn typed<'de, T: Deserialize<'de>>(raw: &'de Value) -> Result<T, String> {
    // Plainly first: tracking the path costs something on every field of
    // every hook, and only an error needs it, so an error is read again.
    if let Ok(typed) = T::deserialize(raw) {
        return Ok(typed);
    }
    serde_path_to_error::deserialize(raw).map_err(|e| {
        let message = crate::json::without_value(&e.inner().to_string());
        format!("{}: {message}", e.path())
    })
}

/// A hook input, typed. The raw JSON is not kept here; the event that owns
/// this value keeps it verbatim.
#[derive(Debug, Clone, PartialEq)]
pub struct HookInput {
    /// Which event this is.
    pub kind: HookEventKind,
    /// `hook_event_name` verbatim (the only place an unknown name survives).
    pub name: String,
    /// Common fields.
    pub base: BaseInput,
    /// Tool fields, for every event that has them.
    pub tool: ToolCall,
    /// Event-specific fields.
    pub payload: Payload,
    /// Why typed parsing fell short, if it did. Never fatal.
    pub problem: Option<String>,
}

impl HookInput {
    /// Types a raw hook input. Never fails; see [`HookInput::problem`].
    pub fn parse(raw: &Value) -> HookInput {
        HookInput::parse_with(raw, HookEventKind::from_name)
    }

    /// Types a raw hook input of an agent whose event names `kind_of` maps
    /// onto hookd's kinds (another agent's dialect: its inputs share Claude
    /// Code's common and tool fields). Never fails.
    pub fn parse_with(raw: &Value, kind_of: impl Fn(&str) -> HookEventKind) -> HookInput {
        if !raw.is_object() {
            return HookInput {
                kind: HookEventKind::Unknown,
                name: String::new(),
                base: BaseInput::default(),
                tool: ToolCall::default(),
                payload: Payload::Other,
                problem: Some("hook input is not a JSON object".into()),
            };
        }
        let mut problems = Vec::new();
        let base = typed::<BaseInput>(raw).unwrap_or_else(|e| {
            problems.push(format!("common fields: {e}"));
            BaseInput::default()
        });
        let name = match raw.get("hook_event_name") {
            Some(Value::String(s)) => s.clone(),
            _ => {
                problems.push("missing or non-string `hook_event_name`".into());
                String::new()
            }
        };
        let kind = kind_of(&name);
        let tool = if kind.has_tool() {
            typed::<ToolCall>(raw).unwrap_or_else(|e| {
                problems.push(format!("tool fields: {e}"));
                ToolCall::default()
            })
        } else {
            ToolCall::default()
        };
        let payload = Payload::parse(kind, raw).unwrap_or_else(|e| {
            problems.push(format!("{name} fields: {e}"));
            Payload::Other
        });
        HookInput {
            kind,
            name,
            base,
            tool,
            payload,
            problem: (!problems.is_empty()).then(|| problems.join("; ")),
        }
    }
}

/// The fields of a hook input that code beyond the dialects reads,
/// borrowed from the raw JSON: the daemon, the rule engine, the stop
/// chains and the grants read these, never the input by key, so that the
/// keys are spelled here only. Codex's and Gemini's inputs share Claude
/// Code's common and tool fields, and the rule engine's inputs are
/// Claude-shaped ([`crate::agent::Agent::rule_inputs`]), so one reader
/// serves every agent. A field of another type than the agent documents
/// reads as absent, as it did when each caller read it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct InputFields<'a> {
    /// `hook_event_name`, the agent's own.
    pub event_name: Option<&'a str>,
    /// The session.
    pub session_id: Option<&'a str>,
    /// The subagent, inside one.
    pub agent_id: Option<&'a str>,
    /// The session's working directory.
    pub cwd: Option<&'a str>,
    /// The tool's name, for tool events.
    pub tool_name: Option<&'a str>,
    /// The tool's input, for tool events (any JSON).
    pub tool_input: Option<&'a Value>,
    /// A Stop or SubagentStop that comes from a block: the agent goes on
    /// because a Stop hook told it to (`stop_hook_active: true`).
    pub stop_hook_active: bool,
    /// The prompt's text, on UserPromptSubmit.
    pub prompt: Option<&'a str>,
}

impl<'a> InputFields<'a> {
    /// The fields of `raw` (all absent when it is not an object).
    ///
    /// One pass over the object's members rather than a lookup per field:
    /// the daemon reads these for every hook, in several places, and eight
    /// map lookups cost twice what a walk over a hook input's handful of
    /// members does (#28).
    pub fn of(raw: &'a Value) -> InputFields<'a> {
        let mut f = InputFields::default();
        let Value::Object(members) = raw else {
            return f;
        };
        for (key, value) in members {
            let slot = match key.as_str() {
                "hook_event_name" => &mut f.event_name,
                "session_id" => &mut f.session_id,
                "agent_id" => &mut f.agent_id,
                "cwd" => &mut f.cwd,
                "tool_name" => &mut f.tool_name,
                "prompt" => &mut f.prompt,
                "tool_input" => {
                    f.tool_input = Some(value);
                    continue;
                }
                "stop_hook_active" => {
                    f.stop_hook_active = *value == Value::Bool(true);
                    continue;
                }
                _ => continue,
            };
            *slot = value.as_str();
        }
        f
    }

    /// `hook_event_name` alone, as [`InputFields::of`] reads it: one
    /// lookup, for a reader that needs nothing else (the walk over every
    /// member costs three times as much).
    pub fn event_name_of(raw: &'a Value) -> Option<&'a str> {
        raw.get("hook_event_name").and_then(Value::as_str)
    }
}

/// One short line saying what a hook input is about: the command, file
/// path, URL, search pattern, prompt or message, else the tool or event
/// name; whitespace runs read as one space, at most `max_chars`
/// characters (the last one `…` when cut).
pub fn input_summary(input: &Value, max_chars: usize) -> String {
    fn field<'a>(v: Option<&'a Value>, name: &str) -> Option<&'a str> {
        v.and_then(|v| v.get(name)).and_then(Value::as_str)
    }
    let tool_input = input.get("tool_input");
    let text = [
        "command",
        "file_path",
        "notebook_path",
        "url",
        "pattern",
        "query",
        "path",
        "prompt",
        "description",
    ]
    .iter()
    .find_map(|name| field(tool_input, name))
    .or_else(|| field(Some(input), "prompt"))
    .or_else(|| field(Some(input), "message"))
    .or_else(|| field(Some(input), "tool_name"))
    .or_else(|| field(Some(input), "hook_event_name"))
    .unwrap_or_default();
    // Built word by word and cut as soon as it is long enough: a command
    // can be megabytes long. Sized for the text (its usual length, once
    // its spaces are made single) and never more than the cut needs.
    let mut line = String::with_capacity(text.len().min(max_chars.saturating_mul(4) + 3));
    let mut chars = 0;
    for word in text.split_whitespace() {
        // A word that fits whole goes in at once.
        let space = usize::from(chars > 0);
        let fits = word.chars().take(max_chars + 1).count();
        if chars + space + fits <= max_chars {
            if space == 1 {
                line.push(' ');
            }
            line.push_str(word);
            chars += space + fits;
            continue;
        }
        for c in (chars > 0).then_some(' ').into_iter().chain(word.chars()) {
            if chars == max_chars {
                line.pop();
                line.push('…');
                return line;
            }
            line.push(c);
            chars += 1;
        }
    }
    line
}

/// The permission rules Claude Code suggests on a permission prompt
/// (`permission_suggestions`, its `addRules` updates), in permission-rule
/// syntax (`Bash(npm test:*)`), each with the verdict it suggests (only
/// `allow` and `deny` updates; others are skipped).
pub fn suggested_rules(input: &Value) -> Vec<(crate::decision::Verdict, String)> {
    use crate::decision::Verdict;
    let mut rules = Vec::new();
    let updates = input
        .get("permission_suggestions")
        .and_then(Value::as_array);
    for update in updates.into_iter().flatten() {
        if update.get("type").and_then(Value::as_str) != Some("addRules") {
            continue;
        }
        let verdict = match update.get("behavior").and_then(Value::as_str) {
            Some("allow") => Verdict::Allow,
            Some("deny") => Verdict::Deny,
            _ => continue,
        };
        let listed = update.get("rules").and_then(Value::as_array);
        for rule in listed.into_iter().flatten() {
            let Some(tool) = rule.get("toolName").and_then(Value::as_str) else {
                continue;
            };
            let text = match rule.get("ruleContent").and_then(Value::as_str) {
                Some(content) => format!("{tool}({content})"),
                None => tool.to_string(),
            };
            rules.push((verdict, text));
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_are_one_short_line() {
        let bash = json!({"tool_name": "Bash", "tool_input": {"command": "rm  -rf\n /tmp/x"}});
        assert_eq!(input_summary(&bash, 60), "rm -rf /tmp/x");
        assert_eq!(input_summary(&bash, 5), "rm -…");
        // Cut at, before and after a word's end: full is cut when more follows.
        assert_eq!(input_summary(&bash, 13), "rm -rf /tmp/x");
        assert_eq!(input_summary(&bash, 12), "rm -rf /tmp…");
        assert_eq!(input_summary(&bash, 6), "rm -r…");
        assert_eq!(input_summary(&bash, 7), "rm -rf…");
        assert_eq!(input_summary(&bash, 3), "rm…");
        assert_eq!(input_summary(&bash, 1), "…");
        let wide = json!({"tool_input": {"command": "écho ü ÿÿÿ"}});
        assert_eq!(input_summary(&wide, 8), "écho ü …");
        let prompt = json!({"hook_event_name": "UserPromptSubmit", "prompt": "fix it"});
        assert_eq!(input_summary(&prompt, 60), "fix it");
        let stop = json!({"hook_event_name": "Stop"});
        assert_eq!(input_summary(&stop, 60), "Stop");
    }

    #[test]
    fn pre_tool_use_is_typed() {
        let raw = json!({
            "session_id": "s", "transcript_path": "/t", "cwd": "/p",
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "ls"}, "tool_use_id": "toolu_1", "new_field": 1
        });
        let input = HookInput::parse(&raw);
        assert_eq!(input.kind, HookEventKind::PreToolUse);
        assert_eq!(input.problem, None);
        assert_eq!(input.tool.tool_name.as_deref(), Some("Bash"));
        let Payload::PreToolUse(p) = input.payload else {
            panic!("{:?}", input.payload)
        };
        assert!(p.tool_input.is_some());
        assert_eq!(p.tool_use_id.as_deref(), Some("toolu_1"));
    }

    #[test]
    fn unknown_event_and_bad_types_are_not_fatal() {
        let input = HookInput::parse(&json!({"hook_event_name": "Brand New", "x": 1}));
        assert_eq!(input.kind, HookEventKind::Unknown);
        assert_eq!(input.name, "Brand New");
        assert_eq!(input.problem, None);

        let input =
            HookInput::parse(&json!({"hook_event_name": "Stop", "stop_hook_active": "yes"}));
        assert_eq!(input.kind, HookEventKind::Stop);
        assert_eq!(input.payload, Payload::Other);
        assert_eq!(
            input.problem.as_deref(),
            Some("Stop fields: stop_hook_active: invalid type: expected a boolean, found string"),
            "the field and what was wrong, not the value"
        );

        let input = HookInput::parse(&json!([1, 2]));
        assert_eq!(input.kind, HookEventKind::Unknown);
        assert!(input.problem.is_some());
    }
}
