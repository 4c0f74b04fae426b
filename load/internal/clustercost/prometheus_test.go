package clustercost

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakePrometheus answers the CPU and memory queries of a window with
// fixtures, and records the queries.
func fakePrometheus(t *testing.T, cpu, mem []promSample, fail bool) (*httptest.Server, *[]string) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("query")
		seen = append(seen, r.URL.Path+" "+q+" time="+r.URL.Query().Get("time")+" step="+r.URL.Query().Get("step"))
		var res []promSample
		switch {
		case fail:
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
			return
		case strings.HasPrefix(q, "count(") && cpu != nil:
			res = []promSample{{Metric: map[string]string{}, Value: [2]any{1.0, "42"}}}
		case strings.Contains(q, "increase("):
			res = cpu
		case r.URL.Path == "/api/v1/query_range":
			res = mem
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": map[string]any{"resultType": "vector", "result": res}})
	}))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func series(ns, pod, container string) map[string]string {
	return map[string]string{"namespace": ns, "pod": pod, "container": container}
}

func TestPrometheusSource(t *testing.T) {
	cpu := []promSample{
		{Metric: series("scale-1", "ratings-0", "ratings"), Value: [2]any{1000.0, "4.5"}},
		{Metric: series("scale-1", "ratings-0", "istio-proxy"), Value: [2]any{1000.0, "1.25"}},
		{Metric: series("istio-system", "ztunnel-x", "istio-proxy"), Value: [2]any{1000.0, "0.75"}},
		{Metric: series("scale-1", "fortio-0", "fortio"), Value: [2]any{1000.0, "2"}},
		{Metric: series("kube-system", "coredns-0", "coredns"), Value: [2]any{1000.0, "NaN"}},
	}
	mem := []promSample{
		{Metric: series("scale-1", "ratings-0", "istio-proxy"), Values: [][2]any{{1000.0, "10485760"}, {1005.0, "31457280"}}},
		{Metric: series("istio-system", "ztunnel-x", "istio-proxy"), Values: [][2]any{{1000.0, "20971520"}, {1005.0, "10485760"}}},
	}
	srv, seen := fakePrometheus(t, cpu, mem, false)
	now := time.Unix(1000, 0)
	p := &Prometheus{URL: srv.URL, AppNamespaces: []string{"scale-1"}, Now: func() time.Time { return now }}
	if err := p.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	w, err := p.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(9500 * time.Millisecond)
	c := w.Stop()
	c.SetRequests(400)
	if c.Groups == nil || c.Source != PrometheusSource {
		t.Fatalf("cost %+v", c)
	}
	if math.Abs(c.MeshCPUSeconds-2) > 1e-9 || math.Abs(c.Groups[GroupApps].CPUSeconds-4.5) > 1e-9 || math.Abs(c.Groups[GroupClients].CPUSeconds-2) > 1e-9 {
		t.Errorf("CPU by group %+v, mesh %v", c.Groups, c.MeshCPUSeconds)
	}
	if c.MeshPeakMemory != 40<<20 || float64(c.QueriesPerMeshCore) != 200 {
		t.Errorf("mesh peak %d MiB (want 40: the later step), queries per mesh core %v", c.MeshPeakMemory>>20, c.QueriesPerMeshCore)
	}
	all := strings.Join(*seen, "\n")
	// the window rounded up to whole seconds, evaluated at its end
	if !strings.Contains(all, "[10s]") || !strings.Contains(all, "time=1009.500") || !strings.Contains(all, "step=5") {
		t.Errorf("queries:\n%s", all)
	}
	if !strings.Contains(strings.Join(c.Notes, " "), "names only") {
		t.Errorf("notes %v", c.Notes)
	}

	bad, _ := fakePrometheus(t, nil, nil, true)
	p = &Prometheus{URL: bad.URL}
	if err := p.Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "parse error") {
		t.Errorf("probe of a failing Prometheus: %v", err)
	}
	w, _ = p.Begin(context.Background())
	if c := w.Stop(); c.Groups != nil || !strings.Contains(strings.Join(c.Notes, " "), "parse error") {
		t.Errorf("failed CPU query: %+v", c)
	}
	empty, _ := fakePrometheus(t, nil, nil, false)
	if err := (&Prometheus{URL: empty.URL}).Probe(context.Background()); err == nil || !strings.Contains(err.Error(), "no container_cpu_usage_seconds_total series") {
		t.Errorf("probe of a Prometheus without cAdvisor's series: %v", err)
	}
	if _, err := ParsePrometheusURL("prometheus:9090"); err == nil || !strings.Contains(err.Error(), `--prometheus "prometheus:9090"`) {
		t.Errorf("bad URL: %v", err)
	}
}
