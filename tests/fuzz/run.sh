#!/usr/bin/env bash
# run.sh TARGET SEEDS SECONDS: a fuzz target for SECONDS over its committed seeds (and the
# regression inputs among them), new inputs kept in a scratch folder, not in the repository.
# Prints libFuzzer's final line (executions, coverage) and fails on any crash, leak or hang.
set -u
target=$1 seeds=$2 seconds=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$scratch/" "$scratch" "$seeds" >"$scratch/log" 2>&1
rc=$?
grep -E "^stat::number_of_executed_units|^Done|ERROR|SUMMARY" "$scratch/log" | head -5
if [ $rc -ne 0 ]; then
  tail -40 "$scratch/log"
  for a in "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-*; do [ -f "$a" ] && echo "input: $(base64 -w0 "$a")"; done
fi
exit $rc
