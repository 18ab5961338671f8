#!/usr/bin/env bash
# Training, data and evaluation from the command line: tiny runs, a kill -9 in the middle of
# an epoch and its resume, and one-line errors for malformed data files.
# Usage: train_test.sh path/to/looplab
set -u
LOOPLAB=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/lib.sh"

TINY=(--task prefix-sums --recall external --norm post --width 16 --heads 2 --max-iters 4 --batch 50
      --train-bits 8 --val-count 40 --hard-count 20 --hard-bits 16 --seed 5)

# --- data ------------------------------------------------------------------------------------
expect_ok "data prefix-sums" "$LOOPLAB" data prefix-sums --bits 8 --count 100 --seed 1 --out "$TMP/train.csv"
[ "$(wc -l <"$TMP/train.csv")" -eq 101 ] && ok || bad "data: expected 101 lines"
[ "$(head -1 "$TMP/train.csv")" = "input,target" ] && ok || bad "data: header"
"$LOOPLAB" data prefix-sums --bits 8 --count 100 --seed 1 --out "$TMP/again.csv" >/dev/null
cmp -s "$TMP/train.csv" "$TMP/again.csv" && ok || bad "data is not reproducible by seed"

# Malformed files, each named with its line.
cp "$TMP/train.csv" "$TMP/badchar.csv"; sed -i '5s/^./x/' "$TMP/badchar.csv"
expect_error "bad character" "badchar.csv:5: field 'input': character 1 is 'x'" \
  "$LOOPLAB" train "${TINY[@]}" --train-file "$TMP/badchar.csv" --out "$TMP/r-bad"
cp "$TMP/train.csv" "$TMP/badlen.csv"; echo "0101,0110" >>"$TMP/badlen.csv"
expect_error "length differs" "badlen.csv:102: field 'input' has 4 bits, earlier rows have 8" \
  "$LOOPLAB" train "${TINY[@]}" --train-file "$TMP/badlen.csv" --out "$TMP/r-bad"
awk -F, 'NR == 7 { $2 = substr($2, 1, 7) (substr($2, 8, 1) == "0" ? "1" : "0") } { print }' OFS=, \
  "$TMP/train.csv" >"$TMP/badparity.csv"
sed -n 7p "$TMP/train.csv" >"$TMP/l1"; sed -n 7p "$TMP/badparity.csv" >"$TMP/l2"
cmp -s "$TMP/l1" "$TMP/l2" && bad "test set-up: line 7 unchanged" || ok
expect_error "wrong target" "badparity.csv:7: field 'target': bit 8 is not the prefix parity" \
  "$LOOPLAB" train "${TINY[@]}" --train-file "$TMP/badparity.csv" --out "$TMP/r-bad"
printf 'input\n0101\n' >"$TMP/nocol.csv"
expect_error "missing column" "nocol.csv:1: header must name the columns input,target" \
  "$LOOPLAB" train "${TINY[@]}" --train-file "$TMP/nocol.csv" --out "$TMP/r-bad"
expect_error "missing file" "absent.csv: no such file" \
  "$LOOPLAB" train "${TINY[@]}" --train-file "$TMP/absent.csv" --out "$TMP/r-bad"

# --- train, resume, options ------------------------------------------------------------------
expect_ok "train 2 epochs" "$LOOPLAB" train "${TINY[@]}" --train-count 200 --epochs 2 --out "$TMP/run"
expect_ok "resume to 3" "$LOOPLAB" train --resume "$TMP/run" --epochs 3
[ "$(wc -l <"$TMP/run/metrics.jsonl")" -eq 3 ] && ok || bad "resume: expected 3 metrics lines"
for f in config.json training.json model.safetensors best.safetensors checkpoint.safetensors metrics.jsonl; do
  [ -f "$TMP/run/$f" ] && ok || bad "run folder lacks $f"
done
expect_error "resume changing lr" "--lr cannot change a run being resumed" "$LOOPLAB" train --resume "$TMP/run" --lr 0.1
expect_error "train over a run" "already holds a run" "$LOOPLAB" train "${TINY[@]}" --out "$TMP/run"
expect_error "unknown preset" "unknown preset 'huge'" "$LOOPLAB" train --preset huge --out "$TMP/r2"
expect_error "no out" "--out DIR is required" "$LOOPLAB" train "${TINY[@]}"
expect_error "bad alpha" "--alpha must lie in \[0, 1\]" "$LOOPLAB" train "${TINY[@]}" --alpha 2 --out "$TMP/r3"

