#!/usr/bin/env python3
"""Scripted mock of the model APIs the agent CLIs speak, for hookd's
end-to-end tests: the Anthropic Messages API (Claude Code), the OpenAI
Responses API (Codex CLI), the Gemini API (Gemini CLI) and the OpenAI Chat
Completions API (the Pi coding agent's ``openai-completions``).

The real CLI is pointed at this server and plays a conversation the test
wrote in advance.  Python 3.11 standard library only.  One module serves
every API: the script format, the request record, the HTTP plumbing and the
egress trap are shared; what differs per API is a ``Flavour`` (how a request
is matched to its turn, the call ids, the routes and the wire format of an
answer).  A new API is one more ``Flavour`` subclass in ``FLAVOURS``.

Usage
-----
    python3 mock_models.py --api anthropic|openai|gemini|chat --script SCRIPT.json \
        --record REQUESTS.jsonl [--port-file FILE] [--exit-on-stdin-eof] [--verbose]

(``tests/e2e/mock_anthropic.py`` and ``tests/agents/mock_models.py`` are
the older entry points; they run this module with their API.)

* Binds 127.0.0.1 on a free port (port 0), prints ``LISTENING <port>`` on
  stdout and, with ``--port-file``, writes the port there atomically (tmp
  file + rename), so a reader never sees a half-written number.
* Appends every request to ``--record`` as one JSON line, flushed before the
  answer is sent::

      {"seq": 0, "method": "POST", "path": "/v1/messages", "query": "beta=true",
       "body": {...parsed JSON or null...}, "reply": {"kind": "turn", "turn": 0}}

  ``body_text`` is added when the body is not JSON.  ``reply.kind`` says how
  it was answered: ``turn`` (with its index), ``default`` (the turns ran
  out), ``side`` (a side request: titles, summaries, Gemini's next-speaker
  check), ``guardian`` (Codex's approval reviewer), ``router`` (Gemini's
  model router, when ``-m`` is not given), ``count_tokens``, ``models``,
  ``empty``, ``not_found``, or ``egress_refused``.
* **Egress trap.**  A harness may also make this server the CLI's HTTP(S)
  proxy (with loopback in ``NO_PROXY``): anything that tries to leave the
  machine arrives here as a ``CONNECT`` (or an absolute-URI request), is
  recorded with ``reply.kind = "egress_refused"`` and refused with 403, so a
  test can assert that nothing tried.
* ``--exit-on-stdin-eof``: exit when stdin closes (the Rust harness keeps
  the pipe, so the mock dies with the test process even if the test is
  killed before it can clean up).  SIGTERM / SIGINT exit 0.

Script format
-------------
One format for every API::

    {"turns": [
        {"content": [
            {"type": "text", "text": "I will run it."},
            {"type": "tool_call", "name": "Bash",
             "input": {"command": "echo hello > out.txt"}}
         ]},
        {"content": [{"type": "text", "text": "done"}]}
     ],
     "default_text": "done", "side_text": "ok"}

* ``tool_call`` is a function call: Anthropic ``tool_use``, OpenAI
  ``function_call`` (``arguments`` is the JSON of ``input``) or Gemini
  ``functionCall`` (``args``).  ``tool_use`` is accepted as its other name.
  ``custom_tool_call`` is OpenAI's freeform tool call (Codex's
  ``apply_patch``; ``input`` is a string); the other APIs have none.
* Call ids: Anthropic ``toolu_mock_<turn>_<index in content>``, the others
  ``call_mock_<turn>_<index>``; an explicit ``"id"`` in the block overrides
  it.  Ids are stable, so a request that replays a turn sees the same ids.
* Which turn answers a request: counting requests does not work (the CLIs
  send side and reviewer requests, and a Stop hook that keeps the agent
  working sends the conversation again), so the mock reads the
  conversation: Anthropic: the number of ``assistant`` messages in it;
  OpenAI (Responses and Chat) and Gemini: 1 + the highest turn named by a
  call id it echoes,
  else 0 (Gemini: else the number of ``model`` turns in it, for clients
  that echo no call ids, such as the Pi coding agent's).
* ``stop_reason`` (Anthropic only, optional): ``tool_use`` if the turn has
  a tool call, else ``end_turn``.
* ``side_replies`` (Anthropic only, optional): scripted answers to side
  requests, as ``[{"match": "rm -rf", "text": "{...}", "delay_ms": 0,
  "status": 500}]``: the first whose ``match`` occurs in the request's JSON
  answers (after ``delay_ms``; with ``status``, an API error of that status
  whose message is ``text``); the record's ``reply`` gets ``side_reply``
  (its index).  hookd's judge and narrator ask such requests.
* ``default_text`` (default ``"done"``) answers once the turns have run out;
  ``side_text`` (default ``"ok"``) answers side requests (Anthropic: those
  with no ``tools``).

Wire formats.  Anthropic: ``POST /v1/messages`` answers SSE when the request
says ``"stream": true`` (message_start, content_block_start /
content_block_delta with text_delta or input_json_delta / content_block_stop,
message_delta with stop_reason and usage, message_stop), else one JSON
message; ``/v1/messages/count_tokens`` answers ``{"input_tokens": N}``.
OpenAI: ``POST …/responses`` answers SSE (``response.created``,
``response.output_item.added`` / ``.done`` per item with
``response.output_text.delta`` for text, ``response.completed`` with usage).
Gemini: SSE for ``:streamGenerateContent`` (one chunk per part; the last
carries ``finishReason`` and ``usageMetadata``), JSON for
``:generateContent``.  Usage numbers are nonzero.  Any other path gets a 404
in the API's error shape; nothing the client sends crashes the server.
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
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

TOOL_CALL_TYPES = ("tool_call", "tool_use")


class ScriptError(ValueError):
    """The script does not follow the documented format."""


def side_reply(script: dict[str, Any], body: Any) -> tuple[int, dict[str, Any]] | None:
    """The first of ``side_replies`` whose ``match`` occurs in the request's
    JSON (an empty or absent ``match`` matches any side request), with its
    index."""
    text = json.dumps(body, ensure_ascii=False)
    for i, reply in enumerate(script.get("side_replies", [])):
        if reply.get("match", "") in text:
            return i, reply
    return None


def tokens(n_chars: int) -> int:
    """A rough, always-positive token count (about 4 characters per token)."""
    return max(1, n_chars // 4)


def sse(event: str | None, data: dict[str, Any]) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def chunks(s: str, size: int) -> list[str]:
    """Split s into pieces of at most `size` characters (at least one piece),
    so clients exercise their delta-accumulation path as with the real API."""
    return [s[i : i + size] for i in range(0, len(s), size)] or [""]


# ---- the script ------------------------------------------------------------


def load_script(path: str, flavour: "Flavour") -> dict[str, Any]:
    """Read and validate the script, so a typo fails at start-up, not mid-run."""
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
            elif kind in TOOL_CALL_TYPES:
                if not isinstance(block.get("name"), str):
                    raise ScriptError(f"{where}: a {kind} needs 'name'")
                if not isinstance(block.get("input", {}), dict):
                    raise ScriptError(f"{where}: a {kind}'s 'input' must be an object")
            elif kind == "custom_tool_call":
                if not flavour.custom_tool_calls:
                    raise ScriptError(f"{where}: custom_tool_call exists only in the OpenAI API")
                if not isinstance(block.get("name"), str) or not isinstance(block.get("input"), str):
                    raise ScriptError(f"{where}: a custom_tool_call needs 'name' and a string 'input'")
            else:
                raise ScriptError(
                    f"{where}: type must be text, tool_call (tool_use) or custom_tool_call, got {kind!r}"
                )
        stop = turn.get("stop_reason")
        if stop is not None and not isinstance(stop, str):
            raise ScriptError(f"turns[{t}].stop_reason must be a string")
    for key in ("default_text", "side_text"):
        if key in script and not isinstance(script[key], str):
            raise ScriptError(f"'{key}' must be a string")
    replies = script.get("side_replies", [])
    if not isinstance(replies, list):
        raise ScriptError("'side_replies' must be a list")
    for i, r in enumerate(replies):
        if not isinstance(r, dict) or not isinstance(r.get("text"), str):
            raise ScriptError(f"side_replies[{i}] needs a string 'text'")
        if not isinstance(r.get("match", ""), str):
            raise ScriptError(f"side_replies[{i}].match must be a string")
        if not isinstance(r.get("delay_ms", 0), int):
            raise ScriptError(f"side_replies[{i}].delay_ms must be an integer")
        if "status" in r and not isinstance(r["status"], int):
            raise ScriptError(f"side_replies[{i}].status must be an integer")
    return script


class State:
    """What the handlers share: the script, the record file, id counters."""

    def __init__(self, flavour: "Flavour", script: dict[str, Any], record_path: str, verbose: bool) -> None:
        self.flavour = flavour
        self.script = script
        self.verbose = verbose
        # A lone surrogate the CLI sends back (after the script sent one)
        # cannot be written as UTF-8; it is recorded as "?".
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

    def plan(self, body: Any) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any] | None]:
        """The reply description, the scripted blocks (tool calls with their
        ``call_id``) and the scripted turn (None once they ran out) for a
        main-loop request."""
        turn = self.flavour.turn_of(body)
        turns = self.script.get("turns", [])
        if turn >= len(turns):
            text = self.script.get("default_text", "done")
            return {"kind": "default", "turn": turn}, [{"type": "text", "text": text}], None
        blocks = []
        for idx, block in enumerate(turns[turn]["content"]):
            block = dict(block)
            if block["type"] == "tool_use":
                block["type"] = "tool_call"
            if block["type"] != "text":
                block["call_id"] = block.get("id", f"{self.flavour.call_id_prefix}_{turn}_{idx}")
            blocks.append(block)
        return {"kind": "turn", "turn": turn}, blocks, turns[turn]


# ---- the flavours ----------------------------------------------------------


class Flavour:
    """What one model API does differently.  ``route`` answers a request
    (recording it first) and returns False for a path it does not serve."""

    name = ""
    server_version = "mock-models/1"
    call_id_prefix = "call_mock"
    custom_tool_calls = False

    def turn_of(self, body: Any) -> int:
        """1 + the highest scripted turn whose call id the request echoes, else 0."""
        pattern = re.escape(self.call_id_prefix) + r"_(\d+)_\d+"
        seen = [int(m.group(1)) for m in re.finditer(pattern, json.dumps(body))]
        return max(seen) + 1 if seen else 0

    def route(self, h: "Handler", entry: dict[str, Any], path: str, body: dict[str, Any], raw: bytes) -> bool:
        raise NotImplementedError

    def error(self, status: int, message: str) -> dict[str, Any]:
        """An error body in the API's shape."""
        return {"error": {"code": status, "message": message}}


