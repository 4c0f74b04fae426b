package stats

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Paired is the mean of paired differences (repetition i of a target minus
// repetition i of the baseline, run back to back) with Student's t: its
// confidence interval, one-sided p-values against any shift, and how many
// pairs a narrower interval would take.
//
// Why t and not the distribution-free tools above: a paired sign-flip or
// Wilcoxon test of n pairs can never reach a one-sided p below 2^-n, so with
// the 4-5 repetitions scenarios run, and a Holm correction on top, no verdict
// could ever be reached; a percentile bootstrap reaches any level but its
// interval is too narrow at n = 5 (it covers a mean ~85% of the time when it
// claims 95%). Each repetition's percentile summarizes thousands of requests,
// so it is close to normal, and pairing removes the drift that two
// repetitions share; TestPairedCoverage measures the interval on skewed data.
type Paired struct {
	N        int
	Mean, SD float64 // of the differences; SD is 0 when N < 2
}

// NewPaired summarizes the differences d.
func NewPaired(d []float64) Paired {
	p := Paired{N: len(d)}
	if p.N == 0 {
		return p
	}
	for _, x := range d {
		p.Mean += x
	}
	p.Mean /= float64(p.N)
	if p.N < 2 {
		return p
	}
	var ss float64
	for _, x := range d {
		ss += (x - p.Mean) * (x - p.Mean)
	}
	p.SD = math.Sqrt(ss / float64(p.N-1))
	return p
}

// Interval is the two-sided confidence interval of the mean difference;
// ok is false with fewer than 2 pairs (no spread to go by).
func (p Paired) Interval(confidence float64) (lo, hi float64, ok bool) {
	if p.N < 2 {
		return 0, 0, false
	}
	h := p.halfWidth(p.N, 1-confidence)
	return p.Mean - h, p.Mean + h, true
}

func (p Paired) halfWidth(n int, alpha float64) float64 {
	return StudentTQuantile(1-alpha/2, float64(n-1)) * p.SD / math.Sqrt(float64(n))
}

// PAbove is the one-sided p-value of "the mean difference is at most c"
// (small when the data say it is above c); 1 with fewer than 2 pairs.
func (p Paired) PAbove(c float64) float64 {
	if p.N < 2 {
		return 1
	}
	if p.SD == 0 {
		if p.Mean > c {
			return 0
		}
		return 1
	}
	t := (p.Mean - c) / (p.SD / math.Sqrt(float64(p.N)))
	return 1 - StudentTCDF(t, float64(p.N-1))
}

// PBelow is the one-sided p-value of "the mean difference is at least c".
func (p Paired) PBelow(c float64) float64 {
	return Paired{N: p.N, Mean: -p.Mean, SD: p.SD}.PAbove(-c)
}

// PairsFor is how many pairs, at this spread, would make the two-sided
// (1-alpha) interval's half-width smaller than gap: a rough answer to "how
// many repetitions would decide it", assuming the mean and the spread stay
// as observed. 0 when no number would (gap <= 0, or fewer than 2 pairs to
// estimate the spread); limit when even that many would not do.
func (p Paired) PairsFor(gap, alpha float64, limit int) int {
	return p.pairsFor(gap, limit, func(n int) float64 { return StudentTQuantile(1-alpha/2, float64(n-1)) })
}

// pairsFor is the smallest n whose half-width radius(n)·SD/√n is below gap
// (see PairsFor).
func (p Paired) pairsFor(gap float64, limit int, radius func(n int) float64) int {
	if gap <= 0 || p.N < 2 {
		return 0
	}
	if p.SD == 0 {
		return max(p.N, 2)
	}
	for n := 2; n < limit; n++ {
		if radius(n)*p.SD/math.Sqrt(float64(n)) < gap {
			return n
		}
	}
	return limit
}

// StudentTCDF is P(T <= t) for Student's t with df degrees of freedom.
func StudentTCDF(t, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.CDF(t)
}

// StudentTQuantile is the t with P(T <= t) = q.
func StudentTQuantile(q, df float64) float64 {
	switch {
	case q <= 0:
		return math.Inf(-1)
	case q >= 1:
		return math.Inf(1)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(q)
}

// Holm applies Holm's step-down correction to the p-values ps of one family
// of hypotheses at family-wise level alpha: sorted ascending, the i-th
// smallest (from 0) is rejected when it and every smaller one are at most
// alpha/(m-i). level[j] is the level hypothesis j was tested at: its own
// step's, or, after the first one kept, that step's, so that an interval
// drawn at confidence 1-level[j] agrees with the decision.
func Holm(ps []float64, alpha float64) (reject []bool, level []float64) {
	m := len(ps)
	reject, level = make([]bool, m), make([]float64, m)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	stopped := false
	var at float64
	for i, j := range order {
		if !stopped {
			at = alpha / float64(m-i)
			if ps[j] <= at {
				reject[j] = true
			} else {
				stopped = true
			}
		}
		level[j] = at
	}
	return reject, level
}
