#!/usr/bin/env bash
# Builds one container image per app: apps/<app>/Dockerfile with the app folder
# as context, tagged ghcr.io/bookinfo-bench/bookinfo-bench/<app>:<tag> (the
# published names overlays/base deploys), with docker or podman.
# The tag is the one overlays/base deploys; IMAGE_TAG overrides it and
# IMAGE_REGISTRY (e.g. registry.example.com/bookinfo) replaces the prefix.
# Usage: scripts/images.sh [--list] [APP...]     (default: every apps/*/)
set -euo pipefail
cd "$(dirname "$0")/.."

base_tag=$(sed -n 's/^[[:space:]]*newTag:[[:space:]]*"\{0,1\}\([^"[:space:]]*\)"\{0,1\}.*/\1/p' overlays/base/kustomization.yaml | head -1)
tag=${IMAGE_TAG:-$base_tag}
[ -n "$tag" ] || { echo "images: no newTag in overlays/base/kustomization.yaml and no IMAGE_TAG" >&2; exit 1; }
prefix=${IMAGE_REGISTRY:-ghcr.io/bookinfo-bench/bookinfo-bench}

list=false
if [ "${1:-}" = --list ]; then list=true; shift; fi
apps=("$@")
if [ ${#apps[@]} -eq 0 ]; then
  for d in apps/*/; do apps+=("$(basename "$d")"); done
fi

if $list; then
  for app in "${apps[@]}"; do echo "$prefix/$app:$tag"; done
  exit 0
fi

engine=${CONTAINER_ENGINE:-}
if [ -z "$engine" ]; then
  for e in docker podman; do
    if command -v "$e" >/dev/null && "$e" info >/dev/null 2>&1; then engine=$e; break; fi
  done
fi
if [ -z "$engine" ]; then
  echo "images: no container engine: install and start docker or podman (or set CONTAINER_ENGINE)." >&2
  echo "images: nothing else needs one: make test and make demo run without images." >&2
  exit 1
fi

for app in "${apps[@]}"; do
  [ -f "apps/$app/Dockerfile" ] || { echo "images: apps/$app/Dockerfile is missing" >&2; exit 1; }
  echo "==> images: $engine build apps/$app -> $prefix/$app:$tag"
  "$engine" build -t "$prefix/$app:$tag" "apps/$app"
done
echo "==> images: built ${#apps[@]}: $(printf "$prefix/%s:$tag " "${apps[@]}")"
