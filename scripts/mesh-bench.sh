#!/usr/bin/env bash
# The cluster section of BENCHMARKS.md: no mesh vs Istio ambient vs Istio
# sidecar on the one-node cluster of scripts/cluster.sh with its mesh (Istio
# built here from source), each variant's load client the bookload agent
# in its own namespace, the variants interleaved by scripts/mesh-compare.sh
# after it checked each one's data path (bookload then proves it for every
# repetition: scripts/mesh-compare.sh passes --mesh), and the cluster's cost sampled from
# the kubelet summary API: the mesh's vCPU and memory per 1000 RPS by
# component beside Istio's published figures, and queries per core.
#
# Usage: scripts/mesh-bench.sh [--quick] [--keep] [--only ROW[,ROW]] [--out DIR]
#   --quick   fewer and shorter repetitions (a check of the plumbing, not numbers)
#   --keep    leave the three namespaces deployed afterwards
#   --only    only these rows (details, echo, throughput, matrix, page); the
#             section goes to DIR/section.md, BENCHMARKS.md is left as it is
#   --out DIR results directory (default: results/mesh-bench-<UTC time>)
# What it runs: the details row (details-100rps-10c, the published
# classic-details row, repeated until its p50 verdicts are decided), istio/tools' echo at 1000 QPS over 16 connections
# and one connection's bulk throughput (scenarios/README.md), the
# app-behaviour x mesh matrix (matrix-details: details with TCP_NODELAY on and
# off in each mode, components/details-nagle; its interaction lines say
# whether a mode changes what the knob does), and the full
# page up the ladder (bookinfo-ladder's profiles) as far as the node holds: a rung whose slowest variant carried
# under 90% of its offered rate ends the ladder. It writes the section
# between the cluster markers of BENCHMARKS.md (kept by `bookload bench`),
# atomically; an interrupted run leaves BENCHMARKS.md as it was and its
# results directory as far as it got.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '==> mesh-bench: %s\n' "$*" >&2; }
die() { printf 'mesh-bench: %s\n' "$*" >&2; exit 1; }

