package bench

import (
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/proc"
)

// latency is a Measure at the base profile with one row per stack: p50 and
// p99 (p99.9 twice p99) in ms.
func latency(target string, p50, p99 float64, more ...any) *Measure {
	m := &Measure{Table: &compare.Table{}, CPU: map[string]map[string]float64{}, Requests: map[string]int64{}}
	add := func(target string, p50, p99 float64) {
		m.Table.Rows = append(m.Table.Rows, compare.Row{Profile: "100rps-10c", Target: target, QPS: 100,
			LatencyMS: map[string]float64{"p50": p50, "p99": p99, "p99.9": 2 * p99}})
	}
	add(target, p50, p99)
	for i := 0; i+2 < len(more); i += 3 {
		add(more[i].(string), more[i+1].(float64), more[i+2].(float64))
	}
	return m
}

// judged is the outcome of a bench that ran parts on synthetic measurements:
// the floor's p50 is 0.1 ms, details' tuned p50 detailsP50, legacy's p99
// 45 ms against tuned's 1 ms, the page 3 ms p50.
func judged(detailsP50 float64, hwmMB int64, parts ...string) []Verdict {
	o := &Outcome{Plan: repoPlan(), Ran: parts, Timing: QuickTiming, Started: time.Now(),
		Floor:        map[bool]*Measure{false: latency("echo", 0.1, 0.2), true: latency("echo", 0.1, 0.2)},
		FloorProcess: map[bool]*Measure{},
		Alone: map[string]map[bool]*Measure{
			"details": {false: latency("tuned", detailsP50, 1, "legacy", 30.0, 45.0), true: latency("tuned", detailsP50, 1)},
			"page":    {false: latency("tuned", 6, 12), true: latency("tuned", 3, 8)},
		},
		AloneBusy: map[string]*Measure{},
		Usage:     map[string]map[string]proc.Usage{"tuned": {"reviews": {HWMkB: hwmMB * 1024}}},
	}
	return Judge(o)
}

// TestJudge: the judge turns synthetic measurements into verdicts, met or
// not by the plan's thresholds, each with its part and targets.
func TestJudge(t *testing.T) {
	vs := judged(0.15, 300, "floor", "details", "page", "memory")
	want := []struct {
		part, target string
		met          bool
	}{
		{"details", "service_p50_floors", true}, // uniform: 1.5 floors, p99.9 2 ms
		{"details", "service_p50_floors", true}, // burst
		{"details", "legacy_details_p99_factor", true},
		{"page", "page_p50_ms", true},  // uniform: 3 ms, 8 ms
		{"page", "page_p50_ms", false}, // burst: 6 ms p50
		{"memory", "total_rss_mb", true},
	}
	if len(vs) != len(want) {
		t.Fatalf("%d verdicts, want %d: %+v", len(vs), len(want), vs)
	}
	for i, w := range want {
		v := vs[i]
		if v.Part != w.part || v.Targets[0] != w.target || !v.Known || v.Met != w.met {
			t.Errorf("verdict %d: %s %v known %v met %v, want %s %s met %v", i, v.Part, v.Targets, v.Known, v.Met, w.part, w.target, w.met)
		}
	}
	if !strings.Contains(vs[2].Measured, "45.0 ms vs tuned 1.00 ms: 45.0×") {
		t.Errorf("Nagle verdict measured %q", vs[2].Measured)
	}

	// 3 floors is over the 2 allowed, and the analysis says why; 900 MB is
	// over the budget.
	vs = judged(0.3, 900, "floor", "details", "memory")
	if v := vs[0]; v.Met || !strings.Contains(v.Analysis, "per-request service time") {
		t.Errorf("details at 3 floors: met %v, analysis %q", v.Met, v.Analysis)
	}
	if v := vs[len(vs)-1]; v.Met || v.Measured != "900 MB (reviews' JVM 900 MB)" {
		t.Errorf("900 MB: met %v, measured %q", v.Met, v.Measured)
	}

	// A part that ran but measured nothing is unknown, never met.
	for _, v := range judged(0.15, 0, "maxrate", "memory") {
		if v.Known || v.Met {
			t.Errorf("%s %v: known %v met %v with nothing measured", v.Part, v.Targets, v.Known, v.Met)
		}
	}
}
