#!/usr/bin/env bash
# Runs test suites and ends with one summary line, "N passed, M failed".
# Usage: run-tests.sh SUITE...   (SUITE: an apps/<name> folder name, "go", or
#        "cluster": tests/cluster, the overlays on a one-node Kubernetes)
# Each suite runs with its own ecosystem's runner, which writes JUnit XML into
# test-results/<suite>/ (pytest --junitxml, Surefire's reports, node --test's
# junit reporter, the details minitest plugin, gotestsum --junitfile for
# the Go suites); the
# counts are summed from that XML (scripts/junit-counts.py). The runner's
# normal output is shown and kept in test-results/<suite>.log. A suite that
# fails without a failed test case in its XML counts as one failure, so a
# crash can never pass as green.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mkdir -p test-results

total_pass=0 total_fail=0 total_skip=0
report=()

run_suite() {
  local suite=$1 log="test-results/$1.log" xml="$PWD/test-results/$1" rc
  rm -rf "$xml" && mkdir -p "$xml"
  echo
  echo "==================== $suite ===================="
  local gotestsum
  gotestsum=$(bash scripts/lint-tools.sh --print-dir)/bin/gotestsum
  [ -x "$gotestsum" ] || gotestsum=$(command -v gotestsum) || gotestsum=""
  if [ "$suite" = go ] || [ "$suite" = cluster ]; then
    [ -n "$gotestsum" ] || { echo "run-tests: gotestsum not found; run make lint-tools" >&2; gotestsum=false; }
  fi
  if [ "$suite" = go ]; then
    # -p 1: one package at a time. Several packages measure latency, and the
    # end-to-end suite starts eight stacks; run together on a small machine
    # they would disturb each other's measurements.
    "$gotestsum" --format standard-verbose --junitfile "$xml/go.xml" -- \
      -p 1 -count=1 -timeout 25m ./... 2>&1 | tee "$log"
  elif [ "$suite" = cluster ]; then
    # Behind a build tag: it starts a cluster (scripts/cluster.sh), which
    # needs root; a user with password-less sudo (a CI runner) gets it so.
    local as_root=()
    if [ "$(id -u)" != 0 ] && sudo -n true 2>/dev/null; then as_root=(sudo -n -E env "PATH=$PATH" "HOME=$HOME"); fi
    "${as_root[@]}" "$gotestsum" --format standard-verbose --junitfile "$xml/cluster.xml" -- \
      -tags cluster -count=1 -timeout 60m ./tests/cluster/ 2>&1 | tee "$log"
  else
    make --no-print-directory -C "apps/$suite" test JUNIT_DIR="$xml" 2>&1 | tee "$log"
  fi
  rc=${PIPESTATUS[0]}
  local c p f s
  c=$(python3 scripts/junit-counts.py "$xml")
  if [ -z "$c" ] || [ "$c" = "0 0 0" ]; then
    p=0 f=1 s=0
    echo "run-tests: $suite exited $rc without test results in $xml; counted as 1 failure" >&2
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
echo "logs: test-results/<suite>.log, JUnit XML: test-results/<suite>/"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
