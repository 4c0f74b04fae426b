// Package waterfallcheck judges the waterfall `bookload compare --format
// json` writes for runs with a delay on one hop paired with runs without
// it. The loopback suite (tests/e2e) and the cluster suite (tests/cluster)
// put the same delay on the reviews -> ratings hop and judge it the same way.
package waterfallcheck

import (
	"fmt"
	"math"
	"time"
)

// Doc is what the checks read of the comparison.
type Doc struct {
	Waterfalls []Waterfall `json:"waterfalls"`
}

// Waterfall is one scenario's split, per target.
type Waterfall struct {
	Path    []string `json:"critical_path"`
	Targets []struct {
		Target string  `json:"target"`
		Splits []Split `json:"splits"`
	} `json:"targets"`
}

// Split is one percentile of one target.
type Split struct {
	Metric          string  `json:"metric"`
	Requests        int64   `json:"requests"`
	TotalMS         float64 `json:"total_ms"`
	TotalDifference *struct {
		MeanMS float64 `json:"mean_ms"`
	} `json:"total_difference"`
	Segments []Segment `json:"segments"`
}

// Segment is one part of a split: a service's own time or a hop's residual.
type Segment struct {
	Key        string  `json:"key"`
	Label      string  `json:"label"`
	Kind       string  `json:"kind"`
	MS         float64 `json:"ms"`
	Parallel   bool    `json:"parallel"`
	Difference *struct {
		Pairs  int         `json:"pairs"`
		MeanMS float64     `json:"mean_ms"`
		CIMS   *[2]float64 `json:"ci_ms"`
		Line   string      `json:"line"`
	} `json:"difference"`
}

// DelayOnHop judges the late target's splits (each against the baseline's):
// at p50 the critical path puts DELAY on hop KEY (e.g. "hop:reviews.ratings")
// within 5%, and no other part moves by more than 5% of it, or, where the
// p50 bucket holds too few requests for that on a busy machine, its
// interval holds 0 and stays clear of the delay. A parallel call is not in
// the sum and may get faster, but must not take the delay. p90 and p99 are
// logged only: a split is the mean of the requests in one 1% bucket, a few
// requests at p99, whose parts carry the machine's noise. It returns the
// failures; logf gets every part.
func DelayOnHop(late []Split, key string, delay time.Duration, logf func(string, ...any)) []string {
	var fails []string
	ms := float64(delay.Microseconds()) / 1000
	tol := 0.05 * ms
	for _, sp := range late {
		for _, seg := range sp.Segments {
			d := seg.Difference
			if d == nil {
				fails = append(fails, fmt.Sprintf("%s %s: no difference", sp.Metric, seg.Key))
				continue
			}
			logf("%s %-24s %+7.3f ms over %d pairs", sp.Metric, seg.Label, d.MeanMS, d.Pairs)
			want := 0.0
			if seg.Key == key {
				want = ms
			}
			off := d.MeanMS - want
			if seg.Parallel {
				off = math.Max(off, 0)
			}
			if sp.Metric != "p50" || math.Abs(off) <= tol {
				continue
			}
			if want == 0 && d.CIMS != nil && d.CIMS[0] <= 0 && d.CIMS[1] >= 0 && d.CIMS[1] < ms-tol {
				logf("  %s: beyond ±%.1f ms but no difference found and none of the delay: %s", seg.Label, tol, d.Line)
				continue
			}
			fails = append(fails, fmt.Sprintf("%s %s: %+.3f ms, want %.0f ± %.1f: %s", sp.Metric, seg.Label, d.MeanMS, want, tol, d.Line))
		}
		if sp.TotalDifference != nil {
			logf("%s total %+.3f ms (%d requests in the bucket)", sp.Metric, sp.TotalDifference.MeanMS, sp.Requests)
		}
	}
	return fails
}
