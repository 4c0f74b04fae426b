#!/usr/bin/env bash
# The control-plane side of the many-namespace scale scenario (scale/), run
# with kube-burner against the cluster of the current kubeconfig:
#
#   scale.sh up    [knobs]   create N namespaces, each with ratings (M replicas)
#                            and a fortio load client, wait until ready, then
#                            churn for --churn-duration (0: no churn)
#   scale.sh churn [knobs]   churn the namespaces of an earlier `up` (same
#                            --prefix, --namespaces, --replicas) while, say,
#                            bookload drives the load
#   scale.sh delete --uuid U remove everything the `up` with that uuid created
#                            (alias: down)
#   scale.sh run   [knobs]   the whole scenario in one command: up, then churn
#                            for --churn-duration [6m] while `bookload scale`
#                            drives every namespace's load client with
#                            --scenario [scale-churn], then delete (unless
#                            --keep); the tables land in --out [results]
#
# Knobs (defaults in brackets):
#   --namespaces N [3]   --replicas M [2]   --mode no-mesh|sidecar|ambient [no-mesh]
#   --waypoint           ambient only: a waypoint per namespace
#   --policy             an L7 AuthorizationPolicy per namespace (sidecar; ambient with --waypoint)
#   --churn-duration D   0, or whole minutes: 90s is refused, 120s, 5m, 1h are fine [0]
#   --churn-tick T       the churn's clock: a scale every tick, a relabel every 60 [1s]
#   --qps Q [20] --burst B [40]       kube-burner's API request rate
#   --prefix P [bb-scale]             namespaces are P-0 .. P-(N-1)
#   --uuid U                          default: a new one (printed)
#   --prometheus-url URL              also record scale/metrics.yml from this Prometheus
#   --wait-timeout D [15m] | --no-wait   how long `up` waits for every Deployment
#   --preload                         pull the images on every node first (kube-burner's preload DaemonSet)
#   --image-registry R --image-tag T  default: the overlays' (overlays/base/kustomization.yaml)
#   --results DIR [results/scale/<uuid>]   kube-burner's log, inputs and measurements
#   --kubeconfig PATH
#   run only: --scenario NAME|FILE [scale-churn]  --out DIR [results]  --keep
#             --bookload PATH [bin/bookload, else bookload on PATH]
# kube-burner: KUBE_BURNER=/path/to/kube-burner, else the one scripts/k8s-tools.sh
# built (make cluster-tools), else kube-burner on PATH. See scale/README.md.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCALE=$ROOT/scale

die() { printf 'scale.sh: %s\n' "$*" >&2; exit 2; }
say() { printf '==> scale: %s\n' "$*"; }

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }

cmd=${1:-}
case $cmd in
  up | churn | delete | down | run) shift ;;
  -h | --help | help) usage; exit 0 ;;
  "") usage >&2; exit 2 ;;
  *) die "unknown command '$cmd': want up, churn, run, delete (or down); see --help" ;;
esac

namespaces=3 replicas=2 mode=no-mesh waypoint=false policy=false churn=0
qps=20 burst=40 prefix=bb-scale uuid="" prometheus_url="" wait=true
tick=1s wait_timeout=15m preload=false registry="" tag="" results="" kubeconfig=""
scenario=scale-churn out="" keep=false bookload=""
[ "$cmd" != run ] || churn=6m

