package bench

import (
	"math"
	"time"
)

// A leak, not a warm-up: a runtime's memory grows in steps after a start
// under load (V8's young generation growing to its default maximum, a JVM's
// heap settling between -Xms and -Xmx, gunicorn workers filling their
// caches), then stays. One line through the whole soak reads those steps as
// a slope. So the soak is cut in thirds: the first is the warm-up and is not
// judged; the slope is fitted over the other two, and the highest reading
// of the last third must be within soak_rss_step_mb of the second third's
// (a bounded series stops making new highs; a leak keeps making them, at
// whatever pace). Both must hold for every service.

// SoakTrend is one service's RSS after the warm-up.
type SoakTrend struct {
	WarmupEnd     time.Duration // end of the first third: readings before it are not judged
	Slope         float64       // MB per 10 minutes over the second and last thirds
	SecondMax     float64       // highest reading of the second third, MB
	LastMax       float64       // highest reading of the last third, MB
	Judged        int           // readings after the warm-up
	Second, Third int           // readings in each of the two judged thirds
}

// Step is how much higher the last third went than the second, MB.
func (t SoakTrend) Step() float64 { return t.LastMax - t.SecondMax }

// Known says each judged third has a reading, and the fit three.
func (t SoakTrend) Known() bool { return t.Second >= 1 && t.Third >= 1 && t.Judged >= 3 }

// Trend is svc's RSS after the warm-up ("" is all services together).
func (s *Soak) Trend(svc string) SoakTrend {
	t := SoakTrend{SecondMax: math.Inf(-1), LastMax: math.Inf(-1)}
	if s == nil || len(s.Samples) == 0 {
		return t
	}
	span := s.Samples[len(s.Samples)-1].At
	t.WarmupEnd = span / 3
	var xs, ys []float64
	for _, smp := range s.Samples {
		if smp.At < t.WarmupEnd {
			continue
		}
		mb := float64(s.kB(smp, svc)) / 1024
		xs = append(xs, smp.At.Minutes()/10)
		ys = append(ys, mb)
		if smp.At < 2*span/3 {
			t.Second++
			t.SecondMax = math.Max(t.SecondMax, mb)
		} else {
			t.Third++
			t.LastMax = math.Max(t.LastMax, mb)
		}
	}
	t.Judged = len(xs)
	t.Slope = slope(xs, ys)
	return t
}

// Leaks says the trend fails either bound: still rising after the warm-up
// (slopeT on the slope), or a new high in the last third (stepT on Step).
func (t SoakTrend) Leaks(slopeT, stepT Target) bool {
	return !slopeT.Met(t.Slope) || !stepT.Met(t.Step())
}
