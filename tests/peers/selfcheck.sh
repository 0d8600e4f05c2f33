#!/usr/bin/env bash
# End-to-end check of the test peers talking to each other directly (no proxy):
# py_client <-> py_server in every era, py_client <-> server-everything (Streamable
# HTTP and legacy SSE), the journals, and that every server binds 127.0.0.1 only.
# Needs: python3 with mcp==2.3.0, node 20, `npm ci` done in this directory, ss.
# Prints one "ok"/"FAIL" line per check and a closing "N passed, N failed" line;
# exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
pass=0
fail=0

# start NAME CMD...: run a server with its own journal, wait for `LISTENING <port>`, set PORT_<NAME>.
start() {
  local name=$1 port=""
  shift
  PEER_JOURNAL="$tmp/$name.jsonl" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
  for _ in $(seq 150); do
    port=$(awk '/^LISTENING /{print $2; exit}' "$tmp/$name.out")
    [ -n "$port" ] && break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "FAIL $name did not print LISTENING"; cat "$tmp/$name.err"; exit 1
  fi
  printf -v "PORT_$name" %s "$port"
  # Loopback only: the one listening socket of this process must be 127.0.0.1:<port>.
  local addrs
  addrs=$(ss -ltnpH | grep "pid=$!," | awk '{print $4}' | sort -u | tr '\n' ' ')
  verdict "$name binds 127.0.0.1 only ($addrs)" test "$addrs" = "127.0.0.1:$port "
}

verdict() {
  local name=$1
  shift
  if "$@"; then echo "ok   $name"; pass=$((pass + 1)); else echo "FAIL $name"; fail=$((fail + 1)); fi
}

# client NAME ARGS...: run py_client, keep stdout/stderr/exit status under $tmp/NAME.*
client() {
  local name=$1
  shift
  "$PY" py_client.py "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  echo $? >"$tmp/$name.rc"
}