# need FLAG VALUE: the flag's value, or an error naming the flag.
need() { if [ $# -lt 2 ] || [ -z "$2" ] || [[ $2 == --* ]]; then die "$1: missing value"; fi; }

while [ $# -gt 0 ]; do
  case $1 in
    --namespaces) need "$@"; namespaces=$2; shift 2 ;;
    --replicas) need "$@"; replicas=$2; shift 2 ;;
    --mode) need "$@"; mode=$2; shift 2 ;;
    --waypoint) waypoint=true; shift ;;
    --policy) policy=true; shift ;;
    --churn-duration) need "$@"; churn=$2; shift 2 ;;
    --churn-tick) need "$@"; tick=$2; shift 2 ;;
    --qps) need "$@"; qps=$2; shift 2 ;;
    --burst) need "$@"; burst=$2; shift 2 ;;
    --prefix) need "$@"; prefix=$2; shift 2 ;;
    --uuid) need "$@"; uuid=$2; shift 2 ;;
    --prometheus-url) need "$@"; prometheus_url=$2; shift 2 ;;
    --wait-timeout) need "$@"; wait_timeout=$2; shift 2 ;;
    --no-wait) wait=false; shift ;;
    --preload) preload=true; shift ;;
    --image-registry) need "$@"; registry=$2; shift 2 ;;
    --image-tag) need "$@"; tag=$2; shift 2 ;;
    --results) need "$@"; results=$2; shift 2 ;;
    --kubeconfig) need "$@"; kubeconfig=$2; shift 2 ;;
    --scenario | --out | --keep | --bookload)
      [ "$cmd" = run ] || die "$1: only for \`scale.sh run\`"
      case $1 in
        --scenario) need "$@"; scenario=$2; shift 2 ;;
        --out) need "$@"; out=$2; shift 2 ;;
        --bookload) need "$@"; bookload=$2; shift 2 ;;
        --keep) keep=true; shift ;;
      esac
      continue ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown flag '$1' (see --help)" ;;
  esac
done

