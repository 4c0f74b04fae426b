#!/usr/bin/env bash
# Installs what `make images` and the container test need on a Debian or
# Ubuntu machine without Docker: podman with runc (crun cannot start
# containers on cgroups v1 hosts) and mmdebstrap (which makes the Debian base
# image where no registry serves it). A machine with docker or podman already
# working is left alone. Idempotent; as root it uses apt-get, otherwise it
# says what to install.
set -euo pipefail

say() { printf '==> container-tools: %s\n' "$*"; }
if command -v podman >/dev/null && command -v runc >/dev/null && command -v mmdebstrap >/dev/null; then
  say "podman $(podman --version | awk '{print $3}'), runc and mmdebstrap present"
  exit 0
fi
if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  say "docker is running: images build with it (the container test needs podman: apt-get install podman runc)"
  exit 0
fi
pkgs=(podman runc mmdebstrap uidmap)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "installing ${pkgs[*]} with apt-get"
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${pkgs[@]}" >/dev/null
  say "podman $(podman --version | awk '{print $3}') installed"
else
  printf 'container-tools: podman, runc and mmdebstrap are missing; as root run: apt-get install -y %s\n' "${pkgs[*]}" >&2
  exit 1
fi
