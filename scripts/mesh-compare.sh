#!/usr/bin/env bash
# The mesh comparison on a cluster you already have, with Istio installed
# (ambient profile: istiod, istio-cni, ztunnel; istiod also injects sidecars):
# deploys overlays/no-mesh, overlays/sidecar and overlays/ambient side by side,
# waits for them, port-forwards each namespace's fortio, runs one scenario
# interleaved across the three from inside the cluster (bookload's fortio+http
# targets) and writes the comparison, no-mesh as the baseline.
#
# Usage: scripts/mesh-compare.sh [SCENARIO] [--no-apply] [--out DIR] [-- BOOKLOAD_RUN_ARGS...]
#   SCENARIO    a name in scenarios/ or a YAML path (default: smoke)
#   --no-apply  use the variants already deployed (still waits for their rollouts)
#   --out DIR   results directory (default: results); the run directory made in
#               it gets comparison.md next to run.json
#   after --    passed to `bookload run`, e.g. -- --repetitions 6
# env: BOOKLOAD (default bin/bookload, built if missing), ROLLOUT_TIMEOUT (300s)
set -euo pipefail
cd "$(dirname "$0")/.."

VARIANTS=(no-mesh sidecar ambient)
GATEWAY_API_VERSION=v1.2.1
BOOKLOAD=${BOOKLOAD:-bin/bookload}
ROLLOUT_TIMEOUT=${ROLLOUT_TIMEOUT:-300s}
say() { printf '==> mesh-compare: %s\n' "$*" >&2; }
die() { printf 'mesh-compare: %s\n' "$*" >&2; exit 1; }
usage() { sed -n 's/^# \{0,1\}//;9,15p' "$0" >&2; exit "${1:-2}"; }

scenario=smoke apply=1 out=results extra=()
scenario_set=
while (($#)); do
  case $1 in
    --no-apply) apply= ;;
    --out) (($# >= 2)) || usage; out=$2; shift ;;
    --out=*) out=${1#--out=} ;;
    -h | --help) usage 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) printf 'mesh-compare: unknown option %s\n' "$1" >&2; usage ;;
    *) [[ -z $scenario_set ]] || usage; scenario=$1 scenario_set=1 ;;
  esac
  shift
done

# --- the cluster: context, Istio (sidecar and ambient), Gateway API --------
command -v kubectl >/dev/null || die "kubectl is not on PATH"
context=$(kubectl config current-context 2>/dev/null) ||
  die "no current kubectl context: point kubectl at your cluster (kubectl config use-context NAME), or make one with scripts/kind-istio.sh"
kubectl get --raw /readyz >/dev/null 2>&1 ||
  die "the cluster of context $context does not answer (kubectl get --raw /readyz failed)"
say "cluster: context $context"

missing_crds() { # names of the given CRDs that the cluster lacks
  local crd
  for crd in "$@"; do
    kubectl get crd "$crd" >/dev/null 2>&1 || printf ' %s' "$crd"
  done
}
istio_install="install Istio's ambient profile, which serves both sidecar and ambient: istioctl install -y --set profile=ambient (https://istio.io/latest/docs/ambient/install/istioctl/), or scripts/kind-istio.sh for a kind cluster"
missing=$(missing_crds destinationrules.networking.istio.io virtualservices.networking.istio.io \
  gateways.networking.istio.io peerauthentications.security.istio.io)
[[ -z $missing ]] || die "Istio's CRDs are missing:$missing. Istio is not installed: $istio_install"
kubectl -n istio-system get deployment istiod >/dev/null 2>&1 ||
  die "no istiod Deployment in istio-system (sidecar injection and ambient both need it): $istio_install"
kubectl -n istio-system get daemonset ztunnel >/dev/null 2>&1 ||
  die "no ztunnel DaemonSet in istio-system: Istio is installed without the ambient profile, which the ambient variant needs: $istio_install"
