//! The event log's lines: one [`LogRecord`] per line, the one type every
//! reader uses (`hookd tail`, `replay`, `doctor`, `rules explain` on a log
//! line, the tests).
//!
//! The daemon writes through borrowed, serialize-only views ([`EventView`],
//! [`DecisionView`]; the run records are their frames, [`RunStart`],
//! [`SdkMessage`], [`RunDone`]) so that writing a line copies nothing; the
//! round-trip tests below prove that what they write is what [`LogRecord`]
//! reads. The `event` and `decision` records are also what the pushed
//! `event` / `decision` frames carry.
//!
//! Readers are forward compatible: a newer daemon's log read by an older
//! reader loses nothing it knows. Unknown fields are ignored, a line of an
//! unknown `type` reads as [`LogRecord::Unknown`], an unknown decision
//! source as [`Source::Unknown`] and a harness is kept as written.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::chain::{ChainStart, LogRepaired};
use super::coverage::UnjudgedToolCall;
use super::{RunDone, RunStart, SdkMessage};
pub use crate::decision::{DecidingLayer, MatchedRule};
use crate::decision::{Decision, Remember, Revision, Source};

/// One line of the event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum LogRecord {
    /// A hook invocation was received.
    Event(LoggedEvent),
    /// An event was decided.
    Decision(LoggedDecision),
    /// An agent-SDK run started.
    RunStart(RunStart),
    /// One SDK message of a run.
    SdkMessage(SdkMessage),
    /// A run ended.
    RunDone(RunDone),
    /// The first line of a rotated-to file: where its hash chain starts
    /// (see [`super::chain`]).
    ChainStart(ChainStart),
    /// A torn last line was removed (see [`super::chain`]).
    LogRepaired(LogRepaired),
    /// A tool call ran without its pre-tool hook judged (see
    /// [`crate::coverage`]).
    UnjudgedToolCall(UnjudgedToolCall),
    /// The narrator's line about a session (see [`crate::narration`]).
    Narration(crate::narration::Narration),
    /// A line of a `type` this build does not know (a newer daemon's):
    /// readers skip it.
    #[serde(other)]
    Unknown,
}

impl LogRecord {
    /// Reads one line (without its `\n`).
    ///
    /// The same result as the derived `Deserialize`, without its cost: an
    /// internally tagged enum buffers the whole line into an intermediate
    /// tree first, and event lines carry hook inputs of megabytes. So the
    /// `type` is read first (the rest is skipped without allocating), then
    /// the line is deserialized once, straight into its record.
    pub fn parse(line: &[u8]) -> serde_json::Result<LogRecord> {
        Ok(match LogKind::of(line)? {
            LogKind::Event => LogRecord::Event(serde_json::from_slice(line)?),
            LogKind::Decision => LogRecord::Decision(serde_json::from_slice(line)?),
            LogKind::RunStart => LogRecord::RunStart(serde_json::from_slice(line)?),
            LogKind::SdkMessage => LogRecord::SdkMessage(serde_json::from_slice(line)?),
            LogKind::RunDone => LogRecord::RunDone(serde_json::from_slice(line)?),
            LogKind::ChainStart => LogRecord::ChainStart(serde_json::from_slice(line)?),
            LogKind::LogRepaired => LogRecord::LogRepaired(serde_json::from_slice(line)?),
            LogKind::UnjudgedToolCall => LogRecord::UnjudgedToolCall(serde_json::from_slice(line)?),
            LogKind::Narration => LogRecord::Narration(serde_json::from_slice(line)?),
            LogKind::Unknown => LogRecord::Unknown,
        })
    }
}

/// A log line's `type` alone, the rest of the line skipped without
/// allocating: what [`LogRecord::parse`] reads first, and what a reader
/// that keeps the line as a JSON tree (the OTLP mapper, whose record body
/// is the whole line) dispatches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LogKind {
    /// An `event` line.
    Event,
    /// A `decision` line.
    Decision,
    /// A `run_start` line.
    RunStart,
    /// An `sdk_message` line.
    SdkMessage,
    /// A `run_done` line.
    RunDone,
    /// A `chain_start` line.
    ChainStart,
    /// A `log_repaired` line.
    LogRepaired,
    /// An `unjudged_tool_call` line.
    UnjudgedToolCall,
    /// A `narration` line.
    Narration,
    /// A `type` this build does not know.
    #[serde(other)]
    Unknown,
}

