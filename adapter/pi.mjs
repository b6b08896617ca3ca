// hookd's Pi adapter: one Pi coding agent session, driven by the daemon.
//
// The daemon spawns `node pi.mjs` once per run of the `pi` runtime and
// speaks the same NDJSON as with adapter.mjs (protocol/PROTOCOL.md §9):
//
//   daemon → adapter (stdin):   start {run_id, prompt, options, hook_timeout_s}
//                               decision {id, result}
//                               steer {text}
//                               abort {}, abort_compaction {}, dispose {}
//   adapter → daemon (stdout):  ready {}, hook_event {id, input},
//                               sdk_message {message}, usage {…},
//                               done {…}, error {message}
//
// stderr is for diagnostics only; the daemon copies it into its own log.
//
// The session is Pi's SDK session (`createAgentSession`, Pi 0.73.1), with
// its auth, models, settings and session in memory and no extension
// discovered on disk: a run is judged by the daemon, through the one
// extension below, and nothing else can load code into it (Pi's context
// files and skills load as usual).
//
// Every Pi extension event hookd's plugin relays (plugins/pi.js) becomes a
// `hook_event` in Pi's dialect (protocol/src/agent/pi/), and a `tool_call`
// waits for the daemon's `decision`, whose `result` is what the handler
// returns to Pi, as it is: `{block: true, reason}` or null. This file keeps
// no rules and makes no decisions of its own; when the daemon never
// answers (the run is ending), the tool does not run.
//
// Messages go to the daemon in the Agent SDK's message shape (system init,
// assistant, user, result), with `runtime: "pi"`, so the log, the clients
// and the approver read both runtimes alike; usage and cost come from Pi's
// own accounting (each assistant message's usage, priced from the model's
// cost table).

import { createInterface } from "node:readline";
import {
  AuthStorage,
  createAgentSession,
  DefaultResourceLoader,
  getAgentDir,
  ModelRegistry,
  SessionManager,
  SettingsManager,
} from "@mariozechner/pi-coding-agent";

// stdout carries the protocol: nothing else may print there.
console.log = console.info = console.debug = console.error;

// The provider's key, from the environment the daemon built (never from a
// frame); taken out of the environment before any tool can see it.
const KEY_ENV = "HOOKD_PROVIDER_API_KEY";
const API_KEY = process.env[KEY_ENV];
delete process.env[KEY_ENV];
// Pi's version checks and downloads stay off: a run talks to its provider
// and nothing else.
process.env.PI_OFFLINE = "1";

// What a tool call gets when the daemon never answered it.
const NO_ANSWER = { block: true, reason: "hookd: the run ended before the daemon answered" };

function send(frame) {
  process.stdout.write(JSON.stringify(frame) + "\n");
}

function diag(message) {
  process.stderr.write(`pi adapter: ${message}\n`);
}

// ── Decisions ─────────────────────────────────────────────────────────────

let nextId = 1;
const waiting = new Map(); // hook_event id → resolve(result | null)

// Sends one event to the daemon; resolves to its decision's result (null:
// no opinion), or undefined if the run stops (or `signal` aborts) first.
// `wait: false` resolves at once (observe-only events; the daemon still
// answers, unread).
function askDaemon(input, { signal, wait = true } = {}) {
  const id = String(nextId++);
  if (stopped) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const giveUp = () => {
      waiting.delete(id);
      resolve(undefined);
    };
    if (signal?.aborted) return resolve(undefined);
    signal?.addEventListener("abort", giveUp, { once: true });
    waiting.set(id, (result) => {
      signal?.removeEventListener("abort", giveUp);
      resolve(result);
    });
    send({ type: "hook_event", id, input });
    if (!wait) resolve(undefined);
  });
}

