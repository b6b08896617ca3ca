// The per-hook cost of hookd's in-process plugin, measured inside one Node
// process as an agent would pay it (driven by benches/plugins.rs):
//
//   none       the agent with no hook: an empty async handler
//   in-process hookd's Pi extension (the file `hookd install --agent pi`
//              writes), one connection to the daemon for the whole run
//   spawn      a plugin that spawns hook-forwarder per call, writes the
//              event to its stdin and waits for its exit
//
// usage: node plugins.mjs PLUGIN_FILE FORWARDER ITERS   (HOOKD_SOCKET set)
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const [file, forwarder, itersText] = process.argv.slice(2);
const iters = Number(itersText) || 300;
const mod = await import("data:text/javascript;base64," + readFileSync(file).toString("base64"));
const handlers = {};
mod.default({ on: (name, fn) => { handlers[name] = fn; } });
const ctx = { cwd: "/home/dev/project", sessionManager: { getSessionId: () => "bench-session" } };
const event = { type: "tool_call", toolName: "bash", toolCallId: "toolu_1", input: { command: "echo hello > out.txt" } };
const claudeInput = JSON.stringify({
  session_id: "bench-session", cwd: "/home/dev/project", hook_event_name: "PreToolUse",
  tool_name: "Bash", tool_input: { command: "echo hello > out.txt" }, tool_use_id: "toolu_1",
});

const subjects = {
  none: async () => {},
  "in-process": async () => {
    const answer = await handlers.tool_call(event, ctx);
    if (answer) throw new Error("the bench's call was blocked: " + JSON.stringify(answer));
  },
  spawn: () => new Promise((resolve, reject) => {
    const child = spawn(forwarder, ["--agent", "claude-code"], { stdio: ["pipe", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (d) => { err += d; });
    child.stdout.resume();
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 && !err ? resolve() : reject(new Error(`forwarder: ${code} ${err}`))));
    child.stdin.end(claudeInput);
  }),
};

const times = Object.fromEntries(Object.keys(subjects).map((k) => [k, []]));
for (let i = 0; i < 20; i++) for (const f of Object.values(subjects)) await f();
for (let i = 0; i < iters; i++) {
  for (const [name, f] of Object.entries(subjects)) {
    const t = process.hrtime.bigint();
    await f();
    times[name].push(Number(process.hrtime.bigint() - t) / 1e6);
  }
}
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const out = {};
for (const [name, list] of Object.entries(times)) {
  list.sort((a, b) => a - b);
  out[name] = { median_ms: pct(list, 0.5), p90_ms: pct(list, 0.9), p99_ms: pct(list, 0.99) };
}
console.log(JSON.stringify(out));
process.exit(0);
