#!/usr/bin/env bash
# A stopped evaluation goes on from its last batch (DIR/eval.partial.json): `looplab eval`
# killed with kill -9 at KILLS moments during its evaluation, then run again, always ends with
# the eval.json of an uninterrupted evaluation, byte for byte. A partial file from other
# settings, or a damaged one, is said and the evaluation starts over.
# Usage: eval_kill_test.sh path/to/looplab [KILLS]
set -u
LOOPLAB=$1
KILLS=${2:-8}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/../cli/lib.sh"

expect_ok "init" "$LOOPLAB" init --task prefix-sums --width 16 --heads 2 --seed 1 --out "$TMP/m"
# 2 splits x 20 batches of 2 examples, 60 iterations each
EVAL=(--threads 1 eval --split val,hard --count 40 --batch 2 --iters 1:60)
EVAL4=(--threads 1 eval --split val,hard --count 40 --batch 4 --iters 1:60)
cp -r "$TMP/m" "$TMP/straight"
start=$(date +%s%N)
expect_ok "uninterrupted evaluation" "$LOOPLAB" "${EVAL[@]}" "$TMP/straight"
total_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[ -f "$TMP/straight/eval.json" ] && [ ! -e "$TMP/straight/eval.partial.json" ] && ok || bad "uninterrupted: eval.json, no partial file"

landed=0 resumed=0
for i in $(seq 0 $((KILLS - 1))); do
  dir="$TMP/k$i"
  cp -r "$TMP/m" "$dir"
  "$LOOPLAB" "${EVAL[@]}" "$dir" >/dev/null 2>&1 &
  pid=$!
  # Once the first batch is recorded, a moment spread over the run's length, then kill -9.
  for _ in $(seq 1 2000); do [ -e "$dir/eval.partial.json" ] || [ -e "$dir/eval.json" ] && break; sleep 0.005; done
  ms=$(( total_ms * i / KILLS ))
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  kill -9 "$pid" 2>/dev/null && [ ! -e "$dir/eval.json" ] && landed=$((landed + 1))
  wait "$pid" 2>/dev/null
  partial_left=0
  [ -e "$dir/eval.partial.json" ] && partial_left=1
  "$LOOPLAB" "${EVAL[@]}" "$dir" >"$TMP/out" 2>"$TMP/err" || bad "k$i: evaluation again failed: $(cat "$TMP/err")"
  grep -q "going on from example" "$TMP/err" && resumed=$((resumed + 1))
  if cmp -s "$dir/eval.json" "$TMP/straight/eval.json" && [ ! -e "$dir/eval.partial.json" ]; then ok
  else bad "k$i (killed at ${ms} ms after its first batch, partial file left: $partial_left): eval.json differs"; fi
done
echo "eval kill points: $KILLS tried over ${total_ms} ms ($landed landed during the evaluation, $resumed went on from a partial file)"
[ "$resumed" -ge 1 ] && ok || bad "no killed evaluation went on from its partial file"

# --- a partial file that does not fit: said, and the evaluation starts over ------------------
keep_partial() {  # DIR: kill an evaluation of DIR once its partial file is there
  "$LOOPLAB" "${EVAL[@]}" "$1" >/dev/null 2>&1 &
  local pid=$! _
  for _ in $(seq 1 2000); do [ -e "$1/eval.partial.json" ] && break; sleep 0.005; done
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  [ -e "$1/eval.partial.json" ] && ok || bad "no partial file left in $1"
}
cp -r "$TMP/m" "$TMP/b4" && cp -r "$TMP/m" "$TMP/b4straight"
keep_partial "$TMP/b4"
expect_ok "evaluation with another batch" "$LOOPLAB" "${EVAL4[@]}" "$TMP/b4"
grep -q "eval.partial.json: left by an evaluation with other weights or settings; starting over" "$TMP/err" && ok ||
  bad "other batch not said: $(cat "$TMP/err")"
expect_ok "uninterrupted, batch 4" "$LOOPLAB" "${EVAL4[@]}" "$TMP/b4straight"
cmp -s "$TMP/b4/eval.json" "$TMP/b4straight/eval.json" && ok || bad "batch 4 after a batch-2 partial differs"

cp -r "$TMP/m" "$TMP/torn"
keep_partial "$TMP/torn"
head -c 100 "$TMP/torn/eval.partial.json" >"$TMP/torn/cut" && mv "$TMP/torn/cut" "$TMP/torn/eval.partial.json"
expect_ok "evaluation after a torn partial file" "$LOOPLAB" "${EVAL[@]}" "$TMP/torn"
grep -q "eval.partial.json: unreadable (.*); starting the evaluation over" "$TMP/err" && ok || bad "torn partial: $(cat "$TMP/err")"
cmp -s "$TMP/torn/eval.json" "$TMP/straight/eval.json" && ok || bad "after a torn partial file: eval.json differs"

cp -r "$TMP/m" "$TMP/misfit"
keep_partial "$TMP/misfit"
sed -i 's/"done":[0-9]*/"done":999/g' "$TMP/misfit/eval.partial.json"
expect_ok "evaluation after a partial file that does not fit" "$LOOPLAB" "${EVAL[@]}" "$TMP/misfit"
grep -q "eval.partial.json: its val sums do not fit this split; starting that split over" "$TMP/err" && ok ||
  bad "misfit partial: $(cat "$TMP/err")"
cmp -s "$TMP/misfit/eval.json" "$TMP/straight/eval.json" && ok || bad "after a misfit partial file: eval.json differs"

# Other weights (a run trained further) never go on from the old sums.
cp -r "$TMP/m" "$TMP/w"
keep_partial "$TMP/w"
expect_ok "init other weights" "$LOOPLAB" init --task prefix-sums --width 16 --heads 2 --seed 2 --out "$TMP/w2"
cp "$TMP/w2/model.safetensors" "$TMP/w/model.safetensors"
expect_ok "evaluation of other weights" "$LOOPLAB" "${EVAL[@]}" "$TMP/w"
grep -q "other weights or settings; starting over" "$TMP/err" && ok || bad "other weights not said: $(cat "$TMP/err")"
cp -r "$TMP/w2" "$TMP/w2straight"
expect_ok "uninterrupted, other weights" "$LOOPLAB" "${EVAL[@]}" "$TMP/w2straight"
cmp -s <(sed 's/"weights":"[^"]*"//' "$TMP/w/eval.json") <(sed 's/"weights":"[^"]*"//' "$TMP/w2straight/eval.json") && ok ||
  bad "other weights: eval.json differs from theirs uninterrupted"

finish "eval_kill"
