// ── hookd plugin client (plugins/client.js) ───────────────────────────────
//
// Shared by hookd's OpenCode plugin and Pi extension: `hookd install` writes
// each as one file, this client followed by the agent's part. It keeps one
// connection to the daemon for the agent's life and relays events as `hook`
// frames (protocol/PROTOCOL.md §4, §5); the daemon judges them with the
// agent's dialect and answers with a small JSON the agent's part executes.
// It keeps no rules and renders nothing of its own.
//
// - Connects lazily (the first event), says `hello`, waits for `welcome`.
// - Each hook has a deadline (HOOKD_CONFIG.deadlineMs, or
//   $HOOKD_PLUGIN_DEADLINE_MS): it never holds the agent longer.
// - Daemon unreachable, connection lost, deadline passed: the fallback,
//   "no opinion", or a block of tool calls when installed with
//   --fail-closed, with one line on stderr saying so. After a failed
//   connect it waits (backoff from 100 ms to 5 s) before trying again,
//   answering with the fallback meanwhile; a daemon that comes back is
//   reached at the next hook after that.
// - The socket is found as hook-forwarder finds it ($HOOKD_SOCKET, else
//   $XDG_RUNTIME_DIR/hookd/hookd.sock, else /tmp/hookd-$UID/hookd.sock),
//   and its directory must belong to this user, not be a symlink and not
//   be writable by group or others; the socket itself must belong to this
//   user (Node cannot read SO_PEERCRED; the daemon checks ours).

import * as hookdNet from "node:net";
import * as hookdFs from "node:fs";
import * as hookdPath from "node:path";

const HOOKD_PROTOCOL_VERSION = 1;
const HOOKD_BACKOFF_MIN_MS = 100;
const HOOKD_BACKOFF_MAX_MS = 5000;

function hookdSocketPath(env = process.env) {
  if (env.HOOKD_SOCKET) return env.HOOKD_SOCKET;
  if (env.XDG_RUNTIME_DIR) return hookdPath.join(env.XDG_RUNTIME_DIR, "hookd", "hookd.sock");
  return `/tmp/hookd-${process.geteuid()}/hookd.sock`;
}

// Why the socket at `socket` must not be trusted, or null. The rule the
// daemon binds by (protocol/src/paths.rs `unsafe_dir_reason`).
function hookdUntrusted(socket) {
  const dir = hookdPath.dirname(socket) || ".";
  const uid = process.geteuid();
  let st;
  try {
    st = hookdFs.lstatSync(dir);
  } catch (e) {
    return e.code === "ENOENT" ? null : `socket directory ${dir}: ${e.message}`;
  }
  if (st.isSymbolicLink()) return `socket directory ${dir}: it is a symlink`;
  if (!st.isDirectory()) return `socket directory ${dir}: it is not a directory`;
  if (st.uid !== uid) return `socket directory ${dir}: it belongs to uid ${st.uid}, not ${uid}`;
  if (st.mode & 0o022) return `socket directory ${dir}: it is writable by group or others`;
  try {
    const sock = hookdFs.lstatSync(socket);
    if (sock.uid !== uid) return `socket ${socket}: it belongs to uid ${sock.uid}, not ${uid}`;
  } catch {
    // No socket: connect says so.
  }
  return null;
}

class HookdClient {
  // harness: "opencode" | "pi"; failClosed: bool; deadlineMs; name.
  constructor({ harness, failClosed, deadlineMs, name, log }) {
    this.harness = harness;
    this.failClosed = failClosed;
    const fromEnv = Number(process.env.HOOKD_PLUGIN_DEADLINE_MS);
    this.deadlineMs = Number.isFinite(fromEnv) && fromEnv > 0 ? fromEnv : deadlineMs;
    this.name = name;
    this.log = log || ((line) => process.stderr.write(line + "\n"));
    this.conn = null; // Promise<socket> while connecting or connected
    this.pending = new Map(); // hook id → resolve(frame | Error)
    this.nextId = 1;
    this.backoffMs = 0;
    this.retryAt = 0;
  }

