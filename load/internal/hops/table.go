package hops

import (
	"math"
	"sort"
)

// BucketWidth is the by-latency table's bucket width: bucket k holds the
// latencies from BucketWidth^k to BucketWidth^(k+1) µs, 1% wide.
const BucketWidth = 1.01

func bucketOf(us int64) int64 {
	if us < 1 {
		return 0
	}
	return int64(math.Log(float64(us)) / math.Log(BucketWidth))
}

func bucketLowMicros(k int64) float64 { return math.Pow(BucketWidth, float64(k)) }

// Table sums each column (a metric, or a residual) over the requests of
// each end-to-end latency bucket, so that a percentile's split can be told
// from the requests at that percentile.
type Table struct {
	Columns []string
	index   map[string]int
	rows    map[int64]*row // by bucket (bucketOf)
}

type row struct {
	n    int64
	sums []int64 // µs, by column; a column a request lacked adds 0
}

func (w *row) add(c int, us int64) {
	for len(w.sums) <= c {
		w.sums = append(w.sums, 0)
	}
	w.sums[c] += us
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{index: map[string]int{}, rows: map[int64]*row{}}
}

func (t *Table) row(us int64) *row {
	b := bucketOf(us)
	w := t.rows[b]
	if w == nil {
		w = &row{}
		t.rows[b] = w
	}
	w.n++
	return w
}

// column returns name's column, -1 when the table is full.
func (t *Table) column(name string) int {
	if c, ok := t.index[name]; ok {
		return c
	}
	if len(t.Columns) >= 2*MaxNames {
		return -1
	}
	t.index[name] = len(t.Columns)
	t.Columns = append(t.Columns, name)
	return len(t.Columns) - 1
}

// Requests is the number of requests in the table.
func (t *Table) Requests() int64 {
	var n int64
	for _, w := range t.rows {
		n += w.n
	}
	return n
}

// Merge adds o's rows into t.
func (t *Table) Merge(o *Table) {
	if o == nil {
		return
	}
	for b, ow := range o.rows {
		w := t.rows[b]
		if w == nil {
			w = &row{}
			t.rows[b] = w
		}
		w.n += ow.n
		for c, s := range ow.sums {
			if mine := t.column(o.Columns[c]); mine >= 0 {
				w.add(mine, s)
			}
		}
	}
}

// Split is what the requests at one percentile of the end-to-end latency
// spent where: the mean of each column over the requests of the latency
// bucket that holds the percentile.
type Split struct {
	Percentile float64            `json:"percentile"`
	LatencyMS  float64            `json:"latency_ms"` // the bucket's lowest value
	Requests   int64              `json:"requests"`   // requests in the bucket
	MS         map[string]float64 `json:"ms"`         // mean by column
}

// SplitAt returns the split at percentile p (0-100); zero when empty.
func (t *Table) SplitAt(p float64) Split {
	keys := make([]int64, 0, len(t.rows))
	for b := range t.rows {
		keys = append(keys, b)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	total := t.Requests()
	if total == 0 {
		return Split{Percentile: p}
	}
	// The rank HdrHistogram gives percentile p: ceil(p/100 * total), at least 1.
	rank := int64(p / 100 * float64(total))
	if float64(rank) < p/100*float64(total) {
		rank++
	}
	rank = max(rank, 1)
	var seen int64
	for _, b := range keys {
		w := t.rows[b]
		seen += w.n
		if seen < rank {
			continue
		}
		s := Split{Percentile: p, LatencyMS: bucketLowMicros(b) / 1000, Requests: w.n, MS: map[string]float64{}}
		for c, name := range t.Columns {
			var sum int64
			if c < len(w.sums) {
				sum = w.sums[c]
			}
			s.MS[name] = float64(sum) / float64(w.n) / 1000
		}
		return s
	}
	return Split{Percentile: p}
}
