package manifests

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What makes each variant the mode it is named after: its Namespace's labels.
// A label mapped to "" must be absent.
var variantNamespaces = map[string]struct {
	namespace string
	labels    map[string]string
}{
	"no-mesh": {"bookinfo-no-mesh", map[string]string{"istio-injection": "disabled", "istio.io/dataplane-mode": "none"}},
	"sidecar": {"bookinfo-sidecar", map[string]string{"istio-injection": "enabled", "istio.io/dataplane-mode": ""}},
	"ambient": {"bookinfo-ambient", map[string]string{"istio.io/dataplane-mode": "ambient", "istio-injection": ""}},
}

func TestVariantNamespaces(t *testing.T) {
	seen := map[string]string{}
	for _, tg := range allTargets(t) {
		if tg.variant == docsOverlay {
			continue // no Namespace by design: TestIstioDocsReplacesUpstream
		}
		t.Run(tg.name, func(t *testing.T) {
			want, ok := variantNamespaces[tg.variant]
			if !ok {
				t.Fatalf("variant %q (of %s) has no expected namespace and labels in this test: add it to variantNamespaces", tg.variant, tg.name)
			}
			r := render(t, tg)
			nss := r.byKind("Namespace")
			if len(nss) != 1 {
				t.Fatalf("%d Namespaces: want exactly one, owned by the variant", len(nss))
			}
			ns := nss[0]
			if ns.Metadata.Name != want.namespace {
				t.Errorf("Namespace %q: want %q", ns.Metadata.Name, want.namespace)
			}
			for k, v := range want.labels {
				if got := ns.Metadata.Labels[k]; got != v {
					t.Errorf("Namespace label %s=%q: want %q", k, got, v)
				}
			}
			for _, o := range r.objects {
				if o.Kind != "Namespace" && o.Metadata.Namespace != ns.Metadata.Name {
					t.Errorf("%s is in namespace %q, not %q: a combination must set the variant's namespace again", o.id(), o.Metadata.Namespace, ns.Metadata.Name)
				}
			}
			if other, dup := seen[ns.Metadata.Name]; dup && !strings.HasPrefix(tg.name, "tests/") && !strings.HasPrefix(other, "tests/") {
				t.Errorf("variants %s and %s share namespace %s: they must run side by side", other, tg.name, ns.Metadata.Name)
			}
			seen[ns.Metadata.Name] = tg.name
			// Each variant deploys the whole base.
			base := render(t, baseTarget())
			for _, o := range base.objects {
				if _, ok := r.find(o.Kind, o.Metadata.Name); !ok {
					t.Errorf("%s of the base is missing", o.id())
				}
			}
		})
	}
}

