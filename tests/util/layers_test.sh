#!/usr/bin/env bash
# The source tree's layers (docs/architecture.md): util/ includes nothing of looplab above it,
# io/ only util/; no code outside tasks/ names a task; the recall and norm names are listed once
# (model/config.cpp), every run-folder file name is RunFolder's, and the command line's size
# stays within its budget. Each check prints
# what broke it.
set -u
src=$(cd "$(dirname "$0")/../../src/looplab" && pwd)
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

found=$(grep -rn '#include "looplab/' "$src/util" | grep -v '#include "looplab/util/')
[ -z "$found" ] || bad "util/ includes a higher layer: $found"
found=$(grep -rn '#include "looplab/' "$src/io" | grep -vE '#include "looplab/(util|io)/')
[ -z "$found" ] || bad "io/ includes a higher layer: $found"
# The model and the tasks below the run folder and everything that runs a stage.
found=$(grep -rnE '#include "looplab/(run|stages|train|eval|analysis|sweep|serve|cli)/' "$src/model" "$src/tasks")
[ -z "$found" ] || bad "model/ or tasks/ includes a higher layer: $found"
# A task's name as a string literal outside tasks/ (the registry builds every list of them).
found=$(grep -rnE '"(prefix-sums|sudoku|chess)"' "$src" | grep -v "^$src/tasks/")
[ -z "$found" ] || bad "a task named outside tasks/: $found"
# Two names of one list on a line: a list of them.
found=$(grep -rnE '"(external|internal|fixed)"[^"]*"(none|external|internal|fixed)"|"none"[^"]*"(external|internal|fixed)"' "$src" |
  grep -v "^$src/model/config.cpp")
[ -z "$found" ] || bad "a list of recall names outside model/config.cpp: $found"
found=$(grep -rnE '"(pre|peri|post|gru)"[^"]*"(pre|peri|post|gru)"' "$src" | grep -v "^$src/model/config.cpp")
[ -z "$found" ] || bad "a list of norm names outside model/config.cpp: $found"
# Every run-folder file name lives in RunFolder.
found=$(grep -rnE '"(config\.json|training\.json|model\.safetensors|best\.safetensors|checkpoint\.safetensors|metrics\.jsonl|eval(\.partial|_accelerated)?\.json|analysis\.json|train\.log|sweep_(done|failed)\.json|sweep\.(lock|log))"' "$src" |
  grep -v "^$src/run/run_folder.h")
[ -z "$found" ] || bad "a run folder's file named outside run/run_folder.h: $found"
lines=$(cat "$src"/cli/* | wc -l)
[ "$lines" -le 1200 ] || bad "cli/ has $lines lines (at most 1,200: commands call the library)"
for f in "$src"/cli/cmd_*.cpp; do
  n=$(wc -l <"$f")
  [ "$n" -le 150 ] || bad "$f has $n lines (a command file at most 150)"
done
for f in "$src"/model/*.cpp "$src"/model/engine/*.cpp; do
  n=$(wc -l <"$f")
  [ "$n" -le 500 ] || bad "$f has $n lines (a model file at most 500)"
done
[ "$fails" -eq 0 ] && echo "layers: every check passed (cli/ $lines lines)"
exit "$fails"