// hookd's extension inside the session: plugins/pi.js's events, relayed
// through the daemon's stdio instead of its socket.
function hookdExtension(pi) {
  const base = (name, ctx) => ({ hook_event_name: name, session_id: sessionId, cwd: ctx.cwd });
  pi.on("tool_call", async (event, ctx) => {
    const input = {
      ...base("tool_call", ctx),
      tool_name: event.toolName,
      tool_input: event.input,
      tool_use_id: event.toolCallId,
    };
    let answer = await askDaemon(input, { signal: ctx.signal });
    if (answer === undefined) answer = NO_ANSWER;
    return answer && answer.block === true
      ? { block: true, reason: String(answer.reason || "Blocked by hookd") }
      : undefined;
  });
  pi.on("tool_result", async (event, ctx) => {
    const input = {
      ...base("tool_result", ctx),
      tool_name: event.toolName,
      tool_input: event.input,
      tool_use_id: event.toolCallId,
      is_error: event.isError,
    };
    await askDaemon(input, { wait: false });
  });
  pi.on("input", async (event, ctx) => {
    await askDaemon({ ...base("input", ctx), prompt: event.text, source: event.source }, { wait: false });
  });
  pi.on("session_start", async (event, ctx) => {
    await askDaemon({ ...base("session_start", ctx), reason: event.reason }, { wait: false });
  });
  pi.on("agent_end", async (_event, ctx) => {
    await askDaemon(base("agent_end", ctx), { wait: false });
  });
  pi.on("session_shutdown", async (event, ctx) => {
    await askDaemon({ ...base("session_shutdown", ctx), reason: event.reason }, { wait: false });
  });
}

// ── Messages, in the Agent SDK's shape ────────────────────────────────────

let sessionId;

function text(content) {
  if (typeof content === "string") return content;
  return (content ?? [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("");
}

function sdkUsage(u) {
  return {
    input_tokens: u.input ?? 0,
    output_tokens: u.output ?? 0,
    cache_read_input_tokens: u.cacheRead ?? 0,
    cache_creation_input_tokens: u.cacheWrite ?? 0,
  };
}

// One of Pi's messages as an SDK message, or null for one hookd does not
// show (custom messages of extensions, none here).
function sdkMessage(message) {
  const common = { session_id: sessionId, runtime: "pi" };
  switch (message.role) {
    case "assistant": {
      const content = (message.content ?? []).map((c) => {
        switch (c.type) {
          case "text":
            return { type: "text", text: c.text };
          case "thinking":
            return { type: "thinking", thinking: c.thinking };
          case "toolCall":
            return { type: "tool_use", id: c.id, name: c.name, input: c.arguments };
          default:
            return c;
        }
      });
      if (message.errorMessage) content.push({ type: "text", text: `[error] ${message.errorMessage}` });
      return {
        type: "assistant",
        ...common,
        message: {
          role: "assistant",
          model: message.model,
          content,
          stop_reason: message.stopReason,
          usage: message.usage ? sdkUsage(message.usage) : undefined,
        },
      };
    }
    case "toolResult":
      return {
        type: "user",
        ...common,
        message: {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: message.toolCallId,
              content: text(message.content),
              is_error: Boolean(message.isError),
            },
          ],
        },
      };
    case "user":
      return {
        type: "user",
        ...common,
        message: { role: "user", content: [{ type: "text", text: text(message.content) }] },
      };
    default:
      return null;
  }
}

// ── The run ───────────────────────────────────────────────────────────────

let session = null;
let aborted = false;
let stopped = false;
let ended = null; // why the run was stopped by a limit: "error_max_turns" | "error_max_budget_usd"
const totals = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, cost: 0, turns: 0 };

function model(registry, provider, id) {
  // A model Pi knows (its built-in table) lends its limits and prices;
  // the provider's own `price` wins.
  const known = provider.builtin ? registry.find(provider.builtin, id) : undefined;
  const price = provider.price ?? known?.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  return {
    id,
    name: id,
    reasoning: known?.reasoning ?? false,
    input: known?.input ?? ["text"],
    cost: price,
    contextWindow: known?.contextWindow ?? 200000,
    maxTokens: known?.maxTokens ?? 16384,
  };
}

