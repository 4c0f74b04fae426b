#!/usr/bin/env bash
# Runs test suites and ends with one summary line, "N passed, M failed".
# Usage: run-tests.sh SUITE...   (SUITE: an apps/<name> folder name, "go", or
#        "cluster": tests/cluster, the overlays on a one-node Kubernetes)
# Each suite runs with its own ecosystem's runner; its normal output is shown
# and kept in test-results/<suite>.log, and its counts are read from the
# runner's own summary line. A suite that fails without a readable summary
# counts as one failure, so a crash can never pass as green.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mkdir -p test-results

total_pass=0 total_fail=0 total_skip=0
report=()

# counts LOG -> prints "passed failed skipped" from whichever runner wrote LOG.
counts() {
  local log=$1 line
  if line=$(grep -aE '^[0-9]+ runs, [0-9]+ assertions, [0-9]+ failures, [0-9]+ errors, [0-9]+ skips' "$log" | tail -1) && [ -n "$line" ]; then
    # minitest
    awk '{r=$1; f=$5; e=$7; s=$9; print r-f-e-s, f+e, s}' <<<"$line"
  elif line=$(grep -aE '^\[?(INFO|ERROR|WARNING)?\]? *Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' "$log" | tail -1) && [ -n "$line" ]; then
    # Maven Surefire's aggregate line (per-class lines carry "Time elapsed")
    sed -E 's/.*Tests run: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+), Skipped: ([0-9]+).*/\1 \2 \3 \4/' <<<"$line" |
      awk '{print $1-$2-$3-$4, $2+$3, $4}'
  elif grep -aqE '^(# |ℹ )pass [0-9]+' "$log"; then
    # node --test (TAP "# pass N" or spec "ℹ pass N")
    local p f s
    p=$(grep -aoE '^(# |ℹ )pass [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
    f=$(grep -aoE '^(# |ℹ )fail [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
    s=$(grep -aoE '^(# |ℹ )skipped [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+$')
    echo "${p:-0} ${f:-0} ${s:-0}"
  elif line=$(grep -aE '^=+ .*( passed| failed| error| skipped| no tests ran).* in [0-9.]+s' "$log" | tail -1) && [ -n "$line" ]; then
    # pytest
    local p f e s
    p=$(grep -oE '[0-9]+ passed' <<<"$line" | grep -oE '^[0-9]+')
    f=$(grep -oE '[0-9]+ failed' <<<"$line" | grep -oE '^[0-9]+')
    e=$(grep -oE '[0-9]+ errors?' <<<"$line" | grep -oE '^[0-9]+')
    s=$(grep -oE '[0-9]+ skipped' <<<"$line" | grep -oE '^[0-9]+')
    echo "${p:-0} $(( ${f:-0} + ${e:-0} )) ${s:-0}"
  elif grep -aqE -- '--- (PASS|FAIL|SKIP):' "$log"; then
    # go test -v: top-level tests and subtests
    echo "$(grep -acE -- '--- PASS:' "$log") $(grep -acE -- '--- FAIL:' "$log") $(grep -acE -- '--- SKIP:' "$log")"
  else
    echo ""
  fi
}

run_suite() {
  local suite=$1 log="test-results/$1.log" rc
  echo
  echo "==================== $suite ===================="
  if [ "$suite" = go ]; then
    # -p 1: one package at a time. Several packages measure latency, and the
    # end-to-end suite starts eight stacks; run together on a small machine
    # they would disturb each other's measurements.
    go test -p 1 -count=1 -v -timeout 25m ./... 2>&1 | tee "$log"
  elif [ "$suite" = cluster ]; then
    # Behind a build tag: it starts a cluster (scripts/cluster.sh), which
    # needs root; a user with password-less sudo (a CI runner) gets it so.
    local as_root=()
    if [ "$(id -u)" != 0 ] && sudo -n true 2>/dev/null; then as_root=(sudo -n -E env "PATH=$PATH" "HOME=$HOME"); fi
    "${as_root[@]}" go test -tags cluster -count=1 -v -timeout 60m ./tests/cluster/ 2>&1 | tee "$log"
  else
    make --no-print-directory -C "apps/$suite" test 2>&1 | tee "$log"
  fi
  rc=${PIPESTATUS[0]}
  local c p f s
  c=$(counts "$log")
  if [ -z "$c" ]; then
    p=0 f=1 s=0
    echo "run-tests: $suite exited $rc without a test summary; counted as 1 failure" >&2
  else
    read -r p f s <<<"$c"
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
      f=1
      echo "run-tests: $suite exited $rc with no failed test reported; counted as 1 failure" >&2
    fi
  fi
  total_pass=$((total_pass + p)) total_fail=$((total_fail + f)) total_skip=$((total_skip + s))
  report+=("$(printf '%-12s %5d passed, %3d failed, %3d skipped (exit %d)' "$suite" "$p" "$f" "$s" "$rc")")
}

for suite in "$@"; do
  run_suite "$suite"
done

echo
echo "==================== summary ===================="
printf '%s\n' "${report[@]}"
echo "logs: test-results/<suite>.log"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
