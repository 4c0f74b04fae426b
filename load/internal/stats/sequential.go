package stats

import (
	"math"
)

// A confidence sequence is an interval for the mean of paired differences
// that holds at every number of pairs at once: with probability 1-alpha the
// true mean is inside all of them, however many pairs are added and whenever
// one stops looking. That is what `--until-decided` needs: it looks at the
// data after every pair and stops when a verdict is reached, which would
// inflate a fixed-n t interval's error far above alpha (a 95% t interval
// looked at after each of 60 pairs claims a difference that is not there in
// about 35% of seeded streams, the sequence in under 3%;
// TestSequenceAAValidUnderPeeking measures both).
//
// The sequence here inverts the Bayes factor of the one-sample t-test with a
// scale-invariant (right Haar, 1/sigma) prior on the spread and a N(0, G)
// prior on the standardized effect (mean/sigma). With that prior on sigma the
// Bayes factor of "mean = m" is a function of the t statistic alone,
//
//	BF(t) = (1+nG)^(-1/2) * ((1 + t²/v) / (1 + t²/(v(1+nG))))^((v+1)/2),  v = n-1,
//
// because the mixed t statistic is exactly sqrt(1+nG) times a Student t. It is
// a nonnegative martingale under "mean = m" in the data's scale-invariant
// filtration (Pérez-Ortiz, Lardy, de Heide and Grünwald, "E-statistics, group
// invariance and anytime-valid testing", 2024), so by Ville's inequality it
// exceeds 1/alpha at any n with probability at most alpha. The set of m it
// does not reject is mean ± r(n)·sd/sqrt(n): the t interval's shape with a
// wider, n-dependent radius r(n) in place of the t quantile (RadiusFor).
//
// Like the fixed-n t interval (see Paired), it assumes pair differences that
// are close to normal: each is the difference of two percentiles of thousands
// of requests, run back to back. TestSequence* measure its coverage on skewed
// repetitions and rare outliers as well (under 3%). Where the difference
// itself is strongly skewed (one side alone disturbed, log-normal with
// skewness ~3) its error rises to ~14%: the shared, interleaved machine is
// what keeps the two sides' disturbances alike.

// SequenceG is the prior variance of the standardized effect (the "unit
// information" prior). A smaller G narrows the sequence at many pairs and
// leaves it unbounded for longer; at G = 1 and alpha 0.05 it is bounded from
// 5 pairs and within 1.7x the fixed-n t quantile from 15 to 60 pairs (5.45
// at 6 pairs, 3.54 at 15, 3.35 at 30, against t's 2.57, 2.14, 2.05): the
// range a budget of minutes buys.
const SequenceG = 1.0

// SequenceMethod says how sequential intervals are made, for the output.
const SequenceMethod = "anytime-valid t confidence sequence (scale-invariant Bayes factor, N(0, 1) prior on the standardized effect, Ville's inequality), valid when the data are looked at after every pair"

// RadiusFor is r such that the sequence at n pairs is mean ± r·sd/sqrt(n),
// at level alpha; +Inf for n < 2 or where the Bayes factor cannot reach
// 1/alpha at this n whatever the data (the interval is then the whole line).
func RadiusFor(n int, alpha float64) float64 {
	if n < 2 || alpha <= 0 || alpha >= 1 {
		return math.Inf(1)
	}
	v := float64(n - 1)
	k := 1 + float64(n)*SequenceG
	// BF(t) = 1/alpha  <=>  (1+x)/(1+x/k) = r, x = t²/v, r = (k/alpha²)^(1/(v+1)).
	r := math.Exp((math.Log(k) - 2*math.Log(alpha)) / (v + 1))
	if r >= k {
		return math.Inf(1)
	}
	x := (r - 1) / (1 - r/k)
	return math.Sqrt(v * x)
}

// BayesFactor is the sequence's Bayes factor against "mean = m" from the
// t statistic of n pairs: the evidence that the mean is not m. 1 for n < 2.
func BayesFactor(t float64, n int) float64 {
	if n < 2 {
		return 1
	}
	v := float64(n - 1)
	k := 1 + float64(n)*SequenceG
	lbf := -0.5*math.Log(k) + (v+1)/2*(math.Log1p(t*t/v)-math.Log1p(t*t/(v*k)))
	return math.Exp(lbf)
}

// Sequence is the confidence sequence of the differences d at their last
// pair: Lo and Hi bound the mean with probability 1-alpha at every number of
// pairs at once, so the bounds at the pair where a run stopped are valid
// whatever made it stop there. Infinite bounds mean not enough pairs yet.
// (The running intersection over the pairs would be valid too, and
// narrower, but its centre drifts off the mean, which reads as an error.)
type Sequence struct {
	N      int
	Lo, Hi float64
}

// NewSequence is the sequence of d at level alpha after its last pair.
func NewSequence(d []float64, alpha float64) Sequence {
	s := Sequence{N: len(d), Lo: math.Inf(-1), Hi: math.Inf(1)}
	if len(d) < 2 {
		return s
	}
	p := NewPaired(d)
	h := RadiusFor(p.N, alpha) * p.SD / math.Sqrt(float64(p.N))
	if !math.IsInf(h, 0) && !math.IsNaN(h) {
		s.Lo, s.Hi = p.Mean-h, p.Mean+h
	}
	return s
}

// Bounded reports whether the sequence has finite bounds yet.
func (s Sequence) Bounded() bool { return !math.IsInf(s.Lo, 0) && !math.IsInf(s.Hi, 0) }

// SequenceLevel is the smallest level alpha at which the sequence of d would
// make claim: lo > c for "above", hi < c for "below" (c the bound), found by
// bisection on alpha (the sequence widens as alpha falls). 1 when it would not
// at any level below 1: an anytime-valid p-value of the claim.
func SequenceLevel(d []float64, holds func(Sequence) bool) float64 {
	if !holds(NewSequence(d, 0.999999)) {
		return 1
	}
	lo, hi := 1e-12, 0.999999 // holds at hi; assume not at lo unless it does
	if holds(NewSequence(d, lo)) {
		return lo
	}
	for range 32 { // a ratio of 1e12 halved 32 times: within 1e-8 of the level
		mid := math.Sqrt(lo * hi)
		if holds(NewSequence(d, mid)) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// SequencePairsFor is, like Paired.PairsFor, about how many pairs would
// bring the sequence's half-width below gap at this spread; 0 when none
// could be told (gap <= 0, fewer than 2 pairs), limit when even that many
// would not do.
func (p Paired) SequencePairsFor(gap, alpha float64, limit int) int {
	n := p.pairsFor(gap, limit, func(n int) float64 { return RadiusFor(n, alpha) })
	if n > 0 && n < limit {
		return max(n, p.N+1) // the pairs so far did not: at least one more
	}
	return n
}