# --- a run stopped before its first checkpoint resumes from its start -------------------------
expect_ok "train 2 epochs, the reference" "$LOOPLAB" train "${TINY[@]}" --train-count 200 --epochs 2 --out "$TMP/ref"
mkdir -p "$TMP/early" && cp "$TMP/ref/config.json" "$TMP/ref/training.json" "$TMP/early/"
expect_ok "resume a run without a checkpoint" "$LOOPLAB" train --resume "$TMP/early"
cmp -s "$TMP/ref/model.safetensors" "$TMP/early/model.safetensors" && ok || bad "resume from the start: other weights"
[ "$(wc -l <"$TMP/early/metrics.jsonl")" -eq 2 ] && ok || bad "resume from the start: expected 2 metrics lines"

# --- kill -9 in the middle of an epoch, then resume: same weights as a run never killed -------
# Epochs of ~0.4 s on an idle core (3,000 examples took 0.1 s on LibTorch 1.13: the run ended
# before the kill), killed 0.1 s after the first checkpoint. The wait is for that event, not for
# a time: a sanitizer build beside other jobs can take minutes for the first epoch. The bound
# (15 min) only keeps a hung run from hanging the suite, and says what it saw when it passes.
LONG=("${TINY[@]}" --train-count 12000 --epochs 4)
expect_ok "straight run" "$LOOPLAB" train "${LONG[@]}" --out "$TMP/straight"
"$LOOPLAB" train "${LONG[@]}" --out "$TMP/killed" >"$TMP/killed.log" 2>&1 &
pid=$!
waited=0
while [ ! -f "$TMP/killed/checkpoint.safetensors" ] && kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 18000 ]; do
  sleep 0.05
  waited=$((waited + 1))
done
if [ -f "$TMP/killed/checkpoint.safetensors" ]; then
  sleep 0.1
  kill -9 "$pid" 2>/dev/null && ok || bad "the run finished within 0.1 s of its first checkpoint, before it could be killed"
  wait "$pid" 2>/dev/null
  done_epochs=$(wc -l <"$TMP/killed/metrics.jsonl")
  [ "$done_epochs" -lt 4 ] && ok || bad "kill came too late ($done_epochs epochs done)"
elif kill -0 "$pid" 2>/dev/null; then
  kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  bad "no checkpoint after 15 min; the run printed: $(tail -n 3 "$TMP/killed.log" | tr '\n' ' ')"
else
  wait "$pid"; status=$?
  bad "the run ended (exit $status) before writing its first checkpoint: $(tail -n 3 "$TMP/killed.log" | tr '\n' ' ')"
fi
expect_ok "resume after kill -9" "$LOOPLAB" train --resume "$TMP/killed"
[ "$(wc -l <"$TMP/killed/metrics.jsonl")" -eq 4 ] && ok || bad "after resume: expected 4 metrics lines"
cmp -s "$TMP/killed/model.safetensors" "$TMP/straight/model.safetensors" && ok ||
  bad "killed and resumed run differs from the straight run"

# --- how the gradient is taken (--gradient), the Jacobian penalty (--jacobian-weight) and the
# weight average (--ema): each trains, records what it adds, and a run killed with kill -9 at
# three moments and resumed each time equals an uninterrupted one -----------------------------
declare -A METHOD=([one-step]="--gradient one-step" [phantom]="--gradient phantom" [implicit]="--gradient implicit"
                   [jacobian]="--jacobian-weight 0.1" [ema]="--ema 0.9"
                   [implicit-jacobian-ema]="--gradient implicit --jacobian-weight 0.1 --ema 0.9"
                   [halt-head]="--halt-head --halt-weight 0.5" [bf16-mixed]="--precision bf16-mixed")
methods=(one-step phantom implicit jacobian ema implicit-jacobian-ema halt-head)
# bf16-mixed (the fused engine's bfloat16 products): where the CPU has bfloat16 instructions.
if grep -qw avx512_bf16 /proc/cpuinfo; then
  methods+=(bf16-mixed)
else
  echo "skipped: bf16-mixed kill and resume (this CPU has no AVX512-BF16, so train refuses bf16-mixed)"
