package bench

import (
	"testing"
	"time"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/local"
)

// soakSeries makes a 30-minute soak read every 30 s in which every service's
// RSS is mb(minutes since the start).
func soakSeries(mb func(min float64) float64) *Soak {
	so := &Soak{Duration: 30 * time.Minute, Interval: 30 * time.Second}
	for i := 0; i <= 60; i++ {
		at := time.Duration(i) * 30 * time.Second
		smp := SoakSample{At: at, RSSkB: map[string]int64{}}
		for _, svc := range local.Services {
			smp.RSSkB[svc] = int64(mb(at.Minutes()) * 1024)
		}
		so.Samples = append(so.Samples, smp)
	}
	return so
}

// TestSoakTellsALeakFromAWarmUp: the shipped targets on synthetic series.
func TestSoakTellsALeakFromAWarmUp(t *testing.T) {
	slopeT, stepT := repoPlan().Targets.T("soak_rss_slope_mb"), repoPlan().Targets.T("soak_rss_step_mb")
	wobble := func(min float64) float64 { // ±1 MB, a GC cycle
		if int(min*2)%2 == 0 {
			return 1
		}
		return -1
	}
	cases := []struct {
		name  string
		mb    func(min float64) float64
		leaks bool
	}{
		// What the last soak saw of ratings: two steps early on, then flat.
		// One line through it all reads them as a leak.
		{"two steps then flat", func(m float64) float64 {
			switch {
			case m < 3:
				return 80 + wobble(m)
			case m < 7:
				return 90 + wobble(m)
			}
			return 99 + wobble(m)
		}, false},
		{"flat", func(m float64) float64 { return 120 + wobble(m) }, false},
		{"steady ramp, 5 MB per 10 min", func(m float64) float64 { return 100 + 0.5*m + wobble(m) }, true},
		{"steady ramp, 10 MB per 10 min", func(m float64) float64 { return 100 + m }, true},
		// Flat after the warm-up, then a step of 6 MB in the last third: a
		// new high, though the slope over 20 minutes stays under its bound.
		{"late step", func(m float64) float64 {
			if m < 25 {
				return 100 + wobble(m)
			}
			return 106 + wobble(m)
		}, true},
	}
	for _, c := range cases {
		so := soakSeries(c.mb)
		tr := so.Trend("details")
		if !tr.Known() || tr.WarmupEnd != 10*time.Minute || tr.Judged != 41 {
			t.Fatalf("%s: trend %+v: want 41 readings judged after a 10-minute warm-up", c.name, tr)
		}
		if got := tr.Leaks(slopeT, stepT); got != c.leaks {
			t.Errorf("%s: leaks %v (slope after warm-up %+.2f MB/10 min, new high %+.1f MB), want %v", c.name, got, tr.Slope, tr.Step(), c.leaks)
		}
	}
	// The method's point: the whole-soak slope of the warm-up steps is over
	// the bound.
	if sl := soakSeries(cases[0].mb).Slope("details"); slopeT.Met(sl) {
		t.Errorf("two steps then flat: whole-soak slope %+.2f MB/10 min meets the bound; the case shows nothing", sl)
	}
	if (&Soak{Samples: soakSeries(cases[1].mb).Samples[:3]}).Trend("details").Known() {
		t.Error("three readings: the two judged thirds cannot both have one, want unknown")
	}
}
