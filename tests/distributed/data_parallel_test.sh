#!/usr/bin/env bash
# Data-parallel training over c10d (issue 20), launched as torchrun would (RANK, WORLD_SIZE,
# MASTER_ADDR, MASTER_PORT set by hand for each process): two ranks sharing a global batch of
# 500 train the same weights as one process with batch 500 (1e-5 relative in float32, 1e-12 in
# float64, compared by an independent reader of the files), also when a last batch leaves a rank
# without examples; a rank killed with kill -9, stopped (a hang) or rank 0 itself lost makes the
# other exit non-zero within the timeout naming it, and --resume then finishes the run with the
# same weights; bad launch variables are one clear error. (srun -n 2: tests/sweep/slurm_test.sh.)
# Usage: data_parallel_test.sh path/to/looplab [EXIT_SLACK]
# EXIT_SLACK (seconds, default 0) is added to each bound on how fast a rank exits after losing
# the other: the sanitizer build's processes take seconds longer to exit (LeakSanitizer's scan).
set -u
LOOPLAB=$(realpath "$1")
SLACK=${2:-0}
HERE=$(cd "$(dirname "$0")" && pwd)
TMP=$(mktemp -d)
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$TMP"' EXIT
source "$HERE/../cli/lib.sh"
cd "$TMP"
PORT=$((20000 + RANDOM % 10000))  # below the ephemeral range (32768-60999)
compare() { /usr/bin/python3 "$HERE/compare_weights.py" "$@"; }

# ranks N OUT ARGS...: N ranks of `looplab train ARGS --out OUT` on this host, one thread each;
# waits for all, returns non-zero if any failed. Logs in OUT.R.log.
ranks() {
  local n=$1 out=$2 r rc=0; shift 2
  PORT=$((PORT + 1))
  local pids=()
  for r in $(seq 0 $((n - 1))); do
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT RANK=$r WORLD_SIZE=$n LOCAL_WORLD_SIZE=$n \
      "$LOOPLAB" --threads 1 train "$@" --out "$out" >"$out.$r.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return $rc
}

base="--task prefix-sums --width 16 --heads 2 --train-count 2000 --val-count 100 --max-iters 6 --train-bits 8 --seed 3"
small="$base --epochs 3"

# One process with batch 500 against two ranks with 250 each (--batch is the global batch).
expect_ok "one process" "$LOOPLAB" --threads 1 train $small --batch 500 --out one
ranks 2 two $small --batch 500 && ok || bad "two ranks failed: $(cat two.*.log)"
grep -q "data-parallel on 2 ranks (gloo), each with about 250 of every batch" two.0.log && ok || bad "rank 0's banner: $(head -3 two.0.log)"
[ ! -s two.1.log ] && ok || bad "rank 1 printed: $(cat two.1.log)"
compare one/model.safetensors two/model.safetensors 1e-5 >cmp.txt && ok || bad "float32 weights differ: $(cat cmp.txt)"
echo "float32, 1 rank x 500 vs 2 ranks x 250: $(cat cmp.txt)"
# The same epochs recorded: loss and accuracies agree (the loss to float rounding).
/usr/bin/python3 - one/metrics.jsonl two/metrics.jsonl <<'PY' && ok || bad "the metrics differ"
import json, sys
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
assert len(a) == len(b) == 3
for x, y in zip(a, b):
    assert abs(x["loss"] - y["loss"]) < 1e-6 * abs(x["loss"]), (x["loss"], y["loss"])
    for k in ("train_exact", "val_exact", "val_per_position", "lr"):
        assert x[k] == y[k], (k, x[k], y[k])
PY

expect_ok "one process, float64" "$LOOPLAB" --threads 1 train $small --batch 500 --dtype float64 --out one64
ranks 2 two64 $small --batch 500 --dtype float64 && ok || bad "two ranks (float64) failed: $(cat two64.*.log)"
compare one64/model.safetensors two64/model.safetensors 1e-12 >cmp.txt && ok || bad "float64 weights differ: $(cat cmp.txt)"
echo "float64, 1 rank x 500 vs 2 ranks x 250: $(cat cmp.txt)"

