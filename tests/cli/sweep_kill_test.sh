#!/usr/bin/env bash
# A sweep killed at many moments (issue 19): a 4-run toy sweep on a pool of 2 workers, killed
# with kill -9 at KILLS moments spread uniformly from its first instant to the end of an
# uninterrupted sweep (each moment a fresh sweep, killed once, then run again; every third one
# killed a second time during the restart). Every time, each run ends done exactly once, with
# the uninterrupted sweep's weights (cmp), its epochs recorded once, and no worker outlives a
# killed pool.
# Usage: sweep_kill_test.sh path/to/looplab [KILLS]
set -u
LOOPLAB=$(realpath "$1")
KILLS=${2:-12}
TMP=$(mktemp -d)
trap 'pkill -9 -f "$TMP/" 2>/dev/null; rm -rf "$TMP"' EXIT
source "$(dirname "$0")/lib.sh"
toy() { toy_sweep "$TMP/$1.toml" '"none", "external"' 3 400; }  # runs land in $TMP/NAME
POOL=(sweep run --workers 2 --threads-per-run 1)
toy whole
start=$(date +%s%N)
expect_ok "uninterrupted sweep" "$LOOPLAB" "${POOL[@]}" "$TMP/whole.toml"
total_ms=$(( ($(date +%s%N) - start) / 1000000 ))
matched=0 landed=0
for i in $(seq 0 $((KILLS - 1))); do
  name=k$i
  toy $name
  ms=$(( total_ms * 95 * i / (100 * (KILLS - 1)) ))
  "$LOOPLAB" "${POOL[@]}" "$TMP/$name.toml" >/dev/null 2>&1 &
  pool=$!
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  if kill -9 "$pool" 2>/dev/null; then landed=$((landed + 1)); else [ "$ms" -gt 0 ] && total_ms=$(( ms * 100 / 95 )); fi
  wait "$pool" 2>/dev/null
  if [ $((i % 3)) = 2 ]; then  # killed again, early in the restart
    "$LOOPLAB" "${POOL[@]}" "$TMP/$name.toml" >/dev/null 2>&1 &
    pool=$!
    sleep 0.4
    kill -9 "$pool" 2>/dev/null
    wait "$pool" 2>/dev/null
  fi
  for _ in $(seq 50); do pgrep -f "sweep exec $TMP/$name.toml" >/dev/null || break; sleep 0.1; done
  pgrep -f "sweep exec $TMP/$name.toml" >/dev/null && bad "$name: workers outlived the killed pool" || ok
  "$LOOPLAB" "${POOL[@]}" "$TMP/$name.toml" >"$TMP/out" 2>"$TMP/err" || bad "$name: the restart failed: $(cat "$TMP/err")"
  same=1
  for d in "$TMP"/whole/recall-*; do
    r=$(basename "$d")
    cmp -s "$d/model.safetensors" "$TMP/$name/$r/model.safetensors" || { same=0; bad "$name/$r (killed at $ms ms of $total_ms): weights differ"; }
    [ "$(wc -l <"$TMP/$name/$r/metrics.jsonl")" -eq 3 ] || { same=0; bad "$name/$r: $(wc -l <"$TMP/$name/$r/metrics.jsonl") epochs recorded"; }
    [ -f "$TMP/$name/$r/sweep_done.json" ] && [ ! -f "$TMP/$name/$r/sweep_failed.json" ] || { same=0; bad "$name/$r: not done"; }
  done
  [ "$same" = 1 ] && { matched=$((matched + 1)); ok; }
done
echo "sweep kill points: $KILLS tried over ${total_ms} ms ($landed landed before the sweep ended), $matched finished sweeps equal the uninterrupted one"
[ "$landed" -ge $((KILLS / 2)) ] && ok || bad "only $landed of $KILLS kills landed while the sweep was running"
finish sweep_kill
