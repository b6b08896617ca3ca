#!/usr/bin/env node
// A Node equivalent of `hook-forwarder`, for `cargo bench --bench forwarder`.
//
// It does what the Rust forwarder does on its normal path, so the benchmark
// compares process start-up, not features: connect to the daemon's socket
// ($HOOKD_SOCKET, else $XDG_RUNTIME_DIR/hookd/hookd.sock, else
// /tmp/hookd-$UID/hookd.sock), read the hook JSON from stdin to EOF, check it
// is JSON, send one `hook` frame of protocol v1, read one reply line, write its
// stdout/stderr verbatim and exit with its exit code. On any failure it exits
// 0 with no stdout and prints the forwarder's one fallback line on stderr.
// Not carried over: `--fail-closed`, `--timeout` and per-event deadlines.
//
// Plain Node >= 20, no npm dependencies. Run: node benches/forwarder.js < hook.json
'use strict';

const fs = require('node:fs');
const net = require('node:net');

const DEADLINE_MS = 25000;
const MAX_FRAME = 8 * 1024 * 1024;
const started = Date.now();

function socketPath() {
  if (process.env.HOOKD_SOCKET) return process.env.HOOKD_SOCKET;
  if (process.env.XDG_RUNTIME_DIR) return `${process.env.XDG_RUNTIME_DIR}/hookd/hookd.sock`;
  return `/tmp/hookd-${process.getuid()}/hookd.sock`;
}

const socket = socketPath();
let event = 'unknown';
let finished = false;
let timer = null;

// Writes the answer and lets Node exit once stdout/stderr are flushed.
function finish(code, stdout, stderr) {
  if (finished) return;
  finished = true;
  clearTimeout(timer);
  conn.destroy();
  if (stdout) process.stdout.write(stdout);
  if (stderr) process.stderr.write(stderr);
  process.exitCode = code;
}

function fallback(reason) {
  finish(0, '', `hookd-forwarder: fallback event=${event.replace(/\s/g, '_')} reason=${reason} socket=${socket}\n`);
}

function connectReason(err) {
  switch (err.code) {
    case 'ENOENT': return 'no_socket';
    case 'ECONNREFUSED': return 'connect_refused';
    case 'EACCES': return 'permission_denied';
    case 'EPIPE': case 'ECONNRESET': return 'closed';
    default: return 'connect_failed';
  }
}

// Connect first, as the Rust forwarder does; the connection completes on the
// event loop while stdin is read below.
const conn = net.createConnection(socket);
let connected = false;
let parsedInput = false;
// A connect error seen before stdin is parsed is reported after it, so that
// the fallback line names the event and bad input takes precedence.
let pendingError = null;
conn.on('connect', () => { connected = true; });
conn.on('error', (err) => {
  const reason = connected ? 'io_error' : connectReason(err);
  if (parsedInput) fallback(reason); else pendingError = reason;
});

// Synchronous read: the cheapest way in Node. A non-blocking stdin (EAGAIN)
// is read as a stream instead.
try {
  forward(fs.readFileSync(0));
} catch (err) {
  if (err.code !== 'EAGAIN') {
    fallback('bad_input');
  } else {
    const parts = [];
    process.stdin.on('data', (part) => parts.push(part));
    process.stdin.on('end', () => forward(Buffer.concat(parts)));
    process.stdin.on('error', () => fallback('bad_input'));
  }
}

function forward(input) {
  try {
    const parsed = JSON.parse(input.toString('utf8'));
    if (parsed && typeof parsed.hook_event_name === 'string') event = parsed.hook_event_name;
  } catch {
    return fallback('bad_input');
  }
  parsedInput = true;
  if (pendingError) return fallback(pendingError);
  timer = setTimeout(() => fallback('timeout'), DEADLINE_MS - (Date.now() - started));
  const id = `node-${process.pid.toString(16)}-${process.hrtime.bigint().toString(16)}`;
  const env = {};
  for (const key of Object.keys(process.env).sort()) {
    if (key.startsWith('CLAUDE')) env[key] = process.env[key];
  }
  // In valid JSON a raw CR or LF is whitespace between tokens, so blanking
  // them keeps the value and the frame on one line.
  for (let i = 0; i < input.length; i++) {
    if (input[i] === 0x0a || input[i] === 0x0d) input[i] = 0x20;
  }
  const deadlineMs = Math.max(1, DEADLINE_MS - (Date.now() - started));
  const head = `{"type":"hook","v":1,"id":${JSON.stringify(id)},"harness":"claude-code",`
    + `"deadline_ms":${deadlineMs},"env":${JSON.stringify(env)},"input":`;
  conn.write(Buffer.concat([Buffer.from(head), input, Buffer.from('}\n')]));

  const chunks = [];
  let size = 0;
  conn.on('data', (chunk) => {
    const nl = chunk.indexOf(0x0a);
    chunks.push(nl < 0 ? chunk : chunk.subarray(0, nl));
    size += chunk.length;
    if (nl >= 0) {
      let reply;
      try {
        reply = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return fallback('bad_reply');
      }
      if (reply.type === 'hook_result' && reply.id === id && Number.isInteger(reply.exit_code)
          && typeof reply.stdout === 'string' && typeof reply.stderr === 'string') {
        finish(reply.exit_code, reply.stdout, reply.stderr);
      } else {
        fallback(reply.type === 'error' ? 'daemon_error' : 'bad_reply');
      }
    } else if (size > MAX_FRAME) {
      fallback('bad_reply');
    }
  });
  conn.on('end', () => fallback('closed'));
}
