#!/usr/bin/env bash
# Chess from the command line: offline puzzles from the engine (the same for any thread
# count), Lichess files with every kind of bad row, and a tiny model trained, evaluated and
# asked for a move.
# Usage: chess_test.sh path/to/looplab
set -u
LOOPLAB=$1
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
source "$(dirname "$0")/lib.sh"

HEAD="PuzzleId,FEN,Moves,Rating,RatingDeviation,Popularity,NbPlays,Themes,GameUrl,OpeningTags"
# Lichess's first puzzle (rated 1913: hard) and one of ours rated 1000 (easy).
HARD="00008,r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24,f2g3 e6e7 b2b1 b3c1 b1c1 h6c1,1913,75,94,6230,crushing hangingPiece long middlegame,https://lichess.org/787zsVup/black#48,"
EASY="ll0000002,rn2k2r/1bp1bp1p/1p2p3/p2p2Pp/3P3P/2N5/PPP1KP2/R1B2BNR b kq - 1 11,b7a6 e2e1 h7h6 f1a6 b8a6,1000,0,0,0,advantage,,"

# --- offline puzzles -------------------------------------------------------------------------
if "$LOOPLAB" data chess --count 4 --seed 2 --depth 6 --out "$TMP/g2.csv" >"$TMP/out" 2>"$TMP/err"; then
  ok
  "$LOOPLAB" --threads 1 data chess --count 4 --seed 2 --depth 6 --out "$TMP/g1.csv" >/dev/null 2>&1
  cmp -s "$TMP/g1.csv" "$TMP/g2.csv" && ok || bad "data chess differs between 1 and 2 threads"
  [ "$(head -1 "$TMP/g2.csv")" = "$HEAD" ] && ok || bad "data chess: header"
  [ "$(wc -l <"$TMP/g2.csv")" -eq 5 ] && ok || bad "data chess: expected 5 lines"
  # Every generated puzzle reads back (legal moves, valid FEN).
  expect_ok "generated puzzles read back" "$LOOPLAB" train --task chess --width 16 --heads 2 --max-iters 2 --epochs 1 \
    --batch 4 --train-file "$TMP/g2.csv" --val-file "$TMP/g2.csv" --out "$TMP/gen-run"
else
  bad "data chess: $(cat "$TMP/err")"
fi
expect_error "missing engine" "chess engine '/nonexistent' not found" \
  "$LOOPLAB" data chess --count 1 --engine /nonexistent --out "$TMP/x.csv"
expect_error "missing engine by LOOPLAB_STOCKFISH" "chess engine '/nonexistent' not found" \
  env LOOPLAB_STOCKFISH=/nonexistent "$LOOPLAB" data chess --count 1 --out "$TMP/x.csv"
# LOOPLAB_ENGINE chooses looplab's block engine: "plain" leaves the chess engine alone, and a
# path left there from when it named the chess engine is said in one line and not used.
if [ -s "$TMP/g2.csv" ]; then
  expect_ok "data chess under LOOPLAB_ENGINE=plain" env LOOPLAB_ENGINE=plain "$LOOPLAB" data chess --count 4 --seed 2 --depth 6 --out "$TMP/p.csv"
  cmp -s "$TMP/p.csv" "$TMP/g2.csv" && ok || bad "data chess under LOOPLAB_ENGINE=plain: other puzzles"
  env LOOPLAB_ENGINE=/nonexistent "$LOOPLAB" data chess --count 1 --seed 2 --depth 6 --out "$TMP/o.csv" >/dev/null 2>"$TMP/err" && ok ||
    bad "a path in LOOPLAB_ENGINE was used: $(cat "$TMP/err")"
  [ "$(grep -c "LOOPLAB_ENGINE='/nonexistent' no longer names the chess engine: set LOOPLAB_STOCKFISH" "$TMP/err")" -eq 1 ] && ok ||
    bad "a path in LOOPLAB_ENGINE: not said in one line: $(cat "$TMP/err")"