fi
for g in "${methods[@]}"; do
  read -r -a extra <<<"${METHOD[$g]}"
  G=("${TINY[@]}" --train-count 600 "${extra[@]}" --batch-tolerance 1e-3 --phantom-steps 2 --epochs 3)
  start=$(date +%s%N)
  expect_ok "--gradient $g" "$LOOPLAB" --threads 1 train "${G[@]}" --out "$TMP/g-$g"
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  case $g in
    phantom) grep -q '"forward_converged"' "$TMP/g-$g/metrics.jsonl" && ok || bad "$g: no forward_converged" ;;
    implicit*) grep -q '"adjoint_converged"' "$TMP/g-$g/metrics.jsonl" && ok || bad "$g: no adjoint_converged" ;;
    bf16-mixed) grep -q '"precision": "bf16-mixed"' "$TMP/g-$g/training.json" && ok || bad "$g: training.json lacks the precision" ;;
    one-step) grep -q '"forward_converged"' "$TMP/g-$g/metrics.jsonl" && bad "$g: forward_converged recorded" || ok
              grep -q '"gradient": "one-step"' "$TMP/g-$g/training.json" && ok || bad "$g: training.json lacks the gradient" ;;
  esac
  case $g in
    *jacobian*) grep -q '"jacobian_weight": 0.1' "$TMP/g-$g/training.json" && ok || bad "$g: training.json lacks the weight"
                [ "$(grep -c '"jacobian":' "$TMP/g-$g/metrics.jsonl")" -eq 3 ] && ok || bad "$g: metrics lack the penalty" ;;
    *) grep -q '"jacobian":' "$TMP/g-$g/metrics.jsonl" && bad "$g: a penalty recorded without one" || ok ;;
  esac
  case $g in
    halt-head) grep -q '"halt_head": true' "$TMP/g-$g/config.json" && ok || bad "$g: config.json lacks the head"
               [ "$(grep -c '"halt_accuracy":' "$TMP/g-$g/metrics.jsonl")" -eq 3 ] && ok || bad "$g: metrics lack the head's figures" ;;
    *) grep -q '"halt_loss":' "$TMP/g-$g/metrics.jsonl" && bad "$g: a halting loss without a head" || ok ;;
  esac
  case $g in
    *ema) [ -f "$TMP/g-$g/raw.safetensors" ] && ok || bad "$g: no raw.safetensors"
          cmp -s "$TMP/g-$g/raw.safetensors" "$TMP/g-$g/model.safetensors" && bad "$g: model.safetensors is not the average" || ok ;;
    *) [ -f "$TMP/g-$g/raw.safetensors" ] && bad "$g: raw.safetensors without --ema" || ok ;;
  esac
  for at in 30 55 80; do
    "$LOOPLAB" --threads 1 train "${G[@]}" --out "$TMP/gk-$g-$at" >/dev/null 2>&1 &
    pid=$!
    sleep "$(printf '%d.%03d' $((ms * at / 100000)) $((ms * at / 100 % 1000)))"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if [ -f "$TMP/gk-$g-$at/training.json" ]; then
      "$LOOPLAB" --threads 1 train --resume "$TMP/gk-$g-$at" >/dev/null 2>&1
    else
      "$LOOPLAB" --threads 1 train "${G[@]}" --out "$TMP/gk-$g-$at" >/dev/null 2>&1
    fi
    cmp -s "$TMP/gk-$g-$at/model.safetensors" "$TMP/g-$g/model.safetensors" && ok ||
      bad "$g killed at $at% and resumed differs from the uninterrupted run"
    case $g in
      *ema) cmp -s "$TMP/gk-$g-$at/raw.safetensors" "$TMP/g-$g/raw.safetensors" && ok ||
              bad "$g killed at $at% and resumed: other raw weights" ;;
    esac
  done
done
expect_error "phantom needs alpha 1" "--alpha must be 1 with --gradient phantom" \
  "$LOOPLAB" train "${TINY[@]}" --gradient phantom --alpha 0.5 --out "$TMP/g-bad"
expect_error "unknown gradient" "--gradient 'adjoint': expected bptt, one-step, phantom or implicit" \
  "$LOOPLAB" train "${TINY[@]}" --gradient adjoint --out "$TMP/g-bad"