// componentChecks says what each component must change, on the rendering of
// every combination that uses it. A component missing here is still rendered,
// applied and analyzed through its combinations.
var componentChecks = map[string]func(t *testing.T, r *rendering){
	// The agent replaces stock fortio in place: same Deployment, container,
	// Service and port, the published bookload image with the base's tag,
	// probes on the agent's own status, the data directory still mounted
	// (the root stays read-only), and the label mesh-compare.sh detects.
	"bookload-agent": func(t *testing.T, r *rendering) {
		d, ok := r.deployments(t)["fortio"]
		if !ok {
			t.Fatal("no Deployment fortio")
		}
		c, ok := d.container("fortio")
		if !ok {
			t.Fatal("no container fortio")
		}
		if want := publishedImage + "bookload:" + baseTag(t); c.Image != want {
			t.Errorf("image %q, want %q", c.Image, want)
		}
		if want := []string{"agent", "--listen", ":8080", "--data-dir", "/var/lib/fortio"}; !slices.Equal(c.Args, want) {
			t.Errorf("args %q, want %q", c.Args, want)
		}
		for name, p := range map[string]*probe{"startup": c.StartupProbe, "readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
			if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/bookload/v1/status" || p.HTTPGet.Port != "http" {
				t.Errorf("%s probe: want GET /bookload/v1/status on port http", name)
			}
		}
		if len(c.Ports) != 1 || c.Ports[0].Name != "http" || c.Ports[0].ContainerPort != 8080 {
			t.Errorf("ports %+v: want http 8080", c.Ports)
		}
		mounted := false
		for _, m := range c.VolumeMounts {
			mounted = mounted || m.MountPath == "/var/lib/fortio"
		}
		if !mounted || c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem {
			t.Errorf("the data directory must stay mounted on a read-only root (mounted %v)", mounted)
		}
		if got := d.Spec.Template.Metadata.Labels["app.kubernetes.io/name"]; got != "bookload" {
			t.Errorf("pod label app.kubernetes.io/name %q, want bookload (scripts/mesh-compare.sh detects the agent by it)", got)
		}
		if sel := d.Spec.Selector.MatchLabels; len(sel) != 2 || sel["app"] != "fortio" || sel["version"] != "v1" {
			t.Errorf("selector %v changed: applying over a stock fortio Deployment would fail", sel)
		}
		var svc service
		mustFind(t, r, "Service", "fortio").decode(t, &svc)
		if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 8080 || svc.Spec.Selector["app"] != "fortio" {
			t.Errorf("Service fortio %+v: want port 8080 selecting app=fortio", svc.Spec)
		}
	},
	"legacy-http": func(t *testing.T, r *rendering) {
		deps := r.deployments(t)
		want := map[string]map[string]string{
			"details-v1":     {"HTTP_NODELAY": "false"},
			"productpage-v1": {"HTTP_KEEPALIVE": "false", "UPSTREAM_KEEPALIVE": "false"},
		}
		for name, env := range want {
			c, ok := deps[name].container(strings.TrimSuffix(name, "-v1"))
			if !ok {
				t.Errorf("%s: container missing", name)
				continue
			}
			for k, v := range env {
				if got, _ := c.env(k); got != v {
					t.Errorf("%s: %s=%q, want %q", name, k, got, v)
				}
			}
			if got, _ := c.env("SHUTDOWN_TIMEOUT_SECONDS"); got != "10" {
				t.Errorf("%s: the patch replaced the env list instead of merging (SHUTDOWN_TIMEOUT_SECONDS=%q)", name, got)
			}
		}
	},
	// details-nagle is details-v1 with TCP_NODELAY off, beside it: the same
	// image and pod annotations (the sidecar variant's proxy resources), its
	// own Service, and Service details still selects details-v1 alone.
	"details-nagle": func(t *testing.T, r *rendering) {
		deps := r.deployments(t)
		v1, nagle := deps["details-v1"], deps["details-nagle"]
		c1, ok1 := v1.container("details")
		c, ok := nagle.container("details")
		if !ok1 || !ok {
			t.Fatalf("a details container is missing (details-v1 %v, details-nagle %v)", ok1, ok)
		}
		if got, _ := c.env("HTTP_NODELAY"); got != "false" {
			t.Errorf("details-nagle: HTTP_NODELAY=%q, want false", got)
		}
		if got, _ := c1.env("HTTP_NODELAY"); got == "false" {
			t.Error("details-v1 lost TCP_NODELAY")
		}
		if c.Image != c1.Image {
			t.Errorf("details-nagle image %q, details-v1 %q", c.Image, c1.Image)
		}
		if a, b := nagle.Spec.Template.Metadata.Annotations, v1.Spec.Template.Metadata.Annotations; !maps.Equal(a, b) {
			t.Errorf("details-nagle pod annotations %v, details-v1 %v", a, b)
		}
		for name, want := range map[string]string{"details": "details-v1", "details-nagle": "details-nagle"} {
			var svc service
			mustFind(t, r, "Service", name).decode(t, &svc)
			for dep, d := range deps {
				if got := selects(svc.Spec.Selector, d.Spec.Template.Metadata.Labels); got != (dep == want) {
					t.Errorf("Service %s selects %s: %v", name, dep, got)
				}
			}
		}
	},
	"waypoint": func(t *testing.T, r *rendering) {
		o, ok := r.find("Gateway", "waypoint")
		if !ok {
			t.Fatal("no Gateway waypoint")
		}
		var gw struct {
			Spec struct {
				GatewayClassName string `yaml:"gatewayClassName"`
				Listeners        []struct {
					Port     int    `yaml:"port"`
					Protocol string `yaml:"protocol"`
				} `yaml:"listeners"`
			} `yaml:"spec"`
		}
		o.decode(t, &gw)
		if gw.Spec.GatewayClassName != "istio-waypoint" || len(gw.Spec.Listeners) != 1 || gw.Spec.Listeners[0].Protocol != "HBONE" || gw.Spec.Listeners[0].Port != 15008 {
			t.Errorf("Gateway waypoint %+v: want class istio-waypoint, one HBONE listener on 15008", gw.Spec)
		}
		ns := r.byKind("Namespace")
		if len(ns) != 1 || ns[0].Metadata.Labels["istio.io/use-waypoint"] != "waypoint" {
			t.Error("the Namespace is not labelled istio.io/use-waypoint=waypoint")
		}
	},
	"bookinfo-routing": func(t *testing.T, r *rendering) {
		pods := map[string]map[string]string{}
		for name, d := range r.deployments(t) {
			pods[name] = d.Spec.Template.Metadata.Labels
		}
		selectsSome := func(sel map[string]string) bool {
			for _, l := range pods {
				if selects(sel, l) {
					return true
				}
			}
			return false
		}
		for _, app := range contractApps {
			o, ok := r.find("DestinationRule", app)
			if !ok {
				t.Errorf("no DestinationRule %s", app)
				continue
			}
			var dr struct {
				Spec struct {
					Host    string `yaml:"host"`
					Subsets []struct {
						Name   string            `yaml:"name"`
						Labels map[string]string `yaml:"labels"`
					} `yaml:"subsets"`
				} `yaml:"spec"`
			}
			o.decode(t, &dr)
			if dr.Spec.Host != app {
				t.Errorf("DestinationRule %s host %q", app, dr.Spec.Host)
			}
			names := map[string]bool{}
			for _, s := range dr.Spec.Subsets {
				names[s.Name] = true
				sel := map[string]string{"app": app}
				for k, v := range s.Labels {
					sel[k] = v
				}
				if !selectsSome(sel) {
					t.Errorf("DestinationRule %s subset %s selects no pod", app, s.Name)
				}
			}
			want := []string{"v1"}
			if app == "reviews" {
				want = []string{"v1", "v2", "v3"}
			}
			for _, w := range want {
				if !names[w] {
					t.Errorf("DestinationRule %s has no subset %s", app, w)
				}
				if svc, ok := r.find("Service", app+"-"+w); !ok {
					t.Errorf("no Service %s-%s for the Gateway API tasks", app, w)
				} else {
					var s service
					svc.decode(t, &s)
					if !selectsSome(s.Spec.Selector) || s.Spec.Selector["version"] != w {
						t.Errorf("Service %s-%s selector %v", app, w, s.Spec.Selector)
					}
				}
			}
		}
		if _, ok := r.find("Gateway", "bookinfo-gateway"); !ok {
			t.Error("no Gateway bookinfo-gateway")
		}
		if o, ok := r.find("HTTPRoute", "bookinfo"); !ok {
			t.Error("no HTTPRoute bookinfo")
		} else if !strings.Contains(string(mustYAML(t, o)), "name: productpage") {
			t.Error("HTTPRoute bookinfo does not route to productpage")
		}
	},
	"replicas": func(t *testing.T, r *rendering) {
		for _, o := range r.byKind("Deployment") {
			name := o.Metadata.Name
			var d struct {
				Spec struct {
					Replicas int `yaml:"replicas"`
				} `yaml:"spec"`
			}
			o.decode(t, &d)
			want := 2
			if name == "fortio" {
				want = 1
			}
			if d.Spec.Replicas != want {
				t.Errorf("Deployment %s: replicas %d, want %d", name, d.Spec.Replicas, want)
			}
		}
		for _, app := range contractApps {
			if _, ok := r.find("PodDisruptionBudget", app); !ok {
				t.Errorf("no PodDisruptionBudget %s", app)
			}
		}
		deps := r.deployments(t)
		secret := ""
		for _, s := range r.byKind("Secret") {
			if strings.HasPrefix(s.Metadata.Name, "productpage-session-") {
				secret = s.Metadata.Name
			}
		}
		if secret == "" {
			t.Error("no generated Secret productpage-session-<hash>")
		}
		pp := deps["productpage-v1"].Spec.Template.Spec.Containers[0]
		if !strings.Contains(string(mustYAML(t, mustFind(t, r, "Deployment", "productpage-v1"))), "name: "+secret) {
			t.Errorf("productpage does not read SESSION_SECRET from %s (env %v)", secret, pp.Env)
		}
		aff := deps["fortio"].Spec.Template.Spec.Affinity
		if aff == nil || aff.PodAntiAffinity == nil || len(aff.PodAntiAffinity.Required) != 1 ||
			aff.PodAntiAffinity.Required[0].LabelSelector.MatchLabels["app"] != "details" || len(aff.PodAntiAffinity.Preferred) != 0 {
			t.Errorf("fortio: want a required anti-affinity to app=details only, got %+v", aff)
		}
	},
}

func mustYAML(t *testing.T, o object) []byte {
	t.Helper()
	var v any
	o.decode(t, &v)
	out, err := yamlMarshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestComponents(t *testing.T) {
	for _, tg := range combinations(t) {
		k := readKustomization(t, filepath.Join(tg.dir, "kustomization.yaml"))
		for _, c := range k.Components {
			name := filepath.Base(c)
			check, ok := componentChecks[name]
			if !ok {
				continue
			}
			t.Run(tg.name+"/"+name, func(t *testing.T) { check(t, render(t, tg)) })
		}
	}
}

func mustFind(t *testing.T, r *rendering, kind, name string) object {
	t.Helper()
	o, ok := r.find(kind, name)
	if !ok {
		t.Fatalf("no %s %s", kind, name)
	}
	return o
}
