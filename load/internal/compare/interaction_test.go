package compare

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/loadtarget"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/results"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/scenario"
)

// synthMatrix is one run of the four cells of a knob × mode matrix, reps
// interleaved repetitions of 3000 requests each: nagle adds knob ms under
// no-mesh and knob+interaction under ambient, ambient adds 0.3 ms, and
// each repetition's drift is shared by the four cells.
func synthMatrix(seed uint64, reps int, knob, interaction float64) *results.Loaded {
	rng := rand.New(rand.NewPCG(seed, 7))
	shift := map[string]float64{
		"no-mesh.nodelay": 0, "no-mesh.nagle": knob,
		"ambient.nodelay": 0.3, "ambient.nagle": 0.3 + knob + interaction,
	}
	names := []string{"no-mesh.nodelay", "no-mesh.nagle", "ambient.nodelay", "ambient.nagle"}
	sc := &scenario.Scenario{Name: "matrix-details", Profiles: []scenario.Profile{profile}}
	l := &results.Loaded{Dir: "results/m", Run: results.Run{ID: "m", Status: results.StatusComplete, Scenario: sc}}
	for _, n := range names {
		l.Run.Targets = append(l.Run.Targets, loadtarget.Target{Name: n})
	}
	for r := 1; r <= reps; r++ {
		drift := rng.Float64()
		for _, tg := range names {
			s := synthSummary(rng, 3000, drift+shift[tg])
			l.Reps = append(l.Reps, results.Rep{Scenario: sc.Name, Target: tg, Profile: profile, Repetition: r,
				RequestedQPS: 100, ActualQPS: 100, Requests: 3000, Codes: map[string]int64{"200": 3000},
				Latency: results.Latency{Plain: results.Distribution{SummaryMS: s}, Corrected: results.Distribution{SummaryMS: s}}})
		}
	}
	return l
}

func TestInteractionInTable(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthMatrix(1, 6, 2, 0.5)}, Options{Baseline: "no-mesh.nodelay"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Interactions) != 1 {
		t.Fatalf("interactions %+v, want one (nagle x ambient)", tb.Interactions)
	}
	in := tb.Interactions[0]
	if in.Mode != "ambient" || in.Setting != "nagle" || in.BaseMode != "no-mesh" || in.BaseSetting != "nodelay" {
		t.Fatalf("cell %+v", in)
	}
	p50 := in.Metrics["p50"]
	if p50.Pairs != 6 || p50.CIMS == nil || p50.CIMS[0] > 0.5 || p50.CIMS[1] < 0.5 {
		t.Errorf("p50 interaction %+v, want an interval covering 0.5 ms", p50)
	}
	if math.Abs(p50.EffectWithoutMS-2) > 0.1 || math.Abs(p50.EffectUnderMS-2.5) > 0.1 {
		t.Errorf("effects %.3f without, %.3f under; want 2 and 2.5", p50.EffectWithoutMS, p50.EffectUnderMS)
	}
	var md bytes.Buffer
	if err := tb.Write(&md, "md"); err != nil {
		t.Fatal(err)
	}
	want := "- nagle x ambient vs nodelay x no-mesh, matrix-details 100rps-10c: p50 interaction +0.497 ms ["
	if !strings.Contains(md.String(), want) {
		t.Errorf("markdown lacks %q:\n%s", want, md.String())
	}
}

// TestNoInteractionCoversZero: the knob has the same effect under both
// modes; the p50 interaction's interval covers 0 in at least 95% of seeded
// trials (less three binomial standard errors of the trial count).
func TestNoInteractionCoversZero(t *testing.T) {
	const trials = 300
	covered := 0
	for seed := range uint64(trials) {
		tb, err := Build([]*results.Loaded{synthMatrix(seed, 5, 2, 0)}, Options{Baseline: "no-mesh.nodelay"})
		if err != nil {
			t.Fatal(err)
		}
		if ci := tb.Interactions[0].Metrics["p50"].CIMS; ci != nil && ci[0] <= 0 && ci[1] >= 0 {
			covered++
		}
	}
	if rate, bound := float64(covered)/trials, 0.95-3*math.Sqrt(0.95*0.05/trials); rate < bound {
		t.Errorf("covered 0 in %.1f%% of trials, want at least %.1f%%", 100*rate, 100*bound)
	}
}

func TestNoMatrixWithoutCells(t *testing.T) {
	tb, err := Build([]*results.Loaded{synthPairedRun(1, 4, 0)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.Interactions) != 0 {
		t.Errorf("interactions from targets that are not MODE.SETTING: %+v", tb.Interactions)
	}
}

func TestThroughputRow(t *testing.T) {
	l := synthPairedRun(1, 4, 0)
	for i := range l.Reps {
		r := &l.Reps[i]
		r.DurationSeconds = 2
		// 256 KiB answers at 3000 requests: 6.29 Gbit in 2 s.
		r.EngineMetadata = map[string]any{"bytes_received": float64(3000 * 262144), "bytes_sent": float64(0), "process_cpu_seconds": 1.5}
	}
	tb, err := Build([]*results.Loaded{l}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tp := tb.Rows[0].Throughput
	if tp == nil || tp.N != 4 || math.Abs(tp.GbitPerS.Median-3.146) > 0.001 || math.Abs(tp.ProcessCoresPerGbit.Median-1.5/6.291) > 0.001 {
		t.Fatalf("throughput %+v", tp)
	}
	var md bytes.Buffer
	if err := tb.Write(&md, "md"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| 100rps-10c | no-mesh | 4 | 3.15 [3.15..3.15] | 0.238 [0.238..0.238] | n/a | n/a |") {
		t.Errorf("markdown lacks the throughput row:\n%s", md.String())
	}
	// A latency scenario's small answers are no throughput measurement.
	for i := range l.Reps {
		l.Reps[i].EngineMetadata["bytes_received"] = float64(3000 * 1100)
	}
	if tb, _ := Build([]*results.Loaded{l}, Options{}); tb.Rows[0].Throughput != nil {
		t.Errorf("throughput shown for 1.1 kB answers: %+v", tb.Rows[0].Throughput)
	}
}
