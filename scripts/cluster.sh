#!/usr/bin/env bash
# A real one-node Kubernetes on this machine, to try the overlays without a
# cloud account or Docker: upstream Kubernetes components (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubelet, kube-proxy in iptables
# mode) built by scripts/k8s-tools.sh --cluster, containerd and etcd from
# Debian's packages, runc and the bridge CNI plugin from Debian, CoreDNS from
# its Go module. The app images are built from apps/*/Dockerfile and imported
# into containerd under the names the manifests use; nothing is pulled.
#
# Usage: scripts/cluster.sh up [--no-images] [--mesh] | down [--purge] | status | env | host-state
#   up          start (or finish starting) the cluster, import the images; a
#               second `up` changes nothing; a half-up cluster is cleaned first
#   up --mesh   also Istio, built here from source (scripts/k8s-tools.sh --mesh,
#               scripts/images.sh --istio) and installed with its istioctl:
#               the ambient profile (istiod, istio-cni, ztunnel), with sidecar
#               injection on an upstream Envoy in the same mesh
#               (scripts/cluster/istio/*.yaml say which settings and why)
#   down        stop every process it started (by pid), remove its iptables
#               chains, mounts, bridge, network namespaces and cgroups, restore
#               the sysctls it or the components changed; --purge also deletes
#               the cluster's state (etcd, containerd's images, kubelet)
#   status      what runs, and whether the API server and the node are ready
#   env         the line that points kubectl at the cluster
#   host-state  what the cluster changes on the host while it runs (its ports,
#               processes, iptables chains, mounts, bridge, netns, cgroups) and
#               the sysctls it touches: the same before `up` and after `down`
#
# Needs root (kubelet, containerd, iptables), overlayfs, iptables, runc, the
# CNI plugins and podman (Debian: apt-get install runc containernetworking-plugins
# iptables catatonit podman). Binaries and state live in ~/.cache/bookinfo-bench
# (tools/bin and cluster/); the containerd shims keep their sockets in
# /run/containerd, removed by `down`. Ports: 164xx on loopback (the API server
# also on the node IP, kubelet on the node IP), away from the local stacks.
# env: BOOKINFO_CLUSTER_DIR, BOOKINFO_TOOLS_DIR, CLUSTER_HOST_IP (the node IP;
#      default the source address of the default route)
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS=${BOOKINFO_TOOLS_DIR:-$HOME/.cache/bookinfo-bench/tools}
BIN=$TOOLS/bin
C=${BOOKINFO_CLUSTER_DIR:-$HOME/.cache/bookinfo-bench/cluster}
RUN=$C/run VAR=$C/var ETC=$C/etc PKI=$C/pki LOG=$C/logs
NODE=bookinfo-bench
NET=bookinfo-bench-cluster # the CNI network name: tags its iptables rules
BRIDGE=bbcluster0
API_PORT=16443 ETCD_PORT=16379 ETCD_PEER_PORT=16380 KUBELET_PORT=16250 KUBELET_HEALTHZ_PORT=16248
KCM_PORT=16257 SCHED_PORT=16259 PROXY_HEALTHZ_PORT=16256 PROXY_METRICS_PORT=16249
PORTS="$API_PORT $ETCD_PORT $ETCD_PEER_PORT $KUBELET_PORT $KUBELET_HEALTHZ_PORT $KCM_PORT $SCHED_PORT $PROXY_HEALTHZ_PORT $PROXY_METRICS_PORT"
POD_CIDR=10.244.0.0/16 NODE_POD_CIDR=10.244.0.0/24 SVC_CIDR=10.96.0.0/16 DNS_IP=10.96.0.10
HOST_PATHS="/run/containerd /var/lib/kubelet /var/log/containers /var/log/pods /run/istio-cni /run/ztunnel"
# The CNI plugins containerd runs: Debian's, linked into a directory of the
# cluster's own, where istio-cni installs its plugin (not into /usr/lib/cni).
CNI_PLUGINS="bridge host-local loopback portmap"
# Where containerd keeps the pods' network namespaces (/var/run/netns).
NETNS_DIR=/run/netns
COMPONENTS="etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy"
# kubelet and kube-proxy change these; `up` records them once, `down` restores them.
SYSCTLS="net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
  vm.overcommit_memory kernel.panic kernel.panic_on_oops net.ipv4.conf.all.route_localnet"
PAUSE_IMAGE=localhost/bookinfo-bench/pause:3.10
COREDNS_IMAGE=localhost/bookinfo-bench/coredns:v1.11.3
export KUBECONFIG=$ETC/admin.kubeconfig
CTR=("$BIN/ctr" --address "$RUN/containerd/containerd.sock" -n k8s.io)

