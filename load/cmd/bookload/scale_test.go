package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/agent/agenttest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/clustercost"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/engine/fanout"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/kube"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scale"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scale/scaletest"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

func TestMain(m *testing.M) {
	code := m.Run()
	agenttest.Cleanup()
	os.Exit(code)
}

func delayServer(t *testing.T, d time.Duration) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(d)
		_, _ = w.Write([]byte(`{"id":0,"ratings":{}}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// swapURL makes one namespace's client load another app: the run request's
// target URL is rewritten on its way to the agent.
func swapURL(from, to string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			b = bytes.ReplaceAll(b, []byte(from), []byte(to))
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		}
		h.ServeHTTP(w, r)
	})
}

func scaleScenario(t *testing.T) *scenario.Scenario {
	s, err := scenario.Parse("scale-test.yaml", []byte(`name: scale-test
service: ratings
path: /ratings/0
warmup: 300ms
repetitions: 2
profiles:
  - {name: 20rps-2c, qps: 20, connections: 2, duration: 1s}
`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func scaleConfig(api string) scale.Config {
	return scale.Config{API: &kube.API{Base: api}, Selector: scale.DefaultSelector, ClientService: "fortio:8080",
		ClientKind: scale.ClientAgent, Cost: true, CostInterval: 200 * time.Millisecond}
}

// TestScaleEndToEnd: three namespaces' agents behind a fake API server
// proxy, one loading an app 10x slower: discovery, the runner, the store,
// the merged histograms, the spread naming the slow namespace, the cost
// arithmetic from the nodes' summaries, the summary tables and compare.
func TestScaleEndToEnd(t *testing.T) {
	fast, slow := delayServer(t, 2*time.Millisecond), delayServer(t, 20*time.Millisecond)
	cl := scaletest.New(scaletest.Options{Namespaces: 3, Mesh: true, Wrap: func(ns string, h http.Handler) http.Handler {
		if ns == "scale-3" {
			return swapURL(fast.URL, slow.URL, h)
		}
		return h
	}})
	defer cl.Close()
	cfg := scaleConfig(cl.API.URL)
	cfg.AppURL = fast.URL
	var stdout, stderr bytes.Buffer
	out := t.TempDir()
	code := runScale(context.Background(), &stdout, &stderr, cfg, scaleScenario(t), 0, out, map[string]string{"cluster": "fake"}, "md")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	runs, err := results.OpenAll([]string{out})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%v %d runs", err, len(runs))
	}
	run := runs[0]
	if run.Run.Status != results.StatusComplete || len(run.Reps) != 2 || run.Run.Engines["sidecar"] != fanout.Name || run.Run.Targets[0].Name != "sidecar" {
		t.Fatalf("run %s, %d reps, engines %v, targets %+v", run.Run.Status, len(run.Reps), run.Run.Engines, run.Run.Targets)
	}
	for _, r := range run.Reps {
		// 3 namespaces x 20 rps x 1 s
		if r.Requests < 57 || r.Requests > 63 || r.Errors != 0 || r.ActualQPS < 57 || r.RequestedQPS != 60 {
			t.Errorf("rep %d: %d requests, %d errors, %.1f of %.0f qps", r.Repetition, r.Requests, r.Errors, r.ActualQPS, r.RequestedQPS)
		}
		// A third of the requests are slow: p50 fast, p90 slow.
		if p := r.Latency.Plain.SummaryMS; p.P50 > 15 || p.P90 < 20 || p.Count != r.Requests {
			t.Errorf("rep %d merged latency %+v: want p50 of the fast apps, p90 of the slow one", r.Repetition, p)
		}
		sp := r.EngineMetadata["spread"].(map[string]any)
		if w := sp["p99_ms"].(map[string]any)["worst"]; w != "scale-3" {
			t.Errorf("rep %d: worst p99 %v, want scale-3", r.Repetition, w)
		}
		if n := r.EngineMetadata["members"]; n != 3.0 {
			t.Errorf("members %v", n)
		}
		c := clustercost.FromMetadata(r.EngineMetadata)
		if c == nil || c.Groups == nil {
			t.Fatalf("rep %d: no cluster cost in %v", r.Repetition, r.EngineMetadata["cluster_cost"])
		}
		if c.Samples < 3 {
			t.Errorf("rep %d: %d samples in a 1 s window sampled every 200 ms", r.Repetition, c.Samples)
		}
		for g, want := range cl.WantCPU(c.Samples, true) {
			if got := c.Groups[g].CPUSeconds; math.Abs(got-want) > 1e-9 {
				t.Errorf("rep %d: %s %.4f CPU-s, want %.4f", r.Repetition, g, got, want)
			}
		}
		wantMesh := (c.Groups["sidecars"].CPUSeconds + c.Groups["ztunnel"].CPUSeconds + c.Groups["istiod"].CPUSeconds)
		if math.Abs(c.MeshCPUSeconds-wantMesh) > 1e-9 || c.RequestsServed != r.Requests {
			t.Errorf("mesh %.4f, want %.4f; served %d", c.MeshCPUSeconds, wantMesh, c.RequestsServed)
		}
		if q := float64(c.QueriesPerMeshCore); math.Abs(q-float64(r.Requests)/wantMesh) > 0.05 {
			t.Errorf("queries per mesh core %v, want %.1f", c.QueriesPerMeshCore, float64(r.Requests)/wantMesh)
		}
		if c.Groups["sidecars"].Containers != 6 || c.Groups["clients"].Containers != 3 || c.Groups["apps"].Containers != 3 {
			t.Errorf("containers by group: %+v", c.Groups)
		}
	}
	o := stdout.String()
	for _, want := range []string{"### Scale: all namespaces together", "### Spread between namespaces", "| scale-3 |", "### Cluster cost", "| sidecar | 1 | 3 |", "sidecar"} {
		if !strings.Contains(o, want) {
			t.Errorf("summary lacks %q:\n%s", want, o)
		}
	}
	if !strings.Contains(stderr.String(), "3 namespaces (scale-1 .. scale-3) as target sidecar") {
		t.Errorf("stderr: %s", stderr.String())
	}
	if cl.API.CallCount("service") == 0 || cl.API.CallCount("summary") == 0 {
		t.Errorf("calls %v", cl.API.Calls)
	}
}

// TestScaleNoMesh: without a mesh the queries per mesh core are n/a.
func TestScaleNoMesh(t *testing.T) {
	app := delayServer(t, time.Millisecond)
	cl := scaletest.New(scaletest.Options{Namespaces: 2, Mode: "no-mesh"})
	defer cl.Close()
	cfg := scaleConfig(cl.API.URL)
	cfg.AppURL = app.URL
	var stdout, stderr bytes.Buffer
	if code := runScale(context.Background(), &stdout, &stderr, cfg, scaleScenario(t), 1, t.TempDir(), nil, "md"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "| no-mesh | 1 |") || !strings.Contains(stdout.String(), "| n/a |") {
		t.Errorf("no-mesh summary:\n%s", stdout.String())
	}
}

func TestScaleErrors(t *testing.T) {
	app := delayServer(t, time.Millisecond)
	failing := func(ns string, h http.Handler) http.Handler {
		if ns != "scale-2" {
			return h
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/run") {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = w.Write([]byte(`{"error":"load failed: boom"}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	cl := scaletest.New(scaletest.Options{Namespaces: 3, Wrap: failing})
	defer cl.Close()

	t.Run("no namespace matches", func(t *testing.T) {
		cfg := scaleConfig(cl.API.URL)
		cfg.AppURL = app.URL
		cfg.Selector = "bookinfo-bench/scale=true,bookinfo-bench/scale-mode=ambient"
		var stdout, stderr bytes.Buffer
		code := runScale(context.Background(), &stdout, &stderr, cfg, scaleScenario(t), 1, t.TempDir(), nil, "md")
		if code != 1 || !strings.Contains(stderr.String(), `no namespace matches --selector "bookinfo-bench/scale=true,bookinfo-bench/scale-mode=ambient"`) {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	})
	t.Run("a member fails", func(t *testing.T) {
		cfg := scaleConfig(cl.API.URL)
		cfg.AppURL = app.URL
		cfg.Cost = false
		var stdout, stderr bytes.Buffer
		out := t.TempDir()
		s := scaleScenario(t)
		s.Warmup = 0
		code := runScale(context.Background(), &stdout, &stderr, cfg, s, 1, out, nil, "md")
		if code != 1 || !strings.Contains(stderr.String(), "namespace scale-2: bookload agent at") || !strings.Contains(stderr.String(), "boom") {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
		runs, err := results.OpenAll([]string{out})
		if err != nil || len(runs) != 1 || runs[0].Run.Status != results.StatusPartial || !strings.Contains(runs[0].Run.Note, "scale-2") {
			t.Errorf("the run is not kept as partial naming scale-2: %v %+v", err, runs)
		}
	})
	t.Run("modes disagree", func(t *testing.T) {
		cl.API.Lock()
		cl.API.Namespaces[0].Labels[scale.ModeLabel] = "ambient"
		cl.API.Unlock()
		defer func() { cl.API.Lock(); cl.API.Namespaces[0].Labels[scale.ModeLabel] = "sidecar"; cl.API.Unlock() }()
		cfg := scaleConfig(cl.API.URL)
		cfg.AppURL = app.URL
		var stdout, stderr bytes.Buffer
		code := runScale(context.Background(), &stdout, &stderr, cfg, scaleScenario(t), 1, t.TempDir(), nil, "md")
		if code != 1 || !strings.Contains(stderr.String(), "disagree on bookinfo-bench/scale-mode") {
			t.Errorf("exit %d: %s", code, stderr.String())
		}
	})
	t.Run("bad flags", func(t *testing.T) {
		for _, c := range []struct {
			args []string
			says string
		}{
			{[]string{"smoke", "--client-service", "fortio"}, `--client-service "fortio"`},
			{[]string{"smoke", "--client-service", "fortio:http"}, `--client-service "fortio:http"`},
			{[]string{"smoke", "--app-url", "ratings:9080"}, `--app-url "ratings:9080"`},
			{[]string{"smoke", "--client", "k6"}, `--client "k6"`},
			{[]string{"smoke", "--selector", " "}, "--selector: empty"},
			{[]string{"smoke", "--name", "a b"}, `--name "a b"`},
			{[]string{"smoke", "--api", "127.0.0.1:8001"}, `--api "127.0.0.1:8001"`},
			{[]string{"smoke", "--repetitions", "-1"}, "--repetitions -1"},
			{[]string{"smoke", "--prometheus", "prom:9090"}, `--prometheus "prom:9090"`},
			{[]string{"smoke", "--prometheus", "http://prom:9090", "--cost=false"}, "with --cost=false"},
		} {
			msg, code := captureStderr(t, func() int { return scaleCmd(c.args) })
			if code != 2 || !strings.Contains(msg, c.says) {
				t.Errorf("%v: exit %d, %q; want 2 and a message with %q", c.args, code, msg, c.says)
			}
		}
	})
}

// captureStderr runs f with os.Stderr redirected.
func captureStderr(t *testing.T, f func() int) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	code := f()
	os.Stderr = old
	w.Close()
	return <-done, code
}

// TestRunClusterCost: `bookload run --cluster-cost` against a local target
// records each repetition's cost from the fake cluster and prints it.
func TestRunClusterCost(t *testing.T) {
	cl := scaletest.New(scaletest.Options{Namespaces: 1, Mesh: true})
	defer cl.Close()
	dir := t.TempDir()
	sc := writeScenario(t, dir, tiny)
	out := filepath.Join(dir, "results")
	stdout, code := capture(t, func() int {
		return runCmd([]string{sc, "--target", "x=" + okServer(t).URL, "--out", out, "--cluster-cost", "--api", cl.API.URL,
			"--cost-namespaces", "scale-1", "--cost-interval", "100ms"})
	})
	if code != 0 || !strings.Contains(stdout, "### Cluster cost per repetition window") || !strings.Contains(stdout, "| x | 100rps-2c | 2 |") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	runs, err := results.OpenAll([]string{out})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs[0].Reps {
		c := clustercost.FromMetadata(r.EngineMetadata)
		if c == nil || c.Groups == nil || c.Groups[clustercost.GroupApps].CPUSeconds <= 0 || c.QueriesPerMeshCore.IsNA() || c.RequestsServed != r.Requests {
			t.Errorf("rep %d cost %+v", r.Repetition, c)
		}
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{sc, "--cluster-cost"}, "--cluster-cost needs --cost-namespaces"},
		{[]string{sc, "--api", cl.API.URL}, "go with --cluster-cost"},
		{[]string{sc, "--cluster-cost", "--cost-namespaces", "a", "--api", "nope"}, `--api "nope"`},
	} {
		msg, code := captureStderr(t, func() int { return runCmd(c.args) })
		if code != 2 || !strings.Contains(msg, c.says) {
			t.Errorf("%v: exit %d %q, want 2 and %q", c.args, code, msg, c.says)
		}
	}
}

// TestScaleCompareTwoModes: two scale runs (no-mesh, sidecar) into one
// results directory compare side by side with compare's statistics, and
// compare adds the cost medians.
func TestScaleCompareTwoModes(t *testing.T) {
	app := delayServer(t, time.Millisecond)
	out := t.TempDir()
	for _, mesh := range []bool{false, true} {
		mode := map[bool]string{false: "no-mesh", true: "sidecar"}[mesh]
		cl := scaletest.New(scaletest.Options{Namespaces: 2, Mode: mode, Mesh: mesh})
		cfg := scaleConfig(cl.API.URL)
		cfg.AppURL = app.URL
		var stdout, stderr bytes.Buffer
		code := runScale(context.Background(), &stdout, &stderr, cfg, scaleScenario(t), 1, out, nil, "md")
		cl.Close()
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", mode, code, stderr.String())
		}
	}
	stdout, code := capture(t, func() int { return compareCmd([]string{out, "--baseline", "no-mesh"}) })
	if code != 0 {
		t.Fatalf("compare exit %d", code)
	}
	for _, want := range []string{"| 20rps-2c | no-mesh (baseline) | 1 |", "Δ sidecar", "Cluster cost per repetition window: median",
		"| 20rps-2c | no-mesh | 1 |", "| 20rps-2c | sidecar | 1 |", "| n/a |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("compare lacks %q:\n%s", want, stdout)
		}
	}
	// The same figures in compare's JSON, n/a as null.
	stdout, code = capture(t, func() int { return compareCmd([]string{out, "--baseline", "no-mesh", "--format", "json"}) })
	if code != 0 {
		t.Fatalf("compare --format json: exit %d", code)
	}
	var doc struct {
		Rows []struct {
			Target      string `json:"target"`
			ClusterCost *struct {
				N                  int                       `json:"n"`
				AppsCPUSeconds     *struct{ Median float64 } `json:"apps_cpu_seconds"`
				QueriesPerMeshCore *struct{ Median float64 } `json:"queries_per_mesh_core"`
				QueriesPerCore     *struct{ Median float64 } `json:"queries_per_core"`
			} `json:"cluster_cost"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil || len(doc.Rows) != 2 {
		t.Fatalf("compare --format json: %v, %d rows\n%s", err, len(doc.Rows), stdout)
	}
	for _, r := range doc.Rows {
		c := r.ClusterCost
		if c == nil || c.N != 1 || c.AppsCPUSeconds == nil || c.QueriesPerCore == nil || c.QueriesPerCore.Median <= 0 {
			t.Errorf("%s: cluster_cost %+v", r.Target, c)
			continue
		}
		if mesh := c.QueriesPerMeshCore != nil; mesh != (r.Target == "sidecar") {
			t.Errorf("%s: queries_per_mesh_core %+v, want a number only with a mesh", r.Target, c.QueriesPerMeshCore)
		}
	}
	html := filepath.Join(t.TempDir(), "report.html")
	if _, code := capture(t, func() int { return reportCmd([]string{out, "-o", html}) }); code != 0 {
		t.Errorf("report of the scale runs: exit %d", code)
	}
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "sidecar") {
		t.Errorf("report: %v", err)
	}
}

// TestScaleStockFortioClients: with stock fortio clients (here the real
// agent binary's fortio REST API) behind the service proxy path, the
// members are fortio+http targets and the merge says it is bucket-precise.
func TestScaleStockFortioClients(t *testing.T) {
	app := delayServer(t, time.Millisecond)
	cl := scaletest.New(scaletest.Options{Namespaces: 2})
	defer cl.Close()
	for _, ns := range cl.Namespaces {
		a := agenttest.Start(t)
		u, err := url.Parse(a.URL)
		if err != nil {
			t.Fatal(err)
		}
		cl.API.Lock()
		cl.API.Services[ns+"/fortio:8080"] = httputil.NewSingleHostReverseProxy(u)
		cl.API.Unlock()
	}
	cfg := scaleConfig(cl.API.URL)
	cfg.AppURL, cfg.ClientKind, cfg.Cost = app.URL, scale.ClientFortio, false
	r, stdout := scaleOneRep(t, cfg)
	if r.Requests < 38 || r.EngineMetadata["merge_precision"] != fanout.MergeBucketPrecise || r.EngineMetadata["precision"] != "fortio-buckets" {
		t.Errorf("%d requests, precision %v, merge %v", r.Requests, r.EngineMetadata["precision"], r.EngineMetadata["merge_precision"])
	}
	if !strings.Contains(stdout, "sidecar ran on a remote fortio (fortio+http): latencies are rebuilt from fortio's histogram buckets") {
		t.Errorf("compare does not note the precision:\n%s", stdout)
	}
}

// TestScaleInterrupt: Ctrl-C during the second window keeps the first,
// marks the run partial, exits 130, and frees every namespace's agent.
func TestScaleInterrupt(t *testing.T) {
	app := delayServer(t, time.Millisecond)
	cl := scaletest.New(scaletest.Options{Namespaces: 3, Mesh: true})
	defer cl.Close()
	cfg := scaleConfig(cl.API.URL)
	cfg.AppURL = app.URL
	s := scaleScenario(t)
	s.Warmup = 0
	s.Profiles[0].Duration = scenario.Duration(2 * time.Second)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// cancel once the first repetition is stored, 0.5 s into the second
		for ctx.Err() == nil {
			if runs, err := results.OpenAll([]string{out}); err == nil && len(runs[0].Run.Done) == 1 {
				time.Sleep(500 * time.Millisecond)
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	var stdout, stderr bytes.Buffer
	code := runScale(ctx, &stdout, &stderr, cfg, s, 3, out, nil, "md")
	if code != 130 || !strings.Contains(stderr.String(), "interrupted; kept 1 finished repetitions") {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	runs, err := results.OpenAll([]string{out})
	if err != nil || runs[0].Run.Status != results.StatusPartial || len(runs[0].Reps) != 1 || !strings.Contains(runs[0].Run.Note, "interrupted during sidecar") {
		t.Fatalf("%v %+v", err, runs[0].Run)
	}
	if !strings.Contains(stdout.String(), "| sidecar | 1 | 3 |") {
		t.Errorf("the kept repetition is not in the summary:\n%s", stdout.String())
	}
	// Every agent is free again: a new run's check passes at once.
	cfg.Cost = false
	s.Profiles[0].Duration = scenario.Duration(time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for {
		stdout.Reset()
		stderr.Reset()
		if runScale(context.Background(), &stdout, &stderr, cfg, s, 1, t.TempDir(), nil, "md") == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("agents still busy 5 s after the interrupt: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestScaleCostFromPrometheus: with --prometheus the cost comes from its
// queries, the pods' groups still from the API server.
func TestScaleCostFromPrometheus(t *testing.T) {
	app := delayServer(t, time.Millisecond)
	cl := scaletest.New(scaletest.Options{Namespaces: 2, Mesh: true})
	defer cl.Close()
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("query")
		res := "[]"
		switch {
		case strings.HasPrefix(q, "count("):
			res = `[{"metric":{},"value":[1,"9"]}]`
		case strings.Contains(q, "increase("):
			res = `[{"metric":{"namespace":"scale-1","pod":"ratings-0","container":"istio-proxy"},"value":[1,"0.5"]},
			        {"metric":{"namespace":"istio-system","pod":"ztunnel-abc","container":"istio-proxy"},"value":[1,"0.25"]},
			        {"metric":{"namespace":"scale-2","pod":"fortio-0","container":"fortio"},"value":[1,"3"]}]`
		}
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":` + res + `}}`))
	}))
	defer prom.Close()
	cfg := scaleConfig(cl.API.URL)
	cfg.AppURL, cfg.Prometheus = app.URL, prom.URL
	r, _ := scaleOneRep(t, cfg)
	c := clustercost.FromMetadata(r.EngineMetadata)
	if c == nil || c.Source != clustercost.PrometheusSource || c.MeshCPUSeconds != 0.75 || c.Groups[clustercost.GroupZtunnel].CPUSeconds != 0.25 ||
		c.Groups[clustercost.GroupClients].CPUSeconds != 3 || math.Abs(float64(c.QueriesPerMeshCore)-float64(r.Requests)/0.75) > 0.1 {
		t.Errorf("cost from Prometheus: %+v", c)
	}
	if cl.API.CallCount("summary") != 0 {
		t.Errorf("the summary API was read %d times with --prometheus", cl.API.CallCount("summary"))
	}
}

// scaleOneRep runs one repetition of the test scenario with cfg and returns
// the stored repetition and what the command printed.
func scaleOneRep(t *testing.T, cfg scale.Config) (results.Rep, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	out := t.TempDir()
	if code := runScale(context.Background(), &stdout, &stderr, cfg, scaleScenario(t), 1, out, nil, "md"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	runs, err := results.OpenAll([]string{out})
	if err != nil {
		t.Fatal(err)
	}
	return runs[0].Reps[0], stdout.String()
}
