#!/usr/bin/env bash
# Faults at many points (issue 19): a tiny training run killed with kill -9 at KILLS moments
# spread uniformly from its first instant to its last write (each moment a fresh run, killed
# once, then resumed; every fourth one killed a second time during its resume), always ending
# with the weights of an uninterrupted run. Then a truncated and a corrupted checkpoint, and a
# settings file cut short: each an error naming the file on resume, never a silent restart.
# And (as root) a full disk: a write that fails leaves the previous checkpoint loadable.
# Then EARLY kills in the first second, where the folder is made (issue 34): never a half-made
# folder.
# Usage: kill_test.sh path/to/looplab [KILLS] [EARLY]
set -u
LOOPLAB=$1
KILLS=${2:-24}
EARLY=${3:-50}
TMP=$(mktemp -d)
trap 'mountpoint -q "$TMP/full" 2>/dev/null && umount "$TMP/full"; rm -rf "$TMP"' EXIT
source "$(dirname "$0")/lib.sh"

RUN=(--threads 1 train --task prefix-sums --recall external --norm post --width 16 --heads 2 --max-iters 4 --batch 50
     --train-bits 8 --val-count 40 --hard-count 20 --hard-bits 16 --seed 3 --train-count 1000)
# The run's length: the quicker of two uninterrupted runs (the machine may be busy).
total_ms=0
for r in straight again; do
  start=$(date +%s%N)
  expect_ok "uninterrupted run" "$LOOPLAB" "${RUN[@]}" --epochs 4 --out "$TMP/$r"
  ms=$(( ($(date +%s%N) - start) / 1000000 ))
  [ "$total_ms" -eq 0 ] || [ "$ms" -lt "$total_ms" ] && total_ms=$ms
done
cmp -s "$TMP/straight/model.safetensors" "$TMP/again/model.safetensors" && ok || bad "two uninterrupted runs differ"

matched=0 landed=0
for i in $(seq 0 $((KILLS - 1))); do
  dir="$TMP/k$i"
  ms=$(( total_ms * 95 * i / (100 * (KILLS - 1)) ))  # from 0 to 95% of the run
  "$LOOPLAB" "${RUN[@]}" --epochs 4 --out "$dir" >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  # A run that ended before its kill took at most that long: later moments scale to it (the
  # length measured first is too long when the machine got less busy since).
  if kill -9 "$pid" 2>/dev/null; then landed=$((landed + 1)); else [ "$ms" -gt 0 ] && total_ms=$(( ms * 100 / 95 )); fi
  wait "$pid" 2>/dev/null
  if [ $((i % 4)) = 3 ] && [ -f "$dir/training.json" ]; then  # killed again, during the resume
    "$LOOPLAB" --threads 1 train --resume "$dir" >/dev/null 2>&1 &
    pid=$!
    sleep 0.5
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  # A run killed before it wrote its settings has nothing to resume: it is started again.
  if [ -f "$dir/training.json" ]; then
    "$LOOPLAB" --threads 1 train --resume "$dir" >"$TMP/out" 2>"$TMP/err" || bad "k$i: resume failed: $(cat "$TMP/err")"
  else
    rm -rf "$dir"
    "$LOOPLAB" "${RUN[@]}" --epochs 4 --out "$dir" >"$TMP/out" 2>"$TMP/err" || bad "k$i: restart failed: $(cat "$TMP/err")"
  fi
  if cmp -s "$dir/model.safetensors" "$TMP/straight/model.safetensors" &&
     [ "$(wc -l <"$dir/metrics.jsonl")" -eq 4 ]; then matched=$((matched + 1)); ok
  else bad "k$i (killed at ${ms} ms of ${total_ms}): the resumed run differs from the uninterrupted one"; fi
done
echo "kill points: $KILLS tried over ${total_ms} ms ($landed landed before the run ended), $matched resumed runs equal the uninterrupted one"
[ "$landed" -ge $((KILLS / 2)) ] && ok || bad "only $landed of $KILLS kills landed while the run was alive"

