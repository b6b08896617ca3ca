// hookd's agent-SDK adapter: one Claude Agent SDK run, driven by the daemon.
//
// The daemon spawns `node adapter.mjs` once per run and speaks NDJSON with it
// (one JSON object per line; protocol/PROTOCOL.md §9):
//
//   daemon → adapter (stdin):   start {run_id, prompt, options, hook_timeout_s}
//                               decision {id, result}
//                               steer {text}
//                               abort {}, abort_compaction {}, dispose {}
//   adapter → daemon (stdout):  ready {}, hook_event {id, input},
//                               sdk_message {message}, done {…}, error {message}
//
// stderr is for diagnostics only; the daemon copies it into its own log.
//
// Every hook callback and canUseTool become a `hook_event` and wait for the
// daemon's `decision`, whose `result` is what the callback returns to the
// SDK, as it is (the daemon's protocol/src/agent/claude/ is the one place that knows
// that JSON). This file only relays: it keeps no rules, reads no answer and
// makes no decisions of its own.

import { createInterface } from "node:readline";
import { HOOK_EVENTS, query } from "@anthropic-ai/claude-agent-sdk";

// stdout carries the protocol: nothing else may print there.
console.log = console.info = console.debug = console.error;

// WorktreeCreate is left out on purpose: a WorktreeCreate hook *replaces*
// Claude Code's own worktree creation (it must return the new path), and
// hookd observes, it does not create worktrees.
const EVENTS = HOOK_EVENTS.filter((name) => name !== "WorktreeCreate");

// What canUseTool returns when the daemon never answered (the SDK gave up on
// the call, or the run is ending): the SDK requires a PermissionResult, and
// nothing approved the call. Hook callbacks return {} (no opinion) then.
const NO_ANSWER = { behavior: "deny", message: "hookd: the run ended before the daemon answered" };

// How long the SDK gets to wind down after interrupt() before the query is
// aborted outright (the daemon kills the process group 5 s after `abort`).
const INTERRUPT_GRACE_MS = 2000;

function send(frame) {
  process.stdout.write(JSON.stringify(frame) + "\n");
}

function diag(message) {
  process.stderr.write(`adapter: ${message}\n`);
}

// ── Decisions ─────────────────────────────────────────────────────────────

let nextId = 1;
const waiting = new Map(); // hook_event id → resolve(result | null)

// Sends one hook input to the daemon and waits for its decision's result;
// resolves to null if the SDK gives up on the callback first (abort,
// timeout) or the run stops.
function askDaemon(input, signal) {
  const id = String(nextId++);
  return new Promise((resolve) => {
    const giveUp = () => {
      waiting.delete(id);
      resolve(null);
    };
    if (signal?.aborted) return resolve(null);
    signal?.addEventListener("abort", giveUp, { once: true });
    waiting.set(id, (result) => {
      signal?.removeEventListener("abort", giveUp);
      resolve(result);
    });
    send({ type: "hook_event", id, input });
  });
}

// ── The session's input ───────────────────────────────────────────────────

// The prompt goes to the SDK as streaming input (an async iterable of user
// messages), so `steer` can add a follow-up while the session works: the
// SDK hands each message to Claude Code at once, which takes it into the
// turn under way (after the current tool call) or runs it as the next
// turn. The stream ends at the first `result` with nothing left to hand
// over: Claude Code still answers what it was given, then the run ends as
// it would with a plain string prompt. A steer after that is too late.
const input = {
  queue: [],
  wake: null,
  ended: false,
  push(text) {
    if (this.ended) return false;
    this.queue.push({
      type: "user",
      session_id: "",
      message: { role: "user", content: [{ type: "text", text }] },
      parent_tool_use_id: null,
    });
    this.wake?.();
    return true;
  },
  end() {
    this.ended = true;
    this.wake?.();
  },
  onResult() {
    if (this.queue.length === 0) this.end();
  },
  async *messages() {
    for (;;) {
      while (this.queue.length > 0) {
        yield this.queue.shift();
      }
      if (this.ended) return;
      await new Promise((resolve) => (this.wake = resolve));
      this.wake = null;
    }
  },
};

// ── The run ───────────────────────────────────────────────────────────────

let run = null; // { query, controller } once started
let aborted = false;
let finished = false;
const known = { session_id: undefined, cwd: undefined };

async function onHook(input, _toolUseID, { signal }) {
  if (input.session_id) known.session_id = input.session_id;
  if (input.cwd) known.cwd = input.cwd;
  return (await askDaemon(input, signal)) ?? {};
}

