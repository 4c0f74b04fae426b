// Package stats answers "is this difference noise?" across repetitions: the
// median of each metric with a distribution-free confidence interval, and the
// Mann-Whitney U test between two targets' repetitions, as benchstat does.
// Neither assumes normal data, which latency percentiles are not.
//
// Not golang.org/x/perf/benchmath, whose method this follows: its median
// interval is ±∞ below 6 values (scenarios run 4-5 repetitions), and its
// exact U test doubles the one-sided tail, which with ties overstates p
// (x = [1], y = [1 2 2 3]: 0.8 where the permutation test gives 0.6).
package stats

import (
	"math"
	"slices"
)

// Median of xs (mean of the two middle values for an even count); NaN if empty.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// Summary is a sample's median with a confidence interval for it.
type Summary struct {
	N      int
	Median float64
	// Lo and Hi bound the median with probability Confidence. The interval is
	// made of two order statistics (x(k), x(n+1-k)), which covers the true
	// median with probability 1 - 2·P(Binomial(n, ½) < k) whatever the
	// distribution. With fewer than 6 values no such pair reaches 95%; then
	// Lo, Hi are the min and max and Confidence says how much they are worth.
	Lo, Hi     float64
	Confidence float64
}

// Summarize returns the median of xs and the narrowest order-statistic
// interval covering it with at least the wanted confidence (or the widest one
// available, with its lower confidence, when n is too small).
func Summarize(xs []float64, confidence float64) Summary {
	n := len(xs)
	if n == 0 {
		return Summary{Median: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := Summary{N: n, Median: Median(s), Lo: s[0], Hi: s[n-1], Confidence: coverage(n, 1)}
	for k := 2; k <= (n+1)/2; k++ {
		c := coverage(n, k)
		if c < confidence {
			break
		}
		sum.Lo, sum.Hi, sum.Confidence = s[k-1], s[n-k], c
	}
	return sum
}

// coverage is P(x(k) <= median <= x(n+1-k)) = 1 - 2·P(Binomial(n, ½) <= k-1).
func coverage(n, k int) float64 {
	var tail float64
	for i := 0; i < k; i++ {
		tail += binomial(n, i)
	}
	c := 1 - 2*tail*math.Pow(0.5, float64(n))
	if c < 0 {
		return 0
	}
	return c
}

// binomial returns C(n, k) as a float64.
func binomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return math.Round(r)
}

// SizeForConfidence is the smallest sample whose (min, max) interval holds the
// median with at least the given confidence (6 for 95%).
func SizeForConfidence(confidence float64) int {
	n := 1
	for coverage(n, 1) < confidence && n < 1000 {
		n++
	}
	return n
}