# The training methods (docs/training-methods.md) on two ranks: the Jacobian penalty (each rank
# its rows of the batch's projections), the weight average and the halting head give one
# process's weights, raw and averaged; phantom and implicit run (their solves stop per rank: a
# rank's part of the batch converges on its own, so they are not compared).
methods="--jacobian-weight 0.1 --ema 0.9 --halt-head --dtype float64"
expect_ok "one process, methods" "$LOOPLAB" --threads 1 train $small --batch 500 $methods --out onem
ranks 2 twom $small --batch 500 $methods && ok || bad "two ranks (methods) failed: $(cat twom.*.log)"
for f in model raw; do
  compare onem/$f.safetensors twom/$f.safetensors 1e-10 >cmp.txt && ok || bad "methods, $f weights differ: $(cat cmp.txt)"
  echo "penalty, average and halting head in float64, $f weights, 1 rank x 500 vs 2 ranks x 250: $(cat cmp.txt)"
done
for g in phantom implicit; do
  ranks 2 two-$g $base --batch 500 --epochs 1 --gradient $g --batch-tolerance 1e-3 && ok || bad "two ranks ($g) failed: $(cat two-$g.*.log)"
done

# 2003 examples in batches of 1001: the last batch has one example, so one rank has none.
odd="--task prefix-sums --width 16 --heads 2 --train-count 2003 --val-count 101 --epochs 2 --max-iters 6 --train-bits 8 --seed 4 --batch 1001"
expect_ok "one process, uneven" "$LOOPLAB" --threads 1 train $odd --out odd1
ranks 2 odd2 $odd && ok || bad "two ranks (uneven) failed: $(cat odd2.*.log)"
compare odd1/model.safetensors odd2/model.safetensors 1e-5 >cmp.txt && ok || bad "uneven batches: $(cat cmp.txt)"
ranks 3 odd3 $odd && ok || bad "three ranks (uneven) failed: $(cat odd3.*.log)"
compare odd1/model.safetensors odd3/model.safetensors 1e-5 >cmp.txt && ok || bad "three ranks: $(cat cmp.txt)"

# kill -9 of rank 1 mid-epoch: rank 0 names it within the timeout; --resume finishes the run.
long="--task prefix-sums --width 32 --heads 2 --train-count 4000 --val-count 100 --epochs 4 --batch 100 --max-iters 10 --train-bits 16 --seed 5"
expect_ok "uninterrupted" "$LOOPLAB" --threads 1 train $long --out whole
# lost KILLED SIGNAL OUT: starts 2 ranks, sends SIGNAL to rank KILLED once epoch 1 is recorded,
# and leaves the other's exit status in $lost_rc and its seconds until exit in $lost_s.
lost() {
  local killed=$1 signal=$2 out=$3 r pids=()
  PORT=$((PORT + 1))
  for r in 0 1; do
    MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT RANK=$r WORLD_SIZE=2 \
      "$LOOPLAB" --threads 1 train $long --dist-timeout 5 --out "$out" >"$out.$r.log" 2>&1 &
    pids+=($!)
  done
  for _ in $(seq 600); do [ -s "$out/metrics.jsonl" ] && break; sleep 0.1; done
  sleep 0.3  # into epoch 2
  kill -"$signal" "${pids[$killed]}"
  local t0 other=$((1 - killed))
  t0=$(date +%s.%N)
  wait "${pids[$other]}"
  lost_rc=$?
  lost_s=$(echo "$(date +%s.%N) - $t0" | bc)
  kill -9 "${pids[$killed]}" 2>/dev/null
  wait "${pids[$killed]}" 2>/dev/null
}
lost 1 9 k
echo "kill -9 of rank 1: rank 0 exited $lost_rc after $lost_s s: $(cat k.0.log | grep error)"
[ "$lost_rc" -eq 2 ] && ok || bad "rank 0 exit $lost_rc after rank 1 was killed"
grep -q "looplab: error: rank 0 of 2: lost rank 1 (its heartbeat stopped" k.0.log && ok || bad "rank 0 did not name rank 1: $(tail -2 k.0.log)"
grep -q "resume it with .looplab train --resume k" k.0.log && ok || bad "no resume hint: $(tail -1 k.0.log)"
[ "$(echo "$lost_s < 5 + 3 + $SLACK" | bc)" -eq 1 ] && ok || bad "rank 0 took $lost_s s to exit"
[ "$(wc -l <k/metrics.jsonl)" -lt 4 ] && ok || bad "the run finished before the kill"
PORT=$((PORT + 1))
for r in 0 1; do MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT RANK=$r WORLD_SIZE=2 "$LOOPLAB" --threads 1 train --resume k >kr.$r.log 2>&1 & done
wait && ok || bad "the resumed run failed: $(cat kr.*.log)"
[ "$(wc -l <k/metrics.jsonl)" -eq 4 ] && ok || bad "metrics after resume: $(wc -l <k/metrics.jsonl) lines"
compare whole/model.safetensors k/model.safetensors 1e-5 >cmp.txt && ok || bad "resumed weights differ: $(cat cmp.txt)"
echo "killed, resumed on 2 ranks vs uninterrupted 1 rank: $(cat cmp.txt)"

