package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// minKubernetes is the oldest Kubernetes the manifests support: the oldest
// release Istio 1.27 (native sidecars, so istio-proxy outlives the app's
// drain) supports. README.md and overlays/README.md state it.
const minKubernetes = "1.29"

// The CPU a 4-CPU node (kind on a laptop, the GitHub runner) leaves for the
// three variants: 4 CPUs, minus kind's control plane and CNI (about 0.95:
// kube-apiserver 250m, controller-manager 200m, etcd 100m, scheduler 100m,
// CoreDNS 2 x 100m, kindnet 100m) and Istio's ambient profile (0.8: istiod
// 500m, ztunnel 200m, istio-cni 100m).
const variantsCPUBudget = 4 - 0.95 - 0.8

// istioProxyCPU is Istio's default sidecar CPU request, when a pod does not
// say otherwise with sidecar.istio.io/proxyCPU.
const istioProxyCPU = 0.1

// TestVariantsFitFourCPUs: the three variants side by side, with the
// sidecars Istio injects into one of them, request no more CPU than a
// 4-CPU node has left after its control plane and Istio.
func TestVariantsFitFourCPUs(t *testing.T) {
	total := 0.0
	var parts []string
	for _, v := range variants(t) {
		cpu := 0.0
		for name, d := range render(t, v).deployments(t) {
			pod := d.Spec.Template
			var sum float64
			for _, c := range pod.Spec.Containers {
				q, err := quantity(c.Resources.Requests["cpu"])
				if err != nil {
					t.Fatalf("%s/%s: %v", v.name, name, err)
				}
				sum += q
			}
			if v.variant == "sidecar" {
				proxy := istioProxyCPU
				if a, ok := pod.Metadata.Annotations["sidecar.istio.io/proxyCPU"]; ok {
					q, err := quantity(a)
					if err != nil {
						t.Fatalf("%s/%s: sidecar.istio.io/proxyCPU: %v", v.name, name, err)
					}
					proxy = q
				}
				sum += proxy
			}
			cpu += sum // one replica each: the variants add no replicas
		}
		parts = append(parts, fmt.Sprintf("%s %.2f", v.name, cpu))
		total += cpu
	}
	t.Logf("CPU requests: %s; total %.2f of a %.2f budget", strings.Join(parts, ", "), total, variantsCPUBudget)
	if total > variantsCPUBudget+1e-9 {
		t.Errorf("the three variants request %.2f CPUs (%s): more than the %.2f a 4-CPU node leaves after kind and Istio ambient",
			total, strings.Join(parts, ", "), variantsCPUBudget)
	}
}

// TestNoCPULimitsByDefault: CFS throttling adds tail latency, so only the
// resources-dedicated component sets CPU limits, and there every container
// has limits equal to its requests (Guaranteed QoS).
func TestNoCPULimitsByDefault(t *testing.T) {
	for _, tg := range append([]target{baseTarget()}, allTargets(t)...) {
		dedicated := slices.ContainsFunc(readKustomization(t, filepath.Join(tg.dir, "kustomization.yaml")).Components,
			func(c string) bool { return filepath.Base(c) == "resources-dedicated" })
		for name, d := range render(t, tg).deployments(t) {
			for _, c := range d.Spec.Template.Spec.Containers {
				lim, req := c.Resources.Limits, c.Resources.Requests
				switch {
				case !dedicated && lim["cpu"] != "":
					t.Errorf("%s: %s/%s has a CPU limit %s without the resources-dedicated component", tg.name, name, c.Name, lim["cpu"])
				case dedicated && (lim["cpu"] == "" || lim["cpu"] != req["cpu"] || lim["memory"] != req["memory"]):
					t.Errorf("%s: %s/%s requests %v, limits %v: want limits = requests (Guaranteed)", tg.name, name, c.Name, req, lim)
				}
			}
			ann := d.Spec.Template.Metadata.Annotations
			if dedicated && (ann["sidecar.istio.io/proxyCPU"] == "" || ann["sidecar.istio.io/proxyCPU"] != ann["sidecar.istio.io/proxyCPULimit"]) {
				t.Errorf("%s: %s: sidecar CPU request %q, limit %q: want equal", tg.name, name, ann["sidecar.istio.io/proxyCPU"], ann["sidecar.istio.io/proxyCPULimit"])
			}
		}
	}
}

// publishedImage is where the release workflow pushes each app image.
const publishedImage = "ghcr.io/bookinfo-bench/bookinfo-bench/"

// TestPublishedImages: every variant pulls the four app images from the
// registry the release workflow pushes to, all with the base's one tag, so
// `kubectl apply -k overlays/<variant>` works on any cluster.
func TestPublishedImages(t *testing.T) {
	tag := baseTag(t)
	for _, tg := range append([]target{baseTarget()}, variants(t)...) {
		seen := map[string]bool{}
		for name, d := range render(t, tg).deployments(t) {
			for _, c := range d.Spec.Template.Spec.Containers {
				if c.Name == "fortio" {
					continue
				}
				want := publishedImage + c.Name + ":" + tag
				if c.Image != want {
					t.Errorf("%s: %s/%s image %q, want %q", tg.name, name, c.Name, c.Image, want)
				}
				seen[c.Name] = true
			}
		}
		if len(seen) != len(contractApps) {
			t.Errorf("%s: app images of %v, want the four", tg.name, sortedKeys(seen))
		}
	}
}

// TestMinimumKubernetesVersion: the version is stated where a user looks,
// and nothing rendered needs a newer one: only API groups served by it, and
// no field added after it (the preStop sleep action is checked per
// container in TestPolicy).
func TestMinimumKubernetesVersion(t *testing.T) {
	for _, doc := range []string{"README.md", "overlays/README.md"} {
		data, err := os.ReadFile(filepath.Join(repoRoot, doc))
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`Kubernetes (>= ?|)` + regexp.QuoteMeta(minKubernetes) + `\b`).Match(data) {
			t.Errorf("%s does not state the minimum version (Kubernetes %s)", doc, minKubernetes)
		}
	}
	// Group versions a 1.29 API server serves, plus the CRDs the variants need.
	served := []string{"v1", "apps/v1", "policy/v1", "networking.k8s.io/v1",
		"gateway.networking.k8s.io/v1", "networking.istio.io/v1", "security.istio.io/v1"}
	for _, tg := range allTargets(t) {
		for _, o := range render(t, tg).objects {
			if !slices.Contains(served, o.APIVersion) {
				t.Errorf("%s: %s uses %s, not known to be served by Kubernetes %s (or by the CRDs the variants need)", tg.name, o.id(), o.APIVersion, minKubernetes)
			}
		}
	}
}