impl LogKind {
    /// The `type` of one line (without its `\n`).
    pub fn of(line: &[u8]) -> serde_json::Result<LogKind> {
        #[derive(Deserialize)]
        struct Tag {
            #[serde(rename = "type")]
            kind: LogKind,
        }
        Ok(serde_json::from_slice::<Tag>(line)?.kind)
    }
}

/// An `event` line, as read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedEvent {
    /// The event id (uuid v7: ids sort by time).
    pub id: Uuid,
    /// RFC 3339, UTC.
    pub received_at: String,
    /// Where it came from (`claude-code`, `agent-sdk`, …), as written: a
    /// harness this build does not know is still readable.
    pub harness: String,
    /// The agent-SDK run, for events of one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Where the judged original of this copy went (`agent-sdk`,
    /// `canUseTool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy_of: Option<String>,
    /// The session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The session's cwd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// `CLAUDE_PROJECT_DIR`, when the hook had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_dir: Option<String>,
    /// `hook_event_name` verbatim (`unknown` when there was none).
    pub kind: String,
    /// The tool, for tool events (the agent's own name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The hookd kind the agent's event maps onto, which rules name
    /// (`PreToolUse` for Gemini's `BeforeTool`), when it differs from `kind`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapped_kind: Option<String>,
    /// The Claude Code tool rules judge the agent's tool as (`Bash` for
    /// Gemini's `run_shell_command`), when it differs from `tool`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mapped_tool: Option<String>,
    /// The hook input (redacted in the log).
    pub input: Value,
    /// Why the input could not be read as JSON (`input` is then its text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_error: Option<String>,
}

impl LoggedEvent {
    /// The project root the event was judged in: `project_dir`, else the
    /// session's cwd.
    pub fn project_dir(&self) -> Option<&str> {
        self.project_dir.as_deref().or(self.cwd.as_deref())
    }
}

/// A `decision` line, as read back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggedDecision {
    /// The decision.
    #[serde(flatten)]
    pub decision: Decision,
    /// Permissive mode logged this verdict but answered "no opinion".
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub permissive: bool,
}

impl LoggedDecision {
    /// Never judged live (a copy of a run's hook, a doctor's probe):
    /// nothing a rule could change.
    pub fn was_judged(&self) -> bool {
        !matches!(self.decision.source, Source::Copy | Source::Probe)
    }
}

/// How the daemon writes an event line (and the record of a pushed `event`
/// frame): a view of an event (`hookd_core::event::Event::view`), nothing
/// copied. Fields are those of the line, in its order.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename = "event")]
pub struct EventView<'a> {
    pub id: Uuid,
    pub received_at: String,
    pub harness: super::Harness,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_of: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project_dir: Option<Cow<'a, str>>,
    pub kind: Cow<'a, str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapped_kind: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapped_tool: Option<Cow<'a, str>>,
    pub input: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_error: Option<Cow<'a, str>>,
}

