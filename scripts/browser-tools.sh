#!/usr/bin/env bash
# Installs the headless browser that the report test (load/internal/report)
# opens `bookload report` output in, once: Debian's `chromium` package.
# Skipped when a chromium is already installed. Needs root (or sudo) and
# apt-get; elsewhere install Chromium by hand and set BOOKLOAD_CHROMIUM to it.
# Usage: scripts/browser-tools.sh [--print-path]
set -euo pipefail

say() { printf '==> browser-tools: %s\n' "$*"; }
die() { printf 'browser-tools: %s\n' "$*" >&2; exit 1; }

find_chromium() {
  if [ -n "${BOOKLOAD_CHROMIUM:-}" ] && [ -x "$BOOKLOAD_CHROMIUM" ]; then echo "$BOOKLOAD_CHROMIUM"; return 0; fi
  local c
  for c in chromium chromium-browser; do
    if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return 0; fi
  done
  return 1
}

if [ "${1:-}" = --print-path ]; then find_chromium || exit 1; exit 0; fi

if c=$(find_chromium); then
  say "chromium cached ($c: $("$c" --version 2>/dev/null | head -1))"
  exit 0
fi

command -v apt-get >/dev/null || die "apt-get is missing: install Chromium yourself and set BOOKLOAD_CHROMIUM=/path/to/chromium"
SUDO=
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || die "not root and no sudo: run 'apt-get install -y chromium' as root"
  SUDO=sudo
fi
say "chromium: installing Debian package (apt-get install -y --no-install-recommends chromium, ~100 MB)"
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y --no-install-recommends chromium; then
  say "apt-get install failed; refreshing the package lists and trying again"
  $SUDO apt-get update
  $SUDO apt-get install -y --no-install-recommends chromium
fi
c=$(find_chromium) || die "chromium installed but not found on PATH"
say "chromium installed: $c ($("$c" --version 2>/dev/null | head -1))"
