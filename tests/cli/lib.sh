# Helpers shared by the command-line test scripts. Each check counts a pass or prints FAIL.
# Expects TMP (a scratch directory) to be set by the caller.
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect_ok DESCRIPTION CMD...: exit 0 (stdout in $TMP/out, stderr in $TMP/err)
expect_ok() {
  local what=$1; shift
  if "$@" >"$TMP/out" 2>"$TMP/err"; then ok; else bad "$what (exit $?): $(cat "$TMP/err")"; fi
}

# expect_error DESCRIPTION PATTERN CMD...: exit 2, exactly one line on stderr matching PATTERN
expect_error() {
  local what=$1 pattern=$2; shift 2
  "$@" >"$TMP/out" 2>"$TMP/err"
  local rc=$? lines
  lines=$(wc -l <"$TMP/err")
  if [ "$rc" -ne 2 ]; then bad "$what: exit $rc, wanted 2: $(cat "$TMP/err")"; return; fi
  if [ "$lines" -ne 1 ]; then bad "$what: $lines lines on stderr, wanted 1: $(cat "$TMP/err")"; return; fi
  if ! grep -q -- "$pattern" "$TMP/err"; then bad "$what: stderr lacks '$pattern': $(cat "$TMP/err")"; return; fi
  ok
}

# finish NAME: prints the tally (the plain 'N passed, N failed' line) and sets the exit code.
finish() {
  echo "$1: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

# toy_sweep FILE RECALLS EPOCHS TRAIN_COUNT [TOP_LINES] [BASE_LINES] [AXES_LINES]: the sweep
# tests' tiny prefix-sums sweep (width 16, 4-bit inputs, 2 seeds over RECALLS, e.g. '"none",
# "external"'); TOP_LINES go above [base] (out = ...), BASE_LINES into it (norm = ...), and
# AXES_LINES, when given, replace the recall and seed axes.
toy_sweep() {
  local axes=${7:-"recall = [$2]
seed = [0, 1]"}
  cat >"$1" <<TOML
${5:-}
[base]
task = "prefix-sums"
${6:-}
width = 16
heads = 2
epochs = $3
train-count = $4
val-count = 40
hard-count = 10
train-bits = 4
hard-bits = 8
batch = 50
max-iters = 4
[axes]
$axes
[eval]
iters = 12
[analyze]
count = 4
detail = 1
iters = 12
TOML
}
