//! The agents hookd judges, and what their dialects share.
//!
//! Claude Code (and Agent SDK runs), OpenAI Codex CLI, Google Gemini CLI,
//! GitHub Copilot CLI, OpenCode and the Pi coding agent each have a
//! *dialect*: the one module that knows that agent's hook JSON ([`claude`],
//! [`codex`], [`gemini`], [`copilot`], [`opencode`], [`pi`]; the last two
//! are relayed by in-process plugins, [`plugin`]). A dialect
//!
//! - maps the agent's event names onto hookd's event kinds
//!   ([`HookEventKind`], which the rules and the pending table use), keeping
//!   the agent's own name;
//! - maps the agent's tool names and inputs onto Claude Code's vocabulary, so
//!   that one rule (`Bash(rm:*)`, `Edit(src/**)`, `WebFetch(domain:…)`,
//!   `mcp__server__tool`) matches the same action in every agent: the result
//!   is one or more *Claude-shaped hook inputs* ([`Agent::rule_inputs`]) that
//!   the rule engine judges as it judges Claude Code's;
//! - renders an [`Answer`] as the exact stdout / stderr / exit code the agent
//!   honors for the event, and never in a form the agent misreads (a CLI that
//!   hangs on `ask` never gets one; a CLI that throws away outputs with
//!   unknown fields never gets one).
//!
//! A dialect is a small module plus data ([`dialect`]): an events table, a
//! tool-name map, and the fields its output sets in the one output
//! envelope; its module holds only what is particular to its agent.
//!
//! This module holds what the dialects share: [`Agent`], the dispatch to each
//! dialect (the rule inputs of one hook, which `hookd_core::rules::evaluate`
//! judges and combines), and [`universal_deny`], the one answer every agent
//! honors.
//!
//! Pure: no IO, no tokio, no logging.

pub mod claude;
pub mod codex;
pub mod copilot;
#[cfg(feature = "frames")]
pub mod coverage;
pub mod dialect;
pub mod gemini;
pub mod opencode;
pub mod pi;
pub mod plugin;

#[cfg(feature = "frames")]
use std::borrow::Cow;
use std::fmt;

#[cfg(feature = "frames")]
use serde_json::Map;
use serde_json::Value;

use crate::agent::claude::output::HookOutput;
use crate::agent::claude::{FailClosed, HookEventKind};
use crate::agent::dialect::EventTable;
use crate::decision::{Answer, Verdict};

/// Which agent harness an event came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "frames",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "kebab-case")
)]
pub enum Harness {
    /// The Claude Code CLI, through `hook-forwarder`.
    #[default]
    ClaudeCode,
    /// A Claude Agent SDK run, through the adapter.
    AgentSdk,
    /// OpenAI Codex CLI, through `hook-forwarder --agent codex`.
    Codex,
    /// Google Gemini CLI, through `hook-forwarder --agent gemini`.
    Gemini,
    /// OpenCode, through hookd's in-process plugin.
    #[cfg_attr(feature = "frames", serde(rename = "opencode"))]
    OpenCode,
    /// The Pi coding agent, through hookd's in-process extension.
    Pi,
    /// GitHub Copilot CLI, through `hook-forwarder --agent copilot`.
    Copilot,
}

impl Harness {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Harness::ClaudeCode => "claude-code",
            Harness::AgentSdk => "agent-sdk",
            Harness::Codex => "codex",
            Harness::Gemini => "gemini",
            Harness::OpenCode => "opencode",
            Harness::Pi => "pi",
            Harness::Copilot => "copilot",
        }
    }

    /// The agent whose hook JSON this harness speaks: an Agent SDK run is
    /// Claude Code's.
    pub fn agent(self) -> Agent {
        match self {
            Harness::ClaudeCode | Harness::AgentSdk => Agent::ClaudeCode,
            Harness::Codex => Agent::Codex,
            Harness::Gemini => Agent::Gemini,
            Harness::OpenCode => Agent::OpenCode,
            Harness::Pi => Agent::Pi,
            Harness::Copilot => Agent::Copilot,
        }
    }

    /// The harness of a hook `hook-forwarder` relays for `agent`.
    pub fn of_forwarded(agent: Agent) -> Harness {
        match agent {
            Agent::ClaudeCode => Harness::ClaudeCode,
            Agent::Codex => Harness::Codex,
            Agent::Gemini => Harness::Gemini,
            Agent::OpenCode => Harness::OpenCode,
            Agent::Pi => Harness::Pi,
            Agent::Copilot => Harness::Copilot,
        }
    }
}

