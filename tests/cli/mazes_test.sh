#!/usr/bin/env bash
# Mazes from the command line (issue 50): `looplab data mazes` (the same file for any thread
# count, bad sizes refused), a maze file with bad rows, a tiny maze model trained on size 9,
# killed with kill -9 and resumed to the weights of an uninterrupted run, then evaluated on size
# 59 and over the sizes of `eval --scaling`.
# Usage: mazes_test.sh path/to/looplab
set -u
LOOPLAB=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/lib.sh"

# --- looplab data mazes ----------------------------------------------------------------------
expect_ok "data mazes, 2 threads" "$LOOPLAB" --threads 2 data mazes --size 13 --count 50 --seed 4 --out "$TMP/m2.csv"
grep -q "wrote 50 mazes of size 13 (7 x 7 cells)" "$TMP/out" && ok || bad "data mazes: $(cat "$TMP/out")"
expect_ok "data mazes, 1 thread" "$LOOPLAB" --threads 1 data mazes --size 13 --count 50 --seed 4 --out "$TMP/m1.csv"
cmp -s "$TMP/m1.csv" "$TMP/m2.csv" && ok || bad "data mazes differs between 1 and 2 threads"
[ "$(head -1 "$TMP/m2.csv")" = "size,start,goal,passages,path" ] && ok || bad "data mazes: header $(head -1 "$TMP/m2.csv")"
[ "$(wc -l <"$TMP/m2.csv")" -eq 51 ] && ok || bad "data mazes: expected 51 lines"
expect_error "an even size" "--size must be odd and at least 3" "$LOOPLAB" data mazes --size 10 --out "$TMP/x.csv"
expect_error "size 1" "--size must be odd and at least 3" "$LOOPLAB" data mazes --size 1 --out "$TMP/x.csv"
expect_error "no count" "--count must be >= 1" "$LOOPLAB" data mazes --count 0 --out "$TMP/x.csv"

# The data set's own layout (maze_data_test_N/inputs.npy, solutions.npy): written, then read as a split.
expect_ok "data mazes --format npy" "$LOOPLAB" data mazes --size 13 --count 50 --seed 4 --format npy --out "$TMP/npy13"
[ -s "$TMP/npy13/inputs.npy" ] && [ -s "$TMP/npy13/solutions.npy" ] && ok || bad "data mazes --format npy: $(ls "$TMP/npy13")"
expect_error "a bad format" "--format must be csv or npy" "$LOOPLAB" data mazes --format png --out "$TMP/x"

# A file of mazes as a split; a bad row is named by file, line and field.
RUN=(--threads 1 train --task mazes --recall external --norm post --width 16 --heads 2 --max-iters 6 --batch 50
     --train-count 400 --val-count 40 --hard-count 10 --hard-size 17 --seed 3)
expect_ok "train on a maze file" "$LOOPLAB" "${RUN[@]}" --epochs 1 --train-file "$TMP/m2.csv" --out "$TMP/from-file"
expect_ok "train on the data set's files" "$LOOPLAB" "${RUN[@]}" --epochs 1 --train-file "$TMP/npy13" \
  --val-file "$TMP/npy13/inputs.npy" --hard-file "$(dirname "$0")/../data/mazes/maze_data_test_13" --out "$TMP/from-npy"
grep -q "50 examples" "$TMP/out" && ok || bad "train on npy: $(head -2 "$TMP/out")"
{ head -2 "$TMP/m2.csv"; echo "13,0,0,$(sed -n 3p "$TMP/m2.csv" | cut -d, -f4-)"; } >"$TMP/bad.csv"
expect_error "a bad maze row" "bad.csv:3: field 'start': not a perfect maze: start and goal are the same cell" \
  "$LOOPLAB" "${RUN[@]}" --epochs 1 --train-file "$TMP/bad.csv" --out "$TMP/bad-run"

