//! `hookd run`: start an agent-SDK run through the daemon and stream it to
//! the terminal — tool calls, hookd's decisions with their source, the
//! assistant's text, the result, usage and cost.
//!
//! A client of the daemon like any other (`run` request, then the run's
//! frames on the same connection). Ctrl-C sends `abort` (graceful: the SDK's
//! interrupt); a second Ctrl-C leaves at once, and the daemon aborts a run
//! whose client is gone.

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use futures_util::{SinkExt, StreamExt};
use serde_json::Value;

use crate::agent::claude::sdk::{ContentBlock, SdkBody, SdkMessageFields};
use crate::protocol::{AbortRequest, Reply, Request, RunDone, RunOptions, RunRequest};
use crate::tail::summary;

/// Exit status when the run was aborted with Ctrl-C (128 + SIGINT).
pub const EXIT_ABORTED: u8 = 130;

/// Largest frame accepted from the daemon (SDK messages carry tool results).
const MAX_FRAME: usize = 64 * 1024 * 1024;

/// What to run.
#[derive(Debug, Clone)]
pub struct RunArgs {
    /// The daemon's socket.
    pub socket: PathBuf,
    /// The prompt.
    pub prompt: String,
    /// Run options (`run.options`).
    pub options: RunOptions,
    /// `[providers.NAME]`.
    pub provider: Option<String>,
    /// `claude-sdk` or `pi`; `None`: the provider decides.
    pub runtime: Option<String>,
    /// Print every frame as NDJSON instead of text.
    pub json: bool,
    /// `--record`/`--replay`: the run's model API is this relay's, and
    /// every frame goes to it too.
    pub tap: Option<crate::run_record::Tap>,
}

/// Runs it; returns the process exit status: 0 when the run succeeded,
/// [`EXIT_ABORTED`] after Ctrl-C, 1 otherwise.
pub fn run(args: RunArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(stream(args, out))
}

async fn stream(args: RunArgs, out: &mut impl Write) -> anyhow::Result<u8> {
    let name = format!("hookd-run-{}", std::process::id());
    let mut conn = crate::client::connect_async(&args.socket, &name, MAX_FRAME).await?;
    conn.send(&Request::Run(RunRequest {
        req: "run".into(),
        prompt: args.prompt.clone(),
        options: args.options.clone(),
        provider: args.provider.clone(),
        runtime: args.runtime.clone(),
        model_relay: args.tap.as_ref().map(|tap| tap.relay_url()),
    }))
    .await?;
    let mut view = View::default();
    let mut run_id: Option<String> = None;
    let mut aborting = false;
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    loop {
        let line = tokio::select! {
            line = conn.next() => line,
            _ = &mut interrupt => {
                let Some(id) = run_id.clone().filter(|_| !aborting) else {
                    eprintln!("hookd run: leaving (hookd aborts a run whose client is gone)");
                    return Ok(EXIT_ABORTED);
                };
                eprintln!("hookd run: aborting run {id} (Ctrl-C again to leave at once)");
                aborting = true;
                conn.send(&Request::Abort(AbortRequest { req: "abort".into(), run_id: id, compaction: false })).await?;
                interrupt.set(tokio::signal::ctrl_c());
                continue;
            }
        };
        let line = match line {
            None => anyhow::bail!("hookd closed the connection before the run ended"),
            Some(line) => line.context("reading from hookd")?,
        };
        let frame: Reply = match serde_json::from_slice(&line) {
            Ok(frame) => frame,
            // A frame type from a newer daemon: not ours to show.
            Err(_) => continue,
        };
        if let Some(tap) = &args.tap {
            tap.frame(&frame);
        }
        if args.json && !matches!(frame, Reply::Welcome(_) | Reply::Ok(_)) {
            out.write_all(&line)?;
            out.write_all(b"\n")?;
            out.flush()?;
        }
        match frame {
            Reply::Ok(ok) if ok.req == "run" => {
                run_id = ok
                    .result
                    .as_ref()
                    .and_then(|r| r["run_id"].as_str())
                    .map(str::to_owned);
            }
            Reply::Error(e) if e.req.as_deref() == Some("abort") => {
                eprintln!("hookd run: abort refused: {} ({})", e.message, e.code);
            }
            Reply::Error(e) if e.req.as_deref() == Some("run") => {
                anyhow::bail!("the daemon refused the run: {} ({})", e.message, e.code)
            }
            Reply::Error(e) => {
                anyhow::bail!("hookd ended the connection: {} ({})", e.message, e.code)
            }
            Reply::RunDone(done) => {
                if !args.json {
                    view.done(&done, out)?;
                }
                return Ok(if done.ok {
                    0
                } else if aborting {
                    EXIT_ABORTED
                } else {
                    1
                });
            }
            other if !args.json => view.show(&other, out)?,
            _ => {}
        }
    }
}

