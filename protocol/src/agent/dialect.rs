//! What every dialect is made of, so that an agent costs a table and what is
//! truly particular to it:
//!
//! - an **events table** ([`EventRow`]s): the agent's event name ↔ hookd's
//!   [`HookEventKind`], the verdicts the agent honors there (which makes it
//!   a decision point or not), whether it takes context, whether hookd
//!   registers it by default, the agent's own timeout and any clamp on it
//!   (from which `hookd install` derives its timeouts);
//! - a **tool-name map** ([`ToolMap`]): the agent's tool names → Claude
//!   Code's, for the tools that need nothing but a new name;
//! - the **output envelope** ([`Envelope`]): the `hookSpecificOutput`-style
//!   JSON that Claude Code, Codex and Gemini read on stdout, built once; a
//!   dialect's `render` only says which fields an answer sets.
//!
//! Being a decision point, guarded or a tool gate is a property of the
//! hookd kind ([`HookEventKind::is_guarded`], …); an event is a decision
//! point *for an agent* when the kind is one and the agent honors some
//! verdict there ([`EventRow::is_decision_point`]).
//!
//! Pure data and pure functions; no dialect's JSON is known here.

use serde_json::{Map, Value};

use crate::agent::claude::output::HookOutput;
use crate::agent::claude::HookEventKind;
use crate::decision::{Answer, Verdict};

/// Verdict sets an events table names, each with "no opinion" (always
/// honored: it is the empty output).
pub mod honors {
    use crate::decision::Verdict::{self, *};

    /// Nothing but "no opinion": an observe-only event.
    pub const NOTHING: &[Verdict] = &[NoOpinion];
    /// A block (deny, "keep working", the reason replacing an output).
    pub const DENY: &[Verdict] = &[Deny, NoOpinion];
    /// A grant or a refusal (a permission request, an elicitation).
    pub const ALLOW_DENY: &[Verdict] = &[Allow, Deny, NoOpinion];
}

/// One event an agent fires: a row of its dialect's events table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventRow {
    /// The agent's `hook_event_name`.
    pub name: &'static str,
    /// The hookd kind it is judged and logged as; `Unknown` for an event
    /// Claude Code has no equivalent of (observe-only, its name kept).
    pub kind: HookEventKind,
    /// The verdicts the agent honors for it, "no opinion" included; any
    /// other verdict renders as no opinion (unless the dialect says
    /// otherwise, as Gemini does for `ask`).
    pub verdicts: &'static [Verdict],
    /// Whether the agent takes `additionalContext` from its hook.
    pub accepts_context: bool,
    /// Whether hookd registers it when `--events` is not given.
    pub registered_by_default: bool,
    /// The agent's timeout for a hook of this event when its settings give
    /// none, in milliseconds.
    pub default_timeout_ms: u64,
    /// The most the agent lets a hook of this event run, whatever its
    /// settings say, in seconds; `None` where the settings' timeout holds.
    pub max_timeout_s: Option<u32>,
}

impl EventRow {
    /// An observe-only event, registered by default, with no context and
    /// `default_timeout_ms`; the builders below say what else it has.
    pub const fn observed(
        name: &'static str,
        kind: HookEventKind,
        default_timeout_ms: u64,
    ) -> Self {
        EventRow {
            name,
            kind,
            verdicts: honors::NOTHING,
            accepts_context: false,
            registered_by_default: true,
            default_timeout_ms,
            max_timeout_s: None,
        }
    }

    /// The row, honoring `verdicts`.
    pub const fn honors(self, verdicts: &'static [Verdict]) -> Self {
        EventRow { verdicts, ..self }
    }

    /// The row, taking context.
    pub const fn context(self) -> Self {
        EventRow {
            accepts_context: true,
            ..self
        }
    }

    /// The row, not registered by default.
    pub const fn unregistered(self) -> Self {
        EventRow {
            registered_by_default: false,
            ..self
        }
    }

    /// The row, its hooks clamped to `max_s` seconds by the agent.
    pub const fn clamped(self, max_s: u32) -> Self {
        EventRow {
            max_timeout_s: Some(max_s),
            ..self
        }
    }

    /// Whether the event is a decision point for this agent: its kind is
    /// one (Claude Code honors some verdict for it) and this agent honors
    /// some verdict there too.
    pub fn is_decision_point(&self) -> bool {
        self.kind.is_decision_point() && self.verdicts.iter().any(|v| *v != Verdict::NoOpinion)
    }
}

/// A dialect's events table.
pub type EventTable = &'static [EventRow];

/// The row of the event named `name`, if the agent has one.
pub fn event(table: EventTable, name: &str) -> Option<&'static EventRow> {
    table.iter().find(|e| e.name == name)
}

/// The hookd kind of the event named `name` (`Unknown` for a name the
/// agent does not have, and for its events no kind maps).
pub fn event_kind(table: EventTable, name: &str) -> HookEventKind {
    event(table, name).map_or(HookEventKind::Unknown, |e| e.kind)
}

/// A raw input's event as the rules name it: the kind its
/// `hook_event_name` maps onto in `table`, and that kind's name (an event
/// the table does not know keeps the agent's own name, so only `event =
/// "*"` rules match it).
pub fn rules_event(table: EventTable, raw: &Value) -> (HookEventKind, &str) {
    let name = raw
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match event_kind(table, name) {
        HookEventKind::Unknown => (HookEventKind::Unknown, name),
        kind => (kind, kind.as_str()),
    }
}

/// The row of the agent's event of `kind`; `None` for `Unknown` and for a
/// kind no event of the agent maps onto.
pub fn row_of(table: EventTable, kind: HookEventKind) -> Option<&'static EventRow> {
    if kind == HookEventKind::Unknown {
        return None;
    }
    table.iter().find(|e| e.kind == kind)
}

