#!/usr/bin/env bash
# Installs the linters `make lint` runs that no app owns, once:
#   golangci-lint  built from its Go module              (cold: about 5 min on 2 cores)
#   gotestsum      built from its Go module              (JUnit XML of the Go tests)
#   actionlint     built from its Go module              (version from scripts/k8s-tools.sh)
#   yamllint       a virtualenv from PyPI
#   rubocop, shellcheck   Debian packages (apt-get, as root; otherwise says what to install)
# The Go tools and yamllint land in ${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools},
# outside the repo; a tool of the right version already there is skipped.
# The apps' own linters (ruff, eslint, spotless + PMD) come with their
# dependencies (make setup-apps). Re-running is cheap.
# Usage: scripts/lint-tools.sh [--print-dir]
set -euo pipefail

# renovate: go github.com/golangci/golangci-lint/v2
GOLANGCI_LINT_VERSION=v2.15.0
# renovate: go gotest.tools/gotestsum
GOTESTSUM_VERSION=v1.13.0
# renovate: pypi yamllint
YAMLLINT_VERSION=1.38.0
HERE=$(cd "$(dirname "$0")" && pwd)
ACTIONLINT_VERSION=$(sed -n 's/^ACTIONLINT_VERSION=\(v[0-9.]*\).*/\1/p' "$HERE/k8s-tools.sh")

TOOLS=${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools}
BIN=$TOOLS/bin
if [ "${1:-}" = --print-dir ]; then echo "$TOOLS"; exit 0; fi
mkdir -p "$BIN"

say() { printf '==> lint-tools: %s\n' "$*"; }
die() { printf 'lint-tools: %s\n' "$*" >&2; exit 1; }
[ -n "$ACTIONLINT_VERSION" ] || die "no ACTIONLINT_VERSION=v... line in $HERE/k8s-tools.sh"

# go_tool NAME VERSION PACKAGE VERSION-CHECK-ARGS: go install PACKAGE@VERSION
# into $BIN unless `$BIN/NAME VERSION-CHECK-ARGS` already prints VERSION.
go_tool() {
  local name=$1 version=$2 pkg=$3 out=$BIN/$1
  shift 3
  if [ -x "$out" ] && "$out" "$@" 2>&1 | grep -qF -- "${version#v}"; then
    say "$name $version cached ($out)"; return
  fi
  command -v go >/dev/null || die "go is missing: install Go 1.26"
  say "$name $version: building with go install $pkg@$version"
  local tmp
  tmp=$(mktemp -d "$TOOLS/$name-build.XXXXXX")
  # The build must not see (or touch) the repo's module or a workspace.
  (cd "$TOOLS" && GOWORK=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=${GOTOOLCHAIN:-local} \
    GOBIN=$tmp go install -trimpath -ldflags "-s -w" "$pkg@$version") || { rm -rf "$tmp"; die "go install $pkg@$version failed"; }
  mv "$tmp/$name" "$out" && rm -rf "$tmp"
  say "$name built ($out)"
}

# golangci-lint's own version string comes from its ldflags; go install leaves
# it as "(devel)", so the module version recorded in the binary is checked.
golangci_version() { go version -m "$BIN/golangci-lint" 2>/dev/null | awk '$1 == "mod" {print $3}'; }
if [ -x "$BIN/golangci-lint" ] && [ "$(golangci_version)" = "$GOLANGCI_LINT_VERSION" ]; then
  say "golangci-lint $GOLANGCI_LINT_VERSION cached ($BIN/golangci-lint)"
else
  rm -f "$BIN/golangci-lint"
  go_tool golangci-lint "$GOLANGCI_LINT_VERSION" github.com/golangci/golangci-lint/v2/cmd/golangci-lint version
fi
go_tool gotestsum "$GOTESTSUM_VERSION" gotest.tools/gotestsum --version
go_tool actionlint "$ACTIONLINT_VERSION" github.com/rhysd/actionlint/cmd/actionlint -version

venv=$TOOLS/yamllint-venv
if [ -x "$venv/bin/yamllint" ] && "$venv/bin/yamllint" --version | grep -qF "$YAMLLINT_VERSION"; then
  say "yamllint $YAMLLINT_VERSION cached ($venv)"
else
  python=$(command -v python3.11 || command -v python3) || die "python3 is missing (yamllint runs on it)"
  say "yamllint $YAMLLINT_VERSION: pip install into $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "yamllint==$YAMLLINT_VERSION" ||
    { rm -rf "$venv"; die "pip install yamllint==$YAMLLINT_VERSION failed (is PyPI reachable?)"; }
fi
ln -sf "$venv/bin/yamllint" "$BIN/yamllint"

missing=()
command -v shellcheck >/dev/null || missing+=(shellcheck)
command -v rubocop >/dev/null || missing+=(rubocop)
if [ ${#missing[@]} -eq 0 ]; then
  say "shellcheck $(shellcheck --version | sed -n 's/^version: //p'), rubocop $(rubocop --version) present"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "installing ${missing[*]} with apt-get"
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${missing[@]}" >/dev/null
else
  die "${missing[*]} missing; as root run: apt-get install -y ${missing[*]}"
fi
