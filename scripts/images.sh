#!/usr/bin/env bash
# Builds one container image per app (apps/<app>/Dockerfile, the app folder as
# context) and bookload's (load/Dockerfile, the repository root as context: the
# Go module), tagged ghcr.io/bookinfo-bench/bookinfo-bench/<name>:<tag> (the
# published names overlays/ deploys), with docker, podman or buildah.
#
# Usage: scripts/images.sh [--list | --engine | --run-flags] [NAME...]   (default: every apps/*/ and bookload)
#        scripts/images.sh --istio [--list]
#   --istio      the Istio images of `scripts/cluster.sh up --mesh` instead
#                (pilot, proxyv2, install-cni, ztunnel; scripts/cluster/istio/Containerfile,
#                from the binaries `scripts/k8s-tools.sh --mesh` built), tagged
#                localhost/bookinfo-bench/istio/<name>:<the version those binaries report>
#   --list       print the image names and exit
#   --engine     print the container engine command this machine needs (for tests)
#   --run-flags  print the extra `run` flags this machine needs (for tests)
# env: IMAGE_TAG (default: the one tag in overlays/base/kustomization.yaml),
#      IMAGE_REGISTRY (replaces ghcr.io/bookinfo-bench/bookinfo-bench),
#      CONTAINER_ENGINE (docker, podman or buildah), BASE_IMAGE (default
#      docker.io/library/debian:bookworm-slim; every Dockerfile takes it as the build argument BASE),
#      BUILD_CA_CERTS (a PEM file of extra CAs the build stages trust, for a
#      TLS-inspecting proxy; default: the host's locally added CAs in
#      /usr/local/share/ca-certificates; the images themselves never keep them).
#
# Every image is Debian bookworm with its runtime from Debian's packages (Node
# from its own release builds; bookload is a static Go binary, built with the
# toolchain go.mod names). Where no registry serves the base image, it is
# made here from Debian's archive (mmdebstrap --variant=minbase, imported into
# the engine) and the build says so.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '==> images: %s\n' "$*" >&2; }
die() { printf 'images: %s\n' "$*" >&2; exit 1; }

base_tag=$(sed -n 's/^[[:space:]]*newTag:[[:space:]]*"\{0,1\}\([^"[:space:]]*\)"\{0,1\}.*/\1/p' overlays/base/kustomization.yaml | head -1)
tag=${IMAGE_TAG:-$base_tag}
[ -n "$tag" ] || die "no newTag in overlays/base/kustomization.yaml and no IMAGE_TAG"
prefix=${IMAGE_REGISTRY:-ghcr.io/bookinfo-bench/bookinfo-bench}
base=${BASE_IMAGE:-docker.io/library/debian:bookworm-slim}
local_base=localhost/bookinfo-bench/debian:bookworm-minbase

mode=build istio=''
if [ "${1:-}" = --istio ]; then istio=1; shift; fi
case ${1:-} in
  --list) mode=list; shift ;;
  --engine) mode=engine; shift ;;
  --run-flags) mode=run-flags; shift ;;
  -h | --help) sed -n '2,25s/^# \{0,1\}//p' "$0"; exit 0 ;;
  -*) die "unknown option $1 (see --help)" ;;
esac
apps=("$@")
if [ ${#apps[@]} -eq 0 ]; then
  for d in apps/*/; do apps+=("$(basename "$d")"); done
  apps+=(bookload)
fi
# Where each image's Dockerfile, build context and stage are.
dockerfile_of() { case $1 in bookload) echo load/Dockerfile ;; *) echo "apps/$1/Dockerfile" ;; esac; }
context_of() { case $1 in bookload) echo . ;; *) echo "apps/$1" ;; esac; }
target_of() { :; }
if [ -n "$istio" ]; then
  mesh=$(bash scripts/k8s-tools.sh --print-mesh-dir)
  prefix=${ISTIO_HUB:-localhost/bookinfo-bench/istio}
  apps=(pilot proxyv2 install-cni ztunnel)
  if [ "$mode" != list ]; then
    for b in pilot-discovery pilot-agent install-cni istio-cni ztunnel envoy; do
      [ -x "$mesh/bin/$b" ] || die "$mesh/bin/$b is missing: scripts/k8s-tools.sh --mesh builds it"
    done
  fi
  # The tag is the version the binaries report (k8s-tools.sh stamps it).
  tag=$(sed -n 's/^istio.io\/istio module .*, stamped \([^,]*\),.*/\1/p' "$mesh/BUILD-INFO" 2>/dev/null)
  [ -n "$tag" ] || die "$mesh/BUILD-INFO names no version: scripts/k8s-tools.sh --mesh writes it"
  dockerfile_of() { echo scripts/cluster/istio/Containerfile; }
  context_of() { echo "$mesh"; }
  target_of() { echo "$1"; }
fi
if [ "$mode" = list ]; then
  for app in "${apps[@]}"; do echo "$prefix/$app:$tag"; done
  exit 0
fi

# --- the engine ---------------------------------------------------------------
engine=${CONTAINER_ENGINE:-}
if [ -z "$engine" ]; then
  for e in docker podman buildah; do
    command -v "$e" >/dev/null || continue
    case $e in
      docker) docker info >/dev/null 2>&1 && { engine=docker; break; } ;;
      *) engine=$e; break ;;
    esac
  done
