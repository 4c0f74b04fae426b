package demo

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/runner"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

func TestSentenceReportsVerdicts(t *testing.T) {
	scs := []*scenario.Scenario{{Name: "demo-details", Service: "details"}, {Name: "demo-page", Service: "productpage"}}
	tables := []*compare.Table{
		{Rows: []compare.Row{
			{Target: "legacy", Baseline: true, LatencyMS: map[string]float64{"p50": 0.9, "p99": 41.3}},
			{Target: "tuned", LatencyMS: map[string]float64{"p50": 0.5, "p99": 1.2}, VsBaseline: map[string]compare.Delta{
				"p50": {DeltaPct: -44.4, Significant: true, Detectable: true},
				"p99": {DeltaPct: -97.1, Significant: true, Detectable: true},
			}},
		}},
		{Rows: []compare.Row{
			{Target: "legacy", Baseline: true, LatencyMS: map[string]float64{"p50": 5, "p99": 9}},
			{Target: "tuned", LatencyMS: map[string]float64{"p50": 4.9, "p99": 9.1}, VsBaseline: map[string]compare.Delta{
				"p50": {DeltaPct: -2, Significant: false, Detectable: true},
				"p99": {DeltaPct: 1, Significant: false, Detectable: false},
			}},
		}},
	}
	got := Sentence(scs, tables)
	for _, want := range []string{
		"details p50 from 0.90 ms to 0.50 ms -44%",
		"p99 from 41.30 ms to 1.20 ms -97%",
		"productpage p50 from 5.00 ms to 4.90 ms ~ (within noise)",
		"p99 from 9.00 ms to 9.10 ms (too few repetitions to tell)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("sentence lacks %q:\n%s", want, got)
		}
	}
	if Sentence(scs, []*compare.Table{{}}) != "No comparison could be made." {
		t.Error("a table without both targets must not claim a result")
	}
}

func TestConfigRejectsOverlappingStacks(t *testing.T) {
	c := Config{TunedBase: 9080, LegacyBase: 9082}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping port bases: %v", err)
	}
	c = Config{TunedBase: 9080, LegacyBase: 9180}
	if err := c.Validate(); err != nil || c.Out != "results" {
		t.Errorf("valid config: %v %+v", err, c)
	}
}

// TestWritesReport: the demo's report step writes <out>/demo-report.html from
// its runs (here two short real fortio runs against a loopback server).
func TestWritesReport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) }))
	defer srv.Close()
	out := t.TempDir()
	var dirs []string
	for _, name := range []string{"demo-details", "demo-page"} {
		s := &scenario.Scenario{Name: name, Service: "details", Path: "/", Repetitions: 2, KeepAlive: true,
			Timeout:  scenario.Duration(time.Second),
			Profiles: []scenario.Profile{{Name: "50rps-2c", QPS: 50, Connections: 2, Duration: scenario.Duration(300 * time.Millisecond)}}}
		res, err := runner.Run(context.Background(), runner.Config{Scenario: s, Out: out,
			Targets: []loadtarget.Target{{Name: "legacy", URL: srv.URL}, {Name: "tuned", URL: srv.URL}}})
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, res.Dir)
	}
	path, err := writeReport(out, dirs)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(out, ReportFile) {
		t.Errorf("path %s", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"bookload demo: tuned vs legacy", "legacy (baseline)", `data-kind="percentiles"`, "demo-page"} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
