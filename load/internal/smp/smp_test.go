package smp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// The SMP messages as written in SMP's protos (proto field names), to
// decode our output strictly: a field SMP does not have is an error.
type (
	smpConfig struct {
		SMPVersion string            `json:"smp_version"`
		ID         string            `json:"id"`
		Name       string            `json:"name"`
		Labels     map[string]string `json:"labels"`
		Clients    []struct {
			Internal          bool              `json:"internal"`
			LoadGenerator     string            `json:"load_generator"`
			Protocol          string            `json:"protocol"`
			Connections       int32             `json:"connections"`
			RPS               int64             `json:"rps"`
			Headers           map[string]string `json:"headers"`
			Cookies           map[string]string `json:"cookies"`
			Body              string            `json:"body"`
			ContentType       string            `json:"content_type"`
			EndpointURLs      []string          `json:"endpoint_urls"`
			SSLCertificate    string            `json:"ssl_certificate"`
			AdditionalOptions string            `json:"additional_options"`
		} `json:"clients"`
		Duration string `json:"duration"`
	}
	smpResult struct {
		SMPVersion  string            `json:"smp_version"`
		ID          string            `json:"id"`
		Labels      map[string]string `json:"labels"`
		StartTime   time.Time         `json:"start_time"`
		EndTime     time.Time         `json:"end_time"`
		LatenciesMS struct {
			Min, Average, P50, P90, P99, Max float64
		} `json:"latencies_ms"`
		ActualQPS    float64 `json:"actual_qps"`
		DetailsURI   string  `json:"details_uri"`
		TestID       string  `json:"test_id"`
		MeshConfigID string  `json:"mesh_config_id"`
		EnvID        string  `json:"env_id"`
	}
)

var (
	t0      = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	profile = scenario.Profile{Name: "100rps-10c", QPS: 100, Connections: 10, Duration: scenario.Duration(30 * time.Second)}
)

func run() *results.Loaded {
	sc := &scenario.Scenario{Name: "details-100rps-10c", Service: "details", Path: "/details/0", Profiles: []scenario.Profile{profile},
		Headers: []scenario.Header{{Name: "X-Test", Value: "1"}}}
	l := &results.Loaded{Dir: "results/x", Run: results.Run{ID: "2026-11-22T10-00-00Z_details-100rps-10c", Status: results.StatusComplete,
		Scenario: sc, Labels: map[string]string{"cluster": "kind"},
		Targets: []loadtarget.Target{{Name: "no-mesh", URL: "http://127.0.0.1:18080"}, {Name: "ambient", URL: "http://127.0.0.1:18081"}},
		Engines: map[string]string{"no-mesh": "bookload-agent", "ambient": "bookload-agent"}}}
	for r := 1; r <= 5; r++ {
		for i, tg := range []string{"no-mesh", "ambient"} {
			base := 0.6 + 0.1*float64(i) + 0.01*float64(r)
			s := latency.Summary{Count: 3000, Avg: base * 1.2, Min: base / 2, P50: base, P75: base * 1.1, P90: base * 1.3,
				P99: base * 3, P999: base * 5, P9999: base * 8, Max: base * 10}
			c := s
			c.P99 *= 1.1
			start := t0.Add(time.Duration(2*(r-1)+i) * 31 * time.Second)
			l.Reps = append(l.Reps, results.Rep{Scenario: sc.Name, Target: tg, Profile: profile, Repetition: r, Engine: "bookload-agent",
				Start: start, DurationSeconds: 30, RequestedQPS: 100, ActualQPS: 99.5 + 0.1*float64(r), Requests: 3000,
				Codes: map[string]int64{"200": 3000}, Latency: results.Latency{Plain: results.Distribution{SummaryMS: s}, Corrected: results.Distribution{SummaryMS: c}}})
		}
	}
	return l
}

