package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// cells draws n repetitions of the four cells of a 2 × 2 design in ms: a
// base latency, a knob effect, a mode effect and their interaction, a
// drift per repetition that all four cells share (the machine's load), and
// each cell's own skewed noise (a lognormal, as percentiles are).
func cells(r *rand.Rand, n int, knob, mode, interaction float64) (ku, bu, kw, bw []float64) {
	for range n {
		drift := 0.3 * r.NormFloat64()
		noise := func() float64 { return 0.1 * (math.Exp(0.5*r.NormFloat64()) - math.Exp(0.125)) }
		bw = append(bw, 2+drift+noise())
		kw = append(kw, 2+knob+drift+noise())
		bu = append(bu, 2+mode+drift+noise())
		ku = append(ku, 2+mode+knob+interaction+drift+noise())
	}
	return ku, bu, kw, bw
}

func TestInteractionFound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	// Nagle adds 3 ms without the mesh and 3.5 ms under it: +0.5 ms.
	ku, bu, kw, bw := cells(r, 6, 3, 0.4, 0.5)
	p, err := NewInteraction(ku, bu, kw, bw)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi, ok := p.Interval(0.95)
	if !ok || lo > 0.5 || hi < 0.5 {
		t.Fatalf("interaction %.3f [%.3f, %.3f], want an interval covering 0.5", p.Mean, lo, hi)
	}
	if lo <= 0 {
		t.Errorf("interaction %.3f [%.3f, %.3f]: a 0.5 ms interaction at this noise should exclude 0", p.Mean, lo, hi)
	}
}

// TestInteractionCoverage: with no interaction (the knob and the mode each
// have an effect, but the knob's is the same under both), the 95% interval
// covers 0 in 95% of seeded trials. The bound allows three binomial
// standard errors of the trial count below 95%, so it fails for an interval
// that is too narrow, not for the trials' own scatter.
func TestInteractionCoverage(t *testing.T) {
	const trials = 4000
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{4, 6} {
		covered := 0
		for range trials {
			p, err := NewInteraction(cells(r, n, 3, 0.4, 0))
			if err != nil {
				t.Fatal(err)
			}
			if lo, hi, _ := p.Interval(0.95); lo <= 0 && 0 <= hi {
				covered++
			}
		}
		rate := float64(covered) / trials
		if bound := 0.95 - 3*math.Sqrt(0.95*0.05/trials); rate < bound || rate > 0.99 {
			t.Errorf("%d repetitions: the interval covered 0 in %.1f%% of trials, want 95%% (at least %.1f%%)", n, 100*rate, 100*bound)
		}
		t.Logf("%d repetitions: covered 0 in %.2f%% of %d trials", n, 100*rate, trials)
	}
}

func TestInteractionUnpaired(t *testing.T) {
	if _, err := NewInteraction([]float64{1, 2}, []float64{1, 2}, []float64{1}, []float64{1, 2}); err == nil {
		t.Error("cells of different lengths accepted")
	}
}
