package manifests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/kind-istio.sh --gateway-cluster-ip against the test API server:
// Gateways of class istio get the Istio docs' ClusterIP annotation for kind
// (no LoadBalancer there); waypoints (class istio-waypoint) are left alone.
// The rest of the script needs Docker and kind, which do not run here.
func TestKindIstioGatewayClusterIP(t *testing.T) {
	c := cluster(t)
	if _, _, err := c.kubectl([]byte(`apiVersion: v1
kind: Namespace
metadata: {name: ki-gateways}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: bookinfo-gateway, namespace: ki-gateways}
spec:
  gatewayClassName: istio
  listeners: [{name: http, port: 80, protocol: HTTP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: waypoint, namespace: ki-gateways}
spec:
  gatewayClassName: istio-waypoint
  listeners: [{name: mesh, port: 15008, protocol: HBONE}]
`), "apply", "-f", "-"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // twice: re-running changes nothing and does not fail
		cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts", "kind-istio.sh"), "--gateway-cluster-ip")
		cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig, "KUBECACHEDIR="+filepath.Join(c.dir, "kube-cache"))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "gateway ki-gateways/bookinfo-gateway: networking.istio.io/service-type=ClusterIP") {
			t.Fatalf("kind-istio.sh --gateway-cluster-ip (exit %v):\n%s", err, out)
		}
	}
	for gw, want := range map[string]string{"bookinfo-gateway": "ClusterIP", "waypoint": ""} {
		got, _, err := c.kubectl(nil, "-n", "ki-gateways", "get", "gateways.gateway.networking.k8s.io", gw,
			"-o", `jsonpath={.metadata.annotations.networking\.istio\.io/service-type}`)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("gateway %s: service-type annotation %q, want %q", gw, got, want)
		}
	}
}
