#!/usr/bin/env bash
# looplab eval --early-exit / --anderson and looplab bench eval/step/latency from the command
# line: tiny models, the table, eval_accelerated.json, counts, and one-line errors.
# Usage: eval_cli_test.sh path/to/looplab
set -u
LOOPLAB=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/../cli/lib.sh"

expect_ok "init" "$LOOPLAB" init --task prefix-sums --width 16 --heads 2 --seed 1 --out "$TMP/m"

# Plain budget of 30 iterations on 12 val examples; early exit spends at most that.
expect_ok "eval early exit" "$LOOPLAB" eval "$TMP/m" --split val --count 12 --iters 1:30 --early-exit 1e-3
grep -q "block evals" "$TMP/out" && ok || bad "eval early exit: no table: $(cat "$TMP/out")"
[ -f "$TMP/m/eval_accelerated.json" ] && ok || bad "no eval_accelerated.json"
expect_ok "eval anderson json" "$LOOPLAB" eval "$TMP/m" --split val --count 12 --iters 1:30 --early-exit 1e-3 \
  --anderson 3 --json
grep -q '"anderson": 3' "$TMP/out" && grep -q '"max_iters": 30' "$TMP/out" && grep -q '"plain_block_evaluations": 360' "$TMP/out" \
  && ok || bad "eval anderson json: $(cat "$TMP/out")"
evals=$(sed -n 's/.*"block_evaluations": \([0-9]*\).*/\1/p' "$TMP/out" | head -1)
[ -n "$evals" ] && [ "$evals" -ge 12 ] && [ "$evals" -le 360 ] && ok || bad "anderson evaluations '$evals' outside 12..360"
# Without a tolerance, Anderson runs every example to the budget.
expect_ok "eval anderson no tol" "$LOOPLAB" eval "$TMP/m" --split val --count 5 --iters 1:7 --anderson 2 --json
grep -q '"block_evaluations": 35' "$TMP/out" && ok || bad "anderson without tolerance: $(cat "$TMP/out")"

expect_error "negative tolerance" "--early-exit must be >= 0" \
  "$LOOPLAB" eval "$TMP/m" --split val --count 5 --early-exit=-1
expect_error "negative memory" "--anderson must be >= 0" \
  "$LOOPLAB" eval "$TMP/m" --split val --count 5 --anderson=-2

# bench eval: the three modes, plain = count x iters evaluations.
expect_ok "bench eval" "$LOOPLAB" bench eval "$TMP/m" --split val --count 6 --batch 4 --iters 9 --tol 1e-3 --anderson 3
grep -q '"evaluations":54,.*"mode":"plain"' "$TMP/out" && ok || bad "bench eval plain count: $(cat "$TMP/out")"
[ "$(grep -c '^json: ' "$TMP/out")" -eq 3 ] && ok || bad "bench eval: expected 3 json lines"
expect_error "bench eval bad mode" "unknown mode 'fast'" "$LOOPLAB" bench eval "$TMP/m" --modes plain,fast --count 2 --iters 2

# bench step / latency at tiny sizes.
expect_ok "bench step" "$LOOPLAB" bench step --task prefix-sums --width 16 --heads 2 --batch 4 --positions 8 --n 1 --k 2 --reps 1
grep -q '^json: {.*"kind":"step"' "$TMP/out" && ok || bad "bench step json: $(cat "$TMP/out")"
expect_ok "bench step recompute" "$LOOPLAB" bench step --task sudoku --width 16 --heads 2 --batch 2 --n 0 --k 3 --reps 1 \
  --warmup 0 --no-matmul --recompute
grep -q '"peak_rss_mib"' "$TMP/out" && ok || bad "bench step recompute: $(cat "$TMP/out")"
expect_ok "bench latency" "$LOOPLAB" bench latency --task sudoku --width 16 --heads 2 --reps 3
grep -q '^json: {.*"kind":"latency"' "$TMP/out" && ok || bad "bench latency json: $(cat "$TMP/out")"
grep -q '"dense_seconds":[0-9]' "$TMP/out" && grep -q "dense-layer products alone" "$TMP/out" && ok || bad "bench latency floor: $(cat "$TMP/out")"

finish eval_cli