fi
[ -n "$engine" ] || die "no container engine: install docker, podman or buildah (Debian: apt-get install podman runc), or set CONTAINER_ENGINE.
images: nothing else needs one: make demo and the local stacks run without images."
command -v "$engine" >/dev/null || die "CONTAINER_ENGINE=$engine is not on PATH"

engine_cmd=("$engine")
run_flags=()
build_flags=()
if [ "$engine" = podman ] || [ "$engine" = buildah ]; then
  # On cgroups v1 (or hybrid) hosts crun cannot start containers and systemd
  # may not manage cgroups: runc with the cgroupfs manager can.
  if [ "$engine" = podman ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ] && command -v runc >/dev/null; then
    engine_cmd+=(--cgroup-manager=cgroupfs --runtime runc)
  fi
  # podman's default ulimits can exceed this process's hard limits (then
  # every container fails to start): ask for what the host allows.
  nofile=$(ulimit -Hn); nproc=$(ulimit -Hu)
  [ "$nofile" = unlimited ] && nofile=65536
  [ "$nproc" = unlimited ] && nproc=8192
  nofile=$((nofile < 65536 ? nofile : 65536)); nproc=$((nproc < 8192 ? nproc : 8192))
  run_flags+=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")
  build_flags+=("${run_flags[@]}")
  if [ "$engine" = buildah ]; then
    engine_cmd=(buildah)
    build_flags=(--isolation chroot)
  fi
  # apt and the language package managers inside a build reach the network
  # the host reaches, proxies included.
  build_flags+=(--network host)
  # docker buildx sets TARGETARCH itself; podman 4 and buildah do not.
  case $(uname -m) in
    x86_64) build_flags+=(--build-arg TARGETARCH=amd64) ;;
    aarch64 | arm64) build_flags+=(--build-arg TARGETARCH=arm64) ;;
  esac
fi
case $mode in
  engine) echo "${engine_cmd[*]}"; exit 0 ;;
  run-flags) echo "${run_flags[*]}"; exit 0 ;;
esac

# --- the base image -----------------------------------------------------------
has_image() { "${engine_cmd[@]}" image inspect "$1" >/dev/null 2>&1 || "${engine_cmd[@]}" inspect --type image "$1" >/dev/null 2>&1; }
if ! has_image "$base"; then
  say "pulling the base image $base"
  if ! timeout 120 "${engine_cmd[@]}" pull "$base" >/dev/null 2>&1; then
    [ -z "${BASE_IMAGE:-}" ] || die "cannot pull BASE_IMAGE=$base"
    if has_image "$local_base"; then
      say "no registry serves $base here: using $local_base, made earlier from Debian's archive"
    else
      command -v mmdebstrap >/dev/null || die "no registry serves $base: install mmdebstrap (apt-get install mmdebstrap) to make it from Debian's archive"
      say "no registry serves $base here: making $local_base from Debian's archive (mmdebstrap --variant=minbase bookworm, about a minute)"
      mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm - |
        "${engine_cmd[@]}" import - "$local_base" >/dev/null ||
        die "mmdebstrap | $engine import failed"
    fi
    base=$local_base
  fi
fi

# --- CAs for the build stages ------------------------------------------------
# Package managers inside a build reach PyPI, npm and Maven Central over TLS;
# behind a TLS-inspecting proxy they need its CA, which the host trusts and
# a fresh Debian does not. Passed as a build secret: used by the build
# stages, never part of an image layer.
ca=$(mktemp)
trap 'rm -f "$ca"' EXIT
if [ -n "${BUILD_CA_CERTS:-}" ]; then
  [ -r "$BUILD_CA_CERTS" ] || die "BUILD_CA_CERTS=$BUILD_CA_CERTS is not a readable file"
  cat "$BUILD_CA_CERTS" > "$ca"
else
  for f in /usr/local/share/ca-certificates/*.crt /usr/local/share/ca-certificates/*/*.crt; do
    [ -r "$f" ] && cat "$f" >> "$ca"
  done
fi
if [ -s "$ca" ]; then
  source_ca=${BUILD_CA_CERTS:-/usr/local/share/ca-certificates}
  say "the build stages trust $(grep -c 'BEGIN CERTIFICATE' "$ca") extra CA(s) from $source_ca; the images do not keep them"
fi
build_flags+=(--secret "id=extra_ca,src=$ca")

# --- the images ---------------------------------------------------------------
for app in "${apps[@]}"; do
  file=$(dockerfile_of "$app") context=$(context_of "$app")
  [ -f "$file" ] || die "$file is missing (images: $(printf '%s ' apps/*/ | sed 's|apps/||g; s|/||g')bookload)"
  target=$(target_of "$app")
  say "$engine build $file${target:+ --target $target} (context $context) -> $prefix/$app:$tag (base $base)"
  if [ "$engine" = buildah ]; then
    buildah bud "${build_flags[@]}" ${target:+--target "$target"} --build-arg "BASE=$base" -f "$file" -t "$prefix/$app:$tag" "$context"
  else
    "${engine_cmd[@]}" build "${build_flags[@]}" ${target:+--target "$target"} --build-arg "BASE=$base" -f "$file" -t "$prefix/$app:$tag" "$context"
  fi
done
say "built ${#apps[@]}: $(printf "$prefix/%s:$tag " "${apps[@]}")"