quick='' keep='' out='' only=''
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --keep) keep=1 ;;
    --only) (($# >= 2)) || die "--only needs rows, e.g. --only matrix"; only=$2; shift ;;
    --out) (($# >= 2)) || die "--out needs a directory"; out=$2; shift ;;
    -h | --help) sed -n '2,27s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done
for row in ${only//,/ }; do
  [[ " details echo throughput matrix page " == *" $row "* ]] || die "--only $row: not a row (details, echo, throughput, matrix, page)"
done
# row NAME: true when the row runs.
row() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
started=$(date -u +%Y-%m-%dT%H-%M-%SZ)
out=${out:-results/mesh-bench-$started}
mkdir -p "$out"

VARIANTS=(no-mesh ambient sidecar)
BEGIN='<!-- cluster section: written by scripts/mesh-bench.sh; bookload bench keeps it -->'
END='<!-- end of the cluster section -->'
# The margins of the verdicts: what a user of a 2-CPU node would call no
# difference for these rows.
MARGINS=(--margin p50=0.2ms --margin p99=1ms)

bash scripts/cluster.sh up --mesh
eval "$(bash scripts/cluster.sh env)"
mesh_dir=$(bash scripts/k8s-tools.sh --print-mesh-dir)
export ISTIOCTL=$mesh_dir/bin/istioctl
[ -x bin/bookload ] || go build -o bin/bookload ./load/cmd/bookload

# Each overlay as a user applies it, with the bookload agent as its load
# client and details-nagle beside details-v1 for the matrix row.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for v in "${VARIANTS[@]}"; do
  mkdir -p "$tmp/$v"
  # (kustomize takes relative paths only)
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: bookinfo-%s\nresources:\n  - %s\ncomponents:\n  - %s\n  - %s\n' \
    "$v" "$(realpath --relative-to="$tmp/$v" "overlays/$v")" "$(realpath --relative-to="$tmp/$v" overlays/components/bookload-agent)" \
    "$(realpath --relative-to="$tmp/$v" overlays/components/details-nagle)" >"$tmp/$v/kustomization.yaml"
  say "kubectl apply -k overlays/$v + components/bookload-agent + components/details-nagle"
  kubectl apply -k "$tmp/$v" >/dev/null
done
for v in "${VARIANTS[@]}"; do
  for d in $(kubectl -n "bookinfo-$v" get deployments -o name); do
    kubectl -n "bookinfo-$v" rollout status "$d" --timeout=600s >/dev/null || die "$d in bookinfo-$v did not roll out"
  done
done
if [ -z "$keep" ]; then
  trap 'rm -rf "$tmp"; kubectl delete namespace bookinfo-no-mesh bookinfo-ambient bookinfo-sidecar --ignore-not-found --wait=false >/dev/null 2>&1 || true' EXIT
fi

# A warm-up: every variant serves the page for a while (JIT, pools) unrecorded.
say "warming the three variants (the full page, 100 RPS for 30 s each, not recorded)"
warm=$tmp/warm.yaml
printf 'name: warm\ndescription: warm-up, not recorded\nservice: productpage\npath: /productpage\nwarmup: 0s\nrepetitions: 1\nprofiles:\n  - {name: warm, qps: 100, connections: 10, duration: %s}\nheaders: {}\nkeepalive: true\n' \
  "$([ -n "$quick" ] && echo 5s || echo 30s)" >"$warm"
bash scripts/mesh-compare.sh "$warm" --no-apply --out "$tmp/warm" >/dev/null 2>&1 || die "the warm-up failed: bash scripts/mesh-compare.sh $warm --no-apply"

namespaces=bookinfo-no-mesh,bookinfo-ambient,bookinfo-sidecar
costs=(--cluster-cost --cost-namespaces "$namespaces" --kubeconfig "$KUBECONFIG")
reps=4 dur=10s
# The details row and the page's first rung repeat until their p50 verdicts
# are decided (an anytime-valid confidence sequence), within a budget each.
decided_budget=6m
[ -z "$quick" ] || { reps=3 dur=4s decided_budget=1m; }
seq=()

# scenario NAME SERVICE PATH PROFILE QPS CONNS [FIELD...]: one row's scenario
# file (FIELD: more scenario lines, e.g. "payload: 1024").
scenario() {
  printf 'name: %s\ndescription: %s through each mesh mode (scripts/mesh-bench.sh)\nservice: %s\npath: %s\nwarmup: 3s\nrepetitions: %d\nprofiles:\n  - {name: %s, qps: %d, connections: %d, duration: %s}\nheaders: {}\nkeepalive: true\n' \
    "$1" "$1" "$2" "$3" "$reps" "$4" "$5" "$6" "$dur" >"$tmp/$1.yaml"
  (($# > 6)) && printf '%s\n' "${@:7}" >>"$tmp/$1.yaml"
  echo "$tmp/$1.yaml"
}

# run SCENARIO [MESH_COMPARE_ARGS...]: mesh-compare.sh with the cost, the run
# directory on stdout.
run() {
  local log dir
  log=$tmp/$(basename "$1" .yaml).log
  bash scripts/mesh-compare.sh "$1" --no-apply "${@:2}" "${MARGINS[@]}" --out "$out" -- "${costs[@]}" ${seq[@]+"${seq[@]}"} >"$log" 2>&1 ||
    { tail -30 "$log" >&2; die "scripts/mesh-compare.sh $1 failed (the runs so far are in $out)"; }
  dir=$(sed -n 's/^results: \(.*\) ([a-z]*, [0-9]* of [0-9]* repetitions)$/\1/p' "$log" | head -n 1)
  [ -f "$dir/comparison.md" ] || die "no comparison.md for $1 (log: $log)"
  echo "$dir"
}

# carried DIR: the lowest rate any variant carried, as a share of the offered one (percent).
carried() {
  bin/bookload compare "$1" --format json | python3 -c '
import json, sys
rows = json.load(sys.stdin)["rows"]
print(int(min(100 * r["qps"] / r["target_qps"] for r in rows if r.get("target_qps"))))'
}

dirs=()
if row details; then
  say "details, 100 RPS over 10 connections, until its p50 verdicts are decided (at most $decided_budget)"
  seq=(--until-decided --decide p50 --budget "$decided_budget")
  dirs+=("$(run "$(scenario mesh-details-100rps-10c details /details/0 100rps-10c 100 10)")")
  seq=()
fi
# The published experiments that fit the node (scenarios/README.md): the
# middle point of istio/tools' echo benchmark, and one connection's bulk
# throughput (Gbit/s and CPU per Gbit/s in its comparison), each against
# the fortio echo server of the variant's own load client pod.
if row echo; then
  say "istio/tools' echo: 1 KB posted to fortio's echo server, 1000 QPS over 16 connections"
  dirs+=("$(run "$(scenario mesh-echo-1000qps-16c echo /echo 1000qps-16c 1000 16 'payload: 1024')")")
fi
if row throughput; then
  say "one connection's bulk throughput: 100 KiB answers back to back"
  dirs+=("$(run "$(scenario mesh-throughput-1c echo '/echo?size=102400' bulk-1c 25000 1)")")
fi
# The matrix: each mode's two details (details-v1, details-nagle) as targets
# MODE.nodelay and MODE.nagle, the scenario's own repetitions (6: an
# interaction is a difference of four cells).
if row matrix; then
  say "the app-behaviour x mesh matrix: details with TCP_NODELAY on and off in each mode"
  cells=()
  for v in "${VARIANTS[@]}"; do
    cells+=(--variant "$v.nodelay=bookinfo-$v" --variant "$v.nagle=bookinfo-$v?url=http://details-nagle:9080")
  done
  matrix=scenarios/matrix-details.yaml
  [ -z "$quick" ] || matrix=$(scenario mesh-matrix-details details /details/0 100rps-10c 100 10)
  dirs+=("$(run "$matrix" "${cells[@]}")")
fi
rungs=("100 10" "200 20" "400 40" "800 80" "1000 100" "2000 200" "4000 400")
row page || rungs=()
for rung in ${rungs[@]+"${rungs[@]}"}; do
  read -r qps conns <<<"$rung"
  say "the full page, $qps RPS over $conns connections"
  seq=()
  if [ "$qps" = 100 ]; then
    say "(the first rung until its p50 verdicts are decided, at most $decided_budget)"
    seq=(--until-decided --decide p50 --budget "$decided_budget")
  fi
  d=$(run "$(scenario "mesh-page-${qps}rps-${conns}c" productpage /productpage "${qps}rps-${conns}c" "$qps" "$conns")")
  seq=()
  dirs+=("$d")
  c=$(carried "$d")
  if [ "$c" -lt 90 ]; then
    say "the slowest variant carried $c% of $qps RPS: the node holds no more; the ladder ends here"
    break
  fi
  [ -z "$quick" ] || break
done

# --- the section ---------------------------------------------------------------
section=$tmp/section.md
{
  echo "$BEGIN"
  echo
  echo "## Cluster: no mesh vs Istio ambient vs Istio sidecar"
  echo
  echo "Written by \`scripts/mesh-bench.sh\`$([ -n "$quick" ] && echo ' --quick (a plumbing check: too short for numbers)'), $started to $(date -u +%Y-%m-%dT%H-%M-%SZ). Do not edit by hand."
  echo
  echo "- **Cluster**: the one-node Kubernetes of \`scripts/cluster.sh\` on this machine ($(nproc) CPUs), every pod on the one node: load client, apps and mesh share the same CPUs."
  echo "- **Mesh**: $(head -1 "$mesh_dir/BUILD-INFO"); ambient profile (istiod, istio-cni, ztunnel), sidecars on upstream Envoy ($(sed -n 's/^envoy: //p' "$mesh_dir/BUILD-INFO" | cut -c1-80)); telemetry off (see README, \"With Istio\")."
  echo "- **Variants**: \`overlays/no-mesh\`, \`overlays/ambient\`, \`overlays/sidecar\` with \`components/bookload-agent\` (the load client in each namespace, through the mesh of its namespace) and \`components/details-nagle\` (a second details with TCP_NODELAY off, for the matrix row); each variant's data path checked by \`scripts/mesh-compare.sh\` before its load and proven for every repetition by bookload from the mesh's counters (\`--mesh\`: ztunnel's connections, the load client's sidecar's upstream requests, no mesh counter for no mesh); a repetition not proven is marked INVALID and left out of every interval and verdict, and each run's JSON keeps the mesh's fingerprint and the proof."
  echo "- **Matrix**: the matrix row's targets are MODE.SETTING, each mode's details-v1 (nodelay) and details-nagle (nagle, the classic Nagle + delayed-ACK stall) loaded by the mode's own agent; an interaction line is (nagle - nodelay under the mode) - (the same without a mesh), per repetition, with its interval: a mode that changes what the knob does shows there."
  echo "- **Method**: $reps interleaved repetitions of $dur per row (the matrix row: its scenario's, 6 of 10 s; the details row and the page's first rung: rounds of $dur until their p50 verdicts are decided, at most $decided_budget each, with anytime-valid confidence sequences, Bonferroni-corrected) after a 3 s warm-up per target (the variants alternate), after 30 s of the full page per variant unrecorded; verdicts: paired differences vs no mesh with Student-t intervals, Holm-corrected, margins p50 0.2 ms and p99 1 ms, each verdict line with the mesh's vCPU per 1000 RPS per component beside it, and per proxy traversal in the cost table."
  echo "- **Cost**: kubelet summary API sampled every 5 s in each repetition's window; vCPU per 1000 RPS = 1000 x CPU-seconds / requests served, set beside Istio's published figures (1 KB payloads, a dedicated load client node): here the client and the apps share the node, so the ratio is what this node shows, not a like-for-like."
  echo "- **Reading the cost rows**: the three variants run side by side and each row counts every mesh component on the node, so the no-mesh row is the background (the other namespaces' idle sidecars, ztunnel and istiod); a mode's own cost is its row minus that one. A request crosses two proxies in each mesh mode (the client's and the server's, sidecars or the one ztunnel on both ends), where Istio's figures are per proxy."
  echo "- **Runs**: \`$out\` (\`bin/bookload compare $out/<run>\` re-reads any)"
  echo
  for d in "${dirs[@]}"; do
    echo "### $(basename "$d" | sed 's/^[0-9TZ-]*_//')"
    echo
    sed 's/^#/####/' "$d/comparison.md"
    echo
  done
  echo "$END"
} >"$section"

if [ -n "$only" ]; then
  cp "$section" "$out/section.md"
  say "--only $only: the section is in $out/section.md; BENCHMARKS.md left as it was"
  exit 0
fi
# BENCHMARKS.md with the section replaced (or appended), written atomically.
new=$tmp/BENCHMARKS.md
if grep -qF "$BEGIN" BENCHMARKS.md 2>/dev/null; then
  awk -v b="$BEGIN" -v e="$END" -v f="$section" '
    $0 == b { while ((getline l < f) > 0) print l; skip = 1; next }
    skip && $0 == e { skip = 0; next }
    !skip { print }' BENCHMARKS.md >"$new"
else
  { [ -f BENCHMARKS.md ] && cat BENCHMARKS.md && echo; cat "$section"; } >"$new"
fi
cp "$new" BENCHMARKS.md.tmp && mv BENCHMARKS.md.tmp BENCHMARKS.md
say "BENCHMARKS.md: the cluster section rewritten ($(grep -c '^### ' "$section") rows); runs in $out"
