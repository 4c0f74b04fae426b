package stats

import (
	"math"
	"slices"
)

// exactLimit is the largest combined sample size for which the exact null
// distribution is computed; beyond it the normal approximation is accurate.
const exactLimit = 50

// MannWhitney returns the two-sided p-value of the Mann-Whitney U test that x
// and y come from the same distribution.
//
// For up to 50 values in all, the p-value is exact, ties included: it counts,
// among all ways to split the pooled (mid-)ranks into groups of len(x) and
// len(y), those whose rank sum is at least as far from its mean as the one
// observed (a dynamic programme over doubled mid-ranks, which are integers).
// Larger samples use the normal approximation with tie and continuity
// correction. Returns 1 when either sample is empty.
func MannWhitney(x, y []float64) float64 {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return 1
	}
	ranks2 := doubledMidRanks(x, y)
	var rx int // doubled rank sum of x
	for _, r := range ranks2[:n] {
		rx += r
	}
	mean2 := n * (n + m + 1) // doubled mean of the rank sum
	dev := abs(rx - mean2)
	if n+m <= exactLimit {
		return exactP(ranks2, n, mean2, dev)
	}
	return normalP(x, y, float64(rx)/2)
}

// doubledMidRanks returns 2× the mid-rank of each value of x then y in the
// pooled sample.
func doubledMidRanks(x, y []float64) []int {
	type v struct {
		val float64
		idx int
	}
	all := make([]v, 0, len(x)+len(y))
	for i, a := range x {
		all = append(all, v{a, i})
	}
	for i, b := range y {
		all = append(all, v{b, len(x) + i})
	}
	slices.SortFunc(all, func(a, b v) int {
		switch {
		case a.val < b.val:
			return -1
		case a.val > b.val:
			return 1
		}
		return 0
	})
	ranks := make([]int, len(all))
	for i := 0; i < len(all); {
		j := i
		for j+1 < len(all) && all[j+1].val == all[i].val {
			j++
		}
		// Values at positions i..j (0-based) share rank ((i+1)+(j+1))/2.
		for k := i; k <= j; k++ {
			ranks[all[k].idx] = i + j + 2
		}
		i = j + 1
	}
	return ranks
}

func exactP(ranks2 []int, n, mean2, dev int) float64 {
	total := 0
	for _, r := range ranks2 {
		total += r
	}
	// ways[k][s]: number of k-subsets of the ranks seen so far with doubled sum s.
	ways := make([][]float64, n+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for _, r := range ranks2 {
		for k := n; k >= 1; k-- {
			prev, cur := ways[k-1], ways[k]
			for s := total; s >= r; s-- {
				cur[s] += prev[s-r]
			}
		}
	}
	var extreme, all float64
	for s, w := range ways[n] {
		if w == 0 {
			continue
		}
		all += w
		if abs(s-mean2) >= dev {
			extreme += w
		}
	}
	return math.Min(1, extreme/all)
}

func normalP(x, y []float64, rankSum float64) float64 {
	n, m := float64(len(x)), float64(len(y))
	N := n + m
	u := rankSum - n*(n+1)/2
	mu := n * m / 2
	// Tie correction: sum over tie groups of t³ - t.
	pooled := append(slices.Clone(x), y...)
	slices.Sort(pooled)
	var ties float64
	for i := 0; i < len(pooled); {
		j := i
		for j+1 < len(pooled) && pooled[j+1] == pooled[i] {
			j++
		}
		t := float64(j - i + 1)
		ties += t*t*t - t
		i = j + 1
	}
	sigma := math.Sqrt(n * m / 12 * ((N + 1) - ties/(N*(N-1))))
	if sigma == 0 {
		return 1
	}
	z := (math.Abs(u-mu) - 0.5) / sigma
	if z < 0 {
		z = 0
	}
	return math.Min(1, math.Erfc(z/math.Sqrt2))
}

// MinPValue is the smallest two-sided p-value Mann-Whitney can give for
// samples of n and m values (all of one below all of the other, no ties).
func MinPValue(n, m int) float64 {
	if n == 0 || m == 0 {
		return 1
	}
	return math.Min(1, 2/binomial(n+m, n))
}

// RepetitionsNeeded is the smallest number of repetitions per target (the same
// for both) with which Mann-Whitney can reach p < alpha at all.
func RepetitionsNeeded(alpha float64) int {
	for n := 1; n < 100; n++ {
		if MinPValue(n, n) < alpha {
			return n
		}
	}
	return 100
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}
