#!/usr/bin/env bash
# `looplab bench step --count-ops` (issue 47): the ATen operators of one iteration and one step,
# counted through LibTorch's profiler hook, checked against what the architecture dictates
# (external recall, post norm: per iteration five Linear layers, Wx, qkv, out_proj, fc1 and fc2,
# Wh x0 being computed once per forward; four RMSNorms, two post-norms and the q/k norms; one
# attention), and the fused engine against the plain one; then bench/baseline.py's eager count
# (torch.profiler) where the setup's Python has torch: the paper's code computes Wh x0 in every
# iteration, six Linear layers.
# Usage: bench_ops_test.sh path/to/looplab
set -u
LOOPLAB=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SHAPE=(--task prefix-sums --positions 32 --batch 8 --width 32 --heads 2 --n 1 --k 2)
expect_ok "fused count" "$LOOPLAB" --threads 2 bench step "${SHAPE[@]}" --reps 1 --warmup 0 --no-matmul --count-ops
sed -n 's/^json: //p' "$TMP/out" >"$TMP/fused.json"
expect_ok "plain count" env LOOPLAB_ENGINE=plain "$LOOPLAB" --threads 2 bench step "${SHAPE[@]}" --reps 1 --warmup 0 --no-matmul --count-ops
sed -n 's/^json: //p' "$TMP/out" >"$TMP/plain.json"
grep -q "ATen operators (top-level / all): per iteration" "$TMP/out" && ok || bad "the printed line"
PY=$(cat "$ROOT/build/python.txt" 2>/dev/null || echo /usr/bin/python3)
if "$PY" -c 'import torch' 2>/dev/null; then
  "$PY" "$ROOT/bench/baseline.py" step "${SHAPE[@]}" --reps 1 --warmup 0 --threads 2 --count-ops >"$TMP/out" 2>"$TMP/err" &&
    sed -n 's/^json: //p' "$TMP/out" >"$TMP/eager.json" || bad "baseline.py --count-ops: $(cat "$TMP/err")"
else
  echo "(no Python with torch: bench/baseline.py's count not checked)"
fi
/usr/bin/python3 - "$TMP" <<'PY' && ok || bad "operator counts"
import json, os, sys
tmp = sys.argv[1]
phases = ("iteration_no_grad", "iteration_forward", "iteration_backward", "step")
ops = {side: json.load(open(os.path.join(tmp, side + ".json")))["ops"]
       for side in ("fused", "plain", "eager") if os.path.exists(os.path.join(tmp, side + ".json"))}
for side, o in ops.items():
    for ph in phases:
        c = o[ph]
        assert 0 < c["top"] <= c["all"], (side, ph, c)
        assert sum(c["top_names"].values()) == c["top"], (side, ph, c)
    print(side, {ph: (o[ph]["top"], o[ph]["all"]) for ph in phases})
plain = ops["plain"]
names = plain["iteration_no_grad"]["top_names"]
assert names.get("aten::linear") == 5, names
assert names.get("aten::rms_norm") == 4, names
assert names.get("aten::scaled_dot_product_attention") == 1, names
assert "aten::pow" not in names, names
# Autograd adds no operator to the forward; the backward runs more than the forward.
assert plain["iteration_forward"]["top_names"] == names, (plain["iteration_forward"], names)
assert plain["iteration_backward"]["top"] > plain["iteration_forward"]["top"]
# The fused block runs its norms, RoPE and attention in its own kernels: only its products and
# buffers are ATen operators.
fused = ops["fused"]["iteration_forward"]
assert fused["top"] < plain["iteration_forward"]["top"], (fused, plain["iteration_forward"])
assert not {"aten::rms_norm", "aten::scaled_dot_product_attention", "aten::mul", "aten::flip"} & set(fused["top_names"]), fused
# One step: n = 1 iteration without gradient, k = 2 with, their backward, AdamW.
for side, o in ops.items():
    least = o["iteration_no_grad"]["top"] + 2 * (o["iteration_forward"]["top"] + o["iteration_backward"]["top"])
    assert o["step"]["top"] > least, (side, o["step"]["top"], least)
if "eager" in ops:
    assert ops["eager"]["iteration_no_grad"]["top_names"].get("aten::linear") == 6, ops["eager"]["iteration_no_grad"]
PY
finish "bench operator counts"
