// Package hops records where each request's time went, from the W3C
// Server-Timing header the services send (docs/contract.md,
// "Server-Timing"): every metric as reported (app, details, details.app,
// reviews.ratings, ...) into an HdrHistogram of its own, and each hop's
// residual, a wait minus the server time under it (network, kernel and any
// mesh between the two): for a metric X with a metric X.app, X - X.app; for
// the client's own hop, the latency it measured minus app.
//
// Percentiles of a sum are not sums of percentiles: the p99 of app and the
// p99 of a hop's residual are almost never the same request. So the split
// shown at a percentile of the end-to-end latency is the mean of each
// metric over the requests whose end-to-end latency falls in the bucket of
// that percentile (buckets 1% wide, BucketWidth). The by-latency table
// that holds those sums is bounded: one row per populated bucket (a few
// hundred in a run, at most a few thousand) and one column per metric name
// (at most MaxNames), whatever the number of requests.
//
// fortio's fast client has no hook for response headers, but it hands every
// whole response (head and body, as read) to HTTPOptions.DataWriter from the
// connection's goroutine, right before the runner reports that request to
// the AccessLogger from the same goroutine. Which connection wrote is told
// by the client's read buffer (one per connection, allocated once); with
// SequentialWarmup fortio builds and warms the connections one by one, in
// thread order, so the n-th buffer seen belongs to thread n.
package hops

import (
	"io"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/bookinfo-bench/bookinfo-bench/load/internal/latency"
)

const (
	// MaxNames bounds the distinct metric names kept per run; further
	// names are counted in Result.Dropped.
	MaxNames = 32
	// ClientHop names the residual of the client's own hop (latency - app).
	ClientHop = "client"
	// ResidualColumn prefixes a residual's column in the by-latency table.
	ResidualColumn = "residual:"
)

// Recorder collects the hops of one run. It is fed by Writer (fortio's
// DataWriter) and Request (called by latency.Recorder for every request).
type Recorder struct {
	mu      sync.RWMutex // guards buffers
	buffers map[*byte]int
	slots   []slot

	rec sync.Mutex // guards res
	res *Result
}

// slot is one thread's last response; written and read only by that
// thread's goroutine.
type slot struct {
	metrics []Metric
	seen    bool
	_       [40]byte
}

// NewRecorder returns a recorder for a run of threads connections.
func NewRecorder(threads int) *Recorder {
	if threads < 1 {
		threads = 1
	}
	return &Recorder{buffers: map[*byte]int{}, slots: make([]slot, threads), res: NewResult()}
}

// Writer returns the io.Writer to set as fortio's HTTPOptions.DataWriter.
func (r *Recorder) Writer() io.Writer { return (*dataWriter)(r) }

type dataWriter Recorder

func (w *dataWriter) Write(p []byte) (int, error) {
	r := (*Recorder)(w)
	if t, ok := r.thread(p); ok {
		s := &r.slots[t]
		s.metrics = FromResponse(s.metrics[:0], p)
		s.seen = true
	}
	return len(p), nil
}

// thread tells which connection's buffer p is, learning new buffers in
// order (see the package comment).
func (r *Recorder) thread(p []byte) (int, bool) {
	if cap(p) == 0 {
		return 0, false
	}
	key := &p[:1][0]
	r.mu.RLock()
	t, ok := r.buffers[key]
	r.mu.RUnlock()
	if ok {
		return t, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok = r.buffers[key]; ok {
		return t, true
	}
	if len(r.buffers) >= len(r.slots) {
		return 0, false
	}
	t = len(r.buffers)
	r.buffers[key] = t
	return t, true
}

// Request records the request thread has just finished, with the latency
// the client measured (plain and corrected), and the metrics of its answer.
func (r *Recorder) Request(thread int, plain, corrected time.Duration) {
	s := &r.slots[thread%len(r.slots)]
	var ms []Metric
	if s.seen {
		ms = s.metrics
		s.seen = false
	}
	r.rec.Lock()
	r.res.Add(ms, plain, corrected)
	r.rec.Unlock()
}

// Result returns what was recorded. Call it after the run.
func (r *Recorder) Result() *Result {
	r.rec.Lock()
	defer r.rec.Unlock()
	return r.res
}

// Result is the hops of a run (or of several, merged).
type Result struct {
	Requests int64 // requests whose answer had Server-Timing metrics
	Without  int64 // requests without
	Dropped  int64 // metrics left out beyond MaxNames names
	// Metrics as reported, by name; Residuals by hop (ClientHop, or the
	// wait metric's name); ClientCorrected is ClientHop's residual from the
	// corrected latency (from when the request was due).
	Metrics, Residuals map[string]*hdrhistogram.Histogram
	ClientCorrected    *hdrhistogram.Histogram
	ByLatency          *Table
}

// NewResult returns an empty result.
func NewResult() *Result {
	return &Result{
		Metrics: map[string]*hdrhistogram.Histogram{}, Residuals: map[string]*hdrhistogram.Histogram{},
		ClientCorrected: latency.NewHistogram(), ByLatency: NewTable(),
	}
}

func (r *Result) hist(m map[string]*hdrhistogram.Histogram, name string) *hdrhistogram.Histogram {
	h := m[name]
	if h == nil && len(r.Metrics)+len(r.Residuals) < 2*MaxNames {
		h = latency.NewHistogram()
		m[name] = h
	}
	return h
}

func find(ms []Metric, name string) (time.Duration, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m.Dur, true
		}
	}
	return 0, false
}

// IsWait tells a wait metric (a call to an upstream: details,
// reviews.ratings) from a server's own time (app, reviews.app).
func IsWait(name string) bool { return name != "app" && !strings.HasSuffix(name, ".app") }

// Add records one request: its metrics (none: no header) and the latency
// the client measured.
func (r *Result) Add(ms []Metric, plain, corrected time.Duration) {
	if len(ms) == 0 {
		r.Without++
		return
	}
	r.Requests++
	row := r.ByLatency.row(latency.Micros(plain))
	record := func(m map[string]*hdrhistogram.Histogram, name, column string, d time.Duration) {
		us := latency.Micros(d)
		h := r.hist(m, name)
		c := r.ByLatency.column(column)
		if h == nil || c < 0 {
			r.Dropped++
			return
		}
		_ = h.RecordValue(us) // clamped to the range, cannot fail
		row.add(c, us)
	}
	for _, m := range ms {
		record(r.Metrics, m.Name, m.Name, m.Dur)
		if IsWait(m.Name) {
			server, _ := find(ms, m.Name+".app")
			record(r.Residuals, m.Name, ResidualColumn+m.Name, m.Dur-server)
		}
	}
	app, _ := find(ms, "app")
	record(r.Residuals, ClientHop, ResidualColumn+ClientHop, plain-app)
	_ = r.ClientCorrected.RecordValue(latency.Micros(corrected - app))
}

// Merge adds o into r (repetitions of one target, or the members of a
// fan-out run).
func (r *Result) Merge(o *Result) {
	if o == nil {
		return
	}
	r.Requests += o.Requests
	r.Without += o.Without
	r.Dropped += o.Dropped
	for _, pair := range []struct {
		to, from map[string]*hdrhistogram.Histogram
	}{{r.Metrics, o.Metrics}, {r.Residuals, o.Residuals}} {
		for name, h := range pair.from {
			if mine := r.hist(pair.to, name); mine != nil {
				mine.Merge(h)
			}
		}
	}
	r.ClientCorrected.Merge(o.ClientCorrected)
	r.ByLatency.Merge(o.ByLatency)
}