impl<'a> EventView<'a> {
    /// This view with `redact` applied to every text the hook's sender
    /// chose besides its input (session id, `cwd`, project directory,
    /// event and tool names, the input's error): the log's view, whose
    /// input is redacted too. A secret in a `cwd` is as much a secret as
    /// one in a command.
    pub fn redact_text(self, redact: impl Fn(&'a str) -> Cow<'a, str>) -> EventView<'a> {
        let text = |text: Cow<'a, str>| match text {
            Cow::Borrowed(text) => redact(text),
            owned => owned,
        };
        EventView {
            session_id: self.session_id.map(text),
            cwd: self.cwd.map(text),
            project_dir: self.project_dir.map(text),
            kind: text(self.kind),
            tool: self.tool.map(text),
            mapped_tool: self.mapped_tool.map(text),
            input_error: self.input_error.map(text),
            ..self
        }
    }

    /// Appends this view's line (without its newline) to `out`: byte for
    /// byte what serde_json writes for it (`the_event_line_written_by_hand_is_serde_s`
    /// below), at a fraction of the cost, the daemon's every hook
    /// (see [`crate::json_write`]). Members in the struct's order, the
    /// absent ones left out as its `skip_serializing_if`s leave them.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        use crate::json_write::{write_str, write_value};
        let member = |out: &mut Vec<u8>, name: &[u8], text: Option<&str>| {
            if let Some(text) = text {
                out.extend_from_slice(name);
                write_str(out, text);
            }
        };
        out.extend_from_slice(br#"{"type":"event","id":""#);
        out.extend_from_slice(
            self.id
                .hyphenated()
                .encode_lower(&mut Uuid::encode_buffer())
                .as_bytes(),
        );
        out.push(b'"');
        member(out, br#","received_at":"#, Some(&self.received_at));
        member(out, br#","harness":"#, Some(self.harness.as_str()));
        member(out, br#","run_id":"#, self.run_id);
        member(out, br#","copy_of":"#, self.copy_of);
        member(out, br#","session_id":"#, self.session_id.as_deref());
        member(out, br#","cwd":"#, self.cwd.as_deref());
        member(out, br#","project_dir":"#, self.project_dir.as_deref());
        member(out, br#","kind":"#, Some(&self.kind));
        member(out, br#","tool":"#, self.tool.as_deref());
        member(out, br#","mapped_kind":"#, self.mapped_kind);
        member(out, br#","mapped_tool":"#, self.mapped_tool.as_deref());
        out.extend_from_slice(br#","input":"#);
        write_value(out, self.input);
        member(out, br#","input_error":"#, self.input_error.as_deref());
        out.push(b'}');
    }

    /// [`EventView::write_json`], and what it appended as text: it is
    /// UTF-8 by construction, and a reader that needs a `str` (the
    /// redaction's scan) need not check it again.
    pub fn write_json_str<'o>(&self, out: &'o mut Vec<u8>) -> &'o str {
        let start = out.len();
        self.write_json(out);
        let written = &out[start..];
        debug_assert!(std::str::from_utf8(written).is_ok());
        // SAFETY: every byte from `start` was appended by `write_json` just
        // now: ASCII punctuation and member names, the ASCII escapes and
        // numbers of `json_write`, and whole `str`s (an id, a time, names,
        // the input's strings and keys) between them, so it is UTF-8.
        unsafe { std::str::from_utf8_unchecked(written) }
    }
}

/// How the daemon writes a decision line (and the record of a pushed
/// `decision` frame).
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename = "decision")]
pub struct DecisionView<'a> {
    #[serde(flatten)]
    decision: &'a Decision,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    permissive: bool,
}

impl<'a> DecisionView<'a> {
    /// The record of `decision`; `enforced` is false when permissive mode
    /// kept the verdict from the agent.
    pub fn of(decision: &'a Decision, enforced: bool) -> DecisionView<'a> {
        DecisionView {
            decision,
            permissive: !enforced,
        }
    }

    /// Appends this record as JSON: byte for byte what serde_json writes
    /// of it (its `Serialize`, with the answer flattened in), written by
    /// hand as [`EventView::write_json`] is, for the daemon's every
    /// decision. The members that are rare, or trees of their own (the
    /// rules, the facts, the judgements, the signals, a rewritten input),
    /// are still serde_json's.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        use crate::json_write::{write_str, write_value};
        fn serde<T: Serialize + ?Sized>(out: &mut Vec<u8>, name: &[u8], value: &T) {
            out.extend_from_slice(name);
            serde_json::to_writer(&mut *out, value).expect("records serialize");
        }
        fn number(out: &mut Vec<u8>, name: &[u8], n: u64) {
            out.extend_from_slice(name);
            serde_json::to_writer(&mut *out, &n).expect("a number serializes");
        }
        let member = |out: &mut Vec<u8>, name: &[u8], text: Option<&str>| {
            if let Some(text) = text {
                out.extend_from_slice(name);
                write_str(out, text);
            }
        };
        let uuid = |out: &mut Vec<u8>, name: &[u8], id: &Uuid| {
            out.extend_from_slice(name);
            out.push(b'"');
            out.extend_from_slice(
                id.hyphenated()
                    .encode_lower(&mut Uuid::encode_buffer())
                    .as_bytes(),
            );
            out.push(b'"');
        };
        let d = self.decision;
        out.extend_from_slice(br#"{"type":"decision""#);
        uuid(out, br#","decision_id":"#, &d.decision_id);
        uuid(out, br#","event_id":"#, &d.event_id);
        member(out, br#","run_id":"#, d.run_id.as_deref());
        member(out, br#","verdict":"#, Some(d.answer.verdict.as_str()));
        member(out, br#","reason":"#, d.answer.reason.as_deref());
        if let Some(input) = &d.answer.updated_input {
            out.extend_from_slice(br#","updated_input":"#);
            write_value(out, input);
        }
        member(
            out,
            br#","additional_context":"#,
            d.answer.additional_context.as_deref(),
        );
        out.extend_from_slice(br#","source":"#);
        match &d.source {
            Source::Client(_) | Source::Grant(_) => write_str(out, &d.source.to_string()),
            Source::Unknown(name) => write_str(out, name),
            Source::Rule => write_str(out, "rule"),
            Source::Timeout => write_str(out, "timeout"),
            Source::Fallback => write_str(out, "fallback"),
            Source::Default => write_str(out, "default"),
            Source::Copy => write_str(out, "copy"),
            Source::Probe => write_str(out, "probe"),
            Source::Terminal => write_str(out, "terminal"),
        }
        out.extend_from_slice(br#","rule_ids":["#);
        for (i, id) in d.rule_ids.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_str(out, id);
        }
        out.push(b']');
        member(out, br#","grant_rule":"#, d.grant_rule.as_deref());
        member(
            out,
            br#","remembered":"#,
            d.remembered.map(Remember::as_str),
        );
        number(out, br#","generation":"#, d.generation);
        number(out, br#","latency_us":"#, d.latency_us);
        member(
            out,
            br#","layer":"#,
            d.layer.as_ref().map(DecidingLayer::as_str),
        );
        if !d.rules.is_empty() {
            serde(out, br#","rules":"#, &d.rules);
        }
        member(
            out,
            br#","revision":"#,
            d.revision.as_ref().map(Revision::as_str),
        );
        member(
            out,
            br#","project_revision":"#,
            d.project_revision.as_ref().map(Revision::as_str),
        );
        if let Some(facts) = &d.facts {
            serde(out, br#","facts":"#, facts);
        }
        if !d.judgements.is_empty() {
            serde(out, br#","judgements":"#, &d.judgements);
        }
        if !d.signals.is_empty() {
            serde(out, br#","signals":"#, &d.signals);
        }
        if self.permissive {
            out.extend_from_slice(br#","permissive":true"#);
        }
        out.push(b'}');
    }
}

#[cfg(test)]
mod tests {
    use crate::decision::Action;

    use serde_json::json;

    use super::*;
    use crate::decision::{Answer, Verdict};

    /// Writes `record` as the daemon does, reads it back with both readers
    /// and checks nothing was lost or changed on the way.
    fn read_back(written: &[u8]) -> LogRecord {
        let parsed = LogRecord::parse(written).unwrap_or_else(|e| {
            panic!("{e}: {}", String::from_utf8_lossy(written));
        });
        let derived: LogRecord = serde_json::from_slice(written).unwrap();
        assert_eq!(parsed, derived, "parse and the derived Deserialize differ");
        assert_eq!(
            serde_json::to_value(&parsed).unwrap(),
            serde_json::from_slice::<Value>(written).unwrap(),
            "the reader lost or changed a field: {}",
            String::from_utf8_lossy(written)
        );
        parsed
    }

    /// The event line `write_json` writes is serde's for the same view,
    /// byte for byte, with every member present and with none of the
    /// optional ones, for every harness; and the reader reads it.
    #[test]
    fn the_event_line_written_by_hand_is_serde_s() {
        let input = json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "echo \"a\tb\" \\ \u{1} ünï"}, "n": [1, -2, 0.5, null, true]});
        let full = EventView {
            id: Uuid::now_v7(),
            received_at: "2026-11-27T09:00:00.000001Z".into(),
            harness: crate::Harness::Gemini,
            run_id: Some("run \"1\""),
            copy_of: Some("orig"),
            session_id: Some(Cow::Borrowed("s\n1")),
            cwd: Some(Cow::Owned("/home/dev/[REDACTED]".into())),
            project_dir: Some(Cow::Borrowed("/p")),
            kind: Cow::Borrowed("BeforeTool"),
            tool: Some(Cow::Borrowed("run_shell_command")),
            mapped_kind: Some("PreToolUse"),
            mapped_tool: Some(Cow::Borrowed("Bash")),
            input: &input,
            input_error: Some(Cow::Borrowed("bad \u{7f}")),
        };
        let bare = EventView {
            run_id: None,
            copy_of: None,
            session_id: None,
            cwd: None,
            project_dir: None,
            tool: None,
            mapped_kind: None,
            mapped_tool: None,
            input_error: None,
            input: &Value::Null,
            ..full.clone()
        };
        let harnesses = [
            crate::Harness::ClaudeCode,
            crate::Harness::AgentSdk,
            crate::Harness::Codex,
            crate::Harness::Gemini,
            crate::Harness::OpenCode,
            crate::Harness::Pi,
            crate::Harness::Copilot,
        ];
        for view in [full, bare] {
            for harness in harnesses {
                let view = EventView {
                    harness,
                    ..view.clone()
                };
                let mut line = Vec::new();
                view.write_json(&mut line);
                assert_eq!(
                    String::from_utf8(line.clone()).unwrap(),
                    serde_json::to_string(&view).unwrap()
                );
                assert!(matches!(read_back(&line), LogRecord::Event(_)));
                let mut after = b"before ".to_vec();
                let text = view.write_json_str(&mut after).to_string();
                assert_eq!(text.as_bytes(), line);
                assert_eq!(after, [&b"before "[..], &line].concat());
            }
        }
    }

    /// A decision with every optional member absent: no opinion, by
    /// default, under generation 1.
    fn bare_decision() -> Decision {
        Decision {
            decision_id: uuid::Uuid::now_v7(),
            event_id: uuid::Uuid::now_v7(),
            run_id: None,
            answer: Answer::no_opinion(),
            source: Source::Default,
            rule_ids: vec![],
            grant_rule: None,
            remembered: None,
            generation: 1,
            latency_us: 0,
            layer: None,
            rules: vec![],
            revision: None,
            project_revision: None,
            facts: None,
            judgements: vec![],
            signals: Default::default(),
        }
    }

    #[test]
    fn the_reader_reads_every_decision_line_the_writer_writes() {
        let full = Decision {
            decision_id: uuid::Uuid::now_v7(),
            event_id: uuid::Uuid::now_v7(),
            run_id: Some("run-1".into()),
            answer: Answer {
                verdict: Verdict::Deny,
                reason: Some("no".into()),
                updated_input: Some(json!({"command": "true"})),
                additional_context: Some("ctx".into()),
            },
            source: Source::Rule,
            rule_ids: vec!["a".into(), "b".into()],
            grant_rule: Some("Bash(npm test:*)".into()),
            remembered: Some(crate::Remember::Session),
            generation: 3,
            latency_us: 168,
            layer: Some(DecidingLayer::Project),
            rules: vec![MatchedRule {
                id: "project:a".into(),
                layer: DecidingLayer::Project,
                action: Action::Deny,
                file: "/p/.claude/hookd.toml".into(),
                line: 2,
                reason: Some("no".into()),
            }],
            revision: Some(crate::decision::Revision::from_written("sha256:00ff")),
            project_revision: Some(crate::decision::Revision::from_written("sha256:ff00")),
            facts: Some(crate::facts::SessionFacts {
                calls: 3,
                counts: [("rm-burst".to_string(), 5)].into_iter().collect(),
                taint: vec![crate::facts::Taint {
                    tool: "WebFetch".into(),
                    detail: Some("https://example.com/".into()),
                    at_ms: 7,
                }],
                now_ms: 9,
                run_cost_usd: None,
            }),
            judgements: vec![
                json!({"rule": "j", "verdict": "deny", "reason": "r", "cached": true}),
            ],
            signals: [("branch".to_string(), "main".to_string())].into(),
        };
        let bare = Decision {
            source: Source::Client("phone".into()),
            ..bare_decision()
        };
        for (decision, enforced) in [(&full, false), (&full, true), (&bare, true)] {
            let line = serde_json::to_vec(&DecisionView::of(decision, enforced)).unwrap();
            let LogRecord::Decision(logged) = read_back(&line) else {
                panic!("not a decision: {}", String::from_utf8_lossy(&line));
            };
            assert_eq!(&logged.decision, decision);
            assert_eq!(logged.permissive, !enforced);
        }
    }

    /// The decision line `write_json` writes is serde's for the same view,
    /// byte for byte: every source, verdict, layer and remembering, every
    /// optional member present and absent, strings that need escapes.
    #[test]
    fn the_decision_line_written_by_hand_is_serde_s() {
        let rule = MatchedRule {
            id: "user:a\"b".into(),
            layer: DecidingLayer::User,
            action: Action::Allow,
            file: "/home/dev/.config/hookd/rules.toml".into(),
            line: 12,
            reason: None,
        };
        let base = bare_decision();
        let sources = [
            Source::Rule,
            Source::Client("phone \"1\"\n".into()),
            Source::Timeout,
            Source::Fallback,
            Source::Default,
            Source::Copy,
            Source::Probe,
            Source::Terminal,
            Source::Grant("g-1".into()),
            Source::Unknown("later\t".into()),
        ];
        let layers = [
            None,
            Some(DecidingLayer::Defaults),
            Some(DecidingLayer::Project),
            Some(DecidingLayer::Unjudged),
            Some(DecidingLayer::Policy("team \"x\"".into())),
        ];
        let mut decisions = Vec::new();
        for (i, source) in sources.iter().enumerate() {
            let verdict = Verdict::ALL[i % Verdict::ALL.len()];
            let full = i % 2 == 0;
            decisions.push(Decision {
                run_id: full.then(|| format!("run-{i}\u{1}")),
                answer: Answer {
                    verdict,
                    reason: full.then(|| "no: \"rm -rf\" \\ é".into()),
                    updated_input: full.then(|| json!({"command": "true", "n": [1, 0.5, null]})),
                    additional_context: (i % 3 == 0).then(|| "ctx\r\n".into()),
                },
                source: source.clone(),
                rule_ids: (0..i % 3).map(|k| format!("r{k}\"")).collect(),
                grant_rule: full.then(|| "Bash(npm test:*)".into()),
                remembered: [
                    None,
                    Some(Remember::Once),
                    Some(Remember::Session),
                    Some(Remember::Always),
                ][i % 4],
                generation: i as u64 * 1_000_003,
                latency_us: u64::MAX - i as u64,
                layer: layers[i % layers.len()].clone(),
                rules: if full { vec![rule.clone()] } else { vec![] },
                revision: (i % 3 != 1).then(|| Revision::from_written("sha256:00ff")),
                project_revision: (i % 4 == 1).then(|| Revision::from_written("sha256:ff00")),
                facts: full.then(crate::facts::SessionFacts::default),
                judgements: if i % 3 == 2 {
                    vec![json!({"rule": "j", "cached": true})]
                } else {
                    vec![]
                },
                signals: if i % 4 == 3 {
                    [("branch".to_string(), "main\"".to_string())].into()
                } else {
                    Default::default()
                },
                ..base.clone()
            });
        }
        decisions.push(base);
        for decision in &decisions {
            for enforced in [true, false] {
                let view = DecisionView::of(decision, enforced);
                let mut line = Vec::new();
                view.write_json(&mut line);
                assert_eq!(
                    String::from_utf8(line.clone()).unwrap(),
                    serde_json::to_string(&view).unwrap()
                );
                assert!(matches!(read_back(&line), LogRecord::Decision(_)));
            }
        }
    }

    #[test]
    fn the_reader_reads_every_run_record_the_writer_writes() {
        use crate::Reply;
        let records = [
            Reply::RunStart(RunStart {
                run_id: "r".into(),
                received_at: "2026-11-22T10:00:00Z".into(),
                client: "cli".into(),
                prompt: "hi".into(),
                cwd: "/p".into(),
                provider: Some("local".into()),
                model: Some("haiku".into()),
                pid: 7,
                runtime: None,
            }),
            Reply::SdkMessage(SdkMessage {
                run_id: "r".into(),
                received_at: "2026-11-22T10:00:01Z".into(),
                session_id: Some("s".into()),
                message: json!({"type": "assistant", "message": {"content": []}}),
            }),
            Reply::RunDone(RunDone {
                run_id: "r".into(),
                received_at: "2026-11-22T10:00:02Z".into(),
                ok: false,
                session_id: None,
                usage: Some(json!({"input_tokens": 3})),
                cost_usd: Some(0.5),
                num_turns: Some(2),
                duration_ms: 900,
                result: Some("done".into()),
                error: Some("aborted by client:cli".into()),
            }),
        ];
        for record in records {
            // The daemon logs a run record as the frame it pushes.
            let line = serde_json::to_vec(&record).unwrap();
            let read = read_back(&line);
            let same = matches!(
                (&record, &read),
                (Reply::RunStart(a), LogRecord::RunStart(b)) if a == b
            ) || matches!(
                (&record, &read),
                (Reply::SdkMessage(a), LogRecord::SdkMessage(b)) if a == b
            ) || matches!(
                (&record, &read),
                (Reply::RunDone(a), LogRecord::RunDone(b)) if a == b
            );
            assert!(same, "{record:?} read back as {read:?}");
        }
    }

    /// A newer daemon's log read by this build: unknown fields are ignored,
    /// unknown line types and decision sources are readable.
    #[test]
    fn a_newer_daemons_lines_are_readable() {
        let event = br#"{"type":"event","id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","received_at":"t","harness":"codex","kind":"PreToolUse","input":{},"provenance":{"host":"h"}}"#;
        let LogRecord::Event(logged) = LogRecord::parse(event).unwrap() else {
            panic!("not an event")
        };
        assert_eq!(logged.harness, "codex");
        let decision = br#"{"type":"decision","decision_id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","event_id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6c","verdict":"allow","source":"webhook:w1","rule_ids":[],"generation":1,"latency_us":5,"chain":"abc"}"#;
        let LogRecord::Decision(logged) = LogRecord::parse(decision).unwrap() else {
            panic!("not a decision")
        };
        assert_eq!(logged.decision.source, Source::Unknown("webhook:w1".into()));
        let layered = br#"{"type":"decision","decision_id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6b","event_id":"0193a0b4-5c6d-7e8f-9a0b-1c2d3e4f5a6c","verdict":"deny","source":"rule","generation":1,"latency_us":5,"layer":"team","rules":[{"id":"t","layer":"team","action":"deny","file":"/t.toml","line":1}]}"#;
        assert_eq!(logged.decision.source.to_string(), "webhook:w1");
        assert!(logged.was_judged());
        let LogRecord::Decision(newer) = LogRecord::parse(layered).unwrap() else {
            panic!("not a decision")
        };
        assert_eq!(
            newer.decision.layer,
            Some(DecidingLayer::Policy("team".into()))
        );
        assert_eq!(newer.decision.rules[0].location(), "/t.toml:1");
        let later = br#"{"type":"checkpoint","hash":"abc"}"#;
        assert_eq!(LogRecord::parse(later).unwrap(), LogRecord::Unknown);
        assert_eq!(LogKind::of(later).unwrap(), LogKind::Unknown);
        assert_eq!(
            LogKind::of(br#"{"input":{"type":"x"},"type":"run_done"}"#).unwrap(),
            LogKind::RunDone
        );
        assert_eq!(
            serde_json::from_slice::<LogRecord>(later).unwrap(),
            LogRecord::Unknown
        );
        // Not a record at all: an error, which readers skip and count.
        assert!(LogRecord::parse(br#"{"id":1}"#).is_err());
        assert!(LogRecord::parse(b"{\"type\":\"event\",\"id\":").is_err());
    }
}