/// An agent whose hooks hookd judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Agent {
    /// Claude Code 2.1.330 (and the Agent SDK, which runs it).
    ClaudeCode,
    /// OpenAI Codex CLI 0.169.0.
    Codex,
    /// Google Gemini CLI 0.61.0.
    Gemini,
    /// OpenCode 1.18.33, through hookd's plugin.
    OpenCode,
    /// The Pi coding agent 0.73.1, through hookd's extension.
    Pi,
    /// GitHub Copilot CLI 1.0.102.
    Copilot,
}

impl Agent {
    /// Every agent, in the order of the documentation's tables.
    pub const ALL: [Agent; 6] = [
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::Gemini,
        Agent::Copilot,
        Agent::OpenCode,
        Agent::Pi,
    ];

    /// The name a user writes (`--agent NAME`) and the log records.
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::OpenCode => "opencode",
            Agent::Pi => "pi",
            Agent::Copilot => "copilot",
        }
    }

    /// The name a person reads (an approval page, a push notification).
    pub fn display_name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "Claude Code",
            Agent::Codex => "Codex CLI",
            Agent::Gemini => "Gemini CLI",
            Agent::OpenCode => "OpenCode",
            Agent::Pi => "Pi",
            Agent::Copilot => "Copilot CLI",
        }
    }

    /// Parses [`Agent::as_str`]'s spelling; `None` for anything else.
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.as_str() == name)
    }

    /// This agent's events table ([`dialect`]): its events, what each can
    /// do, and its timeouts.
    pub fn events(self) -> EventTable {
        match self {
            Agent::ClaudeCode => crate::agent::claude::EVENTS,
            Agent::Codex => crate::agent::codex::EVENTS,
            Agent::Gemini => crate::agent::gemini::EVENTS,
            Agent::OpenCode => crate::agent::opencode::EVENTS,
            Agent::Pi => crate::agent::pi::EVENTS,
            Agent::Copilot => crate::agent::copilot::EVENTS,
        }
    }

    /// The hookd event kind of one of this agent's event names;
    /// [`HookEventKind::Unknown`] for a name the dialect does not map (its
    /// own name is kept on the event; it is observe-only).
    pub fn event_kind(self, name: &str) -> HookEventKind {
        dialect::event_kind(self.events(), name)
    }

    /// Whether `name` is one of this agent's events (mapped or not).
    pub fn knows_event(self, name: &str) -> bool {
        dialect::event(self.events(), name).is_some()
    }

    /// The verdicts this agent honors for an event of `kind` (always
    /// including "no opinion"). [`Agent::render`] gives any other verdict as
    /// "no opinion", except where the dialect says otherwise (Gemini's `ask`).
    pub fn supported_verdicts(self, kind: HookEventKind) -> &'static [Verdict] {
        dialect::supported_verdicts(self.events(), kind)
    }

    /// The verdicts a client may `decide` an event of `kind` from this agent
    /// with: those the agent honors and, for a tool call of Codex or Gemini
    /// (PreToolUse), `allow`, which lets the agent's own flow run the tool
    /// (it is written as "no opinion": neither CLI has a bare allow there).
    /// Never `ask` for Codex or Gemini: neither can ask from a hook.
    pub fn decidable_verdicts(self, kind: HookEventKind) -> &'static [Verdict] {
        use Verdict::*;
        match (self, kind) {
            (Agent::ClaudeCode, _) => self.supported_verdicts(kind),
            (
                Agent::Codex | Agent::Gemini | Agent::Copilot | Agent::OpenCode | Agent::Pi,
                HookEventKind::PreToolUse,
            ) => &[Allow, Deny, NoOpinion],
            _ => self.supported_verdicts(kind),
        }
    }

    /// Whether an event of `kind` from this agent is a decision point: the
    /// agent honors some verdict for it, so it is judged and may wait for a
    /// decision. Every other event is observe-only, answered at once.
    pub fn is_decision_point(self, kind: HookEventKind) -> bool {
        kind.is_decision_point()
            && self
                .supported_verdicts(kind)
                .iter()
                .any(|v| *v != Verdict::NoOpinion)
    }

    /// This agent's name for its event of `kind`; `None` when it fires
    /// none (Gemini has no PermissionRequest).
    pub fn event_name(self, kind: HookEventKind) -> Option<&'static str> {
        dialect::name_of(self.events(), kind)
    }

    /// Whether this agent takes `additionalContext` from a hook of `kind`
    /// (and shows it to the model).
    pub fn accepts_context(self, kind: HookEventKind) -> bool {
        dialect::accepts_context(self.events(), kind)
    }

    /// Whether the rules judge an event of `kind` from this agent: a
    /// decision point, or an observe-only event the agent takes context for
    /// (SessionStart, SubagentStart, …), where the `context` rules' text is
    /// delivered and nothing else of the rules applies
    /// (`Evaluation::context_only`). It never waits for a client.
    pub fn is_judged(self, kind: HookEventKind) -> bool {
        self.is_decision_point(kind) || self.accepts_context(kind)
    }

    /// `answer` as this agent's output for an event of `kind`.
    pub fn render(self, kind: HookEventKind, answer: &Answer) -> HookOutput {
        match self {
            Agent::ClaudeCode => crate::agent::claude::output::render(kind, answer),
            Agent::Codex => crate::agent::codex::output::render(kind, answer),
            Agent::Gemini => crate::agent::gemini::output::render(kind, answer),
            Agent::OpenCode | Agent::Pi => {
                crate::agent::plugin::render(self.events(), kind, answer)
            }
            Agent::Copilot => crate::agent::copilot::output::render(kind, answer),
        }
    }

    /// The prompt this agent sends itself when hookd blocks an event of
    /// `kind` with `answer`, where that prompt fires a prompt hook of its
    /// own: Gemini answers a blocked AfterAgent (Stop) by sending the deny's
    /// reason as the next user message, which fires BeforeAgent
    /// (UserPromptSubmit). The daemon's stop chains must not take it for
    /// the user's next prompt, which ends a chain. `None` for every other
    /// agent and event: Claude Code and Codex go on without a prompt hook.
    pub fn continuation_prompt(self, kind: HookEventKind, answer: &Answer) -> Option<&str> {
        match self {
            Agent::Gemini => crate::agent::gemini::output::continuation_prompt(kind, answer),
            Agent::Copilot => crate::agent::copilot::output::continuation_prompt(kind, answer),
            Agent::ClaudeCode | Agent::Codex | Agent::OpenCode | Agent::Pi => None,
        }
    }

    /// What an `ask` becomes when nobody answered it (no client, or its
    /// timeout passed). Claude Code keeps the ask: its own permission prompt
    /// takes over. Codex cannot ask from a hook: its own flow goes on ("no
    /// opinion"), unless the hook fails closed for the event, then it is a
    /// deny. Gemini would hang on an ask: it is a deny, with the ask's reason.
    pub fn unanswered_ask(
        self,
        kind: HookEventKind,
        fail_closed: FailClosed,
        ask: Answer,
    ) -> Answer {
        match self {
            Agent::ClaudeCode => ask,
            Agent::Codex => crate::agent::codex::output::unanswered_ask(kind, fail_closed, ask),
            Agent::Gemini => crate::agent::gemini::output::unanswered_ask(ask),
            Agent::OpenCode => crate::agent::plugin::unanswered_ask(kind, fail_closed, true, ask),
            Agent::Pi => crate::agent::plugin::unanswered_ask(kind, fail_closed, false, ask),
            Agent::Copilot => crate::agent::copilot::output::unanswered_ask(ask),
        }
    }

    /// The output when nobody could decide (daemon unreachable, deadline
    /// passed): "no opinion", or a block on the events `fail_closed` covers,
    /// in the form this agent honors. For an event name this agent does not
    /// have (a hook registered for another agent, or a newer CLI) a
    /// fail-closed hook answers [`universal_deny`]: hookd cannot tell a tool
    /// call from anything else there, and that answer denies on every agent.
    pub fn fallback(self, event_name: &str, fail_closed: FailClosed, why: &str) -> HookOutput {
        self.fallback_for(self.known_kind(event_name), fail_closed, why)
    }

    /// The kind of this agent's event `event_name`; `None` for a name it
    /// does not have.
    pub fn known_kind(self, event_name: &str) -> Option<HookEventKind> {
        self.knows_event(event_name)
            .then(|| self.event_kind(event_name))
    }

    /// [`Agent::fallback`] for an event already known by its kind (`None`:
    /// an event this agent does not have).
    pub fn fallback_for(
        self,
        kind: Option<HookEventKind>,
        fail_closed: FailClosed,
        why: &str,
    ) -> HookOutput {
        let Some(kind) = kind else {
            return if fail_closed.is_on() {
                universal_deny(&fallback_reason(why))
            } else {
                HookOutput::default()
            };
        };
        let answer = crate::agent::claude::output::fallback_answer(kind, fail_closed, why);
        self.render(kind, &answer)
    }

    /// Whether a hook of this agent relays the environment variable `name`
    /// to the daemon with the event. Claude Code: its `CLAUDE*` variables
    /// and `HOOKD_RUN_ID` (see `crate::daemon`'s run copies). Gemini: its
    /// allowlist, [`gemini::HOOK_ENV`], by name (the same environment holds
    /// `GEMINI_API_KEY`). Codex adds nothing of its own to a hook's
    /// environment ([`codex::HOOK_ENV`] is empty): the session is in stdin.
    pub fn relays_env(self, name: &str) -> bool {
        match self {
            Agent::ClaudeCode => name.starts_with("CLAUDE") || name == "HOOKD_RUN_ID",
            Agent::Codex => crate::agent::codex::HOOK_ENV.contains(&name),
            Agent::Gemini => crate::agent::gemini::HOOK_ENV.contains(&name),
            Agent::OpenCode | Agent::Pi => false,
            Agent::Copilot => crate::agent::copilot::HOOK_ENV.contains(&name),
        }
    }

    /// The tool of a tool event: this agent's own name and the Claude Code
    /// name rules use. `None` when the input names no tool.
    #[cfg(feature = "frames")]
    pub fn tool_names(self, raw: &Value) -> Option<ToolNames> {
        let own = raw.get("tool_name")?.as_str()?;
        let claude = match self {
            Agent::ClaudeCode => Cow::Borrowed(own),
            Agent::Codex => crate::agent::codex::input::claude_tool_name(own, raw),
            Agent::Gemini => crate::agent::gemini::input::claude_tool_name(own, raw),
            Agent::OpenCode => crate::agent::opencode::input::claude_tool_name(own),
            Agent::Pi => Cow::Borrowed(crate::agent::pi::input::claude_tool_name(own)),
            Agent::Copilot => crate::agent::copilot::input::claude_tool_name(own, raw),
        };
        Some(ToolNames {
            agent: own.to_string(),
            claude: claude.into_owned(),
        })
    }

    /// The Claude-shaped hook inputs the rules judge for one raw input of
    /// this agent: never empty; more than one when one call touches several
    /// things (a Codex patch's files, a Gemini fetch's URLs), each judged on
    /// its own and combined by `combine`. A Claude Code input is judged as
    /// it is.
    #[cfg(feature = "frames")]
    pub fn rule_inputs(self, raw: &Value) -> Vec<Cow<'_, Value>> {
        match self {
            Agent::ClaudeCode => vec![Cow::Borrowed(raw)],
            Agent::Codex => crate::agent::codex::input::rule_inputs(raw),
            Agent::Gemini => crate::agent::gemini::input::rule_inputs(raw),
            Agent::OpenCode => crate::agent::opencode::input::rule_inputs(raw),
            Agent::Pi => crate::agent::pi::input::rule_inputs(raw),
            Agent::Copilot => crate::agent::copilot::input::rule_inputs(raw),
        }
    }
}

