#!/usr/bin/env bash
# Installs what `make images`, the container test and the one-node cluster
# (scripts/cluster.sh) need on a Debian or Ubuntu machine without Docker:
# podman with runc (crun cannot start containers on cgroups v1 hosts),
# mmdebstrap (which makes the Debian base image where no registry serves it),
# and for the cluster the CNI plugins, iptables and catatonit (its pause
# process). Idempotent; as root it uses apt-get, otherwise it says what to
# install.
set -euo pipefail

say() { printf '==> container-tools: %s\n' "$*"; }
have() {
  command -v podman >/dev/null && command -v runc >/dev/null && command -v mmdebstrap >/dev/null &&
    command -v iptables >/dev/null && command -v catatonit >/dev/null && [ -x /usr/lib/cni/bridge ]
}
if have; then
  say "podman $(podman --version | awk '{print $3}'), runc, mmdebstrap, iptables, catatonit and the CNI plugins present"
  exit 0
fi
pkgs=(podman runc mmdebstrap uidmap containernetworking-plugins iptables catatonit)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  say "installing ${pkgs[*]} with apt-get"
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq "${pkgs[@]}" >/dev/null
  say "podman $(podman --version | awk '{print $3}') installed"
else
  printf 'container-tools: some of podman, runc, mmdebstrap, iptables, catatonit, the CNI plugins are missing; as root run: apt-get install -y %s\n' "${pkgs[*]}" >&2
  exit 1
fi