async function start({ prompt, options = {} }) {
  const { provider, cwd = process.cwd() } = options;
  if (!provider || !options.model) throw new Error("start: options.provider and options.model are required");
  const authStorage = AuthStorage.inMemory();
  const modelRegistry = ModelRegistry.inMemory(authStorage);
  modelRegistry.registerProvider(provider.name, {
    baseUrl: provider.baseUrl,
    api: provider.api,
    apiKey: API_KEY ?? "",
    models: [model(modelRegistry, provider, options.model)],
  });
  const chosen = modelRegistry.find(provider.name, options.model);
  const settingsManager = SettingsManager.inMemory({ compaction: { enabled: true } });
  const agentDir = getAgentDir();
  const resourceLoader = new DefaultResourceLoader({
    cwd,
    agentDir,
    settingsManager,
    noExtensions: true,
    extensionFactories: [hookdExtension],
  });
  await resourceLoader.reload();
  const sessionManager = SessionManager.inMemory(cwd);
  if (options.sessionId) sessionManager.newSession({ id: options.sessionId });
  const created = await createAgentSession({
    cwd,
    agentDir,
    authStorage,
    modelRegistry,
    model: chosen,
    thinkingLevel: options.thinkingLevel ?? "off",
    resourceLoader,
    settingsManager,
    sessionManager,
  });
  if (stopped) {
    // Aborted while the session was being made: nothing was started.
    created.session.dispose();
    return;
  }
  session = created.session;
  sessionId = session.sessionId;
  for (const e of created.extensionsResult?.errors ?? []) diag(`extension: ${JSON.stringify(e)}`);
  send({
    type: "sdk_message",
    message: {
      type: "system",
      subtype: "init",
      session_id: sessionId,
      runtime: "pi",
      model: `${provider.name}/${options.model}`,
      cwd,
      tools: session.getActiveToolNames?.() ?? [],
    },
  });
  session.subscribe((event) => onEvent(event, options));
  await session.bindExtensions({ onError: (e) => diag(`extension error: ${e?.error ?? JSON.stringify(e)}`) });
  if (aborted) return finish();
  let failure;
  try {
    await session.prompt(prompt);
  } catch (e) {
    failure = e;
  }
  return finish(failure);
}

function onEvent(event, options) {
  if (event.type === "message_end") {
    const message = sdkMessage(event.message);
    const u = event.message.usage;
    const spent = u && (u.input || u.output || u.cacheRead || u.cacheWrite);
    // A turn the abort cut off before the model answered is none.
    const turn = event.message.role === "assistant" && u && (spent || event.message.stopReason !== "aborted");
    if (turn) {
      totals.input += u.input ?? 0;
      totals.output += u.output ?? 0;
      totals.cacheRead += u.cacheRead ?? 0;
      totals.cacheWrite += u.cacheWrite ?? 0;
      totals.cost += u.cost?.total ?? 0;
      totals.turns += 1;
    }
    if (message) {
      // The run's cost so far, for whoever shows it live (the approver).
      if (message.type === "assistant") message.total_cost_usd = totals.cost;
      send({ type: "sdk_message", message });
    }
    if (turn) {
      send({ type: "usage", ...sdkUsage(totals), cost_usd: totals.cost, num_turns: totals.turns });
      if (!ended && options.maxBudgetUsd && totals.cost >= options.maxBudgetUsd) {
        ended = "error_max_budget_usd";
        diag(`stopping: cost $${totals.cost} reached the budget of $${options.maxBudgetUsd}`);
        session.abort();
      }
    }
  } else if (event.type === "turn_end") {
    // Another turn follows a turn that called tools: stop at the limit.
    if (!ended && options.maxTurns && totals.turns >= options.maxTurns && event.toolResults?.length) {
      ended = "error_max_turns";
      diag(`stopping: ${totals.turns} turns reached the limit of ${options.maxTurns}`);
      session.abort();
    }
  } else if (event.type === "compaction_start" || event.type === "compaction_end") {
    diag(event.type);
  }
}