# --- halting (eval --halt) and test-time compute against difficulty (eval --scaling) ----------
expect_ok "eval --halt" "$LOOPLAB" eval "$TMP/g-halt-head" --halt learned,confidence,fixed-point --iters 12 --split val,hard
python3 - "$TMP/g-halt-head/eval_halt.json" <<'PY' && ok || bad "eval_halt.json: not three rules per split"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["max_iters"] == 12 and set(r["splits"]) == {"val", "hard"}
for s in r["splits"].values():
    assert [x["rule"] for x in s["rules"]] == ["learned", "confidence", "fixed-point"]
    assert all(1 <= x["mean_iters"] <= x["most_iters"] <= 12 and 0 <= x["exact"] <= 1 for x in s["rules"])
PY
expect_ok "eval --halt-threshold" "$LOOPLAB" eval "$TMP/g-halt-head" --halt confidence --halt-threshold 0.999 --iters 12 --split val
grep -q '"threshold":0.999' "$TMP/g-halt-head/eval_halt.json" && ok || bad "eval --halt-threshold: not recorded"
expect_error "learned without a head" "--halt learned needs a model with a halting head" \
  "$LOOPLAB" eval "$TMP/g-one-step" --halt learned --iters 4
expect_error "a threshold for two rules" "--halt-threshold needs exactly one --halt rule" \
  "$LOOPLAB" eval "$TMP/g-halt-head" --halt learned,confidence --halt-threshold 0.5 --iters 4
expect_error "unknown rule" "--halt 'oracle': expected learned, confidence or fixed-point" \
  "$LOOPLAB" eval "$TMP/g-halt-head" --halt oracle --iters 4
# Two flags asking for two evaluations: one error naming both, and no report written.
rm -f "$TMP/g-halt-head/eval_scaling.json" "$TMP/g-halt-head/eval_accelerated.json"
expect_error "--scaling with --early-exit" "--scaling and --early-exit ask for two evaluations" \
  "$LOOPLAB" eval "$TMP/g-halt-head" --scaling --halt confidence --early-exit 1e-3 --count 3 --iters 8
expect_error "--halt with --anderson" "--halt and --anderson ask for two evaluations" \
  "$LOOPLAB" eval "$TMP/g-halt-head" --halt confidence --anderson 3 --iters 8
[ ! -f "$TMP/g-halt-head/eval_scaling.json" ] && [ ! -f "$TMP/g-halt-head/eval_accelerated.json" ] && ok ||
  bad "a refused evaluation wrote a report"
expect_ok "eval --scaling" "$LOOPLAB" eval "$TMP/g-halt-head" --scaling --count 3 --iters 8
python3 - "$TMP/g-halt-head/eval_scaling.json" <<'PY' && ok || bad "eval_scaling.json: not 7 levels of 32 to 2048 bits"
import json, sys
r = json.load(open(sys.argv[1]))
assert [l["size"] for l in r["levels"]] == [32, 64, 128, 256, 512, 1024, 2048]
assert all(l["result"]["count"] == 3 and len(l["result"]["rules"]) == 3 for l in r["levels"])
PY

expect_error "ema of 1" "--ema must lie in \[0, 1)" "$LOOPLAB" train "${TINY[@]}" --ema 1 --out "$TMP/g-bad"
expect_error "negative penalty" "--jacobian-weight must be >= 0" "$LOOPLAB" train "${TINY[@]}" --jacobian-weight -1 --out "$TMP/g-bad"

# --- eval ------------------------------------------------------------------------------------
expect_ok "eval" "$LOOPLAB" eval "$TMP/run" --split val,hard --iters 1:20
grep -q "^hard (20 examples, 16 positions)" "$TMP/out" && ok || bad "eval table: $(cat "$TMP/out")"
grep -q '"relative_step"' "$TMP/run/eval.json" && ok || bad "eval.json lacks relative_step"
expect_ok "eval json" "$LOOPLAB" eval "$TMP/run" --split val --iters 3:7 --json --weights final
grep -q '"iterations": \[' "$TMP/out" && ok || bad "eval --json output"
expect_error "eval bad range" "--iters '5:2'" "$LOOPLAB" eval "$TMP/run" --iters 5:2
expect_error "eval bad split" "--split 'test': expected train, val or hard" "$LOOPLAB" eval "$TMP/run" --split test
expect_error "eval bad weights" "--weights 'first'" "$LOOPLAB" eval "$TMP/run" --weights first

finish "train cli"