# whole FLAG VALUE MIN MAX: VALUE is a whole number in [MIN, MAX].
whole() {
  if ! [[ $2 =~ ^[0-9]+$ ]] || [ "${#2}" -gt 9 ] || [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
    die "$1: want a whole number from $3 to $4, got '$2'"
  fi
}

# minutes VALUE: a duration of whole minutes (0, Ns, Nm, Nh) in minutes.
minutes() {
  local v=$1 n
  case $v in
    0) echo 0; return ;;
    *h) n=${v%h}; [[ $n =~ ^[0-9]+$ ]] && { echo $((10#$n * 60)); return; } ;;
    *m) n=${v%m}; [[ $n =~ ^[0-9]+$ ]] && { echo $((10#$n)); return; } ;;
    *s) n=${v%s}; [[ $n =~ ^[0-9]+$ ]] && [ $((10#$n % 60)) -eq 0 ] && { echo $((10#$n / 60)); return; } ;;
  esac
  return 1
}

if [ "$cmd" = delete ] || [ "$cmd" = down ]; then
  [ -n "$uuid" ] || die "$cmd: --uuid: missing (the uuid \`scale.sh up\` printed)"
fi
[[ $uuid =~ ^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$ ]] || [ -z "$uuid" ] ||
  die "--uuid: want a label value (letters, digits, -_. up to 63), got '$uuid'"

if [ "$cmd" = up ] || [ "$cmd" = churn ] || [ "$cmd" = run ]; then
  whole --namespaces "$namespaces" 1 100000
  whole --replicas "$replicas" 1 10000
  namespaces=$((10#$namespaces)) replicas=$((10#$replicas))
  case $mode in
    no-mesh | sidecar | ambient) ;;
    *) die "--mode: want no-mesh, sidecar or ambient, got '$mode'" ;;
  esac
  if $waypoint && [ "$mode" != ambient ]; then
    die "--waypoint: waypoints are for --mode ambient, got --mode $mode"
  fi
  if $policy; then
    [ "$mode" != no-mesh ] || die "--policy: an AuthorizationPolicy needs a mesh, got --mode no-mesh"
    [ "$mode" != ambient ] || $waypoint ||
      die "--policy: in ambient an L7 rule needs --waypoint (ztunnel alone would deny everything)"
  fi
  churn_minutes=$(minutes "$churn") || die "--churn-duration: want 0 or whole minutes (5m, 1h, 120s), got '$churn'"
  [ "$churn_minutes" -le 10080 ] || die "--churn-duration: at most a week, got '$churn'"
  if [ "$cmd" != up ] && [ "$churn_minutes" -eq 0 ]; then
    die "--churn-duration: $cmd needs one (5m, 1h), got '$churn'"
  fi
  [[ $tick =~ ^[1-9][0-9]*(ms|s)$ ]] || die "--churn-tick: want a duration in ms or s (1s, 100ms), got '$tick'"
  if ! [[ $qps =~ ^[0-9]+(\.[0-9]+)?$ ]] || [[ $qps =~ ^0+(\.0+)?$ ]]; then
    die "--qps: want a number above 0, got '$qps'"
  fi
  whole --burst "$burst" 1 100000
  # Namespaces are <prefix>-<i>: a DNS label of at most 63 characters.
  if ! [[ $prefix =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ ]] || [ $((${#prefix} + 1 + ${#namespaces})) -gt 63 ]; then
    die "--prefix: want lower-case letters, digits and '-' (a DNS label with room for -$((namespaces - 1))), got '$prefix'"
  fi
  case $wait_timeout in
    *[0-9]s | *[0-9]m | *[0-9]h) [[ ${wait_timeout%?} =~ ^[0-9]+$ ]] || die "--wait-timeout: want a duration like 15m, got '$wait_timeout'" ;;
    *) die "--wait-timeout: want a duration like 15m, got '$wait_timeout'" ;;
  esac
  if [ -n "$prometheus_url" ] && [[ ! $prometheus_url =~ ^https?://[^[:space:]]+$ ]]; then
    die "--prometheus-url: want http(s)://host:port, got '$prometheus_url'"
  fi
fi
if [ -n "$kubeconfig" ]; then
  [ -r "$kubeconfig" ] || die "--kubeconfig: cannot read '$kubeconfig'"
  kubeconfig=$(cd "$(dirname "$kubeconfig")" && pwd)/$(basename "$kubeconfig")
fi

# The images and their tag: the overlays' own, read where they keep them.
if [ -z "$tag" ]; then
  tag=$(sed -n '/bookinfo-bench\/ratings$/{n;s/^[[:space:]]*newTag:[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}[[:space:]]*$/\1/p;}' \
    "$ROOT/overlays/base/kustomization.yaml")
  [ -n "$tag" ] || die "could not read the ratings image tag from overlays/base/kustomization.yaml; pass --image-tag"
fi
registry=${registry:-ghcr.io/bookinfo-bench/bookinfo-bench}

if [ -n "${KUBE_BURNER:-}" ]; then
  kb=$KUBE_BURNER
elif [ -x "$(bash "$ROOT/scripts/k8s-tools.sh" --print-dir)/bin/kube-burner" ]; then
  kb=$(bash "$ROOT/scripts/k8s-tools.sh" --print-dir)/bin/kube-burner
else
  kb=$(command -v kube-burner) || die "kube-burner not found: run \`make cluster-tools\` or set KUBE_BURNER=/path/to/kube-burner"
fi
[ -x "$kb" ] || die "KUBE_BURNER=$kb is not an executable file"
kbflags=()
[ -z "$kubeconfig" ] || kbflags+=(--kubeconfig "$kubeconfig")

if [ "$cmd" = run ]; then
  if [ -z "$bookload" ]; then
    bookload=$ROOT/bin/bookload
    [ -x "$bookload" ] || bookload=$(command -v bookload) || die "bookload not found: run \`make build\` or pass --bookload PATH"
  fi
  [ -x "$bookload" ] || die "--bookload: '$bookload' is not an executable file"
  uuid=${uuid:-$(cat /proc/sys/kernel/random/uuid 2>/dev/null || uuidgen | tr '[:upper:]' '[:lower:]')}
  results=${results:-$ROOT/results/scale/$uuid}
  out=${out:-$ROOT/results}
  # The knobs of this run, handed on to its up and churn steps.
  fwd=(--namespaces "$namespaces" --replicas "$replicas" --mode "$mode" --prefix "$prefix" --uuid "$uuid"
    --churn-tick "$tick" --qps "$qps" --burst "$burst" --wait-timeout "$wait_timeout"
    --image-registry "$registry" --image-tag "$tag")
  $waypoint && fwd+=(--waypoint)
  $policy && fwd+=(--policy)
  $wait || fwd+=(--no-wait)
  $preload && fwd+=(--preload)
  [ -z "$prometheus_url" ] || fwd+=(--prometheus-url "$prometheus_url")
  kcflags=()
  [ -z "$kubeconfig" ] || kcflags+=(--kubeconfig "$kubeconfig")
  churn_pid=""
  # shellcheck disable=SC2317 # finish runs from the EXIT trap
  finish() {
    local rc=$?
    trap - EXIT INT TERM
    [ -z "$churn_pid" ] || kill "$churn_pid" 2>/dev/null || true
    if $keep; then
      say "kept: remove with scripts/scale.sh delete --uuid $uuid"
    else
      bash "$0" delete --uuid "$uuid" --results "$results/delete" "${kcflags[@]}" || rc=$?
    fi
    exit "$rc"
  }
  trap finish EXIT
  trap 'exit 130' INT TERM
  bash "$0" up "${fwd[@]}" --results "$results/up" "${kcflags[@]}"
  say "run: churn for $churn and, meanwhile, bookload scale $scenario (results in $out)"
  bash "$0" churn "${fwd[@]}" --churn-duration "$churn" --results "$results/churn" "${kcflags[@]}" &
  churn_pid=$!
  "$bookload" scale "$scenario" --selector "bookinfo-bench/scale=true,kube-burner-uuid=$uuid" \
    --out "$out" --scenarios "$ROOT/scenarios" "${kcflags[@]}"
  wait "$churn_pid"
  churn_pid=""
  exit 0
fi

if [ "$cmd" = delete ] || [ "$cmd" = down ]; then
  say "deleting the namespaces labelled kube-burner-uuid=$uuid (kube-burner destroy waits until they are gone)"
  # kube-burner writes its log file into the working directory: the run's.
  results=${results:-$ROOT/results/scale/$uuid}
  mkdir -p "$results" && cd "$results"
  exec "$kb" destroy --uuid "$uuid" "${kbflags[@]}"
fi

uuid=${uuid:-$(cat /proc/sys/kernel/random/uuid 2>/dev/null || uuidgen | tr '[:upper:]' '[:lower:]')}
results=${results:-$ROOT/results/scale/$uuid}
mkdir -p "$results"
results=$(cd "$results" && pwd)
create=true
[ "$cmd" = up ] || create=false

# The values scale/scale.yml is rendered with. kube-burner lets environment
# variables override them, so those names are unset for its process below.
cat >"$results/user-data.yml" <<EOF
create: $create
prefix: "$prefix"
namespaces: $namespaces
replicas: $replicas
mode: "$mode"
waypoint: $waypoint
policy: $policy
churnMinutes: $churn_minutes
churnTick: "$tick"
minReplicas: $(( replicas * 85 / 100 > 0 ? replicas * 85 / 100 : 1 ))
maxReplicas: $(((115 * replicas + 99) / 100))
qps: $qps
burst: $burst
wait: $wait
waitTimeout: "$wait_timeout"
preload: $preload
ratingsImage: "$registry/ratings:$tag"
bookloadImage: "$registry/bookload:$tag"
prometheusURL: "$prometheus_url"
scaleDir: "$SCALE"
metricsDir: "$results/metrics"
EOF
unset_vars=()
while IFS=: read -r key _; do unset_vars+=(-u "$key"); done <"$results/user-data.yml"

# kube-burner's own deadline: the wait, the churn (a bit over 60 s a
# minute), and room for creating and for its measurements.
wait_s=${wait_timeout%?}
case $wait_timeout in *m) wait_s=$((wait_s * 60)) ;; *h) wait_s=$((wait_s * 3600)) ;; esac
timeout=$((wait_s + churn_minutes * 70 + 900))s

say "uuid $uuid"
if $create; then
  say "$cmd: $namespaces namespaces $prefix-0..$prefix-$((namespaces - 1)), mode $mode$($waypoint && echo ", waypoint")$($policy && echo ", L7 policy"), ratings x $replicas, churn ${churn_minutes}m"
else
  say "churn: ${churn_minutes}m over $prefix-0..$prefix-$((namespaces - 1)) (ratings scaled within $((replicas * 85 / 100 > 0 ? replicas * 85 / 100 : 1))-$(((115 * replicas + 99) / 100)))"
fi
say "results in $results"
cd "$results"
rc=0
env "${unset_vars[@]}" "$kb" init -c "$SCALE/scale.yml" --user-data "$results/user-data.yml" \
  --uuid "$uuid" --timeout "$timeout" "${kbflags[@]}" || rc=$?
if [ "$rc" -ne 0 ]; then
  printf 'scale.sh: kube-burner failed (exit %s); its log: %s\n' "$rc" "$results/kube-burner-$uuid.log" >&2
  exit "$rc"
fi
if $create; then
  say "done: uuid $uuid; remove with: scripts/scale.sh delete --uuid $uuid"
  say "load clients: /api/v1/namespaces/$prefix-<i>/services/fortio:8080/proxy/ (i from 0 to $((namespaces - 1)))"
else
  say "churn done (uuid $uuid)"
fi