  // The connection, opened (and greeted) if need be; rejects with the
  // reason when the daemon cannot be reached.
  connection(deadline) {
    if (this.conn) return this.conn;
    if (Date.now() < this.retryAt) {
      const wait = this.retryAt - Date.now();
      return Promise.reject(new Error(`${this.lastWhy} (next try in ${wait} ms)`));
    }
    const socket = hookdSocketPath();
    const untrusted = hookdUntrusted(socket);
    if (untrusted) return Promise.reject(new Error(`untrusted_dir: ${untrusted}`));
    this.conn = new Promise((resolve, reject) => {
      const sock = hookdNet.createConnection(socket);
      let buffer = "";
      let greeted = false;
      const timer = setTimeout(() => sock.destroy(new Error("timeout connecting")), Math.max(1, deadline - Date.now()));
      timer.unref?.();
      let failed = false;
      const fail = (err) => {
        // 'error' is followed by 'close': one failure, one backoff step.
        if (failed) return;
        failed = true;
        this.lastWhy = err.message;
        clearTimeout(timer);
        if (this.conn && this.current === sock) this.conn = null;
        this.current = null;
        this.backoffMs = Math.min(HOOKD_BACKOFF_MAX_MS, Math.max(HOOKD_BACKOFF_MIN_MS, this.backoffMs * 2));
        this.retryAt = Date.now() + this.backoffMs;
        for (const done of this.pending.values()) done(err);
        this.pending.clear();
        reject(err);
      };
      this.current = sock;
      sock.setEncoding("utf8");
      sock.on("connect", () => {
        sock.write(JSON.stringify({ type: "hello", v: HOOKD_PROTOCOL_VERSION, role: "client", name: this.name }) + "\n");
      });
      sock.on("data", (chunk) => {
        buffer += chunk;
        let nl;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          let frame;
          try {
            frame = JSON.parse(line);
          } catch {
            sock.destroy(new Error("the daemon sent a line that is not JSON"));
            return;
          }
          if (!greeted) {
            if (frame.type !== "welcome") {
              sock.destroy(new Error(`daemon refused hello: ${frame.code || frame.type}: ${frame.message || ""}`));
              return;
            }
            greeted = true;
            clearTimeout(timer);
            this.backoffMs = 0;
            // An idle connection must not keep the agent's process alive.
            sock.unref();
            resolve(sock);
          } else if (frame.type === "hook_result" || (frame.type === "error" && frame.id)) {
            const done = this.pending.get(frame.id);
            this.pending.delete(frame.id);
            if (done) done(frame);
            if (this.pending.size === 0) sock.unref();
          }
        }
      });
      sock.on("error", (e) => fail(new Error(hookdConnectReason(e))));
      sock.on("close", () => fail(new Error("connection_lost: the daemon closed the connection")));
    });
    this.conn.catch(() => {});
    return this.conn;
  }

  // Sends one event; resolves to the answer the agent's part executes:
  // null ("no opinion") or {block: true, reason}. Never rejects, never
  // waits past the deadline. `wait: false` sends and resolves null at once
  // (observe-only events).
  async hook(input, { toolCall = false, wait = true } = {}) {
    const deadline = Date.now() + this.deadlineMs;
    let why;
    try {
      const sock = await this.connection(deadline);
      const id = `${this.harness}-${process.pid}-${this.nextId++}`;
      const frame = {
        type: "hook",
        v: HOOKD_PROTOCOL_VERSION,
        id,
        harness: this.harness,
        deadline_ms: Math.max(1, deadline - Date.now()),
        input,
      };
      if (this.failClosed) frame.fail_closed = "tools";
      const answer = new Promise((resolve) => {
        this.pending.set(id, resolve);
      });
      sock.ref();
      sock.write(JSON.stringify(frame) + "\n");
      if (!wait) {
        answer.then(() => {});
        return null;
      }
      let timer;
      const timeout = new Promise((resolve) => {
        timer = setTimeout(() => resolve(new Error("timeout: no answer before the deadline")), Math.max(1, deadline - Date.now()));
      });
      const got = await Promise.race([answer, timeout]);
      clearTimeout(timer);
      if (got instanceof Error) {
        this.pending.delete(id);
        if (this.pending.size === 0) sock.unref();
        why = got.message;
      } else if (got.type === "error") {
        why = `daemon error ${got.code}: ${got.message}`;
      } else {
        return hookdParseAnswer(got.stdout);
      }
    } catch (e) {
      why = e.message;
    }
    return this.fallback(why, toolCall);
  }

  fallback(why, toolCall) {
    const block = this.failClosed && toolCall;
    // Observe-only events fall back silently: a tool call says it once.
    if (!toolCall) return null;
    this.log(`hookd: ${this.harness} plugin: ${why}; ${block ? "blocked (fail-closed)" : "no opinion"}`);
    if (!block) return null;
    return { block: true, reason: `hookd could not decide (${why}); blocked because the hook is fail-closed` };
  }
}

function hookdConnectReason(e) {
  switch (e.code) {
    case "ENOENT":
      return "no_socket: the daemon is not running";
    case "ECONNREFUSED":
      return "connect_refused: the daemon is not running";
    default:
      return `connect_failed: ${e.message}`;
  }
}

// The daemon's answer (hook_result.stdout): empty is "no opinion",
// else {"block":true,"reason":R}. Anything else is a bug, read as no
// opinion.
function hookdParseAnswer(stdout) {
  if (!stdout || !stdout.trim()) return null;
  try {
    const v = JSON.parse(stdout);
    if (v && v.block === true) return { block: true, reason: String(v.reason || "Blocked by hookd") };
  } catch {
    // fall through
  }
  return null;
}
