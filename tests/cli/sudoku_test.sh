#!/usr/bin/env bash
# Sudoku from the command line: generation (reproducible for any thread count), the solver on
# files, a hand-made CSV with every kind of bad row, and a tiny model trained, evaluated and
# asked to solve a hard puzzle.
# Usage: sudoku_test.sh path/to/looplab
set -u
LOOPLAB=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/lib.sh"

# --- generation ------------------------------------------------------------------------------
expect_ok "data sudoku" "$LOOPLAB" --threads 2 data sudoku --count 120 --seed 3 --out "$TMP/p.csv"
[ "$(wc -l <"$TMP/p.csv")" -eq 121 ] && ok || bad "data sudoku: expected 121 lines"
[ "$(head -1 "$TMP/p.csv")" = "source,question,answer,rating" ] && ok || bad "data sudoku: header"
grep -q "rating (backtracks) percentiles: p50" "$TMP/out" && ok || bad "data sudoku: no rating report"
"$LOOPLAB" --threads 1 data sudoku --count 120 --seed 3 --out "$TMP/p1.csv" >/dev/null 2>&1
cmp -s "$TMP/p.csv" "$TMP/p1.csv" && ok || bad "data sudoku differs between 1 and 2 threads"
"$LOOPLAB" data sudoku --count 20 --seed 4 --out "$TMP/p4.csv" >/dev/null 2>&1
cmp -s <(sed -n 2,21p "$TMP/p.csv") <(sed -n 2,21p "$TMP/p4.csv") && bad "data sudoku ignores the seed" || ok
expect_error "bad selection" "--selection must be >= 1" "$LOOPLAB" data sudoku --count 5 --selection -2 --out "$TMP/x.csv"

# --- the solver on files ---------------------------------------------------------------------
expect_ok "sudoku solve csv" "$LOOPLAB" sudoku solve "$TMP/p.csv"
grep -q "^120 puzzles: 120 unique, 0 with several solutions, 0 without" "$TMP/out" && ok || bad "solve csv: $(tail -1 "$TMP/out")"
# The solver's backtracks are the file's ratings (line by line).
paste -d' ' <(grep '^line' "$TMP/out" | awk '{print $5}') <(tail -n +2 "$TMP/p.csv" | cut -d, -f4) |
  awk '$1 != $2 { bad = 1 } END { exit bad }' && ok || bad "solve: backtracks differ from the ratings"
INKALA=800000000003600000070090200050007000000045700000100030001000068008500010090000400
printf '# two puzzles\n%s\n\n%s\n' "$INKALA" ".${INKALA:1}" >"$TMP/lines.txt"
expect_ok "sudoku solve lines" "$LOOPLAB" sudoku solve "$TMP/lines.txt"
grep -q "^line 2: 812753649943682175675491283154237896369845721287169534521974368438526917796318452" "$TMP/out" &&
  ok || bad "solve lines: $(head -1 "$TMP/out")"
grep -q "^line 4: .* several solutions" "$TMP/out" && ok || bad "solve lines: an under-clued puzzle is not flagged"
printf '%s\n%s\n' "$INKALA" "${INKALA:0:79}" >"$TMP/short.txt"
expect_error "short line" "short.txt:2: expected 81 characters, got 79" "$LOOPLAB" sudoku solve "$TMP/short.txt"
expect_ok "sudoku stats" "$LOOPLAB" sudoku stats "$TMP/p.csv"
grep -q "split at the 80th percentile" "$TMP/out" && ok || bad "stats: no split line"

# --- a hand-made CSV with every kind of bad row ----------------------------------------------
Q=$INKALA
A=812753649943682175675491283154237896369845721287169534521974368438526917796318452
HEAD="source,question,answer,rating"
check_bad() {  # check_bad DESCRIPTION PATTERN ROW
  printf '%s\nok,%s,%s,5\n%s\n' "$HEAD" "$Q" "$A" "$3" >"$TMP/bad.csv"
  expect_error "$1" "bad.csv:3: $2" "$LOOPLAB" sudoku stats "$TMP/bad.csv"
}
check_bad "missing field" "expected 4 fields, got 3" "x,$Q,$A"
check_bad "short question" "field 'question': expected 81 characters, got 80" "x,${Q:1},$A,1"
check_bad "bad character" "field 'question': character 1 is 'x'" "x,x${Q:1},$A,1"
check_bad "incomplete answer" "field 'answer': answer is incomplete (cell 81 is blank)" "x,$Q,${A:0:80}.,1"
check_bad "invalid answer" "field 'answer': answer is not a valid grid: digit 1 appears twice in row 1" "x,$Q,1${A:1},1"
check_bad "answer against clue" "field 'answer': answer disagrees with the clue at cell 2 (row 1, column 2): 9 vs 1" \
  "x,89${Q:2},$A,1"
