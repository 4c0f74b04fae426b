#!/usr/bin/env bash
# The mesh comparison on a cluster you already have: one scenario run
# interleaved across namespaces (variants) from inside the cluster, through
# each namespace's load client (svc/fortio: the bookload agent of
# overlays/components/bookload-agent as a bookload+http target, or stock
# fortio as a fortio+http target), and the comparison written, the first
# variant as the baseline. Each variant's data path is checked before any
# load (a variant is measured only where its mesh is), and bookload proves it
# again for every repetition from the mesh's counters (--mesh): a repetition
# whose path is not proven is marked invalid and left out of the verdicts.
#
# Usage: scripts/mesh-compare.sh [SCENARIO] [--variant NAME=NAMESPACE[?url=BASE]]... [--baseline NAME]
#                                [--margin METRIC=DURATION]... [--apply | --no-apply] [--check-only] [--skip-mesh-check]
#                                [--istio-namespace NS] [--out DIR] [-- BOOKLOAD_RUN_ARGS...]
#   SCENARIO           a name in scenarios/ or a YAML path (default: smoke)
#   --variant N=NS     compare namespace NS under the name N (repeatable); default the
#                      three overlays: no-mesh=bookinfo-no-mesh sidecar=bookinfo-sidecar
#                      ambient=bookinfo-ambient. Each NS needs the apps and svc/fortio
#                      (stock fortio, or the bookload agent: detected per namespace).
#                      N=NS?url=BASE: the load goes to BASE, not the scenario's service,
#                      so one NS can be two variants (e.g. ...?url=http://details-nagle:9080)
#   --baseline NAME    the variant the others are compared with (default: the first)
#   --margin M=D       a verdict per variant against the baseline: the paired
#                      difference of percentile M is within D, exceeds it, or is
#                      inconclusive (e.g. --margin p99=1ms; repeatable; see load/README.md)
#   --apply            (the default) kubectl apply -k overlays/NAME for the three known
#                      variants (NAME=bookinfo-NAME); other variants are yours to deploy
#   --no-apply         apply nothing: use what is deployed (still waits for rollouts)
#   --check-only       stop after the data-path checks (no bookload, no load)
#   --skip-mesh-check  measure without the data-path checks (says so loudly)
#   --istio-namespace  where istiod and ztunnel run (default: $ISTIO_NAMESPACE or istio-system)
#   --out DIR          results directory (default: results); the run directory made in
#                      it gets comparison.md next to run.json
#   after --           passed to `bookload run`, e.g. -- --repetitions 6
# The kind of mesh of a variant comes from its namespace's labels:
#   istio-injection=enabled or istio.io/rev   sidecar: every pod has a ready istio-proxy
#   istio.io/dataplane-mode=ambient            ambient: no sidecar, every pod in ztunnel
#                                              with protocol HBONE; istio.io/use-waypoint:
#                                              that waypoint Gateway is Programmed
#   neither                                    no mesh: no istio-proxy, not ambient
# env: BOOKLOAD (bin/bookload, built if missing), ISTIOCTL (istioctl), ROLLOUT_TIMEOUT (300s)
set -euo pipefail
cd "$(dirname "$0")/.."

