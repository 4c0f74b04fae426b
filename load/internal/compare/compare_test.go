package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

var profile = scenario.Profile{Name: "100rps-10c", QPS: 100, Connections: 10, Duration: scenario.Duration(30 * time.Second)}

// synthRep makes a repetition whose latencies scale with base (ms at p50).
func synthRep(tg string, rep int, base, p99 float64, qps float64, errs int64) results.Rep {
	s := latency.Summary{Count: 3000, Avg: base * 1.2, Min: base / 2, P50: base, P75: base * 1.15, P90: base * 1.3, P99: p99, P999: p99 * 1.5, P9999: p99 * 2, Max: p99 * 3}
	c := s
	c.P99, c.P999 = p99*1.1, p99*1.8
	codes := map[string]int64{"200": 3000 - errs}
	if errs > 0 {
		codes["503"] = errs
	}
	return results.Rep{Scenario: "details-100rps-10c", Target: tg, Profile: profile, Repetition: rep,
		RequestedQPS: 100, ActualQPS: qps, Requests: 3000, Errors: errs, Codes: codes,
		Latency: results.Latency{Plain: results.Distribution{SummaryMS: s}, Corrected: results.Distribution{SummaryMS: c}}}
}

// synthRun: two targets, n repetitions each; tuned's p50 is 10% lower, its p99
// drawn from the same distribution as legacy's.
func synthRun(n int, tunedQPS float64, tunedErrs int64) *results.Loaded {
	rng := rand.New(rand.NewPCG(11, 12))
	noise := func() float64 { return 1 + 0.02*rng.NormFloat64() }
	sc := &scenario.Scenario{Name: "details-100rps-10c", Profiles: []scenario.Profile{profile}}
	l := &results.Loaded{Dir: "results/x", Run: results.Run{ID: "x", Status: results.StatusComplete, Scenario: sc,
		Targets: []loadtarget.Target{{Name: "legacy"}, {Name: "tuned"}}}}
	for r := 1; r <= n; r++ {
		l.Reps = append(l.Reps,
			synthRep("legacy", r, 0.64*noise(), 2.6*(1+0.2*rng.NormFloat64()), 100, 0),
			synthRep("tuned", r, 0.576*noise(), 2.6*(1+0.2*rng.NormFloat64()), tunedQPS, tunedErrs))
	}
	return l
}

func TestDifferenceDetected(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthRun(6, 100, 0)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Rows) != 2 || tb.Baseline != "legacy" || !tb.Rows[0].Baseline || tb.Rows[1].Target != "tuned" {
		t.Fatalf("rows %+v", tb.Rows)
	}
	d := tb.Rows[1].VsBaseline["p50"]
	if !d.Significant || d.DeltaPct > -5 || d.DeltaPct < -15 || d.DeltaMS > 0 {
		t.Errorf("p50 change %+v, want a significant drop of about 10%%", d)
	}
	if tb.Rows[1].VsBaseline["p99"].Significant {
		t.Errorf("p99 from identical distributions called significant: %+v", tb.Rows[1].VsBaseline["p99"])
	}
	if len(tb.Warnings) != 0 {
		t.Errorf("warnings %v", tb.Warnings)
	}
	if med := tb.Rows[0].LatencyMS["p50"]; med < 0.6 || med > 0.68 {
		t.Errorf("baseline p50 median %.3f", med)
	}
	if ci := tb.Rows[0].LatencyCIMS["p50"]; ci[0] > tb.Rows[0].LatencyMS["p50"] || ci[1] < tb.Rows[0].LatencyMS["p50"] {
		t.Errorf("CI %v does not hold the median", ci)
	}

	var md bytes.Buffer
	if err := tb.Write(&md, "md"); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	for _, want := range []string{
		"## details-100rps-10c",
		"| profile | target | n | qps | errors | avg | p50 | p75 | p90 | p99 | p99.9 |",
		"| 100rps-10c | legacy (baseline) | 6 | 100.0 | 0 |",
		"| | Δ tuned | | | |",
		"Corrected for coordinated omission",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`\| -\d+\.\d% \(-0\.0\d+\) p=0\.\d+ \|`).MatchString(out) {
		t.Errorf("markdown lacks a significant p50 change cell:\n%s", out)
	}
	if !strings.Contains(out, "~ (p=") {
		t.Errorf("markdown lacks a ~ cell:\n%s", out)
	}
}

func TestTooFewRepetitions(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthRun(3, 100, 0)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for m, d := range tb.Rows[1].VsBaseline {
		if d.Significant || d.Detectable {
			t.Errorf("%s: %+v; 3 against 3 can never be significant", m, d)
		}
	}
	notes := strings.Join(tb.Notes, "\n")
	if !strings.Contains(notes, "3 against 3 repetitions can never reach p < 0.05") || !strings.Contains(notes, "--repetitions 4") {
		t.Errorf("notes do not say how many repetitions are needed: %q", notes)
	}
	if !strings.Contains(notes, "75.0% confidence; 6 repetitions give 95%") {
		t.Errorf("notes do not qualify the interval: %q", notes)
	}
}