T0=$(date +%s.%N)
say() { printf '==> cluster [%5.1fs]: %s\n' "$(echo "$(date +%s.%N) - $T0" | bc)" "$*" >&2; }
die() { printf 'cluster: %s\n' "$*" >&2; exit 1; }
pid_of() { cat "$RUN/$1.pid" 2>/dev/null; }
alive() { local p; p=$(pid_of "$1") && [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }
api_ready() { kubectl get --raw /readyz >/dev/null 2>&1; }
# wait_for WHAT SECONDS CMD...: CMD until it succeeds; the component's log tail when it does not.
wait_for() {
  local what=$1 secs=$2 i; shift 2
  for ((i = 0; i < secs * 5; i++)); do
    "$@" >/dev/null 2>&1 && { say "$what ready"; return 0; }
    sleep 0.2
  done
  echo "cluster: $what not ready after ${secs}s" >&2
  [ -f "$LOG/${what%% *}.log" ] && { echo "--- last lines of $LOG/${what%% *}.log" >&2; tail -20 "$LOG/${what%% *}.log" >&2; }
  return 1
}
# write FILE < content: only when it changed (kube-proxy exits when its config file is rewritten).
write() { cat >"$1.new"; if cmp -s "$1.new" "$1"; then rm -f "$1.new"; else mv "$1.new" "$1"; fi; }

host_ip() {
  local ip=${CLUSTER_HOST_IP:-}
  [ -n "$ip" ] || ip=$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')
  [ -n "$ip" ] || ip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub("/.*", "", $4); print $4; exit}')
  [ -n "$ip" ] || die "no non-loopback IPv4 address for the node: set CLUSTER_HOST_IP"
  echo "$ip"
}

# --- what the machine must have ----------------------------------------------
preflight() {
  local missing=() b
  [ "$(id -u)" = 0 ] || missing+=("root: kubelet, containerd and kube-proxy need it (run as root, e.g. in a VM)")
  grep -qw overlay /proc/filesystems || modprobe overlay 2>/dev/null || missing+=("overlayfs: containerd's snapshotter needs it (modprobe overlay)")
  command -v iptables >/dev/null || missing+=("iptables: kube-proxy's mode (apt-get install iptables)")
  command -v runc >/dev/null || missing+=("runc (apt-get install runc)")
  [ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] ||
    missing+=("the CNI plugins in /usr/lib/cni (apt-get install containernetworking-plugins)")
  command -v catatonit >/dev/null || missing+=("catatonit, the pause process (apt-get install catatonit)")
  command -v podman >/dev/null || missing+=("podman, to build the images (make container-tools)")
  [ -d /sys/fs/cgroup ] || missing+=("a cgroup filesystem at /sys/fs/cgroup")
  for b in kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy etcd containerd ctr containerd-shim-runc-v2 coredns; do
    [ -x "$BIN/$b" ] || missing+=("$BIN/$b (make cluster-tools builds it)")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    printf 'cluster: this machine cannot run the cluster yet; missing:\n' >&2
    printf '  - %s\n' "${missing[@]}" >&2
    exit 1
  fi
}

# --- certificates and kubeconfigs (one CA, made once) --------------------------
pki() {
  local ip=$1
  mkdir -p "$PKI" "$ETC"
  [ -f "$PKI/ca.crt" ] || openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/ca.key" -out "$PKI/ca.crt" \
    -days 3650 -subj "/CN=bookinfo-bench-cluster-ca" 2>/dev/null
  [ -f "$PKI/sa.key" ] || { openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null &&
    openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null; }
  # The serving certificates name the node IP: made again when it changes.
  if [ "$(cat "$PKI/host-ip" 2>/dev/null)" != "$ip" ]; then rm -f "$PKI/apiserver.crt" "$PKI/kubelet.crt"; fi
  cert apiserver "/CN=kube-apiserver" serverAuth \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost,IP:127.0.0.1,IP:10.96.0.1,IP:$ip"
  cert kubelet "/CN=$NODE" serverAuth "DNS:$NODE,DNS:localhost,IP:127.0.0.1,IP:$ip"
  echo "$ip" >"$PKI/host-ip"
  cert admin "/O=system:masters/CN=bookinfo-bench-admin" clientAuth
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  cert controller-manager "/CN=system:kube-controller-manager" clientAuth
  cert scheduler "/CN=system:kube-scheduler" clientAuth
  cert kube-proxy "/CN=system:kube-proxy" clientAuth
  cert kubelet-client "/O=system:nodes/CN=system:node:$NODE" clientAuth
  local n
  for n in admin controller-manager scheduler kube-proxy kubelet-client; do
    write "$ETC/$n.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: bookinfo-bench
  cluster: {certificate-authority: $PKI/ca.crt, server: "https://127.0.0.1:$API_PORT"}
users:
- name: $n
  user: {client-certificate: $PKI/$n.crt, client-key: $PKI/$n.key}
contexts:
- name: bookinfo-bench
  context: {cluster: bookinfo-bench, user: $n, namespace: default}
current-context: bookinfo-bench
EOF
  done
}
# cert NAME SUBJECT EKU [SANS]
cert() {
  local n=$1 subj=$2 eku=$3 san=${4:-}
  [ -f "$PKI/$n.crt" ] && return 0
  openssl req -newkey rsa:2048 -nodes -keyout "$PKI/$n.key" -out "$PKI/$n.csr" -subj "$subj" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$eku"
    [ -z "$san" ] || echo "subjectAltName=$san"
  } >"$PKI/$n.ext"
  openssl x509 -req -in "$PKI/$n.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
    -out "$PKI/$n.crt" -days 3650 -extfile "$PKI/$n.ext" 2>/dev/null
  rm -f "$PKI/$n.csr" "$PKI/$n.ext"
}