class Anthropic(Flavour):
    """The Anthropic Messages API (Claude Code)."""

    name = "anthropic"
    server_version = "mock-anthropic/1"
    call_id_prefix = "toolu_mock"

    def turn_of(self, body: Any) -> int:
        # The turn is the number of assistant messages so far: the CLI's
        # side requests copy the thread, so counting requests fails.
        messages = body.get("messages") or [] if isinstance(body, dict) else []
        return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")

    def route(self, h: "Handler", entry: dict[str, Any], path: str, body: dict[str, Any], raw: bytes) -> bool:
        state = h.state
        if h.command == "POST" and path == "/v1/messages":
            if not body.get("tools"):
                # Side requests (titles, summaries, ...) carry no tools.
                entry["reply"] = {"kind": "side"}
                text = state.script.get("side_text", "ok")
                scripted = side_reply(state.script, body)
                if scripted is not None:
                    index, reply = scripted
                    entry["reply"]["side_reply"] = index
                    if reply.get("delay_ms"):
                        time.sleep(reply["delay_ms"] / 1000)
                    if "status" in reply:
                        state.record(entry)
                        h.send_json(reply["status"], self.error(reply["status"], reply["text"]))
                        return True
                    text = reply["text"]
                blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
                stop = "end_turn"
            else:
                entry["reply"], blocks, turn = state.plan(body)
                has_tool = any(b["type"] != "text" for b in blocks)
                stop = (turn or {}).get("stop_reason") or ("tool_use" if has_tool else "end_turn")
            state.record(entry)
            self._answer(h, body, raw, blocks, stop)
        elif h.command == "POST" and path == "/v1/messages/count_tokens":
            entry["reply"] = {"kind": "count_tokens"}
            state.record(entry)
            h.send_json(200, {"input_tokens": tokens(len(raw))})
        elif h.command in ("HEAD", "OPTIONS") or path == "":
            entry["reply"] = {"kind": "empty"}
            state.record(entry)
            h.send_json(200, {})
        else:
            return False
        return True

    def error(self, status: int, message: str) -> dict[str, Any]:
        kind = "not_found_error" if status == 404 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}

    def _answer(self, h: "Handler", body: dict[str, Any], raw: bytes, blocks: list[dict[str, Any]], stop: str) -> None:
        content = []
        for b in blocks:
            if b["type"] == "text":
                content.append({"type": "text", "text": b["text"]})
            else:
                content.append({"type": "tool_use", "id": b["call_id"], "name": b["name"], "input": b.get("input", {})})
        out_chars = sum(len(b.get("text", "")) + len(json.dumps(b.get("input", {}))) for b in content)
        message = {
            "id": h.state.next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model") or "claude-mock",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": tokens(len(raw)),
                "output_tokens": tokens(out_chars) + 2,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }
        if body.get("stream"):
            h.send(200, self._stream(message), "text/event-stream; charset=utf-8")
        else:
            h.send_json(200, message)

    @staticmethod
    def _stream(message: dict[str, Any]) -> bytes:
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
                    {"type": "input_json_delta", "partial_json": c} for c in chunks(json.dumps(block["input"]), 24)
                ]
            out.append(
                sse("content_block_start", {"type": "content_block_start", "index": index, "content_block": empty})
            )
            for delta in deltas:
                out.append(sse("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
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


GUARDIAN_ANSWER = {
    "outcome": "allow",
    "risk_level": "low",
    "user_authorization": "high",
    "rationale": "mock reviewer: allowed",
}


class OpenAIResponses(Flavour):
    """The OpenAI Responses API (Codex CLI)."""

    name = "openai"
    custom_tool_calls = True

    def route(self, h: "Handler", entry: dict[str, Any], path: str, body: dict[str, Any], raw: bytes) -> bool:
        state = h.state
        if h.command == "POST" and path.endswith("/responses"):
            if self._is_guardian(body):
                entry["reply"] = {"kind": "guardian"}
                blocks = [{"type": "text", "text": json.dumps(GUARDIAN_ANSWER)}]
            else:
                entry["reply"], blocks, _ = state.plan(body)
            state.record(entry)
            items = self._items(state, blocks)
            h.send(200, self._stream(state, body, raw, items), "text/event-stream")
        elif h.command == "GET" and path.endswith("/models"):
            entry["reply"] = {"kind": "models"}
            state.record(entry)
            h.send_json(200, {"object": "list", "data": [], "models": []})
        else:
            return False
        return True

    @staticmethod
    def _is_guardian(body: dict[str, Any]) -> bool:
        """Codex's approval reviewer: a request on the same endpoint with a
        ``guardian:`` cache key and a JSON-schema output format."""
        key = body.get("prompt_cache_key")
        fmt = (body.get("text") or {}).get("format") or {}
        return (isinstance(key, str) and key.startswith("guardian:")) or fmt.get("type") == "json_schema"

    @staticmethod
    def _items(state: State, blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
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

    @staticmethod
    def _stream(state: State, body: dict[str, Any], raw: bytes, items: list[dict[str, Any]]) -> bytes:
        response_id = state.next_id("resp")
        model = body.get("model") or "gpt-mock"
        created = {"id": response_id, "model": model, "status": "in_progress"}
        out = [sse("response.created", {"type": "response.created", "response": created})]
        out_chars = 0
        for index, item in enumerate(items):
            added = dict(item, status="in_progress")
            if item["type"] == "message":
                added["content"] = []
            out.append(
                sse("response.output_item.added", {"type": "response.output_item.added", "output_index": index, "item": added})
            )
            if item["type"] == "message":
                text = item["content"][0]["text"]
                out_chars += len(text)
                delta = {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": text,
                }
                out.append(sse("response.output_text.delta", delta))
            else:
                out_chars += len(item.get("arguments") or item.get("input") or "")
            out.append(
                sse("response.output_item.done", {"type": "response.output_item.done", "output_index": index, "item": item})
            )
        usage = {
            "input_tokens": tokens(len(raw)),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": tokens(out_chars) + 2,
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        done = {"id": response_id, "model": model, "status": "completed", "output": items, "usage": usage}
        out.append(sse("response.completed", {"type": "response.completed", "response": done}))
        return b"".join(out)


class Gemini(Flavour):
    """The Gemini API (Gemini CLI)."""

    name = "gemini"

    def turn_of(self, body: Any) -> int:
        turn = super().turn_of(body)
        if turn == 0 and isinstance(body, dict):
            # Pi's Gemini client sends its calls back without their ids:
            # the turns the model took so far say where it is.
            contents = body.get("contents") or []
            turn = sum(1 for c in contents if isinstance(c, dict) and c.get("role") == "model")
        return turn

    def route(self, h: "Handler", entry: dict[str, Any], path: str, body: dict[str, Any], raw: bytes) -> bool:
        state = h.state
        if h.command == "POST" and path.endswith(":streamGenerateContent"):
            entry["reply"], blocks, _ = state.plan(body)
            state.record(entry)
            parts = self._parts(blocks)
            usage = self._usage(raw, parts)
            out = [sse(None, self._chunk([part], i == len(parts) - 1, usage)) for i, part in enumerate(parts)]
            h.send(200, b"".join(out), "text/event-stream")
        elif h.command == "POST" and path.endswith(":generateContent"):
            kind, text = self._side_answer(state, body)
            entry["reply"] = {"kind": kind}
            state.record(entry)
            parts = [{"text": text}]
            h.send_json(200, self._chunk(parts, True, self._usage(raw, parts)))
        elif h.command == "POST" and path.endswith(":countTokens"):
            entry["reply"] = {"kind": "count_tokens"}
            state.record(entry)
            h.send_json(200, {"totalTokens": tokens(len(raw))})
        else:
            return False
        return True

    def error(self, status: int, message: str) -> dict[str, Any]:
        if status == 404:
            return {"error": {"code": 404, "message": message, "status": "NOT_FOUND"}}
        return super().error(status, message)

    @staticmethod
    def _parts(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        parts = []
        for block in blocks:
            if block["type"] == "text":
                parts.append({"text": block["text"]})
            else:
                call = {"id": block["call_id"], "name": block["name"], "args": block.get("input", {})}
                parts.append({"functionCall": call})
        return parts

    @staticmethod
    def _usage(raw: bytes, parts: list[dict[str, Any]]) -> dict[str, int]:
        prompt = tokens(len(raw))
        out = tokens(len(json.dumps(parts))) + 2
        return {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out}

    @staticmethod
    def _chunk(parts: list[dict[str, Any]], last: bool, usage: dict[str, int]) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        chunk: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-mock"}
        if last:
            candidate["finishReason"] = "STOP"
            chunk["usageMetadata"] = usage
        return chunk

    @staticmethod
    def _side_answer(state: State, body: dict[str, Any]) -> tuple[str, str]:
        """(reply kind, text) for a side request.  Those that set a response
        schema want JSON: the model router (without ``-m``) is told the task
        is simple (the flash model), the next-speaker check that the user
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


class ChatCompletions(Flavour):
    """The OpenAI Chat Completions API (the Pi coding agent's
    ``openai-completions``, and the many endpoints that copy it)."""

    name = "chat"

    def route(self, h: "Handler", entry: dict[str, Any], path: str, body: dict[str, Any], raw: bytes) -> bool:
        state = h.state
        if h.command != "POST" or not path.endswith("/chat/completions"):
            return False
        entry["reply"], blocks, _ = state.plan(body)
        state.record(entry)
        text = "".join(b["text"] for b in blocks if b["type"] == "text")
        calls = [
            {
                "index": i,
                "id": b["call_id"],
                "type": "function",
                "function": {"name": b["name"], "arguments": json.dumps(b.get("input", {}))},
            }
            for i, b in enumerate(b for b in blocks if b["type"] != "text")
        ]
        prompt = tokens(len(raw))
        out_tokens = tokens(len(text) + len(json.dumps(calls))) + 2
        usage = {"prompt_tokens": prompt, "completion_tokens": out_tokens, "total_tokens": prompt + out_tokens}
        finish = "tool_calls" if calls else "stop"
        base = {"id": state.next_id("chatcmpl"), "object": "chat.completion.chunk", "created": 0, "model": body.get("model")}
        chunks = []
        if text:
            chunks.append({**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]})
        if calls:
            chunks.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": calls}, "finish_reason": None}]})
        chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        chunks.append({**base, "choices": [], "usage": usage})
        out = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"
        h.send(200, out, "text/event-stream")
        return True


FLAVOURS: dict[str, type[Flavour]] = {f.name: f for f in (Anthropic, OpenAIResponses, Gemini, ChatCompletions)}


# ---- the HTTP plumbing -----------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 so the client can keep connections alive; every response sets
    # Content-Length, which keeps framing simple.
    protocol_version = "HTTP/1.1"
    state: State  # set on the subclass in main()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.state.verbose:
            sys.stderr.write("mock: " + (format % args) + "\n")

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
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
        elif encoding == "zstd":
            raise ValueError("zstd request bodies are not supported by this mock")
        return raw

    def send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("request-id", "req_mock")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        self.wfile.flush()

    def send_json(self, status: int, obj: Any) -> None:
        self.send(status, json.dumps(obj).encode(), "application/json")

    def _refuse_egress(self) -> None:
        self.state.record(
            {"method": self.command, "path": self.path, "query": "", "body": None, "reply": {"kind": "egress_refused"}}
        )
        self.close_connection = True
        self.send(403, b"hookd test mock: no egress\n", "text/plain")

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
        flavour = self.state.flavour
        if not flavour.route(self, entry, url.path.rstrip("/"), body, raw):
            entry["reply"] = {"kind": "not_found"}
            self.state.record(entry)
            message = f"mock_models ({flavour.name}): no route for {self.command} {url.path}"
            self.send_json(404, flavour.error(404, message))

    def _safe_handle(self) -> None:
        try:
            self._handle()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client went away; nothing to answer
        except Exception as exc:
            sys.stderr.write(f"mock: error handling {self.command} {self.path}: {exc!r}\n")
            try:
                self.send_json(500, self.state.flavour.error(500, str(exc)))
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
    parser.add_argument("--api", required=True, choices=sorted(FLAVOURS))
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

    flavour = FLAVOURS[args.api]()
    try:
        script = load_script(args.script, flavour)
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"mock_models: bad script {args.script}: {exc}\n")
        return 2

    state = State(flavour, script, args.record, args.verbose)
    handler = type("BoundHandler", (Handler,), {"state": state, "server_version": flavour.server_version})
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

    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2}, daemon=True).start()
    # Publish the port only once the socket is listening (bind + listen
    # happen in the constructor), port file first so a reader of stdout may
    # also rely on the file.
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
