#!/usr/bin/env bash
# What a hook costs GitHub Copilot CLI: one headless `copilot -p` session
# (one shell call, two model turns, against tests/support/mock_models.py,
# offline, bring-your-own-key) run N times each
#
#   none       with no hooks,
#   true       with `true` registered on every event hookd registers
#              (Claude-format hooks, .github/hooks/hookd.json),
#   forwarder  with `hookd install --agent copilot`'s own entries
#              (hook-forwarder --agent copilot, through a running
#              `hookd serve` with no rules),
#
# interleaved (none, true, forwarder, none, …) so machine noise hits each
# alike. Prints each mode's median and min session time, the hooks one
# session fires, and the per-hook cost over `none` and over `true`.
# A benchmark, not a test: nothing is asserted.
#
#   benches/copilot_hooks.sh [N]            (default N=7)
#   HOOKD_BIN_DIR=target/release benches/copilot_hooks.sh
#
# Needs python3, the pinned CLIs (npm ci --prefix tests/agents) and built
# hookd and hook-forwarder binaries (HOOKD_BIN_DIR, default target/debug).
set -euo pipefail
N=${1:-7}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${HOOKD_BIN_DIR:-$ROOT/target/debug}
case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac
COPILOT=$(ls "$ROOT"/tests/agents/node_modules/@github/copilot-*/copilot | head -1)
WORK=$(mktemp -d /tmp/hookd-bench-copilot.XXXXXX)
cleanup() {
  [ -n "${MOCK_PID:-}" ] && kill "$MOCK_PID" 2>/dev/null || true
  [ -n "${DAEMON_PID:-}" ] && kill "$DAEMON_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cat > "$WORK/script.json" <<'JSON'
{"turns": [
  {"content": [{"type": "text", "text": "I will run it."},
               {"type": "tool_call", "name": "bash", "input": {"command": "echo hello > out.txt", "description": "run it"}}]},
  {"content": [{"type": "text", "text": "done"}]}],
 "default_text": "done"}
JSON
python3 "$ROOT/tests/support/mock_models.py" --api openai --script "$WORK/script.json" \
  --record "$WORK/requests.jsonl" --port-file "$WORK/port" >/dev/null 2>&1 &
MOCK_PID=$!
SOCK=$WORK/hookd.sock
: > "$WORK/rules.toml"
"$BIN/hookd" serve --socket "$SOCK" --rules "$WORK/rules.toml" --log "$WORK/events.jsonl" \
  >"$WORK/daemon.out" 2>&1 &
DAEMON_PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && [ -S "$SOCK" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")

# The `true` registration: the same events and shape as hookd's install.
"$BIN/hookd" install --agent copilot --settings "$WORK/forwarder.json" \
  --forwarder "$BIN/hook-forwarder" >/dev/null
python3 - "$WORK/forwarder.json" "$WORK/true.json" <<'PY'
import json, sys
hooks = json.load(open(sys.argv[1]))
for groups in hooks["hooks"].values():
    for g in groups:
        for h in g["hooks"]:
            h["command"] = "true"
json.dump(hooks, open(sys.argv[2], "w"))
PY

run_once() { # mode -> prints seconds
  local mode=$1 dir=$WORK/run-$1
  rm -rf "$dir"; mkdir -p "$dir/home" "$dir/proj" "$dir/tmp"
  if [ "$mode" != none ]; then
    mkdir -p "$dir/proj/.github/hooks"
    cp "$WORK/$mode.json" "$dir/proj/.github/hooks/hookd.json"
  fi
  local start end
  start=$(date +%s%N)
  (cd "$dir/proj" && env -i HOME="$dir/home" PATH="$PATH" TMPDIR="$dir/tmp" HOOKD_SOCKET="$SOCK" \
    COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL="http://127.0.0.1:$PORT/v1" \
    COPILOT_PROVIDER_TYPE=openai COPILOT_PROVIDER_WIRE_API=responses COPILOT_PROVIDER_API_KEY=x \
    COPILOT_MODEL=gpt-5.5 COPILOT_ALLOW_ALL=true \
    "$COPILOT" --allow-all-tools -p "write hello to out.txt" >/dev/null 2>&1 </dev/null)
  end=$(date +%s%N)
  [ -f "$dir/proj/out.txt" ] || { echo "bench: $mode: the shell call did not run" >&2; exit 1; }
  echo "scale=3; ($end - $start) / 1000000000" | bc
}

declare -A TIMES
for i in $(seq "$N"); do
  for mode in none true forwarder; do
    TIMES[$mode]+="$(run_once $mode) "
  done
done
hooks=$(grep -c '"type":"event"' "$WORK/events.jsonl" || true)
hooks_per_session=$(( hooks / N ))
python3 - "$N" "$hooks_per_session" "${TIMES[none]}" "${TIMES[true]}" "${TIMES[forwarder]}" <<'PY'
import statistics, sys
n, per = int(sys.argv[1]), int(sys.argv[2])
modes = dict(zip(["none", "true", "forwarder"], [list(map(float, a.split())) for a in sys.argv[3:6]]))
med = {m: statistics.median(v) for m, v in modes.items()}
print(f"copilot 1.0.102, one shell call, {n} sessions per mode, {per} hooks per session (hookd's default events)")
for m, v in modes.items():
    print(f"  {m:<10} median {med[m]:6.2f} s   min {min(v):6.2f} s")
if per:
    print(f"  per hook: true {(med['true'] - med['none']) / per * 1000:7.1f} ms over none; "
          f"forwarder {(med['forwarder'] - med['none']) / per * 1000:7.1f} ms over none, "
          f"{(med['forwarder'] - med['true']) / per * 1000:7.1f} ms over true")
PY