/// The text rendering: remembers events so decisions can say what they
/// were about.
#[derive(Default)]
struct View {
    /// event id → (kind, what it is: the kind and the tool if any, what
    /// the input was about).
    events: HashMap<String, (String, String, String)>,
    /// The session's runtime, as its init message says (`pi`); absent:
    /// the Claude Agent SDK.
    runtime: Option<String>,
}

impl View {
    fn show(&mut self, frame: &Reply, out: &mut impl Write) -> std::io::Result<()> {
        match frame {
            Reply::Event(push) => {
                let e = &push.event;
                let id = e["id"].as_str().unwrap_or_default().to_string();
                let kind = e["kind"].as_str().unwrap_or("?").to_string();
                let tool = e["tool"].as_str().unwrap_or_default().to_string();
                let mut about = summary(&e["input"]);
                if e["input"]["hookd_origin"] == "canUseTool" {
                    about = format!("{about} (canUseTool)");
                }
                // An event without a tool (Stop, SessionStart) is its kind alone.
                let subject = match tool.as_str() {
                    "" => kind.clone(),
                    tool => format!("{kind} {tool}"),
                };
                if push.pending {
                    writeln!(
                        out,
                        "  … {subject} waits for a client: hookd decide {id} allow|deny"
                    )?;
                }
                self.events.insert(id, (kind, subject, about));
            }
            Reply::Decision(push) => {
                let d = &push.decision;
                let Some((kind, subject, about)) =
                    d["event_id"].as_str().and_then(|id| self.events.remove(id))
                else {
                    return Ok(());
                };
                let verdict = d["verdict"].as_str().unwrap_or("?");
                // Only what shaped the run: permission decisions always, the
                // rest when something was decided.
                if verdict == "none" && !matches!(kind.as_str(), "PreToolUse" | "PermissionRequest")
                {
                    return Ok(());
                }
                let mut source = d["source"].as_str().unwrap_or("?").to_string();
                if let Some(ids) = d["rule_ids"].as_array().filter(|ids| !ids.is_empty()) {
                    let ids: Vec<&str> = ids.iter().filter_map(Value::as_str).collect();
                    source = format!("{source} {}", ids.join(","));
                }
                let mark = match verdict {
                    "allow" => "✓",
                    "deny" => "✗",
                    "ask" => "?",
                    _ => "·",
                };
                write!(out, "  {mark} hookd {subject}: {verdict} ({source})")?;
                if let Some(reason) = d["reason"].as_str() {
                    write!(out, ": {reason}")?;
                }
                if verdict != "none" && !about.is_empty() && kind != "PreToolUse" {
                    write!(out, "  [{about}]")?;
                }
                writeln!(out)?;
            }
            Reply::SdkMessage(m) => {
                if let Some(runtime) = m.message.get("runtime").and_then(Value::as_str) {
                    self.runtime = Some(runtime.to_string());
                }
                self.message(&m.message, out)?
            }
            Reply::Lagged(l) => writeln!(
                out,
                "  (hookd dropped {} frames: reading too slowly)",
                l.dropped
            )?,
            _ => {}
        }
        out.flush()
    }

