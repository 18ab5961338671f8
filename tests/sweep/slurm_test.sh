#!/usr/bin/env bash
# SLURM as the sweep's engine, against the real daemons (issue 18): a one-node cluster started
# here (tests/sweep/slurm_cluster.sh), `srun -n 2` and an array job, then a toy sweep submitted
# with `looplab sweep submit`, waited for, every run checked, and its report compared with the
# local pool's for the same file. Skipped (exit 77) only where the daemons cannot run: not root,
# or Debian's slurmctld, slurmd and munge are not installed (scripts/setup installs them).
# Usage: slurm_test.sh path/to/looplab
set -u
LOOPLAB=$(realpath "$1")
HERE=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: the one-node SLURM cluster needs root"; exit 77; fi
for b in slurmctld slurmd munged mungekey sbatch squeue sinfo srun runuser; do
  command -v $b >/dev/null || { echo "SKIP: $b is not installed (scripts/setup installs slurmctld, slurmd, munge)"; exit 77; }
done
TMP=$(mktemp -d)
chmod 755 "$TMP"
export SLURM_CONF=$TMP/cluster/slurm.conf
trap 'bash "$HERE/slurm_cluster.sh" stop "$TMP/cluster"; rm -rf "$TMP"' EXIT
source "$HERE/../cli/lib.sh"

bash "$HERE/slurm_cluster.sh" start "$TMP/cluster" >"$TMP/start.log" 2>&1 && ok ||
  { bad "the cluster did not start: $(tail -5 "$TMP/start.log"; tail -5 "$TMP"/cluster/log/*.log)"; finish slurm; exit 1; }
[ "$(srun -n 2 hostname | wc -l)" -eq 2 ] && ok || bad "srun -n 2 did not run 2 tasks"

toy_sweep "$TMP/toy.toml" '"none", "external"' 2 300 'out = "runs"'
sed 's/^out = "runs"/out = "local"/' "$TMP/toy.toml" >"$TMP/local.toml"

expect_ok "submit" "$LOOPLAB" sweep submit "$TMP/toy.toml" --max-parallel 2
job=$(sed -n 's/.*submitted job \([0-9]*\).*/\1/p' "$TMP/out")
[ -n "$job" ] && ok || bad "no job id in: $(cat "$TMP/out")"
grep -q "^#SBATCH --array=0-3%2" "$TMP/runs/slurm/submit-0.sh" && ok || bad "array line: $(cat "$TMP/runs/slurm/submit-0.sh")"
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.5
done
[ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && ok || bad "the array did not finish in 5 minutes: $(squeue -j "$job")"
expect_ok "status" "$LOOPLAB" sweep status "$TMP/toy.toml"
[ "$(grep -c " done " "$TMP/out")" -eq 4 ] && ok || bad "not every run is done: $(cat "$TMP/out"; cat "$TMP"/runs/slurm/*.out)"
expect_error "submit when done" "every run is done" "$LOOPLAB" sweep submit "$TMP/toy.toml"

# The same sweep on the local pool: the same report.
expect_ok "local pool" "$LOOPLAB" sweep run "$TMP/local.toml" --workers 2
expect_ok "report (slurm)" "$LOOPLAB" sweep report "$TMP/toy.toml"
expect_ok "report (local)" "$LOOPLAB" sweep report "$TMP/local.toml"
/usr/bin/python3 - "$TMP/runs/report.json" "$TMP/local/report.json" <<'PY' && ok || bad "the SLURM and local reports differ"
import json, sys
a, b = (json.load(open(p))["groups"] for p in sys.argv[1:3])
assert [g["group"] for g in a] == [g["group"] for g in b]
for x, y in zip(a, b):
    for k in ("val", "hard", "rho"):
        assert x[k] == y[k], (x["group"], k, x[k], y[k])
PY

# Data-parallel runs under srun (issue 20): two ranks train what one process trains.
dp="--task prefix-sums --width 16 --heads 2 --train-count 2000 --val-count 100 --epochs 3 --max-iters 6 --train-bits 8 --seed 3 --batch 500"
expect_ok "one process" "$LOOPLAB" --threads 1 train $dp --out "$TMP/dp1"
expect_ok "srun -n 2 train" srun -n 2 "$LOOPLAB" train $dp --out "$TMP/dp2"
grep -q "data-parallel on 2 ranks (gloo), each with about 250 of every batch and 1 thread" "$TMP/out" && ok ||
  bad "srun -n 2: $(head -3 "$TMP/out")"
/usr/bin/python3 "$HERE/../distributed/compare_weights.py" "$TMP/dp1/model.safetensors" "$TMP/dp2/model.safetensors" 1e-5 \
  >"$TMP/cmp" && ok || bad "srun -n 2 weights: $(cat "$TMP/cmp")"
echo "srun -n 2 vs one process: $(cat "$TMP/cmp")"

# The toy sweep again with two ranks per run: each array task is an srun step of 2 tasks, and
# its runs' weights are the local pool's.
sed 's/^out = "runs"/out = "ranks"/' "$TMP/toy.toml" >"$TMP/ranks.toml"
expect_ok "submit --ranks-per-run 2" "$LOOPLAB" sweep submit "$TMP/ranks.toml" --ranks-per-run 2
job=$(sed -n 's/.*submitted job \([0-9]*\).*/\1/p' "$TMP/out")
grep -q "^#SBATCH --ntasks=2" "$TMP/ranks/slurm/submit-0.sh" && grep -q "^exec srun --kill-on-bad-exit=1 " "$TMP/ranks/slurm/submit-0.sh" &&
  ok || bad "the script with 2 ranks: $(cat "$TMP/ranks/slurm/submit-0.sh")"
for _ in $(seq 600); do
  [ -z "$(squeue -h -j "$job" 2>/dev/null)" ] && break
  sleep 0.5
done
expect_ok "status (ranks)" "$LOOPLAB" sweep status "$TMP/ranks.toml"
[ "$(grep -c " done " "$TMP/out")" -eq 4 ] && ok || bad "not every 2-rank run is done: $(cat "$TMP/out"; cat "$TMP"/ranks/slurm/*.out)"
for run in "$TMP"/local/recall-*; do
  name=$(basename "$run")
  /usr/bin/python3 "$HERE/../distributed/compare_weights.py" "$run/model.safetensors" "$TMP/ranks/$name/model.safetensors" 1e-5 \
    >"$TMP/cmp" && ok || bad "$name on 2 ranks: $(cat "$TMP/cmp")"
done
echo "2-rank sweep run vs the local pool's, the last: $(cat "$TMP/cmp")"
finish slurm
