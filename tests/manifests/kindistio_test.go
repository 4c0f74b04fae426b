package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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

// The Istio settings of scripts/kind-istio.sh, rendered offline by the
// cached istioctl (`--istio-manifest`): the ambient profile with the small
// requests that let three variants share one 4-CPU node, and no autoscaler
// for istiod. A mistyped --set path fails here rather than on the runner.
func TestKindIstioSettings(t *testing.T) {
	istioctl := needTool(t, "istioctl")
	cmd := exec.Command("bash", filepath.Join(repoRoot, "scripts", "kind-istio.sh"), "--istio-manifest")
	cmd.Env = append(os.Environ(), "ISTIO_INSTALL_ARGS=", "PATH="+filepath.Dir(istioctl)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kind-istio.sh --istio-manifest: %v\n%s", err, stderr.String())
	}
	type requests struct{ CPU, Memory string }
	got := map[string]requests{}
	dec := yaml.NewDecoder(bytes.NewReader(out))
	for {
		var o struct {
			Kind     string `yaml:"kind"`
			Metadata struct {
				Name string `yaml:"name"`
			} `yaml:"metadata"`
			Data map[string]string `yaml:"data"`
			Spec struct {
				Template struct {
					Spec struct {
						Containers []struct {
							Resources struct {
								Requests struct {
									CPU    string `yaml:"cpu"`
									Memory string `yaml:"memory"`
								} `yaml:"requests"`
							} `yaml:"resources"`
						} `yaml:"containers"`
					} `yaml:"spec"`
				} `yaml:"template"`
			} `yaml:"spec"`
		}
		if err := dec.Decode(&o); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatalf("istioctl manifest generate output: %v", err)
		}
		switch {
		case o.Kind == "HorizontalPodAutoscaler":
			t.Errorf("an autoscaler %s: istiod should run one replica", o.Metadata.Name)
		case (o.Kind == "Deployment" || o.Kind == "DaemonSet") && len(o.Spec.Template.Spec.Containers) > 0:
			r := o.Spec.Template.Spec.Containers[0].Resources.Requests
			got[o.Kind+"/"+o.Metadata.Name] = requests{r.CPU, r.Memory}
		case o.Kind == "ConfigMap" && o.Metadata.Name == "istio-sidecar-injector":
			var v struct {
				Global struct {
					Proxy struct {
						Resources struct {
							Requests map[string]string `json:"requests"`
						} `json:"resources"`
					} `json:"proxy"`
				} `json:"global"`
			}
			if err := json.Unmarshal([]byte(o.Data["values"]), &v); err != nil {
				t.Fatalf("istio-sidecar-injector values: %v", err)
			}
			got["sidecar"] = requests{v.Global.Proxy.Resources.Requests["cpu"], v.Global.Proxy.Resources.Requests["memory"]}
		}
	}
	for name, want := range map[string]requests{
		"Deployment/istiod":        {"100m", "256Mi"},
		"DaemonSet/ztunnel":        {"50m", "128Mi"},
		"DaemonSet/istio-cni-node": {"100m", "100Mi"}, // Istio's default
		"sidecar":                  {"50m", "64Mi"},
	} {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: not in the manifest (ambient profile?)", name)
		} else if g != want {
			t.Errorf("%s requests %+v, want %+v", name, g, want)
		}
	}
}
