#!/usr/bin/env python3
"""A Python equivalent of `hook-forwarder`, for `cargo bench --bench forwarder`.

It does what the Rust forwarder does on its normal path, so the benchmark
compares process start-up, not features: connect to the daemon's socket
($HOOKD_SOCKET, else $XDG_RUNTIME_DIR/hookd/hookd.sock, else
/tmp/hookd-$UID/hookd.sock), read the hook JSON from stdin to EOF, check it is
JSON, send one `hook` frame of protocol v1, read one reply line, write its
stdout/stderr verbatim and exit with its exit code. On any failure it exits 0
with no stdout and prints the forwarder's one fallback line on stderr.
Not carried over: `--fail-closed`, `--timeout` and per-event deadlines.

Standard library only. Run: python3 benches/forwarder.py < hook.json
"""

import json
import os
import socket
import sys
import time

DEADLINE_S = 25.0
MAX_FRAME = 8 * 1024 * 1024
STARTED = time.monotonic()


class Fallback(Exception):
    """The exchange failed; `reason` is the fallback line's `reason=` token."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def socket_path():
    if os.environ.get("HOOKD_SOCKET"):
        return os.environ["HOOKD_SOCKET"]
    if os.environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(os.environ["XDG_RUNTIME_DIR"], "hookd", "hookd.sock")
    return "/tmp/hookd-%d/hookd.sock" % os.getuid()


def remaining():
    left = DEADLINE_S - (time.monotonic() - STARTED)
    if left <= 0:
        raise Fallback("timeout")
    return left


def connect(path):
    """Connects; returns (socket, None) or (None, reason)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
        return sock, None
    except FileNotFoundError:
        reason = "no_socket"
    except ConnectionRefusedError:
        reason = "connect_refused"
    except PermissionError:
        reason = "permission_denied"
    except OSError:
        reason = "connect_failed"
    sock.close()
    return None, reason


def exchange(sock, raw):
    """Sends the hook frame and returns (exit_code, stdout, stderr)."""
    request_id = "py-%x-%x" % (os.getpid(), time.time_ns())
    env = {k: v for k, v in sorted(os.environ.items()) if k.startswith("CLAUDE")}
    deadline_ms = int(remaining() * 1000)
    # In valid JSON a raw CR or LF is whitespace between tokens, so blanking
    # them keeps the value and the frame on one line.
    frame = b"".join(
        [
            b'{"type":"hook","v":1,"id":',
            json.dumps(request_id).encode(),
            b',"harness":"claude-code","deadline_ms":%d,"env":' % deadline_ms,
            json.dumps(env, separators=(",", ":")).encode(),
            b',"input":',
            raw.replace(b"\n", b" ").replace(b"\r", b" "),
            b"}\n",
        ]
    )
    try:
        sock.settimeout(remaining())
        sock.sendall(frame)
        reply = bytearray()
        while True:
            sock.settimeout(remaining())
            chunk = sock.recv(16 * 1024)
            if not chunk:
                raise Fallback("closed")
            scanned = len(reply)
            reply += chunk
            end = reply.find(b"\n", scanned)
            if end >= 0:
                break
            if len(reply) > MAX_FRAME:
                raise Fallback("bad_reply")
    except socket.timeout:
        raise Fallback("timeout") from None
    except (BrokenPipeError, ConnectionResetError):
        raise Fallback("closed") from None
    except OSError:
        raise Fallback("io_error") from None
    try:
        answer = json.loads(reply[:end])
    except ValueError:
        raise Fallback("bad_reply") from None
    if not isinstance(answer, dict):
        raise Fallback("bad_reply")
    if answer.get("type") == "error":
        raise Fallback("daemon_error")
    code, out, err = answer.get("exit_code"), answer.get("stdout"), answer.get("stderr")
    if (
        answer.get("type") != "hook_result"
        or answer.get("id") != request_id
        or not isinstance(code, int)
        or not isinstance(out, str)
        or not isinstance(err, str)
    ):
        raise Fallback("bad_reply")
    return code, out, err


def main():
    path = socket_path()
    # Connect before reading stdin, as the Rust forwarder does.
    sock, connect_error = connect(path)
    raw = sys.stdin.buffer.read()
    event = "unknown"
    try:
        try:
            hook = json.loads(raw)
        except ValueError:
            raise Fallback("bad_input") from None
        if isinstance(hook, dict) and isinstance(hook.get("hook_event_name"), str):
            event = hook["hook_event_name"]
        if connect_error:
            raise Fallback(connect_error)
        code, out, err = exchange(sock, raw)
    except Fallback as failure:
        code, out = 0, ""
        err = "hookd-forwarder: fallback event=%s reason=%s socket=%s\n" % (
            "".join("_" if c.isspace() else c for c in event),
            failure.reason,
            path,
        )
    finally:
        if sock is not None:
            sock.close()
    sys.stdout.buffer.write(out.encode("utf-8", "surrogatepass"))
    sys.stdout.buffer.flush()
    sys.stderr.buffer.write(err.encode("utf-8", "surrogatepass"))
    sys.stderr.buffer.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