async function finish(failure) {
  const last = session?.state?.messages?.findLast?.((m) => m.role === "assistant");
  const subtype =
    ended ??
    (aborted ? "error_during_execution" : failure || last?.stopReason === "error" ? "error_during_execution" : "success");
  const result =
    subtype === "success"
      ? (session?.getLastAssistantText?.() ?? "")
      : ended === "error_max_turns"
        ? `the run reached its limit of turns`
        : ended === "error_max_budget_usd"
          ? `the run reached its budget`
          : String(failure?.message ?? last?.errorMessage ?? (aborted ? "aborted" : "the session failed"));
  const summary = {
    session_id: sessionId ?? null,
    usage: sdkUsage(totals),
    cost_usd: totals.cost,
    num_turns: totals.turns,
    is_error: subtype !== "success",
    result,
  };
  send({
    type: "sdk_message",
    message: {
      type: "result",
      subtype,
      runtime: "pi",
      session_id: summary.session_id,
      is_error: summary.is_error,
      result,
      usage: summary.usage,
      total_cost_usd: totals.cost,
      num_turns: totals.turns,
    },
  });
  send({ type: "done", ...summary });
  await shutdown();
}

// Ends the session as Pi's own runtime would (session_shutdown, then
// dispose) and lets the process exit.
async function shutdown() {
  if (session && !stopped) {
    try {
      await session.extensionRunner?.emit({ type: "session_shutdown", reason: "quit" });
    } catch (e) {
      diag(`session_shutdown: ${e?.message ?? e}`);
    }
    try {
      session.dispose();
    } catch (e) {
      diag(`dispose: ${e?.message ?? e}`);
    }
  }
  stop();
}

async function abort(why) {
  if (aborted) return;
  aborted = true;
  diag(`aborting: ${why}`);
  if (!session) {
    send({ type: "error", message: "aborted before the session started" });
    process.exitCode = 1;
    return stop();
  }
  // Releases a tool call waiting for the daemon (its tool does not run).
  for (const resolve of waiting.values()) resolve(undefined);
  waiting.clear();
  try {
    session.abortCompaction();
    await session.abort();
  } catch (e) {
    diag(`abort failed: ${e?.message ?? e}`);
  }
}

// Lets the process exit once stdout has drained: stop reading stdin and
// release every callback still waiting.
function stop() {
  stopped = true;
  lines.close();
  process.stdin.destroy();
  for (const resolve of waiting.values()) resolve(undefined);
  waiting.clear();
}

// ── stdin ─────────────────────────────────────────────────────────────────

const lines = createInterface({ input: process.stdin });
let started = false;
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
      if (started || aborted) return diag("ignoring a second start");
      started = true;
      start(frame).catch((e) => {
        diag(`run failed: ${e?.stack ?? e}`);
        send({ type: "error", message: String(e?.message ?? e) });
        process.exitCode = 1;
        stop();
      });
      break;
    case "decision": {
      const resolve = waiting.get(frame.id);
      waiting.delete(frame.id);
      resolve?.(frame.result ?? null);
      break;
    }
    case "steer":
      if (!session || !session.isStreaming || aborted) {
        diag("ignoring a steer: the session takes no more input");
      } else {
        session.steer(String(frame.text ?? "")).catch((e) => diag(`steer failed: ${e?.message ?? e}`));
      }
      break;
    case "abort":
      abort("the daemon asked");
      break;
    case "abort_compaction":
      // Pi stops a manual or automatic compaction under way; the run goes on.
      diag(`abort_compaction: ${session?.isCompacting ? "stopping the compaction under way" : "no compaction under way"}`);
      session?.abortCompaction();
      break;
    case "dispose":
      if (!session) stop();
      else if (!session.isStreaming) shutdown();
      else abort("the daemon disposed of the session");
      break;
    default:
      diag(`ignoring a frame of unknown type ${JSON.stringify(frame.type)}`);
  }
});
// The daemon went away: nobody is left to decide, so stop.
lines.on("close", () => {
  if (!stopped) abort("stdin closed");
});

send({ type: "ready" });