# A hang (SIGSTOP of rank 1): rank 0 names it after the 5 s collective timeout.
lost 1 STOP h
echo "SIGSTOP of rank 1: rank 0 exited $lost_rc after $lost_s s"
[ "$lost_rc" -eq 2 ] && grep -q "lost rank 1" h.0.log && ok || bad "hang: exit $lost_rc: $(tail -1 h.0.log)"
[ "$(echo "$lost_s < 5 + 5 + $SLACK" | bc)" -eq 1 ] && ok || bad "rank 0 took $lost_s s to exit after the hang"
# Rank 0 lost: rank 1 names it.
lost 0 9 z
echo "kill -9 of rank 0: rank 1 exited $lost_rc after $lost_s s"
[ "$lost_rc" -eq 2 ] && grep -q "rank 1 of 2: lost rank 0" z.1.log && ok || bad "rank 0 lost: exit $lost_rc: $(tail -1 z.1.log)"

# Rank 0 hangs: rank 1's collective times out, then the store does (5 s each).
lost 0 STOP zs
echo "SIGSTOP of rank 0: rank 1 exited $lost_rc after $lost_s s"
[ "$lost_rc" -eq 2 ] && grep -q "rank 1 of 2: lost rank 0" zs.1.log && ok || bad "rank 0 hangs: exit $lost_rc: $(tail -1 zs.1.log)"
[ "$(echo "$lost_s < 5 + 5 + 5 + $SLACK" | bc)" -eq 1 ] && ok || bad "rank 1 took $lost_s s to exit after rank 0 hung"
# A rank that never comes: rank 0 gives up after the timeout.
PORT=$((PORT + 1))
expect_error "no rank 1" "rank 0 of 2: cannot meet the other ranks at 127.0.0.1:$PORT within 2 s" \
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT RANK=0 WORLD_SIZE=2 "$LOOPLAB" train $small --dist-timeout 2 --out alone
# Bad launch variables.
expect_error "rank too high" "rank 2 is not below the world size 2" \
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=1 RANK=2 WORLD_SIZE=2 "$LOOPLAB" train $small --out bad
expect_error "no port" "MASTER_PORT is not set" env MASTER_ADDR=127.0.0.1 RANK=0 WORLD_SIZE=2 "$LOOPLAB" train $small --out bad
expect_error "bad rank" "RANK='one': expected a whole number" \
  env MASTER_ADDR=127.0.0.1 MASTER_PORT=1 RANK=one WORLD_SIZE=2 "$LOOPLAB" train $small --out bad
# Rank 0 cannot start the run: the other rank says why instead of waiting.
# (--out under a plain file: only rank 0 makes the folder.)
touch plain
PORT=$((PORT + 1))
for r in 0 1; do MASTER_ADDR=127.0.0.1 MASTER_PORT=$PORT RANK=$r WORLD_SIZE=2 "$LOOPLAB" train $small --out plain/run \
  >t.$r.log 2>&1 & done
wait
grep -q "looplab: error: rank 0 could not start the run: .*plain" t.1.log && [ "$(wc -l <t.1.log)" -eq 1 ] && ok ||
  bad "rank 1 on rank 0's failure: $(cat t.1.log)"
finish data_parallel