fi

# --- Lichess files ---------------------------------------------------------------------------
{ echo "$HEAD"; for i in $(seq 12); do echo "$EASY"; echo "$HARD"; done; } >"$TMP/puzzles.csv"
zstd -q "$TMP/puzzles.csv" -o "$TMP/puzzles.csv.zst" 2>/dev/null || true
FEN="r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24"
check_bad() {  # check_bad DESCRIPTION PATTERN ROW
  printf '%s\n%s\n%s\n' "$HEAD" "$EASY" "$3" >"$TMP/bad.csv"
  expect_error "$1" "bad.csv:3: $2" "$LOOPLAB" train --task chess --width 16 --heads 2 --epochs 1 \
    --train-file "$TMP/bad.csv" --val-file "$TMP/bad.csv" --out "$TMP/bad-run"
}
check_bad "missing field" "expected 10 fields, got 4" "x,$FEN,f2g3 e6e7,1913"
check_bad "illegal FEN" "field 'FEN': FEN placement: unknown piece 'X'" "x,X6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP2bPP/7K b - - 0 24,f2g3 e6e7,1913,1,1,1,t,u,"
check_bad "malformed move" "field 'Moves': second move 'e6' is not UCI" "x,$FEN,f2g3 e6,1913,1,1,1,t,u,"
check_bad "illegal move" "field 'Moves': first move 'f2f1' is not legal in this position" "x,$FEN,f2f1 e6e7,1913,1,1,1,t,u,"
check_bad "one move" "field 'Moves': 'f2g3' needs at least two moves" "x,$FEN,f2g3,1913,1,1,1,t,u,"
check_bad "bad rating" "field 'Rating': 'x' is not an integer" "x,$FEN,f2g3 e6e7,x,1,1,1,t,u,"

# --- a tiny model end to end -----------------------------------------------------------------
TINY=(--task chess --width 16 --heads 2 --max-iters 3 --batch 4 --epochs 1 --train-count 8 --val-count 4
      --hard-count 6 --seed 1)
DATA="$TMP/puzzles.csv"
[ -f "$TMP/puzzles.csv.zst" ] && DATA="$TMP/puzzles.csv.zst"
expect_ok "train chess" "$LOOPLAB" train "${TINY[@]}" --data-file "$DATA" --out "$TMP/run"
expect_ok "eval chess" "$LOOPLAB" eval "$TMP/run" --split val,hard --iters 1:4
grep -q "^hard (6 examples, 64 positions)" "$TMP/out" && ok || bad "eval chess: $(cat "$TMP/out")"
expect_error "too few easy puzzles" "12 puzzles rated 1600 or below, need 20 for train + 4 for val" \
  "$LOOPLAB" train --task chess --width 16 --heads 2 --epochs 1 --train-count 20 --val-count 4 \
  --data-file "$TMP/puzzles.csv" --out "$TMP/run2"
expect_ok "solve --fen" "$LOOPLAB" solve "$TMP/run" --fen "r6k/pp2r2p/4Rp1Q/3p4/8/1N1P2R1/PqP3PP/7K w - - 0 25" --iters 4
grep -Eq "^model's move after 4 iterations: [a-h][1-8][a-h][1-8]" "$TMP/out" && ok || bad "solve --fen: $(cat "$TMP/out")"
grep -Eq "^legal: (yes|no)" "$TMP/out" && ok || bad "solve --fen: no legality line"
expect_error "solve: bad FEN" "--fen: FEN side to move is 'x'" "$LOOPLAB" solve "$TMP/run" --fen "8/8/8/8/8/8/8/K6k x - -"
expect_error "solve: --puzzle on a chess model" "a chess model; --puzzle needs a sudoku model" "$LOOPLAB" solve "$TMP/run" --puzzle "$(printf '.%.0s' $(seq 81))"

finish "chess cli"
