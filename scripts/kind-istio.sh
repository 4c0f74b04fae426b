#!/usr/bin/env bash
# A local cluster for the mesh comparison, for machines with Docker:
# a kind cluster (one control plane, two workers, so fortio and details can sit
# on different nodes), the Gateway API CRDs, Istio's ambient profile (istiod
# injects sidecars too, so all three variants run side by side), and the four
# app images built and loaded into the nodes.
# Needs: docker, kind, kubectl, go, and istioctl on PATH (an Istio release, whose
# images match it; the istioctl built by k8s-tools.sh is a development snapshot
# for offline analysis only).
# Usage: scripts/kind-istio.sh            env: KIND_CLUSTER (bookinfo-bench)
set -euo pipefail
cd "$(dirname "$0")/.."

CLUSTER=${KIND_CLUSTER:-bookinfo-bench}
GATEWAY_API_VERSION=v1.2.1
say() { printf '==> kind-istio: %s\n' "$*"; }
die() { printf 'kind-istio: %s\n' "$*" >&2; exit 1; }

for tool in docker kind kubectl go istioctl; do
  command -v "$tool" >/dev/null || die "$tool is not on PATH"
done
docker info >/dev/null 2>&1 || die "the Docker engine is not running"

if kind get clusters | grep -qx "$CLUSTER"; then
  say "kind cluster $CLUSTER exists"
else
  say "creating kind cluster $CLUSTER"
  kind create cluster --name "$CLUSTER" --config - <<'KIND'
kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
  - role: control-plane
  - role: worker
  - role: worker
KIND
fi
kubectl config use-context "kind-$CLUSTER" >/dev/null

say "Gateway API $GATEWAY_API_VERSION CRDs (from the Go module)"
gw=$(GOFLAGS= go mod download -json "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')
kubectl apply --server-side -f "$gw/config/crd/standard"

say "Istio, ambient profile ($(istioctl version --remote=false 2>/dev/null | head -1))"
istioctl install -y --set profile=ambient
kubectl -n istio-system rollout status deploy/istiod --timeout=300s
kubectl -n istio-system rollout status ds/istio-cni-node --timeout=300s
kubectl -n istio-system rollout status ds/ztunnel --timeout=300s

say "building and loading the app images"
scripts/images.sh
for image in $(scripts/images.sh --list); do
  kind load docker-image --name "$CLUSTER" "$image"
done

say "ready. Next:"
cat <<'NEXT'
  for v in no-mesh sidecar ambient; do kubectl apply -k overlays/$v; done    # or just one
  kubectl -n bookinfo-ambient rollout status deploy --timeout=300s
  kubectl -n bookinfo-ambient port-forward svc/productpage 9080:9080          # http://127.0.0.1:9080/productpage
NEXT
