package manifests

import (
	"slices"
	"testing"
)

// The Kubernetes names of docs/contract.md: what routing rules and the
// Istio tutorials select on.
var contractApps = []string{"details", "ratings", "reviews", "productpage"}

var contractDeployments = map[string]struct {
	app, version string
	env          map[string]string // variables the version is selected by
}{
	"details-v1":     {"details", "v1", nil},
	"ratings-v1":     {"ratings", "v1", map[string]string{"SERVICE_VERSION": "v1"}},
	"reviews-v1":     {"reviews", "v1", map[string]string{"ENABLE_RATINGS": "false"}},
	"reviews-v2":     {"reviews", "v2", map[string]string{"ENABLE_RATINGS": "true", "STAR_COLOR": "black"}},
	"reviews-v3":     {"reviews", "v3", map[string]string{"ENABLE_RATINGS": "true", "STAR_COLOR": "red"}},
	"productpage-v1": {"productpage", "v1", nil},
}

func TestContractServices(t *testing.T) {
	r := render(t, baseTarget())
	for _, app := range contractApps {
		t.Run(app, func(t *testing.T) {
			o, ok := r.find("Service", app)
			if !ok {
				t.Fatalf("no Service %q", app)
			}
			var s service
			o.decode(t, &s)
			if s.Metadata.Labels["app"] != app || s.Metadata.Labels["service"] != app {
				t.Errorf("labels %v: want app=%s and service=%s", s.Metadata.Labels, app, app)
			}
			if len(s.Spec.Selector) != 1 || s.Spec.Selector["app"] != app {
				t.Errorf("selector %v: want exactly app=%s (every version behind one Service)", s.Spec.Selector, app)
			}
			if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 9080 || s.Spec.Ports[0].Name != "http" {
				t.Errorf("ports %+v: want one port 9080 named http", s.Spec.Ports)
			}
			sa, ok := r.find("ServiceAccount", "bookinfo-"+app)
			if !ok {
				t.Fatalf("no ServiceAccount bookinfo-%s", app)
			}
			if sa.Metadata.Labels["account"] != app {
				t.Errorf("ServiceAccount bookinfo-%s labels %v: want account=%s (upstream's label: kubectl apply -l account=%s)", app, sa.Metadata.Labels, app, app)
			}
		})
	}
}

func TestContractDeployments(t *testing.T) {
	r := render(t, baseTarget())
	deps := r.deployments(t)
	for _, name := range sortedKeys(contractDeployments) {
		want := contractDeployments[name]
		t.Run(name, func(t *testing.T) {
			d, ok := deps[name]
			if !ok {
				t.Fatalf("no Deployment %q", name)
			}
			pod := d.Spec.Template.Metadata.Labels
			if pod["app"] != want.app || pod["version"] != want.version {
				t.Errorf("pod labels %v: want app=%s version=%s", pod, want.app, want.version)
			}
			if !selects(d.Spec.Selector.MatchLabels, pod) {
				t.Errorf("selector %v does not select its own pods %v", d.Spec.Selector.MatchLabels, pod)
			}
			if sa := d.Spec.Template.Spec.ServiceAccountName; sa != "bookinfo-"+want.app {
				t.Errorf("serviceAccountName %q: want bookinfo-%s", sa, want.app)
			}
			c, ok := d.container(want.app)
			if !ok {
				t.Fatalf("no container named %q (patches select containers by name)", want.app)
			}
			if c.Image != publishedImage+want.app+":"+baseTag(t) {
				t.Errorf("image %q: want %s%s:%s (one image per app)", c.Image, publishedImage, want.app, baseTag(t))
			}
			if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9080 || c.Ports[0].Name != "http" {
				t.Errorf("ports %+v: want containerPort 9080 named http", c.Ports)
			}
			for k, v := range want.env {
				if got, _ := c.env(k); got != v {
					t.Errorf("%s=%q: want %q", k, got, v)
				}
			}
		})
	}
	for name := range deps {
		if _, ok := contractDeployments[name]; !ok && name != "fortio" {
			t.Errorf("Deployment %q is neither in the contract nor the load client", name)
		}
	}
}

// The load client the in-cluster engine drives: stock fortio, REST API on 8080,
// kept away from the details pods.
func TestFortioClient(t *testing.T) {
	r := render(t, baseTarget())
	d, ok := r.deployments(t)["fortio"]
	if !ok {
		t.Fatal("no Deployment fortio")
	}
	c, ok := d.container("fortio")
	if !ok {
		t.Fatal("no container fortio")
	}
	if c.Image != "fortio/fortio:1.75.3" {
		t.Errorf("image %q: want fortio/fortio:1.75.3", c.Image)
	}
	if len(c.Args) == 0 || c.Args[0] != "server" || !slices.Contains(c.Args, "-http-port") || c.Args[slices.Index(c.Args, "-http-port")+1] != "8080" {
		t.Errorf("args %q: want fortio server with -http-port 8080", c.Args)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/fortio/rest/status" {
		t.Errorf("readiness probe should ask the REST API bookload uses (/fortio/rest/status)")
	}
	aa := d.Spec.Template.Spec.Affinity
	found := false
	if aa != nil && aa.PodAntiAffinity != nil {
		for _, p := range aa.PodAntiAffinity.Preferred {
			if p.PodAffinityTerm.TopologyKey == "kubernetes.io/hostname" && p.PodAffinityTerm.LabelSelector.MatchLabels["app"] == "details" && p.Weight == 100 {
				found = true
			}
		}
		for _, p := range aa.PodAntiAffinity.Required {
			if p.TopologyKey == "kubernetes.io/hostname" && p.LabelSelector.MatchLabels["app"] == "details" {
				found = true
			}
		}
	}
	if !found {
		t.Error("no pod anti-affinity from app=details on kubernetes.io/hostname")
	}
	o, ok := r.find("Service", "fortio")
	if !ok {
		t.Fatal("no Service fortio")
	}
	var s service
	o.decode(t, &s)
	if len(s.Spec.Ports) != 1 || s.Spec.Ports[0].Port != 8080 || !selects(s.Spec.Selector, d.Spec.Template.Metadata.Labels) {
		t.Errorf("Service fortio %+v: want port 8080 selecting the fortio pods", s.Spec)
	}
}
