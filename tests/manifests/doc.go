// Package manifests tests the Kubernetes manifests under overlays/: every
// variant and every combination under overlays/tests/ is rendered with
// `kubectl kustomize`, checked against the naming contract and the hardening
// policy, applied (twice, the second time changing nothing) to a real
// kube-apiserver with etcd on loopback, run through the API server's Pod
// Security admission at level "restricted", and analyzed by `istioctl analyze`.
//
// The tools come from scripts/k8s-tools.sh (run by `make setup`), cached in
// $BOOKINFO_TOOLS_DIR or ~/.cache/bookinfo-bench/tools; a missing tool fails
// the tests that need it with a message saying so.
package manifests
