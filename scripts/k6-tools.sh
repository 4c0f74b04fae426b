#!/usr/bin/env bash
# Builds the k6 load generator that `bookload run --engine k6` drives, once:
#   k6  go install go.k6.io/k6@$K6_VERSION   (cold: about 4 minutes on 2 cores)
# It lands in ${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools}/bin,
# outside the repo, where bookload looks for it (then on PATH). A k6 of the
# right version already there is skipped. Re-running is cheap.
# Usage: scripts/k6-tools.sh [--print-path]
set -euo pipefail

# renovate: go go.k6.io/k6
K6_VERSION=${BOOKINFO_K6_VERSION:-v1.8.1}

TOOLS=${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools}
BIN=$TOOLS/bin
if [ "${1:-}" = --print-path ]; then echo "$BIN/k6"; exit 0; fi

say() { printf '==> k6-tools: %s\n' "$*"; }
die() { printf 'k6-tools: %s\n' "$*" >&2; exit 1; }
command -v go >/dev/null || die "go is missing: install Go 1.26"
mkdir -p "$BIN"

out=$BIN/k6
if [ -x "$out" ] && "$out" version 2>/dev/null | grep -q "k6 ${K6_VERSION}"; then
  say "k6 $K6_VERSION cached ($out)"
  exit 0
fi

# The build must not see (or touch) the repo's module or a workspace.
export GOWORK=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=${GOTOOLCHAIN:-local}
cd "$TOOLS"
say "k6 $K6_VERSION: building with go install go.k6.io/k6@$K6_VERSION (cold: about 4 min)"
tmp=$(mktemp -d "$TOOLS/k6-build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
GOBIN=$tmp go install "go.k6.io/k6@$K6_VERSION"
[ -x "$tmp/k6" ] || die "go install finished but $tmp/k6 is missing"
mv "$tmp/k6" "$out"
say "k6 built: $("$out" version | head -1) ($out)"
