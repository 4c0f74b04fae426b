package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Quantiles from published t tables.
func TestStudentT(t *testing.T) {
	cases := []struct{ q, df, want float64 }{
		{0.975, 1, 12.706},
		{0.975, 4, 2.776},
		{0.975, 10, 2.228},
		{0.995, 4, 4.604},
		{0.95, 30, 1.697},
		{0.999, 5, 5.893},
		{0.025, 4, -2.776},
	}
	for _, c := range cases {
		if got := StudentTQuantile(c.q, c.df); math.Abs(got-c.want) > 0.001 {
			t.Errorf("t quantile(%g, df %g) = %.4f, want %.3f", c.q, c.df, got, c.want)
		}
		if got := StudentTCDF(c.want, c.df); math.Abs(got-c.q) > 1e-4 {
			t.Errorf("t CDF(%g, df %g) = %.5f, want %g", c.want, c.df, got, c.q)
		}
	}
	if StudentTCDF(0, 3) != 0.5 {
		t.Errorf("CDF(0) = %v", StudentTCDF(0, 3))
	}
}

func TestPaired(t *testing.T) {
	p := NewPaired([]float64{0.1, 0.3, 0.2, 0.4, 0.0})
	if p.N != 5 || math.Abs(p.Mean-0.2) > 1e-12 || math.Abs(p.SD-math.Sqrt(0.025)) > 1e-12 {
		t.Fatalf("%+v", p)
	}
	lo, hi, ok := p.Interval(0.95)
	// 0.2 ± 2.776·0.1581/√5 = 0.2 ± 0.1963
	if !ok || math.Abs(lo-0.0037) > 1e-3 || math.Abs(hi-0.3963) > 1e-3 {
		t.Errorf("interval [%v, %v]", lo, hi)
	}
	// At the interval's ends the one-sided p-values are (1-0.95)/2.
	if got := p.PAbove(lo); math.Abs(got-0.025) > 1e-6 {
		t.Errorf("PAbove(lo) = %v", got)
	}
	if got := p.PBelow(hi); math.Abs(got-0.025) > 1e-6 {
		t.Errorf("PBelow(hi) = %v", got)
	}
	if _, _, ok := NewPaired([]float64{1}).Interval(0.95); ok {
		t.Error("an interval from one pair")
	}
	if NewPaired([]float64{1}).PAbove(0) != 1 {
		t.Error("one pair rejects")
	}
	same := NewPaired([]float64{0.5, 0.5, 0.5})
	if same.PAbove(0.4) != 0 || same.PAbove(0.5) != 1 || same.PBelow(0.6) != 0 {
		t.Errorf("no spread: %+v", same)
	}
	// The half-width is 0.196 at 5 pairs; under 0.1 takes 13 (t(0.975, 12)
	// = 2.179, 2.179·0.1581/√13 = 0.0956).
	if n := p.PairsFor(0.1, 0.05, 1000); n != 13 {
		t.Errorf("PairsFor(0.1) = %d", n)
	}
	if p.PairsFor(0, 0.05, 1000) != 0 || p.PairsFor(1e-9, 0.05, 1000) != 1000 {
		t.Error("PairsFor limits")
	}
}

// TestPairedCoverage: the interval holds the true mean difference about as
// often as it claims, also when each repetition's noise is skewed
// (log-normal, as a repetition disturbed by a neighbour is) and the pairs
// share a drift. 2000 seeded trials of 5 pairs each.
func TestPairedCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const trials, n, shift = 2000, 5, 0.5
	cover := 0
	for range trials {
		d := make([]float64, n)
		for i := range d {
			drift := 0.3 * rng.Float64()
			a := 2 + drift + 0.1*(math.Exp(0.6*rng.NormFloat64())-math.Exp(0.18))
			b := 2 + shift + drift + 0.1*(math.Exp(0.6*rng.NormFloat64())-math.Exp(0.18))
			d[i] = b - a
		}
		lo, hi, _ := NewPaired(d).Interval(0.95)
		if lo <= shift && shift <= hi {
			cover++
		}
	}
	rate := float64(cover) / trials
	t.Logf("95%% interval covered the true difference in %.1f%% of %d trials", 100*rate, trials)
	if rate < 0.93 || rate > 0.975 {
		t.Errorf("coverage %.3f, want about 0.95", rate)
	}
}

func TestHolm(t *testing.T) {
	// Sorted: 0.005 <= 0.05/4, 0.01 <= 0.05/3, 0.03 > 0.05/2: stop; 0.04 kept too
	// although it is below 0.05/1.
	ps := []float64{0.01, 0.04, 0.03, 0.005}
	reject, level := Holm(ps, 0.05)
	if want := []bool{true, false, false, true}; !slices.Equal(reject, want) {
		t.Errorf("reject %v, want %v", reject, want)
	}
	want := []float64{0.05 / 3, 0.05 / 2, 0.05 / 2, 0.05 / 4}
	for i := range want {
		if math.Abs(level[i]-want[i]) > 1e-15 {
			t.Errorf("level %v, want %v", level, want)
			break
		}
	}
	if r, l := Holm([]float64{0.04}, 0.05); !r[0] || l[0] != 0.05 {
		t.Errorf("one hypothesis: %v %v", r, l)
	}
}