// canUseTool goes through the same rules as a PermissionRequest hook: it is
// sent as one, and the daemon answers with the SDK's PermissionResult. The
// SDK also fires its PermissionRequest hook for the same tool call; the
// daemon answers that one as a copy ("no opinion" at once:
// protocol/PROTOCOL.md §8.4), so Claude Code waits for this answer and the
// call is judged once.
async function canUseTool(toolName, toolInput, options) {
  // hookd_origin first: the daemon tells canUseTool's event by it even if
  // the rest of the input cannot be read (protocol/PROTOCOL.md §9).
  const input = {
    hookd_origin: "canUseTool",
    ...(known.session_id && { session_id: known.session_id }),
    ...(known.cwd && { cwd: known.cwd }),
    hook_event_name: "PermissionRequest",
    tool_name: toolName,
    tool_input: toolInput,
    permission_suggestions: options.suggestions ?? [],
    ...(options.toolUseID && { tool_use_id: options.toolUseID }),
    ...(options.blockedPath && { blocked_path: options.blockedPath }),
    ...(options.decisionReason && { decision_reason: options.decisionReason }),
    ...(options.agentID && { agent_id: options.agentID }),
  };
  return (await askDaemon(input, options.signal)) ?? NO_ANSWER;
}

async function start({ prompt, options = {}, hook_timeout_s }) {
  const matchers = [{ hooks: [onHook], ...(hook_timeout_s && { timeout: hook_timeout_s }) }];
  const controller = new AbortController();
  input.push(prompt);
  const q = query({
    prompt: input.messages(),
    options: {
      ...options,
      hooks: Object.fromEntries(EVENTS.map((name) => [name, matchers])),
      // bypassPermissions never consults canUseTool (the SDK warns if it is
      // given); PreToolUse still goes through the daemon. The daemon makes
      // the same choice (runs.rs, registers_can_use_tool) to know when the
      // PermissionRequest hook is a copy.
      ...(options.permissionMode !== "bypassPermissions" && { canUseTool }),
      abortController: controller,
      stderr: (text) => process.stderr.write(text),
    },
  });
  run = { query: q, controller };
  let result;
  try {
    for await (const message of q) {
      if (message.session_id) known.session_id = message.session_id;
      if (message.type === "system" && message.subtype === "init") known.cwd = message.cwd;
      if (message.type === "result") result = message;
      send({ type: "sdk_message", message });
      if (message.type === "result") input.onResult();
    }
  } catch (e) {
    diag(`the query ended with: ${e?.message ?? e}`);
    // After a result (an interrupt, an API error) the SDK may still throw;
    // the result has what the daemon needs.
    if (!result) {
      send({ type: "error", message: aborted ? `aborted (${e?.message ?? e})` : String(e?.message ?? e) });
      process.exitCode = 1;
    }
  } finally {
    finished = true;
    stop();
  }
  if (result) {
    send({
      type: "done",
      session_id: result.session_id ?? known.session_id ?? null,
      usage: result.usage ?? null,
      cost_usd: result.total_cost_usd ?? null,
      num_turns: result.num_turns ?? 0,
      is_error: Boolean(result.is_error) || result.subtype !== "success",
      result: typeof result.result === "string" ? result.result : (result.errors ?? []).join("; ") || result.subtype,
    });
  } else if (process.exitCode !== 1) {
    send({ type: "error", message: aborted ? "aborted" : "the SDK ended without a result message" });
    process.exitCode = 1;
  }
}

// Graceful: the SDK's interrupt(); if the query has not ended shortly after,
// it is aborted (which kills the Claude Code process it runs).
async function abort(why) {
  if (aborted) return;
  aborted = true;
  input.end();
  diag(`aborting: ${why}`);
  if (!run) return stop();
  setTimeout(() => run.controller.abort(), INTERRUPT_GRACE_MS).unref();
  try {
    await run.query.interrupt();
  } catch (e) {
    diag(`interrupt failed (${e?.message ?? e}); aborting the query`);
    run.controller.abort();
  }
}

// Lets the process exit once stdout has drained: stop reading stdin and
// release every callback still waiting.
function stop() {
  input.end();
  lines.close();
  process.stdin.destroy();
  for (const resolve of waiting.values()) resolve(null);
  waiting.clear();
}

// ── stdin ─────────────────────────────────────────────────────────────────

const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (!line.trim()) return;
  let frame;
  try {
    frame = JSON.parse(line);
  } catch (e) {
    return diag(`ignoring a line that is not JSON: ${e.message}`);
  }
  switch (frame.type) {
    case "start":
      if (run || aborted) return diag("ignoring a second start");
      start(frame).catch((e) => diag(`run failed: ${e?.stack ?? e}`));
      break;
    case "decision": {
      const resolve = waiting.get(frame.id);
      waiting.delete(frame.id);
      resolve?.(frame.result ?? null);
      break;
    }
    case "steer":
      if (!run || !input.push(String(frame.text ?? ""))) {
        diag("ignoring a steer: the session takes no more input");
      }
      break;
    case "abort":
      abort("the daemon asked");
      break;
    // The SDK has no call that stops a compaction alone (only interrupt(),
    // which ends the turn): say so, and leave the run be.
    case "abort_compaction":
      diag("abort_compaction: the Claude Agent SDK has no call to stop a compaction; nothing done");
      break;
    // Sent after `done`, when this adapter has stopped reading already;
    // earlier, the session is not wanted any more.
    case "dispose":
      if (!finished) abort("the daemon disposed of the session");
      break;
    default:
      diag(`ignoring a frame of unknown type ${JSON.stringify(frame.type)}`);
  }
});
// The daemon went away: nobody is left to decide, so stop.
lines.on("close", () => {
  if (!finished) abort("stdin closed");
});

send({ type: "ready" });
