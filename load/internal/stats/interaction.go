package stats

import "fmt"

// NewInteraction is the paired difference of differences of a 2 × 2 design
// run in interleaved repetitions: whether a knob's effect changes with the
// mode it runs under (a mesh). Repetition i gives
//
//	(knobUnder[i] - baseUnder[i]) - (knobWithout[i] - baseWithout[i])
//
// that is, the knob's effect under the mode minus its effect without it,
// and the result is the Paired summary of those: its Interval is the
// interaction's, with the same Student-t reasoning as for one difference
// (each term is a percentile of thousands of requests; the drift the four
// cells of one repetition share cancels twice). The four slices must be
// as long as each other, index i being repetition i of each cell.
func NewInteraction(knobUnder, baseUnder, knobWithout, baseWithout []float64) (Paired, error) {
	n := len(knobUnder)
	if len(baseUnder) != n || len(knobWithout) != n || len(baseWithout) != n {
		return Paired{}, fmt.Errorf("interaction: the four cells have %d, %d, %d and %d repetitions; they must be paired one to one",
			n, len(baseUnder), len(knobWithout), len(baseWithout))
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = (knobUnder[i] - baseUnder[i]) - (knobWithout[i] - baseWithout[i])
	}
	return NewPaired(d), nil
}
