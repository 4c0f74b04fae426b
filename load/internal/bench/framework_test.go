package bench

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

// measured is a Measure of one tuned row: svc spent cpuMS per request.
func measured(profile, svc string, cpuMS, p50 float64) *Measure {
	return &Measure{
		Table:    &compare.Table{Rows: []compare.Row{{Profile: profile, Target: "tuned", QPS: 1000, LatencyMS: map[string]float64{"p50": p50}}}},
		CPU:      map[string]map[string]float64{"tuned": {svc: cpuMS}},
		Requests: map[string]int64{"tuned": 1000},
	}
}

func frameworkOutcome(reviewsCPU float64) *Outcome {
	o := &Outcome{Plan: repoPlan(), Started: time.Now(), Finished: time.Now(), Timing: QuickTiming,
		Stacks:    []local.Config{{PortBase: 20080, Profile: "tuned"}, {PortBase: 20180, Profile: "legacy"}},
		Framework: map[string]*Measure{}, AloneBusy: map[string]*Measure{}, Ran: []string{"framework"}}
	for _, svc := range []string{"details", "ratings", "reviews", "productpage"} {
		o.Framework[svc] = measured("1000rps-10c", svc, 0.2, 0.5)
	}
	o.AloneBusy["details"] = measured("1000rps-10c", "details", 0.25, 0.6)
	o.AloneBusy["ratings"] = measured("1000rps-10c", "ratings", 0.35, 0.6)
	o.AloneBusy["reviews"] = measured("1000rps-10c", "reviews", reviewsCPU, 1.1)
	// productpage not measured at PageRate: its row stays unknown.
	return o
}

// TestFrameworkAllowance: a route may spend 1.5 floors plus one floor per
// upstream call; the verdicts and the table say which route is within it.
func TestFrameworkAllowance(t *testing.T) {
	rows := frameworkOutcome(0.45).FrameworkRows()
	want := map[string]struct {
		allowed float64
		known   bool
	}{"details": {0.3, true}, "ratings": {0.3, true}, "reviews": {0.5, true}, "productpage": {0.7, false}}
	for _, r := range rows {
		w := want[r.Service]
		if math.Abs(r.Allowed()-w.allowed) > 1e-9 || r.Known() != w.known {
			t.Errorf("%s: allowed %v known %v, want %v %v", r.Service, r.Allowed(), r.Known(), w.allowed, w.known)
		}
	}
	for _, c := range []struct {
		reviews float64
		met     string
	}{{0.45, "yes"}, {0.55, "no"}} {
		var b bytes.Buffer
		if err := Write(&b, frameworkOutcome(c.reviews), Config{Command: "bookload bench", Out: "results/x", Quick: true}); err != nil {
			panic(err)
		}
		out := b.String()
		if !strings.Contains(out, "## Framework floor") {
			t.Fatalf("no framework floor table:\n%s", out)
		}
		line := lineWith(out, "| framework | reviews `/reviews/0`: own CPU per request")
		if !strings.Contains(line, "| "+c.met+" |") && !strings.Contains(line, "| **"+c.met+"** |") {
			t.Errorf("reviews at %v ms against 0.5 allowed: verdict line %q, want %s", c.reviews, line, c.met)
		}
		if line := lineWith(out, "| framework | ratings `/ratings/0`: own CPU"); !strings.Contains(line, "| no |") {
			t.Errorf("ratings at 0.35 ms against 0.3 allowed: %q", line)
		}
	}
}

func lineWith(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestSummaryBeforeAfter: a summary survives JSON (missing numbers too) and
// an earlier one is set beside the run in BENCHMARKS.md.
func TestSummaryBeforeAfter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "summary.json")
	before := frameworkOutcome(0.9).Summarize("abc123")
	if err := WriteSummary(path, before); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSummary(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Apps != "abc123" || len(got.Framework) != len(repoPlan().Routes()) || !math.IsNaN(float64(got.PageP50)) || !math.IsNaN(float64(got.Framework[3].CPU)) {
		t.Errorf("summary after a round trip: %+v", got)
	}
	o := frameworkOutcome(0.45)
	o.Before = &got
	var b bytes.Buffer
	if err := Write(&b, o, Config{Command: "bookload bench", Out: "results/x", Quick: true}); err != nil {
		panic(err)
	}
	line := lineWith(b.String(), "| reviews `/reviews/0` at 1000 RPS: own CPU ms/req")
	if !strings.Contains(line, "| 0.900 | 0.450 | 0.50× |") {
		t.Errorf("before/after row %q, want 0.900 -> 0.450 (0.50×)", line)
	}
	if _, err := ReadSummary(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing summary was read")
	}
}
