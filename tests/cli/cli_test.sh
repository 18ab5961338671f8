#!/usr/bin/env bash
# The command line end to end: good input works for every recall x norm on 1-D and 2-D
# grids; bad input gives one line on stderr and exit code 2, never a crash.
# Usage: cli_test.sh path/to/looplab path/to/tests/data/vectors
set -u
LOOPLAB=$1
VECTORS=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/lib.sh"

# --- info: SPEC's parameter counts ---------------------------------------------------------
params() { "$LOOPLAB" info "$@" --json | sed -n 's/^  "parameters": \([0-9]*\).*/\1/p'; }
[ "$(params --task prefix-sums --recall external --norm post)" = 987714 ] && ok || bad "prefix-sums external post != 987714"
[ "$(params --task prefix-sums --recall external --norm gru)" = 1382722 ] && ok || bad "prefix-sums external gru != 1382722"
# sudoku: 788,800 + 256 (post) + 131,584 + 66,048 + 257*10 + 256*11
[ "$(params --task sudoku --recall external --norm post)" = $((788800 + 256 + 131584 + 66048 + 2570 + 2816)) ] && ok || bad "sudoku count"
# chess: 788,800 + 512 (pre, peri) + 66,048 + 257*2 + 256*13
[ "$(params --task chess --recall none --norm peri)" = $((788800 + 512 + 66048 + 514 + 3328)) ] && ok || bad "chess count"

# --- init + forward for every recall x norm, 1-D and 2-D -----------------------------------
for task in prefix-sums sudoku chess; do
  case $task in
    prefix-sums) io=$VECTORS/prefix-sums-external-post.io.safetensors ;;
    sudoku) io=$VECTORS/sudoku-internal-gru.io.safetensors ;;
    chess) io=$VECTORS/chess-none-peri.io.safetensors ;;
  esac
  for recall in none external internal fixed; do
    for norm in pre peri post gru; do
      dir=$TMP/$task-$recall-$norm
      expect_ok "init $task $recall $norm" "$LOOPLAB" init --task $task --recall $recall --norm $norm \
        --width 32 --seed 1 --out "$dir"
      expect_ok "forward $task $recall $norm" "$LOOPLAB" forward "$dir" --input "$io" --iters 3 \
        --output "$dir/out.safetensors"
      grep -q "logits \[2, .*state \[2, .*, 32\]" "$TMP/out" && ok || bad "forward $task $recall $norm output: $(cat "$TMP/out")"
    done
  done
done

# The same seed gives the same weights.
"$LOOPLAB" init --task chess --recall external --norm post --width 32 --seed 1 --out "$TMP/again" >/dev/null
cmp -s "$TMP/again/model.safetensors" "$TMP/chess-external-post/model.safetensors" && ok || bad "init is not reproducible by seed"

# float64 and a longer 1-D input than the training grid.
expect_ok "forward float64" "$LOOPLAB" forward "$TMP/prefix-sums-external-post" --dtype float64 \
  --input "$VECTORS/prefix-sums-external-post.io.safetensors" --iters 1 --output "$TMP/o64.safetensors"

# --- bad input ------------------------------------------------------------------------------
M=$TMP/prefix-sums-external-post
PIO=$VECTORS/prefix-sums-external-post.io.safetensors
expect_error "unknown recall" "unknown recall 'sometimes'" "$LOOPLAB" info --recall sometimes
expect_error "unknown norm" "unknown normalization 'layer'" "$LOOPLAB" info --norm layer
expect_error "unknown task" "unknown task 'maze'" "$LOOPLAB" info --task maze
expect_error "unknown flag" "--bogus" "$LOOPLAB" info --bogus
expect_error "no subcommand" "subcommand" "$LOOPLAB"
expect_error "bad width" "not divisible by heads" "$LOOPLAB" info --width 100
expect_error "unknown dtype" "unknown dtype 'float8'" "$LOOPLAB" forward "$M" --input "$PIO" --output "$TMP/x" --dtype float8
expect_error "unknown device" "unknown device 'tpu'" "$LOOPLAB" forward "$M" --input "$PIO" --output "$TMP/x" --device tpu
# CUDA where there is none: one line saying which is missing, the CUDA build or the device.
"$LOOPLAB" info --system >"$TMP/sys" 2>&1
if grep -q "^CUDA       built: yes (.*), available: no$" "$TMP/sys"; then
  for c in "forward $M --input $PIO --output $TMP/x" "train --task prefix-sums --out $TMP/cuda-run" "eval $M"; do
    # shellcheck disable=SC2086
    expect_error "$c --device cuda without a GPU" "device 'cuda' requested, but no CUDA device is available" \
      "$LOOPLAB" $c --device cuda
  done
elif grep -q "^CUDA       built: no, available: no$" "$TMP/sys"; then
  expect_error "--device cuda without CUDA" "is built without CUDA" "$LOOPLAB" forward "$M" --input "$PIO" --output "$TMP/x" --device cuda
elif ! grep -q "^CUDA       built: yes (.*), available: yes" "$TMP/sys"; then
  bad "info --system: no CUDA line: $(cat "$TMP/sys")"
