package manifests

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docsOverlay replaces upstream's samples/bookinfo/platform/kube/bookinfo.yaml
// for the Istio docs' tasks: no namespace, upstream's names and labels.
const docsOverlay = "istio-docs"

func docsTarget() target {
	return target{name: docsOverlay, dir: filepath.Join(repoRoot, "overlays", docsOverlay), variant: docsOverlay}
}

// upstreamSamples is the samples/ folder of the istio.io/istio module that
// scripts/k8s-tools.sh downloaded for the CRDs and the routing rules: the
// docs' own YAML, upstream's Bookinfo manifests included.
func upstreamSamples(t *testing.T) string {
	t.Helper()
	v, err := os.ReadFile(filepath.Join(toolsDir(), "istio-samples", "VERSION"))
	if err != nil {
		t.Fatalf("no Istio samples version: %v: %s", err, setupHint)
	}
	cache, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(cache)), "istio.io", "istio@"+strings.TrimSpace(string(v)), "samples")
	if _, err := os.Stat(filepath.Join(dir, "bookinfo", "platform", "kube", "bookinfo.yaml")); err != nil {
		t.Fatalf("upstream's Bookinfo is not in the module cache (%v): %s", err, setupHint)
	}
	return dir
}

func readObjects(t *testing.T, path string) []object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := parseObjects(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return objs
}

// TestIstioDocsReplacesUpstream: everything of upstream's bookinfo.yaml and
// bookinfo-versions.yaml is there with the same names, labels, selectors and
// service accounts (so `kubectl apply -l account=reviews` and every routing
// rule select the same things, and applying over upstream's works), plus the
// gateway; nothing else runs (six pods); nothing names a namespace; and
// productpage calls its backends as upstream's does.
func TestIstioDocsReplacesUpstream(t *testing.T) {
	r := render(t, docsTarget())
	samples := upstreamSamples(t)
	for _, o := range r.objects {
		if o.Kind == "Namespace" || o.Metadata.Namespace != "" {
			t.Errorf("%s names namespace %q: the overlay must land where kubectl points (default, or -n)", o.id(), o.Metadata.Namespace+o.Metadata.Name)
		}
	}
	var upstream []object
	for _, f := range []string{"platform/kube/bookinfo.yaml", "platform/kube/bookinfo-versions.yaml", "gateway-api/bookinfo-gateway.yaml"} {
		upstream = append(upstream, readObjects(t, filepath.Join(samples, "bookinfo", f))...)
	}
	var upstreamDeployments []string
	for _, u := range upstream {
		o, ok := r.find(u.Kind, u.Metadata.Name)
		if !ok {
			t.Errorf("upstream's %s is missing", u.id())
			continue
		}
		for k, v := range u.Metadata.Labels {
			if o.Metadata.Labels[k] != v {
				t.Errorf("%s: label %s=%q, upstream has %q", u.id(), k, o.Metadata.Labels[k], v)
			}
		}
		switch u.Kind {
		case "Deployment":
			upstreamDeployments = append(upstreamDeployments, u.Metadata.Name)
			var ours, theirs deployment
			o.decode(t, &ours)
			u.decode(t, &theirs)
			if !maps.Equal(ours.Spec.Selector.MatchLabels, theirs.Spec.Selector.MatchLabels) {
				t.Errorf("%s: selector %v, upstream %v (immutable: applying over upstream's would fail)", u.id(), ours.Spec.Selector.MatchLabels, theirs.Spec.Selector.MatchLabels)
			}
			for k, v := range theirs.Spec.Template.Metadata.Labels {
				if ours.Spec.Template.Metadata.Labels[k] != v {
					t.Errorf("%s: pod label %s=%q, upstream has %q", u.id(), k, ours.Spec.Template.Metadata.Labels[k], v)
				}
			}
			if ours.Spec.Template.Spec.ServiceAccountName != theirs.Spec.Template.Spec.ServiceAccountName {
				t.Errorf("%s: service account %q, upstream %q (the docs' policies name it)", u.id(), ours.Spec.Template.Spec.ServiceAccountName, theirs.Spec.Template.Spec.ServiceAccountName)
			}
		case "Service":
			var ours, theirs service
			o.decode(t, &ours)
			u.decode(t, &theirs)
			if !maps.Equal(ours.Spec.Selector, theirs.Spec.Selector) {
				t.Errorf("%s: selector %v, upstream %v", u.id(), ours.Spec.Selector, theirs.Spec.Selector)
			}
			if len(ours.Spec.Ports) != 1 || len(theirs.Spec.Ports) != 1 || ours.Spec.Ports[0].Port != theirs.Spec.Ports[0].Port || ours.Spec.Ports[0].Name != theirs.Spec.Ports[0].Name {
				t.Errorf("%s: ports %+v, upstream %+v", u.id(), ours.Spec.Ports, theirs.Spec.Ports)
			}
		case "HTTPRoute":
			if got, want := string(mustYAML(t, o)), string(mustYAML(t, u)); !strings.Contains(got, "value: /productpage") || strings.Count(got, "value: ") != strings.Count(want, "value: ") {
				t.Errorf("HTTPRoute %s routes other paths than upstream's:\nours:\n%s\nupstream:\n%s", u.Metadata.Name, got, want)
			}
		}
	}
	var ours []string
	for name := range r.deployments(t) {
		ours = append(ours, name)
	}
	slices.Sort(ours)
	slices.Sort(upstreamDeployments)
	if !slices.Equal(ours, upstreamDeployments) {
		t.Errorf("Deployments %v, upstream's %v: the docs show exactly upstream's pods", ours, upstreamDeployments)
	}
	deps := r.deployments(t)
	pp, _ := deps["productpage-v1"].container("productpage")
	if v, _ := pp.env("UPSTREAM_KEEPALIVE"); v != "false" {
		t.Errorf("productpage UPSTREAM_KEEPALIVE=%q, want false: a connection per call, so the stars change on refresh without a mesh", v)
	}
	if v, _ := pp.env("HTTP_KEEPALIVE"); v == "false" {
		t.Error("productpage HTTP_KEEPALIVE=false: upstream's productpage keeps its clients' connections")
	}
	details, _ := deps["details-v1"].container("details")
	if v, _ := details.env("HTTP_NODELAY"); v == "false" {
		t.Error("details HTTP_NODELAY=false: today's upstream details sets TCP_NODELAY")
	}
	for _, app := range contractApps {
		if _, ok := r.find("DestinationRule", app); !ok {
			t.Errorf("no DestinationRule %s: the Istio-API tasks route to its subsets", app)
		}
	}
}

