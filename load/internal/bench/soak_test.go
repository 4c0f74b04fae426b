package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/compare"
	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

func TestSlope(t *testing.T) {
	cases := []struct {
		name   string
		xs, ys []float64
		want   float64
	}{
		{"a line", []float64{0, 1, 2, 3}, []float64{5, 7, 9, 11}, 2},
		{"flat", []float64{0, 1, 2}, []float64{3, 3, 3}, 0},
		{"falling", []float64{0, 2, 4}, []float64{10, 9, 8}, -0.5},
		// y = x with pairs swapped: sxy 14.5 over sxx 17.5.
		{"noisy", []float64{0, 1, 2, 3, 4, 5}, []float64{1, 0, 3, 2, 5, 4}, 14.5 / 17.5},
	}
	for _, c := range cases {
		if got := slope(c.xs, c.ys); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: slope %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range [][2][]float64{{{1}, {1}}, {{2, 2}, {1, 3}}, {{1, 2}, {1}}, {nil, nil}} {
		if got := slope(c[0], c[1]); !math.IsNaN(got) {
			t.Errorf("slope(%v, %v) = %v, want NaN", c[0], c[1], got)
		}
	}
}

// soakOf makes a soak of n samples every 30 s in which each service's RSS
// grows by perMin[svc] MB per minute from 100 MB, plus wobble MB up and
// down on alternate samples.
func soakOf(n int, perMin map[string]float64, wobble float64) *Soak {
	so := &Soak{Duration: time.Duration(n-1) * 30 * time.Second, Interval: 30 * time.Second, Rate: 200, Conns: 20}
	for i := 0; i < n; i++ {
		at := time.Duration(i) * 30 * time.Second
		smp := SoakSample{At: at, RSSkB: map[string]int64{}}
		for _, svc := range local.Services {
			mb := 100 + perMin[svc]*at.Minutes()
			if i%2 == 1 {
				mb += wobble
			} else {
				mb -= wobble
			}
			smp.RSSkB[svc] = int64(mb * 1024)
		}
		so.Samples = append(so.Samples, smp)
	}
	return so
}

func TestSoakSlopeIsMBPer10Minutes(t *testing.T) {
	so := soakOf(61, map[string]float64{"reviews": 1, "ratings": 0.1}, 0)
	for svc, want := range map[string]float64{"productpage": 0, "details": 0, "reviews": 10, "ratings": 1, "": 11} {
		if got := so.Slope(svc); math.Abs(got-want) > 0.01 {
			t.Errorf("slope of %q: %.3f MB per 10 min, want %v", svc, got, want)
		}
	}
	// A wobble of ±5 MB (a GC cycle) over 30 minutes barely moves the fit.
	if got := soakOf(61, nil, 5).Slope("reviews"); math.Abs(got) > 0.1 {
		t.Errorf("slope of pure wobble: %.3f MB per 10 min", got)
	}
	if (&Soak{Samples: soakOf(2, nil, 0).Samples}).Known() || (*Soak)(nil).Known() || !soakOf(3, nil, 0).Known() {
		t.Error("Known: want three samples or more")
	}
}

func TestSoakInterval(t *testing.T) {
	for _, c := range []struct{ d, every, want time.Duration }{
		{30 * time.Minute, 30 * time.Second, 30 * time.Second},
		{time.Minute, 30 * time.Second, 15 * time.Second},
		{30 * time.Second, 5 * time.Second, 5 * time.Second},
		{2 * time.Second, 5 * time.Second, time.Second},
		{10 * time.Minute, 0, 150 * time.Second},
	} {
		if got := soakInterval(c.d, c.every); got != c.want {
			t.Errorf("soakInterval(%v, %v) = %v, want %v", c.d, c.every, got, c.want)
		}
	}
}

// soakOutcome is an Outcome with nothing but a soak.
func soakOutcome(so *Soak) *Outcome {
	return &Outcome{Plan: repoPlan(), Started: time.Now(), Finished: time.Now(), Timing: repoPlan().Timing, Soak: so, Ran: []string{"soak"},
		Stacks: []local.Config{{PortBase: 20080, Profile: "tuned"}, {PortBase: 20180, Profile: "legacy"}}}
}

func writeMD(o *Outcome) string {
	var b bytes.Buffer
	if err := Write(&b, o, Config{Command: "bookload bench", Out: "results/bench-x"}); err != nil {
		panic(err)
	}
	return b.String()
}

// targetLine returns the targets-table line of the soak.
func targetLine(md string) string {
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "| soak | soak:") {
			return l
		}
	}
	return ""
}

func TestWriteSoak(t *testing.T) {
	flat := soakOf(61, map[string]float64{"ratings": 0.1}, 2)
	flat.Measure = &Measure{
		Table:    &compare.Table{Rows: []compare.Row{{Profile: "200rps-20c", Target: "tuned", QPS: 199.8, LatencyMS: map[string]float64{"p50": 3.1, "p99": 9.5, "p99.9": 15}}}},
		Requests: map[string]int64{"tuned": 359640},
		CPU:      map[string]map[string]float64{"tuned": {"productpage": 360, "details": 50, "reviews": 200, "ratings": 60}},
	}
	md := writeMD(soakOutcome(flat))
	for _, want := range []string{
		"## Soak (tuned, full page at 200 RPS, uniform arrival)",
		"for 30m0s", "read every 30s",
		"achieved 199.8 RPS, 0 errors, p50 3.10 ms, p99 9.50 ms",
		"| ratings | 98.0 | 101.0 | ",
		"| +1.00 | +1.00 | ",
		"| +1.0 | **yes** |",
		"the first third of the soak (10m0s) is its warm-up",
		"| **all** |",
		"one reading in 5, and the last",
		"| 30m0s |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("BENCHMARKS.md lacks %q", want)
		}
	}
	if line := targetLine(md); !strings.Contains(line, "| **yes** |") || !strings.Contains(line, "ratings +1.00/+1.0") {
		t.Errorf("soak verdict line %q: want met, with ratings' slope", line)
	}

	leak := soakOf(61, map[string]float64{"reviews": 0.5}, 0)
	md = writeMD(soakOutcome(leak))
	if line := targetLine(md); !strings.Contains(line, "| no |") || !strings.Contains(line, "still growing after the warm-up: reviews") {
		t.Errorf("soak verdict line %q: want not met, naming reviews", line)
	}

	md = writeMD(soakOutcome(nil))
	if !strings.Contains(md, "Not run (`bookload bench --soak 0`)") {
		t.Error("a skipped soak is not said so")
	}
	if line := targetLine(md); !strings.Contains(line, "| ? |") {
		t.Errorf("soak verdict line %q when skipped: want unknown", line)
	}
}