fi
expect_error "missing model dir" "$TMP/absent/config.json: no such file" \
  "$LOOPLAB" forward "$TMP/absent" --input "$PIO" --output "$TMP/x"
expect_error "missing input file" "$TMP/none.safetensors: no such file" \
  "$LOOPLAB" forward "$M" --input "$TMP/none.safetensors" --output "$TMP/x"
head -c 100 "$PIO" >"$TMP/cut.safetensors"
expect_error "truncated input" "cut.safetensors: not a valid safetensors file: truncated" \
  "$LOOPLAB" forward "$M" --input "$TMP/cut.safetensors" --output "$TMP/x"
head -c 2000 /dev/urandom >"$TMP/noise.safetensors"
expect_error "corrupt input" "noise.safetensors: not a valid safetensors file" \
  "$LOOPLAB" forward "$M" --input "$TMP/noise.safetensors" --output "$TMP/x"
expect_error "input of the wrong channels" "input must have shape \[batch, positions, 1\]" \
  "$LOOPLAB" forward "$M" --input "$VECTORS/sudoku-internal-gru.io.safetensors" --output "$TMP/x"
expect_error "no tensor named input" "no tensor named 'input' (found: logits, state)" \
  "$LOOPLAB" forward "$M" --input "$TMP/o64.safetensors" --output "$TMP/x"
expect_error "negative iterations" "iters" "$LOOPLAB" forward "$M" --input "$PIO" --iters -1 --output "$TMP/x"

# Weights that do not fit the config: wrong shapes (a sudoku model's weights) and wrong names.
mkdir -p "$TMP/mixed"
cp "$M/config.json" "$TMP/mixed/"
cp "$TMP/sudoku-external-post/model.safetensors" "$TMP/mixed/"
expect_error "wrong shape" "tensor 'projection.weight' has shape \[32, 10\], the config needs \[32, 1\]" \
  "$LOOPLAB" forward "$TMP/mixed" --input "$PIO" --output "$TMP/x"
cp "$TMP/prefix-sums-internal-peri/model.safetensors" "$TMP/mixed/"
expect_error "wrong names" "unexpected tensor\|is missing" \
  "$LOOPLAB" forward "$TMP/mixed" --input "$PIO" --output "$TMP/x"
head -c 5000 "$M/model.safetensors" >"$TMP/mixed/model.safetensors"
expect_error "truncated weights" "model.safetensors: not a valid safetensors file: truncated" \
  "$LOOPLAB" forward "$TMP/mixed" --input "$PIO" --output "$TMP/x"
echo '{"task": "prefix-sums", "recall": "external"' >"$TMP/mixed/config.json"
expect_error "corrupt config" "config.json: not valid JSON" \
  "$LOOPLAB" forward "$TMP/mixed" --input "$PIO" --output "$TMP/x"
sed 's/"norm": "post"/"norm": "sandwich"/' "$M/config.json" >"$TMP/mixed/config.json"
expect_error "bad config value" "config.json: key 'norm': unknown normalization 'sandwich'" \
  "$LOOPLAB" forward "$TMP/mixed" --input "$PIO" --output "$TMP/x"
expect_error "init over a model" "already holds a model" \
  "$LOOPLAB" init --seed 1 --out "$M"

# --- a command line that helps: the command list, the nearest command, option and value ------
"$LOOPLAB" >"$TMP/out" 2>"$TMP/err"
grep -q "^  train " "$TMP/out" && grep -q "^  data " "$TMP/out" && ok || bad "looplab alone: no command list: $(cat "$TMP/out")"
expect_error "mistyped command" "unknown command 'trian'; did you mean 'train'?" "$LOOPLAB" trian
expect_error "mistyped subcommand" "unknown command 'data prefx-sums'; did you mean 'prefix-sums'?" "$LOOPLAB" data prefx-sums
expect_error "mistyped illustration" "unknown command 'explore memory-decy'; did you mean 'memory-decay'?" \
  "$LOOPLAB" explore memory-decy
expect_error "illustration missing" "a subcommand of 'explore' is required (one of: list, memory-decay" "$LOOPLAB" explore
expect_error "mistyped option" "unknown option '--lrr' for 'train'; did you mean '--lr'?" "$LOOPLAB" train --lrr 0.1
# A bad value is reported before a missing option (train needs --out).
expect_error "bad value before missing option" "unknown task 'sudok' .*did you mean 'sudoku'?" "$LOOPLAB" train --task sudok
expect_error "bad recall before missing option" "unknown recall 'extrnal'.*did you mean 'external'?" "$LOOPLAB" train --recall extrnal
# The library names the option, the command line the flag.
expect_error "library option named as its flag" "^looplab: error: --training-iters must be >= 1" \
  "$LOOPLAB" train --training-iters 0 --out "$TMP/r0"
# The flag's old name is still accepted (scripts written before schema 3 of training.json).
expect_error "old flag name accepted" "^looplab: error: --training-iters must be >= 1" \
  "$LOOPLAB" train --max-iters 0 --out "$TMP/r0"

