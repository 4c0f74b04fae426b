#!/usr/bin/env bash
# A local cluster for the mesh comparison, for machines with Docker (and the
# 4-CPU GitHub runner): a kind cluster named bookinfo-bench, the Gateway API
# CRDs, Istio's ambient profile (istiod injects sidecars too, so all three
# variants run side by side), and the four app images built and loaded into
# the nodes.
#
# Usage: scripts/kind-istio.sh [--workers N] [--no-images]
#        scripts/kind-istio.sh --gateway-cluster-ip | --istio-manifest
#   --workers N           worker nodes besides the control plane (default 0: one
#                         node runs everything, as on a 4-CPU runner; 2 puts fortio
#                         and the apps on different nodes, for a bigger machine)
#   --no-images           skip building and loading the images (published ones are pulled)
#   --gateway-cluster-ip  only annotate every Gateway of class istio in the cluster
#                         with networking.istio.io/service-type=ClusterIP (kind has no
#                         LoadBalancer, so such a Gateway never gets an address);
#                         run it after applying overlays with a gateway (bookinfo-routing)
#   --istio-manifest      only print what `istioctl install` would apply (no cluster needed)
# Needs: docker, kind, kubectl, go, and istioctl on PATH (an Istio release, whose
# images match it; the istioctl built by k8s-tools.sh is a development snapshot
# for offline analysis only).
# env: KIND_CLUSTER (bookinfo-bench), GATEWAY_API_VERSION (v1.4.1),
#      ISTIO_INSTALL_ARGS (more `istioctl install` arguments, e.g. --set values...)
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER=${KIND_CLUSTER:-bookinfo-bench}
# A Gateway API release Istio 1.30 supports (v1.4), latest patch.
GATEWAY_API_VERSION=${GATEWAY_API_VERSION:-v1.4.1}
say() { printf '==> kind-istio: %s\n' "$*"; }
die() { printf 'kind-istio: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '8,18s/^# \{0,1\}//p' "$0" >&2; exit "${1:-2}"; }

workers=0 images=1 gateways_only='' manifest_only=''
while (($#)); do
  case $1 in
    --workers) (($# >= 2)) || usage; workers=$2; shift ;;
    --workers=*) workers=${1#--workers=} ;;
    --no-images) images= ;;
    --gateway-cluster-ip) gateways_only=1 ;;
    --istio-manifest) manifest_only=1 ;;
    -h | --help) usage 0 ;;
    *) printf 'kind-istio: unknown argument %s\n' "$1" >&2; usage ;;
  esac
  shift
done
[[ $workers =~ ^[0-9]$ ]] || die "--workers $workers: want a number of nodes, 0-9"

# Every Gateway of class istio gets a ClusterIP Service instead of a
# LoadBalancer (the Istio docs' way on kind); waypoints are ClusterIP already.
gateway_cluster_ip() {
  local ns name class n=0
  kubectl get crd gateways.gateway.networking.k8s.io >/dev/null 2>&1 || { say "no Gateway API CRDs: no gateways"; return 0; }
  while read -r ns name class; do
    [[ $class == istio ]] || continue
    kubectl -n "$ns" annotate --overwrite gateways.gateway.networking.k8s.io "$name" networking.istio.io/service-type=ClusterIP >/dev/null
    say "gateway $ns/$name: networking.istio.io/service-type=ClusterIP"
    n=$((n + 1))
  done < <(kubectl get gateways.gateway.networking.k8s.io -A -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{" "}{.spec.gatewayClassName}{"\n"}{end}')
  say "$n gateway(s) of class istio annotated"
}
# Istio's ambient profile, sized for one 4-CPU node: Istio's default requests
# (istiod 500m CPU and 2 GiB, ztunnel 200m, each sidecar 100m) would leave
# little room for three variants. Requests only place pods; limits are
# unchanged. ISTIO_INSTALL_ARGS adds settings (word-split).
# shellcheck disable=SC2206 # ISTIO_INSTALL_ARGS is a list of arguments
istio_settings=(
  --set profile=ambient
  --set values.pilot.autoscaleEnabled=false
  --set components.pilot.k8s.resources.requests.cpu=100m
  --set components.pilot.k8s.resources.requests.memory=256Mi
  --set values.ztunnel.resources.requests.cpu=50m
  --set values.ztunnel.resources.requests.memory=128Mi
  --set values.global.proxy.resources.requests.cpu=50m
  --set values.global.proxy.resources.requests.memory=64Mi
  ${ISTIO_INSTALL_ARGS:-}
)
if [[ -n $manifest_only ]]; then
  command -v istioctl >/dev/null || die "istioctl is not on PATH"
  istioctl manifest generate "${istio_settings[@]}"
  exit 0
fi
if [[ -n $gateways_only ]]; then
  command -v kubectl >/dev/null || die "kubectl is not on PATH"
  gateway_cluster_ip
  exit 0
fi

for tool in docker kind kubectl go istioctl; do
  command -v "$tool" >/dev/null || die "$tool is not on PATH"
done
docker info >/dev/null 2>&1 || die "the Docker engine is not running"

if kind get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  say "kind cluster $CLUSTER exists"
else
  say "creating kind cluster $CLUSTER (control plane + $workers worker(s))"
  {
    printf 'kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n  - role: control-plane\n'
    for ((i = 0; i < workers; i++)); do printf '  - role: worker\n'; done
  } | kind create cluster --name "$CLUSTER" --wait 120s --config -
fi
kubectl config use-context "kind-$CLUSTER" >/dev/null

say "Gateway API $GATEWAY_API_VERSION CRDs (from the Go module)"
gw=$(GOFLAGS='' GOWORK=off go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
[[ -d $gw/config/crd/standard ]] || die "no config/crd/standard in sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION"
kubectl apply --server-side -f "$gw/config/crd/standard" >/dev/null
kubectl wait --for=condition=Established --timeout=60s crd/gateways.gateway.networking.k8s.io >/dev/null

say "Istio, ambient profile ($(istioctl version --remote=false 2>/dev/null | head -1))"
istioctl install -y "${istio_settings[@]}"
kubectl -n istio-system rollout status deploy/istiod --timeout=300s
kubectl -n istio-system rollout status ds/istio-cni-node --timeout=300s
kubectl -n istio-system rollout status ds/ztunnel --timeout=300s

if [[ -n $images ]]; then
  say "building and loading the app images"
  scripts/images.sh
  built=$(scripts/images.sh --list)
  for image in $built; do
    kind load docker-image --name "$CLUSTER" "$image"
  done
  # The names the base deploys must be the ones loaded, or the nodes pull.
  for image in $(kubectl kustomize overlays/base | sed -n 's/^[[:space:]]*image:[[:space:]]*//p' | sort -u); do
    case $image in fortio/*) continue ;; esac
    [[ $'\n'$built$'\n' == *$'\n'$image$'\n'* ]] ||
      say "WARNING: overlays/base deploys $image, which scripts/images.sh did not build: the nodes will pull it"
  done
fi

gateway_cluster_ip

say "ready. Next:"
cat <<'NEXT'
  scripts/mesh-compare.sh smoke                          # applies the three variants, checks, measures
  # or by hand:
  for v in no-mesh sidecar ambient; do kubectl apply -k overlays/$v; done
  scripts/kind-istio.sh --gateway-cluster-ip             # after applying a gateway (bookinfo-routing)
  kubectl -n bookinfo-ambient rollout status deploy --timeout=300s
  kubectl -n bookinfo-ambient port-forward svc/productpage 9080:9080   # http://127.0.0.1:9080/productpage
NEXT
