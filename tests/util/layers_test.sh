#!/usr/bin/env bash
# The source tree's layers (docs/architecture.md): every folder includes only the layers below
# it; no code outside tasks/ names a task; the recall and norm names are listed once
# (model/config.cpp), every run-folder file name is RunFolder's, and the command line's size
# stays within its budget. Each check prints
# what broke it.
set -u
src=$(cd "$(dirname "$0")/../../src/looplab" && pwd)
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The layers of docs/architecture.md's drawing, bottom (0) to top: a folder includes only
# folders of lower layers (its own too); bench/ (beside serve/) only what is below cli/.
declare -A layer=([util]=0 [platform]=1 [io]=1 [tasks]=2 [distributed]=2 [explore]=2 [model]=3 [data]=3
  [run]=4 [eval]=5 [train]=6 [analysis]=6 [stages]=7 [sweep]=8 [serve]=9 [cli]=10)
for dir in "$src"/*/; do
  d=$(basename "$dir")
  [ -n "${layer[$d]:-}" ] || { bad "src/looplab/$d/ is in no layer (add it to the drawing and to this test)"; continue; }
done
[ -z "$(find "$src" -maxdepth 1 -type f)" ] || bad "files at the top of src/looplab, outside every layer: $(find "$src" -maxdepth 1 -type f)"
check_includes() {  # FOLDER (a path) LEVEL NAME
  local n
  while IFS= read -r hit; do
    n=$(sed -E 's|.*#include "looplab/([a-z_]+)/.*|\1|' <<<"$hit")
    [ -n "${layer[$n]:-}" ] || { bad "$3 includes looplab/$n, which is in no layer: $hit"; continue; }
    [ "$n" = "$3" ] || [ "${layer[$n]}" -lt "$2" ] || bad "$3/ (layer $2) includes $n/ (layer ${layer[$n]}), not below it: ${hit#"$src"/}"
  done < <(grep -rn '#include "looplab/' "$1")
}
for d in "${!layer[@]}"; do check_includes "$src/$d" "${layer[$d]}" "$d"; done
check_includes "$src/../../bench" 10 bench
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
