#!/usr/bin/env python3
"""Scripted mocks of the OpenAI Responses API (for Codex CLI) and the Gemini
API (for Gemini CLI), for hookd's agent end-to-end tests.

The real CLI is pointed at this server and plays a conversation the test wrote
in advance.  Python 3.11 standard library only; the same plumbing as
``tests/e2e/mock_anthropic.py``.

Usage
-----
    python3 mock_models.py --api openai|gemini --script SCRIPT.json \
        --record REQUESTS.jsonl [--port-file FILE] [--exit-on-stdin-eof]

* Binds 127.0.0.1 on a free port, writes it to ``--port-file`` atomically and
  prints ``LISTENING <port>``.
* Appends every request to ``--record`` as one JSON line, flushed before the
  answer is sent::

      {"seq": 0, "method": "POST", "path": "/v1/responses", "query": "",
       "body": {...parsed JSON or null...}, "reply": {"kind": "turn", "turn": 0}}

  ``reply.kind`` says how it was answered: ``turn`` (with its index),
  ``default`` (the turns ran out), ``guardian`` (Codex's approval reviewer),
  ``router`` (Gemini's model router, when ``-m`` is not given), ``side``
  (Gemini's other side requests: next-speaker check, summaries),
  ``count_tokens``, ``models``, ``not_found``, or ``egress_refused``.
* **Egress trap.**  The harness also makes this server the CLI's HTTP(S)
  proxy (with loopback in ``NO_PROXY``): anything that tries to leave the
  machine arrives here as a ``CONNECT`` (or an absolute-URI request), is
  recorded with ``reply.kind = "egress_refused"`` and refused with 403, so a
  test can assert that nothing tried.
* ``--exit-on-stdin-eof``: exit when stdin closes (the Rust harness keeps the
  pipe, so the mock dies with the test process).  SIGTERM/SIGINT exit 0.

Script format
-------------
::

    {"turns": [
        {"content": [
            {"type": "text", "text": "I will run it."},
            {"type": "tool_call", "name": "exec_command",
             "input": {"cmd": "echo hello > out.txt"}},
            {"type": "custom_tool_call", "name": "apply_patch",
             "input": "*** Begin Patch\\n...\\n*** End Patch\\n"}
        ]},
        {"content": [{"type": "text", "text": "done"}]}
     ],
     "default_text": "done", "side_text": "ok"}

* ``tool_call`` is a function call: OpenAI ``function_call`` (``arguments``
  is the JSON of ``input``) or Gemini ``functionCall`` (``args``).
  ``custom_tool_call`` is OpenAI's freeform tool call (Codex's
  ``apply_patch``; ``input`` is a string); the Gemini API has none.
* Call ids are ``call_mock_<turn>_<index in content>``.  Both CLIs echo them
  in the next request (``function_call_output.call_id``,
  ``functionResponse.id``), and that is how a request is matched to its turn:
  **turn = 1 + the highest turn named by a call id in the request**, else 0.
  Counting requests does not work: Codex sends reviewer requests and Gemini
  side requests, and a Stop/AfterAgent hook that keeps the agent working
  sends the conversation again.
* ``default_text`` (default ``"done"``) answers once the turns have run out.

OpenAI answers are SSE (``response.created``, ``response.output_item.added`` /
``.done`` per item with ``response.output_text.delta`` for text,
``response.completed`` with usage).  Gemini answers are SSE for
``:streamGenerateContent`` (one chunk per part; the last carries
``finishReason`` and ``usageMetadata``) and JSON for ``:generateContent``.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import re
import signal
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

CALL_ID = re.compile(r"call_mock_(\d+)_\d+")
GUARDIAN_ANSWER = {
    "outcome": "allow",
    "risk_level": "low",
    "user_authorization": "high",
    "rationale": "mock reviewer: allowed",
}


class ScriptError(ValueError):
    """The script does not follow the documented format."""


def load_script(path: str, api: str) -> dict[str, Any]:
    """Read and validate the script, so a typo fails at start-up."""
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
            where = f"turns[{t}].content[{i}]"
            if kind == "text":
                if not isinstance(block.get("text"), str):
                    raise ScriptError(f"{where}: a text block needs 'text'")
            elif kind == "tool_call":
                if not isinstance(block.get("name"), str):
                    raise ScriptError(f"{where}: a tool_call needs 'name'")
                if not isinstance(block.get("input", {}), dict):
                    raise ScriptError(f"{where}: a tool_call's 'input' must be an object")
            elif kind == "custom_tool_call":
                if api != "openai":
                    raise ScriptError(f"{where}: custom_tool_call exists only in the OpenAI API")
                if not isinstance(block.get("name"), str) or not isinstance(block.get("input"), str):
                    raise ScriptError(f"{where}: a custom_tool_call needs 'name' and a string 'input'")
            else:
                raise ScriptError(
                    f"{where}: type must be text, tool_call or custom_tool_call, got {kind!r}"
                )
    for key in ("default_text", "side_text"):
        if key in script and not isinstance(script[key], str):
            raise ScriptError(f"'{key}' must be a string")
    return script


def tokens(n_chars: int) -> int:
    """A rough, always-positive token count (about 4 characters per token)."""
    return max(1, n_chars // 4)


def turn_of(body: Any) -> int:
    """1 + the highest scripted turn whose call id the request echoes, else 0."""
    seen = [int(m.group(1)) for m in CALL_ID.finditer(json.dumps(body))]
    return max(seen) + 1 if seen else 0


class State:
    """What the handlers share: the script, the record file, id counters."""

    def __init__(self, api: str, script: dict[str, Any], record_path: str) -> None:
        self.api = api
        self.script = script
        self._record = open(record_path, "a", encoding="utf-8", errors="replace")
        self._lock = threading.Lock()
        self._seq = itertools.count()
        self._ids = itertools.count()

    def record(self, entry: dict[str, Any]) -> None:
        """Append one request and flush it, so the test sees it even if we are
        killed right after."""
        with self._lock:
            entry = {"seq": next(self._seq), **entry}
            self._record.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self._record.flush()

    def next_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}_mock_{next(self._ids):04d}"

    def close(self) -> None:
        with self._lock:
            self._record.close()

    def plan(self, body: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """The reply description and the scripted blocks for a main-loop request."""
        turn = turn_of(body)
        turns = self.script.get("turns", [])
        if turn >= len(turns):
            text = self.script.get("default_text", "done")
            return {"kind": "default", "turn": turn}, [{"type": "text", "text": text}]
        blocks = []
        for idx, block in enumerate(turns[turn]["content"]):
            block = dict(block)
            if block["type"] != "text":
                block["call_id"] = f"call_mock_{turn}_{idx}"
            blocks.append(block)
        return {"kind": "turn", "turn": turn}, blocks


def sse(event: str | None, data: dict[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


# ---- OpenAI Responses API --------------------------------------------------


def is_guardian(body: dict[str, Any]) -> bool:
    """Codex's approval reviewer: a request on the same endpoint with a
    ``guardian:`` cache key and a JSON-schema output format."""
    key = body.get("prompt_cache_key")
    fmt = (body.get("text") or {}).get("format") or {}
    return (isinstance(key, str) and key.startswith("guardian:")) or fmt.get("type") == "json_schema"


def openai_items(state: State, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items = []
    for block in blocks:
        if block["type"] == "text":
            items.append(
                {
                    "type": "message",
                    "role": "assistant",
                    "id": state.next_id("msg"),
                    "status": "completed",
                    "content": [{"type": "output_text", "text": block["text"], "annotations": []}],
                }
            )
        elif block["type"] == "tool_call":
            items.append(
                {
                    "type": "function_call",
                    "id": state.next_id("fc"),
                    "status": "completed",
                    "name": block["name"],
                    "arguments": json.dumps(block.get("input", {})),
                    "call_id": block["call_id"],
                }
            )
        else:
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": state.next_id("ctc"),
                    "status": "completed",
                    "name": block["name"],
                    "input": block["input"],
                    "call_id": block["call_id"],
                }
            )
    return items


def openai_stream(state: State, body: dict[str, Any], raw: bytes, items: list[dict[str, Any]]) -> bytes:
    response_id = state.next_id("resp")
    model = body.get("model") or "gpt-mock"
    out = [
        sse(
            "response.created",
            {"type": "response.created", "response": {"id": response_id, "model": model, "status": "in_progress"}},
        )
    ]
    out_chars = 0
    for index, item in enumerate(items):
        added = dict(item, status="in_progress")
        if item["type"] == "message":
            added["content"] = []
        out.append(sse("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": added}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            out_chars += len(text)
            out.append(
                sse(
                    "response.output_text.delta",
                    {"type": "response.output_text.delta", "item_id": item["id"], "output_index": index, "content_index": 0, "delta": text},
                )
            )
        else:
            out_chars += len(item.get("arguments") or item.get("input") or "")
        out.append(sse("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item}))
    usage = {
        "input_tokens": tokens(len(raw)),
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": tokens(out_chars) + 2,
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
    out.append(
        sse(
            "response.completed",
            {
                "type": "response.completed",
                "response": {"id": response_id, "model": model, "status": "completed", "output": items, "usage": usage},
            },
        )
    )
    return b"".join(out)


# ---- Gemini API ------------------------------------------------------------


def gemini_parts(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    parts = []
    for block in blocks:
        if block["type"] == "text":
            parts.append({"text": block["text"]})
        else:
            parts.append({"functionCall": {"id": block["call_id"], "name": block["name"], "args": block.get("input", {})}})
    return parts


def gemini_usage(raw: bytes, parts: list[dict[str, Any]]) -> dict[str, int]:
    prompt = tokens(len(raw))
    out = tokens(len(json.dumps(parts))) + 2
    return {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out}


def gemini_chunk(parts: list[dict[str, Any]], last: bool, usage: dict[str, int]) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-mock"}
    if last:
        candidate["finishReason"] = "STOP"
        chunk["usageMetadata"] = usage
    return chunk


def gemini_side_answer(state: State, body: dict[str, Any]) -> tuple[str, str]:
    """(reply kind, text) for a Gemini side request.  Those that set a
    response schema want JSON: the model router (without ``-m``) is told the
    task is simple (the flash model), the next-speaker check that the user
    speaks next.  A router that gets anything else retries for minutes."""
    config = body.get("generationConfig") or {}
    schema = json.dumps(config.get("responseJsonSchema") or config.get("responseSchema") or {})
    if "complexity_score" in schema:
        return "router", json.dumps({"complexity_reasoning": "mock: simple", "complexity_score": 10})
    if "model_choice" in schema:
        return "router", json.dumps({"reasoning": "mock: simple", "model_choice": "flash"})
    if "next_speaker" in schema:
        return "side", json.dumps({"reasoning": "mock: the turn is complete", "next_speaker": "user"})
    return "side", state.script.get("side_text", "ok")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mock-models/1"
    state: State  # set on the subclass in main()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            raw = bytes(data)
        else:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
        encoding = self.headers.get("Content-Encoding", "").lower()
        if encoding == "gzip":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        elif encoding == "zstd":
            raise ValueError("zstd request bodies are not supported by this mock")
        return raw

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def _send_json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    def _refuse_egress(self) -> None:
        self.state.record(
            {"method": self.command, "path": self.path, "query": "", "body": None, "reply": {"kind": "egress_refused"}}
        )
        self.close_connection = True
        self._send(403, b"hookd test mock: no egress\n", "text/plain")

    def _handle(self) -> None:
        # A proxy request: CONNECT host:port, or an absolute URI.
        if self.command == "CONNECT" or self.path.startswith(("http://", "https://")):
            self._refuse_egress()
            return
        url = urlsplit(self.path)
        try:
            raw = self._read_body()
        except Exception as exc:  # a malformed body must not kill the server
            raw = b""
            sys.stderr.write(f"mock: could not read body of {self.command} {url.path}: {exc}\n")
        entry: dict[str, Any] = {"method": self.command, "path": url.path, "query": url.query, "body": None}
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
                entry["body"] = body
            except ValueError:
                entry["body_text"] = raw.decode("utf-8", "replace")
        if not isinstance(body, dict):
            body = {}
        path = url.path.rstrip("/")
        if self.state.api == "openai":
            self._openai(entry, path, body, raw)
        else:
            self._gemini(entry, path, body, raw)

    def _openai(self, entry: dict[str, Any], path: str, body: dict[str, Any], raw: bytes) -> None:
        if self.command == "POST" and path.endswith("/responses"):
            if is_guardian(body):
                entry["reply"] = {"kind": "guardian"}
                blocks = [{"type": "text", "text": json.dumps(GUARDIAN_ANSWER)}]
            else:
                entry["reply"], blocks = self.state.plan(body)
            self.state.record(entry)
            items = openai_items(self.state, blocks)
            self._send(200, openai_stream(self.state, body, raw, items), "text/event-stream")
        elif self.command == "GET" and path.endswith("/models"):
            entry["reply"] = {"kind": "models"}
            self.state.record(entry)
            self._send_json(200, {"object": "list", "data": [], "models": []})
        else:
            self._not_found(entry)

    def _gemini(self, entry: dict[str, Any], path: str, body: dict[str, Any], raw: bytes) -> None:
        if self.command == "POST" and path.endswith(":streamGenerateContent"):
            entry["reply"], blocks = self.state.plan(body)
            self.state.record(entry)
            parts = gemini_parts(blocks)
            usage = gemini_usage(raw, parts)
            chunks = [
                sse(None, gemini_chunk([part], i == len(parts) - 1, usage)) for i, part in enumerate(parts)
            ]
            self._send(200, b"".join(chunks), "text/event-stream")
        elif self.command == "POST" and path.endswith(":generateContent"):
            kind, text = gemini_side_answer(self.state, body)
            entry["reply"] = {"kind": kind}
            self.state.record(entry)
            parts = [{"text": text}]
            self._send_json(200, gemini_chunk(parts, True, gemini_usage(raw, parts)))
        elif self.command == "POST" and path.endswith(":countTokens"):
            entry["reply"] = {"kind": "count_tokens"}
            self.state.record(entry)
            self._send_json(200, {"totalTokens": tokens(len(raw))})
        else:
            self._not_found(entry)

    def _not_found(self, entry: dict[str, Any]) -> None:
        entry["reply"] = {"kind": "not_found"}
        self.state.record(entry)
        message = f"mock_models: no route for {self.command} {entry['path']}"
        self._send_json(404, {"error": {"code": 404, "message": message, "status": "NOT_FOUND"}})

    def _safe_handle(self) -> None:
        try:
            self._handle()
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as exc:
            sys.stderr.write(f"mock: error handling {self.command} {self.path}: {exc!r}\n")
            try:
                self._send_json(500, {"error": {"code": 500, "message": str(exc)}})
            except Exception:
                pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_CONNECT = _safe_handle


def write_port_file(path: str, port: int) -> None:
    """Write the port atomically: a reader sees no file or the whole number."""
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{port}\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", required=True, choices=["openai", "gemini"])
    parser.add_argument("--script", required=True, help="scripted conversation (JSON)")
    parser.add_argument("--record", required=True, help="append each request here (JSONL)")
    parser.add_argument("--port-file", help="write the bound port here (atomically)")
    parser.add_argument("--exit-on-stdin-eof", action="store_true")
    args = parser.parse_args(argv)

    try:
        script = load_script(args.script, args.api)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"mock_models: bad script {args.script}: {exc}\n")
        return 2

    state = State(args.api, script, args.record)
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    port = server.server_address[1]

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    if args.exit_on_stdin_eof:

        def watch_stdin() -> None:
            # Raw os.read: a daemon thread blocked in a buffered reader would
            # hold its lock and abort interpreter shutdown.
            try:
                while os.read(0, 4096):
                    pass
            except OSError:
                pass
            finally:
                stop.set()

        threading.Thread(target=watch_stdin, name="stdin-watch", daemon=True).start()

    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    if args.port_file:
        write_port_file(args.port_file, port)
    print(f"LISTENING {port}", flush=True)
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    state.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