KNOWN_VARIANTS=(no-mesh sidecar ambient)
GATEWAY_API_VERSION=v1.2.1
BOOKLOAD=${BOOKLOAD:-bin/bookload}
ISTIOCTL=${ISTIOCTL:-istioctl}
ROLLOUT_TIMEOUT=${ROLLOUT_TIMEOUT:-300s}
istio_ns=${ISTIO_NAMESPACE:-istio-system}
say() { printf '==> mesh-compare: %s\n' "$*" >&2; }
die() { printf 'mesh-compare: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '10,39s/^# \{0,1\}//p' "$0" >&2; exit "${1:-2}"; }
bad_usage() { printf 'mesh-compare: %s\n' "$*" >&2; exit 2; }

# --- arguments --------------------------------------------------------------
scenario=smoke apply=1 out=results extra=() check_only='' skip_check='' baseline='' margins=()
scenario_set=
names=() namespaces=() urls=()
add_variant() {
  local spec=$1 name ns url='' i
  [[ $spec == *=* ]] || bad_usage "--variant $spec: want NAME=NAMESPACE, e.g. --variant ambient-waypoint=bookinfo-waypoint"
  name=${spec%%=*} ns=${spec#*=}
  if [[ $ns == *'?'* ]]; then
    url=${ns#*'?'} ns=${ns%%'?'*}
    [[ $url == url=?* ]] || bad_usage "--variant $spec: after the namespace only ?url=BASE_URL, e.g. ?url=http://details-nagle:9080"
    url="?$url"
  fi
  [[ $name =~ ^[A-Za-z0-9._-]+$ ]] ||
    bad_usage "--variant $spec: the name '$name' must be letters, digits, '.', '_' or '-' (it names the results)"
  [[ $ns =~ ^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$ ]] ||
    bad_usage "--variant $spec: '$ns' is not a namespace name (lower-case letters, digits and '-', at most 63)"
  for i in "${!names[@]}"; do
    [[ ${names[i]} != "$name" ]] || bad_usage "--variant $spec: the name $name is given twice"
    [[ ${namespaces[i]}${urls[i]} != "$ns$url" ]] || bad_usage "--variant $spec: namespace $ns is already variant ${names[i]}"
  done
  names+=("$name") namespaces+=("$ns") urls+=("$url")
}
while (($#)); do
  case $1 in
    --variant) (($# >= 2)) || bad_usage "--variant needs NAME=NAMESPACE"; add_variant "$2"; shift ;;
    --variant=*) add_variant "${1#--variant=}" ;;
    --baseline) (($# >= 2)) || bad_usage "--baseline needs a variant name"; baseline=$2; shift ;;
    --baseline=*) baseline=${1#--baseline=} ;;
    --margin) (($# >= 2)) || bad_usage "--margin needs METRIC=DURATION, e.g. p99=1ms"; margins+=(--margin "$2"); shift ;;
    --margin=*) margins+=(--margin "${1#--margin=}") ;;
    --apply) apply=1 ;;
    --no-apply) apply= ;;
    --check-only) check_only=1 ;;
    --skip-mesh-check) skip_check=1 ;;
    --istio-namespace) (($# >= 2)) || bad_usage "--istio-namespace needs a namespace"; istio_ns=$2; shift ;;
    --istio-namespace=*) istio_ns=${1#--istio-namespace=} ;;
    --out) (($# >= 2)) || bad_usage "--out needs a directory"; out=$2; shift ;;
    --out=*) out=${1#--out=} ;;
    -h | --help) usage 0 ;;
    --) shift; extra=("$@"); break ;;
    -*) printf 'mesh-compare: unknown option %s\n' "$1" >&2; usage ;;
    *) [[ -z $scenario_set ]] || bad_usage "one scenario only (got $scenario and $1)"; scenario=$1 scenario_set=1 ;;
  esac
  shift
