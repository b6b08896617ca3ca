#!/usr/bin/env python3
"""A hookd socket client: deny what matches a pattern, approve the rest.

The template to copy for scripting decisions. Standard library only.

    python3 examples/auto_decide.py --deny 'rm -rf|git push --force' [--socket PATH]

It says hello, subscribes to the decision points that wait for a client
(`pending_only`), and answers each one: `deny` (with a reason) when the tool
input's text matches --deny, `allow` otherwise. Events whose kind cannot be
allowed or denied are left to their fallback. Another client deciding first
is normal: the daemon answers `already_decided` and we move on.

The daemon only holds events for clients when a rule says `ask`, or with
`route_undecided = true` in hookd's config.toml ([decisions]).
"""

import argparse
import json
import os
import re
import socket
import sys


def socket_path():
    if os.environ.get("HOOKD_SOCKET"):
        return os.environ["HOOKD_SOCKET"]
    if os.environ.get("XDG_RUNTIME_DIR"):
        return os.path.join(os.environ["XDG_RUNTIME_DIR"], "hookd", "hookd.sock")
    return f"/tmp/hookd-{os.getuid()}/hookd.sock"


class Connection:
    """One NDJSON connection to hookd."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.next_req = 0

    def send(self, frame):
        self.sock.sendall(json.dumps(frame).encode() + b"\n")

    def recv(self):
        line = self.reader.readline()
        if not line:
            raise EOFError("hookd closed the connection")
        return json.loads(line)

    def request(self, frame):
        """Sends a request with a fresh `req` id; returns its id."""
        self.next_req += 1
        frame["req"] = str(self.next_req)
        self.send(frame)
        return frame["req"]


def text_of(tool_input):
    """What the pattern is matched against: the command, path or URL."""
    if not isinstance(tool_input, dict):
        return ""
    for key in ("command", "file_path", "notebook_path", "url", "path", "pattern"):
        if isinstance(tool_input.get(key), str):
            return tool_input[key]
    return json.dumps(tool_input)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deny", required=True, help="regex: matching tool inputs are denied")
    parser.add_argument("--socket", default=socket_path())
    parser.add_argument("--name", default="auto-decide")
    args = parser.parse_args()
    deny = re.compile(args.deny)

    conn = Connection(args.socket)
    conn.send({"type": "hello", "v": 1, "role": "client", "name": args.name})
    welcome = conn.recv()
    if welcome.get("type") != "welcome":
        sys.exit(f"hookd refused us: {welcome}")
    conn.request({"type": "subscribe", "filter": {"pending_only": True}})
    print(f"{args.name}: connected to hookd {welcome['server_version']}", flush=True)

    while True:
        frame = conn.recv()
        kind = frame.get("type")
        if kind == "event" and frame.get("pending"):
            event = frame["event"]
            text = text_of(event["input"].get("tool_input"))
            if deny.search(text):
                verdict, reason = "deny", f"{args.name}: `{text}` matches /{args.deny}/"
            else:
                verdict, reason = "allow", f"{args.name}: approved"
            conn.request({"type": "decide", "event_id": event["id"], "verdict": verdict, "reason": reason})
            print(f"{verdict:5} {event['kind']} {event.get('tool') or ''} {text}", flush=True)
        elif kind == "error" and frame.get("code") in ("already_decided", "not_found", "invalid_request"):
            print(f"skipped: {frame['message']}", flush=True)
        elif kind == "error":
            sys.exit(f"hookd error: {frame}")
        elif kind == "lagged":
            print(f"lagged: {frame['dropped']} frames dropped", flush=True)


if __name__ == "__main__":
    try:
        main()
    except (KeyboardInterrupt, EOFError, BrokenPipeError) as e:
        print(f"auto_decide: {e or 'stopped'}", file=sys.stderr)