# --- demo: the shipped models' table, the paper's configuration's seeds where shipped --------
MODELS=$(cd "$(dirname "$0")/../../models" && pwd)
demo() { "$LOOPLAB" demo --models "$1" --val-count 2 --hard-count 1 --iters 3 --live-epochs 0 "${@:2}"; }
expect_ok "demo" demo "$MODELS" --paper-val-count 2 --paper-hard-count 1
# the contrast's table, rows for 1 and 3 iterations; then one row per seed, each with its stored
# full evaluation (read back from its eval-val.json / eval-hard.json), their mean and the paper's
[ "$(grep -cE '^ +3 \|' "$TMP/out")" = 1 ] && [ "$(grep -cE '^ +1 \|' "$TMP/out")" = 1 ] && ok || bad "demo table: $(cat "$TMP/out")"
grep -q "^The paper's own prefix-sums configuration, trained here" "$TMP/out" && ok || bad "demo: the seeds' heading"
for seed in 0 1 2; do
  want=$(python3 -c "import json,sys; d='$MODELS/prefix-sums-paper-seed-$seed'; v=json.load(open(d+'/eval-val.json'))['splits']['val']; h=json.load(open(d+'/eval-hard.json'))['splits']['hard']; print('%.2f%% of %d +%.2f%% of %d' % (100*v['exact'][-1], v['count'], 100*h['exact'][-1], h['count']))")
  grep -qE "^$seed +\|.*\| $want" "$TMP/out" && ok || bad "demo: seed $seed's row lacks '$want': $(grep -E "^$seed " "$TMP/out")"
done
grep -qE "^mean of 3 +\| +\| 100.00% +100.00%" "$TMP/out" && grep -qE "^the paper +\| +\| 99.78% +99.74%" "$TMP/out" && ok ||
  bad "demo: the mean and the paper's row: $(tail -n 6 "$TMP/out")"
grep -q "external-post-paper" "$TMP/out" && bad "demo: the earlier recipe's run is still shown" || ok
expect_ok "demo without the seeds" demo "$MODELS" --paper-val-count 0
[ "$(grep -cE '^ +3 \|' "$TMP/out")" = 1 ] && ! grep -q "paper's own" "$TMP/out" && ok || bad "demo --paper-val-count 0"
mkdir -p "$TMP/models" && cp -r "$MODELS/prefix-sums-external-post" "$MODELS/prefix-sums-none-post" "$TMP/models/"
expect_ok "demo, no seeds shipped" demo "$TMP/models"
[ "$(grep -c "no trained model there, so this seed is not shown" "$TMP/out")" = 3 ] && ok || bad "demo: missing seeds"
expect_error "demo --val-count 0" "counts and --iters must be >= 1" "$LOOPLAB" demo --models "$MODELS" --val-count 0
expect_error "demo --paper-hard-count -2" "must be >= 0" "$LOOPLAB" demo --models "$MODELS" --paper-hard-count -2

# --- the BLAS kernel (src/looplab/platform/blas_kernel.h) ---------------------------------------------
sys_json() { env "$@" "$LOOPLAB" info --system --json; }
field() { sed -n "s/^  \"$1\": \"\(.*\)\",\{0,1\}$/\1/p"; }
if [ -z "$(sys_json | field blas)" ]; then
  # Not OpenBLAS: the PyTorch wheel's LibTorch carries MKL, which info --system names.
  sys_json | field mkl | grep -q "Math Kernel Library" && ok || bad "info --system: neither OpenBLAS nor MKL named"
elif grep -qw avx2 /proc/cpuinfo; then
  # On a CPU with AVX2 or AVX-512 and nothing set, the kernel in use is not a generic fallback.
  k=$(sys_json -u OPENBLAS_CORETYPE -u LOOPLAB_BLAS_KERNEL -u LOOPLAB_BLAS_CHECK | field blas_kernel)
  case $k in Haswell|Zen|SkylakeX|Cooperlake|SapphireRapids) ok ;; *) bad "BLAS kernel '$k' with nothing set" ;; esac
fi
if [ -n "$(sys_json | field blas)" ]; then
  # A value set outside looplab is kept.
  [ "$(sys_json OPENBLAS_CORETYPE=Haswell | field blas_kernel_source)" = "OPENBLAS_CORETYPE (set outside looplab)" ] &&
    ok || bad "OPENBLAS_CORETYPE set outside looplab not kept"
  # A kernel looplab asked for that OpenBLAS does not run: back to OpenBLAS's own, and said so.
  sys_json OPENBLAS_CORETYPE=Bogus LOOPLAB_BLAS_KERNEL=Bogus >"$TMP/sys.json"
  field blas_check <"$TMP/sys.json" | grep -q "^failed: Bogus: OpenBLAS runs" && ok || bad "failed choice: $(cat "$TMP/sys.json")"
  [ "$(field blas_kernel_source <"$TMP/sys.json")" = "OpenBLAS's detection" ] && ok || bad "failed choice not undone"
fi

finish "cli"