# --- kill and resume -------------------------------------------------------------------------
expect_ok "uninterrupted maze run" "$LOOPLAB" "${RUN[@]}" --epochs 3 --out "$TMP/straight"
grep -q "training mazes" "$TMP/out" && ok || bad "train mazes: $(head -3 "$TMP/out")"
total_ms=0
start=$(date +%s%N)
"$LOOPLAB" "${RUN[@]}" --epochs 3 --out "$TMP/timed" >/dev/null 2>&1
total_ms=$(( ($(date +%s%N) - start) / 1000000 ))
resumed=0
for pct in 30 55 80; do
  dir="$TMP/k$pct"
  ms=$(( total_ms * pct / 100 ))
  "$LOOPLAB" "${RUN[@]}" --epochs 3 --out "$dir" >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if [ -f "$dir/training.json" ]; then
    "$LOOPLAB" --threads 1 train --resume "$dir" >/dev/null 2>"$TMP/err" || bad "k$pct: resume failed: $(cat "$TMP/err")"
    resumed=$((resumed + 1))
  else
    rm -rf "$dir"
    "$LOOPLAB" "${RUN[@]}" --epochs 3 --out "$dir" >/dev/null 2>"$TMP/err" || bad "k$pct: restart failed: $(cat "$TMP/err")"
  fi
  cmp -s "$dir/model.safetensors" "$TMP/straight/model.safetensors" && [ "$(wc -l <"$dir/metrics.jsonl")" -eq 3 ] && ok ||
    bad "k$pct (killed at $ms of $total_ms ms): the resumed maze run differs from the uninterrupted one"
done
[ "$resumed" -ge 1 ] && ok || bad "no kill landed after the run folder was made ($total_ms ms runs)"

# --- evaluation on larger mazes --------------------------------------------------------------
expect_ok "eval on size 17" "$LOOPLAB" eval "$TMP/straight" --split hard --iters 1:20 --json
python3 - "$TMP/out" <<'PY' && ok || bad "eval mazes: $(head -c 300 "$TMP/out")"
import json, sys
r = json.load(open(sys.argv[1]))
h = r["splits"]["hard"]
assert h["count"] == 10 and h["iterations"][-1] == 20, h
PY
expect_ok "eval --scaling" "$LOOPLAB" eval "$TMP/straight" --scaling --count 2 --iters 8
python3 - "$TMP/straight/eval_scaling.json" <<'PY' && ok || bad "eval --scaling on mazes: $(head -c 300 "$TMP/straight/eval_scaling.json")"
import json, sys
r = json.load(open(sys.argv[1]))
sizes = [lv["difficulty"] for lv in r["levels"]]
assert r["measure"] == "size" and sizes[0] == 9 and sizes[-1] == 59, sizes
assert [lv["size"] for lv in r["levels"]][-1] == 900, "59 is 30 x 30 cells"
PY

# --- the shipped maze model: eval --trace and analyze's right answers by behaviour ------------
# The trace (one example at a time, trace_prediction) and the analysis (batched, the convergence
# pass) compute each example's answer separately; each example's "right after the last
# iteration" and "answer unchanged from" must agree, and the counts by behaviour must be the
# examples' own.
cp -r "$(dirname "$0")/../../models/mazes-external-post" "$TMP/shipped"
rm -f "$TMP/shipped/eval_trace.json" "$TMP/shipped/analysis.json"
expect_ok "eval --trace" "$LOOPLAB" --threads 2 eval "$TMP/shipped" --trace 12 --split val --iters 40
grep -q "val example 11: .* positions right after 40" "$TMP/out" && ok || bad "eval --trace output: $(cat "$TMP/out")"
expect_ok "analyze the shipped maze model" "$LOOPLAB" --threads 2 analyze "$TMP/shipped" --split val --count 12 --iters 40 --detail 0
grep -q "right after 40: .* of 12; their states: settled" "$TMP/out" && ok || bad "analyze right line: $(cat "$TMP/out")"
python3 - "$TMP/shipped/eval_trace.json" "$TMP/shipped/analysis.json" <<'PY' && ok || bad "trace and analysis disagree"
import json, sys
t = json.load(open(sys.argv[1]))
a = json.load(open(sys.argv[2]))["splits"]["val"]
assert t["grid"] == [5, 5] and t["channels"] == 6 and t["max_iters"] == 40 and len(t["examples"]) == 12, t["grid"]
by = {"settle": 0, "cycle": 0, "diverge": 0, "wander": 0}
for x, e in zip(t["examples"], a["examples"]):
    its = [c["iteration"] for c in x["answers"]]
    assert its[0] == 1 and its == sorted(set(its)), its
    right = x["answers"][-1]["answer"] == x["target"]
    assert e["right"] == right and e["answer_from"] == its[-1], (x["index"], e, right, its[-1])
    by[e["behaviour"]] += right
assert a["right"] == by, (a["right"], by)
assert sum(by.values()) >= 10, by  # the shipped model is 99.8% exact on val at 30 iterations
PY
expect_error "eval --trace over two splits" "give one --split" "$LOOPLAB" eval "$TMP/shipped" --trace 2 --split val,hard
expect_error "eval --trace with --halt" "two evaluations" "$LOOPLAB" eval "$TMP/shipped" --trace 2 --split val --halt confidence