impl fmt::Display for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool's two names: the agent's (`run_shell_command`, `apply_patch`) and
/// Claude Code's (`Bash`, `Edit`), which the rules use. The log records both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolNames {
    /// The `tool_name` the agent sent.
    pub agent: String,
    /// The Claude Code tool it is judged as.
    pub claude: String,
}

/// The hook event name a universal deny names: a tool call's.
pub const UNIVERSAL_DENY_EVENT: &str = "PreToolUse";

/// The one tool-call answer that Claude Code, Codex CLI, Gemini CLI and
/// Copilot CLI's Claude-format hooks all honor as a deny (observed with each
/// pinned CLI; `tests/e2e_agents.rs` checks it against Codex and Gemini):
///
/// ```json
/// {"decision":"block","reason":R,"hookSpecificOutput":{"hookEventName":"PreToolUse",
///  "permissionDecision":"deny","permissionDecisionReason":R}}
/// ```
///
/// Claude Code and Codex read `hookSpecificOutput` (Codex also accepts the
/// top-level pair, and needs both reasons non-empty); Gemini reads the
/// top-level `decision` and ignores the rest. For when the agent is not
/// known; only `serde_json` and std, so the forwarder can call it.
pub fn universal_deny(reason: &str) -> HookOutput {
    let reason = if reason.trim().is_empty() {
        crate::agent::claude::output::DEFAULT_DENY_REASON
    } else {
        reason
    };
    // Written out rather than built as a map, so the bytes are exactly the
    // documented ones (serde_json's map would sort the keys).
    let reason = Value::from(reason);
    HookOutput {
        exit_code: 0,
        stdout: format!(
            "{{\"decision\":\"block\",\"reason\":{reason},\"hookSpecificOutput\":{{\"hookEventName\":\"{UNIVERSAL_DENY_EVENT}\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":{reason}}}}}\n"
        ),
        stderr: String::new(),
    }
}

