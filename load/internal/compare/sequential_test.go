package compare

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/hops"
)

// untilDecided is --until-decided on simulated pairs: one pair at a time
// (differences of mean shift and SD sd), judged after each, up to limit
// pairs; it returns the verdict and the interval where it stopped.
func untilDecided(r *rand.Rand, shift, sd, margin float64, limit int) (string, *[2]float64) {
	var d []float64
	for range limit {
		d = append(d, shift+sd*r.NormFloat64())
		diff := newDifference(d, Margins{"p50": margin}, "p50")
		decideSequential([]*Difference{diff}, 0.05)
		if diff.Verdict.Result != Inconclusive {
			return diff.Verdict.Result, diff.CIMS
		}
	}
	return Inconclusive, nil
}

// A/A (no difference), judged after every pair against a margin of one SD:
// "within" almost always within 60 pairs, a false "exceeds" or "faster" at
// most at the stated 5%.
func TestUntilDecidedAA(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 1))
	const streams = 1000
	count := map[string]int{}
	for range streams {
		v, _ := untilDecided(r, 0, 1, 1, 60)
		count[v]++
	}
	t.Logf("A/A, margin 1 SD, up to 60 pairs: %v", count)
	if wrong := count[Exceeds] + count[Faster]; wrong > streams*5/100 {
		t.Errorf("A/A judged exceeds or faster in %d of %d streams (stated rate 5%%)", wrong, streams)
	}
	if count[Within] < streams*90/100 {
		t.Errorf("A/A judged within in only %d of %d streams", count[Within], streams)
	}
	// A margin far inside the noise: "within" is out of reach, and a false
	// claim stays under 5% however long it looks.
	const tiny = 400
	wrong := 0
	for range tiny {
		if v, _ := untilDecided(r, 0, 1, 0.01, 60); v != Inconclusive {
			wrong++
		}
	}
	t.Logf("A/A, margin 0.01 SD, up to 60 pairs: %d of %d decided (all wrongly)", wrong, tiny)
	if wrong > tiny*5/100 {
		t.Errorf("A/A against a tiny margin decided in %d of %d streams", wrong, tiny)
	}
}

// A known +0.3 ms with a pair SD of 0.1 ms is found to exceed a 0.1 ms
// margin, with an interval that holds 0.3.
func TestUntilDecidedFindsShift(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 1))
	const streams = 1000
	found, held := 0, 0
	for range streams {
		v, ci := untilDecided(r, 0.3, 0.1, 0.1, 30)
		if v == Exceeds {
			found++
			if ci != nil && ci[0] <= 0.3 && 0.3 <= ci[1] {
				held++
			}
		}
	}
	t.Logf("+0.3 ms against 0.1 ms: exceeds in %d of %d streams, the interval held 0.3 in %d", found, streams, held)
	if found < streams*95/100 || held < found*95/100 {
		t.Errorf("found %d, held %d of %d", found, held, streams)
	}
}

// Bonferroni: a family of four verdicts is each judged at alpha/4.
func TestSequentialFamily(t *testing.T) {
	d := []float64{0.31, 0.29, 0.30, 0.33, 0.27, 0.30, 0.32, 0.28}
	var ds []*Difference
	for range 4 {
		ds = append(ds, newDifference(d, Margins{"p50": 0.1}, "p50"))
	}
	ds = append(ds, newDifference(d, nil, "p99"))
	decideSequential(ds, 0.05)
	for _, x := range ds[:4] {
		if x.Verdict.Alpha != 0.0125 || x.Verdict.Family != 4 || x.Verdict.Result != Exceeds || x.Confidence != 1-0.0125 {
			t.Errorf("%+v", *x.Verdict)
		}
	}
	if ds[4].Confidence != 0.95 || ds[4].CIMS == nil {
		t.Errorf("a difference without a margin: %+v", *ds[4])
	}
}

// The stop rule waits for the verdicts it is asked for and for intervals
// as narrow as asked.
func TestStopRuleOpen(t *testing.T) {
	d := []float64{0.31, 0.29, 0.30, 0.33, 0.27, 0.30, 0.32, 0.28}
	row := func(diffs ...*Difference) Row {
		r := Row{Profile: "p", Target: "b", Difference: map[string]Difference{}}
		for i, x := range diffs {
			decideSequential([]*Difference{x}, 0.05)
			x.Line = Metrics[i+1] + " line"
			r.Difference[Metrics[i+1]] = *x
		}
		return r
	}
	hop := newDifference(d, nil, "p50")
	decideSequential([]*Difference{hop}, 0.05)
	tbl := &Table{Baseline: "a", Rows: []Row{{Profile: "p", Target: "a", Baseline: true},
		row(newDifference(d, Margins{"p50": 0.1}, "p50"), newDifference([]float64{0, 1, -1, 2, -2, 0}, Margins{"p75": 0.1}, "p75"))},
		Waterfalls: []Waterfall{{Scenario: "s", Profile: "p", Targets: []WaterfallTarget{{Target: "a", Baseline: true}, {Target: "b", Splits: []WaterfallSplit{
			{Metric: "p50", Segments: []WaterfallSegment{{Segment: hops.Segment{Key: "hop:client", Label: "client → b"}, Difference: hop}}}}}}}}}
	for _, c := range []struct {
		rule StopRule
		done bool
		open string
	}{
		{StopRule{Decide: []string{"p50"}}, true, ""},
		{StopRule{}, false, "p75 line"},
		{StopRule{Decide: []string{"p50"}, Precision: Margins{"p50": 0.05}}, true, ""},
		{StopRule{Decide: []string{"p50"}, Precision: Margins{"p50": 0.01}}, false, "p50 line (wanted within ±0.01 ms)"},
		{StopRule{Decide: []string{"p99"}}, false, ""}, // nothing to judge: not done
		{StopRule{Decide: []string{"p50"}, Parts: map[string]float64{"hop:client": 0.05}}, true, ""},
		{StopRule{Decide: []string{"p50"}, Parts: map[string]float64{"hop:client": 0.01}}, false, "b vs a, s p: p50 client → b +0.300 [0.270, 0.330] ms (wanted within ±0.01 ms)"},
	} {
		done, open := c.rule.Open(tbl, "p")
		if done != c.done || strings.Join(open, "; ") != c.open {
			t.Errorf("%+v: done %v, open %q", c.rule, done, open)
		}
	}
}