func TestExport(t *testing.T) {
	doc, err := Export(run(), compare.Options{Baseline: "no-mesh", Margins: compare.Margins{"p99": 1}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := doc.Write(&buf); err != nil {
		t.Fatal(err)
	}
	var raw struct {
		SMPVersion string            `json:"smp_version"`
		Configs    []json.RawMessage `json:"configs"`
		Results    []struct {
			Result   json.RawMessage `json:"performance_test_result"`
			Bookload json.RawMessage `json:"bookload"`
		} `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.SMPVersion != "v0.6.1" || len(raw.Configs) != 1 || len(raw.Results) != 2 {
		t.Fatalf("document: %s", buf.String())
	}
	strict := func(b []byte, v any) {
		t.Helper()
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("not an SMP message: %v\n%s", err, b)
		}
	}

	var c smpConfig
	strict(raw.Configs[0], &c)
	if c.SMPVersion != Version || c.ID != "2026-11-22T10-00-00Z_details-100rps-10c/100rps-10c" || c.Duration != "30s" || len(c.Clients) != 2 ||
		c.Clients[1].LoadGenerator != "bookload-agent" || c.Clients[1].RPS != 100 || c.Clients[1].Connections != 10 ||
		c.Clients[1].Protocol != "PROTOCOL_HTTP" || c.Clients[1].EndpointURLs[0] != "http://127.0.0.1:18081/details/0" ||
		c.Clients[1].Headers["X-Test"] != "1" || c.Labels["cluster"] != "kind" {
		t.Errorf("config %+v", c)
	}

	var r smpResult
	strict(raw.Results[1].Result, &r)
	// ambient: p50 = 0.7 + 0.01·rep, median over reps 1..5 = 0.73.
	l := r.LatenciesMS
	if r.ID != "2026-11-22T10-00-00Z_details-100rps-10c/100rps-10c/ambient" || r.MeshConfigID != "ambient" || r.TestID == "" ||
		!near(l.P50, 0.73) || !near(l.P99, 2.19) || !near(l.P90, 0.949) || !near(l.Average, 0.876) || !near(l.Min, 0.355) || !near(l.Max, 7.5) ||
		!near(r.ActualQPS, 99.8) || r.Labels["target"] != "ambient" || r.Labels["engine"] != "bookload-agent" || r.Labels["cluster"] != "kind" {
		t.Errorf("result %+v", r)
	}
	if !r.StartTime.Equal(t0.Add(31*time.Second)) || !r.EndTime.Equal(t0.Add(9*31*time.Second+30*time.Second)) {
		t.Errorf("times %v .. %v", r.StartTime, r.EndTime)
	}

	// Ours: what SMP lacks.
	var ours struct {
		Target      string               `json:"target"`
		N           int                  `json:"n"`
		LatencyMS   map[string]float64   `json:"latency_ms"`
		LatencyCIMS map[string][]float64 `json:"latency_ci_ms"`
		CorrectedMS map[string]float64   `json:"corrected_latency_ms"`
		Difference  map[string]compare.Difference
		Repetitions []struct {
			Repetition int                `json:"repetition"`
			Latency    map[string]float64 `json:"latency_ms"`
		} `json:"repetitions"`
	}
	if err := json.Unmarshal(raw.Results[1].Bookload, &ours); err != nil {
		t.Fatal(err)
	}
	if ours.Target != "ambient" || ours.N != 5 || !near(ours.LatencyMS["p99.9"], 3.65) || len(ours.LatencyCIMS["p99"]) != 2 ||
		ours.CorrectedMS["p99"] <= ours.LatencyMS["p99"] || len(ours.Repetitions) != 5 || !near(ours.Repetitions[0].Latency["p99.9"], 3.55) {
		t.Errorf("bookload fields %+v", ours)
	}
	d := ours.Difference["p99"]
	if d.Verdict == nil || d.Verdict.Result != compare.Within || d.Pairs != 5 || d.Line == "" {
		t.Errorf("p99 difference %+v", d)
	}
}

func TestExportErrors(t *testing.T) {
	if _, err := Export(run(), compare.Options{Baseline: "sidecar"}); err == nil || err.Error() != "--baseline sidecar: not a target of these runs (targets: no-mesh, ambient)" {
		t.Errorf("unknown baseline: %v", err)
	}
	l := run()
	l.Reps = nil
	if _, err := Export(l, compare.Options{}); err == nil || err.Error() != "results/x: no finished repetition to export" {
		t.Errorf("no repetitions: %v", err)
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