check_bad "bad rating" "field 'rating': 'hard' is not a non-negative integer" "x,$Q,$A,hard"
printf '%s\nok,%s,%s,5\nx,%s,%s\n' "$HEAD" "$Q" "$A" "$Q" "$A" >"$TMP/bad.csv"
expect_ok "skip bad rows" "$LOOPLAB" sudoku stats --skip-bad "$TMP/bad.csv"
grep -q "skipped 1 bad rows" "$TMP/out" && ok || bad "skip-bad: $(cat "$TMP/out")"
printf 'source,question\n' >"$TMP/nohead.csv"
expect_error "missing columns" "nohead.csv:1: header must name the columns source,question,answer,rating" \
  "$LOOPLAB" sudoku stats "$TMP/nohead.csv"

# --- a tiny model end to end -----------------------------------------------------------------
TINY=(--task sudoku --width 16 --heads 2 --max-iters 3 --batch 20 --epochs 1 --train-count 40 --val-count 10
      --hard-count 10 --seed 2)
expect_ok "train sudoku (pool made in the run)" "$LOOPLAB" --threads 2 train "${TINY[@]}" --out "$TMP/run"
[ -f "$TMP/run/sudoku.csv" ] && ok || bad "train: no pool in the run folder"
grep -q '"data_file": "sudoku.csv"' "$TMP/run/training.json" && ok || bad "train: pool not recorded relative to the run"
mv "$TMP/run" "$TMP/moved"  # a run folder keeps working when moved
expect_ok "eval sudoku" "$LOOPLAB" eval "$TMP/moved" --split val,hard --iters 1:6
grep -q "^hard (10 examples, 81 positions)" "$TMP/out" && ok || bad "eval: $(cat "$TMP/out")"
HARD=$(awk -F, 'NR > 1 { print $4, $2 }' "$TMP/moved/sudoku.csv" | sort -n | tail -1 | cut -d' ' -f2)
expect_ok "solve with the model" "$LOOPLAB" solve "$TMP/moved" --puzzle "$HARD" --iters 5
grep -q "^valid solution: " "$TMP/out" && ok || bad "solve: $(cat "$TMP/out")"
grep -Eq "^prediction (unchanged from|still changing at) iteration" "$TMP/out" && ok || bad "solve: no settling line"
expect_error "solve: bad puzzle" "--puzzle: character 3 is 'z'" "$LOOPLAB" solve "$TMP/moved" --puzzle "12z${Q:3}"
# A data file placed in the run folder before training is recorded relative to it, and travels.
mkdir -p "$TMP/own" && cp "$TMP/moved/sudoku.csv" "$TMP/own/pool.csv"
expect_ok "train from a file inside the run folder" "$LOOPLAB" --threads 2 train "${TINY[@]}" \
  --data-file "$TMP/own/pool.csv" --out "$TMP/own"
grep -q '"data_file": "pool.csv"' "$TMP/own/training.json" && ok || bad "train: a file inside the run not recorded relative to it"
mv "$TMP/own" "$TMP/own-moved"
expect_ok "eval of the moved run" "$LOOPLAB" eval "$TMP/own-moved" --split val --iters 1:2
printf '%s\nok,%s,%s,5\n' "$HEAD" "$Q" "$A" >"$TMP/one.csv"
expect_error "train: too few puzzles" "one.csv: 0 easy puzzles (rating < 5), need 40 for train + 10 for val" \
  "$LOOPLAB" train "${TINY[@]}" --data-file "$TMP/one.csv" --out "$TMP/run2"

finish "sudoku cli"