func TestWarnings(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthRun(4, 90, 12)}, Options{Baseline: "tuned"})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Rows[0].Target != "tuned" || !tb.Rows[0].Baseline {
		t.Errorf("baseline row %+v", tb.Rows[0])
	}
	w := strings.Join(tb.Warnings, "\n")
	if !strings.Contains(w, "achieved 90.0 qps, 10.0% below the 100 requested, in 4 of 4 repetitions") {
		t.Errorf("no rate warning: %q", w)
	}
	if !strings.Contains(w, "48 errors in 12000 requests (0.40%): HTTP 503 ×48") {
		t.Errorf("no error warning: %q", w)
	}
	var md bytes.Buffer
	_ = tb.Write(&md, "md")
	if !strings.HasPrefix(md.String(), "> **WARNING**") || !strings.Contains(md.String(), "90.0 of 100 !") || !strings.Contains(md.String(), "| 48 ! |") {
		t.Errorf("markdown does not warn loudly:\n%s", md.String())
	}
	if _, err := Build([]*results.Loaded{synthRun(4, 100, 0)}, Options{Baseline: "nope"}); err == nil || !strings.Contains(err.Error(), "targets: legacy, tuned") {
		t.Errorf("unknown baseline: %v", err)
	}
}

// TestJSONSchema checks the documented --format json shape.
func TestJSONSchema(t *testing.T) {
	tb, _ := Build([]*results.Loaded{synthRun(5, 100, 0)}, Options{})
	var buf bytes.Buffer
	if err := tb.Write(&buf, "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []struct {
			Profile    string             `json:"profile"`
			Target     string             `json:"target"`
			N          int                `json:"n"`
			QPS        *float64           `json:"qps"`
			Errors     *int64             `json:"errors"`
			LatencyMS  map[string]float64 `json:"latency_ms"`
			VsBaseline map[string]struct {
				DeltaPct    *float64 `json:"delta_pct"`
				DeltaMS     *float64 `json:"delta_ms"`
				PValue      *float64 `json:"p_value"`
				Significant *bool    `json:"significant"`
			} `json:"vs_baseline"`
		} `json:"rows"`
	}
	dec := json.NewDecoder(&buf)
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rows) != 2 {
		t.Fatalf("%d rows", len(doc.Rows))
	}
	for _, r := range doc.Rows {
		if r.Profile == "" || r.Target == "" || r.N != 5 || r.QPS == nil || r.Errors == nil {
			t.Errorf("row %+v", r)
		}
		for _, m := range []string{"avg", "p50", "p75", "p90", "p99", "p99.9"} {
			if _, ok := r.LatencyMS[m]; !ok {
				t.Errorf("latency_ms lacks %s", m)
			}
		}
	}
	if doc.Rows[0].VsBaseline != nil {
		t.Error("the baseline row compares with itself")
	}
	d := doc.Rows[1].VsBaseline["p50"]
	if d.DeltaPct == nil || d.DeltaMS == nil || d.PValue == nil || d.Significant == nil {
		t.Errorf("vs_baseline.p50 incomplete: %+v", d)
	}
}

func TestCSVAndBench(t *testing.T) {
	tb, _ := Build([]*results.Loaded{synthRun(4, 100, 0)}, Options{})
	var buf bytes.Buffer
	if err := tb.Write(&buf, "csv"); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 5 || recs[0][4] != "latency" || recs[1][4] != "plain" || recs[2][4] != "corrected" {
		t.Errorf("csv: %v", recs[:2])
	}
	buf.Reset()
	if err := tb.Write(&buf, "bench"); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`^BenchmarkBookload/scenario=details-100rps-10c/profile=100rps-10c/target=(legacy|tuned) 3000( [0-9.e+-]+ [a-z0-9.-]+)+$`)
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.HasPrefix(l, "Benchmark") {
			n++
			if !line.MatchString(l) {
				t.Errorf("not a benchmark line: %q", l)
			}
		}
	}
	if n != 8 {
		t.Errorf("%d benchmark lines, want one per repetition (8)", n)
	}
	if err := tb.Write(&buf, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
}

func TestRunsFromDifferentRuns(t *testing.T) {
	a, b := synthRun(4, 100, 0), synthRun(4, 100, 0)
	a.Run.ID, b.Run.ID = "a", "b"
	a.Run.Targets, b.Run.Targets = a.Run.Targets[:1], b.Run.Targets[1:]
	a.Reps, b.Reps = filter(a.Reps, "legacy"), filter(b.Reps, "tuned")
	b.Run.Status, b.Run.Note = results.StatusPartial, "interrupted during tuned 100rps-10c rep 5 (not kept)"
	tb, err := Build([]*results.Loaded{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(tb.Notes, "\n")
	if !strings.Contains(notes, "tuned and legacy come from different runs, not interleaved") || !strings.Contains(notes, "run b is partial") {
		t.Errorf("notes %q", notes)
	}
}

func filter(reps []results.Rep, tg string) []results.Rep {
	var out []results.Rep
	for _, r := range reps {
		if r.Target == tg {
			out = append(out, r)
		}
	}
	return out
}