/// The reason a fail-closed fallback gives; the same words as
/// [`crate::agent::claude::output::fallback_answer`].
fn fallback_reason(why: &str) -> String {
    format!("hookd could not decide ({why}); blocked because the hook is fail-closed")
}

/// The reason of a blocking answer, never empty: Codex ignores a deny whose
/// reason is empty, and the model should always be told why.
pub(crate) fn deny_reason(answer: &Answer) -> &str {
    match answer.reason.as_deref() {
        Some(r) if !r.trim().is_empty() => r,
        _ => crate::agent::claude::output::DEFAULT_DENY_REASON,
    }
}

#[cfg(feature = "frames")]
/// A path as the model wrote it, made absolute against the session's `cwd`
/// (lexically: `.` and `..` folded, symlinks not followed), so path rules
/// see what they see for Claude Code, whose tools take absolute paths.
/// `~` and `~/…` are kept: the rule engine expands them to the home
/// directory, the reading that matches the most rules. Without an absolute
/// `cwd` a relative path is kept as written.
pub(crate) fn absolute_path(cwd: Option<&str>, path: &str) -> String {
    if path == "~" || path.starts_with("~/") {
        return path.to_string();
    }
    let joined;
    let abs = if path.starts_with('/') {
        path
    } else {
        match cwd.filter(|c| c.starts_with('/')) {
            Some(cwd) => {
                joined = format!("{cwd}/{path}");
                &joined
            }
            None => return path.to_string(),
        }
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in abs.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    if parts.is_empty() {
        return "/".to_string();
    }
    parts
        .iter()
        .fold(String::with_capacity(abs.len()), |mut out, p| {
            out.push('/');
            out.push_str(p);
            out
        })
}

#[cfg(feature = "frames")]
/// A copy of the hook input `raw` under Claude Code's names: its
/// `hook_event_name` is `event`, and, when `tool` is given, its `tool_name`
/// and `tool_input` are replaced. Every other field is kept, so `when`
/// conditions on any field still apply.
pub(crate) fn reshape(raw: &Value, event: &str, tool: Option<(&str, Value)>) -> Value {
    let mut object = match raw {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    object.insert("hook_event_name".into(), event.into());
    if let Some((name, input)) = tool {
        object.insert("tool_name".into(), name.into());
        object.insert("tool_input".into(), input);
    }
    Value::Object(object)
}

/// The `hook_event_name` of a hook input, checking that `input` is one
/// JSON value without building it: serde skips the rest without a depth
/// limit and without checking escapes for lone surrogates (the daemon reads
/// those with [`crate::json::read_input`]). The forwarder's one look at its stdin, to
/// pick its fallback; its errors read as serde's derive would write them.
pub fn probe_event_name(input: &[u8]) -> Result<Option<String>, serde_json::Error> {
    use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
    use serde_json::value::RawValue;

    struct Probe;

    impl<'de> Visitor<'de> for Probe {
        type Value = Option<&'de RawValue>;

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("struct Probe")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            match seq.next_element::<Option<&'de RawValue>>()? {
                Some(name) => Ok(name),
                None => Err(de::Error::invalid_length(0, &"struct Probe with 1 element")),
            }
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut name: Option<Option<&'de RawValue>> = None;
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "hook_event_name" {
                    if name.is_some() {
                        return Err(de::Error::duplicate_field("hook_event_name"));
                    }
                    name = Some(map.next_value()?);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(name.flatten())
        }
    }

    let mut de = serde_json::Deserializer::from_slice(input);
    let raw = (&mut de).deserialize_struct("Probe", &["hook_event_name"], Probe)?;
    de.end()?;
    Ok(raw.and_then(|raw| crate::json::parse_lenient::<String>(raw.get().as_bytes()).ok()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn agent_names_round_trip() {
        for agent in Agent::ALL {
            assert_eq!(Agent::from_name(agent.as_str()), Some(agent));
        }
        assert_eq!(Agent::from_name("claude"), None);
        assert_eq!(Agent::from_name("Codex"), None);
    }

    #[test]
    fn universal_deny_is_the_documented_json() {
        let out = universal_deny("no");
        assert_eq!(out.exit_code, 0);
        assert_eq!(out.stderr, "");
        assert_eq!(
            out.stdout,
            "{\"decision\":\"block\",\"reason\":\"no\",\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"no\"}}\n"
        );
        let out: Value = serde_json::from_str(&universal_deny(" ").stdout).unwrap();
        assert_eq!(
            out["reason"],
            crate::agent::claude::output::DEFAULT_DENY_REASON
        );
    }

    #[test]
    fn an_event_the_agent_does_not_have_fails_closed_with_the_universal_deny() {
        for agent in Agent::ALL {
            let out = agent.fallback("SomethingNew", FailClosed::Tools, "no_socket");
            let v: Value = serde_json::from_str(&out.stdout).unwrap();
            assert_eq!(v["decision"], "block", "{agent}");
            assert!(v["reason"].as_str().unwrap().contains("no_socket"));
            assert_eq!(
                agent.fallback("SomethingNew", FailClosed::Off, "no_socket"),
                HookOutput::default()
            );
        }
        // Gemini's tool event is not Claude Code's: a forwarder that was not
        // told its agent still blocks it.
        let out = Agent::ClaudeCode.fallback("BeforeTool", FailClosed::Tools, "timeout");
        assert_eq!(out, universal_deny(&fallback_reason("timeout")));
    }

    #[test]
    fn claude_code_keeps_its_own_decision_points_and_fallback_words() {
        for kind in HookEventKind::ALL.iter().copied() {
            assert_eq!(
                Agent::ClaudeCode.is_decision_point(kind),
                kind.is_decision_point(),
                "{kind}"
            );
        }
        let claude = crate::agent::claude::output::fallback_answer(
            HookEventKind::PreToolUse,
            FailClosed::Tools,
            "no_socket",
        );
        assert_eq!(claude.reason, Some(fallback_reason("no_socket")));
    }

    #[test]
    fn paths_are_made_absolute_against_cwd() {
        let cwd = Some("/p/proj");
        assert_eq!(absolute_path(cwd, "a.txt"), "/p/proj/a.txt");
        assert_eq!(absolute_path(cwd, "./src/../b"), "/p/proj/b");
        assert_eq!(absolute_path(cwd, "../../../x"), "/x");
        assert_eq!(absolute_path(cwd, "/etc//passwd"), "/etc/passwd");
        assert_eq!(absolute_path(cwd, "~/.ssh/id"), "~/.ssh/id");
        assert_eq!(absolute_path(cwd, "."), "/p/proj");
        assert_eq!(absolute_path(None, "a.txt"), "a.txt");
        assert_eq!(absolute_path(Some("rel"), "a.txt"), "a.txt");
        assert_eq!(absolute_path(cwd, "/"), "/");
    }

    #[test]
    fn reshape_renames_and_keeps_the_rest() {
        let raw = json!({"hook_event_name": "BeforeTool", "tool_name": "read_file",
                         "tool_input": {"file_path": "a"}, "session_id": "s"});
        let v = reshape(
            &raw,
            "PreToolUse",
            Some(("Read", json!({"file_path": "/p/a"}))),
        );
        assert_eq!(
            v,
            json!({"hook_event_name": "PreToolUse", "tool_name": "Read",
                   "tool_input": {"file_path": "/p/a"}, "session_id": "s"})
        );
    }
}
