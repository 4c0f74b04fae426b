package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, c := range cases {
		if got := Median(c.xs); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median(nil) is not NaN")
	}
}

func TestSummarize(t *testing.T) {
	ten := []float64{10, 1, 9, 2, 8, 3, 7, 4, 6, 5}
	cases := []struct {
		name           string
		xs             []float64
		lo, hi, median float64
		conf           float64
	}{
		// n=10: (x(2), x(9)) covers with 1-2·11/1024 = 97.9%; (x(3), x(8)) only 89%.
		{"ten", ten, 2, 9, 5.5, 1 - 2*11.0/1024},
		// n=3 can only offer (min, max), worth 75%.
		{"three", []float64{2, 1, 3}, 1, 3, 2, 0.75},
		{"six", []float64{1, 2, 3, 4, 5, 6}, 1, 6, 3.5, 1 - 2.0/64},
		{"one", []float64{7}, 7, 7, 7, 0},
	}
	for _, c := range cases {
		s := Summarize(c.xs, 0.95)
		if s.Lo != c.lo || s.Hi != c.hi || s.Median != c.median || math.Abs(s.Confidence-c.conf) > 1e-12 || s.N != len(c.xs) {
			t.Errorf("%s: got %+v, want lo %v hi %v median %v confidence %v", c.name, s, c.lo, c.hi, c.median, c.conf)
		}
	}
}

// TestCICoverage checks the interval's promise on synthetic samples: it holds
// the true median at least 95% of the time.
func TestCICoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const trials = 4000
	hits := 0
	for range trials {
		xs := make([]float64, 12)
		for i := range xs {
			xs[i] = rng.ExpFloat64() // skewed, median ln 2
		}
		s := Summarize(xs, 0.95)
		if s.Lo <= math.Ln2 && math.Ln2 <= s.Hi {
			hits++
		}
	}
	if got := float64(hits) / trials; got < 0.94 {
		t.Errorf("CI covered the true median %.1f%% of the time, want >= 95%%", 100*got)
	}
}

func TestMannWhitneyKnownValues(t *testing.T) {
	cases := []struct {
		name string
		x, y []float64
		want float64
	}{
		{"4 vs 4 separated", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 2.0 / 70},
		{"3 vs 3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0.1},
		{"2 vs 2 separated", []float64{1, 2}, []float64{3, 4}, 1.0 / 3},
		// scipy.stats.mannwhitneyu documentation example (exact): U=17, p=0.1111.
		{"scipy example", []float64{19, 22, 16, 29, 24}, []float64{20, 11, 17, 12}, 1.0 / 9},
		{"identical", []float64{1, 1, 1}, []float64{1, 1, 1}, 1},
		{"empty", nil, []float64{1}, 1},
	}
	for _, c := range cases {
		if got := MannWhitney(c.x, c.y); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: p = %.6f, want %.6f", c.name, got, c.want)
		}
		if got := MannWhitney(c.y, c.x); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s (swapped): p = %.6f, want %.6f", c.name, got, c.want)
		}
	}
}

// TestMannWhitneyExactWithTies compares the dynamic programme to plain
// enumeration of every split, on small samples with many ties.
func TestMannWhitneyExactWithTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		n, m := 1+rng.IntN(5), 1+rng.IntN(5)
		x, y := make([]float64, n), make([]float64, m)
		for i := range x {
			x[i] = float64(rng.IntN(4))
		}
		for i := range y {
			y[i] = float64(rng.IntN(4))
		}
		if got, want := MannWhitney(x, y), bruteForceP(x, y); math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: x=%v y=%v: p = %v, enumeration says %v", trial, x, y, got, want)
		}
	}
}

func bruteForceP(x, y []float64) float64 {
	ranks := doubledMidRanks(x, y)
	n, N := len(x), len(x)+len(y)
	obs := 0
	for _, r := range ranks[:n] {
		obs += r
	}
	mean := n * (N + 1)
	var extreme, all int
	for mask := 0; mask < 1<<N; mask++ {
		if popcount(mask) != n {
			continue
		}
		s := 0
		for i := 0; i < N; i++ {
			if mask&(1<<i) != 0 {
				s += ranks[i]
			}
		}
		all++
		if abs(s-mean) >= abs(obs-mean) {
			extreme++
		}
	}
	return float64(extreme) / float64(all)
}

func popcount(v int) int {
	c := 0
	for ; v != 0; v &= v - 1 {
		c++
	}
	return c
}

func TestMannWhitneyNormalApproximation(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	x, y := make([]float64, 25), make([]float64, 25)
	for i := range x {
		x[i] = rng.NormFloat64()
		y[i] = rng.NormFloat64() + 0.5
	}
	exact := MannWhitney(x, y)
	approx := normalP(x, y, float64(sumRanks(x, y))/2)
	if math.Abs(exact-approx) > 0.01 {
		t.Errorf("exact %.4f vs normal approximation %.4f", exact, approx)
	}
	big := append(append([]float64{}, x...), x...)
	if p := MannWhitney(big, append(append([]float64{}, y...), y...)); p >= exact {
		t.Errorf("doubling the data did not sharpen the test: %.4f >= %.4f", p, exact)
	}
}

func sumRanks(x, y []float64) int {
	s := 0
	for _, r := range doubledMidRanks(x, y)[:len(x)] {
		s += r
	}
	return s
}

// TestDetection is the promise made to users: a real 5% difference between
// targets is found with enough repetitions, and identical targets come out
// "not significant" about 95% of the time.
func TestDetection(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	sample := func(n int, median float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = median * math.Exp(0.02*rng.NormFloat64()) // 2% run-to-run noise
		}
		return xs
	}
	const trials = 500
	found, falseAlarms := 0, 0
	for range trials {
		if MannWhitney(sample(8, 1.00), sample(8, 1.05)) < 0.05 {
			found++
		}
		if MannWhitney(sample(8, 1.00), sample(8, 1.00)) < 0.05 {
			falseAlarms++
		}
	}
	if rate := float64(found) / trials; rate < 0.9 {
		t.Errorf("a 5%% difference with 8 repetitions was detected in %.0f%% of trials, want >= 90%%", 100*rate)
	}
	if rate := float64(falseAlarms) / trials; rate > 0.07 {
		t.Errorf("identical distributions were called different in %.1f%% of trials, want <= 5%% (+noise)", 100*rate)
	}
	// With 3 repetitions nothing can ever be significant.
	if p := MannWhitney(sample(3, 1.0), sample(3, 2.0)); p < 0.05 {
		t.Errorf("3 vs 3 gave p = %v < 0.05, impossible", p)
	}
}

func TestRepetitionsNeeded(t *testing.T) {
	if got := MinPValue(2, 2); math.Abs(got-1.0/3) > 1e-12 {
		t.Errorf("MinPValue(2,2) = %v, want 1/3", got)
	}
	if got := RepetitionsNeeded(0.05); got != 4 {
		t.Errorf("RepetitionsNeeded(0.05) = %d, want 4", got)
	}
	if got := SizeForConfidence(0.95); got != 6 {
		t.Errorf("SizeForConfidence(0.95) = %d, want 6", got)
	}
	if got := RepetitionsNeeded(0.01); got != 5 {
		t.Errorf("RepetitionsNeeded(0.01) = %d, want 5", got)
	}
}
