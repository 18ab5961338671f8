#!/usr/bin/env bash
# looplab serve on the command line: bad options are one line on stderr and exit code 2; a real
# server answers on its port, refuses bad API input with 4xx JSON, and stops on SIGTERM.
# Usage: serve_cli_test.sh path/to/looplab
set -u
LOOPLAB=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TMP=$(mktemp -d)
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT
source "$ROOT/tests/cli/lib.sh"

expect_error "port out of range" "--port must be in" "$LOOPLAB" serve --port 70000
expect_error "no web folder" "no index.html" "$LOOPLAB" serve --port 0 --web "$TMP/nowhere"
expect_error "a --paper file that is not there" "--paper $TMP/nowhere.json: no such file" timeout 10 "$LOOPLAB" serve --port 0 --paper "$TMP/nowhere.json"
printf "{bad" >"$TMP/torn.json"
expect_error "a torn --paper file" "torn.json: not valid JSON" timeout 10 "$LOOPLAB" serve --port 0 --paper "$TMP/torn.json"
expect_error "unknown option" "--bogus" "$LOOPLAB" serve --bogus

# A real server on a free port (the address is on the first line of stdout).
"$LOOPLAB" serve --port 0 --runs "$ROOT/models" --web "$ROOT/web" >"$TMP/serve.out" 2>"$TMP/serve.err" &
PID=$!
for _ in $(seq 1 100); do grep -q "http://127.0.0.1:" "$TMP/serve.out" && break; sleep 0.1; done
URL=$(grep -o "http://127.0.0.1:[0-9]*" "$TMP/serve.out")
[ -n "$URL" ] && ok || bad "no address printed: $(cat "$TMP/serve.out" "$TMP/serve.err")"

# status CODE PATH: the HTTP status of GET PATH (the body in $TMP/body)
status() {
  local got
  got=$(curl -s -o "$TMP/body" -w '%{http_code}' --path-as-is "$URL$2")
  if [ "$got" = "$1" ]; then ok; else bad "GET $2: HTTP $got, wanted $1: $(head -c 300 "$TMP/body")"; fi
}
status 200 /
status 200 /api/explore
grep -q '"memory-decay"' "$TMP/body" && ok || bad "explore list lacks memory-decay"
# The served illustration against its closed forms, written out here: an input from lag L
# weighs a^L, a stream of ones gives h_t = (1 - a^(t+1)) / (1 - a), the 1/e time is -1/ln|a|.
for a in 0.5 -0.7; do
  status 200 "/api/explore/memory-decay?a=$a"
  why=$(python3 - "$TMP/body" "$a" <<'PY'
import json, math, sys
j, a = json.load(open(sys.argv[1])), float(sys.argv[2])
out = []
def near(what, got, want):
    if abs(got - want) > 1e-12 * max(1, abs(want)): out.append(f"{what}: {got}, closed form {want}")
weights, ones = (s["y"] for s in (j["plots"][0]["series"][0], j["plots"][1]["series"][0]))
for lag in range(31):
    near(f"weight at lag {lag}", weights[lag], a ** lag)
    near(f"h_{lag}", ones[lag], (1 - a ** (lag + 1)) / (1 - a))
r = {x["key"]: x["value"] for x in j["readouts"]}
near("weight_lag3", r["weight_lag3"], a ** 3)
near("state_after_3", r["state_after_3"], 1 + a + a * a + a ** 3)
near("steps_to_1e", r["steps_to_1e"], -1 / math.log(abs(a)))
print("; ".join(out[:3]))
PY
) || why="the check itself failed (the served JSON lacks a field it reads)"
  [ -z "$why" ] && ok || bad "memory-decay a=$a: $why"
done
status 404 /api/explore/nope
grep -q '"error":"explore: unknown illustration' "$TMP/body" && ok || bad "404 message: $(cat "$TMP/body")"
status 400 "/api/explore/memory-decay?a=9"
status 200 /api/runs
grep -q '"prefix-sums-external-post"' "$TMP/body" && ok || bad "runs list: $(head -c 300 "$TMP/body")"
status 200 /api/runs/prefix-sums-none-post/config.json
cmp -s "$TMP/body" "$ROOT/models/prefix-sums-none-post/config.json" && ok || bad "the served config.json is not the file's bytes"
status 400 /api/runs/../README.md
status 400 /api/runs/%2e%2e%2fREADME.md
status 400 /api/runs/%2Fetc%2Fpasswd
status 404 /../README.md
grep -q "looplab" "$TMP/body" && ! grep -q "A C++ laboratory" "$TMP/body" && ok || bad "static path escaped: $(head -c 200 "$TMP/body")"
status 200 /api/explore
kill "$PID"
wait "$PID" 2>/dev/null
PID=
finish serve_cli
