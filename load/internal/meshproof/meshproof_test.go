package meshproof

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures in testdata were recorded on the one-node cluster of
// scripts/cluster.sh with its mesh: the pod lists of the three overlays
// (with the bookload agent; the load client and details kept), the load
// client's sidecar's Envoy stats before and after a run, and ztunnel's
// metrics after runs in the ambient namespace (and another namespace's).

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pods(t *testing.T, mode string, edit func(*k8sPodList)) []Pod {
	t.Helper()
	body := fixture(t, "pods-"+mode+".json")
	if edit != nil {
		var l k8sPodList
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
		edit(&l)
		var err error
		if body, err = json.Marshal(l); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := ParsePods(body, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func istio() *Istio {
	return &Istio{Namespace: "istio-system", Profile: "ambient", Ztunnel: []ProxyPod{{Name: "ztunnel-thrrn", Node: "bookinfo-bench", Ready: true}}}
}

func ztunnelCount(t *testing.T, ns string) float64 {
	t.Helper()
	c, err := ZtunnelConnections(fixture(t, "ztunnel.prom"), ns)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func clientCounters(t *testing.T, name string) Counters {
	t.Helper()
	s, err := ParseMetrics(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	out := func(l map[string]string) bool { return strings.HasPrefix(l["cluster_name"], "outbound|") }
	return Counters{ClientRequests: Sum(s, envoyRequests, out), ClientHandshakes: Sum(s, envoyHandshakes, out), ClientSidecars: 1}
}

func TestParsePods(t *testing.T) {
	sc := pods(t, "sidecar", nil)
	if len(sc) != 2 || !sc[1].Client || !sc[1].Sidecar || !sc[1].SidecarReady || sc[1].Ambient() || sc[1].Node != "bookinfo-bench" {
		t.Fatalf("sidecar pods: %+v", sc)
	}
	if sc[0].Concurrency != "2 (Istio's default: no CPU limit)" {
		t.Errorf("concurrency %q", sc[0].Concurrency)
	}
	am := pods(t, "ambient", nil)
	if len(am) != 2 || !am[0].Ambient() || am[0].Sidecar {
		t.Fatalf("ambient pods: %+v", am)
	}
	nm := pods(t, "no-mesh", nil)
	if len(nm) != 2 || nm[0].Ambient() || nm[0].Sidecar {
		t.Fatalf("no-mesh pods: %+v", nm)
	}
}

func TestMetricsFixtures(t *testing.T) {
	if c := ztunnelCount(t, "bookinfo-ambient"); c != 82 {
		t.Errorf("ztunnel connections of bookinfo-ambient: %g, want the 82 recorded", c)
	}
	if c := ztunnelCount(t, "bookinfo-no-mesh"); c != 0 {
		t.Errorf("ztunnel connections of bookinfo-no-mesh: %g", c)
	}
	b, a := clientCounters(t, "envoy-client-before.prom"), clientCounters(t, "envoy-client-after.prom")
	if b.ClientRequests != 0 || a.ClientRequests != 442 || a.ClientHandshakes != 14 {
		t.Errorf("client sidecar counters: before %+v, after %+v", b, a)
	}
	if _, err := ParseMetrics([]byte("ok 1\nbroken{a=\"x} 2\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a broken line: %v", err)
	}
}

func obs(fp Fingerprint, c Counters) Observation { return Observation{Fingerprint: fp, Counters: c} }

func TestJudge(t *testing.T) {
	ambientPods, sidecarPods, noMeshPods := pods(t, "ambient", nil), pods(t, "sidecar", nil), pods(t, "no-mesh", nil)
	fp := func(ns string, ps []Pod) Fingerprint {
		return Fingerprint{Istio: istio(), Namespace: ns, Pods: ps}
	}
	zAmb := Counters{ZtunnelConnections: ztunnelCount(t, "bookinfo-ambient")}
	zNone := Counters{}
	cb, ca := clientCounters(t, "envoy-client-before.prom"), clientCounters(t, "envoy-client-after.prom")
	notEnrolled := pods(t, "ambient", func(l *k8sPodList) {
		for i := range l.Items {
			delete(l.Items[i].Metadata.Annotations, RedirectionAnnotation)
		}
	})
	optedOut := pods(t, "ambient", func(l *k8sPodList) {
		l.Items[0].Metadata.Annotations[RedirectionAnnotation] = "disabled"
	})
	notReady := pods(t, "sidecar", func(l *k8sPodList) {
		for i, s := range l.Items[1].Status.ContainerStatuses {
			if s.Name == "istio-proxy" {
				l.Items[1].Status.ContainerStatuses[i].Ready = false
			}
		}
	})
	for _, tc := range []struct {
		name          string
		mode, ns      string
		before, after Observation
		served        int64
		reason        string // "" : valid
	}{
		{"ambient proven", Ambient, "bookinfo-ambient", obs(fp("bookinfo-ambient", ambientPods), zNone), obs(fp("bookinfo-ambient", ambientPods), zAmb), 100, ""},
		{"ambient, ztunnel did not move", Ambient, "bookinfo-ambient", obs(fp("bookinfo-ambient", ambientPods), zAmb), obs(fp("bookinfo-ambient", ambientPods), zAmb), 100, "ztunnel opened no connection"},
		{"ambient, pods not enrolled", Ambient, "bookinfo-ambient", obs(fp("bookinfo-ambient", notEnrolled), zNone), obs(fp("bookinfo-ambient", notEnrolled), zNone), 100, "is not enrolled in ambient"},
		{"ambient, one pod annotated out", Ambient, "bookinfo-ambient", obs(fp("bookinfo-ambient", optedOut), zNone), obs(fp("bookinfo-ambient", optedOut), zAmb), 100, `ambient.istio.io/redirection="disabled"`},
		{"ambient on sidecar pods", Ambient, "bookinfo-sidecar", obs(fp("bookinfo-sidecar", sidecarPods), cb), obs(fp("bookinfo-sidecar", sidecarPods), ca), 400, "has an istio-proxy sidecar"},
		{"ambient without ztunnel on the node", Ambient, "bookinfo-ambient", obs(Fingerprint{Istio: &Istio{}, Pods: ambientPods}, zNone), obs(Fingerprint{Istio: &Istio{}, Pods: ambientPods}, zAmb), 100, "where no ztunnel is ready"},
		{"sidecar proven", Sidecar, "bookinfo-sidecar", obs(fp("bookinfo-sidecar", sidecarPods), cb), obs(fp("bookinfo-sidecar", sidecarPods), ca), 400, ""},
		{"sidecar, fewer upstream requests than served", Sidecar, "bookinfo-sidecar", obs(fp("bookinfo-sidecar", sidecarPods), cb), obs(fp("bookinfo-sidecar", sidecarPods), ca), 1000, "fewer than 95% of the 1000 served"},
		{"sidecar not ready", Sidecar, "bookinfo-sidecar", obs(fp("bookinfo-sidecar", notReady), cb), obs(fp("bookinfo-sidecar", notReady), ca), 400, "istio-proxy is not ready"},
		{"sidecar without a proxy", Sidecar, "bookinfo-no-mesh", obs(fp("bookinfo-no-mesh", noMeshPods), zNone), obs(fp("bookinfo-no-mesh", noMeshPods), zNone), 100, "has no istio-proxy sidecar"},
		{"no-mesh proven", NoMesh, "bookinfo-no-mesh", obs(fp("bookinfo-no-mesh", noMeshPods), zNone), obs(fp("bookinfo-no-mesh", noMeshPods), zNone), 100, ""},
		{"no-mesh through ztunnel", NoMesh, "bookinfo-ambient", obs(fp("bookinfo-ambient", ambientPods), zNone), obs(fp("bookinfo-ambient", ambientPods), zAmb), 100, "a no-mesh target's traffic went through the mesh"},
		{"pods replaced", NoMesh, "bookinfo-no-mesh", obs(fp("bookinfo-no-mesh", noMeshPods), zNone), obs(fp("bookinfo-no-mesh", noMeshPods[:1]), zNone), 100, "changed during the repetition"},
		{"unreadable", Ambient, "bookinfo-ambient", Observation{Errors: []string{"ztunnel's counters: HTTP 503"}}, obs(fp("bookinfo-ambient", ambientPods), zAmb), 100, "could not read ztunnel's counters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Judge(Claim{Target: tc.mode, Namespace: tc.ns, Mode: tc.mode}, tc.before, tc.after, tc.served)
			why := strings.Join(p.Reasons, "; ")
			switch {
			case tc.reason == "" && !p.Valid:
				t.Errorf("not proven: %s", why)
			case tc.reason != "" && p.Valid:
				t.Errorf("proven (%v), want invalid: %s", p.Evidence, tc.reason)
			case tc.reason != "" && !strings.Contains(why, tc.reason):
				t.Errorf("reasons %q, want one with %q", why, tc.reason)
			}
			// The proof survives the result file.
			b, err := json.Marshal(map[string]any{MetadataKey: p})
			if err != nil {
				t.Fatal(err)
			}
			var md map[string]any
			if err := json.Unmarshal(b, &md); err != nil {
				t.Fatal(err)
			}
			if bad, r := Invalid(md); bad != !p.Valid || (bad && r == "") {
				t.Errorf("Invalid after a round trip: %v %q", bad, r)
			}
		})
	}
}

func TestParseFlagAndLabels(t *testing.T) {
	for in, want := range map[string]Claim{
		"ambient=bookinfo-ambient":         {Target: "ambient", Namespace: "bookinfo-ambient", Mode: Ambient, From: "name"},
		"ambient-waypoint=wp":              {Target: "ambient-waypoint", Namespace: "wp", Mode: Ambient, From: "name"},
		"fast=bookinfo-x:sidecar":          {Target: "fast", Namespace: "bookinfo-x", Mode: Sidecar, From: "flag"},
		"mine=bookinfo-x":                  {Target: "mine", Namespace: "bookinfo-x"},
		"sidecar=bookinfo-no-mesh:no-mesh": {Target: "sidecar", Namespace: "bookinfo-no-mesh", Mode: NoMesh, From: "flag"},
	} {
		got, err := ParseFlag(in)
		if err != nil || got != want {
			t.Errorf("ParseFlag(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"ambient", "=ns", "a=Bad_NS", "a=ns:linkerd"} {
		if _, err := ParseFlag(bad); err == nil || !strings.Contains(err.Error(), "--mesh") {
			t.Errorf("ParseFlag(%q): %v", bad, err)
		}
	}
	for labels, want := range map[string]string{"istio-injection=enabled": Sidecar, "istio.io/rev=default": Sidecar, "istio.io/dataplane-mode=ambient": Ambient, "": NoMesh} {
		l := map[string]string{}
		if k, v, ok := strings.Cut(labels, "="); ok {
			l[k] = v
		}
		if got, err := ModeFromLabels("ns", l); err != nil || got != want {
			t.Errorf("%s: %q %v, want %s", labels, got, err, want)
		}
	}
	if _, err := ModeFromLabels("ns", map[string]string{"istio-injection": "enabled", "istio.io/dataplane-mode": "ambient"}); err == nil {
		t.Error("both sidecar and ambient labels: no error")
	}
}

func TestMTLSMode(t *testing.T) {
	body := []byte(`{"items":[
	 {"metadata":{"name":"default","namespace":"istio-system"},"spec":{"mtls":{"mode":"STRICT"}}},
	 {"metadata":{"name":"loose","namespace":"a"},"spec":{"mtls":{"mode":"PERMISSIVE"}}},
	 {"metadata":{"name":"one","namespace":"a"},"spec":{"selector":{"matchLabels":{"app":"x"}},"mtls":{"mode":"DISABLE"}}}]}`)
	for ns, want := range map[string]string{
		"a": "PERMISSIVE (PeerAuthentication a/loose); workload-specific: one=DISABLE",
		"b": "STRICT (mesh-wide PeerAuthentication istio-system/default)",
	} {
		if got, err := MTLSMode(body, ns, "istio-system"); err != nil || got != want {
			t.Errorf("%s: %q %v, want %q", ns, got, err, want)
		}
	}
	if got, _ := MTLSMode([]byte(`{"items":[]}`), "a", "istio-system"); !strings.HasPrefix(got, "PERMISSIVE (Istio's default") {
		t.Errorf("no PeerAuthentication: %q", got)
	}
}
