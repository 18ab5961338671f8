#!/usr/bin/env bash
# looplab analyze end to end: a model analysis writes analysis.json, the geometry commands run,
# bad input gives one line on stderr and exit code 2.
# Usage: analyze_test.sh path/to/looplab
set -u
LOOPLAB=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/lib.sh"

M=$TMP/m
"$LOOPLAB" init --task prefix-sums --recall external --norm post --width 16 --heads 2 --seed 1 --out "$M" >/dev/null
expect_ok "analyze a model" "$LOOPLAB" analyze "$M" --split val --count 6 --iters 12 --detail 2
grep -q "reachability: settle" "$TMP/out" && ok || bad "analyze summary: $(cat "$TMP/out")"
grep -q "spectral radius of df/dx" "$TMP/out" && ok || bad "analyze radius line: $(cat "$TMP/out")"
grep -q "rho(Wx) = " "$TMP/out" && ok || bad "analyze rho(Wx): $(cat "$TMP/out")"
[ -s "$M/analysis.json" ] && ok || bad "analysis.json missing"
grep -q '"examples"' "$M/analysis.json" && grep -q '"radius"' "$M/analysis.json" && ok || bad "analysis.json content"
expect_ok "analyze --json" "$LOOPLAB" analyze "$M" --split val --count 3 --iters 5 --detail 0 --json
grep -q '"recall_spectral_radius"' "$TMP/out" && ok || bad "analyze --json output"

# A recall matrix whose spectral radius is known: upper triangular (its eigenvalues are its
# diagonal, though it is far from normal), the largest diagonal entry in size -0.83. Written into
# the model's safetensors with the standard library (the header's offsets, little-endian float32).
cp -r "$M" "$TMP/known"
python3 - "$TMP/known/model.safetensors" <<'PY' || bad "could not plant the recall matrix"
import json, struct, sys
path = sys.argv[1]
raw = open(path, "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
header = json.loads(raw[8:8 + n])
[name] = [k for k in header if k.endswith("Wx.weight")]
rows, cols = header[name]["shape"]
begin, end = header[name]["data_offsets"]
diagonal = [0.3, -0.83, 0.5, 0.1, -0.2, 0.6, 0.0, 0.25]
values = []
for i in range(rows):
    for j in range(cols):
        values.append(diagonal[i % 8] if i == j else (0.4 * ((i * 7 + j * 3) % 5 - 2) if j > i else 0.0))
data = bytearray(raw)
data[8 + n + begin:8 + n + end] = struct.pack("<%df" % (rows * cols), *values)
open(path, "wb").write(bytes(data))
PY
expect_ok "analyze a known recall matrix" "$LOOPLAB" analyze "$TMP/known" --split val --count 2 --iters 4 --detail 0
grep -q "rho(Wx) = 0.8300$" "$TMP/out" && ok || bad "rho(Wx) of a matrix whose radius is 0.83: $(grep 'rho(Wx)' "$TMP/out")"

"$LOOPLAB" init --task prefix-sums --recall none --norm post --width 16 --heads 2 --seed 1 --out "$TMP/auto" >/dev/null
expect_ok "analyze an autonomous model" "$LOOPLAB" analyze "$TMP/auto" --split val --count 4 --iters 8 --detail 1
grep -q "recall: none" "$TMP/out" && ok || bad "autonomous rho line: $(cat "$TMP/out")"

"$LOOPLAB" init --task prefix-sums --recall fixed --norm post --width 16 --heads 2 --seed 1 --out "$TMP/fixed" >/dev/null
expect_error "analyze a fixed-depth model" "no iteration to analyze" "$LOOPLAB" analyze "$TMP/fixed"
expect_error "analyze without a directory" "give a run or model folder" "$LOOPLAB" analyze
expect_error "analyze a missing directory" "$TMP/missing" "$LOOPLAB" analyze "$TMP/missing"
expect_error "analyze --tol 0" "tol" "$LOOPLAB" analyze "$M" --tol 0
expect_error "analyze --count 0" "count" "$LOOPLAB" analyze "$M" --count 0
expect_error "analyze an unknown split" "split" "$LOOPLAB" analyze "$M" --split test --count 2 --iters 2

expect_ok "analyze regions" "$LOOPLAB" analyze regions --n 21
expect_ok "analyze anisotropy" "$LOOPLAB" analyze anisotropy --n 200 --sigma 1,2
expect_ok "analyze phase" "$LOOPLAB" analyze phase --lx 0.5 --ly 1.5
grep -q "stable-manifold" "$TMP/out" && ok || bad "phase output: $(cat "$TMP/out")"
expect_ok "analyze anisotropy --csv" "$LOOPLAB" analyze anisotropy --n 50 --sigma 1 --csv "$TMP/a.csv"
[ -s "$TMP/a.csv" ] && ok || bad "anisotropy csv missing"
expect_error "analyze anisotropy bad sigma" "sigma" "$LOOPLAB" analyze anisotropy --sigma 1,x
expect_error "analyze anisotropy --n 0" "n" "$LOOPLAB" analyze anisotropy --n 0

finish "analyze cli"