    fn message(&self, m: &Value, out: &mut impl Write) -> std::io::Result<()> {
        let fields = SdkMessageFields::of(m);
        match fields.body {
            SdkBody::Init { model, cwd } => writeln!(
                out,
                "● session {} · {} · model {} · cwd {}",
                fields.session_id.unwrap_or("?"),
                self.runtime.as_deref().unwrap_or("claude-sdk"),
                model.unwrap_or("?"),
                cwd.unwrap_or("?"),
            ),
            SdkBody::Assistant(blocks) => {
                for block in blocks.iter() {
                    match block {
                        ContentBlock::Text(text) => {
                            for line in text.lines() {
                                writeln!(out, "  {line}")?;
                            }
                        }
                        ContentBlock::ToolUse { name, input } => {
                            writeln!(
                                out,
                                "→ {} {}",
                                name.unwrap_or("?"),
                                summary(&serde_json::json!({ "tool_input": input }))
                            )?;
                        }
                        _ => {}
                    }
                }
                Ok(())
            }
            SdkBody::User(blocks) => {
                for block in blocks.iter() {
                    let ContentBlock::ToolResult { text, is_error } = block else {
                        continue;
                    };
                    let first = text.lines().next().unwrap_or_default();
                    let first: String = first.chars().take(160).collect();
                    let label = if is_error { "error" } else { "result" };
                    writeln!(out, "  ← {label}: {first}")?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn done(&self, done: &RunDone, out: &mut impl Write) -> std::io::Result<()> {
        match (&done.error, &done.result) {
            (None, Some(result)) => writeln!(out, "✓ result: {result}")?,
            (None, None) => writeln!(out, "✓ done")?,
            (Some(error), _) => writeln!(out, "✗ run failed: {error}")?,
        }
        let usage = done.usage.as_ref();
        let n = |key: &str| usage.and_then(|u| u[key].as_u64()).unwrap_or(0);
        let mut line = format!(
            "  usage: {} in / {} out tokens (cache: {} read, {} written)",
            n("input_tokens"),
            n("output_tokens"),
            n("cache_read_input_tokens"),
            n("cache_creation_input_tokens"),
        );
        if let Some(cost) = done.cost_usd {
            line.push_str(&format!(", cost ${cost:.4}"));
        }
        if let Some(turns) = done.num_turns {
            line.push_str(&format!(", {turns} turns"));
        }
        line.push_str(&format!(", {:.1}s", done.duration_ms as f64 / 1000.0));
        writeln!(out, "{line}")?;
        // A Pi session lives in memory: it cannot be resumed.
        if let Some(session) = done.session_id.as_ref().filter(|_| self.runtime.is_none()) {
            writeln!(
                out,
                "  session {session} (continue with --resume {session})"
            )?;
        }
        writeln!(out, "  run {}", done.run_id)?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{DecisionPush, EventPush};
    use serde_json::json;

    /// What the view prints for one event and its decision.
    fn shown(event: Value, decision: Value) -> String {
        let mut view = View::default();
        let mut out = Vec::new();
        let event = Reply::Event(EventPush {
            pending: false,
            event,
            info: None,
        });
        view.show(&event, &mut out).unwrap();
        view.show(&Reply::Decision(DecisionPush { decision }), &mut out)
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_decision_names_its_event_and_tool_without_a_stray_space() {
        let stop = shown(
            json!({"id": "e1", "kind": "Stop", "input": {}}),
            json!({"event_id": "e1", "verdict": "deny", "source": "rule", "rule_ids": ["keep-going"]}),
        );
        assert_eq!(stop, "  ✗ hookd Stop: deny (rule keep-going)\n");
        let bash = shown(
            json!({"id": "e2", "kind": "PreToolUse", "tool": "Bash", "input": {"tool_input": {"command": "ls"}}}),
            json!({"event_id": "e2", "verdict": "allow", "source": "rule"}),
        );
        assert_eq!(bash, "  ✓ hookd PreToolUse Bash: allow (rule)\n");
    }
}