# start NAME CMD...: in the background, its pid in $RUN/NAME.pid, output in $LOG/NAME.log.
start() {
  local n=$1; shift
  if alive "$n"; then return; fi
  # Only stdin, stdout and stderr: a daemon that inherited the caller's other
  # descriptors (a lock, a pipe) would hold them for as long as it runs.
  (
    for fd in /proc/"$BASHPID"/fd/*; do
      fd=${fd##*/}
      if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
    done
    exec nohup "$@" >>"$LOG/$n.log" 2>&1 </dev/null
  ) &
  echo $! >"$RUN/$n.pid"
  say "$n started (pid $!)"
}

configs() {
  local ip=$1
  mkdir -p "$ETC/cni" "$VAR/cni" "$VAR/pod-logs"
  mkdir -p "$VAR/cni-bin"
  for p in $CNI_PLUGINS; do ln -sfn "/usr/lib/cni/$p" "$VAR/cni-bin/$p"; done
  write "$ETC/cni/10-$NET.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$NET",
  "plugins": [
    {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$NODE_POD_CIDR"}]],
              "routes": [{"dst": "0.0.0.0/0"}], "dataDir": "$VAR/cni"}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
EOF
  write "$ETC/containerd.toml" <<EOF
version = 2
root = "$VAR/containerd"
state = "$RUN/containerd"
[grpc]
  address = "$RUN/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # Lowering oom_score_adj needs CAP_SYS_RESOURCE, which a root without it
  # lacks: runc then fails every sandbox ("can't get final child's PID from
  # pipe"). This clamps the scores kubelet asks for to containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$VAR/cni-bin"
    conf_dir = "$ETC/cni"
EOF
  write "$ETC/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization: {mode: Webhook}
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
address: $ip
port: $KUBELET_PORT
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
readOnlyPort: 0
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://$RUN/containerd/containerd.sock
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
podCIDR: $NODE_POD_CIDR
podLogsDir: $VAR/pod-logs
resolvConf: /etc/resolv.conf
serializeImagePulls: false
# The imported images cannot be pulled again: never collect them.
imageGCHighThresholdPercent: 100
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
volumePluginDir: $VAR/kubelet-plugins
EOF
  write "$ETC/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $ETC/kube-proxy.kubeconfig}
mode: iptables
clusterCIDR: $POD_CIDR
hostnameOverride: $NODE
bindAddress: 0.0.0.0
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
# 0: leave the host's conntrack sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
}

# --- images --------------------------------------------------------------------
podman_cmd() { read -r -a PODMAN <<<"$(bash scripts/images.sh --engine)"; [ "${PODMAN[0]}" = podman ] || die "the cluster imports images from podman, the engine here is ${PODMAN[0]}"; }

# scratch_image NAME FILE PATH [USER [ARG]]: a FROM-scratch image of one static
# binary at PATH, its entrypoint (with ARG); built again when the binary changes.
scratch_image() {
  local name=$1 file=$2 path=$3 user=${4:-} arg=${5:-} ctx sum
  sum=$(sha256sum <"$file" | cut -d' ' -f1)
  if "${PODMAN[@]}" image exists "$name" &&
    [ "$("${PODMAN[@]}" image inspect -f '{{index .Labels "binary-sha256"}}' "$name")" = "$sum" ]; then
    return
  fi
  ctx=$(mktemp -d)
  cp "$file" "$ctx/bin"
  {
    echo "FROM scratch"
    echo "COPY bin $path"
    echo "LABEL binary-sha256=$sum"
    [ -z "$user" ] || echo "USER $user"
    echo "ENTRYPOINT [\"$path\"]"
    [ -z "$arg" ] || echo "CMD [\"$arg\"]"
  } >"$ctx/Containerfile"
  "${PODMAN[@]}" build -q -t "$name" "$ctx" >/dev/null || { rm -rf "$ctx"; die "podman build of $name failed"; }
  rm -rf "$ctx"
  say "built $name"
}

# The pause container of every pod: catatonit in pause mode (registry.k8s.io's
# image cannot be pulled here).
pause_image() { scratch_image "$PAUSE_IMAGE" "$(command -v catatonit)" /pause 65535:65535 -P; }

# The stock fortio image cannot be pulled here: a stand-in built from fortio's
# own server packages (fortio.org/fortio/ui at the version in go.mod), tagged
# with the manifest's image name.
fortio_image() {
  local img version out=$TOOLS/bin/fortio-standin
  img=$(sed -n 's/^[[:space:]]*image:[[:space:]]*\(fortio\/fortio:[^[:space:]]*\).*/\1/p' overlays/base/fortio.yaml | head -1)
  [ -n "$img" ] || die "no fortio/fortio image in overlays/base/fortio.yaml"
  version=$(go list -m -f '{{.Version}}' fortio.org/fortio)
  [ "v${img#*:}" = "$version" ] || die "overlays/base/fortio.yaml runs $img but go.mod has fortio.org/fortio $version"
  CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out" ./tests/cluster/fortio
  scratch_image "docker.io/$img" "$out" /usr/bin/fortio
  echo "docker.io/$img"
}

images() {
  podman_cmd
  local list=() img
  pause_image
  scratch_image "$COREDNS_IMAGE" "$BIN/coredns" /coredns
  list+=("$PAUSE_IMAGE" "$COREDNS_IMAGE")
  say "building the app images (scripts/images.sh; cached layers make this quick)"
  bash scripts/images.sh >"$LOG/images.log" 2>&1 || { tail -30 "$LOG/images.log" >&2; die "scripts/images.sh failed (log: $LOG/images.log)"; }
  while read -r img; do list+=("$img"); done < <(bash scripts/images.sh --list)
  list+=("$(fortio_image)")
  say "the load client is a stand-in for the stock fortio image, built from fortio's own server packages (no registry serves the image here)"
  mkdir -p "$VAR/imported"
  for img in "${list[@]}"; do import_image "$img"; done
}

# ctr_has NAME: containerd has an image of that name (grep reads all of ctr's
# output: with -q it would stop early and fail the pipe).
ctr_has() { "${CTR[@]}" images ls -q | grep -x "$1" >/dev/null; }

# import_image NAME: podman's image into containerd's k8s.io namespace, under
# the same name, when containerd does not have this image ID yet.
import_image() {
  local img=$1 id mark tar
  id=$("${PODMAN[@]}" image inspect -f '{{.Id}}' "$img")
  mark=$VAR/imported/$(echo "$img" | tr '/:' '__')
  if [ "$(cat "$mark" 2>/dev/null)" = "$id" ] && ctr_has "$img"; then return; fi
  tar=$VAR/import.tar
  "${PODMAN[@]}" save -q --format docker-archive -o "$tar" "$img"
  "${CTR[@]}" images import --no-unpack=false "$tar" >/dev/null || { rm -f "$tar"; die "ctr import of $img failed"; }
  rm -f "$tar"
  ctr_has "$img" || die "ctr import of $img did not create $img"
  echo "$id" >"$mark"
  IMPORTED=$((IMPORTED + 1))
  say "imported $img"
}
IMPORTED=0 # images import_image brought in (a new build under the same tag)

# --- up --------------------------------------------------------------------------
all_alive() { local c; for c in $COMPONENTS; do alive "$c" || return 1; done; }
any_trace() {
  local c
  for c in $COMPONENTS; do [ -f "$RUN/$c.pid" ] && return 0; done
  ip link show "$BRIDGE" >/dev/null 2>&1 && return 0
  grep -q " $C/" /proc/mounts && return 0
  return 1
}

up() {
  local with_images=1 with_mesh='' ip a
  for a in "$@"; do
    case $a in
      --no-images) with_images='' ;;
      --mesh) with_mesh=1 ;;
      *) die "up: unknown option $a (--no-images, --mesh)" ;;
    esac
  done
  preflight
  if all_alive && api_ready; then
    say "already up (kubeconfig $KUBECONFIG)"
  else
    if any_trace; then
      say "found a half-up cluster (some components dead or leftovers on the host): cleaning it first"
      down
      T0=$(date +%s.%N)
    fi
    ip=$(host_ip)
    mkdir -p "$RUN" "$VAR" "$ETC" "$LOG"
    pki "$ip"
    configs "$ip"
    [ -f "$C/sysctl.orig" ] || for k in $SYSCTLS; do echo "$k $(sysctl -n "$k" 2>/dev/null)"; done >"$C/sysctl.orig"
    # Paths the components make outside the cluster's directory (the shims'
    # sockets, kubelet's device-plugin socket, its log links): removed by
    # `down` when they did not exist before.
    [ -f "$C/made-paths" ] || for p in $HOST_PATHS; do [ -e "$p" ] || echo "$p"; done >"$C/made-paths"
    netns_shared
    modprobe br_netfilter 2>/dev/null || true
    sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 net.bridge.bridge-nf-call-ip6tables=1 ||
      die "cannot set net.ipv4.ip_forward / net.bridge.bridge-nf-call-iptables (is br_netfilter loaded?)"
    start etcd "$BIN/etcd" --name "$NODE" --data-dir "$VAR/etcd" \
      --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
      --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
      --initial-cluster "$NODE=http://127.0.0.1:$ETCD_PEER_PORT" --quota-backend-bytes 2147483648
    start containerd "$BIN/containerd" --config "$ETC/containerd.toml"
    wait_for etcd 30 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"
    start kube-apiserver "$BIN/kube-apiserver" --etcd-servers="http://127.0.0.1:$ETCD_PORT" \
      --bind-address=0.0.0.0 --secure-port="$API_PORT" --advertise-address="$ip" \
      --service-cluster-ip-range="$SVC_CIDR" --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
      --client-ca-file="$PKI/ca.crt" --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
      --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
      --kubelet-certificate-authority="$PKI/ca.crt" --kubelet-preferred-address-types=InternalIP,Hostname \
      --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
      --service-account-issuer=https://kubernetes.default.svc.cluster.local --profiling=false
    wait_for kube-apiserver 90 api_ready
    start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig="$ETC/controller-manager.kubeconfig" \
      --authentication-kubeconfig="$ETC/controller-manager.kubeconfig" --authorization-kubeconfig="$ETC/controller-manager.kubeconfig" \
      --bind-address=127.0.0.1 --secure-port="$KCM_PORT" --leader-elect=false --flex-volume-plugin-dir="$VAR/kcm-flexvolume" \
      --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" --use-service-account-credentials=true \
      --cluster-signing-cert-file="$PKI/ca.crt" --cluster-signing-key-file="$PKI/ca.key" \
      --allocate-node-cidrs=true --cluster-cidr="$POD_CIDR" --node-cidr-mask-size=24 --service-cluster-ip-range="$SVC_CIDR"
    start kube-scheduler "$BIN/kube-scheduler" --kubeconfig="$ETC/scheduler.kubeconfig" \
      --authentication-kubeconfig="$ETC/scheduler.kubeconfig" --authorization-kubeconfig="$ETC/scheduler.kubeconfig" \
      --bind-address=127.0.0.1 --secure-port="$SCHED_PORT" --leader-elect=false
    wait_for containerd 30 "${CTR[@]}" version
    podman_cmd
    pause_image
    mkdir -p "$VAR/imported"
    import_image "$PAUSE_IMAGE"
    start kubelet "$BIN/kubelet" --config="$ETC/kubelet.yaml" --kubeconfig="$ETC/kubelet-client.kubeconfig" \
      --root-dir="$VAR/kubelet" --hostname-override="$NODE" --node-ip="$ip"
    start kube-proxy "$BIN/kube-proxy" --config="$ETC/kube-proxy.yaml"
    wait_for "kubelet (node $NODE Ready)" 120 kubectl wait --for=condition=Ready "node/$NODE" --timeout=1s
  fi
  if [ -n "$with_images" ]; then images; fi
  dns
  if [ -n "$with_mesh" ]; then mesh_up; fi
  say "up: export KUBECONFIG=$KUBECONFIG"
}

