#!/usr/bin/env python3
"""Scripted mock of the Anthropic Messages API for hookd's end-to-end tests.

The real Claude Code CLI is pointed at this server with
``ANTHROPIC_BASE_URL=http://127.0.0.1:<port>`` and plays a conversation that
the test wrote in advance.  Python 3.11 standard library only.

Usage
-----
    python3 mock_anthropic.py --script SCRIPT.json --record REQUESTS.jsonl \
        [--port-file FILE] [--exit-on-stdin-eof] [--verbose]

* Binds 127.0.0.1 on a free port (port 0), prints ``LISTENING <port>`` on
  stdout and, with ``--port-file``, writes the port there atomically (tmp file
  + rename), so a reader never sees a half-written number.
* Appends every request it receives to ``--record`` as one JSON line, flushed
  before the response is sent::

      {"seq": 0, "method": "POST", "path": "/v1/messages", "query": "beta=true",
       "body": {...parsed JSON or null...}, "reply": {"kind": "turn", "turn": 0}}

  ``body_text`` replaces ``body`` when the body is not JSON.  ``reply`` says
  how the mock answered (``turn`` with its index, ``default``, ``side``,
  ``count_tokens``, ``not_found``, ``empty``) so a failing test can see which
  requests were the main agent loop.
* ``--exit-on-stdin-eof``: exit when stdin reaches EOF.  The Rust harness keeps
  a pipe to our stdin, so the mock dies with the test process even if the test
  is killed before it can clean up.
* SIGTERM / SIGINT shut the server down and exit 0.

Script format
-------------
::

    {
      "turns": [
        {"content": [
            {"type": "text", "text": "I will run the command."},
            {"type": "tool_use", "name": "Bash",
             "input": {"command": "echo hello > out.txt",
                       "description": "Write hello"}}
         ],
         "stop_reason": "tool_use"},
        {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"}
      ],
      "default_text": "done",
      "side_text": "ok"
    }

* ``turns[i]`` answers the main-loop request that already holds ``i``
  ``assistant`` messages.  Counting requests does not work: the CLI sends side
  requests (titles, suggestions, summaries), and some copy the main thread's
  tools and messages, so the mock chooses by conversation state instead.
* ``content`` blocks are ``text`` or ``tool_use``.  A ``tool_use`` block gets
  the id ``toolu_mock_<turn>_<index in content>`` (unique and stable: a side
  request that replays the same turn sees the same ids); an explicit ``"id"``
  in the block overrides it.
* ``stop_reason`` is optional: ``tool_use`` if the turn has a tool_use block,
  else ``end_turn``.
* ``default_text`` (default ``"done"``) answers, with ``end_turn``, any
  main-loop request after the turns have run out.
* ``side_text`` (default ``"ok"``) answers requests that carry no ``tools``
  (the CLI's side requests).

Responses follow ``"stream": true`` in the request: a full SSE sequence
(message_start, content_block_start, content_block_delta with text_delta /
input_json_delta, content_block_stop, message_delta with stop_reason and usage,
message_stop) or one JSON message.  Usage numbers are nonzero so the CLI's
cost and usage accounting has something to show.
``POST /v1/messages/count_tokens`` answers ``{"input_tokens": N}``; any other
path gets a 404 in the API's error shape; nothing the client sends crashes
the server.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import signal
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

MESSAGES_PATH = "/v1/messages"
COUNT_TOKENS_PATH = "/v1/messages/count_tokens"


class ScriptError(ValueError):
    """The script file does not follow the documented format."""


def load_script(path: str) -> dict[str, Any]:
    """Read and validate the script so a typo fails at start-up, not mid-run."""
    with open(path, encoding="utf-8") as f:
        script = json.load(f)
    if not isinstance(script, dict):
        raise ScriptError("script must be a JSON object")
    turns = script.get("turns", [])
    if not isinstance(turns, list):
        raise ScriptError("'turns' must be a list")
    for t, turn in enumerate(turns):
        if not isinstance(turn, dict) or not isinstance(turn.get("content"), list):
            raise ScriptError(f"turns[{t}] must be an object with a 'content' list")
        for i, block in enumerate(turn["content"]):
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                if not isinstance(block.get("text"), str):
                    raise ScriptError(f"turns[{t}].content[{i}]: text block needs 'text'")
            elif kind == "tool_use":
                if not isinstance(block.get("name"), str):
                    raise ScriptError(f"turns[{t}].content[{i}]: tool_use needs 'name'")
                if not isinstance(block.get("input", {}), dict):
                    raise ScriptError(f"turns[{t}].content[{i}]: 'input' must be an object")
            else:
                raise ScriptError(
                    f"turns[{t}].content[{i}]: type must be 'text' or 'tool_use', got {kind!r}"
                )
        stop = turn.get("stop_reason")
        if stop is not None and not isinstance(stop, str):
            raise ScriptError(f"turns[{t}].stop_reason must be a string")
    for key in ("default_text", "side_text"):
        if key in script and not isinstance(script[key], str):
            raise ScriptError(f"'{key}' must be a string")
    return script


def estimate_tokens(n_chars: int) -> int:
    """A rough, always-positive token count (about 4 characters per token)."""
    return max(1, n_chars // 4)


class MockState:
    """Everything the request handlers share: the script and the record file."""

    def __init__(self, script: dict[str, Any], record_path: str, verbose: bool) -> None:
        self.script = script
        self.verbose = verbose
        # A lone surrogate the CLI sends back (after the script sent one)
        # cannot be written as UTF-8; it is recorded as "?".
        self._record = open(record_path, "a", encoding="utf-8", errors="replace")
        self._lock = threading.Lock()
        self._seq = itertools.count()
        self._msg_ids = itertools.count()

    def record(self, entry: dict[str, Any]) -> None:
        """Append one request as a JSON line and flush it at once, so the test
        sees it even if this process is killed right after."""
        with self._lock:
            entry = {"seq": next(self._seq), **entry}
            self._record.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self._record.flush()

    def next_message_id(self) -> str:
        with self._lock:
            return f"msg_mock_{next(self._msg_ids):04d}"

    def close(self) -> None:
        with self._lock:
            self._record.close()

    def plan_reply(self, body: Any) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
        """Choose the answer to a /v1/messages request.

        Returns (reply description for the record, content blocks, stop_reason).
        """
        if not isinstance(body, dict):
            body = {}
        if not body.get("tools"):
            # Side requests (titles, summaries, ...) carry no tools.
            text = self.script.get("side_text", "ok")
            return {"kind": "side"}, [{"type": "text", "text": text}], "end_turn"

        messages = body.get("messages") or []
        turn_index = sum(
            1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant"
        )
        turns = self.script.get("turns", [])
        if turn_index >= len(turns):
            text = self.script.get("default_text", "done")
            return (
                {"kind": "default", "turn": turn_index},
                [{"type": "text", "text": text}],
                "end_turn",
            )

        turn = turns[turn_index]
        blocks: list[dict[str, Any]] = []
        for idx, block in enumerate(turn["content"]):
            if block["type"] == "text":
                blocks.append({"type": "text", "text": block["text"]})
            else:
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": block.get("id", f"toolu_mock_{turn_index}_{idx}"),
                        "name": block["name"],
                        "input": block.get("input", {}),
                    }
                )
        has_tool = any(b["type"] == "tool_use" for b in blocks)
        stop = turn.get("stop_reason") or ("tool_use" if has_tool else "end_turn")
        return {"kind": "turn", "turn": turn_index}, blocks, stop


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def chunks(s: str, size: int) -> list[str]:
    """Split s into pieces of at most `size` characters (at least one piece),
    so clients exercise their delta-accumulation path as with the real API."""
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


def render_stream(message: dict[str, Any]) -> bytes:
    """The SSE event sequence for a complete message, as the real API sends it."""
    start = dict(message, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = dict(message["usage"], output_tokens=1)
    out = [sse("message_start", {"type": "message_start", "message": start})]
    out.append(sse("ping", {"type": "ping"}))
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            empty = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": c} for c in chunks(block["text"], 32)]
        else:
            empty = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [
                {"type": "input_json_delta", "partial_json": c}
                for c in chunks(json.dumps(block["input"]), 24)
            ]
        out.append(
            sse(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": empty},
            )
        )
        for delta in deltas:
            out.append(
                sse(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        out.append(sse("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": message["usage"]["output_tokens"]},
            },
        )
    )
    out.append(sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so the client can keep connections alive; every response sets
    # Content-Length, which keeps framing simple.
    protocol_version = "HTTP/1.1"
    server_version = "mock-anthropic/1"
    state: MockState  # set on the subclass in main()

    # ---- plumbing -------------------------------------------------------

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.state.verbose:
            sys.stderr.write("mock: " + (format % args) + "\n")

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = bytearray()
            while True:
                size_line = self.rfile.readline()
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    # Discard trailers up to the blank line.
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()  # CRLF after each chunk
            raw = bytes(data)
        else:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        return raw

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_mock")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    # ---- dispatch -------------------------------------------------------

    def _handle(self) -> None:
        url = urlsplit(self.path)
        try:
            raw = self._read_body()
        except Exception as exc:  # a malformed body must not kill the server
            raw = b""
            sys.stderr.write(f"mock: could not read body of {self.command} {url.path}: {exc}\n")
        entry: dict[str, Any] = {"method": self.command, "path": url.path, "query": url.query}
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
                entry["body"] = body
            except ValueError:
                entry["body"] = None
                entry["body_text"] = raw.decode("utf-8", "replace")
        else:
            entry["body"] = None

        path = url.path.rstrip("/")
        if self.command == "POST" and path == MESSAGES_PATH:
            reply, blocks, stop = self.state.plan_reply(body)
            entry["reply"] = reply
            self.state.record(entry)
            self._answer_messages(body if isinstance(body, dict) else {}, raw, blocks, stop)
        elif self.command == "POST" and path == COUNT_TOKENS_PATH:
            entry["reply"] = {"kind": "count_tokens"}
            self.state.record(entry)
            self._send_json(200, {"input_tokens": estimate_tokens(len(raw))})
        elif self.command in ("HEAD", "OPTIONS") or path in ("", "/"):
            entry["reply"] = {"kind": "empty"}
            self.state.record(entry)
            self._send_json(200, {})
        else:
            entry["reply"] = {"kind": "not_found"}
            self.state.record(entry)
            self._send_json(
                404,
                {
                    "type": "error",
                    "error": {
                        "type": "not_found_error",
                        "message": f"mock_anthropic: no route for {self.command} {url.path}",
                    },
                },
            )

    def _answer_messages(
        self, body: dict[str, Any], raw: bytes, blocks: list[dict[str, Any]], stop: str
    ) -> None:
        out_chars = sum(len(b.get("text", "")) + len(json.dumps(b.get("input", {}))) for b in blocks)
        message = {
            "id": self.state.next_message_id(),
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or "claude-mock",
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": estimate_tokens(len(raw)),
                "output_tokens": estimate_tokens(out_chars) + 2,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
        if body.get("stream"):
            self._send(200, render_stream(message), "text/event-stream; charset=utf-8")
        else:
            self._send_json(200, message)

    def _safe_handle(self) -> None:
        try:
            self._handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away; nothing to answer
        except Exception as exc:
            sys.stderr.write(f"mock: error handling {self.command} {self.path}: {exc!r}\n")
            try:
                self._send_json(500, {"type": "error", "error": {"type": "api_error", "message": str(exc)}})
            except Exception:
                pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _safe_handle


def write_port_file(path: str, port: int) -> None:
    """Write the port atomically: a reader sees either no file or the whole number."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{port}\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", required=True, help="scripted conversation (JSON)")
    parser.add_argument("--record", required=True, help="append each request here (JSONL)")
    parser.add_argument("--port-file", help="write the bound port here (atomically)")
    parser.add_argument(
        "--exit-on-stdin-eof",
        action="store_true",
        help="shut down when stdin closes (ties our life to the parent's)",
    )
    parser.add_argument("--verbose", action="store_true", help="log requests to stderr")
    args = parser.parse_args(argv)

    try:
        script = load_script(args.script)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"mock_anthropic: bad script {args.script}: {exc}\n")
        return 2

    state = MockState(script, args.record, args.verbose)
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True  # open keep-alive connections must not block exit
    port = server.server_address[1]

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.exit_on_stdin_eof:

        def watch_stdin() -> None:
            # Raw os.read, not sys.stdin: a daemon thread blocked inside a
            # buffered reader holds its lock and makes interpreter shutdown
            # abort ("could not acquire lock ... at interpreter shutdown").
            try:
                while os.read(0, 4096):
                    pass
            except OSError:
                pass
            finally:
                stop.set()

        threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()

    serve = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True)
    serve.start()
    # Publish the port only once the socket is listening (it is, since bind +
    # listen happen in the constructor), port file first so a reader of stdout
    # may also rely on the file.
    if args.port_file:
        write_port_file(args.port_file, port)
    print(f"LISTENING {port}", flush=True)

    # Wait in short slices: signal handlers run on the main thread between
    # bytecodes, and a bounded wait guarantees we get back to check the flag.
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