# expect NAME JOURNAL PYEXPR: evaluate PYEXPR over L (client stdout lines, parsed), RC (exit
# status), ERR (client stderr) and J (journal records, parsed; JOURNAL may be "-").
expect() {
  local desc=$1 name=$2 journal=$3 expr=$4
  verdict "$desc" "$PY" - "$tmp/$name" "$journal" "$expr" <<'EOF'
import json, sys
base, journal, expr = sys.argv[1:]
L = [json.loads(l) for l in open(base + ".out")]
RC = int(open(base + ".rc").read())
ERR = open(base + ".err").read()
J = [json.loads(l) for l in open(journal)] if journal != "-" else []
calls = [r["body"] for r in J if r["kind"] == "http" and isinstance(r.get("body"), dict)]
tools = [(r["tool"], r["args"]) for r in J if r["kind"] == "tool"]
ok = eval("(" + expr + ")")  # parentheses let an expression span lines
if not ok:
    print("  expr:", expr, "\n  stdout:", L, "\n  rc:", RC, "\n  stderr tail:", ERR[-500:], file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

STEPS=(list call echo '{"message":"hello"}' call leak '{}' call-progress slow '{"steps":3}')
text() { echo "L[$1]['result']['content'][0]['text']"; }

start pymodern "$PY" py_server.py --era modern
start pylegacy "$PY" py_server.py --era legacy
start pydual "$PY" py_server.py --era dual
start ehttp node everything_http.mjs
start esse node everything_sse.mjs

# ---- py_client <-> py_server, matching eras
for era in modern legacy; do
  port_var=PORT_py$era
  client "c_$era" --url "http://127.0.0.1:${!port_var}/mcp" --era "$era" "${STEPS[@]}"
  expect "py_client($era) <-> py_server($era): list/echo/leak/slow" "c_$era" "$tmp/py$era.jsonl" \
    "RC == 0 and 'NEGOTIATED era=$era' in ERR and len(L) == 4
     and {'echo','add','leak','slow','write_note'} <= set(L[0]['tools'])
     and $(text 1) == 'hello'
     and 'TOPSECRET-1234' in $(text 2) and L[2]['result']['structuredContent']['token'] == 'TOPSECRET-1234'
     and $(text 3) == 'done' and [p['progress'] for p in L[3]['progress']] == [1, 2, 3]"
  expect "py_server($era) journal: tool calls and raw requests" "c_$era" "$tmp/py$era.jsonl" \
    "tools == [('echo', {'message': 'hello'}), ('leak', {}), ('slow', {'steps': 3})]
     and [c['params']['name'] for c in calls if c.get('method') == 'tools/call'] == ['echo', 'leak', 'slow']"
done
expect "modern wire: per-request envelope + Mcp-* headers, no session" c_modern "$tmp/pymodern.jsonl" \
  "all(r['headers'].get('mcp-protocol-version') == '2026-07-28' and 'mcp-session-id' not in r['headers'] for r in J if r['kind'] == 'http')
   and all(r['headers']['mcp-name'] == r['body']['params']['name'] for r in J if r['kind'] == 'http' and r['body']['method'] == 'tools/call')
   and not any(c.get('method') == 'initialize' for c in calls)"
expect "legacy wire: initialize, Mcp-Session-Id, GET stream and DELETE" c_legacy "$tmp/pylegacy.jsonl" \
  "calls[0]['method'] == 'initialize' and any(r['method'] == 'GET' for r in J if r['kind'] == 'http')
   and any(r['method'] == 'DELETE' and 'mcp-session-id' in r['headers'] for r in J if r['kind'] == 'http')"

# ---- era mismatches and auto negotiation
client c_legacy_vs_modern --url "http://127.0.0.1:$PORT_pymodern/mcp" --era legacy list
expect "legacy client vs modern-only server: connect error -32022, exit 1" c_legacy_vs_modern - \
  "RC == 1 and L[0]['step'] == 'connect' and L[0]['error']['code'] == -32022"
client c_auto_modern --url "http://127.0.0.1:$PORT_pymodern/mcp" --era auto call echo '{"message":"a"}'
expect "auto client vs modern server negotiates modern" c_auto_modern - "RC == 0 and 'NEGOTIATED era=modern' in ERR"
client c_auto_legacy --url "http://127.0.0.1:$PORT_pylegacy/mcp" --era auto call echo '{"message":"a"}'
expect "auto client vs legacy server falls back to legacy" c_auto_legacy - "RC == 0 and 'NEGOTIATED era=legacy' in ERR"
client c_auto_dual --url "http://127.0.0.1:$PORT_pydual/mcp" --era auto call echo '{"message":"a"}'
expect "auto client vs dual server picks modern" c_auto_dual - "RC == 0 and 'NEGOTIATED era=modern' in ERR"
client c_refused --url "http://127.0.0.1:1/mcp" --era legacy list
expect "connection refused: transport error line, exit 1" c_refused - \
  "RC == 1 and L[0]['error']['kind'] == 'transport'"

# ---- py_client <-> server-everything
for era in legacy auto; do
  client "e_$era" --url "http://127.0.0.1:$PORT_ehttp/mcp" --era "$era" list call echo '{"message":"hi"}'
  expect "py_client($era) <-> everything_http: list/echo" "e_$era" "$tmp/ehttp.jsonl" \
    "RC == 0 and 'NEGOTIATED era=legacy' in ERR and 'echo' in L[0]['tools'] and $(text 1) == 'Echo: hi'"
done
expect "everything_http journal: every request incl. GET/DELETE" e_auto "$tmp/ehttp.jsonl" \
  "{'POST', 'GET', 'DELETE'} <= {r['method'] for r in J}
   and any(c.get('method') == 'server/discover' for c in calls)
   and sum(c.get('method') == 'tools/call' and c['params']['name'] == 'echo' for c in calls) == 2"
client e_sse --url "http://127.0.0.1:$PORT_esse/sse" --transport sse --era legacy call echo '{"message":"sse"}'
expect "py_client <-> everything_sse (legacy HTTP+SSE): echo" e_sse "$tmp/esse.jsonl" \
  "RC == 0 and $(text 0) == 'Echo: sse' and any(c.get('method') == 'tools/call' for c in calls)"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
