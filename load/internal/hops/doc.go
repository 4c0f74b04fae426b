package hops

import (
	"fmt"
	"sort"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
)

// Distribution is a summary in ms and the HdrHistogram in µs (V2
// compressed, base64), the same shape as a repetition's latency.
type Distribution struct {
	SummaryMS    latency.Summary `json:"summary_ms"`
	HdrHistogram string          `json:"hdr_histogram_us"`
}

// TableDoc is a Table as stored: one row per populated bucket,
// [bucket, requests, sum of column 0 in µs, sum of column 1, ...]; bucket k
// holds the end-to-end latencies from BucketWidth^k to BucketWidth^(k+1) µs.
type TableDoc struct {
	BucketWidth float64   `json:"bucket_width"`
	Columns     []string  `json:"columns"`
	Rows        [][]int64 `json:"rows"`
}

// Doc is a Result as a repetition file stores it (the "hops" object).
type Doc struct {
	Requests        int64                   `json:"requests"`
	Without         int64                   `json:"without_header"`
	Dropped         int64                   `json:"dropped_metrics,omitempty"`
	Metrics         map[string]Distribution `json:"metrics"`
	Residuals       map[string]Distribution `json:"residuals"`
	ClientCorrected Distribution            `json:"client_residual_corrected"`
	ByLatency       TableDoc                `json:"by_latency"`
	// Splits at latency.Percentiles, for a reader; ByLatency holds what
	// they are computed from.
	Splits []Split `json:"splits"`
}

func distribution(h *hdrhistogram.Histogram) (Distribution, error) {
	enc, err := latency.Encode(h)
	if err != nil {
		return Distribution{}, err
	}
	return Distribution{SummaryMS: latency.Summarize(h, 0), HdrHistogram: enc}, nil
}

// Doc returns r in its stored form.
func (r *Result) Doc() (*Doc, error) {
	d := &Doc{
		Requests: r.Requests, Without: r.Without, Dropped: r.Dropped,
		Metrics: map[string]Distribution{}, Residuals: map[string]Distribution{},
	}
	for _, pair := range []struct {
		to   map[string]Distribution
		from map[string]*hdrhistogram.Histogram
	}{{d.Metrics, r.Metrics}, {d.Residuals, r.Residuals}} {
		for name, h := range pair.from {
			dist, err := distribution(h)
			if err != nil {
				return nil, fmt.Errorf("hops %s: %w", name, err)
			}
			pair.to[name] = dist
		}
	}
	var err error
	if d.ClientCorrected, err = distribution(r.ClientCorrected); err != nil {
		return nil, err
	}
	t := r.ByLatency
	d.ByLatency = TableDoc{BucketWidth: BucketWidth, Columns: append([]string{}, t.Columns...)}
	keys := make([]int64, 0, len(t.rows))
	for b := range t.rows {
		keys = append(keys, b)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, b := range keys {
		w := t.rows[b]
		out := make([]int64, 2+len(t.Columns))
		out[0], out[1] = b, w.n
		copy(out[2:], w.sums)
		d.ByLatency.Rows = append(d.ByLatency.Rows, out)
	}
	for _, p := range latency.Percentiles {
		d.Splits = append(d.Splits, t.SplitAt(p))
	}
	return d, nil
}

// FromDoc reads a stored Result back (to merge repetitions, or an agent's).
func FromDoc(d *Doc) (*Result, error) {
	if d == nil {
		return nil, nil
	}
	if d.ByLatency.BucketWidth != 0 && d.ByLatency.BucketWidth != BucketWidth {
		return nil, fmt.Errorf("hops: bucket width %v, this bookload reads %v", d.ByLatency.BucketWidth, BucketWidth)
	}
	r := NewResult()
	r.Requests, r.Without, r.Dropped = d.Requests, d.Without, d.Dropped
	for _, pair := range []struct {
		to   map[string]*hdrhistogram.Histogram
		from map[string]Distribution
	}{{r.Metrics, d.Metrics}, {r.Residuals, d.Residuals}} {
		for name, dist := range pair.from {
			h, err := latency.Decode(dist.HdrHistogram)
			if err != nil {
				return nil, fmt.Errorf("hops %s: %w", name, err)
			}
			pair.to[name] = h
		}
	}
	if d.ClientCorrected.HdrHistogram != "" {
		h, err := latency.Decode(d.ClientCorrected.HdrHistogram)
		if err != nil {
			return nil, fmt.Errorf("hops client corrected: %w", err)
		}
		r.ClientCorrected = h
	}
	for _, name := range d.ByLatency.Columns {
		r.ByLatency.column(name)
	}
	for _, in := range d.ByLatency.Rows {
		if len(in) < 2 || len(in)-2 > len(d.ByLatency.Columns) {
			return nil, fmt.Errorf("hops: a by-latency row of %d values for %d columns", len(in), len(d.ByLatency.Columns))
		}
		w := &row{n: in[1], sums: append([]int64{}, in[2:]...)}
		r.ByLatency.rows[in[0]] = w
	}
	return r, nil
}