/// The agent's name for its event of `kind`.
pub fn name_of(table: EventTable, kind: HookEventKind) -> Option<&'static str> {
    row_of(table, kind).map(|e| e.name)
}

/// The verdicts the agent honors for an event of `kind` (no opinion only,
/// for an event it does not have).
pub fn supported_verdicts(table: EventTable, kind: HookEventKind) -> &'static [Verdict] {
    row_of(table, kind).map_or(honors::NOTHING, |e| e.verdicts)
}

/// Whether the agent takes context from a hook of `kind`.
pub fn accepts_context(table: EventTable, kind: HookEventKind) -> bool {
    row_of(table, kind).is_some_and(|e| e.accepts_context)
}

/// `verdict` if the agent honors it (it is in `supported`), else no
/// opinion: what a render writes.
pub fn honored(supported: &[Verdict], verdict: Verdict) -> Verdict {
    if supported.contains(&verdict) {
        verdict
    } else {
        Verdict::NoOpinion
    }
}

/// A dialect's tool-name map: `(agent's tool, Claude Code's tool)`, for the
/// tools whose input needs nothing but the new name to be judged.
pub type ToolMap = &'static [(&'static str, &'static str)];

/// Claude Code's name for the agent's tool `tool`, if `map` renames it.
pub fn mapped_tool(map: ToolMap, tool: &str) -> Option<&'static str> {
    map.iter().find(|(own, _)| *own == tool).map(|(_, c)| *c)
}

/// The JSON object an agent reads from a hook's stdout: top-level fields
/// (`decision`, `reason`) and the event's own, under `hookSpecificOutput`,
/// which always echoes the event's name in `hookEventName` (Claude Code
/// and Codex throw the output away otherwise). Each dialect sets the
/// fields its agent honors; [`Envelope::finish`] writes them.
#[derive(Debug, Default)]
pub struct Envelope {
    top: Map<String, Value>,
    specific: Map<String, Value>,
}

impl Envelope {
    /// A top-level field (`decision`, `reason`).
    pub fn top(&mut self, key: &str, value: impl Into<Value>) {
        self.top.insert(key.into(), value.into());
    }

    /// A top-level block: `decision` (`block` or `deny`, as the agent
    /// spells it) and its `reason`.
    pub fn block(&mut self, decision: &str, reason: &str) {
        self.top("decision", decision);
        self.top("reason", reason);
    }

    /// A field of `hookSpecificOutput`.
    pub fn specific(&mut self, key: &str, value: impl Into<Value>) {
        self.specific.insert(key.into(), value.into());
    }

    /// `hookSpecificOutput.decision`, a permission request's answer: its
    /// `behavior` (`allow` or `deny`) and, where given, one more field
    /// (`updatedInput` with an allow, `message` with a deny).
    pub fn permission(&mut self, behavior: &str, with: Option<(&str, Value)>) {
        let mut decision = Map::new();
        decision.insert("behavior".into(), behavior.into());
        if let Some((key, value)) = with {
            decision.insert(key.into(), value);
        }
        self.specific("decision", decision);
    }

    /// `hookSpecificOutput.additionalContext`: the answer's context, when
    /// it has one and the event takes it (`accepts`).
    pub fn context(&mut self, accepts: bool, answer: &Answer) {
        if let Some(context) = answer.additional_context.as_deref() {
            if accepts {
                self.specific("additionalContext", context);
            }
        }
    }

    /// The output: no opinion (exit 0, nothing written) when no field is
    /// set, else the object on one line, `hookSpecificOutput` naming
    /// `event` when it has a field.
    pub fn finish(mut self, event: &str) -> HookOutput {
        if !self.specific.is_empty() {
            self.specific.insert("hookEventName".into(), event.into());
            self.top
                .insert("hookSpecificOutput".into(), self.specific.into());
        }
        if self.top.is_empty() {
            return HookOutput::default();
        }
        HookOutput {
            exit_code: 0,
            stdout: format!("{}\n", Value::Object(self.top)),
            stderr: String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_envelope_is_no_opinion_and_a_specific_field_names_the_event() {
        assert_eq!(Envelope::default().finish("Stop"), HookOutput::default());
        let mut envelope = Envelope::default();
        envelope.block("block", "r");
        envelope.context(true, &Answer::no_opinion());
        assert_eq!(
            envelope.finish("Stop").stdout,
            "{\"decision\":\"block\",\"reason\":\"r\"}\n"
        );
        let mut envelope = Envelope::default();
        envelope.context(
            true,
            &Answer {
                additional_context: Some("c".into()),
                ..Answer::no_opinion()
            },
        );
        assert_eq!(
            envelope.finish("AfterTool").stdout,
            "{\"hookSpecificOutput\":{\"additionalContext\":\"c\",\"hookEventName\":\"AfterTool\"}}\n"
        );
    }

    #[test]
    fn every_table_maps_each_kind_once_and_honors_no_opinion() {
        for (agent, table) in [
            ("claude-code", crate::agent::claude::EVENTS),
            ("codex", crate::agent::codex::EVENTS),
            ("gemini", crate::agent::gemini::EVENTS),
            ("copilot", crate::agent::copilot::EVENTS),
        ] {
            for e in table {
                assert!(
                    e.verdicts.contains(&Verdict::NoOpinion),
                    "{agent} {}",
                    e.name
                );
                assert_eq!(event(table, e.name), Some(e), "{agent}: {} twice", e.name);
                if e.kind != HookEventKind::Unknown {
                    assert_eq!(name_of(table, e.kind), Some(e.name), "{agent} {}", e.kind);
                } else {
                    assert_eq!(e.verdicts, honors::NOTHING, "{agent} {}", e.name);
                }
            }
        }
    }
}