done
if ((${#names[@]} == 0)); then
  for v in "${KNOWN_VARIANTS[@]}"; do add_variant "$v=bookinfo-$v"; done
fi
baseline=${baseline:-${names[0]}}
[[ " ${names[*]} " == *" $baseline "* ]] ||
  bad_usage "--baseline $baseline is not a variant (variants: ${names[*]})"

# known NAME NAMESPACE: true for the three overlays at their own namespaces.
known() { [[ " ${KNOWN_VARIANTS[*]} " == *" $1 "* && $2 == "bookinfo-$1" ]]; }

# --- the cluster --------------------------------------------------------------
command -v kubectl >/dev/null || die "kubectl is not on PATH"
context=$(kubectl config current-context 2>/dev/null) ||
  die "no current kubectl context: point kubectl at your cluster (kubectl config use-context NAME), or make one with scripts/kind-istio.sh"
kubectl get --raw /readyz >/dev/null 2>&1 ||
  die "the cluster of context $context does not answer (kubectl get --raw /readyz failed)"
say "cluster: context $context; variants: $(for i in "${!names[@]}"; do printf '%s=%s ' "${names[i]}" "${namespaces[i]}"; done)(baseline ${baseline})"

istio_install="install Istio's ambient profile, which serves both sidecar and ambient: istioctl install -y --set profile=ambient (https://istio.io/latest/docs/ambient/install/istioctl/), or scripts/kind-istio.sh for a kind cluster"
gateway_api_install="kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases/download/$GATEWAY_API_VERSION/standard-install.yaml"
have_gateway_api() { kubectl get crd gateways.gateway.networking.k8s.io >/dev/null 2>&1; }
# need_istio KIND VARIANT: istiod for sidecar and ambient, ztunnel for ambient.
need_istio() {
  local kind=$1 v=$2
  [[ $kind != none ]] || return 0
  kubectl -n "$istio_ns" get deployment istiod >/dev/null 2>&1 ||
    die "variant $v is $kind but there is no istiod Deployment in $istio_ns (--istio-namespace or ISTIO_NAMESPACE if Istio runs elsewhere): $istio_install"
  [[ $kind != ambient ]] || kubectl -n "$istio_ns" get daemonset ztunnel >/dev/null 2>&1 ||
    die "variant $v is ambient but there is no ztunnel DaemonSet in $istio_ns: Istio is installed without the ambient profile: $istio_install"
}

# --- deploy (the three known variants only) ------------------------------------
for i in "${!names[@]}"; do
  v=${names[i]} ns=${namespaces[i]}
  if [[ -n $apply ]] && known "$v" "$ns"; then
    # The overlay's mesh is its name; checked before the pods are created,
    # since pods made without istiod get no sidecar.
    case $v in no-mesh) need_istio none "$v" ;; *) need_istio "$v" "$v" ;; esac
    if kubectl kustomize "overlays/$v" | grep '^apiVersion: gateway\.networking\.k8s\.io/' >/dev/null; then
      have_gateway_api || die "overlays/$v has Gateway API objects but the cluster has no Gateway API CRDs: $gateway_api_install"
    fi
    say "applying overlays/$v"
    kubectl apply -k "overlays/$v" >/dev/null
  elif ! kubectl get namespace "$ns" >/dev/null 2>&1; then
    if known "$v" "$ns"; then
      die "variant $v: namespace $ns does not exist: run without --no-apply (or kubectl apply -k overlays/$v)"
    fi
    die "variant $v: namespace $ns does not exist: deploy the variant there first (only no-mesh, sidecar and ambient at bookinfo-<name> are applied by this script)"
  elif [[ -n $apply ]]; then
    say "variant $v ($ns) is not one of the overlays: using what is deployed there"
  fi
done

# --- the kind of mesh of each variant, from its namespace's labels ----------------
label() { # label NAMESPACE KEY -> the label's value, empty when unset
  kubectl get namespace "$1" -o jsonpath="{.metadata.labels.${2//./\\.}}"
}
kinds=()
for i in "${!names[@]}"; do
  v=${names[i]} ns=${namespaces[i]}
  injection=$(label "$ns" istio-injection) rev=$(label "$ns" istio.io/rev) mode=$(label "$ns" istio.io/dataplane-mode)
  sidecar='' ambient=''
  if [[ $injection == enabled || (-n $rev && $injection != disabled) ]]; then sidecar=1; fi
  [[ $mode != ambient ]] || ambient=1
  if [[ -n $sidecar && -n $ambient ]]; then
    die "variant $v: namespace $ns is labelled for both sidecar injection (istio-injection=$injection istio.io/rev=$rev) and ambient (istio.io/dataplane-mode=ambient): pick one, the comparison would not say which mesh it measured"
  fi
  kind=none
  [[ -z $sidecar ]] || kind=sidecar
  [[ -z $ambient ]] || kind=ambient
  # A variant named after a mesh must be that mesh, wherever it runs.
  if [[ " ${KNOWN_VARIANTS[*]} " == *" $v "* && $v != "${kind/none/no-mesh}" ]]; then
    die "variant $v: namespace $ns is labelled as $kind (istio-injection=${injection:-unset} istio.io/rev=${rev:-unset} istio.io/dataplane-mode=${mode:-unset}), not $v: kubectl apply -k overlays/$v"
  fi
  kinds+=("$kind")
  need_istio "$kind" "$v"
  say "variant $v: namespace $ns, mesh: $kind"
done

# --- wait for the rollouts -------------------------------------------------------
for i in "${!names[@]}"; do
  v=${names[i]} ns=${namespaces[i]}
  deployments=$(kubectl -n "$ns" get deployments -o name)
  [[ -n $deployments ]] || { say "variant $v: no Deployments in $ns to wait for"; continue; }
  say "waiting for the rollouts in $ns"
  for d in $deployments; do
    kubectl -n "$ns" rollout status "$d" --timeout="$ROLLOUT_TIMEOUT" >/dev/null ||
      die "variant $v: $d in $ns did not become ready in $ROLLOUT_TIMEOUT: kubectl -n $ns get pods; kubectl -n $ns describe pods"
  done
done

# --- the data path of each variant -------------------------------------------------
problems=()
problem() { problems+=("$*"); }

# pods NAMESPACE: one line per live pod:
# name|init istio-proxy|its restartPolicy|container istio-proxy|init ready|container ready|phase|pod dataplane-mode
# (pods being deleted, and those that ran to completion, left out)
pods() {
  kubectl -n "$1" get pods -o jsonpath='{range .items[*]}{.metadata.name}{"|"}{.spec.initContainers[?(@.name=="istio-proxy")].name}{"|"}{.spec.initContainers[?(@.name=="istio-proxy")].restartPolicy}{"|"}{.spec.containers[?(@.name=="istio-proxy")].name}{"|"}{.status.initContainerStatuses[?(@.name=="istio-proxy")].ready}{"|"}{.status.containerStatuses[?(@.name=="istio-proxy")].ready}{"|"}{.status.phase}{"|"}{.metadata.labels.istio\.io/dataplane-mode}{"|"}{.metadata.deletionTimestamp}{"\n"}{end}' |
    awk -F'|' '$9 == "" && $7 != "Succeeded" && $7 != "Failed"'
}

check_sidecar() { # VARIANT NAMESPACE
  local v=$1 ns=$2 name init_name init_restart ctr_name init_ready ctr_ready phase _
  while IFS='|' read -r name init_name init_restart ctr_name init_ready ctr_ready phase _; do
    if [[ $init_name == istio-proxy && $init_restart == Always ]]; then
      [[ $init_ready == true ]] ||
        problem "variant $v (sidecar), namespace $ns, pod $name: its istio-proxy (native sidecar) is not ready (pod phase $phase): kubectl -n $ns describe pod $name; kubectl -n $ns logs $name -c istio-proxy"
    elif [[ $ctr_name == istio-proxy ]]; then
      [[ $ctr_ready == true ]] ||
        problem "variant $v (sidecar), namespace $ns, pod $name: its istio-proxy container is not ready (pod phase $phase): kubectl -n $ns describe pod $name; kubectl -n $ns logs $name -c istio-proxy"
    else
      problem "variant $v (sidecar), namespace $ns, pod $name: no istio-proxy container (neither a native sidecar, an initContainer with restartPolicy Always, nor a regular container): the pod was created before injection was on, istiod's injection webhook did not run, or the pod opts out (sidecar.istio.io/inject=false). Fix and recreate: kubectl -n $ns rollout restart deployment"
    fi
  done < <(pods "$ns")
}

check_no_sidecar() { # VARIANT KIND NAMESPACE
  local v=$1 kind=${2/none/no mesh} ns=$3 name init_name init_restart ctr_name _ phase pod_mode _
  while IFS='|' read -r name init_name init_restart ctr_name _ _ phase pod_mode _; do
    if [[ $init_name == istio-proxy || $ctr_name == istio-proxy ]]; then
      problem "variant $v ($kind), namespace $ns, pod $name: has an istio-proxy sidecar, which it must not ($kind): the pod was injected (namespace istio-injection/istio.io/rev at its creation, or sidecar.istio.io/inject=true on the pod). Recreate it: kubectl -n $ns rollout restart deployment"
    fi
    if [[ $kind == "no mesh" && $pod_mode == ambient ]]; then
      problem "variant $v (no mesh), namespace $ns, pod $name: labelled istio.io/dataplane-mode=ambient, so ztunnel captures its traffic"
    fi
  done < <(pods "$ns")
}

check_ztunnel() { # VARIANT NAMESPACE
  local v=$1 ns=$2 dump name protocol
  if ! command -v "$ISTIOCTL" >/dev/null; then
    problem "variant $v (ambient), namespace $ns: $ISTIOCTL is not on PATH (ISTIOCTL to point at it): it is needed to ask ztunnel which pods it carries over HBONE"
    return
  fi
  if ! dump=$("$ISTIOCTL" -i "$istio_ns" ztunnel-config workload --workload-namespace "$ns" 2>&1); then
    problem "variant $v (ambient), namespace $ns: $ISTIOCTL -i $istio_ns ztunnel-config workload --workload-namespace $ns failed: $dump"
    return
  fi
  # NAMESPACE  POD NAME  ADDRESS  NODE  WAYPOINT  PROTOCOL (the protocol last)
  while IFS='|' read -r name _ _ _ _ _ _ _ _; do
    protocol=$(awk -v ns="$ns" -v pod="$name" '$1 == ns && $2 == pod {print $NF; exit}' <<<"$dump")
    if [[ -z $protocol ]]; then
      problem "variant $v (ambient), namespace $ns, pod $name: not in ztunnel's workloads ($ISTIOCTL ztunnel-config workload --workload-namespace $ns): ztunnel does not carry its traffic; is istio-cni running on its node?"
    elif [[ $protocol != HBONE ]]; then
      problem "variant $v (ambient), namespace $ns, pod $name: ztunnel lists it with protocol $protocol, not HBONE: it is not enrolled in the mesh (a pod label istio.io/dataplane-mode=none, or istio-cni did not set it up; kubectl -n $istio_ns logs ds/istio-cni-node)"
    fi
  done < <(pods "$ns")
}

check_waypoint() { # VARIANT NAMESPACE
  local v=$1 ns=$2 wp wp_ns programmed
  wp=$(label "$ns" istio.io/use-waypoint)
  [[ -n $wp && $wp != none ]] || return 0
  wp_ns=$(label "$ns" istio.io/use-waypoint-namespace)
  wp_ns=${wp_ns:-$ns}
  if ! have_gateway_api; then
    problem "variant $v (ambient), namespace $ns: it uses the waypoint $wp (istio.io/use-waypoint) but the cluster has no Gateway API CRDs: $gateway_api_install"
    return
  fi
  if ! programmed=$(kubectl -n "$wp_ns" get gateways.gateway.networking.k8s.io "$wp" -o jsonpath='{.status.conditions[?(@.type=="Programmed")].status}' 2>/dev/null); then
    problem "variant $v (ambient), namespace $ns: its waypoint Gateway $wp (istio.io/use-waypoint) does not exist in $wp_ns: istioctl waypoint apply -n $wp_ns --name $wp (or the waypoint component of overlays/)"
  elif [[ $programmed != True ]]; then
    problem "variant $v (ambient), namespace $ns: its waypoint Gateway $wp in $wp_ns is not Programmed (status ${programmed:-not reported}): kubectl -n $wp_ns describe gateway $wp"
  fi
}

if [[ -n $skip_check ]]; then
  printf '\n' >&2
  printf 'mesh-compare: WARNING: --skip-mesh-check: THE DATA PATH OF THE VARIANTS IS NOT CHECKED.\n' >&2
  printf 'mesh-compare: WARNING: a variant may run without the mesh its name says; the numbers may not measure it.\n\n' >&2
else
  for i in "${!names[@]}"; do
    v=${names[i]} ns=${namespaces[i]} kind=${kinds[i]}
    if [[ -z $(pods "$ns") ]]; then
      problem "variant $v (${kind/none/no mesh}), namespace $ns: no running pods: nothing to measure"
      continue
    fi
    case $kind in
      sidecar) check_sidecar "$v" "$ns" ;;
      ambient) check_no_sidecar "$v" ambient "$ns"; check_ztunnel "$v" "$ns"; check_waypoint "$v" "$ns" ;;
      none) check_no_sidecar "$v" none "$ns" ;;
    esac
  done
  if ((${#problems[@]})); then
    printf 'mesh-compare: %s\n' "${problems[@]}" >&2
    die "refusing to measure: ${#problems[@]} data-path problem(s) above (--skip-mesh-check measures anyway)"
  fi
  say "data path checked: $(for i in "${!names[@]}"; do printf '%s (%s) ' "${names[i]}" "${kinds[i]}"; done)"
fi
if [[ -n $check_only ]]; then
  say "--check-only: no load"
  exit 0
fi

# How the mesh was built, when istioctl sits in a mesh build of scripts/k8s-tools.sh.
build_info=()
istioctl_path=$(command -v "$ISTIOCTL" 2>/dev/null || true)
if [[ -n $istioctl_path && -f $(dirname "$istioctl_path")/../BUILD-INFO ]]; then
  build_info=(--mesh-build-info "$(dirname "$istioctl_path")/../BUILD-INFO")
fi
istiod_image=none
if kubectl -n "$istio_ns" get deployment istiod >/dev/null 2>&1; then
  istiod_image=$(kubectl -n "$istio_ns" get deployment istiod -o jsonpath='{.spec.template.spec.containers[0].image}')
fi

# --- bookload --------------------------------------------------------------
if [[ ! -x $BOOKLOAD ]]; then
  command -v go >/dev/null || die "$BOOKLOAD is missing and go is not on PATH to build it (make build)"
  say "building $BOOKLOAD"
  go build -o "$BOOKLOAD" ./load/cmd/bookload
fi

# --- port-forwards, one local port per namespace, removed on every exit ------
tmp=$(mktemp -d)
pids=()
# shellcheck disable=SC2317 # invoked by the trap
cleanup() {
  local pid
  for pid in ${pids[@]+"${pids[@]}"}; do kill "$pid" 2>/dev/null || true; done
  for pid in ${pids[@]+"${pids[@]}"}; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
# A signal ends the script through exit, so the EXIT trap runs (bash does
# not run it when a signal without a trap kills it). While bookload runs, a
# terminal's Ctrl-C reaches it directly (it stops the remote run through the
# port-forwards, keeps what finished and exits 130); TERM and HUP are passed
# on to it as TERM. Either way the script then collects it and exits.
bookload_pid='' signalled=''
# shellcheck disable=SC2317 # invoked by the traps
on_signal() { # NAME STATUS
  signalled=$2
  if [[ -n $bookload_pid ]] && kill -0 "$bookload_pid" 2>/dev/null; then
    [[ $1 == INT ]] || kill -TERM "$bookload_pid" 2>/dev/null || true
    return 0 # a bare return in a trap returns the interrupted wait's status: set -e would exit
  fi
  exit "$2"
}
trap cleanup EXIT
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap 'on_signal HUP 129' HUP

# forward NAMESPACE: sets $port to a free local port forwarded to svc/fortio.
forward() {
  local ns=$1 log="$tmp/port-forward-$1.log" pid i
  : >"$log" # before the job starts: the loop below may read it first
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

# client NAMESPACE: "agent" when every pod of svc/fortio runs the bookload
# agent (the pod label app.kubernetes.io/name=bookload that
# components/bookload-agent sets), else "fortio" (stock fortio).
client() {
  local labels
  labels=$(kubectl -n "$1" get pods -l app=fortio -o jsonpath='{range .items[*]}{.metadata.labels.app\.kubernetes\.io/name}{"|"}{.metadata.deletionTimestamp}{"\n"}{end}' |
    awk -F'|' '$2 == "" { print $1 }' | sort -u)
  if [[ $labels == bookload ]]; then echo agent; else echo fortio; fi
}

targets=() agents=() stock=() claims=()
ports=() # by variant; one port-forward per namespace
for i in "${!names[@]}"; do
  [[ -n $skip_check ]] || claims+=(--mesh "${names[i]}=${namespaces[i]}:${kinds[i]/none/no-mesh}")
  port=
  for ((j = 0; j < i; j++)); do [[ ${namespaces[j]} != "${namespaces[i]}" ]] || port=${ports[j]}; done
  [[ -n $port ]] || forward "${namespaces[i]}"
  ports+=("$port")
  if [[ $(client "${namespaces[i]}") == agent ]]; then
    say "bookload agent of ${namespaces[i]} (${names[i]}) on 127.0.0.1:$port${urls[i]}"
    targets+=(--target "${names[i]}=bookload+http://127.0.0.1:$port${urls[i]}")
    agents+=("${names[i]}")
  else
    say "fortio of ${namespaces[i]} (${names[i]}) on 127.0.0.1:$port${urls[i]}"
    targets+=(--target "${names[i]}=fortio+http://127.0.0.1:$port${urls[i]}")
    stock+=("${names[i]}")
  fi
done
if ((${#agents[@]} && ${#stock[@]})); then
  printf '\n' >&2
  printf 'mesh-compare: WARNING: THE VARIANTS ARE MEASURED BY DIFFERENT LOAD CLIENTS: the bookload agent for %s\n' "${agents[*]}" >&2
  printf 'mesh-compare: WARNING: (per-request histograms, corrected latency), stock fortio for %s (bucket histograms,\n' "${stock[*]}" >&2
  printf 'mesh-compare: WARNING: corrected = plain). Differences smaller than a fortio bucket are noise; apply\n' >&2
  printf 'mesh-compare: WARNING: overlays/components/bookload-agent to every namespace for equal precision.\n\n' >&2
fi

# --- the run ---------------------------------------------------------------
say "bookload run $scenario, interleaved across ${names[*]}"
status=0
# In the background and waited for, so that a signal's trap runs at once.
"$BOOKLOAD" run "$scenario" "${targets[@]}" --baseline "$baseline" --out "$out" \
  --label "cluster=$context" --label "istio=$istiod_image" ${margins[@]+"${margins[@]}"} \
  ${claims[@]+"${claims[@]}" --istio-namespace "$istio_ns"} ${build_info[@]+"${build_info[@]}"} ${extra[@]+"${extra[@]}"} >"$tmp/run.out" &
bookload_pid=$!
while :; do
  if wait "$bookload_pid"; then status=0; break; else status=$?; fi
  kill -0 "$bookload_pid" 2>/dev/null || break # else a trap interrupted the wait
done
bookload_pid=''
cat "$tmp/run.out"
dir=$(sed -n 's/^results: \(.*\) ([a-z]*, [0-9]* of [0-9]* repetitions)$/\1/p' "$tmp/run.out" | head -n 1)
if [[ -n $dir && -f $dir/run.json ]]; then
  "$BOOKLOAD" compare "$dir" --baseline "$baseline" ${margins[@]+"${margins[@]}"} >"$dir/comparison.md" 2>/dev/null &&
    "$BOOKLOAD" compare "$dir" --baseline "$baseline" ${margins[@]+"${margins[@]}"} --format json >"$dir/comparison.json" 2>/dev/null &&
    say "comparison written to $dir/comparison.md and comparison.json"
fi
exit "${signalled:-$status}"
