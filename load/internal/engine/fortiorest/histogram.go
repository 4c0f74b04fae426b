package fortiorest

import (
	"math"
	"time"

	"fortio.org/fortio/stats"
	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
)

// Resolution is the bucket unit bookload asks the remote fortio for (its `r`
// parameter, in seconds): 0.1 ms, as the in-process engine uses for fortio's
// own histogram. fortio's bucket bounds are multiples of it: 0.1 ms wide up to
// 1.2 ms, then 10-25% of the value up to 100 ms, then 100-200, 200-300, ...,
// 750-1000 ms, 1-2 s, ..., 7.5-10 s, and one bucket above 10 s (ending at the
// maximum).
const Resolution = 0.0001

// spreadSteps caps how many distinct values one bucket is spread over.
const spreadSteps = 1000

// FromFortio rebuilds a latency histogram (µs) from fortio's exported bucket
// histogram (seconds). Within a bucket the requests are spread evenly between
// its bounds, which is the linear interpolation fortio itself uses for its
// percentiles; the first bucket starts at fortio's exact minimum and the last
// one ends at its exact maximum, and both are kept. The sum (so the average)
// is fortio's exact one. Percentiles are as precise as the buckets and no
// more: see Resolution.
func FromFortio(d *stats.HistogramData) (*hdrhistogram.Histogram, time.Duration) {
	h := latency.NewHistogram()
	if d == nil || d.Count == 0 {
		return h, 0
	}
	us := func(s float64) int64 { return latency.Micros(time.Duration(math.Round(s * 1e9))) }
	var last int
	for i, b := range d.Data {
		if b.Count > 0 {
			last = i
		}
	}
	first := true
	for i, b := range d.Data {
		if b.Count <= 0 {
			continue
		}
		lo, hi := b.Start, b.End
		if first {
			lo = d.Min
		}
		if i == last {
			hi = d.Max
		}
		if hi < lo {
			hi = lo
		}
		isFirst, isLast := first, i == last
		first = false
		width := us(hi) - us(lo)
		steps := min(b.Count, spreadSteps, max(width, 1))
		if isFirst && isLast && b.Count >= 2 && width > 0 {
			steps = max(steps, 2) // both the minimum and the maximum
		}
		// Positions in [0,1] of the steps: centred for inner buckets; the
		// first bucket includes its start (the minimum), the last its end
		// (the maximum).
		pos := func(j int64) float64 {
			switch {
			case isFirst && isLast:
				if steps == 1 {
					return 0
				}
				return float64(j) / float64(steps-1)
			case isFirst:
				return float64(j) / float64(steps)
			case isLast:
				return float64(j+1) / float64(steps)
			}
			return (float64(j) + 0.5) / float64(steps)
		}
		per, extra := b.Count/steps, b.Count%steps
		for j := range steps {
			n := per
			if j < extra {
				n++
			}
			_ = h.RecordValues(us(lo+pos(j)*(hi-lo)), n)
		}
	}
	return h, time.Duration(math.Round(d.Sum * 1e9))
}
