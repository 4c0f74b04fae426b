// Package latency records every request's latency, twice: plain (from the
// moment the request was sent) and corrected for coordinated omission (from the
// moment fortio's schedule meant to send it). Both go into HdrHistograms with
// microsecond resolution and 3 significant digits, so a 1-10 ms percentile is
// exact to 0.1% instead of to fortio's 1 ms buckets.
package latency

import (
	"encoding/base64"
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry: values in microseconds from 1 µs to one hour.
const (
	LowestMicros  = 1
	HighestMicros = int64(time.Hour / time.Microsecond)
	SigFigs       = 3
)

// NewHistogram returns an empty histogram of the geometry above.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(LowestMicros, HighestMicros, SigFigs)
}

// Micros converts d to the histogram's unit, rounded, clamped to its range.
func Micros(d time.Duration) int64 {
	us := (int64(d) + 500) / 1000
	switch {
	case us < 0:
		return 0
	case us > HighestMicros:
		return HighestMicros
	}
	return us
}

// Encode returns h in the HdrHistogram V2 compressed format, base64: the form
// HdrHistogram log files use, readable by any HdrHistogram implementation.
func Encode(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// Decode reverses Encode.
func Decode(s string) (*hdrhistogram.Histogram, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("histogram: %w", err)
	}
	return hdrhistogram.Decode(b)
}

// Percentiles reported everywhere, in this order.
var Percentiles = []float64{50, 75, 90, 99, 99.9, 99.99}

// Summary is one distribution in milliseconds. Avg is exact (from the sum of
// the recorded durations); the rest come from the histogram (within 0.1%).
type Summary struct {
	Count int64   `json:"count"`
	Avg   float64 `json:"avg"`
	Min   float64 `json:"min"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p99.9"`
	P9999 float64 `json:"p99.99"`
	Max   float64 `json:"max"`
}

// Metric returns the summary value called name (avg, min, max, p50 ... p99.99).
func (s Summary) Metric(name string) (float64, bool) {
	switch name {
	case "avg":
		return s.Avg, true
	case "min":
		return s.Min, true
	case "max":
		return s.Max, true
	case "p50":
		return s.P50, true
	case "p75":
		return s.P75, true
	case "p90":
		return s.P90, true
	case "p99":
		return s.P99, true
	case "p99.9":
		return s.P999, true
	case "p99.99":
		return s.P9999, true
	}
	return 0, false
}

// Summarize computes a Summary of h; sum is the exact total of the recorded
// durations (0 to use the histogram's mean).
func Summarize(h *hdrhistogram.Histogram, sum time.Duration) Summary {
	n := h.TotalCount()
	if n == 0 {
		return Summary{}
	}
	ms := func(us int64) float64 { return float64(us) / 1000 }
	v := h.ValueAtPercentiles(Percentiles)
	avg := h.Mean() / 1000
	if sum > 0 {
		avg = float64(sum) / float64(n) / float64(time.Millisecond)
	}
	return Summary{
		Count: n, Avg: avg, Min: ms(h.Min()), Max: ms(h.Max()),
		P50: ms(v[50]), P75: ms(v[75]), P90: ms(v[90]), P99: ms(v[99]), P999: ms(v[99.9]), P9999: ms(v[99.99]),
	}
}
