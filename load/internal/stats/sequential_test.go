package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The radius is where the Bayes factor reaches 1/alpha.
func TestRadiusForInvertsBayesFactor(t *testing.T) {
	for _, n := range []int{8, 10, 30, 200} {
		for _, alpha := range []float64{0.05, 0.01} {
			r := RadiusFor(n, alpha)
			if math.IsInf(r, 0) {
				t.Fatalf("n=%d alpha=%g: unbounded", n, alpha)
			}
			if bf := BayesFactor(r, n); math.Abs(bf*alpha-1) > 1e-9 {
				t.Errorf("n=%d alpha=%g: BF(r=%.4f) = %.6g, want %g", n, alpha, r, bf, 1/alpha)
			}
			if tq := StudentTQuantile(1-alpha/2, float64(n-1)); r <= tq {
				t.Errorf("n=%d alpha=%g: radius %.3f not wider than the fixed-n t quantile %.3f", n, alpha, r, tq)
			}
		}
	}
	if !math.IsInf(RadiusFor(4, 0.05), 1) || !math.IsInf(RadiusFor(1, 0.05), 1) {
		t.Errorf("4 pairs at 0.05 should still be unbounded: %v", RadiusFor(4, 0.05))
	}
}

// noise draws one pair difference with mean 0 and SD 1: the difference of
// two repetitions' noises, each of a named shape.
func noise(r *rand.Rand, shape string) float64 {
	one := func() float64 {
		switch shape {
		case "skewed": // log-normal(0, 0.75), as a repetition a neighbour disturbs
			return math.Exp(0.75 * r.NormFloat64())
		case "outliers": // one repetition in 20 disturbed by 5 SD
			if r.IntN(20) == 0 {
				return r.NormFloat64() + 5
			}
		}
		return r.NormFloat64()
	}
	sd := map[string]float64{
		"normal":   math.Sqrt(2),
		"skewed":   math.Sqrt(2 * (math.Exp(0.5625) - 1) * math.Exp(0.5625)),
		"outliers": math.Sqrt(2 * (1 + 0.05*0.95*25)),
	}[shape]
	return (one() - one()) / sd
}

// everMisses runs streams of up to n pairs with true mean 0, looking after
// every pair, and returns the share of streams in which some look's
// interval excluded 0.
func everMisses(seed uint64, streams, n int, shape string, interval func(d []float64) (lo, hi float64)) float64 {
	r := rand.New(rand.NewPCG(seed, 1))
	misses := 0
	d := make([]float64, 0, n)
	for range streams {
		d = d[:0]
		for range n {
			d = append(d, noise(r, shape))
			if lo, hi := interval(d); lo > 0 || hi < 0 {
				misses++
				break
			}
		}
	}
	return float64(misses) / float64(streams)
}

// Looking after every pair, the sequence's error stays under alpha; the
// fixed-n t interval's does not: this is why --until-decided uses it.
func TestSequenceAAValidUnderPeeking(t *testing.T) {
	const alpha, streams, n = 0.05, 2000, 60
	seq := func(d []float64) (float64, float64) {
		s := NewSequence(d, alpha)
		return s.Lo, s.Hi
	}
	fixed := func(d []float64) (float64, float64) {
		lo, hi, ok := NewPaired(d).Interval(1 - alpha)
		if !ok {
			return math.Inf(-1), math.Inf(1)
		}
		return lo, hi
	}
	// 3 binomial standard errors above alpha at 2000 streams.
	limit := alpha + 3*math.Sqrt(alpha*(1-alpha)/streams)
	for _, shape := range []string{"normal", "skewed", "outliers"} {
		got := everMisses(7, streams, n, shape, seq)
		t.Logf("%s: the sequence ever excluded the true mean in %.1f%% of %d streams of %d pairs", shape, 100*got, streams, n)
		if got > limit {
			t.Errorf("%s: sequence error %.3f above %.3f", shape, got, limit)
		}
	}
	peeked := everMisses(7, streams, n, "normal", fixed)
	t.Logf("normal: a fixed-n 95%% t interval looked at after every pair excluded it in %.1f%%", 100*peeked)
	if peeked < 3*alpha {
		t.Errorf("peeking at a t interval erred in only %.3f of streams; the test no longer shows why the sequence is needed", peeked)
	}
}

// A shift of 3 SD is found, and the sequence then holds the shift.
func TestSequenceFindsShift(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 2))
	found := 0
	const streams = 500
	for range streams {
		var d []float64
		for n := 1; n <= 30; n++ {
			d = append(d, 0.3+0.1*r.NormFloat64())
			if s := NewSequence(d, 0.05); s.Lo > 0.1 {
				if s.Hi < 0.3 {
					t.Logf("an interval above 0.1 that misses 0.3: [%.3f, %.3f]", s.Lo, s.Hi)
				}
				found++
				break
			}
		}
	}
	if found < streams*95/100 {
		t.Errorf("+0.3 with SD 0.1 shown above 0.1 within 30 pairs in %d of %d streams", found, streams)
	}
}

func TestSequenceShape(t *testing.T) {
	if s := NewSequence([]float64{1, 2, 3, 4}, 0.05); s.Bounded() {
		t.Errorf("4 pairs: want unbounded, got %+v", s)
	}
	d := []float64{0.31, 0.29, 0.30, 0.33, 0.27, 0.30}
	s := NewSequence(d, 0.05)
	p := NewPaired(d)
	h := RadiusFor(6, 0.05) * p.SD / math.Sqrt(6)
	if !s.Bounded() || math.Abs(s.Lo-(p.Mean-h)) > 1e-12 || math.Abs(s.Hi-(p.Mean+h)) > 1e-12 {
		t.Errorf("6 pairs: %+v, want %.4f ± %.4f", s, p.Mean, h)
	}
	// No spread at all: the interval is the point.
	if z := NewSequence([]float64{1, 1, 1, 1, 1, 1}, 0.05); z.Lo != 1 || z.Hi != 1 {
		t.Errorf("no spread: %+v", z)
	}
	above := func(s Sequence) bool { return s.Lo > 0.2 }
	lvl := SequenceLevel(d, above)
	if lvl <= 0 || lvl >= 0.05 || !above(NewSequence(d, lvl*1.01)) || above(NewSequence(d, lvl*0.99)) {
		t.Errorf("level of 'above 0.2': %g", lvl)
	}
	if l := SequenceLevel(d, func(s Sequence) bool { return s.Lo > 1 }); l != 1 {
		t.Errorf("an impossible claim's level: %g", l)
	}
}