# --hard-size: a level beyond 59 for --scaling, the hard split of --trace at that size.
expect_ok "eval --trace --hard-size 21" "$LOOPLAB" eval "$TMP/shipped" --trace 1 --split hard --hard-size 21 --iters 3
python3 -c "import json,sys; t=json.load(open(sys.argv[1])); assert t['grid']==[11,11] and t['split']=='hard', t['grid']" "$TMP/shipped/eval_trace.json" && ok || bad "trace at --hard-size 21"
expect_ok "eval --scaling --hard-size 63" "$LOOPLAB" eval "$TMP/shipped" --scaling --hard-size 63 --count 1 --iters 2
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); assert [l['difficulty'] for l in r['levels']][-2:]==[59,63], r['levels'][-1]" "$TMP/shipped/eval_scaling.json" && ok || bad "scaling level 63"
expect_error "--hard-size with the curve" "goes with --scaling or --trace" "$LOOPLAB" eval "$TMP/shipped" --hard-size 21
expect_error "an even --hard-size" "odd" "$LOOPLAB" eval "$TMP/shipped" --trace 1 --split hard --hard-size 20

# analyze --hard-size: the hard split at size 13 (7 x 7 cells), recorded in analysis.json; the
# trace at the same size computes each maze's answer separately and must agree maze by maze.
rm -f "$TMP/shipped/analysis.json" "$TMP/shipped/eval_trace.json"
expect_ok "analyze --hard-size 13" "$LOOPLAB" --threads 2 analyze "$TMP/shipped" --split hard --hard-size 13 --count 8 --iters 60 --detail 0
grep -q "hard: mazes of size 13" "$TMP/out" && ok || bad "analyze --hard-size output: $(head -3 "$TMP/out")"
expect_ok "eval --trace --hard-size 13" "$LOOPLAB" --threads 2 eval "$TMP/shipped" --trace 8 --split hard --hard-size 13 --iters 60
python3 - "$TMP/shipped/eval_trace.json" "$TMP/shipped/analysis.json" <<'PY' && ok || bad "analysis at --hard-size 13 and the trace disagree"
import json, sys
t = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
a = r["splits"]["hard"]
assert r["hard_size"] == 13 and a["positions"] == 49 and a["count"] == 8, (r.get("hard_size"), a["positions"])
assert t["grid"] == [7, 7], t["grid"]
for x, e in zip(t["examples"], a["examples"]):
    its = [c["iteration"] for c in x["answers"]]
    assert e["right"] == (x["answers"][-1]["answer"] == x["target"]) and e["answer_from"] == its[-1], (x["index"], e)
PY
expect_error "analyze --hard-size of a task without mazes" "--hard-size: the task prefix-sums has no maze size" \
  "$LOOPLAB" analyze "$(dirname "$0")/../../models/prefix-sums-external-post" --split hard --hard-size 13 --count 1 --iters 2

# --border 1: each maze inside a ring of blocked cells, from training (training.json) to evaluation
# at other sizes (7 x 7 positions for size 9, 11 x 11 for size 17).
expect_ok "train with --border 1" "$LOOPLAB" "${RUN[@]}" --epochs 1 --border 1 --out "$TMP/border"
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['data']; assert d['border']==1, d" "$TMP/border/training.json" && ok || bad "border not in training.json"
expect_ok "eval --trace of a border run" "$LOOPLAB" eval "$TMP/border" --trace 1 --split hard --iters 2
python3 - "$TMP/border/eval_trace.json" <<'PY' && ok || bad "border run's trace: $(head -c 200 "$TMP/border/eval_trace.json")"
import json, sys
t = json.load(open(sys.argv[1]))
x = t["examples"][0]
side = 11
assert t["grid"] == [side, side], t["grid"]
ring = [p for p in range(side * side) if p // side in (0, side - 1) or p % side in (0, side - 1)]
assert all(v == 0 for p in ring for v in x["input"][p * 6:(p + 1) * 6]) and all(x["target"][p] == "0" for p in ring)
assert all(any(x["input"][p * 6:p * 6 + 4]) for p in range(side * side) if p not in ring), "a maze cell without a passage"
PY
expect_error "a negative border" "--border must be >= 0" "$LOOPLAB" "${RUN[@]}" --epochs 1 --border -1 --out "$TMP/b2"

finish mazes
