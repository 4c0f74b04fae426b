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

// demoTable is a legacy-vs-tuned table with the tuned row's differences.
func demoTable(sc string, diffs map[string]compare.Difference) *compare.Table {
	return &compare.Table{Baseline: "legacy", Rows: []compare.Row{
		{Scenario: sc, Target: "legacy", Baseline: true},
		{Scenario: sc, Target: "tuned", Difference: diffs},
	}}
}

func verdict(result string, need int) *compare.Verdict {
	return &compare.Verdict{MarginMS: 1, Result: result, RepetitionsNeeded: need}
}

// TestSummary: each verdict is said in words with its cause, noise as noise
// with its spread, and a missed rate with what limited it.
func TestSummary(t *testing.T) {
	scs := []*scenario.Scenario{
		{Name: "demo-details", Service: "details", Description: "details"},
		{Name: "demo-page", Service: "productpage", Description: "page"},
	}
	tables := []*compare.Table{
		demoTable("demo-details", map[string]compare.Difference{
			"p50": {Pairs: 5, MeanMS: -0.46, SDMS: 0.3, Verdict: verdict(compare.Within, 0), Line: "tuned vs legacy, demo-details: p50 -0.460 ms [-0.820, -0.100], within 1 ms"},
			"p99": {Pairs: 5, MeanMS: -38.2, SDMS: 2.5, Verdict: verdict(compare.Faster, 0), Line: "tuned vs legacy, demo-details: p99 -38.2 ms [-41.3, -35.0], faster by more than 1 ms"},
			"avg": {Pairs: 5, MeanMS: -2.5}, // no margin: not a statement
		}),
		demoTable("demo-page", map[string]compare.Difference{
			"p50": {Pairs: 5, MeanMS: -0.3, SDMS: 0.2, Verdict: verdict(compare.Within, 0), Line: "p50 line"},
			"p99": {Pairs: 5, MeanMS: -2, SDMS: 6.5, Verdict: verdict(compare.Inconclusive, 40), Line: "p99 line (about 40 repetitions would decide it)"},
		}),
	}
	limits := [][]string{nil, {"demo-page legacy reached 97.3 of 100 RPS: the CPUs were taken"}}
	stops := []string{"decided after 6 repetitions, 41s of its 2m0s budget share", "budget spent after 9 repetitions, 3m10s of its 3m19s budget share"}
	got := Summary(scs, tables, limits, stops)
	if lines := strings.Count(got, "\n"); lines > 25 {
		t.Errorf("the summary of two scenarios takes %d lines; the demo's answer must fit one screen:\n%s", lines, got)
	}
	for _, l := range strings.Split(got, "\n") {
		if !strings.HasPrefix(l, "- ") && len([]rune(l)) > width {
			t.Errorf("a paragraph line wider than %d columns: %q", width, l)
		}
	}
	if !strings.Contains(got, "demo-details, decided after 6 repetitions, 41s of its 2m0s budget share:") {
		t.Errorf("summary does not say how the details run stopped:\n%s", got)
	}
	got = strings.Join(strings.Fields(got), " ") // the paragraphs are wrapped
	for _, want := range []string{
		"- tuned vs legacy, demo-details: p99 -38.2 ms [-41.3, -35.0], faster by more than 1 ms",
		"Significant: tuned is faster at p99, by up to 38.2 ms. The cause is details' TCP_NODELAY",
		"At p50 the two profiles are the same within 1 ms: details' TCP_NODELAY costs less than that here.",
		"- p99 line (about 40 repetitions would decide it)",
		"Noise at p99: in the time given this run cannot tell whether keep-alive in productpage matters there (its 5 repetition pairs differ from each other by 6.50 ms",
		"Rate not held: demo-page legacy reached 97.3 of 100 RPS: the CPUs were taken.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "avg") {
		t.Errorf("a metric without a margin got a statement:\n%s", got)
	}
	if got := Summary(scs[:1], []*compare.Table{{}}, [][]string{nil}, nil); !strings.HasPrefix(got, "No comparison could be made") {
		t.Errorf("a table without both targets must not claim a result: %s", got)
	}
}

// TestLimit: a row that held its rate says nothing; one that missed it is
// put down to a busy machine, to too few connections for its latency, or
// else to a pause.
func TestLimit(t *testing.T) {
	row := func(qps, avg float64) compare.Row {
		return compare.Row{Scenario: "demo-page", Target: "tuned", QPS: qps, TargetQPS: 100, LatencyMS: map[string]float64{"avg": avg}}
	}
	quiet := cpuUse{cpus: 2, shareBusy: 0.5, self: 0.1, stacks: 0.8}
	busy := cpuUse{cpus: 2, shareBusy: 0.97, self: 0.1, stacks: 0.8}
	for _, c := range []struct {
		name string
		r    compare.Row
		use  cpuUse
		want string // "" for no statement
	}{
		{"held", row(99.5, 20), busy, ""},
		{"busy machine", row(97.3, 40), busy, "the CPUs were taken (the machine's 2.0 CPUs 97% busy: both stacks 0.80 CPUs, bookload 0.10, other processes 1.04)"},
		{"slow answers", row(90, 110), quiet, "at 110.0 ms per answer, 10 connections carry at most about 91 RPS"},
		{"pause", row(97, 20), quiet, "a pause in a service or in bookload"},
	} {
		got := limit(c.r, 10, c.use)
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestConfigRejectsOverlappingStacks(t *testing.T) {
	c := Config{TunedBase: 9080, LegacyBase: 9082}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("overlapping port bases: %v", err)
	}
	c = Config{TunedBase: 9080, LegacyBase: 9180}
	if err := c.Validate(); err != nil || c.Out != "results" || c.Margins["p99"] != 1 || c.Budget != DefaultBudget || c.Decide[0] != "p50" {
		t.Errorf("valid config: %v %+v", err, c)
	}
	c = Config{TunedBase: 9080, LegacyBase: 9180, Margins: compare.Margins{"p99": 1}}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "decide on p50: it has no margin") {
		t.Errorf("deciding on a metric without a margin: %v", err)
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
	path, err := writeReport(out, dirs, DefaultMargins())
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