missing=$(missing_crds gateways.gateway.networking.k8s.io httproutes.gateway.networking.k8s.io gatewayclasses.gateway.networking.k8s.io)
[[ -z $missing ]] || die "the Gateway API CRDs are missing:$missing. Install them (ambient waypoints are Gateway API Gateways): kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases/download/$GATEWAY_API_VERSION/standard-install.yaml"
istiod_image=$(kubectl -n istio-system get deployment istiod -o jsonpath='{.spec.template.spec.containers[0].image}')
say "Istio: $istiod_image, ztunnel present, Gateway API CRDs present"

# --- bookload --------------------------------------------------------------
if [[ ! -x $BOOKLOAD ]]; then
  command -v go >/dev/null || die "$BOOKLOAD is missing and go is not on PATH to build it (make build)"
  say "building $BOOKLOAD"
  go build -o "$BOOKLOAD" ./load/cmd/bookload
fi

# --- deploy and wait -------------------------------------------------------
for v in "${VARIANTS[@]}"; do
  if [[ -n $apply ]]; then
    say "applying overlays/$v"
    kubectl apply -k "overlays/$v" >/dev/null
  elif ! kubectl get namespace "bookinfo-$v" >/dev/null 2>&1; then
    die "namespace bookinfo-$v does not exist: run without --no-apply (or kubectl apply -k overlays/$v)"
  fi
done
for v in "${VARIANTS[@]}"; do
  say "waiting for the rollouts in bookinfo-$v"
  kubectl -n "bookinfo-$v" rollout status deployment --timeout="$ROLLOUT_TIMEOUT" >/dev/null ||
    die "bookinfo-$v did not become ready in $ROLLOUT_TIMEOUT: kubectl -n bookinfo-$v get pods; kubectl -n bookinfo-$v describe pods"
done

# --- port-forwards, one local port per namespace, removed on exit ----------
tmp=$(mktemp -d)
pids=()
# shellcheck disable=SC2317 # invoked by the trap
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# forward NAMESPACE: sets $port to a free local port forwarded to svc/fortio.
forward() {
  local ns=$1 log="$tmp/port-forward-$1.log" pid i
  # In a process group of its own (set -m), so that Ctrl-C reaches bookload,
  # which stops the remote run through this very port-forward, and not kubectl.
  set -m
  kubectl -n "$ns" port-forward --address 127.0.0.1 svc/fortio :8080 >"$log" 2>&1 &
  pid=$!
  set +m
  pids+=("$pid")
  port=
  for ((i = 0; i < 150; i++)); do
    port=$(sed -n 's/^Forwarding from 127\.0\.0\.1:\([0-9][0-9]*\) -> 8080$/\1/p' "$log" | head -n 1)
    [[ -n $port ]] && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  die "port-forward to svc/fortio in $ns failed: $(cat "$log")"
}

targets=()
for v in "${VARIANTS[@]}"; do
  forward "bookinfo-$v"
  say "fortio of bookinfo-$v on 127.0.0.1:$port"
  targets+=(--target "$v=fortio+http://127.0.0.1:$port")
done

# --- the run ---------------------------------------------------------------
say "bookload run $scenario, interleaved across ${VARIANTS[*]}"
status=0
"$BOOKLOAD" run "$scenario" "${targets[@]}" --baseline no-mesh --out "$out" \
  --label "cluster=$context" --label "istio=$istiod_image" ${extra[@]+"${extra[@]}"} >"$tmp/run.out" || status=$?
cat "$tmp/run.out"
dir=$(sed -n 's/^results: \(.*\) ([a-z]*, [0-9]* of [0-9]* repetitions)$/\1/p' "$tmp/run.out" | head -n 1)
if [[ -n $dir && -f $dir/run.json ]]; then
  "$BOOKLOAD" compare "$dir" --baseline no-mesh >"$dir/comparison.md" 2>/dev/null &&
    say "comparison written to $dir/comparison.md"
fi
exit "$status"