# istio-cni mounts the host's network namespaces with HostToContainer
# propagation, which containerd allows only from a shared (or slave) mount:
# /run/netns is made one, as `ip netns add` does, when nothing made it one
# before; `down` undoes it.
netns_shared() {
  [ "$(findmnt -n -o PROPAGATION "$NETNS_DIR" 2>/dev/null)" = shared ] && return 0
  [ -d "$NETNS_DIR" ] || { mkdir -p "$NETNS_DIR" && echo "$NETNS_DIR" >>"$C/made-paths"; }
  if ! mount --rbind "$NETNS_DIR" "$NETNS_DIR" || ! mount --make-rshared "$NETNS_DIR"; then
    die "cannot make $NETNS_DIR a shared mount (istio-cni needs it)"
  fi
  touch "$C/made-netns-mount"
}

# --- the mesh (up --mesh) ----------------------------------------------------------
ISTIO_NS=istio-system
MESH=$(bash scripts/k8s-tools.sh --print-mesh-dir)
ISTIOCTL=$MESH/bin/istioctl

# mesh_up: build what is missing (cached), make and import the images, install.
mesh_up() {
  local img tag
  say "the mesh: Istio from source (scripts/k8s-tools.sh --mesh; cold: 15-30 min on 2 cores, then cached)"
  bash scripts/k8s-tools.sh --mesh >"$LOG/mesh-tools.log" 2>&1 ||
    { tail -30 "$LOG/mesh-tools.log" >&2; die "scripts/k8s-tools.sh --mesh failed (log: $LOG/mesh-tools.log)"; }
  sed 's/^/  /' "$MESH/BUILD-INFO" >&2
  say "the Istio images (scripts/images.sh --istio)"
  bash scripts/images.sh --istio >"$LOG/istio-images.log" 2>&1 ||
    { tail -30 "$LOG/istio-images.log" >&2; die "scripts/images.sh --istio failed (log: $LOG/istio-images.log)"; }
  podman_cmd
  mkdir -p "$VAR/imported"
  local before=$IMPORTED
  for img in $(bash scripts/images.sh --istio --list); do import_image "$img"; done
  tag=${img##*:} # every image carries the version the binaries report
  # Settings beyond the two files, for this cluster: the images it has (no
  # pull), its CNI directories, and istio-cni in the host's network
  # namespace (hostNetwork) rather than entering it through /proc/1/ns/net,
  # which root cannot open where PID 1 holds a capability root lacks (a VM
  # whose root has no CAP_SYS_RESOURCE).
  # A mesh removed by a `down` whose controllers stopped too soon may still
  # be going.
  if [ "$(kubectl get namespace "$ISTIO_NS" -o jsonpath='{.status.phase}' 2>/dev/null)" = Terminating ]; then
    kubectl wait --for=delete "namespace/$ISTIO_NS" --timeout=180s >/dev/null 2>&1 || true
  fi
  # The Gateway API's standard CRDs, as the Istio docs install them first
  # (their Bookinfo gateway, waypoints): from the Go module k8s-tools.sh took
  # them from.
  [ -d "$TOOLS/crds/gateway-api" ] || die "no Gateway API CRDs in $TOOLS/crds/gateway-api (make tools fetches them)"
  kubectl apply --server-side -f "$TOOLS/crds/gateway-api" >/dev/null || die "kubectl apply of the Gateway API CRDs failed"
  say "istioctl install: ambient profile, hub localhost/bookinfo-bench/istio, tag $tag"
  "$ISTIOCTL" install -y -f scripts/cluster/istio/ambient.yaml -f scripts/cluster/istio/upstream-envoy.yaml \
    --set hub=localhost/bookinfo-bench/istio --set tag="$tag" --set values.global.variant="" \
    --set values.global.imagePullPolicy=Never \
    --set values.cni.cniBinDir="$VAR/cni-bin" --set values.cni.cniConfDir="$ETC/cni" --set values.cni.cniNetnsDir="$NETNS_DIR" \
    --set unvalidatedValues.cni.ambient.shareHostNetworkNamespace=true \
    >"$LOG/istioctl-install.log" 2>&1 ||
    { tail -30 "$LOG/istioctl-install.log" >&2; mesh_status >&2; die "istioctl install failed (log: $LOG/istioctl-install.log)"; }
  local w
  for w in deploy/istiod ds/istio-cni-node ds/ztunnel; do
    if ! kubectl -n "$ISTIO_NS" rollout status "$w" --timeout=300s >/dev/null; then
      mesh_status >&2
      die "Istio's $w did not become ready (kubectl -n $ISTIO_NS get pods; kubectl -n $ISTIO_NS logs $w)"
    fi
  done
  if [ "$IMPORTED" != "$before" ] && [ -n "$(kubectl -n "$ISTIO_NS" get pods -o name 2>/dev/null)" ]; then
    # A rebuild under the same tag: the running pods still have the old images.
    kubectl -n "$ISTIO_NS" rollout restart deploy/istiod ds/istio-cni-node ds/ztunnel >/dev/null
    for w in deploy/istiod ds/istio-cni-node ds/ztunnel; do
      kubectl -n "$ISTIO_NS" rollout status "$w" --timeout=300s >/dev/null || { mesh_status >&2; die "$w did not restart on its new image"; }
    done
    say "Istio restarted on the images just built"
  fi
  say "Istio ready: $("$ISTIOCTL" version --short 2>/dev/null | tr '\n' ' ')"
}

mesh_status() {
  kubectl -n "$ISTIO_NS" get pods -o wide 2>&1 | sed 's/^/  /'
  local p
  for p in $(kubectl -n "$ISTIO_NS" get pods -o name 2>/dev/null); do
    echo "--- $p (last lines)"; kubectl -n "$ISTIO_NS" logs --all-containers --tail=15 "$p" 2>&1 | sed 's/^/  /'
  done
}

# mesh_down: before the pods stop, delete istio-cni's DaemonSet first: a node
# agent that sees its DaemonSet go removes its host rules on the way out (on
# a plain restart it keeps them, for the pods it still serves). Then the rest
# of Istio (istioctl uninstall --purge): the cluster's state outlives `down`,
# and the next `up` without --mesh must come up without a mesh.
mesh_down() {
  kubectl get namespace "$ISTIO_NS" >/dev/null 2>&1 || return 0
  kubectl -n "$ISTIO_NS" delete daemonset istio-cni-node --ignore-not-found --wait=true --timeout=60s >/dev/null 2>&1 || true
  kubectl -n "$ISTIO_NS" wait --for=delete pod -l k8s-app=istio-cni-node --timeout=60s >/dev/null 2>&1 || true
  if [ -x "$ISTIOCTL" ]; then
    "$ISTIOCTL" uninstall --purge -y >"$LOG/istioctl-uninstall.log" 2>&1 || true
  fi
  kubectl delete namespace "$ISTIO_NS" --ignore-not-found --wait=true --timeout=120s >/dev/null 2>&1 || true
  if [ -d "$TOOLS/crds/gateway-api" ]; then
    kubectl delete --ignore-not-found -f "$TOOLS/crds/gateway-api" >/dev/null 2>&1 || true
  fi
  say "Istio removed (istio-cni first, then istioctl uninstall --purge, the Gateway API CRDs)"
}

dns() {
  if ! ctr_has "$COREDNS_IMAGE"; then
    podman_cmd
    scratch_image "$COREDNS_IMAGE" "$BIN/coredns" /coredns
    import_image "$COREDNS_IMAGE"
  fi
  sed -e "s#@COREDNS_IMAGE@#$COREDNS_IMAGE#" -e "s#@DNS_IP@#$DNS_IP#" scripts/cluster/coredns.yaml |
    kubectl apply -f - >/dev/null
  kubectl -n kube-system rollout status deploy/coredns --timeout=120s >/dev/null || die "CoreDNS did not become ready (kubectl -n kube-system describe pod -l k8s-app=kube-dns)"
  say "CoreDNS ready ($DNS_IP)"
}

# --- down ------------------------------------------------------------------------
stop() {
  local n=$1 secs=${2:-15} pid i
  pid=$(pid_of "$n") || return 0
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for ((i = 0; i < secs * 5; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; sleep 0.5; fi
    say "$n stopped (pid $pid)"
  fi
  rm -f "$RUN/$n.pid"
}

# Our shims: their command line names our containerd socket.
shim_pids() {
  local p
  for p in /proc/[0-9]*; do
    tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep "containerd-shim.*-address $RUN/containerd/containerd.sock" >/dev/null && echo "${p#/proc/}"
  done
  return 0
}

down() {
  local purge='' i t m ns
  [ "${1:-}" = --purge ] && purge=1
  # The mesh first, while the controllers still run (its namespace's
  # deletion needs them).
  if alive kubelet && alive kube-apiserver && alive containerd; then mesh_down; fi
  stop kube-controller-manager
  stop kube-scheduler
  # kubelet stops the pods: containers, then the sandboxes with CNI DEL (which
  # removes their veth, IP and iptables rules).
  if alive kubelet && alive kube-apiserver && alive containerd; then
    kubectl delete pods --all-namespaces --all --grace-period=2 --wait=false >/dev/null 2>&1 || true
    for ((i = 0; i < 150; i++)); do [ -z "$("${CTR[@]}" tasks ls -q 2>/dev/null)" ] && break; sleep 0.2; done
    say "pods stopped ($("${CTR[@]}" tasks ls -q 2>/dev/null | wc -l) containers left)"
  fi
  stop kubelet
  stop kube-proxy
  if [ -f "$ETC/kube-proxy.yaml" ]; then "$BIN/kube-proxy" --cleanup --config="$ETC/kube-proxy.yaml" >/dev/null 2>&1 || true; fi
  stop kube-apiserver
  stop etcd
  if alive containerd; then
    for t in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true; done
    sleep 0.5
    for t in $("${CTR[@]}" tasks ls -q 2>/dev/null); do "${CTR[@]}" tasks delete -f "$t" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  for t in $(shim_pids); do kill -KILL "$t" 2>/dev/null || true; done
  # Mounts (container rootfs, shm, volumes) under the cluster's directory, deepest first.
  while read -r m; do umount -l "$m" 2>/dev/null || true; done < <(awk -v d="$C/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r)
  for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do
    if [ -z "$(ip netns pids "$ns" 2>/dev/null)" ]; then ip netns delete "$ns" 2>/dev/null || true; fi
  done
  if [ -f "$C/made-netns-mount" ] && ! ip netns list 2>/dev/null | grep -q '^cni-'; then
    umount -l "$NETNS_DIR" 2>/dev/null || true
    rm -f "$C/made-netns-mount"
  fi
  ip link delete "$BRIDGE" 2>/dev/null || true
  iptables_clean
  for m in /sys/fs/cgroup/*/kubepods; do [ -d "$m" ] && find "$m" -depth -type d -exec rmdir {} \; 2>/dev/null; done
  find /var/log/containers -maxdepth 1 -type l -lname "$VAR/pod-logs/*" -delete 2>/dev/null || true
  if [ -f "$C/made-paths" ] && [ -z "$(shim_pids)" ]; then
    while read -r p; do rm -rf "$p"; done <"$C/made-paths"
    rm -f "$C/made-paths"
  fi
  if [ -f "$C/sysctl.orig" ]; then
    while read -r k v; do [ -z "$v" ] || sysctl -qw "$k=$v" 2>/dev/null || true; done <"$C/sysctl.orig"
    rm -f "$C/sysctl.orig"
    say "sysctls restored"
  fi
  if [ -n "$purge" ]; then rm -rf "$VAR" "$RUN"; say "state removed"; fi
  say "down"
}

# KUBE-* chains (kubelet, kube-proxy), ISTIO_* chains (istio-cni's host rules,
# should it not have removed them) and the CNI chains and rules tagged with
# our network's name, in every table, through both iptables back ends;
# anything else (podman's NETAVARK-*, a host firewall) stays.
IPTABLES="iptables ip6tables iptables-legacy ip6tables-legacy"
iptables_clean() {
  local ipt table chains c rule
  for ipt in $IPTABLES; do
    command -v "$ipt-save" >/dev/null || continue
    for table in filter nat mangle raw; do
      chains=$("$ipt-save" -t "$table" 2>/dev/null | awk -v net="\"$NET\"" '
        /^:(KUBE-|ISTIO_)/ { sub(/^:/, "", $1); print $1 }
        /^-A CNI-/ && index($0, net) { print $2 }' | sort -u)
      # Rules elsewhere that jump to those chains or carry our tag.
      "$ipt-save" -t "$table" 2>/dev/null | awk -v chains=" ${chains//$'\n'/ } " -v net="\"$NET\"" '
        /^-A / {
          own = index(chains, " " $2 " ")
          for (i = 1; i < NF; i++) if ($i == "-j" && index(chains, " " $(i + 1) " ")) jump = 1
          if (!own && (jump || index($0, net))) print
          jump = 0
        }' | sed 's/^-A /-D /' | while read -r rule; do
        eval "$ipt -w -t $table $rule" 2>/dev/null || true
      done
      for c in $chains; do "$ipt" -w -t "$table" -F "$c" 2>/dev/null || true; done
      for c in $chains; do "$ipt" -w -t "$table" -X "$c" 2>/dev/null || true; done
    done
  done
}

# --- status, host-state ------------------------------------------------------------
status() {
  local c up=0
  for c in $COMPONENTS; do
    if alive "$c"; then printf '  %-24s running (pid %s)\n' "$c" "$(pid_of "$c")"; up=$((up + 1))
    else printf '  %-24s stopped\n' "$c"; fi
  done
  if api_ready; then
    echo "  API server ready: https://127.0.0.1:$API_PORT (export KUBECONFIG=$KUBECONFIG)"
    kubectl get nodes --no-headers 2>/dev/null | sed 's/^/  node /'
  fi
  [ "$up" = "$(wc -w <<<"$COMPONENTS")" ]
}

# One line per thing the cluster leaves on the host while it runs; empty when clean.
host_state() {
  local p ipt table ns
  for p in $PORTS; do
    [ -n "$(ss -Htln "sport = :$p" 2>/dev/null)" ] && echo "listening port $p"
  done
  for c in $COMPONENTS; do alive "$c" && echo "process $c (pid $(pid_of "$c"))"; done
  for p in $(shim_pids); do echo "process containerd-shim (pid $p)"; done
  for ipt in $IPTABLES; do
    command -v "$ipt-save" >/dev/null || continue
    for table in filter nat mangle raw; do
      "$ipt-save" -t "$table" 2>/dev/null | awk -v t="$ipt -t $table" -v net="\"$NET\"" '
        /^:(KUBE-|ISTIO_)/ { print t ": chain " substr($1, 2) }
        /^-A / && index($0, net) { print t ": rule " $0 }'
    done
  done
  awk -v d="$C/" 'index($2, d) == 1 {print "mount " $2}' /proc/mounts
  { findmnt -n -o TARGET,PROPAGATION "$NETNS_DIR" 2>/dev/null || true; } | sed 's/^/mount /'

  ip link show "$BRIDGE" >/dev/null 2>&1 && echo "bridge $BRIDGE"
  for ns in $(ip netns list 2>/dev/null | awk '/^cni-/ {print $1}'); do echo "network namespace $ns"; done
  for p in /sys/fs/cgroup/*/kubepods; do [ -d "$p" ] && echo "cgroup $p"; done
  for p in $HOST_PATHS; do [ -e "$p" ] && echo "path $p"; done
  for k in $SYSCTLS; do echo "sysctl $k=$(sysctl -n "$k" 2>/dev/null)"; done
  return 0
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  status) status ;;
  env) echo "export KUBECONFIG=$KUBECONFIG" ;;
  host-state) host_state ;;
  -h | --help | help) sed -n '2,30s/^# \{0,1\}//p' "$0" ;;
  *) sed -n '10,20s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