# --- the first second, where the folder is made: EARLY kill points 20 ms apart ---------------
# After each the folder is absent (the kill came before it was renamed into place) or holds its
# settings (a resume starts it); never half made. Each then runs to the end of its one epoch and
# equals the uninterrupted one-epoch run.
expect_ok "uninterrupted one-epoch run" "$LOOPLAB" "${RUN[@]}" --epochs 1 --out "$TMP/straight1"
half=0 early_matched=0 absent=0
for i in $(seq 0 $((EARLY - 1))); do
  dir="$TMP/e$i"
  "$LOOPLAB" "${RUN[@]}" --epochs 1 --out "$dir" >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf '0.%03d' $(( (20 * i) % 1000 )))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if [ -d "$dir" ] && [ ! -f "$dir/training.json" ]; then half=$((half + 1)); bad "e$i: a half-made folder: $(ls -A "$dir")"; fi
  if [ -f "$dir/training.json" ]; then
    "$LOOPLAB" --threads 1 train --resume "$dir" >/dev/null 2>"$TMP/err" || bad "e$i: resume failed: $(cat "$TMP/err")"
  else
    absent=$((absent + 1))
    "$LOOPLAB" "${RUN[@]}" --epochs 1 --out "$dir" >/dev/null 2>"$TMP/err" || bad "e$i: start failed: $(cat "$TMP/err")"
  fi
  cmp -s "$dir/model.safetensors" "$TMP/straight1/model.safetensors" && early_matched=$((early_matched + 1)) ||
    bad "e$i: differs from the uninterrupted one-epoch run"
done
echo "first-second kill points: $EARLY, 20 ms apart: $absent left no folder, $half a half-made one, $early_matched runs equal the uninterrupted one"
[ "$half" -eq 0 ] && [ "$early_matched" -eq "$EARLY" ] && ok || bad "first-second kills"
# The folder a killed start leaves under its temporary name is cleared by the next start.
mkdir -p "$TMP/p.partial" && touch "$TMP/p.partial/config.json"
expect_ok "start over a left temporary folder" "$LOOPLAB" "${RUN[@]}" --epochs 1 --out "$TMP/p"
[ ! -e "$TMP/p.partial" ] && cmp -s "$TMP/p/model.safetensors" "$TMP/straight1/model.safetensors" && ok ||
  bad "a left temporary folder was not cleared"
expect_error "resume of a folder without settings" "no run to resume (no training.json)" \
  "$LOOPLAB" train --resume "$TMP/p.partial.none"

# --- a damaged checkpoint or settings file on resume: an error naming the file ---------------
cp -r "$TMP/straight" "$TMP/cut"
truncate -s 100 "$TMP/cut/checkpoint.safetensors"
expect_error "truncated checkpoint" "cut/checkpoint.safetensors: not a valid safetensors file" \
  "$LOOPLAB" train --resume "$TMP/cut" --epochs 5
cp -r "$TMP/straight" "$TMP/noise"
size=$(stat -c %s "$TMP/noise/checkpoint.safetensors")
head -c "$size" /dev/urandom >"$TMP/noise/checkpoint.safetensors"
expect_error "corrupted checkpoint" "noise/checkpoint.safetensors" "$LOOPLAB" train --resume "$TMP/noise" --epochs 5
cp -r "$TMP/straight" "$TMP/torn"
truncate -s 20 "$TMP/torn/training.json"
expect_error "torn settings" "torn/training.json" "$LOOPLAB" train --resume "$TMP/torn" --epochs 5

# --- a full disk: the write fails with an error, the previous checkpoint stays loadable -------
if [ "$(id -u)" -eq 0 ] && mkdir -p "$TMP/full" && mount -t tmpfs -o size=600k tmpfs "$TMP/full" 2>/dev/null; then
  "$LOOPLAB" "${RUN[@]}" --epochs 1 --out "$TMP/full/run" >/dev/null 2>&1 || bad "the first epoch did not fit in the small disk"
  cp "$TMP/full/run/checkpoint.safetensors" "$TMP/before.safetensors"
  free_k=$(df -k --output=avail "$TMP/full" | tail -1)
  head -c "$((free_k - 8))k" /dev/zero >"$TMP/full/filler"  # 8 KiB left: less than any weights file
  "$LOOPLAB" --threads 1 train --resume "$TMP/full/run" --epochs 3 >"$TMP/out" 2>"$TMP/err"
  rc=$?
  [ "$rc" -eq 2 ] && [ "$(wc -l <"$TMP/err")" -ge 1 ] && grep -q "full/run/" "$TMP/err" && ok ||
    bad "full disk: exit $rc, stderr: $(cat "$TMP/err")"
  echo "full disk: $(tail -1 "$TMP/err")"
  cmp -s "$TMP/before.safetensors" "$TMP/full/run/checkpoint.safetensors" && ok || bad "full disk: the earlier checkpoint changed"
  rm -f "$TMP/full/filler"
  expect_ok "the earlier checkpoint loads" "$LOOPLAB" --threads 1 train --resume "$TMP/full/run" --epochs 2
  umount "$TMP/full"
else
  echo "full disk: skipped (needs root to mount a small tmpfs)"
fi
finish kill