// docsYAML is the docs' YAML the tasks apply after Bookinfo: upstream's
// routing rules, DestinationRules and gateway, the curl client, and the
// ambient guide's policies; each names no namespace or names default.
func docsYAML(t *testing.T) []string {
	t.Helper()
	samples := upstreamSamples(t)
	var files []string
	for _, pattern := range []string{"bookinfo/networking/virtual-service-*.yaml", "bookinfo/networking/destination-rule-all.yaml",
		"bookinfo/gateway-api/*.yaml", "curl/curl.yaml"} {
		m, _ := filepath.Glob(filepath.Join(samples, pattern))
		if len(m) == 0 {
			t.Fatalf("no %s in %s", pattern, samples)
		}
		files = append(files, m...)
	}
	return append(files, filepath.Join(repoRoot, "tests", "manifests", "testdata", "ambient-guide-policies.yaml"))
}

// TestIstioDocsYAMLAppliesUnchanged: with the overlay applied as the docs
// apply upstream's (no -n: namespace default), each of the docs' files
// applies unchanged (server dry run, strict validation, no warning). In
// another namespace (-n) the overlay and every file that names no
// namespace apply too; the ambient guide's policies name default, and
// kubectl refuses them there, which is why the README sends that guide to
// default.
func TestIstioDocsYAMLAppliesUnchanged(t *testing.T) {
	r := render(t, docsTarget())
	files := docsYAML(t)
	c := cluster(t)
	const elsewhere = "docs-elsewhere"
	if _, _, err := c.kubectl(nil, "create", "namespace", elsewhere); err != nil && !strings.Contains(err.Error(), "AlreadyExists") {
		t.Fatal(err)
	}
	for _, ns := range []string{"", elsewhere} {
		var nsArgs []string
		name := "default"
		if ns != "" {
			nsArgs, name = []string{"-n", ns}, ns
		}
		t.Run(name, func(t *testing.T) {
			if _, stderr, err := c.kubectl(nil, append(nsArgs, "apply", "--validate=strict", "-f", r.file)...); err != nil || warnings(stderr) != "" {
				t.Fatalf("the overlay: %v\n%s", err, stderr)
			}
			for _, f := range files {
				rel, _ := filepath.Rel(filepath.Dir(filepath.Dir(f)), f)
				t.Run(rel, func(t *testing.T) {
					data, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					_, stderr, err := c.kubectl(nil, append(nsArgs, "apply", "--dry-run=server", "--validate=strict", "-f", f)...)
					namesDefault := strings.Contains(string(data), "namespace: default")
					switch {
					case ns != "" && namesDefault:
						if err == nil || !strings.Contains(stderr+err.Error(), "does not match") {
							t.Errorf("a file naming namespace default applied with -n %s (%v): the test no longer shows why that guide runs in default\n%s", ns, err, stderr)
						}
					case err != nil:
						t.Errorf("kubectl apply %s: %v\n%s", strings.Join(nsArgs, " "), err, stderr)
					case warnings(stderr) != "":
						t.Errorf("warnings:\n%s", warnings(stderr))
					}
				})
			}
		})
	}
}

// TestIstioDocsAnalyze: istioctl analyze, offline, of the overlay with each
// of the docs' files as they are (no namespace rewritten): clean, except
// the rules for versions this repo does not deploy, which must be flagged.
func TestIstioDocsAnalyze(t *testing.T) {
	istioctl := needTool(t, "istioctl")
	r := render(t, docsTarget())
	for _, f := range docsYAML(t) {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			out, err := exec.Command(istioctl, "analyze", "--use-kube=false", "-A", r.file, f).CombinedOutput()
			clean := err == nil && strings.Contains(string(out), "No validation issues found")
			switch {
			case slices.Contains(undeployedTutorials, name):
				if clean || !strings.Contains(string(out), "IST0101") {
					t.Errorf("%s needs a version that is not deployed, yet analyze found no missing reference:\n%s", name, out)
				}
			case !clean:
				t.Errorf("istioctl analyze with %s (exit %v):\n%s", name, err, out)
			}
		})
	}
}
